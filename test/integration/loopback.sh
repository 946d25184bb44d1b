#!/usr/bin/env bash
# loopback.sh - one daemon talking to itself (D71) and QP errors seen by the
# client (D70). A daemon with two net_null planes (the wire leads nowhere)
# runs the examples between two of its own clients: frames to one of its own
# port addresses go straight to its own receive path, counted in tx_local /
# rx_local, none lost to an unresolved neighbour. Then a WriteImm to a QP
# with no receive posted: both sides see the error at once (qp_errors), and
# qp_query needs a client session. Once with one worker, once with two
# (the two contexts' sessions on different workers: the looped frames are
# steered). Every run has a deadline; a hang is a failure.
source "$(dirname "$0")/lib.sh"
EX=${EXAMPLES:?path to the examples directory}
QPE=${QP_ERRORS:?path to the qp_errors test program}

# config NAME WORKERS: one daemon, two net_null planes, its socket in $T
config() {
	local n=$1 w=$2 ids lc
	if [ "$w" = 2 ]; then ids="[1, 2]"; lc=', "--lcores", "0@0,1@1,2@0"'; else ids="[1]"; lc=""; fi
	cat > "$T/$n.yaml" <<EOF
eal:
  args: ["--no-huge", "--no-pci", "-m", "256"$lc, "--file-prefix", "mrcd-it-$(basename "$T")-$n"]
ports:
  - name: plane1
    devargs: net_null0,no-rx=1
    ipv4: 10.71.1.1/24
  - name: plane2
    devargs: net_null1,no-rx=1
    ipv4: 10.71.2.1/24
lcores:
  ids: $ids
  idle: adaptive
control:
  socket: $T/$n.sock
EOF
}

# port_sum NAME KEY: KEY summed over the daemon's ports
port_sum() { ctlj "$1" ports | jget "sum(p[\"$2\"] for p in d)"; }

pp() { # pp NAME WHAT [pingpong args]: a pingpong that must pass; its RTT in the line
	local n=$1 what=$2; shift 2
	if timeout 120 "$EX/pingpong" "$@" > "$T/$n-pp.out" 2>&1; then
		ok "$what: $(tail -1 "$T/$n-pp.out")"
	else
		bad "$what: $(tail -3 "$T/$n-pp.out")"
	fi
}

run_on() { # run_on NAME WORKERS
	local n=$1 w=$2
	config "$n" "$w"
	start_daemon "$n" || { bad "$n: daemon with $w worker(s) starts"; return; }
	check "$n: both planes up" wait_for 30 links_up "$n"
	check "$n ($w worker(s)): hello_write between two clients of one daemon" \
		timeout 60 "$EX/hello_write" "$T/$n.sock"
	pp "$n" "$n: pingpong on one daemon, blocking waits" -s "$T/$n.sock" -n 300 -w
	pp "$n" "$n: pingpong on one daemon, busy-polling" -s "$T/$n.sock" -n 100
	local txl rxl nn
	txl=$(port_sum "$n" tx_local) rxl=$(port_sum "$n" rx_local) nn=$(port_sum "$n" tx_no_neigh)
	check "$n: frames went to the daemon's own receive path (tx_local $txl)" num_cmp "$txl" -ge 1000
	check "$n: and all arrived there (rx_local $rxl)" num_cmp "$rxl" -eq "$txl"
	check "$n: none waited for a neighbour (tx_no_neigh $nn)" num_cmp "$nn" -eq 0
	if [ "$w" = 2 ]; then
		local ho
		ho=$(ctlj "$n" lcores | jget 'sum(x["handover_out"] for x in d)')
		check "$n: looped frames were steered to the other worker (handover_out $ho)" num_cmp "$ho" -ge 100
	fi
	check "$n: selftest with itself as the peer" \
		"$MRCCTL" -s "$T/$n.sock" selftest --peer "$T/$n.sock" --bytes 8M --timeout 60
	if timeout 60 "$QPE" "$T/$n.sock" > "$T/$n-qpe.out" 2>&1; then
		ok "$n: a WriteImm with no receive: both sides told at once ($(grep -c '^ok' "$T/$n-qpe.out") checks)"
	else
		bad "$n: qp_errors: $(grep -v '^ok' "$T/$n-qpe.out" | head -5)"
	fi
	"$MRCCTL" -s "$T/$n.sock" qp-query qpn=1 > "$T/$n-qq.out" 2>&1
	local rc=$?
	check "$n: qp_query without a client session is refused (exit $rc: $(cat "$T/$n-qq.out"))" \
		grep -q EPERM "$T/$n-qq.out"
	stop_daemon "$n"
	check "$n: daemon exits 0" test $? -eq 0
}

run_on one 1
run_on two 2
finish
