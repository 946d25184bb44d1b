/* dp.c - ports as planes and the worker lcore (dp.h).
 *
 * One worker lcore owns the engine, one RX and one TX queue of every port,
 * the neighbour table and the fault stage. Each loop iteration:
 *   1. run a pending control call (the mailbox);
 *   2. retry frames a full TX ring left over (back-pressure: the engine is
 *      told the port has no room until they are gone, D42);
 *   3. receive: host-stack frames (ARP/NDP/ICMP) are answered, MRC frames
 *      are parsed, ICRC-checked with rte_net_crc and passed in one burst to
 *      mrcp_rx_burst; the RX fault stage may drop, delay, copy or damage
 *      them first;
 *   4. hooks (selftests) post work;
 *   5. transmit: mrcp_poll descriptors become frames (headers and payload
 *      copied into one mbuf, ICRC), through the TX fault stage, tx_burst;
 *   6. completions and events go to the QP's owner;
 *   7. every 100 ms the link state of each port is read;
 *   8. adaptive idle: after a run of empty iterations the worker sleeps on
 *      its doorbell eventfd until the engine's next deadline (capped), so
 *      two daemons and their clients share two cores.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <sched.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <rte_bus.h>
#include <rte_dev.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_net_crc.h>
#include <rte_ring.h>

#include "dp.h"
#include "dp_fault.h"
#include "dp_mailbox.h"
#include "dp_neigh.h"
#include "dp_srv6.h"
#include "mrcp_bytes.h"
#include "mrcp_frame.h"
#include "mrcp_wire.h"
#include "mrcp_icrc.h"

int mrcd_logtype_dp, mrcd_logtype_ctl, mrcd_logtype_main, mrcd_logtype_engine;

void mrcd_dp_log_init(void)
{
	mrcd_logtype_dp = rte_log_register_type_and_pick_level("mrcd.dp", RTE_LOG_INFO);
	mrcd_logtype_ctl = rte_log_register_type_and_pick_level("mrcd.ctl", RTE_LOG_INFO);
	mrcd_logtype_main = rte_log_register_type_and_pick_level("mrcd.main", RTE_LOG_INFO);
	mrcd_logtype_engine = rte_log_register_type_and_pick_level("mrcd.engine", RTE_LOG_INFO);
}

#define RX_DESC 1024
#define TX_DESC 1024
#define MBUFS_PER_PORT 8192
#define MBUF_CACHE 256
#define LINK_CHECK_NS (100ull * 1000 * 1000)
#define IDLE_GRACE_NS (1000ull * 1000)  /* stay awake this long after the last work */
#define IDLE_SLEEP_MIN_NS (20ull * 1000)
#define IDLE_SLEEP_MAX_NS (200ull * 1000)
#define DELAYQ_CAP 8192
#define L2_BUF 256                      /* ARP/NDP/ICMP replies and requests: see dp_neigh.h */

static unsigned frame_room(const struct mrcd_dp_config *cfg)
{
	unsigned mtu = 0;

	for (unsigned i = 0; i < cfg->n_ports; i++)
		if (cfg->ports[i].mtu > mtu)
			mtu = cfg->ports[i].mtu;
	/* L3 MTU + Ethernet + VLAN + ICRC slack, rounded to 1 KiB */
	return (mtu + 14 + 4 + 64 + 1023) & ~1023u;
}

static void zc_free_cb(void *addr, void *opaque);

/* ---- ports ------------------------------------------------------------------ */

static int dev_name_of(const char *devargs, char *name, size_t cap)
{
	size_t n = strcspn(devargs, ",");

	if (n == 0 || n >= cap)
		return -EINVAL;
	memcpy(name, devargs, n);
	name[n] = 0;
	return 0;
}

static int port_setup(struct mrcd_dp *dp, unsigned i, unsigned nq, char *err, size_t errlen)
{
	const struct mrcd_dp_port_config *pc = &dp->cfg->ports[i];
	struct mrcd_dp_port *p = &dp->ports[i];
	struct rte_eth_conf conf;
	struct rte_eth_dev_info info;
	struct rte_ether_addr mac;
	char dev[RTE_ETH_NAME_MAX_LEN], pool[RTE_MEMPOOL_NAMESIZE];
	uint16_t pid;
	int rc;

	snprintf(p->name, sizeof(p->name), "%s", pc->name);
	if (dev_name_of(pc->devargs, dev, sizeof(dev)) < 0) {
		snprintf(err, errlen, "ports[%u] %s: bad devargs \"%s\"", i, pc->name, pc->devargs);
		return -EINVAL;
	}
	if (rte_eth_dev_get_port_by_name(dev, &pid) != 0) {
		rc = rte_dev_probe(pc->devargs);
		if (rc < 0) {
			snprintf(err, errlen, "ports[%u] %s: cannot probe device \"%s\": %s",
				 i, pc->name, pc->devargs, rte_strerror(-rc));
			return rc;
		}
		if (rte_eth_dev_get_port_by_name(dev, &pid) != 0) {
			snprintf(err, errlen, "ports[%u] %s: device \"%s\" probed but no ethdev port \"%s\"",
				 i, pc->name, pc->devargs, dev);
			return -ENODEV;
		}
	}
	for (unsigned j = 0; j < i; j++)
		if (dp->ports[j].port_id == pid) {
			snprintf(err, errlen, "ports[%u] %s: device \"%s\" already used by %s",
				 i, pc->name, dev, dp->ports[j].name);
			return -EEXIST;
		}
	p->port_id = pid;
	p->socket = rte_eth_dev_socket_id(pid);
	if (p->socket < 0)
		p->socket = 0;
	rc = rte_eth_dev_info_get(pid, &info);
	if (rc < 0) {
		snprintf(err, errlen, "ports[%u] %s: dev_info: %s", i, pc->name, rte_strerror(-rc));
		return rc;
	}

	/* one mempool per NUMA socket, shared by the ports on it */
	for (unsigned j = 0; j < i; j++)
		if (dp->ports[j].socket == p->socket)
			p->pool = dp->ports[j].pool;
	if (!p->pool) {
		snprintf(pool, sizeof(pool), "mrcd_mb_s%d", p->socket);
		p->pool = rte_pktmbuf_pool_create(pool, MBUFS_PER_PORT * dp->cfg->n_ports * nq,
						  MBUF_CACHE, 0,
						  (uint16_t)(RTE_PKTMBUF_HEADROOM + frame_room(dp->cfg)),
						  p->socket);
		if (!p->pool) {
			snprintf(err, errlen, "ports[%u] %s: mbuf pool on socket %d: %s (more memory: eal -m)",
				 i, pc->name, p->socket, rte_strerror(rte_errno));
			return -ENOMEM;
		}
	}

	memset(&conf, 0, sizeof(conf));
	conf.rxmode.mtu = pc->mtu;
	if (info.max_mtu && pc->mtu > info.max_mtu) {
		snprintf(err, errlen, "ports[%u] %s: mtu %u above the device's maximum %u",
			 i, pc->name, pc->mtu, info.max_mtu);
		return -EINVAL;
	}
	if (info.max_mtu == 0 || pc->mtu > 1500)
		conf.rxmode.mtu = info.max_mtu && info.max_mtu < pc->mtu ? info.max_mtu : pc->mtu;
	if (info.max_rx_queues < nq || info.max_tx_queues < nq) {
		snprintf(err, errlen, "ports[%u] %s: lcores.ids has %u workers, each needs its own queue, "
			 "and the device has %u RX / %u TX queues", i, pc->name, nq,
			 info.max_rx_queues, info.max_tx_queues);
		return -EINVAL;
	}
	rc = rte_eth_dev_configure(pid, (uint16_t)nq, (uint16_t)nq, &conf);
	if (rc < 0) {
		/* some vdevs reject an MTU in the configure call: retry without */
		conf.rxmode.mtu = 0;
		rc = rte_eth_dev_configure(pid, (uint16_t)nq, (uint16_t)nq, &conf);
	}
	if (rc < 0) {
		snprintf(err, errlen, "ports[%u] %s: configure: %s", i, pc->name, rte_strerror(-rc));
		return rc;
	}
	uint16_t nrx = RX_DESC, ntx = TX_DESC;
	rte_eth_dev_adjust_nb_rx_tx_desc(pid, &nrx, &ntx);
	rc = 0;
	for (uint16_t q = 0; rc == 0 && q < nq; q++) {
		rc = rte_eth_rx_queue_setup(pid, q, nrx, (unsigned)p->socket, NULL, p->pool);
		if (rc == 0)
			rc = rte_eth_tx_queue_setup(pid, q, ntx, (unsigned)p->socket, NULL);
	}
	if (rc < 0) {
		snprintf(err, errlen, "ports[%u] %s: queue setup: %s", i, pc->name, rte_strerror(-rc));
		return rc;
	}
	if (pc->has_mac) {
		memcpy(mac.addr_bytes, pc->mac, 6);
		rc = rte_eth_dev_default_mac_addr_set(pid, &mac);
		if (rc < 0)
			MRCD_LOG(INFO, dp, "port %s: device keeps its MAC (%s); frames use the configured one\n",
				 pc->name, rte_strerror(-rc));
		memcpy(p->mac, pc->mac, 6);
	} else {
		rte_eth_macaddr_get(pid, &mac);
		memcpy(p->mac, mac.addr_bytes, 6);
	}
	rc = rte_eth_dev_start(pid);
	if (rc < 0) {
		snprintf(err, errlen, "ports[%u] %s: start: %s", i, pc->name, rte_strerror(-rc));
		return rc;
	}
	p->started = true;
	rte_eth_promiscuous_enable(pid); /* frames to a configured MAC the device does not know */
	p->admin_up = true;
	p->engine_up = true;          /* the engine starts with every port up */
	if (mrcd_delayq_create(DELAYQ_CAP, &p->delay_tx) < 0 ||
	    mrcd_delayq_create(DELAYQ_CAP, &p->delay_rx) < 0) {
		snprintf(err, errlen, "ports[%u] %s: out of memory", i, pc->name);
		return -ENOMEM;
	}
	MRCD_LOG(INFO, dp, "port %s (plane %u): ethdev %u \"%s\", socket %d, mtu %u, mac %02x:%02x:%02x:%02x:%02x:%02x\n",
		 pc->name, i + 1, pid, dev, p->socket, pc->mtu, p->mac[0], p->mac[1], p->mac[2],
		 p->mac[3], p->mac[4], p->mac[5]);
	return 0;
}

static int neigh_setup(struct mrcd_dp *dp, char *err, size_t errlen)
{
	const struct mrcd_dp_config *cfg = dp->cfg;
	int rc = mrcd_neigh_create(dp->n_ports, 1024, &dp->neigh);

	if (rc < 0) {
		snprintf(err, errlen, "neighbour table: %s", strerror(-rc));
		return rc;
	}
	for (unsigned i = 0; i < dp->n_ports; i++) {
		const struct mrcd_dp_port_config *pc = &cfg->ports[i];
		struct mrcd_l2_port lp;

		memset(&lp, 0, sizeof(lp));
		memcpy(lp.mac, dp->ports[i].mac, 6);
		if (pc->ipv4.ip.family == 4) {
			lp.has_v4 = true;
			memcpy(lp.v4, pc->ipv4.ip.a, 4);
			lp.v4_plen = pc->ipv4.len;
		}
		if (pc->ipv6.ip.family == 6) {
			lp.has_v6 = true;
			memcpy(lp.v6, pc->ipv6.ip.a, 16);
			lp.v6_plen = pc->ipv6.len;
		}
		if (pc->gw4.family == 4) {
			lp.has_gw4 = true;
			memcpy(lp.gw4, pc->gw4.a, 4);
		}
		if (pc->gw6.family == 6) {
			lp.has_gw6 = true;
			memcpy(lp.gw6, pc->gw6.a, 16);
		}
		rc = mrcd_neigh_set_port(dp->neigh, i, &lp);
		if (rc < 0) {
			snprintf(err, errlen, "ports[%u] %s: neighbour setup: %s", i, pc->name, strerror(-rc));
			return rc;
		}
	}
	for (unsigned i = 0; i < cfg->n_neighbours; i++) {
		const struct mrcd_dp_neighbour *nb = &cfg->neighbours[i];

		rc = mrcd_neigh_add_static(dp->neigh, nb->port, nb->ip.family, nb->ip.a, nb->mac);
		if (rc < 0) {
			snprintf(err, errlen, "neighbours[%u]: %s", i, strerror(-rc));
			return rc;
		}
	}
	return 0;
}

static int faults_setup(struct mrcd_dp *dp, char *err, size_t errlen)
{
	int rc = mrcd_fault_stage_create(dp->cfg->engine.seed ^ 0xfa017ull ^ ((uint64_t)dp->index << 32),
					 &dp->faults);

	if (rc < 0) {
		snprintf(err, errlen, "fault stage: %s", strerror(-rc));
		return rc;
	}
	for (unsigned i = 0; i < dp->cfg->n_faults; i++) {
		rc = mrcd_fault_add(dp->faults, &dp->cfg->faults[i], NULL);
		if (rc < 0) {
			snprintf(err, errlen, "faults[%u]: %s", i, strerror(-rc));
			return rc;
		}
	}
	return 0;
}

/* SRv6 (§2.3, D8): each worker keeps its own copy of the rows. */
static int srv6_setup(struct mrcd_dp *dp, char *err, size_t errlen)
{
	const struct mrcd_dp_config *cfg = dp->cfg;

	if (cfg->n_srv6 == 0)
		return 0;
	dp->srv6 = calloc(cfg->n_srv6, sizeof(*dp->srv6));
	if (!dp->srv6) {
		snprintf(err, errlen, "srv6: out of memory");
		return -ENOMEM;
	}
	memcpy(dp->srv6, cfg->srv6, cfg->n_srv6 * sizeof(*dp->srv6));
	dp->n_srv6 = cfg->n_srv6;
	return 0;
}

/* One worker's own parts: mailbox, doorbell, hand-over ring. */
static struct mrcd_dp *worker_alloc(const struct mrcd_dp_config *cfg, unsigned index, unsigned n,
				    char *err, size_t errlen)
{
	struct mrcd_dp *dp = calloc(1, sizeof(*dp));

	if (!dp) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	dp->cfg = cfg;
	dp->index = index;
	dp->n_workers = n;
	dp->n_ports = cfg->n_ports;
	dp->family = cfg->family;
	dp->worker_lcore = cfg->lcores[index];
	dp->doorbell = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (dp->doorbell < 0) {
		snprintf(err, errlen, "eventfd: %s", strerror(errno));
		free(dp);
		return NULL;
	}
	if (mrcd_mailbox_init(&dp->mb, dp, dp->doorbell) < 0) {
		snprintf(err, errlen, "mailbox: out of memory");
		close(dp->doorbell);
		free(dp);
		return NULL;
	}
	dp->mb_ready = true;
	dp->rx_cfg = cfg->frame;
	dp->rx_cfg.check_icrc = false; /* checked with rte_net_crc below */
	return dp;
}

/* Workers after the first use the devices worker 0 set up, on their own
 * queue, with their own TX pending queue, delay queues and counters. */
static int port_share(struct mrcd_dp *dp, const struct mrcd_dp *dp0, unsigned i, char *err, size_t errlen)
{
	struct mrcd_dp_port *p = &dp->ports[i];
	const struct mrcd_dp_port *p0 = &dp0->ports[i];

	p->port_id = p0->port_id;
	memcpy(p->name, p0->name, sizeof(p->name));
	memcpy(p->mac, p0->mac, 6);
	p->socket = p0->socket;
	p->pool = p0->pool;
	p->admin_up = true;
	p->engine_up = true;
	if (mrcd_delayq_create(DELAYQ_CAP, &p->delay_tx) < 0 ||
	    mrcd_delayq_create(DELAYQ_CAP, &p->delay_rx) < 0) {
		snprintf(err, errlen, "ports[%u] %s: out of memory", i, p->name);
		return -ENOMEM;
	}
	return 0;
}

int mrcd_dp_create(const struct mrcd_dp_config *config, struct mrcd_dp **out, char *err, size_t errlen)
{
	struct mrcd_dp *dp0 = NULL;
	struct mrcd_dp_config *cfg;
	unsigned n = config->n_workers;
	int rc = -ENOMEM;

	*out = NULL;
	if (n < 1 || n > MRCD_DP_MAX_WORKERS) {
		snprintf(err, errlen, "lcores.ids: 1 to %u worker lcores (one engine each, D63), got %u",
			 MRCD_DP_MAX_WORKERS, n);
		return -ENOTSUP;
	}
	if (config->n_ports < 1 || config->n_ports > MRCD_DP_MAX_PORTS) {
		snprintf(err, errlen, "ports: 1 to %u ports, got %u", MRCD_DP_MAX_PORTS, config->n_ports);
		return -EINVAL;
	}
	/* the workers share one copy; the tables it points to are read below only */
	cfg = malloc(sizeof(*cfg));
	if (!cfg) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	*cfg = *config;
	for (unsigned k = 0; k < n; k++) {
		struct mrcd_dp *dp = worker_alloc(cfg, k, n, err, errlen);

		if (!dp) {
			if (k == 0) {
				free(cfg);
				return -ENOMEM;
			}
			goto fail;
		}
		if (k == 0) {
			dp0 = dp;
			dp0->own_cfg = cfg;
		}
		dp0->w[k] = dp;
	}
	for (unsigned k = 1; k < n; k++)
		memcpy(dp0->w[k]->w, dp0->w, sizeof(dp0->w));
	rte_net_crc_set_alg(RTE_NET_CRC_SSE42);

	for (unsigned i = 0; i < cfg->n_ports; i++) {
		rc = port_setup(dp0, i, n, err, errlen);
		if (rc < 0)
			goto fail;
	}
	for (unsigned k = 0; k < n; k++) {
		struct mrcd_dp *dp = dp0->w[k];
		struct mrcp_engine_config ecfg;

		for (unsigned i = 0; k > 0 && i < cfg->n_ports; i++) {
			rc = port_share(dp, dp0, i, err, errlen);
			if (rc < 0)
				goto fail;
		}
		rc = neigh_setup(dp, err, errlen);
		if (rc < 0)
			goto fail;
		rc = faults_setup(dp, err, errlen);
		if (rc < 0)
			goto fail;
		rc = srv6_setup(dp, err, errlen);
		if (rc < 0)
			goto fail;
		dp->zero_copy = rte_eal_iova_mode() == RTE_IOVA_VA;
		for (unsigned i = 0; i < dp->n_ports; i++) {
			dp->ports[i].zc_shinfo.free_cb = zc_free_cb;
			dp->ports[i].zc_shinfo.fcb_opaque = NULL;
			rte_mbuf_ext_refcnt_set(&dp->ports[i].zc_shinfo, 1);
		}
		if (n > 1) {
			char name[RTE_RING_NAMESIZE];

			snprintf(name, sizeof(name), "mrcd_ho%u", k);
			dp->handover = rte_ring_create(name, MRCD_DP_HANDOVER_RING, dp0->ports[0].socket,
						       RING_F_SC_DEQ);
			if (!dp->handover) {
				rc = -ENOMEM;
				snprintf(err, errlen, "worker %u: hand-over ring: %s", k, rte_strerror(rte_errno));
				goto fail;
			}
		}
		ecfg = cfg->engine;
		/* worker 0 keeps the seed as given, so one worker replays as before */
		ecfg.seed = cfg->engine.seed + (uint64_t)k * 0x9e3779b97f4a7c15ull;
		ecfg.shard = (uint8_t)k;
		rc = mrcp_engine_create(&ecfg, &dp->eng);
		if (rc < 0) {
			snprintf(err, errlen, "engine: %s", strerror(-rc));
			goto fail;
		}
		dp->start_ns = mrcd_dp_now_ns();
	}
	*out = dp0;
	return 0;
fail:
	mrcd_dp_destroy(dp0);
	return rc;
}

struct mrcd_dp *mrcd_dp_of_qpn(struct mrcd_dp *dp, uint32_t qpn)
{
	unsigned k = mrcp_qpn_shard(qpn);

	return k < dp->n_workers ? dp->w[k] : NULL;
}

/* Free the frames a delay queue holds. */
static void delayq_free_all(struct mrcd_delayq *q)
{
	void *held[64];
	unsigned n;

	if (!q)
		return;
	while ((n = mrcd_delayq_drain(q, held, 64)) > 0)
		rte_pktmbuf_free_bulk((struct rte_mbuf **)held, n);
}

/* Drop every frame queued for transmission on @p (a full ring's leftovers,
 * fault-delayed frames); the engine resends what they carried. */
static void port_drop_tx(struct mrcd_dp_port *p)
{
	rte_pktmbuf_free_bulk(p->pending, p->n_pending);
	p->n_pending = 0;
	delayq_free_all(p->delay_tx);
}

/* Free what one worker holds: queued frames, engine, tables, mailbox. */
static void worker_free(struct mrcd_dp *dp)
{
	for (unsigned i = 0; i < dp->n_ports; i++) {
		struct mrcd_dp_port *p = &dp->ports[i];

		port_drop_tx(p);
		delayq_free_all(p->delay_rx);
		mrcd_delayq_destroy(p->delay_tx);
		mrcd_delayq_destroy(p->delay_rx);
		p->delay_tx = p->delay_rx = NULL;
	}
	if (dp->handover) {
		struct rte_mbuf *m;

		while (rte_ring_dequeue(dp->handover, (void **)&m) == 0)
			rte_pktmbuf_free(m);
		rte_ring_free(dp->handover);
	}
	free(dp->clients);          /* the sessions were detached by the control side */
	if (dp->eng)
		mrcp_engine_destroy(dp->eng);
	if (dp->neigh)
		mrcd_neigh_destroy(dp->neigh);
	if (dp->faults)
		mrcd_fault_stage_destroy(dp->faults);
	free(dp->srv6);
	if (dp->doorbell > 0)
		close(dp->doorbell);
	if (dp->mb_ready)
		mrcd_mailbox_fini(&dp->mb);
}

void mrcd_dp_destroy(struct mrcd_dp *dp)
{
	if (!dp)
		return;
	mrcd_dp_stop(dp);
	/* Stop every port before closing any: a memif peer that goes away at
	 * the same moment is handled on EAL's interrupt thread, and a device
	 * that is already stopped (disconnected) gives it nothing to touch. */
	for (unsigned i = 0; i < dp->n_ports; i++)
		if (dp->ports[i].started)
			rte_eth_dev_stop(dp->ports[i].port_id);
	for (unsigned i = 0; i < dp->n_ports; i++)
		if (dp->ports[i].pool)
			rte_eth_dev_close(dp->ports[i].port_id);
	/* every worker's mbufs go back before the pools are freed */
	for (unsigned k = dp->n_workers; k-- > 1;)
		if (dp->w[k])
			worker_free(dp->w[k]);
	worker_free(dp);
	/* pools are shared per socket: free each once */
	for (unsigned i = 0; i < dp->n_ports; i++) {
		struct rte_mempool *mp = dp->ports[i].pool;

		if (!mp)
			continue;
		for (unsigned j = i; j < dp->n_ports; j++)
			if (dp->ports[j].pool == mp)
				dp->ports[j].pool = NULL;
		rte_mempool_free(mp);
	}
	for (unsigned k = dp->n_workers; k-- > 1;)
		free(dp->w[k]);
	free(dp->own_cfg);
	free(dp);
}

int mrcd_dp_port_lookup(const struct mrcd_dp *dp, const char *name, unsigned plane)
{
	if (name && name[0]) {
		for (unsigned i = 0; i < dp->n_ports; i++)
			if (strcmp(dp->ports[i].name, name) == 0)
				return (int)i;
		return -ENOENT;
	}
	if (plane >= 1 && plane <= dp->n_ports)
		return (int)plane - 1;
	return -ENOENT;
}

/* ---- owners and hooks (worker context) ---------------------------------------- */

int mrcd_dp_own_qp(struct mrcd_dp *dp, uint32_t qpn,
		   void (*on_wc)(struct mrcd_dp *, void *, const struct mrcp_wc *),
		   void (*on_event)(struct mrcd_dp *, void *, const struct mrcp_event *),
		   void *ctx)
{
	for (unsigned i = 0; i < MRCD_DP_MAX_OWNERS; i++)
		if (dp->owners[i].qpn == 0) {
			dp->owners[i] = (struct mrcd_dp_qp_owner){ qpn, on_wc, on_event, ctx };
			return 0;
		}
	return -ENOSPC;
}

void mrcd_dp_disown_qp(struct mrcd_dp *dp, uint32_t qpn)
{
	for (unsigned i = 0; i < MRCD_DP_MAX_OWNERS; i++)
		if (dp->owners[i].qpn == qpn)
			dp->owners[i].qpn = 0;
}

static struct mrcd_dp_qp_owner *owner_of(struct mrcd_dp *dp, uint32_t qpn)
{
	for (unsigned i = 0; i < MRCD_DP_MAX_OWNERS; i++)
		if (dp->owners[i].qpn == qpn)
			return &dp->owners[i];
	return NULL;
}

int mrcd_dp_add_hook(struct mrcd_dp *dp, mrcd_dp_hook fn, void *arg)
{
	if (dp->n_hooks >= RTE_DIM(dp->hooks))
		return -ENOSPC;
	dp->hooks[dp->n_hooks].fn = fn;
	dp->hooks[dp->n_hooks].arg = arg;
	dp->n_hooks++;
	return 0;
}

void mrcd_dp_del_hook(struct mrcd_dp *dp, mrcd_dp_hook fn, void *arg)
{
	for (unsigned i = 0; i < dp->n_hooks; i++)
		if (dp->hooks[i].fn == fn && dp->hooks[i].arg == arg) {
			dp->hooks[i] = dp->hooks[--dp->n_hooks];
			return;
		}
}

/* ---- link state ---------------------------------------------------------------- */

static void port_sync_engine(struct mrcd_dp *dp, unsigned i, uint64_t now)
{
	struct mrcd_dp_port *p = &dp->ports[i];
	bool up = p->link_up && p->admin_up;

	if (up == p->engine_up)
		return;
	p->engine_up = up;
	mrcp_port_set_link(dp->eng, (uint8_t)(i + 1), up, now);
	MRCD_LOG(NOTICE, dp, "port %s (plane %u): %s for the engine (link %s, admin %s)\n",
		 p->name, i + 1, up ? "up" : "down", p->link_up ? "up" : "down",
		 p->admin_up ? "up" : "down");
}

static void link_check(struct mrcd_dp *dp, unsigned i, uint64_t now)
{
	struct mrcd_dp_port *p = &dp->ports[i];
	struct rte_eth_link link;

	if ((int64_t)(now - p->next_link_check_ns) < 0)
		return;
	p->next_link_check_ns = now + LINK_CHECK_NS;
	memset(&link, 0, sizeof(link));
	if (rte_eth_link_get_nowait(p->port_id, &link) < 0)
		return;
	if ((bool)link.link_status != p->link_up) {
		p->link_up = link.link_status;
		p->c.link_changes++;
		MRCD_LOG(NOTICE, dp, "port %s: link %s\n", p->name, p->link_up ? "up" : "down");
	}
	p->link_speed_mbps = link.link_speed;
	port_sync_engine(dp, i, now);
}

int mrcd_dp_port_admin(struct mrcd_dp *dp, unsigned port, bool up, uint64_t now_ns)
{
	if (port >= dp->n_ports)
		return -ENOENT;
	dp->ports[port].admin_up = up;
	port_sync_engine(dp, port, now_ns);
	return 0;
}

/* ---- transmit -------------------------------------------------------------------- */

struct txb {
	struct rte_mbuf *m[MRCD_DP_BURST * 2];
	unsigned n;
};

static void port_flush(struct mrcd_dp *dp, unsigned i, struct txb *b)
{
	struct mrcd_dp_port *p = &dp->ports[i];
	unsigned sent = 0;

	/* frames a full ring left over go first, in order */
	if (p->n_pending) {
		sent = rte_eth_tx_burst(p->port_id, (uint16_t)dp->index, p->pending, (uint16_t)p->n_pending);
		for (unsigned k = 0; k < sent; k++) {
			p->c.tx_pkts++;
			p->c.tx_bytes += p->pending[k]->pkt_len;
		}
		memmove(p->pending, p->pending + sent, (p->n_pending - sent) * sizeof(p->pending[0]));
		p->n_pending -= sent;
	}
	if (b && b->n) {
		unsigned k = 0;

		if (p->n_pending == 0) {
			k = rte_eth_tx_burst(p->port_id, (uint16_t)dp->index, b->m, (uint16_t)b->n);
			for (unsigned j = 0; j < k; j++) {
				p->c.tx_pkts++;
				p->c.tx_bytes += b->m[j]->pkt_len;
			}
		}
		if (k < b->n) {
			p->c.tx_ring_full++;
			for (; k < b->n; k++) {
				if (p->n_pending < MRCD_DP_TXQ_PENDING) {
					p->pending[p->n_pending++] = b->m[k];
				} else {
					/* only control packets can get here (the engine
					 * sends no data to a port without room): the
					 * engine repeats them */
					p->c.tx_ring_full++;
					rte_pktmbuf_free(b->m[k]);
				}
			}
		}
		b->n = 0;
	}
}

static void txb_add(struct mrcd_dp *dp, struct txb *b, unsigned port, struct rte_mbuf *m)
{
	b[port].m[b[port].n++] = m;
	if (b[port].n == RTE_DIM(b[port].m))
		port_flush(dp, port, &b[port]);
}

/* The fault stage, for either direction (a rule matched @port/@dir/@ev):
 * damage @m as the verdict says, copy it, and hold what is delayed in the
 * port's delay queue. @return how many frames go on now (0..2), in @out. */
static unsigned fault_stage(struct mrcd_dp *dp, unsigned port, enum mrcd_fault_dir dir, uint32_t ev,
			    struct rte_mbuf *m, uint64_t now, struct rte_mbuf *out[2])
{
	struct mrcd_dp_port *p = &dp->ports[port];
	struct mrcd_delayq *q = dir == MRCD_FAULT_TX ? p->delay_tx : p->delay_rx;
	struct mrcd_fault_verdict v;
	struct rte_mbuf *dup = NULL;
	uint8_t *f = rte_pktmbuf_mtod(m, uint8_t *);
	unsigned n = 0;

	mrcd_fault_decide(dp->faults, (uint8_t)port, dir, ev, &v);
	if (v.drop) {
		rte_pktmbuf_free(m);
		return 0;
	}
	if (v.trim) {
		size_t nl;

		if (mrcd_fault_trim(f, m->data_len, dp->rx_cfg.dscp.dscp[MRCP_DSCP_CLASS_TRIMMED], &nl) == 0)
			rte_pktmbuf_trim(m, (uint16_t)(m->data_len - nl));
	}
	if (v.corrupt)
		mrcd_fault_corrupt(dp->faults, f, m->data_len);
	if (v.ecn_ce)
		mrcd_fault_ecn_mark(f, m->data_len);
	if (v.copies > 1)
		dup = rte_pktmbuf_copy(m, p->pool, 0, UINT32_MAX);
	for (struct rte_mbuf *x = m; x; x = x == m ? dup : NULL) {
		if (!v.delay_ns) {
			out[n++] = x;
		} else if (mrcd_delayq_push(q, x, now + v.delay_ns) < 0) {
			p->c.fault_delayq_full++;
			rte_pktmbuf_free(x);
		}
	}
	return n;
}

/* Send one frame the fault stage may drop, delay, copy or damage. */
static void tx_frame(struct mrcd_dp *dp, struct txb *b, unsigned port, struct rte_mbuf *m,
		     uint32_t ev, uint64_t now)
{
	struct rte_mbuf *out[2];
	unsigned n;

	if (!mrcd_fault_active(dp->faults, (uint8_t)port, MRCD_FAULT_TX)) {
		txb_add(dp, b, port, m);
		return;
	}
	n = fault_stage(dp, port, MRCD_FAULT_TX, ev, m, now, out);
	for (unsigned k = 0; k < n; k++)
		txb_add(dp, b, port, out[k]);
}

/* ---- zero-copy transmit ---------------------------------------------------------- */

/* Payload of at least MRCD_DP_ZC_MIN bytes leaves from where it lies (a
 * client's arena, a selftest buffer) as external-buffer mbufs chained after
 * a header mbuf, instead of being copied. Only where the device addresses
 * memory by virtual address (IOVA as VA: --no-huge, virtual devices) and
 * when no TX fault rule could hold or rewrite the frame; the ICRC then runs
 * with lib/core's incremental CRC over the pieces. The engine guarantees the
 * bytes stay put until the work request completes; a session or selftest
 * that goes away first calls mrcd_dp_tx_quiesce() so no queued frame still
 * points into its memory. */
static void zc_free_cb(void *addr, void *opaque)
{
	(void)addr;
	(void)opaque; /* never: the port holds one reference for good */
}

static bool zc_ok(const struct mrcd_dp *dp, unsigned port, const struct mrcp_tx *d)
{
	return dp->zero_copy && d->payload_len >= MRCD_DP_ZC_MIN &&
	       !mrcd_fault_active(dp->faults, (uint8_t)port, MRCD_FAULT_TX);
}

static struct rte_mbuf *build_frame_zc(struct mrcd_dp *dp, unsigned port, const struct mrcp_tx *d,
				       const struct mrcp_frame_tx *ftx, size_t hl, size_t mrc_len)
{
	struct mrcd_dp_port *p = &dp->ports[port];
	struct rte_mbuf *m, *tail, *seg;
	struct mrcp_icrc st;
	uint8_t *f, *t;
	size_t ip_off = mrcp_frame_icrc_off(ftx);

	m = rte_pktmbuf_alloc(p->pool);
	tail = rte_pktmbuf_alloc(p->pool);
	if (!m || !tail) {
		p->c.tx_no_mbuf++;
		rte_pktmbuf_free(m);
		rte_pktmbuf_free(tail);
		return NULL;
	}
	f = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)(hl + d->hdr_len));
	t = (uint8_t *)rte_pktmbuf_append(tail, (uint16_t)(d->pad + MRCP_ICRC_LEN));
	if (!f || !t || mrcp_frame_hdr_build(ftx, mrc_len, f, hl) < 0) {
		p->c.tx_build_err++;
		rte_pktmbuf_free(m);
		rte_pktmbuf_free(tail);
		return NULL;
	}
	memcpy(f + hl, d->hdr, d->hdr_len);
	if (mrcp_icrc_begin(&st, f + ip_off, hl + d->hdr_len - ip_off) < 0) {
		p->c.tx_build_err++;
		rte_pktmbuf_free(m);
		rte_pktmbuf_free(tail);
		return NULL;
	}
	for (unsigned s = 0; s < d->n_seg; s++) {
		seg = rte_pktmbuf_alloc(p->pool);
		if (!seg || rte_pktmbuf_chain(m, seg) < 0) {
			p->c.tx_no_mbuf++;
			rte_pktmbuf_free(seg);
			rte_pktmbuf_free(m);
			rte_pktmbuf_free(tail);
			return NULL;
		}
		rte_mbuf_ext_refcnt_update(&p->zc_shinfo, 1);
		rte_pktmbuf_attach_extbuf(seg, (void *)(uintptr_t)d->seg[s].ptr,
					  (rte_iova_t)(uintptr_t)d->seg[s].ptr,
					  (uint16_t)d->seg[s].len, &p->zc_shinfo);
		seg->data_len = (uint16_t)d->seg[s].len;
		seg->pkt_len = seg->data_len;
		m->pkt_len += seg->data_len;
		mrcp_icrc_update(&st, d->seg[s].ptr, d->seg[s].len);
	}
	memset(t, 0, d->pad);
	mrcp_icrc_update(&st, t, d->pad);
	mrcp_icrc_store(t + d->pad, mrcp_icrc_finish(&st));
	if (rte_pktmbuf_chain(m, tail) < 0) {
		p->c.tx_build_err++;
		rte_pktmbuf_free(m);
		rte_pktmbuf_free(tail);
		return NULL;
	}
	p->c.tx_zero_copy++;
	return m;
}

void mrcd_dp_tx_quiesce(struct mrcd_dp *dp)
{
	for (unsigned i = 0; i < dp->n_ports; i++) {
		port_drop_tx(&dp->ports[i]);
		/* and what the device still holds (a NIC DMAs after tx_burst) */
		rte_eth_tx_done_cleanup(dp->ports[i].port_id, (uint16_t)dp->index, 0);
	}
}

static struct rte_mbuf *build_frame(struct mrcd_dp *dp, const struct mrcp_tx *d, uint64_t now)
{
	unsigned i = d->port - 1u;
	struct mrcd_dp_port *p = &dp->ports[i];
	const struct mrcd_dp_port_config *pc = &dp->cfg->ports[i];
	struct mrcp_frame_tx ftx;
	uint8_t req[L2_BUF];
	size_t req_len = 0;
	struct rte_mbuf *m;
	int rc;

	mrcp_frame_tx_defaults(&ftx);
	rc = mrcd_neigh_resolve(dp->neigh, i, d->dst.family, d->dst.a, now, ftx.dst_mac,
				req, sizeof(req), &req_len);
	if (req_len > 0) {
		struct rte_mbuf *r = rte_pktmbuf_alloc(p->pool);

		if (r) {
			memcpy(rte_pktmbuf_append(r, (uint16_t)req_len), req, req_len);
			if (rte_eth_tx_burst(p->port_id, (uint16_t)dp->index, &r, 1) == 1)
				p->c.tx_l2++;
			else
				rte_pktmbuf_free(r);
		}
	}
	if (rc < 0) {
		p->c.tx_no_neigh++;
		return NULL;
	}
	memcpy(ftx.src_mac, p->mac, 6);
	if (d->dst.family == 4) {
		ftx.l3 = MRCP_FRAME_IPV4;
		memcpy(ftx.src_ip, pc->ipv4.ip.a, 4);
	} else {
		ftx.l3 = MRCP_FRAME_IPV6;
		memcpy(ftx.src_ip, pc->ipv6.ip.a, 16);
		if (dp->n_srv6) {
			/* D8: the outer DA is the EV's uSID path to the row of
			 * the destination; the inner DA is the peer's port */
			int k = mrcd_srv6_find(dp->srv6, dp->n_srv6, d->dst.a);

			if (k < 0) {
				p->c.tx_no_srv6_row++;
				return NULL;
			}
			ftx.l3 = MRCP_FRAME_SRV6;
			mrcd_srv6_da(&dp->srv6[k], d->ev, ftx.srv6_da);
			p->c.tx_srv6++;
		}
	}
	memcpy(ftx.dst_ip, d->dst.a, 16);
	ftx.dscp = d->dscp;
	ftx.ecn = d->ecn;
	ftx.ev = d->ev;
	ftx.ev_layout = dp->cfg->frame.ev_layout;
	ftx.udp_dport = dp->cfg->frame.udp_port;
	ftx.ip_id = dp->ip_id++;

	size_t hl = mrcp_frame_hdr_len(&ftx);
	size_t mrc_len = (size_t)d->hdr_len + d->payload_len + d->pad;
	size_t flen = hl + mrc_len + MRCP_ICRC_LEN;

	if (zc_ok(dp, i, d) && !(ftx.l3 == MRCP_FRAME_IPV6 && pc->udp_checksum))
		return build_frame_zc(dp, i, d, &ftx, hl, mrc_len);
	m = rte_pktmbuf_alloc(p->pool);
	if (!m) {
		p->c.tx_no_mbuf++;
		return NULL;
	}
	uint8_t *f = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)flen);
	if (!f || flen > UINT16_MAX || mrcp_frame_hdr_build(&ftx, mrc_len, f, hl) < 0) {
		p->c.tx_build_err++;
		rte_pktmbuf_free(m);
		return NULL;
	}
	uint8_t *w = f + hl;
	memcpy(w, d->hdr, d->hdr_len);
	w += d->hdr_len;
	for (unsigned s = 0; s < d->n_seg; s++) {
		memcpy(w, d->seg[s].ptr, d->seg[s].len);
		w += d->seg[s].len;
	}
	memset(w, 0, d->pad);
	size_t ip_off = mrcp_frame_icrc_off(&ftx);
	mrcd_dp_icrc_store(f + ip_off, hl + mrc_len - ip_off);
	if (ftx.l3 == MRCP_FRAME_IPV6 && pc->udp_checksum) {
		struct rte_ipv6_hdr *ip6 = (struct rte_ipv6_hdr *)(f + ip_off);
		struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(f + ip_off + sizeof(*ip6));

		udp->dgram_cksum = 0;
		udp->dgram_cksum = rte_ipv6_udptcp_cksum(ip6, udp);
	}
	return m;
}

static unsigned tx_engine(struct mrcd_dp *dp, struct txb *b, uint64_t now)
{
	struct mrcp_tx d[MRCD_DP_BURST];
	unsigned total = 0;

	for (int round = 0; round < 8; round++) {
		unsigned n = mrcp_poll(dp->eng, now, d, MRCD_DP_BURST);

		for (unsigned k = 0; k < n; k++) {
			unsigned port = d[k].port - 1u;
			struct rte_mbuf *m;

			if (port >= dp->n_ports)
				continue;
			m = build_frame(dp, &d[k], now);
			if (m)
				tx_frame(dp, b, port, m, d[k].ev, now);
		}
		total += n;
		for (unsigned i = 0; i < dp->n_ports; i++)
			port_flush(dp, i, &b[i]);
		if (n < MRCD_DP_BURST)
			break;
	}
	return total;
}

/* ---- receive ---------------------------------------------------------------------- */

struct rxb {
	struct mrcp_rx rx[MRCD_DP_BURST * 2];
	struct rte_mbuf *hold[MRCD_DP_BURST * 2]; /* freed after mrcp_rx_burst */
	unsigned n, n_hold;
};

static bool addr_is_ours(const struct mrcd_dp_port_config *pc, const struct mrcp_frame_view *v)
{
	if (v->l3 == MRCP_FRAME_IPV4)
		return pc->ipv4.ip.family == 4 && memcmp(v->dst_ip, pc->ipv4.ip.a, 4) == 0;
	return pc->ipv6.ip.family == 6 && memcmp(v->dst_ip, pc->ipv6.ip.a, 16) == 0;
}

/* A frame that is not MRC: ARP, NDP and ICMP echo for our addresses are
 * answered (the reply is written straight into a new mbuf); anything else
 * is counted and dropped. @copy: another worker received it and answers it;
 * this worker's neighbour table only learns from it. Takes @m. */
static void rx_host(struct mrcd_dp *dp, struct txb *b, unsigned port, struct rte_mbuf *m, bool copy,
		    uint64_t now)
{
	struct mrcd_dp_port *p = &dp->ports[port];
	struct rte_mbuf *r = rte_pktmbuf_alloc(p->pool);
	size_t rl = 0;

	if (!r) {
		p->c.tx_no_mbuf++;
		rte_pktmbuf_free(m);
		return;
	}
	enum mrcd_l2_verdict v = mrcd_l2_input(dp->neigh, port, rte_pktmbuf_mtod(m, const uint8_t *),
					       m->data_len, now, rte_pktmbuf_mtod(r, uint8_t *),
					       rte_pktmbuf_tailroom(r), &rl);

	if (copy) { /* counted and answered where it landed */
		rte_pktmbuf_free(r);
		rte_pktmbuf_free(m);
		return;
	}
	switch (v) {
	case MRCD_L2_REPLY:
		p->c.rx_l2++;
		p->c.tx_l2++;
		rte_pktmbuf_append(r, (uint16_t)rl);
		txb_add(dp, b, port, r);
		r = NULL;
		break;
	case MRCD_L2_CONSUMED:
		p->c.rx_l2++;
		break;
	default:
		p->c.rx_not_mine++;
		break;
	}
	rte_pktmbuf_free(r);
	rte_pktmbuf_free(m);
}

static void rx_frame(struct mrcd_dp *dp, struct rxb *rb, struct txb *b, unsigned port,
		     struct rte_mbuf *m, bool faulted, bool copy, uint64_t now);

/* Linearise and parse one frame into @v, mrcp_frame_parse's result in *@rc.
 * @return false if it cannot be linearised (counted, @m freed). */
static bool rx_parse(struct mrcd_dp *dp, unsigned port, struct rte_mbuf *m, struct mrcp_frame_view *v, int *rc)
{
	if (m->nb_segs > 1 && rte_pktmbuf_linearize(m) < 0) {
		dp->ports[port].c.rx_bad_frame++;
		rte_pktmbuf_free(m);
		return false;
	}
	*rc = mrcp_frame_parse(&dp->rx_cfg, rte_pktmbuf_mtod(m, const uint8_t *), m->data_len, v);
	return true;
}

/* Queue one parsed frame (@rc and @v from rx_parse) for the engine.
 * @faulted: the fault stage has already seen it (a delayed packet coming
 * back). @copy: a copy of a node-wide frame another worker received (see
 * rx_host). Takes @m. */
static void rx_parsed(struct mrcd_dp *dp, struct rxb *rb, struct txb *b, unsigned port,
		      struct rte_mbuf *m, int rc, const struct mrcp_frame_view *v, bool faulted,
		      bool copy, uint64_t now)
{
	struct mrcd_dp_port *p = &dp->ports[port];
	uint8_t *f = rte_pktmbuf_mtod(m, uint8_t *);

	if (rc == -ENOMSG && !faulted) {
		rx_host(dp, b, port, m, copy, now);
		return;
	}
	if (rc == -ENOMSG || (rc == 0 && !addr_is_ours(&dp->cfg->ports[port], v))) {
		p->c.rx_not_mine++;
		rte_pktmbuf_free(m);
		return;
	}
	if (rc < 0) {
		p->c.rx_bad_frame++;
		rte_pktmbuf_free(m);
		return;
	}
	if (!faulted && mrcd_fault_active(dp->faults, (uint8_t)port, MRCD_FAULT_RX)) {
		struct rte_mbuf *out[2];
		unsigned n = fault_stage(dp, port, MRCD_FAULT_RX, v->ev, m, now, out);

		for (unsigned k = 0; k < n; k++)
			rx_frame(dp, rb, b, port, out[k], true, copy, now);
		return;
	}
	if (v->trim == MRCP_TRIM_NONE) {
		/* the innermost IP header starts a UDP and an IPv4/IPv6 header
		 * before the MRC bytes (IPv4 options: from the IHL) */
		uint8_t *udp = (uint8_t *)(uintptr_t)v->mrc - MRCP_UDP_HLEN;
		uint8_t *ip;

		if (v->l3 == MRCP_FRAME_IPV4)
			ip = f + MRCP_ETH_HLEN + (v->vlan ? MRCP_VLAN_HLEN : 0);
		else
			ip = udp - MRCP_IPV6_HLEN;
		if (!mrcd_dp_icrc_check(ip, (size_t)(v->mrc + v->mrc_len - ip))) {
			p->c.rx_bad_icrc++;
			rte_pktmbuf_free(m);
			return;
		}
	}
	p->c.rx_mrc++;
	p->c.rx_srv6 += v->l3 == MRCP_FRAME_SRV6;
	struct mrcp_rx *r = &rb->rx[rb->n++];
	r->data = v->mrc;
	r->len = v->mrc_len;
	r->port = (uint8_t)(port + 1);
	r->ecn = v->ecn;
	r->trim = (uint8_t)v->trim;
	r->ev = v->ev;
	memset(&r->src, 0, sizeof(r->src));
	if (v->l3 == MRCP_FRAME_IPV4) {
		r->src.family = 4;
		memcpy(r->src.a, v->src_ip, 4);
	} else {
		r->src.family = 6;
		memcpy(r->src.a, v->src_ip, 16);
	}
	rb->hold[rb->n_hold++] = m;
}

/* Parse one frame and queue it for the engine (rx_parsed). Takes @m. */
static void rx_frame(struct mrcd_dp *dp, struct rxb *rb, struct txb *b, unsigned port,
		     struct rte_mbuf *m, bool faulted, bool copy, uint64_t now)
{
	struct mrcp_frame_view v;
	int rc;

	if (rx_parse(dp, port, m, &v, &rc))
		rx_parsed(dp, rb, b, port, m, rc, &v, faulted, copy, now);
}

static void rx_flush(struct mrcd_dp *dp, struct rxb *rb, uint64_t now)
{
	if (rb->n && dp->pre_rx)
		dp->pre_rx(dp, dp->sleep_arg);
	if (rb->n)
		mrcp_rx_burst(dp->eng, rb->rx, rb->n, now);
	if (rb->n_hold)
		rte_pktmbuf_free_bulk(rb->hold, rb->n_hold);
	rb->n = rb->n_hold = 0;
}

/* ---- steering between workers (D63) ------------------------------------------------ */

/* Put @m on worker @t's ring with its plane index and copy flag in the
 * mbuf's user hash, and ring @t's doorbell if it sleeps. Takes @m. */
static void hand_over(struct mrcd_dp *dp, struct mrcd_dp *t, unsigned port, struct rte_mbuf *m, bool copy)
{
	uint64_t one = 1;

	m->hash.usr = port | (copy ? 0x100u : 0u);
	if (rte_ring_mp_enqueue(t->handover, m) != 0) {
		dp->wc.handover_drop++;
		rte_pktmbuf_free(m);
		return;
	}
	if (copy)
		dp->wc.node_copies++;
	else
		dp->wc.handover_out++;
	/* seq_cst: either @t sees the frame before it sleeps, or we see asleep;
	 * the first to see it rings, the frames after it need no syscall */
	if (atomic_exchange(&t->asleep, false) && write(t->doorbell, &one, sizeof(one)) < 0) {
		/* EAGAIN: already rung */
	}
}

static void copy_to_others(struct mrcd_dp *dp, unsigned port, struct rte_mbuf *m)
{
	for (unsigned k = 0; k < dp->n_workers; k++) {
		struct rte_mbuf *c;

		if (k == dp->index)
			continue;
		c = rte_pktmbuf_copy(m, dp->ports[port].pool, 0, UINT32_MAX);
		if (!c) {
			dp->ports[port].c.tx_no_mbuf++;
			continue;
		}
		hand_over(dp, dp->w[k], port, c, true);
	}
}

/* Which worker a received frame belongs to. MRC frames go to the engine
 * named by the top bits of BTH.DestQP, endpoint responses to the one named
 * by bits 23:16 of their PSN (D63); endpoint requests and non-MRC frames
 * are processed here, and port-status updates and non-MRC frames (ARP, NDP:
 * every worker's neighbour table learns) are copied to every other worker.
 * @return true if @m was handed over (taken). */
static bool steer(struct mrcd_dp *dp, unsigned port, struct rte_mbuf *m, int rc,
		  const struct mrcp_frame_view *v)
{
	const uint8_t *bth;
	uint32_t dqpn, psn;
	unsigned t;

	if (rc == -ENOMSG) {
		copy_to_others(dp, port, m);
		return false;
	}
	if (rc < 0 || v->mrc_len < sizeof(struct mrcp_bth_wire))
		return false;
	bth = v->mrc;
	dqpn = mrcp_get_be24(bth + offsetof(struct mrcp_bth_wire, dest_qp));
	psn = mrcp_get_be24(bth + offsetof(struct mrcp_bth_wire, psn));
	if (dqpn == MRCP_QPN_ENDPOINT) {
		if (bth[0] == MRCP_OP_EP_REQUEST) {
			/* a port-status update concerns every engine (each
			 * acknowledges it; the sender takes the first); an EV
			 * probe needs one answer, from here */
			const uint8_t *erth = bth + sizeof(struct mrcp_bth_wire);

			if (v->mrc_len >= sizeof(struct mrcp_bth_wire) + sizeof(struct mrcp_erth_wire) &&
			    (erth[offsetof(struct mrcp_erth_wire, flags)] & 3) == MRCP_EP_PORT_STATUS_UPDATE)
				copy_to_others(dp, port, m);
			return false;
		}
		t = mrcp_ep_psn_shard(psn);
	} else {
		t = mrcp_qpn_shard(dqpn);
	}
	if (t == dp->index || t >= dp->n_workers)
		return false; /* ours, or no such engine: ours to count */
	hand_over(dp, dp->w[t], port, m, false);
	return true;
}

/* Frames other workers steered here. */
static unsigned rx_handover(struct mrcd_dp *dp, struct rxb *rb, struct txb *b, uint64_t now)
{
	struct rte_mbuf *m[MRCD_DP_BURST];
	unsigned n;

	if (!dp->handover)
		return 0;
	n = rte_ring_sc_dequeue_burst(dp->handover, (void **)m, MRCD_DP_BURST, NULL);
	for (unsigned k = 0; k < n; k++) {
		unsigned port = m[k]->hash.usr & 0xffu;
		bool copy = m[k]->hash.usr & 0x100u;

		dp->wc.handover_in++;
		if (port >= dp->n_ports) {
			rte_pktmbuf_free(m[k]);
			continue;
		}
		if (!dp->ports[port].admin_up) {
			dp->ports[port].c.rx_admin_down++;
			rte_pktmbuf_free(m[k]);
			continue;
		}
		if (rb->n + 2 > RTE_DIM(rb->rx))
			rx_flush(dp, rb, now);
		rx_frame(dp, rb, b, port, m[k], false, copy, now);
	}
	return n;
}

/* One received frame of port @i: admin state, steering, then the parser. */
static void rx_one(struct mrcd_dp *dp, struct rxb *rb, struct txb *b, unsigned i, struct rte_mbuf *m,
		   uint64_t now)
{
	struct mrcd_dp_port *p = &dp->ports[i];
	struct mrcp_frame_view v;
	int rc;

	p->c.rx_pkts++;
	p->c.rx_bytes += m->pkt_len;
	if (!p->admin_up) {
		p->c.rx_admin_down++;
		rte_pktmbuf_free(m);
		return;
	}
	/* parsed once, for the steering and for the engine */
	if (!rx_parse(dp, i, m, &v, &rc))
		return;
	if (dp->n_workers > 1 && steer(dp, i, m, rc, &v))
		return;
	if (rb->n + 2 > RTE_DIM(rb->rx))
		rx_flush(dp, rb, now);
	rx_parsed(dp, rb, b, i, m, rc, &v, false, false, now);
}

/* Receive a burst from every port, then hand the frames to the engine
 * interleaved, one from each port in turn. The sender sprays consecutive
 * PSNs over the planes, so this is about the order they were sent in; a
 * worker that took each port's burst whole after a pause would show the
 * engine PSNs from one plane far ahead of the others', and its SACKs would
 * make the sender infer losses that are not (D29, D64). Then frames the
 * fault stage held. */
static unsigned rx_ports(struct mrcd_dp *dp, struct rxb *rb, struct txb *b, uint64_t now)
{
	struct rte_mbuf *m[MRCD_DP_MAX_PORTS][MRCD_DP_BURST];
	uint16_t n[MRCD_DP_MAX_PORTS];
	void *due[MRCD_DP_BURST];
	unsigned most = 0, got = 0, nd;

	for (unsigned i = 0; i < dp->n_ports; i++) {
		n[i] = rte_eth_rx_burst(dp->ports[i].port_id, (uint16_t)dp->index, m[i], MRCD_DP_BURST);
		got += n[i];
		if (n[i] > most)
			most = n[i];
	}
	for (unsigned k = 0; k < most; k++)
		for (unsigned i = 0; i < dp->n_ports; i++)
			if (k < n[i])
				rx_one(dp, rb, b, i, m[i][k], now);
	for (unsigned i = 0; i < dp->n_ports; i++) {
		struct mrcd_dp_port *p = &dp->ports[i];

		nd = mrcd_delayq_pop_due(p->delay_rx, now, due, MRCD_DP_BURST);
		for (unsigned k = 0; k < nd; k++) {
			if (rb->n + 2 > RTE_DIM(rb->rx))
				rx_flush(dp, rb, now);
			rx_frame(dp, rb, b, i, due[k], true, false, now);
		}
		got += nd;
		nd = mrcd_delayq_pop_due(p->delay_tx, now, due, MRCD_DP_BURST);
		for (unsigned k = 0; k < nd; k++)
			txb_add(dp, b, i, due[k]);
		got += nd;
	}
	return got;
}

/* ---- completions and events ---------------------------------------------------------- */

unsigned mrcd_dp_drain_cq(struct mrcd_dp *dp)
{
	struct mrcp_wc wc[64];
	unsigned n, total = 0;

	while ((n = mrcp_poll_cq(dp->eng, wc, RTE_DIM(wc))) > 0) {
		for (unsigned k = 0; k < n; k++) {
			struct mrcd_dp_qp_owner *o = owner_of(dp, wc[k].qpn);

			dp->wc.wc++;
			if (o && o->on_wc)
				o->on_wc(dp, o->ctx, &wc[k]);
			else
				dp->wc.wc_unowned++;
		}
		total += n;
		if (n < RTE_DIM(wc))
			break;
	}
	return total;
}

static void ip_str(const struct mrcp_ip *ip, char *buf, size_t cap);

static unsigned drain_events(struct mrcd_dp *dp)
{
	struct mrcp_event ev[32];
	unsigned n = mrcp_poll_events(dp->eng, ev, RTE_DIM(ev));
	char a[64];

	for (unsigned k = 0; k < n; k++) {
		const struct mrcp_event *e = &ev[k];
		struct mrcd_dp_qp_owner *o = e->qpn ? owner_of(dp, e->qpn) : NULL;

		dp->wc.events++;
		switch (e->type) {
		case MRCP_EVENT_EV_PROBE: {
			struct mrcd_dp_probe *pr = &dp->probes[dp->n_probes++ % MRCD_DP_PROBES];

			pr->at_ns = e->now_ns;
			pr->node = e->probe.node;
			pr->port = e->probe.port;
			pr->ev = e->probe.ev;
			pr->ok = e->probe.ok;
			pr->rtt_ns = e->probe.rtt_ns;
			break;
		}
		case MRCP_EVENT_PEER_PORTS: {
			unsigned j;

			for (j = 0; j < dp->n_peers; j++)
				if (memcmp(&dp->peers[j].node, &e->peer_ports.node, sizeof(struct mrcp_ip)) == 0)
					break;
			if (j == dp->n_peers && j < RTE_DIM(dp->peers))
				dp->n_peers++;
			if (j < RTE_DIM(dp->peers)) {
				dp->peers[j].node = e->peer_ports.node;
				dp->peers[j].mask = e->peer_ports.mask;
				dp->peers[j].at_ns = e->now_ns;
				dp->peers[j].updates++;
			}
			ip_str(&e->peer_ports.node, a, sizeof(a));
			MRCD_LOG(NOTICE, engine, "peer %s: port status mask now 0x%" PRIx32 "\n",
				 a, e->peer_ports.mask);
			break;
		}
		case MRCP_EVENT_QP_ERROR:
			MRCD_LOG(WARNING, engine, "QP %" PRIu32 " entered ERROR (%s)\n", e->qpn,
				 mrcp_wc_status_str(e->qp_error.status));
			break;
		default:
			break;
		}
		if (o && o->on_event)
			o->on_event(dp, o->ctx, e);
	}
	return n;
}

static void ip_str(const struct mrcp_ip *ip, char *buf, size_t cap)
{
	if (ip->family == 4)
		snprintf(buf, cap, "%u.%u.%u.%u", ip->a[0], ip->a[1], ip->a[2], ip->a[3]);
	else if (ip->family == 6)
		inet_ntop(AF_INET6, ip->a, buf, (socklen_t)cap);
	else
		snprintf(buf, cap, "-");
}

/* ---- the mailbox ------------------------------------------------------------------------ */

/* The mailbox runs mrcd_dp_fn calls: the caller's function and argument
 * travel in a struct on its stack, which the mailbox never touches once
 * mrcd_mailbox_call has returned. */
struct dp_call {
	mrcd_dp_fn fn;
	void *arg;
};

static void dp_call_run(void *ctx, void *arg)
{
	const struct dp_call *c = arg;

	c->fn(ctx, c->arg);
}

int mrcd_dp_call(struct mrcd_dp *dp, mrcd_dp_fn fn, void *arg, unsigned timeout_ms)
{
	struct dp_call c = { fn, arg };
	int rc = mrcd_mailbox_call(&dp->mb, dp_call_run, &c, timeout_ms);

	if (rc == -ETIMEDOUT)
		MRCD_LOG(WARNING, dp, "worker %u did not take a control call within %u ms\n",
			 dp->index, timeout_ms);
	return rc;
}

/* ---- the worker ----------------------------------------------------------------------- */

static void idle_sleep(struct mrcd_dp *dp, uint64_t now, uint64_t max_ns)
{
	uint64_t wake = now + max_ns, d;
	struct pollfd pfd = { .fd = dp->doorbell, .events = POLLIN };
	struct timespec ts;
	uint64_t cnt;

	d = mrcp_next_deadline(dp->eng);
	if (d < wake)
		wake = d;
	for (unsigned i = 0; i < dp->n_ports; i++) {
		struct mrcd_dp_port *p = &dp->ports[i];

		if (p->n_pending)
			return;
		d = mrcd_delayq_next(p->delay_tx);
		if (d < wake)
			wake = d;
		d = mrcd_delayq_next(p->delay_rx);
		if (d < wake)
			wake = d;
		if (p->next_link_check_ns < wake)
			wake = p->next_link_check_ns;
	}
	if ((int64_t)(wake - now) < 2000)
		return;
	if (dp->pre_sleep && !dp->pre_sleep(dp, dp->sleep_arg)) {
		if (dp->post_sleep)
			dp->post_sleep(dp, dp->sleep_arg);
		return;
	}
	d = wake - now;
	ts.tv_sec = (time_t)(d / 1000000000u);
	ts.tv_nsec = (long)(d % 1000000000u);
	/* a frame another worker hands over after this check rings the doorbell */
	atomic_store(&dp->asleep, true);
	if (dp->handover && rte_ring_count(dp->handover) != 0) {
		atomic_store(&dp->asleep, false);
		if (dp->post_sleep)
			dp->post_sleep(dp, dp->sleep_arg);
		return;
	}
	dp->wc.sleeps++;
	if (ppoll(&pfd, 1, &ts, NULL) > 0)
		(void)!read(dp->doorbell, &cnt, sizeof(cnt));
	atomic_store(&dp->asleep, false);
	if (dp->post_sleep)
		dp->post_sleep(dp, dp->sleep_arg);
	dp->wc.sleep_ns += mrcd_dp_now_ns() - now;
}

static int worker_main(void *arg)
{
	struct mrcd_dp *dp = arg;
	struct txb *b = calloc(dp->n_ports, sizeof(*b));
	struct rxb *rb = calloc(1, sizeof(*rb));
	uint64_t last_work = 0;
	uint64_t sleep_max = IDLE_SLEEP_MIN_NS;
	bool adaptive = !dp->cfg->busy_poll;

	if (!b || !rb) {
		free(b);
		free(rb);
		MRCD_LOG(ERR, dp, "worker: out of memory\n");
		mrcd_mailbox_close(&dp->mb);
		return -ENOMEM;
	}
	MRCD_LOG(INFO, dp, "worker %u of %u on lcore %u: %u ports, idle %s\n", dp->index, dp->n_workers,
		 rte_lcore_id(), dp->n_ports,
		 adaptive ? "adaptive" : "busy");
	while (!atomic_load_explicit(&dp->stop, memory_order_relaxed)) {
		uint64_t now = mrcd_dp_now_ns();
		unsigned work = 0;

		dp->wc.loops++;
		if (mrcd_mailbox_poll(&dp->mb)) {
			dp->wc.calls++;
			work++;
		}
		for (unsigned i = 0; i < dp->n_ports; i++) {
			struct mrcd_dp_port *p = &dp->ports[i];
			bool room;

			link_check(dp, i, now);
			if (p->n_pending)
				port_flush(dp, i, NULL);
			room = p->n_pending == 0;
			mrcp_port_set_tx_room(dp->eng, (uint8_t)(i + 1), room);
		}
		work += rx_ports(dp, rb, b, now);
		work += rx_handover(dp, rb, b, now);
		rx_flush(dp, rb, now);
		for (unsigned h = 0; h < dp->n_hooks; h++)
			work += dp->hooks[h].fn(dp, dp->hooks[h].arg, now);
		work += tx_engine(dp, b, now);
		work += mrcd_dp_drain_cq(dp);
		work += drain_events(dp);
		for (unsigned i = 0; i < dp->n_ports; i++)
			port_flush(dp, i, &b[i]);

		/* Adaptive idle: spin while traffic flows (a packet or timer in
		 * the last IDLE_GRACE_NS), so RTTs measure the path and not our
		 * naps; then sleep in growing steps, never past a deadline. */
		if (work) {
			dp->wc.busy_loops++;
			last_work = now;
			sleep_max = IDLE_SLEEP_MIN_NS;
		} else if (adaptive && now - last_work <= IDLE_GRACE_NS) {
			/* spinning for the next packet, but a client process that
			 * shares this CPU gets it at once if it has work */
			sched_yield();
		} else if (adaptive) {
			idle_sleep(dp, now, sleep_max);
			if (sleep_max < IDLE_SLEEP_MAX_NS)
				sleep_max *= 2;
		}
	}
	/* what the rings did not take is freed by mrcd_dp_destroy */
	free(b);
	free(rb);
	mrcd_mailbox_close(&dp->mb);
	MRCD_LOG(INFO, dp, "worker stopped\n");
	return 0;
}

static int worker_start(struct mrcd_dp *dp)
{
	int rc;

	if (dp->worker_lcore == rte_get_main_lcore() || !rte_lcore_is_enabled(dp->worker_lcore)) {
		MRCD_LOG(ERR, dp, "lcore %u is not an enabled worker lcore (main lcore %u): add it to the EAL core list\n",
			 dp->worker_lcore, rte_get_main_lcore());
		return -EINVAL;
	}
	atomic_store(&dp->stop, false);
	/* before the launch: no call may run here while the worker runs */
	mrcd_mailbox_open(&dp->mb);
	rc = rte_eal_remote_launch(worker_main, dp, dp->worker_lcore);
	if (rc < 0) {
		mrcd_mailbox_close(&dp->mb);
		return rc;
	}
	dp->launched = true;
	return 0;
}

static void worker_stop(struct mrcd_dp *dp)
{
	uint64_t one = 1;

	if (!dp->launched)
		return;
	atomic_store(&dp->stop, true);
	if (write(dp->doorbell, &one, sizeof(one)) < 0) {
		/* already signalled */
	}
	rte_eal_wait_lcore(dp->worker_lcore);
	dp->launched = false;
}

int mrcd_dp_start(struct mrcd_dp *dp)
{
	for (unsigned k = 0; k < dp->n_workers; k++) {
		int rc = worker_start(dp->w[k]);

		if (rc < 0) {
			mrcd_dp_stop(dp);
			return rc;
		}
	}
	return 0;
}

void mrcd_dp_stop(struct mrcd_dp *dp)
{
	for (unsigned k = 0; k < dp->n_workers; k++)
		if (dp->w[k])
			worker_stop(dp->w[k]);
}
