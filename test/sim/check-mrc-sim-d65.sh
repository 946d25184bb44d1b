#!/bin/sh
# check-mrc-sim-d65.sh - D65 (docs/protocol.md): path health that blames a
# path only on differential evidence. Reads mrc-sim --json; a value that is
# missing fails the check. Asserts:
#   - host pauses (p2p-host-pause: 1 ms every 10 ms on both sides of a
#     lossless transfer): 0 EV transitions, 0 RTO rounds, 0 retransmissions;
#   - lossless scenarios (p2p-healthy, p2p-16m, p2p4-healthy, p4-healthy,
#     permutation-8 and alltoall-8, seeds 1-4): no fast or RTO
#     retransmission and none found unneeded; the only retransmissions
#     allowed repair a trim (rtx_nack <= trims);
#   - several planes failing (p4-k*: k of 4 planes of host 0 blackholed at
#     100 us, both ways, data only or ACKs only): MRC finishes within
#     1.5 x 4 / (4 - k) x p4-healthy, and the EVs retired at the end are
#     exactly those of the planes whose data path died (all of them).
#
#   check-mrc-sim-d65.sh MRC_SIM SCENARIO_DIR
set -eu

sim=$1 dir=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# json NAME SEED: run scenario NAME (MRC only) into $tmp/NAME.SEED.json
json() {
	"$sim" --scenario "$dir/$1.yaml" --seed "$2" --transport mrc --json "$tmp/$1.$2.json" >"$tmp/$1.$2.txt" ||
		{ echo "FAIL $1: mrc-sim exit $? (seed $2)" >&2; exit 1; }
}

# val NAME SEED EXPR: a Python expression over the MRC run r (a dict); a
# missing key, or a value that is not a number or a list, fails
val() {
	python3 - "$tmp/$1.$2.json" "$3" <<'EOF' || { echo "FAIL: $1 seed $2: cannot read $3" >&2; exit 1; }
import json, sys
doc = json.load(open(sys.argv[1]))
runs = [x for x in doc["runs"] if x["transport"] == "mrc"]
if len(runs) != 1:
    sys.exit("not one mrc run")
class Run(dict):
    def __getitem__(self, k):
        if k not in self or self.get(k) is None:
            sys.exit("missing or null: %s" % k)
        return dict.__getitem__(self, k)
v = eval(sys.argv[2], {}, {"r": Run(runs[0])})
if isinstance(v, bool) or not isinstance(v, (int, float, list)):
    sys.exit("not a number: %r" % (v,))
print(v)
EOF
}

check() { # description awk-condition -v ...
	d=$1 c=$2
	shift 2
	if awk "$@" "BEGIN { exit !($c) }"; then
		echo "ok: $d ($*)"
	else
		echo "FAIL: $d ($*)" >&2
		fail=1
	fi
}

json p2p-host-pause 1
for e in "r['ev_transitions']" "r['rto_rounds']" "r['rtx_fast'] + r['rtx_nack'] + r['rtx_rto'] + r['rtx_port_down']" \
	 "r['flows'] - r['flows_done']"; do
	check "host pauses: $e = 0" 'v == 0' -v v="$(val p2p-host-pause 1 "$e")"
done
check "host pauses: the silences were met with probes" 'v > 0' \
	-v v="$(val p2p-host-pause 1 "r['silent_rounds']")"

for s in p2p-healthy p2p-16m p2p4-healthy p4-healthy permutation-8 alltoall-8; do
	for seed in 1 2 3 4; do
		json $s $seed
		check "$s seed $seed: no fast, RTO or unneeded retransmission" 'f == 0 && t == 0 && u == 0' \
			-v f="$(val $s $seed "r['rtx_fast']")" -v t="$(val $s $seed "r['rtx_rto']")" \
			-v u="$(val $s $seed "r['rtx_spurious']")"
		check "$s seed $seed: NACK retransmissions only for trims" 'n <= t' \
			-v n="$(val $s $seed "r['rtx_nack']")" -v t="$(val $s $seed "r['trims']")"
	done
done

json p4-healthy 1
h=$(val p4-healthy 1 "r['finish_ns']")
for s in p4-k1-blackhole:1:1000 p4-k2-blackhole:2:1100 p4-k3-blackhole:3:1110 p4-k3-data:3:1110 p4-k3-ack:3:0000; do
	name=${s%%:*} rest=${s#*:} k=${rest%%:*} dead=${rest#*:}
	json $name 1
	check "$name: finish <= 1.5 x 4/(4-$k) x healthy" 'f <= 1.5 * 4 / (4 - k) * h' \
		-v f="$(val $name 1 "r['finish_ns']")" -v k=$k -v h="$h"
	# planes 0..3: a dead data path retires every EV of its plane, a live one none
	got=$(val $name 1 "int(''.join('1' if n > 0 else '0' for n in r['evs_retired_by_plane']))")
	all=$(val $name 1 "min([n for n, d in zip(r['evs_retired_by_plane'], '$dead') if d == '1'] or [48])")
	check "$name: EVs retired exactly on the planes whose data path died ($dead), all 48 of each" \
		'g == d + 0 && a == 48' -v g="$got" -v d="$dead" -v a="$all"
done

[ $fail -eq 0 ] || exit 1
echo "ok: d65"
