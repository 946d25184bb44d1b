/* test_csum.c - lib/core/csum.c and the inline sum and fold of mrcp_csum.h:
 * the Internet checksum (RFC 1071) against the RFC's worked example, a known
 * IPv4 header, hand-built pseudo-headers and a word-at-a-time model with an
 * end-around carry at every step. */
#include <stdlib.h>
#include <string.h>

#include "mrcp_csum.h"
#include "mrcp_prng.h"
#include "mrcp_test.h"

/* The model: add each 16-bit word with an end-around carry at once, so the
 * accumulator never leaves 16 bits (RFC 1071 §2, "1's complement sum"). */
static uint16_t model(const uint8_t *p, size_t len)
{
	uint32_t acc = 0;

	for (size_t i = 0; i < len; i += 2) {
		uint32_t w = (uint32_t)p[i] << 8 | (i + 1 < len ? p[i + 1] : 0);

		acc += w;
		if (acc > 0xFFFF)
			acc -= 0xFFFF;
	}
	return (uint16_t)~acc;
}

TEST(csum, csum_add__rfc1071_example)
{
	/* RFC 1071 §3: these eight bytes sum to 0x2ddf0, folded 0xddf2 */
	static const uint8_t b[8] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};

	ASSERT_U64_EQ(0x2ddf0, mrcp_csum_add(0, b, sizeof(b)));
	ASSERT_EQ(0x220d, mrcp_csum_fold(mrcp_csum_add(0, b, sizeof(b))));
	ASSERT_EQ(0x220d, mrcp_csum(b, sizeof(b)));
}

TEST(csum, csum_add__odd_last_byte_is_the_high_byte)
{
	static const uint8_t b[3] = {0x01, 0x02, 0x03};

	ASSERT_U64_EQ(0x0102 + 0x0300, mrcp_csum_add(0, b, 3));
	ASSERT_U64_EQ(0, mrcp_csum_add(0, b, 0));
	ASSERT_U64_EQ(0x0100, mrcp_csum_add(0, b, 1));
}

TEST(csum, csum_add__pieces_of_even_length_add_up)
{
	uint8_t b[301];
	struct mrcp_prng r;

	mrcp_prng_seed(&r, 1071);
	for (size_t i = 0; i < sizeof(b); i++)
		b[i] = (uint8_t)mrcp_prng_next(&r);
	for (size_t k = 0; k <= sizeof(b); k += 2)
		ASSERT_U64_EQ(mrcp_csum_add(0, b, sizeof(b)),
			      mrcp_csum_add(mrcp_csum_add(0, b, k), b + k, sizeof(b) - k));
}

TEST(csum, csum_fold__end_around_carry_and_both_zeros)
{
	ASSERT_EQ(0xFFFF, mrcp_csum_fold(0));       /* nothing summed */
	ASSERT_EQ(0, mrcp_csum_fold(0xFFFF));       /* a correct checksum inside */
	ASSERT_EQ(0, mrcp_csum_fold(0x1FFFE));      /* 0xFFFE + carry 1 */
	ASSERT_EQ(0xFFFE, mrcp_csum_fold(0x10000)); /* carry only: 0x0001 */
	ASSERT_EQ(0, mrcp_csum_fold(0xFFFFFFFFFFFFull)); /* folds more than once */
}

TEST(csum, csum__matches_the_model)
{
	static uint8_t b[1 << 18]; /* 128 Ki words: a 32-bit sum would wrap */
	struct mrcp_prng r;

	mrcp_prng_seed(&r, 768);
	for (size_t i = 0; i < sizeof(b); i++)
		b[i] = (uint8_t)mrcp_prng_next(&r);
	for (size_t len = 0; len < 1600; len++)
		ASSERT_EQ(model(b, len), mrcp_csum(b, len));
	for (unsigned i = 0; i < 200; i++) {
		size_t off = mrcp_prng_below(&r, 4096), len = mrcp_prng_below(&r, 9000);

		ASSERT_EQ(model(b + off, len), mrcp_csum(b + off, len));
	}
	ASSERT_EQ(model(b, sizeof(b)), mrcp_csum(b, sizeof(b)));
	memset(b, 0xFF, sizeof(b));
	ASSERT_EQ(model(b, sizeof(b)), mrcp_csum(b, sizeof(b)));
}

TEST(csum, csum_pseudo__ipv4_equals_the_hand_built_header)
{
	static const uint8_t src[4] = {10, 0, 0, 1}, dst[4] = {192, 168, 200, 7};
	uint8_t ph[12] = {0};

	/* RFC 768: src, dst, zero, protocol, UDP length */
	memcpy(ph, src, 4);
	memcpy(ph + 4, dst, 4);
	ph[9] = 17;
	ph[10] = 0x05;
	ph[11] = 0xDC;
	ASSERT_U64_EQ(mrcp_csum_add(0, ph, sizeof(ph)), mrcp_csum_pseudo(src, dst, 4, 17, 1500));
}

TEST(csum, csum_pseudo__ipv6_equals_the_hand_built_header)
{
	uint8_t src[16], dst[16], ph[40] = {0};

	for (int i = 0; i < 16; i++) {
		src[i] = (uint8_t)(0xF0 + i);
		dst[i] = (uint8_t)(0x11 * i);
	}
	/* RFC 8200 §8.1: src, dst, 32-bit length, three zero bytes, next header */
	memcpy(ph, src, 16);
	memcpy(ph + 16, dst, 16);
	ph[33] = 0x01; /* 70000 = 0x00011170: above 16 bits */
	ph[34] = 0x11;
	ph[35] = 0x70;
	ph[39] = 58;
	ASSERT_U64_EQ(mrcp_csum_add(0, ph, sizeof(ph)), mrcp_csum_pseudo(src, dst, 16, 58, 70000));
}

TEST(csum, csum_ipv4_set__known_header)
{
	/* a well-known IPv4 header; its checksum is 0xb861 */
	uint8_t ip[20] = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
			  0xAA, 0x55, /* stale: ignored */
			  0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7};

	mrcp_csum_ipv4_set(ip, sizeof(ip));
	ASSERT_EQ(0xb8, ip[10]);
	ASSERT_EQ(0x61, ip[11]);
	ASSERT_EQ(0, mrcp_csum(ip, sizeof(ip)));
}

TEST(csum, csum_ipv4_set__covers_options)
{
	uint8_t ip[24] = {0x46, 0x00, 0x00, 0x20, 0x12, 0x34, 0x40, 0x00, 0x40, 0x11, 0, 0,
			  10, 0, 0, 1, 10, 0, 0, 2, 0x01, 0x01, 0x01, 0x00};
	uint16_t with;

	mrcp_csum_ipv4_set(ip, sizeof(ip));
	ASSERT_EQ(0, mrcp_csum(ip, sizeof(ip)));
	with = (uint16_t)(ip[10] << 8 | ip[11]);
	mrcp_csum_ipv4_set(ip, 20);
	ASSERT_NE(with, (uint16_t)(ip[10] << 8 | ip[11])); /* the options count */
}
