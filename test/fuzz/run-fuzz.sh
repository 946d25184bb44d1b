#!/usr/bin/env bash
# run-fuzz.sh BIN SEED_CORPUS SECONDS [SEED_DIR...] - run one libFuzzer target
# for a bounded time. New inputs go to a scratch directory, never into the
# committed seed corpus (nor the further seed directories, read in place); a
# crash leaves its reproducer in the build directory and fails. So does a
# run that had nothing to start from or did nothing: a missing or empty seed
# corpus, or no execution counted in libFuzzer's final statistics.
set -u
bin=$1 seeds=$2 secs=$3
shift 3
name=$(basename "$bin")
if [ -z "$(ls -A "$seeds" 2>/dev/null)" ]; then
	echo "$name: FAILED: no seed corpus in $seeds"
	exit 1
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/mrcd-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus"
"$bin" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
	-artifact_prefix="$(pwd)/$name-" "$work/corpus" "$seeds" "$@" >"$work/log" 2>&1
rc=$?
tail -n 25 "$work/log"
if [ "$rc" -ne 0 ]; then
	echo "$name: FAILED (exit $rc); reproducer: $(ls "$(pwd)/$name-"* 2>/dev/null | head -1)"
	exit "$rc"
fi
execs=$(sed -n 's/^stat::number_of_executed_units: *\([0-9]*\)$/\1/p' "$work/log")
if [ -z "$execs" ] || [ "$execs" -eq 0 ]; then
	echo "$name: FAILED: no executions counted (stat::number_of_executed_units '${execs}')"
	exit 1
fi
