/* mrcp_cc.h - the pluggable congestion-control interface (§6, D56).
 *
 * A CC algorithm is a named ops table. Its per-QPCC state lives in an opaque
 * area of ops->priv_size bytes that the engine allocates when it creates a
 * QPCC (control path) and hands to every hook. A QPCC serves every QP to one
 * peer node by default (D53). The algorithm owns the window and only moves
 * it; the engine owns the inflight count (the nominal bytes of the packets
 * its scoreboards hold as in flight, over the QPs of the QPCC), passes it to
 * the hooks that need it, and sends while mrcp_cc_window_open() allows.
 * Hooks never allocate, never read a clock (time is @now_ns) and never fail
 * on the per-packet path.
 */
#ifndef MRCP_CC_H
#define MRCP_CC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MRCP_CC_NAME_MAX 16

/** Configuration of one QPCC. Zero in an optional field means "derive the
 *  default" (§6.4); the derived values are reported by stats(). */
struct mrcp_cc_params {
	/* environment (required) */
	uint64_t link_bps;        /**< sum of the up local ports' speeds, bit/s (D54) */
	uint64_t base_rtt_ns;     /**< configured unloaded RTT, ns; 0 = 12 us */
	uint32_t mtu;             /**< payload MTU, bytes */
	uint32_t pkt_overhead;    /**< nominal size = payload + this (40 B, §6.1) */
	bool trimming_fabric;     /**< fabric trims: target = 0.75 base_rtt */
	/* NSCC overrides (0 = default from §6.4) */
	uint64_t target_qdelay_ns;
	uint64_t max_cwnd;        /**< bytes */
	uint64_t min_cwnd;        /**< bytes */
	double fi;                /**< fair increase, bytes of growth per cwnd of bytes received */
	double eta;               /**< bytes per adjust period */
	double fi_scale;          /**< fast increase, bytes of growth per byte received */
	double gamma;             /**< MD strength, default 0.8 */
	double max_md_jump;       /**< default 0.5 */
	uint64_t adjust_period_ns;
	uint64_t adjust_bytes;
	uint32_t qa_gate;         /**< default 3 */
	uint64_t qa_threshold_ns; /**< default 4 x target */
	bool disable_qa;
	bool disable_pen;         /**< ignore the responder penalty (§6.5) */
	/* fixed */
	uint64_t fixed_cwnd;      /**< bytes; 0 = max_cwnd default */
};

/** Inputs from one SACK (§6.1). */
struct mrcp_cc_sack {
	uint64_t newly_rcvd;  /**< bytes: delta of rcvd_bytes (mod 2^24) x 256;
			       *   drives the window (increase, quick adapt);
			       *   it counts duplicates and copies whose bytes
			       *   already left flight, so inflight never
			       *   follows it */
	uint64_t inflight;    /**< the QPCC's inflight once the packets this
			       *   SACK acknowledged left it (the engine's
			       *   count), nominal bytes */
	bool ecn;             /**< SETH.m != NONE */
	bool rtt_valid;       /**< false when svc_time = 255 or the sample > 4 ms */
	uint64_t rtt_ns;      /**< now - echoed ts - svc_time */
	uint8_t pen;          /**< rcv_cwnd_pen, 0..127 */
	bool r_c;             /**< restore cwnd */
};

/* Inflight. The engine keeps one count per QPCC: a packet's nominal bytes
 * join it when the packet goes on the wire and leave it exactly once, when
 * it is acknowledged (SACK or AETH), NACKed, declared lost, expired in an
 * RTO round or abandoned (QP error or destroy, port down). Every hook that
 * takes @inflight is called after the packets it reports on left it. */

/** Read-only view for telemetry and tests. */
struct mrcp_cc_stats {
	uint64_t cwnd;        /**< bytes */
	uint64_t inflight;    /**< bytes; filled by the engine, not the algorithm */
	uint64_t base_rtt_ns;
	uint64_t target_qdelay_ns;
	uint64_t avg_delay_ns;
	uint64_t max_cwnd, min_cwnd;
	uint64_t md_events, qa_events, fast_inc_events, pen_events;
	/* the §6.4 parameters in use, defaults filled in; max_cwnd and the target
	 * move when base_rtt falls, sa and the adjust period stay those of the
	 * configured base_rtt (D66). 0 for an algorithm that has no such parameter. */
	double alpha;             /**< proportional increase, bytes per ns (cc_nscc.c) */
	double fi, eta, fi_scale; /**< units as in struct mrcp_cc_params */
	double gamma, max_md_jump;
	uint64_t adjust_period_ns, adjust_bytes, qa_threshold_ns;
	uint32_t qa_gate;
};

struct mrcp_cc_ops {
	char name[MRCP_CC_NAME_MAX];
	size_t priv_size;
	/* mandatory */
	/** @return 0, or -EINVAL if @p is unusable (no link speed or MTU, or
	 *  contradictory overrides). */
	int (*init)(void *priv, const struct mrcp_cc_params *p, uint64_t now_ns);
	/** The window, nominal bytes (§6.1). */
	uint64_t (*cwnd)(const void *priv);
	/** Everything but inflight, which the engine fills in. */
	void (*stats)(const void *priv, struct mrcp_cc_stats *out);
	/* optional: an algorithm that ignores a signal leaves its hook NULL */
	void (*on_sack)(void *priv, const struct mrcp_cc_sack *s, uint64_t now_ns);
	/** A TRIMMED / TRIMMED_LASTHOP NACK for a packet of nominal @bytes. */
	void (*on_nack)(void *priv, uint64_t bytes, uint64_t inflight, uint64_t now_ns);
	/** An inferred loss of a packet of nominal @bytes (§4.4); not called on
	 *  a trimming fabric, where a silent loss is a path failure (D61). */
	void (*on_loss)(void *priv, uint64_t bytes, uint64_t inflight, uint64_t now_ns);
	/** An RTO round (§6.1); the expired packets have left @inflight. */
	void (*on_timeout)(void *priv, uint64_t inflight, uint64_t now_ns);
	void (*release)(void *priv);
};

/** §6.1: may a packet of nominal @bytes go with @inflight bytes in flight
 *  under window @cwnd? Less than one packet in flight never blocks, so a
 *  window below one packet (min_cwnd may be) still moves one at a time and
 *  a residue cannot deadlock. The engine's one copy of the rule. */
static inline bool mrcp_cc_window_open(uint64_t inflight, uint64_t cwnd, uint64_t bytes)
{
	return inflight < bytes || inflight + bytes <= cwnd;
}

/** A registry of algorithms, one per engine (no globals). */
#define MRCP_CC_MAX_ALGOS 8
struct mrcp_cc_registry {
	const struct mrcp_cc_ops *ops[MRCP_CC_MAX_ALGOS];
	unsigned n;
};

/** Register @ops. @return 0, -EINVAL if a mandatory hook or the name is
 *  missing, -EEXIST if the name is taken, -ENOSPC if the registry is full. */
int mrcp_cc_register(struct mrcp_cc_registry *r, const struct mrcp_cc_ops *ops);
/** @return the algorithm called @name, or NULL. */
const struct mrcp_cc_ops *mrcp_cc_find(const struct mrcp_cc_registry *r, const char *name);
/** Register the built-in algorithms (nscc, fixed). @return 0 or as above. */
int mrcp_cc_register_builtin(struct mrcp_cc_registry *r);

extern const struct mrcp_cc_ops mrcp_cc_nscc;
extern const struct mrcp_cc_ops mrcp_cc_fixed;

#endif
