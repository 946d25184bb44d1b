/* test_fi.c - our own libfabric program for what fi_pingpong does not cover,
 * written against the public fi_* API only, run as two processes (one per
 * daemon) by test/integration/libfabric.sh:
 *
 *   test_fi --role server|client --dir DIR [--provider mrc]
 *
 * The two swap their endpoint names (and the server's RMA target) through
 * files in DIR, then run, in order: fi_write / fi_writev / fi_inject_write
 * into a registered buffer; fi_writedata and fi_inject_writedata with remote
 * CQ data on the target; tagged receives posted out of order and with
 * ignore bits; unexpected messages (eager and rendezvous); 64 outstanding
 * operations; a blocking CQ read that burns no CPU; and a peer that
 * disappears (the server _exits; the client's sends complete in error, none
 * hangs). Prints "ok ..." / "FAIL ..." lines and exits 0 only if all passed. */
#define _GNU_SOURCE
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define TMO_MS 30000
#define BIG (1u << 20)

static struct fid_fabric *fabric;
static struct fid_domain *domain;
static struct fid_ep *ep;
static struct fid_cq *txcq, *rxcq;
static struct fid_av *av;
static fi_addr_t peer;
static bool server;
static const char *dir;
static int failures;

#define CHECK(what, cond)                                                                 \
	do {                                                                              \
		if (cond) {                                                               \
			printf("ok   %s\n", what);                                            \
		} else {                                                                  \
			printf("FAIL %s (%s:%d)\n", what, __FILE__, __LINE__);                \
			failures++;                                                       \
		}                                                                         \
		fflush(stdout);                                                           \
	} while (0)
#define DIE(what, rc)                                                                     \
	do {                                                                              \
		printf("FAIL %s: %s (%d)\n", what, fi_strerror((int)-(rc)), (int)(rc));       \
		exit(1);                                                                  \
	} while (0)

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static uint8_t pat(size_t i, unsigned seed)
{
	return (uint8_t)(i * 131u + seed * 7u + (i >> 9));
}
static void fill(void *buf, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		((uint8_t *)buf)[i] = pat(i, seed);
}
static bool same(const void *buf, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		if (((const uint8_t *)buf)[i] != pat(i, seed))
			return false;
	return true;
}

/* One completion from @cq: 1 with *e, 0 timeout, < 0 an error entry (its
 * err in *err_out, its context in e->op_context). */
/* Entries the control-message wait read past, handed out first by get(). */
static struct fi_cq_tagged_entry stash[256];
static unsigned n_stash;

static int get(struct fid_cq *cq, struct fi_cq_tagged_entry *e, int *err_out, int timeout_ms)
{
	uint64_t end = now_ms() + (uint64_t)timeout_ms;

	if (cq == rxcq && n_stash) {
		*e = stash[0];
		memmove(stash, stash + 1, --n_stash * sizeof(stash[0]));
		return 1;
	}

	for (;;) {
		ssize_t n = fi_cq_read(cq, e, 1);

		if (n == 1)
			return 1;
		if (n == -FI_EAVAIL) {
			struct fi_cq_err_entry ee = {0};

			fi_cq_readerr(cq, &ee, 0);
			e->op_context = ee.op_context;
			e->flags = ee.flags;
			*err_out = ee.err;
			return -1;
		}
		if (n != -FI_EAGAIN)
			DIE("fi_cq_read", n);
		if (now_ms() > end)
			return 0;
	}
}

static int must_get(struct fid_cq *cq, struct fi_cq_tagged_entry *e, const char *what)
{
	int err = 0, rc = get(cq, e, &err, TMO_MS);

	if (rc <= 0) {
		printf("FAIL %s: %s\n", what, rc == 0 ? "no completion" : fi_strerror(err));
		exit(1);
	}
	return rc;
}

/* ---- control messages (FI_MSG space; the tests use tagged and RMA) ---------------------- */

static void ctrl_send(uint32_t code)
{
	ssize_t rc;

	while ((rc = fi_inject(ep, &code, sizeof(code), peer)) == -FI_EAGAIN)
		fi_cq_read(txcq, NULL, 0);
	if (rc)
		DIE("fi_inject (control)", rc);
}

static void ctrl_wait(uint32_t code)
{
	uint32_t got = 0;
	struct fi_cq_tagged_entry e;
	ssize_t rc = fi_recv(ep, &got, sizeof(got), NULL, FI_ADDR_UNSPEC, &got);

	if (rc)
		DIE("fi_recv (control)", rc);
	uint64_t end = now_ms() + TMO_MS;

	for (unsigned seen = n_stash;;) {
		int err = 0;
		ssize_t n;

		if (seen) { /* a stashed entry may be ours already */
			for (unsigned i = 0; i < n_stash; i++)
				if (stash[i].op_context == &got) {
					memmove(stash + i, stash + i + 1, (n_stash - i - 1) * sizeof(stash[0]));
					n_stash--;
					goto have;
				}
			seen = 0;
		}
		n = fi_cq_read(rxcq, &e, 1);
		if (n == -FI_EAGAIN) {
			if (now_ms() > end) {
				printf("FAIL control message: no completion\n");
				exit(1);
			}
			continue;
		}
		if (n != 1) {
			struct fi_cq_err_entry ee = {0};

			fi_cq_readerr(rxcq, &ee, 0);
			err = ee.err;
			printf("FAIL control message: %s\n", fi_strerror(err));
			exit(1);
		}
		if (e.op_context == &got)
			break;
		if (n_stash < 256)
			stash[n_stash++] = e; /* someone else's: keep it */
	}
have:
	if (got != code) {
		printf("FAIL control: got %u, want %u\n", got, code);
		exit(1);
	}
}

/* ---- names through files ------------------------------------------------------------------ */

struct published {
	uint8_t name[64];
	size_t namelen;
	uint64_t rma_addr, rma_key; /* server: its RMA target */
};

static void publish(const struct published *p)
{
	char path[512], tmp[520];

	snprintf(path, sizeof(path), "%s/%s.name", dir, server ? "server" : "client");
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	FILE *f = fopen(tmp, "w");

	if (f == NULL || fwrite(p, sizeof(*p), 1, f) != 1 || fclose(f) != 0 || rename(tmp, path) != 0) {
		printf("FAIL publish %s\n", path);
		exit(1);
	}
}

static void lookup(struct published *p)
{
	char path[512];
	uint64_t end = now_ms() + 60000;

	snprintf(path, sizeof(path), "%s/%s.name", dir, server ? "client" : "server");
	for (;;) {
		FILE *f = fopen(path, "r");

		if (f) {
			size_t n = fread(p, sizeof(*p), 1, f);

			fclose(f);
			if (n == 1)
				return;
		}
		if (now_ms() > end) {
			printf("FAIL no peer name in %s\n", path);
			exit(1);
		}
		poll(NULL, 0, 20); /* waiting for the other process to start: a condition with a deadline */
	}
}

/* ---- setup ------------------------------------------------------------------------------ */

static struct fi_info *info;

static void setup(const char *prov)
{
	struct fi_info *hints = fi_allocinfo();
	int rc;

	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG | FI_TAGGED | FI_RMA | FI_DIRECTED_RECV | FI_SOURCE;
	hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	hints->fabric_attr->prov_name = strdup(prov);
	rc = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info);
	if (rc)
		DIE("fi_getinfo", rc);
	fi_freeinfo(hints);
	if ((rc = fi_fabric(info->fabric_attr, &fabric, NULL)))
		DIE("fi_fabric", rc);
	if ((rc = fi_domain(fabric, info, &domain, NULL)))
		DIE("fi_domain", rc);
	struct fi_cq_attr cqa = {.format = FI_CQ_FORMAT_TAGGED, .wait_obj = FI_WAIT_NONE};

	if ((rc = fi_cq_open(domain, &cqa, &txcq, NULL)))
		DIE("fi_cq_open tx", rc);
	cqa.wait_obj = FI_WAIT_UNSPEC; /* the receive CQ can block */
	if ((rc = fi_cq_open(domain, &cqa, &rxcq, NULL)))
		DIE("fi_cq_open rx", rc);
	struct fi_av_attr ava = {.type = FI_AV_TABLE};

	if ((rc = fi_av_open(domain, &ava, &av, NULL)))
		DIE("fi_av_open", rc);
	if ((rc = fi_endpoint(domain, info, &ep, NULL)))
		DIE("fi_endpoint", rc);
	if ((rc = fi_ep_bind(ep, &av->fid, 0)) || (rc = fi_ep_bind(ep, &txcq->fid, FI_TRANSMIT)) ||
	    (rc = fi_ep_bind(ep, &rxcq->fid, FI_RECV)))
		DIE("fi_ep_bind", rc);
	if ((rc = fi_enable(ep)))
		DIE("fi_enable", rc);
}

/* ---- the tests ---------------------------------------------------------------------------- */

static uint8_t *rma_buf;       /* server: the RMA target (1 MiB + 4 KiB) */
static struct fid_mr *rma_mr;
static struct published me, them;

static void wait_tx(unsigned n, const char *what)
{
	struct fi_cq_tagged_entry e;

	for (unsigned i = 0; i < n; i++)
		must_get(txcq, &e, what);
}

static void send_tagged(const void *buf, size_t len, uint64_t tag, void *ctx)
{
	ssize_t rc;

	while ((rc = fi_tsend(ep, buf, len, NULL, peer, tag, ctx)) == -FI_EAGAIN)
		fi_cq_read(txcq, NULL, 0);
	if (rc)
		DIE("fi_tsend", rc);
}

static void test_rma(void)
{
	if (server) {
		/* 1: fi_write of 1 MiB at offset 0, fi_writev of 2 x 3 KiB at
		 * BIG, fi_inject_write of 100 B at BIG + 8 KiB - 100 */
		ctrl_wait(1);
		if (!same(rma_buf, BIG, 1))
			printf("# target %p key %#llx: first bytes %02x %02x %02x, want %02x %02x %02x\n", (void *)rma_buf,
			       (unsigned long long)me.rma_key, rma_buf[0], rma_buf[1], rma_buf[2], pat(0, 1), pat(1, 1),
			       pat(2, 1));
		CHECK("fi_write: 1 MiB placed in the registered buffer", same(rma_buf, BIG, 1));
		CHECK("fi_writev: 2 x 3 KiB placed", same(rma_buf + BIG, 3072, 2) && same(rma_buf + BIG + 3072, 3072, 3));
		CHECK("fi_inject_write: 100 bytes placed", same(rma_buf + BIG + 8192 - 100, 100, 4));
		/* 2: fi_writedata -> a completion with the CQ data, after the data */
		struct fi_cq_tagged_entry e;

		for (int k = 0; k < 2; k++) {
			must_get(rxcq, &e, "writedata completion");
			bool first = e.data == 0xdeadbeef;

			CHECK(first ? "fi_writedata: target CQ entry has FI_REMOTE_CQ_DATA 0xdeadbeef"
				    : "fi_inject_writedata: target CQ entry has FI_REMOTE_CQ_DATA 0x1234",
			      (e.flags & FI_REMOTE_CQ_DATA) && (e.flags & FI_REMOTE_WRITE) &&
				      (e.data == 0xdeadbeef || e.data == 0x1234));
			if (first)
				CHECK("fi_writedata: 64 KiB already placed at that completion",
				      e.len == 65536 && same(rma_buf + BIG + 65536, 65536, 5));
			else
				CHECK("fi_inject_writedata: 16 bytes placed at that completion",
				      e.len == 16 && same(rma_buf + BIG + 200000, 16, 6));
		}
		ctrl_send(2);
		return;
	}
	uint8_t *src = malloc(BIG);
	uint8_t *v1 = malloc(3072), *v2 = malloc(3072), small[100], *wd = malloc(65536), tiny[16];
	struct iovec iov[2] = {{v1, 3072}, {v2, 3072}};
	ssize_t rc;

	fill(src, BIG, 1);
	fill(v1, 3072, 2);
	fill(v2, 3072, 3);
	fill(small, 100, 4);
	fill(wd, 65536, 5);
	fill(tiny, 16, 6);
	if ((rc = fi_write(ep, src, BIG, NULL, peer, them.rma_addr, them.rma_key, src)))
		DIE("fi_write", rc);
	if ((rc = fi_writev(ep, iov, NULL, 2, peer, them.rma_addr + BIG, them.rma_key, v1)))
		DIE("fi_writev", rc);
	if ((rc = fi_inject_write(ep, small, 100, peer, them.rma_addr + BIG + 8192 - 100, them.rma_key)))
		DIE("fi_inject_write", rc);
	memset(small, 0, sizeof(small)); /* inject: the buffer is ours again at once */
	wait_tx(2, "fi_write / fi_writev completions");
	ctrl_send(1);
	if ((rc = fi_writedata(ep, wd, 65536, NULL, 0xdeadbeef, peer, them.rma_addr + BIG + 65536, them.rma_key, wd)))
		DIE("fi_writedata", rc);
	if ((rc = fi_inject_writedata(ep, tiny, 16, 0x1234, peer, them.rma_addr + BIG + 200000, them.rma_key)))
		DIE("fi_inject_writedata", rc);
	wait_tx(1, "fi_writedata completion");
	ctrl_wait(2);
	CHECK("RMA writes completed at the initiator", true);
	free(src);
	free(v1);
	free(v2);
	free(wd);
}

static void test_tagged_order(void)
{
	/* receives posted for tags 3, 2, 1 and one with ignore bits; sent as
	 * 1, 2, 3, 0x77 (eager and rendezvous sizes mixed) */
	static const size_t sz[4] = {100, 200000, 5000, 70000};
	static const uint64_t tags[4] = {1, 2, 3, 0x1077};

	if (server) {
		uint8_t *buf[4];
		struct fi_cq_tagged_entry e;
		bool ok = true;

		for (int i = 0; i < 4; i++)
			buf[i] = calloc(1, sz[i]);
		for (int i = 2; i >= 0; i--)
			if (fi_trecv(ep, buf[i], sz[i], NULL, peer, tags[i], 0, buf[i]))
				DIE("fi_trecv", -1);
		if (fi_trecv(ep, buf[3], sz[3], NULL, FI_ADDR_UNSPEC, 0x77, 0xff00, buf[3]))
			DIE("fi_trecv", -1);
		ctrl_send(3);
		for (int k = 0; k < 4; k++) {
			must_get(rxcq, &e, "tagged receive");
			int i;

			for (i = 0; i < 4 && e.op_context != buf[i]; i++)
				;
			ok &= i < 4 && e.tag == tags[i] && e.len == sz[i] && same(buf[i], sz[i], 10 + (unsigned)i);
		}
		CHECK("tagged receives posted out of order (3, 2, 1) each got their tag's message", ok);
		fi_addr_t src = FI_ADDR_NOTAVAIL;

		(void)src;
		for (int i = 0; i < 4; i++)
			free(buf[i]);
		ctrl_send(4);
		return;
	}
	uint8_t *buf[4];

	for (int i = 0; i < 4; i++) {
		buf[i] = malloc(sz[i]);
		fill(buf[i], sz[i], 10 + (unsigned)i);
	}
	ctrl_wait(3);
	for (int i = 0; i < 4; i++)
		send_tagged(buf[i], sz[i], tags[i], buf[i]);
	wait_tx(4, "tagged sends");
	ctrl_wait(4);
	CHECK("tagged sends in order 1, 2, 3, 0x1077 completed", true);
	for (int i = 0; i < 4; i++)
		free(buf[i]);
}

static void test_unexpected(void)
{
	/* 8 tagged messages (eager and rendezvous) arrive before any receive */
	enum { N = 8 };
	size_t sz[N];

	for (int i = 0; i < N; i++)
		sz[i] = i % 2 ? 100000 + (size_t)i : 64 + (size_t)i * 100;
	if (server) {
		struct fi_cq_tagged_entry e;
		bool ok = true;

		ctrl_wait(5); /* sent after the 8: in order, so those are queued already */
		for (int i = N - 1; i >= 0; i--) {
			uint8_t *b = calloc(1, sz[i]);

			if (fi_trecv(ep, b, sz[i], NULL, FI_ADDR_UNSPEC, 100 + (uint64_t)i, 0, b))
				DIE("fi_trecv", -1);
			must_get(rxcq, &e, "unexpected message");
			ok &= e.op_context == b && e.tag == 100 + (uint64_t)i && e.len == sz[i] &&
			      same(b, sz[i], 20 + (unsigned)i);
			free(b);
		}
		CHECK("8 unexpected messages (eager and rendezvous) matched later, in reverse", ok);
		ctrl_send(6);
		return;
	}
	uint8_t *buf[N];

	for (int i = 0; i < N; i++) {
		buf[i] = malloc(sz[i]);
		fill(buf[i], sz[i], 20 + (unsigned)i);
		send_tagged(buf[i], sz[i], 100 + (uint64_t)i, buf[i]);
	}
	ctrl_send(5);
	wait_tx(N, "unexpected sends");
	ctrl_wait(6);
	for (int i = 0; i < N; i++)
		free(buf[i]);
	CHECK("8 sends completed though nobody had posted a receive", true);
}

static void test_outstanding(void)
{
	enum { N = 64 };
	size_t sz[N];

	for (int i = 0; i < N; i++)
		sz[i] = (size_t)(i % 4 == 3 ? 65536 + i : 1000 + i * 37);
	if (server) {
		uint8_t *b[N];
		struct fi_cq_tagged_entry e;
		unsigned good = 0;

		for (int i = 0; i < N; i++) {
			b[i] = calloc(1, sz[i]);
			if (fi_trecv(ep, b[i], sz[i], NULL, peer, 1000 + (uint64_t)i, 0, b[i]))
				DIE("fi_trecv", -1);
		}
		ctrl_send(7);
		for (int k = 0; k < N; k++) {
			must_get(rxcq, &e, "64 outstanding");
			for (int i = 0; i < N; i++)
				if (e.op_context == b[i] && e.len == sz[i] && same(b[i], sz[i], 40 + (unsigned)i))
					good++;
		}
		char what[96];

		snprintf(what, sizeof(what), "64 outstanding receives: %u of 64 complete with their data", good);
		CHECK(what, good == N);
		for (int i = 0; i < N; i++)
			free(b[i]);
		ctrl_send(8);
		return;
	}
	uint8_t *b[N];

	ctrl_wait(7);
	for (int i = 0; i < N; i++) {
		b[i] = malloc(sz[i]);
		fill(b[i], sz[i], 40 + (unsigned)i);
		send_tagged(b[i], sz[i], 1000 + (uint64_t)i, b[i]);
	}
	wait_tx(N, "64 outstanding sends");
	CHECK("64 sends posted back to back, all completed", true);
	ctrl_wait(8);
	for (int i = 0; i < N; i++)
		free(b[i]);
}

static void test_blocking(void)
{
	/* the server blocks in fi_cq_sread for 1.5 s with nothing coming: it
	 * must sleep, not spin */
	if (!server)
		return;
	struct rusage r0, r1;
	struct fi_cq_tagged_entry e;
	uint64_t t0 = now_ms();

	getrusage(RUSAGE_SELF, &r0);
	ssize_t rc = fi_cq_sread(rxcq, &e, 1, NULL, 1500);

	getrusage(RUSAGE_SELF, &r1);
	uint64_t wall = now_ms() - t0;
	double cpu = (double)(r1.ru_utime.tv_sec - r0.ru_utime.tv_sec) * 1e3 +
		     (double)(r1.ru_utime.tv_usec - r0.ru_utime.tv_usec) / 1e3 +
		     (double)(r1.ru_stime.tv_sec - r0.ru_stime.tv_sec) * 1e3 +
		     (double)(r1.ru_stime.tv_usec - r0.ru_stime.tv_usec) / 1e3;
	char what[128];

	snprintf(what, sizeof(what), "fi_cq_sread blocked %llu ms using %.1f ms of CPU (timed out: %s)",
		 (unsigned long long)wall, cpu, rc == -FI_EAGAIN ? "yes" : "no");
	CHECK(what, rc == -FI_EAGAIN && wall >= 1400 && cpu < 0.1 * (double)wall);
}

static void test_peer_gone(void)
{
	if (server) {
		ctrl_wait(9);
		printf("ok   server exits without closing anything\n");
		fflush(stdout);
		_exit(failures ? 1 : 0);
	}
	ctrl_send(9);
	/* a receive for the dead peer's control message stays posted; the
	 * sends must fail */
	enum { N = 4 };
	uint8_t *b = malloc(300000);
	unsigned errs = 0, oks = 0;
	uint64_t t0 = now_ms();

	fill(b, 300000, 1);
	/* keep sending until the QP fails: the first sends may still have
	 * been acknowledged before the server's daemon dropped its session */
	for (int round = 0; round < 200 && errs == 0; round++) {
		for (int i = 0; i < N; i++)
			send_tagged(b, i % 2 ? 300000 : 100, 5000 + (uint64_t)i, b);
		for (int i = 0; i < N; i++) {
			struct fi_cq_tagged_entry e;
			int err = 0, rc = get(txcq, &e, &err, 60000);

			if (rc == 0) {
				CHECK("sends to a vanished peer complete (no hang)", false);
				free(b);
				return;
			}
			if (rc < 0)
				errs++;
			else
				oks++;
		}
		if (errs == 0)
			poll(NULL, 0, 50); /* the peer's daemon tears its QP down at its own pace */
	}
	char what[160];

	snprintf(what, sizeof(what),
		 "sends to a vanished peer complete in error, none hangs (%u errors, %u before it went, %llu ms)",
		 errs, oks, (unsigned long long)(now_ms() - t0));
	CHECK(what, errs > 0);
	free(b);
}

int main(int argc, char **argv)
{
	const char *prov = "mrc";
	int opt;
	static const struct option lo[] = {{"role", 1, NULL, 'r'}, {"dir", 1, NULL, 'd'}, {"provider", 1, NULL, 'p'},
					   {NULL, 0, NULL, 0}};

	while ((opt = getopt_long(argc, argv, "r:d:p:", lo, NULL)) != -1) {
		switch (opt) {
		case 'r': server = strcmp(optarg, "server") == 0; break;
		case 'd': dir = optarg; break;
		case 'p': prov = optarg; break;
		default: return 2;
		}
	}
	if (dir == NULL) {
		fprintf(stderr, "usage: test_fi --role server|client --dir DIR [--provider NAME]\n");
		return 2;
	}
	setup(prov);
	me.namelen = sizeof(me.name);
	int rc = fi_getname(&ep->fid, me.name, &me.namelen);

	if (rc)
		DIE("fi_getname", rc);
	if (server) {
		if (posix_memalign((void **)&rma_buf, 4096, 2 * BIG) != 0)
			DIE("posix_memalign", -FI_ENOMEM);
		memset(rma_buf, 0, 2 * BIG);
		rc = fi_mr_reg(domain, rma_buf, 2 * BIG, FI_REMOTE_WRITE, 0, 0, 0, &rma_mr, NULL);
		if (rc)
			DIE("fi_mr_reg", rc);
		me.rma_addr = (uint64_t)(uintptr_t)rma_buf;
		me.rma_key = fi_mr_key(rma_mr);
	}
	publish(&me);
	lookup(&them);
	if (fi_av_insert(av, them.name, 1, &peer, 0, NULL) != 1)
		DIE("fi_av_insert", -FI_EINVAL);

	test_rma();
	test_tagged_order();
	test_unexpected();
	test_outstanding();
	test_blocking();
	test_peer_gone();

	if (rma_mr)
		fi_close(&rma_mr->fid);
	fi_close(&ep->fid);
	fi_close(&av->fid);
	fi_close(&rxcq->fid);
	fi_close(&txcq->fid);
	fi_close(&domain->fid);
	fi_close(&fabric->fid);
	fi_freeinfo(info);
	printf("%s: %d failures\n", server ? "server" : "client", failures);
	return failures ? 1 : 0;
}
