/* mrcp_icrc.h - CRC-32 (IEEE 802.3, the zlib crc32) and the RoCEv2 invariant
 * CRC that ends every MRC packet (§3.9, D24).
 *
 * The ICRC covers the innermost IP header through the end of the BTH pad,
 * with the fields that the fabric may rewrite masked to all ones:
 *   IPv4: TOS (DSCP + ECN), TTL, header checksum;
 *   IPv6: traffic class, flow label, hop limit;
 *   UDP checksum; BTH byte 4 (reserved).
 * The register is seeded by 8 bytes of 0xFF (Soft-RoCE's 0xDEBB20E3 start
 * value is the same thing), and the result goes on the wire least-significant
 * byte first (mrcp_icrc_store()). In SRv6 mode the caller passes the INNER
 * IPv6 header: the outer header and any SRH are not covered (D24).
 *
 * Two forms: mrcp_icrc_compute() over one contiguous buffer, and
 * begin/update/finish for a zero-copy datapath whose headers and payload sit
 * in different buffers. Both give the same value for the same bytes.
 */
#ifndef MRCP_ICRC_H
#define MRCP_ICRC_H

#include <stddef.h>
#include <stdint.h>

#include "mrcp_wire.h" /* MRCP_ICRC_LEN, struct mrcp_bth_wire */

/**
 * Largest prefix, bytes, that mrcp_icrc_begin() needs to see in one buffer:
 * an IPv4 header with the maximum 40 bytes of options, UDP, and BTH.
 */
#define MRCP_ICRC_HDR_MAX (60u + 8u + sizeof(struct mrcp_bth_wire))

/**
 * Standard CRC-32 (reflected polynomial 0xEDB88320, init and final XOR
 * 0xFFFFFFFF), chainable exactly like zlib's crc32():
 * mrcp_crc32(mrcp_crc32(0, a, n), b, m) == mrcp_crc32(0, a || b, n + m),
 * and mrcp_crc32(0, "123456789", 9) == 0xCBF43926.
 * Table-driven, slice-by-8. Cannot fail.
 * @param crc  0 to start, or the value returned for the preceding bytes.
 * @param buf  bytes to add; may be NULL when @len is 0.
 * @param len  bytes.
 * @return the CRC of everything so far.
 */
uint32_t mrcp_crc32(uint32_t crc, const void *buf, size_t len);

/**
 * Running ICRC. It holds the zlib-form mrcp_crc32() value over the 8-byte
 * 0xFF prefix and the masked bytes seen so far, so any zlib-compatible
 * crc32 may continue it. Plain data: copy it, compare it, no teardown.
 */
struct mrcp_icrc {
	uint32_t crc; /**< mrcp_crc32() value so far */
};

/**
 * Start an ICRC over the innermost IP header. @ip must hold at least the IP
 * header (IPv4: IHL * 4 bytes, options included; IPv6: 40 bytes, no
 * extension headers), the 8-byte UDP header and the 12-byte BTH, all of which
 * are covered; any further bytes of @ip are covered too, unmasked. UDP is
 * assumed to follow the IP header directly; the protocol / next-header field
 * is not checked (it is covered by the CRC like any other byte).
 * @param st   state to initialise.
 * @param ip   first byte of the innermost IP header.
 * @param len  bytes available at @ip.
 * @return 0, or -EBADMSG if the IP version is neither 4 nor 6, the IPv4 IHL is
 *         below 5, or @len is shorter than IP header + UDP + BTH.
 */
int mrcp_icrc_begin(struct mrcp_icrc *st, const void *ip, size_t len);

/** Add @len further bytes (payload, pad) to @st; none are masked. */
void mrcp_icrc_update(struct mrcp_icrc *st, const void *buf, size_t len);

/** The ICRC value of everything added to @st (store it with mrcp_icrc_store()). */
static inline uint32_t mrcp_icrc_finish(const struct mrcp_icrc *st)
{
	return st->crc;
}

/**
 * ICRC of one contiguous packet.
 * @param ip    first byte of the innermost IP header (the inner IPv6 header
 *              in SRv6 mode, D24).
 * @param len   bytes from @ip through the end of the BTH pad (the ICRC itself
 *              excluded).
 * @param icrc  out: the value to append with mrcp_icrc_store().
 * @return 0, or -EBADMSG as mrcp_icrc_begin().
 */
int mrcp_icrc_compute(const void *ip, size_t len, uint32_t *icrc);

/** Write @icrc at @p, least-significant byte first (§3.9 step 4). */
static inline void mrcp_icrc_store(uint8_t *p, uint32_t icrc)
{
	p[0] = (uint8_t)icrc;
	p[1] = (uint8_t)(icrc >> 8);
	p[2] = (uint8_t)(icrc >> 16);
	p[3] = (uint8_t)(icrc >> 24);
}

/** Read an ICRC stored by mrcp_icrc_store(). */
static inline uint32_t mrcp_icrc_load(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

#endif
