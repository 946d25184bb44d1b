#!/usr/bin/env bash
# fabric.sh - a routed Clos fabric of Linux routers in network namespaces,
# with silent failures, and mrcd on its two hosts (docs/operations.md
# "A routed fabric in namespaces").
#
#   fabric.sh [options] up            build it (and start mrcd on A and B)
#   fabric.sh [options] down          remove everything it made
#   fabric.sh [options] status [--json]
#   fabric.sh [options] fail PATH MODE
#   fabric.sh [options] heal PATH|all
#   fabric.sh [options] env           the fabric's names and addresses, as
#                                     shell assignments (for scripts)
#   fabric.sh [options] rx            bytes host B's leaves have sent it
#                                     (every port; a step's progress)
#   fabric.sh [options] hash [--plane P] EV...|-
#                                     "EV S<k>" lines: the spine LA sends
#                                     A's MRC packet on that EV to (its
#                                     ECMP hash, asked of the kernel as
#                                     `ip route get` does; "-" reads the
#                                     EVs from stdin). On IPv4 an EV is
#                                     its UDP source port (D5); on IPv6
#                                     32 bits, port and flow label (D4)
#   fabric.sh [options] seen [--plane P]
#                                     "EV S<k>" lines: the EVs of the MRC
#                                     packets LA has forwarded, and the
#                                     spine it sent each to (what it did,
#                                     not a prediction: on IPv6 `hash`
#                                     cannot predict the flow label's
#                                     part, see --ipv6 below)
#
# Options: --name N (FABRIC_NAME, default mf: every namespace is N-<node>),
#          --planes 1|2, --spines K (per plane; default 4, or 2 with two
#          planes), --port-kind af_xdp|af_packet, --ipv6, --no-mrcd,
#          --build DIR (default $TOP/build).
#
# Topology, plane p (one plane: leaves LA, LB; two: LA1, LB1, LA2, LB2):
#   A --400-- LAp ==100== S(k) ==100== LBp --400-- B     (k over the plane's spines)
# Spines are numbered over the whole fabric (two planes of two: S1, S2 in
# plane 1, S3, S4 in plane 2). Host A has one mrcd port per plane (a<p>,
# af_xdp or af_packet, 10.p.1.1/24, gateway 10.p.1.254 = LAp) and one kernel
# port per plane (ak<p>, 10.p.11.1-4/24) for Linux TCP and MPTCP; B likewise
# (b<p> 10.p.2.1, bk<p> 10.p.12.1-4). Rates are tbf on every router egress
# (FABRIC_SPINE_MBIT, default 100, per leaf-spine link and direction;
# FABRIC_ACCESS_MBIT, default 400, leaf to host), so the fabric and not the
# two CPUs is the bottleneck. Routers hash the 5-tuple: fib_multipath_hash
# policy 3, fields 0x37 (source and destination address, protocol, ports)
# for IPv4, 0x3f (the same and the flow label) for IPv6; never policy 1,
# which for locally sent packets follows the socket's hash and fakes path
# changes.
#
# --ipv6: mrcd's planes run IPv6 (32-bit EVs: source port and flow label,
# protocol.md D4): its ports are fd00:p:1::1/64 (A) and fd00:p:2::1/64 (B)
# with `gateway6` the leaf (fd00:p:1::fe, fd00:p:2::fe), the leaf-spine
# links fd0a:k::/64 (LA side) and fd0b:k::/64 (LB side), every route and
# ECMP group in IPv6 as well; `hash` then takes 32-bit EVs, but answers
# wrongly for an EV whose upper half (the flow label) is not 0: Linux
# (6.18 here) keys a forwarded packet's multipath hash with the flow label
# in host byte order (the flow dissector's) and a route lookup's
# (RTM_GETROUTE, RTA_FLOWLABEL) with it in network byte order, so no
# lookup reproduces the forwarding decision. `seen` reports what LA did
# instead. The routers keep their IPv4 addresses, and TCP/MPTCP stay on
# IPv4.
#
# PATH: S<k> (a spine), LA-S<k> / LB-S<k> (a leaf-spine link; LA<p>-S<k>
# with two planes), P<p> (a whole plane: both its leaves). MODE:
#   blackhole   nftables drop in the forward hook: links stay up, routing
#               never moves, nothing is told
#   loss N      nftables numgen random: N % (0.01 steps) of forwarded packets
#   slow F      the tbf rates of the path's egresses divided by F
# heal removes a path's failure (its nftables table, its tbf rates).
#
# Everything lives in namespaces this script creates and names N-*, and in
# its state directory (FABRIC_DIR, default /tmp/mrcd-fabric-N): `down`
# stops the daemons by PID (checked against their start time) and deletes
# every N-* namespace, whatever `up` got through; an `up` that fails half
# way removes what it made before it exits. Private addresses only.
set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$TOP/scripts/lib/proc.sh"

NAME=${FABRIC_NAME:-mf}
PLANES=1
SPP=
PORT_KIND=af_xdp
MRCD_ON=1
IPV6=0
BUILD=${BUILD:-$TOP/build}
SPINE_MBIT=${FABRIC_SPINE_MBIT:-100}
ACCESS_MBIT=${FABRIC_ACCESS_MBIT:-400}
MTU=3500          # a veth with an XDP program takes at most ~3.5 KB
UDP_PORT=4791

die() { echo "fabric.sh: $*" >&2; exit 2; }

while [ $# -gt 0 ]; do
	case $1 in
	--name) NAME=$2; shift 2 ;;
	--planes) PLANES=$2; shift 2 ;;
	--spines) SPP=$2; shift 2 ;;
	--port-kind) PORT_KIND=$2; shift 2 ;;
	--no-mrcd) MRCD_ON=0; shift ;;
	--ipv6) IPV6=1; shift ;;
	--build) BUILD=$2; shift 2 ;;
	-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	--*) die "unknown option $1" ;;
	*) break ;;
	esac
done
[ $# -ge 1 ] || die "usage: fabric.sh [options] up|down|status|fail|heal|env|hash (--help)"
CMD=$1
shift
[[ $NAME =~ ^[a-z][a-z0-9]{0,7}$ ]] || die "--name: 1-8 lower-case letters and digits, starting with a letter"
DIR=${FABRIC_DIR:-/tmp/mrcd-fabric-$NAME}
NFT_FAIL=mrcd_fail
NFT_COUNT=mrcd_count

# ---- the shape, from the options or from the state of a fabric that is up ----

load_state() {
	if [ -f "$DIR/state" ]; then
		# shellcheck source=/dev/null
		source "$DIR/state"
	fi
	case $PLANES in 1 | 2) ;; *) die "--planes: 1 or 2" ;; esac
	[ -n "$SPP" ] || SPP=$((PLANES == 1 ? 4 : 2))
	[[ $SPP =~ ^[1-8]$ ]] || die "--spines: 1..8"
	case $PORT_KIND in af_xdp | af_packet) ;; *) die "--port-kind: af_xdp or af_packet" ;; esac
	NSPINES=$((PLANES * SPP))
}

ns() { echo "$NAME-$1"; }
leaf() { # leaf A|B PLANE: the leaf's node name
	if [ "$PLANES" -eq 1 ]; then echo "L$1"; else echo "L$1$2"; fi
}
plane_of() { echo $((($1 - 1) / SPP + 1)); }  # plane_of SPINE
spines_of() { # spines_of PLANE: that plane's spine numbers
	local k
	for ((k = ($1 - 1) * SPP + 1; k <= $1 * SPP; k++)); do echo "$k"; done
}
nodes() { # every node name
	local p k
	echo A
	echo B
	for ((p = 1; p <= PLANES; p++)); do leaf A "$p"; leaf B "$p"; done
	for ((k = 1; k <= NSPINES; k++)); do echo "S$k"; done
}
routers() { nodes | grep -v '^[AB]$'; }
nx() { local n=$1; shift; ip netns exec "$(ns "$n")" "$@"; }   # nx NODE CMD...

# ---- up ----------------------------------------------------------------------------

veth() { # veth NODE1 DEV1 NODE2 DEV2
	ip link add "$2" netns "$(ns "$1")" mtu "$MTU" type veth peer name "$4" netns "$(ns "$3")" mtu "$MTU"
	ip -n "$(ns "$1")" link set dev "$2" up
	ip -n "$(ns "$3")" link set dev "$4" up
}

# shape NODE DEV MBIT: tbf at MBIT on DEV's egress. The bucket holds a few
# frames at line rate; the queue holds FABRIC_QUEUE_MS (default 2.5 ms) at
# that rate, so that an RTT through a full spine queue and a full access
# queue stays within the 8.4 ms an MRC timestamp can measure (16 bits of
# 128 ns, protocol.md D13: a longer one aliases to a tiny sample). At 100
# Mbit/s and more it holds at least FABRIC_QUEUE_MIN_KB (default 64 KiB,
# 5.2 ms at 100 Mbit/s): more than mrcd's window (cc below: 48 KiB per
# peer), so a healthy fabric never drops mrcd's packets even when a burst
# hashes mostly onto one spine (with 2.5 ms, 31 KB, LA's spine egresses
# dropped 5-20 packets in four healthy 8 x 2 MiB steps). A slowed link
# keeps the time-based queue.
shape() {
	local r=${3%.*} burst limit floor
	# the bucket: 64 KiB at 400 Mbit/s, 16 at 100, 4 (one frame) below
	burst=$((r >= 400 ? 64 : r >= 100 ? 16 : 4))
	floor=$((r >= 100 ? ${FABRIC_QUEUE_MIN_KB:-64} * 1024 : 0))
	limit=$(awk -v r="$3" -v q="${FABRIC_QUEUE_MS:-2.5}" -v b="$burst" -v f="$floor" \
		'BEGIN { l = r * 1e6 / 8 * q / 1e3; m = (b + 4) * 1024; x = (l > m) ? l : m; x = (x > f) ? x : f;
		         printf "%d", x }')
	tc -n "$(ns "$1")" qdisc replace dev "$2" root tbf rate "${3}mbit" burst "${burst}kb" limit "$limit"
}

router_sysctls() {
	nx "$1" sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1 \
		net.ipv4.fib_multipath_hash_policy=3 net.ipv4.fib_multipath_hash_fields=0x37 \
		net.ipv6.fib_multipath_hash_policy=3 net.ipv6.fib_multipath_hash_fields=0x3f \
		net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0
}

# Per-router counters the status and the tests read: MRC packets (UDP to
# 4791) and TCP segments forwarded, before any failure rule drops them.
# The A-side leaves also remember every MRC packet's EV with the device
# it leaves by (`seen`): the sets ev4 (source port) and ev6 (flow label and
# source port), filled by the packets themselves.
count_table() {
	local s4= s6=
	if [[ $1 == LA* ]]; then
		s4="meta nfproto ipv4 udp dport $UDP_PORT add @ev4 { udp sport . oifname }"
		s6="meta nfproto ipv6 udp dport $UDP_PORT add @ev6 { ip6 flowlabel . udp sport . oifname }"
	fi
	nx "$1" nft -f - <<EOF
table inet $NFT_COUNT {
	set ev4 { typeof udp sport . oifname; size 262144; flags dynamic; }
	set ev6 { typeof ip6 flowlabel . udp sport . oifname; size 262144; flags dynamic; }
	chain forward {
		type filter hook forward priority -10; policy accept;
		udp dport $UDP_PORT counter comment "mrc"
		meta l4proto tcp counter comment "tcp"
		$s4
		$s6
	}
}
EOF
}

mrcd_config() { # mrcd_config A|B: the daemon's YAML
	local h=$1 lo=${1,,} p mac dev args
	local side=$([ "$h" = A ] && echo 1 || echo 2)
	echo "# written by scripts/fabric.sh up (fabric $NAME): host $h, $PLANES plane(s), $PORT_KIND"
	echo "eal:"
	if [ "$h" = A ]; then
		echo "  args: [\"--no-huge\", \"--no-pci\", \"-m\", \"1024\", \"--file-prefix\", \"mrcd-fab-$NAME-$lo\"]"
	else   # B's worker on the other CPU: lcore 1 on CPU 0, main on CPU 1
		echo "  args: [\"--no-huge\", \"--no-pci\", \"-m\", \"1024\", \"--file-prefix\", \"mrcd-fab-$NAME-$lo\", \"--lcores\", \"0@1,1@0\"]"
	fi
	echo "ports:"
	for ((p = 1; p <= PLANES; p++)); do
		mac=$(printf '02:fa:%02x:%02x:00:01' "$side" "$p")
		dev=$lo$p
		if [ "$PORT_KIND" = af_xdp ]; then
			args="net_af_xdp$((p - 1)),iface=$dev"
		else
			args="net_af_packet$((p - 1)),iface=$dev,qpairs=1,framesz=3072,blocksz=12288,qdisc_bypass=0"
		fi
		if [ "$IPV6" = 1 ]; then
			cat <<EOF
  - name: $dev
    devargs: $args
    mac: "$mac"
    ipv6: fd00:$p:$side::1/64
    gateway6: fd00:$p:$side::fe
    speed_gbps: 1
EOF
		else
			cat <<EOF
  - name: $dev
    devargs: $args
    mac: "$mac"
    ipv4: 10.$p.$side.1/24
    gateway: 10.$p.$side.254
    speed_gbps: 1
EOF
		fi
	done
	cat <<EOF
lcores: {ids: [1], idle: adaptive}
transport:
  mtu: 2048            # af_xdp frames are one page: port MTU <= 3542
  base_rtt_us: ${FABRIC_BASE_RTT_US:-500}   # loaded; unloaded it is ~10 us (tbf)
  timeout: ${FABRIC_TIMEOUT:-12}   # T = 4.2 ms: a tbf queue holds ~8 ms at 100 Mbit/s
EOF
	# FABRIC_TRANSPORT: more transport keys, "key: value" lines (for
	# experiments: $'ev_min_active: 128\nev_backup: 0' turns retirement
	# off, the D44 floor with no backup to promote)
	[ -z "${FABRIC_TRANSPORT:-}" ] || printf '%s\n' "$FABRIC_TRANSPORT" | sed 's/^ */  /'
	# NSCC for this fabric: tbf delays only what queues (an unqueued
	# packet crosses at veth speed), so the unloaded RTT is ~10 us and the
	# BDP NSCC derives from it (link speed x base RTT) is below one packet;
	# and no qdisc of this kernel marks ECN, which NSCC needs to read a
	# delay above its target as congestion. So the window cap and the
	# target (which is also the loss guard's reordering window, D29) are
	# set for the fabric: 48 KiB per peer, 1 ms. FABRIC_CC_YAML replaces it.
	local cc='{nscc: {target_qdelay_us: 1000, max_cwnd_kb: 48}}'
	echo "cc: ${FABRIC_CC_YAML:-$cc}"
	cat <<EOF
control:
  socket: $DIR/${lo}.sock
EOF
}

start_mrcd() { # start_mrcd A|B
	local h=$1 lo=${1,,}
	mrcd_config "$h" > "$DIR/$lo.yaml"
	[ -x "$BUILD/app/mrcd/mrcd" ] || die "no $BUILD/app/mrcd/mrcd: build first (or --build DIR / --no-mrcd)"
	# not tracked by proc.sh: the daemons outlive this script; `down` stops them
	local seed=()
	# FABRIC_SEED: fixed engine seeds (A: 2 x seed, B: 2 x seed + 1), else mrcd's own
	[ -z "${FABRIC_SEED:-}" ] || seed=(--seed "$((FABRIC_SEED * 2 + $([ "$h" = B ] && echo 1 || echo 0)))")
	# the daemon keeps no descriptor of ours: not a lock this script runs
	# under (flock(1) hands its lock to its child: a daemon that outlives
	# the script would hold it), not a pipe of the caller's
	(
		for fd in /proc/$BASHPID/fd/*; do
			fd=${fd##*/}
			[ "$fd" -gt 2 ] && eval "exec $fd>&-"
		done
		exec ip netns exec "$(ns "$h")" "$BUILD/app/mrcd/mrcd" -c "$DIR/$lo.yaml" "${seed[@]}"
	) > "$DIR/$lo.log" 2>&1 < /dev/null &
	proc_pidfile $! "$DIR/$lo.pid"
}

mrcctl() { "$BUILD/app/mrcctl/mrcctl" "$@"; }
gateways_ok() { # gateways_ok a|b: every port's gateway resolved, every port up for the engine
	mrcctl -s "$DIR/$1.sock" --json ports 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
k = "gateway6_state" if sys.argv[1] == "1" else "gateway_state"
sys.exit(0 if d and all(p[k] == "REACHABLE" and p["engine"] == "up" for p in d) else 1)' "$IPV6"
}

cmd_up() {
	local p k h lo s pl leafa leafb
	load_state
	if [ -f "$DIR/state" ] || ip netns list | grep -q "^$NAME-"; then
		die "fabric $NAME is up already (or left over): fabric.sh --name $NAME down"
	fi
	mkdir -p "$DIR"
	FABRIC_UP_OK=0
	_fabric_abort() {
		[ "$FABRIC_UP_OK" = 1 ] && return 0
		echo "fabric.sh: up failed: removing what it made" >&2
		cmd_down > /dev/null 2>&1
	}
	cleanup_add _fabric_abort
	cat > "$DIR/state" <<EOF
PLANES=$PLANES
SPP=$SPP
PORT_KIND=$PORT_KIND
IPV6=$IPV6
MRCD_ON=$MRCD_ON
BUILD=$BUILD
SPINE_MBIT=$SPINE_MBIT
ACCESS_MBIT=$ACCESS_MBIT
EOF
	for n in $(nodes); do
		ip netns add "$(ns "$n")"
		ip -n "$(ns "$n")" link set lo up
	done
	for n in $(routers); do router_sysctls "$n"; count_table "$n"; done
	for h in A B; do
		nx "$h" sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0 net.mptcp.enabled=1
	done
	for ((p = 1; p <= PLANES; p++)); do
		leafa=$(leaf A "$p") leafb=$(leaf B "$p")
		for h in A B; do
			lo=${h,,} s=$([ "$h" = A ] && echo 1 || echo 2)
			local l=$([ "$h" = A ] && echo "$leafa" || echo "$leafb")
			# mrcd's port: no kernel address, no IPv6 chatter
			veth "$h" "$lo$p" "$l" "$lo"
			nx "$h" sysctl -qw "net.ipv6.conf.$lo$p.disable_ipv6=1"
			ip -n "$(ns "$l")" addr add "10.$p.$s.254/24" dev "$lo"
			[ "$IPV6" = 0 ] || ip -n "$(ns "$l")" addr add "fd00:$p:$s::fe/64" dev "$lo" nodad
			shape "$l" "$lo" "$ACCESS_MBIT"
			# the kernel's port: four addresses (MPTCP subflows)
			veth "$h" "${lo}k$p" "$l" "${lo}k"
			for a in 1 2 3 4; do
				ip -n "$(ns "$h")" addr add "10.$p.1$s.$a/24" dev "${lo}k$p"
			done
			ip -n "$(ns "$l")" addr add "10.$p.1$s.254/24" dev "${lo}k"
			shape "$l" "${lo}k" "$ACCESS_MBIT"
			local o=$((3 - s))
			ip -n "$(ns "$h")" route add "10.$p.1$o.0/24" via "10.$p.1$s.254" dev "${lo}k$p"
		done
		for k in $(spines_of "$p"); do
			veth "$leafa" "s$k" "S$k" la
			veth "$leafb" "s$k" "S$k" lb
			ip -n "$(ns "$leafa")" addr add "172.16.$k.1/30" dev "s$k"
			ip -n "$(ns "S$k")" addr add "172.16.$k.2/30" dev la
			ip -n "$(ns "$leafb")" addr add "172.17.$k.1/30" dev "s$k"
			ip -n "$(ns "S$k")" addr add "172.17.$k.2/30" dev lb
			for d in "$leafa:s$k" "$leafb:s$k" "S$k:la" "S$k:lb"; do
				shape "${d%%:*}" "${d#*:}" "$SPINE_MBIT"
			done
			for s in 1 11; do
				ip -n "$(ns "S$k")" route add "10.$p.$s.0/24" via "172.16.$k.1"
			done
			for s in 2 12; do
				ip -n "$(ns "S$k")" route add "10.$p.$s.0/24" via "172.17.$k.1"
			done
			if [ "$IPV6" = 1 ]; then
				ip -n "$(ns "$leafa")" addr add "fd0a:$k::1/64" dev "s$k" nodad
				ip -n "$(ns "S$k")" addr add "fd0a:$k::2/64" dev la nodad
				ip -n "$(ns "$leafb")" addr add "fd0b:$k::1/64" dev "s$k" nodad
				ip -n "$(ns "S$k")" addr add "fd0b:$k::2/64" dev lb nodad
				ip -n "$(ns "S$k")" -6 route add "fd00:$p:1::/64" via "fd0a:$k::1"
				ip -n "$(ns "S$k")" -6 route add "fd00:$p:2::/64" via "fd0b:$k::1"
			fi
		done
		local hops_a=() hops_b=()
		for k in $(spines_of "$p"); do
			hops_a+=(nexthop via "172.16.$k.2" dev "s$k")
			hops_b+=(nexthop via "172.17.$k.2" dev "s$k")
		done
		for s in 2 12; do ip -n "$(ns "$leafa")" route add "10.$p.$s.0/24" "${hops_a[@]}"; done
		for s in 1 11; do ip -n "$(ns "$leafb")" route add "10.$p.$s.0/24" "${hops_b[@]}"; done
		if [ "$IPV6" = 1 ]; then
			hops_a=() hops_b=()
			for k in $(spines_of "$p"); do
				hops_a+=(nexthop via "fd0a:$k::2" dev "s$k")
				hops_b+=(nexthop via "fd0b:$k::2" dev "s$k")
			done
			ip -n "$(ns "$leafa")" -6 route add "fd00:$p:2::/64" "${hops_a[@]}"
			ip -n "$(ns "$leafb")" -6 route add "fd00:$p:1::/64" "${hops_b[@]}"
		fi
	done
	# MPTCP: four subflows per connection. One plane: three more from A's
	# extra addresses. Two planes: one more on plane 1, and B announces two
	# plane-2 addresses (one subflow to each).
	nx A ip mptcp limits set subflows 3 add_addr_accepted 2
	nx B ip mptcp limits set subflows 3 add_addr_accepted 0
	if [ "$PLANES" -eq 1 ]; then
		for a in 2 3 4; do nx A ip mptcp endpoint add "10.1.11.$a" dev ak1 subflow; done
	else
		nx A ip mptcp endpoint add 10.1.11.2 dev ak1 subflow
		for a in 1 2; do nx B ip mptcp endpoint add "10.2.12.$a" dev bk2 signal; done
	fi
	if [ "$MRCD_ON" = 1 ]; then
		start_mrcd A
		start_mrcd B
		for lo in a b; do
			local pid
			pid=$(cut -d: -f1 "$DIR/$lo.pid")
			proc_wait_for -p "$pid" 60 mrcctl -s "$DIR/$lo.sock" status ||
				{ tail -20 "$DIR/$lo.log" >&2; die "mrcd on $lo did not start (log: $DIR/$lo.log)"; }
		done
		for lo in a b; do
			proc_wait_for 20 gateways_ok "$lo" ||
				{ mrcctl -s "$DIR/$lo.sock" ports >&2 || true; die "mrcd on $lo: a gateway did not resolve"; }
		done
	fi
	FABRIC_UP_OK=1
	echo "fabric $NAME up: $PLANES plane(s), $SPP spines each, spine links ${SPINE_MBIT} Mbit/s," \
	     "access ${ACCESS_MBIT} Mbit/s; state in $DIR"
}

# ---- down --------------------------------------------------------------------------

cmd_down() {
	local n
	proc_stop_pidfile -g 20 "$DIR/a.pid"
	proc_stop_pidfile -g 20 "$DIR/b.pid"
	# every namespace of this fabric, whatever `up` got through; the veths,
	# qdiscs and nftables tables inside go with them
	for n in $(ip netns list | awk -v p="^$NAME-" '$1 ~ p {print $1}'); do
		ip netns del "$n" 2>/dev/null || true
	done
	rm -rf /var/run/dpdk/mrcd-fab-"$NAME"-a /var/run/dpdk/mrcd-fab-"$NAME"-b
	rm -rf "$DIR"
	if ip netns list | grep -q "^$NAME-"; then
		echo "fabric.sh: namespaces left: $(ip netns list | grep "^$NAME-" | tr '\n' ' ')" >&2
		return 1
	fi
	echo "fabric $NAME down"
}

# ---- failures ----------------------------------------------------------------------

# path_parts PATH: "NODE:EGRESS-DEVS ..." for every router egress the path
# covers (the nftables rule matches these devices; empty = all forwarded).
path_parts() {
	local path=$1 k p l
	case $path in
	S[0-9]*)
		k=${path#S}
		[[ $k =~ ^[0-9]+$ ]] && [ "$k" -ge 1 ] && [ "$k" -le "$NSPINES" ] || die "no spine $path (S1..S$NSPINES)"
		echo "S$k:"
		;;
	P[0-9]*)
		p=${path#P}
		[[ $p =~ ^[0-9]+$ ]] && [ "$p" -ge 1 ] && [ "$p" -le "$PLANES" ] || die "no plane $path (P1..P$PLANES)"
		echo "$(leaf A "$p"): $(leaf B "$p"):"
		;;
	L[AB]*-S[0-9]*)
		l=${path%%-*} k=${path#*-S}
		[[ $k =~ ^[0-9]+$ ]] && [ "$k" -ge 1 ] && [ "$k" -le "$NSPINES" ] || die "no spine S$k"
		p=$(plane_of "$k")
		[ "$l" = "$(leaf "${l:1:1}" "$p")" ] || die "$path: S$k is in plane $p, whose leaves are $(leaf A "$p") and $(leaf B "$p")"
		echo "$l:s$k S$k:$([ "${l:1:1}" = A ] && echo la || echo lb)"
		;;
	*) die "bad path $path: S<k>, L<A|B>[p]-S<k> or P<p>" ;;
	esac
}

nft_fail() { # nft_fail NODE DEV|"" RULE: add a failure rule to NODE's forward hook
	local match=
	[ -z "$2" ] || match="oifname \"$2\" "
	nx "$1" nft -f - <<EOF
table inet $NFT_FAIL {
	chain forward {
		type filter hook forward priority 0; policy accept;
		$match$3
	}
}
EOF
}

egress_devs() { # egress_devs NODE DEV|"": the devices whose tbf a slow-down changes
	if [ -n "$2" ]; then echo "$2"; return; fi
	case $1 in
	S*) echo la lb ;;
	L*) ip -n "$(ns "$1")" -o link show | awk -F': ' '{print $2}' | sed 's/@.*//' | grep -v '^lo$' ;;
	esac
}

rate_of() { # rate_of NODE DEV: the healthy rate, Mbit/s
	case $2 in s[0-9]* | la | lb) echo "$SPINE_MBIT" ;; *) echo "$ACCESS_MBIT" ;; esac
}

cmd_fail() {
	local path=${1:?fail PATH MODE} mode=${2:?fail PATH MODE} arg=${3:-} part node dev rule
	load_state
	[ -f "$DIR/state" ] || die "fabric $NAME is not up"
	case $mode in
	blackhole) rule="drop" ;;
	loss)
		[[ $arg =~ ^[0-9]+(\.[0-9]{1,2})?$ ]] || die "loss N: N a percentage, 0.01 steps"
		local bp
		bp=$(awk -v n="$arg" 'BEGIN { printf "%d", n * 100 + 0.5 }')
		[ "$bp" -ge 1 ] && [ "$bp" -le 10000 ] || die "loss N: 0.01..100"
		rule="numgen random mod 10000 < $bp drop"
		;;
	slow)
		[[ $arg =~ ^[0-9]+(\.[0-9]+)?$ ]] && awk -v f="$arg" 'BEGIN { exit !(f >= 1) }' || die "slow F: F >= 1"
		;;
	*) die "mode: blackhole, loss N or slow F" ;;
	esac
	for part in $(path_parts "$path"); do
		node=${part%%:*} dev=${part#*:}
		if [ "$mode" = slow ]; then
			for d in $(egress_devs "$node" "$dev"); do
				shape "$node" "$d" "$(awk -v r="$(rate_of "$node" "$d")" -v f="$arg" 'BEGIN { printf "%.3f", r / f }')"
			done
		else
			nft_fail "$node" "$dev" "$rule"
		fi
	done
	echo "$path $mode $arg" >> "$DIR/failures"
	echo "fabric $NAME: $path $mode $arg"
}

cmd_heal() {
	local path=${1:?heal PATH|all} part node dev paths
	load_state
	[ -f "$DIR/state" ] || die "fabric $NAME is not up"
	if [ "$path" = all ]; then
		paths=$(awk '{print $1}' "$DIR/failures" 2>/dev/null | sort -u)
	else
		path_parts "$path" > /dev/null
		paths=$path
	fi
	for path in $paths; do
		for part in $(path_parts "$path"); do
			node=${part%%:*} dev=${part#*:}
			nx "$node" nft delete table inet "$NFT_FAIL" 2>/dev/null || true
			for d in $(egress_devs "$node" "$dev"); do shape "$node" "$d" "$(rate_of "$node" "$d")"; done
		done
		if [ -f "$DIR/failures" ]; then
			awk -v p="$path" '$1 != p' "$DIR/failures" > "$DIR/failures.new"
			mv "$DIR/failures.new" "$DIR/failures"
		fi
		echo "fabric $NAME: $path healed"
	done
}

# ---- status, env, hash --------------------------------------------------------------

counters_json() { # counters_json NODE: {"mrc", "tcp": packets forwarded, "drops": dropped by its qdiscs}
	# (the forward chain only: the table's EV sets, `seen`, outgrow an argument)
	python3 -c '
import json, sys
out = {"mrc": None, "tcp": None, "drops": None}
try:
    for o in json.loads(sys.argv[1])["nftables"]:
        r = o.get("rule")
        if not r:
            continue
        for e in r["expr"]:
            if "counter" in e and r.get("comment") in out:
                out[r["comment"]] = e["counter"]["packets"]
except Exception:
    pass
try:
    out["drops"] = sum(q["drops"] for q in json.loads(sys.argv[2]))
except Exception:
    pass
print(json.dumps(out))' "$(nx "$1" nft -j list chain inet "$NFT_COUNT" forward 2>/dev/null)" \
		"$(tc -n "$(ns "$1")" -s -j qdisc show 2>/dev/null)"
}

cmd_status() {
	local json=0 n first=1
	[ "${1:-}" = --json ] && json=1
	load_state
	if [ ! -f "$DIR/state" ]; then
		[ "$json" = 1 ] && echo '{"up": false}' || echo "fabric $NAME: down"
		return 0
	fi
	{
		echo "{\"up\": true, \"name\": \"$NAME\", \"planes\": $PLANES, \"spines_per_plane\": $SPP,"
		echo " \"spine_mbit\": $SPINE_MBIT, \"access_mbit\": $ACCESS_MBIT, \"dir\": \"$DIR\","
		echo " \"failures\": $(python3 -c 'import json,sys; print(json.dumps([l.split() for l in open(sys.argv[1]) if l.strip()]))' "$DIR/failures" 2>/dev/null || echo '[]'),"
		echo " \"routers\": {"
		for n in $(routers); do
			[ "$first" = 1 ] || echo ","
			first=0
			printf '  "%s": %s' "$n" "$(counters_json "$n")"
		done
		echo " },"
		echo " \"daemons\": {"
		first=1
		for lo in a b; do
			[ "$first" = 1 ] || echo ","
			first=0
			local pid=null
			[ -f "$DIR/$lo.pid" ] && pid=$(cut -d: -f1 "$DIR/$lo.pid")
			printf '  "%s": {"pid": %s, "socket": "%s"}' "$lo" "$pid" "$DIR/$lo.sock"
		done
		echo " }}"
	} > "$DIR/status.json.tmp"
	if [ "$json" = 1 ]; then
		python3 -m json.tool "$DIR/status.json.tmp"
	else
		python3 - "$DIR/status.json.tmp" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(f"fabric {d['name']}: {d['planes']} plane(s), {d['spines_per_plane']} spines each; "
      f"spine links {d['spine_mbit']} Mbit/s, access {d['access_mbit']} Mbit/s")
print("failures: " + (", ".join(" ".join(f) for f in d["failures"]) or "none"))
print(f"{'router':8} {'mrc pkts':>12} {'tcp pkts':>12} {'qdisc drops':>12}")
v = lambda x: "-" if x is None else x
for n, c in d["routers"].items():
    print(f"{n:8} {v(c['mrc']):>12} {v(c['tcp']):>12} {v(c['drops']):>12}")
for n, c in d["daemons"].items():
    print(f"mrcd {n}: pid {c['pid']}, socket {c['socket']}")
PY
	fi
	rm -f "$DIR/status.json.tmp"
}

cmd_env() {
	local p
	load_state
	echo "FABRIC_NAME=$NAME"
	echo "FABRIC_DIR=$DIR"
	echo "FABRIC_PLANES=$PLANES"
	echo "FABRIC_SPINES=$NSPINES"
	echo "NS_A=$(ns A)"
	echo "NS_B=$(ns B)"
	echo "SOCK_A=$DIR/a.sock"
	echo "SOCK_B=$DIR/b.sock"
	echo "FABRIC_IPV6=$IPV6"
	for ((p = 1; p <= PLANES; p++)); do
		if [ "$IPV6" = 1 ]; then
			echo "MRC_A$p=fd00:$p:1::1"
			echo "MRC_B$p=fd00:$p:2::1"
		else
			echo "MRC_A$p=10.$p.1.1"
			echo "MRC_B$p=10.$p.2.1"
		fi
		echo "TCP_A$p=10.$p.11.1"
		echo "TCP_B$p=10.$p.12.1"
	done
	# the devices `rx` reads, for scripts/lib/fabric_rx.sh
	echo "FABRIC_RX=\"$(for ((p = 1; p <= PLANES; p++)); do printf '%s:b %s:bk ' "$(ns "$(leaf B "$p")")" "$(ns "$(leaf B "$p")")"; done)\""
}

cmd_rx() { # bytes host B has been sent by its leaves (every port, all protocols;
	# scripts/lib/fabric_rx.sh reads the same devices, FABRIC_RX of `env`)
	local p n=0 v d
	load_state
	for ((p = 1; p <= PLANES; p++)); do
		for d in b bk; do
			v=$(ip -n "$(ns "$(leaf B "$p")")" -s link show dev "$d" | awk 'f { print $1; exit } /TX:/ { f = 1 }')
			n=$((n + v))
		done
	done
	echo "$n"
}

cmd_hash() { # cmd_hash [--plane P] EV... ("-": read them from stdin)
	local p=1 ev evs=() out max=65535
	load_state
	if [ "${1:-}" = --plane ]; then p=$2; shift 2; fi
	[ $# -ge 1 ] || die "hash [--plane P] EV... (or -)"
	if [ "$1" = - ]; then mapfile -t evs; else evs=("$@"); fi
	[ "$IPV6" = 0 ] || max=4294967295
	for ev in "${evs[@]}"; do
		[[ $ev =~ ^[0-9]{1,10}$ ]] && [ "$ev" -le "$max" ] ||
			die "hash: '$ev' is not an EV (0..$max: $([ "$IPV6" = 1 ] && echo "32 bits on IPv6" || echo "a UDP source port on IPv4"))"
	done
	[ "${#evs[@]}" -gt 0 ] || return 0
	# one netlink query each, in the leaf: its forwarding decision for A's
	# MRC packet (A -> B, UDP to 4791) with the EV's source port (and, on
	# IPv6, its flow label: EV[15:0] in the port, EV[31:16] in the label,
	# mrcd's default ev_layout lo16_sport, D4)
	out=$(for ev in "${evs[@]}"; do
		if [ "$IPV6" = 1 ]; then
			echo "fd00:$p:2::1 fd00:$p:1::1 a 17 $((ev & 0xffff)) $UDP_PORT $((ev >> 16))"
		else
			echo "10.$p.2.1 10.$p.1.1 a 17 $ev $UDP_PORT"
		fi
	done | ip netns exec "$(ns "$(leaf A "$p")")" python3 "$TOP/scripts/lib/route_get.py" | sed 's/^s\([0-9]*\)$/S\1/') ||
		die "hash: route lookups in $(leaf A "$p") failed"
	paste -d' ' <(printf '%s\n' "${evs[@]}") <(printf '%s\n' "$out")
}

cmd_seen() { # cmd_seen [--plane P]: "EV S<k>" for each EV LA forwarded
	local p=1 set=ev4
	load_state
	if [ "${1:-}" = --plane ]; then p=$2; shift 2; fi
	[ "$IPV6" = 0 ] || set=ev6
	nx "$(leaf A "$p")" nft -j list set inet "$NFT_COUNT" "$set" | python3 -c '
import json, sys
ev = {}
for o in json.load(sys.stdin)["nftables"]:
    for e in (o.get("set") or {}).get("elem", []):
        v = e["elem"]["val"] if isinstance(e, dict) and "elem" in e else e
        c = v["concat"]
        # ev6: flow label . source port . device (D4 lo16_sport: the
        # label holds EV[31:16]); ev4: source port . device
        k = (c[0] << 16 | c[1]) if len(c) == 3 else c[0]
        dev = c[-1]
        if dev[:1] == "s" and dev[1:].isdigit():
            ev.setdefault(k, set()).add("S" + dev[1:])
for k in sorted(ev):
    print(k, ",".join(sorted(ev[k])))' || die "seen: cannot read the EV sets of $(leaf A "$p")"
}

case $CMD in
up) cmd_up ;;
down) load_state; cmd_down ;;
status) cmd_status "$@" ;;
fail) cmd_fail "$@" ;;
heal) cmd_heal "$@" ;;
env) cmd_env ;;
hash) cmd_hash "$@" ;;
rx) cmd_rx ;;
seen) cmd_seen "$@" ;;
*) die "unknown command $CMD" ;;
esac
