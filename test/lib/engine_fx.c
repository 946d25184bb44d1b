/* engine_fx.c - see engine_fx.h. */
#include <string.h>

#include "engine_fx.h"
#include "mrcp_test.h"
#include "mrcp_wire.h"

void fx_ip(struct mrcp_ip *ip, int node, int port)
{
	memset(ip, 0, sizeof(*ip));
	ip->family = 4;
	ip->a[0] = 10;
	ip->a[1] = (uint8_t)port;
	ip->a[3] = (uint8_t)(node + 1);
}

void fx_peer_info(struct mrcp_conn_info *ci, uint32_t qpn, uint16_t mtu)
{
	memset(ci, 0, sizeof(*ci));
	ci->versions = 1;
	ci->qpn = qpn;
	ci->init_psn = 0;
	fx_ip(&ci->node_addr, 1, 0);
	ci->n_ports = 1;
	fx_ip(&ci->port_addr[0], 1, 1);
	ci->port_status_mask = 1;
	ci->mtu = mtu;
	ci->mpr_dest = 8;
	ci->max_wimm_dest = 128;
	ci->trim_nack = true;
	ci->udp_port = MRCP_UDP_PORT_DEFAULT;
}

void fx_rx_pkt(struct mrcp_rx *rx, uint8_t *raw, size_t cap, const struct mrcp_pkt *p, uint8_t port,
	       const struct mrcp_ip *src)
{
	int len = mrcp_pkt_encode(p, raw, cap);

	ASSERT_GT(len, 0);
	memset(rx, 0, sizeof(*rx));
	rx->data = raw;
	rx->len = (uint32_t)len;
	rx->port = port;
	rx->src = *src;
}
