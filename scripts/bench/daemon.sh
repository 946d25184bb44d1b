#!/usr/bin/env bash
# daemon.sh - figures for two mrcd over four memif planes, measured side by
# side in one run (they vary 2-4x between runs on this VM: read the ratios):
#   1. mrcctl selftest (verified 64 KiB WriteImm inside the daemons), 4 GiB;
#   2. mrc-perf bandwidth, 64 KiB and 4 KiB messages, window 16;
#   3. Machnet-style: 1 KiB messages, window 1 and 32 (RTT percentiles and
#      messages/s), and 64 B WriteImm ping-pong latency;
#   4. the floor under 3: a raw memif echo round trip (bench/memif_echo, one
#      busy-polling process each side of one memif plane, no protocol) at
#      64 B and at a 1 KiB Write's frame size, and mrc-perf's p50 over it.
# Usage: bash scripts/bench/daemon.sh [BUILD_DIR]   (default: build)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
B=${1:-$top/build}
MRCD=$B/app/mrcd/mrcd
CTL=$B/app/mrcctl/mrcctl
PERF=$B/app/mrc-perf/mrc-perf
ECHO=$B/bench/memif_echo
for x in "$MRCD" "$CTL" "$PERF" "$ECHO"; do
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
cp "$T/p.out" "$T/lat1k.out"
perf "mrc-perf 64 B WriteImm ping-pong" --latency --size 64 --iters 3000
cp "$T/p.out" "$T/lat64.out"

# 4. the raw floor: memif_echo on a memif socket of its own, once the
#    daemons are gone; the 1 KiB case carries the frame of a 1 KiB Write
#    (1 KiB + 14 B Ethernet + 72 B of IPv4/UDP/MRC headers and ICRC)
proc_stop_all
eal=(--no-huge --no-pci -m 256)
dev="net_memif0,id=0,bsize=8192,socket=$T/echo.sock"
raw() { # raw SIZE -> "rtt_us p50 P p99 P max P lost N"
	local e
	proc_start e "$ECHO" --lcores 0@0 "${eal[@]}" --file-prefix "mrcd-echo-$$-s" \
		--vdev "$dev,role=server" -- echo 60 > "$T/echo-s.out" 2>&1
	proc_wait_for -p "$e" 30 grep -q started "$T/echo-s.out" || { tail -2 "$T/echo-s.out" >&2; return 0; }
	"$ECHO" --lcores 0@1 "${eal[@]}" --file-prefix "mrcd-echo-$$-c" --vdev "$dev,role=client" \
		-- ping 20000 "$1" 2> "$T/echo-c.err" | grep rtt_us || true
	proc_stop -s INT "$e" > /dev/null || true
}
r64=$(raw 64)
r1k=$(raw 1110)
printf '%-34s %s\n' "raw memif echo, 64 B frames" "${r64:-no figure: $(tail -1 "$T/echo-c.err")}"
printf '%-34s %s\n' "raw memif echo, 1,110 B frames" "${r1k:-no figure: $(tail -1 "$T/echo-c.err")}"
python3 - "$T/lat64.out" "$T/lat1k.out" "$r64" "$r1k" <<'PY'
import re, sys
def p50(s):
    m = re.search(r"p50 ([0-9.]+)", s)
    return float(m.group(1)) if m else 0.0
m64, m1k = (p50(open(f).read()) for f in sys.argv[1:3])
r64, r1k = p50(sys.argv[3]), p50(sys.argv[4])
for name, m, r in (("64 B", m64, r64), ("1 KiB", m1k, r1k)):
    label = "p50 mrc-perf / raw echo, " + name
    if m > 0 and r > 0:
        print("%-34s %.1fx (target <= 2x)" % (label, m / r))
    else:
        print("%-34s no ratio: a figure is missing" % label)
PY
