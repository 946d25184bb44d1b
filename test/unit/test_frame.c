/* test_frame.c - unit tests for lib/core/frame.c: EV placement, DSCP map,
 * header bytes, whole-frame build, and the parser (round trips, SRv6 with and
 * without SRH, trims, ICRC, truncation, non-MRC frames, padding). */
#include <errno.h>

#include "mrcp_bytes.h"
#include "mrcp_csum.h"
#include "mrcp_frame.h"
#include "mrcp_test.h"

#include "icrc_vectors.h" /* frames from test/unit/icrc_vectors.py, see test_icrc.c */

#define NVEC (sizeof(icrc_vectors) / sizeof(icrc_vectors[0]))
#define BUF_MAX 2048

static const uint8_t mac_a[6] = {0x02, 0, 0, 0, 0, 0x0A};
static const uint8_t mac_b[6] = {0x02, 0, 0, 0, 0, 0x0B};
static const uint8_t ip4_a[4] = {192, 168, 1, 10};
static const uint8_t ip4_b[4] = {192, 168, 1, 20};
static const uint8_t ip6_a[16] = {0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0A};
static const uint8_t ip6_b[16] = {0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0B};
static const uint8_t usid[16] = {0xFC, 0xBB, 0, 0, 0, 0x01, 0, 0x02, 0, 0x03};

/* A heap copy of exactly @len bytes, so ASan flags any read past the end. */
static uint8_t *dup_exact(const uint8_t *p, size_t len)
{
	uint8_t *c = malloc(len ? len : 1);

	ASSERT_TRUE(c != NULL);
	memcpy(c, p, len);
	return c;
}

/* MRC bytes, hand-encoded (wire.c is not used here): WRITE_ONLY with
 * METH, TSETH, RETH and @payload bytes plus pad. Returns the length. */
static size_t mrc_sample(uint8_t *b, size_t payload)
{
	size_t pad = (4 - payload % 4) % 4;
	size_t n = 12 + 4 + 4 + 16;

	memset(b, 0, n);
	b[0] = 0xCA;                          /* WRITE_ONLY */
	b[1] = (uint8_t)(pad << 4);
	mrcp_put_be16(b + 2, 0xFFFF);
	mrcp_put_be24(b + 5, 0x123456);       /* DestQP */
	b[8] = 0x90;                          /* AckReq, ts */
	mrcp_put_be24(b + 9, 0xABCDEF);       /* PSN */
	mrcp_put_be16(b + 14, 3);             /* MSN */
	b[19] = 0x01;                         /* TSETH ftype */
	mrcp_put_be64(b + 20, 0x1000);        /* RETH VA */
	mrcp_put_be32(b + 32, (uint32_t)payload);
	for (size_t i = 0; i < payload; i++)
		b[n + i] = (uint8_t)(i * 13 + 1);
	memset(b + n + payload, 0, pad);
	return n + payload + pad;
}

static void tx_setup(struct mrcp_frame_tx *tx, enum mrcp_frame_l3 l3, bool vlan,
		     enum mrcp_ev_layout layout)
{
	mrcp_frame_tx_defaults(tx);
	memcpy(tx->dst_mac, mac_b, 6);
	memcpy(tx->src_mac, mac_a, 6);
	tx->vlan = vlan;
	tx->vlan_tci = 0xA00C;
	tx->l3 = l3;
	if (l3 == MRCP_FRAME_IPV4) {
		memcpy(tx->src_ip, ip4_a, 4);
		memcpy(tx->dst_ip, ip4_b, 4);
		tx->ev = 0xC0DE;
	} else {
		memcpy(tx->src_ip, ip6_a, 16);
		memcpy(tx->dst_ip, ip6_b, 16);
		tx->ev = 0x7B5AC0DEu;
	}
	memcpy(tx->srv6_da, usid, 16);
	tx->dscp = 12;
	tx->ecn = MRCP_ECN_ECT0;
	tx->ttl = 33;
	tx->ev_layout = layout;
	tx->ip_id = 0x5151;
}

/* Build a frame with a 64-byte payload; returns its length. */
static size_t build(const struct mrcp_frame_tx *tx, uint8_t *buf, size_t payload)
{
	uint8_t mrc[BUF_MAX];
	size_t n = mrc_sample(mrc, payload);
	int rc = mrcp_frame_build(tx, mrc, n, buf, BUF_MAX);

	ASSERT_EQ((long long)(mrcp_frame_hdr_len(tx) + n + 4), rc);
	return (size_t)rc;
}

/* IPv4 header checksum, for tests that edit an IPv4 header. */
static void fix_ipv4_csum(uint8_t *ip)
{
	mrcp_csum_ipv4_set(ip, (size_t)(ip[0] & 0x0F) * 4);
}

static void rx_defaults(struct mrcp_frame_rx_cfg *cfg)
{
	mrcp_frame_rx_cfg_defaults(cfg);
}

/* Every view field that a built frame determines. */
static void check_view(const struct mrcp_frame_tx *tx, const struct mrcp_frame_view *v,
		       const uint8_t *mrc, size_t mrc_len)
{
	uint8_t zero[16] = {0};
	size_t alen = tx->l3 == MRCP_FRAME_IPV4 ? 4 : 16;

	ASSERT_MEMEQ(tx->dst_mac, v->dst_mac, 6);
	ASSERT_MEMEQ(tx->src_mac, v->src_mac, 6);
	ASSERT_EQ(tx->vlan, v->vlan);
	ASSERT_EQ(tx->vlan ? tx->vlan_tci : 0, v->vlan_tci);
	ASSERT_EQ(tx->l3, v->l3);
	ASSERT_MEMEQ(tx->src_ip, v->src_ip, alen);
	ASSERT_MEMEQ(tx->dst_ip, v->dst_ip, alen);
	ASSERT_MEMEQ(zero, v->src_ip + alen, 16 - alen);
	ASSERT_MEMEQ(tx->l3 == MRCP_FRAME_SRV6 ? tx->srv6_da : zero, v->srv6_da, 16);
	ASSERT_EQ(tx->dscp, v->dscp);
	ASSERT_EQ(tx->ecn, v->ecn);
	ASSERT_EQ(tx->l3 == MRCP_FRAME_SRV6 ? MRCP_SRV6_HOP_LIMIT : tx->ttl, v->ttl);
	ASSERT_EQ(tx->udp_dport, v->udp_dport);
	ASSERT_EQ(tx->ev, v->ev);
	ASSERT_EQ(MRCP_TRIM_NONE, v->trim);
	ASSERT_FALSE(v->truncated);
	ASSERT_EQ(mrc_len, v->mrc_len);
	ASSERT_MEMEQ(mrc, v->mrc, mrc_len);
}

/* ---- mrcp_frame_ev_encode / decode (D4, D5) ------------------------------- */

TEST(frame, frame_ev_encode__lo16_sport_is_default)
{
	uint16_t sport;
	uint32_t fl;

	ASSERT_EQ(0, MRCP_EV_LO16_SPORT);
	mrcp_frame_ev_encode(0x89ABCDEFu, MRCP_EV_LO16_SPORT, &sport, &fl);
	ASSERT_EQ(0xCDEF, sport);
	ASSERT_EQ(0x089AB, fl);
	ASSERT_EQ(0, fl >> 16); /* flow label[19:16] = 0 */
}

TEST(frame, frame_ev_encode__hi16_sport_swaps_halves)
{
	uint16_t sport;
	uint32_t fl;

	mrcp_frame_ev_encode(0x89ABCDEFu, MRCP_EV_HI16_SPORT, &sport, &fl);
	ASSERT_EQ(0x89AB, sport);
	ASSERT_EQ(0x0CDEF, fl);
}

TEST(frame, frame_ev_decode__round_trips_and_ignores_flow_label_top_bits)
{
	static const uint32_t evs[] = {0, 1, 0xFFFF, 0x10000, 0xFFFFFFFFu, 0x89ABCDEFu};

	for (int l = 0; l < 2; l++) {
		for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++) {
			uint16_t sport;
			uint32_t fl;

			mrcp_frame_ev_encode(evs[i], (enum mrcp_ev_layout)l, &sport, &fl);
			ASSERT_EQ(evs[i], mrcp_frame_ev_decode(sport, fl, (enum mrcp_ev_layout)l));
			ASSERT_EQ(evs[i], mrcp_frame_ev_decode(sport, fl | 0xF0000u,
								(enum mrcp_ev_layout)l));
		}
	}
}

/* ---- DSCP map (D23) ----------------------------------------------------------- */

TEST(frame, dscp_map_defaults__are_d23)
{
	struct mrcp_dscp_map m;

	memset(&m, 0xEE, sizeof(m));
	mrcp_dscp_map_defaults(&m);
	ASSERT_EQ(10, m.dscp[MRCP_DSCP_CLASS_TRIMMABLE]);
	ASSERT_EQ(12, m.dscp[MRCP_DSCP_CLASS_TRIMMABLE_RETX]);
	ASSERT_EQ(14, m.dscp[MRCP_DSCP_CLASS_NO_TRIM]);
	ASSERT_EQ(11, m.dscp[MRCP_DSCP_CLASS_TRIMMED]);
	ASSERT_EQ(13, m.dscp[MRCP_DSCP_CLASS_TRIMMED_LASTHOP]);
	ASSERT_EQ(46, m.dscp[MRCP_DSCP_CLASS_CONTROL]);
	ASSERT_EQ(6, MRCP_DSCP_CLASS_COUNT);
}

TEST(frame, dscp_map_check__accepts_defaults)
{
	struct mrcp_dscp_map m;

	mrcp_dscp_map_defaults(&m);
	ASSERT_EQ(0, mrcp_dscp_map_check(&m));
	m.dscp[MRCP_DSCP_CLASS_TRIMMABLE] = m.dscp[MRCP_DSCP_CLASS_NO_TRIM];
	ASSERT_EQ(0, mrcp_dscp_map_check(&m)); /* data classes may share */
	m.dscp[MRCP_DSCP_CLASS_CONTROL] = 63;
	ASSERT_EQ(0, mrcp_dscp_map_check(&m));
}

TEST(frame, dscp_map_check__rejects_codepoint_above_63)
{
	for (int c = 0; c < MRCP_DSCP_CLASS_COUNT; c++) {
		struct mrcp_dscp_map m;

		mrcp_dscp_map_defaults(&m);
		m.dscp[c] = 64;
		ASSERT_EQ(-EINVAL, mrcp_dscp_map_check(&m));
	}
}

TEST(frame, dscp_map_check__rejects_trimmed_codepoint_shared_with_another_class)
{
	for (int c = 0; c < MRCP_DSCP_CLASS_COUNT; c++) {
		struct mrcp_dscp_map m;

		if (c == MRCP_DSCP_CLASS_TRIMMED || c == MRCP_DSCP_CLASS_TRIMMED_LASTHOP)
			continue;
		mrcp_dscp_map_defaults(&m);
		m.dscp[c] = m.dscp[MRCP_DSCP_CLASS_TRIMMED];
		ASSERT_EQ(-EINVAL, mrcp_dscp_map_check(&m));
		mrcp_dscp_map_defaults(&m);
		m.dscp[c] = m.dscp[MRCP_DSCP_CLASS_TRIMMED_LASTHOP];
		ASSERT_EQ(-EINVAL, mrcp_dscp_map_check(&m));
	}
}

TEST(frame, dscp_class_name__names_every_class)
{
	ASSERT_STREQ("TRIMMABLE", mrcp_dscp_class_name(MRCP_DSCP_CLASS_TRIMMABLE));
	ASSERT_STREQ("TRIMMABLE_RETX", mrcp_dscp_class_name(MRCP_DSCP_CLASS_TRIMMABLE_RETX));
	ASSERT_STREQ("NO_TRIM", mrcp_dscp_class_name(MRCP_DSCP_CLASS_NO_TRIM));
	ASSERT_STREQ("TRIMMED", mrcp_dscp_class_name(MRCP_DSCP_CLASS_TRIMMED));
	ASSERT_STREQ("TRIMMED_LASTHOP", mrcp_dscp_class_name(MRCP_DSCP_CLASS_TRIMMED_LASTHOP));
	ASSERT_STREQ("CONTROL", mrcp_dscp_class_name(MRCP_DSCP_CLASS_CONTROL));
	ASSERT_TRUE(mrcp_dscp_class_name(MRCP_DSCP_CLASS_COUNT) == NULL);
	ASSERT_TRUE(mrcp_dscp_class_name((enum mrcp_dscp_class)-1) == NULL);
}

/* ---- transmit ------------------------------------------------------------------ */

TEST(frame, frame_tx_defaults__values)
{
	struct mrcp_frame_tx tx;

	memset(&tx, 0xEE, sizeof(tx));
	mrcp_frame_tx_defaults(&tx);
	ASSERT_EQ(0, tx.l3); /* the caller must choose */
	ASSERT_EQ(10, tx.dscp);
	ASSERT_EQ(MRCP_ECN_ECT0, tx.ecn);
	ASSERT_EQ(64, tx.ttl);
	ASSERT_EQ(MRCP_EV_LO16_SPORT, tx.ev_layout);
	ASSERT_EQ(4791, tx.udp_dport);
	ASSERT_FALSE(tx.vlan);
	ASSERT_FALSE(tx.udp_csum);
	ASSERT_EQ(0, tx.ev);
}

TEST(frame, frame_hdr_len__per_network_layer_and_vlan)
{
	struct mrcp_frame_tx tx;

	tx_setup(&tx, MRCP_FRAME_IPV4, false, MRCP_EV_LO16_SPORT);
	ASSERT_EQ(14 + 20 + 8, mrcp_frame_hdr_len(&tx));
	tx.vlan = true;
	ASSERT_EQ(18 + 20 + 8, mrcp_frame_hdr_len(&tx));
	tx.l3 = MRCP_FRAME_IPV6;
	ASSERT_EQ(18 + 40 + 8, mrcp_frame_hdr_len(&tx));
	tx.l3 = MRCP_FRAME_SRV6;
	ASSERT_EQ(18 + 80 + 8, mrcp_frame_hdr_len(&tx));
	ASSERT_EQ(MRCP_FRAME_HDR_MAX, mrcp_frame_hdr_len(&tx));
	tx.l3 = 0;
	ASSERT_EQ(0, mrcp_frame_hdr_len(&tx));
	tx.l3 = 4;
	ASSERT_EQ(0, mrcp_frame_hdr_len(&tx));
}

TEST(frame, frame_icrc_off__is_the_inner_header_in_srv6)
{
	struct mrcp_frame_tx tx;

	tx_setup(&tx, MRCP_FRAME_IPV4, false, MRCP_EV_LO16_SPORT);
	ASSERT_EQ(14, mrcp_frame_icrc_off(&tx));
	tx.vlan = true;
	ASSERT_EQ(18, mrcp_frame_icrc_off(&tx));
	tx.l3 = MRCP_FRAME_IPV6;
	ASSERT_EQ(18, mrcp_frame_icrc_off(&tx));
	tx.l3 = MRCP_FRAME_SRV6;
	ASSERT_EQ(18 + 40, mrcp_frame_icrc_off(&tx)); /* D24 */
	tx.l3 = 0;
	ASSERT_EQ(0, mrcp_frame_icrc_off(&tx));
}

TEST(frame, frame_hdr_build__ipv4_fields)
{
	struct mrcp_frame_tx tx;
	uint8_t b[64];

	tx_setup(&tx, MRCP_FRAME_IPV4, false, MRCP_EV_HI16_SPORT);
	ASSERT_EQ(42, mrcp_frame_hdr_build(&tx, 100, b, sizeof(b)));
	ASSERT_MEMEQ(mac_b, b, 6);
	ASSERT_MEMEQ(mac_a, b + 6, 6);
	ASSERT_EQ(0x0800, mrcp_get_be16(b + 12));
	ASSERT_EQ(0x45, b[14]);
	ASSERT_EQ(12 << 2 | 2, b[15]);                 /* DSCP, ECT(0) */
	ASSERT_EQ(20 + 8 + 100 + 4, mrcp_get_be16(b + 16));
	ASSERT_EQ(0x5151, mrcp_get_be16(b + 18));
	ASSERT_EQ(0x4000, mrcp_get_be16(b + 20));      /* DF, not a fragment */
	ASSERT_EQ(33, b[22]);
	ASSERT_EQ(17, b[23]);
	ASSERT_MEMEQ(ip4_a, b + 26, 4);
	ASSERT_MEMEQ(ip4_b, b + 30, 4);
	ASSERT_EQ(0, mrcp_csum(b + 14, 20));            /* header checksum */
	ASSERT_EQ(0xC0DE, mrcp_get_be16(b + 34));      /* D5: layout ignored */
	ASSERT_EQ(4791, mrcp_get_be16(b + 36));
	ASSERT_EQ(8 + 100 + 4, mrcp_get_be16(b + 38));
	ASSERT_EQ(0, mrcp_get_be16(b + 40));           /* D2 */
}

TEST(frame, frame_hdr_build__ipv6_fields)
{
	struct mrcp_frame_tx tx;
	uint8_t b[64];

	for (int l = 0; l < 2; l++) {
		tx_setup(&tx, MRCP_FRAME_IPV6, false, (enum mrcp_ev_layout)l);
		tx.ecn = MRCP_ECN_NOT_ECT;
		tx.dscp = 46;
		ASSERT_EQ(62, mrcp_frame_hdr_build(&tx, 100, b, sizeof(b)));
		ASSERT_EQ(0x86DD, mrcp_get_be16(b + 12));
		ASSERT_EQ(6, b[14] >> 4);
		ASSERT_EQ(46 << 2 | 0, mrcp_get_be32(b + 14) >> 20 & 0xFF);
		ASSERT_EQ(l ? 0xC0DEu : 0x7B5Au, mrcp_get_be32(b + 14) & 0xFFFFF);
		ASSERT_EQ(8 + 100 + 4, mrcp_get_be16(b + 18));
		ASSERT_EQ(17, b[20]);
		ASSERT_EQ(33, b[21]);
		ASSERT_MEMEQ(ip6_a, b + 22, 16);
		ASSERT_MEMEQ(ip6_b, b + 38, 16);
		ASSERT_EQ(l ? 0x7B5Au : 0xC0DEu, mrcp_get_be16(b + 54));
		ASSERT_EQ(4791, mrcp_get_be16(b + 56));
		ASSERT_EQ(8 + 100 + 4, mrcp_get_be16(b + 58));
		ASSERT_EQ(0, mrcp_get_be16(b + 60));
	}
}

TEST(frame, frame_hdr_build__srv6_fields)
{
	struct mrcp_frame_tx tx;
	uint8_t b[128];
	const uint8_t *o = b + 14, *in = b + 54;

	tx_setup(&tx, MRCP_FRAME_SRV6, false, MRCP_EV_LO16_SPORT);
	tx.ecn = MRCP_ECN_CE;
	ASSERT_EQ(102, mrcp_frame_hdr_build(&tx, 100, b, sizeof(b)));
	ASSERT_EQ(0x86DD, mrcp_get_be16(b + 12));
	/* §2.3, D9: same version/TC/flow label in both headers */
	ASSERT_EQ(6u << 28 | (12u << 2 | 3) << 20 | 0x7B5A, mrcp_get_be32(o));
	ASSERT_EQ(mrcp_get_be32(o), mrcp_get_be32(in));
	ASSERT_EQ(40 + 8 + 100 + 4, mrcp_get_be16(o + 4));
	ASSERT_EQ(41, o[6]);
	ASSERT_EQ(64, o[7]);
	ASSERT_MEMEQ(ip6_a, o + 8, 16);
	ASSERT_MEMEQ(usid, o + 24, 16);
	ASSERT_EQ(8 + 100 + 4, mrcp_get_be16(in + 4));
	ASSERT_EQ(17, in[6]);
	ASSERT_EQ(33, in[7]);
	ASSERT_MEMEQ(ip6_a, in + 8, 16);
	ASSERT_MEMEQ(ip6_b, in + 24, 16);
	ASSERT_EQ(0xC0DE, mrcp_get_be16(b + 94));
	ASSERT_EQ(8 + 100 + 4, mrcp_get_be16(b + 98));
}

TEST(frame, frame_hdr_build__vlan_tag)
{
	struct mrcp_frame_tx tx;
	uint8_t b[64];

	tx_setup(&tx, MRCP_FRAME_IPV4, true, MRCP_EV_LO16_SPORT);
	ASSERT_EQ(46, mrcp_frame_hdr_build(&tx, 12, b, sizeof(b)));
	ASSERT_EQ(0x8100, mrcp_get_be16(b + 12));
	ASSERT_EQ(0xA00C, mrcp_get_be16(b + 14));
	ASSERT_EQ(0x0800, mrcp_get_be16(b + 16));
	ASSERT_EQ(0x45, b[18]);
}

TEST(frame, frame_hdr_build__rejects_invalid_parameters)
{
	struct mrcp_frame_tx tx;
	uint8_t b[128];

#define EXPECT_EINVAL(l3, field, value, mrc_len)                                   \
	do {                                                                       \
		tx_setup(&tx, l3, false, MRCP_EV_LO16_SPORT);                      \
		tx.field = value;                                                  \
		ASSERT_EQ(-EINVAL, mrcp_frame_hdr_build(&tx, mrc_len, b, sizeof(b))); \
	} while (0)
	EXPECT_EINVAL(MRCP_FRAME_IPV4, l3, 0, 100);
	EXPECT_EINVAL(MRCP_FRAME_IPV4, l3, 4, 100);
	EXPECT_EINVAL(MRCP_FRAME_IPV6, ev_layout, 2, 100);
	EXPECT_EINVAL(MRCP_FRAME_IPV4, dscp, 64, 100);
	EXPECT_EINVAL(MRCP_FRAME_IPV4, ecn, 4, 100);
	EXPECT_EINVAL(MRCP_FRAME_IPV4, udp_dport, 0, 100);
	EXPECT_EINVAL(MRCP_FRAME_IPV4, ev, 0x10000, 100);       /* D5 */
	EXPECT_EINVAL(MRCP_FRAME_IPV4, ttl, 1, 11);             /* no room for BTH */
	EXPECT_EINVAL(MRCP_FRAME_IPV4, ttl, 1, 65535 - 32 + 1);  /* IPv4 total length */
	EXPECT_EINVAL(MRCP_FRAME_IPV6, ttl, 1, 65535 - 12 + 1);  /* payload length */
	EXPECT_EINVAL(MRCP_FRAME_SRV6, ttl, 1, 65535 - 52 + 1);  /* outer payload length */
#undef EXPECT_EINVAL
	tx_setup(&tx, MRCP_FRAME_IPV4, false, MRCP_EV_LO16_SPORT);
	ASSERT_EQ(42, mrcp_frame_hdr_build(&tx, 65535 - 32, b, sizeof(b)));
	ASSERT_EQ(42, mrcp_frame_hdr_build(&tx, 12, b, sizeof(b)));
	tx.ev = 0xFFFF;
	ASSERT_EQ(42, mrcp_frame_hdr_build(&tx, 12, b, sizeof(b)));
	tx_setup(&tx, MRCP_FRAME_IPV6, false, MRCP_EV_LO16_SPORT);
	ASSERT_EQ(62, mrcp_frame_hdr_build(&tx, 65535 - 12, b, sizeof(b)));
	tx_setup(&tx, MRCP_FRAME_SRV6, false, MRCP_EV_LO16_SPORT);
	ASSERT_EQ(102, mrcp_frame_hdr_build(&tx, 65535 - 52, b, sizeof(b)));
}

TEST(frame, frame_hdr_build__enobufs_below_header_length)
{
	struct mrcp_frame_tx tx;
	uint8_t b[MRCP_FRAME_HDR_MAX];

	for (int l3 = MRCP_FRAME_IPV4; l3 <= MRCP_FRAME_SRV6; l3++) {
		tx_setup(&tx, (enum mrcp_frame_l3)l3, true, MRCP_EV_LO16_SPORT);
		size_t hl = mrcp_frame_hdr_len(&tx);
		ASSERT_EQ(-ENOBUFS, mrcp_frame_hdr_build(&tx, 100, b, hl - 1));
		ASSERT_EQ((long long)hl, mrcp_frame_hdr_build(&tx, 100, b, hl));
	}
}

TEST(frame, frame_hdr_build__split_icrc_equals_frame_build)
{
	/* The zero-copy shape: Ethernet..UDP + MRC headers in one buffer, the
	 * payload in another, ICRC by begin/update/finish (§3.9). */
	for (int l3 = MRCP_FRAME_IPV4; l3 <= MRCP_FRAME_SRV6; l3++) {
		struct mrcp_frame_tx tx;
		uint8_t mrc[BUF_MAX], whole[BUF_MAX], hdr[256];
		size_t n = mrc_sample(mrc, 1000), mrc_hdr = 36;
		struct mrcp_icrc st;
		int hl;

		tx_setup(&tx, (enum mrcp_frame_l3)l3, l3 == MRCP_FRAME_IPV6, MRCP_EV_LO16_SPORT);
		int total = mrcp_frame_build(&tx, mrc, n, whole, sizeof(whole));
		hl = mrcp_frame_hdr_build(&tx, n, hdr, sizeof(hdr));
		ASSERT_GT(hl, 0);
		memcpy(hdr + hl, mrc, mrc_hdr);
		ASSERT_EQ(0, mrcp_icrc_begin(&st, hdr + mrcp_frame_icrc_off(&tx),
					     (size_t)hl + mrc_hdr - mrcp_frame_icrc_off(&tx)));
		mrcp_icrc_update(&st, mrc + mrc_hdr, n - mrc_hdr);
		ASSERT_EQ(total, hl + (int)n + 4);
		ASSERT_MEMEQ(whole, hdr, (size_t)hl);
		ASSERT_EQ(mrcp_icrc_load(whole + total - 4), mrcp_icrc_finish(&st));
	}
}

TEST(frame, frame_build__matches_independent_vectors)
{
	/* Rebuild two of the Python-made frames from their field values. */
	struct mrcp_frame_tx tx;
	uint8_t b[BUF_MAX];
	const struct icrc_vector *v4 = &icrc_vectors[0], *sack = &icrc_vectors[3];
	static const uint8_t dst[6] = {2, 0, 0, 0, 0, 2}, src[6] = {2, 0, 0, 0, 0, 1};
	int rc;

	ASSERT_STREQ("ipv4", v4->name);
	mrcp_frame_tx_defaults(&tx);
	memcpy(tx.dst_mac, dst, 6);
	memcpy(tx.src_mac, src, 6);
	tx.l3 = MRCP_FRAME_IPV4;
	memcpy(tx.src_ip, (const uint8_t[]){10, 0, 0, 1}, 4);
	memcpy(tx.dst_ip, (const uint8_t[]){10, 0, 0, 2}, 4);
	tx.dscp = 10;
	tx.ecn = 2;
	tx.ttl = 63;
	tx.ip_id = 0x4242;
	tx.ev = 0xC001;
	rc = mrcp_frame_build(&tx, v4->frame + 42, v4->len - 42 - 4, b, sizeof(b));
	ASSERT_EQ((long long)v4->len, rc);
	ASSERT_MEMEQ(v4->frame, b, 40);      /* the vector's UDP checksum is junk */
	ASSERT_MEMEQ(v4->frame + 42, b + 42, v4->len - 42);

	ASSERT_STREQ("ipv6_sack", sack->name);
	tx.l3 = MRCP_FRAME_IPV6;
	memcpy(tx.src_ip, (const uint8_t[]){0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2}, 16);
	memcpy(tx.dst_ip, (const uint8_t[]){0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, 16);
	tx.dscp = 46;
	tx.ecn = 0;
	tx.ttl = 64;
	tx.ev = 0x00012468;
	rc = mrcp_frame_build(&tx, sack->frame + 62, sack->len - 62 - 4, b, sizeof(b));
	ASSERT_EQ((long long)sack->len, rc);
	ASSERT_MEMEQ(sack->frame, b, sack->len);
}

/* The UDP checksum verified over pseudo-header + segment (test_csum.c
 * checks the sums themselves): 0 when the stored checksum is right. */
static uint16_t udp_verify(const uint8_t *ip, bool v4, const uint8_t *udp, size_t n)
{
	uint64_t sum = v4 ? mrcp_csum_pseudo(ip + 12, ip + 16, 4, 17, (uint32_t)n)
			  : mrcp_csum_pseudo(ip + 8, ip + 24, 16, 17, (uint32_t)n);

	return mrcp_csum_fold(mrcp_csum_add(sum, udp, n));
}

TEST(frame, frame_build__udp_checksum_when_asked)
{
	for (int l3 = MRCP_FRAME_IPV4; l3 <= MRCP_FRAME_SRV6; l3++) {
		for (size_t payload = 61; payload < 65; payload++) {
			struct mrcp_frame_tx tx;
			uint8_t b[BUF_MAX];
			struct mrcp_frame_rx_cfg cfg;
			struct mrcp_frame_view v;
			size_t len, off, hl;

			tx_setup(&tx, (enum mrcp_frame_l3)l3, false, MRCP_EV_LO16_SPORT);
			tx.udp_csum = true;
			len = build(&tx, b, payload);
			hl = mrcp_frame_hdr_len(&tx);
			off = mrcp_frame_icrc_off(&tx);
			ASSERT_NE(0, mrcp_get_be16(b + hl - 2));
			ASSERT_EQ(0, udp_verify(b + off, l3 == MRCP_FRAME_IPV4, b + hl - 8,
						len - hl + 8));
			/* the ICRC masks the checksum, so the frame still verifies */
			rx_defaults(&cfg);
			ASSERT_EQ(0, mrcp_frame_parse(&cfg, b, len, &v));
			ASSERT_EQ(MRCP_ICRC_OK, v.icrc);
		}
	}
}

TEST(frame, frame_build__in_place)
{
	struct mrcp_frame_tx tx;
	uint8_t mrc[BUF_MAX], a[BUF_MAX], b[BUF_MAX];
	size_t n = mrc_sample(mrc, 200);

	tx_setup(&tx, MRCP_FRAME_SRV6, true, MRCP_EV_HI16_SPORT);
	size_t hl = mrcp_frame_hdr_len(&tx);
	ASSERT_EQ((long long)(hl + n + 4), mrcp_frame_build(&tx, mrc, n, a, sizeof(a)));
	memcpy(b + hl, mrc, n);
	ASSERT_EQ((long long)(hl + n + 4), mrcp_frame_build(&tx, b + hl, n, b, sizeof(b)));
	ASSERT_MEMEQ(a, b, hl + n + 4);
	/* overlapping the header area works too */
	memcpy(b, mrc, n);
	ASSERT_EQ((long long)(hl + n + 4), mrcp_frame_build(&tx, b, n, b, sizeof(b)));
	ASSERT_MEMEQ(a, b, hl + n + 4);
}

TEST(frame, frame_build__errors_leave_buffer_untouched)
{
	struct mrcp_frame_tx tx;
	uint8_t mrc[BUF_MAX], b[BUF_MAX], ref[BUF_MAX];
	size_t n = mrc_sample(mrc, 64);

	memset(b, 0xA5, sizeof(b));
	memcpy(ref, b, sizeof(b));
	tx_setup(&tx, MRCP_FRAME_IPV6, false, MRCP_EV_LO16_SPORT);
	size_t need = mrcp_frame_hdr_len(&tx) + n + 4;
	ASSERT_EQ(-ENOBUFS, mrcp_frame_build(&tx, mrc, n, b, need - 1));
	ASSERT_EQ((long long)need, mrcp_frame_build(&tx, mrc, n, b, need));
	memcpy(b, ref, sizeof(b));
	tx.dscp = 64;
	ASSERT_EQ(-EINVAL, mrcp_frame_build(&tx, mrc, n, b, sizeof(b)));
	tx.dscp = 1;
	ASSERT_EQ(-EINVAL, mrcp_frame_build(&tx, mrc, 11, b, sizeof(b)));
	ASSERT_MEMEQ(ref, b, sizeof(b));
}

/* ---- receive ------------------------------------------------------------------ */

TEST(frame, frame_rx_cfg_defaults__values)
{
	struct mrcp_frame_rx_cfg cfg;

	memset(&cfg, 0xEE, sizeof(cfg));
	mrcp_frame_rx_cfg_defaults(&cfg);
	ASSERT_EQ(4791, cfg.udp_port);
	ASSERT_FALSE(cfg.accept_alt_port);
	ASSERT_EQ(MRCP_EV_LO16_SPORT, cfg.ev_layout);
	ASSERT_EQ(11, cfg.dscp.dscp[MRCP_DSCP_CLASS_TRIMMED]);
	ASSERT_EQ(13, cfg.dscp.dscp[MRCP_DSCP_CLASS_TRIMMED_LASTHOP]);
	ASSERT_FALSE(cfg.lasthop_hl_enable);
	ASSERT_TRUE(cfg.check_icrc);
	ASSERT_TRUE(cfg.check_ip_csum);
}

TEST(frame, frame_parse__independent_vectors)
{
	struct mrcp_frame_rx_cfg cfg;

	rx_defaults(&cfg);
	for (size_t i = 0; i < NVEC; i++) {
		const struct icrc_vector *t = &icrc_vectors[i];
		uint8_t *f = dup_exact(t->frame, t->len);
		struct mrcp_frame_view v;

		ASSERT_EQ(0, mrcp_frame_parse(&cfg, f, t->len, &v));
		ASSERT_EQ(MRCP_ICRC_OK, v.icrc);
		ASSERT_EQ(MRCP_TRIM_NONE, v.trim);
		ASSERT_TRUE(v.mrc[0] == 0xCA || v.mrc[0] == 0xDC); /* BTH opcode */
		ASSERT_EQ(t->len - 4, (size_t)(v.mrc - f) + v.mrc_len);
		if (strcmp(t->name, "ipv4") == 0) {
			ASSERT_EQ(MRCP_FRAME_IPV4, v.l3);
			ASSERT_EQ(10, v.dscp);
			ASSERT_EQ(2, v.ecn);
			ASSERT_EQ(63, v.ttl);
			ASSERT_EQ(0xC001, v.ev);
			ASSERT_EQ(0, v.flow_label);
		} else if (strcmp(t->name, "ipv4_opts_vlan") == 0) {
			ASSERT_TRUE(v.vlan);
			ASSERT_EQ(0x6064, v.vlan_tci);
			ASSERT_EQ(12, v.dscp);
			ASSERT_EQ(0xFFEE, v.ev);
			ASSERT_EQ(18 + 24 + 8, v.mrc - f); /* VLAN, IHL 6 */
		} else if (strcmp(t->name, "ipv6") == 0) {
			ASSERT_EQ(MRCP_FRAME_IPV6, v.l3);
			ASSERT_EQ(46, v.dscp);
			ASSERT_EQ(MRCP_ECN_CE, v.ecn);
			ASSERT_EQ(0xABCDE, v.flow_label);
			ASSERT_EQ(0xBCDE1357u, v.ev); /* flow label[19:16] ignored */
		} else if (strncmp(t->name, "srv6", 4) == 0) {
			ASSERT_EQ(MRCP_FRAME_SRV6, v.l3);
			bool srh = strcmp(t->name, "srv6_srh") == 0;

			/* outer: DSCP 10, CE / ECT(0), hop limit 61 / 60 */
			ASSERT_EQ(10, v.dscp);
			ASSERT_EQ(srh ? MRCP_ECN_ECT0 : MRCP_ECN_CE, v.ecn);
			ASSERT_EQ(srh ? 60 : 61, v.ttl);
			ASSERT_EQ(0x0ABCD, v.flow_label);
			ASSERT_EQ(0xABCD4321u, v.ev);
			ASSERT_EQ(0xFC, v.srv6_da[0]);
			ASSERT_EQ(2, v.dst_ip[15]);
			ASSERT_EQ(1, v.src_ip[15]);
		}
		free(f);
	}
}

TEST(frame, frame_parse__round_trip_every_shape)
{
	for (int l3 = MRCP_FRAME_IPV4; l3 <= MRCP_FRAME_SRV6; l3++)
		for (int vlan = 0; vlan < 2; vlan++)
			for (int layout = 0; layout < 2; layout++) {
				struct mrcp_frame_tx tx;
				struct mrcp_frame_rx_cfg cfg;
				struct mrcp_frame_view v;
				uint8_t mrc[BUF_MAX], b[BUF_MAX];
				size_t n = mrc_sample(mrc, 1024);

				tx_setup(&tx, (enum mrcp_frame_l3)l3, vlan, (enum mrcp_ev_layout)layout);
				int len = mrcp_frame_build(&tx, mrc, n, b, sizeof(b));
				ASSERT_GT(len, 0);
				uint8_t *f = dup_exact(b, (size_t)len);
				rx_defaults(&cfg);
				cfg.ev_layout = (enum mrcp_ev_layout)layout;
				ASSERT_EQ(0, mrcp_frame_parse(&cfg, f, (size_t)len, &v));
				check_view(&tx, &v, mrc, n);
				ASSERT_EQ(MRCP_ICRC_OK, v.icrc);
				if (l3 != MRCP_FRAME_IPV4) {
					uint16_t sport;
					uint32_t fl;

					mrcp_frame_ev_encode(tx.ev, tx.ev_layout, &sport, &fl);
					ASSERT_EQ(sport, v.udp_sport);
					ASSERT_EQ(fl, v.flow_label);
				}
				free(f);
			}
}

TEST(frame, frame_parse__ev_layout_mismatch_swaps_halves)
{
	struct mrcp_frame_tx tx;
	struct mrcp_frame_rx_cfg cfg;
	struct mrcp_frame_view v;
	uint8_t b[BUF_MAX];
	size_t len;

	tx_setup(&tx, MRCP_FRAME_IPV6, false, MRCP_EV_LO16_SPORT);
	len = build(&tx, b, 8);
	rx_defaults(&cfg);
	cfg.ev_layout = MRCP_EV_HI16_SPORT;
	ASSERT_EQ(0, mrcp_frame_parse(&cfg, b, len, &v));
	ASSERT_EQ(0xC0DE7B5Au, v.ev);
}

TEST(frame, frame_parse__ipv4_ev_is_the_source_port_whatever_the_layout)
{
	struct mrcp_frame_tx tx;
	struct mrcp_frame_rx_cfg cfg;
	struct mrcp_frame_view v;
	uint8_t b[BUF_MAX];
	size_t len;

	for (int layout = 0; layout < 2; layout++) {
		tx_setup(&tx, MRCP_FRAME_IPV4, false, (enum mrcp_ev_layout)layout);
		tx.ev = 0xBEEF;
		len = build(&tx, b, 8);
		rx_defaults(&cfg);
		cfg.ev_layout = (enum mrcp_ev_layout)(1 - layout);
		ASSERT_EQ(0, mrcp_frame_parse(&cfg, b, len, &v));
		ASSERT_EQ(0xBEEF, v.ev); /* D5: upper half zero */
		ASSERT_EQ(0xBEEF, v.udp_sport);
	}
}

/* Insert a one-segment SRH (24 B) between the outer and inner headers of an
 * SRv6 frame built without VLAN; returns the new length. */
static size_t add_srh(uint8_t *b, size_t len, uint8_t srh_next)
{
	uint8_t *o = b + 14;
	static const uint8_t srh[24] = {41, 2, 4, 0, 0, 0, 0, 0, 0xFD, 0, 0, 0, 0, 0,
					0, 0, 0, 0, 0, 0, 0, 0, 0, 9};

	memmove(o + 40 + 24, o + 40, len - 54);
	memcpy(o + 40, srh, 24);
	o[40] = srh_next;
	o[6] = 43;
	mrcp_put_be16(o + 4, (uint16_t)(mrcp_get_be16(o + 4) + 24));
	return len + 24;
}

TEST(frame, frame_parse__srv6_with_srh)
{
	struct mrcp_frame_tx tx;
	struct mrcp_frame_rx_cfg cfg;
	struct mrcp_frame_view v;
	uint8_t mrc[BUF_MAX], b[BUF_MAX];
	size_t n = mrc_sample(mrc, 100), len;

	tx_setup(&tx, MRCP_FRAME_SRV6, false, MRCP_EV_LO16_SPORT);
	len = (size_t)mrcp_frame_build(&tx, mrc, n, b, sizeof(b));
	len = add_srh(b, len, 41);
	uint8_t *f = dup_exact(b, len);
	rx_defaults(&cfg);
	ASSERT_EQ(0, mrcp_frame_parse(&cfg, f, len, &v));
	check_view(&tx, &v, mrc, n);
	ASSERT_EQ(MRCP_ICRC_OK, v.icrc); /* the ICRC ignores the SRH (D24) */
	free(f);
}

TEST(frame, frame_parse__routing_header_not_followed_by_ipv6_is_not_mrc)
{
	struct mrcp_frame_tx tx;
	struct mrcp_frame_rx_cfg cfg;
	struct mrcp_frame_view v;
	uint8_t b[BUF_MAX];
	size_t len;

	tx_setup(&tx, MRCP_FRAME_SRV6, false, MRCP_EV_LO16_SPORT);
	len = add_srh(b, build(&tx, b, 16), 17);
	rx_defaults(&cfg);
	ASSERT_EQ(-ENOMSG, mrcp_frame_parse(&cfg, b, len, &v));
}

TEST(frame, frame_parse__srh_longer_than_the_frame_is_malformed)
{
	struct mrcp_frame_tx tx;
	struct mrcp_frame_rx_cfg cfg;
	struct mrcp_frame_view v;
	uint8_t b[BUF_MAX];
	size_t len;

	tx_setup(&tx, MRCP_FRAME_SRV6, false, MRCP_EV_LO16_SPORT);
	len = add_srh(b, build(&tx, b, 16), 41);
	b[14 + 40 + 1] = 255; /* hdr ext len: 2048 bytes */
	rx_defaults(&cfg);
	ASSERT_EQ(-EBADMSG, mrcp_frame_parse(&cfg, b, len, &v));
}

TEST(frame, frame_parse__srv6_outer_source_other_than_inner_is_malformed)
{
	struct mrcp_frame_tx tx;
	struct mrcp_frame_rx_cfg cfg;
	struct mrcp_frame_view v;
	uint8_t b[BUF_MAX];
	size_t len;

	/* §2.3: both sources are the sender's port; the engine checks the
	 * inner one (D69), so an outer one that differs is refused, with or
	 * without an SRH and trimmed or not */
	rx_defaults(&cfg);
	tx_setup(&tx, MRCP_FRAME_SRV6, false, MRCP_EV_LO16_SPORT);
	len = build(&tx, b, 64);
	ASSERT_EQ(0, mrcp_frame_parse(&cfg, b, len, &v));
	b[14 + 8 + 15] ^= 1; /* outer source, last byte */
	ASSERT_EQ(-EBADMSG, mrcp_frame_parse(&cfg, b, len, &v));
	len = add_srh(b, build(&tx, b, 64), 41);
	ASSERT_EQ(0, mrcp_frame_parse(&cfg, b, len, &v));
	b[14 + 8] ^= 0x80;
	ASSERT_EQ(-EBADMSG, mrcp_frame_parse(&cfg, b, len, &v));
	len = build(&tx, b, 64);
	b[14 + 8 + 15] ^= 1;
	ASSERT_EQ(-EBADMSG, mrcp_frame_parse(&cfg, b, len - 20, &v)); /* trimmed: short */
	/* not MRC stays not MRC: another UDP port is -ENOMSG first */
	len = build(&tx, b, 64);
	b[14 + 8 + 15] ^= 1;
	mrcp_put_be16(b + 14 + 40 + 40 + 2, 9);
	ASSERT_EQ(-ENOMSG, mrcp_frame_parse(&cfg, b, len, &v));
}

TEST(frame, frame_parse__trimmed_by_dscp)
{
	static const struct {
		uint8_t dscp;
		enum mrcp_trim trim;
	} cases[] = {{11, MRCP_TRIM_FABRIC}, {13, MRCP_TRIM_LASTHOP}, {10, MRCP_TRIM_NONE}};

	for (int l3 = MRCP_FRAME_IPV4; l3 <= MRCP_FRAME_SRV6; l3++) {
		for (size_t c = 0; c < 3; c++) {
			struct mrcp_frame_tx tx;
			struct mrcp_frame_rx_cfg cfg;
			struct mrcp_frame_view v;
			uint8_t b[BUF_MAX];
			size_t len, hl;

			tx_setup(&tx, (enum mrcp_frame_l3)l3, false, MRCP_EV_LO16_SPORT);
			tx.dscp = cases[c].dscp;
			len = build(&tx, b, 256);
			hl = mrcp_frame_hdr_len(&tx);
			rx_defaults(&cfg);
			if (cases[c].trim != MRCP_TRIM_NONE)
				b[len - 1] ^= 1; /* a trimmed packet's ICRC is not checked */
			ASSERT_EQ(0, mrcp_frame_parse(&cfg, b, len, &v));
			ASSERT_EQ(cases[c].trim, v.trim);
			ASSERT_FALSE(v.truncated);
			if (cases[c].trim != MRCP_TRIM_NONE) {
				ASSERT_EQ(MRCP_ICRC_UNCHECKED, v.icrc);
				ASSERT_EQ(len - hl, v.mrc_len); /* nothing taken off */
			} else {
				ASSERT_EQ(MRCP_ICRC_OK, v.icrc);
			}
		}
	}
}

TEST(frame, frame_parse__srv6_trim_is_read_from_the_outer_header)
{
	struct mrcp_frame_tx tx;
	struct mrcp_frame_rx_cfg cfg;
	struct mrcp_frame_view v;
	uint8_t b[BUF_MAX];
	size_t len;
	uint32_t vtf;

	tx_setup(&tx, MRCP_FRAME_SRV6, false, MRCP_EV_LO16_SPORT);
	len = build(&tx, b, 100);
	rx_defaults(&cfg);
	/* a switch re-marks only the outer header: DSCP 11 + CE (D9) */
	vtf = mrcp_get_be32(b + 14);
	vtf = (vtf & ~(0xFFu << 20)) | (11u << 2 | 3) << 20;
	mrcp_put_be32(b + 14, vtf);
	ASSERT_EQ(0, mrcp_frame_parse(&cfg, b, len, &v));
	ASSERT_EQ(MRCP_TRIM_FABRIC, v.trim);
	ASSERT_EQ(11, v.dscp);
	ASSERT_EQ(MRCP_ECN_CE, v.ecn);
	/* and the inner header's DSCP does not count */
	vtf = (vtf & ~(0xFFu << 20)) | (10u << 2) << 20;
	mrcp_put_be32(b + 14, vtf);
	vtf = mrcp_get_be32(b + 54);
	mrcp_put_be32(b + 54, (vtf & ~(0xFFu << 20)) | (11u << 2) << 20);
	ASSERT_EQ(0, mrcp_frame_parse(&cfg, b, len, &v));
	ASSERT_EQ(MRCP_TRIM_NONE, v.trim);
	ASSERT_EQ(MRCP_ICRC_OK, v.icrc); /* inner TC is masked */
}

TEST(frame, frame_parse__trimmed_by_short_frame)
{
	for (int l3 = MRCP_FRAME_IPV4; l3 <= MRCP_FRAME_SRV6; l3++) {
		struct mrcp_frame_tx tx;
		struct mrcp_frame_rx_cfg cfg;
		struct mrcp_frame_view v;
		uint8_t b[BUF_MAX];
		size_t hl, cut;

		tx_setup(&tx, (enum mrcp_frame_l3)l3, true, MRCP_EV_LO16_SPORT);
		build(&tx, b, 1024);
		hl = mrcp_frame_hdr_len(&tx);
		cut = hl + 256;
		uint8_t *f = dup_exact(b, cut);
		rx_defaults(&cfg);
		ASSERT_EQ(0, mrcp_frame_parse(&cfg, f, cut, &v));
		ASSERT_EQ(MRCP_TRIM_FABRIC, v.trim);
		ASSERT_TRUE(v.truncated);
		ASSERT_EQ(MRCP_ICRC_UNCHECKED, v.icrc);
		ASSERT_TRUE(v.mrc == f + hl);
		ASSERT_EQ(256, v.mrc_len);
		ASSERT_EQ(tx.ev, v.ev);
		free(f);
	}
}

TEST(frame, frame_parse__srv6_inner_length_beyond_fixed_outer_length_is_trimmed)
{
	/* A switch trimmed the packet and fixed only the outer payload length. */
	struct mrcp_frame_tx tx;
	struct mrcp_frame_rx_cfg cfg;
	struct mrcp_frame_view v;
	uint8_t b[BUF_MAX];

	tx_setup(&tx, MRCP_FRAME_SRV6, false, MRCP_EV_LO16_SPORT);
	build(&tx, b, 1024);
	mrcp_put_be16(b + 14 + 4, 40 + 8 + 200);
	rx_defaults(&cfg);
	ASSERT_EQ(0, mrcp_frame_parse(&cfg, b, 14 + 40 + 40 + 8 + 200, &v));
	ASSERT_EQ(MRCP_TRIM_FABRIC, v.trim);
	ASSERT_TRUE(v.truncated);
	ASSERT_EQ(200, v.mrc_len);
}

TEST(frame, frame_parse__hop_limit_marks_lasthop_trims)
{
	for (int l3 = MRCP_FRAME_IPV4; l3 <= MRCP_FRAME_SRV6; l3++) {
		struct mrcp_frame_tx tx;
		struct mrcp_frame_rx_cfg cfg;
		struct mrcp_frame_view v;
		uint8_t b[BUF_MAX];
		size_t len;
		uint8_t hl = l3 == MRCP_FRAME_SRV6 ? MRCP_SRV6_HOP_LIMIT : 33;

		tx_setup(&tx, (enum mrcp_frame_l3)l3, false, MRCP_EV_LO16_SPORT);
		tx.dscp = 11;
		len = build(&tx, b, 64);
		rx_defaults(&cfg);
		ASSERT_EQ(0, mrcp_frame_parse(&cfg, b, len, &v));
		ASSERT_EQ(MRCP_TRIM_FABRIC, v.trim);
		cfg.lasthop_hl_enable = true;
		cfg.lasthop_hl = hl;
		ASSERT_EQ(0, mrcp_frame_parse(&cfg, b, len, &v));
		ASSERT_EQ(MRCP_TRIM_LASTHOP, v.trim);
		cfg.lasthop_hl = (uint8_t)(hl + 1);
		ASSERT_EQ(0, mrcp_frame_parse(&cfg, b, len, &v));
		ASSERT_EQ(MRCP_TRIM_FABRIC, v.trim);
		/* a short frame at the last-hop hop limit, too */
		cfg.lasthop_hl = hl;
		tx.dscp = 10;
		build(&tx, b, 1024);
		ASSERT_EQ(0, mrcp_frame_parse(&cfg, b, mrcp_frame_hdr_len(&tx) + 100, &v));
		ASSERT_EQ(MRCP_TRIM_LASTHOP, v.trim);
		/* an untrimmed packet is never a trim, whatever its hop limit */
		len = build(&tx, b, 64);
		ASSERT_EQ(0, mrcp_frame_parse(&cfg, b, len, &v));
		ASSERT_EQ(MRCP_TRIM_NONE, v.trim);
	}
}

TEST(frame, frame_parse__custom_trim_codepoints)
{
	struct mrcp_frame_tx tx;
	struct mrcp_frame_rx_cfg cfg;
	struct mrcp_frame_view v;
	uint8_t b[BUF_MAX];
	size_t len;

	tx_setup(&tx, MRCP_FRAME_IPV6, false, MRCP_EV_LO16_SPORT);
	tx.dscp = 11;
	len = build(&tx, b, 64);
	rx_defaults(&cfg);
	cfg.dscp.dscp[MRCP_DSCP_CLASS_TRIMMED] = 21;
	ASSERT_EQ(0, mrcp_frame_parse(&cfg, b, len, &v));
	ASSERT_EQ(MRCP_TRIM_NONE, v.trim);
	tx.dscp = 21;
	len = build(&tx, b, 64);
	ASSERT_EQ(0, mrcp_frame_parse(&cfg, b, len, &v));
	ASSERT_EQ(MRCP_TRIM_FABRIC, v.trim);
}

TEST(frame, frame_parse__icrc_mismatch_on_any_covered_bit)
{
	/* Flip every bit the ICRC covers outside the masked fields: the frame
	 * must never pass as an intact untrimmed packet. Payload flips are
	 * exactly -EILSEQ. */
	for (int l3 = MRCP_FRAME_IPV4; l3 <= MRCP_FRAME_SRV6; l3++) {
		struct mrcp_frame_tx tx;
		struct mrcp_frame_rx_cfg cfg;
		struct mrcp_frame_view v;
		uint8_t b[BUF_MAX];
		size_t len, off, hl;

		tx_setup(&tx, (enum mrcp_frame_l3)l3, false, MRCP_EV_LO16_SPORT);
		len = build(&tx, b, 32);
		off = mrcp_frame_icrc_off(&tx);
		hl = mrcp_frame_hdr_len(&tx);
		rx_defaults(&cfg);
		for (size_t i = off; i < len; i++) {
			size_t r = i - off, udp = hl - 8 - off;
			bool masked = l3 == MRCP_FRAME_IPV4 ?
				(r == 1 || r == 8 || r == 10 || r == 11) :
				(r == 1 || r == 2 || r == 3 || r == 7);

			masked = masked || r == udp + 6 || r == udp + 7 || r == udp + 8 + 4;
			if (masked)
				continue;
			for (int bit = 0; bit < 8; bit++) {
				int rc;

				if (r == 0 && l3 != MRCP_FRAME_IPV4 && bit < 4)
					continue; /* traffic class[7:4]: masked */
				b[i] ^= (uint8_t)(1u << bit);
				rc = mrcp_frame_parse(&cfg, b, len, &v);
				ASSERT_TRUE(rc < 0 || v.trim != MRCP_TRIM_NONE);
				if (i >= hl + 12)
					ASSERT_EQ(-EILSEQ, rc);
				if (rc == -EILSEQ)
					ASSERT_EQ(MRCP_ICRC_BAD, v.icrc);
				b[i] ^= (uint8_t)(1u << bit);
			}
		}
		ASSERT_EQ(0, mrcp_frame_parse(&cfg, b, len, &v));
	}
}

TEST(frame, frame_parse__icrc_mismatch_fills_the_view)
{
	struct mrcp_frame_tx tx;
	struct mrcp_frame_rx_cfg cfg;
	struct mrcp_frame_view v;
	uint8_t mrc[BUF_MAX], b[BUF_MAX];
	size_t n = mrc_sample(mrc, 40);
	int len;

	tx_setup(&tx, MRCP_FRAME_IPV6, true, MRCP_EV_LO16_SPORT);
	len = mrcp_frame_build(&tx, mrc, n, b, sizeof(b));
	b[len - 4] ^= 0x80;
	rx_defaults(&cfg);
	ASSERT_EQ(-EILSEQ, mrcp_frame_parse(&cfg, b, (size_t)len, &v));
	ASSERT_EQ(MRCP_ICRC_BAD, v.icrc);
	check_view(&tx, &v, mrc, n);
}

TEST(frame, frame_parse__icrc_check_off_accepts_a_bad_icrc)
{
	struct mrcp_frame_tx tx;
	struct mrcp_frame_rx_cfg cfg;
	struct mrcp_frame_view v;
	uint8_t b[BUF_MAX];
	size_t len;

	tx_setup(&tx, MRCP_FRAME_IPV4, false, MRCP_EV_LO16_SPORT);
	len = build(&tx, b, 40);
	b[len - 1] ^= 0xFF;
	rx_defaults(&cfg);
	cfg.check_icrc = false;
	ASSERT_EQ(0, mrcp_frame_parse(&cfg, b, len, &v));
	ASSERT_EQ(MRCP_ICRC_UNCHECKED, v.icrc);
	ASSERT_EQ(len - 42 - 4, v.mrc_len);
}

TEST(frame, frame_parse__every_truncation_is_rejected_or_trimmed)
{
	/* Each prefix of each shape, in an exact-size heap buffer: no read past
	 * the end (ASan), and never an intact untrimmed packet. */
	for (int shape = 0; shape < 5; shape++) {
		struct mrcp_frame_tx tx;
		uint8_t b[BUF_MAX];
		size_t len;
		static const enum mrcp_frame_l3 l3s[] = {MRCP_FRAME_IPV4, MRCP_FRAME_IPV6,
							 MRCP_FRAME_IPV4, MRCP_FRAME_SRV6,
							 MRCP_FRAME_SRV6};

		tx_setup(&tx, l3s[shape], shape == 2, MRCP_EV_LO16_SPORT);
		len = build(&tx, b, 20);
		if (shape == 4)
			len = add_srh(b, len, 41);
		for (int check = 0; check < 2; check++) {
			struct mrcp_frame_rx_cfg cfg;

			rx_defaults(&cfg);
			cfg.check_icrc = check;
			for (size_t n = 0; n < len; n++) {
				struct mrcp_frame_view v;
				uint8_t *f = dup_exact(b, n);
				int rc = mrcp_frame_parse(&cfg, f, n, &v);

				ASSERT_TRUE(rc == -EBADMSG || rc == 0);
				if (rc == 0) {
					ASSERT_TRUE(v.truncated);
					ASSERT_NE(MRCP_TRIM_NONE, v.trim);
					ASSERT_TRUE(v.mrc >= f && v.mrc + v.mrc_len <= f + n);
					ASSERT_GE(v.mrc_len, 12);
				}
				free(f);
			}
		}
	}
}

TEST(frame, frame_parse__ethernet_padding_is_ignored)
{
	struct mrcp_frame_tx tx;
	struct mrcp_frame_rx_cfg cfg;
	struct mrcp_frame_view v;
	uint8_t mrc[64], b[BUF_MAX];
	int len;

	/* The smallest MRC frame, 42 + 12 + 4 = 58 B, padded to 60 on the wire. */
	mrc_sample(mrc, 0);
	tx_setup(&tx, MRCP_FRAME_IPV4, false, MRCP_EV_LO16_SPORT);
	len = mrcp_frame_build(&tx, mrc, 12, b, sizeof(b));
	ASSERT_EQ(58, len);
	memset(b + len, 0, 2);
	rx_defaults(&cfg);
	ASSERT_EQ(0, mrcp_frame_parse(&cfg, b, 60, &v));
	ASSERT_EQ(12, v.mrc_len);
	ASSERT_EQ(MRCP_ICRC_OK, v.icrc);
	/* and longer junk after an IPv6 or SRv6 packet */
	for (int l3 = MRCP_FRAME_IPV6; l3 <= MRCP_FRAME_SRV6; l3++) {
		tx_setup(&tx, (enum mrcp_frame_l3)l3, true, MRCP_EV_LO16_SPORT);
		len = mrcp_frame_build(&tx, mrc, 12, b, sizeof(b));
		memset(b + len, 0xA5, 30);
		ASSERT_EQ(0, mrcp_frame_parse(&cfg, b, (size_t)len + 30, &v));
		ASSERT_EQ(12, v.mrc_len);
		ASSERT_EQ(MRCP_ICRC_OK, v.icrc);
		ASSERT_FALSE(v.truncated);
	}
}

TEST(frame, frame_parse__udp_ports)
{
	struct mrcp_frame_tx tx;
	struct mrcp_frame_rx_cfg cfg;
	struct mrcp_frame_view v;
	uint8_t b[BUF_MAX];
	size_t len;

	tx_setup(&tx, MRCP_FRAME_IPV4, false, MRCP_EV_LO16_SPORT);
	tx.udp_dport = MRCP_UDP_PORT_ALT;
	len = build(&tx, b, 8);
	rx_defaults(&cfg);
	ASSERT_EQ(-ENOMSG, mrcp_frame_parse(&cfg, b, len, &v));
	cfg.accept_alt_port = true; /* D1 */
	ASSERT_EQ(0, mrcp_frame_parse(&cfg, b, len, &v));
	ASSERT_EQ(4971, v.udp_dport);
	tx.udp_dport = 5000;
	len = build(&tx, b, 8);
	ASSERT_EQ(-ENOMSG, mrcp_frame_parse(&cfg, b, len, &v));
	cfg.udp_port = 5000;
	ASSERT_EQ(0, mrcp_frame_parse(&cfg, b, len, &v));
	tx.udp_dport = 4791;
	len = build(&tx, b, 8);
	ASSERT_EQ(-ENOMSG, mrcp_frame_parse(&cfg, b, len, &v));
}

TEST(frame, frame_parse__non_mrc_frames_are_enomsg)
{
	struct mrcp_frame_tx tx;
	struct mrcp_frame_rx_cfg cfg;
	struct mrcp_frame_view v;
	uint8_t b[BUF_MAX];
	size_t len;

	rx_defaults(&cfg);
	/* ARP, padded to 60 bytes */
	memset(b, 0, 60);
	memset(b, 0xFF, 6);
	mrcp_put_be16(b + 12, 0x0806);
	ASSERT_EQ(-ENOMSG, mrcp_frame_parse(&cfg, b, 60, &v));
	/* 802.1ad outer tag (QinQ is not accepted), and ARP behind 802.1Q */
	mrcp_put_be16(b + 12, 0x88A8);
	ASSERT_EQ(-ENOMSG, mrcp_frame_parse(&cfg, b, 60, &v));
	mrcp_put_be16(b + 12, 0x8100);
	mrcp_put_be16(b + 16, 0x0806);
	ASSERT_EQ(-ENOMSG, mrcp_frame_parse(&cfg, b, 60, &v));

	/* IPv4 ICMP / TCP */
	tx_setup(&tx, MRCP_FRAME_IPV4, false, MRCP_EV_LO16_SPORT);
	len = build(&tx, b, 8);
	for (int proto = 0; proto < 256; proto++) {
		if (proto == 17)
			continue;
		b[14 + 9] = (uint8_t)proto;
		fix_ipv4_csum(b + 14);
		ASSERT_EQ(-ENOMSG, mrcp_frame_parse(&cfg, b, len, &v));
	}

	/* IPv6 next headers other than UDP, 41 and 43 (ICMPv6 = NDP, ...) */
	tx_setup(&tx, MRCP_FRAME_IPV6, false, MRCP_EV_LO16_SPORT);
	len = build(&tx, b, 8);
	for (int nh = 0; nh < 256; nh++) {
		if (nh == 17 || nh == 41 || nh == 43)
			continue;
		b[14 + 6] = (uint8_t)nh;
		ASSERT_EQ(-ENOMSG, mrcp_frame_parse(&cfg, b, len, &v));
	}

	/* SRv6 whose inner packet is not UDP */
	tx_setup(&tx, MRCP_FRAME_SRV6, false, MRCP_EV_LO16_SPORT);
	len = build(&tx, b, 8);
	b[54 + 6] = 58;
	ASSERT_EQ(-ENOMSG, mrcp_frame_parse(&cfg, b, len, &v));
}

TEST(frame, frame_parse__malformed_headers_are_ebadmsg)
{
	struct mrcp_frame_tx tx;
	struct mrcp_frame_rx_cfg cfg;
	struct mrcp_frame_view v;
	uint8_t b[BUF_MAX], ref[BUF_MAX];
	size_t len;

	rx_defaults(&cfg);
	tx_setup(&tx, MRCP_FRAME_IPV4, false, MRCP_EV_LO16_SPORT);
	len = build(&tx, ref, 64);
#define RESET() memcpy(b, ref, len)
	/* IP version in an IPv4 ethertype */
	RESET();
	b[14] = 0x65;
	ASSERT_EQ(-EBADMSG, mrcp_frame_parse(&cfg, b, len, &v));
	/* IHL below 5, and IHL beyond the frame */
	for (int ihl = 0; ihl < 5; ihl++) {
		RESET();
		b[14] = (uint8_t)(0x40 | ihl);
		ASSERT_EQ(-EBADMSG, mrcp_frame_parse(&cfg, b, len, &v));
	}
	RESET();
	b[14] = 0x4F;
	ASSERT_EQ(-EBADMSG, mrcp_frame_parse(&cfg, b, 14 + 56, &v));
	/* fragments: MF, or any offset */
	static const uint16_t frags[] = {0x2000, 0x0001, 0x1FFF, 0x6000};
	for (size_t i = 0; i < 4; i++) {
		RESET();
		mrcp_put_be16(b + 14 + 6, frags[i]);
		fix_ipv4_csum(b + 14);
		ASSERT_EQ(-EBADMSG, mrcp_frame_parse(&cfg, b, len, &v));
	}
	/* bad header checksum, unless the NIC checked it already */
	RESET();
	b[14 + 12] ^= 1;
	ASSERT_EQ(-EBADMSG, mrcp_frame_parse(&cfg, b, len, &v));
	cfg.check_ip_csum = false;
	ASSERT_EQ(-EILSEQ, mrcp_frame_parse(&cfg, b, len, &v)); /* source is covered */
	cfg.check_ip_csum = true;
	/* total length too short for UDP, or for UDP + BTH + ICRC */
	RESET();
	mrcp_put_be16(b + 16, 20 + 7);
	fix_ipv4_csum(b + 14);
	ASSERT_EQ(-EBADMSG, mrcp_frame_parse(&cfg, b, len, &v));
	RESET();
	mrcp_put_be16(b + 16, 20 + 8 + 15);
	mrcp_put_be16(b + 38, 8 + 15);
	fix_ipv4_csum(b + 14);
	ASSERT_EQ(-EBADMSG, mrcp_frame_parse(&cfg, b, len, &v));
	/* UDP length disagrees with the IP length */
	RESET();
	mrcp_put_be16(b + 38, (uint16_t)(mrcp_get_be16(b + 38) - 4));
	ASSERT_EQ(-EBADMSG, mrcp_frame_parse(&cfg, b, len, &v));
	RESET();
	mrcp_put_be16(b + 38, (uint16_t)(mrcp_get_be16(b + 38) + 4));
	ASSERT_EQ(-EBADMSG, mrcp_frame_parse(&cfg, b, len, &v));
	/* IPv4 total length below the header: not a trim */
	RESET();
	mrcp_put_be16(b + 16, 10);
	fix_ipv4_csum(b + 14);
	ASSERT_EQ(-EBADMSG, mrcp_frame_parse(&cfg, b, len, &v));

	/* IPv6 version, and an IPv6 payload length too short for UDP */
	tx_setup(&tx, MRCP_FRAME_IPV6, false, MRCP_EV_LO16_SPORT);
	len = build(&tx, ref, 64);
	RESET();
	b[14] = 0x40;
	ASSERT_EQ(-EBADMSG, mrcp_frame_parse(&cfg, b, len, &v));
	RESET();
	mrcp_put_be16(b + 18, 4);
	ASSERT_EQ(-EBADMSG, mrcp_frame_parse(&cfg, b, len, &v));

	/* SRv6: inner version; inner packet shorter than the outer payload */
	tx_setup(&tx, MRCP_FRAME_SRV6, false, MRCP_EV_LO16_SPORT);
	len = build(&tx, ref, 64);
	RESET();
	b[54] = 0x40;
	ASSERT_EQ(-EBADMSG, mrcp_frame_parse(&cfg, b, len, &v));
	RESET();
	mrcp_put_be16(b + 54 + 4, (uint16_t)(mrcp_get_be16(b + 58) - 4));
	mrcp_put_be16(b + 94 + 4, (uint16_t)(mrcp_get_be16(b + 98) - 4));
	ASSERT_EQ(-EBADMSG, mrcp_frame_parse(&cfg, b, len, &v));
	/* outer payload length too short to hold the inner header */
	RESET();
	mrcp_put_be16(b + 18, 20);
	ASSERT_EQ(-EBADMSG, mrcp_frame_parse(&cfg, b, len, &v));
#undef RESET
}

TEST(frame, frame_parse__trimmed_packet_needs_a_bth)
{
	struct mrcp_frame_tx tx;
	struct mrcp_frame_rx_cfg cfg;
	struct mrcp_frame_view v;
	uint8_t b[BUF_MAX];
	size_t hl;

	tx_setup(&tx, MRCP_FRAME_IPV6, false, MRCP_EV_LO16_SPORT);
	build(&tx, b, 100);
	hl = mrcp_frame_hdr_len(&tx);
	rx_defaults(&cfg);
	ASSERT_EQ(-EBADMSG, mrcp_frame_parse(&cfg, b, hl + 11, &v));
	ASSERT_EQ(0, mrcp_frame_parse(&cfg, b, hl + 12, &v));
	ASSERT_EQ(12, v.mrc_len);
	ASSERT_EQ(MRCP_TRIM_FABRIC, v.trim);
}
