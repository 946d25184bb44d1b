/* perf_util.h - the parts of mrc-perf that need no daemon: option value
 * parsing, the latency histogram, the bootstrap line codec, the immediate
 * layout and the verification pattern. Unit-tested in test_mrc_perf.c;
 * knows nothing about libmrc-client or sockets.
 */
#ifndef MRC_PERF_UTIL_H
#define MRC_PERF_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PERF_PROTO_VERSION 1
#define PERF_LINE_MAX 1024           /* longest bootstrap line, bytes incl. '\n' */
#define PERF_MAX_SIZE (1ull << 30)   /* largest --size, bytes */
#define PERF_MAX_WINDOW 4096u        /* largest --window, messages */
#define PERF_MAX_QPS 256u            /* largest --qps */
#define PERF_MIN_VERIFY_SIZE 16u     /* header word + checksum word, bytes */

/* ---- option values ------------------------------------------------------- */

/** Parse "4096", "64K", "1M", "2G" (binary multiples; an optional "B" or
 *  "iB" after the letter). @return 0, -EINVAL (syntax), -ERANGE (overflow). */
int perf_parse_size(const char *s, uint64_t *out);
/** Parse a non-negative decimal number of seconds ("2", "0.5") into ns.
 *  @return 0, -EINVAL, -ERANGE (more than 10^7 s). */
int perf_parse_seconds(const char *s, uint64_t *out_ns);
/** Parse an unsigned decimal integer in [min, max]. @return 0, -EINVAL, -ERANGE. */
int perf_parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* ---- latency histogram ----------------------------------------------------- */

/*
 * Log-linear: values below 2^PERF_HIST_SUB_BITS have a bucket each; above,
 * each power of two is split into 2^PERF_HIST_SUB_BITS equal buckets, so a
 * bucket's width is at most 1/32 of its value (about 3 % error). Percentiles
 * report the upper edge of their bucket, capped at the recorded maximum.
 */
#define PERF_HIST_SUB_BITS 5
#define PERF_HIST_SUB (1u << PERF_HIST_SUB_BITS)
#define PERF_HIST_BUCKETS (PERF_HIST_SUB + (64 - PERF_HIST_SUB_BITS) * PERF_HIST_SUB)

struct perf_hist {
	uint64_t count;                     /**< samples */
	uint64_t min, max;                  /**< ns; min is UINT64_MAX while empty */
	uint64_t sum;                       /**< ns, for the mean */
	uint64_t bucket[PERF_HIST_BUCKETS]; /**< samples per bucket */
};

void perf_hist_init(struct perf_hist *h);
/** Bucket index of @v (exposed for tests). */
unsigned perf_hist_bucket(uint64_t v);
/** Largest value that falls in bucket @b (exposed for tests). */
uint64_t perf_hist_bucket_hi(unsigned b);
void perf_hist_record(struct perf_hist *h, uint64_t v_ns);
/** Add every sample of @src to @dst. */
void perf_hist_merge(struct perf_hist *dst, const struct perf_hist *src);
/** Value at percentile @p (0 < p <= 100), ns; 0 when empty. */
uint64_t perf_hist_percentile(const struct perf_hist *h, double p);

/* ---- immediate layout ------------------------------------------------------- */

/*
 * bit 31: CREDIT - a credit return (bits 0..29: the sender's checked count);
 * bit 30: LAST   - the final data message of this QP and direction;
 * bits 0..29: the message index modulo 2^30 (the receiver knows the full
 * index within 2^30 of its own count, so it can rebuild it).
 */
#define PERF_IMM_CREDIT (1u << 31)
#define PERF_IMM_LAST (1u << 30)
#define PERF_IMM_IDX_MASK ((1u << 30) - 1)

static inline uint32_t perf_imm_make(uint64_t idx, uint32_t flags)
{
	return (uint32_t)(idx & PERF_IMM_IDX_MASK) | flags;
}

/** The full index the immediate @imm names, given that it is @base or later
 *  (and less than 2^30 past @base). */
static inline uint64_t perf_imm_index(uint32_t imm, uint64_t base)
{
	return base + ((imm - (uint32_t)base) & PERF_IMM_IDX_MASK);
}

/* ---- verification pattern ------------------------------------------------------ */

/*
 * A message of len >= 16 bytes for (dir, qp, idx) holds: bytes 0..7 the
 * header word (dir << 63 | 1 << 62 | qp << 48 | idx, little-endian); bytes 8..len-9 a
 * pseudo-random stream seeded by the header word; the last 8 bytes a 64-bit
 * checksum of everything before it. dir is 0 for client->server, 1 for
 * server->client, so a reflected or misrouted message never passes.
 */
enum perf_verify_result {
	PERF_VERIFY_OK = 0,
	PERF_VERIFY_HEADER,   /**< another message (stale slot or misplaced write) */
	PERF_VERIFY_PATTERN,  /**< body differs from the expected stream */
	PERF_VERIFY_CHECKSUM, /**< body as expected, trailer wrong */
};

uint64_t perf_pattern_header(unsigned dir, uint32_t qp, uint64_t idx);
/** Fill @buf (len >= PERF_MIN_VERIFY_SIZE) with the message for (dir, qp, idx). */
void perf_pattern_fill(void *buf, size_t len, unsigned dir, uint32_t qp, uint64_t idx);
/** Check @buf; @bad_off (may be NULL) gets the first bad byte offset.
 *  @return enum perf_verify_result. */
int perf_pattern_check(const void *buf, size_t len, unsigned dir, uint32_t qp,
		       uint64_t idx, size_t *bad_off);
const char *perf_verify_str(int r);

/* ---- bootstrap line codec ------------------------------------------------------- */

/*
 * Every bootstrap line is "<verb> key=value key=value ...\n"; values have no
 * spaces. Unknown keys are ignored (a newer peer may add some), missing
 * required keys are an error.
 */

enum perf_op { PERF_OP_WRITE = 0, PERF_OP_WRITE_IMM = 1 };

/** What the client asks for; the server follows it. */
struct perf_params {
	uint64_t size;         /**< message size, bytes */
	uint32_t window;       /**< messages in flight per QP and direction */
	uint32_t qps;
	uint32_t op;           /**< enum perf_op */
	uint32_t imm_every;    /**< --op write: a WriteImm every this many messages */
	uint64_t iters;        /**< messages per QP and direction; 0 with duration_ns */
	uint64_t duration_ns;  /**< run length, ns; 0 with iters */
	bool bidir, verify, latency;
};

struct perf_qp_line {
	uint32_t idx;          /**< QP number within the run, 0..qps-1 */
	char info[512];        /**< mrc_qp_info_text() (hex, no spaces) */
	uint64_t va;           /**< mrc_mr.va of this QP's receive block */
	uint32_t rkey;
	uint64_t len;          /**< bytes of the block the peer may write */
};

/** One side's result, as seen by that side. */
struct perf_stats {
	uint64_t tx_msgs, tx_bytes;   /**< data messages completed as sent */
	uint64_t rx_msgs, rx_bytes;   /**< data messages received and counted */
	uint64_t ns;                  /**< data phase, go to done */
	uint64_t cq_errors;           /**< completions with a status other than success */
	uint64_t verify_errors;       /**< messages that failed perf_pattern_check */
	uint64_t aborted;             /**< 1 if the side gave up (failure) */
};

/** The first word of @line equals @verb. */
bool perf_line_is(const char *line, const char *verb);
/** Value of @key in @line into @out. @return 0, -ENOENT, -ENOSPC. */
int perf_kv_get(const char *line, const char *key, char *out, size_t outlen);
/** Unsigned value (decimal or 0x hex) of @key. @return 0, -ENOENT, -EINVAL. */
int perf_kv_u64(const char *line, const char *key, uint64_t *out);

/** Encoders write one line with '\n'. @return its length, or -ENOSPC. */
int perf_params_encode(const struct perf_params *p, char *buf, size_t len);
/** @return 0, -EBADMSG (not a params line or a key missing), -EPROTO
 *  (version), -EINVAL (a value out of range or inconsistent). */
int perf_params_decode(const char *line, struct perf_params *p);
/** The check perf_params_decode applies; @why (may be NULL) gets the reason.
 *  @return 0 or -EINVAL. */
int perf_params_check(const struct perf_params *p, const char **why);

int perf_qp_line_encode(const struct perf_qp_line *q, char *buf, size_t len);
/** @return 0, -EBADMSG. */
int perf_qp_line_decode(const char *line, struct perf_qp_line *q);

int perf_stats_encode(const struct perf_stats *s, char *buf, size_t len);
/** @return 0, -EBADMSG. */
int perf_stats_decode(const char *line, struct perf_stats *s);

const char *perf_op_str(uint32_t op);
/** @return 0 with *@op, -EINVAL. */
int perf_op_parse(const char *s, uint32_t *op);

#endif
