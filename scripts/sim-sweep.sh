#!/bin/sh
# sim-sweep.sh - run one mrc-sim scenario over a range of values of one key
# (a message-size sweep: KEY msg_kb) and print MRC and RC side by side, a
# row per value. The key is replaced wherever the scenario sets it (block
# or flow style); a key the file does not set is added at the top level.
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
	if ! "$sim" --scenario "$tmp/s.yaml" --seed "$seed" --transport both >"$tmp/out" 2>"$tmp/err"; then
		printf '%-12s %s\n' "$v" "error: $(head -1 "$tmp/err")"
		continue
	fi
	awk -v v="$v" '
		$1 == "mrc" && $2 ~ /^[0-9]+$/ { mt = ($2 == $3) ? $4 : "-"; mg = $5 }
		$1 == "rc" && $2 ~ /^[0-9]+$/ { rt = ($2 == $3) ? $4 : "-"; rg = $5 }
		END {
			r = (mt != "-" && rt != "-" && mt > 0) ? sprintf("%.2f", rt / mt) : "-"
			printf "%-12s %12s %10s %12s %10s %8s\n", v, mt, mg, rt, rg, r
		}' "$tmp/out"
done
