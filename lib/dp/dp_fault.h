/* dp_fault.h - the datapath's own fault injection (the kernel here has no
 * netem): rules that match packets by port, direction and EV range; a
 * decision per packet (drop, delay, reorder, duplicate, corrupt, trim, ECN
 * CE); the in-place frame mutations those decisions call for; per-port
 * counters; and a delay queue that holds packets until their release time.
 *
 * DPDK-free: the DPDK glue keeps its own mbufs, asks mrcd_fault_decide() what
 * to do with each one, calls the mutation functions on the frame bytes, and
 * parks delayed mbufs (as opaque pointers) in a struct mrcd_delayq.
 *
 * Threading: none of this is thread-safe. One lcore owns a stage and its
 * delay queues; the control plane changes rules on that lcore (or stops it
 * first). Randomness comes from the stage's own seeded PRNG, so a seed and
 * the same sequence of calls replay the same verdicts.
 *
 * Suggested use per packet, on the owning lcore:
 *
 *   if (!mrcd_fault_active(st, port, dir)) -> pass through untouched
 *   mrcd_fault_decide(st, port, dir, ev, &v);
 *   if (v.drop) -> free
 *   if (v.corrupt) mrcd_fault_corrupt(st, frame, len);
 *   if (v.trim)    mrcd_fault_trim(frame, len, dscp_map[TRIMMED], &len);
 *   if (v.ecn_ce)  mrcd_fault_ecn_mark(frame, len);
 *   copy the (mutated) frame once more if v.copies == 2
 *   if (v.delay_ns) mrcd_delayq_push(q, pkt, now_ns + v.delay_ns) for each
 *   copy (-ENOSPC: free and count), else send / deliver now.
 *
 * The mutations may run in any order: ECN marking works on trimmed frames,
 * and corrupting refuses a trimmed frame (it has no ICRC to fail), so a
 * packet chosen for both is simply trimmed. A -EINVAL from a mutation leaves
 * the frame untouched: send it as it is.
 */
#ifndef MRCD_DP_FAULT_H
#define MRCD_DP_FAULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- rules ----------------------------------------------------------------- */

/** Which way a rule's packets travel. The control side names directions in
 *  its own terms (enum mrcd_ctl_dir, lib/ctl); the daemon maps them here. */
enum mrcd_fault_dir { MRCD_FAULT_TX = 0, MRCD_FAULT_RX, MRCD_FAULT_BOTH };

/** Ports a stage knows: port indices 0 .. MRCD_FAULT_MAX_PORTS - 1. */
#define MRCD_FAULT_MAX_PORTS 32u
/** Rules one stage holds at a time. */
#define MRCD_FAULT_MAX_RULES 64u
/** Largest delay_ns and jitter_ns a rule may ask for, ns (1 s). */
#define MRCD_FAULT_DELAY_MAX_NS 1000000000ull
/** Extra hold-back of a packet chosen by reorder_pct, ns: uniform in
 *  [MIN, MAX], on top of any delay and jitter. 20..100 us is several packet
 *  times at any link rate mrcd runs at, so later packets overtake it, yet
 *  well below every retransmission timeout, so it reads as reordering and
 *  not as loss. */
#define MRCD_FAULT_REORDER_MIN_NS 20000ull
#define MRCD_FAULT_REORDER_MAX_NS 100000ull

/**
 * One fault rule: it matches the packets of @port travelling in @dir whose
 * EV lies in [@ev_min, @ev_max]. Percentages are independent draws, each
 * made per matched packet; 0 disables a kind.
 */
struct mrcd_fault_rule {
	uint32_t id;              /**< assigned by mrcd_fault_add(), from 1; ignored on input */
	uint8_t port;             /**< 0-based port index, < MRCD_FAULT_MAX_PORTS */
	uint32_t ev_min, ev_max;  /**< EV range, inclusive at both ends */
	enum mrcd_fault_dir dir;  /**< TX, RX, or BOTH */
	double drop_pct;          /**< %, 0..100: drop */
	bool blackhole;           /**< drop every matched packet */
	uint64_t delay_ns;        /**< fixed extra delay, ns, <= MRCD_FAULT_DELAY_MAX_NS */
	uint64_t jitter_ns;       /**< uniform extra delay in [0, jitter_ns], ns,
				   *   <= MRCD_FAULT_DELAY_MAX_NS; alone it reorders */
	double reorder_pct;       /**< %, 0..100: hold back by MRCD_FAULT_REORDER_* */
	double duplicate_pct;     /**< %, 0..100: send twice */
	double corrupt_pct;       /**< %, 0..100: flip an MRC byte (ICRC fails) */
	double trim_pct;          /**< %, 0..100: cut the payload, DSCP TRIMMED */
	double ecn_pct;           /**< %, 0..100: set CE on ECN-capable packets */
};

/** A fault stage: rules, a seeded PRNG, per-port counters. Opaque. */
struct mrcd_fault_stage;

/**
 * Create a stage with no rules.
 * @param seed  seeds the stage's PRNG (any value, 0 included).
 * @param out   out: the stage, to release with mrcd_fault_stage_destroy().
 * @return 0, or -ENOMEM.
 */
int mrcd_fault_stage_create(uint64_t seed, struct mrcd_fault_stage **out);

/** Release @st; NULL is ignored. */
void mrcd_fault_stage_destroy(struct mrcd_fault_stage *st);

/**
 * Add a copy of @r (its id field is ignored).
 * @param id  out, may be NULL: the new rule's id. Ids start at 1 and are
 *            never reused within a stage.
 * @return 0;
 *         -EINVAL if port >= MRCD_FAULT_MAX_PORTS, ev_min > ev_max, a
 *                 percentage is NaN or outside 0..100, dir is not a
 *                 enum mrcd_fault_dir value, or delay_ns or jitter_ns is above
 *                 MRCD_FAULT_DELAY_MAX_NS;
 *         -ENOSPC if the stage already holds MRCD_FAULT_MAX_RULES rules, or
 *                 (after 2^32 - 1 adds) has run out of ids.
 */
int mrcd_fault_add(struct mrcd_fault_stage *st, const struct mrcd_fault_rule *r,
		   uint32_t *id);

/** Remove rule @id. @return 0, or -ENOENT if no rule has that id. */
int mrcd_fault_del(struct mrcd_fault_stage *st, uint32_t id);

/** Remove every rule of @port. @return the number of rules removed. */
unsigned mrcd_fault_clear_port(struct mrcd_fault_stage *st, uint8_t port);

/** Remove every rule. @return the number of rules removed. Counters and
 *  the id sequence carry on. */
unsigned mrcd_fault_clear_all(struct mrcd_fault_stage *st);

/**
 * Copy up to @max rules, in increasing id order, to @out.
 * @return rules copied; with @max 0 (and @out NULL allowed), the number of
 *         rules held.
 */
unsigned mrcd_fault_list(const struct mrcd_fault_stage *st, struct mrcd_fault_rule *out,
			 unsigned max);

/**
 * Whether any rule could match a packet of @port in @dir: one bit test, so
 * the datapath skips the stage when nothing applies. A BOTH rule counts for
 * TX and RX; asking with @dir BOTH means "TX or RX".
 * @return false for a port >= MRCD_FAULT_MAX_PORTS or an invalid @dir.
 */
bool mrcd_fault_active(const struct mrcd_fault_stage *st, uint8_t port,
		       enum mrcd_fault_dir dir);

/* ---- decisions ---------------------------------------------------------------- */

/** What to do with one packet. A packet may get several things at once. */
struct mrcd_fault_verdict {
	bool drop;           /**< free it; the other fields are then defaults */
	uint8_t copies;      /**< 1, or 2 when duplicated */
	uint64_t delay_ns;   /**< hold for this long, ns (0: send now); every copy alike */
	bool corrupt;        /**< call mrcd_fault_corrupt() */
	bool trim;           /**< call mrcd_fault_trim() */
	bool ecn_ce;         /**< call mrcd_fault_ecn_mark() */
};

/**
 * Decide the fate of one packet. Every rule that matches (port, direction,
 * EV in range) applies, in id order: a blackhole rule drops at once; then a
 * drop draw may drop at once; otherwise each rule adds delay_ns plus a
 * uniform jitter draw in [0, jitter_ns], a reorder draw may add a hold-back
 * in [MRCD_FAULT_REORDER_MIN_NS, MRCD_FAULT_REORDER_MAX_NS], and the
 * duplicate, corrupt, trim and ECN draws set their fields. A draw is made
 * only for a non-zero percentage (mrcp_prng_unit() * 100 < pct), so 100 %
 * always hits. A packet that no rule matches gets the default verdict
 * (no drop, 1 copy, no delay, no flags) and touches no counter.
 * @param port  0-based port; >= MRCD_FAULT_MAX_PORTS matches nothing.
 * @param dir   MRCD_FAULT_TX or MRCD_FAULT_RX (BOTH matches rules of either
 *              direction; any other value matches nothing).
 * @param ev    the packet's entropy value.
 * @param v     out: the verdict.
 */
void mrcd_fault_decide(struct mrcd_fault_stage *st, uint8_t port, enum mrcd_fault_dir dir,
		       uint32_t ev, struct mrcd_fault_verdict *v);

/* ---- frame mutations -----------------------------------------------------------
 * @frame is one whole Ethernet frame as mrcp_frame_build() makes it:
 * Ethernet [one 802.1Q tag] | IPv4 (options allowed) or IPv6, or SRv6 (outer
 * IPv6 [routing header] + inner IPv6) | UDP | MRC bytes | ICRC, possibly
 * already trimmed and possibly followed by Ethernet padding (lengths come
 * from the IP/UDP headers). The UDP port is not checked: the datapath only
 * hands MRC traffic to the stage. "Outer" is the IPv6 header that switches
 * re-mark in SRv6 (D9), the only IP header otherwise.
 */

/**
 * Make the receiver's ICRC check fail: XOR one byte of the MRC bytes with
 * 0xFF. The byte is drawn from the payload and pad when the packet has any,
 * otherwise from the MRC headers, never BTH byte 4 (masked by the ICRC) and
 * never the ICRC itself. A single changed byte always changes a CRC-32.
 * A trimmed frame (shorter than its UDP length) is refused: it carries no
 * ICRC, the receiver does not check it (D24), and a damaged header would go
 * unnoticed. So when a verdict asks for both, trim wins whatever the order.
 * @return 0, or -EINVAL if the frame is not Ethernet/IP/UDP with at least a
 *         BTH after the UDP header, or is trimmed (the frame is untouched).
 */
int mrcd_fault_corrupt(struct mrcd_fault_stage *st, uint8_t *frame, size_t len);

/**
 * Trim a packet as a switch would (D34): keep Ethernet..UDP and the MRC
 * headers (BTH and the extension headers its opcode and BTH.ts call for),
 * cut off payload, pad and ICRC, set the outer DSCP to @trimmed_dscp keeping
 * ECN, and recompute the IPv4 header checksum. IP and UDP length fields are
 * left alone, so the receiver sees a truncated packet as well as the DSCP.
 * Only Write (data) packets are trimmed: control packets ride a class that
 * switches do not trim (D23), so for them this returns -EINVAL and the caller
 * sends the frame unchanged. Trimming a trimmed frame again is harmless.
 * @param trimmed_dscp  0..63, normally the TRIMMED class of the DSCP map.
 * @param new_len       out: the frame's length after the cut (<= @len).
 * @return 0, or -EINVAL if @trimmed_dscp > 63, the frame is not
 *         Ethernet/IP/UDP, its MRC headers do not decode, or it is not a
 *         Write.
 */
int mrcd_fault_trim(uint8_t *frame, size_t len, uint8_t trimmed_dscp, size_t *new_len);

/**
 * Mark congestion experienced: set ECN to CE in the outer IP header if it is
 * ECT(0) or ECT(1), recomputing the IPv4 header checksum.
 * @return 1 if the packet now carries CE (also when it already did), 0 if it
 *         is Not-ECT (left alone, as a switch would), or -EINVAL if the frame
 *         is not Ethernet/IP/UDP with at least a BTH.
 */
int mrcd_fault_ecn_mark(uint8_t *frame, size_t len);

/* ---- counters --------------------------------------------------------------- */

/*
 * Per-port counters: X(name, description). Free-running, written only by the
 * lcore that owns the stage, never reset (clearing rules keeps them). The
 * per-kind counters count verdicts made by mrcd_fault_decide(); a mutation the
 * frame cannot take (trim of a control packet, CE on Not-ECT) still counts.
 */
#define MRCD_FAULT_COUNTERS(X)                                                 \
	X(matched, "packets matched by at least one rule")                     \
	X(dropped, "packets dropped by a drop_pct draw")                       \
	X(blackholed, "packets dropped by a blackhole rule")                   \
	X(delayed, "packets given a non-zero delay (delay, jitter, reorder)")  \
	X(reordered, "packets held back by a reorder_pct draw")                \
	X(duplicated, "packets sent twice by a duplicate_pct draw")            \
	X(corrupted, "packets chosen for corruption (ICRC made to fail)")      \
	X(trimmed, "packets chosen for trimming")                              \
	X(ecn_marked, "packets chosen for ECN CE marking")

/** One port's counters, packets each. */
struct mrcd_fault_counters {
#define X(n, d) uint64_t n;
	MRCD_FAULT_COUNTERS(X)
#undef X
};

/** Copy @port's counters to @out; all zero for a port >= MRCD_FAULT_MAX_PORTS. */
void mrcd_fault_counters_get(const struct mrcd_fault_stage *st, uint8_t port,
			     struct mrcd_fault_counters *out);

/* ---- the delay queue ------------------------------------------------------------
 * A binary min-heap of (release time, push sequence, packet): packets leave
 * in release order, ties in push order. Fixed capacity, no allocation after
 * creation. Times are absolute ns on the caller's clock, compared wrap-safe
 * (mrcp_time_lt), so every held release must lie within 2^63 ns of the
 * others and of @now_ns.
 */
struct mrcd_delayq;

/**
 * Create a queue that holds up to @cap packets.
 * @return 0, -EINVAL if @cap is 0 or above 2^24, or -ENOMEM.
 */
int mrcd_delayq_create(unsigned cap, struct mrcd_delayq **out);

/** Release @q (not the packets still in it: drain them first); NULL is ignored. */
void mrcd_delayq_destroy(struct mrcd_delayq *q);

/**
 * Hold @pkt until @release_ns.
 * @return 0, or -ENOSPC if the queue is full (the caller then drops the
 *         packet and counts it).
 */
int mrcd_delayq_push(struct mrcd_delayq *q, void *pkt, uint64_t release_ns);

/**
 * Take out up to @max packets whose release time is at or before @now_ns,
 * earliest first (ties in push order).
 * @return packets written to @pkts.
 */
unsigned mrcd_delayq_pop_due(struct mrcd_delayq *q, uint64_t now_ns, void **pkts,
			     unsigned max);

/** Take out up to @max packets whatever their release time, in release
 *  order (for shutdown). @return packets written to @pkts. */
unsigned mrcd_delayq_drain(struct mrcd_delayq *q, void **pkts, unsigned max);

/** Earliest release time held, ns, or UINT64_MAX when empty. */
uint64_t mrcd_delayq_next(const struct mrcd_delayq *q);

/** Packets held. */
unsigned mrcd_delayq_count(const struct mrcd_delayq *q);

#endif
