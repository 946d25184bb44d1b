/* dp_icrc.c - the ICRC (§3.9, D24) with DPDK's accelerated CRC-32.
 *
 * rte_net_crc_calc() computes the zlib CRC-32 of one contiguous buffer and
 * cannot continue a running value, so the masked header and the 8-byte 0xFF
 * seed (mrcp_icrc.h) are made in place: the 8 bytes before the IP header
 * (the tail of the Ethernet/VLAN or outer IPv6 header) are overwritten with
 * 0xFF and the variant fields with 0xFF, the CRC runs over the frame from
 * there to the end of the MRC pad, and every byte is restored. A unit test
 * (test_dp_icrc) checks the result against lib/core's mrcp_icrc_compute.
 */
#include <errno.h>
#include <string.h>

#include <rte_net_crc.h>

#include "dp_internal.h"
#include "mrcp_icrc.h"

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
