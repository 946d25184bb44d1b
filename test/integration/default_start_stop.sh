#!/usr/bin/env bash
# default_start_stop.sh - mrcd with no config (the embedded default: one
# net_null port) starts, answers on its control socket, and on SIGTERM exits
# 0 leaving no socket file and no DPDK runtime directory.
source "$(dirname "$0")/lib.sh"
sock=/run/mrcd/mrcd.sock
if [ -S "$sock" ] && "$MRCCTL" -s "$sock" status >/dev/null 2>&1; then
	echo "a daemon already serves $sock: skipping"; echo "0 passed, 0 failed"; exit 77
fi
proc_start pid "$MRCD" > "$T/d.log" 2>&1
check "embedded default answers status" wait_for -p "$pid" 60 "$MRCCTL" -s "$sock" status
check "version reports protocol 1" test "$("$MRCCTL" -s "$sock" --json version | jget 'd["protocol"]')" = 1
check "one port, net_null" test "$("$MRCCTL" -s "$sock" --json ports | jget 'len(d)')" = 1
# speed_mbps is the configured speed (speed_gbps, default 100: what NSCC
# counts), not the device's report (net_null says 10 Gbit/s), which is
# link_speed_mbps
"$MRCCTL" -s "$sock" --json ports > "$T/ports.json"
check "speed_mbps is the configured 100000" test "$(jget 'd[0]["speed_mbps"]' < "$T/ports.json")" = 100000
check "link_speed_mbps is net_null's own 10000" test "$(jget 'd[0]["link_speed_mbps"]' < "$T/ports.json")" = 10000
# the memory mode leaves dpdk-dumpcap nothing to attach to, and the log says so
check "logs that pdump is not available with --no-huge" \
	grep -q 'pdump not available: --no-huge leaves no memory' "$T/d.log"
# error reasons: the daemon's reason does not name the command, mrcctl does,
# once (was "ev_deny: ev_deny: Invalid argument")
reason() { # reason EXPECTED CMD ARGS...: mrcctl exits 1 with exactly EXPECTED on stderr
	local want=$1 got rc
	shift
	got=$("$MRCCTL" -s "$sock" "$@" 2>&1 >/dev/null); rc=$?
	[ "$rc" -eq 1 ] && [ "$got" = "$want" ] || { echo "  exit $rc, got: $got"; return 1; }
}
check "reg_mr without a session: one 'reg_mr:'" \
	reason "mrcctl: reg_mr: needs a client session (attach first) (EPERM)" reg_mr ofs=0 len=64 access=0
check "attach with a foreign ABI: one 'attach:'" \
	reason "mrcctl: attach: client ABI 999, this daemon speaks ABI 2: rebuild the client against this mrcd's libmrc-client (EPROTO)" attach abi=999
check "selftest_run of no selftest: one 'selftest_run:'" \
	reason "mrcctl: selftest_run: no such selftest (ENOENT)" selftest_run id=77
check "ev_deny of no QP names the QPN" \
	reason "mrcctl: ev_deny: args.qpn: no QP 77 (ENOENT)" ev-deny qpn=77 ev=1
# a QP with EVs: a selftest's receiving side
"$MRCCTL" -s "$sock" --json selftest_listen region_bytes=1048576 detach=true > "$T/listen.json"
qpn=$("$MRCCTL" -s "$sock" --json qps | jget 'd[0]["qpn"]')
check "ev_deny of an EV the QP lacks: args.ev, once (was ev_deny: ev_deny: Invalid argument)" \
	reason "mrcctl: ev_deny: args.ev: QP $qpn has no EV 134217727 (EINVAL)" ev-deny qpn="$qpn" ev=0x7ffffff
check "selftest_stop frees the listener" \
	"$MRCCTL" -s "$sock" selftest_stop id="$(jget 'd["id"]' < "$T/listen.json")"
# DPDK telemetry: dpdk-telemetry.py reaches mrcd's /mrcd/... commands
if command -v dpdk-telemetry.py >/dev/null; then
	out=$(printf '/mrcd/status\n/mrcd/ports\n' | timeout 20 dpdk-telemetry.py -f mrcd 2>&1)
	echo "$out" | grep -q '"/mrcd/status": {"pid": '"$pid"
	check "telemetry /mrcd/status answers with our pid" test $? -eq 0
	echo "$out" | grep -q '"p0_rx_pkts"'
	check "telemetry /mrcd/ports flattens the port counters" test $? -eq 0
fi
proc_stop -g 30 "$pid"
rc=$?
check "exit code 0 after SIGTERM (got $rc)" test "$rc" -eq 0
check "socket file removed" test ! -e "$sock"
check "DPDK runtime dir removed" test ! -e /var/run/dpdk/mrcd
grep -q "mrcd: stopped" "$T/d.log"
check "logged a clean stop" test $? -eq 0
finish
