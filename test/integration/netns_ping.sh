#!/usr/bin/env bash
# netns_ping.sh - mrcd on an af_packet port (one end of a veth pair) answers
# ARP, NDP and ICMP echo (IPv4 and IPv6) from a host in a network namespace
# we create. The pings are sent by a small raw-socket Python pinger so the
# test needs no iputils.
source "$(dirname "$0")/lib.sh"
if ! ip netns add "mrcdit$$" 2>/dev/null; then
	echo "cannot create a network namespace: skipping"; echo "0 passed, 0 failed"; exit 77
fi
NS="mrcdit$$"
VA="mrcit$$a"
VB="mrcit$$b"
cleanup_netns "$NS"
cleanup_link "$VA"
ip link add "$VA" type veth peer name "$VB"
ip link set "$VB" netns "$NS"
ip link set "$VA" up
ip -n "$NS" link set lo up
ip -n "$NS" addr add 10.99.0.2/24 dev "$VB"
ip -n "$NS" addr add fd99::2/64 dev "$VB" nodad
ip -n "$NS" link set "$VB" up

cat > "$T/n.yaml" <<EOF2
eal:
  args: ["--no-huge", "--no-pci", "-m", "256", "--file-prefix", "mrcd-it-$(basename "$T")-n"]
ports:
  - name: veth
    devargs: net_af_packet0,iface=$VA,qpairs=1
    mac: "02:00:00:00:99:01"
    ipv4: 10.99.0.1/24
    ipv6: fd99::1/64
transport:
  mtu: 1024
control:
  socket: $T/n.sock
EOF2
start_daemon n || { bad "mrcd on af_packet starts"; finish; exit 1; }
wait_for 20 links_up n

ping_py() { # ping_py ADDR: 3 echo requests from inside the namespace
	ip netns exec "$NS" python3 - "$1" <<'PY'
import os, socket, struct, sys, time
addr = sys.argv[1]
v6 = ":" in addr
def csum(b):
    if len(b) % 2: b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    s = (s >> 16) + (s & 0xffff); s += s >> 16
    return ~s & 0xffff
if v6:
    s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
else:
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
s.settimeout(2.0)
got = 0
for seq in range(1, 4):
    payload = b"mrcd-ping-%d" % seq + bytes(range(40))
    typ = 128 if v6 else 8
    hdr = struct.pack("!BBHHH", typ, 0, 0, os.getpid() & 0xffff, seq)
    pkt = hdr + payload
    if not v6:  # the kernel fills the ICMPv6 checksum itself
        pkt = struct.pack("!BBHHH", typ, 0, csum(pkt), os.getpid() & 0xffff, seq) + payload
    s.sendto(pkt, (addr, 0))
    deadline = time.time() + 2
    while time.time() < deadline:
        try:
            data, _ = s.recvfrom(2048)
        except socket.timeout:
            break
        icmp = data if v6 else data[(data[0] & 15) * 4:]
        want = 129 if v6 else 0
        if icmp[0] == want and struct.unpack("!H", icmp[6:8])[0] == seq and icmp[8:] == payload:
            got += 1
            break
print(got)
sys.exit(0 if got == 3 else 1)
PY
}
check "IPv4 ping from the namespace answered (ARP + ICMP echo)" ping_py 10.99.0.1
check "IPv6 ping from the namespace answered (NDP + ICMPv6 echo)" ping_py fd99::1
check "the namespace learned mrcd's MAC by ARP" bash -c "ip -n $NS neigh show 10.99.0.1 | grep -qi 02:00:00:00:99:01"
echo_n=$(ctlj n counters | jget 'd["ports"]["veth"]["neigh"]["icmp_echo"] + d["ports"]["veth"]["neigh"]["icmp6_echo"]')
check "mrcd counted 6 echo requests ($echo_n)" test "$echo_n" -ge 6
check "mrcd exits 0" stop_daemon n
finish
