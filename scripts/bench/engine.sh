#!/usr/bin/env bash
# engine.sh - engine throughput and instructions per delivered packet.
#   1. bench/engine_bench pushes PACKETS (default 10 M) 4 KiB data packets
#      through two engines over a zero-delay lossless link (no frames, no
#      payload copy) and prints packets/s;
#   2. callgrind counts instructions for N and 2N packets; the difference
#      over N is the cost of one delivered packet (sender + receiver + SACK
#      and AETH work), start-up excluded; then the engine's share alone
#      (the harness's header copies and RX descriptors left out).
# Prints figures only; nothing here is a pass/fail test.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$top/build}
packets=${PACKETS:-10000000}
n=${CALLGRIND_PACKETS:-200000}
[ -f "$build/build.ninja" ] || meson setup "$build" "$top" >/dev/null
ninja -C "$build" bench/engine_bench >/dev/null
bench=$build/bench/engine_bench

echo "== throughput ($packets packets)"
"$bench" "$packets"

if ! command -v valgrind >/dev/null; then
	echo "valgrind not installed: skipping instruction counts"
	exit 0
fi
source "$top/scripts/lib/proc.sh"
tmp=$(mktemp -d)
cleanup_dir "$tmp"
ir() {
	valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.$1" "$bench" "$1" >/dev/null 2>"$tmp/log.$1"
	awk '/Collected/{print $4}' "$tmp/log.$1" | tr -d ,
}
a=$(ir "$n")
b=$(ir $((2 * n)))
echo "== instructions (callgrind): $a for $n packets, $b for $((2 * n))"
echo "instructions per delivered packet: $(( (b - a) / n ))"
# The engine's share: what main's calls into the engine cost (inclusive),
# not the harness's own work (header copies, RX descriptors, progress checks).
engine_ir() {
	callgrind_annotate --tree=calling --auto=no --threshold=100 "$tmp/cg.$1" 2>/dev/null |
		awk '/\*  .*engine_bench\.c:main /{p=1; next} p && /^ *$/{p=0}
		     p && />   .*:(mrcp_rx_burst|mrcp_poll|mrcp_qp_post_send|mrcp_poll_cq) /{gsub(",", "", $1); s += $1}
		     END{print s + 0}'
}
ea=$(engine_ir "$n")
eb=$(engine_ir $((2 * n)))
echo "of which in the engine (mrcp_rx_burst, mrcp_poll, mrcp_qp_post_send, mrcp_poll_cq): $(( (eb - ea) / n ))"
echo "== top functions by self cost for $((2 * n)) packets"
callgrind_annotate "$tmp/cg.$((2 * n))" 2>/dev/null | grep -E '^ *[0-9,]+ \(' | sed -n '2,13p'
