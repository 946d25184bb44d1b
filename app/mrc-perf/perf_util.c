/* perf_util.c - mrc-perf's daemon-free helpers: option values, the latency
 * histogram, the bootstrap line codec and the verification pattern. No I/O
 * apart from formatting into caller buffers.
 */
#include "perf_util.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- option values ------------------------------------------------------- */

int perf_parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (s == NULL || !isdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end != '\0')
		return -EINVAL;
	if (errno == ERANGE || v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int perf_parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	unsigned shift = 0;

	if (s == NULL || !isdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	default: break;
	}
	if (shift != 0 && *end == 'i')
		end++;
	if (*end == 'B')
		end++;
	if (*end != '\0')
		return -EINVAL;
	if (shift != 0 && v > (UINT64_MAX >> shift))
		return -ERANGE;
	*out = (uint64_t)v << shift;
	return 0;
}

int perf_parse_seconds(const char *s, uint64_t *out_ns)
{
	char *end;
	double v;

	if (s == NULL || !(isdigit((unsigned char)s[0]) || s[0] == '.'))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end != '\0' || !isfinite(v) || v < 0)
		return -EINVAL;
	if (v > 1e7)
		return -ERANGE;
	*out_ns = (uint64_t)llround(v * 1e9);
	return 0;
}

/* ---- latency histogram ----------------------------------------------------- */

void perf_hist_init(struct perf_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

unsigned perf_hist_bucket(uint64_t v)
{
	unsigned e, sub;

	if (v < PERF_HIST_SUB)
		return (unsigned)v;
	e = 63u - (unsigned)__builtin_clzll(v);    /* >= PERF_HIST_SUB_BITS */
	sub = (unsigned)(v >> (e - PERF_HIST_SUB_BITS)) & (PERF_HIST_SUB - 1);
	return PERF_HIST_SUB + (e - PERF_HIST_SUB_BITS) * PERF_HIST_SUB + sub;
}

uint64_t perf_hist_bucket_hi(unsigned b)
{
	unsigned e, sub;
	uint64_t lo;

	if (b < PERF_HIST_SUB)
		return b;
	e = (b - PERF_HIST_SUB) / PERF_HIST_SUB + PERF_HIST_SUB_BITS;
	sub = (b - PERF_HIST_SUB) % PERF_HIST_SUB;
	lo = (uint64_t)(PERF_HIST_SUB + sub) << (e - PERF_HIST_SUB_BITS);
	return lo + ((1ull << (e - PERF_HIST_SUB_BITS)) - 1);
}

void perf_hist_record(struct perf_hist *h, uint64_t v)
{
	h->bucket[perf_hist_bucket(v)]++;
	h->count++;
	h->sum += v;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
}

void perf_hist_merge(struct perf_hist *dst, const struct perf_hist *src)
{
	for (unsigned i = 0; i < PERF_HIST_BUCKETS; i++)
		dst->bucket[i] += src->bucket[i];
	dst->count += src->count;
	dst->sum += src->sum;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
}

uint64_t perf_hist_percentile(const struct perf_hist *h, double p)
{
	uint64_t rank, seen = 0;

	if (h->count == 0)
		return 0;
	/* the smallest value with at least p% of the samples at or below it */
	/* (less a hair, so 99.9 % of 1000 is rank 999 despite rounding) */
	rank = (uint64_t)ceil(p / 100.0 * (double)h->count - 1e-9);
	if (rank < 1)
		rank = 1;
	if (rank > h->count)
		rank = h->count;
	for (unsigned i = 0; i < PERF_HIST_BUCKETS; i++) {
		seen += h->bucket[i];
		if (seen >= rank) {
			uint64_t hi = perf_hist_bucket_hi(i);
			return hi < h->max ? hi : h->max;
		}
	}
	return h->max;
}

/* ---- verification pattern ------------------------------------------------------ */

static uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static void store_le64(uint8_t *p, uint64_t v)
{
	for (unsigned i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t load_le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static uint64_t rotl64(uint64_t v, unsigned r)
{
	return (v << r) | (v >> (64 - r));
}

/* Order-dependent 64-bit checksum of @len bytes (8-byte chunks, the last
 * zero-padded, folded with the length). Not cryptographic; it only has to
 * notice corruption the pattern compare might miss (and vice versa). */
static uint64_t checksum(const uint8_t *p, size_t len)
{
	uint64_t c = 0xC0FFEE0DDF00Dull ^ (uint64_t)len;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8)
		c = rotl64(c ^ load_le64(p + i), 29) * 0x9E3779B97F4A7C15ull;
	if (i < len) {
		uint8_t tail[8] = {0};
		memcpy(tail, p + i, len - i);
		c = rotl64(c ^ load_le64(tail), 29) * 0x9E3779B97F4A7C15ull;
	}
	return c ^ (c >> 32);
}

uint64_t perf_pattern_header(unsigned dir, uint32_t qp, uint64_t idx)
{
	/* bit 62 is always set, so a zeroed slot never passes as message 0 */
	return ((uint64_t)(dir & 1) << 63) | (1ull << 62) | ((uint64_t)(qp & 0x3FFF) << 48) |
	       (idx & ((1ull << 48) - 1));
}

void perf_pattern_fill(void *buf, size_t len, unsigned dir, uint32_t qp, uint64_t idx)
{
	uint8_t *p = buf;
	uint64_t hdr = perf_pattern_header(dir, qp, idx);
	uint64_t st = hdr;
	size_t body_end = len - 8, i;

	store_le64(p, hdr);
	for (i = 8; i + 8 <= body_end; i += 8)
		store_le64(p + i, splitmix64(&st));
	if (i < body_end) {
		uint8_t w[8];
		store_le64(w, splitmix64(&st));
		memcpy(p + i, w, body_end - i);
	}
	store_le64(p + body_end, checksum(p, body_end));
}

int perf_pattern_check(const void *buf, size_t len, unsigned dir, uint32_t qp,
		       uint64_t idx, size_t *bad_off)
{
	const uint8_t *p = buf;
	uint64_t hdr = perf_pattern_header(dir, qp, idx);
	uint64_t st = hdr;
	size_t body_end = len - 8, i;

	if (bad_off != NULL)
		*bad_off = 0;
	if (load_le64(p) != hdr)
		return PERF_VERIFY_HEADER;
	for (i = 8; i < body_end; i += 8) {
		uint8_t w[8];
		size_t n = body_end - i < 8 ? body_end - i : 8;

		store_le64(w, splitmix64(&st));
		if (memcmp(p + i, w, n) != 0) {
			if (bad_off != NULL)
				for (size_t j = 0; j < n; j++)
					if (p[i + j] != w[j]) {
						*bad_off = i + j;
						break;
					}
			return PERF_VERIFY_PATTERN;
		}
	}
	if (load_le64(p + body_end) != checksum(p, body_end)) {
		if (bad_off != NULL)
			*bad_off = body_end;
		return PERF_VERIFY_CHECKSUM;
	}
	return PERF_VERIFY_OK;
}

const char *perf_verify_str(int r)
{
	switch (r) {
	case PERF_VERIFY_OK: return "ok";
	case PERF_VERIFY_HEADER: return "wrong message in slot (header)";
	case PERF_VERIFY_PATTERN: return "payload differs from pattern";
	case PERF_VERIFY_CHECKSUM: return "checksum mismatch";
	default: return "?";
	}
}

/* ---- bootstrap line codec ------------------------------------------------------- */

bool perf_line_is(const char *line, const char *verb)
{
	size_t n = strlen(verb);

	return strncmp(line, verb, n) == 0 &&
	       (line[n] == ' ' || line[n] == '\0' || line[n] == '\n');
}

int perf_kv_get(const char *line, const char *key, char *out, size_t outlen)
{
	size_t klen = strlen(key);
	const char *p = strchr(line, ' ');   /* skip the verb */

	while (p != NULL) {
		while (*p == ' ')
			p++;
		if (strncmp(p, key, klen) == 0 && p[klen] == '=') {
			const char *v = p + klen + 1;
			size_t vlen = strcspn(v, " \n");

			if (vlen + 1 > outlen)
				return -ENOSPC;
			memcpy(out, v, vlen);
			out[vlen] = '\0';
			return 0;
		}
		p = strchr(p, ' ');
	}
	return -ENOENT;
}

int perf_kv_u64(const char *line, const char *key, uint64_t *out)
{
	char v[32], *end;
	unsigned long long x;

	int rc = perf_kv_get(line, key, v, sizeof(v));
	if (rc == -ENOSPC)
		return -EINVAL;
	if (rc < 0)
		return rc;
	if (!isdigit((unsigned char)v[0]))
		return -EINVAL;
	errno = 0;
	x = strtoull(v, &end, 0);
	if (*end != '\0' || errno == ERANGE)
		return -EINVAL;
	*out = x;
	return 0;
}

static int finish(int n, size_t len)
{
	return n < 0 || (size_t)n >= len ? -ENOSPC : n;
}

const char *perf_op_str(uint32_t op)
{
	return op == PERF_OP_WRITE ? "write" : "write_imm";
}

int perf_op_parse(const char *s, uint32_t *op)
{
	if (strcmp(s, "write") == 0)
		*op = PERF_OP_WRITE;
	else if (strcmp(s, "write_imm") == 0)
		*op = PERF_OP_WRITE_IMM;
	else
		return -EINVAL;
	return 0;
}

int perf_params_encode(const struct perf_params *p, char *buf, size_t len)
{
	return finish(snprintf(buf, len,
		"params v=%d size=%" PRIu64 " window=%u qps=%u op=%s imm_every=%u"
		" iters=%" PRIu64 " duration_ns=%" PRIu64 " bidir=%d verify=%d latency=%d\n",
		PERF_PROTO_VERSION, p->size, p->window, p->qps, perf_op_str(p->op),
		p->imm_every, p->iters, p->duration_ns, p->bidir, p->verify,
		p->latency), len);
}

int perf_params_check(const struct perf_params *p, const char **why)
{
	const char *w = NULL;

	if (p->size < 1 || p->size > PERF_MAX_SIZE)
		w = "size must be 1 B .. 1 GiB";
	else if (p->verify && p->size < PERF_MIN_VERIFY_SIZE)
		w = "--verify needs a size of at least 16 bytes";
	else if (p->window < 1 || p->window > PERF_MAX_WINDOW)
		w = "window must be 1..4096";
	else if (p->qps < 1 || p->qps > PERF_MAX_QPS)
		w = "qps must be 1..256";
	else if (p->op != PERF_OP_WRITE && p->op != PERF_OP_WRITE_IMM)
		w = "op must be write or write_imm";
	else if (p->imm_every < 1 || p->imm_every > p->window)
		w = "imm_every must be 1..window";
	else if ((p->iters == 0) == (p->duration_ns == 0))
		w = "exactly one of iters and duration must be set";
	else if (p->latency && (p->bidir || p->window != 1 || p->op != PERF_OP_WRITE_IMM))
		w = "latency mode is one-way ping-pong: window 1, write_imm, no bidir";
	if (why != NULL)
		*why = w;
	return w == NULL ? 0 : -EINVAL;
}

int perf_params_decode(const char *line, struct perf_params *p)
{
	uint64_t v, win, qps, ie, bidir, verify, lat;
	char op[16];

	if (!perf_line_is(line, "params"))
		return -EBADMSG;
	if (perf_kv_u64(line, "v", &v) < 0)
		return -EBADMSG;
	if (v != PERF_PROTO_VERSION)
		return -EPROTO;
	memset(p, 0, sizeof(*p));
	if (perf_kv_u64(line, "size", &p->size) < 0 || perf_kv_u64(line, "window", &win) < 0 ||
	    perf_kv_u64(line, "qps", &qps) < 0 || perf_kv_get(line, "op", op, sizeof(op)) < 0 ||
	    perf_kv_u64(line, "imm_every", &ie) < 0 || perf_kv_u64(line, "iters", &p->iters) < 0 ||
	    perf_kv_u64(line, "duration_ns", &p->duration_ns) < 0 ||
	    perf_kv_u64(line, "bidir", &bidir) < 0 || perf_kv_u64(line, "verify", &verify) < 0 ||
	    perf_kv_u64(line, "latency", &lat) < 0)
		return -EBADMSG;
	if (win > UINT32_MAX || qps > UINT32_MAX || ie > UINT32_MAX || bidir > 1 ||
	    verify > 1 || lat > 1 || perf_op_parse(op, &p->op) < 0)
		return -EINVAL;
	p->window = (uint32_t)win;
	p->qps = (uint32_t)qps;
	p->imm_every = (uint32_t)ie;
	p->bidir = bidir;
	p->verify = verify;
	p->latency = lat;
	return perf_params_check(p, NULL);
}

int perf_qp_line_encode(const struct perf_qp_line *q, char *buf, size_t len)
{
	return finish(snprintf(buf, len, "qp idx=%u va=0x%" PRIx64 " rkey=0x%x len=%" PRIu64
			       " info=%s\n", q->idx, q->va, q->rkey, q->len, q->info), len);
}

int perf_qp_line_decode(const char *line, struct perf_qp_line *q)
{
	uint64_t idx, rkey;

	if (!perf_line_is(line, "qp"))
		return -EBADMSG;
	memset(q, 0, sizeof(*q));
	if (perf_kv_u64(line, "idx", &idx) < 0 || perf_kv_u64(line, "va", &q->va) < 0 ||
	    perf_kv_u64(line, "rkey", &rkey) < 0 || perf_kv_u64(line, "len", &q->len) < 0 ||
	    perf_kv_get(line, "info", q->info, sizeof(q->info)) < 0)
		return -EBADMSG;
	if (idx > UINT32_MAX || rkey > UINT32_MAX || q->info[0] == '\0')
		return -EBADMSG;
	for (const char *c = q->info; *c != '\0'; c++)
		if (!isxdigit((unsigned char)*c))
			return -EBADMSG;
	q->idx = (uint32_t)idx;
	q->rkey = (uint32_t)rkey;
	return 0;
}

int perf_stats_encode(const struct perf_stats *s, char *buf, size_t len)
{
	return finish(snprintf(buf, len,
		"stats tx_msgs=%" PRIu64 " tx_bytes=%" PRIu64 " rx_msgs=%" PRIu64
		" rx_bytes=%" PRIu64 " ns=%" PRIu64 " cq_errors=%" PRIu64
		" verify_errors=%" PRIu64 " aborted=%" PRIu64 "\n",
		s->tx_msgs, s->tx_bytes, s->rx_msgs, s->rx_bytes, s->ns, s->cq_errors,
		s->verify_errors, s->aborted), len);
}

int perf_stats_decode(const char *line, struct perf_stats *s)
{
	if (!perf_line_is(line, "stats"))
		return -EBADMSG;
	memset(s, 0, sizeof(*s));
	if (perf_kv_u64(line, "tx_msgs", &s->tx_msgs) < 0 ||
	    perf_kv_u64(line, "tx_bytes", &s->tx_bytes) < 0 ||
	    perf_kv_u64(line, "rx_msgs", &s->rx_msgs) < 0 ||
	    perf_kv_u64(line, "rx_bytes", &s->rx_bytes) < 0 ||
	    perf_kv_u64(line, "ns", &s->ns) < 0 ||
	    perf_kv_u64(line, "cq_errors", &s->cq_errors) < 0 ||
	    perf_kv_u64(line, "verify_errors", &s->verify_errors) < 0 ||
	    perf_kv_u64(line, "aborted", &s->aborted) < 0)
		return -EBADMSG;
	return 0;
}
