/* mrcp_ev.h - per-QP entropy-value (EV) sets: generation, the GOOD / SKIP /
 * ASSUMED_BAD / DENIED state machine, active and backup pools per plane,
 * sprayed selection, resurrection-probe scheduling, reverse EVs, and the
 * responder's per-EV CE history (§5, D41-D48). Knows nothing about
 * PSNs, packets or time sources: the QP code calls it with events and now_ns.
 */
#ifndef MRCP_EV_H
#define MRCP_EV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mrcp_prng.h"
#include "mrcp_wire.h" /* enum mrcp_ev_verdict */

#define MRCP_MAX_PORTS 8   /* planes per node; port masks use bit i-1 (D49) */
#define MRCP_EV_MAX 1024   /* active + backup per QP */
#define MRCP_EV_IDX_NONE UINT16_MAX /* "no EV" in rev_ev[] */

/*
 * EV states (§5.3). 0 is invalid so a zeroed EV is never live.
 * Legal sequences: GOOD -> SKIP -> GOOD; GOOD|SKIP -> ASSUMED_BAD ->
 * (probes) -> GOOD|SKIP; any live state -> DENIED -> (controller) -> GOOD.
 */
#define MRCP_EV_STATES(X) X(GOOD) X(SKIP) X(ASSUMED_BAD) X(DENIED)
enum mrcp_ev_state {
	MRCP_EV_INVALID = 0,
#define X(s) MRCP_EV_##s,
	MRCP_EV_STATES(X)
#undef X
	MRCP_EV_NSTATES
};

/* Events that drive the state table (§5.3 rows; D30, D43-D45). */
#define MRCP_EV_EVENTS(X)                                                      \
	X(SACK_SKIP_ONCE)   /* SACK verdict m = SKIP_ONCE for this EV */       \
	X(SACK_ALWAYS_SKIP) /* SACK verdict m = ALWAYS_SKIP */                 \
	X(NACK_TRIMMED)     /* NACK TRIMMED for a packet sent on it */         \
	X(LOSS)             /* inferred loss, non-trimming fabric (D30) */     \
	X(LOSS_TRIMMING)    /* inferred loss on a trimming fabric (D30) */     \
	X(RTO)              /* RTO expired a packet last sent on it (§4.5) */  \
	X(SKIP_EXPIRED)     /* D43: new rotation begun and base_rtt passed */  \
	X(PROBE_OK_NONE)    /* D45: resurrected, last answer m = NONE */       \
	X(PROBE_OK_SKIP)    /* D45: resurrected, last answer m = SKIP_ONCE */  \
	X(DENY)             /* controller denylist */                          \
	X(ALLOW)            /* controller re-enables a DENIED EV */            \
	X(LOSS_UNDONE)      /* D64: a loss or RTO charged to it proved spurious */
enum mrcp_ev_event {
	MRCP_EV_EVT_INVALID = 0,
#define X(e) MRCP_EV_EVT_##e,
	MRCP_EV_EVENTS(X)
#undef X
	MRCP_EV_NEVENTS
};

/* Where an EV sits (D46): in rotation, waiting in its plane's backup pool, or
 * out of both (ASSUMED_BAD under probing, or DENIED). */
enum mrcp_ev_pool { MRCP_EV_POOL_NONE = 0, MRCP_EV_POOL_ACTIVE, MRCP_EV_POOL_BACKUP, MRCP_EV_POOL_OUT };

/* How EV values are made (§2.2, D6, D8). */
enum mrcp_ev_mode { MRCP_EV_MODE_UDP = 0, MRCP_EV_MODE_SRV6 };

struct mrcp_ev_config {
	uint16_t n_active;        /**< default 128; divisible by n_ports (D41) */
	uint16_t n_backup;        /**< default 64; divisible by n_ports */
	uint16_t min_active;      /**< ev_min_active; 0 = n_active / 4 (D41) */
	uint8_t n_ports;          /**< planes, 1..MRCP_MAX_PORTS */
	enum mrcp_ev_mode mode;
	bool ipv4;                /**< 16-bit EVs, upper half zero (D5) */
	uint16_t srv6_uplinks;    /**< SRv6: T0 uplinks per plane to pick from (D8) */
	bool trimming_fabric;     /**< D30: inferred loss -> ASSUMED_BAD */
	uint64_t base_rtt_ns;     /**< D43 SKIP hold time, D45 probe budget period;
				       0 = 12 us (§6.4) */
	/* D45 resurrection probes (0 = default) */
	uint64_t probe_first_ns;  /**< default 100 us after retirement */
	uint64_t probe_max_ns;    /**< default 10 ms backoff cap */
	uint8_t probe_ok_needed;  /**< default 3 consecutive answers */
	uint8_t probe_budget;     /**< default 8 probes per QP per base_rtt */
};

/** Per-EV counters; X(name, description). */
#define MRCP_EV_COUNTERS(X)                                                    \
	X(tx_pkts, "data packets sent on this EV")                             \
	X(rtx_pkts, "retransmissions sent on this EV")                         \
	X(sacked, "packets SACKed that were sent on this EV")                  \
	X(losses, "inferred losses of packets sent on this EV")                \
	X(rtos, "RTO expiries of packets sent on this EV")                     \
	X(trims, "TRIMMED NACKs for packets sent on this EV")                  \
	X(ecn, "SACKs with a non-NONE verdict for this EV")                    \
	X(probes_sent, "resurrection probes sent on this EV")                  \
	X(probes_ok, "resurrection probes answered")                           \
	X(transitions, "state changes")

struct mrcp_ev_counters {
#define X(n, d) uint64_t n;
	MRCP_EV_COUNTERS(X)
#undef X
};

struct mrcp_ev {
	uint32_t value;           /**< the 32-bit EV put on the wire */
	uint8_t port;             /**< 1-based local port = plane (D49) */
	uint8_t state;            /**< enum mrcp_ev_state */
	uint8_t pool;             /**< enum mrcp_ev_pool */
	uint8_t loss_hist;        /**< D30: losses among the last 8 sends */
	uint32_t skip_rotation;   /**< D43: rotation number when SKIP began */
	uint16_t dl_prev, dl_next;/**< the set's SKIP list while SKIP (ev.c's
				       deadline index; MRCP_EV_IDX_NONE ends) */
	uint16_t held;            /**< D65: suspect PSNs last sent on it, and its
				       probation packet; while nonzero selection
				       passes it over, its state unchanged */
	uint8_t probation;        /**< D65: bit 0 unproven (promoted or back in
				       service, nothing of it acknowledged
				       since): one packet at a time; bit 1 that
				       packet is out (one of @held) */
	uint64_t skip_since_ns;   /**< D43 */
	/* D45 resurrection */
	uint64_t probe_next_ns;   /**< when the next probe is due */
	uint64_t probe_interval_ns;
	uint64_t probe_sent_ns;   /**< 0 = none outstanding */
	uint16_t probe_id;
	uint8_t probe_ok_run;     /**< consecutive answers */
	uint8_t probe_last_m;     /**< verdict of the last answer */
	uint16_t dl_pos;          /**< its place in the set's probe heap (ASSUMED_BAD) */
	uint8_t dl_where;         /**< which deadline structure holds it (ev.c) */
	struct mrcp_ev_counters c;
};

/** A state change of a monitored EV, reported to the control plane (§5.3). */
struct mrcp_ev_change {
	uint16_t idx;
	uint32_t value;
	uint8_t port;
	uint8_t from, to;         /**< enum mrcp_ev_state */
	uint8_t event;            /**< enum mrcp_ev_event */
	bool floored;             /**< D44: ASSUMED_BAD demoted to SKIP */
	uint64_t losses;
};
typedef void (*mrcp_ev_change_fn)(void *ctx, const struct mrcp_ev_change *chg);

/** Per-set counters (beyond the per-EV ones). */
#define MRCP_EV_SET_COUNTERS(X)                                                \
	X(bad_transition, "events with no legal transition (dropped)")         \
	X(floor_demotions, "ASSUMED_BAD turned into SKIP by ev_min_active (D44)") \
	X(promotions, "backup EVs promoted into the active set (D46)")         \
	X(reshuffles, "active-set permutations reshuffled (D42)")              \
	X(select_none, "selections that found no eligible EV")                 \
	X(rev_rechoose, "reverse EVs re-chosen after lost SACKs (D48)")

struct mrcp_ev_set_counters {
#define X(n, d) uint64_t n;
	MRCP_EV_SET_COUNTERS(X)
#undef X
};

struct mrcp_ev_set {
	struct mrcp_ev_config cfg;
	struct mrcp_ev *evs;      /**< n_evs entries, grouped by plane */
	uint16_t n_evs;
	uint16_t *perm;           /**< permutation of active indices (D42) */
	uint16_t n_perm;
	uint16_t perm_pos;
	uint32_t rotation;        /**< bumped on every reshuffle */
	uint16_t n_not_good;      /**< EVs in any state but GOOD */
	uint16_t *hash;           /**< open addressing: value -> idx + 1 */
	uint16_t hash_mask;
	uint32_t port_up_local;   /**< bit i-1: our port i is up */
	uint32_t port_up_remote;  /**< bit i-1: the peer's port i is up */
	uint16_t rev_ev[MRCP_MAX_PORTS]; /**< D48: reverse EV index per plane,
					      MRCP_EV_IDX_NONE = none */
	uint64_t probe_window_start_ns;  /**< D45 budget window */
	uint8_t probes_in_window;
	uint16_t probe_seq;       /**< last probe_id handed out (per set) */
	uint16_t probe_cursor;    /**< where the next probe scan starts (fairness) */
	uint64_t probe_timeout_ns;/**< last @timeout_ns given to mrcp_ev_probes_due,
				       ns; mrcp_ev_next_deadline uses it */
	/* The deadline index (ev.c), so that mrcp_ev_next_deadline is O(1)
	 * and mrcp_ev_probes_due O(log n) per EV it acts on, whatever the
	 * states: the SKIP EVs in the order their holds began (D43), and two
	 * binary heaps of ASSUMED_BAD EVs, those waiting for their next probe
	 * by probe_next_ns and those with a probe outstanding by
	 * probe_sent_ns (D45). */
	uint16_t skip_head, skip_tail;
	uint16_t *dl_heap;        /**< [0, n_wait) waiting, [n_evs, n_evs + n_out) outstanding */
	uint16_t n_wait, n_out;
	struct mrcp_prng *prng;   /**< the engine's generator */
	mrcp_ev_change_fn on_change;
	void *on_change_ctx;
	struct mrcp_ev_set_counters c;
};

/** Fill @cfg with the defaults of D41 and D45: 128 active, 64 backup, one
 *  port, UDP mode over IPv6, base_rtt 12 us, no trimming. */
void mrcp_ev_config_defaults(struct mrcp_ev_config *cfg);

/**
 * Build the set: n_active + n_backup EVs split equally across planes, values
 * per mode (UDP: random, unique, low 16 bits in 49152..65535, D6; IPv4: upper
 * half 0, D5; SRv6: plane << 24 | T0 uplink, a random subset, D8), every EV
 * GOOD, a fresh permutation, reverse EV = a random active EV per plane.
 * Allocates (control path only).
 * @return 0, -EINVAL for a bad config (counts not divisible by n_ports, zero
 *         active EVs, too many EVs, n_ports out of 1..MRCP_MAX_PORTS,
 *         min_active > n_active, probe_first > probe_max, an unknown mode,
 *         SRv6 over IPv4, SRv6 with fewer uplinks than EVs per plane, a
 *         NULL @s, @cfg or @prng), -ENOMEM. On error @s is left zeroed, so
 *         mrcp_ev_set_fini on it is harmless.
 */
int mrcp_ev_set_init(struct mrcp_ev_set *s, const struct mrcp_ev_config *cfg,
		     struct mrcp_prng *prng, mrcp_ev_change_fn on_change, void *ctx);
void mrcp_ev_set_fini(struct mrcp_ev_set *s);

/* The walk of mrcp_ev_select() from perm_pos, wrap and reshuffle included. */
int mrcp__ev_select_walk(struct mrcp_ev_set *s, uint64_t now_ns, int exclude, uint32_t port_room);

/**
 * Choose the EV for the next packet (D42): walk the permutation, reshuffling
 * on wrap, skipping EVs that are not GOOD or are held (D65), whose port is down (local or
 * remote mask) or whose port bit is clear in @port_room (a full TX stage),
 * and the EV @exclude (a retransmission's failed EV; -1 for none).
 * Also expires SKIPs that are due (D43).
 * @return the EV index, or -1 if no EV is eligible.
 */
static inline int mrcp_ev_select(struct mrcp_ev_set *s, uint64_t now_ns, int exclude, uint32_t port_room)
{
	/* The common case, one step that takes a GOOD EV on an open port
	 * inside the rotation, inline; everything else walks. */
	if (s->perm_pos < s->n_perm) {
		uint16_t idx = s->perm[s->perm_pos];
		const struct mrcp_ev *e = &s->evs[idx];

		if (e->state == MRCP_EV_GOOD && e->held == 0 && (int)idx != exclude &&
		    (s->port_up_local & s->port_up_remote & port_room & (1u << (e->port - 1))) != 0) {
			s->perm_pos++;
			return idx;
		}
	}
	return mrcp__ev_select_walk(s, now_ns, exclude, port_room);
}

/** Record a send on EV @idx (counters and the D30 loss history). */
static inline void mrcp_ev_on_send(struct mrcp_ev_set *s, int idx, bool rtx)
{
	struct mrcp_ev *e;

	if (idx < 0 || idx >= (int)s->n_evs)
		return;
	e = &s->evs[idx];
	e->c.tx_pkts++; /* every data packet, retransmissions included */
	if (rtx)
		e->c.rtx_pkts++;
	e->loss_hist <<= 1; /* D30: one bit per send, the oldest falls off */
	if (e->probation == 1) {
		/* D65: an unproven EV carries one packet until it is answered */
		e->probation = 3;
		e->held++;
	}
}

/** D65: EV @idx's probation packet is settled (resent or charged): it may
 *  carry another, still one at a time. */
static inline void mrcp_ev_probation_settled(struct mrcp_ev_set *s, int idx)
{
	struct mrcp_ev *e;

	if (idx < 0 || idx >= (int)s->n_evs || !(s->evs[idx].probation & 2))
		return;
	e = &s->evs[idx];
	e->probation = 1;
	e->held--;
}

/** D65: a packet sent on EV @idx was acknowledged: the EV is proven. */
static inline void mrcp_ev_proven(struct mrcp_ev_set *s, int idx)
{
	if (idx < 0 || idx >= (int)s->n_evs || s->evs[idx].probation == 0)
		return;
	mrcp_ev_probation_settled(s, idx);
	s->evs[idx].probation = 0;
}

/**
 * Apply @event to EV @idx: the default-deny table, the ev_min_active floor
 * (D44), pool moves and same-plane backup promotion (D46), probe scheduling
 * on retirement (D45). An event with no legal transition is counted in
 * bad_transition and changes nothing.
 * @return the new state.
 */
enum mrcp_ev_state mrcp_ev_event(struct mrcp_ev_set *s, int idx, enum mrcp_ev_event event, uint64_t now_ns);

/** An inferred loss on EV @idx: LOSS or LOSS_TRIMMING per the fabric, with
 *  the 2-of-8 escalation to ASSUMED_BAD (D30). @return the new state. */
enum mrcp_ev_state mrcp_ev_on_loss(struct mrcp_ev_set *s, int idx, uint64_t now_ns);

/** The EV index for the wire value @value, or -1. */
int mrcp_ev_lookup(const struct mrcp_ev_set *s, uint32_t value);

/** Local / remote port masks (bit i-1 = port i up). EVs on a down port are
 *  masked, not changed (§5.6). */
void mrcp_ev_set_port_masks(struct mrcp_ev_set *s, uint32_t local_up, uint32_t remote_up);

/** Usable (GOOD or SKIP) active EVs, the quantity the D44 floor counts. */
unsigned mrcp_ev_usable_active(const struct mrcp_ev_set *s);

/**
 * Resurrection probes due now (D45), at most @max, within the per-base_rtt
 * budget. Marks each returned EV's probe as sent (probe_sent_ns = now, a
 * fresh probe_id). Also times out probes unanswered for @timeout_ns
 * (doubling the interval, resetting the run), and expires the SKIPs that
 * are due (D43), so one timer on mrcp_ev_next_deadline drives both.
 * @return the number of EV indices written to @out.
 */
unsigned mrcp_ev_probes_due(struct mrcp_ev_set *s, uint64_t now_ns, uint64_t timeout_ns, uint16_t *out, unsigned max);

/** The answer to EV @idx's outstanding probe, with verdict @m. After
 *  probe_ok_needed answers in a row the EV is resurrected (PROBE_OK_NONE or
 *  PROBE_OK_SKIP) into its plane's backup pool and promoted if the plane is
 *  short (D45, D46); ALWAYS_SKIP counts as unanswered. */
void mrcp_ev_probe_answer(struct mrcp_ev_set *s, int idx, uint8_t m, uint64_t now_ns);

/** The earliest time mrcp_ev_probes_due or a SKIP expiry has work, or
 *  UINT64_MAX. Lets the QP arm one timer. O(1): read off the deadline index,
 *  which assumes now_ns never decreases from one call into the set to the
 *  next (architecture.md §4); if it did, a SKIP could expire late, never
 *  early. */
uint64_t mrcp_ev_next_deadline(const struct mrcp_ev_set *s);

/** D48: reverse EV index for plane @port (1-based), -1 if none usable. */
static inline int mrcp_ev_rev_get(const struct mrcp_ev_set *s, uint8_t port)
{
	uint16_t idx;
	uint8_t state;

	if (port < 1 || port > s->cfg.n_ports)
		return -1;
	idx = s->rev_ev[port - 1];
	if (idx == MRCP_EV_IDX_NONE || idx >= s->n_evs)
		return -1;
	if ((s->port_up_local & s->port_up_remote & (1u << (port - 1))) == 0)
		return -1;
	state = s->evs[idx].state;
	return state == MRCP_EV_GOOD || state == MRCP_EV_SKIP ? idx : -1; /* usable */
}

/** D48: a data packet we sent on EV @idx was SACKed: counts it in the EV's
 *  sacked counter and, if the EV is GOOD or SKIP, makes it its plane's
 *  reverse EV. */
void mrcp_ev_rev_learn(struct mrcp_ev_set *s, int idx);
/** D48: SACKs seem lost: choose a new random GOOD reverse EV on every plane. */
void mrcp_ev_rev_rechoose(struct mrcp_ev_set *s);

/* ---- responder side (D47) -------------------------------------------------- */

#define MRCP_CE_TABLE_SIZE 256
_Static_assert(MRCP_CE_TABLE_SIZE == 256, "mrcp_ce_table_update: slot = 8-bit hash");
struct mrcp_ce_table {
	uint32_t ev[MRCP_CE_TABLE_SIZE];   /**< EV owning the slot */
	uint8_t hist[MRCP_CE_TABLE_SIZE];  /**< last 8 packets: bit = CE */
	uint8_t always_skip_min;           /**< default 6 (of 8) */
};
void mrcp_ce_table_init(struct mrcp_ce_table *t, uint8_t always_skip_min);
/** Record a packet on EV @ev with CE mark @ce; @return its SACK verdict:
 *  NONE when !ce, ALWAYS_SKIP when >= always_skip_min of the last 8 were
 *  CE, else SKIP_ONCE (D47). Inline: it runs for every data packet. */
static inline uint8_t mrcp_ce_table_update(struct mrcp_ce_table *t, uint32_t ev, bool ce)
{
	/* 256 slots: the top 8 bits of a Fibonacci hash */
	unsigned slot = (ev * 0x9E3779B1u) >> 24;

	if (t->ev[slot] != ev) {
		/* another EV took the slot: its history starts empty (a zeroed
		 * slot and EV 0 behave the same way) */
		t->ev[slot] = ev;
		t->hist[slot] = 0;
	}
	t->hist[slot] = (uint8_t)(t->hist[slot] << 1 | (ce ? 1u : 0u));
	if (!ce)
		return MRCP_VERDICT_NONE;
	if (__builtin_popcount(t->hist[slot]) >= t->always_skip_min)
		return MRCP_VERDICT_ALWAYS_SKIP;
	return MRCP_VERDICT_SKIP_ONCE;
}

/** "GOOD", ... for telemetry; "INVALID" otherwise. */
const char *mrcp_ev_state_name(uint8_t state);
const char *mrcp_ev_event_name(uint8_t event);

#endif
