/* test_cc.c - unit tests for lib/core/cc.c (the CC registry, D56), the
 * window rule of mrcp_cc.h and lib/core/cc_fixed.c (the constant-window
 * algorithm), in source order. The engine's inflight count is tested in
 * test_req.c and test_engine.c. */
#include "mrcp_cc.h"
#include "mrcp_test.h"

#include <errno.h>
#include <stddef.h>

#define T0 1000000u

static union {
	max_align_t align;
	unsigned char bytes[1024];
} priv;

/* A complete ops table called @name, borrowing fixed's hooks. */
static struct mrcp_cc_ops ops_named(const char *name)
{
	struct mrcp_cc_ops o = mrcp_cc_fixed;

	memset(o.name, 0, sizeof(o.name));
	strncpy(o.name, name, sizeof(o.name) - 1);
	return o;
}

/* ---- mrcp_cc_register -------------------------------------------------- */

TEST(cc, mrcp_cc_register__adds_in_order)
{
	struct mrcp_cc_registry r = {0};
	struct mrcp_cc_ops a = ops_named("a"), b = ops_named("b");

	ASSERT_EQ(0, mrcp_cc_register(&r, &a));
	ASSERT_EQ(0, mrcp_cc_register(&r, &b));
	ASSERT_EQ(r.n, 2);
	ASSERT_TRUE(r.ops[0] == &a);
	ASSERT_TRUE(r.ops[1] == &b);
}

TEST(cc, mrcp_cc_register__rejects_each_missing_mandatory_hook)
{
	for (int i = 0; i < 3; i++) {
		struct mrcp_cc_registry r = {0};
		struct mrcp_cc_ops o = ops_named("x");

		switch (i) {
		case 0: o.init = NULL; break;
		case 1: o.cwnd = NULL; break;
		default: o.stats = NULL; break;
		}
		ASSERT_EQ(-EINVAL, mrcp_cc_register(&r, &o));
		ASSERT_EQ(r.n, 0);
	}
}

static void any_sack(void *st, const struct mrcp_cc_sack *s, uint64_t now_ns)
{
	(void)st;
	(void)s;
	(void)now_ns;
}

TEST(cc, mrcp_cc_register__optional_hooks_may_be_null)
{
	struct mrcp_cc_registry r = {0};
	struct mrcp_cc_ops o = ops_named("x"), with = ops_named("y");

	/* every signal hook and release: an algorithm may ignore them all */
	o.on_sack = NULL;
	o.on_nack = NULL;
	o.on_loss = NULL;
	o.on_timeout = NULL;
	o.release = NULL;
	ASSERT_EQ(0, mrcp_cc_register(&r, &o));
	with.on_sack = any_sack;
	ASSERT_EQ(0, mrcp_cc_register(&r, &with));
}

TEST(cc, mrcp_cc_register__rejects_bad_names_and_null)
{
	struct mrcp_cc_registry r = {0};
	struct mrcp_cc_ops o = ops_named("");

	ASSERT_EQ(-EINVAL, mrcp_cc_register(&r, &o));
	memset(o.name, 'z', sizeof(o.name)); /* no terminator */
	ASSERT_EQ(-EINVAL, mrcp_cc_register(&r, &o));
	ASSERT_EQ(-EINVAL, mrcp_cc_register(&r, NULL));
	o = ops_named("x");
	ASSERT_EQ(-EINVAL, mrcp_cc_register(NULL, &o));
	ASSERT_EQ(r.n, 0);
}

TEST(cc, mrcp_cc_register__duplicate_name_is_eexist)
{
	struct mrcp_cc_registry r = {0};
	struct mrcp_cc_ops a = ops_named("same"), b = ops_named("same");

	ASSERT_EQ(0, mrcp_cc_register(&r, &a));
	ASSERT_EQ(-EEXIST, mrcp_cc_register(&r, &b));
	ASSERT_EQ(-EEXIST, mrcp_cc_register(&r, &a));
	ASSERT_EQ(r.n, 1);
}

TEST(cc, mrcp_cc_register__full_registry_is_enospc)
{
	struct mrcp_cc_registry r = {0};
	struct mrcp_cc_ops o[MRCP_CC_MAX_ALGOS + 1];
	char name[4] = "a0";

	for (int i = 0; i <= MRCP_CC_MAX_ALGOS; i++) {
		name[1] = (char)('0' + i);
		o[i] = ops_named(name);
	}
	for (int i = 0; i < MRCP_CC_MAX_ALGOS; i++)
		ASSERT_EQ(0, mrcp_cc_register(&r, &o[i]));
	ASSERT_EQ(-ENOSPC, mrcp_cc_register(&r, &o[MRCP_CC_MAX_ALGOS]));
	/* a duplicate is still reported as such when full */
	ASSERT_EQ(-EEXIST, mrcp_cc_register(&r, &o[0]));
	ASSERT_EQ(r.n, MRCP_CC_MAX_ALGOS);
}

/* ---- mrcp_cc_find ------------------------------------------------------- */

TEST(cc, mrcp_cc_find__exact_name_only)
{
	struct mrcp_cc_registry r = {0};
	struct mrcp_cc_ops a = ops_named("nscc"), b = ops_named("nscc2");

	ASSERT_EQ(0, mrcp_cc_register(&r, &a));
	ASSERT_TRUE(mrcp_cc_find(&r, "nscc") == &a);
	ASSERT_TRUE(mrcp_cc_find(&r, "nsc") == NULL);
	ASSERT_TRUE(mrcp_cc_find(&r, "nscc2") == NULL);
	ASSERT_TRUE(mrcp_cc_find(&r, "a-name-longer-than-sixteen") == NULL);
	ASSERT_TRUE(mrcp_cc_find(&r, "") == NULL);
	ASSERT_TRUE(mrcp_cc_find(&r, NULL) == NULL);
	ASSERT_TRUE(mrcp_cc_find(NULL, "nscc") == NULL);
	ASSERT_EQ(0, mrcp_cc_register(&r, &b));
	ASSERT_TRUE(mrcp_cc_find(&r, "nscc2") == &b);
	ASSERT_TRUE(mrcp_cc_find(&r, "nscc") == &a);
}

/* ---- mrcp_cc_register_builtin ------------------------------------------- */

TEST(cc, mrcp_cc_register_builtin__nscc_then_fixed)
{
	struct mrcp_cc_registry r = {0};

	ASSERT_EQ(0, mrcp_cc_register_builtin(&r));
	ASSERT_EQ(r.n, 2);
	ASSERT_TRUE(r.ops[0] == &mrcp_cc_nscc);
	ASSERT_TRUE(mrcp_cc_find(&r, "nscc") == &mrcp_cc_nscc);
	ASSERT_TRUE(mrcp_cc_find(&r, "fixed") == &mrcp_cc_fixed);
	ASSERT_EQ(-EEXIST, mrcp_cc_register_builtin(&r));
	ASSERT_EQ(r.n, 2);
}

/* ---- mrcp_cc_window_open (mrcp_cc.h) ------------------------------------ */

TEST(cc, mrcp_cc_window_open__inflight_plus_packet_within_cwnd)
{
	ASSERT_TRUE(mrcp_cc_window_open(0, 225000, 1000000)); /* empty pipe */
	ASSERT_TRUE(mrcp_cc_window_open(220000, 225000, 5000));
	ASSERT_FALSE(mrcp_cc_window_open(220000, 225000, 5001));
	ASSERT_TRUE(mrcp_cc_window_open(6000, 10000, 4000));
	ASSERT_FALSE(mrcp_cc_window_open(6000, 10000, 4001));
}

TEST(cc, mrcp_cc_window_open__a_residue_below_one_packet_never_blocks)
{
	/* less than one packet in flight never blocks: with the window at one
	 * packet a residue must not block the next packet (it deadlocked RC
	 * QPs in the simulator), and a window below one packet still moves
	 * one packet at a time */
	ASSERT_FALSE(mrcp_cc_window_open(4176, 4176, 4176));
	ASSERT_TRUE(mrcp_cc_window_open(80, 4176, 4176));
	ASSERT_TRUE(mrcp_cc_window_open(0, 1000, 4136));
	ASSERT_FALSE(mrcp_cc_window_open(4136, 1000, 1));
	ASSERT_TRUE(mrcp_cc_window_open(4135, 1000, 4136));
}

/* ---- cc_fixed.c --------------------------------------------------------- */

static struct mrcp_cc_params p100(void)
{
	struct mrcp_cc_params p;

	memset(&p, 0, sizeof(p));
	p.link_bps = 100000000000ull;
	p.base_rtt_ns = 12000;
	p.mtu = 4096;
	p.pkt_overhead = 40;
	return p;
}

static void *fixed_new(const struct mrcp_cc_params *p)
{
	ASSERT_TRUE(mrcp_cc_fixed.priv_size <= sizeof(priv.bytes));
	memset(priv.bytes, 0xA5, sizeof(priv.bytes));
	ASSERT_EQ(0, mrcp_cc_fixed.init(priv.bytes, p, T0));
	return priv.bytes;
}

static struct mrcp_cc_stats fst(const void *s)
{
	struct mrcp_cc_stats o;

	mrcp_cc_fixed.stats(s, &o);
	return o;
}

TEST(cc, fixed_init__default_is_1_5_bdp)
{
	struct mrcp_cc_params p = p100();

	ASSERT_U64_EQ(fst(fixed_new(&p)).cwnd, 225000);
	ASSERT_U64_EQ(fst(priv.bytes).base_rtt_ns, 12000);
	p.link_bps = 400000000000ull;
	ASSERT_U64_EQ(fst(fixed_new(&p)).cwnd, 900000);
	p.base_rtt_ns = 0; /* 12 us */
	ASSERT_U64_EQ(fst(fixed_new(&p)).cwnd, 900000);
	p.base_rtt_ns = 6000;
	ASSERT_U64_EQ(fst(fixed_new(&p)).cwnd, 450000);
}

TEST(cc, fixed_init__fixed_cwnd_overrides)
{
	struct mrcp_cc_params p = p100();

	p.fixed_cwnd = 12345;
	ASSERT_U64_EQ(fst(fixed_new(&p)).cwnd, 12345);
	p.link_bps = 0; /* not needed when the window is given */
	ASSERT_U64_EQ(fst(fixed_new(&p)).cwnd, 12345);
}

TEST(cc, fixed_init__rejects_unusable_params)
{
	struct mrcp_cc_params p = p100();

	ASSERT_EQ(-EINVAL, mrcp_cc_fixed.init(priv.bytes, NULL, T0));
	p.link_bps = 0;
	ASSERT_EQ(-EINVAL, mrcp_cc_fixed.init(priv.bytes, &p, T0));
	p = p100();
	p.base_rtt_ns = 2000000000ull;
	ASSERT_EQ(-EINVAL, mrcp_cc_fixed.init(priv.bytes, &p, T0));
}

TEST(cc, fixed_cwnd__is_the_constant_window)
{
	struct mrcp_cc_params p = p100();
	void *s = fixed_new(&p);

	ASSERT_U64_EQ(mrcp_cc_fixed.cwnd(s), 225000);
	p.fixed_cwnd = 1000; /* smaller than one packet: the rule copes */
	s = fixed_new(&p);
	ASSERT_U64_EQ(mrcp_cc_fixed.cwnd(s), 1000);
}

TEST(cc, mrcp_cc_fixed__ignores_every_signal_and_keeps_no_inflight)
{
	/* no hooks to call: the engine gives it no signal and keeps inflight
	 * itself, so the window cannot move */
	ASSERT_STREQ(mrcp_cc_fixed.name, "fixed");
	ASSERT_TRUE(mrcp_cc_fixed.on_sack == NULL);
	ASSERT_TRUE(mrcp_cc_fixed.on_nack == NULL);
	ASSERT_TRUE(mrcp_cc_fixed.on_loss == NULL);
	ASSERT_TRUE(mrcp_cc_fixed.on_timeout == NULL);
	ASSERT_TRUE(mrcp_cc_fixed.release == NULL);
	ASSERT_EQ(sizeof(uint64_t) * 2, mrcp_cc_fixed.priv_size); /* cwnd, base_rtt */
}

TEST(cc, fixed_stats__window_is_its_own_bounds)
{
	struct mrcp_cc_params p = p100();
	struct mrcp_cc_stats o;

	p.fixed_cwnd = 50000;
	o = fst(fixed_new(&p));
	ASSERT_U64_EQ(o.max_cwnd, 50000);
	ASSERT_U64_EQ(o.min_cwnd, 50000);
	ASSERT_U64_EQ(o.target_qdelay_ns, 0);
	ASSERT_DBL_NEAR(o.alpha, 0.0, 0.0);
}

