#!/usr/bin/env bash
# testpmd_ratio.sh - what the transport costs over the raw path, like for
# like, in one run, on the same four memif planes (4 KiB payload MTU):
#   1. two mrcd, one polling worker each (two busy threads), moving a
#      daemon-owned selftest a -> b (64 KiB WriteImm, BYTES): goodput, the
#      frames/s and average frame size daemon a put on the planes, the CPU
#      each daemon used (from /proc);
#   2. dpdk-testpmd, one forwarding lcore each (two busy threads): txonly on
#      the memif servers (a's side) -> rxonly on the clients (b's side),
#      frames of that same size: frames/s, and the payload they would carry
#      at mrcd's payload per frame;
#   3. the ratios: selftest goodput / testpmd payload throughput (target
#      0.8), and goodput per CPU-second on each side;
#   4. separately, the full path through libmrc-client: mrc-perf 4 KiB
#      messages, window 16 (its clients block on their CQ eventfd when there
#      is nothing to do), goodput beside the CPU of all four processes.
# Exits 1 with the reason when testpmd gives no figure (it crashed, moved no
# frames, or refused the frame size) or mrcd's selftest failed.
# Usage: bash scripts/bench/testpmd_ratio.sh [BUILD_DIR]
#        (DUR=testpmd/mrc-perf seconds, default 6; BYTES=selftest size, 4G)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
B=${1:-$top/build}
DUR=${DUR:-6}
BYTES=${BYTES:-4G}
MRCD=$B/app/mrcd/mrcd
CTL=$B/app/mrcctl/mrcctl
PERF=$B/app/mrc-perf/mrc-perf
TESTPMD=$(command -v dpdk-testpmd || true)
die() { echo "testpmd_ratio.sh: $*" >&2; exit 1; }
for x in "$MRCD" "$CTL" "$PERF"; do
	[ -x "$x" ] || die "$x missing: build first (ninja -C $B)"
done
[ -n "$TESTPMD" ] || die "dpdk-testpmd not installed (Debian package dpdk-dev): no anchor, no ratio"
source "$top/scripts/lib/proc.sh"   # start, wait, stop by PID, cleanup on any exit
T=$(mktemp -d /tmp/mrcd-ratio.XXXXXX)
keep_or_remove() {
	if [ "${KEEP:-0}" = 1 ]; then echo "kept $T"; else rm -rf "$T"; fi
	rm -rf /var/run/dpdk/mrcd-ratio-$$-* 2>/dev/null || true
}
cleanup_add keep_or_remove
HZ=$(getconf CLK_TCK)
ctlj() { "$CTL" -s "$T/$1.sock" --json "${@:2}"; }
up() { [ "$(ctlj "$1" ports | python3 -c 'import json,sys; print(all(p["link"] == "up" for p in json.load(sys.stdin)))')" = True ]; }
txc() { ctlj a ports | python3 -c 'import json,sys; d=json.load(sys.stdin); print(sum(p["tx_pkts"] for p in d), sum(p["tx_bytes"] for p in d))'; }
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; } # user + system, clock ticks
cpu_s() { python3 -c "print('%.2f' % (($2 - $1) / $HZ))"; }

echo "== mrcd vs dpdk-testpmd over the same four memif planes ($(date -u '+%F %H:%M UTC'), $(nproc) CPUs)"

# 1. two mrcd, selftest
bash "$top/scripts/memif-pair-configs.sh" "$T" "mrcd-ratio-$$"
declare -A pid
for n in a b; do
	proc_start "pid[$n]" "$MRCD" -c "$T/$n.yaml" > "$T/$n.log" 2>&1
	proc_wait_for -p "${pid[$n]}" 60 "$CTL" -s "$T/$n.sock" status
done
proc_wait_for 30 up a
proc_wait_for 30 up b
read -r p0 b0 < <(txc)
ca0=$(ticks "${pid[a]}") cb0=$(ticks "${pid[b]}")
ctlj a selftest --peer "$T/b.sock" --bytes "$BYTES" --timeout 120 > "$T/st.json" ||
	die "mrcd selftest failed: $(head -c 300 "$T/st.json")"
ca1=$(ticks "${pid[a]}") cb1=$(ticks "${pid[b]}")
read -r p1 b1 < <(txc)
read -r st_gbps st_s st_bytes st_rtx < <(python3 -c "
import json; d = json.load(open('$T/st.json'))['sender']
print(d['goodput_gbps'], d['elapsed_ns'] / 1e9, d['bytes_done'], d['rtx_total'])")
frames=$((p1 - p0))
[ "$frames" -gt 0 ] || die "daemon a counted no frames sent during the selftest"
fsize=$(((b1 - b0) / frames))
read -r mrcd_fps per_frame < <(python3 -c "print('%.0f %.1f' % ($frames / $st_s, $st_bytes / $frames))")
cpu_a=$(cpu_s "$ca0" "$ca1") cpu_b=$(cpu_s "$cb0" "$cb1")

# 4 (run now, while the daemons are up). The server stays up (--loop) so
#    its CPU can be read after the run; the client's comes from `times`.
proc_start srv "$PERF" -s "$T/b.sock" --server --loop --port 18790 > /dev/null 2>&1
proc_wait_for -p "$srv" 10 bash -c "ss -ltn | grep -q ':18790 '"
ca0=$(ticks "${pid[a]}") cb0=$(ticks "${pid[b]}") cs0=$(ticks "$srv")
{ "$PERF" -s "$T/a.sock" --client 127.0.0.1 --port 18790 --stats 0 --timeout 60 --json \
	--size 4K --window 16 --duration "$DUR" > "$T/perf.json" || true; times > "$T/times"; }
ca1=$(ticks "${pid[a]}") cb1=$(ticks "${pid[b]}") cs1=$(ticks "$srv")
proc_stop_all || true
perf_gbps=$(python3 "$top/scripts/lib/getval.py" json "$T/perf.json" gbps)
perf_s=$(python3 "$top/scripts/lib/getval.py" json "$T/perf.json" seconds)
# `times`: the shell's own line, then its children's (user system)
cpu_cl=$(sed -n 2p "$T/times" | python3 -c "
import re, sys
t = [float(m) * 60 + float(s) for m, s in re.findall(r'(\d+)m([\d.]+)s', sys.stdin.read())]
print('%.2f' % sum(t))")

# 2. testpmd: memif servers transmit, clients receive (the roles of a and
#    b). --mbuf-size must come before --txpkts: testpmd checks the frame
#    length against the mbuf size known when it parses --txpkts, and with
#    the 2,176 B default a 4 KiB-MTU frame is refused ("give up") and 64 B
#    frames are sent instead. Both are stopped with SIGINT, the transmitter
#    first, while its memif peer is still there.
vs=() vc=()
for p in 0 1 2 3; do
	vs+=(--vdev "net_memif$p,role=server,id=0,bsize=8192,socket=$T/p$p.sock")
	vc+=(--vdev "net_memif$p,role=client,id=0,bsize=8192,socket=$T/p$p.sock")
done
eal=(--no-huge --no-pci -m 1024)
pmd=(--nb-cores=1 --auto-start --mbuf-size=8192 --total-num-mbufs=16384 --stats-period 1)
ulimit -c 0
proc_start tx "$TESTPMD" --lcores 0@0,1@1 "${eal[@]}" --file-prefix "mrcd-ratio-$$-tx" "${vs[@]}" -- \
	"${pmd[@]}" --forward-mode=txonly --txpkts="$fsize" > "$T/tx.out" 2>&1
proc_wait_for -p "$tx" 30 grep -q "Port statistics" "$T/tx.out" ||
	die "testpmd (txonly) did not start: $(tail -3 "$T/tx.out" | tr '\n' ' ')"
grep -q "packet len=$fsize " "$T/tx.out" ||
	die "testpmd (txonly) refused $fsize B frames: $(grep -m1 -E 'give up|packet len' "$T/tx.out")"
proc_start rx "$TESTPMD" --lcores 0@1,1@0 "${eal[@]}" --file-prefix "mrcd-ratio-$$-rx" "${vc[@]}" -- \
	"${pmd[@]}" --forward-mode=rxonly --no-flush-rx > "$T/rx.out" 2>&1
# (the receiver's start-up - link checks, queue flushes - takes a few
# seconds: the CPU window opens at its first stats block with frames)
rx_frames() { grep -o 'RX-packets: *[0-9]*' "$T/rx.out" | tail -4 | awk '{s += $2} END {print s + 0}'; }
proc_wait_for -p "$rx" 30 bash -c "grep -q 'RX-packets: *[1-9]' '$T/rx.out'" ||
	die "testpmd (rxonly) received no frame: $(tail -3 "$T/rx.out" | tr '\n' ' ')"
ct0=$(ticks "$tx") cr0=$(ticks "$rx") w0=$EPOCHREALTIME
sleep "$DUR" # the measurement window
ct1=$(ticks "$tx") cr1=$(ticks "$rx") w1=$EPOCHREALTIME
rc_tx=0 rc_rx=0
proc_stop -s INT "$tx" || rc_tx=$?
proc_stop -s INT "$rx" || rc_rx=$?
# (testpmd re-raises the SIGINT it handled: 130 is a clean exit)
for r in "txonly $rc_tx" "rxonly $rc_rx"; do
	set -- $r
	[ "$2" = 0 ] || [ "$2" = 130 ] || die "testpmd ($1) ended with status $2$( [ "$2" -gt 128 ] && echo " (signal $(($2 - 128)))")"
done
read -r raw_fps raw_gbps < <(python3 - "$T/rx.out" <<'PY'
import re, sys
blocks = open(sys.argv[1], errors="replace").read().split("Port statistics")[1:]
tot = []
for b in blocks:
    b = b.split("Forward statistics")[0]  # the final summary repeats RX-packets
    byts = [int(x) for x in re.findall(r"RX-bytes:\s+(\d+)", b)][:4]
    pkts = [int(x) for x in re.findall(r"RX-packets:\s+(\d+)", b)][:4]
    if len(byts) == 4 and len(pkts) == 4:
        tot.append((sum(pkts), sum(byts)))
# one block a second, cumulative: the seconds with frames, without the
# first and the last (partial: start-up, and the transmitter stopping)
d = [(p1 - p0, b1 - b0) for (p0, b0), (p1, b1) in zip(tot, tot[1:]) if p1 > p0][1:-1]
if not d:
    print(0, 0)
else:
    print(sum(x[0] for x in d) / len(d), sum(x[1] for x in d) * 8 / len(d) / 1e9)
PY
)
python3 -c "import sys; sys.exit(0 if float('$raw_fps') > 0 else 1)" ||
	die "testpmd moved no frames in a whole second (rx.out: $(grep -c 'Port statistics' "$T/rx.out") stats blocks)"
cpu_t=$(python3 -c "print('%.2f' % (($ct1 - $ct0) / $HZ * $DUR / ($w1 - $w0)))")
cpu_r=$(python3 -c "print('%.2f' % (($cr1 - $cr0) / $HZ * $DUR / ($w1 - $w0)))")

# 3.
python3 - <<PY
st, st_s, rtx = $st_gbps, $st_s, $st_rtx
fps, pf, fsize = $mrcd_fps, $per_frame, $fsize
raw_fps, raw_gbps, dur = $raw_fps, $raw_gbps, $DUR
cpu_a, cpu_b, cpu_t, cpu_r = $cpu_a, $cpu_b, $cpu_t, $cpu_r
raw_pay = raw_fps * pf * 8 / 1e9
row = "%-52s %s"
print("-- like for like: two busy threads each side, %d B frames" % fsize)
print(row % ("mrcd selftest 64 KiB WriteImm, a -> b", "%.2f Gbit/s goodput, %.0f frames/s, %.0f B payload/frame, %d retransmits" % (st, fps, pf, rtx)))
print(row % ("  CPU: mrcd a, mrcd b (over %.1f s)" % st_s, "%.2f + %.2f s = %.2f Gbit/s per CPU-second" % (cpu_a, cpu_b, st * st_s / (cpu_a + cpu_b))))
print(row % ("testpmd txonly -> rxonly", "%.2f Gbit/s of frames, %.0f frames/s = %.2f Gbit/s at mrcd's payload/frame" % (raw_gbps, raw_fps, raw_pay)))
print(row % ("  CPU: tx, rx (over %d s)" % dur, "%.2f + %.2f s = %.2f Gbit/s of payload per CPU-second" % (cpu_t, cpu_r, raw_pay * dur / (cpu_t + cpu_r))))
print(row % ("ratio: selftest goodput / testpmd payload", "%.3f (target 0.8)" % (st / raw_pay)))
print(row % ("ratio: per CPU-second", "%.3f" % ((st * st_s / (cpu_a + cpu_b)) / (raw_pay * dur / (cpu_t + cpu_r)))))
PY
python3 - <<PY
g, s = $perf_gbps, $perf_s
ca, cb, cs, cc = ($ca1 - $ca0) / $HZ, ($cb1 - $cb0) / $HZ, ($cs1 - $cs0) / $HZ, $cpu_cl
row = "%-52s %s"
print("-- the full path through libmrc-client (clients block on their eventfd)")
print(row % ("mrc-perf 4 KiB, window 16, a -> b", "%.2f Gbit/s goodput over %.1f s" % (g, s)))
print(row % ("  CPU: mrcd a, mrcd b, client, server", "%.2f + %.2f + %.2f + %.2f s = %.2f Gbit/s per CPU-second" % (ca, cb, cc, cs, g * s / (ca + cb + cc + cs))))
PY
