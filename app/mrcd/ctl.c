/* ctl.c - the control socket and the request executor (ctl.h). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <rte_log.h>
#include <rte_version.h>

#include "config_dp.h"
#include "ctl.h"
#include "dp_client.h"
#include "dp_fault.h"
#include "dp_neigh.h"
#include "dp_selftest.h"

#define CALL_TIMEOUT_MS 2000

struct client {
	int fd;
	struct mrcd_client *sess;  /* after attach: a libmrc-client session */
	char *buf;                 /* MRCD_CTL_LINE_MAX bytes */
	size_t len;
	bool overflow;             /* discarding an over-long line */
};

struct mrcd_ctl_server {
	struct mrcd_dp *dp;
	const struct mrcd_config *cfg;
	uint32_t next_session;
	int lfd;
	char path[MRCD_PATH_MAX];
	struct client c[MRCD_CTL_MAX_CLIENTS];
	uint64_t requests, errors;
};

/* ---- replies -------------------------------------------------------------- */

static char *reply_line(const struct mrcd_ctl_req *req, json_t *result, int err, const char *reason)
{
	return mrcd_ctl_format_reply(req && req->has_id, req ? req->id : 0, result, err, reason);
}

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

/* ---- executors (run on the worker) ------------------------------------------------ */

struct exec {
	const struct mrcd_ctl_req *req;
	struct mrcd_client *sess;  /* the caller's session, or NULL */
	json_t *result;
	int err;
	char reason[MRCD_CTL_REASON_MAX];
};

static void fail(struct exec *x, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail(struct exec *x, int err, const char *fmt, ...)
{
	va_list ap;

	x->err = err;
	va_start(ap, fmt);
	vsnprintf(x->reason, sizeof(x->reason), fmt, ap);
	va_end(ap);
}

static int port_ref(struct mrcd_dp *dp, struct exec *x, const struct mrcd_ctl_port *p)
{
	int i = mrcd_dp_port_lookup(dp, p->name, p->plane);

	if (i < 0) {
		if (p->name[0])
			fail(x, -ENOENT, "args.port: no port named \"%s\"", p->name);
		else
			fail(x, -ENOENT, "args.port: no plane %u (the daemon has %u)", p->plane, dp->n_ports);
	}
	return i;
}

static json_t *port_json(struct mrcd_dp *dp, unsigned i)
{
	const struct mrcd_dp_port *p = &dp->ports[i];
	const struct mrcd_dp_port_config *pc = &dp->cfg->ports[i];
	json_t *o = json_object();

	set_u64(o, "plane", i + 1);
	json_object_set_new(o, "name", json_string(p->name));
	set_u64(o, "ethdev", p->port_id);
	json_object_set_new(o, "mac", mac_json(p->mac));
	json_object_set_new(o, "ipv4", prefix_json(&pc->ipv4));
	json_object_set_new(o, "ipv6", prefix_json(&pc->ipv6));
	set_u64(o, "mtu", pc->mtu);
	json_object_set_new(o, "link", json_string(p->link_up ? "up" : "down"));
	json_object_set_new(o, "admin", json_string(p->admin_up ? "up" : "down"));
	set_u64(o, "speed_mbps", p->link_speed_mbps);
#define X(n, d) set_u64(o, #n, p->c.n);
	MRCD_DP_PORT_COUNTERS(X)
#undef X
	return o;
}

static json_t *qp_json(struct mrcd_dp *dp, uint32_t qpn, bool full)
{
	struct mrcp_qp_info qi;
	json_t *o;

	if (mrcp_qp_info(dp->eng, qpn, &qi) < 0)
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
	const struct mrcp_ev_set *evs = mrcp_qp_evs(dp->eng, qpn);
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
						 s->op == MRCD_ST_OP_MIXED ? "mixed" : "write_imm"));
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
	json_object_set_new(o, "error", json_string(s->error));
	return o;
}

static json_t *fault_rule_json(const struct mrcd_dp *dp, const struct mrcd_fault_rule *r)
{
	json_t *o = json_object();
	static const char *const dirs[] = { "tx", "rx", "both" };

	set_u64(o, "rule", r->id);
	json_object_set_new(o, "port", json_string(r->port < dp->n_ports ? dp->ports[r->port].name : "?"));
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

static void exec_worker(struct mrcd_dp *dp, void *arg)
{
	struct exec *x = arg;
	const struct mrcd_ctl_req *r = x->req;
	uint64_t now = mrcd_dp_now_ns();
	int rc, i;

	switch (r->cmd) {
	case MRCD_CTL_STATUS: {
		json_t *o = json_object(), *peers = json_array();
		unsigned nq = 0;

		for (unsigned k = 0; k < MRCD_DP_MAX_OWNERS; k++)
			nq += dp->owners[k].qpn != 0;
		set_u64(o, "pid", (uint64_t)getpid());
		json_object_set_new(o, "version", json_string(MRCD_VERSION));
		json_object_set_new(o, "uptime_s", json_real((double)(now - dp->start_ns) / 1e9));
		set_u64(o, "ports", dp->n_ports);
		unsigned up = 0;
		for (unsigned k = 0; k < dp->n_ports; k++)
			up += dp->ports[k].engine_up;
		set_u64(o, "ports_up", up);
		set_u64(o, "qps", nq);
		unsigned ncl = 0;
		for (struct mrcd_client *cl = mrcd_client_first(dp); cl; cl = cl->next)
			ncl++;
		set_u64(o, "clients", ncl);
		set_u64(o, "worker_lcore", dp->worker_lcore);
		json_object_set_new(o, "idle", json_string(dp->cfg->busy_poll ? "busy" : "adaptive"));
		json_object_set_new(o, "family", json_string(dp->family == 6 ? "ipv6" : "ipv4"));
		for (unsigned k = 0; k < dp->n_peers; k++) {
			json_t *p = json_object();
			char m[16];

			json_object_set_new(p, "node", ip_json(&dp->peers[k].node));
			snprintf(m, sizeof(m), "0x%" PRIx32, dp->peers[k].mask);
			json_object_set_new(p, "port_mask", json_string(m));
			set_u64(p, "updates", dp->peers[k].updates);
			json_object_set_new(p, "age_s", json_real((double)(now - dp->peers[k].at_ns) / 1e9));
			json_array_append_new(peers, p);
		}
		json_object_set_new(o, "peers", peers);
		x->result = o;
		break;
	}
	case MRCD_CTL_PORTS: {
		json_t *a = json_array();

		for (unsigned k = 0; k < dp->n_ports; k++)
			json_array_append_new(a, port_json(dp, k));
		x->result = a;
		break;
	}
	case MRCD_CTL_LCORES: {
		json_t *a = json_array(), *o = json_object();

		set_u64(o, "lcore", dp->worker_lcore);
		set_u64(o, "worker", dp->index);
		json_object_set_new(o, "role", json_string("worker"));
		set_u64(o, "ports", dp->n_ports);
#define X(n, d) set_u64(o, #n, dp->wc.n);
		MRCD_DP_WORKER_COUNTERS(X)
#undef X
		json_object_set_new(o, "idle_pct", json_real(now > dp->start_ns ?
			100.0 * (double)dp->wc.sleep_ns / (double)(now - dp->start_ns) : 0));
		json_array_append_new(a, o);
		x->result = a;
		break;
	}
	case MRCD_CTL_QPS: {
		json_t *a = json_array();

		for (unsigned k = 0; k < MRCD_DP_MAX_OWNERS; k++) {
			json_t *q = dp->owners[k].qpn ? qp_json(dp, dp->owners[k].qpn, false) : NULL;

			if (q)
				json_array_append_new(a, q);
		}
		x->result = a;
		break;
	}
	case MRCD_CTL_QP:
		x->result = qp_json(dp, r->qp.qpn, true);
		if (!x->result)
			fail(x, -ENOENT, "args.qpn: no QP %" PRIu32, r->qp.qpn);
		break;
	case MRCD_CTL_EVS: {
		const struct mrcp_ev_set *s = mrcp_qp_evs(dp->eng, r->qp.qpn);
		json_t *a;

		if (!s) {
			fail(x, -ENOENT, "args.qpn: no QP %" PRIu32, r->qp.qpn);
			break;
		}
		a = json_array();
		for (unsigned k = 0; k < s->n_evs; k++) {
			const struct mrcp_ev *e = &s->evs[k];
			json_t *o = json_object();
			static const char *const pools[] = { "none", "active", "backup", "out" };

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
		break;
	}
	case MRCD_CTL_COUNTERS: {
		json_t *o = json_object(), *eng = json_object(), *ports = json_object(), *w = json_object();

		mrcp_counters_foreach(dp->eng, eng_counter, eng);
		json_object_set_new(o, "engine", eng);
		for (unsigned k = 0; k < dp->n_ports; k++) {
			json_t *p = json_object(), *f = json_object(), *nb = json_object();
			struct mrcd_fault_counters fc;
			struct mrcd_neigh_counters nc;

#define X(n, d) set_u64(p, #n, dp->ports[k].c.n);
			MRCD_DP_PORT_COUNTERS(X)
#undef X
			mrcd_fault_counters_get(dp->faults, (uint8_t)k, &fc);
#define X(n, d) set_u64(f, #n, fc.n);
			MRCD_FAULT_COUNTERS(X)
#undef X
			json_object_set_new(p, "fault", f);
			mrcd_neigh_counters_get(dp->neigh, k, &nc);
#define X(n, d) set_u64(nb, #n, nc.n);
			MRCD_NEIGH_COUNTERS(X)
#undef X
			json_object_set_new(p, "neigh", nb);
			json_object_set_new(ports, dp->ports[k].name, p);
		}
		json_object_set_new(o, "ports", ports);
#define X(n, d) set_u64(w, #n, dp->wc.n);
		MRCD_DP_WORKER_COUNTERS(X)
#undef X
		json_object_set_new(o, "worker", w);
		x->result = o;
		break;
	}
	case MRCD_CTL_FAULTS: {
		struct mrcd_fault_rule rules[MRCD_FAULT_MAX_RULES];
		unsigned n = mrcd_fault_list(dp->faults, rules, MRCD_FAULT_MAX_RULES);
		json_t *a = json_array();

		for (unsigned k = 0; k < n; k++)
			json_array_append_new(a, fault_rule_json(dp, &rules[k]));
		x->result = a;
		break;
	}
	case MRCD_CTL_FAULT_SET: {
		const struct mrcd_ctl_fault *f = &r->fault_set;
		struct mrcd_fault_rule fr;
		uint32_t id;

		i = port_ref(dp, x, &f->port);
		if (i < 0)
			break;
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
		rc = mrcd_fault_add(dp->faults, &fr, &id);
		if (rc < 0) {
			fail(x, rc, rc == -ENOSPC ? "fault table full (%d rules)" : "rule rejected (%d)",
			     rc == -ENOSPC ? (int)MRCD_FAULT_MAX_RULES : rc);
			break;
		}
		x->result = json_object();
		set_u64(x->result, "rule", id);
		MRCD_LOG(NOTICE, ctl, "fault rule %" PRIu32 " set on port %s\n", id, dp->ports[i].name);
		break;
	}
	case MRCD_CTL_FAULT_CLEAR: {
		unsigned n;

		if (r->fault_clear.has_rule) {
			if (mrcd_fault_del(dp->faults, r->fault_clear.rule) < 0) {
				fail(x, -ENOENT, "args.rule: no rule %" PRIu32, r->fault_clear.rule);
				break;
			}
			n = 1;
		} else if (r->fault_clear.has_port) {
			i = port_ref(dp, x, &r->fault_clear.port);
			if (i < 0)
				break;
			n = mrcd_fault_clear_port(dp->faults, (uint8_t)i);
		} else {
			n = mrcd_fault_clear_all(dp->faults);
		}
		x->result = json_object();
		set_u64(x->result, "removed", n);
		break;
	}
	case MRCD_CTL_EV_DENY:
		rc = mrcp_qp_ev_deny(dp->eng, r->ev_deny.qpn, r->ev_deny.ev, r->ev_deny.deny, now);
		if (rc == -ENOENT)
			fail(x, rc, "no QP %" PRIu32 " or it has no EV %" PRIu32, r->ev_deny.qpn, r->ev_deny.ev);
		else if (rc < 0)
			fail(x, rc, "ev_deny: %s", strerror(-rc));
		else
			x->result = json_object();
		break;
	case MRCD_CTL_PORT_ADMIN:
		i = port_ref(dp, x, &r->port_admin.port);
		if (i < 0)
			break;
		mrcd_dp_port_admin(dp, (unsigned)i, r->port_admin.up, now);
		x->result = json_object();
		json_object_set_new(x->result, "port", json_string(dp->ports[i].name));
		json_object_set_new(x->result, "admin", json_string(r->port_admin.up ? "up" : "down"));
		MRCD_LOG(NOTICE, ctl, "port %s admin %s\n", dp->ports[i].name, r->port_admin.up ? "up" : "down");
		break;
	case MRCD_CTL_EV_PROBE: {
		struct mrcp_ip node;

		i = port_ref(dp, x, &r->ev_probe.port);
		if (i < 0)
			break;
		memset(&node, 0, sizeof(node));
		node.family = r->ev_probe.node.family;
		memcpy(node.a, r->ev_probe.node.a, 16);
		rc = mrcp_ev_probe(dp->eng, &node, (uint8_t)(i + 1), r->ev_probe.ev, now);
		if (rc == -ENOENT)
			fail(x, rc, "args.node: not a known peer (no QP to it)");
		else if (rc == -EBUSY)
			fail(x, rc, "probe rate limit: try again");
		else if (rc < 0)
			fail(x, rc, "ev_probe: %s", strerror(-rc));
		else {
			x->result = json_object();
			set_u64(x->result, "probes_recorded", dp->n_probes);
		}
		break;
	}
	case MRCD_CTL_PROBES: {
		json_t *a = json_array();
		unsigned n = dp->n_probes < MRCD_DP_PROBES ? dp->n_probes : MRCD_DP_PROBES;

		for (unsigned k = dp->n_probes - n; k < dp->n_probes; k++) {
			const struct mrcd_dp_probe *p = &dp->probes[k % MRCD_DP_PROBES];
			json_t *o = json_object();

			set_u64(o, "seq", k + 1);
			json_object_set_new(o, "node", ip_json(&p->node));
			set_u64(o, "plane", p->port);
			set_u64(o, "ev", p->ev);
			json_object_set_new(o, "ok", json_boolean(p->ok));
			json_object_set_new(o, "rtt_us", json_real((double)p->rtt_ns / 1000.0));
			json_object_set_new(o, "age_s", json_real((double)(now - p->at_ns) / 1e9));
			json_array_append_new(a, o);
		}
		x->result = a;
		break;
	}
	case MRCD_CTL_SELFTEST_LISTEN: {
		uint8_t info[MRCP_CONN_INFO_LEN];
		uint32_t id;

		rc = mrcd_st_listen(dp, r->st_listen.region_bytes, now, &id, info);
		if (rc < 0) {
			fail(x, rc, "selftest_listen: %s", strerror(-rc));
			break;
		}
		x->result = json_object();
		set_u64(x->result, "id", id);
		set_info(x->result, info);
		set_u64(x->result, "region_bytes", r->st_listen.region_bytes);
		break;
	}
	case MRCD_CTL_SELFTEST_START: {
		uint8_t info[MRCP_CONN_INFO_LEN];
		uint32_t id;

		rc = mrcd_st_start(dp, r->st_start.peer_info, r->st_start.bytes, r->st_start.msg_size,
				   r->st_start.window, (enum mrcd_st_op)r->st_start.op, now, &id, info);
		if (rc == -E2BIG) {
			fail(x, rc, "window x msg_size must fit half the peer's region (and 256 MiB)");
			break;
		}
		if (rc < 0) {
			fail(x, rc, "selftest_start: %s", strerror(-rc));
			break;
		}
		x->result = json_object();
		set_u64(x->result, "id", id);
		set_info(x->result, info);
		break;
	}
	case MRCD_CTL_SELFTEST_ACCEPT:
		rc = mrcd_st_accept(dp, r->st_accept.id, r->st_accept.peer_info, now);
		if (rc < 0)
			fail(x, rc, "selftest_accept: %s", rc == -ENOENT ? "no such selftest" :
			     rc == -EPERM ? "not a listening receiver" : strerror(-rc));
		else
			x->result = json_object();
		break;
	case MRCD_CTL_SELFTEST_RUN:
		rc = mrcd_st_run(dp, r->st.id, now);
		if (rc < 0)
			fail(x, rc, "selftest_run: %s", rc == -ENOENT ? "no such selftest" :
			     rc == -EPERM ? "not a connected sender" : strerror(-rc));
		else
			x->result = json_object();
		break;
	case MRCD_CTL_SELFTEST_STATUS: {
		struct mrcd_st_status s;

		rc = mrcd_st_status(dp, r->st.id, now, &s);
		if (rc < 0)
			fail(x, rc, "no selftest %" PRIu32, r->st.id);
		else
			x->result = st_json(&s);
		break;
	}
	case MRCD_CTL_SELFTEST_STOP:
		rc = mrcd_st_stop(dp, r->st.id, now);
		if (rc < 0)
			fail(x, rc, "no selftest %" PRIu32, r->st.id);
		else
			x->result = json_object();
		break;
	case MRCD_CTL_REG_MR: {
		uint32_t lkey, rkey, region;
		uint64_t va;

		rc = mrcd_client_reg_mr(dp, x->sess, r->reg_mr.ofs, r->reg_mr.len, r->reg_mr.access,
					&lkey, &rkey, &region, &va);
		if (rc == -EINVAL)
			fail(x, rc, "args: [ofs, ofs+len) is not inside the arena heap");
		else if (rc == -ENOSPC)
			fail(x, rc, "region table full (%u per client, or the daemon's limits.max_mrs)",
			     MRCD_CLIENT_MAX_MRS);
		else if (rc < 0)
			fail(x, rc, "reg_mr: %s", strerror(-rc));
		else {
			x->result = json_object();
			set_u64(x->result, "lkey", lkey);
			set_u64(x->result, "rkey", rkey);
			set_u64(x->result, "region", region);
			set_u64(x->result, "va", va);
		}
		break;
	}
	case MRCD_CTL_DEREG_MR:
		rc = mrcd_client_dereg_mr(dp, x->sess, r->dereg_mr.lkey);
		if (rc == -ENOENT)
			fail(x, rc, "args.lkey: not a region of this client");
		else if (rc == -EBUSY)
			fail(x, rc, "args.lkey: work requests still use the region");
		else if (rc < 0)
			fail(x, rc, "dereg_mr: %s", strerror(-rc));
		else
			x->result = json_object();
		break;
	case MRCD_CTL_QP_CREATE: {
		uint32_t qpn;

		rc = mrcd_client_qp_create(dp, x->sess, r->qp_create.sq_depth, r->qp_create.rq_depth,
					   r->qp_create.user_ctx, &qpn);
		if (rc == -ENOSPC) {
			fail(x, rc, "QP limit reached (limits.per_client.max_qps or max_qps)");
			break;
		}
		if (rc < 0) {
			fail(x, rc, "qp_create: %s", strerror(-rc));
			break;
		}
		x->result = json_object();
		set_u64(x->result, "qpn", qpn);
		__attribute__((fallthrough)); /* the info too */
	}
	case MRCD_CTL_QP_INFO: {
		uint32_t qpn = r->cmd == MRCD_CTL_QP_INFO ? r->qp.qpn :
			       (uint32_t)json_integer_value(json_object_get(x->result, "qpn"));
		struct mrcp_conn_info ci;
		uint8_t blob[MRCP_CONN_INFO_LEN];

		if (!mrcd_client_owns_qp(x->sess, qpn) || mrcp_qp_local_info(dp->eng, qpn, &ci) < 0 ||
		    mrcp_conn_info_encode(&ci, blob, sizeof(blob)) < 0) {
			json_decref(x->result);
			x->result = NULL;
			fail(x, -ENOENT, "args.qpn: no QP %" PRIu32 " in this client", qpn);
			break;
		}
		if (!x->result)
			x->result = json_object();
		set_info(x->result, blob);
		break;
	}
	case MRCD_CTL_QP_CONNECT: {
		struct mrcp_conn_info ci;

		if (!mrcd_client_owns_qp(x->sess, r->qp_connect.qpn)) {
			fail(x, -ENOENT, "args.qpn: no QP %" PRIu32 " in this client", r->qp_connect.qpn);
			break;
		}
		rc = mrcp_conn_info_decode(r->qp_connect.peer_info, MRCP_CONN_INFO_LEN, &ci);
		if (rc == 0)
			rc = mrcp_qp_connect(dp->eng, r->qp_connect.qpn, &ci, now);
		if (rc == -EPROTO)
			fail(x, rc, "args.peer_info: no common protocol version or another UDP port");
		else if (rc == -EPERM)
			fail(x, rc, "the QP is not in INIT (connected already?)");
		else if (rc < 0)
			fail(x, rc, "args.peer_info: %s", rc == -EBADMSG ? "malformed connection info" : strerror(-rc));
		else
			x->result = json_object();
		break;
	}
	case MRCD_CTL_QP_DESTROY:
		rc = mrcd_client_qp_destroy(dp, x->sess, r->qp.qpn, now);
		if (rc < 0)
			fail(x, rc, "args.qpn: no QP %" PRIu32 " in this client", r->qp.qpn);
		else
			x->result = json_object();
		break;
	default:
		fail(x, -ENOENT, "command not executable here");
		break;
	}
}

/* Commands that act on the caller's client session. */
static bool session_cmd(enum mrcd_ctl_cmd cmd)
{
	switch (cmd) {
	case MRCD_CTL_REG_MR:
	case MRCD_CTL_DEREG_MR:
	case MRCD_CTL_QP_CREATE:
	case MRCD_CTL_QP_INFO:
	case MRCD_CTL_QP_CONNECT:
	case MRCD_CTL_QP_DESTROY:
		return true;
	default:
		return false;
	}
}

/* ---- several workers (D63) ---------------------------------------------------------- */

static void run_on(struct mrcd_dp *w, struct exec *x)
{
	if (mrcd_dp_call(w, exec_worker, x, CALL_TIMEOUT_MS) == -ETIMEDOUT)
		fail(x, -ETIMEDOUT, "worker %u did not take the request within %u ms", w->index,
		     CALL_TIMEOUT_MS);
}

/* Run @x on worker @k as well and hand back its own result (or NULL with
 * x->err set from it). */
static json_t *run_more(struct mrcd_dp *dp, unsigned k, struct exec *x)
{
	struct exec y = { .req = x->req, .sess = x->sess };

	run_on(dp->w[k], &y);
	if (y.err && !x->err) {
		x->err = y.err;
		memcpy(x->reason, y.reason, sizeof(x->reason));
	}
	return y.result;
}

/* Add every integer of @from to the same key of @to, recursively through
 * objects (counters of several workers). */
static void sum_counters(json_t *to, const json_t *from)
{
	const char *k;
	json_t *v;

	json_object_foreach((json_t *)(uintptr_t)from, k, v) {
		json_t *t = json_object_get(to, k);

		if (json_is_integer(v) && json_is_integer(t))
			json_integer_set(t, json_integer_value(t) + json_integer_value(v));
		else if (json_is_object(v) && json_is_object(t))
			sum_counters(t, v);
	}
}

/* Several workers' status: QPs and clients add up; a peer's port mask is
 * the one its latest update left in any worker's engine. */
static void status_merge(json_t *to, const json_t *from)
{
	static const char *const keys[] = { "qps", "clients" };
	json_t *peers = json_object_get(to, "peers"), *p;
	size_t i;

	for (unsigned k = 0; k < 2; k++) {
		json_t *t = json_object_get(to, keys[k]);

		json_integer_set(t, json_integer_value(t) + json_integer_value(json_object_get(from, keys[k])));
	}
	json_array_foreach(json_object_get(from, "peers"), i, p) {
		size_t j;
		json_t *q;
		bool found = false;

		json_array_foreach(peers, j, q) {
			if (!json_equal(json_object_get(q, "node"), json_object_get(p, "node")))
				continue;
			found = true;
			if (json_real_value(json_object_get(p, "age_s")) < json_real_value(json_object_get(q, "age_s")))
				json_array_set(peers, j, p);
			break;
		}
		if (!found)
			json_array_append(peers, p);
	}
}

/* Fold one more worker's answer into the first one's. */
static void combine(enum mrcd_ctl_cmd cmd, json_t *to, json_t *from)
{
	switch (cmd) {
	case MRCD_CTL_QPS:
	case MRCD_CTL_LCORES:
	case MRCD_CTL_PROBES: /* one list */
		json_array_extend(to, from);
		break;
	case MRCD_CTL_PORTS: /* the same ports: their counters add up */
		for (size_t i = 0; i < json_array_size(from); i++) {
			json_t *t = json_array_get(to, i), *f = json_array_get(from, i);

#define X(c, d) json_integer_set(json_object_get(t, #c), json_integer_value(json_object_get(t, #c)) + \
				 json_integer_value(json_object_get(f, #c)));
			MRCD_DP_PORT_COUNTERS(X)
#undef X
		}
		break;
	case MRCD_CTL_STATUS:
		status_merge(to, from);
		break;
	default: /* counters */
		sum_counters(to, from);
		break;
	}
}

/* The worker a new selftest goes to: the one asked for, else the one with
 * the fewest QPs (a racy read of the owners table is good enough). */
static struct mrcd_dp *pick_worker(struct mrcd_dp *dp, int want)
{
	struct mrcd_dp *best = dp;
	unsigned best_n = UINT32_MAX;

	if (want >= 0)
		return (unsigned)want < dp->n_workers ? dp->w[want] : NULL;
	for (unsigned k = 0; k < dp->n_workers; k++) {
		unsigned n = 0;

		for (unsigned i = 0; i < MRCD_DP_MAX_OWNERS; i++)
			n += dp->w[k]->owners[i].qpn != 0;
		if (n < best_n) {
			best = dp->w[k];
			best_n = n;
		}
	}
	return best;
}

/* Selftest ids name their worker: id = local id x workers + worker. */
static void st_id_out(struct mrcd_dp *dp, const struct mrcd_dp *w, json_t *o)
{
	json_t *id = o ? json_object_get(o, "id") : NULL;

	if (json_is_integer(id))
		json_integer_set(id, json_integer_value(id) * dp->n_workers + w->index);
}

/* Run a request on the worker(s) it concerns and combine their answers. */
static void dispatch(struct mrcd_dp *dp, struct exec *x)
{
	const struct mrcd_ctl_req *r = x->req;
	unsigned n = dp->n_workers;
	struct mrcd_dp *w;

	if (n == 1) {
		run_on(dp, x);
		return;
	}
	switch (r->cmd) {
	case MRCD_CTL_QP:
	case MRCD_CTL_EVS:
	case MRCD_CTL_EV_DENY: {
		uint32_t qpn = r->cmd == MRCD_CTL_EV_DENY ? r->ev_deny.qpn : r->qp.qpn;

		w = mrcd_dp_of_qpn(dp, qpn);
		if (!w)
			fail(x, -ENOENT, "args.qpn: no QP %" PRIu32, qpn);
		else
			run_on(w, x);
		return;
	}
	case MRCD_CTL_QPS:
	case MRCD_CTL_LCORES:
	case MRCD_CTL_PROBES:
	case MRCD_CTL_STATUS:
	case MRCD_CTL_PORTS:
	case MRCD_CTL_COUNTERS:
		run_on(dp, x);
		for (unsigned k = 1; k < n && !x->err; k++) {
			json_t *more = run_more(dp, k, x);

			if (more && x->result)
				combine(r->cmd, x->result, more);
			json_decref(more);
		}
		if (r->cmd == MRCD_CTL_STATUS && x->result)
			set_u64(x->result, "workers", n);
		return;
	case MRCD_CTL_FAULT_SET:
	case MRCD_CTL_FAULT_CLEAR:
	case MRCD_CTL_PORT_ADMIN:
		/* every worker's fault stage and engine; the ids stay in step */
		run_on(dp, x);
		for (unsigned k = 1; k < n && !x->err; k++)
			json_decref(run_more(dp, k, x));
		return;
	case MRCD_CTL_EV_PROBE:
		/* from the first engine with a QP to that node */
		for (unsigned k = 0; k < n; k++) {
			struct exec y = { .req = r, .sess = x->sess };

			run_on(dp->w[k], &y);
			if (y.err != -ENOENT || k == n - 1) {
				*x = y;
				return;
			}
		}
		return;
	case MRCD_CTL_SELFTEST_LISTEN:
	case MRCD_CTL_SELFTEST_START:
		w = pick_worker(dp, r->cmd == MRCD_CTL_SELFTEST_LISTEN ? r->st_listen.worker : r->st_start.worker);
		if (!w) {
			fail(x, -EINVAL, "args.worker: the daemon has %u workers", n);
			return;
		}
		run_on(w, x);
		st_id_out(dp, w, x->result);
		return;
	case MRCD_CTL_SELFTEST_ACCEPT:
	case MRCD_CTL_SELFTEST_RUN:
	case MRCD_CTL_SELFTEST_STATUS:
	case MRCD_CTL_SELFTEST_STOP: {
		struct mrcd_ctl_req local = *r;
		uint32_t *id = r->cmd == MRCD_CTL_SELFTEST_ACCEPT ? &local.st_accept.id : &local.st.id;

		w = dp->w[*id % n];
		*id /= n;
		x->req = &local;
		run_on(w, x);
		x->req = r;
		st_id_out(dp, w, x->result);
		return;
	}
	default:
		/* a session's commands (execute() refused them without one) run
		 * where its QPs and regions are */
		run_on(session_cmd(r->cmd) ? x->sess->dp : dp, x);
		return;
	}
}

static int log_level_of(const char *s)
{
	static const char *const names[] = { "", "emerg", "alert", "crit", "err", "warning",
					     "notice", "info", "debug" };

	for (int i = 1; i < (int)(sizeof(names) / sizeof(names[0])); i++)
		if (strcmp(s, names[i]) == 0)
			return i; /* RTE_LOG_EMERG = 1 ... RTE_LOG_DEBUG = 8 */
	return -1;
}

static json_t *execute(struct mrcd_dp *dp, const struct mrcd_ctl_req *req, struct mrcd_client *sess,
		       int *err, char *reason, size_t reason_len)
{
	struct exec x = { .req = req, .sess = sess };

	switch (req->cmd) {
	case MRCD_CTL_PROTO_VERSION: {
		json_t *o = json_object();

		set_u64(o, "protocol", MRCD_CTL_PROTO_VERSION);
		json_object_set_new(o, "daemon", json_string(MRCD_VERSION));
		json_object_set_new(o, "dpdk", json_string(rte_version()));
		*err = 0;
		return o;
	}
	case MRCD_CTL_LOG_LEVEL: {
		int lvl = log_level_of(req->log_level.level);
		const char *pat = req->log_level.type[0] ? req->log_level.type : "mrcd.*";

		if (lvl < 0 || rte_log_set_level_pattern(pat, (uint32_t)lvl) < 0) {
			*err = -EINVAL;
			snprintf(reason, reason_len, "args.level: cannot set \"%s\" for %s", req->log_level.level, pat);
			return NULL;
		}
		json_t *o = json_object();

		json_object_set_new(o, "type", json_string(pat));
		json_object_set_new(o, "level", json_string(req->log_level.level));
		*err = 0;
		return o;
	}
	case MRCD_CTL_ATTACH:
		*err = -EPERM;
		snprintf(reason, reason_len, "attach: only on the control socket");
		return NULL;
	default:
		break;
	}
	if (session_cmd(req->cmd) && !sess) {
		*err = -EPERM;
		snprintf(reason, reason_len, "%s: needs a client session (attach first)",
			 mrcd_ctl_cmd_name(req->cmd));
		return NULL;
	}
	dispatch(dp, &x);
	*err = x.err;
	if (x.err) {
		snprintf(reason, reason_len, "%s", x.reason);
		json_decref(x.result);
		return NULL;
	}
	if (!x.result) {
		*err = -ENOMEM;
		snprintf(reason, reason_len, "out of memory");
	}
	return x.result;
}

json_t *mrcd_ctl_execute(struct mrcd_dp *dp, const struct mrcd_ctl_req *req,
			 int *err, char *reason, size_t reason_len)
{
	return execute(dp, req, NULL, err, reason, reason_len);
}

/* ---- the socket -------------------------------------------------------------------- */

int mrcd_ctl_open(struct mrcd_dp *dp, const struct mrcd_config *cfg,
		  struct mrcd_ctl_server **out, char *err, size_t errlen)
{
	struct mrcd_ctl_server *s = calloc(1, sizeof(*s));
	struct sockaddr_un a;
	int fd, rc;

	*out = NULL;
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (unsigned i = 0; i < MRCD_CTL_MAX_CLIENTS; i++)
		s->c[i].fd = -1;
	s->dp = dp;
	s->cfg = cfg;
	s->lfd = -1;
	snprintf(s->path, sizeof(s->path), "%s", cfg->control.socket);
	memset(&a, 0, sizeof(a));
	a.sun_family = AF_UNIX;
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", s->path);

	/* a live socket means another daemon: refuse; a dead one is replaced */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0) {
		close(fd);
		snprintf(err, errlen, "control.socket: %s: another daemon is listening there", s->path);
		free(s);
		return -EADDRINUSE;
	}
	if (fd >= 0)
		close(fd);
	unlink(s->path);
	{
		/* create the socket's directory (one level, e.g. /run/mrcd) */
		char dir[MRCD_PATH_MAX];
		char *slash;

		snprintf(dir, sizeof(dir), "%s", s->path);
		slash = strrchr(dir, '/');
		if (slash && slash != dir) {
			*slash = 0;
			if (mkdir(dir, 0755) < 0 && errno != EEXIST)
				MRCD_LOG(WARNING, ctl, "mkdir %s: %s\n", dir, strerror(errno));
		}
	}

	s->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s->lfd < 0 || bind(s->lfd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(s->lfd, 16) < 0) {
		rc = -errno;
		snprintf(err, errlen, "control.socket: %s: %s", s->path, strerror(errno));
		if (s->lfd >= 0)
			close(s->lfd);
		free(s);
		return rc;
	}
	if (chmod(s->path, cfg->control.mode) < 0) {
		rc = -errno;
		snprintf(err, errlen, "control.mode: chmod %s: %s", s->path, strerror(errno));
		goto fail;
	}
	if (cfg->control.group[0]) {
		struct group *g = getgrnam(cfg->control.group);

		if (!g) {
			rc = -ENOENT;
			snprintf(err, errlen, "control.group: no group \"%s\"", cfg->control.group);
			goto fail;
		}
		if (chown(s->path, (uid_t)-1, g->gr_gid) < 0) {
			rc = -errno;
			snprintf(err, errlen, "control.group: chown %s: %s", s->path, strerror(errno));
			goto fail;
		}
	}
	*out = s;
	return 0;
fail:
	close(s->lfd);
	unlink(s->path);
	free(s);
	return rc;
}

static void sess_attach_fn(struct mrcd_dp *dp, void *arg)
{
	struct mrcd_client *c = arg;

	if (mrcd_client_attach(dp, c) < 0)
		c->id = 0; /* tells the caller */
}

static void sess_detach_fn(struct mrcd_dp *dp, void *arg)
{
	mrcd_client_detach(dp, arg, mrcd_dp_now_ns());
}

/* The connection is gone: a session's QPs are destroyed (their peers see the
 * QP error), its regions deregistered and its arena unmapped. */
static void client_close(struct client *c)
{
	if (c->sess) {
		MRCD_LOG(INFO, ctl, "client %u detached\n", c->sess->id);
		/* the arena stays mapped until the worker has let go of it */
		while (mrcd_dp_call(c->sess->dp, sess_detach_fn, c->sess, CALL_TIMEOUT_MS) == -ETIMEDOUT)
			;
		mrcd_client_free(c->sess);
		c->sess = NULL;
	}
	if (c->fd >= 0)
		close(c->fd);
	free(c->buf);
	c->fd = -1;
	c->buf = NULL;
	c->len = 0;
	c->overflow = false;
}

static void send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;    /* the client went away or its buffer stays full (SO_SNDTIMEO) */
		p += w;
		n -= (size_t)w;
	}
}

/* attach: create the session's arena, hand it over with the reply. */
static void handle_attach(struct mrcd_ctl_server *s, struct client *c, const struct mrcd_ctl_req *req)
{
	char reason[MRCD_CTL_REASON_MAX] = "";
	struct mrcd_client *sess = NULL;
	int arena_fd = -1, err = 0;
	json_t *res = NULL;
	char *out;

	if (c->sess) {
		err = -EBUSY;
		snprintf(reason, sizeof(reason), "attach: this connection is attached already (client %u)", c->sess->id);
	} else if (req->attach.abi != MRC_SHM_ABI_VERSION) {
		err = -EPROTO;
		snprintf(reason, sizeof(reason), "attach: client ABI %u, this daemon speaks ABI %u: "
			 "rebuild the client against this mrcd's libmrc-client", req->attach.abi, MRC_SHM_ABI_VERSION);
	} else {
		err = mrcd_client_create(s->dp->cfg, ++s->next_session, req->attach.heap_bytes,
					 req->attach.sq_depth, req->attach.rq_depth, req->attach.cq_depth,
					 &sess, &arena_fd, reason, sizeof(reason));
		if (err == 0) {
			/* D63: sessions go round the workers; all of one session's
			 * QPs and regions live in its worker's engine */
			sess->dp = s->dp->w[s->next_session % s->dp->n_workers];
			if (mrcd_dp_call(sess->dp, sess_attach_fn, sess, CALL_TIMEOUT_MS) == -ETIMEDOUT) {
				err = -ETIMEDOUT;
				snprintf(reason, sizeof(reason), "attach: the worker did not take the session within %u ms",
					 CALL_TIMEOUT_MS);
				mrcd_client_free(sess);
				sess = NULL;
			} else if (sess->id == 0) {
				err = -ENOMEM;
				snprintf(reason, sizeof(reason), "attach: out of memory");
				mrcd_client_free(sess);
				sess = NULL;
			}
		}
	}
	if (err == 0) {
		res = json_object();
		set_u64(res, "client", sess->id);
		set_u64(res, "abi", MRC_SHM_ABI_VERSION);
		set_u64(res, "arena_bytes", sess->size);
		set_u64(res, "va_base", sess->va_base);
		set_u64(res, "heap_ofs", sess->view.layout.heap_ofs);
		set_u64(res, "heap_len", sess->view.layout.heap_len);
		set_u64(res, "sq_ring", MRCD_CLIENT_SQ);
		set_u64(res, "rq_ring", MRCD_CLIENT_RQ);
		set_u64(res, "cq_ring", MRCD_CLIENT_CQ);
		json_object_set_new(res, "fds", json_pack("[sss]", "arena", "cq_event", "doorbell"));
	}
	out = reply_line(req, res, err, reason);
	json_decref(res);
	if (out && err == 0) {
		int fds[3] = { arena_fd, sess->cq_efd, sess->dp->doorbell };
		char cbuf[CMSG_SPACE(sizeof(fds))];
		struct iovec iov = { out, strlen(out) };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
		struct cmsghdr *cm;

		memset(cbuf, 0, sizeof(cbuf));
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(fds));
		memcpy(CMSG_DATA(cm), fds, sizeof(fds));
		ssize_t w = sendmsg(c->fd, &mh, MSG_NOSIGNAL);

		if (w > 0 && (size_t)w < iov.iov_len)
			send_all(c->fd, out + w, iov.iov_len - (size_t)w);
		c->sess = sess;
		MRCD_LOG(INFO, ctl, "client %u attached: arena %llu bytes\n", sess->id,
			 (unsigned long long)sess->size);
	} else if (out) {
		send_all(c->fd, out, strlen(out));
	}
	free(out);
	if (arena_fd >= 0)
		close(arena_fd);
}

static void handle_line(struct mrcd_ctl_server *s, struct client *c, const char *line, size_t len)
{
	struct mrcd_ctl_req req;
	char reason[MRCD_CTL_REASON_MAX] = "";
	json_t *res = NULL;
	int err;
	char *out;

	s->requests++;
	memset(&req, 0, sizeof(req));
	err = mrcd_ctl_parse(line, len, &req, reason, sizeof(reason));
	if (err == 0 && req.cmd == MRCD_CTL_ATTACH) {
		handle_attach(s, c, &req);
		return;
	}
	if (err == 0)
		res = execute(s->dp, &req, c->sess, &err, reason, sizeof(reason));
	if (err)
		s->errors++;
	out = reply_line(&req, res, err, reason);
	json_decref(res);
	if (out) {
		send_all(c->fd, out, strlen(out));
		free(out);
	}
}

static void client_read(struct mrcd_ctl_server *s, struct client *c)
{
	char tmp[4096];
	ssize_t n = recv(c->fd, tmp, sizeof(tmp), 0);

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		client_close(c);
		return;
	}
	for (ssize_t k = 0; k < n; k++) {
		if (tmp[k] == '\n') {
			if (c->overflow) {
				struct mrcd_ctl_req none = { 0 };
				char *out = reply_line(&none, NULL, -E2BIG, "request line longer than 65536 bytes");

				if (out) {
					send_all(c->fd, out, strlen(out));
					free(out);
				}
				c->overflow = false;
			} else if (c->len) {
				handle_line(s, c, c->buf, c->len);
			}
			c->len = 0;
			if (c->fd < 0)
				return;
			continue;
		}
		if (c->overflow)
			continue;
		if (c->len + 1 >= MRCD_CTL_LINE_MAX) {
			c->overflow = true;
			c->len = 0;
			continue;
		}
		c->buf[c->len++] = tmp[k];
	}
}

void mrcd_ctl_serve(struct mrcd_ctl_server *s, int timeout_ms)
{
	struct pollfd pfd[MRCD_CTL_MAX_CLIENTS + 1];
	struct client *who[MRCD_CTL_MAX_CLIENTS + 1];
	unsigned n = 0;

	pfd[n].fd = s->lfd;
	pfd[n].events = POLLIN;
	who[n++] = NULL;
	for (unsigned i = 0; i < MRCD_CTL_MAX_CLIENTS; i++)
		if (s->c[i].fd >= 0) {
			pfd[n].fd = s->c[i].fd;
			pfd[n].events = POLLIN;
			who[n++] = &s->c[i];
		}
	if (poll(pfd, n, timeout_ms) <= 0)
		return;
	for (unsigned k = 1; k < n; k++)
		if (pfd[k].revents & (POLLIN | POLLHUP | POLLERR))
			client_read(s, who[k]);
	if (pfd[0].revents & POLLIN) {
		int fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC);
		struct timeval tv = { 1, 0 };
		unsigned i;

		if (fd < 0)
			return;
		for (i = 0; i < MRCD_CTL_MAX_CLIENTS; i++)
			if (s->c[i].fd < 0)
				break;
		if (i == MRCD_CTL_MAX_CLIENTS) {
			struct mrcd_ctl_req none = { 0 };
			char *out = reply_line(&none, NULL, -EBUSY, "too many control connections");

			if (out) {
				send_all(fd, out, strlen(out));
				free(out);
			}
			close(fd);
			return;
		}
		s->c[i].buf = malloc(MRCD_CTL_LINE_MAX);
		if (!s->c[i].buf) {
			close(fd);
			return;
		}
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		s->c[i].fd = fd;
		s->c[i].len = 0;
	}
}

void mrcd_ctl_close(struct mrcd_ctl_server *s)
{
	if (!s)
		return;
	for (unsigned i = 0; i < MRCD_CTL_MAX_CLIENTS; i++)
		if (s->c[i].fd >= 0) {
			static const char bye[] = "{\"v\":1,\"event\":\"shutdown\"}\n";

			send_all(s->c[i].fd, bye, sizeof(bye) - 1);
			client_close(&s->c[i]);
		}
	if (s->lfd >= 0)
		close(s->lfd);
	unlink(s->path);
	free(s);
}
