/* test_dp_fault.c - unit tests for lib/dp/dp_fault.c, in the order of its
 * functions: the rule table and its validation, the active bitmasks,
 * verdicts (matching, each kind, statistics, determinism), counters, the
 * frame mutations checked with mrcp_frame_parse(), and the delay queue. */
#include <errno.h>
#include <math.h>

#include "dp_fault.h"
#include "mrcp_bytes.h"
#include "mrcp_csum.h"
#include "mrcp_frame.h"
#include "mrcp_prng.h"
#include "mrcp_test.h"
#include "mrcp_wire.h"

#define BUF_MAX 2048

/* ---- fixtures ---------------------------------------------------------------- */

static struct mrcd_fault_stage *stage_new(uint64_t seed)
{
	struct mrcd_fault_stage *st = NULL;

	ASSERT_EQ(0, mrcd_fault_stage_create(seed, &st));
	ASSERT_TRUE(st != NULL);
	return st;
}

/* A rule on @port, direction @dir, every EV, doing nothing yet. */
static struct mrcd_fault_rule rule_any(uint8_t port, enum mrcd_fault_dir dir)
{
	return (struct mrcd_fault_rule){
		.port = port, .ev_min = 0, .ev_max = UINT32_MAX, .dir = dir,
	};
}

static uint32_t add_ok(struct mrcd_fault_stage *st, const struct mrcd_fault_rule *r)
{
	uint32_t id = 0;

	ASSERT_EQ(0, mrcd_fault_add(st, r, &id));
	ASSERT_NE(0, id);
	return id;
}

static struct mrcd_fault_verdict decide(struct mrcd_fault_stage *st, uint8_t port,
					enum mrcd_fault_dir dir, uint32_t ev)
{
	struct mrcd_fault_verdict v;

	memset(&v, 0xA5, sizeof(v)); /* every field must be written */
	mrcd_fault_decide(st, port, dir, ev, &v);
	return v;
}

static void assert_pass(const struct mrcd_fault_verdict *v)
{
	ASSERT_FALSE(v->drop);
	ASSERT_EQ(1, v->copies);
	ASSERT_U64_EQ(0, v->delay_ns);
	ASSERT_FALSE(v->corrupt);
	ASSERT_FALSE(v->trim);
	ASSERT_FALSE(v->ecn_ce);
}

static struct mrcd_fault_counters counters(const struct mrcd_fault_stage *st, uint8_t port)
{
	struct mrcd_fault_counters c;

	memset(&c, 0xA5, sizeof(c));
	mrcd_fault_counters_get(st, port, &c);
	return c;
}

/* ---- create / destroy -------------------------------------------------------- */

TEST(fault, stage_create__empty_and_inactive)
{
	struct mrcd_fault_stage *st = stage_new(1);
	struct mrcd_fault_counters c = counters(st, 0);

	ASSERT_EQ(0, mrcd_fault_list(st, NULL, 0));
	ASSERT_FALSE(mrcd_fault_active(st, 0, MRCD_FAULT_TX));
	ASSERT_FALSE(mrcd_fault_active(st, 0, MRCD_FAULT_RX));
	ASSERT_U64_EQ(0, c.matched);
	mrcd_fault_stage_destroy(st);
}

TEST(fault, stage_destroy__null_is_ignored)
{
	mrcd_fault_stage_destroy(NULL);
}

/* ---- add ------------------------------------------------------------------------ */

TEST(fault, add__ids_start_at_1_and_grow)
{
	struct mrcd_fault_stage *st = stage_new(1);
	struct mrcd_fault_rule r = rule_any(3, MRCD_FAULT_TX);

	r.id = 777; /* ignored */
	ASSERT_EQ(1, add_ok(st, &r));
	ASSERT_EQ(2, add_ok(st, &r));
	ASSERT_EQ(0, mrcd_fault_add(st, &r, NULL)); /* id out is optional */
	ASSERT_EQ(4, add_ok(st, &r));
	ASSERT_EQ(4, mrcd_fault_list(st, NULL, 0));
	mrcd_fault_stage_destroy(st);
}

TEST(fault, add__accepts_edge_values)
{
	struct mrcd_fault_stage *st = stage_new(1);
	struct mrcd_fault_rule r = rule_any(MRCD_FAULT_MAX_PORTS - 1, MRCD_FAULT_BOTH);

	r.ev_min = r.ev_max = 7;
	r.drop_pct = 100.0;
	r.reorder_pct = r.duplicate_pct = r.corrupt_pct = r.trim_pct = r.ecn_pct = 0.0;
	r.delay_ns = r.jitter_ns = MRCD_FAULT_DELAY_MAX_NS;
	add_ok(st, &r);
	mrcd_fault_stage_destroy(st);
}

TEST(fault, add__rejects_invalid_rules)
{
	struct mrcd_fault_stage *st = stage_new(1);
	const struct mrcd_fault_rule ok = rule_any(0, MRCD_FAULT_TX);
	struct mrcd_fault_rule r;
	uint32_t id = 99;
	double *pcts[6];

	r = ok;
	r.port = MRCD_FAULT_MAX_PORTS;
	ASSERT_EQ(-EINVAL, mrcd_fault_add(st, &r, &id));
	r = ok;
	r.ev_min = 10;
	r.ev_max = 9;
	ASSERT_EQ(-EINVAL, mrcd_fault_add(st, &r, &id));
	r = ok;
	r.dir = (enum mrcd_fault_dir)3;
	ASSERT_EQ(-EINVAL, mrcd_fault_add(st, &r, &id));
	r = ok;
	r.dir = (enum mrcd_fault_dir)-1;
	ASSERT_EQ(-EINVAL, mrcd_fault_add(st, &r, &id));
	r = ok;
	r.delay_ns = MRCD_FAULT_DELAY_MAX_NS + 1;
	ASSERT_EQ(-EINVAL, mrcd_fault_add(st, &r, &id));
	r = ok;
	r.jitter_ns = MRCD_FAULT_DELAY_MAX_NS + 1;
	ASSERT_EQ(-EINVAL, mrcd_fault_add(st, &r, &id));

	pcts[0] = &r.drop_pct;
	pcts[1] = &r.reorder_pct;
	pcts[2] = &r.duplicate_pct;
	pcts[3] = &r.corrupt_pct;
	pcts[4] = &r.trim_pct;
	pcts[5] = &r.ecn_pct;
	for (unsigned i = 0; i < 6; i++) {
		const double bad[] = {-0.001, 100.001, NAN, INFINITY, -INFINITY};

		for (unsigned j = 0; j < sizeof(bad) / sizeof(bad[0]); j++) {
			r = ok;
			*pcts[i] = bad[j];
			ASSERT_EQ(-EINVAL, mrcd_fault_add(st, &r, &id));
		}
	}
	ASSERT_EQ(99, id); /* untouched on error */
	ASSERT_EQ(0, mrcd_fault_list(st, NULL, 0));
	ASSERT_FALSE(mrcd_fault_active(st, 0, MRCD_FAULT_TX));
	/* Rejections use no id. */
	ASSERT_EQ(1, add_ok(st, &ok));
	mrcd_fault_stage_destroy(st);
}

TEST(fault, add__enospc_when_full)
{
	struct mrcd_fault_stage *st = stage_new(1);
	struct mrcd_fault_rule r = rule_any(1, MRCD_FAULT_RX);

	for (unsigned i = 0; i < MRCD_FAULT_MAX_RULES; i++)
		ASSERT_EQ(i + 1, add_ok(st, &r));
	ASSERT_EQ(-ENOSPC, mrcd_fault_add(st, &r, NULL));
	ASSERT_EQ(MRCD_FAULT_MAX_RULES, mrcd_fault_list(st, NULL, 0));
	ASSERT_EQ(0, mrcd_fault_del(st, 5));
	ASSERT_EQ(MRCD_FAULT_MAX_RULES + 1, add_ok(st, &r));
	mrcd_fault_stage_destroy(st);
}

/* ---- del / clear / list ---------------------------------------------------------- */

TEST(fault, del__removes_one_and_enoent)
{
	struct mrcd_fault_stage *st = stage_new(1);
	struct mrcd_fault_rule r = rule_any(0, MRCD_FAULT_TX), out[4];

	add_ok(st, &r);
	add_ok(st, &r);
	add_ok(st, &r);
	ASSERT_EQ(0, mrcd_fault_del(st, 2));
	ASSERT_EQ(-ENOENT, mrcd_fault_del(st, 2));
	ASSERT_EQ(-ENOENT, mrcd_fault_del(st, 0));
	ASSERT_EQ(-ENOENT, mrcd_fault_del(st, 4));
	ASSERT_EQ(2, mrcd_fault_list(st, out, 4));
	ASSERT_EQ(1, out[0].id);
	ASSERT_EQ(3, out[1].id);
	mrcd_fault_stage_destroy(st);
}

TEST(fault, del__ids_never_reused)
{
	struct mrcd_fault_stage *st = stage_new(1);
	struct mrcd_fault_rule r = rule_any(0, MRCD_FAULT_TX);

	ASSERT_EQ(1, add_ok(st, &r));
	ASSERT_EQ(2, add_ok(st, &r));
	ASSERT_EQ(0, mrcd_fault_del(st, 2));
	ASSERT_EQ(3, add_ok(st, &r));
	ASSERT_EQ(2, mrcd_fault_clear_all(st));
	ASSERT_EQ(4, add_ok(st, &r));
	mrcd_fault_stage_destroy(st);
}

TEST(fault, clear_port__removes_only_that_port)
{
	struct mrcd_fault_stage *st = stage_new(1);
	struct mrcd_fault_rule a = rule_any(2, MRCD_FAULT_TX), b = rule_any(5, MRCD_FAULT_RX);
	struct mrcd_fault_rule out[8];

	add_ok(st, &a);
	add_ok(st, &b);
	add_ok(st, &a);
	add_ok(st, &b);
	ASSERT_EQ(2, mrcd_fault_clear_port(st, 2));
	ASSERT_EQ(0, mrcd_fault_clear_port(st, 2));
	ASSERT_EQ(0, mrcd_fault_clear_port(st, 31));
	ASSERT_EQ(0, mrcd_fault_clear_port(st, 200));
	ASSERT_EQ(2, mrcd_fault_list(st, out, 8));
	ASSERT_EQ(2, out[0].id);
	ASSERT_EQ(4, out[1].id);
	ASSERT_EQ(5, out[0].port);
	ASSERT_FALSE(mrcd_fault_active(st, 2, MRCD_FAULT_TX));
	ASSERT_TRUE(mrcd_fault_active(st, 5, MRCD_FAULT_RX));
	mrcd_fault_stage_destroy(st);
}

TEST(fault, clear_all__removes_everything)
{
	struct mrcd_fault_stage *st = stage_new(1);
	struct mrcd_fault_rule a = rule_any(2, MRCD_FAULT_BOTH);

	ASSERT_EQ(0, mrcd_fault_clear_all(st));
	add_ok(st, &a);
	a.port = 9;
	add_ok(st, &a);
	ASSERT_EQ(2, mrcd_fault_clear_all(st));
	ASSERT_EQ(0, mrcd_fault_list(st, NULL, 0));
	ASSERT_FALSE(mrcd_fault_active(st, 2, MRCD_FAULT_BOTH));
	ASSERT_FALSE(mrcd_fault_active(st, 9, MRCD_FAULT_BOTH));
	mrcd_fault_stage_destroy(st);
}

TEST(fault, list__copies_in_id_order_up_to_max)
{
	struct mrcd_fault_stage *st = stage_new(1);
	struct mrcd_fault_rule r = rule_any(0, MRCD_FAULT_TX), out[8];

	for (unsigned i = 0; i < 5; i++) {
		r.port = (uint8_t)(10 + i);
		r.ev_min = i;
		r.ev_max = 100 + i;
		r.drop_pct = i;
		r.delay_ns = 1000 * i;
		add_ok(st, &r);
	}
	ASSERT_EQ(0, mrcd_fault_del(st, 3));
	memset(out, 0, sizeof(out));
	ASSERT_EQ(2, mrcd_fault_list(st, out, 2));
	ASSERT_EQ(1, out[0].id);
	ASSERT_EQ(2, out[1].id);
	ASSERT_EQ(0, out[2].id); /* nothing beyond max */
	ASSERT_EQ(4, mrcd_fault_list(st, out, 8));
	ASSERT_EQ(4, out[2].id);
	ASSERT_EQ(13, out[2].port);
	ASSERT_EQ(3, out[2].ev_min);
	ASSERT_EQ(103, out[2].ev_max);
	ASSERT_DBL_NEAR(3.0, out[2].drop_pct, 0);
	ASSERT_U64_EQ(3000, out[2].delay_ns);
	ASSERT_EQ(MRCD_FAULT_TX, out[2].dir);
	ASSERT_EQ(5, out[3].id);
	mrcd_fault_stage_destroy(st);
}

/* ---- active ---------------------------------------------------------------------- */

TEST(fault, active__bitmask_per_direction)
{
	struct mrcd_fault_stage *st = stage_new(1);
	struct mrcd_fault_rule tx = rule_any(1, MRCD_FAULT_TX), rx = rule_any(2, MRCD_FAULT_RX);
	struct mrcd_fault_rule both = rule_any(31, MRCD_FAULT_BOTH);
	uint32_t id_tx, id_both;

	id_tx = add_ok(st, &tx);
	add_ok(st, &rx);
	id_both = add_ok(st, &both);
	ASSERT_TRUE(mrcd_fault_active(st, 1, MRCD_FAULT_TX));
	ASSERT_FALSE(mrcd_fault_active(st, 1, MRCD_FAULT_RX));
	ASSERT_TRUE(mrcd_fault_active(st, 1, MRCD_FAULT_BOTH));
	ASSERT_FALSE(mrcd_fault_active(st, 2, MRCD_FAULT_TX));
	ASSERT_TRUE(mrcd_fault_active(st, 2, MRCD_FAULT_RX));
	ASSERT_TRUE(mrcd_fault_active(st, 31, MRCD_FAULT_TX));
	ASSERT_TRUE(mrcd_fault_active(st, 31, MRCD_FAULT_RX));
	ASSERT_FALSE(mrcd_fault_active(st, 0, MRCD_FAULT_TX));
	ASSERT_FALSE(mrcd_fault_active(st, 3, MRCD_FAULT_BOTH));
	ASSERT_FALSE(mrcd_fault_active(st, 32, MRCD_FAULT_TX));
	ASSERT_FALSE(mrcd_fault_active(st, 255, MRCD_FAULT_BOTH));
	ASSERT_FALSE(mrcd_fault_active(st, 1, (enum mrcd_fault_dir)7));

	/* Two rules on one port: the bit stays until the last one goes. */
	tx.port = 31;
	add_ok(st, &tx);
	ASSERT_EQ(0, mrcd_fault_del(st, id_both));
	ASSERT_TRUE(mrcd_fault_active(st, 31, MRCD_FAULT_TX));
	ASSERT_FALSE(mrcd_fault_active(st, 31, MRCD_FAULT_RX));
	ASSERT_EQ(0, mrcd_fault_del(st, id_tx));
	ASSERT_FALSE(mrcd_fault_active(st, 1, MRCD_FAULT_TX));
	mrcd_fault_stage_destroy(st);
}

/* ---- decide: matching ------------------------------------------------------------- */

TEST(fault, decide__no_rule_passes_untouched)
{
	struct mrcd_fault_stage *st = stage_new(1);
	struct mrcd_fault_verdict v = decide(st, 0, MRCD_FAULT_TX, 5);
	struct mrcd_fault_counters c = counters(st, 0);

	assert_pass(&v);
	ASSERT_U64_EQ(0, c.matched);
	mrcd_fault_stage_destroy(st);
}

TEST(fault, decide__drop_100_and_0)
{
	struct mrcd_fault_stage *st = stage_new(1);
	struct mrcd_fault_rule r = rule_any(0, MRCD_FAULT_TX);
	struct mrcd_fault_verdict v;
	uint32_t id;

	r.drop_pct = 100.0;
	id = add_ok(st, &r);
	for (unsigned i = 0; i < 1000; i++) {
		v = decide(st, 0, MRCD_FAULT_TX, i);
		ASSERT_TRUE(v.drop);
		ASSERT_EQ(1, v.copies);
		ASSERT_U64_EQ(0, v.delay_ns);
	}
	ASSERT_EQ(0, mrcd_fault_del(st, id));
	r.drop_pct = 0.0;
	add_ok(st, &r);
	for (unsigned i = 0; i < 1000; i++) {
		v = decide(st, 0, MRCD_FAULT_TX, i);
		assert_pass(&v);
	}
	struct mrcd_fault_counters c = counters(st, 0);
	ASSERT_U64_EQ(2000, c.matched);
	ASSERT_U64_EQ(1000, c.dropped);
	ASSERT_U64_EQ(0, c.blackholed);
	mrcd_fault_stage_destroy(st);
}

TEST(fault, decide__blackhole_drops_and_short_circuits)
{
	struct mrcd_fault_stage *st = stage_new(1);
	struct mrcd_fault_rule hole = rule_any(4, MRCD_FAULT_RX), dup = rule_any(4, MRCD_FAULT_RX);
	struct mrcd_fault_verdict v;
	struct mrcd_fault_counters c;

	dup.duplicate_pct = 100.0;
	dup.delay_ns = 500;
	add_ok(st, &dup); /* applies first, then the blackhole wipes it */
	hole.blackhole = true;
	add_ok(st, &hole);
	v = decide(st, 4, MRCD_FAULT_RX, 1);
	ASSERT_TRUE(v.drop);
	ASSERT_EQ(1, v.copies);
	ASSERT_U64_EQ(0, v.delay_ns);
	c = counters(st, 4);
	ASSERT_U64_EQ(1, c.matched);
	ASSERT_U64_EQ(1, c.blackholed);
	ASSERT_U64_EQ(0, c.dropped);
	ASSERT_U64_EQ(0, c.duplicated); /* dropped packets count no other kind */
	ASSERT_U64_EQ(0, c.delayed);
	mrcd_fault_stage_destroy(st);
}

TEST(fault, decide__ev_range_is_inclusive)
{
	struct mrcd_fault_stage *st = stage_new(1);
	struct mrcd_fault_rule r = rule_any(0, MRCD_FAULT_TX);

	r.ev_min = 0x100;
	r.ev_max = 0x1FF;
	r.blackhole = true;
	add_ok(st, &r);
	ASSERT_FALSE(decide(st, 0, MRCD_FAULT_TX, 0xFF).drop);
	ASSERT_TRUE(decide(st, 0, MRCD_FAULT_TX, 0x100).drop);
	ASSERT_TRUE(decide(st, 0, MRCD_FAULT_TX, 0x180).drop);
	ASSERT_TRUE(decide(st, 0, MRCD_FAULT_TX, 0x1FF).drop);
	ASSERT_FALSE(decide(st, 0, MRCD_FAULT_TX, 0x200).drop);
	ASSERT_FALSE(decide(st, 0, MRCD_FAULT_TX, UINT32_MAX).drop);
	ASSERT_U64_EQ(3, counters(st, 0).matched);
	mrcd_fault_stage_destroy(st);
}

TEST(fault, decide__ev_range_full_width)
{
	struct mrcd_fault_stage *st = stage_new(1);
	struct mrcd_fault_rule r = rule_any(0, MRCD_FAULT_TX);

	r.ev_min = r.ev_max = UINT32_MAX;
	r.blackhole = true;
	add_ok(st, &r);
	ASSERT_TRUE(decide(st, 0, MRCD_FAULT_TX, UINT32_MAX).drop);
	ASSERT_FALSE(decide(st, 0, MRCD_FAULT_TX, UINT32_MAX - 1).drop);
	ASSERT_FALSE(decide(st, 0, MRCD_FAULT_TX, 0).drop);
	mrcd_fault_stage_destroy(st);
}

TEST(fault, decide__port_mismatch_passes)
{
	struct mrcd_fault_stage *st = stage_new(1);
	struct mrcd_fault_rule r = rule_any(3, MRCD_FAULT_BOTH);
	struct mrcd_fault_verdict v;

	r.blackhole = true;
	add_ok(st, &r);
	v = decide(st, 2, MRCD_FAULT_TX, 0);
	assert_pass(&v);
	ASSERT_FALSE(decide(st, 4, MRCD_FAULT_RX, 0).drop);
	ASSERT_FALSE(decide(st, 35, MRCD_FAULT_RX, 0).drop); /* 35 & 31 == 3 */
	ASSERT_FALSE(decide(st, 255, MRCD_FAULT_RX, 0).drop);
	ASSERT_TRUE(decide(st, 3, MRCD_FAULT_RX, 0).drop);
	ASSERT_U64_EQ(0, counters(st, 2).matched);
	ASSERT_U64_EQ(1, counters(st, 3).matched);
	mrcd_fault_stage_destroy(st);
}

TEST(fault, decide__dir_mismatch_passes)
{
	struct mrcd_fault_stage *st = stage_new(1);
	struct mrcd_fault_rule tx = rule_any(0, MRCD_FAULT_TX), rx = rule_any(1, MRCD_FAULT_RX);

	tx.blackhole = rx.blackhole = true;
	add_ok(st, &tx);
	add_ok(st, &rx);
	ASSERT_TRUE(decide(st, 0, MRCD_FAULT_TX, 0).drop);
	ASSERT_FALSE(decide(st, 0, MRCD_FAULT_RX, 0).drop);
	ASSERT_TRUE(decide(st, 1, MRCD_FAULT_RX, 0).drop);
	ASSERT_FALSE(decide(st, 1, MRCD_FAULT_TX, 0).drop);
	/* An invalid direction matches nothing; BOTH matches either. */
	ASSERT_FALSE(decide(st, 0, (enum mrcd_fault_dir)5, 0).drop);
	ASSERT_TRUE(decide(st, 1, MRCD_FAULT_BOTH, 0).drop);
	mrcd_fault_stage_destroy(st);
}

TEST(fault, decide__both_rule_matches_tx_and_rx)
{
	struct mrcd_fault_stage *st = stage_new(1);
	struct mrcd_fault_rule r = rule_any(7, MRCD_FAULT_BOTH);

	r.blackhole = true;
	add_ok(st, &r);
	ASSERT_TRUE(decide(st, 7, MRCD_FAULT_TX, 0).drop);
	ASSERT_TRUE(decide(st, 7, MRCD_FAULT_RX, 0).drop);
	ASSERT_U64_EQ(2, counters(st, 7).blackholed);
	mrcd_fault_stage_destroy(st);
}

/* ---- decide: kinds ----------------------------------------------------------------- */

TEST(fault, decide__drop_10pct_statistics)
{
	struct mrcd_fault_stage *st = stage_new(0x5eed);
	struct mrcd_fault_rule r = rule_any(0, MRCD_FAULT_TX);
	const unsigned n = 100000;
	unsigned dropped = 0;

	r.drop_pct = 10.0;
	add_ok(st, &r);
	for (unsigned i = 0; i < n; i++)
		dropped += decide(st, 0, MRCD_FAULT_TX, i).drop;
	/* sigma = sqrt(n p (1 - p)) ~ 95 packets: 0.6 % is over 6 sigma. */
	ASSERT_DBL_NEAR(0.10, (double)dropped / n, 0.006);
	ASSERT_U64_EQ(dropped, counters(st, 0).dropped);
	ASSERT_U64_EQ(n, counters(st, 0).matched);
	mrcp_test_figure("drop_10pct_observed", 100.0 * dropped / n, "%");
	mrcd_fault_stage_destroy(st);
}

TEST(fault, decide__duplicate)
{
	struct mrcd_fault_stage *st = stage_new(1);
	struct mrcd_fault_rule r = rule_any(0, MRCD_FAULT_TX);
	struct mrcd_fault_verdict v;

	r.duplicate_pct = 100.0;
	add_ok(st, &r);
	v = decide(st, 0, MRCD_FAULT_TX, 0);
	ASSERT_FALSE(v.drop);
	ASSERT_EQ(2, v.copies);
	ASSERT_U64_EQ(0, v.delay_ns);
	/* Two duplicating rules still make two copies, counted once. */
	add_ok(st, &r);
	v = decide(st, 0, MRCD_FAULT_TX, 0);
	ASSERT_EQ(2, v.copies);
	ASSERT_U64_EQ(2, counters(st, 0).duplicated);
	mrcd_fault_stage_destroy(st);
}

TEST(fault, decide__delay_without_jitter_is_exact)
{
	struct mrcd_fault_stage *st = stage_new(1);
	struct mrcd_fault_rule r = rule_any(0, MRCD_FAULT_TX);

	r.delay_ns = 123456;
	add_ok(st, &r);
	for (unsigned i = 0; i < 100; i++)
		ASSERT_U64_EQ(123456, decide(st, 0, MRCD_FAULT_TX, i).delay_ns);
	ASSERT_U64_EQ(100, counters(st, 0).delayed);
	ASSERT_U64_EQ(0, counters(st, 0).reordered);
	mrcd_fault_stage_destroy(st);
}

TEST(fault, decide__delay_plus_jitter_bounds)
{
	struct mrcd_fault_stage *st = stage_new(2);
	struct mrcd_fault_rule r = rule_any(0, MRCD_FAULT_RX);
	uint64_t lo = UINT64_MAX, hi = 0;
	double sum = 0;
	const unsigned n = 20000;

	r.delay_ns = 10000;
	r.jitter_ns = 1000;
	add_ok(st, &r);
	for (unsigned i = 0; i < n; i++) {
		uint64_t d = decide(st, 0, MRCD_FAULT_RX, i).delay_ns;

		ASSERT_GE(d, 10000);
		ASSERT_LE(d, 11000);
		lo = d < lo ? d : lo;
		hi = d > hi ? d : hi;
		sum += (double)d;
	}
	ASSERT_LE(lo, 10010); /* the whole range is used... */
	ASSERT_GE(hi, 10990);
	ASSERT_DBL_NEAR(10500.0, sum / n, 10.0); /* ...uniformly */
	mrcd_fault_stage_destroy(st);
}

TEST(fault, decide__jitter_alone_reaches_both_ends)
{
	struct mrcd_fault_stage *st = stage_new(3);
	struct mrcd_fault_rule r = rule_any(0, MRCD_FAULT_TX);
	bool saw0 = false, saw_max = false;

	r.jitter_ns = 3;
	add_ok(st, &r);
	for (unsigned i = 0; i < 1000; i++) {
		uint64_t d = decide(st, 0, MRCD_FAULT_TX, i).delay_ns;

		ASSERT_LE(d, 3);
		saw0 |= d == 0;
		saw_max |= d == 3;
	}
	ASSERT_TRUE(saw0);
	ASSERT_TRUE(saw_max);
	/* delayed counts only packets whose delay came out non-zero */
	ASSERT_LT(counters(st, 0).delayed, 1000);
	ASSERT_GT(counters(st, 0).delayed, 600);
	mrcd_fault_stage_destroy(st);
}

TEST(fault, decide__reorder_adds_bounded_holdback)
{
	struct mrcd_fault_stage *st = stage_new(4);
	struct mrcd_fault_rule r = rule_any(0, MRCD_FAULT_TX);
	uint64_t lo = UINT64_MAX, hi = 0;

	r.delay_ns = 5000;
	r.reorder_pct = 100.0;
	add_ok(st, &r);
	for (unsigned i = 0; i < 20000; i++) {
		uint64_t d = decide(st, 0, MRCD_FAULT_TX, i).delay_ns;

		ASSERT_GE(d, 5000 + MRCD_FAULT_REORDER_MIN_NS);
		ASSERT_LE(d, 5000 + MRCD_FAULT_REORDER_MAX_NS);
		lo = d < lo ? d : lo;
		hi = d > hi ? d : hi;
	}
	ASSERT_LE(lo, 5000 + MRCD_FAULT_REORDER_MIN_NS + 100);
	ASSERT_GE(hi, 5000 + MRCD_FAULT_REORDER_MAX_NS - 100);
	ASSERT_U64_EQ(20000, counters(st, 0).reordered);
	ASSERT_U64_EQ(20000, counters(st, 0).delayed);
	mrcd_fault_stage_destroy(st);
}

TEST(fault, decide__reorder_pct_partial)
{
	struct mrcd_fault_stage *st = stage_new(5);
	struct mrcd_fault_rule r = rule_any(0, MRCD_FAULT_TX);
	unsigned held = 0;

	r.reorder_pct = 50.0;
	add_ok(st, &r);
	for (unsigned i = 0; i < 10000; i++)
		held += decide(st, 0, MRCD_FAULT_TX, i).delay_ns != 0;
	ASSERT_DBL_NEAR(0.5, held / 10000.0, 0.03);
	ASSERT_U64_EQ(held, counters(st, 0).reordered);
	mrcd_fault_stage_destroy(st);
}

TEST(fault, decide__corrupt_trim_ecn_flags)
{
	struct mrcd_fault_stage *st = stage_new(1);
	struct mrcd_fault_rule c = rule_any(0, MRCD_FAULT_TX), t = rule_any(1, MRCD_FAULT_TX);
	struct mrcd_fault_rule e = rule_any(2, MRCD_FAULT_TX);
	struct mrcd_fault_verdict v;

	c.corrupt_pct = 100.0;
	t.trim_pct = 100.0;
	e.ecn_pct = 100.0;
	add_ok(st, &c);
	add_ok(st, &t);
	add_ok(st, &e);
	v = decide(st, 0, MRCD_FAULT_TX, 0);
	ASSERT_TRUE(v.corrupt && !v.trim && !v.ecn_ce && !v.drop && v.copies == 1);
	v = decide(st, 1, MRCD_FAULT_TX, 0);
	ASSERT_TRUE(!v.corrupt && v.trim && !v.ecn_ce && !v.drop && v.copies == 1);
	v = decide(st, 2, MRCD_FAULT_TX, 0);
	ASSERT_TRUE(!v.corrupt && !v.trim && v.ecn_ce && !v.drop && v.copies == 1);
	mrcd_fault_stage_destroy(st);
}

TEST(fault, decide__rules_combine)
{
	struct mrcd_fault_stage *st = stage_new(1);
	struct mrcd_fault_rule a = rule_any(0, MRCD_FAULT_TX), b = rule_any(0, MRCD_FAULT_BOTH);
	struct mrcd_fault_rule other = rule_any(0, MRCD_FAULT_TX);
	struct mrcd_fault_verdict v;

	a.delay_ns = 1000;
	a.ecn_pct = 100.0;
	b.delay_ns = 2000;
	b.duplicate_pct = 100.0;
	b.ev_max = 10;
	other.ev_min = 11; /* does not match EV 5 */
	other.blackhole = true;
	add_ok(st, &a);
	add_ok(st, &b);
	add_ok(st, &other);
	v = decide(st, 0, MRCD_FAULT_TX, 5);
	ASSERT_FALSE(v.drop);
	ASSERT_U64_EQ(3000, v.delay_ns); /* delays add up */
	ASSERT_EQ(2, v.copies);
	ASSERT_TRUE(v.ecn_ce);
	ASSERT_FALSE(v.corrupt || v.trim);
	ASSERT_U64_EQ(1, counters(st, 0).matched); /* once per packet */
	mrcd_fault_stage_destroy(st);
}

TEST(fault, decide__drop_after_earlier_rule_resets_verdict)
{
	struct mrcd_fault_stage *st = stage_new(1);
	struct mrcd_fault_rule a = rule_any(0, MRCD_FAULT_TX), b = rule_any(0, MRCD_FAULT_TX);
	struct mrcd_fault_verdict v;

	a.delay_ns = 1000;
	a.trim_pct = a.corrupt_pct = a.ecn_pct = a.duplicate_pct = 100.0;
	b.drop_pct = 100.0;
	add_ok(st, &a);
	add_ok(st, &b);
	v = decide(st, 0, MRCD_FAULT_TX, 0);
	ASSERT_TRUE(v.drop);
	ASSERT_EQ(1, v.copies);
	ASSERT_U64_EQ(0, v.delay_ns);
	ASSERT_FALSE(v.corrupt || v.trim || v.ecn_ce);
	ASSERT_U64_EQ(0, counters(st, 0).trimmed);
	ASSERT_U64_EQ(1, counters(st, 0).dropped);
	mrcd_fault_stage_destroy(st);
}

/* ---- counters ------------------------------------------------------------------------ */

TEST(fault, counters_get__each_kind_per_port)
{
	struct mrcd_fault_stage *st = stage_new(1);
	struct mrcd_fault_rule all = rule_any(6, MRCD_FAULT_TX), hole = rule_any(6, MRCD_FAULT_RX);
	struct mrcd_fault_rule drop = rule_any(8, MRCD_FAULT_TX);
	struct mrcd_fault_counters c;

	all.delay_ns = 1;
	all.reorder_pct = all.duplicate_pct = all.corrupt_pct = all.trim_pct = all.ecn_pct = 100.0;
	hole.blackhole = true;
	drop.drop_pct = 100.0;
	add_ok(st, &all);
	add_ok(st, &hole);
	add_ok(st, &drop);
	for (unsigned i = 0; i < 3; i++)
		decide(st, 6, MRCD_FAULT_TX, i);
	for (unsigned i = 0; i < 2; i++)
		decide(st, 6, MRCD_FAULT_RX, i);
	decide(st, 8, MRCD_FAULT_TX, 0);
	decide(st, 7, MRCD_FAULT_TX, 0);

	c = counters(st, 6);
	ASSERT_U64_EQ(5, c.matched);
	ASSERT_U64_EQ(0, c.dropped);
	ASSERT_U64_EQ(2, c.blackholed);
	ASSERT_U64_EQ(3, c.delayed);
	ASSERT_U64_EQ(3, c.reordered);
	ASSERT_U64_EQ(3, c.duplicated);
	ASSERT_U64_EQ(3, c.corrupted);
	ASSERT_U64_EQ(3, c.trimmed);
	ASSERT_U64_EQ(3, c.ecn_marked);
	c = counters(st, 8);
	ASSERT_U64_EQ(1, c.matched);
	ASSERT_U64_EQ(1, c.dropped);
	ASSERT_U64_EQ(0, c.delayed);
	c = counters(st, 7);
	ASSERT_U64_EQ(0, c.matched);

	/* Clearing rules keeps the counters. */
	mrcd_fault_clear_all(st);
	ASSERT_U64_EQ(5, counters(st, 6).matched);
	mrcd_fault_stage_destroy(st);
}

TEST(fault, counters_get__out_of_range_port_is_zero)
{
	struct mrcd_fault_stage *st = stage_new(1);
	struct mrcd_fault_counters c = counters(st, MRCD_FAULT_MAX_PORTS);
	struct mrcd_fault_counters zero;

	memset(&zero, 0, sizeof(zero));
	ASSERT_MEMEQ(&zero, &c, sizeof(c));
	mrcd_fault_stage_destroy(st);
}

TEST(fault, counters__x_macro_names_every_field)
{
	static const char *const names[] = {
#define X(n, d) #n,
		MRCD_FAULT_COUNTERS(X)
#undef X
	};
	static const char *const descs[] = {
#define X(n, d) d,
		MRCD_FAULT_COUNTERS(X)
#undef X
	};

	ASSERT_EQ(sizeof(struct mrcd_fault_counters) / sizeof(uint64_t),
		  sizeof(names) / sizeof(names[0]));
	ASSERT_STREQ("matched", names[0]);
	ASSERT_STREQ("ecn_marked", names[8]);
	for (unsigned i = 0; i < sizeof(descs) / sizeof(descs[0]); i++)
		ASSERT_GT(strlen(descs[i]), 10);
}

/* ---- determinism ----------------------------------------------------------------------- */

static void mixed_rules(struct mrcd_fault_stage *st)
{
	struct mrcd_fault_rule r = rule_any(0, MRCD_FAULT_BOTH);

	r.drop_pct = 5.0;
	r.jitter_ns = 50000;
	r.reorder_pct = 10.0;
	r.duplicate_pct = 3.0;
	r.corrupt_pct = 2.0;
	r.trim_pct = 4.0;
	r.ecn_pct = 20.0;
	add_ok(st, &r);
	r.ev_max = 100;
	r.delay_ns = 777;
	add_ok(st, &r);
}

TEST(fault, decide__same_seed_replays)
{
	struct mrcd_fault_stage *a = stage_new(0xC0FFEE), *b = stage_new(0xC0FFEE);
	struct mrcd_fault_stage *c = stage_new(0xC0FFEF);
	unsigned differ = 0;

	mixed_rules(a);
	mixed_rules(b);
	mixed_rules(c);
	for (unsigned i = 0; i < 5000; i++) {
		struct mrcd_fault_verdict va = decide(a, 0, MRCD_FAULT_TX, i % 200);
		struct mrcd_fault_verdict vb = decide(b, 0, MRCD_FAULT_TX, i % 200);
		struct mrcd_fault_verdict vc = decide(c, 0, MRCD_FAULT_TX, i % 200);

		ASSERT_EQ(va.drop, vb.drop);
		ASSERT_EQ(va.copies, vb.copies);
		ASSERT_U64_EQ(va.delay_ns, vb.delay_ns);
		ASSERT_EQ(va.corrupt, vb.corrupt);
		ASSERT_EQ(va.trim, vb.trim);
		ASSERT_EQ(va.ecn_ce, vb.ecn_ce);
		differ += va.delay_ns != vc.delay_ns || va.drop != vc.drop;
	}
	struct mrcd_fault_counters ca = counters(a, 0), cb = counters(b, 0);
	ASSERT_MEMEQ(&ca, &cb, sizeof(ca));
	ASSERT_GT(differ, 1000); /* another seed, another sequence */
	mrcd_fault_stage_destroy(a);
	mrcd_fault_stage_destroy(b);
	mrcd_fault_stage_destroy(c);
}

/* ---- frames ------------------------------------------------------------------------------ */

static const uint8_t mac_a[6] = {0x02, 0, 0, 0, 0, 0x0A};
static const uint8_t mac_b[6] = {0x02, 0, 0, 0, 0, 0x0B};
static const uint8_t ip4_a[4] = {10, 0, 0, 1};
static const uint8_t ip4_b[4] = {10, 0, 0, 2};
static const uint8_t ip6_a[16] = {0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0A};
static const uint8_t ip6_b[16] = {0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0B};
static const uint8_t usid[16] = {0xFC, 0xBB, 0, 0, 0, 0x01, 0, 0x02};

struct frame {
	uint8_t b[BUF_MAX];
	size_t len;
	size_t hdr_len;     /* Ethernet..UDP */
	size_t mrc_hdr_len; /* BTH + extension headers */
	size_t mrc_len;     /* BTH..pad */
	size_t ip_off;      /* outer IP header */
};

/* A real frame: @opcode (a Write with @payload bytes, or a control packet),
 * encoded by wire.c and framed by frame.c, ICRC included. */
static struct frame frame_make(enum mrcp_frame_l3 l3, bool vlan, uint8_t opcode,
			       uint32_t payload, uint8_t ecn)
{
	struct frame f;
	struct mrcp_frame_tx tx;
	struct mrcp_pkt p;
	uint8_t data[MRCP_PAYLOAD_MAX], mrc[MRCP_PAYLOAD_MAX + 128];
	int n, len;

	memset(&f, 0, sizeof(f));
	for (uint32_t i = 0; i < payload; i++)
		data[i] = (uint8_t)(i * 7 + 3);
	ASSERT_EQ(0, mrcp_pkt_init(&p, opcode, 0x000123, 0x000456));
	if (mrcp_opcode_is_data(opcode)) {
		p.meth.msn = 9;
		p.reth.va = 0x1000;
		p.reth.rkey = 0xABCD;
		p.reth.dma_len = payload;
		p.payload = data;
		p.payload_len = payload;
	}
	n = mrcp_pkt_encode(&p, mrc, sizeof(mrc));
	ASSERT_GT(n, 0);
	f.mrc_hdr_len = mrcp_pkt_hdr_len(&p);
	f.mrc_len = (size_t)n;

	mrcp_frame_tx_defaults(&tx);
	memcpy(tx.dst_mac, mac_b, 6);
	memcpy(tx.src_mac, mac_a, 6);
	tx.vlan = vlan;
	tx.vlan_tci = 0x2005;
	tx.l3 = l3;
	if (l3 == MRCP_FRAME_IPV4) {
		memcpy(tx.src_ip, ip4_a, 4);
		memcpy(tx.dst_ip, ip4_b, 4);
		tx.ev = 0xBEEF;
	} else {
		memcpy(tx.src_ip, ip6_a, 16);
		memcpy(tx.dst_ip, ip6_b, 16);
		memcpy(tx.srv6_da, usid, 16);
		tx.ev = 0x12345;
	}
	tx.ecn = ecn;
	tx.ip_id = 0x4242;
	len = mrcp_frame_build(&tx, mrc, (size_t)n, f.b, sizeof(f.b));
	ASSERT_GT(len, 0);
	f.len = (size_t)len;
	f.hdr_len = mrcp_frame_hdr_len(&tx);
	f.ip_off = MRCP_ETH_HLEN + (vlan ? MRCP_VLAN_HLEN : 0);
	return f;
}

static struct frame write_frame(enum mrcp_frame_l3 l3, bool vlan)
{
	return frame_make(l3, vlan, MRCP_OP_WRITE_ONLY, 1021, MRCP_ECN_ECT0);
}

static int parse(const struct frame *f, struct mrcp_frame_view *v)
{
	struct mrcp_frame_rx_cfg cfg;

	mrcp_frame_rx_cfg_defaults(&cfg); /* ICRC and IPv4 checksum checked */
	return mrcp_frame_parse(&cfg, f->b, f->len, v);
}

/* Bytes that differ between two frames of equal length; *at = the last one. */
static unsigned diff_bytes(const struct frame *a, const struct frame *b, size_t *at)
{
	unsigned n = 0;

	for (size_t i = 0; i < a->len; i++)
		if (a->b[i] != b->b[i]) {
			n++;
			*at = i;
		}
	return n;
}

static const struct {
	enum mrcp_frame_l3 l3;
	bool vlan;
} shapes[] = {
	{MRCP_FRAME_IPV4, false}, {MRCP_FRAME_IPV4, true}, {MRCP_FRAME_IPV6, false},
	{MRCP_FRAME_IPV6, true},  {MRCP_FRAME_SRV6, false}, {MRCP_FRAME_SRV6, true},
};
#define NSHAPES (sizeof(shapes) / sizeof(shapes[0]))

TEST(fault, frame_make__parses_clean)
{
	for (unsigned s = 0; s < NSHAPES; s++) {
		struct frame f = write_frame(shapes[s].l3, shapes[s].vlan);
		struct mrcp_frame_view v;

		ASSERT_EQ(0, parse(&f, &v));
		ASSERT_EQ(MRCP_ICRC_OK, v.icrc);
		ASSERT_EQ(MRCP_TRIM_NONE, v.trim);
	}
}

/* ---- corrupt ----------------------------------------------------------------------------- */

TEST(fault, corrupt__ipv4_icrc_bad)
{
	struct mrcd_fault_stage *st = stage_new(1);
	struct frame f = write_frame(MRCP_FRAME_IPV4, false), orig = f;
	struct mrcp_frame_view v;
	size_t at = 0;

	ASSERT_EQ(0, mrcd_fault_corrupt(st, f.b, f.len));
	ASSERT_EQ(1, diff_bytes(&orig, &f, &at));
	ASSERT_EQ(0xFF, orig.b[at] ^ f.b[at]);
	ASSERT_EQ(-EILSEQ, parse(&f, &v));
	ASSERT_EQ(MRCP_ICRC_BAD, v.icrc);
	mrcd_fault_stage_destroy(st);
}

TEST(fault, corrupt__ipv6_icrc_bad)
{
	struct mrcd_fault_stage *st = stage_new(1);
	struct frame f = write_frame(MRCP_FRAME_IPV6, false), orig = f;
	struct mrcp_frame_view v;
	size_t at = 0;

	ASSERT_EQ(0, mrcd_fault_corrupt(st, f.b, f.len));
	ASSERT_EQ(1, diff_bytes(&orig, &f, &at));
	ASSERT_EQ(-EILSEQ, parse(&f, &v));
	ASSERT_EQ(MRCP_ICRC_BAD, v.icrc);
	mrcd_fault_stage_destroy(st);
}

TEST(fault, corrupt__every_shape_hits_payload_only)
{
	struct mrcd_fault_stage *st = stage_new(77);
	size_t lo = SIZE_MAX, hi = 0;

	for (unsigned s = 0; s < NSHAPES; s++) {
		for (unsigned i = 0; i < 300; i++) {
			struct frame f = write_frame(shapes[s].l3, shapes[s].vlan), orig = f;
			struct mrcp_frame_view v;
			size_t at = 0, first = f.hdr_len + f.mrc_hdr_len;

			ASSERT_EQ(0, mrcd_fault_corrupt(st, f.b, f.len));
			ASSERT_EQ(1, diff_bytes(&orig, &f, &at));
			ASSERT_GE(at, first);                    /* payload or pad... */
			ASSERT_LT(at, f.len - MRCP_ICRC_LEN);    /* ...never the ICRC */
			ASSERT_EQ(-EILSEQ, parse(&f, &v));
			if (s == 0) {
				lo = at - first < lo ? at - first : lo;
				hi = at - first > hi ? at - first : hi;
			}
		}
	}
	/* The draw spreads over the whole payload + pad (1024 bytes). */
	ASSERT_LT(lo, 50);
	ASSERT_GT(hi, 1024 - 50);
	mrcd_fault_stage_destroy(st);
}

TEST(fault, corrupt__control_packet_hits_headers_not_masked_byte)
{
	struct mrcd_fault_stage *st = stage_new(5);
	bool hit[64] = {false};

	for (unsigned i = 0; i < 2000; i++) {
		struct frame f = frame_make(MRCP_FRAME_IPV4, false, MRCP_OP_ACK, 0, 0), orig = f;
		struct mrcp_frame_view v;
		size_t at = 0;

		ASSERT_EQ(0, mrcd_fault_corrupt(st, f.b, f.len));
		ASSERT_EQ(1, diff_bytes(&orig, &f, &at));
		ASSERT_GE(at, f.hdr_len);
		ASSERT_LT(at, f.hdr_len + f.mrc_len);
		ASSERT_NE(f.hdr_len + 4, at); /* BTH byte 4 is masked by the ICRC */
		hit[at - f.hdr_len] = true;
		ASSERT_EQ(-EILSEQ, parse(&f, &v));
	}
	for (size_t i = 0; i < 16; i++) /* BTH + AETH: every other byte is used */
		ASSERT_EQ(i != 4, hit[i]);
	mrcd_fault_stage_destroy(st);
}

TEST(fault, corrupt__ignores_ethernet_padding)
{
	struct mrcd_fault_stage *st = stage_new(9);

	for (unsigned i = 0; i < 200; i++) {
		/* A 60-byte minimum frame: ACK over IPv4 is 62 bytes; add 30 of
		 * trailing padding to be sure it is never chosen. */
		struct frame f = frame_make(MRCP_FRAME_IPV4, false, MRCP_OP_ACK, 0, 0), orig;
		size_t at = 0, real = f.len;

		f.len += 30;
		orig = f;
		ASSERT_EQ(0, mrcd_fault_corrupt(st, f.b, f.len));
		ASSERT_EQ(1, diff_bytes(&orig, &f, &at));
		ASSERT_LT(at, real - MRCP_ICRC_LEN);
	}
	mrcd_fault_stage_destroy(st);
}

TEST(fault, corrupt__refuses_trimmed_frame)
{
	struct mrcd_fault_stage *st = stage_new(1);
	struct frame f = write_frame(MRCP_FRAME_IPV4, false), trimmed;
	size_t new_len = 0;

	ASSERT_EQ(0, mrcd_fault_trim(f.b, f.len, 11, &new_len));
	f.len = new_len;
	trimmed = f;
	ASSERT_EQ(-EINVAL, mrcd_fault_corrupt(st, f.b, f.len));
	ASSERT_MEMEQ(trimmed.b, f.b, f.len);
	/* Cut short by a byte: no ICRC where UDP says, refused as well. */
	f = write_frame(MRCP_FRAME_IPV6, false);
	trimmed = f;
	ASSERT_EQ(-EINVAL, mrcd_fault_corrupt(st, f.b, f.len - 1));
	ASSERT_MEMEQ(trimmed.b, f.b, f.len);
	mrcd_fault_stage_destroy(st);
}

TEST(fault, corrupt__same_seed_same_byte)
{
	struct mrcd_fault_stage *a = stage_new(42), *b = stage_new(42);

	for (unsigned i = 0; i < 50; i++) {
		struct frame fa = write_frame(MRCP_FRAME_IPV6, false), fb = fa;

		ASSERT_EQ(0, mrcd_fault_corrupt(a, fa.b, fa.len));
		ASSERT_EQ(0, mrcd_fault_corrupt(b, fb.b, fb.len));
		ASSERT_MEMEQ(fa.b, fb.b, fa.len);
	}
	mrcd_fault_stage_destroy(a);
	mrcd_fault_stage_destroy(b);
}

/* Frames every mutation refuses with -EINVAL. */
static void for_each_bad_frame(void (*check)(uint8_t *frame, size_t len))
{
	struct frame f = write_frame(MRCP_FRAME_IPV4, false);
	struct frame g;

	check(f.b, 10);                                 /* shorter than Ethernet */
	check(f.b, f.hdr_len + 11);                     /* BTH cut short */
	g = f;
	mrcp_put_be16(g.b + 12, 0x0806);                /* ARP */
	check(g.b, g.len);
	g = f;
	mrcp_put_be16(g.b + 12, 0x8100);                /* VLAN tag... */
	check(g.b, 15);                                 /* ...cut short */
	g = f;
	g.b[g.ip_off + 9] = 6;                          /* TCP */
	check(g.b, g.len);
	g = f;
	g.b[g.ip_off] = 0x65;                           /* IPv4 ethertype, version 6 */
	check(g.b, g.len);
	g = f;
	g.b[g.ip_off] = 0x44;                           /* IHL 4 */
	check(g.b, g.len);
	g = f;
	check(g.b, g.ip_off + 19);                      /* IPv4 header cut */

	f = write_frame(MRCP_FRAME_IPV6, false);
	g = f;
	g.b[g.ip_off + 6] = 58;                         /* ICMPv6 (NDP) */
	check(g.b, g.len);
	g = f;
	g.b[g.ip_off] = 0x45;                           /* IPv6 ethertype, version 4 */
	check(g.b, g.len);
	check(f.b, f.ip_off + 39);                      /* IPv6 header cut */

	f = write_frame(MRCP_FRAME_SRV6, false);
	g = f;
	g.b[g.ip_off + MRCP_IPV6_HLEN + 6] = 6;         /* inner: TCP */
	check(g.b, g.len);
	check(f.b, f.ip_off + MRCP_IPV6_HLEN + 20);     /* inner header cut */
	g = f;
	g.b[g.ip_off + 6] = 43;                         /* routing header... */
	g.b[g.ip_off + MRCP_IPV6_HLEN] = 6;             /* ...not followed by IPv6 */
	check(g.b, g.len);
	g = f;
	g.b[g.ip_off + 6] = 43;
	g.b[g.ip_off + MRCP_IPV6_HLEN] = 41;
	g.b[g.ip_off + MRCP_IPV6_HLEN + 1] = 200;       /* SRH longer than the frame */
	check(g.b, g.len);
}

static struct mrcd_fault_stage *bad_frame_stage;

static void check_corrupt_einval(uint8_t *frame, size_t len)
{
	uint8_t copy[BUF_MAX];

	memcpy(copy, frame, len);
	ASSERT_EQ(-EINVAL, mrcd_fault_corrupt(bad_frame_stage, frame, len));
	ASSERT_MEMEQ(copy, frame, len);
}

TEST(fault, corrupt__rejects_non_mrc_frames)
{
	bad_frame_stage = stage_new(1);
	for_each_bad_frame(check_corrupt_einval);
	mrcd_fault_stage_destroy(bad_frame_stage);
}

TEST(fault, corrupt__srv6_with_srh)
{
	struct mrcd_fault_stage *st = stage_new(1);
	struct frame f = write_frame(MRCP_FRAME_SRV6, false), g;
	const size_t srh = 8 + 16; /* one segment */
	size_t at = 0;

	/* Insert an SRH between the outer and the inner IPv6 header. */
	g = f;
	memcpy(g.b + f.ip_off + MRCP_IPV6_HLEN + srh, f.b + f.ip_off + MRCP_IPV6_HLEN,
	       f.len - f.ip_off - MRCP_IPV6_HLEN);
	memset(g.b + f.ip_off + MRCP_IPV6_HLEN, 0, srh);
	g.b[f.ip_off + 6] = 43;
	g.b[f.ip_off + MRCP_IPV6_HLEN] = 41;
	g.b[f.ip_off + MRCP_IPV6_HLEN + 1] = 2; /* 2 * 8 bytes after the first 8 */
	mrcp_put_be16(g.b + f.ip_off + 4, (uint16_t)(mrcp_get_be16(f.b + f.ip_off + 4) + srh));
	g.len = f.len + srh;
	g.hdr_len = f.hdr_len + srh;

	struct frame orig = g;
	struct mrcp_frame_view v;
	ASSERT_EQ(0, parse(&g, &v));
	ASSERT_EQ(0, mrcd_fault_corrupt(st, g.b, g.len));
	ASSERT_EQ(1, diff_bytes(&orig, &g, &at));
	ASSERT_GE(at, g.hdr_len + g.mrc_hdr_len);
	ASSERT_EQ(-EILSEQ, parse(&g, &v));
	mrcd_fault_stage_destroy(st);
}

/* ---- trim -------------------------------------------------------------------------------- */

static void check_trimmed(struct frame *f, const struct frame *orig, size_t new_len)
{
	struct mrcp_frame_view v;
	struct mrcp_pkt p;

	ASSERT_EQ(orig->hdr_len + orig->mrc_hdr_len, new_len);
	f->len = new_len;
	ASSERT_EQ(0, parse(f, &v)); /* IPv4: the header checksum is checked */
	ASSERT_NE(MRCP_TRIM_NONE, v.trim);
	ASSERT_EQ(MRCP_TRIM_FABRIC, v.trim);
	ASSERT_TRUE(v.truncated);
	ASSERT_EQ(11, v.dscp);
	ASSERT_EQ(MRCP_ECN_ECT0, v.ecn);
	ASSERT_EQ(MRCP_ICRC_UNCHECKED, v.icrc);
	ASSERT_EQ(orig->mrc_hdr_len, v.mrc_len);
	/* Ethernet up to the TOS/traffic class, and the MRC headers, untouched. */
	ASSERT_MEMEQ(orig->b, f->b, orig->ip_off);
	ASSERT_MEMEQ(orig->b + orig->hdr_len, v.mrc, orig->mrc_hdr_len);
	ASSERT_EQ(0, mrcp_pkt_decode_hdr(v.mrc, v.mrc_len, &p));
	ASSERT_EQ(MRCP_OP_WRITE_ONLY, p.bth.opcode);
	ASSERT_EQ(0x456, p.bth.psn);
	ASSERT_EQ(0x123, p.bth.dest_qp);
	ASSERT_EQ(0, p.payload_len);
	/* The length fields are as they were. */
	ASSERT_MEMEQ(orig->b + orig->hdr_len - 4, f->b + orig->hdr_len - 4, 2);
}

TEST(fault, trim__ipv4_parses_trimmed_checksum_valid)
{
	struct frame f = write_frame(MRCP_FRAME_IPV4, false), orig = f;
	size_t new_len = 0;

	ASSERT_EQ(0, mrcd_fault_trim(f.b, f.len, 11, &new_len));
	check_trimmed(&f, &orig, new_len);
	ASSERT_MEMEQ(orig.b + f.ip_off + 2, f.b + f.ip_off + 2, 2); /* total length */
	ASSERT_EQ(11 << 2 | MRCP_ECN_ECT0, f.b[f.ip_off + 1]);
	ASSERT_NE(mrcp_get_be16(orig.b + f.ip_off + 10), mrcp_get_be16(f.b + f.ip_off + 10));
}

TEST(fault, trim__ipv6_parses_trimmed)
{
	struct frame f = write_frame(MRCP_FRAME_IPV6, true), orig = f;
	size_t new_len = 0;

	ASSERT_EQ(0, mrcd_fault_trim(f.b, f.len, 11, &new_len));
	check_trimmed(&f, &orig, new_len);
	ASSERT_MEMEQ(orig.b + f.ip_off + 4, f.b + f.ip_off + 4, 2); /* payload length */
	/* Version and flow label untouched. */
	ASSERT_EQ(orig.b[f.ip_off] & 0xF0, f.b[f.ip_off] & 0xF0);
	ASSERT_EQ(orig.b[f.ip_off + 1] & 0x0F, f.b[f.ip_off + 1] & 0x0F);
	ASSERT_MEMEQ(orig.b + f.ip_off + 2, f.b + f.ip_off + 2, 2);
}

TEST(fault, trim__srv6_marks_outer_header)
{
	struct frame f = write_frame(MRCP_FRAME_SRV6, false), orig = f;
	size_t new_len = 0;

	ASSERT_EQ(0, mrcd_fault_trim(f.b, f.len, 11, &new_len));
	check_trimmed(&f, &orig, new_len);
	/* The inner header is left as sent: switches re-mark the outer (D9). */
	ASSERT_MEMEQ(orig.b + f.ip_off + MRCP_IPV6_HLEN, f.b + f.ip_off + MRCP_IPV6_HLEN,
		     MRCP_IPV6_HLEN);
}

TEST(fault, trim__keeps_ecn_and_imm_header)
{
	struct frame f = frame_make(MRCP_FRAME_IPV4, false, MRCP_OP_WRITE_LAST_IMM, 64,
				    MRCP_ECN_ECT1);
	struct frame orig = f;
	struct mrcp_frame_view v;
	size_t new_len = 0;

	ASSERT_EQ(MRCP_DATA_HDR_MAX, f.mrc_hdr_len);
	ASSERT_EQ(0, mrcd_fault_trim(f.b, f.len, 13, &new_len));
	ASSERT_EQ(f.hdr_len + MRCP_DATA_HDR_MAX, new_len);
	f.len = new_len;
	ASSERT_EQ(0, parse(&f, &v));
	ASSERT_EQ(MRCP_TRIM_LASTHOP, v.trim); /* 13 = TRIMMED_LASTHOP */
	ASSERT_EQ(MRCP_ECN_ECT1, v.ecn);
	ASSERT_MEMEQ(orig.b + f.hdr_len, v.mrc, MRCP_DATA_HDR_MAX);
}

TEST(fault, trim__twice_is_harmless)
{
	struct frame f = write_frame(MRCP_FRAME_IPV4, false), orig = f;
	size_t new_len = 0, again = 0;

	ASSERT_EQ(0, mrcd_fault_trim(f.b, f.len, 11, &new_len));
	ASSERT_EQ(0, mrcd_fault_trim(f.b, new_len, 11, &again));
	ASSERT_EQ(new_len, again);
	check_trimmed(&f, &orig, again);
}

TEST(fault, trim__zero_length_write)
{
	struct frame f = frame_make(MRCP_FRAME_IPV6, false, MRCP_OP_WRITE_ONLY, 0, MRCP_ECN_ECT0);
	struct frame orig = f;
	size_t new_len = 0;

	ASSERT_EQ(0, mrcd_fault_trim(f.b, f.len, 11, &new_len));
	check_trimmed(&f, &orig, new_len);
	ASSERT_EQ(orig.len - MRCP_ICRC_LEN, new_len); /* only the ICRC goes */
}

TEST(fault, trim__rejects_control_packets_and_bad_dscp)
{
	struct frame f = frame_make(MRCP_FRAME_IPV4, false, MRCP_OP_ACK, 0, 0), orig = f;
	struct frame w = write_frame(MRCP_FRAME_IPV4, false), worig = w;
	size_t new_len = 1234;

	ASSERT_EQ(-EINVAL, mrcd_fault_trim(f.b, f.len, 11, &new_len));
	ASSERT_MEMEQ(orig.b, f.b, f.len);
	ASSERT_EQ(-EINVAL, mrcd_fault_trim(w.b, w.len, 64, &new_len));
	ASSERT_MEMEQ(worig.b, w.b, w.len);
	/* An unknown opcode does not decode. */
	w.b[w.hdr_len] = 0x42;
	ASSERT_EQ(-EINVAL, mrcd_fault_trim(w.b, w.len, 11, &new_len));
	ASSERT_EQ(1234, new_len);
}

static void check_trim_einval(uint8_t *frame, size_t len)
{
	uint8_t copy[BUF_MAX];
	size_t new_len = 1234;

	memcpy(copy, frame, len);
	ASSERT_EQ(-EINVAL, mrcd_fault_trim(frame, len, 11, &new_len));
	ASSERT_MEMEQ(copy, frame, len);
	ASSERT_EQ(1234, new_len);
}

TEST(fault, trim__rejects_non_mrc_frames)
{
	for_each_bad_frame(check_trim_einval);
}

/* ---- ECN --------------------------------------------------------------------------------- */

TEST(fault, ecn_mark__ipv4_sets_ce_checksum_valid)
{
	const uint8_t ects[] = {MRCP_ECN_ECT0, MRCP_ECN_ECT1};

	for (unsigned i = 0; i < 2; i++) {
		struct frame f = frame_make(MRCP_FRAME_IPV4, true, MRCP_OP_WRITE_ONLY, 100, ects[i]);
		struct frame orig = f;
		struct mrcp_frame_view v;

		ASSERT_EQ(1, mrcd_fault_ecn_mark(f.b, f.len));
		ASSERT_EQ(0, parse(&f, &v)); /* checksum valid; the ICRC masks TOS */
		ASSERT_EQ(MRCP_ECN_CE, v.ecn);
		ASSERT_EQ(10, v.dscp);
		ASSERT_EQ(MRCP_ICRC_OK, v.icrc);
		/* Only the TOS and checksum bytes changed. */
		for (size_t j = 0; j < f.len; j++)
			if (orig.b[j] != f.b[j])
				ASSERT_TRUE(j == f.ip_off + 1 || j == f.ip_off + 10 ||
					    j == f.ip_off + 11);
	}
}

TEST(fault, ecn_mark__ipv6_and_srv6_set_ce)
{
	const enum mrcp_frame_l3 l3s[] = {MRCP_FRAME_IPV6, MRCP_FRAME_SRV6};

	for (unsigned i = 0; i < 2; i++) {
		struct frame f = write_frame(l3s[i], false), orig = f;
		struct mrcp_frame_view v;
		size_t at = 0;

		ASSERT_EQ(1, mrcd_fault_ecn_mark(f.b, f.len));
		ASSERT_EQ(1, diff_bytes(&orig, &f, &at));
		ASSERT_EQ(f.ip_off + 1, at); /* outer traffic class, ECN bits */
		ASSERT_EQ(0, parse(&f, &v));
		ASSERT_EQ(MRCP_ECN_CE, v.ecn);
		ASSERT_EQ(10, v.dscp);
		ASSERT_EQ(MRCP_ICRC_OK, v.icrc);
	}
}

TEST(fault, ecn_mark__not_ect_left_alone)
{
	for (unsigned s = 0; s < NSHAPES; s++) {
		struct frame f = frame_make(shapes[s].l3, shapes[s].vlan, MRCP_OP_ACK, 0,
					    MRCP_ECN_NOT_ECT);
		struct frame orig = f;

		ASSERT_EQ(0, mrcd_fault_ecn_mark(f.b, f.len));
		ASSERT_MEMEQ(orig.b, f.b, f.len);
	}
}

TEST(fault, ecn_mark__already_ce_is_marked)
{
	struct frame f = frame_make(MRCP_FRAME_IPV4, false, MRCP_OP_WRITE_ONLY, 8, MRCP_ECN_CE);
	struct frame orig = f;

	ASSERT_EQ(1, mrcd_fault_ecn_mark(f.b, f.len));
	ASSERT_MEMEQ(orig.b, f.b, f.len);
}

TEST(fault, ecn_mark__on_trimmed_frame)
{
	struct frame f = write_frame(MRCP_FRAME_IPV4, false);
	struct mrcp_frame_view v;
	size_t new_len = 0;

	ASSERT_EQ(0, mrcd_fault_trim(f.b, f.len, 11, &new_len));
	f.len = new_len;
	ASSERT_EQ(1, mrcd_fault_ecn_mark(f.b, f.len));
	ASSERT_EQ(0, parse(&f, &v));
	ASSERT_EQ(MRCP_ECN_CE, v.ecn);
	ASSERT_EQ(11, v.dscp);
	ASSERT_EQ(MRCP_TRIM_FABRIC, v.trim);
}

/* @f with 4 bytes of IPv4 options (NOPs) inserted, lengths, header checksum
 * and ICRC fixed up, so mrcp_frame_parse() accepts it. */
static struct frame ipv4_with_options(const struct frame *f)
{
	struct frame g = *f;
	uint8_t *ip = g.b + g.ip_off;
	uint32_t icrc;

	memmove(ip + 24, f->b + f->ip_off + 20, f->len - f->ip_off - 20);
	memset(ip + 20, 1, 4);
	ip[0] = 0x46;
	mrcp_put_be16(ip + 2, (uint16_t)(mrcp_get_be16(ip + 2) + 4));
	mrcp_csum_ipv4_set(ip, 24);
	g.len += 4;
	g.hdr_len += 4;
	ASSERT_EQ(0, mrcp_icrc_compute(ip, g.len - MRCP_ICRC_LEN - g.ip_off, &icrc));
	mrcp_icrc_store(g.b + g.len - MRCP_ICRC_LEN, icrc);
	return g;
}

TEST(fault, mutations__ipv4_with_options)
{
	struct mrcd_fault_stage *st = stage_new(3);
	struct frame base = write_frame(MRCP_FRAME_IPV4, true);
	struct frame f = ipv4_with_options(&base), orig = f;
	struct mrcp_frame_view v;
	size_t new_len = 0, at = 0;

	ASSERT_EQ(0, parse(&f, &v));
	ASSERT_EQ(1, mrcd_fault_ecn_mark(f.b, f.len));
	ASSERT_EQ(0, parse(&f, &v));
	ASSERT_EQ(MRCP_ECN_CE, v.ecn);

	f = orig;
	ASSERT_EQ(0, mrcd_fault_corrupt(st, f.b, f.len));
	ASSERT_EQ(1, diff_bytes(&orig, &f, &at));
	ASSERT_GE(at, f.hdr_len + f.mrc_hdr_len);
	ASSERT_EQ(-EILSEQ, parse(&f, &v));

	f = orig;
	ASSERT_EQ(0, mrcd_fault_trim(f.b, f.len, 11, &new_len));
	check_trimmed(&f, &orig, new_len);
	mrcd_fault_stage_destroy(st);
}

static void check_ecn_einval(uint8_t *frame, size_t len)
{
	uint8_t copy[BUF_MAX];

	memcpy(copy, frame, len);
	ASSERT_EQ(-EINVAL, mrcd_fault_ecn_mark(frame, len));
	ASSERT_MEMEQ(copy, frame, len);
}

TEST(fault, ecn_mark__rejects_non_mrc_frames)
{
	for_each_bad_frame(check_ecn_einval);
}

/* ---- delay queue --------------------------------------------------------------------------- */

static struct mrcd_delayq *dq_new(unsigned cap)
{
	struct mrcd_delayq *q = NULL;

	ASSERT_EQ(0, mrcd_delayq_create(cap, &q));
	ASSERT_TRUE(q != NULL);
	return q;
}

/* Packets are small integers cast to pointers. */
#define PKT(i) ((void *)(uintptr_t)(i))
#define IDX(p) ((unsigned)(uintptr_t)(p))

TEST(delayq, create__rejects_bad_capacity)
{
	struct mrcd_delayq *q = NULL;

	ASSERT_EQ(-EINVAL, mrcd_delayq_create(0, &q));
	ASSERT_EQ(-EINVAL, mrcd_delayq_create((1u << 24) + 1, &q));
	ASSERT_TRUE(q == NULL);
	q = dq_new(1);
	ASSERT_EQ(0, mrcd_delayq_count(q));
	ASSERT_U64_EQ(UINT64_MAX, mrcd_delayq_next(q));
	mrcd_delayq_destroy(q);
	mrcd_delayq_destroy(NULL);
}

TEST(delayq, push__full_is_enospc)
{
	struct mrcd_delayq *q = dq_new(3);
	void *out[4];

	ASSERT_EQ(0, mrcd_delayq_push(q, PKT(1), 10));
	ASSERT_EQ(0, mrcd_delayq_push(q, PKT(2), 5));
	ASSERT_EQ(0, mrcd_delayq_push(q, PKT(3), 7));
	ASSERT_EQ(-ENOSPC, mrcd_delayq_push(q, PKT(4), 1));
	ASSERT_EQ(3, mrcd_delayq_count(q));
	ASSERT_U64_EQ(5, mrcd_delayq_next(q)); /* the rejected one left no trace */
	ASSERT_EQ(1, mrcd_delayq_pop_due(q, 5, out, 4));
	ASSERT_EQ(2, IDX(out[0]));
	ASSERT_EQ(0, mrcd_delayq_push(q, PKT(4), 1));
	ASSERT_EQ(3, mrcd_delayq_drain(q, out, 4));
	ASSERT_EQ(4, IDX(out[0]));
	ASSERT_EQ(3, IDX(out[1]));
	ASSERT_EQ(1, IDX(out[2]));
	mrcd_delayq_destroy(q);
}

TEST(delayq, pop_due__release_order_and_now)
{
	struct mrcd_delayq *q = dq_new(8);
	void *out[8];

	ASSERT_EQ(0, mrcd_delayq_push(q, PKT(1), 300));
	ASSERT_EQ(0, mrcd_delayq_push(q, PKT(2), 100));
	ASSERT_EQ(0, mrcd_delayq_push(q, PKT(3), 200));
	ASSERT_EQ(0, mrcd_delayq_push(q, PKT(4), 50));
	ASSERT_U64_EQ(50, mrcd_delayq_next(q));
	ASSERT_EQ(0, mrcd_delayq_pop_due(q, 49, out, 8));
	ASSERT_EQ(2, mrcd_delayq_pop_due(q, 100, out, 8)); /* release == now is due */
	ASSERT_EQ(4, IDX(out[0]));
	ASSERT_EQ(2, IDX(out[1]));
	ASSERT_U64_EQ(200, mrcd_delayq_next(q));
	ASSERT_EQ(2, mrcd_delayq_count(q));
	ASSERT_EQ(0, mrcd_delayq_pop_due(q, 199, out, 8));
	ASSERT_EQ(2, mrcd_delayq_pop_due(q, 1000, out, 8));
	ASSERT_EQ(3, IDX(out[0]));
	ASSERT_EQ(1, IDX(out[1]));
	ASSERT_EQ(0, mrcd_delayq_count(q));
	ASSERT_U64_EQ(UINT64_MAX, mrcd_delayq_next(q));
	ASSERT_EQ(0, mrcd_delayq_pop_due(q, UINT64_MAX - 1, out, 8));
	mrcd_delayq_destroy(q);
}

TEST(delayq, pop_due__respects_max)
{
	struct mrcd_delayq *q = dq_new(8);
	void *out[8];

	for (unsigned i = 0; i < 5; i++)
		ASSERT_EQ(0, mrcd_delayq_push(q, PKT(i), 10 + i));
	ASSERT_EQ(0, mrcd_delayq_pop_due(q, 100, out, 0));
	ASSERT_EQ(2, mrcd_delayq_pop_due(q, 100, out, 2));
	ASSERT_EQ(0, IDX(out[0]));
	ASSERT_EQ(1, IDX(out[1]));
	ASSERT_EQ(3, mrcd_delayq_pop_due(q, 100, out, 8));
	ASSERT_EQ(2, IDX(out[0]));
	ASSERT_EQ(4, IDX(out[2]));
	mrcd_delayq_destroy(q);
}

TEST(delayq, ties_leave_in_push_order)
{
	struct mrcd_delayq *q = dq_new(64);
	void *out[64];
	unsigned n;

	/* Interleave two release times so the heap has to reshuffle. */
	for (unsigned i = 0; i < 40; i++)
		ASSERT_EQ(0, mrcd_delayq_push(q, PKT(i), i % 2 ? 500 : 400));
	n = mrcd_delayq_pop_due(q, 500, out, 64);
	ASSERT_EQ(40, n);
	for (unsigned i = 0; i < 20; i++) {
		ASSERT_EQ(2 * i, IDX(out[i]));
		ASSERT_EQ(2 * i + 1, IDX(out[20 + i]));
	}
	mrcd_delayq_destroy(q);
}

TEST(delayq, drain__everything_in_order)
{
	struct mrcd_delayq *q = dq_new(16);
	void *out[16];

	ASSERT_EQ(0, mrcd_delayq_drain(q, out, 16));
	for (unsigned i = 0; i < 10; i++)
		ASSERT_EQ(0, mrcd_delayq_push(q, PKT(i), 1000000 - i * 1000));
	ASSERT_EQ(4, mrcd_delayq_drain(q, out, 4));
	ASSERT_EQ(9, IDX(out[0]));
	ASSERT_EQ(6, IDX(out[3]));
	ASSERT_EQ(6, mrcd_delayq_drain(q, out, 16));
	ASSERT_EQ(5, IDX(out[0]));
	ASSERT_EQ(0, IDX(out[5]));
	ASSERT_EQ(0, mrcd_delayq_count(q));
	mrcd_delayq_destroy(q);
}

TEST(delayq, next__wraps_safely)
{
	struct mrcd_delayq *q = dq_new(4);
	void *out[4];

	/* Times near the top of the 64-bit space order before small ones that
	 * come after the wrap. */
	ASSERT_EQ(0, mrcd_delayq_push(q, PKT(1), 5));
	ASSERT_EQ(0, mrcd_delayq_push(q, PKT(2), UINT64_MAX - 10));
	ASSERT_U64_EQ(UINT64_MAX - 10, mrcd_delayq_next(q));
	ASSERT_EQ(1, mrcd_delayq_pop_due(q, UINT64_MAX - 5, out, 4));
	ASSERT_EQ(2, IDX(out[0]));
	ASSERT_EQ(1, mrcd_delayq_pop_due(q, 5, out, 4));
	ASSERT_EQ(1, IDX(out[0]));
	mrcd_delayq_destroy(q);
}

/* Random pushes and pops against a reference: a sorted array. */
TEST(delayq, heap_matches_reference)
{
	enum { CAP = 257 };
	struct mrcd_delayq *q = dq_new(CAP);
	struct { uint64_t t; unsigned id; } ref[CAP];
	unsigned nref = 0, next_id = 0;
	uint64_t now = 0;
	struct mrcp_prng r;
	void *out[CAP];

	mrcp_prng_seed(&r, 0xD1A7);
	for (unsigned step = 0; step < 20000; step++) {
		if (mrcp_prng_below(&r, 3) != 0) {
			uint64_t t = now + mrcp_prng_below(&r, 64);
			int rc = mrcd_delayq_push(q, PKT(next_id), t);

			if (nref == CAP) {
				ASSERT_EQ(-ENOSPC, rc);
				continue;
			}
			ASSERT_EQ(0, rc);
			/* Insert after every entry with t <= this one: FIFO ties. */
			unsigned at = nref;
			while (at > 0 && ref[at - 1].t > t) {
				ref[at] = ref[at - 1];
				at--;
			}
			ref[at].t = t;
			ref[at].id = next_id++;
			nref++;
		} else {
			unsigned max = mrcp_prng_below(&r, 8), n, due = 0;

			now += mrcp_prng_below(&r, 16);
			while (due < nref && ref[due].t <= now)
				due++;
			n = mrcd_delayq_pop_due(q, now, out, max);
			ASSERT_EQ(due < max ? due : max, n);
			for (unsigned i = 0; i < n; i++)
				ASSERT_EQ(ref[i].id, IDX(out[i]));
			memmove(ref, ref + n, (nref - n) * sizeof(ref[0]));
			nref -= n;
		}
		ASSERT_EQ(nref, mrcd_delayq_count(q));
		ASSERT_U64_EQ(nref ? ref[0].t : UINT64_MAX, mrcd_delayq_next(q));
	}
	ASSERT_EQ(nref, mrcd_delayq_drain(q, out, CAP));
	for (unsigned i = 0; i < nref; i++)
		ASSERT_EQ(ref[i].id, IDX(out[i]));
	mrcd_delayq_destroy(q);
}
