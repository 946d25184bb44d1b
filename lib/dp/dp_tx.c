/* dp_tx.c - what the engine sends, as frames (dp_internal.h): each
 * mrcp_poll descriptor gets its next hop from the neighbour table (ARP/NDP
 * requests go out as needed), outer headers from mrcp_frame_hdr_build (an
 * SRv6 outer DA from the destination's row, D8), its payload copied into
 * the mbuf or attached in place (zero-copy), the ICRC, and passes the TX
 * fault stage on its way to the port's ring. A frame to one of this
 * daemon's own addresses (D71) is built the same way, copied, and queued
 * for this worker's own receive path instead (dp_rx.c, mrcd__rx_local).
 */
#include <errno.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "dp_fault.h"
#include "dp_internal.h"
#include "dp_neigh.h"
#include "dp_srv6.h"
#include "mrcp_icrc.h"

#define L2_BUF 256 /* ARP/NDP requests: see dp_neigh.h */

/* Send one frame the fault stage may drop, delay, copy or damage. */
static void tx_frame(struct mrcd_dp *dp, struct mrcd_txb *b, unsigned port, struct rte_mbuf *m,
		     uint32_t ev, uint64_t now)
{
	struct rte_mbuf *out[2];
	unsigned n;

	if (!(dp->faulty_tx >> port & 1)) {
		mrcd__txb_add(dp, b, port, m);
		return;
	}
	n = mrcd__fault_stage(dp, port, MRCD_FAULT_TX, ev, m, now, out);
	for (unsigned k = 0; k < n; k++)
		mrcd__txb_add(dp, b, port, out[k]);
}

/* ---- zero-copy transmit ---------------------------------------------------------- */

/* Payload of at least MRCD_DP_ZC_MIN bytes leaves from where it lies (a
 * client's arena, a selftest buffer) as external-buffer mbufs chained after
 * a header mbuf, instead of being copied. Only where the device addresses
 * memory by virtual address (IOVA as VA: --no-huge, virtual devices) and
 * when no TX fault rule could hold or rewrite the frame; the ICRC then runs
 * over the pieces: lib/core's CRC over the header and the pad, rte_net_crc
 * over each payload segment, appended (mrcd_dp_crc32_append) - not
 * lib/core's table-driven CRC over the payload, 10-30x slower per byte. The engine guarantees the
 * bytes stay put until the work request completes; a session or selftest
 * that goes away first calls mrcd_dp_tx_quiesce() so no queued frame still
 * points into its memory. */
static void zc_free_cb(void *addr, void *opaque)
{
	(void)addr;
	(void)opaque; /* never: the port holds one reference for good */
}

void mrcd__tx_init(struct mrcd_dp *dp)
{
	dp->zero_copy = rte_eal_iova_mode() == RTE_IOVA_VA;
	for (unsigned i = 0; i < dp->n_ports; i++) {
		dp->ports[i].zc_shinfo.free_cb = zc_free_cb;
		dp->ports[i].zc_shinfo.fcb_opaque = NULL;
		rte_mbuf_ext_refcnt_set(&dp->ports[i].zc_shinfo, 1);
	}
}

static bool zc_ok(const struct mrcd_dp *dp, unsigned port, const struct mrcp_tx *d)
{
	return dp->zero_copy && dp->ports[port].tx_multi_seg && d->payload_len >= MRCD_DP_ZC_MIN &&
	       !(dp->faulty_tx >> port & 1);
}

static struct rte_mbuf *build_frame_zc(struct mrcd_dp *dp, unsigned port, const struct mrcp_tx *d,
				       const struct mrcp_frame_tx *ftx, size_t hl, size_t mrc_len)
{
	struct mrcd_dp_port *p = &dp->ports[port];
	struct rte_mbuf *m, *tail, *seg;
	struct mrcp_icrc st;
	uint8_t *f, *t;
	size_t ip_off = mrcp_frame_icrc_off(ftx);

	m = rte_pktmbuf_alloc(p->pool);
	tail = rte_pktmbuf_alloc(p->pool);
	if (!m || !tail) {
		p->c.tx_no_mbuf++;
		rte_pktmbuf_free(m);
		rte_pktmbuf_free(tail);
		return NULL;
	}
	f = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)(hl + d->hdr_len));
	t = (uint8_t *)rte_pktmbuf_append(tail, (uint16_t)(d->pad + MRCP_ICRC_LEN));
	if (!f || !t || mrcp_frame_hdr_build(ftx, mrc_len, f, hl) < 0) {
		p->c.tx_build_err++;
		rte_pktmbuf_free(m);
		rte_pktmbuf_free(tail);
		return NULL;
	}
	memcpy(f + hl, d->hdr, d->hdr_len);
	if (mrcp_icrc_begin(&st, f + ip_off, hl + d->hdr_len - ip_off) < 0) {
		p->c.tx_build_err++;
		rte_pktmbuf_free(m);
		rte_pktmbuf_free(tail);
		return NULL;
	}
	for (unsigned s = 0; s < d->n_seg; s++) {
		seg = rte_pktmbuf_alloc(p->pool);
		if (!seg || rte_pktmbuf_chain(m, seg) < 0) {
			p->c.tx_no_mbuf++;
			rte_pktmbuf_free(seg);
			rte_pktmbuf_free(m);
			rte_pktmbuf_free(tail);
			return NULL;
		}
		rte_mbuf_ext_refcnt_update(&p->zc_shinfo, 1);
		rte_pktmbuf_attach_extbuf(seg, (void *)(uintptr_t)d->seg[s].ptr,
					  (rte_iova_t)(uintptr_t)d->seg[s].ptr,
					  (uint16_t)d->seg[s].len, &p->zc_shinfo);
		seg->data_len = (uint16_t)d->seg[s].len;
		seg->pkt_len = seg->data_len;
		m->pkt_len += seg->data_len;
		st.crc = mrcd_dp_crc32_append(st.crc, d->seg[s].ptr, d->seg[s].len);
	}
	memset(t, 0, d->pad);
	mrcp_icrc_update(&st, t, d->pad);
	mrcp_icrc_store(t + d->pad, mrcp_icrc_finish(&st));
	if (rte_pktmbuf_chain(m, tail) < 0) {
		p->c.tx_build_err++;
		rte_pktmbuf_free(m);
		rte_pktmbuf_free(tail);
		return NULL;
	}
	p->c.tx_zero_copy++;
	return m;
}

void mrcd_dp_tx_quiesce(struct mrcd_dp *dp)
{
	for (unsigned i = 0; i < dp->n_ports; i++) {
		mrcd__port_drop_tx(&dp->ports[i]);
		/* and what the device still holds (a NIC DMAs after tx_burst) */
		rte_eth_tx_done_cleanup(dp->ports[i].port_id, (uint16_t)dp->index, 0);
	}
}

/* ---- frames ---------------------------------------------------------------------- */

/* D71: the index of our port whose address @ip is, or -1. A few compares
 * per frame: the planes are few and the addresses fixed. */
static int own_port(const struct mrcd_dp *dp, const struct mrcp_ip *ip)
{
	for (unsigned k = 0; k < dp->n_ports; k++) {
		const struct mrcd_dp_port_config *pc = &dp->cfg->ports[k];

		if (ip->family == 4 ? pc->ipv4.ip.family == 4 && memcmp(pc->ipv4.ip.a, ip->a, 4) == 0
				    : ip->family == 6 && pc->ipv6.ip.family == 6 && memcmp(pc->ipv6.ip.a, ip->a, 16) == 0)
			return (int)k;
	}
	return -1;
}

/* The frame for @d, or NULL (counted). *@local is the index of our own
 * port it is addressed to (D71: no next hop, no SRv6, always a copy), or
 * -1 for a frame to the wire. */
static struct rte_mbuf *build_frame(struct mrcd_dp *dp, const struct mrcp_tx *d, uint64_t now, int *local)
{
	unsigned i = d->port - 1u;
	struct mrcd_dp_port *p = &dp->ports[i];
	const struct mrcd_dp_port_config *pc = &dp->cfg->ports[i];
	struct mrcp_frame_tx ftx;
	uint8_t req[L2_BUF];
	size_t req_len = 0;
	struct rte_mbuf *m;
	int rc;

	mrcp_frame_tx_defaults(&ftx);
	*local = own_port(dp, &d->dst);
	if (*local >= 0) {
		memcpy(ftx.dst_mac, dp->ports[*local].mac, 6);
		rc = 0;
	} else {
		rc = mrcd_neigh_resolve(dp->neigh, i, d->dst.family, d->dst.a, now, ftx.dst_mac,
					req, sizeof(req), &req_len);
	}
	if (req_len > 0) {
		struct rte_mbuf *r = rte_pktmbuf_alloc(p->pool);

		if (r) {
			memcpy(rte_pktmbuf_append(r, (uint16_t)req_len), req, req_len);
			if (rte_eth_tx_burst(p->port_id, (uint16_t)dp->index, &r, 1) == 1)
				p->c.tx_l2++;
			else
				rte_pktmbuf_free(r);
		}
	}
	if (rc < 0) {
		p->c.tx_no_neigh++;
		return NULL;
	}
	memcpy(ftx.src_mac, p->mac, 6);
	if (d->dst.family == 4) {
		ftx.l3 = MRCP_FRAME_IPV4;
		memcpy(ftx.src_ip, pc->ipv4.ip.a, 4);
	} else {
		ftx.l3 = MRCP_FRAME_IPV6;
		memcpy(ftx.src_ip, pc->ipv6.ip.a, 16);
		if (dp->n_srv6 && *local < 0) {
			/* D8: the outer DA is the EV's uSID path to the row of
			 * the destination; the inner DA is the peer's port */
			int k = mrcd_srv6_find(dp->srv6, dp->n_srv6, d->dst.a);

			if (k < 0) {
				p->c.tx_no_srv6_row++;
				return NULL;
			}
			ftx.l3 = MRCP_FRAME_SRV6;
			mrcd_srv6_da(&dp->srv6[k], d->ev, ftx.srv6_da);
			p->c.tx_srv6++;
		}
	}
	memcpy(ftx.dst_ip, d->dst.a, 16);
	ftx.dscp = d->dscp;
	ftx.ecn = d->ecn;
	ftx.ev = d->ev;
	ftx.ev_layout = dp->cfg->frame.ev_layout;
	ftx.udp_dport = dp->cfg->frame.udp_port;
	ftx.ip_id = dp->ip_id++;

	size_t hl = mrcp_frame_hdr_len(&ftx);
	size_t mrc_len = (size_t)d->hdr_len + d->payload_len + d->pad;
	size_t flen = hl + mrc_len + MRCP_ICRC_LEN;

	if (*local < 0 && zc_ok(dp, i, d) && !(ftx.l3 == MRCP_FRAME_IPV6 && pc->udp_checksum))
		return build_frame_zc(dp, i, d, &ftx, hl, mrc_len);
	m = rte_pktmbuf_alloc(p->pool);
	if (!m) {
		p->c.tx_no_mbuf++;
		return NULL;
	}
	uint8_t *f = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)flen);
	if (!f || flen > UINT16_MAX || mrcp_frame_hdr_build(&ftx, mrc_len, f, hl) < 0) {
		p->c.tx_build_err++;
		rte_pktmbuf_free(m);
		return NULL;
	}
	uint8_t *w = f + hl;
	memcpy(w, d->hdr, d->hdr_len);
	w += d->hdr_len;
	for (unsigned s = 0; s < d->n_seg; s++) {
		memcpy(w, d->seg[s].ptr, d->seg[s].len);
		w += d->seg[s].len;
	}
	memset(w, 0, d->pad);
	size_t ip_off = mrcp_frame_icrc_off(&ftx);
	mrcd_dp_icrc_store(f + ip_off, hl + mrc_len - ip_off);
	if (ftx.l3 == MRCP_FRAME_IPV6 && pc->udp_checksum) {
		struct rte_ipv6_hdr *ip6 = (struct rte_ipv6_hdr *)(f + ip_off);
		struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(f + ip_off + sizeof(*ip6));

		udp->dgram_cksum = 0;
		udp->dgram_cksum = rte_ipv6_udptcp_cksum(ip6, udp);
	}
	return m;
}

unsigned mrcd__tx_engine(struct mrcd_dp *dp, struct mrcd_txb *b, uint64_t now)
{
	struct mrcp_tx d[MRCD_DP_BURST];
	unsigned total = 0;

	dp->faulty_tx = 0; /* once a pass (struct mrcd_dp) */
	for (unsigned i = 0; i < dp->n_ports; i++)
		dp->faulty_tx |= (uint32_t)mrcd_fault_active(dp->faults, (uint8_t)i, MRCD_FAULT_TX) << i;

	for (int round = 0; round < MRCD_DP_TX_ROUNDS; round++) {
		unsigned n = mrcp_poll(dp->eng, now, d, MRCD_DP_BURST);
		uint32_t data_ports = 0;

		/* data first: mrcp_poll puts control (the SACK and AETH for
		 * what was just received) ahead of data, and an answer to a
		 * message that waits for them to be built and written is time
		 * on the message's round trip. So the data frames are built
		 * and their planes written, then the control frames: each kind
		 * keeps its order on a plane; the peer takes a batch's data
		 * before its control anyway (dp_rxorder.h), and there never was
		 * an order between planes. */
		for (int data = 1; data >= 0; data--) {
			for (unsigned k = 0; k < n; k++) {
				unsigned port = d[k].port - 1u;
				struct rte_mbuf *m;
				int local;

				if (port >= dp->n_ports || (d[k].payload_len != 0) != data)
					continue;
				m = build_frame(dp, &d[k], now, &local);
				if (!m)
					continue;
				if (local < 0) {
					data_ports |= (uint32_t)data << port;
					tx_frame(dp, b, port, m, d[k].ev, now);
				} else if (dp->n_local < MRCD_DP_LOCAL_MAX) {
					/* D71: to our own address; received after
					 * this pass (no TX fault rule: it never
					 * leaves) */
					dp->ports[port].c.tx_local++;
					dp->local_port[dp->n_local] = (uint8_t)local;
					dp->local[dp->n_local++] = m;
				} else {
					/* not reached: one pass makes at most
					 * MRCD_DP_LOCAL_MAX frames, and each
					 * pass's are received before the next */
					dp->ports[port].c.tx_build_err++;
					rte_pktmbuf_free(m);
				}
			}
			for (unsigned i = 0; i < dp->n_ports; i++)
				if ((data_ports >> i & 1 || !data) && (b[i].n || dp->ports[i].n_pending))
					mrcd__port_flush(dp, i, &b[i]);
		}
		total += n;
		if (n < MRCD_DP_BURST)
			break;
	}
	return total;
}
