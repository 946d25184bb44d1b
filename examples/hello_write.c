/* hello_write.c - the smallest libmrc-client program: two contexts on one
 * mrcd, one QP each, connected to each other in-process; context A writes
 * "hello" into B's buffer with RDMA Write-with-Immediate and B waits for the
 * receive completion. Usage: hello_write [SOCKET_A [SOCKET_B]]: A's context on
 * the daemon at SOCKET_A ($MRCD_SOCKET or /run/mrcd/mrcd.sock), B's on
 * SOCKET_B (default: the same daemon; two daemons joined by a fabric, as in
 * config/four-planes-memif-*.yaml, carry the write over the planes). */
#include <mrc_client.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                            \
	do {                                                                   \
		int rc_ = (call);                                              \
		if (rc_ < 0) {                                                 \
			fprintf(stderr, "%s: %s\n", #call, mrc_strerror(rc_));  \
			exit(1);                                               \
		}                                                              \
	} while (0)

/* Wait for one completion on @ctx; exit on error. */
static struct mrc_wc wait_one(struct mrc_ctx *ctx, const char *who)
{
	struct mrc_wc wc;

	for (;;) {
		int n = mrc_poll_cq(ctx, &wc, 1);

		if (n == 1)
			break;
		n = mrc_wait_cq(ctx, 5000);
		if (n == 0) {
			fprintf(stderr, "%s: no completion within 5 s\n", who);
			exit(1);
		}
		if (n < 0) {
			fprintf(stderr, "%s: %s (%s)\n", who, mrc_strerror(n), mrc_last_error(ctx));
			exit(1);
		}
	}
	if (wc.opcode == MRC_WC_QP_ERROR) { /* not a completion: the QP died, and why */
		fprintf(stderr, "%s: QP %u entered ERROR: %s\n", who, wc.qpn, mrc_qp_cause_str((uint8_t)wc.cause));
		exit(1);
	}
	if (wc.status != MRC_WC_SUCCESS) {
		fprintf(stderr, "%s: completion failed: %s\n", who, mrc_wc_status_str(wc.status));
		exit(1);
	}
	return wc;
}

int main(int argc, char **argv)
{
	struct mrc_open_attr attr = {.socket = argc > 1 ? argv[1] : NULL, .heap_bytes = 1 << 20,
				     .sq_depth = 64, .rq_depth = 64, .cq_depth = 64};
	struct mrc_open_attr attr_b;
	struct mrc_ctx *a, *b;
	struct mrc_mr src, dst;
	char reason[160], info_a[MRC_CONN_INFO_TEXT], info_b[MRC_CONN_INFO_TEXT];
	uint32_t qa, qb;
	int rc;

	/* 8< open */
	rc = mrc_open(&attr, &a, reason, sizeof(reason));
	if (rc < 0) {
		fprintf(stderr, "mrc_open: %s: %s\n", mrc_strerror(rc), reason);
		return 1;
	}
	attr_b = attr;
	if (argc > 2)
		attr_b.socket = argv[2];
	rc = mrc_open(&attr_b, &b, reason, sizeof(reason));
	if (rc < 0) {
		fprintf(stderr, "mrc_open: %s: %s\n", mrc_strerror(rc), reason);
		return 1;
	}
	/* >8 open */

	/* 8< memory: buffers come from the arena heap and are registered */
	char *sbuf = mrc_alloc(a, 4096, 0);
	char *dbuf = mrc_alloc(b, 4096, 0);

	if (sbuf == NULL || dbuf == NULL) {
		fprintf(stderr, "mrc_alloc: %s\n", mrc_last_error(sbuf ? b : a));
		return 1;
	}
	memset(dbuf, 0, 4096);
	strcpy(sbuf, "hello");
	CHECK(mrc_reg_mr(a, sbuf, 4096, MRC_ACCESS_LOCAL_WRITE, &src));
	CHECK(mrc_reg_mr(b, dbuf, 4096, MRC_ACCESS_LOCAL_WRITE | MRC_ACCESS_REMOTE_WRITE, &dst));
	/* >8 memory */

	/* 8< connect: the info strings would normally travel out of band */
	CHECK(mrc_qp_create(a, NULL, &qa));
	CHECK(mrc_qp_create(b, NULL, &qb));
	CHECK(mrc_qp_info_text(a, qa, info_a));
	CHECK(mrc_qp_info_text(b, qb, info_b));
	CHECK(mrc_qp_connect_text(a, qa, info_b));
	CHECK(mrc_qp_connect_text(b, qb, info_a));
	/* >8 connect */

	/* 8< write: B posts a receive for the immediate, A writes */
	uint64_t recv_id = 1;
	struct mrc_sge sge = {.addr = sbuf, .len = 6, .lkey = src.lkey};
	struct mrc_send_wr wr = {.wr_id = 2, .opcode = MRC_WR_WRITE_IMM, .flags = MRC_WR_SIGNALED,
				 .imm = 0x1234, .sg_list = &sge, .num_sge = 1,
				 .remote_addr = dst.va, .rkey = dst.rkey};

	CHECK(mrc_post_recv(b, qb, &recv_id, 1));
	if (mrc_post_send(a, qa, &wr, 1) != 1) {
		fprintf(stderr, "mrc_post_send: %s\n", mrc_last_error(a));
		return 1;
	}
	struct mrc_wc wc = wait_one(b, "receiver");

	printf("B received %u bytes, imm 0x%x: \"%s\"\n", wc.byte_len, wc.imm, dbuf);
	wait_one(a, "sender");
	printf("A's write completed\n");
	/* >8 write */

	int ok = strcmp(dbuf, "hello") == 0; /* dbuf lives in B's arena: read it before closing */

	mrc_close(a); /* destroys the QPs; the daemon frees the rest */
	mrc_close(b);
	return ok ? 0 : 1;
}
