/* test_client.c - unit tests for libmrc-client against a fake mrcd: a thread
 * serving a UNIX socket in a temporary directory that implements attach for
 * real (memfd arena, eventfds, SCM_RIGHTS) and answers the other commands
 * with canned or scripted replies. Covers open/close, the control envelope
 * (ids, errors, malformed and oversized replies), the heap allocator, memory
 * regions, QPs, the exact ring contents of posts, doorbells, completions and
 * blocking. Nothing sleeps to synchronise: waits poll a condition against a
 * deadline. */
#define _GNU_SOURCE
#include "client_internal.h"
#include "mrc_client.h"
#include "mrc_shm.h"
#include "mrcp_test.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* ---- helpers ------------------------------------------------------------------------------ */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Spin (yielding) until @cond holds, failing after 5 s. */
#define WAIT_FOR(cond)                                                         \
	do {                                                                   \
		uint64_t dl_ = now_ns() + 5000000000u;                         \
		while (!(cond)) {                                              \
			if (now_ns() > dl_)                                    \
				mrcp_test_fail(__FILE__, __LINE__,             \
					       "timed out waiting for %s", #cond); \
			sched_yield();                                         \
		}                                                              \
	} while (0)

static unsigned count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	unsigned n = 0;

	ASSERT_TRUE(d != NULL);
	while (readdir(d) != NULL)
		n++;
	closedir(d);
	return n;
}

/* ---- the fake daemon ---------------------------------------------------------------------- */

#define FAKE_VA_BASE UINT64_C(0x7f1200000000)
#define FAKE_SCRIPT_MAX 8
#define FAKE_LOG_MAX 4096
#define FAKE_BUF (256u * 1024u)

struct fake {
	char dir[64];
	char path[108];
	int lfd;
	_Atomic int cfd;              /* the client connection, -1 = none */
	int stop[2];                  /* a pipe: the test writes to stop the thread */
	pthread_t th;

	pthread_mutex_t mu;           /* guards everything below */
	unsigned abi;                 /* the ABI this daemon speaks */
	int attach_nfds;              /* descriptors the attach reply carries */
	char *script[FAKE_SCRIPT_MAX];/* raw replies for the next requests */
	unsigned nscript;
	char log[FAKE_LOG_MAX];       /* "cmd;cmd;..." */
	char last_req[4096];          /* the last request line, without '\n' */
	unsigned nreq;
	char peer_info[512];          /* the last qp_connect's peer_info */
	unsigned next_qpn, nr_qps, nr_mrs;
	uint32_t qps[64], lkeys[64];

	/* the arena, after attach */
	int memfd, cq_efd, db_efd;
	uint8_t *base;
	uint64_t size;
	struct mrc_shm_view view;
	struct mrc_shm_ring *sq, *rq, *cq;

	struct mrc__jdoc *doc;
	char *buf;
	size_t blen;
};

static void fake_send(struct fake *f, const char *s, size_t len)
{
	int fd = atomic_load(&f->cfd);

	while (len > 0 && fd >= 0) {
		ssize_t w = send(fd, s, len, MSG_NOSIGNAL);

		if (w <= 0)
			return;
		s += w;
		len -= (size_t)w;
	}
}

__attribute__((format(printf, 2, 3)))
static void fake_reply(struct fake *f, const char *fmt, ...)
{
	char out[2048];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(out, sizeof(out) - 1, fmt, ap);
	va_end(ap);
	ASSERT_TRUE(n > 0 && (size_t)n < sizeof(out) - 1);
	out[n++] = '\n';
	fake_send(f, out, (size_t)n);
}

static void fake_error(struct fake *f, int64_t id, int err, const char *code, const char *reason)
{
	fake_reply(f, "{\"v\":1,\"id\":%" PRId64 ",\"ok\":false,\"error\":{\"errno\":%d,\"code\":\"%s\",\"reason\":\"%s\"}}",
		   id, err, code, reason);
}

static void fake_close_conn(struct fake *f)
{
	int fd = atomic_exchange(&f->cfd, -1);

	if (fd >= 0)
		close(fd);
}

/* Send a scripted reply: "$ID" and "$PREV" become the request's id and id-1;
 * "!SILENT" sends nothing, "!CLOSE" closes the connection. */
static void fake_script(struct fake *f, const char *s, int64_t id)
{
	size_t cap = strlen(s) + 64, n = 0;
	char *out = malloc(cap);

	ASSERT_TRUE(out != NULL);
	if (strcmp(s, "!SILENT") == 0) {
		free(out);
		return;
	}
	if (strcmp(s, "!CLOSE") == 0) {
		free(out);
		fake_close_conn(f);
		return;
	}
	while (*s) {
		if (strncmp(s, "$ID", 3) == 0 || strncmp(s, "$PREV", 5) == 0) {
			bool prev = s[1] == 'P';

			n += (size_t)snprintf(out + n, cap - n, "%" PRId64, prev ? id - 1 : id);
			s += prev ? 5 : 3;
		} else {
			out[n++] = *s++;
		}
		if (n + 32 >= cap) {
			cap *= 2;
			out = realloc(out, cap);
			ASSERT_TRUE(out != NULL);
		}
	}
	fake_send(f, out, n);
	free(out);
}

static uint64_t arg_u64(struct fake *f, int args, const char *key)
{
	uint64_t v = 0;

	(void)mrc__json_get_u64(f->doc, args, key, UINT64_MAX, &v);
	return v;
}

static void fake_attach(struct fake *f, int64_t id, int args)
{
	struct mrc_shm_params p;
	struct mrc_shm_layout l;
	uint64_t abi = arg_u64(f, args, "abi");

	if (abi != f->abi) {
		char reason[160];

		snprintf(reason, sizeof(reason), "attach: client ABI %" PRIu64 ", this daemon speaks ABI %u: "
			 "rebuild the client against this mrcd's libmrc-client", abi, f->abi);
		fake_error(f, id, EPROTO, "EPROTO", reason);
		return;
	}
	memset(&p, 0, sizeof(p));
	p.nr_rings = 3;
	p.nr_regions = 256;
	p.heap_size = arg_u64(f, args, "heap_bytes");
	p.rings[0].capacity = (uint32_t)arg_u64(f, args, "sq_depth");
	p.rings[0].elem_size = sizeof(struct mrc_shm_wr);
	p.rings[1].capacity = (uint32_t)arg_u64(f, args, "rq_depth");
	p.rings[1].elem_size = sizeof(struct mrc_shm_recv);
	p.rings[2].capacity = (uint32_t)arg_u64(f, args, "cq_depth");
	p.rings[2].elem_size = sizeof(struct mrc_shm_cqe);
	ASSERT_EQ(0, mrc_shm_arena_layout(&p, &l));
	f->size = l.size;
	f->memfd = memfd_create("fake-mrcd-arena", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	ASSERT_TRUE(f->memfd >= 0);
	ASSERT_EQ(0, ftruncate(f->memfd, (off_t)f->size));
	f->base = mmap(NULL, f->size, PROT_READ | PROT_WRITE, MAP_SHARED, f->memfd, 0);
	ASSERT_TRUE(f->base != MAP_FAILED);
	ASSERT_EQ(0, mrc_shm_arena_init(f->base, f->size, &p));
	ASSERT_EQ(0, fcntl(f->memfd, F_ADD_SEALS, F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL));
	ASSERT_EQ(0, mrc_shm_arena_attach(f->base, f->size, &f->view));
	f->sq = mrc_shm_view_ring(&f->view, 0);
	f->rq = mrc_shm_view_ring(&f->view, 1);
	f->cq = mrc_shm_view_ring(&f->view, 2);
	f->cq_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	f->db_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ASSERT_TRUE(f->cq_efd >= 0 && f->db_efd >= 0);

	char out[1024];
	int n = snprintf(out, sizeof(out),
			 "{\"v\":1,\"id\":%" PRId64 ",\"ok\":true,\"result\":{\"client\":7,\"abi\":%u,"
			 "\"arena_bytes\":%" PRIu64 ",\"va_base\":%" PRIu64 ",\"heap_ofs\":%" PRIu64
			 ",\"heap_len\":%" PRIu64 ",\"sq_ring\":0,\"rq_ring\":1,\"cq_ring\":2,"
			 "\"fds\":[\"arena\",\"cq_event\",\"doorbell\"]}}\n",
			 id, f->abi, f->size, FAKE_VA_BASE, l.heap_ofs, l.heap_len);
	int fds[3] = {f->memfd, f->cq_efd, f->db_efd};
	union {
		char b[CMSG_SPACE(sizeof(fds))];
		struct cmsghdr align;
	} cbuf;
	struct iovec iov = {out, (size_t)n};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};

	memset(&cbuf, 0, sizeof(cbuf));
	if (f->attach_nfds > 0) {
		mh.msg_control = cbuf.b;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)f->attach_nfds);
		struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)f->attach_nfds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * (size_t)f->attach_nfds);
	}
	ASSERT_EQ(n, sendmsg(atomic_load(&f->cfd), &mh, MSG_NOSIGNAL));
}

static void info_hex(uint32_t qpn, char *out)
{
	for (unsigned i = 0; i < MRC_CONN_INFO_BYTES; i++)
		sprintf(out + 2 * i, "%02x", (unsigned)((qpn * 7 + i) & 0xff));
}

static int find_u32(const uint32_t *a, unsigned n, uint32_t v)
{
	for (unsigned i = 0; i < n; i++)
		if (a[i] == v)
			return (int)i;
	return -1;
}

static void fake_handle(struct fake *f, const char *line, size_t len)
{
	const char *cmd = "?";
	uint64_t uid = 0;
	int args;

	ASSERT_EQ(0, mrc__json_parse(f->doc, line, len));
	(void)mrc__json_get_str(f->doc, 0, "cmd", &cmd, NULL);
	(void)mrc__json_get_u64(f->doc, 0, "id", INT64_MAX, &uid);
	args = mrc__json_get(f->doc, 0, "args");
	int64_t id = (int64_t)uid;

	pthread_mutex_lock(&f->mu);
	f->nreq++;
	snprintf(f->last_req, sizeof(f->last_req), "%.*s", (int)len, line);
	strncat(f->log, cmd, sizeof(f->log) - strlen(f->log) - 2);
	strcat(f->log, ";");
	if (f->nscript > 0) {
		char *s = f->script[0];

		memmove(&f->script[0], &f->script[1], sizeof(f->script[0]) * (f->nscript - 1));
		f->nscript--;
		fake_script(f, s, id);
		free(s);
	} else if (strcmp(cmd, "attach") == 0) {
		fake_attach(f, id, args);
	} else if (strcmp(cmd, "reg_mr") == 0) {
		uint64_t ofs = arg_u64(f, args, "ofs"), mlen = arg_u64(f, args, "len");
		unsigned k = f->nr_mrs++;
		struct mrc_shm_region r = {.ofs = ofs, .len = mlen, .id = k,
					   .access = (uint32_t)arg_u64(f, args, "access"),
					   .lkey = 0x1000 + k, .rkey = 0x2000 + k};

		ASSERT_EQ(0, mrc_shm_region_publish(&f->view, k, &r));
		f->lkeys[k] = r.lkey;
		fake_reply(f, "{\"v\":1,\"id\":%" PRId64 ",\"ok\":true,\"result\":{\"lkey\":%u,\"rkey\":%u,"
			   "\"region\":%u,\"va\":%" PRIu64 "}}", id, r.lkey, r.rkey, k, FAKE_VA_BASE + ofs);
	} else if (strcmp(cmd, "dereg_mr") == 0) {
		int k = find_u32(f->lkeys, f->nr_mrs, (uint32_t)arg_u64(f, args, "lkey"));

		if (k < 0) {
			fake_error(f, id, ENOENT, "ENOENT", "args.lkey: not a region of this client");
		} else {
			f->lkeys[k] = 0;
			fake_reply(f, "{\"v\":1,\"id\":%" PRId64 ",\"ok\":true,\"result\":{}}", id);
		}
	} else if (strcmp(cmd, "qp_create") == 0) {
		char hex[2 * MRC_CONN_INFO_BYTES + 1];
		uint32_t qpn = f->next_qpn++;

		f->qps[f->nr_qps++] = qpn;
		info_hex(qpn, hex);
		fake_reply(f, "{\"v\":1,\"id\":%" PRId64 ",\"ok\":true,\"result\":{\"qpn\":%u,\"info\":\"%s\"}}",
			   id, qpn, hex);
	} else if (strcmp(cmd, "qp_info") == 0 || strcmp(cmd, "qp_connect") == 0 ||
		   strcmp(cmd, "qp_destroy") == 0) {
		uint32_t qpn = (uint32_t)arg_u64(f, args, "qpn");
		int k = find_u32(f->qps, f->nr_qps, qpn);
		char hex[2 * MRC_CONN_INFO_BYTES + 1];
		const char *pi = "";

		if (k < 0) {
			fake_error(f, id, ENOENT, "ENOENT", "qpn: no such QP");
		} else if (strcmp(cmd, "qp_info") == 0) {
			info_hex(qpn, hex);
			/* upper case on purpose: the client lower-cases */
			for (char *c = hex; *c; c++)
				if (*c >= 'a' && *c <= 'f')
					*c = (char)(*c - 'a' + 'A');
			fake_reply(f, "{\"v\":1,\"id\":%" PRId64 ",\"ok\":true,\"result\":{\"info\":\"%s\"}}", id, hex);
		} else {
			if (strcmp(cmd, "qp_connect") == 0) {
				(void)mrc__json_get_str(f->doc, args, "peer_info", &pi, NULL);
				snprintf(f->peer_info, sizeof(f->peer_info), "%s", pi);
			} else {
				f->qps[k] = 0;
			}
			fake_reply(f, "{\"v\":1,\"id\":%" PRId64 ",\"ok\":true,\"result\":{}}", id);
		}
	} else {
		fake_error(f, id, ENOENT, "ENOENT", "unknown command");
	}
	pthread_mutex_unlock(&f->mu);
}

static void *fake_main(void *arg)
{
	struct fake *f = arg;

	for (;;) {
		struct pollfd pfd[3] = {
			{.fd = f->stop[0], .events = POLLIN},
			{.fd = f->lfd, .events = POLLIN},
			{.fd = atomic_load(&f->cfd), .events = POLLIN},
		};

		if (poll(pfd, pfd[2].fd >= 0 ? 3 : 2, -1) < 0)
			continue;
		if (pfd[0].revents)
			return NULL;
		if (pfd[1].revents & POLLIN) {
			int fd = accept4(f->lfd, NULL, NULL, SOCK_CLOEXEC);

			if (fd >= 0) {
				fake_close_conn(f);
				f->blen = 0;
				atomic_store(&f->cfd, fd);
			}
			continue;
		}
		if (pfd[2].fd >= 0 && pfd[2].revents) {
			ssize_t r = recv(pfd[2].fd, f->buf + f->blen, FAKE_BUF - f->blen, 0);

			if (r <= 0) {
				if (atomic_load(&f->cfd) == pfd[2].fd)
					fake_close_conn(f);
				continue;
			}
			f->blen += (size_t)r;
			char *nl;

			while ((nl = memchr(f->buf, '\n', f->blen)) != NULL) {
				size_t l = (size_t)(nl - f->buf);

				fake_handle(f, f->buf, l);
				memmove(f->buf, nl + 1, f->blen - l - 1);
				f->blen -= l + 1;
			}
		}
	}
}

static struct fake *fake_start(void)
{
	struct fake *f = calloc(1, sizeof(*f));
	struct sockaddr_un sa = {.sun_family = AF_UNIX};

	ASSERT_TRUE(f != NULL);
	snprintf(f->dir, sizeof(f->dir), "/tmp/mrc-client-test-XXXXXX");
	ASSERT_TRUE(mkdtemp(f->dir) != NULL);
	snprintf(f->path, sizeof(f->path), "%s/mrcd.sock", f->dir);
	pthread_mutex_init(&f->mu, NULL);
	f->abi = MRC_SHM_ABI_VERSION;
	f->attach_nfds = 3;
	f->next_qpn = 17;
	f->memfd = f->cq_efd = f->db_efd = -1;
	atomic_store(&f->cfd, -1);
	f->doc = calloc(1, sizeof(*f->doc));
	f->buf = malloc(FAKE_BUF);
	ASSERT_TRUE(f->doc != NULL && f->buf != NULL);
	f->doc->sbuf = malloc(FAKE_BUF + 1);
	f->doc->sbuf_cap = FAKE_BUF + 1;
	f->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ASSERT_TRUE(f->lfd >= 0);
	memcpy(sa.sun_path, f->path, strlen(f->path) + 1);
	ASSERT_EQ(0, bind(f->lfd, (struct sockaddr *)&sa, sizeof(sa)));
	ASSERT_EQ(0, listen(f->lfd, 4));
	ASSERT_EQ(0, pipe2(f->stop, O_CLOEXEC));
	ASSERT_EQ(0, pthread_create(&f->th, NULL, fake_main, f));
	return f;
}

static void fake_stop(struct fake *f)
{
	ASSERT_EQ(1, write(f->stop[1], "x", 1));
	pthread_join(f->th, NULL);
	fake_close_conn(f);
	close(f->lfd);
	close(f->stop[0]);
	close(f->stop[1]);
	if (f->base)
		munmap(f->base, f->size);
	if (f->memfd >= 0)
		close(f->memfd);
	if (f->cq_efd >= 0)
		close(f->cq_efd);
	if (f->db_efd >= 0)
		close(f->db_efd);
	for (unsigned i = 0; i < f->nscript; i++)
		free(f->script[i]);
	unlink(f->path);
	rmdir(f->dir);
	free(f->doc->sbuf);
	free(f->doc);
	free(f->buf);
	pthread_mutex_destroy(&f->mu);
	free(f);
}

/* Queue a raw reply for the next request. */
static void fake_push(struct fake *f, const char *s)
{
	pthread_mutex_lock(&f->mu);
	ASSERT_LT(f->nscript, FAKE_SCRIPT_MAX);
	f->script[f->nscript++] = strdup(s);
	pthread_mutex_unlock(&f->mu);
}

static void fake_last_req(struct fake *f, char *out, size_t len)
{
	pthread_mutex_lock(&f->mu);
	snprintf(out, len, "%s", f->last_req);
	pthread_mutex_unlock(&f->mu);
}

static unsigned fake_nreq(struct fake *f)
{
	pthread_mutex_lock(&f->mu);
	unsigned n = f->nreq;

	pthread_mutex_unlock(&f->mu);
	return n;
}

#define ASSERT_LAST_REQ(f, expect)                                             \
	do {                                                                   \
		char req_[4096];                                               \
		fake_last_req((f), req_, sizeof(req_));                        \
		ASSERT_STREQ(expect, req_);                                    \
	} while (0)

/* The fake closes its end once it has seen the client's go. */
static void fake_wait_disconnect(struct fake *f)
{
	WAIT_FOR(atomic_load(&f->cfd) == -1);
}

/* Descriptors the fake holds for an attached arena (memfd and two eventfds). */
static unsigned fake_arena_fds(struct fake *f)
{
	pthread_mutex_lock(&f->mu);
	unsigned n = (f->memfd >= 0) + (f->cq_efd >= 0) + (f->db_efd >= 0);

	pthread_mutex_unlock(&f->mu);
	return n;
}

static struct mrc_ctx *open_ctx(struct fake *f)
{
	struct mrc_open_attr a = {.socket = f->path, .heap_bytes = 1 << 20, .sq_depth = 64,
				  .rq_depth = 64, .cq_depth = 64, .timeout_ms = 5000};
	struct mrc_ctx *ctx = NULL;
	char reason[160];

	int rc = mrc_open(&a, &ctx, reason, sizeof(reason));

	if (rc != 0)
		mrcp_test_fail(__FILE__, __LINE__, "mrc_open: %d %s", rc, reason);
	return ctx;
}

static uint32_t new_qp(struct mrc_ctx *ctx)
{
	uint32_t qpn = 0;

	ASSERT_EQ(0, mrc_qp_create(ctx, NULL, &qpn));
	return qpn;
}

static uint64_t efd_read(int fd)
{
	uint64_t v = 0;

	if (read(fd, &v, sizeof(v)) != (ssize_t)sizeof(v))
		return 0;
	return v;
}

/* ---- mrc_open / mrc_close -------------------------------------------------------------------- */

TEST(open, attaches_maps_and_closes)
{
	struct fake *f = fake_start();
	unsigned fds0 = count_fds();
	struct mrc_ctx *ctx = open_ctx(f);

	ASSERT_LAST_REQ(f, "{\"v\":1,\"cmd\":\"attach\",\"id\":1,\"args\":{\"abi\":2,\"heap_bytes\":1048576,"
			   "\"sq_depth\":64,\"rq_depth\":64,\"cq_depth\":64}}");
	ASSERT_STREQ("", mrc_last_error(ctx));
	ASSERT_TRUE(mrc_cq_fd(ctx) >= 0);
	ASSERT_EQ(FAKE_VA_BASE + ctx->heap_ofs, mrc_va(ctx, ctx->base + ctx->heap_ofs));
	ASSERT_EQ(64, ctx->sq.capacity);
	ASSERT_EQ(7, ctx->client_id);
	/* the client: socket, cq eventfd, doorbell (the mapping holds no fd);
	 * the fake: its connection and the arena's three */
	ASSERT_EQ(fds0 + 3 + 1 + 3, count_fds());
	mrc_close(ctx);
	fake_wait_disconnect(f);
	ASSERT_EQ(fds0 + 3, count_fds());
	mrc_close(NULL);
	fake_stop(f);
}

TEST(open, sends_defaults_and_honours_MRCD_SOCKET)
{
	struct fake *f = fake_start();
	struct mrc_ctx *ctx = NULL;

	ASSERT_EQ(0, setenv("MRCD_SOCKET", f->path, 1));
	ASSERT_EQ(0, mrc_open(NULL, &ctx, NULL, 0));
	ASSERT_LAST_REQ(f, "{\"v\":1,\"cmd\":\"attach\",\"id\":1,\"args\":{\"abi\":2,\"heap_bytes\":67108864,"
			   "\"sq_depth\":4096,\"rq_depth\":4096,\"cq_depth\":8192}}");
	ASSERT_EQ(8192, ctx->cq.capacity);
	mrc_close(ctx);
	fake_stop(f);
}

TEST(open, abi_mismatch__eproto_with_the_daemons_reason)
{
	struct fake *f = fake_start();
	struct mrc_open_attr a = {.socket = f->path, .heap_bytes = 1 << 20, .sq_depth = 64,
				  .rq_depth = 64, .cq_depth = 64};
	struct mrc_ctx *ctx = (struct mrc_ctx *)&a;
	unsigned fds0 = count_fds();
	char reason[160];

	f->abi = 3;
	ASSERT_EQ(-EPROTO, mrc_open(&a, &ctx, reason, sizeof(reason)));
	ASSERT_TRUE(ctx == NULL);
	ASSERT_STREQ("attach: client ABI 2, this daemon speaks ABI 3: rebuild the client against this "
		     "mrcd's libmrc-client", reason);
	fake_wait_disconnect(f);
	ASSERT_EQ(fds0, count_fds());
	fake_stop(f);
}

TEST(open, no_daemon__enoent_or_econnrefused)
{
	struct mrc_open_attr a = {.socket = "/nonexistent/mrcd.sock"};
	struct mrc_ctx *ctx;
	char reason[160], dir[] = "/tmp/mrc-client-test-XXXXXX", path[128];
	unsigned fds0 = count_fds();

	ASSERT_EQ(-ENOENT, mrc_open(&a, &ctx, reason, sizeof(reason)));
	ASSERT_TRUE(strstr(reason, "/nonexistent/mrcd.sock") != NULL);

	/* a socket file nobody listens on */
	ASSERT_TRUE(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/s", dir);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};

	memcpy(sa.sun_path, path, strlen(path) + 1);
	ASSERT_EQ(0, bind(fd, (struct sockaddr *)&sa, sizeof(sa)));
	close(fd);
	a.socket = path;
	ASSERT_EQ(-ECONNREFUSED, mrc_open(&a, &ctx, reason, sizeof(reason)));
	unlink(path);
	rmdir(dir);
	ASSERT_EQ(fds0, count_fds());
}

TEST(open, bad_arguments__einval_without_connecting)
{
	struct mrc_open_attr a = {.socket = "/nonexistent/x"};
	struct mrc_ctx *ctx;
	char reason[160], longpath[200];

	ASSERT_EQ(-EINVAL, mrc_open(&a, NULL, reason, sizeof(reason)));
	a.heap_bytes = 100;
	ASSERT_EQ(-EINVAL, mrc_open(&a, &ctx, reason, sizeof(reason)));
	ASSERT_TRUE(strstr(reason, "heap_bytes") != NULL);
	a.heap_bytes = (UINT64_C(64) << 30) + 1;
	ASSERT_EQ(-EINVAL, mrc_open(&a, &ctx, reason, sizeof(reason)));
	a.heap_bytes = 0;
	a.sq_depth = 100;
	ASSERT_EQ(-EINVAL, mrc_open(&a, &ctx, reason, sizeof(reason)));
	a.sq_depth = 32;
	ASSERT_EQ(-EINVAL, mrc_open(&a, &ctx, reason, sizeof(reason)));
	a.sq_depth = 0;
	a.cq_depth = 1u << 21;
	ASSERT_EQ(-EINVAL, mrc_open(&a, &ctx, reason, sizeof(reason)));
	a.cq_depth = 0;
	memset(longpath, 'a', sizeof(longpath) - 1);
	longpath[sizeof(longpath) - 1] = '\0';
	a.socket = longpath;
	ASSERT_EQ(-EINVAL, mrc_open(&a, &ctx, NULL, 0));
}

TEST(open, attach_reply_without_three_fds__eio_and_no_leak)
{
	struct fake *f = fake_start();
	struct mrc_open_attr a = {.socket = f->path, .heap_bytes = 1 << 20, .sq_depth = 64,
				  .rq_depth = 64, .cq_depth = 64};
	struct mrc_ctx *ctx;
	char reason[160];

	for (int n = 0; n < 3; n++) {
		unsigned fds0 = count_fds();

		f->attach_nfds = n; /* the fake thread reads it only while serving */
		ASSERT_EQ(-EIO, mrc_open(&a, &ctx, reason, sizeof(reason)));
		ASSERT_TRUE(strstr(reason, "expected 3") != NULL);
		fake_wait_disconnect(f);
		ASSERT_EQ(fds0 + fake_arena_fds(f), count_fds());
		/* the fake's own copies */
		pthread_mutex_lock(&f->mu);
		munmap(f->base, f->size);
		close(f->memfd);
		close(f->cq_efd);
		close(f->db_efd);
		f->base = NULL;
		f->memfd = f->cq_efd = f->db_efd = -1;
		pthread_mutex_unlock(&f->mu);
	}
	fake_stop(f);
}

TEST(open, bad_attach_replies__eio_or_errno)
{
	struct fake *f = fake_start();
	struct mrc_open_attr a = {.socket = f->path, .heap_bytes = 1 << 20, .sq_depth = 64,
				  .rq_depth = 64, .cq_depth = 64, .timeout_ms = 100};
	struct mrc_ctx *ctx;
	char reason[160];
	unsigned fds0 = count_fds();

	fake_push(f, "{\"v\":1,\"id\":$ID,\"ok\":true,\"result\":{\"va_base\":1}}\n");
	ASSERT_EQ(-EIO, mrc_open(&a, &ctx, reason, sizeof(reason)));
	ASSERT_STREQ("attach: reply heap_ofs: missing", reason);

	fake_push(f, "{\"v\":1,\"id\":$ID,\"ok\":false,\"error\":{\"errno\":12,\"code\":\"ENOMEM\","
		     "\"reason\":\"attach: heap_bytes: above limits.per_client.max_mem_mb\"}}\n");
	ASSERT_EQ(-ENOMEM, mrc_open(&a, &ctx, reason, sizeof(reason)));
	ASSERT_STREQ("attach: heap_bytes: above limits.per_client.max_mem_mb", reason);

	fake_push(f, "garbage\n");
	ASSERT_EQ(-EIO, mrc_open(&a, &ctx, reason, sizeof(reason)));

	fake_push(f, "!SILENT");
	ASSERT_EQ(-ETIMEDOUT, mrc_open(&a, &ctx, reason, sizeof(reason)));
	ASSERT_TRUE(strstr(reason, "no reply") != NULL);

	fake_push(f, "!CLOSE");
	ASSERT_EQ(-EPIPE, mrc_open(&a, &ctx, reason, sizeof(reason)));
	fake_wait_disconnect(f);
	ASSERT_EQ(fds0, count_fds());
	fake_stop(f);
}

TEST(close, destroys_live_qps)
{
	struct fake *f = fake_start();
	struct mrc_ctx *ctx = open_ctx(f);
	uint32_t q1 = new_qp(ctx), q2 = new_qp(ctx);

	ASSERT_EQ(0, mrc_qp_destroy(ctx, q1));
	(void)q2;
	unsigned n = fake_nreq(f);

	mrc_close(ctx);
	WAIT_FOR(fake_nreq(f) == n + 1);
	pthread_mutex_lock(&f->mu);
	ASSERT_STREQ("attach;qp_create;qp_create;qp_destroy;qp_destroy;", f->log);
	ASSERT_STREQ("{\"v\":1,\"cmd\":\"qp_destroy\",\"id\":5,\"args\":{\"qpn\":18}}", f->last_req);
	pthread_mutex_unlock(&f->mu);
	fake_stop(f);
}

/* ---- errors ---------------------------------------------------------------------------------- */

TEST(errors, strerror_and_wc_status_str)
{
	ASSERT_STREQ("version mismatch between libmrc-client and mrcd", mrc_strerror(-EPROTO));
	ASSERT_STREQ("mrcd closed the session", mrc_strerror(-EPIPE));
	ASSERT_STREQ("mrcd closed the session", mrc_strerror(EPIPE));
	ASSERT_STREQ("success", mrc_strerror(0));
	ASSERT_STREQ(strerror(EXDEV), mrc_strerror(-EXDEV));
	ASSERT_TRUE(mrc_strerror(-100000) != NULL);
	ASSERT_STREQ("success", mrc_wc_status_str(MRC_WC_SUCCESS));
	ASSERT_TRUE(strstr(mrc_wc_status_str(MRC_WC_FLUSH_ERR), "flushed") != NULL);
	ASSERT_STREQ("unknown status", mrc_wc_status_str(200));
	ASSERT_STREQ("", mrc_last_error(NULL));
}

/* ---- JSON -------------------------------------------------------------------------------------- */

static struct mrc__jdoc *jdoc_new(void)
{
	struct mrc__jdoc *d = calloc(1, sizeof(*d));

	ASSERT_TRUE(d != NULL);
	d->sbuf_cap = 200000;
	d->sbuf = malloc(d->sbuf_cap);
	ASSERT_TRUE(d->sbuf != NULL);
	return d;
}

static void jdoc_free(struct mrc__jdoc *d)
{
	free(d->sbuf);
	free(d);
}

static int jparse(struct mrc__jdoc *d, const char *s)
{
	return mrc__json_parse(d, s, strlen(s));
}

TEST(json, parse__values_escapes_and_lookups)
{
	struct mrc__jdoc *d = jdoc_new();
	const char *s;
	size_t len;
	uint64_t v;

	ASSERT_EQ(0, jparse(d, " {\"a\": 18446744073709551615, \"b\": [1, true, null, \"x\"],"
			       "\"c\": {\"d\": -9223372036854775808}, \"e\": \"q\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\u20ac\\ud83d\\ude00\","
			       "\"f\": false, \"g\": {}, \"h\": [], \"i\": -0} \r\n"));
	ASSERT_EQ(0, mrc__json_get_u64(d, 0, "a", UINT64_MAX, &v));
	ASSERT_U64_EQ(UINT64_MAX, v);
	ASSERT_EQ(-EIO, mrc__json_get_u64(d, 0, "a", 10, &v));
	ASSERT_EQ(-ENOENT, mrc__json_get_u64(d, 0, "zz", 10, &v));
	ASSERT_EQ(-EIO, mrc__json_get_u64(d, 0, "b", 10, &v));
	int c = mrc__json_get(d, 0, "c");

	ASSERT_EQ(-EIO, mrc__json_get_u64(d, c, "d", UINT64_MAX, &v)); /* negative */
	ASSERT_TRUE(d->nodes[mrc__json_get(d, c, "d")].neg);
	ASSERT_EQ(0, mrc__json_get_str(d, 0, "e", &s, &len));
	ASSERT_STREQ("q\"\\/\b\f\n\r\t\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", s);
	ASSERT_EQ(18, len);
	ASSERT_EQ(-EIO, mrc__json_get_str(d, 0, "f", &s, &len));
	ASSERT_EQ(0, mrc__json_get_u64(d, 0, "i", 0, &v));
	ASSERT_EQ(-1, mrc__json_get(d, 0, "nope"));
	ASSERT_EQ(-1, mrc__json_get(d, mrc__json_get(d, 0, "b"), "a")); /* not an object */
	int b = mrc__json_get(d, 0, "b");

	ASSERT_EQ(MRC__J_ARR, d->nodes[b].type);
	int e1 = d->nodes[b].first;

	ASSERT_EQ(MRC__J_INT, d->nodes[e1].type);
	ASSERT_EQ(MRC__J_BOOL, d->nodes[d->nodes[e1].next].type);
	jdoc_free(d);
}

TEST(json, parse__rejects_malformed_input)
{
	static const char *const bad[] = {
		"", " ", "{", "}", "{\"a\":1", "{\"a\" 1}", "{\"a\":1,}", "{a:1}", "[1,]", "[1 2]",
		"{\"a\":1}{", "{\"a\":1} x", "{\"a\":1,\"a\":2}", "{\"a\":01}", "{\"a\":1.5}",
		"{\"a\":1e3}", "{\"a\":-}", "{\"a\":18446744073709551616}", "{\"a\":-9223372036854775809}",
		"{\"a\":tru}", "{\"a\":nul}", "{\"a\":\"\\u0000\"}", "{\"a\":\"\\ud800\"}",
		"{\"a\":\"\\udc00\"}", "{\"a\":\"\\ud800\\u0041\"}", "{\"a\":\"\\x\"}", "{\"a\":\"\\u12g4\"}",
		"{\"a\":\"raw\ttab\"}", "{\"a\":\"open}", "\"\\", "{\"a\":+1}", "[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]",
	};
	struct mrc__jdoc *d = jdoc_new();
	char big[8192];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (jparse(d, bad[i]) != -EIO)
			mrcp_test_fail(__FILE__, __LINE__, "accepted: %s", bad[i]);
		ASSERT_TRUE(strncmp(d->err, "malformed reply", 15) == 0);
	}
	/* more values than the node pool */
	size_t n = 0;

	big[n++] = '[';
	for (unsigned i = 0; i < MRC__JSON_MAX_NODES + 1; i++)
		n += (size_t)snprintf(big + n, sizeof(big) - n, "%s1", i ? "," : "");
	big[n++] = ']';
	big[n] = '\0';
	ASSERT_EQ(-EIO, jparse(d, big));
	ASSERT_TRUE(strstr(d->err, "more than") != NULL);
	/* a buffer too small for the input */
	d->sbuf_cap = 4;
	ASSERT_EQ(-EIO, jparse(d, "{\"a\":1}"));
	d->sbuf_cap = 200000;
	/* exactly MRC__JSON_MAX_DEPTH levels below the root are fine */
	n = 0;
	for (unsigned i = 0; i <= MRC__JSON_MAX_DEPTH; i++)
		big[n++] = '[';
	for (unsigned i = 0; i <= MRC__JSON_MAX_DEPTH; i++)
		big[n++] = ']';
	big[n] = '\0';
	ASSERT_EQ(0, jparse(d, big));
	jdoc_free(d);
}

/* ---- heap allocator ----------------------------------------------------------------------- */

TEST(heap, alloc_free__first_fit_alignment_and_coalescing)
{
	struct mrc__heap h;
	uint64_t a, b, c, x;

	ASSERT_EQ(0, mrc__heap_init(&h, 4096, 4096));
	ASSERT_EQ(0, mrc__heap_alloc(&h, 1000, 64, 0, &a));
	ASSERT_EQ(4096, a);
	ASSERT_EQ(0, mrc__heap_alloc(&h, 1000, 1024, 0, &b)); /* pad 24 bytes stays free */
	ASSERT_EQ(5120, b);
	ASSERT_EQ(2, mrc__heap_nr_free(&h));
	ASSERT_EQ(0, mrc__heap_alloc(&h, 16, 8, 0, &c)); /* first fit: the pad */
	ASSERT_EQ(5096, c);
	ASSERT_EQ(-ENOMEM, mrc__heap_alloc(&h, 4096, 64, 0, &x));
	ASSERT_EQ(-EINVAL, mrc__heap_alloc(&h, 0, 64, 0, &x));
	ASSERT_EQ(-EINVAL, mrc__heap_alloc(&h, 8, 3, 0, &x));
	ASSERT_EQ(-ENOENT, mrc__heap_free(&h, 4097));
	ASSERT_EQ(0, mrc__heap_free(&h, b));
	ASSERT_EQ(0, mrc__heap_free(&h, a));
	ASSERT_EQ(2, mrc__heap_nr_free(&h)); /* [a..c) and (c..end) */
	ASSERT_EQ(0, mrc__heap_free(&h, c));
	ASSERT_EQ(1, mrc__heap_nr_free(&h));
	ASSERT_EQ(4096, h.free_bytes);
	ASSERT_EQ(-ENOENT, mrc__heap_free(&h, c)); /* double free */
	ASSERT_EQ(0, mrc__heap_alloc(&h, 4096, 4096, 0, &x)); /* all of it */
	ASSERT_EQ(0, mrc__heap_nr_free(&h));
	ASSERT_EQ(-ENOMEM, mrc__heap_alloc(&h, 1, 1, 0, &a));
	/* alignment is of the address: base 0x...20 shifts the offsets */
	ASSERT_EQ(0, mrc__heap_free(&h, x));
	ASSERT_EQ(0, mrc__heap_alloc(&h, 64, 128, 0x20, &x));
	ASSERT_EQ(0, (0x20 + x) % 128);
	mrc__heap_fini(&h);
}

TEST(alloc, heap_bounds_exhaustion_and_reuse)
{
	struct fake *f = fake_start();
	struct mrc_ctx *ctx = open_ctx(f);
	uint8_t *lo = ctx->base + ctx->heap_ofs, *hi = lo + ctx->heap_len;
	void *p[64];
	unsigned n = 0;

	ASSERT_TRUE(mrc_alloc(NULL, 64, 0) == NULL);
	ASSERT_TRUE(mrc_alloc(ctx, 0, 0) == NULL);
	ASSERT_TRUE(strstr(mrc_last_error(ctx), "len is 0") != NULL);
	ASSERT_TRUE(mrc_alloc(ctx, 64, 48) == NULL);
	ASSERT_EQ(EINVAL, errno);
	ASSERT_TRUE(mrc_alloc(ctx, ctx->heap_len + 1, 0) == NULL);
	ASSERT_EQ(ENOMEM, errno);

	void *a = mrc_alloc(ctx, 100, 0), *b = mrc_alloc(ctx, 5, 4096);

	ASSERT_TRUE(a != NULL && b != NULL);
	ASSERT_EQ(0, (uintptr_t)a % 64);
	ASSERT_EQ(0, (uintptr_t)b % 4096);
	ASSERT_TRUE((uint8_t *)a >= lo && (uint8_t *)a + 100 <= hi);
	memset(a, 1, 100);
	mrc_free(ctx, a);
	mrc_free(ctx, b);
	ASSERT_EQ(1, mrc__heap_nr_free(&ctx->heap)); /* coalesced */

	/* exhaust in 64 KiB blocks, then free every other one: fragmented */
	while (n < 64 && (p[n] = mrc_alloc(ctx, 65536, 0)) != NULL)
		n++;
	ASSERT_EQ(ctx->heap_len / 65536, n);
	ASSERT_TRUE(mrc_alloc(ctx, 64, 0) == NULL);
	ASSERT_TRUE(strstr(mrc_last_error(ctx), "no free run") != NULL);
	for (unsigned i = 0; i < n; i += 2)
		mrc_free(ctx, p[i]);
	ASSERT_TRUE(mrc_alloc(ctx, 2 * 65536, 0) == NULL);
	void *small = mrc_alloc(ctx, 65536, 0);

	ASSERT_TRUE(small == p[0]); /* first fit */
	mrc_free(ctx, small);
	for (unsigned i = 1; i < n; i += 2)
		mrc_free(ctx, p[i]);
	ASSERT_EQ(1, mrc__heap_nr_free(&ctx->heap));
	ASSERT_TRUE(mrc_alloc(ctx, ctx->heap_len, 0) != NULL); /* whole heap again */

	/* bad frees are reported, not fatal */
	int local;

	mrc_free(ctx, &local);
	ASSERT_TRUE(strstr(mrc_last_error(ctx), "not in the arena heap") != NULL);
	mrc_free(ctx, lo + 8);
	ASSERT_TRUE(strstr(mrc_last_error(ctx), "not a block") != NULL);
	mrc_free(ctx, NULL);
	mrc_free(NULL, lo);
	ASSERT_EQ(0, mrc_va(ctx, &local));
	ASSERT_EQ(0, mrc_va(NULL, lo));
	ASSERT_U64_EQ(FAKE_VA_BASE + ctx->heap_ofs + 100, mrc_va(ctx, lo + 100));
	mrc_close(ctx);
	fake_stop(f);
}

/* ---- memory regions ------------------------------------------------------------------------- */

TEST(reg_mr, registers_inside_the_heap_only)
{
	struct fake *f = fake_start();
	struct mrc_ctx *ctx = open_ctx(f);
	uint8_t *buf = mrc_alloc(ctx, 8192, 0);
	struct mrc_mr mr, mr2;
	char expect[256];
	int local;

	ASSERT_EQ(-EINVAL, mrc_reg_mr(NULL, buf, 64, 0, &mr));
	ASSERT_EQ(-EINVAL, mrc_reg_mr(ctx, buf, 64, 0, NULL));
	ASSERT_EQ(-EINVAL, mrc_reg_mr(ctx, NULL, 64, 0, &mr));
	ASSERT_EQ(-EINVAL, mrc_reg_mr(ctx, buf, 0, 0, &mr));
	ASSERT_EQ(-EINVAL, mrc_reg_mr(ctx, &local, 4, 0, &mr));
	ASSERT_EQ(-EINVAL, mrc_reg_mr(ctx, ctx->base, 64, 0, &mr)); /* the header, not the heap */
	ASSERT_EQ(-EINVAL, mrc_reg_mr(ctx, buf + 64, ctx->heap_len, 0, &mr)); /* runs past the end */
	ASSERT_EQ(-EINVAL, mrc_reg_mr(ctx, buf, 64, 4, &mr));
	ASSERT_TRUE(strstr(mrc_last_error(ctx), "access") != NULL);
	ASSERT_EQ(1, fake_nreq(f)); /* none of them reached the daemon */

	ASSERT_EQ(0, mrc_reg_mr(ctx, buf, 8192, MRC_ACCESS_LOCAL_WRITE | MRC_ACCESS_REMOTE_WRITE, &mr));
	snprintf(expect, sizeof(expect), "{\"v\":1,\"cmd\":\"reg_mr\",\"id\":2,\"args\":{\"ofs\":%" PRIu64
		 ",\"len\":8192,\"access\":3}}", (uint64_t)(buf - ctx->base));
	ASSERT_LAST_REQ(f, expect);
	ASSERT_TRUE(mr.addr == buf);
	ASSERT_EQ(8192, mr.len);
	ASSERT_EQ(0x1000, mr.lkey);
	ASSERT_EQ(0x2000, mr.rkey);
	ASSERT_U64_EQ(FAKE_VA_BASE + (uint64_t)(buf - ctx->base), mr.va);
	ASSERT_U64_EQ(mr.va + 10, mrc_va(ctx, buf + 10));
	/* the region the daemon published is visible in the arena */
	struct mrc_shm_region r;

	ASSERT_EQ(0, mrc_shm_region_lookup(&ctx->view, 0, &r));
	ASSERT_EQ(0x1000, r.lkey);

	/* the daemon's refusal passes through */
	fake_push(f, "{\"v\":1,\"id\":$ID,\"ok\":false,\"error\":{\"errno\":28,\"code\":\"ENOSPC\","
		     "\"reason\":\"region table full (256 per client)\"}}\n");
	ASSERT_EQ(-ENOSPC, mrc_reg_mr(ctx, buf, 64, 0, &mr2));
	ASSERT_STREQ("region table full (256 per client)", mrc_last_error(ctx)); /* verbatim */

	mr2 = mr;
	mr2.lkey = 0x999;
	ASSERT_EQ(-ENOENT, mrc_dereg_mr(ctx, &mr2));
	ASSERT_EQ(-EINVAL, mrc_dereg_mr(ctx, NULL));
	ASSERT_EQ(0, mrc_dereg_mr(ctx, &mr));
	ASSERT_LAST_REQ(f, "{\"v\":1,\"cmd\":\"dereg_mr\",\"id\":4,\"args\":{\"lkey\":4096}}");
	ASSERT_EQ(-ENOENT, mrc_dereg_mr(ctx, &mr)); /* gone locally */

	/* EBUSY from the daemon keeps the region */
	ASSERT_EQ(0, mrc_reg_mr(ctx, buf, 64, 0, &mr));
	fake_push(f, "{\"v\":1,\"id\":$ID,\"ok\":false,\"error\":{\"errno\":16,\"code\":\"EBUSY\","
		     "\"reason\":\"args.lkey: work requests still use the region\"}}\n");
	ASSERT_EQ(-EBUSY, mrc_dereg_mr(ctx, &mr));
	ASSERT_EQ(0, mrc_dereg_mr(ctx, &mr));
	mrc_close(ctx);
	fake_stop(f);
}

/* ---- queue pairs ---------------------------------------------------------------------------- */

TEST(qp, create_info_connect_destroy)
{
	struct fake *f = fake_start();
	struct mrc_ctx *ctx = open_ctx(f);
	struct mrc_qp_attr qa = {.sq_depth = 128, .user_ctx = 99};
	uint8_t info[MRC_CONN_INFO_BYTES];
	char text[MRC_CONN_INFO_TEXT], expect[1024], hex[2 * MRC_CONN_INFO_BYTES + 1];
	uint32_t qpn = 0;

	ASSERT_EQ(-EINVAL, mrc_qp_create(ctx, NULL, NULL));
	qa.rq_depth = 65537;
	ASSERT_EQ(-EINVAL, mrc_qp_create(ctx, &qa, &qpn));
	qa.rq_depth = 0;
	qa.user_ctx = UINT64_MAX;
	ASSERT_EQ(-EINVAL, mrc_qp_create(ctx, &qa, &qpn));
	qa.user_ctx = 99;
	ASSERT_EQ(1, fake_nreq(f));

	ASSERT_EQ(0, mrc_qp_create(ctx, &qa, &qpn));
	ASSERT_EQ(17, qpn);
	ASSERT_LAST_REQ(f, "{\"v\":1,\"cmd\":\"qp_create\",\"id\":2,\"args\":{\"sq_depth\":128,\"user_ctx\":99}}");
	ASSERT_EQ(18, new_qp(ctx));
	ASSERT_LAST_REQ(f, "{\"v\":1,\"cmd\":\"qp_create\",\"id\":3,\"args\":{}}");

	ASSERT_EQ(0, mrc_qp_info_text(ctx, 17, text));
	info_hex(17, hex);
	ASSERT_STREQ(hex, text); /* lower case although the daemon sent upper */
	ASSERT_EQ(0, mrc_qp_info(ctx, 17, info));
	for (unsigned i = 0; i < MRC_CONN_INFO_BYTES; i++)
		ASSERT_EQ((17 * 7 + i) & 0xff, info[i]);
	ASSERT_EQ(-EINVAL, mrc_qp_info(ctx, 17, NULL));
	ASSERT_EQ(-EINVAL, mrc_qp_info(ctx, 0, info));
	ASSERT_EQ(-EINVAL, mrc_qp_info(ctx, 1u << 24, info));
	ASSERT_EQ(-ENOENT, mrc_qp_info(ctx, 99, info)); /* not ours: not asked */

	/* connect binary: the peer's info goes out as lower-case hex */
	info_hex(18, hex);
	ASSERT_EQ(0, mrc_qp_connect(ctx, 17, info));
	info_hex(17, hex);
	snprintf(expect, sizeof(expect), "{\"v\":1,\"cmd\":\"qp_connect\",\"id\":6,\"args\":{\"qpn\":17,\"peer_info\":\"%s\"}}",
		 hex);
	ASSERT_LAST_REQ(f, expect);
	/* connect text: either case in, lower case out */
	char upper[MRC_CONN_INFO_TEXT];

	info_hex(18, hex);
	for (unsigned i = 0; i < sizeof(upper); i++)
		upper[i] = (char)(hex[i] >= 'a' && hex[i] <= 'f' ? hex[i] - 'a' + 'A' : hex[i]);
	ASSERT_EQ(0, mrc_qp_connect_text(ctx, 18, upper));
	pthread_mutex_lock(&f->mu);
	ASSERT_STREQ(hex, f->peer_info);
	pthread_mutex_unlock(&f->mu);
	unsigned n = fake_nreq(f);

	ASSERT_EQ(-EINVAL, mrc_qp_connect_text(ctx, 18, "abc"));
	upper[5] = 'g';
	ASSERT_EQ(-EINVAL, mrc_qp_connect_text(ctx, 18, upper));
	char longer[MRC_CONN_INFO_TEXT + 2];

	memset(longer, 'a', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	ASSERT_EQ(-EINVAL, mrc_qp_connect_text(ctx, 18, longer));
	ASSERT_EQ(-EINVAL, mrc_qp_connect_text(ctx, 18, NULL));
	ASSERT_EQ(-EINVAL, mrc_qp_connect(ctx, 18, NULL));
	ASSERT_EQ(-ENOENT, mrc_qp_connect(ctx, 5, info));
	ASSERT_EQ(n, fake_nreq(f));

	/* the daemon's EPERM (not INIT) passes through */
	fake_push(f, "{\"v\":1,\"id\":$ID,\"ok\":false,\"error\":{\"errno\":1,\"code\":\"EPERM\","
		     "\"reason\":\"qp_connect: qpn 17 is RTS, not INIT\"}}\n");
	ASSERT_EQ(-EPERM, mrc_qp_connect(ctx, 17, info));
	ASSERT_STREQ("qp_connect: qpn 17 is RTS, not INIT", mrc_last_error(ctx));

	ASSERT_EQ(0, mrc_qp_destroy(ctx, 17));
	ASSERT_LAST_REQ(f, "{\"v\":1,\"cmd\":\"qp_destroy\",\"id\":9,\"args\":{\"qpn\":17}}");
	ASSERT_EQ(-ENOENT, mrc_qp_destroy(ctx, 17));
	ASSERT_EQ(-EINVAL, mrc_qp_destroy(ctx, 0));
	ASSERT_EQ(-EINVAL, mrc_qp_destroy(NULL, 18));
	mrc_close(ctx);
	fake_stop(f);
}

TEST(qp, bad_info_reply__eio)
{
	struct fake *f = fake_start();
	struct mrc_ctx *ctx = open_ctx(f);
	uint32_t qpn = new_qp(ctx);
	char text[MRC_CONN_INFO_TEXT];

	fake_push(f, "{\"v\":1,\"id\":$ID,\"ok\":true,\"result\":{\"info\":\"abcd\"}}\n");
	ASSERT_EQ(-EIO, mrc_qp_info_text(ctx, qpn, text));
	fake_push(f, "{\"v\":1,\"id\":$ID,\"ok\":true,\"result\":{}}\n");
	ASSERT_EQ(-EIO, mrc_qp_info_text(ctx, qpn, text));
	fake_push(f, "{\"v\":1,\"id\":$ID,\"ok\":true,\"result\":{\"qpn\":0}}\n");
	ASSERT_EQ(-EIO, mrc_qp_create(ctx, NULL, &qpn));
	fake_push(f, "{\"v\":1,\"id\":$ID,\"ok\":true,\"result\":{\"qpn\":16777216}}\n");
	ASSERT_EQ(-EIO, mrc_qp_create(ctx, NULL, &qpn));
	fake_push(f, "{\"v\":1,\"id\":$ID,\"ok\":true,\"result\":{\"qpn\":17}}\n"); /* a duplicate */
	ASSERT_EQ(-EIO, mrc_qp_create(ctx, NULL, &qpn));
	ASSERT_EQ(0, mrc_qp_info_text(ctx, 17, text));
	mrc_close(ctx);
	fake_stop(f);
}

TEST(qp, query__state_and_last_error)
{
	struct fake *f = fake_start();
	struct mrc_ctx *ctx = open_ctx(f);
	uint32_t qpn = new_qp(ctx);
	struct mrc_qp_status st;
	unsigned n;

	fake_push(f, "{\"v\":1,\"id\":$ID,\"ok\":true,\"result\":{\"qpn\":17,\"state\":\"RTS\","
		     "\"cause\":\"none\",\"status\":\"SUCCESS\",\"reason\":\"no error\",\"msn\":0,\"imm\":0,"
		     "\"byte_len\":0}}\n");
	ASSERT_EQ(0, mrc_qp_query(ctx, qpn, &st));
	ASSERT_LAST_REQ(f, "{\"v\":1,\"cmd\":\"qp_query\",\"id\":3,\"args\":{\"qpn\":17}}");
	ASSERT_EQ(MRC_QPS_RTS, st.state);
	ASSERT_EQ(MRC_QP_CAUSE_NONE, st.err_cause);
	ASSERT_EQ(MRC_WC_SUCCESS, st.err_status);
	ASSERT_STREQ("no error", st.err_reason);
	/* D70: a receiver's QP that a WriteImm without a receive ended */
	fake_push(f, "{\"v\":1,\"id\":$ID,\"ok\":true,\"result\":{\"qpn\":17,\"state\":\"ERROR\","
		     "\"cause\":\"no_recv\",\"status\":\"REM_INV_REQ_ERR\",\"reason\":\"a WriteImm arrived with no "
		     "receive posted\",\"msn\":65535,\"imm\":4294967295,\"byte_len\":100,\"extra\":1}}\n");
	ASSERT_EQ(0, mrc_qp_query(ctx, qpn, &st));
	ASSERT_EQ(MRC_QPS_ERROR, st.state);
	ASSERT_EQ(MRC_QP_CAUSE_NO_RECV, st.err_cause);
	ASSERT_EQ(MRC_WC_REM_INV_REQ_ERR, st.err_status);
	ASSERT_EQ(0xffff, st.err_msn);
	ASSERT_EQ(0xffffffffu, st.err_imm);
	ASSERT_EQ(100, st.err_byte_len);
	ASSERT_STREQ("a WriteImm arrived with no receive posted", st.err_reason);
	/* a requester's: the peer's NAK */
	fake_push(f, "{\"v\":1,\"id\":$ID,\"ok\":true,\"result\":{\"qpn\":17,\"state\":\"ERROR\","
		     "\"cause\":\"retry_exceeded\",\"status\":\"RETRY_EXC_ERR\",\"reason\":\"x\",\"msn\":0,"
		     "\"imm\":0,\"byte_len\":0}}\n");
	ASSERT_EQ(0, mrc_qp_query(ctx, qpn, &st));
	ASSERT_EQ(MRC_QP_CAUSE_RETRY_EXCEEDED, st.err_cause);
	ASSERT_EQ(MRC_WC_RETRY_EXC_ERR, st.err_status);

	/* not asked: bad arguments, and a QP of another context */
	n = fake_nreq(f);
	ASSERT_EQ(-EINVAL, mrc_qp_query(ctx, qpn, NULL));
	ASSERT_EQ(-EINVAL, mrc_qp_query(NULL, qpn, &st));
	ASSERT_EQ(-EINVAL, mrc_qp_query(ctx, 0, &st));
	ASSERT_EQ(-ENOENT, mrc_qp_query(ctx, 99, &st));
	ASSERT_EQ(n, fake_nreq(f));
	/* the daemon's ENOENT (a QPN of another session) passes through */
	fake_push(f, "{\"v\":1,\"id\":$ID,\"ok\":false,\"error\":{\"errno\":2,\"code\":\"ENOENT\","
		     "\"reason\":\"args.qpn: no QP 17 in this client\"}}\n");
	ASSERT_EQ(-ENOENT, mrc_qp_query(ctx, qpn, &st));
	ASSERT_STREQ("args.qpn: no QP 17 in this client", mrc_last_error(ctx));
	/* malformed replies: a missing field, an unknown state, cause or status */
	fake_push(f, "{\"v\":1,\"id\":$ID,\"ok\":true,\"result\":{\"qpn\":17,\"state\":\"RTS\"}}\n");
	ASSERT_EQ(-EIO, mrc_qp_query(ctx, qpn, &st));
	fake_push(f, "{\"v\":1,\"id\":$ID,\"ok\":true,\"result\":{\"state\":\"DEAD\",\"cause\":\"none\","
		     "\"status\":\"SUCCESS\",\"reason\":\"\",\"msn\":0,\"imm\":0,\"byte_len\":0}}\n");
	ASSERT_EQ(-EIO, mrc_qp_query(ctx, qpn, &st));
	ASSERT_STREQ("qp_query: reply state is not one this library knows", mrc_last_error(ctx));
	fake_push(f, "{\"v\":1,\"id\":$ID,\"ok\":true,\"result\":{\"state\":\"ERROR\",\"cause\":\"gremlins\","
		     "\"status\":\"SUCCESS\",\"reason\":\"\",\"msn\":0,\"imm\":0,\"byte_len\":0}}\n");
	ASSERT_EQ(-EIO, mrc_qp_query(ctx, qpn, &st));
	fake_push(f, "{\"v\":1,\"id\":$ID,\"ok\":true,\"result\":{\"state\":\"ERROR\",\"cause\":\"no_recv\","
		     "\"status\":\"OOPS\",\"reason\":\"\",\"msn\":0,\"imm\":0,\"byte_len\":0}}\n");
	ASSERT_EQ(-EIO, mrc_qp_query(ctx, qpn, &st));
	fake_push(f, "{\"v\":1,\"id\":$ID,\"ok\":true,\"result\":{\"state\":\"ERROR\",\"cause\":\"no_recv\","
		     "\"status\":\"FLUSH_ERR\",\"reason\":\"\",\"msn\":65536,\"imm\":0,\"byte_len\":0}}\n");
	ASSERT_EQ(-EIO, mrc_qp_query(ctx, qpn, &st));
	mrc_close(ctx);
	fake_stop(f);
}

/* ---- the daemon's ports -------------------------------------------------------------------- */

TEST(port_addrs, planes_addresses_and_state_from_the_ports_reply)
{
	struct fake *f = fake_start();
	struct mrc_ctx *ctx = open_ctx(f);
	struct mrc_port_addr p[2];
	static const uint8_t v6[16] = {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};

	/* three ports, room for two: the count is the daemon's */
	fake_push(f, "{\"v\":1,\"id\":$ID,\"ok\":true,\"result\":["
		  "{\"plane\":1,\"name\":\"p1\",\"ipv4\":\"10.1.0.1/24\",\"ipv6\":\"\",\"engine\":\"up\",\"mtu\":1500},"
		  "{\"plane\":2,\"name\":\"p2\",\"ipv4\":\"\",\"ipv6\":\"fd00::2/64\",\"engine\":\"down\"},"
		  "{\"plane\":3,\"name\":\"p3\",\"ipv4\":\"10.3.0.1/24\",\"ipv6\":\"\",\"engine\":\"up\"}]}\n");
	ASSERT_EQ(3, mrc_port_addrs(ctx, p, 2));
	ASSERT_STREQ("ports;", strchr(f->log, ';') + 1); /* attach;ports; */
	ASSERT_EQ(1, p[0].plane);
	ASSERT_TRUE(p[0].up);
	ASSERT_MEMEQ("\x0a\x01\x00\x01", p[0].ipv4, 4);
	ASSERT_MEMEQ((uint8_t[16]){0}, p[0].ipv6, 16);
	ASSERT_EQ(2, p[1].plane);
	ASSERT_FALSE(p[1].up);
	ASSERT_MEMEQ("\0\0\0\0", p[1].ipv4, 4);
	ASSERT_MEMEQ(v6, p[1].ipv6, 16);
	/* only the count */
	fake_push(f, "{\"v\":1,\"id\":$ID,\"ok\":true,\"result\":[]}\n");
	ASSERT_EQ(0, mrc_port_addrs(ctx, NULL, 0));
	ASSERT_EQ(-EINVAL, mrc_port_addrs(ctx, NULL, 1));
	/* malformed: not an array, a missing key, an address that is not one */
	fake_push(f, "{\"v\":1,\"id\":$ID,\"ok\":true,\"result\":{}}\n");
	ASSERT_EQ(-EIO, mrc_port_addrs(ctx, p, 2));
	fake_push(f, "{\"v\":1,\"id\":$ID,\"ok\":true,\"result\":[{\"plane\":1,\"ipv4\":\"\",\"engine\":\"up\"}]}\n");
	ASSERT_EQ(-EIO, mrc_port_addrs(ctx, p, 2));
	fake_push(f, "{\"v\":1,\"id\":$ID,\"ok\":true,\"result\":[{\"plane\":1,\"ipv4\":\"10.1.0.1\",\"ipv6\":\"\",\"engine\":\"up\"}]}\n");
	ASSERT_EQ(-EIO, mrc_port_addrs(ctx, p, 2));
	/* the daemon's error comes through */
	fake_push(f, "{\"v\":1,\"id\":$ID,\"ok\":false,\"error\":{\"errno\":1,\"code\":\"EPERM\",\"reason\":\"no\"}}\n");
	ASSERT_EQ(-EPERM, mrc_port_addrs(ctx, p, 2));
	mrc_close(ctx);
	fake_stop(f);
}

/* ---- the control envelope ------------------------------------------------------------------- */

TEST(ctl, malformed_replies__eio_and_the_context_stays_usable)
{
	static const char *const bad[] = {
		"not json\n",
		"[1,2]\n",
		"{\"v\":1,\"id\":$ID,\"ok\":tru}\n",
		"{\"v\":2,\"id\":$ID,\"ok\":true,\"result\":{}}\n",
		"{\"id\":$ID,\"ok\":true,\"result\":{}}\n",
		"{\"v\":\"1\",\"id\":$ID,\"ok\":true,\"result\":{}}\n",
		"{\"v\":1,\"ok\":true,\"result\":{}}\n",
		"{\"v\":1,\"id\":-3,\"ok\":true,\"result\":{}}\n",
		"{\"v\":1,\"id\":$ID,\"id\":$ID,\"ok\":true,\"result\":{}}\n",
		"{\"v\":1,\"id\":$ID,\"ok\":true}\n",
		"{\"v\":1,\"id\":$ID,\"ok\":1,\"result\":{}}\n",
		"{\"v\":1,\"id\":$ID,\"ok\":true,\"result\":7}\n",
		"{\"v\":1,\"id\":$ID,\"ok\":false}\n",
		"{\"v\":1,\"id\":$ID,\"ok\":false,\"error\":{\"code\":\"EIO\"}}\n",
		"{\"v\":1,\"id\":$ID,\"ok\":false,\"error\":{\"errno\":0}}\n",
		"{\"v\":1,\"id\":$ID,\"ok\":false,\"error\":{\"errno\":99999}}\n",
		"{\"v\":1,\"id\":$ID,\"ok\":false,\"error\":{\"errno\":5,\"reason\":7}}\n",
		"{\"v\":1,\"id\":$ID,\"ok\":true,\"result\":{\"qpn\":1.0}}\n",
		"{\"v\":1,\"id\":$ID,\"ok\":true,\"result\":{\"qpn\":\"5\"}}\n",
		"{\"v\":1,\"id\":$ID,\"ok\":true,\"result\":{\"qpn\":5}} trailing\n",
		"{\"v\":1,\"id\":$ID,\"ok\":true,\"result\":{\"x\":\"\\u0000\"}}\n",
		"{\"v\":1,\"id\":$ID,\"ok\":true,\"result\":{\"x\":[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]}}\n",
		"{\"v\":1,\"id\":$ID,\"event\":7}\n",
		"\n",
	};
	struct fake *f = fake_start();
	struct mrc_ctx *ctx = open_ctx(f);
	uint32_t qpn;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		fake_push(f, bad[i]);
		int rc = mrc_qp_create(ctx, NULL, &qpn);

		if (rc != -EIO)
			mrcp_test_fail(__FILE__, __LINE__, "reply %zu gave %d: %s", i, rc, bad[i]);
		ASSERT_TRUE(strlen(mrc_last_error(ctx)) > 0);
		ASSERT_TRUE(strchr(mrc_last_error(ctx), '\n') == NULL);
	}
	/* an error without a reason gets strerror's */
	fake_push(f, "{\"v\":1,\"id\":$ID,\"ok\":false,\"error\":{\"errno\":28}}\n");
	ASSERT_EQ(-ENOSPC, mrc_qp_create(ctx, NULL, &qpn));
	ASSERT_STREQ(strerror(ENOSPC), mrc_last_error(ctx));
	ASSERT_EQ(17, new_qp(ctx));
	mrc_close(ctx);
	fake_stop(f);
}

/* A daemon with no connection to spare answers EBUSY before it reads a
 * request, so without an id: the caller hears the daemon's error. */
TEST(ctl, error_without_id__the_daemons_errno_and_reason)
{
	struct fake *f = fake_start();
	struct mrc_open_attr a = {.socket = f->path, .heap_bytes = 1 << 20, .sq_depth = 64,
				  .rq_depth = 64, .cq_depth = 64, .timeout_ms = 5000};
	struct mrc_ctx *ctx = NULL;
	char reason[160];
	uint32_t qpn;

	fake_push(f, "{\"v\":1,\"ok\":false,\"error\":{\"errno\":16,\"code\":\"EBUSY\","
		     "\"reason\":\"too many control connections\"}}\n");
	ASSERT_EQ(-EBUSY, mrc_open(&a, &ctx, reason, sizeof(reason)));
	ASSERT_STREQ("too many control connections", reason);
	ASSERT_TRUE(ctx == NULL);
	fake_wait_disconnect(f);
	ctx = open_ctx(f);
	fake_push(f, "{\"v\":1,\"ok\":false,\"error\":{\"errno\":16,\"reason\":\"busy\"}}\n");
	ASSERT_EQ(-EBUSY, mrc_qp_create(ctx, NULL, &qpn));
	ASSERT_STREQ("busy", mrc_last_error(ctx));
	ASSERT_EQ(17, new_qp(ctx));
	mrc_close(ctx);
	fake_stop(f);
}

TEST(ctl, oversized_reply__eio_then_resyncs)
{
	struct fake *f = fake_start();
	struct mrc_ctx *ctx = open_ctx(f);
	size_t n = 70000;
	char *big = malloc(n + 2);
	uint32_t qpn;

	ASSERT_TRUE(big != NULL);
	memset(big, 'x', n);
	big[n] = '\n';
	big[n + 1] = '\0';
	fake_push(f, big);
	ASSERT_EQ(-EIO, mrc_qp_create(ctx, NULL, &qpn));
	ASSERT_TRUE(strstr(mrc_last_error(ctx), "longer than 65536") != NULL);
	/* the rest of the long line is skipped, the next reply is read */
	ASSERT_EQ(17, new_qp(ctx));
	free(big);
	mrc_close(ctx);
	fake_stop(f);
}

TEST(ctl, ids__mismatch_is_eio_and_late_replies_are_skipped)
{
	struct fake *f = fake_start();
	struct mrc_ctx *ctx = open_ctx(f);
	uint32_t qpn;

	fake_push(f, "{\"v\":1,\"id\":1000,\"ok\":true,\"result\":{\"qpn\":5}}\n");
	ASSERT_EQ(-EIO, mrc_qp_create(ctx, NULL, &qpn));
	ASSERT_STREQ("qp_create: reply id 1000, expected 2", mrc_last_error(ctx));
	fake_push(f, "{\"v\":1,\"id\":1,\"ok\":true,\"result\":{\"qpn\":5}}\n"); /* answered long ago */
	ASSERT_EQ(-EIO, mrc_qp_create(ctx, NULL, &qpn));

	/* a request times out; its reply comes just before the next one's */
	ctx->timeout_ms = 50;
	fake_push(f, "!SILENT");
	ASSERT_EQ(-ETIMEDOUT, mrc_qp_create(ctx, NULL, &qpn));
	ctx->timeout_ms = 5000;
	fake_push(f, "{\"v\":1,\"id\":$PREV,\"ok\":true,\"result\":{\"qpn\":5}}\n"
		     "{\"v\":1,\"event\":\"hello\"}\n"
		     "{\"v\":1,\"id\":$ID,\"ok\":true,\"result\":{\"qpn\":6}}\n");
	ASSERT_EQ(0, mrc_qp_create(ctx, NULL, &qpn));
	ASSERT_EQ(6, qpn);
	mrc_close(ctx);
	fake_stop(f);
}

TEST(ctl, daemon_gone__epipe)
{
	struct fake *f = fake_start();
	struct mrc_ctx *ctx = open_ctx(f);
	uint32_t qpn;

	fake_push(f, "!CLOSE");
	ASSERT_EQ(-EPIPE, mrc_qp_create(ctx, NULL, &qpn));
	ASSERT_EQ(-EPIPE, mrc_qp_create(ctx, NULL, &qpn));
	ASSERT_TRUE(strstr(mrc_last_error(ctx), "closed") != NULL);
	mrc_close(ctx); /* no QPs to destroy, nothing hangs */
	fake_stop(f);
}

TEST(ctl, shutdown_event_during_a_request__epipe)
{
	struct fake *f = fake_start();
	struct mrc_ctx *ctx = open_ctx(f);
	uint32_t qpn;

	fake_push(f, "{\"v\":1,\"event\":\"shutdown\"}\n");
	ASSERT_EQ(-EPIPE, mrc_qp_create(ctx, NULL, &qpn));
	ASSERT_STREQ("qp_create: mrcd is shutting down", mrc_last_error(ctx));
	mrc_close(ctx);
	fake_stop(f);
}

/* ---- post_send / post_recv --------------------------------------------------------------------- */

struct dp_fixture {
	struct fake *f;
	struct mrc_ctx *ctx;
	uint8_t *buf;
	struct mrc_mr mr;
	uint32_t qpn;
};

static void dp_setup(struct dp_fixture *x)
{
	x->f = fake_start();
	x->ctx = open_ctx(x->f);
	x->buf = mrc_alloc(x->ctx, 65536, 0);
	ASSERT_TRUE(x->buf != NULL);
	ASSERT_EQ(0, mrc_reg_mr(x->ctx, x->buf, 65536, MRC_ACCESS_LOCAL_WRITE, &x->mr));
	x->qpn = new_qp(x->ctx);
}

static void dp_teardown(struct dp_fixture *x)
{
	mrc_close(x->ctx);
	fake_stop(x->f);
}

TEST(post_send, ring_0_gets_exactly_these_work_requests)
{
	struct dp_fixture x;

	dp_setup(&x);
	struct mrc_sge sg[3] = {
		{x.buf, 100, x.mr.lkey}, {x.buf + 4096, 200, x.mr.lkey}, {x.buf + 65536 - 8, 8, x.mr.lkey},
	};
	struct mrc_send_wr wr[2] = {
		{.wr_id = 0x1111222233334444, .opcode = MRC_WR_WRITE_IMM, .flags = MRC_WR_SIGNALED,
		 .imm = 0xdeadbeef, .sg_list = sg, .num_sge = 3, .remote_addr = 0xabcdef0123, .rkey = 0x77},
		{.wr_id = 2, .opcode = MRC_WR_WRITE, .imm = 5 /* ignored */, .sg_list = sg, .num_sge = 1,
		 .remote_addr = 8, .rkey = 9},
	};
	struct mrc_shm_wr out[3], expect[2];
	uint64_t base_ofs = (uint64_t)(x.buf - x.ctx->base);

	memset(expect, 0, sizeof(expect));
	expect[0] = (struct mrc_shm_wr){.wr_id = 0x1111222233334444, .remote_addr = 0xabcdef0123,
					.qp = x.qpn, .rkey = 0x77, .imm = 0xdeadbeef,
					.opcode = MRC_SHM_OP_WRITE_IMM, .flags = MRC_SHM_WR_SIGNALED, .num_sge = 3};
	expect[0].sge[0] = (struct mrc_shm_sge){base_ofs, 100, x.mr.lkey};
	expect[0].sge[1] = (struct mrc_shm_sge){base_ofs + 4096, 200, x.mr.lkey};
	expect[0].sge[2] = (struct mrc_shm_sge){base_ofs + 65536 - 8, 8, x.mr.lkey};
	expect[1] = (struct mrc_shm_wr){.wr_id = 2, .remote_addr = 8, .qp = x.qpn, .rkey = 9,
					.opcode = MRC_SHM_OP_WRITE, .num_sge = 1};
	expect[1].sge[0] = expect[0].sge[0];

	ASSERT_EQ(2, mrc_post_send(x.ctx, x.qpn, wr, 2));
	ASSERT_EQ(2, mrc_shm_ring_dequeue_burst(x.f->sq, out, 3));
	ASSERT_MEMEQ(expect, out, sizeof(expect));
	/* an unknown lkey is the daemon's to judge: it passes */
	sg[0].lkey = 0x5555;
	ASSERT_EQ(1, mrc_post_send(x.ctx, x.qpn, wr, 1));
	ASSERT_EQ(1, mrc_shm_ring_dequeue_burst(x.f->sq, out, 3));
	ASSERT_EQ(0x5555, out[0].sge[0].lkey);
	ASSERT_EQ(0, mrc_post_send(x.ctx, x.qpn, wr, 0));
	/* zero SGEs: a zero-length write */
	wr[1].num_sge = 0;
	wr[1].sg_list = NULL;
	ASSERT_EQ(1, mrc_post_send(x.ctx, x.qpn, &wr[1], 1));
	dp_teardown(&x);
}

TEST(post_send, doorbell_rings_only_when_the_worker_sleeps)
{
	struct dp_fixture x;
	struct mrc_sge sg = {0};
	struct mrc_send_wr wr = {.opcode = MRC_WR_WRITE, .sg_list = &sg, .num_sge = 1};
	struct mrc_shm_wr out[4];

	dp_setup(&x);
	sg = (struct mrc_sge){x.buf, 64, x.mr.lkey};
	ASSERT_EQ(1, mrc_post_send(x.ctx, x.qpn, &wr, 1));
	ASSERT_EQ(0, efd_read(x.f->db_efd)); /* awake: no doorbell */
	ASSERT_EQ(1, mrc_shm_ring_dequeue_burst(x.f->sq, out, 4));
	ASSERT_TRUE(mrc_shm_ring_prepare_sleep(x.f->sq)); /* the worker goes to sleep */
	ASSERT_EQ(1, mrc_post_send(x.ctx, x.qpn, &wr, 1));
	ASSERT_EQ(1, efd_read(x.f->db_efd));
	ASSERT_EQ(1, mrc_post_send(x.ctx, x.qpn, &wr, 1));
	ASSERT_EQ(0, efd_read(x.f->db_efd)); /* the flag was taken: once per sleep */
	mrc_shm_ring_end_sleep(x.f->sq);

	/* the receive ring has its own flag */
	uint64_t ids[2] = {1, 2};

	ASSERT_EQ(2, mrc_post_recv(x.ctx, x.qpn, ids, 2));
	ASSERT_EQ(0, efd_read(x.f->db_efd));
	ASSERT_TRUE(mrc_shm_ring_prepare_sleep(x.f->rq) == false); /* not empty */
	struct mrc_shm_recv rv[4];

	ASSERT_EQ(2, mrc_shm_ring_dequeue_burst(x.f->rq, rv, 4));
	ASSERT_TRUE(mrc_shm_ring_prepare_sleep(x.f->rq));
	ASSERT_EQ(1, mrc_post_recv(x.ctx, x.qpn, ids, 1));
	ASSERT_EQ(1, efd_read(x.f->db_efd));
	dp_teardown(&x);
}

TEST(post_send, full_ring__partial_count)
{
	struct dp_fixture x;
	struct mrc_send_wr wr[70];
	struct mrc_shm_wr out[70];

	dp_setup(&x);
	memset(wr, 0, sizeof(wr));
	for (unsigned i = 0; i < 70; i++)
		wr[i].wr_id = i;
	ASSERT_EQ(64, mrc_post_send(x.ctx, x.qpn, wr, 70));
	ASSERT_EQ(0, mrc_post_send(x.ctx, x.qpn, &wr[64], 6));
	ASSERT_EQ(10, mrc_shm_ring_dequeue_burst(x.f->sq, out, 10));
	ASSERT_EQ(6, mrc_post_send(x.ctx, x.qpn, &wr[64], 6));
	ASSERT_EQ(60, mrc_shm_ring_dequeue_burst(x.f->sq, out, 70));
	for (unsigned i = 0; i < 60; i++)
		ASSERT_EQ(10 + i, out[i].wr_id);

	uint64_t ids[70];

	for (unsigned i = 0; i < 70; i++)
		ids[i] = 1000 + i;
	ASSERT_EQ(64, mrc_post_recv(x.ctx, x.qpn, ids, 70));
	ASSERT_EQ(0, mrc_post_recv(x.ctx, x.qpn, ids, 1));
	struct mrc_shm_recv rv[64];

	ASSERT_EQ(64, mrc_shm_ring_dequeue_burst(x.f->rq, rv, 64));
	for (unsigned i = 0; i < 64; i++) {
		ASSERT_EQ(1000 + i, rv[i].wr_id);
		ASSERT_EQ(x.qpn, rv[i].qp);
		ASSERT_EQ(0, rv[i].rsvd);
	}
	dp_teardown(&x);
}

TEST(post_send, malformed_requests__einval_and_nothing_posted)
{
	struct dp_fixture x;
	struct mrc_sge sg[MRC_MAX_SGE + 1];
	struct mrc_send_wr good, wr[2];
	int local;

	dp_setup(&x);
	for (unsigned i = 0; i <= MRC_MAX_SGE; i++)
		sg[i] = (struct mrc_sge){x.buf + 64 * i, 64, x.mr.lkey};
	good = (struct mrc_send_wr){.opcode = MRC_WR_WRITE, .sg_list = sg, .num_sge = 1};

	ASSERT_EQ(-EINVAL, mrc_post_send(NULL, x.qpn, &good, 1));
	ASSERT_EQ(-EINVAL, mrc_post_send(x.ctx, x.qpn, NULL, 1));
	ASSERT_EQ(-EINVAL, mrc_post_send(x.ctx, 999, &good, 1)); /* not our QP */
	ASSERT_TRUE(strstr(mrc_last_error(x.ctx), "qpn 999") != NULL);

	wr[0] = good;
	wr[1] = good;
	wr[1].opcode = 2;
	ASSERT_EQ(-EINVAL, mrc_post_send(x.ctx, x.qpn, wr, 2));
	ASSERT_STREQ("mrc_post_send: wr[1]: unknown opcode", mrc_last_error(x.ctx));
	wr[1] = good;
	wr[1].flags = 0x80;
	ASSERT_EQ(-EINVAL, mrc_post_send(x.ctx, x.qpn, wr, 2));
	wr[1] = good;
	wr[1].num_sge = MRC_MAX_SGE + 1;
	ASSERT_EQ(-EINVAL, mrc_post_send(x.ctx, x.qpn, wr, 2));
	ASSERT_TRUE(strstr(mrc_last_error(x.ctx), "more than 8 SGEs") != NULL);
	wr[1].num_sge = MRC_MAX_SGE; /* 8 is fine */
	wr[1].sg_list = NULL;
	ASSERT_EQ(-EINVAL, mrc_post_send(x.ctx, x.qpn, wr, 2));
	wr[1] = good;
	sg[0].addr = &local; /* outside the heap */
	ASSERT_EQ(-EINVAL, mrc_post_send(x.ctx, x.qpn, wr, 2));
	ASSERT_TRUE(strstr(mrc_last_error(x.ctx), "outside the arena heap") != NULL);
	sg[0].addr = x.ctx->base; /* the arena header */
	ASSERT_EQ(-EINVAL, mrc_post_send(x.ctx, x.qpn, wr, 2));
	sg[0].addr = x.ctx->base + x.ctx->heap_ofs + x.ctx->heap_len - 8;
	sg[0].len = 9; /* one byte past the heap */
	ASSERT_EQ(-EINVAL, mrc_post_send(x.ctx, x.qpn, wr, 2));
	sg[0].addr = x.buf + 65536 - 8; /* inside the heap, past its region */
	ASSERT_EQ(-EINVAL, mrc_post_send(x.ctx, x.qpn, wr, 2));
	ASSERT_TRUE(strstr(mrc_last_error(x.ctx), "region of its lkey") != NULL);
	sg[0].addr = x.buf;
	sg[0].len = 64;
	ASSERT_EQ(0, mrc_shm_ring_count(x.f->sq)); /* nothing went out */

	wr[1].num_sge = MRC_MAX_SGE;
	ASSERT_EQ(2, mrc_post_send(x.ctx, x.qpn, wr, 2));

	uint64_t id = 1;

	ASSERT_EQ(-EINVAL, mrc_post_recv(NULL, x.qpn, &id, 1));
	ASSERT_EQ(-EINVAL, mrc_post_recv(x.ctx, x.qpn, NULL, 1));
	ASSERT_EQ(-EINVAL, mrc_post_recv(x.ctx, 12345, &id, 1));
	ASSERT_EQ(0, mrc_post_recv(x.ctx, x.qpn, NULL, 0));
	ASSERT_EQ(0, mrc_shm_ring_count(x.f->rq));

	/* a destroyed QP is unknown locally */
	ASSERT_EQ(0, mrc_qp_destroy(x.ctx, x.qpn));
	ASSERT_EQ(-EINVAL, mrc_post_send(x.ctx, x.qpn, &good, 1));
	dp_teardown(&x);
}

/* ---- completions ----------------------------------------------------------------------------- */

static void cq_push(struct fake *f, uint64_t wr_id, uint32_t qp, uint32_t msn, uint8_t op, uint8_t st)
{
	struct mrc_shm_cqe c = {.wr_id = wr_id, .qp = qp, .byte_len = 5, .imm = 42, .msn = msn,
				.opcode = op, .status = st};

	ASSERT_EQ(1, mrc_shm_ring_enqueue_burst(f->cq, &c, 1));
	if (mrc_shm_ring_need_wake(f->cq)) {
		uint64_t one = 1;

		ASSERT_EQ(8, write(f->cq_efd, &one, 8));
	}
}

TEST(poll_cq, converts_completions)
{
	struct fake *f = fake_start();
	struct mrc_ctx *ctx = open_ctx(f);
	struct mrc_wc wc[4];

	ASSERT_EQ(0, mrc_poll_cq(ctx, wc, 4));
	ASSERT_EQ(-EINVAL, mrc_poll_cq(ctx, NULL, 4));
	ASSERT_EQ(-EINVAL, mrc_poll_cq(NULL, wc, 4));
	cq_push(f, 10, 17, 0x12345, MRC_SHM_WC_WRITE, MRC_SHM_WC_SUCCESS);
	cq_push(f, 11, 18, 7, MRC_SHM_WC_RECV_WRITE_IMM, MRC_SHM_WC_SUCCESS);
	cq_push(f, 12, 17, 8, MRC_SHM_WC_WRITE, MRC_SHM_WC_REM_ACCESS_ERR);
	ASSERT_EQ(2, mrc_poll_cq(ctx, wc, 2));
	ASSERT_EQ(10, wc[0].wr_id);
	ASSERT_EQ(17, wc[0].qpn);
	ASSERT_EQ(5, wc[0].byte_len);
	ASSERT_EQ(42, wc[0].imm);
	ASSERT_EQ(0x2345, wc[0].msn);
	ASSERT_EQ(MRC_WC_WRITE, wc[0].opcode);
	ASSERT_EQ(MRC_WC_SUCCESS, wc[0].status);
	ASSERT_EQ(MRC_WC_RECV_WRITE_IMM, wc[1].opcode);
	ASSERT_EQ(18, wc[1].qpn);
	ASSERT_EQ(1, mrc_poll_cq(ctx, wc, 4));
	ASSERT_EQ(12, wc[0].wr_id);
	ASSERT_EQ(MRC_WC_REM_ACCESS_ERR, wc[0].status);
	ASSERT_EQ(0, mrc_poll_cq(ctx, wc, 4));
	ASSERT_EQ(0, mrc_poll_cq(ctx, wc, 0));
	mrc_close(ctx);
	fake_stop(f);
}

TEST(poll_cq, qp_error_entry_is_an_event_with_its_cause)
{
	struct fake *f = fake_start();
	struct mrc_ctx *ctx = open_ctx(f);
	struct mrc_wc wc[4];
	/* D70: what the daemon writes when a receiver's QP died of a WriteImm
	 * it had no receive for: no wr_id, the status, the cause and the
	 * message's length and MSN */
	struct mrc_shm_cqe c = {.qp = 17, .byte_len = 100, .imm = 0xabc, .msn = 3,
				.opcode = MRC_SHM_WC_QP_ERROR, .status = MRC_SHM_WC_REM_INV_REQ_ERR,
				.cause = MRC_SHM_QP_CAUSE_NO_RECV};

	ASSERT_EQ(1, mrc_shm_ring_enqueue_burst(f->cq, &c, 1));
	cq_push(f, 9, 18, 1, MRC_SHM_WC_WRITE, MRC_SHM_WC_REM_OP_ERR);
	ASSERT_EQ(2, mrc_poll_cq(ctx, wc, 4));
	ASSERT_EQ(MRC_WC_QP_ERROR, wc[0].opcode);
	ASSERT_EQ(0, wc[0].wr_id);
	ASSERT_EQ(17, wc[0].qpn);
	ASSERT_EQ(MRC_WC_REM_INV_REQ_ERR, wc[0].status);
	ASSERT_EQ(MRC_QP_CAUSE_NO_RECV, wc[0].cause);
	ASSERT_EQ(100, wc[0].byte_len);
	ASSERT_EQ(3, wc[0].msn);
	ASSERT_STREQ("a WRITE_IMM arrived with no receive posted", mrc_qp_cause_str(wc[0].cause));
	ASSERT_TRUE(strstr(mrc_wc_status_str(wc[0].status), "invalid request") != NULL);
	/* an ordinary completion keeps its immediate where the cause was */
	ASSERT_EQ(MRC_WC_WRITE, wc[1].opcode);
	ASSERT_EQ(42, wc[1].imm);
	ASSERT_EQ(MRC_WC_REM_OP_ERR, wc[1].status);
	ASSERT_STREQ("remote operational error", mrc_wc_status_str(wc[1].status));
	ASSERT_STREQ("unknown cause", mrc_qp_cause_str(MRC_QP_CAUSE_BAD_ACCESS + 1));
	mrc_close(ctx);
	fake_stop(f);
}

struct waker {
	struct fake *f;
	struct mrc_ctx *ctx;
	int mode; /* 0: completion, 1: close the connection, 2: shutdown event + close */
};

/* Wait until the client sleeps on the CQ, then act. */
static void *waker_main(void *arg)
{
	struct waker *w = arg;

	WAIT_FOR(atomic_load(&w->f->cq->sleeping) == 1);
	if (w->mode == 0) {
		cq_push(w->f, 77, 17, 1, MRC_SHM_WC_WRITE, 0);
	} else {
		if (w->mode == 2)
			fake_send(w->f, "{\"v\":1,\"event\":\"shutdown\"}\n", 27);
		shutdown(atomic_load(&w->f->cfd), SHUT_RDWR);
	}
	return NULL;
}

TEST(wait_cq, timeout_wake_and_ready)
{
	struct fake *f = fake_start();
	struct mrc_ctx *ctx = open_ctx(f);
	struct waker w = {f, ctx, 0};
	struct mrc_wc wc;
	pthread_t th;

	ASSERT_EQ(-EINVAL, mrc_wait_cq(NULL, 0));
	ASSERT_EQ(0, mrc_wait_cq(ctx, 0));
	uint64_t t0 = now_ns();

	ASSERT_EQ(0, mrc_wait_cq(ctx, 30));
	ASSERT_GE(now_ns() - t0, 29000000u);
	ASSERT_EQ(0, atomic_load(&f->cq->sleeping)); /* flag cleared after the wait */

	ASSERT_EQ(0, pthread_create(&th, NULL, waker_main, &w));
	ASSERT_EQ(1, mrc_wait_cq(ctx, 10000));
	pthread_join(th, NULL);
	ASSERT_EQ(1, mrc_wait_cq(ctx, 10000)); /* still there: ready at once */
	ASSERT_EQ(1, mrc_poll_cq(ctx, &wc, 1));
	ASSERT_EQ(77, wc.wr_id);

	/* forever (-1) also wakes */
	ASSERT_EQ(0, pthread_create(&th, NULL, waker_main, &w));
	ASSERT_EQ(1, mrc_wait_cq(ctx, -1));
	pthread_join(th, NULL);
	ASSERT_EQ(1, mrc_poll_cq(ctx, &wc, 1));

	/* a stale eventfd count does not end a wait early */
	uint64_t one = 1;

	ASSERT_EQ(8, write(f->cq_efd, &one, 8));
	ASSERT_EQ(0, mrc_wait_cq(ctx, 20));
	mrc_close(ctx);
	fake_stop(f);
}

TEST(wait_cq, daemon_closing__epipe)
{
	for (int mode = 1; mode <= 2; mode++) {
		struct fake *f = fake_start();
		struct mrc_ctx *ctx = open_ctx(f);
		struct waker w = {f, ctx, mode};
		pthread_t th;
		uint32_t qpn;

		ASSERT_EQ(0, pthread_create(&th, NULL, waker_main, &w));
		ASSERT_EQ(-EPIPE, mrc_wait_cq(ctx, 10000));
		pthread_join(th, NULL);
		ASSERT_EQ(-EPIPE, mrc_wait_cq(ctx, 10000));
		ASSERT_EQ(-EPIPE, mrc_qp_create(ctx, NULL, &qpn));
		/* completions already delivered can still be taken */
		cq_push(f, 1, 17, 1, 0, 0);
		ASSERT_EQ(1, mrc_wait_cq(ctx, 0));
		mrc_close(ctx);
		fake_stop(f);
	}
}

TEST(arm_cq, external_poll_loop)
{
	struct fake *f = fake_start();
	struct mrc_ctx *ctx = open_ctx(f);
	struct pollfd pfd = {.fd = mrc_cq_fd(ctx), .events = POLLIN};
	struct mrc_wc wc;

	ASSERT_EQ(-EINVAL, mrc_cq_fd(NULL));
	ASSERT_FALSE(mrc_arm_cq(NULL));
	ASSERT_TRUE(mrc_arm_cq(ctx));
	ASSERT_EQ(0, poll(&pfd, 1, 0));
	cq_push(f, 5, 17, 1, 0, 0); /* armed: the daemon writes the fd */
	ASSERT_EQ(1, poll(&pfd, 1, 0));
	ASSERT_EQ(1, mrc_poll_cq(ctx, &wc, 1));
	ASSERT_EQ(0, atomic_load(&f->cq->sleeping)); /* poll_cq disarmed */
	ASSERT_TRUE(mrc_arm_cq(ctx)); /* drains the fd */
	ASSERT_EQ(0, poll(&pfd, 1, 0));
	ASSERT_EQ(0, mrc_poll_cq(ctx, &wc, 1));
	cq_push(f, 6, 17, 1, 0, 0); /* not armed now: no write */
	ASSERT_EQ(0, poll(&pfd, 1, 0));
	ASSERT_FALSE(mrc_arm_cq(ctx)); /* not empty: do not block */
	ASSERT_EQ(1, mrc_poll_cq(ctx, &wc, 1));
	mrc_close(ctx);
	fake_stop(f);
}

/* ---- key tables -------------------------------------------------------------------------------- */

TEST(keytab, add_find_del_and_reuse)
{
	struct mrc__keytab *t = calloc(1, sizeof(*t));
	uint64_t a, b;

	ASSERT_TRUE(t != NULL);
	ASSERT_FALSE(mrc__keytab_find(t, 0, &a, &b));
	ASSERT_EQ(0, mrc__keytab_add(t, 0, 1, 2)); /* key 0 is a key like any other */
	ASSERT_EQ(0, mrc__keytab_add(t, UINT32_MAX, 3, 4));
	ASSERT_EQ(-EEXIST, mrc__keytab_add(t, 0, 1, 2));
	ASSERT_TRUE(mrc__keytab_find(t, 0, &a, &b));
	ASSERT_EQ(1, a);
	ASSERT_EQ(2, b);
	ASSERT_TRUE(mrc__keytab_find(t, UINT32_MAX, &a, NULL));
	ASSERT_EQ(3, a);
	for (uint32_t k = 1; k < MRC__KEYTAB_MAX - 1; k++)
		ASSERT_EQ(0, mrc__keytab_add(t, k * 8192u, k, k));
	ASSERT_EQ(-ENOSPC, mrc__keytab_add(t, 12345, 0, 0));
	for (uint32_t k = 1; k < MRC__KEYTAB_MAX - 1; k += 2)
		ASSERT_TRUE(mrc__keytab_del(t, k * 8192u));
	ASSERT_FALSE(mrc__keytab_del(t, 8192u));
	for (uint32_t k = 2; k < MRC__KEYTAB_MAX - 1; k += 2) {
		ASSERT_TRUE(mrc__keytab_find(t, k * 8192u, &a, NULL));
		ASSERT_EQ(k, a);
	}
	/* churn: many more adds and deletes than slots */
	for (uint32_t k = 0; k < 5 * MRC__KEYTAB_SLOTS; k++) {
		ASSERT_EQ(0, mrc__keytab_add(t, 0x40000000u + k, k, 0));
		ASSERT_TRUE(mrc__keytab_find(t, 0x40000000u + k, &a, NULL));
		ASSERT_EQ(k, a);
		ASSERT_TRUE(mrc__keytab_del(t, 0x40000000u + k));
	}
	ASSERT_TRUE(mrc__keytab_find(t, 0, NULL, NULL));
	ASSERT_FALSE(mrc__keytab_find(t, 0x40000001u, NULL, NULL));
	free(t);
}
