#!/usr/bin/env bash
# clients.sh - applications through libmrc-client: mrc-perf with --verify
# between two daemons over four memif planes, lossless and under faults
# (1% drop on every plane, a plane blackholed mid-run, a plane down and up,
# delay and reorder on one plane, 5% trims), 16 QPs from 2 clients at once,
# a client SIGKILLed mid-transfer while another completes, every plane dead
# (error completions, never a hang), and the examples.
source "$(dirname "$0")/lib.sh"
PERF=${MRC_PERF:?path to mrc-perf}
EX=${EXAMPLES:?path to the examples directory}
DUR=${CLIENTS_DURATION:-3}
port=18600

start_pair || { bad "daemons start"; finish; exit 1; }

# perf_start NAME [client args]: start one verified run a -> b, server and
# client both tracked by proc.sh (stopped by PID if the test ends first);
# sets PERF_SRV and PERF_CLI. perf_wait SRV CLI: the client's exit code once
# both have ended. perf NAME [client args]: the two in one.
perf_start() {
	local name=$1; shift
	port=$((port + 1))
	proc_start PERF_SRV "$PERF" -s "$T/b.sock" --server --port "$port" --timeout 90 > "$T/$name.srv" 2>&1
	proc_start PERF_CLI "$PERF" -s "$T/a.sock" --client 127.0.0.1 --port "$port" --verify --timeout 90 --stats 0 "$@" \
		> "$T/$name.out" 2>&1
}
perf_wait() {
	local rc
	wait "$2"
	rc=$?
	wait "$1"
	return $rc
}
perf() { perf_start "$@" && perf_wait "$PERF_SRV" "$PERF_CLI"; }
summary() { grep -E "goodput|errors" "$T/$1.out" | tr -s ' ' | paste -sd' ' | cut -c1-160; }
run() { # run NAME [client args]: a verified run that must pass
	local name=$1; shift
	if perf "$name" "$@"; then ok "$name: $(summary "$name")"; else bad "$name: $(tail -5 "$T/$name.out")"; fi
}
sending() { [ "$(ctlj a qps | jget 'sum(q["tx_data_pkts"] for q in d)')" -gt 500 ]; }
midway() { # midway NAME ACTION-AT-1/3 ACTION-AT-2/3 [client args]
	local name=$1 act1=$2 act2=$3; shift 3
	perf_start "$name" "$@"
	local srv=$PERF_SRV cli=$PERF_CLI
	wait_for 20 sending
	eval "$act1"
	# the second action once the transfer has moved on under the first
	local base
	base=$(ctlj a qps | jget 'sum(q["tx_data_pkts"] for q in d)')
	progressed() { [ "$(ctlj a qps | jget 'sum(q["tx_data_pkts"] for q in d)')" -gt $((base + 5000)) ]; }
	wait_for 20 progressed
	eval "$act2"
	if perf_wait "$srv" "$cli"; then ok "$name: $(summary "$name")"; else bad "$name: $(tail -5 "$T/$name.out")"; fi
}

run lossless --duration "$DUR" --qps 4
for p in 1 2 3 4; do ctl a fault-set port=$p drop_pct=1 direction=both >/dev/null; done
run drop-1pct-every-plane --duration "$DUR" --qps 2
ctl a fault-clear >/dev/null
midway blackhole-plane2-midway "ctl a fault-set port=plane2 blackhole=true direction=both >/dev/null" \
	"true" --duration "$DUR" --qps 2
ctl a fault-clear >/dev/null
midway plane3-down-then-up "ctl a port-admin port=plane3 up=false >/dev/null" \
	"ctl a port-admin port=plane3 up=true >/dev/null" --duration "$DUR" --qps 2
ctl a fault-set port=plane1 delay_us=100 jitter_us=100 reorder_pct=10 direction=both >/dev/null
run delay-and-reorder-plane1 --duration "$DUR" --qps 2
ctl a fault-clear >/dev/null
for p in 1 2 3 4; do ctl a fault-set port=$p trim_pct=5 >/dev/null; done
run trims-5pct --duration "$DUR" --qps 2
trimmed=$(ctlj a counters | jget 'sum(p["fault"]["trimmed"] for p in d["ports"].values())')
check "packets were trimmed ($trimmed)" test "$trimmed" -gt 0
ctl a fault-clear >/dev/null

# 16 QPs from 2 clients at once
perf_start two-clients-a --duration "$DUR" --qps 8; s1=$PERF_SRV c1=$PERF_CLI
perf_start two-clients-b --duration "$DUR" --qps 8 --op write; s2=$PERF_SRV c2=$PERF_CLI
perf_wait "$s1" "$c1"; r1=$?
perf_wait "$s2" "$c2"; r2=$?
check "16 QPs from 2 clients at once: $(summary two-clients-a) | $(summary two-clients-b)" test "$r1" -eq 0 -a "$r2" -eq 0

# a client SIGKILLed mid-transfer; another completes; its session is gone
port=$((port + 1)); kp=$port
proc_start ksrv "$PERF" -s "$T/b.sock" --server --port "$kp" --timeout 60 > "$T/kill.srv" 2>&1
proc_start kcl "$PERF" -s "$T/a.sock" --client 127.0.0.1 --port "$kp" --verify --duration 30 --stats 0 > "$T/kill.out" 2>&1
disown "$kcl" 2>/dev/null # its SIGKILL is the point: no "Killed" notice
wait_for 20 sending
perf_start survivor --duration "$DUR"; s1=$PERF_SRV c1=$PERF_CLI
kill -KILL "$kcl"
if perf_wait "$s1" "$c1"; then ok "another client completes while one is SIGKILLed: $(summary survivor)"; else bad "survivor: $(tail -3 "$T/survivor.out")"; fi
wait "$ksrv"
check "the killed client's peer saw its QPs fail (server exit non-zero)" test $? -ne 0
no_sessions() { [ "$(ctlj a status | jget 'd["clients"]')" = 0 ]; }
check "daemon a dropped the dead client's session" wait_for 10 no_sessions

# the examples, across the two daemons
check "hello_write across the fabric" "$EX/hello_write" "$T/a.sock" "$T/b.sock"
check "pingpong across the fabric (blocking waits)" "$EX/pingpong" -s "$T/a.sock" -S "$T/b.sock" -n 500 -w

# every plane dead: the client gets error completions, never a hang
for p in 1 2 3 4; do ctl a fault-set port=$p blackhole=true direction=both >/dev/null; done
t0=$(date +%s)
perf all-planes-dead --iters 100000
rc=$?
dt=$(( $(date +%s) - t0 ))
check "every plane dead: the run fails with completion errors (exit $rc, ${dt} s)" test "$rc" -eq 1
grep -q "completion errors [1-9]\|cq_errors [1-9]\|completion error" "$T/all-planes-dead.out"
check "and reports the completion errors" test $? -eq 0
ctl a fault-clear >/dev/null
finish
