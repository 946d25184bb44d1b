/* prom.c - GET /metrics (prom.h): libmicrohttpd's one internal thread takes
 * the connections; a scrape runs one call on each worker (mrcd_dp_call, the
 * mailbox the control socket uses too, so a worker's engine, ports and
 * counters are read only on the worker itself), folds the answers into a
 * struct mrcd_prom_snapshot and formats it (prom_format.c).
 *
 * Only GET (and HEAD) of /metrics: another path is 404, another method 405;
 * libmicrohttpd answers a malformed request 400 and a request larger than a
 * connection's memory 413/414/431. Connections, their idle time and their
 * memory are bounded, so a client can neither exhaust the daemon nor hold
 * the thread: a scrape costs each worker one mailbox call per scrape.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "dp_log.h"
#include "prom.h"
#include "prom_format.h"

#define PROM_MAX_CONNECTIONS 16      /* scrapers at once */
#define PROM_TIMEOUT_S 10            /* an idle connection is closed after, s */
#define PROM_CONN_MEMORY (16 * 1024) /* per connection: a request's line and headers must fit */
#define PROM_CALL_TIMEOUT_MS 2000    /* a worker takes a call within an iteration or two */
#define PROM_TEXT_FIRST (64 * 1024)  /* the text's first buffer; doubled while too small */
#define PROM_TEXT_MAX (16u << 20)

struct mrcd_prom {
	struct MHD_Daemon *d;
	struct mrcd_dp *dp;
	/* scratch of the HTTP thread (one thread: one scrape at a time) */
	struct mrcd_prom_snapshot snap;
	struct mrcd_dp_status st;
	struct mrcd_dp_live_qps live;
	struct mrcd_dp_port_status port;
};

/* ---- gathering, on each worker --------------------------------------------------- */

struct gather {
	struct mrcd_prom *p;
	unsigned k;                  /* the worker's index */
};

/* Worker context (inside mrcd_dp_call): add worker @k's part to the
 * snapshot. Worker 0's port state stands for the port's. */
static void gather_fn(struct mrcd_dp *w, void *arg)
{
	struct gather *g = arg;
	struct mrcd_prom *p = g->p;
	struct mrcd_prom_snapshot *s = &p->snap;
	struct mrcp_engine_counters ec;
	struct mrcp_probe_rtt_hist h;

	mrcd_dp_status(w, &p->st);
	s->workers[g->k].c = p->st.c;
	s->workers[g->k].uptime_ns = mrcd_dp_now_ns() - p->st.start_ns;
	s->qps += p->st.n_qps;
	s->clients += p->st.n_clients;
	mrcd_prom_add_qp_sums(&s->qp, &p->st.closed);
	mrcd_dp_live_qps(w, &p->live);
	mrcd_prom_add_qp_sums(&s->qp, &p->live.sum);
	mrcp_engine_counters(mrcd_dp_engine(w), &ec);
	mrcd_prom_add_engine(&s->eng, &ec);
	mrcp_engine_probe_rtt(mrcd_dp_engine(w), &h);
	mrcd_prom_add_probe(&s->probe, &h);
	for (unsigned k = 0; k < s->n_ports && mrcd_dp_port_status(w, k, &p->port) == 0; k++) {
		struct mrcd_prom_port *pp = &s->ports[k];

		if (g->k == 0) {
			memcpy(pp->name, p->port.name, sizeof(pp->name));
			pp->link_up = p->port.link_up;
			pp->admin_up = p->port.admin_up;
		}
		mrcd_prom_add_port(&pp->c, &p->port.c);
		for (unsigned st = 0; st < MRCP_EV_NSTATES; st++)
			pp->ev_state[st] += p->live.ev_state[k][st];
	}
}

/* @return 0, or -ETIMEDOUT if a worker did not take its call. */
static int gather(struct mrcd_prom *p)
{
	struct mrcd_prom_snapshot *s = &p->snap;
	unsigned n = mrcd_dp_n_workers(p->dp);

	memset(s, 0, sizeof(*s));
	snprintf(s->version, sizeof(s->version), "%s", MRCD_VERSION);
	s->n_ports = mrcd_dp_n_ports(p->dp);
	if (s->n_ports > MRCP_MAX_PORTS)
		s->n_ports = MRCP_MAX_PORTS;
	s->n_workers = n < MRCD_DP_MAX_WORKERS ? n : MRCD_DP_MAX_WORKERS;
	for (unsigned k = 0; k < s->n_workers; k++) {
		struct gather g = { p, k };

		if (mrcd_dp_call(mrcd_dp_worker(p->dp, k), gather_fn, &g, PROM_CALL_TIMEOUT_MS) < 0)
			return -ETIMEDOUT;
	}
	return 0;
}

/* ---- HTTP ---------------------------------------------------------------------------- */

static enum MHD_Result reply_text(struct MHD_Connection *c, unsigned status, const char *text,
				  const char *allow)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text), (void *)(uintptr_t)text,
								 MHD_RESPMEM_PERSISTENT);
	enum MHD_Result rc;

	if (r == NULL)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	if (allow != NULL)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
	rc = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return rc;
}

static enum MHD_Result reply_metrics(struct mrcd_prom *p, struct MHD_Connection *c)
{
	struct MHD_Response *r;
	enum MHD_Result rc;
	size_t cap = PROM_TEXT_FIRST;
	char *buf = NULL;
	int n = -ENOSPC;

	if (gather(p) < 0)
		return reply_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "a worker did not answer in time\n", NULL);
	while (n == -ENOSPC && cap <= PROM_TEXT_MAX) {
		char *nb = realloc(buf, cap);

		if (nb == NULL)
			break;
		buf = nb;
		n = mrcd_prom_format(&p->snap, buf, cap);
		cap *= 2;
	}
	if (n < 0) {
		free(buf);
		return reply_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n", NULL);
	}
	r = MHD_create_response_from_buffer((size_t)n, buf, MHD_RESPMEM_MUST_FREE);
	if (r == NULL) {
		free(buf);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8");
	rc = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return rc;
}

/* Every request is answered on the first call, once its headers are in: a
 * body (which GET has no use for) is never read; libmicrohttpd then closes
 * the connection after the answer. */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
				  const char *version, const char *upload_data, size_t *upload_data_size,
				  void **req_cls)
{
	struct mrcd_prom *p = cls;

	(void)version;
	(void)upload_data;
	(void)upload_data_size;
	(void)req_cls;
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
		return reply_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET /metrics\n", "GET, HEAD");
	if (strcmp(url, "/metrics") != 0)
		return reply_text(c, MHD_HTTP_NOT_FOUND, "not found: only GET /metrics\n", NULL);
	return reply_metrics(p, c);
}

__attribute__((format(printf, 2, 0)))
static void on_log(void *cls, const char *fmt, va_list ap)
{
	char msg[256];
	size_t n;

	(void)cls;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n > 0 && msg[n - 1] == '\n')
		msg[--n] = '\0';
	MRCD_LOG(DEBUG, ctl, "prometheus: %s\n", msg); /* per request: a client must not flood the log */
}

int mrcd_prom_start(struct mrcd_dp *dp, const struct mrcd_config *cfg, struct mrcd_prom **out,
		    char *err, size_t errlen)
{
	const typeof(cfg->telemetry.prometheus) *pc = &cfg->telemetry.prometheus;
	struct sockaddr_storage ss;
	struct mrcd_prom *p;
	unsigned flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG;

	memset(&ss, 0, sizeof(ss));
	if (pc->family == 6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

		a->sin6_family = AF_INET6;
		a->sin6_port = htons(pc->port);
		memcpy(&a->sin6_addr, pc->addr, 16);
		flags |= MHD_USE_IPv6;
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;

		a->sin_family = AF_INET;
		a->sin_port = htons(pc->port);
		memcpy(&a->sin_addr, pc->addr, 4);
	}
	p = calloc(1, sizeof(*p));
	if (p == NULL) {
		snprintf(err, errlen, "telemetry.prometheus: out of memory");
		return -ENOMEM;
	}
	p->dp = dp;
	errno = 0;
	p->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, p,
				MHD_OPTION_EXTERNAL_LOGGER, on_log, NULL,
				MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned)PROM_MAX_CONNECTIONS,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)PROM_TIMEOUT_S,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)PROM_CONN_MEMORY,
				/* 400 for what HTTP/1.1 forbids (no Host, a header
				 * line without a colon, ...) */
				MHD_OPTION_STRICT_FOR_CLIENT, 1,
				MHD_OPTION_END);
	if (p->d == NULL) {
		int e = errno ? errno : EADDRNOTAVAIL;

		snprintf(err, errlen, "telemetry.prometheus.listen %s: cannot listen: %s", pc->listen, strerror(e));
		free(p);
		return -e;
	}
	MRCD_LOG(NOTICE, ctl, "prometheus: serving GET /metrics on %s\n", pc->listen);
	*out = p;
	return 0;
}

void mrcd_prom_stop(struct mrcd_prom *p)
{
	if (p == NULL)
		return;
	MHD_stop_daemon(p->d);
	free(p);
}
