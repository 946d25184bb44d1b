#!/usr/bin/env bash
# client_abuse.sh - a misbehaving client (bad_client: wrong ABI, a second
# attach, regions over the arena header, garbage work requests, a scribbled
# ring header, another client's QP) gets refusals and error completions, and
# the daemon keeps serving: a verified selftest passes afterwards.
source "$(dirname "$0")/lib.sh"
BAD=${BAD_CLIENT:?path to bad_client}

start_pair || { bad "daemons start"; finish; exit 1; }
"$BAD" "$T/a.sock" > "$T/bad.out" 2>&1
rc=$?
sed 's/^/    /' "$T/bad.out"
check "every abuse was refused or answered with an error completion" test "$rc" -eq 0
check "daemon a still answers" bash -c "\"$MRCCTL\" -s $T/a.sock status >/dev/null"
check "its session is gone with its connection" test "$(ctlj a status | jget 'd["clients"]')" = 0
ctl a selftest --peer "$T/b.sock" --bytes 64M --timeout 60 > "$T/st.out" 2>&1
check "a verified transfer still passes" test $? -eq 0
finish
