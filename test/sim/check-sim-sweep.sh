#!/bin/sh
# check-sim-sweep.sh - scripts/sim-sweep.sh runs a scenario once per value
# and prints a row each, MRC and RC side by side; a value mrc-sim refuses
# gives an error row, not a failed sweep. Every figure a verdict reads must
# be a number (scripts/lib/num.sh), so a blank or moved column fails.
#   check-sim-sweep.sh MRC_SIM SWEEP_SCRIPT SCENARIO_DIR
set -eu
sim=$1 sweep=$2 dir=$3
. "$(dirname "$0")/simval.sh"
out=$(sh "$sweep" -b "$sim" "$dir/allreduce-8.yaml" bytes 262144 1048576 0)
echo "$out"
[ "$(echo "$out" | wc -l)" -eq 4 ] || { echo "FAIL: 1 header + 3 rows expected" >&2; exit 1; }
col() { echo "$out" | awk -v r="$1" -v c="$2" 'NR == r { print $c }'; }
for r in 2 3; do
	for c in 2 3 4 5; do
		is_num "$(col $r $c)" || { echo "FAIL: row $r column $c is '$(col $r $c)', not a number" >&2; exit 1; }
	done
done
num_cmp "$(col 3 2)" -gt "$(col 2 2)" || { echo "FAIL: 4x the bytes did not take longer" >&2; exit 1; }
echo "$out" | awk 'NR == 4' | grep -q "error:" || { echo "FAIL: bytes 0 not reported as an error" >&2; exit 1; }
echo "ok: sweep"
