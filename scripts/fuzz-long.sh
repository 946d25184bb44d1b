#!/usr/bin/env bash
# fuzz-long.sh - every fuzz target of a build, one after the other, for at
# least N executions each (default 10 M) or for a given time each, and a
# table: executions, time, executions/s, coverage (libFuzzer's cov and ft at
# the end), the corpus it grew, crashes. Exits non-zero on any crash, leak,
# timeout or out-of-memory report, and on a target that did not run its
# executions (or did not run at all).
#
#   scripts/fuzz-long.sh [-b BUILD_DIR] [-n EXECS | -t SECONDS] [TARGET...]
#
# BUILD_DIR (default build-san) is a clang build with -Dfuzz=enabled (the one
# scripts/test.sh makes). The targets, their seed corpora and extra seed
# directories are read from the build's fuzz suite (meson introspect), so a
# target registered there is never left out; TARGET names (fuzz_frame, ...)
# pick some. Inputs grow in a scratch corpus, never in the committed one;
# reproducers are kept in BUILD_DIR/fuzz-long/. Long: run it under the heavy
# lock (flock /tmp/mrcd-heavy.lock), and alone.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
source "$top/scripts/lib/proc.sh"
source "$top/scripts/lib/num.sh"

build=$top/build-san
execs=10000000
secs=
usage() { echo "usage: fuzz-long.sh [-b BUILD_DIR] [-n EXECS | -t SECONDS] [TARGET...]" >&2; exit 2; }
while getopts b:n:t: o; do
	case $o in
	b) build=$OPTARG ;;
	n) execs=$OPTARG ;;
	t) secs=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[[ $execs =~ ^[1-9][0-9]*$ ]] || usage
[ -z "$secs" ] || [[ $secs =~ ^[1-9][0-9]*$ ]] || usage
[ -f "$build/build.ninja" ] || { echo "fuzz-long.sh: no build in $build (scripts/test.sh makes build-san)" >&2; exit 2; }
build=$(cd "$build" && pwd)

# name exe seed-dir... per line, from the fuzz suite's registered commands
list=$(meson introspect "$build" --tests | python3 -c '
import json, os, sys
for t in json.load(sys.stdin):
    if any(s.split(":")[-1] == "fuzz" for s in t["suite"]):
        c = t["cmd"]   # run-fuzz.sh BIN SEEDS SECONDS [SEED_DIR...]; BIN from the build dir
        print("\t".join([t["name"], os.path.join(sys.argv[1], c[1]), c[2]] + c[4:]))
' "$build") || { echo "fuzz-long.sh: meson introspect failed" >&2; exit 2; }
[ -n "$list" ] || { echo "fuzz-long.sh: $build has no fuzz suite (configure with -Dfuzz=enabled)" >&2; exit 1; }
if [ $# -gt 0 ]; then
	want=" $* "
	list=$(printf '%s\n' "$list" | while IFS=$'\t' read -r n rest; do
		[[ $want == *" $n "* ]] && printf '%s\t%s\n' "$n" "$rest"; done)
	for n in "$@"; do
		printf '%s\n' "$list" | cut -f1 | grep -qx "$n" || { echo "fuzz-long.sh: no fuzz target $n" >&2; exit 2; }
	done
fi
ninja -C "$build" $(printf '%s\n' "$list" | cut -f2 | sed "s#^$build/##") >/dev/null ||
	{ echo "fuzz-long.sh: building the targets failed" >&2; exit 1; }

out=$build/fuzz-long
mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/tmp}/mrcd-fuzz-long.XXXXXX")
cleanup_dir "$work"
if [ -n "$secs" ]; then
	budget=(-max_total_time="$secs") goal="$secs s each"
else
	budget=(-runs="$execs") goal="$execs executions each"
fi
echo "== fuzz-long: $(printf '%s\n' "$list" | wc -l) targets, $goal, $(date -u '+%F %H:%M UTC'), $(nproc) CPUs, $(basename "$build")"
rows=()
status=0
while IFS=$'\t' read -r name exe seeds extra; do
	extra_dirs=()
	[ -z "$extra" ] || IFS=$'\t' read -ra extra_dirs <<<"$extra"
	rm -rf "$work/corpus" && mkdir -p "$work/corpus"
	rm -f "$out/$name-"*
	t0=$EPOCHREALTIME
	proc_start pid "$exe" "${budget[@]}" -rss_limit_mb=2048 -timeout=25 -print_final_stats=1 \
		-artifact_prefix="$out/$name-" "$work/corpus" "$seeds" "${extra_dirs[@]}" >"$out/$name.log" 2>&1
	wait "$pid"
	rc=$?
	dt=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
	n=$(sed -n 's/^stat::number_of_executed_units: *\([0-9]*\)$/\1/p' "$out/$name.log")
	last=$(grep -E '^#[0-9]+[[:space:]]+(DONE|NEW|REDUCE|pulse|INITED)' "$out/$name.log" | tail -1)
	cov=$(sed -n 's/.* cov: \([0-9]*\) .*/\1/p' <<<"$last")
	ft=$(sed -n 's/.* ft: \([0-9]*\) .*/\1/p' <<<"$last")
	corp=$(sed -n 's/.* corp: \([0-9]*\/[0-9]*[kKMG]*b\) .*/\1/p' <<<"$last")
	crashes=$(find "$out" -maxdepth 1 -name "$name-*" | wc -l)
	verdict=ok
	if [ "$rc" -ne 0 ] || [ "$crashes" -gt 0 ]; then
		verdict="FAIL (exit $rc, see $out/$name.log)"
	elif ! is_num "$n" || [ "$n" -eq 0 ]; then
		verdict="FAIL (did not run: no execution count)"
	elif [ -z "$secs" ] && [ "$n" -lt "$execs" ]; then
		verdict="FAIL (ran $n of $execs)"
	fi
	[ "$verdict" = ok ] || status=1
	rate=$(awk -v n="${n:-0}" -v t="$dt" 'BEGIN { printf "%.0f", (t > 0 ? n / t : 0) }')
	rows+=("$(printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |' "$name" "${n:-?}" "$dt" "$rate" \
		"${cov:-?}" "${ft:-?}" "${corp:-?}" "$crashes" "$verdict")")
	echo "${rows[-1]}"
done <<<"$list"
echo
echo "| target | executions | seconds | exec/s | cov | ft | corpus (units/bytes) | crashes | result |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---|"
printf '%s\n' "${rows[@]}"
[ "$status" -eq 0 ] && echo "fuzz-long: every target ran clean" || echo "fuzz-long: FAILED"
exit "$status"
