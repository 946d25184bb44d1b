/* prom_format.c - the text exposition (Prometheus format 0.0.4) of a
 * struct mrcd_prom_snapshot: one "# HELP" and one "# TYPE" line per family,
 * then its samples; counters end in _total; label values and help texts
 * escaped as the format says. The families follow the X-macro counter
 * lists (dp.h, mrcp_engine.h, mrcp_ev.h), so a counter added there appears
 * here under its own name with its own description. Knows nothing of HTTP.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "prom_format.h"

/* ---- sums ---------------------------------------------------------------------------- */

void mrcd_prom_add_engine(struct mrcp_engine_counters *to, const struct mrcp_engine_counters *from)
{
#define X(n, d) to->n += from->n;
	MRCP_ENGINE_COUNTERS(X)
#undef X
}

void mrcd_prom_add_qp_sums(struct mrcd_dp_qp_sums *to, const struct mrcd_dp_qp_sums *from)
{
	to->qps += from->qps;
	to->evs_moved += from->evs_moved;
#define X(n, d) to->qp.n += from->qp.n;
	MRCP_QP_COUNTERS(X)
#undef X
#define X(n, d) to->ev.n += from->ev.n;
	MRCP_EV_COUNTERS(X)
#undef X
}

void mrcd_prom_add_port(struct mrcd_dp_port_counters *to, const struct mrcd_dp_port_counters *from)
{
#define X(n, d) to->n += from->n;
	MRCD_DP_PORT_COUNTERS(X)
#undef X
}

void mrcd_prom_add_probe(struct mrcp_probe_rtt_hist *to, const struct mrcp_probe_rtt_hist *from)
{
	for (unsigned i = 0; i <= MRCP_PROBE_RTT_NBOUNDS; i++)
		to->bucket[i] += from->bucket[i];
	to->sum_ns += from->sum_ns;
	to->answered += from->answered;
	to->timeouts += from->timeouts;
}

/* ---- the writer ------------------------------------------------------------------------ */

struct out {
	char *b;
	size_t cap, n;
	bool full;
};

__attribute__((format(printf, 2, 3)))
static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int w;

	if (o->full)
		return;
	va_start(ap, fmt);
	w = vsnprintf(o->b + o->n, o->cap - o->n, fmt, ap);
	va_end(ap);
	if (w < 0 || (size_t)w >= o->cap - o->n) {
		o->full = true;
		return;
	}
	o->n += (size_t)w;
}

static void put_ch(struct out *o, char c)
{
	put(o, "%c", c);
}

/* A label value: backslash, double quote and line feed escaped. */
static void put_label_value(struct out *o, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			put(o, "\\\\");
		else if (*s == '"')
			put(o, "\\\"");
		else if (*s == '\n')
			put(o, "\\n");
		else
			put_ch(o, *s);
	}
}

/* "# HELP" and "# TYPE" of family @name; the help text with backslash and
 * line feed escaped. */
static void family(struct out *o, const char *name, const char *type, const char *help)
{
	put(o, "# HELP %s ", name);
	for (const char *s = help; *s; s++) {
		if (*s == '\\')
			put(o, "\\\\");
		else if (*s == '\n')
			put(o, "\\n");
		else
			put_ch(o, *s);
	}
	put(o, "\n# TYPE %s %s\n", name, type);
}

/* @ns as seconds, exactly: "0.000005", "12.5", "0". */
static void put_seconds(struct out *o, uint64_t ns)
{
	uint64_t whole = ns / 1000000000u, frac = ns % 1000000000u;
	char f[16];
	int len;

	if (frac == 0) {
		put(o, "%" PRIu64, whole);
		return;
	}
	len = snprintf(f, sizeof(f), "%09" PRIu64, frac);
	while (len > 0 && f[len - 1] == '0')
		f[--len] = '\0';
	put(o, "%" PRIu64 ".%s", whole, f);
}

/* The labels of port @k: {port="name",plane="k+1"} */
static void port_labels(struct out *o, const struct mrcd_prom_port *p, unsigned k)
{
	put(o, "{port=\"");
	put_label_value(o, p->name);
	put(o, "\",plane=\"%u\"}", k + 1);
}

/* ---- the families ---------------------------------------------------------------------- */

static void ports(struct out *o, const struct mrcd_prom_snapshot *s)
{
	char name[128];

#define X(n, d)                                                                        \
	snprintf(name, sizeof(name), "mrcd_port_%s_total", #n);                        \
	family(o, name, "counter", d);                                                 \
	for (unsigned k = 0; k < s->n_ports; k++) {                                    \
		put(o, "%s", name);                                                    \
		port_labels(o, &s->ports[k], k);                                       \
		put(o, " %" PRIu64 "\n", s->ports[k].c.n);                             \
	}
	MRCD_DP_PORT_COUNTERS(X)
#undef X
	family(o, "mrcd_port_rx_dropped_total", "counter",
	       "frames dropped on receive: rx_not_mine + rx_bad_frame + rx_bad_icrc + rx_admin_down");
	for (unsigned k = 0; k < s->n_ports; k++) {
		const struct mrcd_dp_port_counters *c = &s->ports[k].c;

		put(o, "mrcd_port_rx_dropped_total");
		port_labels(o, &s->ports[k], k);
		put(o, " %" PRIu64 "\n", c->rx_not_mine + c->rx_bad_frame + c->rx_bad_icrc + c->rx_admin_down);
	}
	family(o, "mrcd_port_tx_dropped_total", "counter",
	       "MRC packets dropped on send: tx_no_neigh + tx_no_srv6_row + tx_no_mbuf + tx_build_err"
	       " + fault_delayq_full");
	for (unsigned k = 0; k < s->n_ports; k++) {
		const struct mrcd_dp_port_counters *c = &s->ports[k].c;

		put(o, "mrcd_port_tx_dropped_total");
		port_labels(o, &s->ports[k], k);
		put(o, " %" PRIu64 "\n", c->tx_no_neigh + c->tx_no_srv6_row + c->tx_no_mbuf + c->tx_build_err +
		    c->fault_delayq_full);
	}
	family(o, "mrcd_port_link_up", "gauge", "1 if the port's link is up (as DPDK last reported), else 0");
	for (unsigned k = 0; k < s->n_ports; k++) {
		put(o, "mrcd_port_link_up");
		port_labels(o, &s->ports[k], k);
		put(o, " %d\n", s->ports[k].link_up ? 1 : 0);
	}
	family(o, "mrcd_port_admin_up", "gauge", "1 if the port is administratively up (mrcctl port-admin), else 0");
	for (unsigned k = 0; k < s->n_ports; k++) {
		put(o, "mrcd_port_admin_up");
		port_labels(o, &s->ports[k], k);
		put(o, " %d\n", s->ports[k].admin_up ? 1 : 0);
	}
	family(o, "mrcd_plane_evs", "gauge", "EVs of the live QPs on the plane, by EV state (§5.3)");
	for (unsigned k = 0; k < s->n_ports; k++)
		for (unsigned st = MRCP_EV_INVALID + 1; st < MRCP_EV_NSTATES; st++)
			put(o, "mrcd_plane_evs{plane=\"%u\",state=\"%s\"} %" PRIu64 "\n", k + 1,
			    mrcp_ev_state_name((uint8_t)st), s->ports[k].ev_state[st]);
}

/* QP counters summed over the live and closed QPs: the retransmissions as
 * one family by kind, every other counter under its own name. */
static void qps(struct out *o, const struct mrcd_prom_snapshot *s)
{
	const struct mrcp_qp_counters *q = &s->qp.qp;
	char name[128];

	family(o, "mrcd_qps", "gauge", "live QPs (with an owner: client sessions, selftests)");
	put(o, "mrcd_qps %" PRIu64 "\n", s->qps);
	family(o, "mrcd_client_sessions", "gauge", "client sessions attached (libmrc-client applications)");
	put(o, "mrcd_client_sessions %" PRIu64 "\n", s->clients);
	family(o, "mrcd_qp_summed_total", "counter", "QPs whose counters the mrcd_qp_ and mrcd_ev_ families sum "
	       "(live and closed)");
	put(o, "mrcd_qp_summed_total %" PRIu64 "\n", s->qp.qps);
	family(o, "mrcd_qp_retransmits_total", "counter", "data packets retransmitted, by kind: fast (inferred "
	       "loss, D29), nack, rto, port_down (D50); all QPs");
	put(o, "mrcd_qp_retransmits_total{kind=\"fast\"} %" PRIu64 "\n", q->rtx_fast);
	put(o, "mrcd_qp_retransmits_total{kind=\"nack\"} %" PRIu64 "\n", q->rtx_nack);
	put(o, "mrcd_qp_retransmits_total{kind=\"rto\"} %" PRIu64 "\n", q->rtx_rto);
	put(o, "mrcd_qp_retransmits_total{kind=\"port_down\"} %" PRIu64 "\n", q->rtx_port_down);
#define X(n, d)                                                                        \
	if (strncmp(#n, "rtx_", 4) != 0 || strcmp(#n, "rtx_spurious") == 0) {          \
		snprintf(name, sizeof(name), "mrcd_qp_%s_total", #n);                  \
		family(o, name, "counter", d);                                         \
		put(o, "%s %" PRIu64 "\n", name, q->n);                                \
	}
	MRCP_QP_COUNTERS(X)
#undef X
#define X(n, d)                                                                        \
	snprintf(name, sizeof(name), "mrcd_ev_%s_total", #n);                          \
	family(o, name, "counter", d);                                                 \
	put(o, "%s %" PRIu64 "\n", name, s->qp.ev.n);
	MRCP_EV_COUNTERS(X)
#undef X
}

static void engines(struct out *o, const struct mrcd_prom_snapshot *s)
{
	char name[128];

#define X(n, d)                                                                        \
	snprintf(name, sizeof(name), "mrcd_engine_%s_total", #n);                      \
	family(o, name, "counter", d);                                                 \
	put(o, "%s %" PRIu64 "\n", name, s->eng.n);
	MRCP_ENGINE_COUNTERS(X)
#undef X
}

/* A worker counter: ns are shown as seconds ("_ns" becomes "_seconds"), a
 * maximum as a gauge. */
static void worker_family(struct out *o, const struct mrcd_prom_snapshot *s, const char *cname,
			  const char *help, size_t off)
{
	size_t len = strlen(cname);
	bool ns = len > 3 && strcmp(cname + len - 3, "_ns") == 0;
	bool max = strstr(cname, "_max") != NULL;
	char name[128];

	snprintf(name, sizeof(name), "mrcd_worker_%.*s%s%s", (int)(ns ? len - 3 : len), cname,
		 ns ? "_seconds" : "", max ? "" : "_total");
	family(o, name, max ? "gauge" : "counter", help);
	for (unsigned k = 0; k < s->n_workers; k++) {
		uint64_t v;

		memcpy(&v, (const char *)&s->workers[k].c + off, sizeof(v));
		put(o, "%s{worker=\"%u\"} ", name, k);
		if (ns)
			put_seconds(o, v);
		else
			put(o, "%" PRIu64, v);
		put_ch(o, '\n');
	}
}

static void workers(struct out *o, const struct mrcd_prom_snapshot *s)
{
#define X(n, d) worker_family(o, s, #n, d, offsetof(struct mrcd_dp_worker_counters, n));
	MRCD_DP_WORKER_COUNTERS(X)
#undef X
	family(o, "mrcd_worker_uptime_seconds", "gauge", "time since the worker's engine was created");
	for (unsigned k = 0; k < s->n_workers; k++) {
		put(o, "mrcd_worker_uptime_seconds{worker=\"%u\"} ", k);
		put_seconds(o, s->workers[k].uptime_ns);
		put_ch(o, '\n');
	}
	family(o, "mrcd_worker_busy_ratio", "gauge", "busy loop iterations (moved a packet or ran a timer) over "
	       "all iterations, since start; for a window use the rates of the _loops_total counters");
	for (unsigned k = 0; k < s->n_workers; k++) {
		const struct mrcd_dp_worker_counters *c = &s->workers[k].c;

		put(o, "mrcd_worker_busy_ratio{worker=\"%u\"} %.6f\n", k,
		    c->loops ? (double)c->busy_loops / (double)c->loops : 0.0);
	}
}

static void probes(struct out *o, const struct mrcd_prom_snapshot *s)
{
	const struct mrcp_probe_rtt_hist *h = &s->probe;
	uint64_t cum = 0;

	family(o, "mrcd_ev_probe_rtt_seconds", "histogram", "round-trip times of answered EV probes (§7, D57), "
	       "all engines");
	for (unsigned i = 0; i < MRCP_PROBE_RTT_NBOUNDS; i++) {
		cum += h->bucket[i];
		put(o, "mrcd_ev_probe_rtt_seconds_bucket{le=\"");
		put_seconds(o, mrcp_probe_rtt_bounds_ns[i]);
		put(o, "\"} %" PRIu64 "\n", cum);
	}
	cum += h->bucket[MRCP_PROBE_RTT_NBOUNDS];
	put(o, "mrcd_ev_probe_rtt_seconds_bucket{le=\"+Inf\"} %" PRIu64 "\n", cum);
	put(o, "mrcd_ev_probe_rtt_seconds_sum ");
	put_seconds(o, h->sum_ns);
	put(o, "\nmrcd_ev_probe_rtt_seconds_count %" PRIu64 "\n", cum);
	family(o, "mrcd_ev_probe_timeouts_total", "counter", "EV probes not answered within 2 ms (D57)");
	put(o, "mrcd_ev_probe_timeouts_total %" PRIu64 "\n", h->timeouts);
}

int mrcd_prom_format(const struct mrcd_prom_snapshot *s, char *buf, size_t cap)
{
	struct out o = { buf, cap, 0, cap == 0 };

	if (cap > 0)
		buf[0] = '\0';
	family(&o, "mrcd_info", "gauge", "the daemon's version, as a label");
	put(&o, "mrcd_info{version=\"");
	put_label_value(&o, s->version);
	put(&o, "\"} 1\n");
	ports(&o, s);
	qps(&o, s);
	engines(&o, s);
	workers(&o, s);
	probes(&o, s);
	if (o.full)
		return -ENOSPC;
	return (int)o.n;
}
