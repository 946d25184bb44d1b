/* ctl_cmds.c - one handler per control command (ctl_cmds.h), in the order of
 * the command table. A handler reads the worker through lib/dp's snapshots
 * and accessors (dp.h) and the engine through lib/core's API, acts through
 * lib/dp's functions, and answers with one JSON value; docs/control.md is
 * the reference for every answer's shape.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_log.h>
#include <rte_version.h>

#include "config_dp.h"
#include "ctl_cmds.h"
#include "dp_client.h"
#include "dp_fault.h"
#include "dp_log.h"
#include "dp_selftest.h"

void mrcd_ctl_fail(struct mrcd_ctl_call *x, int err, const char *fmt, ...)
{
	va_list ap;

	x->err = err;
	va_start(ap, fmt);
	vsnprintf(x->reason, sizeof(x->reason), fmt, ap);
	va_end(ap);
}

#define fail mrcd_ctl_fail

/* ---- JSON helpers --------------------------------------------------------------- */

static json_t *ip_json(const struct mrcp_ip *ip)
{
	char b[INET6_ADDRSTRLEN];

	if (ip->family == 4)
		inet_ntop(AF_INET, ip->a, b, sizeof(b));
	else if (ip->family == 6)
		inet_ntop(AF_INET6, ip->a, b, sizeof(b));
	else
		return json_string("");
	return json_string(b);
}

static json_t *prefix_json(const struct mrcd_dp_prefix *p)
{
	char b[INET6_ADDRSTRLEN + 8];

	if (p->ip.family == 0)
		return json_string("");
	inet_ntop(p->ip.family == 4 ? AF_INET : AF_INET6, p->ip.a, b, sizeof(b));
	snprintf(b + strlen(b), 8, "/%u", p->len);
	return json_string(b);
}

static json_t *mac_json(const uint8_t m[6])
{
	char b[18];

	snprintf(b, sizeof(b), "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
	return json_string(b);
}

static const char *qp_state_name(int s)
{
	switch (s) {
#define X(n) case MRCP_QPS_##n: return #n;
	MRCP_QP_STATES(X)
#undef X
	default: return "INVALID";
	}
}

static void set_u64(json_t *o, const char *k, uint64_t v)
{
	json_object_set_new(o, k, json_integer((json_int_t)v));
}

/* "info": a connection-info blob as the 416 hex digits peers exchange. */
static void set_info(json_t *o, const uint8_t blob[MRCP_CONN_INFO_LEN])
{
	char hex[2 * MRCP_CONN_INFO_LEN + 1];

	mrcd_ctl_hex_encode(blob, MRCP_CONN_INFO_LEN, hex);
	json_object_set_new(o, "info", json_string(hex));
}

/* A port argument as a 0-based index, or -ENOENT with the reason set. */
static int port_ref(struct mrcd_ctl_call *x, const struct mrcd_ctl_port *p)
{
	int i = mrcd_dp_port_lookup(x->w, p->name, p->plane);

	if (i < 0) {
		if (p->name[0])
			fail(x, -ENOENT, "args.port: no port named \"%s\"", p->name);
		else
			fail(x, -ENOENT, "args.port: no plane %u (the daemon has %u)", p->plane,
			     mrcd_dp_n_ports(x->w));
	}
	return i;
}

/* "gateway": its address ("" when none), "gateway_state" as the neighbour
 * table has it ("-" before it was asked for), "gateway_mac". */
static void gw_json(json_t *o, const char *key, const struct mrcd_dp_gw *g)
{
	char k[32];

	json_object_set_new(o, key, ip_json(&g->ip));
	snprintf(k, sizeof(k), "%s_state", key);
	json_object_set_new(o, k, json_string(g->ip.family ? mrcd_neigh_state_name(g->state) : "-"));
	snprintf(k, sizeof(k), "%s_mac", key);
	json_object_set_new(o, k, g->state == MRCD_NEIGH_REACHABLE || g->state == MRCD_NEIGH_STATIC ?
				  mac_json(g->mac) : json_string(""));
}

static json_t *port_json(const struct mrcd_dp_port_status *p, unsigned i)
{
	json_t *o = json_object();

	set_u64(o, "plane", i + 1);
	json_object_set_new(o, "name", json_string(p->name));
	set_u64(o, "ethdev", p->ethdev);
	json_object_set_new(o, "mac", mac_json(p->mac));
	json_object_set_new(o, "ipv4", prefix_json(&p->ipv4));
	json_object_set_new(o, "ipv6", prefix_json(&p->ipv6));
	set_u64(o, "mtu", p->mtu);
	json_object_set_new(o, "link", json_string(p->link_up ? "up" : "down"));
	json_object_set_new(o, "admin", json_string(p->admin_up ? "up" : "down"));
	json_object_set_new(o, "engine", json_string(p->engine_up ? "up" : "down"));
	gw_json(o, "gateway", &p->gw4);
	gw_json(o, "gateway6", &p->gw6);
	set_u64(o, "routes", p->n_routes);
	set_u64(o, "speed_mbps", p->speed_mbps);
	set_u64(o, "link_speed_mbps", p->link_speed_mbps);
#define X(n, d) set_u64(o, #n, p->c.n);
	MRCD_DP_PORT_COUNTERS(X)
#undef X
	return o;
}

static json_t *qp_json(struct mrcp_engine *eng, uint32_t qpn, bool full)
{
	struct mrcp_qp_info qi;
	json_t *o;

	if (mrcp_qp_info(eng, qpn, &qi) < 0)
		return NULL;
	o = json_object();
	set_u64(o, "qpn", qi.qpn);
	set_u64(o, "dest_qpn", qi.dest_qpn);
	json_object_set_new(o, "state", json_string(qp_state_name(qi.state)));
	json_object_set_new(o, "mode", json_string(qi.mode == MRCP_MODE_RC ? "rc" : "mrc"));
	set_u64(o, "outstanding_pkts", qi.outstanding_pkts);
	set_u64(o, "sq_outstanding", qi.sq_outstanding);
	set_u64(o, "cwnd", qi.cc.cwnd);
	set_u64(o, "inflight", qi.cc.inflight);
	set_u64(o, "evs", qi.n_evs);
	set_u64(o, "tx_data_pkts", qi.c.tx_data_pkts);
	set_u64(o, "rx_data_pkts", qi.c.rx_data_pkts);
	set_u64(o, "rtx", qi.c.rtx_fast + qi.c.rtx_nack + qi.c.rtx_rto + qi.c.rtx_port_down);
	const struct mrcp_ev_set *evs = mrcp_qp_evs(eng, qpn);
	uint64_t trans = 0;

	for (unsigned k = 0; evs && k < evs->n_evs; k++)
		trans += evs->evs[k].c.transitions;
	set_u64(o, "ev_transitions", trans);
	if (!full)
		return o;
	set_u64(o, "next_psn", qi.next_psn);
	set_u64(o, "snd_una", qi.snd_una);
	set_u64(o, "rcv_cack", qi.rcv_cack);
	set_u64(o, "next_msn", qi.next_msn);
	set_u64(o, "rcv_msn", qi.rcv_msn);
	set_u64(o, "retry_k", qi.retry_k);
	json_object_set_new(o, "cause", json_string(mrcp_qp_err_name(qi.err.cause))); /* D70 */
	json_t *cc = json_object();
	set_u64(cc, "cwnd", qi.cc.cwnd);
	set_u64(cc, "inflight", qi.cc.inflight);
	set_u64(cc, "base_rtt_ns", qi.cc.base_rtt_ns);
	set_u64(cc, "target_qdelay_ns", qi.cc.target_qdelay_ns);
	set_u64(cc, "avg_delay_ns", qi.cc.avg_delay_ns);
	set_u64(cc, "min_cwnd", qi.cc.min_cwnd);
	set_u64(cc, "max_cwnd", qi.cc.max_cwnd);
	set_u64(cc, "md_events", qi.cc.md_events);
	set_u64(cc, "qa_events", qi.cc.qa_events);
	set_u64(cc, "fast_inc_events", qi.cc.fast_inc_events);
	json_object_set_new(o, "cc", cc);
	json_t *c = json_object();
#define X(n, d) set_u64(c, #n, qi.c.n);
	MRCP_QP_COUNTERS(X)
#undef X
	json_object_set_new(o, "counters", c);
	return o;
}

static json_t *st_json(const struct mrcd_st_status *s)
{
	json_t *o = json_object();

	set_u64(o, "id", s->id);
	json_object_set_new(o, "role", json_string(s->role == MRCD_ST_SENDER ? "sender" : "receiver"));
	json_object_set_new(o, "state", json_string(mrcd_st_state_name(s->state)));
	set_u64(o, "qpn", s->qpn);
	json_object_set_new(o, "qp_state", json_string(qp_state_name(s->qp_state)));
	json_object_set_new(o, "op", json_string(s->op == MRCD_ST_OP_WRITE ? "write" :
						 s->op == MRCD_ST_OP_MIXED ? "mixed" :
						 s->op == MRCD_ST_OP_PING_PONG ? "ping_pong" : "write_imm"));
	set_u64(o, "bytes_target", s->bytes_target);
	set_u64(o, "bytes_done", s->bytes_done);
	set_u64(o, "msgs_target", s->msgs_target);
	set_u64(o, "msgs_done", s->msgs_done);
	set_u64(o, "imm_msgs", s->imm_msgs);
	set_u64(o, "msg_size", s->msg_size);
	set_u64(o, "window", s->window);
	set_u64(o, "elapsed_ns", s->elapsed_ns);
	json_object_set_new(o, "goodput_gbps", json_real(s->goodput_gbps));
	set_u64(o, "rtx_total", s->rtx_total);
	set_u64(o, "rtx_fast", s->rtx_fast);
	set_u64(o, "rtx_nack", s->rtx_nack);
	set_u64(o, "rtx_rto", s->rtx_rto);
	set_u64(o, "rtx_port_down", s->rtx_port_down);
	set_u64(o, "ev_transitions", s->ev_transitions);
	set_u64(o, "verify_errors", s->verify_errors);
	if (s->op == MRCD_ST_OP_PING_PONG && s->role == MRCD_ST_SENDER) {
		/* round-trip times; the percentiles once the run is done */
		json_t *r = json_object();

		set_u64(r, "samples", s->rtt_samples);
		set_u64(r, "warmup", s->rtt_warmup);
		set_u64(r, "min_ns", s->rtt_min_ns);
		set_u64(r, "mean_ns", s->rtt_mean_ns);
		set_u64(r, "p50_ns", s->rtt_p50_ns);
		set_u64(r, "p90_ns", s->rtt_p90_ns);
		set_u64(r, "p99_ns", s->rtt_p99_ns);
		set_u64(r, "max_ns", s->rtt_max_ns);
		json_object_set_new(o, "rtt", r);
	}
	json_object_set_new(o, "error", json_string(s->error));
	return o;
}

static json_t *fault_rule_json(struct mrcd_dp *w, const struct mrcd_fault_rule *r)
{
	json_t *o = json_object();
	static const char *const dirs[] = { "tx", "rx", "both" };
	const char *port = mrcd_dp_port_name(w, r->port);

	set_u64(o, "rule", r->id);
	json_object_set_new(o, "port", json_string(port ? port : "?"));
	set_u64(o, "ev_min", r->ev_min);
	set_u64(o, "ev_max", r->ev_max);
	json_object_set_new(o, "direction", json_string(r->dir <= MRCD_FAULT_BOTH ? dirs[r->dir] : "?"));
	json_object_set_new(o, "drop_pct", json_real(r->drop_pct));
	json_object_set_new(o, "blackhole", json_boolean(r->blackhole));
	json_object_set_new(o, "delay_us", json_real((double)r->delay_ns / 1000.0));
	json_object_set_new(o, "jitter_us", json_real((double)r->jitter_ns / 1000.0));
	json_object_set_new(o, "reorder_pct", json_real(r->reorder_pct));
	json_object_set_new(o, "duplicate_pct", json_real(r->duplicate_pct));
	json_object_set_new(o, "corrupt_pct", json_real(r->corrupt_pct));
	json_object_set_new(o, "trim_pct", json_real(r->trim_pct));
	json_object_set_new(o, "ecn_pct", json_real(r->ecn_pct));
	return o;
}

static void eng_counter(void *ctx, uint32_t qpn, const char *name, const char *desc, uint64_t v)
{
	(void)desc;
	if (qpn == 0)
		set_u64(ctx, name, v);
}

/* A snapshot of the worker a handler runs on (malloc'd: it holds the
 * probe ring). NULL with the error set. */
static struct mrcd_dp_status *status_of(struct mrcd_ctl_call *x)
{
	struct mrcd_dp_status *st = malloc(sizeof(*st));

	if (!st)
		fail(x, -ENOMEM, "out of memory");
	else
		mrcd_dp_status(x->w, st);
	return st;
}

/* ---- daemon ----------------------------------------------------------------------- */

static void cmd_version(struct mrcd_ctl_call *x)
{
	json_t *o = json_object();

	set_u64(o, "protocol", MRCD_CTL_PROTO_VERSION);
	json_object_set_new(o, "daemon", json_string(MRCD_VERSION));
	json_object_set_new(o, "dpdk", json_string(rte_version()));
	x->result = o;
}

static void cmd_status(struct mrcd_ctl_call *x)
{
	struct mrcd_dp_status *st = status_of(x);
	json_t *o, *peers;

	if (!st)
		return;
	o = json_object();
	peers = json_array();
	set_u64(o, "pid", (uint64_t)getpid());
	json_object_set_new(o, "version", json_string(MRCD_VERSION));
	json_object_set_new(o, "uptime_s", json_real((double)(x->now - st->start_ns) / 1e9));
	set_u64(o, "ports", st->n_ports);
	set_u64(o, "ports_up", st->ports_up);
	set_u64(o, "qps", st->n_qps);
	set_u64(o, "clients", st->n_clients);
	set_u64(o, "worker_lcore", st->lcore);
	json_object_set_new(o, "idle", json_string(st->busy_poll ? "busy" : "adaptive"));
	json_object_set_new(o, "family", json_string(st->family == 6 ? "ipv6" : "ipv4"));
	for (unsigned k = 0; k < st->n_peers; k++) {
		json_t *p = json_object();
		char m[16];

		json_object_set_new(p, "node", ip_json(&st->peers[k].node));
		snprintf(m, sizeof(m), "0x%" PRIx32, st->peers[k].mask);
		json_object_set_new(p, "port_mask", json_string(m));
		set_u64(p, "updates", st->peers[k].updates);
		json_object_set_new(p, "age_s", json_real((double)(x->now - st->peers[k].at_ns) / 1e9));
		json_array_append_new(peers, p);
	}
	json_object_set_new(o, "peers", peers);
	if (st->n_workers > 1)
		set_u64(o, "workers", st->n_workers);
	free(st);
	x->result = o;
}

static void cmd_ports(struct mrcd_ctl_call *x)
{
	json_t *a = json_array();
	struct mrcd_dp_port_status p;

	for (unsigned k = 0; mrcd_dp_port_status(x->w, k, &p) == 0; k++)
		json_array_append_new(a, port_json(&p, k));
	x->result = a;
}

static void cmd_neighbours(struct mrcd_ctl_call *x)
{
	unsigned max = MRCD_NEIGH_TABLE_ENTRIES, n;
	struct mrcd_neigh_entry *e = calloc(max, sizeof(*e));
	unsigned worker = mrcd_dp_worker_index(x->w);
	json_t *a;

	if (!e) {
		fail(x, -ENOMEM, "out of memory");
		return;
	}
	n = mrcd_dp_neighbours(x->w, e, max);
	a = json_array();
	for (unsigned k = 0; k < n; k++) {
		json_t *o = json_object();
		struct mrcp_ip ip = { .family = e[k].family };
		const char *port = e[k].port < 0 ? "*" : mrcd_dp_port_name(x->w, (unsigned)e[k].port);

		memcpy(ip.a, e[k].ip, 16);
		set_u64(o, "worker", worker);
		json_object_set_new(o, "port", json_string(port ? port : "?"));
		json_object_set_new(o, "ip", ip_json(&ip));
		json_object_set_new(o, "mac", e[k].state == MRCD_NEIGH_REACHABLE ||
					      e[k].state == MRCD_NEIGH_STATIC ? mac_json(e[k].mac) : json_string(""));
		json_object_set_new(o, "state", json_string(mrcd_neigh_state_name(e[k].state)));
		json_object_set_new(o, "role", json_string(mrcd_neigh_role_name(e[k].role)));
		json_object_set_new(o, "age_s", e[k].state == MRCD_NEIGH_STATIC ? json_null() :
					json_real((double)(x->now - e[k].updated_ns) / 1e9));
		json_array_append_new(a, o);
	}
	free(e);
	x->result = a;
}

static void cmd_lcores(struct mrcd_ctl_call *x)
{
	struct mrcd_dp_status *st = status_of(x);
	json_t *a, *o;

	if (!st)
		return;
	a = json_array();
	o = json_object();
	set_u64(o, "lcore", st->lcore);
	set_u64(o, "worker", st->worker);
	json_object_set_new(o, "role", json_string("worker"));
	set_u64(o, "ports", st->n_ports);
#define X(n, d) set_u64(o, #n, st->c.n);
	MRCD_DP_WORKER_COUNTERS(X)
#undef X
	json_object_set_new(o, "idle_pct", json_real(x->now > st->start_ns ?
		100.0 * (double)st->c.sleep_ns / (double)(x->now - st->start_ns) : 0));
	json_array_append_new(a, o);
	free(st);
	x->result = a;
}

static void cmd_qps(struct mrcd_ctl_call *x)
{
	unsigned max = mrcd_dp_qp_slots(x->w);
	uint32_t *qpns = malloc((max ? max : 1) * sizeof(*qpns));
	unsigned n = qpns ? mrcd_dp_qps(x->w, qpns, max) : 0;
	json_t *a = json_array();

	if (!qpns) {
		fail(x, -ENOMEM, "out of memory");
		json_decref(a);
		return;
	}
	for (unsigned k = 0; k < n; k++) {
		json_t *q = qp_json(mrcd_dp_engine(x->w), qpns[k], false);

		if (q)
			json_array_append_new(a, q);
	}
	free(qpns);
	x->result = a;
}

static void cmd_qp(struct mrcd_ctl_call *x)
{
	x->result = qp_json(mrcd_dp_engine(x->w), x->req->qp.qpn, true);
	if (!x->result)
		fail(x, -ENOENT, "args.qpn: no QP %" PRIu32, x->req->qp.qpn);
}

static void cmd_evs(struct mrcd_ctl_call *x)
{
	const struct mrcp_ev_set *s = mrcp_qp_evs(mrcd_dp_engine(x->w), x->req->qp.qpn);
	static const char *const pools[] = { "none", "active", "backup", "out" };
	json_t *a;

	if (!s) {
		fail(x, -ENOENT, "args.qpn: no QP %" PRIu32, x->req->qp.qpn);
		return;
	}
	a = json_array();
	for (unsigned k = 0; k < s->n_evs; k++) {
		const struct mrcp_ev *e = &s->evs[k];
		json_t *o = json_object();

		set_u64(o, "index", k);
		set_u64(o, "ev", e->value);
		set_u64(o, "plane", e->port);
		json_object_set_new(o, "state", json_string(mrcp_ev_state_name(e->state)));
		json_object_set_new(o, "pool", json_string(e->pool < 4 ? pools[e->pool] : "?"));
#define X(n, d) set_u64(o, #n, e->c.n);
		MRCP_EV_COUNTERS(X)
#undef X
		json_array_append_new(a, o);
	}
	x->result = a;
}

/* "closed_qps" and "live_qps": @t's QPs, EVs that moved, every QP counter
 * and, in "ev", every EV counter, summed. */
static json_t *qp_sums_json(const struct mrcd_dp_qp_sums *t)
{
	json_t *o = json_object(), *ev = json_object();

	set_u64(o, "qps", t->qps);
	set_u64(o, "evs_moved", t->evs_moved);
#define X(n, d) set_u64(o, #n, t->qp.n);
	MRCP_QP_COUNTERS(X)
#undef X
#define X(n, d) set_u64(ev, #n, t->ev.n);
	MRCP_EV_COUNTERS(X)
#undef X
	json_object_set_new(o, "ev", ev);
	return o;
}

/* A port's "evs": how many of the live QPs' EVs on its plane are in each
 * state ("state": GOOD, SKIP, ASSUMED_BAD, DENIED) and each pool ("pool":
 * active, backup, out). Objects, not arrays: several workers' answers add
 * up key by key. */
static json_t *plane_evs_json(const struct mrcd_dp_live_qps *l, unsigned port)
{
	static const char *const pools[] = { "none", "active", "backup", "out" };
	json_t *o = json_object(), *st = json_object(), *po = json_object();

	for (unsigned s = MRCP_EV_INVALID + 1; s < MRCP_EV_NSTATES; s++)
		set_u64(st, mrcp_ev_state_name((uint8_t)s), port < MRCP_MAX_PORTS ? l->ev_state[port][s] : 0);
	for (unsigned k = MRCP_EV_POOL_ACTIVE; k < 4; k++)
		set_u64(po, pools[k], port < MRCP_MAX_PORTS ? l->ev_pool[port][k] : 0);
	json_object_set_new(o, "state", st);
	json_object_set_new(o, "pool", po);
	return o;
}

static void cmd_counters(struct mrcd_ctl_call *x)
{
	struct mrcd_dp_status *st = status_of(x);
	struct mrcd_dp_live_qps *live = st ? malloc(sizeof(*live)) : NULL;
	json_t *o, *eng, *ports, *w;
	struct mrcd_dp_port_status p;

	if (!live) {
		if (st)
			fail(x, -ENOMEM, "out of memory");
		free(st);
		return;
	}
	mrcd_dp_live_qps(x->w, live);
	o = json_object();
	eng = json_object();
	ports = json_object();
	w = json_object();
	mrcp_counters_foreach(mrcd_dp_engine(x->w), eng_counter, eng);
	json_object_set_new(o, "engine", eng);
	for (unsigned k = 0; mrcd_dp_port_status(x->w, k, &p) == 0; k++) {
		json_t *po = json_object(), *f = json_object(), *nb = json_object();

#define X(n, d) set_u64(po, #n, p.c.n);
		MRCD_DP_PORT_COUNTERS(X)
#undef X
#define X(n, d) set_u64(f, #n, p.fault.n);
		MRCD_FAULT_COUNTERS(X)
#undef X
		json_object_set_new(po, "fault", f);
#define X(n, d) set_u64(nb, #n, p.neigh.n);
		MRCD_NEIGH_COUNTERS(X)
#undef X
		json_object_set_new(po, "neigh", nb);
		json_object_set_new(po, "evs", plane_evs_json(live, k));
		json_object_set_new(ports, p.name, po);
	}
	json_object_set_new(o, "ports", ports);
#define X(n, d) set_u64(w, #n, st->c.n);
	MRCD_DP_WORKER_COUNTERS(X)
#undef X
	json_object_set_new(o, "worker", w);
	json_object_set_new(o, "live_qps", qp_sums_json(&live->sum));
	json_object_set_new(o, "closed_qps", qp_sums_json(&st->closed));
	free(live);
	free(st);
	x->result = o;
}

/* ---- faults and ports ------------------------------------------------------------------ */

static void cmd_faults(struct mrcd_ctl_call *x)
{
	struct mrcd_fault_rule rules[MRCD_FAULT_MAX_RULES];
	unsigned n = mrcd_fault_list(mrcd_dp_faults(x->w), rules, MRCD_FAULT_MAX_RULES);
	json_t *a = json_array();

	for (unsigned k = 0; k < n; k++)
		json_array_append_new(a, fault_rule_json(x->w, &rules[k]));
	x->result = a;
}

static void cmd_fault_set(struct mrcd_ctl_call *x)
{
	const struct mrcd_ctl_fault *f = &x->req->fault_set;
	struct mrcd_fault_rule fr;
	uint32_t id;
	int i = port_ref(x, &f->port), rc;

	if (i < 0)
		return;
	memset(&fr, 0, sizeof(fr));
	fr.port = (uint8_t)i;
	fr.ev_min = f->ev_min;
	fr.ev_max = f->ev_max;
	fr.dir = mrcd_fault_dir_of(f->dir);
	fr.drop_pct = f->drop_pct;
	fr.blackhole = f->blackhole;
	fr.delay_ns = (uint64_t)(f->delay_us * 1000.0);
	fr.jitter_ns = (uint64_t)(f->jitter_us * 1000.0);
	fr.reorder_pct = f->reorder_pct;
	fr.duplicate_pct = f->duplicate_pct;
	fr.corrupt_pct = f->corrupt_pct;
	fr.trim_pct = f->trim_pct;
	fr.ecn_pct = f->ecn_pct;
	rc = mrcd_fault_add(mrcd_dp_faults(x->w), &fr, &id);
	if (rc < 0) {
		fail(x, rc, rc == -ENOSPC ? "fault table full (%d rules)" : "rule rejected (%d)",
		     rc == -ENOSPC ? (int)MRCD_FAULT_MAX_RULES : rc);
		return;
	}
	x->result = json_object();
	set_u64(x->result, "rule", id);
	MRCD_LOG(NOTICE, ctl, "fault rule %" PRIu32 " set on port %s\n", id, mrcd_dp_port_name(x->w, (unsigned)i));
}

static void cmd_fault_clear(struct mrcd_ctl_call *x)
{
	const struct mrcd_ctl_req *r = x->req;
	struct mrcd_fault_stage *fs = mrcd_dp_faults(x->w);
	unsigned n;

	if (r->fault_clear.has_rule) {
		if (mrcd_fault_del(fs, r->fault_clear.rule) < 0) {
			fail(x, -ENOENT, "args.rule: no rule %" PRIu32, r->fault_clear.rule);
			return;
		}
		n = 1;
	} else if (r->fault_clear.has_port) {
		int i = port_ref(x, &r->fault_clear.port);

		if (i < 0)
			return;
		n = mrcd_fault_clear_port(fs, (uint8_t)i);
	} else {
		n = mrcd_fault_clear_all(fs);
	}
	x->result = json_object();
	set_u64(x->result, "removed", n);
}

static void cmd_ev_deny(struct mrcd_ctl_call *x)
{
	const struct mrcd_ctl_req *r = x->req;
	int rc = mrcp_qp_ev_deny(mrcd_dp_engine(x->w), r->ev_deny.qpn, r->ev_deny.ev, r->ev_deny.deny, x->now);

	if (rc == -ENOENT)
		fail(x, rc, "args.qpn: no QP %" PRIu32, r->ev_deny.qpn);
	else if (rc == -EINVAL)
		fail(x, rc, "args.ev: QP %" PRIu32 " has no EV %" PRIu32, r->ev_deny.qpn, r->ev_deny.ev);
	else if (rc < 0)
		fail(x, rc, "%s", strerror(-rc));
	else
		x->result = json_object();
}

static void cmd_port_admin(struct mrcd_ctl_call *x)
{
	const struct mrcd_ctl_req *r = x->req;
	int i = port_ref(x, &r->port_admin.port);
	const char *name;

	if (i < 0)
		return;
	mrcd_dp_port_admin(x->w, (unsigned)i, r->port_admin.up, x->now);
	name = mrcd_dp_port_name(x->w, (unsigned)i);
	x->result = json_object();
	json_object_set_new(x->result, "port", json_string(name));
	json_object_set_new(x->result, "admin", json_string(r->port_admin.up ? "up" : "down"));
	MRCD_LOG(NOTICE, ctl, "port %s admin %s\n", name, r->port_admin.up ? "up" : "down");
}

/* "emerg".."debug" as RTE_LOG_EMERG (1) .. RTE_LOG_DEBUG (8); -1 if none. */
static int log_level_of(const char *s)
{
	static const char *const names[] = { "", "emerg", "alert", "crit", "err", "warning",
					     "notice", "info", "debug" };

	for (int i = 1; i < (int)(sizeof(names) / sizeof(names[0])); i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	return -1;
}

static void cmd_log_level(struct mrcd_ctl_call *x)
{
	const struct mrcd_ctl_req *r = x->req;
	int lvl = log_level_of(r->log_level.level);
	const char *pat = r->log_level.type[0] ? r->log_level.type : "mrcd.*";

	if (lvl < 0 || rte_log_set_level_pattern(pat, (uint32_t)lvl) < 0) {
		fail(x, -EINVAL, "args.level: cannot set \"%s\" for %s", r->log_level.level, pat);
		return;
	}
	x->result = json_object();
	json_object_set_new(x->result, "type", json_string(pat));
	json_object_set_new(x->result, "level", json_string(r->log_level.level));
}

/* ---- EV probes ------------------------------------------------------------------------ */

static void cmd_ev_probe(struct mrcd_ctl_call *x)
{
	const struct mrcd_ctl_req *r = x->req;
	struct mrcd_dp_status *st;
	struct mrcp_ip node;
	int i = port_ref(x, &r->ev_probe.port), rc;

	if (i < 0)
		return;
	memset(&node, 0, sizeof(node));
	node.family = r->ev_probe.node.family;
	memcpy(node.a, r->ev_probe.node.a, 16);
	rc = mrcp_ev_probe(mrcd_dp_engine(x->w), &node, (uint8_t)(i + 1), r->ev_probe.ev, x->now);
	if (rc == -ENOENT)
		fail(x, rc, "args.node: not a known peer (no QP to it)");
	else if (rc == -EBUSY)
		fail(x, rc, "probe rate limit: try again");
	else if (rc < 0)
		fail(x, rc, "%s", strerror(-rc));
	else if ((st = status_of(x)) != NULL) {
		x->result = json_object();
		set_u64(x->result, "probes_recorded", st->n_probes);
		free(st);
	}
}

static void cmd_probes(struct mrcd_ctl_call *x)
{
	struct mrcd_dp_status *st = status_of(x);
	json_t *a;

	if (!st)
		return;
	a = json_array();
	for (unsigned k = 0; k < st->n_recent; k++) {
		const struct mrcd_dp_probe *p = &st->recent[k];
		json_t *o = json_object();

		set_u64(o, "seq", p->seq);
		json_object_set_new(o, "node", ip_json(&p->node));
		set_u64(o, "plane", p->port);
		set_u64(o, "ev", p->ev);
		json_object_set_new(o, "ok", json_boolean(p->ok));
		json_object_set_new(o, "rtt_us", json_real((double)p->rtt_ns / 1000.0));
		json_object_set_new(o, "age_s", json_real((double)(x->now - p->at_ns) / 1e9));
		json_array_append_new(a, o);
	}
	free(st);
	x->result = a;
}

/* ---- selftests ------------------------------------------------------------------------ */

static void cmd_selftest_listen(struct mrcd_ctl_call *x)
{
	uint8_t info[MRCP_CONN_INFO_LEN];
	uint32_t id;
	int rc = mrcd_st_listen(x->w, x->req->st_listen.region_bytes, x->now, &id, info);

	if (rc < 0) {
		fail(x, rc, "%s", strerror(-rc));
		return;
	}
	x->result = json_object();
	set_u64(x->result, "id", id);
	set_info(x->result, info);
	set_u64(x->result, "region_bytes", x->req->st_listen.region_bytes);
}

_Static_assert((int)MRCD_CTL_OP_PING_PONG == (int)MRCD_ST_OP_PING_PONG &&
	       (int)MRCD_CTL_OP_MIXED == (int)MRCD_ST_OP_MIXED, "selftest ops: mrcd_ctl.h and dp_selftest.h agree");

static void cmd_selftest_start(struct mrcd_ctl_call *x)
{
	const struct mrcd_ctl_req *r = x->req;
	uint8_t info[MRCP_CONN_INFO_LEN];
	uint32_t id;
	int rc = mrcd_st_start(x->w, r->st_start.peer_info, r->st_start.bytes, r->st_start.msg_size,
			       r->st_start.window, (enum mrcd_st_op)r->st_start.op, x->now, &id, info);

	if (rc == -E2BIG) {
		fail(x, rc, "window x msg_size must fit half the peer's region (and 256 MiB)");
		return;
	}
	if (rc == -ERANGE) {
		fail(x, -EINVAL, "ping_pong: at most %u round trips (bytes / msg_size)", MRCD_ST_PP_MAX);
		return;
	}
	if (rc < 0) {
		fail(x, rc, "%s", strerror(-rc));
		return;
	}
	x->result = json_object();
	set_u64(x->result, "id", id);
	set_info(x->result, info);
}

static void cmd_selftest_accept(struct mrcd_ctl_call *x)
{
	int rc = mrcd_st_accept(x->w, x->req->st_accept.id, x->req->st_accept.peer_info, x->now);

	if (rc < 0)
		fail(x, rc, "%s", rc == -ENOENT ? "no such selftest" :
		     rc == -EPERM ? "not a listening receiver" : strerror(-rc));
	else
		x->result = json_object();
}

static void cmd_selftest_run(struct mrcd_ctl_call *x)
{
	int rc = mrcd_st_run(x->w, x->req->st.id, x->now);

	if (rc < 0)
		fail(x, rc, "%s", rc == -ENOENT ? "no such selftest" :
		     rc == -EPERM ? "not a connected sender" : strerror(-rc));
	else
		x->result = json_object();
}

static void cmd_selftest_status(struct mrcd_ctl_call *x)
{
	struct mrcd_st_status s;
	int rc = mrcd_st_status(x->w, x->req->st.id, x->now, &s);

	if (rc < 0)
		fail(x, rc, "no selftest %" PRIu32, x->req->st.id);
	else
		x->result = st_json(&s);
}

static void cmd_selftest_stop(struct mrcd_ctl_call *x)
{
	int rc = mrcd_st_stop(x->w, x->req->st.id, x->now);

	if (rc < 0)
		fail(x, rc, "no selftest %" PRIu32, x->req->st.id);
	else
		x->result = json_object();
}

/* The control socket's own state (ctl_server.c answers it); not a worker's. */
static void cmd_control(struct mrcd_ctl_call *x)
{
	fail(x, -EPERM, "control: only on the control socket");
}

/* ---- client sessions ------------------------------------------------------------------ */

/* The control socket answers attach itself (ctl_server.c: the reply carries
 * file descriptors); any other way in is refused. */
static void cmd_attach(struct mrcd_ctl_call *x)
{
	fail(x, -EPERM, "only on the control socket");
}

static void cmd_reg_mr(struct mrcd_ctl_call *x)
{
	const struct mrcd_ctl_req *r = x->req;
	uint32_t lkey, rkey, region;
	uint64_t va;
	int rc = mrcd_client_reg_mr(x->w, x->sess, r->reg_mr.ofs, r->reg_mr.len, r->reg_mr.access,
				    &lkey, &rkey, &region, &va);

	if (rc == -EINVAL)
		fail(x, rc, "args: [ofs, ofs+len) is not inside the arena heap");
	else if (rc == -ENOSPC) {
		struct mrcd_client_info ci;

		mrcd_client_info(x->sess, &ci);
		if (ci.n_mrs >= ci.max_mrs)
			fail(x, rc, "region limit reached: this client holds %" PRIu32 " regions, "
			     "limits.per_client.max_mrs", ci.n_mrs);
		else
			fail(x, rc, "region limit reached: worker %u's region table is full (limits.max_mrs)",
			     mrcd_dp_worker_index(x->w));
	}
	else if (rc < 0)
		fail(x, rc, "%s", strerror(-rc));
	else {
		x->result = json_object();
		set_u64(x->result, "lkey", lkey);
		set_u64(x->result, "rkey", rkey);
		set_u64(x->result, "region", region);
		set_u64(x->result, "va", va);
	}
}

static void cmd_dereg_mr(struct mrcd_ctl_call *x)
{
	int rc = mrcd_client_dereg_mr(x->w, x->sess, x->req->dereg_mr.lkey);

	if (rc == -ENOENT)
		fail(x, rc, "args.lkey: not a region of this client");
	else if (rc == -EBUSY)
		fail(x, rc, "args.lkey: work requests still use the region");
	else if (rc < 0)
		fail(x, rc, "%s", strerror(-rc));
	else
		x->result = json_object();
}

/* Add "info" (the QP's connection info) to x->result, made if NULL. */
static void qp_info_into(struct mrcd_ctl_call *x, uint32_t qpn)
{
	struct mrcp_conn_info ci;
	uint8_t blob[MRCP_CONN_INFO_LEN];

	if (!mrcd_client_owns_qp(x->sess, qpn) || mrcp_qp_local_info(mrcd_dp_engine(x->w), qpn, &ci) < 0 ||
	    mrcp_conn_info_encode(&ci, blob, sizeof(blob)) < 0) {
		json_decref(x->result);
		x->result = NULL;
		fail(x, -ENOENT, "args.qpn: no QP %" PRIu32 " in this client", qpn);
		return;
	}
	if (!x->result)
		x->result = json_object();
	set_info(x->result, blob);
}

static void cmd_qp_create(struct mrcd_ctl_call *x)
{
	const struct mrcd_ctl_req *r = x->req;
	uint32_t qpn;
	int rc = mrcd_client_qp_create(x->w, x->sess, r->qp_create.sq_depth, r->qp_create.rq_depth,
				       r->qp_create.user_ctx, &qpn);

	if (rc == -ENOSPC) {
		struct mrcd_client_info ci;

		mrcd_client_info(x->sess, &ci);
		if (ci.n_qps >= ci.max_qps)
			fail(x, rc, "QP limit reached: this client holds %" PRIu32 " QPs, "
			     "limits.per_client.max_qps", ci.n_qps);
		else
			fail(x, rc, "QP limit reached: worker %u holds %u QPs, its engine's table is full "
			     "(limits.max_qps)", mrcd_dp_worker_index(x->w), mrcd_dp_qp_count(x->w));
		return;
	}
	if (rc < 0) {
		fail(x, rc, "%s", strerror(-rc));
		return;
	}
	x->result = json_object();
	set_u64(x->result, "qpn", qpn);
	qp_info_into(x, qpn); /* the info too */
}

static void cmd_qp_info(struct mrcd_ctl_call *x)
{
	qp_info_into(x, x->req->qp.qpn);
}

static void cmd_qp_connect(struct mrcd_ctl_call *x)
{
	const struct mrcd_ctl_req *r = x->req;
	struct mrcp_conn_info ci;
	int rc;

	if (!mrcd_client_owns_qp(x->sess, r->qp_connect.qpn)) {
		fail(x, -ENOENT, "args.qpn: no QP %" PRIu32 " in this client", r->qp_connect.qpn);
		return;
	}
	rc = mrcp_conn_info_decode(r->qp_connect.peer_info, MRCP_CONN_INFO_LEN, &ci);
	if (rc == 0)
		rc = mrcp_qp_connect(mrcd_dp_engine(x->w), r->qp_connect.qpn, &ci, x->now);
	if (rc == -EPROTO)
		fail(x, rc, "args.peer_info: no common protocol version or another UDP port");
	else if (rc == -EPERM)
		fail(x, rc, "the QP is not in INIT (connected already?)");
	else if (rc < 0)
		fail(x, rc, "args.peer_info: %s", rc == -EBADMSG ? "malformed connection info" : strerror(-rc));
	else
		x->result = json_object();
}

static void cmd_qp_destroy(struct mrcd_ctl_call *x)
{
	int rc = mrcd_client_qp_destroy(x->w, x->sess, x->req->qp.qpn, x->now);

	if (rc < 0)
		fail(x, rc, "args.qpn: no QP %" PRIu32 " in this client", x->req->qp.qpn);
	else
		x->result = json_object();
}

static const char *wc_status_name(uint8_t s)
{
	switch (s) {
#define X(n, d) case MRCP_WC_##n: return #n;
	MRCP_WC_STATUSES(X)
#undef X
	default: return "GENERAL_ERR";
	}
}

/* D70: the state of one of the caller's own QPs and, in ERROR, why. A QPN
 * of another client's answers as one that does not exist. */
static void cmd_qp_query(struct mrcd_ctl_call *x)
{
	uint32_t qpn = x->req->qp.qpn;
	struct mrcp_qp_info qi;

	if (!mrcd_client_owns_qp(x->sess, qpn) || mrcp_qp_info(mrcd_dp_engine(x->w), qpn, &qi) < 0) {
		fail(x, -ENOENT, "args.qpn: no QP %" PRIu32 " in this client", qpn);
		return;
	}
	x->result = json_object();
	set_u64(x->result, "qpn", qpn);
	json_object_set_new(x->result, "state", json_string(qp_state_name(qi.state)));
	json_object_set_new(x->result, "cause", json_string(mrcp_qp_err_name(qi.err.cause)));
	json_object_set_new(x->result, "status", json_string(wc_status_name(qi.err.status)));
	json_object_set_new(x->result, "reason", json_string(mrcp_qp_err_str(qi.err.cause)));
	set_u64(x->result, "msn", qi.err.msn);
	set_u64(x->result, "imm", qi.err.imm);
	set_u64(x->result, "byte_len", qi.err.byte_len);
}

/* ---- the handler table: one per row of MRCD_CTL_CMDS ---------------------------------- */

static void (*const handlers[MRCD_CTL_CMD_COUNT])(struct mrcd_ctl_call *) = {
#define X(e, n, a, r, c, p, h) [MRCD_CTL_##e] = cmd_##n,
	MRCD_CTL_CMDS(X)
#undef X
};

void mrcd_ctl_cmd_run(struct mrcd_ctl_call *x)
{
	enum mrcd_ctl_cmd c = x->req->cmd;

	if (c <= MRCD_CTL_INVALID || c >= MRCD_CTL_CMD_COUNT) {
		fail(x, -ENOENT, "command not executable here");
		return;
	}
	handlers[c](x);
}
