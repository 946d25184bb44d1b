#!/bin/sh
# sim-plot.sh - draws a PNG timeline from an mrc-sim --csv time series:
# goodput (completions) and data delivered at the receivers per bucket for
# each transport in the file, and the packets dropped per bucket below.
# Uses gnuplot, or python3 with matplotlib; with neither it says so and
# exits 0 (plotting is optional).
#
#   scripts/sim-plot.sh series.csv [out.png [title]]
set -eu

csv=${1:?usage: sim-plot.sh series.csv [out.png [title]]}
png=${2:-${csv%.csv}.png}
title=${3:-$(basename "$csv" .csv)}
[ -r "$csv" ] || { echo "sim-plot.sh: cannot read $csv" >&2; exit 2; }
header=$(head -n 1 "$csv")
case $header in
t_us,*) ;;
*) echo "sim-plot.sh: $csv is not an mrc-sim --csv series (no t_us column)" >&2; exit 2 ;;
esac

if command -v gnuplot >/dev/null 2>&1; then
	# column numbers of <tp>_gbps, <tp>_rx_gbps and <tp>_drops
	cols=$(echo "$header" | tr ',' '\n' | awk '{ printf "%s%d:%s", (NR > 1 ? " " : ""), NR, $0 }')
	plot1= plot2=
	for c in $cols; do
		n=${c%%:*} name=${c#*:}
		case $name in
		*_rx_gbps) plot1="$plot1${plot1:+, }'$csv' using 1:$n with lines dt 2 title '${name%_rx_gbps} delivered'" ;;
		*_gbps) plot1="$plot1${plot1:+, }'$csv' using 1:$n with lines lw 2 title '${name%_gbps} goodput'" ;;
		*_drops) plot2="$plot2${plot2:+, }'$csv' using 1:$n with impulses title '${name%_drops} drops'" ;;
		esac
	done
	gnuplot <<GP
set datafile separator ","
set terminal pngcairo size 1200,700 noenhanced
set output "$png"
set multiplot layout 2,1 title "$title"
set ylabel "Gb/s"
set key outside right
set lmargin 10
set rmargin 28
set grid
set format x ""
set size 1,0.65
set origin 0,0.35
plot $plot1
unset format
set format x "%g"
set xlabel "simulated time (us)"
set ylabel "packets"
set size 1,0.35
set origin 0,0
plot $plot2
unset multiplot
GP
elif python3 -c 'import matplotlib' >/dev/null 2>&1; then
	python3 - "$csv" "$png" "$title" <<'PY'
import csv, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
path, png, title = sys.argv[1:4]
with open(path) as f:
    rows = list(csv.reader(f))
head, data = rows[0], rows[1:]
t = [float(r[0]) for r in data]
fig, (a, b) = plt.subplots(2, 1, sharex=True, figsize=(12, 7), gridspec_kw={"height_ratios": [2, 1]})
for i, name in enumerate(head[1:], 1):
    ys = [float(r[i]) if r[i] else float("nan") for r in data]
    if name.endswith("_rx_gbps"):
        a.plot(t, ys, "--", label=name[:-8] + " delivered")
    elif name.endswith("_gbps"):
        a.plot(t, ys, lw=2, label=name[:-5] + " goodput")
    elif name.endswith("_drops"):
        b.vlines(t, 0, ys, label=name[:-6] + " drops")
a.set_ylabel("Gb/s"); a.grid(True); a.legend(loc="upper right")
b.set_ylabel("packets"); b.set_xlabel("simulated time (us)"); b.legend(loc="upper right")
fig.suptitle(title)
fig.savefig(png, dpi=100)
PY
else
	echo "sim-plot.sh: neither gnuplot nor python3 matplotlib is installed; no plot made"
	exit 0
fi
echo "sim-plot.sh: wrote $png"
