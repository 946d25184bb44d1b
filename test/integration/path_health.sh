#!/usr/bin/env bash
# path_health.sh - path health tells the truth when the host, not the path,
# stalls (D65, D72): between two daemons over four lossless memif planes on
# this 2-CPU host, with a CPU hog beside them, verified transfers - the
# daemons' selftest and mrc-perf through libmrc-client, several seconds
# each - end with no EV transitions and no spurious retransmissions (RTO
# rounds printed beside them: the target is 0, not always met, see health); and a daemon stopped for
# 500 ms (SIGSTOP, SIGCONT) in the middle of a transfer is not blamed on a
# path either: the sender's pause is counted as a stall of its worker (told
# to the engine, mrcp_engine_stalled, D72) and changes no verdict; the
# receiver's is a silence of every EV at once, which runs into RTO rounds
# (a dead peer looks the same) but charges no EV (D75).
# A real blackhole of one plane still retires exactly that plane's EVs.
#
# The figures are what the transfer's QPs did, summed as they were
# destroyed (`mrcctl counters`: closed_qps), over both daemons, after minus
# before; each is read with scripts/lib/getval.py, so a missing counter
# fails its check rather than reading as zero.
source "$(dirname "$0")/lib.sh"
PERF=${MRC_PERF:?path to mrc-perf}
BYTES=${PATH_HEALTH_BYTES:-1G}      # selftest: 1-40 s here, as loaded as the host is
SECS=${PATH_HEALTH_SECONDS:-15}     # mrc-perf --duration
getval() { python3 "$TOP/scripts/lib/getval.py" json "$@"; }

start_pair || { bad "daemons start and links come up"; finish; exit 1; }
ok "daemons start and links come up"

# A competing CPU hog for the whole test (PATH_HEALTH_HOG=0: none): one
# process that never sleeps, at the daemons' priority, so on two CPUs the
# workers and clients are descheduled for whole time slices whatever else
# the machine runs.
spin() { while :; do :; done; }
hog=
if [ "${PATH_HEALTH_HOG:-1}" != 0 ]; then
	proc_start hog spin
	check "a CPU hog runs beside the daemons (pid $hog)" kill -0 "$hog"
fi

snap() { ctlj a counters > "$T/$1-a.json" && ctlj b counters > "$T/$1-b.json"; }
# fig FROM TO PATH: counter PATH summed over a and b, snapshot TO minus FROM;
# prints nothing (and fails) if a snapshot lacks it
fig() {
	local v vals=()
	for d in a b; do
		v=$(getval "$T/$2-$d.json" "$3") || return 1
		vals+=("$v")
		v=$(getval "$T/$1-$d.json" "$3") || return 1
		vals+=("-$v")
	done
	num_sum "${vals[@]}"
}
# health LABEL FROM TO [MIN_QPS]: the verdicts on what the QPs closed
# between two snapshots did. Transitions and spurious retransmissions
# must be zero: the host's pauses (descheduled workers and
# clients, two daemons and their clients on two CPUs) are not path
# failures. The other figures are printed beside them.
health() {
	local what=$1 from=$2 to=$3 min=${4:-2} k v line=""
	v=$(fig "$from" "$to" closed_qps.qps)
	check "$what: its QPs were counted as they closed ($v, at least $min)" num_cmp "$v" -ge "$min"
	for k in ev.transitions rtx_spurious; do
		v=$(fig "$from" "$to" "closed_qps.$k")
		check "$what: $k = 0 (got $v)" num_cmp "$v" == 0
	done
	# RTO rounds are printed, not judged: a receiver descheduled for
	# longer than the linear phase (7 ms here) beside the hog is an RTO
	# round by D65, seen in the selftest or mrc-perf phase of 2 of 3 CI
	# runs; by D75 it charges no EV, which the transitions above check
	for k in closed_qps.rto_rounds closed_qps.rto_unblamed closed_qps.tx_data_pkts closed_qps.rtx_fast closed_qps.rtx_rto closed_qps.losses \
		closed_qps.losses_undone closed_qps.silent_rounds closed_qps.suspects \
		closed_qps.suspects_cleared engine.stalls worker.stalls; do
		line+=" ${k#*.}=$(fig "$from" "$to" "$k")"
	done
	echo "     $what:$line"
}
no_qps() { [ "$(ctlj "$1" qps | jget 'len(d)')" = 0 ]; }
closed() { wait_for 20 no_qps a && wait_for 20 no_qps b; }

# 1. the daemons' selftest (RDMA WriteImm, every message verified)
snap st0
if ctl a selftest --peer "$T/b.sock" --timeout 240 --json --bytes "$BYTES" > "$T/st.json" 2> "$T/st.err"; then
	ok "selftest $BYTES lossless: $(jget '"%.2f Gbit/s in %.1f s, %d verify errors" % (d["sender"]["goodput_gbps"], d["sender"]["elapsed_ns"] / 1e9, d["receiver"]["verify_errors"])' < "$T/st.json")"
else
	bad "selftest $BYTES lossless: $(cat "$T/st.err")"
fi
check "the selftest's QPs are gone" closed
snap st1
health "selftest lossless" st0 st1

# 2. mrc-perf --verify through libmrc-client, 4 QPs
port=18640
proc_start srv "$PERF" -s "$T/b.sock" --server --port "$port" --timeout $((SECS + 90)) > "$T/perf.srv" 2>&1
if "$PERF" -s "$T/a.sock" --client 127.0.0.1 --port "$port" --verify --duration "$SECS" --qps 4 \
	--stats 0 --timeout $((SECS + 90)) > "$T/perf.out" 2>&1 && wait "$srv"; then
	ok "mrc-perf --verify ${SECS} s lossless: $(grep -E "goodput|errors" "$T/perf.out" | tr -s ' ' | paste -sd' ' | cut -c1-140)"
else
	bad "mrc-perf --verify ${SECS} s lossless: $(tail -5 "$T/perf.out")"
fi
check "mrc-perf's QPs are gone" closed
snap perf1
health "mrc-perf lossless" st1 perf1 8

# 3. a host pause: daemon NAME stopped for 500 ms, three times, in the
# middle of a transfer. The sleep is the pause itself, not a wait for
# anything. The worker's longest loop gap (stall_max_ns) must have been
# under 500 ms before and at least 500 ms after, so the stall counted is
# the pause, not the host's own noise (a worker descheduled for 80-220 ms
# was seen here beside a CPU hog; on a host too loaded for the difference
# the check fails).
# The sender's pause is a local stall: told to its engine, no verdicts
# change. The receiver's pause is a silence of the peer longer than the
# linear phase (linear_cnt x T, about 7 ms here): by D65 that becomes RTO
# rounds (a dead peer looks the same), so RTO rounds are printed, not
# judged; but the peer answered nothing sent since, on any EV, so no EV is
# charged (D75): no transitions, no spurious retransmissions.
PAUSE_NS=500000000
sent() { ctlj a qps | jget 'sum(q["tx_data_pkts"] for q in d)'; }
moved_on() { [ "$(sent)" -gt "$1" ]; }
pause() { # pause NAME: stop it for 500 ms three times, 2,000 packets apart
	local pid n
	eval "pid=\$PID_$1"
	for n in 1 2 3; do
		wait_for 30 moved_on $(($(sent) + 2000)) || return 1
		kill -STOP "$pid" || return 1
		sleep 0.5
		kill -CONT "$pid" || return 1
	done
}
longest() { ctlj "$1" counters | python3 "$TOP/scripts/lib/getval.py" json - worker.stall_max_ns; }
for who in a b; do
	snap p0
	m0=$(longest "$who")
	check "daemon $who's longest loop gap before the pauses is under 500 ms (${m0} ns)" num_cmp "$m0" -lt "$PAUSE_NS"
	proc_start st ctl a selftest --peer "$T/b.sock" --timeout 240 --json --bytes "$BYTES" > "$T/p-$who.json" 2> "$T/p-$who.err"
	wait_for 30 moved_on 5000
	check "daemon $who stopped for 500 ms three times mid-transfer" pause "$who"
	check "the transfer was still running after the pauses" kill -0 "$st"
	if wait "$st"; then
		ok "selftest across the pauses of $who: $(jget '"%.2f Gbit/s, %d verify errors" % (d["sender"]["goodput_gbps"], d["receiver"]["verify_errors"])' < "$T/p-$who.json")"
	else
		bad "selftest across the pauses of $who: $(cat "$T/p-$who.err")"
	fi
	check "the selftest's QPs are gone" closed
	snap p1
	m1=$(longest "$who")
	check "daemon $who's worker counted the pause as a stall (longest gap ${m1} ns)" num_cmp "$m1" -ge "$PAUSE_NS"
	e=$(num_sum "$(getval "$T/p1-$who.json" engine.stalls)" "-$(getval "$T/p0-$who.json" engine.stalls)")
	check "daemon $who's engine was told ($e stalls, at least 3)" num_cmp "$e" -ge 3
	if [ "$who" = a ]; then
		health "$who stopped 3 x 500 ms" p0 p1
	else
		for k in ev.transitions rtx_spurious; do
			v=$(fig p0 p1 "closed_qps.$k")
			check "$who stopped 3 x 500 ms: $k = 0 (got $v)" num_cmp "$v" == 0
		done
		v=$(fig p0 p1 closed_qps.rto_unblamed)
		check "$who stopped 3 x 500 ms: the RTO expiries of its silence were charged to no EV ($v, D75)" num_cmp "$v" -gt 0
		line=""
		for k in closed_qps.rto_rounds closed_qps.rtx_rto closed_qps.losses closed_qps.silent_rounds; do
			line+=" ${k#*.}=$(fig p0 p1 "$k")"
		done
		echo "     $who stopped 3 x 500 ms (RTO rounds not judged, see above):$line"
	fi
done

# 4. a real blackhole: plane 2 silent both ways at a, mid-transfer (the
# link stays up). The EVs of plane 2 that were carrying data retire within
# BH_MS of the rule (polled through mrcctl, a few hundred ms a poll on a
# loaded host, so the figure is an upper bound), while the EVs of the
# other planes stay GOOD (all but at most 1 in 8, below); the transfer completes on the others. Without the
# fault nothing retires and the first check fails. EVs of other planes
# that were charged with a loss and had it undone (D64) on the way are
# counted in the printed transitions, not judged here.
BH_MS=${PATH_HEALTH_BH_MS:-5000}
# evtab FILE: a's sending QPs' EVs, one line each: qpn index plane state transitions tx_pkts
evtab() {
	local q
	: > "$1"
	for q in $(ctlj a qps | jget '" ".join(str(q["qpn"]) for q in d if q["tx_data_pkts"] > 0)'); do
		ctlj a evs qpn="$q" | jget '"\n".join("'"$q"' %d %d %s %d %d" % (e["index"], e["plane"], e["state"], e["transitions"], e["tx_pkts"]) for e in d)' >> "$1" || return 1
	done
	[ -s "$1" ]
}
# retired: every EV of plane $bh_plane that carried data at the fault has
# left GOOD (or changed state since); the table at that moment stays in bh-now
retired() {
	evtab "$T/bh-now" || return 1
	python3 - "$T/bh-at" "$T/bh-now" "$bh_plane" <<'PY'
import sys
at, now, plane = sys.argv[1], sys.argv[2], int(sys.argv[3])
rows = lambda f: {(l.split()[0], l.split()[1]): l.split() for l in open(f) if l.strip()}
a, n = rows(at), rows(now)
watch = [k for k, r in a.items() if int(r[2]) == plane and int(r[5]) > 0]
sys.exit(0 if watch and all(k in n and (n[k][3] != "GOOD" or int(n[k][4]) > int(a[k][4])) for k in watch) else 1)
PY
}
bh_plane=$(ctlj a ports | jget '[p["plane"] for p in d if p["name"] == "plane2"][0]')
snap bh0
proc_start st ctl a selftest --peer "$T/b.sock" --timeout 240 --json --bytes "$BYTES" > "$T/bh.json" 2> "$T/bh.err"
wait_for 30 moved_on 5000
evtab "$T/bh-at"
w=$(awk -v p="$bh_plane" '$3 == p && $6 > 0' "$T/bh-at" | wc -l)
check "plane $bh_plane carried data before the blackhole ($w EVs)" num_cmp "$w" -gt 0
t0=$(date +%s%N)
ctl a fault-set port=plane2 blackhole=true direction=both > /dev/null
if wait_for $((BH_MS / 1000 + 1)) retired; then
	ms=$((($(date +%s%N) - t0) / 1000000))
	check "the blackholed plane's $w EVs retired within ${BH_MS} ms (seen at $ms ms)" num_cmp "$ms" -le "$BH_MS"
else
	bad "the blackholed plane's EVs retired within ${BH_MS} ms: $(cat "$T/bh-now" 2>/dev/null | tr '\n' ';')"
fi
nother=$(awk -v p="$bh_plane" '$3 != p' "$T/bh-now" | wc -l)
notgood=$(awk -v p="$bh_plane" '$3 != p && $4 != "GOOD"' "$T/bh-now" | wc -l)
other=$(awk -v p="$bh_plane" '$3 != p { n += $5 } END { print n + 0 }' "$T/bh-now")
# Known gap (issue 13's note): in a two-way blackhole some EVs of the live
# planes are charged with a loss too and are out of service at that moment
# (10 of 144 in one run, 84 transitions among them; main before D72 had 656
# transitions): at most 1 in 8 may be, which keeps the spraying on the other
# planes and fails a loss inference that blames every plane
check "the EVs of the other planes stay GOOD then, at most 1 in 8 not ($notgood of $nother not; $other transitions among them)" \
	eval 'num_cmp "$nother" -gt 0 && num_cmp "$((notgood * 8))" -le "$nother"'
if wait "$st"; then
	ok "selftest across the blackhole: $(jget '"%.2f Gbit/s, %d verify errors" % (d["sender"]["goodput_gbps"], d["receiver"]["verify_errors"])' < "$T/bh.json")"
else
	bad "selftest across the blackhole: $(cat "$T/bh.err")"
fi
bh=$(ctlj a counters | python3 "$TOP/scripts/lib/getval.py" json - ports.plane2.fault.blackholed)
check "the blackhole swallowed packets ($bh)" num_cmp "$bh" -gt 0
ctl a fault-clear > /dev/null
check "the selftest's QPs are gone" closed
snap bh1
line=""
for k in closed_qps.ev.transitions closed_qps.rto_rounds closed_qps.rtx_fast closed_qps.rtx_rto \
	closed_qps.losses closed_qps.silent_rounds; do
	line+=" ${k#*.}=$(fig bh0 bh1 "$k")"
done
echo "     blackhole of plane 2:$line"

if [ -n "$hog" ]; then
	check "the CPU hog ran to the end" kill -0 "$hog"
	proc_stop "$hog" # killed by SIGTERM: its status says so, nothing to check
fi
check "a exits 0 on SIGTERM" stop_daemon a
check "b exits 0 on SIGTERM" stop_daemon b
finish
