#!/bin/sh
# check-mrc-sim-fct.sh - the completion-time distribution and the memory
# figures, for every workload given: in --json each run has fct_ns with n the
# flows (or ranks) that finished, p50 <= p99 <= max, mean <= max, max the
# run's finish time and at least its ideal; the text line "<tp> fct_us"
# carries the same max; memory has QPs and bytes per host and per QP; and
# --progress prints the memory line. Every value is read through simval.sh,
# so a missing one fails.
#
#   check-mrc-sim-fct.sh MRC_SIM SCENARIO...
set -eu

sim=$1
shift
. "$(dirname "$0")/simval.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
[ $# -gt 0 ] || { echo "FAIL: no scenario given" >&2; exit 1; }

for scen in "$@"; do
	name=$(basename "$scen" .yaml)
	"$sim" --scenario "$scen" --transport both --json "$tmp/$name.json" --progress \
		>"$tmp/$name.txt" 2>"$tmp/$name.err"
	for tp in mrc rc; do
		j=$tmp/$name.json
		n=$(run_v "$j" $tp fct_ns.n) && done_=$(run_v "$j" $tp flows_done) &&
			ideal=$(run_v "$j" $tp fct_ns.ideal) && qps=$(run_v "$j" $tp memory.qps) &&
			host=$(run_v "$j" $tp memory.per_host_bytes) && perqp=$(run_v "$j" $tp memory.per_qp_bytes) ||
			{ echo "FAIL $name $tp: a figure is missing" >&2; exit 1; }
		num_check "$name $tp: fct n = flows done, an ideal, QPs and bytes" \
			'n == d && i > 0 && q > 0 && h > 0 && p > 0' n="$n" d="$done_" i="$ideal" q="$qps" h="$host" p="$perqp" ||
			{ echo "FAIL $name $tp: fct n = flows done, an ideal, QPs and bytes" >&2; exit 1; }
		[ "$n" -gt 0 ] || continue
		mean=$(run_v "$j" $tp fct_ns.mean) && p50=$(run_v "$j" $tp fct_ns.p50) &&
			p99=$(run_v "$j" $tp fct_ns.p99) && max=$(run_v "$j" $tp fct_ns.max) &&
			tmax=$(text_v "$tmp/$name.txt" "$tp fct_us" max) ||
			{ echo "FAIL $name $tp: an fct figure is missing" >&2; exit 1; }
		num_check "$name $tp: p50 <= p99 <= max, mean <= max, max >= ideal, text max = JSON max" \
			'p50 <= p99 && p99 <= max && mean <= max && max >= ideal && (tmax * 1000 - max) ^ 2 < 1' \
			p50="$p50" p99="$p99" max="$max" mean="$mean" ideal="$ideal" tmax="$tmax" ||
			{ echo "FAIL $name $tp: p50 <= p99 <= max, mean <= max, max >= ideal, text max = JSON max" >&2; exit 1; }
		fin=$(finish_ns "$j" $tp)
		if [ "$fin" != - ]; then
			num_check "$name $tp: max is the finish time" 'max == fin' max="$max" fin="$fin" ||
				{ echo "FAIL $name $tp: max is the finish time" >&2; exit 1; }
		fi
		grep -q "^mrc-sim: $tp: memory .* KiB per host .* KiB per QP; peak RSS" "$tmp/$name.err" ||
			{ echo "FAIL $name $tp: --progress printed no memory line" >&2; exit 1; }
	done
	echo "ok: $name"
done
