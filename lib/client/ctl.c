/* ctl.c - the control channel to mrcd: one JSON request line out, one reply
 * line back (docs/control.md), with request ids, a deadline, descriptors
 * passed with SCM_RIGHTS, and the daemon's "event" lines. It owns framing
 * and the envelope; the commands themselves are in client.c. */
#define _GNU_SOURCE
#include "client_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define REQ_MAX 2048u       /* longest request we compose (qp_connect: ~520 bytes) */
#define RX_FDS_MAX 8u       /* descriptors one recvmsg accepts; the attach reply has 3 */

uint64_t mrc__now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int mrc__fail(struct mrc_ctx *ctx, int rc, const char *fmt, ...)
{
	va_list ap;

	if (ctx == NULL)
		return rc;
	pthread_mutex_lock(&ctx->err_lock);
	va_start(ap, fmt);
	vsnprintf(ctx->err, sizeof(ctx->err), fmt, ap);
	va_end(ap);
	/* One line, whatever the daemon sent. */
	for (char *c = ctx->err; *c; c++)
		if (*c == '\n' || *c == '\r')
			*c = ' ';
	pthread_mutex_unlock(&ctx->err_lock);
	return rc;
}

void mrc__ctl_drop_fds(struct mrc_ctx *ctx)
{
	for (unsigned i = 0; i < ctx->rx_nfds; i++)
		close(ctx->rx_fds[i]);
	ctx->rx_nfds = 0;
	ctx->rx_fds_extra = false;
}

/* Milliseconds left until @deadline_ns, rounded up, for poll(). */
static int ms_left(uint64_t deadline_ns)
{
	uint64_t now = mrc__now_ns();

	if ((int64_t)(deadline_ns - now) <= 0)
		return 0;
	uint64_t ms = (deadline_ns - now + 999999u) / 1000000u;

	return ms > INT32_MAX ? INT32_MAX : (int)ms;
}

/* Keep the descriptors a message carried (up to 3), close the rest. */
static void take_fds(struct mrc_ctx *ctx, struct msghdr *mh)
{
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(mh); cm != NULL; cm = CMSG_NXTHDR(mh, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		size_t n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);

		for (size_t i = 0; i < n; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(fd));
			if (ctx->rx_nfds < 3) {
				ctx->rx_fds[ctx->rx_nfds++] = fd;
			} else {
				close(fd);
				ctx->rx_fds_extra = true;
			}
		}
	}
	if (mh->msg_flags & MSG_CTRUNC)
		ctx->rx_fds_extra = true;
}

/* One recvmsg into the free part of rx. @return bytes read, -EAGAIN (nothing
 * yet), -EPIPE (end of stream: the daemon is gone). */
static int rx_read(struct mrc_ctx *ctx)
{
	union {
		char buf[CMSG_SPACE(RX_FDS_MAX * sizeof(int))];
		struct cmsghdr align;
	} cbuf;
	struct iovec iov = {ctx->rx + ctx->rx_len, MRC__LINE_MAX - ctx->rx_len};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = cbuf.buf, .msg_controllen = sizeof(cbuf.buf)};
	ssize_t r;

	do
		r = recvmsg(ctx->sock, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	while (r < 0 && errno == EINTR);
	if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return -EAGAIN;
	if (r > 0 || mh.msg_controllen > 0)
		take_fds(ctx, &mh);
	if (r <= 0) {
		atomic_store(&ctx->dead, true);
		return r == 0 ? mrc__fail(ctx, -EPIPE, "mrcd closed the control connection")
			      : mrc__fail(ctx, -EPIPE, "control socket: %s", strerror(errno));
	}
	ctx->rx_len += (size_t)r;
	return (int)r;
}

/* Drop a partly-received oversized line up to its end. @return true when
 * the end was found (or no discard was pending). */
static bool rx_skip_discard(struct mrc_ctx *ctx)
{
	if (!ctx->rx_discard)
		return true;
	char *nl = memchr(ctx->rx, '\n', ctx->rx_len);

	if (nl == NULL) {
		ctx->rx_len = 0;
		return false;
	}
	size_t used = (size_t)(nl - ctx->rx) + 1;

	memmove(ctx->rx, ctx->rx + used, ctx->rx_len - used);
	ctx->rx_len -= used;
	ctx->rx_discard = false;
	return true;
}

static void rx_consume(struct mrc_ctx *ctx, size_t n)
{
	memmove(ctx->rx, ctx->rx + n, ctx->rx_len - n);
	ctx->rx_len -= n;
}

/* A complete line already in rx? @return its length (without '\n'), -EAGAIN
 * if none yet, -EIO if the buffer is full without one. */
static long rx_line(struct mrc_ctx *ctx)
{
	if (!rx_skip_discard(ctx))
		return -EAGAIN;
	char *nl = memchr(ctx->rx, '\n', ctx->rx_len);

	if (nl != NULL)
		return nl - ctx->rx;
	if (ctx->rx_len >= MRC__LINE_MAX) {
		ctx->rx_len = 0;
		ctx->rx_discard = true;
		return mrc__fail(ctx, -EIO, "reply longer than %u bytes", MRC__LINE_MAX);
	}
	return -EAGAIN;
}

/* Wait for the next complete line. @return its length, -EIO, -EPIPE, -ETIMEDOUT. */
static long next_line(struct mrc_ctx *ctx, uint64_t deadline_ns)
{
	for (;;) {
		long l = rx_line(ctx);

		if (l != -EAGAIN)
			return l;
		int r = rx_read(ctx);

		if (r > 0)
			continue;
		if (r != -EAGAIN)
			return r;
		struct pollfd pfd = {.fd = ctx->sock, .events = POLLIN};
		int ms = ms_left(deadline_ns);

		if (ms == 0)
			return -ETIMEDOUT;
		r = poll(&pfd, 1, ms);
		if (r < 0 && errno != EINTR)
			return mrc__fail(ctx, -errno, "poll: %s", strerror(errno));
	}
}

enum { LINE_OURS = 0, LINE_SKIP = 1 };

static int daemon_error(struct mrc_ctx *ctx, struct mrc__jdoc *d, const char *cmd);

/* Classify one parsed line. @return LINE_OURS with *@result, LINE_SKIP (an
 * event, or the late reply to a request that timed out), the daemon's
 * negative errno, or -EIO. */
static int handle_line(struct mrc_ctx *ctx, const char *cmd, const char *line, size_t len,
		       int64_t want, int *result)
{
	struct mrc__jdoc *d = &ctx->doc;
	const char *s;
	uint64_t v;
	int rc, i;

	if (mrc__json_parse(d, line, len) < 0)
		return mrc__fail(ctx, -EIO, "%s: %s", cmd, d->err);
	if (d->nodes[0].type != MRC__J_OBJ)
		return mrc__fail(ctx, -EIO, "%s: reply is not an object", cmd);
	rc = mrc__json_get_u64(d, 0, "v", UINT32_MAX, &v);
	if (rc == -ENOENT)
		return mrc__fail(ctx, -EIO, "%s: reply v: missing", cmd);
	if (rc < 0)
		return mrc__fail(ctx, -EIO, "%s: reply %s", cmd, d->err);
	if (v != 1)
		return mrc__fail(ctx, -EIO, "%s: reply v: version %" PRIu64 " (this library speaks 1)",
				 cmd, v);
	rc = mrc__json_get_str(d, 0, "event", &s, NULL);
	if (rc == 0) {
		if (strcmp(s, "shutdown") == 0) {
			atomic_store(&ctx->dead, true);
			mrc__fail(ctx, -EPIPE, "mrcd is shutting down");
		}
		return LINE_SKIP; /* other events are not ours to act on */
	}
	if (rc != -ENOENT)
		return mrc__fail(ctx, -EIO, "%s: reply %s", cmd, d->err);

	i = mrc__json_get(d, 0, "id");
	if (i < 0) {
		/* An error without an id answers no request of ours in
		 * particular: the daemon refused the connection (EBUSY: too
		 * many) before it could read one. It is the answer to this
		 * request all the same; report it as the daemon gave it. */
		int ok = mrc__json_get(d, 0, "ok");

		if (ok >= 0 && d->nodes[ok].type == MRC__J_BOOL && !d->nodes[ok].b)
			return daemon_error(ctx, d, cmd);
	}
	if (i < 0 || d->nodes[i].type != MRC__J_INT || d->nodes[i].neg || d->nodes[i].mag > INT64_MAX)
		return mrc__fail(ctx, -EIO, "%s: reply id: missing or not a positive integer", cmd);
	int64_t id = (int64_t)d->nodes[i].mag;

	if (id != want) {
		if (id > ctx->answered_id && id < want) {
			ctx->answered_id = id; /* a reply we stopped waiting for */
			return LINE_SKIP;
		}
		return mrc__fail(ctx, -EIO, "%s: reply id %" PRId64 ", expected %" PRId64, cmd, id, want);
	}
	ctx->answered_id = id;

	i = mrc__json_get(d, 0, "ok");
	if (i < 0 || d->nodes[i].type != MRC__J_BOOL)
		return mrc__fail(ctx, -EIO, "%s: reply ok: missing or not a boolean", cmd);
	if (d->nodes[i].b) {
		i = mrc__json_get(d, 0, "result");
		if (i < 0 || (d->nodes[i].type != MRC__J_OBJ && d->nodes[i].type != MRC__J_ARR))
			return mrc__fail(ctx, -EIO, "%s: reply result: missing or not an object", cmd);
		*result = i;
		return LINE_OURS;
	}
	return daemon_error(ctx, d, cmd);
}

/* The error object of a parsed "ok": false reply. @return the daemon's
 * negative errno with its reason as the handle's, or -EIO. */
static int daemon_error(struct mrc_ctx *ctx, struct mrc__jdoc *d, const char *cmd)
{
	const char *s;
	uint64_t e;
	int rc;
	int eo = mrc__json_get(d, 0, "error");

	if (eo < 0 || d->nodes[eo].type != MRC__J_OBJ)
		return mrc__fail(ctx, -EIO, "%s: reply error: missing or not an object", cmd);
	rc = mrc__json_get_u64(d, eo, "errno", 4095, &e);
	if (rc < 0 || e == 0)
		return mrc__fail(ctx, -EIO, "%s: reply error.errno: missing or not in 1..4095", cmd);
	rc = mrc__json_get_str(d, eo, "reason", &s, NULL);
	if (rc == -ENOENT)
		s = strerror((int)e);
	else if (rc < 0)
		return mrc__fail(ctx, -EIO, "%s: reply error.%s", cmd, d->err);
	return mrc__fail(ctx, -(int)e, "%s", s);
}

static int send_all(struct mrc_ctx *ctx, const char *buf, size_t len, uint64_t deadline_ns)
{
	size_t off = 0;

	while (off < len) {
		ssize_t w = send(ctx->sock, buf + off, len - off, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (w > 0) {
			off += (size_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			struct pollfd pfd = {.fd = ctx->sock, .events = POLLOUT};
			int ms = ms_left(deadline_ns);

			if (ms > 0 && (poll(&pfd, 1, ms) >= 0 || errno == EINTR))
				continue;
			if (off > 0) /* half a line on the wire: the session is unusable */
				atomic_store(&ctx->dead, true);
			return mrc__fail(ctx, -ETIMEDOUT, "mrcd does not take requests (socket full)");
		}
		atomic_store(&ctx->dead, true);
		return mrc__fail(ctx, -EPIPE, "control socket: %s", w < 0 ? strerror(errno) : "closed");
	}
	return 0;
}

int mrc__ctl_request_until(struct mrc_ctx *ctx, const char *cmd, const char *args,
			   uint64_t deadline_ns, int *result)
{
	char req[REQ_MAX];
	int64_t id;
	int n, rc;

	if (atomic_load(&ctx->dead))
		return mrc__fail(ctx, -EPIPE, "%s: mrcd closed the session", cmd);
	mrc__ctl_drop_fds(ctx);
	id = ctx->next_id++;
	n = snprintf(req, sizeof(req), "{\"v\":1,\"cmd\":\"%s\",\"id\":%" PRId64 "%s%s}\n", cmd, id,
		     args ? ",\"args\":" : "", args ? args : "");
	if (n < 0 || (size_t)n >= sizeof(req))
		return mrc__fail(ctx, -EINVAL, "%s: request too long", cmd);
	rc = send_all(ctx, req, (size_t)n, deadline_ns);
	if (rc == -EPIPE) {
		/* a daemon that refuses a connection (EBUSY: no slot) answers
		 * and closes without reading: its answer, if there, is the
		 * reason to give */
		long l = next_line(ctx, deadline_ns);

		if (l >= 0) {
			int why = handle_line(ctx, cmd, ctx->rx, (size_t)l, id, result);

			rx_consume(ctx, (size_t)l + 1);
			if (why < 0)
				return why;
		}
		return rc;
	}
	if (rc < 0)
		return rc;
	for (;;) {
		long l = next_line(ctx, deadline_ns);

		if (l == -ETIMEDOUT)
			return mrc__fail(ctx, -ETIMEDOUT, "%s: no reply from mrcd in time", cmd);
		if (l < 0)
			return (int)l;
		rc = handle_line(ctx, cmd, ctx->rx, (size_t)l, id, result);
		rx_consume(ctx, (size_t)l + 1);
		if (rc != LINE_SKIP)
			return rc;
		if (atomic_load(&ctx->dead))
			return mrc__fail(ctx, -EPIPE, "%s: mrcd is shutting down", cmd);
	}
}

int mrc__ctl_request(struct mrc_ctx *ctx, const char *cmd, const char *args, int *result)
{
	return mrc__ctl_request_until(ctx, cmd, args,
				      mrc__now_ns() + (uint64_t)ctx->timeout_ms * 1000000u, result);
}

int mrc__ctl_pump(struct mrc_ctx *ctx)
{
	int result;

	for (;;) {
		long l = rx_line(ctx);

		if (l >= 0) {
			/* No request is in flight (we hold the lock): a reply
			 * here is a late one; either way it is consumed. */
			(void)handle_line(ctx, "event", ctx->rx, (size_t)l, ctx->next_id, &result);
			rx_consume(ctx, (size_t)l + 1);
			continue;
		}
		if (l != -EAGAIN && l != -EIO)
			return (int)l;
		int r = rx_read(ctx);

		if (r == -EAGAIN)
			return atomic_load(&ctx->dead) ? -EPIPE : 0;
		if (r < 0)
			return r;
	}
}
