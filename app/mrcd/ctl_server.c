/* ctl_server.c - the control sockets (ctl.h, docs/control.md): UNIX stream
 * sockets served by the main thread, one JSON request per line, parsed by
 * lib/ctl (mrcd_ctl_parse), checked against the command's rights
 * (mrcd_ctl_rights_check), run by ctl_exec.c, one reply per line in order.
 * Two sockets: control.socket, the admin's (every command), and the
 * optional control.client_socket (client commands only); the socket a
 * connection came through is its rights. It owns the connections and what
 * a connection can own, a client session: attach creates one (the reply
 * carries its file descriptors), the connection's end stops it; and it
 * answers `control`, its own state.
 *
 * Nothing a peer does can stall the loop that serves everyone: sockets are
 * non-blocking, replies wait in a bounded queue per connection (lib/ctl's
 * ctl_conn.c) and a peer that lets it overflow is disconnected; a connection
 * without a session that moves no byte for control.idle_timeout_s is
 * closed; client-socket connections share max_connections - admin_reserved
 * slots, so the admin socket always has one (and an admin may take the place
 * of an idle connection when every slot is held); the admin socket has its
 * own listen queue, is accepted from first, and admin requests are served
 * first in each round, client requests within a time budget per round.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctl.h"
#include "ctl_conn.h"
#include "dp_client.h"
#include "dp_log.h"
#include "dp_selftest.h"
#include "mrc_shm.h"

#define CALL_TIMEOUT_MS 2000 /* a worker takes a call within an iteration or two */
#define NS_PER_MS 1000000ull
#define NS_PER_S 1000000000ull
#define BURST 16                           /* requests of one connection per round */
#define CLIENT_BUDGET_NS (5 * NS_PER_MS)   /* client requests per round, after the admins' */
#define ACCEPT_BURST 1024                  /* connections accepted per round and socket */
#define CLIENT_ACCEPT_NS (2 * NS_PER_MS)   /* ... on the client socket, at most this long: a
					      flood waits in its own listen queue */
#define ACCEPT_PAUSE_NS (100 * NS_PER_MS)  /* no accept(2) after EMFILE and the like */
#define EVICT_MIN_IDLE_NS NS_PER_S         /* an admin displaces only a connection idle this long */
#define REFUSE_MAX 16                      /* refused connections waiting for their request id */
#define REFUSE_WAIT_NS (200 * NS_PER_MS)   /* ... at most this long */
#define REFUSE_LINE_MAX 1024               /* ... reading at most this much of it */
#define FDS_PER_CONN 3                     /* the socket and a session's two eventfds */
#define FDS_SPARE 256                      /* DPDK, the ports, logs, selftests */

/* Selftests a connection opened (without "detach") and may still hold:
 * stopped when it closes. As many as can exist at once (MRCD_ST_MAX per
 * worker); past that the oldest id is forgotten (the idle timeout,
 * limits.selftest_idle_s, still ends it). */
#define ST_OWNED (MRCD_ST_MAX * MRCD_MAX_LCORES)

struct client {
	struct mrcd_ctl_conn conn;  /* conn.fd < 0: a free slot */
	struct mrcd_client *sess;   /* after attach: a libmrc-client session */
	uint32_t st_ids[ST_OWNED];  /* ring of the selftests it opened */
	unsigned n_st, st_next;
};

/* A connection turned away: its first request is read (briefly) so that
 * the EBUSY reply can carry the request's id, then it is closed. */
struct refusal {
	int fd;                     /* -1: free */
	uint64_t deadline_ns;
	size_t len;
	char buf[REFUSE_LINE_MAX];
	char reason[MRCD_CTL_REASON_MAX];
};

/* At most one log line a second per kind; the rest are counted in the next. */
struct ratelog {
	uint64_t next_ns;
	uint64_t suppressed;
};

#define CTL_STATS(X)                                                                   \
	X(accepted, "connections let in")                                              \
	X(refused_busy, "connections refused with EBUSY (no slot)")                    \
	X(refused_rights, "requests refused with EPERM (an admin command on the client socket)") \
	X(closed_slow, "connections closed: more than 1 MiB of replies unread")       \
	X(closed_idle, "connections without a session closed after idle_timeout_s")   \
	X(evicted, "idle connections closed to let an admin in")                      \
	X(accept_errors, "accept(2) failures (out of descriptors or memory)")         \
	X(requests, "request lines")                                                  \
	X(errors, "error replies")

enum { ADMIN = 0, CLIENT = 1 };
#define LISTEN (1 << 30)            /* who[] of a listening socket: LISTEN + ADMIN or + CLIENT */

struct mrcd_ctl_server {
	struct mrcd_dp *dp;
	const struct mrcd_config *cfg;
	uint32_t next_session;
	int lfd[2];                 /* listening: [ADMIN] control.socket, [CLIENT] control.client_socket */
	char path[2][MRCD_PATH_MAX];
	struct client *c;           /* max of them */
	unsigned max;               /* control.max_connections, or less if the fd limit says so */
	unsigned reserved;          /* control.admin_reserved */
	unsigned n_open, n_client_open, peak_open;
	unsigned rr;                /* the client served first in the next round */
	struct refusal ref[REFUSE_MAX];
	struct pollfd *pfd;         /* 2 + max + REFUSE_MAX */
	int *who;                   /* pfd[k] is c[who[k]], ref[-1 - who[k]] or lfd[who[k] - LISTEN] */
	uint64_t accept_pause_until;
	struct ratelog log_refused, log_slow, log_idle, log_accept;
	struct {
#define X(n, d) uint64_t n;
		CTL_STATS(X)
#undef X
	} st;
};

static void set_u64(json_t *o, const char *k, uint64_t v)
{
	json_object_set_new(o, k, json_integer((json_int_t)v));
}

__attribute__((format(printf, 4, 5)))
static void log_limited(struct ratelog *r, uint64_t now, uint32_t level, const char *fmt, ...)
{
	char line[256];
	va_list ap;

	if (now < r->next_ns) {
		r->suppressed++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	rte_log(level, mrcd_logtype_ctl, "mrcd.ctl: %s%s\n", line,
		r->suppressed ? " (and more like it, not logged)" : "");
	r->suppressed = 0;
	r->next_ns = now + NS_PER_S;
}

/* ---- opening ------------------------------------------------------------------------ */

/* Room for the descriptors max_connections needs: the soft RLIMIT_NOFILE
 * is raised up to the hard one; past that the daemon takes fewer
 * connections than configured, and says so. */
static unsigned fit_fd_limit(unsigned want, unsigned reserved)
{
	uint64_t need = (uint64_t)want * FDS_PER_CONN + FDS_SPARE + REFUSE_MAX;
	struct rlimit rl;
	uint64_t fit;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return want;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need) {
		rlim_t old = rl.rlim_cur;

		rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > need ? need : rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			rl.rlim_cur = old;
	}
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= need)
		return want;
	fit = rl.rlim_cur > FDS_SPARE + REFUSE_MAX ? (rl.rlim_cur - FDS_SPARE - REFUSE_MAX) / FDS_PER_CONN : 0;
	if (fit < reserved + 1)
		fit = reserved + 1;
	MRCD_LOG(WARNING, ctl, "open-file limit %llu (hard %llu): %llu control connections instead of "
		 "control.max_connections %u (each may hold %u descriptors)\n",
		 (unsigned long long)rl.rlim_cur, (unsigned long long)rl.rlim_max,
		 (unsigned long long)fit, want, FDS_PER_CONN);
	return (unsigned)fit;
}

/* Bind and listen on @path (one of the configured sockets, named @key for
 * messages) with @mode and @group. Only a socket is ever replaced (the
 * configuration said so when it was loaded; the file system may have
 * changed since); a live one is another daemon's. @return the listening
 * descriptor or -errno with @err. */
static int listen_on(const char *path, const char *key, uint32_t mode, const char *group,
		     char *err, size_t errlen)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct stat st;
	mode_t old_umask;
	int fd, rc;

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	if (lstat(path, &st) == 0 && !S_ISSOCK(st.st_mode)) {
		snprintf(err, errlen, "%s: %s exists and is not a socket: refusing to replace it", key, path);
		return -EEXIST;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0) {
		close(fd);
		snprintf(err, errlen, "%s: %s: another daemon is listening there", key, path);
		return -EADDRINUSE;
	}
	if (fd >= 0)
		close(fd);
	if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode))
		unlink(path);
	{
		/* create the socket's directory (one level, e.g. /run/mrcd) */
		char dir[MRCD_PATH_MAX];
		char *slash;

		snprintf(dir, sizeof(dir), "%s", path);
		slash = strrchr(dir, '/');
		if (slash && slash != dir) {
			*slash = 0;
			if (mkdir(dir, 0755) < 0 && errno != EEXIST)
				MRCD_LOG(WARNING, ctl, "mkdir %s: %s\n", dir, strerror(errno));
		}
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s: %s", key, path, strerror(errno));
		return rc;
	}
	/* born 0600: nobody else may connect before the mode and group are set */
	old_umask = umask(0177);
	rc = bind(fd, (struct sockaddr *)&a, sizeof(a));
	umask(old_umask);
	if (rc < 0 || listen(fd, SOMAXCONN) < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s: %s", key, path, strerror(errno));
		close(fd);
		return rc;
	}
	if (group[0]) {
		struct group *g = getgrnam(group);

		if (!g) {
			rc = -ENOENT;
			snprintf(err, errlen, "%s: no group \"%s\" for %s", key, group, path);
			goto fail;
		}
		if (chown(path, (uid_t)-1, g->gr_gid) < 0) {
			rc = -errno;
			snprintf(err, errlen, "%s: chown %s: %s", key, path, strerror(errno));
			goto fail;
		}
	}
	if (chmod(path, mode) < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s: chmod %s: %s", key, path, strerror(errno));
		goto fail;
	}
	return fd;
fail:
	close(fd);
	unlink(path);
	return rc;
}

/* The listening sockets (closed and unlinked) and the tables. */
static void server_free(struct mrcd_ctl_server *s)
{
	for (int l = ADMIN; l <= CLIENT; l++)
		if (s->lfd[l] >= 0) {
			close(s->lfd[l]);
			unlink(s->path[l]);
		}
	free(s->c);
	free(s->pfd);
	free(s->who);
	free(s);
}

int mrcd_ctl_open(struct mrcd_dp *dp, const struct mrcd_config *cfg,
		  struct mrcd_ctl_server **out, char *err, size_t errlen)
{
	struct mrcd_ctl_server *s = calloc(1, sizeof(*s));
	int rc;

	*out = NULL;
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	s->dp = dp;
	s->cfg = cfg;
	s->lfd[ADMIN] = s->lfd[CLIENT] = -1;
	s->reserved = cfg->control.admin_reserved;
	s->max = fit_fd_limit(cfg->control.max_connections, s->reserved);
	s->c = calloc(s->max, sizeof(*s->c));
	s->pfd = calloc(2 + s->max + REFUSE_MAX, sizeof(*s->pfd));
	s->who = calloc(2 + s->max + REFUSE_MAX, sizeof(*s->who));
	if (!s->c || !s->pfd || !s->who) {
		snprintf(err, errlen, "out of memory");
		rc = -ENOMEM;
		goto fail;
	}
	for (unsigned i = 0; i < s->max; i++)
		s->c[i].conn.fd = -1;
	for (unsigned i = 0; i < REFUSE_MAX; i++)
		s->ref[i].fd = -1;
	snprintf(s->path[ADMIN], sizeof(s->path[ADMIN]), "%s", cfg->control.socket);
	snprintf(s->path[CLIENT], sizeof(s->path[CLIENT]), "%s", cfg->control.client_socket);
	rc = listen_on(s->path[ADMIN], "control.socket", cfg->control.mode, cfg->control.group,
		       err, errlen);
	if (rc < 0)
		goto fail;
	s->lfd[ADMIN] = rc;
	if (s->path[CLIENT][0]) {
		rc = listen_on(s->path[CLIENT], "control.client_socket", cfg->control.client_mode,
			       cfg->control.client_group, err, errlen);
		if (rc < 0)
			goto fail;
		s->lfd[CLIENT] = rc;
	}
	*out = s;
	return 0;
fail:
	server_free(s);
	return rc;
}

/* ---- connections -------------------------------------------------------------------- */

/* The connection is gone: a session's QPs are destroyed (their peers see the
 * QP error), its regions deregistered and its arena unmapped. */
static void client_close(struct mrcd_ctl_server *s, struct client *c)
{
	if (c->conn.fd < 0)
		return;
	/* its selftests end with it: their slots, QPs and regions come back */
	for (unsigned k = 0; k < ST_OWNED; k++) {
		struct mrcd_ctl_req req = { .cmd = MRCD_CTL_SELFTEST_STOP };
		char reason[MRCD_CTL_REASON_MAX];
		json_t *res;
		int err = 0;

		if (!c->st_ids[k])
			continue;
		req.st.id = c->st_ids[k];
		req.route_key = c->st_ids[k];
		res = mrcd_ctl_execute(s->dp, &req, NULL, &err, reason, sizeof(reason));
		json_decref(res);
		if (err == 0)
			MRCD_LOG(INFO, ctl, "selftest %u stopped: the control connection that opened it closed\n",
				 c->st_ids[k]);
		c->st_ids[k] = 0;
	}
	c->n_st = 0;
	if (c->sess) {
		struct mrcd_client_info ci;

		mrcd_client_info(c->sess, &ci);
		MRCD_LOG(INFO, ctl, "client %u detached\n", ci.id);
		mrcd_client_stop(c->sess, CALL_TIMEOUT_MS);
		c->sess = NULL;
	}
	s->n_open--;
	if (!c->conn.peer.admin)
		s->n_client_open--;
	mrcd_ctl_conn_close(&c->conn);
}

/* Queue one reply line; a peer that lets replies pile up is closed.
 * @return false when @c was closed. */
static bool send_reply(struct mrcd_ctl_server *s, struct client *c, const char *line,
		       const int *fds, unsigned n_fds, uint64_t now)
{
	int rc = mrcd_ctl_conn_reply(&c->conn, line, strlen(line), fds, n_fds, now);

	if (rc == -ENOBUFS) {
		s->st.closed_slow++;
		log_limited(&s->log_slow, now, RTE_LOG_WARNING,
			    "closing the connection of pid %u uid %u: more than %zu bytes of replies unread",
			    c->conn.peer.pid, c->conn.peer.uid, c->conn.out_max);
	}
	if (rc < 0) {
		client_close(s, c);
		return false;
	}
	return true;
}

static char *reply_line(const struct mrcd_ctl_req *req, json_t *result, int err, const char *reason)
{
	return mrcd_ctl_format_reply(req && req->has_id, req ? req->id : 0, result, err, reason);
}

/* attach: create the session's arena, hand it over with the reply. */
static void handle_attach(struct mrcd_ctl_server *s, struct client *c, const struct mrcd_ctl_req *req,
			  uint64_t now)
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
		snprintf(reason, sizeof(reason), "this connection is attached already (client %u)", ci.id);
	} else if (req->attach.abi != MRC_SHM_ABI_VERSION) {
		err = -EPROTO;
		snprintf(reason, sizeof(reason), "client ABI %u, this daemon speaks ABI %u: "
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
				snprintf(reason, sizeof(reason), "the worker did not take the session within %u ms",
					 CALL_TIMEOUT_MS);
			else if (err == -ENOSPC)
				snprintf(reason, sizeof(reason),
					 "attach: the worker's protection domains are all in use (one per session, D67)");
			else if (err < 0)
				snprintf(reason, sizeof(reason), "out of memory");
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
	} else {
		s->st.errors++;
	}
	out = reply_line(req, res, err, reason);
	json_decref(res);
	if (out && err == 0) {
		int fds[3] = { arena_fd, ci.cq_fd, ci.doorbell_fd };

		/* the session is the connection's from here, whatever the
		 * reply's fate: closing the connection stops it */
		c->sess = sess;
		MRCD_LOG(INFO, ctl, "client %u attached (pid %u uid %u): arena %llu bytes\n", ci.id,
			 c->conn.peer.pid, c->conn.peer.uid, (unsigned long long)ci.arena_bytes);
		send_reply(s, c, out, fds, 3, now);
	} else if (out) {
		send_reply(s, c, out, NULL, 0, now);
	} else if (sess) {
		mrcd_client_stop(sess, CALL_TIMEOUT_MS); /* no memory for the reply */
	}
	free(out);
	if (arena_fd >= 0)
		close(arena_fd);
}

/* control: this socket's limits, counters and connections. */
static json_t *control_json(struct mrcd_ctl_server *s, uint64_t now)
{
	json_t *o = json_object(), *list = json_array();
	unsigned sessions = 0;

	if (!o || !list) {
		json_decref(o);
		json_decref(list);
		return NULL;
	}
	json_object_set_new(o, "socket", json_string(s->path[ADMIN]));
	json_object_set_new(o, "client_socket", json_string(s->path[CLIENT]));
	set_u64(o, "max_connections", s->max);
	set_u64(o, "admin_reserved", s->reserved);
	set_u64(o, "idle_timeout_s", s->cfg->control.idle_timeout_s);
	set_u64(o, "open", s->n_open);
	set_u64(o, "open_admin", s->n_open - s->n_client_open);
	set_u64(o, "open_client", s->n_client_open);
	set_u64(o, "peak_open", s->peak_open);
#define X(n, d) set_u64(o, #n, s->st.n);
	CTL_STATS(X)
#undef X
	for (unsigned i = 0; i < s->max; i++) {
		const struct client *c = &s->c[i];
		struct mrcd_client_info ci = { 0 };
		json_t *e;

		if (c->conn.fd < 0)
			continue;
		if (c->sess) {
			mrcd_client_info(c->sess, &ci);
			sessions++;
		}
		e = json_object();
		set_u64(e, "pid", c->conn.peer.pid);
		set_u64(e, "uid", c->conn.peer.uid);
		set_u64(e, "gid", c->conn.peer.gid);
		json_object_set_new(e, "rights", json_string(c->conn.peer.admin ? "admin" : "client"));
		set_u64(e, "client", ci.id);
		set_u64(e, "idle_ms", (now - c->conn.last_ns) / NS_PER_MS);
		set_u64(e, "unsent_bytes", mrcd_ctl_conn_pending(&c->conn));
		json_array_append_new(list, e);
	}
	set_u64(o, "sessions", sessions);
	json_object_set_new(o, "connections", list);
	return o;
}

/* Note the selftests @c opens (stopped when it closes) and forget the ones
 * it stops. */
static void track_selftest(struct client *c, const struct mrcd_ctl_req *req, const json_t *res)
{
	json_int_t id;

	switch (req->cmd) {
	case MRCD_CTL_SELFTEST_LISTEN:
	case MRCD_CTL_SELFTEST_START:
		if (req->cmd == MRCD_CTL_SELFTEST_LISTEN ? req->st_listen.detach : req->st_start.detach)
			return;
		id = json_integer_value(json_object_get(res, "id"));
		if (id <= 0 || id > UINT32_MAX)
			return;
		for (unsigned k = 0; k < ST_OWNED; k++)
			if (!c->st_ids[k]) {
				c->st_ids[k] = (uint32_t)id;
				c->n_st++;
				return;
			}
		c->st_ids[c->st_next] = (uint32_t)id; /* full: the oldest is forgotten */
		c->st_next = (c->st_next + 1) % ST_OWNED;
		return;
	case MRCD_CTL_SELFTEST_STOP:
		for (unsigned k = 0; k < ST_OWNED; k++)
			if (c->st_ids[k] == req->st.id) {
				c->st_ids[k] = 0;
				c->n_st--;
			}
		return;
	default:
		return;
	}
}

static void handle_line(struct mrcd_ctl_server *s, struct client *c, const char *line, size_t len,
			uint64_t now)
{
	struct mrcd_ctl_req req;
	char reason[MRCD_CTL_REASON_MAX] = "";
	json_t *res = NULL;
	int err;
	char *out;

	s->st.requests++;
	memset(&req, 0, sizeof(req));
	err = mrcd_ctl_parse(line, len, &req, reason, sizeof(reason));
	if (err == 0) {
		err = mrcd_ctl_rights_check(req.cmd, &c->conn.peer, reason, sizeof(reason));
		if (err)
			s->st.refused_rights++;
	}
	if (err == 0 && req.cmd == MRCD_CTL_ATTACH) {
		handle_attach(s, c, &req, now);
		return;
	}
	if (err == 0 && req.cmd == MRCD_CTL_CONTROL) {
		res = control_json(s, now);
		if (!res)
			err = -ENOMEM;
	} else if (err == 0) {
		res = mrcd_ctl_execute(s->dp, &req, c->sess, &err, reason, sizeof(reason));
	}
	if (err)
		s->st.errors++;
	else
		track_selftest(c, &req, res);
	out = reply_line(&req, res, err, reason);
	json_decref(res);
	if (out) {
		send_reply(s, c, out, NULL, 0, now);
		free(out);
	}
}

/* Run up to @max of @c's complete request lines, and none once the clock
 * passes @until_ns (0: no limit). @return false if @c was closed. */
static bool run_lines(struct mrcd_ctl_server *s, struct client *c, unsigned max, uint64_t now,
		      uint64_t until_ns)
{
	for (unsigned k = 0; k < max && c->conn.fd >= 0; k++) {
		const char *line;
		size_t len;
		int rc;

		if (k > 0) {
			now = mrcd_dp_now_ns();
			if (until_ns && now > until_ns)
				break;
		}
		rc = mrcd_ctl_conn_next(&c->conn, &line, &len);

		if (rc == 0)
			break;
		if (rc == -E2BIG) {
			char *out = reply_line(NULL, NULL, -E2BIG, "request line longer than 65536 bytes");

			s->st.errors++;
			if (out) {
				send_reply(s, c, out, NULL, 0, now);
				free(out);
			}
			continue;
		}
		handle_line(s, c, line, len, now);
	}
	if (c->conn.fd < 0)
		return false;
	/* the peer closed its end: once its replies are out, so do we */
	if (c->conn.eof && !mrcd_ctl_conn_has_input(&c->conn) && mrcd_ctl_conn_pending(&c->conn) == 0) {
		client_close(s, c);
		return false;
	}
	return true;
}

/* Admins' requests first, then clients' in turn from s->rr, for at most
 * CLIENT_BUDGET_NS: a crowd of clients delays an operator by one budget. */
static void run_requests(struct mrcd_ctl_server *s)
{
	uint64_t start;
	unsigned k;

	for (unsigned i = 0; i < s->max; i++) {
		struct client *c = &s->c[i];
		uint64_t now = mrcd_dp_now_ns();

		if (c->conn.fd < 0 || !c->conn.peer.admin)
			continue;
		/* an admin connection accepted this round: its request is
		 * usually there already; answer it now, not a round later */
		if (!mrcd_ctl_conn_has_input(&c->conn) && mrcd_ctl_conn_read(&c->conn, now) < 0) {
			client_close(s, c);
			continue;
		}
		run_lines(s, c, BURST, now, 0);
	}
	start = mrcd_dp_now_ns();
	for (k = 0; k < s->max; k++) {
		unsigned i = (s->rr + k) % s->max;
		uint64_t now = mrcd_dp_now_ns();

		if (now - start > CLIENT_BUDGET_NS)
			break;
		if (s->c[i].conn.fd >= 0 && !s->c[i].conn.peer.admin)
			run_lines(s, &s->c[i], BURST, now, start + CLIENT_BUDGET_NS);
	}
	s->rr = (s->rr + (k ? k : 1)) % s->max;
}

/* Close connections without a session that moved no byte for the idle
 * timeout (a session's connection may be quiet for ever: it is the
 * session's lifetime). */
static void close_idle(struct mrcd_ctl_server *s, uint64_t now)
{
	uint64_t limit = (uint64_t)s->cfg->control.idle_timeout_s * NS_PER_S;

	for (unsigned i = 0; i < s->max; i++) {
		struct client *c = &s->c[i];

		if (c->conn.fd < 0 || c->sess || now - c->conn.last_ns < limit)
			continue;
		s->st.closed_idle++;
		log_limited(&s->log_idle, now, RTE_LOG_INFO,
			    "closing the connection of pid %u uid %u: idle for %u s (control.idle_timeout_s)",
			    c->conn.peer.pid, c->conn.peer.uid, s->cfg->control.idle_timeout_s);
		client_close(s, c);
	}
}

/* Every slot is held and an admin knocks: close the connection without a
 * session that has been quiet longest (at least EVICT_MIN_IDLE_NS), a
 * client's before an admin's. @return true if one was closed. */
static bool evict_for_admin(struct mrcd_ctl_server *s, uint64_t now)
{
	struct client *victim = NULL;

	for (unsigned i = 0; i < s->max; i++) {
		struct client *c = &s->c[i];

		if (c->conn.fd < 0 || c->sess || now - c->conn.last_ns < EVICT_MIN_IDLE_NS)
			continue;
		if (!victim || (victim->conn.peer.admin && !c->conn.peer.admin) ||
		    (victim->conn.peer.admin == c->conn.peer.admin && c->conn.last_ns < victim->conn.last_ns))
			victim = c;
	}
	if (!victim)
		return false;
	s->st.evicted++;
	MRCD_LOG(NOTICE, ctl, "every control connection is taken: closing the idle one of pid %u uid %u "
		 "for an admin\n", victim->conn.peer.pid, victim->conn.peer.uid);
	client_close(s, victim);
	return true;
}

/* ---- refusals ----------------------------------------------------------------------- */

/* Answer a refused connection EBUSY, with the id of its first request if
 * one was read, and close it. */
static void refusal_end(struct refusal *r)
{
	struct mrcd_ctl_req req;
	char why[MRCD_CTL_REASON_MAX];
	char *nl = memchr(r->buf, '\n', r->len);
	char *out;

	memset(&req, 0, sizeof(req));
	if (nl)
		(void)mrcd_ctl_parse(r->buf, (size_t)(nl - r->buf), &req, why, sizeof(why));
	out = reply_line(&req, NULL, -EBUSY, r->reason);
	if (out) {
		/* best effort: a peer with a full socket hears nothing */
		(void)send(r->fd, out, strlen(out), MSG_NOSIGNAL | MSG_DONTWAIT);
		free(out);
	}
	close(r->fd);
	r->fd = -1;
}

static void refusal_read(struct refusal *r)
{
	ssize_t n = recv(r->fd, r->buf + r->len, sizeof(r->buf) - r->len, MSG_DONTWAIT);

	if (n > 0)
		r->len += (size_t)n;
	if ((n < 0 && errno != EAGAIN && errno != EINTR) || n == 0 || r->len == sizeof(r->buf) ||
	    memchr(r->buf, '\n', r->len))
		refusal_end(r);
}

static void refuse(struct mrcd_ctl_server *s, int fd, const struct mrcd_ctl_peer *p, uint64_t now)
{
	struct refusal *r = NULL;

	s->st.refused_busy++;
	for (unsigned i = 0; i < REFUSE_MAX && !r; i++)
		if (s->ref[i].fd < 0)
			r = &s->ref[i];
	log_limited(&s->log_refused, now, RTE_LOG_NOTICE,
		    "refusing a connection of pid %u uid %u on the %s socket: %u open, %u of them clients; "
		    "control.max_connections %u, admin_reserved %u", p->pid, p->uid,
		    p->admin ? "admin" : "client", s->n_open, s->n_client_open, s->max, s->reserved);
	if (!r) {
		struct refusal now_r = { .fd = fd };

		r = &now_r;
		snprintf(r->reason, sizeof(r->reason), "too many control connections (%u open)", s->n_open);
		refusal_end(r);
		return;
	}
	r->fd = fd;
	r->len = 0;
	r->deadline_ns = now + REFUSE_WAIT_NS;
	if (p->admin)
		snprintf(r->reason, sizeof(r->reason), "too many control connections: all %u are open "
			 "and none is idle (control.max_connections)", s->max);
	else
		snprintf(r->reason, sizeof(r->reason), "too many control connections: %u clients, the "
			 "limit is %u (control.max_connections %u less admin_reserved %u)",
			 s->n_client_open, s->max - s->reserved, s->max, s->reserved);
	refusal_read(r); /* the request may be here already */
}

/* ---- accepting ---------------------------------------------------------------------- */

/* Who is at the other end (for the logs and `control`; the socket it came
 * through, @admin, decides its rights). */
static void peer_of(int fd, bool admin, struct mrcd_ctl_peer *p)
{
	struct ucred cr = { .pid = 0, .uid = (uid_t)-1, .gid = (gid_t)-1 };
	socklen_t len = sizeof(cr);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0) {
		cr.uid = (uid_t)-1;
		cr.gid = (gid_t)-1;
	}
	p->pid = (uint32_t)cr.pid;
	p->uid = cr.uid;
	p->gid = cr.gid;
	p->admin = admin;
}

/* Take what waits on listening socket @which (ADMIN or CLIENT). */
static void accept_new(struct mrcd_ctl_server *s, int which, uint64_t now)
{
	uint64_t start = mrcd_dp_now_ns();

	for (unsigned k = 0; k < ACCEPT_BURST; k++) {
		if (which == CLIENT && (k & 15) == 15 && mrcd_dp_now_ns() - start > CLIENT_ACCEPT_NS)
			return;
		struct mrcd_ctl_peer p;
		int fd = accept4(s->lfd[which], NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		unsigned i;

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK) {
				/* EMFILE, ENFILE, ENOBUFS, ENOMEM: the pending
				 * connection stays queued; try again shortly
				 * rather than spin on a listening socket that
				 * stays readable */
				s->st.accept_errors++;
				s->accept_pause_until = now + ACCEPT_PAUSE_NS;
				log_limited(&s->log_accept, now, RTE_LOG_WARNING,
					    "accept: %s (%u control connections open)", strerror(errno), s->n_open);
			}
			return;
		}
		peer_of(fd, which == ADMIN, &p);
		if (mrcd_ctl_admit(s->max, s->reserved, s->n_open, s->n_client_open, p.admin) < 0 &&
		    !(p.admin && evict_for_admin(s, now) &&
		      mrcd_ctl_admit(s->max, s->reserved, s->n_open, s->n_client_open, true) == 0)) {
			refuse(s, fd, &p, now);
			continue;
		}
		for (i = 0; i < s->max && s->c[i].conn.fd >= 0; i++)
			;
		if (i == s->max || mrcd_ctl_conn_open(&s->c[i].conn, fd, &p, now) < 0) {
			close(fd);
			continue;
		}
		s->c[i].sess = NULL;
		memset(s->c[i].st_ids, 0, sizeof(s->c[i].st_ids));
		s->c[i].n_st = s->c[i].st_next = 0;
		s->st.accepted++;
		s->n_open++;
		if (!p.admin)
			s->n_client_open++;
		if (s->n_open > s->peak_open)
			s->peak_open = s->n_open;
	}
}

/* ---- the loop ----------------------------------------------------------------------- */

void mrcd_ctl_serve(struct mrcd_ctl_server *s, int timeout_ms)
{
	uint64_t now = mrcd_dp_now_ns();
	bool backlog = false;
	unsigned n = 0;

	if (now >= s->accept_pause_until)
		for (int l = ADMIN; l <= CLIENT; l++)
			if (s->lfd[l] >= 0) {
				s->pfd[n] = (struct pollfd){ .fd = s->lfd[l], .events = POLLIN };
				s->who[n++] = LISTEN + l;
			}
	for (unsigned i = 0; i < s->max; i++) {
		struct mrcd_ctl_conn *c = &s->c[i].conn;
		short ev = 0;

		if (c->fd < 0)
			continue;
		if (mrcd_ctl_conn_has_input(c))
			backlog = true; /* framed lines wait: no sleeping */
		else if (!c->eof)
			ev |= POLLIN;
		if (mrcd_ctl_conn_pending(c))
			ev |= POLLOUT;
		s->pfd[n] = (struct pollfd){ .fd = c->fd, .events = ev };
		s->who[n++] = (int)i;
	}
	for (unsigned i = 0; i < REFUSE_MAX; i++)
		if (s->ref[i].fd >= 0) {
			s->pfd[n] = (struct pollfd){ .fd = s->ref[i].fd, .events = POLLIN };
			s->who[n++] = -1 - (int)i;
			if (timeout_ms > (int)(REFUSE_WAIT_NS / NS_PER_MS))
				timeout_ms = (int)(REFUSE_WAIT_NS / NS_PER_MS);
		}
	if (now < s->accept_pause_until && timeout_ms > (int)(ACCEPT_PAUSE_NS / NS_PER_MS))
		timeout_ms = (int)(ACCEPT_PAUSE_NS / NS_PER_MS);
	if (poll(s->pfd, n, backlog ? 0 : timeout_ms) < 0 && errno != EINTR)
		return;
	now = mrcd_dp_now_ns();

	/* bytes in and out */
	for (unsigned k = 0; k < n; k++) {
		short re = s->pfd[k].revents;
		int w = s->who[k];

		if (w >= LISTEN || re == 0)
			continue;
		if (w < 0) {
			refusal_read(&s->ref[-1 - w]);
			continue;
		}
		struct client *c = &s->c[w];

		if ((re & POLLOUT) && mrcd_ctl_conn_flush(&c->conn, now) < 0) {
			client_close(s, c);
			continue;
		}
		if ((re & (POLLIN | POLLHUP | POLLERR)) && mrcd_ctl_conn_read(&c->conn, now) < 0)
			client_close(s, c);
	}
	/* accept before running requests, the admin socket first: requests
	 * wait in their buffers, admins' are served first */
	for (unsigned k = 0; k < n && s->who[k] >= LISTEN; k++)
		if (s->pfd[k].revents & POLLIN)
			accept_new(s, s->who[k] - LISTEN, now);
	run_requests(s);
	now = mrcd_dp_now_ns();
	for (unsigned i = 0; i < REFUSE_MAX; i++)
		if (s->ref[i].fd >= 0 && now >= s->ref[i].deadline_ns)
			refusal_end(&s->ref[i]);
	close_idle(s, now);
}

void mrcd_ctl_close(struct mrcd_ctl_server *s)
{
	static const char bye[] = "{\"v\":1,\"event\":\"shutdown\"}\n";
	uint64_t now;

	if (!s)
		return;
	now = mrcd_dp_now_ns();
	for (unsigned i = 0; i < s->max; i++)
		if (s->c[i].conn.fd >= 0) {
			/* best effort, never blocking: a peer that does not
			 * read hears of the shutdown from its socket's end */
			(void)mrcd_ctl_conn_reply(&s->c[i].conn, bye, sizeof(bye) - 1, NULL, 0, now);
			client_close(s, &s->c[i]);
		}
	for (unsigned i = 0; i < REFUSE_MAX; i++)
		if (s->ref[i].fd >= 0) {
			close(s->ref[i].fd);
			s->ref[i].fd = -1;
		}
	server_free(s);
}
