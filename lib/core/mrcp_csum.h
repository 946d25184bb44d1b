/* mrcp_csum.h - the Internet checksum (RFC 1071): the one's-complement sum of
 * big-endian 16-bit words behind the IPv4 header, UDP, ICMP and ICMPv6
 * checksums. The one copy for the core, lib/dp and the tests. */
#ifndef MRCP_CSUM_H
#define MRCP_CSUM_H

#include <stddef.h>
#include <stdint.h>

#include "mrcp_bytes.h"

/** Add @len bytes at @p to the running sum @sum as big-endian 16-bit words;
 *  an odd last byte counts as its word's high byte (RFC 1071 §4.1). Only the
 *  last piece of a sum may have an odd length. 64 bits hold any input below
 *  2^48 words, so the sum needs no folding between pieces.
 *  @return the new sum, unfolded. */
static inline uint64_t mrcp_csum_add(uint64_t sum, const void *p, size_t len)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += mrcp_get_be16(b + i);
	if (i < len)
		sum += (uint64_t)b[i] << 8;
	return sum;
}

/** Fold @sum to 16 bits and invert it. @return the value for a checksum
 *  field, or 0 when @sum covers data that holds a correct checksum. */
static inline uint16_t mrcp_csum_fold(uint64_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xFFFFu) + (sum >> 16);
	return (uint16_t)~sum;
}

/** @return the checksum of @len bytes at @p: 0 over data whose checksum
 *  field is correct. */
uint16_t mrcp_csum(const void *p, size_t len);

/** The unfolded sum of the pseudo-header of an upper-layer checksum (UDP:
 *  RFC 768; over IPv6: RFC 8200 §8.1, also ICMPv6): the source and
 *  destination addresses of @alen bytes each (4 for IPv4, 16 for IPv6),
 *  protocol / next header @proto and upper-layer length @len (bytes).
 *  Continue it with mrcp_csum_add() over the upper-layer header and data. */
uint64_t mrcp_csum_pseudo(const uint8_t *src, const uint8_t *dst, size_t alen, uint8_t proto,
			  uint32_t len);

/** Write the header checksum of the IPv4 header at @ip, @ihl bytes with
 *  options, over its current contents (the old checksum is ignored). */
void mrcp_csum_ipv4_set(uint8_t *ip, size_t ihl);

#endif
