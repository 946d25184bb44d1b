/* dp.h - lib/dp, the DPDK glue of mrcd: ports as planes, the worker lcore
 * that runs the protocol engine, frames in and out, neighbours, fault
 * injection, and a mailbox through which the control thread runs code on the
 * worker (the engine is single-threaded, mrcp_engine.h).
 *
 * Threads: the caller (mrcd's main thread) initialises EAL, creates the
 * datapath (mrcd_dp_create), launches the worker (mrcd_dp_start) and then
 * serves the control socket; every touch of engine state from the control
 * side goes through mrcd_dp_call(), which runs a function on the worker
 * between two loop iterations. Counters that only the worker writes are read
 * racily by other threads (64-bit aligned stores, good enough for stats).
 */
#ifndef MRCD_DP_H
#define MRCD_DP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "dp_config.h"
#include "dp_mailbox.h"
#include "mrcp_engine.h"

#include <rte_mbuf_core.h>

struct rte_mempool;
struct rte_mbuf;
struct mrcd_neigh;
struct mrcd_fault_stage;
struct mrcd_delayq;
struct mrcd_srv6_row;
struct mrcd_dp;

#define MRCD_DP_BURST 32
#define MRCD_DP_TXQ_PENDING (4 * MRCD_DP_BURST) /* frames held for a full TX ring */
#define MRCD_DP_ZC_MIN 512  /* payload bytes from which transmit is zero-copy */
#define MRCD_DP_HANDOVER_RING 4096      /* frames another worker may hand over */

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
	X(fault_delayq_full, "fault stage: packets dropped, delay queue full") \
	X(link_changes, "link state changes seen")

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
	X(calls, "control calls run on the worker")                            \
	X(wc, "completions taken from the engine")                             \
	X(wc_unowned, "completions for a QP nobody owns")                      \
	X(events, "engine events taken")                                       \
	X(handover_out, "frames steered to the worker that owns their QP")     \
	X(handover_in, "frames other workers steered here")                    \
	X(handover_drop, "frames dropped: the owner's hand-over ring was full") \
	X(node_copies, "endpoint/ARP/NDP frames copied to every other worker")

struct mrcd_dp_worker_counters {
#define X(n, d) uint64_t n;
	MRCD_DP_WORKER_COUNTERS(X)
#undef X
};

struct mrcd_dp_port {
	uint16_t port_id;          /**< DPDK port id */
	char name[MRCD_DP_NAME_MAX];
	uint8_t mac[6];
	int socket;                /**< NUMA socket of the device */
	struct rte_mempool *pool;  /**< mbufs for this port's socket */
	bool started;              /**< rte_eth_dev_start succeeded */
	bool link_up;              /**< as DPDK last reported */
	bool admin_up;             /**< mrcctl port_admin */
	bool engine_up;            /**< what the engine was last told */
	uint32_t link_speed_mbps;
	uint64_t next_link_check_ns;
	/* TX back-pressure: frames the ring did not take, retried first */
	struct rte_mbuf *pending[MRCD_DP_TXQ_PENDING];
	unsigned n_pending;
	struct mrcd_delayq *delay_tx, *delay_rx; /**< fault injection */
	struct rte_mbuf_ext_shared_info zc_shinfo; /**< every zero-copy payload mbuf's */
	struct mrcd_dp_port_counters c;
};

/** The latest EV probe results (mrcctl probes). */
#define MRCD_DP_PROBES 64
struct mrcd_dp_probe {
	uint64_t at_ns;
	struct mrcp_ip node;
	uint8_t port;
	uint32_t ev;
	bool ok;
	uint64_t rtt_ns;
};

/** Who receives the completions and events of a QP. */
struct mrcd_dp_qp_owner {
	uint32_t qpn;              /**< 0 = free slot */
	void (*on_wc)(struct mrcd_dp *dp, void *ctx, const struct mrcp_wc *wc);
	void (*on_event)(struct mrcd_dp *dp, void *ctx, const struct mrcp_event *ev);
	void *ctx;
};
#define MRCD_DP_MAX_OWNERS 256

/** A function the control thread runs on the worker (mrcd_dp_call). */
typedef void (*mrcd_dp_fn)(struct mrcd_dp *dp, void *arg);
/** A hook the worker runs every iteration (selftests, later clients);
 *  returns true if it did work (keeps the worker awake). */
typedef bool (*mrcd_dp_hook)(struct mrcd_dp *dp, void *arg, uint64_t now_ns);

/* One worker lcore. Each worker owns an engine (shard = index, D63), one RX
 * and one TX queue on every port (queue id = index), its own neighbour
 * table, fault stage, QPs, selftests and client sessions. Worker 0 also
 * owns the devices and mempools. A frame whose QP another worker owns is
 * handed over through that worker's ring; endpoint requests and non-MRC
 * frames (ARP, NDP, ICMP) are processed where they land and copied to every
 * other worker (their engines and neighbour tables all need them). */
struct mrcd_dp {
	const struct mrcd_dp_config *cfg; /**< shared by every worker (worker 0's own_cfg) */
	struct mrcd_dp_config *own_cfg; /**< worker 0: the copy mrcd_dp_create made */
	unsigned index;            /**< worker index = engine shard = queue id */
	unsigned n_workers;
	struct mrcd_dp *w[MRCD_DP_MAX_WORKERS]; /**< every worker (the same array in each) */
	struct rte_ring *handover; /**< frames steered here (multi-producer, this worker consumes) */
	atomic_bool asleep;        /**< in ppoll: a hand-over rings the doorbell */
	struct mrcp_engine *eng;
	struct mrcp_frame_rx_cfg rx_cfg;
	int family;                /**< 4 or 6: the planes' address family */
	unsigned n_ports;
	struct mrcd_dp_port ports[MRCD_DP_MAX_PORTS];
	struct mrcd_neigh *neigh;
	struct mrcd_fault_stage *faults;
	struct mrcd_srv6_row *srv6;  /**< SRv6 templates (D8); NULL when off */
	unsigned n_srv6;
	unsigned worker_lcore;
	uint64_t start_ns;
	uint16_t ip_id;
	bool zero_copy;            /**< IOVA is VA: payload may leave in place */

	/* worker control */
	atomic_bool stop;
	bool launched;             /**< the worker was launched and not yet joined */
	int doorbell;              /**< eventfd: wakes an idle worker */
	struct mrcd_mailbox mb;    /**< control calls into this worker (mrcd_dp_call) */
	bool mb_ready;             /**< mb was initialised */

	struct mrcd_dp_qp_owner owners[MRCD_DP_MAX_OWNERS];
	struct { mrcd_dp_hook fn; void *arg; } hooks[8];
	unsigned n_hooks;

	struct mrcd_dp_probe probes[MRCD_DP_PROBES];
	/* the latest port-status mask each peer announced (brief §5.6) */
	struct { struct mrcp_ip node; uint32_t mask; uint64_t at_ns; unsigned updates; } peers[16];
	unsigned n_peers;
	unsigned n_probes;         /**< total recorded; ring index n % MRCD_DP_PROBES */

	struct mrcd_dp_worker_counters wc;
	void *selftests;           /**< dp_selftest.c's table (worker-owned) */
	void *clients;             /**< dp_client.c's session list (worker-owned) */
	/* before an idle sleep: false = do not sleep (e.g. a client posted) */
	bool (*pre_sleep)(struct mrcd_dp *dp, void *arg);
	void (*post_sleep)(struct mrcd_dp *dp, void *arg);
	void *sleep_arg;
	/* just before a burst goes to mrcp_rx_burst (client receive posts) */
	void (*pre_rx)(struct mrcd_dp *dp, void *arg);
	/* per-QP EV transition counts, for selftests and mrcctl (worker-owned) */
};

/** Monotonic time in ns from the TSC: the one clock of the daemon. */
uint64_t mrcd_dp_now_ns(void);
/** Calibrate mrcd_dp_now_ns (after rte_eal_init). */
void mrcd_dp_time_init(void);

/**
 * Build the datapath from @cfg after rte_eal_init(): probe/attach the ports
 * (devargs), configure one RX and one TX queue per worker lcore on each,
 * mempools per NUMA socket, MACs and MTUs, and per worker the engine,
 * neighbour table, fault stage and hand-over ring. *@out is worker 0.
 * @param err  one-line reason on failure.
 * @return 0 or a negative errno; on failure everything is released.
 */
int mrcd_dp_create(const struct mrcd_dp_config *cfg, struct mrcd_dp **out, char *err, size_t errlen);
/** Launch worker i on cfg->lcores[i], for every worker. @return 0 or -errno. */
int mrcd_dp_start(struct mrcd_dp *dp);
/** Stop and join every worker (idempotent). */
void mrcd_dp_stop(struct mrcd_dp *dp);
/** Stop ports, free mbufs held in queues, the engines and everything else
 *  (@dp is worker 0, as mrcd_dp_create returned it). */
void mrcd_dp_destroy(struct mrcd_dp *dp);
/** The worker whose engine owns local QPN @qpn (D63), or NULL. */
struct mrcd_dp *mrcd_dp_of_qpn(struct mrcd_dp *dp, uint32_t qpn);

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

/** Worker context only: route @qpn's completions and events. */
int mrcd_dp_own_qp(struct mrcd_dp *dp, uint32_t qpn,
		   void (*on_wc)(struct mrcd_dp *, void *, const struct mrcp_wc *),
		   void (*on_event)(struct mrcd_dp *, void *, const struct mrcp_event *),
		   void *ctx);
void mrcd_dp_disown_qp(struct mrcd_dp *dp, uint32_t qpn);
/** Worker context: hand every completion the engine holds to its QP's owner.
 *  @return completions taken. */
unsigned mrcd_dp_drain_cq(struct mrcd_dp *dp);
/** Worker context (or before start): add a per-iteration hook. */
int mrcd_dp_add_hook(struct mrcd_dp *dp, mrcd_dp_hook fn, void *arg);
void mrcd_dp_del_hook(struct mrcd_dp *dp, mrcd_dp_hook fn, void *arg);

/** Worker context: port admin state (0-based index). */
int mrcd_dp_port_admin(struct mrcd_dp *dp, unsigned port, bool up, uint64_t now_ns);
/** Resolve a port reference: name, or 1-based plane. @return 0-based index or -ENOENT. */
int mrcd_dp_port_lookup(const struct mrcd_dp *dp, const char *name, unsigned plane);

/** Worker: drop every queued TX frame (pending or fault-delayed) and let
 *  the devices release what they hold, before memory a zero-copy frame may
 *  point into (a client arena, a selftest buffer) goes away. */
void mrcd_dp_tx_quiesce(struct mrcd_dp *dp);

/** One received frame through the ICRC check with DPDK's CRC (rte_net_crc):
 *  @ip is the innermost IP header, @len bytes to the end of the MRC pad;
 *  the ICRC follows. The bytes are restored before return.
 *  @return true if the stored ICRC matches. */
bool mrcd_dp_icrc_check(uint8_t *ip, size_t len);
/** Compute and store the ICRC after [@ip, @ip+@len) with rte_net_crc; the 8
 *  bytes before @ip are scratch (saved and restored). @return 0, -EBADMSG. */
int mrcd_dp_icrc_store(uint8_t *ip, size_t len);

/** Register the rte_log types mrcd.dp, mrcd.ctl, mrcd.engine... */
void mrcd_dp_log_init(void);
extern int mrcd_logtype_dp, mrcd_logtype_ctl, mrcd_logtype_main, mrcd_logtype_engine;
#define MRCD_LOG(level, type, ...) rte_log(RTE_LOG_##level, mrcd_logtype_##type, "mrcd." #type ": " __VA_ARGS__)

#endif
