/* test_engine.c - two engines joined by a fake link (no frames, no fabric):
 * the engine's public interface end to end - connection info, QP setup,
 * Write and WriteImm delivery and placement, MSN-ordered completions, loss
 * recovery by SACK, NACK and RTO, retry exhaustion, remote access errors and
 * the RC baseline. Virtual time only. */
#include <errno.h>
#include <stdlib.h>

#include "engine_internal.h"
#include "mrcp_engine.h"
#include "engine_fx.h"
#include "fake_link.h"
#include "mrcp_test.h"
#include "mrcp_wire.h"

#define NODES 2
#define BUF_LEN (4u << 20)
#define LINK_MAX 65536

/* Two engines (node 0 sends, node 1 receives, unless a test says otherwise)
 * on a fake link, each with one QP and one registered buffer. */
struct link {
	struct fake_link fl;
	uint32_t qpn[NODES];
	uint8_t *buf[NODES];
	uint32_t lkey[NODES], rkey[NODES];
};

static void link_init(struct link *l, uint8_t ports, enum mrcp_qp_mode mode, void (*tweak)(struct mrcp_engine_config *))
{
	struct mrcp_engine *eng[NODES];

	memset(l, 0, sizeof(*l));
	for (int n = 0; n < NODES; n++) {
		struct mrcp_engine_config c;
		mrcp_engine_config_defaults(&c);
		c.seed = 100 + (uint64_t)n;
		c.n_ports = ports;
		fx_ip(&c.node_addr, n, 0);
		for (int p = 0; p < ports; p++)
			fx_ip(&c.port_addr[p], n, p + 1);
		c.ev.n_active = (uint16_t)(8 * ports);
		c.ev.n_backup = (uint16_t)(4 * ports);
		c.timeout = 6; /* 65.5 us */
		if (tweak)
			tweak(&c);
		ASSERT_EQ(0, mrcp_engine_create(&c, &eng[n]));
		l->buf[n] = calloc(1, BUF_LEN);
		ASSERT_EQ(0, mrcp_mr_reg(eng[n], (uint64_t)(uintptr_t)l->buf[n], BUF_LEN, l->buf[n],
					 MRCP_ACCESS_LOCAL_WRITE | MRCP_ACCESS_REMOTE_WRITE, &l->lkey[n], &l->rkey[n]));
		struct mrcp_qp_attr a = {.mode = mode, .user_ctx = 77 + (uint64_t)n};
		ASSERT_EQ(0, mrcp_qp_create(eng[n], &a, &l->qpn[n]));
	}
	fake_link_init(&l->fl, 0);
	fake_link_connect(&l->fl, eng[0], eng[1], LINK_MAX);
	struct mrcp_conn_info ci[NODES];
	for (int n = 0; n < NODES; n++)
		ASSERT_EQ(0, mrcp_qp_local_info(l->fl.eng[n], l->qpn[n], &ci[n]));
	for (int n = 0; n < NODES; n++)
		ASSERT_EQ(0, mrcp_qp_connect(l->fl.eng[n], l->qpn[n], &ci[1 - n], 0));
}

static void link_fini(struct link *l)
{
	for (int n = 0; n < NODES; n++) {
		mrcp_engine_destroy(l->fl.eng[n]);
		free(l->buf[n]);
	}
	fake_link_fini(&l->fl);
}

static int post_write(struct link *l, int from, uint32_t off, uint32_t len, uint64_t wr_id, bool imm, uint32_t immv)
{
	struct mrcp_sge sge = {.addr = (uint64_t)(uintptr_t)l->buf[from] + off, .len = len, .lkey = l->lkey[from]};
	struct mrcp_send_wr wr = {
		.wr_id = wr_id,
		.opcode = imm ? MRCP_WR_WRITE_IMM : MRCP_WR_WRITE,
		.flags = MRCP_WR_SIGNALED,
		.imm = immv,
		.sg_list = &sge,
		.num_sge = len ? 1 : 0,
		.remote_addr = (uint64_t)(uintptr_t)l->buf[1 - from] + off,
		.rkey = l->rkey[1 - from],
	};
	return mrcp_qp_post_send(l->fl.eng[from], l->qpn[from], &wr, l->fl.now);
}

static void fill(struct link *l, int n, uint32_t off, uint32_t len, uint8_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		l->buf[n][off + i] = (uint8_t)(seed + i * 7 + (i >> 9));
}

static unsigned cq_drain(struct link *l, int n, struct mrcp_wc *wc, unsigned max)
{
	return mrcp_poll_cq(l->fl.eng[n], wc, max);
}

static void dump(struct link *l)
{
	struct mrcp_qp_info qi;

	for (int n = 0; n < NODES; n++) {
		mrcp_qp_info(l->fl.eng[n], l->qpn[n], &qi);
		fprintf(stderr, "  node %d t=%llu state %u next_psn %u snd_una %u out %u rcv_cack %u k %u rto %llu rtx_rto %llu fast %llu cwnd %llu infl %llu stall_ev %llu stall_cwnd %llu dl %llu q %u\n",
			n, (unsigned long long)l->fl.now, qi.state, qi.next_psn, qi.snd_una, qi.outstanding_pkts, qi.rcv_cack, qi.retry_k,
			(unsigned long long)qi.c.rto_rounds, (unsigned long long)qi.c.rtx_rto, (unsigned long long)qi.c.rtx_fast,
			(unsigned long long)qi.cc.cwnd, (unsigned long long)qi.cc.inflight,
			(unsigned long long)qi.c.stalls_no_ev, (unsigned long long)qi.c.stalls_cwnd,
			(unsigned long long)mrcp_next_deadline(l->fl.eng[n]), fake_link_in_flight(&l->fl));
	}
}

static bool sender_idle(void *ctx)
{
	struct link *l = ctx;
	struct mrcp_qp_info qi;

	mrcp_qp_info(l->fl.eng[0], l->qpn[0], &qi);
	return qi.sq_outstanding == 0 && qi.next_msn != 0 && fake_link_in_flight(&l->fl) == 0;
}

/* ---- tests ---------------------------------------------------------------- */

TEST(engine, conn_info__round_trip_and_rejects)
{
	struct mrcp_conn_info a, b;
	uint8_t buf[MRCP_CONN_INFO_LEN + 8];

	memset(&a, 0, sizeof(a));
	a.versions = 1;
	a.qpn = 0x123456;
	a.init_psn = 0xABCDEF;
	fx_ip(&a.node_addr, 0, 0);
	a.n_ports = 2;
	fx_ip(&a.port_addr[0], 0, 1);
	fx_ip(&a.port_addr[1], 0, 2);
	a.port_status_mask = 3;
	a.mtu = 4096;
	a.mpr_dest = 8;
	a.max_wimm_dest = 128;
	a.trim_nack = true;
	a.svc_time = true;
	a.udp_port = 4791;
	a.buf_va = 0x1122334455667788ull;
	a.buf_rkey = 0x99;
	a.buf_len = 1ull << 33;
	ASSERT_EQ(MRCP_CONN_INFO_LEN, mrcp_conn_info_encode(&a, buf, sizeof(buf)));
	ASSERT_EQ(0, mrcp_conn_info_decode(buf, MRCP_CONN_INFO_LEN, &b));
	ASSERT_EQ(0, memcmp(&a, &b, sizeof(a)));
	ASSERT_EQ(-ENOBUFS, mrcp_conn_info_encode(&a, buf, MRCP_CONN_INFO_LEN - 1));
	ASSERT_EQ(-EBADMSG, mrcp_conn_info_decode(buf, MRCP_CONN_INFO_LEN - 1, &b));
	buf[5] = 2; /* blob version */
	ASSERT_EQ(-EPROTO, mrcp_conn_info_decode(buf, MRCP_CONN_INFO_LEN, &b));
	buf[5] = 1;
	buf[0] ^= 1; /* magic */
	ASSERT_EQ(-EBADMSG, mrcp_conn_info_decode(buf, MRCP_CONN_INFO_LEN, &b));
}

TEST(engine, qp_connect__refuses_other_udp_port_and_version)
{
	struct mrcp_engine_config c;
	struct mrcp_engine *e;
	struct mrcp_conn_info ci;
	uint32_t qpn;

	mrcp_engine_config_defaults(&c);
	fx_ip(&c.node_addr, 0, 0);
	ASSERT_EQ(0, mrcp_engine_create(&c, &e));
	ASSERT_EQ(0, mrcp_qp_create(e, NULL, &qpn));
	ASSERT_EQ(0, mrcp_qp_local_info(e, qpn, &ci));
	ci.qpn = 0x100;
	ci.udp_port = 4971;
	ASSERT_EQ(-EPROTO, mrcp_qp_connect(e, qpn, &ci, 0)); /* D59 */
	ci.udp_port = 4791;
	ci.versions = 2;
	ASSERT_EQ(-EPROTO, mrcp_qp_connect(e, qpn, &ci, 0));
	ci.versions = 1;
	ci.mtu = 1500;
	ASSERT_EQ(-EINVAL, mrcp_qp_connect(e, qpn, &ci, 0));
	ci.mtu = 1024;
	ASSERT_EQ(0, mrcp_qp_connect(e, qpn, &ci, 0));
	ASSERT_EQ(MRCP_QPS_RTS, mrcp_qp_state(e, qpn));
	ASSERT_EQ(-EPERM, mrcp_qp_connect(e, qpn, &ci, 0));
	ASSERT_EQ(-ENOENT, mrcp_qp_connect(e, qpn + 1, &ci, 0));
	mrcp_engine_destroy(e);
}

TEST(engine, post_send__validates)
{
	struct link l;
	struct mrcp_sge sge;
	struct mrcp_send_wr wr;

	link_init(&l, 2, MRCP_MODE_MRC, NULL);
	memset(&wr, 0, sizeof(wr));
	wr.opcode = 9;
	ASSERT_EQ(-EINVAL, mrcp_qp_post_send(l.fl.eng[0], l.qpn[0], &wr, 0));
	wr.opcode = MRCP_WR_WRITE;
	sge = (struct mrcp_sge){.addr = (uint64_t)(uintptr_t)l.buf[0] + BUF_LEN - 10, .len = 11, .lkey = l.lkey[0]};
	wr.sg_list = &sge;
	wr.num_sge = 1;
	ASSERT_EQ(-EFAULT, mrcp_qp_post_send(l.fl.eng[0], l.qpn[0], &wr, 0));
	sge.lkey ^= 0x100;
	sge.len = 1;
	ASSERT_EQ(-EFAULT, mrcp_qp_post_send(l.fl.eng[0], l.qpn[0], &wr, 0));
	ASSERT_EQ(-ENOENT, mrcp_qp_post_send(l.fl.eng[0], 3, &wr, 0));
	/* a WR holds its region: dereg is refused until it completes */
	ASSERT_EQ(0, post_write(&l, 0, 0, 100, 1, false, 0));
	ASSERT_EQ(-EBUSY, mrcp_mr_dereg(l.fl.eng[0], l.lkey[0]));
	fake_link_run(&l.fl, 10000000, sender_idle, &l, 100000);
	struct mrcp_wc wc[4];
	ASSERT_EQ(1, cq_drain(&l, 0, wc, 4));
	ASSERT_EQ(0, mrcp_mr_dereg(l.fl.eng[0], l.lkey[0]));
	ASSERT_EQ(-ENOENT, mrcp_mr_dereg(l.fl.eng[0], l.lkey[0]));
	link_fini(&l);
}

TEST(engine, write__lossless_places_every_byte_and_completes_once)
{
	struct link l;
	struct mrcp_wc wc[64];
	unsigned n;

	link_init(&l, 4, MRCP_MODE_MRC, NULL);
	fill(&l, 0, 0, 1u << 20, 3);
	for (int i = 0; i < 16; i++)
		ASSERT_EQ(0, post_write(&l, 0, (uint32_t)i << 16, 1u << 16, (uint64_t)i, false, 0));
	fake_link_run(&l.fl, 100000000, sender_idle, &l, 1000000);
	ASSERT_MEMEQ(l.buf[0], l.buf[1], 1u << 20);
	n = cq_drain(&l, 0, wc, 64);
	ASSERT_EQ(16, n);
	for (unsigned i = 0; i < n; i++) {
		ASSERT_EQ(i, wc[i].wr_id);
		ASSERT_EQ(MRCP_WC_SUCCESS, wc[i].status);
		ASSERT_EQ(MRCP_WC_WRITE, wc[i].opcode);
		ASSERT_EQ(1u << 16, wc[i].byte_len);
		ASSERT_EQ(77, wc[i].user_ctx);
	}
	struct mrcp_qp_info qi;
	ASSERT_EQ(0, mrcp_qp_info(l.fl.eng[0], l.qpn[0], &qi));
	ASSERT_EQ(256, qi.c.tx_data_pkts);
	ASSERT_EQ(0, qi.c.rtx_fast + qi.c.rtx_rto + qi.c.rtx_nack);
	ASSERT_EQ(0, cq_drain(&l, 1, wc, 64)); /* plain Writes complete nothing at the responder */
	link_fini(&l);
}

TEST(engine, write_imm__delivers_immediates_in_msn_order)
{
	struct link l;
	struct mrcp_wc wc[64];
	unsigned n;

	link_init(&l, 2, MRCP_MODE_MRC, NULL);
	for (int i = 0; i < 8; i++)
		ASSERT_EQ(0, mrcp_qp_post_recv(l.fl.eng[1], l.qpn[1], 1000 + (uint64_t)i));
	fill(&l, 0, 0, 8 * 10000, 9);
	for (int i = 0; i < 8; i++)
		ASSERT_EQ(0, post_write(&l, 0, (uint32_t)i * 10000, 10000, (uint64_t)i, true, 0xA0 + (uint32_t)i));
	/* zero-length WriteImm too */
	ASSERT_EQ(0, mrcp_qp_post_recv(l.fl.eng[1], l.qpn[1], 2000));
	ASSERT_EQ(0, post_write(&l, 0, 0, 0, 8, true, 0xEE));
	fake_link_run(&l.fl, 100000000, sender_idle, &l, 1000000);
	ASSERT_MEMEQ(l.buf[0], l.buf[1], 8 * 10000);
	n = cq_drain(&l, 1, wc, 64);
	ASSERT_EQ(9, n);
	for (unsigned i = 0; i < n; i++) {
		ASSERT_EQ(MRCP_WC_RECV_IMM, wc[i].opcode);
		ASSERT_EQ(MRCP_WC_SUCCESS, wc[i].status);
		ASSERT_EQ(i < 8 ? 1000 + i : 2000, wc[i].wr_id);
		ASSERT_EQ(i < 8 ? 0xA0 + i : 0xEE, wc[i].imm);
		ASSERT_EQ(i < 8 ? 10000 : 0, wc[i].byte_len);
		ASSERT_EQ(i, wc[i].msn);
	}
	ASSERT_EQ(9, cq_drain(&l, 0, wc, 64));
	link_fini(&l);
}

struct psn_drop {
	int count;      /* first transmissions of data packets to drop */
	int every;      /* drop every Nth data packet (first transmissions) */
	int seen;
	bool all;       /* drop everything from node 0 */
	uint32_t ev;    /* drop every packet on this EV (0 = off) */
};

static bool drop_first_tx(void *ctx, int from, const struct mrcp_tx *tx, const struct fake_link_pkt *p)
{
	struct psn_drop *d = ctx;

	(void)p;
	if (from != 0)
		return false;
	if (d->all)
		return true;
	if (d->ev != 0 && tx->ev == d->ev)
		return true;
	if (!mrcp_opcode_is_data(tx->opcode) || tx->rtx)
		return false;
	d->seen++;
	if (d->every && d->seen % d->every == 0)
		return true;
	if (d->count > 0 && d->seen > 5) {
		d->count--;
		return true;
	}
	return false;
}

TEST(engine, loss__sack_driven_retransmit_on_another_ev)
{
	struct link l;
	struct psn_drop d = {.every = 10};
	struct mrcp_wc wc[64];

	link_init(&l, 4, MRCP_MODE_MRC, NULL);
	l.fl.drop = drop_first_tx;
	l.fl.drop_ctx = &d;
	fill(&l, 0, 0, 2u << 20, 5);
	for (int i = 0; i < 32; i++)
		ASSERT_EQ(0, post_write(&l, 0, (uint32_t)i << 16, 1u << 16, (uint64_t)i, false, 0));
	fake_link_run(&l.fl, 200000000, sender_idle, &l, 2000000);
	ASSERT_MEMEQ(l.buf[0], l.buf[1], 2u << 20);
	ASSERT_EQ(32, cq_drain(&l, 0, wc, 64));
	for (int i = 0; i < 32; i++)
		ASSERT_EQ(MRCP_WC_SUCCESS, wc[i].status);
	struct mrcp_qp_info qi;
	ASSERT_EQ(0, mrcp_qp_info(l.fl.eng[0], l.qpn[0], &qi));
	/* 512 packets, every 10th first transmission dropped: 51 losses,
	 * repaired mostly by SACK inference, never more often than dropped */
	ASSERT_GE(qi.c.rtx_fast + qi.c.rtx_rto, 51);
	ASSERT_GT(qi.c.rtx_fast, 25);
	ASSERT_EQ(MRCP_QPS_RTS, qi.state);
	link_fini(&l);
}

TEST(engine, loss__trimmed_packet_is_nacked_and_resent)
{
	struct link l;
	struct mrcp_wc wc[8];
	struct mrcp_qp_info qi, ri;

	link_init(&l, 2, MRCP_MODE_MRC, NULL);
	fill(&l, 0, 0, 40000, 1);
	l.fl.trim_next = 3;
	ASSERT_EQ(0, post_write(&l, 0, 0, 40000, 1, false, 0));
	fake_link_run(&l.fl, 100000000, sender_idle, &l, 100000);
	ASSERT_MEMEQ(l.buf[0], l.buf[1], 40000);
	ASSERT_EQ(1, cq_drain(&l, 0, wc, 8));
	ASSERT_EQ(0, mrcp_qp_info(l.fl.eng[0], l.qpn[0], &qi));
	ASSERT_EQ(0, mrcp_qp_info(l.fl.eng[1], l.qpn[1], &ri));
	ASSERT_EQ(3, ri.c.rx_trimmed);
	ASSERT_EQ(3, ri.c.nack_tx);
	ASSERT_EQ(3, qi.c.nack_rx);
	ASSERT_EQ(3, qi.c.rtx_nack);
	ASSERT_EQ(0, qi.c.rtx_rto);
	link_fini(&l);
}

static bool drop_window(void *ctx, int from, const struct mrcp_tx *tx, const struct fake_link_pkt *p)
{
	struct link *l = ctx;

	(void)tx;
	(void)p;
	/* everything from node 0 is lost between 20 us and 500 us */
	return from == 0 && l->fl.now >= 20000 && l->fl.now < 500000;
}

TEST(engine, rto__recovers_after_an_outage)
{
	struct link l;
	struct mrcp_wc wc[8];
	struct mrcp_qp_info qi;

	link_init(&l, 2, MRCP_MODE_MRC, NULL);
	l.fl.drop = drop_window;
	l.fl.drop_ctx = &l;
	fill(&l, 0, 0, 1u << 20, 2);
	ASSERT_EQ(0, post_write(&l, 0, 0, 1u << 20, 1, false, 0));
	fake_link_run(&l.fl, 500000000, sender_idle, &l, 2000000);
	if (getenv("DUMP")) dump(&l);
	ASSERT_MEMEQ(l.buf[0], l.buf[1], 1u << 20);
	ASSERT_EQ(1, cq_drain(&l, 0, wc, 8));
	ASSERT_EQ(MRCP_WC_SUCCESS, wc[0].status);
	ASSERT_EQ(0, mrcp_qp_info(l.fl.eng[0], l.qpn[0], &qi));
	ASSERT_GT(qi.c.rto_rounds, 0);
	ASSERT_GT(qi.c.rtx_rto, 0);
	link_fini(&l);
}

TEST(engine, rto__retry_exceeded_flushes_with_errors)
{
	struct link l;
	struct psn_drop d = {.all = true};
	struct mrcp_wc wc[8];
	struct mrcp_event ev[16];
	unsigned n, nev;
	bool saw_error = false;

	link_init(&l, 2, MRCP_MODE_MRC, NULL);
	l.fl.drop = drop_first_tx;
	l.fl.drop_ctx = &d;
	ASSERT_EQ(0, post_write(&l, 0, 0, 5000, 1, false, 0));
	ASSERT_EQ(0, post_write(&l, 0, 5000, 5000, 2, false, 0));
	fake_link_run(&l.fl, 60ull * 1000000000ull, NULL, NULL, 5000000);
	ASSERT_EQ(MRCP_QPS_ERROR, mrcp_qp_state(l.fl.eng[0], l.qpn[0]));
	n = cq_drain(&l, 0, wc, 8);
	ASSERT_EQ(2, n);
	ASSERT_EQ(MRCP_WC_RETRY_EXC_ERR, wc[0].status);
	ASSERT_EQ(MRCP_WC_FLUSH_ERR, wc[1].status);
	while ((nev = mrcp_poll_events(l.fl.eng[0], ev, 16)) != 0)
		for (unsigned i = 0; i < nev; i++)
			if (ev[i].type == MRCP_EVENT_QP_ERROR) {
				saw_error = true;
				ASSERT_EQ(MRCP_QP_ERR_RETRY_EXCEEDED, ev[i].qp_error.cause);
			}
	ASSERT_TRUE(saw_error);
	/* the clock stopped: nothing more to do, no hang */
	ASSERT_U64_EQ(UINT64_MAX, mrcp_next_deadline(l.fl.eng[0]));
	link_fini(&l);
}

TEST(engine, access__bad_rkey_is_a_remote_access_error)
{
	struct link l;
	struct mrcp_sge sge;
	struct mrcp_send_wr wr;
	struct mrcp_wc wc[4];

	link_init(&l, 1, MRCP_MODE_MRC, NULL);
	sge = (struct mrcp_sge){.addr = (uint64_t)(uintptr_t)l.buf[0], .len = 64, .lkey = l.lkey[0]};
	memset(&wr, 0, sizeof(wr));
	wr.opcode = MRCP_WR_WRITE;
	wr.flags = MRCP_WR_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.remote_addr = (uint64_t)(uintptr_t)l.buf[1] + BUF_LEN - 32; /* runs past the region */
	wr.rkey = l.rkey[1];
	ASSERT_EQ(0, mrcp_qp_post_send(l.fl.eng[0], l.qpn[0], &wr, 0));
	l.fl.va_base = (uint64_t)(uintptr_t)l.buf[1];
	fake_link_run(&l.fl, 10000000, NULL, NULL, 10000);
	ASSERT_EQ(MRCP_QPS_ERROR, mrcp_qp_state(l.fl.eng[1], l.qpn[1]));
	ASSERT_EQ(MRCP_QPS_ERROR, mrcp_qp_state(l.fl.eng[0], l.qpn[0]));
	/* the link's log: the Write went, and the answer is a remote-access
	 * NAK (cumulative PSN one before it, no message completed) */
	{
		struct mrcp_qp_info qi;
		char want[160];
		uint32_t psn;

		ASSERT_EQ(0, mrcp_qp_info(l.fl.eng[0], l.qpn[0], &qi));
		psn = (qi.next_psn - 1) & MRCP_PSN_MASK;
		snprintf(want, sizeof(want),
			 "0> WRITE_ONLY psn %u msn 0 va+%u len 64 ackreq; 1> ACK 0x%02x msn 65535 psn %u",
			 psn, BUF_LEN - 32, MRCP_AETH_NAK_REMOTE_ACCESS, (psn - 1) & MRCP_PSN_MASK);
		ASSERT_STREQ(want, l.fl.log);
	}
	ASSERT_EQ(1, cq_drain(&l, 0, wc, 4));
	ASSERT_EQ(MRCP_WC_REM_ACCESS_ERR, wc[0].status);
	link_fini(&l);
}

/* ---- protection domains and keys (D67, D68) ------------------------------------- */

/* A Write from engine 0 on @qpn0 to (@va, @rkey) at engine 1; run the link
 * until nothing moves. @return the requester's completion status. */
static uint8_t write_to(struct link *l, uint32_t qpn0, uint64_t va, uint32_t rkey, uint32_t len)
{
	struct mrcp_sge sge = {.addr = (uint64_t)(uintptr_t)l->buf[0], .len = len, .lkey = l->lkey[0]};
	struct mrcp_send_wr wr = {.wr_id = 5, .opcode = MRCP_WR_WRITE, .flags = MRCP_WR_SIGNALED,
				  .sg_list = &sge, .num_sge = 1, .remote_addr = va, .rkey = rkey};
	struct mrcp_wc wc[4];

	ASSERT_EQ(0, mrcp_qp_post_send(l->fl.eng[0], qpn0, &wr, l->fl.now));
	fake_link_run(&l->fl, l->fl.now + 10000000, NULL, NULL, 10000);
	ASSERT_EQ(1, cq_drain(l, 0, wc, 4));
	ASSERT_EQ(qpn0, wc[0].qpn);
	return wc[0].status;
}

/* A second QP pair: @q0 on engine 0 (default PD), @q1 on engine 1 in @pd1. */
static void pair_up(struct link *l, uint32_t pd1, uint32_t *q0, uint32_t *q1)
{
	struct mrcp_qp_attr a = {.pd = pd1};
	struct mrcp_conn_info c0, c1;

	ASSERT_EQ(0, mrcp_qp_create(l->fl.eng[0], NULL, q0));
	ASSERT_EQ(0, mrcp_qp_create(l->fl.eng[1], &a, q1));
	ASSERT_EQ(0, mrcp_qp_local_info(l->fl.eng[0], *q0, &c0));
	ASSERT_EQ(0, mrcp_qp_local_info(l->fl.eng[1], *q1, &c1));
	ASSERT_EQ(0, mrcp_qp_connect(l->fl.eng[0], *q0, &c1, l->fl.now));
	ASSERT_EQ(0, mrcp_qp_connect(l->fl.eng[1], *q1, &c0, l->fl.now));
}

TEST(engine, access__another_pds_region_is_refused_even_with_its_exact_key_and_va)
{
	struct link l;
	uint32_t pd_v, vl, vr, q0, q1;
	static uint8_t victim[4096], want[4096];

	link_init(&l, 1, MRCP_MODE_MRC, NULL);
	fill(&l, 0, 0, 4096, 3);
	for (unsigned i = 0; i < sizeof(victim); i++)
		victim[i] = want[i] = (uint8_t)(0xA5 ^ i);
	/* the victim's region, in its own PD on engine 1 */
	ASSERT_EQ(0, mrcp_pd_alloc(l.fl.eng[1], &pd_v));
	ASSERT_EQ(0, mrcp_mr_reg_pd(l.fl.eng[1], pd_v, 0x7000000000ull, sizeof(victim), victim,
				    MRCP_ACCESS_LOCAL_WRITE | MRCP_ACCESS_REMOTE_WRITE, &vl, &vr));
	/* the attacker's QP (default PD) is connected and works */
	ASSERT_EQ(MRCP_WC_SUCCESS, write_to(&l, l.qpn[0], (uint64_t)(uintptr_t)l.buf[1], l.rkey[1], 64));
	ASSERT_MEMEQ(l.buf[1], l.buf[0], 64);
	/* the exact key and VA, from the attacker's QP: a remote access error,
	 * both QPs in ERROR, not one byte placed */
	ASSERT_EQ(MRCP_WC_REM_ACCESS_ERR, write_to(&l, l.qpn[0], 0x7000000000ull, vr, 64));
	ASSERT_EQ(MRCP_QPS_ERROR, mrcp_qp_state(l.fl.eng[1], l.qpn[1]));
	ASSERT_MEMEQ(victim, want, sizeof(victim));
	/* a QP of the victim's PD writes it with the same key and VA */
	pair_up(&l, pd_v, &q0, &q1);
	ASSERT_EQ(MRCP_WC_SUCCESS, write_to(&l, q0, 0x7000000000ull + 128, vr, 64));
	ASSERT_MEMEQ(victim + 128, l.buf[0], 64);
	ASSERT_MEMEQ(victim, want, 128);
	ASSERT_MEMEQ(victim + 192, want + 192, sizeof(victim) - 192);
	link_fini(&l);
}

TEST(engine, access__a_deregistered_key_is_refused_at_once)
{
	struct link l;
	uint32_t pd_v, vl, vr, vl2, vr2, q0, q1;
	static uint8_t victim[4096];

	link_init(&l, 1, MRCP_MODE_MRC, NULL);
	ASSERT_EQ(0, mrcp_pd_alloc(l.fl.eng[1], &pd_v));
	ASSERT_EQ(0, mrcp_mr_reg_pd(l.fl.eng[1], pd_v, 0x7000000000ull, sizeof(victim), victim,
				    MRCP_ACCESS_REMOTE_WRITE, &vl, &vr));
	pair_up(&l, pd_v, &q0, &q1);
	ASSERT_EQ(MRCP_WC_SUCCESS, write_to(&l, q0, 0x7000000000ull, vr, 64));
	ASSERT_EQ(0, mrcp_mr_dereg(l.fl.eng[1], vl));
	/* the same memory registered again (a slot is reused last, but even
	 * the same slot gets a new key): the old key is dead */
	ASSERT_EQ(0, mrcp_mr_reg_pd(l.fl.eng[1], pd_v, 0x7000000000ull, sizeof(victim), victim,
				    MRCP_ACCESS_REMOTE_WRITE, &vl2, &vr2));
	ASSERT_NE(vr, vr2);
	memset(victim, 0, sizeof(victim));
	ASSERT_EQ(MRCP_WC_REM_ACCESS_ERR, write_to(&l, q0, 0x7000000000ull, vr, 64));
	ASSERT_EQ(MRCP_QPS_ERROR, mrcp_qp_state(l.fl.eng[1], q1));
	for (unsigned i = 0; i < sizeof(victim); i++)
		ASSERT_EQ(0, victim[i]);
	link_fini(&l);
}

/* The QP_ERROR events engine @i has, into @out (at most 4). */
static unsigned qp_errors(struct link *l, int i, struct mrcp_event *out)
{
	struct mrcp_event ev[32];
	unsigned n, k = 0;

	while ((n = mrcp_poll_events(l->fl.eng[i], ev, 32)) != 0)
		for (unsigned j = 0; j < n; j++)
			if (ev[j].type == MRCP_EVENT_QP_ERROR && k < 4)
				out[k++] = ev[j];
	return k;
}

TEST(engine, write_imm__without_a_receive_is_fatal_on_both_sides_and_says_why)
{
	struct link l;
	struct mrcp_wc wc[4];
	struct mrcp_event ev[4];

	link_init(&l, 1, MRCP_MODE_MRC, NULL);
	ASSERT_EQ(0, post_write(&l, 0, 0, 100, 1, true, 5));
	fake_link_run(&l.fl, 10000000, NULL, NULL, 10000);
	/* D70: the requester's WR fails with the NAK, the responder has
	 * nothing to complete; each side gets one event naming the cause */
	ASSERT_EQ(MRCP_QPS_ERROR, mrcp_qp_state(l.fl.eng[0], l.qpn[0]));
	ASSERT_EQ(MRCP_QPS_ERROR, mrcp_qp_state(l.fl.eng[1], l.qpn[1]));
	ASSERT_EQ(1, cq_drain(&l, 0, wc, 4));
	ASSERT_EQ(MRCP_WC_REM_INV_REQ_ERR, wc[0].status);
	ASSERT_EQ(0, cq_drain(&l, 1, wc, 4));
	ASSERT_EQ(1, qp_errors(&l, 0, ev));
	ASSERT_EQ(MRCP_QP_ERR_REMOTE_INVALID, ev[0].qp_error.cause);
	ASSERT_EQ(MRCP_WC_REM_INV_REQ_ERR, ev[0].qp_error.status);
	ASSERT_EQ(1, qp_errors(&l, 1, ev));
	ASSERT_EQ(l.qpn[1], ev[0].qpn);
	ASSERT_EQ(MRCP_QP_ERR_NO_RECV, ev[0].qp_error.cause);
	ASSERT_EQ(5, ev[0].qp_error.imm);
	ASSERT_EQ(100, ev[0].qp_error.byte_len);
	link_fini(&l);
}

TEST(engine, qp_err_name__every_cause_has_a_name_and_a_line)
{
	ASSERT_STREQ("none", mrcp_qp_err_name(MRCP_QP_ERR_NONE));
	ASSERT_STREQ("no_recv", mrcp_qp_err_name(MRCP_QP_ERR_NO_RECV));
	ASSERT_STREQ("bad_access", mrcp_qp_err_name(MRCP_QP_ERR_BAD_ACCESS));
	ASSERT_STREQ("unknown", mrcp_qp_err_name(MRCP_QP_ERR_COUNT));
	ASSERT_STREQ("a WriteImm arrived with no receive posted", mrcp_qp_err_str(MRCP_QP_ERR_NO_RECV));
	ASSERT_STREQ("unknown cause", mrcp_qp_err_str(200));
	for (unsigned c = 0; c < MRCP_QP_ERR_COUNT; c++) {
		ASSERT_TRUE(strcmp(mrcp_qp_err_name((uint8_t)c), "unknown") != 0);
		ASSERT_GT(strlen(mrcp_qp_err_str((uint8_t)c)), 5);
	}
}

TEST(engine, rc_mode__lossless_and_go_back_n)
{
	struct link l;
	struct psn_drop d = {.count = 1};
	struct mrcp_wc wc[8];
	struct mrcp_qp_info qi;

	link_init(&l, 4, MRCP_MODE_RC, NULL);
	l.fl.drop = drop_first_tx;
	l.fl.drop_ctx = &d;
	fill(&l, 0, 0, 1u << 20, 8);
	ASSERT_EQ(0, post_write(&l, 0, 0, 1u << 20, 1, false, 0));
	fake_link_run(&l.fl, 1000000000, sender_idle, &l, 2000000);
	ASSERT_MEMEQ(l.buf[0], l.buf[1], 1u << 20);
	ASSERT_EQ(1, cq_drain(&l, 0, wc, 8));
	ASSERT_EQ(0, mrcp_qp_info(l.fl.eng[0], l.qpn[0], &qi));
	/* one loss costs an RTO and a go-back-N resend; no fast retransmit */
	ASSERT_EQ(0, qi.c.rtx_fast);
	ASSERT_GE(qi.c.rto_rounds, 1);
	ASSERT_GT(qi.c.rtx_rto, 1);
	link_fini(&l);
}

static bool one_ev_dead_init;
static bool drop_one_ev(void *ctx, int from, const struct mrcp_tx *tx, const struct fake_link_pkt *p)
{
	struct psn_drop *d = ctx;

	(void)p;
	if (from == 0 && !one_ev_dead_init && mrcp_opcode_is_data(tx->opcode)) {
		d->ev = tx->ev; /* the first data EV goes silent for good */
		one_ev_dead_init = true;
	}
	return from == 0 && d->ev != 0 && tx->ev == d->ev;
}

TEST(engine, ev__a_silent_path_is_retired_and_traffic_continues)
{
	struct link l;
	struct psn_drop d = {0};
	struct mrcp_wc wc[64];
	const struct mrcp_ev_set *s;
	int idx;

	one_ev_dead_init = false;
	link_init(&l, 2, MRCP_MODE_MRC, NULL);
	l.fl.drop = drop_one_ev;
	l.fl.drop_ctx = &d;
	fill(&l, 0, 0, 2u << 20, 4);
	for (int i = 0; i < 32; i++)
		ASSERT_EQ(0, post_write(&l, 0, (uint32_t)i << 16, 1u << 16, (uint64_t)i, false, 0));
	fake_link_run(&l.fl, 500000000, sender_idle, &l, 4000000);
	ASSERT_MEMEQ(l.buf[0], l.buf[1], 2u << 20);
	ASSERT_EQ(32, cq_drain(&l, 0, wc, 64));
	s = mrcp_qp_evs(l.fl.eng[0], l.qpn[0]);
	ASSERT_TRUE(s != NULL);
	idx = mrcp_ev_lookup(s, d.ev);
	ASSERT_GE(idx, 0);
	ASSERT_NE(MRCP_EV_GOOD, s->evs[idx].state);
	ASSERT_GT(s->evs[idx].c.transitions, 0);
	link_fini(&l);
}

TEST(engine, port_down__peer_learns_the_mask)
{
	struct link l;
	struct mrcp_event ev[32];
	unsigned n;
	bool seen = false;

	link_init(&l, 4, MRCP_MODE_MRC, NULL);
	ASSERT_EQ(0, mrcp_port_set_link(l.fl.eng[0], 3, false, 0));
	ASSERT_EQ(-EINVAL, mrcp_port_set_link(l.fl.eng[0], 9, false, 0));
	fake_link_run(&l.fl, 5000000, NULL, NULL, 10000);
	n = mrcp_poll_events(l.fl.eng[1], ev, 32);
	for (unsigned i = 0; i < n; i++)
		if (ev[i].type == MRCP_EVENT_PEER_PORTS && ev[i].peer_ports.mask == 0xB)
			seen = true;
	ASSERT_TRUE(seen);
	link_fini(&l);
}

TEST(engine, ev_probe__reports_rtt)
{
	struct link l;
	struct mrcp_event ev[32];
	struct mrcp_ip node;
	unsigned n;
	bool ok = false;

	link_init(&l, 2, MRCP_MODE_MRC, NULL);
	fx_ip(&node, 1, 0);
	ASSERT_EQ(0, mrcp_ev_probe(l.fl.eng[0], &node, 2, 0xC123, 0));
	ASSERT_EQ(-EBUSY, mrcp_ev_probe(l.fl.eng[0], &node, 2, 0xC124, 0)); /* rate limit */
	fake_link_run(&l.fl, 5000000, NULL, NULL, 10000);
	n = mrcp_poll_events(l.fl.eng[0], ev, 32);
	for (unsigned i = 0; i < n; i++)
		if (ev[i].type == MRCP_EVENT_EV_PROBE && ev[i].probe.ok) {
			ok = true;
			ASSERT_EQ(0xC123, ev[i].probe.ev);
			ASSERT_EQ(2, ev[i].probe.port);
			/* 2 us each way, 128 ns timestamp resolution */
			ASSERT_GE(ev[i].probe.rtt_ns, 3800);
			ASSERT_LE(ev[i].probe.rtt_ns, 4200);
		}
	ASSERT_TRUE(ok);
	link_fini(&l);
}

/* Run the lossy transfer once (its engines configured by @tweak) and
 * return a fingerprint of everything the engines counted and when they
 * finished, and (when asked) the scoreboard and message ring slots the
 * two QPs ended with. */
static void lossy_run_cfg(void (*tweak)(struct mrcp_engine_config *), struct mrcp_qp_info *out, uint64_t *end,
			  uint32_t *sb_slots, uint32_t *rm_slots)
{
	struct link l;
	struct psn_drop d = {.every = 7};

	link_init(&l, 4, MRCP_MODE_MRC, tweak);
	l.fl.drop = drop_first_tx;
	l.fl.drop_ctx = &d;
	fill(&l, 0, 0, 1u << 20, 6);
	for (int i = 0; i < 16; i++)
		ASSERT_EQ(0, post_write(&l, 0, (uint32_t)i << 16, 1u << 16, (uint64_t)i, false, 0));
	fake_link_run(&l.fl, 200000000, sender_idle, &l, 2000000);
	ASSERT_MEMEQ(l.buf[0], l.buf[1], 1u << 20);
	ASSERT_EQ(0, mrcp_qp_info(l.fl.eng[0], l.qpn[0], &out[0]));
	ASSERT_EQ(0, mrcp_qp_info(l.fl.eng[1], l.qpn[1], &out[1]));
	*end = l.fl.now;
	if (sb_slots != NULL)
		*sb_slots = mrcp__qp_lookup(l.fl.eng[0], l.qpn[0])->sb_mask + 1;
	if (rm_slots != NULL)
		*rm_slots = mrcp__qp_lookup(l.fl.eng[1], l.qpn[1])->rm_mask + 1;
	link_fini(&l);
}

static void lossy_run(struct mrcp_qp_info *out, uint64_t *end)
{
	lossy_run_cfg(NULL, out, end, NULL, NULL);
}

TEST(engine, determinism__same_seed_same_counters_and_time)
{
	struct mrcp_qp_info a[2], b[2];
	uint64_t ta, tb;

	lossy_run(a, &ta);
	lossy_run(b, &tb);
	ASSERT_U64_EQ(ta, tb);
	for (int n = 0; n < 2; n++) {
		ASSERT_EQ(0, memcmp(&a[n].c, &b[n].c, sizeof(a[n].c)));
		ASSERT_U64_EQ(a[n].cc.cwnd, b[n].cc.cwnd);
		ASSERT_EQ(a[n].next_psn, b[n].next_psn);
	}
	ASSERT_GT(a[0].c.rtx_fast + a[0].c.rtx_rto, 0); /* the run did recover losses */
}

struct tx_times {
	uint64_t t[64];
	unsigned n;
	struct link *l;
};

static bool record_and_drop(void *ctx, int from, const struct mrcp_tx *tx, const struct fake_link_pkt *p)
{
	struct tx_times *r = ctx;

	(void)p;
	if (from == 0 && mrcp_opcode_is_data(tx->opcode) && r->n < 64)
		r->t[r->n++] = r->l->fl.now;
	return from == 0;
}

TEST(engine, rto__exact_schedule_linear_then_exponential)
{
	struct link l;
	struct tx_times r = {.l = &l};
	const uint64_t T = 1024ull << 6; /* timeout 6: 65.536 us (§4.5) */
	struct mrcp_qp_info qi;

	link_init(&l, 1, MRCP_MODE_MRC, NULL);
	l.fl.drop = record_and_drop;
	l.fl.drop_ctx = &r;
	ASSERT_EQ(0, post_write(&l, 0, 0, 100, 1, false, 0));
	fake_link_run(&l.fl, 60ull * 1000000000ull, NULL, NULL, 1000000);
	ASSERT_EQ(MRCP_QPS_ERROR, mrcp_qp_state(l.fl.eng[0], l.qpn[0]));
	ASSERT_EQ(0, mrcp_qp_info(l.fl.eng[0], l.qpn[0], &qi));
	/* D65: the first linear_cnt (7) expiries, T apart, are silent rounds
	 * (nothing acknowledged: probes, no resend, k counted per period);
	 * from the 8th on they are RTO rounds, each resending with the backoff
	 * of §4.5 (b = 2 first: the 8th round falls in the period the 7th
	 * counted), until k reaches linear_cnt 7 + exp_cnt 12 and ends the QP
	 * (D33): the first send and 12 retransmissions */
	ASSERT_EQ(7, qi.c.silent_rounds);
	ASSERT_EQ(13, qi.c.rto_rounds);
	ASSERT_EQ(13, r.n);
	ASSERT_GE(r.t[1] - r.t[0], 8 * T);
	ASSERT_LE(r.t[1] - r.t[0], 8 * T + 8 * 1024);
	for (unsigned i = 2; i < r.n; i++) {
		uint64_t expect = T << (i - 1);
		uint64_t got = r.t[i] - r.t[i - 1];
		ASSERT_GE(got, expect);
		ASSERT_LE(got, expect + 3 * 1024); /* timer ticks are 1.024 us */
	}
	link_fini(&l);
}

TEST(engine, write_imm__outstanding_limit_holds_later_messages)
{
	struct link l;
	struct mrcp_wc wc[64];
	struct mrcp_qp_info qi;

	link_init(&l, 1, MRCP_MODE_MRC, NULL);
	for (int i = 0; i < 40; i++)
		ASSERT_EQ(0, mrcp_qp_post_recv(l.fl.eng[1], l.qpn[1], (uint64_t)i));
	for (int i = 0; i < 40; i++)
		ASSERT_EQ(0, post_write(&l, 0, (uint32_t)i * 64, 64, (uint64_t)i, true, (uint32_t)i));
	/* 40 outstanding WriteImms fit the default limit of 128 (D25) */
	fake_link_run(&l.fl, 100000000, sender_idle, &l, 100000);
	ASSERT_EQ(40, cq_drain(&l, 1, wc, 64));
	ASSERT_EQ(0, mrcp_qp_info(l.fl.eng[0], l.qpn[0], &qi));
	ASSERT_EQ(0, qi.sq_outstanding);
	link_fini(&l);
}

static void small_wimm(struct mrcp_engine_config *c)
{
	c->max_wimm = 4;
}

TEST(engine, write_imm__peer_limit_caps_outstanding)
{
	struct link l;
	struct mrcp_wc wc[64];
	struct mrcp_tx tx[64];
	unsigned n, imm_first = 0;

	link_init(&l, 1, MRCP_MODE_MRC, small_wimm);
	for (int i = 0; i < 10; i++)
		ASSERT_EQ(0, post_write(&l, 0, (uint32_t)i * 64, 64, (uint64_t)i, true, (uint32_t)i));
	/* before any AETH, only min(max_wimm, max_wimm_dest) = 4 messages go */
	n = mrcp_poll(l.fl.eng[0], 0, tx, 64);
	for (unsigned i = 0; i < n; i++)
		if (tx[i].opcode == MRCP_OP_WRITE_ONLY_IMM)
			imm_first++;
	ASSERT_EQ(4, imm_first);
	for (int i = 0; i < 10; i++)
		ASSERT_EQ(0, mrcp_qp_post_recv(l.fl.eng[1], l.qpn[1], (uint64_t)i));
	for (unsigned i = 0; i < n; i++)
		fake_link_send(&l.fl, 0, &tx[i]);
	fake_link_run(&l.fl, 100000000, sender_idle, &l, 100000);
	ASSERT_EQ(10, cq_drain(&l, 1, wc, 64));
	ASSERT_EQ(10, cq_drain(&l, 0, wc, 64));
	link_fini(&l);
}

static void tiny_cq(struct mrcp_engine_config *c)
{
	c->cq_size = 4;
}

TEST(engine, cq__full_queue_holds_completions_back_in_order)
{
	struct link l;
	struct mrcp_wc wc[4];
	unsigned got = 0, k;
	struct mrcp_engine_counters ec;

	link_init(&l, 1, MRCP_MODE_MRC, tiny_cq);
	for (int i = 0; i < 12; i++)
		ASSERT_EQ(0, post_write(&l, 0, (uint32_t)i * 100, 100, (uint64_t)i, false, 0));
	fake_link_run(&l.fl, 100000000, NULL, NULL, 100000);
	mrcp_engine_counters(l.fl.eng[0], &ec);
	ASSERT_GT(ec.cq_overflow, 0);
	/* draining lets the held completions through, still in order */
	while ((k = mrcp_poll_cq(l.fl.eng[0], wc, 4)) != 0)
		for (unsigned i = 0; i < k; i++)
			ASSERT_EQ(got++, wc[i].wr_id);
	ASSERT_EQ(12, got);
	link_fini(&l);
}

TEST(engine, qp_create__table_full_and_mr_table_full)
{
	struct mrcp_engine_config c;
	struct mrcp_engine *e;
	uint32_t qpn, lk, rk;
	uint8_t b[16];

	mrcp_engine_config_defaults(&c);
	c.max_qps = 2;
	c.max_mrs = 1;
	ASSERT_EQ(0, mrcp_engine_create(&c, &e));
	ASSERT_EQ(0, mrcp_qp_create(e, NULL, &qpn));
	ASSERT_EQ(0, mrcp_qp_create(e, NULL, &qpn));
	ASSERT_EQ(-ENOSPC, mrcp_qp_create(e, NULL, &qpn));
	ASSERT_EQ(0, mrcp_qp_destroy(e, qpn, 0));
	ASSERT_EQ(0, mrcp_qp_create(e, NULL, &qpn));
	ASSERT_EQ(0, mrcp_mr_reg(e, 0x1000, sizeof(b), b, MRCP_ACCESS_REMOTE_WRITE, &lk, &rk));
	ASSERT_EQ(-ENOSPC, mrcp_mr_reg(e, 0x2000, sizeof(b), b, MRCP_ACCESS_REMOTE_WRITE, &lk, &rk));
	ASSERT_EQ(-EINVAL, mrcp_mr_reg(e, 0x2000, 0, b, MRCP_ACCESS_REMOTE_WRITE, &lk, &rk));
	mrcp_engine_destroy(e);
}

TEST(engine, pd_alloc__handles_die_when_freed_and_the_table_is_bounded)
{
	struct mrcp_engine_config c;
	struct mrcp_engine *e;
	uint32_t pd[3], again, lk, rk, qpn;
	uint8_t b[16];
	struct mrcp_qp_attr a = {0};

	mrcp_engine_config_defaults(&c);
	c.max_pds = 2;
	ASSERT_EQ(0, mrcp_engine_create(&c, &e));
	ASSERT_TRUE(e->pds == NULL); /* made at the first allocation */
	ASSERT_EQ(0, mrcp_pd_alloc(e, &pd[0]));
	ASSERT_EQ(0, mrcp_pd_alloc(e, &pd[1]));
	ASSERT_NE(MRCP_PD_DEFAULT, pd[0]);
	ASSERT_NE(pd[0], pd[1]);
	ASSERT_EQ(-ENOSPC, mrcp_pd_alloc(e, &pd[2]));
	ASSERT_EQ(0, mrcp_pd_free(e, pd[0]));
	ASSERT_EQ(-ENOENT, mrcp_pd_free(e, pd[0]));
	ASSERT_EQ(0, mrcp_pd_alloc(e, &again)); /* the same slot, a new handle */
	ASSERT_NE(pd[0], again);
	/* the dead handle names nothing */
	ASSERT_EQ(-ENOENT, mrcp_mr_reg_pd(e, pd[0], 0x1000, sizeof(b), b, MRCP_ACCESS_REMOTE_WRITE, &lk, &rk));
	a.pd = pd[0];
	ASSERT_EQ(-ENOENT, mrcp_qp_create(e, &a, &qpn));
	ASSERT_EQ(-ENOENT, mrcp_pd_free(e, 0x12345));
	ASSERT_EQ(-EINVAL, mrcp_pd_free(e, MRCP_PD_DEFAULT));
	mrcp_engine_destroy(e);
	/* max_pds 0: the default PD only; 65536 does not fit a handle */
	c.max_pds = 0;
	ASSERT_EQ(0, mrcp_engine_create(&c, &e));
	ASSERT_EQ(-ENOSPC, mrcp_pd_alloc(e, &pd[0]));
	mrcp_engine_destroy(e);
	c.max_pds = 65536;
	ASSERT_EQ(-EINVAL, mrcp_engine_create(&c, &e));
}

TEST(engine, pd_free__refused_while_it_holds_regions_or_qps)
{
	struct mrcp_engine_config c;
	struct mrcp_engine *e;
	uint32_t pd, lk, rk, qpn;
	uint8_t b[16];
	struct mrcp_qp_attr a = {0};

	mrcp_engine_config_defaults(&c);
	ASSERT_EQ(0, mrcp_engine_create(&c, &e));
	ASSERT_EQ(0, mrcp_pd_alloc(e, &pd));
	ASSERT_EQ(0, mrcp_mr_reg_pd(e, pd, 0x1000, sizeof(b), b, MRCP_ACCESS_REMOTE_WRITE, &lk, &rk));
	a.pd = pd;
	ASSERT_EQ(0, mrcp_qp_create(e, &a, &qpn));
	ASSERT_EQ(-EBUSY, mrcp_pd_free(e, pd));
	ASSERT_EQ(0, mrcp_mr_dereg(e, lk));
	ASSERT_EQ(-EBUSY, mrcp_pd_free(e, pd));
	ASSERT_EQ(0, mrcp_qp_destroy(e, qpn, 0));
	ASSERT_EQ(0, mrcp_pd_free(e, pd));
	mrcp_engine_destroy(e);
}

/* D68: with max_mrs 1024 a key is 10 slot bits and 22 random bits. Over
 * 4096 registrations (and deregistrations, so slots are reused): every
 * random bit is set about half the time, no key repeats, the next key is
 * not the last one plus a small step, a slot's keys differ each time, and
 * the engine's main PRNG is never drawn from (mrc-sim replays unchanged). */
TEST(engine, mr_reg__keys_are_random_beyond_the_slot_bits)
{
	enum { N = 4096, TAG_BITS = 22 };
	struct mrcp_engine_config c;
	struct mrcp_engine *e;
	static uint32_t keys[N];
	static uint8_t b[64];
	unsigned ones[32] = {0}, near = 0, dup = 0, same_slot_same_key = 0;
	struct mrcp_prng main_before;
	uint32_t lk, rk, last_of_slot[1024] = {0};

	mrcp_engine_config_defaults(&c);
	c.seed = 42;
	ASSERT_EQ(0, mrcp_engine_create(&c, &e));
	ASSERT_EQ(10, e->mr_slot_bits);
	main_before = e->prng;
	for (unsigned i = 0; i < N; i++) {
		ASSERT_EQ(0, mrcp_mr_reg(e, 0x1000, sizeof(b), b, MRCP_ACCESS_REMOTE_WRITE, &lk, &rk));
		ASSERT_EQ(lk, rk);
		keys[i] = rk;
		/* the first 1000 of every third stay registered, so slots
		 * are reused unevenly */
		if (i % 3 != 2 || i > 3000)
			ASSERT_EQ(0, mrcp_mr_dereg(e, lk));
	}
	ASSERT_MEMEQ(&main_before, &e->prng, sizeof(main_before));
	for (unsigned i = 0; i < N; i++) {
		uint32_t tag = keys[i] >> 10, slot = keys[i] & 1023;

		ASSERT_NE(0, tag);
		for (unsigned bit = 0; bit < TAG_BITS; bit++)
			ones[bit] += tag >> bit & 1;
		if (i > 0) {
			uint32_t step = (keys[i] - keys[i - 1]) >> 10; /* in tag units */
			near += step < 16 || step > (1u << TAG_BITS) - 16;
		}
		if (last_of_slot[slot] == keys[i])
			same_slot_same_key++;
		last_of_slot[slot] = keys[i];
		for (unsigned j = 0; j < i; j++)
			dup += keys[j] == keys[i];
	}
	/* N/2 +- 5 sigma (sigma = sqrt(N)/2 = 32) */
	for (unsigned bit = 0; bit < TAG_BITS; bit++) {
		ASSERT_GT(ones[bit], N / 2 - 160);
		ASSERT_LT(ones[bit], N / 2 + 160);
	}
	/* a 1-in-2^18 chance per pair for "near"; none expected */
	ASSERT_LE(near, 1);
	ASSERT_EQ(0, same_slot_same_key);
	/* ~N^2/2 pairs over 2^32 keys: 0.002 expected */
	ASSERT_LE(dup, 1);
	mrcp_engine_destroy(e);
}

TEST(engine, mr_reg__key_stream_follows_key_seed_or_else_seed)
{
	struct mrcp_engine_config c;
	struct mrcp_engine *e[3];
	uint32_t k[3][8], lk;
	static uint8_t b[64];
	unsigned same01 = 0, same02 = 0;

	mrcp_engine_config_defaults(&c);
	c.seed = 9;
	ASSERT_EQ(0, mrcp_engine_create(&c, &e[0]));
	ASSERT_EQ(0, mrcp_engine_create(&c, &e[1])); /* a replay: the same keys */
	c.key_seed = 0x1234567890abcdefull;      /* the daemon's case: fresh bits */
	ASSERT_EQ(0, mrcp_engine_create(&c, &e[2]));
	for (int n = 0; n < 3; n++)
		for (int i = 0; i < 8; i++)
			ASSERT_EQ(0, mrcp_mr_reg(e[n], 0x1000, sizeof(b), b, 0, &lk, &k[n][i]));
	for (int i = 0; i < 8; i++) {
		same01 += k[0][i] == k[1][i];
		same02 += k[0][i] == k[2][i];
	}
	ASSERT_EQ(8, same01);
	ASSERT_EQ(0, same02);
	for (int n = 0; n < 3; n++)
		mrcp_engine_destroy(e[n]);
}

TEST(engine, engine_create__rejects_bad_config)
{
	struct mrcp_engine_config c;
	struct mrcp_engine *e;

	mrcp_engine_config_defaults(&c);
	c.mtu = 1500;
	ASSERT_EQ(-EINVAL, mrcp_engine_create(&c, &e));
	mrcp_engine_config_defaults(&c);
	c.n_ports = 9;
	ASSERT_EQ(-EINVAL, mrcp_engine_create(&c, &e));
	mrcp_engine_config_defaults(&c);
	memcpy(c.cc, "nope", 5);
	ASSERT_EQ(-EINVAL, mrcp_engine_create(&c, &e));
	mrcp_engine_config_defaults(&c);
	c.timeout = 25;
	ASSERT_EQ(-EINVAL, mrcp_engine_create(&c, &e));
}

static bool drop_tail(void *ctx, int from, const struct mrcp_tx *tx, const struct fake_link_pkt *p)
{
	struct psn_drop *d = ctx;

	(void)p;
	if (from != 0 || !mrcp_opcode_is_data(tx->opcode) || tx->rtx)
		return false;
	return ++d->seen > 7; /* packets 8..10 of a 10-packet message */
}

TEST(engine, tlp__answer_repairs_a_lost_tail_without_rto)
{
	struct link l;
	struct psn_drop d = {0};
	struct mrcp_wc wc[4];
	struct mrcp_qp_info qi;

	link_init(&l, 2, MRCP_MODE_MRC, NULL);
	l.fl.drop = drop_tail;
	l.fl.drop_ctx = &d;
	fill(&l, 0, 0, 10 * 4096, 3);
	ASSERT_EQ(0, post_write(&l, 0, 0, 10 * 4096, 1, false, 0));
	fake_link_run(&l.fl, 100000000, sender_idle, &l, 100000);
	ASSERT_MEMEQ(l.buf[0], l.buf[1], 10 * 4096);
	ASSERT_EQ(1, cq_drain(&l, 0, wc, 4));
	ASSERT_EQ(0, mrcp_qp_info(l.fl.eng[0], l.qpn[0], &qi));
	/* nothing after the tail was SACKed: the tail-loss probe's answer is
	 * what declares the three lost (RACK-TLP, D36), long before the RTO;
	 * the probe goes on every plane (D65), the answer covers the tail */
	ASSERT_EQ(2, qi.c.probe_tx);
	ASSERT_EQ(3, qi.c.rtx_fast);
	ASSERT_EQ(0, qi.c.rto_rounds);
	/* within one RTO (T = 65.5 us), and D65 costs the tail at most an RTT
	 * (4 us here): it is done at 41.0 us, as before D65 */
	ASSERT_LT(l.fl.now, 65536);
	ASSERT_LT(l.fl.now, 41000 + 4000);
	link_fini(&l);
}

/* Replace the link's QPs by a pair whose sender runs CC algorithm @ops,
 * registered in node 0's registry (white box: no public registration). */
static void cc_qp(struct link *l, const struct mrcp_cc_ops *ops)
{
	struct mrcp_qp_attr a = {.cc = ops->name};
	struct mrcp_conn_info ci0, ci1;
	uint32_t q0, q1;

	ASSERT_EQ(0, mrcp_cc_register(&l->fl.eng[0]->ccreg, ops));
	ASSERT_EQ(0, mrcp_qp_create(l->fl.eng[0], &a, &q0));
	ASSERT_EQ(0, mrcp_qp_create(l->fl.eng[1], NULL, &q1));
	ASSERT_EQ(0, mrcp_qp_local_info(l->fl.eng[0], q0, &ci0));
	ASSERT_EQ(0, mrcp_qp_local_info(l->fl.eng[1], q1, &ci1));
	ASSERT_EQ(0, mrcp_qp_connect(l->fl.eng[0], q0, &ci1, 0));
	ASSERT_EQ(0, mrcp_qp_connect(l->fl.eng[1], q1, &ci0, 0));
	l->qpn[0] = q0;
	l->qpn[1] = q1;
}

/* On a fresh link (@tweak as link_init's), a sender QP running @ops moves
 * @len bytes through @drop; @qi: the sender QP after it. The link stays up
 * for the caller to look at and link_fini(). */
static void cc_transfer(struct link *l, const struct mrcp_cc_ops *ops,
			void (*tweak)(struct mrcp_engine_config *), fake_link_drop_fn drop,
			void *drop_ctx, uint32_t len, struct mrcp_qp_info *qi)
{
	link_init(l, 2, MRCP_MODE_MRC, tweak);
	cc_qp(l, ops);
	l->fl.drop = drop;
	l->fl.drop_ctx = drop_ctx;
	fill(l, 0, 0, len, 4);
	ASSERT_EQ(0, post_write(l, 0, 0, len, 1, false, 0));
	fake_link_run(&l->fl, 100000000, sender_idle, l, 1000000);
	ASSERT_MEMEQ(l->buf[0], l->buf[1], len);
	ASSERT_EQ(0, mrcp_qp_info(l->fl.eng[0], l->qpn[0], qi));
}

/* A CC with fixed's window that counts the loss signals the engine gives. */
static unsigned rec_loss;
static void rec_on_loss(void *priv, uint64_t bytes, uint64_t inflight, uint64_t now)
{
	(void)priv;
	(void)bytes;
	(void)inflight;
	(void)now;
	rec_loss++;
}

static void trimming(struct mrcp_engine_config *c)
{
	c->trimming_fabric = true;
}

/* 1 MiB with the first 4 data packets lost; @qi: the sender QP after it. */
static void lossy_hooks(bool trim_fabric, struct mrcp_qp_info *qi)
{
	struct link l;
	struct psn_drop d = {.count = 4};
	static struct mrcp_cc_ops rec;

	rec = mrcp_cc_fixed;
	memcpy(rec.name, "rec", 4);
	rec.on_loss = rec_on_loss;
	rec_loss = 0;
	cc_transfer(&l, &rec, trim_fabric ? trimming : NULL, drop_first_tx, &d, 1u << 20, qi);
	link_fini(&l);
}

TEST(engine, loss__silent_loss_on_a_trimming_fabric_is_not_a_cc_signal)
{
	struct mrcp_qp_info qi;

	/* D61: on a trimming fabric a silent loss is a dead path, handled by
	 * the EV state machine; the bytes only leave inflight */
	lossy_hooks(true, &qi);
	ASSERT_EQ(0, rec_loss);
	ASSERT_EQ(4, qi.c.losses);
	ASSERT_U64_EQ(0, qi.cc.inflight); /* they left it all the same */
	/* elsewhere it is a congestion signal (§6.3) */
	lossy_hooks(false, &qi);
	ASSERT_EQ(4, rec_loss);
	ASSERT_EQ(4, qi.c.losses);
	ASSERT_U64_EQ(0, qi.cc.inflight);
}

/* A new algorithm as small as one can be: a window of two nominal packets,
 * no signal hooks and no inflight code at all (mrcp_cc.h). */
struct tiny {
	uint64_t cwnd; /* bytes */
};

static int tiny_init(void *priv, const struct mrcp_cc_params *p, uint64_t now_ns)
{
	struct tiny *t = priv;

	(void)now_ns;
	t->cwnd = 2 * ((uint64_t)p->mtu + p->pkt_overhead);
	return 0;
}

static uint64_t tiny_cwnd(const void *priv)
{
	const struct tiny *t = priv;

	return t->cwnd;
}

static void tiny_stats(const void *priv, struct mrcp_cc_stats *out)
{
	memset(out, 0, sizeof(*out));
	out->cwnd = tiny_cwnd(priv);
}

struct flight_rec {
	struct link *l;
	uint64_t max_inflight; /* bytes, the sender's QPCC, seen at each send */
	unsigned data;         /* data packets sent by node 0 */
};

/* Record the sender's inflight; lose every 16th data packet from node 0. */
static bool rec_flight(void *ctx, int from, const struct mrcp_tx *tx, const struct fake_link_pkt *p)
{
	struct flight_rec *r = ctx;
	struct mrcp_qp_info qi;

	(void)p;
	if (from != 0 || !mrcp_opcode_is_data(tx->opcode))
		return false;
	ASSERT_EQ(0, mrcp_qp_info(r->l->fl.eng[0], r->l->qpn[0], &qi));
	if (qi.cc.inflight > r->max_inflight)
		r->max_inflight = qi.cc.inflight;
	return ++r->data % 16 == 0;
}

TEST(engine, cc__a_new_algorithm_needs_no_inflight_code)
{
	static const struct mrcp_cc_ops tiny = {
		.name = "tiny", .priv_size = sizeof(struct tiny),
		.init = tiny_init, .cwnd = tiny_cwnd, .stats = tiny_stats,
	};
	struct link l;
	struct flight_rec r = {.l = &l};
	struct mrcp_qp_info qi;
	char why[256];

	cc_transfer(&l, &tiny, NULL, rec_flight, &r, 256u << 10, &qi);
	/* the engine kept the count and held the window for it */
	ASSERT_GT(r.data, 64);
	ASSERT_GT(qi.c.losses + qi.c.rtx_rto, 0);
	ASSERT_GT(qi.c.stalls_cwnd, 0);
	ASSERT_GT(r.max_inflight, 0);
	ASSERT_LE(r.max_inflight, qi.cc.cwnd);
	ASSERT_U64_EQ(0, qi.cc.inflight);
	ASSERT_EQ(0, mrcp__check_invariants(l.fl.eng[0], why, sizeof(why)));
	link_fini(&l);
}

TEST(engine, rev_ev__a_receive_only_qp_probes_its_reverse_paths)
{
	struct link l;
	struct mrcp_event ev[256];
	struct mrcp_engine_counters c0, c1;
	unsigned n, ok = 0;
	uint8_t planes_seen = 0;

	link_init(&l, 4, MRCP_MODE_MRC, NULL);
	fill(&l, 0, 0, 1u << 20, 9);
	/* data keeps arriving for 160 us: a 64 KiB write every 10 us */
	for (int i = 0; i < 16; i++) {
		ASSERT_EQ(0, post_write(&l, 0, (uint32_t)i << 16, 1u << 16, (uint64_t)i, false, 0));
		fake_link_run(&l.fl, l.fl.now + 10000, NULL, NULL, 100000);
		l.fl.now = (uint64_t)(i + 1) * 10000;
	}
	fake_link_run(&l.fl, 100000000, sender_idle, &l, 1000000);
	fake_link_run(&l.fl, l.fl.now + 20000, NULL, NULL, 100000); /* the last answers */
	ASSERT_MEMEQ(l.buf[0], l.buf[1], 1u << 20);
	mrcp_engine_counters(l.fl.eng[0], &c0);
	mrcp_engine_counters(l.fl.eng[1], &c1);
	/* D48: the receiver sends EV probes (one per base RTT while data
	 * arrives); the sender, whose SACKed data teaches it, sends none */
	ASSERT_GT(c1.ep_tx, 0);
	ASSERT_EQ(0, c0.ep_tx - c0.ep_rx); /* the sender only answers */
	n = mrcp_poll_events(l.fl.eng[1], ev, 256);
	for (unsigned i = 0; i < n; i++)
		if (ev[i].type == MRCP_EVENT_EV_PROBE && ev[i].probe.ok) {
			ok++;
			planes_seen |= (uint8_t)(1u << (ev[i].probe.port - 1));
		}
	ASSERT_GT(ok, 3);
	ASSERT_EQ(0xF, planes_seen); /* the planes in turn */
	link_fini(&l);
}

/* ---- source validation (D69) ----------------------------------------------- */

/* Hand engine @n one hand-made packet as if it arrived on our port @port
 * from @src, at the link's time. */
static void inject(struct link *l, int n, const struct mrcp_pkt *p, const struct mrcp_ip *src, uint8_t port)
{
	static uint8_t raw[FAKE_LINK_PKT_MAX];
	struct mrcp_rx rx;

	fx_rx_pkt(&rx, raw, sizeof(raw), p, port, src);
	rx.ev = 0xC0DE;
	rx.ecn = MRCP_ECN_CE; /* a verdict and a CC signal, were it believed */
	mrcp_rx_burst(l->fl.eng[n], &rx, 1, l->fl.now);
}

/* A WRITE_ONLY of 64 B to node @n's QP @qpn: @psn, @msn, @rkey, at the
 * start of node @n's buffer. */
static void spoof_write(struct link *l, int n, uint32_t qpn, struct mrcp_pkt *p, uint32_t psn, uint16_t msn,
			uint32_t rkey)
{
	static const uint8_t junk[64] = {0xEE, 0xEE, 0xEE, 0xEE};

	ASSERT_EQ(0, mrcp_pkt_init(p, MRCP_OP_WRITE_ONLY, qpn, psn));
	p->bth.ack_req = true;
	p->meth.msn = msn;
	p->reth.va = (uint64_t)(uintptr_t)l->buf[n];
	p->reth.rkey = rkey;
	p->reth.dma_len = sizeof(junk);
	p->payload = junk;
	p->payload_len = sizeof(junk);
}

/* Everything a packet could change in @e about QP @qpn, byte for byte: the
 * QP, its peer and QPCC, scoreboard, receive bitmap, message table and EVs,
 * the engine's counters but rx_pkts and rx_foreign_src, what the engine
 * queued (control packets, completions, events, ready and burst lists)
 * and its next timer. */
struct snap {
	uint8_t b[1u << 21];
	size_t n;
};

static void snap_add(struct snap *s, const void *p, size_t len)
{
	ASSERT_LE(s->n + len, sizeof(s->b));
	memcpy(s->b + s->n, p, len);
	s->n += len;
}

static void snap_take(struct snap *s, struct mrcp_engine *e, uint32_t qpn)
{
	struct qp *qp = mrcp__qp_lookup(e, qpn);
	struct mrcp_engine_counters c;
	uint64_t q[8];

	ASSERT_TRUE(qp != NULL && qp->peer != NULL && qp->cc != NULL);
	s->n = 0;
	snap_add(s, qp, sizeof(*qp));
	snap_add(s, qp->peer, sizeof(*qp->peer));
	snap_add(s, qp->cc->priv, qp->cc->ops->priv_size);
	snap_add(s, &qp->cc->inflight, sizeof(qp->cc->inflight));
	snap_add(s, qp->sb, (qp->sb_mask + 1) * sizeof(*qp->sb));
	snap_add(s, qp->rbits, (qp->rbits_mask + 1) / 64 * sizeof(*qp->rbits));
	snap_add(s, qp->rm, (qp->rm_mask + 1) * sizeof(*qp->rm));
	snap_add(s, qp->evs.evs, qp->evs.n_evs * sizeof(*qp->evs.evs));
	snap_add(s, qp->evs.perm, qp->evs.n_perm * sizeof(*qp->evs.perm));
	mrcp_engine_counters(e, &c);
	c.rx_pkts = c.rx_foreign_src = 0;
	snap_add(s, &c, sizeof(c));
	q[0] = e->ctl_tail;
	q[1] = e->cq_tail;
	q[2] = e->evq_tail;
	q[3] = e->ready_head;
	q[4] = e->burst_head;
	q[5] = mrcp_timer_wheel_next(&e->wheel);
	q[6] = e->stall_end_ns;
	q[7] = e->peers_hw;
	snap_add(s, q, sizeof(q));
}

static struct snap snap_before, snap_after;

static void assert_unchanged(struct mrcp_engine *e, uint32_t qpn, const struct snap *before)
{
	snap_take(&snap_after, e, qpn);
	ASSERT_EQ(before->n, snap_after.n);
	ASSERT_MEMEQ(before->b, snap_after.b, before->n);
}

static uint64_t foreign(struct link *l, int n)
{
	struct mrcp_engine_counters c;

	mrcp_engine_counters(l->fl.eng[n], &c);
	return c.rx_foreign_src;
}

/* Node 0 has sent part of 16 x 64 KiB (data in flight, SACKs due), over
 * two planes. */
static void midway(struct link *l)
{
	link_init(l, 2, MRCP_MODE_MRC, NULL);
	fill(l, 0, 0, 1u << 20, 5);
	for (int i = 0; i < 16; i++)
		ASSERT_EQ(0, post_write(l, 0, (uint32_t)i << 16, 1u << 16, (uint64_t)i, false, 0));
	fake_link_run(&l->fl, 30000, NULL, NULL, 100000);
	ASSERT_GT(fake_link_in_flight(&l->fl), 0);
}

/* ...and it finishes: every byte placed, every completion a success, both
 * QPs still RTS. */
static void finish_ok(struct link *l)
{
	struct mrcp_wc wc[64];
	unsigned n;

	fake_link_run(&l->fl, 100000000, sender_idle, l, 1000000);
	ASSERT_MEMEQ(l->buf[0], l->buf[1], 1u << 20);
	n = cq_drain(l, 0, wc, 64);
	ASSERT_EQ(16, n);
	for (unsigned i = 0; i < n; i++)
		ASSERT_EQ(MRCP_WC_SUCCESS, wc[i].status);
	ASSERT_EQ(MRCP_QPS_RTS, mrcp_qp_state(l->fl.eng[0], l->qpn[0]));
	ASSERT_EQ(MRCP_QPS_RTS, mrcp_qp_state(l->fl.eng[1], l->qpn[1]));
}

TEST(engine, rx_qp__writes_from_a_foreign_source_to_a_live_qpn_change_nothing)
{
	struct link l;
	struct mrcp_pkt p;
	struct mrcp_ip src[5];
	struct qp *rq;
	uint64_t sent = 0;

	midway(&l);
	rq = mrcp__qp_lookup(l.fl.eng[1], l.qpn[1]);
	/* node 1 knows node 0 as 10.1.0.1 on plane 1 and 10.2.0.1 on plane 2 */
	fx_ip(&src[0], 7, 1);                 /* on the subnet, another host */
	memset(&src[1], 0, sizeof(src[1]));   /* off the subnet: 192.0.2.1 */
	src[1].family = 4;
	memcpy(src[1].a, (const uint8_t[]){192, 0, 2, 1}, 4);
	fx_ip(&src[2], 0, 2);                 /* the peer's plane-2 address, on plane 1 */
	fx_ip(&src[3], 0, 0);                 /* the peer's node address: not a port's */
	fx_ip(&src[4], 0, 1);                 /* the peer's plane-1 bytes as IPv6 */
	src[4].family = 6;
	snap_take(&snap_before, l.fl.eng[1], l.qpn[1]);
	for (unsigned k = 0; k < 5; k++) {
		uint32_t next = (rq->rcv_cack + 1) & MRCP_PSN_MASK;

		/* the next PSN, a valid key: would be placed */
		spoof_write(&l, 1, l.qpn[1], &p, next, rq->rcv_msn, l.rkey[1]);
		inject(&l, 1, &p, &src[k], 1);
		/* a wrong key: would be a remote access error (ERROR) */
		spoof_write(&l, 1, l.qpn[1], &p, next, rq->rcv_msn, l.rkey[1] ^ 0x5500);
		inject(&l, 1, &p, &src[k], 1);
		/* a reused MSN: would be an invalid request (ERROR) */
		spoof_write(&l, 1, l.qpn[1], &p, next, (uint16_t)(rq->rcv_msn - 1), l.rkey[1]);
		inject(&l, 1, &p, &src[k], 1);
		/* beyond the window: would be NACKed */
		spoof_write(&l, 1, l.qpn[1], &p, (next + 50000) & MRCP_PSN_MASK, rq->rcv_msn, l.rkey[1]);
		inject(&l, 1, &p, &src[k], 1);
		/* trimmed: would be NACKed */
		spoof_write(&l, 1, l.qpn[1], &p, next, rq->rcv_msn, l.rkey[1]);
		{
			static uint8_t raw[FAKE_LINK_PKT_MAX];
			struct mrcp_rx rx;

			fx_rx_pkt(&rx, raw, sizeof(raw), &p, 1, &src[k]);
			rx.trim = MRCP_TRIM_FABRIC;
			rx.len = (uint32_t)mrcp_pkt_hdr_len(&p);
			mrcp_rx_burst(l.fl.eng[1], &rx, 1, l.fl.now);
		}
		/* a reliability probe naming the right QP: would be SACKed */
		ASSERT_EQ(0, mrcp_pkt_init(&p, MRCP_OP_PROBE, l.qpn[1], next));
		p.peth.spdcid = (uint16_t)l.qpn[0];
		p.peth.dpdcid = (uint16_t)l.qpn[1];
		p.peth.ftype = MRCP_TSETH_FTYPE;
		inject(&l, 1, &p, &src[k], 1);
		sent += 6;
	}
	assert_unchanged(l.fl.eng[1], l.qpn[1], &snap_before);
	ASSERT_EQ(sent, foreign(&l, 1));
	finish_ok(&l);
	link_fini(&l);
}

TEST(engine, rx_qp__control_naming_another_qpn_or_from_elsewhere_changes_nothing)
{
	struct link l;
	struct mrcp_pkt p;
	struct mrcp_ip peer1, other;
	struct qp *sq;
	uint32_t last;
	uint16_t wrong;

	midway(&l);
	wrong = (uint16_t)(l.qpn[1] + 1);
	sq = mrcp__qp_lookup(l.fl.eng[0], l.qpn[0]);
	ASSERT_GT(sq->n_out, 0);
	last = (sq->next_psn - 1) & MRCP_PSN_MASK;
	fx_ip(&peer1, 1, 1); /* the peer's plane-1 address: right */
	fx_ip(&other, 9, 1);
	snap_take(&snap_before, l.fl.eng[0], l.qpn[0]);
	/* right source, wrong QPN: a SACK for everything sent, a NACK, a probe */
	ASSERT_EQ(0, mrcp_pkt_init(&p, MRCP_OP_SACK, l.qpn[0], last));
	p.seth.cack_psn = last;
	p.seth.spdcid = wrong;
	p.seth.dpdcid = (uint16_t)l.qpn[0];
	p.seth.entropy = 0xC0DE;
	p.seth.m = MRCP_VERDICT_ALWAYS_SKIP;
	p.cc.rcvd_bytes = 0xFFFFFF;
	inject(&l, 0, &p, &peer1, 1);
	p.seth.spdcid = (uint16_t)l.qpn[1]; /* right QPN, another host */
	inject(&l, 0, &p, &other, 1);
	ASSERT_EQ(0, mrcp_pkt_init(&p, MRCP_OP_NACK, l.qpn[0], sq->snd_una));
	p.neth.nack_code = MRCP_NACK_NO_RESOURCE;
	p.neth.nack_psn = sq->snd_una;
	p.neth.spdcid = wrong;
	inject(&l, 0, &p, &peer1, 1);
	p.neth.spdcid = (uint16_t)l.qpn[1];
	inject(&l, 0, &p, &other, 1);
	ASSERT_EQ(0, mrcp_pkt_init(&p, MRCP_OP_PROBE, l.qpn[0], 0));
	p.peth.spdcid = wrong;
	p.peth.ftype = MRCP_TSETH_FTYPE;
	inject(&l, 0, &p, &peer1, 1);
	/* an AETH carries no QPN: a NAK from elsewhere (would be ERROR) */
	ASSERT_EQ(0, mrcp_pkt_init(&p, MRCP_OP_ACK, l.qpn[0], sq->snd_una));
	p.aeth.syndrome = MRCP_AETH_NAK_REMOTE_ACCESS;
	p.aeth.msn = 0;
	inject(&l, 0, &p, &other, 1);
	assert_unchanged(l.fl.eng[0], l.qpn[0], &snap_before);
	ASSERT_EQ(6, foreign(&l, 0));
	finish_ok(&l);
	link_fini(&l);
}

TEST(engine, rx_qp__the_peer_of_one_qp_is_foreign_to_another)
{
	struct link l;
	struct mrcp_pkt p;
	struct mrcp_conn_info ci;
	struct mrcp_ip peer1;
	uint32_t q2;

	midway(&l);
	/* node 1's second QP, connected to another node (6) */
	ASSERT_EQ(0, mrcp_qp_create(l.fl.eng[1], NULL, &q2));
	fx_peer_info(&ci, 0x345, 1024);
	fx_ip(&ci.node_addr, 5, 0);
	fx_ip(&ci.port_addr[0], 5, 1);
	ASSERT_EQ(0, mrcp_qp_connect(l.fl.eng[1], q2, &ci, l.fl.now));
	fx_ip(&peer1, 0, 1); /* node 0 on plane 1: the first QP's peer */
	snap_take(&snap_before, l.fl.eng[1], q2);
	spoof_write(&l, 1, q2, &p, 0, 0, l.rkey[1] ^ 0x5500);
	inject(&l, 1, &p, &peer1, 1);
	spoof_write(&l, 1, q2, &p, 0, 0, l.rkey[1]);
	inject(&l, 1, &p, &peer1, 1);
	assert_unchanged(l.fl.eng[1], q2, &snap_before);
	ASSERT_EQ(2, foreign(&l, 1));
	/* and from its own peer it is accepted: the bad key is an error */
	fx_ip(&peer1, 5, 1);
	spoof_write(&l, 1, q2, &p, 0, 0, l.rkey[1] ^ 0x5500);
	inject(&l, 1, &p, &peer1, 1);
	ASSERT_EQ(MRCP_QPS_ERROR, mrcp_qp_state(l.fl.eng[1], q2));
	ASSERT_EQ(2, foreign(&l, 1));
	finish_ok(&l);
	link_fini(&l);
}

TEST(engine, rx_qp__a_wrong_key_from_the_genuine_peer_is_still_an_rc_error)
{
	struct link l;
	struct mrcp_pkt p;
	struct mrcp_ip peer2;
	struct mrcp_tx tx[8];
	struct qp *rq;
	unsigned n, naks = 0;

	midway(&l);
	rq = mrcp__qp_lookup(l.fl.eng[1], l.qpn[1]);
	fx_ip(&peer2, 0, 2); /* node 0's plane-2 address, on plane 2 */
	spoof_write(&l, 1, l.qpn[1], &p, (rq->rcv_cack + 1) & MRCP_PSN_MASK, rq->rcv_msn, l.rkey[1] ^ 0x5500);
	inject(&l, 1, &p, &peer2, 2);
	ASSERT_EQ(0, foreign(&l, 1));
	ASSERT_EQ(MRCP_QPS_ERROR, mrcp_qp_state(l.fl.eng[1], l.qpn[1]));
	n = mrcp_poll(l.fl.eng[1], l.fl.now, tx, 8);
	for (unsigned i = 0; i < n; i++) {
		struct mrcp_pkt a;

		ASSERT_EQ(0, mrcp_pkt_decode_hdr(tx[i].hdr, tx[i].hdr_len, &a));
		if (a.bth.opcode == MRCP_OP_ACK && a.aeth.syndrome == MRCP_AETH_NAK_REMOTE_ACCESS) {
			naks++;
			ASSERT_EQ(2, tx[i].port); /* back on its plane */
		}
	}
	ASSERT_EQ(1, naks);
	link_fini(&l);
}

/* ---- sizing by use (mrcp_engine_config.preallocate) ------------------------ */

static void prealloc_on(struct mrcp_engine_config *c)
{
	c->preallocate = true;
}

static void small_rings(struct mrcp_engine_config *c)
{
	c->cq_size = 64;
	c->ctl_queue_size = 64;
	c->event_queue_size = 64;
}

TEST(engine, sizing__by_use_behaves_as_preallocated)
{
	struct mrcp_qp_info a[2], b[2];
	uint64_t ta, tb;
	uint32_t sba, sbb, rma, rmb;

	lossy_run_cfg(prealloc_on, a, &ta, &sba, &rma);
	lossy_run_cfg(NULL, b, &tb, &sbb, &rmb);
	ASSERT_U64_EQ(ta, tb);
	for (int n = 0; n < 2; n++) {
		ASSERT_EQ(0, memcmp(&a[n].c, &b[n].c, sizeof(a[n].c)));
		ASSERT_U64_EQ(a[n].cc.cwnd, b[n].cc.cwnd);
		ASSERT_EQ(a[n].next_psn, b[n].next_psn);
	}
	ASSERT_GT(a[0].c.rtx_fast, 0);     /* losses were repaired */
	ASSERT_EQ(1024, sba);              /* pow2(W), W = 128 x 8 */
	ASSERT_EQ(1024, rma);
	/* by use: grown from 16 to what was in flight, one message at a time */
	ASSERT_GT(sbb, 16);
	ASSERT_LT(sbb, 1024);
	ASSERT_EQ(16, rmb);
}

TEST(engine, sizing__rings_and_queues_keep_their_configured_limits)
{
	struct link l;
	struct mrcp_wc wc[128];
	struct mrcp_engine_counters ec;
	unsigned got = 0, k;
	int i;

	/* the CQ (64) fills and holds completions back, in order, as a
	 * preallocated one does */
	link_init(&l, 1, MRCP_MODE_MRC, small_rings);
	for (i = 0; i < 100; i++)
		ASSERT_EQ(0, post_write(&l, 0, (uint32_t)i * 100, 100, (uint64_t)i, false, 0));
	fake_link_run(&l.fl, 100000000, NULL, NULL, 100000);
	mrcp_engine_counters(l.fl.eng[0], &ec);
	ASSERT_GT(ec.cq_overflow, 0);
	ASSERT_EQ(63, l.fl.eng[0]->cq_mask);
	while ((k = mrcp_poll_cq(l.fl.eng[0], wc, 128)) != 0)
		for (unsigned j = 0; j < k; j++)
			ASSERT_EQ(got++, wc[j].wr_id);
	ASSERT_EQ(100, got);
	/* the send queue takes sq_depth WQEs (grown from 16), no more */
	for (i = 0; i < 1024; i++)
		ASSERT_EQ(0, post_write(&l, 0, 0, 8, (uint64_t)i, false, 0));
	ASSERT_EQ(-EAGAIN, post_write(&l, 0, 0, 8, 9999, false, 0));
	ASSERT_EQ(1023, mrcp__qp_lookup(l.fl.eng[0], l.qpn[0])->sq_mask);
	/* and so does the receive queue */
	for (i = 0; i < 1024; i++)
		ASSERT_EQ(0, mrcp_qp_post_recv(l.fl.eng[1], l.qpn[1], (uint64_t)i));
	ASSERT_EQ(-EAGAIN, mrcp_qp_post_recv(l.fl.eng[1], l.qpn[1], 9999));
	link_fini(&l);
}
