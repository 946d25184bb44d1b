/* prng.c - xoshiro256** with splitmix64 seeding (Blackman and Vigna's public
 * algorithm description); deterministic per seed, no global state. */
#include "mrcp_prng.h"

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

void mrcp_prng_seed(struct mrcp_prng *r, uint64_t seed)
{
	uint64_t x = seed;

	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
}

uint64_t mrcp_prng_next(struct mrcp_prng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

uint32_t mrcp_prng_below(struct mrcp_prng *r, uint32_t bound)
{
	/* Lemire's multiply-shift with rejection: unbiased, one draw usually. */
	uint64_t m;
	uint32_t lo, threshold;

	if (bound == 0)
		return 0;
	m = (uint64_t)(uint32_t)(mrcp_prng_next(r) >> 32) * bound;
	lo = (uint32_t)m;
	if (lo < bound) {
		threshold = (uint32_t)-bound % bound;
		while (lo < threshold) {
			m = (uint64_t)(uint32_t)(mrcp_prng_next(r) >> 32) * bound;
			lo = (uint32_t)m;
		}
	}
	return (uint32_t)(m >> 32);
}

double mrcp_prng_unit(struct mrcp_prng *r)
{
	return (double)(mrcp_prng_next(r) >> 11) * 0x1.0p-53;
}
