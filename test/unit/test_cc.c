/* test_cc.c - unit tests for lib/core/cc.c (the CC registry, D56) and
 * lib/core/cc_fixed.c (the constant-window algorithm), in source order. */
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
	for (int i = 0; i < 8; i++) {
		struct mrcp_cc_registry r = {0};
		struct mrcp_cc_ops o = ops_named("x");

		switch (i) {
		case 0: o.init = NULL; break;
		case 1: o.on_send = NULL; break;
		case 2: o.on_sack = NULL; break;
		case 3: o.on_nack = NULL; break;
		case 4: o.on_loss = NULL; break;
		case 5: o.on_timeout = NULL; break;
		case 6: o.can_send = NULL; break;
		default: o.stats = NULL; break;
		}
		ASSERT_EQ(-EINVAL, mrcp_cc_register(&r, &o));
		ASSERT_EQ(r.n, 0);
	}
}

TEST(cc, mrcp_cc_register__optional_hooks_may_be_null)
{
	struct mrcp_cc_registry r = {0};
	struct mrcp_cc_ops o = ops_named("x");

	o.release = NULL;
	o.on_forget = NULL;
	ASSERT_EQ(0, mrcp_cc_register(&r, &o));
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
	ASSERT_U64_EQ(fst(priv.bytes).inflight, 0);
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

TEST(cc, fixed_on_send__and_on_sack_account_inflight)
{
	struct mrcp_cc_params p = p100();
	void *s = fixed_new(&p);
	struct mrcp_cc_sack k = { .newly_rcvd = 9000, .acked = 3000, .rtt_valid = true, .rtt_ns = 12000 };

	mrcp_cc_fixed.on_send(s, 4136, T0);
	mrcp_cc_fixed.on_send(s, 4136, T0 + 1);
	ASSERT_U64_EQ(fst(s).inflight, 8272);
	/* inflight falls by the scoreboard's acked bytes, not by rcvd_bytes */
	mrcp_cc_fixed.on_sack(s, &k, T0 + 100);
	ASSERT_U64_EQ(fst(s).inflight, 5272);
	k.acked = 100000; /* clamps at zero */
	mrcp_cc_fixed.on_sack(s, &k, T0 + 200);
	ASSERT_U64_EQ(fst(s).inflight, 0);
}

TEST(cc, fixed_on_sack__ignores_every_signal)
{
	struct mrcp_cc_params p = p100();
	void *s = fixed_new(&p);
	struct mrcp_cc_sack k = {
		.newly_rcvd = 50000, .ecn = true, .rtt_valid = true,
		.rtt_ns = 1000000, .pen = 127,
	};

	for (int i = 0; i < 50; i++)
		mrcp_cc_fixed.on_sack(s, &k, T0 + 100 + 12000u * (unsigned)i);
	k.pen = 0;
	k.r_c = true;
	mrcp_cc_fixed.on_sack(s, &k, T0 + 1000000);
	mrcp_cc_fixed.on_nack(s, 4136, T0 + 1000001);
	mrcp_cc_fixed.on_loss(s, 4136, T0 + 1000002);
	mrcp_cc_fixed.on_timeout(s, 0, T0 + 1000003);
	ASSERT_U64_EQ(fst(s).cwnd, 225000);
	ASSERT_U64_EQ(fst(s).md_events + fst(s).qa_events + fst(s).pen_events, 0);
}

TEST(cc, fixed_on_nack__and_on_loss_leave_inflight)
{
	struct mrcp_cc_params p = p100();
	void *s = fixed_new(&p);

	mrcp_cc_fixed.on_send(s, 10000, T0);
	mrcp_cc_fixed.on_nack(s, 4136, T0 + 1);
	ASSERT_U64_EQ(fst(s).inflight, 5864);
	mrcp_cc_fixed.on_loss(s, 4136, T0 + 2);
	ASSERT_U64_EQ(fst(s).inflight, 1728);
	mrcp_cc_fixed.on_loss(s, 4136, T0 + 3);
	ASSERT_U64_EQ(fst(s).inflight, 0);
}

TEST(cc, fixed_on_timeout__resyncs_inflight)
{
	struct mrcp_cc_params p = p100();
	void *s = fixed_new(&p);

	mrcp_cc_fixed.on_send(s, 10000, T0);
	mrcp_cc_fixed.on_timeout(s, 7000, T0 + 100);
	ASSERT_U64_EQ(fst(s).inflight, 7000);
	mrcp_cc_fixed.on_timeout(s, 9000, T0 + 200);
	ASSERT_U64_EQ(fst(s).inflight, 9000);
}

TEST(cc, fixed_can_send__window_and_empty_pipe)
{
	struct mrcp_cc_params p = p100();
	void *s;

	p.fixed_cwnd = 1000; /* smaller than one packet */
	s = fixed_new(&p);
	ASSERT_TRUE(mrcp_cc_fixed.can_send(s, 4136));
	mrcp_cc_fixed.on_send(s, 4136, T0);
	ASSERT_FALSE(mrcp_cc_fixed.can_send(s, 1));
	p.fixed_cwnd = 10000;
	s = fixed_new(&p);
	mrcp_cc_fixed.on_send(s, 6000, T0);
	ASSERT_TRUE(mrcp_cc_fixed.can_send(s, 4000));
	ASSERT_FALSE(mrcp_cc_fixed.can_send(s, 4001));
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

TEST(cc, fixed_on_forget__drops_inflight)
{
	struct mrcp_cc_params p = p100();
	void *s = fixed_new(&p);

	mrcp_cc_fixed.on_send(s, 10000, T0);
	mrcp_cc_fixed.on_forget(s, 2500);
	ASSERT_U64_EQ(fst(s).inflight, 7500);
	mrcp_cc_fixed.on_forget(s, 1000000);
	ASSERT_U64_EQ(fst(s).inflight, 0);
	ASSERT_STREQ(mrcp_cc_fixed.name, "fixed");
}

TEST(cc, fixed_can_send__a_residue_below_one_packet_never_blocks)
{
	struct mrcp_cc_params p = p100();
	struct mrcp_cc_sack in = {0};
	void *s;

	/* less than one packet in flight never blocks: with the window at
	 * one packet a residue must not block the next packet (it
	 * deadlocked RC QPs in the simulator) */
	p.fixed_cwnd = 4176;
	s = fixed_new(&p);
	mrcp_cc_fixed.on_send(s, 4176, T0);
	ASSERT_FALSE(mrcp_cc_fixed.can_send(s, 4176));
	in.acked = 4096;
	mrcp_cc_fixed.on_sack(s, &in, T0);
	ASSERT_EQ(80, fst(s).inflight);
	ASSERT_TRUE(mrcp_cc_fixed.can_send(s, 4176));
	mrcp_cc_fixed.on_send(s, 4176, T0);
	ASSERT_FALSE(mrcp_cc_fixed.can_send(s, 4176));
}
