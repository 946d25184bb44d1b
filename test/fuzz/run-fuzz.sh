#!/usr/bin/env bash
# run-fuzz.sh BIN SEED_CORPUS SECONDS - run one libFuzzer target for a bounded
# time. New inputs go to a scratch directory, never into the committed seed
# corpus; a crash leaves its reproducer in the build directory and fails.
set -u
bin=$1 seeds=$2 secs=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/mrcd-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
name=$(basename "$bin")
mkdir -p "$work/corpus"
"$bin" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
	-artifact_prefix="$(pwd)/$name-" "$work/corpus" "$seeds" 2>&1 | tail -n 25
rc=${PIPESTATUS[0]}
if [ "$rc" -ne 0 ]; then
	echo "$name: FAILED (exit $rc); reproducer: $(ls "$(pwd)/$name-"* 2>/dev/null | head -1)"
fi
exit "$rc"
