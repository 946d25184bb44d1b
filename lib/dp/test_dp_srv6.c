/* test_dp_srv6.c - SRv6 outer destinations (§2.3, D8): the F3216 layout,
 * the plane in every uSID, the uplink in one, and the longest-prefix row. */
#include <string.h>

#include "dp_srv6.h"
#include "mrcp_test.h"

/* fc00:1::/32 block; three uSIDs: T0 0x0100, T1 0x0200, destination T0
 * 0x0305 (downlink 5). Plane in bits 15:12 of every uSID, uplink in the low
 * byte of the T1 uSID. */
static struct mrcd_srv6_row row(void)
{
	struct mrcd_srv6_row r;

	memset(&r, 0, sizeof(r));
	r.prefix[0] = 0xfd;
	r.plen = 8;
	r.locator[0] = 0xfc; r.locator[1] = 0x00; r.locator[2] = 0x00; r.locator[3] = 0x01;
	r.usid[0] = 0x0100;
	r.usid[1] = 0x0200;
	r.usid[2] = 0x0305;
	r.n_usid = 3;
	r.plane_mask = 0xf000;
	r.plane_shift = 12;
	r.uplink_usid = 1;
	r.uplink_mask = 0x00ff;
	return r;
}

TEST(dp_srv6, da__block_then_usids_then_zeros)
{
	struct mrcd_srv6_row r = row();
	uint8_t da[16], want[16] = { 0xfc, 0x00, 0x00, 0x01, 0x21, 0x00, 0x22, 0x07, 0x23, 0x05 };

	/* plane 2 (port 3), uplink 7 */
	mrcd_srv6_da(&r, 2u << 24 | 7u, da);
	ASSERT_MEMEQ(want, da, 16);
}

TEST(dp_srv6, da__plane_zero_and_uplink_bits_outside_the_mask_are_dropped)
{
	struct mrcd_srv6_row r = row();
	uint8_t da[16];

	mrcd_srv6_da(&r, 0x0000ff31u, da);        /* plane 0, uplink 0xff31: 0x31 fits */
	ASSERT_EQ(0x01, da[4]);
	ASSERT_EQ(0x00, da[5]);
	ASSERT_EQ(0x02, da[6]);
	ASSERT_EQ(0x31, da[7]);
	r.uplink_mask = 0x0ff0;                   /* the field starts at bit 4 */
	mrcd_srv6_da(&r, 0x00000031u, da);
	ASSERT_EQ(0x03, da[6]);
	ASSERT_EQ(0x10, da[7]);
	r.uplink_mask = 0;                        /* no uplink field: the uSID as given */
	mrcd_srv6_da(&r, 0x00000031u, da);
	ASSERT_EQ(0x02, da[6]);
	ASSERT_EQ(0x00, da[7]);
}

TEST(dp_srv6, da__six_usids_fill_the_address)
{
	struct mrcd_srv6_row r = row();
	uint8_t da[16];

	r.n_usid = 6;
	for (unsigned i = 0; i < 6; i++)
		r.usid[i] = (uint16_t)(0x0a00 + i);
	r.plane_mask = 0;
	mrcd_srv6_da(&r, 1u << 24 | 3u, da);
	for (unsigned i = 0; i < 6; i++) {
		ASSERT_EQ(0x0a, da[4 + 2 * i]);
		ASSERT_EQ(i == 1 ? 0x03 : i, da[5 + 2 * i]);
	}
}

TEST(dp_srv6, find__longest_prefix_wins_and_no_match_is_minus_one)
{
	struct mrcd_srv6_row rows[3] = { row(), row(), row() };
	uint8_t a[16] = { 0xfd, 0x00, 0x00, 0x02 }, b[16] = { 0xfd, 0x00, 0x00, 0x04 },
		c[16] = { 0x20, 0x01 };

	rows[1].prefix[3] = 0x02;
	rows[1].plen = 32;
	rows[2].prefix[3] = 0x02;
	rows[2].plen = 31;                        /* fd00:2::/31 also holds a */
	ASSERT_EQ(1, mrcd_srv6_find(rows, 3, a));
	ASSERT_EQ(0, mrcd_srv6_find(rows, 3, b)); /* only fd00::/8 */
	ASSERT_EQ(-1, mrcd_srv6_find(rows, 3, c));
	ASSERT_EQ(-1, mrcd_srv6_find(rows, 0, a));
	rows[0].plen = 0;                         /* ::/0 takes anything */
	ASSERT_EQ(0, mrcd_srv6_find(rows, 1, c));
}
