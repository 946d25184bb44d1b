#!/usr/bin/env bash
# demo.sh - the main job: two mrcd daemons joined by four memif planes, an
# application transfer between them (mrc-perf through libmrc-client: RDMA
# WriteImm with a data pattern checked at the receiver), plane 2 blackholed
# silently in the middle of it (the link stays up: only MRC's loss inference
# can see it) and later restored, and a report: goodput before / during /
# after, retransmissions, EV transitions, verify and completion errors.
#
# Installs what is missing (scripts/setup.sh), builds into build/, runs
# everything in a temporary directory and stops every process it started.
# Environment: DEMO_SECONDS (default 15), DEMO_PORT (mrc-perf's TCP
# bootstrap on 127.0.0.1, default 18599), DEMO_KEEP=1 keeps the logs.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
source scripts/lib/proc.sh   # start, wait, stop by PID, cleanup on any exit
blog=$(mktemp /tmp/mrcd-demo-build.XXXXXX)
cleanup_add rm -f "$blog"
run_quiet() { # run_quiet CMD...: show the output only when it fails
	if ! "$@" > "$blog" 2>&1; then
		cat "$blog"; echo "demo: failed: $*"; exit 1
	fi
}
echo "== setup and build"
run_quiet bash scripts/setup.sh
if [ -f build/build.ninja ]; then
	run_quiet meson setup --reconfigure build
else
	run_quiet meson setup build
fi
run_quiet ninja -C build
MRCD=$top/build/app/mrcd/mrcd
MRCCTL=$top/build/app/mrcctl/mrcctl
PERF=$top/build/app/mrc-perf/mrc-perf
DUR=${DEMO_SECONDS:-15}
PORT=${DEMO_PORT:-18599}

T=$(mktemp -d /tmp/mrcd-demo.XXXXXX)
keep_or_remove() { if [ "${DEMO_KEEP:-0}" = 1 ]; then echo "logs kept in $T"; else rm -rf "$T"; fi; }
cleanup_add keep_or_remove

ctl() { "$MRCCTL" -s "$T/$1.sock" "${@:2}"; }
jget() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
links_up() { [ "$(ctl "$1" --json ports | jget 'all(p["link"] == "up" for p in d)')" = True ]; }

bash scripts/memif-pair-configs.sh "$T" "mrcd-demo-$$"

echo "== starting two mrcd daemons, 4 memif planes (10 Gb/s each nominal)"
proc_start pa "$MRCD" -c "$T/a.yaml" > "$T/a.log" 2>&1
proc_wait_for -p "$pa" 60 ctl a status
proc_start pb "$MRCD" -c "$T/b.yaml" > "$T/b.log" 2>&1
proc_wait_for -p "$pb" 60 ctl b status
proc_wait_for 30 links_up a
proc_wait_for 30 links_up b
ctl a ports | cut -c1-80

echo
echo "== mrc-perf a -> b: ${DUR} s of verified RDMA WriteImm, 64 KiB messages, window 16"
proc_start srv "$PERF" -s "$T/b.sock" --server --port "$PORT" --timeout $((DUR + 60)) > "$T/srv.out" 2>&1
proc_start cl "$PERF" -s "$T/a.sock" --client 127.0.0.1 --port "$PORT" --verify --duration "$DUR" \
	--size 64K --window 16 --stats 0 --timeout $((DUR + 60)) --json > "$T/perf.json" 2> "$T/perf.err"
t_start=$EPOCHREALTIME

# One Python process watches the transfer over both control sockets (a
# persistent connection each: cheap on two cores): every 200 ms it samples
# the bytes b has placed (its QPs' rx_data_bytes, first copies only) and
# a's retransmissions and EV transitions, blackholes plane 2 on a (both
# directions, silently: the link stays up) a third of the way through and
# restores it at two thirds (of the time since the client started, however
# late the first sample comes on a busy host), and leaves the samples for
# the report.
python3 - "$T" "$DUR" "$cl" "$t_start" > "$T/monitor.log" 2>&1 <<'PY' &
import json, os, socket, sys, time
T, dur, cl_pid = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
t0 = float(sys.argv[4].replace(",", "."))
class Ctl:
    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX); self.s.connect(path); self.f = self.s.makefile("rwb"); self.id = 0
    def __call__(self, cmd, **args):
        self.id += 1
        self.f.write(json.dumps({"v": 1, "cmd": cmd, "id": self.id, "args": args}).encode() + b"\n"); self.f.flush()
        r = json.loads(self.f.readline())
        return r.get("result") if r.get("ok") else None
a, b = Ctl(T + "/a.sock"), Ctl(T + "/b.sock")
def alive():
    try:
        os.kill(cl_pid, 0); return True
    except OSError:
        return False
phase, last = "before", {}
out = open(T + "/samples", "w")
while alive():
    placed, got = 0, False
    for q in b("qps") or []:
        d = b("qp", qpn=q["qpn"])
        if d:
            placed += d["counters"]["rx_data_bytes"]; got = True
    rtx = {"fast": 0, "nack": 0, "rto": 0}
    trans = 0
    for q in a("qps") or []:
        d = a("qp", qpn=q["qpn"])
        if d:
            for k in rtx:
                rtx[k] += d["counters"]["rtx_" + k]
            trans += d["ev_transitions"]
    now = time.time()
    if got and placed > 0:
        last = {"rtx": rtx, "ev_transitions": trans}
        out.write("%d %d %s\n" % (now * 1000, placed, phase)); out.flush()
    if phase == "before" and now - t0 > dur / 3:
        a("fault_set", port="plane2", blackhole=True, direction="both")
        print("   t=%.1f s: plane 2 blackholed (silently: its link stays up)" % (now - t0), flush=True)
        phase = "during"
    elif phase == "during" and now - t0 > 2 * dur / 3:
        a("fault_clear", port="plane2")
        print("   t=%.1f s: plane 2 restored" % (now - t0), flush=True)
        phase = "after"
    json.dump(last, open(T + "/last.json", "w"))
    time.sleep(0.2)
PY
mon=$!
proc_track "$mon"   # (a here-document: started by hand, not proc_start)
rc=0
wait "$cl" || rc=$?
wait "$srv" 2>/dev/null || true
wait "$mon" 2>/dev/null || true
cat "$T/monitor.log"

echo
echo "== report"
report=0
if python3 - "$T/samples" "$T/perf.json" "$T/last.json" <<'PY'
import json, sys
rows = [l.split() for l in open(sys.argv[1])]
rate = {}
for ph in ("before", "during", "after"):
    r = [(int(t), int(b)) for t, b, p in rows if p == ph]
    if len(r) >= 2 and r[-1][0] > r[0][0]:
        rate[ph] = (r[-1][1] - r[0][1]) * 8 / ((r[-1][0] - r[0][0]) / 1e3) / 1e9
for ph in ("before", "during", "after"):
    print("  goodput %-7s %s" % (ph + ":", "%.2f Gbit/s" % rate[ph] if ph in rate else "n/a"))
if "before" in rate and "during" in rate and rate["before"] > 0:
    print("  during/before:   %.2f  (memif planes have no rate limit: two CPUs, not the links, set the pace)" % (rate["during"] / rate["before"]))
d_rows = [(int(t), int(b)) for t, b, p in rows if p == "during"]
gaps = [((b2 - b1) * 8 / ((t2 - t1) / 1e3) / 1e9) for (t1, b1), (t2, b2) in zip(d_rows, d_rows[1:]) if t2 > t1]
if gaps:
    print("  lowest ~200 ms window while blackholed: %.2f Gbit/s (0 would be a stall)" % min(gaps))
try:
    d = json.load(open(sys.argv[2]))
except Exception:
    print("  mrc-perf: no result"); print("  result:          FAIL"); sys.exit(1)
try:
    last = json.load(open(sys.argv[3]))
except Exception:
    last = {}
r = last.get("rtx", {})
print("  bytes:           %d in %.2f s (%.2f Gbit/s overall, %.0f messages/s)" % (d["bytes"], d["seconds"], d["gbps"], d["msgs_per_s"]))
if r:
    print("  retransmits:     %d (fast %d, NACK %d, RTO %d)" % (sum(r.values()), r["fast"], r["nack"], r["rto"]))
    print("  EV transitions:  %d" % last["ev_transitions"])
print("  verify errors:   %d" % d["verify_errors"])
print("  completion errors: %d" % d["cq_errors"])
# a phase without samples means the demo did not show what it says it shows
missing = [ph for ph in ("before", "during", "after") if ph not in rate]
ok = d.get("exit", 1) == 0 and d["verify_errors"] == 0 and d["cq_errors"] == 0 and not missing
print("  result:          %s" % ("PASS" if ok else "FAIL") +
      ("  (no goodput samples %s)" % "/".join(missing) if missing else ""))
sys.exit(0 if ok else 1)
PY
then :; else report=$?; fi
if [ "$rc" -ne 0 ]; then
	echo "mrc-perf failed (exit $rc):"
	tail -5 "$T/perf.err"
	exit 1
fi
exit "$report"
