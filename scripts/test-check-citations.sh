#!/usr/bin/env bash
# test-check-citations.sh - scripts/check-citations.sh on small fixture trees
# (a git work tree in a temporary directory, with a docs/protocol.md and a
# code file): it passes when every citation resolves and fails, naming the
# file, line and citation, on each kind of bad one and whenever it would have
# nothing to check. Run by the unit suite.
#
# The fixtures' section signs, design-choice numbers and document names are
# built from variables, so that this file itself cites nothing.
set -u
here=$(cd "$(dirname "$0")" && pwd)
check="$here/check-citations.sh"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

S=$(printf '\302\247') # the section sign
D=D                    # the letter of a design-choice number
M=md                   # the extension of a markdown document
B=brie""f              # the name of the project's notes outside the tree
CB="cites the $B"      # how the checker reports a citation of it
t="$tmp/tree"
n=0
fails=0

# A fresh tree in which every citation resolves.
tree() {
	rm -rf "$t"
	mkdir -p "$t/docs" "$t/lib" "$t/scripts"
	git -C "$t" init -q || exit 1
	cat >"$t/docs/protocol.$M" <<EOF
# spec
## 1. One
### 1.2 One two
\`\`\`
## 7. Inside a code block, not a heading
\`\`\`
## 9. Design choices
| $D | Choice | Why | Status |
|---|---|---|---|
| ${D}1 | a | b | c |
| ${D}2 | a | b | c |
EOF
	printf '# other\n## 3. Three\n' >"$t/docs/other.$M"
	printf '/* %s1.2, %s1 and %s2 (other.%s %s3, %s3; RFC 8985 %s7.2) */\n' \
		"$S" "$D" "$D" "$M" "$S" "$S" "$S" >"$t/lib/a.c"
	printf 'See protocol.%s %s1 and the paper %s2.1, %s5.2.\n' "$M" "$S" "$S" "$S" >"$t/docs/notes.$M"
	add
}

add() { git -C "$t" add -A || exit 1; }

# code FILE TEXT: add a tracked code file holding TEXT.
code() { printf '%s\n' "$2" >"$t/$1"; add; }

# expect RC NAME [TEXT]: the checker on the tree exits RC and, when given,
# prints TEXT.
expect() {
	local rc out
	n=$((n + 1))
	out=$(bash "$check" "$t" 2>&1)
	rc=$?
	if [ "$rc" -ne "$1" ] || { [ $# -ge 3 ] && ! grep -qF -- "$3" <<<"$out"; }; then
		echo "FAIL $2: exit $rc, want $1${3:+ and \"$3\"}; output:"
		sed 's/^/    /' <<<"$out"
		fails=$((fails + 1))
	else
		echo "ok   $2"
	fi
}

tree
expect 0 "good citations pass" "citations: ok (4 files (1 code), 7 section and 4 design-choice citations, 6 of them in code)"

tree; code lib/b.c "x /* ${S}7.7 */"
expect 1 "an unknown section fails" "lib/b.c:1: no such section in docs/protocol.$M: ${S}7.7"

tree; code lib/b.c "/* ${S}7 */"
expect 1 "a heading inside a code block is no section" "lib/b.c:1: no such section in docs/protocol.$M: ${S}7"

tree; code lib/b.c "/* ${D}3 */"
expect 1 "an unknown design choice fails" "lib/b.c:1: unknown design choice: ${D}3"

tree; code lib/b.sh "# ($B ${S}1.2)"
expect 1 "a section of the $B fails" "lib/b.sh:1: $CB: $B ${S}1.2"

tree; code lib/b.c "/* the defaults of the $B */"
expect 1 "naming the $B in code fails" "lib/b.c:1: $CB: the $B"

tree; code lib/b.py "# other.$M ${S}4"
expect 1 "a named document without the section fails" "lib/b.py:1: no such section in docs/other.$M: other.$M ${S}4"

tree; code lib/b.c "/* ${S}3, ${S}1.2 */"
expect 1 "a list keeps its first citation's document" "lib/b.c:1: no such section in docs/protocol.$M: ${S}3"

tree; code lib/b.c "/* design.$M ${S}3 */"
expect 1 "a document outside the tree fails" "lib/b.c:1: cites a document outside the tree: design.$M ${S}3"

tree; code lib/b.c "/* docs/style.$M practice 4 */"
expect 1 "an untracked document path fails" "lib/b.c:1: cites a document outside the tree: docs/style.$M"

tree; code lib/b.yaml "# ../shared/docs/env.$M"
expect 1 "a path out of the tree fails" "lib/b.yaml:1: cites a document outside the tree: ../shared/docs/env.$M"

tree; code lib/b.c "/* paper ${S}2.1 */"
expect 1 "a paper's section in code fails" "lib/b.c:1: cites a document outside the tree: paper ${S}2.1"

tree; printf 'protocol.%s section 5 says\n' "$M" >"$t/docs/x.$M"; add
expect 1 "a doc's prose reference must resolve" "docs/x.$M:1: no such section in docs/protocol.$M: protocol.$M ${S}5"

tree; printf 'the %s %s1.2\n' "$B" "$S" >"$t/docs/x.$M"; add
expect 1 "a doc may not cite sections of the $B" "docs/x.$M:1: $CB: $B ${S}1.2"

tree; printf '/* %s7.7 */\n' "$S" >"$t/lib/untracked.c"
expect 0 "untracked files are not read" "citations: ok"

tree; git -C "$t" rm -q --cached "docs/protocol.$M"
expect 1 "an untracked protocol.$M fails" "docs/protocol.$M is missing"

tree; rm "$t/docs/protocol.$M"; add
expect 1 "a missing protocol.$M fails" "docs/protocol.$M is missing"

tree; printf '# spec\nno numbers\n| %s | Choice | Why | Status |\n| %s1 | a | b | c |\n' "$D" "$D" >"$t/docs/protocol.$M"; add
expect 1 "no numbered heading fails" "no numbered heading in docs/protocol.$M"

tree; printf '# spec\n## 1. One\n### 1.2 Two\n' >"$t/docs/protocol.$M"; add
expect 1 "no design-choice table fails" "no design-choice table"

tree; printf '| %s2 | again | b | c |\n' "$D" >>"$t/docs/protocol.$M"; add
expect 1 "a design choice defined twice fails" "design choice defined twice: ${D}2"

tree; printf '| %s4 | a | b | c |\n' "$D" >>"$t/docs/protocol.$M"; add
expect 1 "a gap in the design-choice list fails" "design-choice list has no ${D}3"

tree; printf 'nothing here\n' >"$t/lib/a.c"; printf 'nor here\n' >"$t/docs/notes.$M"; add
expect 1 "no citation at all fails" "nothing checked"

rm -rf "$t"; mkdir -p "$t"
expect 1 "a directory that is not a git tree fails" "not a git work tree"

tree; code lib/b.c "/* ${S}7.7 */"
printf '# fixed later\nlib/b.c\tno such section in docs/protocol.%s: %s7.7\n' "$M" "$S" \
	>"$t/scripts/check-citations.pending"; add
expect 0 "a pending finding is reported, not failed" "pending: lib/b.c:1: no such section"

tree; printf 'lib/a.c\tunknown design choice: %s9\n' "$D" >"$t/scripts/check-citations.pending"; add
expect 1 "a stale pending entry fails" "stale entry, matches nothing: lib/a.c: unknown design choice: ${D}9"

echo "$((n - fails)) passed, $fails failed"
[ "$n" -gt 0 ] && [ "$fails" -eq 0 ]
