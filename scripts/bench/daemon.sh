#!/usr/bin/env bash
# daemon.sh - figures for two mrcd over four memif planes, measured side by
# side in one run (they vary 2-4x between runs on this VM: read the ratios):
#   1. mrcctl selftest (verified 64 KiB WriteImm inside the daemons), 4 GiB;
#   2. mrc-perf bandwidth, 64 KiB and 4 KiB messages, window 16;
#   3. Machnet-style: 1 KiB messages, window 1 and 32 (RTT percentiles and
#      messages/s), and 64 B WriteImm ping-pong latency.
# Usage: bash scripts/bench/daemon.sh [BUILD_DIR]   (default: build)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
B=${1:-$top/build}
MRCD=$B/app/mrcd/mrcd
CTL=$B/app/mrcctl/mrcctl
PERF=$B/app/mrc-perf/mrc-perf
for x in "$MRCD" "$CTL" "$PERF"; do
	[ -x "$x" ] || { echo "daemon.sh: $x missing: build first (ninja -C $B)"; exit 1; }
done
T=$(mktemp -d /tmp/mrcd-bench.XXXXXX)
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -rf "$T"
}
trap cleanup EXIT
wait_for() {
	local deadline=$(( $(date +%s) + $1 )); shift
	until "$@" >/dev/null 2>&1; do
		[ "$(date +%s)" -lt "$deadline" ] || { echo "timed out: $*"; exit 1; }
		sleep 0.05
	done
}
up() { [ "$("$CTL" -s "$T/$1.sock" --json ports | python3 -c 'import json,sys; print(all(p["link"] == "up" for p in json.load(sys.stdin)))')" = True ]; }
bash "$top/scripts/memif-pair-configs.sh" "$T" "mrcd-bench-$$"
for n in a b; do
	"$MRCD" -c "$T/$n.yaml" > "$T/$n.log" 2>&1 &
	PIDS+=($!)
	wait_for 60 "$CTL" -s "$T/$n.sock" status
done
wait_for 30 up a
wait_for 30 up b

port=18700
perf() { # perf LABEL [client args] -> prints the report lines
	local label=$1
	shift
	port=$((port + 1))
	"$PERF" -s "$T/b.sock" --server --port "$port" --timeout 30 >/dev/null 2>&1 &
	local s=$!
	"$PERF" -s "$T/a.sock" --client 127.0.0.1 --port "$port" --stats 0 --timeout 30 "$@" > "$T/p.out" 2>&1 || true
	wait "$s" || true
	printf '%-34s %s\n' "$label" "$(grep -E 'goodput|RTT' "$T/p.out" | sed 's/^ *//' | paste -sd' ' | cut -c1-150)"
}

echo "== two mrcd, four memif planes ($(date -u +%F), $(nproc) CPUs)"
"$CTL" -s "$T/a.sock" --json selftest --peer "$T/b.sock" --bytes 4G --timeout 60 > "$T/st.json" || true
python3 -c "
import json; d = json.load(open('$T/st.json'))['sender']
print('%-34s %.2f Gbit/s, %d retransmits' % ('selftest 64 KiB x 4 GiB (in-daemon)', d['goodput_gbps'], d['rtx_total']))"
perf "mrc-perf 64 KiB, window 16" --duration 3 --size 64K --window 16
perf "mrc-perf 4 KiB, window 16" --duration 3 --size 4K --window 16
perf "mrc-perf 1 KiB, window 32" --duration 3 --size 1K --window 32
perf "mrc-perf 1 KiB, window 1 (latency)" --latency --size 1K --iters 3000
perf "mrc-perf 64 B WriteImm ping-pong" --latency --size 64 --iters 3000
