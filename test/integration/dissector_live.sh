#!/usr/bin/env bash
# dissector_live.sh - tools/wireshark/mrc.lua over a live capture: two mrcd,
# each in a network namespace we create, joined by two veth pairs (two
# planes, af_packet ports), captured with dumpcap on daemon a's side of both
# pairs. Phase IPv4: a verified selftest with trim faults on plane 1, an EV
# probe and a port going down and up (endpoint operations); phase SRv6: a
# verified selftest over IPv6 with SRv6 on. Each capture must hold every
# frame the daemons sent (their tx_pkts counters), every frame must decode
# as MRC with no malformed packet and a good ICRC unless trimmed, the
# opcodes must include data, SACK, ACK, NACK and both endpoint operations,
# and the fields must agree with what the senders wrote: the echoes in SACK,
# NACK and EETH of the data and requests they answer, D11 PSNs, the probed EV
# and the announced port masks.
source "$(dirname "$0")/lib.sh"
TSHARK=${TSHARK:?path to tshark}
LUA="$TOP/tools/wireshark/mrc.lua"
for t in dumpcap mergecap; do
	if ! command -v "$t" >/dev/null; then
		echo "$t not installed: skipping"; echo "0 passed, 0 failed"; exit 77
	fi
done
NA="mrcdwsa$$"
NB="mrcdwsb$$"
if ! ip netns add "$NA" 2>/dev/null; then
	echo "cannot create a network namespace: skipping"; echo "0 passed, 0 failed"; exit 77
fi
cleanup_netns "$NA" # at exit, after every process we started has stopped
ip netns add "$NB"
cleanup_netns "$NB"
for p in 1 2; do
	ip link add "wa$p" netns "$NA" type veth peer name "wb$p" netns "$NB"
	ip -n "$NA" link set "wa$p" up
	ip -n "$NB" link set "wb$p" up
done
for ns in "$NA" "$NB"; do
	ip -n "$ns" link set lo up
	# no kernel traffic on the planes (router solicitations, MLD): every
	# captured frame is one a daemon sent
	ip netns exec "$ns" sysctl -q -w net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
done
for n in a b; do # mrcd inside namespace n (ip netns exec execs: the PID is mrcd's)
	ns=$NA; [ "$n" = b ] && ns=$NB
	printf '#!/bin/sh\nexec ip netns exec %s "%s" "$@"\n' "$ns" "$MRCD" > "$T/mrcd-$n"
	chmod +x "$T/mrcd-$n"
done

# write_configs FAMILY: a.yaml and b.yaml; a is .1 / ::1 on each plane, b .2
write_configs() {
	local fam=$1 n me peer lc
	for n in a b; do
		if [ "$n" = a ]; then me=1; peer=2; lc=''; else me=2; peer=1; lc=', "--lcores", "0@1,1@0"'; fi
		{
			echo "eal:"
			echo "  args: [\"--no-huge\", \"--no-pci\", \"-m\", \"256\", \"--file-prefix\", \"mrcd-it-$(basename "$T")-$n\"$lc]"
			echo "ports:"
			for p in 1 2; do
				echo "  - name: plane$p"
				# qdisc_bypass=0: frames pass the kernel's transmit taps, so dumpcap sees them
				echo "    devargs: net_af_packet$p,iface=w$n$p,qpairs=1,qdisc_bypass=0"
				echo "    mac: \"02:00:00:9$p:00:0$me\""
				if [ "$fam" = ipv4 ]; then echo "    ipv4: 10.9$p.0.$me/24"; else echo "    ipv6: fd9$p::$me/64"; fi
			done
			echo "neighbours:" # static: no ARP/NDP in the capture
			for p in 1 2; do
				if [ "$fam" = ipv4 ]; then ip="10.9$p.0.$peer"; else ip="fd9$p::$peer"; fi
				echo "  - {ip: \"$ip\", mac: \"02:00:00:9$p:00:0$peer\", port: plane$p}"
			done
			echo "lcores:"
			echo "  ids: [1]"
			echo "transport:"
			echo "  mtu: 1024"
			echo "control:"
			echo "  socket: $T/$n.sock"
			if [ "$fam" = srv6 ]; then
				cat <<'EOF'
srv6:
  enabled: true
  locator_block: fc00:1::/32
  uplinks: 128
  templates:
    - destination: fd90::/12
      usids: [256, 512, 768]
      plane_mask: 61440
      plane_shift: 12
      uplink_usid: 1
      uplink_mask: 255
EOF
			fi
		} > "$T/$n.yaml"
	done
}

tx_total() { # frames both daemons have sent (nothing, and 1, if either count is missing)
	num_sum "$(ctlj a ports | jget 'sum(p["tx_pkts"] for p in d)')" "$(ctlj b ports | jget 'sum(p["tx_pkts"] for p in d)')"
}
quiet() { # quiet: no frame sent for 300 ms (the counts read, both times)
	local t0 t1
	t0=$(tx_total) || return 1
	sleep 0.3
	t1=$(tx_total) || return 1
	[ "$t1" = "$t0" ]
}

CAP_PIDS=()
capture_start() { # capture_start NAME: one dumpcap per plane (one process per
	# interface: dumpcap's multi-interface queue drops frames under load)
	local p pid
	CAP_PIDS=()
	for p in 1 2; do
		proc_start pid ip netns exec "$NA" dumpcap -B 64 -i "wa$p" -w "$T/$1-$p.pcapng" > "$T/$1-$p.dumpcap" 2>&1
		CAP_PIDS+=("$pid")
	done
	for p in 1 2; do
		wait_for 20 grep -q "^File:" "$T/$1-$p.dumpcap" || return 1
	done
}
capture_stop() { # capture_stop NAME: stop both, merge into NAME.pcapng
	local pid rc=0
	for pid in "${CAP_PIDS[@]}"; do proc_stop -s INT -g 20 "$pid" || rc=1; done
	grep -h "received/dropped" "$T/$1"-*.dumpcap
	mergecap -w "$T/$1.pcapng" "$T/$1-1.pcapng" "$T/$1-2.pcapng" || rc=1
	return $rc
}

# selftest_open BYTES: listen on b, start on a, accept on b (QPs connected,
# not yet sending); sets ST_A and ST_B
selftest_open() {
	local lj sj
	lj=$(ctlj b selftest_listen region_bytes=16777216 detach=true) || return 1
	ST_B=$(jget 'd["id"]' <<< "$lj")
	sj=$(ctlj a selftest_start peer_info="$(jget 'd["info"]' <<< "$lj")" bytes="$1" msg_size=65536 window=8 detach=true) || return 1
	ST_A=$(jget 'd["id"]' <<< "$sj")
	ctl b selftest_accept id="$ST_B" peer_info="$(jget 'd["info"]' <<< "$sj")" > /dev/null
}
st_state() { ctlj "$1" selftest_status id="$2" | jget 'd["state"]'; }
st_done() { [ "$(st_state a "$ST_A")" = done ] && [ "$(st_state b "$ST_B")" = done ]; }
st_failed() { [ "$(st_state a "$ST_A")" = failed ] || [ "$(st_state b "$ST_B")" = failed ]; }
selftest_run() { # selftest_run WHAT: send, wait until both sides are done, check
	ctl a selftest_run id="$ST_A" > /dev/null || { bad "$1: selftest_run"; return 1; }
	wait_for 120 bash -c "st_done || st_failed"
	local ra rb
	ra=$(ctlj a selftest_status id="$ST_A")
	rb=$(ctlj b selftest_status id="$ST_B")
	check "$1: a verified selftest ($(jget '"%s/%s, %d B, %d rtx, %d verify errors" % (d["state"], d["qp_state"], d["bytes_done"], d["rtx_total"], d.get("verify_errors", 0))' <<< "$ra"))" \
		test "$(jget 'd["state"] == "done" and d["bytes_done"] == d["bytes_target"]' <<< "$ra")$(jget 'd["state"] == "done" and d["verify_errors"] == 0' <<< "$rb")" = TrueTrue
}
selftest_close() {
	ctl a selftest_stop id="$ST_A" > /dev/null
	ctl b selftest_stop id="$ST_B" > /dev/null
}
peer_mask() { # peer_mask NAME: the port masks NAME last heard from its peers
	ctlj "$1" status | jget '",".join(p["port_mask"] for p in d["peers"])'
}
export -f st_state st_done st_failed peer_mask ctlj jget
export MRCCTL T ST_A ST_B

# phase_begin FAMILY BYTES: daemons up, captures running, a selftest of
# BYTES connected but not yet sending; TX0 = frames sent before the capture
phase_begin() {
	write_configs "$1"
	MRCD=$T/mrcd-a start_daemon a && MRCD=$T/mrcd-b start_daemon b || { bad "$1: daemons start"; return 1; }
	check "$1: links up" wait_for 30 links_up a
	wait_for 30 links_up b
	check "$1: capture started on both planes" capture_start "$1" || return 1
	TX0=$(tx_total)
	selftest_open "$2" || { bad "$1: selftest set up"; return 1; }
	export ST_A ST_B
}
# phase_end FAMILY: selftest freed, captures stopped once nothing moves,
# daemons stopped one after the other; FRAMES = frames sent meanwhile
phase_end() {
	local tx1
	selftest_close
	check "$1: the daemons went quiet" wait_for 20 quiet
	tx1=$(tx_total)
	check "$1: capture stopped and merged" capture_stop "$1"
	check "$1: nothing sent while the capture stopped" num_cmp "$(tx_total)" -eq "$tx1"
	FRAMES=$(num_sub "$tx1" "$TX0")   # empty if a count is missing: the verdicts then fail
	check "$1: a exits 0" stop_daemon a
	check "$1: b exits 0" stop_daemon b
}

# ---- phase 1: IPv4, trims, EV probe, port down and up --------------------------
phase_begin ipv4 8388608 || { finish; exit 1; }
check "ipv4: trim 3 % of a's plane 1 Writes" ctl a fault-set port=plane1 trim_pct=3 direction=tx
selftest_run ipv4
IPV4_TRIMMED=$(ctlj a counters | jget 'd["ports"]["plane1"]["fault"]["trimmed"]')
ctl a fault-clear port=plane1 > /dev/null
# EV probe on plane 2 (the QP is still there: the engine knows the peer)
check "ipv4: EV probe 0xc0de on plane 2" ctl a ev-probe node=10.91.0.2 port=plane2 ev=0xc0de
# answered within D57's 2 ms, or probed again as an operator would: on this
# shared host the peer is sometimes not running for longer than that
answered() { ctlj a probes | jget 'any(p["ev"] in (0xc0de, "0xc0de") and p["ok"] for p in d)' | grep -q True; }
probe_answered() { answered || { ctl a ev-probe node=10.91.0.2 port=plane2 ev=0xc0de > /dev/null 2>&1; answered; }; }
check "ipv4: the probe was answered" wait_for 10 probe_answered
# a's plane 2 down: a Port Status Update (mask 0x1) to b, acknowledged; up again (0x3)
check "ipv4: port-admin plane2 down" ctl a port-admin port=plane2 up=false
check "ipv4: b learned a's mask 0x1" wait_for 10 bash -c '[ "$(peer_mask b)" = 0x1 ]'
check "ipv4: port-admin plane2 up" ctl a port-admin port=plane2 up=true
check "ipv4: b learned a's mask 0x3" wait_for 10 bash -c '[ "$(peer_mask b)" = 0x3 ]'
phase_end ipv4
IPV4_FRAMES=$FRAMES

# ---- phase 2: SRv6 ---------------------------------------------------------------
phase_begin srv6 4194304 || { finish; exit 1; }
selftest_run srv6
phase_end srv6
SRV6_FRAMES=$FRAMES

# ---- the verdicts -------------------------------------------------------------------
python3 - "$TSHARK" "$LUA" "$T" "$IPV4_FRAMES" "$IPV4_TRIMMED" "$SRV6_FRAMES" > "$T/verdicts" 2> "$T/verdicts.err" <<'PY'
import subprocess, sys
from collections import Counter

tshark, lua, T, ipv4_frames, ipv4_trimmed, srv6_frames = sys.argv[1:7]
F = ["frame.number", "frame.interface_name", "frame.protocols", "_ws.malformed", "_ws.lua.error",
     "ip.src", "ipv6.src", "mrc.bth.opcode", "mrc.bth.pkey", "mrc.bth.tver", "mrc.bth.ts", "mrc.bth.psn",
     "mrc.bth.destqp", "mrc.tseth.tx_timestamp", "mrc.tseth.ftype", "mrc.ev", "mrc.dscp", "mrc.trimmed",
     "mrc.trim_reason", "mrc.icrc.status", "mrc.seth.pr", "mrc.seth.entropy", "mrc.seth.cack_psn",
     "mrc.seth.trigger_psn", "mrc.cc_state.tx_timestamp", "mrc.neth.nack_code", "mrc.neth.nack_psn",
     "mrc.neth.entropy", "mrc.neth.tx_timestamp", "mrc.peth.tx_timestamp", "mrc.erth.op",
     "mrc.erth.port_status_mask", "mrc.erth.tx_timestamp", "mrc.eeth.op", "mrc.eeth.rsvd",
     "mrc.eeth.rx_port", "mrc.eeth.status", "mrc.eeth.port_status_mask", "mrc.eeth.tx_timestamp",
     "mrc.srv6.block", "mrc.srv6.usid", "mrc.srv6.outer_hop_limit", "mrc.srv6.plane"]
out = subprocess.run([tshark, "-G", "fields", "-X", "lua_script:" + lua], capture_output=True, text=True).stdout
MAL = [l.split("\t")[2] for l in out.splitlines() if "\tmrc.malformed." in l]

def verdict(ok, what):
    print(("ok" if ok else "FAIL") + " " + what)

def num(x):
    return int(x, 0) if x not in ("", None) else None

def load(name):
    # UDP heuristics first: SRv6 EVs make small UDP source ports (mrc.lua)
    r = subprocess.run([tshark, "-r", f"{T}/{name}.pcapng", "-X", "lua_script:" + lua,
                        "-o", "udp.try_heuristic_first:TRUE", "-T", "fields",
                        "-E", "separator=/t", "-E", "occurrence=a", "-E", "aggregator=,", "-E", "quote=n"] +
                       sum((["-e", f] for f in F + MAL), []), capture_output=True, text=True)
    err = [l for l in r.stderr.splitlines() if "Running as user" not in l]
    verdict(r.returncode == 0 and not err, f"{name}: tshark with mrc.lua reads the capture {' '.join(err)[:200]}")
    rows = []
    for line in r.stdout.splitlines():
        c = line.split("\t")
        d = dict(zip(F, c[:len(F)]))
        d["ipv6.src"] = d["ipv6.src"].split(",")[-1]  # SRv6: the inner header's
        d["malformed_expert"] = [m for m, v in zip(MAL, c[len(F):]) if v]
        rows.append(d)
    return rows

def common(name, rows, want_frames):
    verdict(len(rows) == want_frames and want_frames > 0,
            f"{name}: the capture holds every frame the daemons sent ({len(rows)} of {want_frames})")
    not_mrc = [r["frame.number"] for r in rows if not r["frame.protocols"].endswith(":mrc") or not r["mrc.bth.opcode"]]
    verdict(not not_mrc, f"{name}: every frame decodes as MRC (not: {not_mrc[:5]})")
    trimmed = [r for r in rows if r["mrc.trimmed"] == "1"]
    lua_err = [r["frame.number"] for r in rows if r["_ws.lua.error"]]
    mal_mrc = [r["frame.number"] for r in rows if r["malformed_expert"]]
    # Wireshark's UDP dissector calls a UDP length past the frame malformed:
    # the trimmed Writes of the trim fault (lengths left as they were)
    mal = [r["frame.number"] for r in rows if r["_ws.malformed"] and
           not (r["mrc.trimmed"] == "1" and "shorter than its IP length" in r["mrc.trim_reason"])]
    verdict(not lua_err and not mal_mrc and not mal,
            f"{name}: no malformed packet (Lua errors {lua_err[:3]}, MRC rules broken {mal_mrc[:3]}, other {mal[:3]})")
    bad_icrc = [r["frame.number"] for r in rows if r["mrc.trimmed"] != "1" and r["mrc.icrc.status"] != "1"]
    verdict(not bad_icrc, f"{name}: the ICRC of every untrimmed frame checks ({len(rows) - len(trimmed)} frames; bad: {bad_icrc[:5]})")
    ops = Counter(num(r["mrc.bth.opcode"]) for r in rows if r["mrc.bth.opcode"])
    data = [r for r in rows if r["mrc.bth.opcode"] and 0xC6 <= num(r["mrc.bth.opcode"]) <= 0xCB]
    is_data = {r["frame.number"] for r in data}
    verdict(data and ops[0xDC] and ops[0xD1] and ops[0xD8] and ops[0xD9],
            f"{name}: opcodes seen {dict(sorted((hex(k), v) for k, v in ops.items()))}: data, SACK, ACK, EP_REQUEST, EP_RESPONSE")
    # D10: P_Key, TVer; data carry TSETH (D13, ftype 0x1), control packets not
    odd = [r["frame.number"] for r in rows if r["mrc.bth.opcode"] and (
        num(r["mrc.bth.pkey"]) != 0xFFFF or num(r["mrc.bth.tver"]) != 0 or
        (r["frame.number"] in is_data) != (r["mrc.bth.ts"] == "1") or
        (r["frame.number"] in is_data and num(r["mrc.tseth.ftype"]) != 1))]
    verdict(not odd, f"{name}: P_Key 0xffff, TVer 0, TSETH (ftype 0x1) on exactly the Writes (not: {odd[:5]})")
    # D11: the PSN of a SACK is its cack_psn, of a NACK its nack_psn
    d11 = [r["frame.number"] for r in rows if (num(r["mrc.bth.opcode"]) == 0xDC and r["mrc.bth.psn"] != r["mrc.seth.cack_psn"])
           or (num(r["mrc.bth.opcode"]) == 0xDD and r["mrc.bth.psn"] != r["mrc.neth.nack_psn"])]
    verdict(not d11, f"{name}: BTH.PSN of SACKs and NACKs is their cack_psn / nack_psn (D11; not: {d11[:5]})")
    # every SACK echoes the EV and TSETH stamp of a data packet it answers
    # (trigger PSN = cack + ack_psn_offset), or of a PETH when pr is set
    sent = {(r["mrc.bth.psn"], num(r["mrc.tseth.tx_timestamp"]), num(r["mrc.ev"])) for r in data}
    probes = {(num(r["mrc.peth.tx_timestamp"]), num(r["mrc.ev"])) for r in rows if num(r["mrc.bth.opcode"]) == 0xDE}
    sacks = [r for r in rows if num(r["mrc.bth.opcode"]) == 0xDC]
    unmatched = [r["frame.number"] for r in sacks if (
        (r["mrc.seth.trigger_psn"], num(r["mrc.cc_state.tx_timestamp"]), num(r["mrc.seth.entropy"])) not in sent
        if r["mrc.seth.pr"] != "1" else
        (num(r["mrc.cc_state.tx_timestamp"]), num(r["mrc.seth.entropy"])) not in probes)]
    verdict(sacks and not unmatched, f"{name}: every SACK's PSN offset, echoed EV and stamp match a packet it answers "
            f"({len(sacks)} SACKs, {sum(r['mrc.seth.pr'] == '1' for r in sacks)} probe answers; unmatched: {unmatched[:5]})")
    # endpoint operations: each response answers a request of the other side
    # with the same 24-bit PSN (D11, D63) and stamp, on the plane it came in
    # on (D57), with the request's op (EETH byte 1 bits 5:4, reserved bits 0)
    key = lambda r, ts: "/".join((r["mrc.bth.psn"], ts, r["frame.interface_name"]))
    reqs = {key(r, r["mrc.erth.tx_timestamp"]): r for r in rows if num(r["mrc.bth.opcode"]) == 0xD8}
    resp = [r for r in rows if num(r["mrc.bth.opcode"]) == 0xD9]
    src = lambda r: r["ipv6.src"] or r["ip.src"]
    bad_ep = []
    for r in resp:
        q = reqs.get(key(r, r["mrc.eeth.tx_timestamp"]))  # same plane (D57)
        if (q is None or src(q) == src(r) or num(r["mrc.eeth.op"]) != num(q["mrc.erth.op"]) or
                num(r["mrc.eeth.rsvd"]) != 0 or num(r["mrc.eeth.rx_port"]) != int(r["frame.interface_name"][-1]) or
                num(r["mrc.eeth.status"]) != 0):
            bad_ep.append(r["frame.number"])
    dq = [r["frame.number"] for r in list(reqs.values()) + resp if num(r["mrc.bth.destqp"]) != 2]
    verdict(resp and not bad_ep and not dq,
            f"{name}: every EP_RESPONSE answers an EP_REQUEST (PSN, stamp, plane, op, rx_port), all to QPN 0x2 "
            f"({len(reqs)} requests, {len(resp)} responses; bad: {bad_ep[:5]} {dq[:5]})")
    return rows, data, trimmed, reqs

rows, data, trimmed, reqs = common("ipv4", load("ipv4"), int(ipv4_frames))
# the fault stage counts every packet it drew for trimming, control packets
# too, but trims only Writes
verdict(0 < len(trimmed) <= int(ipv4_trimmed) and
        all(num(r["mrc.dscp"]) == 11 and "DSCP TRIMMED" in r["mrc.trim_reason"] and
            0xC6 <= num(r["mrc.bth.opcode"]) <= 0xCB and r["frame.interface_name"] == "wa1" for r in trimmed),
        f"ipv4: the trimmed packets are Writes on plane 1 in DSCP TRIMMED ({len(trimmed)}; the fault stage drew {ipv4_trimmed})")
nacks = [r for r in rows if num(r["mrc.bth.opcode"]) == 0xDD]
cut = {(r["mrc.bth.psn"], num(r["mrc.ev"]), num(r["mrc.tseth.tx_timestamp"])) for r in trimmed}
bad_nack = [r["frame.number"] for r in nacks if num(r["mrc.neth.nack_code"]) != 1 or
            (r["mrc.neth.nack_psn"], num(r["mrc.neth.entropy"]), num(r["mrc.neth.tx_timestamp"])) not in cut]
verdict(nacks and not bad_nack, f"ipv4: every NACK is TRIMMED and names a trimmed Write's PSN, EV and stamp ({len(nacks)}; bad: {bad_nack[:5]})")
probe = [r for r in reqs.values() if num(r["mrc.erth.op"]) == 1 and num(r["mrc.ev"]) == 0xC0DE and r["frame.interface_name"] == "wa2"]
verdict(probe, f"ipv4: the EV probe of EV 0xc0de went out on plane 2 ({len(probe)})")
masks = [num(r["mrc.erth.port_status_mask"]) for r in sorted(reqs.values(), key=lambda r: int(r["frame.number"]))
         if num(r["mrc.erth.op"]) == 0 and r["ip.src"] in ("10.91.0.1", "10.92.0.1")]
verdict(0x1 in masks and 0x3 in masks[masks.index(0x1):] if 0x1 in masks else False,
        f"ipv4: a's Port Status Updates announce 0x1, then 0x3 (on plane 1: {[hex(m) for m in masks][:8]})")

rows, data, trimmed, reqs = common("srv6", load("srv6"), int(srv6_frames))
bad6 = [r["frame.number"] for r in rows if num(r["mrc.srv6.block"]) != 0xFC000001 or
        num(r["mrc.srv6.outer_hop_limit"]) != 64 or num(r["mrc.srv6.plane"]) != int(r["frame.interface_name"][-1]) or
        len(r["mrc.srv6.usid"].split(",")) != 3]
verdict(not bad6, f"srv6: every frame has the SRv6 outer header: block fc00:1, 3 uSIDs, hop limit 64, the plane it was captured on (D8; bad: {bad6[:5]})")
print("END")
PY
rc=$?
# DISSECTOR_LIVE_KEEP=DIR keeps the captures for a look in Wireshark
[ -n "${DISSECTOR_LIVE_KEEP:-}" ] && cp "$T/ipv4.pcapng" "$T/srv6.pcapng" "$DISSECTOR_LIVE_KEEP/"
while read -r v what; do
	case $v in ok) ok "$what" ;; FAIL) bad "$what" ;; esac
done < "$T/verdicts"
check "the verdicts ran to the end" test "$rc" = 0 -a "$(tail -n 1 "$T/verdicts")" = END
[ -s "$T/verdicts.err" ] && cat "$T/verdicts.err"
finish
