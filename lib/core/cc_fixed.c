/* cc_fixed.c - the "fixed" congestion control (D56): a constant window that
 * ignores every congestion signal (the engine keeps inflight, as for every
 * algorithm); a baseline for tests and experiments, not for shared fabrics. */
#include "mrcp_cc.h"

#include <errno.h>
#include <string.h>

#define DEFAULT_BASE_RTT_NS 12000u   /* §6.4 */
#define MAX_BASE_RTT_NS 1000000000u  /* as cc_nscc.c: keeps the BDP exact */

/** Per-QPCC state. Written only by the QPCC's worker. */
struct fixed {
	uint64_t cwnd;        /**< bytes, constant after init */
	uint64_t base_rtt_ns; /**< as configured, for stats */
};

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

static uint64_t fixed_cwnd(const void *priv)
{
	const struct fixed *s = priv;

	return s->cwnd;
}

static void fixed_stats(const void *priv, struct mrcp_cc_stats *out)
{
	const struct fixed *s = priv;

	memset(out, 0, sizeof(*out));
	out->cwnd = s->cwnd;
	out->base_rtt_ns = s->base_rtt_ns;
	out->max_cwnd = s->cwnd;
	out->min_cwnd = s->cwnd;
}

const struct mrcp_cc_ops mrcp_cc_fixed = {
	.name = "fixed",
	.priv_size = sizeof(struct fixed),
	.init = fixed_init,
	.cwnd = fixed_cwnd,
	.stats = fixed_stats,
	/* no signal hooks: every congestion signal is ignored */
};
