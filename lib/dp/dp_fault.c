/* dp_fault.c - fault injection for the datapath: the rule table, per-packet
 * verdicts drawn from a seeded PRNG, per-port counters, in-place frame
 * mutations (corrupt, trim, ECN CE) and the delay queue. Knows nothing about
 * mbufs or DPDK: the glue in lib/dp owns packets and clocks. */
#include "dp_fault.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mrcp_bytes.h"
#include "mrcp_csum.h"
#include "mrcp_frame.h"
#include "mrcp_heap.h"
#include "mrcp_prng.h"
#include "mrcp_seq.h"
#include "mrcp_wire.h"

/* ---- the stage ------------------------------------------------------------------ */

struct mrcd_fault_stage {
	struct mrcp_prng prng;
	/* Held in increasing id order: add appends (ids only grow), delete
	 * closes the gap, so list and decide need no sorting. */
	struct mrcd_fault_rule rules[MRCD_FAULT_MAX_RULES];
	unsigned n_rules;
	uint32_t next_id;  /* 0 once the id space is used up */
	/* Bit p of active[d]: some rule of port p applies to direction d
	 * (MRCD_FAULT_TX or MRCD_FAULT_RX). */
	uint32_t active[2];
	struct mrcd_fault_counters ctr[MRCD_FAULT_MAX_PORTS];
};

static_assert(MRCD_FAULT_MAX_PORTS <= 32, "active[] is one uint32_t bit per port");

int mrcd_fault_stage_create(uint64_t seed, struct mrcd_fault_stage **out)
{
	struct mrcd_fault_stage *st = calloc(1, sizeof(*st));

	if (st == NULL)
		return -ENOMEM;
	mrcp_prng_seed(&st->prng, seed);
	st->next_id = 1;
	*out = st;
	return 0;
}

void mrcd_fault_stage_destroy(struct mrcd_fault_stage *st)
{
	free(st);
}

static bool pct_ok(double pct)
{
	return pct >= 0.0 && pct <= 100.0; /* false for NaN */
}

static bool rule_ok(const struct mrcd_fault_rule *r)
{
	if (r->port >= MRCD_FAULT_MAX_PORTS || r->ev_min > r->ev_max)
		return false;
	if (r->dir != MRCD_FAULT_TX && r->dir != MRCD_FAULT_RX && r->dir != MRCD_FAULT_BOTH)
		return false;
	if (r->delay_ns > MRCD_FAULT_DELAY_MAX_NS || r->jitter_ns > MRCD_FAULT_DELAY_MAX_NS)
		return false;
	return pct_ok(r->drop_pct) && pct_ok(r->reorder_pct) && pct_ok(r->duplicate_pct) &&
	       pct_ok(r->corrupt_pct) && pct_ok(r->trim_pct) && pct_ok(r->ecn_pct);
}

static bool dir_covers(enum mrcd_fault_dir rule, enum mrcd_fault_dir pkt)
{
	return rule == MRCD_FAULT_BOTH || pkt == MRCD_FAULT_BOTH || rule == pkt;
}

/* Rebuild the bitmasks from the rules; at most 64 rules, control path only. */
static void active_rebuild(struct mrcd_fault_stage *st)
{
	st->active[MRCD_FAULT_TX] = st->active[MRCD_FAULT_RX] = 0;
	for (unsigned i = 0; i < st->n_rules; i++) {
		const struct mrcd_fault_rule *r = &st->rules[i];
		uint32_t bit = 1u << r->port;

		if (dir_covers(r->dir, MRCD_FAULT_TX))
			st->active[MRCD_FAULT_TX] |= bit;
		if (dir_covers(r->dir, MRCD_FAULT_RX))
			st->active[MRCD_FAULT_RX] |= bit;
	}
}

int mrcd_fault_add(struct mrcd_fault_stage *st, const struct mrcd_fault_rule *r,
		   uint32_t *id)
{
	struct mrcd_fault_rule *slot;

	if (!rule_ok(r))
		return -EINVAL;
	if (st->n_rules == MRCD_FAULT_MAX_RULES || st->next_id == 0)
		return -ENOSPC;
	slot = &st->rules[st->n_rules++];
	*slot = *r;
	slot->id = st->next_id++; /* wraps to 0 after UINT32_MAX: no more adds */
	active_rebuild(st);
	if (id != NULL)
		*id = slot->id;
	return 0;
}

/* Keep the rules for which @drop returns false, in order; return how many went. */
static unsigned rules_filter(struct mrcd_fault_stage *st,
			     bool (*drop)(const struct mrcd_fault_rule *, uint32_t), uint32_t arg)
{
	unsigned kept = 0, n = st->n_rules;

	for (unsigned i = 0; i < n; i++) {
		if (drop(&st->rules[i], arg))
			continue;
		if (kept != i)
			st->rules[kept] = st->rules[i];
		kept++;
	}
	st->n_rules = kept;
	active_rebuild(st);
	return n - kept;
}

static bool has_id(const struct mrcd_fault_rule *r, uint32_t id) { return r->id == id; }
static bool on_port(const struct mrcd_fault_rule *r, uint32_t port) { return r->port == port; }
static bool any_rule(const struct mrcd_fault_rule *r, uint32_t unused)
{
	(void)r;
	(void)unused;
	return true;
}

int mrcd_fault_del(struct mrcd_fault_stage *st, uint32_t id)
{
	return rules_filter(st, has_id, id) ? 0 : -ENOENT;
}

unsigned mrcd_fault_clear_port(struct mrcd_fault_stage *st, uint8_t port)
{
	return rules_filter(st, on_port, port);
}

unsigned mrcd_fault_clear_all(struct mrcd_fault_stage *st)
{
	return rules_filter(st, any_rule, 0);
}

unsigned mrcd_fault_list(const struct mrcd_fault_stage *st, struct mrcd_fault_rule *out,
			 unsigned max)
{
	unsigned n = st->n_rules;

	if (max == 0)
		return n;
	if (n > max)
		n = max;
	memcpy(out, st->rules, n * sizeof(*out));
	return n;
}

bool mrcd_fault_active(const struct mrcd_fault_stage *st, uint8_t port,
		       enum mrcd_fault_dir dir)
{
	uint32_t mask;

	if (port >= MRCD_FAULT_MAX_PORTS)
		return false;
	switch (dir) {
	case MRCD_FAULT_TX:
	case MRCD_FAULT_RX:
		mask = st->active[dir];
		break;
	case MRCD_FAULT_BOTH:
		mask = st->active[MRCD_FAULT_TX] | st->active[MRCD_FAULT_RX];
		break;
	default:
		return false;
	}
	return mask >> port & 1;
}

/* ---- decisions ---------------------------------------------------------------- */

/* One percentage draw; none at all for 0 %, so a rule without a kind does not
 * shift the PRNG sequence of the kinds it has. */
static bool draw(struct mrcd_fault_stage *st, double pct)
{
	return pct > 0.0 && mrcp_prng_unit(&st->prng) * 100.0 < pct;
}

/* Uniform in [0, @max]; @max <= 1 s, so max + 1 fits mrcp_prng_below(). */
static uint64_t draw_upto(struct mrcd_fault_stage *st, uint64_t max)
{
	static_assert(MRCD_FAULT_DELAY_MAX_NS < UINT32_MAX, "mrcp_prng_below() takes 32 bits");
	return max ? mrcp_prng_below(&st->prng, (uint32_t)max + 1) : 0;
}

static bool rule_matches(const struct mrcd_fault_rule *r, uint8_t port,
			 enum mrcd_fault_dir dir, uint32_t ev)
{
	return r->port == port && dir_covers(r->dir, dir) && ev >= r->ev_min && ev <= r->ev_max;
}

void mrcd_fault_decide(struct mrcd_fault_stage *st, uint8_t port, enum mrcd_fault_dir dir,
		       uint32_t ev, struct mrcd_fault_verdict *v)
{
	struct mrcd_fault_counters *c;
	bool matched = false, reordered = false;

	*v = (struct mrcd_fault_verdict){.copies = 1};
	if (!mrcd_fault_active(st, port, dir))
		return;
	c = &st->ctr[port];
	for (unsigned i = 0; i < st->n_rules; i++) {
		const struct mrcd_fault_rule *r = &st->rules[i];

		if (!rule_matches(r, port, dir, ev))
			continue;
		if (!matched) {
			matched = true;
			c->matched++;
		}
		if (r->blackhole) {
			c->blackholed++;
			goto dropped;
		}
		if (draw(st, r->drop_pct)) {
			c->dropped++;
			goto dropped;
		}
		v->delay_ns += r->delay_ns + draw_upto(st, r->jitter_ns);
		if (draw(st, r->reorder_pct)) {
			reordered = true;
			v->delay_ns += MRCD_FAULT_REORDER_MIN_NS +
				       draw_upto(st, MRCD_FAULT_REORDER_MAX_NS -
							     MRCD_FAULT_REORDER_MIN_NS);
		}
		if (draw(st, r->duplicate_pct))
			v->copies = 2;
		if (draw(st, r->corrupt_pct))
			v->corrupt = true;
		if (draw(st, r->trim_pct))
			v->trim = true;
		if (draw(st, r->ecn_pct))
			v->ecn_ce = true;
	}
	/* Kinds count once per packet, however many rules chose them. */
	c->delayed += v->delay_ns != 0;
	c->reordered += reordered;
	c->duplicated += v->copies == 2;
	c->corrupted += v->corrupt;
	c->trimmed += v->trim;
	c->ecn_marked += v->ecn_ce;
	return;

dropped:
	*v = (struct mrcd_fault_verdict){.drop = true, .copies = 1};
}

void mrcd_fault_counters_get(const struct mrcd_fault_stage *st, uint8_t port,
			     struct mrcd_fault_counters *out)
{
	if (port >= MRCD_FAULT_MAX_PORTS)
		memset(out, 0, sizeof(*out));
	else
		*out = st->ctr[port];
}

/* ---- frame mutations ------------------------------------------------------------- */

#define ETH_P_IPV4 0x0800u
#define ETH_P_IPV6 0x86DDu
#define ETH_P_VLAN 0x8100u
#define PROTO_UDP 17u
#define PROTO_IPV6 41u
#define PROTO_ROUTING 43u
#define BTH_LEN sizeof(struct mrcp_bth_wire)
#define BTH_ICRC_MASKED 4u /* BTH byte 4, reserved: masked to ones by the ICRC */

/* Where the pieces of a frame are. A lax walk compared with mrcp_frame_parse():
 * it checks only what the mutations need, and accepts any UDP port. */
struct loc {
	uint8_t *ip;     /* the outer IP header */
	bool v4;
	size_t ihl;      /* IPv4 header length, bytes (options included) */
	size_t mrc_off;  /* first MRC byte (BTH) */
	size_t mrc_end;  /* end of the MRC bytes: before the ICRC when the
			  * packet is whole, else the end of what is left */
	bool whole;      /* as long as UDP says: not trimmed, ends in an ICRC */
};

static int ipv6_walk(const uint8_t *f, size_t len, size_t off, size_t *udp_off)
{
	const uint8_t *ip = f + off;

	if (len - off < MRCP_IPV6_HLEN || ip[0] >> 4 != 6)
		return -EINVAL;
	switch (ip[6]) {
	case PROTO_UDP:
		*udp_off = off + MRCP_IPV6_HLEN;
		return 0;
	case PROTO_ROUTING: /* SRv6 with an SRH: skip it, an inner IPv6 follows */
		if (len - off - MRCP_IPV6_HLEN < 8 || ip[MRCP_IPV6_HLEN] != PROTO_IPV6)
			return -EINVAL;
		off += MRCP_IPV6_HLEN + 8 + (size_t)ip[MRCP_IPV6_HLEN + 1] * 8;
		break;
	case PROTO_IPV6:
		off += MRCP_IPV6_HLEN;
		break;
	default:
		return -EINVAL;
	}
	if (off > len || len - off < MRCP_IPV6_HLEN || f[off] >> 4 != 6 || f[off + 6] != PROTO_UDP)
		return -EINVAL;
	*udp_off = off + MRCP_IPV6_HLEN;
	return 0;
}

static int locate(uint8_t *f, size_t len, struct loc *lo)
{
	size_t off = 12, udp_off, udp_end;
	uint16_t et;
	int rc;

	if (len < MRCP_ETH_HLEN)
		return -EINVAL;
	et = mrcp_get_be16(f + off);
	if (et == ETH_P_VLAN) {
		if (len < MRCP_ETH_HLEN + MRCP_VLAN_HLEN)
			return -EINVAL;
		off += MRCP_VLAN_HLEN;
		et = mrcp_get_be16(f + off);
	}
	off += 2;
	lo->ip = f + off;
	if (et == ETH_P_IPV4) {
		if (len - off < MRCP_IPV4_HLEN || lo->ip[0] >> 4 != 4)
			return -EINVAL;
		lo->v4 = true;
		lo->ihl = (size_t)(lo->ip[0] & 0x0F) * 4;
		if (lo->ihl < MRCP_IPV4_HLEN || len - off < lo->ihl || lo->ip[9] != PROTO_UDP)
			return -EINVAL;
		udp_off = off + lo->ihl;
	} else if (et == ETH_P_IPV6) {
		lo->v4 = false;
		lo->ihl = 0;
		rc = ipv6_walk(f, len, off, &udp_off);
		if (rc < 0)
			return rc;
	} else {
		return -EINVAL;
	}
	if (len - udp_off < MRCP_UDP_HLEN + BTH_LEN)
		return -EINVAL;
	lo->mrc_off = udp_off + MRCP_UDP_HLEN;
	/* A whole packet ends in the ICRC where UDP says; a trimmed one is
	 * shorter than UDP says, and has no ICRC to avoid. Ethernet padding
	 * beyond the UDP end is not part of the packet. */
	udp_end = udp_off + mrcp_get_be16(f + udp_off + 4);
	lo->whole = udp_end <= len && udp_end >= lo->mrc_off + BTH_LEN + MRCP_ICRC_LEN;
	lo->mrc_end = lo->whole ? udp_end - MRCP_ICRC_LEN : len;
	return 0;
}

/* Traffic class / TOS byte of the outer IP header: read and write. */
static uint8_t tos_get(const struct loc *lo)
{
	if (lo->v4)
		return lo->ip[1];
	return (uint8_t)((lo->ip[0] & 0x0F) << 4 | lo->ip[1] >> 4);
}

static void tos_set(const struct loc *lo, uint8_t tos)
{
	if (lo->v4) {
		lo->ip[1] = tos;
		mrcp_csum_ipv4_set(lo->ip, lo->ihl);
	} else {
		lo->ip[0] = (uint8_t)((lo->ip[0] & 0xF0) | tos >> 4);
		lo->ip[1] = (uint8_t)((lo->ip[1] & 0x0F) | (tos & 0x0F) << 4);
	}
}

int mrcd_fault_corrupt(struct mrcd_fault_stage *st, uint8_t *frame, size_t len)
{
	struct mrcp_pkt p;
	struct loc lo;
	size_t mrc_len, hl, at;
	int rc;

	rc = locate(frame, len, &lo);
	if (rc < 0)
		return rc;
	/* A trimmed packet has no ICRC and is not checked (D24): a flipped
	 * header byte would go unnoticed and mislead the receiver's NACK. */
	if (!lo.whole)
		return -EINVAL;
	mrc_len = lo.mrc_end - lo.mrc_off;
	/* Prefer the payload: a header byte flipped would also fail the ICRC,
	 * but with ICRC checking off (a debug setting) it would turn into a
	 * different, valid-looking packet rather than a damaged one. */
	if (mrcp_pkt_decode_hdr(frame + lo.mrc_off, mrc_len, &p) == 0 &&
	    (hl = mrcp_pkt_hdr_len(&p)) < mrc_len) {
		at = hl + mrcp_prng_below(&st->prng, (uint32_t)(mrc_len - hl));
	} else {
		at = mrcp_prng_below(&st->prng, (uint32_t)(mrc_len - 1));
		if (at >= BTH_ICRC_MASKED)
			at++;
	}
	frame[lo.mrc_off + at] ^= 0xFF;
	return 0;
}

int mrcd_fault_trim(uint8_t *frame, size_t len, uint8_t trimmed_dscp, size_t *new_len)
{
	struct mrcp_pkt p;
	struct loc lo;
	int rc;

	if (trimmed_dscp > 63)
		return -EINVAL;
	rc = locate(frame, len, &lo);
	if (rc < 0)
		return rc;
	if (mrcp_pkt_decode_hdr(frame + lo.mrc_off, lo.mrc_end - lo.mrc_off, &p) < 0 ||
	    !mrcp_opcode_is_data(p.bth.opcode))
		return -EINVAL;
	tos_set(&lo, (uint8_t)(trimmed_dscp << 2 | (tos_get(&lo) & 3)));
	*new_len = lo.mrc_off + mrcp_pkt_hdr_len(&p);
	return 0;
}

int mrcd_fault_ecn_mark(uint8_t *frame, size_t len)
{
	struct loc lo;
	uint8_t tos;
	int rc;

	rc = locate(frame, len, &lo);
	if (rc < 0)
		return rc;
	tos = tos_get(&lo);
	if ((tos & 3) == MRCP_ECN_NOT_ECT)
		return 0;
	if ((tos & 3) != MRCP_ECN_CE)
		tos_set(&lo, (uint8_t)(tos | MRCP_ECN_CE));
	return 1;
}

/* ---- the delay queue ---------------------------------------------------------------- */

struct mrcd_delayq {
	struct mrcp_heap h;          /* payload: val.ptr = the packet */
	struct mrcp_heap_ent ent[];  /* the heap's storage, sized at creation */
};

#define DELAYQ_CAP_MAX (1u << 24)

int mrcd_delayq_create(unsigned cap, struct mrcd_delayq **out)
{
	struct mrcd_delayq *q;

	if (cap == 0 || cap > DELAYQ_CAP_MAX)
		return -EINVAL;
	q = calloc(1, sizeof(*q) + (size_t)cap * sizeof(q->ent[0]));
	if (q == NULL)
		return -ENOMEM;
	mrcp_heap_init(&q->h, q->ent, cap);
	*out = q;
	return 0;
}

void mrcd_delayq_destroy(struct mrcd_delayq *q)
{
	free(q);
}

int mrcd_delayq_push(struct mrcd_delayq *q, void *pkt, uint64_t release_ns)
{
	struct mrcp_heap_ent e = {.t = release_ns, .val.ptr = pkt};

	return mrcp_heap_push(&q->h, &e);
}

unsigned mrcd_delayq_pop_due(struct mrcd_delayq *q, uint64_t now_ns, void **pkts,
			     unsigned max)
{
	struct mrcp_heap_ent e;
	unsigned k = 0;

	while (k < max && q->h.n > 0 && mrcp_time_le(q->h.ent[0].t, now_ns)) {
		mrcp_heap_pop(&q->h, &e);
		pkts[k++] = e.val.ptr;
	}
	return k;
}

unsigned mrcd_delayq_drain(struct mrcd_delayq *q, void **pkts, unsigned max)
{
	struct mrcp_heap_ent e;
	unsigned k = 0;

	while (k < max && mrcp_heap_pop(&q->h, &e))
		pkts[k++] = e.val.ptr;
	return k;
}

uint64_t mrcd_delayq_next(const struct mrcd_delayq *q)
{
	return mrcp_heap_next_t(&q->h);
}

unsigned mrcd_delayq_count(const struct mrcd_delayq *q)
{
	return q->h.n;
}
