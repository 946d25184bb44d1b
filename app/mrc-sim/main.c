/* main.c - the mrc-sim command line: load a scenario, run it with MRC, RC or
 * both, print one table line per transport and optionally a JSON object and
 * a CSV time series.
 *
 *   mrc-sim --scenario file.yaml [--seed N] [--transport mrc|rc|both] [--json out.json]
 *           [--csv out.csv [--bucket-us N]] [--progress] [--event-queue calendar|heap]
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

static void usage(FILE *o)
{
	fprintf(o, "usage: mrc-sim --scenario file.yaml [--seed N] [--transport mrc|rc|both] [--json out.json]\n"
		   "               [--csv out.csv [--bucket-us N]] [--progress] [--event-queue calendar|heap]\n"
		   "       mrc-sim --version\n");
}

static double goodput_gbps(const struct sim_result *r)
{
	uint64_t t = r->flows_done == r->flows ? r->finish_ns : r->end_ns;

	return t ? (double)r->bytes_done * 8.0 / (double)t : 0.0;
}

static const char *wl_name(enum sim_workload w)
{
	switch (w) {
	case SIM_WL_P2P:
		return "p2p";
	case SIM_WL_PERMUTATION:
		return "permutation";
	case SIM_WL_INCAST:
		return "incast";
	case SIM_WL_ALLTOALL:
		return "alltoall";
	default:
		return "allreduce_ring";
	}
}

static void print_header(const struct sim_scenario *s)
{
	uint32_t T0 = (s->hosts + s->hosts_per_t0 - 1) / s->hosts_per_t0;

	printf("scenario %s seed %llu: %u hosts, %u planes x (%u T0 x %u T1), %.1f Gb/s, %llu ns/link, "
	       "%s %llu B/flow x %u QPs, %u failures%s",
	       s->path, (unsigned long long)s->seed, s->hosts, s->planes, T0, s->t1_per_plane, s->link_gbps,
	       (unsigned long long)s->delay_ns, wl_name(s->wl),
	       (unsigned long long)s->bytes, s->qps, s->n_failures,
	       s->source_routed ? ", source-routed" : "");
	if (s->t0_per_pod)
		printf(", three tiers: %u T0 per pod, %u T1 per pod, %u T2", s->t0_per_pod, s->t1_per_plane,
		       s->t2_per_plane);
	printf("\n");
	printf("%-4s %5s %5s %12s %8s %8s %8s %8s %8s %8s %8s %8s %8s %8s %8s\n", "tp", "flows", "done",
	       "finish_us", "gbps", "rtx_fast", "rtx_nack", "rtx_rto", "rtx_pdn", "ev_trans", "drops",
	       "blackhol", "trims", "ecn", "lost");
}

static void print_line(const struct sim_result *r)
{
	char fin[32];

	if (r->flows_done == r->flows)
		snprintf(fin, sizeof(fin), "%.3f", (double)r->finish_ns / 1000.0);
	else
		snprintf(fin, sizeof(fin), "-");
	printf("%-4s %5u %5u %12s %8.2f %8llu %8llu %8llu %8llu %8llu %8llu %8llu %8llu %8llu %8llu\n", r->transport,
	       r->flows, r->flows_done, fin, goodput_gbps(r), (unsigned long long)r->rtx_fast,
	       (unsigned long long)r->rtx_nack, (unsigned long long)r->rtx_rto,
	       (unsigned long long)r->rtx_port_down, (unsigned long long)r->ev_transitions,
	       (unsigned long long)r->drops_buffer, (unsigned long long)r->drops_down,
	       (unsigned long long)r->trims, (unsigned long long)r->ecn_marks, (unsigned long long)r->drops_loss);
}

static const char *ev_state_name(uint8_t st)
{
	static const char *const names[] = {
		[MRCP_EV_GOOD] = "GOOD", [MRCP_EV_SKIP] = "SKIP",
		[MRCP_EV_ASSUMED_BAD] = "ASSUMED_BAD", [MRCP_EV_DENIED] = "DENIED",
	};

	return st < sizeof(names) / sizeof(names[0]) && names[st] ? names[st] : "-";
}

#define FO_WINDOW_NS 10000u  /* failover: delivery is averaged over 10 us ... */
#define FO_HOLD_NS 50000u    /* ... and must hold >= 90% for 50 us */

/* p2p with a failure (a path's: host pauses and ev_drop do not count): the
 * time from the first failure until the data
 * reaching the receiver, averaged over FO_WINDOW_NS, is back at >= 90% of
 * the capacity left (the end-to-end NIC links still up) and stays there for
 * FO_HOLD_NS. @us < 0: never. */
static bool failover(const struct sim_scenario *s, const struct sim_opts *op, const struct sim_result *r,
		     double *us, double *from_us)
{
	uint64_t fail_ns = UINT64_MAX;
	uint32_t w, hold, b0, run = 0;
	double need;

	if (s->wl != SIM_WL_P2P || s->n_failures == 0 || r->ts_rx == NULL || r->live_gbps <= 0)
		return false;
	for (unsigned i = 0; i < s->n_failures; i++)
		if (s->failures[i].kind != SIM_FAIL_EV_DROP && s->failures[i].kind != SIM_FAIL_HOST_PAUSE &&
		    s->failures[i].at_ns < fail_ns)
			fail_ns = s->failures[i].at_ns;
	if (fail_ns == UINT64_MAX)
		return false;
	w = (uint32_t)((FO_WINDOW_NS + op->bucket_ns - 1) / op->bucket_ns);
	hold = (uint32_t)((FO_HOLD_NS + op->bucket_ns - 1) / op->bucket_ns);
	need = 0.9 * r->live_gbps * (double)(w * op->bucket_ns) / 8.0; /* bytes per window */
	*from_us = (double)fail_ns / 1000.0;
	*us = -1;
	b0 = (uint32_t)(fail_ns / op->bucket_ns);
	/* windows of whole buckets only: the last bucket is partial */
	for (uint32_t b = b0; b + w < r->ts_n; b++) {
		uint64_t sum = 0;

		for (uint32_t k = 0; k < w; k++)
			sum += r->ts_rx[b + k];
		run = (double)sum >= need ? run + 1 : 0;
		if (run > hold) {
			uint64_t t = (uint64_t)(b + 1 - run) * op->bucket_ns;

			*us = t > fail_ns ? (double)(t - fail_ns) / 1000.0 : 0.0;
			break;
		}
	}
	return true;
}

/* incast and allreduce_ring: per-flow completions and the workload's figures */
static void print_detail(const struct sim_scenario *s, const struct sim_opts *op, const struct sim_result *r)
{
	double fo, from;

	if (r->fct_n != 0)
		printf("%s fct_us n %u mean %.3f p50 %.3f p99 %.3f max %.3f ideal %.3f max/ideal %.3f%s\n", r->transport,
		       r->fct_n, (double)r->fct_mean_ns / 1000.0, (double)r->fct_p50_ns / 1000.0,
		       (double)r->fct_p99_ns / 1000.0, (double)r->fct_max_ns / 1000.0, (double)r->fct_ideal_ns / 1000.0,
		       r->fct_ideal_ns ? (double)r->fct_max_ns / (double)r->fct_ideal_ns : 0.0,
		       r->fct_n < r->flows ? " (finished only)" : "");
	else
		printf("%s fct_us n 0 ideal %.3f (none finished)\n", r->transport, (double)r->fct_ideal_ns / 1000.0);

	if (failover(s, op, r, &fo, &from)) {
		if (fo >= 0)
			printf("%s failover_us %.1f (delivered, mean over 10 us, >= 90%% of %.0f Gb/s left for "
			       "50 us; buckets of %.0f us; failure at %.1f us)\n", r->transport, fo, r->live_gbps,
			       (double)op->bucket_ns / 1000.0, from);
		else
			printf("%s failover_us - (delivered never back at >= 90%% of %.0f Gb/s left after %.1f us)\n",
			       r->transport, r->live_gbps, from);
	}
	if (r->evdrop_ev)
		printf("%s ev_drop ev 0x%x state %s transitions %llu backups_promoted %u\n", r->transport,
		       r->evdrop_ev, ev_state_name(r->evdrop_state), (unsigned long long)r->evdrop_trans,
		       r->evdrop_promoted);
	if (s->wl == SIM_WL_INCAST) {
		printf("%s flows (src->dst done_us):", r->transport);
		for (uint32_t i = 0; i < r->n_report; i++) {
			if (r->flow_done_ns[i])
				printf(" %u->%u %.3f", r->flow_src[i], r->flow_dst[i], (double)r->flow_done_ns[i] / 1000.0);
			else
				printf(" %u->%u -", r->flow_src[i], r->flow_dst[i]);
		}
		printf("\n%s victim %u->%u goodput_gbps %.2f fair_gbps %.2f ratio %.3f senders_jain %.3f\n", r->transport,
		       r->flow_src[r->n_report - 1], r->flow_dst[r->n_report - 1], r->victim_gbps,
		       r->victim_fair_gbps, r->victim_fair_gbps > 0 ? r->victim_gbps / r->victim_fair_gbps : 0.0,
		       r->senders_jain);
	} else if (s->wl == SIM_WL_ALLREDUCE || s->wl == SIM_WL_ALLTOALL) {
		for (uint32_t k = 0; k < r->steps; k++)
			printf("%s step %u compute_us %.3f wait_us p50 %.3f max %.3f step_us p50 %.3f max %.3f\n",
			       r->transport, k, (double)r->step[k].compute_ns / 1000.0,
			       (double)r->step[k].wait_p50_ns / 1000.0, (double)r->step[k].wait_max_ns / 1000.0,
			       (double)r->step[k].step_p50_ns / 1000.0, (double)r->step[k].step_max_ns / 1000.0);
		if (r->steps)
			printf("%s steps step_us p50 %.3f max %.3f\n", r->transport, (double)r->step_p50_ns / 1000.0,
			       (double)r->step_max_ns / 1000.0);
	}
}

static void json_u64_or_null(FILE *o, const char *key, uint64_t v, bool have)
{
	if (have)
		fprintf(o, ", \"%s\": %llu", key, (unsigned long long)v);
	else
		fprintf(o, ", \"%s\": null", key);
}

static void json_detail(FILE *o, const struct sim_scenario *s, const struct sim_opts *op, const struct sim_result *r)
{
	double fo, from;

	/* the failover figure of the text report, null when never back */
	if (failover(s, op, r, &fo, &from)) {
		if (fo >= 0)
			fprintf(o, ", \"failover_us\": %.1f", fo);
		else
			fprintf(o, ", \"failover_us\": null");
		fprintf(o, ", \"failure_at_us\": %.1f", from);
	}
	if (r->evdrop_ev)
		fprintf(o, ", \"ev_drop\": {\"ev\": %u, \"state\": \"%s\", \"transitions\": %llu, "
			   "\"backups_promoted\": %u}", r->evdrop_ev, ev_state_name(r->evdrop_state),
			(unsigned long long)r->evdrop_trans, r->evdrop_promoted);
	fprintf(o, ", \"fct_ns\": {\"n\": %u", r->fct_n);
	json_u64_or_null(o, "mean", r->fct_mean_ns, r->fct_n != 0);
	json_u64_or_null(o, "p50", r->fct_p50_ns, r->fct_n != 0);
	json_u64_or_null(o, "p99", r->fct_p99_ns, r->fct_n != 0);
	json_u64_or_null(o, "max", r->fct_max_ns, r->fct_n != 0);
	fprintf(o, ", \"ideal\": %llu}", (unsigned long long)r->fct_ideal_ns);
	fprintf(o, ", \"memory\": {\"hosts\": %u, \"qps\": %u, \"engine_bytes\": %llu, \"qp_bytes\": %llu, "
		   "\"sim_bytes\": %llu, \"per_host_bytes\": %llu, \"per_qp_bytes\": %llu}",
		s->hosts, r->mem_qps, (unsigned long long)r->mem_engine_bytes, (unsigned long long)r->mem_qp_bytes,
		(unsigned long long)r->mem_sim_bytes,
		(unsigned long long)((r->mem_engine_bytes + r->mem_qp_bytes + r->mem_sim_bytes) / s->hosts),
		(unsigned long long)(r->mem_qps ? r->mem_qp_bytes / r->mem_qps : 0));
	if (s->wl == SIM_WL_PERMUTATION) {
		/* host i writes to flow_dst[i] (the first SIM_MAX_REPORT) */
		fprintf(o, ", \"flow_dst\": [");
		for (uint32_t i = 0; i < r->n_report; i++)
			fprintf(o, "%s%u", i ? ", " : "", r->flow_dst[i]);
		fprintf(o, "]");
	}
	if (s->wl != SIM_WL_INCAST && s->wl != SIM_WL_ALLREDUCE && s->wl != SIM_WL_ALLTOALL)
		return;
	fprintf(o, ", \"flow_done_ns\": [");
	for (uint32_t i = 0; i < r->n_report; i++) {
		if (r->flow_done_ns[i])
			fprintf(o, "%s%llu", i ? ", " : "", (unsigned long long)r->flow_done_ns[i]);
		else
			fprintf(o, "%snull", i ? ", " : "");
	}
	fprintf(o, "]");
	if (s->wl == SIM_WL_INCAST) {
		fprintf(o, ", \"victim_src\": %u, \"victim_dst\": %u, \"victim_goodput_gbps\": %.3f, "
			   "\"victim_fair_gbps\": %.3f, \"victim_fair_ratio\": %.4f, \"senders_jain\": %.4f",
			r->flow_src[r->n_report - 1], r->flow_dst[r->n_report - 1], r->victim_gbps, r->victim_fair_gbps,
			r->victim_fair_gbps > 0 ? r->victim_gbps / r->victim_fair_gbps : 0.0, r->senders_jain);
		return;
	}
	fprintf(o, ", \"steps\": [");
	for (uint32_t k = 0; k < r->steps; k++)
		fprintf(o, "%s{\"compute_ns\": %llu, \"wait_p50_ns\": %llu, \"wait_max_ns\": %llu, "
			   "\"step_p50_ns\": %llu, \"step_max_ns\": %llu}",
			k ? ", " : "", (unsigned long long)r->step[k].compute_ns,
			(unsigned long long)r->step[k].wait_p50_ns, (unsigned long long)r->step[k].wait_max_ns,
			(unsigned long long)r->step[k].step_p50_ns, (unsigned long long)r->step[k].step_max_ns);
	fprintf(o, "], \"step_p50_ns\": %llu, \"step_max_ns\": %llu", (unsigned long long)r->step_p50_ns,
		(unsigned long long)r->step_max_ns);
}

/* The time series: one row per bucket, t_us (bucket start), then per
 * transport the goodput (bytes completed at requesters in the bucket), the
 * data payload reaching receiving hosts (retransmissions included) and the
 * packets dropped, blackholed or lost in it. */
static int write_csv(const char *path, const struct sim_opts *op, const struct sim_result *r, unsigned n)
{
	FILE *o = fopen(path, "w");
	uint32_t rows = 0;

	if (o == NULL) {
		fprintf(stderr, "mrc-sim: %s: %s\n", path, strerror(errno));
		return -1;
	}
	fprintf(o, "t_us");
	for (unsigned i = 0; i < n; i++) {
		fprintf(o, ",%s_gbps,%s_rx_gbps,%s_drops", r[i].transport, r[i].transport, r[i].transport);
		if (r[i].ts_n > rows)
			rows = r[i].ts_n;
	}
	fputc('\n', o);
	for (uint32_t b = 0; b < rows; b++) {
		fprintf(o, "%.3f", (double)b * (double)op->bucket_ns / 1000.0);
		for (unsigned i = 0; i < n; i++) {
			if (b < r[i].ts_n)
				fprintf(o, ",%.3f,%.3f,%llu", (double)r[i].ts_bytes[b] * 8.0 / (double)op->bucket_ns,
					(double)r[i].ts_rx[b] * 8.0 / (double)op->bucket_ns,
					(unsigned long long)r[i].ts_drops[b]);
			else
				fprintf(o, ",,,");
		}
		fputc('\n', o);
	}
	return fclose(o) == 0 ? 0 : -1;
}

static void json_string(FILE *o, const char *v)
{
	fputc('"', o);
	for (; *v; v++) {
		if (*v == '"' || *v == '\\')
			fprintf(o, "\\%c", *v);
		else if ((unsigned char)*v < 0x20)
			fprintf(o, "\\u%04x", (unsigned)(unsigned char)*v);
		else
			fputc(*v, o);
	}
	fputc('"', o);
}

static int write_json(const char *path, const struct sim_scenario *s, const struct sim_opts *op,
		      const struct sim_result *r, unsigned n)
{
	FILE *o = fopen(path, "w");

	if (o == NULL) {
		fprintf(stderr, "mrc-sim: %s: %s\n", path, strerror(errno));
		return -1;
	}
	fprintf(o, "{\n  \"scenario\": ");
	json_string(o, s->path);
	fprintf(o, ",\n  \"seed\": %llu,\n  \"runs\": [", (unsigned long long)s->seed);
	for (unsigned i = 0; i < n; i++) {
		fprintf(o, "%s\n    {\"transport\": \"%s\", \"flows\": %u, \"flows_done\": %u, ", i ? "," : "",
			r[i].transport, r[i].flows, r[i].flows_done);
		if (r[i].flows_done == r[i].flows)
			fprintf(o, "\"finish_ns\": %llu, ", (unsigned long long)r[i].finish_ns);
		else
			fprintf(o, "\"finish_ns\": null, ");
		fprintf(o, "\"end_ns\": %llu, \"stalled\": %s, \"first_flow_ns\": %llu, \"bytes_done\": %llu, \"goodput_gbps\": %.3f, "
			   "\"tx_data_pkts\": %llu, \"rtx_fast\": %llu, \"rtx_nack\": %llu, \"rtx_rto\": %llu, "
			   "\"rtx_port_down\": %llu, \"ev_transitions\": %llu, \"wc_err\": %llu, "
			   "\"drops_buffer\": %llu, \"drops_down\": %llu, \"drops_loss\": %llu, \"trims\": %llu, "
			   "\"ecn_marks\": %llu, \"events\": %llu, \"rto_rounds\": %llu, \"silent_rounds\": %llu, "
			   "\"suspects\": %llu, \"rtx_spurious\": %llu",
			(unsigned long long)r[i].end_ns, r[i].stalled ? "true" : "false",
			(unsigned long long)r[i].min_flow_ns,
			(unsigned long long)r[i].bytes_done, goodput_gbps(&r[i]),
			(unsigned long long)r[i].tx_data_pkts, (unsigned long long)r[i].rtx_fast,
			(unsigned long long)r[i].rtx_nack, (unsigned long long)r[i].rtx_rto,
			(unsigned long long)r[i].rtx_port_down, (unsigned long long)r[i].ev_transitions,
			(unsigned long long)r[i].wc_err, (unsigned long long)r[i].drops_buffer,
			(unsigned long long)r[i].drops_down, (unsigned long long)r[i].drops_loss,
			(unsigned long long)r[i].trims,
			(unsigned long long)r[i].ecn_marks, (unsigned long long)r[i].events,
			(unsigned long long)r[i].rto_rounds, (unsigned long long)r[i].silent_rounds,
			(unsigned long long)r[i].suspects, (unsigned long long)r[i].rtx_spurious);
		fprintf(o, ", \"evs_retired_by_plane\": [");
		for (uint32_t k = 0; k < s->planes; k++)
			fprintf(o, "%s%llu", k ? ", " : "", (unsigned long long)r[i].evs_out_plane[k]);
		fputc(']', o);
		json_detail(o, s, op, &r[i]);
		fputc('}', o);
	}
	fprintf(o, "\n  ]\n}\n");
	return fclose(o) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	const char *scen = NULL, *json = NULL, *tp = "both", *seed = NULL, *csv = NULL, *bucket = NULL;
	const char *evq = "calendar";
	struct sim_opts op = {0};
	struct sim_scenario s;
	struct sim_result r[2];
	enum mrcp_qp_mode modes[2];
	unsigned n = 0;

	for (int i = 1; i < argc; i++) {
		const char **dst = NULL;

		if (!strcmp(argv[i], "--scenario"))
			dst = &scen;
		else if (!strcmp(argv[i], "--seed"))
			dst = &seed;
		else if (!strcmp(argv[i], "--transport"))
			dst = &tp;
		else if (!strcmp(argv[i], "--json"))
			dst = &json;
		else if (!strcmp(argv[i], "--csv"))
			dst = &csv;
		else if (!strcmp(argv[i], "--bucket-us"))
			dst = &bucket;
		else if (!strcmp(argv[i], "--progress")) {
			op.progress = true;
			continue;
		} else if (!strcmp(argv[i], "--event-queue"))
			dst = &evq;
		else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--version") || !strcmp(argv[i], "-V")) {
			printf("mrc-sim %s\n", MRCD_VERSION);
			return 0;
		}
		if (dst == NULL || i + 1 >= argc) {
			usage(stderr);
			return 2;
		}
		*dst = argv[++i];
	}
	if (scen == NULL) {
		usage(stderr);
		return 2;
	}
	sim_scenario_defaults(&s);
	if (sim_scenario_load(scen, &s) != 0)
		return 2;
	if (seed != NULL) {
		char *end;
		errno = 0;
		s.seed = strtoull(seed, &end, 0);
		if (errno != 0 || end == seed || *end != '\0') {
			fprintf(stderr, "mrc-sim: bad --seed %s\n", seed);
			return 2;
		}
	}
	if (bucket != NULL) {
		char *end;
		unsigned long long us;

		errno = 0;
		us = strtoull(bucket, &end, 0);
		if (errno != 0 || end == bucket || *end != '\0' || us == 0 || us > 1000000000ull) {
			fprintf(stderr, "mrc-sim: bad --bucket-us %s\n", bucket);
			return 2;
		}
		op.bucket_ns = us * 1000;
	}
	if ((csv != NULL || (s.wl == SIM_WL_P2P && s.n_failures > 0)) && op.bucket_ns == 0)
		op.bucket_ns = 10000; /* 10 us; p2p failures: the failover figure */
	if (strcmp(evq, "calendar") && strcmp(evq, "heap")) {
		fprintf(stderr, "mrc-sim: --event-queue must be calendar or heap\n");
		return 2;
	}
	op.heap_queue = !strcmp(evq, "heap");
	if (!strcmp(tp, "mrc") || !strcmp(tp, "both"))
		modes[n++] = MRCP_MODE_MRC;
	if (!strcmp(tp, "rc") || !strcmp(tp, "both"))
		modes[n++] = MRCP_MODE_RC;
	if (n == 0) {
		fprintf(stderr, "mrc-sim: --transport must be mrc, rc or both\n");
		return 2;
	}
	print_header(&s);
	for (unsigned i = 0; i < n; i++) {
		if (sim_run(&s, modes[i], &op, &r[i]) != 0)
			return 1;
		print_line(&r[i]);
		fflush(stdout);
		if (op.progress)
			fprintf(stderr, "mrc-sim: %s: setup %.3f s; %llu events, %llu of them packet hops, in %.3f s CPU: "
					"%.2f M events/s, %.2f M packet events/s; peak RSS %.1f MiB\n",
				r[i].transport, r[i].setup_s, (unsigned long long)r[i].events,
				(unsigned long long)r[i].hop_events, r[i].cpu_s,
				r[i].cpu_s > 0 ? (double)r[i].events / r[i].cpu_s / 1e6 : 0.0,
				r[i].cpu_s > 0 ? (double)r[i].hop_events / r[i].cpu_s / 1e6 : 0.0,
				(double)r[i].peak_rss_kb / 1024.0);
		if (op.progress)
			fprintf(stderr, "mrc-sim: %s: memory %.1f KiB per host (engines %.1f, their %u QPs %.1f, "
					"simulator %.1f), %.1f KiB per QP; peak RSS %.1f MiB\n",
				r[i].transport,
				(double)(r[i].mem_engine_bytes + r[i].mem_qp_bytes + r[i].mem_sim_bytes) / s.hosts / 1024.0,
				(double)r[i].mem_engine_bytes / s.hosts / 1024.0, r[i].mem_qps,
				(double)r[i].mem_qp_bytes / s.hosts / 1024.0, (double)r[i].mem_sim_bytes / s.hosts / 1024.0,
				r[i].mem_qps ? (double)r[i].mem_qp_bytes / r[i].mem_qps / 1024.0 : 0.0,
				(double)r[i].peak_rss_kb / 1024.0);
	}
	for (unsigned i = 0; i < n; i++)
		print_detail(&s, &op, &r[i]);
	for (unsigned i = 0; i < n; i++)
		if (r[i].flows_done != r[i].flows)
			printf("note: %s: %u of %u flows unfinished at t=%.3f us%s (replay: --seed %llu)\n",
			       r[i].transport, r[i].flows - r[i].flows_done, r[i].flows,
			       (double)r[i].end_ns / 1000.0,
			       r[i].stalled ? ", stalled: no engine deadline or packet pending" : "",
			       (unsigned long long)s.seed);
	for (unsigned i = 0; i < n; i++)
		if (r[i].ctl_dropped || r[i].cq_overflow || r[i].events_dropped)
			printf("note: %s: engine pools overflowed: %llu control packets dropped, %llu completions "
			       "held back, %llu events dropped\n",
			       r[i].transport, (unsigned long long)r[i].ctl_dropped,
			       (unsigned long long)r[i].cq_overflow, (unsigned long long)r[i].events_dropped);
	if (json != NULL && write_json(json, &s, &op, r, n) != 0)
		return 1;
	if (csv != NULL && write_csv(csv, &op, r, n) != 0)
		return 1;
	for (unsigned i = 0; i < n; i++)
		sim_result_free(&r[i]);
	return 0;
}
