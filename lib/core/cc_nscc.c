/* cc_nscc.c - NSCC, MRC's default congestion control (§6, D52): one
 * window per QPCC (D53), moved by ECN echoes, TSETH delay, trims, losses, RTO
 * rounds and the responder penalty. It owns cwnd and reads the inflight count
 * the engine keeps; it does not decide what is lost or which EV to use
 * (reliability and multipath do, and tell it through the hooks). */

/*
 * Units. Time is integer ns and every window quantity is integer bytes. Three
 * values need fractions, and keep them:
 *  - inc, the increase accumulator, is a double in bytes^2. A SACK adds
 *    alpha x newly_rcvd x (target - delay) (proportional increase) or
 *    fi x newly_rcvd (fair increase); an adjustment turns it into
 *    cwnd += inc / cwnd bytes. Over one cwnd of SACKed bytes, fair increase
 *    therefore grows the window by fi bytes.
 *  - alpha is in bytes per ns: over one cwnd of SACKed bytes at queueing delay
 *    d, proportional increase grows the window by alpha x (target - d) bytes,
 *    that is 4 x sa x sb x MTU bytes when d = 0.
 *  - avg_delay is fixed point in 1/256 ns, so that the EWMA's 1/80 steps keep
 *    sub-ns resolution with integer arithmetic.
 * MTU in alpha, fi and eta is the payload MTU (params.mtu, as htsim's mss);
 * min_cwnd and adjust_bytes count nominal packets (payload + pkt_overhead),
 * the unit inflight and rcvd_bytes are kept in (§6.1, D19).
 */
#include "mrcp_cc.h"
#include "mrcp_seq.h"

#include <errno.h>
#include <string.h>

/* The UE reference network that sa and sb are relative to (§6.4). */
#define REF_BDP_BYTES 150000.0  /* 100 Gb/s x 12 us */
#define REF_RTT_NS 12000.0
#define DEFAULT_BASE_RTT_NS 12000u /* §6.4: "12 us if unset" */
/* Below one TSETH tick (D13) a sample carries no information, and a zero
 * base_rtt would zero the target and divide by it. */
#define MIN_RTT_NS 128u
/* BDP arithmetic stays exact in 64 bits up to here; larger is a config error. */
#define MAX_BASE_RTT_NS 1000000000u
/* §6.2: fast increase needs the delay below 1 us (htsim's tolerance). */
#define FAST_INC_DELAY_NS 1000u
/* §6.3: avg_delay EWMA weight 0.0125 = 1/80, kept in 1/256 ns. */
#define EWMA_DIV 80u
#define AVG_SHIFT 8
/* Caps a sample so that avg x (EWMA_DIV - 1) cannot overflow. */
#define EWMA_SAMPLE_MAX_NS 1000000000000ull

/** Per-QPCC state (ops->priv_size bytes). Written only by the QPCC's worker. */
struct nscc {
	struct mrcp_cc_params cfg; /**< as configured: 0 still means "derive" */

	/* parameters in use (§6.4); derive() refreshes them when base_rtt falls */
	uint64_t ref_rtt_ns;       /**< the configured base_rtt: sa and the adjust period (D66) */
	uint64_t base_rtt_ns;      /**< ns; only ever falls */
	uint64_t target_ns;        /**< target_qdelay, ns */
	uint64_t pkt_bytes;        /**< nominal MTU packet, bytes */
	uint64_t min_cwnd, max_cwnd; /**< bytes */
	double alpha;              /**< bytes per ns */
	double fi;                 /**< bytes per cwnd of SACKed bytes */
	double eta;                /**< bytes per adjust period */
	double fi_scale;           /**< bytes per SACKed byte */
	double gamma, max_md_jump;
	uint64_t adjust_period_ns, adjust_bytes, qa_threshold_ns;
	uint32_t qa_gate;

	/* window */
	uint64_t cwnd;             /**< bytes */
	double inc;                /**< bytes^2, applied as inc / cwnd */
	uint64_t adj_bytes;        /**< bytes SACKed since the last adjustment */
	uint64_t last_adjust_ns;   /**< when eta was last added */
	uint64_t avg_delay_fp;     /**< queueing-delay EWMA, 1/256 ns */

	/* fast increase (§6.2) */
	uint64_t fi_bytes;         /**< bytes SACKed while delay stayed < 1 us */
	bool fi_mode;              /**< a full cwnd has passed below 1 us */

	/* multiplicative decrease, at most once per base_rtt (§6.2) */
	bool md_done;
	uint64_t last_md_ns;

	/* quick adapt (§6.3) */
	uint64_t qa_end_ns;        /**< end of the current window */
	uint64_t qa_acked;         /**< bytes SACKed in the current window */
	bool qa_signal;            /**< the window saw a trim, loss, RTO or high delay */
	uint64_t ignore_left;      /**< bytes whose decrease signals are ignored */

	/* responder penalty (§6.5, D55) */
	bool pen_active;           /**< cwnd saved, waiting for r_c */
	uint64_t saved_cwnd;       /**< bytes */

	/* counters, never reset */
	uint64_t md_events;        /**< multiplicative decreases applied */
	uint64_t qa_events;        /**< quick adapts fired */
	uint64_t fast_inc_events;  /**< SACKs that applied a fast increase */
	uint64_t pen_events;       /**< penalty episodes (first penalised SACKs) */
};

static uint64_t sub_sat(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/* A non-negative byte amount, rounded to nearest. */
static uint64_t to_bytes(double x)
{
	if (!(x > 0))
		return 0;
	if (x >= 9.0e18)
		return UINT64_MAX / 2;
	return (uint64_t)(x + 0.5);
}

/* BDP = link_bps / 8 x base_rtt (§6.4, D54), without 64-bit overflow for
 * rtt_ns <= MAX_BASE_RTT_NS. */
static uint64_t bdp_bytes(uint64_t link_bps, uint64_t rtt_ns)
{
	const uint64_t d = 8000000000ull; /* bits per byte x ns per s */

	return link_bps / d * rtt_ns + link_bps % d * rtt_ns / d;
}

static uint64_t avg_delay_ns(const struct nscc *s)
{
	return (s->avg_delay_fp + (1u << (AVG_SHIFT - 1))) >> AVG_SHIFT;
}

static void clamp_cwnd(struct nscc *s)
{
	if (s->cwnd < s->min_cwnd)
		s->cwnd = s->min_cwnd;
	if (s->cwnd > s->max_cwnd)
		s->cwnd = s->max_cwnd;
}

/* §6.4 defaults for every parameter left at 0. BDP, max_cwnd and the delay
 * target follow the current base_rtt; the BDP scaling sa of the gains and
 * the adjust period stay those of the configured network, ref_rtt_ns (D66). */
static void derive(struct nscc *s)
{
	const struct mrcp_cc_params *c = &s->cfg;
	uint64_t bdp = bdp_bytes(c->link_bps, s->base_rtt_ns);
	uint64_t ref_bdp = bdp_bytes(c->link_bps, s->ref_rtt_ns);
	double sa, sb;

	if (c->target_qdelay_ns != 0)
		s->target_ns = c->target_qdelay_ns;
	else if (c->trimming_fabric)
		s->target_ns = s->base_rtt_ns * 3 / 4;
	else
		s->target_ns = s->base_rtt_ns;

	s->max_cwnd = c->max_cwnd != 0 ? c->max_cwnd : bdp + bdp / 2;
	if (s->max_cwnd < s->min_cwnd) /* a link too slow for one packet per RTT */
		s->max_cwnd = s->min_cwnd;

	sa = (double)ref_bdp / REF_BDP_BYTES;
	sb = (double)s->target_ns / REF_RTT_NS;
	s->alpha = 4.0 * sa * sb * (double)c->mtu / (double)s->target_ns;
	s->fi = c->fi > 0 ? c->fi : 5.0 * (double)c->mtu * sa;
	s->eta = c->eta > 0 ? c->eta : 0.15 * (double)c->mtu * sa;
	s->fi_scale = c->fi_scale > 0 ? c->fi_scale : 0.25 * sa;
	s->gamma = c->gamma > 0 ? c->gamma : 0.8;
	s->max_md_jump = c->max_md_jump > 0 ? c->max_md_jump : 0.5;
	/* §6.4 lists "adjust_period_threshold / adjust_bytes_threshold:
	 * base_rtt / 8 x MTU", slash-separated like the qa_gate row: a period
	 * of one base_rtt and 8 nominal packets of bytes, which are also UEC
	 * htsim's values (initNsccParams). */
	s->adjust_period_ns = c->adjust_period_ns != 0 ? c->adjust_period_ns : s->ref_rtt_ns;
	s->adjust_bytes = c->adjust_bytes != 0 ? c->adjust_bytes : 8 * s->pkt_bytes;
	s->qa_gate = c->qa_gate != 0 ? c->qa_gate : 3;
	s->qa_threshold_ns = c->qa_threshold_ns != 0 ? c->qa_threshold_ns : 4 * s->target_ns;
}

static bool params_ok(const struct mrcp_cc_params *p)
{
	if (p == NULL || p->link_bps == 0 || p->mtu == 0 ||
	    p->base_rtt_ns > MAX_BASE_RTT_NS)
		return false;
	/* !(x >= 0) also rejects NaN; 0 means "default". */
	if (!(p->fi >= 0) || !(p->eta >= 0) || !(p->fi_scale >= 0) ||
	    !(p->gamma >= 0) || !(p->max_md_jump >= 0) || p->max_md_jump > 1)
		return false;
	if (p->qa_gate >= 64)
		return false;
	return true;
}

static int nscc_init(void *priv, const struct mrcp_cc_params *p, uint64_t now_ns)
{
	struct nscc *s = priv;

	if (!params_ok(p))
		return -EINVAL;
	memset(s, 0, sizeof(*s));
	s->cfg = *p;
	s->base_rtt_ns = p->base_rtt_ns != 0 ? p->base_rtt_ns : DEFAULT_BASE_RTT_NS;
	if (s->base_rtt_ns < MIN_RTT_NS)
		s->base_rtt_ns = MIN_RTT_NS;
	s->ref_rtt_ns = s->base_rtt_ns;
	s->pkt_bytes = (uint64_t)p->mtu + p->pkt_overhead;
	s->min_cwnd = p->min_cwnd != 0 ? p->min_cwnd : s->pkt_bytes; /* §6.4 */
	if (p->max_cwnd != 0 && p->max_cwnd < s->min_cwnd)
		return -EINVAL;
	derive(s);
	s->cwnd = s->max_cwnd; /* §6.4: new flows start at line rate */
	s->last_adjust_ns = now_ns;
	s->qa_end_ns = now_ns + s->base_rtt_ns + s->target_ns;
	return 0;
}

/* §6.5: cwnd -= newly_rcvd x pen / 128, saving cwnd at the first penalised
 * SACK and restoring it on r_c. @return whether this SACK is penalised. */
static bool apply_penalty(struct nscc *s, const struct mrcp_cc_sack *sk)
{
	uint64_t pen = sk->pen > 127 ? 127 : sk->pen;

	if (sk->r_c && s->pen_active) {
		s->cwnd = s->saved_cwnd; /* clamped by the caller */
		s->pen_active = false;
	}
	if (pen == 0)
		return false;
	if (!s->pen_active) {
		s->pen_active = true;
		s->saved_cwnd = s->cwnd;
		s->pen_events++;
	}
	s->cwnd = sub_sat(s->cwnd, sk->newly_rcvd * pen / 128);
	return true;
}

/* §6.3: base_rtt only falls, and BDP, max_cwnd and target follow it
 * (explicit overrides stay as configured; sa and the adjust period do not
 * move, D66). */
static void lower_base_rtt(struct nscc *s, uint64_t rtt_ns)
{
	s->base_rtt_ns = rtt_ns;
	derive(s);
}

static void ewma_add(struct nscc *s, uint64_t sample_ns)
{
	if (sample_ns > EWMA_SAMPLE_MAX_NS)
		sample_ns = EWMA_SAMPLE_MAX_NS;
	s->avg_delay_fp = (s->avg_delay_fp * (EWMA_DIV - 1) +
			   (sample_ns << AVG_SHIFT) + EWMA_DIV / 2) / EWMA_DIV;
}

/* Take a valid RTT sample (§6.1). @return the queueing delay, ns. */
static uint64_t take_rtt_sample(struct nscc *s, const struct mrcp_cc_sack *sk)
{
	uint64_t rtt = sk->rtt_ns < MIN_RTT_NS ? MIN_RTT_NS : sk->rtt_ns;
	uint64_t delay;

	if (rtt < s->base_rtt_ns)
		lower_base_rtt(s, rtt);
	delay = rtt - s->base_rtt_ns;
	/* §6.3, after UEC htsim: delay without ECN is not read as forward
	 * queueing, so an unmarked sample above target enters as base_rtt / 4. */
	ewma_add(s, !sk->ecn && delay > s->target_ns ? s->base_rtt_ns / 4 : delay);
	/* §6.3: only fabrics without trimming use delay as a quick-adapt cue. */
	if (!s->cfg.trimming_fabric && delay > s->qa_threshold_ns)
		s->qa_signal = true;
	return delay;
}

/* §6.3 quick adapt, run once per window of base_rtt + target_qdelay: if the
 * window saw a trim, loss, RTO or (no trimming) high delay and acknowledged
 * less than max_cwnd >> qa_gate, cut cwnd to what it acknowledged.
 * @return whether it fired. */
static bool quick_adapt(struct nscc *s, uint64_t inflight, uint64_t now_ns)
{
	bool fire;

	if (s->cfg.disable_qa || mrcp_time_lt(now_ns, s->qa_end_ns))
		return false;
	fire = s->qa_signal && s->qa_acked < (s->max_cwnd >> s->qa_gate);
	if (fire) {
		uint64_t w = s->qa_acked > s->min_cwnd ? s->qa_acked : s->min_cwnd;

		/* A cut, never a raise: htsim flags achieved > cwnd as a bug. */
		if (w < s->cwnd)
			s->cwnd = w;
		/* The signals of the bytes now in flight describe the queue
		 * this window was sized against: ignore their decreases. */
		s->ignore_left = inflight;
		s->inc = 0;
		s->adj_bytes = 0;
		s->fi_bytes = 0;
		s->fi_mode = false;
		s->qa_events++;
	}
	/* Each window judges only what it saw. */
	s->qa_acked = 0;
	s->qa_signal = false;
	s->qa_end_ns = now_ns + s->base_rtt_ns + s->target_ns;
	return fire;
}

static bool ignoring_decreases(const struct nscc *s)
{
	return !s->cfg.disable_qa && s->ignore_left > 0;
}

/* §6.2 proportional increase, or fast increase once delay has stayed below
 * 1 us for a full cwnd of bytes. Fast increase replaces the proportional
 * term for the SACKs it applies to, as in htsim (proportional_increase). */
static void proportional_increase(struct nscc *s, uint64_t n, uint64_t delay)
{
	if (n == 0)
		return;
	if (delay < FAST_INC_DELAY_NS) {
		s->fi_bytes += n;
		if (s->fi_mode || s->fi_bytes > s->cwnd) {
			s->fi_mode = true;
			s->cwnd += to_bytes((double)n * s->fi_scale);
			s->fast_inc_events++;
			return;
		}
	}
	s->inc += s->alpha * (double)n * (double)(s->target_ns - delay);
}

/* §6.2 multiplicative decrease on avg_delay, capped at max_md_jump and at
 * most once per base_rtt, since the next RTT's delays cannot show it yet. */
static void multiplicative_decrease(struct nscc *s, uint64_t now_ns)
{
	double avg = (double)s->avg_delay_fp / (double)(1u << AVG_SHIFT);
	double target = (double)s->target_ns;
	double f, floor_f;

	s->fi_bytes = 0;
	s->fi_mode = false;
	if (!(avg > target))
		return;
	if (s->md_done && mrcp_time_lt(now_ns, s->last_md_ns + s->base_rtt_ns))
		return;
	f = 1.0 - s->gamma * (avg - target) / avg;
	floor_f = 1.0 - s->max_md_jump;
	if (f < floor_f)
		f = floor_f;
	s->cwnd = to_bytes((double)s->cwnd * f);
	s->md_done = true;
	s->last_md_ns = now_ns;
	s->md_events++;
}

/* The §6.2 decision table for one SACK. A penalised SACK (§6.5) takes no
 * increase: the responder is asking for less, and "pen 64 for one RTT
 * halves the window" holds only if nothing adds back meanwhile. */
static void decide(struct nscc *s, bool ecn, uint64_t delay, uint64_t n,
		   bool penalised, bool ignore, uint64_t now_ns)
{
	if (delay >= FAST_INC_DELAY_NS) {
		s->fi_bytes = 0;
		s->fi_mode = false;
	}
	if (!ecn && delay < s->target_ns) {
		if (!penalised)
			proportional_increase(s, n, delay);
	} else if (!ecn) {
		if (!penalised)
			s->inc += s->fi * (double)n; /* fair increase */
	} else if (delay >= s->target_ns) {
		if (!ignore)
			multiplicative_decrease(s, now_ns);
	}
	/* ECN below target: no window change; the EV skip (D47) handles it
	 * as a path-level signal. */
}

/* §6.3 step 3: apply inc every adjust_bytes or adjust_period, and eta once
 * per adjust period. */
static void adjust(struct nscc *s, uint64_t now_ns)
{
	bool period = mrcp_time_le(s->last_adjust_ns + s->adjust_period_ns, now_ns);
	double add;

	if (s->adj_bytes <= s->adjust_bytes && !period)
		return;
	add = s->inc / (double)s->cwnd;
	if (period) {
		add += s->eta;
		s->last_adjust_ns = now_ns;
	}
	s->cwnd += to_bytes(add);
	s->inc = 0;
	s->adj_bytes = 0;
}

static void nscc_on_sack(void *priv, const struct mrcp_cc_sack *sk, uint64_t now_ns)
{
	struct nscc *s = priv;
	uint64_t n = sk->newly_rcvd;
	bool penalised = false;
	uint64_t delay;

	/* These bytes were part of any inflight quick adapt is ignoring. */
	bool ignore = ignoring_decreases(s);

	s->qa_acked += n;
	s->adj_bytes += n;
	s->ignore_left = sub_sat(s->ignore_left, n);

	if (!s->cfg.disable_pen)
		penalised = apply_penalty(s, sk);
	/* Without a valid sample (§6.1) the table still runs, on the
	 * average, as htsim does for an ACK it has no send time for. */
	delay = sk->rtt_valid ? take_rtt_sample(s, sk) : avg_delay_ns(s);

	if (quick_adapt(s, sk->inflight, now_ns)) { /* §6.3 step 1 */
		clamp_cwnd(s);
		return;
	}
	decide(s, sk->ecn, delay, n, penalised, ignore, now_ns); /* step 2 */
	clamp_cwnd(s);
	if (!penalised)
		adjust(s, now_ns); /* step 3 */
	clamp_cwnd(s); /* step 4 */
}

/* §6.3: a trim NACK, an inferred loss or an RTO round runs quick adapt and,
 * if it did not fire, takes @cut bytes (one nominal packet) off cwnd, unless
 * it is about bytes whose decreases quick adapt ignores. @resolved bytes
 * leave that ignored inflight. */
static void drop_signal(struct nscc *s, uint64_t cut, uint64_t resolved, uint64_t inflight,
			uint64_t now_ns)
{
	bool ignore = ignoring_decreases(s);

	s->ignore_left = sub_sat(s->ignore_left, resolved);
	s->qa_signal = true;
	if (quick_adapt(s, inflight, now_ns) || ignore)
		return;
	s->cwnd = sub_sat(s->cwnd, cut);
	clamp_cwnd(s);
}

static void nscc_on_nack(void *priv, uint64_t bytes, uint64_t inflight, uint64_t now_ns)
{
	drop_signal(priv, bytes, bytes, inflight, now_ns);
}

/* An RTO round names no packet size, so it costs one nominal MTU packet. */
static void nscc_on_timeout(void *priv, uint64_t inflight, uint64_t now_ns)
{
	struct nscc *s = priv;

	drop_signal(s, s->pkt_bytes, 0, inflight, now_ns);
}

/* §6.1: the engine sends while inflight + packet <= cwnd. */
static uint64_t nscc_cwnd(const void *priv)
{
	const struct nscc *s = priv;

	return s->cwnd;
}

static void nscc_stats(const void *priv, struct mrcp_cc_stats *out)
{
	const struct nscc *s = priv;

	memset(out, 0, sizeof(*out));
	out->cwnd = s->cwnd;
	out->base_rtt_ns = s->base_rtt_ns;
	out->target_qdelay_ns = s->target_ns;
	out->avg_delay_ns = avg_delay_ns(s);
	out->max_cwnd = s->max_cwnd;
	out->min_cwnd = s->min_cwnd;
	out->md_events = s->md_events;
	out->qa_events = s->qa_events;
	out->fast_inc_events = s->fast_inc_events;
	out->pen_events = s->pen_events;
	out->alpha = s->alpha;
	out->fi = s->fi;
	out->eta = s->eta;
	out->fi_scale = s->fi_scale;
	out->gamma = s->gamma;
	out->max_md_jump = s->max_md_jump;
	out->adjust_period_ns = s->adjust_period_ns;
	out->adjust_bytes = s->adjust_bytes;
	out->qa_threshold_ns = s->qa_threshold_ns;
	out->qa_gate = s->qa_gate;
}

const struct mrcp_cc_ops mrcp_cc_nscc = {
	.name = "nscc",
	.priv_size = sizeof(struct nscc),
	.init = nscc_init,
	.cwnd = nscc_cwnd,
	.stats = nscc_stats,
	.on_sack = nscc_on_sack,
	.on_nack = nscc_on_nack,
	.on_loss = nscc_on_nack, /* a loss cuts as a trim NACK does (§6.3) */
	.on_timeout = nscc_on_timeout,
};
