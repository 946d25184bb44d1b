#!/usr/bin/env bash
# fabric_clos.sh - the bounded fabric run (scripts/fabric.sh): two mrcd on
# af_xdp behind Linux routers (A - LA - S1..S4 - LB - B, tbf-shaped, 5-tuple
# ECMP), eight QPs per step sending verified WriteImm messages through the
# gateways. Checks: an `up` that fails half way, or is killed half way,
# leaves nothing; routed delivery through the leaves; every spine carries
# MRC traffic when healthy; two healthy steps and two steps with S2
# blackholed mid-step all finish, with no verify error; the EVs retired
# during a blackhole are the ones the leaf's hash sends over S2; and after
# `down` no namespace, nftables rule or daemon of the fabric is left.
source "$(dirname "$0")/lib.sh"

FAB="$TOP/scripts/fabric.sh"
BUILD=$(cd "$(dirname "$MRCD")/../.." && pwd)
NAME="it$(($$ % 100000))"
PERF_PORT=$((18700 + $$ % 200))
fab() { FABRIC_DIR="$T/fabric" bash "$FAB" --name "$NAME" --build "$BUILD" "$@"; }
left_ns() { # the namespaces named NAME-*; nothing (and 1) if they cannot be listed
	local l
	l=$(ip netns list) || return 1
	awk -v p="^$1-" '$1 ~ p' <<<"$l" | wc -l
}
cleanup_add _proc_quiet fab down

if ! ip netns add "mrcd-probe$$" 2>/dev/null; then
	echo "cannot create a network namespace: skipping"; echo "0 passed, 0 failed"; exit 77
fi
ip netns del "mrcd-probe$$"

# ---- cleanup guarantees of `up` ----
x="${NAME}x"
y="${NAME}y"
cleanup_add _proc_quiet env FABRIC_DIR="$T/fx" bash "$FAB" --name "$x" down
cleanup_add _proc_quiet env FABRIC_DIR="$T/fy" bash "$FAB" --name "$y" down
FABRIC_DIR="$T/fx" bash "$FAB" --name "$x" --build /nonexistent up > "$T/fx.log" 2>&1
check "an up that fails half way (no mrcd) exits non-zero" test $? -ne 0
check "... and leaves no namespace ($(left_ns "$x"))" test "$(left_ns "$x")" -eq 0
check "... and no state directory" test ! -e "$T/fx"
( exec env FABRIC_DIR="$T/fy" bash "$FAB" --name "$y" --build "$BUILD" up > "$T/fy.log" 2>&1 ) &
upid=$!
proc_track "$upid"
wait_for 30 bash -c "ip netns list | grep -q '^$y-S1'"
proc_stop -s TERM "$upid"
check "an up killed half way leaves no namespace ($(left_ns "$y"))" test "$(left_ns "$y")" -eq 0
check "... and no daemon" bash -c "! ls '$T/fy'/*.pid >/dev/null 2>&1"

# ---- the fabric ----
if ! fab up > "$T/up.log" 2>&1; then
	bad "fabric.sh up"; cat "$T/up.log"; finish; exit 1
fi
ok "fabric.sh up (mrcd on af_xdp on A and B, gateways resolved)"
eval "$(fab env)"
status() { fab status --json > "$T/st.json" && cat "$T/st.json"; }
spine_mrc() { # spine_mrc: "S1 n1 S2 n2 ..." MRC packets each spine forwarded
	status | jget "' '.join('%s %d' % (k, v['mrc']) for k, v in sorted(d['routers'].items()) if k[0] == 'S')"
}
pid_a=$(status | jget "d['daemons']['a']['pid']")
pid_b=$(status | jget "d['daemons']['b']['pid']")

proc_start srv "$BUILD/app/mrc-perf/mrc-perf" -s "$SOCK_B" --server --bind 127.0.0.1 \
	--port "$PERF_PORT" --loop --stats 0 > "$T/srv.log" 2>&1
step() { # step N: 8 QPs x 2 MiB, verified; the JSON report in $T/step-N.json
	"$BUILD/app/mrc-perf/mrc-perf" -s "$SOCK_A" --client 127.0.0.1 --port "$PERF_PORT" \
		--qps 8 --size 256K --iters 8 --window 4 --verify --json --stats 0 --timeout 30 \
		> "$T/step-$1.json" 2> "$T/step-$1.err"
}
step_ok() { # every byte, no verify or completion error
	jget "d['exit'] == 0 and d['verify_errors'] == 0 and d['cq_errors'] == 0 and d['bytes'] == 8 * 2 * 1024 * 1024" \
		< "$T/step-$1.json" | grep -qx True
}
wait_for 30 bash -c "kill -0 $srv && ss -ltn | grep -q ':$PERF_PORT '"

# healthy
read -r -a before <<< "$(spine_mrc)"
for n in 1 2; do
	check "healthy step $n finishes" step "h$n"
	check "healthy step $n: every byte, verified ($(jget "d['seconds']" < "$T/step-h$n.json") s)" step_ok "h$n"
done
read -r -a after <<< "$(spine_mrc)"
# "S1 n1 S2 n2 ...": the same spines before and after, at least two
check "the spines' MRC counts were read (${before[*]:-nothing} / ${after[*]:-nothing})" \
	test "${#after[@]}" -ge 4 -a "${#before[@]}" -eq "${#after[@]}"
diffs=() total=0
for ((i = 1; i < ${#after[@]}; i += 2)); do
	diffs[i]=$(num_sub "${after[i]}" "${before[i]:-}") && total=$(num_sum "$total" "${diffs[i]}")
done
for ((i = 1; i < ${#after[@]}; i += 2)); do
	check "${after[i - 1]} carried MRC traffic when healthy (${diffs[i]:-?} of $total packets)" \
		num_check "${after[i - 1]}" 'd >= t / 10' d="${diffs[i]:-}" t="$total"
done
via() { "$MRCCTL" -s "$1" --json counters | jget "d['ports']['$2']['neigh']['$3']"; }
for h in a b; do
	s=$([ $h = a ] && echo "$SOCK_A" || echo "$SOCK_B")
	g=$(via "$s" ${h}1 via_gateway) l=$(via "$s" ${h}1 via_link)
	check "$h sent through its gateway ($g packets)" num_cmp "$g" -gt 10000
	check "$h sent nothing on the link ($l packets)" num_cmp "$l" -eq 0
done
la=$(status | jget "d['routers']['LA']['mrc']")
check "the leaves forwarded it (LA: $la MRC packets)" num_cmp "$la" -gt 20000

# S2 blackholed mid-step
for n in 1 2; do
	t0=$(date +%s.%N)
	proc_start smp python3 "$TOP/scripts/bench/fabric_evs.py" --socket "$SOCK_A" \
		--out "$T/evs-$n.json" --interval 0.02 --t0 "$t0"
	rx0=$(fab rx)
	( exec "$BUILD/app/mrc-perf/mrc-perf" -s "$SOCK_A" --client 127.0.0.1 --port "$PERF_PORT" \
		--qps 8 --size 256K --iters 8 --window 4 --verify --json --stats 0 --timeout 30 \
		> "$T/step-b$n.json" 2> "$T/step-b$n.err" ) &
	cpid=$!
	proc_track "$cpid"
	# mid-step: once B has received a third of the step's 16 MiB (a count
	# that cannot be read ends the wait, and the check below fails)
	goal=$(num_sum "$rx0" $((16 * 1024 * 1024 / 3))) rx=
	while [ -n "$goal" ] && kill -0 "$cpid" 2>/dev/null; do
		rx=$(fab rx)
		is_num "$rx" || break
		num_cmp "$rx" -ge "$goal" && break
	done
	tf=$(date +%s.%N)
	fab fail S2 blackhole > /dev/null
	check "blackhole step $n: B had received a third of the step when S2 failed (${rx:-?} of ${goal:-?} bytes)" \
		num_cmp "$rx" -ge "$goal"
	# mrc-perf gives up by itself after --timeout 30
	wait "$cpid"
	rc=$?
	check "blackhole step $n: mrcd finishes with S2 blackholed mid-step (exit $rc)" test "$rc" -eq 0
	check "blackhole step $n: every byte, verified ($(jget "d['seconds']" < "$T/step-b$n.json" 2>/dev/null) s)" step_ok "b$n"
	proc_stop -s TERM "$smp"
	fab heal S2 > /dev/null
	python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print('\n'.join(str(e['ev'] & 0xffff) for q in d['qps'].values() for e in q['evs']))" \
		"$T/evs-$n.json" | sort -u | fab hash - > "$T/hash-$n.txt"
	fs=$(awk -v a="$tf" -v b="$t0" 'BEGIN { printf "%.3f", a - b }')
	check "blackhole step $n: S2 failed mid-step (at $fs s, before the step's QPs were gone)" \
		python3 -c "import json,sys; q=json.load(open(sys.argv[1]))['qps'].values(); sys.exit(0 if q and max(x['last_s'] for x in q) > $fs else 1)" "$T/evs-$n.json"
	echo "blackhole step $n: S2 failed at $fs s; $(jget "'%d EV samples from %.3f to %.3f s' % (d['samples'], min(q['first_s'] for q in d['qps'].values()), max(q['last_s'] for q in d['qps'].values()))" < "$T/evs-$n.json")"
	python3 "$TOP/scripts/bench/fabric_truth.py" --evs "$T/evs-$n.json" --hash "$T/hash-$n.txt" \
		--spine S2 --fail-s "$fs" --out "$T/truth-$n.json" | tee "$T/truth-$n.txt"
	tr() { jget "d['$1']" < "$T/truth-$n.json"; }
	check "blackhole step $n: the EVs that cross S2 and sent data were retired (recall $(tr recall))" \
		num_cmp "$(tr recall)" -ge 0.8
	check "blackhole step $n: the retired EVs are the ones that cross S2 (precision $(tr precision))" \
		num_cmp "$(tr precision)" -ge 0.8
done

# ---- down ----
check "fabric.sh down" fab down
check "no namespace of the fabric is left ($(left_ns "$NAME"))" test "$(left_ns "$NAME")" -eq 0
check "the daemons are gone" bash -c "! kill -0 $pid_a 2>/dev/null && ! kill -0 $pid_b 2>/dev/null"
check "no nftables table of the fabric is left in this namespace" \
	bash -c "! nft list tables 2>/dev/null | grep -q 'mrcd_fail\|mrcd_count'"
check "the state directory is gone" test ! -e "$T/fabric"
proc_stop "$srv"
finish
