/* scenario.c - the two-engine scenario harness of scenario.h. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

#include "engine_internal.h"
#include "mrcp_test.h"
#include "scenario.h"

void sc_cfg_defaults(struct sc_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->name = "scenario";
	c->seed = 1;
	c->planes = 4;
	c->paths = 4;
	c->family = 6;
	c->path_bps = 0;
	c->port_bps = 100000000000ull;
	c->delay_ns = 2000;
	c->nqps = 1;
	c->msg_size = 65536;
	c->msgs = 64;
	c->mode = MRCP_MODE_MRC;
	c->deadline_ns = 5000000000ull;
	c->check_invariants = true;
}

static uint8_t pattern(unsigned node, uint64_t i)
{
	return (uint8_t)(node * 0x5B + i * 13 + (i >> 8) * 7 + (i >> 16));
}

/* ---- the node endpoint: invariant checks and a sleeping worker ------------ */

struct sc_held {
	struct sc_held *next;
	struct mrcp_rx rx;
	uint8_t data[];
};

static void check(struct sc_node *nd)
{
	struct sc *s = nd->s;
	char why[200];

	if (!s->cfg.check_invariants)
		return;
	s->inv_checks++;
	if (mrcp__check_invariants(s->e[nd->n], why, sizeof(why)) != 0) {
		if (s->inv_failures++ == 0)
			snprintf(s->inv_why, sizeof(s->inv_why), "node %d at %llu ns: %s", nd->n,
				 (unsigned long long)nd->now, why);
	}
}

/* Advance the sleep schedule to @now. @return whether the worker is awake. */
static bool awake(struct sc_node *nd, uint64_t now)
{
	const struct sc_cfg *c = &nd->s->cfg;

	nd->now = now;
	if (!nd->sleeps)
		return true;
	while (now >= nd->awake_until) {
		uint64_t nap = mrcp_prng_below(&nd->prng, (uint32_t)c->sleep_max_ns + 1);
		nd->asleep_until = nd->awake_until + nap;
		nd->awake_until = nd->asleep_until + mrcp_prng_below(&nd->prng, (uint32_t)c->awake_max_ns + 1);
		nd->slept_ns += nap;
	}
	return now >= nd->asleep_until;
}

/* Hand every held packet over, in arrival order, in bursts of 32. */
static void release_held(struct sc_node *nd, uint64_t now)
{
	struct mrcp_rx burst[32];
	struct sc_held *h[32];

	while (nd->held_head != NULL) {
		unsigned k = 0;
		while (k < 32 && nd->held_head != NULL) {
			h[k] = nd->held_head;
			nd->held_head = h[k]->next;
			burst[k] = h[k]->rx;
			k++;
		}
		if (nd->held_head == NULL)
			nd->held_tail = NULL;
		mrcp_rx_burst(nd->s->e[nd->n], burst, k, now);
		check(nd);
		for (unsigned i = 0; i < k; i++)
			free(h[i]);
	}
}

static void node_rx(void *ctx, const struct mrcp_rx *pkts, unsigned n, uint64_t now_ns)
{
	struct sc_node *nd = ctx;

	if (awake(nd, now_ns)) {
		release_held(nd, now_ns);
		mrcp_rx_burst(nd->s->e[nd->n], pkts, n, now_ns);
		check(nd);
		return;
	}
	for (unsigned i = 0; i < n; i++) {
		struct sc_held *h = malloc(sizeof(*h) + pkts[i].len);
		ASSERT_TRUE(h != NULL);
		h->next = NULL;
		h->rx = pkts[i];
		memcpy(h->data, pkts[i].data, pkts[i].len);
		h->rx.data = h->data;
		if (nd->held_tail != NULL)
			nd->held_tail->next = h;
		else
			nd->held_head = h;
		nd->held_tail = h;
		nd->held++;
	}
}

static unsigned node_poll(void *ctx, uint64_t now_ns, struct mrcp_tx *out, unsigned max)
{
	struct sc_node *nd = ctx;
	unsigned n;

	if (!awake(nd, now_ns))
		return 0;
	release_held(nd, now_ns);
	n = mrcp_poll(nd->s->e[nd->n], now_ns, out, max);
	check(nd);
	return n;
}

static uint64_t node_deadline(void *ctx)
{
	struct sc_node *nd = ctx;
	uint64_t d = mrcp_next_deadline(nd->s->e[nd->n]);

	if (!nd->sleeps || nd->now >= nd->asleep_until)
		return d;
	/* asleep: nothing runs before the wake-up */
	if (nd->held_head != NULL)
		return nd->asleep_until;
	return d == UINT64_MAX || d > nd->asleep_until ? d : nd->asleep_until;
}

static void node_room(void *ctx, uint8_t port, bool room)
{
	struct sc_node *nd = ctx;

	mrcp_port_set_tx_room(nd->s->e[nd->n], port, room);
}

static const struct fabric_endpoint_ops node_ops = {
	.rx_burst = node_rx,
	.poll = node_poll,
	.next_deadline = node_deadline,
	.set_tx_room = node_room,
};

/* Post message @m of QP @q (and its receive, for WriteImm). */
static void post_msg(struct sc *s, struct sc_qp *q, unsigned m)
{
	const struct sc_cfg *c = &s->cfg;
	int dir = q->from;
	uint64_t off = q->region + (uint64_t)m * c->msg_size;
	struct mrcp_sge sge = {.addr = (uint64_t)(uintptr_t)s->mem[dir] + off,
			       .len = c->msg_size, .lkey = s->key[dir]};
	struct mrcp_send_wr wr = {
		.wr_id = m,
		.opcode = c->write_imm ? MRCP_WR_WRITE_IMM : MRCP_WR_WRITE,
		.flags = MRCP_WR_SIGNALED,
		.imm = 0xC0DE0000u | m,
		.sg_list = &sge,
		.num_sge = c->msg_size ? 1 : 0,
		.remote_addr = (uint64_t)(uintptr_t)s->mem[1 - dir] + s->span + off,
		.rkey = s->key[1 - dir],
	};
	if (c->write_imm)
		ASSERT_EQ(0, mrcp_qp_post_recv(s->e[1 - dir], q->qpn_rx, 1000000 + m));
	ASSERT_EQ(0, mrcp_qp_post_send(s->e[dir], q->qpn_tx, &wr, fabric_now(s->f)));
}

void sc_setup(struct sc *s, const struct sc_cfg *c)
{
	struct fabric_cfg fc;
	struct mrcp_conn_info ci_tx, ci_rx;

	memset(s, 0, sizeof(*s));
	s->cfg = *c;
	fabric_cfg_defaults(&fc);
	fc.max_nodes = 2;
	fc.n_planes = c->planes;
	fc.n_paths = c->paths;
	fc.family = c->family;
	fc.path = c->imp;
	fc.path.delay_ns = c->delay_ns;
	fc.path.jitter_ns = c->jitter_ns;
	fc.path.q.rate_bps = c->path_bps;
	fc.path.q.trim = c->trim;
	fc.path.q.trim_bytes = c->trim_bytes ? c->trim_bytes : 32768;
	fc.path.q.buffer_bytes = c->path_bps ? 262144 : 0;
	fc.path.q.ecn = c->ecn;
	fc.path.q.ecn_kmin_bytes = c->ecn_kmin;
	fc.path.q.ecn_kmax_bytes = c->ecn_kmax;
	fc.path.q.ecn_pmax = 1.0;
	ASSERT_EQ(0, fabric_create(&fc, c->seed, &s->f));

	s->span = (uint64_t)c->nqps * c->msgs * c->msg_size;
	if (s->span == 0)
		s->span = 4096;
	for (int n = 0; n < 2; n++) {
		struct fabric_node_cfg nc;
		struct mrcp_engine_config ec;
		uint32_t lk;

		fabric_node_cfg_defaults(&nc);
		for (int p = 0; p < c->planes; p++)
			nc.port_bps[p] = c->port_bps;
		nc.tx_room_bytes = 64 * 1024;
		ASSERT_EQ(n, fabric_add_node(s->f, &nc));
		mrcp_engine_config_defaults(&ec);
		fabric_engine_config_fill(s->f, (unsigned)n, &ec);
		ec.seed = fabric_seed_derive(s->f, (uint64_t)n + 1);
		ec.trimming_fabric = c->trim;
		ec.timeout = c->timeout ? c->timeout : 6;
		if (c->exp_cnt)
			ec.exp_cnt = c->exp_cnt;
		if (c->base_rtt_ns)
			ec.base_rtt_ns = c->base_rtt_ns;
		ec.ev.n_active = (uint16_t)(16 * c->planes);
		ec.ev.n_backup = (uint16_t)(8 * c->planes);
		if (c->mtu)
			ec.mtu = c->mtu;
		ASSERT_EQ(0, mrcp_engine_create(&ec, &s->e[n]));
		s->mem[n] = malloc(2 * s->span);
		ASSERT_TRUE(s->mem[n] != NULL);
		for (uint64_t i = 0; i < s->span; i++)
			s->mem[n][i] = pattern((unsigned)n, i);
		memset(s->mem[n] + s->span, 0, s->span);
		ASSERT_EQ(0, mrcp_mr_reg(s->e[n], (uint64_t)(uintptr_t)s->mem[n], 2 * s->span, s->mem[n],
					 MRCP_ACCESS_LOCAL_WRITE | MRCP_ACCESS_REMOTE_WRITE, &lk, &s->key[n]));
		s->node[n].s = s;
		s->node[n].n = n;
		s->node[n].sleeps = c->sleep_max_ns != 0 &&
				    ((c->sleep_nodes ? c->sleep_nodes : 2u) & (1u << n));
		mrcp_prng_seed(&s->node[n].prng, fabric_seed_derive(s->f, (uint64_t)n + 100));
		ASSERT_EQ(0, fabric_node_attach(s->f, (unsigned)n, &node_ops, &s->node[n]));
		if (c->pause_ns != 0 && (c->pause_nodes & (1u << n)))
			ASSERT_EQ(0, fabric_node_pause(s->f, (unsigned)n, c->pause_at_ns, c->pause_ns, c->pause_period_ns));
	}
	for (int dir = 0; dir < (c->bidir ? 2 : 1); dir++) {
		for (unsigned k = 0; k < c->nqps; k++) {
			struct sc_qp *q = &s->q[s->nq++];
			struct mrcp_qp_attr a = {.mode = c->mode, .user_ctx = s->nq - 1,
						 .fixed_init_psn = c->fixed_init_psn, .init_psn = c->init_psn};

			q->from = dir;
			q->region = (uint32_t)((uint64_t)k * c->msgs * c->msg_size);
			ASSERT_EQ(0, mrcp_qp_create(s->e[dir], &a, &q->qpn_tx));
			ASSERT_EQ(0, mrcp_qp_create(s->e[1 - dir], &a, &q->qpn_rx));
			ASSERT_EQ(0, mrcp_qp_local_info(s->e[dir], q->qpn_tx, &ci_tx));
			ASSERT_EQ(0, mrcp_qp_local_info(s->e[1 - dir], q->qpn_rx, &ci_rx));
			ASSERT_EQ(0, mrcp_qp_connect(s->e[dir], q->qpn_tx, &ci_rx, 0));
			ASSERT_EQ(0, mrcp_qp_connect(s->e[1 - dir], q->qpn_rx, &ci_tx, 0));
			for (unsigned m = 0; m < c->msgs && (c->window == 0 || m < c->window); m++)
				post_msg(s, q, m);
			s->posted[s->nq - 1] = c->window == 0 || c->window > c->msgs ? c->msgs : c->window;
		}
		fabric_kick(s->f, (unsigned)dir);
	}
}

static struct sc_qp *find_qp(struct sc *s, int node, uint32_t qpn, bool *rx_side)
{
	for (unsigned i = 0; i < s->nq; i++) {
		if (s->q[i].from == node && s->q[i].qpn_tx == qpn) {
			*rx_side = false;
			return &s->q[i];
		}
		if (s->q[i].from != node && s->q[i].qpn_rx == qpn) {
			*rx_side = true;
			return &s->q[i];
		}
	}
	return NULL;
}

static void drain(struct sc *s)
{
	struct mrcp_wc wc[64];

	for (int n = 0; n < 2; n++) {
		unsigned k;
		while ((k = mrcp_poll_cq(s->e[n], wc, 64)) != 0) {
			for (unsigned i = 0; i < k; i++) {
				bool rx_side;
				struct sc_qp *q = find_qp(s, n, wc[i].qpn, &rx_side);
				if (q == NULL) {
					s->violations++;
					continue;
				}
				if (wc[i].status != MRCP_WC_SUCCESS) {
					q->errors++;
					q->failed = true;
					continue;
				}
				if (!rx_side) {
					/* requester: in MSN (= post) order, exactly once */
					if (wc[i].wr_id != q->next_wc || wc[i].byte_len != s->cfg.msg_size)
						s->violations++;
					q->next_wc++;
					if (s->posted[q - s->q] < s->cfg.msgs) {
						post_msg(s, q, s->posted[q - s->q]++);
						fabric_kick(s->f, (unsigned)n);
					}
				} else {
					if (wc[i].wr_id != 1000000 + q->next_rwc ||
					    wc[i].imm != (0xC0DE0000u | q->next_rwc) || wc[i].msn != (uint16_t)q->next_rwc)
						s->violations++;
					q->next_rwc++;
				}
			}
		}
	}
}

static bool running(void *ctx)
{
	struct sc *s = ctx;

	drain(s);
	for (unsigned i = 0; i < s->nq; i++)
		if (!s->q[i].failed && s->q[i].next_wc < s->cfg.msgs)
			return true;
	return false;
}

int sc_run(struct sc *s)
{
	int rc = fabric_run_while(s->f, running, s, s->cfg.deadline_ns);

	drain(s);
	return rc;
}

void sc_run_for(struct sc *s, uint64_t ns)
{
	fabric_run_until(s->f, fabric_now(s->f) + ns);
	drain(s);
}

void sc_verify(struct sc *s)
{
	if (s->inv_failures != 0)
		fprintf(stderr, "  %s: %u of %u invariant checks failed, first: %s (seed %llu)\n",
			s->cfg.name, s->inv_failures, s->inv_checks, s->inv_why,
			(unsigned long long)s->cfg.seed);
	ASSERT_EQ(0, s->inv_failures);
	ASSERT_EQ(0, s->violations);
	for (unsigned i = 0; i < s->nq; i++) {
		struct sc_qp *q = &s->q[i];
		int st = mrcp_qp_state(s->e[q->from], q->qpn_tx);

		if (s->cfg.expect_error) {
			ASSERT_EQ(MRCP_QPS_ERROR, st);
			ASSERT_EQ(s->cfg.msgs, q->errors + q->next_wc);
			ASSERT_GT(q->errors, 0);
			continue;
		}
		if (q->failed || q->next_wc != s->cfg.msgs) {
			fprintf(stderr, "  %s: QP %u finished %u of %u messages, %u errors, state %d (seed %llu)\n",
				s->cfg.name, i, q->next_wc, s->cfg.msgs, q->errors, st,
				(unsigned long long)s->cfg.seed);
		}
		ASSERT_FALSE(q->failed);
		ASSERT_EQ(s->cfg.msgs, q->next_wc);
		ASSERT_EQ(MRCP_QPS_RTS, st);
		if (s->cfg.write_imm)
			ASSERT_EQ(s->cfg.msgs, q->next_rwc);
		/* every byte placed equals every byte sent */
		uint64_t len = (uint64_t)s->cfg.msgs * s->cfg.msg_size;
		ASSERT_MEMEQ(s->mem[q->from] + q->region, s->mem[1 - q->from] + s->span + q->region, len);
	}
}

uint64_t sc_qp_sum(struct sc *s, int n, size_t off)
{
	uint64_t sum = 0;

	for (unsigned i = 0; i < s->nq; i++) {
		struct mrcp_qp_info qi;
		uint32_t qpn = s->q[i].from == n ? s->q[i].qpn_tx : s->q[i].qpn_rx;
		if (mrcp_qp_info(s->e[n], qpn, &qi) == 0)
			sum += *(const uint64_t *)((const uint8_t *)&qi.c + off);
	}
	return sum;
}

uint64_t sc_rx_bytes(struct sc *s, int n)
{
	return sc_qp_sum(s, n, offsetof(struct mrcp_qp_counters, rx_data_bytes));
}

void sc_teardown(struct sc *s)
{
	for (int n = 0; n < 2; n++) {
		while (s->node[n].held_head != NULL) {
			struct sc_held *h = s->node[n].held_head;
			s->node[n].held_head = h->next;
			free(h);
		}
		mrcp_engine_destroy(s->e[n]);
		free(s->mem[n]);
	}
	fabric_destroy(s->f);
}
