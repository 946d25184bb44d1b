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
