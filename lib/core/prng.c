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

void mrcp_prng_seed(struct mrcp_prng *r, uint64_t seed)
{
	uint64_t x = seed;

	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
}

double mrcp_prng_unit(struct mrcp_prng *r)
{
	return (double)(mrcp_prng_next(r) >> 11) * 0x1.0p-53;
}
