/* pingpong.c - Write-with-Immediate ping-pong between two libmrc-client
 * contexts on one mrcd, in one thread: A writes a message into B, B answers
 * into A, N times; prints the average round-trip time.
 *
 *   pingpong [-s socket] [-n iterations] [-b bytes] [-w]
 *
 * -w blocks in mrc_wait_cq instead of busy-polling. Needs a running mrcd. */
#define _GNU_SOURCE
#include <mrc_client.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct side {
	const char *name;
	struct mrc_ctx *ctx;
	uint32_t qpn;
	char *buf;
	struct mrc_mr mr;
	char info[MRC_CONN_INFO_TEXT];
};

static void die(const char *what, struct mrc_ctx *ctx, int rc)
{
	fprintf(stderr, "%s: %s%s%s\n", what, mrc_strerror(rc), ctx ? ": " : "",
		ctx ? mrc_last_error(ctx) : "");
	exit(1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void setup(struct side *s, const struct mrc_open_attr *attr, size_t bytes)
{
	char reason[160];
	int rc = mrc_open(attr, &s->ctx, reason, sizeof(reason));

	if (rc < 0) {
		fprintf(stderr, "mrc_open: %s: %s\n", mrc_strerror(rc), reason);
		exit(1);
	}
	s->buf = mrc_alloc(s->ctx, bytes, 0);
	if (s->buf == NULL)
		die("mrc_alloc", s->ctx, -12);
	memset(s->buf, 0, bytes);
	rc = mrc_reg_mr(s->ctx, s->buf, bytes, MRC_ACCESS_LOCAL_WRITE | MRC_ACCESS_REMOTE_WRITE, &s->mr);
	if (rc < 0)
		die("mrc_reg_mr", s->ctx, rc);
	if ((rc = mrc_qp_create(s->ctx, NULL, &s->qpn)) < 0)
		die("mrc_qp_create", s->ctx, rc);
	if ((rc = mrc_qp_info_text(s->ctx, s->qpn, s->info)) < 0)
		die("mrc_qp_info_text", s->ctx, rc);
}

/* Take completions on @s until a receive arrives; sends completions are
 * counted in *sends. */
static struct mrc_wc wait_recv(struct side *s, bool block, unsigned *sends)
{
	struct mrc_wc wc[8];

	for (;;) {
		int n = mrc_poll_cq(s->ctx, wc, 8);

		for (int i = 0; i < n; i++) {
			if (wc[i].opcode == MRC_WC_QP_ERROR) { /* the QP died: why */
				fprintf(stderr, "%s: QP %u entered ERROR: %s\n", s->name, wc[i].qpn,
					mrc_qp_cause_str((uint8_t)wc[i].cause));
				exit(1);
			}
			if (wc[i].status != MRC_WC_SUCCESS) {
				fprintf(stderr, "%s: completion: %s\n", s->name, mrc_wc_status_str(wc[i].status));
				exit(1);
			}
			if (wc[i].opcode == MRC_WC_WRITE) {
				(*sends)++;
				continue;
			}
			/* more than one receive can't be outstanding in ping-pong */
			return wc[i];
		}
		if (n == 0 && block) {
			int rc = mrc_wait_cq(s->ctx, 5000);

			if (rc == 0) {
				fprintf(stderr, "%s: no completion within 5 s\n", s->name);
				exit(1);
			}
			if (rc < 0)
				die("mrc_wait_cq", s->ctx, rc);
		}
	}
}

static void post_write(struct side *from, const struct side *to, uint32_t imm, size_t bytes, bool signaled)
{
	struct mrc_sge sge = {.addr = from->buf, .len = (uint32_t)bytes, .lkey = from->mr.lkey};
	struct mrc_send_wr wr = {.wr_id = imm, .opcode = MRC_WR_WRITE_IMM,
				 .flags = signaled ? MRC_WR_SIGNALED : 0, .imm = imm,
				 .sg_list = &sge, .num_sge = 1,
				 .remote_addr = to->mr.va, .rkey = to->mr.rkey};
	int rc;

	while ((rc = mrc_post_send(from->ctx, from->qpn, &wr, 1)) == 0)
		; /* send ring full: the daemon drains it */
	if (rc < 0)
		die("mrc_post_send", from->ctx, rc);
}

static void post_recv(struct side *s, uint64_t id)
{
	int rc = mrc_post_recv(s->ctx, s->qpn, &id, 1);

	if (rc != 1)
		die("mrc_post_recv", s->ctx, rc < 0 ? rc : -11);
}

int main(int argc, char **argv)
{
	struct mrc_open_attr attr = {.heap_bytes = 1 << 20, .sq_depth = 256, .rq_depth = 256, .cq_depth = 512};
	struct side a = {.name = "A"}, b = {.name = "B"};
	unsigned iters = 10000, sends = 0;
	size_t bytes = 64;
	bool block = false;
	int opt, rc;

	struct mrc_open_attr attr_b;
	const char *sock_b = NULL;

	while ((opt = getopt(argc, argv, "s:S:n:b:w")) != -1) {
		switch (opt) {
		case 's': attr.socket = optarg; break;
		case 'S': sock_b = optarg; break;
		case 'n': iters = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'b': bytes = strtoul(optarg, NULL, 0); break;
		case 'w': block = true; break;
		default:
			fprintf(stderr, "usage: %s [-s socket] [-S socket-of-B] [-n iterations] [-b bytes] [-w]\n", argv[0]);
			return 2;
		}
	}
	if (iters == 0 || bytes == 0 || bytes > 65536) {
		fprintf(stderr, "need -n >= 1 and 1 <= -b <= 65536\n");
		return 2;
	}
	attr_b = attr;
	if (sock_b)
		attr_b.socket = sock_b; /* B on another daemon: the pings cross the fabric */
	setup(&a, &attr, bytes);
	setup(&b, &attr_b, bytes);
	if ((rc = mrc_qp_connect_text(a.ctx, a.qpn, b.info)) < 0)
		die("mrc_qp_connect_text", a.ctx, rc);
	if ((rc = mrc_qp_connect_text(b.ctx, b.qpn, a.info)) < 0)
		die("mrc_qp_connect_text", b.ctx, rc);

	/* Every 64th write is signalled so the send ring's slots come back
	 * to the daemon's accounting without a completion per message. */
	post_recv(&a, 0);
	post_recv(&b, 0);
	uint64_t t0 = now_ns();

	for (unsigned i = 1; i <= iters; i++) {
		bool sig = i % 64 == 0;

		post_write(&a, &b, i, bytes, sig);
		struct mrc_wc wc = wait_recv(&b, block, &sends);

		if (wc.imm != i) {
			fprintf(stderr, "B: immediate %u, expected %u\n", wc.imm, i);
			return 1;
		}
		post_recv(&b, i);
		post_write(&b, &a, i, bytes, sig);
		wc = wait_recv(&a, block, &sends);
		if (wc.imm != i) {
			fprintf(stderr, "A: immediate %u, expected %u\n", wc.imm, i);
			return 1;
		}
		post_recv(&a, i);
	}
	uint64_t dt = now_ns() - t0;

	printf("%u round trips of %zu bytes: average RTT %.2f us (%s)\n", iters, bytes,
	       (double)dt / iters / 1000.0, block ? "blocking" : "busy-polling");
	mrc_close(a.ctx);
	mrc_close(b.ctx);
	return 0;
}
