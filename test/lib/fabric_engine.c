/* fabric_engine.c - plugs an MRC engine into the test fabric as a node's
 * endpoint (mrcp_rx_burst, mrcp_poll, mrcp_next_deadline,
 * mrcp_port_set_tx_room) and fills an engine config from a fabric node. Kept
 * apart from fabric.c so the fabric links without the engine. */
#include "fabric.h"

static void engine_rx(void *ctx, const struct mrcp_rx *pkts, unsigned n, uint64_t now_ns)
{
	mrcp_rx_burst(ctx, pkts, n, now_ns);
}

static unsigned engine_poll(void *ctx, uint64_t now_ns, struct mrcp_tx *out, unsigned max)
{
	return mrcp_poll(ctx, now_ns, out, max);
}

static uint64_t engine_deadline(void *ctx)
{
	return mrcp_next_deadline(ctx);
}

static void engine_room(void *ctx, uint8_t port, bool room)
{
	mrcp_port_set_tx_room(ctx, port, room);
}

static const struct fabric_endpoint_ops engine_ops = {
	.rx_burst = engine_rx,
	.poll = engine_poll,
	.next_deadline = engine_deadline,
	.set_tx_room = engine_room,
};

int fabric_attach_engine(struct fabric *f, unsigned node, struct mrcp_engine *e)
{
	return fabric_node_attach(f, node, &engine_ops, e);
}

void fabric_engine_config_fill(const struct fabric *f, unsigned node, struct mrcp_engine_config *c)
{
	const struct fabric_cfg *fc = fabric_cfg_get(f);
	const struct fabric_node_cfg *nc = fabric_node_cfg_get(f, node);

	if (!nc)
		return;
	c->n_ports = fc->n_planes;
	for (unsigned p = 0; p < fc->n_planes; p++) {
		c->port_addr[p] = nc->addr[p];
		c->port_bps[p] = nc->port_bps[p];
	}
	c->node_addr = nc->addr[0];
	c->udp_port = nc->udp_port;
	c->dscp.dscp[MRCP_DSCP_CLASS_TRIMMED] = fc->dscp_trimmed;
	c->dscp.dscp[MRCP_DSCP_CLASS_TRIMMED_LASTHOP] = fc->dscp_trimmed_lasthop;
}
