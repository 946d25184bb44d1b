/* dp_port.c - one port of one worker (dp_internal.h): worker 0 probes,
 * configures and starts each device (one RX and one TX queue per worker, a
 * mempool per NUMA socket, MAC and MTU), the other workers share it on their
 * own queue. Link polling and admin state feed mrcp_port_set_link; the TX
 * ring's back-pressure queue (D42) and the fault stage with its delay queues
 * are per port and per worker.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_bus.h>
#include <rte_dev.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "dp_fault.h"
#include "dp_internal.h"
#include "dp_neigh.h"

#define RX_DESC 1024
#define TX_DESC 1024
#define MBUFS_PER_PORT 8192
#define MBUF_CACHE 256
#define LINK_CHECK_NS (100ull * 1000 * 1000)
#define DELAYQ_CAP 8192

/* ---- setup ------------------------------------------------------------------- */

unsigned mrcd__frame_room(const struct mrcd_dp_config *cfg)
{
	unsigned mtu = 0;

	for (unsigned i = 0; i < cfg->n_ports; i++)
		if (cfg->ports[i].mtu > mtu)
			mtu = cfg->ports[i].mtu;
	/* L3 MTU + Ethernet + VLAN + ICRC slack, rounded to 1 KiB */
	return (mtu + 14 + 4 + 64 + 1023) & ~1023u;
}

static int dev_name_of(const char *devargs, char *name, size_t cap)
{
	size_t n = strcspn(devargs, ",");

	if (n == 0 || n >= cap)
		return -EINVAL;
	memcpy(name, devargs, n);
	name[n] = 0;
	return 0;
}

/* Drivers that drop a frame longer than the MTU they were configured with
 * (net_tap checks every frame it sends against it). The others that refuse
 * a large MTU in rte_eth_dev_configure still carry such frames (net_af_packet
 * is bounded by its framesz devarg instead). */
static bool mtu_enforced(const char *driver)
{
	return driver != NULL && strcmp(driver, "net_tap") == 0;
}

int mrcd__port_setup(struct mrcd_dp *dp, unsigned i, unsigned nq, char *err, size_t errlen)
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
						  (uint16_t)(RTE_PKTMBUF_HEADROOM + mrcd__frame_room(dp->cfg)),
						  p->socket);
		if (!p->pool) {
			snprintf(err, errlen, "ports[%u] %s: mbuf pool on socket %d: %s (more memory: eal -m)",
				 i, pc->name, p->socket, rte_strerror(rte_errno));
			return -ENOMEM;
		}
	}

	memset(&conf, 0, sizeof(conf));
	/* zero-copy transmit chains the payload (dp_tx.c): only where the
	 * device takes chained mbufs (net_af_xdp copies the first segment
	 * alone: such a frame would leave with garbage after it) */
	p->tx_multi_seg = (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS) != 0;
	if (p->tx_multi_seg)
		conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
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
		/* some vdevs reject an MTU in the configure call (their frame
		 * limit, max_rx_pktlen, is below it): retry without */
		conf.rxmode.mtu = 0;
		rc = rte_eth_dev_configure(pid, (uint16_t)nq, (uint16_t)nq, &conf);
		if (rc == 0 && mtu_enforced(info.driver_name)) {
			uint16_t m = 0;

			rte_eth_dev_get_mtu(pid, &m);
			snprintf(err, errlen, "ports[%u] %s: mtu %u above what %s takes (frames up to %u B, "
				 "mtu %u): lower transport.mtu", i, pc->name, pc->mtu, info.driver_name,
				 info.max_rx_pktlen, m);
			return -EINVAL;
		}
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
	MRCD_LOG(INFO, dp, "port %s (plane %u): ethdev %u \"%s\", socket %d, mtu %u, mac %02x:%02x:%02x:%02x:%02x:%02x%s\n",
		 pc->name, i + 1, pid, dev, p->socket, pc->mtu, p->mac[0], p->mac[1], p->mac[2],
		 p->mac[3], p->mac[4], p->mac[5], p->tx_multi_seg ? "" : ", no chained mbufs (payload copied)");
	return 0;
}

/* Workers after the first use the devices worker 0 set up, on their own
 * queue, with their own TX pending queue, delay queues and counters. */
int mrcd__port_share(struct mrcd_dp *dp, const struct mrcd_dp *dp0, unsigned i, char *err, size_t errlen)
{
	struct mrcd_dp_port *p = &dp->ports[i];
	const struct mrcd_dp_port *p0 = &dp0->ports[i];

	p->port_id = p0->port_id;
	memcpy(p->name, p0->name, sizeof(p->name));
	memcpy(p->mac, p0->mac, 6);
	p->socket = p0->socket;
	p->pool = p0->pool;
	p->tx_multi_seg = p0->tx_multi_seg;
	p->admin_up = true;
	p->engine_up = true;
	if (mrcd_delayq_create(DELAYQ_CAP, &p->delay_tx) < 0 ||
	    mrcd_delayq_create(DELAYQ_CAP, &p->delay_rx) < 0) {
		snprintf(err, errlen, "ports[%u] %s: out of memory", i, p->name);
		return -ENOMEM;
	}
	return 0;
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
void mrcd__port_drop_tx(struct mrcd_dp_port *p)
{
	rte_pktmbuf_free_bulk(p->pending, p->n_pending);
	p->n_pending = 0;
	delayq_free_all(p->delay_tx);
}

void mrcd__port_free(struct mrcd_dp *dp, unsigned i)
{
	struct mrcd_dp_port *p = &dp->ports[i];

	mrcd__port_drop_tx(p);
	delayq_free_all(p->delay_rx);
	mrcd_delayq_destroy(p->delay_tx);
	mrcd_delayq_destroy(p->delay_rx);
	p->delay_tx = p->delay_rx = NULL;
}

unsigned mrcd_dp_n_ports(const struct mrcd_dp *dp)
{
	return dp->n_ports;
}

const char *mrcd_dp_port_name(const struct mrcd_dp *dp, unsigned port)
{
	return port < dp->n_ports ? dp->ports[port].name : NULL;
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

/* ---- link and admin state ------------------------------------------------------ */

static void port_sync_engine(struct mrcd_dp *dp, unsigned i, uint64_t now)
{
	struct mrcd_dp_port *p = &dp->ports[i];
	bool up = p->link_up && p->admin_up && !p->gw_failed;

	if (up == p->engine_up)
		return;
	p->engine_up = up;
	mrcp_port_set_link(dp->eng, (uint8_t)(i + 1), up, now);
	MRCD_LOG(NOTICE, dp, "port %s (plane %u): %s for the engine (link %s, admin %s, gateway %s)\n",
		 p->name, i + 1, up ? "up" : "down", p->link_up ? "up" : "down",
		 p->admin_up ? "up" : "down", p->gw_failed ? "FAILED" : "ok");
}

void mrcd__port_send_l2(struct mrcd_dp *dp, unsigned i, const uint8_t *f, size_t len)
{
	struct mrcd_dp_port *p = &dp->ports[i];
	struct rte_mbuf *m = rte_pktmbuf_alloc(p->pool);
	char *d = m ? rte_pktmbuf_append(m, (uint16_t)len) : NULL;

	if (!d) {
		rte_pktmbuf_free(m);
		return;
	}
	memcpy(d, f, len);
	if (rte_eth_tx_burst(p->port_id, (uint16_t)dp->index, &m, 1) == 1)
		p->c.tx_l2++;
	else
		rte_pktmbuf_free(m);
}

/* Every link check of an up link: keep the port's routers (its gateways and
 * the next hops of its static routes) resolved, so a stale entry is
 * refreshed and one that does not answer becomes FAILED before traffic
 * needs it (dp_neigh.h, mrcd_neigh_refresh). While the gateway of the
 * planes' family is FAILED the port is down for the engine, as if its link
 * were: the engine sprays over the other planes and tells its peers (§5.6)
 * instead of losing every packet of this plane in silence. */
static void gateway_check(struct mrcd_dp *dp, unsigned i, uint64_t now)
{
	struct mrcd_neigh_hop hops[2 + MRCD_NEIGH_MAX_ROUTES];
	unsigned n = mrcd_neigh_port_hops(dp->neigh, i, hops, RTE_DIM(hops));
	struct mrcd_dp_port *p = &dp->ports[i];
	bool failed = p->gw_failed;
	uint8_t req[MRCD_NEIGH_REQ_MAX];
	char a[48];

	for (unsigned k = 0; k < n; k++) {
		size_t len = 0;
		int rc = mrcd_neigh_refresh(dp->neigh, i, hops[k].family, hops[k].ip, now, NULL,
					    req, sizeof(req), &len);

		if (len > 0)
			mrcd__port_send_l2(dp, i, req, len);
		if (hops[k].role != MRCD_NEIGH_ROLE_GATEWAY || hops[k].family != dp->family)
			continue;
		if (rc == 0)
			failed = false;
		else if (rc == -EHOSTUNREACH)
			failed = true; /* and stays so while the retry is INCOMPLETE */
	}
	if (failed == p->gw_failed)
		return;
	p->gw_failed = failed;
	if (failed)
		p->c.gw_down++;
	if (dp->index != 0)
		return;
	inet_ntop(dp->family == 4 ? AF_INET : AF_INET6,
		  dp->family == 4 ? dp->cfg->ports[i].gw4.a : dp->cfg->ports[i].gw6.a, a, sizeof(a));
	if (failed)
		MRCD_LOG(WARNING, dp, "port %s (plane %u): gateway %s does not answer %s: FAILED, the "
			 "port is down for the engine until it does\n", p->name, i + 1, a,
			 dp->family == 4 ? "ARP" : "NDP");
	else
		MRCD_LOG(NOTICE, dp, "port %s (plane %u): gateway %s answers again\n", p->name, i + 1, a);
}

void mrcd__link_check(struct mrcd_dp *dp, unsigned i, uint64_t now)
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
	if (p->link_up)
		gateway_check(dp, i, now);
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

/* ---- transmit ring and fault stage ----------------------------------------------- */

void mrcd__port_flush(struct mrcd_dp *dp, unsigned i, struct mrcd_txb *b)
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

void mrcd__txb_add(struct mrcd_dp *dp, struct mrcd_txb *b, unsigned port, struct rte_mbuf *m)
{
	b[port].m[b[port].n++] = m;
	if (b[port].n == RTE_DIM(b[port].m))
		mrcd__port_flush(dp, port, &b[port]);
}

/* The fault stage, for either direction (a rule matched @port/@dir/@ev):
 * damage @m as the verdict says, copy it, and hold what is delayed in the
 * port's delay queue. @return how many frames go on now (0..2), in @out. */
unsigned mrcd__fault_stage(struct mrcd_dp *dp, unsigned port, enum mrcd_fault_dir dir, uint32_t ev,
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
