/* dp_client.h - the daemon side of libmrc-client sessions (docs/control.md,
 * "Client sessions"): each session owns a shared arena (lib/shm) with a send
 * ring, a receive-post ring and a completion ring, its registered regions and
 * its QPs. The worker drains the rings every iteration, validates every work
 * request against the session's own regions and QPs, posts them to the
 * engine, and turns the engine's completions into completion-ring entries.
 * One misbehaving session gets error completions; nobody else notices.
 *
 * Threads: mrcd_client_create / mrcd_client_free run on the control thread
 * (mapping, fds); everything else runs on the worker (mrcd_dp_call), which
 * owns the session once it is added.
 */
#ifndef MRCD_DP_CLIENT_H
#define MRCD_DP_CLIENT_H

#include <stdint.h>

#include "dp.h"
#include "dp_wr.h"
#include "mrc_shm.h"

#define MRCD_CLIENT_RINGS 3          /* sq, rq, cq */
#define MRCD_CLIENT_SQ 0
#define MRCD_CLIENT_RQ 1
#define MRCD_CLIENT_CQ 2
#define MRCD_CLIENT_MAX_MRS 256      /* region-table entries per session */
#define MRCD_CLIENT_VA_SHIFT 40      /* va_base = session id << 40 */
#define MRCD_CLIENT_BATCH 16

/* Per-session counters: X(name, description). */
#define MRCD_CLIENT_COUNTERS(X)                                                \
	X(wr_posted, "work requests posted to the engine")                     \
	X(wr_bad, "work requests refused (error completion)")                  \
	X(recv_posted, "receive slots posted")                                 \
	X(recv_bad, "receive posts refused")                                   \
	X(cqe, "completions written to the completion ring")                   \
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
	struct mrcd_dp *dp;        /* the worker that serves it (D63); set by the control side */
	uint32_t id;
	struct mrcd_client *next;  /* the worker's list */
	/* the arena */
	uint8_t *base;
	uint64_t size;
	struct mrc_shm_view view;
	struct mrc_shm_rh ring[MRCD_CLIENT_RINGS];
	int cq_efd;                /* the daemon writes it: completions for a sleeper */
	uint64_t va_base;
	/* limits */
	uint32_t max_qps, max_wrs;
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

/* ---- control thread ---- */

/** Create a session's arena (memfd, sealed), its eventfd, and the state.
 *  @param arena_fd  out: the memfd to send the client (caller closes it).
 *  @return 0 or -errno with @err. */
int mrcd_client_create(const struct mrcd_dp_config *cfg, uint32_t id, uint64_t heap_bytes,
		       uint32_t sq_depth, uint32_t rq_depth, uint32_t cq_depth,
		       struct mrcd_client **out, int *arena_fd, char *err, size_t errlen);
/** Unmap and free (after mrcd_client_detach ran on the worker). */
void mrcd_client_free(struct mrcd_client *c);

/* ---- worker (mrcd_dp_call) ---- */

/** Add @c to the worker's sessions (installs the hook on first use). */
int mrcd_client_attach(struct mrcd_dp *dp, struct mrcd_client *c);
/** Destroy the session's QPs (their peers see the error), deregister its
 *  regions, take it off the list. */
void mrcd_client_detach(struct mrcd_dp *dp, struct mrcd_client *c, uint64_t now);

int mrcd_client_reg_mr(struct mrcd_dp *dp, struct mrcd_client *c, uint64_t ofs, uint64_t len,
		       uint32_t access, uint32_t *lkey, uint32_t *rkey, uint32_t *region, uint64_t *va);
int mrcd_client_dereg_mr(struct mrcd_dp *dp, struct mrcd_client *c, uint32_t lkey);
int mrcd_client_qp_create(struct mrcd_dp *dp, struct mrcd_client *c, uint32_t sq_depth,
			  uint32_t rq_depth, uint64_t user_ctx, uint32_t *qpn);
int mrcd_client_qp_destroy(struct mrcd_dp *dp, struct mrcd_client *c, uint32_t qpn, uint64_t now);
/** @return true if @qpn belongs to @c. */
bool mrcd_client_owns_qp(const struct mrcd_client *c, uint32_t qpn);

/** Sessions for mrcctl (worker): the first session, then ->next. */
struct mrcd_client *mrcd_client_first(struct mrcd_dp *dp);

#endif
