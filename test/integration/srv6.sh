#!/usr/bin/env bash
# srv6.sh - two daemons over four memif planes in IPv6 with SRv6 on
# (§2.3, D8): every MRC frame leaves with an outer IPv6 header whose DA is
# the EV's uSID path, the receiver decapsulates it, checks the ICRC from the
# inner header and places the data; neighbours resolve by NDP.
source "$(dirname "$0")/lib.sh"

make_configs
python3 - "$T/a.yaml" "$T/b.yaml" <<'PY'
import re, sys
for p in sys.argv[1:]:
    s = open(p).read()
    # IPv6 planes fd00:P::1 (a) / fd00:P::2 (b); NDP instead of static entries
    s = re.sub(r"ipv4: 10\.(\d)\.0\.(\d)/24", r"ipv6: fd00:\1::\2/64", s)
    s = re.sub(r"neighbours:\n(  - .*\n)+", "", s)
    s = re.sub(r"\n    speed_gbps: 10", "\n    speed_gbps: 10\n    mtu: 2200", s)
    s += """srv6:
  enabled: true
  locator_block: fc00:1::/32
  uplinks: 64
  templates:
    - destination: fd00::/16
      usids: [256, 512, 768]
      plane_mask: 61440
      plane_shift: 12
      uplink_usid: 1
      uplink_mask: 255
"""
    open(p, "w").write(s)
PY
if ! "$MRCD" -c "$T/a.yaml" --check > "$T/check.out" 2>&1; then
	bad "the SRv6 config is valid: $(cat "$T/check.out")"
	finish
	exit 1
fi
start_daemon a && start_daemon b || { bad "daemons start over IPv6 with SRv6"; finish; exit 1; }
check "links up" wait_for 30 links_up a
wait_for 30 links_up b

if ctl a selftest --peer "$T/b.sock" --timeout 120 --json --bytes 64M > "$T/st.json" 2> "$T/st.err"; then
	ok "selftest over SRv6: $(jget '"%.2f Gbit/s, %d rtx, %d verify errors" % (d["sender"]["goodput_gbps"], d["sender"]["rtx_total"], d["receiver"]["verify_errors"])' < "$T/st.json")"
else
	bad "selftest over SRv6: $(cat "$T/st.err")"
fi
sum() { ctlj "$1" ports | jget "sum(p[\"$2\"] for p in d)"; }
check "a built SRv6 frames ($(sum a tx_srv6))" test "$(sum a tx_srv6)" -gt 1000
check "b received SRv6 frames ($(sum b rx_srv6)) and answered in SRv6 ($(sum b tx_srv6))" \
	test "$(sum b rx_srv6)" -gt 1000 -a "$(sum b tx_srv6)" -gt 100
check "no destination without a template" \
	num_cmp "$(num_sum "$(sum a tx_no_srv6_row)" "$(sum b tx_no_srv6_row)")" -eq 0
check "no ICRC failures" num_cmp "$(num_sum "$(sum a rx_bad_icrc)" "$(sum b rx_bad_icrc)")" -eq 0
check "b resolved a by NDP on all 4 planes" \
	test "$(ctlj b counters | jget 'sum(p["neigh"]["learned"] > 0 for p in d["ports"].values())')" = 4

check "a exits 0 on SIGTERM" stop_daemon a
check "b exits 0 on SIGTERM" stop_daemon b
finish
