#!/usr/bin/env bash
# datapath.sh - callgrind instructions per delivered 4 KiB packet through the
# whole daemon datapath (rx burst, parse, ICRC, engine, payload placement,
# SACK, frame build, tx burst), and where they go, beside the engine-only
# figure (engine.sh):
#   two mrcd over the four memif planes (4 KiB payload MTU), each under
#   callgrind, so valgrind sees both ends; instrumentation is off through
#   start-up and a warm-up selftest, on for one measured selftest a -> b
#   (64 KiB WriteImm, BYTES), then dumped. Delivered packets = the bytes the
#   selftest placed / 4096. The window includes the idle polls of both
#   workers (adaptive idle: they sleep when there is nothing to do).
# Also the ICRC CRC on this CPU: bench/icrc_bench, ns and instructions per
# byte of each rte_net_crc algorithm, and which one mrcd uses.
# Prints figures only. Usage: bash scripts/bench/datapath.sh [BUILD_DIR]
#   (BYTES, default 64M; ENGINE=0 skips the engine-only figure)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
B=${1:-$top/build}
BYTES=${BYTES:-64M}
MRCD=$B/app/mrcd/mrcd
CTL=$B/app/mrcctl/mrcctl
ICRC=$B/bench/icrc_bench
die() { echo "datapath.sh: $*" >&2; exit 1; }
for x in "$MRCD" "$CTL"; do
	[ -x "$x" ] || die "$x missing: build first (ninja -C $B)"
done
command -v callgrind_control > /dev/null || die "valgrind not installed"
source "$top/scripts/lib/proc.sh"
T=$(mktemp -d /tmp/mrcd-dpcg.XXXXXX)
keep_or_remove() {
	if [ "${KEEP:-0}" = 1 ]; then echo "kept $T"; else rm -rf "$T"; fi
}
cleanup_add keep_or_remove
ctlj() { "$CTL" -s "$T/$1.sock" --json --timeout 60 "${@:2}"; }
up() { [ "$(ctlj "$1" ports | python3 -c 'import json,sys; print(all(p["link"] == "up" for p in json.load(sys.stdin)))')" = True ]; }

echo "== the daemon datapath under callgrind ($(date -u '+%F %H:%M UTC'), $(nproc) CPUs, selftest $BYTES)"
bash "$top/scripts/memif-pair-configs.sh" "$T" "mrcd-dpcg-$$"
# valgrind runs the daemons ~50x slower: RTTs of milliseconds, so a base
# timeout of 268 ms (2^18 x 1.024 us) keeps slowness from reading as loss
sed -i -e 's/^  timeout: .*/  timeout: 18/' -e 's/^  base_rtt_us: .*/  base_rtt_us: 2000/' "$T/a.yaml" "$T/b.yaml"
declare -A pid
for n in a b; do
	proc_start "pid[$n]" valgrind --tool=callgrind --instr-atstart=no \
		--callgrind-out-file="$T/cg.$n" "$MRCD" -c "$T/$n.yaml" --seed 1 > "$T/$n.log" 2>&1
	proc_wait_for -p "${pid[$n]}" 180 "$CTL" -s "$T/$n.sock" status
done
proc_wait_for 120 up a
proc_wait_for 120 up b
ctlj a selftest --peer "$T/b.sock" --bytes 8M --timeout 300 > "$T/warm.json" ||
	die "warm-up selftest failed: $(head -c 300 "$T/warm.json")"
for n in a b; do callgrind_control -i on "${pid[$n]}" > /dev/null; done
ctlj a selftest --peer "$T/b.sock" --bytes "$BYTES" --timeout 600 > "$T/st.json" ||
	die "selftest failed: $(head -c 300 "$T/st.json")"
for n in a b; do callgrind_control -d "${pid[$n]}" > /dev/null; done
for n in a b; do
	proc_wait_for 120 bash -c "ls $T/cg.$n.* > /dev/null 2>&1" || die "no callgrind dump from $n"
done
proc_stop_all || true

python3 - "$T" "$top" <<'PY'
import glob, json, os, re, subprocess, sys
T, top = sys.argv[1:]
st = json.load(open(T + "/st.json"))["sender"]
pkts = st["bytes_done"] / 4096
# where a function's instructions go, by its file (lib/...) or its object
cats = [
    ("engine (lib/core)", lambda f, o, fn: "/lib/core/" in f),
    ("lib/dp receive (dp_rx.c)", lambda f, o, fn: f.endswith("dp_rx.c")),
    ("lib/dp send (dp_tx.c)", lambda f, o, fn: f.endswith("dp_tx.c")),
    ("lib/dp worker loop (dp_worker.c)", lambda f, o, fn: f.endswith("dp_worker.c")),
    ("ICRC (rte_net_crc + dp_icrc.c)", lambda f, o, fn: "librte_net.so" in o or f.endswith("dp_icrc.c")),
    ("lib/dp other (selftest, faults, neighbours)", lambda f, o, fn: "/lib/dp/" in f),
    ("memif PMD (rx/tx burst, its copies)", lambda f, o, fn: "memif" in o),
    ("mbuf, mempool, ring, ethdev", lambda f, o, fn: re.search(r"librte_(mbuf|mempool|ring|ethdev)", o)),
    ("libc copies (memcpy, memset, memmove)", lambda f, o, fn: "libc" in o and re.search(r"mem(cpy|set|move)", fn)),
    ("libc other (clock_gettime, ...)", lambda f, o, fn: "libc" in o),
    ("other DPDK (EAL, ...)", lambda f, o, fn: "librte_" in o),
    ("other", lambda f, o, fn: True),
]
line = re.compile(r"^\s*([\d,]+)\s+\([^)]*\)\s+(.*?):(.*?)\s+\[(.*)\]\s*$")
tot = {}
per_side = {}
funcs = {}
for side in "ab":
    dumps = sorted(f for f in glob.glob("%s/cg.%s.*" % (T, side)) if re.search(r"\.\d+$", f))
    if not dumps:
        sys.exit("no dump for " + side)
    out = subprocess.run(["callgrind_annotate", "--inclusive=no", "--threshold=100", dumps[0]],
                         capture_output=True, text=True).stdout
    s = 0
    for l in out.splitlines():
        m = line.match(l)
        if not m:
            continue
        ir, f, fn, o = int(m.group(1).replace(",", "")), m.group(2), m.group(3), m.group(4)
        if "PROGRAM TOTALS" in l:
            continue
        s += ir
        c = next(name for name, test in cats if test(f, o, fn))
        tot[c] = tot.get(c, 0) + ir
        key = "%s (%s)" % (fn, os.path.basename(o) if f == "???" else os.path.basename(f))
        funcs[key] = funcs.get(key, 0) + ir
    per_side[side] = s
all_ir = sum(per_side.values())
print("selftest: %.0f MiB placed = %d packets of 4 KiB, %d retransmits, %.1f s under callgrind"
      % (st["bytes_done"] / 2**20, pkts, st["rtx_total"], st["elapsed_ns"] / 1e9))
print("instructions per delivered packet: %.0f (sender daemon %.0f, receiver daemon %.0f)"
      % (all_ir / pkts, per_side["a"] / pkts, per_side["b"] / pkts))
print("%-46s %10s %6s" % ("where they go (both daemons)", "instr/pkt", "share"))
for name, _ in cats:
    if name in tot:
        print("%-46s %10.0f %5.1f%%" % (name, tot[name] / pkts, 100.0 * tot[name] / all_ir))
print("%-46s %10s %6s" % ("top functions (both daemons)", "instr/pkt", "share"))
for k, v in sorted(funcs.items(), key=lambda kv: -kv[1])[:16]:
    print("%-46s %10.0f %5.1f%%" % (k[:46], v / pkts, 100.0 * v / all_ir))
PY

echo "== ICRC: each rte_net_crc algorithm on this CPU, natively (callgrind above ran SSE4.2: valgrind has no AVX512)"
if [ -x "$ICRC" ]; then "$ICRC"; else echo "($ICRC not built)"; fi
if [ "${ENGINE:-1}" = 1 ]; then
	echo "== the engine alone (scripts/bench/engine.sh)"
	PACKETS=100000 CALLGRIND_PACKETS=100000 bash "$top/scripts/bench/engine.sh" | grep "per delivered packet"
fi
