/* dp_internal.h - what lib/dp's DPDK files share and nobody else sees: the
 * worker and port structs, the per-iteration TX and RX batches, and the
 * functions one file offers the others (mrcd__ prefix).
 *
 *   dp.c         the datapath object: create, destroy, owners, hooks,
 *                snapshots, accessors
 *   dp_port.c    ports: device setup, link and admin state, the fault stage,
 *                the TX ring and its back-pressure queue
 *   dp_tx.c      engine descriptors to frames (copied or zero-copy), ICRC
 *   dp_rx.c      frames to the engine: one receive path, steering between
 *                workers, hand-over rings
 *   dp_worker.c  the worker loop, completions and events, adaptive idle,
 *                the control mailbox
 *   dp_client.c, dp_selftest.c   client sessions and selftests (hooks)
 *   dp_icrc.c, dp_time.c         ICRC with rte_net_crc, the clock
 */
#ifndef MRCD_DP_INTERNAL_H
#define MRCD_DP_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf_core.h>

#include "dp.h"
#include "dp_log.h"
#include "dp_mailbox.h"
#include "mrcp_frame.h"

struct rte_mempool;
struct rte_mbuf;
struct rte_ring;
struct mrcd_neigh;
struct mrcd_fault_stage;
struct mrcd_delayq;
struct mrcd_srv6_row;

#define MRCD_DP_BURST 32
#define MRCD_DP_TXQ_PENDING (4 * MRCD_DP_BURST) /* frames held for a full TX ring */
#define MRCD_DP_ZC_MIN 512              /* payload bytes from which transmit is zero-copy */
#define MRCD_DP_HANDOVER_RING 4096      /* frames another worker may hand over */
#define MRCD_DP_TX_ROUNDS 8             /* mrcp_poll bursts in one transmit pass */
#define MRCD_DP_LOCAL_MAX (MRCD_DP_TX_ROUNDS * MRCD_DP_BURST) /* D71: one pass's frames */
#define MRCD_DP_MAX_HOOKS 8
#define MRCD_DP_STALL_BASE_RTTS 4       /* a gap this many base RTTs long is a stall (D72) */
#define MRCD_DP_RX_ROUNDS 4             /* reads of every port one batch holds (D72) */

/** One port as one worker uses it (worker 0 also owns the device). */
struct mrcd_dp_port {
	uint16_t port_id;          /**< DPDK port id */
	char name[MRCD_DP_NAME_MAX];
	uint8_t mac[6];
	int socket;                /**< NUMA socket of the device */
	struct rte_mempool *pool;  /**< mbufs for this port's socket */
	bool started;              /**< rte_eth_dev_start succeeded (worker 0) */
	bool tx_multi_seg;         /**< the device sends chained mbufs
				    *   (RTE_ETH_TX_OFFLOAD_MULTI_SEGS): zero-copy
				    *   transmit may be used; net_af_xdp cannot */
	bool link_up;              /**< as DPDK last reported */
	bool admin_up;             /**< mrcd_dp_port_admin */
	bool engine_up;            /**< what the engine was last told */
	bool gw_failed;            /**< the gateway of the planes' family is FAILED */
	uint32_t link_speed_mbps;
	uint64_t next_link_check_ns;
	/* TX back-pressure: frames the ring did not take, retried first */
	struct rte_mbuf *pending[MRCD_DP_TXQ_PENDING];
	unsigned n_pending;
	bool tx_room;              /**< what the engine was last told (mrcp_port_set_tx_room) */
	bool delay_held;           /**< a delay queue held frames at the last look */
	struct mrcd_delayq *delay_tx, *delay_rx; /**< fault injection */
	struct rte_mbuf_ext_shared_info zc_shinfo; /**< every zero-copy payload mbuf's */
	struct mrcd_dp_port_counters c;
};

/** Who receives the completions and events of a QP. */
struct mrcd_dp_qp_owner {
	uint32_t qpn;              /**< 0 = free slot */
	void (*on_wc)(struct mrcd_dp *dp, void *ctx, const struct mrcp_wc *wc);
	void (*on_event)(struct mrcd_dp *dp, void *ctx, const struct mrcp_event *ev);
	void *ctx;
};

/* One worker lcore. Each worker owns an engine (shard = index, D63), one RX
 * and one TX queue on every port (queue id = index), its own neighbour
 * table, fault stage, QPs, selftests and client sessions. Worker 0 also
 * owns the devices, the mempools and the config copy. A frame whose QP
 * another worker owns is handed over through that worker's ring; endpoint
 * requests and non-MRC frames (ARP, NDP, ICMP) are processed where they land
 * and copied to every other worker (their engines and neighbour tables all
 * need them). Fields are written by the worker alone unless noted. */
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
	/* which ports have a fault rule, bit p for port p: read from the fault
	 * stage once a receive pass (rx) and once a transmit pass (tx), not
	 * per frame; rules only change between passes (mailbox calls) */
	uint32_t faulty_rx, faulty_tx;
	uint64_t rx_read_ns;       /* when mrcd__rx_ports last finished reading the rings */
	struct mrcd_srv6_row *srv6;  /**< SRv6 templates (D8); NULL when off */
	unsigned n_srv6;
	unsigned worker_lcore;
	uint64_t start_ns;
	uint16_t ip_id;
	bool zero_copy;            /**< IOVA is VA: payload may leave in place */
	/* D71: frames the transmit pass addressed to one of our own ports,
	 * received right after it (mrcd__rx_local); port = the arrival port */
	struct rte_mbuf *local[MRCD_DP_LOCAL_MAX];
	uint8_t local_port[MRCD_DP_LOCAL_MAX];
	unsigned n_local;

	/* worker control (the control thread writes stop and launched) */
	atomic_bool stop;
	bool launched;             /**< the worker was launched and not yet joined */
	int doorbell;              /**< eventfd: wakes an idle worker */
	struct mrcd_mailbox mb;    /**< control calls into this worker (mrcd_dp_call) */
	bool mb_ready;             /**< mb was initialised */

	struct mrcd_dp_qp_owner *owners; /**< one per engine QP slot: owners[qpn & owner_mask] */
	uint32_t owner_mask;
	unsigned n_owned;          /**< rows with an owner (read racily by the control side) */
	struct { mrcd_dp_hook fn; void *arg; } hooks[MRCD_DP_MAX_HOOKS];
	unsigned n_hooks;

	struct mrcd_dp_probe probes[MRCD_DP_PROBES]; /**< ring: probe n at n % MRCD_DP_PROBES */
	uint64_t n_probes;         /**< total recorded */
	struct mrcd_dp_peer peers[MRCD_DP_PEERS];
	unsigned n_peers;

	struct mrcd_dp_worker_counters wc;
	struct mrcd_dp_qp_sums closed; /**< summed by mrcd__qp_closing */
	void *selftests;           /**< dp_selftest.c's table */
	void *clients;             /**< dp_client.c's session list */
	/* before an idle sleep: false = do not sleep (e.g. a client posted) */
	bool (*pre_sleep)(struct mrcd_dp *dp, void *arg);
	void (*post_sleep)(struct mrcd_dp *dp, void *arg);
	void *sleep_arg;
	/* just before a burst goes to mrcp_rx_burst (client receive posts) */
	void (*pre_rx)(struct mrcd_dp *dp, void *arg);
};

/** Frames to send, per port, flushed at least once per iteration. */
struct mrcd_txb {
	struct rte_mbuf *m[MRCD_DP_BURST * 2];
	unsigned n;
};

/** Received MRC packets for one mrcp_rx_burst; their mbufs are freed after.
 *  Room for MRCD_DP_RX_ROUNDS bursts from every port and two more, so that
 *  what one pass of mrcd__rx_ports reads, read again after a stall or a
 *  full burst, reaches the engine in one batch (dp_rx.c). */
#define MRCD_DP_RXB ((MRCD_DP_RX_ROUNDS * MRCD_DP_MAX_PORTS + 2) * MRCD_DP_BURST)
struct mrcd_rxb {
	struct mrcp_rx rx[MRCD_DP_RXB];
	struct rte_mbuf *hold[MRCD_DP_RXB];
	unsigned n, n_hold;
};

/* ---- dp_port.c ---- */

/** Worker 0: probe, configure and start port @i with @nq queues. */
int mrcd__port_setup(struct mrcd_dp *dp, unsigned i, unsigned nq, char *err, size_t errlen);
/** Worker k > 0: use the device worker 0 set up, on queue k. */
int mrcd__port_share(struct mrcd_dp *dp, const struct mrcd_dp *dp0, unsigned i, char *err,
		     size_t errlen);
/** Free what port @i holds on worker @dp: queued frames, delay queues. */
void mrcd__port_free(struct mrcd_dp *dp, unsigned i);
/** Drop every frame queued for transmission on @p (pending, fault-delayed). */
void mrcd__port_drop_tx(struct mrcd_dp_port *p);
/** Send the ARP/NDP/ICMP frame @f (@len bytes) on port @i now, on this
 *  worker's queue (counted in tx_l2; dropped if there is no mbuf or room). */
void mrcd__port_send_l2(struct mrcd_dp *dp, unsigned i, const uint8_t *f, size_t len);
/** Every LINK_CHECK_NS: read port @i's link, keep its gateways and route
 *  next hops resolved, and tell the engine. */
void mrcd__link_check(struct mrcd_dp *dp, unsigned i, uint64_t now);
/** Send what a full ring left over on port @i, then @b (may be NULL). */
void mrcd__port_flush(struct mrcd_dp *dp, unsigned i, struct mrcd_txb *b);
/** Queue @m for port @port (flushes a full batch). Takes @m. */
void mrcd__txb_add(struct mrcd_dp *dp, struct mrcd_txb *b, unsigned port, struct rte_mbuf *m);
/** The fault stage of port @port in @dir, for a frame a rule may match by
 *  @ev: damage @m as the verdict says, copy it, hold what is delayed in the
 *  port's delay queue. @return frames that go on now (0..2), in @out. */
unsigned mrcd__fault_stage(struct mrcd_dp *dp, unsigned port, enum mrcd_fault_dir dir, uint32_t ev,
			   struct rte_mbuf *m, uint64_t now, struct rte_mbuf *out[2]);
/** The mbuf data room the ports' MTUs need. */
unsigned mrcd__frame_room(const struct mrcd_dp_config *cfg);

/* ---- dp_tx.c ---- */

/** Set up zero-copy transmit on worker @dp (after its ports). */
void mrcd__tx_init(struct mrcd_dp *dp);
/** Frames for what mrcp_poll has to send. @return descriptors taken. */
unsigned mrcd__tx_engine(struct mrcd_dp *dp, struct mrcd_txb *b, uint64_t now);

/* ---- dp_rx.c ---- */

/** Receive a burst from every port, then the frames the fault stage held.
 *  @return frames handled. */
unsigned mrcd__rx_ports(struct mrcd_dp *dp, struct mrcd_rxb *rb, struct mrcd_txb *b, uint64_t now);
/** Frames other workers steered here. @return frames handled. */
unsigned mrcd__rx_handover(struct mrcd_dp *dp, struct mrcd_rxb *rb, struct mrcd_txb *b, uint64_t now);
/** Hand the batch to the engine and free its mbufs. */
void mrcd__rx_flush(struct mrcd_dp *dp, struct mrcd_rxb *rb, uint64_t now);
/** D71: the frames the last transmit pass sent to our own addresses,
 *  received as if from the wire (steered, RX fault stage, ICRC) but counted
 *  in rx_local. @return frames handled. */
unsigned mrcd__rx_local(struct mrcd_dp *dp, struct mrcd_rxb *rb, struct mrcd_txb *b, uint64_t now);

/* ---- dp.c ---- */

/** Add QP @qpn's counters and its EVs' to @dp->closed: call just before
 *  mrcp_qp_destroy. */
void mrcd__qp_closing(struct mrcd_dp *dp, uint32_t qpn);
/** The owner of @qpn on @dp, or NULL. */
struct mrcd_dp_qp_owner *mrcd__owner_of(struct mrcd_dp *dp, uint32_t qpn);

/* ---- dp_client.c, dp_selftest.c ---- */

/** Client sessions @w serves. */
unsigned mrcd__client_count(const struct mrcd_dp *w);
/** Free @w's session list (the sessions were stopped by the control side). */
void mrcd__clients_free(struct mrcd_dp *w);
/** End and free every selftest of @w (mrcd_dp_destroy, workers stopped). */
void mrcd__st_fini(struct mrcd_dp *w, uint64_t now);

/* ---- dp_icrc.c ---- */

/** Pick the fastest CRC-32 rte_net_crc has on this CPU for the ICRC:
 *  AVX512/VPCLMULQDQ (64 B a step), else SSE4.2/PCLMULQDQ (16 B a step),
 *  else the table. Once per process, before the first ICRC; later calls
 *  return the first answer. @return its name, for the log. */
const char *mrcd_dp_icrc_init(void);
/** The zlib-form CRC-32 of the bytes behind @crc followed by [@buf,
 *  @buf+@len): rte_net_crc over @buf, appended by GF(2) arithmetic (what
 *  mrcp_crc32(@crc, @buf, @len) gives, at rte_net_crc's speed). After
 *  mrcd_dp_icrc_init(). */
uint32_t mrcd_dp_crc32_append(uint32_t crc, const void *buf, size_t len);

/** One received frame through the ICRC check with DPDK's CRC (rte_net_crc):
 *  @ip is the innermost IP header, @len bytes to the end of the MRC pad;
 *  the ICRC follows. The bytes are restored before return.
 *  @return true if the stored ICRC matches. */
bool mrcd_dp_icrc_check(uint8_t *ip, size_t len);
/** Compute and store the ICRC after [@ip, @ip+@len) with rte_net_crc; the 8
 *  bytes before @ip are scratch (saved and restored). @return 0, -EBADMSG. */
int mrcd_dp_icrc_store(uint8_t *ip, size_t len);

#endif
