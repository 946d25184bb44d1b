/* dp_neigh.c - the neighbour table of mrcd's ports and their host-stack
 * replies (ARP, NDP NS/NA, ICMP echo), on plain bytes; knows nothing about
 * DPDK, mbufs or MRC. Every multi-byte wire field goes through mrcp_bytes.h. */
#include "dp_neigh.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mrcp_bytes.h"
#include "mrcp_csum.h"
#include "mrcp_frame.h"

#define ETH_P_IPV4 0x0800u
#define ETH_P_ARP 0x0806u
#define ETH_P_VLAN 0x8100u
#define ETH_P_IPV6 0x86DDu
#define VLAN_VID_MASK 0x0FFFu

#define ARP_LEN 28u     /* RFC 826 for Ethernet/IPv4 */
#define ARP_HTYPE_ETH 1u
#define ARP_OP_REQUEST 1u
#define ARP_OP_REPLY 2u

#define PROTO_ICMP 1u
#define PROTO_ICMPV6 58u
#define IPV4_FRAG_MASK 0x3FFFu /* MF + fragment offset */
#define ICMP_ECHO_REPLY 0u
#define ICMP_ECHO_REQUEST 8u
#define ICMP_HLEN 8u            /* type, code, checksum, id, seq */
#define ICMP6_ECHO_REQUEST 128u
#define ICMP6_ECHO_REPLY 129u
#define ND_NS 135u
#define ND_NA 136u
#define ND_MSG_LEN 24u          /* type, code, csum, flags/reserved, target */
#define ND_OPT_SLLA 1u
#define ND_OPT_TLLA 2u
#define ND_OPT_LL_LEN 8u        /* one unit: type, len, 6-byte MAC */
#define ND_HOP_LIMIT 255u       /* RFC 4861 7.1: proves the sender is on-link */
#define NA_FLAG_S 0x40u
#define NA_FLAG_O 0x20u
#define ECHO_TTL 64u            /* TTL / hop limit of our echo replies */

static const uint8_t mac_bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
static const uint8_t mac_zero[6];
static const uint8_t ip6_zero[16];
static const uint8_t ip6_all_nodes[16] = {0xff, 0x02, [15] = 0x01};
static const uint8_t mac_all_nodes[6] = {0x33, 0x33, 0, 0, 0, 0x01};

/* One neighbour. Keyed by (port, family, ip); IPv4 addresses are padded
 * with zeros to 16 bytes. Slots live in an open-addressing table with
 * linear probing and backward-shift deletion, so lookups never scan the
 * whole table and no tombstones pile up. */
struct entry {
	uint32_t hash;         /* of the key, cached for probing and deletion */
	bool used;
	bool has_mac;          /* mac is valid (REACHABLE, STATIC) */
	bool resolved;         /* asked for by mrcd_neigh_resolve(): not evicted unless FAILED */
	uint8_t state;         /* enum mrcd_neigh_state */
	uint8_t family;        /* 4 or 6 */
	uint8_t tries;         /* requests sent since the last confirmation */
	int16_t port;          /* -1: static, any port */
	uint8_t ip[16];
	uint8_t mac[6];
	uint64_t updated_ns;   /* last confirmation or state change, ns */
	uint64_t last_req_ns;  /* last request sent, ns; valid when tries > 0 */
};

struct port_state {
	bool set;
	struct mrcd_l2_port cfg;
	uint8_t ll6[16];       /* fe80::/64 + modified EUI-64 of cfg.mac */
	struct mrcd_neigh_counters c;
};

struct mrcd_neigh {
	unsigned n_ports;
	unsigned max_entries;
	unsigned count;        /* used slots */
	unsigned n_any_static; /* entries with port -1; skips a lookup when 0 */
	uint32_t mask;         /* slots - 1; slots is a power of two >= 2 * max_entries */
	struct port_state *ports;
	struct entry *slots;
};

/* ---- small helpers -------------------------------------------------------- */

/* Wrap-safe "at least @ns since @since" (style practice 9). */
static bool elapsed(uint64_t now, uint64_t since, uint64_t ns)
{
	return (int64_t)(now - since) >= (int64_t)ns;
}

static bool mac_eq(const uint8_t *a, const uint8_t *b)
{
	return memcmp(a, b, 6) == 0;
}

static bool mac_is_unicast(const uint8_t *m)
{
	return !(m[0] & 1u) && !mac_eq(m, mac_zero);
}

static bool ip6_is_multicast(const uint8_t *a)
{
	return a[0] == 0xff;
}

static bool ip6_is_link_local(const uint8_t *a)
{
	return a[0] == 0xfe && (a[1] & 0xc0) == 0x80;
}

static bool ip4_is_bad_source(const uint8_t *a)
{
	uint32_t v = mrcp_get_be32(a);

	return v == 0 || v == 0xFFFFFFFFu || (a[0] & 0xf0) == 0xe0;
}

static bool prefix_match(const uint8_t *a, const uint8_t *b, unsigned plen)
{
	unsigned full = plen / 8, rest = plen % 8;

	if (memcmp(a, b, full) != 0)
		return false;
	if (rest == 0)
		return true;
	uint8_t m = (uint8_t)(0xff << (8 - rest));
	return (a[full] & m) == (b[full] & m);
}

/* ff02::1:ffXX:XXXX (RFC 4291 2.7.1). */
static void ip6_solicited_node(uint8_t out[16], const uint8_t *addr)
{
	memset(out, 0, 16);
	out[0] = 0xff;
	out[1] = 0x02;
	out[11] = 0x01;
	out[12] = 0xff;
	memcpy(out + 13, addr + 13, 3);
}

static bool ip6_is_solicited_node_of(const uint8_t *dst, const uint8_t *addr)
{
	uint8_t g[16];

	ip6_solicited_node(g, addr);
	return memcmp(dst, g, 16) == 0;
}

/* ---- checksums (RFC 1071) ------------------------------------------------- */

/* Over the IPv6 pseudo-header (RFC 8200 8.1) and @len bytes of ICMPv6.
 * 0 when verifying a message that carries a correct checksum. */
static uint16_t icmp6_csum(const uint8_t *src, const uint8_t *dst, const uint8_t *msg, size_t len)
{
	uint64_t sum = mrcp_csum_pseudo(src, dst, 16, PROTO_ICMPV6, (uint32_t)len);

	return mrcp_csum_fold(mrcp_csum_add(sum, msg, len));
}

/* ---- the table ------------------------------------------------------------ */

static uint32_t key_hash(int port, uint8_t family, const uint8_t *ip16)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	h = (h ^ (uint8_t)port) * 16777619u;
	h = (h ^ family) * 16777619u;
	for (unsigned i = 0; i < 16; i++)
		h = (h ^ ip16[i]) * 16777619u;
	return h;
}

static void key_ip16(uint8_t out[16], uint8_t family, const uint8_t *ip)
{
	memset(out, 0, 16);
	memcpy(out, ip, family == 4 ? 4 : 16);
}

static int slot_find(const struct mrcd_neigh *n, int port, uint8_t family, const uint8_t *ip16)
{
	uint32_t h = key_hash(port, family, ip16);

	for (uint32_t i = h & n->mask;; i = (i + 1) & n->mask) {
		const struct entry *e = &n->slots[i];

		if (!e->used)
			return -1;
		if (e->hash == h && e->port == port && e->family == family &&
		    memcmp(e->ip, ip16, 16) == 0)
			return (int)i;
	}
}

/* Backward-shift deletion: move later members of the probe run into the
 * hole unless their home slot lies cyclically in (hole, j]. */
static void slot_delete(struct mrcd_neigh *n, uint32_t hole)
{
	uint32_t j = hole;

	n->slots[hole].used = false;
	n->count--;
	for (;;) {
		j = (j + 1) & n->mask;
		if (!n->slots[j].used)
			return;
		uint32_t home = n->slots[j].hash & n->mask;
		bool stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
		if (stays)
			continue;
		n->slots[hole] = n->slots[j];
		n->slots[j].used = false;
		hole = j;
	}
}

/* The oldest entry that is only learned or FAILED, or -1. */
static int pick_victim(const struct mrcd_neigh *n)
{
	int best = -1;

	for (uint32_t i = 0; i <= n->mask; i++) {
		const struct entry *e = &n->slots[i];

		if (!e->used || e->state == MRCD_NEIGH_STATIC)
			continue;
		if (e->resolved && e->state != MRCD_NEIGH_FAILED)
			continue;
		if (best < 0 || (int64_t)(e->updated_ns - n->slots[best].updated_ns) < 0)
			best = (int)i;
	}
	return best;
}

/* A zeroed slot holding the key, or -1 when the table is full (and nothing
 * may be, or can be, evicted). */
static int slot_insert(struct mrcd_neigh *n, int port, uint8_t family, const uint8_t *ip16,
		       bool evict)
{
	if (n->count >= n->max_entries) {
		int v = evict ? pick_victim(n) : -1;

		if (v < 0)
			return -1;
		slot_delete(n, (uint32_t)v);
	}
	uint32_t h = key_hash(port, family, ip16), i;

	for (i = h & n->mask; n->slots[i].used; i = (i + 1) & n->mask)
		;
	struct entry *e = &n->slots[i];
	memset(e, 0, sizeof(*e));
	e->used = true;
	e->hash = h;
	e->port = (int16_t)port;
	e->family = family;
	memcpy(e->ip, ip16, 16);
	n->count++;
	return (int)i;
}

int mrcd_neigh_create(unsigned n_ports, unsigned max_entries, struct mrcd_neigh **out)
{
	if (out == NULL || n_ports == 0 || n_ports > MRCD_NEIGH_MAX_PORTS || max_entries == 0 ||
	    max_entries > MRCD_NEIGH_MAX_ENTRIES)
		return -EINVAL;
	uint32_t slots = 8;
	while (slots < 2 * max_entries)
		slots *= 2;

	struct mrcd_neigh *n = calloc(1, sizeof(*n));
	if (n == NULL)
		return -ENOMEM;
	n->ports = calloc(n_ports, sizeof(*n->ports));
	n->slots = calloc(slots, sizeof(*n->slots));
	if (n->ports == NULL || n->slots == NULL) {
		mrcd_neigh_destroy(n);
		return -ENOMEM;
	}
	n->n_ports = n_ports;
	n->max_entries = max_entries;
	n->mask = slots - 1;
	*out = n;
	return 0;
}

void mrcd_neigh_destroy(struct mrcd_neigh *n)
{
	if (n == NULL)
		return;
	free(n->ports);
	free(n->slots);
	free(n);
}

static bool route_ok(const struct mrcd_l2_route *r)
{
	return (r->family == 4 && r->plen <= 32) || (r->family == 6 && r->plen <= 128);
}

int mrcd_neigh_set_port(struct mrcd_neigh *n, unsigned port, const struct mrcd_l2_port *p)
{
	if (n == NULL || p == NULL || port >= n->n_ports || !mac_is_unicast(p->mac) ||
	    (p->has_v4 && p->v4_plen > 32) || (p->has_v6 && p->v6_plen > 128) ||
	    p->n_routes > MRCD_NEIGH_MAX_ROUTES)
		return -EINVAL;
	for (unsigned k = 0; k < p->n_routes; k++)
		if (!route_ok(&p->routes[k]))
			return -EINVAL;
	struct port_state *ps = &n->ports[port];

	ps->cfg = *p;
	/* RFC 4291 2.5.1 / appendix A: flip the universal/local bit, put ff:fe
	 * in the middle. */
	memset(ps->ll6, 0, sizeof(ps->ll6));
	ps->ll6[0] = 0xfe;
	ps->ll6[1] = 0x80;
	ps->ll6[8] = p->mac[0] ^ 0x02;
	ps->ll6[9] = p->mac[1];
	ps->ll6[10] = p->mac[2];
	ps->ll6[11] = 0xff;
	ps->ll6[12] = 0xfe;
	ps->ll6[13] = p->mac[3];
	ps->ll6[14] = p->mac[4];
	ps->ll6[15] = p->mac[5];
	ps->set = true;
	return 0;
}

int mrcd_neigh_add_static(struct mrcd_neigh *n, int port, uint8_t family, const uint8_t *ip,
			  const uint8_t mac[6])
{
	uint8_t ip16[16];

	if (n == NULL || ip == NULL || mac == NULL || (family != 4 && family != 6) ||
	    port < -1 || (port >= 0 && (unsigned)port >= n->n_ports) || !mac_is_unicast(mac))
		return -EINVAL;
	key_ip16(ip16, family, ip);
	int i = slot_find(n, port, family, ip16);
	if (i < 0) {
		i = slot_insert(n, port, family, ip16, true);
		if (i < 0)
			return -ENOSPC;
		if (port < 0)
			n->n_any_static++;
	}
	struct entry *e = &n->slots[i];
	e->state = MRCD_NEIGH_STATIC;
	e->has_mac = true;
	e->tries = 0;
	e->updated_ns = 0;
	memcpy(e->mac, mac, 6);
	return 0;
}

/* Record @mac for (@port, @family, @ip) from a received frame. @create: add
 * an entry if there is none (never evicting); @override: replace a
 * different known MAC. Static entries are left alone. */
static void learn(struct mrcd_neigh *n, unsigned port, uint8_t family, const uint8_t *ip,
		  const uint8_t *mac, uint64_t now_ns, bool create, bool override)
{
	struct port_state *ps = &n->ports[port];
	uint8_t ip16[16];

	key_ip16(ip16, family, ip);
	if (n->n_any_static > 0 && slot_find(n, -1, family, ip16) >= 0)
		return;
	int i = slot_find(n, (int)port, family, ip16);
	if (i < 0) {
		if (!create)
			return;
		i = slot_insert(n, (int)port, family, ip16, false);
		if (i < 0) {
			ps->c.table_full++;
			return;
		}
	}
	struct entry *e = &n->slots[i];
	if (e->state == MRCD_NEIGH_STATIC)
		return;
	bool differs = !e->has_mac || !mac_eq(e->mac, mac);
	if (e->has_mac && differs && !override)
		return;
	if (differs || e->state != MRCD_NEIGH_REACHABLE)
		ps->c.learned++;
	memcpy(e->mac, mac, 6);
	e->has_mac = true;
	e->state = MRCD_NEIGH_REACHABLE;
	e->tries = 0;
	e->updated_ns = now_ns;
}

const char *mrcd_neigh_state_name(enum mrcd_neigh_state s)
{
	switch (s) {
	case MRCD_NEIGH_INCOMPLETE: return "INCOMPLETE";
	case MRCD_NEIGH_REACHABLE: return "REACHABLE";
	case MRCD_NEIGH_STATIC: return "STATIC";
	case MRCD_NEIGH_FAILED: return "FAILED";
	}
	return "-";
}

const char *mrcd_neigh_role_name(enum mrcd_neigh_role r)
{
	switch (r) {
	case MRCD_NEIGH_ROLE_HOST: return "host";
	case MRCD_NEIGH_ROLE_GATEWAY: return "gateway";
	case MRCD_NEIGH_ROLE_ROUTE: return "route";
	}
	return "?";
}

unsigned mrcd_neigh_count(const struct mrcd_neigh *n)
{
	return n == NULL ? 0 : n->count;
}

static const char *const counter_names[] = {
#define X(name, desc) #name,
	MRCD_NEIGH_COUNTERS(X)
#undef X
};
static const char *const counter_descs[] = {
#define X(name, desc) desc,
	MRCD_NEIGH_COUNTERS(X)
#undef X
};
#define N_COUNTERS (sizeof(counter_names) / sizeof(counter_names[0]))

const char *mrcd_neigh_counter_name(unsigned i)
{
	return i < N_COUNTERS ? counter_names[i] : NULL;
}

const char *mrcd_neigh_counter_desc(unsigned i)
{
	return i < N_COUNTERS ? counter_descs[i] : NULL;
}

void mrcd_neigh_counters_get(const struct mrcd_neigh *n, unsigned port,
			     struct mrcd_neigh_counters *out)
{
	if (out == NULL)
		return;
	if (n == NULL || port >= n->n_ports)
		memset(out, 0, sizeof(*out));
	else
		*out = n->ports[port].c;
}

/* ---- frame writing -------------------------------------------------------- */

/* The 802.1Q tag of a frame we write: none, or its TCI. */
struct tag {
	bool on;
	uint16_t tci;
};

static size_t eth_hlen(struct tag t)
{
	return MRCP_ETH_HLEN + (t.on ? MRCP_VLAN_HLEN : 0);
}

/* Bytes on the wire for @len bytes of frame: padded to the minimum (plus the
 * tag, so the frame is still long enough once a switch pops it). */
static size_t padded_len(size_t len, struct tag t)
{
	size_t min = MRCD_NEIGH_FRAME_MIN + (t.on ? MRCP_VLAN_HLEN : 0);

	return len < min ? min : len;
}

static size_t eth_put(uint8_t *f, const uint8_t *dst, const uint8_t *src, struct tag t,
		      uint16_t type)
{
	memcpy(f, dst, 6);
	memcpy(f + 6, src, 6);
	if (t.on) {
		mrcp_put_be16(f + 12, ETH_P_VLAN);
		mrcp_put_be16(f + 14, t.tci);
		mrcp_put_be16(f + 16, type);
		return MRCP_ETH_HLEN + MRCP_VLAN_HLEN;
	}
	mrcp_put_be16(f + 12, type);
	return MRCP_ETH_HLEN;
}

static size_t pad_frame(uint8_t *f, size_t len, struct tag t)
{
	size_t plen = padded_len(len, t);

	memset(f + len, 0, plen - len);
	return plen;
}

static struct tag port_tag(const struct port_state *ps)
{
	return (struct tag){.on = ps->cfg.vlan, .tci = ps->cfg.vlan_tci};
}

static void ip6_hdr_put(uint8_t *p, uint32_t vtcfl, uint16_t plen, uint8_t hop,
			const uint8_t *src, const uint8_t *dst)
{
	mrcp_put_be32(p, vtcfl);
	mrcp_put_be16(p + 4, plen);
	p[6] = PROTO_ICMPV6;
	p[7] = hop;
	memcpy(p + 8, src, 16);
	memcpy(p + 24, dst, 16);
}

/* NS or NA with one link-layer option carrying our MAC. Returns the frame
 * length (padded). The caller has checked the capacity. */
static size_t nd_put(uint8_t *f, const struct port_state *ps, struct tag t, const uint8_t *eth_dst,
		     const uint8_t *src, const uint8_t *dst, uint8_t type, uint8_t flags,
		     const uint8_t *target)
{
	size_t off = eth_put(f, eth_dst, ps->cfg.mac, t, ETH_P_IPV6);
	uint8_t *ip = f + off, *m = ip + MRCP_IPV6_HLEN;
	uint16_t mlen = ND_MSG_LEN + ND_OPT_LL_LEN;

	ip6_hdr_put(ip, 0x60000000u, mlen, ND_HOP_LIMIT, src, dst);
	memset(m, 0, mlen);
	m[0] = type;
	m[4] = flags;
	memcpy(m + 8, target, 16);
	m[24] = type == ND_NS ? ND_OPT_SLLA : ND_OPT_TLLA;
	m[25] = 1;
	memcpy(m + 26, ps->cfg.mac, 6);
	mrcp_put_be16(m + 2, icmp6_csum(src, dst, m, mlen));
	return pad_frame(f, off + MRCP_IPV6_HLEN + mlen, t);
}

static size_t arp_put(uint8_t *f, const struct port_state *ps, struct tag t, const uint8_t *eth_dst,
		      uint16_t op, const uint8_t *spa, const uint8_t *tha, const uint8_t *tpa)
{
	size_t off = eth_put(f, eth_dst, ps->cfg.mac, t, ETH_P_ARP);
	uint8_t *a = f + off;

	mrcp_put_be16(a, ARP_HTYPE_ETH);
	mrcp_put_be16(a + 2, ETH_P_IPV4);
	a[4] = 6;
	a[5] = 4;
	mrcp_put_be16(a + 6, op);
	memcpy(a + 8, ps->cfg.mac, 6);
	memcpy(a + 14, spa, 4);
	memcpy(a + 18, tha, 6);
	memcpy(a + 24, tpa, 4);
	return pad_frame(f, off + ARP_LEN, t);
}

/* ---- resolution ----------------------------------------------------------- */

/* Request for @e: unicast to its cached MAC for the first tries of a stale
 * refresh, else broadcast / solicited-node multicast. */
static size_t request_put(uint8_t *f, struct port_state *ps, const struct entry *e)
{
	struct tag t = port_tag(ps);
	bool ucast = e->has_mac && e->tries < MRCD_NEIGH_UNICAST_TRIES;

	if (e->family == 4) {
		static const uint8_t none[4];

		ps->c.arp_tx_req++;
		return arp_put(f, ps, t, ucast ? e->mac : mac_bcast, ARP_OP_REQUEST,
			       ps->cfg.has_v4 ? ps->cfg.v4 : none, mac_zero, e->ip);
	}
	uint8_t dst[16], eth_dst[6];
	const uint8_t *src =
		ip6_is_link_local(e->ip) || !ps->cfg.has_v6 ? ps->ll6 : ps->cfg.v6;

	if (ucast) {
		memcpy(dst, e->ip, 16);
		memcpy(eth_dst, e->mac, 6);
	} else {
		ip6_solicited_node(dst, e->ip);
		eth_dst[0] = 0x33;
		eth_dst[1] = 0x33;
		memcpy(eth_dst + 2, dst + 12, 4);
	}
	ps->c.ns_tx++;
	return nd_put(f, ps, t, eth_dst, src, dst, ND_NS, 0, e->ip);
}

/* The next hop for @ip on @ps (mrcd_neigh_next_hop's order): the via, with
 * *@hop pointing at the address, or -1 if there is no route. */
static int next_hop(const struct port_state *ps, uint8_t family, const uint8_t *ip,
		    const uint8_t **hop)
{
	const struct mrcd_l2_port *c = &ps->cfg;
	const struct mrcd_l2_route *best = NULL;

	if (family == 4 ? !c->has_v4 || prefix_match(ip, c->v4, c->v4_plen)
			: ip6_is_link_local(ip) || !c->has_v6 || prefix_match(ip, c->v6, c->v6_plen)) {
		*hop = ip;
		return MRCD_NEIGH_VIA_LINK;
	}
	for (unsigned k = 0; k < c->n_routes; k++) {
		const struct mrcd_l2_route *r = &c->routes[k];

		if (r->family == family && (best == NULL || r->plen > best->plen) &&
		    prefix_match(ip, r->prefix, r->plen))
			best = r;
	}
	if (best != NULL) {
		*hop = best->via;
		return MRCD_NEIGH_VIA_ROUTE;
	}
	if (family == 4 ? c->has_gw4 : c->has_gw6) {
		*hop = family == 4 ? c->gw4 : c->gw6;
		return MRCD_NEIGH_VIA_GATEWAY;
	}
	return -1;
}

int mrcd_neigh_next_hop(const struct mrcd_neigh *n, unsigned port, uint8_t family,
			const uint8_t *ip, uint8_t hop[16])
{
	const uint8_t *h;
	int via;

	if (n == NULL || ip == NULL || hop == NULL || port >= n->n_ports ||
	    (family != 4 && family != 6))
		return -EINVAL;
	if (!n->ports[port].set || (via = next_hop(&n->ports[port], family, ip, &h)) < 0)
		return -EHOSTUNREACH;
	key_ip16(hop, family, h);
	return via;
}

/* The MAC of the on-link next hop @hop (the entry's state machine). */
static int resolve_hop(struct mrcd_neigh *n, unsigned port, uint8_t family, const uint8_t *hop,
		       uint64_t now_ns, uint8_t mac[6], uint8_t *req, size_t *req_len)
{
	struct port_state *ps = &n->ports[port];
	uint8_t ip16[16];
	int i;

	key_ip16(ip16, family, hop);
	if (n->n_any_static > 0 && (i = slot_find(n, -1, family, ip16)) >= 0) {
		memcpy(mac, n->slots[i].mac, 6);
		return 0;
	}
	i = slot_find(n, (int)port, family, ip16);
	if (i < 0) {
		i = slot_insert(n, (int)port, family, ip16, true);
		if (i < 0) {
			ps->c.table_full++;
			return -ENOSPC;
		}
		n->slots[i].state = MRCD_NEIGH_INCOMPLETE;
		n->slots[i].updated_ns = now_ns;
	}
	struct entry *e = &n->slots[i];
	e->resolved = true;

	switch (e->state) {
	case MRCD_NEIGH_STATIC:
		memcpy(mac, e->mac, 6);
		return 0;
	case MRCD_NEIGH_REACHABLE:
		memcpy(mac, e->mac, 6);
		if (!elapsed(now_ns, e->updated_ns, MRCD_NEIGH_STALE_NS))
			return 0;
		break; /* stale: refresh below, keep using the MAC */
	case MRCD_NEIGH_FAILED:
		if (!elapsed(now_ns, e->updated_ns, MRCD_NEIGH_FAIL_HOLD_NS)) {
			ps->c.resolve_fail++;
			return -EHOSTUNREACH;
		}
		/* Hold over: ask again, but it stays FAILED until it answers, so
		 * the table, the port's gateway state and traffic agree. */
		break;
	default: /* INCOMPLETE */
		break;
	}

	bool due = e->tries == 0 || elapsed(now_ns, e->last_req_ns, MRCD_NEIGH_REQ_INTERVAL_NS);
	if (due && e->tries >= MRCD_NEIGH_MAX_TRIES) {
		/* The last request had its interval to be answered. */
		e->state = MRCD_NEIGH_FAILED;
		e->has_mac = false;
		memset(e->mac, 0, 6);
		e->tries = 0;
		e->updated_ns = now_ns;
		ps->c.resolve_fail++;
		return -EHOSTUNREACH;
	}
	if (due) {
		*req_len = request_put(req, ps, e);
		e->tries++;
		e->last_req_ns = now_ns;
	}
	if (e->state == MRCD_NEIGH_FAILED) {
		ps->c.resolve_fail++;
		return -EHOSTUNREACH;
	}
	return e->state == MRCD_NEIGH_REACHABLE ? 0 : -EAGAIN;
}

static bool resolve_args_ok(const struct mrcd_neigh *n, unsigned port, uint8_t family,
			    const uint8_t *ip, const uint8_t *req, size_t cap,
			    const size_t *req_len)
{
	return n != NULL && ip != NULL && req != NULL && req_len != NULL &&
	       cap >= MRCD_NEIGH_REQ_MAX && port < n->n_ports && (family == 4 || family == 6);
}


int mrcd_neigh_resolve(struct mrcd_neigh *n, unsigned port, uint8_t family, const uint8_t *ip,
		       uint64_t now_ns, uint8_t mac[6], uint8_t *req, size_t cap, size_t *req_len)
{
	if (req_len != NULL)
		*req_len = 0;
	if (mac == NULL || !resolve_args_ok(n, port, family, ip, req, cap, req_len))
		return -EINVAL;
	struct port_state *ps = &n->ports[port];
	const uint8_t *hop = NULL;
	int via = ps->set ? next_hop(ps, family, ip, &hop) : -1;

	switch (via) {
	case MRCD_NEIGH_VIA_LINK:
		ps->c.via_link++;
		break;
	case MRCD_NEIGH_VIA_ROUTE:
		ps->c.via_route++;
		break;
	case MRCD_NEIGH_VIA_GATEWAY:
		ps->c.via_gateway++;
		break;
	default:
		ps->c.resolve_fail++;
		return -EHOSTUNREACH;
	}
	return resolve_hop(n, port, family, hop, now_ns, mac, req, req_len);
}

int mrcd_neigh_refresh(struct mrcd_neigh *n, unsigned port, uint8_t family, const uint8_t *hop,
		       uint64_t now_ns, uint8_t mac[6], uint8_t *req, size_t cap, size_t *req_len)
{
	uint8_t dummy[6];

	if (req_len != NULL)
		*req_len = 0;
	if (!resolve_args_ok(n, port, family, hop, req, cap, req_len))
		return -EINVAL;
	if (!n->ports[port].set) {
		n->ports[port].c.resolve_fail++;
		return -EHOSTUNREACH;
	}
	return resolve_hop(n, port, family, hop, now_ns, mac != NULL ? mac : dummy, req, req_len);
}

static bool hop_listed(const struct mrcd_neigh_hop *out, unsigned k, uint8_t family,
		       const uint8_t *ip16)
{
	for (unsigned i = 0; i < k; i++)
		if (out[i].family == family && memcmp(out[i].ip, ip16, 16) == 0)
			return true;
	return false;
}

unsigned mrcd_neigh_port_hops(const struct mrcd_neigh *n, unsigned port,
			      struct mrcd_neigh_hop *out, unsigned max)
{
	unsigned k = 0;

	if (n == NULL || out == NULL || port >= n->n_ports || !n->ports[port].set)
		return 0;
	const struct mrcd_l2_port *c = &n->ports[port].cfg;
	struct mrcd_neigh_hop h;

	for (unsigned i = 0; i < 2 + c->n_routes && k < max; i++) {
		memset(&h, 0, sizeof(h));
		if (i == 0 && c->has_gw4) {
			h.family = 4;
			key_ip16(h.ip, 4, c->gw4);
			h.role = MRCD_NEIGH_ROLE_GATEWAY;
		} else if (i == 1 && c->has_gw6) {
			h.family = 6;
			key_ip16(h.ip, 6, c->gw6);
			h.role = MRCD_NEIGH_ROLE_GATEWAY;
		} else if (i >= 2) {
			h.family = c->routes[i - 2].family;
			key_ip16(h.ip, h.family, c->routes[i - 2].via);
			h.role = MRCD_NEIGH_ROLE_ROUTE;
		} else {
			continue;
		}
		if (!hop_listed(out, k, h.family, h.ip))
			out[k++] = h;
	}
	return k;
}

/* What (@family, @ip16) is to @port: its gateway, a route's via, or a host. */
static enum mrcd_neigh_role role_on(const struct mrcd_neigh *n, unsigned port, uint8_t family,
				    const uint8_t *ip16)
{
	struct mrcd_neigh_hop hops[2 + MRCD_NEIGH_MAX_ROUTES];
	unsigned k = mrcd_neigh_port_hops(n, port, hops, 2 + MRCD_NEIGH_MAX_ROUTES);

	for (unsigned i = 0; i < k; i++)
		if (hops[i].family == family && memcmp(hops[i].ip, ip16, 16) == 0)
			return hops[i].role;
	return MRCD_NEIGH_ROLE_HOST;
}

/* An entry as listed; its role is to its own port, or for an any-port
 * static entry to the first port it is a router of. */
static void entry_out(const struct mrcd_neigh *n, const struct entry *e,
		      struct mrcd_neigh_entry *o)
{
	memset(o, 0, sizeof(*o));
	o->port = e->port;
	o->family = e->family;
	memcpy(o->ip, e->ip, 16);
	if (e->has_mac)
		memcpy(o->mac, e->mac, 6);
	o->state = (enum mrcd_neigh_state)e->state;
	o->updated_ns = e->updated_ns;
	if (e->port >= 0) {
		o->role = role_on(n, (unsigned)e->port, e->family, e->ip);
		return;
	}
	for (unsigned p = 0; p < n->n_ports && o->role == MRCD_NEIGH_ROLE_HOST; p++)
		o->role = role_on(n, p, e->family, e->ip);
}

unsigned mrcd_neigh_list(const struct mrcd_neigh *n, struct mrcd_neigh_entry *out, unsigned max)
{
	unsigned k = 0;

	if (n == NULL || out == NULL)
		return 0;
	for (uint32_t i = 0; i <= n->mask && k < max; i++)
		if (n->slots[i].used)
			entry_out(n, &n->slots[i], &out[k++]);
	return k;
}

int mrcd_neigh_lookup(const struct mrcd_neigh *n, unsigned port, uint8_t family,
		      const uint8_t *ip, struct mrcd_neigh_entry *out)
{
	uint8_t ip16[16];
	int i = -1;

	if (n == NULL || ip == NULL || out == NULL || port >= n->n_ports ||
	    (family != 4 && family != 6))
		return -EINVAL;
	key_ip16(ip16, family, ip);
	if (n->n_any_static > 0)
		i = slot_find(n, -1, family, ip16);
	if (i < 0)
		i = slot_find(n, (int)port, family, ip16);
	if (i < 0)
		return -ENOENT;
	entry_out(n, &n->slots[i], out);
	return 0;
}

/* ---- input ---------------------------------------------------------------- */

/* One received frame, as mrcd_l2_input() sees it. */
struct rx {
	struct mrcd_neigh *n;
	unsigned port;
	struct port_state *ps;
	const uint8_t *f;   /* frame start (Ethernet header) */
	size_t len;         /* frame bytes */
	size_t l3;          /* offset of the Ethernet payload */
	struct tag tag;     /* for the reply: the received tag, else the port's */
	uint64_t now_ns;
	uint8_t *out;       /* reply buffer */
	size_t cap;
	size_t *out_len;
};

static enum mrcd_l2_verdict malformed(struct rx *r)
{
	r->ps->c.malformed++;
	return MRCD_L2_CONSUMED;
}

static enum mrcd_l2_verdict ignored(struct rx *r)
{
	r->ps->c.ignored++;
	return MRCD_L2_CONSUMED;
}

/* Room for a reply of @len bytes (before padding)? Counts when not. */
static bool reply_fits(struct rx *r, size_t len)
{
	if (r->out != NULL && padded_len(len, r->tag) <= r->cap)
		return true;
	r->ps->c.tx_nobufs++;
	return false;
}

static enum mrcd_l2_verdict arp_input(struct rx *r)
{
	const struct mrcd_l2_port *c = &r->ps->cfg;
	const uint8_t *a = r->f + r->l3;

	r->ps->c.arp_rx++;
	if (r->len - r->l3 < ARP_LEN)
		return malformed(r);
	uint16_t op = mrcp_get_be16(a + 6);
	if (mrcp_get_be16(a) != ARP_HTYPE_ETH || mrcp_get_be16(a + 2) != ETH_P_IPV4 ||
	    a[4] != 6 || a[5] != 4 || (op != ARP_OP_REQUEST && op != ARP_OP_REPLY))
		return malformed(r);
	const uint8_t *sha = a + 8, *spa = a + 14, *tpa = a + 24;
	if (!mac_is_unicast(sha))
		return malformed(r);
	if (mac_eq(sha, c->mac))
		return ignored(r); /* our own frame, looped back */
	if (c->has_v4 && memcmp(spa, c->v4, 4) == 0)
		return ignored(r); /* someone else claims our address */

	bool for_us = c->has_v4 && memcmp(tpa, c->v4, 4) == 0;
	/* RFC 826: update the sender if known; add it if we are the target.
	 * 0.0.0.0 is an address probe (RFC 5227), nothing to learn. */
	if (mrcp_get_be32(spa) != 0)
		learn(r->n, r->port, 4, spa, sha, r->now_ns, for_us, true);
	if (!for_us)
		return ignored(r);
	if (op != ARP_OP_REQUEST)
		return MRCD_L2_CONSUMED;
	if (!reply_fits(r, eth_hlen(r->tag) + ARP_LEN))
		return MRCD_L2_CONSUMED;
	*r->out_len = arp_put(r->out, r->ps, r->tag, sha, ARP_OP_REPLY, c->v4, sha, spa);
	r->ps->c.arp_tx_reply++;
	return MRCD_L2_REPLY;
}

static enum mrcd_l2_verdict ip4_input(struct rx *r)
{
	const struct mrcd_l2_port *c = &r->ps->cfg;
	const uint8_t *p = r->f + r->l3;
	size_t avail = r->len - r->l3;

	if (avail < MRCP_IPV4_HLEN)
		return MRCD_L2_NOT_MINE;
	if (!c->has_v4 || p[9] != PROTO_ICMP || memcmp(p + 16, c->v4, 4) != 0)
		return MRCD_L2_NOT_MINE;
	/* ICMP to us from here on. */
	size_t ihl = (size_t)(p[0] & 0x0f) * 4, tot = mrcp_get_be16(p + 2);
	if (p[0] >> 4 != 4 || ihl < MRCP_IPV4_HLEN || tot < ihl || tot > avail ||
	    mrcp_csum(p, ihl) != 0)
		return malformed(r);
	if (mrcp_get_be16(p + 6) & IPV4_FRAG_MASK)
		return MRCD_L2_NOT_MINE; /* a fragment: nothing here reassembles */
	const uint8_t *m = p + ihl;
	size_t mlen = tot - ihl;
	if (mlen < ICMP_HLEN)
		return malformed(r);
	if (m[0] != ICMP_ECHO_REQUEST)
		return MRCD_L2_NOT_MINE;
	if (m[1] != 0 || mrcp_csum(m, mlen) != 0 || ip4_is_bad_source(p + 12) ||
	    !mac_is_unicast(r->f + 6))
		return malformed(r);

	size_t hl = eth_hlen(r->tag);
	if (!reply_fits(r, hl + MRCP_IPV4_HLEN + mlen))
		return MRCD_L2_CONSUMED;
	uint8_t *o = r->out;
	eth_put(o, r->f + 6, c->mac, r->tag, ETH_P_IPV4);
	uint8_t *q = o + hl;
	q[0] = 0x45;
	q[1] = p[1];
	mrcp_put_be16(q + 2, (uint16_t)(MRCP_IPV4_HLEN + mlen));
	memcpy(q + 4, p + 4, 2); /* identification */
	mrcp_put_be16(q + 6, 0);
	q[8] = ECHO_TTL;
	q[9] = PROTO_ICMP;
	memcpy(q + 12, c->v4, 4);
	memcpy(q + 16, p + 12, 4);
	mrcp_csum_ipv4_set(q, MRCP_IPV4_HLEN);
	uint8_t *om = q + MRCP_IPV4_HLEN;
	memcpy(om, m, mlen);
	om[0] = ICMP_ECHO_REPLY;
	mrcp_put_be16(om + 2, 0);
	mrcp_put_be16(om + 2, mrcp_csum(om, mlen));
	*r->out_len = pad_frame(o, hl + MRCP_IPV4_HLEN + mlen, r->tag);
	r->ps->c.icmp_echo++;
	return MRCD_L2_REPLY;
}

static bool ip6_is_ours(const struct port_state *ps, const uint8_t *a)
{
	return memcmp(a, ps->ll6, 16) == 0 || (ps->cfg.has_v6 && memcmp(a, ps->cfg.v6, 16) == 0);
}

/* Walk the NDP options of @m (@mlen bytes, options from ND_MSG_LEN); find a
 * link-layer option of @type. false if an option is malformed (RFC 4861
 * 4.6: length 0, or running past the message). */
static bool nd_options(const uint8_t *m, size_t mlen, uint8_t type, const uint8_t **lla)
{
	*lla = NULL;
	for (size_t off = ND_MSG_LEN; off < mlen;) {
		if (mlen - off < 2)
			return false;
		size_t olen = (size_t)m[off + 1] * 8;
		if (olen == 0 || olen > mlen - off)
			return false;
		/* An Ethernet link-layer option is exactly one unit; others
		 * are skipped. */
		if (m[off] == type && olen == ND_OPT_LL_LEN)
			*lla = m + off + 2;
		off += olen;
	}
	return true;
}

static enum mrcd_l2_verdict ns_input(struct rx *r, const uint8_t *ip, const uint8_t *m,
				     size_t mlen, bool dst_snm)
{
	const uint8_t *src = ip + 8, *target = m + 8, *slla;

	if (ip[7] != ND_HOP_LIMIT || m[1] != 0 || mlen < ND_MSG_LEN || ip6_is_multicast(target) ||
	    !nd_options(m, mlen, ND_OPT_SLLA, &slla))
		return malformed(r);
	bool dad = memcmp(src, ip6_zero, 16) == 0;
	if (dad && (slla != NULL || !dst_snm))
		return malformed(r); /* RFC 4861 7.1.1 */
	if (slla != NULL && !mac_is_unicast(slla))
		return malformed(r);
	if (!dad && slla == NULL && !mac_is_unicast(r->f + 6))
		return malformed(r); /* nowhere to send the answer */
	if (!ip6_is_ours(r->ps, target))
		return ignored(r);
	r->ps->c.ns_rx++;
	if (!dad && slla != NULL)
		learn(r->n, r->port, 6, src, slla, r->now_ns, true, true);

	/* RFC 4861 7.2.4: answer the source, or all-nodes for DAD (S clear). */
	const uint8_t *dst = dad ? ip6_all_nodes : src;
	const uint8_t *eth_dst = dad ? mac_all_nodes : slla != NULL ? slla : r->f + 6;
	if (!reply_fits(r, eth_hlen(r->tag) + MRCP_IPV6_HLEN + ND_MSG_LEN + ND_OPT_LL_LEN))
		return MRCD_L2_CONSUMED;
	*r->out_len = nd_put(r->out, r->ps, r->tag, eth_dst, target, dst, ND_NA,
			     (uint8_t)(dad ? NA_FLAG_O : NA_FLAG_S | NA_FLAG_O), target);
	r->ps->c.na_tx++;
	return MRCD_L2_REPLY;
}

static enum mrcd_l2_verdict na_input(struct rx *r, const uint8_t *ip, const uint8_t *m,
				     size_t mlen)
{
	const uint8_t *target = m + 8, *tlla;

	r->ps->c.na_rx++;
	if (ip[7] != ND_HOP_LIMIT || m[1] != 0 || mlen < ND_MSG_LEN || ip6_is_multicast(target) ||
	    (ip6_is_multicast(ip + 24) && (m[4] & NA_FLAG_S)) ||
	    !nd_options(m, mlen, ND_OPT_TLLA, &tlla))
		return malformed(r); /* RFC 4861 7.1.2 */
	if (tlla != NULL && !mac_is_unicast(tlla))
		return malformed(r);
	if (ip6_is_ours(r->ps, target) || tlla == NULL)
		return ignored(r);
	/* RFC 4861 7.2.5: no entry, no learning; O clear keeps a known MAC. */
	learn(r->n, r->port, 6, target, tlla, r->now_ns, false, (m[4] & NA_FLAG_O) != 0);
	return MRCD_L2_CONSUMED;
}

static enum mrcd_l2_verdict echo6_input(struct rx *r, const uint8_t *ip, const uint8_t *m,
					size_t mlen)
{
	if (m[1] != 0 || mlen < ICMP_HLEN || !mac_is_unicast(r->f + 6) ||
	    ip6_is_multicast(ip + 8) || memcmp(ip + 8, ip6_zero, 16) == 0)
		return malformed(r);
	size_t hl = eth_hlen(r->tag);
	if (!reply_fits(r, hl + MRCP_IPV6_HLEN + mlen))
		return MRCD_L2_CONSUMED;
	uint8_t *o = r->out, *q = o + hl, *om = q + MRCP_IPV6_HLEN;
	eth_put(o, r->f + 6, r->ps->cfg.mac, r->tag, ETH_P_IPV6);
	/* Keep traffic class and flow label; swap the addresses. */
	ip6_hdr_put(q, mrcp_get_be32(ip), (uint16_t)mlen, ECHO_TTL, ip + 24, ip + 8);
	memcpy(om, m, mlen);
	om[0] = ICMP6_ECHO_REPLY;
	mrcp_put_be16(om + 2, 0);
	mrcp_put_be16(om + 2, icmp6_csum(q + 8, q + 24, om, mlen));
	*r->out_len = pad_frame(o, hl + MRCP_IPV6_HLEN + mlen, r->tag);
	r->ps->c.icmp6_echo++;
	return MRCD_L2_REPLY;
}

static enum mrcd_l2_verdict ip6_input(struct rx *r)
{
	const struct port_state *ps = r->ps;
	const uint8_t *p = r->f + r->l3;
	size_t avail = r->len - r->l3;

	if (avail < MRCP_IPV6_HLEN || p[0] >> 4 != 6 || p[6] != PROTO_ICMPV6)
		return MRCD_L2_NOT_MINE;
	const uint8_t *dst = p + 24;
	bool ucast = ip6_is_ours(ps, dst);
	bool snm = ip6_is_solicited_node_of(dst, ps->ll6) ||
		   (ps->cfg.has_v6 && ip6_is_solicited_node_of(dst, ps->cfg.v6));
	if (!ucast && !snm && memcmp(dst, ip6_all_nodes, 16) != 0)
		return MRCD_L2_NOT_MINE;
	/* ICMPv6 to us from here on. */
	size_t mlen = mrcp_get_be16(p + 4);
	if (mlen < 4 || mlen > avail - MRCP_IPV6_HLEN)
		return malformed(r);
	const uint8_t *m = p + MRCP_IPV6_HLEN;
	if (m[0] != ND_NS && m[0] != ND_NA && (m[0] != ICMP6_ECHO_REQUEST || !ucast))
		return MRCD_L2_NOT_MINE;
	if (ip6_is_multicast(p + 8) || icmp6_csum(p + 8, dst, m, mlen) != 0)
		return malformed(r);
	switch (m[0]) {
	case ND_NS:
		return ns_input(r, p, m, mlen, snm);
	case ND_NA:
		return na_input(r, p, m, mlen);
	default:
		return echo6_input(r, p, m, mlen);
	}
}

enum mrcd_l2_verdict mrcd_l2_input(struct mrcd_neigh *n, unsigned port, const uint8_t *frame,
				   size_t len, uint64_t now_ns, uint8_t *reply, size_t cap,
				   size_t *reply_len)
{
	size_t dummy;

	if (reply_len == NULL)
		reply_len = &dummy;
	*reply_len = 0;
	if (n == NULL || frame == NULL || port >= n->n_ports || !n->ports[port].set ||
	    len < MRCP_ETH_HLEN)
		return MRCD_L2_NOT_MINE;
	struct port_state *ps = &n->ports[port];
	struct rx r = {
		.n = n, .port = port, .ps = ps, .f = frame, .len = len,
		.l3 = MRCP_ETH_HLEN, .tag = port_tag(ps), .now_ns = now_ns,
		.out = reply, .cap = cap, .out_len = reply_len,
	};
	uint16_t type = mrcp_get_be16(frame + 12);

	if (type == ETH_P_VLAN) {
		if (len < MRCP_ETH_HLEN + MRCP_VLAN_HLEN)
			return MRCD_L2_NOT_MINE;
		uint16_t tci = mrcp_get_be16(frame + 14);
		if (ps->cfg.vlan && (tci & VLAN_VID_MASK) != (ps->cfg.vlan_tci & VLAN_VID_MASK))
			return MRCD_L2_NOT_MINE;
		r.tag = (struct tag){.on = true, .tci = tci};
		type = mrcp_get_be16(frame + 16);
		r.l3 += MRCP_VLAN_HLEN;
	}
	bool to_us = mac_eq(frame, ps->cfg.mac);
	switch (type) {
	case ETH_P_ARP:
		return to_us || mac_eq(frame, mac_bcast) ? arp_input(&r) : MRCD_L2_NOT_MINE;
	case ETH_P_IPV4:
		return to_us ? ip4_input(&r) : MRCD_L2_NOT_MINE;
	case ETH_P_IPV6:
		/* 33:33:x: IPv6 multicast; ip6_input() checks the group is ours. */
		return to_us || (frame[0] == 0x33 && frame[1] == 0x33) ? ip6_input(&r)
								      : MRCD_L2_NOT_MINE;
	default:
		return MRCD_L2_NOT_MINE;
	}
}
