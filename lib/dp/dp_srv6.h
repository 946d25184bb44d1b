/* dp_srv6.h - the outer destination of an SRv6 frame (§2.3, D8).
 *
 * In SRv6 mode the outer IPv6 DA is the path: a 32-bit locator block, then
 * up to six 16-bit uSIDs (F3216, one per switch), then zeros. Each
 * destination row has a template (from the configuration); per packet the
 * EV's plane (bits 31:24) goes into the plane field of every uSID and its T0
 * uplink (bits 15:0) into the uplink field of one uSID. DPDK-free, so the
 * unit tests and fuzzers run it anywhere.
 */
#ifndef MRCD_DP_SRV6_H
#define MRCD_DP_SRV6_H

#include <stdint.h>

#define MRCD_SRV6_USIDS 6

/** One destination row's template. */
struct mrcd_srv6_row {
	uint8_t prefix[16];       /**< destination prefix (IPv6) */
	uint8_t plen;             /**< its length, 0..128 */
	uint8_t locator[4];       /**< the F3216 locator block */
	uint16_t usid[MRCD_SRV6_USIDS]; /**< first hop first */
	uint8_t n_usid;           /**< 1..MRCD_SRV6_USIDS */
	uint16_t plane_mask;      /**< bits of every uSID that take the plane */
	uint8_t plane_shift;      /**< where the plane goes in those bits, 0..15 */
	uint8_t uplink_usid;      /**< the uSID that takes the T0 uplink */
	uint16_t uplink_mask;     /**< its bits that take the uplink (from the lowest set bit up) */
};

/** The row whose prefix holds @dst, the longest if several do.
 *  @return its index, or -1 if none does. */
int mrcd_srv6_find(const struct mrcd_srv6_row *rows, unsigned n, const uint8_t dst[16]);

/** Write the outer DA for EV @ev over row @r into @da. */
void mrcd_srv6_da(const struct mrcd_srv6_row *r, uint32_t ev, uint8_t da[16]);

#endif
