/* config_dp.h - the daemon's YAML configuration (lib/ctl's struct
 * mrcd_config) turned into what the datapath is built from (lib/dp's struct
 * mrcd_dp_config), and the control side's names for datapath values. The
 * one place where the two vocabularies meet; DPDK-free, so it is
 * unit-tested without a datapath (test_config_dp.c).
 */
#ifndef MRCD_CONFIG_DP_H
#define MRCD_CONFIG_DP_H

#include <stddef.h>
#include <stdint.h>

#include "dp_config.h"
#include "dp_fault.h"
#include "mrcd_config.h"
#include "mrcd_ctl.h"

/**
 * Fill @out from a loaded @c: ports, worker lcores and idle mode, the address
 * family, the engine (mrcd_config_to_engine, seeded with @seed) and frame
 * settings, static neighbours, SRv6 rows (none unless srv6.enabled), fault
 * rules and per-client limits. The tables @out points to are allocated here:
 * release them with mrcd_config_dp_free() (after mrcd_dp_create, which
 * copies what it keeps).
 * @return 0, or -ENOMEM with @err filled (and nothing left allocated).
 */
int mrcd_config_to_dp(const struct mrcd_config *c, uint64_t seed, struct mrcd_dp_config *out,
		      char *err, size_t errlen);

/** Free the tables mrcd_config_to_dp() allocated; @d is left with none. */
void mrcd_config_dp_free(struct mrcd_dp_config *d);

/** A fault direction of the control protocol and the configuration as the
 *  fault stage's. */
enum mrcd_fault_dir mrcd_fault_dir_of(enum mrcd_ctl_dir d);

#endif
