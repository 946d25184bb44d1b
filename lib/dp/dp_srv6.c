/* dp_srv6.c - SRv6 uSID paths from templates and EVs (§2.3, D8). */
#include <string.h>

#include "dp_srv6.h"

static int prefix_match(const uint8_t *a, const uint8_t *p, unsigned plen)
{
	unsigned full = plen / 8, rest = plen % 8;

	if (memcmp(a, p, full) != 0)
		return 0;
	if (rest == 0)
		return 1;
	uint8_t m = (uint8_t)(0xffu << (8 - rest));

	return (a[full] & m) == (p[full] & m);
}

int mrcd_srv6_find(const struct mrcd_srv6_row *rows, unsigned n, const uint8_t dst[16])
{
	int best = -1;

	for (unsigned i = 0; i < n; i++)
		if (rows[i].plen <= 128 && prefix_match(dst, rows[i].prefix, rows[i].plen) &&
		    (best < 0 || rows[i].plen > rows[best].plen))
			best = (int)i;
	return best;
}

void mrcd_srv6_da(const struct mrcd_srv6_row *r, uint32_t ev, uint8_t da[16])
{
	unsigned plane = ev >> 24 & 0xffu, uplink = ev & 0xffffu;
	unsigned n = r->n_usid <= MRCD_SRV6_USIDS ? r->n_usid : MRCD_SRV6_USIDS;

	memset(da, 0, 16);
	memcpy(da, r->locator, 4);
	for (unsigned i = 0; i < n; i++) {
		unsigned u = r->usid[i];

		u = (u & ~(unsigned)r->plane_mask) | ((plane << r->plane_shift) & r->plane_mask);
		if (i == r->uplink_usid && r->uplink_mask != 0)
			u = (u & ~(unsigned)r->uplink_mask) |
			    ((uplink << __builtin_ctz(r->uplink_mask)) & r->uplink_mask);
		da[4 + 2 * i] = (uint8_t)(u >> 8);
		da[5 + 2 * i] = (uint8_t)u;
	}
}
