/* req.c - the requester side of a QP: segmentation of Write / WriteImm work
 * requests into PSNs, the scoreboard and its send-order list, SACK / NACK /
 * AETH processing, loss inference (D29), retransmission on another EV (D31),
 * RTO rounds (§4.5, D32, D33), reliability probes (D36, D45) and completions
 * in MSN order (D38). It chooses EVs through ev.c and asks cc_*.c for the
 * window; it never touches the responder's state. */
#include <errno.h>
#include <string.h>

#include "engine_internal.h"

#define ONE_SECOND_NS 1000000000ull

static inline struct sb_entry *sb_at(struct qp *qp, uint32_t psn)
{
	return &qp->sb[psn & qp->sb_mask];
}

static inline bool psn_in_flight(const struct qp *qp, uint32_t psn)
{
	return mrcp_psn_ge(psn, qp->snd_una) && mrcp_psn_lt(psn, qp->next_psn);
}

/* ---- the send-order list (oldest transmission first) ------------------------- */

static inline void out_push(struct qp *qp, uint32_t psn)
{
	struct sb_entry *en = sb_at(qp, psn);

	en->prev = qp->out_tail;
	en->next = NIL;
	if (qp->out_tail != NIL)
		sb_at(qp, qp->out_tail)->next = psn;
	else
		qp->out_head = psn;
	qp->out_tail = psn;
	en->flags |= SB_OUT;
	qp->n_out++;
	qp->outstanding_bytes += en->nominal;
	qp->cc->inflight += en->nominal; /* the QPCC's count (mrcp_cc.h) */
}

/* Take @psn off the send-order list, and its bytes out of the QPCC's
 * inflight: the one place a packet leaves flight (but a QP's error or free,
 * which drops its whole list). Nothing if it was not on the list. */
static inline void out_remove(struct qp *qp, uint32_t psn)
{
	struct sb_entry *en = sb_at(qp, psn);

	if (!(en->flags & SB_OUT))
		return;
	if (en->prev != NIL)
		sb_at(qp, en->prev)->next = en->next;
	else
		qp->out_head = en->next;
	if (en->next != NIL)
		sb_at(qp, en->next)->prev = en->prev;
	else
		qp->out_tail = en->prev;
	en->flags &= (uint8_t)~SB_OUT;
	qp->n_out--;
	qp->outstanding_bytes -= en->nominal;
	qp->cc->inflight -= en->nominal;
}

/* Take @psn off the wire and queue it for retransmission (D31). The caller
 * gives the CC its signal, if any, after this: on_loss, on_nack or
 * on_timeout see inflight without the packet. */
static void rtx_queue(struct qp *qp, uint32_t psn, uint8_t cause, uint64_t not_before)
{
	struct sb_entry *en = sb_at(qp, psn);

	out_remove(qp, psn);
	if (qp->mode == MRCP_MODE_MRC)
		mrcp_ev_probation_settled(&qp->evs, en->ev);
	if (!(en->flags & SB_RTXQ)) {
		en->flags |= SB_RTXQ;
		qp->n_rtxq++;
	}
	en->rtx_cause = cause;
	en->not_before_ns = not_before;
}

enum { CAUSE_FAST = 1, CAUSE_NACK, CAUSE_RTO, CAUSE_PORT };

/* D64: a PSN whose loss or RTO was charged to an EV is acknowledged. If
 * the copy that arrived is known to be an earlier one than the last resend
 * (@earlier: its echoed timestamp says so; or the PSN was never resent), it
 * went on the charged EV: the loss was a pause or a reorder, not the path,
 * and the EV gets its service back. Otherwise the charge stands. Either way
 * it is settled. */
static void undo_charge(struct mrcp_engine *e, struct qp *qp, struct sb_entry *en, bool earlier)
{
	int idx = en->charged - 1;

	en->charged = 0;
	if (earlier || (en->flags & SB_RTXQ)) {
		qp->c.losses_undone++;
		mrcp_ev_event(&qp->evs, idx, MRCP_EV_EVT_LOSS_UNDONE, e->now);
	}
}

/* ---- D65: windows of the largest reordering and RTT -------------------------- */

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* When @en's last copy left the host, as estimated at its send: the send
 * time plus the wait behind the data already queued on its port. Loss
 * inference compares these, not send times: packets stamped in one burst
 * leave a port one after the other, and a port's queue is no path's
 * reordering. */
static inline uint64_t wire_ns(const struct sb_entry *en)
{
	return en->sent_ns + en->tx_wait_ns;
}

/* @en was just acknowledged, so it left the host by now: a departure
 * estimated later (the port's TX stage drains faster than its nominal rate,
 * as a memif ring does) is cut to now, and the port's estimate with it, so
 * that later packets do not look sent later than they were. @return the
 * departure. */
static uint64_t acked_wire(struct mrcp_engine *e, struct sb_entry *en)
{
	uint64_t w = wire_ns(en), *free_ns;

	if (!mrcp_time_lt(e->now, w))
		return w;
	free_ns = &e->port_free_ns[en->port - 1];
	*free_ns = mrcp_time_le(w, *free_ns) ? *free_ns - (w - e->now) : e->now;
	en->tx_wait_ns = (uint32_t)(e->now - en->sent_ns);
	return e->now;
}

/* The longest RTT worth waiting for a SACK: the largest sample of this
 * window or the last (min_rtt and the latest as floors), the base RTT
 * before any sample; at most T / 2, so a verdict always comes before an
 * RTO would. */
static uint64_t rtt_hi(const struct mrcp_engine *e, const struct qp *qp)
{
	uint64_t r = max_u64(max_u64(qp->rtt_cur_ns, qp->rtt_prev_ns), max_u64(qp->min_rtt_ns, qp->rack_rtt_ns));

	if (r == 0)
		r = e->cfg.base_rtt_ns;
	return r < qp->T_ns / 2 ? r : qp->T_ns / 2;
}

/* reo_wnd: how much later a SACKed send may be than an unSACKed one before
 * the older is suspected - the largest reordering seen in this window or
 * the last, plus a quarter; at least a quarter of target_qdelay (a quarter
 * base RTT if the CC has none), at most @hi and at most a few minimum RTTs
 * (the base RTT if more): a path that lags the others by more than that is
 * degraded, and its EVs should be held at once, whatever the verdict. */
static uint64_t reo_wnd(const struct mrcp_engine *e, const struct qp *qp, uint64_t hi)
{
	uint64_t obs = max_u64(qp->reo_cur_ns, qp->reo_prev_ns), w = obs + obs / 4;
	uint64_t lo = (qp->target_qdelay_ns != 0 ? qp->target_qdelay_ns : e->cfg.base_rtt_ns) / 4;
	uint64_t cap = max_u64(e->cfg.base_rtt_ns, REO_MAX_MIN_RTTS * qp->min_rtt_ns);

	if (w > hi)
		w = hi;
	if (w > cap)
		w = cap;
	return w > lo ? w : lo;
}

/* A PSN sent at @sent_ns was just acknowledged by a SACK: anything sent
 * after it and acknowledged before it measures the reordering. */
static inline void reo_observe(struct qp *qp, uint64_t sent_ns)
{
	if (mrcp_time_lt(sent_ns, qp->acked_newest_ns) && qp->acked_newest_ns - sent_ns > qp->reo_cur_ns)
		qp->reo_cur_ns = qp->acked_newest_ns - sent_ns;
}

/* D65: how long past its departure a packet may still arrive: twice
 * rtt_hi, four times in the QP's first window of SACKs (its queues are
 * still building and the RTTs sampled so far are the empty fabric's). */
static uint64_t late_ns(const struct qp *qp, uint64_t hi)
{
	uint64_t late = hi + hi / 2;

	return qp->c.sack_rx < LATE_FIRST_SACKS ? 2 * late : late;
}

/* ---- D65: suspects -------------------------------------------------------------- */

/* @en leaves the suspects: acknowledged (reordering) or confirmed lost. */
static void suspect_drop(struct qp *qp, struct sb_entry *en)
{
	en->flags &= (uint8_t)~SB_SUSPECT;
	qp->n_suspect--;
	if (en->ev >= 0 && qp->evs.evs != NULL && qp->evs.evs[en->ev].held != 0)
		qp->evs.evs[en->ev].held--;
}

/* Everything up to and including @psn was received: free it (§4.4 step 1);
 * what was in flight leaves the QPCC's inflight. */
static void ack_through(struct mrcp_engine *e, struct qp *qp, uint32_t psn, uint64_t *newest_sent)
{
	uint64_t newest = newest_sent != NULL ? *newest_sent : 0;
	uint32_t una = qp->snd_una;
	/* PSNs una .. psn, and none at or past next_psn */
	int32_t n = mrcp_psn_diff(psn, una) + 1, sent = mrcp_psn_diff(qp->next_psn, una);
	bool mrc = qp->mode == MRCP_MODE_MRC;

	if (n > sent)
		n = sent;
	if (n <= 0)
		return;
	for (int32_t i = 0; i < n; i++, una = mrcp_psn_add(una, 1)) {
		struct sb_entry *en = sb_at(qp, una);

		if (!(en->flags & SB_SACKED)) {
			uint64_t w = acked_wire(e, en);

			if (mrcp_time_lt(newest, w))
				newest = w;
			if (newest_sent != NULL)
				reo_observe(qp, w);
			if (en->ev >= 0 && mrc) {
				qp->evs.evs[en->ev].c.sacked++;
				mrcp_ev_proven(&qp->evs, en->ev); /* D65 */
			}
			if (en->charged)
				undo_charge(e, qp, en, false);
		}
		out_remove(qp, una);
		if (en->flags & SB_SUSPECT) {
			suspect_drop(qp, en);
			qp->c.suspects_cleared++;
		}
		if (en->flags & SB_RTXQ)
			qp->n_rtxq--;
		en->flags = 0;
	}
	qp->snd_una = una;
	if (newest_sent != NULL)
		*newest_sent = newest;
	qp->k = 0; /* D33: the retry count resets when cack advances */
	qp->last_progress_ns = e->now;
}

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

/* @en's RTO interval, T x b (§4.5), at most 1 s. */
static inline uint64_t rto_ival(const struct qp *qp, const struct sb_entry *en)
{
	uint64_t ival = en->b_exp >= 40 ? ONE_SECOND_NS : qp->T_ns << en->b_exp;

	return ival < ONE_SECOND_NS ? ival : ONE_SECOND_NS;
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
		uint64_t bps = e->cfg.port_bps[port - 1];

		if (mrcp_time_lt(start, e->now) || start - e->now > ONE_SECOND_NS)
			start = e->now;
		en->tx_wait_ns = (uint32_t)(start - e->now);
		*free_ns = start + (bps ? (uint64_t)en->nominal * 8000000000ull / bps : 0);
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
static uint32_t rtx_next(struct mrcp_engine *e, struct qp *qp)
{
	for (uint32_t psn = qp->snd_una; mrcp_psn_lt(psn, qp->next_psn); psn = mrcp_psn_add(psn, 1)) {
		struct sb_entry *en = sb_at(qp, psn);
		if ((en->flags & SB_RTXQ) && mrcp_time_le(en->not_before_ns, e->now))
			return psn;
	}
	return NIL;
}

static void confirm_lost(struct mrcp_engine *e, struct qp *qp, uint32_t psn);
static bool suspect_due(const struct mrcp_engine *e, const struct qp *qp, struct sb_entry *en);

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
			uint32_t psn = rtx_next(e, qp);
			if (psn != NIL) {
				struct sb_entry *en = sb_at(qp, psn);
				int ev;

				if (en->flags & SB_SUSPECT) {
					if (!suspect_due(e, qp, en))
						continue; /* the verdict moved on (D65) */
					confirm_lost(e, qp, psn);
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

/* ---- loss inference (D29, D65) -------------------------------------------------------- */

/* Charge @psn's loss, its copy already out of flight: the counters, the CC
 * and the EV its last copy used. */
static void charge_loss(struct mrcp_engine *e, struct qp *qp, struct sb_entry *en)
{
	qp->c.losses++;
	/* On a trimming fabric congestion shows as trims and ECN; a silent
	 * loss is a failed path (§4.4), handled by the EV state machine
	 * (D30), so it leaves the window alone: the bytes only leave inflight.
	 * Elsewhere it is a congestion signal too (§6.3). See D61. */
	if (!e->cfg.trimming_fabric && qp->cc->ops->on_loss != NULL)
		qp->cc->ops->on_loss(qp->cc->priv, en->nominal, qp->cc->inflight, e->now);
	if (qp->mode == MRCP_MODE_MRC && en->ev >= 0) {
		mrcp_ev_on_loss(&qp->evs, en->ev, e->now); /* D30 */
		en->charged = (uint16_t)(en->ev + 1);    /* D64 */
	}
}

static void declare_lost(struct mrcp_engine *e, struct qp *qp, uint32_t psn, uint8_t cause)
{
	rtx_queue(qp, psn, cause, 0);
	charge_loss(e, qp, sb_at(qp, psn));
}

/* D65: the verdict on suspect @psn came and it was not acknowledged: lost,
 * resent at once. */
static void confirm_lost(struct mrcp_engine *e, struct qp *qp, uint32_t psn)
{
	struct sb_entry *en = sb_at(qp, psn);

	suspect_drop(qp, en);
	en->not_before_ns = 0;
	charge_loss(e, qp, en);
}

/* D65: @psn (on the send-order list) is suspect: out of flight, queued
 * for its verdict, its EV held (not chosen, its state untouched). */
static void suspect(struct mrcp_engine *e, struct qp *qp, uint32_t psn, uint64_t hi, uint64_t reo)
{
	struct sb_entry *en = sb_at(qp, psn);
	uint64_t verdict = wire_ns(en) + late_ns(qp, hi) + reo;

	if (mrcp_time_lt(verdict, e->now + hi + reo))
		verdict = e->now + hi + reo;
	rtx_queue(qp, psn, CAUSE_FAST, verdict);
	en->flags |= SB_SUSPECT;
	qp->n_suspect++;
	qp->c.suspects++;
	if (en->ev >= 0)
		qp->evs.evs[en->ev].held++;
}

/*
 * D65 (refines D29). With newest = the latest send time of any PSN a SACK
 * acknowledged (RACK.xmit_ts), an unacknowledged PSN sent at s is
 *  - suspect when newest - s > reo_wnd: it leaves flight and its EV is
 *    held until the verdict; lost then if still unacknowledged, and
 *    nothing happened if it was acknowledged meanwhile (reordering);
 *  - lost at once when newest - s > 2 x rtt_hi + reo_wnd: something sent
 *    that much later came back, so it had every chance to.
 * The verdict is due at s + 2 x rtt_hi + reo_wnd (rtt_hi as it is then),
 * and never sooner than rtt_hi + reo_wnd after the suspicion: a packet may
 * queue behind a burst in the host's TX stage and in the fabric, and its
 * RTT is then larger than any sampled yet. Both tests read send times and
 * the verdict is re-armed after a local stall, so a pause of this host or
 * of the peer cannot make a loss up. The send-order list is oldest first:
 * stop at the first PSN that is neither.
 */
static void infer_losses(struct mrcp_engine *e, struct qp *qp)
{
	uint64_t hi = rtt_hi(e, qp), reo = reo_wnd(e, qp, hi), newest = qp->acked_newest_ns;

	while (qp->out_head != NIL) {
		uint32_t psn = qp->out_head;
		struct sb_entry *en = sb_at(qp, psn);

		if (!mrcp_time_lt(wire_ns(en) + reo, newest))
			break;
		if (mrcp_time_lt(wire_ns(en) + late_ns(qp, hi) + reo, newest))
			declare_lost(e, qp, psn, CAUSE_FAST);
		else
			suspect(e, qp, psn, hi, reo);
	}
}

/*
 * The answer to a tail-loss or silence probe reports the responder's state
 * after the probe arrived (RACK-TLP, RFC 8985; D36), but only for the
 * PSNs its cack and bitmap cover (up to @cover, D65): what it lacks among
 * those sent before the probe is treated as if the probe were a SACKed
 * packet sent at its time - lost at once if sent rtt_hi + reo_wnd before
 * it (a suspect too), else suspect. It says nothing about PSNs above
 * @cover.
 */
static void probe_losses(struct mrcp_engine *e, struct qp *qp, uint32_t cover)
{
	uint64_t hi = rtt_hi(e, qp), reo = reo_wnd(e, qp, hi), t = qp->tlp_sent_ns;

	for (uint32_t psn = qp->snd_una; mrcp_psn_le(psn, cover) && mrcp_psn_lt(psn, qp->next_psn);
	     psn = mrcp_psn_add(psn, 1)) {
		struct sb_entry *en = sb_at(qp, psn);

		if ((en->flags & SB_SUSPECT) && mrcp_time_lt(wire_ns(en) + hi + reo, t)) {
			confirm_lost(e, qp, psn);
			continue;
		}
		if (!(en->flags & SB_OUT) || !mrcp_time_lt(wire_ns(en) + reo, t))
			continue;
		if (mrcp_time_lt(wire_ns(en) + hi + reo, t))
			declare_lost(e, qp, psn, CAUSE_FAST);
		else
			suspect(e, qp, psn, hi, reo);
	}
}

/* D65: is suspect @en's verdict due? Its time moves on as the evidence
 * does: at least 2 x rtt_hi + reo_wnd after its send with the RTTs sampled
 * since, and, if it fell due during a local stall, rtt_hi + reo_wnd after
 * the stall's end (its acknowledgement may sit unread in the host's RX
 * ring). */
static bool suspect_due(const struct mrcp_engine *e, const struct qp *qp, struct sb_entry *en)
{
	uint64_t hi = rtt_hi(e, qp), reo = reo_wnd(e, qp, hi);

	en->not_before_ns = mrcp__stall_rearm(e, en->not_before_ns, hi + reo);
	if (mrcp_time_lt(en->not_before_ns, wire_ns(en) + late_ns(qp, hi) + reo))
		en->not_before_ns = wire_ns(en) + late_ns(qp, hi) + reo;
	return mrcp_time_le(en->not_before_ns, e->now);
}

static void silence_probe(struct mrcp_engine *e, struct qp *qp);
static void rto_count(struct mrcp_engine *e, struct qp *qp);

/* D65: confirm the suspects whose verdict is due - while the peer talks.
 * If no SACK came for rtt_hi + reo_wnd the QP is silent, and silence is a
 * pause (the peer's: its RX queue may hold the suspects), not evidence:
 * the verdict waits another rtt_hi + reo_wnd and a probe goes out, as an
 * RTO would send one (a silent round, k counted as for one), until the
 * answers speak or silence has lasted through the linear phase. */
static void suspects_due(struct mrcp_engine *e, struct qp *qp)
{
	uint64_t hi = rtt_hi(e, qp), reo = reo_wnd(e, qp, hi);
	bool silent = mrcp_time_lt(qp->last_sack_ns + hi + reo, e->now) && qp->k < qp->linear_cnt;
	bool waiting = false;

	for (uint32_t psn = qp->snd_una; qp->n_suspect != 0 && mrcp_psn_lt(psn, qp->next_psn);
	     psn = mrcp_psn_add(psn, 1)) {
		struct sb_entry *en = sb_at(qp, psn);

		if (!(en->flags & SB_SUSPECT) || !suspect_due(e, qp, en))
			continue;
		if (!silent) {
			confirm_lost(e, qp, psn);
			continue;
		}
		en->not_before_ns = e->now + hi + reo;
		waiting = true;
	}
	if (waiting && !qp->tlp_out) {
		qp->c.silent_rounds++;
		silence_probe(e, qp);
		rto_count(e, qp);
	}
}

/* A SACK whose trigger is a PSN we retransmitted, but which echoes the
 * timestamp of a copy sent before that retransmission, shows the original
 * arrived: the loss was a pause or a reorder (D64), and a fast
 * retransmission was not needed (rtx_spurious). */
static bool check_spurious(struct mrcp_engine *e, struct qp *qp, uint32_t trig, uint16_t echo_ts)
{
	struct sb_entry *en;

	en = mrcp__qp_sb_past(qp, trig); /* the last pow2(W) PSNs, acknowledged ones too */
	if (en == NULL || en->tx_count < 2)
		return false;
	/* the echoed copy is older than the last send by more than a tick */
	if (mrcp__ts_age_ns(e->now, echo_ts) <= e->now - en->sent_ns + (1u << TS_UNIT_SHIFT))
		return false;
	if (en->charged && (en->flags & SB_LIVE) && !(en->flags & SB_SACKED))
		undo_charge(e, qp, en, true); /* D64 */
	if (en->rtx_cause == CAUSE_FAST)
		qp->c.rtx_spurious++;
	return true;
}

/* ---- SACK (§4.4) ------------------------------------------------------------------------ */

void mrcp__req_on_sack(struct mrcp_engine *e, struct qp *qp, const struct mrcp_pkt *p, const struct mrcp_rx *rx)
{
	const struct mrcp_seth *s = &p->seth;
	uint64_t newest_sent = 0;
	bool any_newest = false, tlp_answer = false, late_copy = false;
	struct mrcp_cc_sack in;
	uint32_t units, delta;
	int evi = -1;

	(void)rx;
	qp->c.sack_rx++;
	qp->last_sack_ns = e->now;
	if (qp->mode == MRCP_MODE_MRC && !s->pr &&
	    check_spurious(e, qp, mrcp_psn_add(s->cack_psn, s->ack_psn_offset), p->cc.tx_timestamp))
		late_copy = true; /* D65: a copy given up for lost came late */
	/* 1. cumulative part */
	if (mrcp_psn_ge(s->cack_psn, qp->snd_una) && mrcp_psn_lt(s->cack_psn, qp->next_psn)) {
		ack_through(e, qp, s->cack_psn, &newest_sent);
		any_newest = newest_sent != 0;
	}
	/* 2. the bitmap (D26, D27); the RC baseline uses only the cumulative ACK */
	if (qp->mode == MRCP_MODE_MRC && s->sack_bitmap != 0) {
		uint32_t base = mrcp_psn_add(s->cack_psn, s->sack_offset);
		for (unsigned i = 0; i < MRCP_SACK_BITS; i++) {
			if (!(s->sack_bitmap >> i & 1))
				continue;
			uint32_t psn = mrcp_psn_add(base, (int32_t)i);
			if (!psn_in_flight(qp, psn))
				continue;
			struct sb_entry *en = sb_at(qp, psn);
			if (!(en->flags & SB_LIVE) || (en->flags & SB_SACKED))
				continue;
			if (en->charged)
				undo_charge(e, qp, en, false);
			uint64_t w = acked_wire(e, en);

			reo_observe(qp, w);
			out_remove(qp, psn);
			if (en->flags & SB_SUSPECT) {
				suspect_drop(qp, en);
				qp->c.suspects_cleared++;
			}
			if (en->flags & SB_RTXQ) {
				en->flags &= (uint8_t)~SB_RTXQ;
				qp->n_rtxq--;
			}
			en->flags |= SB_SACKED;
			if (!any_newest || mrcp_time_lt(newest_sent, w))
				newest_sent = w;
			any_newest = true;
			if (en->ev >= 0) {
				qp->evs.evs[en->ev].c.sacked++;
				mrcp_ev_proven(&qp->evs, en->ev); /* D65 */
				mrcp_ev_rev_learn(&qp->evs, en->ev); /* D48 */
			}
		}
	}
	/* 3. the verdict on the echoed EV (§5.3, D47) */
	if (qp->mode == MRCP_MODE_MRC) {
		evi = mrcp_ev_lookup(&qp->evs, s->entropy);
		if (evi >= 0) {
			/* a probe answer's verdict feeds resurrection below, not the
			 * state table; ev.c counts the verdicts it applies */
			if (s->m != MRCP_VERDICT_NONE && s->pr)
				qp->evs.evs[evi].c.ecn++;
			else if (s->m == MRCP_VERDICT_SKIP_ONCE)
				mrcp_ev_event(&qp->evs, evi, MRCP_EV_EVT_SACK_SKIP_ONCE, e->now);
			else if (s->m == MRCP_VERDICT_ALWAYS_SKIP)
				mrcp_ev_event(&qp->evs, evi, MRCP_EV_EVT_SACK_ALWAYS_SKIP, e->now);
		}
	}
	/* probe answers (§4.7): resurrection by EV, else the tail-loss probe */
	if (s->pr) {
		if (evi >= 0 && qp->evs.evs[evi].probe_sent_ns != 0) {
			mrcp_ev_probe_answer(&qp->evs, evi, s->m, e->now); /* D45 */
		} else if (qp->tlp_out) {
			/* The answer to a tail-loss probe reports the state after
			 * the probe: what it still lacks among older sends is
			 * lost, as if the probe were a SACKed packet (RACK-TLP,
			 * RFC 8985; D36), at once where its cack and bitmap
			 * cover it (D65) */
			qp->tlp_out = false;
			tlp_answer = true;
		}
	}
	/* 4. congestion control (§6.1) */
	memset(&in, 0, sizeof(in));
	units = p->cc.rcvd_bytes & 0xFFFFFF;
	delta = (units - qp->last_rcvd_units) & 0xFFFFFF;
	if (delta < (1u << 23)) { /* an older, reordered SACK gives a "negative" delta */
		qp->last_rcvd_units = units;
		in.newly_rcvd = (uint64_t)delta * 256;
	}
	in.ecn = s->m != MRCP_VERDICT_NONE;
	if (s->svc_time != 255) {
		uint64_t age = mrcp__ts_age_ns(e->now, p->cc.tx_timestamp);
		uint64_t svc = (uint64_t)s->svc_time << TS_UNIT_SHIFT;
		if (age >= svc && age - svc <= RTT_SAMPLE_MAX_NS) { /* D13 */
			in.rtt_valid = true;
			in.rtt_ns = age - svc;
			if (qp->min_rtt_ns == 0 || in.rtt_ns < qp->min_rtt_ns)
				qp->min_rtt_ns = in.rtt_ns;
			/* D65: not a SACK that waited in our RX ring through
			 * a stall of ours, nor one of a packet on an EV held or
			 * out of service, nor of a copy given up for lost: a
			 * path under suspicion does not set how long a healthy
			 * one may take */
			if (!late_copy)
				qp->rack_rtt_ns = in.rtt_ns;
			if (in.rtt_ns > qp->rtt_cur_ns && !mrcp_time_lt(e->now - in.rtt_ns, e->stall_end_ns) && !late_copy &&
			    (evi < 0 || (qp->evs.evs[evi].held == 0 && qp->evs.evs[evi].state == MRCP_EV_GOOD)))
				qp->rtt_cur_ns = in.rtt_ns;
		}
	}
	in.pen = p->cc.rcv_cwnd_pen;
	in.r_c = p->cc.r_c;
	/* Inflight left by the scoreboard above, never by newly_rcvd: that
	 * counts duplicates (D19) and copies whose bytes a loss or an RTO round
	 * already took out, and misses whatever a lost SACK reported. */
	in.inflight = qp->cc->inflight;
	if (qp->cc->ops->on_sack != NULL)
		qp->cc->ops->on_sack(qp->cc->priv, &in, e->now);
	/* 5. losses (D65) */
	if (any_newest && mrcp_time_lt(qp->acked_newest_ns, newest_sent))
		qp->acked_newest_ns = newest_sent;
	if (++qp->win_sacks >= REO_WINDOW_SACKS) {
		qp->win_sacks = 0;
		qp->reo_prev_ns = qp->reo_cur_ns;
		qp->rtt_prev_ns = qp->rtt_cur_ns;
		qp->reo_cur_ns = qp->rtt_cur_ns = 0;
	}
	if (qp->mode == MRCP_MODE_MRC && any_newest)
		infer_losses(e, qp);
	if (qp->mode == MRCP_MODE_MRC && tlp_answer)
		probe_losses(e, qp, mrcp_psn_add(s->cack_psn, (int32_t)MRCP_SACK_BITS));
	mrcp__req_complete(e, qp);
}

/* ---- NACK (§3.7) ---------------------------------------------------------------------- */

static void retry_bump(struct mrcp_engine *e, struct qp *qp)
{
	/* D33: one more retry; ERROR at linear_cnt + exp_cnt unless exp_cnt = 25 */
	qp->k++;
	if (qp->exp_cnt != 25 && qp->k >= qp->linear_cnt + qp->exp_cnt)
		mrcp__qp_error(e, qp, MRCP_WC_RETRY_EXC_ERR, MRCP_QP_ERR_RETRY_EXCEEDED);
}

void mrcp__req_on_nack(struct mrcp_engine *e, struct qp *qp, const struct mrcp_pkt *p)
{
	const struct mrcp_neth *nk = &p->neth;
	struct sb_entry *en;
	uint32_t psn = nk->nack_psn;
	uint64_t base_rtt = e->cfg.base_rtt_ns;

	qp->c.nack_rx++;
	if (nk->nack_code == MRCP_NACK_UNEXP_EVENT) {
		mrcp__qp_error(e, qp, MRCP_WC_REM_OP_ERR, MRCP_QP_ERR_REMOTE_OP);
		return;
	}
	if (!psn_in_flight(qp, psn))
		return;
	en = sb_at(qp, psn);
	if (!(en->flags & SB_LIVE) || (en->flags & SB_SACKED))
		return;
	if (en->flags & SB_SUSPECT)
		suspect_drop(qp, en); /* the NACK explains it (D65) */
	switch (nk->nack_code) {
	case MRCP_NACK_TRIMMED:
		/* §4.6: retransmit at once on another EV; the EV is skipped */
		if (qp->mode == MRCP_MODE_MRC) {
			int evi = mrcp_ev_lookup(&qp->evs, nk->entropy);
			if (evi >= 0)
				mrcp_ev_event(&qp->evs, evi, MRCP_EV_EVT_NACK_TRIMMED, e->now);
		}
		/* fall through */
	case MRCP_NACK_TRIMMED_LASTHOP: {
		bool was_out = en->flags & SB_OUT;

		rtx_queue(qp, psn, CAUSE_NACK, 0);
		if (was_out && qp->cc->ops->on_nack != NULL)
			qp->cc->ops->on_nack(qp->cc->priv, en->nominal, qp->cc->inflight, e->now);
		break;
	}
	case MRCP_NACK_PSN_OOR_WINDOW:
		/* D35: hold until the window admits it; retry after a base RTT */
		rtx_queue(qp, psn, CAUSE_NACK, e->now + base_rtt);
		break;
	default:
		/* NO_BITMAP, NO_PKT_BUFFER, NO_RESOURCE and unknown codes (D22, D35) */
		rtx_queue(qp, psn, CAUSE_NACK, e->now + base_rtt);
		retry_bump(e, qp);
		break;
	}
}

/* ---- AETH and completions (D38) ------------------------------------------------------- */

void mrcp__req_on_ack(struct mrcp_engine *e, struct qp *qp, const struct mrcp_pkt *p)
{
	const struct mrcp_aeth *a = &p->aeth;
	uint16_t msn = (uint16_t)a->msn;

	qp->c.ack_rx++;
	switch (a->syndrome) {
	case MRCP_AETH_ACK:
		break;
	case MRCP_AETH_NAK_REMOTE_ACCESS:
		mrcp__qp_error(e, qp, MRCP_WC_REM_ACCESS_ERR, MRCP_QP_ERR_REMOTE_ACCESS);
		return;
	case MRCP_AETH_NAK_INVALID_REQ:
		mrcp__qp_error(e, qp, MRCP_WC_REM_INV_REQ_ERR, MRCP_QP_ERR_REMOTE_INVALID);
		return;
	default:
		mrcp__qp_error(e, qp, MRCP_WC_REM_OP_ERR, MRCP_QP_ERR_REMOTE_OP);
		return;
	}
	/* ignore an AETH for a message we have not sent (stale or bogus) */
	if (mrcp_msn_diff(msn, qp->next_msn) >= 0)
		return;
	if (!qp->peer_acked_valid || mrcp_msn_lt(qp->peer_acked_msn, msn)) {
		qp->peer_acked_msn = msn;
		qp->peer_acked_valid = true;
	}
	mrcp__req_complete(e, qp);
}

void mrcp__req_complete(struct mrcp_engine *e, struct qp *qp)
{
	if (qp->state != MRCP_QPS_RTS)
		return;
	while (qp->sq_head != qp->sq_seg && qp->peer_acked_valid) {
		struct wqe *w = &qp->sq[qp->sq_head & qp->sq_mask];
		struct mrcp_wc wc;

		if (!w->all_sent || mrcp_msn_lt(qp->peer_acked_msn, w->msn))
			break;
		if ((w->flags & MRCP_WR_SIGNALED) && !mrcp__cq_room(e)) {
			e->c.cq_overflow++;
			e->cq_blocked = true;
			break;
		}
		/* the message is complete at the responder: its PSNs are done,
		 * and any still in flight (their SACKs lost or late) leave
		 * inflight here, as no SACK will take them out (D38) */
		if (mrcp_psn_ge(w->last_psn, qp->snd_una))
			ack_through(e, qp, w->last_psn, NULL);
		if (w->flags & MRCP_WR_SIGNALED) {
			mrcp__wqe_wc(qp, w, MRCP_WC_SUCCESS, &wc);
			mrcp__cq_push(e, &wc);
		}
		qp->c.wc_ok++;
		if (w->opcode == MRCP_WR_WRITE_IMM && qp->wimm_outstanding > 0)
			qp->wimm_outstanding--;
		mrcp__wqe_release(e, w);
		qp->sq_head++;
		qp->last_progress_ns = e->now;
	}
}

/* ---- probes (§4.7) ------------------------------------------------------------------------ */

static void send_probe(struct mrcp_engine *e, struct qp *qp, int ev)
{
	struct mrcp_tx *tx = mrcp__ctl_alloc(e);
	struct mrcp_pkt p;
	int hl;

	if (tx == NULL)
		return;
	mrcp_pkt_init(&p, MRCP_OP_PROBE, qp->dqpn, mrcp_psn_add(qp->next_psn, -1)); /* D11 */
	p.peth.probe_id = qp->probe_id++; /* D37 */
	p.peth.spdcid = (uint16_t)qp->qpn; /* D15 */
	p.peth.dpdcid = (uint16_t)qp->dqpn;
	p.peth.tx_timestamp = mrcp__ts_now(e->now);
	hl = mrcp_pkt_encode_hdr(&p, tx->hdr, sizeof(tx->hdr));
	tx->hdr_len = (uint16_t)(hl > 0 ? hl : 0);
	tx->opcode = MRCP_OP_PROBE;
	tx->psn = p.bth.psn;
	tx->qpn = qp->qpn;
	tx->port = qp->evs.evs[ev].port;
	tx->ev = qp->evs.evs[ev].value;
	tx->dscp = e->cfg.dscp.dscp[MRCP_DSCP_CLASS_TRIMMABLE]; /* §3.8: probes are trimmable */
	tx->ecn = MRCP_ECN_ECT0; /* D9 */
	tx->dst = qp->peer->port_addr[tx->port - 1];
	qp->c.probe_tx++;
}

static uint64_t tlp_time(const struct mrcp_engine *e, const struct qp *qp)
{
	/* D36: min_rtt + 2 x target_qdelay without a SACK while data is out */
	const struct sb_entry *head;
	uint64_t ref = qp->last_sack_ns;

	if (qp->n_out == 0 || qp->tlp_out || qp->out_head == NIL)
		return UINT64_MAX;
	head = &qp->sb[qp->out_head & qp->sb_mask];
	if (mrcp_time_lt(ref, head->sent_ns))
		ref = head->sent_ns;
	if (mrcp_time_lt(ref, e->stall_end_ns))
		ref = e->stall_end_ns; /* D65: the engine was not running */
	return ref + qp->min_rtt_ns + 2 * qp->target_qdelay_ns;
}

static uint64_t aeth_probe_time(const struct mrcp_engine *e, const struct qp *qp)
{
	uint64_t ref = qp->last_progress_ns;

	/* §4.7: everything SACKed but completions pending longer than T */
	if (qp->n_out != 0 || qp->n_rtxq != 0 || qp->sq_head == qp->sq_seg || qp->tlp_out)
		return UINT64_MAX;
	if (mrcp_time_lt(ref, e->stall_end_ns))
		ref = e->stall_end_ns; /* D65 */
	return ref + qp->T_ns;
}

/* D48: while a QP receives data but sends none, nothing teaches it reverse
 * EVs (SACKs of our data would), so once per base RTT it sends an EV probe
 * on a GOOD EV of the next plane in turn; an answer makes that EV the
 * plane's reverse EV (ep.c). */
static uint64_t rev_probe_time(const struct mrcp_engine *e, const struct qp *qp)
{
	uint64_t rtt = e->cfg.base_rtt_ns;

	if (qp->mode != MRCP_MODE_MRC || qp->last_rx_data_ns == 0)
		return UINT64_MAX;
	if (qp->last_tx_data_ns != 0 && !mrcp_time_lt(qp->last_tx_data_ns + rtt, qp->last_rx_data_ns))
		return UINT64_MAX; /* we send data too */
	if (qp->rev_probe_ns != 0 && !mrcp_time_lt(qp->rev_probe_ns, qp->last_rx_data_ns))
		return UINT64_MAX; /* no data since the last probe */
	return qp->rev_probe_ns == 0 ? qp->last_rx_data_ns : qp->rev_probe_ns + rtt;
}

static void rev_probe(struct mrcp_engine *e, struct qp *qp)
{
	uint8_t plane = (uint8_t)(qp->rev_probe_plane % e->cfg.n_ports + 1);
	int ev = mrcp_ev_select(&qp->evs, e->now, -1, e->port_room & (1u << (plane - 1)));

	qp->rev_probe_plane = plane;
	qp->rev_probe_ns = e->now;
	if (ev >= 0)
		mrcp_ev_probe(e, &qp->peer->node, plane, qp->evs.evs[ev].value, e->now); /* -EBUSY: next time */
}

static uint64_t hold_time(const struct qp *qp)
{
	uint64_t best = UINT64_MAX;

	if (qp->n_rtxq == 0)
		return UINT64_MAX;
	for (uint32_t psn = qp->snd_una; mrcp_psn_lt(psn, qp->next_psn); psn = mrcp_psn_add(psn, 1)) {
		const struct sb_entry *en = &qp->sb[psn & qp->sb_mask];
		if (en->flags & SB_RTXQ)
			best = mrcp_deadline_min(best, en->not_before_ns);
	}
	return best;
}

uint64_t mrcp__req_deadline(const struct mrcp_engine *e, const struct qp *qp)
{
	uint64_t d = UINT64_MAX;

	if (qp->state != MRCP_QPS_RTS)
		return UINT64_MAX;
	/* the earliest RTO deadline: send order, so the first few entries */
	unsigned seen = 0;
	for (uint32_t psn = qp->out_head; psn != NIL && seen < 8; seen++) {
		const struct sb_entry *en = &qp->sb[psn & qp->sb_mask];
		d = mrcp_deadline_min(d, en->deadline_ns);
		psn = en->next;
	}
	if (qp->mode == MRCP_MODE_MRC) {
		d = mrcp_deadline_min(d, tlp_time(e, qp));
		d = mrcp_deadline_min(d, mrcp_ev_next_deadline(&qp->evs));
	}
	d = mrcp_deadline_min(d, aeth_probe_time(e, qp));
	d = mrcp_deadline_min(d, rev_probe_time(e, qp));
	if (qp->n_rtxq != 0) {
		uint64_t h = hold_time(qp);
		if (h != UINT64_MAX && mrcp_time_lt(e->now, h))
			d = mrcp_deadline_min(d, h);
	}
	return d;
}

/* D65: probes for a silent QP, one on a GOOD EV of each plane that is up
 * (silence is how a failed plane shows itself, D62); their answers count
 * as the tail-loss probe's (D36): acknowledged packets sent at the probe's
 * time. */
static void silence_probe(struct mrcp_engine *e, struct qp *qp)
{
	for (uint8_t port = 1; port <= e->cfg.n_ports; port++) {
		/* a probe is small: a full TX stage does not hold it back */
		int ev = mrcp_ev_select(&qp->evs, e->now, -1, 1u << (port - 1));

		if (ev >= 0)
			send_probe(e, qp, ev);
	}
	qp->tlp_out = true;
	qp->tlp_sent_ns = e->now;
}

/* D33: the retry count grows once per RTO period in which rounds fired (T,
 * then T x 2^b as the backoff of §4.5 grows). Packets sent a few
 * microseconds apart expire a few microseconds apart, each expiry its own
 * round; counting every one would spend the whole budget (linear_cnt +
 * exp_cnt periods, seconds) in one period. */
static void rto_count(struct mrcp_engine *e, struct qp *qp)
{
	uint8_t b = qp->k >= qp->linear_cnt ? (uint8_t)(qp->k - qp->linear_cnt + 1) : 0;
	uint64_t period = b >= 40 ? ONE_SECOND_NS : qp->T_ns << b;

	if (qp->k == 0 || e->now - qp->rto_bump_ns >= (period < ONE_SECOND_NS ? period : ONE_SECOND_NS)) {
		qp->rto_bump_ns = e->now;
		retry_bump(e, qp);
	}
}

/*
 * An RTO round (§4.5): every expired packet goes again on a fresh EV, its
 * EV becomes ASSUMED_BAD, and k grows. D65: a deadline that fell due while
 * the engine was stalled runs again from the stall's end; and in an MRC QP
 * an expiry is first silence, not a path failure - anything acknowledged
 * after the packet was sent would have made loss inference suspect it long
 * before (newest - sent > reo_wnd) - so while k is below linear_cnt the
 * round is silent: the expired packets stay in flight with their timers
 * re-armed, probes go out, k grows as for a round, and nothing is resent
 * or retired. The probes' answers are the evidence; a peer that is only
 * paused answers them when it resumes. Not while a resend is due (and
 * waits for the window the expired packets hold): that silence is of our
 * making, and the round as it always was frees the window. Silence through the linear phase
 * (linear_cnt x T, 1.8 ms by default) turns into RTO rounds, so a dead
 * peer or every plane dead still ends the QP when it always did.
 */
static void rto_round(struct mrcp_engine *e, struct qp *qp)
{
	unsigned expired = 0;
	uint32_t psn = qp->out_head;
	bool silent = qp->mode == MRCP_MODE_MRC && qp->k < qp->linear_cnt && (qp->n_rtxq == 0 || rtx_next(e, qp) == NIL);

	while (psn != NIL) {
		struct sb_entry *en = sb_at(qp, psn);
		uint32_t next = en->next;
		uint64_t ival = rto_ival(qp, en);

		en->deadline_ns = mrcp__stall_rearm(e, en->deadline_ns, ival);
		if (mrcp_time_le(en->deadline_ns, e->now)) {
			expired++;
			if (silent) {
				en->deadline_ns = e->now + ival;
			} else {
				if (qp->mode == MRCP_MODE_MRC && en->ev >= 0) {
					mrcp_ev_event(&qp->evs, en->ev, MRCP_EV_EVT_RTO, e->now);
					en->charged = (uint16_t)(en->ev + 1); /* D64 */
				}
				rtx_queue(qp, psn, CAUSE_RTO, 0);
				en->flags |= SB_BY_TIMEOUT;
			}
		} else if (mrcp_time_lt(e->now, en->sent_ns + qp->T_ns)) {
			break; /* this and every later send cannot have expired */
		}
		psn = next;
	}
	if (expired == 0)
		return;
	if (silent) {
		qp->c.silent_rounds++;
		silence_probe(e, qp);
		rto_count(e, qp);
		return;
	}
	if (qp->mode == MRCP_MODE_MRC) {
		/* Whatever is still in flight on an EV this round retired went
		 * down the same dead path: resend it now rather than one RTO
		 * round (and one retry, D33) later. Otherwise a small window
		 * full of doomed packets blocks the repairs. */
		for (psn = qp->out_head; psn != NIL;) {
			struct sb_entry *en = sb_at(qp, psn);
			uint32_t next = en->next;
			if (en->ev >= 0 && qp->evs.evs[en->ev].state == MRCP_EV_ASSUMED_BAD) {
				rtx_queue(qp, psn, CAUSE_RTO, 0);
				en->flags |= SB_BY_TIMEOUT;
			}
			psn = next;
		}
	}
	if (qp->mode == MRCP_MODE_RC) {
		/* go-back-N: the responder drops everything after a gap */
		for (psn = qp->out_head; psn != NIL;) {
			uint32_t next = sb_at(qp, psn)->next;
			rtx_queue(qp, psn, CAUSE_RTO, 0);
			sb_at(qp, psn)->flags |= SB_BY_TIMEOUT;
			psn = next;
		}
	}
	qp->c.rto_rounds++;
	/* §6.1: the expired packets left the QPCC's inflight above; what the
	 * other QPs of the QPCC (D53) have in flight stays in it */
	if (qp->cc->ops->on_timeout != NULL)
		qp->cc->ops->on_timeout(qp->cc->priv, qp->cc->inflight, e->now);
	rto_count(e, qp);
}

void mrcp__req_on_timer(struct mrcp_engine *e, struct qp *qp)
{
	if (qp->state != MRCP_QPS_RTS)
		return;
	suspects_due(e, qp);
	rto_round(e, qp);
	if (qp->state != MRCP_QPS_RTS)
		return;
	if (qp->mode == MRCP_MODE_MRC) {
		uint16_t due[16];
		unsigned n = mrcp_ev_probes_due(&qp->evs, e->now, qp->T_ns, due, 16);
		for (unsigned i = 0; i < n; i++) /* D45: on the EV under test */
			send_probe(e, qp, due[i]);
		/* SKIP expiries happen inside selection; make sure it runs */
		/* D36: on a fresh GOOD EV of every plane (D65: a plane whose
		 * ACK path died would swallow the one answer; with no EV to
		 * probe on, try again after T, not at once) */
		if (tlp_time(e, qp) != UINT64_MAX && mrcp_time_le(tlp_time(e, qp), e->now))
			silence_probe(e, qp);
	}
	if (aeth_probe_time(e, qp) != UINT64_MAX && mrcp_time_le(aeth_probe_time(e, qp), e->now)) {
		int ev = qp->mode == MRCP_MODE_RC ? qp->rc_ev : mrcp_ev_select(&qp->evs, e->now, -1, e->port_room);
		if (ev >= 0)
			send_probe(e, qp, ev);
		qp->tlp_out = true;
		qp->tlp_sent_ns = e->now;
		qp->last_progress_ns = e->now;
	}
	{
		uint64_t t = rev_probe_time(e, qp);
		if (t != UINT64_MAX && mrcp_time_le(t, e->now))
			rev_probe(e, qp);
	}
	/* a tail-loss probe that was never answered may be sent again */
	if (qp->tlp_out && e->now - qp->tlp_sent_ns > qp->T_ns)
		qp->tlp_out = false;
}

void mrcp__req_port_down(struct mrcp_engine *e, struct qp *qp, uint8_t port)
{
	uint32_t psn = qp->out_head;

	/* D50: everything un-SACKed that left through @port goes again elsewhere */
	while (psn != NIL) {
		struct sb_entry *en = sb_at(qp, psn);
		uint32_t next = en->next;
		if (en->port == port)
			rtx_queue(qp, psn, CAUSE_PORT, 0);
		psn = next;
	}
	(void)e;
}
