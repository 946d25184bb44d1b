#!/usr/bin/env python3
"""route_get.py - the kernel's forwarding decision for packets, as
`ip route get` gives it, with the IPv6 flow label too (RTA_FLOWLABEL,
Linux 6.12 and later; iproute2 6.1 cannot pass it). Run it in the router's
namespace (ip netns exec NS python3 route_get.py).

stdin: one query per line,
  DST SRC IIF PROTO SPORT DPORT [FLOWLABEL]
(addresses of one family; IIF the router's input device; PROTO a number,
17 for UDP; FLOWLABEL decimal, IPv6 only). stdout: one line per query, the
output device's name, or "-" when the kernel returns no route. Exit 2 when
the kernel refuses a query (an old kernel without RTA_FLOWLABEL does: its
strict route-get parser rejects the attribute).

The multipath hash of a route-get with ports (policy 3) is computed from
the same fields a forwarded packet's headers give (fib_multipath_hash
fields, its seed), so the answer is the path the packet takes.
"""
import ipaddress
import os
import socket
import struct
import sys

NETLINK_ROUTE = 0
RTM_NEWROUTE, RTM_GETROUTE = 24, 26
NLM_F_REQUEST = 1
NLMSG_ERROR = 2
RTA_DST, RTA_SRC, RTA_IIF, RTA_OIF = 1, 2, 3, 4
RTA_IP_PROTO, RTA_SPORT, RTA_DPORT, RTA_FLOWLABEL = 27, 28, 29, 31


def rta(kind, data):
    n = 4 + len(data)
    return struct.pack("=HH", n, kind) + data + b"\0" * ((4 - n % 4) % 4)


def query(sk, seq, dst, src, iif, proto, sport, dport, flowlabel):
    d = ipaddress.ip_address(dst)
    s = ipaddress.ip_address(src)
    fam = socket.AF_INET6 if d.version == 6 else socket.AF_INET
    bits = 128 if d.version == 6 else 32
    body = struct.pack("=BBBBBBBBI", fam, bits, bits, 0, 0, 0, 0, 0, 0)
    body += rta(RTA_DST, d.packed) + rta(RTA_SRC, s.packed)
    body += rta(RTA_IIF, struct.pack("=I", socket.if_nametoindex(iif)))
    body += rta(RTA_IP_PROTO, struct.pack("=B", proto))
    body += rta(RTA_SPORT, struct.pack("!H", sport)) + rta(RTA_DPORT, struct.pack("!H", dport))
    if flowlabel is not None:
        body += rta(RTA_FLOWLABEL, struct.pack("!I", flowlabel))
    msg = struct.pack("=IHHII", 16 + len(body), RTM_GETROUTE, NLM_F_REQUEST, seq, 0) + body
    sk.send(msg)
    r = sk.recv(65536)
    n, kind = struct.unpack_from("=IH", r, 0)
    if kind == NLMSG_ERROR:
        err = -struct.unpack_from("=i", r, 16)[0]
        if err == 0:
            return None
        raise OSError(err, "route get %s: %s" % (" ".join(map(str, (dst, src, iif, proto, sport, dport,
                                                                     flowlabel))), os.strerror(err)))
    if kind != RTM_NEWROUTE:
        return None
    off = 16 + 12
    while off + 4 <= n:
        ln, t = struct.unpack_from("=HH", r, off)
        if ln < 4:
            break
        if t == RTA_OIF:
            return socket.if_indextoname(struct.unpack_from("=I", r, off + 4)[0])
        off += (ln + 3) & ~3
    return None


def main():
    sk = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_ROUTE)
    sk.bind((0, 0))
    out = []
    for seq, line in enumerate(sys.stdin, 1):
        p = line.split()
        if not p:
            continue
        if len(p) not in (6, 7):
            print("route_get.py: line %d: DST SRC IIF PROTO SPORT DPORT [FLOWLABEL]" % seq, file=sys.stderr)
            return 2
        try:
            dev = query(sk, seq, p[0], p[1], p[2], int(p[3]), int(p[4]), int(p[5]),
                        int(p[6]) if len(p) == 7 else None)
        except (OSError, ValueError) as e:
            print("route_get.py: %s" % e, file=sys.stderr)
            return 2
        out.append(dev or "-")
    sys.stdout.write("".join(d + "\n" for d in out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
