/* sim.c - the mrc-sim event loop: the multi-plane Clos fabric (queues,
 * ECMP, ECN, trimming, tail drop, failures and routing reconvergence), the
 * hosts that drive one MRC engine each, and the workloads. See sim.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>

#include "mrcp_calq.h"
#include "mrcp_heap.h"
#include "mrcp_prng.h"
#include "sim.h"

#define PS_PER_NS 1000ull
#define PS_X8 8000000000000ull     /* 8 bit x 1e12 ps: bytes -> ps at 1 bit/s */
#define BURST 64u                  /* packets per mrcp_rx_burst / mrcp_poll */
#define SLOT_BYTES (4096u + MRCP_TX_HDR_MAX + 4u) /* MTU + headers + pad */
#define TX_ROOM_BYTES (64u * 1024u) /* NIC backlog that closes a port's TX room */
#define MAX_POSTED 256u            /* Writes outstanding per QP */
#define DSCP_CONTROL 46u
/* §2.1: a trim keeps BTH + METH + TSETH + RETH (12 + 4 + 4 + 16). */
#define TRIM_KEEP 36u
#define SIM_IDEAL_MTU 4096u        /* the engines' payload MTU (engine default) */

/* Where a packet is when its hop event fires. */
enum hop { HOP_T0_SRC = 0, HOP_T1, HOP_T0_DST, HOP_HOST, HOP_T2, HOP_T1_DN };
enum evk { EVK_HOP = 0, EVK_POLL, EVK_TIMER, EVK_ROOM, EVK_FAIL, EVK_COMPUTE, EVK_ROUTE };

struct pkt {
	struct pkt *next;         /* free list / host RX list */
	uint16_t hdr_len;         /* bytes of hdr in use */
	uint8_t pad;              /* pad bytes after the payload */
	uint8_t plane;            /* 0-based */
	uint8_t dscp, ecn, trim;  /* trim: enum mrcp_trim */
	uint8_t hop;              /* enum hop: where the next event finds it */
	uint16_t t1;              /* the T1 its T0 hashed it to (index within the pod) */
	uint16_t t2;              /* three tiers: the T2 its T1 hashed it to */
	uint32_t payload_len;     /* bytes; 0 once trimmed */
	uint32_t ev;
	uint32_t src, dst;        /* host indices */
	uint8_t hdr[MRCP_TX_HDR_MAX]; /* last: pkt_alloc zeroes everything before it */
};

/* Events are struct mrcp_heap_ent: t = simulated time, ps; kind = enum evk;
 * arg = host / failure / T0-T1 link index; val.ptr = the packet (EVK_HOP);
 * val.u64 = EVK_TIMER: the host's timer generation, EVK_FAIL: flap toggle,
 * EVK_ROUTE: 1 = up. Ties leave in push order. */

/* One output queue, modelled by its busy-until times (O(1) per packet). */
struct queue {
	uint64_t busy_ps;         /* link busy until, ps (all traffic) */
	uint64_t prio_busy_ps;    /* busy until for priority packets, ps */
	uint64_t rate_bps;        /* bit/s: the link rate, less under a slow failure */
	uint64_t loss_thresh;     /* gray: lose a packet when a draw is below it; 0 = none */
	bool up;                  /* false: silently drop everything */
	bool lasthop;             /* T0 -> host: trims get TRIMMED_LASTHOP */
	bool nic;                 /* a host's port: no buffer limit, ECN, trim */
};

struct flow {
	uint32_t src, dst;        /* host indices */
	uint32_t qps_left;        /* QPs not finished yet */
	uint64_t done_ns;         /* completion time, ns; 0 = not done */
};

struct simqp {
	uint32_t flow;
	uint32_t qpn_tx, qpn_rx;  /* on the flow's src / dst engine */
	uint32_t rev;             /* shared_qps: the reverse flow's QP, on the same
				   * two engine QPs; UINT32_MAX = none */
	uint64_t bytes;           /* to write, bytes */
	uint32_t msgs, posted, done;
	uint32_t limit;           /* post no further than this message */
	uint32_t mpp;             /* allreduce_ring: messages per phase */
	uint64_t chunk;           /* allreduce_ring: bytes per phase on this QP */
	bool failed;
};

/* A collective's rank. allreduce_ring: rank r writes flow r to rank r + 1
 * and reads flow r - 1. alltoall: rank r writes flows r(R - 1) ..
 * r(R - 1) + R - 2, to ranks r + 1 .. r + R - 1 (mod R). */
struct rank {
	uint32_t step, phase;     /* current step; phase within it */
	bool comm;                /* in the collective (false: computing) */
	bool done;
	uint64_t recv;            /* RECV_IMMs from the left, over the whole run */
	uint64_t step_start_ns, comm_start_ns;
	uint64_t done_ns;         /* last step finished, ns; 0 = not yet */
};

struct host {
	struct mrcp_engine *e;
	struct pkt *rx_head, *rx_tail;
	bool poll_pending;        /* an EVK_POLL is queued */
	uint64_t timer_gen;
	uint64_t timer_ps;        /* armed deadline, ps; UINT64_MAX = none */
	uint64_t room_wake_ps;    /* queued EVK_ROOM, ps; 0 = none */
	uint32_t lkey, rkey;
	bool room_closed[MRCP_MAX_PORTS];
	uint64_t pause_until_ps;  /* host_pause: the engine is not run before, ps */
};

struct sim {
	const struct sim_scenario *sc;
	enum mrcp_qp_mode mode;
	const struct sim_opts *o;
	struct sim_result *r;
	uint32_t ts_cap;          /* buckets allocated in r->ts_* */
	uint64_t pkts_made;       /* struct pkt allocated (the pool's high water) */
	struct mrcp_prng prng;    /* ECN marks */
	struct mrcp_prng fprng;   /* failure losses (gray, ev_drop): ECN draws stay put */
	uint64_t ecmp_salt;
	uint64_t now_ps;
	bool heap_queue;          /* the event queue is the heap, not the calendar */
	struct mrcp_heap evq;      /* --event-queue heap: storage grown by push() */
	struct mrcp_calq calq;     /* the default event queue */
	struct pkt *free_pkts;
	uint32_t H, P, T0, T1;
	uint32_t pods, T1tot, T2;  /* three tiers; two tiers: 1 pod, T1tot = T1, no T2 */
	uint64_t rate_bps;
	uint64_t delay_ps;
	uint64_t buffer_bytes, trim_bytes, kmin_bytes, kmax_bytes;
	struct queue *nic;        /* [P][H]: host -> T0 */
	struct queue *dnh;        /* [P][H]: T0 -> host */
	struct queue *up;         /* [P][T0][T1]: T0 -> T1 */
	struct queue *dn1;        /* [P][T1tot][T0]: T1 -> T0 (only a pod's own T0s used) */
	struct queue *up2;        /* [P][T1tot][T2]: T1 -> T2 */
	struct queue *dn2;        /* [P][T2][T1tot]: T2 -> T1 */
	uint8_t *rt_ok;           /* [P][T0][T1]: routing uses the T0-T1 link */
	uint32_t *rt_bad;         /* [P]: links routing does not use */
	uint8_t *rt2_ok;          /* [P][T1tot][T2]: routing uses the T1-T2 link */
	uint32_t *rt2_bad;        /* [P]: T1-T2 links routing does not use */
	bool *port_down;          /* [P][H]: the host's engine was told its link is down */
	unsigned n_evdrop;
	struct evdrop {
		uint32_t ev;          /* EV value */
		uint64_t thresh;      /* lose a packet when a draw is below it */
	} evdrop[SIM_MAX_FAILURES];
	uint32_t evdrop_qp;       /* the QP of the last ev_drop */
	uint8_t *evdrop_pool0;    /* its EVs' pools when it started */
	struct host *hosts;
	struct flow *flows;
	uint32_t n_flows;
	uint32_t *host_flows;     /* [H]: flows each host sends or receives */
	struct simqp *qps;
	uint32_t n_qps;
	struct rank *ranks;       /* collectives: [R] */
	uint32_t R;               /* collectives: ranks; 0 = not a collective */
	uint32_t fpr;             /* collectives: flows each rank writes */
	uint32_t phases;          /* collectives: phases per step */
	uint64_t per_phase;       /* collectives: RECV_IMMs a rank gets per phase */
	uint32_t n_units;         /* what must finish: flows, or ranks */
	uint64_t *wait_ns, *step_ns; /* allreduce_ring: [R][steps] */
	uint8_t *buf;             /* the shared (zero) Write source region */
	uint64_t buf_len;
	uint8_t (*slots)[SLOT_BYTES];
	int setup_err;
};

static uint64_t mix64(uint64_t x)
{
	x += 0x9E3779B97F4A7C15ull;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	return x ^ (x >> 31);
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (p == NULL) {
		fprintf(stderr, "mrc-sim: out of memory\n");
		exit(2);
	}
	return p;
}

/* ---- time series ----------------------------------------------------------------- */

/* The series bucket of now, the arrays grown as needed (opts.bucket_ns != 0). */
static uint32_t ts_bucket(struct sim *s)
{
	uint64_t b = s->now_ps / PS_PER_NS / s->o->bucket_ns;

	if (b >= s->ts_cap) {
		uint32_t cap = s->ts_cap ? s->ts_cap : 1024;

		while (cap <= b)
			cap *= 2;
		s->r->ts_bytes = realloc(s->r->ts_bytes, cap * sizeof(uint64_t));
		s->r->ts_drops = realloc(s->r->ts_drops, cap * sizeof(uint64_t));
		s->r->ts_rx = realloc(s->r->ts_rx, cap * sizeof(uint64_t));
		if (s->r->ts_bytes == NULL || s->r->ts_drops == NULL || s->r->ts_rx == NULL) {
			fprintf(stderr, "mrc-sim: out of memory\n");
			exit(2);
		}
		memset(s->r->ts_bytes + s->ts_cap, 0, (cap - s->ts_cap) * sizeof(uint64_t));
		memset(s->r->ts_drops + s->ts_cap, 0, (cap - s->ts_cap) * sizeof(uint64_t));
		memset(s->r->ts_rx + s->ts_cap, 0, (cap - s->ts_cap) * sizeof(uint64_t));
		s->ts_cap = cap;
	}
	if (b + 1 > s->r->ts_n)
		s->r->ts_n = (uint32_t)b + 1;
	return (uint32_t)b;
}

static void ts_drop(struct sim *s)
{
	if (s->o->bucket_ns) {
		uint32_t b = ts_bucket(s); /* may move ts_drops */

		s->r->ts_drops[b]++;
	}
}

/* ---- event queue: (time, push order) ------------------------------------- */

static void push(struct sim *s, uint64_t t_ps, uint8_t kind, uint32_t arg, struct pkt *p, uint64_t gen)
{
	struct mrcp_heap_ent ev = {.t = t_ps, .arg = arg, .kind = kind};

	if (kind == EVK_HOP)
		ev.val.ptr = p;
	else
		ev.val.u64 = gen;
	if (!s->heap_queue) {
		if (mrcp_calq_push(&s->calq, &ev) != 0) {
			fprintf(stderr, "mrc-sim: out of memory\n");
			exit(2);
		}
		return;
	}
	if (mrcp_heap_push(&s->evq, &ev) == 0)
		return;
	/* full: double the storage (the heap keeps its order in it) */
	uint32_t cap = s->evq.cap ? 2 * s->evq.cap : 1024;
	struct mrcp_heap_ent *h = s->evq.cap < UINT32_MAX / 2 ?
		realloc(s->evq.ent, (size_t)cap * sizeof(*h)) : NULL;
	if (h == NULL) {
		fprintf(stderr, "mrc-sim: out of memory\n");
		exit(2);
	}
	mrcp_heap_resize(&s->evq, h, cap);
	(void)mrcp_heap_push(&s->evq, &ev);
}

static bool pop(struct sim *s, struct mrcp_heap_ent *ev)
{
	return s->heap_queue ? mrcp_heap_pop(&s->evq, ev) : mrcp_calq_pop(&s->calq, ev);
}

static uint64_t queued(const struct sim *s)
{
	return s->heap_queue ? s->evq.n : s->calq.n;
}

static uint64_t loss_thresh(double pct)
{
	if (pct <= 0)
		return 0;
	if (pct >= 100)
		return UINT64_MAX;
	return (uint64_t)(pct / 100.0 * 18446744073709551616.0);
}

/* ---- packets ------------------------------------------------------------------ */

static struct pkt *pkt_alloc(struct sim *s)
{
	struct pkt *p = s->free_pkts;

	if (p != NULL) {
		s->free_pkts = p->next;
	} else {
		p = malloc(sizeof(*p));
		s->pkts_made++;
		if (p == NULL) {
			fprintf(stderr, "mrc-sim: out of memory\n");
			exit(2);
		}
	}
	memset(p, 0, offsetof(struct pkt, hdr));
	return p;
}

static void pkt_free(struct sim *s, struct pkt *p)
{
	p->next = s->free_pkts;
	s->free_pkts = p;
}

static uint32_t wire_bytes(const struct pkt *p)
{
	return SIM_WIRE_OVERHEAD + p->hdr_len + p->payload_len + p->pad;
}

static bool trimmable(const struct pkt *p)
{
	return p->dscp == 10 || p->dscp == 12; /* D23: TRIMMABLE, TRIMMABLE_RETX */
}

static void trim_pkt(struct pkt *p, bool lasthop)
{
	if (p->hdr_len > TRIM_KEEP)
		p->hdr_len = TRIM_KEEP;
	p->payload_len = 0;
	p->pad = 0;
	p->trim = lasthop ? MRCP_TRIM_LASTHOP : MRCP_TRIM_FABRIC;
	p->dscp = lasthop ? 13 : 11; /* D23 */
}

static uint64_t backlog_bytes(const struct sim *s, const struct queue *q)
{
	if (q->busy_ps <= s->now_ps)
		return 0;
	return (q->busy_ps - s->now_ps) * q->rate_bps / PS_X8;
}

/* Offer @p to @q now: mark, trim, drop or schedule its arrival at the next
 * element (hop @next) one propagation delay after it leaves. */
static void enqueue(struct sim *s, struct queue *q, struct pkt *p, uint8_t next)
{
	uint64_t backlog, ser, start, depart;
	uint32_t size;
	bool prio;

	if (!q->up) {
		s->r->drops_down++;
		ts_drop(s);
		pkt_free(s, p);
		return;
	}
	if (q->loss_thresh && mrcp_prng_next(&s->fprng) < q->loss_thresh) {
		s->r->drops_loss++;
		ts_drop(s);
		pkt_free(s, p);
		return;
	}
	backlog = backlog_bytes(s, q);
	prio = p->trim != MRCP_TRIM_NONE || p->dscp == DSCP_CONTROL;
	if (!prio && !q->nic) {
		if (s->kmax_bytes > 0 && (p->ecn == 1 || p->ecn == 2) &&
		    (!q->lasthop || s->sc->ecn_lasthop) && backlog > s->kmin_bytes) {
			bool mark = backlog >= s->kmax_bytes;
			if (!mark)
				mark = mrcp_prng_unit(&s->prng) <
				       (double)(backlog - s->kmin_bytes) / (double)(s->kmax_bytes - s->kmin_bytes);
			if (mark) {
				p->ecn = 3;
				s->r->ecn_marks++;
			}
		}
		size = wire_bytes(p);
		if (s->sc->trim && trimmable(p) && backlog + size > s->trim_bytes) {
			trim_pkt(p, q->lasthop);
			s->r->trims++;
			prio = true;
		} else if (backlog + size > s->buffer_bytes) {
			s->r->drops_buffer++;
			ts_drop(s);
			pkt_free(s, p);
			return;
		}
	}
	size = wire_bytes(p);
	ser = (uint64_t)size * PS_X8 / q->rate_bps;
	if (prio) {
		/* priority packets wait only for each other but take link time */
		start = q->prio_busy_ps > s->now_ps ? q->prio_busy_ps : s->now_ps;
		depart = start + ser;
		q->prio_busy_ps = depart;
		q->busy_ps = (q->busy_ps > s->now_ps ? q->busy_ps : s->now_ps) + ser;
	} else {
		start = q->busy_ps > s->now_ps ? q->busy_ps : s->now_ps;
		depart = start + ser;
		q->busy_ps = depart;
	}
	p->hop = next;
	push(s, depart + s->delay_ps, EVK_HOP, 0, p, 0);
}

/* The T0 uplink for @p from @st0 to @dt0: a hash of the 5-tuple (addresses,
 * and the EV in the UDP source port) over the T1s. Once routing has
 * withdrawn links (link_down + reconverge_ms), a T1 that cannot reach both
 * T0s is skipped: a packet hashed onto one moves to another usable T1
 * chosen by the same hash, and no other packet moves (resilient hashing). */
static uint32_t ecmp(const struct sim *s, const struct pkt *p, uint32_t st0, uint32_t dt0)
{
	/* routing: source - the path is the EV's: its low 16 bits (D8's T0
	 * uplink field) pick the T1, whatever routing knows; a dead T1 stays
	 * dead for that EV until the sender stops using it */
	if (s->sc->source_routed)
		return (p->ev & 0xffffu) % s->T1;
	uint64_t k = (uint64_t)p->ev ^ ((uint64_t)p->plane << 40) ^ ((uint64_t)st0 << 48);
	uint64_t a = (uint64_t)p->src << 32 | p->dst;
	uint64_t h = mix64(mix64(k ^ s->ecmp_salt) ^ a);
	uint32_t t1 = (uint32_t)(h % s->T1), n = 0, pick;
	const uint8_t *rs = &s->rt_ok[(p->plane * s->T0 + st0) * s->T1];
	const uint8_t *rd = &s->rt_ok[(p->plane * s->T0 + dt0) * s->T1];

	if (s->rt_bad[p->plane] == 0 || (rs[t1] && rd[t1]))
		return t1;
	for (uint32_t i = 0; i < s->T1; i++)
		n += rs[i] && rd[i];
	if (n == 0)
		return t1; /* no route: it goes where the hash says */
	pick = (uint32_t)((h / s->T1) % n);
	for (uint32_t i = 0; i < s->T1; i++)
		if (rs[i] && rd[i] && pick-- == 0)
			return i;
	return t1;
}

/* Three tiers: the T2 a T1 sends a packet to another pod through, by a
 * hash of the flow and EV (another salt than the T0's), or with source
 * routing the EV's bits 15:8. Two tiers never ask. */
static uint32_t t1_of(const struct sim *s, uint32_t t0, uint32_t k);

static uint32_t ecmp2(const struct sim *s, const struct pkt *p, uint32_t st0, uint32_t dt0)
{
	if (s->sc->source_routed)
		return ((p->ev >> 8) & 0xffu) % s->T2;
	uint64_t k = (uint64_t)p->ev ^ ((uint64_t)p->plane << 40) ^ ((uint64_t)p->t1 << 48);
	uint64_t h = mix64(mix64(k ^ s->ecmp_salt ^ 0x72ull) ^ ((uint64_t)p->src << 32 | p->dst));
	uint32_t t2 = (uint32_t)(h % s->T2), n = 0, pick;
	/* once routing has withdrawn T1-T2 links (link_down + reconverge_ms),
	 * a T2 the source's T1 or the destination's cannot use is skipped, as
	 * the T0 does with T1s (resilient hashing) */
	const uint8_t *rs = &s->rt2_ok[(p->plane * s->T1tot + t1_of(s, st0, p->t1)) * s->T2];
	const uint8_t *rd = &s->rt2_ok[(p->plane * s->T1tot + t1_of(s, dt0, p->t1)) * s->T2];

	if (s->rt2_bad[p->plane] == 0 || (rs[t2] && rd[t2]))
		return t2;
	for (uint32_t i = 0; i < s->T2; i++)
		n += rs[i] && rd[i];
	if (n == 0)
		return t2;
	pick = (uint32_t)((h / s->T2) % n);
	for (uint32_t i = 0; i < s->T2; i++)
		if (rs[i] && rd[i] && pick-- == 0)
			return i;
	return t2;
}

/* The global index of T1 @k of @t0's pod. */
static uint32_t t1_of(const struct sim *s, uint32_t t0, uint32_t k)
{
	return s->pods > 1 ? t0 / s->sc->t0_per_pod * s->T1 + k : k;
}

static void host_rx_append(struct sim *s, struct pkt *p);

static void hop(struct sim *s, struct pkt *p)
{
	uint32_t P = p->plane, st0 = p->src / s->sc->hosts_per_t0, dt0 = p->dst / s->sc->hosts_per_t0;

	switch (p->hop) {
	case HOP_T0_SRC:
		if (st0 == dt0)
			enqueue(s, &s->dnh[P * s->H + p->dst], p, HOP_HOST);
		else {
			p->t1 = (uint16_t)ecmp(s, p, st0, dt0);
			enqueue(s, &s->up[(P * s->T0 + st0) * s->T1 + p->t1], p, HOP_T1);
		}
		break;
	case HOP_T1:
		if (s->pods > 1 && st0 / s->sc->t0_per_pod != dt0 / s->sc->t0_per_pod) {
			/* up to the T2 tier: another pod */
			p->t2 = (uint16_t)ecmp2(s, p, st0, dt0);
			enqueue(s, &s->up2[(P * s->T1tot + t1_of(s, st0, p->t1)) * s->T2 + p->t2], p, HOP_T2);
			break;
		}
		enqueue(s, &s->dn1[(P * s->T1tot + t1_of(s, st0, p->t1)) * s->T0 + dt0], p, HOP_T0_DST);
		break;
	case HOP_T2:
		/* down to the same-numbered T1 of the destination's pod */
		enqueue(s, &s->dn2[(P * s->T2 + p->t2) * s->T1tot + t1_of(s, dt0, p->t1)], p, HOP_T1_DN);
		break;
	case HOP_T1_DN:
		enqueue(s, &s->dn1[(P * s->T1tot + t1_of(s, dt0, p->t1)) * s->T0 + dt0], p, HOP_T0_DST);
		break;
	case HOP_T0_DST:
		enqueue(s, &s->dnh[P * s->H + p->dst], p, HOP_HOST);
		break;
	default:
		host_rx_append(s, p);
		break;
	}
}

/* ---- hosts ---------------------------------------------------------------------- */

static struct mrcp_ip host_addr(uint32_t h, uint32_t plane)
{
	struct mrcp_ip a;

	memset(&a, 0, sizeof(a));
	a.family = 4;
	a.a[0] = 10;
	a.a[1] = (uint8_t)(plane + 1);
	a.a[2] = (uint8_t)(h >> 8);
	a.a[3] = (uint8_t)h;
	return a;
}

static void schedule_poll(struct sim *s, uint32_t h)
{
	if (!s->hosts[h].poll_pending) {
		s->hosts[h].poll_pending = true;
		push(s, s->now_ps, EVK_POLL, h, NULL, 0);
	}
}

static void host_rx_append(struct sim *s, struct pkt *p)
{
	struct host *hs = &s->hosts[p->dst];

	p->next = NULL;
	if (hs->rx_tail)
		hs->rx_tail->next = p;
	else
		hs->rx_head = p;
	hs->rx_tail = p;
	schedule_poll(s, p->dst);
}

static void send_tx(struct sim *s, uint32_t h, const struct mrcp_tx *tx)
{
	struct pkt *p;
	uint32_t dst;

	if (tx->port < 1 || tx->port > s->P || tx->dst.family != 4 || tx->dst.a[0] != 10 ||
	    tx->hdr_len > MRCP_TX_HDR_MAX) {
		s->r->drops_down++; /* nowhere to go */
		return;
	}
	dst = (uint32_t)tx->dst.a[2] << 8 | tx->dst.a[3];
	if (dst >= s->H) {
		s->r->drops_down++;
		return;
	}
	p = pkt_alloc(s);
	memcpy(p->hdr, tx->hdr, tx->hdr_len);
	p->hdr_len = tx->hdr_len;
	p->pad = tx->pad;
	p->plane = (uint8_t)(tx->port - 1);
	p->dscp = tx->dscp;
	p->ecn = tx->ecn;
	p->ev = tx->ev;
	p->payload_len = tx->payload_len;
	p->src = h;
	p->dst = dst;
	for (unsigned i = 0; i < s->n_evdrop; i++) {
		if (p->ev == s->evdrop[i].ev && mrcp_prng_next(&s->fprng) < s->evdrop[i].thresh) {
			s->r->drops_loss++;
			ts_drop(s);
			pkt_free(s, p);
			return;
		}
	}
	enqueue(s, &s->nic[p->plane * s->H + h], p, HOP_T0_SRC);
}

/* Post the next Writes of QP @i, up to MAX_POSTED outstanding. */
static bool post_more(struct sim *s, uint32_t i)
{
	struct simqp *q = &s->qps[i];
	const struct flow *f = &s->flows[q->flow];
	uint64_t msg = (uint64_t)s->sc->msg_kb * 1024;
	bool any = false;

	while (!q->failed && q->posted < q->limit && q->posted - q->done < MAX_POSTED) {
		uint64_t off = (uint64_t)q->posted * msg, len;

		if (q->mpp)
			off = (uint64_t)(q->posted % q->mpp) * msg; /* within the phase's chunk */
		len = (q->mpp ? q->chunk : q->bytes) - off;
		if (len > msg)
			len = msg;
		struct mrcp_sge sge = {.addr = (uint64_t)(uintptr_t)s->buf + off, .len = (uint32_t)len,
				       .lkey = s->hosts[f->src].lkey};
		struct mrcp_send_wr wr = {
			.wr_id = q->posted, .opcode = q->mpp ? MRCP_WR_WRITE_IMM : MRCP_WR_WRITE,
			.flags = MRCP_WR_SIGNALED,
			.sg_list = &sge, .num_sge = 1,
			.remote_addr = (uint64_t)(uintptr_t)s->buf + off, .rkey = s->hosts[f->dst].rkey,
		};
		if (mrcp_qp_post_send(s->hosts[f->src].e, q->qpn_tx, &wr, s->now_ps / PS_PER_NS) != 0)
			break;
		q->posted++;
		any = true;
	}
	return any;
}

/* Collectives: rank @r may post its next phase (its QPs' share). */
static void rank_send_phase(struct sim *s, uint32_t r)
{
	for (uint32_t k = 0; k < s->fpr * s->sc->qps; k++) {
		uint32_t i = r * s->fpr * s->sc->qps + k;

		s->qps[i].limit += s->qps[i].mpp;
		post_more(s, i);
	}
	schedule_poll(s, r);
}

static void rank_start_step(struct sim *s, uint32_t r)
{
	struct rank *k = &s->ranks[r];

	k->comm = false;
	k->step_start_ns = s->now_ps / PS_PER_NS;
	push(s, s->now_ps + s->sc->compute_ns * PS_PER_NS, EVK_COMPUTE, r, NULL, 0);
}

static void rank_compute_done(struct sim *s, uint32_t r)
{
	struct rank *k = &s->ranks[r];

	k->comm = true;
	k->phase = 0;
	k->comm_start_ns = s->now_ps / PS_PER_NS;
	rank_send_phase(s, r);
}

/* Advance rank @r over every phase whose chunks have all arrived (from the
 * left in a ring, from every other rank in an all-to-all). */
static void rank_advance(struct sim *s, uint32_t r)
{
	struct rank *k = &s->ranks[r];
	uint32_t phases = s->phases;

	while (k->comm && !k->done &&
	       k->recv >= ((uint64_t)k->step * phases + k->phase + 1) * s->per_phase) {
		uint64_t now_ns = s->now_ps / PS_PER_NS;

		if (++k->phase < phases) {
			rank_send_phase(s, r);
			continue;
		}
		s->wait_ns[r * s->sc->steps + k->step] = now_ns - k->comm_start_ns;
		s->step_ns[r * s->sc->steps + k->step] = now_ns - k->step_start_ns;
		if (++k->step == s->sc->steps) {
			k->done = true;
			k->done_ns = now_ns;
			s->r->flows_done++;
		} else {
			rank_start_step(s, r);
		}
	}
}

/* The QP (s->qps index) a completion on host @h belongs to. An engine QP's
 * user_ctx names the QP it was created for; with shared_qps it also carries
 * the reverse flow (requester on one side, responder on the other), so a
 * completion for the other role belongs to that flow. */
static uint32_t wc_qp(const struct sim *s, uint32_t h, const struct mrcp_wc *wc)
{
	uint32_t i = (uint32_t)wc->user_ctx;
	const struct simqp *q = &s->qps[i];
	bool recv = wc->opcode == MRCP_WC_RECV_IMM;

	if (q->rev != UINT32_MAX && (recv ? s->flows[q->flow].dst : s->flows[q->flow].src) != h)
		return q->rev;
	return i;
}

static bool drain_cq(struct sim *s, uint32_t h)
{
	struct mrcp_wc wc[BURST];
	unsigned n;
	bool posted = false;

	while ((n = mrcp_poll_cq(s->hosts[h].e, wc, BURST)) != 0) {
		for (unsigned i = 0; i < n; i++) {
			struct simqp *q;
			struct flow *f;

			uint32_t qi;

			if (wc[i].user_ctx >= s->n_qps)
				continue;
			qi = wc_qp(s, h, &wc[i]);
			q = &s->qps[qi];
			f = &s->flows[q->flow];
			if (wc[i].status != MRCP_WC_SUCCESS) {
				s->r->wc_err++;
				q->failed = true;
				continue;
			}
			if (wc[i].opcode == MRCP_WC_RECV_IMM) {
				/* a collective's chunk message arrived at f->dst */
				(void)mrcp_qp_post_recv(s->hosts[h].e, q->qpn_rx, 0);
				s->ranks[f->dst].recv++;
				rank_advance(s, f->dst);
				continue;
			}
			q->done++;
			s->r->bytes_done += wc[i].byte_len;
			if (s->o->bucket_ns) {
				uint32_t b = ts_bucket(s); /* may move ts_bytes */

				s->r->ts_bytes[b] += wc[i].byte_len;
			}
			if (q->mpp) {
				if (post_more(s, qi))
					posted = true;
			} else if (q->done == q->msgs) {
				if (--f->qps_left == 0) {
					f->done_ns = s->now_ps / PS_PER_NS;
					s->r->flows_done++;
				}
			} else if (post_more(s, qi)) {
				posted = true;
			}
		}
	}
	return posted;
}

static void drain_events(struct sim *s, uint32_t h)
{
	struct mrcp_event ev[32];
	unsigned n;

	while ((n = mrcp_poll_events(s->hosts[h].e, ev, 32)) != 0)
		for (unsigned i = 0; i < n; i++)
			if (ev[i].type == MRCP_EVENT_QP_ERROR)
				s->r->qp_errors++;
}

/* Close a port's TX room when its NIC backlog goes above TX_ROOM_BYTES and
 * open it again when half of that has drained (mrcp_port_set_tx_room walks
 * the engine's QPs, so it is called only on a change). */
static void update_room(struct sim *s, uint32_t h)
{
	struct host *hs = &s->hosts[h];
	uint64_t wake = UINT64_MAX;

	for (uint32_t p = 0; p < s->P; p++) {
		struct queue *q = &s->nic[p * s->H + h];
		/* hysteresis: closed above TX_ROOM_BYTES, open again at half */
		bool full = backlog_bytes(s, q) > (hs->room_closed[p] ? TX_ROOM_BYTES / 2 : TX_ROOM_BYTES);

		if (full != hs->room_closed[p]) {
			mrcp_port_set_tx_room(hs->e, (uint8_t)(p + 1), !full);
			hs->room_closed[p] = full;
		}
		if (full) {
			uint64_t t = q->busy_ps - (uint64_t)(TX_ROOM_BYTES / 2) * PS_X8 / q->rate_bps;
			if (t < wake)
				wake = t;
		}
	}
	if (wake != UINT64_MAX && wake != hs->room_wake_ps) {
		hs->room_wake_ps = wake;
		push(s, wake, EVK_ROOM, h, NULL, 0);
	}
}

static void arm_timer(struct sim *s, uint32_t h)
{
	struct host *hs = &s->hosts[h];
	uint64_t d = mrcp_next_deadline(hs->e), t;

	if (d == UINT64_MAX) {
		hs->timer_ps = UINT64_MAX;
		return;
	}
	t = d * PS_PER_NS;
	if (t <= s->now_ps)
		t = s->now_ps + PS_PER_NS;
	if (t == hs->timer_ps)
		return;
	hs->timer_ps = t;
	push(s, t, EVK_TIMER, h, NULL, ++hs->timer_gen);
}

/* Deliver pending packets, run the engine, send what it emits. */
static void host_service(struct sim *s, uint32_t h)
{
	struct host *hs = &s->hosts[h];
	uint64_t now_ns = s->now_ps / PS_PER_NS;
	struct mrcp_rx rx[BURST];
	struct mrcp_tx tx[BURST];
	struct pkt *done[BURST];
	unsigned n = 0, k;

	if (s->now_ps < hs->pause_until_ps) {
		/* host_pause: nothing runs; one poll at the end of the pause
		 * takes what arrived and whatever fell due meanwhile */
		if (!hs->poll_pending) {
			hs->poll_pending = true;
			push(s, hs->pause_until_ps, EVK_POLL, h, NULL, 0);
		}
		return;
	}
	while (hs->rx_head != NULL && n < BURST) {
		struct pkt *p = hs->rx_head;

		hs->rx_head = p->next;
		if (hs->rx_head == NULL)
			hs->rx_tail = NULL;
		/* headers, then zero-cost payload: the engine only counts it */
		memcpy(s->slots[n], p->hdr, p->hdr_len);
		memset(&rx[n], 0, sizeof(rx[n]));
		rx[n].data = s->slots[n];
		rx[n].len = p->hdr_len + (p->trim ? 0 : p->payload_len + p->pad);
		rx[n].port = (uint8_t)(p->plane + 1);
		rx[n].ecn = p->ecn;
		rx[n].trim = p->trim;
		rx[n].ev = p->ev;
		rx[n].src = host_addr(p->src, p->plane);
		done[n++] = p;
		if (s->o->bucket_ns && !p->trim && p->payload_len) {
			uint32_t b = ts_bucket(s); /* may move ts_rx */

			s->r->ts_rx[b] += p->payload_len;
		}
	}
	if (n > 0)
		mrcp_rx_burst(hs->e, rx, n, now_ns);
	for (unsigned i = 0; i < n; i++)
		pkt_free(s, done[i]);
	if (hs->rx_head != NULL)
		schedule_poll(s, h);
	drain_cq(s, h);
	for (int iter = 0; iter < 1024; iter++) {
		k = mrcp_poll(hs->e, now_ns, tx, BURST);
		for (unsigned i = 0; i < k; i++)
			send_tx(s, h, &tx[i]);
		update_room(s, h);
		if (k < BURST)
			break;
	}
	if (drain_cq(s, h))
		schedule_poll(s, h);
	drain_events(s, h);
	arm_timer(s, h);
}

/* ---- failures ------------------------------------------------------------------- */

/* The two queues of a link of plane P: host-T0 (@host), T0-T1 (@t0, and
 * @t1 within the T0's pod) or, with three tiers, T1-T2 (@t2, with @t1 in
 * pod @t0). */
static void link_queues(struct sim *s, uint32_t P, int host, uint32_t t0, uint32_t t1, int t2, struct queue **a,
			struct queue **b)
{
	if (t2 >= 0) {
		uint32_t g = t0 * s->T1 + t1; /* t0 is the pod */

		*a = &s->up2[(P * s->T1tot + g) * s->T2 + (uint32_t)t2];
		*b = &s->dn2[(P * s->T2 + (uint32_t)t2) * s->T1tot + g];
	} else if (host >= 0) {
		*a = &s->nic[P * s->H + (uint32_t)host];
		*b = &s->dnh[P * s->H + (uint32_t)host];
	} else {
		*a = &s->up[(P * s->T0 + t0) * s->T1 + t1];
		*b = &s->dn1[(P * s->T1tot + t1_of(s, t0, t1)) * s->T0 + t0];
	}
}

/* A link goes down or up. @silent (a blackhole, a flap): nobody sees it and
 * nothing else changes. Otherwise up means healthy again (no loss, full
 * rate), Otherwise routing learns of a T0-T1 change reconverge_ms later,
 * and a host's NIC sees its own link change at once (D50). */
static void link_state(struct sim *s, uint32_t P, int host, uint32_t t0, uint32_t t1, int t2, bool up, bool silent,
		       int dir)
{
	struct queue *a, *b;

	link_queues(s, P, host, t0, t1, t2, &a, &b);
	if (dir != 2)
		a->up = up;
	if (dir != 1)
		b->up = up;
	if (up && !silent) {
		a->loss_thresh = b->loss_thresh = 0;
		a->rate_bps = b->rate_bps = s->rate_bps;
	}
	if (silent)
		return;
	if (t2 >= 0) {
		push(s, s->now_ps + s->sc->reconverge_ns * PS_PER_NS, EVK_ROUTE,
		     (P * s->T1tot + t0 * s->T1 + t1) * s->T2 + (uint32_t)t2, NULL, 2u | up);
	} else if (host < 0) {
		push(s, s->now_ps + s->sc->reconverge_ns * PS_PER_NS, EVK_ROUTE, (P * s->T0 + t0) * s->T1 + t1,
		     NULL, up);
	} else if (s->port_down[P * s->H + (uint32_t)host] == up) {
		s->port_down[P * s->H + (uint32_t)host] = !up;
		mrcp_port_set_link(s->hosts[host].e, (uint8_t)(P + 1), up, s->now_ps / PS_PER_NS);
		schedule_poll(s, (uint32_t)host);
	}
}

/* Routing learns of a link change: @core, a T1-T2 link. */
static void route_change(struct sim *s, uint32_t link, bool up, bool core)
{
	uint32_t P = core ? link / (s->T1tot * s->T2) : link / (s->T0 * s->T1);

	if (core) {
		if (s->rt2_ok[link] == up)
			return;
		s->rt2_ok[link] = up;
		if (up)
			s->rt2_bad[P]--;
		else
			s->rt2_bad[P]++;
		return;
	}
	if (s->rt_ok[link] == up)
		return;
	s->rt_ok[link] = up;
	if (up)
		s->rt_bad[P]--;
	else
		s->rt_bad[P]++;
}

/* ev_drop: the value of the EV at ev_index of the flow's first QP. */
static void ev_drop_start(struct sim *s, const struct sim_failure *f)
{
	const struct simqp *q = &s->qps[f->flow * s->sc->qps];
	const struct mrcp_ev_set *evs = mrcp_qp_evs(s->hosts[s->flows[q->flow].src].e, q->qpn_tx);

	if (evs == NULL || evs->n_evs == 0)
		return;
	free(s->evdrop_pool0);
	s->evdrop_pool0 = xcalloc(evs->n_evs, 1);
	for (uint16_t k = 0; k < evs->n_evs; k++)
		s->evdrop_pool0[k] = evs->evs[k].pool;
	s->evdrop_qp = f->flow * s->sc->qps;
	s->evdrop[s->n_evdrop].ev = evs->evs[f->ev_index % evs->n_evs].value;
	s->evdrop[s->n_evdrop++].thresh = loss_thresh(f->loss_pct);
	s->r->evdrop_ev = s->evdrop[s->n_evdrop - 1].ev;
}

static void apply_failure(struct sim *s, uint32_t idx, uint64_t gen)
{
	const struct sim_failure *f = &s->sc->failures[idx];
	uint32_t P = (uint32_t)f->plane, t1 = (uint32_t)f->t1;
	/* a T1-T2 link names its T1 by pod and index */
	uint32_t t0 = f->t2 >= 0 ? (uint32_t)f->pod : (uint32_t)f->t0;
	struct queue *a, *b;

	switch (f->kind) {
	case SIM_FAIL_LINK_DOWN:
	case SIM_FAIL_LINK_UP:
	case SIM_FAIL_BLACKHOLE:
		link_state(s, P, f->host, t0, t1, f->t2, f->kind == SIM_FAIL_LINK_UP, f->kind == SIM_FAIL_BLACKHOLE, f->dir);
		break;
	case SIM_FAIL_GRAY:
	case SIM_FAIL_SLOW:
		link_queues(s, P, f->host, t0, t1, f->t2, &a, &b);
		if (f->kind == SIM_FAIL_GRAY)
			a->loss_thresh = b->loss_thresh = loss_thresh(f->loss_pct);
		else
			a->rate_bps = b->rate_bps = (uint64_t)((double)s->rate_bps / f->factor);
		break;
	case SIM_FAIL_FLAP: {
		/* toggle gen: down at even, up at odd, every period / 2; up at the end */
		uint64_t half = f->period_ns / 2, end = f->at_ns + f->duration_ns;
		uint64_t tk = f->at_ns + gen * half, next = tk + half;

		link_state(s, P, f->host, t0, t1, f->t2, tk >= end || (gen & 1), true, 0);
		if (tk < end)
			push(s, (next < end ? next : end) * PS_PER_NS, EVK_FAIL, idx, NULL, gen + 1);
		break;
	}
	case SIM_FAIL_SWITCH_DOWN:
	case SIM_FAIL_SWITCH_BLACKHOLE: {
		bool silent = f->kind == SIM_FAIL_SWITCH_BLACKHOLE;

		if (f->t0 >= 0) {
			for (uint32_t k = 0; k < s->T1; k++)
				link_state(s, P, -1, t0, k, -1, false, silent, 0);
			for (uint32_t h = t0 * s->sc->hosts_per_t0; h < (t0 + 1) * s->sc->hosts_per_t0 && h < s->H; h++)
				link_state(s, P, (int)h, 0, 0, -1, false, silent, 0);
		} else {
			for (uint32_t k = 0; k < s->T0; k++)
				link_state(s, P, -1, k, t1, -1, false, silent, 0);
		}
		break;
	}
	case SIM_FAIL_EV_DROP:
		ev_drop_start(s, f);
		break;
	case SIM_FAIL_HOST_PAUSE: {
		struct host *hs = &s->hosts[f->host];
		uint64_t end = s->now_ps + f->duration_ns * PS_PER_NS;

		if (end > hs->pause_until_ps)
			hs->pause_until_ps = end;
		if (f->period_ns)
			push(s, s->now_ps + f->period_ns * PS_PER_NS, EVK_FAIL, idx, NULL, gen + 1);
		break;
	}
	}
}

/* ---- setup ---------------------------------------------------------------------- */

static int setup_engines(struct sim *s)
{
	const struct sim_scenario *sc = s->sc;

	for (uint32_t h = 0; h < s->H; h++) {
		struct mrcp_engine_config ec;
		int rc;

		mrcp_engine_config_defaults(&ec);
		ec.seed = mix64(sc->seed ^ mix64(h + 1));
		ec.n_ports = (uint8_t)s->P;
		/* room for the host's own QPs and peers: qps per flow it sends
		 * or receives (with shared_qps the two flows of a pair of ranks
		 * share them), a peer per flow */
		ec.max_qps = s->host_flows[h] * sc->qps / (sc->shared_qps ? 2 : 1);
		if (ec.max_qps < 4)
			ec.max_qps = 4;
		if (ec.max_qps > 65536)
			ec.max_qps = 65536;
		ec.max_peers = s->host_flows[h] < s->H ? s->host_flows[h] : s->H;
		if (ec.max_peers == 0)
			ec.max_peers = 1;
		ec.max_mrs = 1; /* the shared Write region */
		ec.timer_slots = 256; /* 262 us a round: few timers per engine */
		for (uint32_t p = 0; p < s->P; p++) {
			ec.port_bps[p] = s->rate_bps;
			ec.port_addr[p] = host_addr(h, p);
		}
		ec.node_addr = ec.port_addr[0];
		ec.trimming_fabric = sc->trim;
		ec.place_payload = false;
		ec.cc_per_qp = sc->cc_per_qp;
		if (sc->base_rtt_ns)
			ec.base_rtt_ns = sc->base_rtt_ns;
		if (sc->rto_timeout)
			ec.timeout = (uint8_t)sc->rto_timeout;
		if (sc->sq_depth)
			ec.sq_depth = sc->sq_depth;
		if (sc->rq_depth)
			ec.rq_depth = sc->rq_depth;
		if (sc->mpr)
			ec.mpr = (uint8_t)sc->mpr;
		if (sc->cq_size)
			ec.cq_size = sc->cq_size;
		if (sc->ctl_queue_size)
			ec.ctl_queue_size = sc->ctl_queue_size;
		if (sc->event_queue_size)
			ec.event_queue_size = sc->event_queue_size;
		ec.ev.n_active = (uint16_t)(sc->ev_active ? sc->ev_active : 128 / s->P * s->P);
		ec.ev.n_backup = (uint16_t)(sc->ev_backup != UINT32_MAX ? sc->ev_backup : 64 / s->P * s->P);
		rc = mrcp_engine_create(&ec, &s->hosts[h].e);
		if (rc != 0) {
			fprintf(stderr, "mrc-sim: %s: engine create: %s\n", sc->path, strerror(-rc));
			return -1;
		}
		s->hosts[h].timer_ps = UINT64_MAX;
		rc = mrcp_mr_reg(s->hosts[h].e, (uint64_t)(uintptr_t)s->buf, s->buf_len, s->buf,
				 MRCP_ACCESS_LOCAL_WRITE | MRCP_ACCESS_REMOTE_WRITE,
				 &s->hosts[h].lkey, &s->hosts[h].rkey);
		if (rc != 0) {
			fprintf(stderr, "mrc-sim: mr_reg: %s\n", strerror(-rc));
			return -1;
		}
	}
	return 0;
}

/* permutation: host i writes to (i + H/2) mod H (mapping: shift), or to
 * the i-th entry of a random permutation of the hosts with no fixed point
 * (mapping: random), drawn from a generator of its own seeded by the seed,
 * so the other draws do not move. */
static void permutation_map(struct sim *s)
{
	struct mrcp_prng g;
	uint32_t *to = xcalloc(s->H, sizeof(uint32_t));

	for (uint32_t i = 0; i < s->H; i++)
		to[i] = (i + s->H / 2) % s->H;
	if (s->sc->perm_random) {
		mrcp_prng_seed(&g, mix64(s->sc->seed ^ 0x9E4Dull));
		for (uint32_t i = 0; i < s->H; i++)
			to[i] = i;
		for (uint32_t i = s->H; i > 1; i--) {
			uint32_t j = mrcp_prng_below(&g, i), t = to[i - 1];

			to[i - 1] = to[j];
			to[j] = t;
		}
		/* a fixed point swaps with its successor's destination: neither
		 * is fixed after, and the ones before stay as they were */
		for (uint32_t i = 0; i < s->H; i++) {
			if (to[i] == i) {
				uint32_t k = (i + 1) % s->H, t = to[i];

				to[i] = to[k];
				to[k] = t;
			}
		}
	}
	for (uint32_t i = 0; i < s->H; i++) {
		s->flows[i].src = i;
		s->flows[i].dst = to[i];
	}
	free(to);
}

/* The workload's flows (source and destination hosts) and, for a
 * collective, its ranks: before the engines, which are sized by them. */
static int plan_flows(struct sim *s)
{
	const struct sim_scenario *sc = s->sc;

	if (sc->wl == SIM_WL_P2P) {
		s->n_flows = 1;
		s->flows = xcalloc(1, sizeof(*s->flows));
		s->flows[0].src = sc->src;
		s->flows[0].dst = sc->dst;
	} else if (sc->wl == SIM_WL_INCAST) {
		/* receiver dst; victim receiver: the lowest other host under dst's
		 * T0; victim sender: the highest remaining host outside that T0
		 * (any remaining host if none); senders: the lowest remaining hosts */
		uint32_t hpt = sc->hosts_per_t0, rt0 = sc->dst / hpt, vdst = UINT32_MAX, vsrc = UINT32_MAX, n = 0;

		for (uint32_t h = rt0 * hpt; h < (rt0 + 1) * hpt && h < s->H && vdst == UINT32_MAX; h++)
			if (h != sc->dst)
				vdst = h;
		for (uint32_t h = s->H; h-- > 0 && vsrc == UINT32_MAX;)
			if (h / hpt != rt0)
				vsrc = h;
		for (uint32_t h = s->H; h-- > 0 && vsrc == UINT32_MAX;)
			if (h != sc->dst && h != vdst)
				vsrc = h;
		if (vdst == UINT32_MAX || vsrc == UINT32_MAX) {
			fprintf(stderr, "mrc-sim: %s: no room for the incast victim\n", sc->path);
			return -1;
		}
		s->n_flows = sc->senders + 1;
		s->flows = xcalloc(s->n_flows, sizeof(*s->flows));
		for (uint32_t h = 0; h < s->H && n < sc->senders; h++) {
			if (h == sc->dst || h == vdst || h == vsrc)
				continue;
			s->flows[n].src = h;
			s->flows[n++].dst = sc->dst;
		}
		s->flows[n].src = vsrc; /* the victim is the last flow */
		s->flows[n].dst = vdst;
	} else if (sc->wl == SIM_WL_ALLREDUCE || sc->wl == SIM_WL_ALLTOALL) {
		bool ring = sc->wl == SIM_WL_ALLREDUCE;

		s->R = sc->ranks ? sc->ranks : s->H;
		s->fpr = ring ? 1 : s->R - 1;
		s->phases = ring ? 2 * (s->R - 1) : 1;
		s->n_flows = s->R * s->fpr;
		s->flows = xcalloc(s->n_flows, sizeof(*s->flows));
		s->ranks = xcalloc(s->R, sizeof(*s->ranks));
		s->wait_ns = xcalloc((size_t)s->R * sc->steps, sizeof(uint64_t));
		s->step_ns = xcalloc((size_t)s->R * sc->steps, sizeof(uint64_t));
		for (uint32_t i = 0; i < s->R; i++) {
			for (uint32_t j = 0; j < s->fpr; j++) {
				s->flows[i * s->fpr + j].src = i;
				s->flows[i * s->fpr + j].dst = (i + 1 + j) % s->R;
			}
		}
	} else {
		s->n_flows = s->H;
		s->flows = xcalloc(s->H, sizeof(*s->flows));
		permutation_map(s);
	}
	return 0;
}

/* Every flow's QPs, connected, and the first Writes posted. */
static int setup_flows(struct sim *s)
{
	const struct sim_scenario *sc = s->sc;
	uint64_t msg = (uint64_t)sc->msg_kb * 1024;

	s->n_qps = s->n_flows * sc->qps;
	s->qps = xcalloc(s->n_qps, sizeof(*s->qps));
	for (uint32_t fi = 0; fi < s->n_flows; fi++) {
		struct flow *f = &s->flows[fi];
		struct mrcp_engine *es = s->hosts[f->src].e, *ed = s->hosts[f->dst].e;

		f->qps_left = sc->qps;
		for (uint32_t k = 0; k < sc->qps; k++) {
			uint32_t i = fi * sc->qps + k;
			struct simqp *q = &s->qps[i];
			struct mrcp_qp_attr a = {.mode = s->mode, .user_ctx = i};
			struct mrcp_conn_info ci_s, ci_d;
			int rc;

			q->flow = fi;
			q->rev = UINT32_MAX;
			q->bytes = sc->bytes / sc->qps + (k == sc->qps - 1 ? sc->bytes % sc->qps : 0);
			q->msgs = (uint32_t)((q->bytes + msg - 1) / msg);
			q->limit = q->msgs;
			if (s->R) {
				/* a chunk is bytes / R, split over the QPs; 2(R - 1)
				 * phases per step in a ring, one in an all-to-all;
				 * every message is a WriteImm */
				uint64_t chunk = sc->bytes / s->R;

				q->chunk = chunk / sc->qps + (k == sc->qps - 1 ? chunk % sc->qps : 0);
				q->mpp = (uint32_t)((q->chunk + msg - 1) / msg);
				q->msgs = q->mpp * s->phases * sc->steps;
				q->bytes = q->chunk * s->phases * sc->steps;
				q->limit = 0;
				if (fi == 0) /* every flow has the same chunks */
					s->per_phase += q->mpp * s->fpr;
			}
			if (sc->shared_qps && f->src > f->dst) {
				/* the reverse flow, set up earlier (its source is the
				 * lower rank), made the two engine QPs */
				uint32_t rj = (f->src + s->R - f->dst - 1) % s->R;
				struct simqp *r = &s->qps[(f->dst * s->fpr + rj) * sc->qps + k];

				q->qpn_tx = r->qpn_rx;
				q->qpn_rx = r->qpn_tx;
				q->rev = (uint32_t)(r - s->qps);
				r->rev = i;
				while (mrcp_qp_post_recv(ed, q->qpn_rx, 0) == 0)
					;
				continue;
			}
			rc = mrcp_qp_create(es, &a, &q->qpn_tx);
			if (rc == 0)
				rc = mrcp_qp_create(ed, &a, &q->qpn_rx);
			if (rc == 0)
				rc = mrcp_qp_local_info(es, q->qpn_tx, &ci_s);
			if (rc == 0)
				rc = mrcp_qp_local_info(ed, q->qpn_rx, &ci_d);
			if (rc == 0)
				rc = mrcp_qp_connect(es, q->qpn_tx, &ci_d, 0);
			if (rc == 0)
				rc = mrcp_qp_connect(ed, q->qpn_rx, &ci_s, 0);
			if (rc != 0) {
				fprintf(stderr, "mrc-sim: %s: QP setup: %s\n", sc->path, strerror(-rc));
				return -1;
			}
			if (q->mpp) {
				while (mrcp_qp_post_recv(ed, q->qpn_rx, 0) == 0)
					;
				continue;
			}
			if (q->msgs == 0 && --f->qps_left == 0)
				s->r->flows_done++;
			post_more(s, i);
		}
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Wire bytes of @len payload bytes sent as Writes of at most @msg bytes:
 * every packet carries headers (BTH, METH, TSETH, RETH: 36 B) and the frame
 * (SIM_WIRE_OVERHEAD). */
static uint64_t wire_of(uint64_t len, uint64_t msg)
{
	uint64_t full = len / msg, rest = len % msg;
	uint64_t pk_full = (msg + SIM_IDEAL_MTU - 1) / SIM_IDEAL_MTU, pk_rest = (rest + SIM_IDEAL_MTU - 1) / SIM_IDEAL_MTU;

	return len + (full * pk_full + pk_rest) * (TRIM_KEEP + SIM_WIRE_OVERHEAD);
}

/* Links between two hosts: 2 under one T0, 4 through a T1, 6 through a T2. */
static uint32_t path_links(const struct sim *s, uint32_t a, uint32_t b)
{
	uint32_t t0a = a / s->sc->hosts_per_t0, t0b = b / s->sc->hosts_per_t0;

	if (t0a == t0b)
		return 2;
	if (s->pods > 1 && t0a / s->sc->t0_per_pod != t0b / s->sc->t0_per_pod)
		return 6;
	return 4;
}

/* A host's rate for a unit of @qps QPs: every plane for MRC; for RC one
 * plane per QP (each keeps one EV), at most every plane. */
static uint64_t host_rate(const struct sim *s, uint32_t qps)
{
	return s->rate_bps * (s->mode == MRCP_MODE_RC && qps < s->P ? qps : s->P);
}

/* The ideal completion time of a flow of @bytes from @a to @b, ps: alone on
 * an idle fabric, its wire bytes at the host's rate (host_rate), the first
 * packet stored and forwarded on every link and propagated there and back
 * (the last SACK's way home). */
static uint64_t ideal_ps(const struct sim *s, uint32_t a, uint32_t b, uint64_t bytes)
{
	uint64_t host_bps = host_rate(s, s->sc->qps), msg = (uint64_t)s->sc->msg_kb * 1024;
	uint64_t first = (bytes < SIM_IDEAL_MTU ? bytes : SIM_IDEAL_MTU) + TRIM_KEEP + SIM_WIRE_OVERHEAD, wire = 0;
	uint32_t links = path_links(s, a, b);

	for (uint32_t k = 0; k < s->sc->qps; k++)
		wire += wire_of(bytes / s->sc->qps + (k == s->sc->qps - 1 ? bytes % s->sc->qps : 0), msg);
	/* in double: bytes x 8e12 overflows 64 bits from 2.3 MB */
	return (uint64_t)((double)wire * 8e12 / (double)host_bps + (double)(links - 1) * ((double)first * 8e12 /
		(double)s->rate_bps) + 0.5) + 2 * links * s->delay_ps;
}

static uint64_t pct(const uint64_t *v, uint32_t n, unsigned per_mille)
{
	uint64_t k = ((uint64_t)n * per_mille + 999) / 1000; /* nearest rank */

	return v[k ? k - 1 : 0];
}

/* The completion-time distribution over the flows (or ranks) that finished,
 * its ideal (the largest per-unit ideal), and for incast the senders'
 * fairness. */
static void collect_fct(struct sim *s)
{
	struct sim_result *r = s->r;
	uint32_t n = 0, units = s->R ? s->R : s->n_flows;
	uint64_t *v = xcalloc(units, sizeof(uint64_t)), sum = 0, ideal = 0;

	for (uint32_t i = 0; i < units; i++) {
		uint64_t d = s->R ? (s->ranks[i].done ? s->ranks[i].done_ns : 0) :
				    (s->flows[i].qps_left == 0 ? s->flows[i].done_ns : 0);
		uint64_t id;

		if (s->R) {
			/* a rank: per step its compute and what it sends at the
			 * host's rate (the bandwidth bound; phases wait on
			 * each other too) */
			uint64_t host_bps = host_rate(s, s->fpr * s->sc->qps);
			uint64_t chunk = s->sc->bytes / s->R, w = 0;

			for (uint32_t k = 0; k < s->sc->qps; k++)
				w += wire_of(chunk / s->sc->qps + (k == s->sc->qps - 1 ? chunk % s->sc->qps : 0),
					     (uint64_t)s->sc->msg_kb * 1024);
			id = s->sc->steps * (s->sc->compute_ns * PS_PER_NS +
					     (uint64_t)((double)s->phases * s->fpr * (double)w * 8e12 / (double)host_bps + 0.5));
		} else {
			id = ideal_ps(s, s->flows[i].src, s->flows[i].dst, s->sc->bytes);
		}
		if (id > ideal)
			ideal = id;
		if (d == 0)
			continue;
		v[n++] = d;
		sum += d;
	}
	qsort(v, n, sizeof(uint64_t), cmp_u64);
	r->fct_n = n;
	r->fct_ideal_ns = ideal / PS_PER_NS;
	if (n != 0) {
		r->fct_mean_ns = sum / n;
		r->fct_p50_ns = pct(v, n, 500);
		r->fct_p99_ns = pct(v, n, 990);
		r->fct_max_ns = v[n - 1];
	}
	free(v);
	if (s->sc->wl == SIM_WL_INCAST && s->n_flows > 1) {
		double x = 0, x2 = 0;
		uint32_t k = s->n_flows - 1; /* the victim is the last */

		for (uint32_t i = 0; i < k; i++) {
			double g = s->flows[i].qps_left == 0 ? (double)s->sc->bytes * 8.0 / (double)s->flows[i].done_ns : 0;

			x += g;
			x2 += g * g;
		}
		r->senders_jain = x2 > 0 ? x * x / ((double)k * x2) : 0;
	}
}

/* What the run allocated: the engines' own figures and the simulator's
 * (fabric, hosts, flows, packets, event queue, series), in bytes. */
static void collect_mem(struct sim *s)
{
	struct sim_result *r = s->r;
	uint64_t b = sizeof(*s), nq = (uint64_t)s->P * s->H * 2, lq;

	for (uint32_t h = 0; h < s->H; h++) {
		struct mrcp_engine_mem m;

		mrcp_engine_mem(s->hosts[h].e, &m);
		r->mem_engine_bytes += m.engine_bytes;
		r->mem_qp_bytes += m.qp_bytes;
		r->mem_qps += m.qps;
	}
	lq = (uint64_t)s->P * (s->T0 * s->T1 + s->T0 * s->T1tot + 2 * s->T1tot * (s->T2 ? s->T2 : 1));
	b += (nq + lq) * sizeof(struct queue) + (uint64_t)s->P * (s->T0 * s->T1 + s->T1tot * (s->T2 ? s->T2 : 1)) +
	     (uint64_t)s->P * s->H * sizeof(bool);
	b += (uint64_t)s->H * (sizeof(struct host) + sizeof(uint32_t)) + (uint64_t)s->n_flows * sizeof(struct flow) +
	     (uint64_t)s->n_qps * sizeof(struct simqp) + (uint64_t)s->R * sizeof(struct rank) +
	     2ull * s->R * s->sc->steps * sizeof(uint64_t) + s->buf_len + (uint64_t)BURST * SLOT_BYTES;
	b += s->pkts_made * sizeof(struct pkt) + (uint64_t)s->evq.cap * sizeof(struct mrcp_heap_ent) +
	     mrcp_calq_bytes(&s->calq) + (uint64_t)s->ts_cap * 3 * sizeof(uint64_t);
	r->mem_sim_bytes = b;
}

static void collect(struct sim *s)
{
	struct sim_result *r = s->r;

	r->min_flow_ns = UINT64_MAX;
	for (uint32_t i = 0; !s->R && i < s->n_flows; i++) {
		if (s->flows[i].done_ns > r->finish_ns)
			r->finish_ns = s->flows[i].done_ns;
		if (s->flows[i].qps_left == 0 && s->flows[i].done_ns < r->min_flow_ns)
			r->min_flow_ns = s->flows[i].done_ns;
	}
	for (uint32_t i = 0; i < s->R; i++) {
		if (s->ranks[i].done_ns > r->finish_ns)
			r->finish_ns = s->ranks[i].done_ns;
		if (s->ranks[i].done && s->ranks[i].done_ns < r->min_flow_ns)
			r->min_flow_ns = s->ranks[i].done_ns;
	}
	if (r->min_flow_ns == UINT64_MAX)
		r->min_flow_ns = 0;
	if (s->evdrop_pool0 != NULL) {
		const struct simqp *q = &s->qps[s->evdrop_qp];
		const struct mrcp_ev_set *evs = mrcp_qp_evs(s->hosts[s->flows[q->flow].src].e, q->qpn_tx);

		for (uint16_t k = 0; evs != NULL && k < evs->n_evs; k++)
			r->evdrop_promoted += s->evdrop_pool0[k] == MRCP_EV_POOL_BACKUP &&
					      evs->evs[k].pool == MRCP_EV_POOL_ACTIVE;
	}
	for (uint32_t i = 0; r->evdrop_ev && i < s->n_qps; i++) {
		const struct mrcp_ev_set *evs = mrcp_qp_evs(s->hosts[s->flows[s->qps[i].flow].src].e, s->qps[i].qpn_tx);

		for (uint16_t k = 0; evs != NULL && k < evs->n_evs; k++) {
			if (evs->evs[k].value == r->evdrop_ev && r->evdrop_state == 0) {
				r->evdrop_state = evs->evs[k].state;
				r->evdrop_trans = evs->evs[k].c.transitions;
			}
		}
	}
	r->n_report = s->n_units < SIM_MAX_REPORT ? s->n_units : SIM_MAX_REPORT;
	for (uint32_t i = 0; i < r->n_report; i++) {
		/* a collective reports its ranks */
		r->flow_src[i] = s->R ? i : s->flows[i].src;
		r->flow_dst[i] = s->R ? s->flows[i * s->fpr].dst : s->flows[i].dst;
		r->flow_done_ns[i] = s->R ? s->ranks[i].done_ns : s->flows[i].done_ns;
	}
	if (s->sc->wl == SIM_WL_P2P) {
		double rs = 0, rd = 0;

		for (uint32_t p = 0; p < s->P; p++) {
			const struct queue *a = &s->nic[p * s->H + s->sc->src], *b = &s->dnh[p * s->H + s->sc->src];
			const struct queue *c = &s->nic[p * s->H + s->sc->dst], *d = &s->dnh[p * s->H + s->sc->dst];

			if (a->up && b->up)
				rs += (double)(a->rate_bps < b->rate_bps ? a->rate_bps : b->rate_bps) / 1e9;
			if (c->up && d->up)
				rd += (double)(c->rate_bps < d->rate_bps ? c->rate_bps : d->rate_bps) / 1e9;
		}
		r->live_gbps = rs < rd ? rs : rd;
	}
	if (s->sc->wl == SIM_WL_INCAST) {
		const struct flow *v = &s->flows[s->n_flows - 1];
		uint32_t into = 0;

		for (uint32_t i = 0; i < s->n_flows; i++)
			into += s->flows[i].dst == v->dst;
		r->victim_fair_gbps = s->sc->link_gbps * s->P / into;
		if (v->done_ns)
			r->victim_gbps = (double)s->sc->bytes * 8.0 / (double)v->done_ns;
	}
	if (s->R && s->r->flows_done == s->n_units) {
		uint32_t S = s->sc->steps;

		r->steps = S;
		for (uint32_t k = 0; k <= S; k++) {
			/* k < S: step k over the ranks; k == S: every rank and step */
			uint32_t n = k < S ? s->R : s->R * S;
			uint64_t *w = xcalloc(n, sizeof(uint64_t)), *t = xcalloc(n, sizeof(uint64_t));

			for (uint32_t i = 0; i < n; i++) {
				w[i] = k < S ? s->wait_ns[i * S + k] : s->wait_ns[i];
				t[i] = k < S ? s->step_ns[i * S + k] : s->step_ns[i];
			}
			qsort(w, n, sizeof(uint64_t), cmp_u64);
			qsort(t, n, sizeof(uint64_t), cmp_u64);
			if (k < S) {
				r->step[k].compute_ns = s->sc->compute_ns;
				r->step[k].wait_p50_ns = w[(n - 1) / 2];
				r->step[k].wait_max_ns = w[n - 1];
				r->step[k].step_p50_ns = t[(n - 1) / 2];
				r->step[k].step_max_ns = t[n - 1];
			} else {
				r->step_p50_ns = t[(n - 1) / 2];
				r->step_max_ns = t[n - 1];
			}
			free(w);
			free(t);
		}
	}
	for (uint32_t h = 0; h < s->H; h++) {
		struct mrcp_engine_counters ec;

		mrcp_engine_counters(s->hosts[h].e, &ec);
		r->ctl_dropped += ec.ctl_dropped;
		r->cq_overflow += ec.cq_overflow;
		r->events_dropped += ec.events_dropped;
	}
	for (uint32_t i = 0; i < s->n_qps; i++) {
		const struct flow *f = &s->flows[s->qps[i].flow];
		const struct mrcp_ev_set *evs;
		struct mrcp_qp_info qi;

		if (mrcp_qp_info(s->hosts[f->src].e, s->qps[i].qpn_tx, &qi) != 0)
			continue;
		r->rtx_fast += qi.c.rtx_fast;
		r->rtx_nack += qi.c.rtx_nack;
		r->rtx_rto += qi.c.rtx_rto;
		r->rtx_port_down += qi.c.rtx_port_down;
		r->tx_data_pkts += qi.c.tx_data_pkts;
		r->rto_rounds += qi.c.rto_rounds;
		r->silent_rounds += qi.c.silent_rounds;
		r->suspects += qi.c.suspects;
		r->rtx_spurious += qi.c.rtx_spurious;
		evs = mrcp_qp_evs(s->hosts[f->src].e, s->qps[i].qpn_tx);
		for (uint16_t k = 0; evs != NULL && k < evs->n_evs; k++) {
			r->ev_transitions += evs->evs[k].c.transitions;
			if (evs->evs[k].state != MRCP_EV_GOOD)
				r->evs_not_good++;
			if (evs->evs[k].state == MRCP_EV_ASSUMED_BAD || evs->evs[k].state == MRCP_EV_DENIED)
				r->evs_out_plane[evs->evs[k].port - 1]++;
		}
	}
}

static void free_hop(void *ctx, const struct mrcp_heap_ent *e)
{
	if (e->kind == EVK_HOP)
		pkt_free(ctx, e->val.ptr);
}

static void teardown(struct sim *s)
{
	struct pkt *p;

	for (uint32_t i = 0; i < s->evq.n; i++)
		free_hop(s, &s->evq.ent[i]);
	mrcp_calq_foreach(&s->calq, free_hop, s);
	if (s->hosts) {
		for (uint32_t h = 0; h < s->H; h++) {
			while ((p = s->hosts[h].rx_head) != NULL) {
				s->hosts[h].rx_head = p->next;
				pkt_free(s, p);
			}
			if (s->hosts[h].e)
				mrcp_engine_destroy(s->hosts[h].e);
		}
	}
	while ((p = s->free_pkts) != NULL) {
		s->free_pkts = p->next;
		free(p);
	}
	free(s->evq.ent);
	mrcp_calq_fini(&s->calq);
	free(s->nic);
	free(s->dnh);
	free(s->up);
	free(s->dn1);
	free(s->up2);
	free(s->dn2);
	free(s->rt_ok);
	free(s->evdrop_pool0);
	free(s->rt_bad);
	free(s->rt2_ok);
	free(s->rt2_bad);
	free(s->port_down);
	free(s->hosts);
	free(s->flows);
	free(s->host_flows);
	free(s->qps);
	free(s->ranks);
	free(s->wait_ns);
	free(s->step_ns);
	free(s->buf);
	free(s->slots);
}

/* CPU time of the process, s: the event rate per core, whatever else runs */
static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void progress(const struct sim *s, double t0, bool last)
{
	double dt = cpu_now() - t0;

	fprintf(stderr, "\rmrc-sim: %s t=%.1f us, %llu events (%.2f M/s), %u of %u done%s", s->r->transport,
		(double)s->now_ps / 1e6, (unsigned long long)s->r->events,
		dt > 0 ? (double)s->r->events / dt / 1e6 : 0.0, s->r->flows_done, s->n_units, last ? "\n" : "");
}

void sim_result_free(struct sim_result *r)
{
	free(r->ts_bytes);
	free(r->ts_drops);
	free(r->ts_rx);
	r->ts_bytes = r->ts_drops = r->ts_rx = NULL;
}

int sim_run(const struct sim_scenario *sc, enum mrcp_qp_mode mode, const struct sim_opts *o,
	    struct sim_result *r)
{
	static const struct sim_opts no_opts;
	struct sim s;
	int rc = 0;
	bool capped = false;
	double t0 = cpu_now();

	memset(&s, 0, sizeof(s));
	mrcp_heap_init(&s.evq, NULL, 0);
	s.heap_queue = o != NULL && o->heap_queue;
	/* buckets of 512 ps, 65536 of them: 33.5 us ahead, past the
	 * propagation and queueing delays a packet hop is pushed for; the
	 * 1024-host permutation (39 k events per simulated us) has about 20 in
	 * a bucket */
	if (mrcp_calq_init(&s.calq, 9, 65536, 0) != 0) {
		fprintf(stderr, "mrc-sim: out of memory\n");
		exit(2);
	}
	memset(r, 0, sizeof(*r));
	r->transport = mode == MRCP_MODE_RC ? "rc" : "mrc";
	s.o = o ? o : &no_opts;
	s.sc = sc;
	s.mode = mode;
	s.r = r;
	mrcp_prng_seed(&s.prng, sc->seed);
	s.ecmp_salt = mix64(sc->seed ^ 0xEC3Bull);
	s.H = sc->hosts;
	s.P = sc->planes;
	s.T0 = (sc->hosts + sc->hosts_per_t0 - 1) / sc->hosts_per_t0;
	s.T1 = sc->t1_per_plane;
	s.pods = sc->t0_per_pod ? (s.T0 + sc->t0_per_pod - 1) / sc->t0_per_pod : 1;
	s.T1tot = s.pods * s.T1;
	s.T2 = sc->t2_per_plane;
	s.rate_bps = (uint64_t)(sc->link_gbps * 1e9);
	s.delay_ps = sc->delay_ns * PS_PER_NS;
	s.buffer_bytes = (uint64_t)sc->buffer_kb * 1024;
	s.trim_bytes = (uint64_t)sc->trim_kb * 1024;
	s.kmin_bytes = (uint64_t)sc->ecn_kmin_kb * 1024;
	s.kmax_bytes = (uint64_t)sc->ecn_kmax_kb * 1024;
	mrcp_prng_seed(&s.fprng, mix64(sc->seed ^ 0x6A4Bull));
	s.nic = xcalloc((size_t)s.P * s.H, sizeof(struct queue));
	s.dnh = xcalloc((size_t)s.P * s.H, sizeof(struct queue));
	s.up = xcalloc((size_t)s.P * s.T0 * s.T1, sizeof(struct queue));
	s.dn1 = xcalloc((size_t)s.P * s.T0 * s.T1tot, sizeof(struct queue));
	s.up2 = xcalloc((size_t)s.P * s.T1tot * (s.T2 ? s.T2 : 1), sizeof(struct queue));
	s.dn2 = xcalloc((size_t)s.P * s.T1tot * (s.T2 ? s.T2 : 1), sizeof(struct queue));
	s.rt_ok = xcalloc((size_t)s.P * s.T0 * s.T1, 1);
	s.rt_bad = xcalloc(s.P, sizeof(uint32_t));
	s.port_down = xcalloc((size_t)s.P * s.H, sizeof(bool));
	memset(s.rt_ok, 1, (size_t)s.P * s.T0 * s.T1);
	s.rt2_ok = xcalloc((size_t)s.P * s.T1tot * (s.T2 ? s.T2 : 1), 1);
	s.rt2_bad = xcalloc(s.P, sizeof(uint32_t));
	memset(s.rt2_ok, 1, (size_t)s.P * s.T1tot * (s.T2 ? s.T2 : 1));
	for (size_t i = 0; i < (size_t)s.P * s.H; i++) {
		s.nic[i].up = s.dnh[i].up = true;
		s.nic[i].rate_bps = s.dnh[i].rate_bps = s.rate_bps;
		s.dnh[i].loss_thresh = loss_thresh(sc->loss_pct);
		s.nic[i].nic = true;
		s.dnh[i].lasthop = true;
	}
	for (size_t i = 0; i < (size_t)s.P * s.T0 * s.T1; i++) {
		s.up[i].up = true;
		s.up[i].rate_bps = s.rate_bps;
	}
	for (size_t i = 0; i < (size_t)s.P * s.T0 * s.T1tot; i++) {
		s.dn1[i].up = true;
		s.dn1[i].rate_bps = s.rate_bps;
	}
	for (size_t i = 0; i < (size_t)s.P * s.T1tot * s.T2; i++) {
		s.up2[i].up = s.dn2[i].up = true;
		s.up2[i].rate_bps = s.dn2[i].rate_bps = s.rate_bps;
	}
	s.hosts = xcalloc(s.H, sizeof(struct host));
	s.slots = xcalloc(BURST, SLOT_BYTES);
	s.buf_len = sc->bytes / sc->qps + sc->bytes % sc->qps + 4096;
	s.buf = xcalloc(1, s.buf_len);

	if (plan_flows(&s) != 0) {
		rc = -1;
		goto out;
	}
	s.host_flows = xcalloc(s.H, sizeof(uint32_t));
	for (uint32_t i = 0; i < s.n_flows; i++) {
		s.host_flows[s.flows[i].src]++;
		s.host_flows[s.flows[i].dst]++;
	}
	if (setup_engines(&s) != 0 || setup_flows(&s) != 0) {
		rc = -1;
		goto out;
	}
	for (unsigned i = 0; i < sc->n_failures; i++)
		push(&s, sc->failures[i].at_ns * PS_PER_NS, EVK_FAIL, i, NULL, 0);
	for (uint32_t h = 0; h < s.H; h++)
		schedule_poll(&s, h);
	for (uint32_t i = 0; i < s.R; i++)
		rank_start_step(&s, i);

	s.n_units = s.R ? s.R : s.n_flows;
	r->setup_s = cpu_now() - t0;
	t0 = cpu_now();
	struct mrcp_heap_ent ev;

	while (r->flows_done < s.n_units && pop(&s, &ev)) {
		if (ev.t > sc->duration_ns * PS_PER_NS) {
			if (ev.kind == EVK_HOP)
				pkt_free(&s, ev.val.ptr);
			s.now_ps = sc->duration_ns * PS_PER_NS;
			capped = true; /* an event was pending: not a stall */
			break;
		}
		s.now_ps = ev.t;
		r->events++;
		if (s.o->progress && (r->events & ((1u << 21) - 1)) == 0)
			progress(&s, t0, false);
		switch (ev.kind) {
		case EVK_HOP:
			r->hop_events++;
			hop(&s, ev.val.ptr);
			break;
		case EVK_POLL:
			s.hosts[ev.arg].poll_pending = false;
			host_service(&s, ev.arg);
			break;
		case EVK_TIMER:
			if (ev.val.u64 != s.hosts[ev.arg].timer_gen)
				break;
			s.hosts[ev.arg].timer_ps = UINT64_MAX;
			host_service(&s, ev.arg);
			break;
		case EVK_COMPUTE:
			rank_compute_done(&s, ev.arg);
			break;
		case EVK_ROOM:
			if (s.hosts[ev.arg].room_wake_ps == ev.t)
				s.hosts[ev.arg].room_wake_ps = 0;
			host_service(&s, ev.arg);
			break;
		case EVK_ROUTE:
			route_change(&s, ev.arg, (ev.val.u64 & 1) != 0, (ev.val.u64 & 2) != 0);
			break;
		default:
			apply_failure(&s, ev.arg, ev.val.u64);
			break;
		}
	}
	r->end_ns = s.now_ps / PS_PER_NS;
	r->stalled = !capped && queued(&s) == 0 && r->flows_done < s.n_units;
	r->flows = s.n_units;
	if (s.o->bucket_ns)
		(void)ts_bucket(&s); /* the series runs to end_ns */
	collect(&s);
	collect_fct(&s);
	collect_mem(&s);
	r->cpu_s = cpu_now() - t0;
	{
		struct rusage ru;

		if (getrusage(RUSAGE_SELF, &ru) == 0)
			r->peak_rss_kb = ru.ru_maxrss;
	}
	if (s.o->progress)
		progress(&s, t0, true);
out:
	teardown(&s);
	return rc;
}
