/* ev.c - per-QP entropy-value sets (§5): makes the EV values, runs each
 * EV's GOOD / SKIP / ASSUMED_BAD / DENIED state machine from a default-deny
 * table, keeps the active and backup pools of every plane, sprays packets over
 * the active set, schedules resurrection probes, and tracks the reverse EVs and
 * the responder's per-EV CE history. It knows nothing about PSNs, packets or
 * clocks: the QP feeds it events and now_ns, and sends what it is told to.
 */
#include "mrcp_ev.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mrcp_seq.h"
#include "mrcp_wire.h"

#define EV_BASE_RTT_DEFAULT_NS 12000ull     /* §6.4: 12 us if unset */
#define EV_PROBE_FIRST_DEFAULT_NS 100000ull /* D45: 100 us after retirement */
#define EV_PROBE_MAX_DEFAULT_NS 10000000ull /* D45: back off up to 10 ms */
#define EV_PROBE_OK_DEFAULT 3               /* D45: answers in a row */
#define EV_PROBE_BUDGET_DEFAULT 8           /* D45: probes per base_rtt */
#define EV_UDP_SPORT_MIN 49152u             /* D6: source-port half 49152..65535 */
#define EV_UDP_SPORT_SPAN 16384u
#define EV_D30_LOSSES 2                     /* D30: 2 of the last 8 sends */
#define CE_ALWAYS_SKIP_DEFAULT 6            /* D47: 6 of the last 8 CE */

/* ---- names (X-macros) ------------------------------------------------------- */

static const char *const ev_state_names[MRCP_EV_NSTATES] = {
	[MRCP_EV_INVALID] = "INVALID",
#define X(st) [MRCP_EV_##st] = #st,
	MRCP_EV_STATES(X)
#undef X
};

static const char *const ev_event_names[MRCP_EV_NEVENTS] = {
	[MRCP_EV_EVT_INVALID] = "INVALID",
#define X(e) [MRCP_EV_EVT_##e] = #e,
	MRCP_EV_EVENTS(X)
#undef X
};

const char *mrcp_ev_state_name(uint8_t state)
{
	return state < MRCP_EV_NSTATES ? ev_state_names[state] : "INVALID";
}

const char *mrcp_ev_event_name(uint8_t event)
{
	return event < MRCP_EV_NEVENTS ? ev_event_names[event] : "INVALID";
}

/* ---- the transition table (§5.3) -------------------------------------- */

/*
 * A cell holds the next state, EV_IGNORE, or EV_DENY. EV_DENY is 0, so every
 * cell that is not listed below is denied: the event is dropped and counted in
 * bad_transition. EV_IGNORE marks an event that is legal but changes nothing
 * (a late signal about packets sent before the EV left service, or an
 * idempotent controller command); it is dropped without counting, because
 * bad_transition is meant to flag bugs, not normal in-flight races.
 * A cell whose next state equals its row (SKIP -> SKIP) is a refresh: the SKIP
 * hold restarts (D43) but no state change is reported.
 * The D30 escalation and the D44 floor are applied on top of the table, in
 * mrcp_ev_on_loss and ev_apply.
 */
#define EV_DENY MRCP_EV_INVALID
#define EV_IGNORE MRCP_EV_NSTATES
_Static_assert(MRCP_EV_INVALID == 0, "EV_DENY must be the zero cell");
_Static_assert(MRCP_EV_NSTATES < UINT8_MAX, "cells are uint8_t");

#define LEGAL(st, evt, to) [MRCP_EV_##st][MRCP_EV_EVT_##evt] = MRCP_EV_##to
#define IGNORED(st, evt) [MRCP_EV_##st][MRCP_EV_EVT_##evt] = EV_IGNORE

static const uint8_t ev_fsm[MRCP_EV_NSTATES][MRCP_EV_NEVENTS] = {
	/* every cell starts as EV_DENY; only the cells below are legal.
	 * The INVALID row and the INVALID column stay all-deny. */

	/* ---- GOOD ---- */
	/* §5.3: SACK m = SKIP_ONCE skips the EV briefly */
	LEGAL(GOOD, SACK_SKIP_ONCE, SKIP),
	/* §5.3: SACK m = ALWAYS_SKIP retires the EV */
	LEGAL(GOOD, SACK_ALWAYS_SKIP, ASSUMED_BAD),
	/* §5.3: a NACK TRIMMED for a packet sent on it skips the EV */
	LEGAL(GOOD, NACK_TRIMMED, SKIP),
	/* D30: inferred loss without trimming skips (2-of-8 escalates) */
	LEGAL(GOOD, LOSS, SKIP),
	/* D30: inferred loss on a trimming fabric retires the EV */
	LEGAL(GOOD, LOSS_TRIMMING, ASSUMED_BAD),
	/* §5.3: an RTO of a packet last sent on it retires the EV */
	LEGAL(GOOD, RTO, ASSUMED_BAD),
	/* §5.3: controller denylist */
	LEGAL(GOOD, DENY, DENIED),
	/* our choice: ALLOW of an EV that is not DENIED is an idempotent
	 * controller command, not an error */
	IGNORED(GOOD, ALLOW),
	/* D64: nothing to undo */
	IGNORED(GOOD, LOSS_UNDONE),
	/* denied (bugs: only SKIP EVs expire, only ASSUMED_BAD EVs are
	 * probed): SKIP_EXPIRED, PROBE_OK_NONE, PROBE_OK_SKIP */

	/* ---- SKIP ---- */
	/* §5.3: a further SKIP trigger restarts the SKIP hold (refresh) */
	LEGAL(SKIP, SACK_SKIP_ONCE, SKIP),
	LEGAL(SKIP, NACK_TRIMMED, SKIP),
	LEGAL(SKIP, LOSS, SKIP),
	/* §5.3: "on to ASSUMED_BAD by its triggers" */
	LEGAL(SKIP, SACK_ALWAYS_SKIP, ASSUMED_BAD),
	LEGAL(SKIP, LOSS_TRIMMING, ASSUMED_BAD),
	LEGAL(SKIP, RTO, ASSUMED_BAD),
	/* D43: next rotation begun and one base_rtt passed */
	LEGAL(SKIP, SKIP_EXPIRED, GOOD),
	/* §5.3: controller denylist */
	LEGAL(SKIP, DENY, DENIED),
	/* our choice: idempotent controller command */
	IGNORED(SKIP, ALLOW),
	/* D64: the loss that skipped it was not one */
	LEGAL(SKIP, LOSS_UNDONE, GOOD),
	/* denied (bugs: SKIP EVs are not probed): PROBE_OK_NONE, PROBE_OK_SKIP */

	/* ---- ASSUMED_BAD ---- */
	/* our choice: verdicts, trims, losses and RTOs that arrive after
	 * retirement are about packets sent before it; the EV is already out
	 * of service, so they are legal no-ops (the per-EV counters still
	 * record them) */
	IGNORED(ASSUMED_BAD, SACK_SKIP_ONCE),
	IGNORED(ASSUMED_BAD, SACK_ALWAYS_SKIP),
	IGNORED(ASSUMED_BAD, NACK_TRIMMED),
	IGNORED(ASSUMED_BAD, LOSS),
	IGNORED(ASSUMED_BAD, LOSS_TRIMMING),
	IGNORED(ASSUMED_BAD, RTO),
	/* D45: resurrected, last answer m = NONE */
	LEGAL(ASSUMED_BAD, PROBE_OK_NONE, GOOD),
	/* D45: resurrected, last answer m = SKIP_ONCE */
	LEGAL(ASSUMED_BAD, PROBE_OK_SKIP, SKIP),
	/* §5.3: "controller -> DENIED"; probing stops */
	LEGAL(ASSUMED_BAD, DENY, DENIED),
	/* our choice: idempotent controller command; probes decide */
	IGNORED(ASSUMED_BAD, ALLOW),
	/* D64: the loss or RTO that retired it was not one: back in service
	 * as if its probes had been answered (a really dead path retires it
	 * again with its next loss) */
	LEGAL(ASSUMED_BAD, LOSS_UNDONE, GOOD),
	/* denied (bug: not SKIP): SKIP_EXPIRED */

	/* ---- DENIED ---- */
	/* our choice: late signals about packets sent before the deny */
	IGNORED(DENIED, SACK_SKIP_ONCE),
	IGNORED(DENIED, SACK_ALWAYS_SKIP),
	IGNORED(DENIED, NACK_TRIMMED),
	IGNORED(DENIED, LOSS),
	IGNORED(DENIED, LOSS_TRIMMING),
	IGNORED(DENIED, RTO),
	/* our choice: a repeated deny is idempotent */
	IGNORED(DENIED, DENY),
	/* §5.3: controller re-enables; the EV goes to the backup pool */
	LEGAL(DENIED, ALLOW, GOOD),
	/* D64: the controller's decision stands */
	IGNORED(DENIED, LOSS_UNDONE),
	/* denied (bugs: "DENIED EVs are never probed", not SKIP):
	 * SKIP_EXPIRED, PROBE_OK_NONE, PROBE_OK_SKIP */
};

#undef LEGAL
#undef IGNORED

/* ---- small helpers ---------------------------------------------------------- */

static bool ev_valid(const struct mrcp_ev_set *s, int idx)
{
	return idx >= 0 && idx < (int)s->n_evs;
}

static unsigned ev_per_plane(const struct mrcp_ev_set *s)
{
	return s->n_evs / s->cfg.n_ports;
}

/* A plane's share of the active set (D41, D46). */
static unsigned ev_plane_share(const struct mrcp_ev_set *s)
{
	return s->cfg.n_active / s->cfg.n_ports;
}

static uint32_t ev_port_bit(uint8_t port)
{
	return 1u << (port - 1);
}

static bool ev_usable_state(uint8_t state)
{
	return state == MRCP_EV_GOOD || state == MRCP_EV_SKIP;
}

static uint32_t ev_hash(uint32_t value)
{
	/* Fibonacci hashing; the high half carries the mixed bits. */
	return (value * 0x9E3779B1u) >> 16;
}

static uint64_t ev_time_min(uint64_t a, uint64_t b)
{
	return mrcp_time_lt(b, a) ? b : a;
}

/* ---- the deadline index ------------------------------------------------------
 *
 * Where an EV's next deadline can come from (mrcp_ev_next_deadline): a SKIP
 * hold (D43) or, for an ASSUMED_BAD EV, its next probe or its outstanding
 * probe's timeout (D45). The set keeps those EVs filed so that the earliest
 * is at hand: SKIP EVs on a list in the order their holds began (a hold that
 * restarts moves to the tail), and ASSUMED_BAD EVs in one of two binary
 * heaps, "waiting" by probe_next_ns and "outstanding" by probe_sent_ns.
 * Every change to an EV's state, skip_* or probe_* fields ends with
 * ev_dl_update() (and a SKIP hold that begins or restarts with
 * ev_dl_skip_restart()); nothing else touches dl_*.
 *
 * The list order is the order of the calls, so its skip_rotation values
 * never decrease along it (the rotation only grows): the EVs a new rotation
 * has released are a prefix, and, time not going backwards, the head holds
 * the oldest hold of them. */

enum { DL_NONE = 0, DL_SKIP, DL_WAIT, DL_OUT };

static uint64_t dl_key(const struct mrcp_ev_set *s, uint16_t idx)
{
	const struct mrcp_ev *e = &s->evs[idx];

	return e->dl_where == DL_OUT ? e->probe_sent_ns : e->probe_next_ns;
}

/* The heap @where lives in: its base in dl_heap and its size. */
static uint16_t *dl_heap_of(struct mrcp_ev_set *s, uint8_t where, uint16_t **n)
{
	if (where == DL_OUT) {
		*n = &s->n_out;
		return s->dl_heap + s->n_evs;
	}
	*n = &s->n_wait;
	return s->dl_heap;
}

static void dl_heap_set(struct mrcp_ev_set *s, uint16_t *h, uint16_t pos, uint16_t idx)
{
	h[pos] = idx;
	s->evs[idx].dl_pos = pos;
}

/* Move the entry at @pos up or down until the heap is in order again. */
static void dl_heap_fix(struct mrcp_ev_set *s, uint16_t *h, uint16_t n, uint16_t pos)
{
	uint16_t idx = h[pos];
	uint64_t k = dl_key(s, idx);

	while (pos > 0) {
		uint16_t up = (uint16_t)((pos - 1u) / 2u);

		if (!mrcp_time_lt(k, dl_key(s, h[up])))
			break;
		dl_heap_set(s, h, pos, h[up]);
		pos = up;
	}
	for (;;) {
		unsigned c = 2u * pos + 1u;

		if (c >= n)
			break;
		if (c + 1u < n && mrcp_time_lt(dl_key(s, h[c + 1u]), dl_key(s, h[c])))
			c++;
		if (!mrcp_time_lt(dl_key(s, h[c]), k))
			break;
		dl_heap_set(s, h, pos, h[c]);
		pos = (uint16_t)c;
	}
	dl_heap_set(s, h, pos, idx);
}

static void dl_unfile(struct mrcp_ev_set *s, uint16_t idx)
{
	struct mrcp_ev *e = &s->evs[idx];
	uint16_t *h, *n;

	switch (e->dl_where) {
	case DL_SKIP:
		if (e->dl_prev != MRCP_EV_IDX_NONE)
			s->evs[e->dl_prev].dl_next = e->dl_next;
		else
			s->skip_head = e->dl_next;
		if (e->dl_next != MRCP_EV_IDX_NONE)
			s->evs[e->dl_next].dl_prev = e->dl_prev;
		else
			s->skip_tail = e->dl_prev;
		break;
	case DL_WAIT:
	case DL_OUT: {
		uint16_t pos = e->dl_pos, last;

		h = dl_heap_of(s, e->dl_where, &n);
		last = h[--*n];
		if (pos < *n) {
			dl_heap_set(s, h, pos, last);
			dl_heap_fix(s, h, *n, pos);
		}
		break;
	}
	default:
		break;
	}
	e->dl_where = DL_NONE;
}

static void dl_file_heap(struct mrcp_ev_set *s, uint16_t idx, uint8_t where)
{
	uint16_t *n, *h = dl_heap_of(s, where, &n);

	uint16_t pos = (*n)++;

	s->evs[idx].dl_where = where;
	dl_heap_set(s, h, pos, idx);
	dl_heap_fix(s, h, *n, pos);
}

/* EV @idx's SKIP hold began or restarted: to the tail of the SKIP list. */
static void ev_dl_skip_restart(struct mrcp_ev_set *s, uint16_t idx)
{
	struct mrcp_ev *e = &s->evs[idx];

	dl_unfile(s, idx);
	e->dl_where = DL_SKIP;
	e->dl_next = MRCP_EV_IDX_NONE;
	e->dl_prev = s->skip_tail;
	if (s->skip_tail != MRCP_EV_IDX_NONE)
		s->evs[s->skip_tail].dl_next = idx;
	else
		s->skip_head = idx;
	s->skip_tail = idx;
}

/* File EV @idx where its state and probe fields now say it belongs. */
static void ev_dl_update(struct mrcp_ev_set *s, uint16_t idx)
{
	const struct mrcp_ev *e = &s->evs[idx];
	uint8_t want = DL_NONE;

	if (e->state == MRCP_EV_SKIP)
		want = DL_SKIP;
	else if (e->state == MRCP_EV_ASSUMED_BAD)
		want = e->probe_sent_ns != 0 ? DL_OUT : DL_WAIT;
	if (want == DL_SKIP) {
		if (e->dl_where != DL_SKIP)
			ev_dl_skip_restart(s, idx);
		return;
	}
	/* a heap key may have changed too: file it afresh */
	dl_unfile(s, idx);
	if (want != DL_NONE)
		dl_file_heap(s, idx, want);
}

/* The deadline heap's top (its EV index), or MRCP_EV_IDX_NONE. */
static uint16_t dl_top(const struct mrcp_ev_set *s, uint8_t where)
{
	if (where == DL_OUT)
		return s->n_out ? s->dl_heap[s->n_evs] : MRCP_EV_IDX_NONE;
	return s->n_wait ? s->dl_heap[0] : MRCP_EV_IDX_NONE;
}

static int dl_cmp_idx(const void *a, const void *b)
{
	return (int)*(const uint16_t *)a - (int)*(const uint16_t *)b;
}

static int dl_cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* ---- permutation (D42) ------------------------------------------------------ */

static void ev_perm_shuffle(struct mrcp_ev_set *s)
{
	/* the generator's state in a local for the loop (the same draws):
	 * kept in registers, not loaded and stored once per EV */
	struct mrcp_prng r = *s->prng;
	uint16_t *perm = s->perm;

	for (unsigned i = s->n_perm; i > 1; i--) {
		unsigned j = mrcp_prng_below(&r, i);
		uint16_t t = perm[i - 1];

		perm[i - 1] = perm[j];
		perm[j] = t;
	}
	*s->prng = r;
}

/* A new rotation: reshuffle and start over (D42). */
static void ev_perm_wrap(struct mrcp_ev_set *s)
{
	ev_perm_shuffle(s);
	s->perm_pos = 0;
	s->rotation++;
	s->c.reshuffles++;
}

/*
 * The active set changes rarely (retirement, promotion), so we patch the
 * permutation in place instead of rebuilding it: perm[0, perm_pos) is the
 * part of this rotation already walked, perm[perm_pos, n_perm) the part still
 * to come. Removal keeps both parts intact; an insertion lands at a random
 * spot of the part to come, so the new EV is used in this rotation. O(n_perm)
 * for the search, O(1) otherwise, no PRNG draw on removal.
 */
static void ev_perm_remove(struct mrcp_ev_set *s, uint16_t idx)
{
	unsigned i, last = s->n_perm - 1u;

	for (i = 0; i < s->n_perm && s->perm[i] != idx; i++)
		;
	if (i == s->n_perm)
		return;
	if (i < s->perm_pos) {
		/* walked part: close the hole with its last entry, then move
		 * the boundary down one */
		s->perm[i] = s->perm[s->perm_pos - 1u];
		s->perm_pos--;
		i = s->perm_pos;
	}
	s->perm[i] = s->perm[last];
	s->n_perm--;
}

static void ev_perm_insert(struct mrcp_ev_set *s, uint16_t idx)
{
	unsigned j = s->perm_pos + mrcp_prng_below(s->prng, s->n_perm - s->perm_pos + 1u);

	s->perm[s->n_perm] = s->perm[j];
	s->perm[j] = idx;
	s->n_perm++;
}

/* ---- pools (D46) ------------------------------------------------------------ */

static unsigned ev_plane_active(const struct mrcp_ev_set *s, unsigned plane)
{
	unsigned n = 0, per = ev_per_plane(s);

	for (unsigned i = plane * per; i < (plane + 1u) * per; i++)
		n += s->evs[i].pool == MRCP_EV_POOL_ACTIVE;
	return n;
}

/* The backup to promote into @plane: the first GOOD one, else (our choice)
 * the first SKIP one, which is usable (D44) and will expire to GOOD like any
 * active SKIP EV. -1 if the plane has none. */
static int ev_plane_backup(const struct mrcp_ev_set *s, unsigned plane)
{
	unsigned per = ev_per_plane(s);
	int skip = -1;

	for (unsigned i = plane * per; i < (plane + 1u) * per; i++) {
		const struct mrcp_ev *e = &s->evs[i];

		if (e->pool != MRCP_EV_POOL_BACKUP)
			continue;
		if (e->state == MRCP_EV_GOOD)
			return (int)i;
		if (e->state == MRCP_EV_SKIP && skip < 0)
			skip = (int)i;
	}
	return skip;
}

static void ev_activate(struct mrcp_ev_set *s, uint16_t idx)
{
	/* D65: a backup joining the rotation has carried nothing yet (after a
	 * failure a share of them sit on the same dead path): on probation
	 * until something sent on it is acknowledged */
	s->evs[idx].probation = 1;
	s->evs[idx].pool = MRCP_EV_POOL_ACTIVE;
	ev_perm_insert(s, idx);
	s->c.promotions++;
}

/* ---- reverse EVs (D48) ------------------------------------------------------ */

/* A random active EV of @plane in @state other than @avoid, or
 * MRCP_EV_IDX_NONE. */
static uint16_t ev_rev_pick_state(struct mrcp_ev_set *s, unsigned plane, uint8_t state, int avoid)
{
	unsigned per = ev_per_plane(s), n = 0, k;

	for (unsigned i = plane * per; i < (plane + 1u) * per; i++)
		n += s->evs[i].pool == MRCP_EV_POOL_ACTIVE && s->evs[i].state == state && (int)i != avoid;
	if (n == 0)
		return MRCP_EV_IDX_NONE;
	k = mrcp_prng_below(s->prng, n);
	for (unsigned i = plane * per;; i++)
		if (s->evs[i].pool == MRCP_EV_POOL_ACTIVE && s->evs[i].state == state && (int)i != avoid && k-- == 0)
			return (uint16_t)i;
}

/* D48 says "a random GOOD EV"; when a plane has none we fall back to a SKIP
 * one (our choice): SKIP is a congestion hint, and a SACK path beats none. */
static uint16_t ev_rev_pick(struct mrcp_ev_set *s, unsigned plane, int avoid)
{
	uint16_t idx = ev_rev_pick_state(s, plane, MRCP_EV_GOOD, avoid);

	if (idx == MRCP_EV_IDX_NONE)
		idx = ev_rev_pick_state(s, plane, MRCP_EV_SKIP, avoid);
	return idx;
}

/* ---- config and setup ------------------------------------------------------- */

void mrcp_ev_config_defaults(struct mrcp_ev_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->n_active = 128; /* D41 */
	cfg->n_backup = 64;  /* D41 */
	cfg->n_ports = 1;
	cfg->mode = MRCP_EV_MODE_UDP;
	cfg->base_rtt_ns = EV_BASE_RTT_DEFAULT_NS;
	cfg->probe_first_ns = EV_PROBE_FIRST_DEFAULT_NS;
	cfg->probe_max_ns = EV_PROBE_MAX_DEFAULT_NS;
	cfg->probe_ok_needed = EV_PROBE_OK_DEFAULT;
	cfg->probe_budget = EV_PROBE_BUDGET_DEFAULT;
}

/* Validate @c and fill its "0 = default" fields. */
static int ev_config_resolve(struct mrcp_ev_config *c)
{
	uint32_t n_evs = (uint32_t)c->n_active + c->n_backup;

	if (c->n_ports < 1 || c->n_ports > MRCP_MAX_PORTS)
		return -EINVAL;
	if (c->n_active == 0 || c->n_active % c->n_ports != 0 || c->n_backup % c->n_ports != 0)
		return -EINVAL;
	if (n_evs > MRCP_EV_MAX)
		return -EINVAL;
	if (c->min_active == 0)
		c->min_active = c->n_active / 4; /* D41 */
	if (c->min_active > c->n_active)
		return -EINVAL;
	switch (c->mode) {
	case MRCP_EV_MODE_UDP:
		break;
	case MRCP_EV_MODE_SRV6:
		/* §2.3: SRv6 is IPv6 only; D8: distinct uplinks per plane */
		if (c->ipv4 || c->srv6_uplinks < n_evs / c->n_ports)
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	if (c->base_rtt_ns == 0)
		c->base_rtt_ns = EV_BASE_RTT_DEFAULT_NS;
	if (c->probe_first_ns == 0)
		c->probe_first_ns = EV_PROBE_FIRST_DEFAULT_NS;
	if (c->probe_max_ns == 0)
		c->probe_max_ns = EV_PROBE_MAX_DEFAULT_NS;
	if (c->probe_first_ns > c->probe_max_ns)
		return -EINVAL;
	if (c->probe_ok_needed == 0)
		c->probe_ok_needed = EV_PROBE_OK_DEFAULT;
	if (c->probe_budget == 0)
		c->probe_budget = EV_PROBE_BUDGET_DEFAULT;
	return 0;
}

/* Enter @value for EV @idx; -EEXIST if another EV already has it. The table
 * is at most half full, so the probe always ends on an empty slot. */
static int ev_hash_insert(struct mrcp_ev_set *s, uint32_t value, uint16_t idx)
{
	uint32_t h = ev_hash(value) & s->hash_mask;

	while (s->hash[h] != 0) {
		if (s->evs[s->hash[h] - 1u].value == value)
			return -EEXIST;
		h = (h + 1u) & s->hash_mask;
	}
	s->hash[h] = (uint16_t)(idx + 1u);
	s->evs[idx].value = value;
	return 0;
}

/* One candidate value for an EV of @plane (0-based). Duplicates are rejected
 * by the caller through the hash table. */
static uint32_t ev_make_value(struct mrcp_ev_set *s, unsigned plane)
{
	const struct mrcp_ev_config *c = &s->cfg;
	uint32_t lo, hi;

	if (c->mode == MRCP_EV_MODE_SRV6) {
		/* D8: plane[31:24] | 0[23:16] | T0 uplink[15:0]; uplinks are
		 * numbered 0..srv6_uplinks-1. Distinct values within a plane
		 * are distinct uplinks: a random subset of them. */
		return (uint32_t)plane << 24 | mrcp_prng_below(s->prng, c->srv6_uplinks);
	}
	/* D6: the source-port half in 49152..65535; D5: IPv4 has no upper
	 * half (the receiver zero-fills it), IPv6 a random one */
	lo = EV_UDP_SPORT_MIN + mrcp_prng_below(s->prng, EV_UDP_SPORT_SPAN);
	hi = c->ipv4 ? 0 : (uint32_t)(mrcp_prng_next(s->prng) >> 48);
	return hi << 16 | lo;
}

int mrcp_ev_set_init(struct mrcp_ev_set *s, const struct mrcp_ev_config *cfg,
		     struct mrcp_prng *prng, mrcp_ev_change_fn on_change, void *ctx)
{
	struct mrcp_ev_config c;
	unsigned n_evs, hash_size, per, share;
	int rc;

	if (s == NULL)
		return -EINVAL;
	memset(s, 0, sizeof(*s));
	if (cfg == NULL || prng == NULL)
		return -EINVAL;
	c = *cfg;
	rc = ev_config_resolve(&c);
	if (rc != 0)
		return rc;

	n_evs = (unsigned)c.n_active + c.n_backup;
	for (hash_size = 2; hash_size < 2 * n_evs; hash_size <<= 1)
		;
	s->evs = calloc(n_evs, sizeof(*s->evs));
	s->perm = calloc(n_evs, sizeof(*s->perm));
	s->hash = calloc(hash_size, sizeof(*s->hash));
	s->dl_heap = calloc(2u * n_evs, sizeof(*s->dl_heap));
	if (s->evs == NULL || s->perm == NULL || s->hash == NULL || s->dl_heap == NULL) {
		mrcp_ev_set_fini(s);
		return -ENOMEM;
	}
	s->cfg = c;
	s->n_evs = (uint16_t)n_evs;
	s->hash_mask = (uint16_t)(hash_size - 1);
	s->prng = prng;
	s->on_change = on_change;
	s->on_change_ctx = ctx;
	s->port_up_local = s->port_up_remote = (1u << c.n_ports) - 1u;
	s->skip_head = s->skip_tail = MRCP_EV_IDX_NONE;

	/* EVs are grouped by plane; within a plane the first share are
	 * active, the rest backups (D41). EVs of plane p use port p (D49). */
	per = ev_per_plane(s);
	share = ev_plane_share(s);
	for (unsigned i = 0; i < n_evs; i++) {
		struct mrcp_ev *e = &s->evs[i];
		unsigned plane = i / per;

		e->port = (uint8_t)(plane + 1u);
		e->state = MRCP_EV_GOOD;
		e->probation = 1; /* D65: nothing it carried was acknowledged yet */
		e->dl_prev = e->dl_next = MRCP_EV_IDX_NONE;
		if (i % per < share) {
			e->pool = MRCP_EV_POOL_ACTIVE;
			s->perm[s->n_perm++] = (uint16_t)i;
		} else {
			e->pool = MRCP_EV_POOL_BACKUP;
		}
		while (ev_hash_insert(s, ev_make_value(s, plane), (uint16_t)i) != 0)
			;
	}
	ev_perm_shuffle(s);

	for (unsigned p = 0; p < MRCP_MAX_PORTS; p++)
		s->rev_ev[p] = p < c.n_ports ? ev_rev_pick(s, p, -1) : MRCP_EV_IDX_NONE;
	return 0;
}

void mrcp_ev_set_fini(struct mrcp_ev_set *s)
{
	if (s == NULL)
		return;
	free(s->evs);
	free(s->perm);
	free(s->hash);
	free(s->dl_heap);
	s->evs = NULL;
	s->perm = NULL;
	s->hash = NULL;
	s->dl_heap = NULL;
	s->n_wait = s->n_out = 0;
	s->skip_head = s->skip_tail = MRCP_EV_IDX_NONE;
	s->n_evs = 0;
	s->n_perm = 0;
	s->perm_pos = 0;
}

int mrcp_ev_lookup(const struct mrcp_ev_set *s, uint32_t value)
{
	uint32_t h;

	if (s->hash == NULL)
		return -1;
	for (h = ev_hash(value) & s->hash_mask; s->hash[h] != 0; h = (h + 1u) & s->hash_mask)
		if (s->evs[s->hash[h] - 1u].value == value)
			return s->hash[h] - 1;
	return -1;
}

void mrcp_ev_set_port_masks(struct mrcp_ev_set *s, uint32_t local_up, uint32_t remote_up)
{
	/* §5.6: masked, not changed; selection and rev_get read the masks */
	s->port_up_local = local_up;
	s->port_up_remote = remote_up;
}

unsigned mrcp_ev_usable_active(const struct mrcp_ev_set *s)
{
	/* D44 counts by state, not by port (our choice): a port that is down
	 * leaves its EVs' states untouched (§5.6) and usually comes back, and
	 * counting its EVs keeps a port flap from tripping the floor. The
	 * floor is about not retiring every path on an endpoint problem. */
	unsigned n = 0;

	for (unsigned i = 0; i < s->n_evs; i++)
		n += s->evs[i].pool == MRCP_EV_POOL_ACTIVE && ev_usable_state(s->evs[i].state);
	return n;
}

/* ---- events ----------------------------------------------------------------- */

/*
 * D44: would retiring EV @idx leave fewer than min_active usable active EVs?
 * Only an active usable EV can lower the count, and its same-plane
 * replacement (D46) is counted in, so the floor bites only once a plane has
 * run out of backups.
 */
static bool ev_floor_hit(const struct mrcp_ev_set *s, int idx)
{
	const struct mrcp_ev *e = &s->evs[idx];
	unsigned after;

	if (e->pool != MRCP_EV_POOL_ACTIVE || !ev_usable_state(e->state))
		return false;
	after = mrcp_ev_usable_active(s) - 1u;
	if (ev_plane_backup(s, e->port - 1u) >= 0)
		after++;
	return after < s->cfg.min_active;
}

static void ev_probe_reset(struct mrcp_ev *e)
{
	e->probe_next_ns = 0;
	e->probe_interval_ns = 0;
	e->probe_sent_ns = 0;
	e->probe_ok_run = 0;
	e->probe_last_m = MRCP_VERDICT_NONE;
}

/* EV @idx just became ASSUMED_BAD or DENIED: out of the pools, same-plane
 * backup promoted (D46), reverse EV re-picked (D48), probes scheduled (D45). */
static void ev_retire(struct mrcp_ev_set *s, int idx, uint8_t to, uint64_t now_ns)
{
	struct mrcp_ev *e = &s->evs[idx];
	unsigned plane = e->port - 1u;

	if (e->pool == MRCP_EV_POOL_ACTIVE) {
		int b;

		ev_perm_remove(s, (uint16_t)idx);
		e->pool = MRCP_EV_POOL_OUT;
		b = ev_plane_backup(s, plane);
		if (b >= 0)
			ev_activate(s, (uint16_t)b);
	}
	e->pool = MRCP_EV_POOL_OUT;
	if (e->probation & 2)
		e->held--;
	e->probation = 0;
	if (s->rev_ev[plane] == idx)
		s->rev_ev[plane] = ev_rev_pick(s, plane, idx);
	ev_probe_reset(e);
	if (to == MRCP_EV_ASSUMED_BAD) {
		e->probe_interval_ns = s->cfg.probe_first_ns;
		e->probe_next_ns = now_ns + s->cfg.probe_first_ns;
	}
	/* DENIED: never probed (§5.3) */
}

/* EV @idx is back in service (resurrected or allowed): it joins its plane's
 * backup pool and is promoted at once if the plane is short (D45, D46). Our
 * choice: ALLOW follows the same rule as resurrection. */
static void ev_rejoin(struct mrcp_ev_set *s, int idx)
{
	struct mrcp_ev *e = &s->evs[idx];

	ev_probe_reset(e);
	e->loss_hist = 0; /* D30 history starts over with the new service life */
	e->pool = MRCP_EV_POOL_BACKUP;
	if (ev_plane_active(s, e->port - 1u) < ev_plane_share(s))
		ev_activate(s, (uint16_t)idx);
}

static void ev_notify(struct mrcp_ev_set *s, int idx, uint8_t from, uint8_t event, bool floored)
{
	const struct mrcp_ev *e = &s->evs[idx];
	struct mrcp_ev_change chg = {
		.idx = (uint16_t)idx,
		.value = e->value,
		.port = e->port,
		.from = from,
		.to = e->state,
		.event = event,
		.floored = floored,
		.losses = e->c.losses,
	};

	if (s->on_change != NULL)
		s->on_change(s->on_change_ctx, &chg);
}

/* Apply cell value @to (from the table, possibly escalated by D30) for @event
 * to EV @idx. */
static enum mrcp_ev_state ev_apply(struct mrcp_ev_set *s, int idx, uint8_t event, uint8_t to, uint64_t now_ns)
{
	struct mrcp_ev *e = &s->evs[idx];
	uint8_t from = e->state;
	bool floored = false;

	if (to == EV_DENY) {
		s->c.bad_transition++;
		return (enum mrcp_ev_state)from;
	}
	if (to == EV_IGNORE)
		return (enum mrcp_ev_state)from;
	if (to == MRCP_EV_ASSUMED_BAD && ev_floor_hit(s, idx)) {
		to = MRCP_EV_SKIP; /* D44 */
		floored = true;
		s->c.floor_demotions++;
	}
	if (to == MRCP_EV_SKIP) {
		/* D43: the hold starts (or restarts) now, in this rotation */
		e->skip_since_ns = now_ns;
		e->skip_rotation = s->rotation;
		ev_dl_skip_restart(s, (uint16_t)idx);
	}
	if (to == from)
		return (enum mrcp_ev_state)from; /* SKIP refresh: no state change */

	e->state = to;
	e->c.transitions++;
	if (from == MRCP_EV_GOOD)
		s->n_not_good++;
	else if (to == MRCP_EV_GOOD)
		s->n_not_good--;
	if (to == MRCP_EV_ASSUMED_BAD || to == MRCP_EV_DENIED)
		ev_retire(s, idx, to, now_ns);
	else if (from == MRCP_EV_ASSUMED_BAD || from == MRCP_EV_DENIED)
		ev_rejoin(s, idx);
	ev_dl_update(s, (uint16_t)idx);
	ev_notify(s, idx, from, event, floored);
	return (enum mrcp_ev_state)to;
}

static uint8_t ev_cell(const struct mrcp_ev *e, uint8_t event)
{
	return e->state < MRCP_EV_NSTATES ? ev_fsm[e->state][event] : EV_DENY;
}

enum mrcp_ev_state mrcp_ev_event(struct mrcp_ev_set *s, int idx, enum mrcp_ev_event event, uint64_t now_ns)
{
	struct mrcp_ev *e;

	if (!ev_valid(s, idx)) {
		s->c.bad_transition++;
		return MRCP_EV_INVALID;
	}
	e = &s->evs[idx];
	if (event <= MRCP_EV_EVT_INVALID || event >= MRCP_EV_NEVENTS) {
		s->c.bad_transition++;
		return (enum mrcp_ev_state)e->state;
	}
	/* The per-EV counters record what happened, whatever the state. */
	switch (event) {
	case MRCP_EV_EVT_SACK_SKIP_ONCE:
	case MRCP_EV_EVT_SACK_ALWAYS_SKIP:
		e->c.ecn++;
		break;
	case MRCP_EV_EVT_NACK_TRIMMED:
		e->c.trims++;
		break;
	case MRCP_EV_EVT_LOSS:
	case MRCP_EV_EVT_LOSS_TRIMMING:
		e->c.losses++;
		break;
	case MRCP_EV_EVT_RTO:
		e->c.rtos++;
		break;
	default:
		break;
	}
	return ev_apply(s, idx, (uint8_t)event, ev_cell(e, (uint8_t)event), now_ns);
}

enum mrcp_ev_state mrcp_ev_on_loss(struct mrcp_ev_set *s, int idx, uint64_t now_ns)
{
	struct mrcp_ev *e;
	uint8_t event, to;

	if (!ev_valid(s, idx)) {
		s->c.bad_transition++;
		return MRCP_EV_INVALID;
	}
	e = &s->evs[idx];
	e->c.losses++;
	/* D30: the loss is marked against the latest send. Losses found with
	 * no send in between share one bit: packets lost together count as
	 * one path event. */
	e->loss_hist |= 1u;
	if (s->cfg.trimming_fabric) {
		event = MRCP_EV_EVT_LOSS_TRIMMING;
		to = ev_cell(e, event);
	} else {
		event = MRCP_EV_EVT_LOSS;
		to = ev_cell(e, event);
		/* D30: 2 losses among the last 8 sends escalate the SKIP */
		if (to == MRCP_EV_SKIP && __builtin_popcount(e->loss_hist) >= EV_D30_LOSSES)
			to = MRCP_EV_ASSUMED_BAD;
	}
	return ev_apply(s, idx, event, to, now_ns);
}

/* ---- selection (D42, D43) --------------------------------------------------- */

static bool ev_skip_due(const struct mrcp_ev_set *s, const struct mrcp_ev *e, uint64_t now_ns)
{
	return e->skip_rotation != s->rotation &&
	       mrcp_time_le(e->skip_since_ns + s->cfg.base_rtt_ns, now_ns);
}

int mrcp__ev_select_walk(struct mrcp_ev_set *s, uint64_t now_ns, int exclude, uint32_t port_room)
{
	uint32_t up = s->port_up_local & s->port_up_remote & port_room;
	bool wrapped = false;

	/*
	 * Walk on from perm_pos. Every visited EV is consumed for this
	 * rotation, eligible or not. If this rotation runs out we start one
	 * new rotation and walk all of it; if that finds nothing too, every
	 * active EV has been looked at since the reshuffle and none is
	 * eligible. The common case is one step.
	 */
	while (s->n_perm != 0) {
		struct mrcp_ev *e;
		uint16_t idx;

		if (s->perm_pos >= s->n_perm) {
			if (wrapped)
				break;
			ev_perm_wrap(s);
			wrapped = true;
		}
		idx = s->perm[s->perm_pos++];
		e = &s->evs[idx];
		if (e->state == MRCP_EV_SKIP && ev_skip_due(s, e, now_ns))
			ev_apply(s, idx, MRCP_EV_EVT_SKIP_EXPIRED, ev_cell(e, MRCP_EV_EVT_SKIP_EXPIRED), now_ns);
		if (e->state != MRCP_EV_GOOD || e->held != 0 || (up & ev_port_bit(e->port)) == 0 ||
		    (int)idx == exclude)
			continue;
		return idx;
	}
	s->c.select_none++;
	return -1;
}

/* ---- resurrection probes (D45) ---------------------------------------------- */

/* An unanswered probe, or one answered ALWAYS_SKIP: back off, start over. */
static void ev_probe_unanswered(struct mrcp_ev_set *s, struct mrcp_ev *e, uint64_t now_ns)
{
	uint64_t iv = e->probe_interval_ns * 2;

	e->probe_interval_ns = iv < s->cfg.probe_max_ns ? iv : s->cfg.probe_max_ns;
	e->probe_ok_run = 0;
	e->probe_sent_ns = 0;
	/* the next probe is one interval after the outcome was known */
	e->probe_next_ns = now_ns + e->probe_interval_ns;
	ev_dl_update(s, (uint16_t)(e - s->evs));
}

unsigned mrcp_ev_probes_due(struct mrcp_ev_set *s, uint64_t now_ns, uint64_t timeout_ns, uint16_t *out, unsigned max)
{
	uint16_t due[MRCP_EV_MAX];
	unsigned n = 0, k = 0;
	uint16_t idx;

	s->probe_timeout_ns = timeout_ns;
	if (s->n_not_good == 0)
		return 0;
	/* D43: the SKIPs that are due, a prefix of the SKIP list, expire in
	 * EV order */
	for (idx = s->skip_head; idx != MRCP_EV_IDX_NONE && ev_skip_due(s, &s->evs[idx], now_ns);
	     idx = s->evs[idx].dl_next)
		due[k++] = idx;
	if (k > 1)
		qsort(due, k, sizeof(due[0]), dl_cmp_idx);
	for (unsigned i = 0; i < k; i++)
		ev_apply(s, due[i], MRCP_EV_EVT_SKIP_EXPIRED, ev_cell(&s->evs[due[i]], MRCP_EV_EVT_SKIP_EXPIRED), now_ns);
	/* D45: probes unanswered for timeout_ns */
	while ((idx = dl_top(s, DL_OUT)) != MRCP_EV_IDX_NONE &&
	       mrcp_time_le(s->evs[idx].probe_sent_ns + timeout_ns, now_ns))
		ev_probe_unanswered(s, &s->evs[idx], now_ns);

	/* D45: at most probe_budget probes per base_rtt window */
	if (mrcp_time_le(s->probe_window_start_ns + s->cfg.base_rtt_ns, now_ns)) {
		s->probe_window_start_ns = now_ns;
		s->probes_in_window = 0;
	}
	if (max == 0 || s->probes_in_window >= s->cfg.probe_budget)
		return 0;
	/* Every EV whose probe is due, taken in EV order from where the last
	 * round stopped, so a tight budget still reaches each in turn; the
	 * ones left over stay due. */
	k = 0;
	while ((idx = dl_top(s, DL_WAIT)) != MRCP_EV_IDX_NONE && !mrcp_time_lt(now_ns, s->evs[idx].probe_next_ns)) {
		dl_unfile(s, idx);
		/* sort key: the distance from the cursor, in the high bits */
		due[k++] = idx;
	}
	if (k > 1) {
		uint32_t key[MRCP_EV_MAX];

		for (unsigned i = 0; i < k; i++)
			key[i] = (uint32_t)((due[i] + s->n_evs - s->probe_cursor) % s->n_evs) << 16 | due[i];
		qsort(key, k, sizeof(key[0]), dl_cmp_u32);
		for (unsigned i = 0; i < k; i++)
			due[i] = (uint16_t)key[i];
	}
	for (unsigned i = 0; i < k; i++) {
		struct mrcp_ev *e = &s->evs[due[i]];

		if (n < max && s->probes_in_window < s->cfg.probe_budget) {
			/* probe_sent_ns = 0 means none outstanding; a probe sent
			 * at exactly now_ns = 0 is not possible, the first one
			 * comes probe_first_ns after retirement */
			e->probe_sent_ns = now_ns;
			e->probe_id = ++s->probe_seq;
			e->c.probes_sent++;
			s->probes_in_window++;
			out[n++] = due[i];
			s->probe_cursor = (uint16_t)((due[i] + 1u) % s->n_evs);
		}
		ev_dl_update(s, due[i]);
	}
	return n;
}

void mrcp_ev_probe_answer(struct mrcp_ev_set *s, int idx, uint8_t m, uint64_t now_ns)
{
	struct mrcp_ev *e;

	if (!ev_valid(s, idx))
		return;
	e = &s->evs[idx];
	/* An answer for an EV that is not under probing, or with no probe
	 * outstanding (timed out already), is stale: ignored. */
	if (e->state != MRCP_EV_ASSUMED_BAD || e->probe_sent_ns == 0)
		return;
	if (m == MRCP_VERDICT_ALWAYS_SKIP) {
		ev_probe_unanswered(s, e, now_ns); /* §5.3: counts as unanswered */
		return;
	}
	/* NONE or SKIP_ONCE (wire value 3 reads as NONE, §3.4) */
	e->c.probes_ok++;
	e->probe_ok_run++;
	e->probe_last_m = m == MRCP_VERDICT_SKIP_ONCE ? MRCP_VERDICT_SKIP_ONCE : MRCP_VERDICT_NONE;
	e->probe_sent_ns = 0;
	e->probe_next_ns = now_ns + e->probe_interval_ns;
	ev_dl_update(s, (uint16_t)idx);
	if (e->probe_ok_run >= s->cfg.probe_ok_needed) {
		uint8_t event = e->probe_last_m == MRCP_VERDICT_SKIP_ONCE ? MRCP_EV_EVT_PROBE_OK_SKIP
									 : MRCP_EV_EVT_PROBE_OK_NONE;

		ev_apply(s, idx, event, ev_cell(e, event), now_ns);
	}
}

uint64_t mrcp_ev_next_deadline(const struct mrcp_ev_set *s)
{
	uint64_t best = UINT64_MAX;
	bool any = false;
	uint16_t idx;

	if (s->n_not_good == 0)
		return UINT64_MAX; /* the common case */
	/* D43: the oldest SKIP a new rotation has released (one begun in
	 * this rotation waits for selection to start the next: time alone
	 * cannot expire it) */
	idx = s->skip_head;
	if (idx != MRCP_EV_IDX_NONE && s->evs[idx].skip_rotation != s->rotation) {
		best = s->evs[idx].skip_since_ns + s->cfg.base_rtt_ns;
		any = true;
	}
	/* D45: the first outstanding probe to time out */
	idx = dl_top(s, DL_OUT);
	if (idx != MRCP_EV_IDX_NONE) {
		uint64_t t = s->evs[idx].probe_sent_ns + s->probe_timeout_ns;

		best = any ? ev_time_min(best, t) : t;
		any = true;
	}
	/* D45: the next probe due, once the budget window allows */
	idx = dl_top(s, DL_WAIT);
	if (idx != MRCP_EV_IDX_NONE) {
		uint64_t t = s->evs[idx].probe_next_ns;

		if (s->probes_in_window >= s->cfg.probe_budget) {
			uint64_t open = s->probe_window_start_ns + s->cfg.base_rtt_ns;

			if (mrcp_time_lt(t, open))
				t = open;
		}
		best = any ? ev_time_min(best, t) : t;
	}
	return best;
}

/* ---- reverse EVs (D48) ------------------------------------------------------ */

void mrcp_ev_rev_learn(struct mrcp_ev_set *s, int idx)
{
	struct mrcp_ev *e;

	if (!ev_valid(s, idx))
		return;
	e = &s->evs[idx];
	e->c.sacked++;
	/* our choice: a late SACK for a retired or denied EV proves little
	 * about the path now, and a DENIED EV must carry nothing */
	if (ev_usable_state(e->state))
		s->rev_ev[e->port - 1] = (uint16_t)idx;
}

void mrcp_ev_rev_rechoose(struct mrcp_ev_set *s)
{
	for (unsigned p = 0; p < s->cfg.n_ports; p++) {
		uint16_t cur = s->rev_ev[p];
		uint16_t idx = ev_rev_pick(s, p, cur == MRCP_EV_IDX_NONE ? -1 : (int)cur);

		/* a plane with no other candidate keeps its reverse EV */
		if (idx == MRCP_EV_IDX_NONE)
			continue;
		s->rev_ev[p] = idx;
		s->c.rev_rechoose++; /* one per plane whose reverse EV changed */
	}
}

/* ---- responder CE history (D47) --------------------------------------------- */

void mrcp_ce_table_init(struct mrcp_ce_table *t, uint8_t always_skip_min)
{
	memset(t, 0, sizeof(*t));
	/* 0 = default; a value above 8 can never be reached: no ALWAYS_SKIP */
	t->always_skip_min = always_skip_min != 0 ? always_skip_min : CE_ALWAYS_SKIP_DEFAULT;
}
