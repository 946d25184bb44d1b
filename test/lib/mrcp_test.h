/* mrcp_test.h - the unit-test harness: self-registering tests, assertions that
 * print both operands, one process per test file, a "N passed, N failed" line.
 *
 *   TEST(wire, bth_decode__rejects_short_buffer) { ASSERT_EQ(-EBADMSG, ...); }
 *
 * Each test runs in a forked child so a crash or failed assertion in one test
 * cannot hide the others; MRCP_TEST_NOFORK=1 runs in-process (for gdb).
 * Arguments select tests by substring of "suite.name".
 */
#ifndef MRCP_TEST_H
#define MRCP_TEST_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct mrcp_test {
	const char *suite;
	const char *name;
	void (*fn)(void);
	struct mrcp_test *next;
};

void mrcp_test_register(struct mrcp_test *t);
void mrcp_test_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4), noreturn));
/** Print a figure that a test measured ("name value unit"), kept in the log. */
void mrcp_test_figure(const char *name, double value, const char *unit);

#define TEST(suite_, name_)                                                    \
	static void test_##suite_##__##name_(void);                            \
	static struct mrcp_test test_reg_##suite_##__##name_ = {               \
		#suite_, #name_, test_##suite_##__##name_, NULL};              \
	__attribute__((constructor)) static void                               \
	test_ctor_##suite_##__##name_(void)                                    \
	{                                                                      \
		mrcp_test_register(&test_reg_##suite_##__##name_);             \
	}                                                                      \
	static void test_##suite_##__##name_(void)

#define ASSERT_TRUE(c)                                                         \
	do {                                                                   \
		if (!(c))                                                      \
			mrcp_test_fail(__FILE__, __LINE__, "expected true: %s", \
				       #c);                                    \
	} while (0)
#define ASSERT_FALSE(c) ASSERT_TRUE(!(c))

/* Integer comparison; both sides are printed as signed and hex. */
#define ASSERT_CMP_(a, op, b)                                                  \
	do {                                                                   \
		long long a_ = (long long)(a), b_ = (long long)(b);            \
		if (!(a_ op b_))                                               \
			mrcp_test_fail(__FILE__, __LINE__,                     \
				       "expected %s %s %s: %lld (0x%llx) vs %lld (0x%llx)", \
				       #a, #op, #b, a_, (unsigned long long)a_, \
				       b_, (unsigned long long)b_);            \
	} while (0)
#define ASSERT_EQ(a, b) ASSERT_CMP_(a, ==, b)
#define ASSERT_NE(a, b) ASSERT_CMP_(a, !=, b)
#define ASSERT_LT(a, b) ASSERT_CMP_(a, <, b)
#define ASSERT_LE(a, b) ASSERT_CMP_(a, <=, b)
#define ASSERT_GT(a, b) ASSERT_CMP_(a, >, b)
#define ASSERT_GE(a, b) ASSERT_CMP_(a, >=, b)

#define ASSERT_U64_EQ(a, b)                                                    \
	do {                                                                   \
		uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b);               \
		if (a_ != b_)                                                  \
			mrcp_test_fail(__FILE__, __LINE__,                     \
				       "expected %s == %s: %" PRIu64 " (0x%" PRIx64 ") vs %" PRIu64 " (0x%" PRIx64 ")", \
				       #a, #b, a_, a_, b_, b_);                \
	} while (0)

#define ASSERT_DBL_NEAR(a, b, eps)                                             \
	do {                                                                   \
		double a_ = (double)(a), b_ = (double)(b);                     \
		if (!(a_ - b_ <= (eps) && b_ - a_ <= (eps)))                   \
			mrcp_test_fail(__FILE__, __LINE__,                     \
				       "expected %s ~= %s (eps %g): %.9g vs %.9g", \
				       #a, #b, (double)(eps), a_, b_);         \
	} while (0)

#define ASSERT_STREQ(a, b)                                                     \
	do {                                                                   \
		const char *a_ = (a), *b_ = (b);                               \
		if (a_ == NULL || b_ == NULL || strcmp(a_, b_) != 0)           \
			mrcp_test_fail(__FILE__, __LINE__,                     \
				       "expected %s == %s:\n  \"%s\"\n  \"%s\"", \
				       #a, #b, a_ ? a_ : "(null)",             \
				       b_ ? b_ : "(null)");                    \
	} while (0)

/* Byte comparison; the first differing offset is reported. */
#define ASSERT_MEMEQ(a, b, n)                                                  \
	do {                                                                   \
		const uint8_t *a_ = (const uint8_t *)(a);                      \
		const uint8_t *b_ = (const uint8_t *)(b);                      \
		size_t n_ = (n);                                               \
		for (size_t i_ = 0; i_ < n_; i_++)                             \
			if (a_[i_] != b_[i_])                                  \
				mrcp_test_fail(__FILE__, __LINE__,             \
					       "%s and %s differ at byte %zu of %zu: 0x%02x vs 0x%02x", \
					       #a, #b, i_, n_, a_[i_], b_[i_]); \
	} while (0)

#endif
