# lib.sh - helpers for the integration tests (sourced). Every test runs in
# its own temporary directory, starts daemons with generated configs, stops
# every process it started by PID in an EXIT trap, and waits on conditions
# with deadlines (never a bare sleep to synchronise).
set -uo pipefail

MRCD=${MRCD:?path to mrcd}
MRCCTL=${MRCCTL:?path to mrcctl}
TOP=${TOP:?source root}
T=$(mktemp -d /tmp/mrcd-it.XXXXXX)
PIDS=()
PASS=0
FAIL=0

cleanup() {
	for p in "${PIDS[@]}"; do
		kill -TERM "$p" 2>/dev/null
	done
	for p in "${PIDS[@]}"; do
		for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$p" 2>/dev/null
	done
	rm -rf "$T"
	rm -rf /var/run/dpdk/mrcd-it-"$(basename "$T")"-* 2>/dev/null
}
trap cleanup EXIT

ok() { echo "ok   $*"; PASS=$((PASS + 1)); }
bad() { echo "FAIL $*"; FAIL=$((FAIL + 1)); }
check() { # check "what" cmd...
	local what=$1; shift
	if "$@"; then ok "$what"; else bad "$what"; fi
}
finish() {
	echo "$PASS passed, $FAIL failed"
	[ "$FAIL" -eq 0 ]
}

# wait_for DEADLINE_S CMD...: run CMD every 50 ms until it succeeds.
wait_for() {
	local deadline=$(( $(date +%s%N) + $1 * 1000000000 ))
	shift
	until "$@" >/dev/null 2>&1; do
		[ "$(date +%s%N)" -lt "$deadline" ] || return 1
		sleep 0.05
	done
}

# jq-free JSON access: json FILE-OR-- PYTHON-EXPR (d is the document)
jget() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }

ctl() { "$MRCCTL" -s "$T/$1.sock" "${@:2}"; }
ctlj() { "$MRCCTL" -s "$T/$1.sock" --json "${@:2}"; }

# make_configs: two daemons a (memif servers) and b (clients), 4 planes,
# configs in $T. b has no static neighbours unless B_STATIC=1, so it
# resolves a by ARP.
make_configs() {
	bash "$TOP/scripts/memif-pair-configs.sh" "$T" "mrcd-it-$(basename "$T")"
	if [ "${B_STATIC:-0}" != 1 ]; then
		python3 - "$T/b.yaml" <<'PY'
import re, sys
p = sys.argv[1]
s = open(p).read()
s = re.sub(r"neighbours:\n(  - .*\n)+", "", s)
open(p, "w").write(s)
PY
	fi
}

start_daemon() { # start_daemon NAME [extra mrcd args]
	local n=$1
	shift
	"$MRCD" -c "$T/$n.yaml" --seed 0x5eed "$@" > "$T/$n.log" 2>&1 &
	local pid=$!
	PIDS+=("$pid")
	eval "PID_$n=$pid"
	wait_for 60 ctl "$n" status || { echo "daemon $n did not start:"; tail -20 "$T/$n.log"; return 1; }
}

links_up() { # links_up NAME: every port link up
	[ "$(ctlj "$1" ports | jget 'all(p["link"] == "up" for p in d)')" = True ]
}

start_pair() {
	make_configs
	start_daemon a || return 1
	start_daemon b || return 1
	wait_for 30 links_up a && wait_for 30 links_up b
}

stop_daemon() { # stop_daemon NAME: SIGTERM, wait, return its exit code
	local pid
	eval "pid=\$PID_$1"
	kill -TERM "$pid" 2>/dev/null
	wait "$pid"
}
