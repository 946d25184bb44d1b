/* prom_format.h - mrcd's metrics in the Prometheus text exposition format
 * 0.0.4, formatted from a plain snapshot (no DPDK, no HTTP: the HTTP side
 * and the gathering are prom.c's). docs/operations.md, "Metrics", lists
 * every family. No per-EV or per-QP label: the QPs' and EVs' counters are
 * summed daemon-wide, EVs counted per plane and state.
 */
#ifndef MRCD_PROM_FORMAT_H
#define MRCD_PROM_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dp.h"
#include "mrcp_engine.h"
#include "mrcp_ev.h"

/** One port (plane): its counters summed over the workers' queues, its
 *  state as worker 0 sees it, and the live QPs' EVs on it by state. */
struct mrcd_prom_port {
	char name[MRCD_DP_NAME_MAX];
	bool link_up;
	bool admin_up;
	struct mrcd_dp_port_counters c;
	uint64_t ev_state[MRCP_EV_NSTATES]; /**< [enum mrcp_ev_state]: EVs */
};

/** One worker lcore. */
struct mrcd_prom_worker {
	struct mrcd_dp_worker_counters c;
	uint64_t uptime_ns;       /**< since its engine was created, ns */
};

/** Everything /metrics shows, at one instant per worker. */
struct mrcd_prom_snapshot {
	char version[32];         /**< mrcd's version (mrcd_info) */
	unsigned n_ports;
	struct mrcd_prom_port ports[MRCP_MAX_PORTS];
	unsigned n_workers;
	struct mrcd_prom_worker workers[MRCD_DP_MAX_WORKERS];
	uint64_t qps;             /**< live QPs (with an owner) */
	uint64_t clients;         /**< client sessions */
	struct mrcp_engine_counters eng;   /**< summed over the engines */
	struct mrcd_dp_qp_sums qp;         /**< live and closed QPs, summed */
	struct mrcp_probe_rtt_hist probe;  /**< summed over the engines */
};

/** Add @from's engine counters, QP sums and probe histogram into @to's. */
void mrcd_prom_add_engine(struct mrcp_engine_counters *to, const struct mrcp_engine_counters *from);
void mrcd_prom_add_qp_sums(struct mrcd_dp_qp_sums *to, const struct mrcd_dp_qp_sums *from);
void mrcd_prom_add_port(struct mrcd_dp_port_counters *to, const struct mrcd_dp_port_counters *from);
void mrcd_prom_add_probe(struct mrcp_probe_rtt_hist *to, const struct mrcp_probe_rtt_hist *from);

/**
 * Format @s as a text exposition (format 0.0.4) into @buf.
 * @return the length written (a NUL follows it), or -ENOSPC if @cap is too
 *         small (@buf then holds a truncated text).
 */
int mrcd_prom_format(const struct mrcd_prom_snapshot *s, char *buf, size_t cap);

#endif
