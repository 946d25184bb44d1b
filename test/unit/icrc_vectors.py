#!/usr/bin/env python3
"""icrc_vectors.py - known-answer ICRC vectors for test_icrc.c and test_frame.c.

Builds a few MRC frames byte by byte, independently of the C code under test,
and computes each ICRC the way §3.9 (D24) describes it, with nothing but
Python's zlib: mask a copy of the innermost IP header through the end of the
pad (IPv4 TOS, TTL and header checksum; IPv6 traffic class, flow label and hop
limit; UDP checksum; BTH byte 4 -> all ones), then
zlib.crc32(b'\\xff' * 8 + masked), appended least-significant byte first.
The masked fields hold non-zero values so that skipping a mask shows up.

    python3 test/unit/icrc_vectors.py > test/unit/icrc_vectors.h   # regenerate
    python3 test/unit/icrc_vectors.py --check test/unit/icrc_vectors.h

--check exits 1 if the committed header differs from what this script makes
(it runs as the 'icrc_vectors' unit test).
"""
import difflib
import struct
import sys
import zlib

UDP_PORT = 4791


def csum16(data):
    """RFC 1071 one's-complement checksum."""
    if len(data) % 2:
        data += b"\x00"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def eth(ethertype, vlan_tci=None):
    dst = bytes([0x02, 0x00, 0x00, 0x00, 0x00, 0x02])
    src = bytes([0x02, 0x00, 0x00, 0x00, 0x00, 0x01])
    if vlan_tci is None:
        return dst + src + struct.pack("!H", ethertype)
    return dst + src + struct.pack("!HHH", 0x8100, vlan_tci, ethertype)


def mrc_write_only(payload):
    """BTH (WRITE_ONLY 0xCA, ts=1) + METH + TSETH + RETH + payload + pad."""
    pad = (4 - len(payload) % 4) % 4
    bth = struct.pack("!BBHB3sB3s",
                      0xCA,                  # opcode WRITE_ONLY
                      pad << 4,              # SE MigReq PadCnt TVer
                      0xFFFF,                # P_Key
                      0x5A,                  # byte 4: reserved, masked (sent 0 normally)
                      (0x123456).to_bytes(3, "big"),  # DestQP
                      0x80 | 0x10,           # AckReq, ts
                      (0xABCDEF).to_bytes(3, "big"))  # PSN
    meth = struct.pack("!HH", 0, 7)
    tseth = struct.pack("!HBB", 0x1234, 0, 0x01)
    reth = struct.pack("!QII", 0x00007F0012345000, 0xCAFE0001, len(payload))
    return bth + meth + tseth + reth + payload + bytes(pad)


def mrc_sack():
    """BTH (RELIABILITY_SACK 0xDC) + SETH (28 B) + CC_STATE (8 B), no payload."""
    bth = struct.pack("!BBHB3sB3s", 0xDC, 0, 0xFFFF, 0xA5,
                      (0x000101).to_bytes(3, "big"), 0,
                      (0x000010).to_bytes(3, "big"))
    seth = bytes(range(0x40, 0x40 + 28))
    cc = bytes(range(0x70, 0x70 + 8))
    return bth + seth + cc


def udp(sport, body, csum):
    return struct.pack("!HHHH", sport, UDP_PORT, 8 + len(body) + 4, csum) + body


def ipv4(tos, ttl, ident, l4, options=b""):
    ihl = 5 + len(options) // 4
    tot = ihl * 4 + len(l4) + 4          # + ICRC
    h = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, tos, tot, ident, 0x4000, ttl, 17, 0,
                    bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])) + options
    h = h[:10] + struct.pack("!H", csum16(h)) + h[12:]
    return h + l4


def ipv6(tc, flow, nh, hlim, src, dst, rest, extra_len=4):
    plen = len(rest) + extra_len         # + ICRC
    vtf = (6 << 28) | (tc << 20) | flow
    return struct.pack("!IHBB16s16s", vtf, plen, nh, hlim, src, dst) + rest


def addr6(last):
    return bytes([0xFD, 0x00] + [0] * 13 + [last])


def icrc(ip):
    """§3.9 over ip = innermost IP header .. end of pad."""
    m = bytearray(ip)
    version = m[0] >> 4
    if version == 4:
        iphl = (m[0] & 0x0F) * 4
        m[1] = 0xFF                      # TOS
        m[8] = 0xFF                      # TTL
        m[10] = m[11] = 0xFF             # header checksum
    else:
        iphl = 40
        m[0] |= 0x0F                     # traffic class[7:4]
        m[1] = m[2] = m[3] = 0xFF        # traffic class[3:0], flow label
        m[7] = 0xFF                      # hop limit
    m[iphl + 6] = m[iphl + 7] = 0xFF     # UDP checksum
    m[iphl + 8 + 4] = 0xFF               # BTH byte 4
    return zlib.crc32(b"\xff" * 8 + bytes(m)) & 0xFFFFFFFF


def vectors():
    """(name, comment, frame without ICRC, offset of the ICRC's first header)."""
    out = []
    payload = bytes((i * 7 + 3) & 0xFF for i in range(13))   # 13 B -> 3 B pad

    # IPv4: DSCP 10, ECT(0); TTL 63; UDP checksum non-zero (ignored, D2).
    l2 = eth(0x0800)
    ip = ipv4((10 << 2) | 2, 63, 0x4242, udp(0xC001, mrc_write_only(payload), 0x1234))
    out.append(("ipv4", "IPv4, WRITE_ONLY, 13 B payload + 3 B pad", l2 + ip, len(l2)))

    # IPv4 with 4 bytes of options (IHL 6), behind an 802.1Q tag.
    l2 = eth(0x0800, vlan_tci=0x6064)
    ip = ipv4((12 << 2) | 1, 5, 0x0001, udp(0xFFEE, mrc_write_only(payload[:8]), 0xBEEF),
              options=b"\x01\x01\x01\x00")
    out.append(("ipv4_opts_vlan", "802.1Q + IPv4 with IHL 6, 8 B payload, no pad",
                l2 + ip, len(l2)))

    # IPv6: traffic class DSCP 46 + CE, flow label 0xABCDE, hop limit 17.
    l2 = eth(0x86DD)
    body = udp(0x1357, mrc_write_only(payload[:1]), 0x0F0F)
    ip = ipv6((46 << 2) | 3, 0xABCDE, 17, 17, addr6(1), addr6(2), body)
    out.append(("ipv6", "IPv6, WRITE_ONLY, 1 B payload + 3 B pad", l2 + ip, len(l2)))

    # IPv6 SACK (control packet, no payload).
    l2 = eth(0x86DD)
    body = udp(0x2468, mrc_sack(), 0)
    ip = ipv6((46 << 2) | 0, 0x00001, 17, 64, addr6(2), addr6(1), body)
    out.append(("ipv6_sack", "IPv6, RELIABILITY_SACK (BTH + SETH + CC_STATE)",
                l2 + ip, len(l2)))

    # SRv6: outer IPv6 (next header 41, uSID DA) + inner IPv6; ICRC from inner.
    l2 = eth(0x86DD)
    body = udp(0x4321, mrc_write_only(payload), 0)
    inner = ipv6((10 << 2) | 2, 0x0ABCD, 17, 64, addr6(1), addr6(2), body)
    usid = bytes([0xFC, 0xBB, 0x00, 0x00, 0x01, 0x00, 0x02, 0x00, 0x03, 0x00] + [0] * 6)
    outer = ipv6((10 << 2) | 3, 0x0ABCD, 41, 61, addr6(1), usid, inner)
    out.append(("srv6", "SRv6: outer IPv6 (nh 41) + inner IPv6; ICRC from the inner header",
                l2 + outer, len(l2) + 40))

    # SRv6 with an SRH (nh 43, one segment) between the two headers.
    srh = struct.pack("!BBBBBBH", 41, 2, 4, 0, 0, 0, 0) + addr6(9)
    outer = ipv6((10 << 2) | 2, 0x0ABCD, 43, 60, addr6(1), usid, srh + inner)
    out.append(("srv6_srh", "SRv6 with a 24 B SRH before the inner IPv6 header",
                l2 + outer, len(l2) + 40 + len(srh)))
    return out


def render():
    lines = [
        "/* icrc_vectors.h - ICRC known-answer vectors: whole frames whose ICRC was",
        " * computed independently of mrcd with Python's zlib.crc32 over 8 bytes of",
        " * 0xFF + the masked copy (§3.9, D24).",
        " * GENERATED by test/unit/icrc_vectors.py; do not edit. Regenerate with",
        " *   python3 test/unit/icrc_vectors.py > test/unit/icrc_vectors.h",
        " * The unit test 'icrc_vectors' checks that this file is up to date. */",
        "#ifndef ICRC_VECTORS_H",
        "#define ICRC_VECTORS_H",
        "",
        "#include <stddef.h>",
        "#include <stdint.h>",
        "",
        "struct icrc_vector {",
        "\tconst char *name;",
        "\tconst uint8_t *frame; /* Ethernet .. ICRC (stored LSB first) */",
        "\tsize_t len;           /* bytes of frame, ICRC included */",
        "\tsize_t icrc_off;      /* first byte the ICRC covers: innermost IP header */",
        "\tuint32_t icrc;",
        "};",
        "",
    ]
    table = []
    for name, comment, frame, off in vectors():
        value = icrc(frame[off:])
        full = frame + struct.pack("<I", value)
        lines.append("/* %s */" % comment)
        lines.append("static const uint8_t icrc_vec_%s[%d] = {" % (name, len(full)))
        for i in range(0, len(full), 12):
            lines.append("\t" + " ".join("0x%02x," % b for b in full[i:i + 12]))
        lines.append("};")
        lines.append("")
        table.append('\t{"%s", icrc_vec_%s, %d, %d, 0x%08xu},' % (name, name, len(full), off, value))
    lines.append("static const struct icrc_vector icrc_vectors[] = {")
    lines.extend(table)
    lines.append("};")
    lines.append("")
    lines.append("#endif")
    return "\n".join(lines) + "\n"


def main(argv):
    text = render()
    if len(argv) == 3 and argv[1] == "--check":
        with open(argv[2], encoding="utf-8") as f:
            have = f.read()
        if have == text:
            print("icrc_vectors: %s is up to date" % argv[2])
            return 0
        sys.stdout.writelines(difflib.unified_diff(
            have.splitlines(True), text.splitlines(True), argv[2], "generated"))
        print("icrc_vectors: %s is stale; regenerate it (see its header)" % argv[2])
        return 1
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
