/* test_fabric.c - the test fabric (test/lib/fabric.c) on its own, without an
 * engine: hand-made frames through fabric_send, observed by the delivery
 * hook; delays, ordering, every impairment, queues, rules, scheduled actions,
 * determinism per seed, ECMP, and endpoint polling with a fake endpoint. */
#include <errno.h>
#include <time.h>

#include "fabric.h"
#include "mrcp_bytes.h"
#include "mrcp_prng.h"
#include "mrcp_test.h"

/* Frame bytes of one test packet over IPv6: Eth 14 + IPv6 40 + UDP 8 +
 * BTH/METH/TSETH/RETH 36 + payload + ICRC 4. */
#define HDR_BYTES 36u
#define V6_OVERHEAD (14u + 40u + 8u + HDR_BYTES + 4u)
#define V4_OVERHEAD (14u + 20u + 8u + HDR_BYTES + 4u)

static uint8_t payload_buf[4096];

/* ---- delivery log ----------------------------------------------------------- */

struct rec {
	uint64_t t, sent;         /* ns */
	uint8_t src, dst, plane, path;
	uint32_t psn;
	uint8_t trim, ecn, dscp, opcode;
	uint32_t frame_len, mrc_len, ip_len;
	uint32_t ev;
	bool dup;
};

struct log {
	struct rec *r;
	unsigned n, cap;
};

static struct log lg;

static void log_hook(void *ctx, const struct fabric_delivery *d)
{
	struct log *l = ctx;
	struct rec *r;

	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 1024;
		l->r = realloc(l->r, l->cap * sizeof(*l->r));
		ASSERT_TRUE(l->r != NULL);
	}
	r = &l->r[l->n++];
	memset(r, 0, sizeof(*r));
	r->t = d->now_ns;
	r->sent = d->sent_ns;
	r->src = d->src;
	r->dst = d->dst;
	r->plane = d->plane;
	r->path = d->path;
	r->psn = mrcp_get_be24(d->rx->data + 9);
	r->opcode = d->rx->data[0];
	r->trim = d->rx->trim;
	r->ecn = d->rx->ecn;
	r->dscp = d->view->dscp;
	r->frame_len = d->frame_len;
	r->mrc_len = d->rx->len;
	r->ev = d->rx->ev;
	r->dup = d->dup;
	/* the IP length as received: IPv4 total length or IPv6 payload length */
	r->ip_len = d->view->l3 == MRCP_FRAME_IPV4 ? mrcp_get_be16(d->frame + 14 + 2)
						   : mrcp_get_be16(d->frame + 14 + 4);
}

static uint64_t log_hash(const struct log *l)
{
	uint64_t h = 0xCBF29CE484222325ull;

	for (unsigned i = 0; i < l->n; i++) {
		const struct rec *r = &l->r[i];
		uint64_t v[] = {r->t, r->sent, r->src, r->dst, r->plane, r->path, r->psn,
				r->trim, r->ecn, r->frame_len, r->dup};

		for (unsigned j = 0; j < sizeof(v) / sizeof(v[0]); j++)
			h = (h ^ v[j]) * 0x100000001B3ull;
	}
	return h;
}

/* ---- fixture ------------------------------------------------------------------ */

static struct fabric *fab_new(const struct fabric_cfg *c, uint64_t seed, unsigned nodes)
{
	struct fabric *f;

	ASSERT_EQ(0, fabric_create(c, seed, &f));
	for (unsigned i = 0; i < nodes; i++)
		ASSERT_EQ((int)i, fabric_add_node(f, NULL));
	memset(&lg, 0, sizeof(lg));
	fabric_set_deliver_hook(f, log_hook, &lg);
	return f;
}

static void fab_free(struct fabric *f)
{
	fabric_destroy(f);
	free(lg.r);
	memset(&lg, 0, sizeof(lg));
}

static void cfg_small(struct fabric_cfg *c)
{
	fabric_cfg_defaults(c);
	c->max_nodes = 4;
	c->pool_pkts = 4096;
	c->frame_bytes = 2048;
}

/* A data packet (WRITE_ONLY: BTH, METH, TSETH, RETH) with @len payload bytes. */
static void tx_make(struct mrcp_tx *tx, const struct fabric *f, unsigned dst, uint8_t plane,
		    uint32_t psn, uint32_t ev, uint32_t len)
{
	memset(tx, 0, sizeof(*tx));
	tx->hdr[0] = MRCP_OP_WRITE_ONLY;
	tx->hdr[1] = (uint8_t)(((4 - len % 4) % 4) << 4); /* PadCnt */
	tx->hdr[2] = tx->hdr[3] = 0xFF;                   /* P_Key */
	mrcp_put_be24(tx->hdr + 5, 0x11);                 /* DestQP */
	tx->hdr[8] = 0x80 | 0x10;                         /* AckReq, ts */
	mrcp_put_be24(tx->hdr + 9, psn);
	tx->hdr[12 + 4 + 3] = MRCP_TSETH_FTYPE;
	mrcp_put_be32(tx->hdr + 12 + 8 + 12, len);        /* RETH DMA length */
	tx->hdr_len = HDR_BYTES;
	tx->n_seg = 1;
	tx->seg[0].ptr = payload_buf;
	tx->seg[0].len = len;
	tx->payload_len = len;
	tx->pad = (uint8_t)((4 - len % 4) % 4);
	tx->port = plane;
	tx->dscp = 10; /* TRIMMABLE */
	tx->ecn = MRCP_ECN_ECT0;
	tx->opcode = MRCP_OP_WRITE_ONLY;
	tx->ev = ev;
	tx->psn = psn;
	tx->qpn = 0x22;
	tx->dst = *fabric_node_addr(f, dst, plane);
}

static void send_one(struct fabric *f, unsigned src, unsigned dst, uint32_t psn, uint32_t len)
{
	struct mrcp_tx tx;

	tx_make(&tx, f, dst, 1, psn, 0xC000u + psn % 256, len);
	ASSERT_EQ(0, fabric_send(f, src, &tx));
}

/* ---- create / nodes -------------------------------------------------------------- */

TEST(fabric, create__rejects_bad_config)
{
	struct fabric_cfg c;
	struct fabric *f;

	fabric_cfg_defaults(&c);
	c.n_planes = 0;
	ASSERT_EQ(-EINVAL, fabric_create(&c, 1, &f));
	fabric_cfg_defaults(&c);
	c.n_paths = FABRIC_MAX_PATHS + 1;
	ASSERT_EQ(-EINVAL, fabric_create(&c, 1, &f));
	fabric_cfg_defaults(&c);
	c.family = 5;
	ASSERT_EQ(-EINVAL, fabric_create(&c, 1, &f));
	fabric_cfg_defaults(&c);
	c.frame_bytes = 64;
	ASSERT_EQ(-EINVAL, fabric_create(&c, 1, &f));
}

TEST(fabric, add_node__auto_addresses_and_limits)
{
	struct fabric_cfg c;
	struct fabric *f;
	struct fabric_node_cfg nc;
	const struct mrcp_ip *a;

	cfg_small(&c);
	c.max_nodes = 2;
	c.n_planes = 2;
	f = fab_new(&c, 1, 2);
	a = fabric_node_addr(f, 1, 2);
	ASSERT_TRUE(a != NULL);
	ASSERT_EQ(6, a->family);
	ASSERT_EQ(0xFD, a->a[0]);
	ASSERT_EQ(2, mrcp_get_be16(a->a + 6));
	ASSERT_EQ(2, a->a[15]);
	ASSERT_TRUE(fabric_node_addr(f, 1, 3) == NULL);
	ASSERT_TRUE(fabric_node_addr(f, 2, 1) == NULL);
	ASSERT_EQ(-ENOSPC, fabric_add_node(f, NULL));
	fab_free(f);

	/* the same address twice is refused */
	cfg_small(&c);
	f = fab_new(&c, 1, 1);
	fabric_node_cfg_defaults(&nc);
	nc.addr[0] = *fabric_node_addr(f, 0, 1);
	ASSERT_EQ(-EINVAL, fabric_add_node(f, &nc));
	fab_free(f);
}

TEST(fabric, send__errors_are_counted)
{
	struct fabric_cfg c;
	struct fabric *f;
	struct mrcp_tx tx;

	cfg_small(&c);
	f = fab_new(&c, 1, 2);
	tx_make(&tx, f, 1, 1, 0, 1, 64);
	tx.dst.a[15] = 99; /* nobody */
	ASSERT_EQ(-EHOSTUNREACH, fabric_send(f, 0, &tx));
	ASSERT_EQ(1, fabric_node_stats(f, 0)->tx_noroute);
	tx_make(&tx, f, 1, 1, 0, 1, 64);
	tx.port = 2; /* one plane only */
	ASSERT_EQ(-EINVAL, fabric_send(f, 0, &tx));
	tx_make(&tx, f, 1, 1, 0, 1, 2000);
	ASSERT_EQ(-EMSGSIZE, fabric_send(f, 0, &tx));
	tx_make(&tx, f, 1, 1, 0, 1, 64);
	tx.dscp = 64; /* frame build refuses it */
	ASSERT_EQ(-EINVAL, fabric_send(f, 0, &tx));
	ASSERT_EQ(3, fabric_node_stats(f, 0)->tx_bad);
	ASSERT_EQ(-EINVAL, fabric_send(f, 7, &tx));
	ASSERT_EQ(0, fabric_pkts_in_flight(f));
	fab_free(f);
}

TEST(fabric, send__ipv4_ev_must_fit_16_bits)
{
	struct fabric_cfg c;
	struct fabric *f;
	struct mrcp_tx tx;

	cfg_small(&c);
	c.family = 4;
	f = fab_new(&c, 1, 2);
	tx_make(&tx, f, 1, 1, 0, 0x12345, 64);
	ASSERT_EQ(-EINVAL, fabric_send(f, 0, &tx)); /* D5 */
	tx_make(&tx, f, 1, 1, 0, 0xBEEF, 64);
	ASSERT_EQ(0, fabric_send(f, 0, &tx));
	fabric_run_until(f, 1000000);
	ASSERT_EQ(1, lg.n);
	ASSERT_EQ(0xBEEF, lg.r[0].ev);
	ASSERT_EQ(64 + V4_OVERHEAD, lg.r[0].frame_len);
	fab_free(f);
}

TEST(fabric, send__pool_exhaustion_drops_and_counts)
{
	struct fabric_cfg c;
	struct fabric *f;
	struct mrcp_tx tx;

	cfg_small(&c);
	c.pool_pkts = 8;
	f = fab_new(&c, 1, 2);
	tx_make(&tx, f, 1, 1, 0, 1, 64);
	for (int i = 0; i < 8; i++)
		ASSERT_EQ(0, fabric_send(f, 0, &tx));
	ASSERT_EQ(-ENOBUFS, fabric_send(f, 0, &tx));
	ASSERT_EQ(-ENOBUFS, fabric_send(f, 0, &tx));
	ASSERT_EQ(2, fabric_node_stats(f, 0)->tx_pool);
	ASSERT_EQ(8, fabric_pkts_in_flight(f));
	fabric_run_until(f, 1000000);
	ASSERT_EQ(0, fabric_pkts_in_flight(f));
	ASSERT_EQ(8, lg.n);
	ASSERT_EQ(0, fabric_send(f, 0, &tx)); /* the pool refilled */
	fab_free(f);
}

/* ---- delivery, delay and ordering ------------------------------------------------- */

TEST(fabric, deliver__frame_parsed_into_rx_view)
{
	struct fabric_cfg c;
	struct fabric *f;

	cfg_small(&c);
	f = fab_new(&c, 1, 2);
	send_one(f, 0, 1, 42, 100);
	ASSERT_EQ(0, lg.n);
	fabric_run_until(f, 999);
	ASSERT_EQ(0, lg.n);
	fabric_run_until(f, 1000);
	ASSERT_EQ(1, lg.n);
	ASSERT_U64_EQ(1000, lg.r[0].t);
	ASSERT_EQ(42, lg.r[0].psn);
	ASSERT_EQ(MRCP_TRIM_NONE, lg.r[0].trim);
	ASSERT_EQ(MRCP_ECN_ECT0, lg.r[0].ecn);
	ASSERT_EQ(10, lg.r[0].dscp);
	ASSERT_EQ(HDR_BYTES + 100, lg.r[0].mrc_len);
	ASSERT_EQ(100 + V6_OVERHEAD, lg.r[0].frame_len);
	ASSERT_EQ(0xC000u + 42, lg.r[0].ev);
	ASSERT_EQ(1, fabric_node_stats(f, 1)->rx_pkts);
	ASSERT_EQ(1, fabric_path_stats(f, 0, 1, 1, 0)->sent);
	ASSERT_EQ(1, fabric_path_stats(f, 0, 1, 1, 0)->delivered);
	ASSERT_EQ(UINT64_MAX, fabric_next_event(f));
	fab_free(f);
}

TEST(fabric, delay__jitter_stays_in_bounds)
{
	struct fabric_cfg c;
	struct fabric *f;
	uint64_t lo = UINT64_MAX, hi = 0;

	cfg_small(&c);
	c.path.delay_ns = 5000;
	c.path.jitter_ns = 2000;
	f = fab_new(&c, 7, 2);
	for (uint32_t i = 0; i < 2000; i++) {
		send_one(f, 0, 1, i, 64);
		fabric_run_until(f, fabric_now(f) + 500);
	}
	fabric_run_until(f, fabric_now(f) + 100000);
	ASSERT_EQ(2000, lg.n);
	for (unsigned i = 0; i < lg.n; i++) {
		uint64_t d = lg.r[i].t - lg.r[i].sent;

		lo = d < lo ? d : lo;
		hi = d > hi ? d : hi;
	}
	ASSERT_GE(lo, 5000);
	ASSERT_LE(hi, 7000);
	ASSERT_LT(lo, 5050); /* the whole range is used */
	ASSERT_GT(hi, 6950);
	fab_free(f);
}

TEST(fabric, order__same_time_ties_break_by_insertion)
{
	struct fabric_cfg c;
	struct fabric *f;

	cfg_small(&c);
	c.path.delay_ns = 3000;
	f = fab_new(&c, 1, 3);
	for (uint32_t i = 0; i < 100; i++)
		send_one(f, i % 2, 2, i, 64); /* two sources, one instant */
	fabric_run_until(f, 10000);
	ASSERT_EQ(100, lg.n);
	for (unsigned i = 0; i < lg.n; i++) {
		ASSERT_U64_EQ(3000, lg.r[i].t);
		ASSERT_EQ(i, lg.r[i].psn);
	}
	fab_free(f);
}

static uint64_t call_log[2000];
static unsigned call_n;

static void call_record(void *ctx, struct fabric *f)
{
	call_log[call_n++] = (uint64_t)(uintptr_t)ctx << 32 | fabric_now(f);
}

TEST(fabric, order__events_run_by_time_then_insertion)
{
	struct fabric_cfg c;
	struct fabric *f;
	struct mrcp_prng r;

	cfg_small(&c);
	f = fab_new(&c, 1, 1);
	mrcp_prng_seed(&r, 99);
	call_n = 0;
	for (uintptr_t i = 0; i < 2000; i++) {
		struct fabric_action a = {.op = FABRIC_ACT_CALL, .fn = call_record, .ctx = (void *)i};

		ASSERT_EQ(0, fabric_schedule(f, 1 + mrcp_prng_below(&r, 300), &a));
	}
	ASSERT_EQ(2000, fabric_run_until(f, 1000));
	ASSERT_EQ(2000, call_n);
	for (unsigned i = 1; i < call_n; i++) {
		uint32_t t0 = (uint32_t)call_log[i - 1], t1 = (uint32_t)call_log[i];

		ASSERT_LE(t0, t1);
		if (t0 == t1) /* same time: the order they were scheduled in */
			ASSERT_LT(call_log[i - 1] >> 32, call_log[i] >> 32);
	}
	{
		struct fabric_action a = {.op = FABRIC_ACT_CALL, .fn = call_record};

		ASSERT_EQ(-EINVAL, fabric_schedule(f, 10, &a)); /* the past */
		a.fn = NULL;
		ASSERT_EQ(-EINVAL, fabric_schedule(f, 2000, &a));
	}
	fab_free(f);
}

static bool fewer_than(void *ctx)
{
	return lg.n < *(unsigned *)ctx;
}

TEST(fabric, run_while__stops_on_predicate_or_deadline)
{
	struct fabric_cfg c;
	struct fabric *f;
	unsigned want = 3;

	cfg_small(&c);
	f = fab_new(&c, 1, 2);
	for (uint32_t i = 0; i < 5; i++) {
		send_one(f, 0, 1, i, 64);
		fabric_run_until(f, fabric_now(f) + 100);
	}
	/* sent at 0, 100, ..., 400; delivered 1000 later */
	ASSERT_EQ(0, fabric_run_while(f, fewer_than, &want, 1000000));
	ASSERT_EQ(3, lg.n);
	ASSERT_U64_EQ(1200, fabric_now(f));
	want = 100;
	ASSERT_EQ(-ETIMEDOUT, fabric_run_while(f, fewer_than, &want, 50000));
	ASSERT_EQ(5, lg.n);
	ASSERT_U64_EQ(50000, fabric_now(f));
	fab_free(f);
}

/* ---- random impairments ------------------------------------------------------------- */

TEST(fabric, loss__rate_within_tolerance)
{
	struct fabric_cfg c;
	struct fabric *f;
	const struct fabric_path_stats *st;

	cfg_small(&c);
	c.path.loss = 0.1;
	f = fab_new(&c, 3, 2);
	for (uint32_t i = 0; i < 10000; i++) {
		send_one(f, 0, 1, i, 64);
		if (i % 1000 == 999)
			fabric_run_until(f, fabric_now(f) + 10000);
	}
	st = fabric_path_stats(f, 0, 1, 1, 0);
	ASSERT_EQ(10000, st->sent);
	ASSERT_EQ(st->sent, st->delivered + st->drop_loss);
	ASSERT_EQ(st->delivered, lg.n);
	/* binomial sd is 30: allow 4 sd */
	ASSERT_GE(st->drop_loss, 1000 - 120);
	ASSERT_LE(st->drop_loss, 1000 + 120);
	mrcp_test_figure("loss_measured", (double)st->drop_loss / 10000.0, "fraction");
	fab_free(f);
}

TEST(fabric, dup__extra_copies_delivered)
{
	struct fabric_cfg c;
	struct fabric *f;
	const struct fabric_path_stats *st;
	unsigned dups = 0;

	cfg_small(&c);
	c.path.dup = 0.2;
	c.path.jitter_ns = 100;
	f = fab_new(&c, 4, 2);
	for (uint32_t i = 0; i < 10000; i++) {
		send_one(f, 0, 1, i, 64);
		if (i % 1000 == 999)
			fabric_run_until(f, fabric_now(f) + 10000);
	}
	fabric_run_until(f, fabric_now(f) + 100000);
	st = fabric_path_stats(f, 0, 1, 1, 0);
	ASSERT_EQ(st->sent + st->duplicated, st->delivered);
	ASSERT_EQ(st->delivered, lg.n);
	for (unsigned i = 0; i < lg.n; i++)
		dups += lg.r[i].dup;
	ASSERT_EQ(st->duplicated, dups);
	ASSERT_GE(st->duplicated, 2000 - 160); /* sd 40 */
	ASSERT_LE(st->duplicated, 2000 + 160);
	fab_free(f);
}

TEST(fabric, reorder__delayed_packets_overtaken)
{
	struct fabric_cfg c;
	struct fabric *f;
	const struct fabric_path_stats *st;
	unsigned late = 0, inversions = 0;

	cfg_small(&c);
	c.path.delay_ns = 1000;
	c.path.reorder = 0.1;
	c.path.reorder_ns = 10000;
	f = fab_new(&c, 5, 2);
	for (uint32_t i = 0; i < 10000; i++) {
		send_one(f, 0, 1, i, 64);
		fabric_run_until(f, fabric_now(f) + 1000);
	}
	fabric_run_until(f, fabric_now(f) + 100000);
	st = fabric_path_stats(f, 0, 1, 1, 0);
	ASSERT_EQ(10000, lg.n);
	for (unsigned i = 0; i < lg.n; i++) {
		uint64_t d = lg.r[i].t - lg.r[i].sent;

		ASSERT_TRUE(d == 1000 || d == 11000);
		late += d == 11000;
		if (i > 0 && lg.r[i].psn < lg.r[i - 1].psn)
			inversions++;
	}
	ASSERT_EQ(st->reordered, late);
	ASSERT_GE(late, 1000 - 120);
	ASSERT_LE(late, 1000 + 120);
	ASSERT_GT(inversions, 500);
	fab_free(f);
}

TEST(fabric, corrupt__icrc_failure_dropped_and_counted)
{
	struct fabric_cfg c;
	struct fabric *f;
	const struct fabric_path_stats *st;

	cfg_small(&c);
	c.path.corrupt = 0.05;
	f = fab_new(&c, 6, 2);
	for (uint32_t i = 0; i < 10000; i++) {
		send_one(f, 0, 1, i, 256);
		if (i % 1000 == 999)
			fabric_run_until(f, fabric_now(f) + 10000);
	}
	st = fabric_path_stats(f, 0, 1, 1, 0);
	ASSERT_EQ(st->corrupted, st->drop_corrupt);
	ASSERT_EQ(st->corrupted, fabric_node_stats(f, 1)->rx_bad_icrc);
	ASSERT_EQ(0, fabric_node_stats(f, 1)->rx_malformed);
	ASSERT_EQ(st->sent, st->delivered + st->drop_corrupt);
	ASSERT_EQ(st->delivered, lg.n);
	ASSERT_GE(st->corrupted, 500 - 90); /* sd 22 */
	ASSERT_LE(st->corrupted, 500 + 90);
	fab_free(f);
}

/* ---- queues: rate, trimming, buffer, ECN ---------------------------------------------- */

TEST(fabric, rate__path_queue_spaces_arrivals)
{
	struct fabric_cfg c;
	struct fabric *f;
	const uint32_t len = 1000, frame = len + V6_OVERHEAD; /* 1102 B */
	const uint64_t ser = frame * 8ull; /* ns at 1 Gb/s */

	cfg_small(&c);
	c.path.q.rate_bps = 1000000000ull;
	c.path.delay_ns = 2000;
	f = fab_new(&c, 1, 2);
	for (uint32_t i = 0; i < 10; i++)
		send_one(f, 0, 1, i, len);
	fabric_run_until(f, 1000000);
	ASSERT_EQ(10, lg.n);
	for (unsigned i = 0; i < lg.n; i++) {
		ASSERT_EQ(i, lg.r[i].psn);
		ASSERT_U64_EQ(2000 + (i + 1) * ser, lg.r[i].t);
	}
	fab_free(f);
}

TEST(fabric, rate__nic_port_spaces_sends)
{
	struct fabric_cfg c;
	struct fabric *f;
	struct fabric_node_cfg nc;
	const uint32_t len = 1008, frame = len + V6_OVERHEAD; /* 1110 B */
	const uint64_t ser = frame * 8ull / 10; /* 888 ns at 10 Gb/s */

	cfg_small(&c);
	ASSERT_EQ(0, fabric_create(&c, 1, &f));
	memset(&lg, 0, sizeof(lg));
	fabric_set_deliver_hook(f, log_hook, &lg);
	fabric_node_cfg_defaults(&nc);
	nc.port_bps[0] = 10000000000ull;
	ASSERT_EQ(0, fabric_add_node(f, &nc));
	ASSERT_EQ(1, fabric_add_node(f, NULL));
	for (uint32_t i = 0; i < 10; i++)
		send_one(f, 0, 1, i, len);
	fabric_run_until(f, 1000000);
	ASSERT_EQ(10, lg.n);
	for (unsigned i = 0; i < lg.n; i++)
		ASSERT_U64_EQ(1000 + (i + 1) * ser, lg.r[i].t);
	fab_free(f);
}

/* Ten 1024 B packets at once into a 10 Gb/s queue that trims above 3000 B:
 * packet i sees a backlog of i frames (1126 B each), so 0..2 pass whole and
 * 3..9 are trimmed, and the trimmed headers overtake the queued data. */
static void trim_case(uint8_t family, bool lasthop)
{
	struct fabric_cfg c;
	struct fabric *f;
	const uint32_t len = 1024;
	uint32_t overhead = family == 4 ? V4_OVERHEAD : V6_OVERHEAD;
	uint32_t hdrs = overhead - 4 - HDR_BYTES; /* Eth + IP + UDP */
	unsigned whole = 0, trimmed = 0;

	cfg_small(&c);
	c.family = family;
	c.path.q.rate_bps = 10000000000ull;
	c.path.q.trim = true;
	c.path.q.trim_bytes = 3000;
	c.path.q.lasthop = lasthop;
	f = fab_new(&c, 1, 2);
	for (uint32_t i = 0; i < 10; i++)
		send_one(f, 0, 1, i, len);
	fabric_run_until(f, 1000000);
	ASSERT_EQ(10, lg.n);
	for (unsigned i = 0; i < lg.n; i++) {
		const struct rec *r = &lg.r[i];

		if (r->psn < 3) {
			ASSERT_EQ(MRCP_TRIM_NONE, r->trim);
			ASSERT_EQ(len + overhead, r->frame_len);
			whole++;
			continue;
		}
		trimmed++;
		ASSERT_EQ(lasthop ? MRCP_TRIM_LASTHOP : MRCP_TRIM_FABRIC, r->trim);
		ASSERT_EQ(lasthop ? 13 : 11, r->dscp);
		ASSERT_EQ(hdrs + HDR_BYTES, r->frame_len); /* through RETH (§2.1) */
		ASSERT_EQ(HDR_BYTES, r->mrc_len);
		/* the IP length still claims the whole packet (D34) */
		ASSERT_EQ(family == 4 ? len + overhead - 14 : len + overhead - 14 - 40, r->ip_len);
		ASSERT_LT(r->t, lg.r[lg.n - 1].t);
	}
	ASSERT_EQ(3, whole);
	ASSERT_EQ(7, trimmed);
	/* a trimmed header goes at priority: all 7 beat the third whole packet */
	ASSERT_EQ(2, lg.r[lg.n - 1].psn);
	ASSERT_EQ(7, fabric_path_stats(f, 0, 1, 1, 0)->trimmed);
	ASSERT_EQ(7, fabric_node_stats(f, 1)->rx_trimmed);
	fab_free(f);
}

TEST(fabric, trim__over_threshold_ipv6)
{
	trim_case(6, false);
}

TEST(fabric, trim__over_threshold_ipv4_checksum_fixed)
{
	trim_case(4, false);
}

TEST(fabric, trim__lasthop_codepoint)
{
	trim_case(6, true);
}

TEST(fabric, trim__untrimmable_class_tail_dropped)
{
	struct fabric_cfg c;
	struct fabric *f;
	struct mrcp_tx tx;
	const struct fabric_path_stats *st;

	cfg_small(&c);
	c.path.q.rate_bps = 10000000000ull;
	c.path.q.trim = true;
	c.path.q.trim_bytes = 3000;
	c.path.q.buffer_bytes = 5000;
	f = fab_new(&c, 1, 2);
	for (uint32_t i = 0; i < 10; i++) {
		tx_make(&tx, f, 1, 1, i, 1, 1024);
		tx.dscp = 14; /* NO_TRIM */
		ASSERT_EQ(0, fabric_send(f, 0, &tx));
	}
	fabric_run_until(f, 1000000);
	st = fabric_path_stats(f, 0, 1, 1, 0);
	/* backlog before packet i is i * 1126 B: 0..3 fit under 5000 B */
	ASSERT_EQ(4, st->delivered);
	ASSERT_EQ(6, st->drop_buffer);
	ASSERT_EQ(0, st->trimmed);
	fab_free(f);
}

TEST(fabric, trim__downlink_incast_is_lasthop)
{
	struct fabric_cfg c;
	struct fabric *f;
	unsigned lasthop = 0;

	cfg_small(&c);
	c.downlink.rate_bps = 10000000000ull;
	c.downlink.trim = true;
	c.downlink.trim_bytes = 4000;
	f = fab_new(&c, 1, 4);
	for (uint32_t i = 0; i < 12; i++)
		send_one(f, i % 3, 3, i, 1024); /* three senders, one receiver */
	fabric_run_until(f, 1000000);
	ASSERT_EQ(12, lg.n);
	for (unsigned i = 0; i < lg.n; i++)
		lasthop += lg.r[i].trim == MRCP_TRIM_LASTHOP;
	ASSERT_EQ(8, lasthop); /* 0..3 fit under 4000 B of backlog */
	ASSERT_EQ(8, fabric_node_stats(f, 3)->dl_trimmed);
	fab_free(f);
}

TEST(fabric, ecn__step_marks_only_ect_over_kmin)
{
	struct fabric_cfg c;
	struct fabric *f;
	struct mrcp_tx tx;

	cfg_small(&c);
	c.path.q.rate_bps = 10000000000ull;
	c.path.q.ecn = true;
	c.path.q.ecn_kmin_bytes = 2000;
	c.path.q.ecn_kmax_bytes = 2000;
	f = fab_new(&c, 1, 2);
	for (uint32_t i = 0; i < 6; i++) {
		tx_make(&tx, f, 1, 1, i, 1, 1024);
		if (i == 5)
			tx.ecn = MRCP_ECN_NOT_ECT;
		ASSERT_EQ(0, fabric_send(f, 0, &tx));
	}
	fabric_run_until(f, 1000000);
	ASSERT_EQ(6, lg.n);
	/* backlog before packet i is i * 1126 B: 0 and 1 unmarked */
	for (unsigned i = 0; i < 6; i++)
		ASSERT_EQ(i < 2 ? MRCP_ECN_ECT0 : i == 5 ? MRCP_ECN_NOT_ECT : MRCP_ECN_CE,
			  lg.r[i].ecn);
	ASSERT_EQ(3, fabric_path_stats(f, 0, 1, 1, 0)->ecn_marked);
	ASSERT_EQ(3, fabric_node_stats(f, 1)->rx_ce);
	fab_free(f);
}

TEST(fabric, ecn__linear_probability_between_kmin_and_kmax)
{
	struct fabric_cfg c;
	struct fabric *f;
	unsigned marked = 0;

	cfg_small(&c);
	c.family = 4; /* also: CE rewrites the IPv4 checksum */
	c.path.q.rate_bps = 10000000000ull;
	c.path.q.ecn = true;
	c.path.q.ecn_kmin_bytes = 0;
	c.path.q.ecn_kmax_bytes = 2 * (1024 + V4_OVERHEAD);
	c.path.q.ecn_pmax = 1.0;
	f = fab_new(&c, 11, 2);
	/* pairs: the second of each sees one frame of backlog, p = 0.5 */
	for (uint32_t i = 0; i < 4000; i++) {
		send_one(f, 0, 1, 2 * i, 1024);
		send_one(f, 0, 1, 2 * i + 1, 1024);
		fabric_run_until(f, fabric_now(f) + 10000);
	}
	ASSERT_EQ(8000, lg.n);
	for (unsigned i = 0; i < lg.n; i++) {
		if (lg.r[i].psn % 2 == 0)
			ASSERT_EQ(MRCP_ECN_ECT0, lg.r[i].ecn);
		marked += lg.r[i].ecn == MRCP_ECN_CE;
	}
	ASSERT_GE(marked, 2000 - 130); /* sd 32 */
	ASSERT_LE(marked, 2000 + 130);
	fab_free(f);
}

TEST(fabric, prio__control_overtakes_queued_data)
{
	struct fabric_cfg c;
	struct fabric *f;
	struct mrcp_tx tx;

	cfg_small(&c);
	c.path.q.rate_bps = 1000000000ull;
	f = fab_new(&c, 1, 2);
	for (uint32_t i = 0; i < 5; i++)
		send_one(f, 0, 1, i, 1024);
	tx_make(&tx, f, 1, 1, 99, 1, 0);
	tx.dscp = 46; /* CONTROL */
	tx.ecn = MRCP_ECN_NOT_ECT;
	ASSERT_EQ(0, fabric_send(f, 0, &tx));
	fabric_run_until(f, 1000000);
	ASSERT_EQ(6, lg.n);
	ASSERT_EQ(99, lg.r[0].psn);
	fab_free(f);
}

/* ---- scheduled actions and rules ------------------------------------------------------ */

TEST(fabric, blackhole__scheduled_on_and_off)
{
	struct fabric_cfg c;
	struct fabric *f;
	struct fabric_action a = {.op = FABRIC_ACT_BLACKHOLE,
				  .sel = {.src = 0, .dst = 1, .plane = FABRIC_ANY, .path = FABRIC_ANY}};

	cfg_small(&c);
	f = fab_new(&c, 1, 2);
	a.on = true;
	ASSERT_EQ(0, fabric_schedule(f, 20000, &a));
	a.on = false;
	ASSERT_EQ(0, fabric_schedule(f, 50000, &a));
	for (uint32_t i = 0; i < 100; i++) {
		fabric_run_until(f, i * 1000ull);
		send_one(f, 0, 1, i, 64);
	}
	fabric_run_until(f, 1000000);
	ASSERT_EQ(70, lg.n);
	ASSERT_EQ(30, fabric_path_stats(f, 0, 1, 1, 0)->drop_blackhole);
	for (unsigned i = 0; i < lg.n; i++)
		ASSERT_TRUE(lg.r[i].psn < 20 || lg.r[i].psn >= 50);
	fab_free(f);
}

TEST(fabric, action__loss_on_a_plane_and_delay_on_a_pair)
{
	struct fabric_cfg c;
	struct fabric *f;
	struct mrcp_tx tx;
	struct fabric_action a = {.op = FABRIC_ACT_LOSS, .loss = 1.0,
				  .sel = {.src = FABRIC_ANY, .dst = FABRIC_ANY, .plane = 2,
					  .path = FABRIC_ANY}};

	cfg_small(&c);
	c.n_planes = 2;
	f = fab_new(&c, 1, 2);
	ASSERT_EQ(0, fabric_schedule(f, 10000, &a));
	a = (struct fabric_action){.op = FABRIC_ACT_DELAY, .delay_ns = 7000,
				   .sel = {.src = 0, .dst = 1, .plane = FABRIC_ANY,
					   .path = FABRIC_ANY, .both = true}};
	ASSERT_EQ(0, fabric_schedule(f, 10000, &a));
	fabric_run_until(f, 10000);
	ASSERT_EQ(1.0, fabric_path_cfg(f, 1, 0, 2, 0)->loss);
	ASSERT_EQ(0.0, fabric_path_cfg(f, 1, 0, 1, 0)->loss);
	ASSERT_EQ(7000, fabric_path_cfg(f, 1, 0, 1, 0)->delay_ns);
	for (uint8_t plane = 1; plane <= 2; plane++) {
		tx_make(&tx, f, 1, plane, plane, 1, 64);
		ASSERT_EQ(0, fabric_send(f, 0, &tx));
	}
	fabric_run_until(f, 1000000);
	ASSERT_EQ(1, lg.n);
	ASSERT_EQ(1, lg.r[0].plane);
	ASSERT_U64_EQ(17000, lg.r[0].t);
	ASSERT_EQ(1, fabric_path_stats(f, 0, 1, 2, 0)->drop_loss);
	fab_free(f);
}

TEST(fabric, rule__drops_exactly_the_first_match)
{
	struct fabric_cfg c;
	struct fabric *f;
	struct fabric_rule r = {.match = FABRIC_M_PSN, .psn = 5, .count = 1};
	int id;

	cfg_small(&c);
	f = fab_new(&c, 1, 2);
	id = fabric_rule_add(f, &r);
	ASSERT_EQ(0, id);
	for (uint32_t i = 0; i < 10; i++)
		send_one(f, 0, 1, i, 64);
	send_one(f, 0, 1, 5, 64); /* the "retransmission" goes through */
	fabric_run_until(f, 1000000);
	ASSERT_EQ(10, lg.n);
	ASSERT_EQ(1, fabric_rule_hits(f, id));
	ASSERT_EQ(1, fabric_path_stats(f, 0, 1, 1, 0)->drop_rule);
	for (unsigned i = 0; i < 9; i++)
		ASSERT_EQ(i < 5 ? i : i + 1, lg.r[i].psn);
	ASSERT_EQ(5, lg.r[9].psn);
	fab_free(f);
}

TEST(fabric, rule__match_rtx_skip_window_and_actions)
{
	struct fabric_cfg c;
	struct fabric *f;
	struct mrcp_tx tx;
	int drop_rtx, trim, corrupt, delay;

	cfg_small(&c);
	f = fab_new(&c, 1, 2);
	/* the second retransmission of PSN 7 */
	drop_rtx = fabric_rule_add(f, &(struct fabric_rule){
		.match = FABRIC_M_PSN | FABRIC_M_RTX | FABRIC_M_DATA, .psn = 7, .rtx = true,
		.data = true, .skip = 1, .count = 1});
	trim = fabric_rule_add(f, &(struct fabric_rule){
		.match = FABRIC_M_PSN | FABRIC_M_SRC | FABRIC_M_DST | FABRIC_M_PLANE | FABRIC_M_PATH,
		.psn = 8, .src = 0, .dst = 1, .plane = 1, .path = 0, .action = FABRIC_RULE_TRIM});
	corrupt = fabric_rule_add(f, &(struct fabric_rule){
		.match = FABRIC_M_PSN | FABRIC_M_QPN, .psn = 9, .qpn = 0x11,
		.action = FABRIC_RULE_CORRUPT});
	delay = fabric_rule_add(f, &(struct fabric_rule){
		.match = FABRIC_M_OPCODE, .opcode = MRCP_OP_WRITE_ONLY, .after_ns = 50000,
		.until_ns = 60000, .action = FABRIC_RULE_DELAY, .delay_ns = 4000});
	ASSERT_EQ(-EINVAL, fabric_rule_add(f, &(struct fabric_rule){.match = 1u << 20}));

	for (int k = 0; k < 3; k++) {
		tx_make(&tx, f, 1, 1, 7, 1, 64);
		tx.hdr[8] |= k ? 0x20 : 0; /* BTH rtx */
		ASSERT_EQ(0, fabric_send(f, 0, &tx));
	}
	send_one(f, 0, 1, 8, 64);
	send_one(f, 0, 1, 9, 64);
	fabric_run_until(f, 55000);
	send_one(f, 0, 1, 10, 64);
	fabric_run_until(f, 65000);
	send_one(f, 0, 1, 11, 64);
	fabric_run_until(f, 1000000);

	ASSERT_EQ(1, fabric_rule_hits(f, drop_rtx));
	ASSERT_EQ(1, fabric_rule_hits(f, trim));
	ASSERT_EQ(1, fabric_rule_hits(f, corrupt));
	ASSERT_EQ(1, fabric_rule_hits(f, delay));
	ASSERT_EQ(1, fabric_node_stats(f, 1)->rx_bad_icrc);
	/* 7 (first), 7 (first rtx), 8 trimmed, 10 delayed, 11 */
	ASSERT_EQ(5, lg.n);
	ASSERT_EQ(7, lg.r[0].psn);
	ASSERT_EQ(7, lg.r[1].psn);
	ASSERT_EQ(8, lg.r[2].psn);
	ASSERT_EQ(MRCP_TRIM_FABRIC, lg.r[2].trim);
	ASSERT_EQ(10, lg.r[3].psn);
	ASSERT_U64_EQ(55000 + 1000 + 4000, lg.r[3].t);
	ASSERT_EQ(11, lg.r[4].psn);
	ASSERT_U64_EQ(65000 + 1000, lg.r[4].t);
	fab_free(f);
}

/* ---- determinism and ECMP ---------------------------------------------------------------- */

static uint64_t impaired_run(uint64_t seed, unsigned *delivered)
{
	struct fabric_cfg c;
	struct fabric *f;
	struct mrcp_prng r;
	uint64_t h;

	cfg_small(&c);
	c.n_planes = 2;
	c.n_paths = 4;
	c.path.delay_ns = 2000;
	c.path.jitter_ns = 3000;
	c.path.loss = 0.02;
	c.path.dup = 0.02;
	c.path.reorder = 0.05;
	c.path.reorder_ns = 5000;
	c.path.corrupt = 0.01;
	c.path.q.rate_bps = 25000000000ull;
	c.path.q.trim = true;
	c.path.q.trim_bytes = 8000;
	c.path.q.ecn = true;
	c.path.q.ecn_kmin_bytes = 2000;
	c.path.q.ecn_kmax_bytes = 10000;
	f = fab_new(&c, seed, 3);
	mrcp_prng_seed(&r, 1234); /* the traffic is the same for every seed */
	for (uint32_t i = 0; i < 5000; i++) {
		struct mrcp_tx tx;
		unsigned src = mrcp_prng_below(&r, 3), dst = (src + 1 + mrcp_prng_below(&r, 2)) % 3;

		tx_make(&tx, f, dst, (uint8_t)(1 + mrcp_prng_below(&r, 2)), i,
			0xC000u + mrcp_prng_below(&r, 64), 64 + 4 * mrcp_prng_below(&r, 256));
		ASSERT_EQ(0, fabric_send(f, src, &tx));
		if (mrcp_prng_below(&r, 8) == 0)
			fabric_run_until(f, fabric_now(f) + mrcp_prng_below(&r, 2000));
	}
	fabric_run_until(f, fabric_now(f) + 1000000);
	ASSERT_EQ(0, fabric_pkts_in_flight(f));
	h = log_hash(&lg);
	*delivered = lg.n;
	fab_free(f);
	return h;
}

TEST(fabric, determinism__same_seed_same_log_other_seed_differs)
{
	unsigned n1, n2, n3;
	uint64_t a = impaired_run(0x5eed, &n1);
	uint64_t b = impaired_run(0x5eed, &n2);
	uint64_t c = impaired_run(0x5eee, &n3);

	ASSERT_U64_EQ(a, b);
	ASSERT_EQ(n1, n2);
	ASSERT_NE(a, c);
}

TEST(fabric, ecmp__path_stable_per_ev_and_spread)
{
	struct fabric_cfg c;
	struct fabric *f;
	unsigned used[8] = {0};

	cfg_small(&c);
	c.n_paths = 8;
	f = fab_new(&c, 1, 2);
	for (uint32_t i = 0; i < 2000; i++) {
		struct mrcp_tx tx;

		tx_make(&tx, f, 1, 1, i, 0xC000u + i % 64, 64);
		ASSERT_EQ(0, fabric_send(f, 0, &tx));
	}
	fabric_run_until(f, 1000000);
	ASSERT_EQ(2000, lg.n);
	for (unsigned i = 0; i < lg.n; i++) {
		ASSERT_EQ(fabric_path_of(f, 0, 1, 1, lg.r[i].ev), lg.r[i].path);
		ASSERT_EQ(lg.r[i % 64].path, lg.r[i].path); /* same EV, same path */
		used[lg.r[i].path]++;
	}
	for (unsigned k = 0; k < 8; k++)
		ASSERT_GT(used[k], 0);
	for (unsigned k = 0; k < 8; k++)
		ASSERT_EQ(used[k], fabric_path_stats(f, 0, 1, 1, k)->delivered);
	fab_free(f);
}

static unsigned select_low_bits(void *ctx, unsigned src, unsigned dst, uint8_t plane,
				uint32_t ev, unsigned n_paths)
{
	(void)ctx;
	(void)src;
	(void)dst;
	(void)plane;
	(void)n_paths;
	return ev;
}

TEST(fabric, ecmp__override_hook)
{
	struct fabric_cfg c;
	struct fabric *f;

	cfg_small(&c);
	c.n_paths = 4;
	f = fab_new(&c, 1, 2);
	fabric_set_path_select(f, select_low_bits, NULL);
	for (uint32_t ev = 0; ev < 16; ev++) {
		struct mrcp_tx tx;

		tx_make(&tx, f, 1, 1, ev, ev, 64);
		ASSERT_EQ(0, fabric_send(f, 0, &tx));
	}
	fabric_run_until(f, 1000000);
	for (unsigned i = 0; i < lg.n; i++)
		ASSERT_EQ(lg.r[i].ev % 4, lg.r[i].path);
	fab_free(f);
}

TEST(fabric, path_set__selects_and_sums)
{
	struct fabric_cfg c;
	struct fabric *f;
	struct fabric_path_cfg pc;
	struct fabric_path_stats sum;
	struct fabric_sel all = {FABRIC_ANY, FABRIC_ANY, FABRIC_ANY, FABRIC_ANY, false};
	struct fabric_sel pair = {0, 1, FABRIC_ANY, FABRIC_ANY, true};

	cfg_small(&c);
	c.max_nodes = 3;
	c.n_planes = 2;
	c.n_paths = 2;
	f = fab_new(&c, 1, 3);
	pc = *fabric_path_cfg(f, 0, 1, 1, 0);
	pc.delay_ns = 4242;
	ASSERT_EQ(2 * 2 * 2, fabric_path_set(f, &pair, &pc)); /* both directions */
	ASSERT_EQ(4242, fabric_path_cfg(f, 1, 0, 2, 1)->delay_ns);
	ASSERT_EQ(1000, fabric_path_cfg(f, 0, 2, 1, 0)->delay_ns);
	ASSERT_EQ(3 * 3 * 2 * 2, fabric_path_set(f, &all, &pc));
	ASSERT_EQ(-EINVAL, fabric_path_set(f, &(struct fabric_sel){7, 0, 1, 0, false}, &pc));
	send_one(f, 0, 1, 1, 64);
	send_one(f, 2, 1, 2, 64);
	fabric_run_until(f, 1000000);
	fabric_path_stats_sum(f, &all, &sum);
	ASSERT_EQ(2, sum.sent);
	ASSERT_EQ(2, sum.delivered);
	fab_free(f);
}

/* ---- endpoints: polling, deadlines, kicks, TX room ----------------------------------------- */

struct fake_ep {
	struct fabric *f;
	unsigned node, peer;
	uint64_t deadline;        /* ns; UINT64_MAX = idle */
	uint64_t poll_t[64];
	unsigned n_polls;
	unsigned to_send;         /* packets to emit on the next polls */
	uint32_t next_psn;
	unsigned rx_pkts, rx_calls;
	uint64_t last_rx_t;
	bool echo;                /* answer every received packet */
	unsigned echo_due;
	bool no_room;
	unsigned room_off, room_on;
};

static void fake_rx(void *ctx, const struct mrcp_rx *pkts, unsigned n, uint64_t now_ns)
{
	struct fake_ep *ep = ctx;

	ep->rx_calls++;
	ep->rx_pkts += n;
	ep->last_rx_t = now_ns;
	for (unsigned i = 0; i < n; i++)
		ASSERT_EQ(MRCP_OP_WRITE_ONLY, pkts[i].data[0]);
	if (ep->echo)
		ep->echo_due += n;
}

static unsigned fake_poll(void *ctx, uint64_t now_ns, struct mrcp_tx *out, unsigned max)
{
	struct fake_ep *ep = ctx;
	unsigned n = 0;

	if (ep->n_polls < 64)
		ep->poll_t[ep->n_polls] = now_ns;
	ep->n_polls++;
	if (ep->deadline <= now_ns)
		ep->deadline = UINT64_MAX;
	if (ep->no_room)
		return 0;
	while (n < max && (ep->to_send || ep->echo_due)) {
		tx_make(&out[n++], ep->f, ep->peer, 1, ep->next_psn++, 0xC001, 1000);
		if (ep->echo_due)
			ep->echo_due--;
		else
			ep->to_send--;
	}
	return n;
}

static uint64_t fake_deadline(void *ctx)
{
	return ((struct fake_ep *)ctx)->deadline;
}

static void fake_room(void *ctx, uint8_t port, bool room)
{
	struct fake_ep *ep = ctx;

	ASSERT_EQ(1, port);
	ep->no_room = !room;
	if (room)
		ep->room_on++;
	else
		ep->room_off++;
}

static const struct fabric_endpoint_ops fake_ops = {
	.rx_burst = fake_rx,
	.poll = fake_poll,
	.next_deadline = fake_deadline,
	.set_tx_room = fake_room,
};

static void fake_init(struct fake_ep *ep, struct fabric *f, unsigned node, unsigned peer)
{
	memset(ep, 0, sizeof(*ep));
	ep->f = f;
	ep->node = node;
	ep->peer = peer;
	ep->deadline = UINT64_MAX;
	ASSERT_EQ(0, fabric_node_attach(f, node, &fake_ops, ep));
}

TEST(fabric, endpoint__attach_polls_once_then_idle)
{
	struct fabric_cfg c;
	struct fabric *f;
	struct fake_ep ep;

	cfg_small(&c);
	f = fab_new(&c, 1, 2);
	fake_init(&ep, f, 0, 1);
	ASSERT_EQ(-EBUSY, fabric_node_attach(f, 0, &fake_ops, &ep));
	ASSERT_EQ(-EINVAL, fabric_node_attach(f, 5, &fake_ops, &ep));
	fabric_run_until(f, 10000000);
	ASSERT_EQ(1, ep.n_polls);
	ASSERT_U64_EQ(0, ep.poll_t[0]);
	ASSERT_EQ(UINT64_MAX, fabric_next_event(f));
	fab_free(f);
}

TEST(fabric, endpoint__polled_at_deadline_and_on_kick)
{
	struct fabric_cfg c;
	struct fabric *f;
	struct fake_ep ep;

	cfg_small(&c);
	f = fab_new(&c, 1, 2);
	fake_init(&ep, f, 0, 1);
	fabric_run_until(f, 1000);
	ep.deadline = 10000;
	fabric_kick(f, 0);
	fabric_kick(f, 0); /* coalesced */
	fabric_run_until(f, 30000);
	ASSERT_EQ(3, ep.n_polls);
	ASSERT_U64_EQ(1000, ep.poll_t[1]);
	ASSERT_U64_EQ(10000, ep.poll_t[2]);

	/* a deadline moved earlier supersedes the armed one */
	ep.deadline = 50000;
	fabric_kick(f, 0);
	fabric_run_until(f, 35000);
	ep.deadline = 40000;
	fabric_kick(f, 0);
	fabric_run_until(f, 100000);
	ASSERT_EQ(6, ep.n_polls);
	ASSERT_U64_EQ(30000, ep.poll_t[3]);
	ASSERT_U64_EQ(35000, ep.poll_t[4]);
	ASSERT_U64_EQ(40000, ep.poll_t[5]);
	ASSERT_EQ(6, fabric_node_stats(f, 0)->polls);
	fab_free(f);
}

TEST(fabric, endpoint__rx_then_poll_ping_pong)
{
	struct fabric_cfg c;
	struct fabric *f;
	struct fake_ep a, b;

	cfg_small(&c);
	c.path.delay_ns = 2500;
	f = fab_new(&c, 1, 2);
	fake_init(&a, f, 0, 1);
	fake_init(&b, f, 1, 0);
	b.echo = true;
	fabric_run_until(f, 100);
	a.to_send = 3;
	fabric_kick(f, 0);
	fabric_run_until(f, 1000000);
	ASSERT_EQ(3, b.rx_pkts);
	ASSERT_EQ(1, b.rx_calls); /* one instant, one burst */
	ASSERT_EQ(3, a.rx_pkts);
	ASSERT_U64_EQ(100 + 2 * 2500, a.last_rx_t);
	ASSERT_EQ(6, lg.n);
	fab_free(f);
}

TEST(fabric, node_pause__nothing_runs_then_one_service_takes_all)
{
	struct fabric_cfg c;
	struct fabric *f;
	struct fake_ep a, b;

	cfg_small(&c);
	c.path.delay_ns = 1000;
	f = fab_new(&c, 1, 2);
	fake_init(&a, f, 0, 1);
	fake_init(&b, f, 1, 0);
	ASSERT_EQ(-EINVAL, fabric_node_pause(f, 5, 0, 10, 0));
	ASSERT_EQ(-EINVAL, fabric_node_pause(f, 1, 0, 0, 0));
	ASSERT_EQ(-EINVAL, fabric_node_pause(f, 1, 0, 10, 10));
	/* node 1 is paused in [10 us, 20 us) and every 100 us after */
	ASSERT_EQ(0, fabric_node_pause(f, 1, 10000, 10000, 100000));
	fabric_run_until(f, 9000);
	unsigned before = b.n_polls;
	a.to_send = 3;
	fabric_kick(f, 0);
	b.deadline = 15000;           /* a timer due inside the pause */
	fabric_run_until(f, 19999);
	ASSERT_EQ(0, b.rx_pkts);     /* arrived at 10 us, held */
	ASSERT_EQ(before, b.n_polls); /* not polled, not even at its deadline */
	fabric_run_until(f, 20000);
	ASSERT_EQ(3, b.rx_pkts);
	ASSERT_EQ(1, b.rx_calls);     /* one service at the end takes them */
	ASSERT_U64_EQ(20000, b.last_rx_t);
	/* the next pause: [110 us, 120 us) */
	fabric_run_until(f, 109000);
	a.to_send = 1;
	fabric_kick(f, 0);
	fabric_run_until(f, 119999);
	ASSERT_EQ(3, b.rx_pkts);
	fabric_run_until(f, 120000);
	ASSERT_EQ(4, b.rx_pkts);
	fab_free(f);
}

TEST(fabric, endpoint__tx_room_backpressure)
{
	struct fabric_cfg c;
	struct fabric *f;
	struct fabric_node_cfg nc;
	struct fake_ep a;
	const uint64_t ser = (1000 + V6_OVERHEAD) * 8ull; /* ns at 1 Gb/s */

	cfg_small(&c);
	c.tx_burst = 4;
	ASSERT_EQ(0, fabric_create(&c, 1, &f));
	memset(&lg, 0, sizeof(lg));
	fabric_set_deliver_hook(f, log_hook, &lg);
	fabric_node_cfg_defaults(&nc);
	nc.port_bps[0] = 1000000000ull;
	nc.tx_room_bytes = 4000;
	ASSERT_EQ(0, fabric_add_node(f, &nc));
	ASSERT_EQ(1, fabric_add_node(f, NULL));
	fake_init(&a, f, 0, 1);
	a.to_send = 100;
	fabric_run_until(f, 10000000);
	ASSERT_EQ(100, lg.n);
	ASSERT_GT(a.room_off, 10);
	ASSERT_EQ(a.room_off, a.room_on);
	ASSERT_EQ(a.room_off, fabric_node_stats(f, 0)->tx_room_off);
	/* the port is never idle while there is work: back to back */
	for (unsigned i = 0; i < lg.n; i++)
		ASSERT_U64_EQ(1000 + (i + 1) * ser, lg.r[i].t);
	fab_free(f);
}

/* ---- tracing and throughput ------------------------------------------------------------- */

static unsigned trace_lines;
static char trace_first[256];

static void trace_count(void *ctx, const char *line)
{
	(void)ctx;
	if (trace_lines++ == 0)
		snprintf(trace_first, sizeof(trace_first), "%s", line);
}

TEST(fabric, trace__one_line_per_event)
{
	struct fabric_cfg c;
	struct fabric *f;

	cfg_small(&c);
	f = fab_new(&c, 1, 2);
	trace_lines = 0;
	fabric_set_trace(f, trace_count, NULL);
	send_one(f, 0, 1, 3, 64);
	fabric_run_until(f, 100000);
	ASSERT_EQ(2, trace_lines); /* send, deliver */
	ASSERT_STREQ("0 send n0->n1 p1 k0 WRITE_ONLY psn 3 qp 17 len 166", trace_first);
	fab_free(f);
}

TEST(fabric, throughput__many_packets)
{
	struct fabric_cfg c;
	struct fabric *f;
	struct mrcp_tx tx;
	const uint32_t n = 200000;
	struct timespec t0, t1;

	cfg_small(&c);
	c.n_paths = 4;
	c.path.jitter_ns = 500;
	c.path.loss = 0.001;
	c.path.q.rate_bps = 100000000000ull;
	f = fab_new(&c, 1, 2);
	fabric_set_deliver_hook(f, NULL, NULL);
	tx_make(&tx, f, 1, 1, 0, 0xC000, 64);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (uint32_t i = 0; i < n; i++) {
		tx.ev = 0xC000u + i % 16;
		ASSERT_EQ(0, fabric_send(f, 0, &tx));
		if (i % 64 == 63)
			fabric_run_until(f, fabric_now(f) + 1000);
	}
	fabric_run_until(f, fabric_now(f) + 1000000);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	mrcp_test_figure("fabric_pkts_per_s",
			 n / ((double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9),
			 "pkt/s (64 B payload, wall clock)");
	ASSERT_EQ(n, fabric_node_stats(f, 0)->tx_pkts);
	ASSERT_EQ(n, fabric_node_stats(f, 1)->rx_pkts + fabric_path_stats(f, 0, 1, 1, 0)->drop_loss +
			     fabric_path_stats(f, 0, 1, 1, 1)->drop_loss +
			     fabric_path_stats(f, 0, 1, 1, 2)->drop_loss +
			     fabric_path_stats(f, 0, 1, 1, 3)->drop_loss);
	fab_free(f);
}
