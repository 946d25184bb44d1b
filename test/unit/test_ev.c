/* test_ev.c - EV sets (§5, D41-D49): names, config, value generation,
 * lookup, the state table cell by cell, the D44 floor, D46 pools, D30
 * escalation, D42/D43 selection, D45 probes, D48 reverse EVs and the D47 CE
 * table. Tests follow the order of the functions in lib/core/ev.c. */
#include <errno.h>

#include "mrcp_ev.h"
#include "mrcp_prng.h"
#include "mrcp_test.h"
#include "mrcp_wire.h"

#define T0 1000000000ull  /* 1 s: an arbitrary non-zero start time */
#define BASE 10000ull     /* base_rtt used by the fixtures, ns */
#define US 1000ull
#define MAX_REC 64

/* ---- fixture ------------------------------------------------------------- */

struct rec {
	struct mrcp_ev_change c[MAX_REC];
	unsigned n;
};

static void rec_change(void *ctx, const struct mrcp_ev_change *chg)
{
	struct rec *r = ctx;

	if (r->n < MAX_REC)
		r->c[r->n] = *chg;
	r->n++;
}

struct fx {
	struct mrcp_prng prng;
	struct mrcp_ev_set s;
	struct rec rec;
};

static struct mrcp_ev_config cfg_make(uint8_t n_ports, uint16_t n_active, uint16_t n_backup)
{
	struct mrcp_ev_config c;

	mrcp_ev_config_defaults(&c);
	c.n_ports = n_ports;
	c.n_active = n_active;
	c.n_backup = n_backup;
	c.min_active = 1;
	c.base_rtt_ns = BASE;
	return c;
}

static void fx_init(struct fx *f, const struct mrcp_ev_config *c, uint64_t seed)
{
	memset(f, 0, sizeof(*f));
	mrcp_prng_seed(&f->prng, seed);
	ASSERT_EQ(0, mrcp_ev_set_init(&f->s, c, &f->prng, rec_change, &f->rec));
}

static bool in_perm(const struct mrcp_ev_set *s, int idx)
{
	for (unsigned i = 0; i < s->n_perm; i++)
		if (s->perm[i] == idx)
			return true;
	return false;
}

/* The EV index of the @k-th EV of @port (grouped by plane). */
static int plane_idx(const struct mrcp_ev_set *s, uint8_t port, unsigned k)
{
	return (int)((port - 1u) * (s->n_evs / s->cfg.n_ports) + k);
}

static unsigned count_pool(const struct mrcp_ev_set *s, uint8_t pool)
{
	unsigned n = 0;

	for (unsigned i = 0; i < s->n_evs; i++)
		n += s->evs[i].pool == pool;
	return n;
}

/* Send a probe on @idx at @now (asserting it is the one due) and answer it
 * with @m at @now + 1 us. @return the answer time. */
static uint64_t probe_round(struct fx *f, int idx, uint64_t now, uint8_t m)
{
	uint16_t out[4];

	ASSERT_EQ(1, mrcp_ev_probes_due(&f->s, now, 50 * US, out, 4));
	ASSERT_EQ(idx, out[0]);
	mrcp_ev_probe_answer(&f->s, idx, m, now + US);
	return now + US;
}

/* ---- names ------------------------------------------------------------------ */

TEST(ev, ev_state_name__every_state_and_out_of_range)
{
	ASSERT_STREQ("GOOD", mrcp_ev_state_name(MRCP_EV_GOOD));
	ASSERT_STREQ("SKIP", mrcp_ev_state_name(MRCP_EV_SKIP));
	ASSERT_STREQ("ASSUMED_BAD", mrcp_ev_state_name(MRCP_EV_ASSUMED_BAD));
	ASSERT_STREQ("DENIED", mrcp_ev_state_name(MRCP_EV_DENIED));
	ASSERT_STREQ("INVALID", mrcp_ev_state_name(MRCP_EV_INVALID));
	ASSERT_STREQ("INVALID", mrcp_ev_state_name(MRCP_EV_NSTATES));
	ASSERT_STREQ("INVALID", mrcp_ev_state_name(255));
}

TEST(ev, ev_event_name__every_event_and_out_of_range)
{
	static const char *const names[] = {
		"INVALID", "SACK_SKIP_ONCE", "SACK_ALWAYS_SKIP", "NACK_TRIMMED",
		"LOSS", "LOSS_TRIMMING", "RTO", "SKIP_EXPIRED", "PROBE_OK_NONE",
		"PROBE_OK_SKIP", "DENY", "ALLOW", "LOSS_UNDONE",
	};

	ASSERT_EQ(MRCP_EV_NEVENTS, sizeof(names) / sizeof(names[0]));
	for (unsigned e = 0; e < MRCP_EV_NEVENTS; e++)
		ASSERT_STREQ(names[e], mrcp_ev_event_name((uint8_t)e));
	ASSERT_STREQ("INVALID", mrcp_ev_event_name(MRCP_EV_NEVENTS));
	ASSERT_STREQ("INVALID", mrcp_ev_event_name(200));
}

/* ---- config and init -------------------------------------------------------- */

TEST(ev, ev_config_defaults__d41_and_d45_values)
{
	struct mrcp_ev_config c;

	memset(&c, 0xA5, sizeof(c));
	mrcp_ev_config_defaults(&c);
	ASSERT_EQ(128, c.n_active);
	ASSERT_EQ(64, c.n_backup);
	ASSERT_EQ(0, c.min_active);
	ASSERT_EQ(1, c.n_ports);
	ASSERT_EQ(MRCP_EV_MODE_UDP, c.mode);
	ASSERT_FALSE(c.ipv4);
	ASSERT_FALSE(c.trimming_fabric);
	ASSERT_U64_EQ(12000, c.base_rtt_ns);
	ASSERT_U64_EQ(100000, c.probe_first_ns);
	ASSERT_U64_EQ(10000000, c.probe_max_ns);
	ASSERT_EQ(3, c.probe_ok_needed);
	ASSERT_EQ(8, c.probe_budget);
}

TEST(ev, ev_set_init__resolves_zero_fields_to_defaults)
{
	struct mrcp_ev_config c = cfg_make(4, 128, 64);
	struct fx f;

	c.min_active = 0;
	c.base_rtt_ns = 0;
	c.probe_first_ns = 0;
	c.probe_max_ns = 0;
	c.probe_ok_needed = 0;
	c.probe_budget = 0;
	fx_init(&f, &c, 1);
	ASSERT_EQ(32, f.s.cfg.min_active); /* D41: active / 4 */
	ASSERT_U64_EQ(12000, f.s.cfg.base_rtt_ns);
	ASSERT_U64_EQ(100000, f.s.cfg.probe_first_ns);
	ASSERT_U64_EQ(10000000, f.s.cfg.probe_max_ns);
	ASSERT_EQ(3, f.s.cfg.probe_ok_needed);
	ASSERT_EQ(8, f.s.cfg.probe_budget);
	ASSERT_EQ(192, f.s.n_evs);
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_set_init__rejects_bad_configs)
{
	struct mrcp_prng r;
	struct mrcp_ev_set s;
	struct mrcp_ev_config c;
	struct mrcp_ev_config bad[16];
	unsigned n = 0;

	mrcp_prng_seed(&r, 1);
	c = cfg_make(2, 8, 4);
	bad[n] = c, bad[n++].n_ports = 0;
	bad[n] = c, bad[n++].n_ports = MRCP_MAX_PORTS + 1;
	bad[n] = c, bad[n++].n_active = 0;
	bad[n] = c, bad[n++].n_active = 7;      /* not divisible by 2 planes */
	bad[n] = c, bad[n++].n_backup = 3;      /* not divisible */
	bad[n] = c, bad[n].n_ports = 1, bad[n].n_active = 1000, bad[n++].n_backup = 25; /* 1025 */
	bad[n] = c, bad[n++].min_active = 9;    /* above n_active */
	bad[n] = c, bad[n].probe_first_ns = 2000000, bad[n++].probe_max_ns = 1000000;
	bad[n] = c, bad[n++].mode = (enum mrcp_ev_mode)7;
	bad[n] = c, bad[n].mode = MRCP_EV_MODE_SRV6, bad[n].srv6_uplinks = 64, bad[n++].ipv4 = true;
	bad[n] = c, bad[n].mode = MRCP_EV_MODE_SRV6, bad[n++].srv6_uplinks = 5; /* 6 per plane */
	for (unsigned i = 0; i < n; i++) {
		memset(&s, 0xAB, sizeof(s));
		ASSERT_EQ(-EINVAL, mrcp_ev_set_init(&s, &bad[i], &r, NULL, NULL));
		/* left zeroed: fini is harmless */
		ASSERT_TRUE(s.evs == NULL);
		ASSERT_EQ(0, s.n_evs);
		mrcp_ev_set_fini(&s);
	}
	ASSERT_EQ(-EINVAL, mrcp_ev_set_init(&s, NULL, &r, NULL, NULL));
	ASSERT_EQ(-EINVAL, mrcp_ev_set_init(&s, &c, NULL, NULL, NULL));
	ASSERT_EQ(-EINVAL, mrcp_ev_set_init(NULL, &c, &r, NULL, NULL));

	/* the borders are accepted */
	c.n_ports = 1, c.n_active = 1000, c.n_backup = 24;
	ASSERT_EQ(0, mrcp_ev_set_init(&s, &c, &r, NULL, NULL));
	mrcp_ev_set_fini(&s);
	c = cfg_make(2, 8, 4);
	c.mode = MRCP_EV_MODE_SRV6, c.srv6_uplinks = 6;
	ASSERT_EQ(0, mrcp_ev_set_init(&s, &c, &r, NULL, NULL));
	mrcp_ev_set_fini(&s);
	c = cfg_make(2, 8, 4);
	c.min_active = 8;
	ASSERT_EQ(0, mrcp_ev_set_init(&s, &c, &r, NULL, NULL));
	mrcp_ev_set_fini(&s);
}

TEST(ev, ev_set_init__splits_planes_and_pools)
{
	struct mrcp_ev_config c = cfg_make(4, 16, 8);
	unsigned seen[24] = {0};
	struct fx f;

	fx_init(&f, &c, 2);
	ASSERT_EQ(24, f.s.n_evs);
	ASSERT_EQ(16, f.s.n_perm);
	ASSERT_EQ(0, f.s.perm_pos);
	ASSERT_EQ(0xF, f.s.port_up_local);
	ASSERT_EQ(0xF, f.s.port_up_remote);
	for (unsigned i = 0; i < 24; i++) {
		const struct mrcp_ev *e = &f.s.evs[i];

		ASSERT_EQ(i / 6 + 1, e->port);           /* plane p -> port p */
		ASSERT_EQ(MRCP_EV_GOOD, e->state);
		ASSERT_EQ(i % 6 < 4 ? MRCP_EV_POOL_ACTIVE : MRCP_EV_POOL_BACKUP, e->pool);
	}
	for (unsigned i = 0; i < f.s.n_perm; i++)
		seen[f.s.perm[i]]++;
	for (unsigned i = 0; i < 24; i++)
		ASSERT_EQ(f.s.evs[i].pool == MRCP_EV_POOL_ACTIVE ? 1 : 0, seen[i]);
	for (uint8_t p = 1; p <= 4; p++) {
		uint16_t r = f.s.rev_ev[p - 1];

		ASSERT_LT(r, 24);
		ASSERT_EQ(p, f.s.evs[r].port);
		ASSERT_EQ(MRCP_EV_POOL_ACTIVE, f.s.evs[r].pool);
	}
	for (unsigned p = 4; p < MRCP_MAX_PORTS; p++)
		ASSERT_EQ(MRCP_EV_IDX_NONE, f.s.rev_ev[p]);
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_set_init__udp_ipv6_values_unique_and_in_range)
{
	struct mrcp_ev_config c = cfg_make(4, 128, 64);
	unsigned upper_nonzero = 0;
	struct fx f;

	fx_init(&f, &c, 3);
	for (unsigned i = 0; i < f.s.n_evs; i++) {
		uint32_t v = f.s.evs[i].value;

		ASSERT_GE(v & 0xFFFF, 49152); /* D6 */
		upper_nonzero += (v >> 16) != 0;
		for (unsigned j = 0; j < i; j++)
			ASSERT_NE(f.s.evs[j].value, v);
	}
	/* D5: IPv6 uses the upper half too (random, so nearly never zero) */
	ASSERT_GT(upper_nonzero, 180);
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_set_init__udp_ipv4_values_unique_upper_half_zero)
{
	/* 1024 EVs out of 16384 possible values: duplicates are drawn and
	 * must be rejected */
	struct mrcp_ev_config c = cfg_make(8, 512, 512);
	static bool used[65536];
	struct fx f;

	c.ipv4 = true;
	fx_init(&f, &c, 4);
	ASSERT_EQ(1024, f.s.n_evs);
	for (unsigned i = 0; i < f.s.n_evs; i++) {
		uint32_t v = f.s.evs[i].value;

		ASSERT_EQ(0, v >> 16);  /* D5 */
		ASSERT_GE(v, 49152);    /* D6 */
		ASSERT_FALSE(used[v]);
		used[v] = true;
	}
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_set_init__srv6_value_layout)
{
	struct mrcp_ev_config c = cfg_make(4, 16, 8);
	unsigned high_uplinks = 0;
	struct fx f;

	c.mode = MRCP_EV_MODE_SRV6;
	c.srv6_uplinks = 64;
	fx_init(&f, &c, 5);
	for (unsigned i = 0; i < f.s.n_evs; i++) {
		uint32_t v = f.s.evs[i].value;

		ASSERT_EQ(f.s.evs[i].port - 1, v >> 24);  /* D8: plane */
		ASSERT_EQ(0, (v >> 16) & 0xFF);           /* D8: zero */
		ASSERT_LT(v & 0xFFFF, 64);                /* D8: uplink */
		high_uplinks += (v & 0xFFFF) >= 6;
		for (unsigned j = 0; j < i; j++)
			ASSERT_NE(f.s.evs[j].value, v);  /* distinct uplinks per plane */
	}
	ASSERT_GT(high_uplinks, 0); /* a random subset, not simply 0..5 */
	mrcp_ev_set_fini(&f.s);

	/* as many uplinks as EVs per plane: every uplink exactly once */
	c.srv6_uplinks = 6;
	fx_init(&f, &c, 6);
	for (uint8_t p = 1; p <= 4; p++) {
		unsigned seen = 0;

		for (unsigned k = 0; k < 6; k++)
			seen |= 1u << (f.s.evs[plane_idx(&f.s, p, k)].value & 0xFFFF);
		ASSERT_EQ(0x3F, seen);
	}
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_set_init__same_seed_same_set)
{
	struct mrcp_ev_config c = cfg_make(2, 16, 8);
	struct fx a, b, d;
	unsigned same = 0;

	fx_init(&a, &c, 7);
	fx_init(&b, &c, 7);
	fx_init(&d, &c, 8);
	for (unsigned i = 0; i < a.s.n_evs; i++) {
		ASSERT_EQ(a.s.evs[i].value, b.s.evs[i].value);
		same += a.s.evs[i].value == d.s.evs[i].value;
	}
	for (unsigned i = 0; i < a.s.n_perm; i++)
		ASSERT_EQ(a.s.perm[i], b.s.perm[i]);
	ASSERT_EQ(0, same);
	mrcp_ev_set_fini(&a.s);
	mrcp_ev_set_fini(&b.s);
	mrcp_ev_set_fini(&d.s);
}

TEST(ev, ev_set_fini__frees_and_is_idempotent)
{
	struct mrcp_ev_config c = cfg_make(1, 4, 0);
	uint32_t v;
	struct fx f;

	fx_init(&f, &c, 9);
	v = f.s.evs[0].value;
	mrcp_ev_set_fini(&f.s);
	ASSERT_TRUE(f.s.evs == NULL);
	ASSERT_TRUE(f.s.perm == NULL);
	ASSERT_TRUE(f.s.hash == NULL);
	ASSERT_EQ(0, f.s.n_evs);
	ASSERT_EQ(-1, mrcp_ev_lookup(&f.s, v));
	ASSERT_EQ(-1, mrcp_ev_select(&f.s, T0, -1, ~0u));
	mrcp_ev_set_fini(&f.s);
	mrcp_ev_set_fini(NULL);
}

/* ---- lookup, masks, usable -------------------------------------------------- */

TEST(ev, ev_lookup__finds_every_value)
{
	struct mrcp_ev_config c = cfg_make(8, 512, 512);
	struct fx f;

	fx_init(&f, &c, 10);
	for (unsigned i = 0; i < f.s.n_evs; i++)
		ASSERT_EQ((int)i, mrcp_ev_lookup(&f.s, f.s.evs[i].value));
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_lookup__unknown_value)
{
	struct mrcp_ev_config c = cfg_make(1, 128, 64);
	struct fx f;

	fx_init(&f, &c, 11);
	/* low half below 49152: never a UDP-mode EV */
	ASSERT_EQ(-1, mrcp_ev_lookup(&f.s, 0x12341234));
	ASSERT_EQ(-1, mrcp_ev_lookup(&f.s, 0));
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_set_port_masks__masks_without_changing_states)
{
	struct mrcp_ev_config c = cfg_make(2, 4, 2);
	struct fx f;

	fx_init(&f, &c, 12);
	mrcp_ev_set_port_masks(&f.s, 0x1, 0x2);
	ASSERT_EQ(0x1, f.s.port_up_local);
	ASSERT_EQ(0x2, f.s.port_up_remote);
	for (unsigned i = 0; i < f.s.n_evs; i++)
		ASSERT_EQ(MRCP_EV_GOOD, f.s.evs[i].state);
	ASSERT_EQ(0, f.rec.n);
	ASSERT_EQ(4, mrcp_ev_usable_active(&f.s)); /* D44 counts by state */
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_usable_active__counts_good_and_skip_in_active_pool)
{
	struct mrcp_ev_config c = cfg_make(1, 8, 1);
	struct fx f;

	fx_init(&f, &c, 13);
	ASSERT_EQ(8, mrcp_ev_usable_active(&f.s));
	mrcp_ev_event(&f.s, 0, MRCP_EV_EVT_SACK_SKIP_ONCE, T0);  /* SKIP: usable */
	ASSERT_EQ(8, mrcp_ev_usable_active(&f.s));
	mrcp_ev_event(&f.s, 1, MRCP_EV_EVT_RTO, T0);             /* backup 8 promoted */
	ASSERT_EQ(8, mrcp_ev_usable_active(&f.s));
	mrcp_ev_event(&f.s, 2, MRCP_EV_EVT_DENY, T0);            /* no backup left */
	ASSERT_EQ(7, mrcp_ev_usable_active(&f.s));
	mrcp_ev_set_fini(&f.s);
}

/* ---- mrcp_ev_event: the table ----------------------------------------------- */

/*
 * Expected outcome of every cell, written from §5.3 and the decisions
 * documented in ev.c, independently of its table. One character per event in
 * enum order (events 1..12): G S A D = the new state; '=' = legal no-op
 * (state unchanged, not counted); 'x' = denied (state unchanged,
 * bad_transition + 1). Refresh cells (SKIP -> SKIP) read 'S'.
 *
 *            SACK_SKIP_ONCE, SACK_ALWAYS_SKIP, NACK_TRIMMED, LOSS,
 *            LOSS_TRIMMING, RTO, SKIP_EXPIRED, PROBE_OK_NONE,
 *            PROBE_OK_SKIP, DENY, ALLOW, LOSS_UNDONE (D64)
 */
static const char *const expect_rows[MRCP_EV_NSTATES] = {
	[MRCP_EV_INVALID]     = "xxxxxxxxxxxx",
	[MRCP_EV_GOOD]        = "SASSAAxxxD==",
	[MRCP_EV_SKIP]        = "SASSAAGxxD=G",
	[MRCP_EV_ASSUMED_BAD] = "======xGSD=G",
	[MRCP_EV_DENIED]      = "======xxx=G=",
};

static uint8_t expect_state(char ch, uint8_t from)
{
	switch (ch) {
	case 'G': return MRCP_EV_GOOD;
	case 'S': return MRCP_EV_SKIP;
	case 'A': return MRCP_EV_ASSUMED_BAD;
	case 'D': return MRCP_EV_DENIED;
	default: return from;
	}
}

/* A fresh set with EV 0 (active) driven into @state by legal events. */
static void put_in_state(struct fx *f, uint8_t state)
{
	struct mrcp_ev_config c = cfg_make(1, 8, 8);

	fx_init(f, &c, 14);
	switch (state) {
	case MRCP_EV_SKIP:
		mrcp_ev_event(&f->s, 0, MRCP_EV_EVT_SACK_SKIP_ONCE, T0);
		break;
	case MRCP_EV_ASSUMED_BAD:
		mrcp_ev_event(&f->s, 0, MRCP_EV_EVT_RTO, T0);
		break;
	case MRCP_EV_DENIED:
		mrcp_ev_event(&f->s, 0, MRCP_EV_EVT_DENY, T0);
		break;
	case MRCP_EV_INVALID:
		f->s.evs[0].state = MRCP_EV_INVALID; /* white-box: a zeroed EV */
		break;
	default:
		break;
	}
	ASSERT_EQ(state, f->s.evs[0].state);
	ASSERT_EQ(0, f->s.c.bad_transition);
}

TEST(ev, ev_event__every_cell_of_the_table)
{
	unsigned cells = 0;

	for (unsigned st = 0; st < MRCP_EV_NSTATES; st++) {
		ASSERT_EQ(MRCP_EV_NEVENTS - 1, strlen(expect_rows[st]));
		/* include the INVALID column and one past the last event */
		for (unsigned ev = 0; ev <= MRCP_EV_NEVENTS; ev++) {
			char ch = ev >= 1 && ev < MRCP_EV_NEVENTS ? expect_rows[st][ev - 1] : 'x';
			uint8_t want = expect_state(ch, (uint8_t)st);
			struct fx f;
			enum mrcp_ev_state got;

			put_in_state(&f, (uint8_t)st);
			got = mrcp_ev_event(&f.s, 0, (enum mrcp_ev_event)ev, T0 + US);
			if (got != want || f.s.evs[0].state != want ||
			    f.s.c.bad_transition != (ch == 'x' ? 1u : 0u))
				mrcp_test_fail(__FILE__, __LINE__,
					       "cell %s + %s: got %s (returned %s), bad_transition %" PRIu64
					       ", expected %s%s",
					       mrcp_ev_state_name((uint8_t)st), mrcp_ev_event_name((uint8_t)ev),
					       mrcp_ev_state_name(f.s.evs[0].state), mrcp_ev_state_name((uint8_t)got),
					       f.s.c.bad_transition, mrcp_ev_state_name(want),
					       ch == 'x' ? " and counted" : "");
			mrcp_ev_set_fini(&f.s);
			cells++;
		}
	}
	ASSERT_EQ(MRCP_EV_NSTATES * (MRCP_EV_NEVENTS + 1), cells);
}

TEST(ev, ev_event__skip_refresh_restarts_hold_without_reporting)
{
	struct mrcp_ev_config c = cfg_make(1, 4, 0);
	struct fx f;

	fx_init(&f, &c, 15);
	ASSERT_EQ(MRCP_EV_SKIP, mrcp_ev_event(&f.s, 0, MRCP_EV_EVT_SACK_SKIP_ONCE, T0));
	ASSERT_U64_EQ(T0, f.s.evs[0].skip_since_ns);
	f.s.rotation = 5; /* white-box: a later rotation */
	ASSERT_EQ(MRCP_EV_SKIP, mrcp_ev_event(&f.s, 0, MRCP_EV_EVT_NACK_TRIMMED, T0 + 7 * US));
	ASSERT_U64_EQ(T0 + 7 * US, f.s.evs[0].skip_since_ns);
	ASSERT_EQ(5, f.s.evs[0].skip_rotation);
	ASSERT_EQ(1, f.s.evs[0].c.transitions);
	ASSERT_EQ(1, f.rec.n);
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_event__bad_index_and_event_are_counted)
{
	struct mrcp_ev_config c = cfg_make(1, 4, 0);
	struct fx f;

	fx_init(&f, &c, 16);
	ASSERT_EQ(MRCP_EV_INVALID, mrcp_ev_event(&f.s, -1, MRCP_EV_EVT_RTO, T0));
	ASSERT_EQ(MRCP_EV_INVALID, mrcp_ev_event(&f.s, 4, MRCP_EV_EVT_RTO, T0));
	ASSERT_EQ(2, f.s.c.bad_transition);
	ASSERT_EQ(MRCP_EV_GOOD, mrcp_ev_event(&f.s, 0, (enum mrcp_ev_event)99, T0));
	ASSERT_EQ(3, f.s.c.bad_transition);
	ASSERT_EQ(0, f.s.evs[0].c.transitions);
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_event__counters_record_signals_in_any_state)
{
	struct mrcp_ev_config c = cfg_make(1, 4, 4);
	const struct mrcp_ev *e;
	struct fx f;

	fx_init(&f, &c, 17);
	e = &f.s.evs[0];
	mrcp_ev_event(&f.s, 0, MRCP_EV_EVT_SACK_SKIP_ONCE, T0);
	mrcp_ev_event(&f.s, 0, MRCP_EV_EVT_NACK_TRIMMED, T0);
	mrcp_ev_event(&f.s, 0, MRCP_EV_EVT_RTO, T0);
	/* late signals on the retired EV: ignored, but counted per EV */
	mrcp_ev_event(&f.s, 0, MRCP_EV_EVT_SACK_ALWAYS_SKIP, T0);
	mrcp_ev_event(&f.s, 0, MRCP_EV_EVT_LOSS, T0);
	mrcp_ev_event(&f.s, 0, MRCP_EV_EVT_LOSS_TRIMMING, T0);
	mrcp_ev_event(&f.s, 0, MRCP_EV_EVT_RTO, T0);
	ASSERT_EQ(2, e->c.ecn);
	ASSERT_EQ(1, e->c.trims);
	ASSERT_EQ(2, e->c.losses);
	ASSERT_EQ(2, e->c.rtos);
	ASSERT_EQ(2, e->c.transitions);
	ASSERT_EQ(MRCP_EV_ASSUMED_BAD, e->state);
	ASSERT_EQ(0, f.s.c.bad_transition);
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_event__on_change_payload)
{
	struct mrcp_ev_config c = cfg_make(2, 4, 2);
	const struct mrcp_ev_change *chg;
	int x;
	struct fx f;

	fx_init(&f, &c, 18);
	x = plane_idx(&f.s, 2, 1);
	mrcp_ev_on_loss(&f.s, x, T0);              /* GOOD -> SKIP, losses 1 */
	ASSERT_EQ(1, f.rec.n);
	mrcp_ev_event(&f.s, x, MRCP_EV_EVT_RTO, T0 + US);
	ASSERT_EQ(2, f.rec.n);
	chg = &f.rec.c[0];
	ASSERT_EQ(x, chg->idx);
	ASSERT_EQ(f.s.evs[x].value, chg->value);
	ASSERT_EQ(2, chg->port);
	ASSERT_EQ(MRCP_EV_GOOD, chg->from);
	ASSERT_EQ(MRCP_EV_SKIP, chg->to);
	ASSERT_EQ(MRCP_EV_EVT_LOSS, chg->event);
	ASSERT_FALSE(chg->floored);
	ASSERT_EQ(1, chg->losses);
	chg = &f.rec.c[1];
	ASSERT_EQ(x, chg->idx);
	ASSERT_EQ(MRCP_EV_SKIP, chg->from);
	ASSERT_EQ(MRCP_EV_ASSUMED_BAD, chg->to);
	ASSERT_EQ(MRCP_EV_EVT_RTO, chg->event);
	ASSERT_EQ(1, chg->losses);
	ASSERT_EQ(2, f.s.evs[x].c.transitions);
	/* no callback: still works */
	f.s.on_change = NULL;
	mrcp_ev_event(&f.s, x, MRCP_EV_EVT_DENY, T0 + 2 * US);
	ASSERT_EQ(MRCP_EV_DENIED, f.s.evs[x].state);
	ASSERT_EQ(3, f.s.evs[x].c.transitions);
	ASSERT_EQ(2, f.rec.n);
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_event__floor_demotes_to_skip)
{
	struct mrcp_ev_config c = cfg_make(1, 4, 0);
	struct fx f;

	c.min_active = 2;
	fx_init(&f, &c, 19);
	ASSERT_EQ(MRCP_EV_ASSUMED_BAD, mrcp_ev_event(&f.s, 0, MRCP_EV_EVT_RTO, T0));
	ASSERT_EQ(MRCP_EV_ASSUMED_BAD, mrcp_ev_event(&f.s, 1, MRCP_EV_EVT_SACK_ALWAYS_SKIP, T0));
	ASSERT_EQ(2, mrcp_ev_usable_active(&f.s));
	ASSERT_EQ(0, f.s.c.floor_demotions);
	/* a third retirement would leave 1 < 2 */
	ASSERT_EQ(MRCP_EV_SKIP, mrcp_ev_event(&f.s, 2, MRCP_EV_EVT_RTO, T0 + US));
	ASSERT_EQ(1, f.s.c.floor_demotions);
	ASSERT_EQ(MRCP_EV_POOL_ACTIVE, f.s.evs[2].pool);
	ASSERT_U64_EQ(T0 + US, f.s.evs[2].skip_since_ns);
	ASSERT_EQ(3, f.rec.n);
	ASSERT_TRUE(f.rec.c[2].floored);
	ASSERT_EQ(MRCP_EV_GOOD, f.rec.c[2].from);
	ASSERT_EQ(MRCP_EV_SKIP, f.rec.c[2].to);
	ASSERT_EQ(MRCP_EV_EVT_RTO, f.rec.c[2].event);
	ASSERT_FALSE(f.rec.c[1].floored);
	/* from SKIP: stays SKIP, counted again, no state change reported */
	ASSERT_EQ(MRCP_EV_SKIP, mrcp_ev_event(&f.s, 2, MRCP_EV_EVT_LOSS_TRIMMING, T0 + 2 * US));
	ASSERT_EQ(2, f.s.c.floor_demotions);
	ASSERT_EQ(3, f.rec.n);
	ASSERT_U64_EQ(T0 + 2 * US, f.s.evs[2].skip_since_ns);
	ASSERT_EQ(2, mrcp_ev_usable_active(&f.s));
	/* the floor does not stop the controller */
	ASSERT_EQ(MRCP_EV_DENIED, mrcp_ev_event(&f.s, 3, MRCP_EV_EVT_DENY, T0));
	ASSERT_EQ(2, f.s.c.floor_demotions);
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_event__floor_counts_the_promoted_backup)
{
	struct mrcp_ev_config c = cfg_make(1, 4, 2);
	struct fx f;

	c.min_active = 4;
	fx_init(&f, &c, 20);
	/* each retirement is replaced from the backup pool: 4 stay usable */
	ASSERT_EQ(MRCP_EV_ASSUMED_BAD, mrcp_ev_event(&f.s, 0, MRCP_EV_EVT_RTO, T0));
	ASSERT_EQ(MRCP_EV_ASSUMED_BAD, mrcp_ev_event(&f.s, 1, MRCP_EV_EVT_RTO, T0));
	ASSERT_EQ(0, f.s.c.floor_demotions);
	ASSERT_EQ(4, mrcp_ev_usable_active(&f.s));
	/* backups gone: now the floor bites */
	ASSERT_EQ(MRCP_EV_SKIP, mrcp_ev_event(&f.s, 2, MRCP_EV_EVT_RTO, T0));
	ASSERT_EQ(1, f.s.c.floor_demotions);
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_event__floor_ignores_evs_outside_the_active_set)
{
	struct mrcp_ev_config c = cfg_make(1, 4, 2);
	struct fx f;

	c.min_active = 4;
	fx_init(&f, &c, 21);
	mrcp_ev_event(&f.s, 0, MRCP_EV_EVT_DENY, T0);  /* promotes 4 */
	mrcp_ev_event(&f.s, 1, MRCP_EV_EVT_DENY, T0);  /* promotes 5 */
	mrcp_ev_event(&f.s, 2, MRCP_EV_EVT_DENY, T0);  /* none left */
	ASSERT_EQ(3, mrcp_ev_usable_active(&f.s));     /* below the floor */
	/* a retired (not active) EV's RTO changes nothing */
	ASSERT_EQ(MRCP_EV_DENIED, mrcp_ev_event(&f.s, 0, MRCP_EV_EVT_RTO, T0));
	ASSERT_EQ(MRCP_EV_GOOD, mrcp_ev_event(&f.s, 0, MRCP_EV_EVT_ALLOW, T0)); /* -> active, short */
	ASSERT_EQ(MRCP_EV_POOL_ACTIVE, f.s.evs[0].pool);
	mrcp_ev_event(&f.s, 1, MRCP_EV_EVT_ALLOW, T0);
	ASSERT_EQ(MRCP_EV_POOL_BACKUP, f.s.evs[1].pool); /* plane full again */
	/* a backup EV's retirement does not lower the active count */
	ASSERT_EQ(MRCP_EV_ASSUMED_BAD, mrcp_ev_event(&f.s, 1, MRCP_EV_EVT_RTO, T0));
	ASSERT_EQ(0, f.s.c.floor_demotions);
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_event__retirement_promotes_same_plane_backup)
{
	struct mrcp_ev_config c = cfg_make(2, 4, 4); /* per plane: 2 active, 2 backup */
	int a, b1, b2;
	struct fx f;

	fx_init(&f, &c, 22);
	a = plane_idx(&f.s, 2, 0);
	b1 = plane_idx(&f.s, 2, 2);
	b2 = plane_idx(&f.s, 2, 3);
	ASSERT_EQ(MRCP_EV_ASSUMED_BAD, mrcp_ev_event(&f.s, a, MRCP_EV_EVT_RTO, T0));
	ASSERT_EQ(MRCP_EV_POOL_OUT, f.s.evs[a].pool);
	ASSERT_EQ(MRCP_EV_POOL_ACTIVE, f.s.evs[b1].pool);  /* first GOOD backup */
	ASSERT_EQ(MRCP_EV_POOL_BACKUP, f.s.evs[b2].pool);
	ASSERT_EQ(1, f.s.c.promotions);
	ASSERT_FALSE(in_perm(&f.s, a));
	ASSERT_TRUE(in_perm(&f.s, b1));
	ASSERT_EQ(4, f.s.n_perm);
	ASSERT_EQ(4, count_pool(&f.s, MRCP_EV_POOL_ACTIVE));
	ASSERT_EQ(3, count_pool(&f.s, MRCP_EV_POOL_BACKUP));
	ASSERT_EQ(1, count_pool(&f.s, MRCP_EV_POOL_OUT));
	/* plane 1's backups untouched */
	ASSERT_EQ(MRCP_EV_POOL_BACKUP, f.s.evs[plane_idx(&f.s, 1, 2)].pool);
	ASSERT_EQ(MRCP_EV_POOL_BACKUP, f.s.evs[plane_idx(&f.s, 1, 3)].pool);
	/* DENY retires too */
	ASSERT_EQ(MRCP_EV_DENIED, mrcp_ev_event(&f.s, b1, MRCP_EV_EVT_DENY, T0));
	ASSERT_EQ(MRCP_EV_POOL_ACTIVE, f.s.evs[b2].pool);
	ASSERT_EQ(2, f.s.c.promotions);
	ASSERT_EQ(4, f.s.n_perm);
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_event__promotion_prefers_good_then_skip_backup)
{
	struct mrcp_ev_config c = cfg_make(1, 2, 2);
	struct fx f;

	fx_init(&f, &c, 23);
	/* backup 2 becomes SKIP (a late verdict), backup 3 stays GOOD */
	ASSERT_EQ(MRCP_EV_SKIP, mrcp_ev_event(&f.s, 2, MRCP_EV_EVT_SACK_SKIP_ONCE, T0));
	ASSERT_EQ(MRCP_EV_POOL_BACKUP, f.s.evs[2].pool);
	mrcp_ev_event(&f.s, 0, MRCP_EV_EVT_RTO, T0);
	ASSERT_EQ(MRCP_EV_POOL_ACTIVE, f.s.evs[3].pool);
	ASSERT_EQ(MRCP_EV_POOL_BACKUP, f.s.evs[2].pool);
	/* only the SKIP one is left: it is usable, so it is promoted */
	mrcp_ev_event(&f.s, 1, MRCP_EV_EVT_RTO, T0);
	ASSERT_EQ(MRCP_EV_POOL_ACTIVE, f.s.evs[2].pool);
	ASSERT_EQ(MRCP_EV_SKIP, f.s.evs[2].state);
	ASSERT_EQ(2, f.s.c.promotions);
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_event__plane_without_backups_stays_short)
{
	struct mrcp_ev_config c = cfg_make(2, 4, 2); /* per plane: 2 active, 1 backup */
	struct fx f;

	fx_init(&f, &c, 24);
	mrcp_ev_event(&f.s, plane_idx(&f.s, 2, 0), MRCP_EV_EVT_RTO, T0);
	ASSERT_EQ(1, f.s.c.promotions);
	mrcp_ev_event(&f.s, plane_idx(&f.s, 2, 1), MRCP_EV_EVT_RTO, T0);
	ASSERT_EQ(1, f.s.c.promotions);  /* nothing left to promote */
	ASSERT_EQ(3, f.s.n_perm);
	/* plane 1 is not raided for plane 2 */
	ASSERT_EQ(MRCP_EV_POOL_BACKUP, f.s.evs[plane_idx(&f.s, 1, 2)].pool);
	mrcp_ev_event(&f.s, plane_idx(&f.s, 2, 2), MRCP_EV_EVT_RTO, T0);
	ASSERT_EQ(2, f.s.n_perm);
	ASSERT_EQ(0, f.s.c.floor_demotions);
	/* the other plane carries the traffic */
	for (int i = 0; i < 10; i++) {
		int idx = mrcp_ev_select(&f.s, T0, -1, ~0u);

		ASSERT_GE(idx, 0);
		ASSERT_EQ(1, f.s.evs[idx].port);
	}
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_event__retirement_schedules_probes_deny_does_not)
{
	struct mrcp_ev_config c = cfg_make(1, 4, 4);
	struct fx f;

	fx_init(&f, &c, 25);
	mrcp_ev_event(&f.s, 0, MRCP_EV_EVT_RTO, T0);
	ASSERT_U64_EQ(T0 + 100 * US, f.s.evs[0].probe_next_ns);  /* D45 */
	ASSERT_U64_EQ(100 * US, f.s.evs[0].probe_interval_ns);
	ASSERT_U64_EQ(0, f.s.evs[0].probe_sent_ns);
	mrcp_ev_event(&f.s, 1, MRCP_EV_EVT_DENY, T0);
	ASSERT_U64_EQ(0, f.s.evs[1].probe_next_ns);
	/* ASSUMED_BAD -> DENIED stops probing */
	mrcp_ev_event(&f.s, 0, MRCP_EV_EVT_DENY, T0);
	ASSERT_U64_EQ(0, f.s.evs[0].probe_next_ns);
	ASSERT_EQ(MRCP_EV_POOL_OUT, f.s.evs[0].pool);
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_event__retired_reverse_ev_is_repicked)
{
	struct mrcp_ev_config c = cfg_make(2, 8, 4);
	int r;
	struct fx f;

	fx_init(&f, &c, 26);
	r = mrcp_ev_rev_get(&f.s, 2);
	ASSERT_GE(r, 0);
	mrcp_ev_event(&f.s, r, MRCP_EV_EVT_RTO, T0);
	ASSERT_NE(r, f.s.rev_ev[1]);
	ASSERT_EQ(2, f.s.evs[f.s.rev_ev[1]].port);
	ASSERT_EQ(MRCP_EV_GOOD, f.s.evs[f.s.rev_ev[1]].state);
	ASSERT_EQ(MRCP_EV_POOL_ACTIVE, f.s.evs[f.s.rev_ev[1]].pool);
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_event__allow_rejoins_backup_or_promotes_when_short)
{
	struct mrcp_ev_config c = cfg_make(1, 2, 1);
	struct fx f;

	fx_init(&f, &c, 27);
	mrcp_ev_event(&f.s, 0, MRCP_EV_EVT_DENY, T0);     /* backup 2 promoted */
	ASSERT_EQ(MRCP_EV_GOOD, mrcp_ev_event(&f.s, 0, MRCP_EV_EVT_ALLOW, T0));
	ASSERT_EQ(MRCP_EV_POOL_BACKUP, f.s.evs[0].pool);   /* plane full */
	ASSERT_FALSE(in_perm(&f.s, 0));
	mrcp_ev_event(&f.s, 1, MRCP_EV_EVT_DENY, T0);     /* 0 promoted again */
	ASSERT_EQ(MRCP_EV_POOL_ACTIVE, f.s.evs[0].pool);
	mrcp_ev_event(&f.s, 2, MRCP_EV_EVT_DENY, T0);     /* none left: short */
	ASSERT_EQ(1, f.s.n_perm);
	ASSERT_EQ(MRCP_EV_GOOD, mrcp_ev_event(&f.s, 1, MRCP_EV_EVT_ALLOW, T0));
	ASSERT_EQ(MRCP_EV_POOL_ACTIVE, f.s.evs[1].pool);
	ASSERT_TRUE(in_perm(&f.s, 1));
	ASSERT_EQ(3, f.s.c.promotions);
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_event__pool_changes_keep_the_rotation_consistent)
{
	struct mrcp_ev_config c = cfg_make(1, 8, 8);
	unsigned seen[16] = {0};
	int walked, ahead, got[9];
	struct fx f;

	fx_init(&f, &c, 28);
	for (int i = 0; i < 3; i++)
		got[i] = mrcp_ev_select(&f.s, T0, -1, ~0u);
	walked = got[1];
	ahead = f.s.perm[6];
	mrcp_ev_event(&f.s, walked, MRCP_EV_EVT_RTO, T0);  /* promotes 8 */
	mrcp_ev_event(&f.s, ahead, MRCP_EV_EVT_RTO, T0);   /* promotes 9 */
	ASSERT_EQ(8, f.s.n_perm);
	ASSERT_EQ(2, f.s.perm_pos);
	/* the rest of this rotation: the 4 not yet walked + the 2 promoted */
	for (int i = 3; i < 9; i++)
		got[i] = mrcp_ev_select(&f.s, T0, -1, ~0u);
	ASSERT_EQ(0, f.s.rotation);
	ASSERT_EQ(8, f.s.perm_pos);
	for (int i = 3; i < 9; i++)
		seen[got[i]]++;
	seen[got[0]]++;
	seen[got[2]]++;
	ASSERT_EQ(0, seen[walked]);
	ASSERT_EQ(0, seen[ahead]);
	ASSERT_EQ(1, seen[8]);
	ASSERT_EQ(1, seen[9]);
	for (int i = 0; i < 8; i++)
		if (i != walked && i != ahead)
			ASSERT_EQ(1, seen[i]);
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_event__promoted_ev_lands_at_a_random_spot_ahead)
{
	struct mrcp_ev_config c = cfg_make(1, 8, 8);
	unsigned spots = 0;

	for (uint64_t seed = 1; seed <= 32; seed++) {
		struct fx f;
		unsigned pos = 0;

		fx_init(&f, &c, seed);
		mrcp_ev_select(&f.s, T0, -1, ~0u);
		mrcp_ev_select(&f.s, T0, -1, ~0u);
		mrcp_ev_event(&f.s, f.s.perm[5], MRCP_EV_EVT_RTO, T0); /* promotes 8 */
		while (pos < f.s.n_perm && f.s.perm[pos] != 8)
			pos++;
		ASSERT_GE(pos, f.s.perm_pos);  /* used in this rotation */
		ASSERT_LT(pos, f.s.n_perm);
		spots |= 1u << pos;
		mrcp_ev_set_fini(&f.s);
	}
	ASSERT_GT(__builtin_popcount(spots), 2);
}

/* ---- on_send, on_loss (D30) ------------------------------------------------- */

TEST(ev, ev_on_send__counts_and_shifts_loss_history)
{
	struct mrcp_ev_config c = cfg_make(1, 4, 0);
	struct fx f;

	fx_init(&f, &c, 29);
	mrcp_ev_on_send(&f.s, 1, false);
	mrcp_ev_on_send(&f.s, 1, true);
	ASSERT_EQ(2, f.s.evs[1].c.tx_pkts);
	ASSERT_EQ(1, f.s.evs[1].c.rtx_pkts);
	f.s.evs[1].loss_hist = 0x41;
	mrcp_ev_on_send(&f.s, 1, false);
	ASSERT_EQ(0x82, f.s.evs[1].loss_hist);
	mrcp_ev_on_send(&f.s, 1, false);
	ASSERT_EQ(0x04, f.s.evs[1].loss_hist);  /* the oldest fell off */
	mrcp_ev_on_send(&f.s, -1, false);       /* ignored */
	mrcp_ev_on_send(&f.s, 4, false);
	ASSERT_EQ(4, f.s.evs[1].c.tx_pkts);
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_on_loss__non_trimming_fabric_skips)
{
	struct mrcp_ev_config c = cfg_make(1, 4, 0);
	struct fx f;

	fx_init(&f, &c, 30);
	mrcp_ev_on_send(&f.s, 0, false);
	ASSERT_EQ(MRCP_EV_SKIP, mrcp_ev_on_loss(&f.s, 0, T0));
	ASSERT_EQ(1, f.s.evs[0].c.losses);
	ASSERT_EQ(1, f.s.evs[0].loss_hist);
	ASSERT_EQ(MRCP_EV_EVT_LOSS, f.rec.c[0].event);
	ASSERT_EQ(MRCP_EV_INVALID, mrcp_ev_on_loss(&f.s, 9, T0));
	ASSERT_EQ(1, f.s.c.bad_transition);
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_on_loss__trimming_fabric_retires)
{
	struct mrcp_ev_config c = cfg_make(1, 4, 0);
	struct fx f;

	c.trimming_fabric = true;
	fx_init(&f, &c, 31);
	mrcp_ev_on_send(&f.s, 0, false);
	ASSERT_EQ(MRCP_EV_ASSUMED_BAD, mrcp_ev_on_loss(&f.s, 0, T0));
	ASSERT_EQ(MRCP_EV_EVT_LOSS_TRIMMING, f.rec.c[0].event);
	ASSERT_EQ(1, f.s.evs[0].c.losses);
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_on_loss__escalates_at_second_loss_within_8_sends)
{
	struct mrcp_ev_config c = cfg_make(1, 4, 0);
	struct fx f;

	fx_init(&f, &c, 32);
	mrcp_ev_on_send(&f.s, 0, false);
	ASSERT_EQ(MRCP_EV_SKIP, mrcp_ev_on_loss(&f.s, 0, T0));
	for (int i = 0; i < 7; i++)   /* the first loss is now the 8th send back */
		mrcp_ev_on_send(&f.s, 0, false);
	ASSERT_EQ(MRCP_EV_ASSUMED_BAD, mrcp_ev_on_loss(&f.s, 0, T0 + US));
	ASSERT_EQ(2, f.rec.n);
	ASSERT_EQ(MRCP_EV_SKIP, f.rec.c[1].from);
	ASSERT_EQ(MRCP_EV_ASSUMED_BAD, f.rec.c[1].to);
	ASSERT_EQ(MRCP_EV_EVT_LOSS, f.rec.c[1].event);
	ASSERT_EQ(2, f.rec.c[1].losses);
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_on_loss__no_escalation_when_losses_over_8_sends_apart)
{
	struct mrcp_ev_config c = cfg_make(1, 4, 0);
	struct fx f;

	fx_init(&f, &c, 33);
	mrcp_ev_on_send(&f.s, 0, false);
	ASSERT_EQ(MRCP_EV_SKIP, mrcp_ev_on_loss(&f.s, 0, T0));
	for (int i = 0; i < 8; i++)
		mrcp_ev_on_send(&f.s, 0, false);
	ASSERT_EQ(MRCP_EV_SKIP, mrcp_ev_on_loss(&f.s, 0, T0 + US));
	/* a further loss with no send in between shares the bit */
	ASSERT_EQ(MRCP_EV_SKIP, mrcp_ev_on_loss(&f.s, 0, T0 + 2 * US));
	ASSERT_EQ(3, f.s.evs[0].c.losses);
	ASSERT_EQ(1, f.s.evs[0].c.transitions);
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_on_loss__escalation_respects_the_floor)
{
	struct mrcp_ev_config c = cfg_make(1, 4, 0);
	struct fx f;

	c.min_active = 4;
	fx_init(&f, &c, 34);
	mrcp_ev_on_send(&f.s, 0, false);
	mrcp_ev_on_loss(&f.s, 0, T0);
	mrcp_ev_on_send(&f.s, 0, false);
	ASSERT_EQ(MRCP_EV_SKIP, mrcp_ev_on_loss(&f.s, 0, T0 + US));
	ASSERT_EQ(1, f.s.c.floor_demotions);
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_on_loss__late_loss_on_retired_ev_is_ignored)
{
	struct mrcp_ev_config c = cfg_make(1, 4, 4);
	struct fx f;

	fx_init(&f, &c, 35);
	mrcp_ev_event(&f.s, 0, MRCP_EV_EVT_RTO, T0);
	ASSERT_EQ(MRCP_EV_ASSUMED_BAD, mrcp_ev_on_loss(&f.s, 0, T0));
	ASSERT_EQ(0, f.s.c.bad_transition);
	ASSERT_EQ(1, f.s.evs[0].c.losses);
	ASSERT_EQ(1, f.rec.n);
	/* a DENIED EV stays DENIED, even with 2 of 8 lost (no D30 escalation) */
	mrcp_ev_event(&f.s, 1, MRCP_EV_EVT_DENY, T0);
	mrcp_ev_on_send(&f.s, 1, false);
	ASSERT_EQ(MRCP_EV_DENIED, mrcp_ev_on_loss(&f.s, 1, T0));
	mrcp_ev_on_send(&f.s, 1, false);
	ASSERT_EQ(MRCP_EV_DENIED, mrcp_ev_on_loss(&f.s, 1, T0));
	ASSERT_EQ(MRCP_EV_POOL_OUT, f.s.evs[1].pool);
	ASSERT_EQ(2, f.rec.n);
	ASSERT_EQ(0, f.s.c.bad_transition);
	mrcp_ev_set_fini(&f.s);
}

/* ---- selection (D42, D43) --------------------------------------------------- */

TEST(ev, ev_select__each_active_ev_once_per_rotation)
{
	struct mrcp_ev_config c = cfg_make(4, 32, 16);
	struct fx f;

	fx_init(&f, &c, 36);
	for (unsigned rot = 0; rot < 3; rot++) {
		unsigned seen[48] = {0};

		for (unsigned k = 0; k < 32; k++) {
			int idx = mrcp_ev_select(&f.s, T0, -1, ~0u);

			ASSERT_GE(idx, 0);
			seen[idx]++;
			/* one permutation step per call: O(1) */
			ASSERT_EQ(k + 1, f.s.perm_pos);
		}
		ASSERT_EQ(rot, f.s.rotation);
		ASSERT_EQ(rot, f.s.c.reshuffles);
		for (unsigned i = 0; i < 48; i++)
			ASSERT_EQ(f.s.evs[i].pool == MRCP_EV_POOL_ACTIVE ? 1 : 0, seen[i]);
	}
	ASSERT_EQ(0, f.s.c.select_none);
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_select__reshuffles_on_every_wrap)
{
	struct mrcp_ev_config c = cfg_make(1, 16, 0);
	int order[3][16];
	struct fx f;

	fx_init(&f, &c, 37);
	for (int r = 0; r < 3; r++)
		for (int k = 0; k < 16; k++)
			order[r][k] = mrcp_ev_select(&f.s, T0, -1, ~0u);
	ASSERT_EQ(2, f.s.c.reshuffles);
	ASSERT_EQ(2, f.s.rotation);
	ASSERT_NE(0, memcmp(order[0], order[1], sizeof(order[0])));
	ASSERT_NE(0, memcmp(order[1], order[2], sizeof(order[0])));
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_select__skips_skip_assumed_bad_and_denied)
{
	struct mrcp_ev_config c = cfg_make(1, 8, 8);
	unsigned seen[16] = {0};
	struct fx f;

	fx_init(&f, &c, 38);
	mrcp_ev_event(&f.s, 0, MRCP_EV_EVT_SACK_SKIP_ONCE, T0);
	mrcp_ev_event(&f.s, 1, MRCP_EV_EVT_RTO, T0);   /* promotes 8 */
	mrcp_ev_event(&f.s, 2, MRCP_EV_EVT_DENY, T0);  /* promotes 9 */
	f.s.perm_pos = f.s.n_perm;                     /* start a rotation */
	for (int k = 0; k < 7; k++) {
		int idx = mrcp_ev_select(&f.s, T0 + US, -1, ~0u);

		ASSERT_GE(idx, 0);
		seen[idx]++;
	}
	ASSERT_EQ(1, f.s.rotation);
	ASSERT_EQ(0, seen[0]);
	ASSERT_EQ(0, seen[1]);
	ASSERT_EQ(0, seen[2]);
	for (int i = 3; i < 10; i++)
		ASSERT_EQ(1, seen[i]);
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_select__skips_ports_down_locally_or_remotely)
{
	struct mrcp_ev_config c = cfg_make(2, 8, 0);
	struct fx f;

	fx_init(&f, &c, 39);
	mrcp_ev_set_port_masks(&f.s, 0x1, 0x3);
	for (int k = 0; k < 20; k++)
		ASSERT_EQ(1, f.s.evs[mrcp_ev_select(&f.s, T0, -1, ~0u)].port);
	mrcp_ev_set_port_masks(&f.s, 0x3, 0x2);
	for (int k = 0; k < 20; k++)
		ASSERT_EQ(2, f.s.evs[mrcp_ev_select(&f.s, T0, -1, ~0u)].port);
	ASSERT_EQ(0, f.s.c.select_none);
	mrcp_ev_set_port_masks(&f.s, 0x1, 0x2);
	ASSERT_EQ(-1, mrcp_ev_select(&f.s, T0, -1, ~0u));
	ASSERT_EQ(1, f.s.c.select_none);
	/* masked, not changed */
	for (unsigned i = 0; i < f.s.n_evs; i++)
		ASSERT_EQ(MRCP_EV_GOOD, f.s.evs[i].state);
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_select__skips_ports_without_tx_room)
{
	struct mrcp_ev_config c = cfg_make(2, 8, 0);
	struct fx f;

	fx_init(&f, &c, 40);
	for (int k = 0; k < 20; k++)
		ASSERT_EQ(2, f.s.evs[mrcp_ev_select(&f.s, T0, -1, 0x2)].port);
	ASSERT_EQ(-1, mrcp_ev_select(&f.s, T0, -1, 0x0));
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_select__exclude_is_skipped_and_not_revisited)
{
	struct mrcp_ev_config c = cfg_make(1, 4, 0);
	int p[4];
	struct fx f;

	fx_init(&f, &c, 41);
	for (int i = 0; i < 4; i++)
		p[i] = f.s.perm[i];
	ASSERT_EQ(p[1], mrcp_ev_select(&f.s, T0, p[0], ~0u));
	ASSERT_EQ(p[2], mrcp_ev_select(&f.s, T0, -1, ~0u));
	ASSERT_EQ(p[3], mrcp_ev_select(&f.s, T0, -1, ~0u));
	ASSERT_EQ(0, f.s.rotation);
	mrcp_ev_select(&f.s, T0, -1, ~0u);
	ASSERT_EQ(1, f.s.rotation); /* p[0] only came back in the next rotation */
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_select__finds_ev_walked_earlier_in_the_rotation)
{
	struct mrcp_ev_config c = cfg_make(1, 4, 0);
	int a, b;
	struct fx f;

	fx_init(&f, &c, 42);
	a = mrcp_ev_select(&f.s, T0, -1, ~0u);
	b = mrcp_ev_select(&f.s, T0, -1, ~0u);
	mrcp_ev_event(&f.s, f.s.perm[2], MRCP_EV_EVT_SACK_SKIP_ONCE, T0);
	mrcp_ev_event(&f.s, f.s.perm[3], MRCP_EV_EVT_SACK_SKIP_ONCE, T0);
	for (int k = 0; k < 2; k++) {
		int idx = mrcp_ev_select(&f.s, T0 + US, -1, ~0u);

		ASSERT_TRUE(idx == a || idx == b);
	}
	ASSERT_EQ(1, f.s.rotation);
	ASSERT_EQ(0, f.s.c.select_none);
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_select__none_eligible_returns_minus_one)
{
	struct mrcp_ev_config c = cfg_make(1, 4, 0);
	struct fx f;

	fx_init(&f, &c, 43);
	for (int i = 0; i < 4; i++)
		mrcp_ev_event(&f.s, i, MRCP_EV_EVT_SACK_SKIP_ONCE, T0);
	ASSERT_EQ(-1, mrcp_ev_select(&f.s, T0 + US, -1, ~0u));
	ASSERT_EQ(-1, mrcp_ev_select(&f.s, T0 + US, -1, ~0u));
	ASSERT_EQ(2, f.s.c.select_none);
	mrcp_ev_set_fini(&f.s);

	/* an empty active set (floor off: 2 / 4 = 0) */
	c = cfg_make(1, 2, 0);
	c.min_active = 0;
	fx_init(&f, &c, 44);
	mrcp_ev_event(&f.s, 0, MRCP_EV_EVT_RTO, T0);
	mrcp_ev_event(&f.s, 1, MRCP_EV_EVT_RTO, T0);
	ASSERT_EQ(0, f.s.n_perm);
	ASSERT_EQ(-1, mrcp_ev_select(&f.s, T0, -1, ~0u));
	ASSERT_EQ(1, f.s.c.select_none);
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_select__same_seed_same_choices)
{
	struct mrcp_ev_config c = cfg_make(2, 16, 8);
	struct fx a, b, d;
	unsigned same = 0;

	fx_init(&a, &c, 45);
	fx_init(&b, &c, 45);
	fx_init(&d, &c, 46);
	for (int k = 0; k < 1000; k++) {
		int x = mrcp_ev_select(&a.s, T0, -1, ~0u);

		ASSERT_EQ(x, mrcp_ev_select(&b.s, T0, -1, ~0u));
		same += x == mrcp_ev_select(&d.s, T0, -1, ~0u);
	}
	ASSERT_LT(same, 500);
	mrcp_ev_set_fini(&a.s);
	mrcp_ev_set_fini(&b.s);
	mrcp_ev_set_fini(&d.s);
}

TEST(ev, ev_select__skip_expires_after_new_rotation_and_base_rtt)
{
	struct mrcp_ev_config c = cfg_make(1, 2, 0);
	bool got_x = false;
	int x, y;
	struct fx f;

	fx_init(&f, &c, 47);
	x = f.s.perm[0];
	y = f.s.perm[1];
	mrcp_ev_event(&f.s, x, MRCP_EV_EVT_SACK_SKIP_ONCE, T0);
	ASSERT_EQ(y, mrcp_ev_select(&f.s, T0 + US, -1, ~0u)); /* rotation 0 */
	/* rotation 1, exactly one base_rtt later: x expires when visited */
	for (int k = 0; k < 2; k++)
		got_x |= mrcp_ev_select(&f.s, T0 + BASE, -1, ~0u) == x;
	ASSERT_TRUE(got_x);
	ASSERT_EQ(1, f.s.rotation);
	ASSERT_EQ(MRCP_EV_GOOD, f.s.evs[x].state);
	ASSERT_EQ(2, f.rec.n);
	ASSERT_EQ(MRCP_EV_EVT_SKIP_EXPIRED, f.rec.c[1].event);
	ASSERT_EQ(MRCP_EV_SKIP, f.rec.c[1].from);
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_select__skip_not_expired_by_rotation_alone)
{
	struct mrcp_ev_config c = cfg_make(1, 2, 0);
	int x, y;
	struct fx f;

	fx_init(&f, &c, 48);
	x = f.s.perm[0];
	y = f.s.perm[1];
	mrcp_ev_event(&f.s, x, MRCP_EV_EVT_SACK_SKIP_ONCE, T0);
	/* several rotations, all within base_rtt */
	for (int k = 0; k < 6; k++)
		ASSERT_EQ(y, mrcp_ev_select(&f.s, T0 + BASE - 1, -1, ~0u));
	ASSERT_GE(f.s.rotation, 3);
	ASSERT_EQ(MRCP_EV_SKIP, f.s.evs[x].state);
	mrcp_ev_set_fini(&f.s);
}

/* ---- probes (D45) ----------------------------------------------------------- */

TEST(ev, ev_probes_due__expires_skips_only_after_a_new_rotation)
{
	struct mrcp_ev_config c = cfg_make(1, 4, 0);
	struct fx f;

	fx_init(&f, &c, 49);
	mrcp_ev_event(&f.s, 0, MRCP_EV_EVT_SACK_SKIP_ONCE, T0);
	/* time alone is not enough (same rotation) */
	ASSERT_EQ(0, mrcp_ev_probes_due(&f.s, T0 + 100 * BASE, 50 * US, NULL, 0));
	ASSERT_EQ(MRCP_EV_SKIP, f.s.evs[0].state);
	f.s.rotation++; /* white-box: selection started a new rotation */
	ASSERT_EQ(0, mrcp_ev_probes_due(&f.s, T0 + BASE - 1, 50 * US, NULL, 0));
	ASSERT_EQ(MRCP_EV_SKIP, f.s.evs[0].state);
	ASSERT_EQ(0, mrcp_ev_probes_due(&f.s, T0 + BASE, 50 * US, NULL, 0));
	ASSERT_EQ(MRCP_EV_GOOD, f.s.evs[0].state);
	ASSERT_EQ(MRCP_EV_EVT_SKIP_EXPIRED, f.rec.c[1].event);
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_probes_due__first_probe_100us_after_retirement)
{
	struct mrcp_ev_config c = cfg_make(1, 4, 4);
	uint16_t out[4];
	struct fx f;

	fx_init(&f, &c, 50);
	mrcp_ev_event(&f.s, 2, MRCP_EV_EVT_RTO, T0);
	ASSERT_EQ(0, mrcp_ev_probes_due(&f.s, T0 + 100 * US - 1, 50 * US, out, 4));
	ASSERT_EQ(1, mrcp_ev_probes_due(&f.s, T0 + 100 * US, 50 * US, out, 4));
	ASSERT_EQ(2, out[0]);
	ASSERT_U64_EQ(T0 + 100 * US, f.s.evs[2].probe_sent_ns);
	ASSERT_EQ(1, f.s.evs[2].probe_id);
	ASSERT_EQ(1, f.s.evs[2].c.probes_sent);
	/* outstanding: not sent again */
	ASSERT_EQ(0, mrcp_ev_probes_due(&f.s, T0 + 120 * US, 50 * US, out, 4));
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_probes_due__timeouts_double_interval_up_to_cap)
{
	static const uint64_t want_us[] = {200, 400, 800, 1600, 3200, 6400, 10000, 10000};
	struct mrcp_ev_config c = cfg_make(1, 4, 4);
	uint64_t sent = T0 + 100 * US, to = 50 * US;
	uint16_t out[4];
	struct fx f;

	fx_init(&f, &c, 51);
	mrcp_ev_event(&f.s, 0, MRCP_EV_EVT_RTO, T0);
	ASSERT_EQ(1, mrcp_ev_probes_due(&f.s, sent, to, out, 4));
	for (unsigned i = 0; i < sizeof(want_us) / sizeof(want_us[0]); i++) {
		uint64_t next;

		ASSERT_EQ(0, mrcp_ev_probes_due(&f.s, sent + to - 1, to, out, 4));
		ASSERT_U64_EQ(sent, f.s.evs[0].probe_sent_ns); /* not timed out yet */
		ASSERT_EQ(0, mrcp_ev_probes_due(&f.s, sent + to, to, out, 4));
		ASSERT_U64_EQ(want_us[i] * US, f.s.evs[0].probe_interval_ns);
		ASSERT_U64_EQ(0, f.s.evs[0].probe_sent_ns);
		next = sent + to + want_us[i] * US;
		ASSERT_U64_EQ(next, f.s.evs[0].probe_next_ns);
		ASSERT_EQ(0, mrcp_ev_probes_due(&f.s, next - 1, to, out, 4));
		ASSERT_EQ(1, mrcp_ev_probes_due(&f.s, next, to, out, 4));
		sent = next;
	}
	ASSERT_EQ(MRCP_EV_ASSUMED_BAD, f.s.evs[0].state);
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_probes_due__budget_8_per_base_rtt)
{
	struct mrcp_ev_config c = cfg_make(1, 16, 16);
	uint64_t t = T0 + 100 * US;
	uint16_t out[32];
	struct fx f;

	fx_init(&f, &c, 52);
	for (int i = 0; i < 12; i++)
		mrcp_ev_event(&f.s, i, MRCP_EV_EVT_RTO, T0);
	ASSERT_EQ(8, mrcp_ev_probes_due(&f.s, t, 1000 * US, out, 32));
	ASSERT_EQ(0, mrcp_ev_probes_due(&f.s, t + BASE - 1, 1000 * US, out, 32));
	ASSERT_U64_EQ(t + BASE, mrcp_ev_next_deadline(&f.s));
	ASSERT_EQ(4, mrcp_ev_probes_due(&f.s, t + BASE, 1000 * US, out, 32));
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_probes_due__respects_max)
{
	struct mrcp_ev_config c = cfg_make(1, 8, 8);
	uint16_t out[2];
	struct fx f;

	fx_init(&f, &c, 53);
	for (int i = 0; i < 5; i++)
		mrcp_ev_event(&f.s, i, MRCP_EV_EVT_RTO, T0);
	ASSERT_EQ(2, mrcp_ev_probes_due(&f.s, T0 + 100 * US, 50 * US, out, 2));
	ASSERT_EQ(0, out[0]);
	ASSERT_EQ(1, out[1]);
	ASSERT_EQ(2, f.s.probes_in_window);
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_probes_due__budget_shared_round_robin)
{
	struct mrcp_ev_config c = cfg_make(1, 4, 4);
	uint64_t t1 = T0 + 100 * US;
	uint16_t out[4];
	struct fx f;

	c.probe_budget = 1;
	fx_init(&f, &c, 54);
	mrcp_ev_event(&f.s, 0, MRCP_EV_EVT_RTO, T0);
	mrcp_ev_event(&f.s, 1, MRCP_EV_EVT_RTO, T0);
	ASSERT_EQ(1, mrcp_ev_probes_due(&f.s, t1, 50 * US, out, 4));
	ASSERT_EQ(0, out[0]);
	mrcp_ev_probe_answer(&f.s, 0, MRCP_VERDICT_NONE, t1);
	/* both due now; EV 1 has waited, so it goes first */
	ASSERT_EQ(1, mrcp_ev_probes_due(&f.s, t1 + 100 * US, 50 * US, out, 4));
	ASSERT_EQ(1, out[0]);
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_probes_due__denied_evs_are_never_probed)
{
	struct mrcp_ev_config c = cfg_make(1, 4, 4);
	uint16_t out[4];
	struct fx f;

	fx_init(&f, &c, 55);
	mrcp_ev_event(&f.s, 0, MRCP_EV_EVT_DENY, T0);
	mrcp_ev_event(&f.s, 1, MRCP_EV_EVT_RTO, T0);
	mrcp_ev_event(&f.s, 1, MRCP_EV_EVT_DENY, T0);
	for (uint64_t t = T0; t < T0 + 50000 * US; t += 1000 * US)
		ASSERT_EQ(0, mrcp_ev_probes_due(&f.s, t, 50 * US, out, 4));
	ASSERT_EQ(0, f.s.evs[0].c.probes_sent + f.s.evs[1].c.probes_sent);
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_probe_answer__three_answers_resurrect_to_good)
{
	struct mrcp_ev_config c = cfg_make(1, 4, 4);
	uint64_t t;
	struct fx f;

	fx_init(&f, &c, 56);
	mrcp_ev_event(&f.s, 0, MRCP_EV_EVT_RTO, T0);
	t = probe_round(&f, 0, T0 + 100 * US, MRCP_VERDICT_NONE);
	ASSERT_EQ(1, f.s.evs[0].probe_ok_run);
	ASSERT_U64_EQ(t + 100 * US, f.s.evs[0].probe_next_ns);
	t = probe_round(&f, 0, t + 100 * US, MRCP_VERDICT_NONE);
	ASSERT_EQ(MRCP_EV_ASSUMED_BAD, f.s.evs[0].state);
	probe_round(&f, 0, t + 100 * US, MRCP_VERDICT_NONE);
	ASSERT_EQ(MRCP_EV_GOOD, f.s.evs[0].state);
	ASSERT_EQ(MRCP_EV_POOL_BACKUP, f.s.evs[0].pool); /* plane is full */
	ASSERT_EQ(3, f.s.evs[0].c.probes_ok);
	ASSERT_EQ(MRCP_EV_EVT_PROBE_OK_NONE, f.rec.c[f.rec.n - 1].event);
	ASSERT_EQ(MRCP_EV_ASSUMED_BAD, f.rec.c[f.rec.n - 1].from);
	ASSERT_EQ(MRCP_EV_GOOD, f.rec.c[f.rec.n - 1].to);
	ASSERT_U64_EQ(UINT64_MAX, mrcp_ev_next_deadline(&f.s));
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_probe_answer__last_answer_skip_once_resurrects_to_skip)
{
	struct mrcp_ev_config c = cfg_make(1, 4, 4);
	uint64_t t;
	struct fx f;

	fx_init(&f, &c, 57);
	mrcp_ev_event(&f.s, 0, MRCP_EV_EVT_RTO, T0);
	t = probe_round(&f, 0, T0 + 100 * US, MRCP_VERDICT_SKIP_ONCE);
	t = probe_round(&f, 0, t + 100 * US, MRCP_VERDICT_NONE);
	t = probe_round(&f, 0, t + 100 * US, MRCP_VERDICT_SKIP_ONCE);
	ASSERT_EQ(MRCP_EV_SKIP, f.s.evs[0].state);
	ASSERT_U64_EQ(t, f.s.evs[0].skip_since_ns);
	ASSERT_EQ(MRCP_EV_EVT_PROBE_OK_SKIP, f.rec.c[f.rec.n - 1].event);
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_probe_answer__always_skip_resets_the_run)
{
	struct mrcp_ev_config c = cfg_make(1, 4, 4);
	uint64_t t;
	struct fx f;

	fx_init(&f, &c, 58);
	mrcp_ev_event(&f.s, 0, MRCP_EV_EVT_RTO, T0);
	t = probe_round(&f, 0, T0 + 100 * US, MRCP_VERDICT_NONE);
	t = probe_round(&f, 0, t + 100 * US, MRCP_VERDICT_NONE);
	t = probe_round(&f, 0, t + 100 * US, MRCP_VERDICT_ALWAYS_SKIP);
	ASSERT_EQ(MRCP_EV_ASSUMED_BAD, f.s.evs[0].state);
	ASSERT_EQ(0, f.s.evs[0].probe_ok_run);
	ASSERT_EQ(2, f.s.evs[0].c.probes_ok);
	ASSERT_U64_EQ(200 * US, f.s.evs[0].probe_interval_ns);
	ASSERT_U64_EQ(t + 200 * US, f.s.evs[0].probe_next_ns);
	t = probe_round(&f, 0, t + 200 * US, MRCP_VERDICT_NONE);
	t = probe_round(&f, 0, t + 200 * US, MRCP_VERDICT_NONE);
	ASSERT_EQ(MRCP_EV_ASSUMED_BAD, f.s.evs[0].state);
	probe_round(&f, 0, t + 200 * US, MRCP_VERDICT_NONE);
	ASSERT_EQ(MRCP_EV_GOOD, f.s.evs[0].state);
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_probe_answer__resurrected_ev_promoted_when_plane_short)
{
	struct mrcp_ev_config c = cfg_make(2, 4, 0);
	uint64_t t;
	int x;
	struct fx f;

	fx_init(&f, &c, 59);
	x = plane_idx(&f.s, 2, 1);
	mrcp_ev_event(&f.s, x, MRCP_EV_EVT_RTO, T0);
	ASSERT_EQ(3, f.s.n_perm);
	f.s.evs[x].loss_hist = 0x81; /* white-box: history from before */
	t = probe_round(&f, x, T0 + 100 * US, MRCP_VERDICT_NONE);
	t = probe_round(&f, x, t + 100 * US, MRCP_VERDICT_NONE);
	probe_round(&f, x, t + 100 * US, MRCP_VERDICT_NONE);
	ASSERT_EQ(MRCP_EV_GOOD, f.s.evs[x].state);
	ASSERT_EQ(MRCP_EV_POOL_ACTIVE, f.s.evs[x].pool);
	ASSERT_TRUE(in_perm(&f.s, x));
	ASSERT_EQ(4, f.s.n_perm);
	ASSERT_EQ(1, f.s.c.promotions);
	ASSERT_EQ(0, f.s.evs[x].loss_hist);
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_probe_answer__stale_answers_are_ignored)
{
	struct mrcp_ev_config c = cfg_make(1, 4, 4);
	uint16_t out[4];
	struct fx f;

	fx_init(&f, &c, 60);
	mrcp_ev_probe_answer(&f.s, 1, MRCP_VERDICT_NONE, T0);   /* GOOD EV */
	mrcp_ev_probe_answer(&f.s, -1, MRCP_VERDICT_NONE, T0);  /* bad index */
	ASSERT_EQ(0, f.s.evs[1].c.probes_ok);
	mrcp_ev_event(&f.s, 0, MRCP_EV_EVT_RTO, T0);
	mrcp_ev_probe_answer(&f.s, 0, MRCP_VERDICT_NONE, T0 + US); /* none sent */
	ASSERT_EQ(0, f.s.evs[0].probe_ok_run);
	ASSERT_EQ(1, mrcp_ev_probes_due(&f.s, T0 + 100 * US, 50 * US, out, 4));
	ASSERT_EQ(0, mrcp_ev_probes_due(&f.s, T0 + 150 * US, 50 * US, out, 4)); /* timed out */
	mrcp_ev_probe_answer(&f.s, 0, MRCP_VERDICT_NONE, T0 + 151 * US);       /* too late */
	ASSERT_EQ(0, f.s.evs[0].probe_ok_run);
	ASSERT_EQ(0, f.s.evs[0].c.probes_ok);
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_next_deadline__nothing_pending)
{
	struct mrcp_ev_config c = cfg_make(1, 4, 4);
	struct fx f;

	fx_init(&f, &c, 61);
	ASSERT_U64_EQ(UINT64_MAX, mrcp_ev_next_deadline(&f.s));
	mrcp_ev_event(&f.s, 0, MRCP_EV_EVT_DENY, T0);
	ASSERT_U64_EQ(UINT64_MAX, mrcp_ev_next_deadline(&f.s));
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_next_deadline__probe_send_and_timeout)
{
	struct mrcp_ev_config c = cfg_make(1, 4, 4);
	uint16_t out[4];
	struct fx f;

	fx_init(&f, &c, 62);
	mrcp_ev_event(&f.s, 1, MRCP_EV_EVT_RTO, T0 + 5 * US);
	mrcp_ev_event(&f.s, 0, MRCP_EV_EVT_RTO, T0);
	ASSERT_U64_EQ(T0 + 100 * US, mrcp_ev_next_deadline(&f.s)); /* the earlier one */
	ASSERT_EQ(1, mrcp_ev_probes_due(&f.s, T0 + 100 * US, 30 * US, out, 4));
	ASSERT_U64_EQ(T0 + 105 * US, mrcp_ev_next_deadline(&f.s));
	ASSERT_EQ(1, mrcp_ev_probes_due(&f.s, T0 + 105 * US, 30 * US, out, 4));
	ASSERT_U64_EQ(T0 + 130 * US, mrcp_ev_next_deadline(&f.s)); /* EV 0 timeout */
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_next_deadline__skip_after_a_new_rotation)
{
	struct mrcp_ev_config c = cfg_make(1, 4, 0);
	struct fx f;

	fx_init(&f, &c, 63);
	mrcp_ev_event(&f.s, 0, MRCP_EV_EVT_SACK_SKIP_ONCE, T0);
	ASSERT_U64_EQ(UINT64_MAX, mrcp_ev_next_deadline(&f.s)); /* needs a rotation */
	f.s.perm_pos = f.s.n_perm;
	mrcp_ev_select(&f.s, T0 + US, -1, ~0u);
	ASSERT_EQ(1, f.s.rotation);
	ASSERT_EQ(MRCP_EV_SKIP, f.s.evs[0].state);  /* base_rtt not passed */
	ASSERT_U64_EQ(T0 + BASE, mrcp_ev_next_deadline(&f.s));
	mrcp_ev_set_fini(&f.s);
}

/* ---- reverse EVs (D48) ------------------------------------------------------ */

TEST(ev, ev_rev_get__random_active_ev_per_plane)
{
	struct mrcp_ev_config c = cfg_make(4, 16, 8);
	struct fx f;

	fx_init(&f, &c, 64);
	for (uint8_t p = 1; p <= 4; p++) {
		int r = mrcp_ev_rev_get(&f.s, p);

		ASSERT_GE(r, 0);
		ASSERT_EQ(p, f.s.evs[r].port);
		ASSERT_EQ(MRCP_EV_POOL_ACTIVE, f.s.evs[r].pool);
	}
	ASSERT_EQ(-1, mrcp_ev_rev_get(&f.s, 0));
	ASSERT_EQ(-1, mrcp_ev_rev_get(&f.s, 5));
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_rev_get__port_down_or_unusable_ev)
{
	struct mrcp_ev_config c = cfg_make(2, 2, 0);
	struct fx f;

	fx_init(&f, &c, 65);
	mrcp_ev_set_port_masks(&f.s, 0x2, 0x3);
	ASSERT_EQ(-1, mrcp_ev_rev_get(&f.s, 1));
	ASSERT_GE(mrcp_ev_rev_get(&f.s, 2), 0);
	mrcp_ev_set_port_masks(&f.s, 0x3, 0x1);
	ASSERT_EQ(-1, mrcp_ev_rev_get(&f.s, 2));
	mrcp_ev_set_port_masks(&f.s, 0x3, 0x3);
	/* plane 2's only EV retired (floor off): no reverse EV left */
	f.s.cfg.min_active = 0;
	mrcp_ev_event(&f.s, 1, MRCP_EV_EVT_RTO, T0);
	ASSERT_EQ(MRCP_EV_IDX_NONE, f.s.rev_ev[1]);
	ASSERT_EQ(-1, mrcp_ev_rev_get(&f.s, 2));
	/* white-box: a stale index to a retired EV is not handed out */
	f.s.rev_ev[1] = 1;
	ASSERT_EQ(-1, mrcp_ev_rev_get(&f.s, 2));
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_rev_learn__sacked_ev_becomes_reverse_ev)
{
	struct mrcp_ev_config c = cfg_make(2, 8, 4);
	int x, y;
	struct fx f;

	fx_init(&f, &c, 66);
	x = plane_idx(&f.s, 2, 3);
	y = plane_idx(&f.s, 2, 2);
	if (f.s.rev_ev[1] == x) { /* make the learn observable */
		int t = x;

		x = y;
		y = t;
	}
	mrcp_ev_rev_learn(&f.s, x);
	ASSERT_EQ(x, mrcp_ev_rev_get(&f.s, 2));
	ASSERT_EQ(1, f.s.evs[x].c.sacked);
	/* SKIP is still usable */
	mrcp_ev_event(&f.s, y, MRCP_EV_EVT_SACK_SKIP_ONCE, T0);
	mrcp_ev_rev_learn(&f.s, y);
	ASSERT_EQ(y, mrcp_ev_rev_get(&f.s, 2));
	/* a late SACK for a retired EV is counted, not learned */
	mrcp_ev_event(&f.s, x, MRCP_EV_EVT_RTO, T0);
	mrcp_ev_rev_learn(&f.s, x);
	ASSERT_EQ(y, mrcp_ev_rev_get(&f.s, 2));
	ASSERT_EQ(2, f.s.evs[x].c.sacked);
	mrcp_ev_rev_learn(&f.s, 99); /* ignored */
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_rev_rechoose__new_good_ev_on_every_plane)
{
	struct mrcp_ev_config c = cfg_make(2, 8, 4);
	uint16_t before[2];
	struct fx f;

	fx_init(&f, &c, 67);
	before[0] = f.s.rev_ev[0];
	before[1] = f.s.rev_ev[1];
	mrcp_ev_rev_rechoose(&f.s);
	for (unsigned p = 0; p < 2; p++) {
		uint16_t r = f.s.rev_ev[p];

		ASSERT_NE(before[p], r);
		ASSERT_EQ(p + 1, f.s.evs[r].port);
		ASSERT_EQ(MRCP_EV_GOOD, f.s.evs[r].state);
		ASSERT_EQ(MRCP_EV_POOL_ACTIVE, f.s.evs[r].pool);
	}
	ASSERT_EQ(2, f.s.c.rev_rechoose);
	mrcp_ev_set_fini(&f.s);
}

TEST(ev, ev_rev_rechoose__falls_back_to_skip_or_keeps_the_only_one)
{
	struct mrcp_ev_config c = cfg_make(2, 4, 0); /* 2 active per plane */
	int a, b;
	struct fx f;

	fx_init(&f, &c, 68);
	/* plane 1: the other EV is SKIP -> chosen; plane 2: the only other
	 * EV is retired (floor off) -> kept */
	f.s.cfg.min_active = 0;
	a = f.s.rev_ev[0] == 0 ? 1 : 0;
	mrcp_ev_event(&f.s, a, MRCP_EV_EVT_SACK_SKIP_ONCE, T0);
	b = f.s.rev_ev[1] == 2 ? 3 : 2;
	mrcp_ev_event(&f.s, b, MRCP_EV_EVT_RTO, T0);
	mrcp_ev_rev_rechoose(&f.s);
	ASSERT_EQ(a, f.s.rev_ev[0]);
	ASSERT_EQ(b == 2 ? 3 : 2, f.s.rev_ev[1]);
	ASSERT_EQ(1, f.s.c.rev_rechoose);
	mrcp_ev_set_fini(&f.s);
}

/* ---- CE table (D47) --------------------------------------------------------- */

TEST(ev, ce_table_init__default_and_custom_threshold)
{
	struct mrcp_ce_table t;

	memset(&t, 0xFF, sizeof(t));
	mrcp_ce_table_init(&t, 0);
	ASSERT_EQ(6, t.always_skip_min);
	for (unsigned i = 0; i < MRCP_CE_TABLE_SIZE; i++)
		ASSERT_EQ(0, t.hist[i]);
	mrcp_ce_table_init(&t, 4);
	ASSERT_EQ(4, t.always_skip_min);
}

/* Feed @pattern (oldest first, '1' = CE) for @ev; @return the last verdict. */
static uint8_t ce_feed(struct mrcp_ce_table *t, uint32_t ev, const char *pattern)
{
	uint8_t m = 0xFF;

	for (const char *p = pattern; *p; p++)
		m = mrcp_ce_table_update(t, ev, *p == '1');
	return m;
}

TEST(ev, ce_table_update__thresholds)
{
	struct mrcp_ce_table t;

	mrcp_ce_table_init(&t, 0);
	ASSERT_EQ(MRCP_VERDICT_NONE, ce_feed(&t, 0xC001, "11111110"));  /* no CE: NONE */
	mrcp_ce_table_init(&t, 0);
	ASSERT_EQ(MRCP_VERDICT_SKIP_ONCE, ce_feed(&t, 0xC001, "1"));
	mrcp_ce_table_init(&t, 0);
	ASSERT_EQ(MRCP_VERDICT_SKIP_ONCE, ce_feed(&t, 0xC001, "00011111"));  /* 5 of 8 */
	mrcp_ce_table_init(&t, 0);
	ASSERT_EQ(MRCP_VERDICT_ALWAYS_SKIP, ce_feed(&t, 0xC001, "00111111")); /* 6 of 8 */
	mrcp_ce_table_init(&t, 0);
	ASSERT_EQ(MRCP_VERDICT_ALWAYS_SKIP, ce_feed(&t, 0xC001, "10101111"));
	/* only the last 8 count: 6 old CEs shifted out */
	mrcp_ce_table_init(&t, 0);
	ASSERT_EQ(MRCP_VERDICT_SKIP_ONCE, ce_feed(&t, 0xC001, "111111" "00000001"));
	/* a custom threshold */
	mrcp_ce_table_init(&t, 4);
	ASSERT_EQ(MRCP_VERDICT_ALWAYS_SKIP, ce_feed(&t, 0xC001, "1111"));
}

TEST(ev, ce_table_update__slot_takeover_resets_history)
{
	struct mrcp_ce_table t, probe;
	uint32_t a = 0xC0DE, b = 0;
	unsigned slot = MRCP_CE_TABLE_SIZE;

	mrcp_ce_table_init(&t, 0);
	ASSERT_EQ(MRCP_VERDICT_SKIP_ONCE, ce_feed(&t, a, "11111"));
	for (unsigned i = 0; i < MRCP_CE_TABLE_SIZE; i++)
		if (t.ev[i] == a)
			slot = i;
	ASSERT_LT(slot, MRCP_CE_TABLE_SIZE);
	/* find another EV that lands in the same slot */
	for (uint32_t cand = 1; cand < 1000000 && b == 0; cand++) {
		if (cand == a)
			continue;
		probe = t;
		mrcp_ce_table_update(&probe, cand, false);
		if (probe.ev[slot] == cand)
			b = cand;
	}
	ASSERT_NE(0, b);
	/* b's history starts empty, not on a's five CEs */
	ASSERT_EQ(MRCP_VERDICT_SKIP_ONCE, mrcp_ce_table_update(&t, b, true));
	ASSERT_EQ(1, t.hist[slot]);
	/* and a's history was lost: one more CE is not 6 of 8 */
	ASSERT_EQ(MRCP_VERDICT_SKIP_ONCE, mrcp_ce_table_update(&t, a, true));
	ASSERT_EQ(1, t.hist[slot]);
	ASSERT_EQ(a, t.ev[slot]);
}

TEST(ev, next_deadline__all_good_is_o1_and_tracks_not_good)
{
	struct mrcp_ev_config c = cfg_make(2, 8, 4);
	struct fx f;

	fx_init(&f, &c, 5);
	ASSERT_EQ(0, f.s.n_not_good);
	ASSERT_U64_EQ(UINT64_MAX, mrcp_ev_next_deadline(&f.s));
	ASSERT_EQ(MRCP_EV_SKIP, mrcp_ev_event(&f.s, 0, MRCP_EV_EVT_SACK_SKIP_ONCE, 1000));
	ASSERT_EQ(1, f.s.n_not_good);
	ASSERT_EQ(MRCP_EV_ASSUMED_BAD, mrcp_ev_event(&f.s, 1, MRCP_EV_EVT_RTO, 1000));
	ASSERT_EQ(2, f.s.n_not_good);
	ASSERT_NE(UINT64_MAX, mrcp_ev_next_deadline(&f.s)); /* the probe is due */
	ASSERT_EQ(MRCP_EV_DENIED, mrcp_ev_event(&f.s, 0, MRCP_EV_EVT_DENY, 2000));
	ASSERT_EQ(2, f.s.n_not_good);
	ASSERT_EQ(MRCP_EV_GOOD, mrcp_ev_event(&f.s, 0, MRCP_EV_EVT_ALLOW, 3000));
	ASSERT_EQ(1, f.s.n_not_good);
	mrcp_ev_set_fini(&f.s);
}

/* ---- the deadline index (mrcp_ev_next_deadline, mrcp_ev_probes_due) ------- */

/* mrcp_ev_next_deadline as a scan over every EV (what the index replaces). */
static uint64_t deadline_by_scan(const struct mrcp_ev_set *s)
{
	uint64_t best = UINT64_MAX, open = s->probe_window_start_ns + s->cfg.base_rtt_ns;
	bool any = false, spent = s->probes_in_window >= s->cfg.probe_budget;

	if (s->n_not_good == 0)
		return UINT64_MAX;
	for (unsigned i = 0; i < s->n_evs; i++) {
		const struct mrcp_ev *e = &s->evs[i];
		uint64_t t;

		if (e->state == MRCP_EV_SKIP) {
			if (e->skip_rotation == s->rotation)
				continue;
			t = e->skip_since_ns + s->cfg.base_rtt_ns;
		} else if (e->state == MRCP_EV_ASSUMED_BAD) {
			if (e->probe_sent_ns != 0)
				t = e->probe_sent_ns + s->probe_timeout_ns;
			else
				t = spent && (int64_t)(e->probe_next_ns - open) < 0 ? open : e->probe_next_ns;
		} else {
			continue;
		}
		if (!any || (int64_t)(t - best) < 0)
			best = t;
		any = true;
	}
	return best;
}

/* The index files exactly the SKIP and ASSUMED_BAD EVs, each once, the
 * list in hold order and the heaps in heap order. */
static void check_index(const struct mrcp_ev_set *s)
{
	unsigned skips = 0, bad = 0, listed = 0;
	uint16_t prev = MRCP_EV_IDX_NONE;

	for (unsigned i = 0; i < s->n_evs; i++) {
		skips += s->evs[i].state == MRCP_EV_SKIP;
		bad += s->evs[i].state == MRCP_EV_ASSUMED_BAD;
	}
	for (uint16_t i = s->skip_head; i != MRCP_EV_IDX_NONE; i = s->evs[i].dl_next) {
		ASSERT_EQ(MRCP_EV_SKIP, s->evs[i].state);
		ASSERT_EQ(prev, s->evs[i].dl_prev);
		if (prev != MRCP_EV_IDX_NONE)
			ASSERT_TRUE(s->evs[prev].skip_rotation <= s->evs[i].skip_rotation);
		prev = i;
		ASSERT_TRUE(++listed <= skips);
	}
	ASSERT_EQ(prev, s->skip_tail);
	ASSERT_EQ(skips, listed);
	ASSERT_EQ(bad, s->n_wait + s->n_out);
	for (unsigned h = 0; h < 2; h++) {
		const uint16_t *heap = s->dl_heap + (h ? s->n_evs : 0);
		unsigned n = h ? s->n_out : s->n_wait;

		for (unsigned k = 0; k < n; k++) {
			const struct mrcp_ev *e = &s->evs[heap[k]];
			uint64_t key = h ? e->probe_sent_ns : e->probe_next_ns;

			ASSERT_EQ(MRCP_EV_ASSUMED_BAD, e->state);
			ASSERT_EQ(h ? 1 : 0, e->probe_sent_ns != 0);
			ASSERT_EQ(k, e->dl_pos);
			if (k > 0) {
				const struct mrcp_ev *up = &s->evs[heap[(k - 1) / 2]];

				ASSERT_TRUE((int64_t)((h ? up->probe_sent_ns : up->probe_next_ns) - key) <= 0);
			}
		}
	}
}

TEST(ev, deadline_index__agrees_with_a_scan_over_random_events)
{
	static const uint8_t evts[] = {
		MRCP_EV_EVT_SACK_SKIP_ONCE, MRCP_EV_EVT_SACK_ALWAYS_SKIP, MRCP_EV_EVT_NACK_TRIMMED,
		MRCP_EV_EVT_RTO, MRCP_EV_EVT_LOSS_UNDONE, MRCP_EV_EVT_DENY, MRCP_EV_EVT_ALLOW,
	};
	struct mrcp_ev_config c = cfg_make(2, 16, 8);
	struct mrcp_prng r;
	uint64_t now = T0, sent_probes = 0, expired = 0;
	struct fx f;

	c.probe_budget = 3;
	c.probe_first_ns = 20 * US;
	c.probe_max_ns = 200 * US;
	fx_init(&f, &c, 77);
	mrcp_prng_seed(&r, 78);
	for (unsigned step = 0; step < 40000; step++) {
		unsigned op = mrcp_prng_below(&r, 16), idx = mrcp_prng_below(&r, f.s.n_evs);

		now += mrcp_prng_below(&r, 3 * US);
		if (op < 6) {
			mrcp_ev_event(&f.s, (int)idx, (enum mrcp_ev_event)evts[mrcp_prng_below(&r, sizeof(evts))], now);
		} else if (op < 8) {
			mrcp_ev_on_loss(&f.s, (int)idx, now);
		} else if (op < 11) {
			mrcp_ev_select(&f.s, now, -1, ~0u);
		} else if (op < 14) {
			/* what the scan would send: due EVs in order from the cursor,
			 * as many as max and the budget allow */
			uint16_t want[MRCP_EV_MAX], out[8];
			unsigned nw = 0, max = mrcp_prng_below(&r, 5), left, got;
			bool reset = (int64_t)(f.s.probe_window_start_ns + f.s.cfg.base_rtt_ns - now) <= 0;
			uint64_t tmo = 15 * US;

			left = f.s.n_not_good == 0 ? 0 : reset ? c.probe_budget : c.probe_budget - f.s.probes_in_window;
			for (unsigned k = 0; k < f.s.n_evs && nw < max && nw < left; k++) {
				unsigned i = (f.s.probe_cursor + k) % f.s.n_evs;
				const struct mrcp_ev *e = &f.s.evs[i];

				if (e->state == MRCP_EV_ASSUMED_BAD && e->probe_sent_ns == 0 &&
				    (int64_t)(now - e->probe_next_ns) >= 0)
					want[nw++] = (uint16_t)i;
			}
			got = mrcp_ev_probes_due(&f.s, now, tmo, out, max);
			ASSERT_EQ(nw, got);
			for (unsigned k = 0; k < got; k++)
				ASSERT_EQ(want[k], out[k]);
			sent_probes += got;
			/* nothing due is left behind: no released SKIP past its
			 * hold, no probe past its timeout */
			for (unsigned i = 0; f.s.n_not_good && i < f.s.n_evs; i++) {
				const struct mrcp_ev *e = &f.s.evs[i];

				ASSERT_FALSE(e->state == MRCP_EV_SKIP && e->skip_rotation != f.s.rotation &&
					     (int64_t)(e->skip_since_ns + BASE - now) <= 0);
				ASSERT_FALSE(e->state == MRCP_EV_ASSUMED_BAD && e->probe_sent_ns != 0 &&
					     (int64_t)(e->probe_sent_ns + tmo - now) <= 0);
			}
			expired++;
		} else {
			mrcp_ev_probe_answer(&f.s, (int)idx, (uint8_t)mrcp_prng_below(&r, 3), now);
		}
		check_index(&f.s);
		ASSERT_U64_EQ(deadline_by_scan(&f.s), mrcp_ev_next_deadline(&f.s));
	}
	/* the walk reached every kind of deadline */
	ASSERT_TRUE(sent_probes > 100);
	ASSERT_TRUE(expired > 100);
	ASSERT_TRUE(f.s.rotation > 100);
	mrcp_ev_set_fini(&f.s);
}
