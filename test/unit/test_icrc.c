/* test_icrc.c - unit tests for lib/core/icrc.c: CRC-32 against a bitwise
 * reference, the ICRC against independently computed vectors, masking, and
 * the split (begin/update/finish) form against the contiguous one. */
#include <errno.h>

#include "mrcp_icrc.h"
#include "mrcp_test.h"

/* Known-answer frames. They come from test/unit/icrc_vectors.py, which builds
 * each frame byte by byte and computes its ICRC with Python's zlib.crc32 over
 * 8 bytes of 0xFF + the masked copy, independently of this code. Regenerate:
 *   python3 test/unit/icrc_vectors.py > test/unit/icrc_vectors.h
 * The 'icrc_vectors' unit test fails if the header and the script disagree. */
#include "icrc_vectors.h"

#define NVEC (sizeof(icrc_vectors) / sizeof(icrc_vectors[0]))

/* Bit-at-a-time CRC-32, the textbook definition. */
static uint32_t crc32_bitwise(uint32_t crc, const uint8_t *p, size_t len)
{
	crc = ~crc;
	while (len--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (crc & 1 ? 0xEDB88320u : 0);
	}
	return ~crc;
}

/* A heap copy of exactly @len bytes, so ASan flags any read past the end. */
static uint8_t *dup_exact(const uint8_t *p, size_t len)
{
	uint8_t *c = malloc(len ? len : 1);

	ASSERT_TRUE(c != NULL);
	memcpy(c, p, len);
	return c;
}

/* Is byte @i (offset from the ICRC start) one of the masked fields? */
static bool is_masked(const uint8_t *ip, size_t i)
{
	size_t iphl = ip[0] >> 4 == 4 ? (size_t)(ip[0] & 0x0F) * 4 : 40;

	if (ip[0] >> 4 == 4) {
		if (i == 1 || i == 8 || i == 10 || i == 11)
			return true;
	} else if (i == 1 || i == 2 || i == 3 || i == 7) {
		return true;
	}
	return i == iphl + 6 || i == iphl + 7 || i == iphl + 8 + 4;
}

/* ---- mrcp_crc32 ----------------------------------------------------------- */

TEST(icrc, crc32__check_value)
{
	ASSERT_EQ(0xCBF43926u, mrcp_crc32(0, "123456789", 9));
	ASSERT_EQ(0, mrcp_crc32(0, NULL, 0));
	ASSERT_EQ(0x12345678u, mrcp_crc32(0x12345678u, NULL, 0));
}

TEST(icrc, crc32__icrc_seed_is_eight_ff_bytes)
{
	static const uint8_t ff[8] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};

	/* Soft-RoCE starts its raw register at 0xDEBB20E3 instead (§3.9). */
	ASSERT_EQ(0xDEBB20E3u, ~mrcp_crc32(0, ff, 8));
}

TEST(icrc, crc32__every_table_entry_matches_bitwise)
{
	/* One non-zero byte at each of 16 positions of a 16-byte buffer, with
	 * each of the 256 values, reaches every entry of all 8 slice tables
	 * (positions 0..7 and 8..15 are the two 8-byte steps). */
	uint8_t buf[16];

	for (size_t pos = 0; pos < sizeof(buf); pos++) {
		for (unsigned val = 0; val < 256; val++) {
			memset(buf, 0, sizeof(buf));
			buf[pos] = (uint8_t)val;
			ASSERT_EQ(crc32_bitwise(0, buf, sizeof(buf)),
				  mrcp_crc32(0, buf, sizeof(buf)));
		}
	}
}

TEST(icrc, crc32__any_length_and_alignment_matches_bitwise)
{
	uint8_t buf[200];
	uint32_t x = 0x12345u;

	for (size_t i = 0; i < sizeof(buf); i++) {
		x = x * 1103515245u + 12345u;
		buf[i] = (uint8_t)(x >> 16);
	}
	for (size_t start = 0; start < 9; start++)
		for (size_t len = 0; len + start <= sizeof(buf); len++)
			ASSERT_EQ(crc32_bitwise(0, buf + start, len),
				  mrcp_crc32(0, buf + start, len));
}

TEST(icrc, crc32__chains_like_zlib)
{
	const char *s = "The quick brown fox jumps over the lazy dog";
	size_t n = strlen(s);
	uint32_t whole = mrcp_crc32(0, s, n);

	ASSERT_EQ(0x414FA339u, whole); /* zlib.crc32(b"The quick ... dog") */
	for (size_t k = 0; k <= n; k++)
		ASSERT_EQ(whole, mrcp_crc32(mrcp_crc32(0, s, k), s + k, n - k));
}

/* ---- mrcp_icrc_begin -------------------------------------------------------- */

TEST(icrc, icrc_begin__rejects_unknown_ip_version)
{
	uint8_t buf[128] = {0};
	struct mrcp_icrc st;

	for (unsigned ver = 0; ver < 16; ver++) {
		if (ver == 4 || ver == 6)
			continue;
		buf[0] = (uint8_t)(ver << 4 | 5);
		ASSERT_EQ(-EBADMSG, mrcp_icrc_begin(&st, buf, sizeof(buf)));
	}
}

TEST(icrc, icrc_begin__rejects_ihl_below_5)
{
	uint8_t buf[128] = {0};
	struct mrcp_icrc st;

	for (unsigned ihl = 0; ihl < 5; ihl++) {
		buf[0] = (uint8_t)(0x40 | ihl);
		ASSERT_EQ(-EBADMSG, mrcp_icrc_begin(&st, buf, sizeof(buf)));
	}
	buf[0] = 0x45;
	ASSERT_EQ(0, mrcp_icrc_begin(&st, buf, sizeof(buf)));
}

TEST(icrc, icrc_begin__rejects_every_short_length)
{
	/* IP header + UDP + BTH must be present; nothing past @len is read. */
	for (size_t v = 0; v < NVEC; v++) {
		const struct icrc_vector *t = &icrc_vectors[v];
		const uint8_t *ip = t->frame + t->icrc_off;
		size_t iphl = ip[0] >> 4 == 4 ? (size_t)(ip[0] & 0x0F) * 4 : 40;
		size_t need = iphl + 8 + 12;
		struct mrcp_icrc st;

		for (size_t len = 0; len < need; len++) {
			uint8_t *c = dup_exact(ip, len);

			ASSERT_EQ(-EBADMSG, mrcp_icrc_begin(&st, c, len));
			free(c);
		}
		uint8_t *c = dup_exact(ip, need);
		ASSERT_EQ(0, mrcp_icrc_begin(&st, c, need));
		free(c);
	}
}

TEST(icrc, icrc_begin__split_at_any_point_equals_contiguous)
{
	for (size_t v = 0; v < NVEC; v++) {
		const struct icrc_vector *t = &icrc_vectors[v];
		const uint8_t *ip = t->frame + t->icrc_off;
		size_t len = t->len - t->icrc_off - MRCP_ICRC_LEN;
		size_t iphl = ip[0] >> 4 == 4 ? (size_t)(ip[0] & 0x0F) * 4 : 40;

		for (size_t k = iphl + 8 + 12; k <= len; k++) {
			struct mrcp_icrc st;
			uint8_t *hdr = dup_exact(ip, k);
			uint8_t *rest = dup_exact(ip + k, len - k);

			ASSERT_EQ(0, mrcp_icrc_begin(&st, hdr, k));
			mrcp_icrc_update(&st, rest, len - k);
			ASSERT_EQ(t->icrc, mrcp_icrc_finish(&st));
			free(hdr);
			free(rest);
		}
	}
}

/* ---- mrcp_icrc_update -------------------------------------------------------- */

TEST(icrc, icrc_update__byte_by_byte_equals_one_call)
{
	for (size_t v = 0; v < NVEC; v++) {
		const struct icrc_vector *t = &icrc_vectors[v];
		const uint8_t *ip = t->frame + t->icrc_off;
		size_t len = t->len - t->icrc_off - MRCP_ICRC_LEN;
		size_t k = ip[0] >> 4 == 4 ? (size_t)(ip[0] & 0x0F) * 4 + 20 : 60;
		struct mrcp_icrc st;

		ASSERT_EQ(0, mrcp_icrc_begin(&st, ip, k));
		for (size_t i = k; i < len; i++)
			mrcp_icrc_update(&st, ip + i, 1);
		mrcp_icrc_update(&st, NULL, 0);
		ASSERT_EQ(t->icrc, mrcp_icrc_finish(&st));
	}
}

/* ---- mrcp_icrc_compute ------------------------------------------------------- */

TEST(icrc, icrc_compute__known_answer_vectors)
{
	for (size_t v = 0; v < NVEC; v++) {
		const struct icrc_vector *t = &icrc_vectors[v];
		uint32_t icrc = 0;

		ASSERT_EQ(0, mrcp_icrc_compute(t->frame + t->icrc_off,
					       t->len - t->icrc_off - MRCP_ICRC_LEN, &icrc));
		ASSERT_EQ(t->icrc, icrc);
		/* and it is stored least-significant byte first */
		ASSERT_EQ(t->icrc, mrcp_icrc_load(t->frame + t->len - MRCP_ICRC_LEN));
	}
}

TEST(icrc, icrc_compute__srv6_covers_only_the_inner_packet)
{
	/* The srv6 and srv6_srh vectors share the inner packet, so they share
	 * the ICRC although their outer headers differ (D24). */
	const struct icrc_vector *a = NULL, *b = NULL;

	for (size_t v = 0; v < NVEC; v++) {
		if (strcmp(icrc_vectors[v].name, "srv6") == 0)
			a = &icrc_vectors[v];
		if (strcmp(icrc_vectors[v].name, "srv6_srh") == 0)
			b = &icrc_vectors[v];
	}
	ASSERT_TRUE(a != NULL && b != NULL);
	ASSERT_EQ(a->icrc, b->icrc);
	ASSERT_NE(a->icrc_off, b->icrc_off);
}

TEST(icrc, icrc_compute__masked_fields_do_not_change_it)
{
	for (size_t v = 0; v < NVEC; v++) {
		const struct icrc_vector *t = &icrc_vectors[v];
		size_t len = t->len - t->icrc_off - MRCP_ICRC_LEN;
		uint8_t *ip = dup_exact(t->frame + t->icrc_off, len);
		unsigned masked = 0;

		for (size_t i = 0; i < len; i++) {
			uint32_t icrc = 0;
			uint8_t keep = ip[i];

			if (!is_masked(ip, i))
				continue;
			masked++;
			for (unsigned val = 0; val < 256; val++) {
				ip[i] = (uint8_t)val;
				ASSERT_EQ(0, mrcp_icrc_compute(ip, len, &icrc));
				ASSERT_EQ(t->icrc, icrc);
			}
			ip[i] = keep;
		}
		ASSERT_EQ(7, masked); /* 4 IP bytes (IPv6: and a nibble), 2 UDP, 1 BTH */
		/* IPv6 byte 0: only the traffic-class nibble is masked. */
		if (ip[0] >> 4 == 6) {
			uint32_t icrc = 0;

			ip[0] ^= 0x0F;
			ASSERT_EQ(0, mrcp_icrc_compute(ip, len, &icrc));
			ASSERT_EQ(t->icrc, icrc);
		}
		free(ip);
	}
}

TEST(icrc, icrc_compute__every_other_bit_changes_it)
{
	for (size_t v = 0; v < NVEC; v++) {
		const struct icrc_vector *t = &icrc_vectors[v];
		size_t len = t->len - t->icrc_off - MRCP_ICRC_LEN;
		uint8_t *ip = dup_exact(t->frame + t->icrc_off, len);

		for (size_t i = 0; i < len; i++) {
			if (is_masked(ip, i))
				continue;
			for (unsigned bit = 0; bit < 8; bit++) {
				uint32_t icrc = t->icrc;
				int rc;

				if (i == 0 && !(ip[0] >> 4 == 4) && bit < 4)
					continue; /* IPv6 traffic class[7:4] */
				ip[i] ^= (uint8_t)(1u << bit);
				rc = mrcp_icrc_compute(ip, len, &icrc);
				/* flips in the version/IHL may make it unparsable */
				ASSERT_TRUE(rc == -EBADMSG || icrc != t->icrc);
				ip[i] ^= (uint8_t)(1u << bit);
			}
		}
		free(ip);
	}
}

TEST(icrc, icrc_compute__equals_crc32_of_ff_prefix_and_masked_copy)
{
	/* The definition of §3.9, restated with mrcp_crc32 directly. */
	static const uint8_t ff[8] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};

	for (size_t v = 0; v < NVEC; v++) {
		const struct icrc_vector *t = &icrc_vectors[v];
		size_t len = t->len - t->icrc_off - MRCP_ICRC_LEN;
		uint8_t *m = dup_exact(t->frame + t->icrc_off, len);
		uint32_t icrc = 0;

		for (size_t i = 0; i < len; i++)
			if (is_masked(m, i))
				m[i] = 0xFF;
		if (m[0] >> 4 == 6)
			m[0] |= 0x0F;
		ASSERT_EQ(0, mrcp_icrc_compute(t->frame + t->icrc_off, len, &icrc));
		ASSERT_EQ(mrcp_crc32(mrcp_crc32(0, ff, 8), m, len), icrc);
		free(m);
	}
}

TEST(icrc, icrc_compute__propagates_begin_errors)
{
	uint8_t buf[16] = {0x45};
	uint32_t icrc = 0x55555555u;

	ASSERT_EQ(-EBADMSG, mrcp_icrc_compute(buf, sizeof(buf), &icrc));
	ASSERT_EQ(0x55555555u, icrc); /* untouched */
}

/* ---- mrcp_icrc_store / mrcp_icrc_load ---------------------------------------- */

TEST(icrc, icrc_store__least_significant_byte_first)
{
	uint8_t b[4];

	mrcp_icrc_store(b, 0x11223344u);
	ASSERT_EQ(0x44, b[0]);
	ASSERT_EQ(0x33, b[1]);
	ASSERT_EQ(0x22, b[2]);
	ASSERT_EQ(0x11, b[3]);
	ASSERT_EQ(0x11223344u, mrcp_icrc_load(b));
}
