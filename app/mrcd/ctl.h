/* ctl.h - mrcd's control side (docs/control.md): the UNIX socket server
 * (ctl_server.c), the executor that runs a parsed request where lib/ctl's
 * command table routes it (ctl_exec.c, with the handlers of ctl_cmds.c),
 * and the DPDK telemetry commands over the same executor (telemetry.c).
 */
#ifndef MRCD_CTL_SERVER_H
#define MRCD_CTL_SERVER_H

#include <jansson.h>

#include "dp.h"
#include "dp_client.h"
#include "mrcd_config.h"
#include "mrcd_ctl.h"

struct mrcd_ctl_server;

/** Create, bind and listen on cfg->control.socket (mode and group applied).
 *  A stale socket (nobody listening) is replaced; a live one is an error
 *  (-EADDRINUSE: another mrcd), and so is anything there that is not a
 *  socket (-EEXIST: never deleted). Raises the soft RLIMIT_NOFILE to fit
 *  control.max_connections, or takes fewer connections (logged).
 *  @return 0 or -errno with @err. */
int mrcd_ctl_open(struct mrcd_dp *dp, const struct mrcd_config *cfg,
		  struct mrcd_ctl_server **out, char *err, size_t errlen);
/** Serve: wait up to @timeout_ms for requests and answer them; never
 *  blocks on a peer. */
void mrcd_ctl_serve(struct mrcd_ctl_server *s, int timeout_ms);
/** Tell every connected client the daemon is going away, close, unlink. */
void mrcd_ctl_close(struct mrcd_ctl_server *s);

/**
 * Execute one parsed request for a caller with client session @sess (or
 * NULL), on the worker(s) its route names, their answers combined.
 * @return the result (a new reference) or NULL with *@err (negative errno)
 * and @reason filled.
 */
json_t *mrcd_ctl_execute(struct mrcd_dp *dp, const struct mrcd_ctl_req *req, struct mrcd_client *sess,
			 int *err, char *reason, size_t reason_len);

/** Register /mrcd/status, /mrcd/ports, /mrcd/qps, /mrcd/evs, /mrcd/counters. */
int mrcd_telemetry_init(struct mrcd_dp *dp);

#endif
