/* mrcctl_conn.c - one connection to a daemon (mrcctl.h): connect with a
 * timeout, send a request line checked by lib/ctl's parser, read its reply
 * by id with a deadline, and the messages for failures. */
#define _GNU_SOURCE /* vasprintf */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>


#include "mrcctl.h"

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

uint64_t deadline_after(double seconds)
{
	return now_ns() + (uint64_t)(seconds * 1e9);
}

/* Milliseconds left until @deadline for poll(2): 0 once it passed. */
int ms_left(uint64_t deadline)
{
	uint64_t now = now_ns();

	if ((int64_t)(deadline - now) <= 0)
		return 0;
	return (int)((deadline - now + NS_PER_MS - 1) / NS_PER_MS);
}

void err_cmd(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: %s: ", prog, cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* The code name of a local failure, from the protocol's errno table. */
const char *errno_code(int e)
{
	const char *n = mrcd_ctl_errno_name(e);

	return n != NULL ? n : "error";
}

/* ---- connection --------------------------------------------------------- */

/** @return 0, or a negative errno (-ENAMETOOLONG, connect(2)'s). */
int conn_open(struct conn *c, const char *path, double timeout_s)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct timeval tv = {.tv_sec = (time_t)timeout_s,
			     .tv_usec = (suseconds_t)((timeout_s - floor(timeout_s)) * 1e6)};

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->path = path;
	c->next_id = 1;
	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		return -errno;
	/* connect(2) on a UNIX socket waits for backlog room up to SO_SNDTIMEO */
	if (tv.tv_sec == 0 && tv.tv_usec == 0)
		tv.tv_usec = 1000;
	setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(c->fd, (const struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;

		close(c->fd);
		c->fd = -1;
		return e == EAGAIN || e == EINPROGRESS ? -ETIMEDOUT : -e;
	}
	return 0;
}

void conn_close(struct conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	free(c->buf);
	c->buf = NULL;
	c->len = c->cap = 0;
}

static int send_all(struct conn *c, const char *p, size_t n, uint64_t deadline)
{
	while (n > 0) {
		struct pollfd pfd = {.fd = c->fd, .events = POLLOUT};
		ssize_t w;
		int pr = poll(&pfd, 1, ms_left(deadline));

		if (pr < 0 && errno == EINTR)
			continue;
		if (pr < 0)
			return -errno;
		if (pr == 0)
			return -ETIMEDOUT;
		w = send(c->fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (w < 0)
			return -errno;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Read up to and including '\n'; the line (NUL in place of '\n') is
 * c->buf[0..*line_len). @return 0, -ETIMEDOUT, -ECONNRESET on EOF,
 * -EMSGSIZE past REPLY_MAX, or another negative errno. */
static int recv_line(struct conn *c, uint64_t deadline, size_t *line_len)
{
	for (;;) {
		char *nl = c->len ? memchr(c->buf, '\n', c->len) : NULL;
		struct pollfd pfd = {.fd = c->fd, .events = POLLIN};
		ssize_t r;
		int pr;

		if (nl != NULL) {
			*nl = '\0';
			*line_len = (size_t)(nl - c->buf);
			return 0;
		}
		if (c->len >= REPLY_MAX)
			return -EMSGSIZE;
		if (c->cap - c->len < 4096) {
			size_t cap = c->cap ? c->cap * 2 : 65536;
			char *b = realloc(c->buf, cap);

			if (b == NULL)
				return -ENOMEM;
			c->buf = b;
			c->cap = cap;
		}
		pr = poll(&pfd, 1, ms_left(deadline));
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr < 0)
			return -errno;
		if (pr == 0)
			return -ETIMEDOUT;
		r = recv(c->fd, c->buf + c->len, c->cap - c->len, MSG_DONTWAIT);
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -ECONNRESET;
		c->len += (size_t)r;
	}
}

static void consume_line(struct conn *c, size_t line_len)
{
	size_t used = line_len + 1;

	memmove(c->buf, c->buf + used, c->len - used);
	c->len -= used;
}

/* ---- requests ---------------------------------------------------------- */

/*
 * Build a request line (with '\n') for @cmd with @args (borrowed; NULL for
 * none) and check it with the daemon's parser. @return the line (free()
 * it) or NULL with @reason set.
 */
char *request_build(const char *cmd, json_t *args, int64_t id, char *reason,
			   size_t reason_len, int *rc)
{
	struct mrcd_ctl_req req;
	json_t *o = json_pack("{s:i, s:s, s:I}", "v", MRCD_CTL_PROTO_VERSION, "cmd", cmd, "id",
			      (json_int_t)id);
	char *text, *line;
	size_t n;

	*rc = -ENOMEM;
	snprintf(reason, reason_len, "out of memory");
	if (o == NULL)
		return NULL;
	if (args != NULL && json_object_size(args) > 0 && json_object_set(o, "args", args) < 0) {
		json_decref(o);
		return NULL;
	}
	text = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (text == NULL)
		return NULL;
	n = strlen(text);
	*rc = mrcd_ctl_parse(text, n, &req, reason, reason_len);
	if (*rc < 0) {
		free(text);
		return NULL;
	}
	line = realloc(text, n + 2);
	if (line == NULL) {
		free(text);
		*rc = -ENOMEM;
		return NULL;
	}
	line[n] = '\n';
	line[n + 1] = '\0';
	return line;
}

/*
 * Send @line (id @id) and read its reply. @return CALL_OK with *@result
 * (never NULL; an empty object if the reply had none), CALL_ERROR with
 * *@error (the reply's error object), or a negative errno: -ETIMEDOUT,
 * -ECONNRESET, -EBADMSG (not a valid reply), or an I/O errno.
 * The caller json_decref()s what it is given.
 */
int conn_call_line(struct conn *c, const char *line, int64_t id, uint64_t deadline,
			  json_t **result, json_t **error)
{
	json_error_t jerr;
	json_t *rep, *ok, *rid, *v;
	size_t n = 0;
	int rc;

	*result = *error = NULL;
	rc = send_all(c, line, strlen(line), deadline);
	if (rc == -EPIPE || rc == -ECONNRESET) {
		/* a daemon that refuses a connection (EBUSY: no slot) answers
		 * and closes without reading: its answer is still to be read */
		if (recv_line(c, deadline, &n) < 0)
			return rc;
	} else if (rc < 0) {
		return rc;
	} else {
		rc = recv_line(c, deadline, &n);
		if (rc < 0)
			return rc;
	}
	rep = json_loadb(c->buf, n, 0, &jerr);
	consume_line(c, n);
	if (rep == NULL)
		return -EBADMSG;
	ok = json_object_get(rep, "ok");
	rid = json_object_get(rep, "id");
	if (!json_is_object(rep) || !json_is_boolean(ok) ||
	    (rid != NULL && !json_is_null(rid) &&
	     (!json_is_integer(rid) || json_integer_value(rid) != id))) {
		json_decref(rep);
		return -EBADMSG;
	}
	if (json_is_true(ok)) {
		v = json_object_get(rep, "result");
		*result = v != NULL ? json_incref(v) : json_object();
		json_decref(rep);
		return *result != NULL ? CALL_OK : -ENOMEM;
	}
	v = json_object_get(rep, "error");
	*error = json_is_object(v) ? json_incref(v) : json_object();
	json_decref(rep);
	return *error != NULL ? CALL_ERROR : -ENOMEM;
}

/* Print "mrcctl: <cmd>: <reason> (<code>)" for an error reply. */
void print_daemon_error(const char *cmd, const json_t *error)
{
	const char *reason = json_string_value(json_object_get(error, "reason"));
	const char *code = json_string_value(json_object_get(error, "code"));
	const json_t *e = json_object_get(error, "errno");
	char num[32];

	if (code == NULL) {
		snprintf(num, sizeof(num), "errno %lld",
			 json_is_integer(e) ? (long long)json_integer_value(e) : 0LL);
		code = num;
	}
	err_cmd(cmd, "%s (%s)", reason != NULL ? reason : "failed", code);
}

void print_io_error(const char *cmd, const char *path, int rc, double timeout_s)
{
	if (rc == -ETIMEDOUT)
		err_cmd(cmd, "%s: no reply within %g s (ETIMEDOUT)", path, timeout_s);
	else if (rc == -EBADMSG)
		err_cmd(cmd, "%s: the reply is not a valid control message", path);
	else if (rc == -ECONNRESET)
		err_cmd(cmd, "%s: the daemon closed the connection", path);
	else if (rc == -EMSGSIZE)
		err_cmd(cmd, "%s: the reply is longer than %u bytes", path, REPLY_MAX);
	else
		err_cmd(cmd, "%s: %s", path, strerror(-rc));
}

