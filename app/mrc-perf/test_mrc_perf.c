/* test_mrc_perf.c - unit tests for perf_util.c (mrc-perf's daemon-free
 * parts), in the order of the functions they cover.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mrcp_test.h"
#include "perf_util.h"

/* ---- option values ------------------------------------------------------- */

TEST(perf, parse_uint__bounds_and_syntax)
{
	uint64_t v = 0;

	ASSERT_EQ(0, perf_parse_uint("16", 1, 4096, &v));
	ASSERT_U64_EQ(16, v);
	ASSERT_EQ(-ERANGE, perf_parse_uint("0", 1, 4096, &v));
	ASSERT_EQ(-ERANGE, perf_parse_uint("4097", 1, 4096, &v));
	ASSERT_EQ(-EINVAL, perf_parse_uint("-1", 0, 10, &v));
	ASSERT_EQ(-EINVAL, perf_parse_uint("12x", 0, 100, &v));
	ASSERT_EQ(-EINVAL, perf_parse_uint("", 0, 100, &v));
	ASSERT_EQ(-ERANGE, perf_parse_uint("99999999999999999999999", 0, UINT64_MAX, &v));
}

TEST(perf, parse_size__suffixes)
{
	uint64_t v = 0;

	ASSERT_EQ(0, perf_parse_size("4096", &v));
	ASSERT_U64_EQ(4096, v);
	ASSERT_EQ(0, perf_parse_size("64K", &v));
	ASSERT_U64_EQ(65536, v);
	ASSERT_EQ(0, perf_parse_size("64k", &v));
	ASSERT_U64_EQ(65536, v);
	ASSERT_EQ(0, perf_parse_size("1M", &v));
	ASSERT_U64_EQ(1u << 20, v);
	ASSERT_EQ(0, perf_parse_size("2G", &v));
	ASSERT_U64_EQ(2ull << 30, v);
	ASSERT_EQ(0, perf_parse_size("4KiB", &v));
	ASSERT_U64_EQ(4096, v);
	ASSERT_EQ(0, perf_parse_size("4KB", &v));
	ASSERT_U64_EQ(4096, v);
	ASSERT_EQ(0, perf_parse_size("0", &v));
	ASSERT_U64_EQ(0, v);
}

TEST(perf, parse_size__rejects)
{
	uint64_t v = 7;

	ASSERT_EQ(-EINVAL, perf_parse_size("", &v));
	ASSERT_EQ(-EINVAL, perf_parse_size("K", &v));
	ASSERT_EQ(-EINVAL, perf_parse_size("-1K", &v));
	ASSERT_EQ(-EINVAL, perf_parse_size("1T", &v));
	ASSERT_EQ(-EINVAL, perf_parse_size("1 K", &v));
	ASSERT_EQ(-EINVAL, perf_parse_size("1KBx", &v));
	ASSERT_EQ(-EINVAL, perf_parse_size("1.5M", &v));
	ASSERT_EQ(-ERANGE, perf_parse_size("17179869184G", &v));
	ASSERT_U64_EQ(7, v);
}

TEST(perf, parse_seconds__fractions)
{
	uint64_t ns = 0;

	ASSERT_EQ(0, perf_parse_seconds("2", &ns));
	ASSERT_U64_EQ(2000000000ull, ns);
	ASSERT_EQ(0, perf_parse_seconds("0.25", &ns));
	ASSERT_U64_EQ(250000000ull, ns);
	ASSERT_EQ(0, perf_parse_seconds(".5", &ns));
	ASSERT_U64_EQ(500000000ull, ns);
	ASSERT_EQ(-EINVAL, perf_parse_seconds("-1", &ns));
	ASSERT_EQ(-EINVAL, perf_parse_seconds("1s", &ns));
	ASSERT_EQ(-EINVAL, perf_parse_seconds("nan", &ns));
	ASSERT_EQ(-ERANGE, perf_parse_seconds("1e9", &ns));
}

/* ---- latency histogram ----------------------------------------------------- */

TEST(perf, hist_bucket__linear_then_log)
{
	for (uint64_t v = 0; v < PERF_HIST_SUB; v++) {
		ASSERT_EQ(v, perf_hist_bucket(v));
		ASSERT_U64_EQ(v, perf_hist_bucket_hi((unsigned)v));
	}
	ASSERT_EQ(PERF_HIST_SUB, perf_hist_bucket(32));
	ASSERT_EQ(PERF_HIST_SUB + 31, perf_hist_bucket(63));
	ASSERT_EQ(2 * PERF_HIST_SUB, perf_hist_bucket(64));
	ASSERT_EQ(2 * PERF_HIST_SUB, perf_hist_bucket(65));   /* width 2 above 64 */
	ASSERT_U64_EQ(65, perf_hist_bucket_hi(2 * PERF_HIST_SUB));
	ASSERT_EQ(PERF_HIST_BUCKETS - 1, perf_hist_bucket(UINT64_MAX));
	ASSERT_U64_EQ(UINT64_MAX, perf_hist_bucket_hi(PERF_HIST_BUCKETS - 1));
}

TEST(perf, hist_bucket__every_value_within_its_bucket)
{
	/* monotonic, contiguous, and the width is at most 1/32 of the value */
	uint64_t vals[] = {100, 1000, 4095, 4096, 123456, 1000000007ull, 1ull << 40,
			   (1ull << 50) + 12345};

	for (unsigned i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		unsigned b = perf_hist_bucket(vals[i]);
		uint64_t hi = perf_hist_bucket_hi(b), lo = perf_hist_bucket_hi(b - 1) + 1;

		ASSERT_LE(lo, vals[i]);
		ASSERT_TRUE(vals[i] <= hi);
		ASSERT_TRUE((hi - lo + 1) * 32 <= lo);
		ASSERT_EQ(b, perf_hist_bucket(lo));
		ASSERT_EQ(b, perf_hist_bucket(hi));
		ASSERT_EQ(b + 1, perf_hist_bucket(hi + 1));
	}
}

TEST(perf, hist_percentile__uniform_1_to_10000)
{
	struct perf_hist *h = malloc(sizeof(*h));

	perf_hist_init(h);
	ASSERT_U64_EQ(0, perf_hist_percentile(h, 50));
	for (uint64_t v = 1; v <= 10000; v++)
		perf_hist_record(h, v * 1000);   /* 1 us .. 10 ms */
	ASSERT_U64_EQ(10000, h->count);
	ASSERT_U64_EQ(1000, h->min);
	ASSERT_U64_EQ(10000000, h->max);
	/* within one bucket (1/32) above the exact rank value */
	uint64_t p50 = perf_hist_percentile(h, 50), p99 = perf_hist_percentile(h, 99);
	uint64_t p999 = perf_hist_percentile(h, 99.9);
	ASSERT_TRUE(p50 >= 5000000 && p50 <= 5000000 + 5000000 / 32);
	ASSERT_TRUE(p99 >= 9900000 && p99 <= 9900000 + 9900000 / 32);
	ASSERT_TRUE(p999 >= 9990000 && p999 <= 10000000);
	ASSERT_U64_EQ(10000000, perf_hist_percentile(h, 100));   /* capped at max */
	free(h);
}

TEST(perf, hist_percentile__outlier_and_merge)
{
	struct perf_hist *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));

	perf_hist_init(a);
	perf_hist_init(b);
	for (int i = 0; i < 999; i++)
		perf_hist_record(a, 20);
	perf_hist_record(b, 7000000);
	perf_hist_merge(a, b);
	ASSERT_U64_EQ(1000, a->count);
	ASSERT_U64_EQ(20, perf_hist_percentile(a, 50));
	ASSERT_U64_EQ(20, perf_hist_percentile(a, 99.9));   /* rank 999 of 1000 */
	ASSERT_U64_EQ(7000000, perf_hist_percentile(a, 100));
	ASSERT_U64_EQ(7000000, a->max);
	ASSERT_U64_EQ(20, a->min);
	ASSERT_U64_EQ(999 * 20 + 7000000, a->sum);
	free(a);
	free(b);
}

/* ---- immediate layout ------------------------------------------------------- */

TEST(perf, imm__index_rebuilt_across_wrap)
{
	uint64_t base = (1ull << 30) - 3;
	uint32_t imm = perf_imm_make(base + 5, PERF_IMM_LAST);

	ASSERT_TRUE(imm & PERF_IMM_LAST);
	ASSERT_FALSE(imm & PERF_IMM_CREDIT);
	ASSERT_U64_EQ(base + 5, perf_imm_index(imm, base));
	ASSERT_U64_EQ(base, perf_imm_index(perf_imm_make(base, PERF_IMM_CREDIT), base));
	ASSERT_U64_EQ(7, perf_imm_index(perf_imm_make(7, 0), 0));
	ASSERT_U64_EQ((5ull << 30) + 9, perf_imm_index(perf_imm_make((5ull << 30) + 9, 0),
						       (5ull << 30) - 100));
}

/* ---- verification pattern ------------------------------------------------------ */

TEST(perf, pattern__fill_then_check_all_sizes)
{
	uint8_t buf[200];

	for (size_t len = PERF_MIN_VERIFY_SIZE; len <= sizeof(buf); len++) {
		perf_pattern_fill(buf, len, 0, 3, 1234567);
		ASSERT_EQ(PERF_VERIFY_OK, perf_pattern_check(buf, len, 0, 3, 1234567, NULL));
	}
}

TEST(perf, pattern__differs_by_qp_index_and_dir)
{
	uint8_t a[64], b[64];
	size_t off = 99;

	perf_pattern_fill(a, sizeof(a), 0, 1, 10);
	perf_pattern_fill(b, sizeof(b), 0, 1, 11);
	ASSERT_TRUE(memcmp(a + 8, b + 8, 48) != 0);
	ASSERT_EQ(PERF_VERIFY_HEADER, perf_pattern_check(a, sizeof(a), 0, 1, 11, &off));
	ASSERT_EQ(0, off);
	ASSERT_EQ(PERF_VERIFY_HEADER, perf_pattern_check(a, sizeof(a), 0, 2, 10, NULL));
	ASSERT_EQ(PERF_VERIFY_HEADER, perf_pattern_check(a, sizeof(a), 1, 1, 10, NULL));
	ASSERT_U64_EQ(perf_pattern_header(1, 2, 3), (3ull << 62) | (2ull << 48) | 3);
}

TEST(perf, pattern__finds_flipped_byte)
{
	uint8_t buf[100];
	size_t off = 0;

	perf_pattern_fill(buf, sizeof(buf), 1, 0, 42);
	buf[37] ^= 0x10;
	ASSERT_EQ(PERF_VERIFY_PATTERN, perf_pattern_check(buf, sizeof(buf), 1, 0, 42, &off));
	ASSERT_EQ(37, off);
	buf[37] ^= 0x10;
	buf[sizeof(buf) - 9] ^= 1;   /* last body byte (a partial word: 100 - 16 = 84) */
	ASSERT_EQ(PERF_VERIFY_PATTERN, perf_pattern_check(buf, sizeof(buf), 1, 0, 42, &off));
	ASSERT_EQ(sizeof(buf) - 9, off);
	buf[sizeof(buf) - 9] ^= 1;
	buf[sizeof(buf) - 1] ^= 0x80;   /* trailer */
	ASSERT_EQ(PERF_VERIFY_CHECKSUM, perf_pattern_check(buf, sizeof(buf), 1, 0, 42, &off));
	ASSERT_EQ(sizeof(buf) - 8, off);
}

TEST(perf, pattern__zeroed_slot_fails)
{
	uint8_t buf[64] = {0};

	ASSERT_EQ(PERF_VERIFY_HEADER, perf_pattern_check(buf, sizeof(buf), 0, 0, 0, NULL));
	ASSERT_STREQ("checksum mismatch", perf_verify_str(PERF_VERIFY_CHECKSUM));
}

/* ---- bootstrap line codec ------------------------------------------------------- */

TEST(perf, kv__get_and_u64)
{
	const char *l = "qp idx=3 va=0x7f00 len=4160 info=abc\n";
	char v[8];
	uint64_t x;

	ASSERT_TRUE(perf_line_is(l, "qp"));
	ASSERT_FALSE(perf_line_is(l, "q"));
	ASSERT_TRUE(perf_line_is("go", "go"));
	ASSERT_EQ(0, perf_kv_get(l, "info", v, sizeof(v)));
	ASSERT_STREQ("abc", v);
	ASSERT_EQ(0, perf_kv_u64(l, "va", &x));
	ASSERT_U64_EQ(0x7f00, x);
	ASSERT_EQ(0, perf_kv_u64(l, "len", &x));
	ASSERT_U64_EQ(4160, x);
	ASSERT_EQ(-ENOENT, perf_kv_get(l, "id", v, sizeof(v)));   /* no prefix match */
	ASSERT_EQ(-ENOENT, perf_kv_get(l, "qp", v, sizeof(v)));   /* the verb is no key */
	ASSERT_EQ(-ENOSPC, perf_kv_get(l, "info", v, 3));
	ASSERT_EQ(-EINVAL, perf_kv_u64(l, "info", &x));
}

static struct perf_params some_params(void)
{
	struct perf_params p = {
		.size = 65536, .window = 16, .qps = 4, .op = PERF_OP_WRITE, .imm_every = 8,
		.iters = 0, .duration_ns = 2500000000ull, .bidir = true, .verify = true,
	};
	return p;
}

TEST(perf, params__round_trip)
{
	struct perf_params p = some_params(), q;
	char line[PERF_LINE_MAX];

	ASSERT_GT(perf_params_encode(&p, line, sizeof(line)), 0);
	ASSERT_EQ('\n', line[strlen(line) - 1]);
	ASSERT_EQ(0, perf_params_decode(line, &q));
	ASSERT_U64_EQ(p.size, q.size);
	ASSERT_EQ(p.window, q.window);
	ASSERT_EQ(p.qps, q.qps);
	ASSERT_EQ(p.op, q.op);
	ASSERT_EQ(p.imm_every, q.imm_every);
	ASSERT_U64_EQ(p.iters, q.iters);
	ASSERT_U64_EQ(p.duration_ns, q.duration_ns);
	ASSERT_TRUE(q.bidir && q.verify && !q.latency);
}

TEST(perf, params__decode_rejects)
{
	struct perf_params p = some_params(), q;
	char line[PERF_LINE_MAX];
	const char *why = NULL;

	ASSERT_EQ(-EBADMSG, perf_params_decode("hello v=1", &q));
	ASSERT_EQ(-EBADMSG, perf_params_decode("params v=1 size=4", &q));
	ASSERT_EQ(-EPROTO, perf_params_decode("params v=2 size=4", &q));
	p.iters = 10;   /* both iters and duration */
	perf_params_encode(&p, line, sizeof(line));
	ASSERT_EQ(-EINVAL, perf_params_decode(line, &q));
	p = some_params();
	p.size = 8;     /* too small to verify */
	ASSERT_EQ(-EINVAL, perf_params_check(&p, &why));
	ASSERT_TRUE(why != NULL && strstr(why, "16 bytes") != NULL);
	p = some_params();
	p.latency = true;   /* latency is window 1, write_imm, one way */
	ASSERT_EQ(-EINVAL, perf_params_check(&p, NULL));
	p.window = 1;
	p.imm_every = 1;
	p.bidir = false;
	p.op = PERF_OP_WRITE_IMM;
	ASSERT_EQ(0, perf_params_check(&p, NULL));
	p = some_params();
	p.imm_every = 17;
	ASSERT_EQ(-EINVAL, perf_params_check(&p, NULL));
}

TEST(perf, qp_line__round_trip_and_rejects)
{
	struct perf_qp_line a = {.idx = 7, .va = 0x7fff12340000ull, .rkey = 0xabcd, .len = 2097216};
	struct perf_qp_line b;
	char line[PERF_LINE_MAX];

	memset(a.info, 'f', 416);
	a.info[416] = '\0';
	ASSERT_GT(perf_qp_line_encode(&a, line, sizeof(line)), 0);
	ASSERT_EQ(0, perf_qp_line_decode(line, &b));
	ASSERT_EQ(7, b.idx);
	ASSERT_U64_EQ(a.va, b.va);
	ASSERT_EQ(0xabcd, b.rkey);
	ASSERT_U64_EQ(a.len, b.len);
	ASSERT_STREQ(a.info, b.info);
	ASSERT_EQ(-EBADMSG, perf_qp_line_decode("qp idx=1 va=0x10 rkey=1 len=64 info=xyz", &b));
	ASSERT_EQ(-EBADMSG, perf_qp_line_decode("qp idx=1 va=0x10 rkey=1 info=ab", &b));
	ASSERT_EQ(-EBADMSG, perf_qp_line_decode("qq idx=1 va=0x10 rkey=1 len=64 info=ab", &b));
	ASSERT_EQ(-ENOSPC, perf_qp_line_encode(&a, line, 100));
}

TEST(perf, stats__round_trip)
{
	struct perf_stats a = {.tx_msgs = 1, .tx_bytes = 2, .rx_msgs = 3, .rx_bytes = 1ull << 40,
			       .ns = 5000000000ull, .cq_errors = 6, .verify_errors = 7, .aborted = 1};
	struct perf_stats b;
	char line[PERF_LINE_MAX];

	ASSERT_GT(perf_stats_encode(&a, line, sizeof(line)), 0);
	ASSERT_EQ(0, perf_stats_decode(line, &b));
	ASSERT_MEMEQ(&a, &b, sizeof(a));
	ASSERT_EQ(-EBADMSG, perf_stats_decode("stats tx_msgs=1", &b));
	ASSERT_EQ(-EBADMSG, perf_stats_decode("go", &b));
}

TEST(perf, op__parse_and_name)
{
	uint32_t op = 9;

	ASSERT_EQ(0, perf_op_parse("write", &op));
	ASSERT_EQ(PERF_OP_WRITE, op);
	ASSERT_EQ(0, perf_op_parse("write_imm", &op));
	ASSERT_EQ(PERF_OP_WRITE_IMM, op);
	ASSERT_EQ(-EINVAL, perf_op_parse("read", &op));
	ASSERT_STREQ("write", perf_op_str(PERF_OP_WRITE));
}
