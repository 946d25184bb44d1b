#!/usr/bin/env bash
# tshark_check.sh PCAP_GEN TSHARK - decode the frames pcap_gen writes (made by
# mrcp_frame_build + mrcp_pcap) with Wireshark's RoCEv2 dissector, which takes
# UDP 4791 by default, and check the protocol stack and BTH fields of each.
set -u
gen=$1 tshark=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/mrcd-tshark.XXXXXX")
trap 'rm -rf "$work"' EXIT

"$gen" "$work/mrc.pcap" || { echo "pcap_gen failed"; exit 1; }
# tshark warns when run as root; keep stderr apart from the fields.
"$tshark" -r "$work/mrc.pcap" -T fields -E separator=/t \
	-e frame.protocols -e infiniband.bth.destqp -e infiniband.bth.psn \
	>"$work/out" 2>"$work/err"
rc=$?
if [ "$rc" -ne 0 ]; then
	cat "$work/err"
	echo "tshark failed (exit $rc)"
	exit 1
fi

want=(
	"eth:ethertype:ip:udp:infiniband"
	"eth:ethertype:ipv6:udp:infiniband"
	"eth:ethertype:vlan:ethertype:ip:udp:infiniband"
	"eth:ethertype:vlan:ethertype:ipv6:udp:infiniband"
	"eth:ethertype:ipv6:ipv6:udp:infiniband"
)
fail=0
n=0
while IFS=$'\t' read -r protos qp psn; do
	exp=${want[$n]:-none}
	# PSN may print in decimal or hex depending on the Wireshark version.
	case "$psn" in 0x*) psn=$((psn)) ;; esac
	if [[ "$protos" != "$exp"* ]] || [ "$qp" != 0x123456 ] || [ "$psn" != 11259375 ]; then
		echo "frame $((n + 1)): got '$protos' qp=$qp psn=$psn; want '$exp' qp=0x123456 psn=0xabcdef"
		fail=1
	else
		echo "frame $((n + 1)): $protos qp=$qp psn=$psn ok"
	fi
	n=$((n + 1))
done <"$work/out"
if [ "$n" -ne "${#want[@]}" ]; then
	echo "tshark decoded $n frames, want ${#want[@]}"
	fail=1
fi
exit "$fail"
