# simval.sh - what the mrc-sim checks read from `mrc-sim --json` (sourced by
# the check-*.sh scripts here; POSIX sh). Every reader prints nothing and
# fails, naming the key, when the key is missing or not a number, and the
# verdicts (num_check, num_cmp from scripts/lib/num.sh) fail on an empty
# value: a check cannot pass on output that lacks what it checks.
#
#   jv FILE PATH                 a number at PATH (scripts/lib/getval.py)
#   run_v FILE TRANSPORT KEY [--str]
#                                KEY of the run of TRANSPORT (mrc or rc); a
#                                non-empty string with --str
#   finish_ns FILE TRANSPORT     its finish time, or "-" when a flow is
#                                unfinished (flows_done < flows)
#   step_p50_ns FILE TRANSPORT   the p50 step time over ranks and steps; fails
#                                when the run has no step at all
#   run_vals FILE TRANSPORT OUT KEY...
#                                the KEYs of the run of TRANSPORT read at once
#                                (one process) into OUT as "KEY VALUE" lines;
#                                fails, naming them, when any is missing
#   val_of OUT KEY               KEY's value in OUT (from run_vals); prints
#                                nothing and names KEY when OUT has none
#   text_v FILE PREFIX KEY [--str|--dash]
#                                a figure of the text table (to check the
#                                table against --json)
simval_lib=$(cd "$(dirname "$0")/../../scripts/lib" && pwd)
. "$simval_lib/num.sh"

jv() { python3 "$simval_lib/getval.py" json "$@"; }
text_v() { python3 "$simval_lib/getval.py" word "$@"; }
run_v() { _sv_f=$1 _sv_t=$2 _sv_k=$3; shift 3; jv "$_sv_f" "runs[transport=$_sv_t].$_sv_k" "$@"; }
run_vals() {
	_sv_f=$1 _sv_t=$2 _sv_o=$3
	shift 3
	python3 "$simval_lib/getval.py" many "$_sv_f" "runs[transport=$_sv_t]" "$@" >"$_sv_o"
}
val_of() {
	while read -r _sv_k _sv_v; do
		[ "$_sv_k" = "$2" ] && [ -n "$_sv_v" ] && { echo "$_sv_v"; return 0; }
	done <"$1"
	echo "simval: $1: no value for $2" >&2
	return 1
}
finish_ns() {
	_sv_n=$(run_v "$1" "$2" flows) && _sv_d=$(run_v "$1" "$2" flows_done) || return 1
	if [ "$_sv_n" -gt 0 ] && [ "$_sv_d" -eq "$_sv_n" ]; then
		run_v "$1" "$2" finish_ns
	else
		echo -
	fi
}
step_p50_ns() {
	run_v "$1" "$2" steps.0.step_p50_ns >/dev/null && run_v "$1" "$2" step_p50_ns
}
