/* test_seq.c - wrap-safe PSN, MSN and time comparisons (§4.1). */
#include "mrcp_seq.h"
#include "mrcp_test.h"

TEST(seq, psn_diff__wraps_at_24_bits)
{
	ASSERT_EQ(1, mrcp_psn_diff(0, 0xFFFFFF));
	ASSERT_EQ(-1, mrcp_psn_diff(0xFFFFFF, 0));
	ASSERT_EQ(0, mrcp_psn_diff(0x123456, 0x123456));
	ASSERT_EQ(5, mrcp_psn_diff(3, 0xFFFFFE));
}

TEST(seq, psn_diff__half_range_is_negative)
{
	/* psn_diff(a,b) = ((a - b + 2^23) mod 2^24) - 2^23: 2^23 apart is -2^23 */
	ASSERT_EQ(-(1 << 23), mrcp_psn_diff(0x800000, 0));
	ASSERT_EQ((1 << 23) - 1, mrcp_psn_diff(0x7FFFFF, 0));
}

TEST(seq, psn_diff__ignores_bits_above_24)
{
	ASSERT_EQ(1, mrcp_psn_diff(0xFF000001, 0x00000000));
}

TEST(seq, psn_lt__orders_across_wrap)
{
	ASSERT_TRUE(mrcp_psn_lt(0xFFFFF0, 0x000010));
	ASSERT_FALSE(mrcp_psn_lt(0x000010, 0xFFFFF0));
	ASSERT_TRUE(mrcp_psn_le(5, 5));
	ASSERT_TRUE(mrcp_psn_gt(0, 0xFFFFFF));
	ASSERT_TRUE(mrcp_psn_ge(0, 0));
}

TEST(seq, psn_add__wraps)
{
	ASSERT_EQ(0, mrcp_psn_add(0xFFFFFF, 1));
	ASSERT_EQ(0xFFFFFF, mrcp_psn_add(0, -1));
	ASSERT_EQ(0x000005, mrcp_psn_add(0xFFFFFE, 7));
}

TEST(seq, msn_diff__wraps_at_16_bits)
{
	ASSERT_EQ(1, mrcp_msn_diff(0, 0xFFFF));
	ASSERT_TRUE(mrcp_msn_lt(0xFFFF, 0));
	ASSERT_TRUE(mrcp_msn_le(7, 7));
	ASSERT_FALSE(mrcp_msn_lt(1, 0xFFFF));
}

TEST(seq, time_lt__wraps_at_64_bits)
{
	ASSERT_TRUE(mrcp_time_lt(UINT64_MAX - 5, 10));
	ASSERT_TRUE(mrcp_time_after(10, UINT64_MAX - 5));
	ASSERT_TRUE(mrcp_time_le(10, 10));
	ASSERT_FALSE(mrcp_time_lt(10, 10));
}

TEST(seq, deadline_min__none_is_uint64_max_and_wraps)
{
	ASSERT_U64_EQ(5, mrcp_deadline_min(UINT64_MAX, 5));
	ASSERT_U64_EQ(5, mrcp_deadline_min(5, UINT64_MAX));
	ASSERT_U64_EQ(UINT64_MAX, mrcp_deadline_min(UINT64_MAX, UINT64_MAX));
	ASSERT_U64_EQ(3, mrcp_deadline_min(7, 3));
	/* wrap-safe: UINT64_MAX - 5 comes before 10 */
	ASSERT_U64_EQ(UINT64_MAX - 5, mrcp_deadline_min(10, UINT64_MAX - 5));
}
