/* dp_client.h - the daemon side of libmrc-client sessions (docs/control.md,
 * "Client sessions"): each session owns a shared arena (lib/shm) with a send
 * ring, a receive-post ring and a completion ring, its registered regions and
 * its QPs. The worker drains the rings every iteration, validates every work
 * request against the session's own regions and QPs, posts them to the
 * engine, and turns the engine's completions into completion-ring entries.
 * One misbehaving session gets error completions; nobody else notices.
 *
 * Threads: create, start, stop and free run on the control thread (mapping,
 * fds; start and stop reach the worker through mrcd_dp_call); the session
 * commands run on the worker, which owns the session once it is started.
 */
#ifndef MRCD_DP_CLIENT_H
#define MRCD_DP_CLIENT_H

#include <stdint.h>

#include "dp.h"

#define MRCD_CLIENT_RINGS 3          /* sq, rq, cq */
#define MRCD_CLIENT_SQ 0
#define MRCD_CLIENT_RQ 1
#define MRCD_CLIENT_CQ 2
#define MRCD_CLIENT_MAX_MRS 256      /* region-table entries per session */
#define MRCD_CLIENT_VA_SHIFT 40      /* va_base = session id << 40 */
#define MRCD_CLIENT_BATCH 16

/** A client session (opaque). */
struct mrcd_client;

/** What the attach reply hands the client (docs/control.md). */
struct mrcd_client_info {
	uint32_t id;
	uint64_t arena_bytes;      /**< the shared arena's size */
	uint64_t va_base;          /**< the session's remote address space starts here */
	uint64_t heap_ofs, heap_len; /**< the arena's heap (registered memory lives there) */
	int cq_fd;                 /**< eventfd the daemon writes for a sleeping client */
	int doorbell_fd;           /**< eventfd the client writes: the worker's doorbell */
	uint32_t n_qps, max_qps;   /**< QPs held, and limits.per_client.max_qps */
	uint32_t n_mrs, max_mrs;   /**< regions held, and limits.per_client.max_mrs */
};

/* ---- control thread ---- */

/** Create a session's arena (memfd, sealed), its eventfd, and the state, to
 *  be served by worker @w (D63: all of a session's QPs and regions live in
 *  that worker's engine). Limits: @w's per_client configuration.
 *  @param arena_fd  out: the memfd to send the client (caller closes it).
 *  @return 0 or -errno with @err. */
int mrcd_client_create(struct mrcd_dp *w, uint32_t id, uint64_t heap_bytes,
		       uint32_t sq_depth, uint32_t rq_depth, uint32_t cq_depth,
		       struct mrcd_client **out, int *arena_fd, char *err, size_t errlen);
/** Hand @c to its worker, which serves it from then on (mrcd_dp_call), in
 *  a protection domain of its own.
 *  @return 0; -ETIMEDOUT (the worker did not take it: @c is not served),
 *  -ENOMEM, -ENOSPC (no protection domain left on the worker: each session
 *  is one, D67). On failure, free @c with mrcd_client_free(). */
int mrcd_client_start(struct mrcd_client *c, unsigned timeout_ms);
/** End a started session: on its worker, destroy its QPs (their peers see
 *  the error), deregister its regions and take it off the list, waiting as
 *  long as that takes (@warn_ms: log a warning each time it waits this
 *  long); then free it. */
void mrcd_client_stop(struct mrcd_client *c, unsigned warn_ms);
/** Unmap and free a session that was never started (or NULL). */
void mrcd_client_free(struct mrcd_client *c);
/** What the attach reply carries. */
void mrcd_client_info(const struct mrcd_client *c, struct mrcd_client_info *out);
/** The worker that serves @c. */
struct mrcd_dp *mrcd_client_worker(const struct mrcd_client *c);

/* ---- worker context (on mrcd_client_worker(c)) ---- */

int mrcd_client_reg_mr(struct mrcd_dp *dp, struct mrcd_client *c, uint64_t ofs, uint64_t len,
		       uint32_t access, uint32_t *lkey, uint32_t *rkey, uint32_t *region, uint64_t *va);
int mrcd_client_dereg_mr(struct mrcd_dp *dp, struct mrcd_client *c, uint32_t lkey);
int mrcd_client_qp_create(struct mrcd_dp *dp, struct mrcd_client *c, uint32_t sq_depth,
			  uint32_t rq_depth, uint64_t user_ctx, uint32_t *qpn);
int mrcd_client_qp_destroy(struct mrcd_dp *dp, struct mrcd_client *c, uint32_t qpn, uint64_t now);
/** @return true if @qpn belongs to @c. */
bool mrcd_client_owns_qp(const struct mrcd_client *c, uint32_t qpn);


#endif
