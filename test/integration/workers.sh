#!/usr/bin/env bash
# workers.sh - two worker lcores per daemon (D63): one engine per worker,
# one queue per worker on every memif plane, frames steered to the worker
# that owns their QP through its hand-over ring, endpoint requests and ARP
# copied to every worker. Transfers are small: four polling threads share
# the two CPUs while they run, and this checks steering, not speed.
source "$(dirname "$0")/lib.sh"
PERF=${MRC_PERF:?path to mrc-perf}
BYTES=${WORKERS_BYTES:-64M}

make_configs
# a: main lcore on CPU 0, workers on CPUs 1 and 0; b the other way round
python3 - "$T/a.yaml" "$T/b.yaml" <<'PY'
import re, sys
for p, lc in ((sys.argv[1], "0@0,1@1,2@0"), (sys.argv[2], "0@1,1@0,2@1")):
    s = open(p).read()
    s = re.sub(r'"--lcores", "[^"]*"', '"--lcores", "%s"' % lc, s)
    if '"--lcores"' not in s:
        s = s.replace('"--file-prefix"', '"--lcores", "%s", "--file-prefix"' % lc, 1)
    s = s.replace("  ids: [1]", "  ids: [1, 2]")
    open(p, "w").write(s)
PY
# a serves /metrics: its two workers' answers are folded into one text
PROM=$(free_ports 1)
sed -i "s/^  enabled: true\$/  enabled: true\n  prometheus: {listen: \"127.0.0.1:$PROM\"}/" "$T/a.yaml"
grep -q "listen: \"127.0.0.1:$PROM\"" "$T/a.yaml" || bad "a's config: no telemetry section to extend"
start_daemon a && start_daemon b || { bad "daemons with two workers start"; finish; exit 1; }
check "links come up on both queues' ports" wait_for 30 links_up a
wait_for 30 links_up b
workers() { ctlj "$1" lcores | jget 'len(d)'; }
check "a runs 2 workers ($(workers a))" test "$(workers a)" = 2
check "b runs 2 workers ($(workers b))" test "$(workers b)" = 2
check "status counts the workers" test "$(ctlj a status | jget 'd["workers"]')" = 2

# wk NAME WORKER KEY: one worker counter
wk() { ctlj "$1" lcores | jget "[w[\"$3\"] for w in d if w[\"worker\"] == $2][0]"; }

selftest() { # selftest NAME [args]: a verified transfer a -> b
	local name=$1; shift
	if ctl a selftest --peer "$T/b.sock" --timeout 120 --json "$@" > "$T/st-$name.json" 2> "$T/st-$name.err"; then
		ok "selftest $name: $(jget '"%.2f Gbit/s, %d rtx, %d verify errors" % (d["sender"]["goodput_gbps"], d["sender"]["rtx_total"], d["receiver"]["verify_errors"])' < "$T/st-$name.json")"
	else
		bad "selftest $name: $(cat "$T/st-$name.err")"
	fi
}

# a's worker 0 sends to b's worker 1: b receives on queue 0 (worker 0) and
# hands over to worker 1; b's answers leave on queue 1 and reach a's worker 1,
# which hands them to worker 0.
selftest cross --bytes "$BYTES" --worker 0 --peer-worker 1
check "b worker 0 handed frames over ($(wk b 0 handover_out))" test "$(wk b 0 handover_out)" -gt 1000
check "b worker 1 took them ($(wk b 1 handover_in))" test "$(wk b 1 handover_in)" -gt 1000
check "a worker 1 handed the answers over ($(wk a 1 handover_out))" test "$(wk a 1 handover_out)" -gt 100
check "nothing dropped at a hand-over ring" num_cmp "$(num_sum "$(wk a 0 handover_drop)" "$(wk a 1 handover_drop)" \
	"$(wk b 0 handover_drop)" "$(wk b 1 handover_drop)")" -eq 0
check "selftest ids name their worker (b's listener was worker 1)" \
	test "$(jget 'd["receiver"]["id"] % 2' < "$T/st-cross.json")" = 1
before=$(wk b 0 handover_out)
selftest same --bytes "$BYTES" --worker 1 --peer-worker 1
moved=$(num_sum "$(wk b 0 handover_out)" "-$before")
check "a transfer between the queues' own workers: no data handed over at b worker 0 ($moved frames)" \
	num_cmp "$moved" -lt 100
check "b resolved a by ARP on all 4 planes" \
	test "$(ctlj b counters | jget 'sum(p["neigh"]["learned"] > 0 for p in d["ports"].values())')" = 4

# A port-status update reaches every engine: a port of a goes admin-down
# while b's worker 1 holds the QP.
proc_start st ctl a selftest --peer "$T/b.sock" --timeout 120 --json --bytes 1G --worker 0 --peer-worker 1 \
	> "$T/st-psu.json" 2> "$T/st-psu.err"
sending() { [ "$(ctlj a qps | jget 'sum(q["tx_data_pkts"] for q in d)')" -gt 500 ]; }
wait_for 30 sending
ctl a port-admin port=plane3 up=false >/dev/null
check "the transfer was running at admin-down" kill -0 "$st"
peer_mask() { ctlj b status | jget '[p["port_mask"] for p in d["peers"] if p["node"] == "10.1.0.1"][0]'; }
mask_is() { [ "$(peer_mask)" = "$1" ]; }
check "b sees a's mask 0xb (the update reached the engine of b's worker 1)" wait_for 5 mask_is 0xb
ctl a port-admin port=plane3 up=true >/dev/null
check "and 0xf after admin-up" wait_for 5 mask_is 0xf
check "endpoint requests were copied between b's workers ($(wk b 1 node_copies))" \
	num_cmp "$(num_sum "$(wk b 0 node_copies)" "$(wk b 1 node_copies)")" -gt 0
if wait "$st"; then
	ok "selftest across a plane down and up: $(jget '"%d verify errors" % d["receiver"]["verify_errors"]' < "$T/st-psu.json")"
else
	bad "selftest across a plane down and up: $(cat "$T/st-psu.err")"
fi

# Fault rules go to every worker: 1% drop on every plane of a.
for plane in 1 2 3 4; do
	ctl a fault-set port=$plane drop_pct=1 direction=both >/dev/null
done
check "one rule per plane listed once" test "$(ctlj a faults | jget 'len(d)')" = 4
selftest drop1pct --bytes "$BYTES" --worker 1 --peer-worker 0
check "the rules dropped packets" test "$(ctlj a counters | jget 'sum(p["fault"]["dropped"] for p in d["ports"].values())')" -gt 0
ctl a fault-clear >/dev/null
check "cleared on every worker" test "$(ctlj a faults | jget 'len(d)')" = 0

# Client sessions go round the workers; mrc-perf with 4 QPs a -> b.
proc_start srv "$PERF" -s "$T/b.sock" --server --port 18650 --timeout 60 > "$T/perf.srv" 2>&1
if "$PERF" -s "$T/a.sock" --client 127.0.0.1 --port 18650 --verify --timeout 60 --stats 0 \
	--qps 4 --iters 2000 --size 65536 > "$T/perf.out" 2>&1 && wait "$srv"; then
	ok "mrc-perf --verify with 4 QPs: $(grep -E 'goodput|errors' "$T/perf.out" | tr -s ' ' | paste -sd' ' | cut -c1-120)"
else
	bad "mrc-perf: $(tail -5 "$T/perf.out")"
fi

# /metrics folds both workers as mrcctl counters does: each sum lies between
# the JSON read just before the scrape and the one just after
if PY=$(prom_py); then
	ctlj a counters > "$T/c1.json" &&
		curl -sf --max-time 10 "http://127.0.0.1:$PROM/metrics" > "$T/m.txt" &&
		ctlj a counters > "$T/c2.json"
	"$PY" - "$T" <<'PY'
import json, sys
from prometheus_client.parser import text_string_to_metric_families
T = sys.argv[1]
j1, j2 = (json.load(open("%s/c%d.json" % (T, i))) for i in (1, 2))
m = {}
for fam in text_string_to_metric_families(open(T + "/m.txt").read()):
    for s in fam.samples:
        m.setdefault(s.name, []).append((s.labels, s.value))
def get(name, **want):
    v = [val for labels, val in m.get(name, []) if all(labels.get(k) == w for k, w in want.items())]
    return sum(v) if v else None
fails = 0
def between(what, lo, got, hi):
    global fails
    if got is not None and lo <= got <= hi:
        print("ok   /metrics %s: %d (JSON %d .. %d)" % (what, got, lo, hi))
    else:
        fails += 1
        print("FAIL /metrics %s: %s, JSON %s .. %s" % (what, got, lo, hi))
for name in j1["ports"]:
    for c in ("rx_pkts", "tx_pkts", "tx_bytes"):
        between("%s %s" % (name, c), j1["ports"][name][c], get("mrcd_port_%s_total" % c, port=name), j2["ports"][name][c])
between("engine rx_pkts", j1["engine"]["rx_pkts"], get("mrcd_engine_rx_pkts_total"), j2["engine"]["rx_pkts"])
between("worker loops (2 workers)", j1["worker"]["loops"], get("mrcd_worker_loops_total"), j2["worker"]["loops"])
qp = lambda j: j["live_qps"]["tx_data_pkts"] + j["closed_qps"]["tx_data_pkts"]
between("QP tx_data_pkts, live and closed", qp(j1), get("mrcd_qp_tx_data_pkts_total"), qp(j2))
workers = sorted(l["worker"] for l, v in m.get("mrcd_worker_loops_total", []) if v > 0)
if workers == ["0", "1"]: print("ok   /metrics has both workers' loops")
else: fails += 1; print("FAIL /metrics workers with loops: %s" % workers)
sys.exit(1 if fails else 0)
PY
	check "/metrics sums both workers as mrcctl counters does (above)" test $? -eq 0
else
	bad "python3-prometheus-client is not installed (scripts/setup.sh installs it)"
fi

check "a exits 0 on SIGTERM" stop_daemon a
check "b exits 0 on SIGTERM" stop_daemon b
finish
