/* dp_selftest.c - see dp_selftest.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "dp_internal.h"
#include "dp_selftest.h"

struct st {
	bool used;
	uint32_t id;
	uint8_t role, state, op;
	uint32_t qpn;
	uint8_t *buf;              /* sender: window slots; receiver: the region */
	uint64_t buf_len;
	uint32_t lkey, rkey;
	bool mr;
	uint32_t pd;               /* D67: its own; 0 = none allocated yet */
	/* the transfer */
	uint64_t bytes, n_msgs;
	uint32_t msg_size, window;
	uint64_t usable;           /* receiver region bytes used: whole messages */
	uint64_t peer_va;
	uint32_t peer_rkey;
	/* progress */
	uint64_t next_msg;         /* sender: next to post; receiver: next to verify */
	uint64_t inflight;
	uint64_t msgs_done, bytes_done, imm_msgs;
	uint64_t t_start, t_end;
	uint64_t verify_errors, ev_transitions;
	uint64_t last_ns;          /* a command, completion or event touched it */
	/* ping-pong (dp_selftest.h) */
	bool pp_wait;              /* sender: message next_msg - 1 awaits its echo */
	bool pp_due;               /* a message to post that found the SQ full: the hook retries */
	uint64_t pp_echo;          /* receiver: the message pp_due is the echo of */
	uint64_t t_ping;           /* sender: when the awaited message was posted */
	uint32_t *rtt;             /* sender: ns, one per round trip (n_msgs) */
	uint64_t n_rtt, rtt_warmup;
	uint64_t rtt_sum, rtt_min, rtt_max; /* of the counted ones */
	bool rtt_sorted;
	char error[128];
};

struct st_table {
	struct st st[MRCD_ST_MAX];
	uint32_t next_id;
	bool hooked;
	uint64_t idle_ns;          /* limits.selftest_idle_s */
	uint64_t next_sweep_ns;
};

#define ST_SWEEP_NS 100000000ull   /* idle selftests are looked for every 100 ms */

static const char *const state_names[] = {
#define X(e, s) s,
	MRCD_ST_STATES(X)
#undef X
};

const char *mrcd_st_state_name(int state)
{
	if (state < 0 || state >= (int)(sizeof(state_names) / sizeof(state_names[0])))
		return "?";
	return state_names[state];
}

/* ---- the pattern ------------------------------------------------------------- */

static inline uint64_t pat_word(uint64_t msg, uint64_t k)
{
	uint64_t z = msg * 0x9E3779B97F4A7C15ull + k * 0xD1B54A32D192ED03ull + 0x5eedull;

	z ^= z >> 29;
	z *= 0xBF58476D1CE4E5B9ull;
	return z ^ (z >> 32);
}

void mrcd_st_pattern_fill(uint8_t *dst, uint64_t len, uint64_t msg)
{
	uint64_t k = 0, w;

	for (; k + 8 <= len; k += 8) {
		w = pat_word(msg, k >> 3);
		memcpy(dst + k, &w, 8);
	}
	if (k < len) {
		w = pat_word(msg, k >> 3);
		memcpy(dst + k, &w, len - k);
	}
}

uint64_t mrcd_st_pattern_check(const uint8_t *src, uint64_t len, uint64_t msg)
{
	uint64_t k = 0, w, bad = 0;

	for (; k + 8 <= len; k += 8) {
		uint64_t got;

		w = pat_word(msg, k >> 3);
		memcpy(&got, src + k, 8);
		if (got != w)
			for (unsigned b = 0; b < 8; b++)
				bad += ((got >> (8 * b)) & 0xFF) != ((w >> (8 * b)) & 0xFF);
	}
	if (k < len) {
		uint8_t t[8];

		w = pat_word(msg, k >> 3);
		memcpy(t, &w, 8);
		for (uint64_t b = 0; b < len - k; b++)
			bad += src[k + b] != t[b];
	}
	return bad;
}

/* ---- helpers ----------------------------------------------------------------- */

static uint64_t msg_len(const struct st *s, uint64_t i)
{
	uint64_t off = i * s->msg_size;

	return s->bytes - off < s->msg_size ? s->bytes - off : s->msg_size;
}

static uint64_t msg_off(const struct st *s, uint64_t i)
{
	return (i * s->msg_size) % s->usable;
}

static bool msg_is_imm(const struct st *s, uint64_t i)
{
	if (i + 1 == s->n_msgs)
		return true;
	switch (s->op) {
	case MRCD_ST_OP_WRITE:
		return (i + 1) % MRCD_ST_WRITE_IMM_EVERY == 0;
	case MRCD_ST_OP_MIXED:
		return i & 1;
	default:
		return true;
	}
}

static struct st_table *table(struct mrcd_dp *dp, bool create)
{
	if (!dp->selftests && create) {
		struct st_table *t = calloc(1, sizeof(*t));

		if (!t)
			return NULL;
		t->next_id = 1;
		t->idle_ns = (uint64_t)(dp->cfg->selftest_idle_s ? dp->cfg->selftest_idle_s : 60) * 1000000000ull;
		dp->selftests = t;
	}
	return dp->selftests;
}

static struct st *find(struct mrcd_dp *dp, uint32_t id)
{
	struct st_table *t = table(dp, false);

	if (!t || id == 0)
		return NULL;
	for (unsigned i = 0; i < MRCD_ST_MAX; i++)
		if (t->st[i].used && t->st[i].id == id)
			return &t->st[i];
	return NULL;
}

static void fail(struct st *s, uint64_t now, const char *why, const char *what)
{
	if (s->state == MRCD_ST_FAILED)
		return;
	s->state = MRCD_ST_FAILED;
	s->t_end = now;
	snprintf(s->error, sizeof(s->error), "%s: %s", why, what);
}

static void st_free(struct mrcd_dp *dp, struct st *s, uint64_t now)
{
	if (s->qpn) {
		mrcd_dp_disown_qp(dp, s->qpn);
		mrcd__qp_closing(dp, s->qpn);
		mrcp_qp_destroy(dp->eng, s->qpn, now);
	}
	mrcd_dp_tx_quiesce(dp); /* no queued frame may still point into s->buf */
	if (s->mr)
		mrcp_mr_dereg(dp->eng, s->lkey);
	if (s->pd)
		mrcp_pd_free(dp->eng, s->pd);
	if (s->buf)
		munmap(s->buf, s->buf_len);
	if (s->rtt)
		munmap(s->rtt, s->n_msgs * sizeof(*s->rtt));
	memset(s, 0, sizeof(*s));
}

/* ---- completions and events ---------------------------------------------------- */

static void verify_upto(struct st *s, uint64_t last)
{
	for (uint64_t i = s->next_msg; i <= last && i < s->n_msgs; i++) {
		uint64_t len = msg_len(s, i);

		if (mrcd_st_pattern_check(s->buf + msg_off(s, i), len, i))
			s->verify_errors++;
		s->msgs_done++;
		s->bytes_done += len;
	}
	if (last + 1 > s->next_msg)
		s->next_msg = last + 1;
}

/* Ping-pong: post the sender's next message, or the receiver's echo of
 * message pp_echo. @return true if posted; false when the SQ is full (the
 * hook retries: pp_due) or the selftest failed. */
static bool pp_post(struct mrcd_dp *dp, struct st *s, uint64_t now)
{
	bool sender = s->role == MRCD_ST_SENDER;
	uint64_t i = sender ? s->next_msg : s->pp_echo;
	/* the sender's message leaves from its first slot and its echo lands
	 * in the second (the peer's buf_va); the receiver echoes from where
	 * the message landed */
	uint8_t *src = sender ? s->buf : s->buf + msg_off(s, i);
	struct mrcp_sge sge = { (uint64_t)(uintptr_t)src, s->msg_size, s->lkey };
	struct mrcp_send_wr wr = {
		.wr_id = i,
		.opcode = MRCP_WR_WRITE_IMM,
		.flags = MRCP_WR_SIGNALED,
		.imm = (uint32_t)i,
		.sg_list = &sge,
		.num_sge = 1,
		.remote_addr = sender ? s->peer_va + msg_off(s, i) : s->peer_va,
		.rkey = s->peer_rkey,
	};
	int rc;

	if (sender && !s->pp_due) {
		mrcd_st_pattern_fill(src, s->msg_size, i);
		/* the round trip starts when the message is first offered to
		 * the engine (a full SQ is part of it) */
		s->t_ping = mrcd_dp_now_ns();
	}
	rc = mrcp_qp_post_send(dp->eng, s->qpn, &wr, now);
	s->pp_due = rc == -EAGAIN;
	if (rc < 0) {
		if (rc != -EAGAIN)
			fail(s, now, "post_send", strerror(-rc));
		return false;
	}
	if (sender) {
		s->pp_wait = true;
		s->next_msg++;
	}
	return true;
}

/* Ping-pong: a WriteImm arrived. */
static void pp_recv(struct mrcd_dp *dp, struct st *s, const struct mrcp_wc *wc, uint64_t now)
{
	if (s->role == MRCD_ST_RECEIVER) {
		uint64_t i = s->next_msg + (uint32_t)(wc->imm - (uint32_t)s->next_msg);

		if (s->state == MRCD_ST_CONNECTED) {
			s->state = MRCD_ST_RUNNING;
			s->t_start = now;
		}
		s->imm_msgs++;
		if (s->pp_due) {
			fail(s, now, "ping-pong", "a message came before the last one was echoed");
			return;
		}
		/* the echo first: checking the bytes is not on the round trip */
		s->pp_echo = i;
		pp_post(dp, s, now);
		mrcp_qp_post_recv(dp->eng, s->qpn, s->imm_msgs);
		verify_upto(s, i);
		return;
	}
	/* the sender: the echo of message next_msg - 1 */
	uint64_t i = s->next_msg - 1;

	mrcp_qp_post_recv(dp->eng, s->qpn, s->imm_msgs + s->msgs_done);
	if (!s->pp_wait || wc->imm != (uint32_t)i) {
		s->verify_errors++;
		fail(s, now, "ping-pong", "an echo that was not of the message in flight");
		return;
	}
	s->pp_wait = false;
	if (s->n_rtt < s->n_msgs) {
		uint64_t d = now - s->t_ping;

		d = d > UINT32_MAX ? UINT32_MAX : d;
		s->rtt[s->n_rtt++] = (uint32_t)d;
		if (s->n_rtt > s->rtt_warmup) {
			s->rtt_sum += d;
			s->rtt_min = d < s->rtt_min ? d : s->rtt_min;
			s->rtt_max = d > s->rtt_max ? d : s->rtt_max;
		}
	}
	if (mrcd_st_pattern_check(s->buf + s->msg_size, s->msg_size, i))
		s->verify_errors++;
	s->msgs_done++;
	s->bytes_done += s->msg_size;
	if (s->msgs_done == s->n_msgs) {
		if (s->state == MRCD_ST_RUNNING) {
			s->state = MRCD_ST_DONE;
			s->t_end = now;
		}
		return;
	}
	if (s->state == MRCD_ST_RUNNING)
		pp_post(dp, s, now);
}

static void on_wc(struct mrcd_dp *dp, void *ctx, const struct mrcp_wc *wc)
{
	struct st *s = ctx;
	uint64_t now = mrcd_dp_now_ns();

	s->last_ns = now;
	if (wc->status != MRCP_WC_SUCCESS) {
		if (s->state != MRCD_ST_DONE)
			fail(s, now, "completion error", mrcp_wc_status_str(wc->status));
		return;
	}
	if (s->op == MRCD_ST_OP_PING_PONG) {
		if (wc->opcode == MRCP_WC_RECV_IMM)
			pp_recv(dp, s, wc, now);
		else if (wc->opcode == MRCP_WC_WRITE_IMM && s->role == MRCD_ST_SENDER)
			s->imm_msgs++;
		return;
	}
	if (s->role == MRCD_ST_SENDER) {
		s->inflight--;
		s->msgs_done++;
		s->bytes_done += wc->byte_len;
		if (wc->opcode == MRCP_WC_WRITE_IMM)
			s->imm_msgs++;
		if (s->msgs_done == s->n_msgs && s->state == MRCD_ST_RUNNING) {
			s->state = MRCD_ST_DONE;
			s->t_end = now;
		}
		return;
	}
	if (wc->opcode != MRCP_WC_RECV_IMM)
		return;
	/* the message index from the low 32 bits the immediate carries */
	uint64_t i = s->next_msg + (uint32_t)(wc->imm - (uint32_t)s->next_msg);

	if (s->state == MRCD_ST_CONNECTED) {
		s->state = MRCD_ST_RUNNING;
		s->t_start = now;
	}
	s->imm_msgs++;
	if (i >= s->n_msgs) {
		s->verify_errors++;
	} else {
		verify_upto(s, i);
	}
	mrcp_qp_post_recv(dp->eng, s->qpn, s->imm_msgs);
	if (s->bytes_done >= s->bytes && s->state == MRCD_ST_RUNNING) {
		s->state = MRCD_ST_DONE;
		s->t_end = now;
	}
}

static void on_event(struct mrcd_dp *dp, void *ctx, const struct mrcp_event *ev)
{
	struct st *s = ctx;

	(void)dp;
	s->last_ns = ev->now_ns;
	if (ev->type == MRCP_EVENT_EV_STATE)
		s->ev_transitions++;
	else if (ev->type == MRCP_EVENT_QP_ERROR)
		fail(s, ev->now_ns, "QP error", mrcp_wc_status_str(ev->qp_error.status));
}

/* The sender's hook: keep @window messages in flight. */
static bool st_hook(struct mrcd_dp *dp, void *arg, uint64_t now)
{
	struct st_table *t = arg;
	bool work = false;

	if (now >= t->next_sweep_ns) {
		/* a selftest nobody stopped (its control connection gone, a
		 * listener never accepted) gives its slot, QP and region back */
		t->next_sweep_ns = now + ST_SWEEP_NS;
		for (unsigned k = 0; k < MRCD_ST_MAX; k++) {
			struct st *s = &t->st[k];

			if (!s->used || now - s->last_ns <= t->idle_ns)
				continue;
			MRCD_LOG(NOTICE, dp, "selftest %u (%s, %s): untouched for %llu s (limits.selftest_idle_s): freed\n",
				 s->id, s->role == MRCD_ST_SENDER ? "sender" : "receiver",
				 mrcd_st_state_name(s->state), (unsigned long long)((now - s->last_ns) / 1000000000ull));
			st_free(dp, s, now);
			dp->wc.selftests_expired++;
		}
	}
	for (unsigned k = 0; k < MRCD_ST_MAX; k++) {
		struct st *s = &t->st[k];

		if (!s->used || s->state != MRCD_ST_RUNNING)
			continue;
		if (s->op == MRCD_ST_OP_PING_PONG) {
			/* the first message, or one that found the SQ full */
			if (s->pp_due || (s->role == MRCD_ST_SENDER && !s->pp_wait && s->next_msg == 0))
				work |= pp_post(dp, s, now);
			continue;
		}
		if (s->role != MRCD_ST_SENDER)
			continue;
		while (s->inflight < s->window && s->next_msg < s->n_msgs) {
			uint64_t i = s->next_msg, len = msg_len(s, i);
			uint8_t *slot = s->buf + (i % s->window) * s->msg_size;
			struct mrcp_sge sge = { (uint64_t)(uintptr_t)slot, (uint32_t)len, s->lkey };
			struct mrcp_send_wr wr = {
				.wr_id = i,
				.opcode = msg_is_imm(s, i) ? MRCP_WR_WRITE_IMM : MRCP_WR_WRITE,
				.flags = MRCP_WR_SIGNALED,
				.imm = (uint32_t)i,
				.sg_list = &sge,
				.num_sge = 1,
				.remote_addr = s->peer_va + msg_off(s, i),
				.rkey = s->peer_rkey,
			};
			int rc;

			mrcd_st_pattern_fill(slot, len, i);
			rc = mrcp_qp_post_send(dp->eng, s->qpn, &wr, now);
			if (rc == -EAGAIN)
				break;
			if (rc < 0) {
				fail(s, now, "post_send", strerror(-rc));
				break;
			}
			s->next_msg++;
			s->inflight++;
			work = true;
		}
	}
	return work;
}

static struct st *st_alloc(struct mrcd_dp *dp)
{
	struct st_table *t = table(dp, true);

	if (!t)
		return NULL;
	if (!t->hooked) {
		if (mrcd_dp_add_hook(dp, st_hook, t) < 0)
			return NULL;
		t->hooked = true;
	}
	for (unsigned i = 0; i < MRCD_ST_MAX; i++)
		if (!t->st[i].used) {
			struct st *s = &t->st[i];

			memset(s, 0, sizeof(*s));
			s->used = true;
			/* ids name their worker (mrcd_st_worker_of) */
			s->id = t->next_id++ * dp->n_workers + dp->index;
			if (t->next_id == 0)
				t->next_id = 1;
			return s;
		}
	return NULL;
}

static int st_setup(struct mrcd_dp *dp, struct st *s, uint64_t buf_len, uint32_t access)
{
	struct mrcp_qp_attr a;
	int rc;

	s->buf = mmap(NULL, buf_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s->buf == MAP_FAILED) {
		s->buf = NULL;
		return -ENOMEM;
	}
	s->buf_len = buf_len;
	/* D67: a selftest's buffer is reachable from its own QP only */
	rc = mrcp_pd_alloc(dp->eng, &s->pd);
	if (rc < 0)
		return rc;
	rc = mrcp_mr_reg_pd(dp->eng, s->pd, (uint64_t)(uintptr_t)s->buf, buf_len, s->buf, access,
			    &s->lkey, &s->rkey);
	if (rc < 0)
		return rc;
	s->mr = true;
	memset(&a, 0, sizeof(a));
	a.user_ctx = s->id;
	a.pd = s->pd;
	rc = mrcp_qp_create(dp->eng, &a, &s->qpn);
	if (rc < 0)
		return rc;
	return mrcd_dp_own_qp(dp, s->qpn, on_wc, on_event, s);
}

static int encode_info(struct mrcd_dp *dp, struct st *s, uint64_t va, uint64_t len, uint32_t rkey,
		       uint8_t info[MRCP_CONN_INFO_LEN])
{
	struct mrcp_conn_info ci;
	int rc = mrcp_qp_local_info(dp->eng, s->qpn, &ci);

	if (rc < 0)
		return rc;
	ci.buf_va = va;
	ci.buf_len = len;
	ci.buf_rkey = rkey;
	rc = mrcp_conn_info_encode(&ci, info, MRCP_CONN_INFO_LEN);
	return rc < 0 ? rc : 0;
}

/* ---- the operations ------------------------------------------------------------ */

int mrcd_st_listen(struct mrcd_dp *dp, uint64_t region_bytes, uint64_t now,
		   uint32_t *id, uint8_t info[MRCP_CONN_INFO_LEN])
{
	struct st *s = st_alloc(dp);
	int rc;

	if (!s)
		return -ENOSPC;
	s->role = MRCD_ST_RECEIVER;
	s->state = MRCD_ST_LISTENING;
	s->last_ns = now;
	rc = st_setup(dp, s, region_bytes, MRCP_ACCESS_LOCAL_WRITE | MRCP_ACCESS_REMOTE_WRITE);
	if (rc == 0)
		rc = encode_info(dp, s, (uint64_t)(uintptr_t)s->buf, region_bytes, s->rkey, info);
	if (rc < 0) {
		st_free(dp, s, now);
		return rc;
	}
	*id = s->id;
	return 0;
}

int mrcd_st_start(struct mrcd_dp *dp, const uint8_t peer[MRCP_CONN_INFO_LEN], uint64_t bytes,
		  uint32_t msg_size, uint32_t window, enum mrcd_st_op op, uint64_t now,
		  uint32_t *id, uint8_t info[MRCP_CONN_INFO_LEN])
{
	struct mrcp_conn_info ci;
	struct st *s;
	int rc = mrcp_conn_info_decode(peer, MRCP_CONN_INFO_LEN, &ci);

	if (rc < 0)
		return rc;
	if (bytes == 0 || msg_size == 0 || window == 0 || ci.buf_len < msg_size)
		return -EINVAL;
	if (op == MRCD_ST_OP_PING_PONG) {
		/* whole messages, one in flight */
		window = 1;
		if ((bytes + msg_size - 1) / msg_size > MRCD_ST_PP_MAX)
			return -ERANGE;
		bytes = (bytes + msg_size - 1) / msg_size * msg_size;
	}
	uint64_t usable = ci.buf_len / msg_size * msg_size;
	if ((uint64_t)window * msg_size > usable / 2 && usable / msg_size > 1)
		return -E2BIG;     /* the window must fit half the peer's region */
	if ((uint64_t)window * msg_size > (256ull << 20))
		return -E2BIG;
	s = st_alloc(dp);
	if (!s)
		return -ENOSPC;
	s->role = MRCD_ST_SENDER;
	s->state = MRCD_ST_CONNECTED;
	s->last_ns = now;
	s->op = (uint8_t)op;
	s->bytes = bytes;
	s->msg_size = msg_size;
	s->window = usable / msg_size > 1 ? window : 1;
	s->n_msgs = (bytes + msg_size - 1) / msg_size;
	s->usable = usable;
	s->peer_va = ci.buf_va;
	s->peer_rkey = ci.buf_rkey;
	if (op == MRCD_ST_OP_PING_PONG) {
		/* the message's slot and the echo's */
		rc = st_setup(dp, s, 2ull * msg_size, MRCP_ACCESS_LOCAL_WRITE | MRCP_ACCESS_REMOTE_WRITE);
		if (rc == 0) {
			s->rtt = mmap(NULL, s->n_msgs * sizeof(*s->rtt), PROT_READ | PROT_WRITE,
				      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (s->rtt == MAP_FAILED) {
				s->rtt = NULL;
				rc = -ENOMEM;
			}
			s->rtt_warmup = s->n_msgs / 10 < MRCD_ST_PP_WARMUP ? s->n_msgs / 10 : MRCD_ST_PP_WARMUP;
			s->rtt_min = UINT64_MAX;
		}
		if (rc == 0)
			rc = mrcp_qp_connect(dp->eng, s->qpn, &ci, now);
		for (unsigned k = 0; rc == 0 && k < 64; k++)
			if (mrcp_qp_post_recv(dp->eng, s->qpn, k) < 0)
				break;
		if (rc == 0)
			rc = encode_info(dp, s, (uint64_t)(uintptr_t)s->buf + msg_size,
					 msg_size | MRCD_ST_PP_TAG, s->rkey, info);
	} else {
		rc = st_setup(dp, s, (uint64_t)s->window * msg_size, MRCP_ACCESS_LOCAL_WRITE);
		if (rc == 0)
			rc = mrcp_qp_connect(dp->eng, s->qpn, &ci, now);
		if (rc == 0)
			rc = encode_info(dp, s, bytes, msg_size, op, info);
	}
	if (rc < 0) {
		st_free(dp, s, now);
		return rc;
	}
	*id = s->id;
	return 0;
}

int mrcd_st_accept(struct mrcd_dp *dp, uint32_t id, const uint8_t peer[MRCP_CONN_INFO_LEN], uint64_t now)
{
	struct st *s = find(dp, id);
	struct mrcp_conn_info ci;
	int rc;

	if (!s)
		return -ENOENT;
	s->last_ns = now;
	if (s->role != MRCD_ST_RECEIVER || s->state != MRCD_ST_LISTENING)
		return -EPERM;
	rc = mrcp_conn_info_decode(peer, MRCP_CONN_INFO_LEN, &ci);
	if (rc < 0)
		return rc;
	if ((ci.buf_len & ~0xffffffffull) == MRCD_ST_PP_TAG) {
		/* ping-pong: echo each message into the sender's buffer, for
		 * as long as it sends */
		s->msg_size = (uint32_t)ci.buf_len;
		if (ci.buf_va == 0 || s->msg_size == 0 || s->msg_size > s->buf_len)
			return -EINVAL;
		s->op = MRCD_ST_OP_PING_PONG;
		s->window = 1;
		s->peer_va = ci.buf_va;
		s->peer_rkey = ci.buf_rkey;
		s->n_msgs = UINT64_MAX / s->msg_size;
		s->bytes = s->n_msgs * s->msg_size;
	} else {
		if (ci.buf_va == 0 || ci.buf_len == 0 || ci.buf_len > s->buf_len || ci.buf_rkey > MRCD_ST_OP_MIXED)
			return -EINVAL;
		s->bytes = ci.buf_va;
		s->msg_size = (uint32_t)ci.buf_len;
		s->op = (uint8_t)ci.buf_rkey;
		s->n_msgs = (s->bytes + s->msg_size - 1) / s->msg_size;
	}
	s->usable = s->buf_len / s->msg_size * s->msg_size;
	rc = mrcp_qp_connect(dp->eng, s->qpn, &ci, now);
	if (rc < 0)
		return rc;
	for (unsigned k = 0; k < 512; k++)
		if (mrcp_qp_post_recv(dp->eng, s->qpn, k) < 0)
			break;
	s->state = MRCD_ST_CONNECTED;
	return 0;
}

int mrcd_st_run(struct mrcd_dp *dp, uint32_t id, uint64_t now)
{
	struct st *s = find(dp, id);

	if (!s)
		return -ENOENT;
	s->last_ns = now;
	if (s->role != MRCD_ST_SENDER || s->state != MRCD_ST_CONNECTED)
		return -EPERM;
	s->state = MRCD_ST_RUNNING;
	s->t_start = now;
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* Ping-pong: min, mean and max of the counted round trips so far; the
 * percentiles once the run is over (the samples are sorted then, once). */
static void rtt_stats(struct st *s, struct mrcd_st_status *o)
{
	uint64_t warm = s->rtt_warmup, n;
	const uint32_t *r;

	o->rtt_warmup = warm;
	if (s->n_rtt <= warm)
		return;
	n = s->n_rtt - warm;
	r = s->rtt + warm;
	if (s->state == MRCD_ST_DONE && !s->rtt_sorted) {
		qsort(s->rtt + warm, n, sizeof(*r), cmp_u32);
		s->rtt_sorted = true;
	}
	o->rtt_samples = n;
	o->rtt_min_ns = s->rtt_min;
	o->rtt_max_ns = s->rtt_max;
	o->rtt_mean_ns = s->rtt_sum / n;
	if (s->rtt_sorted) {
		/* nearest rank */
		o->rtt_p50_ns = r[(n * 50 + 99) / 100 - 1];
		o->rtt_p90_ns = r[(n * 90 + 99) / 100 - 1];
		o->rtt_p99_ns = r[(n * 99 + 99) / 100 - 1];
	}
}

int mrcd_st_status(struct mrcd_dp *dp, uint32_t id, uint64_t now, struct mrcd_st_status *o)
{
	struct st *s = find(dp, id);
	struct mrcp_qp_info qi;

	if (!s)
		return -ENOENT;
	s->last_ns = now;
	memset(o, 0, sizeof(*o));
	o->id = s->id;
	o->role = s->role;
	o->state = s->state;
	o->qpn = s->qpn;
	o->op = s->op;
	/* a ping-pong's receiver echoes until it is stopped: no target */
	bool open_ended = s->op == MRCD_ST_OP_PING_PONG && s->role == MRCD_ST_RECEIVER;

	o->bytes_target = open_ended ? 0 : s->bytes;
	o->bytes_done = s->bytes_done;
	o->msgs_target = open_ended ? 0 : s->n_msgs;
	o->msgs_done = s->msgs_done;
	o->imm_msgs = s->imm_msgs;
	o->msg_size = s->msg_size;
	o->window = s->window;
	if (s->t_start)
		o->elapsed_ns = (s->t_end ? s->t_end : now) - s->t_start;
	if (o->elapsed_ns)
		o->goodput_gbps = (double)s->bytes_done * 8 / (double)o->elapsed_ns;
	if (mrcp_qp_info(dp->eng, s->qpn, &qi) == 0) {
		o->qp_state = qi.state;
		o->rtx_fast = qi.c.rtx_fast;
		o->rtx_nack = qi.c.rtx_nack;
		o->rtx_rto = qi.c.rtx_rto;
		o->rtx_port_down = qi.c.rtx_port_down;
		o->rtx_total = o->rtx_fast + o->rtx_nack + o->rtx_rto + o->rtx_port_down;
	}
	o->ev_transitions = s->ev_transitions;
	o->verify_errors = s->verify_errors;
	if (s->rtt)
		rtt_stats(s, o);
	snprintf(o->error, sizeof(o->error), "%s", s->error);
	return 0;
}

int mrcd_st_stop(struct mrcd_dp *dp, uint32_t id, uint64_t now)
{
	struct st *s = find(dp, id);

	if (!s)
		return -ENOENT;
	st_free(dp, s, now);
	return 0;
}

void mrcd__st_fini(struct mrcd_dp *dp, uint64_t now)
{
	struct st_table *t = table(dp, false);

	if (!t)
		return;
	for (unsigned i = 0; i < MRCD_ST_MAX; i++)
		if (t->st[i].used)
			st_free(dp, &t->st[i], now);
	if (t->hooked)
		mrcd_dp_del_hook(dp, st_hook, t);
	free(t);
	dp->selftests = NULL;
}

unsigned mrcd_st_worker_of(uint32_t id, unsigned n_workers)
{
	return n_workers ? id % n_workers : 0;
}
