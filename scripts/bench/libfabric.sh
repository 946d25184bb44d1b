#!/usr/bin/env bash
# libfabric.sh - figures for the libfabric provider "mrc" (docs/libfabric.md),
# measured side by side in one run (this VM's figures vary between runs:
# read the ratios):
#   1. round-trip time and bandwidth per message size: fi_pingpong -p mrc -e rdm
#      through two mrcd over four memif planes, mrc-perf --latency through the
#      same two daemons (the provider's overhead as a ratio), and fi_pingpong
#      -p tcp -e rdm (Debian's tcp;ofi_rxm) on loopback;
#   2. MPI_Allreduce step time (lib/fabric/test_mpi, 2 ranks): Open MPI over
#      mrcd (pml cm, mtl ofi), healthy and with plane 2 blackholed by mrcd's
#      fault injection, against Open MPI over TCP (pml ob1, btl tcp,self).
# Usage: bash scripts/bench/libfabric.sh [BUILD_DIR]   (default: build)
# Not part of CI. Run it under the shared lock on a shared machine:
#   flock /tmp/mrcd-heavy.lock bash scripts/bench/libfabric.sh
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
B=${1:-$top/build}
MRCD=$B/app/mrcd/mrcd
CTL=$B/app/mrcctl/mrcctl
PERF=$B/app/mrc-perf/mrc-perf
MPI=$B/lib/fabric/test_mpi
for x in "$MRCD" "$CTL" "$PERF" "$MPI" "$B/lib/fabric/libmrc-fi.so"; do
	[ -e "$x" ] || { echo "libfabric.sh: $x missing: build first (ninja -C $B)"; exit 1; }
done
export FI_PROVIDER_PATH=$B/lib/fabric
source "$top/scripts/lib/proc.sh"   # start, wait, stop by PID (SIGKILL after a grace), cleanup on any exit
source "$top/scripts/lib/num.sh"    # is_num
T=$(mktemp -d /tmp/mrcd-bench.XXXXXX)
cleanup_dir "$T"
up() { [ "$("$CTL" -s "$T/$1.sock" --json ports | python3 -c 'import json,sys; print(all(p["link"] == "up" for p in json.load(sys.stdin)))')" = True ]; }
bash "$top/scripts/memif-pair-configs.sh" "$T" "mrcd-bench-$$"
for n in a b; do
	proc_start pid "$MRCD" -c "$T/$n.yaml" > "$T/$n.log" 2>&1
	proc_wait_for -p "$pid" 60 "$CTL" -s "$T/$n.sock" status || { echo "daemon $n did not start"; exit 1; }
done
proc_wait_for 30 up a && proc_wait_for 30 up b || { echo "links did not come up"; exit 1; }
missing=0   # a figure that could not be measured ("?" in the tables): exit 1

port=19800
# pp PROV SIZE ITERS: "<RTT us> <MB/s>" from fi_pingpong (usec/xfer is half a round trip)
pp() {
	local prov=$1 size=$2 iters=$3 extra=()
	port=$((port + 1))
	[ "$prov" = tcp ] && extra=(-p tcp) || extra=(-p mrc)
	local s
	proc_start s env FI_MRC_SOCKET="$T/b.sock" timeout 120 fi_pingpong "${extra[@]}" -e rdm -B "$port" \
		-S "$size" -I "$iters" > "$T/pp.srv" 2>&1
	proc_wait_for -p "$s" 20 bash -c "ss -ltn | grep -q ':$port '"
	FI_MRC_SOCKET=$T/a.sock timeout 120 fi_pingpong "${extra[@]}" -e rdm -P "$port" -S "$size" -I "$iters" \
		127.0.0.1 > "$T/pp.out" 2>&1
	wait "$s"   # its own timeout bounds it; tracked, so stopped if we end first
	awk '/^[0-9]/ {printf "%.1f %.1f", 2 * $7, $6}' "$T/pp.out"
}
# mrcperf SIZE ITERS: "<mean RTT us>" from mrc-perf --latency through the same daemons
mrcperf() {
	port=$((port + 1))
	local s
	proc_start s "$PERF" -s "$T/b.sock" --server --port "$port" --timeout 60 > /dev/null 2>&1
	"$PERF" -s "$T/a.sock" --client 127.0.0.1 --port "$port" --latency --size "$1" --iters "$2" --stats 0 \
		--json --timeout 60 > "$T/perf.json" 2>/dev/null
	wait "$s"   # its own timeout bounds it; tracked, so stopped if we end first
	python3 -c "
import json; d = json.load(open('$T/perf.json'))
print('%.1f' % d['latency_us']['mean'])" 2>/dev/null || echo "?"
}

echo "== libfabric provider mrc: two mrcd, four memif planes ($(date -u +%F), $(nproc) CPUs)"
printf '%-8s | %-22s | %-14s | %-8s | %-22s\n' size "fi_pingpong mrc RTT, MB/s" "mrc-perf RTT" "ratio" "fi_pingpong tcp RTT, MB/s"
for spec in 64:2000 1024:2000 4096:2000 65536:500 1048576:100; do
	size=${spec%:*} iters=${spec#*:}
	read -r m_rtt m_bw <<<"$(pp mrc "$size" "$iters")"
	if [ "$size" -le 65536 ]; then p_rtt=$(mrcperf "$size" "$iters"); else p_rtt=$(mrcperf "$size" 50); fi
	read -r t_rtt t_bw <<<"$(pp tcp "$size" "$iters")"
	ratio=$(python3 -c "print('%.2f' % ($m_rtt / $p_rtt))" 2>/dev/null || echo "?")
	for f in "${m_rtt:-}" "${m_bw:-}" "$p_rtt" "$ratio" "${t_rtt:-}" "${t_bw:-}"; do
		is_num "$f" || missing=1
	done
	printf '%-8s | %10s us %7s | %11s us | %8s | %10s us %7s\n' "$size" "${m_rtt:-?}" "${m_bw:-?}" "$p_rtt" "$ratio" "${t_rtt:-?}" "${t_bw:-?}"
done

mpi_mrc() {
	timeout 600 mpirun --allow-run-as-root --oversubscribe \
		--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include mrc --mca btl self -x FI_PROVIDER_PATH \
		-np 1 env FI_MRC_SOCKET="$T/a.sock" "$MPI" --pingpong-iters 0 "$@" : \
		-np 1 env FI_MRC_SOCKET="$T/b.sock" "$MPI" --pingpong-iters 0 "$@"
}
mpi_tcp() {
	timeout 600 mpirun --allow-run-as-root --oversubscribe --mca pml ob1 --mca btl tcp,self \
		--mca btl_tcp_if_include lo -np 2 "$MPI" --pingpong-iters 0 "$@"
}
mpi_mrc > "$T/m-healthy.out" 2>&1
"$CTL" -s "$T/a.sock" fault-set port=plane2 blackhole=true direction=both > /dev/null
mpi_mrc > "$T/m-blackhole.out" 2>&1
"$CTL" -s "$T/a.sock" fault-clear > /dev/null
mpi_tcp > "$T/m-tcp.out" 2>&1
echo
echo "== MPI_Allreduce (MPI_SUM, doubles), 2 ranks, step time"
printf '%-10s | %-16s | %-26s | %-16s\n' bytes "mrcd healthy" "mrcd, plane 2 blackholed" "Open MPI TCP"
step() { # step OUT BYTES: the step time, or "?"
	local v
	v=$(awk -v b="$2" '$1 == "allreduce" && $4 == b {print $6; exit}' "$T/$1.out")
	is_num "$v" && echo "$v" || echo "?"
}
for b in 1024 16384 262144 1048576 4194304 16777216; do
	h=$(step m-healthy "$b") k=$(step m-blackhole "$b") t=$(step m-tcp "$b")
	printf '%-10s | %13s us | %23s us | %13s us\n' "$b" "$h" "$k" "$t"
	is_num "$h" && is_num "$k" && is_num "$t" || missing=1
done
for f in m-healthy m-blackhole m-tcp; do
	grep -q "^mpi: 0 errors" "$T/$f.out" || { echo "warning: $f: $(tail -2 "$T/$f.out" | tr '\n' ' ')"; missing=1; }
done
if [ "$missing" -ne 0 ]; then
	echo "libfabric.sh: a figure could not be measured (\"?\" above)" >&2
	exit 1
fi
