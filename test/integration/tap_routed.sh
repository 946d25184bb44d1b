#!/usr/bin/env bash
# tap_routed.sh - mrcd's port kinds in network namespaces, routed through a
# kernel router (docs/configuration.md "Routed next hops"):
#   a  net_tap, in the router namespace R: its tap is R's interface to a
#   b  net_af_xdp on a veth, in namespace B behind R     (gateway)
#   c  net_af_packet on a veth, in namespace C behind R  (a static route)
#   d  net_null with a gateway nobody answers for: the operator sees it
# Verified selftests a->b and a->c cross R (every message checked by the
# receiver); R forwarded them, a reached both peers through its gateway, c
# answered through its route, and d's port is FAILED and down for the engine
# with a warning. Namespaces, links and processes go in the trap (proc.sh).
source "$(dirname "$0")/lib.sh"

R="mrcd-tr$$" NB="mrcd-tb$$" NC="mrcd-tc$$"
TAP="mtap$$" BX="mbx$$" CX="mcx$$"
for ns in "$R" "$NB" "$NC"; do
	if ! ip netns add "$ns" 2>/dev/null; then
		echo "cannot create a network namespace: skipping"; echo "0 passed, 0 failed"; exit 77
	fi
	cleanup_netns "$ns"
	ip -n "$ns" link set lo up
done
# veths live in the namespaces: deleting a namespace removes them
ip link add "$BX" netns "$NB" type veth peer name "r$BX" netns "$R"
ip link add "$CX" netns "$NC" type veth peer name "r$CX" netns "$R"
ip -n "$R" addr add 10.77.2.254/24 dev "r$BX"
ip -n "$R" addr add 10.77.3.254/24 dev "r$CX"
# a veth with an XDP program takes an MTU of at most ~3.5 KB (one page
# per frame): 3500 on both ends
for d in "r$BX" "r$CX"; do ip -n "$R" link set "$d" mtu 3500 up; done
ip -n "$NB" link set "$BX" mtu 3500 up
ip -n "$NC" link set "$CX" mtu 3500 up
ip netns exec "$R" sysctl -qw net.ipv4.ip_forward=1

eal() { # eal NAME: the EAL line of daemon NAME (--no-huge: IOVA as VA, which af_xdp takes)
	echo "  args: [\"--no-huge\", \"--no-pci\", \"-m\", \"384\", \"--file-prefix\", \"mrcd-it-$(basename "$T")-$1\"]"
}
cat > "$T/a.yaml" <<EOF
eal:
$(eal a)
ports:
  - name: tap
    devargs: net_tap0,iface=$TAP
    mac: "02:77:00:00:01:01"
    ipv4: 10.77.1.1/24
    gateway: 10.77.1.254
transport: {mtu: 1024}      # net_tap carries frames up to its 1500 B MTU
control: {socket: $T/a.sock}
EOF
cat > "$T/b.yaml" <<EOF
eal:
$(eal b)
ports:
  - name: xdp
    devargs: net_af_xdp0,iface=$BX
    mac: "02:77:00:00:02:01"
    ipv4: 10.77.2.1/24
    gateway: 10.77.2.254
transport: {mtu: 2048}      # af_xdp: at most 3542 B (one page per frame)
control: {socket: $T/b.sock}
EOF
cat > "$T/c.yaml" <<EOF
eal:
$(eal c)
ports:
  - name: pkt
    devargs: net_af_packet0,iface=$CX,qpairs=1,framesz=3072,blocksz=12288,qdisc_bypass=0
    mac: "02:77:00:00:03:01"
    ipv4: 10.77.3.1/24
    routes: [{prefix: 10.77.0.0/16, via: 10.77.3.254}]
transport: {mtu: 2048}
control: {socket: $T/c.sock}
EOF
cat > "$T/d.yaml" <<EOF
eal:
$(eal d)
ports:
  - name: null
    devargs: net_null0,no-rx=1    # its receive side generates frames otherwise: a busy core
    ipv4: 10.77.9.1/24
    gateway: 10.77.9.254    # net_null: nobody ever answers
control: {socket: $T/d.sock}
EOF

start_in() { # start_in NS NAME: mrcd NAME inside namespace NS ("-": none)
	local pid
	if [ "$1" = - ]; then
		proc_start pid "$MRCD" -c "$T/$2.yaml" --seed 0x5eed > "$T/$2.log" 2>&1
	else
		proc_start pid ip netns exec "$1" "$MRCD" -c "$T/$2.yaml" --seed 0x5eed > "$T/$2.log" 2>&1
	fi
	eval "PID_$2=$pid"
	wait_for -p "$pid" 60 ctl "$2" status || { echo "daemon $2 did not start:"; tail -20 "$T/$2.log"; return 1; }
}
port() { # port NAME KEY: worker 0's view of the daemon's only port
	ctlj "$1" ports | jget "d[0]['$2']"
}
gw_is() { [ "$(port "$1" gateway_state)" = "$2" ]; }
engine_is() { [ "$(port "$1" engine)" = "$2" ]; }

start_in "$R" a || { bad "mrcd on net_tap starts in the router namespace"; finish; exit 1; }
# the tap is R's side of a's link: a MAC of its own (net_tap gives it the
# port's) and the router address a's gateway names
wait_for 20 ip -n "$R" link show "$TAP"
ip -n "$R" link set "$TAP" address 02:77:00:00:01:fe
ip -n "$R" addr add 10.77.1.254/24 dev "$TAP"
start_in "$NB" b || { bad "mrcd on net_af_xdp starts in a namespace"; finish; exit 1; }
start_in "$NC" c || { bad "mrcd on net_af_packet starts in a namespace"; finish; exit 1; }
start_in - d || { bad "mrcd on net_null starts"; finish; exit 1; }

check "a: the tap gateway resolves by ARP" wait_for 20 gw_is a REACHABLE
check "b: the af_xdp gateway resolves by ARP" wait_for 20 gw_is b REACHABLE
check "c: the route's next hop resolves (role route)" wait_for 20 bash -c \
	"'$MRCCTL' -s '$T/c.sock' --json neighbours | python3 -c \"import json,sys; d=json.load(sys.stdin); sys.exit(0 if any(e['ip']=='10.77.3.254' and e['role']=='route' and e['state']=='REACHABLE' for e in d) else 1)\""
check "every engine port is up" bash -c "for n in a b c; do [ \"\$('$MRCCTL' -s '$T/'\$n.sock --json ports | python3 -c 'import json,sys; print(json.load(sys.stdin)[0][\"engine\"])')\" = up ] || exit 1; done"

fwd0=$(ip netns exec "$R" nstat -az IpForwDatagrams | awk '/IpForwDatagrams/ {print $2}')
selftest() { # selftest FROM TO: a verified transfer FROM -> TO, its JSON report in $T/FROM-TO.json
	local rc=0
	ctl "$1" selftest --peer "$T/$2.sock" --bytes 32M --msg-size 64K --timeout 90 --json \
		> "$T/$1-$2.json" 2> "$T/$1-$2.err" || rc=$?
	# on failure, why (mrcctl's exit: 1 refused, 3 no answer, 4 failed)
	[ "$rc" -eq 0 ] || echo "     selftest $1 -> $2: exit $rc: $(tail -c 600 "$T/$1-$2.err" "$T/$1-$2.json" | tr '\n' ' ')" >&2
	return "$rc"
}
st_ok() { # the report says ok, with every byte moved and no verify error
	jget "d['ok'] and d['sender']['bytes_done'] == 32 << 20 and d['receiver']['verify_errors'] == 0 and d['receiver']['imm_msgs'] == d['sender']['imm_msgs'] > 0" < "$T/$1-$2.json" | grep -qx True
}
check "a (tap) -> b (af_xdp) through R: verified transfer" selftest a b
check "a -> b: every byte, checked by the receiver" st_ok a b
check "a (tap) -> c (af_packet) through R: verified transfer" selftest a c
check "a -> c: every byte, checked by the receiver" st_ok a c
fwd1=$(ip netns exec "$R" nstat -az IpForwDatagrams | awk '/IpForwDatagrams/ {print $2}')
pkts_ab=$(port b rx_mrc)
fwd=$(num_sub "$fwd1" "$fwd0")   # empty (and failing) if nstat gave no count
check "R forwarded them (${fwd:-?} datagrams; b received $pkts_ab MRC frames)" num_cmp "$fwd" -ge 32768
via() { ctlj "$1" counters | jget "d['ports']['$2']['neigh']['$3']"; }
a_gw=$(via a tap via_gateway) a_link=$(via a tap via_link) c_rt=$(via c pkt via_route)
check "a sent through its gateway ($a_gw packets)" num_cmp "$a_gw" -gt 32768
check "a sent nothing on the link ($a_link packets)" num_cmp "$a_link" -eq 0
check "c answered through its static route ($c_rt packets)" num_cmp "$c_rt" -gt 100
nn=$(num_sum "$(port a tx_no_neigh)" "$(port b tx_no_neigh)" "$(port c tx_no_neigh)")
check "nothing was dropped for want of a next hop ($nn)" num_cmp "$nn" -eq 0

# d: the gateway never answers
check "d: an unanswered gateway becomes FAILED" wait_for 20 gw_is d FAILED
check "d: and its port is down for the engine" wait_for 5 engine_is d down
check "d: counted (gw_down $(port d gw_down))" num_cmp "$(port d gw_down)" -ge 1
check "d: mrcctl neighbours shows the gateway FAILED" bash -c \
	"'$MRCCTL' -s '$T/d.sock' --json neighbours | python3 -c \"import json,sys; d=json.load(sys.stdin); sys.exit(0 if any(e['ip']=='10.77.9.254' and e['role']=='gateway' and e['state']=='FAILED' for e in d) else 1)\""
check "d: the operator was told (log warning)" grep -q "gateway 10.77.9.254 does not answer ARP: FAILED" "$T/d.log"

for n in a b c d; do
	check "$n exits 0" proc_stop -g 20 "$(eval echo "\$PID_$n")"
done
finish
