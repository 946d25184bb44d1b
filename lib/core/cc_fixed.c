/* cc_fixed.c - the "fixed" congestion control (D56): a constant window with
 * the same inflight accounting as NSCC (§6.1) that ignores every congestion
 * signal; a baseline for tests and experiments, not for shared fabrics. */
#include "mrcp_cc.h"

#include <errno.h>
#include <string.h>

#define DEFAULT_BASE_RTT_NS 12000u   /* §6.4 */
#define MAX_BASE_RTT_NS 1000000000u  /* as cc_nscc.c: keeps the BDP exact */

/** Per-QPCC state. Written only by the QPCC's worker. */
struct fixed {
	uint64_t cwnd;        /**< bytes, constant after init */
	uint64_t inflight;    /**< bytes */
	uint64_t base_rtt_ns; /**< as configured, for stats */
};

static uint64_t sub_sat(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

static int fixed_init(void *priv, const struct mrcp_cc_params *p, uint64_t now_ns)
{
	struct fixed *s = priv;
	const uint64_t d = 8000000000ull; /* bits per byte x ns per s */
	uint64_t rtt, bdp;

	(void)now_ns;
	if (p == NULL || p->base_rtt_ns > MAX_BASE_RTT_NS)
		return -EINVAL;
	if (p->fixed_cwnd == 0 && p->link_bps == 0)
		return -EINVAL; /* nothing to size the window from */
	rtt = p->base_rtt_ns != 0 ? p->base_rtt_ns : DEFAULT_BASE_RTT_NS;
	/* BDP = link_bps / 8 x base_rtt (§6.4, D54) without 64-bit overflow. */
	bdp = p->link_bps / d * rtt + p->link_bps % d * rtt / d;
	memset(s, 0, sizeof(*s));
	s->base_rtt_ns = rtt;
	s->cwnd = p->fixed_cwnd != 0 ? p->fixed_cwnd : bdp + bdp / 2;
	if (s->cwnd == 0)
		return -EINVAL;
	return 0;
}

static void fixed_on_send(void *priv, uint64_t bytes, uint64_t now_ns)
{
	struct fixed *s = priv;

	(void)now_ns;
	s->inflight += bytes;
}

static void fixed_on_sack(void *priv, const struct mrcp_cc_sack *sk, uint64_t now_ns)
{
	struct fixed *s = priv;

	(void)now_ns;
	s->inflight = sub_sat(s->inflight, sk->acked); /* the scoreboard's count */
}

static void fixed_on_nack(void *priv, uint64_t bytes, uint64_t now_ns)
{
	struct fixed *s = priv;

	(void)now_ns;
	s->inflight = sub_sat(s->inflight, bytes);
}

static void fixed_on_timeout(void *priv, uint64_t outstanding, uint64_t now_ns)
{
	struct fixed *s = priv;

	(void)now_ns;
	s->inflight = outstanding; /* §6.1: re-sync after an RTO round */
}

/* As NSCC: an empty pipe may always send. */
static bool fixed_can_send(const void *priv, uint64_t bytes)
{
	const struct fixed *s = priv;

	/* as NSCC: less than one packet in flight never blocks */
	return s->inflight < bytes || s->inflight + bytes <= s->cwnd;
}

static void fixed_stats(const void *priv, struct mrcp_cc_stats *out)
{
	const struct fixed *s = priv;

	memset(out, 0, sizeof(*out));
	out->cwnd = s->cwnd;
	out->inflight = s->inflight;
	out->base_rtt_ns = s->base_rtt_ns;
	out->max_cwnd = s->cwnd;
	out->min_cwnd = s->cwnd;
}

static void fixed_on_forget(void *priv, uint64_t bytes)
{
	struct fixed *s = priv;

	s->inflight = sub_sat(s->inflight, bytes);
}

const struct mrcp_cc_ops mrcp_cc_fixed = {
	.name = "fixed",
	.priv_size = sizeof(struct fixed),
	.init = fixed_init,
	.on_send = fixed_on_send,
	.on_sack = fixed_on_sack,
	.on_nack = fixed_on_nack,
	.on_loss = fixed_on_nack, /* a loss leaves inflight like a NACK */
	.on_timeout = fixed_on_timeout,
	.can_send = fixed_can_send,
	.stats = fixed_stats,
	.on_forget = fixed_on_forget,
};
