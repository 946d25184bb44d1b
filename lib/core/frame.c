/* frame.c - builds and parses the Ethernet/IP/UDP (and SRv6) encapsulation
 * around MRC packets: EV placement, DSCP/ECN, lengths, checksums, the ICRC
 * trailer and trim detection; the MRC headers themselves belong to wire.c. */
#include "mrcp_frame.h"

#include <errno.h>
#include <string.h>

#include "mrcp_bytes.h"
#include "mrcp_csum.h"

#define ETH_P_IPV4 0x0800u
#define ETH_P_IPV6 0x86DDu
#define ETH_P_VLAN 0x8100u
#define PROTO_UDP 17u
#define PROTO_IPV6 41u    /* IPv6-in-IPv6, SRv6 encapsulation */
#define PROTO_ROUTING 43u /* IPv6 routing header (SRH, RFC 8754) */
#define IPV4_DF 0x4000u
#define IPV4_FRAG_MASK 0x3FFFu /* MF + fragment offset */
#define BTH_LEN sizeof(struct mrcp_bth_wire)

/* ---- EV placement --------------------------------------------------------- */

void mrcp_frame_ev_encode(uint32_t ev, enum mrcp_ev_layout layout,
			  uint16_t *sport, uint32_t *flow_label)
{
	/* D4: the halves swap; flow label[19:16] stays 0. */
	if (layout == MRCP_EV_HI16_SPORT) {
		*sport = (uint16_t)(ev >> 16);
		*flow_label = ev & 0xFFFFu;
	} else {
		*sport = (uint16_t)ev;
		*flow_label = ev >> 16;
	}
}

uint32_t mrcp_frame_ev_decode(uint16_t sport, uint32_t flow_label,
			      enum mrcp_ev_layout layout)
{
	uint32_t fl = flow_label & 0xFFFFu;

	if (layout == MRCP_EV_HI16_SPORT)
		return (uint32_t)sport << 16 | fl;
	return fl << 16 | sport;
}

/* ---- DSCP classes ----------------------------------------------------------- */

void mrcp_dscp_map_defaults(struct mrcp_dscp_map *m)
{
#define X(n, v, d) m->dscp[MRCP_DSCP_CLASS_##n] = v;
	MRCP_DSCP_CLASSES(X)
#undef X
}

int mrcp_dscp_map_check(const struct mrcp_dscp_map *m)
{
	for (unsigned i = 0; i < MRCP_DSCP_CLASS_COUNT; i++)
		if (m->dscp[i] > 63)
			return -EINVAL;
	for (unsigned i = 0; i < MRCP_DSCP_CLASS_COUNT; i++) {
		if (i == MRCP_DSCP_CLASS_TRIMMED || i == MRCP_DSCP_CLASS_TRIMMED_LASTHOP)
			continue;
		if (m->dscp[i] == m->dscp[MRCP_DSCP_CLASS_TRIMMED] ||
		    m->dscp[i] == m->dscp[MRCP_DSCP_CLASS_TRIMMED_LASTHOP])
			return -EINVAL;
	}
	return 0;
}

const char *mrcp_dscp_class_name(enum mrcp_dscp_class c)
{
	static const char *const names[] = {
#define X(n, v, d) [MRCP_DSCP_CLASS_##n] = #n,
		MRCP_DSCP_CLASSES(X)
#undef X
	};

	if ((unsigned)c >= MRCP_DSCP_CLASS_COUNT)
		return NULL;
	return names[c];
}

/* ---- transmit --------------------------------------------------------------- */

void mrcp_frame_tx_defaults(struct mrcp_frame_tx *tx)
{
	memset(tx, 0, sizeof(*tx));
	tx->dscp = 10; /* D23: TRIMMABLE */
	tx->ecn = MRCP_ECN_ECT0;
	tx->ttl = 64;
	tx->ev_layout = MRCP_EV_LO16_SPORT;
	tx->udp_dport = MRCP_UDP_PORT_DEFAULT;
}

/* Bytes of IP header(s) for @l3, 0 if invalid. */
static size_t l3_len(enum mrcp_frame_l3 l3)
{
	switch (l3) {
	case MRCP_FRAME_IPV4:
		return MRCP_IPV4_HLEN;
	case MRCP_FRAME_IPV6:
		return MRCP_IPV6_HLEN;
	case MRCP_FRAME_SRV6:
		return 2 * MRCP_IPV6_HLEN;
	}
	return 0;
}

static size_t l2_len(const struct mrcp_frame_tx *tx)
{
	return MRCP_ETH_HLEN + (tx->vlan ? MRCP_VLAN_HLEN : 0);
}

size_t mrcp_frame_hdr_len(const struct mrcp_frame_tx *tx)
{
	size_t l3 = l3_len(tx->l3);

	return l3 ? l2_len(tx) + l3 + MRCP_UDP_HLEN : 0;
}

size_t mrcp_frame_icrc_off(const struct mrcp_frame_tx *tx)
{
	switch (tx->l3) {
	case MRCP_FRAME_IPV4:
	case MRCP_FRAME_IPV6:
		return l2_len(tx);
	case MRCP_FRAME_SRV6:
		return l2_len(tx) + MRCP_IPV6_HLEN; /* D24: the inner header */
	}
	return 0;
}

/* Everything mrcp_frame_hdr_build() rejects with -EINVAL or -ENOBUFS. */
static int tx_check(const struct mrcp_frame_tx *tx, size_t mrc_len, size_t total, size_t cap)
{
	size_t hl = mrcp_frame_hdr_len(tx);

	if (hl == 0 || (tx->ev_layout != MRCP_EV_LO16_SPORT &&
			tx->ev_layout != MRCP_EV_HI16_SPORT))
		return -EINVAL;
	if (tx->dscp > 63 || tx->ecn > 3 || tx->udp_dport == 0)
		return -EINVAL;
	if (tx->l3 == MRCP_FRAME_IPV4 && tx->ev > 0xFFFFu)
		return -EINVAL; /* D5: IPv4 QPs use 16-bit EVs */
	if (mrc_len < BTH_LEN)
		return -EINVAL;
	/* The IPv4 total length and the (outer) IPv6 payload length both count
	 * everything after the first IP header's fixed part. */
	if (hl - l2_len(tx) - (tx->l3 == MRCP_FRAME_IPV4 ? 0 : MRCP_IPV6_HLEN) +
		    mrc_len + MRCP_ICRC_LEN > 0xFFFFu)
		return -EINVAL;
	if (cap < total)
		return -ENOBUFS;
	return 0;
}

static void put_ipv6(uint8_t *ip, const struct mrcp_frame_tx *tx, uint32_t flow_label,
		     uint16_t payload_len, uint8_t next, uint8_t hop_limit,
		     const uint8_t *dst)
{
	uint8_t tc = (uint8_t)(tx->dscp << 2 | tx->ecn);

	mrcp_put_be32(ip, 6u << 28 | (uint32_t)tc << 20 | (flow_label & 0xFFFFFu));
	mrcp_put_be16(ip + 4, payload_len);
	ip[6] = next;
	ip[7] = hop_limit;
	memcpy(ip + 8, tx->src_ip, 16);
	memcpy(ip + 24, dst, 16);
}

/* Write headers; @tx and the lengths are already checked. */
static size_t hdr_write(const struct mrcp_frame_tx *tx, size_t mrc_len, uint8_t *b)
{
	size_t udp_len = MRCP_UDP_HLEN + mrc_len + MRCP_ICRC_LEN;
	size_t off = 12;
	uint16_t sport;
	uint32_t flow_label;

	memcpy(b, tx->dst_mac, 6);
	memcpy(b + 6, tx->src_mac, 6);
	if (tx->vlan) {
		mrcp_put_be16(b + off, ETH_P_VLAN);
		mrcp_put_be16(b + off + 2, tx->vlan_tci);
		off += MRCP_VLAN_HLEN;
	}
	mrcp_put_be16(b + off, tx->l3 == MRCP_FRAME_IPV4 ? ETH_P_IPV4 : ETH_P_IPV6);
	off += 2;

	if (tx->l3 == MRCP_FRAME_IPV4) {
		uint8_t *ip = b + off;

		sport = (uint16_t)tx->ev; /* D5, whatever the layout */
		ip[0] = 0x45;
		ip[1] = (uint8_t)(tx->dscp << 2 | tx->ecn);
		mrcp_put_be16(ip + 2, (uint16_t)(MRCP_IPV4_HLEN + udp_len));
		mrcp_put_be16(ip + 4, tx->ip_id);
		mrcp_put_be16(ip + 6, IPV4_DF);
		ip[8] = tx->ttl;
		ip[9] = PROTO_UDP;
		memcpy(ip + 12, tx->src_ip, 4);
		memcpy(ip + 16, tx->dst_ip, 4);
		mrcp_csum_ipv4_set(ip, MRCP_IPV4_HLEN);
		off += MRCP_IPV4_HLEN;
	} else {
		mrcp_frame_ev_encode(tx->ev, tx->ev_layout, &sport, &flow_label);
		if (tx->l3 == MRCP_FRAME_SRV6) {
			/* §2.3, D9: same source, DSCP/ECN and flow label as
			 * the inner header; the DA is the uSID path. */
			put_ipv6(b + off, tx, flow_label,
				 (uint16_t)(MRCP_IPV6_HLEN + udp_len), PROTO_IPV6,
				 MRCP_SRV6_HOP_LIMIT, tx->srv6_da);
			off += MRCP_IPV6_HLEN;
		}
		put_ipv6(b + off, tx, flow_label, (uint16_t)udp_len, PROTO_UDP,
			 tx->ttl, tx->dst_ip);
		off += MRCP_IPV6_HLEN;
	}

	mrcp_put_be16(b + off, sport);
	mrcp_put_be16(b + off + 2, tx->udp_dport);
	mrcp_put_be16(b + off + 4, (uint16_t)udp_len);
	mrcp_put_be16(b + off + 6, 0); /* D2 */
	return off + MRCP_UDP_HLEN;
}

int mrcp_frame_hdr_build(const struct mrcp_frame_tx *tx, size_t mrc_len,
			 void *buf, size_t cap)
{
	int rc = tx_check(tx, mrc_len, mrcp_frame_hdr_len(tx), cap);

	if (rc < 0)
		return rc;
	return (int)hdr_write(tx, mrc_len, buf);
}

/* UDP checksum over the pseudo-header of the UDP-carrying IP header at @ip
 * (RFC 768 / RFC 8200 §8.1); 0 is sent as 0xFFFF. */
static uint16_t udp_csum(bool v4, const uint8_t *ip, const uint8_t *udp, size_t udp_len)
{
	/* udp_len fits 16 bits: checked by tx_check() */
	uint64_t sum = v4 ? mrcp_csum_pseudo(ip + 12, ip + 16, 4, PROTO_UDP, (uint32_t)udp_len)
			  : mrcp_csum_pseudo(ip + 8, ip + 24, 16, PROTO_UDP, (uint32_t)udp_len);
	uint16_t c = mrcp_csum_fold(mrcp_csum_add(sum, udp, udp_len));

	return c ? c : 0xFFFFu;
}

int mrcp_frame_build(const struct mrcp_frame_tx *tx, const void *mrc,
		     size_t mrc_len, void *buf, size_t cap)
{
	size_t hl = mrcp_frame_hdr_len(tx);
	size_t total = hl + mrc_len + MRCP_ICRC_LEN;
	size_t ip_off = mrcp_frame_icrc_off(tx);
	uint8_t *b = buf;
	uint32_t icrc;
	int rc;

	rc = tx_check(tx, mrc_len, total, cap);
	if (rc < 0)
		return rc;
	memmove(b + hl, mrc, mrc_len); /* first: @mrc may overlap the headers */
	hdr_write(tx, mrc_len, b);
	rc = mrcp_icrc_compute(b + ip_off, total - MRCP_ICRC_LEN - ip_off, &icrc);
	if (rc < 0)
		return rc; /* not reached: the headers just written are well formed */
	mrcp_icrc_store(b + total - MRCP_ICRC_LEN, icrc);
	if (tx->udp_csum) {
		/* After the ICRC: the UDP checksum covers it, and the ICRC masks
		 * the checksum, so this order gives both their final values. */
		uint8_t *udp = b + hl - MRCP_UDP_HLEN;

		mrcp_put_be16(udp + 6, udp_csum(tx->l3 == MRCP_FRAME_IPV4, b + ip_off,
						udp, total - (hl - MRCP_UDP_HLEN)));
	}
	return (int)total;
}

/* ---- receive ---------------------------------------------------------------- */

void mrcp_frame_rx_cfg_defaults(struct mrcp_frame_rx_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->udp_port = MRCP_UDP_PORT_DEFAULT;
	cfg->ev_layout = MRCP_EV_LO16_SPORT;
	mrcp_dscp_map_defaults(&cfg->dscp);
	cfg->check_icrc = true;
	cfg->check_ip_csum = true;
}

/* Where the parser found things, as offsets into the frame. The claimed
 * ends come from IP length fields and may lie beyond the frame (trimming). */
struct layout {
	size_t ip_off;      /* innermost IP header: the ICRC starts here (D24) */
	size_t udp_off;
	size_t outer_end;   /* end claimed by the first IP header */
	size_t inner_end;   /* end claimed by the innermost IP header */
};

static int parse_ipv4(const struct mrcp_frame_rx_cfg *cfg, const uint8_t *f, size_t len,
		      size_t off, struct mrcp_frame_view *v, struct layout *lo)
{
	const uint8_t *ip = f + off;
	size_t ihl;

	if (len - off < MRCP_IPV4_HLEN || ip[0] >> 4 != 4)
		return -EBADMSG;
	ihl = (size_t)(ip[0] & 0x0F) * 4;
	if (ihl < MRCP_IPV4_HLEN || len - off < ihl)
		return -EBADMSG;
	if (ip[9] != PROTO_UDP)
		return -ENOMSG;
	if (mrcp_get_be16(ip + 6) & IPV4_FRAG_MASK)
		return -EBADMSG; /* MRC never fragments (DF is set on transmit) */
	if (cfg->check_ip_csum && mrcp_csum(ip, ihl) != 0)
		return -EBADMSG;

	v->l3 = MRCP_FRAME_IPV4;
	v->dscp = ip[1] >> 2;
	v->ecn = ip[1] & 3;
	v->ttl = ip[8];
	memcpy(v->src_ip, ip + 12, 4);
	memcpy(v->dst_ip, ip + 16, 4);
	lo->ip_off = off;
	lo->udp_off = off + ihl;
	lo->outer_end = lo->inner_end = off + mrcp_get_be16(ip + 2);
	return 0;
}

/* One IPv6 header at @off: version, and the fields the view takes from it. */
static int ipv6_hdr(const uint8_t *f, size_t len, size_t off, uint32_t *vtf)
{
	if (len - off < MRCP_IPV6_HLEN)
		return -EBADMSG;
	*vtf = mrcp_get_be32(f + off);
	if (*vtf >> 28 != 6)
		return -EBADMSG;
	return 0;
}

static int parse_ipv6(const uint8_t *f, size_t len, size_t off,
		      struct mrcp_frame_view *v, struct layout *lo)
{
	const uint8_t *ip = f + off;
	size_t inner;
	uint32_t vtf;
	int rc;

	rc = ipv6_hdr(f, len, off, &vtf);
	if (rc < 0)
		return rc;
	/* DSCP, ECN and hop limit from the outer header: in SRv6 it is the one
	 * switches re-mark and decrement (D9, D34). */
	v->dscp = (uint8_t)(vtf >> 22 & 0x3F);
	v->ecn = (uint8_t)(vtf >> 20 & 3);
	v->ttl = ip[7];
	lo->outer_end = off + MRCP_IPV6_HLEN + mrcp_get_be16(ip + 4);

	switch (ip[6]) {
	case PROTO_UDP:
		v->l3 = MRCP_FRAME_IPV6;
		v->flow_label = vtf & 0xFFFFFu;
		memcpy(v->src_ip, ip + 8, 16);
		memcpy(v->dst_ip, ip + 24, 16);
		lo->ip_off = off;
		lo->udp_off = off + MRCP_IPV6_HLEN;
		lo->inner_end = lo->outer_end;
		return 0;
	case PROTO_IPV6:
		inner = off + MRCP_IPV6_HLEN;
		break;
	case PROTO_ROUTING: {
		/* An SRH (or any routing header) is skipped whole (§2.3, D24). */
		const uint8_t *rh = ip + MRCP_IPV6_HLEN;

		if (len - off - MRCP_IPV6_HLEN < 8)
			return -EBADMSG;
		if (rh[0] != PROTO_IPV6)
			return -ENOMSG;
		inner = off + MRCP_IPV6_HLEN + 8 + (size_t)rh[1] * 8;
		if (inner > len)
			return -EBADMSG;
		break;
	}
	default:
		return -ENOMSG; /* ICMPv6 (NDP) and the rest: the daemon's */
	}

	rc = ipv6_hdr(f, len, inner, &vtf);
	if (rc < 0)
		return rc;
	ip = f + inner;
	if (ip[6] != PROTO_UDP)
		return -ENOMSG;
	v->l3 = MRCP_FRAME_SRV6;
	memcpy(v->srv6_da, f + off + 24, 16);
	v->flow_label = vtf & 0xFFFFFu; /* D9: EV from the inner header */
	memcpy(v->src_ip, ip + 8, 16);
	memcpy(v->dst_ip, ip + 24, 16);
	lo->ip_off = inner;
	lo->udp_off = inner + MRCP_IPV6_HLEN;
	lo->inner_end = inner + MRCP_IPV6_HLEN + mrcp_get_be16(ip + 4);
	return 0;
}

static bool port_ok(const struct mrcp_frame_rx_cfg *cfg, uint16_t port)
{
	return port == cfg->udp_port ||
	       (cfg->accept_alt_port && port == MRCP_UDP_PORT_ALT); /* D1 */
}

int mrcp_frame_parse(const struct mrcp_frame_rx_cfg *cfg, const void *frame,
		     size_t len, struct mrcp_frame_view *v)
{
	const uint8_t *f = frame;
	struct layout lo;
	size_t off = 12, end, udp_len;
	uint16_t et;
	uint32_t icrc;
	bool trimmed;
	int rc;

	memset(v, 0, sizeof(*v));
	if (len < MRCP_ETH_HLEN)
		return -EBADMSG;
	memcpy(v->dst_mac, f, 6);
	memcpy(v->src_mac, f + 6, 6);
	et = mrcp_get_be16(f + off);
	if (et == ETH_P_VLAN) {
		if (len < MRCP_ETH_HLEN + MRCP_VLAN_HLEN)
			return -EBADMSG;
		v->vlan = true;
		v->vlan_tci = mrcp_get_be16(f + off + 2);
		off += MRCP_VLAN_HLEN;
		et = mrcp_get_be16(f + off);
	}
	off += 2;

	if (et == ETH_P_IPV4)
		rc = parse_ipv4(cfg, f, len, off, v, &lo);
	else if (et == ETH_P_IPV6)
		rc = parse_ipv6(f, len, off, v, &lo);
	else
		rc = -ENOMSG;
	if (rc < 0)
		return rc;

	/* The UDP header must be in the frame to tell MRC from other UDP. */
	if (len - lo.udp_off < MRCP_UDP_HLEN)
		return -EBADMSG;
	v->udp_sport = mrcp_get_be16(f + lo.udp_off);
	v->udp_dport = mrcp_get_be16(f + lo.udp_off + 2);
	if (!port_ok(cfg, v->udp_dport))
		return -ENOMSG;
	/* §2.3, D69: an SRv6 sender writes its port's address as both
	 * sources; an outer source that differs would let a fabric that
	 * filters outer sources carry any inner one, the one the engine
	 * checks */
	if (v->l3 == MRCP_FRAME_SRV6 && memcmp(f + off + 8, v->src_ip, 16) != 0)
		return -EBADMSG;
	if (v->l3 == MRCP_FRAME_IPV4)
		v->ev = v->udp_sport; /* D5: the upper half is zero */
	else
		v->ev = mrcp_frame_ev_decode(v->udp_sport, v->flow_label, cfg->ev_layout);

	/* D34: trimmed by DSCP, or by a frame shorter than an IP length says.
	 * A switch that trims and fixes only the outer length leaves an inner
	 * length that overshoots it, which counts as short as well. Ethernet
	 * padding beyond the IP length is not part of the packet. */
	v->truncated = lo.outer_end > len || lo.inner_end > lo.outer_end;
	end = lo.inner_end;
	if (end > lo.outer_end)
		end = lo.outer_end;
	if (end > len)
		end = len;
	trimmed = v->truncated ||
		  v->dscp == cfg->dscp.dscp[MRCP_DSCP_CLASS_TRIMMED] ||
		  v->dscp == cfg->dscp.dscp[MRCP_DSCP_CLASS_TRIMMED_LASTHOP];
	if (end < lo.udp_off + MRCP_UDP_HLEN)
		return -EBADMSG;
	udp_len = end - lo.udp_off;

	if (trimmed) {
		/* "Whatever is there": a trimming switch may or may not leave
		 * a (now meaningless) ICRC, and the headers the NACK needs are
		 * at the front, so nothing is taken off the end. */
		if (v->dscp == cfg->dscp.dscp[MRCP_DSCP_CLASS_TRIMMED_LASTHOP] ||
		    (cfg->lasthop_hl_enable && v->ttl == cfg->lasthop_hl))
			v->trim = MRCP_TRIM_LASTHOP;
		else
			v->trim = MRCP_TRIM_FABRIC;
		if (udp_len < MRCP_UDP_HLEN + BTH_LEN)
			return -EBADMSG;
		v->mrc = f + lo.udp_off + MRCP_UDP_HLEN;
		v->mrc_len = (uint32_t)(udp_len - MRCP_UDP_HLEN);
		return 0;
	}

	/* Untrimmed: every length must agree. */
	if (lo.inner_end != lo.outer_end || mrcp_get_be16(f + lo.udp_off + 4) != udp_len ||
	    udp_len < MRCP_UDP_HLEN + BTH_LEN + MRCP_ICRC_LEN)
		return -EBADMSG;
	v->mrc = f + lo.udp_off + MRCP_UDP_HLEN;
	v->mrc_len = (uint32_t)(udp_len - MRCP_UDP_HLEN - MRCP_ICRC_LEN);
	if (!cfg->check_icrc)
		return 0;
	rc = mrcp_icrc_compute(f + lo.ip_off, end - MRCP_ICRC_LEN - lo.ip_off, &icrc);
	if (rc < 0)
		return rc; /* not reached: the headers were checked above */
	if (icrc != mrcp_icrc_load(f + end - MRCP_ICRC_LEN)) {
		v->icrc = MRCP_ICRC_BAD;
		return -EILSEQ;
	}
	v->icrc = MRCP_ICRC_OK;
	return 0;
}
