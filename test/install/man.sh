#!/usr/bin/env bash
# man.sh MANDIR SRC PROGRAM... - the manual pages are well-formed and true
# to the code: mandoc -T lint (and man --warnings, when man-db is there)
# print nothing for any page; every option of each PROGRAM's --help is in
# its page (mrcd.8, mrcctl.8, mrc-perf.1, mrc-sim.1), every command of
# 'mrcctl help' is in mrcctl(8), and every key the configuration loader
# knows (lib/ctl/config_sections.c) is in mrcd.yaml(5). MANDIR holds the
# configured pages (build/man), SRC is the source tree.
set -u
mandir=${1:?configured man pages} src=${2:?source tree}
shift 2
passed=0 failed=0
ok() { echo "ok   $*"; passed=$((passed + 1)); }
bad() { echo "FAIL $*"; failed=$((failed + 1)); }
pages=(mrcd.8 mrcctl.8 mrc-perf.1 mrc-sim.1 mrcd.yaml.5)
command -v mandoc >/dev/null || { echo "FAIL mandoc is not installed (scripts/setup.sh installs it)"; exit 1; }
# the rendered text, without overstrike, one space between words
text() { mandoc -T ascii -O width=200 "$mandir/$1" | col -bx | tr -s ' \t' ' '; }
for p in "${pages[@]}"; do
	if [ ! -s "$mandir/$p" ]; then bad "$p: missing"; continue; fi
	out=$(mandoc -T lint -W warning "$mandir/$p" 2>&1)
	if [ -z "$out" ]; then ok "$p: mandoc -T lint clean"; else bad "$p: mandoc -T lint: $out"; fi
	if grep -q '@[A-Z]*@' "$mandir/$p"; then bad "$p: an unfilled @VAR@"; fi
	if command -v man >/dev/null; then
		out=$(MANWIDTH=80 man --warnings -l "$mandir/$p" 2>&1 >/dev/null)
		if [ -z "$out" ]; then ok "$p: man --warnings clean"; else bad "$p: man --warnings: $out"; fi
	fi
done
# each program's options, from its own --help
for prog in "$@"; do
	name=$(basename "$prog")
	case $name in mrcd|mrcctl) page=$name.8 ;; *) page=$name.1 ;; esac
	t=$(text "$page")
	opts=$("$prog" --help 2>&1 | grep -o -- '--[a-z][a-z-]*' | sort -u)
	[ -n "$opts" ] || { bad "$name --help names no option"; continue; }
	missing=""
	for o in $opts; do
		grep -q -- "$o\b" <<<"$t" || missing="$missing $o"
	done
	if [ -z "$missing" ]; then ok "$page names all $(wc -w <<<"$opts") options of $name --help"
	else bad "$page lacks$missing (in $name --help)"; fi
	if [ "$name" = mrcctl ]; then
		cmds=$("$prog" help | awk '/^commands/{on=1; next} on && /^  [a-z_]+ /{print $1} on && /^$/ && n++{exit}')
		[ "$(wc -w <<<"$cmds")" -gt 20 ] || { bad "mrcctl help: no command list read"; continue; }
		missing=""
		for c in $cmds; do grep -qw -- "$c" <<<"$t" || missing="$missing $c"; done
		if [ -z "$missing" ]; then ok "mrcctl.8 names all $(wc -w <<<"$cmds") commands of mrcctl help"
		else bad "mrcctl.8 lacks the commands$missing"; fi
	fi
done
# every key of the configuration loader
keys=$(grep -o 'FLD_[A-Z_0-9]*("[a-z_0-9]*"' "$src/lib/ctl/config_sections.c" | sed 's/.*("//; s/"//' | sort -u)
[ "$(wc -w <<<"$keys")" -gt 50 ] || { bad "no configuration keys read from config_sections.c"; keys=""; }
t=$(text mrcd.yaml.5)
missing=""
for k in $keys; do grep -qw -- "$k" <<<"$t" || missing="$missing $k"; done
if [ -n "$keys" ] && [ -z "$missing" ]; then ok "mrcd.yaml.5 names all $(wc -w <<<"$keys") keys of the loader"
elif [ -n "$keys" ]; then bad "mrcd.yaml.5 lacks the keys$missing"; fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
