#!/usr/bin/env bash
# test_proc.sh - scripts/lib/proc.sh itself (unit suite): a process that
# ignores SIGTERM is killed; proc_stop returns the exit status; a wait
# times out with a message, returns early when the watched process exits
# and succeeds on a condition that comes true; the cleanup registry runs
# after a failure half way under set -e, on SIGTERM and on SIGINT (and
# removes a namespace and an nftables table when the machine allows them);
# a subshell does not run its parent's registry; a PID whose start time
# changed is never signalled.
set -u
here=$(cd "$(dirname "$0")" && pwd)
source "$here/proc.sh"
W=$(mktemp -d "${TMPDIR:-/tmp}/mrcd-proc-test.XXXXXX")
cleanup_dir "$W"
pass=0 failed=0
ok() { echo "ok   $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; failed=$((failed + 1)); }
gone() { ! kill -0 "$1" 2>/dev/null; }

# 1. SIGTERM ignored: SIGKILL after the grace period, status 137
proc_start p sh -c "trap '' TERM; echo up > '$W/ign'; exec sleep 600" 2>"$W/stop1.err"
proc_wait_for 10 test -s "$W/ign" || bad "the TERM-ignoring process came up"
t0=$EPOCHREALTIME
proc_stop -g 0.5 "$p" 2>"$W/stop1.err"
rc=$?
dt=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')
if [ "$rc" -eq 137 ] && gone "$p" && grep -q SIGKILL "$W/stop1.err"; then
	ok "a process ignoring SIGTERM is SIGKILLed after the grace period (${dt} s, status $rc)"
else
	bad "SIGTERM ignored: status $rc, alive $(kill -0 "$p" 2>/dev/null && echo yes || echo no), $(cat "$W/stop1.err")"
fi

# 2. a process that exits on SIGTERM: its own status, no SIGKILL
proc_start p sh -c "trap 'exit 3' TERM; echo up > '$W/t3'; while :; do sleep 0.05; done"
proc_wait_for 10 test -s "$W/t3"
proc_stop "$p" 2>"$W/stop2.err"
rc=$?
[ "$rc" -eq 3 ] && gone "$p" && ! grep -q SIGKILL "$W/stop2.err" &&
	ok "proc_stop returns the exit status (3)" || bad "proc_stop status $rc, $(cat "$W/stop2.err")"

# 3-5. waits
t0=$EPOCHREALTIME
proc_wait_for 0.3 false 2>"$W/wait.err"
rc=$?
dt=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { print b - a }')
if [ "$rc" -ne 0 ] && grep -q "timed out after 300 ms waiting for: false" "$W/wait.err" &&
	awk -v d="$dt" 'BEGIN { exit !(d >= 0.3 && d < 5) }'; then
	ok "a wait times out with a message ($(cat "$W/wait.err"))"
else
	bad "wait timeout: rc $rc after $dt s: $(cat "$W/wait.err")"
fi
proc_start p sh -c 'exit 0'
t0=$EPOCHREALTIME
proc_wait_for -p "$p" 30 false 2>"$W/wait2.err"
rc=$?
dt=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { print b - a }')
[ "$rc" -ne 0 ] && grep -q "exited while waiting" "$W/wait2.err" && awk -v d="$dt" 'BEGIN { exit !(d < 10) }' &&
	ok "a wait on a process that exits gives up at once (${dt} s)" || bad "wait -p: rc $rc after $dt s"
proc_start p sh -c "sleep 0.3; echo x > '$W/later'"
proc_wait_for 10 test -s "$W/later" && ok "a wait succeeds when its condition comes true" ||
	bad "wait on a condition that comes true"
proc_wait_for abc true 2>/dev/null
[ $? -eq 2 ] && ok "a wait refuses a deadline that is not a number" || bad "wait accepted 'abc'"

# 6. cleanup after a failure half way (set -e): processes stopped (with
#    SIGKILL when they ignore SIGTERM), commands run last first, dirs removed
cat >"$W/child.sh" <<'EOF'
set -euo pipefail
source "$1/proc.sh"
w=$2
PROC_GRACE=0.5
d=$(mktemp -d "$w/dir.XXXXXX")
cleanup_dir "$d"
echo "$d" >"$w/child.dir"
cleanup_add sh -c "echo first >>'$w/order'"
cleanup_add sh -c "echo second >>'$w/order'"
proc_start p sh -c "trap '' TERM; exec sleep 600"
proc_start q sleep 600
echo "$p $q" >"$w/child.pids"
if [ "${3:-fail}" = fail ]; then
	false
	echo "not reached" >"$w/reached"
fi
echo ready >"$w/child.ready"
while :; do sleep 0.05; done
EOF
bash "$W/child.sh" "$here" "$W" fail 2>"$W/child.err"
rc=$?
read -r cp cq <"$W/child.pids"
if [ "$rc" -eq 1 ] && gone "$cp" && gone "$cq" && [ ! -e "$(cat "$W/child.dir")" ] &&
	[ ! -e "$W/reached" ] && [ "$(paste -sd' ' "$W/order")" = "second first" ]; then
	ok "cleanup runs after a failure half way (status 1; both processes gone, dir removed, commands last first)"
else
	bad "cleanup on failure: rc $rc, order '$(paste -sd' ' "$W/order" 2>/dev/null)', $(cat "$W/child.err")"
fi

# 7. cleanup on SIGTERM and SIGINT (a background job ignores SIGINT unless
#    it is given the default back: env --default-signal)
for sig in TERM INT; do
	rm -f "$W/child.ready" "$W/order" "$W/child.pids"
	if [ "$sig" = INT ]; then
		proc_start c env --default-signal=INT bash "$W/child.sh" "$here" "$W" wait
	else
		proc_start c bash "$W/child.sh" "$here" "$W" wait
	fi
	proc_wait_for 10 test -s "$W/child.ready" || bad "the $sig child came up"
	read -r cp cq <"$W/child.pids"
	kill -s "$sig" "$c"
	proc_wait_for 15 gone "$c"
	wait "$c" 2>/dev/null
	rc=$?
	[ "$sig" = TERM ] && want=143 || want=130
	if [ "$rc" -eq "$want" ] && gone "$cp" && gone "$cq" && [ ! -e "$(cat "$W/child.dir")" ] &&
		[ "$(paste -sd' ' "$W/order")" = "second first" ]; then
		ok "cleanup runs on SIG$sig (status $rc)"
	else
		bad "cleanup on SIG$sig: rc $rc (want $want), order '$(paste -sd' ' "$W/order" 2>/dev/null)'"
	fi
done

# 8. a subshell does not run the registry of the shell that sourced proc.sh
proc_start p sleep 600
(cleanup_run)
kill -0 "$p" 2>/dev/null && ok "a subshell's cleanup_run leaves the parent's processes alone" ||
	bad "a subshell stopped the parent's process"
proc_stop -g 5 "$p"

# 9. a tracked PID whose start time no longer matches is not signalled
sleep 600 &
p=$!
_PROC_PIDS+=("$p:1")   # as if the PID had been reused since it was tracked
proc_stop_all
if kill -0 "$p" 2>/dev/null; then
	ok "a PID with another start time is left alone"
else
	bad "a PID with another start time was signalled"
fi
kill -KILL "$p" 2>/dev/null
wait "$p" 2>/dev/null

# 9b. a process that outlives its script: its pid file stops it later (if
#     it is still that process) and goes
sleep 600 &
p=$!
proc_pidfile "$p" "$W/d.pid"
proc_stop_pidfile -g 5 "$W/d.pid"
gone "$p" && [ ! -e "$W/d.pid" ] && ok "proc_stop_pidfile stops the process its file names" ||
	bad "proc_stop_pidfile: alive $(kill -0 "$p" 2>/dev/null && echo yes || echo no), file $(ls "$W/d.pid" 2>&1)"
sleep 600 &
p=$!
echo "$p:1" > "$W/e.pid"   # as if the PID had been reused since the file was written
proc_stop_pidfile -g 5 "$W/e.pid"
kill -0 "$p" 2>/dev/null && [ ! -e "$W/e.pid" ] && ok "a pid file naming another process's PID is removed, the process left alone" ||
	bad "proc_stop_pidfile signalled a PID with another start time"
kill -KILL "$p" 2>/dev/null
wait "$p" 2>/dev/null
proc_stop_pidfile "$W/none.pid" && ok "proc_stop_pidfile without a file: 0" || bad "proc_stop_pidfile without a file"

# 10. namespaces and nftables tables are removed on failure (root only)
ns=mrcdproc$$
if ip netns add "$ns" 2>/dev/null; then
	ip netns del "$ns"
	have_nft=0
	nft add table inet "$ns" 2>/dev/null && { nft delete table inet "$ns"; have_nft=1; }
	bash -c '
		set -e
		source "$1/proc.sh"
		ip netns add "$2"; cleanup_netns "$2"
		if [ "$3" = 1 ]; then nft add table inet "$2"; cleanup_nft inet "$2"; fi
		echo made > "$4"
		false' _ "$here" "$ns" "$have_nft" "$W/ns.made"
	rc=$?
	# (made: the child got as far as creating them, so the cleanup had work)
	left=   # stays empty (and fails) if the namespaces cannot be listed
	if nl=$(ip netns list); then left=$(grep -c "^$ns\b" <<<"$nl"); fi
	[ -n "$left" ] && [ "$have_nft" = 1 ] && nft list table inet "$ns" >/dev/null 2>&1 && left=$((left + 1))
	[ "$rc" -ne 0 ] && [ -s "$W/ns.made" ] && [ "$left" = 0 ] &&
		ok "a namespace$([ "$have_nft" = 1 ] && echo " and an nftables table") removed after a failure" ||
		bad "namespace/nft cleanup: rc $rc, $left left"
	ip netns del "$ns" 2>/dev/null
	nft delete table inet "$ns" 2>/dev/null
else
	echo "skip namespaces: cannot create one here"
fi

echo "$pass passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$pass" -gt 0 ]
