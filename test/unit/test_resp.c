/* test_resp.c - white-box tests of lib/core/resp.c, the responder: placement,
 * duplicates, the window, trims, the SACK policy and format (D26-D28), CE
 * verdicts (D47), AETH (D11, D38), WriteImm release (D39, D12), protocol
 * violations and probes (D37).
 *
 * One engine, fed hand-made packets (mrcp_pkt_init/mrcp_pkt_encode) after
 * mrcp_qp_connect with a hand-made peer; what it sends is taken from
 * mrcp_poll, decoded with mrcp_pkt_decode and written to a text log. The
 * clock is a plain variable. The peer's first PSN is 0, so cack starts at
 * 0xFFFFFF. */
#include <errno.h>
#include <stdlib.h>

#include "engine_internal.h"
#include "engine_fx.h"
#include "fake_link.h"
#include "mrcp_test.h"
#include "mrcp_wire.h"

#define PEER_QPN 0x100u
#define BUF_VA 0x10000000ull
#define BUF_LEN (1u << 20)
#define MTU 1024u
#define EV_A 0xC001u
#define MAX_OUT 64
#define CACK0 0xFFFFFFu

/* ---- fixture: one engine, one connected QP, a fake link ------------------ */

struct fx {
	struct mrcp_engine *e;
	uint32_t qpn;
	struct qp *qp;
	uint8_t *buf;
	uint32_t lkey, rkey;
	uint64_t now;
	struct fake_link link;    /* what the engine sent at the last drain */
};

/* rx options of a hand-made packet */
struct rxo {
	uint32_t ev;
	uint8_t ecn, trim, port;
};

static const struct rxo RX_PLAIN = {.ev = EV_A, .ecn = MRCP_ECN_ECT0, .port = 1};

static uint8_t src_bytes[BUF_LEN]; /* the requester's payload, a known pattern */

static void fx_init_with(struct fx *f, const struct mrcp_qp_attr *attr)
{
	struct mrcp_engine_config c;
	struct mrcp_conn_info ci;

	memset(f, 0, sizeof(*f));
	fake_link_init(&f->link, MAX_OUT);
	for (uint32_t i = 0; i < BUF_LEN; i++)
		src_bytes[i] = (uint8_t)(i * 7 + (i >> 8) + 1);
	mrcp_engine_config_defaults(&c);
	c.seed = 7;
	c.n_ports = 1;
	fx_ip(&c.node_addr, 0, 0);
	fx_ip(&c.port_addr[0], 0, 1);
	c.mtu = MTU;
	c.ev.n_active = 8;
	c.ev.n_backup = 4;
	ASSERT_EQ(0, mrcp_engine_create(&c, &f->e));
	f->buf = calloc(1, BUF_LEN);
	ASSERT_EQ(0, mrcp_mr_reg(f->e, BUF_VA, BUF_LEN, f->buf, MRCP_ACCESS_LOCAL_WRITE | MRCP_ACCESS_REMOTE_WRITE,
				 &f->lkey, &f->rkey));
	ASSERT_EQ(0, mrcp_qp_create(f->e, attr, &f->qpn));
	fx_peer_info(&ci, PEER_QPN, MTU);
	ASSERT_EQ(0, mrcp_qp_connect(f->e, f->qpn, &ci, f->now));
	f->qp = mrcp__qp_lookup(f->e, f->qpn);
	ASSERT_TRUE(f->qp != NULL);
	ASSERT_EQ(CACK0, f->qp->rcv_cack);
	f->now = 1000000;
}

static void fx_init(struct fx *f)
{
	fx_init_with(f, NULL);
}

static void fx_fini(struct fx *f)
{
	mrcp_engine_destroy(f->e);
	free(f->buf);
	fake_link_fini(&f->link);
}

/* A data packet of message @msn: @len payload bytes at message offset @off,
 * of a message of @dma_len bytes, written to VA BUF_VA + @va_off + @off. */
static void data_pkt(struct fx *f, struct mrcp_pkt *p, uint8_t op, uint32_t psn, uint16_t msn,
		     uint32_t va_off, uint32_t off, uint32_t len, uint32_t dma_len)
{
	ASSERT_EQ(0, mrcp_pkt_init(p, op, f->qpn, psn));
	p->meth.msn = msn;
	p->meth.rq_msn = 0;
	p->tseth.tx_timestamp = (uint16_t)(0x100 + psn);
	p->reth.va = BUF_VA + va_off + off;
	p->reth.rkey = f->rkey;
	p->reth.dma_len = dma_len;
	p->payload = src_bytes + va_off + off;
	p->payload_len = len;
}

/* Deliver @n packets as one RX burst. */
static void rx_burst(struct fx *f, const struct mrcp_pkt *ps, const struct rxo *o, unsigned n)
{
	static uint8_t raw[32][MRCP_TX_HDR_MAX + MRCP_PAYLOAD_MAX + 8];
	struct mrcp_rx rx[32];

	ASSERT_LE(n, 32);
	for (unsigned i = 0; i < n; i++) {
		const struct rxo *oi = o ? &o[i] : &RX_PLAIN;
		int len = mrcp_pkt_encode(&ps[i], raw[i], sizeof(raw[i]));
		ASSERT_GT(len, 0);
		memset(&rx[i], 0, sizeof(rx[i]));
		rx[i].data = raw[i];
		rx[i].len = (uint32_t)len;
		if (oi->trim != MRCP_TRIM_NONE)
			rx[i].len = (uint32_t)mrcp_pkt_hdr_len(&ps[i]); /* a switch cut the payload */
		rx[i].port = oi->port ? oi->port : 1;
		rx[i].ecn = oi->ecn;
		rx[i].trim = oi->trim;
		rx[i].ev = oi->ev;
		fx_ip(&rx[i].src, 1, rx[i].port);
	}
	mrcp_rx_burst(f->e, rx, n, f->now);
}

static void rx1(struct fx *f, const struct mrcp_pkt *p, const struct rxo *o)
{
	rx_burst(f, p, o, 1);
}

/* Take up to MAX_OUT packets the engine has to send now into f->link
 * (packets and log); every packet is for the peer QP. */
static unsigned drain(struct fx *f)
{
	unsigned n = fake_link_poll(&f->link, f->e, f->now, MAX_OUT);

	for (unsigned i = 0; i < n; i++)
		ASSERT_EQ(PEER_QPN, f->link.out[i].p.bth.dest_qp);
	return n;
}

static unsigned count_op(const struct fx *f, uint8_t op)
{
	unsigned k = 0;

	for (unsigned i = 0; i < f->link.n_out; i++)
		k += f->link.out[i].p.bth.opcode == op;
	return k;
}

static const struct mrcp_pkt *first_op(const struct fx *f, uint8_t op)
{
	for (unsigned i = 0; i < f->link.n_out; i++)
		if (f->link.out[i].p.bth.opcode == op)
			return &f->link.out[i].p;
	mrcp_test_fail(__FILE__, __LINE__, "no %s in: %s", mrcp_opcode_name(op), f->link.log);
}

static uint32_t nominal_data(uint32_t payload, bool imm)
{
	/* BTH + METH + TSETH + RETH [+ ImmDt] + payload padded, + ICRC + 40 */
	return 12 + 4 + 4 + 16 + (imm ? 4 : 0) + ((payload + 3) & ~3u) + 4 + 40;
}

static struct mrcp_qp_counters qc(const struct fx *f)
{
	return f->qp->c;
}

static struct mrcp_engine_counters ec(const struct fx *f)
{
	struct mrcp_engine_counters c;

	mrcp_engine_counters(f->e, &c);
	return c;
}

/* ---- mrcp__resp_on_data: placement ------------------------------------------ */

TEST(resp, resp_on_data__in_order_only_packet_lands_at_va_and_is_acked)
{
	struct fx f;
	struct mrcp_pkt p;

	fx_init(&f);
	data_pkt(&f, &p, MRCP_OP_WRITE_ONLY, 0, 0, 0x40, 0, 100, 100);
	p.bth.ack_req = true;
	rx1(&f, &p, NULL);
	ASSERT_MEMEQ(f.buf + 0x40, src_bytes + 0x40, 100);
	ASSERT_EQ(0, f.buf[0x40 + 100]);
	ASSERT_EQ(0, f.buf[0x3F]);
	drain(&f);
	/* AckReq: SACK at once; MSN 0 released: AETH at the end of the burst */
	ASSERT_STREQ("SACK cack 0 ack_off 0 sack_off 1 bm 0x0 m 0 pr 0; ACK 0x1f msn 0 psn 0", f.link.log);
	ASSERT_EQ(1, qc(&f).rx_data_pkts);
	ASSERT_EQ(100, qc(&f).rx_data_bytes);
	ASSERT_EQ(0, f.qp->rcv_cack);
	ASSERT_EQ(1, f.qp->rcv_msn);
	fx_fini(&f);
}

TEST(resp, resp_on_data__out_of_order_packets_each_land_at_their_va)
{
	struct fx f;
	struct mrcp_pkt p[3];
	uint32_t dma = 2 * MTU + 300;

	fx_init(&f);
	data_pkt(&f, &p[0], MRCP_OP_WRITE_FIRST, 0, 0, 0x1000, 0, MTU, dma);
	data_pkt(&f, &p[1], MRCP_OP_WRITE_MIDDLE, 1, 0, 0x1000, MTU, MTU, dma);
	data_pkt(&f, &p[2], MRCP_OP_WRITE_LAST, 2, 0, 0x1000, 2 * MTU, 300, dma);
	/* LAST, then MIDDLE, then FIRST, each its own burst */
	rx1(&f, &p[2], NULL);
	ASSERT_MEMEQ(f.buf + 0x1000 + 2 * MTU, src_bytes + 0x1000 + 2 * MTU, 300);
	ASSERT_EQ(0, f.buf[0x1000]);
	ASSERT_EQ(CACK0, f.qp->rcv_cack);
	ASSERT_EQ(1, f.qp->ooo);
	drain(&f);
	ASSERT_STREQ("SACK cack 16777215 ack_off 3 sack_off 1 bm 0x4 m 0 pr 0", f.link.log);
	rx1(&f, &p[1], NULL);
	drain(&f);
	ASSERT_STREQ("SACK cack 16777215 ack_off 2 sack_off 1 bm 0x6 m 0 pr 0", f.link.log);
	ASSERT_EQ(2, f.qp->ooo);
	rx1(&f, &p[0], NULL);
	ASSERT_MEMEQ(f.buf + 0x1000, src_bytes + 0x1000, dma);
	ASSERT_EQ(2, f.qp->rcv_cack);
	ASSERT_EQ(0, f.qp->ooo);
	drain(&f);
	/* D38/D11: the AETH carries the last PSN of the completed message */
	ASSERT_STREQ("SACK cack 2 ack_off -2 sack_off 1 bm 0x0 m 0 pr 0; ACK 0x1f msn 0 psn 2", f.link.log);
	fx_fini(&f);
}

TEST(resp, resp_on_data__duplicate_below_cack_is_sacked_not_placed)
{
	struct fx f;
	struct mrcp_pkt p;
	uint64_t rb;

	fx_init(&f);
	data_pkt(&f, &p, MRCP_OP_WRITE_ONLY, 0, 0, 0, 0, 64, 64);
	rx1(&f, &p, NULL);
	drain(&f);
	ASSERT_STREQ("SACK cack 0 ack_off 0 sack_off 1 bm 0x0 m 0 pr 0; ACK 0x1f msn 0 psn 0", f.link.log);
	memset(f.buf, 0xEE, 64); /* a re-placement would overwrite this */
	rb = f.qp->rcvd_bytes;
	rx1(&f, &p, NULL);
	ASSERT_EQ(0xEE, f.buf[0]);
	ASSERT_EQ(0xEE, f.buf[63]);
	ASSERT_EQ(1, qc(&f).rx_dup);
	ASSERT_EQ(1, qc(&f).rx_data_pkts);
	ASSERT_EQ(rb + nominal_data(64, false), f.qp->rcvd_bytes); /* D19 counts duplicates */
	drain(&f);
	ASSERT_STREQ("SACK cack 0 ack_off 0 sack_off 1 bm 0x0 m 0 pr 0", f.link.log);
	fx_fini(&f);
}

TEST(resp, resp_on_data__duplicate_above_cack_with_bit_set_is_sacked_not_placed)
{
	struct fx f;
	struct mrcp_pkt p;
	uint32_t dma = 4 * MTU;

	fx_init(&f);
	data_pkt(&f, &p, MRCP_OP_WRITE_MIDDLE, 2, 0, 0, 2 * MTU, MTU, dma);
	rx1(&f, &p, NULL);
	drain(&f);
	ASSERT_EQ(1, count_op(&f, MRCP_OP_SACK)); /* end of burst */
	memset(f.buf + 2 * MTU, 0xEE, MTU);
	rx1(&f, &p, NULL);
	ASSERT_EQ(0xEE, f.buf[2 * MTU]);
	ASSERT_EQ(1, qc(&f).rx_dup);
	ASSERT_EQ(1, f.qp->ooo);
	drain(&f);
	ASSERT_STREQ("SACK cack 16777215 ack_off 3 sack_off 1 bm 0x4 m 0 pr 0", f.link.log);
	fx_fini(&f);
}

TEST(resp, resp_on_data__beyond_window_is_nacked_psn_oor)
{
	struct fx f;
	struct mrcp_pkt p;
	uint32_t rW;

	fx_init(&f);
	rW = f.qp->rW;
	ASSERT_EQ(1024, rW); /* 128 x mpr 8 */
	/* cack = -1: PSN rW is rW + 1 ahead, one too far */
	data_pkt(&f, &p, MRCP_OP_WRITE_MIDDLE, rW, 0, 0, 0, MTU, 2 * MTU);
	rx1(&f, &p, NULL);
	ASSERT_EQ(1, qc(&f).rx_oor);
	ASSERT_EQ(0, qc(&f).rx_data_pkts);
	ASSERT_EQ(0, f.buf[0]);
	drain(&f);
	ASSERT_STREQ("NACK PSN_OOR_WINDOW psn 1024", f.link.log);
	ASSERT_EQ(MRCP_QPS_RTS, mrcp_qp_state(f.e, f.qpn));
	/* the last PSN inside the window is accepted */
	data_pkt(&f, &p, MRCP_OP_WRITE_MIDDLE, rW - 1, 0, 0, (rW - 1) * MTU, MTU, (rW + 1) * MTU);
	rx1(&f, &p, NULL);
	ASSERT_EQ(1, qc(&f).rx_data_pkts);
	ASSERT_MEMEQ(f.buf + (rW - 1) * MTU, src_bytes + (rW - 1) * MTU, MTU);
	drain(&f);
	/* D27: base = trigger - 63 = 960, the trigger is bit 63 */
	ASSERT_STREQ("SACK cack 16777215 ack_off 1024 sack_off 961 bm 0x8000000000000000 m 0 pr 0", f.link.log);
	fx_fini(&f);
}

/* ---- mrcp__resp_on_data: trims (§4.6) --------------------------------------------- */

TEST(resp, resp_on_data__trimmed_is_nacked_with_echoed_ev_psn_and_timestamp)
{
	struct fx f;
	struct mrcp_pkt p;
	struct rxo o = {.ev = 0xBEEF, .ecn = MRCP_ECN_ECT0, .trim = MRCP_TRIM_FABRIC, .port = 1};
	const struct mrcp_pkt *n;

	fx_init(&f);
	data_pkt(&f, &p, MRCP_OP_WRITE_ONLY, 0, 0, 0, 0, 512, 512);
	p.tseth.tx_timestamp = 0x4321;
	rx1(&f, &p, &o);
	ASSERT_EQ(1, qc(&f).rx_trimmed);
	ASSERT_EQ(0, qc(&f).rx_data_pkts);
	ASSERT_EQ(0, f.buf[0]);
	ASSERT_EQ(CACK0, f.qp->rcv_cack);
	drain(&f);
	ASSERT_STREQ("NACK TRIMMED psn 0", f.link.log);
	n = first_op(&f, MRCP_OP_NACK);
	ASSERT_EQ(0xBEEF, n->neth.entropy);
	ASSERT_EQ(0, n->neth.nack_psn);
	ASSERT_EQ(0, n->bth.psn); /* D11 */
	ASSERT_EQ(0x4321, n->neth.tx_timestamp);
	ASSERT_EQ(f.qpn & 0xFFFF, n->neth.spdcid);
	ASSERT_EQ(PEER_QPN, n->neth.dpdcid);
	/* the last hop's trim gets its own code (D34) */
	o.trim = MRCP_TRIM_LASTHOP;
	data_pkt(&f, &p, MRCP_OP_WRITE_ONLY, 1, 1, 0, 0, 512, 512);
	rx1(&f, &p, &o);
	drain(&f);
	ASSERT_STREQ("NACK TRIMMED_LASTHOP psn 1", f.link.log);
	ASSERT_EQ(2, qc(&f).rx_trimmed);
	fx_fini(&f);
}

/* O5 (engine.c, rx_one): a switch that trims at the end of RETH takes
 * ImmDt off a *_IMM packet; its header no longer decodes as what its
 * opcode says, yet everything a NACK needs is there. Was a silent loss;
 * now NACKed like any trim. */
TEST(resp, rx_one__a_write_imm_trimmed_at_the_end_of_reth_is_nacked)
{
	struct fx f;
	struct mrcp_pkt p;
	uint8_t raw[MRCP_TX_HDR_MAX + 1024];
	struct mrcp_rx rx;
	int len;

	fx_init(&f);
	data_pkt(&f, &p, MRCP_OP_WRITE_ONLY_IMM, 0, 0, 0, 0, 512, 512);
	p.imm = 7;
	len = mrcp_pkt_encode(&p, raw, sizeof(raw));
	ASSERT_GT(len, 36);
	memset(&rx, 0, sizeof(rx));
	rx.data = raw;
	rx.len = 36; /* BTH + METH + TSETH + RETH: no ImmDt, no payload */
	rx.port = 1;
	rx.trim = MRCP_TRIM_FABRIC;
	rx.ev = 0xBEEF;
	fx_ip(&rx.src, 1, 1);
	mrcp_rx_burst(f.e, &rx, 1, f.now);
	ASSERT_EQ(1, qc(&f).rx_trimmed);
	drain(&f);
	ASSERT_STREQ("NACK TRIMMED psn 0", f.link.log);
	fx_fini(&f);
}

TEST(resp, resp_on_data__trimmed_duplicate_is_sacked)
{
	struct fx f;
	struct mrcp_pkt p;
	struct rxo o = {.ev = EV_A, .ecn = MRCP_ECN_ECT0, .trim = MRCP_TRIM_FABRIC, .port = 1};

	fx_init(&f);
	data_pkt(&f, &p, MRCP_OP_WRITE_ONLY, 0, 0, 0, 0, 64, 64);
	rx1(&f, &p, NULL);
	drain(&f);
	rx1(&f, &p, &o); /* trimmed copy of a PSN we have */
	drain(&f);
	ASSERT_STREQ("SACK cack 0 ack_off 0 sack_off 1 bm 0x0 m 0 pr 0", f.link.log);
	ASSERT_EQ(0, qc(&f).nack_tx);
	fx_fini(&f);
}

/* ---- SACK policy (D28) ------------------------------------------------------------------ */

/* Packets psn first..first+n-1, FIRST/MIDDLE of one long message msn 0. */
static void middles(struct fx *f, struct mrcp_pkt *p, uint32_t first, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		uint32_t psn = first + i;
		data_pkt(f, &p[i], psn == 0 ? MRCP_OP_WRITE_FIRST : MRCP_OP_WRITE_MIDDLE, psn, 0, 0, psn * MTU,
			 MTU, 64 * MTU);
	}
}

TEST(resp, resp_on_data__sack_every_fourth_and_at_burst_end)
{
	struct fx f;
	struct mrcp_pkt p[16];

	fx_init(&f);
	middles(&f, p, 0, 6);
	rx_burst(&f, p, NULL, 6);
	drain(&f);
	ASSERT_STREQ("SACK cack 3 ack_off 0 sack_off 1 bm 0x0 m 0 pr 0; "
		     "SACK cack 5 ack_off 0 sack_off 1 bm 0x0 m 0 pr 0", f.link.log);
	middles(&f, p, 6, 3);
	rx_burst(&f, p, NULL, 3);
	drain(&f);
	ASSERT_EQ(1, count_op(&f, MRCP_OP_SACK));
	middles(&f, p, 9, 8);
	rx_burst(&f, p, NULL, 8);
	drain(&f);
	/* 8 new: after the 4th and the 8th; nothing left for the burst end */
	ASSERT_STREQ("SACK cack 12 ack_off 0 sack_off 1 bm 0x0 m 0 pr 0; "
		     "SACK cack 16 ack_off 0 sack_off 1 bm 0x0 m 0 pr 0", f.link.log);
	ASSERT_EQ(5, qc(&f).sack_tx);
	fx_fini(&f);
}

TEST(resp, resp_on_data__ackreq_rtx_and_ce_are_sacked_at_once)
{
	struct fx f;
	struct mrcp_pkt p[4];
	struct rxo o[4] = {RX_PLAIN, RX_PLAIN, RX_PLAIN, RX_PLAIN};

	fx_init(&f);
	middles(&f, p, 0, 4);
	p[0].bth.ack_req = true;
	p[1].bth.rtx = true;
	o[2].ecn = MRCP_ECN_CE;
	/* p[3] plain: SACKed at the end of the burst */
	rx_burst(&f, p, o, 4);
	drain(&f);
	ASSERT_STREQ("SACK cack 0 ack_off 0 sack_off 1 bm 0x0 m 0 pr 0; "
		     "SACK cack 1 ack_off 0 sack_off 1 bm 0x0 m 0 pr 0; "
		     "SACK cack 2 ack_off 0 sack_off 1 bm 0x0 m 1 pr 0; "
		     "SACK cack 3 ack_off 0 sack_off 1 bm 0x0 m 0 pr 0", f.link.log);
	fx_fini(&f);
}

/* ---- SACK format (D26, D27, D18, D19) --------------------------------------------------- */

TEST(resp, send_sack__spec_example_holes_5_and_8_give_bitmap_0x76)
{
	struct fx f;
	struct mrcp_pkt all[12], p[10];
	unsigned k = 0;
	const struct mrcp_pkt *s;

	fx_init(&f);
	for (uint32_t psn = 0; psn < 12; psn++)
		data_pkt(&f, &all[psn], psn == 0 ? MRCP_OP_WRITE_FIRST : psn == 11 ? MRCP_OP_WRITE_LAST
										   : MRCP_OP_WRITE_MIDDLE,
			 psn, 0, 0, psn * MTU, MTU, 12 * MTU);
	for (uint32_t psn = 0; psn < 12; psn++)
		if (psn != 5 && psn != 8)
			p[k++] = all[psn];
	rx_burst(&f, p, NULL, k);
	drain(&f);
	/* every 4th new packet (PSNs 3 and 9), then the burst end (PSN 11) */
	ASSERT_STREQ("SACK cack 3 ack_off 0 sack_off 1 bm 0x0 m 0 pr 0; "
		     "SACK cack 4 ack_off 5 sack_off 1 bm 0x16 m 0 pr 0; "
		     "SACK cack 4 ack_off 7 sack_off 1 bm 0x76 m 0 pr 0", f.link.log);
	s = &f.link.out[2].p;
	ASSERT_EQ(4, s->bth.psn); /* D11: SACK PSN = cack */
	ASSERT_EQ(EV_A, s->seth.entropy);
	ASSERT_EQ(0x100 + 11, s->cc.tx_timestamp); /* the trigger's timestamp */
	ASSERT_EQ(5, s->cc.ooo_count);             /* D18: 6, 7, 9, 10, 11 */
	ASSERT_EQ((10 * nominal_data(MTU, false)) >> 8, s->cc.rcvd_bytes); /* D19 */
	ASSERT_EQ(f.qpn & 0xFFFF, s->seth.spdcid);
	ASSERT_EQ(PEER_QPN & 0xFFFF, s->seth.dpdcid);
	ASSERT_EQ(0, s->seth.svc_time);
	fx_fini(&f);
}

TEST(resp, send_sack__base_is_trigger_minus_63_when_cack_is_far_behind)
{
	struct fx f;
	struct mrcp_pkt p[3];

	fx_init(&f);
	/* PSN 0 missing; 1 and 70 received: base = max(70 - 63, 0) = 7 */
	data_pkt(&f, &p[0], MRCP_OP_WRITE_MIDDLE, 1, 0, 0, MTU, MTU, 128 * MTU);
	data_pkt(&f, &p[1], MRCP_OP_WRITE_MIDDLE, 70, 0, 0, 70 * MTU, MTU, 128 * MTU);
	p[1].bth.ack_req = true;
	rx_burst(&f, p, NULL, 2);
	drain(&f);
	/* the AckReq SACK also covers PSN 1: no second SACK at the burst end */
	ASSERT_STREQ("SACK cack 16777215 ack_off 71 sack_off 8 bm 0x8000000000000000 m 0 pr 0", f.link.log);
	ASSERT_EQ(2, f.qp->ooo);
	fx_fini(&f);
}

/* ---- CE verdicts (D47) ---------------------------------------------------------------- */

TEST(resp, resp_on_data__six_of_eight_ce_is_always_skip)
{
	struct fx f;
	struct mrcp_pkt p[9];
	struct rxo o[9];
	char want[1024] = "";

	fx_init(&f);
	middles(&f, p, 0, 9);
	for (int i = 0; i < 9; i++) {
		o[i] = RX_PLAIN;
		o[i].ecn = (i == 0 || i == 3) ? MRCP_ECN_ECT0 : MRCP_ECN_CE;
	}
	/* CE count after each: 0:- 1:1 2:2 3:- 4:3 5:4 6:5 7:6 of 8 8:7 of 8 */
	rx_burst(&f, p, o, 9);
	drain(&f);
	for (unsigned i = 0; i < f.link.n_out; i++) {
		char b[32];
		snprintf(b, sizeof(b), "%s%u", i ? " " : "", f.link.out[i].p.seth.m);
		strcat(want, b);
	}
	/* one SACK per CE packet; packets 0 and 3 ride on the next CE SACK */
	ASSERT_STREQ("1 1 1 1 1 2 2", want);
	fx_fini(&f);
}

/* ---- AETH and release (D11, D38, D39) -------------------------------------------------- */

TEST(resp, release__aeth_waits_for_msn_order_and_names_highest_completed)
{
	struct fx f;
	struct mrcp_pkt p[3];

	fx_init(&f);
	data_pkt(&f, &p[0], MRCP_OP_WRITE_ONLY, 0, 0, 0, 0, 8, 8);
	data_pkt(&f, &p[1], MRCP_OP_WRITE_ONLY, 1, 1, 64, 0, 8, 8);
	data_pkt(&f, &p[2], MRCP_OP_WRITE_ONLY, 2, 2, 128, 0, 8, 8);
	rx_burst(&f, &p[2], NULL, 1);
	rx_burst(&f, &p[1], NULL, 1);
	drain(&f);
	ASSERT_EQ(0, count_op(&f, MRCP_OP_ACK)); /* MSN 0 is missing */
	ASSERT_EQ(0, f.qp->rcv_msn);
	rx_burst(&f, &p[0], NULL, 1);
	drain(&f);
	ASSERT_STREQ("SACK cack 2 ack_off -2 sack_off 1 bm 0x0 m 0 pr 0; ACK 0x1f msn 2 psn 2", f.link.log);
	ASSERT_EQ(3, f.qp->rcv_msn);
	ASSERT_EQ(1, qc(&f).ack_tx);
	fx_fini(&f);
}

TEST(resp, release__write_imm_stashed_then_released_in_msn_order)
{
	struct fx f;
	struct mrcp_pkt p[4];
	struct mrcp_wc wc[4];

	fx_init(&f);
	ASSERT_EQ(0, mrcp_qp_post_recv(f.e, f.qpn, 500));
	ASSERT_EQ(0, mrcp_qp_post_recv(f.e, f.qpn, 501));
	/* msn 0: a 2-packet Write; msn 1: WriteImm 0xAA (rq_msn 0); msn 2: WriteImm 0xBB (rq_msn 1) */
	data_pkt(&f, &p[0], MRCP_OP_WRITE_FIRST, 0, 0, 0, 0, MTU, MTU + 4);
	data_pkt(&f, &p[1], MRCP_OP_WRITE_LAST, 1, 0, 0, MTU, 4, MTU + 4);
	data_pkt(&f, &p[2], MRCP_OP_WRITE_ONLY_IMM, 2, 1, 0x4000, 0, 16, 16);
	p[2].imm = 0xAA;
	p[2].meth.rq_msn = 0;
	data_pkt(&f, &p[3], MRCP_OP_WRITE_ONLY_IMM, 3, 2, 0x5000, 0, 0, 0);
	p[3].imm = 0xBB;
	p[3].meth.rq_msn = 1;
	rx_burst(&f, &p[3], NULL, 1);
	rx_burst(&f, &p[2], NULL, 1);
	ASSERT_EQ(2, f.qp->stash_imm);
	ASSERT_EQ(0, mrcp_poll_cq(f.e, wc, 4));
	ASSERT_MEMEQ(f.buf + 0x4000, src_bytes + 0x4000, 16); /* placed before release */
	rx_burst(&f, &p[1], NULL, 1);
	ASSERT_EQ(0, mrcp_poll_cq(f.e, wc, 4));
	rx_burst(&f, &p[0], NULL, 1);
	ASSERT_EQ(2, mrcp_poll_cq(f.e, wc, 4));
	ASSERT_EQ(500, wc[0].wr_id);
	ASSERT_EQ(MRCP_WC_RECV_IMM, wc[0].opcode);
	ASSERT_EQ(MRCP_WC_SUCCESS, wc[0].status);
	ASSERT_EQ(0xAA, wc[0].imm);
	ASSERT_EQ(1, wc[0].msn);
	ASSERT_EQ(16, wc[0].byte_len);
	ASSERT_EQ(501, wc[1].wr_id);
	ASSERT_EQ(0xBB, wc[1].imm);
	ASSERT_EQ(2, wc[1].msn);
	ASSERT_EQ(0, wc[1].byte_len);
	ASSERT_EQ(0, f.qp->stash_imm);
	drain(&f);
	ASSERT_EQ(1, count_op(&f, MRCP_OP_ACK));
	ASSERT_EQ(2, first_op(&f, MRCP_OP_ACK)->aeth.msn);
	ASSERT_EQ(3, first_op(&f, MRCP_OP_ACK)->bth.psn);
	fx_fini(&f);
}

TEST(resp, release__write_imm_without_a_receive_is_nak_invalid_and_error)
{
	struct fx f;
	struct mrcp_pkt p;
	struct mrcp_event ev[4];
	struct mrcp_qp_info qi;
	struct mrcp_wc wc[2];

	fx_init(&f);
	data_pkt(&f, &p, MRCP_OP_WRITE_ONLY_IMM, 0, 0, 0, 0, 8, 8);
	p.imm = 7;
	rx1(&f, &p, NULL);
	ASSERT_EQ(MRCP_QPS_ERROR, mrcp_qp_state(f.e, f.qpn));
	drain(&f);
	ASSERT_STREQ("ACK 0x61 msn 65535 psn 16777215", f.link.log);
	/* D70: no work request to fail, so the event is what says it: the
	 * cause and the message that found no receive */
	ASSERT_EQ(0, mrcp_poll_cq(f.e, wc, 2));
	ASSERT_EQ(1, mrcp_poll_events(f.e, ev, 4));
	ASSERT_EQ(MRCP_EVENT_QP_ERROR, ev[0].type);
	ASSERT_EQ(f.qpn, ev[0].qpn);
	ASSERT_EQ(MRCP_WC_REM_INV_REQ_ERR, ev[0].qp_error.status);
	ASSERT_EQ(MRCP_QP_ERR_NO_RECV, ev[0].qp_error.cause);
	ASSERT_EQ(0, ev[0].qp_error.msn);
	ASSERT_EQ(7, ev[0].qp_error.imm);
	ASSERT_EQ(8, ev[0].qp_error.byte_len);
	ASSERT_EQ(0, mrcp_qp_info(f.e, f.qpn, &qi));
	ASSERT_EQ(MRCP_QP_ERR_NO_RECV, qi.err.cause);
	ASSERT_EQ(7, qi.err.imm);
	/* a receive posted afterwards is refused: the QP is a sink */
	ASSERT_EQ(-EPERM, mrcp_qp_post_recv(f.e, f.qpn, 9));
	fx_fini(&f);
}

TEST(resp, release__a_receive_posted_before_release_saves_the_stashed_write_imm)
{
	struct fx f;
	struct mrcp_pkt p[2];
	struct mrcp_wc wc[2];

	fx_init(&f);
	/* MSN 1 (WriteImm) completes first and waits for MSN 0; the receive
	 * it takes only has to be there when MSN 0 releases it (§4.8) */
	data_pkt(&f, &p[0], MRCP_OP_WRITE_ONLY, 0, 0, 0, 0, 8, 8);
	data_pkt(&f, &p[1], MRCP_OP_WRITE_ONLY_IMM, 1, 1, 64, 0, 8, 8);
	p[1].imm = 0x77;
	rx1(&f, &p[1], NULL);
	ASSERT_EQ(MRCP_QPS_RTS, mrcp_qp_state(f.e, f.qpn));
	ASSERT_EQ(0, mrcp_qp_post_recv(f.e, f.qpn, 42));
	rx1(&f, &p[0], NULL);
	ASSERT_EQ(MRCP_QPS_RTS, mrcp_qp_state(f.e, f.qpn));
	ASSERT_EQ(1, mrcp_poll_cq(f.e, wc, 2));
	ASSERT_EQ(42, wc[0].wr_id);
	ASSERT_EQ(0x77, wc[0].imm);
	fx_fini(&f);
}

/* ---- protocol violations (§4.2 step 4) --------------------------------------------------- */

static void expect_fatal(struct fx *f, const struct mrcp_pkt *p, const char *log, uint8_t status)
{
	struct mrcp_event ev[4];
	uint64_t placed = qc(f).rx_data_pkts;

	rx1(f, p, NULL);
	ASSERT_EQ(MRCP_QPS_ERROR, mrcp_qp_state(f->e, f->qpn));
	ASSERT_EQ(placed, qc(f).rx_data_pkts);
	drain(f);
	ASSERT_STREQ(log, f->link.log);
	ASSERT_EQ(1, mrcp_poll_events(f->e, ev, 4));
	ASSERT_EQ(status, ev[0].qp_error.status);
	/* D70: the cause is the responder's own finding */
	ASSERT_EQ(status == MRCP_WC_REM_ACCESS_ERR ? MRCP_QP_ERR_BAD_ACCESS : MRCP_QP_ERR_BAD_REQUEST,
		  ev[0].qp_error.cause);
	/* nothing more is accepted */
	rx1(f, p, NULL);
	ASSERT_EQ(1, ec(f).rx_bad_state);
}

TEST(resp, resp_on_data__bad_rkey_is_nak_remote_access)
{
	struct fx f;
	struct mrcp_pkt p;

	fx_init(&f);
	data_pkt(&f, &p, MRCP_OP_WRITE_ONLY, 0, 0, 0, 0, 8, 8);
	p.reth.rkey ^= 0x100;
	expect_fatal(&f, &p, "ACK 0x62 msn 65535 psn 16777215", MRCP_WC_REM_ACCESS_ERR);
	ASSERT_EQ(0, f.buf[0]);
	fx_fini(&f);
}

TEST(resp, resp_on_data__va_beyond_region_is_nak_remote_access)
{
	struct fx f;
	struct mrcp_pkt p;

	fx_init(&f);
	data_pkt(&f, &p, MRCP_OP_WRITE_ONLY, 0, 0, BUF_LEN - 8, 0, 12, 12);
	p.payload = src_bytes;
	expect_fatal(&f, &p, "ACK 0x62 msn 65535 psn 16777215", MRCP_WC_REM_ACCESS_ERR);
	fx_fini(&f);
}

TEST(resp, resp_on_data__region_without_remote_write_is_nak_remote_access)
{
	struct fx f;
	struct mrcp_pkt p;
	static uint8_t ro[256];
	uint32_t lk, rk;

	fx_init(&f);
	ASSERT_EQ(0, mrcp_mr_reg(f.e, 0x20000000ull, sizeof(ro), ro, MRCP_ACCESS_LOCAL_WRITE, &lk, &rk));
	data_pkt(&f, &p, MRCP_OP_WRITE_ONLY, 0, 0, 0, 0, 8, 8);
	p.reth.va = 0x20000000ull;
	p.reth.rkey = rk;
	expect_fatal(&f, &p, "ACK 0x62 msn 65535 psn 16777215", MRCP_WC_REM_ACCESS_ERR);
	ASSERT_EQ(0, ro[0]);
	fx_fini(&f);
}

TEST(resp, resp_on_data__region_of_another_pd_is_nak_remote_access)
{
	struct fx f;
	struct mrcp_pkt p;
	static uint8_t other[256];
	uint32_t pd, lk, rk;

	fx_init(&f);
	/* remote-write access, the exact key and VA: but not the QP's PD (D67) */
	ASSERT_EQ(0, mrcp_pd_alloc(f.e, &pd));
	ASSERT_EQ(0, mrcp_mr_reg_pd(f.e, pd, 0x20000000ull, sizeof(other), other,
				    MRCP_ACCESS_LOCAL_WRITE | MRCP_ACCESS_REMOTE_WRITE, &lk, &rk));
	data_pkt(&f, &p, MRCP_OP_WRITE_ONLY, 0, 0, 0, 0, 8, 8);
	p.reth.va = 0x20000000ull;
	p.reth.rkey = rk;
	expect_fatal(&f, &p, "ACK 0x62 msn 65535 psn 16777215", MRCP_WC_REM_ACCESS_ERR);
	for (unsigned i = 0; i < sizeof(other); i++)
		ASSERT_EQ(0, other[i]);
	fx_fini(&f);
}

TEST(resp, resp_on_data__qp_of_a_pd_writes_that_pds_region)
{
	struct fx f;
	struct mrcp_pkt p;
	struct mrcp_conn_info ci;
	static uint8_t mine[256];
	uint32_t pd, lk, rk, qpn;
	struct mrcp_qp_attr a = {0};

	fx_init(&f);
	ASSERT_EQ(0, mrcp_pd_alloc(f.e, &pd));
	ASSERT_EQ(0, mrcp_mr_reg_pd(f.e, pd, 0x20000000ull, sizeof(mine), mine, MRCP_ACCESS_REMOTE_WRITE, &lk, &rk));
	a.pd = pd;
	ASSERT_EQ(0, mrcp_qp_create(f.e, &a, &qpn));
	fx_peer_info(&ci, PEER_QPN + 1, MTU);
	ASSERT_EQ(0, mrcp_qp_connect(f.e, qpn, &ci, f.now));
	/* the fixture's QP (default PD) cannot, this one can */
	data_pkt(&f, &p, MRCP_OP_WRITE_ONLY, 0, 0, 0, 0, 8, 8);
	p.bth.dest_qp = qpn;
	p.reth.va = 0x20000000ull + 16;
	p.reth.rkey = rk;
	rx1(&f, &p, NULL);
	ASSERT_EQ(MRCP_QPS_RTS, mrcp_qp_state(f.e, qpn));
	ASSERT_MEMEQ(mine + 16, src_bytes, 8);
	ASSERT_EQ(0, mine[15]);
	ASSERT_EQ(0, mine[24]);
	/* and the fixture's own region is not this QP's either */
	data_pkt(&f, &p, MRCP_OP_WRITE_ONLY, 1, 1, 0, 0, 8, 8);
	p.bth.dest_qp = qpn;
	rx1(&f, &p, NULL);
	ASSERT_EQ(MRCP_QPS_ERROR, mrcp_qp_state(f.e, qpn));
	ASSERT_EQ(0, f.buf[0]);
	fx_fini(&f);
}

TEST(resp, resp_on_data__deregistered_key_is_nak_remote_access)
{
	struct fx f;
	struct mrcp_pkt p;

	fx_init(&f);
	ASSERT_EQ(0, mrcp_mr_dereg(f.e, f.lkey));
	data_pkt(&f, &p, MRCP_OP_WRITE_ONLY, 0, 0, 0, 0, 8, 8);
	expect_fatal(&f, &p, "ACK 0x62 msn 65535 psn 16777215", MRCP_WC_REM_ACCESS_ERR);
	ASSERT_EQ(0, f.buf[0]);
	fx_fini(&f);
}

TEST(resp, resp_on_data__first_shorter_than_mtu_is_nak_invalid_request)
{
	struct fx f;
	struct mrcp_pkt p;

	fx_init(&f);
	data_pkt(&f, &p, MRCP_OP_WRITE_FIRST, 0, 0, 0, 0, MTU - 4, 2 * MTU);
	expect_fatal(&f, &p, "ACK 0x61 msn 65535 psn 16777215", MRCP_WC_REM_INV_REQ_ERR);
	fx_fini(&f);
}

TEST(resp, resp_on_data__middle_shorter_than_mtu_is_nak_invalid_request)
{
	struct fx f;
	struct mrcp_pkt p;

	fx_init(&f);
	data_pkt(&f, &p, MRCP_OP_WRITE_MIDDLE, 1, 0, 0, MTU, 100, 3 * MTU);
	expect_fatal(&f, &p, "ACK 0x61 msn 65535 psn 16777215", MRCP_WC_REM_INV_REQ_ERR);
	fx_fini(&f);
}

TEST(resp, resp_on_data__payload_longer_than_dma_len_is_nak_invalid_request)
{
	struct fx f;
	struct mrcp_pkt p;

	fx_init(&f);
	data_pkt(&f, &p, MRCP_OP_WRITE_ONLY, 0, 0, 0, 0, 16, 8);
	expect_fatal(&f, &p, "ACK 0x61 msn 65535 psn 16777215", MRCP_WC_REM_INV_REQ_ERR);
	fx_fini(&f);
}

/* ---- probes (§4.7, D37) ---------------------------------------------------------------- */

TEST(resp, resp_on_probe__sack_pr_offset_zero_echoes_ev_and_ts_then_aeth)
{
	struct fx f;
	struct mrcp_pkt p[2], pr;
	struct rxo o = {.ev = 0x7777, .ecn = MRCP_ECN_ECT0, .port = 1};
	const struct mrcp_pkt *s;

	fx_init(&f);
	data_pkt(&f, &p[0], MRCP_OP_WRITE_ONLY, 0, 0, 0, 0, 8, 8);
	data_pkt(&f, &p[1], MRCP_OP_WRITE_ONLY, 2, 2, 0, 0, 8, 8);
	rx_burst(&f, p, NULL, 2);
	drain(&f);
	ASSERT_EQ(0, mrcp_pkt_init(&pr, MRCP_OP_PROBE, f.qpn, 2));
	pr.peth.probe_id = 9;
	pr.peth.spdcid = (uint16_t)PEER_QPN; /* D15: the peer names its QP (D69) */
	pr.peth.tx_timestamp = 0x2468;
	pr.peth.ftype = MRCP_TSETH_FTYPE;
	rx1(&f, &pr, &o);
	drain(&f);
	ASSERT_STREQ("SACK cack 0 ack_off 0 sack_off 1 bm 0x2 m 0 pr 1; ACK 0x1f msn 0 psn 0", f.link.log);
	s = first_op(&f, MRCP_OP_SACK);
	ASSERT_EQ(0x7777, s->seth.entropy);
	ASSERT_EQ(0x2468, s->cc.tx_timestamp);
	ASSERT_EQ(1, qc(&f).probe_rx);
	fx_fini(&f);
}

/* D73: a QP destroyed while connected repeats its last AETH (on every plane
 * up at both ends: one here), so a requester whose AETH was lost still
 * completes; one that never received data says nothing. */
TEST(resp, qp_destroy__repeats_the_last_aeth)
{
	struct fx f;
	struct mrcp_pkt p[2];

	fx_init(&f);
	data_pkt(&f, &p[0], MRCP_OP_WRITE_ONLY, 0, 0, 0, 0, 8, 8);
	data_pkt(&f, &p[1], MRCP_OP_WRITE_ONLY, 1, 1, 0, 0, 8, 8);
	rx_burst(&f, p, NULL, 2);
	drain(&f); /* the burst's SACK and AETH: say they were lost */
	ASSERT_EQ(0, mrcp_qp_destroy(f.e, f.qpn, f.now));
	f.qp = NULL;
	drain(&f);
	ASSERT_STREQ("ACK 0x1f msn 1 psn 1", f.link.log);
	fx_fini(&f);
}

TEST(resp, qp_destroy__nothing_received_nothing_said)
{
	struct fx f;

	fx_init(&f);
	ASSERT_EQ(0, mrcp_qp_destroy(f.e, f.qpn, f.now));
	ASSERT_EQ(0, drain(&f));
	fx_fini(&f);
}

/* ---- dispatch (engine.c, for the responder's packets) ---------------------------------- */

TEST(resp, rx_one__unknown_qpn_is_counted_and_dropped)
{
	struct fx f;
	struct mrcp_pkt p;

	fx_init(&f);
	data_pkt(&f, &p, MRCP_OP_WRITE_ONLY, 0, 0, 0, 0, 8, 8);
	p.bth.dest_qp = f.qpn + 4; /* another slot, not in use */
	rx1(&f, &p, NULL);
	ASSERT_EQ(1, ec(&f).rx_unknown_qp);
	ASSERT_EQ(0, f.buf[0]);
	ASSERT_EQ(0, drain(&f));
	fx_fini(&f);
}

TEST(resp, rx_one__control_opcodes_in_the_wrong_direction_are_dropped)
{
	struct fx f;
	struct mrcp_pkt p;

	fx_init(&f);
	/* an endpoint request addressed to a QP */
	ASSERT_EQ(0, mrcp_pkt_init(&p, MRCP_OP_EP_REQUEST, f.qpn, 1));
	p.erth.ftype = MRCP_TSETH_FTYPE;
	rx1(&f, &p, NULL);
	ASSERT_EQ(1, ec(&f).rx_bad_opcode);
	/* a Write addressed to the endpoint QPN */
	data_pkt(&f, &p, MRCP_OP_WRITE_ONLY, 0, 0, 0, 0, 8, 8);
	p.bth.dest_qp = MRCP_QPN_ENDPOINT;
	rx1(&f, &p, NULL);
	ASSERT_EQ(2, ec(&f).rx_bad_opcode);
	ASSERT_EQ(0, f.buf[0]);
	ASSERT_EQ(0, drain(&f));
	fx_fini(&f);
}

/* ---- more of mrcp__resp_on_data ---------------------------------------------------- */

TEST(resp, resp_on_data__new_psn_for_an_already_released_msn_is_nak_invalid)
{
	struct fx f;
	struct mrcp_pkt p;

	fx_init(&f);
	data_pkt(&f, &p, MRCP_OP_WRITE_ONLY, 0, 0, 0, 0, 8, 8);
	rx1(&f, &p, NULL);
	drain(&f);
	ASSERT_EQ(1, f.qp->rcv_msn);
	data_pkt(&f, &p, MRCP_OP_WRITE_ONLY, 1, 0, 0, 0, 8, 8); /* MSN 0 again */
	expect_fatal(&f, &p, "ACK 0x61 msn 0 psn 0", MRCP_WC_REM_INV_REQ_ERR);
	fx_fini(&f);
}

TEST(resp, resp_on_data__more_stashed_write_imms_than_offered_is_nak_invalid)
{
	struct fx f;
	struct mrcp_qp_attr a = {.max_wimm = 1};
	struct mrcp_pkt p[2];
	struct mrcp_conn_info mine;

	fx_init_with(&f, &a);
	ASSERT_EQ(0, mrcp_qp_local_info(f.e, f.qpn, &mine));
	ASSERT_EQ(1, mine.max_wimm_dest);
	ASSERT_EQ(0, mrcp_qp_post_recv(f.e, f.qpn, 1));
	ASSERT_EQ(0, mrcp_qp_post_recv(f.e, f.qpn, 2));
	/* MSN 0 is missing; MSNs 1 and 2 are complete WriteImms */
	data_pkt(&f, &p[0], MRCP_OP_WRITE_ONLY_IMM, 1, 1, 0, 0, 8, 8);
	data_pkt(&f, &p[1], MRCP_OP_WRITE_ONLY_IMM, 2, 2, 64, 0, 8, 8);
	rx1(&f, &p[0], NULL);
	ASSERT_EQ(MRCP_QPS_RTS, mrcp_qp_state(f.e, f.qpn));
	drain(&f);
	rx1(&f, &p[1], NULL);
	ASSERT_EQ(MRCP_QPS_ERROR, mrcp_qp_state(f.e, f.qpn));
	drain(&f);
	ASSERT_STREQ("ACK 0x61 msn 65535 psn 16777215", f.link.log);
	{
		struct mrcp_qp_info qi;

		ASSERT_EQ(0, mrcp_qp_info(f.e, f.qpn, &qi));
		ASSERT_EQ(MRCP_QP_ERR_WIMM_OVERFLOW, qi.err.cause);
		ASSERT_EQ(2, qi.err.msn);
	}
	fx_fini(&f);
}

TEST(resp, resp_on_data__rc_mode_drops_out_of_order_silently)
{
	struct fx f;
	struct mrcp_qp_attr a = {.mode = MRCP_MODE_RC};
	struct mrcp_pkt p[2];

	fx_init_with(&f, &a);
	data_pkt(&f, &p[0], MRCP_OP_WRITE_FIRST, 0, 0, 0, 0, MTU, 2 * MTU);
	data_pkt(&f, &p[1], MRCP_OP_WRITE_LAST, 1, 0, 0, MTU, MTU, 2 * MTU);
	rx1(&f, &p[1], NULL); /* go-back-N: only the next PSN is taken */
	ASSERT_EQ(1, qc(&f).rx_oor);
	ASSERT_EQ(0, f.buf[MTU]);
	ASSERT_EQ(0, drain(&f));
	rx_burst(&f, p, NULL, 2);
	ASSERT_EQ(1, f.qp->rcv_cack);
	drain(&f);
	ASSERT_STREQ("SACK cack 1 ack_off 0 sack_off 1 bm 0x0 m 0 pr 0; ACK 0x1f msn 0 psn 1", f.link.log);
	fx_fini(&f);
}

TEST(resp, send_sack__backlog_penalty_and_release_flag)
{
	struct fx f;
	struct mrcp_pkt p[4];
	const struct mrcp_pkt *s;

	fx_init(&f);
	middles(&f, p, 0, 4);
	mrcp_qp_set_backlog(f.e, f.qpn, 75); /* D55: (75 - 50) x 127 / 50 */
	rx1(&f, &p[0], NULL);
	drain(&f);
	s = first_op(&f, MRCP_OP_SACK);
	ASSERT_EQ(63, s->cc.rcv_cwnd_pen);
	ASSERT_FALSE(s->cc.r_c);
	mrcp_qp_set_backlog(f.e, f.qpn, 200); /* clamped to 100 % */
	rx1(&f, &p[1], NULL);
	drain(&f);
	ASSERT_EQ(127, first_op(&f, MRCP_OP_SACK)->cc.rcv_cwnd_pen);
	mrcp_qp_set_backlog(f.e, f.qpn, 50);
	rx1(&f, &p[2], NULL);
	drain(&f);
	s = first_op(&f, MRCP_OP_SACK);
	ASSERT_EQ(0, s->cc.rcv_cwnd_pen);
	ASSERT_TRUE(s->cc.r_c); /* the penalty was just lifted */
	rx1(&f, &p[3], NULL);
	drain(&f);
	ASSERT_FALSE(first_op(&f, MRCP_OP_SACK)->cc.r_c);
	fx_fini(&f);
}
