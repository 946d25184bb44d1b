/* mrcp_frame.h - the encapsulation around an MRC packet (§2):
 *
 *   plain: Ethernet [802.1Q] | IPv4 or IPv6 | UDP | MRC (BTH..pad) | ICRC
 *   SRv6 : Ethernet [802.1Q] | outer IPv6 [SRH] | inner IPv6 | UDP | MRC | ICRC
 *
 * Transmit: struct mrcp_frame_tx describes one frame's outer headers;
 * mrcp_frame_hdr_build() writes them in front of MRC bytes held elsewhere
 * (zero-copy datapath), mrcp_frame_build() makes a whole contiguous frame,
 * ICRC included. Receive: mrcp_frame_parse() checks a frame against a
 * struct mrcp_frame_rx_cfg and returns a struct mrcp_frame_view that points
 * at the MRC bytes inside the frame. Also here: where the EV goes (D4, D5,
 * D9), the DSCP classes (D23), ECN codepoints, and trim detection (D34).
 * The MRC bytes themselves are wire.c's business.
 */
#ifndef MRCP_FRAME_H
#define MRCP_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mrcp_icrc.h"
#include "mrcp_wire.h"

/* ---- sizes (bytes) ----------------------------------------------------- */

#define MRCP_ETH_HLEN      14u
#define MRCP_VLAN_HLEN     4u
#define MRCP_IPV4_HLEN     20u   /* as built: no options */
#define MRCP_IPV6_HLEN     40u
#define MRCP_UDP_HLEN      8u
/** Longest header stack mrcp_frame_hdr_build() writes (VLAN + SRv6). */
#define MRCP_FRAME_HDR_MAX (MRCP_ETH_HLEN + MRCP_VLAN_HLEN + 2 * MRCP_IPV6_HLEN + MRCP_UDP_HLEN)
/** Outer hop limit of an SRv6 frame (§2.3). */
#define MRCP_SRV6_HOP_LIMIT 64u

/* ---- EV placement (§2.2) ------------------------------------------ */

/** Which EV half rides in the UDP source port (D4, `transport.ev_layout`). */
enum mrcp_ev_layout {
	MRCP_EV_LO16_SPORT = 0, /**< default: EV[15:0] sport, EV[31:16] flow label[15:0] */
	MRCP_EV_HI16_SPORT = 1, /**< EV[31:16] sport, EV[15:0] flow label[15:0] */
};

/**
 * Split @ev into the UDP source port and the 20-bit IPv6 flow label per
 * @layout (D4). flow label[19:16] is always 0. IPv4 frames do not use this:
 * they carry a 16-bit EV in the source port whatever the layout (D5).
 */
void mrcp_frame_ev_encode(uint32_t ev, enum mrcp_ev_layout layout,
			  uint16_t *sport, uint32_t *flow_label);

/** Inverse of mrcp_frame_ev_encode(); flow label[19:16] is ignored. */
uint32_t mrcp_frame_ev_decode(uint16_t sport, uint32_t flow_label,
			      enum mrcp_ev_layout layout);

/* ---- traffic classes (§3.8) ---------------------------------------- */

/*
 * DSCP classes: X(name, default DSCP, what it carries). The defaults are
 * ours (D23) and must match the switch configuration.
 */
#define MRCP_DSCP_CLASSES(X)                                                   \
	X(TRIMMABLE, 10, "first transmissions of Writes, probes")              \
	X(TRIMMABLE_RETX, 12, "retransmissions")                               \
	X(NO_TRIM, 14, "data to a peer without trim NACK (D40)")               \
	X(TRIMMED, 11, "set by a switch on a header trimmed in the fabric")    \
	X(TRIMMED_LASTHOP, 13, "set by the last-hop switch on a trimmed header") \
	X(CONTROL, 46, "SACK, NACK, AETH, EETH")

/** Index into struct mrcp_dscp_map (not a codepoint). */
enum mrcp_dscp_class {
#define X(n, v, d) MRCP_DSCP_CLASS_##n,
	MRCP_DSCP_CLASSES(X)
#undef X
	MRCP_DSCP_CLASS_COUNT
};

/** DSCP codepoint (0..63) of each class; configurable (D23). */
struct mrcp_dscp_map {
	uint8_t dscp[MRCP_DSCP_CLASS_COUNT]; /**< indexed by enum mrcp_dscp_class */
};

/** Fill @m with the D23 defaults. */
void mrcp_dscp_map_defaults(struct mrcp_dscp_map *m);

/**
 * Check a configured map.
 * @return 0, or -EINVAL if a codepoint is above 63, or if a trimmed codepoint
 *         (TRIMMED, TRIMMED_LASTHOP) equals the codepoint of any other class,
 *         which would make every packet of that class look trimmed.
 */
int mrcp_dscp_map_check(const struct mrcp_dscp_map *m);

/** "TRIMMABLE", ..., or NULL for a value outside the enum. */
const char *mrcp_dscp_class_name(enum mrcp_dscp_class c);

/** ECN codepoints (RFC 3168). Data and probes go ECT(0), control Not-ECT (D9). */
enum mrcp_ecn {
	MRCP_ECN_NOT_ECT = 0,
	MRCP_ECN_ECT1 = 1,
	MRCP_ECN_ECT0 = 2,
	MRCP_ECN_CE = 3,
};

/* ---- transmit ------------------------------------------------------------- */

/** Network layer of a frame. 0 is invalid, so a zeroed struct cannot build. */
enum mrcp_frame_l3 {
	MRCP_FRAME_IPV4 = 1,
	MRCP_FRAME_IPV6 = 2,
	MRCP_FRAME_SRV6 = 3, /**< outer IPv6 (next header 41) + inner IPv6 (§2.3) */
};

/**
 * Everything that varies between the outer headers of two MRC frames.
 * Addresses are in network byte order; IPv4 uses bytes 0..3.
 */
struct mrcp_frame_tx {
	uint8_t dst_mac[6];
	uint8_t src_mac[6];
	bool vlan;            /**< insert one 802.1Q tag */
	uint16_t vlan_tci;    /**< PCP(15:13) DEI(12) VID(11:0), host order */
	enum mrcp_frame_l3 l3;
	uint8_t src_ip[16];   /**< our port's address; SRv6: outer and inner source */
	uint8_t dst_ip[16];   /**< peer's address; SRv6: the inner destination */
	uint8_t srv6_da[16];  /**< SRv6 only: outer destination, the uSID path (D8) */
	uint8_t dscp;         /**< 0..63; SRv6: written into both headers (D9) */
	uint8_t ecn;          /**< enum mrcp_ecn; SRv6: both headers (D9) */
	uint8_t ttl;          /**< IPv4 TTL / IPv6 hop limit; SRv6: the inner
			       *   header's (the outer is MRCP_SRV6_HOP_LIMIT) */
	uint32_t ev;          /**< entropy value; IPv4: must fit 16 bits (D5) */
	enum mrcp_ev_layout ev_layout; /**< IPv6 and SRv6 only (D4) */
	uint16_t udp_dport;   /**< non-zero; MRCP_UDP_PORT_DEFAULT (D1) */
	uint16_t ip_id;       /**< IPv4 identification; DF is always set */
	bool udp_csum;        /**< compute the UDP checksum (D2: for IPv6 paths
			       *   that require one); otherwise it is sent as 0.
			       *   Only mrcp_frame_build() computes it. */
};

/**
 * Defaults: DSCP TRIMMABLE (D23), ECT(0) (D9), TTL 64, EV layout lo16_sport
 * (D4), UDP port 4791 (D1), no VLAN, no UDP checksum; MACs, addresses and EV
 * zero; l3 is left 0, so the caller must choose a network layer.
 */
void mrcp_frame_tx_defaults(struct mrcp_frame_tx *tx);

/** Bytes of header that mrcp_frame_hdr_build() writes (Ethernet..UDP), or 0
 *  if tx->l3 is not a valid enum mrcp_frame_l3. */
size_t mrcp_frame_hdr_len(const struct mrcp_frame_tx *tx);

/** Offset, bytes from the frame start, of the header where the ICRC starts:
 *  the IP header, or the inner IPv6 header in SRv6 mode (D24); 0 if tx->l3
 *  is invalid. */
size_t mrcp_frame_icrc_off(const struct mrcp_frame_tx *tx);

/**
 * Write the Ethernet..UDP headers for an MRC packet of @mrc_len bytes (BTH
 * through pad). IP and UDP lengths include the 4-byte ICRC that the caller
 * appends; the IPv4 header checksum is computed; the EV goes in the UDP
 * source port and the flow label(s) (D4, D5, D9); the UDP checksum is 0.
 * For a split frame the caller then runs mrcp_icrc_begin() from
 * buf + mrcp_frame_icrc_off() over these headers and the MRC headers,
 * mrcp_icrc_update() over the payload and pad, and stores the result.
 * @param mrc_len  bytes of MRC packet, at least the 12-byte BTH.
 * @param buf      where the headers go; @cap bytes.
 * @return header bytes written (== mrcp_frame_hdr_len(tx)), -ENOBUFS if @cap
 *         is too small, or -EINVAL if tx->l3 or tx->ev_layout is not a valid
 *         enum value, dscp > 63, ecn > 3, udp_dport is 0, an IPv4 EV does
 *         not fit 16 bits (D5), @mrc_len is below 12, or the packet would
 *         not fit the 16-bit IP length field.
 */
int mrcp_frame_hdr_build(const struct mrcp_frame_tx *tx, size_t mrc_len,
			 void *buf, size_t cap);

/**
 * Build a whole frame: headers, a copy of the MRC bytes, the ICRC (LSB first),
 * and the UDP checksum if tx->udp_csum. No Ethernet padding or FCS.
 * @param mrc      BTH through pad; may overlap @buf (for example already sit at
 *                 buf + mrcp_frame_hdr_len(tx) to build in place).
 * @return frame bytes (header + @mrc_len + 4), or -ENOBUFS / -EINVAL as
 *         mrcp_frame_hdr_build(); on error @buf is untouched.
 */
int mrcp_frame_build(const struct mrcp_frame_tx *tx, const void *mrc,
		     size_t mrc_len, void *buf, size_t cap);

/* ---- receive -------------------------------------------------------------- */

/** Receive configuration; see mrcp_frame_rx_cfg_defaults(). */
struct mrcp_frame_rx_cfg {
	uint16_t udp_port;             /**< UDP destination port (D1) */
	bool accept_alt_port;          /**< also accept MRCP_UDP_PORT_ALT, 4971 (D1) */
	enum mrcp_ev_layout ev_layout; /**< D4 */
	struct mrcp_dscp_map dscp;     /**< only TRIMMED and TRIMMED_LASTHOP are read */
	bool lasthop_hl_enable;        /**< D34: recognise last-hop trims by hop limit */
	uint8_t lasthop_hl;            /**< received TTL / outer hop limit that marks
					*   a trim at the last hop */
	bool check_icrc;               /**< D24: verify untrimmed packets (debug: off) */
	bool check_ip_csum;            /**< verify the IPv4 header checksum (turn off
					*   when the NIC has already checked it) */
};

/** Defaults: port 4791 only, lo16_sport, D23 DSCPs, no hop-limit rule, ICRC
 *  and IPv4 checksum checked. */
void mrcp_frame_rx_cfg_defaults(struct mrcp_frame_rx_cfg *cfg);

/** Trim state of a received packet (D34); the NACK codes of the same names. */
enum mrcp_trim {
	MRCP_TRIM_NONE = 0,
	MRCP_TRIM_FABRIC,   /**< trimmed inside the fabric: NACK TRIMMED */
	MRCP_TRIM_LASTHOP,  /**< trimmed at the last hop: NACK TRIMMED_LASTHOP */
};

/** What the parser did with the ICRC. */
enum mrcp_icrc_verdict {
	MRCP_ICRC_UNCHECKED = 0, /**< checking off, or the packet is trimmed (D24) */
	MRCP_ICRC_OK,
	MRCP_ICRC_BAD,
};

/**
 * A parsed frame. Pointers point into the frame passed to mrcp_frame_parse()
 * and live as long as it does. In SRv6 frames DSCP, ECN and TTL come from
 * the outer header (the one switches re-mark and decrement) and addresses,
 * flow label and EV from the inner one (D9).
 */
struct mrcp_frame_view {
	uint8_t dst_mac[6];
	uint8_t src_mac[6];
	bool vlan;
	uint16_t vlan_tci;       /**< host order; 0 without a tag */
	enum mrcp_frame_l3 l3;
	uint8_t src_ip[16];      /**< network order; IPv4 in bytes 0..3, rest 0;
				  *   SRv6: the inner source, which the outer
				  *   one must equal (§2.3) */
	uint8_t dst_ip[16];      /**< SRv6: the inner destination */
	uint8_t srv6_da[16];     /**< SRv6: outer destination (counted, never
				  *   checked: uSID shifting has rewritten it) */
	uint8_t dscp;            /**< 0..63 */
	uint8_t ecn;             /**< enum mrcp_ecn */
	uint8_t ttl;             /**< IPv4 TTL / IPv6 (outer) hop limit */
	uint32_t flow_label;     /**< 20 bits; 0 for IPv4 */
	uint16_t udp_sport;
	uint16_t udp_dport;
	uint32_t ev;             /**< D4; IPv4: the source port, upper half 0 (D5) */
	enum mrcp_trim trim;
	bool truncated;          /**< an IP length claims more bytes than the
				  *   frame holds (one of the D34 trim signs) */
	enum mrcp_icrc_verdict icrc;
	const uint8_t *mrc;      /**< BTH..pad; for trimmed packets whatever
				  *   followed the UDP header (no ICRC removed) */
	uint32_t mrc_len;        /**< bytes at @mrc, at least 12 (a BTH) */
};

/**
 * Parse one received Ethernet frame (FCS already stripped). Lengths come from
 * the IP header(s), so Ethernet padding after the packet is ignored. IPv4
 * options are skipped. Accepted shapes: Ethernet with at most one 802.1Q tag;
 * IPv4 or IPv6 carrying UDP; or SRv6: IPv6 with next header 41, or a routing
 * header (43, skipped) followed by 41, then an inner IPv6 carrying UDP.
 * A packet is trimmed (D34) if its (outer) DSCP is TRIMMED or
 * TRIMMED_LASTHOP, or if the frame is shorter than an IP length says; a trim
 * is at the last hop if the DSCP is TRIMMED_LASTHOP or, when enabled, the
 * received (outer) TTL equals cfg->lasthop_hl. Untrimmed packets must have
 * consistent IP and UDP lengths and end in a 4-byte ICRC, which is checked
 * when cfg->check_icrc is set. The UDP checksum is never checked (D2).
 * @param cfg    receive configuration.
 * @param frame  the frame; @len bytes, none read beyond.
 * @param v      out: filled on 0 and on -EILSEQ; unspecified otherwise.
 * @return 0;
 *         -ENOMSG  not an MRC frame: another ethertype (ARP, ...), not UDP
 *                  (ICMPv6/NDP, ...), an IPv6 next header other than UDP,
 *                  41 or a routing header followed by 41, or a UDP
 *                  destination port not accepted by @cfg;
 *         -EBADMSG malformed or truncated: headers cut short, wrong IP
 *                  version, IPv4 IHL < 5, a fragment, a bad IPv4 header
 *                  checksum (if checked), lengths that contradict each other
 *                  in an untrimmed packet, fewer than 12 bytes of MRC,
 *                  or SRv6 outer and inner sources that differ (§2.3);
 *         -EILSEQ  ICRC mismatch on an untrimmed packet with checking on
 *                  (the view is filled, v->icrc == MRCP_ICRC_BAD).
 */
int mrcp_frame_parse(const struct mrcp_frame_rx_cfg *cfg, const void *frame,
		     size_t len, struct mrcp_frame_view *v);

#endif
