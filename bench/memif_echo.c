/* memif_echo.c - the raw round trip of one DPDK port, the floor under
 * mrc-perf's ping-pong (scripts/bench/daemon.sh).
 *
 *   memif_echo EAL-ARGS -- echo SECONDS
 *       sends every frame port 0 receives straight back, for SECONDS;
 *   memif_echo EAL-ARGS -- ping ITERS SIZE
 *       sends one SIZE-byte frame (Ethernet header included), busy-polls
 *       for its echo, ITERS times after 200 warm-up rounds, and prints
 *       "rtt_us p50 P p99 P max P lost N".
 * Either prints "started" once its port is started (a memif server then
 * listens, so the script starts the client after it).
 *
 * Both sides busy-poll one queue: no protocol, no copy beyond the PMD's,
 * no timers. Exit 1 when the link does not come up or a frame is lost.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#define WARMUP 200
#define LOST_NS (200ull * 1000 * 1000)

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int port_up(uint16_t pid, struct rte_mempool *mp)
{
	struct rte_eth_conf conf;
	struct rte_eth_link link;
	uint64_t end;

	memset(&conf, 0, sizeof(conf));
	if (rte_eth_dev_configure(pid, 1, 1, &conf) < 0 ||
	    rte_eth_rx_queue_setup(pid, 0, 1024, rte_eth_dev_socket_id(pid), NULL, mp) < 0 ||
	    rte_eth_tx_queue_setup(pid, 0, 1024, rte_eth_dev_socket_id(pid), NULL) < 0 ||
	    rte_eth_dev_start(pid) < 0)
		return -1;
	/* the memif server listens now: its peer may start */
	printf("started\n");
	fflush(stdout);
	end = now_ns() + 30ull * 1000 * 1000 * 1000;
	do {
		if (rte_eth_link_get_nowait(pid, &link) == 0 && link.link_status)
			return 0;
		rte_delay_us_sleep(10000);
	} while (now_ns() < end && !stop);
	return -1;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int do_echo(uint16_t pid, unsigned seconds)
{
	struct rte_mbuf *m[32];
	uint64_t end = now_ns() + (uint64_t)seconds * 1000000000ull;

	while (!stop && now_ns() < end) {
		uint16_t n = rte_eth_rx_burst(pid, 0, m, 32), s = 0;

		while (s < n && !stop)
			s += rte_eth_tx_burst(pid, 0, m + s, n - s);
		if (s < n)
			rte_pktmbuf_free_bulk(m + s, n - s);
	}
	return 0;
}

static int do_ping(uint16_t pid, struct rte_mempool *mp, unsigned iters, unsigned size)
{
	uint64_t *rtt = calloc(iters, sizeof(*rtt));
	unsigned lost = 0, got = 0;

	if (rtt == NULL || size < 60 || size > 9000)
		return 1;
	for (unsigned i = 0; i < WARMUP + iters && !stop; i++) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(mp), *r;
		uint8_t *f;
		uint64_t t0, t;

		if (m == NULL || (f = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)size)) == NULL)
			return 1;
		memset(f, 0, size);
		memset(f, 0xff, 6);
		f[12] = 0x88; /* IEEE local experimental ethertype */
		f[13] = 0xb5;
		memcpy(f + 14, &i, sizeof(i));
		t0 = now_ns();
		while (rte_eth_tx_burst(pid, 0, &m, 1) == 0 && !stop)
			;
		for (;;) {
			t = now_ns();
			if (rte_eth_rx_burst(pid, 0, &r, 1) == 1) {
				rte_pktmbuf_free(r);
				break;
			}
			if (t - t0 > LOST_NS || stop) {
				lost++;
				break;
			}
		}
		if (i >= WARMUP && t - t0 <= LOST_NS)
			rtt[got++] = t - t0;
	}
	if (got == 0) {
		fprintf(stderr, "memif_echo: no echo came back\n");
		return 1;
	}
	qsort(rtt, got, sizeof(*rtt), cmp_u64);
	printf("rtt_us p50 %.2f p99 %.2f max %.2f lost %u\n", rtt[got / 2] / 1e3,
	       rtt[(size_t)got * 99 / 100] / 1e3, rtt[got - 1] / 1e3, lost);
	free(rtt);
	return lost ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct rte_mempool *mp;
	int n = rte_eal_init(argc, argv), rc;

	if (n < 0) {
		fprintf(stderr, "memif_echo: EAL init failed\n");
		return 1;
	}
	argc -= n;
	argv += n;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (rte_eth_dev_count_avail() < 1 || argc < 3) {
		fprintf(stderr, "usage: memif_echo EAL-ARGS -- echo SECONDS | ping ITERS SIZE\n");
		return 2;
	}
	mp = rte_pktmbuf_pool_create("echo", 4095, 256, 0, 10240, (int)rte_socket_id());
	if (mp == NULL || port_up(0, mp) < 0) {
		fprintf(stderr, "memif_echo: port 0 did not come up\n");
		return 1;
	}
	if (strcmp(argv[1], "echo") == 0)
		rc = do_echo(0, (unsigned)atoi(argv[2]));
	else if (strcmp(argv[1], "ping") == 0 && argc >= 4)
		rc = do_ping(0, mp, (unsigned)atoi(argv[2]), (unsigned)atoi(argv[3]));
	else
		rc = 2;
	rte_eth_dev_stop(0);
	rte_eth_dev_close(0);
	rte_eal_cleanup();
	return rc;
}
