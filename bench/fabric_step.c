/* fabric_step.c - one "collective step" over Linux TCP or MPTCP, for
 * scripts/bench/fabric_steps.sh: N flows of B bytes each, started together,
 * timed from the first connect() to the last flow's end-to-end
 * acknowledgement. Plain sockets, one thread, poll().
 *
 *   fabric_step --server [--mptcp] [--port P] [--bind ADDR]
 *   fabric_step --client ADDR[,ADDR...] [--mptcp] [--port P] [--flows N]
 *               [--bytes B] [--timeout SEC] [--interval-ms MS] [--json]
 *
 * Wire: the client sends an 8-byte big-endian length L, then L bytes; the
 * server reads them all and answers with one byte; the client's flow ends
 * when that byte arrives (so a flow's time covers delivery, not just the
 * client's send buffer). Flows go to the addresses round robin. The client
 * samples, every --interval-ms, the bytes the peer has acknowledged at the
 * transport level (bytes written minus SIOCOUTQ, the unacknowledged and
 * unsent bytes in the send queue) for a goodput time series; a flow's bytes
 * count as delivered once its answer arrived. A step that is not done by
 * --timeout is reported as stalled (exit 3), with what it had delivered.
 *
 * Output (--json): {"transport", "flows", "bytes_per_flow", "seconds",
 * "stalled", "delivered", "flow_seconds": [...], "subflows": [...] (MPTCP:
 * the subflows each connection had at its end, MPTCP_INFO), "series":
 * [[t_s, delivered_bytes], ...]}. Exit: 0 done, 1 error, 2 usage, 3 stalled.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/mptcp.h>
#include <linux/sockios.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif
#ifndef SOL_MPTCP
#define SOL_MPTCP 284
#endif

#define MAX_FLOWS 256
#define MAX_ADDRS 8
#define MAX_SAMPLES 100000
#define CHUNK (256u * 1024u)

static volatile sig_atomic_t stop;

static void on_signal(int s)
{
	(void)s;
	stop = 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: fabric_step --server [--mptcp] [--port P] [--bind ADDR]\n"
		"       fabric_step --client ADDR[,ADDR...] [--mptcp] [--port P] [--flows N]\n"
		"                   [--bytes B] [--timeout SEC] [--interval-ms MS] [--json]\n");
}

static int parse_bytes(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -1;
	switch (*end) {
	case 'K': case 'k': v <<= 10; end++; break;
	case 'M': case 'm': v <<= 20; end++; break;
	case 'G': case 'g': v <<= 30; end++; break;
	default: break;
	}
	if (*end != '\0' || v == 0)
		return -1;
	*out = v;
	return 0;
}

static int sock_new(bool mptcp, int family)
{
	int fd = socket(family, SOCK_STREAM, mptcp ? IPPROTO_MPTCP : IPPROTO_TCP);

	if (fd < 0)
		fprintf(stderr, "fabric_step: socket(%s): %s\n", mptcp ? "MPTCP" : "TCP", strerror(errno));
	return fd;
}

static void set_nonblock(int fd)
{
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

/* ---- server ------------------------------------------------------------------ */

struct sconn {
	int fd;
	uint8_t hdr[8];
	unsigned hdr_got;
	uint64_t want, got;
};

static int run_server(const char *bind_addr, const char *port, bool mptcp)
{
	struct addrinfo hints = {.ai_flags = AI_PASSIVE, .ai_socktype = SOCK_STREAM}, *ai;
	static struct sconn c[MAX_FLOWS];
	static uint8_t buf[CHUNK];
	struct pollfd pf[MAX_FLOWS + 1];
	int lfd, one = 1, rc;

	if ((rc = getaddrinfo(bind_addr, port, &hints, &ai)) != 0) {
		fprintf(stderr, "fabric_step: %s: %s\n", bind_addr ? bind_addr : "*", gai_strerror(rc));
		return 1;
	}
	lfd = sock_new(mptcp, ai->ai_family);
	if (lfd < 0)
		return 1;
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(lfd, MAX_FLOWS) < 0) {
		fprintf(stderr, "fabric_step: bind/listen: %s\n", strerror(errno));
		return 1;
	}
	freeaddrinfo(ai);
	set_nonblock(lfd);
	for (unsigned i = 0; i < MAX_FLOWS; i++)
		c[i].fd = -1;
	fprintf(stderr, "fabric_step: serving %s on port %s\n", mptcp ? "MPTCP" : "TCP", port);
	while (!stop) {
		unsigned n = 0, map[MAX_FLOWS + 1];

		pf[n].fd = lfd;
		pf[n].events = POLLIN;
		map[n++] = MAX_FLOWS;
		for (unsigned i = 0; i < MAX_FLOWS; i++)
			if (c[i].fd >= 0) {
				pf[n].fd = c[i].fd;
				pf[n].events = POLLIN;
				map[n++] = i;
			}
		if (poll(pf, n, 200) < 0) {
			if (errno == EINTR)
				continue;
			return 1;
		}
		if (pf[0].revents & POLLIN) {
			int fd;

			while ((fd = accept(lfd, NULL, NULL)) >= 0) {
				unsigned i;

				for (i = 0; i < MAX_FLOWS && c[i].fd >= 0; i++)
					;
				if (i == MAX_FLOWS) {
					close(fd);
					continue;
				}
				set_nonblock(fd);
				memset(&c[i], 0, sizeof(c[i]));
				c[i].fd = fd;
			}
		}
		for (unsigned k = 1; k < n; k++) {
			struct sconn *s = &c[map[k]];
			ssize_t r;

			if (!(pf[k].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			for (;;) {
				if (s->hdr_got < 8) {
					r = read(s->fd, s->hdr + s->hdr_got, 8 - s->hdr_got);
					if (r > 0 && (s->hdr_got += (unsigned)r) == 8) {
						for (unsigned b = 0; b < 8; b++)
							s->want = s->want << 8 | s->hdr[b];
					}
				} else {
					uint64_t left = s->want - s->got;

					r = read(s->fd, buf, left < sizeof(buf) ? left : sizeof(buf));
					if (r > 0)
						s->got += (uint64_t)r;
				}
				if (r <= 0)
					break;
				if (s->hdr_got == 8 && s->got == s->want) {
					uint8_t ack = 1;

					if (write(s->fd, &ack, 1) != 1) {
						/* the client will time out and say so */
					}
					s->hdr_got = 9; /* done: wait for the client's close */
					break;
				}
			}
			if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
				close(s->fd);
				s->fd = -1;
			}
		}
	}
	close(lfd);
	return 0;
}

/* ---- client ------------------------------------------------------------------ */

struct flow {
	int fd;
	bool connected, done;
	uint64_t sent;         /* header + payload bytes written */
	uint64_t total;        /* header + payload */
	double end_s;
	int subflows;          /* MPTCP: at the end; -1 unknown */
};

static uint64_t delivered(const struct flow *f, uint64_t bytes)
{
	int outq = 0;
	uint64_t acked;

	if (f->done)
		return bytes;
	if (!f->connected || f->fd < 0 || ioctl(f->fd, SIOCOUTQ, &outq) < 0)
		return 0;
	acked = f->sent > (uint64_t)outq ? f->sent - (uint64_t)outq : 0;
	return acked > 8 ? acked - 8 : 0;
}

static int mptcp_subflows(int fd)
{
	struct mptcp_info mi;
	socklen_t len = sizeof(mi);

	memset(&mi, 0, sizeof(mi));
	if (getsockopt(fd, SOL_MPTCP, MPTCP_INFO, &mi, &len) < 0)
		return -1;
	return mi.mptcpi_subflows + 1; /* the count leaves out the initial subflow */
}

static int run_client(char *addrs, const char *port, bool mptcp, unsigned n_flows,
		      uint64_t bytes, double timeout_s, double interval_s, bool json)
{
	static struct flow fl[MAX_FLOWS];
	static uint8_t buf[CHUNK];
	static double st[MAX_SAMPLES];
	static uint64_t sb[MAX_SAMPLES];
	struct addrinfo *ai[MAX_ADDRS];
	struct pollfd pf[MAX_FLOWS];
	unsigned n_addrs = 0, n_s = 0, n_done = 0;
	char *save = NULL;
	double t0, next_sample, deadline;
	bool stalled = false;

	for (char *a = strtok_r(addrs, ",", &save); a && n_addrs < MAX_ADDRS; a = strtok_r(NULL, ",", &save)) {
		struct addrinfo hints = {.ai_socktype = SOCK_STREAM};
		int rc = getaddrinfo(a, port, &hints, &ai[n_addrs]);

		if (rc != 0) {
			fprintf(stderr, "fabric_step: %s: %s\n", a, gai_strerror(rc));
			return 1;
		}
		n_addrs++;
	}
	if (n_addrs == 0)
		return 2;
	memset(buf, 0x5a, sizeof(buf));
	t0 = now_s();
	deadline = t0 + timeout_s;
	for (unsigned i = 0; i < n_flows; i++) {
		struct addrinfo *a = ai[i % n_addrs];
		struct flow *f = &fl[i];
		int one = 1;

		f->total = bytes + 8;
		f->subflows = -1;
		f->fd = sock_new(mptcp, a->ai_family);
		if (f->fd < 0)
			return 1;
		setsockopt(f->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		set_nonblock(f->fd);
		if (connect(f->fd, a->ai_addr, a->ai_addrlen) < 0 && errno != EINPROGRESS) {
			fprintf(stderr, "fabric_step: connect: %s\n", strerror(errno));
			return 1;
		}
	}
	next_sample = t0;
	while (n_done < n_flows) {
		double t = now_s();

		if (t >= next_sample && n_s < MAX_SAMPLES) {
			uint64_t sum = 0;

			for (unsigned i = 0; i < n_flows; i++)
				sum += delivered(&fl[i], bytes);
			st[n_s] = t - t0;
			sb[n_s++] = sum;
			next_sample += interval_s;
		}
		if (t >= deadline || stop) {
			stalled = true;
			break;
		}
		for (unsigned i = 0; i < n_flows; i++) {
			pf[i].fd = fl[i].done ? -1 : fl[i].fd;
			pf[i].events = !fl[i].connected || fl[i].sent < fl[i].total ? POLLOUT : POLLIN;
		}
		double wait = next_sample - t;
		if (wait > deadline - t)
			wait = deadline - t;
		int ms = wait > 0 ? (int)(wait * 1000) + 1 : 0;
		if (poll(pf, n_flows, ms) < 0 && errno != EINTR)
			return 1;
		for (unsigned i = 0; i < n_flows; i++) {
			struct flow *f = &fl[i];

			if (f->done || !pf[i].revents)
				continue;
			if (!f->connected) {
				int err = 0;
				socklen_t el = sizeof(err);

				getsockopt(f->fd, SOL_SOCKET, SO_ERROR, &err, &el);
				if (err != 0) {
					fprintf(stderr, "fabric_step: flow %u: connect: %s\n", i, strerror(err));
					return 1;
				}
				f->connected = true;
			}
			while (f->sent < f->total) {
				uint8_t hdr[8];
				const void *p = buf;
				size_t len;
				ssize_t w;

				if (f->sent < 8) {
					for (unsigned b = 0; b < 8; b++)
						hdr[b] = (uint8_t)(bytes >> (56 - 8 * b));
					p = hdr + f->sent;
					len = 8 - f->sent;
				} else {
					uint64_t left = f->total - f->sent;

					len = left < sizeof(buf) ? (size_t)left : sizeof(buf);
				}
				w = write(f->fd, p, len);
				if (w <= 0)
					break;
				f->sent += (uint64_t)w;
			}
			if (f->sent == f->total && (pf[i].revents & (POLLIN | POLLHUP | POLLERR))) {
				uint8_t ack;
				ssize_t r = read(f->fd, &ack, 1);

				if (r == 1) {
					f->done = true;
					f->end_s = now_s() - t0;
					if (mptcp)
						f->subflows = mptcp_subflows(f->fd);
					n_done++;
				} else if (r == 0 || (r < 0 && errno != EAGAIN)) {
					fprintf(stderr, "fabric_step: flow %u: the server closed early\n", i);
					return 1;
				}
			}
		}
	}
	double end = now_s() - t0;
	uint64_t sum = 0;

	for (unsigned i = 0; i < n_flows; i++)
		sum += delivered(&fl[i], bytes);
	if (n_s < MAX_SAMPLES) {
		st[n_s] = end;
		sb[n_s++] = sum;
	}
	if (json) {
		printf("{\"transport\":\"%s\",\"flows\":%u,\"bytes_per_flow\":%" PRIu64
		       ",\"seconds\":%.6f,\"stalled\":%s,\"delivered\":%" PRIu64 ",\"flow_seconds\":[",
		       mptcp ? "mptcp" : "tcp", n_flows, bytes, end, stalled ? "true" : "false", sum);
		for (unsigned i = 0; i < n_flows; i++) {
			if (fl[i].done)
				printf("%s%.6f", i ? "," : "", fl[i].end_s);
			else
				printf("%snull", i ? "," : "");
		}
		printf("],\"subflows\":[");
		for (unsigned i = 0; i < n_flows; i++)
			printf("%s%d", i ? "," : "", fl[i].subflows);
		printf("],\"series\":[");
		for (unsigned k = 0; k < n_s; k++)
			printf("%s[%.4f,%" PRIu64 "]", k ? "," : "", st[k], sb[k]);
		printf("]}\n");
	} else {
		printf("%s: %u flows x %" PRIu64 " B in %.3f s%s (%.1f Mbit/s)\n", mptcp ? "mptcp" : "tcp",
		       n_flows, bytes, end, stalled ? ", STALLED" : "",
		       (double)sum * 8 / end / 1e6);
	}
	for (unsigned i = 0; i < n_flows; i++)
		close(fl[i].fd);
	for (unsigned k = 0; k < n_addrs; k++)
		freeaddrinfo(ai[k]);
	return stalled ? 3 : 0;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{"server", no_argument, NULL, 's'}, {"client", required_argument, NULL, 'c'},
		{"mptcp", no_argument, NULL, 'm'}, {"port", required_argument, NULL, 'p'},
		{"bind", required_argument, NULL, 'b'}, {"flows", required_argument, NULL, 'n'},
		{"bytes", required_argument, NULL, 'B'}, {"timeout", required_argument, NULL, 't'},
		{"interval-ms", required_argument, NULL, 'i'}, {"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
	};
	bool server = false, mptcp = false, json = false;
	char *client = NULL;
	const char *port = "5301", *bind_addr = NULL;
	unsigned flows = 8;
	uint64_t bytes = 8u << 20;
	double timeout_s = 30, interval_s = 0.05;
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 's': server = true; break;
		case 'c': client = optarg; break;
		case 'm': mptcp = true; break;
		case 'p': port = optarg; break;
		case 'b': bind_addr = optarg; break;
		case 'n':
			flows = (unsigned)strtoul(optarg, NULL, 10);
			if (flows == 0 || flows > MAX_FLOWS) {
				fprintf(stderr, "fabric_step: --flows 1..%d\n", MAX_FLOWS);
				return 2;
			}
			break;
		case 'B':
			if (parse_bytes(optarg, &bytes) < 0) {
				fprintf(stderr, "fabric_step: --bytes: a size (8M, 65536)\n");
				return 2;
			}
			break;
		case 't': timeout_s = strtod(optarg, NULL); break;
		case 'i': interval_s = strtod(optarg, NULL) / 1000.0; break;
		case 'j': json = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (server == (client != NULL) || timeout_s <= 0 || interval_s <= 0) {
		usage(stderr);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	if (server)
		return run_server(bind_addr, port, mptcp);
	return run_client(client, port, mptcp, flows, bytes, timeout_s, interval_s, json);
}
