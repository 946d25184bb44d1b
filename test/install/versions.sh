#!/usr/bin/env bash
# versions.sh VERSION PROGRAM... - every program prints "NAME VERSION" for
# --version (and for -V), exits 0, connects to nothing, and its --help
# names the option. VERSION is meson.build's project version, so a program
# that hard-codes its own, or prints none, fails here.
set -u
want=${1:?meson project version}
shift
[ $# -gt 0 ] || { echo "FAIL: no program given"; exit 1; }
passed=0 failed=0
for prog in "$@"; do
	name=$(basename "$prog")
	for opt in --version -V; do
		# MRCD_SOCKET names a socket nobody serves: --version must not connect
		out=$(MRCD_SOCKET=/nonexistent/mrcd.sock timeout 20 "$prog" "$opt" 2>&1)
		rc=$?
		if [ "$rc" -eq 0 ] && [ "$out" = "$name $want" ]; then
			echo "ok   $name $opt: $out"; passed=$((passed + 1))
		else
			echo "FAIL $name $opt: exit $rc, printed '$out', expected '$name $want'"; failed=$((failed + 1))
		fi
	done
	if timeout 20 "$prog" --help 2>&1 | grep -q -- '--version'; then
		echo "ok   $name --help names --version"; passed=$((passed + 1))
	else
		echo "FAIL $name --help does not name --version"; failed=$((failed + 1))
	fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
