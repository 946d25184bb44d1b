#!/bin/sh
# check-event-queue.sh - the calendar queue (mrcp_calq.h, mrc-sim's default)
# pops events in the order the binary heap did: every scenario given, run
# with --event-queue calendar and with --event-queue heap, gives the same
# table, JSON and CSV byte for byte (but the JSON's memory object: the two
# queues take different room). A scenario that produces no output, or
# no run in its JSON, fails: an empty comparison proves nothing.
#
#   check-event-queue.sh MRC_SIM SCENARIO...
set -eu

sim=$1
shift
[ $# -gt 0 ] || { echo "FAIL: no scenario given" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for scen in "$@"; do
	for q in calendar heap; do
		"$sim" --scenario "$scen" --transport both --event-queue "$q" --json "$tmp/$q.json" \
			--csv "$tmp/$q.csv" >"$tmp/$q.txt"
	done
	for q in calendar heap; do
		sed 's/, "memory": {[^}]*}//' "$tmp/$q.json" >"$tmp/$q.j" && mv "$tmp/$q.j" "$tmp/$q.json"
	done
	grep -q '"transport": "mrc"' "$tmp/calendar.json" ||
		{ echo "FAIL: $scen: no MRC run in the JSON" >&2; exit 1; }
	[ -s "$tmp/calendar.csv" ] || { echo "FAIL: $scen: empty CSV" >&2; exit 1; }
	for f in txt json csv; do
		cmp -s "$tmp/calendar.$f" "$tmp/heap.$f" ||
			{ echo "FAIL: $scen: the $f output differs between the calendar queue and the heap" >&2;
			  diff "$tmp/heap.$f" "$tmp/calendar.$f" | head -20 >&2; exit 1; }
	done
	echo "ok: $(basename "$scen"): calendar = heap"
done
