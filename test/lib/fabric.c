/* fabric.c - the deterministic test fabric of fabric.h: an event heap on
 * virtual time, a packet pool, O(1) busy-until queues, the path impairments
 * and rules, real frames built and parsed through mrcp_frame.h, and the
 * scheduling of endpoint polls. It knows nothing of the engine's internals;
 * fabric_engine.c plugs an engine in as an endpoint. */
#include "fabric.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mrcp_bytes.h"
#include "mrcp_csum.h"
#include "mrcp_heap.h"
#include "mrcp_prng.h"
#include "mrcp_wire.h"

#define PS_PER_NS 1000u
#define PS_PER_S_X8 8000000000000ull /* 8 bits x 1e12 ps: bytes -> ps at 1 bit/s */
#define BURST_MAX 64u
#define IP_OFF MRCP_ETH_HLEN         /* frames are built without VLAN tags */
#define NONE UINT32_MAX              /* end of a packet list */
/* §2.1: a trim keeps Ethernet .. RETH; after the BTH that is
 * METH + TSETH + RETH (ImmDt comes after RETH and goes). */
#define TRIM_MRC_KEEP (sizeof(struct mrcp_bth_wire) + sizeof(struct mrcp_meth_wire) + \
		       sizeof(struct mrcp_tseth_wire) + sizeof(struct mrcp_reth_wire))

/* Event kinds (struct mrcp_heap_ent.kind). */
enum {
	EVK_NIC_DONE = 0, /* arg: packet; left the source NIC -> path stage */
	EVK_ARRIVE,       /* arg: packet; reached the destination downlink */
	EVK_DELIVER,      /* arg: packet; left the downlink -> parse, deliver */
	EVK_POLL,         /* arg: node; service the endpoint now */
	EVK_TIMER,        /* arg: node, gen: the endpoint's deadline */
	EVK_ROOM,         /* arg: node * FABRIC_MAX_PLANES + plane: TX room check */
	EVK_ACTION,       /* arg: index into f->acts */
};

/* Events are struct mrcp_heap_ent: t in ns, kind, arg as above, val.u64 =
 * EVK_TIMER: the node's timer generation. Ties leave in push order
 * (practice 4). */

enum {
	PKT_DUP = 1u << 0,        /* the extra copy of a duplication */
	PKT_TRIMMED = 1u << 1,
	PKT_CORRUPT = 1u << 2,    /* a rule asked for corruption after the queue */
};

/* Per-packet metadata; the frame lives in f->bufs at the same index. */
struct pkt {
	uint32_t next;            /* free list / rx list link */
	uint32_t len;             /* frame bytes now (a trim shortens it) */
	uint32_t path;            /* index into f->paths */
	uint16_t mrc_off;         /* frame offset of the BTH, bytes */
	uint8_t src, dst;         /* node ids */
	uint8_t plane;            /* 0-based */
	uint8_t k;                /* ECMP index */
	uint8_t flags;            /* PKT_* */
	uint8_t dscp, ecn;        /* as in the frame right now */
	uint8_t l3;               /* enum mrcp_frame_l3 */
	uint8_t opcode;           /* BTH, for rules and traces */
	bool rtx;
	uint32_t psn, qpn;
	uint64_t sent_ns;         /* ns */
	/* filled at delivery for the endpoint's struct mrcp_rx */
	uint32_t rx_off, rx_len;  /* MRC bytes in the frame, bytes */
	uint32_t rx_ev;
	uint8_t rx_ecn, rx_trim;
};

/* A queue's state: when the data and the priority queues finish sending
 * what they hold, ps (ns are too coarse: 1 B at 400 Gb/s is 20 ps). */
struct qstate {
	uint64_t busy_ps;
	uint64_t prio_busy_ps;
};

struct path {
	struct fabric_path_cfg cfg;
	struct qstate q;
	struct fabric_path_stats st;
};

struct node {
	struct fabric_node_cfg cfg;          /* addresses resolved */
	struct mrcp_frame_tx ftx[FABRIC_MAX_PLANES]; /* per-plane frame template */
	uint8_t mac[6];
	uint16_t ip_id;                      /* next IPv4 identification */
	uint64_t nic_busy_ps[FABRIC_MAX_PLANES]; /* source NIC queues, ps */
	bool no_room[FABRIC_MAX_PLANES];     /* told the endpoint "no room" */
	struct qstate dl[FABRIC_MAX_PLANES]; /* downlink queues */
	struct fabric_queue_cfg dlcfg[FABRIC_MAX_PLANES];
	const struct fabric_endpoint_ops *ops;
	void *ctx;
	bool poll_queued;                    /* an EVK_POLL is pending */
	uint64_t timer_at;                   /* armed deadline, ns; UINT64_MAX none */
	uint32_t timer_gen;                  /* bumped when the timer changes */
	uint32_t rx_head, rx_tail;           /* delivered, not yet given to ops */
	uint64_t pause_at, pause_ns, pause_period; /* fabric_node_pause, ns */
	struct fabric_node_stats st;
};

struct rule {
	struct fabric_rule r;
	uint64_t seen;            /* matches so far, packets */
	uint64_t hits;            /* matches acted on, packets */
};

struct sched {
	uint64_t t;               /* ns */
	struct fabric_action a;
};

struct fabric {
	struct fabric_cfg cfg;
	uint64_t seed;
	struct mrcp_prng prng;
	uint64_t now;             /* ns */

	struct mrcp_heap evq;      /* storage sized at create, grown if ever full */

	struct pkt *pkts;
	uint8_t *bufs;            /* pool_pkts x frame_bytes */
	uint32_t *free_stack;
	uint32_t free_n;

	struct path *paths;
	unsigned n_nodes;
	struct node nodes[FABRIC_MAX_NODES];

	struct rule *rules;
	unsigned n_rules, cap_rules;
	struct sched *acts;
	unsigned n_acts, cap_acts;

	fabric_path_select_fn select_fn;
	void *select_ctx;
	fabric_deliver_fn deliver_fn;
	void *deliver_ctx;
	fabric_trace_fn trace_fn;
	void *trace_ctx;

	/* scratch for endpoint services (one runs at a time) */
	struct mrcp_tx txbuf[BURST_MAX];
	struct mrcp_rx rxbuf[BURST_MAX];
	uint32_t rxpkt[BURST_MAX];
};

/* ---- small helpers ------------------------------------------------------- */

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* Bernoulli draw; a probability of 0 draws nothing, so adding an impairment
 * to one path does not shift the random stream of a run without it. */
static bool chance(struct fabric *f, double p)
{
	if (p <= 0.0)
		return false;
	if (p >= 1.0)
		return true;
	return mrcp_prng_unit(&f->prng) < p;
}

/* Uniform in [0, bound]; 0 draws nothing. */
static uint64_t rand_upto(struct fabric *f, uint64_t bound)
{
	if (bound == 0)
		return 0;
	if (bound < UINT32_MAX)
		return mrcp_prng_below(&f->prng, (uint32_t)(bound + 1));
	return mrcp_prng_next(&f->prng) % (bound + 1); /* bias < 2^-31: test delays */
}

static uint64_t splitmix64(uint64_t x)
{
	x += 0x9E3779B97F4A7C15ull;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	return x ^ (x >> 31);
}

/* murmur3 finaliser: a fixed, well-mixed hash for ECMP. */
static uint32_t mix32(uint32_t h)
{
	h ^= h >> 16;
	h *= 0x85EBCA6Bu;
	h ^= h >> 13;
	h *= 0xC2B2AE35u;
	h ^= h >> 16;
	return h;
}

static size_t ip_len(uint8_t family)
{
	return family == 4 ? 4 : 16;
}

static bool ip_eq(const struct mrcp_ip *a, const struct mrcp_ip *b)
{
	return a->family == b->family && memcmp(a->a, b->a, ip_len(a->family)) == 0;
}

static uint8_t *pkt_buf(const struct fabric *f, uint32_t i)
{
	return f->bufs + (size_t)i * f->cfg.frame_bytes;
}

static uint32_t pkt_idx(const struct fabric *f, const struct pkt *p)
{
	return (uint32_t)(p - f->pkts);
}

static size_t path_index(const struct fabric *f, unsigned src, unsigned dst,
			 unsigned plane0, unsigned k)
{
	return (((size_t)src * f->cfg.max_nodes + dst) * f->cfg.n_planes + plane0) *
		       f->cfg.n_paths + k;
}

/* ---- tracing ------------------------------------------------------------- */

static void trace(struct fabric *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void trace(struct fabric *f, const char *fmt, ...)
{
	char line[256];
	int n;
	va_list ap;

	n = snprintf(line, sizeof(line), "%" PRIu64 " ", f->now);
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	f->trace_fn(f->trace_ctx, line);
}

static void trace_pkt(struct fabric *f, const char *what, const struct pkt *p)
{
	const char *op;

	if (!f->trace_fn)
		return;
	op = mrcp_opcode_name(p->opcode);
	trace(f, "%s n%u->n%u p%u k%u %s%s psn %" PRIu32 " qp %" PRIu32 " len %" PRIu32 "%s%s",
	      what, p->src, p->dst, p->plane + 1u, p->k, op ? op : "op?",
	      p->rtx ? " rtx" : "", p->psn, p->qpn, p->len,
	      p->flags & PKT_DUP ? " dup" : "", p->flags & PKT_TRIMMED ? " trimmed" : "");
}

/* ---- event queue ------------------------------------------------------------ */

static void push(struct fabric *f, uint64_t t, unsigned kind, uint32_t arg, uint32_t gen)
{
	struct mrcp_heap_ent e = {.t = t, .val.u64 = gen, .arg = arg, .kind = kind};

	if (mrcp_heap_push(&f->evq, &e) == 0)
		return;
	/* Grows only until the working set is reached; sized at create
	 * for one event per pool packet, so this is rare. */
	uint32_t cap = f->evq.cap * 2;
	struct mrcp_heap_ent *h = realloc(f->evq.ent, (size_t)cap * sizeof(*h));

	if (!h) {
		fprintf(stderr, "fabric: out of memory for the event heap\n");
		abort();
	}
	mrcp_heap_resize(&f->evq, h, cap);
	(void)mrcp_heap_push(&f->evq, &e);
}

/* ---- packet pool ---------------------------------------------------------- */

static struct pkt *pkt_alloc(struct fabric *f)
{
	if (f->free_n == 0)
		return NULL;
	return &f->pkts[f->free_stack[--f->free_n]];
}

static void pkt_free(struct fabric *f, struct pkt *p)
{
	f->free_stack[f->free_n++] = pkt_idx(f, p);
}

static struct pkt *pkt_clone(struct fabric *f, const struct pkt *p)
{
	struct pkt *c = pkt_alloc(f);

	if (!c)
		return NULL;
	*c = *p;
	memcpy(pkt_buf(f, pkt_idx(f, c)), pkt_buf(f, pkt_idx(f, p)), p->len);
	return c;
}

/* ---- frame surgery ---------------------------------------------------------- */

/* Rewrite DSCP and ECN in the frame, as a switch does (the ICRC masks them). */
static void set_tos(struct fabric *f, struct pkt *p, uint8_t dscp, uint8_t ecn)
{
	uint8_t *ip = pkt_buf(f, pkt_idx(f, p)) + IP_OFF;
	uint8_t tos = (uint8_t)(dscp << 2 | ecn);

	p->dscp = dscp;
	p->ecn = ecn;
	if (p->l3 == MRCP_FRAME_IPV4) {
		ip[1] = tos;
		mrcp_csum_ipv4_set(ip, MRCP_IPV4_HLEN);
	} else {
		ip[0] = (uint8_t)((ip[0] & 0xF0) | tos >> 4);
		ip[1] = (uint8_t)((ip[1] & 0x0F) | (uint8_t)(tos << 4));
	}
}

/* Cut the payload and set the trimmed DSCP; IP and UDP lengths keep the
 * original size, which is one of the receiver's trim signs (D34). */
static void trim_pkt(struct fabric *f, struct pkt *p, bool lasthop)
{
	uint32_t keep = f->cfg.trim_keep_bytes ? f->cfg.trim_keep_bytes
					      : p->mrc_off + (uint32_t)TRIM_MRC_KEEP;

	if (keep < p->len)
		p->len = keep;
	p->flags |= PKT_TRIMMED;
	set_tos(f, p, lasthop ? f->cfg.dscp_trimmed_lasthop : f->cfg.dscp_trimmed, p->ecn);
}

/* Flip one byte the ICRC covers and does not mask: anything from the BTH on
 * except BTH byte 4 (reserved, masked). */
static void corrupt_pkt(struct fabric *f, struct pkt *p)
{
	uint8_t *b = pkt_buf(f, pkt_idx(f, p));
	uint32_t off = p->mrc_off + mrcp_prng_below(&f->prng, p->len - p->mrc_off - 1);

	if (off >= p->mrc_off + 4u)
		off++;
	b[off] ^= (uint8_t)(1 + mrcp_prng_below(&f->prng, 255));
}

/* ---- queues ------------------------------------------------------------------ */

enum { QW_TRIM = 1u << 0, QW_MARK = 1u << 1 };

static bool ecn_mark(struct fabric *f, const struct fabric_queue_cfg *qc, double backlog)
{
	if (backlog <= qc->ecn_kmin_bytes)
		return false;
	if (qc->ecn_kmax_bytes <= qc->ecn_kmin_bytes || backlog > qc->ecn_kmax_bytes)
		return true;
	return chance(f, qc->ecn_pmax * (backlog - qc->ecn_kmin_bytes) /
				 (double)(qc->ecn_kmax_bytes - qc->ecn_kmin_bytes));
}

/*
 * Offer @p to a queue at the current time. @return false to drop (buffer
 * full); else *@depart_ns is when its last bit leaves and *@what says whether
 * it was trimmed or marked.
 */
static bool queue_admit(struct fabric *f, struct qstate *qs, const struct fabric_queue_cfg *qc,
			struct pkt *p, uint64_t *depart_ns, unsigned *what)
{
	uint64_t now_ps = f->now * PS_PER_NS, busy, ser, dep;
	double backlog;
	bool prio;

	*what = 0;
	if (qc->rate_bps == 0) {
		*depart_ns = f->now;
		return true;
	}
	busy = max_u64(qs->busy_ps, now_ps);
	backlog = (double)(busy - now_ps) * (double)qc->rate_bps / (double)PS_PER_S_X8;
	prio = (p->flags & PKT_TRIMMED) || (f->cfg.prio_dscp_mask >> p->dscp & 1);
	if (!prio) {
		if (qc->trim && (f->cfg.trimmable_dscp_mask >> p->dscp & 1) &&
		    backlog > qc->trim_bytes) {
			trim_pkt(f, p, qc->lasthop);
			*what |= QW_TRIM;
			prio = true; /* trimmed headers go at high priority (§4.6) */
		} else if (qc->buffer_bytes && backlog + p->len > qc->buffer_bytes) {
			return false;
		} else if (qc->ecn && (p->ecn == MRCP_ECN_ECT0 || p->ecn == MRCP_ECN_ECT1) &&
			   ecn_mark(f, qc, backlog)) {
			set_tos(f, p, p->dscp, MRCP_ECN_CE);
			*what |= QW_MARK;
		}
	}
	ser = (uint64_t)p->len * PS_PER_S_X8 / qc->rate_bps;
	if (prio) {
		/* Strict priority, approximately: wait only for earlier priority
		 * packets, and push the data queue back by our link time. */
		dep = max_u64(qs->prio_busy_ps, now_ps) + ser;
		qs->prio_busy_ps = dep;
		qs->busy_ps = busy + ser;
	} else {
		dep = busy + ser;
		qs->busy_ps = dep;
	}
	*depart_ns = (dep + PS_PER_NS - 1) / PS_PER_NS;
	return true;
}

/* ---- rules --------------------------------------------------------------------- */

static bool rule_matches(const struct fabric *f, const struct fabric_rule *r, const struct pkt *p)
{
	uint32_t m = r->match;

	if (r->after_ns && f->now < r->after_ns)
		return false;
	if (r->until_ns && f->now >= r->until_ns)
		return false;
	if ((m & FABRIC_M_OPCODE) && p->opcode != r->opcode)
		return false;
	if ((m & FABRIC_M_PSN) && p->psn != r->psn)
		return false;
	if ((m & FABRIC_M_RTX) && p->rtx != r->rtx)
		return false;
	if ((m & FABRIC_M_PLANE) && p->plane + 1u != r->plane)
		return false;
	if ((m & FABRIC_M_PATH) && p->k != r->path)
		return false;
	if ((m & FABRIC_M_SRC) && p->src != r->src)
		return false;
	if ((m & FABRIC_M_DST) && p->dst != r->dst)
		return false;
	if ((m & FABRIC_M_QPN) && p->qpn != r->qpn)
		return false;
	if ((m & FABRIC_M_DATA) && mrcp_opcode_is_data(p->opcode) != r->data)
		return false;
	return true;
}

/* @return the action of the first rule that acts on @p, or -1. */
static int rules_apply(struct fabric *f, const struct pkt *p, uint64_t *extra_ns)
{
	for (unsigned i = 0; i < f->n_rules; i++) {
		struct rule *ru = &f->rules[i];

		if (!rule_matches(f, &ru->r, p))
			continue;
		if (ru->seen++ < ru->r.skip)
			continue;
		if (ru->r.count && ru->hits >= ru->r.count)
			continue;
		ru->hits++;
		if (ru->r.action == FABRIC_RULE_DELAY)
			*extra_ns += ru->r.delay_ns;
		return (int)ru->r.action;
	}
	return -1;
}

/* ---- the packet's journey ---------------------------------------------------- */

static void drop(struct fabric *f, struct pkt *p, uint64_t *counter, const char *why)
{
	(*counter)++;
	trace_pkt(f, why, p);
	pkt_free(f, p);
}

/* Left the source NIC: the path's rules, faults and queue, then the wire. */
static void path_stage(struct fabric *f, struct pkt *p)
{
	struct path *pa = &f->paths[p->path];
	const struct fabric_path_cfg *c = &pa->cfg;
	uint64_t extra = 0, depart, arrive;
	unsigned what;
	int act = -1;

	pa->st.sent++;
	if (f->n_rules) {
		act = rules_apply(f, p, &extra);
		if (act == FABRIC_RULE_DROP) {
			drop(f, p, &pa->st.drop_rule, "drop-rule");
			return;
		}
		if (act == FABRIC_RULE_TRIM) {
			trim_pkt(f, p, false);
			pa->st.trimmed++;
			trace_pkt(f, "trim-rule", p);
		}
	}
	if (c->blackhole) {
		drop(f, p, &pa->st.drop_blackhole, "drop-blackhole");
		return;
	}
	if (chance(f, c->loss)) {
		drop(f, p, &pa->st.drop_loss, "drop-loss");
		return;
	}
	if (!queue_admit(f, &pa->q, &c->q, p, &depart, &what)) {
		drop(f, p, &pa->st.drop_buffer, "drop-buffer");
		return;
	}
	if (what & QW_TRIM) {
		pa->st.trimmed++;
		trace_pkt(f, "trim", p);
	}
	if (what & QW_MARK) {
		pa->st.ecn_marked++;
		trace_pkt(f, "ce", p);
	}
	if (!(p->flags & PKT_TRIMMED) && (act == FABRIC_RULE_CORRUPT || chance(f, c->corrupt))) {
		corrupt_pkt(f, p);
		pa->st.corrupted++;
		trace_pkt(f, "corrupt", p);
	}
	arrive = depart + c->delay_ns + rand_upto(f, c->jitter_ns) + extra;
	if (chance(f, c->reorder)) {
		arrive += c->reorder_ns;
		pa->st.reordered++;
		trace_pkt(f, "reorder", p);
	}
	if (chance(f, c->dup)) {
		struct pkt *d = pkt_clone(f, p);

		if (d) {
			d->flags |= PKT_DUP;
			pa->st.duplicated++;
			trace_pkt(f, "dup", d);
			push(f, depart + c->delay_ns + rand_upto(f, c->jitter_ns) + extra,
			     EVK_ARRIVE, pkt_idx(f, d), 0);
		} else {
			f->nodes[p->src].st.dup_pool++;
		}
	}
	push(f, arrive, EVK_ARRIVE, pkt_idx(f, p), 0);
}

static void queue_poll(struct fabric *f, unsigned node)
{
	struct node *n = &f->nodes[node];

	if (!n->ops || n->poll_queued)
		return;
	n->poll_queued = true;
	push(f, f->now, EVK_POLL, node, 0);
}

/* Parse as the receiving host would and hand the packet on. */
static void deliver(struct fabric *f, struct pkt *p)
{
	struct node *n = &f->nodes[p->dst];
	struct path *pa = &f->paths[p->path];
	const uint8_t *b = pkt_buf(f, pkt_idx(f, p));
	struct mrcp_frame_view v;
	struct mrcp_rx rx;
	int rc;

	rc = mrcp_frame_parse(&n->cfg.rx, b, p->len, &v);
	if (rc == -EILSEQ) {
		pa->st.drop_corrupt++;
		drop(f, p, &n->st.rx_bad_icrc, "drop-icrc");
		return;
	}
	if (rc < 0) {
		drop(f, p, &n->st.rx_malformed, "drop-malformed");
		return;
	}
	pa->st.delivered++;
	n->st.rx_pkts++;
	n->st.rx_bytes += p->len;
	if (v.trim != MRCP_TRIM_NONE)
		n->st.rx_trimmed++;
	if (v.ecn == MRCP_ECN_CE)
		n->st.rx_ce++;
	trace_pkt(f, "deliver", p);

	memset(&rx, 0, sizeof(rx));
	rx.data = v.mrc;
	rx.len = v.mrc_len;
	rx.port = (uint8_t)(p->plane + 1);
	rx.ecn = v.ecn;
	rx.trim = (uint8_t)v.trim;
	rx.ev = v.ev;
	rx.src.family = v.l3 == MRCP_FRAME_IPV4 ? 4 : 6;
	memcpy(rx.src.a, v.src_ip, sizeof(rx.src.a));

	if (f->deliver_fn) {
		struct fabric_delivery d = {
			.now_ns = f->now, .sent_ns = p->sent_ns, .src = p->src, .dst = p->dst,
			.plane = (uint8_t)(p->plane + 1), .path = p->k,
			.dup = (p->flags & PKT_DUP) != 0, .rx = &rx, .view = &v,
			.frame = b, .frame_len = p->len,
		};
		f->deliver_fn(f->deliver_ctx, &d);
	}
	if (!n->ops) {
		pkt_free(f, p);
		return;
	}
	p->rx_off = (uint32_t)(v.mrc - b);
	p->rx_len = v.mrc_len;
	p->rx_ev = v.ev;
	p->rx_ecn = v.ecn;
	p->rx_trim = (uint8_t)v.trim;
	p->next = NONE;
	if (n->rx_head == NONE)
		n->rx_head = pkt_idx(f, p);
	else
		f->pkts[n->rx_tail].next = pkt_idx(f, p);
	n->rx_tail = pkt_idx(f, p);
	queue_poll(f, p->dst);
}

/* Reached the destination node's downlink (last-hop) queue. */
static void arrive(struct fabric *f, struct pkt *p)
{
	struct node *n = &f->nodes[p->dst];
	const struct fabric_queue_cfg *qc = &n->dlcfg[p->plane];
	uint64_t depart;
	unsigned what;

	if (qc->rate_bps == 0) {
		deliver(f, p);
		return;
	}
	if (!queue_admit(f, &n->dl[p->plane], qc, p, &depart, &what)) {
		drop(f, p, &n->st.dl_drop_buffer, "drop-dl-buffer");
		return;
	}
	if (what & QW_TRIM) {
		n->st.dl_trimmed++;
		trace_pkt(f, "dl-trim", p);
	}
	if (what & QW_MARK) {
		n->st.dl_ecn_marked++;
		trace_pkt(f, "dl-ce", p);
	}
	push(f, depart, EVK_DELIVER, pkt_idx(f, p), 0);
}

/* NIC backlog of @node's @plane, bytes (0 for an infinite port). */
static double nic_backlog(const struct fabric *f, const struct node *n, unsigned plane)
{
	uint64_t rate = n->cfg.port_bps[plane], now_ps = f->now * PS_PER_NS;

	if (rate == 0 || n->nic_busy_ps[plane] <= now_ps)
		return 0;
	return (double)(n->nic_busy_ps[plane] - now_ps) * (double)rate / (double)PS_PER_S_X8;
}

/* When the NIC backlog of @plane falls to tx_room_bytes, ns. */
static uint64_t nic_room_time(const struct node *n, unsigned plane)
{
	uint64_t room_ps = (uint64_t)((double)n->cfg.tx_room_bytes * (double)PS_PER_S_X8 /
				      (double)n->cfg.port_bps[plane]);
	uint64_t t_ps = n->nic_busy_ps[plane] > room_ps ? n->nic_busy_ps[plane] - room_ps : 0;

	return (t_ps + PS_PER_NS - 1) / PS_PER_NS;
}

static void nic_room_check(struct fabric *f, unsigned node, unsigned plane)
{
	struct node *n = &f->nodes[node];

	if (!n->cfg.tx_room_bytes || !n->ops || !n->ops->set_tx_room || n->no_room[plane])
		return;
	if (nic_backlog(f, n, plane) <= n->cfg.tx_room_bytes)
		return;
	n->no_room[plane] = true;
	n->st.tx_room_off++;
	if (f->trace_fn)
		trace(f, "room-off n%u p%u", node, plane + 1);
	n->ops->set_tx_room(n->ctx, (uint8_t)(plane + 1), false);
	push(f, max_u64(nic_room_time(n, plane), f->now + 1), EVK_ROOM,
	     node * FABRIC_MAX_PLANES + plane, 0);
}

static int route(const struct fabric *f, unsigned plane, const struct mrcp_ip *dst)
{
	for (unsigned i = 0; i < f->n_nodes; i++)
		if (ip_eq(&f->nodes[i].cfg.addr[plane], dst))
			return (int)i;
	return -1;
}

unsigned fabric_path_of(const struct fabric *f, unsigned src, unsigned dst, uint8_t plane, uint32_t ev)
{
	if (f->select_fn)
		return f->select_fn(f->select_ctx, src, dst, plane, ev, f->cfg.n_paths) %
		       f->cfg.n_paths;
	return mix32(ev ^ f->cfg.ecmp_salt) % f->cfg.n_paths;
}

int fabric_send(struct fabric *f, unsigned node, const struct mrcp_tx *tx)
{
	struct node *n;
	struct mrcp_frame_tx ftx;
	struct pkt *p;
	uint8_t *b, *m;
	size_t hl, mrc_len, payload = 0;
	unsigned plane;
	int dst, rc;

	if (node >= f->n_nodes)
		return -EINVAL;
	n = &f->nodes[node];
	if (tx->port < 1 || tx->port > f->cfg.n_planes || tx->n_seg > MRCP_TX_MAX_SEGS ||
	    tx->hdr_len > MRCP_TX_HDR_MAX) {
		n->st.tx_bad++;
		return -EINVAL;
	}
	plane = tx->port - 1u;
	dst = route(f, plane, &tx->dst);
	if (dst < 0) {
		n->st.tx_noroute++;
		return -EHOSTUNREACH;
	}
	if (tx->dst.family != n->cfg.addr[plane].family) {
		n->st.tx_bad++;
		return -EINVAL; /* IPv4 port to an IPv6 address or the reverse */
	}
	for (unsigned i = 0; i < tx->n_seg; i++)
		payload += tx->seg[i].len;
	mrc_len = tx->hdr_len + payload + tx->pad;

	ftx = n->ftx[plane];
	memcpy(ftx.dst_mac, f->nodes[dst].mac, 6);
	memcpy(ftx.dst_ip, tx->dst.a, sizeof(ftx.dst_ip));
	ftx.dscp = tx->dscp;
	ftx.ecn = tx->ecn;
	ftx.ev = tx->ev;
	ftx.ip_id = n->ip_id;
	hl = mrcp_frame_hdr_len(&ftx);
	if (hl + mrc_len + MRCP_ICRC_LEN > f->cfg.frame_bytes) {
		n->st.tx_bad++;
		return -EMSGSIZE;
	}
	p = pkt_alloc(f);
	if (!p) {
		n->st.tx_pool++;
		return -ENOBUFS;
	}
	b = pkt_buf(f, pkt_idx(f, p));
	m = b + hl;
	memcpy(m, tx->hdr, tx->hdr_len);
	m += tx->hdr_len;
	for (unsigned i = 0; i < tx->n_seg; i++) {
		if (tx->seg[i].len) {
			memcpy(m, tx->seg[i].ptr, tx->seg[i].len);
			m += tx->seg[i].len;
		}
	}
	memset(m, 0, tx->pad);
	rc = mrcp_frame_build(&ftx, b + hl, mrc_len, b, f->cfg.frame_bytes);
	if (rc < 0) {
		pkt_free(f, p);
		n->st.tx_bad++;
		return -EINVAL;
	}
	n->ip_id++;

	memset(p, 0, sizeof(*p));
	p->len = (uint32_t)rc;
	p->mrc_off = (uint16_t)hl;
	p->src = (uint8_t)node;
	p->dst = (uint8_t)dst;
	p->plane = (uint8_t)plane;
	p->k = (uint8_t)fabric_path_of(f, node, (unsigned)dst, tx->port, tx->ev);
	p->path = (uint32_t)path_index(f, node, (unsigned)dst, plane, p->k);
	p->dscp = tx->dscp;
	p->ecn = tx->ecn;
	p->l3 = (uint8_t)ftx.l3;
	p->opcode = b[hl];
	p->qpn = mrcp_get_be24(b + hl + 5);
	p->rtx = (b[hl + 8] & 0x20) != 0; /* BTH rtx (D10) */
	p->psn = mrcp_get_be24(b + hl + 9);
	p->sent_ns = f->now;
	n->st.tx_pkts++;
	n->st.tx_bytes += p->len;
	trace_pkt(f, "send", p);

	if (n->cfg.port_bps[plane] == 0) {
		path_stage(f, p);
	} else {
		uint64_t now_ps = f->now * PS_PER_NS;
		uint64_t ser = (uint64_t)p->len * PS_PER_S_X8 / n->cfg.port_bps[plane];

		n->nic_busy_ps[plane] = max_u64(n->nic_busy_ps[plane], now_ps) + ser;
		push(f, (n->nic_busy_ps[plane] + PS_PER_NS - 1) / PS_PER_NS, EVK_NIC_DONE,
		     pkt_idx(f, p), 0);
		nic_room_check(f, node, plane);
	}
	return 0;
}

/* ---- endpoints ---------------------------------------------------------------- */

static void timer_arm(struct fabric *f, unsigned node, uint64_t deadline)
{
	struct node *n = &f->nodes[node];

	/* An endpoint that reports work due now after being polled would spin
	 * at one instant; let time move on by 1 ns. */
	if (deadline != UINT64_MAX && deadline <= f->now)
		deadline = f->now + 1;
	if (deadline == n->timer_at)
		return;
	n->timer_gen++; /* any armed event is stale now */
	n->timer_at = deadline;
	if (deadline != UINT64_MAX)
		push(f, deadline, EVK_TIMER, node, n->timer_gen);
}

/* The end of the pause @n is in now, or 0 when it is not paused. */
static uint64_t pause_end(const struct fabric *f, const struct node *n)
{
	uint64_t start;

	if (n->pause_ns == 0 || f->now < n->pause_at)
		return 0;
	start = n->pause_at;
	if (n->pause_period != 0)
		start += (f->now - n->pause_at) / n->pause_period * n->pause_period;
	return f->now < start + n->pause_ns ? start + n->pause_ns : 0;
}

/* Hand over delivered packets, collect what the endpoint sends, re-arm. */
static void node_service(struct fabric *f, unsigned node)
{
	struct node *n = &f->nodes[node];
	unsigned polls, cnt = 0;
	uint64_t until = pause_end(f, n);

	if (until != 0) {
		/* paused (fabric_node_pause): nothing runs; one service at the
		 * end takes what arrived and what fell due */
		if (!n->poll_queued) {
			n->poll_queued = true;
			push(f, until, EVK_POLL, node, 0);
		}
		return;
	}
	n->st.polls++;
	if (f->trace_fn)
		trace(f, "poll n%u", node);
	while (n->rx_head != NONE) {
		unsigned k = 0;

		while (k < f->cfg.rx_burst && n->rx_head != NONE) {
			struct pkt *p = &f->pkts[n->rx_head];
			struct mrcp_rx *rx = &f->rxbuf[k];

			n->rx_head = p->next;
			rx->data = pkt_buf(f, pkt_idx(f, p)) + p->rx_off;
			rx->len = p->rx_len;
			rx->port = (uint8_t)(p->plane + 1);
			rx->ecn = p->rx_ecn;
			rx->trim = p->rx_trim;
			rx->ev = p->rx_ev;
			rx->src = f->nodes[p->src].cfg.addr[p->plane];
			f->rxpkt[k++] = pkt_idx(f, p);
		}
		n->ops->rx_burst(n->ctx, f->rxbuf, k, f->now);
		for (unsigned i = 0; i < k; i++)
			pkt_free(f, &f->pkts[f->rxpkt[i]]);
	}
	for (polls = 0; polls < f->cfg.max_polls; polls++) {
		cnt = n->ops->poll(n->ctx, f->now, f->txbuf, f->cfg.tx_burst);
		for (unsigned i = 0; i < cnt; i++)
			fabric_send(f, node, &f->txbuf[i]);
		if (cnt < f->cfg.tx_burst)
			break;
	}
	if (polls == f->cfg.max_polls)
		queue_poll(f, node); /* still busy: let other events at this time in */
	timer_arm(f, node, n->ops->next_deadline(n->ctx));
}

static void room_event(struct fabric *f, uint32_t arg)
{
	unsigned node = arg / FABRIC_MAX_PLANES, plane = arg % FABRIC_MAX_PLANES;
	struct node *n = &f->nodes[node];

	if (nic_backlog(f, n, plane) > n->cfg.tx_room_bytes) {
		push(f, max_u64(nic_room_time(n, plane), f->now + 1), EVK_ROOM, arg, 0);
		return;
	}
	n->no_room[plane] = false;
	if (f->trace_fn)
		trace(f, "room-on n%u p%u", node, plane + 1);
	n->ops->set_tx_room(n->ctx, (uint8_t)(plane + 1), true);
	queue_poll(f, node);
}

static void apply_to_path(struct fabric_path_cfg *c, const struct fabric_action *a)
{
	switch (a->op) {
	case FABRIC_ACT_BLACKHOLE:
		c->blackhole = a->on;
		break;
	case FABRIC_ACT_LOSS:
		c->loss = a->loss;
		break;
	case FABRIC_ACT_DELAY:
		c->delay_ns = a->delay_ns;
		break;
	case FABRIC_ACT_RATE:
		c->q.rate_bps = a->rate_bps;
		break;
	case FABRIC_ACT_CALL:
		break;
	}
}

static bool sel_ok(const struct fabric *f, const struct fabric_sel *s)
{
	return (s->src == FABRIC_ANY || (s->src >= 0 && s->src < f->cfg.max_nodes)) &&
	       (s->dst == FABRIC_ANY || (s->dst >= 0 && s->dst < f->cfg.max_nodes)) &&
	       (s->plane == FABRIC_ANY || (s->plane >= 1 && s->plane <= f->cfg.n_planes)) &&
	       (s->path == FABRIC_ANY || (s->path >= 0 && s->path < f->cfg.n_paths));
}

/* Call @fn on every path that @s selects (in both directions if s->both).
 * f->paths points at writable memory even through a const fabric, so
 * mutators and readers share this walker. */
static void sel_foreach(const struct fabric *f, const struct fabric_sel *s,
			void (*fn)(struct path *pa, void *arg), void *arg)
{
	unsigned nn = f->cfg.max_nodes;

	for (unsigned a = 0; a < nn; a++)
		for (unsigned b = 0; b < nn; b++) {
			bool fwd = (s->src == FABRIC_ANY || (unsigned)s->src == a) &&
				   (s->dst == FABRIC_ANY || (unsigned)s->dst == b);
			bool rev = s->both && (s->src == FABRIC_ANY || (unsigned)s->src == b) &&
				   (s->dst == FABRIC_ANY || (unsigned)s->dst == a);

			if (!fwd && !rev)
				continue;
			for (unsigned p = 0; p < f->cfg.n_planes; p++) {
				if (s->plane != FABRIC_ANY && (unsigned)s->plane != p + 1)
					continue;
				for (unsigned k = 0; k < f->cfg.n_paths; k++)
					if (s->path == FABRIC_ANY || (unsigned)s->path == k)
						fn(&f->paths[path_index(f, a, b, p, k)], arg);
			}
		}
}

static void action_fn(struct path *pa, void *arg)
{
	apply_to_path(&pa->cfg, arg);
}

static void action_event(struct fabric *f, uint32_t idx)
{
	/* Copy: a CALL may schedule more actions and move f->acts. */
	struct fabric_action a = f->acts[idx].a;

	if (f->trace_fn)
		trace(f, "action %u op %d", idx, (int)a.op);
	if (a.op == FABRIC_ACT_CALL)
		a.fn(a.ctx, f);
	else
		sel_foreach(f, &a.sel, action_fn, &a);
}

static void dispatch(struct fabric *f, const struct mrcp_heap_ent *e)
{
	struct node *n;

	switch (e->kind) {
	case EVK_NIC_DONE:
		path_stage(f, &f->pkts[e->arg]);
		break;
	case EVK_ARRIVE:
		arrive(f, &f->pkts[e->arg]);
		break;
	case EVK_DELIVER:
		deliver(f, &f->pkts[e->arg]);
		break;
	case EVK_POLL:
		f->nodes[e->arg].poll_queued = false;
		node_service(f, e->arg);
		break;
	case EVK_TIMER:
		n = &f->nodes[e->arg];
		if (e->val.u64 != n->timer_gen)
			break; /* superseded */
		n->timer_at = UINT64_MAX;
		node_service(f, e->arg);
		break;
	case EVK_ROOM:
		room_event(f, e->arg);
		break;
	case EVK_ACTION:
		action_event(f, e->arg);
		break;
	}
}

/* ---- public: time ----------------------------------------------------------------- */

uint64_t fabric_now(const struct fabric *f)
{
	return f->now;
}

uint64_t fabric_next_event(const struct fabric *f)
{
	return mrcp_heap_next_t(&f->evq);
}

uint64_t fabric_run_until(struct fabric *f, uint64_t t_ns)
{
	uint64_t n = 0;

	struct mrcp_heap_ent e;

	while (f->evq.n && f->evq.ent[0].t <= t_ns) {
		mrcp_heap_pop(&f->evq, &e);
		f->now = e.t;
		dispatch(f, &e);
		n++;
	}
	if (t_ns > f->now)
		f->now = t_ns;
	return n;
}

int fabric_run_while(struct fabric *f, bool (*pred)(void *ctx), void *ctx, uint64_t deadline_ns)
{
	for (;;) {
		struct mrcp_heap_ent e;

		if (!pred(ctx))
			return 0;
		if (!f->evq.n || f->evq.ent[0].t > deadline_ns) {
			if (deadline_ns > f->now)
				f->now = deadline_ns;
			return -ETIMEDOUT;
		}
		mrcp_heap_pop(&f->evq, &e);
		f->now = e.t;
		dispatch(f, &e);
	}
}

int fabric_node_pause(struct fabric *f, unsigned node, uint64_t at_ns, uint64_t duration_ns, uint64_t period_ns)
{
	struct node *n;

	if (node >= f->n_nodes || duration_ns == 0 || (period_ns != 0 && period_ns <= duration_ns))
		return -EINVAL;
	n = &f->nodes[node];
	n->pause_at = at_ns;
	n->pause_ns = duration_ns;
	n->pause_period = period_ns;
	if (f->trace_fn)
		trace(f, "pause n%u at %llu for %llu every %llu", node, (unsigned long long)at_ns,
		      (unsigned long long)duration_ns, (unsigned long long)period_ns);
	return 0;
}

void fabric_kick(struct fabric *f, unsigned node)
{
	if (node < f->n_nodes)
		queue_poll(f, node);
}

uint64_t fabric_seed_derive(const struct fabric *f, uint64_t salt)
{
	return splitmix64(f->seed ^ splitmix64(salt));
}

/* ---- public: setup ---------------------------------------------------------------- */

void fabric_cfg_defaults(struct fabric_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->max_nodes = FABRIC_MAX_NODES;
	c->n_planes = 1;
	c->n_paths = 1;
	c->family = 6;
	c->pool_pkts = 16384;
	/* IPv6 headers + the longest MRC header + MTU payload + pad + ICRC,
	 * rounded up to 64. */
	c->frame_bytes = (MRCP_ETH_HLEN + MRCP_IPV6_HLEN + MRCP_UDP_HLEN + MRCP_TX_HDR_MAX +
			  MRCP_PAYLOAD_MAX + 3 + MRCP_ICRC_LEN + 63) / 64 * 64;
	c->path.delay_ns = 1000;
	c->path.q.ecn_pmax = 1.0;
	c->downlink.lasthop = true;
	c->downlink.ecn_pmax = 1.0;
	c->prio_dscp_mask = 1ull << 46;               /* D23 CONTROL */
	c->trimmable_dscp_mask = 1ull << 10 | 1ull << 12; /* TRIMMABLE, _RETX */
	c->dscp_trimmed = 11;
	c->dscp_trimmed_lasthop = 13;
	c->tx_burst = 32;
	c->rx_burst = 32;
	c->max_polls = 16;
}

void fabric_node_cfg_defaults(struct fabric_node_cfg *nc)
{
	memset(nc, 0, sizeof(*nc));
	nc->udp_port = MRCP_UDP_PORT_DEFAULT;
	nc->ev_layout = MRCP_EV_LO16_SPORT;
	nc->ttl = 64;
	mrcp_frame_rx_cfg_defaults(&nc->rx);
}

int fabric_create(const struct fabric_cfg *c, uint64_t seed, struct fabric **out)
{
	struct fabric *f;
	size_t n_paths;
	uint32_t evq_cap;

	if (c->max_nodes < 1 || c->max_nodes > FABRIC_MAX_NODES || c->n_planes < 1 ||
	    c->n_planes > FABRIC_MAX_PLANES || c->n_paths < 1 || c->n_paths > FABRIC_MAX_PATHS ||
	    (c->family != 4 && c->family != 6) || c->pool_pkts < 1 ||
	    c->frame_bytes < MRCP_ETH_HLEN + MRCP_IPV6_HLEN + MRCP_UDP_HLEN + 64 ||
	    c->tx_burst < 1 || c->tx_burst > BURST_MAX || c->rx_burst < 1 ||
	    c->rx_burst > BURST_MAX || c->max_polls < 1 || c->dscp_trimmed > 63 ||
	    c->dscp_trimmed_lasthop > 63)
		return -EINVAL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->cfg = *c;
	f->seed = seed;
	mrcp_prng_seed(&f->prng, seed);
	n_paths = (size_t)c->max_nodes * c->max_nodes * c->n_planes * c->n_paths;
	f->paths = calloc(n_paths, sizeof(*f->paths));
	f->pkts = calloc(c->pool_pkts, sizeof(*f->pkts));
	f->bufs = malloc((size_t)c->pool_pkts * c->frame_bytes);
	f->free_stack = malloc((size_t)c->pool_pkts * sizeof(*f->free_stack));
	evq_cap = c->pool_pkts + 4u * FABRIC_MAX_NODES + 64u;
	mrcp_heap_init(&f->evq, malloc((size_t)evq_cap * sizeof(struct mrcp_heap_ent)), evq_cap);
	if (!f->paths || !f->pkts || !f->bufs || !f->free_stack || !f->evq.ent) {
		fabric_destroy(f);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n_paths; i++)
		f->paths[i].cfg = c->path;
	/* Stack order: packet 0 is taken first. */
	for (uint32_t i = 0; i < c->pool_pkts; i++)
		f->free_stack[i] = c->pool_pkts - 1 - i;
	f->free_n = c->pool_pkts;
	*out = f;
	return 0;
}

void fabric_destroy(struct fabric *f)
{
	if (!f)
		return;
	free(f->paths);
	free(f->pkts);
	free(f->bufs);
	free(f->free_stack);
	free(f->evq.ent);
	free(f->rules);
	free(f->acts);
	free(f);
}

static void auto_addr(struct mrcp_ip *ip, uint8_t family, unsigned node, unsigned plane1)
{
	memset(ip, 0, sizeof(*ip));
	ip->family = family;
	if (family == 4) {
		ip->a[0] = 10;
		ip->a[1] = (uint8_t)plane1;
		ip->a[3] = (uint8_t)(node + 1);
	} else {
		ip->a[0] = 0xFD;
		mrcp_put_be16(ip->a + 6, (uint16_t)plane1);
		ip->a[15] = (uint8_t)(node + 1);
	}
}

int fabric_add_node(struct fabric *f, const struct fabric_node_cfg *nc)
{
	struct fabric_node_cfg def;
	unsigned id = f->n_nodes;
	struct node *n;

	if (id >= f->cfg.max_nodes)
		return -ENOSPC;
	if (!nc) {
		fabric_node_cfg_defaults(&def);
		nc = &def;
	}
	n = &f->nodes[id];
	memset(n, 0, sizeof(*n));
	n->cfg = *nc;
	for (unsigned p = 0; p < f->cfg.n_planes; p++) {
		struct mrcp_ip *a = &n->cfg.addr[p];

		if (a->family == 0)
			auto_addr(a, f->cfg.family, id, p + 1);
		else if (a->family != 4 && a->family != 6)
			return -EINVAL;
		if (route(f, p, a) >= 0)
			return -EINVAL; /* another node has it */
	}
	n->mac[0] = 0x02; /* locally administered */
	n->mac[4] = (uint8_t)id;
	for (unsigned p = 0; p < f->cfg.n_planes; p++) {
		struct mrcp_frame_tx *t = &n->ftx[p];

		mrcp_frame_tx_defaults(t);
		memcpy(t->src_mac, n->mac, 6);
		t->src_mac[5] = (uint8_t)(p + 1);
		t->l3 = n->cfg.addr[p].family == 4 ? MRCP_FRAME_IPV4 : MRCP_FRAME_IPV6;
		memcpy(t->src_ip, n->cfg.addr[p].a, sizeof(t->src_ip));
		t->ttl = n->cfg.ttl;
		t->ev_layout = n->cfg.ev_layout;
		t->udp_dport = n->cfg.udp_port;
		n->dlcfg[p] = f->cfg.downlink;
	}
	n->timer_at = UINT64_MAX;
	n->rx_head = n->rx_tail = NONE;
	f->n_nodes++;
	return (int)id;
}

int fabric_node_attach(struct fabric *f, unsigned node,
		       const struct fabric_endpoint_ops *ops, void *ctx)
{
	struct node *n;

	if (node >= f->n_nodes || !ops || !ops->rx_burst || !ops->poll || !ops->next_deadline)
		return -EINVAL;
	n = &f->nodes[node];
	if (n->ops)
		return -EBUSY;
	n->ops = ops;
	n->ctx = ctx;
	queue_poll(f, node);
	return 0;
}

const struct mrcp_ip *fabric_node_addr(const struct fabric *f, unsigned node, uint8_t plane)
{
	if (node >= f->n_nodes || plane < 1 || plane > f->cfg.n_planes)
		return NULL;
	return &f->nodes[node].cfg.addr[plane - 1];
}

const struct fabric_cfg *fabric_cfg_get(const struct fabric *f)
{
	return &f->cfg;
}

const struct fabric_node_cfg *fabric_node_cfg_get(const struct fabric *f, unsigned node)
{
	return node < f->n_nodes ? &f->nodes[node].cfg : NULL;
}

unsigned fabric_n_nodes(const struct fabric *f)
{
	return f->n_nodes;
}

struct fabric_path_cfg *fabric_path_cfg(struct fabric *f, unsigned src, unsigned dst,
					uint8_t plane, unsigned path)
{
	if (src >= f->cfg.max_nodes || dst >= f->cfg.max_nodes || plane < 1 ||
	    plane > f->cfg.n_planes || path >= f->cfg.n_paths)
		return NULL;
	return &f->paths[path_index(f, src, dst, plane - 1u, path)].cfg;
}

struct fabric_queue_cfg *fabric_downlink_cfg(struct fabric *f, unsigned node, uint8_t plane)
{
	if (node >= f->n_nodes || plane < 1 || plane > f->cfg.n_planes)
		return NULL;
	return &f->nodes[node].dlcfg[plane - 1];
}

struct set_ctx {
	struct fabric_path_cfg cfg;
	int n;                    /* paths set */
};

static void set_fn(struct path *pa, void *arg)
{
	struct set_ctx *sc = arg;

	pa->cfg = sc->cfg;
	sc->n++;
}

int fabric_path_set(struct fabric *f, const struct fabric_sel *sel, const struct fabric_path_cfg *pc)
{
	struct set_ctx sc = {.cfg = *pc, .n = 0};

	if (!sel_ok(f, sel))
		return -EINVAL;
	sel_foreach(f, sel, set_fn, &sc);
	return sc.n;
}

void fabric_set_path_select(struct fabric *f, fabric_path_select_fn fn, void *ctx)
{
	f->select_fn = fn;
	f->select_ctx = ctx;
}

int fabric_schedule(struct fabric *f, uint64_t t_ns, const struct fabric_action *a)
{
	if (t_ns < f->now || a->op < FABRIC_ACT_BLACKHOLE || a->op > FABRIC_ACT_CALL)
		return -EINVAL;
	if (a->op == FABRIC_ACT_CALL ? !a->fn : !sel_ok(f, &a->sel))
		return -EINVAL;
	if (f->n_acts == f->cap_acts) {
		unsigned cap = f->cap_acts ? 2 * f->cap_acts : 16;
		struct sched *s = realloc(f->acts, cap * sizeof(*s));

		if (!s)
			return -ENOMEM;
		f->acts = s;
		f->cap_acts = cap;
	}
	f->acts[f->n_acts].t = t_ns;
	f->acts[f->n_acts].a = *a;
	push(f, t_ns, EVK_ACTION, f->n_acts, 0);
	f->n_acts++;
	return 0;
}

int fabric_rule_add(struct fabric *f, const struct fabric_rule *r)
{
	if (r->action > FABRIC_RULE_DELAY || r->match >= FABRIC_M_DATA << 1)
		return -EINVAL;
	if (f->n_rules == f->cap_rules) {
		unsigned cap = f->cap_rules ? 2 * f->cap_rules : 8;
		struct rule *ru = realloc(f->rules, cap * sizeof(*ru));

		if (!ru)
			return -ENOMEM;
		f->rules = ru;
		f->cap_rules = cap;
	}
	memset(&f->rules[f->n_rules], 0, sizeof(f->rules[0]));
	f->rules[f->n_rules].r = *r;
	return (int)f->n_rules++;
}

uint64_t fabric_rule_hits(const struct fabric *f, int id)
{
	if (id < 0 || (unsigned)id >= f->n_rules)
		return 0;
	return f->rules[id].hits;
}

void fabric_set_deliver_hook(struct fabric *f, fabric_deliver_fn fn, void *ctx)
{
	f->deliver_fn = fn;
	f->deliver_ctx = ctx;
}

void fabric_set_trace(struct fabric *f, fabric_trace_fn fn, void *ctx)
{
	f->trace_fn = fn;
	f->trace_ctx = ctx;
}

/* ---- public: observation --------------------------------------------------------- */

const struct fabric_path_stats *fabric_path_stats(const struct fabric *f, unsigned src,
						  unsigned dst, uint8_t plane, unsigned path)
{
	if (src >= f->cfg.max_nodes || dst >= f->cfg.max_nodes || plane < 1 ||
	    plane > f->cfg.n_planes || path >= f->cfg.n_paths)
		return NULL;
	return &f->paths[path_index(f, src, dst, plane - 1u, path)].st;
}

static void sum_fn(struct path *pa, void *arg)
{
	struct fabric_path_stats *out = arg;

#define X(n, d) out->n += pa->st.n;
	FABRIC_PATH_COUNTERS(X)
#undef X
}

void fabric_path_stats_sum(const struct fabric *f, const struct fabric_sel *sel,
			   struct fabric_path_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!sel_ok(f, sel))
		return;
	sel_foreach(f, sel, sum_fn, out);
}

const struct fabric_node_stats *fabric_node_stats(const struct fabric *f, unsigned node)
{
	return node < f->n_nodes ? &f->nodes[node].st : NULL;
}

uint32_t fabric_pkts_in_flight(const struct fabric *f)
{
	return f->cfg.pool_pkts - f->free_n;
}
