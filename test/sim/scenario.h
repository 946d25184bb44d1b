/* scenario.h - two MRC engines over the test fabric, driven by a scenario
 * description: QPs in one or both directions post Writes (or WriteImms) of
 * a pattern, impairments and scheduled failures are applied, and at the end
 * every byte and every completion is checked (exactly once, in MSN order). */
#ifndef SCENARIO_H
#define SCENARIO_H

#include <stdbool.h>
#include <stdint.h>

#include "fabric.h"
#include "mrcp_engine.h"
#include "mrcp_prng.h"

#define SC_MAX_QPS 16

struct sc_cfg {
	const char *name;
	uint64_t seed;
	uint8_t planes, paths;
	uint8_t family;              /**< 4 or 6 */
	uint64_t path_bps;           /**< per path queue rate, bit/s; 0 = infinite */
	uint64_t port_bps;           /**< NIC port rate, bit/s */
	uint64_t delay_ns;           /**< one-way propagation per path */
	uint64_t jitter_ns;
	struct fabric_path_cfg imp;  /**< loss, dup, reorder, corrupt (applied to all paths) */
	bool trim;                   /**< trimming queues (and engines told so) */
	uint32_t trim_bytes;
	bool ecn;
	uint32_t ecn_kmin, ecn_kmax;
	unsigned nqps;               /**< per direction */
	bool bidir;
	uint32_t msg_size;           /**< bytes */
	unsigned msgs;               /**< per QP */
	bool write_imm;
	enum mrcp_qp_mode mode;
	uint8_t timeout;             /**< 0 = 6 */
	uint8_t exp_cnt;             /**< D33; 0 = engine default */
	bool fixed_init_psn;
	uint32_t init_psn;
	uint64_t base_rtt_ns;        /**< engines' configured base RTT; 0 = 12 us */
	uint64_t deadline_ns;        /**< virtual time limit */
	bool expect_error;           /**< every QP must end in ERROR with error completions */
	uint16_t mtu;                /**< engines' payload MTU; 0 = engine default */
	unsigned window;             /**< messages posted per QP at a time (reposted
				      *   as they complete); 0 = all at setup */
	bool check_invariants;       /**< mrcp__check_invariants() after every
				      *   engine call (on by default);
				      *   sc_verify() asserts none failed */
	/* A worker that sleeps (node 1 unless sleep_node says otherwise): its
	 * engine alternates awake periods uniform in [0, awake_max_ns] with
	 * sleeps uniform in [0, sleep_max_ns]; asleep, it is not polled and
	 * packets for it are held, then handed over in bursts when it wakes. */
	uint64_t sleep_max_ns;       /**< 0 = never sleeps */
	uint64_t awake_max_ns;
	uint8_t sleep_nodes;         /**< bit n: node n sleeps; 0 = node 1 */
	/* Host pauses (fabric_node_pause, D65): the nodes in pause_nodes are
	 * not run for pause_ns from pause_at_ns, again every pause_period_ns */
	uint64_t pause_at_ns, pause_ns, pause_period_ns;
	uint8_t pause_nodes;         /**< bit n: node n pauses */
};

void sc_cfg_defaults(struct sc_cfg *c);

struct sc_qp {
	int from;                    /**< sending node */
	uint32_t qpn_tx, qpn_rx;     /**< on the sender, on the receiver */
	uint32_t region;             /**< byte offset of this QP's data */
	unsigned next_wc, next_rwc;  /**< completions seen, in order */
	unsigned errors;             /**< error completions */
	bool failed;
};

struct sc_held;

/** What the fabric drives for one node: the engine, asleep or awake. */
struct sc_node {
	struct sc *s;
	int n;
	struct mrcp_prng prng;
	bool sleeps;
	uint64_t now;                /**< time of the last call */
	uint64_t asleep_until, awake_until;
	struct sc_held *held_head, *held_tail;
	uint64_t held, slept_ns;     /**< packets held, total sleep */
};

struct sc {
	struct sc_cfg cfg;
	struct sc_node node[2];
	unsigned posted[2 * SC_MAX_QPS]; /**< messages posted per QP */
	unsigned inv_checks, inv_failures;
	char inv_why[256];           /**< the first invariant failure */
	struct fabric *f;
	struct mrcp_engine *e[2];
	uint8_t *mem[2];             /**< [0, span) source, [span, 2 span) destination */
	uint64_t span;
	uint32_t key[2];
	struct sc_qp q[2 * SC_MAX_QPS];
	unsigned nq;
	unsigned violations;         /**< out-of-order or duplicate completions */
	char why[256];
};

/** Build fabric, engines and QPs and post every message. Asserts on setup errors. */
void sc_setup(struct sc *s, const struct sc_cfg *c);
/** Run until every QP finished (or failed) or the deadline. @return 0 or -ETIMEDOUT. */
int sc_run(struct sc *s);
/** Run for @ns of virtual time, draining completions. */
void sc_run_for(struct sc *s, uint64_t ns);
/** Check every byte and completion; asserts. */
void sc_verify(struct sc *s);
/** Sum of a QP counter over every QP on node @n. */
uint64_t sc_qp_sum(struct sc *s, int n, size_t counter_offset);
#define SC_SUM(s, n, field) sc_qp_sum((s), (n), offsetof(struct mrcp_qp_counters, field))
/** Payload bytes placed at node @n so far. */
uint64_t sc_rx_bytes(struct sc *s, int n);
void sc_teardown(struct sc *s);

#endif
