/* pd_attack.c - one tenant tries to write another's memory (D67, D68).
 *
 *   pd_attack SOCKET_A SOCKET_B
 *
 * Four libmrc-client contexts: on daemon B the victim Y and the attacker X,
 * on daemon A Y's peer W and X's partner Z. Y registers a 4 KiB buffer with
 * remote-write access and has one QP, connected to W. X and Z have QPs of
 * their own, connected to each other (legitimately: a first write from Z
 * into X's buffer succeeds). Z then writes to Y's buffer through X's QPs
 * with every key and address it can form - Y's exact rkey and VA (handed
 * over out of band, here in-process), nearby offsets, the keys next to Y's,
 * Y's key with each bit flipped, the keys the old slot << 8 | generation
 * scheme would have given, X's own key with Y's VA - one fresh QP pair per
 * try, since the first refused write ends the QP. X also posts a send whose
 * SGE names Y's lkey (reading Y's bytes out to Z).
 *
 * Afterwards Y and W complete a Write-with-Immediate each way. Prints one
 * JSON object (the test's verdicts are computed from it by pd_attack.sh)
 * and exits 0 if it ran to the end, whatever it found; 2 on a setup error.
 */
#include <mrc_client.h>

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BUF 4096
#define BATCH 16               /* QP pairs at once (limits.per_client.max_qps is 64) */
#define WAIT_MS 10000          /* a completion that takes longer is a timeout */
#define MAX_TRIES 256

static const char *sock_a, *sock_b;

#define DIE(...)                                                               \
	do {                                                                   \
		fprintf(stderr, "pd_attack: " __VA_ARGS__);                    \
		fputc('\n', stderr);                                           \
		exit(2);                                                       \
	} while (0)
#define CK(ctx, call)                                                          \
	do {                                                                   \
		int rc_ = (call);                                              \
		if (rc_ < 0)                                                   \
			DIE("%s: %s (%s)", #call, mrc_strerror(rc_), mrc_last_error(ctx)); \
	} while (0)

struct tenant {
	const char *name;
	struct mrc_ctx *ctx;
	uint8_t *buf;
	struct mrc_mr mr;
	unsigned qp_errors; /* MRC_WC_QP_ERROR entries seen (D70), not returned by collect() */
};

static void tenant_open(struct tenant *t, const char *name, const char *sock, uint8_t fill)
{
	struct mrc_open_attr a = {.socket = sock, .heap_bytes = 1 << 20,
				  .sq_depth = 64, .rq_depth = 64, .cq_depth = 256};
	char reason[200];
	int rc;

	t->name = name;
	rc = mrc_open(&a, &t->ctx, reason, sizeof(reason));
	if (rc < 0)
		DIE("%s: mrc_open %s: %s: %s", name, sock, mrc_strerror(rc), reason);
	t->buf = mrc_alloc(t->ctx, BUF, 0);
	if (!t->buf)
		DIE("%s: mrc_alloc: %s", name, mrc_last_error(t->ctx));
	memset(t->buf, fill, BUF);
	CK(t->ctx, mrc_reg_mr(t->ctx, t->buf, BUF, MRC_ACCESS_LOCAL_WRITE | MRC_ACCESS_REMOTE_WRITE, &t->mr));
}

/* Connect a fresh QP of @p to a fresh QP of @q. */
static void pair(struct tenant *p, uint32_t *qp_p, struct tenant *q, uint32_t *qp_q)
{
	uint8_t ip[MRC_CONN_INFO_BYTES], iq[MRC_CONN_INFO_BYTES];

	CK(p->ctx, mrc_qp_create(p->ctx, NULL, qp_p));
	CK(q->ctx, mrc_qp_create(q->ctx, NULL, qp_q));
	CK(p->ctx, mrc_qp_info(p->ctx, *qp_p, ip));
	CK(q->ctx, mrc_qp_info(q->ctx, *qp_q, iq));
	CK(p->ctx, mrc_qp_connect(p->ctx, *qp_p, iq));
	CK(q->ctx, mrc_qp_connect(q->ctx, *qp_q, ip));
}

static uint64_t ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Take work completions of @t until @n arrived or WAIT_MS passed; a QP's
 * own error entry (MRC_WC_QP_ERROR, D70: it follows the completions its
 * work failed with) is counted in t->qp_errors and not returned. @return
 * how many arrived (in @wc). */
static unsigned collect(struct tenant *t, struct mrc_wc *wc, unsigned n)
{
	uint64_t end = ms_now() + WAIT_MS;
	unsigned got = 0;

	while (got < n) {
		struct mrc_wc in[16];
		int k = mrc_poll_cq(t->ctx, in, n - got < 16 ? n - got : 16);
		uint64_t now = ms_now();

		if (k > 0) {
			for (int i = 0; i < k; i++)
				if (in[i].opcode == MRC_WC_QP_ERROR)
					t->qp_errors++;
				else
					wc[got++] = in[i];
			continue;
		}
		if (now >= end)
			break;
		k = mrc_wait_cq(t->ctx, (int)(end - now));
		if (k < 0)
			DIE("%s: mrc_wait_cq: %s", t->name, mrc_strerror(k));
	}
	return got;
}

/* Count @t's QP-error entries until @want were seen or WAIT_MS passed
 * (the last ones follow the last completions); any work completion here
 * is unexpected and counted in *@stray. */
static void drain_errors(struct tenant *t, unsigned want, unsigned *stray)
{
	uint64_t end = ms_now() + WAIT_MS;
	struct mrc_wc wc[16];

	for (;;) {
		int k = mrc_poll_cq(t->ctx, wc, 16);
		uint64_t now = ms_now();

		for (int i = 0; i < k; i++)
			if (wc[i].opcode == MRC_WC_QP_ERROR)
				t->qp_errors++;
			else
				(*stray)++;
		if (k > 0)
			continue;
		if (t->qp_errors >= want || now >= end)
			return;
		if (mrc_wait_cq(t->ctx, (int)(end - now)) < 0)
			return;
	}
}

static int post_write(struct tenant *t, uint32_t qpn, uint64_t wr_id, void *src, uint32_t len,
		      uint32_t lkey, uint64_t va, uint32_t rkey, bool imm, uint32_t immv)
{
	struct mrc_sge sge = {.addr = src, .len = len, .lkey = lkey};
	struct mrc_send_wr wr = {.wr_id = wr_id, .opcode = imm ? MRC_WR_WRITE_IMM : MRC_WR_WRITE,
				 .flags = MRC_WR_SIGNALED, .imm = immv, .sg_list = &sge, .num_sge = 1,
				 .remote_addr = va, .rkey = rkey};

	return mrc_post_send(t->ctx, qpn, &wr, 1);
}

/* One legitimate Write-with-Immediate from @s into @r's buffer (offset
 * @off): both sides' completions succeed and the bytes land. */
static bool legit(struct tenant *s, uint32_t qs, struct tenant *r, uint32_t qr, uint32_t off, uint8_t tag)
{
	struct mrc_wc wc[4];
	uint64_t rid = 0x5151;

	memset(s->buf + off, tag, 256);
	if (mrc_post_recv(r->ctx, qr, &rid, 1) != 1)
		return false;
	if (post_write(s, qs, 0x77, s->buf + off, 256, s->mr.lkey, r->mr.va + off, r->mr.rkey, true, tag) != 1)
		return false;
	if (collect(s, wc, 1) != 1 || wc[0].status != MRC_WC_SUCCESS)
		return false;
	if (collect(r, wc + 1, 1) != 1 || wc[1].status != MRC_WC_SUCCESS ||
	    wc[1].opcode != MRC_WC_RECV_WRITE_IMM || wc[1].imm != tag)
		return false;
	for (unsigned i = 0; i < 256; i++)
		if (r->buf[off + i] != tag)
			return false;
	return true;
}

struct try {
	const char *kind;
	uint64_t va;
	uint32_t rkey;
};

int main(int argc, char **argv)
{
	struct tenant y = {0}, w = {0}, x = {0}, z = {0};
	static uint8_t want[BUF];
	static struct try tries[MAX_TRIES];
	unsigned n = 0, status_count[8] = {0}, timeouts = 0, wrong_qp = 0, batches = 0;
	uint32_t qy, qw, qx0, qz0;
	struct mrc_wc wc[BATCH + 4];
	bool legit_before, after_wy, after_yw;
	unsigned changed = 0, y_cqes = 0, z_changed = 0;
	int exfil_status = -1;

	if (argc != 3)
		DIE("usage: pd_attack SOCKET_A SOCKET_B");
	sock_a = argv[1];
	sock_b = argv[2];
	tenant_open(&y, "Y", sock_b, 0x5A);
	tenant_open(&w, "W", sock_a, 0x00);
	tenant_open(&x, "X", sock_b, 0x00);
	tenant_open(&z, "Z", sock_a, 0xEE);
	for (unsigned i = 0; i < BUF; i++)
		y.buf[i] = want[i] = (uint8_t)(i * 131 + 7);
	pair(&y, &qy, &w, &qw);

	/* the attacker's own connection works: Z writes X's buffer */
	pair(&x, &qx0, &z, &qz0);
	legit_before = post_write(&z, qz0, 1, z.buf, 64, z.mr.lkey, x.mr.va, x.mr.rkey, false, 0) == 1 &&
		       collect(&z, wc, 1) == 1 && wc[0].status == MRC_WC_SUCCESS && x.buf[0] == 0xEE && x.buf[63] == 0xEE;

	/* every key and address the attacker can form */
#define TRY(k, v, r) (tries[n++] = (struct try){(k), (v), (r)})
	TRY("exact rkey and va", y.mr.va, y.mr.rkey);
	TRY("exact rkey, va+64", y.mr.va + 64, y.mr.rkey);
	TRY("exact rkey, last 64 bytes", y.mr.va + BUF - 64, y.mr.rkey);
	for (int d = -8; d <= 8; d++)
		if (d != 0)
			TRY("rkey next to the victim's", y.mr.va, y.mr.rkey + (uint32_t)d);
	for (unsigned b = 0; b < 32; b++)
		TRY("victim's rkey with one bit flipped", y.mr.va, y.mr.rkey ^ (1u << b));
	for (uint32_t slot = 0; slot < 32; slot++)
		for (uint32_t gen = 1; gen <= 2; gen++)
			TRY("slot << 8 | generation (the old scheme)", y.mr.va, slot << 8 | gen);
	TRY("attacker's own rkey, victim's va", y.mr.va, x.mr.rkey);
	for (int d = -4; d <= 4; d++)
		if (d != 0)
			TRY("rkey next to the attacker's", y.mr.va, x.mr.rkey + (uint32_t)d);
	TRY("exact rkey, va of the attacker's buffer", x.mr.va, y.mr.rkey);

	/* one fresh QP pair per try, BATCH at a time */
	for (unsigned base = 0; base < n; base += BATCH) {
		unsigned k = n - base < BATCH ? n - base : BATCH, got;
		uint32_t qx[BATCH], qz[BATCH];

		for (unsigned i = 0; i < k; i++)
			pair(&x, &qx[i], &z, &qz[i]);
		for (unsigned i = 0; i < k; i++)
			if (post_write(&z, qz[i], base + i, z.buf, 64, z.mr.lkey, tries[base + i].va,
				       tries[base + i].rkey, false, 0) != 1)
				DIE("Z: mrc_post_send: %s", mrc_last_error(z.ctx));
		got = collect(&z, wc, k);
		timeouts += k - got;
		for (unsigned i = 0; i < got; i++) {
			uint64_t t = wc[i].wr_id;

			if (t < base || t >= base + k || wc[i].qpn != qz[t - base]) {
				wrong_qp++;
				continue;
			}
			status_count[wc[i].status < 8 ? wc[i].status : 7]++;
			if (wc[i].status != MRC_WC_REM_ACCESS_ERR)
				fprintf(stderr, "pd_attack: try %" PRIu64 " (%s, rkey 0x%08x, va 0x%" PRIx64 "): %s\n",
					t, tries[t].kind, tries[t].rkey, tries[t].va, mrc_wc_status_str(wc[i].status));
		}
		for (unsigned i = 0; i < k; i++) {
			CK(x.ctx, mrc_qp_destroy(x.ctx, qx[i]));
			CK(z.ctx, mrc_qp_destroy(z.ctx, qz[i]));
		}
		batches++;
	}

	/* every attacked QP of Z said it entered ERROR (D70) */
	drain_errors(&z, n, &wrong_qp);

	/* X reads Y's bytes out: an SGE with Y's lkey (over a fresh pair) */
	{
		uint32_t qx, qz;

		pair(&x, &qx, &z, &qz);
		memset(z.buf, 0xEE, BUF);
		if (post_write(&x, qx, 9, x.buf, 64, y.mr.lkey, z.mr.va, z.mr.rkey, false, 0) == 1 &&
		    collect(&x, wc, 1) == 1)
			exfil_status = wc[0].status;
		for (unsigned i = 0; i < BUF; i++)
			z_changed += z.buf[i] != 0xEE;
		CK(x.ctx, mrc_qp_destroy(x.ctx, qx));
		CK(z.ctx, mrc_qp_destroy(z.ctx, qz));
	}

	for (unsigned i = 0; i < BUF; i++)
		changed += y.buf[i] != want[i];
	while (mrc_poll_cq(y.ctx, wc, 4) > 0)
		y_cqes++;

	/* Y's QP and session are untouched: a legitimate write each way */
	after_wy = legit(&w, qw, &y, qy, 1024, 0x3C);
	after_yw = legit(&y, qy, &w, qw, 2048, 0x4D);

	printf("{\"tries\": %u, \"batches\": %u, \"rem_access_err\": %u, \"success\": %u, \"loc_prot_err\": %u, "
	       "\"retry_exc_err\": %u, \"flush_err\": %u, \"general_err\": %u, \"timeouts\": %u, \"wrong_qp\": %u, "
	       "\"victim_bytes_changed\": %u, \"victim_cqes_during_attack\": %u, "
	       "\"exfil_status\": %d, \"exfil_status_str\": \"%s\", \"exfil_bytes_leaked\": %u, "
	       "\"legit_before\": %s, \"legit_after_w_to_y\": %s, \"legit_after_y_to_w\": %s, "
	       "\"qp_error_entries_z\": %u, \"qp_error_entries_x\": %u}\n",
	       n, batches, status_count[MRC_WC_REM_ACCESS_ERR], status_count[MRC_WC_SUCCESS],
	       status_count[MRC_WC_LOC_PROT_ERR], status_count[MRC_WC_RETRY_EXC_ERR], status_count[MRC_WC_FLUSH_ERR],
	       status_count[MRC_WC_GENERAL_ERR], timeouts, wrong_qp, changed, y_cqes,
	       exfil_status, exfil_status < 0 ? "none" : mrc_wc_status_str((uint8_t)exfil_status), z_changed,
	       legit_before ? "true" : "false", after_wy ? "true" : "false", after_yw ? "true" : "false",
	       z.qp_errors, x.qp_errors);
	mrc_close(x.ctx);
	mrc_close(z.ctx);
	mrc_close(y.ctx);
	mrc_close(w.ctx);
	return 0;
}
