#!/usr/bin/env bash
# fabric_steps.sh - mrcd vs Linux TCP vs Linux MPTCP on one routed fabric
# (scripts/fabric.sh), collective step by collective step, healthy and
# through silent failures; docs/benchmarks.md "A routed fabric".
#
#   flock /tmp/mrcd-heavy.lock bash scripts/bench/fabric_steps.sh [options]
#
# A step is FLOWS flows of BYTES each from host A to host B, started
# together and timed from the start to the last byte acknowledged end to
# end; a step not done in 30 s (GIVE_UP) is stalled. Transports:
#   mrcd   mrc-perf through the two daemons: FLOWS QPs, each QP one flow
#          (its BYTES as 1 MiB WriteImm messages, 4 in flight, verified at
#          the receiver); fresh QPs, so fresh EVs and UDP source ports, per step
#   tcp    bench/fabric_step: FLOWS TCP connections (fresh source ports)
#   mptcp  the same over MPTCP, four subflows per connection
# Each step runs the three transports one after the other (so the machine's
# noise spreads over all of them). Scenarios, one plane (S1..S4):
#   healthy, s2_before (S2 blackholed before the step), s2_mid (blackholed
#   once B has received a third of the step's bytes), s2_loss1 (1 % loss on
#   S2), s2_slow10 (S2's links at a tenth of their rate); two planes
#   (2 x 2 spines, a host port per plane): healthy2, p2_mid (plane 2
#   blackholed mid-step). Then the per-path truth run: one long mrcd
#   transfer, S2 blackholed at 3 s and healed at 6 s, every EV followed.
#
# Options: --steps N (20), --flows N (8), --bytes B (8M), --out DIR
#   (default build/fabric-steps), --scenarios "a b ..." (all), --no-two-plane,
#   --no-truth, --quick, --ipv6 (mrcd's planes on IPv6, fabric.sh --ipv6).
#   Output in DIR: steps.jsonl (one line per step), results.json
#   and table.markdown (p50 / p99 / max step time and stalled steps per transport
#   and scenario), series/*.dat (goodput samples), goodput-*.png (goodput over
#   time through a failure, one line per transport), cdf-*.png (step-time
#   CDFs), truth.json / truth.txt / truth-timeline.dat (the per-path run),
#   counters/<variant>-<scenario>-<a|b>-<0|1>.json (both daemons' counters
#   before and after each scenario; fabric_report.py's health table reads
#   what the scenario's closed QPs did), drops.json (the routers' qdisc
#   drops per scenario).
#
# The report's verdicts (fabric_report.py --expect-steps): every cell
# (transport x scenario) has its steps, every healthy scenario its
# counters, and, with the truth run, its figures; exit 1 when data is
# missing. --quick: 2 steps of 8 x 2 MiB per scenario and a 4 s truth run,
# to see it work end to end (not a measurement).
set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
source "$TOP/scripts/lib/proc.sh"
source "$TOP/scripts/lib/num.sh"
BUILD=${BUILD:-$TOP/build}
STEPS=20 FLOWS=8 BYTES=8M OUT=$BUILD/fabric-steps
SCEN1="healthy s2_before s2_mid s2_loss1 s2_slow10"
SCEN2="healthy2 p2_mid"
TWO=1 TRUTH=1 GIVE_UP=30 TRUTH_S=10 V6=()
ONLY=
while [ $# -gt 0 ]; do
	case $1 in
	--steps) STEPS=$2; shift 2 ;;
	--flows) FLOWS=$2; shift 2 ;;
	--bytes) BYTES=$2; shift 2 ;;
	--out) OUT=$2; shift 2 ;;
	--scenarios) ONLY=$2; shift 2 ;;
	--no-two-plane) TWO=0; shift ;;
	--no-truth) TRUTH=0; shift ;;
	--quick) STEPS=2 BYTES=2M TRUTH_S=4; shift ;;
	--ipv6) V6=(--ipv6); shift ;;
	-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "fabric_steps.sh: unknown option $1" >&2; exit 2 ;;
	esac
done
PERF=$BUILD/app/mrc-perf/mrc-perf
STEP=$BUILD/bench/fabric_step
MRCCTL=$BUILD/app/mrcctl/mrcctl
for b in "$PERF" "$STEP" "$MRCCTL" "$BUILD/app/mrcd/mrcd"; do
	[ -x "$b" ] || { echo "fabric_steps.sh: $b is missing: build first (ninja -C build)" >&2; exit 2; }
done
BYTES_N=$(python3 -c "import sys; s=sys.argv[1]; m={'K':1<<10,'M':1<<20,'G':1<<30}; print(int(s[:-1])*m[s[-1]] if s[-1] in m else int(s))" "$BYTES")
MSG=$((BYTES_N >= 1048576 ? 1048576 : BYTES_N))
ITERS=$((BYTES_N / MSG))
NAME=fb$(($$ % 100000))
export FABRIC_DIR=$OUT/fabric
fab() { bash "$TOP/scripts/fabric.sh" --name "$NAME" --build "$BUILD" "$@"; }
cleanup_add _proc_quiet bash "$TOP/scripts/fabric.sh" --name "$NAME" down
rm -rf "$OUT"
mkdir -p "$OUT/series"
: > "$OUT/steps.jsonl"
mkdir -p "$OUT/counters"
echo "{}" > "$OUT/drops.json"
log() { echo "[$(date +%T)] $*"; }
die() { echo "fabric_steps: $*" >&2; exit 1; }
want() { [ -z "$ONLY" ] || [[ " $ONLY " == *" $1 "* ]]; }

source "$TOP/scripts/lib/fabric_rx.sh"
b_rx() { fabric_rx; }   # bytes B has received so far (every port; FABRIC_RX of fab env)
closed_ge() { # closed_ge SOCK TAG: the daemon has closed STEPS x FLOWS QPs more than in counters/TAG.json
	local n0 n
	n0=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["closed_qps"]["qps"])' "$OUT/counters/$2.json") &&
		n=$("$MRCCTL" -s "$1" --json counters | python3 -c 'import json,sys; print(json.load(sys.stdin)["closed_qps"]["qps"])') &&
		[ "$n" -ge $((n0 + STEPS * FLOWS)) ]
}

rx_ge() { local rx; rx=$(b_rx) && [ "$rx" -ge "$1" ]; }   # rx_ge BYTES (integers: no awk per poll)

# fail_mid PATH START_BYTES PID: blackhole PATH once B has received a third
# of the step beyond START_BYTES, or when the step (PID) ended first, or
# after GIVE_UP; polled every 50 ms (a tight loop would take a CPU from
# the daemons)
fail_mid() {
	local path=$1 start=$2 pid=$3 goal rx
	goal=$(num_sum "$start" $((FLOWS * BYTES_N / 3))) || die "fail_mid: no start count ('$start')"
	proc_wait_for -p "$pid" "$GIVE_UP" rx_ge "$goal" 2> /dev/null || true
	rx=$(b_rx)
	is_num "$rx" || die "fail_mid: B's byte count is not a number ('$rx')"
	fab fail "$path" blackhole > /dev/null
}

counters() { # counters TAG: both daemons' counters into counters/TAG-<a|b>.json
	"$MRCCTL" -s "$SOCK_A" --json counters > "$OUT/counters/$1-a.json" || true
	"$MRCCTL" -s "$SOCK_B" --json counters > "$OUT/counters/$1-b.json" || true
}
drops() { # the routers' qdisc drops so far ("null" when a router's count cannot be read)
	fab status --json | python3 -c '
import json, sys
try:
    print(sum(v["drops"] for v in json.load(sys.stdin)["routers"].values()))
except Exception:
    print("null")' || echo null
}

# run_one TRANSPORT SCENARIO STEP: one step, a JSON line into steps.jsonl
run_one() {
	local tr=$1 sc=$2 i=$3 pid rc=0 start series=$OUT/series/$VAR-$sc-$1-$3.dat
	local fpath=
	case $sc in s2_*) fpath=S2 ;; p2_*) fpath=P2 ;; esac
	case $sc in
	s2_before) fab fail S2 blackhole > /dev/null ;;
	s2_loss1) fab fail S2 loss 1 > /dev/null ;;
	s2_slow10) fab fail S2 slow 10 > /dev/null ;;
	esac
	start=$(b_rx)
	case $tr in
	mrcd)
		( exec "$PERF" -s "$SOCK_A" --client 127.0.0.1 --port "$PERF_PORT" --qps "$FLOWS" --size "$MSG" \
			--iters "$ITERS" --window 4 --verify --json --stats 0.05 --timeout "$GIVE_UP" \
			> "$OUT/cur.json" 2> "$OUT/cur.err" ) &
		;;
	tcp | mptcp)
		local port=5301 m=()
		[ "$tr" = tcp ] || { port=5302; m=(--mptcp); }
		( exec ip netns exec "$NS_A" "$STEP" --client "$TCP_DSTS" --port "$port" "${m[@]}" \
			--flows "$FLOWS" --bytes "$BYTES" --timeout "$GIVE_UP" --interval-ms 50 --json \
			> "$OUT/cur.json" 2> "$OUT/cur.err" ) &
		;;
	esac
	pid=$!
	proc_track "$pid"
	case $sc in *_mid) fail_mid "$fpath" "$start" "$pid" ;; esac
	wait "$pid" || rc=$?   # both clients give up by themselves after GIVE_UP
	[ -z "$fpath" ] || fab heal "$fpath" > /dev/null
	python3 - "$tr" "$sc" "$i" "$rc" "$OUT/cur.json" "$OUT/cur.err" "$series" "$VAR" "$FLOWS" "$BYTES_N" \
		>> "$OUT/steps.jsonl" <<'PY'
import json, re, sys
tr, sc, i, rc, js, err, series, var, flows, nbytes = sys.argv[1:11]
flows, nbytes, rc = int(flows), int(nbytes), int(rc)
try:
    d = json.load(open(js))
except Exception:
    d = {}
out = {"variant": var, "scenario": sc, "transport": tr, "step": int(i), "exit": rc}
pts = []
if tr == "mrcd":
    ok = rc == 0 and d.get("exit") == 0 and d.get("verify_errors") == 0 and d.get("bytes") == flows * nbytes
    out.update(seconds=d.get("seconds"), stalled=not ok, verify_errors=d.get("verify_errors"),
               delivered=d.get("bytes", 0))
    acc = 0.0
    for line in open(err):
        m = re.search(r"\[client\s+([\d.]+) s\]\s+([\d.]+) Gbit/s", line)
        if m:
            t = float(m.group(1))
            acc += float(m.group(2)) * 1e9 / 8 * 0.05
            pts.append((t, acc))
else:
    ok = rc == 0 and d.get("stalled") is False
    out.update(seconds=d.get("seconds"), stalled=not ok, delivered=d.get("delivered", 0),
               subflows=d.get("subflows"))
    pts = [(t, b) for t, b in d.get("series", [])]
if not ok:
    out["seconds"] = None
with open(series, "w") as f:
    for t, b in pts:
        f.write("%.4f %.0f\n" % (t, b))
print(json.dumps(out))
PY
	tail -1 "$OUT/steps.jsonl" | python3 -c 'import json,sys; d=json.load(sys.stdin); print("   %-6s %-10s step %2d: %s" % (d["transport"], d["scenario"], d["step"], "STALLED" if d["stalled"] else "%.3f s" % d["seconds"]))'
}

servers() {
	proc_start SRV_PERF "$PERF" -s "$SOCK_B" --server --bind 127.0.0.1 --port "$PERF_PORT" --loop --stats 0 \
		> "$OUT/perf-server-$VAR.log" 2>&1
	proc_start SRV_TCP ip netns exec "$NS_B" "$STEP" --server --port 5301 > "$OUT/tcp-server-$VAR.log" 2>&1
	proc_start SRV_MPTCP ip netns exec "$NS_B" "$STEP" --server --mptcp --port 5302 > "$OUT/mptcp-server-$VAR.log" 2>&1
	proc_wait_for 20 bash -c "ss -ltn | grep -q ':$PERF_PORT '"
	proc_wait_for 20 bash -c "ip netns exec '$NS_B' ss -ltn | grep -q ':5302 '"
}

variant() { # variant NAME PLANES SCENARIOS...
	VAR=$1 PL=$2
	shift 2
	local sc i d0
	log "fabric: $PL plane(s)"
	fab --planes "$PL" "${V6[@]}" up
	eval "$(fab env)"
	PERF_PORT=$((18900 + $$ % 50))
	TCP_DSTS=$TCP_B1
	[ "$PL" -eq 1 ] || TCP_DSTS="$TCP_B1,$TCP_B2"   # TCP flows round robin over the planes
	servers
	for sc in "$@"; do
		want "$sc" || continue
		log "scenario $sc: $STEPS steps x (mrcd, tcp, mptcp)"
		counters "$VAR-$sc-0"
		d0=$(drops)
		for ((i = 1; i <= STEPS; i++)); do
			for tr in mrcd tcp mptcp; do run_one "$tr" "$sc" "$i"; done
		done
		# the last step's QPs are destroyed when its client exits: wait
		# (bounded) until the daemons' closed-QP counts have moved on
		proc_wait_for 10 closed_ge "$SOCK_A" "$VAR-$sc-0-a" 2> /dev/null || true
		proc_wait_for 10 closed_ge "$SOCK_B" "$VAR-$sc-0-b" 2> /dev/null || true
		counters "$VAR-$sc-1"
		python3 - "$OUT/drops.json" "$VAR/$sc" "$d0" "$(drops)" <<'PY'
import json, sys
p, key, a, b = sys.argv[1:5]
d = json.load(open(p))
d[key] = int(b) - int(a) if a.isdigit() and b.isdigit() else None
json.dump(d, open(p, "w"), indent=1)
PY
	done
	if [ "$VAR" = one ] && [ "$TRUTH" = 1 ]; then truth; fi
	proc_stop "$SRV_PERF" || true
	proc_stop "$SRV_TCP" || true
	proc_stop "$SRV_MPTCP" || true
	fab down > /dev/null
}

# The per-path truth: one mrcd transfer of FLOWS QPs for TRUTH_S (10 s), S2
# blackholed at 0.3 x TRUTH_S and healed 0.3 x TRUTH_S later; every EV
# followed (fabric_evs.py) and set against the spine the leaf sent each
# EV's packets to (fabric.sh seen), judged as test/integration/
# fabric_clos.sh judges it.
truth() {
	local t0 pid smp third
	third=$(awk -v s="$TRUTH_S" 'BEGIN { printf "%.2f", s * 0.3 }')
	log "per-path truth: $FLOWS QPs for $TRUTH_S s, S2 blackholed for $third s from $third s"
	t0=$(date +%s.%N)
	proc_start smp python3 "$TOP/scripts/bench/fabric_evs.py" --socket "$SOCK_A" --out "$OUT/truth-evs.json" \
		--interval 0.05 --t0 "$t0"
	( exec "$PERF" -s "$SOCK_A" --client 127.0.0.1 --port "$PERF_PORT" --qps "$FLOWS" --size "$MSG" \
		--duration "$TRUTH_S" --window 4 --verify --json --stats 0.1 --timeout 40 > "$OUT/truth-perf.json" \
		2> "$OUT/truth-perf.err" ) &
	pid=$!
	proc_track "$pid"
	# the schedule starts when data flows (on a loaded host the QPs' setup
	# takes seconds: a failure timed from the launch came before any data,
	# and nothing could be judged)
	local rx0
	rx0=$(b_rx) || die "truth: B's byte count cannot be read"
	proc_wait_for -p "$pid" "$GIVE_UP" rx_ge $((rx0 + 1048576)) 2> /dev/null || true
	# a schedule, not a synchronisation: the transfer runs TRUTH_S whatever we do
	sleep "$third"
	local tf tfd tr
	tf=$(date +%s.%N)
	fab fail S2 blackhole > /dev/null
	tfd=$(date +%s.%N)   # the rule is in place
	sleep "$third"
	tr=$(date +%s.%N)
	fab heal S2 > /dev/null
	wait "$pid" || true
	sleep 1   # let the probes of the last QPs' retired EVs report back
	proc_stop -s TERM "$smp" || true
	# each EV's spine: where LA sent its packets (fabric.sh seen; on IPv6
	# the kernel's route lookup cannot say, fabric.sh --ipv6)
	fab seen > "$OUT/truth-hash.txt"
	local fs fds hs
	fs=$(awk -v a="$tf" -v b="$t0" 'BEGIN { printf "%.3f", a - b }')
	fds=$(awk -v a="$tfd" -v b="$t0" 'BEGIN { printf "%.3f", a - b }')
	hs=$(awk -v a="$tr" -v b="$t0" 'BEGIN { printf "%.3f", a - b }')
	python3 "$TOP/scripts/bench/fabric_truth.py" --evs "$OUT/truth-evs.json" --hash "$OUT/truth-hash.txt" \
		--spine S2 --fail-s "$fs" --fail-done-s "$fds" --heal-s "$hs" --min-eligible 40 --min-recall 0.95 \
		--min-precision 0.9 --out "$OUT/truth.json" \
		| tee "$OUT/truth.txt" || true
	python3 - "$OUT/truth-evs.json" "$OUT/truth-hash.txt" "$fs" "$hs" > "$OUT/truth-timeline.dat" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
sp = dict(l.split() for l in open(sys.argv[2]) if len(l.split()) == 2)
print("# t_s  good_crossing_S2  not_good_crossing_S2  good_other  not_good_other   (S2 failed at %s s, healed at %s s)" % (sys.argv[3], sys.argv[4]))
# replay the timeline: every EV starts GOOD
state = {}
for q, rec in d["qps"].items():
    for e in rec["evs"]:
        state[(q, e["ev"])] = ("GOOD", sp.get(str(e["ev"])) == "S2")
events = sorted(d["timeline"])
t_end = max([t for t, *_ in events] + [0])
k = 0
t = 0.0
while t <= t_end + 0.05:
    while k < len(events) and events[k][0] <= t:
        _, q, ev, _, to = events[k]
        key = (str(q), ev)
        if key in state:
            state[key] = (to, state[key][1])
        k += 1
    c = [0, 0, 0, 0]
    for st, cross in state.values():
        c[(0 if cross else 2) + (st != "GOOD")] += 1
    print("%.2f %d %d %d %d" % (t, *c))
    t += 0.05
PY
	echo "truth: mrc-perf $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("%.0f MB in %.1f s, verify errors %d, exit %d" % (d["bytes"]/1e6, d["seconds"], d["verify_errors"], d["exit"]))' "$OUT/truth-perf.json")" \
		| tee -a "$OUT/truth.txt"
}

log "fabric_steps: $STEPS steps of $FLOWS x $BYTES per transport and scenario; output in $OUT"
variant one 1 $SCEN1
[ "$TWO" = 0 ] || variant two 2 $SCEN2
expect=()
for sc in $SCEN1; do want "$sc" && expect+=("one/$sc"); done
if [ "$TWO" = 1 ]; then for sc in $SCEN2; do want "$sc" && expect+=("two/$sc"); done; fi
truth_arg=()
[ "$TRUTH" = 0 ] || truth_arg=(--expect-truth)
rc=0
python3 "$TOP/scripts/bench/fabric_report.py" --out "$OUT" --expect-steps "$STEPS" \
	--expect-scenarios "${expect[*]}" "${truth_arg[@]}" || rc=$?
log "done: $OUT/table.markdown (verdict: $([ "$rc" = 0 ] && echo ok || echo "FAIL, exit $rc"))"
exit "$rc"
