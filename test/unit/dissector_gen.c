/* dissector_gen.c - one frame of every MRC packet kind for the Wireshark
 * dissector (tools/wireshark/mrc.lua): every opcode and extension header,
 * each AETH syndrome and NACK code, IPv4, IPv6, 802.1Q and SRv6 framing, the
 * configured and the alternate UDP port, trimmed packets of each D34 kind,
 * plain RoCE opcodes, and each malformation the dissector reports. Packets
 * are encoded by lib/core (mrcp_pkt_encode, mrcp_frame_build) and written
 * with mrcp_pcap; beside the capture goes a manifest of the value each
 * dissector field must show, taken from the structs handed to the encoder.
 * dissector_check.sh runs tshark over the capture and compares.
 *
 * Usage: dissector_gen OUT.pcap OUT.manifest
 *
 * Manifest lines, tab-separated:
 *   P  RUN  tshark options of that run
 *   RUN  FRAME  FIELD  VALUE
 * RUN is "a" (the preferences of the P line) or "d" (defaults), "*" both.
 * VALUE "-" means the field must be absent, "^x" that it starts with x;
 * several occurrences are joined by '|'. FIELD "experts" lists every mrc
 * expert info the frame raises, sorted and ','-separated, "" for none;
 * FIELD "malformed" is 1 when Wireshark marks the frame malformed (0 when
 * not stated).
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mrcp_bytes.h"
#include "mrcp_frame.h"
#include "mrcp_icrc.h"
#include "mrcp_pcap.h"
#include "mrcp_seq.h"
#include "mrcp_wire.h"

/* Run a: every preference moved off its default, so each one is tested. */
#define RUN_A_PREFS                                                            \
	"-o mrc.udp_port:4800 -o mrc.accept_alt_port:TRUE "                    \
	"-o mrc.ev_layout:hi16_sport -o mrc.lasthop_hop_limit:7 "              \
	"-o mrc.check_icrc:FALSE -o mrc.dscp_no_trim:15 "                      \
	"-o udp.try_heuristic_first:TRUE"
#define CFG_PORT 4800u
#define LASTHOP_HL 7u
#define NO_TRIM_A 15u /* run a's DSCP of class NO_TRIM */

struct gen {
	struct mrcp_pcap pcap;
	FILE *mf;
	unsigned n;              /* frames recorded */
	int rc;                  /* first error */
	uint8_t frame[8192];
	size_t len;              /* bytes of frame as recorded */
	size_t mrc_off;          /* where BTH starts in frame */
};

static int file_write(void *ctx, const void *buf, size_t len)
{
	return fwrite(buf, 1, len, ctx) == len ? 0 : -5 /* EIO */;
}

static void fail(struct gen *g, const char *what, int rc)
{
	if (g->rc == 0) {
		fprintf(stderr, "dissector_gen: frame %u: %s: %d\n", g->n + 1, what, rc);
		g->rc = rc < 0 ? rc : -1;
	}
}

/* One expectation for the frame recorded last. */
static void __attribute__((format(printf, 4, 5)))
want(struct gen *g, const char *run, const char *field, const char *fmt, ...)
{
	va_list ap;

	fprintf(g->mf, "%s\t%u\t%s\t", run, g->n, field);
	va_start(ap, fmt);
	vfprintf(g->mf, fmt, ap);
	va_end(ap);
	fputc('\n', g->mf);
}

static void want_hex(struct gen *g, const char *run, const char *field, const uint8_t *b, size_t n)
{
	fprintf(g->mf, "%s\t%u\t%s\t", run, g->n, field);
	for (size_t i = 0; i < n; i++)
		fprintf(g->mf, "%02x", b[i]);
	fputc('\n', g->mf);
}

/* ---- framing ---------------------------------------------------------------- */

static const uint8_t A6[16] = {0xFD, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
static const uint8_t B6[16] = {0xFD, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
/* F3216 path (D8): block fc00:0001, uSIDs 0x0100 0x0205 0x0300, zero fill */
static const uint8_t USID_DA[16] = {0xFC, 0x00, 0x00, 0x01, 0x01, 0x00, 0x02, 0x05, 0x03, 0x00};
static const uint16_t USIDS[] = {0x0100, 0x0205, 0x0300};

static void tx_init(struct mrcp_frame_tx *tx, enum mrcp_frame_l3 l3, uint32_t ev, uint8_t dscp)
{
	mrcp_frame_tx_defaults(tx);
	memcpy(tx->dst_mac, (const uint8_t[]){2, 0, 0, 0, 1, 2}, 6);
	memcpy(tx->src_mac, (const uint8_t[]){2, 0, 0, 0, 1, 1}, 6);
	tx->l3 = l3;
	if (l3 == MRCP_FRAME_IPV4) {
		memcpy(tx->src_ip, (const uint8_t[]){10, 1, 0, 1}, 4);
		memcpy(tx->dst_ip, (const uint8_t[]){10, 1, 0, 2}, 4);
	} else {
		memcpy(tx->src_ip, A6, 16);
		memcpy(tx->dst_ip, B6, 16);
		memcpy(tx->srv6_da, USID_DA, 16);
	}
	tx->ev = ev;
	tx->dscp = dscp;
	tx->ecn = dscp == 46 ? MRCP_ECN_NOT_ECT : MRCP_ECN_ECT0; /* D9 */
}

/* Build the frame for @n MRC bytes into g->frame. */
static int build(struct gen *g, const struct mrcp_frame_tx *tx, const uint8_t *mrc, size_t n)
{
	int len = mrcp_frame_build(tx, mrc, n, g->frame, sizeof(g->frame));

	if (len < 0) {
		fail(g, "mrcp_frame_build", len);
		return len;
	}
	g->len = (size_t)len;
	g->mrc_off = mrcp_frame_hdr_len(tx);
	return 0;
}

static void record(struct gen *g)
{
	int rc;

	if (g->rc != 0)
		return;
	rc = mrcp_pcap_record(&g->pcap, 1800000000ull * 1000000000ull + g->n * 1000ull, g->frame, g->len);
	if (rc < 0)
		fail(g, "mrcp_pcap_record", rc);
	g->n++;
}

/* Offset of the innermost IPv6 header of an IPv6/SRv6 frame. */
static size_t inner_ipv6(const struct mrcp_frame_tx *tx)
{
	return mrcp_frame_icrc_off(tx);
}

/* Make the frame end at @new_len (no more than it has) with IP and UDP
 * lengths that agree: a switch that trimmed and fixed the lengths. IPv6 and
 * SRv6 only (no header checksum to redo). */
static void ipv6_shrink(struct gen *g, const struct mrcp_frame_tx *tx, size_t new_len)
{
	size_t in = inner_ipv6(tx), udp = in + MRCP_IPV6_HLEN;

	mrcp_put_be16(g->frame + in + 4, (uint16_t)(new_len - udp));
	mrcp_put_be16(g->frame + udp + 4, (uint16_t)(new_len - udp));
	if (tx->l3 == MRCP_FRAME_SRV6)
		mrcp_put_be16(g->frame + in - MRCP_IPV6_HLEN + 4, (uint16_t)(new_len - in));
	g->len = new_len;
}

static const char *dscp_class(uint8_t dscp, bool run_a)
{
	switch (dscp) {
	case 10: return "TRIMMABLE";
	case 12: return "TRIMMABLE_RETX";
	case 14: return run_a ? "other" : "NO_TRIM";
	case 15: return run_a ? "NO_TRIM" : "other";
	case 11: return "TRIMMED";
	case 13: return "TRIMMED_LASTHOP";
	case 46: return "CONTROL";
	}
	return "other";
}

/* The EV as the dissector reads it with @layout from a frame built with
 * lo16_sport (D4; IPv4 carries 16 bits, D5). */
static uint32_t ev_read(const struct mrcp_frame_tx *tx, enum mrcp_ev_layout layout)
{
	uint16_t sport;
	uint32_t fl;

	mrcp_frame_ev_encode(tx->ev, tx->ev_layout, &sport, &fl);
	if (tx->l3 == MRCP_FRAME_IPV4)
		return sport;
	return mrcp_frame_ev_decode(sport, fl, layout);
}

static const char *protocols(const struct mrcp_frame_tx *tx)
{
	switch (tx->l3) {
	case MRCP_FRAME_IPV4: return tx->vlan ? "eth:ethertype:vlan:ethertype:ip:udp" : "eth:ethertype:ip:udp";
	case MRCP_FRAME_IPV6: return tx->vlan ? "eth:ethertype:vlan:ethertype:ipv6:udp" : "eth:ethertype:ipv6:udp";
	case MRCP_FRAME_SRV6:
		return tx->vlan ? "eth:ethertype:vlan:ethertype:ipv6:ipv6:udp" : "eth:ethertype:ipv6:ipv6:udp";
	}
	return "?";
}

/* The protocol stack of an MRC frame over @base: run a (UDP heuristics
 * first) reaches mrc.lua through its heuristic, and Wireshark 4.0 then
 * lists the Lua protocol twice. */
static void want_protos(struct gen *g, const char *run, const char *base)
{
	if (strcmp(run, "d") != 0)
		want(g, "a", "frame.protocols", "%s:mrc:mrc", base);
	if (strcmp(run, "a") != 0)
		want(g, "d", "frame.protocols", "%s:mrc", base);
}

/* Expectations on the encapsulation: protocol stack, EV, DSCP, SRv6. */
static void want_encap(struct gen *g, const char *run, const struct mrcp_frame_tx *tx)
{
	bool a = strcmp(run, "d") != 0, d = strcmp(run, "a") != 0;

	want_protos(g, run, protocols(tx));
	if (a) {
		want(g, "a", "mrc.ev", "%" PRIu32, ev_read(tx, MRCP_EV_HI16_SPORT));
		want(g, "a", "mrc.dscp_class", "%s", dscp_class(tx->dscp, true));
	}
	if (d) {
		want(g, "d", "mrc.ev", "%" PRIu32, ev_read(tx, MRCP_EV_LO16_SPORT));
		want(g, "d", "mrc.dscp_class", "%s", dscp_class(tx->dscp, false));
	}
	want(g, run, "mrc.dscp", "%u", tx->dscp);
	if (tx->l3 != MRCP_FRAME_SRV6) {
		want(g, run, "mrc.srv6.outer_da", "-");
		return;
	}
	{
		char da[INET6_ADDRSTRLEN];

		inet_ntop(AF_INET6, tx->srv6_da, da, sizeof(da));
		want(g, run, "mrc.srv6.outer_da", "%s", da);
	}
	want(g, run, "mrc.srv6.block", "%" PRIu32, mrcp_get_be32(tx->srv6_da));
	want(g, run, "mrc.srv6.usid", "%u|%u|%u", USIDS[0], USIDS[1], USIDS[2]);
	want(g, run, "mrc.srv6.outer_hop_limit", "%u", MRCP_SRV6_HOP_LIMIT);
	want(g, run, "mrc.srv6.srh", "0");
	for (int i = 0; i < 2; i++) {
		const char *r = i == 0 ? "a" : "d";
		uint32_t ev = ev_read(tx, i == 0 ? MRCP_EV_HI16_SPORT : MRCP_EV_LO16_SPORT);

		if (i == 0 ? !a : !d)
			continue;
		want(g, r, "mrc.srv6.plane", "%" PRIu32, (ev >> 24) + 1);  /* D8 */
		want(g, r, "mrc.srv6.uplink", "%" PRIu32, ev & 0xFFFF);
	}
}

/* Expectations on the ICRC of an untrimmed frame: the value the builder
 * stored, and what a check finds (run a has checking off). */
static void want_icrc(struct gen *g, const char *run, const struct mrcp_frame_tx *tx)
{
	size_t ip = mrcp_frame_icrc_off(tx);
	uint32_t stored = mrcp_icrc_load(g->frame + g->len - MRCP_ICRC_LEN), computed;
	int rc = mrcp_icrc_compute(g->frame + ip, g->len - ip - MRCP_ICRC_LEN, &computed);

	if (rc < 0)
		fail(g, "mrcp_icrc_compute", rc);
	want(g, run, "mrc.icrc", "%" PRIu32, stored);
	if (strcmp(run, "d") != 0) {
		want(g, "a", "mrc.icrc.status", "0");
		want(g, "a", "mrc.icrc.computed", "-");
	}
	if (strcmp(run, "a") != 0) {
		want(g, "d", "mrc.icrc.status", "%d", stored == computed ? 1 : 2);
		want(g, "d", "mrc.icrc.computed", "%" PRIu32, computed);
	}
}

static void want_experts(struct gen *g, const char *run, const char *list)
{
	want(g, run, "experts", "%s", list);
}

/* ---- packets ------------------------------------------------------------------ */

static uint8_t pad_for(uint32_t len)
{
	return (uint8_t)(-len & 3u);
}

/* "a-b,c" runs of the PSNs a SACK bitmap marks received (D26, D27). */
static void sack_runs(char *out, size_t cap, uint32_t base, uint64_t bitmap)
{
	size_t n = 0;
	int start = -1;

	out[0] = '\0';
	for (int i = 0; i <= 64; i++) {
		bool set = i < 64 && (bitmap >> i & 1);

		if (set && start < 0)
			start = i;
		if (!set && start >= 0) {
			uint32_t lo = (base + (uint32_t)start) & MRCP_PSN_MASK, hi = (base + (uint32_t)i - 1) & MRCP_PSN_MASK;

			if (lo == hi)
				n += (size_t)snprintf(out + n, cap - n, "%s%" PRIu32, n ? "," : "", lo);
			else
				n += (size_t)snprintf(out + n, cap - n, "%s%" PRIu32 "-%" PRIu32, n ? "," : "", lo, hi);
			start = -1;
		}
	}
	if (n == 0)
		snprintf(out, cap, "none");
}

static void ports_up(char *out, size_t cap, uint32_t mask)
{
	size_t n = 0;

	out[0] = '\0';
	for (int i = 1; i <= 32; i++)
		if (mask >> (i - 1) & 1)
			n += (size_t)snprintf(out + n, cap - n, "%s%d", n ? "," : "", i);
	if (n == 0)
		snprintf(out, cap, "none");
}

/* Expectations on every header field of @p, from the struct the encoder
 * was given (reserved bits and prologues are written 0). */
static void want_pkt(struct gen *g, const char *run, const struct mrcp_pkt *p)
{
	const struct mrcp_bth *b = &p->bth;
	char s[512];

	want(g, run, "mrc.bth.opcode", "%u", b->opcode);
	want(g, run, "mrc.bth.se", "%d", b->se);
	want(g, run, "mrc.bth.migreq", "%d", b->migreq);
	want(g, run, "mrc.bth.padcnt", "%u", pad_for(p->payload_len));
	want(g, run, "mrc.bth.tver", "0");
	want(g, run, "mrc.bth.pkey", "%u", b->pkey);
	want(g, run, "mrc.bth.rsvd", "0");
	want(g, run, "mrc.bth.destqp", "%" PRIu32, b->dest_qp);
	want(g, run, "mrc.bth.ackreq", "%d", b->ack_req);
	want(g, run, "mrc.bth.rtx", "%d", b->rtx);
	want(g, run, "mrc.bth.ts", "%d", b->ts);
	want(g, run, "mrc.bth.rsvd_flags", "0");
	want(g, run, "mrc.bth.psn", "%" PRIu32, b->psn);
	if (b->opcode == MRCP_OP_EP_REQUEST || b->opcode == MRCP_OP_EP_RESPONSE) {
		want(g, run, "mrc.bth.ep_shard", "%" PRIu32, b->psn >> 16); /* D63 */
		want(g, run, "mrc.bth.ep_req_id", "%" PRIu32, b->psn & 0xFFFF); /* D11 */
	} else {
		want(g, run, "mrc.bth.ep_shard", "-");
	}
	if (p->hdrs & MRCP_HDR_METH) {
		want(g, run, "mrc.meth.rq_msn", "%u", p->meth.rq_msn);
		want(g, run, "mrc.meth.msn", "%u", p->meth.msn);
	} else {
		want(g, run, "mrc.meth.msn", "-");
	}
	if (p->hdrs & MRCP_HDR_TSETH) {
		want(g, run, "mrc.tseth.tx_timestamp", "%u", p->tseth.tx_timestamp);
		want(g, run, "mrc.tseth.tsr", "%d", p->tseth.tsr);
		want(g, run, "mrc.tseth.rsvd", "0");
		want(g, run, "mrc.tseth.ftype", "%u", p->tseth.ftype);
	} else {
		want(g, run, "mrc.tseth.tx_timestamp", "-");
	}
	if (p->hdrs & MRCP_HDR_RETH) {
		want(g, run, "mrc.reth.va", "%" PRIu64, p->reth.va);
		want(g, run, "mrc.reth.rkey", "%" PRIu32, p->reth.rkey);
		want(g, run, "mrc.reth.dma_len", "%" PRIu32, p->reth.dma_len);
	} else {
		want(g, run, "mrc.reth.va", "-");
	}
	if (p->hdrs & MRCP_HDR_IMM)
		want(g, run, "mrc.immdt.value", "%" PRIu32, p->imm);
	else
		want(g, run, "mrc.immdt.value", "-");
	if (p->hdrs & MRCP_HDR_AETH) {
		want(g, run, "mrc.aeth.syndrome", "%u", p->aeth.syndrome);
		want(g, run, "mrc.aeth.msn", "%" PRIu32, p->aeth.msn);
	} else {
		want(g, run, "mrc.aeth.syndrome", "-");
	}
	if (p->hdrs & MRCP_HDR_SETH) {
		const struct mrcp_seth *h = &p->seth;
		const struct mrcp_cc_state *c = &p->cc;
		uint32_t base = (h->cack_psn + (uint32_t)(int32_t)h->sack_offset) & MRCP_PSN_MASK;

		want(g, run, "mrc.seth.prologue", "0");
		want(g, run, "mrc.seth.m", "%u", h->m);
		want(g, run, "mrc.seth.rsvd", "0");
		want(g, run, "mrc.seth.pr", "%d", h->pr);
		want(g, run, "mrc.seth.ack_psn_offset", "%d", h->ack_psn_offset);
		want(g, run, "mrc.seth.entropy", "%" PRIu32, h->entropy);
		want(g, run, "mrc.seth.spdcid", "%u", h->spdcid);
		want(g, run, "mrc.seth.dpdcid", "%u", h->dpdcid);
		want(g, run, "mrc.seth.svc_time", "%u", h->svc_time);
		want(g, run, "mrc.seth.cack_psn", "%" PRIu32, h->cack_psn);
		want(g, run, "mrc.seth.cc_type", "%u", h->cc_type);
		want(g, run, "mrc.seth.cc_flags", "%u", h->cc_flags);
		want(g, run, "mrc.seth.mpr", "%u", h->mpr);
		want(g, run, "mrc.seth.sack_offset", "%d", h->sack_offset);
		want(g, run, "mrc.seth.sack_bitmap", "%" PRIu64, h->sack_bitmap);
		want(g, run, "mrc.seth.trigger_psn", "%" PRIu32,
		     (h->cack_psn + (uint32_t)(int32_t)h->ack_psn_offset) & MRCP_PSN_MASK);
		want(g, run, "mrc.seth.sack_base", "%" PRIu32, base);
		sack_runs(s, sizeof(s), base, h->sack_bitmap);
		want(g, run, "mrc.seth.sack_received", "%s", s);
		want(g, run, "mrc.cc_state.tx_timestamp", "%u", c->tx_timestamp);
		want(g, run, "mrc.cc_state.rsvd", "0");
		want(g, run, "mrc.cc_state.ooo_count", "%u", c->ooo_count);
		want(g, run, "mrc.cc_state.r_c", "%d", c->r_c);
		want(g, run, "mrc.cc_state.rcv_cwnd_pen", "%u", c->rcv_cwnd_pen);
		want(g, run, "mrc.cc_state.rcvd_bytes", "%" PRIu32, c->rcvd_bytes);
	} else {
		want(g, run, "mrc.seth.cack_psn", "-");
		want(g, run, "mrc.cc_state.ooo_count", "-");
	}
	if (p->hdrs & MRCP_HDR_NETH) {
		const struct mrcp_neth *h = &p->neth;

		want(g, run, "mrc.neth.prologue", "0");
		want(g, run, "mrc.neth.nack_code", "%u", h->nack_code);
		want(g, run, "mrc.neth.vendor_info", "%u", h->vendor_info);
		want(g, run, "mrc.neth.entropy", "%" PRIu32, h->entropy);
		want(g, run, "mrc.neth.spdcid", "%u", h->spdcid);
		want(g, run, "mrc.neth.dpdcid", "%u", h->dpdcid);
		want(g, run, "mrc.neth.rsvd", "0");
		want(g, run, "mrc.neth.nack_psn", "%" PRIu32, h->nack_psn);
		want(g, run, "mrc.neth.cc_type", "%u", h->cc_type);
		want(g, run, "mrc.neth.cc_flags", "%u", h->cc_flags);
		want(g, run, "mrc.neth.rsvd2", "0");
		want(g, run, "mrc.neth.tx_timestamp", "%u", h->tx_timestamp);
	} else {
		want(g, run, "mrc.neth.nack_code", "-");
	}
	if (p->hdrs & MRCP_HDR_PETH) {
		const struct mrcp_peth *h = &p->peth;

		want(g, run, "mrc.peth.prologue", "0");
		want(g, run, "mrc.peth.rsvd", "0");
		want(g, run, "mrc.peth.vendor_info", "0");
		want(g, run, "mrc.peth.probe_id", "%u", h->probe_id);
		want(g, run, "mrc.peth.rsvd2", "0");
		want(g, run, "mrc.peth.spdcid", "%u", h->spdcid);
		want(g, run, "mrc.peth.dpdcid", "%u", h->dpdcid);
		want(g, run, "mrc.peth.tx_timestamp", "%u", h->tx_timestamp);
		want(g, run, "mrc.peth.tsr", "%d", h->tsr);
		want(g, run, "mrc.peth.rsvd3", "0");
		want(g, run, "mrc.peth.ftype", "%u", h->ftype);
	} else {
		want(g, run, "mrc.peth.probe_id", "-");
	}
	if (p->hdrs & MRCP_HDR_ERTH) {
		const struct mrcp_erth *h = &p->erth;

		want(g, run, "mrc.erth.prologue", "0");
		want(g, run, "mrc.erth.rsvd", "0");
		want(g, run, "mrc.erth.op", "%u", h->op);
		want(g, run, "mrc.erth.rsvd2", "0");
		want(g, run, "mrc.erth.vendor_info", "0");
		want(g, run, "mrc.erth.port_status_mask", "%" PRIu32, h->port_status_mask);
		want(g, run, "mrc.erth.rsvd3", "0");
		want(g, run, "mrc.erth.tx_timestamp", "%u", h->tx_timestamp);
		want(g, run, "mrc.erth.tsr", "%d", h->tsr);
		want(g, run, "mrc.erth.rsvd4", "0");
		want(g, run, "mrc.erth.ftype", "%u", h->ftype);
	} else {
		want(g, run, "mrc.erth.op", "-");
	}
	if (p->hdrs & MRCP_HDR_EETH) {
		const struct mrcp_eeth *h = &p->eeth;
		want(g, run, "mrc.eeth.prologue", "0");
		want(g, run, "mrc.eeth.rsvd", "0");
		want(g, run, "mrc.eeth.op", "%u", h->op); /* byte 1 bits 5:4 */
		want(g, run, "mrc.eeth.rx_port", "%u", h->rx_port);
		want(g, run, "mrc.eeth.status", "%u", h->status);
		want(g, run, "mrc.eeth.port_status_mask", "%" PRIu32, h->port_status_mask);
		want(g, run, "mrc.eeth.svc_time", "%u", h->svc_time);
		want_hex(g, run, "mrc.eeth.rsvd2", (const uint8_t[18]){0}, 18);
		want(g, run, "mrc.eeth.tx_timestamp", "%u", h->tx_timestamp);
		want(g, run, "mrc.eeth.tsr", "%d", h->tsr);
		want(g, run, "mrc.eeth.rsvd3", "0");
		want(g, run, "mrc.eeth.ftype", "%u", h->ftype);
		want(g, run, "mrc.eeth.rsvd4", "0");
	} else {
		want(g, run, "mrc.eeth.op", "-");
	}
	if (p->hdrs & (MRCP_HDR_ERTH | MRCP_HDR_EETH)) {
		ports_up(s, sizeof(s), p->hdrs & MRCP_HDR_ERTH ? p->erth.port_status_mask
							       : p->eeth.port_status_mask);
		want(g, run, "mrc.ports_up", "%s", s);
	} else {
		want(g, run, "mrc.ports_up", "-");
	}
}

/* Payload, pad and payload length of an untrimmed data packet. */
static void want_payload(struct gen *g, const char *run, const struct mrcp_pkt *p)
{
	size_t at = g->mrc_off + mrcp_pkt_hdr_len(p);

	if (!mrcp_opcode_is_data(p->bth.opcode)) {
		want(g, run, "mrc.payload_len", "-");
		want(g, run, "mrc.payload", "-");
		return;
	}
	want(g, run, "mrc.payload_len", "%" PRIu32, p->payload_len);
	if (p->payload_len > 0)
		want_hex(g, run, "mrc.payload", g->frame + at, p->payload_len);
	else
		want(g, run, "mrc.payload", "-");
	if (pad_for(p->payload_len) > 0)
		want_hex(g, run, "mrc.pad", (const uint8_t[3]){0}, pad_for(p->payload_len));
	else
		want(g, run, "mrc.pad", "-");
}

static uint8_t payload_buf[MRCP_PAYLOAD_MAX + 8];

static void fill_payload(struct mrcp_pkt *p, uint32_t len, uint8_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		payload_buf[i] = (uint8_t)(seed + i * 7);
	p->payload = payload_buf;
	p->payload_len = len;
}

/* Encode @p into @mrc; returns the length or 0 after reporting. */
static size_t encode(struct gen *g, const struct mrcp_pkt *p, uint8_t *mrc, size_t cap)
{
	int n = mrcp_pkt_encode(p, mrc, cap);

	if (n < 0) {
		fail(g, "mrcp_pkt_encode", n);
		return 0;
	}
	return (size_t)n;
}

static uint8_t mrc_buf[MRCP_PAYLOAD_MAX + 256];

/* An untrimmed, well-formed packet: record it and every expectation. */
static void emit(struct gen *g, const char *run, const struct mrcp_frame_tx *tx,
		 const struct mrcp_pkt *p, const char *experts)
{
	size_t n = encode(g, p, mrc_buf, sizeof(mrc_buf));

	if (n == 0 || build(g, tx, mrc_buf, n) < 0)
		return;
	record(g);
	want_encap(g, run, tx);
	want_pkt(g, run, p);
	want_payload(g, run, p);
	want(g, run, "mrc.trimmed", "0");
	want(g, run, "mrc.trim_reason", "-");
	want_icrc(g, run, tx);
	want_experts(g, run, experts);
}

static void pkt_init(struct gen *g, struct mrcp_pkt *p, uint8_t op, uint32_t qp, uint32_t psn)
{
	int rc = mrcp_pkt_init(p, op, qp, psn);

	if (rc < 0)
		fail(g, "mrcp_pkt_init", rc);
}

/* ---- the frames ----------------------------------------------------------------- */

static void writes(struct gen *g)
{
	static const uint8_t ops[] = {MRCP_OP_WRITE_FIRST, MRCP_OP_WRITE_MIDDLE, MRCP_OP_WRITE_LAST};
	struct mrcp_frame_tx tx;
	struct mrcp_pkt p;
	uint32_t dma_len = 2 * 1024 + 1021; /* a three-packet message; the last needs 3 B of pad */

	for (unsigned i = 0; i < 3; i++) {
		/* IPv4; a retransmission in class TRIMMABLE_RETX in the middle */
		tx_init(&tx, MRCP_FRAME_IPV4, 0xC123 + i, i == 1 ? 12 : 10);
		pkt_init(g, &p, ops[i], 0x4A0011, 0x000100 + i);
		p.bth.ack_req = i == 2;
		p.bth.rtx = i == 1;
		p.meth.rq_msn = 7;
		p.meth.msn = 0x1234;
		p.tseth.tx_timestamp = (uint16_t)(0xBEEF + i);
		p.tseth.tsr = i == 1;
		p.reth.va = 0x00007F1234560000ull + i * 1024;
		p.reth.rkey = 0xA1B2C3D4;
		p.reth.dma_len = dma_len;
		fill_payload(&p, i < 2 ? 1024 : 1021, (uint8_t)i);
		emit(g, "*", &tx, &p, "");
	}

	/* IPv6: WriteImm last (2 B pad), SE and MigReq set (decoded as seen) */
	tx_init(&tx, MRCP_FRAME_IPV6, 0x12345678, 10);
	pkt_init(g, &p, MRCP_OP_WRITE_LAST_IMM, 0x4A0012, 0xFFFFFF);
	p.bth.ack_req = true;
	p.bth.se = true;
	p.bth.migreq = true;
	p.meth.rq_msn = 0xFFFF;
	p.meth.msn = 0x8001;
	p.tseth.tx_timestamp = 0x0102;
	p.reth.va = 0xFFFFFFFFFFFF0000ull;
	p.reth.rkey = 0x01020304;
	p.reth.dma_len = 4096 + 62;
	p.imm = 0xDEADBEEF;
	fill_payload(&p, 62, 0x40);
	emit(g, "*", &tx, &p, "");

	/* IPv6 WRITE_ONLY, 1 B of pad, NO_TRIM class (D40) */
	tx_init(&tx, MRCP_FRAME_IPV6, 0x0001FFFF, 14);
	pkt_init(g, &p, MRCP_OP_WRITE_ONLY, 0x000077, 0x00ABCD);
	p.bth.ack_req = true;
	p.meth.msn = 3;
	p.tseth.tx_timestamp = 0xFFFF;
	p.reth.va = 0x1000;
	p.reth.rkey = 0xFFFFFFFF;
	p.reth.dma_len = 63;
	fill_payload(&p, 63, 0x80);
	emit(g, "*", &tx, &p, "");

	/* zero-length WriteImm (IPv6) */
	tx_init(&tx, MRCP_FRAME_IPV6, 0xABCD0001, 10);
	pkt_init(g, &p, MRCP_OP_WRITE_ONLY_IMM, 0x3FFFFF, 0x000001);
	p.bth.ack_req = true;
	p.meth.rq_msn = 9;
	p.meth.msn = 10;
	p.reth.rkey = 0x55;
	p.imm = 0x00000001;
	emit(g, "*", &tx, &p, "");

	/* 802.1Q, IPv4, a Write without TSETH (BTH.ts = 0 decodes, §6) */
	tx_init(&tx, MRCP_FRAME_IPV4, 0xFFFF, 10);
	tx.vlan = true;
	tx.vlan_tci = 0x2064;
	pkt_init(g, &p, MRCP_OP_WRITE_ONLY, 0x000100, 0x123456);
	p.bth.ts = false;
	p.hdrs &= ~(uint32_t)MRCP_HDR_TSETH;
	p.bth.ack_req = true;
	p.meth.msn = 1;
	p.reth.va = 0x2000;
	p.reth.rkey = 0x10;
	p.reth.dma_len = 100;
	fill_payload(&p, 100, 1);
	emit(g, "*", &tx, &p, "");
}

static void acks(struct gen *g)
{
	static const struct {
		uint8_t syndrome;
		const char *experts;
	} s[] = {
		{MRCP_AETH_ACK, ""},
		{MRCP_AETH_NAK_INVALID_REQ, "mrc.aeth.nak"},
		{MRCP_AETH_NAK_REMOTE_ACCESS, "mrc.aeth.nak"},
		{MRCP_AETH_NAK_REMOTE_OP, "mrc.aeth.nak"},
	};
	struct mrcp_frame_tx tx;
	struct mrcp_pkt p;

	for (unsigned i = 0; i < 4; i++) {
		tx_init(&tx, i % 2 ? MRCP_FRAME_IPV6 : MRCP_FRAME_IPV4, 0xD000 + i, 46);
		pkt_init(g, &p, MRCP_OP_ACK, 0x4A0011 + i, 0x000102 + i);
		p.aeth.syndrome = s[i].syndrome;
		p.aeth.msn = 0x001234 + i * 0x10000; /* D21: 16 bits; upper byte as seen (O3) */
		emit(g, "*", &tx, &p, s[i].experts);
	}
}

static void sacks(struct gen *g)
{
	struct mrcp_frame_tx tx;
	struct mrcp_pkt p;

	/* IPv6: every field non-zero, cack_psn near the wrap */
	tx_init(&tx, MRCP_FRAME_IPV6, 0x89ABCDEF, 46);
	pkt_init(g, &p, MRCP_OP_SACK, 0x4A0011, 0xFFFFFE);
	p.seth.m = MRCP_VERDICT_ALWAYS_SKIP;
	p.seth.ack_psn_offset = -3;
	p.seth.entropy = 0x89ABCDEF;
	p.seth.spdcid = 0x0011;
	p.seth.dpdcid = 0x0022;
	p.seth.svc_time = 200;
	p.seth.cack_psn = 0xFFFFFE; /* D11: BTH.PSN = cack_psn */
	p.seth.cc_type = 3;
	p.seth.cc_flags = 5;
	p.seth.mpr = 8;
	p.seth.sack_offset = 1;
	p.seth.sack_bitmap = 0x8000000000000076ull;
	p.cc.tx_timestamp = 0x4321;
	p.cc.ooo_count = 0x7FFF;
	p.cc.r_c = true;
	p.cc.rcv_cwnd_pen = 0x55;
	p.cc.rcvd_bytes = 0xABCDEF;
	emit(g, "*", &tx, &p, "");

	/* IPv4: a probe's answer (pr), SKIP_ONCE, negative SACK offset */
	tx_init(&tx, MRCP_FRAME_IPV4, 0xE001, 46);
	pkt_init(g, &p, MRCP_OP_SACK, 0x000009, 0x000010);
	p.seth.m = MRCP_VERDICT_SKIP_ONCE;
	p.seth.pr = true;
	p.seth.entropy = 0x0000E001;
	p.seth.svc_time = 255;
	p.seth.cack_psn = 0x000010;
	p.seth.sack_offset = -2;
	p.seth.sack_bitmap = 0xFFFFFFFF00000001ull;
	p.cc.ooo_count = 1;
	emit(g, "*", &tx, &p, "");
}

static void nacks(struct gen *g)
{
	static const struct {
		uint8_t code;
		const char *experts;
	} c[] = {
		{MRCP_NACK_TRIMMED, "mrc.nack.trimmed"},
		{MRCP_NACK_TRIMMED_LASTHOP, "mrc.nack.trimmed"},
		{MRCP_NACK_NO_BITMAP, "mrc.nack.resource"},
		{MRCP_NACK_NO_PKT_BUFFER, "mrc.nack.resource"},
		{MRCP_NACK_NO_RESOURCE, "mrc.nack.resource"},
		{MRCP_NACK_PSN_OOR_WINDOW, "mrc.nack.window"},
		{MRCP_NACK_UNEXP_EVENT, "mrc.nack.unexpected"},
		{0x33, "mrc.nack.unknown"}, /* D22 */
	};
	struct mrcp_frame_tx tx;
	struct mrcp_pkt p;

	for (unsigned i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		tx_init(&tx, i % 2 ? MRCP_FRAME_IPV4 : MRCP_FRAME_IPV6, i % 2 ? 0xF100 + i : 0x00F10000 + i, 46);
		pkt_init(g, &p, MRCP_OP_NACK, 0x4A0011, 0x000200 + i);
		p.neth.nack_code = c[i].code;
		p.neth.vendor_info = (uint8_t)(0x50 + i);
		p.neth.entropy = 0x00F10000 + i;
		p.neth.spdcid = (uint16_t)(0x0100 + i);
		p.neth.dpdcid = (uint16_t)(0x0200 + i);
		p.neth.nack_psn = 0x000200 + i; /* D11 */
		p.neth.cc_type = (uint8_t)(i & 0xF);
		p.neth.cc_flags = (uint8_t)(15 - i);
		p.neth.tx_timestamp = (uint16_t)(0x1000 * i + 1);
		emit(g, "*", &tx, &p, c[i].experts);
	}
}

static void probes_and_endpoint_ops(struct gen *g)
{
	struct mrcp_frame_tx tx;
	struct mrcp_pkt p;

	tx_init(&tx, MRCP_FRAME_IPV4, 0xC777, 10);
	pkt_init(g, &p, MRCP_OP_PROBE, 0x4A0011, 0x000300);
	p.peth.probe_id = 0x0102;
	p.peth.spdcid = 0x1111;
	p.peth.dpdcid = 0x2222;
	p.peth.tx_timestamp = 0x7777;
	p.peth.tsr = true;
	emit(g, "*", &tx, &p, "");

	/* requests: PSN = shard << 16 | request id (D11, D63), DestQP 0x2 */
	for (unsigned op = 0; op < 2; op++) {
		tx_init(&tx, MRCP_FRAME_IPV4, 0xC800 + op, op ? 10 : 46);
		pkt_init(g, &p, MRCP_OP_EP_REQUEST, MRCP_QPN_ENDPOINT, (1u + op) << 16 | (0x0203 + op));
		p.erth.op = (uint8_t)op;
		p.erth.port_status_mask = op ? 0x0000000F : 0x0000000B;
		p.erth.tx_timestamp = (uint16_t)(0x1111 + op);
		p.erth.tsr = op == 1;
		emit(g, "*", &tx, &p, "");
	}
	for (unsigned op = 0; op < 2; op++) {
		tx_init(&tx, MRCP_FRAME_IPV6, 0xC900 + op, 46);
		pkt_init(g, &p, MRCP_OP_EP_RESPONSE, MRCP_QPN_ENDPOINT, (1u + op) << 16 | (0x0203 + op));
		p.eeth.op = (uint8_t)op;
		p.eeth.rx_port = (uint8_t)(3 - op);
		p.eeth.status = (uint8_t)(op * 5);
		p.eeth.port_status_mask = op ? 0x80000001 : 0x00000007;
		p.eeth.svc_time = (uint16_t)(0x0102 + op);
		p.eeth.tx_timestamp = (uint16_t)(0x1111 + op);
		p.eeth.tsr = op == 0;
		emit(g, "*", &tx, &p, "");
	}
}

static void srv6(struct gen *g)
{
	struct mrcp_frame_tx tx;
	struct mrcp_pkt p;

	/* D8: EV = plane[31:24] (port 2 -> 1), 0, T0 uplink 5 */
	tx_init(&tx, MRCP_FRAME_SRV6, 0x01000005, 10);
	pkt_init(g, &p, MRCP_OP_WRITE_ONLY, 0x4A0013, 0x000400);
	p.bth.ack_req = true;
	p.meth.msn = 77;
	p.tseth.tx_timestamp = 0x3333;
	p.reth.va = 0x400000;
	p.reth.rkey = 0x77;
	p.reth.dma_len = 256;
	fill_payload(&p, 256, 0x11);
	emit(g, "*", &tx, &p, "");

	/* T0 uplink 7: UDP source port 7, Echo's; Wireshark's UDP tries the
	 * lower port first, so only the heuristic (UDP heuristics first, run
	 * a) makes it MRC */
	tx_init(&tx, MRCP_FRAME_SRV6, 0x01000007, 10);
	p.reth.va += 256;
	emit(g, "a", &tx, &p, "");
	want(g, "d", "frame.protocols", "^eth:ethertype:ipv6:ipv6:udp:echo");
	want(g, "d", "mrc.bth.opcode", "-");
	want_experts(g, "d", "");

	tx_init(&tx, MRCP_FRAME_SRV6, 0x03000010, 46);
	tx.vlan = true;
	tx.vlan_tci = 7;
	pkt_init(g, &p, MRCP_OP_SACK, 0x4A0014, 0x000401);
	p.seth.entropy = 0x01000005;
	p.seth.cack_psn = 0x000401;
	p.seth.sack_bitmap = 0x3;
	p.cc.tx_timestamp = 0x3333;
	p.cc.rcvd_bytes = 1;
	emit(g, "*", &tx, &p, "");
}

/* Frames on UDP 4800 (run a's configured port) and 4971 (the alternate,
 * D1): MRC in run a, plain UDP with default preferences. */
static void ports(struct gen *g)
{
	struct mrcp_frame_tx tx;
	struct mrcp_pkt p;

	for (unsigned i = 0; i < 2; i++) {
		tx_init(&tx, MRCP_FRAME_IPV4, 0xCA00 + i, i ? 46 : 10);
		tx.udp_dport = (uint16_t)(i ? MRCP_UDP_PORT_ALT : CFG_PORT);
		if (i == 0) {
			pkt_init(g, &p, MRCP_OP_WRITE_ONLY, 0x000500, 0x000500);
			p.bth.ack_req = true;
			p.reth.dma_len = 8;
			fill_payload(&p, 8, 9);
		} else {
			pkt_init(g, &p, MRCP_OP_ACK, 0x000500, 0x000500);
			p.aeth.msn = 5;
		}
		emit(g, "a", &tx, &p, "");
		want(g, "d", "frame.protocols", "^eth:ethertype:ip:udp");
		want(g, "d", "mrc.bth.opcode", "-");
		want_experts(g, "d", "");
	}
}

/* A Write for the trim cases: headers, then 64 B of payload. */
static size_t trim_write(struct gen *g, struct mrcp_pkt *p, uint32_t psn)
{
	pkt_init(g, p, MRCP_OP_WRITE_FIRST, 0x4A0015, psn);
	p->meth.msn = 4;
	p->tseth.tx_timestamp = 0x0999;
	p->reth.va = 0x9000;
	p->reth.rkey = 0x99;
	p->reth.dma_len = 4096;
	fill_payload(p, 64, 0x21);
	return encode(g, p, mrc_buf, sizeof(mrc_buf));
}

/* Expectations on a trimmed frame that keeps @left payload bytes. */
static void want_trimmed(struct gen *g, const char *run, const struct mrcp_frame_tx *tx,
			 struct mrcp_pkt *p, uint32_t left, bool lasthop, const char *reason)
{
	want_encap(g, run, tx);
	p->payload_len = 0; /* PadCnt as sent: 0 for 64 B */
	want_pkt(g, run, p);
	want(g, run, "mrc.trimmed", "1");
	want(g, run, "mrc.trim_lasthop", "%d", lasthop);
	want(g, run, "mrc.trim_reason", "%s", reason);
	if (!mrcp_opcode_is_data(p->bth.opcode))
		want(g, run, "mrc.payload_len", "-");
	else
		want(g, run, "mrc.payload_len", "%" PRIu32, left);
	if (left > 0)
		want_hex(g, run, "mrc.payload", g->frame + g->mrc_off + mrcp_pkt_hdr_len(p), left);
	else
		want(g, run, "mrc.payload", "-");
	want(g, run, "mrc.pad", "-");
	want(g, run, "mrc.icrc", "-");
	want_experts(g, run, "mrc.trimmed.expert");
	/* Wireshark's UDP dissector calls a UDP length beyond the frame
	 * malformed; a trimmed packet whose lengths were fixed is not */
	want(g, run, "malformed", "%d", strstr(reason, "shorter") != NULL || strstr(reason, "longer") != NULL);
}

static void trims(struct gen *g)
{
	struct mrcp_frame_tx tx;
	struct mrcp_pkt p;
	size_t n, hl = MRCP_DATA_HDR_LEN;

	/* IPv6, DSCP TRIMMED, lengths fixed by the switch: headers only */
	tx_init(&tx, MRCP_FRAME_IPV6, 0x00020001, 11);
	n = trim_write(g, &p, 0x000600);
	if (n == 0 || build(g, &tx, mrc_buf, n) < 0)
		return;
	ipv6_shrink(g, &tx, g->mrc_off + hl);
	record(g);
	want_trimmed(g, "*", &tx, &p, 0, false, "DSCP TRIMMED");

	/* IPv4, DSCP TRIMMED_LASTHOP, cut like lib/dp's trim fault (lengths
	 * left as they were), 8 payload bytes left */
	tx_init(&tx, MRCP_FRAME_IPV4, 0xCB01, 13);
	n = trim_write(g, &p, 0x000601);
	if (n == 0 || build(g, &tx, mrc_buf, n) < 0)
		return;
	g->len = g->mrc_off + hl + 8;
	record(g);
	want_trimmed(g, "*", &tx, &p, 8, true, "DSCP TRIMMED_LASTHOP, shorter than its IP length");

	/* IPv4, still DSCP TRIMMABLE, cut: the length gives it away; TTL 7 is
	 * run a's last-hop hop limit */
	tx_init(&tx, MRCP_FRAME_IPV4, 0xCB02, 10);
	tx.ttl = LASTHOP_HL;
	n = trim_write(g, &p, 0x000602);
	if (n == 0 || build(g, &tx, mrc_buf, n) < 0)
		return;
	g->len = g->mrc_off + hl + 4;
	record(g);
	want_trimmed(g, "a", &tx, &p, 4, true, "shorter than its IP length, hop limit 7");
	want_trimmed(g, "d", &tx, &p, 4, false, "shorter than its IP length");

	/* SRv6: the outer DSCP says TRIMMED (D9: read from the outer header),
	 * the inner still TRIMMABLE; cut */
	tx_init(&tx, MRCP_FRAME_SRV6, 0x02000003, 10);
	n = trim_write(g, &p, 0x000603);
	if (n == 0 || build(g, &tx, mrc_buf, n) < 0)
		return;
	{
		uint8_t *o = g->frame + MRCP_ETH_HLEN;
		uint8_t tc = (uint8_t)(11 << 2 | MRCP_ECN_ECT0);

		o[0] = (uint8_t)((o[0] & 0xF0) | tc >> 4);
		o[1] = (uint8_t)((o[1] & 0x0F) | (tc & 0x0F) << 4);
	}
	g->len = g->mrc_off + hl;
	record(g);
	tx.dscp = 11; /* what the dissector reads, from the outer header */
	want_trimmed(g, "*", &tx, &p, 0, false, "DSCP TRIMMED, shorter than its IP length");

	/* SRv6: a switch fixed the outer length only, so the inner IPv6
	 * length runs past the outer end */
	tx_init(&tx, MRCP_FRAME_SRV6, 0x02000004, 10);
	n = trim_write(g, &p, 0x000604);
	if (n == 0 || build(g, &tx, mrc_buf, n) < 0)
		return;
	g->len = g->mrc_off + hl + 12;
	mrcp_put_be16(g->frame + MRCP_ETH_HLEN + 4, (uint16_t)(g->len - MRCP_ETH_HLEN - MRCP_IPV6_HLEN));
	record(g);
	want_trimmed(g, "*", &tx, &p, 12, false, "inner IPv6 longer than the outer");

	/* a control packet in a trimmed class (lengths intact): the receiver
	 * drops it (D34) */
	tx_init(&tx, MRCP_FRAME_IPV4, 0xCB05, 11);
	pkt_init(g, &p, MRCP_OP_SACK, 0x4A0015, 0x000605);
	p.seth.cack_psn = 0x000605;
	p.seth.sack_bitmap = 1;
	n = encode(g, &p, mrc_buf, sizeof(mrc_buf));
	if (n == 0 || build(g, &tx, mrc_buf, n) < 0)
		return;
	record(g);
	want_trimmed(g, "*", &tx, &p, 0, false, "DSCP TRIMMED");
	want(g, "*", "_ws.expert.message", "^Trimmed packet (DSCP TRIMMED): a trimmed control packet is dropped");
}

/* Plain RoCEv2 (IBTA opcodes): handed to Wireshark's InfiniBand dissector. */
static void roce(struct gen *g)
{
	static const struct {
		uint8_t op;
		size_t len;
	} r[] = {
		{0x04, 12 + 16}, /* RC SEND_ONLY, 16 B payload */
		{0x0A, 12 + 16 + 8}, /* RC RDMA_WRITE_ONLY: RETH, 8 B */
		{0x11, 12 + 4}, /* RC ACKNOWLEDGE: AETH */
		{0xCC, 12 + 8}, /* vendor-defined, not MRC's */
	};
	struct mrcp_frame_tx tx;

	for (unsigned i = 0; i < sizeof(r) / sizeof(r[0]); i++) {
		uint8_t b[64] = {0};

		b[0] = r[i].op;
		mrcp_put_be16(b + 2, 0xFFFF);
		mrcp_put_be24(b + 5, 0x000321 + i);
		mrcp_put_be24(b + 9, 0x000777 + i);
		if (r[i].op == 0x0A) {
			mrcp_put_be64(b + 12, 0x0000123456789ABCull);
			mrcp_put_be32(b + 20, 0x4242);
			mrcp_put_be32(b + 24, 8);
		}
		if (r[i].op == 0x11) {
			b[12] = 0x1F;
			mrcp_put_be24(b + 13, 0x000042);
		}
		tx_init(&tx, MRCP_FRAME_IPV4, 0xCC00 + i, 10);
		if (build(g, &tx, b, r[i].len) < 0)
			return;
		record(g);
		/* the port is mrc.lua's, so mrc is a layer; no mrc item is added */
		want(g, "*", "frame.protocols", "^eth:ethertype:ip:udp:mrc:infiniband");
		want(g, "*", "mrc", "-");
		want(g, "*", "infiniband.bth.opcode", "%u", r[i].op);
		want(g, "*", "infiniband.bth.destqp", "%u", 0x000321 + i);
		want(g, "*", "infiniband.bth.psn", "%u", 0x000777 + i);
		if (r[i].op == 0x0A) {
			want(g, "*", "infiniband.reth.va", "%" PRIu64, (uint64_t)0x0000123456789ABCull);
			want(g, "*", "infiniband.reth.r_key", "%u", 0x4242);
		}
		if (r[i].op == 0x11)
			want(g, "*", "infiniband.aeth.msn", "%u", 0x42);
		want(g, "*", "mrc.bth.opcode", "-");
		want_experts(g, "*", "");
	}
}

/* A malformed or odd packet made from @mrc (@n bytes): record it with
 * BTH.opcode and the experts it must raise. */
static void emit_bad(struct gen *g, uint8_t *mrc, size_t n, const char *experts)
{
	struct mrcp_frame_tx tx;

	tx_init(&tx, MRCP_FRAME_IPV4, 0xCD00 + g->n, 46);
	if (build(g, &tx, mrc, n) < 0)
		return;
	record(g);
	want_protos(g, "*", "eth:ethertype:ip:udp");
	want(g, "*", "mrc.bth.opcode", "%u", mrc[0]);
	want_experts(g, "*", experts);
	want(g, "*", "malformed", "%d", strstr(experts, "malformed") != NULL);
}

static size_t enc_kind(struct gen *g, uint8_t op, uint8_t *b)
{
	struct mrcp_pkt p;

	pkt_init(g, &p, op, op == MRCP_OP_EP_REQUEST || op == MRCP_OP_EP_RESPONSE ? MRCP_QPN_ENDPOINT : 0x42, 0x10);
	if (mrcp_opcode_is_data(op)) {
		p.reth.dma_len = 8;
		fill_payload(&p, 8, 3);
	}
	return encode(g, &p, b, sizeof(mrc_buf));
}

static void malformed(struct gen *g)
{
	uint8_t *b = mrc_buf;
	size_t n;

	/* fewer than 12 + 4 bytes: an IPv6 frame cut to 12 B of UDP payload */
	{
		struct mrcp_frame_tx tx;

		tx_init(&tx, MRCP_FRAME_IPV6, 0xCD00, 46);
		n = enc_kind(g, MRCP_OP_ACK, b);
		if (build(g, &tx, b, n) < 0)
			return;
		ipv6_shrink(g, &tx, g->mrc_off + 12);
		record(g);
		want_protos(g, "*", "eth:ethertype:ipv6:udp");
		want(g, "*", "mrc.bth.opcode", "-");
		want_experts(g, "*", "mrc.malformed.short");
		want(g, "*", "malformed", "1");
	}
	n = enc_kind(g, MRCP_OP_NACK, b);
	emit_bad(g, b, n - 10, "mrc.malformed.truncated");  /* NETH cut to 10 B */
	n = enc_kind(g, MRCP_OP_ACK, b);
	b[1] |= 0x01;                                         /* TVer 1 */
	emit_bad(g, b, n, "mrc.malformed.tver");
	n = enc_kind(g, MRCP_OP_SACK, b);
	b[8] |= 0x10;                                         /* ts on a SACK */
	emit_bad(g, b, n, "mrc.malformed.ts_control");
	n = enc_kind(g, MRCP_OP_EP_REQUEST, b);
	b[12 + 1] |= 0x03;                                    /* ERTH op 3 */
	emit_bad(g, b, n, "mrc.malformed.ep_op");
	n = enc_kind(g, MRCP_OP_EP_RESPONSE, b);
	b[12 + 1] = 0x30;                                     /* EETH op 3 */
	emit_bad(g, b, n, "mrc.malformed.ep_op");
	n = enc_kind(g, MRCP_OP_ACK, b);
	b[12] = 0x00;                                         /* syndrome 0 */
	emit_bad(g, b, n, "mrc.malformed.syndrome");
	n = enc_kind(g, MRCP_OP_ACK, b);
	memset(b + n, 0xAA, 4);                               /* 4 trailing bytes */
	emit_bad(g, b, n + 4, "mrc.malformed.trailing");
	n = enc_kind(g, MRCP_OP_ACK, b);
	b[1] |= 0x20;                                         /* PadCnt 2 */
	emit_bad(g, b, n, "mrc.malformed.padcnt");
	{
		struct mrcp_pkt p;

		pkt_init(g, &p, MRCP_OP_WRITE_ONLY, 0x42, 0x10);
		p.reth.dma_len = MRCP_PAYLOAD_MAX + 4;
		fill_payload(&p, MRCP_PAYLOAD_MAX, 5);
		n = encode(g, &p, b, sizeof(mrc_buf));
		memset(b + n, 0x5A, 4);                       /* 4100 B of payload */
		emit_bad(g, b, n + 4, "mrc.malformed.too_long");
	}
	n = enc_kind(g, MRCP_OP_WRITE_ONLY, b);
	emit_bad(g, b, n - 3, "mrc.malformed.unaligned");    /* 5 B, no pad */
	n = enc_kind(g, MRCP_OP_WRITE_ONLY, b);
	b[1] |= 0x30;                                         /* PadCnt 3 ... */
	emit_bad(g, b, n - 8, "mrc.malformed.pad_exceeds");  /* ... and no payload */
	n = enc_kind(g, MRCP_OP_NACK, b);
	b[12] = 0x80;                                         /* NETH prologue */
	b[12 + 12] = 0x01;                                    /* and a reserved byte */
	emit_bad(g, b, n, "mrc.ignored_set,mrc.nack.unknown"); /* code 0 */
	n = enc_kind(g, MRCP_OP_SACK, b);
	b[12 + 1] |= 0x60;                                    /* SETH m = 3 */
	emit_bad(g, b, n, "mrc.seth.m3");
	want(g, "*", "mrc.seth.m", "3");
	{
		struct mrcp_pkt p;

		pkt_init(g, &p, MRCP_OP_EP_REQUEST, 0x000005, 0x10); /* not QPN 0x2 */
		n = encode(g, &p, b, sizeof(mrc_buf));
		emit_bad(g, b, n, "mrc.ep_qpn");
	}
	/* a Write whose payload changed after the ICRC was computed */
	{
		struct mrcp_frame_tx tx;
		struct mrcp_pkt p;

		tx_init(&tx, MRCP_FRAME_IPV4, 0xCDEF, 10);
		pkt_init(g, &p, MRCP_OP_WRITE_ONLY, 0x42, 0x11);
		p.reth.dma_len = 32;
		fill_payload(&p, 32, 6);
		n = encode(g, &p, b, sizeof(mrc_buf));
		if (build(g, &tx, b, n) < 0)
			return;
		g->frame[g->mrc_off + MRCP_DATA_HDR_LEN + 5] ^= 0xFF;
		record(g);
		want_protos(g, "*", "eth:ethertype:ip:udp");
		want_icrc(g, "*", &tx);
		want_experts(g, "a", "");
		want_experts(g, "d", "mrc.icrc.bad");
	}
}

int main(int argc, char **argv)
{
	struct gen g;
	FILE *f;

	if (argc != 3) {
		fprintf(stderr, "usage: %s OUT.pcap OUT.manifest\n", argv[0]);
		return 2;
	}
	memset(&g, 0, sizeof(g));
	f = fopen(argv[1], "wb");
	g.mf = fopen(argv[2], "w");
	if (f == NULL || g.mf == NULL) {
		perror("dissector_gen");
		return 1;
	}
	g.pcap.write = file_write;
	g.pcap.ctx = f;
	g.rc = mrcp_pcap_begin(&g.pcap);
	fprintf(g.mf, "P\ta\t%s\n", RUN_A_PREFS);
	writes(&g);
	acks(&g);
	sacks(&g);
	nacks(&g);
	probes_and_endpoint_ops(&g);
	srv6(&g);
	ports(&g);
	trims(&g);
	roce(&g);
	malformed(&g);
	fprintf(g.mf, "N\t%u\n", g.n);
	if ((fclose(f) != 0 || fclose(g.mf) != 0) && g.rc == 0)
		g.rc = -5;
	if (g.rc < 0) {
		fprintf(stderr, "dissector_gen: error %d\n", g.rc);
		return 1;
	}
	return 0;
}
