#!/bin/sh
# check-mrc-sim.sh - runs one mrc-sim scenario with --transport both and a
# fixed seed, and asserts: every MRC flow completed; running it twice gives
# byte-identical output (table and JSON); and, given a healthy baseline
# scenario, MRC finishes within MAX_RATIO (default 1.5) x the baseline's
# completion time; given VICTIM_MIN (incast), the MRC victim's goodput is
# >= VICTIM_MIN x its fair share. The figures come from --json (simval.sh):
# a missing key or a value that is not a number fails the check.
#
#   check-mrc-sim.sh MRC_SIM SCENARIO_DIR NAME [BASELINE_NAME [VICTIM_MIN [MAX_RATIO]]]
set -eu

sim=$1 dir=$2 name=$3 base=${4:-} vmin=${5:-} maxr=${6:-1.5}
seed=1
. "$(dirname "$0")/simval.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

run() { # scenario-name tag
	"$sim" --scenario "$dir/$1.yaml" --seed $seed --transport both --json "$tmp/$2.json" >"$tmp/$2.txt"
}

# mrc finish time (ns) of a run's JSON, "-" when a flow is unfinished, or
# nothing (and a message) when the JSON lacks it
mrc_finish() { finish_ns "$1" mrc; }

run "$name" a
run "$name" b
cat "$tmp/a.txt"
if ! cmp -s "$tmp/a.txt" "$tmp/b.txt" || ! cmp -s "$tmp/a.json" "$tmp/b.json"; then
	echo "FAIL $name: two runs with --seed $seed differ" >&2
	diff "$tmp/a.txt" "$tmp/b.txt" >&2 || true
	exit 1
fi
fin=$(mrc_finish "$tmp/a.json") || fin=
if [ -z "$fin" ] || [ "$fin" = "-" ]; then
	echo "FAIL $name: MRC flows unfinished (replay: --seed $seed)" >&2
	exit 1
fi
if [ -n "$base" ]; then
	run "$base" h
	hfin=$(mrc_finish "$tmp/h.json") || hfin=
	if [ -z "$hfin" ] || [ "$hfin" = "-" ]; then
		echo "FAIL $base: MRC flows unfinished (replay: --seed $seed)" >&2
		exit 1
	fi
	if ! num_check "$name: MRC within $maxr x $base" 'f <= m * h' f="$fin" h="$hfin" m="$maxr"; then
		echo "FAIL $name: MRC took $fin ns, more than $maxr x $hfin ns of $base (replay: --seed $seed)" >&2
		exit 1
	fi
	echo "ok: MRC $fin ns <= $maxr x $hfin ns ($base)"
fi
if [ -n "$vmin" ]; then
	ratio=$(run_v "$tmp/a.json" mrc victim_fair_ratio) || ratio=
	if ! num_check "$name: MRC victim share" 'r >= m' r="$ratio" m="$vmin"; then
		echo "FAIL $name: MRC victim got ${ratio:-?} of its fair share, less than $vmin (replay: --seed $seed)" >&2
		exit 1
	fi
	echo "ok: MRC victim $ratio >= $vmin of its fair share"
fi
echo "ok: $name"
