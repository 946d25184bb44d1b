# num.sh - numeric verdicts that fail on missing data (sourced; POSIX sh, so
# the /bin/sh checks in test/sim use it as well as the bash scripts). A
# comparison such as `awk -v m="" 'BEGIN { exit !(m <= 5) }'` or
# `test "$(( $(a) + $(b) ))" = 0` succeeds when a value is empty; these do
# not: every operand must be a decimal number, or the verdict is "fail" with
# the offending value named on stderr.
#
#   is_num V                  V is a decimal number (-12, 3.5, 1e-3)
#   num_cmp A OP B            A OP B, OP one of < <= > >= == != or
#                             -lt -le -gt -ge -eq -ne
#   num_sum V...              print the sum of the V (at least one)
#   num_sub A B               print A - B (a counter's growth)
#   num_check DESC COND NAME=V...
#                             the awk condition COND over the named values;
#                             a NAME written NAME-or-dash=V may also be "-"
#                             (an unfinished run: COND must test for it)

is_num() {
	case $1 in
	'' | *[!0-9eE.+-]*) return 1 ;;
	esac
	awk -v v="$1" 'BEGIN { exit !(v ~ /^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$/) }'
}

_num_need() { # _num_need WHAT V: fail, saying so, unless V is a number
	is_num "$2" && return 0
	echo "num.sh: $1: '$2' is not a number" >&2
	return 1
}

num_cmp() {
	[ $# -eq 3 ] || { echo "num_cmp: A OP B" >&2; return 2; }
	_num_need "num_cmp $*" "$1" && _num_need "num_cmp $*" "$3" || return 1
	case $2 in
	-lt | '<') _num_op='<' ;;
	-le | '<=') _num_op='<=' ;;
	-gt | '>') _num_op='>' ;;
	-ge | '>=') _num_op='>=' ;;
	-eq | '==' | '=') _num_op='==' ;;
	-ne | '!=') _num_op='!=' ;;
	*) echo "num_cmp: unknown operator '$2'" >&2; return 2 ;;
	esac
	awk -v a="$1" -v b="$3" "BEGIN { exit !(a + 0 $_num_op b + 0) }"
}

num_sum() {
	[ $# -gt 0 ] || { echo "num_sum: no values" >&2; return 1; }
	for _num_v in "$@"; do
		_num_need "num_sum $*" "$_num_v" || return 1
	done
	awk 'BEGIN { s = 0; for (i = 1; i < ARGC; i++) s += ARGV[i]; printf "%.15g\n", s }' "$@"
}

num_sub() {
	[ $# -eq 2 ] || { echo "num_sub: A B" >&2; return 2; }
	_num_need "num_sub $*" "$1" && _num_need "num_sub $*" "$2" || return 1
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.15g\n", a - b }'
}

num_check() {
	_num_d=$1 _num_cond=$2
	shift 2
	set -- "$@" --
	while [ "$1" != -- ]; do
		_num_n=${1%%=*} _num_v=${1#*=}
		case $_num_n in
		*-or-dash)
			_num_n=${_num_n%-or-dash}
			[ "$_num_v" = - ] || _num_need "$_num_d: $_num_n" "$_num_v" || return 1
			;;
		*) _num_need "$_num_d: $_num_n" "$_num_v" || return 1 ;;
		esac
		set -- "$@" -v "$_num_n=$_num_v"
		shift
	done
	shift
	awk "$@" "BEGIN { exit !($_num_cond) }"
}
