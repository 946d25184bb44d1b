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
source "$top/scripts/lib/proc.sh"   # start, wait, stop by PID, cleanup on any exit
T=$(mktemp -d /tmp/mrcd-bench.XXXXXX)
cleanup_dir "$T"
up() { [ "$("$CTL" -s "$T/$1.sock" --json ports | python3 -c 'import json,sys; print(all(p["link"] == "up" for p in json.load(sys.stdin)))')" = True ]; }
bash "$top/scripts/memif-pair-configs.sh" "$T" "mrcd-bench-$$"
for n in a b; do
	proc_start pid "$MRCD" -c "$T/$n.yaml" > "$T/$n.log" 2>&1
	proc_wait_for -p "$pid" 60 "$CTL" -s "$T/$n.sock" status
done
proc_wait_for 30 up a
proc_wait_for 30 up b

port=18700
perf() { # perf LABEL [client args] -> prints the report lines
	local label=$1
	shift
	port=$((port + 1))
	local s
	proc_start s "$PERF" -s "$T/b.sock" --server --port "$port" --timeout 30 >/dev/null 2>&1
	"$PERF" -s "$T/a.sock" --client 127.0.0.1 --port "$port" --stats 0 --timeout 30 "$@" > "$T/p.out" 2>&1 || true
	wait "$s" || true
	local fig
	fig=$(grep -E 'goodput|RTT' "$T/p.out" | sed 's/^ *//' | paste -sd' ' | cut -c1-150) || true
	printf '%-34s %s\n' "$label" "${fig:-no figure: $(tail -1 "$T/p.out")}"
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
