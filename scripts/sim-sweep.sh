#!/bin/sh
# sim-sweep.sh - run one mrc-sim scenario over a range of values of one key
# (a message-size sweep: KEY msg_kb) and print MRC and RC side by side, a
# row per value. The key is replaced wherever the scenario sets it (block
# or flow style); a key the file does not set is added at the top level.
# The figures are read from mrc-sim --json; a run whose JSON lacks one is
# an error row, never a blank column.
#
#   scripts/sim-sweep.sh [-b MRC_SIM] [-s SEED] SCENARIO KEY VALUE...
#   scripts/sim-sweep.sh test/sim/scenarios/p2p-healthy.yaml msg_kb 4 16 64 256
set -eu

sim=${MRC_SIM:-build/app/mrc-sim/mrc-sim}
seed=1
while getopts b:s: o; do
	case $o in
	b) sim=$OPTARG ;;
	s) seed=$OPTARG ;;
	*) echo "usage: sim-sweep.sh [-b MRC_SIM] [-s SEED] SCENARIO KEY VALUE..." >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 3 ] || { echo "usage: sim-sweep.sh [-b MRC_SIM] [-s SEED] SCENARIO KEY VALUE..." >&2; exit 2; }
scen=$1 key=$2
shift 2
[ -r "$scen" ] || { echo "sim-sweep.sh: cannot read $scen" >&2; exit 2; }
[ -x "$sim" ] || { echo "sim-sweep.sh: no mrc-sim at $sim (build first, or -b)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
getval=$(cd "$(dirname "$0")/lib" && pwd)/getval.py

# run_cols TRANSPORT: "finish_us gbps" of that run in $tmp/out.json, as
# mrc-sim's table prints them; fails (reason in $tmp/jerr) on a missing key
run_cols() {
	jv() { python3 "$getval" json "$tmp/out.json" "runs[transport=$1].$2" 2>>"$tmp/jerr"; }
	n=$(jv "$1" flows) && d=$(jv "$1" flows_done) && b=$(jv "$1" bytes_done) || return 1
	if [ "$d" -eq "$n" ]; then
		t=$(jv "$1" finish_ns) || return 1
	else
		t=$(jv "$1" end_ns) || return 1
	fi
	awk -v done="$([ "$d" -eq "$n" ] && echo 1)" -v b="$b" -v t="$t" 'BEGIN {
		printf "%s %.2f\n", done ? sprintf("%.3f", t / 1000) : "-", t ? b * 8 / t : 0
	}'
}

printf '%-12s %12s %10s %12s %10s %8s\n' "$key" "mrc_us" "mrc_gbps" "rc_us" "rc_gbps" "rc/mrc"
for v in "$@"; do
	python3 - "$scen" "$key" "$v" >"$tmp/s.yaml" <<'PY'
import re, sys
path, key, val = sys.argv[1:]
s = open(path).read()
pat = re.compile(r"(^|[\s{,])(" + re.escape(key) + r"):[ \t]*[^,}\n#]*", re.M)
s, n = pat.subn(lambda m: m.group(1) + key + ": " + val, s)
if n == 0:
    s = key + ": " + val + "\n" + s
sys.stdout.write(s)
PY
	if ! "$sim" --scenario "$tmp/s.yaml" --seed "$seed" --transport both --json "$tmp/out.json" \
		>"$tmp/out" 2>"$tmp/err"; then
		printf '%-12s %s\n' "$v" "error: $(head -1 "$tmp/err")"
		continue
	fi
	# from --json: a run's finish (us, "-" when a flow is unfinished) and
	# goodput as the table prints them; a missing key is an error row
	if ! row=$(run_cols mrc) || ! rrow=$(run_cols rc); then
		printf '%-12s %s\n' "$v" "error: $(tail -1 "$tmp/jerr")"
		continue
	fi
	echo "$row $rrow" | awk -v v="$v" '{
		mt = $1; mg = $2; rt = $3; rg = $4
		r = (mt != "-" && rt != "-" && mt > 0) ? sprintf("%.2f", rt / mt) : "-"
		printf "%-12s %12s %10s %12s %10s %8s\n", v, mt, mg, rt, rg, r
	}'
done
