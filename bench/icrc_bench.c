/* icrc_bench.c - the ICRC's cost per byte with each CRC-32 rte_net_crc has,
 * on this CPU, and the one mrcd picks (mrcd_dp_icrc_init). One 4,182 B
 * frame (a 4 KiB Write over IPv4) through mrcd_dp_icrc_store - masking,
 * the CRC, unmasking - ROUNDS times per algorithm; every algorithm must give
 * the same ICRC. Prints figures (scripts/bench/datapath.sh); exit 1 when
 * the algorithms disagree.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <rte_eal.h>
#include <rte_net_crc.h>

#include "dp_internal.h"

#define ROUNDS 200000
#define FRAME 4182
#define ETH 14

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	char a1[] = "--no-huge", a2[] = "--no-pci", a3[] = "-m", a4[] = "64", a5[] = "--no-shconf",
	     a6[] = "--log-level=lib.eal:error";
	char *eal[] = { argv[0], a1, a2, a3, a4, a5, a6, NULL };
	static const struct {
		enum rte_net_crc_alg alg;
		const char *name;
	} algs[] = {
		{ RTE_NET_CRC_SCALAR, "table (scalar)" },
		{ RTE_NET_CRC_SSE42, "SSE4.2/PCLMULQDQ" },
		{ RTE_NET_CRC_AVX512, "AVX512/VPCLMULQDQ" },
	};
	static uint8_t f[FRAME + 64];
	const size_t len = FRAME - ETH - 4; /* IP header to the end of the pad */
	uint8_t *ip = f + ETH;
	uint32_t first = 0;
	int rc = 0;

	for (size_t i = 0; i < sizeof(f); i++)
		f[i] = (uint8_t)(i * 7 + 1);
	ip[0] = 0x45; /* IPv4, 20 B header */
	(void)argc;
	/* EAL sets the SIMD width the CRC choice reads, as in mrcd */
	if (rte_eal_init((int)(sizeof(eal) / sizeof(eal[0])) - 1, eal) < 0) {
		fprintf(stderr, "icrc_bench: EAL init failed\n");
		return 1;
	}
	printf("mrcd uses: %s\n", mrcd_dp_icrc_init());
	for (size_t a = 0; a < sizeof(algs) / sizeof(algs[0]); a++) {
		uint64_t t0, t;
		uint32_t icrc;

		rte_net_crc_set_alg(algs[a].alg);
		for (int k = 0; k < 1000; k++)
			mrcd_dp_icrc_store(ip, len);
		t0 = now_ns();
		for (int k = 0; k < ROUNDS; k++)
			mrcd_dp_icrc_store(ip, len);
		t = now_ns() - t0;
		memcpy(&icrc, ip + len, 4);
		if (a == 0)
			first = icrc;
		else if (icrc != first)
			rc = 1;
		printf("%-20s %7.1f ns per %d B frame = %.3f ns/B (%.1f GB/s)%s\n", algs[a].name,
		       (double)t / ROUNDS, FRAME, (double)t / ROUNDS / (double)len,
		       (double)len * ROUNDS / (double)t, icrc == first ? "" : "  DIFFERENT ICRC");
	}
	rte_eal_cleanup();
	return rc;
}
