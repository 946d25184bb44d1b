#!/bin/sh
# check-mrc-sim-core.sh - failures on the T1-T2 (core) links of a three-tier
# fabric and the permutation's mapping, read from --json (simval.sh):
#  - permutation-3tier-core (slow, gray, blackhole and link_down on four
#    core links at once): every MRC flow finishes within 10x the healthy
#    permutation-3tier, faster than RC (or RC unfinished); packets were
#    blackholed and lost there; a second run is byte-identical;
#  - the same with its link_down a blackhole: routing no longer moves off
#    that link, so more packets are blackholed;
#  - mapping: random gives a derangement of the hosts (no host writes to
#    itself, every host receives once) that is not the shift mapping,
#    replays for a seed and changes with it;
#  - a core link needs pod, t1 and t2 inside the topology, and three tiers.
#
#   check-mrc-sim-core.sh MRC_SIM SCENARIO_DIR
set -eu

sim=$1 dir=$2
. "$(dirname "$0")/simval.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

run() { # name scenario [args]
	n=$1 f=$2
	shift 2
	"$sim" --scenario "$f" --transport both --json "$tmp/$n.json" "$@" >"$tmp/$n.txt"
}

run healthy "$dir/permutation-3tier.yaml"
run core "$dir/permutation-3tier-core.yaml"
run core2 "$dir/permutation-3tier-core.yaml"
cmp -s "$tmp/core.txt" "$tmp/core2.txt" && cmp -s "$tmp/core.json" "$tmp/core2.json" ||
	{ echo "FAIL core: two runs differ" >&2; exit 1; }
h=$(finish_ns "$tmp/healthy.json" mrc) && m=$(finish_ns "$tmp/core.json" mrc) && r=$(finish_ns "$tmp/core.json" rc) &&
	bh=$(run_v "$tmp/core.json" mrc drops_down) && lost=$(run_v "$tmp/core.json" mrc drops_loss) ||
	{ echo "FAIL core: a figure is missing" >&2; exit 1; }
num_check "core: MRC finishes within 10x healthy, ahead of RC, with blackholed and lost packets" \
	'h != "-" && m != "-" && m <= 10 * h && (r == "-" || m < r) && bh > 0 && lost > 0' \
	h-or-dash="$h" m-or-dash="$m" r-or-dash="$r" bh="$bh" lost="$lost" ||
	{ echo "FAIL core: MRC finishes within 10x healthy, ahead of RC, with blackholed and lost packets" >&2; exit 1; }
echo "ok: core links: MRC $m ns (healthy $h), RC $r, $bh blackholed, $lost lost"

sed 's/kind: link_down/kind: blackhole/' "$dir/permutation-3tier-core.yaml" >"$tmp/allbh.yaml"
grep -q 'kind: blackhole, plane: 0, pod: 3' "$tmp/allbh.yaml" || { echo "FAIL: could not rewrite the link_down" >&2; exit 1; }
run allbh "$tmp/allbh.yaml"
bh2=$(run_v "$tmp/allbh.json" mrc drops_down)
num_check "core: routing around the downed link blackholes fewer" 'bh < bh2' bh="$bh" bh2="$bh2" ||
	{ echo "FAIL core: routing around the downed link blackholes fewer" >&2; exit 1; }
echo "ok: reconvergence: $bh blackholed with link_down, $bh2 with a blackhole"

# mapping: random (flow_dst lists every host's destination here: 16 hosts)
sed 's/workload: {type: permutation,/workload: {type: permutation, mapping: random,/' \
	"$dir/permutation-3tier.yaml" >"$tmp/random.yaml"
grep -q 'mapping: random' "$tmp/random.yaml" || { echo "FAIL: could not set mapping" >&2; exit 1; }
run r1 "$tmp/random.yaml" --transport mrc
run r1b "$tmp/random.yaml" --transport mrc
run r2 "$tmp/random.yaml" --transport mrc --seed 2
cmp -s "$tmp/r1.json" "$tmp/r1b.json" || { echo "FAIL random: a seed does not replay" >&2; exit 1; }
python3 - "$tmp/r1.json" "$tmp/r2.json" "$tmp/healthy.json" <<'PY'
import json, sys
def dsts(p):
    d = json.load(open(p))["runs"][0].get("flow_dst")
    if not isinstance(d, list) or len(d) != 16 or not all(isinstance(x, int) for x in d):
        sys.exit("FAIL random: %s: no flow_dst of 16 hosts" % p)
    return d
a, b, shift = dsts(sys.argv[1]), dsts(sys.argv[2]), dsts(sys.argv[3])
if sorted(a) != list(range(16)) or any(a[i] == i for i in range(16)):
    sys.exit("FAIL random: not a derangement: %s" % a)
if shift != [(i + 8) % 16 for i in range(16)]:
    sys.exit("FAIL shift: %s" % shift)
if a == shift or a == b:
    sys.exit("FAIL random: the same as shift or as seed 2: %s" % a)
print("ok: mapping random: %s (seed 2: %s)" % (a, b))
PY
f=$(finish_ns "$tmp/r1.json" mrc)
num_check "random: MRC finishes" 'f != "-"' f-or-dash="$f" ||
	{ echo "FAIL random: MRC finishes" >&2; exit 1; }

bad() { # name message failure-line [scenario]
	{ sed '/^failures:/,$d' "${4:-$dir/permutation-3tier.yaml}"; echo "failures:"; echo "  - $3"; } >"$tmp/$1.yaml"
	if "$sim" --scenario "$tmp/$1.yaml" >"$tmp/$1.out" 2>"$tmp/$1.err"; then
		echo "FAIL $1: accepted" >&2
		exit 1
	else
		rc=$?
	fi
	[ $rc -eq 2 ] && grep -q "^$tmp/$1.yaml:[0-9]*: .*$2" "$tmp/$1.err" ||
		{ cat "$tmp/$1.err" >&2; echo "FAIL $1: exit $rc, no file:line '$2'" >&2; exit 1; }
	echo "ok: $1 rejected"
}
bad core-no-t2 'a link is t0 + t1, host, or pod + t1 + t2' '{at_us: 0, kind: slow, plane: 0, pod: 0, t1: 0, factor: 2}'
bad core-pod 'outside the topology' '{at_us: 0, kind: blackhole, plane: 0, pod: 4, t1: 0, t2: 0}'
bad core-t2 'outside the topology' '{at_us: 0, kind: blackhole, plane: 0, pod: 0, t1: 0, t2: 2}'
bad core-mixed 'a link is t0 + t1, host, or pod + t1 + t2' '{at_us: 0, kind: gray, plane: 0, t0: 0, t1: 0, t2: 0, loss_pct: 1}'
bad core-two-tiers 'needs three tiers' '{at_us: 0, kind: blackhole, plane: 0, pod: 0, t1: 0, t2: 0}' \
	"$dir/permutation-8.yaml"
