/* test_prom_format.c - prom_format.c: the text exposition of a snapshot
 * (HELP and TYPE before every family's samples, counters ending in _total,
 * label values and help texts escaped, ns as exact seconds, the probe
 * histogram cumulative with +Inf, _sum and _count), the sums of several
 * workers, and -ENOSPC for a buffer too small. No DPDK. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mrcp_test.h"
#include "prom_format.h"

#define BUF (256 * 1024)

static struct mrcd_prom_snapshot *snap(void)
{
	struct mrcd_prom_snapshot *s = calloc(1, sizeof(*s));

	snprintf(s->version, sizeof(s->version), "0.1.0");
	s->n_ports = 2;
	snprintf(s->ports[0].name, sizeof(s->ports[0].name), "plane1");
	snprintf(s->ports[1].name, sizeof(s->ports[1].name), "plane2");
	s->ports[0].link_up = true;
	s->ports[0].admin_up = true;
	s->ports[1].admin_up = true;
	s->ports[0].c.rx_pkts = 7;
	s->ports[1].c.tx_bytes = 123456789012ull;
	s->ports[0].c.rx_bad_icrc = 2;
	s->ports[0].c.rx_not_mine = 3;
	s->ports[1].c.tx_no_neigh = 4;
	s->ports[1].c.fault_delayq_full = 1;
	s->ports[1].ev_state[MRCP_EV_GOOD] = 30;
	s->ports[1].ev_state[MRCP_EV_ASSUMED_BAD] = 2;
	s->n_workers = 2;
	s->workers[0].c.loops = 4;
	s->workers[0].c.busy_loops = 1;
	s->workers[0].c.sleep_ns = 1500000000ull;
	s->workers[1].c.stall_max_ns = 2000;
	s->workers[1].uptime_ns = 3000000000ull;
	s->qps = 3;
	s->clients = 1;
	s->eng.rx_pkts = 99;
	s->qp.qps = 5;
	s->qp.qp.rtx_fast = 11;
	s->qp.qp.rtx_rto = 12;
	s->qp.qp.rto_rounds = 13;
	s->qp.qp.losses_undone = 14;
	s->qp.ev.transitions = 15;
	return s;
}

static char *format(const struct mrcd_prom_snapshot *s)
{
	char *b = malloc(BUF);
	int n = mrcd_prom_format(s, b, BUF);

	ASSERT_GT(n, 0);
	ASSERT_EQ((size_t)n, strlen(b));
	return b;
}

/* @text has the line @line, whole. */
static bool has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; (p = strstr(p, line)) != NULL; p++)
		if ((p == text || p[-1] == '\n') && p[n] == '\n')
			return true;
	return false;
}

#define ASSERT_LINE(text, line)                                                            \
	do {                                                                               \
		if (!has_line(text, line))                                                 \
			mrcp_test_fail(__FILE__, __LINE__, "no line \"%s\"", line);        \
	} while (0)

TEST(prom_format, format__values_of_every_kind)
{
	struct mrcd_prom_snapshot *s = snap();
	char *t = format(s);

	ASSERT_LINE(t, "mrcd_info{version=\"0.1.0\"} 1");
	ASSERT_LINE(t, "mrcd_port_rx_pkts_total{port=\"plane1\",plane=\"1\"} 7");
	ASSERT_LINE(t, "mrcd_port_tx_bytes_total{port=\"plane2\",plane=\"2\"} 123456789012");
	ASSERT_LINE(t, "mrcd_port_rx_bad_icrc_total{port=\"plane1\",plane=\"1\"} 2");
	ASSERT_LINE(t, "mrcd_port_rx_dropped_total{port=\"plane1\",plane=\"1\"} 5");
	ASSERT_LINE(t, "mrcd_port_tx_dropped_total{port=\"plane2\",plane=\"2\"} 5");
	ASSERT_LINE(t, "mrcd_port_link_up{port=\"plane1\",plane=\"1\"} 1");
	ASSERT_LINE(t, "mrcd_port_link_up{port=\"plane2\",plane=\"2\"} 0");
	ASSERT_LINE(t, "mrcd_port_admin_up{port=\"plane2\",plane=\"2\"} 1");
	ASSERT_LINE(t, "mrcd_plane_evs{plane=\"2\",state=\"GOOD\"} 30");
	ASSERT_LINE(t, "mrcd_plane_evs{plane=\"2\",state=\"ASSUMED_BAD\"} 2");
	ASSERT_LINE(t, "mrcd_plane_evs{plane=\"1\",state=\"DENIED\"} 0");
	ASSERT_LINE(t, "mrcd_qps 3");
	ASSERT_LINE(t, "mrcd_client_sessions 1");
	ASSERT_LINE(t, "mrcd_qp_retransmits_total{kind=\"fast\"} 11");
	ASSERT_LINE(t, "mrcd_qp_retransmits_total{kind=\"rto\"} 12");
	ASSERT_LINE(t, "mrcd_qp_retransmits_total{kind=\"port_down\"} 0");
	ASSERT_LINE(t, "mrcd_qp_rto_rounds_total 13");
	ASSERT_LINE(t, "mrcd_qp_losses_undone_total 14");
	ASSERT_LINE(t, "mrcd_qp_rtx_spurious_total 0");
	ASSERT_TRUE(strstr(t, "mrcd_qp_rtx_fast") == NULL); /* only as a kind */
	ASSERT_LINE(t, "mrcd_ev_transitions_total 15");
	ASSERT_LINE(t, "mrcd_engine_rx_pkts_total 99");
	ASSERT_LINE(t, "mrcd_worker_loops_total{worker=\"0\"} 4");
	ASSERT_LINE(t, "mrcd_worker_sleep_seconds_total{worker=\"0\"} 1.5");
	ASSERT_LINE(t, "# TYPE mrcd_worker_stall_max_seconds gauge");
	ASSERT_LINE(t, "mrcd_worker_stall_max_seconds{worker=\"1\"} 0.000002");
	ASSERT_LINE(t, "mrcd_worker_uptime_seconds{worker=\"1\"} 3");
	ASSERT_LINE(t, "mrcd_worker_busy_ratio{worker=\"0\"} 0.250000");
	ASSERT_LINE(t, "mrcd_worker_busy_ratio{worker=\"1\"} 0.000000");
	ASSERT_LINE(t, "# TYPE mrcd_port_rx_pkts_total counter");
	ASSERT_LINE(t, "# HELP mrcd_port_rx_pkts_total frames received");
	free(t);
	free(s);
}

/* Every line is a HELP, a TYPE or a sample of the family the latest TYPE
 * named; every counter family ends in _total; every value is a number. */
TEST(prom_format, format__families_are_well_formed)
{
	struct mrcd_prom_snapshot *s = snap();
	char *t = format(s), *save = NULL, fam[128] = "", type[16] = "";
	unsigned samples = 0, families = 0;
	bool help_seen = false;

	ASSERT_EQ('\n', t[strlen(t) - 1]);
	for (char *l = strtok_r(t, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char name[128], *end;
		size_t n;

		if (strncmp(l, "# HELP ", 7) == 0) {
			ASSERT_FALSE(help_seen);
			help_seen = true;
			ASSERT_EQ(1, sscanf(l + 7, "%127s", fam));
			continue;
		}
		if (strncmp(l, "# TYPE ", 7) == 0) {
			ASSERT_TRUE(help_seen);
			help_seen = false;
			ASSERT_EQ(2, sscanf(l + 7, "%127s %15s", name, type));
			ASSERT_STREQ(fam, name);
			n = strlen(name);
			if (strcmp(type, "counter") == 0)
				ASSERT_TRUE(n > 6 && strcmp(name + n - 6, "_total") == 0);
			else
				ASSERT_TRUE(strcmp(type, "gauge") == 0 || strcmp(type, "histogram") == 0);
			families++;
			continue;
		}
		ASSERT_TRUE(l[0] != '#');
		n = strcspn(l, "{ ");
		snprintf(name, sizeof(name), "%.*s", (int)n, l);
		if (strcmp(type, "histogram") == 0) {
			size_t f = strlen(fam);

			ASSERT_TRUE(strncmp(name, fam, f) == 0);
			ASSERT_TRUE(strcmp(name + f, "_bucket") == 0 || strcmp(name + f, "_sum") == 0 ||
				    strcmp(name + f, "_count") == 0);
		} else {
			ASSERT_STREQ(fam, name);
		}
		end = strrchr(l, ' ');
		ASSERT_TRUE(end != NULL);
		strtod(end + 1, &end);
		ASSERT_EQ('\0', *end);
		samples++;
	}
	ASSERT_GT(families, 60u);
	ASSERT_GT(samples, families);
	free(t);
	free(s);
}

TEST(prom_format, format__label_values_and_help_escaped)
{
	struct mrcd_prom_snapshot *s = snap();
	char *t;

	snprintf(s->ports[0].name, sizeof(s->ports[0].name), "a\"b\\c\nd");
	snprintf(s->version, sizeof(s->version), "x\\y");
	t = format(s);
	if (getenv("PROM_FORMAT_DUMP") != NULL) { /* for prom_format_parse.py */
		FILE *f = fopen(getenv("PROM_FORMAT_DUMP"), "w");

		ASSERT_TRUE(f != NULL);
		ASSERT_EQ(1u, fwrite(t, strlen(t), 1, f));
		ASSERT_EQ(0, fclose(f));
	}
	ASSERT_LINE(t, "mrcd_port_rx_pkts_total{port=\"a\\\"b\\\\c\\nd\",plane=\"1\"} 7");
	ASSERT_LINE(t, "mrcd_info{version=\"x\\\\y\"} 1");
	free(t);
	free(s);
}

TEST(prom_format, format__probe_histogram_is_cumulative)
{
	struct mrcd_prom_snapshot *s = snap();
	char *t;

	s->probe.bucket[0] = 1;
	s->probe.bucket[1] = 2;
	s->probe.bucket[MRCP_PROBE_RTT_NBOUNDS] = 3;
	s->probe.answered = 6;
	s->probe.sum_ns = 1500000;
	s->probe.timeouts = 4;
	t = format(s);
	ASSERT_LINE(t, "# TYPE mrcd_ev_probe_rtt_seconds histogram");
	ASSERT_LINE(t, "mrcd_ev_probe_rtt_seconds_bucket{le=\"0.000005\"} 1");
	ASSERT_LINE(t, "mrcd_ev_probe_rtt_seconds_bucket{le=\"0.00001\"} 3");
	ASSERT_LINE(t, "mrcd_ev_probe_rtt_seconds_bucket{le=\"0.002\"} 3");
	ASSERT_LINE(t, "mrcd_ev_probe_rtt_seconds_bucket{le=\"+Inf\"} 6");
	ASSERT_LINE(t, "mrcd_ev_probe_rtt_seconds_sum 0.0015");
	ASSERT_LINE(t, "mrcd_ev_probe_rtt_seconds_count 6");
	ASSERT_LINE(t, "mrcd_ev_probe_timeouts_total 4");
	free(t);
	free(s);
}

TEST(prom_format, add__sums_every_field)
{
	struct mrcp_probe_rtt_hist a = { .bucket = { 1 }, .sum_ns = 5, .answered = 1, .timeouts = 2 }, b = a;
	struct mrcd_dp_qp_sums qa = { .qps = 1, .evs_moved = 2 }, qb = qa;
	struct mrcd_dp_port_counters pa = { .rx_pkts = 1, .gw_down = 2 }, pb = pa;
	struct mrcp_engine_counters ea = { .rx_pkts = 1, .stalls = 2 }, eb = ea;

	qa.qp.losses_undone = 3;
	qb.qp.losses_undone = 3;
	qa.ev.transitions = 4;
	qb.ev.transitions = 4;
	mrcd_prom_add_probe(&a, &b);
	ASSERT_U64_EQ(2, a.bucket[0]);
	ASSERT_U64_EQ(10, a.sum_ns);
	ASSERT_U64_EQ(2, a.answered);
	ASSERT_U64_EQ(4, a.timeouts);
	mrcd_prom_add_qp_sums(&qa, &qb);
	ASSERT_U64_EQ(2, qa.qps);
	ASSERT_U64_EQ(4, qa.evs_moved);
	ASSERT_U64_EQ(6, qa.qp.losses_undone);
	ASSERT_U64_EQ(8, qa.ev.transitions);
	mrcd_prom_add_port(&pa, &pb);
	ASSERT_U64_EQ(2, pa.rx_pkts);
	ASSERT_U64_EQ(4, pa.gw_down);
	mrcd_prom_add_engine(&ea, &eb);
	ASSERT_U64_EQ(2, ea.rx_pkts);
	ASSERT_U64_EQ(4, ea.stalls);
}

TEST(prom_format, format__too_small_is_enospc)
{
	struct mrcd_prom_snapshot *s = snap();
	char *b = malloc(BUF);
	int n = mrcd_prom_format(s, b, BUF);

	ASSERT_GT(n, 0);
	ASSERT_EQ(-ENOSPC, mrcd_prom_format(s, b, (size_t)n)); /* no room for the NUL */
	ASSERT_EQ(n, mrcd_prom_format(s, b, (size_t)n + 1));
	ASSERT_EQ(-ENOSPC, mrcd_prom_format(s, b, 100));
	ASSERT_TRUE(strlen(b) < 100);
	ASSERT_EQ(-ENOSPC, mrcd_prom_format(s, b, 0));
	free(b);
	free(s);
}
