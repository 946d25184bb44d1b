/* test_req.c - white-box tests of the requester (lib/core/req.c, req_tx.c,
 * req_timer.c): segmentation, scatter lists, the PSN window, SACK
 * processing, loss inference (D29), NACK handling (§3.7, D35, §4.6),
 * completions from AETH only (D38) and the tail-loss probe (D36).
 *
 * One engine; the test plays the responder: it takes the data packets from
 * mrcp_poll, decodes them into a text log and answers with hand-made SACK,
 * NACK and ACK packets through mrcp_rx_burst. The clock is a plain variable.
 * The QP's first PSN is fixed at 0. */
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
#define REMOTE_VA 0x50000000ull
#define REMOTE_RKEY 0x4242u
#define MTU 1024u
#define MAX_OUT 256
#define T0 1048576ull /* a multiple of the 128 ns timestamp unit */
#define D65_HI 12000ull /* rtt_hi before any RTT sample: the base RTT (D65) */

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

typedef void (*tweak_fn)(struct mrcp_engine_config *c, struct mrcp_qp_attr *a, struct mrcp_conn_info *ci);

static void fx_init_with(struct fx *f, tweak_fn tweak)
{
	struct mrcp_engine_config c;
	struct mrcp_conn_info ci;
	struct mrcp_qp_attr a;

	memset(f, 0, sizeof(*f));
	fake_link_init(&f->link, MAX_OUT);
	f->link.va_base = REMOTE_VA;
	mrcp_engine_config_defaults(&c);
	c.seed = 11;
	c.n_ports = 1;
	fx_ip(&c.node_addr, 0, 0);
	fx_ip(&c.port_addr[0], 0, 1);
	c.mtu = MTU;
	c.ev.n_active = 8;
	c.ev.n_backup = 4;
	memset(&a, 0, sizeof(a));
	a.fixed_init_psn = true;
	a.init_psn = 0;
	a.user_ctx = 99;
	fx_peer_info(&ci, PEER_QPN, MTU);
	if (tweak)
		tweak(&c, &a, &ci);
	ASSERT_EQ(0, mrcp_engine_create(&c, &f->e));
	f->buf = calloc(1, BUF_LEN);
	for (uint32_t i = 0; i < BUF_LEN; i++)
		f->buf[i] = (uint8_t)(i * 13 + (i >> 10) + 5);
	ASSERT_EQ(0, mrcp_mr_reg(f->e, BUF_VA, BUF_LEN, f->buf, MRCP_ACCESS_LOCAL_WRITE, &f->lkey, &f->rkey));
	ASSERT_EQ(0, mrcp_qp_create(f->e, &a, &f->qpn));
	f->now = T0;
	ASSERT_EQ(0, mrcp_qp_connect(f->e, f->qpn, &ci, f->now));
	f->qp = mrcp__qp_lookup(f->e, f->qpn);
	ASSERT_TRUE(f->qp != NULL);
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

/* Post a Write (or WriteImm) of @len bytes from local offset @off to
 * REMOTE_VA + @off. */
static int post(struct fx *f, uint64_t wr_id, uint8_t opcode, uint32_t off, uint32_t len, uint32_t imm)
{
	struct mrcp_sge sge = {.addr = BUF_VA + off, .len = len, .lkey = f->lkey};
	struct mrcp_send_wr wr = {
		.wr_id = wr_id,
		.opcode = opcode,
		.flags = MRCP_WR_SIGNALED,
		.imm = imm,
		.sg_list = &sge,
		.num_sge = len ? 1 : 0,
		.remote_addr = REMOTE_VA + off,
		.rkey = REMOTE_RKEY,
	};
	return mrcp_qp_post_send(f->e, f->qpn, &wr, f->now);
}

/* Take everything the engine has to send now into f->link (packets and
 * log); every packet is for the peer QP. */
static unsigned drain(struct fx *f)
{
	unsigned n = fake_link_drain(&f->link, f->e, f->now);

	for (unsigned i = 0; i < n; i++)
		ASSERT_EQ(PEER_QPN, f->link.out[i].p.bth.dest_qp);
	return n;
}

/* Move the clock to @t as a host that runs the engine at its deadlines
 * would: every timer that falls due more than a stall's worth (4 base
 * RTTs) before @t fires on time (what it sends is dropped), so the jump is
 * not a stall of the engine (D65); the rest is for the caller's drain at
 * @t. */
static void advance(struct fx *f, uint64_t t)
{
	struct mrcp_tx tx[64];
	uint64_t d;

	for (unsigned i = 0; i < 100000; i++) {
		unsigned n;

		d = mrcp_next_deadline(f->e);
		if (d == UINT64_MAX || !mrcp_time_lt(d + 4 * D65_HI, t))
			break;
		if (mrcp_time_lt(f->now, d))
			f->now = d;
		n = mrcp_poll(f->e, f->now, tx, 64);
		if (n == 0 && !mrcp_time_lt(f->now, mrcp_next_deadline(f->e)))
			f->now += 1024; /* work it cannot do now: a tick later */
	}
	f->now = t;
}

static void rx_pkt(struct fx *f, const struct mrcp_pkt *p)
{
	uint8_t raw[256];
	struct mrcp_rx rx;
	int len = mrcp_pkt_encode(p, raw, sizeof(raw));

	ASSERT_GT(len, 0);
	memset(&rx, 0, sizeof(rx));
	rx.data = raw;
	rx.len = (uint32_t)len;
	rx.port = 1;
	rx.ev = 0x1234;
	fx_ip(&rx.src, 1, 1);
	mrcp_rx_burst(f->e, &rx, 1, f->now);
}

/* A SACK echoing timestamp @ts (D13 units), with an RTT sample if @sample. */
static void sack_echo(struct fx *f, uint32_t cack, int16_t sack_off, uint64_t bm, uint32_t ev, uint16_t ts,
		      bool sample, uint8_t m, bool pr)
{
	struct mrcp_pkt p;

	ASSERT_EQ(0, mrcp_pkt_init(&p, MRCP_OP_SACK, f->qpn, cack));
	p.seth.spdcid = (uint16_t)PEER_QPN; /* D15: the peer names its QP (D69) */
	p.seth.cack_psn = cack;
	p.seth.sack_offset = sack_off;
	p.seth.sack_bitmap = bm;
	p.seth.entropy = ev;
	p.seth.m = m;
	p.seth.pr = pr;
	p.seth.svc_time = sample ? 0 : 255;
	p.cc.tx_timestamp = ts;
	rx_pkt(f, &p);
}

/* A SACK as the responder sends it, with verdict @m and probe flag @pr. */
static void sack_full(struct fx *f, uint32_t cack, int16_t sack_off, uint64_t bm, uint32_t ev, uint64_t ts_ns,
		      uint8_t m, bool pr)
{
	sack_echo(f, cack, sack_off, bm, ev, (uint16_t)(ts_ns >> 7), ts_ns != 0, m, pr);
}

/* The timestamp of the last probe the engine sent (drained into the link). */
static uint16_t probe_ts(const struct fx *f)
{
	for (unsigned i = f->link.n_out; i-- > 0;)
		if (f->link.out[i].p.bth.opcode == MRCP_OP_PROBE)
			return f->link.out[i].p.peth.tx_timestamp;
	ASSERT_TRUE(!"no probe in the link");
	return 0;
}

/* The responder's answer to the last probe sent (pr = 1, its timestamp
 * echoed, D37), showing @cack and @bm. */
static void answer(struct fx *f, uint32_t cack, int16_t sack_off, uint64_t bm, uint32_t ev)
{
	sack_echo(f, cack, sack_off, bm, ev, probe_ts(f), false, MRCP_VERDICT_NONE, true);
}

/* A plain SACK; no RTT sample unless @ts_ns != 0. */
static void sack(struct fx *f, uint32_t cack, int16_t sack_off, uint64_t bm, uint32_t ev, uint64_t ts_ns)
{
	sack_full(f, cack, sack_off, bm, ev, ts_ns, MRCP_VERDICT_NONE, false);
}

static void nack(struct fx *f, uint8_t code, uint32_t psn, uint32_t ev)
{
	struct mrcp_pkt p;

	ASSERT_EQ(0, mrcp_pkt_init(&p, MRCP_OP_NACK, f->qpn, psn));
	p.neth.spdcid = (uint16_t)PEER_QPN;
	p.neth.nack_code = code;
	p.neth.nack_psn = psn;
	p.neth.entropy = ev;
	rx_pkt(f, &p);
}

static void aeth(struct fx *f, uint8_t syndrome, uint16_t msn)
{
	struct mrcp_pkt p;

	ASSERT_EQ(0, mrcp_pkt_init(&p, MRCP_OP_ACK, f->qpn, 0));
	p.aeth.syndrome = syndrome;
	p.aeth.msn = msn;
	rx_pkt(f, &p);
}

/* Data packets among the last drain, and their log ("; "-joined). */
static unsigned n_data(const struct fx *f, char *dlog, size_t cap)
{
	unsigned k = 0;

	dlog[0] = '\0';
	for (unsigned i = 0; i < f->link.n_out; i++)
		if (mrcp_opcode_is_data(f->link.out[i].p.bth.opcode)) {
			fake_link_format(dlog, cap, &f->link.out[i].p, REMOTE_VA);
			k++;
		}
	return k;
}

static int ev_index(const struct fx *f, uint32_t value)
{
	const struct mrcp_ev_set *s = mrcp_qp_evs(f->e, f->qpn);

	for (int i = 0; i < s->n_evs; i++)
		if (s->evs[i].value == value)
			return i;
	return -1;
}

static uint8_t ev_state(const struct fx *f, uint32_t value)
{
	int i = ev_index(f, value);

	ASSERT_GE(i, 0);
	return mrcp_qp_evs(f->e, f->qpn)->evs[i].state;
}

static struct mrcp_qp_counters qc(const struct fx *f)
{
	return f->qp->c;
}

static const struct sb_entry *sb(const struct fx *f, uint32_t psn)
{
	return &f->qp->sb[psn & f->qp->sb_mask];
}

/* D65 with no RTT sample yet and in the QP's first SACKs: rtt_hi is the
 * base RTT (12 us), reo_wnd a quarter of target_qdelay (the base RTT
 * without trimming: 3 us), a packet may be 2 x 1.5 x rtt_hi late. */
static uint64_t d65_reo(const struct fx *f)
{
	return f->qp->target_qdelay_ns / 4;
}

/* How long after its send an unacknowledged packet's verdict falls due,
 * and how much later a SACKed send makes it lost at once. */
static uint64_t d65_late(const struct fx *f)
{
	return 3 * D65_HI + d65_reo(f);
}

/* PSN 0 at T0 and PSN 1 @gap later, one packet each. @return PSN 0's EV. */
static uint32_t two_sends(struct fx *f, uint64_t gap)
{
	uint32_t ev0;

	ASSERT_EQ(0, post(f, 1, MRCP_WR_WRITE, 0, 64, 0));
	ASSERT_EQ(1, drain(f));
	ev0 = f->link.out[0].tx.ev;
	f->now = T0 + gap;
	ASSERT_EQ(0, post(f, 2, MRCP_WR_WRITE, 0x1000, 64, 0));
	ASSERT_GE(drain(f), 1); /* and a tail-loss probe if the gap was long */
	return ev0;
}

/* PSN 1 more than 2 x 1.5 x rtt_hi + reo_wnd after PSN 0 (D65): a SACK of
 * PSN 1 makes PSN 0 lost at once. */
static uint32_t two_sends_far_apart(struct fx *f)
{
	return two_sends(f, d65_late(f) + 1024);
}

/* D65: every EV has had something acknowledged (off probation). */
static void prove_all(struct fx *f)
{
	struct mrcp_ev_set *s = &f->qp->evs;

	for (unsigned i = 0; i < s->n_evs; i++)
		mrcp_ev_proven(s, (int)i);
}

/* A linear phase of no rounds: RTO expiries are RTO rounds at once, not
 * silent rounds (D65), for the tests of the rounds themselves. */
static void no_silence(struct mrcp_engine_config *c, struct mrcp_qp_attr *a, struct mrcp_conn_info *ci)
{
	(void)a;
	(void)ci;
	c->linear_cnt = 0;
}

/* ---- mrcp__req_tx: segmentation ---------------------------------------------- */

TEST(req, req_tx__segments_first_middle_last_with_headers)
{
	struct fx f;

	fx_init(&f);
	ASSERT_EQ(0, post(&f, 1, MRCP_WR_WRITE, 0, 2 * MTU + 512, 0));
	ASSERT_EQ(3, drain(&f));
	ASSERT_STREQ("WRITE_FIRST psn 0 msn 0 va+0 len 1024; "
		     "WRITE_MIDDLE psn 1 msn 0 va+1024 len 1024; "
		     "WRITE_LAST psn 2 msn 0 va+2048 len 512 ackreq", f.link.log);
	for (unsigned i = 0; i < 3; i++) {
		const struct fake_link_pkt *o = &f.link.out[i];
		ASSERT_EQ(2 * MTU + 512, o->p.reth.dma_len);
		ASSERT_EQ(REMOTE_RKEY, o->p.reth.rkey);
		ASSERT_EQ(0, o->p.meth.rq_msn);
		ASSERT_TRUE(o->p.hdrs & MRCP_HDR_TSETH);
		ASSERT_EQ((uint16_t)(T0 >> 7), o->p.tseth.tx_timestamp); /* D13 */
		ASSERT_FALSE(o->p.hdrs & MRCP_HDR_IMM);
		ASSERT_EQ(10, o->tx.dscp);                /* TRIMMABLE (D23) */
		ASSERT_EQ(MRCP_ECN_ECT0, o->tx.ecn);      /* D9 */
		ASSERT_EQ(1, o->tx.port);
		ASSERT_FALSE(o->tx.rtx);
		ASSERT_EQ(i, o->tx.psn);
		ASSERT_MEMEQ(o->p.payload, f.buf + i * MTU, o->p.payload_len);
	}
	ASSERT_EQ(3, qc(&f).tx_data_pkts);
	ASSERT_EQ(2 * MTU + 512, qc(&f).tx_data_bytes);
	fx_fini(&f);
}

TEST(req, req_tx__write_imm_carries_imm_on_last_only_and_counts_rq_msn)
{
	struct fx f;

	fx_init(&f);
	ASSERT_EQ(0, post(&f, 1, MRCP_WR_WRITE_IMM, 0, 100, 0xAABBCCDD));
	ASSERT_EQ(0, post(&f, 2, MRCP_WR_WRITE, 0x1000, 0, 0));
	ASSERT_EQ(0, post(&f, 3, MRCP_WR_WRITE_IMM, 0x2000, 2 * MTU + 1, 0x11223344));
	ASSERT_EQ(5, drain(&f));
	ASSERT_STREQ("WRITE_ONLY_IMM psn 0 msn 0 va+0 len 100 ackreq; "
		     "WRITE_ONLY psn 1 msn 1 va+4096 len 0 ackreq; "
		     "WRITE_FIRST psn 2 msn 2 va+8192 len 1024; "
		     "WRITE_MIDDLE psn 3 msn 2 va+9216 len 1024; "
		     "WRITE_LAST_IMM psn 4 msn 2 va+10240 len 1 ackreq", f.link.log);
	ASSERT_EQ(0xAABBCCDD, f.link.out[0].p.imm);
	ASSERT_TRUE(f.link.out[0].p.hdrs & MRCP_HDR_IMM);
	ASSERT_EQ(0, f.link.out[0].p.meth.rq_msn); /* D12: WriteImms issued before it */
	ASSERT_EQ(1, f.link.out[1].p.meth.rq_msn);
	ASSERT_EQ(0, f.link.out[1].p.reth.dma_len);
	ASSERT_FALSE(f.link.out[2].p.hdrs & MRCP_HDR_IMM);
	ASSERT_FALSE(f.link.out[3].p.hdrs & MRCP_HDR_IMM);
	ASSERT_TRUE(f.link.out[4].p.hdrs & MRCP_HDR_IMM);
	ASSERT_EQ(0x11223344, f.link.out[4].p.imm);
	ASSERT_EQ(1, f.link.out[4].p.meth.rq_msn);
	ASSERT_EQ(2 * MTU + 1, f.link.out[4].p.reth.dma_len);
	ASSERT_EQ(3, f.link.out[4].tx.pad);
	ASSERT_MEMEQ(f.link.out[4].p.payload, f.buf + 0x2000 + 2 * MTU, 1);
	fx_fini(&f);
}

TEST(req, req_tx__scatter_list_spans_packet_boundaries)
{
	struct fx f;
	struct mrcp_sge sge[3] = {
		{.addr = BUF_VA + 0x10000, .len = 700, .lkey = 0},
		{.addr = BUF_VA + 0x20000, .len = 700, .lkey = 0},
		{.addr = BUF_VA + 0x30000, .len = 1000, .lkey = 0},
	};
	struct mrcp_send_wr wr = {.wr_id = 5, .opcode = MRCP_WR_WRITE, .flags = MRCP_WR_SIGNALED,
				  .sg_list = sge, .num_sge = 3, .remote_addr = REMOTE_VA, .rkey = REMOTE_RKEY};
	uint8_t want[2400];

	fx_init(&f);
	for (int i = 0; i < 3; i++)
		sge[i].lkey = f.lkey;
	ASSERT_EQ(0, mrcp_qp_post_send(f.e, f.qpn, &wr, f.now));
	ASSERT_EQ(3, drain(&f));
	/* packet 0: 700 of SGE 0 + 324 of SGE 1 */
	ASSERT_EQ(2, f.link.out[0].tx.n_seg);
	ASSERT_TRUE(f.link.out[0].tx.seg[0].ptr == f.buf + 0x10000);
	ASSERT_EQ(700, f.link.out[0].tx.seg[0].len);
	ASSERT_TRUE(f.link.out[0].tx.seg[1].ptr == f.buf + 0x20000);
	ASSERT_EQ(324, f.link.out[0].tx.seg[1].len);
	/* packet 1: the other 376 of SGE 1 + 648 of SGE 2 */
	ASSERT_EQ(2, f.link.out[1].tx.n_seg);
	ASSERT_TRUE(f.link.out[1].tx.seg[0].ptr == f.buf + 0x20000 + 324);
	ASSERT_EQ(376, f.link.out[1].tx.seg[0].len);
	ASSERT_TRUE(f.link.out[1].tx.seg[1].ptr == f.buf + 0x30000);
	ASSERT_EQ(648, f.link.out[1].tx.seg[1].len);
	/* packet 2: the last 352 of SGE 2 */
	ASSERT_EQ(1, f.link.out[2].tx.n_seg);
	ASSERT_TRUE(f.link.out[2].tx.seg[0].ptr == f.buf + 0x30000 + 648);
	ASSERT_EQ(352, f.link.out[2].tx.seg[0].len);
	memcpy(want, f.buf + 0x10000, 700);
	memcpy(want + 700, f.buf + 0x20000, 700);
	memcpy(want + 1400, f.buf + 0x30000, 1000);
	ASSERT_MEMEQ(f.link.out[0].p.payload, want, 1024);
	ASSERT_MEMEQ(f.link.out[1].p.payload, want + 1024, 1024);
	ASSERT_MEMEQ(f.link.out[2].p.payload, want + 2048, 352);
	ASSERT_EQ(2400, f.link.out[2].p.reth.dma_len);
	fx_fini(&f);
}

static void tweak_window(struct mrcp_engine_config *c, struct mrcp_qp_attr *a, struct mrcp_conn_info *ci)
{
	(void)ci;
	a->mpr = 1;                        /* W = 128 x min(1, 8) */
	memcpy(c->cc, "fixed", 6);
	c->cc_params.fixed_cwnd = 64u << 20; /* the window, not CC, must stop it */
}

TEST(req, req_tx__window_w_holds_new_psns_until_cack_moves)
{
	struct fx f;

	fx_init_with(&f, tweak_window);
	prove_all(&f); /* D65 probation would hold each of the 8 EVs to one packet */
	ASSERT_EQ(128, f.qp->W);
	ASSERT_EQ(0, post(&f, 1, MRCP_WR_WRITE, 0, 200 * MTU, 0));
	ASSERT_EQ(128, drain(&f));
	ASSERT_EQ(127, f.link.out[127].p.bth.psn);
	ASSERT_GT(qc(&f).stalls_window, 0);
	ASSERT_EQ(0, drain(&f));
	/* cack 9 frees PSNs 0..9: ten more may go */
	sack(&f, 9, 1, 0, 0, 0);
	ASSERT_EQ(10, f.qp->snd_una);
	ASSERT_EQ(10, drain(&f));
	ASSERT_EQ(128, f.link.out[0].p.bth.psn);
	ASSERT_EQ(137, f.link.out[9].p.bth.psn);
	fx_fini(&f);
}

/* ---- mrcp__req_on_sack ------------------------------------------------------------- */

TEST(req, req_on_sack__bitmap_marks_sacked_and_cack_frees)
{
	struct fx f;
	struct mrcp_wc wc[4];

	fx_init(&f);
	ASSERT_EQ(0, post(&f, 1, MRCP_WR_WRITE, 0, 8 * MTU, 0));
	ASSERT_EQ(8, drain(&f));
	ASSERT_EQ(8, f.qp->n_out);
	/* cack 1, base 3, bits 0 and 2: PSNs 3 and 5 */
	sack(&f, 1, 2, 0x5, 0, 0);
	ASSERT_EQ(2, f.qp->snd_una);
	ASSERT_TRUE(sb(&f, 3)->flags & SB_SACKED);
	ASSERT_TRUE(sb(&f, 5)->flags & SB_SACKED);
	ASSERT_FALSE(sb(&f, 2)->flags & SB_SACKED);
	ASSERT_FALSE(sb(&f, 4)->flags & SB_SACKED);
	ASSERT_TRUE(sb(&f, 4)->flags & SB_OUT);
	ASSERT_EQ(4, f.qp->n_out); /* 2, 4, 6, 7 */
	ASSERT_EQ(1, qc(&f).sack_rx);
	/* D38: no completion from a SACK, even one that covers everything */
	sack(&f, 7, 1, 0, 0, 0);
	ASSERT_EQ(8, f.qp->snd_una);
	ASSERT_EQ(0, f.qp->n_out);
	ASSERT_EQ(0, mrcp_poll_cq(f.e, wc, 4));
	aeth(&f, MRCP_AETH_ACK, 0);
	ASSERT_EQ(1, mrcp_poll_cq(f.e, wc, 4));
	ASSERT_EQ(1, wc[0].wr_id);
	ASSERT_EQ(MRCP_WC_SUCCESS, wc[0].status);
	fx_fini(&f);
}

TEST(req, req_on_sack__stale_cack_and_bits_outside_flight_are_ignored)
{
	struct fx f;

	fx_init(&f);
	ASSERT_EQ(0, post(&f, 1, MRCP_WR_WRITE, 0, 4 * MTU, 0));
	ASSERT_EQ(4, drain(&f));
	sack(&f, 1, 1, 0, 0, 0);
	ASSERT_EQ(2, f.qp->snd_una);
	sack(&f, 0, 1, 0, 0, 0);          /* older cack */
	ASSERT_EQ(2, f.qp->snd_una);
	sack(&f, 9, 1, 0, 0, 0);          /* cack beyond next_psn */
	ASSERT_EQ(2, f.qp->snd_una);
	sack(&f, 1, 1, 1ull << 40, 0, 0); /* PSN 42 was never sent */
	ASSERT_EQ(2, f.qp->n_out);
	fx_fini(&f);
}

/* ---- loss inference (D29) ---------------------------------------------------------- */

TEST(req, infer_losses__a_later_send_acked_makes_it_suspect_then_lost)
{
	struct fx f;
	uint32_t ev0;
	int ev0i;
	char dlog[256];

	fx_init(&f);
	ASSERT_EQ(3000, d65_reo(&f));
	ASSERT_EQ(0, post(&f, 1, MRCP_WR_WRITE, 0, 64, 0));
	ASSERT_EQ(1, drain(&f));
	ev0 = f.link.out[0].tx.ev;
	ev0i = ev_index(&f, ev0);
	f.now = T0 + 1000;
	ASSERT_EQ(0, post(&f, 2, MRCP_WR_WRITE, 0x1000, 64, 0));
	ASSERT_EQ(1, drain(&f));
	/* PSN 1, sent 1 us after PSN 0, is SACKed: within reo_wnd, nothing */
	f.now = T0 + 9000;
	sack(&f, 0xFFFFFF, 2, 0x1, 0, 0);
	ASSERT_TRUE(sb(&f, 1)->flags & SB_SACKED);
	ASSERT_EQ(0, qc(&f).suspects);
	/* PSN 2, sent 5 us after PSN 0, is SACKed: PSN 0 is suspect - out of
	 * flight, its EV held (still GOOD), nothing resent, nothing charged */
	f.now = T0 + 5000;
	ASSERT_EQ(0, post(&f, 3, MRCP_WR_WRITE, 0x2000, 64, 0));
	ASSERT_EQ(1, drain(&f));
	f.now = T0 + 10000;
	sack(&f, 0xFFFFFF, 1, 0x6, 0, 0);
	ASSERT_EQ(1, qc(&f).suspects);
	ASSERT_EQ(0, qc(&f).losses);
	ASSERT_TRUE(sb(&f, 0)->flags & SB_SUSPECT);
	ASSERT_FALSE(sb(&f, 0)->flags & SB_OUT);
	ASSERT_EQ(MRCP_EV_GOOD, ev_state(&f, ev0));
	ASSERT_EQ(1, mrcp_qp_evs(f.e, f.qpn)->evs[ev0i].held);
	ASSERT_EQ(0, drain(&f));
	/* the verdict: 2 x 1.5 x rtt_hi + reo_wnd after its send, not before,
	 * while the peer talks (a SACK of nothing new keeps it from being a
	 * silence, D65) */
	f.now = T0 + d65_late(&f) - 1024;
	sack(&f, 0xFFFFFF, 1, 0x6, 0, 0);
	ASSERT_EQ(0, drain(&f));
	f.now = T0 + d65_late(&f) + 1024;
	drain(&f);
	ASSERT_EQ(1, n_data(&f, dlog, sizeof(dlog)));
	ASSERT_STREQ("WRITE_ONLY psn 0 msn 0 va+0 len 64 ackreq rtx", dlog);
	ASSERT_EQ(1, qc(&f).losses);
	ASSERT_TRUE(f.link.out[0].tx.rtx);
	ASSERT_NE(ev0, f.link.out[0].tx.ev);  /* D31 */
	ASSERT_EQ(12, f.link.out[0].tx.dscp); /* TRIMMABLE_RETX */
	ASSERT_EQ(1, qc(&f).rtx_fast);
	ASSERT_EQ(2, sb(&f, 0)->tx_count);
	ASSERT_EQ(MRCP_EV_SKIP, ev_state(&f, ev0)); /* D30, no trimming */
	ASSERT_EQ(0, mrcp_qp_evs(f.e, f.qpn)->evs[ev0i].held);
	fx_fini(&f);
}

TEST(req, infer_losses__a_suspect_acked_before_its_verdict_was_reordering)
{
	struct fx f;
	uint32_t ev0;

	fx_init(&f);
	ev0 = two_sends(&f, 6000);
	f.now = T0 + 15000;
	sack(&f, 0xFFFFFF, 2, 0x1, 0, 0); /* PSN 1: PSN 0 suspect */
	ASSERT_EQ(1, qc(&f).suspects);
	f.now = T0 + 30000;
	sack(&f, 1, 0, 0, 0, 0);         /* ...and then PSN 0 itself, late */
	ASSERT_EQ(1, qc(&f).suspects_cleared);
	ASSERT_EQ(0, f.qp->n_suspect);
	f.now = T0 + d65_late(&f) + 4096;
	drain(&f);
	ASSERT_EQ(0, qc(&f).losses);
	ASSERT_EQ(0, qc(&f).rtx_fast);
	ASSERT_EQ(MRCP_EV_GOOD, ev_state(&f, ev0));
	ASSERT_EQ(0, mrcp_qp_evs(f.e, f.qpn)->evs[ev_index(&f, ev0)].held);
	ASSERT_EQ(0, mrcp_qp_evs(f.e, f.qpn)->evs[ev_index(&f, ev0)].c.transitions);
	fx_fini(&f);
}

TEST(req, infer_losses__a_send_acked_long_after_it_makes_it_lost_at_once)
{
	struct fx f;

	fx_init(&f);
	two_sends_far_apart(&f);
	f.now += 5000;
	sack(&f, 0xFFFFFF, 2, 0x1, 0, 0);
	ASSERT_EQ(0, qc(&f).suspects);
	ASSERT_EQ(1, qc(&f).losses);
	fx_fini(&f);
}

TEST(req, infer_losses__a_held_ev_is_passed_over)
{
	struct fx f;
	uint32_t ev0;

	fx_init(&f);
	ev0 = two_sends(&f, 6000);
	f.now = T0 + 12000;
	sack(&f, 0xFFFFFF, 2, 0x1, 0, 0); /* PSN 0 suspect: ev0 held */
	/* 24 more packets over 8 EVs: three rotations, none on ev0 */
	ASSERT_EQ(0, post(&f, 3, MRCP_WR_WRITE, 0x2000, 24 * MTU, 0));
	drain(&f);
	ASSERT_EQ(24, f.link.n_out);
	for (unsigned i = 0; i < f.link.n_out; i++)
		ASSERT_NE(ev0, f.link.out[i].tx.ev);
	fx_fini(&f);
}

static void two_planes(struct mrcp_engine_config *c, struct mrcp_qp_attr *a, struct mrcp_conn_info *ci)
{
	(void)a;
	c->n_ports = 2;
	fx_ip(&c->port_addr[1], 0, 2);
	ci->n_ports = 2;
	fx_ip(&ci->port_addr[1], 1, 2);
	ci->port_status_mask = 3;
}

static uint64_t two_planes_seed;

static void two_planes_seeded(struct mrcp_engine_config *c, struct mrcp_qp_attr *a, struct mrcp_conn_info *ci)
{
	two_planes(c, a, ci);
	c->seed = two_planes_seed;
}

TEST(req, infer_losses__silent_loss_is_resent_on_another_plane)
{
	/* One packet goes silent; the plane it used still has GOOD EVs, so
	 * plain D31 would pick either plane. Over 16 seeds every copy must
	 * leave on the other plane (by chance: about 1 time in 10^4). */
	for (two_planes_seed = 1; two_planes_seed <= 16; two_planes_seed++) {
		struct fx f;
		uint64_t guard;

		fx_init_with(&f, two_planes_seeded);
		guard = d65_reo(&f);
		for (unsigned i = 0; i < 2; i++) {
			f.now = T0 + i * 5000;
			ASSERT_EQ(0, post(&f, i + 1, MRCP_WR_WRITE, 0x100 * i, 64, 0));
			ASSERT_EQ(1, drain(&f));
		}
		uint8_t port0 = sb(&f, 0)->port;

		f.now = T0 + guard + 5000;
		sack(&f, 0xFFFFFF, 2, 0x1, 0, 0); /* PSN 1 arrived, PSN 0 did not */
		ASSERT_EQ(1, qc(&f).suspects);
		f.now = T0 + d65_late(&f) - 1024;
		sack(&f, 0xFFFFFF, 2, 0x1, 0, 0);   /* the peer still talks */
		f.now = T0 + d65_late(&f) + 1024;    /* the verdict */
		ASSERT_EQ(1, drain(&f));
		ASSERT_EQ(1, qc(&f).losses);
		ASSERT_TRUE(f.link.out[0].tx.rtx);
		ASSERT_NE(port0, f.link.out[0].tx.port); /* D62 */
		fx_fini(&f);
	}
}

/* ---- mrcp__req_on_nack ----------------------------------------------------------------- */

TEST(req, req_on_nack__trimmed_resends_at_once_on_another_ev_and_skips_it)
{
	struct fx f;
	uint32_t ev0;

	fx_init(&f);
	ASSERT_EQ(0, post(&f, 1, MRCP_WR_WRITE, 0, 64, 0));
	ASSERT_EQ(1, drain(&f));
	ev0 = f.link.out[0].tx.ev;
	ASSERT_EQ(MRCP_EV_GOOD, ev_state(&f, ev0));
	nack(&f, MRCP_NACK_TRIMMED, 0, ev0);
	ASSERT_EQ(MRCP_EV_SKIP, ev_state(&f, ev0));
	ASSERT_EQ(1, drain(&f));
	ASSERT_STREQ("WRITE_ONLY psn 0 msn 0 va+0 len 64 ackreq rtx", f.link.log);
	ASSERT_NE(ev0, f.link.out[0].tx.ev);
	ASSERT_EQ(12, f.link.out[0].tx.dscp);
	ASSERT_EQ(1, qc(&f).rtx_nack);
	ASSERT_EQ(1, qc(&f).nack_rx);
	ASSERT_EQ(0, f.qp->k);
	fx_fini(&f);
}

TEST(req, req_on_nack__trimmed_lasthop_resends_without_touching_the_ev)
{
	struct fx f;
	uint32_t ev0;
	int idx;

	fx_init(&f);
	ASSERT_EQ(0, post(&f, 1, MRCP_WR_WRITE, 0, 64, 0));
	ASSERT_EQ(1, drain(&f));
	ev0 = f.link.out[0].tx.ev;
	idx = ev_index(&f, ev0);
	nack(&f, MRCP_NACK_TRIMMED_LASTHOP, 0, ev0);
	ASSERT_EQ(MRCP_EV_GOOD, ev_state(&f, ev0));
	ASSERT_EQ(0, mrcp_qp_evs(f.e, f.qpn)->evs[idx].c.trims);
	ASSERT_EQ(1, drain(&f));
	ASSERT_STREQ("WRITE_ONLY psn 0 msn 0 va+0 len 64 ackreq rtx", f.link.log);
	ASSERT_EQ(1, qc(&f).rtx_nack);
	fx_fini(&f);
}

TEST(req, req_on_nack__no_resource_waits_a_base_rtt_and_counts_a_retry)
{
	struct fx f;
	uint64_t t, brtt = 12000;
	char dlog[512];

	fx_init(&f);
	ASSERT_EQ(0, post(&f, 1, MRCP_WR_WRITE, 0, 64, 0));
	ASSERT_EQ(1, drain(&f));
	f.now = t = T0 + 3000;
	nack(&f, MRCP_NACK_NO_RESOURCE, 0, 0);
	ASSERT_EQ(1, f.qp->k);
	ASSERT_EQ(0, drain(&f));
	f.now = t + brtt - 100;
	ASSERT_EQ(0, drain(&f));
	f.now = t + brtt + 2048; /* the timer wheel ticks are 1.024 us */
	drain(&f);
	/* only the data is checked here: the same timer also sends two
	 * spurious probes, see req_on_timer__hold_expiry_sends_no_probe */
	ASSERT_EQ(1, n_data(&f, dlog, sizeof(dlog)));
	ASSERT_STREQ("WRITE_ONLY psn 0 msn 0 va+0 len 64 ackreq rtx", dlog);
	ASSERT_EQ(1, qc(&f).rtx_nack);
	fx_fini(&f);
}

TEST(req, req_on_nack__psn_oor_waits_a_base_rtt_without_a_retry)
{
	struct fx f;
	char dlog[512];

	fx_init(&f);
	ASSERT_EQ(0, post(&f, 1, MRCP_WR_WRITE, 0, 64, 0));
	ASSERT_EQ(1, drain(&f));
	nack(&f, MRCP_NACK_PSN_OOR_WINDOW, 0, 0);
	ASSERT_EQ(0, f.qp->k);
	ASSERT_EQ(0, drain(&f));
	f.now += 12000 + 2048;
	drain(&f);
	ASSERT_EQ(1, n_data(&f, dlog, sizeof(dlog)));
	ASSERT_STREQ("WRITE_ONLY psn 0 msn 0 va+0 len 64 ackreq rtx", dlog);
	fx_fini(&f);
}

TEST(req, req_on_nack__unexpected_event_fails_the_qp_with_rem_op_err)
{
	struct fx f;
	struct mrcp_wc wc[4];
	struct mrcp_event ev[2];

	fx_init(&f);
	ASSERT_EQ(0, post(&f, 1, MRCP_WR_WRITE, 0, 64, 0));
	ASSERT_EQ(0, post(&f, 2, MRCP_WR_WRITE, 0, 64, 0));
	ASSERT_EQ(2, drain(&f));
	nack(&f, MRCP_NACK_UNEXP_EVENT, 0, 0);
	ASSERT_EQ(MRCP_QPS_ERROR, mrcp_qp_state(f.e, f.qpn));
	ASSERT_EQ(2, mrcp_poll_cq(f.e, wc, 4));
	ASSERT_EQ(1, wc[0].wr_id);
	ASSERT_EQ(MRCP_WC_REM_OP_ERR, wc[0].status);
	ASSERT_EQ(2, wc[1].wr_id);
	ASSERT_EQ(MRCP_WC_FLUSH_ERR, wc[1].status);
	ASSERT_EQ(1, mrcp_poll_events(f.e, ev, 2));
	ASSERT_EQ(MRCP_EVENT_QP_ERROR, ev[0].type);
	ASSERT_EQ(MRCP_WC_REM_OP_ERR, ev[0].qp_error.status);
	ASSERT_EQ(MRCP_QP_ERR_REMOTE_OP, ev[0].qp_error.cause);
	ASSERT_EQ(0, drain(&f));
	fx_fini(&f);
}

TEST(req, req_on_nack__for_a_sacked_or_unsent_psn_is_ignored)
{
	struct fx f;

	fx_init(&f);
	ASSERT_EQ(0, post(&f, 1, MRCP_WR_WRITE, 0, 2 * MTU, 0));
	ASSERT_EQ(2, drain(&f));
	sack(&f, 0xFFFFFF, 2, 0x1, 0, 0); /* PSN 1 SACKed */
	nack(&f, MRCP_NACK_TRIMMED, 1, 0);
	nack(&f, MRCP_NACK_TRIMMED, 7, 0);
	ASSERT_EQ(0, drain(&f));
	ASSERT_EQ(0, f.qp->n_rtxq);
	ASSERT_EQ(2, qc(&f).nack_rx);
	fx_fini(&f);
}

/* ---- mrcp__req_on_ack / mrcp__req_complete (D38) ------------------------------------- */

TEST(req, req_on_ack__completes_in_order_only_up_to_its_msn)
{
	struct fx f;
	struct mrcp_wc wc[4];
	struct mrcp_qp_info qi;

	fx_init(&f);
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(0, post(&f, 10 + (uint64_t)i, MRCP_WR_WRITE, (uint32_t)i * 0x1000, 100, 0));
	ASSERT_EQ(3, drain(&f));
	aeth(&f, MRCP_AETH_ACK, 1);
	ASSERT_EQ(2, mrcp_poll_cq(f.e, wc, 4));
	ASSERT_EQ(10, wc[0].wr_id);
	ASSERT_EQ(11, wc[1].wr_id);
	ASSERT_EQ(MRCP_WC_WRITE, wc[0].opcode);
	ASSERT_EQ(100, wc[0].byte_len);
	ASSERT_EQ(99, wc[0].user_ctx);
	ASSERT_EQ(1, wc[1].msn);
	/* the AETH also acknowledges the PSNs of completed messages */
	ASSERT_EQ(2, f.qp->snd_una);
	ASSERT_EQ(0, mrcp_qp_info(f.e, f.qpn, &qi));
	ASSERT_EQ(1, qi.sq_outstanding);
	aeth(&f, MRCP_AETH_ACK, 0);  /* older */
	aeth(&f, MRCP_AETH_ACK, 7);  /* a message never sent */
	ASSERT_EQ(0, mrcp_poll_cq(f.e, wc, 4));
	aeth(&f, MRCP_AETH_ACK, 2);
	ASSERT_EQ(1, mrcp_poll_cq(f.e, wc, 4));
	ASSERT_EQ(12, wc[0].wr_id);
	fx_fini(&f);
}

static void nak_case(uint8_t syndrome, uint8_t status, uint8_t cause)
{
	struct fx f;
	struct mrcp_wc wc[4];
	struct mrcp_event ev[2];

	fx_init(&f);
	ASSERT_EQ(0, post(&f, 1, MRCP_WR_WRITE, 0, 64, 0));
	ASSERT_EQ(1, drain(&f));
	aeth(&f, syndrome, 0);
	ASSERT_EQ(MRCP_QPS_ERROR, mrcp_qp_state(f.e, f.qpn));
	ASSERT_EQ(1, mrcp_poll_cq(f.e, wc, 4));
	ASSERT_EQ(status, wc[0].status);
	ASSERT_EQ(1, mrcp_poll_events(f.e, ev, 2));
	ASSERT_EQ(cause, ev[0].qp_error.cause); /* D70 */
	fx_fini(&f);
}

TEST(req, req_on_ack__nak_syndromes_map_to_their_status)
{
	nak_case(MRCP_AETH_NAK_INVALID_REQ, MRCP_WC_REM_INV_REQ_ERR, MRCP_QP_ERR_REMOTE_INVALID);
	nak_case(MRCP_AETH_NAK_REMOTE_ACCESS, MRCP_WC_REM_ACCESS_ERR, MRCP_QP_ERR_REMOTE_ACCESS);
	nak_case(MRCP_AETH_NAK_REMOTE_OP, MRCP_WC_REM_OP_ERR, MRCP_QP_ERR_REMOTE_OP);
}

/* ---- probes (D36) ------------------------------------------------------------------------ */

TEST(req, req_on_timer__tail_loss_probe_after_min_rtt_plus_two_target_qdelay)
{
	struct fx f;
	uint64_t tq, rtt = 5120, due;

	fx_init(&f);
	tq = f.qp->target_qdelay_ns;
	ASSERT_GT(tq, 0);
	ASSERT_EQ(0, post(&f, 1, MRCP_WR_WRITE, 0, 2 * MTU, 0));
	ASSERT_EQ(2, drain(&f));
	/* PSN 1 SACKed with an RTT sample of 5.12 us; PSN 0 stays out */
	f.now = T0 + rtt;
	sack(&f, 0xFFFFFF, 2, 0x1, 0, T0);
	ASSERT_EQ(rtt, f.qp->min_rtt_ns);
	ASSERT_EQ(0, qc(&f).losses); /* sent at the same time as PSN 1 */
	due = f.now + rtt + 2 * tq;
	f.now = due - 2048;
	ASSERT_EQ(0, drain(&f));
	f.now = due + 2048;
	ASSERT_GE(drain(&f), 1); /* exactly 1: see req_on_timer__tail_loss_probe_is_sent_once */
	ASSERT_EQ(MRCP_OP_PROBE, f.link.out[0].p.bth.opcode);
	ASSERT_EQ(1, f.link.out[0].p.bth.psn); /* D11: PSN = next_psn - 1 */
	ASSERT_EQ(0, f.link.out[0].p.peth.probe_id);
	ASSERT_EQ(MRCP_ECN_ECT0, f.link.out[0].tx.ecn);
	/* at most one outstanding: nothing more until it is answered */
	uint64_t sent = qc(&f).probe_tx;
	f.now = due + tq;
	ASSERT_EQ(0, drain(&f));
	ASSERT_EQ(sent, qc(&f).probe_tx);
	fx_fini(&f);
}

TEST(req, req_on_sack__verdict_skips_the_echoed_ev_unless_a_probe_answer)
{
	struct fx f;
	uint32_t ev0, ev1;

	fx_init(&f);
	ASSERT_EQ(0, post(&f, 1, MRCP_WR_WRITE, 0, 2 * MTU, 0));
	ASSERT_EQ(2, drain(&f));
	ev0 = f.link.out[0].tx.ev;
	ev1 = f.link.out[1].tx.ev;
	ASSERT_NE(ev0, ev1);
	sack_full(&f, 0, 1, 0, ev0, 0, MRCP_VERDICT_SKIP_ONCE, false);
	ASSERT_EQ(MRCP_EV_SKIP, ev_state(&f, ev0));
	/* (the per-EV ecn counter: see ev_counters__one_event_counts_once) */
	ASSERT_GE(mrcp_qp_evs(f.e, f.qpn)->evs[ev_index(&f, ev0)].c.ecn, 1);
	/* a probe answer's verdict is counted but moves no state */
	sack_full(&f, 0, 1, 0, ev1, 0, MRCP_VERDICT_ALWAYS_SKIP, true);
	ASSERT_EQ(MRCP_EV_GOOD, ev_state(&f, ev1));
	ASSERT_EQ(1, mrcp_qp_evs(f.e, f.qpn)->evs[ev_index(&f, ev1)].c.ecn);
	fx_fini(&f);
}

TEST(req, req_on_sack__probe_answer_clears_the_outstanding_tail_loss_probe)
{
	struct fx f;
	uint64_t tq;

	fx_init(&f);
	tq = f.qp->target_qdelay_ns;
	ASSERT_EQ(0, post(&f, 1, MRCP_WR_WRITE, 0, 64, 0));
	ASSERT_EQ(1, drain(&f));
	f.now = T0 + 2 * tq + 2048;
	drain(&f);
	ASSERT_EQ(MRCP_OP_PROBE, f.link.out[0].p.bth.opcode);
	ASSERT_TRUE(f.qp->tlp_out);
	/* the responder has nothing: cack unchanged, pr = 1 */
	ASSERT_U64_EQ(0, f.qp->probe_answered_ns);
	answer(&f, 0xFFFFFF, 1, 0, f.link.out[0].tx.ev);
	ASSERT_FALSE(f.qp->tlp_out);
	ASSERT_U64_EQ(f.qp->tlp_sent_ns, f.qp->probe_answered_ns); /* D75: evidence up to the probe */
	fx_fini(&f);
}

TEST(req, req_on_timer__rto_expiry_with_nothing_acked_is_a_silent_round)
{
	struct fx f;
	uint32_t ev0;
	char dlog[512];
	unsigned probes = 0;

	fx_init(&f);
	ASSERT_EQ(7, f.qp->linear_cnt);
	ASSERT_EQ(0, post(&f, 1, MRCP_WR_WRITE, 0, 64, 0));
	ASSERT_EQ(1, drain(&f));
	ev0 = f.link.out[0].tx.ev;
	advance(&f, T0 + f.qp->T_ns + 2048);
	drain(&f);
	/* D65: nothing sent later was acknowledged - the peer may be paused:
	 * probes, no resend, no EV charged, the timer re-armed, k counted */
	ASSERT_EQ(0, n_data(&f, dlog, sizeof(dlog)));
	for (unsigned i = 0; i < f.link.n_out; i++)
		probes += f.link.out[i].p.bth.opcode == MRCP_OP_PROBE;
	ASSERT_EQ(1, probes);
	ASSERT_EQ(1, qc(&f).silent_rounds);
	ASSERT_EQ(0, qc(&f).rto_rounds);
	ASSERT_EQ(1, f.qp->k);
	ASSERT_EQ(MRCP_EV_GOOD, ev_state(&f, ev0));
	ASSERT_TRUE(sb(&f, 0)->flags & SB_OUT);
	ASSERT_U64_EQ(f.now + f.qp->T_ns, sb(&f, 0)->deadline_ns);
	/* the answer shows PSN 0 missing: it is lost (D36, D65) */
	f.now += 5000;
	answer(&f, 0xFFFFFF, 1, 0, f.link.out[0].tx.ev);
	ASSERT_EQ(1, qc(&f).losses);
	drain(&f);
	ASSERT_EQ(1, n_data(&f, dlog, sizeof(dlog)));
	ASSERT_STREQ("WRITE_ONLY psn 0 msn 0 va+0 len 64 ackreq rtx", dlog);
	fx_fini(&f);
}

/* D36, D72: an answer is evidence for the probe it answers. One to an
 * earlier round of probes, which waited in a queue while a host did not run
 * and reports the responder's state before the probe now out was sent, is
 * read as a plain SACK: nothing is lost for it. The answer to the probe out
 * now, known by the timestamp it echoes, is the evidence. */
TEST(req, req_on_sack__an_answer_to_an_earlier_probe_is_a_plain_sack)
{
	struct fx f;
	uint16_t ts1, ts2;
	char dlog[512];

	fx_init(&f);
	ASSERT_EQ(0, post(&f, 1, MRCP_WR_WRITE, 0, 64, 0));
	ASSERT_EQ(1, drain(&f));
	advance(&f, T0 + f.qp->T_ns + 2048);
	drain(&f);
	ASSERT_EQ(1, qc(&f).silent_rounds);
	ts1 = probe_ts(&f);
	/* no answer for T: the next silent round probes again */
	advance(&f, T0 + 2 * f.qp->T_ns + 4096);
	drain(&f);
	ASSERT_EQ(2, qc(&f).silent_rounds);
	ts2 = probe_ts(&f);
	ASSERT_NE(ts1, ts2);
	ASSERT_TRUE(f.qp->tlp_out);
	/* the first round's answer comes now: PSN 0 missing then */
	f.now += 5000;
	sack_echo(&f, 0xFFFFFF, 1, 0, 0x1234, ts1, false, MRCP_VERDICT_NONE, true);
	ASSERT_EQ(0, qc(&f).losses);
	ASSERT_EQ(0, qc(&f).suspects);
	ASSERT_TRUE(f.qp->tlp_out);
	ASSERT_TRUE(sb(&f, 0)->flags & SB_OUT);
	/* the second round's answer is the evidence */
	sack_echo(&f, 0xFFFFFF, 1, 0, 0x1234, ts2, false, MRCP_VERDICT_NONE, true);
	ASSERT_EQ(1, qc(&f).losses);
	ASSERT_FALSE(f.qp->tlp_out);
	drain(&f);
	ASSERT_EQ(1, n_data(&f, dlog, sizeof(dlog)));
	fx_fini(&f);
}

TEST(req, req_on_timer__silence_past_the_linear_phase_is_an_rto_round)
{
	struct fx f;
	char dlog[512];

	fx_init(&f);
	ASSERT_EQ(0, post(&f, 1, MRCP_WR_WRITE, 0, 64, 0));
	ASSERT_EQ(1, drain(&f));
	for (unsigned r = 1; r <= 7; r++) {
		advance(&f, T0 + r * f.qp->T_ns + 2048);
		drain(&f);
		ASSERT_EQ(0, n_data(&f, dlog, sizeof(dlog)));
		ASSERT_EQ(r, qc(&f).silent_rounds);
	}
	ASSERT_EQ(7, f.qp->k);
	advance(&f, T0 + 8 * f.qp->T_ns + 2048);
	drain(&f);
	ASSERT_EQ(1, n_data(&f, dlog, sizeof(dlog)));
	ASSERT_EQ(1, qc(&f).rto_rounds);
	ASSERT_EQ(1, qc(&f).rtx_rto);
	fx_fini(&f);
}

/* D65: a call that comes more than four base RTTs after the engine's
 * earliest timer fell due is a stall of the host: the timers that fell
 * due in it run again from its end instead of firing at once. */
TEST(req, stall__a_late_call_runs_the_rto_again_from_the_stall_end)
{
	struct fx f;
	struct mrcp_engine_counters ec;
	char dlog[256];
	uint64_t end;

	fx_init(&f);
	ASSERT_EQ(0, post(&f, 1, MRCP_WR_WRITE, 0, 64, 0));
	ASSERT_EQ(1, drain(&f));
	/* not run from T0 until well past the RTO (its TLP fell due at 24 us) */
	end = f.now = T0 + f.qp->T_ns + 100000;
	drain(&f);
	mrcp_engine_counters(f.e, &ec);
	ASSERT_EQ(1, ec.stalls);
	ASSERT_EQ(0, n_data(&f, dlog, sizeof(dlog)));
	ASSERT_EQ(0, qc(&f).silent_rounds + qc(&f).rto_rounds + qc(&f).probe_tx);
	ASSERT_U64_EQ(end + f.qp->T_ns, sb(&f, 0)->deadline_ns);
	/* the tail-loss probe, too, waits its time from the stall's end */
	f.now = end + 2 * f.qp->target_qdelay_ns - 2048;
	ASSERT_EQ(0, drain(&f));
	f.now = end + 2 * f.qp->target_qdelay_ns + 2048;
	ASSERT_EQ(1, drain(&f));
	ASSERT_EQ(MRCP_OP_PROBE, f.link.out[0].p.bth.opcode);
	fx_fini(&f);
}

/* D65: a host that knows it was not running says so; a lateness below
 * the engine's own threshold then counts as a stall too. */
TEST(req, stall__mrcp_engine_stalled_defers_what_fell_due)
{
	struct fx f;
	struct mrcp_engine_counters ec;

	fx_init(&f);
	ASSERT_EQ(0, post(&f, 1, MRCP_WR_WRITE, 0, 64, 0));
	ASSERT_EQ(1, drain(&f));
	/* 10 us late for the TLP: not a stall by itself ... */
	f.now = T0 + 2 * f.qp->target_qdelay_ns + 10000;
	mrcp_engine_stalled(f.e, f.now); /* ... but the host says it was */
	ASSERT_EQ(0, drain(&f));
	mrcp_engine_counters(f.e, &ec);
	ASSERT_EQ(1, ec.stalls);
	f.now += 2 * f.qp->target_qdelay_ns + 2048;
	ASSERT_EQ(1, drain(&f)); /* the TLP, from the stall's end */
	fx_fini(&f);
}

/* D65: a suspect whose verdict falls due while the peer is silent waits
 * and probes (the peer may hold it in its RX queue); the probe's answer,
 * which covers it, settles it. */
TEST(req, suspects_due__a_verdict_in_silence_waits_and_probes)
{
	struct fx f;
	char dlog[256];

	fx_init(&f);
	ASSERT_EQ(0, post(&f, 1, MRCP_WR_WRITE, 0, 64, 0));
	ASSERT_EQ(1, drain(&f));
	f.now = T0 + 6000;
	ASSERT_EQ(0, post(&f, 2, MRCP_WR_WRITE, 0x1000, 64, 0));
	ASSERT_EQ(1, drain(&f));
	f.now = T0 + 12000;
	sack(&f, 0xFFFFFF, 2, 0x1, 0, 0); /* PSN 0 suspect; then no more SACKs */
	ASSERT_EQ(1, qc(&f).suspects);
	advance(&f, T0 + d65_late(&f) + 2048);
	drain(&f);
	ASSERT_EQ(0, n_data(&f, dlog, sizeof(dlog)));
	ASSERT_EQ(0, qc(&f).losses);
	ASSERT_GE(qc(&f).silent_rounds, 1);
	ASSERT_TRUE(sb(&f, 0)->flags & SB_SUSPECT);
	/* the peer answers: PSN 0 is not there */
	f.now += 3000;
	answer(&f, 0xFFFFFF, 2, 0x1, 0x1234);
	ASSERT_EQ(1, qc(&f).losses);
	drain(&f);
	ASSERT_EQ(1, n_data(&f, dlog, sizeof(dlog)));
	fx_fini(&f);
}

TEST(req, req_on_timer__rto_resends_on_a_fresh_ev_and_retires_the_old_one)
{
	struct fx f;
	uint32_t ev0;
	char dlog[512];

	fx_init_with(&f, no_silence);
	ASSERT_EQ(0, post(&f, 1, MRCP_WR_WRITE, 0, 2 * MTU, 0));
	ASSERT_EQ(2, drain(&f));
	ev0 = f.link.out[0].tx.ev;
	/* PSN 1, sent with PSN 0 on another EV, arrived: the peer answers
	 * (D75); within the reordering window, so PSN 0 is not suspect */
	f.now += 3000;
	sack(&f, 0xFFFFFF, 2, 0x1, 0, 0);
	ASSERT_EQ(0, qc(&f).losses);
	advance(&f, T0 + f.qp->T_ns - 2048);
	drain(&f);
	ASSERT_EQ(0, n_data(&f, dlog, sizeof(dlog)));
	ASSERT_EQ(0, qc(&f).rto_rounds);
	advance(&f, T0 + f.qp->T_ns + 2048);
	drain(&f);
	ASSERT_EQ(1, n_data(&f, dlog, sizeof(dlog)));
	ASSERT_STREQ("WRITE_FIRST psn 0 msn 0 va+0 len 1024 rtx", dlog);
	ASSERT_EQ(1, qc(&f).rto_rounds);
	ASSERT_EQ(1, qc(&f).rtx_rto);
	ASSERT_EQ(0, qc(&f).rto_unblamed);
	ASSERT_EQ(1, f.qp->k);
	ASSERT_EQ(MRCP_EV_ASSUMED_BAD, ev_state(&f, ev0));
	for (unsigned i = 0; i < f.link.n_out; i++)
		if (mrcp_opcode_is_data(f.link.out[i].p.bth.opcode))
			ASSERT_NE(ev0, f.link.out[i].tx.ev);
	fx_fini(&f);
}

/* D75: an RTO expiry charges its EV only on differential evidence. A peer
 * that has answered nothing sent since the packet left - no later data,
 * no probe - is paused or gone on every EV at once: the packet is resent
 * as ever (the round, the retry count and the QP's end are unchanged) but
 * no EV leaves GOOD; counted in rto_unblamed. */
TEST(req, rto_round__a_peer_silent_on_every_ev_charges_no_ev)
{
	struct fx f;
	uint32_t ev0;
	char dlog[512];

	fx_init_with(&f, no_silence);
	ASSERT_EQ(0, post(&f, 1, MRCP_WR_WRITE, 0, 64, 0));
	ASSERT_EQ(1, drain(&f));
	ev0 = f.link.out[0].tx.ev;
	advance(&f, T0 + f.qp->T_ns + 2048);
	drain(&f);
	ASSERT_EQ(1, n_data(&f, dlog, sizeof(dlog)));
	ASSERT_STREQ("WRITE_ONLY psn 0 msn 0 va+0 len 64 ackreq rtx", dlog);
	ASSERT_EQ(1, qc(&f).rto_rounds);
	ASSERT_EQ(1, qc(&f).rtx_rto);
	ASSERT_EQ(1, qc(&f).rto_unblamed);
	ASSERT_EQ(1, f.qp->k);
	ASSERT_EQ(MRCP_EV_GOOD, ev_state(&f, ev0));
	ASSERT_EQ(0, sb(&f, 0)->charged);
	for (unsigned i = 0; i < mrcp_qp_evs(f.e, f.qpn)->n_evs; i++)
		ASSERT_EQ(0, mrcp_qp_evs(f.e, f.qpn)->evs[i].c.rtos);
	fx_fini(&f);
}

/* D75: a peer silent for good still ends the QP when it always did: k
 * grows once per backoff period whether or not an EV is charged. */
static void few_retries(struct mrcp_engine_config *c, struct mrcp_qp_attr *a, struct mrcp_conn_info *ci)
{
	(void)a;
	(void)ci;
	c->linear_cnt = 0;
	c->exp_cnt = 3;
}

TEST(req, rto_round__a_dead_peer_ends_the_qp_with_no_ev_charged)
{
	struct fx f;
	uint64_t t = T0;

	fx_init_with(&f, few_retries);
	ASSERT_EQ(0, post(&f, 1, MRCP_WR_WRITE, 0, 64, 0));
	ASSERT_EQ(1, drain(&f));
	for (unsigned i = 0; i < 4000 && mrcp_qp_state(f.e, f.qpn) == MRCP_QPS_RTS; i++) {
		t += f.qp->T_ns / 4;
		advance(&f, t);
		drain(&f);
	}
	ASSERT_EQ(MRCP_QPS_ERROR, mrcp_qp_state(f.e, f.qpn));
	ASSERT_EQ(3, f.qp->k);
	ASSERT_EQ(qc(&f).rto_rounds, qc(&f).rto_unblamed);
	ASSERT_EQ(3, qc(&f).rto_rounds);
	for (unsigned i = 0; i < mrcp_qp_evs(f.e, f.qpn)->n_evs; i++)
		ASSERT_EQ(MRCP_EV_GOOD, mrcp_qp_evs(f.e, f.qpn)->evs[i].state);
	fx_fini(&f);
}

/* D75: a probe answered after the packet left is evidence as much as later
 * data: the peer talks, this packet's path did not deliver, its EV is
 * charged. */
TEST(req, rto_round__a_probe_answered_since_the_send_charges_the_ev)
{
	struct fx f;
	uint32_t ev0;

	fx_init_with(&f, no_silence);
	ASSERT_EQ(0, post(&f, 1, MRCP_WR_WRITE, 0, 64, 0));
	ASSERT_EQ(1, drain(&f));
	ev0 = f.link.out[0].tx.ev;
	f.qp->probe_answered_ns = f.now + 1; /* as an answered probe sets it */
	advance(&f, T0 + f.qp->T_ns + 2048);
	drain(&f);
	ASSERT_EQ(1, qc(&f).rto_rounds);
	ASSERT_EQ(0, qc(&f).rto_unblamed);
	ASSERT_EQ(MRCP_EV_ASSUMED_BAD, ev_state(&f, ev0));
	fx_fini(&f);
}

/* ---- D64: charges undone --------------------------------------------------------------- */

/* An RTO retired ev0 and resent PSN 0 elsewhere; the SACK for PSN 0 echoes
 * the timestamp of the original (the receiver had paused, D64): ev0 is back
 * in service. @resend_arrived: it echoes the resend's, and the charge stands. */
static void rto_then_sack(bool resend_arrived)
{
	struct fx f;
	uint32_t ev0;
	uint64_t resent;

	fx_init_with(&f, no_silence);
	ASSERT_EQ(0, post(&f, 1, MRCP_WR_WRITE, 0, 2 * MTU, 0));
	ASSERT_EQ(2, drain(&f));
	ev0 = f.link.out[0].tx.ev;
	f.now += 3000;
	sack(&f, 0xFFFFFF, 2, 0x1, 0, 0); /* PSN 1 arrived: the peer answers (D75) */
	resent = T0 + f.qp->T_ns + 2048;
	advance(&f, resent);
	drain(&f);
	ASSERT_EQ(1, qc(&f).rtx_rto);
	ASSERT_EQ(MRCP_EV_ASSUMED_BAD, ev_state(&f, ev0));
	ASSERT_NE(0, sb(&f, 0)->charged);
	f.now += 3000;
	sack(&f, 0, 0, 0, 0, resend_arrived ? resent : T0);
	ASSERT_EQ(resend_arrived ? 0 : 1, qc(&f).losses_undone);
	ASSERT_EQ(resend_arrived ? MRCP_EV_ASSUMED_BAD : MRCP_EV_GOOD, ev_state(&f, ev0));
	fx_fini(&f);
}

TEST(req, undo_charge__a_sack_of_the_original_gives_the_rto_ev_back)
{
	rto_then_sack(false);
}

TEST(req, undo_charge__a_sack_of_the_resend_leaves_the_charge)
{
	rto_then_sack(true);
}

TEST(req, undo_charge__a_lost_psn_sacked_before_its_resend_gives_the_ev_back)
{
	struct fx f;
	uint32_t ev0;
	char dlog[256];

	fx_init(&f);
	ev0 = two_sends_far_apart(&f);
	f.now += 2000;
	sack(&f, 0xFFFFFF, 2, 0x1, 0, 0);         /* PSN 1 arrived: PSN 0 is lost at once */
	ASSERT_EQ(1, qc(&f).losses);
	ASSERT_EQ(MRCP_EV_SKIP, ev_state(&f, ev0)); /* D30, no trimming */
	ASSERT_TRUE(sb(&f, 0)->flags & SB_RTXQ);
	sack(&f, 1, 0, 0, 0, 0);                  /* ...and then PSN 0 too, before its resend */
	ASSERT_EQ(1, qc(&f).losses_undone);
	ASSERT_EQ(MRCP_EV_GOOD, ev_state(&f, ev0));
	drain(&f);
	ASSERT_EQ(0, n_data(&f, dlog, sizeof(dlog))); /* nothing left to resend */
	fx_fini(&f);
}

/* D65: the SACK of a copy given up for lost (its resend already out) tells
 * how slow a failing path is, not how long a healthy one may take: its RTT
 * sets neither rtt_hi's window nor the latest sample; the resend's does. */
TEST(req, rtt_hi__a_late_copy_given_up_for_lost_is_no_sample)
{
	struct fx f;
	uint64_t t1, resent;

	fx_init(&f);
	two_sends_far_apart(&f);
	t1 = f.now;
	f.now += 5120;
	sack(&f, 0xFFFFFF, 2, 0x1, 0, t1); /* PSN 1, a 5 us RTT: PSN 0 lost at once */
	ASSERT_EQ(1, qc(&f).losses);
	ASSERT_LT(f.qp->rtt_cur_ns, 6000);
	drain(&f);
	ASSERT_EQ(1, qc(&f).rtx_fast);
	resent = f.now;
	/* PSN 0's first copy arrives after all, 100 us after its send */
	f.now = T0 + 100 * 1024;
	sack(&f, 0, 0, 0, 0, T0);
	ASSERT_EQ(1, qc(&f).rtx_spurious);
	ASSERT_LT(f.qp->rtt_cur_ns, 6000);
	ASSERT_LT(f.qp->rack_rtt_ns, 6000);
	/* a SACK echoing the resend is a sample */
	f.now += 1024;
	sack(&f, 0, 0, 0, 0, resent);
	ASSERT_GT(f.qp->rack_rtt_ns, f.now - resent - 1024);
	ASSERT_EQ(f.qp->rack_rtt_ns, f.qp->rtt_cur_ns);
	fx_fini(&f);
}

/* D74: a suspect's verdict waits for the slowest RTT sampled on a healthy
 * path up to T, not T / 2. PSN 0 at T0, PSN 1 6 us later and acknowledged
 * with a 200 us RTT (above T / 2, 131 us): PSN 0 is suspect, and its
 * verdict falls 3 x 200 us + reo_wnd after its send (a QP's first SACKs,
 * D65), not 3 x 131 us, while the peer keeps talking. */
TEST(req, verdict_waits_for_an_rtt_above_half_the_rto)
{
	struct fx f;
	uint64_t rtt = 200704, old, verdict; /* a multiple of the 128 ns unit */

	fx_init(&f);
	ASSERT_U64_EQ(262144, f.qp->T_ns); /* timeout 8 (D32) */
	two_sends(&f, 6000);
	advance(&f, T0 + 4096 + rtt); /* the engine runs its timers on time */
	f.now = T0 + 4096 + rtt;
	sack(&f, 0xFFFFFF, 2, 0x1, 0, T0 + 4096); /* PSN 1: an RTT of 200 us */
	ASSERT_U64_EQ(rtt, f.qp->rtt_cur_ns);
	ASSERT_EQ(1, qc(&f).suspects);
	ASSERT_EQ(0, qc(&f).losses);
	old = T0 + 3 * (f.qp->T_ns / 2) + d65_reo(&f);
	verdict = T0 + 3 * rtt + d65_reo(&f);
	ASSERT_U64_EQ(verdict, sb(&f, 0)->not_before_ns);
	/* past the verdict of a T / 2 cap: the peer talks, nothing is lost */
	advance(&f, old + 4096);
	sack(&f, 0xFFFFFF, 2, 0x1, 0, 0);
	drain(&f);
	ASSERT_EQ(0, qc(&f).losses);
	ASSERT_EQ(0, qc(&f).rtx_fast);
	ASSERT_TRUE(sb(&f, 0)->flags & SB_SUSPECT);
	advance(&f, verdict - 4096);
	sack(&f, 0xFFFFFF, 2, 0x1, 0, 0);
	drain(&f);
	ASSERT_EQ(0, qc(&f).losses);
	/* its verdict: lost, resent */
	advance(&f, verdict + 1024);
	drain(&f);
	ASSERT_EQ(1, qc(&f).losses);
	ASSERT_EQ(1, qc(&f).rtx_fast);
	fx_fini(&f);
}

/* D74: ... and never longer than T: a sample above T (a 400 us RTT) sets
 * the verdict as T would. */
TEST(req, verdict_waits_no_longer_than_the_rto)
{
	struct fx f;
	uint64_t rtt = 409600;

	fx_init(&f);
	two_sends(&f, 6000);
	advance(&f, T0 + 4096 + rtt);
	f.now = T0 + 4096 + rtt;
	sack(&f, 0xFFFFFF, 2, 0x1, 0, T0 + 4096);
	ASSERT_U64_EQ(rtt, f.qp->rtt_cur_ns);
	ASSERT_EQ(1, qc(&f).suspects);
	ASSERT_U64_EQ(T0 + 3 * f.qp->T_ns + d65_reo(&f), sb(&f, 0)->not_before_ns);
	fx_fini(&f);
}

/*
 * Was an engine bug (fixed) (req.c, mrcp__req_on_timer): tlp_time() and aeth_probe_time()
 * return UINT64_MAX for "not due", but the caller tests them with
 * mrcp_time_le(x, e->now), a serial comparison: (int64_t)(UINT64_MAX - now)
 * is negative, so "never" reads as "due now". Whenever the QP timer fires
 * for another reason (a NACK hold, an RTO check, an EV expiry) a tail-loss
 * probe and a missing-AETH probe are sent although neither is due; when a
 * real TLP is due, the TLP sets tlp_out, aeth_probe_time() then returns
 * UINT64_MAX and a second probe goes out in the same call (D36: at most
 * one). Fix: test "x != UINT64_MAX && mrcp_time_le(x, now)".
 * Kept out of the build until req.c is fixed.
 */
TEST(req, req_on_timer__hold_expiry_sends_no_probe)
{
	struct fx f;

	fx_init(&f);
	ASSERT_EQ(0, post(&f, 1, MRCP_WR_WRITE, 0, 64, 0));
	ASSERT_EQ(1, drain(&f));
	nack(&f, MRCP_NACK_NO_RESOURCE, 0, 0);
	f.now += 12000 + 2048;
	ASSERT_EQ(1, drain(&f)); /* got 3: PROBE id 0; PROBE id 1; the rtx */
	ASSERT_STREQ("WRITE_ONLY psn 0 msn 0 va+0 len 64 ackreq rtx", f.link.log);
	ASSERT_EQ(0, qc(&f).probe_tx);
	fx_fini(&f);
}

TEST(req, req_on_timer__tail_loss_probe_is_sent_once)
{
	struct fx f;
	uint64_t tq;

	fx_init(&f);
	tq = f.qp->target_qdelay_ns;
	ASSERT_EQ(0, post(&f, 1, MRCP_WR_WRITE, 0, 64, 0));
	ASSERT_EQ(1, drain(&f));
	f.now = T0 + 2 * tq + 2048;
	ASSERT_EQ(1, drain(&f)); /* got 2: PROBE id 0; PROBE id 1 */
	ASSERT_STREQ("PROBE psn 0 id 0", f.link.log);
	fx_fini(&f);
}

/* engine.c, mrcp__qp_arm: every RX burst re-arms the QP's timer. Was an
 * engine bug (fixed): a deadline already due was moved to "now + one tick"
 * on every burst, so while bursts came less than a tick apart the timer
 * never fired (a receive-only QP never probed its reverse paths, D48). */
TEST(req, qp_arm__rx_bursts_do_not_push_a_due_timer_back)
{
	struct fx f;
	uint64_t due;
	unsigned probes = 0;

	fx_init(&f);
	ASSERT_EQ(0, post(&f, 1, MRCP_WR_WRITE, 0, 64, 0));
	ASSERT_EQ(1, drain(&f));
	due = T0 + 2 * f.qp->target_qdelay_ns; /* D36, no RTT sample: min_rtt 0 */
	/* a burst every 500 ns (a NACK for an unsent PSN: ignored, but it
	 * touches the QP), each followed by a poll at the same instant */
	for (f.now = due - 2000; f.now < due + 8000 && probes == 0; f.now += 500) {
		nack(&f, MRCP_NACK_TRIMMED, 7, 0);
		drain(&f);
		for (unsigned i = 0; i < f.link.n_out; i++)
			probes += f.link.out[i].p.bth.opcode == MRCP_OP_PROBE;
	}
	ASSERT_EQ(1, probes);
	ASSERT_LE(f.now, due + 2 * 1024 + 500); /* within a tick or two of due */
	fx_fini(&f);
}

/*
 * ENGINE BUG (req.c + ev.c): the per-EV counters ecn, trims and rtos are
 * counted twice per event. req.c increments them itself
 * (mrcp__req_on_sack: evs[evi].c.ecn++; mrcp__req_on_nack: c.trims++;
 * rto_round: c.rtos++) and then calls mrcp_ev_event(), which since it
 * records "what happened, whatever the state" increments the same counter
 * again (ev.c, mrcp_ev_event). Probe answers (pr = 1) skip mrcp_ev_event
 * and count once. Fix: drop the increments in req.c where mrcp_ev_event
 * follows. Kept out of the build until req.c is fixed.
 */
TEST(req, ev_counters__one_event_counts_once)
{
	struct fx f;
	uint32_t ev0, ev1, ev2;
	const struct mrcp_ev_set *s;

	fx_init_with(&f, no_silence);
	ASSERT_EQ(0, post(&f, 1, MRCP_WR_WRITE, 0, 3 * MTU, 0));
	ASSERT_EQ(3, drain(&f));
	ev0 = f.link.out[0].tx.ev;
	ev1 = f.link.out[1].tx.ev;
	ev2 = f.link.out[2].tx.ev;
	s = mrcp_qp_evs(f.e, f.qpn);
	sack_full(&f, 0, 1, 0, ev0, 0, MRCP_VERDICT_SKIP_ONCE, false);
	ASSERT_EQ(1, s->evs[ev_index(&f, ev0)].c.ecn); /* got 2 */
	nack(&f, MRCP_NACK_TRIMMED, 1, ev1);
	ASSERT_EQ(1, s->evs[ev_index(&f, ev1)].c.trims); /* got 2 */
	advance(&f, T0 + f.qp->T_ns + 2048);
	drain(&f);
	ASSERT_EQ(1, s->evs[ev_index(&f, ev2)].c.rtos); /* got 2 */
	fx_fini(&f);
}

/* ---- CC inflight follows the scoreboard (mrcp_cc.h) ------------------------------------ */

static uint64_t cc_inflight(const struct fx *f)
{
	struct mrcp_qp_info qi;

	ASSERT_EQ(0, mrcp_qp_info(f->e, f->qpn, &qi));
	return qi.cc.inflight;
}

static void inv_ok(const struct fx *f)
{
	char why[200];

	if (mrcp__check_invariants(f->e, why, sizeof(why)) != 0)
		fprintf(stderr, "  invariant: %s\n", why);
	ASSERT_EQ(0, mrcp__check_invariants(f->e, why, sizeof(why)));
}

/* A SACK carrying rcvd_bytes (D19) @units x 256 B. */
static void sack_rcvd(struct fx *f, uint32_t cack, int16_t sack_off, uint64_t bm, uint32_t units)
{
	struct mrcp_pkt p;

	ASSERT_EQ(0, mrcp_pkt_init(&p, MRCP_OP_SACK, f->qpn, cack));
	p.seth.spdcid = (uint16_t)PEER_QPN; /* D15: the peer names its QP (D69) */
	p.seth.cack_psn = cack;
	p.seth.sack_offset = sack_off;
	p.seth.sack_bitmap = bm;
	p.seth.svc_time = 255;
	p.cc.rcvd_bytes = units;
	rx_pkt(f, &p);
}

TEST(req, cc_inflight__an_aeth_alone_takes_its_packets_out_of_flight)
{
	struct fx f;
	struct mrcp_wc wc[4];

	fx_init(&f);
	ASSERT_EQ(0, post(&f, 1, MRCP_WR_WRITE, 0, 3 * MTU, 0));
	ASSERT_EQ(3, drain(&f));
	ASSERT_EQ(f.qp->outstanding_bytes, cc_inflight(&f));
	ASSERT_GT(cc_inflight(&f), 3 * MTU);
	/* every SACK of the message was lost; its AETH completes it (D38)
	 * and, with no SACK ever to come, must empty inflight: this was the
	 * leak that left a memif QP at inflight 3356 > cwnd with nothing out */
	aeth(&f, MRCP_AETH_ACK, 0);
	ASSERT_EQ(1, mrcp_poll_cq(f.e, wc, 4));
	ASSERT_EQ(0, f.qp->n_out);
	ASSERT_U64_EQ(0, cc_inflight(&f));
	inv_ok(&f);
	fx_fini(&f);
}

TEST(req, cc_inflight__rcvd_bytes_of_duplicates_take_nothing_out)
{
	struct fx f;
	uint64_t one;

	fx_init(&f);
	ASSERT_EQ(0, post(&f, 1, MRCP_WR_WRITE, 0, 4 * MTU, 0));
	ASSERT_EQ(4, drain(&f));
	one = f.qp->outstanding_bytes / 4;
	/* the responder counted far more than one packet (duplicates of
	 * earlier copies, D19), but only PSN 0 is acknowledged */
	sack_rcvd(&f, 0, 1, 0, 64);
	ASSERT_U64_EQ(3 * one, cc_inflight(&f));
	inv_ok(&f);
	/* PSN 2 by the bitmap, no rcvd_bytes news (the SACK that had it was
	 * lost): it leaves inflight all the same */
	sack_rcvd(&f, 0, 2, 0x1, 64);
	ASSERT_U64_EQ(2 * one, cc_inflight(&f));
	inv_ok(&f);
	fx_fini(&f);
}

TEST(req, cc_inflight__a_lost_packet_leaves_once_though_both_copies_arrive)
{
	struct fx f;

	fx_init(&f);
	two_sends_far_apart(&f);
	/* PSN 1 SACKed, sent long after PSN 0: PSN 0 is lost, and resent */
	sack_rcvd(&f, 0xFFFFFF, 2, 0x1, 1);
	ASSERT_EQ(1, qc(&f).losses);
	inv_ok(&f);
	ASSERT_EQ(1, drain(&f));
	ASSERT_TRUE(f.link.out[0].tx.rtx);
	inv_ok(&f);
	/* the original arrives late, then the copy (a duplicate, D19): each
	 * SACK reports more bytes, but only the one copy in flight leaves */
	sack_rcvd(&f, 1, 1, 0, 2);
	ASSERT_U64_EQ(0, cc_inflight(&f));
	inv_ok(&f);
	sack_rcvd(&f, 1, 1, 0, 3);
	ASSERT_U64_EQ(0, cc_inflight(&f));
	inv_ok(&f);
	fx_fini(&f);
}

TEST(req, cc_inflight__an_rto_round_keeps_the_other_qps_bytes_on_a_shared_qpcc)
{
	struct fx f;
	struct mrcp_conn_info ci;
	struct mrcp_qp_attr a;
	uint32_t q2;
	struct qp *qp2;

	fx_init_with(&f, no_silence);
	/* a second QP to the same peer shares its QPCC (D53); it sends later,
	 * so the first QP's RTO round comes while its packet is in flight */
	memset(&a, 0, sizeof(a));
	fx_peer_info(&ci, PEER_QPN + 1, MTU);
	ASSERT_EQ(0, mrcp_qp_create(f.e, &a, &q2));
	ASSERT_EQ(0, mrcp_qp_connect(f.e, q2, &ci, f.now));
	qp2 = mrcp__qp_lookup(f.e, q2);
	ASSERT_TRUE(qp2->cc == f.qp->cc);
	ASSERT_EQ(0, post(&f, 1, MRCP_WR_WRITE, 0, 64, 0));
	ASSERT_EQ(1, drain(&f));
	advance(&f, T0 + f.qp->T_ns / 2);
	{
		struct mrcp_sge sge = {.addr = BUF_VA, .len = 2 * MTU, .lkey = f.lkey};
		struct mrcp_send_wr wr = {.wr_id = 9, .opcode = MRCP_WR_WRITE, .sg_list = &sge,
					  .num_sge = 1, .remote_addr = REMOTE_VA, .rkey = REMOTE_RKEY};
		struct mrcp_tx tx[8];
		ASSERT_EQ(0, mrcp_qp_post_send(f.e, q2, &wr, f.now));
		mrcp_poll(f.e, f.now, tx, 8);
		ASSERT_EQ(2, qp2->n_out);
	}
	inv_ok(&f);
	advance(&f, T0 + f.qp->T_ns + 2048);
	{
		struct mrcp_tx tx[8];
		mrcp_poll(f.e, f.now, tx, 8);
	}
	ASSERT_EQ(1, qc(&f).rto_rounds);
	ASSERT_EQ(0, qp2->c.rto_rounds);
	ASSERT_U64_EQ(f.qp->outstanding_bytes + qp2->outstanding_bytes, cc_inflight(&f));
	inv_ok(&f);
	fx_fini(&f);
}

/* §4.7: a message whose packets are all SACKed but whose AETH was lost is
 * completed by a probe the responder answers with its MSN. Was an engine
 * bug (fixed): the probe set tlp_out, and while tlp_out was set neither the
 * AETH probe nor the tail-loss probe had a deadline, so a QP with nothing
 * else timed (every EV GOOD, no data out) never ran its timer again to see
 * the probe unanswered: when the probe or its answer was lost too, the
 * message never completed (fi_pingpong -m tagged hung with 1 % drop). Now
 * the unanswered probe's expiry is a deadline of its own. */
TEST(req, aeth_probe__a_lost_probe_is_sent_again)
{
	struct fx f;
	struct mrcp_wc wc[4];
	unsigned probes = 0;
	uint64_t start, T;

	fx_init(&f);
	T = f.qp->T_ns;
	ASSERT_EQ(0, post(&f, 1, MRCP_WR_WRITE, 0, 64, 0));
	ASSERT_EQ(1, drain(&f));
	f.now += 2048;
	sack(&f, 0, 0, 0, 0, 0); /* PSN 0 SACKed; its AETH never comes */
	ASSERT_EQ(0, f.qp->n_out);
	ASSERT_EQ(0, mrcp_poll_cq(f.e, wc, 4));
	start = f.now;
	/* run the engine at each of its deadlines; every probe is lost */
	for (unsigned i = 0; i < 64 && probes < 3; i++) {
		uint64_t d = mrcp_next_deadline(f.e);

		ASSERT_TRUE(d != UINT64_MAX); /* a completion is pending: something is timed */
		ASSERT_LT(d, start + 8 * T);
		if (mrcp_time_lt(f.now, d))
			f.now = d;
		drain(&f);
		for (unsigned k = 0; k < f.link.n_out; k++)
			probes += f.link.out[k].p.bth.opcode == MRCP_OP_PROBE;
	}
	ASSERT_EQ(3, probes);
	ASSERT_LT(f.now, start + 8 * T);
	aeth(&f, MRCP_AETH_ACK, 0); /* the third is answered */
	ASSERT_EQ(1, mrcp_poll_cq(f.e, wc, 4));
	ASSERT_EQ(MRCP_WC_SUCCESS, wc[0].status);
	fx_fini(&f);
}
