#!/bin/sh
# check-sim-sweep.sh - scripts/sim-sweep.sh runs a scenario once per value
# and prints a row each, MRC and RC side by side; a value mrc-sim refuses
# gives an error row, not a failed sweep.
#   check-sim-sweep.sh MRC_SIM SWEEP_SCRIPT SCENARIO_DIR
set -eu
sim=$1 sweep=$2 dir=$3
out=$(sh "$sweep" -b "$sim" "$dir/allreduce-8.yaml" bytes 262144 1048576 0)
echo "$out"
[ "$(echo "$out" | wc -l)" -eq 4 ] || { echo "FAIL: 1 header + 3 rows expected" >&2; exit 1; }
echo "$out" | awk 'NR == 2 || NR == 3 { if ($2 !~ /^[0-9.]+$/ || $4 !~ /^[0-9.]+$/) exit 1 }' ||
	{ echo "FAIL: a row without both finish times" >&2; exit 1; }
a=$(echo "$out" | awk 'NR == 2 { print $2 }') b=$(echo "$out" | awk 'NR == 3 { print $2 }')
awk -v a="$a" -v b="$b" 'BEGIN { exit !(b > a) }' || { echo "FAIL: 4x the bytes did not take longer" >&2; exit 1; }
echo "$out" | awk 'NR == 4' | grep -q "error:" || { echo "FAIL: bytes 0 not reported as an error" >&2; exit 1; }
echo "ok: sweep"
