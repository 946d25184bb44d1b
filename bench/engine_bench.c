/* engine_bench.c - push N data packets through two engines joined by a
 * zero-delay, lossless, frame-less link and report packets per second.
 * Sender, receiver, SACK and AETH work is all counted; the payload copy is
 * not (place_payload = false, and the link copies only headers). Used by
 * scripts/bench/engine.sh, which also runs it under callgrind for
 * instructions per delivered packet.
 *
 *   engine_bench [packets] [payload bytes]     (default 10000000 4096)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mrcp_engine.h"
#include "mrcp_wire.h"

#define BURST 32
#define MSG (64u * 1024)

struct slot {
	uint8_t data[MRCP_TX_HDR_MAX + MRCP_PAYLOAD_MAX + 4];
};

static void die(const char *what, int rc)
{
	fprintf(stderr, "engine_bench: %s failed: %d\n", what, rc);
	exit(1);
}

static void ip(struct mrcp_ip *a, int node)
{
	memset(a, 0, sizeof(*a));
	a->family = 6;
	a->a[0] = 0xfd;
	a->a[15] = (uint8_t)(node + 1);
}

int main(int argc, char **argv)
{
	uint64_t target = argc > 1 ? strtoull(argv[1], NULL, 0) : 10000000ull;
	uint32_t payload = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 0) : 4096;
	struct mrcp_engine *e[2];
	uint32_t qpn[2], lkey[2], rkey[2];
	static struct slot slots[2][BURST];
	struct mrcp_tx tx[BURST];
	struct mrcp_rx rx[BURST];
	struct mrcp_conn_info ci[2];
	uint8_t *buf[2];
	uint64_t now = 0, posted = 0, done = 0;
	struct mrcp_qp_info qi;
	struct timespec t0, t1;
	int rc;

	if (payload != 1024 && payload != 2048 && payload != 4096) {
		fprintf(stderr, "payload must be an MTU: 1024, 2048 or 4096\n");
		return 2;
	}
	for (int n = 0; n < 2; n++) {
		struct mrcp_engine_config c;
		struct mrcp_qp_attr a = {0};

		mrcp_engine_config_defaults(&c);
		c.seed = 7 + (uint64_t)n;
		c.n_ports = 4;
		ip(&c.node_addr, n);
		c.mtu = (uint16_t)payload;
		c.place_payload = false;
		c.cc_params.fixed_cwnd = 1u << 20;
		memcpy(c.cc, "fixed", 6);
		if ((rc = mrcp_engine_create(&c, &e[n])) != 0)
			die("engine_create", rc);
		buf[n] = calloc(1, 16 * MSG);
		if ((rc = mrcp_mr_reg(e[n], (uint64_t)(uintptr_t)buf[n], 16 * MSG, buf[n],
				      MRCP_ACCESS_LOCAL_WRITE | MRCP_ACCESS_REMOTE_WRITE, &lkey[n], &rkey[n])) != 0)
			die("mr_reg", rc);
		if ((rc = mrcp_qp_create(e[n], &a, &qpn[n])) != 0)
			die("qp_create", rc);
		mrcp_qp_local_info(e[n], qpn[n], &ci[n]);
	}
	for (int n = 0; n < 2; n++)
		if ((rc = mrcp_qp_connect(e[n], qpn[n], &ci[1 - n], 0)) != 0)
			die("qp_connect", rc);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct mrcp_wc wc[64];
		unsigned k;

		mrcp_qp_info(e[1], qpn[1], &qi);
		if (qi.c.rx_data_pkts >= target)
			break;
		/* keep 16 messages in flight */
		while (posted - done < 16) {
			struct mrcp_sge sge = {.addr = (uint64_t)(uintptr_t)buf[0] + (posted % 16) * MSG, .len = MSG, .lkey = lkey[0]};
			struct mrcp_send_wr wr = {.wr_id = posted, .opcode = MRCP_WR_WRITE, .flags = MRCP_WR_SIGNALED,
						  .sg_list = &sge, .num_sge = 1,
						  .remote_addr = (uint64_t)(uintptr_t)buf[1] + (posted % 16) * MSG, .rkey = rkey[1]};
			if ((rc = mrcp_qp_post_send(e[0], qpn[0], &wr, now)) != 0)
				die("post_send", rc);
			posted++;
		}
		now += 100; /* 100 ns per loop: the link has no delay */
		for (int n = 0; n < 2; n++) {
			unsigned m = mrcp_poll(e[n], now, tx, BURST);
			for (unsigned i = 0; i < m; i++) {
				/* headers only: the payload bytes are left as they are */
				memcpy(slots[n][i].data, tx[i].hdr, tx[i].hdr_len);
				memset(&rx[i], 0, sizeof(rx[i]));
				rx[i].data = slots[n][i].data;
				rx[i].len = tx[i].hdr_len + tx[i].payload_len + tx[i].pad;
				rx[i].port = tx[i].port;
				rx[i].ev = tx[i].ev;
				rx[i].ecn = tx[i].ecn;
				ip(&rx[i].src, n);
			}
			if (m)
				mrcp_rx_burst(e[1 - n], rx, m, now);
		}
		while ((k = mrcp_poll_cq(e[0], wc, 64)) != 0) {
			for (unsigned i = 0; i < k; i++)
				if (wc[i].status != MRCP_WC_SUCCESS)
					die("completion", wc[i].status);
			done += k;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	mrcp_qp_info(e[0], qpn[0], &qi);
	printf("packets %llu payload %u B: %.3f s, %.2f Mpps, %.1f Gb/s of payload (no copy), retransmits %llu\n",
	       (unsigned long long)target, payload, secs, (double)target / secs / 1e6,
	       (double)target * payload * 8 / secs / 1e9,
	       (unsigned long long)(qi.c.rtx_fast + qi.c.rtx_rto + qi.c.rtx_nack));
	for (int n = 0; n < 2; n++) {
		mrcp_engine_destroy(e[n]);
		free(buf[n]);
	}
	return 0;
}
