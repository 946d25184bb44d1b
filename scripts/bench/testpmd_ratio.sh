#!/usr/bin/env bash
# testpmd_ratio.sh - what the transport costs over the raw path, in one run:
#   1. two mrcd over four memif planes, mrc-perf a -> b with 4 KiB messages
#      (window 16): payload goodput, and the frames per second and average
#      frame size it put on the planes (daemon a's port counters);
#   2. the same four memif planes driven by dpdk-testpmd: txonly on the
#      memif servers (a's side), rxonly on the clients (b's side), frames of
#      that same average size: the raw frame rate the two CPUs can move;
#   3. the ratios: mrc-perf payload goodput / testpmd frame throughput, and
#      mrcd's frame rate / testpmd's (target: 0.8).
# Each side gets one polling lcore per process, as mrcd does. Prints figures
# only. Usage: bash scripts/bench/testpmd_ratio.sh [BUILD_DIR]  (DUR=seconds)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
B=${1:-$top/build}
DUR=${DUR:-6}
MRCD=$B/app/mrcd/mrcd
CTL=$B/app/mrcctl/mrcctl
PERF=$B/app/mrc-perf/mrc-perf
TESTPMD=$(command -v dpdk-testpmd || true)
for x in "$MRCD" "$CTL" "$PERF"; do
	[ -x "$x" ] || { echo "testpmd_ratio.sh: $x missing: build first (ninja -C $B)"; exit 1; }
done
[ -n "$TESTPMD" ] || { echo "testpmd_ratio.sh: dpdk-testpmd not installed (Debian package dpdk-dev)"; exit 0; }
source "$top/scripts/lib/proc.sh"   # start, wait, stop by PID, cleanup on any exit
T=$(mktemp -d /tmp/mrcd-ratio.XXXXXX)
keep_or_remove() {
	if [ "${KEEP:-0}" = 1 ]; then echo "kept $T"; else rm -rf "$T"; fi
	rm -rf /var/run/dpdk/mrcd-ratio-$$-* 2>/dev/null || true
}
cleanup_add keep_or_remove
ctlj() { "$CTL" -s "$T/$1.sock" --json "${@:2}"; }
up() { [ "$(ctlj "$1" ports | python3 -c 'import json,sys; print(all(p["link"] == "up" for p in json.load(sys.stdin)))')" = True ]; }
txc() { ctlj a ports | python3 -c 'import json,sys; d=json.load(sys.stdin); print(sum(p["tx_pkts"] for p in d), sum(p["tx_bytes"] for p in d))'; }

echo "== mrc-perf vs dpdk-testpmd over the same four memif planes ($(date -u +%F), $(nproc) CPUs, ${DUR} s each)"

# 1. mrcd
bash "$top/scripts/memif-pair-configs.sh" "$T" "mrcd-ratio-$$"
for n in a b; do
	proc_start pid "$MRCD" -c "$T/$n.yaml" > "$T/$n.log" 2>&1
	proc_wait_for -p "$pid" 60 "$CTL" -s "$T/$n.sock" status
done
proc_wait_for 30 up a
proc_wait_for 30 up b
proc_start srv "$PERF" -s "$T/b.sock" --server --port 18790 --timeout 60 > /dev/null 2>&1
read -r p0 b0 < <(txc)
"$PERF" -s "$T/a.sock" --client 127.0.0.1 --port 18790 --stats 0 --timeout 60 --json \
	--size 4K --window 16 --duration "$DUR" > "$T/perf.json" || true
wait "$srv" || true
read -r p1 b1 < <(txc)
proc_stop_all || true
# (getval.py names the key and stops the bench when mrc-perf left no figure)
gbps=$(python3 "$top/scripts/lib/getval.py" json "$T/perf.json" gbps)
secs=$(python3 "$top/scripts/lib/getval.py" json "$T/perf.json" seconds)
frames=$((p1 - p0))
fsize=$(( frames > 0 ? (b1 - b0) / frames : 2120 ))
mrcd_fps=$(python3 -c "print('%.0f' % ($frames / $secs))")
printf '%-44s %8.3f Gbit/s payload, %s frames/s of %s B avg\n' "mrc-perf 4 KiB, window 16 (through mrcd)" "$gbps" "$mrcd_fps" "$fsize"

# 2. testpmd: memif servers transmit, clients receive (the same roles as a
#    and b); RX-bytes per port are cumulative in each periodic stats block.
vs=() vc=()
for p in 0 1 2 3; do
	vs+=(--vdev "net_memif$p,role=server,id=0,bsize=4096,socket=$T/p$p.sock")
	vc+=(--vdev "net_memif$p,role=client,id=0,bsize=4096,socket=$T/p$p.sock")
done
eal=(--no-huge --no-pci -m 1024)
# (the memif PMD of DPDK 22.11 may crash the transmitter when its peer goes
# away, docs/operations.md: its exit status means nothing here, and disown
# keeps bash from reporting the crash; proc.sh still stops it by PID)
proc_start tx "$TESTPMD" --lcores 0@0,1@1 "${eal[@]}" --file-prefix "mrcd-ratio-$$-tx" "${vs[@]}" -- \
	--nb-cores=1 --forward-mode=txonly --auto-start --txpkts="$fsize" --mbuf-size=4096 \
	--total-num-mbufs=32768 --stats-period 1 > "$T/tx.out" 2>&1
disown "$tx"
# (the receiver's start-up - link checks, queue flushes - takes a few
# seconds; blocks before the first frame are skipped below)
# memif sockets are abstract by default: wait for testpmd's first stats
proc_wait_for -p "$tx" 30 grep -q "Port statistics" "$T/tx.out" ||
	{ echo "testpmd (txonly) did not start:"; tail -5 "$T/tx.out"; exit 1; }
timeout -s INT $((DUR + 4)) "$TESTPMD" --lcores 0@1,1@0 "${eal[@]}" --file-prefix "mrcd-ratio-$$-rx" "${vc[@]}" -- \
	--nb-cores=1 --forward-mode=rxonly --auto-start --no-flush-rx --mbuf-size=4096 --total-num-mbufs=32768 \
	--stats-period 1 > "$T/rx.out" 2>&1 || true
# the transmitter's exit status means nothing here (see above)
proc_stop -s INT "$tx" 2>/dev/null || true
read -r raw_gbps raw_fps < <(python3 - "$T/rx.out" <<'PY'
import re, sys
blocks = open(sys.argv[1], errors="replace").read().split("Port statistics")[1:]
tot = []
for b in blocks:
    b = b.split("Forward statistics")[0]  # the final summary repeats RX-packets
    byts = [int(x) for x in re.findall(r"RX-bytes:\s+(\d+)", b)][:4]
    pkts = [int(x) for x in re.findall(r"RX-packets:\s+(\d+)", b)][:4]
    if len(byts) == 4 and len(pkts) == 4:
        tot.append((sum(pkts), sum(byts)))
# one block per second; skip the first (connection) and use the steady part
tot = [t for t in tot if t[0] > 0]
if len(tot) < 2:
    print(0, 0)
else:
    (p0, b0), (p1, b1) = tot[0], tot[-1]
    n = len(tot) - 1
    print((b1 - b0) * 8 / n / 1e9, (p1 - p0) / n)
PY
)
printf '%-44s %8.3f Gbit/s of frames, %.0f frames/s\n' "testpmd txonly -> rxonly, $fsize B frames" "$raw_gbps" "$raw_fps"

# 3.
python3 - "$gbps" "$raw_gbps" "$mrcd_fps" "$raw_fps" <<'PY'
import sys
g, raw, f, rf = map(float, sys.argv[1:])
if raw > 0 and rf > 0:
    print("%-44s %8.2f" % ("ratio: mrc-perf goodput / testpmd throughput", g / raw))
    print("%-44s %8.2f" % ("ratio: mrcd frames/s / testpmd frames/s", f / rf))
else:
    print("testpmd moved no frames: no ratio")
PY
