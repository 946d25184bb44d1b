/* ctl_abuser.c - control-socket abuse for control_abuse.sh: a peer that
 * sends requests and never reads a reply, a crowd of idle connections, and
 * a connection flood. Each mode prints one JSON line with what it saw (on
 * stdout) and exits 0 when the daemon behaved as docs/control.md says.
 *
 *   ctl_abuser noread SOCKET TIMEOUT_S
 *       send `ports` requests without reading until the daemon closes the
 *       connection; exit 1 if it has not within TIMEOUT_S.
 *   ctl_abuser idle SOCKET N TIMEOUT_S
 *       open N connections (RLIMIT_NOFILE raised to fit), print
 *       {"ready":...} once they are all open, then say nothing and wait
 *       until the daemon has closed every one (refused with EBUSY or closed
 *       as idle); exit 1 if some are still open after TIMEOUT_S.
 *   ctl_abuser flood SOCKET SECONDS
 *       for SECONDS, connect, send one request and close at once, as fast
 *       as possible, 8 connections at a time.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static struct sockaddr_un addr = {.sun_family = AF_UNIX};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A non-blocking connected socket, or -errno. */
static int dial(void)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

static int noread(double timeout_s)
{
	static const char req[] = "{\"v\":1,\"cmd\":\"ports\",\"id\":1}\n";
	double t0 = now_s();
	uint64_t sent = 0;
	int fd, e = 0;

	while ((fd = dial()) == -EAGAIN && now_s() - t0 < timeout_s)
		usleep(1000);
	if (fd < 0) {
		printf("{\"error\":\"connect: %s\"}\n", strerror(-fd));
		return 1;
	}
	while (now_s() - t0 < timeout_s) {
		ssize_t w = send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL);
		struct pollfd p = {.fd = fd, .events = POLLOUT};

		if (w > 0) {
			sent += (uint64_t)w;
			continue;
		}
		if (w < 0 && errno != EAGAIN && errno != EINTR) {
			e = errno;
			break;
		}
		/* the daemon reads no more from us: wait for room or the end */
		poll(&p, 1, 100);
		if (p.revents & (POLLHUP | POLLERR)) {
			e = EPIPE;
			break;
		}
	}
	printf("{\"sent_bytes\":%llu,\"closed_by_daemon\":%s,\"error\":\"%s\",\"seconds\":%.3f}\n",
	       (unsigned long long)sent, e ? "true" : "false", e ? strerror(e) : "", now_s() - t0);
	close(fd);
	return e == EPIPE || e == ECONNRESET ? 0 : 1;
}

static void raise_nofile(unsigned n)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < n + 64) {
		rl.rlim_cur = n + 64;
		if (rl.rlim_max < rl.rlim_cur)
			rl.rlim_max = rl.rlim_cur; /* needs CAP_SYS_RESOURCE: fine if refused */
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static int idle(unsigned n, double timeout_s)
{
	int *fds = calloc(n, sizeof(int));
	struct pollfd *p = calloc(n, sizeof(*p));
	unsigned open_n = 0, busy = 0, closed = 0, failed = 0;
	double t0 = now_s();

	if (!fds || !p)
		return 1;
	raise_nofile(n);
	for (unsigned i = 0; i < n; i++) {
		do
			fds[i] = dial();
		while (fds[i] == -EAGAIN && now_s() - t0 < timeout_s && (usleep(1000), 1));
		if (fds[i] < 0)
			failed++;
		else
			open_n++;
	}
	printf("{\"ready\":true,\"opened\":%u,\"connect_failed\":%u,\"seconds\":%.3f}\n", open_n, failed,
	       now_s() - t0);
	fflush(stdout);
	while (closed < open_n && now_s() - t0 < timeout_s) {
		unsigned k = 0;

		for (unsigned i = 0; i < n; i++)
			if (fds[i] >= 0)
				p[k++] = (struct pollfd){.fd = fds[i], .events = POLLIN};
		if (poll(p, k, 200) <= 0)
			continue;
		for (unsigned j = 0; j < k; j++) {
			char buf[1024];
			ssize_t r;

			if (!p[j].revents)
				continue;
			while ((r = recv(p[j].fd, buf, sizeof(buf) - 1, MSG_DONTWAIT)) > 0) {
				buf[r] = '\0';
				busy += strstr(buf, "\"EBUSY\"") != NULL;
			}
			if (r == 0 || (r < 0 && errno != EAGAIN)) {
				for (unsigned i = 0; i < n; i++)
					if (fds[i] == p[j].fd)
						fds[i] = -1;
				close(p[j].fd);
				closed++;
			}
		}
	}
	printf("{\"opened\":%u,\"closed_by_daemon\":%u,\"ebusy_replies\":%u,\"seconds\":%.3f}\n", open_n,
	       closed, busy, now_s() - t0);
	for (unsigned i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(fds);
	free(p);
	return closed == open_n ? 0 : 1;
}

static int flood(double seconds)
{
	static const char req[] = "{\"v\":1,\"cmd\":\"version\",\"id\":1}\n";
	uint64_t connects = 0, refused_backlog = 0, errors = 0;
	double t0 = now_s();
	int ring[8];

	for (unsigned i = 0; i < 8; i++)
		ring[i] = -1;
	for (unsigned k = 0; now_s() - t0 < seconds; k = (k + 1) % 8) {
		int fd = dial();

		if (ring[k] >= 0)
			close(ring[k]); /* kept 8 connections back: the daemon sees them open */
		ring[k] = -1;
		if (fd == -EAGAIN) {
			refused_backlog++; /* the listen queue is full: the daemon is behind */
			continue;
		}
		if (fd < 0) {
			errors++;
			continue;
		}
		connects++;
		(void)send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
		ring[k] = fd;
	}
	for (unsigned i = 0; i < 8; i++)
		if (ring[i] >= 0)
			close(ring[i]);
	printf("{\"connects\":%llu,\"backlog_full\":%llu,\"errors\":%llu,\"per_s\":%.0f}\n",
	       (unsigned long long)connects, (unsigned long long)refused_backlog,
	       (unsigned long long)errors, (double)connects / seconds);
	return connects > 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc < 4 || strlen(argv[2]) >= sizeof(addr.sun_path)) {
		fprintf(stderr, "usage: ctl_abuser noread SOCKET TIMEOUT_S | idle SOCKET N TIMEOUT_S | "
			"flood SOCKET SECONDS\n");
		return 2;
	}
	memcpy(addr.sun_path, argv[2], strlen(argv[2]) + 1);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (strcmp(argv[1], "noread") == 0)
		return noread(atof(argv[3]));
	if (strcmp(argv[1], "idle") == 0 && argc == 5)
		return idle((unsigned)atoi(argv[3]), atof(argv[4]));
	if (strcmp(argv[1], "flood") == 0)
		return flood(atof(argv[3]));
	fprintf(stderr, "ctl_abuser: unknown mode %s\n", argv[1]);
	return 2;
}
