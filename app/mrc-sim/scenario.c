/* scenario.c - loads a mrc-sim scenario file (YAML, libyaml document API)
 * into struct sim_scenario. Every key is checked: an unknown key, a wrong
 * type or an out-of-range value is an error reported as file:line. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "sim.h"

struct ctx {
	const char *path;
	yaml_document_t *doc;
	int errors;
};

void sim_scenario_defaults(struct sim_scenario *s)
{
	memset(s, 0, sizeof(*s));
	s->seed = 1;
	s->hosts = 8;
	s->planes = 2;
	s->hosts_per_t0 = 4;
	s->t1_per_plane = 2;
	s->link_gbps = 100;
	s->delay_ns = 500;
	s->buffer_kb = 512;
	s->trim = true;
	s->ecn_kmin_kb = 64;
	s->ecn_kmax_kb = 256;
	s->ecn_lasthop = true;
	s->wl = SIM_WL_P2P;
	s->bytes = 4u << 20;
	s->qps = 4;
	s->msg_kb = 64;
	s->src = 0;
	s->dst = UINT32_MAX; /* default: the last host */
	s->senders = 7;
	s->steps = 1;
	s->duration_ns = 100000000ull;
	s->reconverge_ns = 2000000000ull; /* 2 s: BGP / ECMP fabrics */
	s->ev_backup = UINT32_MAX;
}

uint32_t sim_scenario_flows(const struct sim_scenario *s)
{
	uint32_t R = s->ranks ? s->ranks : s->hosts;

	switch (s->wl) {
	case SIM_WL_P2P:
		return 1;
	case SIM_WL_INCAST:
		return s->senders + 1;
	case SIM_WL_ALLREDUCE:
		return R;
	case SIM_WL_ALLTOALL:
		return R * (R - 1);
	default:
		return s->hosts;
	}
}

static void err(struct ctx *c, const yaml_node_t *n, const char *msg, const char *what)
{
	fprintf(stderr, "%s:%lu: %s%s%s\n", c->path, n ? (unsigned long)n->start_mark.line + 1 : 0ul,
		msg, what ? ": " : "", what ? what : "");
	c->errors++;
}

static const char *scalar(struct ctx *c, const yaml_node_t *n)
{
	if (n->type != YAML_SCALAR_NODE) {
		err(c, n, "expected a scalar", NULL);
		return NULL;
	}
	return (const char *)n->data.scalar.value;
}

static bool get_u64(struct ctx *c, const yaml_node_t *n, uint64_t lo, uint64_t hi, uint64_t *out)
{
	const char *v = scalar(c, n);
	char *end;
	unsigned long long x;

	if (v == NULL)
		return false;
	errno = 0;
	x = strtoull(v, &end, 0);
	if (errno != 0 || end == v || *end != '\0' || v[0] == '-' || x < lo || x > hi) {
		err(c, n, "bad or out-of-range integer", v);
		return false;
	}
	*out = x;
	return true;
}

static void get_u32(struct ctx *c, const yaml_node_t *n, uint32_t lo, uint32_t hi, uint32_t *out)
{
	uint64_t x;

	if (get_u64(c, n, lo, hi, &x))
		*out = (uint32_t)x;
}

static void get_bool(struct ctx *c, const yaml_node_t *n, bool *out)
{
	const char *v = scalar(c, n);

	if (v == NULL)
		return;
	if (!strcmp(v, "true") || !strcmp(v, "yes") || !strcmp(v, "on"))
		*out = true;
	else if (!strcmp(v, "false") || !strcmp(v, "no") || !strcmp(v, "off"))
		*out = false;
	else
		err(c, n, "expected true or false", v);
}

static void get_double(struct ctx *c, const yaml_node_t *n, double lo, double hi, double *out)
{
	const char *v = scalar(c, n);
	char *end;
	double x;

	if (v == NULL)
		return;
	x = strtod(v, &end);
	if (end == v || *end != '\0' || !(x >= lo && x <= hi)) {
		err(c, n, "bad or out-of-range number", v);
		return;
	}
	*out = x;
}

static void load_workload(struct ctx *c, const yaml_node_t *m, struct sim_scenario *s)
{
	if (m->type != YAML_MAPPING_NODE) {
		err(c, m, "workload: expected a mapping", NULL);
		return;
	}
	for (yaml_node_pair_t *pr = m->data.mapping.pairs.start; pr < m->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = yaml_document_get_node(c->doc, pr->key);
		yaml_node_t *v = yaml_document_get_node(c->doc, pr->value);
		const char *key = scalar(c, k);

		if (key == NULL)
			continue;
		if (!strcmp(key, "type")) {
			const char *t = scalar(c, v);
			if (t && !strcmp(t, "p2p"))
				s->wl = SIM_WL_P2P;
			else if (t && !strcmp(t, "permutation"))
				s->wl = SIM_WL_PERMUTATION;
			else if (t && !strcmp(t, "incast"))
				s->wl = SIM_WL_INCAST;
			else if (t && !strcmp(t, "allreduce_ring"))
				s->wl = SIM_WL_ALLREDUCE;
			else if (t && !strcmp(t, "alltoall"))
				s->wl = SIM_WL_ALLTOALL;
			else if (t)
				err(c, v, "workload type must be p2p, permutation, incast, allreduce_ring or alltoall", t);
		} else if (!strcmp(key, "bytes")) {
			get_u64(c, v, 1, 1ull << 34, &s->bytes);
		} else if (!strcmp(key, "qps")) {
			get_u32(c, v, 1, 64, &s->qps);
		} else if (!strcmp(key, "msg_kb")) {
			get_u32(c, v, 1, 1u << 20, &s->msg_kb);
		} else if (!strcmp(key, "src")) {
			get_u32(c, v, 0, 65535, &s->src);
		} else if (!strcmp(key, "dst")) {
			get_u32(c, v, 0, 65535, &s->dst);
		} else if (!strcmp(key, "senders")) {
			get_u32(c, v, 1, 4096, &s->senders);
		} else if (!strcmp(key, "ranks")) {
			get_u32(c, v, 2, 4096, &s->ranks);
		} else if (!strcmp(key, "steps")) {
			get_u32(c, v, 1, SIM_MAX_STEPS, &s->steps);
		} else if (!strcmp(key, "mapping")) {
			const char *t = scalar(c, v);
			if (t && (!strcmp(t, "shift") || !strcmp(t, "random")))
				s->perm_random = !strcmp(t, "random");
			else if (t)
				err(c, v, "mapping must be shift or random", t);
		} else if (!strcmp(key, "shared_qps")) {
			get_bool(c, v, &s->shared_qps);
		} else if (!strcmp(key, "compute_us")) {
			uint64_t us;
			if (get_u64(c, v, 0, 1000000000ull, &us))
				s->compute_ns = us * 1000;
		} else {
			err(c, k, "unknown workload key", key);
		}
	}
}

static const struct {
	const char *name;
	enum sim_fail_kind kind;
} fail_kinds[] = {
	{"link_down", SIM_FAIL_LINK_DOWN}, {"link_up", SIM_FAIL_LINK_UP},
	{"switch_down", SIM_FAIL_SWITCH_DOWN}, {"blackhole", SIM_FAIL_BLACKHOLE},
	{"gray", SIM_FAIL_GRAY}, {"slow", SIM_FAIL_SLOW}, {"flap", SIM_FAIL_FLAP},
	{"ev_drop", SIM_FAIL_EV_DROP}, {"switch_blackhole", SIM_FAIL_SWITCH_BLACKHOLE},
	{"host_pause", SIM_FAIL_HOST_PAUSE},
};

static void load_failure(struct ctx *c, const yaml_node_t *m, struct sim_failure *f)
{
	bool have_kind = false, have_at = false, have_plane = false, have_loss = false, have_factor = false;
	bool have_dir = false, is_link, is_switch;

	f->plane = f->t0 = f->t1 = f->host = f->pod = f->t2 = -1;
	f->factor = 1.0;
	if (m->type != YAML_MAPPING_NODE) {
		err(c, m, "failure: expected a mapping", NULL);
		return;
	}
	for (yaml_node_pair_t *pr = m->data.mapping.pairs.start; pr < m->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = yaml_document_get_node(c->doc, pr->key);
		yaml_node_t *v = yaml_document_get_node(c->doc, pr->value);
		const char *key = scalar(c, k);
		uint64_t us;
		uint32_t x;

		if (key == NULL)
			continue;
		if (!strcmp(key, "at_us")) {
			if (get_u64(c, v, 0, 1ull << 40, &us))
				f->at_ns = us * 1000;
			have_at = true;
		} else if (!strcmp(key, "kind")) {
			const char *t = scalar(c, v);
			size_t i;

			have_kind = true;
			for (i = 0; t && i < sizeof(fail_kinds) / sizeof(fail_kinds[0]); i++)
				if (!strcmp(t, fail_kinds[i].name))
					break;
			if (t && i == sizeof(fail_kinds) / sizeof(fail_kinds[0]))
				err(c, v, "kind must be link_down, link_up, switch_down, switch_blackhole, blackhole, "
					  "gray, slow, flap, ev_drop or host_pause", t);
			else if (t)
				f->kind = fail_kinds[i].kind;
		} else if (!strcmp(key, "plane")) {
			x = 0;
			get_u32(c, v, 0, MRCP_MAX_PORTS - 1, &x);
			f->plane = (int)x;
			have_plane = true;
		} else if (!strcmp(key, "t0") || !strcmp(key, "t1") || !strcmp(key, "t2") || !strcmp(key, "host") ||
			   !strcmp(key, "pod")) {
			x = 0;
			get_u32(c, v, 0, 65535, &x);
			*(key[0] == 'h' ? &f->host : key[0] == 'p' ? &f->pod : key[1] == '0' ? &f->t0 :
			  key[1] == '1' ? &f->t1 : &f->t2) = (int)x;
		} else if (!strcmp(key, "loss_pct")) {
			get_double(c, v, 0, 100, &f->loss_pct);
			have_loss = true;
		} else if (!strcmp(key, "factor")) {
			get_double(c, v, 1, 1e6, &f->factor);
			have_factor = true;
		} else if (!strcmp(key, "period_us")) {
			if (get_u64(c, v, 1, 1ull << 40, &us))
				f->period_ns = us * 1000;
		} else if (!strcmp(key, "duration_us")) {
			if (get_u64(c, v, 1, 1ull << 40, &us))
				f->duration_ns = us * 1000;
		} else if (!strcmp(key, "dir")) {
			const char *t = scalar(c, v);

			have_dir = true;
			if (t && !strcmp(t, "up"))
				f->dir = 1;
			else if (t && !strcmp(t, "down"))
				f->dir = 2;
			else if (t && strcmp(t, "both"))
				err(c, v, "dir must be both, up or down", t);
		} else if (!strcmp(key, "flow")) {
			get_u32(c, v, 0, 1u << 24, &f->flow);
		} else if (!strcmp(key, "ev_index")) {
			get_u32(c, v, 0, 65535, &f->ev_index);
		} else {
			err(c, k, "unknown failure key", key);
		}
	}
	is_switch = f->kind == SIM_FAIL_SWITCH_DOWN || f->kind == SIM_FAIL_SWITCH_BLACKHOLE;
	is_link = !is_switch && f->kind != SIM_FAIL_EV_DROP && f->kind != SIM_FAIL_HOST_PAUSE;
	if (!have_kind || !have_at)
		err(c, m, "failure needs at_us and kind", NULL);
	else if (f->kind == SIM_FAIL_HOST_PAUSE) {
		if (have_plane || f->t0 >= 0 || f->t1 >= 0 || f->host < 0 || f->duration_ns == 0 ||
		    (f->period_ns != 0 && f->period_ns <= f->duration_ns))
			err(c, m, "host_pause takes host and duration_us, and period_us > duration_us to repeat; "
				  "no plane or switch", NULL);
	} else if (f->kind == SIM_FAIL_EV_DROP) {
		if (have_plane || f->t0 >= 0 || f->t1 >= 0 || f->host >= 0 || !have_loss)
			err(c, m, "ev_drop takes loss_pct, flow and ev_index (the EV's plane is its own), "
				  "no plane or link", NULL);
	} else if (!have_plane)
		err(c, m, "failure needs plane", NULL);
	else if (is_switch && ((f->t0 >= 0) == (f->t1 >= 0) || f->host >= 0 || f->pod >= 0 || f->t2 >= 0))
		err(c, m, "switch_down and switch_blackhole need exactly one of t0, t1", NULL);
	else if (is_link &&
		 !((f->t0 >= 0 && f->t1 >= 0 && f->host < 0 && f->pod < 0 && f->t2 < 0) ||
		   (f->host >= 0 && f->t0 < 0 && f->t1 < 0 && f->pod < 0 && f->t2 < 0) ||
		   (f->pod >= 0 && f->t1 >= 0 && f->t2 >= 0 && f->t0 < 0 && f->host < 0)))
		err(c, m, "a link is t0 + t1, host, or pod + t1 + t2", NULL);
	else if (f->kind == SIM_FAIL_GRAY && !have_loss)
		err(c, m, "gray needs loss_pct", NULL);
	else if (f->kind == SIM_FAIL_SLOW && !have_factor)
		err(c, m, "slow needs factor (>= 1)", NULL);
	else if (f->kind == SIM_FAIL_FLAP && (f->period_ns < 2000 || f->duration_ns == 0))
		err(c, m, "flap needs period_us >= 2 and duration_us", NULL);
	if (f->kind != SIM_FAIL_FLAP && f->kind != SIM_FAIL_HOST_PAUSE && (f->period_ns || f->duration_ns))
		err(c, m, "period_us and duration_us are for flap and host_pause only", NULL);
	if (have_dir && f->kind != SIM_FAIL_BLACKHOLE)
		err(c, m, "dir is for blackhole only", NULL);
	if (have_loss && f->kind != SIM_FAIL_GRAY && f->kind != SIM_FAIL_EV_DROP)
		err(c, m, "loss_pct is for gray and ev_drop only", NULL);
	if (have_factor && f->kind != SIM_FAIL_SLOW)
		err(c, m, "factor is for slow only", NULL);
}

/* Cross-key checks, after the whole file is read. */
static void validate(struct ctx *c, const yaml_node_t *root, struct sim_scenario *s)
{
	uint32_t T0, pods;

	if (s->dst == UINT32_MAX)
		s->dst = s->hosts - 1;
	if (s->trim_kb == 0)
		s->trim_kb = s->buffer_kb;
	if (s->hosts < 2 || s->hosts_per_t0 < 1 || s->t1_per_plane < 1)
		err(c, root, "need hosts >= 2, hosts_per_t0 >= 1, t1_per_plane >= 1", NULL);
	if ((s->t0_per_pod != 0) != (s->t2_per_plane != 0))
		err(c, root, "three tiers need both t0_per_pod and t2_per_plane", NULL);
	if (s->src >= s->hosts || s->dst >= s->hosts || s->src == s->dst)
		err(c, root, "workload src/dst: two different hosts below hosts", NULL);
	if (s->wl == SIM_WL_INCAST && s->senders + 3 > s->hosts)
		err(c, root, "incast needs hosts >= senders + 3 (receiver, victim sender, victim receiver)", NULL);
	if (s->wl == SIM_WL_INCAST && s->hosts_per_t0 < 2)
		err(c, root, "incast needs hosts_per_t0 >= 2 (the victim's receiver shares the T0)", NULL);
	if ((s->wl == SIM_WL_ALLREDUCE || s->wl == SIM_WL_ALLTOALL) && s->ranks > s->hosts)
		err(c, root, "workload ranks > hosts", NULL);
	if ((s->wl == SIM_WL_ALLREDUCE || s->wl == SIM_WL_ALLTOALL) &&
	    s->bytes < (uint64_t)(s->ranks ? s->ranks : s->hosts) * s->qps)
		err(c, root, "a collective needs bytes >= ranks x qps (a chunk per QP)", NULL);
	if (s->perm_random && s->wl != SIM_WL_PERMUTATION)
		err(c, root, "mapping is for permutation only", NULL);
	if (s->shared_qps && s->wl != SIM_WL_ALLTOALL)
		err(c, root, "shared_qps is for alltoall only", NULL);
	if ((s->ev_active && s->ev_active % s->planes) || (s->ev_backup != UINT32_MAX && s->ev_backup % s->planes))
		err(c, root, "ev_active and ev_backup must be multiples of planes (D41)", NULL);
	if (s->ecn_kmin_kb > s->ecn_kmax_kb)
		err(c, root, "ecn_kmin_kb > ecn_kmax_kb", NULL);
	if (s->msg_kb * 1024ull > (1ull << 31))
		err(c, root, "msg_kb: a Write is at most 2 GiB", NULL);
	T0 = s->hosts_per_t0 ? (s->hosts + s->hosts_per_t0 - 1) / s->hosts_per_t0 : 0;
	pods = s->t0_per_pod ? (T0 + s->t0_per_pod - 1) / s->t0_per_pod : 1;
	for (unsigned i = 0; i < s->n_failures; i++) {
		const struct sim_failure *f = &s->failures[i];
		if ((f->plane >= 0 && (uint32_t)f->plane >= s->planes) || (f->t0 >= 0 && (uint32_t)f->t0 >= T0) ||
		    (f->t1 >= 0 && (uint32_t)f->t1 >= s->t1_per_plane) ||
		    (f->host >= 0 && (uint32_t)f->host >= s->hosts) ||
		    (f->pod >= 0 && (uint32_t)f->pod >= pods) || (f->t2 >= 0 && (uint32_t)f->t2 >= s->t2_per_plane))
			err(c, root, "a failure names a plane, switch or host outside the topology", NULL);
		if (f->t2 >= 0 && s->t2_per_plane == 0)
			err(c, root, "a T1-T2 link (pod + t1 + t2) needs three tiers", NULL);
		if (f->kind == SIM_FAIL_EV_DROP && f->flow >= sim_scenario_flows(s))
			err(c, root, "ev_drop names a flow the workload does not have", NULL);
		if (s->t0_per_pod && (f->kind == SIM_FAIL_SWITCH_DOWN || f->kind == SIM_FAIL_SWITCH_BLACKHOLE))
			err(c, root, "switch failures are not modelled with three tiers (links are)", NULL);
	}
}

int sim_scenario_load(const char *path, struct sim_scenario *s)
{
	FILE *fp = fopen(path, "rb");
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_node_t *root;
	struct ctx c = {.path = path, .doc = &doc};

	if (fp == NULL) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	snprintf(s->path, sizeof(s->path), "%s", path);
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_file(&parser, fp);
	if (!yaml_parser_load(&parser, &doc)) {
		fprintf(stderr, "%s:%lu: YAML error: %s\n", path, (unsigned long)parser.problem_mark.line + 1,
			parser.problem ? parser.problem : "?");
		yaml_parser_delete(&parser);
		fclose(fp);
		return -1;
	}
	root = yaml_document_get_root_node(&doc);
	if (root == NULL || root->type != YAML_MAPPING_NODE) {
		err(&c, root, "the scenario must be a mapping", NULL);
		goto out;
	}
	for (yaml_node_pair_t *pr = root->data.mapping.pairs.start; pr < root->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = yaml_document_get_node(&doc, pr->key);
		yaml_node_t *v = yaml_document_get_node(&doc, pr->value);
		const char *key = scalar(&c, k);

		if (key == NULL)
			continue;
		if (!strcmp(key, "seed"))
			get_u64(&c, v, 0, UINT64_MAX, &s->seed);
		else if (!strcmp(key, "hosts"))
			get_u32(&c, v, 2, 65536, &s->hosts);
		else if (!strcmp(key, "planes"))
			get_u32(&c, v, 1, MRCP_MAX_PORTS, &s->planes);
		else if (!strcmp(key, "hosts_per_t0"))
			get_u32(&c, v, 1, 4096, &s->hosts_per_t0);
		else if (!strcmp(key, "t1_per_plane"))
			get_u32(&c, v, 1, 256, &s->t1_per_plane);
		else if (!strcmp(key, "t0_per_pod"))
			get_u32(&c, v, 1, 4096, &s->t0_per_pod);
		else if (!strcmp(key, "t2_per_plane"))
			get_u32(&c, v, 1, 256, &s->t2_per_plane);
		else if (!strcmp(key, "link_gbps"))
			get_double(&c, v, 0.001, 10000, &s->link_gbps);
		else if (!strcmp(key, "delay_ns"))
			get_u64(&c, v, 0, 1000000000ull, &s->delay_ns);
		else if (!strcmp(key, "buffer_kb"))
			get_u32(&c, v, 8, 1u << 20, &s->buffer_kb);
		else if (!strcmp(key, "trim"))
			get_bool(&c, v, &s->trim);
		else if (!strcmp(key, "trim_kb"))
			get_u32(&c, v, 1, 1u << 20, &s->trim_kb);
		else if (!strcmp(key, "ecn_kmin_kb"))
			get_u32(&c, v, 0, 1u << 20, &s->ecn_kmin_kb);
		else if (!strcmp(key, "ecn_kmax_kb"))
			get_u32(&c, v, 0, 1u << 20, &s->ecn_kmax_kb);
		else if (!strcmp(key, "ecn_lasthop"))
			get_bool(&c, v, &s->ecn_lasthop);
		else if (!strcmp(key, "routing")) {
			const char *t = scalar(&c, v);
			if (t && (!strcmp(t, "ecmp") || !strcmp(t, "source")))
				s->source_routed = !strcmp(t, "source");
			else if (t)
				err(&c, v, "routing must be ecmp or source", t);
		} else if (!strcmp(key, "cc_scope")) {
			const char *t = scalar(&c, v);
			if (t && (!strcmp(t, "qp") || !strcmp(t, "peer")))
				s->cc_per_qp = !strcmp(t, "qp");
			else if (t)
				err(&c, v, "cc_scope must be peer or qp", t);
		} else if (!strcmp(key, "base_rtt_ns"))
			get_u64(&c, v, 1, 1000000000ull, &s->base_rtt_ns);
		else if (!strcmp(key, "ev_active"))
			get_u32(&c, v, 1, 4096, &s->ev_active);
		else if (!strcmp(key, "ev_backup"))
			get_u32(&c, v, 0, 4096, &s->ev_backup);
		else if (!strcmp(key, "sq_depth"))
			get_u32(&c, v, 1, 1u << 16, &s->sq_depth);
		else if (!strcmp(key, "rq_depth"))
			get_u32(&c, v, 1, 1u << 16, &s->rq_depth);
		else if (!strcmp(key, "cq_size"))
			get_u32(&c, v, 1, 1u << 24, &s->cq_size);
		else if (!strcmp(key, "ctl_queue_size"))
			get_u32(&c, v, 1, 1u << 24, &s->ctl_queue_size);
		else if (!strcmp(key, "event_queue_size"))
			get_u32(&c, v, 1, 1u << 24, &s->event_queue_size);
		else if (!strcmp(key, "mpr"))
			get_u32(&c, v, 1, 255, &s->mpr);
		else if (!strcmp(key, "rto_timeout"))
			get_u32(&c, v, 1, 24, &s->rto_timeout);
		else if (!strcmp(key, "duration_ms")) {
			uint64_t ms;
			if (get_u64(&c, v, 1, 1000000, &ms))
				s->duration_ns = ms * 1000000ull;
		} else if (!strcmp(key, "loss_pct")) {
			get_double(&c, v, 0, 100, &s->loss_pct);
		} else if (!strcmp(key, "reconverge_ms")) {
			double ms = 0;
			get_double(&c, v, 0, 1e6, &ms);
			s->reconverge_ns = (uint64_t)(ms * 1e6 + 0.5);
		} else if (!strcmp(key, "workload"))
			load_workload(&c, v, s);
		else if (!strcmp(key, "failures")) {
			if (v->type != YAML_SEQUENCE_NODE) {
				err(&c, v, "failures: expected a list", NULL);
				continue;
			}
			for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
				if (s->n_failures == SIM_MAX_FAILURES) {
					err(&c, v, "too many failures", NULL);
					break;
				}
				load_failure(&c, yaml_document_get_node(&doc, *it), &s->failures[s->n_failures++]);
			}
		} else
			err(&c, k, "unknown key", key);
	}
	if (c.errors == 0)
		validate(&c, root, s);
out:
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	fclose(fp);
	return c.errors ? -1 : 0;
}
