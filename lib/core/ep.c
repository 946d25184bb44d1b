/* ep.c - endpoint operations on QPN 0x2 (§7): PORT_STATUS_UPDATE
 * requests and their acknowledgements (D50, D51), EV probes with RTT (D57),
 * and local link up/down (§5.6). Connectionless and node-level: state lives
 * in the peer table, not in QPs. */
#include <errno.h>
#include <string.h>

#include "engine_internal.h"

/* D57: a control packet to @p on @port uses a QP's reverse EV toward that
 * node if there is one, else a pseudo-random EV. */
static uint32_t ep_ev(struct mrcp_engine *e, const struct peer *p, uint8_t port)
{
	if (p != NULL) {
		for (uint32_t s = p->qps_head; s != NIL; s = e->qps[s].peer_next) {
			int rev = mrcp_ev_rev_get(&e->qps[s].evs, port);
			if (rev >= 0)
				return e->qps[s].evs.evs[rev].value;
		}
	}
	return 49152u + mrcp_prng_below(&e->prng, 16384); /* D6 range */
}

static struct mrcp_tx *ep_tx(struct mrcp_engine *e, const struct peer *p, const struct mrcp_ip *dst,
			     uint8_t port, const struct mrcp_pkt *pkt, uint8_t dscp_class, uint8_t ecn)
{
	struct mrcp_tx *tx = mrcp__ctl_alloc(e);
	int hl;

	if (tx == NULL)
		return NULL;
	hl = mrcp_pkt_encode_hdr(pkt, tx->hdr, sizeof(tx->hdr));
	tx->hdr_len = (uint16_t)(hl > 0 ? hl : 0);
	tx->opcode = pkt->bth.opcode;
	tx->psn = pkt->bth.psn;
	tx->port = port;
	tx->ev = ep_ev(e, p, port);
	tx->dscp = e->cfg.dscp.dscp[dscp_class];
	tx->ecn = ecn;
	tx->qpn = 0;
	tx->dst = *dst;
	e->c.ep_tx++;
	return tx;
}

static void apply_remote_mask(struct mrcp_engine *e, struct peer *p, uint32_t mask)
{
	struct mrcp_event ev;

	if (p->remote_up == mask)
		return;
	p->remote_up = mask;
	for (uint32_t s = p->qps_head; s != NIL; s = e->qps[s].peer_next) {
		struct qp *qp = &e->qps[s];
		mrcp_ev_set_port_masks(&qp->evs, e->port_up, mask);
		mrcp__qp_ready(e, qp);
	}
	memset(&ev, 0, sizeof(ev));
	ev.type = MRCP_EVENT_PEER_PORTS;
	ev.now_ns = e->now;
	ev.peer_ports.node = p->node;
	ev.peer_ports.mask = mask;
	mrcp__event_push(e, &ev);
}

const uint64_t mrcp_probe_rtt_bounds_ns[MRCP_PROBE_RTT_NBOUNDS] = {
#define X(b) b,
	MRCP_PROBE_RTT_BOUNDS(X)
#undef X
};

/* Count an EV probe's outcome in the RTT histogram: a few compares, once
 * per answer (probes are rate-limited per port, §7). */
static void probe_rtt_count(struct mrcp_engine *e, bool ok, uint64_t rtt_ns)
{
	struct mrcp_probe_rtt_hist *h = &e->probe_rtt;
	unsigned i = 0;

	if (!ok) {
		h->timeouts++;
		return;
	}
	while (i < MRCP_PROBE_RTT_NBOUNDS && rtt_ns > mrcp_probe_rtt_bounds_ns[i])
		i++;
	h->bucket[i]++;
	h->answered++;
	h->sum_ns += rtt_ns;
}

/* Report an EV probe's outcome to the control plane and free its slot. */
static void probe_done(struct mrcp_engine *e, const struct peer *p, struct ep_probe *pr, bool ok, uint64_t rtt_ns)
{
	struct mrcp_event ev;

	probe_rtt_count(e, ok, rtt_ns);

	memset(&ev, 0, sizeof(ev));
	ev.type = MRCP_EVENT_EV_PROBE;
	ev.now_ns = e->now;
	ev.probe.node = p->node;
	ev.probe.port = pr->port;
	ev.probe.ev = pr->ev;
	ev.probe.ok = ok;
	ev.probe.rtt_ns = rtt_ns;
	mrcp__event_push(e, &ev);
	pr->sent_ns = 0;
}

/* When an unanswered EV probe times out (D57): EV_PROBE_TIMEOUT_NS after it
 * left, or after this engine's last stall ended if that is later - a pause
 * of our own host is not the path's silence (D72), so the probe gets its
 * full time with the engine running. */
static uint64_t probe_expiry(const struct mrcp_engine *e, const struct ep_probe *pr)
{
	uint64_t ref = pr->sent_ns;

	if (e->stall_end_ns != 0 && mrcp_time_lt(ref, e->stall_end_ns))
		ref = e->stall_end_ns;
	return ref + EV_PROBE_TIMEOUT_NS;
}

uint64_t mrcp__ep_deadline(const struct mrcp_engine *e)
{
	uint64_t d = UINT64_MAX;

	for (uint32_t i = 0; i < e->peers_hw; i++) { /* the slots ever used */
		const struct peer *p = &e->peers[i];
		if (!p->used)
			continue;
		if (p->psu_tries_left != 0)
			d = mrcp_deadline_min(d, p->psu_next_ns);
		for (unsigned k = 0; k < PEER_PROBES_MAX; k++) {
			if (p->probes[k].sent_ns != 0)
				d = mrcp_deadline_min(d, probe_expiry(e, &p->probes[k]));
		}
	}
	return d;
}

static void ep_arm(struct mrcp_engine *e)
{
	uint64_t d = mrcp__ep_deadline(e);

	if (d == UINT64_MAX)
		mrcp_timer_cancel(&e->wheel, &e->ep_timer);
	else
		mrcp_timer_arm(&e->wheel, &e->ep_timer, d);
}

/* D11: an endpoint request's PSN is its 16-bit request id; D63: bits 23:16
 * carry the shard of the engine that sent it, so that a node running one
 * engine per lcore can steer the response back to the sender and order
 * port-status updates per sending engine. */
static uint32_t ep_req_psn(const struct mrcp_engine *e, uint16_t id)
{
	return (uint32_t)e->cfg.shard << 16 | id;
}

static void send_psu(struct mrcp_engine *e, struct peer *p)
{
	struct mrcp_pkt pkt;

	mrcp_pkt_init(&pkt, MRCP_OP_EP_REQUEST, MRCP_QPN_ENDPOINT, ep_req_psn(e, p->psu_seq)); /* D11, D63 */
	pkt.erth.op = MRCP_EP_PORT_STATUS_UPDATE;
	pkt.erth.port_status_mask = p->psu_mask;
	pkt.erth.tx_timestamp = mrcp__ts_now(e->now);
	/* D50: on every port that is up on both sides */
	for (uint8_t port = 1; port <= e->cfg.n_ports; port++) {
		if (!(e->port_up & (1u << (port - 1))) || !(p->remote_up & (1u << (port - 1))))
			continue;
		ep_tx(e, p, &p->port_addr[port - 1], port, &pkt, MRCP_DSCP_CLASS_CONTROL, MRCP_ECN_NOT_ECT);
	}
}

void mrcp__ep_on_timer(struct mrcp_engine *e)
{
	for (uint32_t i = 0; i < e->peers_hw; i++) { /* the slots ever used */
		struct peer *p = &e->peers[i];
		if (!p->used)
			continue;
		if (p->psu_tries_left != 0 && mrcp_time_le(p->psu_next_ns, e->now)) {
			send_psu(e, p);
			p->psu_tries_left--;
			p->psu_next_ns = e->now + PSU_INTERVAL_NS;
		}
		for (unsigned k = 0; k < PEER_PROBES_MAX; k++) {
			struct ep_probe *pr = &p->probes[k];

			if (pr->sent_ns == 0 || mrcp_time_lt(e->now, probe_expiry(e, pr)))
				continue;
			probe_done(e, p, pr, false, 0);
		}
	}
	ep_arm(e);
}

int mrcp_port_set_link(struct mrcp_engine *e, uint8_t port, bool up, uint64_t now_ns)
{
	uint32_t bit;

	e->now = now_ns;
	if (port == 0 || port > e->cfg.n_ports)
		return -EINVAL;
	bit = 1u << (port - 1);
	if (((e->port_up & bit) != 0) == up)
		return 0;
	if (up) {
		e->port_up |= bit;
	} else {
		e->port_up &= ~bit;
		e->c.port_down_events++;
	}
	/* D50: mask or unmask the port's EVs in every QP (states kept), and
	 * move what went out through a dead port elsewhere */
	for (uint32_t s = 0; s < (1u << e->qp_slot_bits); s++) {
		struct qp *qp = &e->qps[s];
		if (!qp->used || qp->peer == NULL || qp->state != MRCP_QPS_RTS)
			continue;
		mrcp_ev_set_port_masks(&qp->evs, e->port_up, qp->peer->remote_up);
		if (!up)
			mrcp__req_port_down(e, qp, port);
		mrcp__qp_ready(e, qp);
		mrcp__qp_arm(e, qp);
	}
	/* ...and tell every peer node with a live QP, acknowledged, 3 tries */
	for (uint32_t i = 0; i < e->peers_hw; i++) { /* the slots ever used */
		struct peer *p = &e->peers[i];
		if (!p->used || p->n_qps == 0)
			continue;
		p->psu_seq++;
		p->psu_mask = e->port_up;
		p->psu_tries_left = PSU_TRIES;
		p->psu_next_ns = now_ns;
	}
	ep_arm(e);
	return 0;
}

int mrcp_ev_probe(struct mrcp_engine *e, const struct mrcp_ip *node, uint8_t port, uint32_t ev, uint64_t now_ns)
{
	struct peer *p;
	struct ep_probe *slot = NULL;
	struct mrcp_pkt pkt;
	struct mrcp_tx *tx;

	e->now = now_ns;
	if (port == 0 || port > e->cfg.n_ports || node == NULL)
		return -EINVAL;
	p = mrcp__peer_find(e, node);
	if (p == NULL)
		return -ENOENT;
	/* §7: probes are rate-limited per port */
	if (e->ep_last_probe_ns[port - 1] != 0 &&
	    (int64_t)(now_ns - e->ep_last_probe_ns[port - 1]) < (int64_t)EV_PROBE_MIN_GAP_NS)
		return -EBUSY;
	for (unsigned k = 0; k < PEER_PROBES_MAX; k++)
		if (p->probes[k].sent_ns == 0) {
			slot = &p->probes[k];
			break;
		}
	if (slot == NULL)
		return -EBUSY;
	mrcp_pkt_init(&pkt, MRCP_OP_EP_REQUEST, MRCP_QPN_ENDPOINT, ep_req_psn(e, ++p->probe_req_id));
	pkt.erth.op = MRCP_EP_EV_PROBE;
	pkt.erth.port_status_mask = e->port_up; /* D51 */
	pkt.erth.tx_timestamp = mrcp__ts_now(now_ns);
	tx = ep_tx(e, p, &p->port_addr[port - 1], port, &pkt, MRCP_DSCP_CLASS_TRIMMABLE, MRCP_ECN_ECT0);
	if (tx == NULL)
		return -ENOSPC;
	tx->ev = ev; /* the EV under test */
	slot->req_id = (uint16_t)pkt.bth.psn;
	slot->port = port;
	slot->ev = ev;
	slot->sent_ns = now_ns ? now_ns : 1;
	e->ep_last_probe_ns[port - 1] = now_ns ? now_ns : 1;
	ep_arm(e);
	return 0;
}

static void on_request(struct mrcp_engine *e, struct peer *p, const struct mrcp_pkt *pkt, const struct mrcp_rx *rx)
{
	struct mrcp_pkt resp;
	uint16_t req_id = (uint16_t)pkt->bth.psn;
	unsigned shard = mrcp_ep_psn_shard(pkt->bth.psn);

	if (pkt->erth.op == MRCP_EP_PORT_STATUS_UPDATE && p != NULL) {
		/* ignore an update older than the last applied (§7), in the
		 * order of the engine that sent it (D63) */
		if ((p->psu_seen & (1u << shard)) && mrcp_msn_diff(req_id, p->psu_last_seq[shard]) <= 0) {
			e->c.ep_stale++;
		} else {
			p->psu_seen |= (uint8_t)(1u << shard);
			p->psu_last_seq[shard] = req_id;
			apply_remote_mask(e, p, pkt->erth.port_status_mask);
		}
	} else if (pkt->erth.op == MRCP_EP_EV_PROBE && p != NULL) {
		apply_remote_mask(e, p, pkt->erth.port_status_mask); /* D51 */
	}
	/* D63: the response echoes the whole PSN, the sender's shard included */
	mrcp_pkt_init(&resp, MRCP_OP_EP_RESPONSE, MRCP_QPN_ENDPOINT, pkt->bth.psn & MRCP_PSN_MASK);
	resp.eeth.op = pkt->erth.op;
	resp.eeth.rx_port = rx->port;
	resp.eeth.status = 0;
	resp.eeth.port_status_mask = e->port_up;
	resp.eeth.svc_time = 0;
	resp.eeth.tx_timestamp = pkt->erth.tx_timestamp;
	/* D57: the response goes on the plane the request arrived on */
	ep_tx(e, p, p ? &p->port_addr[rx->port - 1] : &rx->src, rx->port, &resp,
	      MRCP_DSCP_CLASS_CONTROL, MRCP_ECN_NOT_ECT);
}

static void on_response(struct mrcp_engine *e, struct peer *p, const struct mrcp_pkt *pkt)
{
	uint16_t req_id = (uint16_t)pkt->bth.psn;

	if (mrcp_ep_psn_shard(pkt->bth.psn) != e->cfg.shard) { /* D63: another engine's */
		e->c.ep_stale++;
		return;
	}
	if (pkt->eeth.op == MRCP_EP_PORT_STATUS_UPDATE) {
		if (req_id == (uint16_t)p->psu_seq)
			p->psu_tries_left = 0; /* acknowledged (D50) */
		return;
	}
	apply_remote_mask(e, p, pkt->eeth.port_status_mask); /* D51 */
	for (unsigned k = 0; k < PEER_PROBES_MAX; k++) {
		struct ep_probe *pr = &p->probes[k];
		uint64_t age, svc;

		if (pr->sent_ns == 0 || pr->req_id != req_id)
			continue;
		age = mrcp__ts_age_ns(e->now, pkt->eeth.tx_timestamp);
		svc = (uint64_t)pkt->eeth.svc_time << TS_UNIT_SHIFT;
		probe_done(e, p, pr, true, age > svc ? age - svc : 0); /* §7: RTT = now - ts - svc */
		/* D48: an answered probe makes that EV its plane's reverse EV */
		for (uint32_t s = p->qps_head; s != NIL; s = e->qps[s].peer_next) {
			int idx = mrcp_ev_lookup(&e->qps[s].evs, pr->ev);
			if (idx >= 0)
				mrcp_ev_rev_learn(&e->qps[s].evs, idx);
		}
		break;
	}
}

void mrcp__ep_on_rx(struct mrcp_engine *e, const struct mrcp_pkt *pkt, const struct mrcp_rx *rx)
{
	struct peer *p = mrcp__peer_find(e, &rx->src);

	e->c.ep_rx++;
	if (rx->port == 0 || rx->port > e->cfg.n_ports)
		return;
	/* D69: a known node speaks on a plane from its address there; a
	 * response answers a request we sent, so its node is known */
	if (p != NULL ? !mrcp__peer_on_plane(p, rx->port, &rx->src) : pkt->bth.opcode == MRCP_OP_EP_RESPONSE) {
		e->c.rx_foreign_src++;
		return;
	}
	if (pkt->bth.opcode == MRCP_OP_EP_REQUEST)
		on_request(e, p, pkt, rx);
	else
		on_response(e, p, pkt);
	ep_arm(e);
}

void mrcp__ep_port_change(struct mrcp_engine *e)
{
	ep_arm(e);
}
