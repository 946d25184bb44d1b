/* resp.c - the responder side of a QP: the receive window and bitmap, checks
 * and out-of-order placement of Write packets (§4.2), the message table and
 * in-order release of completions and immediates (D39), and the SACK, NACK
 * and AETH it sends back (§4.3, D26-D28, D38, D47, D55). It never touches
 * the requester's scoreboard. */
#include <string.h>

#include "engine_internal.h"

static inline bool rbit_get(const struct qp *qp, uint32_t psn)
{
	uint32_t i = psn & qp->rbits_mask;

	return qp->rbits[i / 64] >> (i % 64) & 1;
}

static inline void rbit_set(struct qp *qp, uint32_t psn)
{
	uint32_t i = psn & qp->rbits_mask;

	qp->rbits[i / 64] |= 1ull << (i % 64);
}

static inline void rbit_clear(struct qp *qp, uint32_t psn)
{
	uint32_t i = psn & qp->rbits_mask;

	qp->rbits[i / 64] &= ~(1ull << (i % 64));
}

/* The 64 bitmap bits of PSNs base .. base + 63, bit i = base + i (D26).
 * The ring is at least 128 bits and the range lies inside the window. */
static uint64_t rbits_window(const struct qp *qp, uint32_t base)
{
	uint32_t i = base & qp->rbits_mask, w = i / 64, sh = i % 64;
	uint32_t words = (qp->rbits_mask + 1) / 64;
	uint64_t lo = qp->rbits[w] >> sh;

	if (sh == 0)
		return lo;
	return lo | qp->rbits[(w + 1) % words] << (64 - sh);
}

void mrcp__ctl_route(struct mrcp_engine *e, struct qp *qp, struct mrcp_tx *tx, uint8_t port)
{
	uint32_t up = e->port_up & (qp->peer ? qp->peer->remote_up : ~0u);
	int rev;

	/* answer on the plane the trigger arrived on (§4.3); if that plane is
	 * down on either side, on the first plane that is up on both */
	if (port == 0 || port > e->cfg.n_ports || !(up & (1u << (port - 1)))) {
		for (uint8_t p = 1; p <= e->cfg.n_ports; p++)
			if (up & (1u << (p - 1))) {
				port = p;
				break;
			}
		if (port == 0 || port > e->cfg.n_ports)
			port = 1;
	}
	rev = mrcp_ev_rev_get(&qp->evs, port); /* D48 */
	tx->port = port;
	tx->ev = rev >= 0 ? qp->evs.evs[rev].value : 0;
	tx->qpn = qp->qpn;
	tx->dst = qp->peer->port_addr[port - 1];
}

/* D55: the penalty rises linearly from 0 at 50 % backlog to 127 at 100 %. */
static uint8_t penalty(const struct qp *qp)
{
	if (qp->backlog_pct <= 50)
		return 0;
	return (uint8_t)((qp->backlog_pct - 50) * 127 / 50);
}

static void send_sack(struct mrcp_engine *e, struct qp *qp, uint32_t trig_psn, uint32_t trig_ev,
		      uint16_t trig_ts, uint8_t m, uint8_t port, bool pr)
{
	struct mrcp_tx *tx;
	struct mrcp_seth seth;
	struct mrcp_cc_state cc;
	uint32_t cack = qp->rcv_cack, base, lo;
	int32_t off;
	uint8_t pen;

	qp->new_since_sack = 0;
	qp->sack_due = false;
	tx = mrcp__ctl_alloc(e);
	if (tx == NULL)
		return;
	seth.m = m;
	seth.pr = pr;
	off = pr ? 0 : mrcp_psn_diff(trig_psn, cack);
	if (off > INT16_MAX)
		off = INT16_MAX;
	if (off < INT16_MIN)
		off = INT16_MIN;
	seth.ack_psn_offset = (int16_t)off;
	seth.entropy = trig_ev;
	seth.spdcid = (uint16_t)qp->qpn; /* D15 */
	seth.dpdcid = (uint16_t)qp->dqpn;
	seth.svc_time = 0;               /* D17: answered within the burst */
	seth.cack_psn = cack;            /* and BTH.PSN (D11) */
	seth.cc_type = 0;
	seth.cc_flags = 0;
	/* D27: base = max(trigger - 63, cack + 1) */
	lo = mrcp_psn_add(trig_psn, -63);
	base = mrcp_psn_add(cack, 1);
	if (!pr && mrcp_psn_gt(lo, base))
		base = lo;
	seth.sack_offset = (int16_t)mrcp_psn_diff(base, cack);
	seth.sack_bitmap = rbits_window(qp, base); /* D26; base > cack, base + 63 <= cack + rW */
	seth.mpr = 0; /* Dynamic MPR is off (D25) */
	cc.tx_timestamp = trig_ts;
	cc.ooo_count = (uint16_t)(qp->ooo > 0x7FFF ? 0x7FFF : qp->ooo); /* D18 */
	pen = penalty(qp);
	cc.rcv_cwnd_pen = pen;
	cc.r_c = pen == 0 && qp->pen_was_on; /* D55 */
	qp->pen_was_on = pen != 0;
	cc.rcvd_bytes = (uint32_t)(qp->rcvd_bytes >> 8) & 0xFFFFFF; /* D19 */
	/* every field is in range: dqpn was checked at connect, the rest
	 * are masked or bounded above */
	tx->hdr_len = (uint16_t)mrcp_sack_hdr_write(tx->hdr, qp->dqpn, &seth, &cc);
	tx->opcode = MRCP_OP_SACK;
	tx->psn = cack;
	mrcp__ctl_route(e, qp, tx, port);
	qp->c.sack_tx++;
}

static void send_nack(struct mrcp_engine *e, struct qp *qp, uint32_t psn, uint32_t ev,
		      uint16_t ts, uint8_t code, uint8_t port)
{
	struct mrcp_tx *tx = mrcp__ctl_alloc(e);
	struct mrcp_pkt p;
	int hl;

	if (tx == NULL)
		return;
	mrcp_pkt_init(&p, MRCP_OP_NACK, qp->dqpn, psn); /* D11 */
	p.neth.nack_code = code;
	p.neth.entropy = ev;
	p.neth.spdcid = (uint16_t)qp->qpn;
	p.neth.dpdcid = (uint16_t)qp->dqpn;
	p.neth.nack_psn = psn;
	p.neth.tx_timestamp = ts;
	hl = mrcp_pkt_encode_hdr(&p, tx->hdr, sizeof(tx->hdr));
	tx->hdr_len = (uint16_t)(hl > 0 ? hl : 0);
	tx->opcode = MRCP_OP_NACK;
	tx->psn = psn;
	mrcp__ctl_route(e, qp, tx, port);
	qp->c.nack_tx++;
}

static void send_aeth(struct mrcp_engine *e, struct qp *qp, uint8_t syndrome, uint8_t port)
{
	struct mrcp_tx *tx = mrcp__ctl_alloc(e);
	uint16_t msn = (uint16_t)(qp->rcv_msn - 1); /* D21: highest completed in order */

	if (tx == NULL)
		return;
	/* D11: BTH.PSN is the last released PSN; the syndromes are the
	 * callers' constants, dqpn was checked at connect */
	tx->hdr_len = (uint16_t)mrcp_ack_hdr_write(tx->hdr, qp->dqpn, qp->last_released_psn, syndrome, msn);
	tx->opcode = MRCP_OP_ACK;
	tx->psn = qp->last_released_psn;
	mrcp__ctl_route(e, qp, tx, port);
	qp->rcv_acked_msn = msn;
	qp->c.ack_tx++;
}

/* D73: a QP destroyed while connected repeats its last AETH once on every
 * plane up at both ends. The requester completes its messages on the AETH
 * alone (D38); if the one the responder sent was lost, its probe for it
 * (§4.7) would reach a QPN nobody answers (D60) and the message would
 * never complete although it was delivered. */
void mrcp__resp_farewell(struct mrcp_engine *e, struct qp *qp)
{
	uint32_t up;

	if (qp->peer == NULL || (qp->state != MRCP_QPS_RTS && qp->state != MRCP_QPS_RTR) || qp->c.rx_data_pkts == 0)
		return;
	up = e->port_up & qp->peer->remote_up;
	for (uint8_t port = 1; port <= e->cfg.n_ports; port++)
		if (up & (1u << (port - 1)))
			send_aeth(e, qp, MRCP_AETH_ACK, port);
}

/* A protocol violation by the peer: NAK it and move to ERROR (§4.2 step 4),
 * remembering why (@err->cause, D70). */
static void resp_fail_why(struct mrcp_engine *e, struct qp *qp, uint8_t syndrome, struct mrcp_qp_err *err,
			  uint8_t port)
{
	send_aeth(e, qp, syndrome, port);
	err->status = syndrome == MRCP_AETH_NAK_REMOTE_ACCESS ? MRCP_WC_REM_ACCESS_ERR : MRCP_WC_REM_INV_REQ_ERR;
	mrcp__qp_fail(e, qp, err);
}

static void resp_fail(struct mrcp_engine *e, struct qp *qp, uint8_t syndrome, uint8_t port)
{
	struct mrcp_qp_err err = {
		.cause = syndrome == MRCP_AETH_NAK_REMOTE_ACCESS ? MRCP_QP_ERR_BAD_ACCESS : MRCP_QP_ERR_BAD_REQUEST,
	};

	resp_fail_why(e, qp, syndrome, &err, port);
}

/* §4.8, D70: a WriteImm with no receive for it, or one more completed
 * WriteImm waiting than max_wimm, is fatal (MRC has no RNR): the peer gets
 * a NAK invalid request, and this QP's ERROR names the message (its MSN,
 * immediate and length), so the host can tell its owner, who has no work
 * request that could complete with the error. */
static void resp_fail_imm(struct mrcp_engine *e, struct qp *qp, const struct rmsg *m, uint8_t cause,
			  uint8_t port)
{
	struct mrcp_qp_err err = { .cause = cause, .msn = m->msn, .imm = m->imm, .byte_len = m->dma_len };

	resp_fail_why(e, qp, MRCP_AETH_NAK_INVALID_REQ, &err, port);
}

/* Release completed messages strictly in MSN order (§4.8, D39). @return
 * false if the QP failed (a WriteImm with no posted receive). */
static bool release(struct mrcp_engine *e, struct qp *qp, uint8_t port)
{
	for (;;) {
		struct rmsg *m = &qp->rm[qp->rcv_msn & qp->rm_mask];
		struct mrcp_wc wc;

		if (!m->used || m->msn != qp->rcv_msn || !m->complete)
			return true;
		if (m->has_imm) {
			if (qp->rq_posted == qp->rq_used) {
				/* no RNR in MRC: no receive posted is fatal (§4.8, D70) */
				resp_fail_imm(e, qp, m, MRCP_QP_ERR_NO_RECV, port);
				return false;
			}
			if (!mrcp__cq_room(e)) {
				e->c.cq_overflow++;
				e->cq_blocked = true;
				return true; /* released when the CQ drains */
			}
			memset(&wc, 0, sizeof(wc));
			wc.wr_id = qp->rq[qp->rq_used++ & qp->rq_mask];
			wc.user_ctx = qp->user_ctx;
			wc.qpn = qp->qpn;
			wc.opcode = MRCP_WC_RECV_IMM;
			wc.status = MRCP_WC_SUCCESS;
			wc.byte_len = m->dma_len;
			wc.imm = m->imm;
			wc.msn = m->msn;
			mrcp__cq_push(e, &wc);
			qp->c.wc_ok++;
			qp->stash_imm--;
		}
		qp->last_released_psn = m->last_psn;
		m->used = false;
		qp->rcv_msn++;
		qp->rcv_msn_moved = true;
	}
}

void mrcp__resp_release(struct mrcp_engine *e, struct qp *qp)
{
	if (qp->state == MRCP_QPS_RTS || qp->state == MRCP_QPS_RTR) {
		release(e, qp, qp->trig_port);
		if (qp->rcv_msn_moved && qp->state != MRCP_QPS_ERROR) {
			send_aeth(e, qp, MRCP_AETH_ACK, qp->trig_port);
			qp->rcv_msn_moved = false;
		}
	}
}

static bool opcode_has_imm(uint8_t op)
{
	return op == MRCP_OP_WRITE_LAST_IMM || op == MRCP_OP_WRITE_ONLY_IMM;
}

static bool opcode_is_last(uint8_t op)
{
	return op == MRCP_OP_WRITE_LAST || op == MRCP_OP_WRITE_LAST_IMM ||
	       op == MRCP_OP_WRITE_ONLY || op == MRCP_OP_WRITE_ONLY_IMM;
}

void mrcp__resp_on_data(struct mrcp_engine *e, struct qp *qp, const struct mrcp_write *p, const struct mrcp_rx *rx)
{
	uint32_t psn = p->psn;
	int32_t d = mrcp_psn_diff(psn, qp->rcv_cack);
	uint16_t ts = p->tx_timestamp; /* 0 without TSETH */
	bool ce = rx->ecn == MRCP_ECN_CE;
	uint8_t m;
	struct eng_mr *mr;
	struct rmsg *msg;
	uint32_t len = p->payload_len;
	bool done = false;

	qp->trig_port = rx->port;
	/* §4.2 step 2: a trimmed header is NACKed at once, nothing placed */
	if (rx->trim != MRCP_TRIM_NONE) {
		qp->c.rx_trimmed++;
		if (d > 0 && (uint32_t)d <= qp->rW && !rbit_get(qp, psn))
			send_nack(e, qp, psn, rx->ev, ts,
				  rx->trim == MRCP_TRIM_LASTHOP ? MRCP_NACK_TRIMMED_LASTHOP : MRCP_NACK_TRIMMED,
				  rx->port);
		else
			send_sack(e, qp, psn, rx->ev, ts, MRCP_VERDICT_NONE, rx->port, false);
		return;
	}
	m = mrcp_ce_table_update(&qp->ce, rx->ev, ce); /* D47 */
	/* §4.1: duplicates are re-acknowledged, never placed. ooo counts
	 * the bits set, so with none set (in order) no bit is read */
	if (d <= 0 || ((uint32_t)d <= qp->rW && qp->ooo != 0 && rbit_get(qp, psn))) {
		qp->c.rx_dup++;
		qp->rcvd_bytes += mrcp__nominal(rx->len); /* D19 counts duplicates */
		if (qp->mode == MRCP_MODE_MRC)
			mrcp_ev_rev_rechoose(&qp->evs); /* D48: our SACKs are being lost */
		send_sack(e, qp, psn, rx->ev, ts, m, rx->port, false);
		return;
	}
	if ((uint32_t)d > qp->rW) {
		qp->c.rx_oor++;
		send_nack(e, qp, psn, rx->ev, ts, MRCP_NACK_PSN_OOR_WINDOW, rx->port);
		return;
	}
	if (qp->mode == MRCP_MODE_RC && d != 1) {
		/* the baseline accepts only the next PSN: go-back-N */
		qp->c.rx_oor++;
		return;
	}
	/* §4.2 step 4: header stack and lengths */
	if (len > qp->mtu || len > p->dma_len ||
	    ((p->opcode == MRCP_OP_WRITE_FIRST || p->opcode == MRCP_OP_WRITE_MIDDLE) && len != qp->mtu) ||
	    mrcp_msn_diff(p->msn, qp->rcv_msn) < 0 ||
	    (uint32_t)mrcp_msn_diff(p->msn, qp->rcv_msn) >= qp->rm_cap) {
		resp_fail(e, qp, MRCP_AETH_NAK_INVALID_REQ, rx->port);
		return;
	}
	if (!mrcp__qp_rm_room(qp, p->msn)) {
		qp->c.rx_oor++; /* no memory for the message: dropped, it is resent */
		return;
	}
	/* R_Key, a region of this QP's PD (D67), remote write access,
	 * VA..VA+len inside the region */
	if (len != 0 || p->dma_len != 0) {
		mr = mrcp__mr_lookup(e, p->rkey);
		if (mr == NULL || mr->pd != qp->pd || !(mr->access & MRCP_ACCESS_REMOTE_WRITE) || p->va < mr->va ||
		    p->va + len < p->va || p->va + len > mr->va + mr->len) {
			resp_fail(e, qp, MRCP_AETH_NAK_REMOTE_ACCESS, rx->port);
			return;
		}
		if (len != 0 && e->cfg.place_payload)
			memcpy(mr->host + (p->va - mr->va), p->payload, len); /* step 5 */
	}
	msg = &qp->rm[p->msn & qp->rm_mask];
	if (!msg->used) {
		memset(msg, 0, sizeof(*msg));
		msg->used = true;
		msg->msn = p->msn;
		msg->dma_len = p->dma_len;
		msg->rq_msn = p->rq_msn;
	} else if (msg->msn != p->msn || msg->dma_len != p->dma_len || msg->complete) {
		resp_fail(e, qp, MRCP_AETH_NAK_INVALID_REQ, rx->port);
		return;
	}
	msg->got += len;
	if (opcode_has_imm(p->opcode)) {
		msg->has_imm = true;
		msg->imm = p->imm;
	}
	if (opcode_is_last(p->opcode)) {
		msg->last_seen = true;
		msg->last_psn = psn;
	}
	if (msg->got > msg->dma_len) {
		resp_fail(e, qp, MRCP_AETH_NAK_INVALID_REQ, rx->port);
		return;
	}
	/* D39: complete when the accepted bytes equal the DMA length (and the
	 * last packet, which carries the immediate, is here) */
	if (msg->got == msg->dma_len && msg->last_seen) {
		msg->complete = true;
		done = true;
		if (msg->has_imm && ++qp->stash_imm > qp->max_wimm_local) {
			resp_fail_imm(e, qp, msg, MRCP_QP_ERR_WIMM_OVERFLOW, rx->port); /* §4.8 */
			return;
		}
	}
	/* step 5: the bitmap and cack; the next PSN in order moves cack
	 * without a round trip through its bit */
	if (d == 1) {
		qp->rcv_cack = psn;
	} else {
		rbit_set(qp, psn);
		qp->ooo++;
	}
	while (qp->ooo != 0 && rbit_get(qp, mrcp_psn_add(qp->rcv_cack, 1))) {
		qp->rcv_cack = mrcp_psn_add(qp->rcv_cack, 1);
		rbit_clear(qp, qp->rcv_cack);
		qp->ooo--;
	}
	qp->rcvd_bytes += mrcp__nominal(rx->len); /* D19 */
	qp->c.rx_data_pkts++;
	qp->last_rx_data_ns = e->now ? e->now : 1;
	qp->c.rx_data_bytes += len;
	/* Only a message completing can let release() move: one held back
	 * for CQ room is retried by mrcp_poll_cq() when the CQ drains. */
	if (done && !release(e, qp, rx->port))
		return;
	/* D28: SACK at once for CE, rtx and AckReq; else every sack_every
	 * packets and at the end of the burst */
	qp->new_since_sack++;
	if (ce || p->rtx || p->ack_req || qp->new_since_sack >= e->cfg.sack_every) {
		send_sack(e, qp, psn, rx->ev, ts, m, rx->port, false);
	} else {
		qp->sack_due = true;
		qp->trig_psn = psn;
		qp->trig_ev = rx->ev;
		qp->trig_ts = ts;
		qp->trig_m = m;
		qp->trig_rx_ns = e->now;
	}
}

void mrcp__resp_on_probe(struct mrcp_engine *e, struct qp *qp, const struct mrcp_pkt *p, const struct mrcp_rx *rx)
{
	uint8_t m;

	qp->c.probe_rx++;
	qp->trig_port = rx->port;
	m = mrcp_ce_table_update(&qp->ce, rx->ev, rx->ecn == MRCP_ECN_CE);
	/* D48: a probe for data we already SACKed means SACKs are lost */
	if (qp->mode == MRCP_MODE_MRC && mrcp_psn_le(p->bth.psn, qp->rcv_cack) &&
	    mrcp_psn_diff(p->bth.psn, qp->rcv_init_psn) >= 0 && qp->c.sack_tx != 0)
		mrcp_ev_rev_rechoose(&qp->evs);
	/* D37: SACK with pr = 1, offset 0, the probe's EV and timestamp... */
	send_sack(e, qp, qp->rcv_cack, rx->ev, p->peth.tx_timestamp, m, rx->port, true);
	/* ...followed by an AETH with the in-order completed MSN */
	send_aeth(e, qp, MRCP_AETH_ACK, rx->port);
	qp->rcv_msn_moved = false;
}

void mrcp__resp_burst_end(struct mrcp_engine *e, struct qp *qp)
{
	if (qp->state != MRCP_QPS_RTS && qp->state != MRCP_QPS_RTR)
		return;
	if (qp->sack_due)
		send_sack(e, qp, qp->trig_psn, qp->trig_ev, qp->trig_ts, qp->trig_m, qp->trig_port, false);
	release(e, qp, qp->trig_port);
	if (qp->rcv_msn_moved && qp->state != MRCP_QPS_ERROR) {
		send_aeth(e, qp, MRCP_AETH_ACK, qp->trig_port); /* D38 */
		qp->rcv_msn_moved = false;
	}
}
