#!/bin/sh
# check-missing-key.sh - the sim checks fail on nothing: each is fed mrc-sim
# output that lacks the key it judges (deleted, null, or "n/a" in --json, or
# the text line it reads) and must fail, naming the key; the same wrapper
# passing everything through must pass. Also the helpers themselves
# (scripts/lib/getval.py, num.sh) on missing, null and non-numeric values.
#
#   check-missing-key.sh MRC_SIM SCENARIO_DIR SWEEP_SCRIPT
set -eu
sim=$1 dir=$2 sweep=$3
here=$(cd "$(dirname "$0")" && pwd)
. "$here/simval.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*" >&2; fail=1; }

# The fake mrc-sim: the real one, then KEY of every run in the --json file
# deleted, set to null or to "n/a" (MODE), and text lines matching DROP_LINE
# left out of stdout.
cat >"$tmp/fake-sim" <<'PY'
#!/usr/bin/env python3
import json, os, re, subprocess, sys
args = sys.argv[1:]
p = subprocess.run([os.environ["REAL_SIM"]] + args, stdout=subprocess.PIPE)
drop = os.environ.get("DROP_LINE")
for line in p.stdout.decode().splitlines(True):
    if not (drop and re.search(drop, line)):
        sys.stdout.write(line)
key, mode = os.environ.get("KEY"), os.environ.get("MODE", "delete")
if key and "--json" in args:
    path = args[args.index("--json") + 1]
    d = json.load(open(path))
    for r in d["runs"]:
        if key in r:
            if mode == "delete":
                del r[key]
            else:
                r[key] = None if mode == "null" else "n/a"
    json.dump(d, open(path, "w"), indent=1)
sys.exit(p.returncode)
PY
chmod +x "$tmp/fake-sim"
fake=$tmp/fake-sim
export REAL_SIM="$sim"

# expect_fail WHAT NEEDLE CMD...: CMD must exit non-zero and say NEEDLE
expect_fail() {
	what=$1 needle=$2
	shift 2
	if "$@" >"$tmp/out" 2>"$tmp/err"; then
		bad "$what: passed"
		tail -5 "$tmp/out" >&2
	elif ! grep -qF -- "$needle" "$tmp/err" "$tmp/out"; then
		bad "$what: failed without naming '$needle'"
		tail -5 "$tmp/err" >&2
	else
		ok "$what: fails ($(grep -hF -m1 -- "$needle" "$tmp/err" "$tmp/out" | head -1 | cut -c1-110))"
	fi
}
# the verdict of a wrapper that changes nothing
if env KEY= sh "$here/check-mrc-sim.sh" "$fake" "$dir" p2p-t0t1-link-down p2p-healthy >"$tmp/out" 2>&1; then
	ok "check-mrc-sim.sh passes through the unchanged wrapper"
else
	bad "check-mrc-sim.sh fails through the unchanged wrapper"; tail -5 "$tmp/out" >&2
fi

c=$here/check-mrc-sim.sh
expect_fail "check-mrc-sim.sh without finish_ns" finish_ns \
	env KEY=finish_ns sh "$c" "$fake" "$dir" p2p-t0t1-link-down p2p-healthy
expect_fail "check-mrc-sim.sh with finish_ns null" finish_ns \
	env KEY=finish_ns MODE=null sh "$c" "$fake" "$dir" p2p-t0t1-link-down p2p-healthy
expect_fail "check-mrc-sim.sh with flows_done \"n/a\"" flows_done \
	env KEY=flows_done MODE=na sh "$c" "$fake" "$dir" p2p-healthy
expect_fail "check-mrc-sim.sh without victim_fair_ratio" victim_fair_ratio \
	env KEY=victim_fair_ratio sh "$c" "$fake" "$dir" incast-7to1 '' 0.8
expect_fail "check-mrc-sim-failures.sh without flows" "key flows" \
	env KEY=flows sh "$here/check-mrc-sim-failures.sh" "$fake"
expect_fail "check-mrc-sim-output.sh without bytes_done" bytes_done \
	env KEY=bytes_done sh "$here/check-mrc-sim-output.sh" "$fake" "$dir/p2p-t0t1-link-down.yaml" \
	"$here/../../scripts/sim-plot.sh"
expect_fail "check-mrc-sim-output.sh without end_ns" end_ns \
	env KEY=end_ns sh "$here/check-mrc-sim-output.sh" "$fake" "$dir/p2p-t0t1-link-down.yaml" \
	"$here/../../scripts/sim-plot.sh"
expect_fail "check-sim-sweep.sh without bytes_done" "not a number" \
	env KEY=bytes_done sh "$here/check-sim-sweep.sh" "$fake" "$sweep" "$dir"
expect_fail "check-mrc-sim-results.sh without step_p50_ns" step_p50_ns \
	env KEY=step_p50_ns sh "$here/check-mrc-sim-results.sh" "$fake" "$dir"
expect_fail "check-mrc-sim-results.sh without failover_us" failover_us \
	env KEY=failover_us sh "$here/check-mrc-sim-results.sh" "$fake" "$dir"
expect_fail "check-mrc-sim-results.sh without ev_drop" ev_drop \
	env KEY=ev_drop sh "$here/check-mrc-sim-results.sh" "$fake" "$dir"

# D65 (check-mrc-sim-d65.sh), one part at a time: the host-pause figures
# (one of them summed) and the planes' retired EVs (the lossless part, 24
# runs, and the planes' finish times read their figures through the same
# json/v and are left out for time)
d65=$here/check-mrc-sim-d65.sh
if env KEY= sh "$d65" "$fake" "$dir" pause >"$tmp/out" 2>&1; then
	ok "check-mrc-sim-d65.sh pause passes through the unchanged wrapper"
else
	bad "check-mrc-sim-d65.sh pause fails through the unchanged wrapper"; tail -5 "$tmp/out" >&2
fi
expect_fail "check-mrc-sim-d65.sh without silent_rounds" silent_rounds \
	env KEY=silent_rounds sh "$d65" "$fake" "$dir" pause
expect_fail "check-mrc-sim-d65.sh with rtx_port_down null (a summand)" rtx_port_down \
	env KEY=rtx_port_down MODE=null sh "$d65" "$fake" "$dir" pause
expect_fail "check-mrc-sim-d65.sh with ev_transitions \"n/a\"" ev_transitions \
	env KEY=ev_transitions MODE=na sh "$d65" "$fake" "$dir" pause
expect_fail "check-mrc-sim-d65.sh with evs_retired_by_plane \"n/a\"" evs_retired_by_plane \
	env KEY=evs_retired_by_plane MODE=na sh "$d65" "$fake" "$dir" planes
expect_fail "check-mrc-sim-d65.sh with a part it does not have" "no part" \
	sh "$d65" "$sim" "$dir" pauses

# the helpers
g=$simval_lib/getval.py
echo '{"runs": [{"transport": "mrc", "a": 1.5, "n": null, "s": "n/a", "b": true}]}' >"$tmp/j.json"
[ "$(python3 "$g" json "$tmp/j.json" 'runs[transport=mrc].a')" = 1.5 ] && ok "getval reads a number" ||
	bad "getval reads a number"
for p in 'runs[transport=mrc].x' 'runs[transport=mrc].n' 'runs[transport=mrc].s' \
	 'runs[transport=mrc].b' 'runs[transport=rc].a' 'runs.3.a' 'nope'; do
	expect_fail "getval $p" "$p" python3 "$g" json "$tmp/j.json" "$p"
done
[ "$(python3 "$g" json "$tmp/j.json" 'runs.0.n' --null -)" = - ] && ok "getval --null maps a null" ||
	bad "getval --null"
: >"$tmp/empty"
expect_fail "getval on an empty file" "not JSON" python3 "$g" json "$tmp/empty" a
python3 "$g" many "$tmp/j.json" 'runs[transport=mrc]' a x n >"$tmp/many" 2>"$tmp/many.err" &&
	bad "getval many with missing keys exits 0" || ok "getval many with missing keys exits 1"
[ "$(cat "$tmp/many")" = "a 1.5" ] && grep -q 'runs\[transport=mrc\].x' "$tmp/many.err" &&
	grep -q 'runs\[transport=mrc\].n' "$tmp/many.err" && ok "getval many prints the good keys, names the others" ||
	bad "getval many: $(cat "$tmp/many" "$tmp/many.err")"
expect_fail "val_of a key run_vals did not read" "no value for x" val_of "$tmp/many" x
expect_fail "getval word, no such line" "0 lines" python3 "$g" word "$tmp/empty" "mrc failover_us" failover_us
# the issue's example: awk alone passes on an empty value, num_check does not
if awk -v m="" -v h=5 'BEGIN { exit !(m <= 1.2 * h) }'; then
	ok "(awk alone passes m='' <= 1.2 x 5)"
fi
expect_fail "num_check m='' <= 1.2 x 5" "m: '' is not a number" num_check "x" 'm <= 1.2 * h' m= h=5
expect_fail "num_check m=n/a" "n/a" num_check "x" 'm <= 1.2 * h' m=n/a h=5
expect_fail "num_check m=- without -or-dash" "'-'" num_check "x" 'm == "-" || m <= h' m=- h=5
num_check "x" 'm == "-" || m <= h' m-or-dash=- h=5 && ok "num_check accepts - where allowed" ||
	bad "num_check -or-dash"
expect_fail "num_cmp '' -gt 0" "not a number" num_cmp "" -gt 0
expect_fail "num_sum 1 '' 2" "not a number" num_sum 1 "" 2

[ "$fail" -eq 0 ] || exit 1
echo "ok: every check fails on a missing key"
