#!/usr/bin/env bash
# capture.sh - the shipped capture-ready configuration
# (config/four-planes-memif-a-hugepages.yaml) runs daemon a in the hugepage
# mode, and dpdk-dumpcap captures its plane 1 during a verified selftest to
# daemon b: the capture holds MRC frames (UDP 4791) that tshark reads.
# Daemon b (four-planes-memif-b.yaml, --no-huge) logs that pdump is not
# available; a does not. The hugetlbfs is mounted by the test in its own
# directory (and unmounted on exit); the config's /dev/hugepages, memif
# and control socket paths and file prefixes are rewritten as
# scripts/memif-pair-configs.sh does, and nothing else: the rest must equal
# four-planes-memif-a.yaml. Skipped, with the reason printed, without
# dpdk-dumpcap, tshark or 64 free 2 MiB hugepages, or where hugetlbfs
# cannot be mounted.
source "$(dirname "$0")/lib.sh"
skip() { echo "skip: $*"; echo "0 passed, 0 failed (skipped)"; exit 77; }
command -v dpdk-dumpcap >/dev/null || skip "dpdk-dumpcap is not installed (Debian package dpdk)"
TSHARK=${TSHARK:-$(command -v tshark)}
[ -n "$TSHARK" ] || skip "tshark is not installed"
free=$(awk '/HugePages_Free/{print $2}' /proc/meminfo)
[ "${free:-0}" -ge 64 ] || skip "only ${free:-0} free 2 MiB hugepages (scripts/setup.sh reserves 512)"
mkdir -p "$T/huge"
mount -t hugetlbfs -o pagesize=2M nodev "$T/huge" 2> "$T/mount.err" || skip "cannot mount hugetlbfs: $(cat "$T/mount.err")"
cleanup_add umount "$T/huge"   # runs before the directory is removed (last added first)

make_configs
tag="mrcd-it-$(basename "$T")"
sed -e "s#/tmp/mrcd-demo#$T#g" -e "s#\"mrcd-a\"#\"$tag-a\"#" \
	-e "s#client_socket: .*/mrcd-a-client.sock#client_socket: $T/a-client.sock#" \
	-e "s#socket: .*/mrcd-a.sock#socket: $T/a.sock#" -e "s#/dev/hugepages#$T/huge#" \
	"$TOP/config/four-planes-memif-a-hugepages.yaml" > "$T/a-huge.yaml"
check "the capture config differs from four-planes-memif-a.yaml only in eal.args" \
	diff <(grep -v '^ *#' "$T/a.yaml" | grep -v -e '^eal:' -e '^  args:') \
	     <(grep -v '^ *#' "$T/a-huge.yaml" | grep -v -e '^eal:' -e '^  args:')
check "its eal.args: a hugetlbfs, a file prefix, no --no-huge/--in-memory/--huge-unlink" \
	bash -c "grep -q '^  args: \[\"--no-pci\", \"--huge-dir\", \"$T/huge\", \"--file-prefix\", \"$tag-a\"\]$' '$T/a-huge.yaml'"
cp "$T/a-huge.yaml" "$T/a.yaml"
# not start_pair: it would write the configs again (a without hugepages)
{ start_daemon a && start_daemon b && wait_for 30 links_up a && wait_for 30 links_up b; } ||
	{ bad "the pair did not start"; finish; exit 1; }
check "a (hugepages) does not say pdump is unavailable" bash -c "! grep -q 'pdump not available' '$T/a.log'"
check "b (--no-huge) says pdump is not available" grep -q 'pdump not available: --no-huge' "$T/b.log"
check "a's memory is in the test's hugetlbfs" bash -c "ls '$T/huge' | grep -q '^$tag-a'"

proc_start dc dpdk-dumpcap --file-prefix "$tag-a" -i net_memif0 -s 9216 -c 200 -w "$T/a.pcapng" \
	> "$T/dumpcap.log" 2>&1
# it says so on stderr (or, buffered, at the end: then its file's header)
check "dpdk-dumpcap attaches to a" wait_for -p "$dc" 30 \
	bash -c "grep -q 'Capturing on' '$T/dumpcap.log' || test -s '$T/a.pcapng'"
ctl a selftest --peer "$T/b.sock" --bytes 16M --timeout 120 > "$T/st.log" 2>&1
check "a verified selftest a -> b passes during the capture" test $? -eq 0
# 200 frames of a 16 MiB transfer over four planes: dumpcap stops by itself
if ! wait_for 60 bash -c "! kill -0 $dc 2>/dev/null"; then
	echo "dumpcap still running: stopping it"
fi
proc_stop "$dc"
cat "$T/dumpcap.log"
n=$("$TSHARK" -r "$T/a.pcapng" -Y 'udp.dstport == 4791' -T fields -e frame.number 2>/dev/null | wc -l)
check "the capture holds $n MRC frames (UDP 4791) of the selftest (want >= 100)" num_cmp "$n" '>=' 100
# one after the other (docs/operations.md, Known issues)
stop_daemon b
check "b exits 0" test $? -eq 0
stop_daemon a
check "a exits 0" test $? -eq 0
left=$(ls "$T/huge" | grep -c "^$tag-a")
echo "hugepage files of $tag-a left in the hugetlbfs after a clean stop: $left"
finish
