#!/usr/bin/env bash
# control_abuse.sh - one client cannot hold the control plane, and a client
# is not an admin (docs/control.md, "Connections" and "Access"). Two daemons
# over four memif planes, each with its admin socket (X.sock, root only) and
# its client socket (X-client.sock, group nogroup); the client is an
# unprivileged user (uid 65534).
#
# - mrcd refuses to start on socket paths that are not its to take: the
#   control or client socket, or a memif server's socket, naming a regular
#   file (which stays as it was) or a socket another process serves.
# - The client is refused every admin command with EPERM (mrcctl says so),
#   nothing it asked for happened, its own commands work, and it cannot
#   open the admin socket or a memif plane's socket.
# - Against a's client socket, each during its own verified mrc-perf
#   transfer a -> b run by the client (its commands at work): a peer that
#   sends requests and never reads (disconnected, counted, logged), 1,000
#   idle connections (all held), and a connection flood. Throughout each,
#   the operator's `mrcctl status` on the admin socket answers every call
#   within 100 ms, and the transfer keeps moving and completes verified.
# - Daemon b runs under a 512-descriptor limit with max_connections 200: it
#   takes fewer connections (and says so), refuses the rest with EBUSY -
#   which mrcctl and libmrc-client report as the daemon's error - lets its
#   operator in, and closes the idle ones at control.idle_timeout_s.
# ABUSE_PHASES picks phases (default: paths rights noread idle flood b).
source "$(dirname "$0")/lib.sh"
ABUSER=${CTL_ABUSER:?path to ctl_abuser}
PERF=${MRC_PERF:?path to mrc-perf}
EX=${EXAMPLES:?path to the examples directory}
NOBODY=(setpriv --reuid 65534 --regid 65534 --clear-groups)
XFER=${ABUSE_TRANSFER_S:-30} # each phase's transfer, s: longer than its abuse lasts, also on a loaded host
B_IDLE=20                    # b's control.idle_timeout_s

getent group nogroup >/dev/null || { bad "no group nogroup (gid 65534) on this host"; finish; exit 1; }
chmod 711 "$T" # the unprivileged user reaches the client sockets, nothing else
make_configs
python3 - "$T/a.yaml" "$T/b.yaml" "$B_IDLE" <<'PY'
import re, sys
extra = {
    "a": "  client_group: nogroup\n  max_connections: 2000\n  admin_reserved: 8\n  idle_timeout_s: 120\n",
    "b": "  client_group: nogroup\n  max_connections: 200\n  admin_reserved: 8\n"
         "  idle_timeout_s: %s\n" % sys.argv[3],
}
for p, n in zip(sys.argv[1:3], "ab"):
    s = open(p).read()
    s, k = re.subn(r"(control:\n  socket: .*\n  mode: 0660\n  client_socket: .*\n)", r"\g<1>" + extra[n], s)
    assert k == 1, p
    open(p, "w").write(s)
PY
start_daemon a || { bad "daemon a starts"; finish; exit 1; }
# b: 512 descriptors at most (prlimit execs mrcd: the PID is mrcd's)
proc_start PID_b prlimit --nofile=512:512 "$MRCD" -c "$T/b.yaml" --seed 0x5eed > "$T/b.log" 2>&1
wait_for -p "$PID_b" 60 ctl b status || { bad "daemon b starts: $(tail -5 "$T/b.log")"; finish; exit 1; }
wait_for 30 links_up a && wait_for 30 links_up b || { bad "planes up"; finish; exit 1; }

ctlv() { ctlj "$1" control | jget "d[\"$2\"]"; }
phase() { echo "== $1 (t=${SECONDS}s)"; }

# probe SECONDS LABEL [PID]: the operator's `mrcctl status` on a's admin
# socket, one call after another, for SECONDS or, once PID has exited, after
# 10 calls. Every call must answer within 100 ms: mrcctl --timeout 0.1
# bounds the time from connecting to the reply (one deadline) and fails past
# it. The wall time of each call, process start included, is recorded too:
# on this shared 2-CPU host starting a process alone can take tens of ms.
probe() {
	local secs=$1 label=$2 pid=${3:-} n=0 worst=0 fails=0 t0 t1 us end start
	start=${EPOCHREALTIME//[.,]/}
	end=$((start + secs * 1000000))
	: > "$T/probe.err"
	while :; do
		t0=${EPOCHREALTIME//[.,]/}
		"$MRCCTL" -s "$T/a.sock" --timeout 0.1 status > /dev/null 2>> "$T/probe.err" || fails=$((fails + 1))
		t1=${EPOCHREALTIME//[.,]/}
		us=$((t1 - t0))
		n=$((n + 1))
		[ "$us" -gt "$worst" ] && worst=$us
		[ "$t1" -ge "$end" ] && break
		[ -n "$pid" ] && [ "$n" -ge 10 ] && ! kill -0 "$pid" 2>/dev/null && break
	done
	echo "$label: $n calls in $(( (t1 - start) / 1000 )) ms, $fails late or failed, worst wall time $((worst / 1000)) ms" \
		>> "$T/probe.txt"
	# at most one call late, and one more per 50: on a 2-CPU host whose two CPUs the
	# daemons' polling lcores already take, the daemon's control thread is
	# sometimes not scheduled for 100 ms whatever it does (one late call in
	# 33 at load 15); a daemon that lets a client hold it fails every call
	check "$label: the operator's status answered $((n - fails))/$n calls within 100 ms, at most 1 + 1 in 50 late (worst wall time $((worst / 1000)) ms)" \
		test "$n" -ge 10 -a "$fails" -le $((1 + n / 50))
	[ "$fails" -eq 0 ] || sed 's/^/    /' "$T/probe.err" | sort | uniq -c | head -3
}

# xfer_start NAME: a verified mrc-perf transfer a -> b for $XFER s, run by
# the client on the client sockets; returns once data moves.
port=18720
tx() { ctlj a qps | jget 'sum(q["tx_data_pkts"] for q in d)'; }
sending() { local n; n=$(tx) && num_cmp "$n" -gt "$1"; }
xfer_start() {
	port=$((port + 1))
	XNAME=$1
	proc_start srv "${NOBODY[@]}" "$PERF" -s "$T/b-client.sock" --server --port "$port" \
		--timeout $((XFER + 60)) > "$T/$1.srv" 2>&1
	# the client connects once: the server must be listening by then
	wait_for -p "$srv" 30 bash -c "ss -ltn | grep -q ':$port '" || bad "$1: the mrc-perf server listens: $(tail -2 "$T/$1.srv")"
	proc_start cli "${NOBODY[@]}" "$PERF" -s "$T/a-client.sock" --client 127.0.0.1 --port "$port" \
		--verify --duration "$XFER" --qps 2 --stats 1 --timeout $((XFER + 60)) > "$T/$1.perf" 2>&1
	wait_for -p "$cli" 30 sending 500 || bad "$1: the transfer starts: $(tail -2 "$T/$1.perf")"
	XBEFORE=$(tx)
}
# xfer_during: right after the abuse, the transfer is still running and
# moved data during it.
xfer_during() {
	local after
	after=$(tx)
	check "$XNAME: the transfer ran through it (else raise ABUSE_TRANSFER_S above ${XFER}s)" kill -0 "$cli"
	check "$XNAME: ... and kept moving ($XBEFORE -> $after data packets)" num_cmp "$after" -gt "$XBEFORE"
}
# xfer_end: then it completes with every message verified and no idle second.
xfer_end() {
	local rc stalls
	proc_wait_for $((XFER + 60)) bash -c "! kill -0 $cli 2>/dev/null"
	proc_stop -g 5 "$cli"
	rc=$?
	proc_stop -g 5 "$srv"
	stalls=$(grep -c "client.* 0.000 Gbit/s" "$T/$XNAME.perf")
	check "$XNAME: ... and completed, verified, no second at 0 Gbit/s: $(grep -E 'goodput' "$T/$XNAME.perf" | tr -s ' ' | cut -c1-90)" \
		test "$rc" -eq 0 -a "$stalls" -eq 0
}

phase baseline
probe 2 "baseline"

# ---- socket paths that are not ours to take ---------------------------------------
# mrcd started (not --check) on a path that is a regular file, or a socket
# another process serves: it refuses, the file is unchanged, and daemon a,
# whose sockets those are, goes on.
refused() { # refused WANT_RC WANT_MESSAGE WHAT: the last mrcd run ($rc, $T/bad.out)
	check "$3: exit $rc, the file untouched: $(head -1 "$T/bad.out")" \
		test "$rc" = "$1" -a "$(cat "$T/victim.txt")" = "keep me" -a "$(grep -cF -- "$2" "$T/bad.out")" = 1
}
phase_paths() {
	phase paths
	local v="$T/victim.txt" key
	echo "keep me" > "$v"
	for key in socket client_socket; do
		sed -E "s#^(  $key: ).*#\1$v#" "$T/a.yaml" > "$T/bad.yaml"
		"$MRCD" -c "$T/bad.yaml" > "$T/bad.out" 2>&1
		rc=$?
		refused 2 "control.$key: \"$v\" is a regular file, not a socket: refusing to replace it" \
			"control.$key naming a regular file"
	done
	sed -E -e "s#$T/plane1.sock#$v#" -e "s#^(  (client_)?socket: $T/)a#\1bad#" "$T/a.yaml" > "$T/bad.yaml"
	"$MRCD" -c "$T/bad.yaml" > "$T/bad.out" 2>&1
	rc=$?
	refused 1 "memif socket $v exists and is not a socket: refusing to replace it" \
		"a memif server's socket path naming a regular file"
	sed -E "s#^(  (client_)?socket: $T/)a#\1bad#" "$T/a.yaml" > "$T/bad.yaml"
	"$MRCD" -c "$T/bad.yaml" > "$T/bad.out" 2>&1
	rc=$?
	refused 1 "memif socket $T/plane1.sock: another process is listening there" \
		"a memif server's socket path that daemon a serves"
	# a live control socket: found once EAL is up (a null port, its own prefix)
	cat > "$T/bad.yaml" <<-EOF
	eal:
	  args: ["--no-huge", "--no-pci", "-m", "128", "--file-prefix", "mrcd-it-$(basename "$T")-bad"]
	ports:
	  - name: p0
	    devargs: net_null0,no-rx=1
	    ipv4: 10.9.0.1/24
	control:
	  socket: $T/a.sock
	EOF
	proc_start bad "$MRCD" -c "$T/bad.yaml" > "$T/bad.out" 2>&1
	proc_wait_for 60 bash -c "! kill -0 $bad 2>/dev/null"
	proc_stop -g 5 "$bad"
	rc=$?
	refused 1 "control.socket: $T/a.sock: another daemon is listening there" \
		"control.socket naming daemon a's live socket"
	check "... and daemon a still answers there, its planes up" links_up a
}

# ---- what a client may reach ------------------------------------------------------
phase_rights() {
	phase rights
	check "a memif plane's socket is a file the client cannot open" \
		"${NOBODY[@]}" /usr/bin/python3 -c "
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
try:
    s.connect(sys.argv[1]); sys.exit(1)
except PermissionError:
    sys.exit(0)" "$T/plane1.sock"
	"${NOBODY[@]}" "$MRCCTL" -s "$T/a.sock" version > /dev/null 2> "$T/eacces.err"
	check "the client cannot open the admin socket: $(cat "$T/eacces.err")" grep -q "Permission denied" "$T/eacces.err"
	hex=$(printf 'ab%.0s' $(seq 208))
	declare -A ARGS=(
		[status]="" [control]="" [neighbours]="" [lcores]="" [qps]="" [counters]=""
		[faults]="" [probes]="" [fault_clear]="" [selftest_listen]=""
		[qp]="qpn=1" [evs]="qpn=1" [ev_deny]="qpn=1 ev=0 deny=true"
		[fault_set]="port=plane1 blackhole=true" [port_admin]="port=plane1 up=false"
		[log_level]="level=debug" [ev_probe]="node=10.1.0.2 port=plane1 ev=0"
		[selftest_start]="peer_info=$hex bytes=1048576" [selftest_accept]="id=1 peer_info=$hex"
		[selftest_run]="id=1" [selftest_status]="id=1" [selftest_stop]="id=1"
	)
	admin_cmds=$("$MRCCTL" help | awk '$2 == "[admin]" && $1 != "selftest" { print $1 }')
	n_admin=0 refused=0
	for c in $admin_cmds; do
		n_admin=$((n_admin + 1))
		if [ -z "${ARGS[$c]+set}" ]; then
			bad "admin command $c has no arguments in this test: add it to ARGS"
			continue
		fi
		# shellcheck disable=SC2086
		"${NOBODY[@]}" "$MRCCTL" -s "$T/a-client.sock" "$c" ${ARGS[$c]} > /dev/null 2> "$T/eperm.err"
		rc=$?
		if [ "$rc" -eq 1 ] && grep -q "an admin command.*(EPERM)$" "$T/eperm.err"; then
			refused=$((refused + 1))
		else
			bad "$c as a client: exit $rc, $(cat "$T/eperm.err")"
		fi
	done
	check "a client is refused every admin command with EPERM ($refused of $n_admin)" \
		test "$refused" -eq "$n_admin" -a "$n_admin" -ge 20
	"${NOBODY[@]}" "$MRCCTL" -s "$T/a-client.sock" selftest --peer "$T/b-client.sock" --bytes 1M \
		> /dev/null 2> "$T/eperm.err"
	check "... and mrcctl selftest (EPERM)" grep -q "(EPERM)" "$T/eperm.err"
	sed 's/^/    /' "$T/eperm.err" | head -1
	check "nothing a client asked for happened: no fault rule, every port admin up" \
		test "$(ctlj a faults | jget 'len(d)')" = 0 -a \
		"$(ctlj a ports | jget 'all(p["admin"] == "up" for p in d)')" = True
	check "the client's own commands work: version, ports" \
		bash -c "${NOBODY[*]} '$MRCCTL' -s '$T/a-client.sock' version > /dev/null &&
			 ${NOBODY[*]} '$MRCCTL' -s '$T/a-client.sock' ports > /dev/null"
	check "the refusals are counted (refused_rights)" num_cmp "$(ctlv a refused_rights)" -ge "$n_admin"
}

# ---- a peer that never reads --------------------------------------------------------
phase_noread() {
	phase noread
	xfer_start "non-reading client"
	proc_start nr "${NOBODY[@]}" "$ABUSER" noread "$T/a-client.sock" 30 > "$T/noread.out" 2>&1
	probe 5 "non-reading client" "$nr"
	xfer_during
	proc_stop -g 5 "$nr"
	check "the non-reading client was disconnected: $(cat "$T/noread.out")" \
		test "$(jget 'd["closed_by_daemon"]' < "$T/noread.out")" = True
	check "... counted (closed_slow)" num_cmp "$(ctlv a closed_slow)" -ge 1
	check "... and logged" grep -q "replies unread" "$T/a.log"
	xfer_end
}

# ---- 1,000 idle connections ---------------------------------------------------------
phase_idle() {
	phase idle
	xfer_start "1,000 idle connections"
	proc_start idle "${NOBODY[@]}" "$ABUSER" idle "$T/a-client.sock" 1000 120 > "$T/idle.out" 2>&1
	held() { local n; n=$(ctlv a open_client) && num_cmp "$n" -ge "$1"; }
	wait_for -p "$idle" 20 held 1000
	check "1,000 idle connections held by the daemon (open_client $(ctlv a open_client)): $(head -1 "$T/idle.out")" \
		held 1000
	probe 3 "1,000 idle connections"
	xfer_during
	xfer_end
	proc_stop -g 5 "$idle"
	none_open() { [ "$(ctlv a open_client)" = 0 ]; }
	wait_for 20 none_open
	check "... and let go when their peer closes them (open_client $(ctlv a open_client))" none_open
}

# ---- a connection flood ---------------------------------------------------------------
phase_flood() {
	phase flood
	xfer_start "connection flood"
	taken0=$(( $(ctlv a accepted) + $(ctlv a refused_busy) ))
	proc_start fl "${NOBODY[@]}" "$ABUSER" flood "$T/a-client.sock" 5 > "$T/flood.out" 2>&1
	probe 5 "connection flood" "$fl"
	xfer_during
	proc_wait_for 10 bash -c "! kill -0 $fl 2>/dev/null"
	proc_stop -g 5 "$fl"
	check "a flood of connections: $(cat "$T/flood.out")" \
		num_cmp "$(jget 'd["connects"]' < "$T/flood.out")" -gt 1000
	# the flooder's last connections may still wait in the listen queue when
	# it exits: on a loaded host the daemon takes them a round or two later
	connects=$(jget 'd["connects"]' < "$T/flood.out")
	taken_all() { taken=$(( $(ctlv a accepted) + $(ctlv a refused_busy) - taken0 )); num_cmp "$taken" -ge "$connects"; }
	wait_for 30 taken_all
	check "... every one taken by the daemon, let in or refused ($taken of $connects), and let go (open $(ctlv a open))" \
		num_cmp "$taken" -ge "$connects"
	xfer_end
}

# ---- b: fewer descriptors than connections --------------------------------------------
phase_b() {
	phase b
	check "b takes fewer connections than configured, and says so" \
		grep -q "control connections instead of control.max_connections 200" "$T/b.log"
	bmax=$(ctlv b max_connections)
	check "b: max_connections $bmax < 200" num_cmp "$bmax" -lt 200
	proc_start full "${NOBODY[@]}" "$ABUSER" idle "$T/b-client.sock" 300 $((B_IDLE + 60)) > "$T/full.out" 2>&1
	wait_for -p "$full" 20 grep -q ready "$T/full.out"
	full() { [ "$(ctlv b open_client)" = "$((bmax - 8))" ]; }
	wait_for 20 full
	check "b full of clients: open_client $(ctlv b open_client) = $bmax - 8" full
	check "b's operator still gets in" ctl b status
	"${NOBODY[@]}" "$MRCCTL" -s "$T/b-client.sock" version > /dev/null 2> "$T/busy.err"
	check "a client is refused with EBUSY and told why: $(cat "$T/busy.err")" \
		grep -q "too many control connections.*(EBUSY)" "$T/busy.err"
	"${NOBODY[@]}" "$EX/hello_write" "$T/b-client.sock" > "$T/busy.app" 2>&1
	check "libmrc-client reports the daemon's EBUSY, not a protocol error: $(head -1 "$T/busy.app")" \
		grep -q "^mrc_open: .*: too many control connections" "$T/busy.app"
	check "b counted the refusals (refused_busy $(ctlv b refused_busy))" \
		num_cmp "$(ctlv b refused_busy)" -ge "$((300 - bmax))"
	# the connections it holds are idle: closed at idle_timeout_s
	proc_wait_for $((B_IDLE + 60)) bash -c "! kill -0 $full 2>/dev/null"
	proc_stop -g 5 "$full"
	check "b closed the idle ones after idle_timeout_s ${B_IDLE}s, not before: $(tail -1 "$T/full.out")" \
		test "$(tail -1 "$T/full.out" | jget "d['closed_by_daemon'] == d['opened'] == 300 and $B_IDLE <= d['seconds'] < $B_IDLE + 30")" = True
	check "... counted (closed_idle $(ctlv b closed_idle))" num_cmp "$(ctlv b closed_idle)" -ge "$((bmax - 8))"
}

for p in ${ABUSE_PHASES:-paths rights noread idle flood b}; do
	"phase_$p"
done
sed 's/^/    /' "$T/probe.txt"
check "daemon a still answers" ctl a status
finish
