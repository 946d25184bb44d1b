/* engine_fx.h - helpers shared by the engine's unit tests: the addresses of
 * test nodes and a peer's connection info, so every fixture agrees on them. */
#ifndef ENGINE_FX_H
#define ENGINE_FX_H

#include <stdint.h>

#include "mrcp_engine.h"
#include "mrcp_wire.h"

/** IPv4 10.<port>.0.<node + 1> (port 0 = the node address). */
void fx_ip(struct mrcp_ip *ip, int node, int port);

/** The connection info of node 1's QP @qpn: v1, initial PSN 0, one port,
 *  all ports up, @mtu, mpr_dest 8, max_wimm_dest 128, trim NACK, UDP 4791. */
void fx_peer_info(struct mrcp_conn_info *ci, uint32_t qpn, uint16_t mtu);

/** @rx for @p encoded into @raw (@cap bytes) as if it arrived on our port
 *  @port from @src; the other fields 0. Fails the test if it does not encode. */
void fx_rx_pkt(struct mrcp_rx *rx, uint8_t *raw, size_t cap, const struct mrcp_pkt *p, uint8_t port,
	       const struct mrcp_ip *src);

#endif
