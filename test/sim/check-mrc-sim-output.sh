#!/bin/sh
# check-mrc-sim-output.sh - the --csv time series and --progress: the series
# has the documented columns, one row per bucket up to the end of the
# longer run, replays byte for byte, and its goodput adds up to the JSON's
# bytes_done per transport; --progress writes to stderr only (stdout is
# unchanged); scripts/sim-plot.sh draws the series or says why not (exit 0).
# The totals it checks against come from --json (simval.sh).
#
#   check-mrc-sim-output.sh MRC_SIM SCENARIO PLOT_SCRIPT
set -eu

sim=$1 scen=$2 plot=$3
. "$(dirname "$0")/simval.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

"$sim" --scenario "$scen" --transport both --json "$tmp/a.json" --csv "$tmp/a.csv" >"$tmp/a.txt"
"$sim" --scenario "$scen" --transport both --json "$tmp/b.json" --csv "$tmp/b.csv" --progress \
	>"$tmp/b.txt" 2>"$tmp/b.err"
cmp -s "$tmp/a.csv" "$tmp/b.csv" || { echo "FAIL: two --csv runs differ" >&2; exit 1; }
cmp -s "$tmp/a.txt" "$tmp/b.txt" || { echo "FAIL: --progress changed stdout" >&2; exit 1; }
grep -q 'M packet events/s' "$tmp/b.err" || { echo "FAIL: --progress printed no event rate" >&2; exit 1; }

hdr=$(head -n 1 "$tmp/a.csv")
[ "$hdr" = "t_us,mrc_gbps,mrc_rx_gbps,mrc_drops,rc_gbps,rc_rx_gbps,rc_drops" ] ||
	{ echo "FAIL: CSV header '$hdr'" >&2; exit 1; }
# 10 us buckets from 0, consecutive; goodput x 10 us / 8 = bytes, summed,
# against each run's bytes_done in the JSON
done_m=$(run_v "$tmp/a.json" mrc bytes_done) || done_m=
done_r=$(run_v "$tmp/a.json" rc bytes_done) || done_r=
is_num "$done_m" && is_num "$done_r" || { echo "FAIL: no bytes_done in the JSON" >&2; exit 1; }
awk -F, -v dm="$done_m" -v dr="$done_r" '
	NR == 1 { next }
	{
		if (NF != 7) { print "FAIL: row " NR " has " NF " fields" > "/dev/stderr"; bad = 1; exit }
		if ($1 + 0 != (NR - 2) * 10) { print "FAIL: row " NR " t_us " $1 > "/dev/stderr"; bad = 1; exit }
		m += $2 * 10000 / 8; r += $5 * 10000 / 8; rows++
		if ($2 + 0 < 0 || $3 + 0 < 0 || $5 + 0 < 0 || $6 + 0 < 0) { print "FAIL: negative rate" > "/dev/stderr"; bad = 1; exit }
	}
	END {
		if (bad) exit 1
		# the CSV rounds each bucket to 1 Mb/s / 1000 = 1.25 B per 10 us
		if (rows == 0 || (m - dm) ^ 2 > (rows * 2) ^ 2 || (r - dr) ^ 2 > (rows * 2) ^ 2) {
			printf "FAIL: %d rows, series sums %.0f / %.0f bytes, JSON %s / %s\n", rows, m, r, dm, dr > "/dev/stderr"
			exit 1
		}
		printf "ok: %d rows, goodput sums to bytes_done (%s, %s)\n", rows, dm, dr
	}' "$tmp/a.csv"
# one row per 10 us bucket up to the end of the longer run
end_m=$(run_v "$tmp/a.json" mrc end_ns) || end_m=
end_r=$(run_v "$tmp/a.json" rc end_ns) || end_r=
rows=$(($(wc -l <"$tmp/a.csv") - 1))
num_check "CSV rows" 'n == int((em > er ? em : er) / 10000) + 1' n="$rows" em="$end_m" er="$end_r" ||
	{ echo "FAIL: $rows rows for runs ending at $end_m / $end_r ns" >&2; exit 1; }

"$sim" --scenario "$scen" --csv "$tmp/c.csv" --bucket-us 5 --transport mrc >/dev/null
[ "$(head -n 1 "$tmp/c.csv")" = "t_us,mrc_gbps,mrc_rx_gbps,mrc_drops" ] || { echo "FAIL: mrc-only header" >&2; exit 1; }
[ "$(sed -n 3p "$tmp/c.csv" | cut -d, -f1)" = "5.000" ] || { echo "FAIL: --bucket-us 5" >&2; exit 1; }
if "$sim" --scenario "$scen" --csv "$tmp/d.csv" --bucket-us 0 >/dev/null 2>&1; then
	echo "FAIL: --bucket-us 0 accepted" >&2
	exit 1
fi

sh "$plot" "$tmp/a.csv" "$tmp/a.png" test >"$tmp/plot.out"
cat "$tmp/plot.out"
if grep -q wrote "$tmp/plot.out"; then
	[ -s "$tmp/a.png" ] || { echo "FAIL: sim-plot.sh wrote no PNG" >&2; exit 1; }
fi
echo "ok: output"
