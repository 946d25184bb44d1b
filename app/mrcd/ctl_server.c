/* ctl_server.c - the control socket (ctl.h, docs/control.md): a UNIX stream
 * socket served by the main thread, one JSON request per line, parsed by
 * lib/ctl (mrcd_ctl_parse), run by ctl_exec.c, one reply per line in order.
 * It owns the connections and what a connection can own, a client session:
 * attach creates one (the reply carries its file descriptors), the
 * connection's end stops it. Knows no other command.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctl.h"
#include "dp_client.h"
#include "dp_log.h"
#include "mrc_shm.h"

#define CALL_TIMEOUT_MS 2000 /* a worker takes a call within an iteration or two */

struct client {
	int fd;
	struct mrcd_client *sess;  /* after attach: a libmrc-client session */
	char *buf;                 /* MRCD_CTL_LINE_MAX bytes */
	size_t len;
	bool overflow;             /* discarding an over-long line */
};

struct mrcd_ctl_server {
	struct mrcd_dp *dp;
	const struct mrcd_config *cfg;
	uint32_t next_session;
	int lfd;
	char path[MRCD_PATH_MAX];
	struct client c[MRCD_CTL_MAX_CLIENTS];
	uint64_t requests, errors;
};

static char *reply_line(const struct mrcd_ctl_req *req, json_t *result, int err, const char *reason)
{
	return mrcd_ctl_format_reply(req && req->has_id, req ? req->id : 0, result, err, reason);
}

static void set_u64(json_t *o, const char *k, uint64_t v)
{
	json_object_set_new(o, k, json_integer((json_int_t)v));
}

int mrcd_ctl_open(struct mrcd_dp *dp, const struct mrcd_config *cfg,
		  struct mrcd_ctl_server **out, char *err, size_t errlen)
{
	struct mrcd_ctl_server *s = calloc(1, sizeof(*s));
	struct sockaddr_un a;
	int fd, rc;

	*out = NULL;
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (unsigned i = 0; i < MRCD_CTL_MAX_CLIENTS; i++)
		s->c[i].fd = -1;
	s->dp = dp;
	s->cfg = cfg;
	s->lfd = -1;
	snprintf(s->path, sizeof(s->path), "%s", cfg->control.socket);
	memset(&a, 0, sizeof(a));
	a.sun_family = AF_UNIX;
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", s->path);

	/* a live socket means another daemon: refuse; a dead one is replaced */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0) {
		close(fd);
		snprintf(err, errlen, "control.socket: %s: another daemon is listening there", s->path);
		free(s);
		return -EADDRINUSE;
	}
	if (fd >= 0)
		close(fd);
	unlink(s->path);
	{
		/* create the socket's directory (one level, e.g. /run/mrcd) */
		char dir[MRCD_PATH_MAX];
		char *slash;

		snprintf(dir, sizeof(dir), "%s", s->path);
		slash = strrchr(dir, '/');
		if (slash && slash != dir) {
			*slash = 0;
			if (mkdir(dir, 0755) < 0 && errno != EEXIST)
				MRCD_LOG(WARNING, ctl, "mkdir %s: %s\n", dir, strerror(errno));
		}
	}

	s->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s->lfd < 0 || bind(s->lfd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(s->lfd, 16) < 0) {
		rc = -errno;
		snprintf(err, errlen, "control.socket: %s: %s", s->path, strerror(errno));
		if (s->lfd >= 0)
			close(s->lfd);
		free(s);
		return rc;
	}
	if (chmod(s->path, cfg->control.mode) < 0) {
		rc = -errno;
		snprintf(err, errlen, "control.mode: chmod %s: %s", s->path, strerror(errno));
		goto fail;
	}
	if (cfg->control.group[0]) {
		struct group *g = getgrnam(cfg->control.group);

		if (!g) {
			rc = -ENOENT;
			snprintf(err, errlen, "control.group: no group \"%s\"", cfg->control.group);
			goto fail;
		}
		if (chown(s->path, (uid_t)-1, g->gr_gid) < 0) {
			rc = -errno;
			snprintf(err, errlen, "control.group: chown %s: %s", s->path, strerror(errno));
			goto fail;
		}
	}
	*out = s;
	return 0;
fail:
	close(s->lfd);
	unlink(s->path);
	free(s);
	return rc;
}

/* The connection is gone: a session's QPs are destroyed (their peers see the
 * QP error), its regions deregistered and its arena unmapped. */
static void client_close(struct client *c)
{
	if (c->sess) {
		struct mrcd_client_info ci;

		mrcd_client_info(c->sess, &ci);
		MRCD_LOG(INFO, ctl, "client %u detached\n", ci.id);
		mrcd_client_stop(c->sess, CALL_TIMEOUT_MS);
		c->sess = NULL;
	}
	if (c->fd >= 0)
		close(c->fd);
	free(c->buf);
	c->fd = -1;
	c->buf = NULL;
	c->len = 0;
	c->overflow = false;
}

static void send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;    /* the client went away or its buffer stays full (SO_SNDTIMEO) */
		p += w;
		n -= (size_t)w;
	}
}

/* attach: create the session's arena, hand it over with the reply. */
static void handle_attach(struct mrcd_ctl_server *s, struct client *c, const struct mrcd_ctl_req *req)
{
	char reason[MRCD_CTL_REASON_MAX] = "";
	struct mrcd_client *sess = NULL;
	struct mrcd_client_info ci;
	int arena_fd = -1, err = 0;
	json_t *res = NULL;
	char *out;

	if (c->sess) {
		mrcd_client_info(c->sess, &ci);
		err = -EBUSY;
		snprintf(reason, sizeof(reason), "attach: this connection is attached already (client %u)", ci.id);
	} else if (req->attach.abi != MRC_SHM_ABI_VERSION) {
		err = -EPROTO;
		snprintf(reason, sizeof(reason), "attach: client ABI %u, this daemon speaks ABI %u: "
			 "rebuild the client against this mrcd's libmrc-client", req->attach.abi, MRC_SHM_ABI_VERSION);
	} else {
		/* D63: sessions go round the workers; all of one session's
		 * QPs and regions live in its worker's engine */
		uint32_t id = ++s->next_session;
		struct mrcd_dp *w = mrcd_dp_worker(s->dp, id % mrcd_dp_n_workers(s->dp));

		err = mrcd_client_create(w, id, req->attach.heap_bytes, req->attach.sq_depth,
					 req->attach.rq_depth, req->attach.cq_depth,
					 &sess, &arena_fd, reason, sizeof(reason));
		if (err == 0) {
			err = mrcd_client_start(sess, CALL_TIMEOUT_MS);
			if (err == -ETIMEDOUT)
				snprintf(reason, sizeof(reason), "attach: the worker did not take the session within %u ms",
					 CALL_TIMEOUT_MS);
			else if (err == -ENOSPC)
				snprintf(reason, sizeof(reason),
					 "attach: the worker's protection domains are all in use (one per session, D67)");
			else if (err < 0)
				snprintf(reason, sizeof(reason), "attach: out of memory");
			if (err < 0) {
				mrcd_client_free(sess);
				sess = NULL;
			}
		}
	}
	if (err == 0) {
		mrcd_client_info(sess, &ci);
		res = json_object();
		set_u64(res, "client", ci.id);
		set_u64(res, "abi", MRC_SHM_ABI_VERSION);
		set_u64(res, "arena_bytes", ci.arena_bytes);
		set_u64(res, "va_base", ci.va_base);
		set_u64(res, "heap_ofs", ci.heap_ofs);
		set_u64(res, "heap_len", ci.heap_len);
		set_u64(res, "sq_ring", MRCD_CLIENT_SQ);
		set_u64(res, "rq_ring", MRCD_CLIENT_RQ);
		set_u64(res, "cq_ring", MRCD_CLIENT_CQ);
		json_object_set_new(res, "fds", json_pack("[sss]", "arena", "cq_event", "doorbell"));
	}
	out = reply_line(req, res, err, reason);
	json_decref(res);
	if (out && err == 0) {
		int fds[3] = { arena_fd, ci.cq_fd, ci.doorbell_fd };
		char cbuf[CMSG_SPACE(sizeof(fds))];
		struct iovec iov = { out, strlen(out) };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
		struct cmsghdr *cm;

		memset(cbuf, 0, sizeof(cbuf));
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(fds));
		memcpy(CMSG_DATA(cm), fds, sizeof(fds));
		ssize_t w = sendmsg(c->fd, &mh, MSG_NOSIGNAL);

		if (w > 0 && (size_t)w < iov.iov_len)
			send_all(c->fd, out + w, iov.iov_len - (size_t)w);
		c->sess = sess;
		MRCD_LOG(INFO, ctl, "client %u attached: arena %llu bytes\n", ci.id,
			 (unsigned long long)ci.arena_bytes);
	} else if (out) {
		send_all(c->fd, out, strlen(out));
	}
	free(out);
	if (arena_fd >= 0)
		close(arena_fd);
}

static void handle_line(struct mrcd_ctl_server *s, struct client *c, const char *line, size_t len)
{
	struct mrcd_ctl_req req;
	char reason[MRCD_CTL_REASON_MAX] = "";
	json_t *res = NULL;
	int err;
	char *out;

	s->requests++;
	memset(&req, 0, sizeof(req));
	err = mrcd_ctl_parse(line, len, &req, reason, sizeof(reason));
	if (err == 0 && req.cmd == MRCD_CTL_ATTACH) {
		handle_attach(s, c, &req);
		return;
	}
	if (err == 0)
		res = mrcd_ctl_execute(s->dp, &req, c->sess, &err, reason, sizeof(reason));
	if (err)
		s->errors++;
	out = reply_line(&req, res, err, reason);
	json_decref(res);
	if (out) {
		send_all(c->fd, out, strlen(out));
		free(out);
	}
}

static void client_read(struct mrcd_ctl_server *s, struct client *c)
{
	char tmp[4096];
	ssize_t n = recv(c->fd, tmp, sizeof(tmp), 0);

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		client_close(c);
		return;
	}
	for (ssize_t k = 0; k < n; k++) {
		if (tmp[k] == '\n') {
			if (c->overflow) {
				struct mrcd_ctl_req none = { 0 };
				char *out = reply_line(&none, NULL, -E2BIG, "request line longer than 65536 bytes");

				if (out) {
					send_all(c->fd, out, strlen(out));
					free(out);
				}
				c->overflow = false;
			} else if (c->len) {
				handle_line(s, c, c->buf, c->len);
			}
			c->len = 0;
			if (c->fd < 0)
				return;
			continue;
		}
		if (c->overflow)
			continue;
		if (c->len + 1 >= MRCD_CTL_LINE_MAX) {
			c->overflow = true;
			c->len = 0;
			continue;
		}
		c->buf[c->len++] = tmp[k];
	}
}

void mrcd_ctl_serve(struct mrcd_ctl_server *s, int timeout_ms)
{
	struct pollfd pfd[MRCD_CTL_MAX_CLIENTS + 1];
	struct client *who[MRCD_CTL_MAX_CLIENTS + 1];
	unsigned n = 0;

	pfd[n].fd = s->lfd;
	pfd[n].events = POLLIN;
	who[n++] = NULL;
	for (unsigned i = 0; i < MRCD_CTL_MAX_CLIENTS; i++)
		if (s->c[i].fd >= 0) {
			pfd[n].fd = s->c[i].fd;
			pfd[n].events = POLLIN;
			who[n++] = &s->c[i];
		}
	if (poll(pfd, n, timeout_ms) <= 0)
		return;
	for (unsigned k = 1; k < n; k++)
		if (pfd[k].revents & (POLLIN | POLLHUP | POLLERR))
			client_read(s, who[k]);
	if (pfd[0].revents & POLLIN) {
		int fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC);
		struct timeval tv = { 1, 0 };
		unsigned i;

		if (fd < 0)
			return;
		for (i = 0; i < MRCD_CTL_MAX_CLIENTS; i++)
			if (s->c[i].fd < 0)
				break;
		if (i == MRCD_CTL_MAX_CLIENTS) {
			struct mrcd_ctl_req none = { 0 };
			char *out = reply_line(&none, NULL, -EBUSY, "too many control connections");

			if (out) {
				send_all(fd, out, strlen(out));
				free(out);
			}
			close(fd);
			return;
		}
		s->c[i].buf = malloc(MRCD_CTL_LINE_MAX);
		if (!s->c[i].buf) {
			close(fd);
			return;
		}
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		s->c[i].fd = fd;
		s->c[i].len = 0;
	}
}

void mrcd_ctl_close(struct mrcd_ctl_server *s)
{
	if (!s)
		return;
	for (unsigned i = 0; i < MRCD_CTL_MAX_CLIENTS; i++)
		if (s->c[i].fd >= 0) {
			static const char bye[] = "{\"v\":1,\"event\":\"shutdown\"}\n";

			send_all(s->c[i].fd, bye, sizeof(bye) - 1);
			client_close(&s->c[i]);
		}
	if (s->lfd >= 0)
		close(s->lfd);
	unlink(s->path);
	free(s);
}
