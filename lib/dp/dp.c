/* dp.c - the datapath object (dp.h): built from a struct mrcd_dp_config,
 * one struct mrcd_dp per worker (dp_internal.h), the owners of QPs, the
 * per-iteration hooks, the snapshots the control side reads, and the
 * accessors. The ports, the receive and transmit paths and the loop are in
 * dp_port.c, dp_rx.c, dp_tx.c and dp_worker.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "dp_fault.h"
#include "dp_internal.h"
#include "dp_neigh.h"
#include "dp_srv6.h"

int mrcd_logtype_dp, mrcd_logtype_ctl, mrcd_logtype_main, mrcd_logtype_engine;

void mrcd_dp_log_init(void)
{
	mrcd_logtype_dp = rte_log_register_type_and_pick_level("mrcd.dp", RTE_LOG_INFO);
	mrcd_logtype_ctl = rte_log_register_type_and_pick_level("mrcd.ctl", RTE_LOG_INFO);
	mrcd_logtype_main = rte_log_register_type_and_pick_level("mrcd.main", RTE_LOG_INFO);
	mrcd_logtype_engine = rte_log_register_type_and_pick_level("mrcd.engine", RTE_LOG_INFO);
}

/* ---- creation ------------------------------------------------------------------ */

static int neigh_setup(struct mrcd_dp *dp, char *err, size_t errlen)
{
	const struct mrcd_dp_config *cfg = dp->cfg;
	int rc = mrcd_neigh_create(dp->n_ports, MRCD_NEIGH_TABLE_ENTRIES, &dp->neigh);

	if (rc < 0) {
		snprintf(err, errlen, "neighbour table: %s", strerror(-rc));
		return rc;
	}
	for (unsigned i = 0; i < dp->n_ports; i++) {
		const struct mrcd_dp_port_config *pc = &cfg->ports[i];
		struct mrcd_l2_port lp;

		memset(&lp, 0, sizeof(lp));
		memcpy(lp.mac, dp->ports[i].mac, 6);
		if (pc->ipv4.ip.family == 4) {
			lp.has_v4 = true;
			memcpy(lp.v4, pc->ipv4.ip.a, 4);
			lp.v4_plen = pc->ipv4.len;
		}
		if (pc->ipv6.ip.family == 6) {
			lp.has_v6 = true;
			memcpy(lp.v6, pc->ipv6.ip.a, 16);
			lp.v6_plen = pc->ipv6.len;
		}
		if (pc->gw4.family == 4) {
			lp.has_gw4 = true;
			memcpy(lp.gw4, pc->gw4.a, 4);
		}
		if (pc->gw6.family == 6) {
			lp.has_gw6 = true;
			memcpy(lp.gw6, pc->gw6.a, 16);
		}
		for (unsigned k = 0; k < pc->n_routes && k < MRCD_NEIGH_MAX_ROUTES; k++) {
			const struct mrcd_dp_route *r = &pc->routes[k];
			struct mrcd_l2_route *lr = &lp.routes[lp.n_routes++];

			lr->family = r->prefix.ip.family;
			lr->plen = r->prefix.len;
			memcpy(lr->prefix, r->prefix.ip.a, lr->family == 4 ? 4 : 16);
			memcpy(lr->via, r->via.a, lr->family == 4 ? 4 : 16);
		}
		rc = mrcd_neigh_set_port(dp->neigh, i, &lp);
		if (rc < 0) {
			snprintf(err, errlen, "ports[%u] %s: neighbour setup: %s", i, pc->name, strerror(-rc));
			return rc;
		}
	}
	for (unsigned i = 0; i < cfg->n_neighbours; i++) {
		const struct mrcd_dp_neighbour *nb = &cfg->neighbours[i];

		rc = mrcd_neigh_add_static(dp->neigh, nb->port, nb->ip.family, nb->ip.a, nb->mac);
		if (rc < 0) {
			snprintf(err, errlen, "neighbours[%u]: %s", i, strerror(-rc));
			return rc;
		}
	}
	return 0;
}

static int faults_setup(struct mrcd_dp *dp, char *err, size_t errlen)
{
	int rc = mrcd_fault_stage_create(dp->cfg->engine.seed ^ 0xfa017ull ^ ((uint64_t)dp->index << 32),
					 &dp->faults);

	if (rc < 0) {
		snprintf(err, errlen, "fault stage: %s", strerror(-rc));
		return rc;
	}
	for (unsigned i = 0; i < dp->cfg->n_faults; i++) {
		rc = mrcd_fault_add(dp->faults, &dp->cfg->faults[i], NULL);
		if (rc < 0) {
			snprintf(err, errlen, "faults[%u]: %s", i, strerror(-rc));
			return rc;
		}
	}
	return 0;
}

/* SRv6 (§2.3, D8): each worker keeps its own copy of the rows. */
static int srv6_setup(struct mrcd_dp *dp, char *err, size_t errlen)
{
	const struct mrcd_dp_config *cfg = dp->cfg;

	if (cfg->n_srv6 == 0)
		return 0;
	dp->srv6 = calloc(cfg->n_srv6, sizeof(*dp->srv6));
	if (!dp->srv6) {
		snprintf(err, errlen, "srv6: out of memory");
		return -ENOMEM;
	}
	memcpy(dp->srv6, cfg->srv6, cfg->n_srv6 * sizeof(*dp->srv6));
	dp->n_srv6 = cfg->n_srv6;
	return 0;
}

/* One worker's own parts: mailbox, doorbell, hand-over ring. */
static struct mrcd_dp *worker_alloc(const struct mrcd_dp_config *cfg, unsigned index, unsigned n,
				    char *err, size_t errlen)
{
	struct mrcd_dp *dp = calloc(1, sizeof(*dp));

	if (!dp) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	dp->cfg = cfg;
	dp->index = index;
	dp->n_workers = n;
	dp->n_ports = cfg->n_ports;
	dp->family = cfg->family;
	dp->worker_lcore = cfg->lcores[index];
	dp->doorbell = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (dp->doorbell < 0) {
		snprintf(err, errlen, "eventfd: %s", strerror(errno));
		free(dp);
		return NULL;
	}
	if (mrcd_mailbox_init(&dp->mb, dp, dp->doorbell) < 0) {
		snprintf(err, errlen, "mailbox: out of memory");
		close(dp->doorbell);
		free(dp);
		return NULL;
	}
	dp->mb_ready = true;
	dp->rx_cfg = cfg->frame;
	dp->rx_cfg.check_icrc = false; /* checked with rte_net_crc below */
	return dp;
}

int mrcd_dp_create(const struct mrcd_dp_config *config, struct mrcd_dp **out, char *err, size_t errlen)
{
	struct mrcd_dp *dp0 = NULL;
	struct mrcd_dp_config *cfg;
	unsigned n = config->n_workers;
	int rc = -ENOMEM;

	*out = NULL;
	if (n < 1 || n > MRCD_DP_MAX_WORKERS) {
		snprintf(err, errlen, "lcores.ids: 1 to %u worker lcores (one engine each, D63), got %u",
			 MRCD_DP_MAX_WORKERS, n);
		return -ENOTSUP;
	}
	if (config->n_ports < 1 || config->n_ports > MRCD_DP_MAX_PORTS) {
		snprintf(err, errlen, "ports: 1 to %u ports, got %u", MRCD_DP_MAX_PORTS, config->n_ports);
		return -EINVAL;
	}
	/* the workers share one copy; the tables it points to are read below only */
	cfg = malloc(sizeof(*cfg));
	if (!cfg) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	*cfg = *config;
	for (unsigned k = 0; k < n; k++) {
		struct mrcd_dp *dp = worker_alloc(cfg, k, n, err, errlen);

		if (!dp) {
			if (k == 0) {
				free(cfg);
				return -ENOMEM;
			}
			goto fail;
		}
		if (k == 0) {
			dp0 = dp;
			dp0->own_cfg = cfg;
		}
		dp0->w[k] = dp;
	}
	for (unsigned k = 1; k < n; k++)
		memcpy(dp0->w[k]->w, dp0->w, sizeof(dp0->w));
	MRCD_LOG(INFO, dp, "ICRC: rte_net_crc %s\n", mrcd_dp_icrc_init());

	for (unsigned i = 0; i < cfg->n_ports; i++) {
		rc = mrcd__port_setup(dp0, i, n, err, errlen);
		if (rc < 0)
			goto fail;
	}
	for (unsigned k = 0; k < n; k++) {
		struct mrcd_dp *dp = dp0->w[k];
		struct mrcp_engine_config ecfg;

		for (unsigned i = 0; k > 0 && i < cfg->n_ports; i++) {
			rc = mrcd__port_share(dp, dp0, i, err, errlen);
			if (rc < 0)
				goto fail;
		}
		rc = neigh_setup(dp, err, errlen);
		if (rc < 0)
			goto fail;
		rc = faults_setup(dp, err, errlen);
		if (rc < 0)
			goto fail;
		rc = srv6_setup(dp, err, errlen);
		if (rc < 0)
			goto fail;
		mrcd__tx_init(dp);
		if (n > 1) {
			char name[RTE_RING_NAMESIZE];

			snprintf(name, sizeof(name), "mrcd_ho%u", k);
			dp->handover = rte_ring_create(name, MRCD_DP_HANDOVER_RING, dp0->ports[0].socket,
						       RING_F_SC_DEQ);
			if (!dp->handover) {
				rc = -ENOMEM;
				snprintf(err, errlen, "worker %u: hand-over ring: %s", k, rte_strerror(rte_errno));
				goto fail;
			}
		}
		ecfg = cfg->engine;
		/* worker 0 keeps the seed as given, so one worker replays as before */
		ecfg.seed = cfg->engine.seed + (uint64_t)k * 0x9e3779b97f4a7c15ull;
		ecfg.shard = (uint8_t)k;
		/* D68: memory keys from bits no --seed replays or log shows */
		if (getrandom(&ecfg.key_seed, sizeof(ecfg.key_seed), 0) != (ssize_t)sizeof(ecfg.key_seed)) {
			rc = -errno;
			snprintf(err, errlen, "engine: memory key seed: getrandom: %s", strerror(errno));
			goto fail;
		}
		rc = mrcp_engine_create(&ecfg, &dp->eng);
		if (rc < 0) {
			snprintf(err, errlen, "engine: %s", strerror(-rc));
			goto fail;
		}
		/* an owner row per QP slot: every QP the engine takes can be owned */
		dp->owner_mask = mrcp_engine_qp_slots(dp->eng) - 1;
		dp->owners = calloc(dp->owner_mask + 1, sizeof(*dp->owners));
		if (!dp->owners) {
			rc = -ENOMEM;
			snprintf(err, errlen, "engine: QP owner table of %u rows: out of memory", dp->owner_mask + 1);
			goto fail;
		}
		dp->start_ns = mrcd_dp_now_ns();
	}
	/* the tables were read above; the copy keeps no pointer to them */
	cfg->neighbours = NULL;
	cfg->n_neighbours = 0;
	cfg->srv6 = NULL;
	cfg->n_srv6 = 0;
	cfg->faults = NULL;
	cfg->n_faults = 0;
	*out = dp0;
	return 0;
fail:
	mrcd_dp_destroy(dp0);
	return rc;
}


/* ---- destruction ----------------------------------------------------------------- */

/* Free what one worker holds: queued frames, engine, tables, mailbox. */
static void worker_free(struct mrcd_dp *dp)
{
	for (unsigned i = 0; i < dp->n_ports; i++)
		mrcd__port_free(dp, i);
	for (unsigned k = 0; k < dp->n_local; k++)
		rte_pktmbuf_free(dp->local[k]); /* D71: none unless stopped mid-pass */
	dp->n_local = 0;
	if (dp->handover) {
		struct rte_mbuf *m;

		while (rte_ring_dequeue(dp->handover, (void **)&m) == 0)
			rte_pktmbuf_free(m);
		rte_ring_free(dp->handover);
	}
	mrcd__clients_free(dp);     /* the sessions were stopped by the control side */
	if (dp->eng)
		mrcp_engine_destroy(dp->eng);
	free(dp->owners);
	dp->owners = NULL;
	if (dp->neigh)
		mrcd_neigh_destroy(dp->neigh);
	if (dp->faults)
		mrcd_fault_stage_destroy(dp->faults);
	free(dp->srv6);
	if (dp->doorbell > 0)
		close(dp->doorbell);
	if (dp->mb_ready)
		mrcd_mailbox_fini(&dp->mb);
}

void mrcd_dp_destroy(struct mrcd_dp *dp)
{
	if (!dp)
		return;
	mrcd_dp_stop(dp);
	/* selftests first: they free buffers queued frames may point into */
	for (unsigned k = 0; k < dp->n_workers; k++)
		if (dp->w[k])
			mrcd__st_fini(dp->w[k], mrcd_dp_now_ns());
	/* Stop every port before closing any: a memif peer that goes away at
	 * the same moment is handled on EAL's interrupt thread, and a device
	 * that is already stopped (disconnected) gives it nothing to touch. */
	for (unsigned i = 0; i < dp->n_ports; i++)
		if (dp->ports[i].started)
			rte_eth_dev_stop(dp->ports[i].port_id);
	for (unsigned i = 0; i < dp->n_ports; i++)
		if (dp->ports[i].pool)
			rte_eth_dev_close(dp->ports[i].port_id);
	/* every worker's mbufs go back before the pools are freed */
	for (unsigned k = dp->n_workers; k-- > 1;)
		if (dp->w[k])
			worker_free(dp->w[k]);
	worker_free(dp);
	/* pools are shared per socket: free each once */
	for (unsigned i = 0; i < dp->n_ports; i++) {
		struct rte_mempool *mp = dp->ports[i].pool;

		if (!mp)
			continue;
		for (unsigned j = i; j < dp->n_ports; j++)
			if (dp->ports[j].pool == mp)
				dp->ports[j].pool = NULL;
		rte_mempool_free(mp);
	}
	for (unsigned k = dp->n_workers; k-- > 1;)
		free(dp->w[k]);
	free(dp->own_cfg);
	free(dp);
}

/* ---- owners and hooks (worker context) ---------------------------------------- */

int mrcd_dp_own_qp(struct mrcd_dp *dp, uint32_t qpn,
		   void (*on_wc)(struct mrcd_dp *, void *, const struct mrcp_wc *),
		   void (*on_event)(struct mrcd_dp *, void *, const struct mrcp_event *),
		   void *ctx)
{
	struct mrcd_dp_qp_owner *o;

	if (!dp->owners)
		return -ENOMEM;
	o = &dp->owners[qpn & dp->owner_mask];
	if (o->qpn != 0)
		return -EEXIST;
	*o = (struct mrcd_dp_qp_owner){ qpn, on_wc, on_event, ctx };
	dp->n_owned++;
	return 0;
}

void mrcd_dp_disown_qp(struct mrcd_dp *dp, uint32_t qpn)
{
	struct mrcd_dp_qp_owner *o = dp->owners ? &dp->owners[qpn & dp->owner_mask] : NULL;

	if (o && qpn != 0 && o->qpn == qpn) {
		o->qpn = 0;
		dp->n_owned--;
	}
}

struct mrcd_dp_qp_owner *mrcd__owner_of(struct mrcd_dp *dp, uint32_t qpn)
{
	struct mrcd_dp_qp_owner *o = dp->owners ? &dp->owners[qpn & dp->owner_mask] : NULL;

	return o && qpn != 0 && o->qpn == qpn ? o : NULL;
}

int mrcd_dp_add_hook(struct mrcd_dp *dp, mrcd_dp_hook fn, void *arg)
{
	if (dp->n_hooks >= MRCD_DP_MAX_HOOKS)
		return -ENOSPC;
	dp->hooks[dp->n_hooks].fn = fn;
	dp->hooks[dp->n_hooks].arg = arg;
	dp->n_hooks++;
	return 0;
}

void mrcd_dp_del_hook(struct mrcd_dp *dp, mrcd_dp_hook fn, void *arg)
{
	for (unsigned i = 0; i < dp->n_hooks; i++)
		if (dp->hooks[i].fn == fn && dp->hooks[i].arg == arg) {
			dp->hooks[i] = dp->hooks[--dp->n_hooks];
			return;
		}
}

/* ---- the workers ------------------------------------------------------------------ */

unsigned mrcd_dp_n_workers(const struct mrcd_dp *dp)
{
	return dp->n_workers;
}

struct mrcd_dp *mrcd_dp_worker(struct mrcd_dp *dp, unsigned k)
{
	return k < dp->n_workers ? dp->w[k] : NULL;
}

unsigned mrcd_dp_worker_index(const struct mrcd_dp *w)
{
	return w->index;
}

struct mrcd_dp *mrcd_dp_of_qpn(struct mrcd_dp *dp, uint32_t qpn)
{
	unsigned k = mrcp_qpn_shard(qpn);

	return k < dp->n_workers ? dp->w[k] : NULL;
}

unsigned mrcd_dp_qp_count(const struct mrcd_dp *w)
{
	return w->n_owned;
}

unsigned mrcd_dp_qp_slots(const struct mrcd_dp *w)
{
	return w->owners ? w->owner_mask + 1 : 0;
}

int mrcd_dp_doorbell(const struct mrcd_dp *w)
{
	return w->doorbell;
}

/* ---- worker context: the engine, the fault stage, snapshots ------------------------- */

struct mrcp_engine *mrcd_dp_engine(struct mrcd_dp *w)
{
	return w->eng;
}

struct mrcd_fault_stage *mrcd_dp_faults(struct mrcd_dp *w)
{
	return w->faults;
}

unsigned mrcd_dp_qps(struct mrcd_dp *w, uint32_t *qpns, unsigned max)
{
	unsigned n = 0;

	for (unsigned i = 0; w->owners && i <= w->owner_mask && n < max; i++)
		if (w->owners[i].qpn)
			qpns[n++] = w->owners[i].qpn;
	return n;
}

/* Add @qpn's counters and its EVs' to @t. @return its EV set (NULL when the
 * QP is gone or has none). */
static const struct mrcp_ev_set *qp_sum(struct mrcd_dp *dp, uint32_t qpn, struct mrcd_dp_qp_sums *t)
{
	const struct mrcp_ev_set *evs = mrcp_qp_evs(dp->eng, qpn);
	struct mrcp_qp_info qi;

	if (mrcp_qp_info(dp->eng, qpn, &qi) < 0)
		return NULL;
	t->qps++;
#define X(n, d) t->qp.n += qi.c.n;
	MRCP_QP_COUNTERS(X)
#undef X
	for (unsigned k = 0; evs && k < evs->n_evs; k++) {
		const struct mrcp_ev_counters *c = &evs->evs[k].c;

#define X(n, d) t->ev.n += c->n;
		MRCP_EV_COUNTERS(X)
#undef X
		t->evs_moved += c->transitions > 0;
	}
	return evs;
}

void mrcd__qp_closing(struct mrcd_dp *dp, uint32_t qpn)
{
	qp_sum(dp, qpn, &dp->closed);
}

void mrcd_dp_live_qps(struct mrcd_dp *w, struct mrcd_dp_live_qps *out)
{
	memset(out, 0, sizeof(*out));
	for (unsigned i = 0; w->owners && i <= w->owner_mask; i++) {
		const struct mrcp_ev_set *evs;

		if (!w->owners[i].qpn || !(evs = qp_sum(w, w->owners[i].qpn, &out->sum)))
			continue;
		for (unsigned k = 0; k < evs->n_evs; k++) {
			const struct mrcp_ev *e = &evs->evs[k];

			if (e->port < 1 || e->port > MRCP_MAX_PORTS)
				continue;
			if (e->state < MRCP_EV_NSTATES)
				out->ev_state[e->port - 1][e->state]++;
			if (e->pool < 4)
				out->ev_pool[e->port - 1][e->pool]++;
		}
	}
}

void mrcd_dp_status(struct mrcd_dp *w, struct mrcd_dp_status *out)
{
	uint64_t first;

	memset(out, 0, sizeof(*out));
	out->worker = w->index;
	out->n_workers = w->n_workers;
	out->lcore = w->worker_lcore;
	out->busy_poll = w->cfg->busy_poll;
	out->family = w->family;
	out->start_ns = w->start_ns;
	out->n_ports = w->n_ports;
	for (unsigned i = 0; i < w->n_ports; i++)
		out->ports_up += w->ports[i].engine_up;
	out->n_qps = mrcd_dp_qp_count(w);
	out->n_clients = mrcd__client_count(w);
	out->c = w->wc;
	out->closed = w->closed;
	out->n_peers = w->n_peers;
	memcpy(out->peers, w->peers, w->n_peers * sizeof(w->peers[0]));
	out->n_probes = w->n_probes;
	out->n_recent = w->n_probes < MRCD_DP_PROBES ? (unsigned)w->n_probes : MRCD_DP_PROBES;
	first = w->n_probes - out->n_recent;
	for (unsigned k = 0; k < out->n_recent; k++)
		out->recent[k] = w->probes[(first + k) % MRCD_DP_PROBES];
}

static void gw_status(struct mrcd_dp *w, unsigned port, const struct mrcp_ip *ip,
		      struct mrcd_dp_gw *out)
{
	struct mrcd_neigh_entry e;

	memset(out, 0, sizeof(*out));
	if (ip->family != 4 && ip->family != 6)
		return;
	out->ip = *ip;
	if (mrcd_neigh_lookup(w->neigh, port, ip->family, ip->a, &e) == 0) {
		out->state = e.state;
		memcpy(out->mac, e.mac, 6);
		out->updated_ns = e.updated_ns;
	}
}

unsigned mrcd_dp_neighbours(struct mrcd_dp *w, struct mrcd_neigh_entry *out, unsigned max)
{
	return mrcd_neigh_list(w->neigh, out, max);
}

int mrcd_dp_port_status(struct mrcd_dp *w, unsigned port, struct mrcd_dp_port_status *out)
{
	const struct mrcd_dp_port *p;
	const struct mrcd_dp_port_config *pc;

	if (port >= w->n_ports)
		return -ENOENT;
	p = &w->ports[port];
	pc = &w->cfg->ports[port];
	memset(out, 0, sizeof(*out));
	memcpy(out->name, p->name, sizeof(out->name));
	out->ethdev = p->port_id;
	memcpy(out->mac, p->mac, 6);
	out->ipv4 = pc->ipv4;
	out->ipv6 = pc->ipv6;
	out->mtu = pc->mtu;
	out->link_up = p->link_up;
	out->admin_up = p->admin_up;
	out->engine_up = p->engine_up;
	out->gw_failed = p->gw_failed;
	gw_status(w, port, &pc->gw4, &out->gw4);
	gw_status(w, port, &pc->gw6, &out->gw6);
	out->n_routes = pc->n_routes;
	out->speed_mbps = (uint32_t)(w->cfg->engine.port_bps[port] / 1000000u);
	out->link_speed_mbps = p->link_speed_mbps;
	out->c = p->c;
	mrcd_fault_counters_get(w->faults, (uint8_t)port, &out->fault);
	mrcd_neigh_counters_get(w->neigh, port, &out->neigh);
	return 0;
}
