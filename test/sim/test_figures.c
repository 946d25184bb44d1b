/* test_figures.c - figures the engine issue asks for, measured in virtual
 * time over the test fabric and printed ("figure: name value unit"); the
 * assertions are deliberately generous bounds, the figures go to
 * docs/benchmarks.md.
 *
 * Setup: 4 planes x 25 Gb/s = 100 Gb/s per node, 4 ECMP paths per plane,
 * 5 us one-way propagation (about 12 us RTT with serialisation), base_rtt
 * 12 us, timeout 8 (RTO 262 us), one QP streaming 64 KiB Writes. */
#include <errno.h>
#include <stdlib.h>

#include "mrcp_test.h"
#include "scenario.h"

#define BUCKET_NS 10000ull

static void base_cfg(struct sc_cfg *c, unsigned msgs)
{
	sc_cfg_defaults(c);
	c->planes = 4;
	c->paths = 4;
	c->port_bps = 25000000000ull;
	c->delay_ns = 5000;
	c->base_rtt_ns = 12000;
	c->timeout = 8;
	c->msgs = msgs;
}

TEST(figures, failover__path_blackhole_at_100g_12us)
{
	struct sc_cfg c;
	struct sc s;
	struct fabric_action a;
	uint64_t t_fail = 1000000, prev, base_bytes = 0;
	unsigned nb = 0, recovered_at = 0, zero_run = 0, max_zero_run = 0;
	uint64_t bucket[1200];

	base_cfg(&c, 600);
	c.name = "failover";
	sc_setup(&s, &c);
	memset(&a, 0, sizeof(a));
	a.op = FABRIC_ACT_BLACKHOLE;
	a.sel = (struct fabric_sel){.src = 0, .dst = 1, .plane = 1, .path = 0};
	a.on = true;
	ASSERT_EQ(0, fabric_schedule(s.f, t_fail, &a));
	prev = 0;
	while (nb < 1200) {
		sc_run_for(&s, BUCKET_NS);
		uint64_t now = sc_rx_bytes(&s, 1);
		bucket[nb++] = now - prev;
		prev = now;
		if (s.q[0].next_wc >= c.msgs)
			break;
	}
	/* goodput before the failure: buckets in [0.5 ms, 1 ms) */
	for (unsigned i = 50; i < 100; i++)
		base_bytes += bucket[i];
	double base_rate = (double)base_bytes / 50.0; /* bytes per bucket */
	/* the longest run of empty buckets after the failure */
	for (unsigned i = 100; i < nb; i++) {
		if (bucket[i] == 0) {
			zero_run++;
			if (zero_run > max_zero_run)
				max_zero_run = zero_run;
		} else {
			zero_run = 0;
		}
	}
	/* recovery: the end of the last 30 us window (3 buckets, which
	 * smooths the one-packet granularity of a bucket) whose goodput is
	 * below 90 % of the pre-failure rate; the dip: the lowest window */
	double dip = 1.0;
	for (unsigned i = 100; i + 3 <= nb && i < 100 + 200; i++) {
		double w = (double)(bucket[i] + bucket[i + 1] + bucket[i + 2]) / 3.0;
		if (w / base_rate < dip)
			dip = w / base_rate;
		if (w < 0.9 * base_rate)
			recovered_at = i + 3;
	}
	uint64_t recovery_ns = recovered_at == 0 ? 0 : (uint64_t)recovered_at * BUCKET_NS - t_fail;
	mrcp_test_figure("failover.goodput_before", base_rate * 8.0 / (double)BUCKET_NS, "Gb/s");
	mrcp_test_figure("failover.time_to_90pct", (double)recovery_ns / 1000.0, "us");
	mrcp_test_figure("failover.lowest_30us_goodput", dip * 100.0, "% of before");
	mrcp_test_figure("failover.longest_stall", (double)max_zero_run * BUCKET_NS / 1000.0, "us");
	mrcp_test_figure("failover.losses", (double)SC_SUM(&s, 0, losses), "pkts");
	mrcp_test_figure("failover.rto_rounds", (double)SC_SUM(&s, 0, rto_rounds), "rounds");
	ASSERT_EQ(0, sc_run(&s));
	sc_verify(&s);
	/* with 4 planes, no stall longer than 2 x the base RTO (2 x 262 us) */
	ASSERT_LE((uint64_t)max_zero_run * BUCKET_NS, 2 * 262144ull);
	ASSERT_LT(recovery_ns, 5000000ull);
	ASSERT_TRUE(base_rate * 8.0 / (double)BUCKET_NS > 50.0); /* the link was busy */
	sc_teardown(&s);
}

static double transfer_gbps(double loss, uint64_t seed)
{
	struct sc_cfg c;
	struct sc s;
	double gbps;

	base_cfg(&c, 256);
	c.name = "goodput";
	c.seed = seed;
	c.imp.loss = loss;
	sc_setup(&s, &c);
	ASSERT_EQ(0, sc_run(&s));
	sc_verify(&s);
	gbps = (double)c.msgs * c.msg_size * 8.0 / (double)fabric_now(s.f);
	if (getenv("SC_DEBUG")) {
		struct mrcp_qp_info qi;
		mrcp_qp_info(s.e[0], s.q[0].qpn_tx, &qi);
		fprintf(stderr, "  loss %.3f: losses %llu fast %llu rto %llu stall_cwnd %llu stall_ev %llu stall_win %llu cwnd %llu min_rtt? sacks %llu\n", loss,
			(unsigned long long)qi.c.losses, (unsigned long long)qi.c.rtx_fast, (unsigned long long)qi.c.rtx_rto,
			(unsigned long long)qi.c.stalls_cwnd, (unsigned long long)qi.c.stalls_no_ev, (unsigned long long)qi.c.stalls_window,
			(unsigned long long)qi.cc.cwnd, (unsigned long long)qi.c.sack_rx);
	}
	sc_teardown(&s);
	return gbps;
}

TEST(figures, goodput__one_percent_loss_vs_lossless)
{
	double clean = transfer_gbps(0, 21);
	double lossy = transfer_gbps(0.01, 21);

	mrcp_test_figure("goodput.lossless", clean, "Gb/s");
	mrcp_test_figure("goodput.loss_1pct", lossy, "Gb/s");
	mrcp_test_figure("goodput.ratio", lossy / clean, "x");
	ASSERT_TRUE(clean > 50.0);
	ASSERT_TRUE(lossy / clean > 0.5);
}
