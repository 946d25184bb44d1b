/* test_prng.c - the engine PRNG: determinism per seed, bounds, uniformity. */
#include "mrcp_prng.h"
#include "mrcp_test.h"

TEST(prng, seed__same_seed_same_sequence)
{
	struct mrcp_prng a, b;

	mrcp_prng_seed(&a, 0x5eed);
	mrcp_prng_seed(&b, 0x5eed);
	for (int i = 0; i < 1000; i++)
		ASSERT_U64_EQ(mrcp_prng_next(&a), mrcp_prng_next(&b));
}

TEST(prng, seed__different_seeds_differ)
{
	struct mrcp_prng a, b;
	int same = 0;

	mrcp_prng_seed(&a, 1);
	mrcp_prng_seed(&b, 2);
	for (int i = 0; i < 100; i++)
		same += mrcp_prng_next(&a) == mrcp_prng_next(&b);
	ASSERT_EQ(0, same);
}

TEST(prng, seed__zero_seed_is_not_degenerate)
{
	struct mrcp_prng a;
	uint64_t x = 0;

	mrcp_prng_seed(&a, 0);
	for (int i = 0; i < 8; i++)
		x |= mrcp_prng_next(&a);
	ASSERT_NE(0, x);
}

TEST(prng, next__known_first_value)
{
	/* Pins the algorithm: a change of generator changes every seeded run,
	 * so it must be deliberate (and re-record sim baselines). The value was
	 * produced by this implementation of xoshiro256** + splitmix64. */
	struct mrcp_prng a;

	mrcp_prng_seed(&a, 0);
	ASSERT_U64_EQ(0x99ec5f36cb75f2b4ull, mrcp_prng_next(&a));
}

TEST(prng, below__stays_in_bounds_and_covers_range)
{
	struct mrcp_prng a;
	unsigned hits[7] = {0};

	mrcp_prng_seed(&a, 42);
	for (int i = 0; i < 70000; i++) {
		uint32_t v = mrcp_prng_below(&a, 7);
		ASSERT_LT(v, 7);
		hits[v]++;
	}
	for (int i = 0; i < 7; i++) {
		ASSERT_GT(hits[i], 9000);
		ASSERT_LT(hits[i], 11000);
	}
}

TEST(prng, below__zero_and_one_bounds)
{
	struct mrcp_prng a;

	mrcp_prng_seed(&a, 3);
	ASSERT_EQ(0, mrcp_prng_below(&a, 0));
	ASSERT_EQ(0, mrcp_prng_below(&a, 1));
}

TEST(prng, unit__in_half_open_interval)
{
	struct mrcp_prng a;
	double sum = 0;

	mrcp_prng_seed(&a, 9);
	for (int i = 0; i < 10000; i++) {
		double u = mrcp_prng_unit(&a);
		ASSERT_TRUE(u >= 0.0 && u < 1.0);
		sum += u;
	}
	ASSERT_DBL_NEAR(0.5, sum / 10000, 0.02);
}
