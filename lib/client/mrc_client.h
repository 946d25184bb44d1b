/* mrc_client.h - libmrc-client: the application's interface to mrcd.
 *
 * An application opens a context on the daemon's control socket; the daemon
 * creates a shared arena for it (lib/shm) and passes it over the socket. The
 * application allocates its buffers from the arena's heap, registers them,
 * creates QPs, exchanges connection info with its peer out of band, and posts
 * RDMA Write / Write-with-Immediate work requests and receives; completions
 * come back through a ring in the arena and can be polled or waited for
 * (eventfd). No DPDK, no jansson: libc and lib/shm only. Never prints.
 *
 * Every function returns 0 (or a count) on success and a negative errno on
 * failure; mrc_last_error() gives a one-line reason for the context's last
 * failure. Besides the codes listed per function, every call that talks to
 * the daemon ("any thread" functions other than mrc_alloc/mrc_free) can
 * return -ETIMEDOUT (no reply within timeout_ms), -EPIPE (the daemon closed
 * the session or announced shutdown), -EIO (a malformed, oversized or
 * mismatched reply) and any errno the daemon answers with (docs/client-api.md).
 * Thread safety is stated per function: "any thread" functions take
 * the context's control lock; the data-path functions are not thread-safe
 * per ring (one thread posts sends, one posts receives, one polls
 * completions, or the application serialises).
 */
#ifndef MRC_CLIENT_H
#define MRC_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MRC_CLIENT_ABI 2          /* shared-memory ABI (MRC_SHM_ABI_VERSION) spoken */
#define MRC_CONN_INFO_BYTES 208   /* binary QP info; == MRCP_CONN_INFO_LEN (asserted in test/unit/test_qp.c) */
#define MRC_CONN_INFO_TEXT 417    /* hex text form incl. NUL */
#define MRC_MAX_SGE 8

struct mrc_ctx;

/** Options for mrc_open(); zero = default. */
struct mrc_open_attr {
	const char *socket;       /**< daemon control socket; NULL = $MRCD_SOCKET or /run/mrcd/mrcd.sock */
	uint64_t heap_bytes;      /**< arena heap for buffers; 0 = 64 MiB */
	uint32_t sq_depth;        /**< send ring slots (all QPs); 0 = 4096 */
	uint32_t rq_depth;        /**< receive-post ring slots; 0 = 4096 */
	uint32_t cq_depth;        /**< completion ring slots; 0 = 8192 */
	unsigned timeout_ms;      /**< control request timeout; 0 = 10000 */
};

/** Connect, attach, map the arena. Any thread. @return 0 with *@out;
 *  -ECONNREFUSED/-ENOENT (no daemon), -EPROTO (ABI or protocol version
 *  mismatch: the daemon's reason is in *@reason), -ENOMEM, -EINVAL, -EIO.
 *  @reason (may be NULL) receives a one-line message on failure. */
int mrc_open(const struct mrc_open_attr *attr, struct mrc_ctx **out, char *reason, size_t reason_len);
/** Destroy QPs, deregister regions, unmap, close. Outstanding work is
 *  abandoned (the daemon flushes it). NULL is fine. */
void mrc_close(struct mrc_ctx *ctx);
/** One-line reason for the last failed call on @ctx ("" if none). */
const char *mrc_last_error(const struct mrc_ctx *ctx);
/** Text for a negative errno returned by this library (like strerror). */
const char *mrc_strerror(int err);

/* ---- memory ---------------------------------------------------------------- */

/** Allocate @len bytes of arena heap aligned to @align (power of two, 0 = 64).
 *  Any thread. @return the pointer or NULL (mrc_last_error says why). */
void *mrc_alloc(struct mrc_ctx *ctx, size_t len, size_t align);
/** Free a block from mrc_alloc. Any thread. */
void mrc_free(struct mrc_ctx *ctx, void *p);

enum { MRC_ACCESS_LOCAL_WRITE = 1u << 0, MRC_ACCESS_REMOTE_WRITE = 1u << 1 };

struct mrc_mr {
	void *addr;               /**< first byte, in this process */
	size_t len;
	uint32_t lkey, rkey;
	uint64_t va;              /**< the address a peer writes to (remote_addr) */
};

/** Register [addr, addr+len) inside the arena heap. Any thread.
 *  @return 0, -EINVAL (outside the heap, bad access), -ENOSPC (limit). */
int mrc_reg_mr(struct mrc_ctx *ctx, void *addr, size_t len, uint32_t access, struct mrc_mr *out);
/** @return 0, -ENOENT, -EBUSY (work requests still use it). Any thread. */
int mrc_dereg_mr(struct mrc_ctx *ctx, struct mrc_mr *mr);
/** The remote-addressable VA of @p inside a registered region (for peers). */
uint64_t mrc_va(const struct mrc_ctx *ctx, const void *p);

/* ---- queue pairs -------------------------------------------------------------- */

struct mrc_qp_attr {
	uint32_t sq_depth;        /**< outstanding sends on this QP; 0 = daemon default */
	uint32_t rq_depth;        /**< 0 = daemon default */
	uint64_t user_ctx;        /**< returned in this QP's completions */
};

/** Create a QP (INIT). Any thread. @return 0 with *@qpn, -ENOSPC (limit). */
int mrc_qp_create(struct mrc_ctx *ctx, const struct mrc_qp_attr *attr, uint32_t *qpn);
/** Local connection info, binary (MRC_CONN_INFO_BYTES) and text (hex). Any thread. */
int mrc_qp_info(struct mrc_ctx *ctx, uint32_t qpn, uint8_t info[MRC_CONN_INFO_BYTES]);
int mrc_qp_info_text(struct mrc_ctx *ctx, uint32_t qpn, char text[MRC_CONN_INFO_TEXT]);
/** Connect to the peer's info (binary or text form): INIT -> RTS. Any thread.
 *  @return 0, -ENOENT, -EPERM (not INIT), -EPROTO (incompatible peer), -EINVAL. */
int mrc_qp_connect(struct mrc_ctx *ctx, uint32_t qpn, const uint8_t info[MRC_CONN_INFO_BYTES]);
int mrc_qp_connect_text(struct mrc_ctx *ctx, uint32_t qpn, const char *text);
/** Destroy; its outstanding work completes with MRC_WC_FLUSH_ERR. Any thread. */
int mrc_qp_destroy(struct mrc_ctx *ctx, uint32_t qpn);

enum mrc_qp_state { MRC_QPS_RESET = 1, MRC_QPS_INIT, MRC_QPS_RTR, MRC_QPS_RTS, MRC_QPS_ERROR };

/** Why a QP entered ERROR (docs/protocol.md D70). */
enum mrc_qp_cause {
	MRC_QP_CAUSE_NONE = 0,           /**< not in ERROR */
	MRC_QP_CAUSE_RETRY_EXCEEDED = 1, /**< no progress from the peer within the retry budget */
	MRC_QP_CAUSE_REMOTE_INVALID = 2, /**< the peer refused a request as invalid (e.g. a
					  *   WRITE_IMM it had no receive posted for) */
	MRC_QP_CAUSE_REMOTE_ACCESS = 3,  /**< the peer refused rkey, bounds or permission */
	MRC_QP_CAUSE_REMOTE_OP = 4,      /**< the peer reported an operational error */
	MRC_QP_CAUSE_NO_RECV = 5,        /**< a WRITE_IMM arrived with no receive posted */
	MRC_QP_CAUSE_WIMM_OVERFLOW = 6,  /**< the peer had more WRITE_IMMs waiting than allowed */
	MRC_QP_CAUSE_BAD_REQUEST = 7,    /**< a packet from the peer broke a message rule */
	MRC_QP_CAUSE_BAD_ACCESS = 8,     /**< a Write from the peer failed the access check */
};
/** One line for a MRC_QP_CAUSE_* ("unknown cause" for others). Any thread. */
const char *mrc_qp_cause_str(uint8_t cause);

/** A QP's state and, once it is in ERROR, why (mrc_qp_query). */
struct mrc_qp_status {
	uint8_t state;            /**< enum mrc_qp_state */
	uint8_t err_status;       /**< enum mrc_wc_status its work failed with; MRC_WC_SUCCESS before ERROR */
	uint8_t err_cause;        /**< enum mrc_qp_cause; MRC_QP_CAUSE_NONE before ERROR */
	uint16_t err_msn;         /**< NO_RECV, WIMM_OVERFLOW: the message's MSN (low 16 bits) */
	uint32_t err_imm;         /**< NO_RECV: the message's immediate */
	uint32_t err_byte_len;    /**< NO_RECV: the message's length */
	char err_reason[128];     /**< the daemon's one line on the cause ("no error" before ERROR) */
};

/** A QP's state and last error, from the daemon (one control round trip).
 *  Any thread. @return 0; -EINVAL (NULL, QPN out of range), -ENOENT (not a
 *  QP of this context: the daemon answers only for the caller's own),
 *  -EIO (a reply without the fields), control errors. */
int mrc_qp_query(struct mrc_ctx *ctx, uint32_t qpn, struct mrc_qp_status *out);

/* ---- the daemon's ports ------------------------------------------------------------ */

/** One of the daemon's ports (a plane), as mrc_port_addrs() reports it. */
struct mrc_port_addr {
	uint32_t plane;           /**< 1-based plane number */
	bool up;                  /**< the engine uses the port (link, admin and gateway up) */
	uint8_t ipv4[4];          /**< the port's IPv4 address, network order; all zero if none */
	uint8_t ipv6[16];         /**< the port's IPv6 address; all zero if none */
};

/** The daemon's ports in plane order (its `ports` command). Any thread.
 *  @return how many ports the daemon has (only the first @max are written to
 *  @out, which may be NULL when @max is 0), -EINVAL (NULL @out with @max > 0),
 *  -EIO (a reply that is not an array of ports with addresses). */
int mrc_port_addrs(struct mrc_ctx *ctx, struct mrc_port_addr *out, unsigned max);

/* ---- work requests ------------------------------------------------------------- */

enum mrc_wr_opcode { MRC_WR_WRITE = 0, MRC_WR_WRITE_IMM = 1 };
enum { MRC_WR_SIGNALED = 1u << 0 };

struct mrc_sge {
	void *addr;               /**< inside a region registered with @lkey */
	uint32_t len;
	uint32_t lkey;
};

struct mrc_send_wr {
	uint64_t wr_id;
	uint8_t opcode;           /**< enum mrc_wr_opcode */
	uint8_t flags;            /**< MRC_WR_SIGNALED */
	uint32_t imm;             /**< WRITE_IMM */
	const struct mrc_sge *sg_list;
	uint32_t num_sge;         /**< 0..MRC_MAX_SGE */
	uint64_t remote_addr;     /**< the peer's mrc_mr.va (+ offset) */
	uint32_t rkey;
};

/** Post sends (one SQ ring per context: one thread, or serialise).
 *  Local checks only (opcode, flags, SGE count, SGE inside the arena heap,
 *  and inside its region when the lkey is one this context registered); the
 *  daemon validates keys and bounds and answers a bad request with an error
 *  completion. @return the number posted (0..n; fewer when the ring is full),
 *  or -EINVAL for a malformed request or a @qpn that is not a QP of this
 *  context (every request is checked first: nothing is posted then). */
int mrc_post_send(struct mrc_ctx *ctx, uint32_t qpn, const struct mrc_send_wr *wr, unsigned n);
/** Post receive slots for incoming WriteImm (one RQ ring per context: one
 *  thread, or serialise). @return posted count (fewer when the ring is full)
 *  or -EINVAL (NULL @wr_id, @qpn not a QP of this context). */
int mrc_post_recv(struct mrc_ctx *ctx, uint32_t qpn, const uint64_t *wr_id, unsigned n);

/* ---- completions ---------------------------------------------------------------- */

enum mrc_wc_opcode {
	MRC_WC_WRITE = 0,
	MRC_WC_RECV_WRITE_IMM = 1,
	MRC_WC_QP_ERROR = 2,        /**< no work request: the QP entered ERROR (an async event,
				     *   after the completions its work was flushed with) */
};
enum mrc_wc_status {
	MRC_WC_SUCCESS = 0,
	MRC_WC_LOC_PROT_ERR = 1,    /**< bad lkey, or an SGE outside its region */
	MRC_WC_REM_ACCESS_ERR = 2,  /**< the responder refused rkey or bounds */
	MRC_WC_RETRY_EXC_ERR = 3,   /**< no progress from the peer within the retry budget */
	MRC_WC_FLUSH_ERR = 4,       /**< the QP went to ERROR or was destroyed */
	MRC_WC_GENERAL_ERR = 5,     /**< bad opcode, unknown QP, limit exceeded */
	MRC_WC_REM_INV_REQ_ERR = 6, /**< the responder refused the request as invalid
				     *   (e.g. a WRITE_IMM with no receive posted) */
	MRC_WC_REM_OP_ERR = 7,      /**< the responder reported an operational error */
};

struct mrc_wc {
	uint64_t wr_id;           /**< 0 for MRC_WC_QP_ERROR */
	uint32_t qpn;
	uint32_t byte_len;        /**< MRC_WC_QP_ERROR: the message concerned (cause NO_RECV) */
	union {
		uint32_t imm;     /**< MRC_WC_RECV_WRITE_IMM: the immediate */
		uint32_t cause;   /**< MRC_WC_QP_ERROR: enum mrc_qp_cause */
	};
	uint16_t msn;
	uint8_t opcode;           /**< enum mrc_wc_opcode */
	uint8_t status;           /**< enum mrc_wc_status */
};
const char *mrc_wc_status_str(uint8_t status);

/** Take up to @max completions (one thread). @return count (0..max). */
int mrc_poll_cq(struct mrc_ctx *ctx, struct mrc_wc *wc, unsigned max);
/** Block until a completion is ready or @timeout_ms passes (-1 = forever):
 *  @return 1 ready, 0 timeout, -EPIPE (daemon gone), -EINTR. */
int mrc_wait_cq(struct mrc_ctx *ctx, int timeout_ms);
/** The eventfd mrc_wait_cq blocks on, for the application's own poll loop:
 *  call mrc_arm_cq() first; readable means "poll the CQ". */
int mrc_cq_fd(const struct mrc_ctx *ctx);
/** @return true if the CQ is empty and the fd armed (safe to block). */
bool mrc_arm_cq(struct mrc_ctx *ctx);

#ifdef __cplusplus
}
#endif
#endif
