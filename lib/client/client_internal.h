/* client_internal.h - what the files of libmrc-client share and the unit test
 * reaches: the context, the JSON reply parser, the heap allocator, the
 * lock-free key tables and the control channel. Not installed. */
#ifndef MRC_CLIENT_INTERNAL_H
#define MRC_CLIENT_INTERNAL_H

#include "mrc_client.h"
#include "mrc_shm.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MRC__HIDDEN __attribute__((visibility("hidden")))

/* ---- JSON (json.c) --------------------------------------------------------------- */

#define MRC__JSON_MAX_NODES 512u   /**< values in one reply, at most */
#define MRC__JSON_MAX_DEPTH 16u    /**< nesting of objects and arrays */
#define MRC__REASON_MAX 160u       /**< bytes of a reason, NUL included */

enum mrc__jtype { MRC__J_NULL = 1, MRC__J_BOOL, MRC__J_INT, MRC__J_STR, MRC__J_OBJ, MRC__J_ARR };

/** One value. Strings (values and member keys) point into the document's
 *  string buffer, NUL-terminated, escapes decoded. */
struct mrc__jnode {
	uint8_t type;         /**< enum mrc__jtype */
	bool neg;             /**< MRC__J_INT: the value is negative */
	bool b;               /**< MRC__J_BOOL */
	int32_t next;         /**< next sibling (member or element), -1 = none */
	int32_t first;        /**< MRC__J_OBJ / MRC__J_ARR: first child, -1 = none */
	uint64_t mag;         /**< MRC__J_INT: magnitude */
	const char *key;      /**< member key when the parent is an object, else NULL */
	const char *str;      /**< MRC__J_STR */
	size_t str_len;       /**< bytes of str */
};

struct mrc__jdoc {
	struct mrc__jnode nodes[MRC__JSON_MAX_NODES];
	unsigned n;           /**< nodes used; node 0 is the root */
	char *sbuf;           /**< decoded strings; as large as the input + 1 */
	size_t sbuf_cap, sbuf_used;
	char err[MRC__REASON_MAX]; /**< why a parse failed */
};

/** Parse @len bytes of @s (one JSON text, whitespace around it allowed) into
 *  @d, whose sbuf must hold at least len + 1 bytes. Strict: duplicate keys,
 *  reals, raw control characters, \u0000, lone surrogates, nesting deeper
 *  than MRC__JSON_MAX_DEPTH, more than MRC__JSON_MAX_NODES values and
 *  trailing bytes are refused. @return 0, or -EIO with d->err set. */
MRC__HIDDEN int mrc__json_parse(struct mrc__jdoc *d, const char *s, size_t len);
/** Member @key of object node @obj. @return its node index, or -1. */
MRC__HIDDEN int mrc__json_get(const struct mrc__jdoc *d, int obj, const char *key);
/** Member @key as an unsigned integer in [0, max]. @return 0, -ENOENT if
 *  absent, -EIO (with d->err) if not an integer or out of range. */
MRC__HIDDEN int mrc__json_get_u64(struct mrc__jdoc *d, int obj, const char *key, uint64_t max,
				  uint64_t *out);
/** Member @key as a string. @return 0, -ENOENT if absent, -EIO if not a string. */
MRC__HIDDEN int mrc__json_get_str(struct mrc__jdoc *d, int obj, const char *key, const char **out,
				  size_t *len);

/* ---- heap allocator (heap.c) -------------------------------------------------------- */

/** A run of heap bytes: [ofs, ofs + len), arena offsets. */
struct mrc__extent {
	uint64_t ofs, len;    /**< bytes */
	struct mrc__extent *next;
};

/** First-fit allocator over [base_ofs, base_ofs + len) with coalescing. It
 *  lives in process memory, never in the arena. Not thread-safe: the
 *  context serialises it with its control lock. */
struct mrc__heap {
	uint64_t base_ofs, len;    /**< the managed range, bytes */
	uint64_t free_bytes;       /**< bytes on the free list */
	struct mrc__extent *free;  /**< free extents, sorted by ofs, never adjacent */
	struct mrc__extent *used;  /**< allocated blocks (ofs = the offset returned) */
};

MRC__HIDDEN int mrc__heap_init(struct mrc__heap *h, uint64_t base_ofs, uint64_t len);
MRC__HIDDEN void mrc__heap_fini(struct mrc__heap *h);
/** Allocate @len bytes whose address (@addr_base + offset) is a multiple of
 *  @align (a power of two). @return 0 with *@ofs, -ENOMEM (no fitting
 *  extent, or no memory for the bookkeeping). */
MRC__HIDDEN int mrc__heap_alloc(struct mrc__heap *h, uint64_t len, uint64_t align, uintptr_t addr_base,
				uint64_t *ofs);
/** @return 0, -ENOENT if @ofs is not an allocated block. */
MRC__HIDDEN int mrc__heap_free(struct mrc__heap *h, uint64_t ofs);
/** Free extents on the list (for tests). */
MRC__HIDDEN unsigned mrc__heap_nr_free(const struct mrc__heap *h);

/* ---- key tables (client.c) ------------------------------------------------------------ */

/* A fixed open-addressing set of 32-bit keys that the control functions
 * change under the control lock while the data path looks keys up without
 * it. A slot holds key + 1, so any 32-bit key fits: 0 marks an empty slot
 * and MRC__KEY_TOMB a removed one. */
#define MRC__KEYTAB_SLOTS 8192u
#define MRC__KEYTAB_MAX 4096u      /**< live keys, at most (half the slots) */
#define MRC__KEY_TOMB UINT64_MAX

struct mrc__keytab {
	_Atomic uint64_t slot[MRC__KEYTAB_SLOTS]; /**< key + 1, 0 or MRC__KEY_TOMB */
	_Atomic uint64_t a[MRC__KEYTAB_SLOTS]; /**< regions: arena offset */
	_Atomic uint64_t b[MRC__KEYTAB_SLOTS]; /**< regions: length, bytes */
	unsigned live;                         /**< keys present; control lock */
};

/* ---- the context ------------------------------------------------------------------------ */

#define MRC__LINE_MAX 65536u       /**< longest reply line, '\n' included */

struct mrc_ctx {
	/* Fixed after mrc_open: read by every function without the lock. */
	int sock;                 /**< control socket (non-blocking) */
	int cq_fd;                /**< completion eventfd (daemon writes) */
	int db_fd;                /**< doorbell eventfd (client writes) */
	uint8_t *base;            /**< the arena mapping */
	uint64_t map_size;        /**< bytes mapped */
	struct mrc_shm_view view;
	struct mrc_shm_rh sq, rq, cq; /**< rings 0/1/2 with the geometry checked at attach */
	uint64_t heap_ofs, heap_len;  /**< the heap, arena offsets/bytes */
	uint64_t va_base;         /**< the VA of arena offset 0 for peers */
	uint32_t client_id;       /**< the daemon's session id */
	unsigned timeout_ms;      /**< control request timeout */

	/* The control lock: every "any thread" function holds it. */
	pthread_mutex_t lock;
	int64_t next_id;          /**< id of the next request */
	int64_t answered_id;      /**< highest id whose reply was read or skipped */
	char *rx;                 /**< receive buffer, MRC__LINE_MAX bytes */
	size_t rx_len;            /**< bytes in rx */
	bool rx_discard;          /**< drop bytes up to the next '\n' (oversized line) */
	int rx_fds[3];            /**< descriptors that came with the attach reply */
	unsigned rx_nfds;
	bool rx_fds_extra;        /**< more than 3 descriptors, or truncated */
	struct mrc__jdoc doc;     /**< the last reply, parsed */
	struct mrc__heap heap;
	struct mrc__keytab qps;   /**< this context's QPNs */
	struct mrc__keytab mrs;   /**< lkey -> {ofs, len} of this context's regions */

	_Atomic bool dead;        /**< the daemon closed the session or said shutdown */
	bool cq_armed;            /**< mrc_arm_cq set the wake flag; the CQ thread's */

	pthread_mutex_t err_lock; /**< guards err only (every thread may fail) */
	char err[MRC__REASON_MAX];
};

/* ---- control channel (ctl.c) ---------------------------------------------------------- */

/** Record the reason for the last failure and return @rc (a negative errno). */
MRC__HIDDEN int mrc__fail(struct mrc_ctx *ctx, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4), cold));
/** Send one request line (@cmd, @args: a JSON object text or NULL) and read
 *  its reply into ctx->doc. The caller holds ctx->lock.
 *  @return 0 with *@result (the "result" node); the daemon's negative errno
 *  (reason in the context's last error); -EIO for a malformed, oversized or
 *  mismatched reply; -ETIMEDOUT; -EPIPE if the daemon is gone. */
MRC__HIDDEN int mrc__ctl_request(struct mrc_ctx *ctx, const char *cmd, const char *args, int *result);
/** Same with an absolute CLOCK_MONOTONIC deadline (ns). */
MRC__HIDDEN int mrc__ctl_request_until(struct mrc_ctx *ctx, const char *cmd, const char *args,
				       uint64_t deadline_ns, int *result);
/** Read whatever the socket holds without blocking and handle complete event
 *  lines; replies stay buffered. The caller holds ctx->lock. @return 0, or
 *  -EPIPE if the daemon is gone. */
MRC__HIDDEN int mrc__ctl_pump(struct mrc_ctx *ctx);
MRC__HIDDEN uint64_t mrc__now_ns(void);
/** Close descriptors that arrived with replies and were not taken. */
MRC__HIDDEN void mrc__ctl_drop_fds(struct mrc_ctx *ctx);

/* ---- key tables -------------------------------------------------------------------------- */

MRC__HIDDEN int mrc__keytab_add(struct mrc__keytab *t, uint32_t key, uint64_t a, uint64_t b);
MRC__HIDDEN bool mrc__keytab_del(struct mrc__keytab *t, uint32_t key);
/** Lock-free lookup. @return true with *a, *b (either may be NULL). */
MRC__HIDDEN bool mrc__keytab_find(const struct mrc__keytab *t, uint32_t key, uint64_t *a, uint64_t *b);

#endif
