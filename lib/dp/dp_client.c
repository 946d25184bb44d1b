/* dp_client.c - client sessions on the daemon side (dp_client.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dp_client.h"
#include "dp_internal.h"
#include "dp_wr.h"
#include "mrc_shm.h"

/* Per-session counters: X(name, description). */
#define MRCD_CLIENT_COUNTERS(X)                                                \
	X(wr_posted, "work requests posted to the engine")                     \
	X(wr_bad, "work requests refused (error completion)")                  \
	X(recv_posted, "receive slots posted")                                 \
	X(recv_bad, "receive posts refused")                                   \
	X(cqe, "completions written to the completion ring")                   \
	X(qp_errors, "QP-error entries written to the completion ring (D70)")  \
	X(cq_wakes, "completion eventfd writes")                               \
	X(cq_overflow, "completions held back: completion ring full")

struct mrcd_client_counters {
#define X(n, d) uint64_t n;
	MRCD_CLIENT_COUNTERS(X)
#undef X
};

struct mrcd_client_mr {
	bool used;
	uint32_t lkey, rkey;       /* the engine's keys, handed to the client */
	uint64_t ofs, len;         /* arena offsets */
	uint32_t access;
};

/* One outstanding send: engine wr_id = its index in the session's table. */
struct mrcd_client_wr {
	uint64_t wr_id;            /* the client's */
	uint32_t qpn;
	bool signaled;
	bool used;
};

struct mrcd_client {
	struct mrcd_dp *dp;        /* the worker that serves it (D63) */
	uint32_t id;
	struct mrcd_client *next;  /* the worker's list */
	/* the arena */
	uint8_t *base;
	uint64_t size;
	struct mrc_shm_view view;
	struct mrc_shm_rh ring[MRCD_CLIENT_RINGS];
	int cq_efd;                /* the daemon writes it: completions for a sleeper */
	uint64_t va_base;
	uint32_t pd;               /* D67: the session's protection domain (worker) */
	/* limits */
	uint32_t max_qps, max_wrs, max_mrs;
	unsigned n_mrs;
	/* state (worker) */
	struct mrcd_client_mr mrs[MRCD_CLIENT_MAX_MRS];
	struct mrcd_wr_mr chk[MRCD_CLIENT_MAX_MRS]; /* the same regions, for mrcd_wr_check */
	uint32_t *qpns;
	unsigned n_qps;
	struct mrcd_client_wr *wrs; /* max_wrs entries */
	uint32_t *wr_free;         /* free-list stack of wrs[] indices */
	unsigned n_wr_free;
	/* requests taken from the rings, not yet accepted by the engine */
	struct mrc_shm_wr sq_batch[MRCD_CLIENT_BATCH];
	unsigned sq_pos, sq_n;
	struct mrc_shm_recv rq_batch[MRCD_CLIENT_BATCH];
	unsigned rq_pos, rq_n;
	struct mrc_shm_cqe *ovf;   /* completions the ring had no room for, in order */
	unsigned ovf_head, ovf_n, ovf_cap;
	struct mrcd_client_counters c;
};


struct client_list {
	struct mrcd_client *head;
	bool hooked;
};

/* ---- creation (control thread) ------------------------------------------------- */

int mrcd_client_create(struct mrcd_dp *w, uint32_t id, uint64_t heap_bytes,
		       uint32_t sq_depth, uint32_t rq_depth, uint32_t cq_depth,
		       struct mrcd_client **out, int *arena_fd, char *err, size_t errlen)
{
	const struct mrcd_dp_config *cfg = w->cfg;
	struct mrc_shm_params p;
	struct mrc_shm_layout lay;
	struct mrcd_client *c;
	int fd = -1, rc;

	*out = NULL;
	*arena_fd = -1;
	if (heap_bytes > (uint64_t)cfg->per_client.max_mem_mb << 20) {
		snprintf(err, errlen, "args.heap_bytes: %llu is above limits.per_client.max_mem_mb (%u MiB)",
			 (unsigned long long)heap_bytes, cfg->per_client.max_mem_mb);
		return -EINVAL;
	}
	memset(&p, 0, sizeof(p));
	p.nr_rings = MRCD_CLIENT_RINGS;
	p.nr_regions = MRCD_CLIENT_MAX_MRS;
	p.heap_size = heap_bytes;
	p.rings[MRCD_CLIENT_SQ].capacity = sq_depth;
	p.rings[MRCD_CLIENT_SQ].elem_size = sizeof(struct mrc_shm_wr);
	p.rings[MRCD_CLIENT_RQ].capacity = rq_depth;
	p.rings[MRCD_CLIENT_RQ].elem_size = sizeof(struct mrc_shm_recv);
	p.rings[MRCD_CLIENT_CQ].capacity = cq_depth;
	p.rings[MRCD_CLIENT_CQ].elem_size = sizeof(struct mrc_shm_cqe);
	rc = mrc_shm_arena_layout(&p, &lay);
	if (rc < 0) {
		snprintf(err, errlen, "arena layout: %s", strerror(-rc));
		return rc;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	c->dp = w;
	c->id = id;
	c->cq_efd = -1;
	c->max_qps = cfg->per_client.max_qps;
	c->max_wrs = cfg->per_client.max_wrs;
	c->max_mrs = cfg->per_client.max_mrs && cfg->per_client.max_mrs < MRCD_CLIENT_MAX_MRS ?
		     cfg->per_client.max_mrs : MRCD_CLIENT_MAX_MRS;
	c->va_base = (uint64_t)id << MRCD_CLIENT_VA_SHIFT;
	c->qpns = calloc(c->max_qps, sizeof(*c->qpns));
	c->wrs = calloc(c->max_wrs, sizeof(*c->wrs));
	c->wr_free = calloc(c->max_wrs, sizeof(*c->wr_free));
	c->ovf_cap = c->max_wrs + rq_depth + c->max_qps + 64; /* + a QP-error entry per QP */
	c->ovf = calloc(c->ovf_cap, sizeof(*c->ovf));
	if (!c->qpns || !c->wrs || !c->wr_free || !c->ovf) {
		snprintf(err, errlen, "out of memory");
		rc = -ENOMEM;
		goto fail;
	}
	for (uint32_t i = 0; i < c->max_wrs; i++)
		c->wr_free[c->n_wr_free++] = c->max_wrs - 1 - i;

	fd = memfd_create("mrcd-client", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0 || ftruncate(fd, (off_t)lay.size) < 0) {
		rc = -errno;
		snprintf(err, errlen, "arena memfd of %llu bytes: %s", (unsigned long long)lay.size, strerror(errno));
		goto fail;
	}
	c->base = mmap(NULL, lay.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (c->base == MAP_FAILED) {
		c->base = NULL;
		rc = -errno;
		snprintf(err, errlen, "arena mmap: %s", strerror(errno));
		goto fail;
	}
	c->size = lay.size;
	rc = mrc_shm_arena_init(c->base, c->size, &p);
	if (rc == 0)
		rc = mrc_shm_arena_attach(c->base, c->size, &c->view);
	for (unsigned i = 0; rc == 0 && i < MRCD_CLIENT_RINGS; i++)
		rc = mrc_shm_view_ring_handle(&c->view, i, &c->ring[i]);
	if (rc < 0) {
		snprintf(err, errlen, "arena init: %s", strerror(-rc));
		goto fail;
	}
	/* the client may not resize what the daemon maps (SIGBUS otherwise) */
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
		rc = -errno;
		snprintf(err, errlen, "arena seals: %s", strerror(errno));
		goto fail;
	}
	c->cq_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (c->cq_efd < 0) {
		rc = -errno;
		snprintf(err, errlen, "eventfd: %s", strerror(errno));
		goto fail;
	}
	*out = c;
	*arena_fd = fd;
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	mrcd_client_free(c);
	return rc;
}

void mrcd_client_free(struct mrcd_client *c)
{
	if (!c)
		return;
	if (c->base)
		munmap(c->base, c->size);
	if (c->cq_efd >= 0)
		close(c->cq_efd);
	free(c->qpns);
	free(c->wrs);
	free(c->wr_free);
	free(c->ovf);
	free(c);
}

/* ---- completions --------------------------------------------------------------- */

static void cq_wake(struct mrcd_client *c)
{
	uint64_t one = 1;

	if (mrc_shm_ring_need_wake(c->ring[MRCD_CLIENT_CQ].r)) {
		c->c.cq_wakes++;
		if (write(c->cq_efd, &one, sizeof(one)) < 0) {
			/* counter saturated: the client is awake anyway */
		}
	}
}

/* Completions leave in order: the overflow first, then the new one. */
static void cq_flush(struct mrcd_client *c)
{
	unsigned moved = 0;

	while (c->ovf_n) {
		if (mrc_shm_rh_enqueue_burst(&c->ring[MRCD_CLIENT_CQ], &c->ovf[c->ovf_head], 1) != 1)
			break;
		c->ovf_head = (c->ovf_head + 1) % c->ovf_cap;
		c->ovf_n--;
		moved++;
	}
	if (moved)
		cq_wake(c);
}

static void cq_push(struct mrcd_client *c, const struct mrc_shm_cqe *e)
{
	c->c.cqe++;
	if (c->ovf_n == 0 && mrc_shm_rh_enqueue_burst(&c->ring[MRCD_CLIENT_CQ], e, 1) == 1) {
		cq_wake(c);
		return;
	}
	c->c.cq_overflow++;
	if (c->ovf_n < c->ovf_cap) {
		c->ovf[(c->ovf_head + c->ovf_n) % c->ovf_cap] = *e;
		c->ovf_n++;
	}
	/* else: more completions than work requests and receives it may have
	 * outstanding: impossible by construction (ovf_cap), dropped if not */
}

static uint8_t status_of(uint8_t s)
{
	switch (s) {
	case MRCP_WC_SUCCESS: return MRC_SHM_WC_SUCCESS;
	case MRCP_WC_FLUSH_ERR: return MRC_SHM_WC_FLUSH_ERR;
	case MRCP_WC_RETRY_EXC_ERR: return MRC_SHM_WC_RETRY_EXC_ERR;
	case MRCP_WC_REM_ACCESS_ERR: return MRC_SHM_WC_REM_ACCESS_ERR;
	case MRCP_WC_REM_INV_REQ_ERR: return MRC_SHM_WC_REM_INV_REQ_ERR;
	case MRCP_WC_REM_OP_ERR: return MRC_SHM_WC_REM_OP_ERR;
	default: return MRC_SHM_WC_GENERAL_ERR;
	}
}

/* The client ABI numbers causes as lib/core does (D70). */
#define CAUSE_SAME(N) _Static_assert((int)MRC_SHM_QP_CAUSE_##N == (int)MRCP_QP_ERR_##N, "cause " #N);
CAUSE_SAME(NONE) CAUSE_SAME(RETRY_EXCEEDED) CAUSE_SAME(REMOTE_INVALID) CAUSE_SAME(REMOTE_ACCESS)
CAUSE_SAME(REMOTE_OP) CAUSE_SAME(NO_RECV) CAUSE_SAME(WIMM_OVERFLOW) CAUSE_SAME(BAD_REQUEST)
CAUSE_SAME(BAD_ACCESS)
_Static_assert(MRCP_QP_ERR_COUNT == 9, "a new cause needs its MRC_SHM_QP_CAUSE_ number");
#undef CAUSE_SAME

static void on_wc(struct mrcd_dp *dp, void *ctx, const struct mrcp_wc *wc)
{
	struct mrcd_client *c = ctx;
	struct mrc_shm_cqe e;

	(void)dp;
	memset(&e, 0, sizeof(e));
	e.qp = wc->qpn;
	e.byte_len = wc->byte_len;
	e.msn = wc->msn;
	e.status = status_of(wc->status);
	if (wc->opcode == MRCP_WC_RECV_IMM) {
		e.wr_id = wc->wr_id;   /* receives carry the client's own wr_id */
		e.opcode = MRC_SHM_WC_RECV_WRITE_IMM;
		e.imm = wc->imm;
		cq_push(c, &e);
		return;
	}
	if (wc->wr_id >= c->max_wrs || !c->wrs[wc->wr_id].used)
		return;
	struct mrcd_client_wr *w = &c->wrs[wc->wr_id];

	e.wr_id = w->wr_id;
	e.opcode = MRC_SHM_WC_WRITE;
	w->used = false;
	c->wr_free[c->n_wr_free++] = (uint32_t)wc->wr_id;
	if (w->signaled || e.status != MRC_SHM_WC_SUCCESS)
		cq_push(c, &e);
}

/* D70: a QP that enters ERROR says so in the completion ring, after the
 * completions its work was flushed with (drained first, in the same
 * worker pass): a receiver with nothing outstanding learns of it too. */
static void on_event(struct mrcd_dp *dp, void *ctx, const struct mrcp_event *ev)
{
	struct mrcd_client *c = ctx;
	struct mrc_shm_cqe e;

	(void)dp;
	if (ev->type != MRCP_EVENT_QP_ERROR)
		return;
	memset(&e, 0, sizeof(e));
	e.qp = ev->qpn;
	e.opcode = MRC_SHM_WC_QP_ERROR;
	e.status = status_of(ev->qp_error.status);
	e.cause = ev->qp_error.cause;
	e.msn = ev->qp_error.msn;
	e.imm = ev->qp_error.imm;
	e.byte_len = ev->qp_error.byte_len;
	c->c.qp_errors++;
	cq_push(c, &e);
}

/* ---- work requests --------------------------------------------------------------- */

bool mrcd_client_owns_qp(const struct mrcd_client *c, uint32_t qpn)
{
	for (unsigned i = 0; i < c->n_qps; i++)
		if (c->qpns[i] == qpn)
			return true;
	return false;
}

static void wr_fail(struct mrcd_client *c, const struct mrc_shm_wr *w, uint8_t status)
{
	struct mrc_shm_cqe e;

	memset(&e, 0, sizeof(e));
	e.wr_id = w->wr_id;
	e.qp = w->qp;
	e.opcode = MRC_SHM_WC_WRITE;
	e.status = status;
	c->c.wr_bad++;
	cq_push(c, &e);
}

/* Validate and post one request. @return 0 posted or answered with an error
 * completion, -EAGAIN the engine's send queue is full (retry later). */
static int post_one(struct mrcd_dp *dp, struct mrcd_client *c, const struct mrc_shm_wr *w, uint64_t now)
{
	struct mrcp_sge sge[MRC_SHM_MAX_SGE];
	struct mrcp_send_wr wr;
	uint32_t slot;
	int rc;

	struct mrcd_wr_owner own = { c->qpns, c->n_qps, c->chk, MRCD_CLIENT_MAX_MRS, c->va_base };
	uint8_t status;

	if (mrcd_wr_check(&own, w, sge, &status) < 0) {
		wr_fail(c, w, status);
		return 0;
	}
	if (c->n_wr_free == 0)
		return -EAGAIN;         /* limits.per_client.max_wrs outstanding */
	slot = c->wr_free[c->n_wr_free - 1];
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = slot;
	wr.opcode = w->opcode == MRC_SHM_OP_WRITE_IMM ? MRCP_WR_WRITE_IMM : MRCP_WR_WRITE;
	wr.flags = MRCP_WR_SIGNALED; /* always: the slot is freed on completion */
	wr.imm = w->imm;
	wr.sg_list = sge;
	wr.num_sge = w->num_sge;
	wr.remote_addr = w->remote_addr;
	wr.rkey = w->rkey;
	rc = mrcp_qp_post_send(dp->eng, w->qp, &wr, now);
	if (rc == -EAGAIN)
		return -EAGAIN;
	if (rc < 0) {
		wr_fail(c, w, rc == -EFAULT ? MRC_SHM_WC_LOC_PROT_ERR :
			      rc == -EPERM ? MRC_SHM_WC_FLUSH_ERR : MRC_SHM_WC_GENERAL_ERR);
		return 0;
	}
	c->n_wr_free--;
	c->wrs[slot] = (struct mrcd_client_wr){ w->wr_id, w->qp, (w->flags & MRC_SHM_WR_SIGNALED) != 0, true };
	c->c.wr_posted++;
	return 0;
}

static int post_recv_one(struct mrcd_dp *dp, struct mrcd_client *c, const struct mrc_shm_recv *r)
{
	int rc;

	if (!mrcd_client_owns_qp(c, r->qp)) {
		c->c.recv_bad++;
		return 0;
	}
	rc = mrcp_qp_post_recv(dp->eng, r->qp, r->wr_id);
	if (rc == -EAGAIN)
		return -EAGAIN;
	if (rc < 0) {
		struct mrc_shm_cqe e;

		memset(&e, 0, sizeof(e));
		e.wr_id = r->wr_id;
		e.qp = r->qp;
		e.opcode = MRC_SHM_WC_RECV_WRITE_IMM;
		e.status = MRC_SHM_WC_FLUSH_ERR;
		c->c.recv_bad++;
		cq_push(c, &e);
		return 0;
	}
	c->c.recv_posted++;
	return 0;
}

/* Requests are taken from the rings into a small per-session batch and
 * posted in order; what the engine cannot take yet (-EAGAIN: a full send or
 * receive queue, or max_wrs outstanding) stays at the head of the batch and
 * is retried first next time, so nothing is lost or reordered. */
static bool client_poll_rq(struct mrcd_dp *dp, struct mrcd_client *c)
{
	bool work = false;

	for (;;) {
		if (c->rq_pos == c->rq_n) {
			c->rq_pos = 0;
			c->rq_n = mrc_shm_rh_dequeue_burst(&c->ring[MRCD_CLIENT_RQ], c->rq_batch,
							   MRCD_CLIENT_BATCH);
			if (c->rq_n == 0)
				break;
		}
		if (post_recv_one(dp, c, &c->rq_batch[c->rq_pos]) == -EAGAIN)
			break;
		c->rq_pos++;
		work = true;
	}
	return work;
}

static bool client_poll(struct mrcd_dp *dp, struct mrcd_client *c, uint64_t now)
{
	bool work;

	cq_flush(c);
	work = client_poll_rq(dp, c);
	for (unsigned budget = 64; budget; budget--) {
		if (c->sq_pos == c->sq_n) {
			c->sq_pos = 0;
			c->sq_n = mrc_shm_rh_dequeue_burst(&c->ring[MRCD_CLIENT_SQ], c->sq_batch,
							   MRCD_CLIENT_BATCH);
			if (c->sq_n == 0)
				break;
		}
		if (post_one(dp, c, &c->sq_batch[c->sq_pos], now) == -EAGAIN)
			break;
		c->sq_pos++;
		work = true;
	}
	return work;
}

static bool clients_hook(struct mrcd_dp *dp, void *arg, uint64_t now)
{
	struct client_list *l = arg;
	bool work = false;

	for (struct mrcd_client *c = l->head; c; c = c->next)
		work |= client_poll(dp, c, now);
	return work;
}

/* Just before received packets go to the engine: take the receives clients
 * posted, so a WriteImm never misses a receive that was posted before it
 * arrived (a posted receive is visible to the "NIC" at once, as in verbs). */
static void clients_pre_rx(struct mrcd_dp *dp, void *arg)
{
	struct client_list *l = arg;

	for (struct mrcd_client *c = l->head; c; c = c->next)
		client_poll_rq(dp, c);
}

/* Before the worker sleeps: every session's send and receive rings must be
 * empty with their wake flags set, so a client that posts wakes us. */
static bool clients_pre_sleep(struct mrcd_dp *dp, void *arg)
{
	struct client_list *l = arg;

	(void)dp;
	for (struct mrcd_client *c = l->head; c; c = c->next) {
		if (c->sq_pos != c->sq_n || c->rq_pos != c->rq_n || c->ovf_n)
			return false;
		if (!mrc_shm_ring_prepare_sleep(c->ring[MRCD_CLIENT_SQ].r) ||
		    !mrc_shm_ring_prepare_sleep(c->ring[MRCD_CLIENT_RQ].r))
			return false;
	}
	return true;
}

static void clients_post_sleep(struct mrcd_dp *dp, void *arg)
{
	struct client_list *l = arg;

	(void)dp;
	for (struct mrcd_client *c = l->head; c; c = c->next) {
		mrc_shm_ring_end_sleep(c->ring[MRCD_CLIENT_SQ].r);
		mrc_shm_ring_end_sleep(c->ring[MRCD_CLIENT_RQ].r);
	}
}

/* ---- sessions on the worker -------------------------------------------------------- */

static struct client_list *list_of(struct mrcd_dp *dp)
{
	if (!dp->clients) {
		struct client_list *l = calloc(1, sizeof(*l));

		if (!l)
			return NULL;
		if (mrcd_dp_add_hook(dp, clients_hook, l) < 0) {
			free(l);
			return NULL;
		}
		dp->pre_rx = clients_pre_rx;
		dp->pre_sleep = clients_pre_sleep;
		dp->post_sleep = clients_post_sleep;
		dp->sleep_arg = l;
		dp->clients = l;
	}
	return dp->clients;
}

unsigned mrcd__client_count(const struct mrcd_dp *w)
{
	const struct client_list *l = w->clients;
	unsigned n = 0;

	for (const struct mrcd_client *c = l ? l->head : NULL; c; c = c->next)
		n++;
	return n;
}

void mrcd__clients_free(struct mrcd_dp *w)
{
	free(w->clients);
	w->clients = NULL;
}

static int client_attach(struct mrcd_dp *dp, struct mrcd_client *c)
{
	struct client_list *l = list_of(dp);
	int rc;

	if (!l)
		return -ENOMEM;
	/* D67: a session is one protection domain: its QPs reach its regions
	 * only, and nobody else's QPs reach them */
	rc = mrcp_pd_alloc(dp->eng, &c->pd);
	if (rc < 0)
		return rc;
	c->next = l->head;
	l->head = c;
	return 0;
}

static void client_detach(struct mrcd_dp *dp, struct mrcd_client *c, uint64_t now)
{
	struct client_list *l = dp->clients;

	while (c->n_qps)
		mrcd_client_qp_destroy(dp, c, c->qpns[0], now);
	mrcd_dp_tx_quiesce(dp); /* zero-copy frames must not outlive the arena */
	for (unsigned i = 0; i < MRCD_CLIENT_MAX_MRS; i++)
		if (c->mrs[i].used) {
			mrcp_mr_dereg(dp->eng, c->mrs[i].lkey);
			c->mrs[i].used = false;
			c->chk[i].used = false;
		}
	c->n_mrs = 0;
	mrcp_pd_free(dp->eng, c->pd); /* empty now */
	if (!l)
		return;
	for (struct mrcd_client **pp = &l->head; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
}

int mrcd_client_reg_mr(struct mrcd_dp *dp, struct mrcd_client *c, uint64_t ofs, uint64_t len,
		       uint32_t access, uint32_t *lkey, uint32_t *rkey, uint32_t *region, uint64_t *va)
{
	struct mrc_shm_region d;
	unsigned i;
	int rc;

	if (!mrc_shm_view_heap_ptr(&c->view, ofs, len))
		return -EINVAL;
	if (c->n_mrs >= c->max_mrs)
		return -ENOSPC; /* limits.per_client.max_mrs */
	for (i = 0; i < MRCD_CLIENT_MAX_MRS; i++)
		if (!c->mrs[i].used)
			break;
	if (i == MRCD_CLIENT_MAX_MRS)
		return -ENOSPC;
	rc = mrcp_mr_reg_pd(dp->eng, c->pd, c->va_base + ofs, len, c->base + ofs,
			    (access & 1 ? MRCP_ACCESS_LOCAL_WRITE : 0) | (access & 2 ? MRCP_ACCESS_REMOTE_WRITE : 0),
			    lkey, rkey);
	if (rc < 0)
		return rc;
	c->mrs[i] = (struct mrcd_client_mr){ true, *lkey, *rkey, ofs, len, access };
	c->n_mrs++;
	c->chk[i] = (struct mrcd_wr_mr){ true, *lkey, ofs, len };
	memset(&d, 0, sizeof(d));
	d.ofs = ofs;
	d.len = len;
	d.id = i;
	d.access = access;
	d.lkey = *lkey;
	d.rkey = *rkey;
	mrc_shm_region_clear(&c->view, i);
	mrc_shm_region_publish(&c->view, i, &d);
	*region = i;
	*va = c->va_base + ofs;
	return 0;
}

int mrcd_client_dereg_mr(struct mrcd_dp *dp, struct mrcd_client *c, uint32_t lkey)
{
	for (unsigned i = 0; i < MRCD_CLIENT_MAX_MRS; i++)
		if (c->mrs[i].used && c->mrs[i].lkey == lkey) {
			int rc = mrcp_mr_dereg(dp->eng, lkey);

			if (rc < 0)
				return rc;
			c->mrs[i].used = false;
			c->chk[i].used = false;
			c->n_mrs--;
			mrc_shm_region_clear(&c->view, i);
			return 0;
		}
	return -ENOENT;
}

int mrcd_client_qp_create(struct mrcd_dp *dp, struct mrcd_client *c, uint32_t sq_depth,
			  uint32_t rq_depth, uint64_t user_ctx, uint32_t *qpn)
{
	struct mrcp_qp_attr a;
	int rc;

	if (c->n_qps >= c->max_qps)
		return -ENOSPC;
	memset(&a, 0, sizeof(a));
	a.sq_depth = sq_depth;
	a.rq_depth = rq_depth;
	a.user_ctx = user_ctx;
	a.pd = c->pd;
	rc = mrcp_qp_create(dp->eng, &a, qpn);
	if (rc < 0)
		return rc;
	rc = mrcd_dp_own_qp(dp, *qpn, on_wc, on_event, c);
	if (rc < 0) {
		mrcp_qp_destroy(dp->eng, *qpn, mrcd_dp_now_ns());
		return rc;
	}
	c->qpns[c->n_qps++] = *qpn;
	return 0;
}

int mrcd_client_qp_destroy(struct mrcd_dp *dp, struct mrcd_client *c, uint32_t qpn, uint64_t now)
{
	for (unsigned i = 0; i < c->n_qps; i++)
		if (c->qpns[i] == qpn) {
			/* flushed sends come back through on_wc (still owned):
			 * the client sees FLUSH_ERR for each, and the slots free */
			mrcd__qp_closing(dp, qpn);
			mrcp_qp_destroy(dp->eng, qpn, now);
			mrcd_dp_drain_cq(dp); /* now, while the QP still has its owner */
			mrcd_dp_disown_qp(dp, qpn);
			c->qpns[i] = c->qpns[--c->n_qps];
			return 0;
		}
	return -ENOENT;
}

/* ---- start and stop (control thread) ---------------------------------------------- */

struct start_call {
	struct mrcd_client *c;
	int rc;
};

static void start_fn(struct mrcd_dp *dp, void *arg)
{
	struct start_call *sc = arg;

	sc->rc = client_attach(dp, sc->c);
}

int mrcd_client_start(struct mrcd_client *c, unsigned timeout_ms)
{
	struct start_call sc = { c, 0 };
	int rc = mrcd_dp_call(c->dp, start_fn, &sc, timeout_ms);

	return rc < 0 ? rc : sc.rc;
}

static void stop_fn(struct mrcd_dp *dp, void *arg)
{
	client_detach(dp, arg, mrcd_dp_now_ns());
}

void mrcd_client_stop(struct mrcd_client *c, unsigned warn_ms)
{
	/* the arena stays mapped until the worker has let go of it */
	while (mrcd_dp_call(c->dp, stop_fn, c, warn_ms) == -ETIMEDOUT)
		;
	mrcd_client_free(c);
}

void mrcd_client_info(const struct mrcd_client *c, struct mrcd_client_info *out)
{
	out->id = c->id;
	out->arena_bytes = c->size;
	out->va_base = c->va_base;
	out->heap_ofs = c->view.layout.heap_ofs;
	out->heap_len = c->view.layout.heap_len;
	out->cq_fd = c->cq_efd;
	out->doorbell_fd = c->dp->doorbell;
	out->n_qps = c->n_qps;
	out->max_qps = c->max_qps;
	out->n_mrs = c->n_mrs;
	out->max_mrs = c->max_mrs;
}

struct mrcd_dp *mrcd_client_worker(const struct mrcd_client *c)
{
	return c->dp;
}
