#!/usr/bin/env bash
# sim-vs-htsim-figures.sh - mrc-sim against htsim on the same traffic: runs
# mrc-sim on the htsim-equivalent scenarios of test/sim/scale/ (htsim-*.yaml)
# and prints, figure by figure, htsim's value, mrc-sim's and their ratio,
# with the target of issue 16. htsim's figures are constants recorded here
# (below, with their source and date); mrc-sim's are measured now: CPU time
# (user + system) and peak RSS of the whole mrc-sim process, the figures
# from its --json. A figure that cannot be measured (a run that fails, a
# value missing from its JSON) makes the script exit 1 after the table; a
# target missed does not (the table says so).
#
#   sim-vs-htsim-figures.sh [-b MRC_SIM] [--quick]
#
# Also the failover figure of test/sim/scenarios/p2p-failover.yaml
# (--bucket-us 2, seeds 1-12: median and worst) against htsim's ~30 us.
# --quick leaves out the 8192-host run (about 40 s of CPU and 0.9 GiB). Run it
# under the heavy lock: flock /tmp/mrcd-heavy.lock bash scripts/bench/sim-vs-htsim-figures.sh
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
sim=$top/build/app/mrc-sim/mrc-sim
quick=false
while [ $# -gt 0 ]; do
	case $1 in
	-b) sim=$2; shift 2 ;;
	--quick) quick=true; shift ;;
	*) echo "usage: $0 [-b MRC_SIM] [--quick]" >&2; exit 2 ;;
	esac
done
[ -x "$sim" ] || { echo "sim-vs-htsim: $sim is not an executable (build first)" >&2; exit 2; }
source "$top/scripts/lib/proc.sh"
tmp=$(mktemp -d)
cleanup_dir "$tmp"
scale=$top/test/sim/scale
getval() { python3 "$top/scripts/lib/getval.py" json "$@"; }

# ---- htsim's figures ------------------------------------------------------
# Source: issue 16, "mrc-sim against htsim" (htsim_uec from HLC-Lab/uet-htsim,
# run on this project's machine kind on the same traffic: the shift
# permutation of 2 MB flows on a 3-tier fat tree, 100 Gb/s, 1 us per link,
# 4 KiB MTU, 1-BDP buffers of 178 KB, trimming, ECN at 20/80 % of the BDP,
# NSCC). Two htsim configurations: mixed load balancing with one ACK per 4
# packets, and one ACK per packet (its best FCTs). Recorded 2026-12-03.
HT_P128_FCT_MIXED=199.9  HT_P128_FCT_ACK1=189.7  HT_P128_CPU=0.53  HT_P128_CPU_ACK1=0.85  HT_P128_RSS=21
HT_P1024_FCT_MIXED=201.2 HT_P1024_FCT_ACK1=190.5 HT_P1024_CPU=17.6 HT_P1024_CPU_ACK1=22.7 HT_P1024_RSS=184
HT_CORE25_FCT=221.8      # 1024 hosts, 8 core links at 25 %: max FCT, us
HT_INCAST_VICTIM=0.6     # 32 -> 1 incast: the victim's share of its fair rate
HT_P8192_WALL=296        # the 8192-host permutation: wall s (no CPU figure) ...
HT_P8192_RSS=2900        # ... and 2.9 GB (MB)
HT_FAILOVER=30           # REPS steers off a degraded path in about 30 us (issue 16)

failed=0
# run NAME: mrc-sim on test/sim/scale/htsim-NAME.yaml (MRC), its JSON in
# $tmp/NAME.json, CPU s and peak RSS MiB of the process in $tmp/NAME.use
run() {
	local name=$1
	python3 - "$sim" "$scale/htsim-$name.yaml" "$tmp/$name.json" "$tmp/$name.use" <<'PY' >"$tmp/$name.out" 2>&1
import resource, subprocess, sys, time
sim, scen, js, use = sys.argv[1:]
t = time.time()
rc = subprocess.call([sim, "--scenario", scen, "--transport", "mrc", "--json", js], stdout=sys.stdout)
wall = time.time() - t
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
if rc == 0:
    open(use, "w").write("%.3f %.1f %.1f\n" % (ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024.0, wall))
sys.exit(rc)
PY
	local rc=$?
	if [ $rc -ne 0 ] || [ ! -s "$tmp/$name.use" ]; then
		echo "sim-vs-htsim: htsim-$name.yaml: mrc-sim failed (exit $rc):" >&2
		tail -5 "$tmp/$name.out" >&2
		failed=1
		return 1
	fi
}
cpu() { [ -s "$tmp/$1.use" ] && awk '{print $1}' "$tmp/$1.use"; }
rss() { [ -s "$tmp/$1.use" ] && awk '{print $2}' "$tmp/$1.use"; }
wall() { [ -s "$tmp/$1.use" ] && awk '{print $3}' "$tmp/$1.use"; }
# an MRC figure from a run's JSON, scaled by $3 (ns -> us: 0.001)
fig() {
	local v
	v=$(getval "$tmp/$1.json" "runs[transport=mrc].$2" 2>>"$tmp/errors") || { failed=1; return 1; }
	awk -v v="$v" -v k="${3:-1}" 'BEGIN { printf "%.4g\n", v * k }'
}

# rtx NAME total|beyond: a run's retransmissions of every kind (fast, NACK,
# RTO, port-down) and its trims as "RTX / TRIMS", or those not repairing a
# trim: fast + RTO + port-down + the NACK ones beyond the trims
rtx() {
	local k v vals=()
	for k in rtx_fast rtx_nack rtx_rto rtx_port_down trims; do
		v=$(getval "$tmp/$1.json" "runs[transport=mrc].$k" 2>>"$tmp/errors") || { failed=1; return 1; }
		vals+=("$v")
	done
	awk -v f="${vals[0]}" -v n="${vals[1]}" -v r="${vals[2]}" -v p="${vals[3]}" -v t="${vals[4]}" -v w="$2" 'BEGIN {
		if (w == "total") printf "%d / %d\n", f + n + r + p, t
		else printf "%d\n", f + r + p + (n > t ? n - t : 0) }'
}

# row SCENARIO FIGURE HTSIM_MIXED HTSIM_ACK1 MRC BETTER TARGET
# BETTER: "low" (ratio mrc/htsim-best; below 1 is better) or "high";
# TARGET: an awk condition on m (mrc-sim's value), or "-".
rows=()
row() {
	local scen=$1 figure=$2 hm=$3 ha=$4 m=$5 better=$6 target=$7 best ratio verdict
	best=$hm
	if [ "$ha" != - ]; then
		best=$(awk -v a="$hm" -v b="$ha" -v w="$better" 'BEGIN { print (w == "low" ? (a < b ? a : b) : (a > b ? a : b)) }')
	fi
	if [ -z "$m" ]; then
		m="(not measured)" ratio=- verdict=-
		failed=1
	else
		ratio=-
		[ "$best" = - ] || ratio=$(awk -v m="$m" -v h="$best" 'BEGIN { printf "%.2f", m / h }')
		verdict=-
		if [ "$target" != - ]; then
			awk -v m="$m" "BEGIN { exit !($target) }" && verdict="met ($target)" || verdict="missed ($target)"
		fi
	fi
	rows+=("$(printf '%-22s %-20s %10s %10s %12s %8s  %s' "$scen" "$figure" "$hm" "$ha" "$m" "$ratio" "$verdict")")
}

echo "mrc-sim: $sim" >&2
for n in perm-128 perm-1024 perm-1024-core25 incast-32to1; do
	echo "running htsim-$n.yaml" >&2
	run "$n"
done
# failover (test/sim/scenarios/p2p-failover.yaml, 2 us buckets) over seeds
# 1-12: one figure a line in $tmp/failover.vals
echo "running p2p-failover.yaml, seeds 1-12" >&2
for s in $(seq 1 12); do
	if "$sim" --scenario "$top/test/sim/scenarios/p2p-failover.yaml" --seed "$s" --transport mrc --bucket-us 2 \
		--json "$tmp/failover.$s.json" >"$tmp/failover.$s.out" 2>&1; then
		getval "$tmp/failover.$s.json" "runs[transport=mrc].failover_us" >>"$tmp/failover.vals" 2>>"$tmp/errors" ||
			failed=1
	else
		echo "sim-vs-htsim: p2p-failover.yaml seed $s: mrc-sim failed" >&2
		failed=1
	fi
done
# failover_stat median|max|list: over the seeds measured (nothing if not all 12)
failover_stat() {
	[ -s "$tmp/failover.vals" ] && [ "$(wc -l <"$tmp/failover.vals")" -eq 12 ] || return 1
	sort -g "$tmp/failover.vals" | awk -v w="$1" '{ v[NR] = $1 }
		END { if (w == "median") printf "%.4g\n", (v[6] + v[7]) / 2; else if (w == "max") printf "%.4g\n", v[12];
		      else { for (i = 1; i <= 12; i++) printf "%s%g", (i > 1 ? ", " : ""), v[i]; print "" } }'
}

if ! $quick; then
	echo "running htsim-perm-8192.yaml (about 40 s)" >&2
	run perm-8192
fi

row "perm 128" "max FCT us" $HT_P128_FCT_MIXED $HT_P128_FCT_ACK1 "$(fig perm-128 fct_ns.max 0.001)" low "m <= $HT_P128_FCT_ACK1"
row "perm 128" "CPU s" $HT_P128_CPU $HT_P128_CPU_ACK1 "$(cpu perm-128)" low -
row "perm 128" "peak RSS MiB" $HT_P128_RSS - "$(rss perm-128)" low "m <= $HT_P128_RSS"
row "perm 128" "rtx / trims" - - "$(rtx perm-128 total)" low -
row "perm 128" "rtx not for a trim" - - "$(rtx perm-128 beyond)" low "m == 0"
row "perm 1024" "max FCT us" $HT_P1024_FCT_MIXED $HT_P1024_FCT_ACK1 "$(fig perm-1024 fct_ns.max 0.001)" low "m <= $HT_P1024_FCT_ACK1"
row "perm 1024" "CPU s" $HT_P1024_CPU $HT_P1024_CPU_ACK1 "$(cpu perm-1024)" low "m <= $HT_P1024_CPU / 3"
row "perm 1024" "peak RSS MiB" $HT_P1024_RSS - "$(rss perm-1024)" low "m <= $HT_P1024_RSS"
row "perm 1024" "rtx / trims" - - "$(rtx perm-1024 total)" low -
row "perm 1024" "rtx not for a trim" - - "$(rtx perm-1024 beyond)" low "m == 0"
row "perm 1024, 8 core 25%" "max FCT us" $HT_CORE25_FCT - "$(fig perm-1024-core25 fct_ns.max 0.001)" low "m <= $HT_CORE25_FCT"
row "perm 1024, 8 core 25%" "rtx / trims" - - "$(rtx perm-1024-core25 total)" low -
row "perm 1024, 8 core 25%" "rtx not for a trim" - - "$(rtx perm-1024-core25 beyond)" low "m == 0"
row "incast 32 to 1" "victim/fair share" $HT_INCAST_VICTIM - "$(fig incast-32to1 victim_fair_ratio)" high "m >= $HT_INCAST_VICTIM"
row "failover, seeds 1-12" "median us" $HT_FAILOVER - "$(failover_stat median)" low "m <= 30"
row "failover, seeds 1-12" "max us" - - "$(failover_stat max)" low "m <= 50"
if $quick; then
	rows+=("$(printf '%-22s %-20s %10s' "perm 8192" "(left out: --quick)" "")")
else
	row "perm 8192" "CPU s (htsim: wall)" $HT_P8192_WALL - "$(cpu perm-8192)" low "m <= 100"
	row "perm 8192" "peak RSS MB" $HT_P8192_RSS - "$(awk -v r="$(rss perm-8192)" 'BEGIN { if (r != "") printf "%.0f", r * 1.048576 }')" low "m <= $HT_P8192_RSS"
	row "perm 8192" "max FCT us" - - "$(fig perm-8192 fct_ns.max 0.001)" low -
	row "perm 8192" "rtx / trims" - - "$(rtx perm-8192 total)" low -
	row "perm 8192" "rtx not for a trim" - - "$(rtx perm-8192 beyond)" low "m == 0"
fi

printf '%-22s %-20s %10s %10s %12s %8s  %s\n' scenario figure "htsim" "htsim" "mrc-sim" "ratio" "issue-16 target"
printf '%-22s %-20s %10s %10s %12s %8s\n' "" "" "mixed LB" "1 ACK/pkt" "(measured)" "/best"
for r in "${rows[@]}"; do echo "$r"; done
echo "ratio: mrc-sim over htsim's better configuration (for CPU and memory below 1 means mrc-sim uses less);"
echo "failover: p2p-failover.yaml --bucket-us 2, the time until delivery is back at 90 % (seeds 1-12: $(failover_stat list))"
echo "rtx: retransmissions, fast + NACK + RTO + port-down, beside the packets the fabric trimmed (htsim's were not recorded);"
echo "  the target is none but those repairing a trim (a trim is the only loss these fabrics make: nothing is dropped)"
echo "htsim's figures: issue 16, recorded 2026-12-03; mrc-sim's: this run ($(date +%F), commit $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo unknown), $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg) at the end)"
printf 'wall s:'
for n in perm-128 perm-1024 perm-1024-core25 incast-32to1 perm-8192; do
	[ -s "$tmp/$n.use" ] && printf ' %s %s' "$n" "$(wall "$n")"
done
echo
if [ "$failed" -ne 0 ]; then
	[ -s "$tmp/errors" ] && cat "$tmp/errors" >&2
	echo "sim-vs-htsim: a figure could not be measured" >&2
	exit 1
fi
