/* req_internal.h - what the requester's three files share: req.c
 * (acknowledgements: SACK / NACK / AETH, loss inference, completions),
 * req_tx.c (building and sending data packets) and req_timer.c (deadlines,
 * probes, RTO rounds). The scoreboard's accessors, the send-order list and
 * the retransmission queue, inline here, and the functions one of the files
 * calls in another. The rest of the engine calls the requester through the
 * mrcp__req_* functions of engine_internal.h. */
#ifndef REQ_INTERNAL_H
#define REQ_INTERNAL_H

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

/* out_remove() of SB_OUT entry @en of scoreboard @sb (qp->sb, qp->sb_mask
 * as @mask) without the counts: the caller takes one packet and
 * en->nominal bytes out of n_out, outstanding_bytes and the QPCC's inflight
 * (out_forget) before anything else can read them. For a loop over many
 * entries, with the scoreboard's address in registers. */
static inline void out_unlink(struct qp *qp, struct sb_entry *sb, uint32_t mask, struct sb_entry *en)
{
	uint32_t prev = en->prev, next = en->next;

	if (prev != NIL)
		sb[prev & mask].next = next;
	else
		qp->out_head = next;
	if (next != NIL)
		sb[next & mask].prev = prev;
	else
		qp->out_tail = prev;
	en->flags &= (uint8_t)~SB_OUT;
}

/* The counts of @n packets of @bytes that out_unlink() took off the list. */
static inline void out_forget(struct qp *qp, uint32_t n, uint64_t bytes)
{
	qp->n_out -= n;
	qp->outstanding_bytes -= bytes;
	qp->cc->inflight -= bytes;
}

/* Take @psn off the wire and queue it for retransmission (D31). The caller
 * gives the CC its signal, if any, after this: on_loss, on_nack or
 * on_timeout see inflight without the packet. */
static inline void rtx_queue(struct qp *qp, uint32_t psn, uint8_t cause, uint64_t not_before)
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

/* @en's RTO interval, T x b (§4.5), at most 1 s. */
static inline uint64_t rto_ival(const struct qp *qp, const struct sb_entry *en)
{
	uint64_t ival = en->b_exp >= 40 ? ONE_SECOND_NS : qp->T_ns << en->b_exp;

	return ival < ONE_SECOND_NS ? ival : ONE_SECOND_NS;
}

/* req.c */

/** D65: is suspect @en's verdict due? (It moves @en's verdict time on.) */
bool mrcp__req_suspect_due(const struct mrcp_engine *e, const struct qp *qp, struct sb_entry *en);
/** D65: suspect @psn was not acknowledged by its verdict: lost. */
void mrcp__req_confirm_lost(struct mrcp_engine *e, struct qp *qp, uint32_t psn);
/** D65: confirm the suspects whose verdict is due, or probe a silent QP. */
void mrcp__req_suspects_due(struct mrcp_engine *e, struct qp *qp);
/** D33: one more retry; ERROR past the budget. */
void mrcp__req_retry_bump(struct mrcp_engine *e, struct qp *qp);

/* req_tx.c */

/** The oldest PSN queued for retransmission that may go now, or NIL. */
uint32_t mrcp__req_rtx_next(struct mrcp_engine *e, struct qp *qp);

/* req_timer.c */

/** D65: probe a silent QP on every plane (its answers count as a TLP's). */
void mrcp__req_silence_probe(struct mrcp_engine *e, struct qp *qp);
/** D33: count an RTO period in which rounds fired. */
void mrcp__req_rto_count(struct mrcp_engine *e, struct qp *qp);

#endif
