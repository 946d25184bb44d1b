/* dp_icrc.c - the ICRC (§3.9, D24) with DPDK's accelerated CRC-32.
 *
 * rte_net_crc_calc() computes the zlib CRC-32 of one contiguous buffer and
 * cannot continue a running value, so the masked header and the 8-byte 0xFF
 * seed (mrcp_icrc.h) are made in place: the 8 bytes before the IP header
 * (the tail of the Ethernet/VLAN or outer IPv6 header) are overwritten with
 * 0xFF and the variant fields with 0xFF, the CRC runs over the frame from
 * there to the end of the MRC pad, and every byte is restored. A unit test
 * (test_dp_icrc) checks the result against lib/core's mrcp_icrc_compute.
 *
 * Which CRC: rte_net_crc_set_alg() reads DPDK's maximum SIMD width once, at
 * its first call, and takes AVX512 only if that width is 512 bits - EAL's
 * default is 256. mrcd_dp_icrc_init() raises the width for that one call
 * and puts it back, so the ICRC folds 64 B a step where the CPU has
 * AVX512 with VPCLMULQDQ and nothing else in DPDK changes its vector paths
 * (bench/icrc_bench measures each algorithm on this CPU).
 */
/* rte_vect_{get,set}_max_simd_bitwidth are still experimental in 22.11 */
#define ALLOW_EXPERIMENTAL_API
#include <errno.h>
#include <string.h>

#include <rte_cpuflags.h>
#include <rte_net_crc.h>
#include <rte_vect.h>

#include "dp_internal.h"
#include "mrcp_icrc.h"

/* ---- appending a CRC-32 computed apart ---------------------------------------------- */

/* The zero-copy transmit path cannot hand rte_net_crc one contiguous frame:
 * its payload lies elsewhere. CRC-32 is linear, so the CRC of A || B follows
 * from the CRC of A, the CRC of B and B's length (the identity behind
 * zlib's crc32_combine): crc(A || B) = crc(A) * x^(8 |B|) + crc(B), in
 * GF(2)[x] modulo the CRC polynomial, here in the reflected bit order of
 * CRC-32 (bit 31 is x^0). One product costs 32 steps; x^(8n) takes one
 * product per set bit of n from a table of x^(2^k), so appending a 4 KiB
 * payload is two products beside rte_net_crc's pass over it. */
#define CRC32_POLY_REFLECTED 0xEDB88320u

static uint32_t gf2_mulmod(uint32_t a, uint32_t b)
{
	uint32_t p = 0;

	for (uint32_t m = 1u << 31; m != 0; m >>= 1) {
		if (a & m)
			p ^= b;
		b = b & 1 ? (b >> 1) ^ CRC32_POLY_REFLECTED : b >> 1;
	}
	return p;
}

/* x^(2^k) mod P for k = 0..31: x^(2^32) wraps no further than the table */
static uint32_t x2k[32];

static void x2k_init(void)
{
	x2k[0] = 1u << 30; /* x^1 */
	for (unsigned k = 1; k < 32; k++)
		x2k[k] = gf2_mulmod(x2k[k - 1], x2k[k - 1]);
}

/* x^(8 @n) mod P */
static uint32_t x8n(size_t n)
{
	uint32_t p = 1u << 31; /* x^0 */

	for (unsigned k = 3; n != 0; n >>= 1, k++)
		if (n & 1)
			p = gf2_mulmod(x2k[k & 31], p);
	return p;
}

uint32_t mrcd_dp_crc32_append(uint32_t crc, const void *buf, size_t len)
{
	if (len == 0)
		return crc;
	return gf2_mulmod(x8n(len), crc) ^ rte_net_crc_calc(buf, (uint32_t)len, RTE_NET_CRC32_ETH);
}

static const char *icrc_alg;

static bool cpu_has_avx512_crc(void)
{
	static const enum rte_cpu_flag_t need[] = {
		RTE_CPUFLAG_AVX512F, RTE_CPUFLAG_AVX512BW, RTE_CPUFLAG_AVX512DQ,
		RTE_CPUFLAG_AVX512VL, RTE_CPUFLAG_PCLMULQDQ, RTE_CPUFLAG_VPCLMULQDQ,
	};

	for (size_t i = 0; i < RTE_DIM(need); i++)
		if (rte_cpu_get_flag_enabled(need[i]) <= 0)
			return false;
	return true;
}

const char *mrcd_dp_icrc_init(void)
{
	uint16_t width = rte_vect_get_max_simd_bitwidth();

	if (icrc_alg != NULL)
		return icrc_alg;
	x2k_init();
	if (cpu_has_avx512_crc() && (width >= RTE_VECT_SIMD_512 ||
				     rte_vect_set_max_simd_bitwidth(RTE_VECT_SIMD_512) == 0)) {
		rte_net_crc_set_alg(RTE_NET_CRC_AVX512);
		icrc_alg = "AVX512/VPCLMULQDQ";
	} else if (rte_cpu_get_flag_enabled(RTE_CPUFLAG_PCLMULQDQ) > 0) {
		rte_net_crc_set_alg(RTE_NET_CRC_SSE42);
		icrc_alg = "SSE4.2/PCLMULQDQ";
	} else {
		rte_net_crc_set_alg(RTE_NET_CRC_SCALAR);
		icrc_alg = "table (scalar)";
	}
	if (width != 0 && rte_vect_get_max_simd_bitwidth() != width)
		rte_vect_set_max_simd_bitwidth(width);
	return icrc_alg;
}

struct icrc_save {
	uint8_t seed[8];
	uint8_t ip[4];
	uint8_t ip_b;              /* v4: TTL; v6: hop limit */
	uint8_t ip_c[2];           /* v4: header checksum */
	uint8_t udp_csum[2];
	uint8_t bth_rsvd;
	size_t iphl;
	unsigned version;
};

static int icrc_mask(uint8_t *ip, size_t len, struct icrc_save *s)
{
	s->version = ip[0] >> 4;
	if (s->version == 4) {
		s->iphl = (size_t)(ip[0] & 0x0F) * 4;
		if (s->iphl < 20)
			return -EBADMSG;
	} else if (s->version == 6) {
		s->iphl = 40;
	} else {
		return -EBADMSG;
	}
	if (len < s->iphl + 8 + 12)
		return -EBADMSG;
	memcpy(s->seed, ip - 8, 8);
	memset(ip - 8, 0xFF, 8);
	if (s->version == 4) {
		s->ip[0] = ip[1];
		s->ip_b = ip[8];
		memcpy(s->ip_c, ip + 10, 2);
		ip[1] = 0xFF;
		ip[8] = 0xFF;
		ip[10] = ip[11] = 0xFF;
	} else {
		memcpy(s->ip, ip, 4);
		s->ip_b = ip[7];
		ip[0] |= 0x0F;
		ip[1] = ip[2] = ip[3] = 0xFF;
		ip[7] = 0xFF;
	}
	memcpy(s->udp_csum, ip + s->iphl + 6, 2);
	ip[s->iphl + 6] = ip[s->iphl + 7] = 0xFF;
	s->bth_rsvd = ip[s->iphl + 8 + 4];
	ip[s->iphl + 8 + 4] = 0xFF;
	return 0;
}

static void icrc_unmask(uint8_t *ip, const struct icrc_save *s)
{
	memcpy(ip - 8, s->seed, 8);
	if (s->version == 4) {
		ip[1] = s->ip[0];
		ip[8] = s->ip_b;
		memcpy(ip + 10, s->ip_c, 2);
	} else {
		memcpy(ip, s->ip, 4);
		ip[7] = s->ip_b;
	}
	memcpy(ip + s->iphl + 6, s->udp_csum, 2);
	ip[s->iphl + 8 + 4] = s->bth_rsvd;
}

static int icrc_calc(uint8_t *ip, size_t len, uint32_t *crc)
{
	struct icrc_save s;
	int rc = icrc_mask(ip, len, &s);

	if (rc < 0)
		return rc;
	*crc = rte_net_crc_calc(ip - 8, (uint32_t)(len + 8), RTE_NET_CRC32_ETH);
	icrc_unmask(ip, &s);
	return 0;
}

/* ---- the ICRC of a contiguous frame --------------------------------------------------- */

bool mrcd_dp_icrc_check(uint8_t *ip, size_t len)
{
	uint32_t crc;

	if (icrc_calc(ip, len, &crc) < 0)
		return false;
	return crc == mrcp_icrc_load(ip + len);
}

int mrcd_dp_icrc_store(uint8_t *ip, size_t len)
{
	uint32_t crc;
	int rc = icrc_calc(ip, len, &crc);

	if (rc < 0)
		return rc;
	mrcp_icrc_store(ip + len, crc);
	return 0;
}
