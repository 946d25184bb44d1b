/* config_dp.c - struct mrcd_config -> struct mrcd_dp_config (config_dp.h). */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_dp.h"

static_assert(MRCD_MAX_PORTS <= MRCD_DP_MAX_PORTS, "every configured port fits the datapath");
static_assert(MRCD_MAX_LCORES <= MRCD_DP_MAX_WORKERS, "every configured lcore runs a worker");
static_assert(MRCD_NAME_MAX <= MRCD_DP_NAME_MAX, "port names are not cut");
static_assert(MRCD_DEVARGS_MAX <= MRCD_DP_DEVARGS_MAX, "device arguments are not cut");
static_assert(MRCD_SRV6_MAX_USIDS <= MRCD_SRV6_USIDS, "every uSID of a template fits a row");
static_assert(MRCD_MAX_ROUTES <= MRCD_DP_MAX_ROUTES, "every configured route fits the datapath");

enum mrcd_fault_dir mrcd_fault_dir_of(enum mrcd_ctl_dir d)
{
	switch (d) {
	case MRCD_CTL_DIR_TX:
		return MRCD_FAULT_TX;
	case MRCD_CTL_DIR_RX:
		return MRCD_FAULT_RX;
	case MRCD_CTL_DIR_BOTH:
		return MRCD_FAULT_BOTH;
	}
	return MRCD_FAULT_TX;
}

static struct mrcd_dp_prefix prefix_of(const struct mrcd_prefix *p)
{
	struct mrcd_dp_prefix d = { .ip = p->ip, .len = p->len };

	return d;
}

static void port_of(const struct mrcd_port_config *pc, struct mrcd_dp_port_config *d)
{
	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "%s", pc->name);
	snprintf(d->devargs, sizeof(d->devargs), "%s", pc->devargs);
	d->has_mac = pc->has_mac;
	memcpy(d->mac, pc->mac, 6);
	d->ipv4 = prefix_of(&pc->ipv4);
	d->ipv6 = prefix_of(&pc->ipv6);
	d->gw4 = pc->gateway;
	d->gw6 = pc->gateway6;
	for (unsigned k = 0; k < pc->n_routes; k++) {
		d->routes[k].prefix = prefix_of(&pc->routes[k].prefix);
		d->routes[k].via = pc->routes[k].via;
	}
	d->n_routes = pc->n_routes;
	d->mtu = pc->mtu;
	d->udp_checksum = pc->udp_checksum;
}

/* The SRv6 row of one destination template (§2.3, D8). */
static void srv6_row_of(const struct mrcd_config *c, const struct mrcd_srv6_template *t,
			struct mrcd_srv6_row *r)
{
	memset(r, 0, sizeof(*r));
	memcpy(r->prefix, t->dst.ip.a, 16);
	r->plen = t->dst.len;
	memcpy(r->locator, c->srv6.locator.ip.a, 4);
	r->n_usid = t->n_usid;
	for (unsigned k = 0; k < t->n_usid; k++)
		r->usid[k] = t->usid[k];
	r->plane_mask = t->plane_mask;
	r->plane_shift = t->plane_shift;
	r->uplink_usid = t->uplink_usid;
	r->uplink_mask = t->uplink_mask;
}

static void fault_rule_of(const struct mrcd_fault *f, struct mrcd_fault_rule *r)
{
	memset(r, 0, sizeof(*r));
	r->port = (uint8_t)f->port;
	r->ev_min = f->ev_min;
	r->ev_max = f->ev_max;
	r->dir = mrcd_fault_dir_of(f->dir);
	r->drop_pct = f->drop_pct;
	r->blackhole = f->blackhole;
	r->delay_ns = f->delay_ns;
	r->jitter_ns = f->jitter_ns;
	r->reorder_pct = f->reorder_pct;
	r->duplicate_pct = f->duplicate_pct;
	r->corrupt_pct = f->corrupt_pct;
	r->trim_pct = f->trim_pct;
	r->ecn_pct = f->ecn_pct;
}

int mrcd_config_to_dp(const struct mrcd_config *c, uint64_t seed, struct mrcd_dp_config *out,
		      char *err, size_t errlen)
{
	struct mrcd_dp_neighbour *nb = NULL;
	struct mrcd_srv6_row *rows = NULL;
	struct mrcd_fault_rule *rules = NULL;
	unsigned n_rows = c->srv6.enabled ? c->srv6.n_templates : 0;

	memset(out, 0, sizeof(*out));
	if ((c->n_neighbours && !(nb = calloc(c->n_neighbours, sizeof(*nb)))) ||
	    (n_rows && !(rows = calloc(n_rows, sizeof(*rows)))) ||
	    (c->n_faults && !(rules = calloc(c->n_faults, sizeof(*rules))))) {
		free(nb);
		free(rows);
		free(rules);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	out->n_ports = c->n_ports;
	for (unsigned i = 0; i < c->n_ports; i++)
		port_of(&c->ports[i], &out->ports[i]);
	out->n_workers = c->lcores.n_ids;
	for (unsigned k = 0; k < c->lcores.n_ids; k++)
		out->lcores[k] = c->lcores.ids[k];
	out->busy_poll = c->lcores.idle == MRCD_IDLE_BUSY;
	out->family = mrcd_config_family(c);
	mrcd_config_to_engine(c, &out->engine);
	out->engine.seed = seed;
	mrcd_config_to_frame_rx(c, &out->frame);
	for (unsigned i = 0; i < c->n_neighbours; i++) {
		nb[i].ip = c->neighbours[i].ip;
		memcpy(nb[i].mac, c->neighbours[i].mac, 6);
		nb[i].port = c->neighbours[i].port;
	}
	out->neighbours = nb;
	out->n_neighbours = c->n_neighbours;
	for (unsigned i = 0; i < n_rows; i++)
		srv6_row_of(c, &c->srv6.templates[i], &rows[i]);
	out->srv6 = rows;
	out->n_srv6 = n_rows;
	for (unsigned i = 0; i < c->n_faults; i++)
		fault_rule_of(&c->faults[i], &rules[i]);
	out->faults = rules;
	out->n_faults = c->n_faults;
	out->per_client.max_qps = c->limits.per_client.max_qps;
	out->per_client.max_mem_mb = c->limits.per_client.max_mem_mb;
	out->per_client.max_wrs = c->limits.per_client.max_wrs;
	out->per_client.max_mrs = c->limits.per_client.max_mrs;
	out->selftest_idle_s = c->limits.selftest_idle_s;
	return 0;
}

void mrcd_config_dp_free(struct mrcd_dp_config *d)
{
	/* the tables are this module's own allocations (const to lib/dp) */
	free((void *)(uintptr_t)d->neighbours);
	free((void *)(uintptr_t)d->srv6);
	free((void *)(uintptr_t)d->faults);
	d->neighbours = NULL;
	d->srv6 = NULL;
	d->faults = NULL;
	d->n_neighbours = d->n_srv6 = d->n_faults = 0;
}
