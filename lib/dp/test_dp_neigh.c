/* test_dp_neigh.c - unit tests for dp_neigh.c: frames are built here by hand,
 * replies are compared byte by byte, and checksums are checked with the
 * test's own (deliberately different) implementation. */
#include "dp_neigh.h"

#include <errno.h>

#include "mrcp_test.h"

#define MS 1000000ull
#define S 1000000000ull
#define T0 (5 * S) /* a start time that is not 0 */

static const uint8_t our_mac[6] = {0x02, 0x11, 0x22, 0x33, 0x44, 0x55};
static const uint8_t our1_mac[6] = {0x02, 0x11, 0x22, 0x33, 0x44, 0x66};
static const uint8_t peer_mac[6] = {0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0xee};
static const uint8_t peer2_mac[6] = {0x02, 0x99, 0x88, 0x77, 0x66, 0x55};
static const uint8_t other_mac[6] = {0x02, 0x01, 0x01, 0x01, 0x01, 0x01};
static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
static const uint8_t zero6[6];

static const uint8_t our_v4[4] = {10, 0, 0, 1};
static const uint8_t peer_v4[4] = {10, 0, 0, 2};
static const uint8_t peer3_v4[4] = {10, 0, 0, 3};
static const uint8_t gw_v4[4] = {10, 0, 0, 254};
static const uint8_t far_v4[4] = {192, 168, 7, 9};
static const uint8_t far2_v4[4] = {192, 168, 7, 10};
static const uint8_t our1_v4[4] = {10, 1, 0, 1};

static const uint8_t our_v6[16] = {0x20, 0x01, 0x0d, 0xb8, [15] = 1};
static const uint8_t peer_v6[16] = {0x20, 0x01, 0x0d, 0xb8, [15] = 2};
static const uint8_t far_v6[16] = {0x20, 0x01, 0x0d, 0xb9, [15] = 9};
static const uint8_t gw_v6[16] = {0xfe, 0x80, [15] = 0xfe};
static const uint8_t peer_ll[16] = {0xfe, 0x80, [8] = 0x00, 0xaa, 0xbb, 0xff, 0xfe, 0xcc, 0xdd, 0xee};
/* fe80::/64 + EUI-64 of 02:11:22:33:44:55: the U/L bit flips to 0. */
static const uint8_t our_ll[16] = {0xfe, 0x80, [8] = 0x00, 0x11, 0x22, 0xff, 0xfe, 0x33, 0x44, 0x55};
static const uint8_t all_nodes[16] = {0xff, 0x02, [15] = 1};
static const uint8_t unspec[16];

/* ---- fixture --------------------------------------------------------------- */

/* Port 0: 10.0.0.1/24 via 10.0.0.254, 2001:db8::1/64 via fe80::fe.
 * Port 1: 10.1.0.1/24, no gateway, no IPv6 global address. */
/* Port 0's identity (mk, mk_routed). */
static void port0(struct mrcd_l2_port *p)
{
	memset(p, 0, sizeof(*p));
	memcpy(p->mac, our_mac, 6);
	p->has_v4 = true;
	memcpy(p->v4, our_v4, 4);
	p->v4_plen = 24;
	p->has_gw4 = true;
	memcpy(p->gw4, gw_v4, 4);
	p->has_v6 = true;
	memcpy(p->v6, our_v6, 16);
	p->v6_plen = 64;
	p->has_gw6 = true;
	memcpy(p->gw6, gw_v6, 16);
}

static struct mrcd_neigh *mk(unsigned max_entries)
{
	struct mrcd_neigh *n = NULL;
	struct mrcd_l2_port p;

	ASSERT_EQ(0, mrcd_neigh_create(3, max_entries, &n));
	port0(&p);
	ASSERT_EQ(0, mrcd_neigh_set_port(n, 0, &p));

	struct mrcd_l2_port q = {0};
	memcpy(q.mac, our1_mac, 6);
	q.has_v4 = true;
	memcpy(q.v4, our1_v4, 4);
	q.v4_plen = 24;
	ASSERT_EQ(0, mrcd_neigh_set_port(n, 1, &q));
	/* port 2 stays unset */
	return n;
}

static uint8_t rbuf[16384];
static size_t rlen;

static enum mrcd_l2_verdict in(struct mrcd_neigh *n, unsigned port, const uint8_t *f, size_t len,
			       uint64_t now)
{
	memset(rbuf, 0xA5, sizeof(rbuf));
	rlen = 12345;
	return mrcd_l2_input(n, port, f, len, now, rbuf, sizeof(rbuf), &rlen);
}

static uint8_t qbuf[256];
static size_t qlen;

static int res(struct mrcd_neigh *n, unsigned port, uint8_t family, const uint8_t *ip,
	       uint64_t now, uint8_t mac[6])
{
	memset(qbuf, 0xA5, sizeof(qbuf));
	qlen = 12345;
	return mrcd_neigh_resolve(n, port, family, ip, now, mac, qbuf, sizeof(qbuf), &qlen);
}

static struct mrcd_neigh_counters ctr(const struct mrcd_neigh *n, unsigned port)
{
	struct mrcd_neigh_counters c;

	mrcd_neigh_counters_get(n, port, &c);
	return c;
}

static bool find(const struct mrcd_neigh *n, int port, uint8_t family, const uint8_t *ip,
		 struct mrcd_neigh_entry *out)
{
	struct mrcd_neigh_entry all[64];
	unsigned k = mrcd_neigh_list(n, all, 64);

	for (unsigned i = 0; i < k; i++)
		if (all[i].port == port && all[i].family == family &&
		    memcmp(all[i].ip, ip, family == 4 ? 4 : 16) == 0) {
			*out = all[i];
			return true;
		}
	return false;
}

/* ---- the test's own frame building and checksums ---------------------------- */

/* Byte-at-a-time one's-complement sum, folded: 0xffff over a message that
 * carries a correct checksum. Written apart from lib/core's mrcp_csum on
 * purpose (the one deliberate second copy): dp_neigh.c checksums its
 * replies with mrcp_csum, and an oracle that shared its code could not
 * catch a fault in it. */
static uint16_t t_sum(const uint8_t *p, size_t len, uint32_t acc)
{
	for (size_t i = 0; i < len; i++)
		acc += (i % 2 == 0) ? (uint32_t)p[i] << 8 : p[i];
	while (acc > 0xffff)
		acc = (acc >> 16) + (acc & 0xffff);
	return (uint16_t)acc;
}

static uint16_t t_sum6(const uint8_t *src, const uint8_t *dst, const uint8_t *m, size_t len)
{
	uint8_t ph[40] = {0};

	memcpy(ph, src, 16);
	memcpy(ph + 16, dst, 16);
	ph[34] = (uint8_t)(len >> 8);
	ph[35] = (uint8_t)len;
	ph[39] = 58;
	return t_sum(m, len, t_sum(ph, 40, 0));
}

static void put16(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static size_t t_eth(uint8_t *f, const uint8_t *dst, const uint8_t *src, int tci, unsigned type)
{
	memcpy(f, dst, 6);
	memcpy(f + 6, src, 6);
	if (tci >= 0) {
		put16(f + 12, 0x8100);
		put16(f + 14, (unsigned)tci);
		put16(f + 16, type);
		return 18;
	}
	put16(f + 12, type);
	return 14;
}

static size_t t_arp(uint8_t *f, int tci, const uint8_t *edst, const uint8_t *esrc, unsigned op,
		    const uint8_t *sha, const uint8_t *spa, const uint8_t *tha, const uint8_t *tpa)
{
	size_t o = t_eth(f, edst, esrc, tci, 0x0806);
	uint8_t *a = f + o;

	put16(a, 1);
	put16(a + 2, 0x0800);
	a[4] = 6;
	a[5] = 4;
	put16(a + 6, op);
	memcpy(a + 8, sha, 6);
	memcpy(a + 14, spa, 4);
	memcpy(a + 18, tha, 6);
	memcpy(a + 24, tpa, 4);
	return o + 28;
}

/* IPv4 ICMP echo (request or reply): TTL 64, id 0x1234, ICMP id 0xbeef
 * seq 7, @payload pattern bytes. */
static size_t t_icmp4(uint8_t *f, int tci, const uint8_t *edst, const uint8_t *esrc,
		      const uint8_t *src, const uint8_t *dst, uint8_t type, size_t payload)
{
	size_t o = t_eth(f, edst, esrc, tci, 0x0800);
	uint8_t *ip = f + o, *m = ip + 20;
	size_t mlen = 8 + payload;

	memset(ip, 0, 20);
	ip[0] = 0x45;
	put16(ip + 2, (unsigned)(20 + mlen));
	put16(ip + 4, 0x1234);
	ip[8] = 64;
	ip[9] = 1;
	memcpy(ip + 12, src, 4);
	memcpy(ip + 16, dst, 4);
	put16(ip + 10, (uint16_t)~t_sum(ip, 20, 0));
	m[0] = type;
	m[1] = 0;
	put16(m + 2, 0);
	put16(m + 4, 0xbeef);
	put16(m + 6, 7);
	for (size_t i = 0; i < payload; i++)
		m[8 + i] = (uint8_t)(i * 7 + 3);
	put16(m + 2, (uint16_t)~t_sum(m, mlen, 0));
	return o + 20 + mlen;
}

/* IPv6 + ICMPv6 @msg; the checksum (msg[2..3]) is filled in here. */
static size_t t_ip6(uint8_t *f, int tci, const uint8_t *edst, const uint8_t *esrc,
		    const uint8_t *src, const uint8_t *dst, uint8_t hop, const uint8_t *msg,
		    size_t mlen)
{
	size_t o = t_eth(f, edst, esrc, tci, 0x86dd);
	uint8_t *ip = f + o, *m = ip + 40;

	memset(ip, 0, 40);
	ip[0] = 0x60;
	put16(ip + 4, (unsigned)mlen);
	ip[6] = 58;
	ip[7] = hop;
	memcpy(ip + 8, src, 16);
	memcpy(ip + 24, dst, 16);
	memcpy(m, msg, mlen);
	put16(m + 2, 0);
	put16(m + 2, (uint16_t)~t_sum6(src, dst, m, mlen));
	return o + 40 + mlen;
}

/* NS or NA message, with a link-layer option when @lla. */
static size_t t_nd(uint8_t *m, uint8_t type, uint8_t flags, const uint8_t *target,
		   const uint8_t *lla)
{
	memset(m, 0, 32);
	m[0] = type;
	m[4] = flags;
	memcpy(m + 8, target, 16);
	if (lla == NULL)
		return 24;
	m[24] = type == 135 ? 1 : 2;
	m[25] = 1;
	memcpy(m + 26, lla, 6);
	return 32;
}

static size_t t_echo6(uint8_t *m, uint8_t type, size_t payload)
{
	memset(m, 0, 8);
	m[0] = type;
	put16(m + 4, 0xbeef);
	put16(m + 6, 9);
	for (size_t i = 0; i < payload; i++)
		m[8 + i] = (uint8_t)(i * 13 + 1);
	return 8 + payload;
}

static void t_snm(uint8_t out[16], const uint8_t *a)
{
	static const uint8_t pfx[13] = {0xff, 0x02, [11] = 0x01, [12] = 0xff};

	memcpy(out, pfx, 13);
	memcpy(out + 13, a + 13, 3);
}

static void t_snm_mac(uint8_t out[6], const uint8_t *a)
{
	out[0] = 0x33;
	out[1] = 0x33;
	out[2] = 0xff;
	memcpy(out + 3, a + 13, 3);
}

static void assert_zero_from(const uint8_t *f, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++)
		ASSERT_EQ(0, f[i]);
}

/* ---- create / set_port / add_static ---------------------------------------- */

TEST(neigh, create__rejects_bad_args)
{
	struct mrcd_neigh *n = NULL;

	ASSERT_EQ(-EINVAL, mrcd_neigh_create(0, 8, &n));
	ASSERT_EQ(-EINVAL, mrcd_neigh_create(MRCD_NEIGH_MAX_PORTS + 1, 8, &n));
	ASSERT_EQ(-EINVAL, mrcd_neigh_create(1, 0, &n));
	ASSERT_EQ(-EINVAL, mrcd_neigh_create(1, 8, NULL));
	ASSERT_EQ(0, mrcd_neigh_create(MRCD_NEIGH_MAX_PORTS, 1, &n));
	ASSERT_EQ(0u, mrcd_neigh_count(n));
	mrcd_neigh_destroy(n);
	mrcd_neigh_destroy(NULL);
}

TEST(neigh, set_port__rejects_bad_args)
{
	struct mrcd_neigh *n = mk(8);
	struct mrcd_l2_port p = {0};

	memcpy(p.mac, our_mac, 6);
	ASSERT_EQ(-EINVAL, mrcd_neigh_set_port(n, 3, &p));
	ASSERT_EQ(-EINVAL, mrcd_neigh_set_port(n, 0, NULL));
	p.has_v4 = true;
	p.v4_plen = 33;
	ASSERT_EQ(-EINVAL, mrcd_neigh_set_port(n, 0, &p));
	p.v4_plen = 32;
	p.has_v6 = true;
	p.v6_plen = 129;
	ASSERT_EQ(-EINVAL, mrcd_neigh_set_port(n, 0, &p));
	p.v6_plen = 128;
	ASSERT_EQ(0, mrcd_neigh_set_port(n, 2, &p));
	memcpy(p.mac, bcast, 6);
	ASSERT_EQ(-EINVAL, mrcd_neigh_set_port(n, 0, &p));
	memset(p.mac, 0, 6);
	ASSERT_EQ(-EINVAL, mrcd_neigh_set_port(n, 0, &p));
	mrcd_neigh_destroy(n);
}

TEST(neigh, add_static__rejects_bad_args)
{
	struct mrcd_neigh *n = mk(8);

	ASSERT_EQ(-EINVAL, mrcd_neigh_add_static(n, 3, 4, peer_v4, peer_mac));
	ASSERT_EQ(-EINVAL, mrcd_neigh_add_static(n, -2, 4, peer_v4, peer_mac));
	ASSERT_EQ(-EINVAL, mrcd_neigh_add_static(n, 0, 5, peer_v4, peer_mac));
	ASSERT_EQ(-EINVAL, mrcd_neigh_add_static(n, 0, 4, NULL, peer_mac));
	ASSERT_EQ(-EINVAL, mrcd_neigh_add_static(n, 0, 4, peer_v4, NULL));
	ASSERT_EQ(-EINVAL, mrcd_neigh_add_static(n, 0, 4, peer_v4, bcast));
	ASSERT_EQ(-EINVAL, mrcd_neigh_add_static(n, 0, 4, peer_v4, zero6));
	ASSERT_EQ(0u, mrcd_neigh_count(n));
	mrcd_neigh_destroy(n);
}

TEST(neigh, add_static__resolves_at_once_on_its_port_or_any)
{
	struct mrcd_neigh *n = mk(8);
	uint8_t mac[6];

	ASSERT_EQ(0, mrcd_neigh_add_static(n, 0, 4, peer_v4, peer_mac));
	ASSERT_EQ(0, res(n, 0, 4, peer_v4, T0, mac));
	ASSERT_MEMEQ(mac, peer_mac, 6);
	ASSERT_EQ(0u, qlen);
	/* Static entries never go stale. */
	ASSERT_EQ(0, res(n, 0, 4, peer_v4, T0 + 3600 * S, mac));
	ASSERT_EQ(0u, qlen);
	/* Any-port entry, IPv6; replacing keeps one entry. */
	ASSERT_EQ(0, mrcd_neigh_add_static(n, -1, 6, peer_v6, peer2_mac));
	ASSERT_EQ(0, mrcd_neigh_add_static(n, -1, 6, peer_v6, peer_mac));
	ASSERT_EQ(2u, mrcd_neigh_count(n));
	ASSERT_EQ(0, res(n, 0, 6, peer_v6, T0, mac));
	ASSERT_MEMEQ(mac, peer_mac, 6);
	/* ...but port 1 has no route to 2001:db8::2? It has no IPv6 prefix,
	 * so everything is on-link there: the any-port entry answers. */
	ASSERT_EQ(0, res(n, 1, 6, peer_v6, T0, mac));
	ASSERT_MEMEQ(mac, peer_mac, 6);
	mrcd_neigh_destroy(n);
}

TEST(neigh, add_static__replaces_dynamic_entry)
{
	struct mrcd_neigh *n = mk(8);
	uint8_t f[128], mac[6];
	struct mrcd_neigh_entry e;

	size_t len = t_arp(f, -1, bcast, peer_mac, 1, peer_mac, peer_v4, zero6, our_v4);
	ASSERT_EQ(MRCD_L2_REPLY, in(n, 0, f, len, T0));
	ASSERT_EQ(0, mrcd_neigh_add_static(n, 0, 4, peer_v4, peer2_mac));
	ASSERT_EQ(1u, mrcd_neigh_count(n));
	ASSERT_TRUE(find(n, 0, 4, peer_v4, &e));
	ASSERT_EQ(MRCD_NEIGH_STATIC, e.state);
	ASSERT_EQ(0, res(n, 0, 4, peer_v4, T0, mac));
	ASSERT_MEMEQ(mac, peer2_mac, 6);
	mrcd_neigh_destroy(n);
}

TEST(neigh, add_static__table_full)
{
	struct mrcd_neigh *n = mk(2);

	ASSERT_EQ(0, mrcd_neigh_add_static(n, 0, 4, peer_v4, peer_mac));
	ASSERT_EQ(0, mrcd_neigh_add_static(n, 0, 4, peer3_v4, peer_mac));
	ASSERT_EQ(-ENOSPC, mrcd_neigh_add_static(n, 0, 4, gw_v4, peer_mac));
	/* replacing an existing key needs no room */
	ASSERT_EQ(0, mrcd_neigh_add_static(n, 0, 4, peer3_v4, peer2_mac));
	mrcd_neigh_destroy(n);
}

/* ---- resolve ----------------------------------------------------------------- */

TEST(neigh, resolve__rejects_bad_args)
{
	struct mrcd_neigh *n = mk(8);
	uint8_t mac[6], small[MRCD_NEIGH_REQ_MAX - 1];
	size_t l = 99;

	ASSERT_EQ(-EINVAL, res(n, 3, 4, peer_v4, T0, mac));
	ASSERT_EQ(-EINVAL, res(n, 0, 5, peer_v4, T0, mac));
	ASSERT_EQ(-EINVAL, res(n, 0, 4, NULL, T0, mac));
	ASSERT_EQ(-EINVAL, res(n, 0, 4, peer_v4, T0, NULL));
	ASSERT_EQ(-EINVAL, mrcd_neigh_resolve(n, 0, 4, peer_v4, T0, mac, small, sizeof(small), &l));
	ASSERT_EQ(0u, l);
	ASSERT_EQ(-EINVAL, mrcd_neigh_resolve(n, 0, 4, peer_v4, T0, mac, qbuf, sizeof(qbuf), NULL));
	ASSERT_EQ(-EINVAL, mrcd_neigh_resolve(NULL, 0, 4, peer_v4, T0, mac, qbuf, sizeof(qbuf), &l));
	ASSERT_EQ(0u, mrcd_neigh_count(n));
	mrcd_neigh_destroy(n);
}

TEST(neigh, resolve__on_link_v4_sends_broadcast_arp_request)
{
	struct mrcd_neigh *n = mk(8);
	uint8_t mac[6], exp[60] = {0};
	struct mrcd_neigh_entry e;

	ASSERT_EQ(-EAGAIN, res(n, 0, 4, peer_v4, T0, mac));
	t_arp(exp, -1, bcast, our_mac, 1, our_mac, our_v4, zero6, peer_v4);
	ASSERT_EQ(60u, qlen);
	ASSERT_MEMEQ(qbuf, exp, 60);
	ASSERT_EQ(1u, ctr(n, 0).arp_tx_req);
	ASSERT_TRUE(find(n, 0, 4, peer_v4, &e));
	ASSERT_EQ(MRCD_NEIGH_INCOMPLETE, e.state);
	ASSERT_MEMEQ(e.mac, zero6, 6);
	mrcd_neigh_destroy(n);
}

TEST(neigh, resolve__off_link_v4_resolves_the_gateway)
{
	struct mrcd_neigh *n = mk(8);
	uint8_t mac[6], f[128], exp[60] = {0};

	ASSERT_EQ(-EAGAIN, res(n, 0, 4, far_v4, T0, mac));
	t_arp(exp, -1, bcast, our_mac, 1, our_mac, our_v4, zero6, gw_v4);
	ASSERT_EQ(60u, qlen);
	ASSERT_MEMEQ(qbuf, exp, 60);
	/* The gateway answers; every off-link address now uses its MAC. */
	size_t len = t_arp(f, -1, our_mac, peer2_mac, 2, peer2_mac, gw_v4, our_mac, our_v4);
	ASSERT_EQ(MRCD_L2_CONSUMED, in(n, 0, f, len, T0 + MS));
	ASSERT_EQ(0u, rlen);
	ASSERT_EQ(0, res(n, 0, 4, far_v4, T0 + 2 * MS, mac));
	ASSERT_MEMEQ(mac, peer2_mac, 6);
	ASSERT_EQ(0u, qlen);
	ASSERT_EQ(0, res(n, 0, 4, far2_v4, T0 + 2 * MS, mac));
	ASSERT_MEMEQ(mac, peer2_mac, 6);
	ASSERT_EQ(1u, mrcd_neigh_count(n));
	mrcd_neigh_destroy(n);
}

TEST(neigh, resolve__no_route)
{
	struct mrcd_neigh *n = mk(8);
	uint8_t mac[6];

	/* port 1: off-prefix, no gateway */
	ASSERT_EQ(-EHOSTUNREACH, res(n, 1, 4, far_v4, T0, mac));
	ASSERT_EQ(0u, qlen);
	/* port 1 has no IPv6 address: IPv6 is all on-link there */
	ASSERT_EQ(-EAGAIN, res(n, 1, 6, far_v6, T0, mac));
	/* port 2 is not set */
	ASSERT_EQ(-EHOSTUNREACH, res(n, 2, 4, peer_v4, T0, mac));
	ASSERT_EQ(1u, ctr(n, 1).resolve_fail);
	ASSERT_EQ(1u, ctr(n, 2).resolve_fail);
	mrcd_neigh_destroy(n);
}

TEST(neigh, resolve__v6_off_link_uses_gateway_and_link_local_is_on_link)
{
	struct mrcd_neigh *n = mk(8);
	uint8_t mac[6], msg[64], exp[128], snm[16], snm_mac[6];
	struct mrcd_neigh_entry e;

	ASSERT_EQ(-EAGAIN, res(n, 0, 6, far_v6, T0, mac));
	ASSERT_TRUE(find(n, 0, 6, gw_v6, &e));
	/* The NS for the link-local gateway comes from our link-local. */
	t_snm(snm, gw_v6);
	t_snm_mac(snm_mac, gw_v6);
	size_t ml = t_nd(msg, 135, 0, gw_v6, our_mac);
	size_t len = t_ip6(exp, -1, snm_mac, our_mac, our_ll, snm, 255, msg, ml);
	ASSERT_EQ(len, qlen);
	ASSERT_MEMEQ(qbuf, exp, len);
	ASSERT_EQ(-EAGAIN, res(n, 0, 6, peer_ll, T0, mac));
	ASSERT_TRUE(find(n, 0, 6, peer_ll, &e));
	mrcd_neigh_destroy(n);
}

TEST(neigh, resolve__v6_sends_ns_to_solicited_node_group)
{
	struct mrcd_neigh *n = mk(8);
	uint8_t mac[6], msg[64], exp[128], snm[16], snm_mac[6];

	ASSERT_EQ(-EAGAIN, res(n, 0, 6, peer_v6, T0, mac));
	t_snm(snm, peer_v6);
	t_snm_mac(snm_mac, peer_v6);
	size_t ml = t_nd(msg, 135, 0, peer_v6, our_mac);
	size_t len = t_ip6(exp, -1, snm_mac, our_mac, our_v6, snm, 255, msg, ml);
	ASSERT_EQ(86u, len);
	ASSERT_EQ(len, qlen);
	ASSERT_MEMEQ(qbuf, exp, len);
	ASSERT_EQ(0xffff, t_sum6(qbuf + 22, qbuf + 38, qbuf + 54, 32));
	ASSERT_EQ(1u, ctr(n, 0).ns_tx);
	mrcd_neigh_destroy(n);
}

TEST(neigh, resolve__rate_limits_then_fails_after_10_and_retries_after_1s)
{
	struct mrcd_neigh *n = mk(8);
	uint8_t mac[6];
	struct mrcd_neigh_entry e;
	unsigned sent = 0;

	/* Ask every 10 ms for 1 s: one request per 100 ms, 10 in all. */
	uint64_t t;
	for (t = T0; t < T0 + 1000 * MS; t += 10 * MS) {
		ASSERT_EQ(-EAGAIN, res(n, 0, 4, peer_v4, t, mac));
		if (qlen > 0) {
			ASSERT_EQ(0u, (t - T0) % (100 * MS));
			sent++;
		}
	}
	ASSERT_EQ(10u, sent);
	ASSERT_EQ(10u, ctr(n, 0).arp_tx_req);
	/* The tenth request had its 100 ms: FAILED now. */
	ASSERT_EQ(-EHOSTUNREACH, res(n, 0, 4, peer_v4, t, mac));
	ASSERT_EQ(0u, qlen);
	ASSERT_TRUE(find(n, 0, 4, peer_v4, &e));
	ASSERT_EQ(MRCD_NEIGH_FAILED, e.state);
	ASSERT_U64_EQ(t, e.updated_ns);
	ASSERT_EQ(-EHOSTUNREACH, res(n, 0, 4, peer_v4, t + 999 * MS, mac));
	ASSERT_EQ(0u, qlen);
	ASSERT_EQ(2u, ctr(n, 0).resolve_fail);
	/* One second later: asked for again, still FAILED until it answers. */
	ASSERT_EQ(-EHOSTUNREACH, res(n, 0, 4, peer_v4, t + 1000 * MS, mac));
	ASSERT_EQ(60u, qlen);
	ASSERT_TRUE(find(n, 0, 4, peer_v4, &e));
	ASSERT_EQ(MRCD_NEIGH_FAILED, e.state);
	ASSERT_EQ(-EHOSTUNREACH, res(n, 0, 4, peer_v4, t + 1099 * MS, mac));
	ASSERT_EQ(0u, qlen);
	ASSERT_EQ(-EHOSTUNREACH, res(n, 0, 4, peer_v4, t + 1100 * MS, mac));
	ASSERT_EQ(60u, qlen);
	/* an answer makes it REACHABLE */
	uint8_t fr[128];
	size_t flen = t_arp(fr, -1, our_mac, peer_mac, 2, peer_mac, peer_v4, our_mac, our_v4);
	ASSERT_EQ(MRCD_L2_CONSUMED, in(n, 0, fr, flen, t + 1150 * MS));
	ASSERT_EQ(0, res(n, 0, 4, peer_v4, t + 1150 * MS, mac));
	ASSERT_MEMEQ(peer_mac, mac, 6);
	mrcd_neigh_destroy(n);
}

TEST(neigh, resolve__stale_entry_is_used_and_rerequested)
{
	struct mrcd_neigh *n = mk(8);
	uint8_t mac[6], f[128], exp[60] = {0};

	size_t len = t_arp(f, -1, bcast, peer_mac, 1, peer_mac, peer_v4, zero6, our_v4);
	ASSERT_EQ(MRCD_L2_REPLY, in(n, 0, f, len, T0));
	ASSERT_EQ(0, res(n, 0, 4, peer_v4, T0 + 60 * S - 1, mac));
	ASSERT_EQ(0u, qlen);
	/* Stale: still resolves, and a unicast request goes to the old MAC. */
	uint64_t t = T0 + 60 * S;
	ASSERT_EQ(0, res(n, 0, 4, peer_v4, t, mac));
	ASSERT_MEMEQ(mac, peer_mac, 6);
	t_arp(exp, -1, peer_mac, our_mac, 1, our_mac, our_v4, zero6, peer_v4);
	ASSERT_EQ(60u, qlen);
	ASSERT_MEMEQ(qbuf, exp, 60);
	ASSERT_EQ(0, res(n, 0, 4, peer_v4, t + 50 * MS, mac));
	ASSERT_EQ(0u, qlen);
	ASSERT_EQ(0, res(n, 0, 4, peer_v4, t + 100 * MS, mac));
	ASSERT_MEMEQ(qbuf, exp, 60);
	ASSERT_EQ(0, res(n, 0, 4, peer_v4, t + 200 * MS, mac));
	ASSERT_MEMEQ(qbuf, exp, 60);
	/* After three unicast tries, broadcast. */
	ASSERT_EQ(0, res(n, 0, 4, peer_v4, t + 300 * MS, mac));
	ASSERT_EQ(60u, qlen);
	ASSERT_MEMEQ(qbuf, bcast, 6);
	/* An answer refreshes it: no more requests for 60 s. */
	len = t_arp(f, -1, our_mac, peer_mac, 2, peer_mac, peer_v4, our_mac, our_v4);
	ASSERT_EQ(MRCD_L2_CONSUMED, in(n, 0, f, len, t + 350 * MS));
	ASSERT_EQ(0, res(n, 0, 4, peer_v4, t + 500 * MS, mac));
	ASSERT_EQ(0u, qlen);
	ASSERT_EQ(0, res(n, 0, 4, peer_v4, t + 350 * MS + 60 * S - 1, mac));
	ASSERT_EQ(0u, qlen);
	mrcd_neigh_destroy(n);
}

TEST(neigh, resolve__stale_entry_fails_after_10_unanswered)
{
	struct mrcd_neigh *n = mk(8);
	uint8_t mac[6], f[128];

	size_t len = t_arp(f, -1, bcast, peer_mac, 1, peer_mac, peer_v4, zero6, our_v4);
	ASSERT_EQ(MRCD_L2_REPLY, in(n, 0, f, len, T0));
	uint64_t t = T0 + 60 * S;
	for (unsigned i = 0; i < 10; i++) {
		ASSERT_EQ(0, res(n, 0, 4, peer_v4, t + i * 100 * MS, mac));
		ASSERT_EQ(60u, qlen);
	}
	ASSERT_EQ(-EHOSTUNREACH, res(n, 0, 4, peer_v4, t + 1000 * MS, mac));
	mrcd_neigh_destroy(n);
}

TEST(neigh, resolve__table_full)
{
	struct mrcd_neigh *n = mk(3);
	uint8_t mac[6], ip[4] = {10, 0, 0, 10};

	for (unsigned i = 0; i < 3; i++) {
		ip[3] = (uint8_t)(10 + i);
		ASSERT_EQ(-EAGAIN, res(n, 0, 4, ip, T0, mac));
	}
	ip[3] = 20;
	ASSERT_EQ(-ENOSPC, res(n, 0, 4, ip, T0, mac));
	ASSERT_EQ(0u, qlen);
	ASSERT_EQ(1u, ctr(n, 0).table_full);
	/* Known entries still work. */
	ip[3] = 11;
	ASSERT_EQ(-EAGAIN, res(n, 0, 4, ip, T0 + 100 * MS, mac));
	ASSERT_EQ(60u, qlen);
	mrcd_neigh_destroy(n);
}

TEST(neigh, resolve__evicts_learned_or_failed_entries_when_full)
{
	struct mrcd_neigh *n = mk(2);
	uint8_t mac[6], f[128];
	struct mrcd_neigh_entry e;

	/* Two hosts ARP for us: both learned, never resolved. */
	size_t len = t_arp(f, -1, bcast, peer_mac, 1, peer_mac, peer_v4, zero6, our_v4);
	ASSERT_EQ(MRCD_L2_REPLY, in(n, 0, f, len, T0));
	len = t_arp(f, -1, bcast, peer2_mac, 1, peer2_mac, peer3_v4, zero6, our_v4);
	ASSERT_EQ(MRCD_L2_REPLY, in(n, 0, f, len, T0 + MS));
	ASSERT_EQ(2u, mrcd_neigh_count(n));
	/* A third sender finds the table full: not learned, but answered. */
	len = t_arp(f, -1, bcast, other_mac, 1, other_mac, gw_v4, zero6, our_v4);
	ASSERT_EQ(MRCD_L2_REPLY, in(n, 0, f, len, T0 + MS));
	ASSERT_EQ(1u, ctr(n, 0).table_full);
	/* Using peer 3 protects it; a new resolve evicts the oldest other. */
	ASSERT_EQ(0, res(n, 0, 4, peer3_v4, T0 + 2 * MS, mac));
	ASSERT_EQ(-EAGAIN, res(n, 0, 4, far_v4, T0 + 2 * MS, mac)); /* via gw */
	ASSERT_EQ(2u, mrcd_neigh_count(n));
	ASSERT_FALSE(find(n, 0, 4, peer_v4, &e));
	ASSERT_TRUE(find(n, 0, 4, peer3_v4, &e));
	ASSERT_TRUE(find(n, 0, 4, gw_v4, &e));
	/* Both resolved and not FAILED: nothing to evict. */
	ASSERT_EQ(-ENOSPC, res(n, 0, 4, peer_v4, T0 + 3 * MS, mac));
	mrcd_neigh_destroy(n);
}

TEST(neigh, resolve__many_entries_survive_evictions)
{
	/* Exercise probing and backward-shift deletion: after each round of
	 * evictions every remaining entry must still be found by lookup. */
	struct mrcd_neigh *n = mk(64);
	uint8_t mac[6], f[128], ip[4] = {10, 0, 0, 0};
	struct mrcd_neigh_entry all[64];

	for (unsigned i = 0; i < 64; i++) {
		uint8_t sha[6] = {0x02, 0, 0, 0, 1, (uint8_t)(i + 1)};
		ip[3] = (uint8_t)(i + 2);
		size_t len = t_arp(f, -1, bcast, sha, 1, sha, ip, zero6, our_v4);
		ASSERT_EQ(MRCD_L2_REPLY, in(n, 0, f, len, T0 + i));
	}
	ASSERT_EQ(64u, mrcd_neigh_count(n));
	for (unsigned round = 0; round < 5; round++) {
		for (unsigned i = 0; i < 8; i++) {
			uint8_t on[4] = {10, 0, 0, (uint8_t)(200 + round * 8 + i)};
			ASSERT_EQ(-EAGAIN, res(n, 0, 4, on, T0 + S + round, mac));
		}
		ASSERT_EQ(64u, mrcd_neigh_count(n));
		unsigned k = mrcd_neigh_list(n, all, 64), learned = 0;
		ASSERT_EQ(64u, k);
		/* Re-announce every learned entry with a new MAC, as an ARP
		 * for another host: that only updates existing entries, so a
		 * lost one would show up as an unchanged MAC. */
		for (unsigned j = 0; j < k; j++) {
			if (all[j].state != MRCD_NEIGH_REACHABLE)
				continue;
			uint8_t sha[6] = {0x02, 0, 0, 0, (uint8_t)(round + 2), all[j].ip[3]};
			size_t len = t_arp(f, -1, bcast, sha, 1, sha, all[j].ip, zero6, gw_v4);
			ASSERT_EQ(MRCD_L2_CONSUMED, in(n, 0, f, len, T0 + 2 * S));
			learned++;
		}
		ASSERT_EQ(64u - 8 * (round + 1), learned);
		struct mrcd_neigh_entry e;
		for (unsigned j = 0; j < k; j++) {
			ASSERT_TRUE(find(n, 0, 4, all[j].ip, &e));
			if (all[j].state == MRCD_NEIGH_REACHABLE)
				ASSERT_EQ(round + 2, e.mac[4]);
		}
		ASSERT_EQ(0u, ctr(n, 0).table_full);
	}
	mrcd_neigh_destroy(n);
}

/* ---- ARP input --------------------------------------------------------------- */

TEST(neigh, arp_request_for_us__replies_and_learns_sender)
{
	struct mrcd_neigh *n = mk(8);
	uint8_t f[128], exp[60] = {0}, mac[6];
	struct mrcd_neigh_entry e;

	size_t len = t_arp(f, -1, bcast, peer_mac, 1, peer_mac, peer_v4, zero6, our_v4);
	ASSERT_EQ(42u, len);
	ASSERT_EQ(MRCD_L2_REPLY, in(n, 0, f, len, T0));
	t_arp(exp, -1, peer_mac, our_mac, 2, our_mac, our_v4, peer_mac, peer_v4);
	ASSERT_EQ(60u, rlen);
	ASSERT_MEMEQ(rbuf, exp, 60);
	ASSERT_TRUE(find(n, 0, 4, peer_v4, &e));
	ASSERT_EQ(MRCD_NEIGH_REACHABLE, e.state);
	ASSERT_MEMEQ(e.mac, peer_mac, 6);
	ASSERT_U64_EQ(T0, e.updated_ns);
	ASSERT_EQ(0, res(n, 0, 4, peer_v4, T0 + S, mac));
	ASSERT_MEMEQ(mac, peer_mac, 6);
	ASSERT_EQ(0u, qlen);
	struct mrcd_neigh_counters c = ctr(n, 0);
	ASSERT_EQ(1u, c.arp_rx);
	ASSERT_EQ(1u, c.arp_tx_reply);
	ASSERT_EQ(1u, c.learned);
	/* Unicast to our MAC works too (a refresh from the peer). */
	len = t_arp(f, -1, our_mac, peer_mac, 1, peer_mac, peer_v4, zero6, our_v4);
	ASSERT_EQ(MRCD_L2_REPLY, in(n, 0, f, len, T0));
	mrcd_neigh_destroy(n);
}

TEST(neigh, arp_request_for_other_ip__consumed_without_reply)
{
	/* Decision: ARP is never MRC traffic, so it is CONSUMED (no reply,
	 * no new entry, counted as ignored). */
	struct mrcd_neigh *n = mk(8);
	uint8_t f[128];

	size_t len = t_arp(f, -1, bcast, peer_mac, 1, peer_mac, peer_v4, zero6, peer3_v4);
	ASSERT_EQ(MRCD_L2_CONSUMED, in(n, 0, f, len, T0));
	ASSERT_EQ(0u, rlen);
	ASSERT_EQ(0u, mrcd_neigh_count(n));
	ASSERT_EQ(1u, ctr(n, 0).ignored);
	/* ...on port 1 our address is 10.1.0.1, so 10.0.0.1 is another IP */
	len = t_arp(f, -1, bcast, peer_mac, 1, peer_mac, peer_v4, zero6, our_v4);
	ASSERT_EQ(MRCD_L2_CONSUMED, in(n, 1, f, len, T0));
	ASSERT_EQ(0u, rlen);
	mrcd_neigh_destroy(n);
}

TEST(neigh, arp_request_for_other_ip__updates_known_sender)
{
	struct mrcd_neigh *n = mk(8);
	uint8_t f[128], mac[6];

	ASSERT_EQ(-EAGAIN, res(n, 0, 4, peer_v4, T0, mac));
	size_t len = t_arp(f, -1, bcast, peer_mac, 1, peer_mac, peer_v4, zero6, peer3_v4);
	ASSERT_EQ(MRCD_L2_CONSUMED, in(n, 0, f, len, T0 + MS));
	ASSERT_EQ(0, res(n, 0, 4, peer_v4, T0 + 2 * MS, mac));
	ASSERT_MEMEQ(mac, peer_mac, 6);
	ASSERT_EQ(1u, mrcd_neigh_count(n));
	mrcd_neigh_destroy(n);
}

TEST(neigh, arp_reply__learned)
{
	struct mrcd_neigh *n = mk(8);
	uint8_t f[128], mac[6];
	struct mrcd_neigh_entry e;

	ASSERT_EQ(-EAGAIN, res(n, 0, 4, peer_v4, T0, mac));
	size_t len = t_arp(f, -1, our_mac, peer_mac, 2, peer_mac, peer_v4, our_mac, our_v4);
	ASSERT_EQ(MRCD_L2_CONSUMED, in(n, 0, f, len, T0 + 3 * MS));
	ASSERT_EQ(0u, rlen);
	ASSERT_TRUE(find(n, 0, 4, peer_v4, &e));
	ASSERT_EQ(MRCD_NEIGH_REACHABLE, e.state);
	ASSERT_U64_EQ(T0 + 3 * MS, e.updated_ns);
	ASSERT_EQ(0, res(n, 0, 4, peer_v4, T0 + 4 * MS, mac));
	ASSERT_MEMEQ(mac, peer_mac, 6);
	/* A reply to us from a host we never asked for is learned too
	 * (RFC 826: we are the target). */
	len = t_arp(f, -1, our_mac, peer2_mac, 2, peer2_mac, peer3_v4, our_mac, our_v4);
	ASSERT_EQ(MRCD_L2_CONSUMED, in(n, 0, f, len, T0));
	ASSERT_TRUE(find(n, 0, 4, peer3_v4, &e));
	ASSERT_EQ(2u, ctr(n, 0).learned);
	/* A reply from a FAILED entry's host revives it. */
	mrcd_neigh_destroy(n);
}

TEST(neigh, arp_reply__revives_failed_entry)
{
	struct mrcd_neigh *n = mk(8);
	uint8_t f[128], mac[6];

	for (unsigned i = 0; i <= 10; i++)
		res(n, 0, 4, peer_v4, T0 + i * 100 * MS, mac);
	ASSERT_EQ(-EHOSTUNREACH, res(n, 0, 4, peer_v4, T0 + 1000 * MS, mac));
	size_t len = t_arp(f, -1, our_mac, peer_mac, 2, peer_mac, peer_v4, our_mac, our_v4);
	ASSERT_EQ(MRCD_L2_CONSUMED, in(n, 0, f, len, T0 + 1001 * MS));
	ASSERT_EQ(0, res(n, 0, 4, peer_v4, T0 + 1002 * MS, mac));
	ASSERT_MEMEQ(mac, peer_mac, 6);
	mrcd_neigh_destroy(n);
}

TEST(neigh, gratuitous_arp__updates_dynamic_not_static)
{
	struct mrcd_neigh *n = mk(8);
	uint8_t f[128], mac[6];
	struct mrcd_neigh_entry e;

	size_t len = t_arp(f, -1, bcast, peer_mac, 1, peer_mac, peer_v4, zero6, our_v4);
	ASSERT_EQ(MRCD_L2_REPLY, in(n, 0, f, len, T0));
	ASSERT_EQ(0, mrcd_neigh_add_static(n, 0, 4, peer3_v4, peer_mac));
	/* peer moves to a new MAC and announces it (request and reply forms) */
	len = t_arp(f, -1, bcast, peer2_mac, 1, peer2_mac, peer_v4, zero6, peer_v4);
	ASSERT_EQ(MRCD_L2_CONSUMED, in(n, 0, f, len, T0 + S));
	ASSERT_EQ(0u, rlen);
	ASSERT_EQ(0, res(n, 0, 4, peer_v4, T0 + 2 * S, mac));
	ASSERT_MEMEQ(mac, peer2_mac, 6);
	len = t_arp(f, -1, bcast, peer_mac, 2, peer_mac, peer_v4, bcast, peer_v4);
	ASSERT_EQ(MRCD_L2_CONSUMED, in(n, 0, f, len, T0 + 3 * S));
	ASSERT_EQ(0, res(n, 0, 4, peer_v4, T0 + 3 * S, mac));
	ASSERT_MEMEQ(mac, peer_mac, 6);
	/* the static entry ignores gratuitous ARP, replies and requests */
	len = t_arp(f, -1, bcast, peer2_mac, 1, peer2_mac, peer3_v4, zero6, peer3_v4);
	ASSERT_EQ(MRCD_L2_CONSUMED, in(n, 0, f, len, T0 + 4 * S));
	len = t_arp(f, -1, our_mac, peer2_mac, 2, peer2_mac, peer3_v4, our_mac, our_v4);
	ASSERT_EQ(MRCD_L2_CONSUMED, in(n, 0, f, len, T0 + 4 * S));
	len = t_arp(f, -1, bcast, peer2_mac, 1, peer2_mac, peer3_v4, zero6, our_v4);
	ASSERT_EQ(MRCD_L2_REPLY, in(n, 0, f, len, T0 + 4 * S));
	ASSERT_TRUE(find(n, 0, 4, peer3_v4, &e));
	ASSERT_EQ(MRCD_NEIGH_STATIC, e.state);
	ASSERT_MEMEQ(e.mac, peer_mac, 6);
	ASSERT_EQ(0, res(n, 0, 4, peer3_v4, T0 + 5 * S, mac));
	ASSERT_MEMEQ(mac, peer_mac, 6);
	/* and an any-port static entry blocks learning on every port */
	ASSERT_EQ(0, mrcd_neigh_add_static(n, -1, 4, gw_v4, peer_mac));
	len = t_arp(f, -1, bcast, peer2_mac, 1, peer2_mac, gw_v4, zero6, our_v4);
	ASSERT_EQ(MRCD_L2_REPLY, in(n, 0, f, len, T0 + 6 * S));
	ASSERT_FALSE(find(n, 0, 4, gw_v4, &e));
	mrcd_neigh_destroy(n);
}

TEST(neigh, arp__conflicts_and_own_frames_are_ignored)
{
	struct mrcd_neigh *n = mk(8);
	uint8_t f[128];

	/* someone else claims 10.0.0.1 */
	size_t len = t_arp(f, -1, bcast, peer_mac, 1, peer_mac, our_v4, zero6, our_v4);
	ASSERT_EQ(MRCD_L2_CONSUMED, in(n, 0, f, len, T0));
	/* our own request looped back */
	len = t_arp(f, -1, bcast, our_mac, 1, our_mac, peer_v4, zero6, our_v4);
	ASSERT_EQ(MRCD_L2_CONSUMED, in(n, 0, f, len, T0));
	ASSERT_EQ(0u, mrcd_neigh_count(n));
	ASSERT_EQ(2u, ctr(n, 0).ignored);
	mrcd_neigh_destroy(n);
}

TEST(neigh, arp_probe__answered_not_learned)
{
	/* RFC 5227 probe: sender IP 0.0.0.0. */
	struct mrcd_neigh *n = mk(8);
	uint8_t f[128], zero4[4] = {0};

	size_t len = t_arp(f, -1, bcast, peer_mac, 1, peer_mac, zero4, zero6, our_v4);
	ASSERT_EQ(MRCD_L2_REPLY, in(n, 0, f, len, T0));
	ASSERT_MEMEQ(rbuf, peer_mac, 6);
	ASSERT_MEMEQ(rbuf + 38, zero4, 4);
	ASSERT_EQ(0u, mrcd_neigh_count(n));
	mrcd_neigh_destroy(n);
}

TEST(neigh, arp__not_our_mac_is_not_mine)
{
	struct mrcd_neigh *n = mk(8);
	uint8_t f[128];

	size_t len = t_arp(f, -1, other_mac, peer_mac, 1, peer_mac, peer_v4, zero6, our_v4);
	ASSERT_EQ(MRCD_L2_NOT_MINE, in(n, 0, f, len, T0));
	ASSERT_EQ(0u, rlen);
	/* and port 2 is not set: nothing is ours there */
	len = t_arp(f, -1, bcast, peer_mac, 1, peer_mac, peer_v4, zero6, our_v4);
	ASSERT_EQ(MRCD_L2_NOT_MINE, in(n, 2, f, len, T0));
	ASSERT_EQ(MRCD_L2_NOT_MINE, in(n, 3, f, len, T0));
	mrcd_neigh_destroy(n);
}

TEST(neigh, arp__malformed_fields)
{
	struct mrcd_neigh *n = mk(8);
	uint8_t f[128];
	size_t len = t_arp(f, -1, bcast, peer_mac, 1, peer_mac, peer_v4, zero6, our_v4);
	static const struct {
		unsigned off;
		uint8_t v;
	} bad[] = {{15, 2}, {16, 0x86}, {18, 8}, {19, 16}, {21, 3}, {21, 0}, {22, 0x01}, {22, 0xff}};

	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint8_t g[128];
		memcpy(g, f, len);
		g[bad[i].off] = bad[i].v;
		ASSERT_EQ(MRCD_L2_CONSUMED, in(n, 0, g, len, T0));
		ASSERT_EQ(0u, rlen);
	}
	ASSERT_EQ(8u, ctr(n, 0).malformed);
	ASSERT_EQ(0u, mrcd_neigh_count(n));
	mrcd_neigh_destroy(n);
}

/* ---- NDP input ------------------------------------------------------------------ */

static size_t ns_frame(uint8_t *f, int tci, const uint8_t *dst, const uint8_t *target,
		       const uint8_t *slla, uint8_t hop)
{
	uint8_t msg[64], edst[6];

	if (dst[0] == 0xff) {
		edst[0] = 0x33;
		edst[1] = 0x33;
		memcpy(edst + 2, dst + 12, 4);
	} else {
		memcpy(edst, our_mac, 6);
	}
	size_t ml = t_nd(msg, 135, 0, target, slla);
	return t_ip6(f, tci, edst, peer_mac, slla == NULL && dst[0] == 0xff ? unspec : peer_v6,
		     dst, hop, msg, ml);
}

static void check_na(const uint8_t *src, const uint8_t *dst, const uint8_t *edst, uint8_t flags)
{
	uint8_t msg[64], exp[128];

	size_t ml = t_nd(msg, 136, flags, src, our_mac);
	size_t len = t_ip6(exp, -1, edst, our_mac, src, dst, 255, msg, ml);
	ASSERT_EQ(86u, len);
	ASSERT_EQ(len, rlen);
	ASSERT_MEMEQ(rbuf, exp, len);
	ASSERT_EQ(0xffff, t_sum6(rbuf + 22, rbuf + 38, rbuf + 54, 32));
}

TEST(neigh, ns_solicited_node_for_global__na_and_learned)
{
	struct mrcd_neigh *n = mk(8);
	uint8_t f[256], snm[16], mac[6];
	struct mrcd_neigh_entry e;

	t_snm(snm, our_v6);
	size_t len = ns_frame(f, -1, snm, our_v6, peer_mac, 255);
	ASSERT_EQ(MRCD_L2_REPLY, in(n, 0, f, len, T0));
	check_na(our_v6, peer_v6, peer_mac, 0x60);
	ASSERT_TRUE(find(n, 0, 6, peer_v6, &e));
	ASSERT_EQ(MRCD_NEIGH_REACHABLE, e.state);
	ASSERT_MEMEQ(e.mac, peer_mac, 6);
	ASSERT_EQ(0, res(n, 0, 6, peer_v6, T0 + MS, mac));
	ASSERT_MEMEQ(mac, peer_mac, 6);
	struct mrcd_neigh_counters c = ctr(n, 0);
	ASSERT_EQ(1u, c.ns_rx);
	ASSERT_EQ(1u, c.na_tx);
	mrcd_neigh_destroy(n);
}

TEST(neigh, ns_for_link_local__na_from_link_local)
{
	struct mrcd_neigh *n = mk(8);
	uint8_t f[256], snm[16];

	/* The global and the link-local share a solicited-node group only by
	 * chance; here they do not (…::1 vs …33:4455). */
	t_snm(snm, our_ll);
	size_t len = ns_frame(f, -1, snm, our_ll, peer_mac, 255);
	ASSERT_EQ(MRCD_L2_REPLY, in(n, 0, f, len, T0));
	check_na(our_ll, peer_v6, peer_mac, 0x60);
	/* unicast NS to the link-local, without SLLA: answered to the frame's
	 * source MAC */
	len = ns_frame(f, -1, our_ll, our_ll, NULL, 255);
	ASSERT_EQ(MRCD_L2_REPLY, in(n, 0, f, len, T0));
	check_na(our_ll, peer_v6, peer_mac, 0x60);
	/* port 1 has no global address but answers for its link-local */
	uint8_t ll1[16];
	memcpy(ll1, our_ll, 16);
	ll1[15] = 0x66;
	t_snm(snm, ll1);
	len = ns_frame(f, -1, snm, ll1, peer_mac, 255);
	ASSERT_EQ(MRCD_L2_REPLY, in(n, 1, f, len, T0));
	ASSERT_MEMEQ(rbuf + 6, our1_mac, 6);
	ASSERT_MEMEQ(rbuf + 22, ll1, 16);
	ASSERT_EQ(0xffff, t_sum6(rbuf + 22, rbuf + 38, rbuf + 54, 32));
	mrcd_neigh_destroy(n);
}

TEST(neigh, ns_dad__na_to_all_nodes)
{
	struct mrcd_neigh *n = mk(8);
	uint8_t f[256], snm[16], an_mac[6] = {0x33, 0x33, 0, 0, 0, 1};

	t_snm(snm, our_v6);
	size_t len = ns_frame(f, -1, snm, our_v6, NULL, 255);
	ASSERT_EQ(MRCD_L2_REPLY, in(n, 0, f, len, T0));
	check_na(our_v6, all_nodes, an_mac, 0x20);
	ASSERT_EQ(0u, mrcd_neigh_count(n));
	mrcd_neigh_destroy(n);
}

TEST(neigh, ns_bad_hop_limit_or_checksum__malformed)
{
	struct mrcd_neigh *n = mk(8);
	uint8_t f[256], snm[16];

	t_snm(snm, our_v6);
	size_t len = ns_frame(f, -1, snm, our_v6, peer_mac, 254);
	ASSERT_EQ(MRCD_L2_CONSUMED, in(n, 0, f, len, T0));
	ASSERT_EQ(0u, rlen);
	len = ns_frame(f, -1, snm, our_v6, peer_mac, 64);
	ASSERT_EQ(MRCD_L2_CONSUMED, in(n, 0, f, len, T0));
	len = ns_frame(f, -1, snm, our_v6, peer_mac, 255);
	f[len - 1] ^= 1; /* checksum now wrong */
	ASSERT_EQ(MRCD_L2_CONSUMED, in(n, 0, f, len, T0));
	len = ns_frame(f, -1, snm, our_v6, peer_mac, 255);
	f[54 + 1] = 1; /* code 1 (the checksum is now wrong as well) */
	ASSERT_EQ(MRCD_L2_CONSUMED, in(n, 0, f, len, T0));
	ASSERT_EQ(4u, ctr(n, 0).malformed);
	ASSERT_EQ(0u, ctr(n, 0).na_tx);
	ASSERT_EQ(0u, mrcd_neigh_count(n));
	mrcd_neigh_destroy(n);
}

TEST(neigh, ns_bad_options_and_dad_rules__malformed)
{
	struct mrcd_neigh *n = mk(8);
	uint8_t f[256], msg[64], snm[16], edst[6];

	t_snm(snm, our_v6);
	t_snm_mac(edst, our_v6);
	/* option length 0 */
	size_t ml = t_nd(msg, 135, 0, our_v6, peer_mac);
	msg[25] = 0;
	size_t len = t_ip6(f, -1, edst, peer_mac, peer_v6, snm, 255, msg, ml);
	ASSERT_EQ(MRCD_L2_CONSUMED, in(n, 0, f, len, T0));
	/* option running past the message */
	msg[25] = 2;
	len = t_ip6(f, -1, edst, peer_mac, peer_v6, snm, 255, msg, ml);
	ASSERT_EQ(MRCD_L2_CONSUMED, in(n, 0, f, len, T0));
	/* DAD with a source link-layer option */
	msg[25] = 1;
	len = t_ip6(f, -1, edst, peer_mac, unspec, snm, 255, msg, ml);
	ASSERT_EQ(MRCD_L2_CONSUMED, in(n, 0, f, len, T0));
	/* DAD to a unicast address */
	ml = t_nd(msg, 135, 0, our_v6, NULL);
	len = t_ip6(f, -1, our_mac, peer_mac, unspec, our_v6, 255, msg, ml);
	ASSERT_EQ(MRCD_L2_CONSUMED, in(n, 0, f, len, T0));
	/* multicast target */
	ml = t_nd(msg, 135, 0, snm, peer_mac);
	len = t_ip6(f, -1, edst, peer_mac, peer_v6, snm, 255, msg, ml);
	ASSERT_EQ(MRCD_L2_CONSUMED, in(n, 0, f, len, T0));
	/* message shorter than an NS */
	ml = t_nd(msg, 135, 0, our_v6, NULL);
	len = t_ip6(f, -1, edst, peer_mac, peer_v6, snm, 255, msg, 20);
	ASSERT_EQ(MRCD_L2_CONSUMED, in(n, 0, f, len, T0));
	ASSERT_EQ(6u, ctr(n, 0).malformed);
	/* an unknown option is skipped */
	ml = t_nd(msg, 135, 0, our_v6, peer_mac);
	msg[32] = 14; /* nonce option */
	msg[33] = 1;
	len = t_ip6(f, -1, edst, peer_mac, peer_v6, snm, 255, msg, 40);
	ASSERT_EQ(MRCD_L2_REPLY, in(n, 0, f, len, T0));
	mrcd_neigh_destroy(n);
}

TEST(neigh, ns_for_other_target_or_group)
{
	struct mrcd_neigh *n = mk(8);
	uint8_t f[256], snm[16], other[16];

	/* our group, someone else's target (low 24 bits collide) */
	memcpy(other, our_v6, 16);
	other[8] = 0x42;
	t_snm(snm, our_v6);
	size_t len = ns_frame(f, -1, snm, other, peer_mac, 255);
	ASSERT_EQ(MRCD_L2_CONSUMED, in(n, 0, f, len, T0));
	ASSERT_EQ(0u, rlen);
	ASSERT_EQ(1u, ctr(n, 0).ignored);
	/* another group entirely: not ours */
	t_snm(snm, peer_v6);
	len = ns_frame(f, -1, snm, peer_v6, peer_mac, 255);
	ASSERT_EQ(MRCD_L2_NOT_MINE, in(n, 0, f, len, T0));
	/* unicast to another IPv6 address */
	len = ns_frame(f, -1, peer_v6, peer_v6, peer_mac, 255);
	ASSERT_EQ(MRCD_L2_NOT_MINE, in(n, 0, f, len, T0));
	mrcd_neigh_destroy(n);
}

static size_t na_frame(uint8_t *f, const uint8_t *dst, uint8_t flags, const uint8_t *target,
		       const uint8_t *src, const uint8_t *tlla)
{
	uint8_t msg[64];
	const uint8_t *edst = dst[0] == 0xff ? (const uint8_t[6]){0x33, 0x33, 0, 0, 0, 1} : our_mac;

	size_t ml = t_nd(msg, 136, flags, target, tlla);
	return t_ip6(f, -1, edst, tlla != NULL ? tlla : peer_mac, src, dst, 255, msg, ml);
}

TEST(neigh, na__learned_for_pending_entry)
{
	struct mrcd_neigh *n = mk(8);
	uint8_t f[256], mac[6];
	struct mrcd_neigh_entry e;

	ASSERT_EQ(-EAGAIN, res(n, 0, 6, peer_v6, T0, mac));
	size_t len = na_frame(f, our_v6, 0x60, peer_v6, peer_v6, peer_mac);
	ASSERT_EQ(MRCD_L2_CONSUMED, in(n, 0, f, len, T0 + MS));
	ASSERT_EQ(0u, rlen);
	ASSERT_EQ(0, res(n, 0, 6, peer_v6, T0 + 2 * MS, mac));
	ASSERT_MEMEQ(mac, peer_mac, 6);
	ASSERT_TRUE(find(n, 0, 6, peer_v6, &e));
	ASSERT_EQ(MRCD_NEIGH_REACHABLE, e.state);
	ASSERT_EQ(1u, ctr(n, 0).na_rx);
	/* O clear: a different MAC does not replace the known one */
	len = na_frame(f, our_v6, 0x40, peer_v6, peer_v6, peer2_mac);
	ASSERT_EQ(MRCD_L2_CONSUMED, in(n, 0, f, len, T0 + 3 * MS));
	ASSERT_EQ(0, res(n, 0, 6, peer_v6, T0 + 4 * MS, mac));
	ASSERT_MEMEQ(mac, peer_mac, 6);
	/* unsolicited, O set, to all-nodes: it does */
	len = na_frame(f, all_nodes, 0x20, peer_v6, peer_v6, peer2_mac);
	ASSERT_EQ(MRCD_L2_CONSUMED, in(n, 0, f, len, T0 + 5 * MS));
	ASSERT_EQ(0, res(n, 0, 6, peer_v6, T0 + 6 * MS, mac));
	ASSERT_MEMEQ(mac, peer2_mac, 6);
	mrcd_neigh_destroy(n);
}

TEST(neigh, na__unknown_target_not_created_and_bad_na_malformed)
{
	struct mrcd_neigh *n = mk(8);
	uint8_t f[256];

	size_t len = na_frame(f, our_v6, 0x60, peer_v6, peer_v6, peer_mac);
	ASSERT_EQ(MRCD_L2_CONSUMED, in(n, 0, f, len, T0));
	ASSERT_EQ(0u, mrcd_neigh_count(n));
	/* S set on a multicast NA */
	len = na_frame(f, all_nodes, 0x60, peer_v6, peer_v6, peer_mac);
	ASSERT_EQ(MRCD_L2_CONSUMED, in(n, 0, f, len, T0));
	/* hop limit 64 */
	len = na_frame(f, our_v6, 0x60, peer_v6, peer_v6, peer_mac);
	f[21] = 64;
	ASSERT_EQ(MRCD_L2_CONSUMED, in(n, 0, f, len, T0));
	ASSERT_EQ(2u, ctr(n, 0).malformed);
	mrcd_neigh_destroy(n);
}

/* ---- ICMP echo ------------------------------------------------------------------ */

TEST(neigh, icmp4_echo__reply_with_correct_checksums)
{
	static const size_t payloads[] = {0, 1, 7, 17, 18, 33, 1001, 1472};
	struct mrcd_neigh *n = mk(8);
	uint8_t f[2048], exp[2048];

	for (unsigned i = 0; i < sizeof(payloads) / sizeof(payloads[0]); i++) {
		size_t len = t_icmp4(f, -1, our_mac, peer_mac, peer_v4, our_v4, 8, payloads[i]);
		ASSERT_EQ(MRCD_L2_REPLY, in(n, 0, f, len, T0));
		size_t el = t_icmp4(exp, -1, peer_mac, our_mac, our_v4, peer_v4, 0, payloads[i]);
		ASSERT_EQ(len, el);
		ASSERT_EQ(el < 60 ? 60 : el, rlen);
		ASSERT_MEMEQ(rbuf, exp, el);
		assert_zero_from(rbuf, el, rlen);
		/* independent checks */
		ASSERT_EQ(0xffff, t_sum(rbuf + 14, 20, 0));
		ASSERT_EQ(0xffff, t_sum(rbuf + 34, 8 + payloads[i], 0));
	}
	ASSERT_EQ(8u, ctr(n, 0).icmp_echo);
	/* Ethernet padding after the IP packet is not echoed. */
	size_t len = t_icmp4(f, -1, our_mac, peer_mac, peer_v4, our_v4, 8, 3);
	memset(f + len, 0x77, 60 - len);
	ASSERT_EQ(MRCD_L2_REPLY, in(n, 0, f, 60, T0));
	assert_zero_from(rbuf, len, 60);
	mrcd_neigh_destroy(n);
}

TEST(neigh, icmp4__not_mine_or_malformed)
{
	struct mrcd_neigh *n = mk(8);
	uint8_t f[256];
	size_t len;

	/* to another IP, to another MAC, an echo reply, a UDP packet */
	len = t_icmp4(f, -1, our_mac, peer_mac, peer_v4, peer3_v4, 8, 10);
	ASSERT_EQ(MRCD_L2_NOT_MINE, in(n, 0, f, len, T0));
	len = t_icmp4(f, -1, other_mac, peer_mac, peer_v4, our_v4, 8, 10);
	ASSERT_EQ(MRCD_L2_NOT_MINE, in(n, 0, f, len, T0));
	len = t_icmp4(f, -1, our_mac, peer_mac, peer_v4, our_v4, 0, 10);
	ASSERT_EQ(MRCD_L2_NOT_MINE, in(n, 0, f, len, T0));
	len = t_icmp4(f, -1, our_mac, peer_mac, peer_v4, our_v4, 8, 10);
	f[14 + 9] = 17;
	ASSERT_EQ(MRCD_L2_NOT_MINE, in(n, 0, f, len, T0));
	/* a fragment */
	len = t_icmp4(f, -1, our_mac, peer_mac, peer_v4, our_v4, 8, 10);
	f[14 + 6] = 0x20;
	f[14 + 10] = f[14 + 11] = 0;
	put16(f + 24, (uint16_t)~t_sum(f + 14, 20, 0));
	ASSERT_EQ(MRCD_L2_NOT_MINE, in(n, 0, f, len, T0));
	ASSERT_EQ(0u, ctr(n, 0).malformed);
	/* bad IP checksum, bad ICMP checksum, total length too long, IHL 4 */
	len = t_icmp4(f, -1, our_mac, peer_mac, peer_v4, our_v4, 8, 10);
	f[14 + 10] ^= 1;
	ASSERT_EQ(MRCD_L2_CONSUMED, in(n, 0, f, len, T0));
	len = t_icmp4(f, -1, our_mac, peer_mac, peer_v4, our_v4, 8, 10);
	f[len - 1] ^= 1;
	ASSERT_EQ(MRCD_L2_CONSUMED, in(n, 0, f, len, T0));
	len = t_icmp4(f, -1, our_mac, peer_mac, peer_v4, our_v4, 8, 10);
	ASSERT_EQ(MRCD_L2_CONSUMED, in(n, 0, f, len - 1, T0));
	len = t_icmp4(f, -1, our_mac, peer_mac, peer_v4, our_v4, 8, 10);
	f[14] = 0x44;
	ASSERT_EQ(MRCD_L2_CONSUMED, in(n, 0, f, len, T0));
	ASSERT_EQ(4u, ctr(n, 0).malformed);
	ASSERT_EQ(0u, ctr(n, 0).icmp_echo);
	mrcd_neigh_destroy(n);
}

TEST(neigh, icmp4_echo__ip_options_are_not_echoed)
{
	struct mrcd_neigh *n = mk(8);
	uint8_t f[256], g[256];

	/* Rebuild a request with 4 bytes of options (NOP x4). */
	size_t len = t_icmp4(f, -1, our_mac, peer_mac, peer_v4, our_v4, 8, 5);
	memcpy(g, f, 34);
	memset(g + 34, 1, 4);
	memcpy(g + 38, f + 34, len - 34);
	g[14] = 0x46;
	put16(g + 16, (unsigned)(len - 14 + 4));
	g[24] = g[25] = 0;
	put16(g + 24, (uint16_t)~t_sum(g + 14, 24, 0));
	ASSERT_EQ(MRCD_L2_REPLY, in(n, 0, g, len + 4, T0));
	ASSERT_EQ(0x45, rbuf[14]);
	ASSERT_EQ(0xffff, t_sum(rbuf + 14, 20, 0));
	ASSERT_EQ(0xffff, t_sum(rbuf + 34, 13, 0));
	ASSERT_EQ(0, rbuf[34]);
	mrcd_neigh_destroy(n);
}

TEST(neigh, icmp6_echo__reply_with_correct_checksums)
{
	static const size_t payloads[] = {0, 1, 5, 6, 33, 1001, 1452};
	struct mrcd_neigh *n = mk(8);
	uint8_t f[2048], exp[2048], msg[1600];

	for (unsigned i = 0; i < sizeof(payloads) / sizeof(payloads[0]); i++) {
		for (unsigned ll = 0; ll < 2; ll++) {
			const uint8_t *us = ll ? our_ll : our_v6, *them = ll ? peer_ll : peer_v6;
			size_t ml = t_echo6(msg, 128, payloads[i]);
			size_t len = t_ip6(f, -1, our_mac, peer_mac, them, us, 64, msg, ml);
			ASSERT_EQ(MRCD_L2_REPLY, in(n, 0, f, len, T0));
			ml = t_echo6(msg, 129, payloads[i]);
			size_t el = t_ip6(exp, -1, peer_mac, our_mac, us, them, 64, msg, ml);
			ASSERT_EQ(el, rlen);
			ASSERT_MEMEQ(rbuf, exp, el);
			ASSERT_EQ(0xffff, t_sum6(rbuf + 22, rbuf + 38, rbuf + 54, ml));
		}
	}
	ASSERT_EQ(14u, ctr(n, 0).icmp6_echo);
	mrcd_neigh_destroy(n);
}

TEST(neigh, icmp6__not_mine_or_malformed)
{
	struct mrcd_neigh *n = mk(8);
	uint8_t f[256], msg[64];
	uint8_t an_mac[6] = {0x33, 0x33, 0, 0, 0, 1};

	size_t ml = t_echo6(msg, 128, 4);
	/* echo to all-nodes: not answered */
	size_t len = t_ip6(f, -1, an_mac, peer_mac, peer_v6, all_nodes, 64, msg, ml);
	ASSERT_EQ(MRCD_L2_NOT_MINE, in(n, 0, f, len, T0));
	/* echo reply, router advertisement: not ours */
	ml = t_echo6(msg, 129, 4);
	len = t_ip6(f, -1, our_mac, peer_mac, peer_v6, our_v6, 64, msg, ml);
	ASSERT_EQ(MRCD_L2_NOT_MINE, in(n, 0, f, len, T0));
	ml = t_echo6(msg, 134, 16);
	len = t_ip6(f, -1, an_mac, peer_mac, peer_ll, all_nodes, 255, msg, ml);
	ASSERT_EQ(MRCD_L2_NOT_MINE, in(n, 0, f, len, T0));
	/* UDP (an MRC packet) */
	ml = t_echo6(msg, 128, 4);
	len = t_ip6(f, -1, our_mac, peer_mac, peer_v6, our_v6, 64, msg, ml);
	f[20] = 17;
	ASSERT_EQ(MRCD_L2_NOT_MINE, in(n, 0, f, len, T0));
	ASSERT_EQ(0u, ctr(n, 0).malformed);
	/* bad checksum, payload length past the frame, multicast source */
	len = t_ip6(f, -1, our_mac, peer_mac, peer_v6, our_v6, 64, msg, ml);
	f[len - 1] ^= 0x10;
	ASSERT_EQ(MRCD_L2_CONSUMED, in(n, 0, f, len, T0));
	len = t_ip6(f, -1, our_mac, peer_mac, peer_v6, our_v6, 64, msg, ml);
	ASSERT_EQ(MRCD_L2_CONSUMED, in(n, 0, f, len - 1, T0));
	len = t_ip6(f, -1, our_mac, peer_mac, all_nodes, our_v6, 64, msg, ml);
	ASSERT_EQ(MRCD_L2_CONSUMED, in(n, 0, f, len, T0));
	ASSERT_EQ(3u, ctr(n, 0).malformed);
	mrcd_neigh_destroy(n);
}

/* ---- VLAN ------------------------------------------------------------------------ */

TEST(neigh, vlan__tagged_input_tagged_reply)
{
	struct mrcd_neigh *n = mk(8);
	uint8_t f[256], exp[64] = {0};

	/* untagged port, tagged request: the reply keeps the tag (PCP too) */
	size_t len = t_arp(f, 0xa064, bcast, peer_mac, 1, peer_mac, peer_v4, zero6, our_v4);
	ASSERT_EQ(46u, len);
	ASSERT_EQ(MRCD_L2_REPLY, in(n, 0, f, len, T0));
	t_arp(exp, 0xa064, peer_mac, our_mac, 2, our_mac, our_v4, peer_mac, peer_v4);
	ASSERT_EQ(64u, rlen);
	ASSERT_MEMEQ(rbuf, exp, 64);
	/* tagged echo6 */
	uint8_t msg[64];
	size_t ml = t_echo6(msg, 128, 3);
	len = t_ip6(f, 0x0064, our_mac, peer_mac, peer_v6, our_v6, 64, msg, ml);
	ASSERT_EQ(MRCD_L2_REPLY, in(n, 0, f, len, T0));
	ASSERT_EQ(0x81, rbuf[12]);
	ASSERT_EQ(0x64, rbuf[15]);
	ASSERT_EQ(0xffff, t_sum6(rbuf + 26, rbuf + 42, rbuf + 58, ml));
	mrcd_neigh_destroy(n);
}

TEST(neigh, vlan__tagged_port)
{
	struct mrcd_neigh *n = mk(8);
	struct mrcd_l2_port p = {0};
	uint8_t f[256], exp[64] = {0}, mac[6];

	memcpy(p.mac, our_mac, 6);
	p.has_v4 = true;
	memcpy(p.v4, our_v4, 4);
	p.v4_plen = 24;
	p.vlan = true;
	p.vlan_tci = 0x2064; /* PCP 1, VID 100 */
	ASSERT_EQ(0, mrcd_neigh_set_port(n, 0, &p));
	/* another VLAN: not ours */
	size_t len = t_arp(f, 0x0065, bcast, peer_mac, 1, peer_mac, peer_v4, zero6, our_v4);
	ASSERT_EQ(MRCD_L2_NOT_MINE, in(n, 0, f, len, T0));
	/* our VID with another PCP: answered with the received TCI */
	len = t_arp(f, 0x0064, bcast, peer_mac, 1, peer_mac, peer_v4, zero6, our_v4);
	ASSERT_EQ(MRCD_L2_REPLY, in(n, 0, f, len, T0));
	ASSERT_EQ(0x00, rbuf[14]);
	/* untagged (the NIC stripped it): the reply carries the port's tag */
	len = t_arp(f, -1, bcast, peer_mac, 1, peer_mac, peer_v4, zero6, our_v4);
	ASSERT_EQ(MRCD_L2_REPLY, in(n, 0, f, len, T0));
	t_arp(exp, 0x2064, peer_mac, our_mac, 2, our_mac, our_v4, peer_mac, peer_v4);
	ASSERT_EQ(64u, rlen);
	ASSERT_MEMEQ(rbuf, exp, 64);
	/* requests we originate are tagged */
	ASSERT_EQ(-EAGAIN, res(n, 0, 4, peer3_v4, T0, mac));
	t_arp(exp, 0x2064, bcast, our_mac, 1, our_mac, our_v4, zero6, peer3_v4);
	ASSERT_EQ(64u, qlen);
	ASSERT_MEMEQ(qbuf, exp, 64);
	ASSERT_EQ(-EAGAIN, res(n, 0, 6, peer_v6, T0, mac));
	ASSERT_EQ(MRCD_NEIGH_REQ_MAX, qlen);
	ASSERT_EQ(0x81, qbuf[12]);
	mrcd_neigh_destroy(n);
}

/* ---- robustness ------------------------------------------------------------------ */

/* Every valid frame kind, built into @f; returns its length. */
static size_t sample_frame(unsigned kind, uint8_t *f)
{
	uint8_t msg[128], snm[16];

	t_snm(snm, our_v6);
	switch (kind) {
	case 0:
		return t_arp(f, -1, bcast, peer_mac, 1, peer_mac, peer_v4, zero6, our_v4);
	case 1:
		return t_arp(f, -1, our_mac, peer_mac, 2, peer_mac, peer_v4, our_mac, our_v4);
	case 2:
		return t_arp(f, 0x64, bcast, peer_mac, 1, peer_mac, peer_v4, zero6, our_v4);
	case 3:
		return t_icmp4(f, -1, our_mac, peer_mac, peer_v4, our_v4, 8, 37);
	case 4:
		return t_icmp4(f, 0x64, our_mac, peer_mac, peer_v4, our_v4, 8, 0);
	case 5:
		return ns_frame(f, -1, snm, our_v6, peer_mac, 255);
	case 6:
		return ns_frame(f, 0x64, snm, our_v6, NULL, 255);
	case 7:
		return na_frame(f, our_v6, 0x60, peer_v6, peer_v6, peer_mac);
	case 8:
		return t_ip6(f, -1, our_mac, peer_mac, peer_v6, our_v6, 64, msg, t_echo6(msg, 128, 21));
	case 9:
		return t_ip6(f, 0x64, our_mac, peer_mac, peer_ll, our_ll, 64, msg, t_echo6(msg, 128, 0));
	default:
		return 0;
	}
}
#define N_SAMPLES 10u

TEST(neigh, input__every_truncation_is_safe)
{
	uint8_t f[256];

	for (unsigned k = 0; k < N_SAMPLES; k++) {
		struct mrcd_neigh *n = mk(8);
		size_t full = sample_frame(k, f);
		uint8_t mac[6];

		ASSERT_GT(full, 0u);
		/* entry pending so NA (kind 7) and ARP replies have something to update */
		res(n, 0, 6, peer_v6, T0, mac);
		for (size_t len = 0; len < full; len++) {
			/* an exact-size heap copy, so ASan sees any over-read */
			uint8_t *g = malloc(len ? len : 1);
			ASSERT_TRUE(g != NULL);
			memcpy(g, f, len);
			enum mrcd_l2_verdict v = in(n, 0, g, len, T0);
			ASSERT_TRUE(v == MRCD_L2_NOT_MINE || v == MRCD_L2_CONSUMED);
			ASSERT_EQ(0u, rlen);
			free(g);
		}
		uint8_t *g = malloc(full);
		memcpy(g, f, full);
		enum mrcd_l2_verdict v = in(n, 0, g, full, T0);
		ASSERT_TRUE(v == (k == 1 || k == 7 ? MRCD_L2_CONSUMED : MRCD_L2_REPLY));
		free(g);
		mrcd_neigh_destroy(n);
	}
}

TEST(neigh, input__random_corruption_is_safe)
{
	struct mrcd_neigh *n = mk(16);
	uint8_t f[256];
	uint32_t seed = 0x5eed;

	for (unsigned it = 0; it < 20000; it++) {
		size_t full = sample_frame(it % N_SAMPLES, f);
		for (unsigned j = 0; j < 1 + it % 4; j++) {
			seed = seed * 1103515245u + 12345u;
			f[(seed >> 8) % full] ^= (uint8_t)(1u << ((seed >> 4) % 8));
		}
		seed = seed * 1103515245u + 12345u;
		size_t len = (seed >> 16) % 4 == 0 ? (seed >> 8) % (full + 1) : full;
		uint8_t *g = malloc(len ? len : 1);
		memcpy(g, f, len);
		enum mrcd_l2_verdict v = in(n, 0, g, len, T0 + it);
		ASSERT_TRUE(v <= MRCD_L2_REPLY);
		if (v == MRCD_L2_REPLY) {
			ASSERT_GE(rlen, 60u);
			ASSERT_LE(rlen, MRCD_L2_REPLY_CAP(len));
		} else {
			ASSERT_EQ(0u, rlen);
		}
		free(g);
	}
	ASSERT_LE(mrcd_neigh_count(n), 16u);
	mrcd_neigh_destroy(n);
}

TEST(neigh, input__small_reply_buffer_is_counted)
{
	struct mrcd_neigh *n = mk(8);
	uint8_t f[256], small[59];
	size_t l = 7;

	size_t len = t_arp(f, -1, bcast, peer_mac, 1, peer_mac, peer_v4, zero6, our_v4);
	ASSERT_EQ(MRCD_L2_CONSUMED, mrcd_l2_input(n, 0, f, len, T0, small, sizeof(small), &l));
	ASSERT_EQ(0u, l);
	ASSERT_EQ(MRCD_L2_CONSUMED, mrcd_l2_input(n, 0, f, len, T0, NULL, 0, NULL));
	ASSERT_EQ(2u, ctr(n, 0).tx_nobufs);
	/* the sender is learned all the same */
	ASSERT_EQ(1u, mrcd_neigh_count(n));
	/* MRCD_L2_REPLY_CAP is enough for the largest growth (NS -> NA) */
	uint8_t snm[16], exact[MRCD_L2_REPLY_CAP(78)];
	t_snm(snm, our_v6);
	len = ns_frame(f, -1, our_v6, our_v6, NULL, 255);
	ASSERT_EQ(78u, len);
	ASSERT_EQ(MRCD_L2_REPLY, mrcd_l2_input(n, 0, f, len, T0, exact, sizeof(exact), &l));
	ASSERT_EQ(86u, l);
	mrcd_neigh_destroy(n);
}

/* ---- list / counters ---------------------------------------------------------------- */

TEST(neigh, list__reports_every_entry)
{
	struct mrcd_neigh *n = mk(8);
	uint8_t f[256], mac[6];
	struct mrcd_neigh_entry all[8], e;

	ASSERT_EQ(0, mrcd_neigh_add_static(n, -1, 6, far_v6, peer2_mac));
	size_t len = t_arp(f, -1, bcast, peer_mac, 1, peer_mac, peer_v4, zero6, our_v4);
	ASSERT_EQ(MRCD_L2_REPLY, in(n, 0, f, len, T0 + 7));
	/* port 1: 10.0.0.3 is off 10.1.0.0/24 and there is no gateway */
	ASSERT_EQ(-EHOSTUNREACH, res(n, 1, 4, peer3_v4, T0, mac));
	ASSERT_EQ(-EAGAIN, res(n, 0, 4, peer3_v4, T0 + 9, mac));
	ASSERT_EQ(3u, mrcd_neigh_count(n));
	ASSERT_EQ(3u, mrcd_neigh_list(n, all, 8));
	ASSERT_EQ(2u, mrcd_neigh_list(n, all, 2));
	ASSERT_EQ(0u, mrcd_neigh_list(n, all, 0));

	ASSERT_TRUE(find(n, -1, 6, far_v6, &e));
	ASSERT_EQ(MRCD_NEIGH_STATIC, e.state);
	ASSERT_MEMEQ(e.mac, peer2_mac, 6);
	ASSERT_MEMEQ(e.ip, far_v6, 16);
	ASSERT_TRUE(find(n, 0, 4, peer_v4, &e));
	ASSERT_EQ(MRCD_NEIGH_REACHABLE, e.state);
	ASSERT_U64_EQ(T0 + 7, e.updated_ns);
	ASSERT_MEMEQ(e.ip + 4, zero6, 6); /* IPv4 padded with zeros */
	ASSERT_TRUE(find(n, 0, 4, peer3_v4, &e));
	ASSERT_EQ(MRCD_NEIGH_INCOMPLETE, e.state);
	ASSERT_U64_EQ(T0 + 9, e.updated_ns);
	ASSERT_MEMEQ(e.mac, zero6, 6);
	mrcd_neigh_destroy(n);
}

TEST(neigh, counters__names_and_out_of_range)
{
	struct mrcd_neigh *n = mk(8);
	struct mrcd_neigh_counters c;
	unsigned k = 0;

	ASSERT_STREQ("arp_rx", mrcd_neigh_counter_name(0));
	while (mrcd_neigh_counter_name(k) != NULL) {
		ASSERT_TRUE(mrcd_neigh_counter_desc(k) != NULL);
		k++;
	}
	ASSERT_EQ(sizeof(c) / sizeof(uint64_t), k);
	ASSERT_TRUE(mrcd_neigh_counter_desc(k) == NULL);
	memset(&c, 0xff, sizeof(c));
	mrcd_neigh_counters_get(n, 99, &c);
	ASSERT_U64_EQ(0, c.arp_rx);
	ASSERT_U64_EQ(0, c.tx_nobufs);
	mrcd_neigh_destroy(n);
}

/* ---- routed next hops: on the link, static routes, the gateway ---------------- */

static const uint8_t rt_via_a[4] = {10, 0, 0, 250};   /* via of 192.168.0.0/16 */
static const uint8_t rt_via_b[4] = {10, 0, 0, 251};   /* via of 192.168.7.0/24 */
static const uint8_t rt_net16[4] = {192, 168, 0, 0};
static const uint8_t rt_net24[4] = {192, 168, 7, 0};
static const uint8_t rt_mid_v4[4] = {192, 168, 9, 1};  /* only in the /16 */
static const uint8_t rt_other_v4[4] = {172, 16, 1, 1}; /* in no route */
static const uint8_t rt_net6[16] = {0x20, 0x01, 0x0d, 0xb9};  /* 2001:db9::/32 */
static const uint8_t rt_via6[16] = {0x20, 0x01, 0x0d, 0xb8, [15] = 0xfd};

static void add_route(struct mrcd_l2_port *p, uint8_t family, const uint8_t *net, uint8_t plen,
		      const uint8_t *via)
{
	struct mrcd_l2_route *r = &p->routes[p->n_routes++];

	memset(r, 0, sizeof(*r));
	r->family = family;
	r->plen = plen;
	memcpy(r->prefix, net, family == 6 ? 16 : 4);
	memcpy(r->via, via, family == 6 ? 16 : 4);
}

/* Port 0 as mk() builds it, plus 192.168.0.0/16 via .250, 192.168.7.0/24 via
 * .251 and 2001:db9::/32 via 2001:db8::fd. */
static struct mrcd_neigh *mk_routed(void)
{
	struct mrcd_neigh *n = mk(16);
	struct mrcd_l2_port p;

	port0(&p);
	add_route(&p, 4, rt_net16, 16, rt_via_a);
	add_route(&p, 4, rt_net24, 24, rt_via_b);
	add_route(&p, 6, rt_net6, 32, rt_via6);
	ASSERT_EQ(0, mrcd_neigh_set_port(n, 0, &p));
	return n;
}

TEST(neigh, next_hop__link_route_gateway_in_that_order)
{
	struct mrcd_neigh *n = mk_routed();
	uint8_t hop[16];

	/* on the link: the destination itself */
	ASSERT_EQ(MRCD_NEIGH_VIA_LINK, mrcd_neigh_next_hop(n, 0, 4, peer_v4, hop));
	ASSERT_MEMEQ(hop, peer_v4, 4);
	ASSERT_MEMEQ(hop + 4, zero6, 6); /* padded */
	/* the longest route wins: 192.168.7.9 is in the /16 and the /24 */
	ASSERT_EQ(MRCD_NEIGH_VIA_ROUTE, mrcd_neigh_next_hop(n, 0, 4, far_v4, hop));
	ASSERT_MEMEQ(hop, rt_via_b, 4);
	ASSERT_EQ(MRCD_NEIGH_VIA_ROUTE, mrcd_neigh_next_hop(n, 0, 4, rt_mid_v4, hop));
	ASSERT_MEMEQ(hop, rt_via_a, 4);
	/* no route: the gateway */
	ASSERT_EQ(MRCD_NEIGH_VIA_GATEWAY, mrcd_neigh_next_hop(n, 0, 4, rt_other_v4, hop));
	ASSERT_MEMEQ(hop, gw_v4, 4);
	/* IPv6: a route of its own family, link-local on the link, else gw6 */
	ASSERT_EQ(MRCD_NEIGH_VIA_ROUTE, mrcd_neigh_next_hop(n, 0, 6, far_v6, hop));
	ASSERT_MEMEQ(hop, rt_via6, 16);
	ASSERT_EQ(MRCD_NEIGH_VIA_LINK, mrcd_neigh_next_hop(n, 0, 6, peer_ll, hop));
	ASSERT_MEMEQ(hop, peer_ll, 16);
	ASSERT_EQ(MRCD_NEIGH_VIA_LINK, mrcd_neigh_next_hop(n, 0, 6, peer_v6, hop));
	static const uint8_t v6_other[16] = {0x20, 0x01, 0x0d, 0xc0, [15] = 1};
	ASSERT_EQ(MRCD_NEIGH_VIA_GATEWAY, mrcd_neigh_next_hop(n, 0, 6, v6_other, hop));
	ASSERT_MEMEQ(hop, gw_v6, 16);
	/* pure: nothing was created or counted */
	ASSERT_EQ(0u, mrcd_neigh_count(n));
	ASSERT_U64_EQ(0, ctr(n, 0).via_route);
	mrcd_neigh_destroy(n);
}

TEST(neigh, next_hop__unreachable_and_bad_arguments)
{
	struct mrcd_neigh *n = mk(8);
	uint8_t hop[16];

	/* port 1: off-prefix, no route, no gateway */
	ASSERT_EQ(-EHOSTUNREACH, mrcd_neigh_next_hop(n, 1, 4, far_v4, hop));
	/* port 2 is not set */
	ASSERT_EQ(-EHOSTUNREACH, mrcd_neigh_next_hop(n, 2, 4, peer_v4, hop));
	ASSERT_EQ(-EINVAL, mrcd_neigh_next_hop(n, 3, 4, peer_v4, hop));
	ASSERT_EQ(-EINVAL, mrcd_neigh_next_hop(n, 0, 5, peer_v4, hop));
	ASSERT_EQ(-EINVAL, mrcd_neigh_next_hop(n, 0, 4, NULL, hop));
	ASSERT_EQ(-EINVAL, mrcd_neigh_next_hop(n, 0, 4, peer_v4, NULL));
	ASSERT_EQ(-EINVAL, mrcd_neigh_next_hop(NULL, 0, 4, peer_v4, hop));
	mrcd_neigh_destroy(n);
}

TEST(neigh, resolve__via_a_route_asks_for_the_routes_next_hop)
{
	struct mrcd_neigh *n = mk_routed();
	uint8_t mac[6], f[128], exp[60] = {0};
	struct mrcd_neigh_entry e;

	ASSERT_EQ(-EAGAIN, res(n, 0, 4, far_v4, T0, mac));
	t_arp(exp, -1, bcast, our_mac, 1, our_mac, our_v4, zero6, rt_via_b);
	ASSERT_EQ(60u, qlen);
	ASSERT_MEMEQ(qbuf, exp, 60);
	size_t len = t_arp(f, -1, our_mac, peer2_mac, 2, peer2_mac, rt_via_b, our_mac, our_v4);
	ASSERT_EQ(MRCD_L2_CONSUMED, in(n, 0, f, len, T0 + MS));
	ASSERT_EQ(0, res(n, 0, 4, far2_v4, T0 + 2 * MS, mac));
	ASSERT_MEMEQ(mac, peer2_mac, 6);
	/* the gateway was never asked for */
	ASSERT_FALSE(find(n, 0, 4, gw_v4, &e));
	ASSERT_TRUE(find(n, 0, 4, rt_via_b, &e));
	ASSERT_EQ(MRCD_NEIGH_ROLE_ROUTE, e.role);
	ASSERT_EQ(-EAGAIN, res(n, 0, 4, peer_v4, T0 + 3 * MS, mac));
	ASSERT_EQ(-EAGAIN, res(n, 0, 4, rt_other_v4, T0 + 3 * MS, mac));
	ASSERT_TRUE(find(n, 0, 4, gw_v4, &e));
	ASSERT_EQ(MRCD_NEIGH_ROLE_GATEWAY, e.role);
	ASSERT_TRUE(find(n, 0, 4, peer_v4, &e));
	ASSERT_EQ(MRCD_NEIGH_ROLE_HOST, e.role);
	struct mrcd_neigh_counters c = ctr(n, 0);
	ASSERT_U64_EQ(2, c.via_route);
	ASSERT_U64_EQ(1, c.via_link);
	ASSERT_U64_EQ(1, c.via_gateway);
	mrcd_neigh_destroy(n);
}

TEST(neigh, refresh__an_unanswered_gateway_fails_then_is_retried)
{
	struct mrcd_neigh *n = mk(8);
	uint8_t exp[60] = {0};
	struct mrcd_neigh_entry e;
	uint64_t t = T0;
	unsigned reqs = 0;

	ASSERT_EQ(-ENOENT, mrcd_neigh_lookup(n, 0, 4, gw_v4, &e));
	t_arp(exp, -1, bcast, our_mac, 1, our_mac, our_v4, zero6, gw_v4);
	/* every 100 ms, as lib/dp's link check does: one request each time */
	for (unsigned k = 0; k < MRCD_NEIGH_MAX_TRIES; k++, t += MRCD_NEIGH_REQ_INTERVAL_NS) {
		ASSERT_EQ(-EAGAIN, mrcd_neigh_refresh(n, 0, 4, gw_v4, t, NULL, qbuf, sizeof(qbuf), &qlen));
		ASSERT_EQ(60u, qlen);
		ASSERT_MEMEQ(qbuf, exp, 60);
		reqs++;
	}
	ASSERT_EQ(0, mrcd_neigh_lookup(n, 0, 4, gw_v4, &e));
	ASSERT_EQ(MRCD_NEIGH_INCOMPLETE, e.state);
	ASSERT_EQ(MRCD_NEIGH_ROLE_GATEWAY, e.role);
	/* the last request had its interval: FAILED, and traffic sees it */
	ASSERT_EQ(-EHOSTUNREACH, mrcd_neigh_refresh(n, 0, 4, gw_v4, t, NULL, qbuf, sizeof(qbuf), &qlen));
	ASSERT_EQ(0u, qlen);
	ASSERT_EQ(0, mrcd_neigh_lookup(n, 0, 4, gw_v4, &e));
	ASSERT_EQ(MRCD_NEIGH_FAILED, e.state);
	uint8_t mac[6];
	ASSERT_EQ(-EHOSTUNREACH, res(n, 0, 4, far_v4, t + MS, mac));
	ASSERT_EQ(0u, qlen);
	/* held for MRCD_NEIGH_FAIL_HOLD_NS, then asked for again */
	ASSERT_EQ(-EHOSTUNREACH, mrcd_neigh_refresh(n, 0, 4, gw_v4, t + MRCD_NEIGH_FAIL_HOLD_NS - 1,
						     NULL, qbuf, sizeof(qbuf), &qlen));
	ASSERT_EQ(-EHOSTUNREACH, mrcd_neigh_refresh(n, 0, 4, gw_v4, t + MRCD_NEIGH_FAIL_HOLD_NS, NULL,
						     qbuf, sizeof(qbuf), &qlen));
	ASSERT_EQ(60u, qlen);
	ASSERT_EQ(0, mrcd_neigh_lookup(n, 0, 4, gw_v4, &e));
	ASSERT_EQ(MRCD_NEIGH_FAILED, e.state); /* what mrcctl neighbours shows meanwhile */
	ASSERT_EQ(reqs + 1, ctr(n, 0).arp_tx_req);
	/* refreshes count no via; the one packet above counted its gateway */
	ASSERT_U64_EQ(1, ctr(n, 0).via_gateway);
	ASSERT_U64_EQ(0, ctr(n, 0).via_link);
	mrcd_neigh_destroy(n);
}

TEST(neigh, refresh__a_stale_gateway_is_asked_again_unicast)
{
	struct mrcd_neigh *n = mk(8);
	uint8_t f[128], mac[6], exp[60] = {0};
	struct mrcd_neigh_entry e;

	ASSERT_EQ(-EAGAIN, mrcd_neigh_refresh(n, 0, 4, gw_v4, T0, NULL, qbuf, sizeof(qbuf), &qlen));
	size_t len = t_arp(f, -1, our_mac, peer2_mac, 2, peer2_mac, gw_v4, our_mac, our_v4);
	ASSERT_EQ(MRCD_L2_CONSUMED, in(n, 0, f, len, T0 + MS));
	ASSERT_EQ(0, mrcd_neigh_refresh(n, 0, 4, gw_v4, T0 + 2 * MS, mac, qbuf, sizeof(qbuf), &qlen));
	ASSERT_EQ(0u, qlen);
	ASSERT_MEMEQ(mac, peer2_mac, 6);
	ASSERT_EQ(0, mrcd_neigh_lookup(n, 0, 4, gw_v4, &e));
	ASSERT_EQ(MRCD_NEIGH_REACHABLE, e.state);
	ASSERT_MEMEQ(e.mac, peer2_mac, 6);
	/* on expiry the refresh goes unicast to the MAC in use, which stays */
	ASSERT_EQ(0, mrcd_neigh_refresh(n, 0, 4, gw_v4, T0 + MS + MRCD_NEIGH_STALE_NS, mac, qbuf,
					sizeof(qbuf), &qlen));
	t_arp(exp, -1, peer2_mac, our_mac, 1, our_mac, our_v4, zero6, gw_v4);
	ASSERT_EQ(60u, qlen);
	ASSERT_MEMEQ(qbuf, exp, 60);
	ASSERT_MEMEQ(mac, peer2_mac, 6);
	ASSERT_EQ(-EINVAL, mrcd_neigh_refresh(n, 0, 4, gw_v4, T0, NULL, qbuf, 8, &qlen));
	ASSERT_EQ(-EHOSTUNREACH, mrcd_neigh_refresh(n, 2, 4, gw_v4, T0, NULL, qbuf, sizeof(qbuf), &qlen));
	mrcd_neigh_destroy(n);
}

TEST(neigh, port_hops__gateways_then_routes_each_once)
{
	struct mrcd_neigh *n = mk(8);
	struct mrcd_l2_port p = {0};
	struct mrcd_neigh_hop h[8];

	memcpy(p.mac, our_mac, 6);
	p.has_v4 = true;
	memcpy(p.v4, our_v4, 4);
	p.v4_plen = 24;
	p.has_gw4 = true;
	memcpy(p.gw4, gw_v4, 4);
	add_route(&p, 4, rt_net16, 16, gw_v4);   /* via the gateway: listed once */
	add_route(&p, 4, rt_net24, 24, rt_via_b);
	add_route(&p, 4, far_v4, 32, rt_via_b);  /* the same via again */
	ASSERT_EQ(0, mrcd_neigh_set_port(n, 0, &p));
	ASSERT_EQ(2u, mrcd_neigh_port_hops(n, 0, h, 8));
	ASSERT_EQ(4, h[0].family);
	ASSERT_MEMEQ(h[0].ip, gw_v4, 4);
	ASSERT_EQ(MRCD_NEIGH_ROLE_GATEWAY, h[0].role);
	ASSERT_MEMEQ(h[1].ip, rt_via_b, 4);
	ASSERT_EQ(MRCD_NEIGH_ROLE_ROUTE, h[1].role);
	ASSERT_EQ(1u, mrcd_neigh_port_hops(n, 0, h, 1));
	ASSERT_EQ(0u, mrcd_neigh_port_hops(n, 1, h, 8)); /* no gateway, no route */
	ASSERT_EQ(0u, mrcd_neigh_port_hops(n, 2, h, 8)); /* not set */
	ASSERT_EQ(0u, mrcd_neigh_port_hops(n, 9, h, 8));
	/* a static any-port entry for a router is listed as one */
	ASSERT_EQ(0, mrcd_neigh_add_static(n, -1, 4, rt_via_b, peer_mac));
	struct mrcd_neigh_entry e;
	ASSERT_EQ(0, mrcd_neigh_lookup(n, 1, 4, rt_via_b, &e));
	ASSERT_EQ(-1, e.port);
	ASSERT_EQ(MRCD_NEIGH_STATIC, e.state);
	ASSERT_EQ(MRCD_NEIGH_ROLE_ROUTE, e.role);
	mrcd_neigh_destroy(n);
}

TEST(neigh, set_port__rejects_bad_routes)
{
	struct mrcd_neigh *n = mk(8);
	struct mrcd_l2_port p = {0};

	memcpy(p.mac, our_mac, 6);
	p.has_v4 = true;
	memcpy(p.v4, our_v4, 4);
	p.v4_plen = 24;
	add_route(&p, 4, rt_net16, 33, rt_via_a);
	ASSERT_EQ(-EINVAL, mrcd_neigh_set_port(n, 0, &p));
	p.n_routes = 0;
	add_route(&p, 5, rt_net16, 16, rt_via_a);
	ASSERT_EQ(-EINVAL, mrcd_neigh_set_port(n, 0, &p));
	p.n_routes = 0;
	add_route(&p, 6, rt_net6, 129, rt_via6);
	ASSERT_EQ(-EINVAL, mrcd_neigh_set_port(n, 0, &p));
	p.n_routes = 0;
	for (unsigned k = 0; k < MRCD_NEIGH_MAX_ROUTES; k++)
		add_route(&p, 4, rt_net16, 16, rt_via_a);
	ASSERT_EQ(0, mrcd_neigh_set_port(n, 0, &p));
	p.n_routes = MRCD_NEIGH_MAX_ROUTES + 1;
	ASSERT_EQ(-EINVAL, mrcd_neigh_set_port(n, 0, &p));
	mrcd_neigh_destroy(n);
}
