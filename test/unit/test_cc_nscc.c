/* test_cc_nscc.c - unit tests for lib/core/cc_nscc.c (NSCC, §6), in the
 * order of the functions they cover. Time is a plain variable; every expected
 * window is worked out from the §6.4 defaults for 100 Gb/s x 12 us, payload
 * MTU 4096 and 40 B overhead:
 *   nominal packet 4136 B = min_cwnd, BDP 150000 B, max_cwnd 225000 B,
 *   trimming: target 9000 ns, alpha 4 x 1 x 0.75 x 4096 / 9000 B/ns,
 *   fi 20480 B, eta 614.4 B, fi_scale 0.25, adjust 12000 ns / 33088 B,
 *   quick-adapt window 21000 ns, gate 225000 >> 3 = 28125 B.
 */
#include "mrcp_cc.h"
#include "mrcp_test.h"

#include <errno.h>
#include <stddef.h>

#define T0 1000000u          /* ns; tests start away from 0 */
#define PKT 4136u            /* nominal MTU packet, bytes */
#define MAXW 225000u         /* 1.5 x BDP at 100 Gb/s x 12 us */
#define BASE 12000u          /* base_rtt, ns */
#define ALPHA_TRIM (4.0 * 1.0 * 0.75 * 4096.0 / 9000.0)

static union {
	max_align_t align;
	unsigned char bytes[4096];
} priv;

static struct mrcp_cc_params p100(bool trimming)
{
	struct mrcp_cc_params p;

	memset(&p, 0, sizeof(p));
	p.link_bps = 100000000000ull;
	p.base_rtt_ns = BASE;
	p.mtu = 4096;
	p.pkt_overhead = 40;
	p.trimming_fabric = trimming;
	return p;
}

/* The engine's side, as the requester keeps it (req_internal.h's send-order
 * list): the QPCC's inflight, nominal bytes.
 * A packet joins it when sent and leaves it before the hook that reports it
 * is called, so every hook sees inflight without the packets it names. */
static uint64_t infl;

static void sent(uint64_t bytes)
{
	infl += bytes;
}

/* @bytes leave flight (never below 0, as a test may report more). */
static uint64_t leave(uint64_t bytes)
{
	infl = infl > bytes ? infl - bytes : 0;
	return infl;
}

static void nack(void *s, uint64_t bytes, uint64_t now)
{
	mrcp_cc_nscc.on_nack(s, bytes, leave(bytes), now);
}

static void loss(void *s, uint64_t bytes, uint64_t now)
{
	mrcp_cc_nscc.on_loss(s, bytes, leave(bytes), now);
}

/* An RTO round after which @outstanding bytes are still in flight. */
static void timeout(void *s, uint64_t outstanding, uint64_t now)
{
	infl = outstanding;
	mrcp_cc_nscc.on_timeout(s, infl, now);
}

static void *nscc_new(const struct mrcp_cc_params *p)
{
	infl = 0;
	ASSERT_TRUE(mrcp_cc_nscc.priv_size <= sizeof(priv.bytes));
	memset(priv.bytes, 0xA5, sizeof(priv.bytes)); /* init must not rely on zero */
	ASSERT_EQ(0, mrcp_cc_nscc.init(priv.bytes, p, T0));
	return priv.bytes;
}

static struct mrcp_cc_stats st(const void *s)
{
	struct mrcp_cc_stats out;

	mrcp_cc_nscc.stats(s, &out);
	return out;
}

static uint64_t cwnd(const void *s) { return st(s).cwnd; }

/* One SACK with a valid RTT sample and no penalty, acknowledging @newly
 * bytes that were in flight (no duplicates: what left flight = newly_rcvd). */
static void sack(void *s, uint64_t now, uint64_t newly, bool ecn, uint64_t rtt_ns)
{
	struct mrcp_cc_sack k = {
		.newly_rcvd = newly, .ecn = ecn, .rtt_valid = true, .rtt_ns = rtt_ns,
	};

	k.inflight = leave(newly);
	mrcp_cc_nscc.on_sack(s, &k, now);
}

static void sack_pen(void *s, uint64_t now, uint64_t newly, uint8_t pen, bool r_c)
{
	struct mrcp_cc_sack k = {
		.newly_rcvd = newly, .rtt_valid = true, .rtt_ns = BASE + 3000,
		.pen = pen, .r_c = r_c,
	};

	k.inflight = leave(newly);
	mrcp_cc_nscc.on_sack(s, &k, now);
}

/* Trimming fabric, quick adapt off, and cwnd brought down to 142280 B by 20
 * NACKs, so that increases are visible below max_cwnd. */
static void *nscc_below_max(void)
{
	struct mrcp_cc_params p = p100(true);
	void *s;

	p.disable_qa = true;
	s = nscc_new(&p);
	for (int i = 0; i < 20; i++)
		nack(s, PKT, T0 + 10);
	ASSERT_U64_EQ(cwnd(s), MAXW - 20 * PKT);
	ASSERT_U64_EQ(cwnd(s), 142280);
	return s;
}

/* ---- nscc_init ---------------------------------------------------------- */

TEST(cc_nscc, nscc_init__defaults_100g_12us_trimming)
{
	struct mrcp_cc_params p = p100(true);
	struct mrcp_cc_stats o = st(nscc_new(&p));

	/* sa = 150000 / 150000 = 1, sb = 9000 / 12000 = 0.75 */
	ASSERT_U64_EQ(o.base_rtt_ns, 12000);
	ASSERT_U64_EQ(o.target_qdelay_ns, 9000);
	ASSERT_U64_EQ(o.max_cwnd, 225000);
	ASSERT_U64_EQ(o.cwnd, 225000);
	ASSERT_U64_EQ(o.min_cwnd, 4136);
	ASSERT_DBL_NEAR(o.alpha, 1.3653333333, 1e-9);
	ASSERT_DBL_NEAR(o.fi, 20480.0, 1e-9);
	ASSERT_DBL_NEAR(o.eta, 614.4, 1e-9);
	ASSERT_DBL_NEAR(o.fi_scale, 0.25, 1e-12);
	ASSERT_DBL_NEAR(o.gamma, 0.8, 1e-12);
	ASSERT_DBL_NEAR(o.max_md_jump, 0.5, 1e-12);
	ASSERT_U64_EQ(o.adjust_period_ns, 12000);
	ASSERT_U64_EQ(o.adjust_bytes, 8 * 4136);
	ASSERT_EQ(o.qa_gate, 3);
	ASSERT_U64_EQ(o.qa_threshold_ns, 36000);
	ASSERT_U64_EQ(o.avg_delay_ns, 0);
	ASSERT_U64_EQ(o.md_events + o.qa_events + o.fast_inc_events + o.pen_events, 0);
}

TEST(cc_nscc, nscc_init__defaults_100g_12us_no_trimming)
{
	struct mrcp_cc_params p = p100(false);
	struct mrcp_cc_stats o = st(nscc_new(&p));

	/* sa = 1, sb = 1: alpha = 4 x 4096 / 12000 */
	ASSERT_U64_EQ(o.target_qdelay_ns, 12000);
	ASSERT_U64_EQ(o.max_cwnd, 225000);
	ASSERT_DBL_NEAR(o.alpha, 4.0 * 4096.0 / 12000.0, 1e-9);
	ASSERT_DBL_NEAR(o.fi, 20480.0, 1e-9);
	ASSERT_DBL_NEAR(o.eta, 614.4, 1e-9);
	ASSERT_DBL_NEAR(o.fi_scale, 0.25, 1e-12);
	ASSERT_U64_EQ(o.qa_threshold_ns, 48000);
}

TEST(cc_nscc, nscc_init__defaults_400g_12us)
{
	struct mrcp_cc_params p = p100(true);
	struct mrcp_cc_stats o;

	p.link_bps = 400000000000ull;
	o = st(nscc_new(&p));
	/* BDP 600000 B, sa = 4, sb = 0.75 */
	ASSERT_U64_EQ(o.max_cwnd, 900000);
	ASSERT_U64_EQ(o.cwnd, 900000);
	ASSERT_U64_EQ(o.min_cwnd, 4136);
	ASSERT_U64_EQ(o.target_qdelay_ns, 9000);
	ASSERT_DBL_NEAR(o.alpha, 4.0 * 4.0 * 0.75 * 4096.0 / 9000.0, 1e-9);
	ASSERT_DBL_NEAR(o.fi, 81920.0, 1e-9);
	ASSERT_DBL_NEAR(o.eta, 2457.6, 1e-9);
	ASSERT_DBL_NEAR(o.fi_scale, 1.0, 1e-12);
	ASSERT_U64_EQ(o.adjust_bytes, 33088);
}

TEST(cc_nscc, nscc_init__unset_base_rtt_is_12us)
{
	struct mrcp_cc_params p = p100(false);
	struct mrcp_cc_stats o;

	p.base_rtt_ns = 0;
	o = st(nscc_new(&p));
	ASSERT_U64_EQ(o.base_rtt_ns, 12000);
	ASSERT_U64_EQ(o.max_cwnd, 225000);
}

TEST(cc_nscc, nscc_init__keeps_overrides)
{
	struct mrcp_cc_params p = p100(true);
	struct mrcp_cc_stats o;

	p.target_qdelay_ns = 5000;
	p.max_cwnd = 100000;
	p.min_cwnd = 8000;
	p.fi = 1000;
	p.qa_gate = 2;
	p.adjust_bytes = 10000;
	p.gamma = 0.5;
	o = st(nscc_new(&p));
	ASSERT_U64_EQ(o.target_qdelay_ns, 5000);
	ASSERT_U64_EQ(o.qa_threshold_ns, 20000);
	ASSERT_U64_EQ(o.max_cwnd, 100000);
	ASSERT_U64_EQ(o.cwnd, 100000);
	ASSERT_U64_EQ(o.min_cwnd, 8000);
	ASSERT_DBL_NEAR(o.fi, 1000.0, 1e-12);
	ASSERT_DBL_NEAR(o.gamma, 0.5, 1e-12);
	ASSERT_EQ(o.qa_gate, 2);
	ASSERT_U64_EQ(o.adjust_bytes, 10000);
	/* sb / target is always 1 / 12 us, so alpha does not move with target */
	ASSERT_DBL_NEAR(o.alpha, 4.0 * 4096.0 / 12000.0, 1e-9);
}

TEST(cc_nscc, nscc_init__rejects_unusable_params)
{
	struct mrcp_cc_params p;

	p = p100(true); p.link_bps = 0;
	ASSERT_EQ(-EINVAL, mrcp_cc_nscc.init(priv.bytes, &p, T0));
	p = p100(true); p.mtu = 0;
	ASSERT_EQ(-EINVAL, mrcp_cc_nscc.init(priv.bytes, &p, T0));
	p = p100(true); p.base_rtt_ns = 2000000000ull;
	ASSERT_EQ(-EINVAL, mrcp_cc_nscc.init(priv.bytes, &p, T0));
	p = p100(true); p.max_md_jump = 1.5;
	ASSERT_EQ(-EINVAL, mrcp_cc_nscc.init(priv.bytes, &p, T0));
	p = p100(true); p.gamma = -1.0;
	ASSERT_EQ(-EINVAL, mrcp_cc_nscc.init(priv.bytes, &p, T0));
	p = p100(true); p.qa_gate = 64;
	ASSERT_EQ(-EINVAL, mrcp_cc_nscc.init(priv.bytes, &p, T0));
	p = p100(true); p.max_cwnd = 1000; /* below one packet */
	ASSERT_EQ(-EINVAL, mrcp_cc_nscc.init(priv.bytes, &p, T0));
	ASSERT_EQ(-EINVAL, mrcp_cc_nscc.init(priv.bytes, NULL, T0));
}

/* ---- apply_penalty (§6.5) ----------------------------------------------- */

TEST(cc_nscc, apply_penalty__pen_64_for_one_rtt_halves)
{
	struct mrcp_cc_params p = p100(true);
	void *s = nscc_new(&p);

	/* one RTT of bytes (one full window) in 10 SACKs, each costing
	 * 22500 x 64 / 128 = 11250 B, with no increase in between */
	for (int i = 0; i < 10; i++)
		sack_pen(s, T0 + 100 + i, 22500, 64, false);
	ASSERT_U64_EQ(cwnd(s), 112500);
	ASSERT_U64_EQ(st(s).pen_events, 1);
}

TEST(cc_nscc, apply_penalty__r_c_restores_saved_cwnd)
{
	struct mrcp_cc_params p = p100(true);
	void *s;

	p.disable_qa = true;
	s = nscc_new(&p);
	for (int i = 0; i < 5; i++)
		nack(s, PKT, T0 + 10); /* 204320 */
	sack_pen(s, T0 + 100, 40000, 127, false);   /* saves 204320, -39687 */
	ASSERT_U64_EQ(cwnd(s), 204320 - 39687);
	sack_pen(s, T0 + 101, 40000, 32, false);    /* -10000 */
	ASSERT_U64_EQ(cwnd(s), 204320 - 39687 - 10000);
	sack_pen(s, T0 + 102, 0, 0, true);          /* r_c */
	ASSERT_U64_EQ(cwnd(s), 204320);
	ASSERT_U64_EQ(st(s).pen_events, 1);
	/* a second r_c without a penalty in between changes nothing */
	for (int i = 0; i < 3; i++)
		nack(s, PKT, T0 + 103);
	sack_pen(s, T0 + 104, 0, 0, true);
	ASSERT_U64_EQ(cwnd(s), 204320 - 3 * PKT);
}

TEST(cc_nscc, apply_penalty__disable_pen_ignores_pen_and_r_c)
{
	struct mrcp_cc_params p = p100(true);
	void *s;

	p.disable_pen = true;
	s = nscc_new(&p);
	for (int i = 0; i < 10; i++)
		sack_pen(s, T0 + 100 + i, 22500, 64, false);
	ASSERT_U64_EQ(cwnd(s), MAXW);
	ASSERT_U64_EQ(st(s).pen_events, 0);
}

/* ---- lower_base_rtt / take_rtt_sample ----------------------------------- */

TEST(cc_nscc, lower_base_rtt__smaller_sample_lowers_window_and_target_keeps_sa)
{
	struct mrcp_cc_params p = p100(false);
	void *s = nscc_new(&p);
	struct mrcp_cc_stats o;

	sack(s, T0 + 100, 0, false, 8000);
	o = st(s);
	/* BDP = 12.5 GB/s x 8 us = 100000 B and the target follow the
	 * sample; sa and the adjust period stay those of the configured 12 us
	 * (sa = 1, D66), sb = 8000/12000 */
	ASSERT_U64_EQ(o.base_rtt_ns, 8000);
	ASSERT_U64_EQ(o.target_qdelay_ns, 8000);
	ASSERT_U64_EQ(o.max_cwnd, 150000);
	ASSERT_U64_EQ(o.cwnd, 150000);
	ASSERT_DBL_NEAR(o.alpha, 4.0 * (2.0 / 3) * 4096.0 / 8000.0, 1e-9);
	ASSERT_DBL_NEAR(o.fi, 5.0 * 4096.0, 1e-6);
	ASSERT_DBL_NEAR(o.eta, 0.15 * 4096.0, 1e-9);
	ASSERT_DBL_NEAR(o.fi_scale, 0.25, 1e-9);
	ASSERT_U64_EQ(o.adjust_period_ns, 12000);
	ASSERT_U64_EQ(o.qa_threshold_ns, 32000);
	/* a larger sample never raises it */
	sack(s, T0 + 200, 0, false, 20000);
	ASSERT_U64_EQ(st(s).base_rtt_ns, 8000);
	ASSERT_U64_EQ(st(s).max_cwnd, 150000);
}

TEST(cc_nscc, lower_base_rtt__keeps_overrides)
{
	struct mrcp_cc_params p = p100(true);
	void *s;
	struct mrcp_cc_stats o;

	p.max_cwnd = 100000;
	p.target_qdelay_ns = 5000;
	s = nscc_new(&p);
	sack(s, T0 + 100, 0, false, 6000);
	o = st(s);
	ASSERT_U64_EQ(o.base_rtt_ns, 6000);
	ASSERT_U64_EQ(o.max_cwnd, 100000);
	ASSERT_U64_EQ(o.target_qdelay_ns, 5000);
	ASSERT_DBL_NEAR(o.eta, 0.15 * 4096.0, 1e-9); /* sa of the configured 12 us: 1 */
}

TEST(cc_nscc, take_rtt_sample__unmarked_high_delay_enters_as_quarter_base_rtt)
{
	struct mrcp_cc_params p = p100(true);
	void *s = nscc_new(&p);

	/* marked: the raw delay, 20000 / 80 = 250 ns */
	sack(s, T0 + 100, 0, true, BASE + 20000);
	ASSERT_U64_EQ(st(s).avg_delay_ns, 250);
	/* unmarked above target: 3000 ns, not 20000:
	 * (250 x 79 + 3000) / 80 = 284.375 (497 if taken raw) */
	sack(s, T0 + 101, 0, false, BASE + 20000);
	ASSERT_U64_EQ(st(s).avg_delay_ns, 284);
	/* unmarked below target: raw, (284.375 x 79 + 8000) / 80 = 380.8 */
	sack(s, T0 + 102, 0, false, BASE + 8000);
	ASSERT_U64_EQ(st(s).avg_delay_ns, 381);
	ASSERT_U64_EQ(st(s).md_events, 0); /* avg never passed target */
}

/* ---- nscc_on_sack: inputs ---------------------------------------------- */

TEST(cc_nscc, nscc_on_sack__invalid_rtt_ignored_for_delay_but_bytes_count)
{
	void *s = nscc_below_max();
	struct mrcp_cc_sack k = {
		.newly_rcvd = 40000, .rtt_valid = false, .rtt_ns = 100,
	};

	sent(200000);
	k.inflight = leave(40000);
	mrcp_cc_nscc.on_sack(s, &k, T0 + 100);
	ASSERT_U64_EQ(st(s).base_rtt_ns, BASE);
	ASSERT_U64_EQ(st(s).avg_delay_ns, 0);
	/* the table ran on avg_delay = 0: alpha x 40000 x 9000 / 142280 */
	ASSERT_U64_EQ(cwnd(s), 142280 + 3455);
}

TEST(cc_nscc, nscc_on_sack__window_moves_by_newly_rcvd_whatever_left_flight)
{
	struct mrcp_cc_params p = p100(true);
	void *a, *b;
	struct mrcp_cc_sack k = {
		.newly_rcvd = 40000, .rtt_valid = true, .rtt_ns = BASE + 3000,
	};
	static union {
		max_align_t align;
		unsigned char bytes[4096];
	} other;

	/* rcvd_bytes counts duplicates and copies already out of inflight
	 * (D19): only the engine knows what left flight, and the window
	 * follows newly_rcvd alone. Two QPCCs, the same SACK, different
	 * inflight: the same window. */
	p.disable_qa = true;
	a = nscc_new(&p);
	ASSERT_EQ(0, mrcp_cc_nscc.init(other.bytes, &p, T0));
	b = other.bytes;
	for (int i = 0; i < 20; i++) {
		mrcp_cc_nscc.on_nack(a, PKT, 0, T0 + 10);
		mrcp_cc_nscc.on_nack(b, PKT, 0, T0 + 10);
	}
	k.inflight = 3 * PKT;
	mrcp_cc_nscc.on_sack(a, &k, T0 + 100);
	k.inflight = 0;
	mrcp_cc_nscc.on_sack(b, &k, T0 + 100);
	ASSERT_U64_EQ(cwnd(a), cwnd(b));
	ASSERT_GT(cwnd(a), 142280);
}

/* ---- quick_adapt (§6.3) ------------------------------------------------- */

/* Window [T0, T0 + 21000): 5000 + @last B acknowledged and one NACK. */
static void *qa_scenario(bool disable_qa, uint64_t first, uint64_t last)
{
	struct mrcp_cc_params p = p100(true);
	void *s;

	p.disable_qa = disable_qa;
	p.adjust_period_ns = 1000000000; /* keep eta out of the numbers */
	s = nscc_new(&p);
	sent(50 * PKT);       /* inflight 206800 */
	sack(s, T0 + 1000, first, false, BASE + 3000);
	nack(s, PKT, T0 + 2000);      /* window not over: -PKT */
	ASSERT_U64_EQ(cwnd(s), MAXW - PKT);
	sack(s, T0 + 21000, last, false, BASE + 3000); /* the window ends */
	return s;
}

TEST(cc_nscc, quick_adapt__nack_and_few_acked_bytes_set_cwnd_to_acked)
{
	void *s = qa_scenario(false, 5000, 15000);

	ASSERT_U64_EQ(cwnd(s), 20000);
	ASSERT_U64_EQ(st(s).qa_events, 1);
}

TEST(cc_nscc, quick_adapt__cwnd_floor_is_min_cwnd)
{
	void *s = qa_scenario(false, 1000, 1000);

	ASSERT_U64_EQ(cwnd(s), PKT);
	ASSERT_U64_EQ(st(s).qa_events, 1);
}

TEST(cc_nscc, quick_adapt__never_raises_cwnd)
{
	struct mrcp_cc_params p = p100(true);
	void *s;

	p.adjust_period_ns = 1000000000;
	s = nscc_new(&p);
	timeout(s, 0, T0 + 21000); /* starved window: cut */
	ASSERT_U64_EQ(cwnd(s), PKT);
	/* the next window acks 20000 B (sent before the cut) and sees a
	 * NACK: quick adapt fires but does not lift cwnd to 20000 */
	sack(s, T0 + 22000, 20000, true, BASE + 3000);
	nack(s, PKT, T0 + 23000);
	sack(s, T0 + 42000, 0, true, BASE + 3000);
	ASSERT_U64_EQ(st(s).qa_events, 2);
	ASSERT_U64_EQ(cwnd(s), PKT);
}

TEST(cc_nscc, quick_adapt__then_ignores_decreases_for_inflight_bytes)
{
	void *s = qa_scenario(false, 5000, 15000);
	uint64_t left = 50 * PKT - 5000 - PKT - 15000; /* inflight at the cut */
	struct mrcp_cc_sack k = {
		.newly_rcvd = 0, .ecn = true, .rtt_valid = true, .rtt_ns = BASE + 1000,
	};

	ASSERT_U64_EQ(infl, left);
	nack(s, PKT, T0 + 21100);    /* ignored */
	ASSERT_U64_EQ(cwnd(s), 20000);
	loss(s, PKT, T0 + 21150);    /* ignored */
	ASSERT_U64_EQ(cwnd(s), 20000);
	/* the rest of those bytes come back, marked below target: no change */
	k.newly_rcvd = left - 2 * PKT - 1;
	k.inflight = leave(k.newly_rcvd);
	mrcp_cc_nscc.on_sack(s, &k, T0 + 21200);
	ASSERT_U64_EQ(cwnd(s), 20000);
	nack(s, 1, T0 + 21250);      /* the last ignored byte */
	ASSERT_U64_EQ(cwnd(s), 20000);
	nack(s, PKT, T0 + 21300);    /* counts again */
	ASSERT_U64_EQ(cwnd(s), 20000 - PKT);
	ASSERT_U64_EQ(st(s).qa_events, 1);
}

TEST(cc_nscc, quick_adapt__then_ignores_marks_for_inflight_bytes)
{
	void *s = qa_scenario(false, 5000, 15000);
	uint64_t left = 50 * PKT - 5000 - PKT - 15000;

	/* marked at 1 ms: avg 12574 ns > target, but these bytes are ignored */
	sack(s, T0 + 21100, 0, true, BASE + 1000000);
	ASSERT_U64_EQ(cwnd(s), 20000);
	ASSERT_U64_EQ(st(s).md_events, 0);
	sack(s, T0 + 21200, left, true, BASE + 3000); /* the rest returns */
	ASSERT_U64_EQ(cwnd(s), 20000);
	/* avg 24798 ns: 1 - 0.8 x 15798 / 24798 = 0.49, capped at 0.5 */
	sack(s, T0 + 21300, 0, true, BASE + 1000000);
	ASSERT_U64_EQ(st(s).avg_delay_ns, 24798);
	ASSERT_U64_EQ(cwnd(s), 10000);
	ASSERT_U64_EQ(st(s).md_events, 1);
}

TEST(cc_nscc, quick_adapt__not_when_acked_reaches_max_cwnd_shr_gate)
{
	/* 28125 = 225000 >> 3 acknowledged: the window was not starved */
	void *s = qa_scenario(false, 13125, 15000);

	ASSERT_U64_EQ(cwnd(s), MAXW - PKT);
	ASSERT_U64_EQ(st(s).qa_events, 0);
	/* the next window started at T0 + 21000; a NACK now just subtracts */
	nack(s, PKT, T0 + 21100);
	ASSERT_U64_EQ(cwnd(s), MAXW - 2 * PKT);
	/* one byte less is starved */
	s = qa_scenario(false, 13124, 15000);
	ASSERT_U64_EQ(cwnd(s), 28124);
	ASSERT_U64_EQ(st(s).qa_events, 1);
}

TEST(cc_nscc, quick_adapt__not_without_a_signal_in_the_window)
{
	struct mrcp_cc_params p = p100(true);
	void *s;

	p.adjust_period_ns = 1000000000;
	s = nscc_new(&p);
	sack(s, T0 + 1000, 5000, false, BASE + 3000);
	sack(s, T0 + 21000, 5000, false, BASE + 3000);
	ASSERT_U64_EQ(cwnd(s), MAXW);
	ASSERT_U64_EQ(st(s).qa_events, 0);

	/* Marked below target, so nothing but NACKs moves cwnd. Window 2
	 * [21000, 42000) has a NACK but acks 30000 B: no cut. Window 3 acks
	 * little, but its NACK-free history must not borrow window 2's. */
	sack(s, T0 + 22000, 30000, true, BASE + 3000);
	nack(s, PKT, T0 + 23000);
	sack(s, T0 + 42000, 0, true, BASE + 3000);
	ASSERT_U64_EQ(cwnd(s), MAXW - PKT);
	sack(s, T0 + 43000, 1000, true, BASE + 3000);
	sack(s, T0 + 63000, 1000, true, BASE + 3000);
	ASSERT_U64_EQ(cwnd(s), MAXW - PKT);
	ASSERT_U64_EQ(st(s).qa_events, 0);
	/* window 4 [63000, 84000) has a NACK and acks nothing: it fires */
	nack(s, PKT, T0 + 64000);
	sack(s, T0 + 84000, 0, true, BASE + 3000);
	ASSERT_U64_EQ(st(s).qa_events, 1);
	ASSERT_U64_EQ(cwnd(s), PKT);
}

TEST(cc_nscc, quick_adapt__disable_qa_only_subtracts)
{
	void *s = qa_scenario(true, 5000, 15000);

	ASSERT_U64_EQ(cwnd(s), MAXW - PKT);
	ASSERT_U64_EQ(st(s).qa_events, 0);
	nack(s, PKT, T0 + 21100);
	ASSERT_U64_EQ(cwnd(s), MAXW - 2 * PKT);
}

TEST(cc_nscc, quick_adapt__high_delay_is_a_signal_only_without_trimming)
{
	struct mrcp_cc_params p = p100(false);
	void *s;

	/* no trimming: qa_threshold 48000 ns, window 24000 ns */
	p.adjust_period_ns = 1000000000;
	s = nscc_new(&p);
	sack(s, T0 + 1000, 5000, false, BASE + 50000);
	ASSERT_U64_EQ(cwnd(s), MAXW);
	sack(s, T0 + 24000, 5000, false, BASE);
	ASSERT_U64_EQ(cwnd(s), 10000);
	ASSERT_U64_EQ(st(s).qa_events, 1);

	/* trimming: the same delay is no signal */
	p = p100(true);
	p.adjust_period_ns = 1000000000;
	s = nscc_new(&p);
	sack(s, T0 + 1000, 5000, false, BASE + 50000);
	sack(s, T0 + 21000, 5000, false, BASE);
	ASSERT_U64_EQ(cwnd(s), MAXW);
	ASSERT_U64_EQ(st(s).qa_events, 0);
}

/* ---- the decision table (§6.2) ------------------------------------------ */

TEST(cc_nscc, proportional_increase__no_ecn_below_target)
{
	void *s = nscc_below_max();

	/* delay 3000: inc = alpha x 40000 x 6000 = 327680000 B^2; 40000 B
	 * passes adjust_bytes, so cwnd += 327680000 / 142280 = 2303.07 */
	sack(s, T0 + 100, 40000, false, BASE + 3000);
	ASSERT_U64_EQ(cwnd(s), 142280 + 2303);
	ASSERT_U64_EQ(st(s).fast_inc_events, 0);
}

TEST(cc_nscc, proportional_increase__waits_for_adjust_bytes)
{
	void *s = nscc_below_max();

	/* 20000 + 13088 = 33088 B is not more than adjust_bytes: nothing yet */
	sack(s, T0 + 100, 20000, false, BASE + 3000);
	sack(s, T0 + 101, 13088, false, BASE + 3000);
	ASSERT_U64_EQ(cwnd(s), 142280);
	/* one more byte applies all three: alpha x 33089 x 6000 / 142280 */
	sack(s, T0 + 102, 1, false, BASE + 3000);
	ASSERT_U64_EQ(cwnd(s), 142280 + 1905);
}

TEST(cc_nscc, proportional_increase__fast_increase_after_a_full_cwnd_below_1us)
{
	void *s = nscc_below_max();

	/* delay 0: proportional while fewer than cwnd bytes have passed */
	sack(s, T0 + 100, 40000, false, BASE);
	ASSERT_U64_EQ(cwnd(s), 145735);
	sack(s, T0 + 101, 40000, false, BASE);
	ASSERT_U64_EQ(cwnd(s), 149108);
	sack(s, T0 + 102, 40000, false, BASE);
	ASSERT_U64_EQ(cwnd(s), 152404);
	ASSERT_U64_EQ(st(s).fast_inc_events, 0);
	/* 160000 B > cwnd: cwnd += 40000 x fi_scale, no proportional term */
	sack(s, T0 + 103, 40000, false, BASE);
	ASSERT_U64_EQ(cwnd(s), 152404 + 10000);
	sack(s, T0 + 104, 40000, false, BASE);
	ASSERT_U64_EQ(cwnd(s), 172404);
	ASSERT_U64_EQ(st(s).fast_inc_events, 2);
	/* 2 us of delay ends it: back to proportional (alpha x 40000 x 7000) */
	sack(s, T0 + 105, 40000, false, BASE + 2000);
	ASSERT_U64_EQ(cwnd(s), 174621);
	/* and the count starts again */
	sack(s, T0 + 106, 40000, false, BASE);
	ASSERT_U64_EQ(cwnd(s), 177436);
	ASSERT_U64_EQ(st(s).fast_inc_events, 2);
}

TEST(cc_nscc, decide__fair_increase_at_or_above_target)
{
	void *s = nscc_below_max();

	/* delay == target: fair, inc = 20480 x 40000; cwnd += 5757.66 */
	sack(s, T0 + 100, 40000, false, BASE + 9000);
	ASSERT_U64_EQ(cwnd(s), 142280 + 5758);
	/* far above target: the same bytes give the same increase */
	sack(s, T0 + 101, 40000, false, BASE + 500000);
	ASSERT_U64_EQ(cwnd(s), 148038 + 5534); /* 819200000 / 148038 */
	ASSERT_U64_EQ(st(s).md_events, 0);
}

TEST(cc_nscc, decide__ecn_below_target_changes_nothing)
{
	void *s = nscc_below_max();

	sack(s, T0 + 100, 40000, true, BASE + 3000);
	sack(s, T0 + 101, 40000, true, BASE);
	ASSERT_U64_EQ(cwnd(s), 142280);
	ASSERT_U64_EQ(st(s).md_events, 0);
	ASSERT_U64_EQ(st(s).fast_inc_events, 0);
	/* nothing was accumulated for later either */
	sack(s, T0 + 102, 40000, false, BASE + 3000);
	ASSERT_U64_EQ(cwnd(s), 142280 + 2303);
}

TEST(cc_nscc, multiplicative_decrease__capped_and_once_per_base_rtt)
{
	struct mrcp_cc_params p = p100(true);
	void *s;

	p.disable_qa = true;
	p.adjust_period_ns = 1000000000; /* keep eta out */
	s = nscc_new(&p);
	/* marked, delay 1 ms: avg 12500 ns > target; factor
	 * 1 - 0.8 x 3500 / 12500 = 0.776 */
	sack(s, T0 + 100, 0, true, BASE + 1000000);
	ASSERT_U64_EQ(st(s).avg_delay_ns, 12500);
	ASSERT_U64_EQ(cwnd(s), 174600);
	ASSERT_U64_EQ(st(s).md_events, 1);
	/* within base_rtt of that: no further decrease */
	sack(s, T0 + 101, 0, true, BASE + 1000000);
	sack(s, T0 + 100 + BASE - 1, 0, true, BASE + 1000000);
	ASSERT_U64_EQ(cwnd(s), 174600);
	ASSERT_U64_EQ(st(s).md_events, 1);
	/* one base_rtt later: avg ~49070 ns would give 0.347, capped at 0.5 */
	sack(s, T0 + 100 + BASE, 0, true, BASE + 1000000);
	ASSERT_U64_EQ(st(s).avg_delay_ns, 49070);
	ASSERT_U64_EQ(cwnd(s), 87300);
	ASSERT_U64_EQ(st(s).md_events, 2);
}

TEST(cc_nscc, multiplicative_decrease__needs_avg_delay_above_target)
{
	struct mrcp_cc_params p = p100(true);
	void *s = nscc_new(&p);

	/* the sample is above target but the average (250 ns) is not */
	sack(s, T0 + 100, 0, true, BASE + 20000);
	ASSERT_U64_EQ(cwnd(s), MAXW);
	ASSERT_U64_EQ(st(s).md_events, 0);
}

TEST(cc_nscc, multiplicative_decrease__max_md_jump_override)
{
	struct mrcp_cc_params p = p100(true);
	void *s;

	p.disable_qa = true;
	p.max_md_jump = 0.1;
	p.adjust_period_ns = 1000000000;
	s = nscc_new(&p);
	sack(s, T0 + 100, 0, true, BASE + 1000000); /* 0.776 capped at 0.9 */
	ASSERT_U64_EQ(cwnd(s), 202500);
}

/* ---- adjust (§6.3 step 3) ----------------------------------------------- */

TEST(cc_nscc, adjust__eta_once_per_adjust_period)
{
	void *s = nscc_below_max();

	/* no bytes, so inc stays 0: only eta (614.4 B) moves cwnd */
	sack(s, T0 + BASE - 1, 0, false, BASE + 9000);
	ASSERT_U64_EQ(cwnd(s), 142280);
	sack(s, T0 + BASE, 0, false, BASE + 9000);
	ASSERT_U64_EQ(cwnd(s), 142280 + 614);
	sack(s, T0 + BASE + 1, 0, false, BASE + 9000);
	ASSERT_U64_EQ(cwnd(s), 142280 + 614);
	sack(s, T0 + 2 * BASE, 0, false, BASE + 9000);
	ASSERT_U64_EQ(cwnd(s), 142280 + 1228); /* 614.4 rounds to 614 per step */
}

/* ---- clamping (§6.3 step 4) --------------------------------------------- */

TEST(cc_nscc, nscc_on_sack__clamps_to_max_cwnd)
{
	struct mrcp_cc_params p = p100(true);
	void *s = nscc_new(&p);

	for (int i = 0; i < 10; i++)
		sack(s, T0 + 100 + i * BASE, 40000, false, BASE);
	ASSERT_U64_EQ(cwnd(s), MAXW);
}

TEST(cc_nscc, nscc_on_nack__clamps_to_min_cwnd)
{
	struct mrcp_cc_params p = p100(true);
	void *s;

	p.disable_qa = true;
	s = nscc_new(&p);
	for (int i = 0; i < 60; i++)
		nack(s, PKT, T0 + 100);
	ASSERT_U64_EQ(cwnd(s), PKT);
}

/* ---- nscc_on_nack / on_loss / on_timeout -------------------------------- */

TEST(cc_nscc, nscc_on_nack__cuts_the_packet)
{
	struct mrcp_cc_params p = p100(true);
	void *s;

	p.disable_qa = true;
	s = nscc_new(&p);
	sent(10000);
	nack(s, 1040, T0 + 100); /* a short last packet */
	ASSERT_U64_EQ(cwnd(s), MAXW - 1040);
	nack(s, PKT, T0 + 200);
	ASSERT_U64_EQ(cwnd(s), MAXW - 1040 - PKT);
}

TEST(cc_nscc, nscc_on_loss__cuts_one_packet)
{
	struct mrcp_cc_params p = p100(true);
	void *s;

	p.disable_qa = true;
	s = nscc_new(&p);
	sent(10000);
	loss(s, PKT, T0 + 100);
	ASSERT_U64_EQ(cwnd(s), MAXW - PKT);
}

TEST(cc_nscc, nscc_on_timeout__cuts_one_nominal_packet)
{
	struct mrcp_cc_params p = p100(true);
	void *s;

	p.disable_qa = true;
	s = nscc_new(&p);
	sent(100000);
	timeout(s, 30000, T0 + 100);
	ASSERT_U64_EQ(cwnd(s), MAXW - PKT);
	timeout(s, 50000, T0 + 200);
	ASSERT_U64_EQ(cwnd(s), MAXW - 2 * PKT);
}

TEST(cc_nscc, nscc_on_timeout__runs_quick_adapt)
{
	struct mrcp_cc_params p = p100(true);
	void *s = nscc_new(&p);

	sent(100000);
	timeout(s, 100000, T0 + 21000); /* nothing acked */
	ASSERT_U64_EQ(cwnd(s), PKT);
	ASSERT_U64_EQ(st(s).qa_events, 1);
}

/* ---- nscc_cwnd ---------------------------------------------------------- */

TEST(cc_nscc, nscc_cwnd__is_the_window_stats_report)
{
	struct mrcp_cc_params p = p100(true);
	void *s;

	p.min_cwnd = 1000;
	p.disable_qa = true;
	s = nscc_new(&p);
	ASSERT_U64_EQ(mrcp_cc_nscc.cwnd(s), MAXW);
	for (int i = 0; i < 60; i++)
		nack(s, PKT, T0 + 100);
	/* a window below one packet; mrcp_cc_window_open() (test_cc.c) still
	 * lets one packet go at a time */
	ASSERT_U64_EQ(mrcp_cc_nscc.cwnd(s), 1000);
	ASSERT_U64_EQ(cwnd(s), 1000);
}

TEST(cc_nscc, mrcp_cc_nscc__ops_table)
{
	ASSERT_STREQ(mrcp_cc_nscc.name, "nscc");
	ASSERT_TRUE(mrcp_cc_nscc.release == NULL);
	ASSERT_TRUE(mrcp_cc_nscc.on_sack != NULL && mrcp_cc_nscc.on_nack != NULL &&
		    mrcp_cc_nscc.on_loss != NULL && mrcp_cc_nscc.on_timeout != NULL);
}
