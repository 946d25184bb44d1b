/* engine_internal.h - the engine's private structures, shared by engine.c
 * (instance, dispatch, poll), qp.c (lifecycle, connection info, posting),
 * req.c (requester), resp.c (responder) and ep.c (endpoint operations).
 * Nothing outside lib/core includes this file. */
#ifndef MRCP_ENGINE_INTERNAL_H
#define MRCP_ENGINE_INTERNAL_H

#include <string.h>

#include "mrcp_engine.h"
#include "mrcp_prng.h"
#include "mrcp_seq.h"
#include "mrcp_timer.h"
#include "mrcp_wire.h"

#define NIL UINT32_MAX
#define QPN_SLOT_BITS_MIN 2           /* QPNs 0..3 are never handed out */
#define PKT_OVERHEAD 40u              /* nominal size = UDP payload + 40 (§6.1) */
#define TS_UNIT_SHIFT 7               /* TSETH tsr = 0: 128 ns units (D13) */
#define RTT_SAMPLE_MAX_NS 4000000ull  /* D13 */
#define QP_TX_BURST 16                /* packets per QP per round-robin turn */
#define PEER_PROBES_MAX 8             /* outstanding EV probes per peer */
#define PSU_TRIES 3                   /* D50 */
#define PSU_INTERVAL_NS 1000000ull    /* D50 */
#define EV_PROBE_TIMEOUT_NS 2000000ull /* D57 */
#define EV_PROBE_MIN_GAP_NS 10000ull  /* per-port EV probe rate limit (§7) */
#define STALL_BASE_RTTS 4             /* D65: a timer this many base RTTs late = a stall */
#define REO_WINDOW_SACKS 256          /* D65: SACKs per reorder / RTT max window */
#define REO_MAX_MIN_RTTS 2             /* D65: reo_wnd at most this many min RTTs (or a base RTT) */
#define LATE_FIRST_SACKS 16           /* D65: a QP's first SACKs, whose RTTs the fabric's queues may not show yet */

/* For a per-packet step called from two or three places (new data and
 * retransmissions) that gcc -O2 would leave out of line: the call and its
 * register saves cost as much as the step. */
#define MRCP_PKT_INLINE inline __attribute__((always_inline))

/* The smallest power of two >= @n (ring and table sizes, set at create). */
static inline uint32_t mrcp__pow2_at_least(uint32_t n)
{
	uint32_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

/* Sizing by use (mrcp_engine_config.preallocate off): a ring or table of
 * capacity @cap (a power of two) starts with this many entries, or @cap if
 * smaller, and doubles when what is outstanding outgrows it. */
#define MRCP_GROW_FIRST 16u
static inline uint32_t mrcp__first_size(const struct mrcp_engine_config *c, uint32_t cap)
{
	return c->preallocate || cap < MRCP_GROW_FIRST ? cap : MRCP_GROW_FIRST;
}

/* Double the storage @buf of a ring of @esz-byte entries indexed by
 * free-running counters (entry i at i & *@mask), keeping entries [head,
 * tail) at their indices; at most @cap entries. @return the new storage (the
 * old one is freed and *@mask updated), or NULL at @cap or out of memory
 * (nothing changes). */
void *mrcp__ring_grow(void *buf, uint32_t *mask, uint32_t head, uint32_t tail, size_t esz, uint32_t cap);

/* ---- protection domains and memory regions (D67, D68) ------------------- */

/* A PD other than the default one. Its handle is gen << 16 | slot; slot 0 is
 * the default PD (handle 0), which has no entry's state to keep. */
struct eng_pd {
	uint32_t n_mrs, n_qps;   /* members: a PD is freed only when empty */
	uint16_t gen;            /* bumped per allocation: a freed handle dies */
	bool used;
};

struct eng_mr {
	uint64_t va, len;
	uint8_t *host;
	uint32_t access;
	uint32_t key;            /* lkey == rkey: random tag << mr_slot_bits | slot (D68) */
	uint32_t refs;           /* WQEs referencing it */
	uint16_t pd;             /* slot of its PD; 0 = the default PD (D67) */
	bool used;
};

/* ---- congestion control instance (a QPCC, D53) --------------------------- */

struct cc_inst {
	const struct mrcp_cc_ops *ops;
	void *priv;
	uint32_t users;          /* QPs sharing it */
	uint64_t inflight;       /* nominal bytes of the SB_OUT packets of every
				  * QP sharing it (mrcp_cc.h): out_push() adds,
				  * out_remove() and a QP's error or free take
				  * away; the one count, the algorithm reads it */
};

/* May a packet of nominal @bytes go on @cc now (§6.1)? */
static inline bool mrcp__cc_can_send(const struct cc_inst *cc, uint64_t bytes)
{
	return mrcp_cc_window_open(cc->inflight, cc->ops->cwnd(cc->priv), bytes);
}

/* @cc's statistics: the algorithm's, with the engine's inflight. */
static inline void mrcp__cc_stats(const struct cc_inst *cc, struct mrcp_cc_stats *out)
{
	cc->ops->stats(cc->priv, out);
	out->inflight = cc->inflight;
}

/* ---- peers (remote nodes) ------------------------------------------------- */

struct ep_probe {
	uint16_t req_id;
	uint8_t port;
	uint32_t ev;
	uint64_t sent_ns;        /* 0 = free */
};

struct peer {
	bool used;
	struct mrcp_ip node;
	uint8_t n_ports;
	struct mrcp_ip port_addr[MRCP_MAX_PORTS];
	uint32_t remote_up;      /* the peer's port mask (D49) */
	uint8_t psu_seen;        /* bit s: an update from the peer's shard s was applied */
	uint16_t psu_last_seq[MRCP_SHARDS]; /* last PORT_STATUS_UPDATE applied, per shard (D63) */
	/* our PORT_STATUS_UPDATEs to it (D50) */
	uint16_t psu_seq;
	uint8_t psu_tries_left;
	uint64_t psu_next_ns;
	uint32_t psu_mask;
	struct ep_probe probes[PEER_PROBES_MAX];
	uint16_t probe_req_id;   /* EV probe request ids (apart from psu_seq) */
	struct cc_inst cc;       /* per-peer QPCC (D53) */
	uint32_t n_qps;
	uint32_t qps_head;       /* QP slots toward this peer (list) */
};

/* D69: is @src @p's address on our port @port, the one plane a packet from
 * @p that arrived there can have come from (D49: port i talks to port i)?
 * An IPv4 address is its first 4 bytes. */
static inline bool mrcp__peer_on_plane(const struct peer *p, uint8_t port, const struct mrcp_ip *src)
{
	const struct mrcp_ip *a;

	if (port == 0 || port > p->n_ports)
		return false;
	a = &p->port_addr[port - 1];
	if (a->family != src->family)
		return false;
	/* per packet: word compares, not a call to memcmp */
	if (a->family == 4) {
		uint32_t x, y;

		memcpy(&x, a->a, 4);
		memcpy(&y, src->a, 4);
		return x == y;
	}
	{
		uint64_t x0, x1, y0, y1;

		memcpy(&x0, a->a, 8);
		memcpy(&x1, a->a + 8, 8);
		memcpy(&y0, src->a, 8);
		memcpy(&y1, src->a + 8, 8);
		return ((x0 ^ y0) | (x1 ^ y1)) == 0;
	}
}

/* ---- requester state ------------------------------------------------------- */

enum {
	SB_OUT = 1u << 0,        /* sent, not SACKed, on the send-order list */
	SB_SACKED = 1u << 1,
	SB_RTXQ = 1u << 2,       /* queued for retransmission */
	SB_BY_TIMEOUT = 1u << 3, /* its last send was an RTO retransmission */
	SB_LIVE = 1u << 4,       /* entry in use (PSN in [snd_una, next_psn)) */
	SB_SUSPECT = 1u << 5,    /* D65: out of flight and queued, held for the
				  * verdict at not_before_ns; its EV is held */
};

/* A retransmitted PSN whose scoreboard slot a later PSN took (sizing by
 * use): the fields check_spurious reads. */
struct sb_past {
	uint64_t sent_ns;
	uint32_t psn;
	uint8_t tx_count, rtx_cause;
};

/* One outstanding PSN (§4.4 scoreboard). Indexed by PSN & sb_mask. */
struct sb_entry {
	uint64_t sent_ns;        /* last (re)transmission */
	uint64_t deadline_ns;    /* RTO deadline: sent + T x b (§4.5) */
	uint64_t not_before_ns;  /* D35: resource NACK hold; D65: a suspect's verdict */
	uint32_t wqe;            /* send-queue index (free-running) */
	uint32_t msg_off;        /* offset of the payload in the message */
	uint32_t prev, next;     /* send-order list, by PSN; NIL ends */
	uint16_t len;            /* payload bytes */
	uint16_t nominal;        /* bytes charged to CC */
	int16_t ev;              /* EV index of the last send */
	uint8_t port;
	uint8_t flags;
	uint8_t b_exp;           /* b = 2^b_exp */
	uint8_t tx_count;
	uint8_t rtx_cause;       /* which counter the next retransmit bumps */
	uint16_t charged;        /* D64: 1 + the EV charged with this PSN's loss or RTO, 0 none */
	uint32_t tx_wait_ns;     /* D65: the wait in the port's TX stage estimated at the send */
	uint8_t spare[4];        /* to 64 B (pad bytes before charged and tx_wait_ns): indexing by PSN is a shift */
};
static_assert(sizeof(struct sb_entry) == 64, "sb_entry: a power of two");

struct wqe {
	uint64_t wr_id;
	uint64_t remote_va;
	uint32_t rkey;
	uint32_t imm;
	uint32_t len;            /* message bytes */
	uint32_t seg_off;        /* bytes segmented into PSNs so far */
	uint32_t first_psn, last_psn;
	uint16_t msn, rq_msn;
	uint8_t opcode;          /* enum mrcp_wr_opcode */
	uint8_t flags;
	uint8_t n_sge;
	bool started;            /* first PSN assigned */
	bool hdr_ready;          /* hdr and npkts are set */
	uint8_t hdr[MRCP_DATA_HDR_MAX]; /* mrcp_data_hdr_patch() template */
	uint32_t npkts;          /* packets in the message (hdr_ready) */
	bool all_sent;
	struct {
		uint8_t *host;
		uint32_t len;
		uint32_t mr;     /* MR slot */
	} sge[MRCP_MAX_SGE];
};

/* ---- responder state ------------------------------------------------------- */

struct rmsg {
	uint32_t dma_len;
	uint32_t got;            /* accepted payload bytes (D39) */
	uint32_t imm;
	uint32_t last_psn;       /* known once the LAST/ONLY packet arrived */
	uint16_t msn;
	uint16_t rq_msn;
	bool used;
	bool complete;
	bool has_imm;
	bool last_seen;
};

/* ---- the QP ------------------------------------------------------------------------ */

struct qp {
	uint32_t qpn;
	uint32_t slot;
	struct mrcp_engine *e;   /* for callbacks that get only the QP (EV changes) */
	uint8_t state;           /* enum mrcp_qp_state */
	uint8_t mode;            /* enum mrcp_qp_mode */
	uint16_t pd;             /* slot of its PD (D67); 0 = the default PD */
	struct mrcp_qp_err err;  /* why it entered ERROR (D70) */
	uint64_t user_ctx;
	struct peer *peer;
	uint32_t peer_next;      /* next QP slot toward the same peer */
	uint32_t dqpn;
	uint16_t mtu;
	bool peer_trim_nack;     /* D40 */
	bool peer_svc_time;
	struct mrcp_qp_attr attr;

	/* timeouts (§4.5, D32, D33) */
	uint8_t timeout, linear_cnt, exp_cnt;
	uint64_t T_ns;
	uint8_t k;               /* consecutive timeouts / resource NACKs */
	uint64_t rto_bump_ns;    /* D33: when an RTO round last counted a retry */

	/* requester */
	struct wqe *sq;
	uint32_t sq_mask;        /* storage - 1 (it doubles, mrcp__first_size) */
	uint32_t sq_cap;         /* the send queue depth: WQEs outstanding at most */
	uint32_t sq_head;        /* oldest not completed (free-running) */
	uint32_t sq_seg;         /* next WQE to segment */
	uint32_t sq_tail;        /* next free */
	uint16_t next_msn, next_rq_msn;
	uint16_t peer_acked_msn; /* highest MSN the AETH reported */
	bool peer_acked_valid;
	uint16_t wimm_outstanding, max_wimm;
	uint32_t init_psn;
	uint32_t next_psn;
	uint32_t snd_una;        /* cack + 1 as the requester knows it */
	uint32_t W;              /* requester window, PSNs (§4.1) */
	struct sb_entry *sb;
	uint32_t sb_mask;        /* storage - 1: PSNs [next_psn - sb_mask - 1, next_psn) */
	uint32_t sb_cap;         /* pow2(W): what the window can need */
	/* what check_spurious may read of PSNs [next_psn - sb_cap, next_psn -
	 * sb_mask - 1), had the scoreboard its full sb_cap slots: the
	 * retransmitted ones, oldest first (mrcp__qp_sb_evict) */
	struct sb_past *sbp;
	uint32_t sbp_mask, sbp_head, sbp_tail;
	struct sb_entry sbp_view; /* mrcp__qp_sb_past()'s answer for one of them */
	uint32_t out_head, out_tail; /* send-order list of SB_OUT entries */
	uint32_t n_out;
	uint32_t n_rtxq;
	uint64_t outstanding_bytes; /* nominal bytes of SB_OUT entries */
	struct cc_inst *cc;
	struct cc_inst own_cc;   /* when cc_per_qp */
	uint32_t last_rcvd_units;
	bool rcvd_valid;
	uint64_t min_rtt_ns;
	uint64_t rack_rtt_ns;    /* RTT of the latest valid sample (D29 note) */
	uint64_t last_tx_data_ns;/* D48: when we last sent data */
	uint64_t last_rx_data_ns;/* D48: when data last arrived */
	uint64_t rev_probe_ns;   /* D48: when we last probed a reverse path */
	uint8_t rev_probe_plane; /* D48: the plane probed last */
	/* D65 loss inference: all in send-time or RTT ns */
	uint64_t acked_newest_ns;/* latest send time of a PSN acknowledged by a SACK (RACK.xmit_ts) */
	uint64_t reo_cur_ns, reo_prev_ns; /* largest reordering seen: this window, the last */
	uint64_t rtt_cur_ns, rtt_prev_ns; /* largest RTT sample: this window, the last */
	uint32_t win_sacks;      /* SACKs in this window (REO_WINDOW_SACKS) */
	uint32_t n_suspect;      /* SB_SUSPECT entries */
	uint64_t last_sack_ns;
	uint64_t last_progress_ns;
	uint64_t target_qdelay_ns;
	/* reliability probe (D36, §4.7) */
	bool tlp_out;
	uint64_t tlp_sent_ns;
	uint64_t probe_answered_ns; /* D75: send time of the latest probe answered */
	uint16_t probe_id;

	/* responder */
	uint32_t rcv_init_psn;
	uint32_t rcv_cack;
	uint32_t rW;             /* responder window, PSNs */
	uint64_t *rbits;         /* ring bitmap indexed by PSN & rbits_mask */
	uint32_t ooo;            /* PSNs above rcv_cack received (D18) */
	uint32_t rbits_mask;
	struct rmsg *rm;
	uint32_t rm_mask;        /* storage - 1: MSNs [rcv_msn, rcv_msn + rm_mask] */
	uint32_t rm_cap;         /* pow2(rW): open messages at most (§4.2) */
	uint16_t rcv_msn;        /* next MSN to release in order */
	uint16_t rcv_acked_msn;  /* last MSN reported in an AETH */
	bool rcv_msn_moved;      /* D38: AETH due at end of burst */
	uint32_t last_released_psn;
	uint64_t *rq;            /* posted receive wr_ids */
	uint32_t rq_mask;        /* storage - 1 */
	uint32_t rq_cap;         /* the receive queue depth */
	uint32_t rq_posted, rq_used; /* free-running counters */
	uint16_t stash_imm;      /* complete WriteImm messages not yet released */
	uint16_t max_wimm_local;
	uint32_t new_since_sack; /* D28 */
	bool sack_due;           /* end-of-burst SACK */
	bool in_burst;
	uint32_t burst_next;     /* list of QPs touched in this RX burst */
	/* the packet that triggers the end-of-burst SACK */
	uint32_t trig_psn, trig_ev;
	uint16_t trig_ts;
	uint8_t trig_port, trig_m;
	uint64_t trig_rx_ns;
	uint64_t rcvd_bytes;     /* D19, bytes of nominal size */
	uint8_t backlog_pct;     /* D55 */
	bool pen_was_on;
	struct mrcp_ce_table ce;

	/* multipath */
	struct mrcp_ev_set evs;
	int rc_ev;               /* RC mode: the one EV */

	/* scheduling */
	struct mrcp_timer timer;
	uint32_t ready_next, ready_prev;
	bool in_ready;
	bool used;

	struct mrcp_qp_counters c;
};

/* ---- the engine --------------------------------------------------------------------- */

struct mrcp_engine {
	struct mrcp_engine_config cfg;
	struct mrcp_prng prng;
	struct mrcp_cc_registry ccreg;
	struct mrcp_timer_wheel wheel;
	uint64_t now;            /* time of the current call */

	struct eng_mr *mrs;      /* max_mrs entries */
	uint32_t mr_slot_bits;   /* D68: a key's low bits name its slot */
	uint32_t mr_slot_mask;   /* (1 << mr_slot_bits) - 1, for the per-packet lookup */
	uint32_t mr_rr;          /* next slot to try: a freed slot is reused late */
	struct mrcp_prng key_prng; /* D68: key tags only, never the main PRNG */
	struct eng_pd *pds;      /* D67: max_pds + 1 entries (slot 0 unused: the
				  * default PD); NULL until the first mrcp_pd_alloc */

	struct qp *qps;
	uint32_t qp_slot_bits;
	uint32_t qp_slot_mask;   /* (1 << qp_slot_bits) - 1, for the per-packet lookup */
	uint32_t qpn_seq;
	uint32_t qp_rr;          /* round-robin cursor */
	uint32_t ready_head, ready_tail;

	struct peer *peers;
	uint32_t peers_hw;       /* peers[0, peers_hw) may be in use: a peer takes
				  * the lowest free slot and keeps it */
	uint32_t *peer_hash;     /* node and port addresses -> slot + 1 (open
				  * addressing); NULL: mrcp__peer_find scans */
	uint32_t peer_hash_mask, peer_keys;

	/* completions, events, control packets: rings with free-running
	 * indices; each holds up to its _cap entries (the configured size) in
	 * storage of _mask + 1 that starts small and doubles when full
	 * (mrcp__ring_grow) */
	struct mrcp_wc *cq;
	uint32_t cq_mask, cq_head, cq_tail, cq_cap;
	struct mrcp_event *evq;
	uint32_t evq_mask, evq_head, evq_tail, evq_cap;
	struct mrcp_tx *ctl;
	uint32_t ctl_mask, ctl_head, ctl_tail, ctl_cap;

	uint32_t burst_head;     /* QPs touched in the current RX burst */
	bool cq_blocked;         /* a QP held completions back: CQ was full */
	uint32_t port_room;      /* bit i-1: port i's TX stage has room */
	uint32_t port_up;        /* bit i-1: port i's link is up */
	uint64_t ep_deadline;    /* peer timers (PSU retries, EV probe timeouts) */
	struct mrcp_timer ep_timer;
	uint64_t ep_last_probe_ns[MRCP_MAX_PORTS];
	uint64_t stall_end_ns;   /* D65: end of the latest local stall; 0 = none yet */
	uint64_t port_free_ns[MRCP_MAX_PORTS]; /* D65: when port i+1's TX stage drains of the data sent so far (estimate) */
	/* the last packet size each port's drain time was computed for, and
	 * that time (nominal x 8 / port_bps, ns): most packets are MTU-sized */
	uint16_t port_tx_nominal[MRCP_MAX_PORTS];
	uint64_t port_tx_ns[MRCP_MAX_PORTS];

	struct mrcp_engine_counters c;
	struct mrcp_probe_rtt_hist probe_rtt; /* EV probe answers (ep.c) */
};

/* D65: a timer of @len ns due at @end that fell due during a local stall
 * (at or before the stall's end) runs again from the stall's end: the
 * engine was not running to see it pass. @return the (moved) end. */
static inline uint64_t mrcp__stall_rearm(const struct mrcp_engine *e, uint64_t end, uint64_t len)
{
	if (e->stall_end_ns == 0 || !mrcp_time_le(end, e->stall_end_ns))
		return end;
	return e->stall_end_ns + len;
}

/* engine.c; the per-packet lookups and conversions are inline here */
static inline struct qp *mrcp__qp_lookup(struct mrcp_engine *e, uint32_t qpn)
{
	struct qp *qp = &e->qps[qpn & e->qp_slot_mask];

	if (!qp->used || qp->qpn != qpn)
		return NULL;
	return qp;
}

/* D68: the region slot a key names (its low mr_slot_bits bits). */
static inline uint32_t mrcp__mr_slot(const struct mrcp_engine *e, uint32_t key)
{
	return key & e->mr_slot_mask;
}

/* The region of @key (every bit of it, so a stale or guessed tag misses),
 * or NULL. The caller checks its PD (D67). */
static inline struct eng_mr *mrcp__mr_lookup(struct mrcp_engine *e, uint32_t key)
{
	uint32_t i = mrcp__mr_slot(e, key);

	if (i >= e->cfg.max_mrs || !e->mrs[i].used || e->mrs[i].key != key)
		return NULL;
	return &e->mrs[i];
}

/* D67: the slot of PD handle @pd (0 for MRCP_PD_DEFAULT), or -1 if it names
 * no allocated PD. */
int mrcp__pd_slot(const struct mrcp_engine *e, uint32_t pd);

static inline bool mrcp__cq_room(const struct mrcp_engine *e)
{
	return e->cq_tail - e->cq_head < e->cq_cap;
}

static inline uint16_t mrcp__ts_now(uint64_t now_ns)
{
	return (uint16_t)(now_ns >> TS_UNIT_SHIFT); /* D13, tsr = 0 */
}

static inline uint64_t mrcp__ts_age_ns(uint64_t now_ns, uint16_t ts)
{
	return (uint64_t)(uint16_t)(mrcp__ts_now(now_ns) - ts) << TS_UNIT_SHIFT;
}

static inline uint32_t mrcp__nominal(uint32_t mrc_len)
{
	/* UDP payload (MRC bytes + ICRC) + 40 B (§6.1) */
	return mrc_len + MRCP_ICRC_LEN + PKT_OVERHEAD;
}

struct mrcp_tx *mrcp__ctl_alloc(struct mrcp_engine *e);
bool mrcp__cq_push(struct mrcp_engine *e, const struct mrcp_wc *wc);
void mrcp__event_push(struct mrcp_engine *e, const struct mrcp_event *ev);
void mrcp__qp_ready(struct mrcp_engine *e, struct qp *qp);
void mrcp__qp_unready(struct mrcp_engine *e, struct qp *qp);
void mrcp__qp_arm(struct mrcp_engine *e, struct qp *qp);
/* Ready every QP toward @p that shares @cc and has work: bytes left the
 * QPCC's inflight, and a QP its window held back has no timer of its own. */
void mrcp__cc_wake(struct mrcp_engine *e, const struct cc_inst *cc, const struct peer *p);
void mrcp__burst_touch(struct mrcp_engine *e, struct qp *qp);
struct peer *mrcp__peer_find(struct mrcp_engine *e, const struct mrcp_ip *addr);
/* @p has just taken its slot: index its addresses for mrcp__peer_find
 * (growing the table; without memory, finds fall back to a scan). */
void mrcp__peer_added(struct mrcp_engine *e, struct peer *p);
/* Debug check for tests (never on the fast path: it walks every QP and
 * scoreboard). For every QP, n_out and outstanding_bytes match its
 * send-order list and only SB_OUT entries are on it; for every QPCC, the
 * QPCC's inflight equals the nominal bytes of the SB_OUT packets of all the
 * QPs sharing it (D53). @return 0, or -1 with the first violation in @why. */
int mrcp__check_invariants(const struct mrcp_engine *e, char *why, size_t why_len);

/* qp.c */
/* Sizing by use: double @qp's scoreboard (up to sb_cap entries) or its
 * message ring (up to rm_cap, until it holds MSN @msn), entries keeping
 * their PSN or MSN. @return false if it is at its cap or out of memory. */
bool mrcp__qp_sb_grow(struct qp *qp);
bool mrcp__qp_rm_grow(struct qp *qp, uint16_t msn);
/* PSN @psn is about to take the slot of PSN psn - sb_mask - 1, which was
 * retransmitted (tx_count >= 2) and is acknowledged: keep what a full-size
 * scoreboard would still hold of it for check_spurious. */
void mrcp__qp_sb_evict(struct qp *qp, uint32_t psn);
/* The scoreboard entry of PSN @psn as a full-size scoreboard (sb_cap slots)
 * would hold it, live or acknowledged: in the scoreboard, or rebuilt from
 * what mrcp__qp_sb_evict kept (valid until the next call). NULL when @psn
 * is not within sb_cap of next_psn, or was never resent. */
struct sb_entry *mrcp__qp_sb_past(struct qp *qp, uint32_t psn);
/* Room in the scoreboard for PSN next_psn: false means wait. */
static inline bool mrcp__qp_sb_room(struct qp *qp)
{
	return (uint32_t)mrcp_psn_diff(qp->next_psn, qp->snd_una) <= qp->sb_mask || mrcp__qp_sb_grow(qp);
}
/* Room in the message ring for MSN @msn, which is within rm_cap of rcv_msn. */
static inline bool mrcp__qp_rm_room(struct qp *qp, uint16_t msn)
{
	return (uint32_t)mrcp_msn_diff(msn, qp->rcv_msn) <= qp->rm_mask || mrcp__qp_rm_grow(qp, msn);
}
/* Bytes @qp allocated beyond its slot (mrcp_engine_mem). */
uint64_t mrcp__qp_mem(const struct qp *qp);
/* Move @qp to ERROR (a sink: a second call is ignored), flush its work with
 * @err->status first, remember @err (D70) and report it as an event. */
void mrcp__qp_fail(struct mrcp_engine *e, struct qp *qp, const struct mrcp_qp_err *err);
/* The same, for a failure that concerns no particular message. */
void mrcp__qp_error(struct mrcp_engine *e, struct qp *qp, uint8_t status, uint8_t cause);
void mrcp__qp_flush(struct mrcp_engine *e, struct qp *qp, uint8_t first_status);
void mrcp__qp_free(struct mrcp_engine *e, struct qp *qp);
/* The requester's completion for @w with @status. */
void mrcp__wqe_wc(const struct qp *qp, const struct wqe *w, uint8_t status, struct mrcp_wc *wc);
/* Drop @w's references on its memory regions. */
void mrcp__wqe_release(struct mrcp_engine *e, struct wqe *w);

/* req.c: the requester */
unsigned mrcp__req_tx(struct mrcp_engine *e, struct qp *qp, struct mrcp_tx *out, unsigned max);
bool mrcp__req_has_work(const struct qp *qp);
void mrcp__req_on_sack(struct mrcp_engine *e, struct qp *qp, const struct mrcp_pkt *p, const struct mrcp_rx *rx);
void mrcp__req_on_nack(struct mrcp_engine *e, struct qp *qp, const struct mrcp_pkt *p);
void mrcp__req_on_ack(struct mrcp_engine *e, struct qp *qp, const struct mrcp_pkt *p);
void mrcp__req_on_timer(struct mrcp_engine *e, struct qp *qp);
uint64_t mrcp__req_deadline(const struct mrcp_engine *e, const struct qp *qp);
void mrcp__req_complete(struct mrcp_engine *e, struct qp *qp);
void mrcp__req_port_down(struct mrcp_engine *e, struct qp *qp, uint8_t port);

/* resp.c: the responder */
void mrcp__resp_on_data(struct mrcp_engine *e, struct qp *qp, const struct mrcp_write *p, const struct mrcp_rx *rx);
void mrcp__resp_on_probe(struct mrcp_engine *e, struct qp *qp, const struct mrcp_pkt *p, const struct mrcp_rx *rx);
void mrcp__resp_burst_end(struct mrcp_engine *e, struct qp *qp);
void mrcp__resp_release(struct mrcp_engine *e, struct qp *qp);
void mrcp__resp_farewell(struct mrcp_engine *e, struct qp *qp);

/* ep.c: endpoint operations (QPN 0x2) */
void mrcp__ep_on_rx(struct mrcp_engine *e, const struct mrcp_pkt *p, const struct mrcp_rx *rx);
void mrcp__ep_on_timer(struct mrcp_engine *e);
void mrcp__ep_port_change(struct mrcp_engine *e);
uint64_t mrcp__ep_deadline(const struct mrcp_engine *e);

/* Fill the addressing of a control packet to @qp's peer on @port, using the
 * plane's reverse EV (D48). */
void mrcp__ctl_route(struct mrcp_engine *e, struct qp *qp, struct mrcp_tx *tx, uint8_t port);

#endif
