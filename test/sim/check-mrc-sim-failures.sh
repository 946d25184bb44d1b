#!/bin/sh
# check-mrc-sim-failures.sh - every failure kind parses and runs (a 256 KiB
# p2p that MRC must finish, twice byte-identical), and malformed failures
# are rejected with file:line and exit status 2. "Finished" is read from
# --json (simval.sh), as is the ev_drop record.
#
#   check-mrc-sim-failures.sh MRC_SIM
set -eu

sim=$1
. "$(dirname "$0")/simval.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

base() {
	cat <<'YAML'
seed: 1
hosts: 8
planes: 2
hosts_per_t0: 4
t1_per_plane: 4
workload: {type: p2p, bytes: 262144, qps: 1, msg_kb: 64}
duration_ms: 20
reconverge_ms: 0.05
YAML
}

good() { # name failure-lines...
	name=$1
	shift
	{ base; echo "failures:"; printf '  - %s\n' "$@"; } >"$tmp/$name.yaml"
	"$sim" --scenario "$tmp/$name.yaml" --transport mrc --json "$tmp/$name.a.json" >"$tmp/$name.a"
	"$sim" --scenario "$tmp/$name.yaml" --transport mrc --json "$tmp/$name.b.json" >"$tmp/$name.b"
	cmp -s "$tmp/$name.a" "$tmp/$name.b" && cmp -s "$tmp/$name.a.json" "$tmp/$name.b.json" ||
		{ echo "FAIL $name: two runs differ" >&2; exit 1; }
	fin=$(finish_ns "$tmp/$name.a.json" mrc) || fin=
	num_check "$name: MRC finished" 'f > 0' f="$fin" ||
		{ cat "$tmp/$name.a"; echo "FAIL $name: MRC unfinished ('$fin')" >&2; exit 1; }
	echo "ok: $name"
}

bad() { # name expected-message failure-line
	name=$1 msg=$2
	{ base; echo "failures:"; echo "  - $3"; } >"$tmp/$name.yaml"
	if "$sim" --scenario "$tmp/$name.yaml" >"$tmp/$name.out" 2>"$tmp/$name.err"; then
		echo "FAIL $name: accepted" >&2
		exit 1
	else
		rc=$?
	fi
	[ $rc -eq 2 ] || { echo "FAIL $name: exit $rc, not 2" >&2; exit 1; }
	grep -q "^$tmp/$name.yaml:[0-9]*: .*$msg" "$tmp/$name.err" ||
		{ cat "$tmp/$name.err" >&2; echo "FAIL $name: no file:line '$msg'" >&2; exit 1; }
	echo "ok: $name rejected"
}

good blackhole '{at_us: 5, kind: blackhole, plane: 0, t0: 0, t1: 0}'
good link-down-up '{at_us: 5, kind: link_down, plane: 0, t0: 0, t1: 1}' \
	'{at_us: 80, kind: link_up, plane: 0, t0: 0, t1: 1}'
good host-down-up '{at_us: 5, kind: link_down, plane: 1, host: 0}' '{at_us: 20, kind: link_up, plane: 1, host: 0}'
good t1-down '{at_us: 5, kind: switch_down, plane: 0, t1: 2}'
good t0-down '{at_us: 5, kind: switch_down, plane: 1, t0: 1}'
good t1-blackhole '{at_us: 5, kind: switch_blackhole, plane: 0, t1: 3}'
good gray '{at_us: 0, kind: gray, plane: 0, host: 7, loss_pct: 5}'
good slow '{at_us: 0, kind: slow, plane: 1, t0: 1, t1: 3, factor: 8}'
good flap '{at_us: 2, kind: flap, plane: 0, host: 0, period_us: 10, duration_us: 30}'
good ev-drop '{at_us: 0, kind: ev_drop, loss_pct: 20, ev_index: 3}'
ev=$(run_v "$tmp/ev-drop.a.json" mrc ev_drop.ev) || ev=
num_check "ev-drop: the dropped EV is reported" 'e > 0' e="$ev" || { echo "FAIL ev-drop: no ev_drop record" >&2; exit 1; }
good blackhole-up '{at_us: 5, kind: blackhole, plane: 0, host: 0, dir: up}'
good blackhole-down '{at_us: 5, kind: blackhole, plane: 1, t0: 0, t1: 1, dir: down}'
good pause-once '{at_us: 5, kind: host_pause, host: 0, duration_us: 50}'
good pause-periodic '{at_us: 5, kind: host_pause, host: 7, duration_us: 20, period_us: 60}'

bad kind 'kind must be' '{at_us: 0, kind: melt, plane: 0, host: 0}'
bad gray-loss 'gray needs loss_pct' '{at_us: 0, kind: gray, plane: 0, host: 0}'
bad gray-range 'out-of-range' '{at_us: 0, kind: gray, plane: 0, host: 0, loss_pct: 101}'
bad slow-factor 'slow needs factor' '{at_us: 0, kind: slow, plane: 0, host: 0}'
bad slow-range 'out-of-range' '{at_us: 0, kind: slow, plane: 0, host: 0, factor: 0.5}'
bad flap-period 'flap needs' '{at_us: 0, kind: flap, plane: 0, host: 0, duration_us: 10}'
bad period-other 'flap and host_pause only' '{at_us: 0, kind: blackhole, plane: 0, host: 0, period_us: 10}'
bad dir-other 'dir is for blackhole only' '{at_us: 0, kind: gray, plane: 0, host: 0, loss_pct: 1, dir: up}'
bad dir-value 'dir must be' '{at_us: 0, kind: blackhole, plane: 0, host: 0, dir: sideways}'
bad pause-plane 'host_pause takes' '{at_us: 0, kind: host_pause, plane: 0, host: 0, duration_us: 10}'
bad pause-period 'host_pause takes' '{at_us: 0, kind: host_pause, host: 0, duration_us: 10, period_us: 5}'
bad ev-plane 'ev_drop takes' '{at_us: 0, kind: ev_drop, plane: 0, loss_pct: 5}'
bad ev-flow 'flow the workload' '{at_us: 0, kind: ev_drop, loss_pct: 5, flow: 1}'
bad link-both 'a link is' '{at_us: 0, kind: gray, plane: 0, host: 0, t0: 0, t1: 0, loss_pct: 1}'
bad switch-both 'exactly one of t0, t1' '{at_us: 0, kind: switch_blackhole, plane: 0, t0: 0, t1: 0}'
bad outside 'outside the topology' '{at_us: 0, kind: slow, plane: 0, t0: 2, t1: 0, factor: 2}'

# not a failure, but a malformed scenario all the same
{ base; echo "workload: {type: p2p, bytes: 262144, qps: 1, shared_qps: true}"; } >"$tmp/shared.yaml"
rc=0
"$sim" --scenario "$tmp/shared.yaml" >/dev/null 2>"$tmp/shared.err" || rc=$?
[ $rc -eq 2 ] && grep -q "^$tmp/shared.yaml:[0-9]*: shared_qps is for alltoall only" "$tmp/shared.err" ||
	{ cat "$tmp/shared.err" >&2; echo "FAIL shared_qps outside alltoall: exit $rc" >&2; exit 1; }
echo "ok: shared_qps outside alltoall rejected"

# three tiers: both keys or neither; switch failures are not modelled there
rejects() { # name message yaml-lines...
	name=$1 msg=$2
	shift 2
	{ base; for l in "$@"; do echo "$l"; done; } >"$tmp/$name.yaml"
	rc=0
	"$sim" --scenario "$tmp/$name.yaml" >/dev/null 2>"$tmp/$name.err" || rc=$?
	[ $rc -eq 2 ] && grep -q "^$tmp/$name.yaml:[0-9]*: .*$msg" "$tmp/$name.err" ||
		{ cat "$tmp/$name.err" >&2; echo "FAIL $name: exit $rc" >&2; exit 1; }
	echo "ok: $name rejected"
}
rejects tiers-half 'three tiers need both' 't0_per_pod: 1'
rejects tiers-switch 'switch failures are not modelled' 't0_per_pod: 1' 't2_per_plane: 2' 'failures:' \
	'  - {at_us: 5, kind: switch_down, plane: 0, t1: 1}'
rejects routing 'routing must be' 'routing: magic'
echo "ok: failures"
