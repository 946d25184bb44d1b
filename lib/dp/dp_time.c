/* dp_time.c - the daemon's one clock (architecture.md §4): TSC cycles
 * to nanoseconds since mrcd_dp_time_init(). Every worker iteration reads it
 * once and passes the value to the engine. */
#include <rte_cycles.h>

#include "dp.h"

static uint64_t tsc0;
static uint64_t mult;          /* ns per cycle, 32.32 fixed point */

void mrcd_dp_time_init(void)
{
	uint64_t hz = rte_get_tsc_hz();

	tsc0 = rte_get_tsc_cycles();
	mult = (uint64_t)(((unsigned __int128)1000000000u << 32) / (hz ? hz : 1));
}

uint64_t mrcd_dp_now_ns(void)
{
	uint64_t d = rte_get_tsc_cycles() - tsc0;

	return (uint64_t)(((unsigned __int128)d * mult) >> 32);
}
