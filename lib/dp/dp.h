/* dp.h - lib/dp, the DPDK glue of mrcd: ports as planes, worker lcores that
 * each run a protocol engine (one engine per worker, D63), frames in and
 * out, neighbours, fault injection, and a mailbox through which other
 * threads run code on a worker (an engine is single-threaded,
 * mrcp_engine.h). Client sessions and selftests run on the workers too
 * (dp_client.h, dp_selftest.h).
 *
 * The datapath is opaque. It is built from a struct mrcd_dp_config
 * (dp_config.h); it is read through snapshots (mrcd_dp_status,
 * mrcd_dp_port_status, mrcd_dp_qps) and changed through the functions
 * below. This header needs no DPDK (log helpers: dp_log.h).
 *
 * Handles: mrcd_dp_create() returns worker 0, which also stands for the
 * whole datapath (start, stop, destroy, the worker list); mrcd_dp_worker()
 * gives the others. Functions marked "worker context" run on that worker:
 * inside mrcd_dp_call() on it, or while the datapath is not started.
 *
 * Threads: the caller (mrcd's main thread) initialises EAL, creates the
 * datapath, starts the workers and then serves control requests; every
 * touch of a worker's state from another thread goes through mrcd_dp_call().
 */
#ifndef MRCD_DP_H
#define MRCD_DP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dp_config.h"
#include "dp_fault.h"
#include "dp_neigh.h"
#include "mrcp_engine.h"

#define MRCD_DP_PROBES 64 /* EV probe results kept per worker (mrcctl probes) */
#define MRCD_DP_PEERS 16  /* peers whose port-status mask a worker keeps */
#define MRCD_NEIGH_TABLE_ENTRIES 1024 /* each worker's neighbour table (dp_neigh.h) */

/* Per-port datapath counters: X(name, description). */
#define MRCD_DP_PORT_COUNTERS(X)                                               \
	X(rx_pkts, "frames received")                                          \
	X(rx_bytes, "bytes received")                                          \
	X(rx_mrc, "MRC frames handed to the engine")                           \
	X(rx_srv6, "of which SRv6 (IPv6-in-IPv6) frames")                      \
	X(rx_l2, "ARP/NDP/ICMP frames handled")                                \
	X(rx_not_mine, "frames dropped: not MRC and not for our host stack")   \
	X(rx_bad_frame, "frames dropped: malformed MRC frame")                 \
	X(rx_bad_icrc, "frames dropped: ICRC mismatch")                        \
	X(rx_admin_down, "frames dropped: port admin-down")                    \
	X(tx_pkts, "frames sent")                                              \
	X(tx_bytes, "bytes sent")                                              \
	X(tx_zero_copy, "frames sent with their payload in place (external buffers)") \
	X(tx_srv6, "MRC frames built with an SRv6 outer header (D8)")          \
	X(tx_l2, "ARP/NDP/ICMP frames sent")                                   \
	X(tx_ring_full, "TX bursts cut short by a full ring (back-pressure)")  \
	X(tx_no_neigh, "MRC packets dropped: next hop unresolved")             \
	X(tx_no_srv6_row, "MRC packets dropped: no SRv6 template for the destination") \
	X(tx_no_mbuf, "MRC packets dropped: mbuf pool empty")                  \
	X(tx_build_err, "MRC packets dropped: frame build failed")             \
	X(tx_local, "MRC frames to this daemon's own address, delivered to its receive path (D71)") \
	X(rx_local, "MRC frames from this daemon itself, received without the wire (D71)") \
	X(fault_delayq_full, "fault stage: packets dropped, delay queue full") \
	X(link_changes, "link state changes seen")                             \
	X(gw_down, "times the gateway went FAILED (the port down for the engine)")

struct mrcd_dp_port_counters {
#define X(n, d) uint64_t n;
	MRCD_DP_PORT_COUNTERS(X)
#undef X
};

/* Worker counters. */
#define MRCD_DP_WORKER_COUNTERS(X)                                             \
	X(loops, "loop iterations")                                            \
	X(busy_loops, "iterations that moved a packet or ran a timer")         \
	X(sleeps, "idle sleeps (adaptive idle)")                               \
	X(sleep_ns, "time spent asleep, ns")                                   \
	X(stalls, "gaps in the loop over 4 base RTTs, told to the engine (D72)") \
	X(stall_ns, "time lost in those gaps, ns")                             \
	X(stall_max_ns, "the longest of those gaps, ns (a maximum, not a sum)") \
	X(rx_snap_rereads, "receive passes that read every port again: a stall between reads or a full burst (D72)") \
	X(rx_snap_cut, "receive passes handed over with a port's burst full or a stall in the last read: no room left (D72)") \
	X(calls, "control calls run on the worker")                            \
	X(wc, "completions taken from the engine")                             \
	X(wc_unowned, "completions for a QP nobody owns")                      \
	X(events, "engine events taken")                                       \
	X(handover_out, "frames steered to the worker that owns their QP")     \
	X(handover_in, "frames other workers steered here")                    \
	X(handover_drop, "frames dropped: the owner's hand-over ring was full") \
	X(node_copies, "endpoint/ARP/NDP frames copied to every other worker") \
	X(selftests_expired, "selftests freed after limits.selftest_idle_s untouched")

struct mrcd_dp_worker_counters {
#define X(n, d) uint64_t n;
	MRCD_DP_WORKER_COUNTERS(X)
#undef X
};

/** One worker lcore of the datapath (opaque). */
struct mrcd_dp;

/** One EV probe result (an engine MRCP_EVENT_EV_PROBE). */
struct mrcd_dp_probe {
	uint64_t seq;              /**< 1 for the worker's first probe result, then +1 */
	uint64_t at_ns;            /**< when it was recorded (mrcd_dp_now_ns) */
	struct mrcp_ip node;       /**< the peer */
	uint8_t port;              /**< plane, 1-based */
	uint32_t ev;
	bool ok;
	uint64_t rtt_ns;
};

/** The latest port-status mask a peer announced (§5.6). */
struct mrcd_dp_peer {
	struct mrcp_ip node;
	uint32_t mask;             /**< bit i: the peer's plane i + 1 is up */
	uint64_t at_ns;            /**< when the latest update arrived */
	unsigned updates;          /**< updates seen */
};

/** Several QPs' counters summed: for the QPs a worker destroyed, summed as
 *  each was destroyed (their own counters go with them: the per-path record
 *  of a benchmark whose clients come and go), and for the live ones
 *  (mrcd_dp_live_qps). */
struct mrcd_dp_qp_sums {
	uint64_t qps;               /**< QPs summed */
	uint64_t evs_moved;         /**< of their EVs, those that ever changed state */
	struct mrcp_qp_counters qp; /**< their counters, summed */
	struct mrcp_ev_counters ev; /**< their EVs' counters, summed */
};

/** A worker's live QPs (those with an owner) at one instant
 *  (mrcd_dp_live_qps): their counters summed, and their EVs counted per
 *  plane by state and by pool - what a monitor samples in one request,
 *  without any one EV's detail. */
struct mrcd_dp_live_qps {
	struct mrcd_dp_qp_sums sum;
	/** [plane - 1][enum mrcp_ev_state]: EVs of that plane in that state */
	uint32_t ev_state[MRCP_MAX_PORTS][MRCP_EV_NSTATES];
	/** [plane - 1][enum mrcp_ev_pool]: EVs of that plane in that pool */
	uint32_t ev_pool[MRCP_MAX_PORTS][4];
};

/** A snapshot of one worker (mrcd_dp_status). */
struct mrcd_dp_status {
	unsigned worker;           /**< index = engine shard = queue id */
	unsigned n_workers;
	unsigned lcore;            /**< the lcore it runs on */
	bool busy_poll;            /**< idle mode (mrcd_dp_config.busy_poll) */
	int family;                /**< 4 or 6 */
	uint64_t start_ns;         /**< when its engine was created */
	unsigned n_ports;
	unsigned ports_up;         /**< ports the engine is told are up (link and admin) */
	unsigned n_qps;            /**< QPs with an owner (sessions, selftests) */
	unsigned n_clients;        /**< client sessions it serves */
	struct mrcd_dp_worker_counters c;
	struct mrcd_dp_qp_sums closed; /**< QPs destroyed so far */
	unsigned n_peers;
	struct mrcd_dp_peer peers[MRCD_DP_PEERS]; /**< in the order first heard */
	uint64_t n_probes;         /**< probe results recorded in total */
	unsigned n_recent;         /**< min(n_probes, MRCD_DP_PROBES) */
	struct mrcd_dp_probe recent[MRCD_DP_PROBES]; /**< the latest, oldest first */
};

/** A port's gateway as one worker's neighbour table holds it. */
struct mrcd_dp_gw {
	struct mrcp_ip ip;         /**< family 0: none configured */
	enum mrcd_neigh_state state; /**< 0: no entry yet */
	uint8_t mac[6];            /**< zero unless REACHABLE or STATIC */
	uint64_t updated_ns;       /**< last confirmation or state change, ns */
};

/** A snapshot of one port as one worker sees it (mrcd_dp_port_status). */
struct mrcd_dp_port_status {
	char name[MRCD_DP_NAME_MAX];
	uint16_t ethdev;           /**< DPDK port id */
	uint8_t mac[6];
	struct mrcd_dp_prefix ipv4, ipv6;
	uint16_t mtu;              /**< L3, bytes */
	bool link_up;              /**< as DPDK last reported (worker 0 polls it) */
	bool admin_up;             /**< mrcd_dp_port_admin */
	bool engine_up;            /**< what the engine was last told */
	bool gw_failed;            /**< the gateway of the planes' family is FAILED:
				    *   the port is down for the engine */
	struct mrcd_dp_gw gw4, gw6; /**< the configured gateways */
	unsigned n_routes;         /**< static routes configured */
	uint32_t speed_mbps;       /**< configured (ports[].speed_gbps: what NSCC
				    *   counts, D54) */
	uint32_t link_speed_mbps;  /**< as DPDK reports it (0 = unknown; a
				    *   virtual device reports a made-up figure) */
	struct mrcd_dp_port_counters c;     /**< this worker's queue of the port */
	struct mrcd_fault_counters fault;   /**< this worker's fault stage */
	struct mrcd_neigh_counters neigh;   /**< this worker's neighbour table */
};

/** A function another thread runs on a worker (mrcd_dp_call). */
typedef void (*mrcd_dp_fn)(struct mrcd_dp *dp, void *arg);
/** A hook the worker runs every iteration (selftests, client sessions);
 *  returns true if it did work (keeps the worker awake). */
typedef bool (*mrcd_dp_hook)(struct mrcd_dp *dp, void *arg, uint64_t now_ns);

/** Monotonic time in ns from the TSC: the one clock of the daemon. */
uint64_t mrcd_dp_now_ns(void);
/** Calibrate mrcd_dp_now_ns (after rte_eal_init). */
void mrcd_dp_time_init(void);

/**
 * Build the datapath from @cfg after rte_eal_init(): probe/attach the ports
 * (devargs), configure one RX and one TX queue per worker on each, mempools
 * per NUMA socket, MACs and MTUs, and per worker the engine, neighbour
 * table, fault stage and hand-over ring. *@out is worker 0.
 * @param err  one-line reason on failure.
 * @return 0 or a negative errno; on failure everything is released.
 */
int mrcd_dp_create(const struct mrcd_dp_config *cfg, struct mrcd_dp **out, char *err, size_t errlen);
/** Launch worker i on cfg->lcores[i], for every worker. @return 0 or -errno. */
int mrcd_dp_start(struct mrcd_dp *dp);
/** Stop and join every worker (idempotent). */
void mrcd_dp_stop(struct mrcd_dp *dp);
/** Stop the workers and ports, end every selftest, free mbufs held in
 *  queues, the engines and everything else (@dp as mrcd_dp_create returned
 *  it; client sessions must have been stopped, dp_client.h). */
void mrcd_dp_destroy(struct mrcd_dp *dp);

/** Workers of the datapath (any thread). */
unsigned mrcd_dp_n_workers(const struct mrcd_dp *dp);
/** Worker @k of the datapath @dp belongs to, or NULL (any thread). */
struct mrcd_dp *mrcd_dp_worker(struct mrcd_dp *dp, unsigned k);
/** The index of worker @w (any thread). */
unsigned mrcd_dp_worker_index(const struct mrcd_dp *w);
/** The worker whose engine owns local QPN @qpn (D63), or NULL (any thread). */
struct mrcd_dp *mrcd_dp_of_qpn(struct mrcd_dp *dp, uint32_t qpn);
/** QPs with an owner on worker @w. Any thread: a racy read, good enough to
 *  pick the least busy worker. */
unsigned mrcd_dp_qp_count(const struct mrcd_dp *w);
/** The eventfd that wakes worker @w (a client writes it after posting). */
int mrcd_dp_doorbell(const struct mrcd_dp *w);

/** Ports (any thread). */
unsigned mrcd_dp_n_ports(const struct mrcd_dp *dp);
/** The name of port @port (0-based), or NULL (any thread). */
const char *mrcd_dp_port_name(const struct mrcd_dp *dp, unsigned port);
/** Resolve a port reference: @name if non-empty, else the 1-based @plane.
 *  @return the 0-based index, or -ENOENT (any thread). */
int mrcd_dp_port_lookup(const struct mrcd_dp *dp, const char *name, unsigned plane);

/**
 * Run @fn(dp, arg) on worker @dp between two loop iterations and wait until
 * it has returned. If the worker does not run (not started yet, stopped),
 * @fn runs on the calling thread. Calls from several threads are serialised.
 * @param timeout_ms  how long the worker may take to pick the call up; 0 =
 *                    as long as it takes. A call the worker has picked up is
 *                    always waited for.
 * @return 0: @fn ran once and returned; -ETIMEDOUT: the worker did not take
 *         the call in time, and @fn never runs (@arg may be on the caller's
 *         stack: it is not touched after the return). dp_mailbox.h.
 */
int mrcd_dp_call(struct mrcd_dp *dp, mrcd_dp_fn fn, void *arg, unsigned timeout_ms);

/* ---- worker context ---- */

/** Worker @w's engine (lib/core's API applies: qp info, EVs, counters...). */
struct mrcp_engine *mrcd_dp_engine(struct mrcd_dp *w);
/** Worker @w's fault stage (dp_fault.h: add, delete, list rules). */
struct mrcd_fault_stage *mrcd_dp_faults(struct mrcd_dp *w);
/** Snapshot worker @w. */
void mrcd_dp_status(struct mrcd_dp *w, struct mrcd_dp_status *out);
/** Snapshot port @port (0-based) as worker @w sees it. @return 0, -ENOENT. */
int mrcd_dp_port_status(struct mrcd_dp *w, unsigned port, struct mrcd_dp_port_status *out);
/** Copy up to @max entries of worker @w's neighbour table (dp_neigh.h).
 *  @return entries written. */
unsigned mrcd_dp_neighbours(struct mrcd_dp *w, struct mrcd_neigh_entry *out, unsigned max);
/** The QPNs with an owner on @w, in a stable order. @return how many (at most @max). */
unsigned mrcd_dp_qps(struct mrcd_dp *w, uint32_t *qpns, unsigned max);
/** The most QPs worker @w can own: its engine's QP slots (mrcd_dp_qps' @max
 *  for every one). */
unsigned mrcd_dp_qp_slots(const struct mrcd_dp *w);
/** Sum worker @w's live QPs (the ones mrcd_dp_qps lists) and count their
 *  EVs per plane by state and pool. */
void mrcd_dp_live_qps(struct mrcd_dp *w, struct mrcd_dp_live_qps *out);
/** Port admin state (0-based index); the engine learns it at once.
 *  @return 0, -ENOENT. */
int mrcd_dp_port_admin(struct mrcd_dp *w, unsigned port, bool up, uint64_t now_ns);

/** Route @qpn's completions and events to @on_wc / @on_event with @ctx.
 *  The owner table has a row per engine QP slot (mrcp_engine_qp_slots), so
 *  every QP the engine can hold (limits.max_qps) can have an owner.
 *  @return 0, -EEXIST (@qpn's slot has an owner: a QP not destroyed). */
int mrcd_dp_own_qp(struct mrcd_dp *dp, uint32_t qpn,
		   void (*on_wc)(struct mrcd_dp *, void *, const struct mrcp_wc *),
		   void (*on_event)(struct mrcd_dp *, void *, const struct mrcp_event *),
		   void *ctx);
void mrcd_dp_disown_qp(struct mrcd_dp *dp, uint32_t qpn);
/** Hand every completion the engine holds to its QP's owner.
 *  @return completions taken. */
unsigned mrcd_dp_drain_cq(struct mrcd_dp *dp);
/** Add a per-iteration hook. @return 0, -ENOSPC. */
int mrcd_dp_add_hook(struct mrcd_dp *dp, mrcd_dp_hook fn, void *arg);
void mrcd_dp_del_hook(struct mrcd_dp *dp, mrcd_dp_hook fn, void *arg);

/** Drop every queued TX frame (pending or fault-delayed) and let the
 *  devices release what they hold, before memory a zero-copy frame may point
 *  into (a client arena, a selftest buffer) goes away. */
void mrcd_dp_tx_quiesce(struct mrcd_dp *dp);

#endif
