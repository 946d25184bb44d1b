/* bad_client.c - a misbehaving client, speaking the attach protocol by hand
 * (docs/control.md "Client sessions") and writing raw ring entries the way a
 * buggy or hostile process could: every bad work request must come back as
 * an error completion, a rewritten ring header must not hurt the daemon, and
 * the session must still answer afterwards.
 *
 *   bad_client SOCKET      exit 0 when every check held, 1 otherwise
 */
#define _GNU_SOURCE
#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "mrc_shm.h"

static int fails;
#define CHECK(c, ...)                                                          \
	do {                                                                   \
		if (c) {                                                       \
			printf("ok   " __VA_ARGS__);                           \
		} else {                                                       \
			printf("FAIL " __VA_ARGS__);                           \
			fails++;                                               \
		}                                                              \
		printf("\n");                                                  \
	} while (0)

static int sock_connect(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		perror("connect");
		exit(1);
	}
	return fd;
}

/* Send one request line; read one reply line (and up to 3 fds). */
static json_t *request(int fd, const char *line, int *fds, int *nfds)
{
	static char buf[1 << 16];
	char cbuf[CMSG_SPACE(3 * sizeof(int))];
	size_t len = 0;

	if (write(fd, line, strlen(line)) < 0 || write(fd, "\n", 1) < 0)
		return NULL;
	if (nfds)
		*nfds = 0;
	for (;;) {
		struct iovec iov = { buf + len, sizeof(buf) - 1 - len };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
				     .msg_controllen = sizeof(cbuf) };
		struct pollfd p = { fd, POLLIN, 0 };

		if (poll(&p, 1, 10000) <= 0)
			return NULL;
		ssize_t n = recvmsg(fd, &mh, 0);
		if (n <= 0)
			return NULL;
		for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
			if (cm->cmsg_type == SCM_RIGHTS && fds && nfds) {
				*nfds = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
				memcpy(fds, CMSG_DATA(cm), (size_t)*nfds * sizeof(int));
			}
		len += (size_t)n;
		buf[len] = 0;
		char *nl = strchr(buf, '\n');
		if (nl) {
			json_t *j = json_loadb(buf, (size_t)(nl - buf), 0, NULL);

			return j;
		}
	}
}

static json_int_t res_int(json_t *r, const char *k)
{
	return json_integer_value(json_object_get(json_object_get(r, "result"), k));
}

static const char *err_code(json_t *r)
{
	const char *s = json_string_value(json_object_get(json_object_get(r, "error"), "code"));

	return s ? s : "";
}

int main(int argc, char **argv)
{
	int fds[3], nfds = 0;
	char line[512];
	json_t *r;

	if (argc != 2) {
		fprintf(stderr, "usage: bad_client SOCKET\n");
		return 2;
	}
	/* 1. a client built for another ABI is refused with a clear reason */
	int fd0 = sock_connect(argv[1]);
	r = request(fd0, "{\"v\":1,\"cmd\":\"attach\",\"id\":1,\"args\":{\"abi\":99}}", fds, &nfds);
	CHECK(r && strcmp(err_code(r), "EPROTO") == 0 && nfds == 0 &&
	      strstr(json_string_value(json_object_get(json_object_get(r, "error"), "reason")), "ABI"),
	      "ABI mismatch refused: %s", r ? json_string_value(json_object_get(json_object_get(r, "error"), "reason")) : "no reply");
	json_decref(r);
	close(fd0);

	/* 2. attach for real */
	int fd = sock_connect(argv[1]);
	snprintf(line, sizeof(line), "{\"v\":1,\"cmd\":\"attach\",\"id\":2,\"args\":{\"abi\":%u,\"heap_bytes\":4194304,"
		 "\"sq_depth\":64}}", MRC_SHM_ABI_VERSION);
	r = request(fd, line, fds, &nfds);
	CHECK(r && json_is_true(json_object_get(r, "ok")) && nfds == 3, "attach gives 3 fds");
	if (!r || nfds != 3)
		return 1;
	uint64_t heap_ofs = (uint64_t)res_int(r, "heap_ofs");
	json_decref(r);
	struct stat st;
	fstat(fds[0], &st);
	uint8_t *base = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
	struct mrc_shm_view v;
	CHECK(base != MAP_FAILED && mrc_shm_arena_attach(base, (uint64_t)st.st_size, &v) == 0, "arena maps and validates");
	CHECK(ftruncate(fds[0], st.st_size * 2) < 0, "the arena cannot be grown (sealed)");
	CHECK(ftruncate(fds[0], 4096) < 0, "the arena cannot be shrunk (sealed)");
	snprintf(line, sizeof(line), "{\"v\":1,\"cmd\":\"attach\",\"id\":3,\"args\":{\"abi\":%u}}", MRC_SHM_ABI_VERSION);
	r = request(fd, line, NULL, NULL);
	CHECK(r && strcmp(err_code(r), "EBUSY") == 0, "a second attach on one connection is refused");
	json_decref(r);

	/* 3. regions: inside the heap works, outside is refused */
	snprintf(line, sizeof(line), "{\"v\":1,\"cmd\":\"reg_mr\",\"id\":4,\"args\":{\"ofs\":%llu,\"len\":65536,\"access\":3}}",
		 (unsigned long long)heap_ofs);
	r = request(fd, line, NULL, NULL);
	CHECK(r && json_is_true(json_object_get(r, "ok")), "reg_mr inside the heap");
	uint32_t lkey = (uint32_t)res_int(r, "lkey");
	json_decref(r);
	r = request(fd, "{\"v\":1,\"cmd\":\"reg_mr\",\"id\":5,\"args\":{\"ofs\":0,\"len\":4096,\"access\":3}}", NULL, NULL);
	CHECK(r && strcmp(err_code(r), "EINVAL") == 0, "reg_mr over the arena header refused");
	json_decref(r);
	r = request(fd, "{\"v\":1,\"cmd\":\"qp_create\",\"id\":6}", NULL, NULL);
	uint32_t qpn = (uint32_t)res_int(r, "qpn");
	CHECK(r && qpn != 0 && json_string_value(json_object_get(json_object_get(r, "result"), "info")), "qp_create");
	json_decref(r);
	r = request(fd, "{\"v\":1,\"cmd\":\"qp_info\",\"id\":7,\"args\":{\"qpn\":12345}}", NULL, NULL);
	CHECK(r && strcmp(err_code(r), "ENOENT") == 0, "another client's or no QP: ENOENT");
	json_decref(r);
	r = request(fd, "{\"v\":1,\"cmd\":\"qp_query\",\"id\":7,\"args\":{\"qpn\":12345}}", NULL, NULL);
	CHECK(r && strcmp(err_code(r), "ENOENT") == 0, "qp_query of no QP of its own: ENOENT");
	json_decref(r);
	snprintf(line, sizeof(line), "{\"v\":1,\"cmd\":\"qp_query\",\"id\":7,\"args\":{\"qpn\":%u}}", qpn);
	r = request(fd, line, NULL, NULL);
	{
		json_t *res = json_object_get(r, "result");
		const char *state = json_string_value(json_object_get(res, "state"));
		const char *cause = json_string_value(json_object_get(res, "cause"));

		CHECK(state && cause && strcmp(state, "INIT") == 0 && strcmp(cause, "none") == 0,
		      "qp_query of its own new QP: INIT, cause none (%s, %s)", state ? state : "-", cause ? cause : "-");
	}
	json_decref(r);

	/* 4. garbage work requests: each one gets its error completion */
	struct mrc_shm_rh sq, cq;
	mrc_shm_view_ring_handle(&v, 0, &sq);
	mrc_shm_view_ring_handle(&v, 2, &cq);
	struct mrc_shm_wr w[6];
	memset(w, 0, sizeof(w));
	for (int i = 0; i < 6; i++) {
		w[i].wr_id = 100 + (uint64_t)i;
		w[i].qp = qpn;
		w[i].opcode = MRC_SHM_OP_WRITE;
		w[i].flags = MRC_SHM_WR_SIGNALED;
		w[i].num_sge = 1;
		w[i].sge[0] = (struct mrc_shm_sge){ heap_ofs, 64, lkey };
	}
	w[0].qp = 999999;                          /* not this client's QP */
	w[1].opcode = 7;                           /* no such opcode */
	w[2].num_sge = 9;                          /* too many SGEs */
	w[3].sge[0].lkey = lkey ^ 0x5a5a;          /* not this client's key */
	w[4].sge[0].ofs = heap_ofs + 65536 - 8;    /* runs past its region */
	/* w[5] is well formed but its QP is not connected */
	static const uint8_t want[6] = { MRC_SHM_WC_GENERAL_ERR, MRC_SHM_WC_GENERAL_ERR, MRC_SHM_WC_GENERAL_ERR,
					 MRC_SHM_WC_LOC_PROT_ERR, MRC_SHM_WC_LOC_PROT_ERR, MRC_SHM_WC_FLUSH_ERR };
	CHECK(mrc_shm_rh_enqueue_burst(&sq, w, 6) == 6, "6 bad requests posted");
	uint64_t one = 1;
	if (write(fds[2], &one, 8) < 0)
		perror("doorbell");
	struct mrc_shm_cqe e[8];
	unsigned got = 0;
	for (int t = 0; t < 2000 && got < 6; t++) {
		got += mrc_shm_rh_dequeue_burst(&cq, e + got, 6 - got);
		if (got < 6) {
			struct pollfd p = { fds[1], POLLIN, 0 };
			poll(&p, 1, 5);
		}
	}
	CHECK(got == 6, "6 error completions (got %u)", got);
	for (unsigned i = 0; i < got; i++)
		CHECK(e[i].wr_id == 100 + i && e[i].status == want[i], "request %u: wr_id %llu status %u (want %u)",
		      i, (unsigned long long)e[i].wr_id, e[i].status, want[i]);

	/* 5. a rewritten ring header: tail far ahead, geometry scribbled */
	atomic_store(&sq.r->tail, atomic_load(&sq.r->head) + 1000000000u);
	sq.r->capacity = 1u << 30;
	sq.r->mask = 0xffffffff;
	if (write(fds[2], &one, 8) < 0)
		perror("doorbell");
	r = request(fd, "{\"v\":1,\"cmd\":\"status\",\"id\":8}", NULL, NULL);
	CHECK(r && json_is_true(json_object_get(r, "ok")), "the daemon still answers after a scribbled ring");
	json_decref(r);
	r = request(fd, "{\"v\":1,\"cmd\":\"qp_destroy\",\"id\":9,\"args\":{\"qpn\":1}}", NULL, NULL);
	CHECK(r && strcmp(err_code(r), "ENOENT") == 0, "qp_destroy of a QP it does not own: ENOENT");
	json_decref(r);
	close(fd);
	printf("%d failed\n", fails);
	return fails ? 1 : 0;
}
