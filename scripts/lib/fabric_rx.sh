# fabric_rx.sh - fabric_rx: the bytes host B's leaves have sent it, as
# `scripts/fabric.sh rx` counts them, but cheap enough to poll while the
# daemons run on a loaded 2-CPU host: one `ip` per device and no other
# process (fabric.sh rx is a bash script of its own, ~0.3 s on a loaded
# host). Sourced; reads FABRIC_RX ("NETNS:DEV ...", from `fabric.sh env`).
# Prints the sum; fails (nothing printed) when a count cannot be read.
fabric_rx() {
	local x out v n=0
	[ -n "${FABRIC_RX:-}" ] || { echo "fabric_rx: no FABRIC_RX (eval \"\$(fabric.sh env)\")" >&2; return 1; }
	for x in $FABRIC_RX; do
		out=$(ip -n "${x%%:*}" -s link show dev "${x#*:}") || return 1
		[[ $out == *TX:* ]] || return 1
		out=${out#*TX:*$'\n'}   # the line after TX's header: bytes first
		read -r v _ <<<"$out"
		[[ $v =~ ^[0-9]+$ ]] || return 1
		n=$((n + v))
	done
	echo "$n"
}
