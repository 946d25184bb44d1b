#!/usr/bin/env bash
# spoof.sh - a packet from anyone but a QP's peer changes nothing
# (protocol.md §4.2, D69). Two daemons, a (receiver) and b (sender), each on
# an af_packet port in a network namespace of its own, joined by a veth
# pair: a verified selftest b -> a, and a host on the link (mrc_inject, our
# own encoder: valid headers and ICRC) that sends crafted MRC frames to both:
#   - a wrong source address with the right QPN: Writes with the right key
#     (would be placed), a wrong key (would put the QP into ERROR), a reused
#     MSN (ERROR), a reliability probe (would be answered); from the subnet
#     and from off it;
#   - the right source (b's address) with the wrong QPN: Writes to a's
#     other QP, whose peer is another node (a wrong key would be ERROR),
#     and SACKs and NACKs to a's and b's QPs naming another QP in spdcid
#     (a SACK would acknowledge data that never arrived);
#   - to the sender: an AETH NAK from elsewhere (would fail the QP);
#   - IPv6 only: SRv6 frames whose outer source is not the inner one.
# Checked, for IPv4 and IPv6: before the transfer every field of both of a's
# QPs is unchanged by the spoofing (mrcctl qp); during it - b's transmit
# side blackholed (mrcd's own fault stage) so that data is outstanding and
# unacknowledged for as long as the spoofing lasts, whatever the speed of
# the host; b's exp_cnt 25, so the hold cannot exhaust its retries - a's
# window and b's send state do not move (a spoofed SACK would acknowledge
# data that never arrived); after the blackhole is cleared the transfer
# completes with every byte verified, the QPs stay RTS with no error
# completion; each side's rx_foreign_src counts exactly the frames sent to
# its QPs (and rx_bad_frame the SRv6 ones). Namespaces, links and processes
# go in the trap (proc.sh).
source "$(dirname "$0")/lib.sh"
INJECT=${MRC_INJECT:?path to mrc_inject}

NA="mrcd-spa$$" NB="mrcd-spb$$" VA="mspa$$" VB="mspb$$"
for ns in "$NA" "$NB"; do
	if ! ip netns add "$ns" 2>/dev/null; then
		echo "cannot create a network namespace: skipping"; echo "0 passed, 0 failed"; exit 77
	fi
	cleanup_netns "$ns"
	ip -n "$ns" link set lo up
done
# the veths live in the namespaces: deleting them removes the pair
ip link add "$VA" netns "$NA" type veth peer name "$VB" netns "$NB"
# the kernels at either end have no address on them and stay quiet
ip netns exec "$NA" sysctl -qw "net.ipv6.conf.$VA.disable_ipv6=1"
ip netns exec "$NB" sysctl -qw "net.ipv6.conf.$VB.disable_ipv6=1"
ip -n "$NA" link set "$VA" up
ip -n "$NB" link set "$VB" up
MAC_A=02:98:00:00:00:01 MAC_B=02:98:00:00:00:02 MAC_X=02:98:00:00:00:66
BYTES=$((64 << 20))

write_config() { # write_config NAME IFACE MAC ADDR/PREFIX KEY(ipv4|ipv6) [TRANSPORT...]
	cat > "$T/$1.yaml" <<EOF
eal:
  args: ["--no-huge", "--no-pci", "-m", "256", "--file-prefix", "mrcd-it-$(basename "$T")-$1"]
ports:
  - name: veth
    devargs: net_af_packet0,iface=$2,qpairs=1
    mac: "$3"
    $5: $4
transport: {mtu: 1024${6:+, $6}}
control: {socket: $T/$1.sock}
EOF
}
start_in() { # start_in NS NAME
	local pid
	proc_start pid ip netns exec "$1" "$MRCD" -c "$T/$2.yaml" --seed 0x5eed > "$T/$2.log" 2>&1
	eval "PID_$2=$pid"
	wait_for -p "$pid" 60 ctl "$2" status || { echo "daemon $2 did not start:"; tail -20 "$T/$2.log"; return 1; }
}
# info FIELD HEX: a field of a connection-info blob (protocol.md §8.1)
info() {
	python3 - "$1" "$2" <<'PY'
import sys
f, b = sys.argv[1], bytes.fromhex(sys.argv[2])
at = {"qpn": (12, 4), "psn": (16, 4), "va": (186, 8), "rkey": (194, 4)}[f]
print(int.from_bytes(b[at[0]:at[0] + at[1]], "big"))
PY
}
# fake_peer HEX ADDR: the blob HEX as if from another node at ADDR, QPN 0x345
fake_peer() {
	python3 - "$1" "$2" <<'PY'
import ipaddress, sys
b = bytearray(bytes.fromhex(sys.argv[1]))
ip = ipaddress.ip_address(sys.argv[2])
a = bytes([ip.version]) + ip.packed.ljust(16, b"\0")
b[12:16] = (0x345).to_bytes(4, "big")
b[20:37] = a                       # node address
b[38:55] = a                       # port 1
print(b.hex())
PY
}
eng() { ctlj "$1" counters | jget "d['engine']['$2']"; }
port_c() { ctlj "$1" counters | jget "d['ports']['veth']['$2']"; }
eng_is() { [ "$(eng "$1" "$2")" = "$3" ]; }       # eng_is NAME COUNTER VALUE
port_is() { [ "$(port_c "$1" "$2")" = "$3" ]; }   # port_is NAME COUNTER VALUE
st_field() { ctlj "$1" selftest_status id="$2" | jget "d['$3']"; }
st_not_running() { [ "$(st_field "$1" "$2" state)" != running ]; }
st_has_all() { [ "$(st_field "$1" "$2" bytes_done)" = "$BYTES" ]; }
qp_of() { ctlj "$1" qp qpn="$2" > "$3"; }
has_sent() { # has_sent NAME QPN PSN0: the QP's next_psn has left its first PSN
	local n
	n=$(ctlj "$1" qp qpn="$2" | jget 'd["next_psn"]') && is_num "$n" && [ "$n" != "$3" ]
}
same_json() { # same_json A B: identical documents, else the fields that differ
	python3 - "$1" "$2" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
def walk(x, y, path):
    if isinstance(x, dict) and isinstance(y, dict):
        for k in sorted(set(x) | set(y)):
            walk(x.get(k), y.get(k), path + "." + k)
    elif x != y:
        bad.append("%s: %s -> %s" % (path, x, y))
bad = []
walk(a, b, "")
if not a or bad:
    print("  changed: " + ("; ".join(bad) if bad else "(empty document)"))
    sys.exit(1)
PY
}
spec_count() { grep -cv '^\s*\(#\|$\)' "$1"; }
inject_from() { # inject_from NS IFACE DST_MAC SPEC: every frame of SPEC sent
	local sent
	sent=$(ip netns exec "$1" "$INJECT" "$2" "$MAC_X" "$3" < "$4") &&
		[ "$sent" = "$(spec_count "$4")" ] || { echo "  mrc_inject sent '$sent' of $(spec_count "$4")"; return 1; }
}

run_family() { # run_family 4|6
	local fam=$1 key A B X OFF P ia ib ic id_a id_b id_c qa qb qc psn_b va rk bad_rk wrong_b wrong_a
	local na=0 nb=0 nbad=0 n st_a st_b
	if [ "$fam" = 4 ]; then
		key=ipv4 A=10.98.0.1 B=10.98.0.2 X=10.98.0.66 OFF=192.0.2.1 P=/24
	else
		key=ipv6 A=fd98::1 B=fd98::2 X=fd98::66 OFF=2001:db8::1 P=/64
	fi
	write_config a "$VA" "$MAC_A" "$A$P" "$key"
	write_config b "$VB" "$MAC_B" "$B$P" "$key" "exp_cnt: 25"
	start_in "$NA" a && start_in "$NB" b || { bad "IPv$fam: daemons start on af_packet in namespaces"; return; }
	wait_for 30 links_up a && wait_for 30 links_up b || { bad "IPv$fam: links up"; return; }

	# b -> a, set up but not running yet; a's second QP is connected to a
	# node that does not exist (C), so b's address is not its peer's
	ctlj a selftest_listen region_bytes=$((16 << 20)) detach=true > "$T/la.json" &&
		ia=$(jget 'd["info"]' < "$T/la.json") && id_a=$(jget 'd["id"]' < "$T/la.json") &&
		ctlj b selftest_start peer_info="$ia" bytes=$BYTES msg_size=65536 detach=true > "$T/sb.json" &&
		ib=$(jget 'd["info"]' < "$T/sb.json") && id_b=$(jget 'd["id"]' < "$T/sb.json") &&
		ctlj a selftest_accept id="$id_a" peer_info="$ib" > /dev/null &&
		ctlj a selftest_listen region_bytes=1048576 detach=true > "$T/lc.json" &&
		ic=$(jget 'd["info"]' < "$T/lc.json") && id_c=$(jget 'd["id"]' < "$T/lc.json") &&
		ctlj a selftest_accept id="$id_c" peer_info="$(fake_peer "$ib" "${X%66}77")" > /dev/null ||
		{ bad "IPv$fam: selftest set up by hand (listen, start, accept)"; return; }
	qa=$(info qpn "$ia") qb=$(info qpn "$ib") qc=$(info qpn "$ic") psn_b=$(info psn "$ib")
	va=$(info va "$ia") rk=$(info rkey "$ia")
	bad_rk=$((rk ^ 0x5500)) wrong_b=$(((qb + 1) & 0xFFFF)) wrong_a=$(((qa + 1) & 0xFFFF))
	check "IPv$fam: a's QPs $qa (peer b's $qb) and $qc (peer C) are RTS" \
		test "$(ctlj a qp qpn="$qa" | jget 'd["state"]') $(ctlj a qp qpn="$qc" | jget 'd["state"]')" = "RTS RTS"

	# phase 1: everything idle; every spoofed frame goes to a's QPs
	cat > "$T/spoof-a.spec" <<EOF
# wrong source, right QPN
write src=$X dst=$A qpn=$qa psn=$psn_b msn=0 rkey=$rk va=$va len=64
write src=$X dst=$A qpn=$qa psn=$psn_b msn=0 rkey=$bad_rk va=$va len=64
write src=$X dst=$A qpn=$qa psn=$psn_b msn=0xffff rkey=$rk va=$va len=64
probe src=$X dst=$A qpn=$qa psn=$psn_b spdcid=$((qb & 0xFFFF)) dpdcid=$((qa & 0xFFFF))
write src=$OFF dst=$A qpn=$qa psn=$psn_b msn=0 rkey=$rk va=$va len=64
write src=$OFF dst=$A qpn=$qa psn=$psn_b msn=0 rkey=$bad_rk va=$va len=64
# right source (b), wrong QPN: a QP whose peer is C, and another QPN named
write src=$B dst=$A qpn=$qc psn=$psn_b msn=0 rkey=$bad_rk va=$va len=64
write src=$B dst=$A qpn=$qc psn=$psn_b msn=0 rkey=$rk va=$va len=64
sack src=$B dst=$A qpn=$qa psn=0 cack=0 spdcid=$wrong_b dpdcid=$((qa & 0xFFFF))
nack src=$B dst=$A qpn=$qa psn=0 spdcid=$wrong_b dpdcid=$((qa & 0xFFFF))
EOF
	n=$(spec_count "$T/spoof-a.spec")
	qp_of a "$qa" "$T/qa0.json"; qp_of a "$qc" "$T/qc0.json"
	check "IPv$fam: $n spoofed frames sent to a" inject_from "$NB" "$VB" "$MAC_A" "$T/spoof-a.spec"
	na=$((na + n))
	check "IPv$fam: a counted them all in rx_foreign_src" wait_for 10 eng_is a rx_foreign_src "$na"
	qp_of a "$qa" "$T/qa1.json"; qp_of a "$qc" "$T/qc1.json"
	check "IPv$fam: a's QP from b unchanged, field by field" same_json "$T/qa0.json" "$T/qa1.json"
	check "IPv$fam: a's QP from C unchanged, field by field" same_json "$T/qc0.json" "$T/qc1.json"
	check "IPv$fam: a's selftest saw no data" test "$(st_field a "$id_a" bytes_done)" = 0

	if [ "$fam" = 6 ]; then
		# SRv6: the outer source must be the inner one (§2.3): the
		# genuine peer's inner address behind a stranger's outer one
		cat > "$T/srv6.spec" <<EOF
write src=$B osrc=$X srv6=fc00:1:: dst=$A qpn=$qa psn=$psn_b msn=0 rkey=$bad_rk va=$va len=64
write src=$B osrc=$X srv6=fc00:1:: dst=$A qpn=$qa psn=$psn_b msn=0xffff rkey=$rk va=$va len=64
EOF
		nbad=$(spec_count "$T/srv6.spec")
		local bf0
		bf0=$(port_c a rx_bad_frame)
		check "IPv6: $nbad SRv6 frames with a foreign outer source sent" \
			inject_from "$NB" "$VB" "$MAC_A" "$T/srv6.spec"
		check "IPv6: a dropped them as malformed (rx_bad_frame)" \
			wait_for 10 port_is a rx_bad_frame "$((bf0 + nbad))"
		qp_of a "$qa" "$T/qa2.json"
		check "IPv6: a's QP from b still unchanged" same_json "$T/qa0.json" "$T/qa2.json"
	fi

	# phase 2: the transfer starts with b's transmissions blackholed, so its
	# data stays outstanding while both sides are spoofed in rounds with
	# PSNs in their windows (a's next expected PSN; b's last one sent)
	local rule cack cack0 next0 una0 rounds
	rule=$(ctlj b fault_set port=veth direction=tx blackhole=true | jget 'd["rule"]') &&
		ctlj b selftest_run id="$id_b" > /dev/null || { bad "IPv$fam: blackhole b, selftest_run"; return; }
	check "IPv$fam: b has sent data (into its blackhole)" wait_for 30 has_sent b "$qb" "$psn_b"
	qp_of a "$qa" "$T/qa3.json"; qp_of b "$qb" "$T/qb3.json"
	cack0=$(jget 'd["rcv_cack"]' < "$T/qa3.json") next0=$(jget 'd["next_psn"]' < "$T/qb3.json")
	una0=$(jget 'd["snd_una"]' < "$T/qb3.json")
	if ! is_num "$cack0" || ! is_num "$next0" || ! is_num "$una0"; then
		bad "IPv$fam: a's rcv_cack ($cack0), b's next_psn ($next0) and snd_una ($una0) read"; return
	fi
	local p1=$(((cack0 + 1) & 0xFFFFFF)) last=$(((next0 + 0xFFFFFF) & 0xFFFFFF))
	cat > "$T/round-a.spec" <<EOF
write src=$X dst=$A qpn=$qa psn=$p1 msn=0 rkey=$bad_rk va=$va len=64
write src=$OFF dst=$A qpn=$qa psn=$p1 msn=0 rkey=$rk va=$va len=64
write src=$X dst=$A qpn=$qa psn=$p1 msn=0xffff rkey=$rk va=$va len=64
EOF
	cat > "$T/round-b.spec" <<EOF
sack src=$A dst=$B qpn=$qb psn=$last cack=$last spdcid=$wrong_a dpdcid=$((qb & 0xFFFF))
nack src=$A dst=$B qpn=$qb psn=$last spdcid=$wrong_a dpdcid=$((qb & 0xFFFF))
ack src=$X dst=$B qpn=$qb psn=$last syndrome=0x62 msn=0
sack src=$X dst=$B qpn=$qb psn=$last cack=$last spdcid=$((qa & 0xFFFF)) dpdcid=$((qb & 0xFFFF))
EOF
	for rounds in 1 2 3; do
		inject_from "$NB" "$VB" "$MAC_A" "$T/round-a.spec" &&
			inject_from "$NA" "$VA" "$MAC_B" "$T/round-b.spec" || { bad "IPv$fam: round $rounds sent"; break; }
		na=$((na + $(spec_count "$T/round-a.spec"))) nb=$((nb + $(spec_count "$T/round-b.spec")))
	done
	wait_for 10 eng_is a rx_foreign_src "$na"
	wait_for 10 eng_is b rx_foreign_src "$nb"
	cack=$(ctlj a qp qpn="$qa" | jget 'd["rcv_cack"]')
	check "IPv$fam: still running after $rounds rounds of spoofing, held by the blackhole" \
		test "$(st_field b "$id_b" state)" = running
	check "IPv$fam: a's window did not move (rcv_cack $cack, was $cack0)" test "$cack" = "$cack0"
	check "IPv$fam: b's unacknowledged data stayed so (snd_una $(ctlj b qp qpn="$qb" | jget 'd["snd_una"]'), was $una0)" \
		test "$(ctlj b qp qpn="$qb" | jget 'd["snd_una"]')" = "$una0"
	check "IPv$fam: blackhole cleared" eval 'ctl b fault_clear rule="$rule" > /dev/null'
	check "IPv$fam: the transfer finished" wait_for 120 st_not_running b "$id_b"
	ctlj b selftest_status id="$id_b" > "$T/st-b.json"
	wait_for 20 st_has_all a "$id_a" # the receiver's last completions
	ctlj a selftest_status id="$id_a" > "$T/st-a.json"
	st_b=$(jget 'd["state"] + " " + d["error"]' < "$T/st-b.json")
	check "IPv$fam: sender done ($st_b), $(jget 'd["bytes_done"]' < "$T/st-b.json") B" \
		test "$(jget 'd["state"] == "done" and d["bytes_done"] == '$BYTES < "$T/st-b.json")" = True
	check "IPv$fam: receiver got every byte, verified ($(jget '"%d B, %d verify errors" % (d["bytes_done"], d["verify_errors"])' < "$T/st-a.json"))" \
		test "$(jget 'd["bytes_done"] == '$BYTES' and d["verify_errors"] == 0 and d["imm_msgs"] > 0' < "$T/st-a.json")" = True
	for s in "a $qa" "b $qb" "a $qc"; do
		set -- $s
		check "IPv$fam: $1's QP $2 still RTS, no error completion" \
			test "$(ctlj "$1" qp qpn="$2" | jget 'd["state"] == "RTS" and d["counters"]["wc_err"] == 0')" = True
	done
	wait_for 10 eng_is a rx_foreign_src "$na"
	check "IPv$fam: a counted every frame spoofed to it ($(eng a rx_foreign_src) of $na)" \
		eng_is a rx_foreign_src "$na"
	wait_for 10 eng_is b rx_foreign_src "$nb"
	check "IPv$fam: b counted every frame spoofed to it ($(eng b rx_foreign_src) of $nb)" \
		eng_is b rx_foreign_src "$nb"
	for x in "a $id_a" "a $id_c" "b $id_b"; do
		set -- $x
		ctl "$1" selftest_stop id="$2" > /dev/null
	done
	check "IPv$fam: a exits 0" stop_daemon a
	check "IPv$fam: b exits 0" stop_daemon b
}

run_family 4
run_family 6
finish
