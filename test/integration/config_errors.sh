#!/usr/bin/env bash
# config_errors.sh - mrcd --check on every bad config in config/: exit code 2
# and the exact "<file>:<line>: <key>: <reason>" message each file expects
# (its "# expect:" line, the message or its beginning), on one line; every example config in config/ is valid; the
# embedded default is valid.
source "$(dirname "$0")/lib.sh"

cd "$TOP/test/integration/config"
for f in *.yaml; do
	want=$(sed -n 's/^# expect: //p' "$f" | head -1)
	out=$("$MRCD" --check -c "$f" 2>&1)
	rc=$?
	# the expect line is the message or its beginning
	if [ "$rc" -eq 2 ] && [ -n "$want" ] && [ "${out#"mrcd: $want"}" != "$out" ] &&
	   [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ]; then
		ok "$f"
	else
		bad "$f: rc $rc, got \"$out\", want \"mrcd: $want\""
	fi
done
for f in "$TOP"/config/*.yaml; do
	check "valid: $(basename "$f")" "$MRCD" --check -c "$f" >/dev/null
done
check "valid: embedded default" "$MRCD" --check
"$MRCD" --check -c /nonexistent.yaml >/dev/null 2>&1
check "missing file: exit 2" test $? -eq 2
"$MRCD" --bogus >/dev/null 2>&1
check "unknown option: exit 2" test $? -eq 2
finish
