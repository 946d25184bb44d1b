#!/usr/bin/env bash
# perf_refused.sh - mrc-perf asked for more QPs than a daemon allows fails
# at once on both sides with the daemon's reason; neither side waits for
# its --timeout. Two daemons on net_null (no traffic is needed): a with the
# default limits (limits.per_client.max_qps 64), b allowing 4 per client.
#  1. client on a, --qps 65: the client's 65th qp_create is refused; the
#     client tells the waiting server, which exits 1 with that reason.
#  2. client on a, server on b, --qps 8: the server's 5th is refused; the
#     client hears the server's reason ("server refused: ...").
source "$(dirname "$0")/lib.sh"
MRC_PERF=${MRC_PERF:?path to mrc-perf}
for n in a b; do
	sed -e "s#\"--file-prefix\", \"mrcd\"#\"--file-prefix\", \"mrcd-it-$(basename "$T")-$n\"#" \
		"$TOP/config/mrcd-default.yaml" > "$T/$n.yaml"
	printf 'control:\n  socket: %s\n' "$T/$n.sock" >> "$T/$n.yaml"
done
printf 'limits:\n  per_client:\n    max_qps: 4\n' >> "$T/b.yaml"
# b's worker on CPU 0, a's on CPU 1 (both idle: adaptive)
start_daemon a || { finish; exit 1; }
start_daemon b -- --lcores 0@1,1@0 || { finish; exit 1; }

port=$((20000 + RANDOM % 20000))
# run_pair NAME SERVER_DAEMON CLIENT_DAEMON QPS: both sides' exit codes,
# stderr and seconds (from the client's start) in $T/NAME.{srv,cli}.{rc,err,s}
ms() { echo $(($(date +%s%N) / 1000000)); }
secs() { printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)); }
run_pair() {
	local name=$1 sd=$2 cd=$3 qps=$4 spid t0
	proc_start spid "$MRC_PERF" -s "$T/$sd.sock" --server --port "$port" --timeout 120 \
		2> "$T/$name.srv.err"
	# the server listens before the client connects
	wait_for -p "$spid" 30 bash -c "ss -ltn 'sport = :$port' | grep -q LISTEN" || return 1
	t0=$(ms)
	"$MRC_PERF" -s "$T/$cd.sock" --client 127.0.0.1 --port "$port" --qps "$qps" --iters 10 \
		--timeout 120 > /dev/null 2> "$T/$name.cli.err"
	echo $? > "$T/$name.cli.rc"
	secs $(($(ms) - t0)) > "$T/$name.cli.s"
	# the server must end by itself, long before its 120 s timeout
	if wait_for 30 bash -c "! kill -0 $spid 2>/dev/null"; then
		secs $(($(ms) - t0)) > "$T/$name.srv.s"
		wait "$spid"; echo $? > "$T/$name.srv.rc"
	fi
	proc_stop "$spid"
	port=$((port + 1))
}

run_pair over64 a a 65
check "1: the client exits 1 (got $(cat "$T/over64.cli.rc" 2>/dev/null))" test "$(cat "$T/over64.cli.rc" 2>/dev/null)" = 1
check "1: the client gives the daemon's reason" \
	grep -q "mrc-perf: qp_create (QP 64 of 65): QP limit reached: this client holds 64 QPs, limits.per_client.max_qps" "$T/over64.cli.err"
check "1: the server exits 1 (got $(cat "$T/over64.srv.rc" 2>/dev/null))" test "$(cat "$T/over64.srv.rc" 2>/dev/null)" = 1
check "1: the server says why: the client's reason" \
	grep -q "mrc-perf: the client could not set up: qp_create (QP 64 of 65): QP limit reached" "$T/over64.srv.err"
check "1: the server ended $(cat "$T/over64.srv.s" 2>/dev/null) s after the client started, not at its 120 s timeout" \
	num_cmp "$(cat "$T/over64.srv.s" 2>/dev/null)" '<' 30

run_pair server4 b a 8
check "2: the server exits 1 (got $(cat "$T/server4.srv.rc" 2>/dev/null))" test "$(cat "$T/server4.srv.rc" 2>/dev/null)" = 1
check "2: the server gives its daemon's reason" \
	grep -q "qp_create (QP 4 of 8): QP limit reached: this client holds 4 QPs" "$T/server4.srv.err"
check "2: the client exits 1 (got $(cat "$T/server4.cli.rc" 2>/dev/null))" test "$(cat "$T/server4.cli.rc" 2>/dev/null)" = 1
check "2: the client hears the server's reason" \
	grep -q "server refused: server: qp_create (QP 4 of 8): QP limit reached: this client holds 4 QPs, limits.per_client.max_qps" "$T/server4.cli.err"
check "2: the client ended in $(cat "$T/server4.cli.s" 2>/dev/null) s, not at its 120 s timeout" \
	num_cmp "$(cat "$T/server4.cli.s" 2>/dev/null)" '<' 30
for f in "$T"/*.err; do echo "--- $(basename "$f")"; cat "$f"; done
finish
