/* mrcp_engine.h - the public interface of the MRC protocol engine.
 *
 * An engine is one MRC node: its ports (planes), memory regions, QPs, peers,
 * congestion-control state, timers, counters and PRNG. It does no I/O and
 * reads no clock: the host hands it received packets (mrcp_rx_burst) and
 * collects packets to send (mrcp_poll), passing the time in every call.
 * Several engines may live in one process (the simulator does this); an
 * engine is not thread-safe: one thread (a daemon lcore) owns it.
 *
 * Packets cross the interface as MRC bytes (BTH .. pad, no ICRC): the host
 * adds and strips Ethernet/IP/UDP and the ICRC (mrcp_frame.h) and steers by
 * BTH DestQP (D7).
 */
#ifndef MRCP_ENGINE_H
#define MRCP_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mrcp_cc.h"
#include "mrcp_ev.h"
#include "mrcp_frame.h"

struct mrcp_engine;

/** An IPv4 or IPv6 address; IPv4 uses a[0..3]. */
struct mrcp_ip {
	uint8_t family;           /**< 4 or 6; 0 = unset */
	uint8_t a[16];
};

/* ---- configuration ---------------------------------------------------------- */

enum mrcp_qp_mode {
	MRCP_MODE_MRC = 0,        /**< spraying, SACK, selective retransmit */
	MRCP_MODE_RC,             /**< single EV, go-back-N, RTO only: baseline */
};

struct mrcp_engine_config {
	uint64_t seed;            /**< PRNG seed: the same seed replays a run */
	uint32_t max_qps;         /**< default 256 */
	uint32_t max_mrs;         /**< default 1024 */
	uint32_t max_pds;         /**< protection domains besides the default
	                           *   one (D67), 0..65535, default 1024 */
	uint32_t max_peers;       /**< default 64 */
	uint32_t cq_size;         /**< completion queue entries, default 4096 */
	uint32_t event_queue_size;/**< default 1024 */
	uint32_t ctl_queue_size;  /**< pending control packets, default 4096 */
	uint8_t n_ports;          /**< planes, 1..MRCP_MAX_PORTS */
	uint64_t port_bps[MRCP_MAX_PORTS]; /**< link speed per port, bit/s (D54) */
	struct mrcp_ip node_addr; /**< node address (GID) */
	struct mrcp_ip port_addr[MRCP_MAX_PORTS];
	/* transport */
	uint16_t mtu;             /**< payload MTU offer: 1024, 2048, 4096 (D3) */
	uint16_t udp_port;        /**< D1; exchanged and checked at setup (D59) */
	struct mrcp_dscp_map dscp;/**< D23 */
	bool trimming_fabric;     /**< D30, D40 */
	uint8_t sack_every;       /**< D28: SACK every N new packets, default 4 */
	uint64_t base_rtt_ns;     /**< default 12 us (§6.4) */
	uint8_t timeout;          /**< D32 default 8: T = 1.024 us x 2^timeout */
	uint8_t linear_cnt;       /**< D32 default 7 */
	uint8_t exp_cnt;          /**< D32 default 12; 25 = unlimited */
	uint8_t mpr;              /**< D25 default 8 (x128 PSNs) */
	uint16_t max_wimm;        /**< D25 default 128 */
	uint32_t sq_depth;        /**< default send queue depth per QP, 1024 */
	uint32_t rq_depth;        /**< default receive queue depth per QP, 1024 */
	struct mrcp_ev_config ev; /**< defaults for every QP (D41) */
	char cc[MRCP_CC_NAME_MAX];/**< default "nscc" (D52) */
	struct mrcp_cc_params cc_params;
	bool cc_per_qp;           /**< D53: cc_scope qp instead of per peer */
	bool place_payload;       /**< copy payload to its VA (default true; off only in benchmarks) */
	uint8_t shard;            /**< D63: this engine's index among the node's engines
	                           *   (0..MRCP_SHARDS-1, default 0): the top bits of its
	                           *   QPNs and bits 23:16 of its endpoint request PSNs */
	bool preallocate;         /**< allocate every ring and table at its full size
	                           *   up front (the engine's CQ, event and control
	                           *   rings at create; a QP's send and receive
	                           *   queues, scoreboard and message ring at create
	                           *   and connect). Default false: each starts at 16
	                           *   entries and doubles, up to its configured size,
	                           *   when what is outstanding outgrows it; a doubling
	                           *   that fails counts as the structure being full */
	uint32_t timer_slots;     /**< timing-wheel slots of 1.024 us, a power of two
	                           *   >= 64; default 4096 (one round is 4.2 ms) */
	uint64_t key_seed;        /**< D68: seed of the stream memory keys are drawn
	                           *   from, apart from @seed's PRNG; 0 (default) =
	                           *   derived from @seed (a replay gets the same
	                           *   keys). A daemon passes unpredictable bits */
};

/** D63: a node may run up to MRCP_SHARDS engines (one per lcore). */
#define MRCP_SHARDS 4
#define MRCP_SHARD_QPN_SHIFT 22 /* QPN bits 23:22 name the engine that owns the QP */
/** The shard (engine index) that owns local QPN @qpn. */
static inline unsigned mrcp_qpn_shard(uint32_t qpn) { return (qpn >> MRCP_SHARD_QPN_SHIFT) & (MRCP_SHARDS - 1); }
/** The shard that sent the endpoint request a response with PSN @psn answers. */
static inline unsigned mrcp_ep_psn_shard(uint32_t psn) { return (psn >> 16) & (MRCP_SHARDS - 1); }

/** Fill @c with the defaults of docs/protocol.md (D25, D32, D41, D52...). */
void mrcp_engine_config_defaults(struct mrcp_engine_config *c);

/** @return 0 and *@out, -EINVAL for a bad config, -ENOMEM. Allocates the
 *  per-engine pools; afterwards only a ring or table that doubles (sizing by
 *  use, see preallocate) allocates on the packet path, at most log2 of its
 *  size times over its life. */
int mrcp_engine_create(const struct mrcp_engine_config *c, struct mrcp_engine **out);
void mrcp_engine_destroy(struct mrcp_engine *e);

/* ---- protection domains (D67) ------------------------------------------------ */

/*
 * Every memory region and every QP belongs to one protection domain. A
 * Write arriving on a QP may touch only the regions of that QP's PD, and a
 * send's SGEs may name only regions of the sending QP's PD (§4.2 step 4).
 * Every engine has the default PD, which always exists: mrcp_mr_reg() and a
 * QP created with attr.pd 0 use it.
 */
#define MRCP_PD_DEFAULT 0u

/** A new, empty PD. @return 0 with *@pd (never MRCP_PD_DEFAULT), -ENOSPC
 *  (max_pds in use), -ENOMEM. */
int mrcp_pd_alloc(struct mrcp_engine *e, uint32_t *pd);
/** Free an empty PD; its handle is dead afterwards. @return 0, -ENOENT (no
 *  such PD), -EINVAL (the default PD), -EBUSY (regions or QPs left in it). */
int mrcp_pd_free(struct mrcp_engine *e, uint32_t pd);

/* ---- memory regions --------------------------------------------------------- */

enum {
	MRCP_ACCESS_LOCAL_WRITE = 1u << 0,
	MRCP_ACCESS_REMOTE_WRITE = 1u << 1,
};

/**
 * Register [va, va+len) whose bytes live at @host in this process, in PD
 * @pd. VAs are the application's addresses (they go into RETH); @host is
 * where the engine reads and writes them. The key (lkey == rkey) is fresh
 * and unpredictable (D68); it is dead as soon as the region is deregistered.
 * @return 0 with *@lkey and *@rkey, -EINVAL (len 0, NULL host, bad access),
 *         -ENOENT (no such PD), -ENOSPC (table full).
 */
int mrcp_mr_reg_pd(struct mrcp_engine *e, uint32_t pd, uint64_t va, uint64_t len, void *host,
		   uint32_t access, uint32_t *lkey, uint32_t *rkey);
/** mrcp_mr_reg_pd() in the default PD. */
int mrcp_mr_reg(struct mrcp_engine *e, uint64_t va, uint64_t len, void *host,
		uint32_t access, uint32_t *lkey, uint32_t *rkey);
/** @return 0, -ENOENT (unknown key), -EBUSY (a QP has a WR using it). */
int mrcp_mr_dereg(struct mrcp_engine *e, uint32_t lkey);

/* ---- connection info (§8, D58, D59) -------------------------------- */

#define MRCP_CONN_INFO_VERSION 1
#define MRCP_CONN_INFO_LEN 208    /**< encoded size, bytes */

struct mrcp_conn_info {
	uint32_t versions;        /**< protocol versions bitmap; bit 0 = v1 */
	uint32_t qpn;
	uint32_t init_psn;        /**< first PSN of the sender's direction */
	struct mrcp_ip node_addr;
	uint8_t n_ports;
	struct mrcp_ip port_addr[MRCP_MAX_PORTS];
	uint32_t port_status_mask;
	uint16_t mtu;
	uint8_t mpr_dest;         /**< responder window, x128 PSNs */
	uint16_t max_wimm_dest;
	bool trim_nack;           /**< we answer trims with NACKs (D40) */
	bool dyn_mpr;
	bool svc_time;
	uint16_t udp_port;
	uint64_t buf_va;          /**< application data, carried for convenience */
	uint32_t buf_rkey;
	uint64_t buf_len;
};

/** Versioned, fixed-size blob. @return bytes written, -ENOBUFS. */
int mrcp_conn_info_encode(const struct mrcp_conn_info *ci, uint8_t *buf, size_t cap);
/** @return 0, -EBADMSG (bad magic/length/field), -EPROTO (blob version). */
int mrcp_conn_info_decode(const uint8_t *buf, size_t len, struct mrcp_conn_info *ci);

/* ---- queue pairs -------------------------------------------------------------- */

/*
 * QP states (§8). 0 is invalid. Legal sequences:
 * RESET -> INIT -> RTR -> RTS; any -> ERROR; ERROR -> RESET is not offered
 * (destroy and create instead).
 */
#define MRCP_QP_STATES(X) X(RESET) X(INIT) X(RTR) X(RTS) X(ERROR)
enum mrcp_qp_state {
	MRCP_QPS_INVALID = 0,
#define X(s) MRCP_QPS_##s,
	MRCP_QP_STATES(X)
#undef X
};

struct mrcp_qp_attr {
	enum mrcp_qp_mode mode;
	uint32_t sq_depth;        /**< 0 = engine default */
	uint32_t rq_depth;        /**< 0 = engine default */
	uint32_t pd;              /**< D67: its protection domain; 0 = MRCP_PD_DEFAULT */
	const char *cc;           /**< NULL = engine default */
	struct mrcp_ev_config ev; /**< n_active 0 = engine default */
	uint8_t timeout, linear_cnt, exp_cnt; /**< 0 = engine default (D32) */
	uint8_t mpr;              /**< 0 = engine default */
	uint16_t max_wimm;        /**< 0 = engine default */
	uint64_t user_ctx;        /**< returned in completions and events */
	bool fixed_init_psn;      /**< use init_psn instead of a random one (tests: PSN wrap) */
	uint32_t init_psn;        /**< 24 bits */
};

/** Create a QP in INIT (RESET -> INIT binds the EV and CC profiles).
 *  @return 0 with *@qpn, -EINVAL, -ENOENT (no such PD), -ENOSPC (no QPN
 *  free), -ENOMEM. */
int mrcp_qp_create(struct mrcp_engine *e, const struct mrcp_qp_attr *a, uint32_t *qpn);
/** Local connection info for the peer to use (qpn, init PSN, addresses...). */
int mrcp_qp_local_info(struct mrcp_engine *e, uint32_t qpn, struct mrcp_conn_info *out);
/**
 * INIT -> RTR -> RTS with the peer's info: negotiates version (D59), MTU (D3),
 * windows (§4.1), WriteImm limits, trim NACK (D40), binds the peer node.
 * @return 0, -ENOENT (no such QP), -EPERM (not in INIT), -EPROTO (no common
 *         version or a different UDP port, D59), -EINVAL (bad info), -ENOSPC
 *         (peer table full).
 */
int mrcp_qp_connect(struct mrcp_engine *e, uint32_t qpn, const struct mrcp_conn_info *peer, uint64_t now_ns);
/** Destroy: outstanding WRs are flushed with MRCP_WC_FLUSH_ERR. QPNs are not
 *  reused within 1 s (D60). @return 0, -ENOENT. */
int mrcp_qp_destroy(struct mrcp_engine *e, uint32_t qpn, uint64_t now_ns);
/** @return enum mrcp_qp_state, or 0 for an unknown QPN. */
int mrcp_qp_state(const struct mrcp_engine *e, uint32_t qpn);

/* ---- work requests -------------------------------------------------------------- */

#define MRCP_MAX_SGE 8

enum mrcp_wr_opcode { MRCP_WR_WRITE = 1, MRCP_WR_WRITE_IMM };
enum { MRCP_WR_SIGNALED = 1u << 0 };

struct mrcp_sge {
	uint64_t addr;            /**< VA inside the region of @lkey */
	uint32_t len;
	uint32_t lkey;
};

struct mrcp_send_wr {
	uint64_t wr_id;
	uint8_t opcode;           /**< enum mrcp_wr_opcode */
	uint32_t flags;           /**< MRCP_WR_SIGNALED */
	uint32_t imm;
	const struct mrcp_sge *sg_list;
	uint32_t num_sge;         /**< 0..MRCP_MAX_SGE; 0 = zero-length write */
	uint64_t remote_addr;
	uint32_t rkey;
};

/**
 * Queue a Write or WriteImm. The SGEs are checked against their regions now.
 * @return 0, -ENOENT (QP), -EPERM (QP not in RTS), -EAGAIN (send queue full),
 *         -EINVAL (opcode, num_sge, message longer than 2^31 B), -EFAULT (an
 *         SGE outside its region, a bad lkey, or a region of another PD, D67).
 */
int mrcp_qp_post_send(struct mrcp_engine *e, uint32_t qpn, const struct mrcp_send_wr *wr, uint64_t now_ns);
/** Post a receive slot for an incoming WriteImm. @return 0, -ENOENT, -EPERM
 *  (QP in RESET or ERROR), -EAGAIN (receive queue full). */
int mrcp_qp_post_recv(struct mrcp_engine *e, uint32_t qpn, uint64_t wr_id);

/* ---- completions ---------------------------------------------------------------- */

enum mrcp_wc_opcode {
	MRCP_WC_WRITE = 1,        /**< requester: a Write finished */
	MRCP_WC_WRITE_IMM,        /**< requester: a WriteImm finished */
	MRCP_WC_RECV_IMM,         /**< responder: a WriteImm arrived (consumes a receive) */
};

#define MRCP_WC_STATUSES(X)                                                    \
	X(SUCCESS, "success")                                                  \
	X(FLUSH_ERR, "flushed: the QP entered ERROR or was destroyed")         \
	X(RETRY_EXC_ERR, "retry count exceeded: no progress from the peer")    \
	X(REM_ACCESS_ERR, "remote access error: rkey, bounds or permission")   \
	X(REM_INV_REQ_ERR, "remote invalid request")                           \
	X(REM_OP_ERR, "remote operational error")
enum mrcp_wc_status {
#define X(n, d) MRCP_WC_##n,
	MRCP_WC_STATUSES(X)
#undef X
};
const char *mrcp_wc_status_str(uint8_t status);

struct mrcp_wc {
	uint64_t wr_id;
	uint64_t user_ctx;        /**< the QP's */
	uint32_t qpn;
	uint8_t opcode;           /**< enum mrcp_wc_opcode */
	uint8_t status;           /**< enum mrcp_wc_status */
	uint32_t byte_len;        /**< message length */
	uint32_t imm;             /**< MRCP_WC_RECV_IMM */
	uint16_t msn;
};

/** Take up to @max completions. Per QP they come in MSN order. */
unsigned mrcp_poll_cq(struct mrcp_engine *e, struct mrcp_wc *wc, unsigned max);

/* ---- why a QP entered ERROR (D70) ------------------------------------------------- */

/*
 * X(NAME, name, description): the description is plain ASCII, one line, for
 * logs and the client's mrc_qp_query. The first four come from the peer (its
 * NAK or NACK, §4.8) or from its silence (§4.5); the rest are the
 * responder's own findings about what the peer sent (§4.2 step 4; NO_RECV
 * and WIMM_OVERFLOW: §4.8, D70). Numbered in this order from 0; lib/shm's
 * and libmrc-client's cause numbers are the same.
 */
#define MRCP_QP_ERRS(X)                                                        \
	X(NONE, none, "no error")                                              \
	X(RETRY_EXCEEDED, retry_exceeded, "retry count exceeded: no progress from the peer") \
	X(REMOTE_INVALID, remote_invalid, "the peer answered NAK invalid request (e.g. a WriteImm it had no receive posted for)") \
	X(REMOTE_ACCESS, remote_access, "the peer answered NAK remote access error (rkey, bounds or permission)") \
	X(REMOTE_OP, remote_op, "the peer reported a remote operational error") \
	X(NO_RECV, no_recv, "a WriteImm arrived with no receive posted")       \
	X(WIMM_OVERFLOW, wimm_overflow, "the peer had more completed WriteImm messages waiting than max_wimm") \
	X(BAD_REQUEST, bad_request, "a packet from the peer broke a message rule") \
	X(BAD_ACCESS, bad_access, "a Write from the peer failed the rkey, bounds or permission check")
enum mrcp_qp_err_cause {
#define X(N, n, d) MRCP_QP_ERR_##N,
	MRCP_QP_ERRS(X)
#undef X
	MRCP_QP_ERR_COUNT
};
/** "no_recv", ...: the lower-case name of @cause, "unknown" outside the list. */
const char *mrcp_qp_err_name(uint8_t cause);
/** The one-line description of @cause. */
const char *mrcp_qp_err_str(uint8_t cause);

/** Why a QP is in ERROR (all zero while it is not): mrcp_qp_info and
 *  MRCP_EVENT_QP_ERROR report it. */
struct mrcp_qp_err {
	uint8_t status;           /**< enum mrcp_wc_status its oldest WR completed with */
	uint8_t cause;            /**< enum mrcp_qp_err_cause */
	uint16_t msn;             /**< NO_RECV, WIMM_OVERFLOW: the message's MSN */
	uint32_t imm;             /**< NO_RECV: the message's immediate */
	uint32_t byte_len;        /**< NO_RECV: the message's length */
};

/* ---- events for the control plane ----------------------------------------------- */

enum mrcp_event_type {
	MRCP_EVENT_EV_STATE = 1,  /**< an EV changed state (§5.3 "events") */
	MRCP_EVENT_QP_ERROR,      /**< a QP entered ERROR (qp_error says why, D70) */
	MRCP_EVENT_PEER_PORTS,    /**< a peer's port mask changed (§5.6) */
	MRCP_EVENT_EV_PROBE,      /**< an EV probe was answered or timed out (§7) */
};

struct mrcp_event {
	uint8_t type;
	uint32_t qpn;
	uint64_t user_ctx;
	uint64_t now_ns;
	union {
		struct mrcp_ev_change ev;
		struct mrcp_qp_err qp_error;
		struct { struct mrcp_ip node; uint32_t mask; } peer_ports;
		struct { struct mrcp_ip node; uint8_t port; uint32_t ev; bool ok; uint64_t rtt_ns; } probe;
	};
};

/** Take up to @max events. If the queue overflows the oldest are kept and
 *  events_dropped counts the rest. */
unsigned mrcp_poll_events(struct mrcp_engine *e, struct mrcp_event *ev, unsigned max);

/* ---- packets ----------------------------------------------------------------------- */

/** One received packet, as the frame layer parsed it. The ICRC has been
 *  checked (or the packet is trimmed, D24). */
struct mrcp_rx {
	const uint8_t *data;      /**< MRC bytes: BTH .. pad, no ICRC */
	uint32_t len;
	uint8_t port;             /**< 1-based arrival port */
	uint8_t ecn;              /**< IP ECN bits; 3 = CE */
	uint8_t trim;             /**< enum mrcp_trim of mrcp_frame.h (D34) */
	uint32_t ev;              /**< D4/D5, from the UDP source port / flow label */
	struct mrcp_ip src;       /**< source address (SRv6: the inner one): a
				   *   QP takes packets only from its peer's
				   *   address on @port (D69) */
};

/** Process @n received packets. Everything is consumed; bad packets are
 *  counted and dropped. Control replies are queued for mrcp_poll. */
void mrcp_rx_burst(struct mrcp_engine *e, const struct mrcp_rx *pkts, unsigned n, uint64_t now_ns);

#define MRCP_TX_HDR_MAX 64
#define MRCP_TX_MAX_SEGS 8 /* a packet may span every SGE */

/** One packet to send. The host wraps it in Ethernet/IP/UDP for @port with
 *  @dscp/@ecn and @ev, sends to @dst, and appends @pad zero bytes + ICRC. */
struct mrcp_tx {
	uint8_t hdr[MRCP_TX_HDR_MAX]; /**< BTH and extension headers, encoded */
	uint16_t hdr_len;
	uint8_t n_seg;
	uint8_t pad;              /**< zero bytes after the payload */
	struct {
		const uint8_t *ptr;   /**< in a registered region: valid until the WR completes */
		uint32_t len;
	} seg[MRCP_TX_MAX_SEGS];
	uint32_t payload_len;
	uint8_t port;             /**< 1-based */
	uint8_t dscp;
	uint8_t ecn;              /**< ECT(0) for data and probes, Not-ECT for control (D9) */
	uint8_t opcode;
	uint32_t ev;
	uint32_t psn;
	uint32_t qpn;             /**< local QPN (0 for endpoint operations) */
	bool rtx;
	struct mrcp_ip dst;       /**< the peer's address on @port */
};

/**
 * Run timers and emit up to @max packets: control first, then
 * retransmissions, then new data within each QP's window and the congestion
 * window, round-robin over QPs. @return the number of packets in @out.
 */
unsigned mrcp_poll(struct mrcp_engine *e, uint64_t now_ns, struct mrcp_tx *out, unsigned max);

/** The earliest time mrcp_poll has timer work, or UINT64_MAX: lets an idle
 *  host sleep (the daemon's adaptive idle, the simulator's event queue). */
uint64_t mrcp_next_deadline(const struct mrcp_engine *e);

/**
 * Tell the engine that its host did not run it until @now_ns (a worker that
 * measured a gap in its own loop, a process resumed from a stop). Timers
 * that fell due before @now_ns run again from it, as for a stall the engine
 * finds itself from a late timer (D65); counted in the engine's `stalls`.
 * Call it before the first mrcp_rx_burst / mrcp_poll after the gap.
 */
void mrcp_engine_stalled(struct mrcp_engine *e, uint64_t now_ns);

/** Whether @port's TX stage has room (D42: full ports are skipped). */
void mrcp_port_set_tx_room(struct mrcp_engine *e, uint8_t port, bool room);

/** Local link up/down (D50): mask or unmask the port's EVs, retransmit its
 *  outstanding packets elsewhere, and tell every peer. @return 0, -EINVAL. */
int mrcp_port_set_link(struct mrcp_engine *e, uint8_t port, bool up, uint64_t now_ns);

/** Send an EV probe (§7) to @node on @port with @ev. The answer arrives as an
 *  MRCP_EVENT_EV_PROBE. @return 0, -EINVAL, -ENOENT (unknown peer), -EBUSY
 *  (rate limit), -ENOSPC. */
int mrcp_ev_probe(struct mrcp_engine *e, const struct mrcp_ip *node, uint8_t port, uint32_t ev, uint64_t now_ns);

/** Controller denylist (§5.3): deny or allow EV @ev of QP @qpn. */
int mrcp_qp_ev_deny(struct mrcp_engine *e, uint32_t qpn, uint32_t ev, bool deny, uint64_t now_ns);

/** Responder placement backlog in percent (D55): the host's receive rings. */
void mrcp_qp_set_backlog(struct mrcp_engine *e, uint32_t qpn, uint8_t percent);

/* ---- counters ------------------------------------------------------------------- */

/** Engine-wide counters: X(name, description). Never reset. */
#define MRCP_ENGINE_COUNTERS(X)                                                \
	X(rx_pkts, "packets received")                                         \
	X(rx_bad_decode, "dropped: MRC header decode failed")                  \
	X(rx_unknown_qp, "dropped: DestQP not a live QP (D60)")                \
	X(rx_bad_state, "dropped: QP not in RTR/RTS")                          \
	X(rx_bad_opcode, "dropped: opcode not valid in this direction")        \
	X(rx_foreign_src, "dropped: not from the QP's peer (address on the arrival plane, QPN); endpoint ops: a known node's on another plane, a response from an unknown one (D69)") \
	X(tx_pkts, "packets emitted")                                          \
	X(ctl_dropped, "control packets dropped: control queue full")          \
	X(cq_overflow, "completions held back: completion queue full")         \
	X(events_dropped, "events dropped: event queue full")                  \
	X(ep_rx, "endpoint operations received")                               \
	X(ep_tx, "endpoint operations sent")                                   \
	X(ep_stale, "stale port-status updates and other engines' responses ignored")                       \
	X(port_down_events, "local port down events")                          \
	X(stalls, "local stalls: called a timer's worth late (D65)")

/** Per-QP counters. */
#define MRCP_QP_COUNTERS(X)                                                    \
	X(tx_data_pkts, "data packets sent, first transmissions")              \
	X(tx_data_bytes, "payload bytes sent, first transmissions")            \
	X(rtx_fast, "retransmissions: inferred loss (D29)")                    \
	X(rtx_nack, "retransmissions: NACK")                                   \
	X(rtx_rto, "retransmissions: RTO")                                     \
	X(rtx_port_down, "retransmissions: local port down (D50)")             \
	X(rtx_spurious, "fast retransmissions found unneeded (original SACKed)") \
	X(losses_undone, "EV charges for losses or RTOs undone: an earlier copy arrived (D64)") \
	X(rx_data_pkts, "data packets received and placed")                    \
	X(rx_data_bytes, "payload bytes placed")                               \
	X(rx_dup, "duplicate data packets (not placed)")                       \
	X(rx_trimmed, "trimmed data packets received")                         \
	X(rx_oor, "data packets beyond the window")                            \
	X(sack_tx, "SACKs sent")                                               \
	X(sack_rx, "SACKs received")                                           \
	X(nack_tx, "NACKs sent")                                               \
	X(nack_rx, "NACKs received")                                           \
	X(ack_tx, "AETH ACK/NAKs sent")                                        \
	X(ack_rx, "AETH ACK/NAKs received")                                    \
	X(probe_tx, "reliability probes sent")                                 \
	X(probe_rx, "reliability probes received")                             \
	X(rto_rounds, "RTO rounds")                                            \
	X(rto_unblamed, "RTO expiries charged to no EV: the peer silent on every EV since the packet left (D75)") \
	X(silent_rounds, "RTO expiries met with probes: nothing later acknowledged (D65)") \
	X(suspects, "PSNs held for a loss verdict (D65)")                      \
	X(suspects_cleared, "suspects acknowledged before their verdict: reordering (D65)") \
	X(losses, "packets declared lost (D29)")                               \
	X(wc_ok, "completions, success")                                       \
	X(wc_err, "completions, error")                                        \
	X(stalls_no_ev, "sends held: no eligible EV")                          \
	X(stalls_cwnd, "sends held: congestion window")                        \
	X(stalls_window, "sends held: PSN window (MPR)")

struct mrcp_engine_counters {
#define X(n, d) uint64_t n;
	MRCP_ENGINE_COUNTERS(X)
#undef X
};

struct mrcp_qp_counters {
#define X(n, d) uint64_t n;
	MRCP_QP_COUNTERS(X)
#undef X
};

/** A snapshot of one QP for telemetry (mrcctl, tests). */
struct mrcp_qp_info {
	uint32_t qpn, dest_qpn;
	uint8_t state, mode;
	uint32_t next_psn, snd_una, rcv_cack;
	uint16_t next_msn, rcv_msn;
	uint32_t outstanding_pkts;
	uint32_t sq_outstanding;  /**< work requests posted and not completed */
	uint8_t retry_k;
	struct mrcp_qp_err err;   /**< why it is in ERROR (D70); zero otherwise */
	struct mrcp_cc_stats cc;
	struct mrcp_qp_counters c;
	uint16_t n_evs;
};

void mrcp_engine_counters(const struct mrcp_engine *e, struct mrcp_engine_counters *out);

/* Upper bounds of the EV probe RTT histogram's buckets, ns (§7, D57: a
 * probe unanswered for 2 ms has timed out, so the last finite bound is the
 * timeout). X(bound_ns). */
#define MRCP_PROBE_RTT_BOUNDS(X)                                               \
	X(5000) X(10000) X(20000) X(50000) X(100000) X(200000) X(500000)       \
	X(1000000) X(2000000)
#define MRCP_PROBE_RTT_X_ONE(b) + 1
/** Finite buckets; the histogram has one more, above the last bound. */
#define MRCP_PROBE_RTT_NBOUNDS (0 MRCP_PROBE_RTT_BOUNDS(MRCP_PROBE_RTT_X_ONE))

/** The RTTs of the engine's answered EV probes (§7), counted where an
 *  answer is matched to its request; never reset. Written by the engine's
 *  thread only. */
struct mrcp_probe_rtt_hist {
	uint64_t bucket[MRCP_PROBE_RTT_NBOUNDS + 1]; /**< answers with an RTT in
				   *   (bound[i-1], bound[i]] ns; the last one
				   *   above the last bound. Not cumulative. */
	uint64_t sum_ns;          /**< their RTTs summed, ns */
	uint64_t answered;        /**< answers counted (the buckets' sum) */
	uint64_t timeouts;        /**< probes unanswered within the timeout (D57) */
};

/** The bucket bounds, ns, ascending: MRCP_PROBE_RTT_NBOUNDS entries. */
extern const uint64_t mrcp_probe_rtt_bounds_ns[MRCP_PROBE_RTT_NBOUNDS];

/** Copy the engine's EV probe RTT histogram. */
void mrcp_engine_probe_rtt(const struct mrcp_engine *e, struct mrcp_probe_rtt_hist *out);

/** What an engine has allocated, in bytes as asked of malloc (its own
 *  overhead not counted). Grows with use (preallocate off), never shrinks. */
struct mrcp_engine_mem {
	uint64_t engine_bytes;    /**< the engine: itself, its unused QP slots, MR and peer
	                           *   tables, CQ / event / control rings, timing
	                           *   wheel, the per-peer QPCCs */
	uint64_t qp_bytes;        /**< its QPs, each a slot plus what it allocated:
	                           *   send and receive queues, scoreboard, message
	                           *   ring, receive bitmap, EV set, own QPCC */
	uint32_t qps;             /**< QPs in use */
};
void mrcp_engine_mem(const struct mrcp_engine *e, struct mrcp_engine_mem *out);
/** The size of the engine's QP table: a power of two, at least max_qps. The
 *  slot of a local QPN q is q & (slots - 1), one QP at a time: a caller may
 *  keep its own per-QP table indexed so. */
uint32_t mrcp_engine_qp_slots(const struct mrcp_engine *e);

/** @return 0, -ENOENT. */
int mrcp_qp_info(const struct mrcp_engine *e, uint32_t qpn, struct mrcp_qp_info *out);
/** The QP's EV set, read-only (states, counters) or NULL. */
const struct mrcp_ev_set *mrcp_qp_evs(const struct mrcp_engine *e, uint32_t qpn);
/** Visit every counter: engine-wide (qpn 0) then per QP. @fn gets the
 *  X-macro name, its description and the value. For JSON / telemetry. */
void mrcp_counters_foreach(const struct mrcp_engine *e,
			   void (*fn)(void *ctx, uint32_t qpn, const char *name, const char *desc, uint64_t v),
			   void *ctx);

#endif
