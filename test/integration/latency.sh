#!/usr/bin/env bash
# latency.sh - the daemons' own ping-pong (mrcctl selftest --latency, op
# ping_pong): two mrcd over four memif planes with busy-polling workers (the
# only two busy threads), 64 B and 1 KiB round trips; every round trip
# counted, the percentiles ordered and non-zero, every message and echo
# checked; under 5 % drop on every plane it still completes, through
# retransmissions; the daemon refuses a run longer than it keeps RTTs for.
# No absolute time bound: the host decides those.
source "$(dirname "$0")/lib.sh"

make_configs
for n in a b; do
	sed -i 's/^  idle: adaptive/  idle: busy/' "$T/$n.yaml"
done
busy_cfgs() { grep -q '^  idle: busy' "$T/a.yaml" && grep -q '^  idle: busy' "$T/b.yaml"; }
check "both configs ask for busy workers" busy_cfgs
{ start_daemon a && start_daemon b && wait_for 30 links_up a && wait_for 30 links_up b; } ||
	{ bad "daemons start and links come up"; finish; exit 1; }
ok "daemons start and links come up"

# pingpong NAME ITERS [args]: run it, keep the JSON; check what it reports
pingpong() {
	local name=$1 iters=$2 v
	shift 2
	if ctl a selftest --peer "$T/b.sock" --latency --iters "$iters" --timeout 120 --json "$@" \
		> "$T/pp-$name.json" 2> "$T/pp-$name.err"; then
		ok "ping-pong $name: exit 0"
	else
		bad "ping-pong $name: exit $?: $(tail -3 "$T/pp-$name.err")"
		return 0
	fi
	# every value is read from the report: a missing one is a failure (KeyError)
	v=$(python3 - "$T/pp-$name.json" "$iters" 2>&1 <<'PY' | tail -1
import json, sys
d = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
s, r = d["sender"], d["receiver"]
t = s["rtt"]
w = t["warmup"]
errs = []
if d["ok"] is not True:
    errs.append("ok is not true")
if s["op"] != "ping_pong" or r["op"] != "ping_pong":
    errs.append("op %s/%s" % (s["op"], r["op"]))
if s["state"] != "done":
    errs.append("sender state " + s["state"])
if s["msgs_done"] != n:
    errs.append("round trips %d" % s["msgs_done"])
if r["imm_msgs"] != n or r["msgs_done"] != n:
    errs.append("receiver saw %d, checked %d" % (r["imm_msgs"], r["msgs_done"]))
if not 0 < w <= n // 10:
    errs.append("warm-up %d" % w)
if t["samples"] != n - w:
    errs.append("samples %d" % t["samples"])
order = [t[k] for k in ("min_ns", "p50_ns", "p90_ns", "p99_ns", "max_ns")]
if not (0 < order[0] and order == sorted(order)):
    errs.append("percentiles out of order: %s" % order)
if not t["min_ns"] <= t["mean_ns"] <= t["max_ns"]:
    errs.append("mean %d" % t["mean_ns"])
if s["verify_errors"] != 0 or r["verify_errors"] != 0:
    errs.append("verify errors %d/%d" % (s["verify_errors"], r["verify_errors"]))
print("; ".join(errs) if errs else "OK %d round trips, p50 %.2f us, p99 %.2f us, %d rtx" % (
    t["samples"], t["p50_ns"] / 1e3, t["p99_ns"] / 1e3, s["rtx_total"]))
PY
	)
	case "$v" in
	OK*) ok "ping-pong $name: ${v#OK }" ;;
	*) bad "ping-pong $name: $v" ;;
	esac
}

pingpong 64B 3000 --size 64
pingpong 1KiB 2000 --size 1K

# 5 % drop on every plane, both ways: the one message in flight is lost now
# and then; the run must still complete, every echo checked
for plane in 1 2 3 4; do
	ctl a fault-set port=$plane drop_pct=5 direction=both > /dev/null
done
pingpong drop5pct 600 --size 256
dropped=$(ctlj a counters | jget 'sum(p["fault"]["dropped"] for p in d["ports"].values())')
check "the drop rules dropped packets (${dropped:-none})" num_cmp "${dropped:-}" -gt 0
rtx=$(jget 'd["sender"]["rtx_total"]' < "$T/pp-drop5pct.json" 2>/dev/null)
check "the sender retransmitted (${rtx:-none})" num_cmp "${rtx:-}" -gt 0
ctl a fault-clear > /dev/null

# the limit on round trips: mrcctl refuses it before sending, the daemon too
ctl a selftest --peer "$T/b.sock" --latency --iters 1000001 > /dev/null 2> "$T/usage.err"
rc=$?
check "mrcctl --iters 1000001: usage error (exit $rc)" test "$rc" = 2
info=$(ctlj b selftest_listen region_bytes=1048576 detach=true 2> "$T/listen.err" |
	jget '"%d %s" % (d["id"], d["info"])' 2>/dev/null)
if [ -n "$info" ]; then
	read -r bid binfo <<< "$info"
	ctl a selftest_start peer_info="$binfo" bytes=$((64 * 1000001)) msg_size=64 op=ping_pong \
		> /dev/null 2> "$T/range.err"
	rc=$?
	check "the daemon refuses 1000001 round trips (exit $rc: $(cat "$T/range.err"))" \
		grep -q "at most 1000000 round trips.*EINVAL" "$T/range.err"
	ctl b selftest_stop id="$bid" > /dev/null
else
	bad "selftest_listen on b: $(cat "$T/listen.err")"
fi
# nothing left behind: every selftest was stopped
qps() { ctlj "$1" qps | jget 'len(d)'; }
check "no selftest QP left on a ($(qps a))" test "$(qps a)" = 0
check "no selftest QP left on b ($(qps b))" test "$(qps b)" = 0

for n in a b; do
	stop_daemon "$n"
	rc=$?
	check "daemon $n stops cleanly (exit $rc)" test "$rc" = 0
done
finish
