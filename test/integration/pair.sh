#!/usr/bin/env bash
# pair.sh - two mrcd joined by four memif pairs (four planes): ARP, EV
# probes, Port Status Updates, and verified selftest transfers lossless,
# with 1% drop on every plane, and with a plane blackholed mid-transfer.
source "$(dirname "$0")/lib.sh"
BYTES=${PAIR_BYTES:-256M}
BIG=${PAIR_BIG_BYTES:-2G}   # transfers that must still be running when we act mid-way

start_pair || { bad "daemons start and links come up"; finish; exit 1; }
ok "daemons start and links come up"

selftest() { # selftest NAME [args]: run a verified transfer a -> b
	local name=$1; shift
	if ctl a selftest --peer "$T/b.sock" --timeout 120 --json "$@" > "$T/st-$name.json" 2> "$T/st-$name.err"; then
		ok "selftest $name: $(jget '"%.2f Gbit/s, %d rtx, %d EV transitions, %d verify errors" % (d["sender"]["goodput_gbps"], d["sender"]["rtx_total"], d["sender"]["ev_transitions"], d["receiver"]["verify_errors"])' < "$T/st-$name.json")"
	else
		bad "selftest $name: $(cat "$T/st-$name.err")"
	fi
}

# 1. lossless
selftest lossless --bytes "$BYTES"
# b has no static neighbours: it found a's MACs by ARP on every plane
learned=$(ctlj b counters | jget 'sum(p["neigh"]["learned"] > 0 for p in d["ports"].values())')
check "b resolved a by ARP on all 4 planes (got $learned)" test "$learned" = 4

# 2. EV probes report RTTs (a probes b's node on each plane). A probe has
# 2 ms to be answered (D57): on a loaded 2-CPU host a descheduled daemon can
# miss that, so a plane whose probe timed out is probed again, at most three
# rounds; every plane must be answered with an RTT.
planes_ok() { ctlj a probes | jget '" ".join(sorted({str(p["plane"]) for p in d if 4001 <= p["ev"] <= 4004 and p["ok"] and p["rtt_us"] > 0}))'; }
probes_done() { [ "$(ctlj a probes | jget 'sum(1 for p in d if 4001 <= p["ev"] <= 4004)')" -ge "$1" ]; }
sent=0
for round in 1 2 3; do
	ok=" $(planes_ok) "
	for plane in 1 2 3 4; do
		case "$ok" in *" $plane "*) continue ;; esac
		ctl a ev-probe node=10.1.0.2 port=$plane ev=$((4000 + plane)) >/dev/null 2>&1 && sent=$((sent + 1))
	done
	wait_for 5 probes_done "$sent" || true
	[ "$(planes_ok)" = "1 2 3 4" ] && break
done
check "EV probes answered on 4 planes with RTTs (planes: $(planes_ok); round $round)" \
	test "$(planes_ok)" = "1 2 3 4"

# 3. a port admin-down on a, in the middle of a transfer, shows up at b as a
# Port Status Update (D50: peers with a live QP are told), and the transfer
# goes on over the other planes; admin-up brings the plane back.
proc_start st ctl a selftest --peer "$T/b.sock" --timeout 120 --json --bytes "$BIG" > "$T/st-psu.json" 2> "$T/st-psu.err"
sending() { [ "$(ctlj a qps | jget 'sum(q["tx_data_pkts"] for q in d)')" -gt 500 ]; }
wait_for 30 sending
ctl a port-admin port=plane3 up=false >/dev/null
check "the transfer was still running at admin-down" kill -0 "$st"
mask_is() { [ "$(ctlj b status | jget '[p["port_mask"] for p in d["peers"] if p["node"] == "10.1.0.1"][0]')" = "$1" ]; }
check "b sees a's port mask 0xb after plane3 admin-down" wait_for 5 mask_is 0xb
ctl a port-admin port=plane3 up=true >/dev/null
check "b sees a's port mask 0xf after plane3 admin-up" wait_for 5 mask_is 0xf
if wait "$st"; then
	ok "selftest across a plane down and up: $(jget '"%.2f Gbit/s, %d rtx (%d port-down)" % (d["sender"]["goodput_gbps"], d["sender"]["rtx_total"], d["sender"]["rtx_port_down"])' < "$T/st-psu.json")"
else
	bad "selftest across a plane down and up: $(cat "$T/st-psu.err")"
fi

# 4. 1% drop on every plane, both directions
for plane in 1 2 3 4; do
	ctl a fault-set port=$plane drop_pct=1 direction=both >/dev/null
done
selftest drop1pct --bytes "$BYTES"
dropped=$(ctlj a counters | jget 'sum(p["fault"]["dropped"] for p in d["ports"].values())')
check "the drop rules dropped packets ($dropped)" test "$dropped" -gt 0
ctl a fault-clear >/dev/null

# 5. one plane blackholed mid-transfer (silent: the link stays up)
proc_start st ctl a selftest --peer "$T/b.sock" --timeout 120 --json --bytes "$BIG" > "$T/st-bh.json" 2> "$T/st-bh.err"
sending() { [ "$(ctlj a qps | jget 'sum(q["tx_data_pkts"] for q in d)')" -gt 500 ]; }
wait_for 30 sending
ctl a fault-set port=plane2 blackhole=true direction=both >/dev/null
check "the transfer was still running at the blackhole" kill -0 "$st"
if wait "$st"; then
	ok "selftest blackhole-mid-transfer: $(jget '"%.2f Gbit/s, %d rtx, %d EV transitions" % (d["sender"]["goodput_gbps"], d["sender"]["rtx_total"], d["sender"]["ev_transitions"])' < "$T/st-bh.json")"
else
	bad "selftest blackhole-mid-transfer: $(cat "$T/st-bh.err")"
fi
bh=$(ctlj a counters | jget 'd["ports"]["plane2"]["fault"]["blackholed"]')
check "the blackhole swallowed packets ($bh)" test "$bh" -gt 0
ctl a fault-clear >/dev/null

check "a exits 0 on SIGTERM" stop_daemon a
check "b exits 0 on SIGTERM" stop_daemon b
left=$(find "$T" -name '*.sock' | wc -l)
check "no socket files left ($left)" test "$left" -eq 0
finish
