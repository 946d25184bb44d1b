#!/usr/bin/env bash
# limits.sh - limits that hold (issue 17, finding 6), two daemons over four
# memif planes:
# (run in the order 3, 4, 1, 2)
#  1. selftests: a listener opened on a connection ends when that connection
#     closes; ten one-shot listeners in a row never exhaust the 8 slots;
#     8 detached listeners fill them (the 9th: ENOSPC), and all 8 are freed
#     after limits.selftest_idle_s (selftests_expired), after which a
#     listener opens again; mrcctl selftest (one connection per side) still
#     moves verified bytes; worker=3 on a one-worker daemon is refused.
#  2. per-client and per-worker limits, with their messages: the 9th region
#     of a session (limits.per_client.max_mrs 8); sessions filling a's QP
#     table (limits.max_qps 2048, far past the old 256 owners per worker)
#     until qp_create names limits.max_qps.
#  3. 64 clients at once (64 mrc-perf pairs, one QP each, 200 verified
#     64 KiB Writes): every
#     one exits 0 with verified bytes; a's RSS per client recorded.
#  4. LIMITS_QPS QPs (default 2,000) on each daemon, 8 mrc-perf pairs of
#     LIMITS_QPS/8 QPs each, 8 verified 4 KiB Writes per QP: every pair
#     exits 0; a's and b's RSS per QP
#     recorded (VmRSS before the clients attach and with every QP live).
# The figures go to stdout and $T/figures (docs/benchmarks.md, "QPs and
# clients at scale"; scripts/bench/limits.sh runs phase 4 at 10,000).
source "$(dirname "$0")/lib.sh"
PERF=${MRC_PERF:?path to mrc-perf}
PY="python3 $(dirname "$0")/ctl_session.py"
NQ=${LIMITS_QPS:-2000}
PAIRS=${LIMITS_PAIRS:-8}
NCLI=${LIMITS_CLIENTS:-64}
ITERS=${LIMITS_ITERS:-8}
PHASES=${LIMITS_PHASES:-1234}
port=$((20000 + RANDOM % 10000)) # below the ephemeral range (32768-): a bind never meets a TIME_WAIT

make_configs
for n in a b; do
	printf 'limits:\n  max_qps: %s\n  selftest_idle_s: 2\n  per_client:\n    max_qps: 256\n' \
		"${LIMITS_MAX_QPS:-2048}" >> "$T/$n.yaml"
done
start_daemon a && start_daemon b && wait_for 30 links_up a && wait_for 30 links_up b ||
	{ bad "daemons start"; finish; exit 1; }

rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
status() { ctlj "$1" status | jget "d[\"$2\"]"; }
reason_of() { jget 'd["error"]["reason"] if d.get("error") else ""'; }
# wk NAME COUNTER: worker 0's counter
wk() { ctlj "$1" lcores | jget "d[0][\"$2\"]"; }
st_gone() { ! ctl a selftest_status id="$1" > /dev/null 2>&1; }

# 3 and 4 first: their RSS figures are deltas, read on daemons that have
# not yet held (and freed) anything else
# ---- helpers for 3 and 4: pairs of mrc-perf, servers on b, clients on a ----------
# pairs_run NAME K QPS [client args]: K pairs, pair k on port+k; every
# server listens before its client starts; $T/NAME.k.{srv,cli} their output.
# The clients' and servers' exit codes in $T/NAME.rc (one "k srv cli" a line).
listening() { [ "$(ss -ltnH "( sport >= :$1 and sport < :$(($1 + $2)) )" | wc -l)" -ge "$2" ]; }
declare -a SRV CLI
pairs_start() {
	local name=$1 k=$2 qps=$3 i pid
	shift 3
	for ((i = 0; i < k; i++)); do
		proc_start pid "$PERF" -s "$T/b.sock" --server --port $((port + i)) --timeout 240 \
			> "$T/$name.$i.srv" 2>&1
		SRV[i]=$pid
	done
	wait_for 60 listening "$port" "$k" || return 1
	for ((i = 0; i < k; i++)); do
		proc_start pid "$PERF" -s "$T/a.sock" --client 127.0.0.1 --port $((port + i)) --qps "$qps" \
			--verify --timeout 240 --stats 0 --json "$@" > "$T/$name.$i.cli" 2> "$T/$name.$i.cli.err"
		CLI[i]=$pid
	done
}
pairs_wait() {
	local name=$1 k=$2 i rs rc
	: > "$T/$name.rc"
	for ((i = 0; i < k; i++)); do
		wait "${CLI[i]}"; rc=$?
		wait "${SRV[i]}"; rs=$?
		echo "$i $rs $rc" >> "$T/$name.rc"
	done
	port=$((port + k))
}
# verdict NAME K QPS ITERS: every pair exited 0 (mrc-perf ends only once
# every QP has moved ITERS messages), and each client's JSON summary says
# so, with no verification or completion error
verdict() {
	python3 - "$T" "$1" "$2" "$3" "$4" <<'PY'
import json, sys
t, name, k, qps, iters = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
rcs = [l.split() for l in open(f"{t}/{name}.rc")]
bad = [r for r in rcs if r[1] != "0" or r[2] != "0"]
tot = 0
for i in range(k):
    try:
        d = json.load(open(f"{t}/{name}.{i}.cli"))
    except Exception as e:
        print(f"pair {i}: no JSON summary ({e})"); sys.exit(1)
    if d.get("qps") != qps or not d.get("verify") or d.get("verify_errors", 1) != 0 or d.get("cq_errors", 1) != 0 or d.get("messages", 0) < qps * iters or d.get("bytes", 0) <= 0:
        print(f"pair {i}: {json.dumps(d)[:300]}"); sys.exit(1)
    tot += d["bytes"]
if len(rcs) != k or bad:
    print(f"exit codes (pair srv cli) not all 0: {bad[:5]}"); sys.exit(1)
print(f"{k} pairs x {qps} QPs x {iters} messages: {tot} verified bytes, 0 verify errors")
PY
}

# qp_diag NAME: a summary of NAME's QPs (states, traffic, retries)
qp_diag() {
	ctlj "$1" qps | python3 -c '
import collections, json, sys
d = json.load(sys.stdin)
st = collections.Counter(q.get("state") for q in d)
idle = [q for q in d if q.get("tx_data_pkts", 0) == 0]
print("diag %s: %d QPs, states %s, %d sent no data, rtx %d, retry_k max %d, outstanding %d" % (
    sys.argv[1], len(d), dict(st), len(idle), sum(q.get("rtx", 0) for q in d),
    max([q.get("retry_k", 0) for q in d] or [0]), sum(q.get("outstanding_pkts", 0) for q in d)))
for q in idle[:3]:
    print("  " + json.dumps({k: q.get(k) for k in ("qpn", "dest_qpn", "state", "next_psn", "snd_una", "rcv_msn", "retry_k", "sq_outstanding", "cwnd", "inflight")}))
' "$1"
	ctlj "$1" ports | jget '" ".join("%s:tx_no_neigh=%d,rx_mrc=%d,tx_pkts=%d,rx_l2=%d,tx_l2=%d,tx_ring_full=%d" % (p["name"], p["tx_no_neigh"], p["rx_mrc"], p["tx_pkts"], p["rx_l2"], p["tx_l2"], p["tx_ring_full"]) for p in d)'
	ctlj "$1" neighbours | head -c 1500; echo
	ctlj "$1" lcores | head -c 1500; echo
}

# ---- 3. 64 clients at once ---------------------------------------------------------
if [[ $PHASES == *3* ]]; then
	r0=$(rss_kb "$PID_a")
	pairs_start c64 "$NCLI" 1 --size 64K --window 4 --iters 200 || bad "3: $NCLI servers listen"
	all_attached() { [ "$(status a clients)" -ge "$NCLI" ]; }
	if wait_for 60 all_attached; then
		r1=$(rss_kb "$PID_a")
		ok "3: $NCLI clients attached to a at once"
		echo "64 clients: a VmRSS $r0 kB before, $r1 kB with $NCLI attached: $(((r1 - r0) / NCLI)) kB per client" \
			| tee -a "$T/figures"
	else
		bad "3: $NCLI clients attached to a at once (got $(status a clients))"
	fi
	pairs_wait c64 "$NCLI"
	v=$(verdict c64 "$NCLI" 1 200)
	check "3: $v" test $? -eq 0
fi

# ---- 4. LIMITS_QPS QPs on one daemon ------------------------------------------------
if [[ $PHASES == *4* ]]; then
	per=$((NQ / PAIRS))
	no_clients() { [ "$(status a clients)" = 0 ] && [ "$(status b clients)" = 0 ]; }
	wait_for 30 no_clients
	r0=$(rss_kb "$PID_a") b0=$(rss_kb "$PID_b")
	t0=$(date +%s%N)
	pairs_start q "$PAIRS" "$per" --size 4K --window 1 --iters "$ITERS" ||
		bad "4: $PAIRS servers listen"
	all_qps() { [ "$(status a qps)" -ge $((PAIRS * per)) ] && [ "$(status b qps)" -ge $((PAIRS * per)) ]; }
	if wait_for 120 all_qps; then
		t1=$(date +%s%N)
		r1=$(rss_kb "$PID_a") b1=$(rss_kb "$PID_b")
		ok "4: $((PAIRS * per)) QPs live on a ($PAIRS clients) and on b"
		{
			echo "$((PAIRS * per)) QPs: created and connected in $(((t1 - t0) / 1000000)) ms"
			echo "$((PAIRS * per)) QPs: a VmRSS $r0 kB before, $r1 kB with every QP live: $(((r1 - r0) * 1000 / (PAIRS * per))) B per QP (per client: $(((r1 - r0) / PAIRS)) kB)"
			echo "$((PAIRS * per)) QPs: b VmRSS $b0 kB before, $b1 kB with every QP live: $(((b1 - b0) * 1000 / (PAIRS * per))) B per QP"
		} | tee -a "$T/figures"
	else
		bad "4: $((PAIRS * per)) QPs live on a (got $(status a qps))"
	fi
	# a stalled run: what the QPs look like before the clients give up
	ended() { for p in "${CLI[@]}"; do ! kill -0 "$p" 2> /dev/null || return 1; done; }
	if ! wait_for "${LIMITS_DIAG_S:-60}" ended; then
		for n in a b; do qp_diag "$n"; done
	fi
	pairs_wait q "$PAIRS"
	v=$(verdict q "$PAIRS" "$per" "$ITERS")
	check "4: $v" test $? -eq 0
	nb=$(ctlj b ports | jget 'sum(p["tx_no_neigh"] for p in d)')
	echo "$((PAIRS * per)) QPs: b tx_no_neigh $nb" >> "$T/figures"
	tail -3 "$T/q.0.cli.err" 2>/dev/null | sed 's/^/  pair 0: /'
fi

# ---- 1. selftests -----------------------------------------------------------------
if [[ $PHASES == *1* ]]; then
	coproc HELD { $PY "$T/a.sock" selftest-held 2> "$T/held.err"; }
	read -r -t 30 held <&"${HELD[0]}"
	hid=$(jget 'd.get("id", "")' <<< "$held")
	check "1: a listener held by its connection exists while the connection is open (id ${hid:-none})" \
		ctl a selftest_status id="${hid:-0}"
	echo >&"${HELD[1]}"
	wait "$HELD_PID"
	check "1: ... and is freed when that connection closes" wait_for 10 st_gone "${hid:-0}"
	n=0
	for k in $(seq 1 10); do
		id=$(ctlj a selftest_listen region_bytes=1048576 | jget 'd["id"]') &&
			wait_for 10 st_gone "$id" && n=$((n + 1))
	done
	check "1: ten one-shot listeners in a row each open and are freed at their connection's end ($n of 10)" \
		test "$n" = 10
	ids=()
	for k in $(seq 1 8); do
		ids+=("$(ctlj a selftest_listen region_bytes=1048576 detach=true | jget 'd["id"]')")
	done
	check "1: 8 detached listeners open (${ids[*]})" test "${#ids[@]}" = 8 -a -n "${ids[7]}"
	r=$(ctl a selftest_listen region_bytes=1048576 detach=true 2>&1)
	check "1: the 9th is refused while they live: $r" grep -q ENOSPC <<< "$r"
	# (selftest_status touches a selftest, so the wait reads the counter)
	t0=$(date +%s%N)
	expired() { num_cmp "$(wk a selftests_expired)" -ge 8; }
	check "1: all 8 are freed after limits.selftest_idle_s (2 s) untouched (selftests_expired $(wait_for 20 expired; wk a selftests_expired))" \
		expired
	echo "selftest idle expiry: $((($(date +%s%N) - t0) / 1000000)) ms after the 9th was refused (limits.selftest_idle_s 2)" >> "$T/figures"
	all_gone() { for i in "${ids[@]}"; do st_gone "$i" || return 1; done; }
	check "1: ... none of them answers selftest_status any more" all_gone
	id=$(ctlj a selftest_listen region_bytes=1048576 detach=true | jget 'd["id"]')
	check "1: a listener opens again (id $id)" test -n "$id"
	ctl a selftest_stop id="$id" > /dev/null
	check "1: mrcctl selftest (its own connections) still moves verified bytes" \
		ctl a selftest --peer "$T/b.sock" --bytes 16M --timeout 60
	r=$(ctl a selftest_listen worker=3 2>&1)
	check "1: worker=3 on a one-worker daemon is refused: $r" \
		grep -q "args.worker: 3 is not a worker: the daemon has 1 (0..0) (EINVAL)" <<< "$r"
fi

# ---- 2. per-client and per-worker limits -----------------------------------------
if [[ $PHASES == *2* ]]; then
	r=$($PY "$T/a.sock" regions 9)
	check "2: a session registers 8 regions, the 9th is refused naming limits.per_client.max_mrs: $r" \
		python3 -c 'import json,sys; d=json.loads(sys.argv[1]); e=d["error"] or {}
sys.exit(not (d["ok"] == 8 and e.get("code") == "ENOSPC" and "limits.per_client.max_mrs" in (e.get("reason") or "")))' "$r"
	q0=$(status a qps)
	check "2: a holds no QP before ($q0)" test "$q0" = 0
	r=$($PY "$T/a.sock" fill-qps 16)
	echo "$r" > "$T/fill.json"
	check "2: sessions of 256 QPs fill a's table to limits.max_qps (2048 QPs in 8 sessions; no cap at 256 owners)" \
		python3 -c 'import json,sys; d=json.loads(sys.argv[1]); sys.exit(not (d["qps"] == 2048 and d["per_session"][:8] == [256]*8))' "$r"
	check "2: ... then qp_create is refused naming limits.max_qps: $(reason_of < "$T/fill.json")" \
		python3 -c 'import json,sys; e=json.loads(sys.argv[1])["error"] or {}
sys.exit(not (e.get("code") == "ENOSPC" and "worker 0 holds 2048 QPs" in e["reason"] and "(limits.max_qps)" in e["reason"]))' "$r"
	no_qps() { [ "$(status a qps)" = 0 ] && [ "$(status a clients)" = 0 ]; }
	check "2: the sessions' QPs are gone with their connections" wait_for 20 no_qps
fi

cat "$T/figures" 2>/dev/null | sed 's/^/figure: /'
for n in a b; do stop_daemon "$n" || bad "daemon $n exits 0"; done
finish
