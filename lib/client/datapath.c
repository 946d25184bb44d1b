/* datapath.c - libmrc-client's data path: work requests and receive posts
 * into the arena rings with the doorbell, completions out of the CQ ring,
 * and blocking on the completion eventfd with lib/shm's wake-flag protocol.
 * No locks and no system calls unless a peer sleeps (doorbell) or the
 * caller blocks (mrc_wait_cq). The control channel is ctl.c's. */
#define _GNU_SOURCE
#include "client_internal.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#define BATCH 32u   /* ring elements staged on the stack per enqueue/dequeue */

_Static_assert(MRC_MAX_SGE == MRC_SHM_MAX_SGE, "mrc_client.h and mrc_shm.h agree on SGEs");
_Static_assert((int)MRC_WR_WRITE == (int)MRC_SHM_OP_WRITE && (int)MRC_WR_WRITE_IMM == (int)MRC_SHM_OP_WRITE_IMM,
	       "opcodes pass through unchanged");
_Static_assert((int)MRC_WR_SIGNALED == (int)MRC_SHM_WR_SIGNALED, "flags pass through unchanged");
_Static_assert((int)MRC_WC_RECV_WRITE_IMM == (int)MRC_SHM_WC_RECV_WRITE_IMM &&
	       (int)MRC_WC_QP_ERROR == (int)MRC_SHM_WC_QP_ERROR &&
	       (int)MRC_WC_GENERAL_ERR == (int)MRC_SHM_WC_GENERAL_ERR &&
	       (int)MRC_WC_REM_INV_REQ_ERR == (int)MRC_SHM_WC_REM_INV_REQ_ERR &&
	       (int)MRC_WC_REM_OP_ERR == (int)MRC_SHM_WC_REM_OP_ERR, "completion codes pass through unchanged");
_Static_assert((int)MRC_QP_CAUSE_NO_RECV == (int)MRC_SHM_QP_CAUSE_NO_RECV &&
	       (int)MRC_QP_CAUSE_RETRY_EXCEEDED == (int)MRC_SHM_QP_CAUSE_RETRY_EXCEEDED &&
	       (int)MRC_QP_CAUSE_REMOTE_INVALID == (int)MRC_SHM_QP_CAUSE_REMOTE_INVALID &&
	       (int)MRC_QP_CAUSE_REMOTE_ACCESS == (int)MRC_SHM_QP_CAUSE_REMOTE_ACCESS &&
	       (int)MRC_QP_CAUSE_REMOTE_OP == (int)MRC_SHM_QP_CAUSE_REMOTE_OP &&
	       (int)MRC_QP_CAUSE_WIMM_OVERFLOW == (int)MRC_SHM_QP_CAUSE_WIMM_OVERFLOW &&
	       (int)MRC_QP_CAUSE_BAD_REQUEST == (int)MRC_SHM_QP_CAUSE_BAD_REQUEST &&
	       (int)MRC_QP_CAUSE_BAD_ACCESS == (int)MRC_SHM_QP_CAUSE_BAD_ACCESS, "causes pass through unchanged");
_Static_assert(sizeof(struct mrc_wc) == 24, "the cause shares the immediate's place: mrc_wc keeps its size");

/* Ring the daemon's doorbell if its worker sleeps on @rh's ring. A failed
 * write can only mean the counter is saturated: the worker is awake then. */
static void doorbell(struct mrc_ctx *ctx, const struct mrc_shm_rh *rh)
{
	if (mrc_shm_ring_need_wake(rh->r)) {
		uint64_t one = 1;
		ssize_t w = write(ctx->db_fd, &one, sizeof(one));

		(void)w;
	}
}

/* The local checks of one work request. */
__attribute__((cold))
static int bad_wr(struct mrc_ctx *ctx, unsigned k, const char *what)
{
	return mrc__fail(ctx, -EINVAL, "mrc_post_send: wr[%u]: %s", k, what);
}

static int check_wr(struct mrc_ctx *ctx, const struct mrc_send_wr *w, unsigned k)
{
	uint64_t total = 0;

	if (w->opcode != MRC_WR_WRITE && w->opcode != MRC_WR_WRITE_IMM)
		return bad_wr(ctx, k, "unknown opcode");
	if (w->flags & ~MRC_WR_SIGNALED)
		return bad_wr(ctx, k, "unknown flags");
	if (w->num_sge > MRC_MAX_SGE)
		return bad_wr(ctx, k, "more than 8 SGEs");
	if (w->num_sge > 0 && w->sg_list == NULL)
		return bad_wr(ctx, k, "sg_list is NULL");
	for (uint32_t i = 0; i < w->num_sge; i++) {
		const struct mrc_sge *s = &w->sg_list[i];
		uintptr_t lo = (uintptr_t)ctx->base + ctx->heap_ofs, a = (uintptr_t)s->addr;
		uint64_t rofs, rlen, ofs;

		if (a < lo || a - lo > ctx->heap_len || s->len > ctx->heap_len - (a - lo))
			return bad_wr(ctx, k, "an SGE lies outside the arena heap");
		/* A key this context registered must cover the bytes; an
		 * unknown key is the daemon's to reject (LOC_PROT_ERR). */
		ofs = (uint64_t)(a - (uintptr_t)ctx->base);
		if (mrc__keytab_find(&ctx->mrs, s->lkey, &rofs, &rlen) &&
		    (ofs < rofs || ofs - rofs > rlen || s->len > rlen - (ofs - rofs)))
			return bad_wr(ctx, k, "an SGE lies outside the region of its lkey");
		total += s->len;
	}
	if (total > UINT32_MAX)
		return bad_wr(ctx, k, "more than 4 GiB in one request");
	return 0;
}

int mrc_post_send(struct mrc_ctx *ctx, uint32_t qpn, const struct mrc_send_wr *wr, unsigned n)
{
	struct mrc_shm_wr batch[BATCH];
	unsigned posted = 0;

	if (ctx == NULL || (wr == NULL && n > 0))
		return mrc__fail(ctx, -EINVAL, "mrc_post_send: wr is NULL");
	if (n == 0)
		return 0;
	if (!mrc__keytab_find(&ctx->qps, qpn, NULL, NULL))
		return mrc__fail(ctx, -EINVAL, "mrc_post_send: qpn %u is not a QP of this context", qpn);
	/* Check everything first: a malformed request posts nothing. */
	for (unsigned k = 0; k < n; k++) {
		int rc = check_wr(ctx, &wr[k], k);

		if (rc < 0)
			return rc;
	}
	while (posted < n) {
		unsigned m = n - posted < BATCH ? n - posted : BATCH;

		for (unsigned k = 0; k < m; k++) {
			const struct mrc_send_wr *w = &wr[posted + k];
			struct mrc_shm_wr *o = &batch[k];

			memset(o, 0, sizeof(*o));
			o->wr_id = w->wr_id;
			o->remote_addr = w->remote_addr;
			o->qp = qpn;
			o->rkey = w->rkey;
			o->imm = w->opcode == MRC_WR_WRITE_IMM ? w->imm : 0;
			o->opcode = w->opcode;
			o->flags = w->flags;
			o->num_sge = (uint8_t)w->num_sge;
			for (uint32_t i = 0; i < w->num_sge; i++) {
				o->sge[i].ofs = (uint64_t)((const uint8_t *)w->sg_list[i].addr - ctx->base);
				o->sge[i].len = w->sg_list[i].len;
				o->sge[i].lkey = w->sg_list[i].lkey;
			}
		}
		unsigned done = mrc_shm_rh_enqueue_burst(&ctx->sq, batch, m);

		posted += done;
		if (done < m)
			break; /* the ring is full */
	}
	if (posted > 0)
		doorbell(ctx, &ctx->sq);
	return (int)posted;
}

int mrc_post_recv(struct mrc_ctx *ctx, uint32_t qpn, const uint64_t *wr_id, unsigned n)
{
	struct mrc_shm_recv batch[BATCH];
	unsigned posted = 0;

	if (ctx == NULL || (wr_id == NULL && n > 0))
		return mrc__fail(ctx, -EINVAL, "mrc_post_recv: wr_id is NULL");
	if (n == 0)
		return 0;
	if (!mrc__keytab_find(&ctx->qps, qpn, NULL, NULL))
		return mrc__fail(ctx, -EINVAL, "mrc_post_recv: qpn %u is not a QP of this context", qpn);
	while (posted < n) {
		unsigned m = n - posted < BATCH ? n - posted : BATCH;

		for (unsigned k = 0; k < m; k++)
			batch[k] = (struct mrc_shm_recv){.wr_id = wr_id[posted + k], .qp = qpn};
		unsigned done = mrc_shm_rh_enqueue_burst(&ctx->rq, batch, m);

		posted += done;
		if (done < m)
			break;
	}
	if (posted > 0)
		doorbell(ctx, &ctx->rq);
	return (int)posted;
}

int mrc_poll_cq(struct mrc_ctx *ctx, struct mrc_wc *wc, unsigned max)
{
	struct mrc_shm_cqe batch[BATCH];
	unsigned got = 0;

	if (ctx == NULL || (wc == NULL && max > 0))
		return mrc__fail(ctx, -EINVAL, "mrc_poll_cq: wc is NULL");
	if (ctx->cq_armed) {
		/* The application armed the CQ and came back: stop asking
		 * the daemon for eventfd writes. */
		mrc_shm_ring_end_sleep(ctx->cq.r);
		ctx->cq_armed = false;
	}
	while (got < max) {
		unsigned m = max - got < BATCH ? max - got : BATCH;
		unsigned done = mrc_shm_rh_dequeue_burst(&ctx->cq, batch, m);

		for (unsigned k = 0; k < done; k++) {
			const struct mrc_shm_cqe *c = &batch[k];

			wc[got + k] = (struct mrc_wc){
				.wr_id = c->wr_id,
				.qpn = c->qp,
				.byte_len = c->byte_len,
				.imm = c->opcode == MRC_SHM_WC_QP_ERROR ? c->cause : c->imm, /* or .cause */
				.msn = (uint16_t)c->msn,
				.opcode = c->opcode,
				.status = c->status,
			};
		}
		got += done;
		if (done < m)
			break;
	}
	return (int)got;
}

/* Empty the completion eventfd (non-blocking since attach). */
static void drain_cq_fd(struct mrc_ctx *ctx)
{
	uint64_t v;
	ssize_t r = read(ctx->cq_fd, &v, sizeof(v));

	(void)r;
}

bool mrc_arm_cq(struct mrc_ctx *ctx)
{
	if (ctx == NULL)
		return false;
	/* Drain first, then arm: a completion that lands in between is either
	 * seen by prepare_sleep (F1) or makes the daemon write the fd (F2). */
	drain_cq_fd(ctx);
	ctx->cq_armed = mrc_shm_ring_prepare_sleep(ctx->cq.r);
	return ctx->cq_armed;
}

int mrc_cq_fd(const struct mrc_ctx *ctx)
{
	return ctx ? ctx->cq_fd : -EINVAL;
}

/* Something arrived on the control socket while waiting: read it (events,
 * end of stream). The lock is only contended while another thread runs a
 * control request, which then reads the data itself. */
static int check_socket(struct mrc_ctx *ctx)
{
	int rc;

	pthread_mutex_lock(&ctx->lock);
	rc = mrc__ctl_pump(ctx);
	pthread_mutex_unlock(&ctx->lock);
	return rc;
}

int mrc_wait_cq(struct mrc_ctx *ctx, int timeout_ms)
{
	uint64_t deadline = 0;

	if (ctx == NULL)
		return -EINVAL;
	if (mrc_shm_ring_count(ctx->cq.r) > 0)
		return 1;
	if (atomic_load(&ctx->dead))
		return mrc__fail(ctx, -EPIPE, "mrc_wait_cq: mrcd closed the session");
	if (timeout_ms == 0)
		return 0;
	if (timeout_ms > 0)
		deadline = mrc__now_ns() + (uint64_t)timeout_ms * 1000000u;
	for (;;) {
		drain_cq_fd(ctx);
		if (!mrc_shm_ring_prepare_sleep(ctx->cq.r))
			return 1;
		struct pollfd pfd[2] = {
			{.fd = ctx->cq_fd, .events = POLLIN},
			{.fd = ctx->sock, .events = POLLIN},
		};
		int ms = -1;

		if (timeout_ms > 0) {
			int64_t left = (int64_t)(deadline - mrc__now_ns());

			ms = left <= 0 ? 0 : (int)((left + 999999) / 1000000);
		}
		int r = poll(pfd, 2, ms);
		int err = errno;

		mrc_shm_ring_end_sleep(ctx->cq.r);
		ctx->cq_armed = false;
		if (r < 0 && err == EINTR)
			return mrc__fail(ctx, -EINTR, "mrc_wait_cq: interrupted");
		if (r < 0)
			return mrc__fail(ctx, -err, "mrc_wait_cq: poll: %s", strerror(err));
		if (mrc_shm_ring_count(ctx->cq.r) > 0)
			return 1;
		if (pfd[1].revents & (POLLIN | POLLHUP | POLLERR)) {
			if (check_socket(ctx) < 0 || atomic_load(&ctx->dead))
				return mrc__fail(ctx, -EPIPE, "mrc_wait_cq: mrcd closed the session");
		}
		if (r == 0 || (timeout_ms > 0 && (int64_t)(deadline - mrc__now_ns()) <= 0))
			return 0;
		/* A stale eventfd count or a control line: wait on. */
	}
}
