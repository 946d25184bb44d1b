/* prom.h - mrcd's Prometheus endpoint (telemetry.prometheus.listen): GET
 * /metrics over HTTP/1.1 from libmicrohttpd's one internal polling thread
 * (blocking in poll/epoll, never spinning), the text of prom_format.c
 * gathered from every worker through mrcd_dp_call (the control plane's
 * way into a worker: nothing of a worker is read from this thread).
 * Built only with libmicrohttpd (MRCD_HAVE_MICROHTTPD).
 */
#ifndef MRCD_PROM_H
#define MRCD_PROM_H

#include <stddef.h>

#include "dp.h"
#include "mrcd_config.h"

struct mrcd_prom;

/**
 * Listen on cfg->telemetry.prometheus and serve until mrcd_prom_stop.
 * Start it after mrcd_dp_start and stop it before mrcd_dp_destroy.
 * @return 0, or a negative errno with @err ("telemetry.prometheus.listen
 *         127.0.0.1:9464: cannot listen: ...").
 */
int mrcd_prom_start(struct mrcd_dp *dp, const struct mrcd_config *cfg, struct mrcd_prom **out,
		    char *err, size_t errlen);
/** Stop serving (joins the HTTP thread, closes every connection) and free
 *  @p; NULL is fine. */
void mrcd_prom_stop(struct mrcd_prom *p);

#endif
