/* dp_rx.c - received frames to the engine (dp_internal.h).
 *
 * Every frame takes one path, rx_input(), whatever brought it here; what
 * differs is named by where it came from (enum rx_from), not by flags:
 *
 *   count (wire only; rx_local for our own frames, D71) -> admin-down drop
 *   (before the fault stage) -> linearise, parse (once) -> steer to the
 *   QP's worker (wire and our own frames only, D63) ->
 *   host stack (ARP/NDP/ICMP: answered, or only learnt from on a copy) |
 *   not ours / malformed: dropped |
 *   RX fault stage (once: what it passes on or releases later comes back
 *   through rx_input) -> ICRC with rte_net_crc -> the batch for
 *   mrcp_rx_burst.
 *
 * The batch holds a burst from every port and more, so one pass over the
 * ports reaches the engine as one batch; room is made before a frame enters
 * (a duplicate from the fault stage may follow it without another check).
 * The engine gets the batch in the order the peer sent it (dp_rxorder.h).
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "dp_fault.h"
#include "dp_internal.h"
#include "dp_neigh.h"
#include "dp_rxorder.h"
#include "mrcp_bytes.h"
#include "mrcp_wire.h"

/* Where a received frame comes from. */
enum rx_from {
	RX_WIRE = 0,  /* this worker's queue of the port */
	RX_HANDED,    /* another worker received it; its QP is ours (D63) */
	RX_COPY,      /* a node-wide frame (endpoint request, ARP/NDP) another
		       * worker received and answers: ours to learn from */
	RX_DELAYED,   /* the RX fault stage held it and releases it now */
	RX_FAULTED,   /* the RX fault stage passed it on just now */
	RX_LOCAL,     /* we sent it to one of our own addresses (D71): as from
		       * the wire, but it never was on it */
};

/* Has the RX fault stage seen it already? */
static bool rx_past_faults(enum rx_from from)
{
	return from == RX_DELAYED || from == RX_FAULTED;
}

static bool addr_is_ours(const struct mrcd_dp_port_config *pc, const struct mrcp_frame_view *v)
{
	if (v->l3 == MRCP_FRAME_IPV4)
		return pc->ipv4.ip.family == 4 && memcmp(v->dst_ip, pc->ipv4.ip.a, 4) == 0;
	return pc->ipv6.ip.family == 6 && memcmp(v->dst_ip, pc->ipv6.ip.a, 16) == 0;
}

/* A frame that is not MRC: ARP, NDP and ICMP echo for our addresses are
 * answered (the reply is written straight into a new mbuf); anything else
 * is counted and dropped. A copy (RX_COPY) is answered and counted where it
 * landed: this worker's neighbour table only learns from it. Takes @m. */
static void rx_host(struct mrcd_dp *dp, struct mrcd_txb *b, unsigned port, struct rte_mbuf *m,
		    enum rx_from from, uint64_t now)
{
	struct mrcd_dp_port *p = &dp->ports[port];
	struct rte_mbuf *r = rte_pktmbuf_alloc(p->pool);
	size_t rl = 0;

	if (!r) {
		p->c.tx_no_mbuf++;
		rte_pktmbuf_free(m);
		return;
	}
	enum mrcd_l2_verdict v = mrcd_l2_input(dp->neigh, port, rte_pktmbuf_mtod(m, const uint8_t *),
					       m->data_len, now, rte_pktmbuf_mtod(r, uint8_t *),
					       rte_pktmbuf_tailroom(r), &rl);

	if (from == RX_COPY) {
		rte_pktmbuf_free(r);
		rte_pktmbuf_free(m);
		return;
	}
	switch (v) {
	case MRCD_L2_REPLY:
		p->c.rx_l2++;
		p->c.tx_l2++;
		rte_pktmbuf_append(r, (uint16_t)rl);
		mrcd__txb_add(dp, b, port, r);
		r = NULL;
		break;
	case MRCD_L2_CONSUMED:
		p->c.rx_l2++;
		break;
	default:
		p->c.rx_not_mine++;
		break;
	}
	rte_pktmbuf_free(r);
	rte_pktmbuf_free(m);
}

/* The last step: check the ICRC of an MRC frame for us (a trimmed one has
 * none, D34) and add it to the engine's batch. Takes @m. */
static void rx_to_engine(struct mrcd_dp *dp, struct mrcd_rxb *rb, unsigned port, struct rte_mbuf *m,
			 const struct mrcp_frame_view *v)
{
	struct mrcd_dp_port *p = &dp->ports[port];
	uint8_t *f = rte_pktmbuf_mtod(m, uint8_t *);
	struct mrcp_rx *r;

	if (v->trim == MRCP_TRIM_NONE) {
		/* the innermost IP header starts a UDP and an IPv4/IPv6 header
		 * before the MRC bytes (IPv4 options: from the IHL) */
		uint8_t *udp = (uint8_t *)(uintptr_t)v->mrc - MRCP_UDP_HLEN;
		uint8_t *ip;

		if (v->l3 == MRCP_FRAME_IPV4)
			ip = f + MRCP_ETH_HLEN + (v->vlan ? MRCP_VLAN_HLEN : 0);
		else
			ip = udp - MRCP_IPV6_HLEN;
		if (!mrcd_dp_icrc_check(ip, (size_t)(v->mrc + v->mrc_len - ip))) {
			p->c.rx_bad_icrc++;
			rte_pktmbuf_free(m);
			return;
		}
	}
	p->c.rx_mrc++;
	p->c.rx_srv6 += v->l3 == MRCP_FRAME_SRV6;
	r = &rb->rx[rb->n++];
	r->data = v->mrc;
	r->len = v->mrc_len;
	r->port = (uint8_t)(port + 1);
	r->ecn = v->ecn;
	r->trim = (uint8_t)v->trim;
	r->ev = v->ev;
	/* what the engine checks a QP's packets against (D69); in SRv6 the
	 * inner source, which the parser made sure the outer one equals */
	memset(&r->src, 0, sizeof(r->src));
	if (v->l3 == MRCP_FRAME_IPV4) {
		r->src.family = 4;
		memcpy(r->src.a, v->src_ip, 4);
	} else {
		r->src.family = 6;
		memcpy(r->src.a, v->src_ip, 16);
	}
	rb->hold[rb->n_hold++] = m;
}

void mrcd__rx_flush(struct mrcd_dp *dp, struct mrcd_rxb *rb, uint64_t now)
{
	if (rb->n && dp->pre_rx)
		dp->pre_rx(dp, dp->sleep_arg);
	mrcd_rx_order(rb->rx, rb->n); /* the order the peer sent them in (D72) */
	if (rb->n)
		mrcp_rx_burst(dp->eng, rb->rx, rb->n, now);
	if (rb->n_hold)
		rte_pktmbuf_free_bulk(rb->hold, rb->n_hold);
	rb->n = rb->n_hold = 0;
}

/* Make room in the batch for a frame and the copy the fault stage may add. */
static void rx_room(struct mrcd_dp *dp, struct mrcd_rxb *rb, uint64_t now)
{
	if (rb->n + 2 > RTE_DIM(rb->rx))
		mrcd__rx_flush(dp, rb, now);
}

/* ---- steering between workers (D63) ------------------------------------------------ */

/* Put @m on worker @t's ring with its plane index and origin (RX_HANDED or
 * RX_COPY) in the mbuf's user hash, and ring @t's doorbell if it sleeps.
 * Takes @m. */
static void hand_over(struct mrcd_dp *dp, struct mrcd_dp *t, unsigned port, struct rte_mbuf *m,
		      enum rx_from from)
{
	uint64_t one = 1;

	m->hash.usr = port | (uint32_t)from << 8;
	if (rte_ring_mp_enqueue(t->handover, m) != 0) {
		dp->wc.handover_drop++;
		rte_pktmbuf_free(m);
		return;
	}
	if (from == RX_COPY)
		dp->wc.node_copies++;
	else
		dp->wc.handover_out++;
	/* seq_cst: either @t sees the frame before it sleeps, or we see asleep;
	 * the first to see it rings, the frames after it need no syscall */
	if (atomic_exchange(&t->asleep, false) && write(t->doorbell, &one, sizeof(one)) < 0) {
		/* EAGAIN: already rung */
	}
}

static void copy_to_others(struct mrcd_dp *dp, unsigned port, struct rte_mbuf *m)
{
	for (unsigned k = 0; k < dp->n_workers; k++) {
		struct rte_mbuf *c;

		if (k == dp->index)
			continue;
		c = rte_pktmbuf_copy(m, dp->ports[port].pool, 0, UINT32_MAX);
		if (!c) {
			dp->ports[port].c.tx_no_mbuf++;
			continue;
		}
		hand_over(dp, dp->w[k], port, c, RX_COPY);
	}
}

/* Which worker a received frame belongs to. MRC frames go to the engine
 * named by the top bits of BTH.DestQP, endpoint responses to the one named
 * by bits 23:16 of their PSN (D63); endpoint requests and non-MRC frames
 * are processed here, and port-status updates and non-MRC frames (ARP, NDP:
 * every worker's neighbour table learns) are copied to every other worker.
 * @return true if @m was handed over (taken). */
static bool steer(struct mrcd_dp *dp, unsigned port, struct rte_mbuf *m, int rc,
		  const struct mrcp_frame_view *v)
{
	const uint8_t *bth;
	uint32_t dqpn, psn;
	unsigned t;

	if (rc == -ENOMSG) {
		copy_to_others(dp, port, m);
		return false;
	}
	if (rc < 0 || v->mrc_len < sizeof(struct mrcp_bth_wire))
		return false;
	bth = v->mrc;
	dqpn = mrcp_get_be24(bth + offsetof(struct mrcp_bth_wire, dest_qp));
	psn = mrcp_get_be24(bth + offsetof(struct mrcp_bth_wire, psn));
	if (dqpn == MRCP_QPN_ENDPOINT) {
		if (bth[0] == MRCP_OP_EP_REQUEST) {
			/* a port-status update concerns every engine (each
			 * acknowledges it; the sender takes the first); an EV
			 * probe needs one answer, from here */
			const uint8_t *erth = bth + sizeof(struct mrcp_bth_wire);

			if (v->mrc_len >= sizeof(struct mrcp_bth_wire) + sizeof(struct mrcp_erth_wire) &&
			    (erth[offsetof(struct mrcp_erth_wire, flags)] & 3) == MRCP_EP_PORT_STATUS_UPDATE)
				copy_to_others(dp, port, m);
			return false;
		}
		t = mrcp_ep_psn_shard(psn);
	} else {
		t = mrcp_qpn_shard(dqpn);
	}
	if (t == dp->index || t >= dp->n_workers)
		return false; /* ours, or no such engine: ours to count */
	hand_over(dp, dp->w[t], port, m, RX_HANDED);
	return true;
}

/* ---- the receive path ----------------------------------------------------------------- */

/* One received frame of port @port, from wherever (enum rx_from), to the
 * engine's batch or wherever else it goes (the header comment). Takes @m. */
static void rx_input(struct mrcd_dp *dp, struct mrcd_rxb *rb, struct mrcd_txb *b, unsigned port,
		     struct rte_mbuf *m, enum rx_from from, uint64_t now)
{
	struct mrcd_dp_port *p = &dp->ports[port];
	struct mrcp_frame_view v;
	int rc;

	if (from == RX_WIRE) {
		p->c.rx_pkts++;
		p->c.rx_bytes += m->pkt_len;
	} else if (from == RX_LOCAL) {
		p->c.rx_local++;
	}
	if (!rx_past_faults(from) && !p->admin_up) {
		p->c.rx_admin_down++;
		rte_pktmbuf_free(m);
		return;
	}
	if (from == RX_HANDED || from == RX_COPY || from == RX_DELAYED)
		rx_room(dp, rb, now);
	if (m->nb_segs > 1 && rte_pktmbuf_linearize(m) < 0) {
		p->c.rx_bad_frame++;
		rte_pktmbuf_free(m);
		return;
	}
	/* parsed once, for the steering and for the engine */
	rc = mrcp_frame_parse(&dp->rx_cfg, rte_pktmbuf_mtod(m, const uint8_t *), m->data_len, &v);
	if (from == RX_WIRE || from == RX_LOCAL) {
		if (dp->n_workers > 1 && steer(dp, port, m, rc, &v))
			return;
		rx_room(dp, rb, now);
	}
	if (rc == -ENOMSG && !rx_past_faults(from)) {
		rx_host(dp, b, port, m, from, now);
		return;
	}
	if (rc == -ENOMSG || (rc == 0 && !addr_is_ours(&dp->cfg->ports[port], &v))) {
		p->c.rx_not_mine++;
		rte_pktmbuf_free(m);
		return;
	}
	if (rc < 0) {
		p->c.rx_bad_frame++;
		rte_pktmbuf_free(m);
		return;
	}
	if (!rx_past_faults(from) && (dp->faulty_rx >> port & 1)) {
		struct rte_mbuf *out[2];
		unsigned n = mrcd__fault_stage(dp, port, MRCD_FAULT_RX, v.ev, m, now, out);

		/* parsed again: the stage may have trimmed or marked them */
		for (unsigned k = 0; k < n; k++)
			rx_input(dp, rb, b, port, out[k], RX_FAULTED, now);
		return;
	}
	rx_to_engine(dp, rb, port, m, &v);
}

unsigned mrcd__rx_handover(struct mrcd_dp *dp, struct mrcd_rxb *rb, struct mrcd_txb *b, uint64_t now)
{
	struct rte_mbuf *m[MRCD_DP_BURST];
	unsigned n;

	if (!dp->handover)
		return 0;
	n = rte_ring_sc_dequeue_burst(dp->handover, (void **)m, MRCD_DP_BURST, NULL);
	for (unsigned k = 0; k < n; k++) {
		unsigned port = m[k]->hash.usr & 0xffu;
		enum rx_from from = (m[k]->hash.usr >> 8) == RX_COPY ? RX_COPY : RX_HANDED;

		dp->wc.handover_in++;
		if (port >= dp->n_ports) {
			rte_pktmbuf_free(m[k]);
			continue;
		}
		rx_input(dp, rb, b, port, m[k], from, now);
	}
	return n;
}

unsigned mrcd__rx_local(struct mrcd_dp *dp, struct mrcd_rxb *rb, struct mrcd_txb *b, uint64_t now)
{
	unsigned n = dp->n_local;

	dp->n_local = 0;
	for (unsigned k = 0; k < n; k++)
		rx_input(dp, rb, b, dp->local_port[k], dp->local[k], RX_LOCAL, now);
	return n;
}

/* Receive a burst from every port, then take the frames interleaved, one
 * from each port in turn. The sender sprays consecutive PSNs over the
 * planes, so this is about the order they were sent in, and the batch
 * reaches the engine in that order exactly (mrcd_rx_order): a worker that
 * took each port's burst whole after a pause would show the engine PSNs
 * from one plane far ahead of the others', and its SACKs would make the
 * sender infer losses that are not (D29, D64, D72).
 *
 * The batch is a snapshot of the rings (D72): every port is read within a
 * short window, so a frame in it was preceded, on every other plane, by
 * what the peer sent before it. A pause of this host between two ports'
 * reads breaks that: a port read before the pause misses what came in it,
 * while a port read after brings frames sent during it - the peer's
 * probes among them, whose answers would then report the first port's
 * packets, sent long before the probe and waiting in its ring, as lost. So
 * when the reads spanned a stall (MRCD_DP_STALL_BASE_RTTS base RTTs), or a port
 * filled its burst (more of what was sent before the others' frames waits
 * in its ring), every port is read again into the same batch, until one
 * round is quick and short or the batch has no room for another
 * (rx_snap_cut). Then frames the fault stage held, in either direction. */
unsigned mrcd__rx_ports(struct mrcd_dp *dp, struct mrcd_rxb *rb, struct mrcd_txb *b, uint64_t now)
{
	struct rte_mbuf *m[MRCD_DP_MAX_PORTS][MRCD_DP_BURST];
	uint16_t n[MRCD_DP_MAX_PORTS];
	void *due[MRCD_DP_BURST];
	const uint64_t stall_ns = MRCD_DP_STALL_BASE_RTTS * dp->cfg->engine.base_rtt_ns;
	unsigned got = 0, nd;

	dp->faulty_rx = dp->faulty_tx = 0;
	for (unsigned i = 0; i < dp->n_ports; i++) {
		dp->faulty_rx |= (uint32_t)mrcd_fault_active(dp->faults, (uint8_t)i, MRCD_FAULT_RX) << i;
		dp->faulty_tx |= (uint32_t)mrcd_fault_active(dp->faults, (uint8_t)i, MRCD_FAULT_TX) << i;
	}
	for (bool first = true;; first = false) {
		/* the first round's window opens at the pass's own stamp,
		 * taken just before: a longer window, never a shorter one */
		uint64_t t0 = first ? now : mrcd_dp_now_ns(), t1;
		unsigned most = 0;

		for (unsigned i = 0; i < dp->n_ports; i++) {
			n[i] = rte_eth_rx_burst(dp->ports[i].port_id, (uint16_t)dp->index, m[i], MRCD_DP_BURST);
			got += n[i];
			if (n[i] > most)
				most = n[i];
		}
		t1 = mrcd_dp_now_ns();
		dp->rx_read_ns = t1;
		for (unsigned k = 0; k < most; k++)
			for (unsigned i = 0; i < dp->n_ports; i++)
				if (k < n[i])
					rx_input(dp, rb, b, i, m[i][k], RX_WIRE, now);
		if (most < MRCD_DP_BURST && (int64_t)(t1 - t0) <= (int64_t)stall_ns)
			break;
		if (rb->n + dp->n_ports * MRCD_DP_BURST + 2 > RTE_DIM(rb->rx)) {
			dp->wc.rx_snap_cut++;
			break;
		}
		dp->wc.rx_snap_rereads++;
	}
	for (unsigned i = 0; i < dp->n_ports; i++) {
		struct mrcd_dp_port *p = &dp->ports[i];

		bool faulty = (dp->faulty_rx | dp->faulty_tx) >> i & 1;

		/* only a fault rule fills the delay queues: looked at while a
		 * rule is there, and after it went until they are empty */
		if (!p->delay_held && !faulty)
			continue;
		nd = mrcd_delayq_pop_due(p->delay_rx, now, due, MRCD_DP_BURST);
		for (unsigned k = 0; k < nd; k++)
			rx_input(dp, rb, b, i, due[k], RX_DELAYED, now);
		got += nd;
		nd = mrcd_delayq_pop_due(p->delay_tx, now, due, MRCD_DP_BURST);
		for (unsigned k = 0; k < nd; k++)
			mrcd__txb_add(dp, b, i, due[k]);
		got += nd;
		p->delay_held = faulty || mrcd_delayq_count(p->delay_rx) + mrcd_delayq_count(p->delay_tx) > 0;
	}
	return got;
}
