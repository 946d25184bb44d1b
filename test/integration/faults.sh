#!/usr/bin/env bash
# faults.sh - each fault kind, set at run time through mrcctl on one plane,
# moves its own counter, and the verified transfer still completes.
source "$(dirname "$0")/lib.sh"
BYTES=${FAULT_BYTES:-16M}

start_pair || { bad "daemons start"; finish; exit 1; }

# kind: fault-set arguments, and the counter that must move
run_kind() {
	local counter=$1; shift
	ctl a fault-clear >/dev/null
	ctl a fault-set port=plane1 "$@" >/dev/null || { bad "$counter: fault-set $*"; return; }
	local before
	before=$(ctlj a counters | jget "d['ports']['plane1']['fault']['$counter']")
	if ctl a selftest --peer "$T/b.sock" --bytes "$BYTES" --timeout 60 > "$T/st.out" 2>&1; then
		local after
		after=$(ctlj a counters | jget "d['ports']['plane1']['fault']['$counter']")
		check "$counter moved ($before -> $after) with $*, transfer verified" test "$after" -gt "$before"
	else
		bad "$counter: selftest failed with $*: $(tail -3 "$T/st.out")"
	fi
}

run_kind dropped drop_pct=20
run_kind blackholed blackhole=true
run_kind delayed delay_us=100 jitter_us=50
run_kind reordered reorder_pct=20
run_kind duplicated duplicate_pct=20
run_kind corrupted corrupt_pct=10
run_kind trimmed trim_pct=10
run_kind ecn_marked ecn_pct=30
bad_icrc=$(ctlj b counters | jget "d['ports']['plane1']['rx_bad_icrc']")
check "corrupted frames failed b's ICRC check ($bad_icrc)" test "$bad_icrc" -gt 0

# rx direction on b: its receive stage drops
ctl a fault-clear >/dev/null
ctl b fault-set port=plane2 drop_pct=30 direction=rx >/dev/null
ctl a selftest --peer "$T/b.sock" --bytes "$BYTES" --timeout 60 >/dev/null 2>&1
check "an rx rule on b verified transfer" test $? -eq 0
check "an rx rule on b counts drops" test "$(ctlj b counters | jget "d['ports']['plane2']['fault']['dropped']")" -gt 0
check "faults lists the rule" test "$(ctlj b faults | jget 'len(d)')" = 1
check "fault-clear by rule id" ctl b fault-clear rule="$(ctlj b faults | jget 'd[0]["rule"]')"
check "no rules left" test "$(ctlj b faults | jget 'len(d)')" = 0
finish
