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
/** Next 64 random bits. */
uint64_t mrcp_prng_next(struct mrcp_prng *r);
/** Uniform in [0, bound) without modulo bias; 0 when @bound is 0. */
uint32_t mrcp_prng_below(struct mrcp_prng *r, uint32_t bound);
/** Uniform double in [0, 1). */
double mrcp_prng_unit(struct mrcp_prng *r);

#endif
