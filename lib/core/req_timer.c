/* req_timer.c - the requester's clock-driven side: its next deadline,
 * reliability probes (§4.7: tail-loss D36, resurrection D45, reverse-EV
 * D48, silence D65), RTO rounds (§4.5, D32, D33) with the retry count, and
 * a port going down (D50). Acknowledgements are req.c, transmission
 * req_tx.c. */
#include "req_internal.h"

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
	/* an unanswered probe expires T after it left: a deadline of its own,
	 * or a QP with nothing else timed (every EV GOOD, no data out, a
	 * completion waiting for its lost AETH) never looks again */
	if (qp->tlp_out)
		d = mrcp_deadline_min(d, qp->tlp_sent_ns + qp->T_ns + 1);
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
void mrcp__req_silence_probe(struct mrcp_engine *e, struct qp *qp)
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
void mrcp__req_rto_count(struct mrcp_engine *e, struct qp *qp)
{
	uint8_t b = qp->k >= qp->linear_cnt ? (uint8_t)(qp->k - qp->linear_cnt + 1) : 0;
	uint64_t period = b >= 40 ? ONE_SECOND_NS : qp->T_ns << b;

	if (qp->k == 0 || e->now - qp->rto_bump_ns >= (period < ONE_SECOND_NS ? period : ONE_SECOND_NS)) {
		qp->rto_bump_ns = e->now;
		mrcp__req_retry_bump(e, qp);
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
static bool later_answered(const struct qp *qp, const struct sb_entry *en)
{
	return mrcp_time_le(en->sent_ns, qp->acked_newest_ns) || mrcp_time_le(en->sent_ns, qp->probe_answered_ns);
}

static void rto_round(struct mrcp_engine *e, struct qp *qp)
{
	unsigned expired = 0;
	uint32_t psn = qp->out_head;
	bool silent = qp->mode == MRCP_MODE_MRC && qp->k < qp->linear_cnt && (qp->n_rtxq == 0 || mrcp__req_rtx_next(e, qp) == NIL);

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
				/* D75: the EV is charged only on differential
				 * evidence: something sent after this packet (data
				 * or a probe) was acknowledged. A peer that answered
				 * nothing sent since, on any EV, is paused or gone,
				 * and this path is no more to blame than the others */
				if (qp->mode == MRCP_MODE_MRC && en->ev >= 0 && later_answered(qp, en)) {
					mrcp_ev_event(&qp->evs, en->ev, MRCP_EV_EVT_RTO, e->now);
					en->charged = (uint16_t)(en->ev + 1); /* D64 */
				} else if (qp->mode == MRCP_MODE_MRC) {
					qp->c.rto_unblamed++;
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
		mrcp__req_silence_probe(e, qp);
		mrcp__req_rto_count(e, qp);
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
	mrcp__req_rto_count(e, qp);
}

void mrcp__req_on_timer(struct mrcp_engine *e, struct qp *qp)
{
	if (qp->state != MRCP_QPS_RTS)
		return;
	/* a probe that was never answered (D36, §4.7) may be sent again */
	if (qp->tlp_out && e->now - qp->tlp_sent_ns > qp->T_ns)
		qp->tlp_out = false;
	mrcp__req_suspects_due(e, qp);
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
			mrcp__req_silence_probe(e, qp);
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
