/* csum.c - the Internet checksum (RFC 1071) for whole buffers, pseudo-headers
 * and IPv4 headers; the running sum and the fold are inline in mrcp_csum.h.
 * Knows nothing about frames: frame.c, lib/dp and the tests call it. */
#include "mrcp_csum.h"

uint16_t mrcp_csum(const void *p, size_t len)
{
	return mrcp_csum_fold(mrcp_csum_add(0, p, len));
}

uint64_t mrcp_csum_pseudo(const uint8_t *src, const uint8_t *dst, size_t alen, uint8_t proto,
			  uint32_t len)
{
	uint64_t sum = mrcp_csum_add(0, src, alen);

	sum = mrcp_csum_add(sum, dst, alen);
	/* IPv4 puts zero + protocol and a 16-bit length in two words; IPv6 a
	 * 32-bit length and three zero bytes + next header: as sums the same,
	 * the length's upper word being 0 for IPv4. */
	return sum + proto + (len >> 16) + (len & 0xFFFFu);
}

void mrcp_csum_ipv4_set(uint8_t *ip, size_t ihl)
{
	ip[10] = 0;
	ip[11] = 0;
	mrcp_put_be16(ip + 10, mrcp_csum(ip, ihl));
}
