/* dp_log.h - mrcd's DPDK log types (mrcd.dp, mrcd.ctl, mrcd.main,
 * mrcd.engine) and the MRCD_LOG macro, for lib/dp and the daemon. Levels are
 * set at run time (mrcctl log_level); nothing logs per packet. */
#ifndef MRCD_DP_LOG_H
#define MRCD_DP_LOG_H

#include <rte_log.h>

/** Register the rte_log types mrcd.dp, mrcd.ctl, mrcd.main, mrcd.engine. */
void mrcd_dp_log_init(void);
extern int mrcd_logtype_dp, mrcd_logtype_ctl, mrcd_logtype_main, mrcd_logtype_engine;
#define MRCD_LOG(level, type, ...) rte_log(RTE_LOG_##level, mrcd_logtype_##type, "mrcd." #type ": " __VA_ARGS__)

#endif
