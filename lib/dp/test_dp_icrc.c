/* test_dp_icrc.c - lib/dp's ICRC (rte_net_crc over masked headers in place)
 * must equal lib/core's mrcp_icrc for every frame shape, and must leave the
 * frame exactly as it found it. */
#include <errno.h>
#include <string.h>

#include <rte_net_crc.h>

#include "dp_internal.h"
#include "mrcp_frame.h"
#include "mrcp_icrc.h"
#include "mrcp_prng.h"
#include "mrcp_test.h"

/* Build a random Write-like frame with lib/core (which stores lib/core's ICRC). */
static size_t make_frame(struct mrcp_prng *r, enum mrcp_frame_l3 l3, bool vlan, uint8_t *buf,
			 size_t cap, size_t *ip_off, size_t *mrc_len)
{
	struct mrcp_frame_tx tx;
	uint8_t mrc[4200];
	size_t len = 12 + 16 + mrcp_prng_below(r, 4096);

	for (size_t i = 0; i < len; i++)
		mrc[i] = (uint8_t)mrcp_prng_next(r);
	mrc[0] = 0x0a;                     /* a BTH opcode, any value works for the CRC */
	mrcp_frame_tx_defaults(&tx);
	tx.l3 = l3;
	tx.vlan = vlan;
	tx.vlan_tci = 100;
	for (int i = 0; i < 16; i++) {
		tx.src_ip[i] = (uint8_t)mrcp_prng_next(r);
		tx.dst_ip[i] = (uint8_t)mrcp_prng_next(r);
		tx.srv6_da[i] = (uint8_t)mrcp_prng_next(r);
	}
	tx.dscp = (uint8_t)mrcp_prng_below(r, 64);
	tx.ecn = (uint8_t)mrcp_prng_below(r, 4);
	tx.ttl = (uint8_t)mrcp_prng_below(r, 256);
	tx.ev = l3 == MRCP_FRAME_IPV4 ? mrcp_prng_below(r, 65536) : (uint32_t)mrcp_prng_next(r);
	tx.udp_csum = l3 != MRCP_FRAME_IPV4 && (mrcp_prng_next(r) & 1);
	int n = mrcp_frame_build(&tx, mrc, len, buf, cap);
	ASSERT_GT(n, 0);
	*ip_off = mrcp_frame_icrc_off(&tx);
	*mrc_len = (size_t)n - *ip_off - MRCP_ICRC_LEN;
	return (size_t)n;
}

TEST(dp_icrc, check__equals_lib_core_for_every_shape)
{
	static const enum mrcp_frame_l3 shapes[] = { MRCP_FRAME_IPV4, MRCP_FRAME_IPV6, MRCP_FRAME_SRV6 };
	struct mrcp_prng r;
	uint8_t f[4400], copy[4400];

	mrcp_prng_seed(&r, 7);
	rte_net_crc_set_alg(RTE_NET_CRC_SSE42);
	for (int it = 0; it < 600; it++) {
		size_t ip, len, n = make_frame(&r, shapes[it % 3], it & 4, f, sizeof(f), &ip, &len);

		memcpy(copy, f, n);
		ASSERT_TRUE(mrcd_dp_icrc_check(f + ip, len));
		ASSERT_MEMEQ(copy, f, n);          /* masks restored */
		/* store: recompute in place, must give the same bytes */
		memset(f + ip + len, 0, MRCP_ICRC_LEN);
		ASSERT_EQ(0, mrcd_dp_icrc_store(f + ip, len));
		ASSERT_MEMEQ(copy, f, n);
	}
}

TEST(dp_icrc, check__ignores_variant_fields_and_catches_invariant_ones)
{
	struct mrcp_prng r;
	uint8_t f[4400];
	size_t ip, len;

	mrcp_prng_seed(&r, 9);
	make_frame(&r, MRCP_FRAME_IPV4, false, f, sizeof(f), &ip, &len);
	f[ip + 1] ^= 0xFF;                 /* TOS: masked */
	f[ip + 8] ^= 0x55;                 /* TTL: masked */
	ASSERT_TRUE(mrcd_dp_icrc_check(f + ip, len));
	f[ip + 20 + 8 + 20] ^= 1;          /* a byte after the BTH */
	ASSERT_FALSE(mrcd_dp_icrc_check(f + ip, len));

	make_frame(&r, MRCP_FRAME_IPV6, false, f, sizeof(f), &ip, &len);
	f[ip + 1] ^= 0x0F;                 /* flow label: masked */
	f[ip + 7] ^= 0x01;                 /* hop limit: masked */
	f[ip + 40 + 8 + 4] ^= 0xAA;        /* BTH reserved byte: masked */
	ASSERT_TRUE(mrcd_dp_icrc_check(f + ip, len));
	f[ip + 8] ^= 1;                    /* source address */
	ASSERT_FALSE(mrcd_dp_icrc_check(f + ip, len));
}

TEST(dp_icrc, check__rejects_a_non_ip_header)
{
	uint8_t f[128];

	memset(f, 0, sizeof(f));
	f[16] = 0x50;                      /* version 5 */
	ASSERT_FALSE(mrcd_dp_icrc_check(f + 16, 100));
	ASSERT_EQ(-EBADMSG, mrcd_dp_icrc_store(f + 16, 100));
	f[16] = 0x45;
	ASSERT_FALSE(mrcd_dp_icrc_check(f + 16, 30)); /* shorter than IP + UDP + BTH */
}
