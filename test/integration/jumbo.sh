#!/usr/bin/env bash
# jumbo.sh - two daemons from config/two-planes-memif.yaml: two memif planes
# with a 9000 B port MTU and 9,216 B memif buffers (one frame, one buffer),
# the file as shipped for daemon a and its client side for daemon b. The
# ports take the MTU, the links come up, and a verified selftest crosses.
# MRC's own frames stay at most 4,182 B: transport.mtu, the payload MTU, is
# 1024, 2048 or 4096 (D3), and a port's MTU only has to hold it plus the
# headers (docs/configuration.md, ports.mtu).
source "$(dirname "$0")/lib.sh"
BYTES=${JUMBO_BYTES:-512M}

# a: the file with this test's sockets and DPDK file prefix; b: the same
# with role=client, its own addresses and MACs (10.p.0.2, 02:..:0p:02), a's
# as neighbours, and its worker on the other CPU
python3 - "$TOP/config/two-planes-memif.yaml" "$T" "mrcd-it-$(basename "$T")" <<'PY'
import re, sys
src, d, tag = sys.argv[1:]
s = open(src).read()
if "mtu: 9000" not in s or "bsize=9216" not in s:
    sys.exit("two-planes-memif.yaml: no 9000 B plane in it any more")
a = s.replace("/tmp/mrcd/server.sock", d + "/a.sock").replace("/tmp/mrcd/server-client.sock", d + "/a-client.sock")
a = a.replace("/tmp/mrcd/", d + "/")
a = a.replace('"mrcd-server"', '"%s-a"' % tag)
b = []
for l in a.replace("role=server", "role=client").splitlines(True):
    if l.startswith("  - {ip:"):  # a neighbour: daemon a's side of the plane
        l = re.sub(r"(10\.\d+\.0\.)2\b", r"\g<1>1", l)
        l = re.sub(r'(:0\d:)02"', r'\g<1>01"', l)
    elif l.lstrip().startswith(("mac:", "ipv4:")):  # a port: b's own side
        l = re.sub(r"(10\.\d+\.0\.)1/", r"\g<1>2/", l)
        l = re.sub(r'(:0\d:)01"', r'\g<1>02"', l)
    b.append(l)
b = "".join(b).replace('"%s-a"]' % tag, '"%s-b", "--lcores", "0@1,1@0"]' % tag)
b = b.replace(d + "/a.sock", d + "/b.sock").replace(d + "/a-client.sock", d + "/b-client.sock")
open(d + "/a.yaml", "w").write(a)
open(d + "/b.yaml", "w").write(b)
PY
[ -s "$T/a.yaml" ] && [ -s "$T/b.yaml" ] || { bad "configs from two-planes-memif.yaml"; finish; exit 1; }
start_daemon a && start_daemon b && wait_for 30 links_up a && wait_for 30 links_up b ||
	{ bad "daemons start and links come up"; finish; exit 1; }
ok "daemons start and links come up"

for d in a b; do
	mtus=$(ctlj "$d" ports | jget '" ".join(str(p["mtu"]) for p in d)')
	check "$d's ports have a 9000 B MTU ($mtus)" test "$mtus" = "9000 9000"
done
if ctl a selftest --peer "$T/b.sock" --timeout 180 --json --bytes "$BYTES" > "$T/st.json" 2> "$T/st.err"; then
	ok "selftest $BYTES over the 9000 B planes: $(jget '"%.2f Gbit/s, %d verify errors" % (d["sender"]["goodput_gbps"], d["receiver"]["verify_errors"])' < "$T/st.json")"
else
	bad "selftest $BYTES over the 9000 B planes: $(cat "$T/st.err")"
fi
errs=$(python3 "$TOP/scripts/lib/getval.py" json "$T/st.json" receiver.verify_errors)
check "no verify errors ($errs)" num_cmp "$errs" == 0
# both planes carried the transfer (512 MiB is 131,072 packets)
for p in plane1 plane2; do
	pk=$(ctlj b counters | python3 "$TOP/scripts/lib/getval.py" json - "ports.$p.rx_mrc")
	check "$p carried the transfer ($pk MRC frames at b)" num_cmp "$pk" -gt 10000
done

check "a exits 0 on SIGTERM" stop_daemon a
check "b exits 0 on SIGTERM" stop_daemon b
finish
