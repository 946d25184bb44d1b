/* req.c - the requester side of a QP: the scoreboard's acknowledgements -
 * SACK / NACK / AETH processing, loss inference (D29, D65) and completions
 * in MSN order (D38). Segmentation of Write / WriteImm work requests into
 * PSNs and their (re)transmission on another EV (D31) are req_tx.c;
 * deadlines, reliability probes (D36, D45) and RTO rounds (§4.5, D32, D33)
 * are req_timer.c; req_internal.h is what the three share. It chooses EVs
 * through ev.c and asks cc_*.c for the window; it never touches the
 * responder's state. */
#include <string.h>

#include "req_internal.h"

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
 * before any sample; at most T (D74: a suspect's verdict waits for the
 * slowest healthy path the samples show, up to the RTO interval - a cap
 * of T / 2 declared packets in a deeper queue lost while their SACKs
 * were on the way). */
static uint64_t rtt_hi(const struct mrcp_engine *e, const struct qp *qp)
{
	uint64_t r = max_u64(max_u64(qp->rtt_cur_ns, qp->rtt_prev_ns), max_u64(qp->min_rtt_ns, qp->rack_rtt_ns));

	if (r == 0)
		r = e->cfg.base_rtt_ns;
	return r < qp->T_ns ? r : qp->T_ns;
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
	struct sb_entry *sb = qp->sb;
	uint32_t mask = qp->sb_mask, gone = 0;
	uint64_t gone_bytes = 0;

	if (n <= 0)
		return;
	/* the list counts of the entries taken off the send-order list are
	 * summed and applied once (out_forget), before undo_charge() (its EV
	 * event may reach code that reads them) and at the end */
	for (int32_t i = 0; i < n; i++, una = mrcp_psn_add(una, 1)) {
		struct sb_entry *en = &sb[una & mask];

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
			if (en->charged) {
				out_forget(qp, gone, gone_bytes);
				gone = 0;
				gone_bytes = 0;
				undo_charge(e, qp, en, false);
				sb = qp->sb;
				mask = qp->sb_mask;
			}
		}
		if (en->flags & SB_OUT) {
			out_unlink(qp, sb, mask, en);
			gone++;
			gone_bytes += en->nominal;
		}
		if (en->flags & SB_SUSPECT) {
			suspect_drop(qp, en);
			qp->c.suspects_cleared++;
		}
		if (en->flags & SB_RTXQ)
			qp->n_rtxq--;
		en->flags = 0;
	}
	out_forget(qp, gone, gone_bytes);
	qp->snd_una = una;
	if (newest_sent != NULL)
		*newest_sent = newest;
	qp->k = 0; /* D33: the retry count resets when cack advances */
	qp->last_progress_ns = e->now;
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
void mrcp__req_confirm_lost(struct mrcp_engine *e, struct qp *qp, uint32_t psn)
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
			mrcp__req_confirm_lost(e, qp, psn);
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
bool mrcp__req_suspect_due(const struct mrcp_engine *e, const struct qp *qp, struct sb_entry *en)
{
	uint64_t hi = rtt_hi(e, qp), reo = reo_wnd(e, qp, hi);

	en->not_before_ns = mrcp__stall_rearm(e, en->not_before_ns, hi + reo);
	if (mrcp_time_lt(en->not_before_ns, wire_ns(en) + late_ns(qp, hi) + reo))
		en->not_before_ns = wire_ns(en) + late_ns(qp, hi) + reo;
	return mrcp_time_le(en->not_before_ns, e->now);
}

/* D65: confirm the suspects whose verdict is due - while the peer talks.
 * If no SACK came for rtt_hi + reo_wnd the QP is silent, and silence is a
 * pause (the peer's: its RX queue may hold the suspects), not evidence:
 * the verdict waits another rtt_hi + reo_wnd and a probe goes out, as an
 * RTO would send one (a silent round, k counted as for one), until the
 * answers speak or silence has lasted through the linear phase. */
void mrcp__req_suspects_due(struct mrcp_engine *e, struct qp *qp)
{
	uint64_t hi = rtt_hi(e, qp), reo = reo_wnd(e, qp, hi);
	bool silent = mrcp_time_lt(qp->last_sack_ns + hi + reo, e->now) && qp->k < qp->linear_cnt;
	bool waiting = false;

	for (uint32_t psn = qp->snd_una; qp->n_suspect != 0 && mrcp_psn_lt(psn, qp->next_psn);
	     psn = mrcp_psn_add(psn, 1)) {
		struct sb_entry *en = sb_at(qp, psn);

		if (!(en->flags & SB_SUSPECT) || !mrcp__req_suspect_due(e, qp, en))
			continue;
		if (!silent) {
			mrcp__req_confirm_lost(e, qp, psn);
			continue;
		}
		en->not_before_ns = e->now + hi + reo;
		waiting = true;
	}
	if (waiting && !qp->tlp_out) {
		qp->c.silent_rounds++;
		mrcp__req_silence_probe(e, qp);
		mrcp__req_rto_count(e, qp);
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
		} else if (qp->tlp_out && p->cc.tx_timestamp == mrcp__ts_now(qp->tlp_sent_ns)) {
			/* The answer to a tail-loss probe reports the state after
			 * the probe: what it still lacks among older sends is
			 * lost, as if the probe were a SACKed packet (RACK-TLP,
			 * RFC 8985; D36), at once where its cack and bitmap
			 * cover it (D65). Only the answer to the probe out now,
			 * known by the timestamp it echoes: one to an earlier
			 * probe, which sat in a queue while this host or the
			 * peer did not run (a probe unanswered for T is sent
			 * again), reports the state before that one was sent,
			 * and is read as a plain SACK (D72) */
			qp->tlp_out = false;
			qp->probe_answered_ns = qp->tlp_sent_ns; /* D75 */
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

void mrcp__req_retry_bump(struct mrcp_engine *e, struct qp *qp)
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
		mrcp__req_retry_bump(e, qp);
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
