#!/usr/bin/env bash
# demo.sh - the main job: two mrcd daemons joined by four memif planes, an
# application transfer between them (mrc-perf through libmrc-client: RDMA
# WriteImm with a data pattern checked at the receiver), plane 2 blackholed
# silently in the middle of it (the link stays up: only MRC's loss inference
# can see it) and later restored, and a report whose PASS means the failure
# happened and the transfer rode through it.
#
# The transfer's own clock runs the show (scripts/lib/demo_monitor.py): t = 0
# is the first byte placed at b; plane 2 is blackholed at DUR/3 and restored
# at 2*DUR/3; every 100 ms one `counters` request per daemon is appended to a
# samples file. scripts/lib/demo_verdict.py turns the samples into the
# report (goodput per phase, the lowest 100 ms window while blackholed,
# plane 2's EVs retired and restored, retransmissions, EV transitions, verify
# and completion errors), a PNG of goodput over time with the failure shaded,
# and the verdict: FAIL unless every phase has >= 5 samples, the blackhole
# happened on time and lasted >= 0.9 x its plan, no window while blackholed
# is empty, plane 2's EVs left GOOD and came back, and mrc-perf exited 0 with
# no verify or completion error.
#
# Installs what is missing (scripts/setup.sh), builds into build/, runs
# everything in a temporary directory, stops the daemons one after the
# other (docs/operations.md, Known issues) and every other process it
# started. The samples and the PNG stay in build/demo/. Environment:
# DEMO_SECONDS (default 15, at least 6), DEMO_PORT (mrc-perf's TCP bootstrap
# on 127.0.0.1, default 18599), DEMO_KEEP=1 keeps the logs.
set -euo pipefail
# the system python3 first: it sees the Debian python3-* packages setup.sh
# installs (matplotlib), and starts fast (a pyenv shim took seconds)
export PATH="/usr/bin:$PATH"
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
source scripts/lib/proc.sh   # start, wait, stop by PID, cleanup on any exit
blog=$(mktemp /tmp/mrcd-demo-build.XXXXXX)
cleanup_add rm -f "$blog"
run_quiet() { # run_quiet CMD...: show the output only when it fails
	if ! "$@" > "$blog" 2>&1; then
		cat "$blog"; echo "demo: failed: $*"; exit 1
	fi
}
DUR=${DEMO_SECONDS:-15}
PORT=${DEMO_PORT:-18599}
if ! [[ $DUR =~ ^[0-9]+$ ]] || [ "$DUR" -lt 6 ]; then
	echo "demo: DEMO_SECONDS: expected whole seconds >= 6 (each phase needs 5 samples of 100 ms and time to react), got '$DUR'" >&2
	exit 2
fi
echo "== setup and build"
run_quiet bash scripts/setup.sh
if [ -f build/build.ninja ]; then
	run_quiet meson setup --reconfigure build
else
	run_quiet meson setup build
fi
run_quiet ninja -C build
MRCD=$top/build/app/mrcd/mrcd
MRCCTL=$top/build/app/mrcctl/mrcctl
PERF=$top/build/app/mrc-perf/mrc-perf
OUT=$top/build/demo
mkdir -p "$OUT"

# The processes still to stop, in the order they go: the monitor and the
# two mrc-perf ends, then daemon b, then daemon a - one after the other, as
# docs/operations.md advises for a memif pair (stopped in the same instant,
# DPDK's memif PMD can crash). On any exit, before proc.sh's cleanup.
to_stop=()
stop_in_order() {
	local p
	for p in "${to_stop[@]}"; do
		proc_stop "$p" >/dev/null 2>&1 || true
	done
	to_stop=()
}
trap 'rc=$?; stop_in_order; cleanup_run; exit $rc' EXIT
trap 'stop_in_order; _proc_on_signal INT 2' INT
trap 'stop_in_order; _proc_on_signal TERM 15' TERM

T=$(mktemp -d /tmp/mrcd-demo.XXXXXX)
keep_or_remove() { if [ "${DEMO_KEEP:-0}" = 1 ]; then echo "logs kept in $T"; else rm -rf "$T"; fi; }
cleanup_add keep_or_remove

ctl() { "$MRCCTL" -s "$T/$1.sock" "${@:2}"; }
jget() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
links_up() { [ "$(ctl "$1" --json ports | jget 'all(p["link"] == "up" for p in d)')" = True ]; }

bash scripts/memif-pair-configs.sh "$T" "mrcd-demo-$$"

echo "== starting two mrcd daemons, 4 memif planes (10 Gb/s each nominal)"
proc_start pa "$MRCD" -c "$T/a.yaml" > "$T/a.log" 2>&1
proc_wait_for -p "$pa" 60 ctl a status
proc_start pb "$MRCD" -c "$T/b.yaml" > "$T/b.log" 2>&1
to_stop=("$pb" "$pa")
proc_wait_for -p "$pb" 60 ctl b status
proc_wait_for 30 links_up a
proc_wait_for 30 links_up b
ctl a ports | cut -c1-80

echo
echo "== mrc-perf a -> b: ${DUR} s of verified RDMA WriteImm, 64 KiB messages, window 16"
echo "   plane 2 blackholed at t=$(python3 -c "print('%.2f' % ($DUR / 3))") s, restored at t=$(python3 -c "print('%.2f' % (2 * $DUR / 3))") s; samples every 100 ms"
samples=$T/samples.jsonl
: > "$samples"
# the monitor first: it is connected and sampling before the first byte
proc_start mon python3 scripts/lib/demo_monitor.py "$T" "$DUR" "$samples"
to_stop=("$mon" "$pb" "$pa")
proc_wait_for -p "$mon" 60 test -e "$T/monitor.ready"
proc_start srv "$PERF" -s "$T/b.sock" --server --port "$PORT" --timeout $((DUR + 60)) > "$T/srv.out" 2>&1
proc_start cl "$PERF" -s "$T/a.sock" --client 127.0.0.1 --port "$PORT" --verify --duration "$DUR" \
	--size 64K --window 16 --stats 0 --timeout $((DUR + 60)) --json > "$T/perf.json" 2> "$T/perf.err"
to_stop=("$mon" "$cl" "$srv" "$pb" "$pa")
echo "$cl" > "$T/client.pid"
rc=0 src=0 mrc=0
wait "$cl" || rc=$?
wait "$srv" || src=$?
wait "$mon" || mrc=$?
to_stop=("$pb" "$pa")
[ "$mrc" -eq 0 ] || echo "   the monitor exited $mrc"
python3 scripts/lib/demo_verdict.py perf "$samples" "$rc" "$src" "$T/perf.json"
if [ "$rc" -ne 0 ]; then
	echo "   mrc-perf client exited $rc:"
	tail -5 "$T/perf.err" | sed 's/^/     /'
fi

echo
echo "== stopping daemon b, then daemon a"
for n in b a; do
	if [ "$n" = b ]; then p=$pb; else p=$pa; fi
	to_stop=("${to_stop[@]:1}")
	drc=0
	proc_stop "$p" || drc=$?
	echo "   mrcd $n: exit $drc"
	grep -h "Error" "$T/$n.log" | head -3 | sed 's/^/     /' || true
done

echo
echo "== report"
cp "$samples" "$OUT/samples.jsonl"
report=0
python3 scripts/lib/demo_verdict.py report "$OUT/samples.jsonl" --png "$OUT/goodput.png" || report=$?
echo "   samples: $OUT/samples.jsonl"
exit "$report"
