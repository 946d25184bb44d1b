# proc.sh - the one copy of the process helpers for bash scripts and tests
# (sourced; bash 4.4 or later): start a process in the background and track
# its PID, wait for a condition with a deadline, stop a process by PID
# (SIGTERM, SIGKILL after a grace period, then reap it), and a cleanup
# registry that a trap runs on EXIT, INT and TERM - also when the script
# fails half way under set -e.
#
#   proc_start VAR CMD...         start CMD in the background, tracked; VAR
#                                 (and $!) get its PID. Redirections written
#                                 after the call apply to CMD; its stdin is
#                                 /dev/null (bash's rule for background
#                                 commands), so a here-document job is
#                                 started by hand and given to proc_track.
#   proc_track PID...             track processes started some other way
#   proc_wait_for [-p PID] SECONDS CMD...
#                                 run CMD (output discarded) every 50 ms
#                                 (PROC_POLL_S) until it succeeds; 1 with a
#                                 message on stderr at the deadline, or as
#                                 soon as PID has exited. The pause between
#                                 tries forks nothing (_proc_nap)
#   proc_stop [-s SIG] [-g GRACE] PID
#                                 SIG (TERM) to PID, SIGKILL if it is still
#                                 there after GRACE seconds (PROC_GRACE, 10),
#                                 reap it; returns its exit status (128 + 9
#                                 when killed)
#   proc_stop_all                 the same for every tracked process at once
#   proc_pidfile PID FILE         write PID and its start time to FILE, for a
#                                 process that outlives the script (not
#                                 tracked: a later run stops it)
#   proc_stop_pidfile [-g GRACE] FILE
#                                 proc_stop the process FILE names if it is
#                                 still that process (same start time), then
#                                 remove FILE; 0 when there is no FILE
#   cleanup_add CMD [ARG...]      run CMD at cleanup (the last added first)
#   cleanup_dir DIR, cleanup_netns NS, cleanup_link DEV,
#   cleanup_nft FAMILY TABLE      remove it at cleanup (quietly: it may be
#                                 gone already)
#   cleanup_run                   stop every tracked process, then run the
#                                 registered commands; the traps call it, a
#                                 script may too (each entry runs once)
#
# A tracked PID is remembered with its start time (/proc/PID/stat), so a PID
# the kernel has since given to another process is never signalled. Only the
# shell that sourced this file runs the registry: a subshell's exit does not.
# Processes are stopped by PID only, never by name; a process's own children
# are its business (run single programs, or exec them: `( exec prog ) &`).

[ -n "${_PROC_SH_LOADED:-}" ] && return 0
_PROC_SH_LOADED=1
_PROC_OWNER=$BASHPID
_PROC_PIDS=()       # "pid:starttime" (starttime "-" when it was gone already)
_PROC_CLEANUPS=()   # shell-quoted commands, run last first

# _proc_start_time PID: print field 22 of /proc/PID/stat, or nothing.
_proc_start_time() {
	local line rest f
	read -r line 2>/dev/null <"/proc/$1/stat" || return 1
	rest=${line##*) }   # the fields after "(comm)": state is field 3
	read -ra f <<<"$rest"
	printf '%s' "${f[19]:-}"
}

# _proc_alive ENTRY: the "pid:starttime" ENTRY still names a live process.
_proc_alive() {
	local pid=${1%%:*} st=${1#*:} now
	[ "$st" != - ] || return 1
	kill -0 "$pid" 2>/dev/null || return 1
	now=$(_proc_start_time "$pid") || return 1
	[ -z "$st" ] || [ "$now" = "$st" ]
}

# _proc_us SECONDS: microseconds of a decimal number of seconds, in _proc_r.
_proc_us() {
	local s=$1 i f
	if ! [[ $s =~ ^[0-9]*(\.[0-9]*)?$ && $s =~ [0-9] ]]; then
		echo "proc.sh: '$s' is not a number of seconds" >&2
		return 2
	fi
	i=${s%%.*} f=
	[[ $s == *.* ]] && f=${s#*.}
	f=${f}000000
	_proc_r=$((10#${i:-0} * 1000000 + 10#${f:0:6}))
}

_proc_now() { _proc_r=${EPOCHREALTIME//[.,]/}; }

# _proc_nap SECONDS: pause without a process: a read with a timeout on a
# pipe this shell holds both ends of (no data ever comes), instead of
# forking sleep(1) every poll on a loaded host
_proc_nap() {
	if [ -z "${_PROC_NAP_FD:-}" ] || [ "${_PROC_NAP_PID:-}" != "$BASHPID" ]; then
		exec {_PROC_NAP_FD}<> <(:) || { sleep "$1"; return 0; }
		_PROC_NAP_PID=$BASHPID
	fi
	read -r -t "$1" -u "$_PROC_NAP_FD" _ || true
}

proc_track() {
	local p st
	for p in "$@"; do
		st=$(_proc_start_time "$p") || st=-
		_PROC_PIDS+=("$p:$st")
	done
}

proc_start() {
	local __proc_var=$1 __proc_pid
	shift
	"$@" &
	__proc_pid=$!
	proc_track "$__proc_pid"
	printf -v "$__proc_var" '%s' "$__proc_pid"
}

proc_wait_for() {
	local watch= deadline us
	if [ "${1:-}" = -p ]; then
		watch=$2
		shift 2
	fi
	_proc_us "$1" || return 2
	us=$_proc_r
	shift
	_proc_now
	deadline=$((_proc_r + us))
	while :; do
		"$@" >/dev/null 2>&1 && return 0
		if [ -n "$watch" ] && ! kill -0 "$watch" 2>/dev/null; then
			echo "proc_wait_for: process $watch exited while waiting for: $*" >&2
			return 1
		fi
		_proc_now
		if [ "$_proc_r" -ge "$deadline" ]; then
			echo "proc_wait_for: timed out after $((us / 1000)) ms waiting for: $*" >&2
			return 1
		fi
		_proc_nap "${PROC_POLL_S:-0.05}"
	done
}

# _proc_entry PID: the tracked entry of PID (or "PID:" when untracked).
_proc_entry() {
	local e
	for e in "${_PROC_PIDS[@]}"; do
		[ "${e%%:*}" = "$1" ] && { _proc_r=$e; return 0; }
	done
	_proc_r="$1:"
}

_proc_untrack() {
	local e keep=()
	for e in "${_PROC_PIDS[@]}"; do
		[ "${e%%:*}" = "$1" ] || keep+=("$e")
	done
	_PROC_PIDS=("${keep[@]}")
}

# _proc_stop_entries SIG GRACE_US ENTRY...: signal every live ENTRY, wait
# until all are gone or GRACE_US has passed, SIGKILL the rest, reap each.
# Sets _proc_rcs[pid] to each one's exit status.
_proc_stop_entries() {
	local sig=$1 grace=$2 e pid deadline live=() killed=() reap=()
	shift 2
	declare -gA _proc_rcs=()
	for e in "$@"; do
		pid=${e%%:*}
		_proc_rcs[$pid]=0
		if _proc_alive "$e"; then
			kill -s "$sig" "$pid" 2>/dev/null
			live+=("$e")
			reap+=("$pid")
		elif ! kill -0 "$pid" 2>/dev/null; then
			reap+=("$pid")   # gone: reaping it (if it was ours) cannot block
		fi                       # else the PID is someone else's now
	done
	_proc_now
	deadline=$((_proc_r + grace))
	while [ "${#live[@]}" -gt 0 ]; do
		local still=()
		for e in "${live[@]}"; do
			_proc_alive "$e" && still+=("$e")
		done
		live=("${still[@]}")
		[ "${#live[@]}" -gt 0 ] || break
		_proc_now
		if [ "$_proc_r" -ge "$deadline" ]; then
			for e in "${live[@]}"; do
				pid=${e%%:*}
				echo "proc.sh: pid $pid still running $((grace / 1000)) ms after SIG$sig: SIGKILL" >&2
				kill -KILL "$pid" 2>/dev/null
				killed+=("$pid")
			done
			break
		fi
		_proc_nap 0.05
	done
	for pid in "${reap[@]}"; do
		local rc=0
		# a child of this shell is reaped and gives its status; a process
		# that is not ("not a child": 127) gives 0, or 137 if we killed it
		wait "$pid" 2>/dev/null
		rc=$?
		if [ "$rc" -eq 127 ]; then
			rc=0
			[[ " ${killed[*]} " == *" $pid "* ]] && rc=137
		fi
		_proc_rcs[$pid]=$rc
	done
}

proc_stop() {
	local sig=TERM grace=${PROC_GRACE:-10}
	while [ $# -gt 1 ]; do
		case $1 in
		-s) sig=${2#SIG}; shift 2 ;;
		-g) grace=$2; shift 2 ;;
		*) break ;;
		esac
	done
	local pid=${1:?proc_stop: PID}
	_proc_us "$grace" || return 2
	local g=$_proc_r
	_proc_entry "$pid"
	_proc_stop_entries "$sig" "$g" "$_proc_r"
	_proc_untrack "$pid"
	return "${_proc_rcs[$pid]}"
}

proc_stop_all() {
	local grace=${PROC_GRACE:-10}
	_proc_us "$grace" || return 2
	[ "${#_PROC_PIDS[@]}" -gt 0 ] || return 0
	local entries=("${_PROC_PIDS[@]}")
	_PROC_PIDS=()
	_proc_stop_entries TERM "$_proc_r" "${entries[@]}"
}

proc_pidfile() {
	local st
	st=$(_proc_start_time "$1") || st=-
	echo "$1:$st" > "$2"
}

proc_stop_pidfile() {
	local grace=${PROC_GRACE:-10} e
	[ "${1:-}" = -g ] && { grace=$2; shift 2; }
	[ -f "${1:?proc_stop_pidfile: FILE}" ] || return 0
	e=$(cat "$1")
	if _proc_alive "$e"; then
		proc_stop -g "$grace" "${e%%:*}" || true
	fi
	rm -f "$1"
}

cleanup_add() {
	local q
	printf -v q '%q ' "$@"
	_PROC_CLEANUPS+=("$q")
}
cleanup_dir() { cleanup_add rm -rf -- "$1"; }
cleanup_netns() { cleanup_add _proc_quiet ip netns del "$1"; }
cleanup_link() { cleanup_add _proc_quiet ip link del "$1"; }
cleanup_nft() { cleanup_add _proc_quiet nft delete table "$1" "$2"; }
_proc_quiet() { "$@" >/dev/null 2>&1; }

cleanup_run() {
	[ "$BASHPID" = "$_PROC_OWNER" ] || return 0
	local - i cmds
	set +eu
	proc_stop_all
	cmds=("${_PROC_CLEANUPS[@]}")
	_PROC_CLEANUPS=()
	for ((i = ${#cmds[@]} - 1; i >= 0; i--)); do
		eval "${cmds[i]}"
	done
	return 0
}

_proc_on_exit() {
	local rc=$?
	cleanup_run
	exit "$rc"
}
_proc_on_signal() { # _proc_on_signal NAME NUMBER
	trap - EXIT
	cleanup_run
	trap - "$1"
	exit $((128 + $2))
}
trap _proc_on_exit EXIT
trap '_proc_on_signal INT 2' INT
trap '_proc_on_signal TERM 15' TERM
