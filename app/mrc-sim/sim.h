/* sim.h - mrc-sim: a seeded, single-threaded discrete-event simulator of MRC
 * engines (lib/core) over a multi-plane two-tier Clos fabric.
 *
 * Model. H hosts, each with P ports; port p (1-based) connects to plane p.
 * Every plane is an independent two-tier Clos: T0 leaf switches with
 * hosts_per_t0 hosts each, and t1_per_plane T1 spines, every T0 linked to
 * every T1 of its plane. Every link direction has an output queue (rate,
 * finite buffer, ECN marking between kmin and kmax, trimming, tail drop).
 * Routing: ECMP at the T0 uplink by hashing the packet's EV (an RC QP has a
 * single fixed EV), static T1 -> T0 -> host. Failures: a blackhole or a
 * flap drops everything silently and never reconverges; a link_down is seen
 * by routing, which stops hashing onto the link reconverge_ms later (and a
 * host's NIC sees its own link go down at once); gray links lose a share of
 * their packets, slow links run at a fraction of the rate, ev_drop
 * loses a share of the packets carrying one EV, and host_pause stops a
 * host's engine (not its NIC) for a while, once or periodically.
 *
 * Packets are not frames: they carry the engine's encoded MRC headers and
 * the payload length only (engines run with place_payload = false), plus
 * EV, DSCP, ECN and trim state. Serialisation counts header + payload + pad
 * + SIM_WIRE_OVERHEAD bytes.
 *
 * Determinism (architecture.md §5): one seed drives the fabric PRNG
 * (ECN marks, ECMP salt) and every engine's seed; events run in (time,
 * insertion sequence) order. The same scenario and seed give the same output
 * byte for byte.
 */
#ifndef MRC_SIM_H
#define MRC_SIM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "mrcp_engine.h"

#define SIM_MAX_FAILURES 64
/** Ethernet 14 + IPv4 20 + UDP 8 + ICRC 4, bytes (no preamble/FCS/IFG). */
#define SIM_WIRE_OVERHEAD 46u

#define SIM_MAX_STEPS 64      /**< allreduce_ring steps */
#define SIM_MAX_REPORT 256    /**< flows reported one by one */

enum sim_workload { SIM_WL_P2P = 0, SIM_WL_PERMUTATION, SIM_WL_INCAST, SIM_WL_ALLREDUCE, SIM_WL_ALLTOALL };
/** Failure kinds (docs/simulator.md, "Failures"). */
enum sim_fail_kind {
	SIM_FAIL_LINK_DOWN = 0,   /**< down, seen by routing after reconverge_ms */
	SIM_FAIL_LINK_UP,         /**< back to healthy (up, no loss, full rate) */
	SIM_FAIL_SWITCH_DOWN,     /**< link_down on every link of a switch */
	SIM_FAIL_BLACKHOLE,       /**< down, silent: never reconverges */
	SIM_FAIL_GRAY,            /**< loses loss_pct % of packets, both ways */
	SIM_FAIL_SLOW,            /**< rate / factor, both ways */
	SIM_FAIL_FLAP,            /**< silent down/up every period/2 for duration */
	SIM_FAIL_EV_DROP,         /**< loses loss_pct % of one EV's packets */
	SIM_FAIL_SWITCH_BLACKHOLE,/**< blackhole on every link of a switch (E3) */
	SIM_FAIL_HOST_PAUSE,      /**< a host's engine is not run for duration (D65) */
};

/** One scheduled failure. Link: t0 + t1 (a T0-T1 link), host (its host-T0
 *  link) or pod + t1 + t2 (a T1-T2 link); switch: t0 or t1. Unused fields
 *  are -1. */
struct sim_failure {
	uint64_t at_ns;           /**< when, ns of simulated time */
	enum sim_fail_kind kind;
	int plane;                /**< 0-based plane; ev_drop: -1 (the EV's own) */
	int t0, t1, host;         /**< 0-based indices, -1 = not given */
	int pod, t2;              /**< three tiers: a T1-T2 link is pod + t1 (within
	                           *   the pod) + t2; -1 = not given */
	double loss_pct;          /**< gray, ev_drop: percent of packets lost */
	double factor;            /**< slow: the link runs at rate / factor */
	uint64_t period_ns;       /**< flap: one down + up cycle, ns; host_pause:
	                           *   the pause repeats this often (0 = once) */
	uint64_t duration_ns;     /**< flap: how long it flaps, ns; then up;
	                           *   host_pause: how long each pause lasts */
	int dir;                  /**< blackhole: 0 both ways, 1 up only (host -> T0,
	                           *   T0 -> T1), 2 down only */
	uint32_t flow;            /**< ev_drop: the flow whose first QP ... */
	uint32_t ev_index;        /**< ... owns the EV at this index (its EV set) */
};

/** A scenario file (scenario.c), with defaults for every absent key. */
struct sim_scenario {
	char path[256];           /**< the file it came from */
	uint64_t seed;
	uint32_t hosts;           /**< H */
	uint32_t planes;          /**< ports per host, 1..MRCP_MAX_PORTS */
	uint32_t hosts_per_t0;
	uint32_t t1_per_plane;
	double link_gbps;         /**< every link, Gb/s */
	uint64_t delay_ns;        /**< propagation delay of every link, ns */
	uint32_t buffer_kb;       /**< output queue buffer, KiB */
	bool trim;                /**< switches trim instead of dropping */
	uint32_t trim_kb;         /**< trim above this backlog, KiB; default buffer_kb */
	uint32_t ecn_kmin_kb;     /**< KiB; kmin = kmax = 0: no marking */
	uint32_t ecn_kmax_kb;     /**< KiB */
	bool ecn_lasthop;         /**< mark on the T0 -> host downlink too */
	uint32_t t0_per_pod;      /**< three tiers: T0s per pod, each pod with its own
	                           *   t1_per_plane T1s; 0 = two tiers (one pod) */
	uint32_t t2_per_plane;    /**< three tiers: T2s, each linked to every T1 */
	bool source_routed;       /**< routing: source - the EV picks the T0 uplink
	                           *   (SRv6-like static paths), no ECMP hash and no
	                           *   reconvergence */
	enum sim_workload wl;
	uint64_t bytes;           /**< per flow, bytes */
	uint32_t qps;             /**< QPs per flow */
	uint32_t msg_kb;          /**< Write size, KiB */
	uint32_t src, dst;        /**< p2p hosts; incast: dst is the incast receiver */
	bool perm_random;         /**< permutation mapping: random (seeded), not shift */
	uint32_t senders;         /**< incast senders, default 7 */
	uint32_t ranks;           /**< allreduce_ring ranks; 0 = every host */
	uint32_t steps;           /**< allreduce_ring steps */
	bool shared_qps;          /**< alltoall: i -> j and j -> i share one connection */
	uint64_t compute_ns;      /**< allreduce_ring compute phase per step, ns */
	uint64_t base_rtt_ns;     /**< engine base_rtt, ns; 0 = engine default (12 us, §6.4) */
	bool cc_per_qp;           /**< cc_scope: qp (D53); default one QPCC per peer */
	uint32_t rto_timeout;     /**< engine D32 timeout exponent; 0 = engine default */
	uint32_t ev_active;       /**< active EVs per QP (D41); 0 = 128 rounded to the planes */
	uint32_t ev_backup;       /**< backup EVs per QP; UINT32_MAX = 64 rounded to the planes */
	uint32_t sq_depth;        /**< engine send queue depth per QP; 0 = engine default */
	uint32_t rq_depth;        /**< engine receive queue depth per QP; 0 = engine default */
	uint32_t cq_size;         /**< engine completion queue entries; 0 = engine default */
	uint32_t ctl_queue_size;  /**< engine control packet queue; 0 = engine default */
	uint32_t event_queue_size;/**< engine event queue; 0 = engine default */
	uint32_t mpr;             /**< D25 window, x128 PSNs; 0 = engine default */
	uint64_t duration_ns;     /**< simulated-time cap, ns */
	uint64_t reconverge_ns;   /**< link_down -> routing stops using it, ns */
	double loss_pct;          /**< random loss, % of packets on every T0 -> host link */
	unsigned n_failures;
	struct sim_failure failures[SIM_MAX_FAILURES];
};

/** What the command line asks of a run besides its result. */
struct sim_opts {
	uint64_t bucket_ns;       /**< time-series bucket, ns; 0 = no series */
	bool progress;            /**< a progress line on stderr, and the event rate */
	bool heap_queue;          /**< --event-queue heap: the binary heap (mrcp_heap.h)
	                           *   instead of the calendar queue (mrcp_calq.h);
	                           *   the output is the same, only speed differs */
};

/** The result of one run. */
struct sim_result {
	const char *transport;    /**< "mrc" or "rc" */
	uint32_t flows, flows_done;
	uint64_t bytes_done;      /**< bytes completed over all flows */
	uint64_t finish_ns;       /**< last flow completion (max), ns; 0 if none */
	uint64_t end_ns;          /**< simulated time when the run stopped, ns */
	bool stalled;             /**< stopped early: flows unfinished, no event pending */
	uint64_t min_flow_ns;     /**< fastest flow, ns */
	uint64_t rtx_fast, rtx_nack, rtx_rto, rtx_port_down;
	uint64_t tx_data_pkts;
	uint64_t rto_rounds;      /**< RTO rounds, requester QPs (§4.5) */
	uint64_t silent_rounds;   /**< RTO expiries met with probes instead (D65) */
	uint64_t suspects;        /**< PSNs held for a loss verdict (D65) */
	uint64_t rtx_spurious;    /**< fast retransmissions found unneeded */
	uint64_t ev_transitions;  /**< EV state changes, requester QPs (mrcp_ev counters) */
	uint64_t evs_not_good;    /**< requester EVs not GOOD at the end */
	uint64_t evs_out_plane[MRCP_MAX_PORTS]; /**< of them ASSUMED_BAD or DENIED, per plane */
	uint64_t qp_errors;       /**< MRCP_EVENT_QP_ERROR events */
	uint64_t wc_err;
	uint64_t drops_buffer;    /**< tail drops in switch queues */
	uint64_t drops_down;      /**< packets sent onto a down link */
	uint64_t drops_loss;      /**< packets lost on gray links and to ev_drop */
	uint32_t evdrop_ev;       /**< ev_drop: the EV value (the last one applied) */
	uint8_t evdrop_state;     /**< its enum mrcp_ev_state at the end; 0 = none */
	uint64_t evdrop_trans;    /**< its transitions counter at the end */
	uint32_t evdrop_promoted; /**< EVs of its QP in the backup pool then, active at the end */
	uint64_t trims;
	uint64_t ecn_marks;
	uint64_t ctl_dropped;     /**< engine pools overflowed, summed over the */
	uint64_t cq_overflow;     /**< engines (mrcp_engine_counters): a note */
	uint64_t events_dropped;  /**< when nonzero (their sizes are the sim's) */
	long peak_rss_kb;         /**< the process's peak RSS after the run, KiB */
	uint64_t events;          /**< discrete events processed */
	uint64_t hop_events;      /**< of them, a packet reaching a switch or host */
	double cpu_s;             /**< CPU time of the event loop, s (not part of the output) */
	double setup_s;           /**< CPU time of the setup (engines, QPs), s */
	/* time series (opts.bucket_ns): per bucket from t = 0, malloc'd */
	uint32_t ts_n;            /**< buckets up to end_ns */
	uint64_t *ts_bytes;       /**< bytes completed at requesters in the bucket */
	uint64_t *ts_drops;       /**< packets dropped, blackholed or lost in it */
	uint64_t *ts_rx;          /**< payload bytes reaching receiving hosts in it (retransmissions too) */
	double live_gbps;         /**< p2p: min(src, dst) rate of NIC links up at the end, Gb/s */
	/* per flow (the first SIM_MAX_REPORT), incast and allreduce_ring */
	uint32_t n_report;
	uint32_t flow_src[SIM_MAX_REPORT], flow_dst[SIM_MAX_REPORT];
	uint64_t flow_done_ns[SIM_MAX_REPORT]; /**< 0 = unfinished */
	/* incast: the victim flow (the last flow) */
	double victim_gbps;       /**< victim bytes / its completion time; 0 if unfinished */
	double victim_fair_gbps;  /**< its receiver's rate (planes x link) / flows into it */
	/* allreduce_ring, per step over the ranks */
	uint32_t steps;
	struct sim_step {
		uint64_t compute_ns;
		uint64_t wait_p50_ns, wait_max_ns;   /**< collective wait */
		uint64_t step_p50_ns, step_max_ns;   /**< compute + wait */
	} step[SIM_MAX_STEPS];
	uint64_t step_p50_ns, step_max_ns;       /**< over every rank and step */
	/* completion times (fct) over the flows, or the ranks of a collective,
	 * that finished (every flow starts at t = 0) */
	uint32_t fct_n;           /**< units finished */
	uint64_t fct_mean_ns, fct_p50_ns, fct_p99_ns, fct_max_ns;
	uint64_t fct_ideal_ns;    /**< the largest ideal of a unit (docs/simulator.md) */
	double senders_jain;      /**< incast: Jain's index of the senders' goodputs */
	/* memory, bytes as allocated (not RSS: that is --progress's) */
	uint64_t mem_engine_bytes;/**< the engines, QPs excluded (mrcp_engine_mem) */
	uint64_t mem_qp_bytes;    /**< the engines' QPs */
	uint32_t mem_qps;
	uint64_t mem_sim_bytes;   /**< the simulator's own */
};

/** Defaults for every key. */
void sim_scenario_defaults(struct sim_scenario *s);
/** Parse @path over the defaults. Errors go to stderr as file:line: msg.
 *  @return 0, -1 on any error. */
int sim_scenario_load(const char *path, struct sim_scenario *s);

/** The number of flows @s's workload has (ev_drop's flow key). */
uint32_t sim_scenario_flows(const struct sim_scenario *s);

/** Run @s with @mode. @return 0, or -1 on a setup error (engine config). */
int sim_run(const struct sim_scenario *s, enum mrcp_qp_mode mode, const struct sim_opts *o,
	    struct sim_result *r);

/** Free what sim_run allocated in @r (the time series). */
void sim_result_free(struct sim_result *r);

#endif
