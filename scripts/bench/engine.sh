#!/usr/bin/env bash
# engine.sh - engine throughput and instructions per delivered packet.
#   1. bench/engine_bench pushes PACKETS (default 10 M) 4 KiB data packets
#      through two engines over a zero-delay lossless link (no frames, no
#      payload copy) and prints packets/s;
#   2. callgrind counts instructions for N and 2N packets; the difference
#      over N is the cost of one delivered packet (sender + receiver + SACK
#      and AETH work), start-up excluded.
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
echo "== top functions by self cost for $((2 * n)) packets"
callgrind_annotate "$tmp/cg.$((2 * n))" 2>/dev/null | grep -E '^ *[0-9,]+ \(' | sed -n '2,13p'
