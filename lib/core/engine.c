/* engine.c - the engine instance: configuration, pools, memory regions, the
 * completion / event / control queues, receive dispatch by opcode and DestQP
 * (D7), and the poll loop (timers, then control, then data round-robin).
 * The protocol itself lives in req.c, resp.c and ep.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"

void mrcp_engine_config_defaults(struct mrcp_engine_config *c)
{
	memset(c, 0, sizeof(*c));
	c->seed = 1;
	c->max_qps = 256;
	c->max_mrs = 1024;
	c->max_pds = 1024;
	c->max_peers = 64;
	c->cq_size = 4096;
	c->event_queue_size = 1024;
	c->ctl_queue_size = 4096;
	c->n_ports = 1;
	for (int i = 0; i < MRCP_MAX_PORTS; i++)
		c->port_bps[i] = 100000000000ull;
	c->node_addr.family = 4;
	c->mtu = 4096;
	c->udp_port = MRCP_UDP_PORT_DEFAULT;
	mrcp_dscp_map_defaults(&c->dscp);
	c->trimming_fabric = false;
	c->sack_every = 4;               /* D28 */
	c->base_rtt_ns = 12000;          /* §6.4 */
	c->timeout = 8;                  /* D32 */
	c->linear_cnt = 7;
	c->exp_cnt = 12;
	c->mpr = 8;                      /* D25 */
	c->max_wimm = 128;
	c->sq_depth = 1024;
	c->rq_depth = 1024;
	c->ev.n_active = 128;            /* D41 */
	c->ev.n_backup = 64;
	memcpy(c->cc, "nscc", 5);        /* D52 */
	c->place_payload = true;
	c->timer_slots = 4096;
}

static int config_check(const struct mrcp_engine_config *c)
{
	if (c->n_ports == 0 || c->n_ports > MRCP_MAX_PORTS)
		return -EINVAL;
	if (c->mtu != 1024 && c->mtu != 2048 && c->mtu != 4096)
		return -EINVAL; /* D3 */
	if (c->max_qps == 0 || c->max_qps > (1u << 16) || c->max_mrs == 0 || c->max_mrs > (1u << 24) ||
	    c->max_pds > 0xFFFF)
		return -EINVAL;
	if (c->shard >= MRCP_SHARDS)
		return -EINVAL; /* D63 */
	if (c->max_peers == 0 || c->cq_size == 0 || c->event_queue_size == 0 || c->ctl_queue_size == 0)
		return -EINVAL;
	if (c->timeout > 24 || c->linear_cnt > 7 || c->exp_cnt > 25 || c->mpr == 0)
		return -EINVAL; /* §4.5, §4.1 */
	if (c->sack_every == 0 || c->sq_depth == 0 || c->rq_depth == 0 || c->max_wimm == 0)
		return -EINVAL;
	if (c->timer_slots != 0 && (c->timer_slots < 64 || c->timer_slots > (1u << 20) ||
				    (c->timer_slots & (c->timer_slots - 1)) != 0))
		return -EINVAL;
	if (mrcp_dscp_map_check(&c->dscp) != 0)
		return -EINVAL;
	return 0;
}

static void engine_fire(void *ctx, struct mrcp_timer *t);

int mrcp_engine_create(const struct mrcp_engine_config *c, struct mrcp_engine **out)
{
	struct mrcp_engine *e;
	int rc;

	rc = config_check(c);
	if (rc != 0)
		return rc;
	e = calloc(1, sizeof(*e));
	if (e == NULL)
		return -ENOMEM;
	e->cfg = *c;
	if (e->cfg.cc[0] == '\0')
		memcpy(e->cfg.cc, "nscc", 5);
	mrcp_prng_seed(&e->prng, c->seed);
	/* D68: keys come from their own stream, so registering memory draws
	 * nothing from the PRNG every protocol choice replays from */
	mrcp_prng_seed(&e->key_prng, c->key_seed ? c->key_seed : c->seed ^ 0x6b65792d73747265ull);
	while ((1u << e->mr_slot_bits) < c->max_mrs)
		e->mr_slot_bits++;
	e->mr_slot_mask = (1u << e->mr_slot_bits) - 1;
	rc = mrcp_cc_register_builtin(&e->ccreg);
	if (rc != 0)
		goto fail;
	if (mrcp_cc_find(&e->ccreg, e->cfg.cc) == NULL) {
		rc = -EINVAL;
		goto fail;
	}
	e->qp_slot_bits = QPN_SLOT_BITS_MIN;
	while ((1u << e->qp_slot_bits) < c->max_qps)
		e->qp_slot_bits++;
	e->qp_slot_mask = (1u << e->qp_slot_bits) - 1;
	e->qps = calloc(1u << e->qp_slot_bits, sizeof(*e->qps));
	e->mrs = calloc(c->max_mrs, sizeof(*e->mrs));
	e->peers = calloc(c->max_peers, sizeof(*e->peers));
	e->cq_cap = mrcp__pow2_at_least(c->cq_size);
	e->cq_mask = mrcp__first_size(c, e->cq_cap) - 1;
	e->cq = calloc(e->cq_mask + 1, sizeof(*e->cq));
	e->evq_cap = mrcp__pow2_at_least(c->event_queue_size);
	e->evq_mask = mrcp__first_size(c, e->evq_cap) - 1;
	e->evq = calloc(e->evq_mask + 1, sizeof(*e->evq));
	e->ctl_cap = mrcp__pow2_at_least(c->ctl_queue_size);
	e->ctl_mask = mrcp__first_size(c, e->ctl_cap) - 1;
	e->ctl = calloc(e->ctl_mask + 1, sizeof(*e->ctl));
	if (e->qps == NULL || e->mrs == NULL || e->peers == NULL || e->cq == NULL ||
	    e->evq == NULL || e->ctl == NULL) {
		rc = -ENOMEM;
		goto fail;
	}
	/* 1.024 us ticks; 4096 slots: 4.2 ms per round */
	rc = mrcp_timer_wheel_init(&e->wheel, 10, c->timer_slots ? c->timer_slots : 4096, 0);
	if (rc != 0)
		goto fail;
	e->qpn_seq = 1;
	e->ready_head = e->ready_tail = NIL;
	e->burst_head = NIL;
	e->port_room = e->port_up = (c->n_ports >= 32) ? ~0u : ((1u << c->n_ports) - 1);
	e->ep_timer.owner = 0;
	*out = e;
	return 0;
fail:
	mrcp_engine_destroy(e);
	return rc;
}

void mrcp_engine_destroy(struct mrcp_engine *e)
{
	if (e == NULL)
		return;
	if (e->qps != NULL) {
		for (uint32_t i = 0; i < (1u << e->qp_slot_bits); i++)
			if (e->qps[i].used)
				mrcp__qp_free(e, &e->qps[i]);
	}
	if (e->peers != NULL) {
		for (uint32_t i = 0; i < e->cfg.max_peers; i++) {
			struct cc_inst *cc = &e->peers[i].cc;
			if (cc->priv != NULL) {
				if (cc->ops->release != NULL)
					cc->ops->release(cc->priv);
				free(cc->priv);
			}
		}
	}
	mrcp_timer_wheel_fini(&e->wheel);
	free(e->peer_hash);
	free(e->qps);
	free(e->mrs);
	free(e->pds);
	free(e->peers);
	free(e->cq);
	free(e->evq);
	free(e->ctl);
	free(e);
}

/* ---- protection domains (D67) ----------------------------------------------- */

#define PD_SLOT_MASK 0xFFFFu
#define PD_GEN_SHIFT 16

int mrcp__pd_slot(const struct mrcp_engine *e, uint32_t pd)
{
	uint32_t s = pd & PD_SLOT_MASK;

	if (pd == MRCP_PD_DEFAULT)
		return 0;
	if (s == 0 || s > e->cfg.max_pds || e->pds == NULL || !e->pds[s].used ||
	    e->pds[s].gen != pd >> PD_GEN_SHIFT)
		return -1;
	return (int)s;
}

int mrcp_pd_alloc(struct mrcp_engine *e, uint32_t *pd)
{
	/* the table is made when first needed: an engine that only ever uses
	 * the default PD (mrc-sim, the benchmarks) carries none */
	if (e->pds == NULL && e->cfg.max_pds != 0) {
		e->pds = calloc((size_t)e->cfg.max_pds + 1, sizeof(*e->pds));
		if (e->pds == NULL)
			return -ENOMEM;
	}
	for (uint32_t s = 1; s <= e->cfg.max_pds; s++) {
		struct eng_pd *p = &e->pds[s];

		if (p->used)
			continue;
		p->used = true;
		p->gen++;
		p->n_mrs = p->n_qps = 0;
		*pd = (uint32_t)p->gen << PD_GEN_SHIFT | s;
		return 0;
	}
	return -ENOSPC;
}

int mrcp_pd_free(struct mrcp_engine *e, uint32_t pd)
{
	int s = mrcp__pd_slot(e, pd);

	if (s < 0)
		return -ENOENT;
	if (s == 0)
		return -EINVAL;
	if (e->pds[s].n_mrs != 0 || e->pds[s].n_qps != 0)
		return -EBUSY;
	e->pds[s].used = false;
	return 0;
}

/* ---- memory regions ------------------------------------------------------- */

/* D68: a fresh key for slot @s: random bits from the key stream above the
 * slot bits, never all zero and never the slot's previous key, so a packet
 * or SGE carrying the key of a deregistered region misses at once. */
static uint32_t key_draw(struct mrcp_engine *e, uint32_t s, uint32_t old)
{
	uint32_t tag_mask = ~((1u << e->mr_slot_bits) - 1), key;

	do
		key = ((uint32_t)(mrcp_prng_next(&e->key_prng) >> 32) & tag_mask) | s;
	while ((key & tag_mask) == 0 || key == old);
	return key;
}

int mrcp_mr_reg_pd(struct mrcp_engine *e, uint32_t pd, uint64_t va, uint64_t len, void *host,
		   uint32_t access, uint32_t *lkey, uint32_t *rkey)
{
	int ps = mrcp__pd_slot(e, pd);

	if (len == 0 || host == NULL || (access & ~(MRCP_ACCESS_LOCAL_WRITE | MRCP_ACCESS_REMOTE_WRITE)) != 0 ||
	    va + len < va)
		return -EINVAL;
	if (ps < 0)
		return -ENOENT;
	/* slots in rotation, as QPNs (D60): a freed slot is taken again last */
	for (uint32_t i = 0; i < e->cfg.max_mrs; i++) {
		uint32_t s = (e->mr_rr + i) % e->cfg.max_mrs;
		struct eng_mr *m = &e->mrs[s];

		if (m->used)
			continue;
		e->mr_rr = s + 1;
		m->used = true;
		m->va = va;
		m->len = len;
		m->host = host;
		m->access = access;
		m->refs = 0;
		m->pd = (uint16_t)ps;
		m->key = key_draw(e, s, m->key);
		if (ps != 0)
			e->pds[ps].n_mrs++;
		*lkey = m->key;
		*rkey = m->key;
		return 0;
	}
	return -ENOSPC;
}

int mrcp_mr_reg(struct mrcp_engine *e, uint64_t va, uint64_t len, void *host,
		uint32_t access, uint32_t *lkey, uint32_t *rkey)
{
	return mrcp_mr_reg_pd(e, MRCP_PD_DEFAULT, va, len, host, access, lkey, rkey);
}

int mrcp_mr_dereg(struct mrcp_engine *e, uint32_t lkey)
{
	struct eng_mr *m = mrcp__mr_lookup(e, lkey);

	if (m == NULL)
		return -ENOENT;
	if (m->refs != 0)
		return -EBUSY;
	if (m->pd != 0)
		e->pds[m->pd].n_mrs--;
	m->used = false; /* the key misses from now on; key_draw never reissues it next */
	return 0;
}

/* ---- queues ------------------------------------------------------------------ */

void *mrcp__ring_grow(void *buf, uint32_t *mask, uint32_t head, uint32_t tail, size_t esz, uint32_t cap)
{
	uint32_t n = *mask + 1, nn = 2 * n;
	uint8_t *nb;

	if (n >= cap)
		return NULL;
	nb = malloc((size_t)nn * esz);
	if (nb == NULL)
		return NULL;
	for (uint32_t i = head; i != tail; i++)
		memcpy(nb + (size_t)(i & (nn - 1)) * esz, (const uint8_t *)buf + (size_t)(i & *mask) * esz, esz);
	free(buf);
	*mask = nn - 1;
	return nb;
}

/* ring_room_cq() and friends: is there room for one more entry in the ring
 * (it holds at most its _cap), its storage doubled first if it is full? */
#define RING_ROOM_FN(name)                                                                      \
	static bool ring_room_##name(struct mrcp_engine *e)                                     \
	{                                                                                       \
		uint32_t n = e->name##_tail - e->name##_head;                                   \
		void *nb;                                                                       \
                                                                                                \
		if (n >= e->name##_cap)                                                         \
			return false;                                                           \
		if (n <= e->name##_mask)                                                        \
			return true;                                                            \
		nb = mrcp__ring_grow(e->name, &e->name##_mask, e->name##_head, e->name##_tail, \
				     sizeof(*e->name), e->name##_cap);                          \
		if (nb == NULL)                                                                 \
			return false;                                                           \
		e->name = nb;                                                                   \
		return true;                                                                    \
	}
RING_ROOM_FN(cq)
RING_ROOM_FN(evq)
RING_ROOM_FN(ctl)
#undef RING_ROOM_FN

bool mrcp__cq_push(struct mrcp_engine *e, const struct mrcp_wc *wc)
{
	if (!ring_room_cq(e)) {
		e->c.cq_overflow++;
		e->cq_blocked = true;
		return false;
	}
	e->cq[e->cq_tail++ & e->cq_mask] = *wc;
	return true;
}

unsigned mrcp_poll_cq(struct mrcp_engine *e, struct mrcp_wc *wc, unsigned max)
{
	unsigned n = 0;

	while (n < max && e->cq_head != e->cq_tail)
		wc[n++] = e->cq[e->cq_head++ & e->cq_mask];
	if (n != 0 && e->cq_blocked) {
		/* room again: QPs whose completions were held back can finish */
		e->cq_blocked = false;
		for (uint32_t i = 0; i < (1u << e->qp_slot_bits); i++) {
			if (!e->qps[i].used)
				continue;
			if (e->qps[i].state == MRCP_QPS_ERROR) {
				mrcp__qp_flush(e, &e->qps[i], MRCP_WC_FLUSH_ERR);
				continue;
			}
			if (e->qps[i].sq_head != e->qps[i].sq_seg)
				mrcp__req_complete(e, &e->qps[i]);
			mrcp__resp_release(e, &e->qps[i]);
		}
	}
	return n;
}

void mrcp__event_push(struct mrcp_engine *e, const struct mrcp_event *ev)
{
	if (!ring_room_evq(e)) {
		e->c.events_dropped++;
		return;
	}
	e->evq[e->evq_tail++ & e->evq_mask] = *ev;
}

unsigned mrcp_poll_events(struct mrcp_engine *e, struct mrcp_event *ev, unsigned max)
{
	unsigned n = 0;

	while (n < max && e->evq_head != e->evq_tail)
		ev[n++] = e->evq[e->evq_head++ & e->evq_mask];
	return n;
}

struct mrcp_tx *mrcp__ctl_alloc(struct mrcp_engine *e)
{
	struct mrcp_tx *tx;

	if (!ring_room_ctl(e)) {
		e->c.ctl_dropped++;
		return NULL;
	}
	tx = &e->ctl[e->ctl_tail++ & e->ctl_mask];
	memset(tx, 0, offsetof(struct mrcp_tx, seg));
	tx->n_seg = 0;
	tx->payload_len = 0;
	tx->pad = 0;
	tx->rtx = false;
	tx->ecn = MRCP_ECN_NOT_ECT; /* D9 */
	tx->dscp = e->cfg.dscp.dscp[MRCP_DSCP_CLASS_CONTROL];
	return tx;
}

/* ---- helpers ---------------------------------------------------------------- */

/* Is @addr @p's node address or one of its port addresses? */
static bool peer_has(const struct peer *p, const struct mrcp_ip *addr)
{
	if (memcmp(&p->node, addr, sizeof(*addr)) == 0)
		return true;
	for (unsigned k = 0; k < p->n_ports; k++)
		if (memcmp(&p->port_addr[k], addr, sizeof(*addr)) == 0)
			return true;
	return false;
}

/* The peer at the lowest slot with @addr as its node or a port address. */
static struct peer *peer_scan(struct mrcp_engine *e, const struct mrcp_ip *addr)
{
	for (uint32_t i = 0; i < e->peers_hw; i++)
		if (e->peers[i].used && peer_has(&e->peers[i], addr))
			return &e->peers[i];
	return NULL;
}

static uint32_t addr_hash(const struct mrcp_ip *a)
{
	const uint8_t *b = (const uint8_t *)a;
	uint32_t h = 2166136261u; /* FNV-1a */

	for (size_t i = 0; i < sizeof(*a); i++)
		h = (h ^ b[i]) * 16777619u;
	return h;
}

/* Index @addr -> @slot unless an address already maps (to a lower slot:
 * slots are taken in order, so the scan would find that one first). */
static void peer_hash_put(struct mrcp_engine *e, const struct mrcp_ip *addr, uint32_t slot)
{
	uint32_t h;

	for (h = addr_hash(addr) & e->peer_hash_mask; e->peer_hash[h] != 0; h = (h + 1) & e->peer_hash_mask)
		if (peer_has(&e->peers[e->peer_hash[h] - 1], addr))
			return;
	e->peer_hash[h] = slot + 1;
	e->peer_keys++;
}

void mrcp__peer_added(struct mrcp_engine *e, struct peer *p)
{
	uint32_t slot = (uint32_t)(p - e->peers);

	if (slot + 1 > e->peers_hw)
		e->peers_hw = slot + 1;
	if (e->peer_hash != NULL && 2 * (e->peer_keys + 1u + p->n_ports) > e->peer_hash_mask + 1) {
		free(e->peer_hash);
		e->peer_hash = NULL; /* rebuilt below, bigger */
	}
	if (e->peer_hash == NULL) {
		uint32_t keys = 0, size = 64;

		for (uint32_t i = 0; i < e->peers_hw; i++)
			if (e->peers[i].used)
				keys += 1u + e->peers[i].n_ports;
		while (size < 4 * keys)
			size *= 2;
		e->peer_hash = calloc(size, sizeof(*e->peer_hash));
		if (e->peer_hash == NULL)
			return; /* finds scan */
		e->peer_hash_mask = size - 1;
		e->peer_keys = 0;
		for (uint32_t i = 0; i < e->peers_hw; i++) {
			const struct peer *q = &e->peers[i];

			if (!q->used)
				continue;
			peer_hash_put(e, &q->node, i);
			for (unsigned k = 0; k < q->n_ports; k++)
				peer_hash_put(e, &q->port_addr[k], i);
		}
		return;
	}
	peer_hash_put(e, &p->node, slot);
	for (unsigned k = 0; k < p->n_ports; k++)
		peer_hash_put(e, &p->port_addr[k], slot);
}

struct peer *mrcp__peer_find(struct mrcp_engine *e, const struct mrcp_ip *addr)
{
	if (e->peer_hash == NULL)
		return peer_scan(e, addr);
	for (uint32_t h = addr_hash(addr) & e->peer_hash_mask; e->peer_hash[h] != 0;
	     h = (h + 1) & e->peer_hash_mask)
		if (peer_has(&e->peers[e->peer_hash[h] - 1], addr))
			return &e->peers[e->peer_hash[h] - 1];
	return NULL;
}

/* ---- ready list and timers --------------------------------------------------- */

void mrcp__qp_ready(struct mrcp_engine *e, struct qp *qp)
{
	if (qp->in_ready || qp->state != MRCP_QPS_RTS)
		return;
	qp->in_ready = true;
	qp->ready_next = NIL;
	qp->ready_prev = e->ready_tail;
	if (e->ready_tail != NIL)
		e->qps[e->ready_tail].ready_next = qp->slot;
	else
		e->ready_head = qp->slot;
	e->ready_tail = qp->slot;
}

void mrcp__qp_unready(struct mrcp_engine *e, struct qp *qp)
{
	if (!qp->in_ready)
		return;
	if (qp->ready_prev != NIL)
		e->qps[qp->ready_prev].ready_next = qp->ready_next;
	else
		e->ready_head = qp->ready_next;
	if (qp->ready_next != NIL)
		e->qps[qp->ready_next].ready_prev = qp->ready_prev;
	else
		e->ready_tail = qp->ready_prev;
	qp->in_ready = false;
}

void mrcp__qp_arm(struct mrcp_engine *e, struct qp *qp)
{
	uint64_t d = UINT64_MAX;

	if (qp->state == MRCP_QPS_RTS || qp->state == MRCP_QPS_RTR)
		d = mrcp__req_deadline(e, qp);
	/* a deadline already due fires at the next tick, never at this same
	 * instant again: a timer that could not make progress must not spin.
	 * One already armed to fire sooner stays put: re-arming it on every
	 * RX burst would push a due timer back a tick per burst, and while
	 * packets kept coming (bursts less than a tick apart) it never fired */
	if (d != UINT64_MAX && mrcp_time_le(d, e->now)) {
		d = e->now + 1024;
		if (mrcp_timer_armed(&qp->timer) && mrcp_time_lt(qp->timer.deadline, d))
			return;
	}
	if (d == UINT64_MAX)
		mrcp_timer_cancel(&e->wheel, &qp->timer);
	else if (!mrcp_timer_armed(&qp->timer) || qp->timer.deadline != d)
		mrcp_timer_arm(&e->wheel, &qp->timer, d);
}

void mrcp__cc_wake(struct mrcp_engine *e, const struct cc_inst *cc, const struct peer *p)
{
	/* Bytes left a shared QPCC (D53): a QP toward the peer held back by
	 * its window may have nothing in flight and so no timer of its own,
	 * and waits for exactly this. */
	if (cc == NULL || p == NULL || cc->users == 0)
		return;
	for (uint32_t s = p->qps_head; s != NIL; s = e->qps[s].peer_next)
		if (e->qps[s].cc == cc && mrcp__req_has_work(&e->qps[s]))
			mrcp__qp_ready(e, &e->qps[s]);
}

static void engine_fire(void *ctx, struct mrcp_timer *t)
{
	struct mrcp_engine *e = ctx;

	if (t->owner == 0) {
		mrcp__ep_on_timer(e);
		return;
	}
	struct qp *qp = &e->qps[t->owner - 1];
	if (!qp->used)
		return;
	const struct cc_inst *cc = qp->cc;
	uint64_t inflight = cc != NULL ? cc->inflight : 0;
	uint64_t cwnd = cc != NULL ? cc->ops->cwnd(cc->priv) : 0;

	mrcp__req_on_timer(e, qp);
	mrcp__qp_arm(e, qp);
	if (mrcp__req_has_work(qp))
		mrcp__qp_ready(e, qp);
	/* An RTO round that re-synced the shared window (bytes left it, or it
	 * grew) opened it for every QP toward the peer (a QP that failed woke
	 * them as its bytes left, qp.c). A timer that left the window as it
	 * was (a re-arm, a silent round's probe) did not: waking them would
	 * give each a turn that finds the window shut, per timer - with
	 * thousands of QPs on one peer, loops long enough that every timer
	 * looks like it fell inside a local stall (D65) and is re-armed, not
	 * fired: no RTO ever ran. */
	if (cc != NULL && qp->cc == cc && cc->users > 1 &&
	    (cc->inflight < inflight || cc->ops->cwnd(cc->priv) > cwnd))
		mrcp__cc_wake(e, cc, qp->peer);
}

uint64_t mrcp_next_deadline(const struct mrcp_engine *e)
{
	uint64_t d = mrcp_timer_wheel_next(&e->wheel);

	if (e->ctl_head != e->ctl_tail || e->ready_head != NIL)
		return e->now; /* work now */
	return d;
}

/* D65: a call whose earliest timer fell due more than STALL_BASE_RTTS base
 * RTTs ago means the engine was not running (the host descheduled it): the
 * stall ends now, and the timers that fell due inside it run again from
 * here (mrcp__stall_rearm) rather than firing at once. Called before a
 * call does anything else; a timer already seen late extends the stall it
 * belongs to without counting another. */
static void stall_check(struct mrcp_engine *e, uint64_t now_ns)
{
	uint64_t due = mrcp_timer_wheel_next(&e->wheel);

	if (due == UINT64_MAX || !mrcp_time_lt(due + STALL_BASE_RTTS * e->cfg.base_rtt_ns, now_ns))
		return;
	if (e->stall_end_ns == 0 || !mrcp_time_le(due, e->stall_end_ns))
		e->c.stalls++;
	e->stall_end_ns = now_ns;
}

void mrcp_engine_stalled(struct mrcp_engine *e, uint64_t now_ns)
{
	e->now = now_ns;
	e->c.stalls++;
	e->stall_end_ns = now_ns;
}

void mrcp__burst_touch(struct mrcp_engine *e, struct qp *qp)
{
	if (qp->in_burst)
		return;
	qp->in_burst = true;
	qp->burst_next = e->burst_head;
	e->burst_head = qp->slot;
}

/* ---- receive ---------------------------------------------------------------- */

/* No source QPN in the packet (a Write, an AETH): rx_qp() checks the
 * address only. */
#define SPDCID_NONE (-1)

/* The QP a received packet is for, if it exists, came from the QP's peer
 * and receives (RTR, RTS); else counted and NULL. From the peer means (D69)
 * its address on the plane the packet arrived on and, where the packet
 * names its sender (@spdcid: SETH, NETH, PETH; D15), the peer's QPN. A
 * packet from anyone else is dropped before anything of the QP is touched,
 * its burst list included. A QP in INIT has no peer yet: rx_bad_state. */
static inline struct qp *rx_qp(struct mrcp_engine *e, uint32_t dest_qp, const struct mrcp_rx *rx, int32_t spdcid)
{
	struct qp *qp = mrcp__qp_lookup(e, dest_qp);

	if (qp == NULL) {
		e->c.rx_unknown_qp++; /* D60 */
		return NULL;
	}
	if (qp->peer != NULL && (!mrcp__peer_on_plane(qp->peer, rx->port, &rx->src) ||
				 (spdcid != SPDCID_NONE && (uint16_t)spdcid != (uint16_t)qp->dqpn))) {
		e->c.rx_foreign_src++;
		return NULL;
	}
	mrcp__burst_touch(e, qp);
	if (qp->state != MRCP_QPS_RTR && qp->state != MRCP_QPS_RTS) {
		e->c.rx_bad_state++;
		return NULL;
	}
	return qp;
}

/* An untrimmed Write: decoded straight into the responder's view, then the
 * checks of rx_one() that apply to a Write, in the same order. */
static void rx_write(struct mrcp_engine *e, const struct mrcp_rx *rx)
{
	struct mrcp_write w;
	struct qp *qp;

	if (mrcp_write_decode(rx->data, rx->len, &w) != 0) {
		e->c.rx_bad_decode++;
		return;
	}
	if (w.dest_qp == MRCP_QPN_ENDPOINT) {
		e->c.rx_bad_opcode++;
		return;
	}
	qp = rx_qp(e, w.dest_qp, rx, SPDCID_NONE);
	if (qp != NULL)
		mrcp__resp_on_data(e, qp, &w, rx);
}

/* Is @rx an untrimmed Write (rx_write's)? */
static inline bool rx_is_write(const struct mrcp_rx *rx)
{
	return rx->trim == MRCP_TRIM_NONE && rx->len != 0 && mrcp_opcode_is_data(rx->data[0]);
}

/* Every packet but an untrimmed Write: decoded into struct mrcp_pkt, whose
 * frame the Writes of rx_write() do not pay. */
static __attribute__((noinline)) void rx_one(struct mrcp_engine *e, const struct mrcp_rx *rx)
{
	struct mrcp_pkt p;
	struct mrcp_write w;
	struct qp *qp;
	int32_t spdcid;
	int rc;

	if (rx->trim != MRCP_TRIM_NONE) {
		rc = mrcp_pkt_decode_hdr(rx->data, rx->len, &p);
		if (rc != 0 && rx->len >= 1 &&
		    (rx->data[0] == MRCP_OP_WRITE_LAST_IMM || rx->data[0] == MRCP_OP_WRITE_ONLY_IMM)) {
			/* O5: a switch that trims at the end of RETH takes ImmDt
			 * with it; what the NACK needs (PSN, EV, stamp) is all
			 * before it, so read the header as the Write without
			 * ImmDt, and keep the opcode it came with. Without
			 * this the trim is a silent loss. */
			uint8_t hdr[MRCP_DATA_HDR_MAX];
			size_t n = rx->len < sizeof(hdr) ? rx->len : sizeof(hdr);
			uint8_t op = rx->data[0];

			memcpy(hdr, rx->data, n);
			hdr[0] = op == MRCP_OP_WRITE_LAST_IMM ? MRCP_OP_WRITE_LAST : MRCP_OP_WRITE_ONLY;
			rc = mrcp_pkt_decode_hdr(hdr, n, &p);
			if (rc == 0)
				p.bth.opcode = op;
		}
	} else
		rc = mrcp_pkt_decode_rx(rx->data, rx->len, &p);
	if (rc != 0) {
		e->c.rx_bad_decode++;
		return;
	}
	if (p.bth.dest_qp == MRCP_QPN_ENDPOINT) {
		if (p.bth.opcode == MRCP_OP_EP_REQUEST || p.bth.opcode == MRCP_OP_EP_RESPONSE)
			mrcp__ep_on_rx(e, &p, rx);
		else
			e->c.rx_bad_opcode++;
		return;
	}
	if (p.bth.opcode == MRCP_OP_EP_REQUEST || p.bth.opcode == MRCP_OP_EP_RESPONSE) {
		e->c.rx_bad_opcode++;
		return;
	}
	switch (p.bth.opcode) { /* D69: the control packets that name their sender */
	case MRCP_OP_SACK:
		spdcid = p.seth.spdcid;
		break;
	case MRCP_OP_NACK:
		spdcid = p.neth.spdcid;
		break;
	case MRCP_OP_PROBE:
		spdcid = p.peth.spdcid;
		break;
	default:
		spdcid = SPDCID_NONE;
		break;
	}
	qp = rx_qp(e, p.bth.dest_qp, rx, spdcid);
	if (qp == NULL)
		return;
	if (rx->trim != MRCP_TRIM_NONE && !mrcp_opcode_is_data(p.bth.opcode)) {
		/* a trimmed control packet carries nothing we can trust */
		e->c.rx_bad_decode++;
		return;
	}
	switch (p.bth.opcode) {
	case MRCP_OP_SACK:
		if (qp->state == MRCP_QPS_RTS)
			mrcp__req_on_sack(e, qp, &p, rx);
		break;
	case MRCP_OP_NACK:
		if (qp->state == MRCP_QPS_RTS)
			mrcp__req_on_nack(e, qp, &p);
		break;
	case MRCP_OP_ACK:
		if (qp->state == MRCP_QPS_RTS)
			mrcp__req_on_ack(e, qp, &p);
		break;
	case MRCP_OP_PROBE:
		mrcp__resp_on_probe(e, qp, &p, rx);
		break;
	default: /* a Write (trimmed: untrimmed ones took rx_write) */
		mrcp_write_from_pkt(&p, &w);
		mrcp__resp_on_data(e, qp, &w, rx);
		break;
	}
}

void mrcp_rx_burst(struct mrcp_engine *e, const struct mrcp_rx *pkts, unsigned n, uint64_t now_ns)
{
	stall_check(e, now_ns);
	e->now = now_ns;
	e->c.rx_pkts += n;
	for (unsigned i = 0; i < n; i++) {
		if (rx_is_write(&pkts[i]))
			rx_write(e, &pkts[i]);
		else
			rx_one(e, &pkts[i]);
	}
	/* D28, D38: end-of-burst SACKs and AETHs */
	while (e->burst_head != NIL) {
		struct qp *qp = &e->qps[e->burst_head];
		e->burst_head = qp->burst_next;
		qp->in_burst = false;
		if (!qp->used)
			continue;
		mrcp__resp_burst_end(e, qp);
		/* requester side: the SACKs of this burst may open the window */
		if (qp->state == MRCP_QPS_RTS) {
			if (mrcp__req_has_work(qp))
				mrcp__qp_ready(e, qp);
			mrcp__qp_arm(e, qp);
			/* a shared QPCC (D53): the window this QP's SACKs opened
			 * belongs to every QP toward the peer; serve them in turn */
			if (qp->cc != NULL && qp->cc->users > 1)
				mrcp__cc_wake(e, qp->cc, qp->peer);
		}
	}
}

/* ---- transmit ---------------------------------------------------------------- */

/* A control packet has no payload (n_seg is 0): copy all but the segment
 * list, half of struct mrcp_tx. */
static inline void ctl_copy(struct mrcp_tx *d, const struct mrcp_tx *s)
{
	memcpy(d, s, offsetof(struct mrcp_tx, seg));
	memcpy(&d->payload_len, &s->payload_len, sizeof(*d) - offsetof(struct mrcp_tx, payload_len));
}

unsigned mrcp_poll(struct mrcp_engine *e, uint64_t now_ns, struct mrcp_tx *out, unsigned max)
{
	unsigned n = 0;
	uint32_t turns;

	stall_check(e, now_ns);
	e->now = now_ns;
	mrcp_timer_wheel_advance(&e->wheel, now_ns, engine_fire, e);
	while (n < max && e->ctl_head != e->ctl_tail)
		ctl_copy(&out[n++], &e->ctl[e->ctl_head++ & e->ctl_mask]);
	/* one turn per ready QP per round; a QP with nothing it can send now
	 * leaves the list and is put back by a SACK, a timer or a post. Each
	 * turn sends a packet or takes a QP off the list, so the bound (a
	 * guard against a spin) is never reached by a poll that makes progress,
	 * however few QP slots the engine has */
	turns = 0;
	while (n < max && e->ready_head != NIL && turns < (1u << e->qp_slot_bits) * 2 + max) {
		struct qp *qp = &e->qps[e->ready_head];
		unsigned got;

		mrcp__qp_unready(e, qp);
		got = mrcp__req_tx(e, qp, out + n, (max - n) < QP_TX_BURST ? (max - n) : QP_TX_BURST);
		n += got;
		turns++;
		if (got != 0 && mrcp__req_has_work(qp))
			mrcp__qp_ready(e, qp); /* to the tail: round-robin */
		mrcp__qp_arm(e, qp);
	}
	e->c.tx_pkts += n;
	return n;
}

void mrcp_port_set_tx_room(struct mrcp_engine *e, uint8_t port, bool room)
{
	if (port == 0 || port > e->cfg.n_ports)
		return;
	if (room) {
		bool was = e->port_room & (1u << (port - 1));
		e->port_room |= 1u << (port - 1);
		if (!was) {
			/* QPs held back for want of a port can go again (D42) */
			for (uint32_t i = 0; i < (1u << e->qp_slot_bits); i++)
				if (e->qps[i].used && mrcp__req_has_work(&e->qps[i]))
					mrcp__qp_ready(e, &e->qps[i]);
		}
	} else {
		e->port_room &= ~(1u << (port - 1));
	}
}

/* ---- invariants (tests) ---------------------------------------------------------- */

int mrcp__check_invariants(const struct mrcp_engine *e, char *why, size_t why_len)
{
	uint32_t nq = 1u << e->qp_slot_bits;

	for (uint32_t i = 0; i < nq; i++) {
		const struct qp *qp = &e->qps[i];
		uint64_t bytes = 0, cc_sum = 0;
		uint32_t n = 0;
		if (!qp->used || qp->cc == NULL || qp->sb == NULL)
			continue;
		for (uint32_t psn = qp->out_head; psn != NIL && n <= qp->n_out;) {
			const struct sb_entry *en = &qp->sb[psn & qp->sb_mask];
			if (!(en->flags & SB_OUT) || (en->flags & (SB_RTXQ | SB_SACKED))) {
				snprintf(why, why_len, "qp %u: psn %u on the send-order list with flags 0x%x",
					 qp->qpn, psn, en->flags);
				return -1;
			}
			bytes += en->nominal;
			n++;
			psn = en->next;
		}
		if (n != qp->n_out || bytes != qp->outstanding_bytes) {
			snprintf(why, why_len, "qp %u: list has %u pkts / %llu B, n_out %u, outstanding_bytes %llu",
				 qp->qpn, n, (unsigned long long)bytes, qp->n_out,
				 (unsigned long long)qp->outstanding_bytes);
			return -1;
		}
		/* check each QPCC once, at the first QP that uses it */
		bool first = true;
		for (uint32_t j = 0; j < nq; j++) {
			const struct qp *o = &e->qps[j];
			if (!o->used || o->cc != qp->cc)
				continue;
			if (j < i)
				first = false;
			cc_sum += o->outstanding_bytes;
		}
		if (!first)
			continue;
		if (qp->cc->inflight != cc_sum) {
			snprintf(why, why_len, "qp %u: cc inflight %llu != %llu B outstanding on its QPCC (cwnd %llu)",
				 qp->qpn, (unsigned long long)qp->cc->inflight, (unsigned long long)cc_sum,
				 (unsigned long long)qp->cc->ops->cwnd(qp->cc->priv));
			return -1;
		}
	}
	return 0;
}

/* ---- counters ------------------------------------------------------------------ */

uint32_t mrcp_engine_qp_slots(const struct mrcp_engine *e)
{
	return 1u << e->qp_slot_bits;
}

void mrcp_engine_mem(const struct mrcp_engine *e, struct mrcp_engine_mem *out)
{
	uint32_t nq = 1u << e->qp_slot_bits;

	memset(out, 0, sizeof(*out));
	out->engine_bytes = sizeof(*e) + (uint64_t)nq * sizeof(struct qp) +
			    (uint64_t)e->cfg.max_mrs * sizeof(struct eng_mr) +
			    (e->pds != NULL ? ((uint64_t)e->cfg.max_pds + 1) * sizeof(*e->pds) : 0) +
			    (uint64_t)e->cfg.max_peers * sizeof(struct peer) +
			    (e->peer_hash != NULL ? (uint64_t)(e->peer_hash_mask + 1) * sizeof(*e->peer_hash) : 0) +
			    (uint64_t)(e->cq_mask + 1) * sizeof(*e->cq) + (uint64_t)(e->evq_mask + 1) * sizeof(*e->evq) +
			    (uint64_t)(e->ctl_mask + 1) * sizeof(*e->ctl) +
			    (uint64_t)e->wheel.n_slots * sizeof(*e->wheel.slots) + e->wheel.n_slots / 8;
	for (uint32_t i = 0; i < e->cfg.max_peers; i++)
		if (e->peers[i].cc.priv != NULL)
			out->engine_bytes += e->peers[i].cc.ops->priv_size;
	for (uint32_t i = 0; i < nq; i++) {
		if (!e->qps[i].used)
			continue;
		out->qps++;
		out->qp_bytes += sizeof(struct qp) + mrcp__qp_mem(&e->qps[i]);
	}
	out->engine_bytes -= (uint64_t)out->qps * sizeof(struct qp); /* they are the QPs' */
}

void mrcp_engine_counters(const struct mrcp_engine *e, struct mrcp_engine_counters *out)
{
	*out = e->c;
}

void mrcp_engine_probe_rtt(const struct mrcp_engine *e, struct mrcp_probe_rtt_hist *out)
{
	*out = e->probe_rtt;
}

void mrcp_counters_foreach(const struct mrcp_engine *e,
			   void (*fn)(void *ctx, uint32_t qpn, const char *name, const char *desc, uint64_t v),
			   void *ctx)
{
#define X(n, d) fn(ctx, 0, #n, d, e->c.n);
	MRCP_ENGINE_COUNTERS(X)
#undef X
	for (uint32_t i = 0; i < (1u << e->qp_slot_bits); i++) {
		const struct qp *qp = &e->qps[i];
		if (!qp->used)
			continue;
#define X(n, d) fn(ctx, qp->qpn, #n, d, qp->c.n);
		MRCP_QP_COUNTERS(X)
#undef X
	}
}

const char *mrcp_qp_err_name(uint8_t cause)
{
	static const char *const s[] = {
#define X(N, n, d) #n,
		MRCP_QP_ERRS(X)
#undef X
	};
	return cause < sizeof(s) / sizeof(s[0]) ? s[cause] : "unknown";
}

const char *mrcp_qp_err_str(uint8_t cause)
{
	static const char *const s[] = {
#define X(N, n, d) d,
		MRCP_QP_ERRS(X)
#undef X
	};
	return cause < sizeof(s) / sizeof(s[0]) ? s[cause] : "unknown cause";
}

const char *mrcp_wc_status_str(uint8_t status)
{
	static const char *const s[] = {
#define X(n, d) d,
		MRCP_WC_STATUSES(X)
#undef X
	};
	return status < sizeof(s) / sizeof(s[0]) ? s[status] : "unknown status";
}
