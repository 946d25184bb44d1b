#!/bin/sh
# check-mrc-sim-output.sh - the --csv time series and --progress: the series
# has the documented columns, one row per bucket up to the end of the
# longer run, replays byte for byte, and its goodput adds up to the JSON's
# bytes_done per transport; --progress writes to stderr only (stdout is
# unchanged); scripts/sim-plot.sh draws the series or says why not (exit 0).
#
#   check-mrc-sim-output.sh MRC_SIM SCENARIO PLOT_SCRIPT
set -eu

sim=$1 scen=$2 plot=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$sim" --scenario "$scen" --transport both --json "$tmp/a.json" --csv "$tmp/a.csv" >"$tmp/a.txt"
"$sim" --scenario "$scen" --transport both --json "$tmp/b.json" --csv "$tmp/b.csv" --progress \
	>"$tmp/b.txt" 2>"$tmp/b.err"
cmp -s "$tmp/a.csv" "$tmp/b.csv" || { echo "FAIL: two --csv runs differ" >&2; exit 1; }
cmp -s "$tmp/a.txt" "$tmp/b.txt" || { echo "FAIL: --progress changed stdout" >&2; exit 1; }
grep -q 'M packet events/s' "$tmp/b.err" || { echo "FAIL: --progress printed no event rate" >&2; exit 1; }

hdr=$(head -n 1 "$tmp/a.csv")
[ "$hdr" = "t_us,mrc_gbps,mrc_rx_gbps,mrc_drops,rc_gbps,rc_rx_gbps,rc_drops" ] ||
	{ echo "FAIL: CSV header '$hdr'" >&2; exit 1; }
# 10 us buckets from 0, consecutive; goodput x 10 us / 8 = bytes, summed
awk -F, -v json="$tmp/a.json" '
	NR == 1 { next }
	{
		if (NF != 7) { print "FAIL: row " NR " has " NF " fields" > "/dev/stderr"; bad = 1; exit }
		if ($1 + 0 != (NR - 2) * 10) { print "FAIL: row " NR " t_us " $1 > "/dev/stderr"; bad = 1; exit }
		m += $2 * 10000 / 8; r += $5 * 10000 / 8; rows++
		if ($2 + 0 < 0 || $3 + 0 < 0 || $5 + 0 < 0 || $6 + 0 < 0) { print "FAIL: negative rate" > "/dev/stderr"; bad = 1; exit }
	}
	END {
		if (bad) exit 1
		n = 0
		while ((getline line < json) > 0)
			if (match(line, /"bytes_done": [0-9]+/))
				done[n++] = substr(line, RSTART + 14, RLENGTH - 14)
		# the CSV rounds each bucket to 1 Mb/s / 1000 = 1.25 B per 10 us
		if (n != 2 || (m - done[0]) ^ 2 > (rows * 2) ^ 2 || (r - done[1]) ^ 2 > (rows * 2) ^ 2) {
			printf "FAIL: series sums %.0f / %.0f bytes, JSON %s / %s\n", m, r, done[0], done[1] > "/dev/stderr"
			exit 1
		}
		printf "ok: %d rows, goodput sums to bytes_done (%s, %s)\n", rows, done[0], done[1]
	}' "$tmp/a.csv"
rc_end=$(awk '$1 == "rc" && $2 ~ /^[0-9]+$/ { print $4 }' "$tmp/a.txt")
rows=$(($(wc -l <"$tmp/a.csv") - 1))
awk -v e="$rc_end" -v n="$rows" 'BEGIN { exit !(n == int(e / 10) + 1) }' ||
	{ echo "FAIL: $rows rows for a run ending at $rc_end us" >&2; exit 1; }

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
