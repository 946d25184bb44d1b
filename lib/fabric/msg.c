/* msg.c - two-sided messaging and RMA writes over MRC Write / WriteImm
 * (docs/libfabric.md "Messaging"): per-connection receive rings with
 * explicit credits, eager messages as WriteImm into a ring slot, larger ones
 * by a write-based rendezvous (RTS, CTS naming a bounce region, the data
 * Write, FIN), tag matching with an unexpected queue, fi_write* as Writes,
 * fi_writedata's CQ data as a WDATA ring message after the Write, and the
 * progress engine that turns the daemon's completions into libfabric ones. */
#define _GNU_SOURCE
#include "mrcfi.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define OPS_MAX 16384u

/* ---- operations and work-request contexts ------------------------------------------------ */

struct mrcfi_op *mrcfi_op_new(struct mrcfi_ep *ep)
{
	struct mrcfi_op *op;

	if (!mrcfi_list_empty(&ep->op_free)) {
		op = mrcfi_container(ep->op_free.next, struct mrcfi_op, link);
		mrcfi_list_del(&op->link);
	} else {
		if (ep->ops_live >= OPS_MAX)
			return NULL;
		if (ep->ops_cap % 64 == 0) {
			struct mrcfi_op **n = realloc(ep->ops, (ep->ops_cap + 64) * sizeof(*n));

			if (n == NULL)
				return NULL;
			ep->ops = n;
		}
		op = calloc(1, sizeof(*op));
		if (op == NULL)
			return NULL;
		op->idx = (uint32_t)ep->ops_cap;
		ep->ops[ep->ops_cap++] = op;
	}
	uint32_t idx = op->idx, gen = op->gen + 1;

	memset(op, 0, sizeof(*op));
	op->idx = idx;
	op->gen = gen;
	op->addr = op->src = FI_ADDR_UNSPEC;
	mrcfi_list_init(&op->link);
	ep->ops_live++;
	return op;
}

void mrcfi_op_free(struct mrcfi_ep *ep, struct mrcfi_op *op)
{
	free(op->copy);
	op->copy = NULL;
	op->state = MRCFI_OPS_DONE;
	op->gen++;
	mrcfi_list_add_tail(&ep->op_free, &op->link);
	ep->ops_live--;
}

static uint64_t op_id(const struct mrcfi_op *op)
{
	return (uint64_t)op->gen << 32 | op->idx;
}

static struct mrcfi_op *op_by_id(struct mrcfi_ep *ep, uint64_t id)
{
	uint32_t idx = (uint32_t)id, gen = (uint32_t)(id >> 32);

	if (idx >= ep->ops_cap || ep->ops[idx]->gen != gen || ep->ops[idx]->state == MRCFI_OPS_DONE)
		return NULL;
	return ep->ops[idx];
}

static struct mrcfi_wr *wr_get(struct mrcfi_ep *ep, uint8_t kind, struct mrcfi_conn *c, struct mrcfi_op *op)
{
	struct mrcfi_wr *w = ep->wr_free;

	if (w)
		ep->wr_free = w->next;
	else if ((w = malloc(sizeof(*w))) == NULL)
		return NULL;
	w->kind = kind;
	w->c = c;
	w->op = op;
	return w;
}

static void wr_put(struct mrcfi_ep *ep, struct mrcfi_wr *w)
{
	w->next = ep->wr_free;
	ep->wr_free = w;
}

/* ---- completions ------------------------------------------------------------------------------ */

void mrcfi_op_complete(struct mrcfi_ep *ep, struct mrcfi_op *op)
{
	struct mrcfi_cqe e = {.op_context = op->context, .err = op->err, .olen = op->olen, .src = FI_ADDR_NOTAVAIL};
	struct mrcfi_cq *cq;
	struct mrcfi_cntr *cntr;
	bool selective;

	if (op->bounce && !op->bounce_is_user)
		mrcfi_heap_free(ep, op->bounce);
	op->bounce = NULL;
	switch (op->kind) {
	case MRCFI_OP_RECV:
		cq = ep->rx_cq;
		cntr = ep->cntr_recv;
		selective = ep->rx_selective;
		e.flags = FI_RECV | (op->flags & (FI_MSG | FI_TAGGED | FI_REMOTE_CQ_DATA));
		e.len = op->xfer;
		e.buf = op->iov_count ? op->iov[0].iov_base : NULL;
		e.data = op->data;
		e.tag = op->tag;
		e.src = op->src;
		break;
	case MRCFI_OP_WRITE:
		cq = ep->tx_cq;
		cntr = ep->cntr_write;
		selective = ep->tx_selective;
		e.flags = FI_RMA | FI_WRITE;
		break;
	default:
		cq = ep->tx_cq;
		cntr = ep->cntr_send;
		selective = ep->tx_selective;
		e.flags = FI_SEND | (op->flags & (FI_MSG | FI_TAGGED));
		break;
	}
	if (op->err)
		e.len = op->kind == MRCFI_OP_RECV ? op->xfer : 0;
	mrcfi_cntr_inc(cntr, op->err != 0);
	if (cq && (op->err || (!op->inject && (!selective || (op->flags & FI_COMPLETION)))))
		mrcfi_cq_push(cq, &e);
	mrcfi_op_free(ep, op);
}

static void fail_op(struct mrcfi_ep *ep, struct mrcfi_op *op, int err)
{
	if (!op->err)
		op->err = err;
	if (op->wr_out) {
		op->state = MRCFI_OPS_POSTED; /* the flush completions finish it */
		return;
	}
	mrcfi_op_complete(ep, op);
}

void mrcfi_conn_fail(struct mrcfi_conn *c, int err)
{
	struct mrcfi_ep *ep = c->ep;
	struct mrcfi_list *qs[3] = {&c->txq, &c->ctrlq, &c->waiting};

	if (c->state == MRCFI_CONN_FAILED)
		return;
	FI_WARN(&mrcfi_prov, FI_LOG_EP_DATA, "connection (QP %u) failed: %s\n", c->qpn, fi_strerror(err));
	c->state = MRCFI_CONN_FAILED;
	mrcfi_list_del(&c->connect_link);
	for (int i = 0; i < 3; i++)
		while (!mrcfi_list_empty(qs[i])) {
			struct mrcfi_op *op = mrcfi_container(qs[i]->next, struct mrcfi_op, link);

			mrcfi_list_del(&op->link);
			fail_op(ep, op, FI_EIO);
		}
	for (struct mrcfi_list *l = ep->mem_wait.next, *n; l != &ep->mem_wait; l = n) {
		struct mrcfi_op *op = mrcfi_container(l, struct mrcfi_op, link);

		n = l->next;
		if (op->conn == c) {
			mrcfi_list_del(&op->link);
			fail_op(ep, op, FI_EIO);
		}
	}
	/* an unexpected rendezvous from a dead peer can never be fetched */
	struct mrcfi_list *uq[2] = {&ep->ux_msg, &ep->ux_tag};

	for (int i = 0; i < 2; i++)
		for (struct mrcfi_list *l = uq[i]->next, *n; l != uq[i]; l = n) {
			struct mrcfi_uexp *u = mrcfi_container(l, struct mrcfi_uexp, link);

			n = l->next;
			if (u->conn == c && u->rts) {
				mrcfi_list_del(&u->link);
				free(u);
			}
		}
	/* Destroying the QP flushes every work request still posted on it:
	 * each completes in error and finishes its op. */
	if (c->qpn && !c->destroyed_qp) {
		c->destroyed_qp = true;
		mrc_qp_destroy(ep->ctx, c->qpn);
	}
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ---- posting ------------------------------------------------------------------------------------ */

static uint32_t ring_depth(const struct mrcfi_conn *c)
{
	return c->slots < c->r_slots ? c->slots : c->r_slots;
}

static size_t eager_max(const struct mrcfi_conn *c)
{
	size_t a = c->slot_size, b = c->r_slot_size;

	return (a < b ? a : b) - sizeof(struct mrcfi_hdr);
}

/* A ring slot free at the peer (credit) and a staging slot free here. */
static bool ring_room(const struct mrcfi_conn *c)
{
	uint64_t consumed = __atomic_load_n(c->credit_in, __ATOMIC_ACQUIRE);

	return c->tx_seq - consumed < c->r_slots && c->tx_seq - c->tx_done < ring_depth(c);
}

static void gather(void *dst, const struct iovec *iov, size_t count, size_t len)
{
	uint8_t *d = dst;

	for (size_t i = 0; i < count && len; i++) {
		size_t k = iov[i].iov_len < len ? iov[i].iov_len : len;

		memcpy(d, iov[i].iov_base, k);
		d += k;
		len -= k;
	}
}

static size_t scatter(const struct iovec *iov, size_t count, const void *src, size_t len)
{
	const uint8_t *s = src;
	size_t done = 0;

	for (size_t i = 0; i < count && len; i++) {
		size_t k = iov[i].iov_len < len ? iov[i].iov_len : len;

		memcpy(iov[i].iov_base, s, k);
		s += k;
		len -= k;
		done += k;
	}
	return done;
}

/* WriteImm @h (+ @len payload bytes from @iov/@flat) into the peer's next
 * ring slot. @return 1 posted, 0 the send ring is full, < 0 an error. */
static int post_ring(struct mrcfi_conn *c, const struct mrcfi_hdr *h, const struct iovec *iov, size_t count,
		     const void *flat, size_t len, struct mrcfi_op *op)
{
	struct mrcfi_ep *ep = c->ep;
	uint8_t *stage = c->tx_stage + (size_t)(c->tx_seq % c->slots) * c->slot_size;

	memcpy(stage, h, sizeof(*h));
	if (flat)
		memcpy(stage + sizeof(*h), flat, len);
	else
		gather(stage + sizeof(*h), iov, count, len);
	struct mrcfi_wr *w = wr_get(ep, MRCFI_WR_RING, c, op);

	if (w == NULL)
		return -FI_ENOMEM;
	struct mrc_sge sge = {.addr = stage, .len = (uint32_t)(sizeof(*h) + len), .lkey = ep->heap_mr.lkey};
	struct mrc_send_wr wr = {.wr_id = (uint64_t)(uintptr_t)w, .opcode = MRC_WR_WRITE_IMM,
				 .flags = MRC_WR_SIGNALED, .imm = (uint32_t)c->tx_seq, .sg_list = &sge, .num_sge = 1,
				 .remote_addr = c->r_ring_va + (c->tx_seq % c->r_slots) * c->r_slot_size,
				 .rkey = c->r_rkey};
	int rc = mrc_post_send(ep->ctx, c->qpn, &wr, 1);

	if (rc != 1) {
		wr_put(ep, w);
		return rc < 0 ? -FI_EIO : 0;
	}
	FI_INFO(&mrcfi_prov, FI_LOG_EP_DATA, "QP %u: ring message %u seq %llu -> va %#llx\n", c->qpn, h->type,
		(unsigned long long)c->tx_seq, (unsigned long long)wr.remote_addr);
	c->tx_seq++;
	c->wr_out++;
	if (op)
		op->wr_out++;
	return 1;
}

/* A plain Write of [src, src+len) (arena) to the peer's @va. */
static int post_data(struct mrcfi_conn *c, const void *src, size_t len, uint64_t va, uint32_t rkey,
		     struct mrcfi_op *op)
{
	struct mrcfi_ep *ep = c->ep;
	struct mrcfi_wr *w = wr_get(ep, MRCFI_WR_DATA, c, op);

	if (w == NULL)
		return -FI_ENOMEM;
	struct mrc_sge sge = {.addr = (void *)(uintptr_t)src, .len = (uint32_t)len, .lkey = ep->heap_mr.lkey};
	struct mrc_send_wr wr = {.wr_id = (uint64_t)(uintptr_t)w, .opcode = MRC_WR_WRITE, .flags = MRC_WR_SIGNALED,
				 .sg_list = &sge, .num_sge = 1, .remote_addr = va, .rkey = rkey};
	int rc = mrc_post_send(ep->ctx, c->qpn, &wr, 1);

	if (rc != 1) {
		wr_put(ep, w);
		return rc < 0 ? -FI_EIO : 0;
	}
	c->wr_out++;
	if (op)
		op->wr_out++;
	return 1;
}

/* Tell the peer how many of our ring slots it may reuse: write our
 * consumed count into its credit word. @force: even if nothing is due (a
 * liveness probe: against a peer whose QP is gone it fails, and so the
 * connection). */
static void maybe_credit(struct mrcfi_conn *c, bool force)
{
	uint64_t due = c->rx_seq - c->rx_returned;
	uint64_t thresh = c->slots / 4 ? c->slots / 4 : 1;

	/* One credit write in flight at a time: MRC places the bytes of
	 * different Writes in arrival order, so a resent packet of an older
	 * credit write could land after a newer one and move the peer's word
	 * back, for good if nothing newer followed. */
	if ((!force && due < thresh) || c->credit_wr >= 1)
		return;
	uint64_t *src = &c->credit_src[c->credit_wr_seq % 4];

	*src = c->rx_seq;
	struct mrcfi_wr *w = wr_get(c->ep, MRCFI_WR_CREDIT, c, NULL);

	if (w == NULL)
		return;
	struct mrc_sge sge = {.addr = src, .len = sizeof(*src), .lkey = c->ep->heap_mr.lkey};
	struct mrc_send_wr wr = {.wr_id = (uint64_t)(uintptr_t)w, .opcode = MRC_WR_WRITE, .flags = MRC_WR_SIGNALED,
				 .sg_list = &sge, .num_sge = 1, .remote_addr = c->r_credit_va, .rkey = c->r_rkey};

	if (mrc_post_send(c->ep->ctx, c->qpn, &wr, 1) != 1) {
		wr_put(c->ep, w);
		return;
	}
	c->wr_out++;
	c->credit_wr++;
	c->credit_wr_seq++;
	c->rx_returned = c->rx_seq;
}

/* The arena address of [addr, addr+len) if @desc is one of our remote-
 * writable regions in @ep's arena that holds it; NULL otherwise. */
static void *arena_of(struct mrcfi_ep *ep, void *desc, const void *addr, size_t len)
{
	struct mrcfi_mr *mr = desc;

	if (mr == NULL || mr->mr.fid.fclass != FI_CLASS_MR || mr->ep != ep || mr->alias == NULL)
		return NULL;
	uintptr_t a = (uintptr_t)addr;

	if (a < mr->alias->start || a + len > mr->alias->end)
		return NULL;
	return (uint8_t *)mr->alias->arena + (a - mr->alias->start);
}

/* One step of the op at the head of c->txq. @return 1 done (dequeued),
 * 0 blocked, < 0 error. */
static int step_tx(struct mrcfi_conn *c, struct mrcfi_op *op)
{
	struct mrcfi_ep *ep = c->ep;
	int rc;

	if (op->kind == MRCFI_OP_SEND && !op->rdv && op->len > eager_max(c))
		op->rdv = true; /* the peer's slots are smaller than ours */
	if (op->kind == MRCFI_OP_SEND) {
		if (!ring_room(c))
			return 0;
		struct mrcfi_hdr h = {.type = op->rdv ? MRCFI_MSG_RTS : MRCFI_MSG_EAGER,
				      .flags = (uint8_t)(((op->flags & FI_TAGGED) ? MRCFI_HF_TAGGED : 0) |
							 ((op->flags & FI_REMOTE_CQ_DATA) ? MRCFI_HF_DATA : 0)),
				      .data = (uint32_t)op->data, .tag = op->tag, .size = op->len, .sid = op_id(op)};

		if (op->rdv) {
			rc = post_ring(c, &h, NULL, 0, NULL, 0, NULL);
			if (rc <= 0)
				return rc;
			mrcfi_list_del(&op->link);
			op->state = MRCFI_OPS_WAIT_CTS;
			if (mrcfi_list_empty(&c->waiting))
				c->heard_ms = now_ms();
			mrcfi_list_add_tail(&c->waiting, &op->link);
			return 1;
		}
		rc = post_ring(c, &h, op->iov, op->iov_count, op->copy, op->len, op);
		if (rc <= 0)
			return rc;
		mrcfi_list_del(&op->link);
		op->state = MRCFI_OPS_POSTED;
		return 1;
	}
	/* RMA write */
	if (!op->data_posted && op->len) {
		if (op->bounce == NULL) {
			void *a = op->iov_count == 1 ? arena_of(ep, op->desc[0], op->iov[0].iov_base, op->len) : NULL;

			if (a) {
				op->bounce = a;
				op->bounce_is_user = true;
			} else {
				op->bounce = mrcfi_heap_alloc(ep, op->len, 64);
				if (op->bounce == NULL)
					return 0; /* wait for arena memory */
				if (op->copy)
					memcpy(op->bounce, op->copy, op->len);
				else
					gather(op->bounce, op->iov, op->iov_count, op->len);
			}
		}
		rc = post_data(c, op->bounce, op->len, op->peer_va, c->r_rkey, op);
		if (rc <= 0)
			return rc;
		op->data_posted = true;
	}
	if (op->flags & FI_REMOTE_CQ_DATA) {
		if (!ring_room(c))
			return 0;
		struct mrcfi_hdr h = {.type = MRCFI_MSG_WDATA, .flags = MRCFI_HF_DATA, .data = (uint32_t)op->data,
				      .size = op->len, .va = op->peer_va};

		rc = post_ring(c, &h, NULL, 0, NULL, 0, op);
		if (rc <= 0)
			return rc;
	}
	mrcfi_list_del(&op->link);
	op->state = MRCFI_OPS_POSTED;
	if (op->wr_out == 0)
		mrcfi_op_complete(ep, op); /* a zero-byte write without data */
	return 1;
}

/* One rendezvous step at the head of c->ctrlq: a receiver's CTS, or a
 * sender's data Write + FIN. */
static int step_ctrl(struct mrcfi_conn *c, struct mrcfi_op *op)
{
	struct mrcfi_ep *ep = c->ep;
	int rc;

	if (op->kind == MRCFI_OP_RECV) {
		if (!ring_room(c))
			return 0;
		struct mrcfi_hdr h = {.type = MRCFI_MSG_CTS, .size = op->xfer, .sid = op->peer_id, .rid = op_id(op),
				      .va = op->bounce ? mrc_va(ep->ctx, op->bounce) : 0, .rkey = ep->heap_mr.rkey};

		rc = post_ring(c, &h, NULL, 0, NULL, 0, NULL);
		if (rc <= 0)
			return rc;
		mrcfi_list_del(&op->link);
		op->state = MRCFI_OPS_WAIT_FIN;
		if (mrcfi_list_empty(&c->waiting))
			c->heard_ms = now_ms();
		mrcfi_list_add_tail(&c->waiting, &op->link);
		return 1;
	}
	if (!op->data_posted && op->xfer) {
		if (op->bounce == NULL) {
			void *a = op->iov_count == 1 ? arena_of(ep, op->desc[0], op->iov[0].iov_base, op->xfer) : NULL;

			if (a) {
				op->bounce = a;
				op->bounce_is_user = true;
			} else {
				op->bounce = mrcfi_heap_alloc(ep, op->xfer, 64);
				if (op->bounce == NULL)
					return 0;
				gather(op->bounce, op->iov, op->iov_count, op->xfer);
			}
		}
		rc = post_data(c, op->bounce, op->xfer, op->peer_va, op->peer_rkey, op);
		if (rc <= 0)
			return rc;
		op->data_posted = true;
	}
	if (!ring_room(c))
		return 0;
	struct mrcfi_hdr h = {.type = MRCFI_MSG_FIN, .size = op->xfer, .sid = op_id(op), .rid = op->peer_id};

	rc = post_ring(c, &h, NULL, 0, NULL, 0, op);
	if (rc <= 0)
		return rc;
	mrcfi_list_del(&op->link);
	op->state = MRCFI_OPS_POSTED;
	return 1;
}

/* Operations waiting for the peer (a CTS or a FIN) and nothing heard from
 * it for a while: write to it, so that a peer that vanished after taking our
 * RTS shows up as a failed work request instead of a hang. */
#define PROBE_MS 500

static void probe(struct mrcfi_conn *c)
{
	uint64_t now = now_ms();

	if (now - c->heard_ms < PROBE_MS || now - c->probe_ms < PROBE_MS)
		return;
	c->probe_ms = now;
	maybe_credit(c, true);
}

static void flush(struct mrcfi_conn *c)
{
	if (c->state != MRCFI_CONN_READY)
		return;
	if (!mrcfi_list_empty(&c->waiting))
		probe(c);
	while (c->recv_deficit) {
		if (mrcfi_conn_post_recvs(c, 1) < 0)
			break;
		c->recv_deficit--;
	}
	maybe_credit(c, false);
	while (!mrcfi_list_empty(&c->ctrlq)) {
		int rc = step_ctrl(c, mrcfi_container(c->ctrlq.next, struct mrcfi_op, link));

		if (rc < 0) {
			mrcfi_conn_fail(c, FI_EIO);
			return;
		}
		if (rc == 0)
			return;
	}
	while (!mrcfi_list_empty(&c->txq)) {
		int rc = step_tx(c, mrcfi_container(c->txq.next, struct mrcfi_op, link));

		if (rc < 0) {
			mrcfi_conn_fail(c, FI_EIO);
			return;
		}
		if (rc == 0)
			return;
	}
}

void mrcfi_conn_kick(struct mrcfi_conn *c)
{
	flush(c);
}

/* ---- receiving ---------------------------------------------------------------------------------- */

static struct mrcfi_op *match_posted(struct mrcfi_ep *ep, bool tagged, fi_addr_t src, uint64_t tag)
{
	struct mrcfi_list *q = tagged ? &ep->rx_tag : &ep->rx_msg;

	for (struct mrcfi_list *l = q->next; l != q; l = l->next) {
		struct mrcfi_op *op = mrcfi_container(l, struct mrcfi_op, link);

		if (op->addr != FI_ADDR_UNSPEC && op->addr != src)
			continue;
		if (tagged && !mrcfi_tag_match(op->tag, op->ignore, tag))
			continue;
		mrcfi_list_del(&op->link);
		return op;
	}
	return NULL;
}

/* Rendezvous receive matched: find room for the data, then CTS. */
static void rdv_recv_start(struct mrcfi_ep *ep, struct mrcfi_op *op, struct mrcfi_conn *c, uint64_t sid, size_t size)
{
	op->conn = c;
	op->peer_id = sid;
	op->xfer = size < op->len ? size : op->len;
	op->olen = size - op->xfer;
	if (c->state == MRCFI_CONN_FAILED) {
		fail_op(ep, op, FI_EIO);
		return;
	}
	if (op->xfer && op->bounce == NULL) {
		void *a = op->iov_count == 1 ? arena_of(ep, op->desc[0], op->iov[0].iov_base, op->xfer) : NULL;

		if (a) {
			op->bounce = a;
			op->bounce_is_user = true;
		} else {
			op->bounce = mrcfi_heap_alloc(ep, op->xfer, 64);
		}
		if (op->bounce == NULL) {
			op->state = MRCFI_OPS_QUEUED;
			mrcfi_list_add_tail(&ep->mem_wait, &op->link);
			return;
		}
	}
	op->state = MRCFI_OPS_QUEUED;
	mrcfi_list_add_tail(&c->ctrlq, &op->link);
}

static void recv_finish(struct mrcfi_ep *ep, struct mrcfi_op *op)
{
	if (op->olen && !op->err)
		op->err = FI_ETRUNC;
	mrcfi_op_complete(ep, op);
}

static void deliver_eager(struct mrcfi_ep *ep, struct mrcfi_op *op, const void *payload, size_t size)
{
	op->xfer = scatter(op->iov, op->iov_count, payload, size < op->len ? size : op->len);
	op->olen = size - op->xfer;
	recv_finish(ep, op);
}

static void set_rx_meta(struct mrcfi_op *op, struct mrcfi_conn *c, bool tagged, uint64_t tag, bool has_data,
			uint64_t data)
{
	op->src = mrcfi_conn_src(c);
	op->tag = tagged ? tag : 0;
	op->data = has_data ? data : 0;
	if (has_data)
		op->flags |= FI_REMOTE_CQ_DATA;
}

void mrcfi_ring_handle(struct mrcfi_conn *c, uint32_t imm)
{
	struct mrcfi_ep *ep = c->ep;
	const uint8_t *slot = c->rx_ring + (size_t)(c->rx_seq % c->slots) * c->slot_size;
	struct mrcfi_hdr h;

	if (imm != (uint32_t)c->rx_seq) {
		mrcfi_conn_fail(c, FI_EOTHER);
		return;
	}
	memcpy(&h, slot, sizeof(h));
	FI_INFO(&mrcfi_prov, FI_LOG_EP_DATA, "QP %u: got ring message %u seq %llu\n", c->qpn, h.type,
		(unsigned long long)c->rx_seq);
	c->rx_seq++;
	bool tagged = h.flags & MRCFI_HF_TAGGED, has_data = h.flags & MRCFI_HF_DATA;

	switch (h.type) {
	case MRCFI_MSG_EAGER:
	case MRCFI_MSG_RTS: {
		bool rts = h.type == MRCFI_MSG_RTS;

		if (!rts && h.size > c->slot_size - sizeof(h)) {
			mrcfi_conn_fail(c, FI_EOTHER);
			return;
		}
		struct mrcfi_op *op = match_posted(ep, tagged, mrcfi_conn_src(c), h.tag);

		if (op) {
			set_rx_meta(op, c, tagged, h.tag, has_data, h.data);
			if (rts)
				rdv_recv_start(ep, op, c, h.sid, h.size);
			else
				deliver_eager(ep, op, slot + sizeof(h), h.size);
			break;
		}
		struct mrcfi_uexp *u = calloc(1, sizeof(*u));

		if (u == NULL) {
			mrcfi_conn_fail(c, FI_ENOMEM);
			return;
		}
		u->conn = c;
		u->tagged = tagged;
		u->rts = rts;
		u->tag = h.tag;
		u->data = h.data;
		u->flags = has_data ? FI_REMOTE_CQ_DATA : 0;
		u->size = h.size;
		u->sid = h.sid;
		if (!rts && h.size) {
			u->payload = malloc(h.size);
			if (u->payload == NULL) {
				free(u);
				mrcfi_conn_fail(c, FI_ENOMEM);
				return;
			}
			memcpy(u->payload, slot + sizeof(h), h.size);
		}
		mrcfi_list_add_tail(tagged ? &ep->ux_tag : &ep->ux_msg, &u->link);
		break;
	}
	case MRCFI_MSG_CTS: {
		struct mrcfi_op *op = op_by_id(ep, h.sid);

		if (op == NULL || op->kind != MRCFI_OP_SEND || op->state != MRCFI_OPS_WAIT_CTS || op->conn != c) {
			mrcfi_conn_fail(c, FI_EOTHER);
			return;
		}
		mrcfi_list_del(&op->link);
		op->peer_id = h.rid;
		op->peer_va = h.va;
		op->peer_rkey = h.rkey;
		op->xfer = h.size < op->len ? h.size : op->len;
		op->state = MRCFI_OPS_QUEUED;
		mrcfi_list_add_tail(&c->ctrlq, &op->link);
		break;
	}
	case MRCFI_MSG_FIN: {
		struct mrcfi_op *op = op_by_id(ep, h.rid);

		if (op == NULL || op->kind != MRCFI_OP_RECV || op->state != MRCFI_OPS_WAIT_FIN || op->conn != c) {
			mrcfi_conn_fail(c, FI_EOTHER);
			return;
		}
		mrcfi_list_del(&op->link);
		if (op->xfer && !op->bounce_is_user)
			scatter(op->iov, op->iov_count, op->bounce, op->xfer);
		recv_finish(ep, op);
		break;
	}
	case MRCFI_MSG_WDATA: {
		struct mrcfi_cqe e = {.flags = FI_RMA | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA, .len = h.size,
				      .data = h.data, .src = mrcfi_conn_src(c)};

		mrcfi_cntr_inc(ep->cntr_rwrite, false);
		if (ep->rx_cq)
			mrcfi_cq_push(ep->rx_cq, &e);
		break;
	}
	default:
		mrcfi_conn_fail(c, FI_EOTHER);
		return;
	}
}

/* ---- progress -------------------------------------------------------------------------------------- */

static void handle_wc(struct mrcfi_ep *ep, const struct mrc_wc *wc)
{
	if (wc->opcode == MRC_WC_QP_ERROR) {
		/* D70: no work request; the connection is over (its WRs, if
		 * any, came as error completions before) */
		struct mrcfi_conn *c = mrcfi_conn_by_qpn(ep, wc->qpn);

		FI_WARN(&mrcfi_prov, FI_LOG_EP_DATA, "QP %u entered ERROR: %s\n", wc->qpn,
			mrc_qp_cause_str((uint8_t)wc->cause));
		if (c != NULL)
			mrcfi_conn_fail(c, FI_EIO);
		return;
	}
	if (wc->opcode == MRC_WC_RECV_WRITE_IMM) {
		struct mrcfi_conn *c = mrcfi_conn_by_qpn(ep, wc->qpn);

		if (c == NULL) {
			FI_WARN(&mrcfi_prov, FI_LOG_EP_DATA, "a receive completion for QP %u, not ours\n", wc->qpn);
			return;
		}
		if (wc->status != MRC_WC_SUCCESS) {
			mrcfi_conn_fail(c, FI_EIO);
			return;
		}
		if (c->state == MRCFI_CONN_FAILED)
			return;
		if (mrcfi_conn_post_recvs(c, 1) < 0)
			c->recv_deficit++;
		if (!mrcfi_list_empty(&c->waiting))
			c->heard_ms = now_ms();
		mrcfi_ring_handle(c, wc->imm);
		return;
	}
	struct mrcfi_wr *w = (struct mrcfi_wr *)(uintptr_t)wc->wr_id;
	struct mrcfi_conn *c = w->c;
	struct mrcfi_op *op = w->op;

	c->wr_out--;
	if (w->kind == MRCFI_WR_RING)
		c->tx_done++;
	else if (w->kind == MRCFI_WR_CREDIT)
		c->credit_wr--;
	if (wc->status == MRC_WC_SUCCESS && !mrcfi_list_empty(&c->waiting))
		c->heard_ms = now_ms(); /* acknowledged: the peer's QP is there */
	wr_put(ep, w);
	if (op) {
		op->wr_out--;
		if (wc->status != MRC_WC_SUCCESS && !op->err)
			op->err = FI_EIO;
		if (op->wr_out == 0 && op->state == MRCFI_OPS_POSTED)
			mrcfi_op_complete(ep, op);
	}
	if (wc->status != MRC_WC_SUCCESS) {
		FI_WARN(&mrcfi_prov, FI_LOG_EP_DATA, "QP %u: %s\n", wc->qpn, mrc_wc_status_str(wc->status));
		mrcfi_conn_fail(c, FI_EIO);
	}
}

static void progress_locked(struct mrcfi_ep *ep)
{
	struct mrc_wc wc[64];
	int n;

	if (ep->ctx == NULL)
		return; /* no daemon session (mrcfi_ep_alloc alone: the unit tests) */
	for (int round = 0; round < 8; round++) {
		n = mrc_poll_cq(ep->ctx, wc, 64);
		for (int i = 0; i < n; i++)
			handle_wc(ep, &wc[i]);
		if (n < 64)
			break;
	}
	/* rendezvous receives waiting for arena memory */
	for (struct mrcfi_list *l = ep->mem_wait.next, *nx; l != &ep->mem_wait; l = nx) {
		struct mrcfi_op *op = mrcfi_container(l, struct mrcfi_op, link);

		nx = l->next;
		op->bounce = mrcfi_heap_alloc(ep, op->xfer, 64);
		if (op->bounce == NULL)
			break;
		mrcfi_list_del(&op->link);
		mrcfi_list_add_tail(&op->conn->ctrlq, &op->link);
	}
	for (struct mrcfi_list *l = ep->conns.next; l != &ep->conns; l = l->next)
		flush(mrcfi_container(l, struct mrcfi_conn, link));
}

void mrcfi_ep_progress(struct mrcfi_ep *ep)
{
	pthread_mutex_lock(&ep->lock);
	progress_locked(ep);
	pthread_mutex_unlock(&ep->lock);
}

/* ---- the send side of the API ------------------------------------------------------------------------ */

/* The checks and bookkeeping every send and write starts with: a new op of
 * @kind for @dest, queued on nothing yet. @return 0 with *@out and ep->lock
 * held; 1 if the op already completed in error (the peer's connection has
 * failed; lock released); a negative error otherwise (lock released). */
static ssize_t tx_start(struct mrcfi_ep *ep, uint8_t kind, const struct iovec *iov, void **desc, size_t count,
			fi_addr_t dest, uint64_t data, uint64_t flags, void *context, struct mrcfi_op **out)
{
	if (count > MRCFI_IOV_MAX || (count && iov == NULL))
		return -FI_EINVAL;
	size_t len = 0;

	for (size_t i = 0; i < count; i++)
		len += iov[i].iov_len;
	if (len > ep->info->ep_attr->max_msg_size || len > UINT32_MAX)
		return -FI_EMSGSIZE;
	if ((flags & FI_INJECT) && len > mrcfi_params.eager_size)
		return -FI_EMSGSIZE;
	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	pthread_mutex_lock(&ep->lock);
	int err = 0;
	struct mrcfi_conn *c = mrcfi_conn_get(ep, dest, &err);

	if (c == NULL) {
		pthread_mutex_unlock(&ep->lock);
		return err;
	}
	struct mrcfi_op *op = mrcfi_op_new(ep);

	if (op == NULL) {
		progress_locked(ep);
		pthread_mutex_unlock(&ep->lock);
		return -FI_EAGAIN;
	}
	op->kind = kind;
	op->state = MRCFI_OPS_QUEUED;
	op->flags = flags;
	op->context = context;
	op->addr = dest;
	op->data = data;
	op->len = len;
	op->conn = c;
	op->inject = flags & FI_INJECT;
	op->iov_count = count;
	for (size_t i = 0; i < count; i++) {
		op->iov[i] = iov[i];
		op->desc[i] = desc ? desc[i] : NULL;
	}
	if (c->state == MRCFI_CONN_FAILED) {
		op->err = FI_EIO;
		mrcfi_op_complete(ep, op);
		pthread_mutex_unlock(&ep->lock);
		return 1;
	}
	*out = op;
	return 0;
}

static ssize_t send_common(struct mrcfi_ep *ep, const struct iovec *iov, void **desc, size_t count,
			   fi_addr_t dest, uint64_t tag, uint64_t data, uint64_t flags, void *context)
{
	struct mrcfi_op *op = NULL;
	ssize_t rc = tx_start(ep, MRCFI_OP_SEND, iov, desc, count, dest, data, flags, context, &op);

	if (rc)
		return rc < 0 ? rc : 0;
	struct mrcfi_conn *c = op->conn;
	size_t len = op->len;

	op->tag = tag;
	op->rdv = len > mrcfi_params.eager_size;
	bool now = c->state == MRCFI_CONN_READY && mrcfi_list_empty(&c->txq) && mrcfi_list_empty(&c->ctrlq);

	if (!now && op->inject && len) {
		/* queued: the caller may reuse its buffer as soon as we return */
		op->copy = malloc(len);
		if (op->copy == NULL) {
			mrcfi_op_free(ep, op);
			pthread_mutex_unlock(&ep->lock);
			return -FI_EAGAIN;
		}
		gather(op->copy, iov, count, len);
	}
	mrcfi_list_add_tail(&c->txq, &op->link);
	flush(c);
	if (op->inject && op->state == MRCFI_OPS_QUEUED && op->copy == NULL && len) {
		/* still queued after all (the ring or the QP was full) */
		op->copy = malloc(len);
		if (op->copy)
			gather(op->copy, iov, count, len);
		else
			op->err = FI_ENOMEM;
	}
	pthread_mutex_unlock(&ep->lock);
	return 0;
}

static uint64_t tx_flags(struct mrcfi_ep *ep, uint64_t kind)
{
	return kind | (ep->tx_op_flags & FI_COMPLETION) | (ep->tx_selective ? 0 : FI_COMPLETION);
}

#define EP(fep) mrcfi_container(fep, struct mrcfi_ep, ep)

static ssize_t m_send(struct fid_ep *fep, const void *buf, size_t len, void *desc, fi_addr_t dest, void *context)
{
	struct iovec iov = {.iov_base = (void *)(uintptr_t)buf, .iov_len = len};

	return send_common(EP(fep), &iov, &desc, 1, dest, 0, 0, tx_flags(EP(fep), FI_MSG), context);
}
static ssize_t m_sendv(struct fid_ep *fep, const struct iovec *iov, void **desc, size_t count, fi_addr_t dest,
		       void *context)
{
	return send_common(EP(fep), iov, desc, count, dest, 0, 0, tx_flags(EP(fep), FI_MSG), context);
}
static ssize_t m_sendmsg(struct fid_ep *fep, const struct fi_msg *msg, uint64_t flags)
{
	return send_common(EP(fep), msg->msg_iov, msg->desc, msg->iov_count, msg->addr, 0, msg->data,
			   FI_MSG | (flags & ~(uint64_t)FI_TAGGED), msg->context);
}
static ssize_t m_inject(struct fid_ep *fep, const void *buf, size_t len, fi_addr_t dest)
{
	struct iovec iov = {.iov_base = (void *)(uintptr_t)buf, .iov_len = len};

	return send_common(EP(fep), &iov, NULL, 1, dest, 0, 0, FI_MSG | FI_INJECT, NULL);
}
static ssize_t m_senddata(struct fid_ep *fep, const void *buf, size_t len, void *desc, uint64_t data,
			  fi_addr_t dest, void *context)
{
	struct iovec iov = {.iov_base = (void *)(uintptr_t)buf, .iov_len = len};

	return send_common(EP(fep), &iov, &desc, 1, dest, 0, data, tx_flags(EP(fep), FI_MSG) | FI_REMOTE_CQ_DATA,
			   context);
}
static ssize_t m_injectdata(struct fid_ep *fep, const void *buf, size_t len, uint64_t data, fi_addr_t dest)
{
	struct iovec iov = {.iov_base = (void *)(uintptr_t)buf, .iov_len = len};

	return send_common(EP(fep), &iov, NULL, 1, dest, 0, data, FI_MSG | FI_INJECT | FI_REMOTE_CQ_DATA, NULL);
}

static ssize_t t_send(struct fid_ep *fep, const void *buf, size_t len, void *desc, fi_addr_t dest, uint64_t tag,
		      void *context)
{
	struct iovec iov = {.iov_base = (void *)(uintptr_t)buf, .iov_len = len};

	return send_common(EP(fep), &iov, &desc, 1, dest, tag, 0, tx_flags(EP(fep), FI_TAGGED), context);
}
static ssize_t t_sendv(struct fid_ep *fep, const struct iovec *iov, void **desc, size_t count, fi_addr_t dest,
		       uint64_t tag, void *context)
{
	return send_common(EP(fep), iov, desc, count, dest, tag, 0, tx_flags(EP(fep), FI_TAGGED), context);
}
static ssize_t t_sendmsg(struct fid_ep *fep, const struct fi_msg_tagged *msg, uint64_t flags)
{
	return send_common(EP(fep), msg->msg_iov, msg->desc, msg->iov_count, msg->addr, msg->tag, msg->data,
			   FI_TAGGED | (flags & ~(uint64_t)FI_MSG), msg->context);
}
static ssize_t t_inject(struct fid_ep *fep, const void *buf, size_t len, fi_addr_t dest, uint64_t tag)
{
	struct iovec iov = {.iov_base = (void *)(uintptr_t)buf, .iov_len = len};

	return send_common(EP(fep), &iov, NULL, 1, dest, tag, 0, FI_TAGGED | FI_INJECT, NULL);
}
static ssize_t t_senddata(struct fid_ep *fep, const void *buf, size_t len, void *desc, uint64_t data,
			  fi_addr_t dest, uint64_t tag, void *context)
{
	struct iovec iov = {.iov_base = (void *)(uintptr_t)buf, .iov_len = len};

	return send_common(EP(fep), &iov, &desc, 1, dest, tag, data,
			   tx_flags(EP(fep), FI_TAGGED) | FI_REMOTE_CQ_DATA, context);
}
static ssize_t t_injectdata(struct fid_ep *fep, const void *buf, size_t len, uint64_t data, fi_addr_t dest,
			    uint64_t tag)
{
	struct iovec iov = {.iov_base = (void *)(uintptr_t)buf, .iov_len = len};

	return send_common(EP(fep), &iov, NULL, 1, dest, tag, data, FI_TAGGED | FI_INJECT | FI_REMOTE_CQ_DATA, NULL);
}

/* ---- the receive side of the API ------------------------------------------------------------------------- */

static struct mrcfi_uexp *match_uexp(struct mrcfi_ep *ep, bool tagged, fi_addr_t src, uint64_t tag, uint64_t ignore)
{
	struct mrcfi_list *q = tagged ? &ep->ux_tag : &ep->ux_msg;

	for (struct mrcfi_list *l = q->next; l != q; l = l->next) {
		struct mrcfi_uexp *u = mrcfi_container(l, struct mrcfi_uexp, link);

		if (u->claimed)
			continue;
		if (src != FI_ADDR_UNSPEC && mrcfi_conn_src(u->conn) != src)
			continue;
		if (tagged && !mrcfi_tag_match(tag, ignore, u->tag))
			continue;
		return u;
	}
	return NULL;
}

static void deliver_uexp(struct mrcfi_ep *ep, struct mrcfi_op *op, struct mrcfi_uexp *u)
{
	mrcfi_list_del(&u->link);
	set_rx_meta(op, u->conn, u->tagged, u->tag, u->flags & FI_REMOTE_CQ_DATA, u->data);
	if (u->rts)
		rdv_recv_start(ep, op, u->conn, u->sid, u->size);
	else
		deliver_eager(ep, op, u->payload, u->size);
	free(u->payload);
	free(u);
}

static ssize_t recv_common(struct mrcfi_ep *ep, const struct iovec *iov, void **desc, size_t count, fi_addr_t src,
			   uint64_t tag, uint64_t ignore, uint64_t flags, void *context)
{
	bool tagged = flags & FI_TAGGED;

	if (count > MRCFI_IOV_MAX || (count && iov == NULL))
		return -FI_EINVAL;
	if (!(ep->caps & FI_DIRECTED_RECV))
		src = FI_ADDR_UNSPEC;
	pthread_mutex_lock(&ep->lock);
	progress_locked(ep);

	if (flags & FI_PEEK) {
		struct mrcfi_uexp *u = match_uexp(ep, tagged, src, tag, ignore);
		struct mrcfi_cqe e = {.op_context = context, .flags = FI_RECV | (flags & (FI_MSG | FI_TAGGED)),
				      .src = FI_ADDR_NOTAVAIL};

		if (u == NULL) {
			e.err = FI_ENOMSG;
		} else {
			e.len = u->size;
			e.tag = u->tag;
			e.data = u->data;
			e.flags |= u->flags;
			e.src = mrcfi_conn_src(u->conn);
			if (flags & FI_DISCARD) {
				mrcfi_list_del(&u->link);
				free(u->payload);
				free(u); /* an unfetched rendezvous is dropped: its sender waits for ever */
			} else if (flags & FI_CLAIM) {
				u->claimed = true;
				((struct fi_context *)context)->internal[0] = u;
			}
		}
		if (ep->rx_cq)
			mrcfi_cq_push(ep->rx_cq, &e);
		pthread_mutex_unlock(&ep->lock);
		return 0;
	}
	struct mrcfi_op *op = mrcfi_op_new(ep);

	if (op == NULL) {
		pthread_mutex_unlock(&ep->lock);
		return -FI_EAGAIN;
	}
	op->kind = MRCFI_OP_RECV;
	op->state = MRCFI_OPS_QUEUED;
	op->flags = flags & (FI_MSG | FI_TAGGED | FI_COMPLETION);
	op->context = context;
	op->addr = src;
	op->tag = tag;
	op->ignore = ignore;
	op->iov_count = count;
	for (size_t i = 0; i < count; i++) {
		op->iov[i] = iov[i];
		op->desc[i] = desc ? desc[i] : NULL;
		op->len += iov[i].iov_len;
	}
	if (flags & FI_CLAIM) {
		struct mrcfi_uexp *u = context ? ((struct fi_context *)context)->internal[0] : NULL;

		if (u == NULL || !u->claimed) {
			mrcfi_op_free(ep, op);
			pthread_mutex_unlock(&ep->lock);
			return -FI_EINVAL;
		}
		if (flags & FI_DISCARD) {
			mrcfi_list_del(&u->link);
			free(u->payload);
			free(u);
			op->xfer = 0;
			mrcfi_op_complete(ep, op);
		} else {
			deliver_uexp(ep, op, u);
		}
		pthread_mutex_unlock(&ep->lock);
		return 0;
	}
	struct mrcfi_uexp *u = match_uexp(ep, tagged, src, tag, ignore);

	if (u)
		deliver_uexp(ep, op, u);
	else
		mrcfi_list_add_tail(tagged ? &ep->rx_tag : &ep->rx_msg, &op->link);
	pthread_mutex_unlock(&ep->lock);
	return 0;
}

static uint64_t rx_flags(struct mrcfi_ep *ep, uint64_t kind)
{
	return kind | (ep->rx_op_flags & FI_COMPLETION) | (ep->rx_selective ? 0 : FI_COMPLETION);
}

static ssize_t m_recv(struct fid_ep *fep, void *buf, size_t len, void *desc, fi_addr_t src, void *context)
{
	struct iovec iov = {.iov_base = buf, .iov_len = len};

	return recv_common(EP(fep), &iov, &desc, 1, src, 0, 0, rx_flags(EP(fep), FI_MSG), context);
}
static ssize_t m_recvv(struct fid_ep *fep, const struct iovec *iov, void **desc, size_t count, fi_addr_t src,
		       void *context)
{
	return recv_common(EP(fep), iov, desc, count, src, 0, 0, rx_flags(EP(fep), FI_MSG), context);
}
static ssize_t m_recvmsg(struct fid_ep *fep, const struct fi_msg *msg, uint64_t flags)
{
	if (flags & (FI_MULTI_RECV | FI_PEEK | FI_CLAIM))
		return -FI_ENOSYS;
	return recv_common(EP(fep), msg->msg_iov, msg->desc, msg->iov_count, msg->addr, 0, 0,
			   FI_MSG | (flags & FI_COMPLETION), msg->context);
}

static ssize_t t_recv(struct fid_ep *fep, void *buf, size_t len, void *desc, fi_addr_t src, uint64_t tag,
		      uint64_t ignore, void *context)
{
	struct iovec iov = {.iov_base = buf, .iov_len = len};

	return recv_common(EP(fep), &iov, &desc, 1, src, tag, ignore, rx_flags(EP(fep), FI_TAGGED), context);
}
static ssize_t t_recvv(struct fid_ep *fep, const struct iovec *iov, void **desc, size_t count, fi_addr_t src,
		       uint64_t tag, uint64_t ignore, void *context)
{
	return recv_common(EP(fep), iov, desc, count, src, tag, ignore, rx_flags(EP(fep), FI_TAGGED), context);
}
static ssize_t t_recvmsg(struct fid_ep *fep, const struct fi_msg_tagged *msg, uint64_t flags)
{
	if (flags & FI_MULTI_RECV)
		return -FI_ENOSYS;
	return recv_common(EP(fep), msg->msg_iov, msg->desc, msg->iov_count, msg->addr, msg->tag, msg->ignore,
			   FI_TAGGED | (flags & (FI_COMPLETION | FI_PEEK | FI_CLAIM | FI_DISCARD)), msg->context);
}

ssize_t mrcfi_cancel(fid_t fid, void *context)
{
	struct mrcfi_ep *ep = mrcfi_container(fid, struct mrcfi_ep, ep.fid);
	struct mrcfi_list *qs[2] = {&ep->rx_msg, &ep->rx_tag};

	pthread_mutex_lock(&ep->lock);
	for (int i = 0; i < 2; i++)
		for (struct mrcfi_list *l = qs[i]->next; l != qs[i]; l = l->next) {
			struct mrcfi_op *op = mrcfi_container(l, struct mrcfi_op, link);

			if (op->context != context)
				continue;
			mrcfi_list_del(&op->link);
			op->err = FI_ECANCELED;
			mrcfi_op_complete(ep, op);
			pthread_mutex_unlock(&ep->lock);
			return 0;
		}
	pthread_mutex_unlock(&ep->lock);
	return -FI_ENOENT;
}

/* ---- RMA ---------------------------------------------------------------------------------------------------- */

static ssize_t write_common(struct mrcfi_ep *ep, const struct iovec *iov, void **desc, size_t count,
			    fi_addr_t dest, uint64_t addr, uint64_t key, uint64_t data, uint64_t flags, void *context)
{
	if (!(ep->caps & FI_RMA))
		return -FI_ENOSYS;
	struct mrcfi_op *op = NULL;
	ssize_t rc = tx_start(ep, MRCFI_OP_WRITE, iov, desc, count, dest, data, flags, context, &op);

	if (rc)
		return rc < 0 ? rc : 0;
	struct mrcfi_conn *c = op->conn;
	size_t len = op->len;

	op->peer_va = addr + key; /* FI_MR_VIRT_ADDR + our provider keys (cq.c) */
	if (op->inject && len) {
		op->copy = malloc(len);
		if (op->copy == NULL) {
			mrcfi_op_free(ep, op);
			pthread_mutex_unlock(&ep->lock);
			return -FI_EAGAIN;
		}
		gather(op->copy, iov, count, len);
	}
	mrcfi_list_add_tail(&c->txq, &op->link);
	flush(c);
	pthread_mutex_unlock(&ep->lock);
	return 0;
}

static ssize_t r_write(struct fid_ep *fep, const void *buf, size_t len, void *desc, fi_addr_t dest, uint64_t addr,
		       uint64_t key, void *context)
{
	struct iovec iov = {.iov_base = (void *)(uintptr_t)buf, .iov_len = len};

	return write_common(EP(fep), &iov, &desc, 1, dest, addr, key, 0, tx_flags(EP(fep), FI_RMA | FI_WRITE),
			    context);
}
static ssize_t r_writev(struct fid_ep *fep, const struct iovec *iov, void **desc, size_t count, fi_addr_t dest,
			uint64_t addr, uint64_t key, void *context)
{
	return write_common(EP(fep), iov, desc, count, dest, addr, key, 0, tx_flags(EP(fep), FI_RMA | FI_WRITE),
			    context);
}
static ssize_t r_writemsg(struct fid_ep *fep, const struct fi_msg_rma *msg, uint64_t flags)
{
	if (msg->rma_iov_count != 1)
		return -FI_EINVAL;
	return write_common(EP(fep), msg->msg_iov, msg->desc, msg->iov_count, msg->addr, msg->rma_iov[0].addr,
			    msg->rma_iov[0].key, msg->data, FI_RMA | FI_WRITE | flags, msg->context);
}
static ssize_t r_inject(struct fid_ep *fep, const void *buf, size_t len, fi_addr_t dest, uint64_t addr, uint64_t key)
{
	struct iovec iov = {.iov_base = (void *)(uintptr_t)buf, .iov_len = len};

	return write_common(EP(fep), &iov, NULL, 1, dest, addr, key, 0, FI_RMA | FI_WRITE | FI_INJECT, NULL);
}
static ssize_t r_writedata(struct fid_ep *fep, const void *buf, size_t len, void *desc, uint64_t data,
			   fi_addr_t dest, uint64_t addr, uint64_t key, void *context)
{
	struct iovec iov = {.iov_base = (void *)(uintptr_t)buf, .iov_len = len};

	return write_common(EP(fep), &iov, &desc, 1, dest, addr, key, data,
			    tx_flags(EP(fep), FI_RMA | FI_WRITE) | FI_REMOTE_CQ_DATA, context);
}
static ssize_t r_injectdata(struct fid_ep *fep, const void *buf, size_t len, uint64_t data, fi_addr_t dest,
			    uint64_t addr, uint64_t key)
{
	struct iovec iov = {.iov_base = (void *)(uintptr_t)buf, .iov_len = len};

	return write_common(EP(fep), &iov, NULL, 1, dest, addr, key, data,
			    FI_RMA | FI_WRITE | FI_INJECT | FI_REMOTE_CQ_DATA, NULL);
}

/* MRC has no RDMA Read. */
static ssize_t r_read(struct fid_ep *ep, void *buf, size_t len, void *desc, fi_addr_t src, uint64_t addr,
		      uint64_t key, void *context)
{
	(void)ep; (void)buf; (void)len; (void)desc; (void)src; (void)addr; (void)key; (void)context;
	return -FI_ENOSYS;
}
static ssize_t r_readv(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count, fi_addr_t src,
		       uint64_t addr, uint64_t key, void *context)
{
	(void)ep; (void)iov; (void)desc; (void)count; (void)src; (void)addr; (void)key; (void)context;
	return -FI_ENOSYS;
}
static ssize_t r_readmsg(struct fid_ep *ep, const struct fi_msg_rma *msg, uint64_t flags)
{
	(void)ep; (void)msg; (void)flags;
	return -FI_ENOSYS;
}

struct fi_ops_msg mrcfi_msg_ops = {
	.size = sizeof(struct fi_ops_msg),
	.recv = m_recv,
	.recvv = m_recvv,
	.recvmsg = m_recvmsg,
	.send = m_send,
	.sendv = m_sendv,
	.sendmsg = m_sendmsg,
	.inject = m_inject,
	.senddata = m_senddata,
	.injectdata = m_injectdata,
};

struct fi_ops_tagged mrcfi_tagged_ops = {
	.size = sizeof(struct fi_ops_tagged),
	.recv = t_recv,
	.recvv = t_recvv,
	.recvmsg = t_recvmsg,
	.send = t_send,
	.sendv = t_sendv,
	.sendmsg = t_sendmsg,
	.inject = t_inject,
	.senddata = t_senddata,
	.injectdata = t_injectdata,
};

struct fi_ops_rma mrcfi_rma_ops = {
	.size = sizeof(struct fi_ops_rma),
	.read = r_read,
	.readv = r_readv,
	.readmsg = r_readmsg,
	.write = r_write,
	.writev = r_writev,
	.writemsg = r_writemsg,
	.inject = r_inject,
	.writedata = r_writedata,
	.injectdata = r_injectdata,
};
