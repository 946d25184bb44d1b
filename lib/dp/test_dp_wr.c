/* test_dp_wr.c - mrcd_wr_check: every way a client's work request can be
 * wrong, and the engine SGEs of a right one. */
#include <string.h>

#include "dp_wr.h"
#include "mrcp_test.h"

static const uint32_t qpns[] = { 256, 513 };
static const struct mrcd_wr_mr mrs[] = {
	{ true, 0x100, 4096, 65536 },
	{ false, 0x200, 0, 1 << 20 },          /* deregistered */
	{ true, 0x300, 1u << 20, 4096 },
};
static const struct mrcd_wr_owner own = { qpns, 2, mrs, 3, 1ull << 40 };

static struct mrc_shm_wr good(void)
{
	struct mrc_shm_wr w;

	memset(&w, 0, sizeof(w));
	w.qp = 513;
	w.opcode = MRC_SHM_OP_WRITE_IMM;
	w.num_sge = 2;
	w.sge[0] = (struct mrc_shm_sge){ 4096, 65536, 0x100 };
	w.sge[1] = (struct mrc_shm_sge){ (1u << 20) + 4000, 96, 0x300 };
	return w;
}

TEST(dp_wr, check__a_good_request_maps_to_engine_vas)
{
	struct mrc_shm_wr w = good();
	struct mrcp_sge sge[MRC_SHM_MAX_SGE];
	uint8_t st = 0xff;

	ASSERT_EQ(0, mrcd_wr_check(&own, &w, sge, &st));
	ASSERT_U64_EQ((1ull << 40) + 4096, sge[0].addr);
	ASSERT_EQ(65536u, sge[0].len);
	ASSERT_EQ(0x300u, sge[1].lkey);
	ASSERT_U64_EQ((1ull << 40) + (1u << 20) + 4000, sge[1].addr);
	w.num_sge = 0;                     /* a zero-length write is fine */
	ASSERT_EQ(0, mrcd_wr_check(&own, &w, sge, &st));
}

TEST(dp_wr, check__qp_opcode_and_sge_count_are_general_errors)
{
	struct mrc_shm_wr w = good();
	struct mrcp_sge sge[MRC_SHM_MAX_SGE];
	uint8_t st = 0;

	w.qp = 257;
	ASSERT_EQ(-1, mrcd_wr_check(&own, &w, sge, &st));
	ASSERT_EQ(MRC_SHM_WC_GENERAL_ERR, st);
	w = good();
	w.opcode = 2;
	ASSERT_EQ(-1, mrcd_wr_check(&own, &w, sge, &st));
	ASSERT_EQ(MRC_SHM_WC_GENERAL_ERR, st);
	w = good();
	w.num_sge = MRC_SHM_MAX_SGE + 1;
	ASSERT_EQ(-1, mrcd_wr_check(&own, &w, sge, &st));
	ASSERT_EQ(MRC_SHM_WC_GENERAL_ERR, st);
}

TEST(dp_wr, check__keys_and_bounds_are_protection_errors)
{
	static const struct { uint64_t ofs; uint32_t len, lkey; } bad[] = {
		{ 4096, 64, 0x999 },                   /* no such key */
		{ 4096, 64, 0x200 },                   /* deregistered */
		{ 4095, 64, 0x100 },                   /* starts before */
		{ 4096, 65537, 0x100 },                /* one byte too many */
		{ 4096 + 65536, 1, 0x100 },            /* starts at the end */
		{ UINT64_MAX - 10, 64, 0x100 },        /* wraps */
		{ 4096 + 65536 + 1, 0, 0x100 },        /* past the end, empty */
	};
	struct mrcp_sge sge[MRC_SHM_MAX_SGE];

	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct mrc_shm_wr w = good();
		uint8_t st = 0;

		w.sge[1] = (struct mrc_shm_sge){ bad[i].ofs, bad[i].len, bad[i].lkey };
		ASSERT_EQ(-1, mrcd_wr_check(&own, &w, sge, &st));
		ASSERT_EQ(MRC_SHM_WC_LOC_PROT_ERR, st);
	}
	/* the last byte of a region is fine; an empty SGE at its end too */
	struct mrc_shm_wr w = good();
	uint8_t st;

	w.sge[1] = (struct mrc_shm_sge){ 4096 + 65535, 1, 0x100 };
	ASSERT_EQ(0, mrcd_wr_check(&own, &w, sge, &st));
	w.sge[1] = (struct mrc_shm_sge){ 4096 + 65536, 0, 0x100 };
	ASSERT_EQ(0, mrcd_wr_check(&own, &w, sge, &st));
}
