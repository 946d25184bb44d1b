/* mrc_perf.c - mrc-perf, the perftest-style load generator over libmrc-client:
 * a TCP bootstrap between a client and a server (the line codec is in
 * perf_util.c), then Write / WriteImm traffic on N QPs with a window per
 * QP, credit-based receive buffer reuse, optional payload verification and a
 * ping-pong latency mode, and a combined report. Owns the command line, the
 * data loop and the report; the pure helpers live in perf_util.c.
 *
 * Flow control (MRC has no RNR: a WriteImm without a posted receive kills
 * the QP). A receiver owns rslots = 2 x window message slots per QP and posts
 * rslots receives; message i lands in slot i % rslots. Each data WriteImm
 * consumes one receive, which the receiver re-posts after checking the
 * message. The receiver returns credits (its checked count) with an 8-byte
 * WriteImm whose immediate carries PERF_IMM_CREDIT; a sender posts message i
 * only while i < credit + rslots, so a slot is never overwritten before it
 * was checked and receives never run out. Credits are sent when the count
 * advanced by at least window/2 (at most two in flight), so the sender needs
 * at most rslots/(window/2) + 2 receives posted for them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include "mrc_client.h"
#include "perf_util.h"

enum {
	EXIT_OK = 0,
	EXIT_FAIL = 1,      /* daemon, connection, completion errors, timeout */
	EXIT_USAGE = 2,
	EXIT_VERIFY = 4,    /* the run finished but messages failed verification */
};

#define DEFAULT_PORT "18515"
#define DEFAULT_BIND "127.0.0.1"
#define NS_PER_S 1000000000ull
#define NS_PER_MS 1000000ull
#define BOOT_STEP_NS (30ull * NS_PER_S)   /* one bootstrap step without --timeout */
#define DRAIN_NS (60ull * NS_PER_S)       /* waiting for the peer's stats line */
#define IDLE_WAIT_MS 100                  /* longest mrc_wait_cq before re-checking TCP */
#define PEER_CHECK_NS (100ull * NS_PER_MS) /* look for the peer's abort this often */
#define CQ_BATCH 64
#define POST_BATCH 32
#define CTRL_BYTES 64u                    /* per QP: credit landing word + credit source */
#define LAT_RQ 4u                         /* receives per QP in latency mode */
#define MAX_REPORTED_VERIFY 5             /* verify errors printed in detail */

/* wr_id: kind in bits 62..63, QP index in bits 40..61, message index below */
enum wr_kind { WR_DATA = 0, WR_CREDIT = 1, WR_RECV = 2 };
#define WR_IDX_MASK ((1ull << 40) - 1)

static uint64_t wr_id_make(enum wr_kind k, uint32_t qi, uint64_t idx)
{
	return ((uint64_t)k << 62) | ((uint64_t)qi << 40) | (idx & WR_IDX_MASK);
}

static const char *prog = "mrc-perf";
static volatile sig_atomic_t interrupted;

__attribute__((format(printf, 1, 2), cold))
static void err(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

static bool time_before(uint64_t a, uint64_t b)
{
	return (int64_t)(a - b) < 0;
}

/* ---- options ---------------------------------------------------------------- */

struct opts {
	const char *socket;
	bool server;
	const char *host;          /* --client HOST */
	const char *port;
	const char *bind;
	bool loop, json;
	uint64_t stats_ns;         /* 0 = no periodic lines */
	uint64_t timeout_ns;       /* 0 = no overall deadline */
	struct perf_params p;
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: %s -s SOCKET --server [--port P] [--bind ADDR] [--loop] [--timeout SEC]\n"
"       %s -s SOCKET --client HOST [--port P] [options]\n"
"options (client; the server follows the client's choice):\n"
"  --size BYTES      message size, K/M/G suffixes (default 64K)\n"
"  --window N        messages in flight per QP and direction (default 16)\n"
"  --qps N           queue pairs (default 1)\n"
"  --iters N         messages per QP and direction (default 10000)\n"
"  --duration SEC    run for SEC seconds instead of --iters\n"
"  --op write|write_imm   (default write_imm)\n"
"  --imm-every N     with --op write: a WriteImm every N messages (default window)\n"
"  --bidir           both sides send\n"
"  --verify          fill every message with a pattern; the receiver checks it\n"
"  --latency         ping-pong (window 1): RTT percentiles\n"
"common:\n"
"  -s, --socket PATH mrcd control socket (default $MRCD_SOCKET or /run/mrcd/mrcd.sock)\n"
"  --port P          bootstrap TCP port (default " DEFAULT_PORT ")\n"
"  --bind ADDR       server: listen address (default " DEFAULT_BIND ")\n"
"  --stats SEC       periodic stats line every SEC (default 1, 0 = off)\n"
"  --json            one JSON summary object on stdout\n"
"  --timeout SEC     overall deadline; exit 1 if not done\n"
"  --loop            server: serve runs until killed\n"
"  -V, --version     print the version\n"
"exit: 0 ok, 1 failure, 2 usage, 4 verification errors\n", prog, prog);
}

enum {
	OPT_SERVER = 256, OPT_CLIENT, OPT_PORT, OPT_BIND, OPT_SIZE, OPT_WINDOW, OPT_QPS,
	OPT_ITERS, OPT_DURATION, OPT_OP, OPT_IMM_EVERY, OPT_BIDIR, OPT_VERIFY,
	OPT_LATENCY, OPT_JSON, OPT_STATS, OPT_TIMEOUT, OPT_LOOP, OPT_HELP,
};

static const struct option long_opts[] = {
	{"socket", required_argument, NULL, 's'},
	{"server", no_argument, NULL, OPT_SERVER},
	{"client", required_argument, NULL, OPT_CLIENT},
	{"port", required_argument, NULL, OPT_PORT},
	{"bind", required_argument, NULL, OPT_BIND},
	{"size", required_argument, NULL, OPT_SIZE},
	{"window", required_argument, NULL, OPT_WINDOW},
	{"qps", required_argument, NULL, OPT_QPS},
	{"iters", required_argument, NULL, OPT_ITERS},
	{"duration", required_argument, NULL, OPT_DURATION},
	{"op", required_argument, NULL, OPT_OP},
	{"imm-every", required_argument, NULL, OPT_IMM_EVERY},
	{"bidir", no_argument, NULL, OPT_BIDIR},
	{"verify", no_argument, NULL, OPT_VERIFY},
	{"latency", no_argument, NULL, OPT_LATENCY},
	{"json", no_argument, NULL, OPT_JSON},
	{"stats", required_argument, NULL, OPT_STATS},
	{"timeout", required_argument, NULL, OPT_TIMEOUT},
	{"loop", no_argument, NULL, OPT_LOOP},
	{"help", no_argument, NULL, OPT_HELP},
	{"version", no_argument, NULL, 'V'},
	{NULL, 0, NULL, 0},
};

/* @return 0, or EXIT_USAGE after printing why. */
static int parse_opts(int argc, char **argv, struct opts *o)
{
	bool window_set = false, iters_set = false, imm_every_set = false;
	uint64_t v;
	const char *why;
	int c;

	memset(o, 0, sizeof(*o));
	o->port = DEFAULT_PORT;
	o->bind = DEFAULT_BIND;
	o->stats_ns = NS_PER_S;
	o->p.size = 64 * 1024;
	o->p.window = 16;
	o->p.qps = 1;
	o->p.op = PERF_OP_WRITE_IMM;
	o->p.iters = 10000;

#define BAD(...) do { err(__VA_ARGS__); return EXIT_USAGE; } while (0)
	while ((c = getopt_long(argc, argv, "s:hV", long_opts, NULL)) != -1) {
		switch (c) {
		case 's': o->socket = optarg; break;
		case OPT_SERVER: o->server = true; break;
		case OPT_CLIENT: o->host = optarg; break;
		case OPT_PORT:
			if (perf_parse_uint(optarg, 1, 65535, &v) < 0)
				BAD("--port: expected 1..65535, got '%s'", optarg);
			o->port = optarg;
			break;
		case OPT_BIND: o->bind = optarg; break;
		case OPT_SIZE:
			if (perf_parse_size(optarg, &o->p.size) < 0 || o->p.size < 1 ||
			    o->p.size > PERF_MAX_SIZE)
				BAD("--size: expected 1..1G (K/M/G suffixes), got '%s'", optarg);
			break;
		case OPT_WINDOW:
			if (perf_parse_uint(optarg, 1, PERF_MAX_WINDOW, &v) < 0)
				BAD("--window: expected 1..%u, got '%s'", PERF_MAX_WINDOW, optarg);
			o->p.window = (uint32_t)v;
			window_set = true;
			break;
		case OPT_QPS:
			if (perf_parse_uint(optarg, 1, PERF_MAX_QPS, &v) < 0)
				BAD("--qps: expected 1..%u, got '%s'", PERF_MAX_QPS, optarg);
			o->p.qps = (uint32_t)v;
			break;
		case OPT_ITERS:
			if (perf_parse_uint(optarg, 1, 1ull << 40, &v) < 0)
				BAD("--iters: expected 1..2^40, got '%s'", optarg);
			o->p.iters = v;
			iters_set = true;
			break;
		case OPT_DURATION:
			if (perf_parse_seconds(optarg, &o->p.duration_ns) < 0 || o->p.duration_ns == 0)
				BAD("--duration: expected seconds > 0, got '%s'", optarg);
			break;
		case OPT_OP:
			if (perf_op_parse(optarg, &o->p.op) < 0)
				BAD("--op: expected write or write_imm, got '%s'", optarg);
			break;
		case OPT_IMM_EVERY:
			if (perf_parse_uint(optarg, 1, PERF_MAX_WINDOW, &v) < 0)
				BAD("--imm-every: expected 1..%u, got '%s'", PERF_MAX_WINDOW, optarg);
			o->p.imm_every = (uint32_t)v;
			imm_every_set = true;
			break;
		case OPT_BIDIR: o->p.bidir = true; break;
		case OPT_VERIFY: o->p.verify = true; break;
		case OPT_LATENCY: o->p.latency = true; break;
		case OPT_JSON: o->json = true; break;
		case OPT_STATS:
			if (perf_parse_seconds(optarg, &o->stats_ns) < 0)
				BAD("--stats: expected seconds, got '%s'", optarg);
			break;
		case OPT_TIMEOUT:
			if (perf_parse_seconds(optarg, &o->timeout_ns) < 0 || o->timeout_ns == 0)
				BAD("--timeout: expected seconds > 0, got '%s'", optarg);
			break;
		case OPT_LOOP: o->loop = true; break;
		case 'h': case OPT_HELP: usage(stdout); exit(EXIT_OK);
		case 'V': printf("%s %s\n", prog, MRCD_VERSION); exit(EXIT_OK);
		default: usage(stderr); return EXIT_USAGE;
		}
	}
	if (optind < argc)
		BAD("unexpected argument '%s' (see --help)", argv[optind]);
	if (o->server == (o->host != NULL))
		BAD("give exactly one of --server and --client HOST (see --help)");
	if (o->loop && !o->server)
		BAD("--loop is a server option");
	if (o->p.duration_ns != 0) {
		if (iters_set)
			BAD("--iters and --duration exclude each other");
		o->p.iters = 0;
	}
	if (o->p.latency) {
		if (window_set && o->p.window != 1)
			BAD("--latency is ping-pong: --window must be 1 (or left out)");
		if (o->p.bidir)
			BAD("--latency and --bidir exclude each other");
		if (o->p.op != PERF_OP_WRITE_IMM)
			BAD("--latency uses write_imm (the reply needs a completion)");
		o->p.window = 1;
	}
	if (imm_every_set && o->p.op != PERF_OP_WRITE)
		BAD("--imm-every applies to --op write only");
	if (!imm_every_set || o->p.imm_every > o->p.window)
		o->p.imm_every = imm_every_set ? o->p.imm_every : o->p.window;
	if (o->p.imm_every > o->p.window)
		BAD("--imm-every must not exceed --window (%u)", o->p.window);
	if (perf_params_check(&o->p, &why) < 0)
		BAD("%s", why);
#undef BAD
	return 0;
}

/* ---- bootstrap TCP ----------------------------------------------------------- */

struct conn {
	int fd;
	char buf[4 * PERF_LINE_MAX];
	size_t len;          /* bytes buffered */
	bool eof;
};

static void conn_init(struct conn *c, int fd)
{
	c->fd = fd;
	c->len = 0;
	c->eof = false;
}

static int conn_send(struct conn *c, const char *line)
{
	size_t n = strlen(line), off = 0;

	while (off < n) {
		ssize_t w = send(c->fd, line + off, n - off, MSG_NOSIGNAL);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		off += (size_t)w;
	}
	return 0;
}

/* Read what is available without blocking. @return 0, -errno. */
static int conn_pump(struct conn *c)
{
	while (!c->eof && c->len < sizeof(c->buf)) {
		ssize_t r = recv(c->fd, c->buf + c->len, sizeof(c->buf) - c->len, MSG_DONTWAIT);
		if (r == 0)
			c->eof = true;
		else if (r < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -errno;
		else
			c->len += (size_t)r;
	}
	return 0;
}

/* A complete line is buffered. */
static bool conn_has_line(const struct conn *c)
{
	return memchr(c->buf, '\n', c->len) != NULL;
}

/* Take one line (without '\n') into @out, waiting until @deadline.
 * @return 0, -ETIMEDOUT, -EPIPE (closed), -EMSGSIZE, -EINTR, -errno. */
static int conn_read_line(struct conn *c, char *out, size_t outlen, uint64_t deadline)
{
	for (;;) {
		char *nl = memchr(c->buf, '\n', c->len);
		if (nl != NULL) {
			size_t n = (size_t)(nl - c->buf);
			if (n + 1 > outlen)
				return -EMSGSIZE;
			memcpy(out, c->buf, n);
			out[n] = '\0';
			memmove(c->buf, nl + 1, c->len - n - 1);
			c->len -= n + 1;
			return 0;
		}
		if (c->len == sizeof(c->buf))
			return -EMSGSIZE;
		if (c->eof)
			return -EPIPE;
		uint64_t t = now_ns();
		if (!time_before(t, deadline))
			return -ETIMEDOUT;
		uint64_t left_ms = (deadline - t + NS_PER_MS - 1) / NS_PER_MS;
		struct pollfd pfd = {.fd = c->fd, .events = POLLIN};
		int rc = poll(&pfd, 1, left_ms > 1000 ? 1000 : (int)left_ms);
		if (rc < 0 && errno != EINTR)
			return -errno;
		if (interrupted)
			return -EINTR;
		rc = conn_pump(c);
		if (rc < 0)
			return rc;
	}
}

static const char *conn_strerror(int rc)
{
	switch (rc) {
	case -ETIMEDOUT: return "timed out";
	case -EPIPE: return "peer closed the connection";
	case -EMSGSIZE: return "line too long";
	case -EINTR: return "interrupted";
	default: return strerror(-rc);
	}
}

/* Resolve @host:@port; the caller picked the address (or the loopback
 * default), mrc-perf never invents one. */
static int resolve(const char *host, const char *port, struct addrinfo **res)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
	int rc = getaddrinfo(host, port, &hints, res);

	if (rc != 0) {
		err("resolve %s port %s: %s", host, port, gai_strerror(rc));
		return -1;
	}
	return 0;
}

static int tcp_listen(const char *bind_addr, const char *port)
{
	struct addrinfo *res, *ai;
	int fd = -1, one = 1, last = 0;

	if (resolve(bind_addr, port, &res) < 0)
		return -1;
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0) {
			last = errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 4) == 0)
			break;
		last = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		err("listen on %s port %s: %s", bind_addr, port, strerror(last));
	return fd;
}

static int tcp_connect(const char *host, const char *port)
{
	struct addrinfo *res, *ai;
	int fd = -1, one = 1, last = ECONNREFUSED;

	if (resolve(host, port, &res) < 0)
		return -1;
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0) {
			last = errno;
			continue;
		}
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		last = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		err("connect to %s port %s: %s", host, port, strerror(last));
		return -1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/* ---- the run ------------------------------------------------------------------- */

struct qp_state {
	uint32_t idx, qpn;
	uint8_t *rx;               /* rslots * size bytes the peer writes (NULL if !rx_on) */
	uint8_t *ctrl;             /* CTRL_BYTES: [0,8) credit landing, [8,16) credit source */
	uint8_t *tx;               /* ntx * size send slots (NULL if !tx_on) */
	bool *tx_busy;             /* per send slot, only with verify */
	uint64_t peer_va, peer_len;
	uint32_t peer_rkey;

	/* sending */
	uint64_t tx_next;          /* next message index to post */
	uint64_t tx_limit;         /* messages to send; UINT64_MAX until a duration ends */
	uint64_t credit;           /* the receiver's checked count, from credit WriteImms */
	uint32_t inflight;         /* data sends posted and not completed */
	uint64_t lat_t0;           /* latency client: when the outstanding ping was posted */
	bool lat_waiting;          /* latency client: a ping is waiting for its reply */
	uint64_t echo_next;        /* latency server: pings received, replies owed up to */
	bool echo_last;            /* latency server: the owed reply ends the run */

	/* receiving */
	uint64_t rx_checked;       /* data messages counted (and checked) */
	bool rx_last;              /* the LAST message was seen */
	uint64_t credit_sent;      /* rx_checked at the last credit */
	uint32_t credit_inflight;  /* credit WriteImms not completed */
	uint32_t rq_deficit;       /* receives consumed and not re-posted */
};

struct run {
	const struct opts *o;
	struct perf_params p;
	bool is_server;
	unsigned tx_dir;           /* pattern dir of what this side sends */
	bool tx_on, rx_on;         /* this side sends / receives data */
	uint32_t rslots, ntx, ce;  /* receive slots, send slots, credit step */
	uint32_t credit_rq;        /* receives posted for credits (sender) */
	struct mrc_ctx *ctx;
	void *mem;
	size_t mem_len;
	struct mrc_mr mr;
	bool mr_ok;
	struct qp_state *q;
	struct conn conn;
	char why[512];             /* the last failure, one line: setup's goes to the peer */
	struct perf_stats st;
	struct perf_hist *hist;
	bool stopping;             /* --duration has passed */
	bool failed;               /* a runtime failure was reported */
	uint64_t reported_verify;
	uint64_t deadline;         /* overall --timeout deadline, 0 = none */
};

static uint64_t boot_deadline(const struct run *r)
{
	uint64_t d = now_ns() + BOOT_STEP_NS;

	return r->deadline != 0 && time_before(r->deadline, d) ? r->deadline : d;
}

/* Record and print a failure: "what: why" in r->why (one line), so that a
 * side that cannot set up can tell its peer (serve_one, run_client). */
__attribute__((format(printf, 2, 3), cold))
static int fail_run(struct run *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->why, sizeof(r->why), fmt, ap);
	va_end(ap);
	for (char *c = r->why; *c; c++)
		if (*c == '\n' || *c == '\r')
			*c = ' ';
	err("%s", r->why);
	r->failed = true;
	return -1;
}

/* A libmrc-client call failed: what, then the daemon's (or the library's)
 * reason, which never repeats the command (docs/control.md). */
__attribute__((format(printf, 3, 4), cold))
static int fail_api(struct run *r, int rc, const char *fmt, ...)
{
	va_list ap;
	char what[256];
	const char *why = r->ctx != NULL ? mrc_last_error(r->ctx) : "";

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return fail_run(r, "%s: %s", what, why[0] != '\0' ? why : mrc_strerror(rc));
}

static size_t align64(size_t v)
{
	return (v + 63) & ~(size_t)63;
}

static void roles(struct run *r)
{
	const struct perf_params *p = &r->p;

	r->tx_dir = r->is_server ? 1 : 0;
	if (p->latency) {
		r->tx_on = r->rx_on = true;
		r->rslots = 2;
		r->ntx = 2;
	} else {
		r->tx_on = !r->is_server || p->bidir;
		r->rx_on = r->is_server || p->bidir;
		r->rslots = 2 * p->window;
		r->ntx = p->verify ? p->window : 1;
	}
	r->ce = p->window / 2 > 0 ? p->window / 2 : 1;
	r->credit_rq = r->rslots / r->ce + 4;
}

static uint32_t rq_per_qp(const struct run *r)
{
	if (r->p.latency)
		return LAT_RQ;
	return (r->rx_on ? r->rslots : 0) + (r->tx_on ? r->credit_rq : 0);
}

/* Ring depths: libmrc-client takes powers of two up to 2^20. */
static uint32_t pow2_at_least(uint64_t v, uint32_t floor_)
{
	uint32_t x = floor_;

	while (x < v && x < (1u << 20))
		x <<= 1;
	return x;
}

/* Open the context, allocate and register one region, create the QPs. */
static int setup(struct run *r)
{
	const struct perf_params *p = &r->p;
	struct mrc_open_attr attr = {.socket = r->o->socket};
	size_t rx_len = r->rx_on ? (size_t)r->rslots * p->size : 0;
	size_t tx_len = r->tx_on ? (size_t)r->ntx * p->size : 0;
	size_t per_qp = align64(rx_len) + CTRL_BYTES + align64(tx_len);
	uint64_t sq = (uint64_t)p->qps * (p->window + 4), rq = (uint64_t)p->qps * rq_per_qp(r);
	char reason[256] = "";
	int rc;

	r->mem_len = per_qp * p->qps;
	attr.heap_bytes = r->mem_len + (1u << 20);
	attr.sq_depth = pow2_at_least(2 * sq, 4096);
	attr.rq_depth = pow2_at_least(2 * rq, 4096);
	attr.cq_depth = pow2_at_least(2 * (sq + rq), 8192);
	rc = mrc_open(&attr, &r->ctx, reason, sizeof(reason));
	if (rc < 0) {
		r->ctx = NULL;
		return fail_run(r, "open %s: %s", r->o->socket != NULL ? r->o->socket : "(default socket)",
				reason[0] != '\0' ? reason : mrc_strerror(rc));
	}
	r->mem = mrc_alloc(r->ctx, r->mem_len, 4096);
	if (r->mem == NULL)
		return fail_api(r, -ENOMEM, "alloc %zu bytes", r->mem_len);
	rc = mrc_reg_mr(r->ctx, r->mem, r->mem_len,
			MRC_ACCESS_LOCAL_WRITE | MRC_ACCESS_REMOTE_WRITE, &r->mr);
	if (rc < 0)
		return fail_api(r, rc, "reg_mr %zu bytes", r->mem_len);
	r->mr_ok = true;
	memset(r->mem, 0, r->mem_len);

	r->q = calloc(p->qps, sizeof(*r->q));
	if (r->q == NULL) {
		return fail_run(r, "out of memory");
	}
	for (uint32_t i = 0; i < p->qps; i++) {
		struct qp_state *q = &r->q[i];
		uint8_t *base = (uint8_t *)r->mem + per_qp * i;
		struct mrc_qp_attr qa = {
			.sq_depth = pow2_at_least(p->window + 4, 8),
			.rq_depth = pow2_at_least(rq_per_qp(r), 8),
			.user_ctx = i,
		};

		q->idx = i;
		q->rx = r->rx_on ? base : NULL;
		q->ctrl = base + align64(rx_len);
		q->tx = r->tx_on ? q->ctrl + CTRL_BYTES : NULL;
		q->tx_limit = p->iters != 0 ? p->iters : UINT64_MAX;
		if (p->verify && r->tx_on) {
			q->tx_busy = calloc(r->ntx, sizeof(*q->tx_busy));
			if (q->tx_busy == NULL) {
				return fail_run(r, "out of memory");
			}
		}
		rc = mrc_qp_create(r->ctx, &qa, &q->qpn);
		if (rc < 0)
			return fail_api(r, rc, "qp_create (QP %u of %u)", i, p->qps);
	}
	if (p->latency) {
		r->hist = malloc(sizeof(*r->hist));
		if (r->hist == NULL) {
			return fail_run(r, "out of memory");
		}
		perf_hist_init(r->hist);
	}
	return 0;
}

static void teardown(struct run *r)
{
	if (r->q != NULL) {
		for (uint32_t i = 0; i < r->p.qps; i++)
			free(r->q[i].tx_busy);
	}
	if (r->ctx != NULL) {
		if (r->q != NULL)
			for (uint32_t i = 0; i < r->p.qps; i++)
				if (r->q[i].qpn != 0)
					mrc_qp_destroy(r->ctx, r->q[i].qpn);
		if (r->mr_ok)
			mrc_dereg_mr(r->ctx, &r->mr);
		if (r->mem != NULL)
			mrc_free(r->ctx, r->mem);
		mrc_close(r->ctx);
	}
	free(r->q);
	free(r->hist);
	r->q = NULL;
	r->hist = NULL;
	r->ctx = NULL;
}

static int local_qp_line(struct run *r, uint32_t i, char *buf, size_t len)
{
	struct qp_state *q = &r->q[i];
	struct perf_qp_line l = {.idx = i, .rkey = r->mr.rkey};
	char text[MRC_CONN_INFO_TEXT];
	int rc = mrc_qp_info_text(r->ctx, q->qpn, text);

	if (rc < 0)
		return fail_api(r, rc, "qp_info_text (QP %u)", i);
	snprintf(l.info, sizeof(l.info), "%s", text);
	l.va = mrc_va(r->ctx, q->rx != NULL ? q->rx : q->ctrl);
	l.len = (uint64_t)(q->ctrl + CTRL_BYTES - (q->rx != NULL ? q->rx : q->ctrl));
	if (perf_qp_line_encode(&l, buf, len) < 0) {
		err("qp line for QP %u does not fit", i);
		r->failed = true;
		return -1;
	}
	return 0;
}

/* Take the peer's qp line: check what it offers, connect our QP to it. */
static int peer_qp_line(struct run *r, uint32_t i, const char *line)
{
	struct perf_qp_line l;
	struct qp_state *q = &r->q[i];
	bool peer_rx = r->p.latency || r->tx_on;   /* we write data into it */
	uint64_t need = CTRL_BYTES + (peer_rx ? (uint64_t)r->rslots * r->p.size : 0);
	int rc;

	if (perf_qp_line_decode(line, &l) < 0 || l.idx != i) {
		err("bootstrap: expected 'qp idx=%u ...', got '%.60s'", i, line);
		r->failed = true;
		return -1;
	}
	if (l.len < need) {
		err("bootstrap: peer QP %u offers %" PRIu64 " bytes, %" PRIu64 " needed",
		    i, l.len, need);
		r->failed = true;
		return -1;
	}
	q->peer_va = l.va;
	q->peer_len = l.len;
	q->peer_rkey = l.rkey;
	rc = mrc_qp_connect_text(r->ctx, q->qpn, l.info);
	if (rc < 0)
		return fail_api(r, rc, "qp_connect (QP %u)", i);
	return 0;
}

static int post_recvs(struct run *r, struct qp_state *q, uint32_t n)
{
	uint64_t ids[64];

	for (unsigned i = 0; i < 64; i++)
		ids[i] = wr_id_make(WR_RECV, q->idx, 0);
	while (n > 0) {
		unsigned k = n > 64 ? 64 : n;
		int rc = mrc_post_recv(r->ctx, q->qpn, ids, k);
		if (rc < 0)
			return fail_api(r, rc, "post_recv (QP %u)", q->idx);
		n -= (unsigned)rc;
		if ((unsigned)rc < k)
			break;    /* ring full: the rest stays in the deficit */
	}
	return (int)n;
}

/* ---- data path ---------------------------------------------------------------- */

__attribute__((cold))
static void verify_failed(struct run *r, struct qp_state *q, uint64_t m, int res, size_t off)
{
	r->st.verify_errors++;
	if (r->reported_verify++ < MAX_REPORTED_VERIFY)
		err("verify: QP %u message %" PRIu64 ": %s (byte %zu)", q->idx, m,
		    perf_verify_str(res), off);
	else if (r->reported_verify == MAX_REPORTED_VERIFY + 1)
		err("verify: more errors, counting only");
}

/* The peer's data WriteImm for message index k arrived: everything up to k
 * is placed (completions leave in MSN order). */
static void on_data_recv(struct run *r, struct qp_state *q, uint32_t imm, uint64_t t)
{
	uint64_t k = perf_imm_index(imm, q->rx_checked);
	unsigned peer_dir = r->tx_dir ^ 1;

	if (k - q->rx_checked >= r->rslots) {
		/* beyond the slots we own: the sender broke the credit rule */
		verify_failed(r, q, k, PERF_VERIFY_HEADER, 0);
		k = q->rx_checked;
	}
	for (uint64_t m = q->rx_checked; m <= k; m++) {
		if (r->p.verify) {
			size_t off;
			const uint8_t *slot = q->rx + (m % r->rslots) * r->p.size;
			int res = perf_pattern_check(slot, r->p.size, peer_dir, q->idx, m, &off);
			if (res != PERF_VERIFY_OK)
				verify_failed(r, q, m, res, off);
		}
		r->st.rx_msgs++;
		r->st.rx_bytes += r->p.size;
	}
	q->rx_checked = k + 1;
	if (imm & PERF_IMM_LAST)
		q->rx_last = true;
	if (r->p.latency) {
		if (r->is_server) {
			q->echo_next = k + 1;
			q->echo_last = (imm & PERF_IMM_LAST) != 0;
		} else {
			perf_hist_record(r->hist, t - q->lat_t0);
			q->lat_waiting = false;
		}
	}
}

static void on_wc(struct run *r, const struct mrc_wc *wc, uint64_t t)
{
	enum wr_kind kind = (enum wr_kind)(wc->wr_id >> 62);
	uint32_t qi = (uint32_t)((wc->wr_id >> 40) & ((1u << 22) - 1));
	struct qp_state *q;

	if (wc->opcode == MRC_WC_QP_ERROR) { /* D70: the QP died; its WRs failed first */
		if (r->st.cq_errors++ == 0)
			err("QP %u entered ERROR: %s", wc->qpn, mrc_qp_cause_str((uint8_t)wc->cause));
		r->failed = true;
		return;
	}
	if (qi >= r->p.qps) {
		err("completion with unknown wr_id 0x%" PRIx64 " (qpn %u)", wc->wr_id, wc->qpn);
		r->st.cq_errors++;
		r->failed = true;
		return;
	}
	q = &r->q[qi];
	if (wc->status != MRC_WC_SUCCESS) {
		if (r->st.cq_errors++ == 0)
			err("completion error on QP %u (%s): %s", qi,
			    kind == WR_RECV ? "receive" : kind == WR_CREDIT ? "credit write" : "data write",
			    mrc_wc_status_str(wc->status));
		r->failed = true;
		return;
	}
	switch (kind) {
	case WR_DATA:
		q->inflight--;
		if (q->tx_busy != NULL)
			q->tx_busy[(wc->wr_id & WR_IDX_MASK) % r->ntx] = false;
		r->st.tx_msgs++;
		r->st.tx_bytes += r->p.size;
		break;
	case WR_CREDIT:
		q->credit_inflight--;
		break;
	case WR_RECV:
		q->rq_deficit++;
		if (wc->opcode != MRC_WC_RECV_WRITE_IMM)
			break;
		if (wc->imm & PERF_IMM_CREDIT)
			q->credit = perf_imm_index(wc->imm, q->credit);
		else
			on_data_recv(r, q, wc->imm, t);
		break;
	default:
		err("completion with unknown wr_id 0x%" PRIx64, wc->wr_id);
		r->failed = true;
	}
}

/* May message q->tx_next go now? */
static bool tx_allowed(const struct run *r, const struct qp_state *q)
{
	uint64_t i = q->tx_next;

	if (i >= q->tx_limit)
		return false;
	if (q->tx_busy != NULL && q->tx_busy[i % r->ntx])
		return false;   /* --verify: the slot's previous message is still going */
	if (r->p.latency) {
		/* a reply can overtake the completion of its ping: two slots */
		if (q->inflight >= r->ntx)
			return false;
		return r->is_server ? i < q->echo_next : !q->lat_waiting;
	}
	return q->inflight < r->p.window && i - q->credit < r->rslots;
}

/* Post what the window, the credits and the role allow.
 * @return messages posted, or -1 on failure; *@short_ring when the send
 * ring took fewer than offered. */
static int post_data(struct run *r, struct qp_state *q, uint64_t t, bool *short_ring)
{
	struct mrc_send_wr wr[POST_BATCH];
	struct mrc_sge sge[POST_BATCH];
	uint64_t first = q->tx_next;
	unsigned n = 0;
	int rc;

	while (n < POST_BATCH && tx_allowed(r, q)) {
		uint64_t i = q->tx_next;
		uint8_t *slot = q->tx + (i % r->ntx) * r->p.size;
		bool last = i + 1 == q->tx_limit ||
			    (r->p.latency && r->is_server && q->echo_last && i + 1 == q->echo_next);
		bool imm = r->p.op == PERF_OP_WRITE_IMM || last || (i + 1) % r->p.imm_every == 0;

		if (r->p.verify)
			perf_pattern_fill(slot, r->p.size, r->tx_dir, q->idx, i);
		sge[n] = (struct mrc_sge){.addr = slot, .len = (uint32_t)r->p.size, .lkey = r->mr.lkey};
		wr[n] = (struct mrc_send_wr){
			.wr_id = wr_id_make(WR_DATA, q->idx, i),
			.opcode = imm ? MRC_WR_WRITE_IMM : MRC_WR_WRITE,
			.flags = MRC_WR_SIGNALED,
			.imm = perf_imm_make(i, last ? PERF_IMM_LAST : 0),
			.sg_list = &sge[n],
			.num_sge = 1,
			.remote_addr = q->peer_va + (i % r->rslots) * r->p.size,
			.rkey = q->peer_rkey,
		};
		if (q->tx_busy != NULL)
			q->tx_busy[i % r->ntx] = true;
		q->tx_next++;
		q->inflight++;
		n++;
		if (r->p.latency && !r->is_server) {
			q->lat_t0 = t;
			q->lat_waiting = true;
		}
	}
	if (n == 0)
		return 0;
	rc = mrc_post_send(r->ctx, q->qpn, wr, n);
	if (rc < 0)
		return fail_api(r, rc, "post_send (QP %u)", q->idx);
	if ((unsigned)rc < n) {
		/* give back what the ring did not take */
		for (uint64_t i = first + (unsigned)rc; i < first + n; i++)
			if (q->tx_busy != NULL)
				q->tx_busy[i % r->ntx] = false;
		q->tx_next = first + (unsigned)rc;
		q->inflight -= n - (unsigned)rc;
		if (r->p.latency && !r->is_server && rc == 0)
			q->lat_waiting = false;
		*short_ring = true;
	}
	return rc;
}

/* Return credits to the sender when enough was checked (never after LAST:
 * the sender needs none then, and may already be tearing down). */
static int post_credit(struct run *r, struct qp_state *q, bool *short_ring)
{
	struct mrc_sge sge;
	struct mrc_send_wr wr;
	int rc;

	if (r->p.latency || q->rx_last || q->credit_inflight >= 2 ||
	    q->rx_checked - q->credit_sent < r->ce)
		return 0;
	sge = (struct mrc_sge){.addr = q->ctrl + 8, .len = 8, .lkey = r->mr.lkey};
	memcpy(q->ctrl + 8, &q->rx_checked, 8);
	wr = (struct mrc_send_wr){
		.wr_id = wr_id_make(WR_CREDIT, q->idx, q->rx_checked),
		.opcode = MRC_WR_WRITE_IMM,
		.flags = MRC_WR_SIGNALED,
		.imm = perf_imm_make(q->rx_checked, PERF_IMM_CREDIT),
		.sg_list = &sge,
		.num_sge = 1,
		.remote_addr = q->peer_va + q->peer_len - CTRL_BYTES,
		.rkey = q->peer_rkey,
	};
	rc = mrc_post_send(r->ctx, q->qpn, &wr, 1);
	if (rc < 0)
		return fail_api(r, rc, "post_send credit (QP %u)", q->idx);
	if (rc == 0) {
		*short_ring = true;
		return 0;
	}
	q->credit_sent = q->rx_checked;
	q->credit_inflight++;
	return 1;
}

static bool qp_done(const struct run *r, const struct qp_state *q)
{
	bool tx_done = !r->tx_on || (q->tx_next >= q->tx_limit && q->inflight == 0);
	bool rx_done = !r->rx_on || (q->rx_last && q->credit_inflight == 0);

	if (r->p.latency && r->is_server)
		tx_done = q->rx_last && q->tx_next >= q->echo_next && q->inflight == 0;
	return tx_done && rx_done;
}

static void stats_line(struct run *r, uint64_t t0, uint64_t t, uint64_t *last_t,
		       uint64_t *last_bytes, uint64_t *last_msgs)
{
	uint64_t bytes = r->st.tx_bytes + r->st.rx_bytes, msgs = r->st.tx_msgs + r->st.rx_msgs;
	double dt = (double)(t - *last_t) / 1e9;
	FILE *f = r->o->json ? stderr : stdout;

	if (dt <= 0)
		return;
	fprintf(f, "%s: [%s %7.2f s] %8.3f Gbit/s %10.0f msg/s  cq_errors %" PRIu64
		"  verify_errors %" PRIu64 "\n", prog, r->is_server ? "server" : "client",
		(double)(t - t0) / 1e9, (double)(bytes - *last_bytes) * 8 / dt / 1e9,
		(double)(msgs - *last_msgs) / dt, r->st.cq_errors, r->st.verify_errors);
	fflush(f);
	*last_t = t;
	*last_bytes = bytes;
	*last_msgs = msgs;
}

/* During the data phase the peer sends nothing but its final stats line;
 * one with aborted=1, or a closed connection, means it gave up. */
static int check_peer(struct run *r)
{
	struct perf_stats ps;
	char line[PERF_LINE_MAX];
	const char *nl;
	size_t n;

	if (conn_pump(&r->conn) < 0 || (r->conn.eof && !conn_has_line(&r->conn))) {
		err("peer closed the bootstrap connection during the run");
		r->failed = true;
		return -1;
	}
	nl = memchr(r->conn.buf, '\n', r->conn.len);
	if (nl == NULL)
		return 0;
	n = (size_t)(nl - r->conn.buf);
	if (n >= sizeof(line))
		n = sizeof(line) - 1;
	memcpy(line, r->conn.buf, n);
	line[n] = '\0';
	if (perf_stats_decode(line, &ps) < 0) {
		err("bootstrap: unexpected line during the run: '%.60s'", line);
		r->failed = true;
		return -1;
	}
	if (ps.aborted) {
		err("the peer gave up (see its messages)");
		r->failed = true;
		return -1;
	}
	return 0;   /* the peer finished; its line stays buffered for the report */
}

static int data_phase(struct run *r)
{
	struct mrc_wc wc[CQ_BATCH];
	uint64_t t0 = now_ns(), t = t0, last_t = t0, last_bytes = 0, last_msgs = 0;
	uint64_t next_stats = t0 + r->o->stats_ns, next_peer = t0 + PEER_CHECK_NS;
	uint64_t end = r->p.duration_ns != 0 ? t0 + r->p.duration_ns : 0;

	for (;;) {
		bool short_ring = false, all_done = true;
		int n = mrc_poll_cq(r->ctx, wc, CQ_BATCH);

		if (n < 0) {
			fail_api(r, n, "poll_cq");
			break;
		}
		t = now_ns();
		for (int i = 0; i < n; i++)
			on_wc(r, &wc[i], t);
		if (r->failed)
			break;
		if (interrupted) {
			err("interrupted");
			r->failed = true;
			break;
		}
		if (end != 0 && !r->stopping && !time_before(t, end)) {
			/* the next message of each QP is its last */
			r->stopping = true;
			for (uint32_t i = 0; i < r->p.qps; i++)
				if (r->tx_on && !(r->p.latency && r->is_server))
					r->q[i].tx_limit = r->q[i].tx_next + 1;
		}
		for (uint32_t i = 0; i < r->p.qps; i++) {
			struct qp_state *q = &r->q[i];

			if (r->tx_on && post_data(r, q, t, &short_ring) < 0)
				break;
			if (r->rx_on && post_credit(r, q, &short_ring) < 0)
				break;
			if (q->rq_deficit > 0) {
				int left = post_recvs(r, q, q->rq_deficit);
				if (left < 0)
					break;
				short_ring |= left > 0;
				q->rq_deficit = (uint32_t)left;
			}
			all_done &= qp_done(r, q);
		}
		if (r->failed)
			break;
		if (all_done)
			break;
		if (r->o->stats_ns != 0 && !time_before(t, next_stats)) {
			stats_line(r, t0, t, &last_t, &last_bytes, &last_msgs);
			next_stats += r->o->stats_ns;
			if (time_before(next_stats, t))
				next_stats = t + r->o->stats_ns;
		}
		if (!time_before(t, next_peer)) {
			next_peer = t + PEER_CHECK_NS;
			if (check_peer(r) < 0)
				break;
		}
		if (r->deadline != 0 && !time_before(t, r->deadline)) {
			err("timeout: the run did not finish within --timeout");
			r->failed = true;
			break;
		}
		if (n == 0) {
			/* nothing completed and everything allowed is posted: sleep on
			 * the CQ's eventfd until a completion, the next stats line, the
			 * end of --duration or the deadline */
			uint64_t wake = t + (short_ring ? NS_PER_MS : IDLE_WAIT_MS * NS_PER_MS);
			int rc;

			if (r->o->stats_ns != 0 && time_before(next_stats, wake))
				wake = next_stats;
			if (end != 0 && !r->stopping && time_before(end, wake))
				wake = end;
			if (r->deadline != 0 && time_before(r->deadline, wake))
				wake = r->deadline;
			rc = mrc_wait_cq(r->ctx, time_before(t, wake) ?
					 (int)((wake - t + NS_PER_MS - 1) / NS_PER_MS) : 0);
			if (rc < 0 && rc != -EINTR) {
				fail_api(r, rc, "wait_cq");
				break;
			}
			if (rc == 0 && check_peer(r) < 0)
				break;
		}
	}
	r->st.ns = now_ns() - t0;
	r->st.aborted = r->failed;
	if (!r->failed && r->p.iters != 0 && r->rx_on) {
		for (uint32_t i = 0; i < r->p.qps; i++)
			if (r->q[i].rx_checked != r->p.iters) {
				err("QP %u: received %" PRIu64 " messages, expected %" PRIu64,
				    i, r->q[i].rx_checked, r->p.iters);
				r->failed = true;
			}
	}
	return r->failed ? -1 : 0;
}

/* Send our stats line, take the peer's. @return 0 with *@peer, -1. */
static int exchange_stats(struct run *r, struct perf_stats *peer)
{
	char line[PERF_LINE_MAX];
	uint64_t deadline = now_ns() + DRAIN_NS;
	int rc;

	if (r->deadline != 0 && time_before(r->deadline, deadline))
		deadline = r->deadline;
	r->st.aborted = r->failed;
	if (perf_stats_encode(&r->st, line, sizeof(line)) < 0 ||
	    (rc = conn_send(&r->conn, line)) < 0) {
		if (!r->failed)
			err("bootstrap: send stats: %s", strerror(errno));
		r->failed = true;
		return -1;
	}
	if (r->failed)
		return -1;   /* told the peer; nothing to combine */
	rc = conn_read_line(&r->conn, line, sizeof(line), deadline);
	if (rc < 0) {
		err("bootstrap: waiting for the peer's stats: %s", conn_strerror(rc));
		r->failed = true;
		return -1;
	}
	if (perf_stats_decode(line, peer) < 0) {
		err("bootstrap: expected the peer's stats line, got '%.60s'", line);
		r->failed = true;
		return -1;
	}
	if (peer->aborted) {
		err("the peer gave up (see its messages)");
		r->failed = true;
		return -1;
	}
	return 0;
}

/* ---- report ---------------------------------------------------------------------- */

static double gbps(uint64_t bytes, uint64_t ns)
{
	return ns != 0 ? (double)bytes * 8 / (double)ns : 0;
}

static double per_s(uint64_t n, uint64_t ns)
{
	return ns != 0 ? (double)n * 1e9 / (double)ns : 0;
}

static void report(const struct run *r, const struct perf_stats *srv, int code)
{
	const struct perf_stats *cl = &r->st;
	const struct perf_params *p = &r->p;
	uint64_t bytes = srv->rx_bytes + cl->rx_bytes, msgs = srv->rx_msgs + cl->rx_msgs;
	uint64_t ns = cl->ns;
	uint64_t cq = cl->cq_errors + srv->cq_errors, ve = cl->verify_errors + srv->verify_errors;
	const struct perf_hist *h = r->hist;

	if (r->o->json) {
		printf("{\"mode\":\"%s\",\"op\":\"%s\",\"size\":%" PRIu64 ",\"window\":%u,"
		       "\"qps\":%u,\"bidir\":%s,\"verify\":%s,\"bytes\":%" PRIu64
		       ",\"messages\":%" PRIu64 ",\"seconds\":%.6f,\"gbps\":%.4f,"
		       "\"msgs_per_s\":%.1f,\"client_to_server_bytes\":%" PRIu64
		       ",\"server_to_client_bytes\":%" PRIu64 ",\"cq_errors\":%" PRIu64
		       ",\"verify_errors\":%" PRIu64,
		       p->latency ? "latency" : "bandwidth", perf_op_str(p->op), p->size,
		       p->window, p->qps, p->bidir ? "true" : "false",
		       p->verify ? "true" : "false", bytes, msgs, (double)ns / 1e9,
		       gbps(bytes, ns), per_s(msgs, ns), srv->rx_bytes, cl->rx_bytes, cq, ve);
		if (h != NULL)
			printf(",\"latency_us\":{\"samples\":%" PRIu64 ",\"min\":%.3f,\"mean\":%.3f,"
			       "\"p50\":%.3f,\"p99\":%.3f,\"p99_9\":%.3f,\"max\":%.3f}",
			       h->count, h->count ? (double)h->min / 1e3 : 0.0,
			       h->count ? (double)h->sum / (double)h->count / 1e3 : 0.0,
			       (double)perf_hist_percentile(h, 50) / 1e3,
			       (double)perf_hist_percentile(h, 99) / 1e3,
			       (double)perf_hist_percentile(h, 99.9) / 1e3, (double)h->max / 1e3);
		printf(",\"exit\":%d}\n", code);
		fflush(stdout);
		return;
	}
	printf("mrc-perf: %s %s, size %" PRIu64 " B, window %u, %u QP%s%s%s\n",
	       p->latency ? "latency" : "bandwidth", perf_op_str(p->op), p->size, p->window,
	       p->qps, p->qps == 1 ? "" : "s", p->bidir ? ", bidirectional" : "",
	       p->verify ? ", verified" : "");
	printf("  client->server  %14" PRIu64 " B %12" PRIu64 " msgs  %9.3f Gbit/s\n",
	       srv->rx_bytes, srv->rx_msgs, gbps(srv->rx_bytes, ns));
	if (p->bidir || p->latency)
		printf("  server->client  %14" PRIu64 " B %12" PRIu64 " msgs  %9.3f Gbit/s\n",
		       cl->rx_bytes, cl->rx_msgs, gbps(cl->rx_bytes, ns));
	printf("  total           %14" PRIu64 " B in %.3f s: goodput %.3f Gbit/s, %.0f msg/s\n",
	       bytes, (double)ns / 1e9, gbps(bytes, ns), per_s(msgs, ns));
	printf("  completion errors %" PRIu64 ", verify errors %" PRIu64 "%s\n", cq, ve,
	       p->verify ? "" : " (not verifying)");
	if (h != NULL)
		printf("  RTT (us): p50 %.2f  p99 %.2f  p99.9 %.2f  max %.2f  (%" PRIu64
		       " samples, min %.2f, mean %.2f)\n",
		       (double)perf_hist_percentile(h, 50) / 1e3,
		       (double)perf_hist_percentile(h, 99) / 1e3,
		       (double)perf_hist_percentile(h, 99.9) / 1e3, (double)h->max / 1e3,
		       h->count, h->count ? (double)h->min / 1e3 : 0.0,
		       h->count ? (double)h->sum / (double)h->count / 1e3 : 0.0);
	fflush(stdout);
}

/* ---- the two sides ---------------------------------------------------------------- */

static int exit_code(const struct run *r, const struct perf_stats *peer)
{
	if (r->failed || r->st.cq_errors != 0 || (peer != NULL && peer->cq_errors != 0))
		return EXIT_FAIL;
	if (r->st.verify_errors != 0 || (peer != NULL && peer->verify_errors != 0))
		return EXIT_VERIFY;
	return EXIT_OK;
}

static int run_client(const struct opts *o)
{
	struct run r = {.o = o, .p = o->p, .is_server = false};
	struct perf_stats peer;
	char line[PERF_LINE_MAX];
	int fd = -1, rc, code;
	bool reported = false;

	memset(&peer, 0, sizeof(peer));
	r.deadline = o->timeout_ns != 0 ? now_ns() + o->timeout_ns : 0;
	roles(&r);
	if (setup(&r) < 0) {
		/* the server is waiting for us: tell it why, so that it ends
		 * now instead of at its timeout */
		fd = tcp_connect(o->host, o->port);
		if (fd >= 0) {
			conn_init(&r.conn, fd);
			snprintf(line, sizeof(line), "error %s\n", r.why);
			conn_send(&r.conn, line);
		}
		goto out;
	}
	fd = tcp_connect(o->host, o->port);
	if (fd < 0) {
		r.failed = true;
		goto out;
	}
	conn_init(&r.conn, fd);
	if (perf_params_encode(&r.p, line, sizeof(line)) < 0 || conn_send(&r.conn, line) < 0)
		goto io_err;
	for (uint32_t i = 0; i < r.p.qps; i++) {
		if (local_qp_line(&r, i, line, sizeof(line)) < 0)
			goto out;
		if (conn_send(&r.conn, line) < 0)
			goto io_err;
	}
	rc = conn_read_line(&r.conn, line, sizeof(line), boot_deadline(&r));
	if (rc < 0) {
		err("bootstrap: waiting for the server's answer: %s", conn_strerror(rc));
		r.failed = true;
		goto out;
	}
	if (!perf_line_is(line, "ok")) {
		err("server refused: %s", perf_line_is(line, "error") ? line + 6 : line);
		r.failed = true;
		goto out;
	}
	for (uint32_t i = 0; i < r.p.qps; i++) {
		rc = conn_read_line(&r.conn, line, sizeof(line), boot_deadline(&r));
		if (rc < 0) {
			err("bootstrap: waiting for qp line %u: %s", i, conn_strerror(rc));
			r.failed = true;
			goto out;
		}
		if (peer_qp_line(&r, i, line) < 0)
			goto out;
	}
	for (uint32_t i = 0; i < r.p.qps; i++) {
		rc = post_recvs(&r, &r.q[i], rq_per_qp(&r));
		if (rc != 0) {
			if (rc > 0)
				err("post_recv (QP %u): receive ring full at start", i);
			r.failed = true;
			goto out;
		}
	}
	if (conn_send(&r.conn, "go\n") < 0)
		goto io_err;
	data_phase(&r);
	if (exchange_stats(&r, &peer) == 0) {
		report(&r, &peer, exit_code(&r, &peer));
		reported = true;
	}
	goto out;
io_err:
	err("bootstrap: send to %s: %s", o->host, strerror(errno));
	r.failed = true;
out:
	code = exit_code(&r, &peer);
	if (!reported && o->json)
		printf("{\"exit\":1,\"error\":true}\n");
	if (fd >= 0)
		close(fd);
	teardown(&r);
	return code;
}

/* Serve one run on an accepted connection. */
static int serve_one(const struct opts *o, int fd)
{
	struct run r = {.o = o, .is_server = true};
	struct perf_stats peer;
	char line[PERF_LINE_MAX], qlines[PERF_MAX_QPS][PERF_LINE_MAX / 2 + 64];
	const char *why = NULL;
	int rc;

	memset(&peer, 0, sizeof(peer));
	r.deadline = o->timeout_ns != 0 ? now_ns() + o->timeout_ns : 0;
	conn_init(&r.conn, fd);
	rc = conn_read_line(&r.conn, line, sizeof(line), boot_deadline(&r));
	if (rc < 0) {
		err("bootstrap: waiting for the client's parameters: %s", conn_strerror(rc));
		return EXIT_FAIL;
	}
	if (perf_line_is(line, "error")) {
		err("the client could not set up: %s", line + 6);
		return EXIT_FAIL;
	}
	rc = perf_params_decode(line, &r.p);
	if (rc < 0) {
		if (rc == -EINVAL)
			perf_params_check(&r.p, &why);
		snprintf(line, sizeof(line), "error %s\n",
			 rc == -EPROTO ? "protocol version mismatch" :
			 why != NULL ? why : "malformed params line");
		err("client parameters refused: %s", line + 6);
		conn_send(&r.conn, line);
		return EXIT_FAIL;
	}
	for (uint32_t i = 0; i < r.p.qps; i++) {
		rc = conn_read_line(&r.conn, qlines[i], sizeof(qlines[i]), boot_deadline(&r));
		if (rc < 0) {
			err("bootstrap: waiting for client qp line %u: %s", i, conn_strerror(rc));
			return EXIT_FAIL;
		}
	}
	roles(&r);
	if (setup(&r) < 0)
		goto refuse;
	for (uint32_t i = 0; i < r.p.qps; i++)
		if (peer_qp_line(&r, i, qlines[i]) < 0)
			goto refuse;
	for (uint32_t i = 0; i < r.p.qps; i++) {
		rc = post_recvs(&r, &r.q[i], rq_per_qp(&r));
		if (rc != 0) {
			if (rc > 0)
				err("post_recv (QP %u): receive ring full at start", i);
			r.failed = true;
			goto refuse;
		}
	}
	if (conn_send(&r.conn, "ok\n") < 0)
		goto io_err;
	for (uint32_t i = 0; i < r.p.qps; i++) {
		if (local_qp_line(&r, i, line, sizeof(line)) < 0)
			goto refuse;
		if (conn_send(&r.conn, line) < 0)
			goto io_err;
	}
	rc = conn_read_line(&r.conn, line, sizeof(line), boot_deadline(&r));
	if (rc < 0 || !perf_line_is(line, "go")) {
		err("bootstrap: expected 'go': %s", rc < 0 ? conn_strerror(rc) : line);
		r.failed = true;
		goto out;
	}
	data_phase(&r);
	if (exchange_stats(&r, &peer) == 0)
		fprintf(stderr, "%s: served %s %" PRIu64 " B x %u QP%s: received %" PRIu64
			" msgs, sent %" PRIu64 " msgs in %.3f s, cq_errors %" PRIu64
			", verify_errors %" PRIu64 "\n", prog, perf_op_str(r.p.op), r.p.size,
			r.p.qps, r.p.qps == 1 ? "" : "s", r.st.rx_msgs, r.st.tx_msgs,
			(double)r.st.ns / 1e9, r.st.cq_errors, r.st.verify_errors);
	goto out;
refuse:
	snprintf(line, sizeof(line), "error server: %s\n",
		 r.why[0] != '\0' ? r.why : "setup failed (see the server's log)");
	conn_send(&r.conn, line);
	goto out;
io_err:
	err("bootstrap: send: %s", strerror(errno));
	r.failed = true;
out:
	rc = exit_code(&r, &peer);
	teardown(&r);
	return rc;
}

static int run_server(const struct opts *o)
{
	int lfd = tcp_listen(o->bind, o->port), code = EXIT_OK;
	uint64_t deadline = o->timeout_ns != 0 ? now_ns() + o->timeout_ns : 0;

	if (lfd < 0)
		return EXIT_FAIL;
	fprintf(stderr, "%s: listening on %s port %s\n", prog, o->bind, o->port);
	for (;;) {
		struct pollfd pfd = {.fd = lfd, .events = POLLIN};
		int fd, rc, one = 1;

		rc = poll(&pfd, 1, 200);
		if (interrupted) {
			code = o->loop ? code : EXIT_FAIL;
			break;
		}
		if (deadline != 0 && !time_before(now_ns(), deadline)) {
			err("timeout: no client within --timeout");
			code = EXIT_FAIL;
			break;
		}
		if (rc <= 0)
			continue;
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			err("accept: %s", strerror(errno));
			code = EXIT_FAIL;
			break;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		code = serve_one(o, fd);
		close(fd);
		if (!o->loop)
			break;
	}
	close(lfd);
	return code;
}

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

int main(int argc, char **argv)
{
	struct opts o;
	struct sigaction sa = {.sa_handler = on_signal};
	int rc = parse_opts(argc, argv, &o);

	if (rc != 0)
		return rc;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	return o.server ? run_server(&o) : run_client(&o);
}
