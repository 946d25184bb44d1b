/* dp_rxorder.h - the order a worker hands a batch of received packets to
 * the engine in (D72): each QP's data packets by PSN, then everything else
 * as it came. DPDK-free, so the unit test drives it directly. */
#ifndef MRCD_DP_RXORDER_H
#define MRCD_DP_RXORDER_H

#include "mrcp_engine.h"

/** Sort @n packets in place: data packets (trimmed or not) first, by
 *  DestQP and then PSN (24-bit serial order), then the others (SACKs,
 *  NACKs, ACKs, probes, endpoint operations, anything shorter than a BTH)
 *  in the order they had. Stable. */
void mrcd_rx_order(struct mrcp_rx *rx, unsigned n);

#endif
