/* mrcp_prng.h - the engine's seeded pseudo-random generator (xoshiro256**,
 * seeded through splitmix64). Every random choice in lib/core draws from one
 * of these, owned by an engine instance, so a seed replays a run exactly. */
#ifndef MRCP_PRNG_H
#define MRCP_PRNG_H

#include <stdint.h>

struct mrcp_prng {
	uint64_t s[4];
};

/** Seed @r from @seed (any value, including 0). */
void mrcp_prng_seed(struct mrcp_prng *r, uint64_t seed);
/* next and below are inline: EV selection draws once per data packet. */

static inline uint64_t mrcp__rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/** Next 64 random bits. */
static inline uint64_t mrcp_prng_next(struct mrcp_prng *r)
{
	uint64_t *s = r->s;
	uint64_t result = mrcp__rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = mrcp__rotl(s[3], 45);
	return result;
}

/** Uniform in [0, bound) without modulo bias; 0 when @bound is 0. */
static inline uint32_t mrcp_prng_below(struct mrcp_prng *r, uint32_t bound)
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
/** Uniform double in [0, 1). */
double mrcp_prng_unit(struct mrcp_prng *r);

#endif
