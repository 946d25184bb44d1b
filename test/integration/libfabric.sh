#!/usr/bin/env bash
# libfabric.sh - the libfabric provider "mrc" (lib/fabric, docs/libfabric.md)
# with programs nobody here wrote: fi_info lists it with its capabilities
# and FI_MRC_* variables; fi_pingpong -e rdm (msg and tagged, 1 B ... 1 MiB,
# data checked with -c) between two daemons over four memif planes, lossless,
# with 1% drop on every plane and with a plane blackholed mid-run; our own
# libfabric programs for RMA writes, writedata, tagged matching, unexpected
# messages, 64 outstanding operations and a peer that disappears; and Open
# MPI (pml cm, mtl ofi) over it with the bytes counted in the daemons.
source "$(dirname "$0")/lib.sh"
PROV_DIR=${FABRIC_PROV_DIR:-}
FT=${FABRIC_TESTS:-}

if [ -z "$PROV_DIR" ] || [ ! -e "$PROV_DIR/libmrc-fi.so" ]; then
	echo "SKIP: the provider was not built (libfabric-dev absent: scripts/setup.sh installs it)"
	exit 77
fi
for tool in fi_info fi_pingpong; do
	command -v $tool >/dev/null || { echo "SKIP: $tool missing (libfabric-bin: scripts/setup.sh installs it)"; exit 77; }
done
export FI_PROVIDER_PATH=$PROV_DIR

# ---- 1. fi_info -------------------------------------------------------------------
fi_info -p mrc -v > "$T/fi_info.txt" 2>&1
check "fi_info -p mrc lists the provider" grep -q "prov_name: mrc" "$T/fi_info.txt"
check "  as FI_EP_RDM" grep -q "type: FI_EP_RDM" "$T/fi_info.txt"
caps=$(grep -m1 "^    caps:" "$T/fi_info.txt")
for c in FI_MSG FI_TAGGED FI_RMA FI_WRITE FI_REMOTE_WRITE FI_DIRECTED_RECV FI_SOURCE; do
	check "  with $c" grep -q "$c" <<<"$caps"
done
check "  without FI_READ or FI_ATOMIC" bash -c "! grep -qE 'FI_READ|FI_ATOMIC' <<<'$caps'"
check "  ordering FI_ORDER_SAS" grep -q "msg_order: \[ FI_ORDER_SAS \]" "$T/fi_info.txt"
check "  mr_mode VIRT_ADDR, ALLOCATED, PROV_KEY" grep -q "mr_mode: \[ FI_MR_VIRT_ADDR, FI_MR_ALLOCATED, FI_MR_PROV_KEY \]" "$T/fi_info.txt"
check "  4 bytes of remote CQ data" grep -q "cq_data_size: 4" "$T/fi_info.txt"
check "  only FI_EP_RDM (no FI_EP_MSG, no FI_EP_DGRAM)" bash -c "! fi_info -p mrc -t FI_EP_MSG >/dev/null 2>&1 && ! fi_info -p mrc -t FI_EP_DGRAM >/dev/null 2>&1"
check "  mem_tag_format leaves all 64 tag bits to the application" grep -q "mem_tag_format: 0xaaaaaaaaaaaaaaaa" "$T/fi_info.txt"
fi_info -p mrc -e > "$T/fi_info_e.txt" 2>&1
# every variable the provider defines (read from its source, so a new one
# cannot be left out of this check)
prov_src=$(dirname "$0")/../../lib/fabric/prov.c
vars=$(sed -n 's/.*fi_param_define(&mrcfi_prov, "\([a-z_]*\)".*/FI_MRC_\1/p' "$prov_src" | tr a-z A-Z)
check "the provider defines its FI_MRC_* variables ($(echo $vars))" test "$(wc -w <<<"$vars")" -ge 6
for v in $vars; do
	check "fi_info -e lists $v" grep -aq "$v" "$T/fi_info_e.txt"
done

# ---- 2. two daemons ---------------------------------------------------------------------
start_pair || { bad "daemons start"; finish; exit 1; }
# frames and bytes the daemon put on its planes (the QPs' own counters go
# with the QPs when the programs exit)
tx_pkts() { ctlj "$1" counters | jget 'sum(p["tx_pkts"] for p in d["ports"].values())'; }
tx_bytes() { ctlj "$1" counters | jget 'sum(p["tx_bytes"] for p in d["ports"].values())'; }

port=19600
# fi_pingpong's sizes stop at the provider's max_msg_size: 1 MiB here
export FI_MRC_MAX_MSG_SIZE=1048576
export FI_LOG_LEVEL=${FI_LOG_LEVEL:-warn} # the provider says why, if anything fails
# pp_start NAME [fi_pingpong args]: server on b, client on a (its daemon),
# both tracked by proc.sh (stopped by PID if the test ends first); sets
# PP_SRV and PP_CLI. Sizes 1 B ... 1 MiB (-S all), data checked (-c).
# pp_wait SRV CLI: both must exit 0. pingpong NAME [args]: the two in one.
pp_start() {
	local name=$1; shift
	port=$((port + 1))
	proc_start PP_SRV env FI_MRC_SOCKET="$T/b.sock" timeout 300 stdbuf -oL fi_pingpong -p mrc -e rdm -c \
		-B "$port" "$@" > "$T/$name.srv" 2>&1
	# the server's control port is up when it listens
	wait_for -p "$PP_SRV" 30 bash -c "ss -ltn | grep -q ':$port '" || { bad "$name: server did not listen"; return 1; }
	proc_start PP_CLI env FI_MRC_SOCKET="$T/a.sock" timeout 300 stdbuf -oL fi_pingpong -p mrc -e rdm -c \
		-P "$port" "$@" 127.0.0.1 > "$T/$name.out" 2>&1
}
# PP_RC says how each side ended (124: timeout(1) stopped it)
pp_wait() {
	local rc src
	wait "$2"
	rc=$?
	wait "$1"
	src=$?
	PP_RC="client exit $rc, server exit $src"
	[ $rc -eq 0 ] && [ $src -eq 0 ]
}
pingpong() { PP_RC=; pp_start "$@" && pp_wait "$PP_SRV" "$PP_CLI"; }
# sizes run: the last line of results names 1 MiB ("1m")
pp_summary() { awk '/^[0-9]/ {n++; last=$0} END {printf "%d sizes, last: %s", n, last}' "$T/$1.out" | tr -s ' '; }
pp_run() {
	local name=$1; shift
	if pingpong "$name" "$@"; then
		if grep -q "^1m " "$T/$name.out"; then
			ok "$name: $(pp_summary "$name")"
		else
			bad "$name: 1 MiB missing: $(tail -3 "$T/$name.out")"
		fi
	else
		bad "$name: ${PP_RC:-did not start}"
		# each side's last words, as they are (one line each, escapes shown)
		local f
		for f in "$T/$name.out" "$T/$name.srv" "$T/a.log" "$T/b.log"; do
			echo "     $(basename "$f"): $(tail -5 "$f" 2>&1 | cat -v | tr '\n' '|')"
		done
	fi
}

before=$(tx_bytes a)
pp_run pingpong-msg -S all -I 20
sent=$(num_sub "$(tx_bytes a)" "$before")   # empty (and failing) if a counter is missing
# 20 round trips of every size up to 1 MiB: a sends at least 20 MiB of payload
check "  the bytes crossed mrcd (daemon a sent ${sent:-?} bytes on its planes)" num_cmp "$sent" -gt $((20 << 20))
pp_run pingpong-tagged -m tagged -S all -I 20

for p in 1 2 3 4; do ctl a fault-set port=$p drop_pct=1 direction=both >/dev/null; done
pp_run pingpong-drop-1pct -S all -I 20
pp_run pingpong-tagged-drop-1pct -m tagged -S all -I 20
ctl a fault-clear >/dev/null

# a plane blackholed while the 1 MiB transfers run. The verdict needs the
# fault to have hit the transfer: traffic was moving when the rule went in,
# the client was still running after it, and plane 2's blackhole rule
# dropped frames (daemon a's fault counter); then both sides exit 0 with the
# data checked (-c)
bh_drops() { ctlj a counters | jget 'd["ports"]["plane2"]["fault"]["blackholed"]'; }
# bh_during PID SECS PRED: once PRED holds (waited for up to SECS while PID
# runs), blackhole plane 2 on a, both ways; notes whether it came inside
# PID's run. bh_end LABEL: clear it; true when it fell inside the run and
# dropped frames (their count in BH_DROPS), else false and says why (bad).
bh_during() {
	BH0=$(bh_drops) BH_MOVED=no BH_RUNNING=no
	wait_for -p "$1" "$2" "$3" && BH_MOVED=yes
	ctl a fault-set port=plane2 blackhole=true direction=both >/dev/null
	kill -0 "$1" 2>/dev/null && BH_RUNNING=yes
}
bh_end() {
	local bh1
	bh1=$(bh_drops)
	ctl a fault-clear >/dev/null
	BH_DROPS=$(num_sub "$bh1" "$BH0")
	if [ "$BH_MOVED" != yes ] || [ "$BH_RUNNING" != yes ]; then
		bad "$1: the blackhole did not fall inside the run (moving: $BH_MOVED, running after the rule: $BH_RUNNING)"
	elif ! num_cmp "$BH_DROPS" -gt 0; then
		bad "$1: plane 2's blackhole dropped nothing (${BH_DROPS:-no counter})"
	else
		return 0
	fi
	return 1
}
blackhole_midway() { # NAME [fi_pingpong args]
	local name=$1; shift
	local base srv cli rc
	base=$(tx_pkts a)
	pp_start "$name" "$@" || return 1
	srv=$PP_SRV cli=$PP_CLI
	moving() { num_cmp "$(tx_pkts a)" -gt $((base + 2000)); }
	bh_during "$cli" 60 moving
	pp_wait "$srv" "$cli"
	rc=$?
	bh_end "$name" || return 0
	if [ "$rc" = 0 ] && grep -q "^1m " "$T/$name.out"; then
		ok "$name: $BH_DROPS frames blackholed on plane 2 mid-run; $(pp_summary "$name")"
	else
		bad "$name: ${PP_RC:-did not start}"
		# each side's last words, as they are (one line each, escapes shown)
		local f
		for f in "$T/$name.out" "$T/$name.srv" "$T/a.log" "$T/b.log"; do
			echo "     $(basename "$f"): $(tail -5 "$f" 2>&1 | cat -v | tr '\n' '|')"
		done
	fi
}
blackhole_midway pingpong-blackhole-plane2 -S 1048576 -I 200
blackhole_midway pingpong-tagged-blackhole-plane2 -m tagged -S 1048576 -I 200
unset FI_MRC_MAX_MSG_SIZE

# ---- 3. our own libfabric programs -------------------------------------------------------------
# test_fi: server on b, client on a; each prints ok/FAIL lines of its own
mkdir -p "$T/fi"
proc_start fsrv env FI_MRC_SOCKET="$T/b.sock" timeout 300 "$FT/test_fi" --role server --dir "$T/fi" > "$T/test_fi.srv" 2>&1
FI_MRC_SOCKET=$T/a.sock timeout 300 "$FT/test_fi" --role client --dir "$T/fi" > "$T/test_fi.cli" 2>&1
crc=$?
wait "$fsrv"
src=$?
while read -r line; do
	case $line in
	ok*) ok "test_fi server: ${line#ok   }" ;;
	FAIL*) bad "test_fi server: ${line#FAIL }" ;;
	esac
done < "$T/test_fi.srv"
while read -r line; do
	case $line in
	ok*) ok "test_fi client: ${line#ok   }" ;;
	FAIL*) bad "test_fi client: ${line#FAIL }" ;;
	esac
done < "$T/test_fi.cli"
check "test_fi: both sides exit 0 (client $crc, server $src)" test "$crc" -eq 0 -a "$src" -eq 0

# ---- 4. Open MPI over mrcd ----------------------------------------------------------------------
MPI=${FABRIC_MPI:-}
if [ -z "$MPI" ] || ! command -v mpirun >/dev/null; then
	bad "Open MPI: test_mpi or mpirun missing (openmpi-bin, libopenmpi-dev: scripts/setup.sh installs them)"
	finish
	exit 1
fi
# mpi NAME [test_mpi args]: rank 0 on daemon a, rank 1 on daemon b; only
# pml cm + mtl ofi + provider mrc, and btl self: no TCP or shared-memory path
# carries MPI messages (the runtime's own out-of-band channel is loopback TCP)
# mpi_exec NAME [test_mpi args]: the same as a process of its own for
# proc_start (the tracked PID is timeout's, which passes SIGTERM on)
mpi() { ( mpi_exec "$@" ); }
mpi_exec() {
	local name=$1; shift
	exec timeout 600 mpirun --allow-run-as-root --oversubscribe \
		--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include mrc --mca btl self \
		-x FI_PROVIDER_PATH -x FI_LOG_LEVEL \
		-np 1 env FI_MRC_SOCKET="$T/a.sock" "$MPI" "$@" : \
		-np 1 env FI_MRC_SOCKET="$T/b.sock" "$MPI" "$@" > "$T/$name.out" 2>&1
}
mpi_summary() { grep -E "pingpong 4194304|allreduce round [0-9]+ 16777216|barrier|errors" "$T/$1.out" | tail -4 | paste -sd';' | tr -s ' '; }
a0=$(tx_bytes a); b0=$(tx_bytes b)
if mpi mpi-healthy && grep -q "^mpi: 0 errors" "$T/mpi-healthy.out"; then
	ok "Open MPI ping-pong, MPI_Allreduce 1 KiB..16 MiB checked, MPI_Barrier: $(mpi_summary mpi-healthy)"
else
	bad "Open MPI healthy run: $(tail -5 "$T/mpi-healthy.out" | tr '\n' ' ')"
fi
a1=$(tx_bytes a); b1=$(tx_bytes b)
da=$(num_sub "$a1" "$a0") db=$(num_sub "$b1" "$b0")   # empty (and failing) if a counter is missing
# at least the 16 MiB allreduce steps (4 of them, half the vector each way)
both_sent() { num_cmp "$da" -gt $((32 << 20)) && num_cmp "$db" -gt $((32 << 20)); }
check "  the MPI bytes crossed mrcd (a sent ${da:-?}, b sent ${db:-?} bytes on their planes)" both_sent

# the allreduce loop with plane 2 blackholed once it is under way; as
# above, the verdict needs the fault inside the run and frames dropped by it
base=$(tx_bytes a)
proc_start mp mpi_exec mpi-blackhole --rounds 4 --pingpong-iters 0
mpi_moving() { num_cmp "$(tx_bytes a)" -gt $((base + (64 << 20))); }
bh_during "$mp" 120 mpi_moving
wait "$mp"
mrc=$?
if ! bh_end "Open MPI blackhole run"; then
	:
elif [ "$mrc" = 0 ] && grep -q "^mpi: 0 errors" "$T/mpi-blackhole.out"; then
	ok "Open MPI allreduce loop with plane 2 blackholed mid-run ($BH_DROPS frames dropped): every result right ($(mpi_summary mpi-blackhole))"
else
	bad "Open MPI blackhole run: $(tail -5 "$T/mpi-blackhole.out" | tr '\n' ' ')"
fi

finish
