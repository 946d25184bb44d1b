#!/usr/bin/env bash
# valgrind.sh - mrcd under valgrind memcheck: start with a memif pair config
# (daemon a alone: its ports stay down), serve control requests, stop on
# SIGTERM; no definite leak and no memory error apart from DPDK's own
# start-up allocations (dpdk.supp).
source "$(dirname "$0")/lib.sh"
if ! command -v valgrind >/dev/null; then
	echo "no valgrind: skipping"; echo "0 passed, 0 failed"; exit 77
fi
make_configs
proc_start pid valgrind -q --leak-check=full --errors-for-leak-kinds=definite \
	--suppressions="$TOP/test/integration/dpdk.supp" --error-exitcode=99 \
	"$MRCD" -c "$T/a.yaml" --seed 1 > "$T/v.log" 2>&1
check "mrcd answers under valgrind" wait_for -p "$pid" 120 ctl a status
for c in status ports lcores qps counters faults probes version; do
	ctl a "$c" >/dev/null 2>&1 || bad "mrcctl $c under valgrind"
done
ctl a fault-set port=plane1 drop_pct=5 >/dev/null
ctl a fault-clear >/dev/null
proc_stop -g 120 "$pid"
rc=$?
check "exit code 0, no valgrind errors (got $rc)" test "$rc" -eq 0
[ "$rc" -eq 0 ] || tail -40 "$T/v.log"
finish
