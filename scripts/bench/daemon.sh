#!/usr/bin/env bash
# daemon.sh - figures for two mrcd over four memif planes, measured side by
# side in one run (they vary 2-4x between runs on this VM: read the ratios):
#   1. mrcctl selftest (verified 64 KiB WriteImm inside the daemons), 4 GiB;
#   2. mrc-perf bandwidth, 64 KiB and 4 KiB messages, window 16;
#   3. Machnet-style: 1 KiB messages, window 1 and 32 (RTT percentiles and
#      messages/s), and 64 B WriteImm ping-pong latency;
#   4. the daemons' own ping-pong (mrcctl selftest --latency: one WriteImm in
#      flight, echoed by the peer's worker), 64 B and 1 KiB, with the workers
#      adaptive (as above) and then busy-polling (idle: busy): two busy
#      threads and nothing else per message;
#   5. the floor under 3 and 4: a raw memif echo round trip (bench/memif_echo,
#      one busy-polling process each side of one memif plane, no protocol) at
#      64 B and at a 1 KiB Write's frame size, and the p50 ratios over it
#      (the like-for-like one: the busy selftest ping-pong, target <= 2x).
# Every figure must be there: a missing one is named at the end and the
# script exits 1.
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
missing=()   # "figure: why", reported at the end (exit 1)
up() { [ "$("$CTL" -s "$T/$1.sock" --json ports | python3 -c 'import json,sys; print(all(p["link"] == "up" for p in json.load(sys.stdin)))')" = True ]; }
bash "$top/scripts/memif-pair-configs.sh" "$T" "mrcd-bench-$$"
pair() { # pair IDLE: two mrcd with lcores.idle IDLE (adaptive, busy)
	local n pid
	for n in a b; do
		sed "s/^  idle: adaptive/  idle: $1/" "$T/$n.yaml" > "$T/$n.$1.yaml"
		proc_start pid "$MRCD" -c "$T/$n.$1.yaml" > "$T/$n.$1.log" 2>&1
		proc_wait_for -p "$pid" 60 "$CTL" -s "$T/$n.sock" status
	done
	proc_wait_for 30 up a
	proc_wait_for 30 up b
}
pair adaptive

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
	[ -n "$fig" ] || missing+=("$label: $(tail -1 "$T/p.out")")
	printf '%-34s %s\n' "$label" "${fig:-no figure: $(tail -1 "$T/p.out")}"
}
# pingpong LABEL SIZE OUT: mrcctl selftest --latency between the daemons,
# its JSON in OUT; prints the RTT line
pingpong() {
	local label=$1 fig
	"$CTL" -s "$T/a.sock" selftest --peer "$T/b.sock" --latency --size "$2" --iters 20000 \
		--timeout 60 --json > "$3" 2> "$3.err" || true
	fig=$(python3 - "$3" <<'PY' 2>/dev/null
import json, sys
d = json.load(open(sys.argv[1]))
r = d["sender"]["rtt"]
assert d["ok"] and r["samples"] > 0 and r["p50_ns"] > 0
print("rtt_us p50 %.2f p99 %.2f max %.2f (%d round trips)" % (
    r["p50_ns"] / 1e3, r["p99_ns"] / 1e3, r["max_ns"] / 1e3, r["samples"]))
PY
	) || true
	[ -n "$fig" ] || missing+=("$label: $(tail -1 "$3.err")")
	printf '%-34s %s\n' "$label" "${fig:-no figure: $(tail -1 "$3.err")}"
}

echo "== two mrcd, four memif planes ($(date -u +%F), $(nproc) CPUs)"
"$CTL" -s "$T/a.sock" --json selftest --peer "$T/b.sock" --bytes 4G --timeout 60 > "$T/st.json" || true
python3 -c "
import json; d = json.load(open('$T/st.json'))['sender']
print('%-34s %.2f Gbit/s, %d retransmits' % ('selftest 64 KiB x 4 GiB (in-daemon)', d['goodput_gbps'], d['rtx_total']))" ||
	missing+=("selftest 64 KiB x 4 GiB: no sender status in its JSON")
perf "mrc-perf 64 KiB, window 16" --duration 3 --size 64K --window 16
perf "mrc-perf 4 KiB, window 16" --duration 3 --size 4K --window 16
perf "mrc-perf 1 KiB, window 32" --duration 3 --size 1K --window 32
perf "mrc-perf 1 KiB, window 1 (latency)" --latency --size 1K --iters 3000
cp "$T/p.out" "$T/lat1k.out"
perf "mrc-perf 64 B WriteImm ping-pong" --latency --size 64 --iters 3000
cp "$T/p.out" "$T/lat64.out"
pingpong "selftest ping-pong 64 B, adaptive" 64 "$T/pp64a.json"
pingpong "selftest ping-pong 1 KiB, adaptive" 1K "$T/pp1ka.json"

# 4. the like-for-like figure: the same ping-pong with both workers
#    busy-polling, their two threads the only busy ones (on CPUs 1 and 0)
proc_stop_all
pair busy
pingpong "selftest ping-pong 64 B, busy" 64 "$T/pp64.json"
pingpong "selftest ping-pong 1 KiB, busy" 1K "$T/pp1k.json"

# 5. the raw floor: memif_echo on a memif socket of its own, once the
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
[ -n "$r64" ] || missing+=("raw memif echo, 64 B: $(tail -1 "$T/echo-c.err")")
printf '%-34s %s\n' "raw memif echo, 1,110 B frames" "${r1k:-no figure: $(tail -1 "$T/echo-c.err")}"
[ -n "$r1k" ] || missing+=("raw memif echo, 1,110 B: $(tail -1 "$T/echo-c.err")")
# the ratios; a missing p50 is a missing figure (its own line says why)
python3 - "$T" "$r64" "$r1k" > "$T/ratio.out" <<'PY' || missing+=("a p50 ratio: a figure is missing")
import json, re, sys
t = sys.argv[1]
def p50(s):
    m = re.search(r"p50 ([0-9.]+)", s)
    return float(m.group(1)) if m else 0.0
def perf(f):
    try:
        return p50(open(f).read())
    except OSError:
        return 0.0
def pp(f):
    try:
        return json.load(open(f))["sender"]["rtt"]["p50_ns"] / 1e3
    except (OSError, ValueError, KeyError, TypeError):
        return 0.0
raw = {"64 B": p50(sys.argv[2]), "1 KiB": p50(sys.argv[3])}
rows = (("selftest ping-pong busy", "64 B", pp(t + "/pp64.json")),
        ("selftest ping-pong busy", "1 KiB", pp(t + "/pp1k.json")),
        ("selftest ping-pong adaptive", "64 B", pp(t + "/pp64a.json")),
        ("selftest ping-pong adaptive", "1 KiB", pp(t + "/pp1ka.json")),
        ("mrc-perf", "64 B", perf(t + "/lat64.out")),
        ("mrc-perf", "1 KiB", perf(t + "/lat1k.out")))
bad = 0
for what, size, m in rows:
    label = "p50 %s / raw, %s" % (what, size)
    r = raw[size]
    if m > 0 and r > 0:
        target = " (target <= 2x)" if what.endswith("busy") else ""
        print("%-44s %5.1fx  (%.2f / %.2f us)%s" % (label, m / r, m, r, target))
    else:
        print("%-44s no ratio: a figure is missing" % label)
        bad = 1
sys.exit(bad)
PY
cat "$T/ratio.out"
if [ ${#missing[@]} -gt 0 ]; then
	echo "daemon.sh: ${#missing[@]} figure(s) missing:" >&2
	printf '  %s\n' "${missing[@]}" >&2
	exit 1
fi
