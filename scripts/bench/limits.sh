#!/usr/bin/env bash
# limits.sh - the design target of docs/configuration.md "Totals": QPs per
# daemon and clients at once, each moving verified bytes, with the daemon's
# RSS per QP and per client. Runs phases 3 and 4 of
# test/integration/limits.sh (two daemons over four memif planes) at bench
# size: BENCH_CLIENTS clients at once (default 64, one QP each) and
# BENCH_QPS QPs on each daemon (default 10,000, as BENCH_PAIRS mrc-perf
# pairs of BENCH_QPS/BENCH_PAIRS QPs; default 40 pairs of 250), every QP
# moving BENCH_ITERS (default 8) verified 4 KiB Writes.
# Usage: bash scripts/bench/limits.sh [BUILD_DIR]   (default: build)
# Run it on an otherwise quiet host: the integration tests' lock is taken.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
B=${1:-$top/build}
export MRCD=$B/app/mrcd/mrcd MRCCTL=$B/app/mrcctl/mrcctl MRC_PERF=$B/app/mrc-perf/mrc-perf TOP=$top
for x in "$MRCD" "$MRCCTL" "$MRC_PERF"; do
	[ -x "$x" ] || { echo "limits.sh: $x missing: build first (ninja -C $B)"; exit 1; }
done
qps=${BENCH_QPS:-10000}
pairs=${BENCH_PAIRS:-40}
max=16384
[ "$qps" -gt "$max" ] && max=65536
echo "== QPs and clients at scale ($(date -u '+%F %H:%M UTC'), $(nproc) CPUs): $qps QPs in $pairs clients, ${BENCH_CLIENTS:-64} clients"
LIMITS_PHASES=34 LIMITS_QPS=$qps LIMITS_PAIRS=$pairs LIMITS_CLIENTS=${BENCH_CLIENTS:-64} \
	LIMITS_ITERS=${BENCH_ITERS:-8} LIMITS_MAX_QPS=$max \
	flock /tmp/mrcd-integ.lock bash "$top/test/integration/limits.sh"
