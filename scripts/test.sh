#!/usr/bin/env bash
# test.sh - the whole test suite, from a fresh Debian machine:
#   1. scripts/setup.sh installs packages and reserves hugepages;
#   2. build/      gcc, -Werror: unit, sim and integration suites;
#   3. build-san/  clang with ASan+UBSan and libFuzzer: unit and sim suites
#                  again under the sanitizers, then every fuzz target for a
#                  bounded time (FUZZ_SECONDS each, default 30).
# Ends with one "N passed, N failed" line over every suite; exits non-zero on
# any failure. Set SKIP_SETUP=1 to skip step 1 on a prepared machine.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# The system's python3 first: setup.sh installs the Python modules the checks
# use as Debian packages, which only /usr/bin/python3 sees, and a version
# manager's shim (pyenv) costs a fork chain per call that checks make by the
# thousand.
export PATH="/usr/bin:$PATH"
cd "$top"

if [ "${SKIP_SETUP:-0}" != 1 ]; then
	bash scripts/setup.sh || { echo "setup failed"; echo "0 passed, 1 failed"; exit 1; }
fi

FUZZ_SECONDS=${FUZZ_SECONDS:-30}
# Per-test timeouts are set for an idle 2-CPU machine; a CI host shared with
# other jobs runs slower, so they are stretched (never the fuzzers' budget).
TIMEOUT_MULT=${TIMEOUT_MULT:-3}
total_ok=0
total_fail=0
status=0
logdir=$(mktemp -d "${TMPDIR:-/tmp}/mrcd-test.XXXXXX")
trap 'rm -rf "$logdir"' EXIT

# configure DIR ARGS...: set up a build directory, or reconfigure it.
configure() {
	local dir=$1
	shift
	if [ -f "$dir/build.ninja" ]; then
		meson setup --reconfigure "$dir" "$@" >/dev/null
	else
		meson setup "$dir" "$@" >/dev/null
	fi
}

# run_suites NAME DIR MESON-TEST-ARGS...: run tests, add up meson's summary.
run_suites() {
	local name=$1 dir=$2
	shift 2
	local log="$logdir/$name.log"
	echo "== $name: meson test -C $dir $*"
	meson test -C "$dir" --print-errorlogs "$@" 2>&1 | tee "$log"
	local rc=${PIPESTATUS[0]}
	local ok fail to
	ok=$(awk '/^Ok:/{print $2}' "$log" | tail -1)
	fail=$(awk '/^Fail:/{print $2}' "$log" | tail -1)
	to=$(awk '/^Timeout:/{print $2}' "$log" | tail -1)
	if [ -z "$ok" ] || [ -z "$fail" ]; then
		# no summary to count from: that is a failure, not "0 failed"
		echo "== $name: no 'Ok:'/'Fail:' summary from meson test"
		total_fail=$((total_fail + 1))
		status=1
		return
	fi
	to=${to:-0}
	total_ok=$((total_ok + ok))
	total_fail=$((total_fail + fail + to))
	if [ "$rc" -ne 0 ] && [ $((fail + to)) -eq 0 ]; then
		# meson itself failed (e.g. "no tests"), count it once
		total_fail=$((total_fail + 1))
	fi
	[ "$rc" -eq 0 ] || status=1
}

build() {
	local dir=$1
	if ! ninja -C "$dir" >"$logdir/ninja-$(basename "$dir").log" 2>&1; then
		cat "$logdir/ninja-$(basename "$dir").log"
		echo "build of $dir failed"
		total_fail=$((total_fail + 1))
		status=1
		return 1
	fi
}

# 1. gcc build: unit, sim, integration
if configure build -Dwerror=true -Ddeveloper_mode=enabled && build build; then
	run_suites gcc build --no-suite fuzz --timeout-multiplier "$TIMEOUT_MULT"
else
	total_fail=$((total_fail + 1)); status=1
fi

# 2. clang + ASan/UBSan: unit and sim under the sanitizers, then the fuzzers
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
if CC=clang configure build-san -Dwerror=true -Ddeveloper_mode=enabled \
	-Db_sanitize=address,undefined -Db_lundef=false \
	-Dc_args=-fno-sanitize-recover=all -Ddpdk=disabled \
	-Dfuzz=enabled -Dfuzz_seconds="$FUZZ_SECONDS" && build build-san; then
	run_suites sanitizers build-san --suite unit --suite sim --timeout-multiplier "$TIMEOUT_MULT"
	run_suites fuzz build-san --suite fuzz --num-processes 2
else
	total_fail=$((total_fail + 1)); status=1
fi

echo "$total_ok passed, $total_fail failed"
exit "$status"
