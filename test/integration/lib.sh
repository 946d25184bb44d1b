# lib.sh - helpers for the integration tests (sourced). Every test runs in
# its own temporary directory, starts daemons with generated configs, stops
# every process it started by PID when it exits (scripts/lib/proc.sh: SIGTERM,
# then SIGKILL), and waits on conditions with deadlines (never a bare sleep
# to synchronise). The process and cleanup helpers live in proc.sh; the names
# below (cleanup, wait_for, stop_daemon...) are thin wrappers over it: a
# test starts every process with proc_start (or proc_track), nothing else.
set -uo pipefail

MRCD=${MRCD:?path to mrcd}
MRCCTL=${MRCCTL:?path to mrcctl}
TOP=${TOP:?source root}
source "$TOP/scripts/lib/proc.sh"
source "$TOP/scripts/lib/num.sh"   # num_cmp, num_sum: verdicts that fail on an empty value
T=$(mktemp -d /tmp/mrcd-it.XXXXXX)
PASS=0
FAIL=0

_it_dpdk_dirs() { rm -rf /var/run/dpdk/mrcd-it-"$(basename "$T")"-* 2>/dev/null; }
cleanup_add _it_dpdk_dirs
cleanup_dir "$T"
# cleanup: everything registered so far (a test that sets its own EXIT trap
# calls it; the one proc.sh installs does anyway)
cleanup() { cleanup_run; }

ok() { echo "ok   $*"; PASS=$((PASS + 1)); }
bad() { echo "FAIL $*"; FAIL=$((FAIL + 1)); }
check() { # check "what" cmd...
	local what=$1; shift
	if "$@"; then ok "$what"; else bad "$what"; fi
}
finish() { # a test that checked nothing has not passed either
	echo "$PASS passed, $FAIL failed"
	[ $((PASS + FAIL)) -gt 0 ] || { echo "FAIL no check ran"; return 1; }
	[ "$FAIL" -eq 0 ]
}

# wait_for SECONDS CMD...: run CMD every 50 ms until it succeeds; 1 (and
# a message on stderr) at the deadline. (proc.sh's proc_wait_for)
wait_for() { proc_wait_for "$@"; }

# jq-free JSON access: json FILE-OR-- PYTHON-EXPR (d is the document)
jget() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }

# free_ports N: N TCP ports free on 127.0.0.1 now (the kernel's choice), on one line
free_ports() {
	python3 -c '
import socket, sys
ss = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in ss: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in ss])' "$1"
}

# prom_py: a python3 with python3-prometheus-client (Debian's /usr/bin/python3
# may sit behind another python3 on PATH); fails if there is none
prom_py() {
	local p
	for p in python3 /usr/bin/python3; do
		"$p" -c 'import prometheus_client.parser' 2>/dev/null && { echo "$p"; return 0; }
	done
	return 1
}

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
	local n=$1 pid
	shift
	proc_start pid "$MRCD" -c "$T/$n.yaml" --seed 0x5eed "$@" > "$T/$n.log" 2>&1
	eval "PID_$n=$pid"
	wait_for -p "$pid" 60 ctl "$n" status || { echo "daemon $n did not start:"; tail -20 "$T/$n.log"; return 1; }
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

stop_daemon() { # stop_daemon NAME: SIGTERM (SIGKILL after 20 s), reap, return its exit code
	local pid
	eval "pid=\$PID_$1"
	proc_stop -g 20 "$pid"
}
