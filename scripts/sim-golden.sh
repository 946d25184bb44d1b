#!/usr/bin/env bash
# sim-golden.sh - record every shipped mrc-sim scenario's output (text table,
# --json and --csv, seeds 1 and 2, both transports) into a directory, or
# compare a fresh recording with an earlier one. A refactor that must not
# change behaviour records before, records after and compares: any byte that
# differs is printed and the script exits 1.
#
#   sim-golden.sh record MRC_SIM OUT_DIR
#   sim-golden.sh compare MRC_SIM GOLDEN_DIR
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)

usage() { echo "usage: $0 record|compare MRC_SIM DIR" >&2; exit 2; }
[ $# -eq 3 ] || usage
mode=$1 sim=$(realpath "$2") dir=$(realpath -m "$3")
[ -x "$sim" ] || { echo "sim-golden: $sim is not an executable" >&2; exit 2; }

record() {
	local out=$1 n=0
	mkdir -p "$out"
	# relative scenario paths: the text output names the file, and must
	# read the same from any checkout
	cd "$top"
	for f in test/sim/scenarios/*.yaml; do
		local s
		s=$(basename "$f" .yaml)
		for seed in 1 2; do
			"$sim" --scenario "$f" --seed "$seed" --transport both \
				--json "$out/$s.$seed.json" --csv "$out/$s.$seed.csv" \
				>"$out/$s.$seed.txt" 2>&1 || echo "exit $?" >>"$out/$s.$seed.txt"
			n=$((n + 1))
		done
	done
	[ "$n" -gt 0 ] || { echo "sim-golden: no scenarios found" >&2; exit 1; }
	echo "sim-golden: $n runs recorded in $out"
}

case $mode in
record) record "$dir" ;;
compare)
	[ -d "$dir" ] && [ -n "$(ls -A "$dir")" ] || { echo "sim-golden: $dir is empty" >&2; exit 2; }
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	record "$tmp" >/dev/null
	if diff -r "$dir" "$tmp"; then
		echo "sim-golden: $(ls "$tmp" | wc -l) files byte-identical to $dir"
	else
		echo "sim-golden: outputs differ from $dir" >&2
		exit 1
	fi
	;;
*) usage ;;
esac
