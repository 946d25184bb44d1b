/* client.c - libmrc-client's context: mrc_open (connect, attach, map and
 * validate the arena), mrc_close, errors, heap allocation, memory regions and
 * QPs through the control channel, and the key tables the data path checks.
 * The data path itself (rings, doorbell, completions) is in datapath.c. */
#define _GNU_SOURCE
#include "client_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define DEFAULT_SOCKET "/run/mrcd/mrcd.sock"
#define DEFAULT_HEAP (UINT64_C(64) << 20)
#define DEFAULT_SQ 4096u
#define DEFAULT_RQ 4096u
#define DEFAULT_CQ 8192u
#define DEFAULT_TIMEOUT_MS 10000u
#define MIN_HEAP UINT64_C(4096)
#define MAX_HEAP (UINT64_C(64) << 30)
#define MIN_DEPTH 64u
#define MAX_DEPTH (1u << 20)
#define MAX_QP_DEPTH 65536u
#define MAX_QPN 0xffffffu
#define ALLOC_GRAIN 64u     /* blocks never share a cache line */

/* ---- key tables ------------------------------------------------------------------------ */

static unsigned key_hash(uint32_t key)
{
	return (unsigned)(((uint64_t)key * UINT64_C(0x9e3779b97f4a7c15)) >> 51) & (MRC__KEYTAB_SLOTS - 1);
}

int mrc__keytab_add(struct mrc__keytab *t, uint32_t key, uint64_t a, uint64_t b)
{
	uint64_t want = (uint64_t)key + 1;
	unsigned i = key_hash(key), tomb = MRC__KEYTAB_SLOTS;

	if (t->live >= MRC__KEYTAB_MAX)
		return -ENOSPC;
	for (unsigned n = 0; n < MRC__KEYTAB_SLOTS; n++, i = (i + 1) & (MRC__KEYTAB_SLOTS - 1)) {
		uint64_t s = atomic_load_explicit(&t->slot[i], memory_order_relaxed);

		if (s == want)
			return -EEXIST;
		if (s == MRC__KEY_TOMB && tomb == MRC__KEYTAB_SLOTS)
			tomb = i;
		if (s == 0)
			break;
	}
	if (tomb != MRC__KEYTAB_SLOTS)
		i = tomb;
	atomic_store_explicit(&t->a[i], a, memory_order_relaxed);
	atomic_store_explicit(&t->b[i], b, memory_order_relaxed);
	/* R4: publish the entry's values with its key. Pairs with A4. */
	atomic_store_explicit(&t->slot[i], want, memory_order_release);
	t->live++;
	return 0;
}

bool mrc__keytab_del(struct mrc__keytab *t, uint32_t key)
{
	uint64_t want = (uint64_t)key + 1;
	unsigned i = key_hash(key);

	for (unsigned n = 0; n < MRC__KEYTAB_SLOTS; n++, i = (i + 1) & (MRC__KEYTAB_SLOTS - 1)) {
		uint64_t s = atomic_load_explicit(&t->slot[i], memory_order_relaxed);

		if (s == 0)
			return false;
		if (s != want)
			continue;
		/* If the next slot is empty no probe runs past this one, so it and
		 * the tombstones right before it can become empty again. */
		unsigned nx = (i + 1) & (MRC__KEYTAB_SLOTS - 1);

		if (atomic_load_explicit(&t->slot[nx], memory_order_relaxed) != 0) {
			atomic_store_explicit(&t->slot[i], MRC__KEY_TOMB, memory_order_relaxed);
		} else {
			unsigned j = i;

			do {
				atomic_store_explicit(&t->slot[j], 0, memory_order_relaxed);
				j = (j - 1) & (MRC__KEYTAB_SLOTS - 1);
			} while (atomic_load_explicit(&t->slot[j], memory_order_relaxed) == MRC__KEY_TOMB);
		}
		t->live--;
		return true;
	}
	return false;
}

bool mrc__keytab_find(const struct mrc__keytab *t, uint32_t key, uint64_t *a, uint64_t *b)
{
	uint64_t want = (uint64_t)key + 1;
	unsigned i = key_hash(key);

	for (unsigned n = 0; n < MRC__KEYTAB_SLOTS; n++, i = (i + 1) & (MRC__KEYTAB_SLOTS - 1)) {
		/* A4: see the values stored before R4. Pairs with R4. */
		uint64_t s = atomic_load_explicit(&t->slot[i], memory_order_acquire);

		if (s == 0)
			return false;
		if (s != want)
			continue;
		if (a)
			*a = atomic_load_explicit(&t->a[i], memory_order_relaxed);
		if (b)
			*b = atomic_load_explicit(&t->b[i], memory_order_relaxed);
		return true;
	}
	return false;
}

/* ---- errors ---------------------------------------------------------------------------- */

const char *mrc_last_error(const struct mrc_ctx *ctx)
{
	return ctx ? ctx->err : "";
}

const char *mrc_strerror(int err)
{
	static _Thread_local char buf[96];

	if (err > 0)
		err = -err;
	switch (err) {
	case 0: return "success";
	case -EINVAL: return "invalid argument";
	case -ENOMEM: return "out of memory";
	case -ENOSPC: return "limit reached (regions, QPs or heap)";
	case -ENOENT: return "no such object, or no mrcd socket at that path";
	case -ECONNREFUSED: return "mrcd is not listening on the socket";
	case -EPROTO: return "version mismatch between libmrc-client and mrcd";
	case -EIO: return "malformed or unexpected reply from mrcd";
	case -EPIPE: return "mrcd closed the session";
	case -ETIMEDOUT: return "mrcd did not answer in time";
	case -EBUSY: return "busy (in use by work requests, or already attached)";
	case -EPERM: return "operation not allowed in this state";
	case -EINTR: return "interrupted by a signal";
	case -EAGAIN: return "try again";
	default:
		break;
	}
	/* GNU strerror_r may return a static string instead of filling buf. */
	const char *s = strerror_r(-err, buf, sizeof(buf));

	return s ? s : "unknown error";
}

const char *mrc_wc_status_str(uint8_t status)
{
	switch (status) {
	case MRC_WC_SUCCESS: return "success";
	case MRC_WC_LOC_PROT_ERR: return "local protection error (bad lkey or SGE outside its region)";
	case MRC_WC_REM_ACCESS_ERR: return "remote access error (rkey or bounds refused)";
	case MRC_WC_RETRY_EXC_ERR: return "retry count exceeded (no progress from the peer)";
	case MRC_WC_FLUSH_ERR: return "flushed (QP in error or destroyed)";
	case MRC_WC_GENERAL_ERR: return "general error (bad opcode, unknown QP, limit)";
	case MRC_WC_REM_INV_REQ_ERR: return "remote invalid request (e.g. a WRITE_IMM with no receive posted)";
	case MRC_WC_REM_OP_ERR: return "remote operational error";
	default: return "unknown status";
	}
}

/* The causes' names on the wire (qp_query "cause") and their lines, in
 * enum mrc_qp_cause order (lib/core's MRCP_QP_ERRS). */
static const char *const cause_name[] = {
	"none", "retry_exceeded", "remote_invalid", "remote_access", "remote_op",
	"no_recv", "wimm_overflow", "bad_request", "bad_access",
};
static const char *const cause_line[] = {
	"no error",
	"retry count exceeded: no progress from the peer",
	"the peer refused a request as invalid (e.g. a WRITE_IMM it had no receive posted for)",
	"the peer refused rkey, bounds or permission",
	"the peer reported an operational error",
	"a WRITE_IMM arrived with no receive posted",
	"the peer had more WRITE_IMMs waiting than allowed",
	"a packet from the peer broke a message rule",
	"a Write from the peer failed the rkey, bounds or permission check",
};
_Static_assert(sizeof(cause_name) / sizeof(cause_name[0]) == MRC_QP_CAUSE_BAD_ACCESS + 1 &&
	       sizeof(cause_line) == sizeof(cause_name), "one name and one line per cause");

const char *mrc_qp_cause_str(uint8_t cause)
{
	return cause < sizeof(cause_line) / sizeof(cause_line[0]) ? cause_line[cause] : "unknown cause";
}

/* ---- open / close ------------------------------------------------------------------------ */

static bool pow2_in(uint32_t v, uint32_t lo, uint32_t hi)
{
	return v >= lo && v <= hi && (v & (v - 1)) == 0;
}

static void set_reason(char *reason, size_t reason_len, const char *msg)
{
	if (reason != NULL && reason_len > 0)
		snprintf(reason, reason_len, "%s", msg);
}

static void ctx_free(struct mrc_ctx *ctx)
{
	if (ctx->base != NULL)
		munmap(ctx->base, ctx->map_size);
	if (ctx->sock >= 0)
		close(ctx->sock);
	if (ctx->cq_fd >= 0)
		close(ctx->cq_fd);
	if (ctx->db_fd >= 0)
		close(ctx->db_fd);
	mrc__ctl_drop_fds(ctx);
	mrc__heap_fini(&ctx->heap);
	free(ctx->rx);
	free(ctx->doc.sbuf);
	pthread_mutex_destroy(&ctx->lock);
	pthread_mutex_destroy(&ctx->err_lock);
	free(ctx);
}

/* A JSON integer the daemon printed from a uint64_t cast to int64_t (jansson
 * has no unsigned integers): take negative values back modulo 2^64. */
static int get_addr(struct mrc__jdoc *d, int obj, const char *key, uint64_t *out)
{
	int i = mrc__json_get(d, obj, key);

	if (i < 0 || d->nodes[i].type != MRC__J_INT) {
		snprintf(d->err, sizeof(d->err), "%s: missing or not an integer", key);
		return -EIO;
	}
	*out = d->nodes[i].neg ? (uint64_t)0 - d->nodes[i].mag : d->nodes[i].mag;
	return 0;
}

/* Optional unsigned member: absent leaves *out as it is. */
static int get_opt(struct mrc__jdoc *d, int obj, const char *key, uint64_t max, uint64_t *out)
{
	int rc = mrc__json_get_u64(d, obj, key, max, out);

	return rc == -ENOENT ? 0 : rc;
}

static int get_req(struct mrc__jdoc *d, int obj, const char *key, uint64_t max, uint64_t *out)
{
	int rc = mrc__json_get_u64(d, obj, key, max, out);

	if (rc == -ENOENT)
		snprintf(d->err, sizeof(d->err), "%s: missing", key);
	return rc == -ENOENT ? -EIO : rc;
}

/* Take the attach reply: descriptors, arena, rings, heap. */
static int attach_finish(struct mrc_ctx *ctx, int res)
{
	struct mrc__jdoc *d = &ctx->doc;
	uint64_t abi = MRC_SHM_ABI_VERSION, client = 0, arena_bytes = 0;
	uint64_t ring[3] = {0, 1, 2};
	static const char *const ring_key[3] = {"sq_ring", "rq_ring", "cq_ring"};
	static const uint32_t ring_elem[3] = {sizeof(struct mrc_shm_wr), sizeof(struct mrc_shm_recv),
					      sizeof(struct mrc_shm_cqe)};
	struct mrc_shm_rh *rh[3] = {&ctx->sq, &ctx->rq, &ctx->cq};
	struct stat st;
	int rc;

	if (get_opt(d, res, "abi", UINT32_MAX, &abi) < 0 || get_opt(d, res, "client", UINT32_MAX, &client) < 0 ||
	    get_opt(d, res, "arena_bytes", UINT64_MAX, &arena_bytes) < 0 ||
	    get_addr(d, res, "va_base", &ctx->va_base) < 0 ||
	    get_req(d, res, "heap_ofs", UINT64_MAX, &ctx->heap_ofs) < 0 ||
	    get_req(d, res, "heap_len", UINT64_MAX, &ctx->heap_len) < 0)
		return mrc__fail(ctx, -EIO, "attach: reply %s", d->err);
	for (int i = 0; i < 3; i++)
		if (get_opt(d, res, ring_key[i], MRC_SHM_MAX_RINGS - 1, &ring[i]) < 0)
			return mrc__fail(ctx, -EIO, "attach: reply %s", d->err);
	if (abi != MRC_SHM_ABI_VERSION)
		return mrc__fail(ctx, -EPROTO, "attach: mrcd answered with ABI %" PRIu64 ", this library speaks ABI %u",
				 abi, MRC_SHM_ABI_VERSION);
	ctx->client_id = (uint32_t)client;

	if (ctx->rx_nfds != 3 || ctx->rx_fds_extra)
		return mrc__fail(ctx, -EIO, "attach: the reply carried %s%u descriptors, expected 3 (arena, cq_event, doorbell)",
				 ctx->rx_fds_extra ? "more than " : "", ctx->rx_nfds);
	int arena_fd = ctx->rx_fds[0];

	ctx->cq_fd = ctx->rx_fds[1];
	ctx->db_fd = ctx->rx_fds[2];
	ctx->rx_nfds = 0;
	rc = fstat(arena_fd, &st);
	if (rc < 0 || st.st_size < (off_t)sizeof(struct mrc_shm_hdr) ||
	    (arena_bytes != 0 && arena_bytes > (uint64_t)st.st_size)) {
		close(arena_fd);
		return mrc__fail(ctx, -EIO, "attach: the arena descriptor is %s",
				 rc < 0 ? "not usable" : "smaller than the arena");
	}
	ctx->map_size = (uint64_t)st.st_size;
	void *base = mmap(NULL, ctx->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, arena_fd, 0);

	rc = errno;
	close(arena_fd); /* the mapping keeps the memory */
	if (base == MAP_FAILED)
		return mrc__fail(ctx, rc == ENOMEM ? -ENOMEM : -EIO, "attach: mmap of the arena: %s", strerror(rc));
	ctx->base = base;
	rc = mrc_shm_arena_attach(base, ctx->map_size, &ctx->view);
	if (rc == -EPROTO)
		return mrc__fail(ctx, -EPROTO, "attach: the arena's magic or ABI version is not this library's (ABI %u)",
				 MRC_SHM_ABI_VERSION);
	if (rc < 0)
		return mrc__fail(ctx, -EIO, "attach: the arena's layout is inconsistent");
	const struct mrc_shm_layout *l = &ctx->view.layout;

	if (ctx->heap_len == 0 || ctx->heap_ofs < l->heap_ofs || ctx->heap_ofs > l->heap_ofs + l->heap_len ||
	    ctx->heap_len > l->heap_ofs + l->heap_len - ctx->heap_ofs)
		return mrc__fail(ctx, -EIO, "attach: heap_ofs/heap_len lie outside the arena's heap");
	for (int i = 0; i < 3; i++) {
		if (mrc_shm_view_ring_handle(&ctx->view, (uint32_t)ring[i], rh[i]) < 0)
			return mrc__fail(ctx, -EIO, "attach: %s %" PRIu64 " is not a ring of the arena",
					 ring_key[i], ring[i]);
		if (rh[i]->elem_size != ring_elem[i])
			return mrc__fail(ctx, -EIO, "attach: %s holds %u-byte elements, expected %u",
					 ring_key[i], rh[i]->elem_size, ring_elem[i]);
	}
	if (ring[0] == ring[1] || ring[0] == ring[2] || ring[1] == ring[2])
		return mrc__fail(ctx, -EIO, "attach: sq_ring, rq_ring and cq_ring must differ");
	/* mrc_wait_cq drains the completion eventfd without blocking; the
	 * daemon only writes it. */
	int fl = fcntl(ctx->cq_fd, F_GETFL);

	if (fl < 0 || fcntl(ctx->cq_fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return mrc__fail(ctx, -EIO, "attach: the cq_event descriptor: %s", strerror(errno));
	rc = mrc__heap_init(&ctx->heap, ctx->heap_ofs, ctx->heap_len);
	if (rc < 0)
		return mrc__fail(ctx, rc, "attach: out of memory");
	return 0;
}

int mrc_open(const struct mrc_open_attr *attr, struct mrc_ctx **out, char *reason, size_t reason_len)
{
	static const struct mrc_open_attr dflt;
	const struct mrc_open_attr *a = attr ? attr : &dflt;
	uint64_t heap = a->heap_bytes ? a->heap_bytes : DEFAULT_HEAP;
	uint32_t sq = a->sq_depth ? a->sq_depth : DEFAULT_SQ;
	uint32_t rq = a->rq_depth ? a->rq_depth : DEFAULT_RQ;
	uint32_t cq = a->cq_depth ? a->cq_depth : DEFAULT_CQ;
	const char *path = a->socket;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct mrc_ctx *ctx;
	char args[256];
	int rc, res;

	set_reason(reason, reason_len, "");
	if (out == NULL) {
		set_reason(reason, reason_len, "mrc_open: out is NULL");
		return -EINVAL;
	}
	*out = NULL;
	if (heap < MIN_HEAP || heap > MAX_HEAP) {
		set_reason(reason, reason_len, "heap_bytes: out of range 4096..64 GiB");
		return -EINVAL;
	}
	if (!pow2_in(sq, MIN_DEPTH, MAX_DEPTH) || !pow2_in(rq, MIN_DEPTH, MAX_DEPTH) ||
	    !pow2_in(cq, MIN_DEPTH, MAX_DEPTH)) {
		set_reason(reason, reason_len, "sq_depth/rq_depth/cq_depth: not a power of two in 64..1048576");
		return -EINVAL;
	}
	if (path == NULL || path[0] == '\0')
		path = getenv("MRCD_SOCKET");
	if (path == NULL || path[0] == '\0')
		path = DEFAULT_SOCKET;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		set_reason(reason, reason_len, "socket: path too long for a UNIX socket");
		return -EINVAL;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);

	ctx = calloc(1, sizeof(*ctx));
	if (ctx == NULL) {
		set_reason(reason, reason_len, "out of memory");
		return -ENOMEM;
	}
	ctx->sock = ctx->cq_fd = ctx->db_fd = -1;
	ctx->timeout_ms = a->timeout_ms ? a->timeout_ms : DEFAULT_TIMEOUT_MS;
	ctx->next_id = 1;
	pthread_mutex_init(&ctx->lock, NULL);
	pthread_mutex_init(&ctx->err_lock, NULL);
	ctx->rx = malloc(MRC__LINE_MAX);
	ctx->doc.sbuf = malloc(MRC__LINE_MAX + 1);
	ctx->doc.sbuf_cap = MRC__LINE_MAX + 1;
	if (ctx->rx == NULL || ctx->doc.sbuf == NULL) {
		ctx_free(ctx);
		set_reason(reason, reason_len, "out of memory");
		return -ENOMEM;
	}

	ctx->sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (ctx->sock < 0) {
		rc = mrc__fail(ctx, -errno, "socket: %s", strerror(errno));
		goto fail;
	}
	do
		rc = connect(ctx->sock, (const struct sockaddr *)&sa, sizeof(sa));
	while (rc < 0 && errno == EINTR);
	if (rc < 0) {
		rc = mrc__fail(ctx, -errno, "connect %s: %s (is mrcd running?)", path, strerror(errno));
		goto fail;
	}
	snprintf(args, sizeof(args),
		 "{\"abi\":%u,\"heap_bytes\":%" PRIu64 ",\"sq_depth\":%u,\"rq_depth\":%u,\"cq_depth\":%u}",
		 MRC_SHM_ABI_VERSION, heap, sq, rq, cq);
	rc = mrc__ctl_request(ctx, "attach", args, &res);
	if (rc == 0)
		rc = attach_finish(ctx, res);
	if (rc < 0)
		goto fail;
	ctx->err[0] = '\0';
	*out = ctx;
	return 0;
fail:
	set_reason(reason, reason_len, ctx->err);
	ctx_free(ctx);
	return rc;
}

void mrc_close(struct mrc_ctx *ctx)
{
	if (ctx == NULL)
		return;
	pthread_mutex_lock(&ctx->lock);
	/* Best effort, one timeout for all of it: the daemon destroys whatever
	 * is left when the connection closes. */
	uint64_t deadline = mrc__now_ns() + (uint64_t)ctx->timeout_ms * 1000000u;

	for (unsigned i = 0; i < MRC__KEYTAB_SLOTS && !atomic_load(&ctx->dead); i++) {
		uint64_t s = atomic_load_explicit(&ctx->qps.slot[i], memory_order_relaxed);
		char args[48];
		int res;

		if (s == 0 || s == MRC__KEY_TOMB)
			continue;
		snprintf(args, sizeof(args), "{\"qpn\":%" PRIu64 "}", s - 1);
		if (mrc__ctl_request_until(ctx, "qp_destroy", args, deadline, &res) == -ETIMEDOUT)
			break;
	}
	pthread_mutex_unlock(&ctx->lock);
	ctx_free(ctx);
}

/* ---- memory ------------------------------------------------------------------------------ */

void *mrc_alloc(struct mrc_ctx *ctx, size_t len, size_t align)
{
	uint64_t ofs;
	int rc;

	if (ctx == NULL) {
		errno = EINVAL;
		return NULL;
	}
	if (align == 0)
		align = ALLOC_GRAIN;
	if (len == 0 || (align & (align - 1)) != 0) {
		errno = EINVAL;
		mrc__fail(ctx, -EINVAL, "mrc_alloc: %s", len == 0 ? "len is 0" : "align is not a power of two");
		return NULL;
	}
	if (len > ctx->heap_len || align > ctx->heap_len) {
		errno = ENOMEM;
		mrc__fail(ctx, -ENOMEM, "mrc_alloc: %zu bytes do not fit in the %" PRIu64 "-byte heap", len,
			  ctx->heap_len);
		return NULL;
	}
	len = (len + ALLOC_GRAIN - 1) & ~(size_t)(ALLOC_GRAIN - 1);
	pthread_mutex_lock(&ctx->lock);
	rc = mrc__heap_alloc(&ctx->heap, len, align, (uintptr_t)ctx->base, &ofs);
	uint64_t left = ctx->heap.free_bytes;

	pthread_mutex_unlock(&ctx->lock);
	if (rc < 0) {
		errno = ENOMEM;
		mrc__fail(ctx, -ENOMEM, "mrc_alloc: no free run of %zu bytes aligned to %zu (%" PRIu64
			  " bytes free in all)", len, align, left);
		return NULL;
	}
	return ctx->base + ofs;
}

/* Is [p, p + len) inside the heap? */
static bool in_heap(const struct mrc_ctx *ctx, const void *p, uint64_t len)
{
	uintptr_t lo = (uintptr_t)ctx->base + ctx->heap_ofs, a = (uintptr_t)p;

	return a >= lo && a - lo <= ctx->heap_len && len <= ctx->heap_len - (a - lo);
}

void mrc_free(struct mrc_ctx *ctx, void *p)
{
	int rc;

	if (ctx == NULL || p == NULL)
		return;
	if (!in_heap(ctx, p, 0)) {
		mrc__fail(ctx, -EINVAL, "mrc_free: %p is not in the arena heap", p);
		return;
	}
	pthread_mutex_lock(&ctx->lock);
	rc = mrc__heap_free(&ctx->heap, (uint64_t)((uint8_t *)p - ctx->base));
	pthread_mutex_unlock(&ctx->lock);
	if (rc < 0)
		mrc__fail(ctx, -EINVAL, "mrc_free: %p is not a block from mrc_alloc", p);
}

uint64_t mrc_va(const struct mrc_ctx *ctx, const void *p)
{
	if (ctx == NULL || !in_heap(ctx, p, 0))
		return 0;
	return ctx->va_base + (uint64_t)((const uint8_t *)p - ctx->base);
}

int mrc_reg_mr(struct mrc_ctx *ctx, void *addr, size_t len, uint32_t access, struct mrc_mr *out)
{
	uint64_t lkey, rkey, region = 0, va, ofs;
	char args[128];
	int rc, res;

	if (ctx == NULL || out == NULL || addr == NULL)
		return mrc__fail(ctx, -EINVAL, "mrc_reg_mr: %s is NULL", out == NULL ? "out" : "addr");
	if (len == 0 || !in_heap(ctx, addr, len))
		return mrc__fail(ctx, -EINVAL, "mrc_reg_mr: [%p, +%zu) is %s", addr, len,
				 len == 0 ? "empty" : "not inside the arena heap");
	if (access & ~(uint32_t)(MRC_ACCESS_LOCAL_WRITE | MRC_ACCESS_REMOTE_WRITE))
		return mrc__fail(ctx, -EINVAL, "mrc_reg_mr: access 0x%x has unknown bits", access);
	ofs = (uint64_t)((uint8_t *)addr - ctx->base);
	snprintf(args, sizeof(args), "{\"ofs\":%" PRIu64 ",\"len\":%zu,\"access\":%u}", ofs, len, access);

	pthread_mutex_lock(&ctx->lock);
	rc = mrc__ctl_request(ctx, "reg_mr", args, &res);
	if (rc < 0)
		goto out;
	struct mrc__jdoc *d = &ctx->doc;

	if (get_req(d, res, "lkey", UINT32_MAX, &lkey) < 0 || get_req(d, res, "rkey", UINT32_MAX, &rkey) < 0 ||
	    get_opt(d, res, "region", MRC_SHM_MAX_REGIONS - 1, &region) < 0) {
		rc = mrc__fail(ctx, -EIO, "reg_mr: reply %s", d->err);
		goto out;
	}
	va = ctx->va_base + ofs;
	if (mrc__json_get(d, res, "va") >= 0 && get_addr(d, res, "va", &va) < 0) {
		rc = mrc__fail(ctx, -EIO, "reg_mr: reply %s", d->err);
		goto out;
	}
	rc = mrc__keytab_add(&ctx->mrs, (uint32_t)lkey, ofs, len);
	if (rc < 0) {
		/* Registered with the daemon but unusable here: undo it. */
		snprintf(args, sizeof(args), "{\"lkey\":%" PRIu64 "}", lkey);
		(void)mrc__ctl_request(ctx, "dereg_mr", args, &res);
		rc = rc == -EEXIST ? mrc__fail(ctx, -EIO, "reg_mr: mrcd returned lkey %" PRIu64 " twice", lkey)
				   : mrc__fail(ctx, -ENOSPC, "reg_mr: %u regions, the most one context tracks",
					       MRC__KEYTAB_MAX);
		goto out;
	}
	(void)region;
	out->addr = addr;
	out->len = len;
	out->lkey = (uint32_t)lkey;
	out->rkey = (uint32_t)rkey;
	out->va = va;
out:
	pthread_mutex_unlock(&ctx->lock);
	return rc;
}

int mrc_dereg_mr(struct mrc_ctx *ctx, struct mrc_mr *mr)
{
	char args[48];
	int rc, res;

	if (ctx == NULL || mr == NULL)
		return mrc__fail(ctx, -EINVAL, "mrc_dereg_mr: mr is NULL");
	pthread_mutex_lock(&ctx->lock);
	if (!mrc__keytab_find(&ctx->mrs, mr->lkey, NULL, NULL)) {
		rc = mrc__fail(ctx, -ENOENT, "dereg_mr: lkey %u is not a region of this context", mr->lkey);
		goto out;
	}
	snprintf(args, sizeof(args), "{\"lkey\":%u}", mr->lkey);
	rc = mrc__ctl_request(ctx, "dereg_mr", args, &res);
	if (rc == 0 || rc == -ENOENT)
		mrc__keytab_del(&ctx->mrs, mr->lkey);
out:
	pthread_mutex_unlock(&ctx->lock);
	return rc;
}

/* ---- queue pairs ------------------------------------------------------------------------ */

static const char hexd[] = "0123456789abcdef";

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Exactly 2 * MRC_CONN_INFO_BYTES hex digits? Lower-cases into @lower (may be NULL). */
static bool info_text_ok(const char *s, size_t len, char *lower)
{
	if (len != 2 * MRC_CONN_INFO_BYTES)
		return false;
	for (size_t i = 0; i < len; i++) {
		int v = hexval(s[i]);

		if (v < 0)
			return false;
		if (lower)
			lower[i] = hexd[v];
	}
	if (lower)
		lower[len] = '\0';
	return true;
}

static int check_qpn(struct mrc_ctx *ctx, const char *fn, uint32_t qpn)
{
	if (qpn == 0 || qpn > MAX_QPN)
		return mrc__fail(ctx, -EINVAL, "%s: qpn %u is out of range 1..16777215", fn, qpn);
	if (!mrc__keytab_find(&ctx->qps, qpn, NULL, NULL))
		return mrc__fail(ctx, -ENOENT, "%s: qpn %u is not a QP of this context", fn, qpn);
	return 0;
}

int mrc_qp_create(struct mrc_ctx *ctx, const struct mrc_qp_attr *attr, uint32_t *qpn)
{
	static const struct mrc_qp_attr dflt;
	const struct mrc_qp_attr *a = attr ? attr : &dflt;
	char args[160];
	size_t n = 0;
	uint64_t q;
	int rc, res;

	if (ctx == NULL || qpn == NULL)
		return mrc__fail(ctx, -EINVAL, "mrc_qp_create: qpn is NULL");
	if (a->sq_depth > MAX_QP_DEPTH || a->rq_depth > MAX_QP_DEPTH)
		return mrc__fail(ctx, -EINVAL, "mrc_qp_create: sq_depth/rq_depth above %u", MAX_QP_DEPTH);
	if (a->user_ctx > INT64_MAX)
		return mrc__fail(ctx, -EINVAL, "mrc_qp_create: user_ctx above 2^63-1 (a JSON integer)");
	/* Absent keys mean "daemon default"; the daemon refuses 0. */
	n += (size_t)snprintf(args + n, sizeof(args) - n, "{");
	if (a->sq_depth)
		n += (size_t)snprintf(args + n, sizeof(args) - n, "\"sq_depth\":%u,", a->sq_depth);
	if (a->rq_depth)
		n += (size_t)snprintf(args + n, sizeof(args) - n, "\"rq_depth\":%u,", a->rq_depth);
	if (a->user_ctx)
		n += (size_t)snprintf(args + n, sizeof(args) - n, "\"user_ctx\":%" PRIu64 ",", a->user_ctx);
	if (args[n - 1] == ',')
		n--;
	snprintf(args + n, sizeof(args) - n, "}");

	pthread_mutex_lock(&ctx->lock);
	if (ctx->qps.live >= MRC__KEYTAB_MAX) {
		rc = mrc__fail(ctx, -ENOSPC, "qp_create: %u QPs, the most one context tracks", MRC__KEYTAB_MAX);
		goto out;
	}
	rc = mrc__ctl_request(ctx, "qp_create", args, &res);
	if (rc < 0)
		goto out;
	if (get_req(&ctx->doc, res, "qpn", MAX_QPN, &q) < 0 || q == 0) {
		rc = mrc__fail(ctx, -EIO, "qp_create: reply %s", q == 0 ? "qpn: 0" : ctx->doc.err);
		goto out;
	}
	rc = mrc__keytab_add(&ctx->qps, (uint32_t)q, 0, 0);
	if (rc < 0) {
		rc = mrc__fail(ctx, -EIO, "qp_create: mrcd returned qpn %" PRIu64 " twice", q);
		goto out;
	}
	*qpn = (uint32_t)q;
out:
	pthread_mutex_unlock(&ctx->lock);
	return rc;
}

/* qp_info into @text (lower case, NUL-terminated). Caller holds the lock. */
static int qp_info_locked(struct mrc_ctx *ctx, uint32_t qpn, char text[MRC_CONN_INFO_TEXT])
{
	char args[48];
	const char *s;
	size_t len;
	int rc, res;

	if ((rc = check_qpn(ctx, "qp_info", qpn)) < 0)
		return rc;
	snprintf(args, sizeof(args), "{\"qpn\":%u}", qpn);
	rc = mrc__ctl_request(ctx, "qp_info", args, &res);
	if (rc < 0)
		return rc;
	if (mrc__json_get_str(&ctx->doc, res, "info", &s, &len) < 0 || !info_text_ok(s, len, text))
		return mrc__fail(ctx, -EIO, "qp_info: reply info: missing or not %u hex digits",
				 2 * MRC_CONN_INFO_BYTES);
	return 0;
}

int mrc_qp_info_text(struct mrc_ctx *ctx, uint32_t qpn, char text[MRC_CONN_INFO_TEXT])
{
	int rc;

	if (ctx == NULL || text == NULL)
		return mrc__fail(ctx, -EINVAL, "mrc_qp_info_text: text is NULL");
	pthread_mutex_lock(&ctx->lock);
	rc = qp_info_locked(ctx, qpn, text);
	pthread_mutex_unlock(&ctx->lock);
	return rc;
}

int mrc_qp_info(struct mrc_ctx *ctx, uint32_t qpn, uint8_t info[MRC_CONN_INFO_BYTES])
{
	char text[MRC_CONN_INFO_TEXT];
	int rc;

	if (ctx == NULL || info == NULL)
		return mrc__fail(ctx, -EINVAL, "mrc_qp_info: info is NULL");
	pthread_mutex_lock(&ctx->lock);
	rc = qp_info_locked(ctx, qpn, text);
	pthread_mutex_unlock(&ctx->lock);
	if (rc < 0)
		return rc;
	for (unsigned i = 0; i < MRC_CONN_INFO_BYTES; i++)
		info[i] = (uint8_t)(hexval(text[2 * i]) << 4 | hexval(text[2 * i + 1]));
	return 0;
}

int mrc_qp_connect_text(struct mrc_ctx *ctx, uint32_t qpn, const char *text)
{
	char args[64 + MRC_CONN_INFO_TEXT];
	char lower[MRC_CONN_INFO_TEXT];
	int rc, res;

	if (ctx == NULL || text == NULL)
		return mrc__fail(ctx, -EINVAL, "mrc_qp_connect: info is NULL");
	if (!info_text_ok(text, strnlen(text, MRC_CONN_INFO_TEXT), lower))
		return mrc__fail(ctx, -EINVAL, "mrc_qp_connect: peer info is not %u hex digits",
				 2 * MRC_CONN_INFO_BYTES);
	pthread_mutex_lock(&ctx->lock);
	rc = check_qpn(ctx, "qp_connect", qpn);
	if (rc == 0) {
		snprintf(args, sizeof(args), "{\"qpn\":%u,\"peer_info\":\"%s\"}", qpn, lower);
		rc = mrc__ctl_request(ctx, "qp_connect", args, &res);
	}
	pthread_mutex_unlock(&ctx->lock);
	return rc;
}

int mrc_qp_connect(struct mrc_ctx *ctx, uint32_t qpn, const uint8_t info[MRC_CONN_INFO_BYTES])
{
	char text[MRC_CONN_INFO_TEXT];

	if (ctx == NULL || info == NULL)
		return mrc__fail(ctx, -EINVAL, "mrc_qp_connect: info is NULL");
	for (unsigned i = 0; i < MRC_CONN_INFO_BYTES; i++) {
		text[2 * i] = hexd[info[i] >> 4];
		text[2 * i + 1] = hexd[info[i] & 15];
	}
	text[2 * MRC_CONN_INFO_BYTES] = '\0';
	return mrc_qp_connect_text(ctx, qpn, text);
}

int mrc_qp_destroy(struct mrc_ctx *ctx, uint32_t qpn)
{
	char args[48];
	int rc, res;

	if (ctx == NULL)
		return -EINVAL;
	pthread_mutex_lock(&ctx->lock);
	rc = check_qpn(ctx, "qp_destroy", qpn);
	if (rc == 0) {
		snprintf(args, sizeof(args), "{\"qpn\":%u}", qpn);
		rc = mrc__ctl_request(ctx, "qp_destroy", args, &res);
		if (rc == 0 || rc == -ENOENT)
			mrc__keytab_del(&ctx->qps, qpn);
	}
	pthread_mutex_unlock(&ctx->lock);
	return rc;
}

/* @s (@len bytes) among @names (@n of them): its index, or -1. */
static int name_index(const char *s, size_t len, const char *const *names, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (strlen(names[i]) == len && memcmp(names[i], s, len) == 0)
			return (int)i;
	return -1;
}

int mrc_qp_query(struct mrc_ctx *ctx, uint32_t qpn, struct mrc_qp_status *out)
{
	static const char *const states[] = {"RESET", "INIT", "RTR", "RTS", "ERROR"};
	/* the daemon's status names, to MRC_WC_* (anything else: GENERAL_ERR) */
	static const char *const status_name[] = {
		"SUCCESS", "LOC_PROT_ERR", "REM_ACCESS_ERR", "RETRY_EXC_ERR", "FLUSH_ERR", "GENERAL_ERR",
		"REM_INV_REQ_ERR", "REM_OP_ERR",
	};
	struct mrc__jdoc *d;
	const char *state, *cause, *status, *reason;
	size_t ls, lc, lt, lr;
	uint64_t msn, imm, len;
	char args[48];
	int rc, res, si, ci, ti;

	if (ctx == NULL || out == NULL)
		return mrc__fail(ctx, -EINVAL, "mrc_qp_query: out is NULL");
	pthread_mutex_lock(&ctx->lock);
	rc = check_qpn(ctx, "qp_query", qpn);
	if (rc < 0)
		goto out;
	snprintf(args, sizeof(args), "{\"qpn\":%u}", qpn);
	rc = mrc__ctl_request(ctx, "qp_query", args, &res);
	if (rc < 0)
		goto out;
	d = &ctx->doc;
	if (mrc__json_get_str(d, res, "state", &state, &ls) < 0 || mrc__json_get_str(d, res, "cause", &cause, &lc) < 0 ||
	    mrc__json_get_str(d, res, "status", &status, &lt) < 0 ||
	    mrc__json_get_str(d, res, "reason", &reason, &lr) < 0 || get_req(d, res, "msn", UINT16_MAX, &msn) < 0 ||
	    get_req(d, res, "imm", UINT32_MAX, &imm) < 0 || get_req(d, res, "byte_len", UINT32_MAX, &len) < 0) {
		rc = mrc__fail(ctx, -EIO, "qp_query: reply lacks state, cause, status, reason, msn, imm or byte_len");
		goto out;
	}
	si = name_index(state, ls, states, 5);
	ci = name_index(cause, lc, cause_name, sizeof(cause_name) / sizeof(cause_name[0]));
	ti = name_index(status, lt, status_name, sizeof(status_name) / sizeof(status_name[0]));
	/* a daemon with other causes speaks another shared-memory ABI, which
	 * attach refused: a name outside these lists is a malformed reply */
	if (si < 0 || ci < 0 || ti < 0) {
		rc = mrc__fail(ctx, -EIO, "qp_query: reply %s is not one this library knows",
			       si < 0 ? "state" : ci < 0 ? "cause" : "status");
		goto out;
	}
	memset(out, 0, sizeof(*out));
	out->state = (uint8_t)(MRC_QPS_RESET + si);
	out->err_cause = (uint8_t)ci;
	out->err_status = (uint8_t)ti;
	out->err_msn = (uint16_t)msn;
	out->err_imm = (uint32_t)imm;
	out->err_byte_len = (uint32_t)len;
	snprintf(out->err_reason, sizeof(out->err_reason), "%.*s", (int)(lr < sizeof(out->err_reason) ? lr : sizeof(out->err_reason) - 1), reason);
out:
	pthread_mutex_unlock(&ctx->lock);
	return rc;
}

/* "a.b.c.d/len" or "" (no address) into @out (@af's size); "" leaves zeros. */
static bool prefix_addr(const char *s, size_t len, int af, void *out)
{
	char b[64];
	const char *slash = memchr(s, '/', len);

	if (len == 0)
		return true;
	if (slash == NULL || (size_t)(slash - s) >= sizeof(b))
		return false;
	memcpy(b, s, (size_t)(slash - s));
	b[slash - s] = '\0';
	return inet_pton(af, b, out) == 1;
}

int mrc_port_addrs(struct mrc_ctx *ctx, struct mrc_port_addr *out, unsigned max)
{
	int rc, res;

	if (ctx == NULL || (out == NULL && max > 0))
		return mrc__fail(ctx, -EINVAL, "mrc_port_addrs: out is NULL");
	pthread_mutex_lock(&ctx->lock);
	rc = mrc__ctl_request(ctx, "ports", NULL, &res);
	if (rc < 0)
		goto out;
	struct mrc__jdoc *d = &ctx->doc;

	if (d->nodes[res].type != MRC__J_ARR) {
		rc = mrc__fail(ctx, -EIO, "ports: reply is not an array");
		goto out;
	}
	unsigned n = 0;

	for (int i = d->nodes[res].first; i >= 0; i = d->nodes[i].next, n++) {
		struct mrc_port_addr p = {0};
		uint64_t plane;
		const char *v4, *v6, *eng;
		size_t l4, l6, le;

		if (d->nodes[i].type != MRC__J_OBJ || get_req(d, i, "plane", UINT32_MAX, &plane) < 0 ||
		    mrc__json_get_str(d, i, "ipv4", &v4, &l4) < 0 || mrc__json_get_str(d, i, "ipv6", &v6, &l6) < 0 ||
		    mrc__json_get_str(d, i, "engine", &eng, &le) < 0 || !prefix_addr(v4, l4, AF_INET, p.ipv4) ||
		    !prefix_addr(v6, l6, AF_INET6, p.ipv6)) {
			rc = mrc__fail(ctx, -EIO, "ports: entry %u lacks plane, ipv4, ipv6 or engine, or an address is bad",
				       n);
			goto out;
		}
		p.plane = (uint32_t)plane;
		p.up = le == 2 && memcmp(eng, "up", 2) == 0;
		if (n < max)
			out[n] = p;
	}
	rc = (int)n;
out:
	pthread_mutex_unlock(&ctx->lock);
	return rc;
}
