-- mrc.lua - a Wireshark/tshark dissector for MRC (Multipath Reliable
-- Connection) as mrcd puts it on the wire: BTH with MRC's flags, every MRC
-- extension header, the payload, pad and ICRC, the SRv6 outer header, the
-- EV the frame carries, trimmed packets and NACK codes. Opcodes that are not
-- MRC's (plain RoCE) go back to Wireshark's own InfiniBand dissector.
--
-- The bytes are defined by lib/core/mrcp_wire.h (struct mrcp_<hdr>_wire and
-- the mrcp_<hdr>_encode functions in wire.c) and lib/core/mrcp_frame.h; the
-- prose is docs/protocol.md. Comments here name headers and D-numbers only.
--
-- Load:  tshark -X lua_script:tools/wireshark/mrc.lua -r capture.pcapng
--        or copy this file into Wireshark's personal Lua plugins folder.
-- Tested with Wireshark 4.0 (Lua 5.2); docs/operations.md, "Decoding
-- captures", has the recipes and the preferences.

local band, bor, bxor, rshift, lshift, bnot
if bit32 then
	band, bor, bxor, rshift, lshift, bnot =
		bit32.band, bit32.bor, bit32.bxor, bit32.rshift, bit32.lshift, bit32.bnot
else -- Wireshark's BitOp library (signed results: normalised where it matters)
	band, bor, bxor, rshift, lshift, bnot = bit.band, bit.bor, bit.bxor, bit.rshift, bit.lshift, bit.bnot
end
local function u32(v) return v % 4294967296 end

local MRC_PORT = 4791      -- D1
local MRC_ALT_PORT = 4971  -- D1: accepted on receive when enabled
local QPN_ENDPOINT = 0x000002
local PAYLOAD_MAX = 4096   -- D3
local ICRC_LEN = 4
local BTH_LEN = 12

local mrc = Proto("mrc", "Multipath Reliable Connection")

-- ---- value names ----------------------------------------------------------

-- Opcodes and the headers that follow BTH (MRCP_OPCODES in mrcp_wire.h);
-- TSETH is added between METH and RETH when BTH.ts = 1 (Writes only).
local OPS = {
	[0xC6] = { "WRITE_FIRST", { "meth", "reth" } },
	[0xC7] = { "WRITE_MIDDLE", { "meth", "reth" } },
	[0xC8] = { "WRITE_LAST", { "meth", "reth" } },
	[0xC9] = { "WRITE_LAST_IMM", { "meth", "reth", "imm" } },
	[0xCA] = { "WRITE_ONLY", { "meth", "reth" } },
	[0xCB] = { "WRITE_ONLY_IMM", { "meth", "reth", "imm" } },
	[0xD1] = { "ACK", { "aeth" } },
	[0xD8] = { "EP_REQUEST", { "erth" } },
	[0xD9] = { "EP_RESPONSE", { "eeth" } },
	[0xDC] = { "SACK", { "seth", "cc_state" } },
	[0xDD] = { "NACK", { "neth" } },
	[0xDE] = { "PROBE", { "peth" } },
}
local OP_NAMES = {}
for v, o in pairs(OPS) do OP_NAMES[v] = o[1] end
local function is_data(op) return op >= 0xC6 and op <= 0xCB end
local function is_ep(op) return op == 0xD8 or op == 0xD9 end

-- NACK codes (MRCP_NACK_CODES), with the expert class each one raises.
local NACK_NAMES = {
	[0x01] = "TRIMMED", [0x02] = "TRIMMED_LASTHOP", [0x06] = "NO_BITMAP",
	[0x07] = "NO_PKT_BUFFER", [0x0A] = "NO_RESOURCE", [0x0B] = "PSN_OOR_WINDOW",
	[0x19] = "UNEXP_EVENT",
}
local AETH_NAMES = {
	[0x1F] = "ACK", [0x61] = "NAK_INVALID_REQ", [0x62] = "NAK_REMOTE_ACCESS",
	[0x63] = "NAK_REMOTE_OP",
}
local VERDICT_NAMES = { [0] = "NONE", [1] = "SKIP_ONCE", [2] = "ALWAYS_SKIP", [3] = "NONE (3)" }
local EP_OP_NAMES = { [0] = "PORT_STATUS_UPDATE", [1] = "EV_PROBE", [2] = "undefined (2)", [3] = "undefined (3)" }
local ICRC_STATUS = { [0] = "unverified", [1] = "good", [2] = "bad" }
local TSR_NAMES = { [0] = "128 ns", [1] = "1024 ns" }

-- ---- header layouts ---------------------------------------------------------
-- One row per field: key, label, kind, offset, mask, base, value names, and
-- "ign" for reserved bits and prologues (sent 0, ignored on receive, D14).
-- Kinds: u8 u16 u24 u32 u64 i16, b8/b16 (one flag bit), raw (bytes, with a
-- length in the mask column). Offsets count from the header's first byte.
local H = base.HEX
local D = base.DEC
local HDRS = {
	bth = { "Base Transport Header (BTH)", 12, {
		{ "opcode", "OpCode", "u8", 0, nil, H, OP_NAMES },
		{ "se", "Solicited Event", "b8", 1, 0x80 },
		{ "migreq", "MigReq", "b8", 1, 0x40 },
		{ "padcnt", "Pad count", "u8", 1, 0x30, D },
		{ "tver", "Transport version", "u8", 1, 0x0F, D },
		{ "pkey", "P_Key", "u16", 2, nil, H },
		{ "rsvd", "Reserved (masked for the ICRC)", "u8", 4, nil, H, nil, "ign" },
		{ "destqp", "Destination QP", "u24", 5, nil, H },
		{ "ackreq", "AckReq", "b8", 8, 0x80 },
		{ "rtx", "Retransmission (rtx)", "b8", 8, 0x20 },
		{ "ts", "TSETH present (ts)", "b8", 8, 0x10 },
		{ "rsvd_flags", "Reserved flags", "u8", 8, 0x4F, H, nil, "ign" },
		{ "psn", "PSN", "u24", 9, nil, D },
	} },
	meth = { "Message Extended Transport Header (METH)", 4, {
		{ "rq_msn", "RQMSN", "u16", 0, nil, D },
		{ "msn", "MSN", "u16", 2, nil, D },
	} },
	tseth = { "Timestamp Extended Transport Header (TSETH)", 4, {
		{ "tx_timestamp", "TX timestamp", "u16", 0, nil, D },
		{ "tsr", "Timestamp resolution (tsr)", "u8", 2, 0x80, D, TSR_NAMES },
		{ "rsvd", "Reserved", "u16", 2, 0x7FF0, H, nil, "ign" },
		{ "ftype", "Format type", "u8", 3, 0x0F, H },
	} },
	reth = { "RDMA Extended Transport Header (RETH)", 16, {
		{ "va", "Virtual address", "u64", 0, nil, H },
		{ "rkey", "R_Key", "u32", 8, nil, H },
		{ "dma_len", "DMA length", "u32", 12, nil, D },
	} },
	imm = { "Immediate Data (ImmDt)", 4, {
		{ "value", "Immediate", "u32", 0, nil, H },
	} },
	aeth = { "ACK Extended Transport Header (AETH)", 4, {
		{ "syndrome", "Syndrome", "u8", 0, nil, H, AETH_NAMES },
		{ "msn", "MSN", "u24", 1, nil, D },
	} },
	seth = { "SACK Extended Transport Header (SETH)", 28, {
		{ "prologue", "Prologue", "u16", 0, 0xFF80, H, nil, "ign" },
		{ "m", "EV verdict (m)", "u8", 1, 0x60, D, VERDICT_NAMES },
		{ "rsvd", "Reserved", "u8", 1, 0x1D, H, nil, "ign" },
		{ "pr", "Probe response (pr)", "b8", 1, 0x02 },
		{ "ack_psn_offset", "ACK PSN offset", "i16", 2 },
		{ "entropy", "Entropy (echoed EV)", "u32", 4, nil, H },
		{ "spdcid", "SPDCID", "u16", 8, nil, H },
		{ "dpdcid", "DPDCID", "u16", 10, nil, H },
		{ "svc_time", "Service time", "u8", 12, nil, D },
		{ "cack_psn", "Cumulative ACK PSN", "u24", 13, nil, D },
		{ "cc_type", "CC type", "u8", 16, 0xF0, D },
		{ "cc_flags", "CC flags", "u8", 16, 0x0F, H },
		{ "mpr", "MPR", "u8", 17, nil, D },
		{ "sack_offset", "SACK offset", "i16", 18 },
		{ "sack_bitmap", "SACK bitmap", "u64", 20, nil, H },
	} },
	cc_state = { "Congestion control state (CC_STATE)", 8, {
		{ "tx_timestamp", "Echoed TX timestamp", "u16", 0, nil, D },
		{ "rsvd", "Reserved", "u16", 2, 0x8000, H, nil, "ign" },
		{ "ooo_count", "Out-of-order count", "u16", 2, 0x7FFF, D },
		{ "r_c", "Restore cwnd (r_c)", "b8", 4, 0x80 },
		{ "rcv_cwnd_pen", "Receiver cwnd penalty", "u8", 4, 0x7F, D },
		{ "rcvd_bytes", "Received bytes (256 B units)", "u24", 5, nil, D },
	} },
	neth = { "NACK Extended Transport Header (NETH)", 20, {
		{ "prologue", "Prologue and flags", "u16", 0, nil, H, nil, "ign" },
		{ "nack_code", "NACK code", "u8", 2, nil, H, NACK_NAMES },
		{ "vendor_info", "Vendor info", "u8", 3, nil, H },
		{ "entropy", "Entropy (echoed EV)", "u32", 4, nil, H },
		{ "spdcid", "SPDCID", "u16", 8, nil, H },
		{ "dpdcid", "DPDCID", "u16", 10, nil, H },
		{ "rsvd", "Reserved", "u8", 12, nil, H, nil, "ign" },
		{ "nack_psn", "NACK PSN", "u24", 13, nil, D },
		{ "cc_type", "CC type", "u8", 16, 0xF0, D },
		{ "cc_flags", "CC flags", "u8", 16, 0x0F, H },
		{ "rsvd2", "Reserved", "u8", 17, nil, H, nil, "ign" },
		{ "tx_timestamp", "Echoed TX timestamp", "u16", 18, nil, D },
	} },
	peth = { "Probe Extended Transport Header (PETH)", 16, {
		{ "prologue", "Prologue and flags", "u16", 0, nil, H, nil, "ign" },
		{ "rsvd", "Reserved", "u8", 2, nil, H, nil, "ign" },
		{ "vendor_info", "Vendor info", "u8", 3, nil, H, nil, "ign" },
		{ "probe_id", "Probe id", "u16", 4, nil, D },
		{ "rsvd2", "Reserved", "u16", 6, nil, H, nil, "ign" },
		{ "spdcid", "SPDCID", "u16", 8, nil, H },
		{ "dpdcid", "DPDCID", "u16", 10, nil, H },
		{ "tx_timestamp", "TX timestamp", "u16", 12, nil, D },
		{ "tsr", "Timestamp resolution (tsr)", "u8", 14, 0x80, D, TSR_NAMES },
		{ "rsvd3", "Reserved", "u16", 14, 0x7FF0, H, nil, "ign" },
		{ "ftype", "Format type", "u8", 15, 0x0F, H },
	} },
	erth = { "Endpoint Request Transport Header (ERTH)", 16, {
		{ "prologue", "Prologue", "u16", 0, 0xFF80, H, nil, "ign" },
		{ "rsvd", "Reserved", "u8", 1, 0x7C, H, nil, "ign" },
		{ "op", "Operation", "u8", 1, 0x03, D, EP_OP_NAMES },
		{ "rsvd2", "Reserved", "u8", 2, nil, H, nil, "ign" },
		{ "vendor_info", "Vendor info", "u8", 3, nil, H, nil, "ign" },
		{ "port_status_mask", "Port status mask", "u32", 4, nil, H },
		{ "rsvd3", "Reserved", "u32", 8, nil, H, nil, "ign" },
		{ "tx_timestamp", "TX timestamp", "u16", 12, nil, D },
		{ "tsr", "Timestamp resolution (tsr)", "u8", 14, 0x80, D, TSR_NAMES },
		{ "rsvd4", "Reserved", "u16", 14, 0x7FF0, H, nil, "ign" },
		{ "ftype", "Format type", "u8", 15, 0x0F, H },
	} },
	-- EETH op sits in byte 1 bits 5:4 (bit 6 and bits 3:0 reserved), not
	-- where ERTH has it; the rest is laid out by D20.
	eeth = { "Endpoint Response Transport Header (EETH)", 36, {
		{ "prologue", "Prologue", "u16", 0, 0xFF80, H, nil, "ign" },
		{ "rsvd", "Reserved", "u8", 1, 0x4F, H, nil, "ign" },
		{ "op", "Operation", "u8", 1, 0x30, D, EP_OP_NAMES },
		{ "rx_port", "Request arrived on port", "u8", 2, nil, D },
		{ "status", "Status", "u8", 3, nil, D },
		{ "port_status_mask", "Port status mask", "u32", 4, nil, H },
		{ "svc_time", "Service time", "u16", 8, nil, D },
		{ "rsvd2", "Reserved", "raw", 10, 18, nil, nil, "ign" },
		{ "tx_timestamp", "Echoed TX timestamp", "u16", 28, nil, D },
		{ "tsr", "Timestamp resolution (tsr)", "u8", 30, 0x80, D, TSR_NAMES },
		{ "rsvd3", "Reserved", "u16", 30, 0x7FF0, H, nil, "ign" },
		{ "ftype", "Format type", "u8", 31, 0x0F, H },
		{ "rsvd4", "Reserved", "u32", 32, nil, H, nil, "ign" },
	} },
}
local HDR_ORDER = { "meth", "tseth", "reth", "imm", "aeth", "seth", "cc_state", "neth", "peth", "erth", "eeth" }
local HDR_ABBR = { imm = "immdt" }

local WIDTH = { u8 = 1, b8 = 1, u16 = 2, b16 = 2, i16 = 2, u24 = 3, u32 = 4, u64 = 8 }
local MAKE = {
	u8 = ProtoField.uint8, u16 = ProtoField.uint16, u24 = ProtoField.uint24,
	u32 = ProtoField.uint32, u64 = ProtoField.uint64,
}

local fields = {}
local hf = {}
local function add_field(key, pf) hf[key] = pf; fields[#fields + 1] = pf end

for name, h in pairs(HDRS) do
	local abbr = "mrc." .. (HDR_ABBR[name] or name)
	h.proto_abbr = abbr
	for _, f in ipairs(h[3]) do
		local key, label, kind, mask = name .. "." .. f[1], f[2], f[3], f[5]
		local pf
		if kind == "b8" or kind == "b16" then
			pf = ProtoField.bool(abbr .. "." .. f[1], label, WIDTH[kind] * 8, nil, mask)
		elseif kind == "i16" then
			pf = ProtoField.int16(abbr .. "." .. f[1], label, base.DEC)
		elseif kind == "raw" then
			pf = ProtoField.bytes(abbr .. "." .. f[1], label)
		else
			pf = MAKE[kind](abbr .. "." .. f[1], label, f[6] or base.DEC, f[7], mask)
		end
		add_field(key, pf)
	end
end

-- Fields that are not bytes of one MRC header.
add_field("ep_shard", ProtoField.uint8("mrc.bth.ep_shard", "Sender engine shard (PSN 23:16, D63)", base.DEC))
add_field("ep_req_id", ProtoField.uint16("mrc.bth.ep_req_id", "Request id (PSN 15:0, D11)", base.DEC))
add_field("trigger_psn", ProtoField.uint24("mrc.seth.trigger_psn", "Triggering PSN (cack + ACK PSN offset)", base.DEC))
add_field("sack_base", ProtoField.uint24("mrc.seth.sack_base", "Bitmap base PSN (cack + SACK offset, D27)", base.DEC))
add_field("sack_received", ProtoField.string("mrc.seth.sack_received", "PSNs marked received in the bitmap (D26)"))
add_field("ports_up", ProtoField.string("mrc.ports_up", "Ports up (bit i-1 = port i, D49)"))
add_field("payload", ProtoField.bytes("mrc.payload", "Payload"))
add_field("payload_len", ProtoField.uint32("mrc.payload_len", "Payload length", base.DEC))
add_field("pad", ProtoField.bytes("mrc.pad", "Pad"))
add_field("icrc", ProtoField.uint32("mrc.icrc", "ICRC", base.HEX))
add_field("icrc_status", ProtoField.uint8("mrc.icrc.status", "ICRC status", base.DEC, ICRC_STATUS))
add_field("icrc_computed", ProtoField.uint32("mrc.icrc.computed", "ICRC computed", base.HEX))
add_field("ev", ProtoField.uint32("mrc.ev", "Entropy value (EV, from UDP source port and flow label, D4/D5/D9)", base.HEX))
add_field("dscp", ProtoField.uint8("mrc.dscp", "DSCP (outer header in SRv6, D9)", base.DEC))
add_field("dscp_class", ProtoField.string("mrc.dscp_class", "Traffic class (D23)"))
add_field("trimmed", ProtoField.bool("mrc.trimmed", "Trimmed (D34)"))
add_field("trim_lasthop", ProtoField.bool("mrc.trim_lasthop", "Trimmed at the last hop (D34)"))
add_field("trim_reason", ProtoField.string("mrc.trim_reason", "Why trimmed (D34)"))
add_field("srv6_da", ProtoField.ipv6("mrc.srv6.outer_da", "Outer destination (uSID path, D8)"))
add_field("srv6_block", ProtoField.uint32("mrc.srv6.block", "Locator block", base.HEX))
add_field("srv6_usid", ProtoField.uint16("mrc.srv6.usid", "uSID", base.HEX))
add_field("srv6_hlim", ProtoField.uint8("mrc.srv6.outer_hop_limit", "Outer hop limit", base.DEC))
add_field("srv6_srh", ProtoField.bool("mrc.srv6.srh", "Segment routing header present"))
add_field("srv6_plane", ProtoField.uint8("mrc.srv6.plane", "Plane / port (EV 31:24 + 1, D8)", base.DEC))
add_field("srv6_uplink", ProtoField.uint16("mrc.srv6.uplink", "T0 uplink (EV 15:0, D8)", base.DEC))
mrc.fields = fields

-- ---- expert info --------------------------------------------------------------

local function malformed(abbr, text)
	return ProtoExpert.new("mrc.malformed." .. abbr, text, expert.group.MALFORMED, expert.severity.ERROR)
end
local ef = {
	nack_trimmed = ProtoExpert.new("mrc.nack.trimmed", "NACK: a Write was trimmed", expert.group.SEQUENCE, expert.severity.NOTE),
	nack_resource = ProtoExpert.new("mrc.nack.resource", "NACK: responder out of resources", expert.group.SEQUENCE, expert.severity.WARN),
	nack_window = ProtoExpert.new("mrc.nack.window", "NACK: PSN beyond the responder's window", expert.group.SEQUENCE, expert.severity.WARN),
	nack_unexpected = ProtoExpert.new("mrc.nack.unexpected", "NACK: protocol violation, the QP enters ERROR", expert.group.PROTOCOL, expert.severity.ERROR),
	nack_unknown = ProtoExpert.new("mrc.nack.unknown", "NACK: unknown code, handled as NO_RESOURCE (D22)", expert.group.PROTOCOL, expert.severity.WARN),
	aeth_nak = ProtoExpert.new("mrc.aeth.nak", "AETH NAK", expert.group.RESPONSE_CODE, expert.severity.WARN),
	trimmed = ProtoExpert.new("mrc.trimmed.expert", "Trimmed packet", expert.group.SEQUENCE, expert.severity.NOTE),
	icrc_bad = ProtoExpert.new("mrc.icrc.bad", "Bad ICRC", expert.group.CHECKSUM, expert.severity.ERROR),
	ignored = ProtoExpert.new("mrc.ignored_set", "Reserved or prologue bits not zero (ignored on receive)", expert.group.PROTOCOL, expert.severity.NOTE),
	verdict3 = ProtoExpert.new("mrc.seth.m3", "SETH m = 3 is read as NONE", expert.group.PROTOCOL, expert.severity.NOTE),
	ep_qpn = ProtoExpert.new("mrc.ep_qpn", "Endpoint operation not sent to QPN 0x2", expert.group.PROTOCOL, expert.severity.WARN),
	short = malformed("short", "Fewer than 12 B of BTH plus the 4 B ICRC"),
	truncated = malformed("truncated", "Header cut short"),
	tver = malformed("tver", "BTH.TVer is not 0"),
	ts_control = malformed("ts_control", "BTH.ts set on a packet that is not a Write"),
	ep_op = malformed("ep_op", "Undefined endpoint operation (2 or 3)"),
	syndrome = malformed("syndrome", "AETH syndrome other than 0x1F, 0x61, 0x62, 0x63"),
	trailing = malformed("trailing", "Bytes after a control packet's header"),
	padcnt = malformed("padcnt", "BTH.PadCnt not 0 on a control packet"),
	too_long = malformed("too_long", "Payload longer than 4096 B"),
	unaligned = malformed("unaligned", "Payload and pad not a multiple of 4 B"),
	pad_exceeds = malformed("pad_exceeds", "BTH.PadCnt larger than the bytes after the headers"),
}
local experts = {}
local e_names = {}
for k, e in pairs(ef) do experts[#experts + 1] = e; e_names[e] = k end
mrc.experts = experts

-- ---- preferences (named after mrcd's transport.* keys) ------------------------

local LAYOUTS = { { 1, "lo16_sport", 0 }, { 2, "hi16_sport", 1 } }
mrc.prefs.udp_port = Pref.uint("UDP port", MRC_PORT, "transport.udp_port: decoded in addition to 4791 (D1)")
mrc.prefs.accept_alt_port = Pref.bool("Also decode UDP 4971", false, "transport.accept_alt_port (D1)")
mrc.prefs.ev_layout = Pref.enum("EV layout", 0, "transport.ev_layout: which EV half rides in the UDP source port (D4)", LAYOUTS, false)
mrc.prefs.lasthop_hop_limit = Pref.uint("Last-hop hop limit", 0, "transport.lasthop_hop_limit: TTL / hop limit that marks a trimmed packet as a last-hop trim, 0 = off (D34)")
mrc.prefs.check_icrc = Pref.bool("Verify the ICRC", true, "compute the ICRC of untrimmed packets and compare (D24)")
local DSCP_CLASSES = {
	{ "trimmable", "TRIMMABLE", 10 }, { "trimmable_retx", "TRIMMABLE_RETX", 12 },
	{ "no_trim", "NO_TRIM", 14 }, { "trimmed", "TRIMMED", 11 },
	{ "trimmed_lasthop", "TRIMMED_LASTHOP", 13 }, { "control", "CONTROL", 46 },
}
for _, c in ipairs(DSCP_CLASSES) do
	mrc.prefs["dscp_" .. c[1]] = Pref.uint("DSCP " .. c[2], c[3], "transport.dscp." .. c[1] .. " (D23)")
end

-- ---- helpers ------------------------------------------------------------------

-- The value of one field row at @off in @t (a Tvb): a number (UInt64 for u64).
local function row_value(t, off, row)
	local kind, mask = row[3], row[5]
	if kind == "u64" then return t(off, 8):uint64() end
	if kind == "raw" then return t(off, mask):bytes() end
	if kind == "i16" then return t(off, 2):int() end
	local v = t(off, WIDTH[kind]):uint()
	if mask then
		v = band(v, mask)
		local m = mask
		while band(m, 1) == 0 do v = rshift(v, 1); m = rshift(m, 1) end
	end
	return v
end

local function is_zero(v)
	if type(v) == "number" then return v == 0 end
	if type(v) == "userdata" and v.len then -- ByteArray
		for i = 0, v:len() - 1 do if v:get_index(i) ~= 0 then return false end end
		return true
	end
	return tostring(v) == "0"
end

-- Dissect header @name at @off of @t into @tree; returns the subtree and a
-- table of its values, or nil when fewer bytes are left than the header has.
local function dissect_hdr(t, off, tree, name)
	local h = HDRS[name]
	if t:len() - off < h[2] then return nil end
	local sub = tree:add(mrc, t(off, h[2]), h[1])
	local v = {}
	local ignored = {}
	for _, row in ipairs(h[3]) do
		local len = row[3] == "raw" and row[5] or WIDTH[row[3]]
		sub:add(hf[name .. "." .. row[1]], t(off + row[4], len))
		v[row[1]] = row_value(t, off + row[4], row)
		if row[8] == "ign" and not is_zero(v[row[1]]) then ignored[#ignored + 1] = row[1] end
	end
	if #ignored > 0 then
		sub:add_proto_expert_info(ef.ignored, "Ignored field not zero: " .. h[1]:match("%((.-)%)") .. "." .. table.concat(ignored, ", "))
	end
	return sub, v
end

local function psn_add(a, b) return (a + b) % 16777216 end

local function ports_up(mask)
	local up = {}
	for i = 1, 32 do
		if band(mask, lshift(1, i - 1)) ~= 0 then up[#up + 1] = tostring(i) end
	end
	return #up > 0 and table.concat(up, ",") or "none"
end

-- Runs of PSNs the SACK bitmap marks received: "5-6,8".
local function sack_runs(base_psn, hi, lo)
	local runs, start = {}, nil
	for i = 0, 64 do
		local set = false
		if i < 32 then set = band(lo, lshift(1, i)) ~= 0
		elseif i < 64 then set = band(hi, lshift(1, i - 32)) ~= 0 end
		if set and start == nil then start = i end
		if not set and start ~= nil then
			local a, b = psn_add(base_psn, start), psn_add(base_psn, i - 1)
			runs[#runs + 1] = a == b and tostring(a) or (a .. "-" .. b)
			start = nil
		end
	end
	return #runs > 0 and table.concat(runs, ",") or "none"
end

-- CRC-32 as zlib's crc32 (reflected 0xEDB88320), for the ICRC (D24).
local CRC_TABLE = {}
for i = 0, 255 do
	local c = i
	for _ = 1, 8 do
		if band(c, 1) ~= 0 then c = bxor(0xEDB88320, rshift(c, 1)) else c = rshift(c, 1) end
	end
	CRC_TABLE[i] = u32(c)
end

-- The IP and UDP headers this packet came in, from the dissectors below us.
local f_frame = Field.new("frame")
local f_ip = Field.new("ip")
local f_ipv6 = Field.new("ipv6")
local f_udp = Field.new("udp")

-- Where the encapsulation lies in the frame: { bytes = ByteArray of the
-- frame, wire_len, udp, outer = {off, v4}, inner = {off, v4} } or nil.
local function encapsulation(tvb, pinfo)
	local fr = f_frame()
	if fr == nil then return nil end
	local udp_off = tvb:offset() - 8
	local udp_ok = false
	for _, u in ipairs({ f_udp() }) do
		if u.offset == udp_off then udp_ok = true end
	end
	if not udp_ok then return nil end
	local ips = {}
	for _, i in ipairs({ f_ip() }) do
		if i.offset < udp_off then ips[#ips + 1] = { off = i.offset, v4 = true } end
	end
	for _, i in ipairs({ f_ipv6() }) do
		if i.offset < udp_off then ips[#ips + 1] = { off = i.offset, v4 = false } end
	end
	if #ips == 0 then return nil end
	table.sort(ips, function(a, b) return a.off < b.off end)
	return {
		bytes = fr.range:bytes(), frame_tvb = fr.range:tvb(), wire_len = pinfo.len,
		cap_len = fr.range:len(), udp = udp_off, outer = ips[1], inner = ips[#ips],
	}
end

local function be(b, off, n)
	local v = 0
	for i = 0, n - 1 do v = v * 256 + b:get_index(off + i) end
	return v
end

local function dscp_of(b, ip)
	if ip.v4 then return rshift(b:get_index(ip.off + 1), 2) end
	return rshift(bor(lshift(band(b:get_index(ip.off), 0x0F), 4), rshift(b:get_index(ip.off + 1), 4)), 2)
end

-- D34: trimmed when the outer DSCP is a trimmed class, or the frame is
-- shorter than its (outer) IP length, or in SRv6 the inner IPv6 length runs
-- past the end of the outer one. Returns trimmed, lasthop, reason.
local function trim_check(enc)
	local b, o, inn = enc.bytes, enc.outer, enc.inner
	local dscp = dscp_of(b, o)
	local reasons = {}
	local lasthop = false
	if dscp == mrc.prefs.dscp_trimmed then reasons[#reasons + 1] = "DSCP TRIMMED" end
	if dscp == mrc.prefs.dscp_trimmed_lasthop then
		reasons[#reasons + 1] = "DSCP TRIMMED_LASTHOP"
		lasthop = true
	end
	if enc.cap_len < o.off + 20 then return false, false, nil end
	local ip_end
	if o.v4 then ip_end = o.off + be(b, o.off + 2, 2) else ip_end = o.off + 40 + be(b, o.off + 4, 2) end
	if ip_end > enc.wire_len then reasons[#reasons + 1] = "shorter than its IP length" end
	if inn.off ~= o.off and not inn.v4 and enc.cap_len >= inn.off + 40 and
	   inn.off + 40 + be(b, inn.off + 4, 2) > ip_end then
		reasons[#reasons + 1] = "inner IPv6 longer than the outer"
	end
	if #reasons == 0 then return false, false, nil end
	local hl = mrc.prefs.lasthop_hop_limit
	if hl ~= 0 and b:get_index(o.off + (o.v4 and 8 or 7)) == hl then
		lasthop = true
		reasons[#reasons + 1] = "hop limit " .. hl
	end
	return true, lasthop, table.concat(reasons, ", ")
end

-- EV from the UDP source port and the (inner) flow label (D4, D5, D9).
local function ev_of(enc)
	local b = enc.bytes
	local sport = be(b, enc.udp, 2)
	if enc.inner.v4 then return sport end
	local fl = band(be(b, enc.inner.off + 1, 3), 0xFFFF)
	if mrc.prefs.ev_layout == 1 then return sport * 65536 + fl end
	return fl * 65536 + sport
end

-- ICRC over the inner IP header through the pad, variant fields masked to
-- ones (D24); @mrc_end is the frame offset just past the pad.
local function icrc_compute(enc, mrc_off, mrc_end)
	local b, ip = enc.bytes, enc.inner
	local mask = {}
	if ip.v4 then
		mask[ip.off + 1], mask[ip.off + 8], mask[ip.off + 10], mask[ip.off + 11] = 0xFF, 0xFF, 0xFF, 0xFF
	else
		mask[ip.off], mask[ip.off + 1], mask[ip.off + 2], mask[ip.off + 3] = 0x0F, 0xFF, 0xFF, 0xFF
		mask[ip.off + 7] = 0xFF
	end
	mask[enc.udp + 6], mask[enc.udp + 7] = 0xFF, 0xFF
	mask[mrc_off + 4] = 0xFF
	local c = 0xFFFFFFFF
	for _ = 1, 8 do c = bxor(CRC_TABLE[band(bxor(c, 0xFF), 0xFF)], rshift(c, 8)) end
	for i = ip.off, mrc_end - 1 do
		local x = b:get_index(i)
		if mask[i] then x = bor(x, mask[i]) end
		c = bxor(CRC_TABLE[band(bxor(c, x), 0xFF)], rshift(c, 8))
	end
	return u32(bnot(c))
end

local function dscp_class(dscp)
	local names = {}
	for _, c in ipairs(DSCP_CLASSES) do
		if mrc.prefs["dscp_" .. c[1]] == dscp then names[#names + 1] = c[2] end
	end
	return #names > 0 and table.concat(names, "/") or "other"
end

-- The SRv6 outer header (D8, D9): outer IPv6 with next header 41 (or an
-- SRH, 43) in front of the inner IPv6 that carries UDP.
local function dissect_srv6(enc, tree, ev)
	local o = enc.outer
	if o.v4 or enc.inner.off == o.off then return end
	local b, ft = enc.bytes, enc.frame_tvb
	local nxt = b:get_index(o.off + 6)
	local sub = tree:add(mrc, ft(o.off, 40), "SRv6 outer header")
	sub:add(hf.srv6_da, ft(o.off + 24, 16))
	sub:add(hf.srv6_block, ft(o.off + 24, 4))
	for i = 0, 5 do
		local at = o.off + 28 + 2 * i
		if be(b, at, 2) == 0 then break end -- zero fill ends the uSID list
		sub:add(hf.srv6_usid, ft(at, 2))
	end
	sub:add(hf.srv6_hlim, ft(o.off + 7, 1))
	sub:add(hf.srv6_srh, nxt == 43):set_generated()
	sub:add(hf.srv6_plane, rshift(ev, 24) + 1):set_generated()
	sub:add(hf.srv6_uplink, band(ev, 0xFFFF)):set_generated()
end

-- ---- the dissector ------------------------------------------------------------

local udp_table = DissectorTable.get("udp.port")
local ib = udp_table:get_dissector(MRC_PORT) -- Wireshark's RoCEv2 dissector

function mrc.dissector(tvb, pinfo, tree)
	if tvb:len() < 1 then return 0 end
	local op = tvb(0, 1):uint()
	local o = OPS[op]
	if o == nil then -- not an MRC opcode: plain RoCE
		if ib then return ib:call(tvb, pinfo, tree) end
		return 0
	end
	pinfo.cols.protocol = "MRC"
	local root = tree:add(mrc, tvb())
	local enc = encapsulation(tvb, pinfo)

	-- Encapsulation: EV, DSCP, trim (D4, D5, D9, D23, D34)
	local trimmed, lasthop, reason = false, false, nil
	local ev
	if enc then
		trimmed, lasthop, reason = trim_check(enc)
		ev = ev_of(enc)
		local dscp = dscp_of(enc.bytes, enc.outer)
		root:add(hf.ev, ev):set_generated()
		root:add(hf.dscp, dscp):set_generated()
		root:add(hf.dscp_class, dscp_class(dscp)):set_generated()
		dissect_srv6(enc, root, ev)
	end
	local ti = root:add(hf.trimmed, trimmed)
	ti:set_generated()
	if trimmed then
		root:add(hf.trim_lasthop, lasthop):set_generated()
		root:add(hf.trim_reason, reason):set_generated()
		ti:add_proto_expert_info(ef.trimmed, "Trimmed packet (" .. reason .. ")" ..
			(is_data(op) and "" or ": a trimmed control packet is dropped"))
	end

	-- MRC bytes: BTH through pad; an untrimmed packet ends in the ICRC.
	local mrc_len = tvb:len()
	if mrc_len < BTH_LEN + (trimmed and 0 or ICRC_LEN) then
		root:add_proto_expert_info(ef.short)
		pinfo.cols.info = "MRC, " .. mrc_len .. " B [Malformed: short]"
		return tvb:len()
	end
	if not trimmed then mrc_len = mrc_len - ICRC_LEN end
	local t = tvb(0, mrc_len):tvb()

	local bti, bth = dissect_hdr(t, 0, root, "bth")
	local name = o[1]
	local info = { name }
	local flags = {}
	local function note(s) info[#info + 1] = s end
	-- a malformation: expert info on @item, and named in the Info column
	local function bad(item, e, text)
		if text then item:add_proto_expert_info(e, text) else item:add_proto_expert_info(e) end
		flags[#flags + 1] = "[Malformed: " .. e_names[e] .. "]"
	end
	note(string.format("QP=0x%06x", bth.destqp))
	if bth.tver ~= 0 then bad(bti, ef.tver) end
	if is_ep(op) then
		bti:add(hf.ep_shard, rshift(bth.psn, 16)):set_generated()
		bti:add(hf.ep_req_id, band(bth.psn, 0xFFFF)):set_generated()
		if bth.destqp ~= QPN_ENDPOINT then bti:add_proto_expert_info(ef.ep_qpn) end
		note("id=" .. band(bth.psn, 0xFFFF))
	else
		note("PSN=" .. bth.psn)
	end
	local hdrs = {}
	for _, h in ipairs(o[2]) do hdrs[h] = true end
	if bth.ts == 1 then
		if is_data(op) then hdrs.tseth = true else bad(bti, ef.ts_control) end
	end
	if bth.rtx == 1 then flags[#flags + 1] = "rtx" end
	if bth.ackreq == 1 then flags[#flags + 1] = "AckReq" end

	local off = BTH_LEN
	local v = {}
	for _, h in ipairs(HDR_ORDER) do
		if hdrs[h] then
			local sub, vals = dissect_hdr(t, off, root, h)
			if sub == nil then
				bad(root, ef.truncated, HDRS[h][1] .. " cut short: " ..
					(t:len() - off) .. " of " .. HDRS[h][2] .. " B")
				pinfo.cols.info = table.concat(info, " ") .. " " .. table.concat(flags, " ")
				return tvb:len()
			end
			v[h] = { sub = sub, v = vals, off = off }
			off = off + HDRS[h][2]
		end
	end

	-- Per-kind details, checks and expert info
	if v.meth then note("MSN=" .. v.meth.v.msn) end
	if v.aeth then
		local s = v.aeth.v.syndrome
		note("MSN=" .. v.aeth.v.msn)
		if AETH_NAMES[s] == nil then
			bad(v.aeth.sub, ef.syndrome, string.format("AETH syndrome 0x%02x is not defined (D21)", s))
		elseif s ~= 0x1F then
			v.aeth.sub:add_proto_expert_info(ef.aeth_nak, "AETH " .. AETH_NAMES[s])
			note(AETH_NAMES[s])
		end
	end
	if v.seth then
		local s = v.seth.v
		local base_psn = psn_add(s.cack_psn, s.sack_offset)
		v.seth.sub:add(hf.trigger_psn, psn_add(s.cack_psn, s.ack_psn_offset)):set_generated()
		v.seth.sub:add(hf.sack_base, base_psn):set_generated()
		v.seth.sub:add(hf.sack_received, sack_runs(base_psn, t(v.seth.off + 20, 4):uint(),
			t(v.seth.off + 24, 4):uint())):set_generated()
		if s.m == 3 then v.seth.sub:add_proto_expert_info(ef.verdict3) end
		note("cack=" .. s.cack_psn)
		note(string.format("EV=0x%08x", s.entropy))
		if s.pr == 1 then note("pr") end
		if s.m ~= 0 then note(VERDICT_NAMES[s.m]) end
	end
	if v.neth then
		local n = v.neth.v
		local c = n.nack_code
		local cname = NACK_NAMES[c] or string.format("unknown 0x%02x", c)
		local e
		if c == 0x01 or c == 0x02 then e = ef.nack_trimmed
		elseif c == 0x06 or c == 0x07 or c == 0x0A then e = ef.nack_resource
		elseif c == 0x0B then e = ef.nack_window
		elseif c == 0x19 then e = ef.nack_unexpected
		else e = ef.nack_unknown end
		v.neth.sub:add_proto_expert_info(e, "NACK " .. cname .. " for PSN " .. n.nack_psn)
		note(cname)
		note(string.format("EV=0x%08x", n.entropy))
	end
	if v.peth then note("probe_id=" .. v.peth.v.probe_id) end
	for _, h in ipairs({ "erth", "eeth" }) do
		if v[h] then
			local e = v[h].v
			v[h].sub:add(hf.ports_up, ports_up(e.port_status_mask)):set_generated()
			if e.op > 1 then bad(v[h].sub, ef.ep_op) end
			note(EP_OP_NAMES[e.op])
			note(string.format("ports=0x%x", e.port_status_mask))
			if h == "eeth" then note("rx_port=" .. e.rx_port .. " status=" .. e.status) end
		end
	end

	-- Payload and pad (data), or nothing (control)
	local rest = t:len() - off
	if is_data(op) then
		local plen = rest
		if trimmed then
			-- whatever the switch left after the headers (D34)
		elseif rest % 4 ~= 0 then
			bad(root, ef.unaligned, "Payload and pad are " .. rest .. " B")
		elseif rest < bth.padcnt then
			bad(root, ef.pad_exceeds, "PadCnt " .. bth.padcnt .. " with " .. rest .. " B after the headers")
		else
			plen = rest - bth.padcnt
			if plen > PAYLOAD_MAX then bad(root, ef.too_long, "Payload of " .. plen .. " B") end
		end
		if plen > 0 then root:add(hf.payload, t(off, plen)) end
		root:add(hf.payload_len, plen):set_generated()
		if rest > plen then root:add(hf.pad, t(off + plen, rest - plen)) end
		note("len=" .. plen)
	elseif not trimmed then
		if rest ~= 0 then bad(root, ef.trailing, rest .. " B after the header") end
		if bth.padcnt ~= 0 then bad(bti, ef.padcnt) end
	end

	-- ICRC (D24): not on trimmed packets
	if not trimmed then
		local r = tvb(mrc_len, ICRC_LEN)
		local ci = root:add_le(hf.icrc, r)
		local status, computed = 0, nil
		if enc and mrc.prefs.check_icrc and enc.cap_len == enc.wire_len then
			computed = icrc_compute(enc, enc.udp + 8, enc.udp + 8 + mrc_len)
			status = computed == r:le_uint() and 1 or 2
		end
		ci:add(hf.icrc_status, status):set_generated()
		if computed then ci:add(hf.icrc_computed, computed):set_generated() end
		if status == 2 then
			ci:add_proto_expert_info(ef.icrc_bad, string.format("Bad ICRC: 0x%08x, computed 0x%08x", r:le_uint(), computed))
			flags[#flags + 1] = "[Bad ICRC]"
		end
	end
	if trimmed then note("[Trimmed]") end
	for _, f in ipairs(flags) do note(f) end
	pinfo.cols.info = table.concat(info, " ")
	return tvb:len()
end

-- ---- registration ---------------------------------------------------------------

local registered = {}
local function register_ports()
	for port in pairs(registered) do
		if port == MRC_PORT and ib then udp_table:add(port, ib) else udp_table:remove(port, mrc) end
	end
	registered = {}
	local want = { [MRC_PORT] = true, [mrc.prefs.udp_port] = true }
	if mrc.prefs.accept_alt_port then want[MRC_ALT_PORT] = true end
	for port in pairs(want) do
		if port > 0 and port < 65536 then
			udp_table:add(port, mrc)
			registered[port] = true
		end
	end
end
mrc.prefs_changed = register_ports
register_ports()

-- In SRv6 mode EV 15:0 is a T0 uplink index (D8), so the UDP source port is
-- small, and Wireshark's UDP dissector gives a frame to the lower port's
-- dissector first (7: Echo, 13: Daytime). With the UDP preference
-- "try heuristic sub-dissectors first" on, this heuristic claims every
-- frame to an MRC port that starts with an MRC opcode before that happens.
local function heuristic(tvb, pinfo, tree)
	if not registered[pinfo.dst_port] or tvb:len() < BTH_LEN or OPS[tvb(0, 1):uint()] == nil then
		return false
	end
	mrc.dissector(tvb, pinfo, tree)
	return true
end
mrc:register_heuristic("udp", heuristic)
