/* qp_errors.c - D70 end to end through a real mrcd: two contexts (on one
 * daemon or two), a QP each, connected; A writes with immediate to B, which
 * posted no receive. Checks, each with a deadline (never a hang):
 *   - B, with nothing outstanding, gets a QP_ERROR entry, cause NO_RECV,
 *     naming the message (length, MSN);
 *   - A's send completes with REM_INV_REQ_ERR, then a QP_ERROR entry with
 *     cause REMOTE_INVALID;
 *   - mrc_qp_query on each reads the same back (B: the immediate too);
 *   - a receive posted afterwards completes with FLUSH_ERR;
 *   - the daemon answers qp_query only for the caller's own QPs: A's
 *     session asking for B's QPN gets ENOENT (sent past the library's own
 *     check, which would refuse it first).
 * Usage: qp_errors SOCKET_A [SOCKET_B]. Prints "ok"/"FAIL" lines and exits
 * 0 only if every check passed. */
#include "client_internal.h"
#include "mrc_client.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fails;

static void __attribute__((format(printf, 2, 3))) check(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s ", ok ? "ok  " : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	fails += !ok;
}

static void die(const char *what, struct mrc_ctx *ctx, int rc)
{
	printf("FAIL %s: %s (%s)\n", what, mrc_strerror(rc), ctx ? mrc_last_error(ctx) : "");
	exit(1);
}

/* The next CQ entry of @ctx within @ms, or opcode 0xff if none came. */
static struct mrc_wc next_wc(struct mrc_ctx *ctx, int ms)
{
	struct mrc_wc wc;
	uint64_t deadline = mrc__now_ns() + (uint64_t)ms * 1000000u;

	for (;;) {
		int n = mrc_poll_cq(ctx, &wc, 1);

		if (n == 1)
			return wc;
		int64_t left = (int64_t)(deadline - mrc__now_ns());

		if (left <= 0 || mrc_wait_cq(ctx, (int)(left / 1000000 + 1)) < 0) {
			memset(&wc, 0, sizeof(wc));
			wc.opcode = 0xff;
			return wc;
		}
	}
}

int main(int argc, char **argv)
{
	struct mrc_open_attr attr = {.heap_bytes = 1 << 20, .sq_depth = 64, .rq_depth = 64, .cq_depth = 64,
				     .timeout_ms = 10000};
	struct mrc_ctx *a, *b;
	struct mrc_mr src, dst;
	struct mrc_qp_status st;
	char reason[160], info_a[MRC_CONN_INFO_TEXT], info_b[MRC_CONN_INFO_TEXT];
	uint32_t qa, qb;
	int rc;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: qp_errors SOCKET_A [SOCKET_B]\n");
		return 2;
	}
	attr.socket = argv[1];
	if ((rc = mrc_open(&attr, &a, reason, sizeof(reason))) < 0) {
		printf("FAIL mrc_open A: %s: %s\n", mrc_strerror(rc), reason);
		return 1;
	}
	attr.socket = argc > 2 ? argv[2] : argv[1];
	if ((rc = mrc_open(&attr, &b, reason, sizeof(reason))) < 0) {
		printf("FAIL mrc_open B: %s: %s\n", mrc_strerror(rc), reason);
		return 1;
	}
	char *sbuf = mrc_alloc(a, 4096, 0), *dbuf = mrc_alloc(b, 4096, 0);

	if (!sbuf || !dbuf)
		die("mrc_alloc", sbuf ? b : a, -ENOMEM);
	memset(sbuf, 0x5a, 4096);
	if ((rc = mrc_reg_mr(a, sbuf, 4096, MRC_ACCESS_LOCAL_WRITE, &src)) < 0)
		die("mrc_reg_mr A", a, rc);
	if ((rc = mrc_reg_mr(b, dbuf, 4096, MRC_ACCESS_LOCAL_WRITE | MRC_ACCESS_REMOTE_WRITE, &dst)) < 0)
		die("mrc_reg_mr B", b, rc);
	if ((rc = mrc_qp_create(a, NULL, &qa)) < 0 || (rc = mrc_qp_info_text(a, qa, info_a)) < 0)
		die("QP A", a, rc);
	if ((rc = mrc_qp_create(b, NULL, &qb)) < 0 || (rc = mrc_qp_info_text(b, qb, info_b)) < 0)
		die("QP B", b, rc);
	if ((rc = mrc_qp_connect_text(a, qa, info_b)) < 0)
		die("connect A", a, rc);
	if ((rc = mrc_qp_connect_text(b, qb, info_a)) < 0)
		die("connect B", b, rc);
	rc = mrc_qp_query(b, qb, &st);
	check(rc == 0 && st.state == MRC_QPS_RTS && st.err_cause == MRC_QP_CAUSE_NONE,
	      "a connected QP: RTS, no cause (rc %d, state %u, cause %u)", rc, st.state, st.err_cause);

	/* A writes 64 bytes with immediate; B posted no receive */
	struct mrc_sge sge = {.addr = sbuf, .len = 64, .lkey = src.lkey};
	struct mrc_send_wr wr = {.wr_id = 7, .opcode = MRC_WR_WRITE_IMM, .flags = MRC_WR_SIGNALED,
				 .imm = 0x5151, .sg_list = &sge, .num_sge = 1,
				 .remote_addr = dst.va, .rkey = dst.rkey};

	if (mrc_post_send(a, qa, &wr, 1) != 1)
		die("mrc_post_send", a, -EIO);

	struct mrc_wc wc = next_wc(b, 10000);

	check(wc.opcode == MRC_WC_QP_ERROR && wc.qpn == qb && wc.cause == MRC_QP_CAUSE_NO_RECV &&
		      wc.status == MRC_WC_REM_INV_REQ_ERR && wc.byte_len == 64 && wc.msn == 0 && wc.wr_id == 0,
	      "receiver with nothing outstanding: a QP_ERROR entry, cause NO_RECV, 64 bytes, MSN 0 "
	      "(opcode %u qpn %u cause %u status %u len %u msn %u)",
	      wc.opcode, wc.qpn, wc.cause, wc.status, wc.byte_len, wc.msn);
	wc = next_wc(a, 10000);
	check(wc.opcode == MRC_WC_WRITE && wc.wr_id == 7 && wc.status == MRC_WC_REM_INV_REQ_ERR,
	      "sender: its send completes with REM_INV_REQ_ERR (opcode %u wr_id %" PRIu64 " status %u: %s)",
	      wc.opcode, wc.wr_id, wc.status, mrc_wc_status_str(wc.status));
	wc = next_wc(a, 10000);
	check(wc.opcode == MRC_WC_QP_ERROR && wc.qpn == qa && wc.cause == MRC_QP_CAUSE_REMOTE_INVALID,
	      "sender: then a QP_ERROR entry, cause REMOTE_INVALID (opcode %u cause %u: %s)",
	      wc.opcode, wc.cause, mrc_qp_cause_str((uint8_t)wc.cause));

	rc = mrc_qp_query(b, qb, &st);
	check(rc == 0 && st.state == MRC_QPS_ERROR && st.err_cause == MRC_QP_CAUSE_NO_RECV &&
		      st.err_status == MRC_WC_REM_INV_REQ_ERR && st.err_imm == 0x5151 && st.err_byte_len == 64,
	      "mrc_qp_query(B): ERROR, NO_RECV, imm 0x5151, 64 bytes (rc %d state %u cause %u imm 0x%x: %s)",
	      rc, st.state, st.err_cause, st.err_imm, st.err_reason);
	rc = mrc_qp_query(a, qa, &st);
	check(rc == 0 && st.state == MRC_QPS_ERROR && st.err_cause == MRC_QP_CAUSE_REMOTE_INVALID,
	      "mrc_qp_query(A): ERROR, REMOTE_INVALID (rc %d state %u cause %u: %s)", rc, st.state,
	      st.err_cause, st.err_reason);

	uint64_t late = 9;

	check(mrc_post_recv(b, qb, &late, 1) == 1, "a receive posted on the dead QP is accepted by the ring");
	wc = next_wc(b, 10000);
	check(wc.opcode == MRC_WC_RECV_WRITE_IMM && wc.wr_id == 9 && wc.status == MRC_WC_FLUSH_ERR,
	      "and completes with FLUSH_ERR (opcode %u wr_id %" PRIu64 " status %u)", wc.opcode, wc.wr_id,
	      wc.status);

	/* the daemon's own check: A's session asks about B's QPN */
	char args[48];
	int res;

	snprintf(args, sizeof(args), "{\"qpn\":%u}", qb);
	pthread_mutex_lock(&a->lock);
	rc = mrc__ctl_request(a, "qp_query", args, &res);
	pthread_mutex_unlock(&a->lock);
	check(rc == -ENOENT, "qp_query of another session's QP: ENOENT (rc %d: %s)", rc, mrc_last_error(a));

	mrc_close(a);
	mrc_close(b);
	printf("%d failed\n", fails);
	return fails ? 1 : 0;
}
