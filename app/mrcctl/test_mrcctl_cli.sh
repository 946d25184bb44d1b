#!/usr/bin/env bash
# test_mrcctl_cli.sh MRCCTL PYTHON FAKE_MRCD - mrcctl against fake daemons
# (fake_mrcd.py) on temporary UNIX sockets: text, table and --json output,
# argument conversion, exit codes 1/2/3/4 and the selftest orchestration.
# Each fake reports "ready" on a FIFO once it listens (no sleeps); every
# fake is stopped by PID on exit (scripts/lib/proc.sh: SIGTERM, then SIGKILL).
set -u
mrcctl=$1 py=$2 fake=$3
source "$(dirname "$0")/../../scripts/lib/proc.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/mrcctl-test.XXXXXX")
cleanup_dir "$work"

passed=0 failed=0
fail() {
	echo "FAIL: $*"
	echo "--- stdout"; cat "$work/out"
	echo "--- stderr"; cat "$work/err"
	failed=$((failed + 1))
}

# The fake daemons: one process serving $work/NAME.sock for each
# "NAME [options]" group (separated by --). It says "ready" on a FIFO, opened
# read-write here so that neither side blocks on open; wait with a deadline.
start_fakes() {
	local fd line spec=("$work/$1.sock") a
	shift
	for a in "$@"; do
		if [ "${spec[-1]}" = -- ]; then
			spec+=("$work/$a.sock")
		else
			spec+=("$a")
		fi
	done
	mkfifo "$work/ready"
	exec {fd}<>"$work/ready"
	local pid
	proc_start pid "$py" "$fake" "${spec[@]}" >"$work/ready" 2>"$work/fake.stderr"
	if ! read -r -t 30 -u "$fd" line || [ "$line" != ready ]; then
		echo "FAIL: the fake daemons did not start"; cat "$work/fake.stderr"
		exit 1
	fi
	exec {fd}<&-
}

# run EXPECTED_RC ARGS... : run mrcctl, keep stdout/stderr in $work/out, err
run() {
	local want=$1 rc
	shift
	"$mrcctl" "$@" >"$work/out" 2>"$work/err"
	rc=$?
	last="mrcctl $*"
	if [ "$rc" -ne "$want" ]; then
		fail "$last: exit $rc, expected $want"
		return 1
	fi
	passed=$((passed + 1))
}
# has FILE PATTERN : FILE (out/err) contains the fixed string PATTERN
has() {
	if ! grep -qF -- "$2" "$work/$1"; then
		fail "$last: $1 lacks '$2'"
		return 1
	fi
	passed=$((passed + 1))
}
# json_ok PYTHON_EXPR : stdout is JSON and EXPR (over j) holds
json_ok() {
	if ! "$py" -c "import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if ($1) else 1)" \
		"$work/out"; then
		fail "$last: JSON check failed: $1"
		return 1
	fi
	passed=$((passed + 1))
}

start_fakes a --hang lcores --run-polls 12 -- b -- bad --verify-errors 1 \
	-- dead --sender-fail -- nostart --fail selftest_start
A=$work/a.sock B=$work/b.sock

# help and usage
run 0 help && has out "fault_set" && has out "selftest_status" && has out "selftest "
run 2
run 2 -s "$A" bogus && has err 'unknown command "bogus"'
run 2 --frobnicate version && has err "unknown option"

# scalars, dotted keys, comma-joined arrays
run 0 -s "$A" version && has out "protocol: 1" && has out "daemon:   fake-0.1"
run 0 -s "$A" status && has out "ports.up:    2" && has out "lcores:      1,2" &&
	has out "uptime_s:    12.500"
# an array of objects is a table; nested objects are dotted columns
run 0 -s "$A" qps && has out "qpn  state  peer.node  evs" && has out "22   ERR    fd00::2    128"
# an object holding a table
run 0 -s "$A" qp qpn=5 && has out "cc.rtt_us: 12.250" && has out "evs:" && has out "  ev  state"
run 0 -s "$A" faults && has out "(none)"
# --json before or after the command
run 0 -s "$A" --json qp qpn=5 && json_ok 'j["qpn"] == 5 and j["cc"]["cwnd"] == 65536'
run 0 -s "$A" qps --json && json_ok 'len(j) == 2 and j[1]["qpn"] == 22'
# $MRCD_SOCKET is the default socket
MRCD_SOCKET=$A run 0 version && has out "protocol: 1"

# key=value conversion, dashes for underscores, what went on the wire
run 0 -s "$A" port-admin port=plane1 up=false &&
	has a.sock.log '"cmd":"port_admin","id":1,"args":{"port":"plane1","up":false}}'
run 0 -s "$A" fault_set port=2 drop_pct=1.5 ev_min=0x10 ev_max=100 direction=rx &&
	has a.sock.log '"args":{"port":2,"drop_pct":1.5,"ev_min":16,"ev_max":100,"direction":"rx"}'
run 0 -s "$A" log-level level=debug 'type="mrcd.ctl"' &&
	has a.sock.log '"args":{"level":"debug","type":"mrcd.ctl"}'

# 1: the daemon answered an error
run 1 -s "$A" qp qpn=7 && has err "mrcctl: qp: qpn 7: no such QP (ENOENT)"
run 1 -s "$A" --json qp qpn=7 && has err "(ENOENT)" && json_ok 'j["code"] == "ENOENT" and j["errno"] == 2'
# 2: refused locally, nothing sent
lines=$(wc -l <"$work/a.sock.log") # (empty if a's log is missing: the check below then fails)
run 2 -s "$A" qp && has err "mrcctl: qp: args.qpn: missing required key (EINVAL)"
run 2 -s "$A" qp qpn=0 && has err "args.qpn: 0 is out of range 1..16777215"
run 2 -s "$A" qp qpn=5 qpn=6 && has err "args.qpn: given twice"
run 2 -s "$A" qp 5 && has err "arguments are key=value"
run 2 -s "$A" fault-set port=plane2 && has err "args: no fault kind set"
run 2 -s "$A" version x=1 && has err "args.x: unknown key"
run 2 -s "$A" --timeout 0 version && has err "bad timeout"
now=$(wc -l <"$work/a.sock.log")
if [ -z "$lines" ] || [ "$now" != "$lines" ]; then
	fail "a usage error reached the daemon (a's log: ${lines:-?} then ${now:-?} lines)"
else
	passed=$((passed + 1))
fi
# 3: cannot connect, timeout
run 3 -s "$work/none.sock" version && has err "cannot connect to $work/none.sock"
run 3 -s "$A" --timeout 0.3 lcores && has err "no reply within 0.3 s (ETIMEDOUT)"

# selftest: happy path (A sends 1 MiB to B), one progress line per second
run 0 -s "$A" selftest --peer "$B" --bytes 1M --msg-size 4K --window 8 --region 2M &&
	has out "selftest: PASS" && has out "Gbit/s  rtx 12" && has out "bytes:          1048576" &&
	has out "verify errors:  0" && has out "qp_state:       sender RTS, receiver RTS" &&
	has a.sock.log '"args":{"peer_info":"'"$(printf 'b%.0s' $(seq 416))"'","bytes":1048576,"msg_size":4096,"window":8,"op":"write_imm"}' &&
	has b.sock.log '"cmd":"selftest_listen","id":1,"args":{"region_bytes":2097152}}' &&
	has a.sock.log '"cmd":"selftest_stop","id":' && has b.sock.log '"cmd":"selftest_stop","id":'
run 0 -s "$A" selftest --peer "$B" --bytes=1M --msg-size=4096 --json &&
	json_ok 'j["ok"] is True and j["sender"]["state"] == "done" and j["receiver"]["imm_msgs"] == 256'
# 4: the receiver found a verify error; the sender failed
run 4 -s "$A" selftest --peer "$work/bad.sock" --bytes 1M --msg-size 4K &&
	has err "receiver verify_errors 1" && has out "selftest: FAIL"
run 4 -s "$work/dead.sock" selftest --peer "$B" --bytes 1M --msg-size 4K --json &&
	has err "sender state failed: peer unreachable" && json_ok 'j["ok"] is False'
# usage and connection errors
run 2 -s "$A" selftest --bytes 1M && has err "--peer SOCKET is required"
run 2 -s "$A" selftest --peer "$B" --bytes 0 && has err "args.bytes"
run 2 -s "$A" selftest --peer "$B" --op read && has err "args.op"
run 2 -s "$A" selftest --peer "$B" --bytes 12Q && has err "bad size"
run 2 -s "$A" selftest --peer "$B" --iters 10 && has err "--iters counts round trips: it needs --latency"
run 2 -s "$A" selftest --peer "$B" --latency --iters 10 --bytes 1M && has err "--iters or --bytes, not both"
run 2 -s "$A" selftest --peer "$B" --latency --iters 1000001 && has err "at most 1000000 round trips"
run 2 -s "$A" selftest --peer "$B" --latency --iters 0 && has err "at least 1 round trip"
run 2 -s "$A" selftest --peer "$B" --latency --size 32 && has err "args.msg_size"
run 3 -s "$A" selftest --peer "$work/none.sock" --bytes 1M && has err "cannot connect"
# 1: the sender refused to start; the listener already open on B is stopped
# (the count is a number, or empty when b's log is missing: then it fails)
stops_seen() { [ -r "$work/b.sock.log" ] && { grep -c '"cmd":"selftest_stop"' "$work/b.sock.log" || :; }; }
stops=$(stops_seen)
run 1 -s "$work/nostart.sock" selftest --peer "$B" --bytes 1M &&
	has err "mrcctl: selftest: sender selftest_start: no room (ENOSPC)"
now=$(stops_seen)
if [ -z "$stops" ] || [ "$now" != $((stops + 1)) ]; then
	fail "the receiver was not stopped after the sender failed to start (selftest_stop seen ${stops:-?} then ${now:-?} times)"
else
	passed=$((passed + 1))
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
