/* fabric.h - the deterministic test fabric: a discrete-event network on
 * virtual time (ns) that carries real MRC frames (Ethernet/IP/UDP/MRC/ICRC,
 * built and parsed by mrcp_frame.h) between up to FABRIC_MAX_NODES nodes.
 *
 * Topology. Every node has one port per plane (1..n_planes); plane p of one
 * node reaches only plane p of the others. Between every ordered pair of
 * nodes and for every plane there are n_paths parallel paths, chosen per
 * packet by ECMP on the EV (path = hash(EV) % n_paths, stable across runs
 * and seeds; fabric_set_path_select() overrides it).
 *
 * A packet's journey:
 *
 *   fabric_send / endpoint poll
 *     -> source NIC port queue (node port_bps; FIFO, serialisation only)
 *     -> path: rules, blackhole, loss, output queue (rate, buffer, trim, ECN),
 *        corruption, duplication, propagation delay + jitter + reorder
 *     -> destination downlink queue (per node and plane, "last hop";
 *        disabled while its rate is 0)
 *     -> mrcp_frame_parse (ICRC checked) -> delivery hook -> endpoint rx
 *
 * Queues are modelled by their busy-until time, so a queue costs O(1) per
 * packet and no events of its own. DSCPs in prio_dscp_mask (control) and
 * trimmed headers are served ahead of data: they wait only for other
 * priority packets, but they do take link time from the data queue.
 * Serialisation counts the frame bytes (Ethernet header .. ICRC; no
 * preamble, FCS or inter-frame gap).
 *
 * Determinism (architecture.md §5): all randomness comes from one
 * mrcp_prng seeded by the fabric seed; events run in (time, insertion
 * sequence) order from one binary heap; probabilities that are 0 draw
 * nothing. The same seed and the same calls replay a run exactly.
 *
 * Endpoints. A node may carry an endpoint (struct fabric_endpoint_ops; an
 * MRC engine through fabric_attach_engine() in fabric_engine.c, or a test
 * double). The fabric polls an endpoint when packets were delivered to it,
 * when its next deadline is due, when its TX room comes back, or when the
 * test calls fabric_kick(); an idle endpoint with no deadline is not polled.
 *
 * Memory: packets come from a pool allocated by fabric_create(); nothing
 * on the per-packet path allocates. An exhausted pool drops and counts.
 * Not thread-safe: one thread owns a fabric.
 */
#ifndef FABRIC_H
#define FABRIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mrcp_engine.h"
#include "mrcp_frame.h"

#define FABRIC_MAX_NODES  16
#define FABRIC_MAX_PLANES MRCP_MAX_PORTS
#define FABRIC_MAX_PATHS  64
/** Wildcard for struct fabric_sel fields. */
#define FABRIC_ANY (-1)

struct fabric;

/* ---- configuration ------------------------------------------------------ */

/** One rate-limited output queue (a path's, or a node's downlink). */
struct fabric_queue_cfg {
	uint64_t rate_bps;        /**< drain rate, bit/s; 0 = infinite: no queue
				   *   ever forms, so no buffer drops, trims or
				   *   ECN marks happen here */
	uint32_t buffer_bytes;    /**< tail-drop a data packet if backlog + its
				   *   size would exceed this, bytes; 0 = unlimited */
	bool trim;                /**< trim trimmable packets that arrive while
				   *   the backlog exceeds trim_bytes */
	uint32_t trim_bytes;      /**< trim threshold, bytes of backlog */
	bool lasthop;             /**< trims here get TRIMMED_LASTHOP (13),
				   *   else TRIMMED (11) */
	bool ecn;                 /**< mark ECT packets CE by backlog */
	uint32_t ecn_kmin_bytes;  /**< no marks at or below this backlog, bytes */
	uint32_t ecn_kmax_bytes;  /**< probability ecn_pmax here, 1 above, bytes;
				   *   kmin == kmax: mark every packet above kmin */
	double ecn_pmax;          /**< marking probability at kmax, 0..1 */
};

/** One directed path (src node, dst node, plane, ECMP index). */
struct fabric_path_cfg {
	uint64_t delay_ns;        /**< propagation delay, ns */
	uint64_t jitter_ns;       /**< extra delay uniform in [0, jitter_ns], ns */
	double loss;              /**< drop probability, 0..1 */
	double dup;               /**< probability of a second copy, 0..1 */
	double reorder;           /**< probability of reorder_ns extra delay, 0..1 */
	uint64_t reorder_ns;      /**< extra delay of a reordered packet, ns */
	double corrupt;           /**< probability of one flipped byte (the ICRC
				   *   then fails at the receiver), 0..1 */
	bool blackhole;           /**< drop everything */
	struct fabric_queue_cfg q;/**< the path's output queue */
};

struct fabric_cfg {
	uint8_t max_nodes;        /**< 1..FABRIC_MAX_NODES; sizes the path table */
	uint8_t n_planes;         /**< ports per node, 1..FABRIC_MAX_PLANES */
	uint8_t n_paths;          /**< ECMP paths per (src, dst, plane), 1..FABRIC_MAX_PATHS */
	uint8_t family;           /**< 4 or 6: automatic node addresses */
	uint32_t pool_pkts;       /**< packets in flight at most (pool size) */
	uint32_t frame_bytes;     /**< largest frame, bytes (pool buffer size) */
	struct fabric_path_cfg path;       /**< initial config of every path */
	struct fabric_queue_cfg downlink;  /**< initial config of every downlink */
	uint64_t prio_dscp_mask;  /**< bit d: DSCP d is served with priority */
	uint64_t trimmable_dscp_mask; /**< bit d: DSCP d may be trimmed */
	uint8_t dscp_trimmed;     /**< DSCP a fabric trim sets (D23: 11) */
	uint8_t dscp_trimmed_lasthop; /**< DSCP a last-hop trim sets (D23: 13) */
	uint32_t trim_keep_bytes; /**< frame bytes a trim keeps; 0 = through
				   *   RETH (§2.1: Eth + IP + UDP + BTH +
				   *   METH + TSETH + RETH) */
	uint32_t ecmp_salt;       /**< mixed into the ECMP hash (not the seed,
				   *   so paths stay put when the seed changes) */
	uint16_t tx_burst;        /**< packets per endpoint poll call, 1..64 */
	uint16_t rx_burst;        /**< packets per endpoint rx call, 1..64 */
	uint16_t max_polls;       /**< full poll bursts per service before
				   *   yielding to other events at the same time */
};

/** Defaults: 2 nodes max 16, 1 plane, 1 path, IPv6, 16384 packets of up to
 *  4352 B, paths of 1 us and no impairment, no downlink queue, priority for
 *  CONTROL (46), trimmable TRIMMABLE and TRIMMABLE_RETX (10, 12), trims to
 *  11 / 13 through RETH, ECN pmax 1, bursts of 32, 16 polls. */
void fabric_cfg_defaults(struct fabric_cfg *c);

struct fabric_node_cfg {
	struct mrcp_ip addr[FABRIC_MAX_PLANES]; /**< per plane (index port - 1);
				   *   family 0 = automatic (fabric_node_addr) */
	uint64_t port_bps[FABRIC_MAX_PLANES];   /**< NIC port rate, bit/s; 0 = infinite */
	uint32_t tx_room_bytes;   /**< tell the endpoint "no room" on a port
				   *   whose NIC backlog exceeds this, bytes;
				   *   0 = never */
	uint16_t udp_port;        /**< UDP destination port sent (D1) */
	enum mrcp_ev_layout ev_layout; /**< D4 */
	uint8_t ttl;              /**< sent TTL / hop limit */
	struct mrcp_frame_rx_cfg rx; /**< how this node parses (ICRC on) */
};

/** Defaults: automatic addresses, infinite ports, no TX room limit, port
 *  4791, lo16_sport, TTL 64, mrcp_frame_rx_cfg_defaults(). */
void fabric_node_cfg_defaults(struct fabric_node_cfg *nc);

/* ---- endpoints ---------------------------------------------------------- */

/** What the fabric drives on a node: the shape of the engine's packet API. */
struct fabric_endpoint_ops {
	/** Packets delivered to the node; the data is valid during the call. */
	void (*rx_burst)(void *ctx, const struct mrcp_rx *pkts, unsigned n, uint64_t now_ns);
	/** Emit up to @max packets; @return how many are in @out. */
	unsigned (*poll)(void *ctx, uint64_t now_ns, struct mrcp_tx *out, unsigned max);
	/** Earliest time poll has work, or UINT64_MAX. */
	uint64_t (*next_deadline)(void *ctx);
	/** Optional: a port's NIC queue filled (false) or drained (true). */
	void (*set_tx_room)(void *ctx, uint8_t port, bool room);
};

/* ---- setup -------------------------------------------------------------- */

/**
 * Create a fabric. All paths and downlinks start as c->path / c->downlink.
 * @param seed  drives every random choice of the fabric.
 * @return 0 and *@out; -EINVAL (a count out of range, frame_bytes too small
 *         for a minimal frame, a trimmed DSCP above 63); -ENOMEM.
 */
int fabric_create(const struct fabric_cfg *c, uint64_t seed, struct fabric **out);
void fabric_destroy(struct fabric *f);

/**
 * Add a node without an endpoint (packets delivered to it go only to the
 * delivery hook). Nodes are numbered 0, 1, ... in the order added.
 * @param nc  NULL for fabric_node_cfg_defaults().
 * @return the node id; -ENOSPC (max_nodes reached); -EINVAL (an address
 *         family not 0/4/6, the same address as another node's port).
 */
int fabric_add_node(struct fabric *f, const struct fabric_node_cfg *nc);

/** Attach an endpoint to @node; it is polled from now on (one poll is
 *  queued at the current time). @ops->rx_burst, poll and next_deadline are
 *  required. @return 0, -EINVAL (bad node or ops), -EBUSY (already attached). */
int fabric_node_attach(struct fabric *f, unsigned node,
		       const struct fabric_endpoint_ops *ops, void *ctx);

/** A node's address on @plane (1-based); NULL for a bad node or plane.
 *  Automatic addresses: IPv4 10.<plane>.0.<node + 1>,
 *  IPv6 fd00:0:0:<plane>::<node + 1>. */
const struct mrcp_ip *fabric_node_addr(const struct fabric *f, unsigned node, uint8_t plane);

/** The fabric's config as created. */
const struct fabric_cfg *fabric_cfg_get(const struct fabric *f);
/** @node's config with automatic addresses filled in; NULL for a bad node. */
const struct fabric_node_cfg *fabric_node_cfg_get(const struct fabric *f, unsigned node);
/** Nodes added so far. */
unsigned fabric_n_nodes(const struct fabric *f);

/** The live config of one path (plane 1-based, path 0-based); the caller may
 *  change it at any time, and the next packet sees it. NULL if out of range. */
struct fabric_path_cfg *fabric_path_cfg(struct fabric *f, unsigned src, unsigned dst,
					uint8_t plane, unsigned path);
/** The live config of @node's downlink (last-hop) queue on @plane. */
struct fabric_queue_cfg *fabric_downlink_cfg(struct fabric *f, unsigned node, uint8_t plane);

/** A set of directed paths: FABRIC_ANY in a field matches every value.
 *  @both also selects the reverse direction (dst -> src). */
struct fabric_sel {
	int src, dst;             /**< node ids */
	int plane;                /**< 1-based */
	int path;                 /**< 0-based ECMP index */
	bool both;
};

/** Copy @pc into every selected path. @return paths changed, -EINVAL. */
int fabric_path_set(struct fabric *f, const struct fabric_sel *sel, const struct fabric_path_cfg *pc);

/** The ECMP index a packet from @src to @dst on @plane with @ev takes. */
unsigned fabric_path_of(const struct fabric *f, unsigned src, unsigned dst, uint8_t plane, uint32_t ev);

/** Replace ECMP: @fn returns the path index (taken modulo n_paths). */
typedef unsigned (*fabric_path_select_fn)(void *ctx, unsigned src, unsigned dst,
					  uint8_t plane, uint32_t ev, unsigned n_paths);
void fabric_set_path_select(struct fabric *f, fabric_path_select_fn fn, void *ctx);

/* ---- scheduled actions --------------------------------------------------- */

enum fabric_action_op {
	FABRIC_ACT_BLACKHOLE = 1, /**< set path blackhole = @on */
	FABRIC_ACT_LOSS,          /**< set path loss = @loss */
	FABRIC_ACT_DELAY,         /**< set path delay_ns = @delay_ns */
	FABRIC_ACT_RATE,          /**< set path q.rate_bps = @rate_bps */
	FABRIC_ACT_CALL,          /**< call @fn(@ctx, f); no paths involved */
};

struct fabric_action {
	enum fabric_action_op op;
	struct fabric_sel sel;    /**< the paths it applies to */
	bool on;
	double loss;
	uint64_t delay_ns;        /**< ns */
	uint64_t rate_bps;        /**< bit/s */
	void (*fn)(void *ctx, struct fabric *f);
	void *ctx;
};

/** Run @a at virtual time @t_ns (>= now; actions at one time run in the
 *  order scheduled). @return 0, -EINVAL (bad op or time in the past), -ENOMEM. */
int fabric_schedule(struct fabric *f, uint64_t t_ns, const struct fabric_action *a);

/* ---- deterministic rules ------------------------------------------------ */

/** struct fabric_rule.match bits: the fields compared. */
enum {
	FABRIC_M_OPCODE = 1u << 0,
	FABRIC_M_PSN = 1u << 1,
	FABRIC_M_RTX = 1u << 2,
	FABRIC_M_PLANE = 1u << 3,
	FABRIC_M_PATH = 1u << 4,
	FABRIC_M_SRC = 1u << 5,
	FABRIC_M_DST = 1u << 6,
	FABRIC_M_QPN = 1u << 7,   /**< BTH DestQP */
	FABRIC_M_DATA = 1u << 8,  /**< data opcode (Write) or not, per @data */
};

enum fabric_rule_action {
	FABRIC_RULE_DROP = 0,
	FABRIC_RULE_TRIM,         /**< trim as a queue would (fabric, not last hop) */
	FABRIC_RULE_CORRUPT,      /**< flip one byte: the ICRC fails */
	FABRIC_RULE_DELAY,        /**< add delay_ns */
};

/**
 * A deterministic fault: the packets that match every field named in @match,
 * seen at the path stage in [after_ns, until_ns), get @action: the first
 * @skip matches pass untouched, then the next @count matches (0 = all) are
 * acted on. BTH fields are read from the frame. Rules are checked in the
 * order added, before random loss; the first that acts wins.
 */
struct fabric_rule {
	uint32_t match;           /**< FABRIC_M_* */
	uint8_t opcode;
	uint32_t psn;
	bool rtx;                 /**< BTH rtx bit */
	bool data;
	uint8_t plane;            /**< 1-based */
	uint8_t path;
	uint8_t src, dst;         /**< node ids */
	uint32_t qpn;
	uint64_t after_ns;        /**< ns; 0 = from the start */
	uint64_t until_ns;        /**< ns; 0 = forever */
	uint32_t skip;            /**< matches to let pass first, packets */
	uint32_t count;           /**< matches to act on, packets; 0 = every one */
	enum fabric_rule_action action;
	uint64_t delay_ns;        /**< FABRIC_RULE_DELAY, ns */
};

/** @return the rule id (>= 0), -EINVAL, -ENOMEM. */
int fabric_rule_add(struct fabric *f, const struct fabric_rule *r);
/** Packets rule @id acted on so far (0 for a bad id). */
uint64_t fabric_rule_hits(const struct fabric *f, int id);

/* ---- packets and time ---------------------------------------------------- */

/**
 * Send one packet from @node now, as an endpoint's poll would: the frame is
 * built for tx->port with tx->dscp/ecn/ev to tx->dst, which must be another
 * node's address on the same plane. The payload is copied out of tx->seg.
 * @return 0 (the packet entered the fabric; it may still be dropped there);
 *         -EINVAL (bad node or port; frame build refused the tx: e.g. an
 *         IPv4 EV above 16 bits); -EHOSTUNREACH (no node has tx->dst on that
 *         plane); -EMSGSIZE (frame above frame_bytes); -ENOBUFS (pool empty).
 *         Every failure is counted in the node's stats.
 */
int fabric_send(struct fabric *f, unsigned node, const struct mrcp_tx *tx);

/**
 * A host pause (D65): from @at_ns @node's endpoint is not run for
 * @duration_ns - no rx_burst, no poll, no timer - and again every
 * @period_ns (0 = once). Packets for it wait in arrival order; its NIC
 * still sends what was queued. At the end of a pause one service takes
 * everything that arrived and whatever fell due. A later call replaces the
 * schedule.
 * @return 0; -EINVAL (bad node, @duration_ns 0, @period_ns not above it).
 */
int fabric_node_pause(struct fabric *f, unsigned node, uint64_t at_ns, uint64_t duration_ns, uint64_t period_ns);

/** Queue a poll of @node's endpoint at the current time (after posting work
 *  to its engine). No-op for a node without an endpoint. */
void fabric_kick(struct fabric *f, unsigned node);

/** Current virtual time, ns. */
uint64_t fabric_now(const struct fabric *f);
/** Time of the next event, or UINT64_MAX if none. */
uint64_t fabric_next_event(const struct fabric *f);

/** Run every event up to and including @t_ns, then set the time to @t_ns
 *  (if later). @return events processed. */
uint64_t fabric_run_until(struct fabric *f, uint64_t t_ns);

/**
 * Run events while @pred(@ctx) is true (checked before each event) and the
 * next event is no later than @deadline_ns.
 * @return 0 once @pred is false (the time is that of the last event run);
 *         -ETIMEDOUT if @deadline_ns came first (the time is then
 *         @deadline_ns, all events up to it run).
 */
int fabric_run_while(struct fabric *f, bool (*pred)(void *ctx), void *ctx, uint64_t deadline_ns);

/** A seed for something else in the test (an engine), derived from the
 *  fabric seed and @salt by splitmix64. */
uint64_t fabric_seed_derive(const struct fabric *f, uint64_t salt);

/* ---- observation ---------------------------------------------------------- */

/** One delivered packet (parsed successfully). Pointers live for the call. */
struct fabric_delivery {
	uint64_t now_ns;          /**< arrival time, ns */
	uint64_t sent_ns;         /**< when fabric_send / poll emitted it, ns */
	uint8_t src, dst;         /**< node ids */
	uint8_t plane;            /**< 1-based */
	uint8_t path;             /**< ECMP index */
	bool dup;                 /**< the extra copy of a duplication */
	const struct mrcp_rx *rx; /**< what the endpoint gets */
	const struct mrcp_frame_view *view;
	const uint8_t *frame;
	uint32_t frame_len;       /**< bytes as received (trimmed: shortened) */
};

typedef void (*fabric_deliver_fn)(void *ctx, const struct fabric_delivery *d);
/** Called for every delivered packet before the endpoint sees it. */
void fabric_set_deliver_hook(struct fabric *f, fabric_deliver_fn fn, void *ctx);

/** One line per event (send, drop, trim, mark, dup, deliver, poll, action),
 *  without a newline; for debugging. NULL turns tracing off. */
typedef void (*fabric_trace_fn)(void *ctx, const char *line);
void fabric_set_trace(struct fabric *f, fabric_trace_fn fn, void *ctx);

/** Per-path counters, packets: X(name, description). Never reset. */
#define FABRIC_PATH_COUNTERS(X)                                                \
	X(sent, "entered the path")                                            \
	X(delivered, "parsed and delivered at the far end")                    \
	X(drop_loss, "dropped: random loss")                                   \
	X(drop_blackhole, "dropped: blackhole")                                \
	X(drop_buffer, "dropped: path queue full")                             \
	X(drop_rule, "dropped: a rule")                                        \
	X(drop_corrupt, "dropped at the receiver: ICRC mismatch")              \
	X(corrupted, "a byte flipped (random or rule)")                        \
	X(trimmed, "trimmed by the path queue or a rule")                      \
	X(ecn_marked, "marked CE by the path queue")                           \
	X(duplicated, "extra copies made")                                     \
	X(reordered, "given the reorder delay")

/** Per-node counters, packets. */
#define FABRIC_NODE_COUNTERS(X)                                                \
	X(tx_pkts, "packets sent into the fabric")                             \
	X(tx_bytes, "frame bytes sent into the fabric")                        \
	X(tx_bad, "not sent: bad port or frame build refused the tx")          \
	X(tx_noroute, "not sent: no node has the destination on that plane")   \
	X(tx_pool, "not sent: packet pool empty")                              \
	X(tx_room_off, "times a port ran out of TX room")                      \
	X(rx_pkts, "packets delivered")                                        \
	X(rx_bytes, "frame bytes delivered")                                   \
	X(rx_trimmed, "delivered packets that were trimmed")                   \
	X(rx_ce, "delivered packets marked CE")                                \
	X(rx_bad_icrc, "dropped at parse: ICRC mismatch")                      \
	X(rx_malformed, "dropped at parse: malformed or not MRC")              \
	X(dl_drop_buffer, "dropped: downlink queue full")                      \
	X(dl_trimmed, "trimmed by the downlink queue")                         \
	X(dl_ecn_marked, "marked CE by the downlink queue")                    \
	X(dup_pool, "duplicates not made: packet pool empty")                  \
	X(polls, "endpoint services (rx and/or poll)")

struct fabric_path_stats {
#define X(n, d) uint64_t n;
	FABRIC_PATH_COUNTERS(X)
#undef X
};

struct fabric_node_stats {
#define X(n, d) uint64_t n;
	FABRIC_NODE_COUNTERS(X)
#undef X
};

/** One path's counters, or NULL if out of range. */
const struct fabric_path_stats *fabric_path_stats(const struct fabric *f, unsigned src,
						  unsigned dst, uint8_t plane, unsigned path);
/** Sum of the counters of every selected path into @out. */
void fabric_path_stats_sum(const struct fabric *f, const struct fabric_sel *sel,
			   struct fabric_path_stats *out);
/** One node's counters, or NULL. */
const struct fabric_node_stats *fabric_node_stats(const struct fabric *f, unsigned node);
/** Packets currently in flight (taken from the pool). */
uint32_t fabric_pkts_in_flight(const struct fabric *f);

/* ---- engines (fabric_engine.c) -------------------------------------------- */

/**
 * Attach an MRC engine to @node: the fabric then calls mrcp_rx_burst,
 * mrcp_poll, mrcp_next_deadline and mrcp_port_set_tx_room itself.
 * @return as fabric_node_attach().
 */
int fabric_attach_engine(struct fabric *f, unsigned node, struct mrcp_engine *e);

/** Fill the fabric-facing fields of an engine config for @node: n_ports,
 *  port_bps, port and node addresses (the node address is plane 1's), UDP
 *  port. The caller sets the seed (fabric_seed_derive) and the rest. */
void fabric_engine_config_fill(const struct fabric *f, unsigned node, struct mrcp_engine_config *c);

#endif
