/* req_tx.c - the requester's transmit side: work requests cut into
 * MTU-sized PSNs (D3) within the window (§4.1), the congestion window and
 * the WriteImm limit (§4.8), data packets built from the message's header
 * template and scatter list, EVs chosen for new data and for
 * retransmissions (D31, D62), and each send recorded in the scoreboard
 * (its RTO deadline, §4.5, and its TX-stage departure, D65).
 * Retransmissions go first, oldest first. Acknowledgements are req.c,
 * timers req_timer.c. */
#include <string.h>

#include "req_internal.h"

/* ---- building data packets ------------------------------------------------------------ */

static uint32_t wqe_npkts(const struct qp *qp, const struct wqe *w)
{
	return w->len == 0 ? 1 : (w->len + qp->mtu - 1) / qp->mtu;
}

/* Packet @idx of the @n in @w. */
static uint8_t data_opcode(const struct wqe *w, uint32_t n, uint32_t idx)
{
	bool imm = w->opcode == MRCP_WR_WRITE_IMM;

	if (n == 1)
		return imm ? MRCP_OP_WRITE_ONLY_IMM : MRCP_OP_WRITE_ONLY;
	if (idx == 0)
		return MRCP_OP_WRITE_FIRST;
	if (idx + 1 < n)
		return MRCP_OP_WRITE_MIDDLE;
	return imm ? MRCP_OP_WRITE_LAST_IMM : MRCP_OP_WRITE_LAST;
}

/* BTH + METH + TSETH + RETH [+ ImmDt] + payload + pad (§3.1) */
static uint32_t data_mrc_len(const struct wqe *w, uint32_t len)
{
	uint32_t hdr = (uint32_t)(sizeof(struct mrcp_bth_wire) + sizeof(struct mrcp_meth_wire) +
				  sizeof(struct mrcp_tseth_wire) + sizeof(struct mrcp_reth_wire));

	if (w->opcode == MRCP_WR_WRITE_IMM)
		hdr += sizeof(struct mrcp_imm_wire); /* only the last packet, but charge all alike */
	return hdr + ((len + 3) & ~3u);
}

static uint8_t data_dscp(const struct mrcp_engine *e, const struct qp *qp, bool rtx)
{
	if (!qp->peer_trim_nack)
		return e->cfg.dscp.dscp[MRCP_DSCP_CLASS_NO_TRIM]; /* D40 */
	return e->cfg.dscp.dscp[rtx ? MRCP_DSCP_CLASS_TRIMMABLE_RETX : MRCP_DSCP_CLASS_TRIMMABLE]; /* D31 */
}

/* Write @w's header template once (mrcp_data_hdr_patch() fills in the
 * per-packet fields). */
static void wqe_template(const struct qp *qp, struct wqe *w)
{
	/* RETH in every packet */
	mrcp_data_hdr_template(w->hdr, qp->dqpn, w->msn, w->rq_msn, w->rkey, w->len,
			       w->opcode == MRCP_WR_WRITE_IMM, w->imm);
	w->npkts = wqe_npkts(qp, w);
	w->hdr_ready = true;
}

/* Fill @tx with PSN @psn of the message in @w (entry @en), on EV @ev. */
static MRCP_PKT_INLINE void build_data(struct mrcp_engine *e, struct qp *qp, struct wqe *w,
				      const struct sb_entry *en, uint32_t psn, int ev, bool rtx,
				      struct mrcp_tx *tx)
{
	uint32_t idx = (uint32_t)mrcp_psn_diff(psn, w->first_psn);
	uint32_t off = en->msg_off, left = en->len;
	uint8_t pad = (uint8_t)((4 - (en->len & 3)) & 3);
	const struct mrcp_ev *v = &qp->evs.evs[ev];

	if (!w->hdr_ready)
		wqe_template(qp, w);
	memcpy(tx->hdr, w->hdr, sizeof(w->hdr));
	tx->opcode = data_opcode(w, w->npkts, idx);
	tx->hdr_len = (uint16_t)mrcp_data_hdr_patch(tx->hdr, tx->opcode, pad,
						    idx + 1 == w->npkts, /* AckReq on the last */
						    rtx, psn, mrcp__ts_now(e->now) /* D13 */,
						    w->remote_va + off);
	tx->pad = pad;
	tx->payload_len = left;
	/* the payload as pieces of the scatter list */
	if (w->n_sge == 1 && left != 0) {
		tx->seg[0].ptr = w->sge[0].host + off;
		tx->seg[0].len = left;
		tx->n_seg = 1;
	} else {
		uint32_t pos = 0;

		tx->n_seg = 0;
		for (unsigned i = 0; i < w->n_sge && left > 0; i++) {
			uint32_t l = w->sge[i].len;
			if (off >= pos + l) {
				pos += l;
				continue;
			}
			uint32_t from = off - pos, take = l - from;
			if (take > left)
				take = left;
			tx->seg[tx->n_seg].ptr = w->sge[i].host + from;
			tx->seg[tx->n_seg].len = take;
			tx->n_seg++;
			off += take;
			left -= take;
			pos += l;
		}
	}
	tx->port = v->port;
	tx->ev = v->value;
	tx->dscp = data_dscp(e, qp, rtx);
	tx->ecn = MRCP_ECN_ECT0; /* D9 */
	tx->psn = psn;
	tx->qpn = qp->qpn;
	tx->rtx = rtx;
	tx->dst = qp->peer->port_addr[v->port - 1];
}

/* Choose the EV for a packet; RC mode always uses its one EV. */
static int pick_ev(struct mrcp_engine *e, struct qp *qp, int exclude)
{
	if (qp->mode == MRCP_MODE_RC)
		return qp->rc_ev;
	return mrcp_ev_select(&qp->evs, e->now, exclude, e->port_room);
}

/* The EV for a retransmission of @en (D31): a GOOD EV other than the one
 * the lost copy used, and after a silent loss (inferred or RTO) one on
 * another plane when there is one (D62): silence is how a failed plane
 * shows itself, its other EVs are likely dead too, and a sparse flow (a
 * credit return, a tail) that retries on the same plane loses a probe
 * period (or an RTO, D33) per EV until every EV of the plane is retired. */
static int pick_rtx_ev(struct mrcp_engine *e, struct qp *qp, const struct sb_entry *en)
{
	int ev;

	if (qp->mode != MRCP_MODE_MRC)
		return qp->rc_ev;
	if ((en->rtx_cause == CAUSE_RTO || en->rtx_cause == CAUSE_FAST) && e->cfg.n_ports > 1) {
		ev = mrcp_ev_select(&qp->evs, e->now, en->ev, e->port_room & ~(1u << (en->port - 1)));
		if (ev >= 0)
			return ev;
	}
	return mrcp_ev_select(&qp->evs, e->now, en->ev, e->port_room);
}

/* Record a (re)transmission of @psn on @ev. */
static MRCP_PKT_INLINE void on_sent(struct mrcp_engine *e, struct qp *qp, uint32_t psn, int ev, bool rtx)
{
	struct sb_entry *en = sb_at(qp, psn);
	uint8_t b_exp = 0;
	uint64_t ival;

	/* §4.5: b = 1 unless this send is an RTO retransmission */
	if ((en->flags & SB_BY_TIMEOUT) && qp->k >= qp->linear_cnt)
		b_exp = (uint8_t)(qp->k - qp->linear_cnt + 1);
	en->b_exp = b_exp;
	ival = rto_ival(qp, en);
	{
		/* D65: the port's TX stage drains at the port's rate */
		uint8_t port = qp->evs.evs[ev].port;
		uint64_t *free_ns = &e->port_free_ns[port - 1], start = *free_ns;
		uint64_t drain;

		if (mrcp_time_lt(start, e->now) || start - e->now > ONE_SECOND_NS)
			start = e->now;
		en->tx_wait_ns = (uint32_t)(start - e->now);
		if (en->nominal == e->port_tx_nominal[port - 1]) {
			drain = e->port_tx_ns[port - 1]; /* the same size as the last: no division */
		} else {
			uint64_t bps = e->cfg.port_bps[port - 1];

			drain = bps ? (uint64_t)en->nominal * 8000000000ull / bps : 0;
			e->port_tx_nominal[port - 1] = en->nominal;
			e->port_tx_ns[port - 1] = drain;
		}
		*free_ns = start + drain;
	}
	en->sent_ns = e->now;
	en->deadline_ns = e->now + ival;
	en->ev = (int16_t)ev;
	en->port = qp->evs.evs[ev].port;
	en->tx_count++;
	qp->last_tx_data_ns = e->now ? e->now : 1;
	out_push(qp, psn);
	if (qp->mode == MRCP_MODE_MRC)
		mrcp_ev_on_send(&qp->evs, ev, rtx);
}

/* The oldest PSN queued for retransmission that may go now, or NIL. */
uint32_t mrcp__req_rtx_next(struct mrcp_engine *e, struct qp *qp)
{
	for (uint32_t psn = qp->snd_una; mrcp_psn_lt(psn, qp->next_psn); psn = mrcp_psn_add(psn, 1)) {
		struct sb_entry *en = sb_at(qp, psn);
		if ((en->flags & SB_RTXQ) && mrcp_time_le(en->not_before_ns, e->now))
			return psn;
	}
	return NIL;
}

bool mrcp__req_has_work(const struct qp *qp)
{
	if (qp->state != MRCP_QPS_RTS)
		return false;
	return qp->n_rtxq != 0 || qp->sq_seg != qp->sq_tail;
}

unsigned mrcp__req_tx(struct mrcp_engine *e, struct qp *qp, struct mrcp_tx *out, unsigned max)
{
	unsigned n = 0;

	while (n < max && qp->state == MRCP_QPS_RTS) {
		/* D31: retransmissions first, oldest first */
		if (qp->n_rtxq != 0) {
			uint32_t psn = mrcp__req_rtx_next(e, qp);
			if (psn != NIL) {
				struct sb_entry *en = sb_at(qp, psn);
				int ev;

				if (en->flags & SB_SUSPECT) {
					if (!mrcp__req_suspect_due(e, qp, en))
						continue; /* the verdict moved on (D65) */
					mrcp__req_confirm_lost(e, qp, psn);
				}

				if (!mrcp__cc_can_send(qp->cc, en->nominal)) {
					qp->c.stalls_cwnd++;
					break;
				}
				ev = pick_rtx_ev(e, qp, en);
				if (ev < 0) {
					qp->c.stalls_no_ev++;
					break;
				}
				build_data(e, qp, &qp->sq[en->wqe & qp->sq_mask], en, psn, ev, true, &out[n++]);
				switch (en->rtx_cause) {
				case CAUSE_FAST: qp->c.rtx_fast++; break;
				case CAUSE_NACK: qp->c.rtx_nack++; break;
				case CAUSE_RTO: qp->c.rtx_rto++; break;
				default: qp->c.rtx_port_down++; break;
				}
				en->flags &= (uint8_t)~SB_RTXQ;
				qp->n_rtxq--;
				on_sent(e, qp, psn, ev, true);
				en->flags &= (uint8_t)~SB_BY_TIMEOUT;
				continue;
			}
		}
		/* new data */
		if (qp->sq_seg == qp->sq_tail)
			break;
		struct wqe *w = &qp->sq[qp->sq_seg & qp->sq_mask];
		if (!w->started) {
			/* the WriteImm limit applies per message (§4.8) */
			if (w->opcode == MRCP_WR_WRITE_IMM && qp->wimm_outstanding >= qp->max_wimm)
				break;
		}
		/* §4.1: PSN p may go only if psn_diff(p, cack) <= W */
		if (mrcp_psn_diff(qp->next_psn, qp->snd_una) >= (int32_t)qp->W) {
			qp->c.stalls_window++;
			break;
		}
		uint32_t len = w->len - w->seg_off;
		if (len > qp->mtu)
			len = qp->mtu; /* D3: every non-last packet carries one MTU */
		uint32_t nominal = mrcp__nominal(data_mrc_len(w, len));
		if (!mrcp__cc_can_send(qp->cc, nominal)) {
			qp->c.stalls_cwnd++;
			break;
		}
		int ev = pick_ev(e, qp, -1);
		if (ev < 0) {
			qp->c.stalls_no_ev++;
			break;
		}
		if (!mrcp__qp_sb_room(qp)) {
			qp->c.stalls_window++; /* could not grow the scoreboard */
			break;
		}
		uint32_t psn = qp->next_psn;
		struct sb_entry *en = sb_at(qp, psn);
		if (en->tx_count >= 2 && qp->sb_mask + 1 < qp->sb_cap)
			mrcp__qp_sb_evict(qp, psn); /* for check_spurious */
		if (!w->started) {
			w->started = true;
			w->first_psn = psn;
			if (w->opcode == MRCP_WR_WRITE_IMM)
				qp->wimm_outstanding++;
		}
		memset(en, 0, sizeof(*en));
		en->flags = SB_LIVE;
		en->wqe = qp->sq_seg;
		en->msg_off = w->seg_off;
		en->len = (uint16_t)len;
		en->nominal = (uint16_t)nominal;
		en->prev = en->next = NIL;
		qp->next_psn = mrcp_psn_add(psn, 1);
		w->seg_off += len;
		build_data(e, qp, w, en, psn, ev, false, &out[n++]);
		qp->c.tx_data_pkts++;
		qp->c.tx_data_bytes += len;
		on_sent(e, qp, psn, ev, false);
		if (w->seg_off >= w->len) {
			w->all_sent = true;
			w->last_psn = psn;
			qp->sq_seg++;
		}
	}
	return n;
}
