/* mrcfi.h - what the files of libmrc-fi (the libfabric provider "mrc") share:
 * the objects behind every fid, the ring-message wire header, the bootstrap
 * messages and the functions one file calls in another. Not installed; the
 * design is docs/libfabric.md.
 *
 * Locking: every endpoint has one mutex (ep->lock) that guards everything
 * the endpoint owns, including its libmrc-client context's data path; the
 * bootstrap thread takes it only for short updates and never while it waits
 * on the network or the daemon. A CQ, counter, EQ and AV each have their
 * own mutex, always taken after an endpoint's, never before. */
#ifndef MRCFI_H
#define MRCFI_H

#include <mrc_client.h>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <rdma/providers/fi_log.h>
#include <rdma/providers/fi_prov.h>

#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#define MRCFI_HIDDEN __attribute__((visibility("hidden")))

extern struct fi_provider mrcfi_prov MRCFI_HIDDEN;

/* ---- tunables (FI_MRC_*, read once at fi_prov_ini) ------------------------- */

struct mrcfi_params {
	char socket[108];         /**< the daemon's control socket; "" = libmrc-client's default */
	size_t heap_mb;           /**< arena heap per endpoint, MiB */
	size_t ring_slots;        /**< ring slots per connection and direction (power of two) */
	size_t eager_size;        /**< largest payload sent eagerly, bytes; above it: rendezvous */
	char boot_addr[64];       /**< IPv4 address the bootstrap listener binds and advertises */
	size_t max_msg_size;      /**< largest message, bytes; at most a quarter of the heap */
};
extern struct mrcfi_params mrcfi_params MRCFI_HIDDEN;

/* ---- intrusive list --------------------------------------------------------- */

struct mrcfi_list {
	struct mrcfi_list *next, *prev;
};

static inline void mrcfi_list_init(struct mrcfi_list *l) { l->next = l->prev = l; }
static inline bool mrcfi_list_empty(const struct mrcfi_list *l) { return l->next == l; }
static inline void mrcfi_list_add_tail(struct mrcfi_list *l, struct mrcfi_list *e)
{
	e->prev = l->prev;
	e->next = l;
	l->prev->next = e;
	l->prev = e;
}
static inline void mrcfi_list_del(struct mrcfi_list *e)
{
	e->prev->next = e->next;
	e->next->prev = e->prev;
	e->next = e->prev = e;
}
#define mrcfi_container(ptr, type, member) ((type *)(void *)((char *)(ptr) - offsetof(type, member)))

/* ---- the address fi_getname returns ------------------------------------------ */

#define MRCFI_NAME_MAGIC 0x4d524346u  /* "MRCF" */
#define MRCFI_NAME_VERSION 1
#define MRCFI_MAX_PLANES 8

/** Self-describing endpoint address: where its bootstrap listener is, which
 *  endpoint (a random id), and the daemon's plane addresses (for people and
 *  fi_av_straddr; the QP's connection info carries them again). Network
 *  byte order where it matters; compared bytewise. */
struct mrcfi_name {
	uint32_t magic;           /**< MRCFI_NAME_MAGIC */
	uint8_t version;          /**< MRCFI_NAME_VERSION */
	uint8_t n_planes;         /**< valid entries of plane[] */
	uint16_t boot_port;       /**< bootstrap TCP port, network order */
	uint32_t boot_ip;         /**< bootstrap IPv4 address, network order */
	uint32_t pid;             /**< the owning process (diagnostics) */
	uint64_t ep_id;           /**< random, names the endpoint */
	uint32_t plane[MRCFI_MAX_PLANES]; /**< IPv4 plane addresses, network order; 0 if not IPv4 */
};
_Static_assert(sizeof(struct mrcfi_name) == 56, "address layout");

/* ---- the ring message header (the first bytes of every ring slot) ------------- */

enum mrcfi_msg_type {
	MRCFI_MSG_EAGER = 1,      /**< a whole message: header + payload in the slot */
	MRCFI_MSG_RTS = 2,        /**< rendezvous request: size, tag, data; no payload */
	MRCFI_MSG_CTS = 3,        /**< receiver -> sender: write @len bytes to va/rkey */
	MRCFI_MSG_FIN = 4,        /**< sender -> receiver: the rendezvous data is placed */
	MRCFI_MSG_WDATA = 5,      /**< after an fi_writedata's Write: the remote CQ data */
};
enum { MRCFI_HF_TAGGED = 1u << 0, MRCFI_HF_DATA = 1u << 1 };

struct mrcfi_hdr {
	uint8_t type;             /**< enum mrcfi_msg_type */
	uint8_t flags;            /**< MRCFI_HF_* */
	uint16_t rsv;
	uint32_t data;            /**< remote CQ data (MRCFI_HF_DATA) */
	uint64_t tag;
	uint64_t size;            /**< EAGER: payload bytes; RTS: message bytes; CTS: bytes accepted;
				       FIN/WDATA: bytes written */
	uint64_t sid;             /**< the sender's operation id (RTS, CTS echoes it) */
	uint64_t rid;             /**< the receiver's operation id (CTS, FIN echoes it) */
	uint64_t va;              /**< CTS: where to write (the receiver's arena) */
	uint32_t rkey;            /**< CTS: its rkey */
	uint32_t rsv2;
	uint64_t rsv3;
};
_Static_assert(sizeof(struct mrcfi_hdr) == 64, "ring header layout");

/* ---- bootstrap (TCP) messages ---------------------------------------------------- */

#define MRCFI_BOOT_MAGIC 0x4d524342u  /* "MRCB" */

/** One request (initiator -> target) or reply (target -> initiator). */
struct mrcfi_boot {
	uint32_t magic;           /**< MRCFI_BOOT_MAGIC */
	int32_t status;           /**< reply: 0 or a negative errno */
	struct mrcfi_name from;   /**< the sender's address */
	uint64_t to_ep_id;        /**< request: the target endpoint's id */
	uint64_t ring_va;         /**< the sender's receive ring (peer-visible VA) */
	uint64_t credit_va;       /**< where the peer writes its consumed-slot count */
	uint32_t rkey;            /**< rkey of the sender's heap */
	uint32_t slots;           /**< ring slots */
	uint32_t slot_size;       /**< bytes per slot */
	uint32_t rsv;
	uint8_t qp_info[MRC_CONN_INFO_BYTES];
};

/* ---- fabric, domain, EQ ------------------------------------------------------------ */

struct mrcfi_fabric {
	struct fid_fabric fab;
};

struct mrcfi_domain {
	struct fid_domain dom;
	struct mrcfi_fabric *fabric;
	pthread_mutex_t lock;     /**< guards mrs */
	struct mrcfi_list mrs;    /**< struct mrcfi_mr */
	struct mrcfi_list eps;    /**< struct mrcfi_ep (under lock) */
	uint64_t mr_mode;
};

struct mrcfi_eq {
	struct fid_eq eq;
	pthread_mutex_t lock;
	struct mrcfi_list events; /**< struct mrcfi_eq_ev */
};

/* ---- memory regions ------------------------------------------------------------------ */

/** A run of the endpoint's arena heap, [p, p + len). */
struct mrcfi_ext {
	struct mrcfi_ext *next;
	uint8_t *p;
	size_t len;
};

/** A page-aligned piece of application memory moved into an endpoint's arena
 *  (remapped in place, docs/libfabric.md "Memory"). */
struct mrcfi_alias {
	struct mrcfi_list link;   /**< in ep->aliases */
	uintptr_t start, end;     /**< application pages [start, end) */
	void *arena;              /**< the same pages in the arena mapping */
	unsigned refs;
};

struct mrcfi_mr {
	struct fid_mr mr;
	struct mrcfi_domain *domain;
	struct mrcfi_list link;   /**< in domain->mrs */
	uintptr_t addr;           /**< first byte registered */
	size_t len;
	uint64_t access;
	struct mrcfi_ep *ep;      /**< remote-write regions: the endpoint whose arena holds it */
	struct mrcfi_alias *alias;
};

/* ---- completion queues and counters ---------------------------------------------------- */

struct mrcfi_cqe {
	void *op_context;
	uint64_t flags;
	size_t len;
	void *buf;
	uint64_t data;
	uint64_t tag;
	fi_addr_t src;
	int err;                  /**< positive FI_E* for an error entry, 0 otherwise */
	size_t olen;
};

struct mrcfi_cq {
	struct fid_cq cq;
	struct mrcfi_domain *domain;
	pthread_mutex_t lock;     /**< guards the queues */
	enum fi_cq_format format;
	enum fi_wait_obj wait_obj;
	struct mrcfi_cqe *q;      /**< ring of successful entries */
	size_t q_cap, q_head, q_tail;
	struct mrcfi_cqe *eq;     /**< ring of error entries */
	size_t eq_cap, eq_head, eq_tail;
	struct mrcfi_ep *eps[16]; /**< endpoints bound (progressed by reads) */
	unsigned n_eps;
	int signal_fd;            /**< eventfd: fi_cq_signal and completions from other threads */
	unsigned empty_reads;     /**< consecutive reads that found nothing */
};

struct mrcfi_cntr {
	struct fid_cntr cntr;
	struct mrcfi_domain *domain;
	pthread_mutex_t lock;
	uint64_t value, err;
	struct mrcfi_ep *eps[16];
	unsigned n_eps;
};

/* ---- address vectors ------------------------------------------------------------------- */

struct mrcfi_av {
	struct fid_av av;
	struct mrcfi_domain *domain;
	pthread_mutex_t lock;
	enum fi_av_type type;
	struct mrcfi_name *names; /**< index = fi_addr */
	bool *valid;
	size_t n, cap;
	uint64_t gen;             /**< bumped by every insert/remove */
};

/* ---- connections ------------------------------------------------------------------------ */

enum mrcfi_conn_state {
	MRCFI_CONN_CONNECTING = 1, /**< the bootstrap thread is exchanging connection info */
	MRCFI_CONN_READY = 2,
	MRCFI_CONN_FAILED = 3,     /**< QP error or bootstrap failure; its work completed with FI_EIO */
};

/** One MRC QP between two endpoints, with a receive ring in each direction. */
struct mrcfi_conn {
	struct mrcfi_list link;   /**< in ep->conns */
	struct mrcfi_list connect_link; /**< in ep->connect_q (initiator, until the thread takes it) */
	struct mrcfi_ep *ep;
	enum mrcfi_conn_state state;
	bool initiator;
	uint32_t qpn;
	struct mrcfi_name peer;   /**< the remote endpoint's address */
	fi_addr_t fi_addr;        /**< the peer in our AV, FI_ADDR_NOTAVAIL if not (yet) known */
	uint64_t av_gen;          /**< AV generation fi_addr was looked up at */

	/* our memory for this connection, one arena block */
	uint8_t *mem;
	volatile uint64_t *credit_in; /**< the peer writes how many of our slots it consumed */
	uint64_t *credit_src;     /**< 4 words: sources of our credit writes */
	uint8_t *rx_ring;         /**< slots the peer writes into */
	uint8_t *tx_stage;        /**< our staging copies of what we write into the peer's ring */
	uint32_t slots, slot_size;

	/* the peer's ring */
	uint64_t r_ring_va, r_credit_va;
	uint32_t r_rkey, r_slots, r_slot_size;

	/* sender side (WriteImm into the peer's ring) */
	uint64_t tx_seq;          /**< ring messages posted */
	uint64_t tx_done;         /**< ring messages whose send completed */
	struct mrcfi_list txq;    /**< struct mrcfi_op waiting for credits, staging or the QP, in order */
	struct mrcfi_list ctrlq;  /**< rendezvous steps (CTS, data + FIN): ahead of txq */

	/* receiver side */
	uint64_t rx_seq;          /**< ring messages received and handled */
	uint64_t rx_returned;     /**< consumed count last written to the peer */
	unsigned credit_wr;       /**< credit writes in flight (0 or 1) */
	uint64_t credit_wr_seq;   /**< credit writes posted */
	uint64_t recv_posted;     /**< receives posted on the QP */
	unsigned recv_deficit;    /**< receives still to repost (the ring was full) */

	struct mrcfi_list waiting; /**< ops waiting for the peer (CTS or FIN) */
	uint64_t heard_ms;        /**< CLOCK_MONOTONIC ms of the last ring message or probe answer */
	uint64_t probe_ms;        /**< when the last liveness probe was posted */
	unsigned wr_out;          /**< work requests posted and not yet completed */
	int boot_fd;              /**< initiator: the bootstrap socket while waiting for the reply */
	bool boot_sent;
	bool destroyed_qp;
};

/* ---- operations ---------------------------------------------------------------------------- */

enum mrcfi_op_kind { MRCFI_OP_SEND = 1, MRCFI_OP_RECV, MRCFI_OP_WRITE, MRCFI_OP_CTRL };
enum mrcfi_op_state {
	MRCFI_OPS_QUEUED = 1,     /**< in a conn's txq, or a posted receive */
	MRCFI_OPS_WAIT_CTS,       /**< rendezvous send: RTS sent */
	MRCFI_OPS_WAIT_FIN,       /**< rendezvous receive: CTS sent */
	MRCFI_OPS_POSTED,         /**< its last work request is in flight */
	MRCFI_OPS_DONE,
};

#define MRCFI_IOV_MAX 4

struct mrcfi_op {
	struct mrcfi_list link;   /**< in one queue at a time */
	uint32_t idx, gen;        /**< id = gen << 32 | idx (the wire names ops this way) */
	uint8_t kind;             /**< enum mrcfi_op_kind */
	uint8_t state;            /**< enum mrcfi_op_state */
	uint8_t ctrl_type;        /**< MRCFI_OP_CTRL: enum mrcfi_msg_type to send */
	bool rdv;                 /**< send: above the eager size */
	bool claimed;             /**< FI_CLAIM */
	uint64_t flags;           /**< FI_* flags: FI_MSG/FI_TAGGED/FI_RMA, FI_COMPLETION, FI_INJECT, ... */
	void *context;
	fi_addr_t addr;           /**< destination, or source filter (FI_ADDR_UNSPEC) */
	fi_addr_t src;            /**< receive: where the message came from */
	uint64_t tag, ignore, data;
	struct iovec iov[MRCFI_IOV_MAX];
	size_t iov_count;
	size_t len;               /**< total bytes */
	void *desc[MRCFI_IOV_MAX];
	void *copy;               /**< malloc'ed copy of an injected payload */
	struct mrcfi_conn *conn;  /**< the connection it uses */
	uint64_t peer_id;         /**< rendezvous: the other side's op id */
	uint64_t peer_va;         /**< rendezvous send: where to write; RMA: remote arena VA */
	uint32_t peer_rkey;
	size_t xfer;              /**< rendezvous: bytes to move (after truncation) */
	void *bounce;             /**< arena block (rendezvous bounce or staging) */
	bool bounce_is_user;      /**< bounce points into a registered (arena) buffer: not ours to free */
	bool data_posted;         /**< rendezvous/RMA: the data Write is posted */
	bool inject;              /**< no success completion (fi_inject*) */
	unsigned wr_out;          /**< work requests in flight for it */
	int err;                  /**< first error (positive FI_E*), 0 = fine */
	size_t olen;              /**< bytes truncated */
	struct mrcfi_uexp *ux;    /**< receive with FI_CLAIM: the claimed message */
};

/** What a posted work request was for (its wr_id points here). */
enum mrcfi_wr_kind {
	MRCFI_WR_RING = 1,        /**< a WriteImm into the peer's ring (frees a staging slot) */
	MRCFI_WR_DATA,            /**< a rendezvous or RMA payload Write */
	MRCFI_WR_CREDIT,          /**< a credit-word Write */
};
struct mrcfi_wr {
	struct mrcfi_wr *next;    /**< free list */
	uint8_t kind;             /**< enum mrcfi_wr_kind */
	struct mrcfi_conn *c;
	struct mrcfi_op *op;      /**< the op it counts against, or NULL */
};

/** An unexpected message: arrived before a matching receive. */
struct mrcfi_uexp {
	struct mrcfi_list link;
	struct mrcfi_conn *conn;
	bool tagged, rts, claimed;
	uint64_t tag, data, flags; /**< flags: FI_REMOTE_CQ_DATA */
	size_t size;              /**< message bytes */
	void *payload;            /**< eager: malloc'ed copy */
	uint64_t sid;             /**< rts: the sender's op id */
	void *claim_ctx;          /**< FI_CLAIM: the peeking receive's context */
};

/* ---- the endpoint --------------------------------------------------------------------------- */

struct mrcfi_ep {
	struct fid_ep ep;
	struct mrcfi_domain *domain;
	struct mrcfi_list dom_link;
	pthread_mutex_t lock;
	struct fi_info *info;
	uint64_t caps;
	uint64_t tx_op_flags, rx_op_flags;
	bool enabled;

	struct mrcfi_cq *tx_cq, *rx_cq;
	bool tx_selective, rx_selective;
	struct mrcfi_cntr *cntr_send, *cntr_recv, *cntr_write, *cntr_rwrite;
	struct mrcfi_av *av;
	struct mrcfi_eq *eq;

	/* libmrc-client */
	struct mrc_ctx *ctx;
	uint8_t *heap;            /**< the whole arena heap, one block */
	size_t heap_len;
	struct mrc_mr heap_mr;    /**< one region over all of it */
	pthread_mutex_t heap_lock; /**< guards the two extent lists (a leaf lock) */
	struct mrcfi_ext *heap_free; /**< free extents, sorted by address, never adjacent */
	struct mrcfi_ext *heap_used; /**< allocated blocks */

	struct mrcfi_name name;

	/* connections */
	struct mrcfi_list conns;
	struct mrcfi_conn **by_peer; /**< fi_addr -> the connection we send on */
	size_t by_peer_cap;
	struct mrcfi_conn **by_qpn;  /**< open hash, qpn -> conn */
	size_t by_qpn_cap;
	struct mrcfi_list connect_q; /**< conns for the bootstrap thread to initiate */

	/* matching */
	struct mrcfi_list rx_msg, rx_tag;   /**< posted receives */
	struct mrcfi_list ux_msg, ux_tag;   /**< unexpected messages */
	struct mrcfi_list mem_wait;         /**< ops waiting for arena memory */

	/* operations */
	struct mrcfi_op **ops;    /**< by idx */
	size_t ops_cap;
	struct mrcfi_list op_free;
	size_t ops_live;

	struct mrcfi_list aliases;
	struct mrcfi_wr *wr_free;

	/* bootstrap thread */
	pthread_t thread;
	bool thread_started;
	int listen_fd, wake_fd;   /**< wake_fd: eventfd, the thread's doorbell */
	int app_wake_fd;          /**< eventfd: the thread tells blocked readers something changed */
	volatile bool stopping;
};

/* ---- cross-file functions -------------------------------------------------------------------- */

/* prov.c */
MRCFI_HIDDEN int mrcfi_domain_open(struct fid_fabric *fabric, struct fi_info *info,
				   struct fid_domain **dom, void *context);
MRCFI_HIDDEN int mrcfi_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr,
			       struct fid_eq **eq, void *context);
MRCFI_HIDDEN int mrcfi_errno(int neg_errno);
/* fi_ops members for what no object of ours does: -FI_ENOSYS */
MRCFI_HIDDEN int mrcfi_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags);
MRCFI_HIDDEN int mrcfi_no_control(struct fid *fid, int command, void *arg);
MRCFI_HIDDEN int mrcfi_no_ops_open(struct fid *fid, const char *name, uint64_t flags, void **ops, void *context);
MRCFI_HIDDEN int mrcfi_no_tostr(const struct fid *fid, char *buf, size_t len);
MRCFI_HIDDEN int mrcfi_no_ops_set(struct fid *fid, const char *name, uint64_t flags, void *ops, void *context);

/* cq.c */
MRCFI_HIDDEN int mrcfi_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
			       struct fid_cq **cq, void *context);
MRCFI_HIDDEN int mrcfi_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr,
				 struct fid_cntr **cntr, void *context);
MRCFI_HIDDEN void mrcfi_cq_push(struct mrcfi_cq *cq, const struct mrcfi_cqe *e);
MRCFI_HIDDEN void mrcfi_cntr_inc(struct mrcfi_cntr *c, bool err);
extern struct fi_ops_mr mrcfi_mr_ops MRCFI_HIDDEN;
MRCFI_HIDDEN void mrcfi_mr_ep_gone(struct mrcfi_domain *d, struct mrcfi_ep *ep);

/* av.c */
MRCFI_HIDDEN int mrcfi_av_open(struct fid_domain *domain, struct fi_av_attr *attr,
			       struct fid_av **av, void *context);
MRCFI_HIDDEN bool mrcfi_av_get(struct mrcfi_av *av, fi_addr_t a, struct mrcfi_name *out);
MRCFI_HIDDEN fi_addr_t mrcfi_av_find(struct mrcfi_av *av, const struct mrcfi_name *n, uint64_t *gen);

/* ep.c */
MRCFI_HIDDEN int mrcfi_ep_open(struct fid_domain *domain, struct fi_info *info,
			       struct fid_ep **ep, void *context);
MRCFI_HIDDEN void *mrcfi_heap_alloc(struct mrcfi_ep *ep, size_t len, size_t align);
MRCFI_HIDDEN void mrcfi_heap_free(struct mrcfi_ep *ep, void *p);
MRCFI_HIDDEN struct mrcfi_conn *mrcfi_conn_get(struct mrcfi_ep *ep, fi_addr_t addr, int *err);
MRCFI_HIDDEN struct mrcfi_conn *mrcfi_conn_by_qpn(struct mrcfi_ep *ep, uint32_t qpn);
MRCFI_HIDDEN fi_addr_t mrcfi_conn_src(struct mrcfi_conn *c);
MRCFI_HIDDEN int mrcfi_conn_post_recvs(struct mrcfi_conn *c, unsigned n);
MRCFI_HIDDEN void mrcfi_conn_fail(struct mrcfi_conn *c, int err);

/* msg.c */
extern struct fi_ops_msg mrcfi_msg_ops MRCFI_HIDDEN;
extern struct fi_ops_tagged mrcfi_tagged_ops MRCFI_HIDDEN;
extern struct fi_ops_rma mrcfi_rma_ops MRCFI_HIDDEN;
MRCFI_HIDDEN void mrcfi_ep_progress(struct mrcfi_ep *ep);
MRCFI_HIDDEN struct mrcfi_op *mrcfi_op_new(struct mrcfi_ep *ep);
MRCFI_HIDDEN void mrcfi_op_free(struct mrcfi_ep *ep, struct mrcfi_op *op);
MRCFI_HIDDEN void mrcfi_op_complete(struct mrcfi_ep *ep, struct mrcfi_op *op);
MRCFI_HIDDEN ssize_t mrcfi_cancel(fid_t fid, void *context);
MRCFI_HIDDEN void mrcfi_conn_kick(struct mrcfi_conn *c);

#endif
