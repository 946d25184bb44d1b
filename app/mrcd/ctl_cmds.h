/* ctl_cmds.h - the daemon's control command handlers (ctl_cmds.c): one per
 * row of lib/ctl's command table (MRCD_CTL_CMDS), named cmd_<name>, each
 * building one worker's answer (or the daemon's, route DAEMON) as JSON.
 * Where a command runs and how several workers' answers fold is the
 * table's (route, combine); ctl_exec.c carries it out.
 */
#ifndef MRCD_CTL_CMDS_H
#define MRCD_CTL_CMDS_H

#include <jansson.h>
#include <stdint.h>

#include "dp.h"
#include "dp_client.h"
#include "mrcd_ctl.h"

/** One command's run on one worker. */
struct mrcd_ctl_call {
	const struct mrcd_ctl_req *req;
	struct mrcd_client *sess;  /**< the caller's client session, or NULL */
	struct mrcd_dp *w;         /**< the worker it runs on (worker 0 for route DAEMON) */
	uint64_t now;              /**< mrcd_dp_now_ns() when it started */
	json_t *result;            /**< the answer (owned), or NULL with err */
	int err;                   /**< 0 or a negative errno */
	char reason[MRCD_CTL_REASON_MAX];
};

/** Run @x->req's handler on @x->w (worker context, or the control thread for
 *  route DAEMON). Sets result, or err and reason. */
void mrcd_ctl_cmd_run(struct mrcd_ctl_call *x);

/** Set @x's error and one-line reason. */
void mrcd_ctl_fail(struct mrcd_ctl_call *x, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
