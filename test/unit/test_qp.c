/* test_qp.c - white-box tests of lib/core/qp.c: the QP state machine,
 * connection-info negotiation (D3, §4.1, §4.8, D40, D59), QPN allocation
 * (D60), destroy and flush, memory-region references and post_send /
 * post_recv validation, fixed initial PSNs.
 *
 * One engine per test and a hand-made peer; packets are taken from
 * mrcp_poll and decoded. The clock is a plain variable. Cases already in
 * test_engine.c (conn_info blob round trip, UDP port / version refusal, the
 * simple -EFAULT cases) are not repeated. */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>

#include "engine_internal.h"
#include "engine_fx.h"
#include "mrc_client.h"
#include "mrcp_test.h"
#include "mrcp_wire.h"

/* The blob an application carries between two libmrc-client peers is the
 * one qp.c encodes: lib/client's public header cannot include lib/core's, so
 * the two sizes are tied here, where both are visible. */
static_assert(MRC_CONN_INFO_BYTES == MRCP_CONN_INFO_LEN, "lib/client and lib/core disagree on the conn info size");
static_assert(MRC_CONN_INFO_TEXT == 2 * MRCP_CONN_INFO_LEN + 1, "the hex text form holds the blob and a NUL");

#define PEER_QPN 0x100u
#define BUF_VA 0x10000000ull
#define BUF_LEN (256u << 10)
#define REMOTE_VA 0x50000000ull

struct fx {
	struct mrcp_engine *e;
	uint8_t *buf;
	uint32_t lkey, rkey;
	uint64_t now;
};

static void fx_init_cfg(struct fx *f, void (*tweak)(struct mrcp_engine_config *))
{
	struct mrcp_engine_config c;

	memset(f, 0, sizeof(*f));
	mrcp_engine_config_defaults(&c);
	c.seed = 3;
	fx_ip(&c.node_addr, 0, 0);
	fx_ip(&c.port_addr[0], 0, 1);
	c.ev.n_active = 8;
	c.ev.n_backup = 4;
	if (tweak)
		tweak(&c);
	ASSERT_EQ(0, mrcp_engine_create(&c, &f->e));
	f->buf = calloc(1, BUF_LEN);
	ASSERT_EQ(0, mrcp_mr_reg(f->e, BUF_VA, BUF_LEN, f->buf, MRCP_ACCESS_LOCAL_WRITE | MRCP_ACCESS_REMOTE_WRITE,
				 &f->lkey, &f->rkey));
	f->now = 1000000;
}

static void fx_init(struct fx *f)
{
	fx_init_cfg(f, NULL);
}

static void fx_fini(struct fx *f)
{
	mrcp_engine_destroy(f->e);
	free(f->buf);
}

/* A QP connected to the hand-made peer @ci (NULL = defaults). */
static uint32_t qp_up(struct fx *f, const struct mrcp_qp_attr *a, const struct mrcp_conn_info *ci)
{
	struct mrcp_conn_info def;
	uint32_t qpn;

	fx_peer_info(&def, PEER_QPN, 4096);
	ASSERT_EQ(0, mrcp_qp_create(f->e, a, &qpn));
	ASSERT_EQ(0, mrcp_qp_connect(f->e, qpn, ci ? ci : &def, f->now));
	return qpn;
}

static int post(struct fx *f, uint32_t qpn, uint64_t wr_id, uint8_t opcode, uint32_t off, uint32_t len)
{
	struct mrcp_sge sge = {.addr = BUF_VA + off, .len = len, .lkey = f->lkey};
	struct mrcp_send_wr wr = {.wr_id = wr_id, .opcode = opcode, .flags = MRCP_WR_SIGNALED,
				  .sg_list = &sge, .num_sge = len ? 1 : 0,
				  .remote_addr = REMOTE_VA + off, .rkey = 0x99};
	return mrcp_qp_post_send(f->e, qpn, &wr, f->now);
}

/* Poll and decode; @p[i] gets the packets, @tx[i] their descriptors. */
static unsigned drain(struct fx *f, struct mrcp_tx *tx, struct mrcp_pkt *p, unsigned max)
{
	unsigned n = mrcp_poll(f->e, f->now, tx, max);

	for (unsigned i = 0; i < n; i++)
		ASSERT_EQ(0, mrcp_pkt_decode_hdr(tx[i].hdr, tx[i].hdr_len, &p[i]));
	return n;
}

static void ack(struct fx *f, uint32_t qpn, uint16_t msn)
{
	struct mrcp_pkt p;
	uint8_t raw[64];
	struct mrcp_rx rx;
	int len;

	ASSERT_EQ(0, mrcp_pkt_init(&p, MRCP_OP_ACK, qpn, 0));
	p.aeth.syndrome = MRCP_AETH_ACK;
	p.aeth.msn = msn;
	len = mrcp_pkt_encode(&p, raw, sizeof(raw));
	ASSERT_GT(len, 0);
	memset(&rx, 0, sizeof(rx));
	rx.data = raw;
	rx.len = (uint32_t)len;
	rx.port = 1;
	fx_ip(&rx.src, 1, 1);
	mrcp_rx_burst(f->e, &rx, 1, f->now);
}

/* ---- mrcp_qp_create ----------------------------------------------------------- */

TEST(qp, qp_create__starts_in_init_and_rejects_bad_attributes)
{
	struct fx f;
	struct mrcp_qp_attr a;
	uint32_t qpn;

	fx_init(&f);
	ASSERT_EQ(0, mrcp_qp_create(f.e, NULL, &qpn));
	ASSERT_EQ(MRCP_QPS_INIT, mrcp_qp_state(f.e, qpn));
	ASSERT_EQ(0, mrcp_qp_state(f.e, qpn + 1));
	memset(&a, 0, sizeof(a));
	a.mode = 7;
	ASSERT_EQ(-EINVAL, mrcp_qp_create(f.e, &a, &qpn));
	a.mode = MRCP_MODE_MRC;
	a.timeout = 25;
	ASSERT_EQ(-EINVAL, mrcp_qp_create(f.e, &a, &qpn));
	a.timeout = 0;
	a.linear_cnt = 8;
	ASSERT_EQ(-EINVAL, mrcp_qp_create(f.e, &a, &qpn));
	a.linear_cnt = 0;
	a.exp_cnt = 26;
	ASSERT_EQ(-EINVAL, mrcp_qp_create(f.e, &a, &qpn));
	fx_fini(&f);
}

TEST(qp, qp_create__qpns_go_round_robin_and_are_not_reused_soon)
{
	struct fx f;
	uint32_t q[3], again, seen[40];
	unsigned n = 0;

	fx_init(&f);
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(0, mrcp_qp_create(f.e, NULL, &q[i]));
	/* consecutive slots (the low 8 bits for 256 QPs), QPNs 0..3 never
	 * handed out (the endpoint QPN is 2) */
	ASSERT_EQ((q[0] & 0xFF) + 1, q[1] & 0xFF);
	ASSERT_EQ((q[1] & 0xFF) + 1, q[2] & 0xFF);
	ASSERT_GT(q[0], 3);
	ASSERT_NE(q[0] >> 8, q[1] >> 8); /* and a fresh sequence number each */
	/* a freed slot is not the next one used, and its QPN does not come back */
	ASSERT_EQ(0, mrcp_qp_destroy(f.e, q[0], f.now));
	ASSERT_EQ(0, mrcp_qp_create(f.e, NULL, &again));
	ASSERT_NE(q[0], again);
	ASSERT_EQ((q[2] & 0xFF) + 1, again & 0xFF);
	ASSERT_EQ(0, mrcp_qp_state(f.e, q[0]));
	/* churn through every slot: every QPN is new */
	for (int i = 0; i < 40; i++) {
		uint32_t x;
		ASSERT_EQ(0, mrcp_qp_create(f.e, NULL, &x));
		for (unsigned k = 0; k < n; k++)
			ASSERT_NE(seen[k], x);
		ASSERT_NE(q[0], x);
		seen[n++] = x;
		ASSERT_EQ(0, mrcp_qp_destroy(f.e, x, f.now));
	}
	fx_fini(&f);
}

static void shard_3(struct mrcp_engine_config *c)
{
	c->shard = 3;
	c->max_qps = 4;
}

static void shard_bad(struct mrcp_engine_config *c)
{
	c->shard = MRCP_SHARDS;
}

/* D63: an engine's QPNs carry its shard in bits 23:22, with the sequence and
 * slot below; a shard outside 0..MRCP_SHARDS-1 is refused */
TEST(qp, qp_create__qpns_carry_the_engine_shard)
{
	struct fx f;
	struct mrcp_engine_config c;
	struct mrcp_engine *e;

	fx_init_cfg(&f, shard_3);
	for (int i = 0; i < 100; i++) {
		uint32_t q;

		ASSERT_EQ(0, mrcp_qp_create(f.e, NULL, &q));
		ASSERT_EQ(3, mrcp_qpn_shard(q));
		ASSERT_NE(0, q & ((1u << MRCP_SHARD_QPN_SHIFT) - 1) >> 2);
		ASSERT_EQ(MRCP_QPS_INIT, mrcp_qp_state(f.e, q));
		ASSERT_EQ(0, mrcp_qp_destroy(f.e, q, f.now));
	}
	fx_fini(&f);
	mrcp_engine_config_defaults(&c);
	shard_bad(&c);
	ASSERT_EQ(-EINVAL, mrcp_engine_create(&c, &e));
}

static void small_table(struct mrcp_engine_config *c)
{
	c->max_qps = 4;
}

TEST(qp, qp_create__same_slot_gets_a_new_qpn_and_old_packets_are_dropped)
{
	struct fx f;
	uint32_t q[4], x;
	struct mrcp_engine_counters ec;
	struct mrcp_pkt p;
	uint8_t raw[128];
	struct mrcp_rx rx;
	int len;

	fx_init_cfg(&f, small_table);
	for (int i = 0; i < 4; i++)
		ASSERT_EQ(0, mrcp_qp_create(f.e, NULL, &q[i]));
	ASSERT_EQ(-ENOSPC, mrcp_qp_create(f.e, NULL, &x));
	ASSERT_EQ(0, mrcp_qp_destroy(f.e, q[1], f.now));
	ASSERT_EQ(0, mrcp_qp_create(f.e, NULL, &x));
	ASSERT_EQ(q[1] & 3, x & 3); /* the only free slot */
	ASSERT_NE(q[1], x);
	/* a late packet for the destroyed QPN does not reach the new QP (D60) */
	ASSERT_EQ(0, mrcp_pkt_init(&p, MRCP_OP_ACK, q[1], 0));
	p.aeth.syndrome = MRCP_AETH_ACK;
	len = mrcp_pkt_encode(&p, raw, sizeof(raw));
	memset(&rx, 0, sizeof(rx));
	rx.data = raw;
	rx.len = (uint32_t)len;
	rx.port = 1;
	mrcp_rx_burst(f.e, &rx, 1, f.now);
	mrcp_engine_counters(f.e, &ec);
	ASSERT_EQ(1, ec.rx_unknown_qp);
	fx_fini(&f);
}

/* ---- mrcp_qp_connect ------------------------------------------------------------ */

TEST(qp, qp_connect__init_to_rts_once_and_posting_needs_rts)
{
	struct fx f;
	struct mrcp_conn_info ci;
	uint32_t qpn;

	fx_init(&f);
	fx_peer_info(&ci, PEER_QPN, 4096);
	ASSERT_EQ(0, mrcp_qp_create(f.e, NULL, &qpn));
	ASSERT_EQ(-EPERM, post(&f, qpn, 1, MRCP_WR_WRITE, 0, 8)); /* INIT */
	ASSERT_EQ(0, mrcp_qp_post_recv(f.e, qpn, 1));           /* receives may be posted early */
	ASSERT_EQ(0, mrcp_qp_connect(f.e, qpn, &ci, f.now));
	ASSERT_EQ(MRCP_QPS_RTS, mrcp_qp_state(f.e, qpn));
	ASSERT_EQ(-EPERM, mrcp_qp_connect(f.e, qpn, &ci, f.now));
	ASSERT_EQ(0, post(&f, qpn, 2, MRCP_WR_WRITE, 0, 8));
	/* ERROR: nothing may be posted any more */
	mrcp__qp_error(f.e, mrcp__qp_lookup(f.e, qpn), MRCP_WC_REM_OP_ERR, MRCP_QP_ERR_REMOTE_OP);
	ASSERT_EQ(MRCP_QPS_ERROR, mrcp_qp_state(f.e, qpn));
	ASSERT_EQ(-EPERM, post(&f, qpn, 3, MRCP_WR_WRITE, 0, 8));
	ASSERT_EQ(-EPERM, mrcp_qp_post_recv(f.e, qpn, 4));
	ASSERT_EQ(-EPERM, mrcp_qp_connect(f.e, qpn, &ci, f.now));
	fx_fini(&f);
}

TEST(qp, qp_connect__rejects_malformed_peer_info)
{
	struct fx f;
	struct mrcp_conn_info ci;
	uint32_t qpn;

	fx_init(&f);
	ASSERT_EQ(0, mrcp_qp_create(f.e, NULL, &qpn));
	fx_peer_info(&ci, PEER_QPN, 4096);
	ci.qpn = MRCP_QPN_ENDPOINT;
	ASSERT_EQ(-EINVAL, mrcp_qp_connect(f.e, qpn, &ci, f.now));
	fx_peer_info(&ci, PEER_QPN, 4096);
	ci.qpn = 0x1000000;
	ASSERT_EQ(-EINVAL, mrcp_qp_connect(f.e, qpn, &ci, f.now));
	fx_peer_info(&ci, PEER_QPN, 4096);
	ci.init_psn = 0x1000000;
	ASSERT_EQ(-EINVAL, mrcp_qp_connect(f.e, qpn, &ci, f.now));
	fx_peer_info(&ci, PEER_QPN, 4096);
	ci.n_ports = 0;
	ASSERT_EQ(-EINVAL, mrcp_qp_connect(f.e, qpn, &ci, f.now));
	fx_peer_info(&ci, PEER_QPN, 4096);
	ci.mpr_dest = 0;
	ASSERT_EQ(-EINVAL, mrcp_qp_connect(f.e, qpn, &ci, f.now));
	fx_peer_info(&ci, PEER_QPN, 4096);
	ci.max_wimm_dest = 0;
	ASSERT_EQ(-EINVAL, mrcp_qp_connect(f.e, qpn, &ci, f.now));
	fx_peer_info(&ci, PEER_QPN, 4096);
	ci.node_addr.family = 0;
	ASSERT_EQ(-EINVAL, mrcp_qp_connect(f.e, qpn, &ci, f.now));
	ASSERT_EQ(MRCP_QPS_INIT, mrcp_qp_state(f.e, qpn));
	ASSERT_EQ(-ENOENT, mrcp_qp_connect(f.e, qpn ^ 0x100, &ci, f.now));
	fx_fini(&f);
}

static void mtu_1024(struct mrcp_engine_config *c)
{
	c->mtu = 1024;
}

TEST(qp, qp_connect__mtu_is_the_smaller_offer)
{
	struct fx f;
	struct mrcp_conn_info ci;
	struct mrcp_tx tx[8];
	struct mrcp_pkt p[8];
	uint32_t qpn;

	/* we offer 4096, the peer 2048 */
	fx_init(&f);
	fx_peer_info(&ci, PEER_QPN, 4096);
	ci.mtu = 2048;
	qpn = qp_up(&f, NULL, &ci);
	ASSERT_EQ(2048, mrcp__qp_lookup(f.e, qpn)->mtu);
	ASSERT_EQ(0, post(&f, qpn, 1, MRCP_WR_WRITE, 0, 5000));
	ASSERT_EQ(3, drain(&f, tx, p, 8));
	ASSERT_EQ(2048, tx[0].payload_len);
	ASSERT_EQ(2048, tx[1].payload_len);
	ASSERT_EQ(904, tx[2].payload_len);
	fx_fini(&f);
	/* we offer 1024, the peer 4096 */
	fx_init_cfg(&f, mtu_1024);
	qpn = qp_up(&f, NULL, NULL);
	ASSERT_EQ(1024, mrcp__qp_lookup(f.e, qpn)->mtu);
	fx_fini(&f);
}

TEST(qp, qp_connect__window_is_128_times_the_smaller_mpr)
{
	struct fx f;
	struct mrcp_conn_info ci, mine;
	struct mrcp_qp_attr a;
	uint32_t qpn;

	fx_init(&f);
	fx_peer_info(&ci, PEER_QPN, 4096);
	ci.mpr_dest = 2; /* ours: 8 */
	qpn = qp_up(&f, NULL, &ci);
	ASSERT_EQ(256, mrcp__qp_lookup(f.e, qpn)->W);
	ASSERT_EQ(1024, mrcp__qp_lookup(f.e, qpn)->rW); /* our receive window is ours */
	ASSERT_EQ(0, mrcp_qp_local_info(f.e, qpn, &mine));
	ASSERT_EQ(8, mine.mpr_dest);
	memset(&a, 0, sizeof(a));
	a.mpr = 3;
	qpn = qp_up(&f, &a, NULL); /* the peer offers 8 */
	ASSERT_EQ(384, mrcp__qp_lookup(f.e, qpn)->W);
	ASSERT_EQ(0, mrcp_qp_local_info(f.e, qpn, &mine));
	ASSERT_EQ(3, mine.mpr_dest);
	fx_fini(&f);
}

TEST(qp, qp_connect__write_imm_limit_is_the_smaller_offer)
{
	struct fx f;
	struct mrcp_conn_info ci, mine;
	struct mrcp_qp_attr a;
	uint32_t qpn;

	fx_init(&f);
	fx_peer_info(&ci, PEER_QPN, 4096);
	ci.max_wimm_dest = 5; /* ours: 128 */
	qpn = qp_up(&f, NULL, &ci);
	ASSERT_EQ(5, mrcp__qp_lookup(f.e, qpn)->max_wimm);
	memset(&a, 0, sizeof(a));
	a.max_wimm = 3;
	qpn = qp_up(&f, &a, NULL);
	ASSERT_EQ(3, mrcp__qp_lookup(f.e, qpn)->max_wimm);
	ASSERT_EQ(0, mrcp_qp_local_info(f.e, qpn, &mine));
	ASSERT_EQ(3, mine.max_wimm_dest);
	ASSERT_TRUE(mine.trim_nack); /* D40: always offered */
	fx_fini(&f);
}

TEST(qp, qp_connect__peer_without_trim_nack_gets_no_trim_dscp)
{
	struct fx f;
	struct mrcp_conn_info ci;
	struct mrcp_tx tx[4];
	struct mrcp_pkt p[4];
	struct mrcp_dscp_map d;
	uint32_t qpn;

	mrcp_dscp_map_defaults(&d);
	fx_init(&f);
	fx_peer_info(&ci, PEER_QPN, 4096);
	ci.trim_nack = false;
	qpn = qp_up(&f, NULL, &ci);
	ASSERT_EQ(0, post(&f, qpn, 1, MRCP_WR_WRITE, 0, 64));
	ASSERT_EQ(1, drain(&f, tx, p, 4));
	ASSERT_EQ(d.dscp[MRCP_DSCP_CLASS_NO_TRIM], tx[0].dscp); /* D40 */
	/* a peer with trim NACK gets the trimmable class */
	qpn = qp_up(&f, NULL, NULL);
	ASSERT_EQ(0, post(&f, qpn, 2, MRCP_WR_WRITE, 0, 64));
	ASSERT_EQ(1, drain(&f, tx, p, 4));
	ASSERT_EQ(d.dscp[MRCP_DSCP_CLASS_TRIMMABLE], tx[0].dscp);
	fx_fini(&f);
}

TEST(qp, qp_connect__fixed_init_psn_is_used_and_wraps)
{
	struct fx f;
	struct mrcp_qp_attr a;
	struct mrcp_conn_info mine;
	struct mrcp_tx tx[4];
	struct mrcp_pkt p[4];
	uint32_t qpn;

	fx_init(&f);
	memset(&a, 0, sizeof(a));
	a.fixed_init_psn = true;
	a.init_psn = 0x1FFFFFE; /* 24 bits kept */
	qpn = qp_up(&f, &a, NULL);
	ASSERT_EQ(0, mrcp_qp_local_info(f.e, qpn, &mine));
	ASSERT_EQ(0xFFFFFE, mine.init_psn);
	ASSERT_EQ(0, post(&f, qpn, 1, MRCP_WR_WRITE, 0, 3 * 4096));
	ASSERT_EQ(3, drain(&f, tx, p, 4));
	ASSERT_EQ(0xFFFFFE, p[0].bth.psn);
	ASSERT_EQ(0xFFFFFF, p[1].bth.psn);
	ASSERT_EQ(0, p[2].bth.psn);
	/* the responder side starts from the peer's init PSN (D25) */
	ASSERT_EQ(0xFFFFFF, mrcp__qp_lookup(f.e, qpn)->rcv_cack);
	fx_fini(&f);
}

TEST(qp, qp_create__joins_its_pd_and_an_unknown_pd_is_enoent)
{
	struct fx f;
	struct mrcp_qp_attr a;
	uint32_t pd, qpn;

	fx_init(&f);
	memset(&a, 0, sizeof(a));
	a.pd = 0x10001; /* never allocated */
	ASSERT_EQ(-ENOENT, mrcp_qp_create(f.e, &a, &qpn));
	ASSERT_EQ(0, mrcp_pd_alloc(f.e, &pd));
	a.pd = pd;
	ASSERT_EQ(0, mrcp_qp_create(f.e, &a, &qpn));
	ASSERT_EQ(1, f.e->pds[pd & 0xFFFF].n_qps);
	ASSERT_EQ(-EBUSY, mrcp_pd_free(f.e, pd));
	ASSERT_EQ(0, mrcp_qp_destroy(f.e, qpn, f.now));
	ASSERT_EQ(0, f.e->pds[pd & 0xFFFF].n_qps);
	ASSERT_EQ(0, mrcp_pd_free(f.e, pd));
	fx_fini(&f);
}

/* ---- mrcp_qp_destroy / flush ------------------------------------------------------- */

TEST(qp, qp_destroy__flushes_sends_and_receives_and_releases_regions)
{
	struct fx f;
	struct mrcp_wc wc[8];
	uint32_t qpn;

	fx_init(&f);
	qpn = qp_up(&f, NULL, NULL);
	ASSERT_EQ(0, post(&f, qpn, 11, MRCP_WR_WRITE, 0, 64));
	ASSERT_EQ(0, post(&f, qpn, 12, MRCP_WR_WRITE_IMM, 64, 64));
	ASSERT_EQ(0, mrcp_qp_post_recv(f.e, qpn, 21));
	ASSERT_EQ(0, mrcp_qp_post_recv(f.e, qpn, 22));
	ASSERT_EQ(-EBUSY, mrcp_mr_dereg(f.e, f.lkey));
	ASSERT_EQ(0, mrcp_qp_destroy(f.e, qpn, f.now));
	ASSERT_EQ(4, mrcp_poll_cq(f.e, wc, 8));
	ASSERT_EQ(11, wc[0].wr_id);
	ASSERT_EQ(MRCP_WC_WRITE, wc[0].opcode);
	ASSERT_EQ(12, wc[1].wr_id);
	ASSERT_EQ(MRCP_WC_WRITE_IMM, wc[1].opcode);
	ASSERT_EQ(21, wc[2].wr_id);
	ASSERT_EQ(MRCP_WC_RECV_IMM, wc[2].opcode);
	ASSERT_EQ(22, wc[3].wr_id);
	for (int i = 0; i < 4; i++) {
		ASSERT_EQ(MRCP_WC_FLUSH_ERR, wc[i].status);
		ASSERT_EQ(qpn, wc[i].qpn);
	}
	ASSERT_EQ(0, mrcp_qp_state(f.e, qpn));
	ASSERT_EQ(-ENOENT, mrcp_qp_destroy(f.e, qpn, f.now));
	ASSERT_EQ(0, mrcp_mr_dereg(f.e, f.lkey));
	fx_fini(&f);
}

TEST(qp, qp_error__first_wr_gets_the_cause_the_rest_flush)
{
	struct fx f;
	struct mrcp_wc wc[8];
	struct mrcp_event ev[2];
	struct mrcp_qp_info qi;
	uint32_t qpn;

	fx_init(&f);
	qpn = qp_up(&f, NULL, NULL);
	ASSERT_EQ(0, mrcp_qp_info(f.e, qpn, &qi));
	ASSERT_EQ(MRCP_QP_ERR_NONE, qi.err.cause);
	ASSERT_EQ(MRCP_WC_SUCCESS, qi.err.status);
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(0, post(&f, qpn, (uint64_t)i, MRCP_WR_WRITE, 0, 64));
	mrcp__qp_error(f.e, mrcp__qp_lookup(f.e, qpn), MRCP_WC_RETRY_EXC_ERR, MRCP_QP_ERR_RETRY_EXCEEDED);
	mrcp__qp_error(f.e, mrcp__qp_lookup(f.e, qpn), MRCP_WC_REM_OP_ERR, MRCP_QP_ERR_REMOTE_OP); /* a sink: ignored */
	ASSERT_EQ(3, mrcp_poll_cq(f.e, wc, 8));
	ASSERT_EQ(MRCP_WC_RETRY_EXC_ERR, wc[0].status);
	ASSERT_EQ(MRCP_WC_FLUSH_ERR, wc[1].status);
	ASSERT_EQ(MRCP_WC_FLUSH_ERR, wc[2].status);
	ASSERT_EQ(1, mrcp_poll_events(f.e, ev, 2));
	ASSERT_EQ(MRCP_WC_RETRY_EXC_ERR, ev[0].qp_error.status);
	ASSERT_EQ(MRCP_QP_ERR_RETRY_EXCEEDED, ev[0].qp_error.cause);
	ASSERT_EQ(qpn, ev[0].qpn);
	/* D70: the first cause stays; the info reports it */
	ASSERT_EQ(0, mrcp_qp_info(f.e, qpn, &qi));
	ASSERT_EQ(MRCP_QPS_ERROR, qi.state);
	ASSERT_EQ(MRCP_WC_RETRY_EXC_ERR, qi.err.status);
	ASSERT_EQ(MRCP_QP_ERR_RETRY_EXCEEDED, qi.err.cause);
	fx_fini(&f);
}

/* ---- memory regions and posting --------------------------------------------------- */

TEST(qp, mr_dereg__busy_until_every_wr_using_it_completed)
{
	struct fx f;
	struct mrcp_tx tx[8];
	struct mrcp_pkt p[8];
	struct mrcp_wc wc[4];
	uint32_t qpn;

	fx_init(&f);
	qpn = qp_up(&f, NULL, NULL);
	ASSERT_EQ(0, post(&f, qpn, 1, MRCP_WR_WRITE, 0, 64));
	ASSERT_EQ(0, post(&f, qpn, 2, MRCP_WR_WRITE, 64, 64));
	ASSERT_EQ(2, f.e->mrs[mrcp__mr_slot(f.e, f.lkey)].refs);
	ASSERT_EQ(2, drain(&f, tx, p, 8));
	ack(&f, qpn, 0);
	ASSERT_EQ(1, mrcp_poll_cq(f.e, wc, 4));
	ASSERT_EQ(1, f.e->mrs[mrcp__mr_slot(f.e, f.lkey)].refs);
	ASSERT_EQ(-EBUSY, mrcp_mr_dereg(f.e, f.lkey));
	ack(&f, qpn, 1);
	ASSERT_EQ(1, mrcp_poll_cq(f.e, wc, 4));
	ASSERT_EQ(0, mrcp_mr_dereg(f.e, f.lkey));
	ASSERT_EQ(-ENOENT, mrcp_mr_dereg(f.e, f.lkey));
	fx_fini(&f);
}

TEST(qp, qp_post_send__validates_and_releases_partial_references)
{
	struct fx f;
	uint32_t qpn, big_l, big_r;
	static uint8_t dummy[16];
	struct mrcp_sge sge[MRCP_MAX_SGE + 1];
	struct mrcp_send_wr wr;

	fx_init(&f);
	qpn = qp_up(&f, NULL, NULL);
	memset(&wr, 0, sizeof(wr));
	wr.opcode = MRCP_WR_WRITE;
	wr.sg_list = sge;
	for (int i = 0; i <= MRCP_MAX_SGE; i++)
		sge[i] = (struct mrcp_sge){.addr = BUF_VA, .len = 8, .lkey = f.lkey};
	wr.num_sge = MRCP_MAX_SGE + 1;
	ASSERT_EQ(-EINVAL, mrcp_qp_post_send(f.e, qpn, &wr, f.now));
	wr.num_sge = 1;
	wr.sg_list = NULL;
	ASSERT_EQ(-EINVAL, mrcp_qp_post_send(f.e, qpn, &wr, f.now));
	wr.sg_list = sge;
	/* below the region */
	sge[0].addr = BUF_VA - 1;
	ASSERT_EQ(-EFAULT, mrcp_qp_post_send(f.e, qpn, &wr, f.now));
	/* the second SGE is bad: the first one's reference is dropped again */
	sge[0].addr = BUF_VA;
	sge[1] = (struct mrcp_sge){.addr = BUF_VA, .len = 8, .lkey = f.lkey + 1};
	wr.num_sge = 2;
	ASSERT_EQ(-EFAULT, mrcp_qp_post_send(f.e, qpn, &wr, f.now));
	ASSERT_EQ(0, f.e->mrs[mrcp__mr_slot(f.e, f.lkey)].refs);
	/* a message longer than 2^31 bytes (a huge region, never touched) */
	ASSERT_EQ(0, mrcp_mr_reg(f.e, 0, 1ull << 34, dummy, MRCP_ACCESS_LOCAL_WRITE, &big_l, &big_r));
	for (int i = 0; i < 3; i++)
		sge[i] = (struct mrcp_sge){.addr = (uint64_t)i << 30, .len = 1u << 30, .lkey = big_l};
	wr.num_sge = 3;
	ASSERT_EQ(-EINVAL, mrcp_qp_post_send(f.e, qpn, &wr, f.now));
	ASSERT_EQ(0, f.e->mrs[mrcp__mr_slot(f.e, big_l)].refs);
	/* exactly 2^31 is allowed */
	wr.num_sge = 2;
	ASSERT_EQ(0, mrcp_qp_post_send(f.e, qpn, &wr, f.now));
	ASSERT_EQ(2, f.e->mrs[mrcp__mr_slot(f.e, big_l)].refs);
	ASSERT_EQ(-ENOENT, mrcp_qp_post_send(f.e, qpn ^ 0x100, &wr, f.now));
	fx_fini(&f);
}

TEST(qp, qp_post_send__region_of_another_pd_is_efault)
{
	struct fx f;
	uint32_t qpn, pd, lk, rk;
	static uint8_t other[64];
	struct mrcp_sge sge;
	struct mrcp_send_wr wr;

	fx_init(&f);
	qpn = qp_up(&f, NULL, NULL);
	ASSERT_EQ(0, mrcp_pd_alloc(f.e, &pd));
	ASSERT_EQ(0, mrcp_mr_reg_pd(f.e, pd, 0x30000000ull, sizeof(other), other, MRCP_ACCESS_LOCAL_WRITE, &lk, &rk));
	/* a valid key and bounds, but the region is not the sending QP's PD's
	 * (D67): it could carry another tenant's bytes to our peer */
	sge = (struct mrcp_sge){.addr = 0x30000000ull, .len = 8, .lkey = lk};
	memset(&wr, 0, sizeof(wr));
	wr.opcode = MRCP_WR_WRITE;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	ASSERT_EQ(-EFAULT, mrcp_qp_post_send(f.e, qpn, &wr, f.now));
	ASSERT_EQ(0, f.e->mrs[mrcp__mr_slot(f.e, lk)].refs);
	ASSERT_EQ(0, mrcp_mr_dereg(f.e, lk));
	ASSERT_EQ(0, mrcp_pd_free(f.e, pd));
	fx_fini(&f);
}

TEST(qp, qp_post_send__full_send_queue_is_eagain)
{
	struct fx f;
	struct mrcp_qp_attr a;
	uint32_t qpn;

	fx_init(&f);
	memset(&a, 0, sizeof(a));
	a.sq_depth = 3; /* rounded up to 4 */
	qpn = qp_up(&f, &a, NULL);
	for (int i = 0; i < 4; i++)
		ASSERT_EQ(0, post(&f, qpn, (uint64_t)i, MRCP_WR_WRITE, 0, 8));
	ASSERT_EQ(-EAGAIN, post(&f, qpn, 9, MRCP_WR_WRITE, 0, 8));
	ASSERT_EQ(4, f.e->mrs[mrcp__mr_slot(f.e, f.lkey)].refs); /* the refused one holds nothing */
	fx_fini(&f);
}

TEST(qp, qp_post_recv__full_receive_queue_is_eagain)
{
	struct fx f;
	struct mrcp_qp_attr a;
	uint32_t qpn;

	fx_init(&f);
	memset(&a, 0, sizeof(a));
	a.rq_depth = 2;
	qpn = qp_up(&f, &a, NULL);
	ASSERT_EQ(0, mrcp_qp_post_recv(f.e, qpn, 1));
	ASSERT_EQ(0, mrcp_qp_post_recv(f.e, qpn, 2));
	ASSERT_EQ(-EAGAIN, mrcp_qp_post_recv(f.e, qpn, 3));
	ASSERT_EQ(-ENOENT, mrcp_qp_post_recv(f.e, qpn ^ 0x100, 3));
	fx_fini(&f);
}

static void one_peer(struct mrcp_engine_config *c)
{
	c->max_peers = 1;
}

TEST(qp, qp_connect__peer_table_full_is_enospc)
{
	struct fx f;
	struct mrcp_conn_info ci;
	uint32_t qpn;

	fx_init_cfg(&f, one_peer);
	qp_up(&f, NULL, NULL);
	qp_up(&f, NULL, NULL); /* the same node shares the entry */
	fx_peer_info(&ci, PEER_QPN, 4096);
	fx_ip(&ci.node_addr, 5, 0);
	fx_ip(&ci.port_addr[0], 5, 1);
	ASSERT_EQ(0, mrcp_qp_create(f.e, NULL, &qpn));
	ASSERT_EQ(-ENOSPC, mrcp_qp_connect(f.e, qpn, &ci, f.now));
	ASSERT_EQ(MRCP_QPS_INIT, mrcp_qp_state(f.e, qpn));
	fx_fini(&f);
}

TEST(qp, qp_connect__unknown_cc_is_einval_and_stays_in_init)
{
	struct fx f;
	struct mrcp_qp_attr a;
	uint32_t qpn;
	struct mrcp_conn_info ci;

	fx_init(&f);
	memset(&a, 0, sizeof(a));
	a.cc = "no-such-cc";
	fx_peer_info(&ci, PEER_QPN, 4096);
	ASSERT_EQ(0, mrcp_qp_create(f.e, &a, &qpn));
	ASSERT_EQ(-EINVAL, mrcp_qp_connect(f.e, qpn, &ci, f.now));
	ASSERT_EQ(MRCP_QPS_INIT, mrcp_qp_state(f.e, qpn));
	ASSERT_EQ(0, mrcp_qp_destroy(f.e, qpn, f.now));
	/* a per-QP CC by name works */
	a.cc = "fixed";
	qpn = qp_up(&f, &a, NULL);
	ASSERT_TRUE(mrcp__qp_lookup(f.e, qpn)->cc == &mrcp__qp_lookup(f.e, qpn)->own_cc);
	fx_fini(&f);
}

TEST(qp, qp_connect__qps_toward_one_peer_share_its_qpcc)
{
	struct fx f;
	uint32_t a, b;

	fx_init(&f);
	a = qp_up(&f, NULL, NULL);
	b = qp_up(&f, NULL, NULL);
	ASSERT_TRUE(mrcp__qp_lookup(f.e, a)->cc == mrcp__qp_lookup(f.e, b)->cc); /* D53 */
	ASSERT_EQ(2, mrcp__qp_lookup(f.e, a)->cc->users);
	ASSERT_EQ(2, mrcp__qp_lookup(f.e, a)->peer->n_qps);
	ASSERT_EQ(0, mrcp_qp_destroy(f.e, b, f.now));
	ASSERT_EQ(1, mrcp__qp_lookup(f.e, a)->cc->users);
	ASSERT_EQ(1, mrcp__qp_lookup(f.e, a)->peer->n_qps);
	fx_fini(&f);
}

/* ---- mrcp_qp_ev_deny and EV events ---------------------------------------------- */

TEST(qp, qp_ev_deny__every_ev_change_is_an_ev_state_event)
{
	struct fx f;
	struct mrcp_event ev[8];
	uint32_t qpn, value;

	fx_init(&f);
	qpn = qp_up(&f, NULL, NULL);
	while (mrcp_poll_events(f.e, ev, 8))
		; /* whatever connecting reported */
	value = mrcp_qp_evs(f.e, qpn)->evs[0].value;
	ASSERT_EQ(0, mrcp_qp_ev_deny(f.e, qpn, value, true, f.now));
	ASSERT_EQ(1, mrcp_poll_events(f.e, ev, 8));
	ASSERT_EQ(MRCP_EVENT_EV_STATE, ev[0].type);
	ASSERT_EQ(qpn, ev[0].qpn);
	ASSERT_EQ(value, ev[0].ev.value);
	ASSERT_EQ(MRCP_EV_GOOD, ev[0].ev.from);
	ASSERT_EQ(MRCP_EV_DENIED, ev[0].ev.to);
	ASSERT_EQ(MRCP_EV_EVT_DENY, ev[0].ev.event);
	ASSERT_EQ(0, mrcp_qp_ev_deny(f.e, qpn, value, false, f.now));
	ASSERT_EQ(1, mrcp_poll_events(f.e, ev, 8));
	ASSERT_EQ(MRCP_EV_DENIED, ev[0].ev.from);
	ASSERT_EQ(MRCP_EV_EVT_ALLOW, ev[0].ev.event);
	fx_fini(&f);
}

/* ---- sizing by use: the scoreboard --------------------------------------- */

/* A scoreboard of 16 slots that takes PSN after PSN (and doubles twice on
 * the way) answers mrcp__qp_sb_past() for every PSN as a full-size one of
 * 1024 slots would: what check_spurious reads of retransmitted PSNs outlives
 * their slots. White-box, on the scoreboard fields alone. */
TEST(qp, sb_past__a_small_scoreboard_reads_as_a_full_size_one)
{
	static struct sb_entry full[1024];
	struct qp q;
	uint32_t psn0 = MRCP_PSN_MASK - 300; /* wraps on the way */

	memset(&q, 0, sizeof(q));
	memset(full, 0, sizeof(full));
	q.sb_cap = 1024;
	q.sb_mask = 15;
	q.sb = calloc(16, sizeof(*q.sb));
	ASSERT_TRUE(q.sb != NULL);
	q.next_psn = psn0;
	for (uint32_t k = 0; k < 3000; k++) {
		uint32_t psn = q.next_psn;
		struct sb_entry *en = &q.sb[psn & q.sb_mask];

		if (k == 700 || k == 1500)
			ASSERT_TRUE(mrcp__qp_sb_grow(&q));
		en = &q.sb[psn & q.sb_mask];
		if (en->tx_count >= 2 && q.sb_mask + 1 < q.sb_cap)
			mrcp__qp_sb_evict(&q, psn);
		/* the send: every third PSN goes twice, with its own cause */
		memset(en, 0, sizeof(*en));
		en->sent_ns = 1000 + (uint64_t)k * 10;
		en->tx_count = k % 3 == 0 ? 2 : 1;
		en->rtx_cause = (uint8_t)(k % 4);
		full[psn & 1023] = *en;
		q.next_psn = mrcp_psn_add(psn, 1);
		for (int32_t d = -1100; d <= 3; d += 7) {
			uint32_t p = mrcp_psn_add(q.next_psn, d);
			const struct sb_entry *got = mrcp__qp_sb_past(&q, p);
			bool reach = d < 0 && d >= -1024 && (int32_t)k + d >= -1; /* sent, within 1024 */

			if (!reach || full[p & 1023].tx_count < 2) {
				ASSERT_TRUE(got == NULL || got->tx_count < 2);
				continue;
			}
			ASSERT_TRUE(got != NULL);
			ASSERT_EQ(full[p & 1023].tx_count, got->tx_count);
			ASSERT_U64_EQ(full[p & 1023].sent_ns, got->sent_ns);
			ASSERT_EQ(full[p & 1023].rtx_cause, got->rtx_cause);
		}
	}
	ASSERT_EQ(63, q.sb_mask);
	ASSERT_TRUE(q.sbp_tail - q.sbp_head <= 1024 / 3 + 1); /* only resent PSNs are kept */
	free(q.sb);
	free(q.sbp);
}

/* ---- peers: found by any of their addresses --------------------------------- */

static void many_peers(struct mrcp_engine_config *c)
{
	c->max_peers = 300;
	c->max_qps = 512;
}

/* 300 peers with two ports each, one port address shared by two peers:
 * mrcp__peer_find (an address table, grown as peers come) finds each peer
 * by its node and port addresses, the shared one names the first peer, as
 * the scan over the slots did, and an unknown address none. */
TEST(qp, peer_find__every_address_of_every_peer)
{
	struct fx f;
	struct mrcp_ip unknown;

	fx_init_cfg(&f, many_peers);
	for (int i = 0; i < 300; i++) {
		struct mrcp_conn_info ci;

		fx_peer_info(&ci, PEER_QPN, 4096);
		memset(&ci.node_addr, 0, sizeof(ci.node_addr));
		ci.node_addr.family = 6;
		ci.node_addr.a[0] = 0xfd;
		ci.node_addr.a[14] = (uint8_t)(i >> 8);
		ci.node_addr.a[15] = (uint8_t)i;
		ci.n_ports = 2;
		ci.port_addr[0] = ci.node_addr;
		ci.port_addr[0].a[1] = 1;
		ci.port_addr[1] = ci.node_addr;
		ci.port_addr[1].a[1] = 2;
		if (i == 7) /* peer 7 shares peer 3's second port address */
			ci.port_addr[1].a[15] = 3;
		qp_up(&f, NULL, &ci);
	}
	ASSERT_EQ(300, f.e->peers_hw);
	ASSERT_TRUE(f.e->peer_hash != NULL);
	for (uint32_t i = 0; i < 300; i++) {
		const struct peer *p = &f.e->peers[i];

		ASSERT_TRUE(mrcp__peer_find(f.e, &p->node) == p);
		ASSERT_TRUE(mrcp__peer_find(f.e, &p->port_addr[0]) == p);
		ASSERT_TRUE(mrcp__peer_find(f.e, &p->port_addr[1]) == (i == 7 ? &f.e->peers[3] : p));
	}
	memset(&unknown, 0, sizeof(unknown));
	unknown.family = 6;
	unknown.a[0] = 0xfe;
	ASSERT_TRUE(mrcp__peer_find(f.e, &unknown) == NULL);
	fx_fini(&f);
}
