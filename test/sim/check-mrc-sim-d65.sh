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
#   - a lossless 128-host permutation (test/sim/scale/htsim-perm-128, the
#     htsim comparison's traffic): nothing dropped or trimmed, every flow
#     finished, and not one retransmission of any kind, none unneeded;
#   - several planes failing (p4-k*: k of 4 planes of host 0 blackholed at
#     100 us, both ways, data only or ACKs only): MRC finishes within
#     1.5 x 4 / (4 - k) x p4-healthy, and the EVs retired at the end are
#     exactly those of the planes whose data path died (all of them);
#   - a slow plane (p4-slow50: host 0's plane-0 link at 1/50 of its rate
#     from 100 us, both ways): MRC finishes within 1.5 x 4 / (4 - 1) x
#     p4-healthy (the bound of one plane lost: a plane at 2 % of its rate
#     is worth hardly more than a dead one) and retires no EV of the three
#     healthy planes.
#
#   check-mrc-sim-d65.sh MRC_SIM SCENARIO_DIR [PART...]
# PARTs (default all three): pause, lossless, planes - the missing-key test
# (check-missing-key.sh) runs one part at a time.
set -eu

sim=$1 dir=$2
shift 2
parts=${*:-pause lossless planes}
for p in $parts; do
	case $p in pause | lossless | planes) ;; *) echo "check-mrc-sim-d65.sh: no part '$p'" >&2; exit 2 ;; esac
done
part() { case " $parts " in *" $1 "*) return 0 ;; esac; return 1; }
. "$(dirname "$0")/simval.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
fail=0

# json NAME SEED KEY...: run scenario NAME (MRC only; SCENARIO_DIR/NAME.yaml,
# else SCENARIO_DIR/../scale/NAME.yaml) into $tmp/NAME.SEED.json and read
# the KEYs of its run into $tmp/NAME.SEED.vals (one process; a key it lacks
# is named here and fails the check using it)
json() {
	_n=$1 _s=$2
	shift 2
	_y=$dir/$_n.yaml
	[ -f "$_y" ] || _y=$dir/../scale/$_n.yaml
	"$sim" --scenario "$_y" --seed "$_s" --transport mrc --json "$tmp/$_n.$_s.json" >"$tmp/$_n.$_s.txt" ||
		{ echo "FAIL $_n: mrc-sim exit $? (seed $_s)" >&2; exit 1; }
	run_vals "$tmp/$_n.$_s.json" mrc "$tmp/$_n.$_s.vals" "$@" || true
}
# v NAME SEED KEY: KEY of the MRC run (a number; prints nothing and says
# which key when it is missing, null or not a number)
v() { val_of "$tmp/$1.$2.vals" "$3"; }

check() { # description awk-condition name=value...
	if num_check "$@"; then
		echo "ok: $1 ($(shift 2; echo "$*"))"
	else
		echo "FAIL: $1 ($(shift 2; echo "$*"))" >&2
		fail=1
	fi
}

if part pause; then
	json p2p-host-pause 1 ev_transitions rto_rounds rtx_fast rtx_nack rtx_rto rtx_port_down flows flows_done \
		silent_rounds
	for k in ev_transitions rto_rounds; do
		check "host pauses: $k = 0" 'v == 0' v="$(v p2p-host-pause 1 $k)"
	done
	check "host pauses: no retransmission (fast + nack + rto + port_down = 0)" 'v == 0' \
		v="$(num_sum "$(v p2p-host-pause 1 rtx_fast)" "$(v p2p-host-pause 1 rtx_nack)" \
			"$(v p2p-host-pause 1 rtx_rto)" "$(v p2p-host-pause 1 rtx_port_down)")"
	check "host pauses: every flow finished" 'd == n && n > 0' \
		n="$(v p2p-host-pause 1 flows)" d="$(v p2p-host-pause 1 flows_done)"
	check "host pauses: the silences were met with probes" 's > 0' s="$(v p2p-host-pause 1 silent_rounds)"
fi

if part lossless; then
	for s in p2p-healthy p2p-16m p2p4-healthy p4-healthy permutation-8 alltoall-8; do
		for seed in 1 2 3 4; do
			json $s $seed rtx_fast rtx_rto rtx_spurious rtx_nack trims
			check "$s seed $seed: no fast, RTO or unneeded retransmission" 'f == 0 && t == 0 && u == 0' \
				f="$(v $s $seed rtx_fast)" t="$(v $s $seed rtx_rto)" u="$(v $s $seed rtx_spurious)"
			check "$s seed $seed: NACK retransmissions only for trims" 'n <= t' \
				n="$(v $s $seed rtx_nack)" t="$(v $s $seed trims)"
		done
	done
	# the htsim comparison's 128-host shift permutation (0.5 s of CPU): a
	# lossless fabric, so not one retransmission
	p=htsim-perm-128
	json $p 1 flows flows_done drops_buffer drops_loss drops_down trims rtx_fast rtx_nack rtx_rto rtx_port_down \
		rtx_spurious
	check "$p: every flow finished" 'd == n && n > 0' n="$(v $p 1 flows)" d="$(v $p 1 flows_done)"
	check "$p: lossless (nothing dropped or trimmed)" 'v == 0' \
		v="$(num_sum "$(v $p 1 drops_buffer)" "$(v $p 1 drops_loss)" "$(v $p 1 drops_down)" "$(v $p 1 trims)")"
	check "$p: no retransmission (fast + nack + rto + port_down = 0), none unneeded" 'v == 0 && u == 0' \
		v="$(num_sum "$(v $p 1 rtx_fast)" "$(v $p 1 rtx_nack)" "$(v $p 1 rtx_rto)" "$(v $p 1 rtx_port_down)")" \
		u="$(v $p 1 rtx_spurious)"
fi

if part planes; then
	json p4-healthy 1 finish_ns
	h=$(v p4-healthy 1 finish_ns) || h= # (then every bound below fails, naming h)
	for s in p4-k1-blackhole:1:1000 p4-k2-blackhole:2:1100 p4-k3-blackhole:3:1110 p4-k3-data:3:1110 p4-k3-ack:3:0000; do
		name=${s%%:*} rest=${s#*:} k=${rest%%:*} dead=${rest#*:}
		json $name 1 finish_ns evs_retired_by_plane.0 evs_retired_by_plane.1 evs_retired_by_plane.2 \
			evs_retired_by_plane.3
		check "$name: finish <= 1.5 x 4/(4-$k) x healthy" 'f <= 1.5 * 4 / (4 - k) * h' \
			f="$(v $name 1 finish_ns)" k=$k h="$h"
		# planes 0..3: a dead data path retires every EV of its plane (48), a
		# live one none
		for p in 0 1 2 3; do
			want=0
			[ "$(echo "$dead" | cut -c$((p + 1)))" = 1 ] && want=48
			check "$name: EVs retired on plane $p = $want (data path $([ $want = 48 ] && echo dead || echo alive))" \
				'n == w' n="$(v $name 1 evs_retired_by_plane.$p)" w=$want
		done
	done
	# a plane at 1/50 of its rate: the bound of one plane lost
	json p4-slow50 1 finish_ns evs_retired_by_plane.1 evs_retired_by_plane.2 evs_retired_by_plane.3
	check "p4-slow50: finish <= 1.5 x 4/(4-1) x healthy" 'f <= 1.5 * 4 / 3 * h' \
		f="$(v p4-slow50 1 finish_ns)" h="$h"
	for p in 1 2 3; do
		check "p4-slow50: no EV retired on healthy plane $p" 'n == 0' n="$(v p4-slow50 1 evs_retired_by_plane.$p)"
	done
fi

[ $fail -eq 0 ] || exit 1
echo "ok: d65 ($parts)"
