#!/usr/bin/env bash
# pd_attack.sh - one tenant cannot write another's memory (D67, D68): on two
# daemons over memif, an attacker X on daemon B with a legitimate connection
# to Z on daemon A has Z write to the victim Y's buffer (on B) with every key
# and address it can form, including Y's exact rkey and VA (pd_attack.c).
# Y's bytes stay as they were, every try ends in a remote access error, an
# SGE naming Y's lkey is refused, and Y and its own peer W then complete a
# transfer each way.
source "$(dirname "$0")/lib.sh"
ATTACK=${PD_ATTACK:?path to pd_attack}

start_pair || { bad "daemons start"; finish; exit 1; }
timeout 300 "$ATTACK" "$T/a.sock" "$T/b.sock" > "$T/attack.json" 2> "$T/attack.err"
rc=$?
sed 's/^/    /' "$T/attack.err" | head -40
check "pd_attack ran to the end (exit $rc)" test "$rc" -eq 0
r() { jget "d[\"$1\"]" < "$T/attack.json"; }
tries=$(r tries)
check "the attacker made $tries tries (at least 100)" num_cmp "$tries" -ge 100
check "its own connection works: Z wrote X's buffer" test "$(r legit_before)" = True
check "every try ended in a remote access error ($(r rem_access_err) of $tries)" \
	num_cmp "$(r rem_access_err)" -eq "$tries"
check "no try succeeded ($(r success))" num_cmp "$(r success)" -eq 0
check "no try went unanswered ($(r timeouts) timeouts, $(r wrong_qp) stray)" \
	num_cmp "$(( $(r timeouts) + $(r wrong_qp) ))" -eq 0
check "every attacked QP told its owner it entered ERROR ($(r qp_error_entries_z) QP-error entries, D70)" \
	num_cmp "$(r qp_error_entries_z)" -eq "$tries"
check "the victim's 4096 bytes are unchanged ($(r victim_bytes_changed) differ)" \
	num_cmp "$(r victim_bytes_changed)" -eq 0
check "the victim saw no completion during the attack ($(r victim_cqes_during_attack))" \
	num_cmp "$(r victim_cqes_during_attack)" -eq 0
# MRC_WC_LOC_PROT_ERR is 1
check "a send naming the victim's lkey is refused ($(r exfil_status_str)), nothing reached Z" \
	test "$(r exfil_status)" = 1 -a "$(r exfil_bytes_leaked)" = 0
check "the victim's peer then writes the victim's buffer" test "$(r legit_after_w_to_y)" = True
check "and the victim writes its peer's" test "$(r legit_after_y_to_w)" = True
check "daemon b still answers" ctl b status
no_sessions() { [ "$(ctlj b status | jget 'd["clients"]')" = 0 ]; }
check "and dropped every session when the program closed them" wait_for 10 no_sessions
finish
