/* mrcp_wire.h - every MRC 1.0 on-wire header: the packed network-order layout
 * (struct mrcp_<hdr>_wire, size-asserted), the decoded host form
 * (struct mrcp_<hdr>), and one encode/decode pair per header. Then the
 * packet-level codec, which walks BTH -> extension headers -> payload by
 * opcode and flags. Offsets and D-choices: docs/protocol.md §3.
 *
 * Adding a header or an opcode means: the wire struct + static_assert here,
 * its host struct and codec pair in wire.c, its row in MRCP_OPCODES, a
 * round-trip, bit-position and truncation test in test/unit/test_wire.c, a
 * seed in test/fuzz/corpus/pkt/, and its table in docs/protocol.md.
 */
#ifndef MRCP_WIRE_H
#define MRCP_WIRE_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mrcp_bytes.h"

/* ---- constants ----------------------------------------------------------- */

#define MRCP_UDP_PORT_DEFAULT 4791u  /* D1 */
#define MRCP_UDP_PORT_ALT     4971u  /* D1: accepted on receive when enabled */
#define MRCP_PKEY_DEFAULT     0xFFFFu /* D10 */
#define MRCP_QPN_ENDPOINT     0x000002u /* §7: endpoint operations */
#define MRCP_QPN_MASK         0xFFFFFFu
#define MRCP_PAYLOAD_MAX      4096u  /* D3: largest payload MTU */
#define MRCP_TSETH_FTYPE      0x1u   /* §3.3 */
#define MRCP_ICRC_LEN         4u

/* Header-present bits (struct mrcp_pkt.hdrs). */
enum {
	MRCP_HDR_METH = 1u << 0,
	MRCP_HDR_TSETH = 1u << 1,
	MRCP_HDR_RETH = 1u << 2,
	MRCP_HDR_IMM = 1u << 3,
	MRCP_HDR_AETH = 1u << 4,
	MRCP_HDR_SETH = 1u << 5, /* SETH followed by CC_STATE, always together */
	MRCP_HDR_NETH = 1u << 6,
	MRCP_HDR_PETH = 1u << 7,
	MRCP_HDR_ERTH = 1u << 8,
	MRCP_HDR_EETH = 1u << 9,
};

/*
 * Opcodes (§3.1, SD values in the IBTA vendor range):
 *   X(name, value, headers after BTH; TSETH is added when BTH.ts = 1)
 * Adding one: see the checklist at the top of this file.
 */
#define MRCP_OPCODES(X)                                                        \
	X(WRITE_FIRST, 0xC6, MRCP_HDR_METH | MRCP_HDR_RETH)                    \
	X(WRITE_MIDDLE, 0xC7, MRCP_HDR_METH | MRCP_HDR_RETH)                   \
	X(WRITE_LAST, 0xC8, MRCP_HDR_METH | MRCP_HDR_RETH)                     \
	X(WRITE_LAST_IMM, 0xC9, MRCP_HDR_METH | MRCP_HDR_RETH | MRCP_HDR_IMM)  \
	X(WRITE_ONLY, 0xCA, MRCP_HDR_METH | MRCP_HDR_RETH)                     \
	X(WRITE_ONLY_IMM, 0xCB, MRCP_HDR_METH | MRCP_HDR_RETH | MRCP_HDR_IMM)  \
	X(ACK, 0xD1, MRCP_HDR_AETH)                                            \
	X(EP_REQUEST, 0xD8, MRCP_HDR_ERTH)                                     \
	X(EP_RESPONSE, 0xD9, MRCP_HDR_EETH)                                    \
	X(SACK, 0xDC, MRCP_HDR_SETH)                                           \
	X(NACK, 0xDD, MRCP_HDR_NETH)                                           \
	X(PROBE, 0xDE, MRCP_HDR_PETH)

enum mrcp_opcode {
#define X(n, v, h) MRCP_OP_##n = v,
	MRCP_OPCODES(X)
#undef X
};

/* NACK codes (§3.7, UET code space). Unknown codes decode fine and are
 * handled as NO_RESOURCE by the engine (D22). */
#define MRCP_NACK_CODES(X)                                                     \
	X(TRIMMED, 0x01)                                                       \
	X(TRIMMED_LASTHOP, 0x02)                                               \
	X(NO_BITMAP, 0x06)                                                     \
	X(NO_PKT_BUFFER, 0x07)                                                 \
	X(NO_RESOURCE, 0x0A)                                                   \
	X(PSN_OOR_WINDOW, 0x0B)                                                \
	X(UNEXP_EVENT, 0x19)

enum mrcp_nack_code {
#define X(n, v) MRCP_NACK_##n = v,
	MRCP_NACK_CODES(X)
#undef X
};

/* AETH syndromes (§3.3, D21). Any other value is -EBADMSG. */
enum mrcp_aeth_syndrome {
	MRCP_AETH_ACK = 0x1F,
	MRCP_AETH_NAK_INVALID_REQ = 0x61,
	MRCP_AETH_NAK_REMOTE_ACCESS = 0x62,
	MRCP_AETH_NAK_REMOTE_OP = 0x63,
};

/* SETH.m: the responder's verdict on the echoed EV (§3.4, D47).
 * Value 3 is not an error: it is decoded as NONE. */
enum mrcp_ev_verdict {
	MRCP_VERDICT_NONE = 0,
	MRCP_VERDICT_SKIP_ONCE = 1,
	MRCP_VERDICT_ALWAYS_SKIP = 2,
};

/* ERTH/EETH op (§3.6). Values 2 and 3 are -EBADMSG. */
enum mrcp_ep_op {
	MRCP_EP_PORT_STATUS_UPDATE = 0,
	MRCP_EP_EV_PROBE = 1,
};

/* ---- on-wire layouts: packed, network byte order ----------------------- */

struct mrcp_bth_wire {
	uint8_t opcode;
	uint8_t flags;      /* SE(7) MigReq(6) PadCnt(5:4) TVer(3:0) */
	uint8_t pkey[2];
	uint8_t rsvd;       /* masked to ones for the ICRC */
	uint8_t dest_qp[3];
	uint8_t flags2;     /* AckReq(7) rsvd(6) rtx(5) ts(4) rsvd(3:0), D10 */
	uint8_t psn[3];
} __attribute__((packed));
static_assert(sizeof(struct mrcp_bth_wire) == 12, "wire ABI: update codec, tests, docs/protocol.md");

struct mrcp_meth_wire {
	uint8_t rq_msn[2];
	uint8_t msn[2];
} __attribute__((packed));
static_assert(sizeof(struct mrcp_meth_wire) == 4, "wire ABI: update codec, tests, docs/protocol.md");

struct mrcp_tseth_wire {
	uint8_t tx_timestamp[2];
	uint8_t tsr_rsvd;   /* tsr(7), reserved(6:0) */
	uint8_t rsvd_ftype; /* reserved(7:4), ftype(3:0) */
} __attribute__((packed));
static_assert(sizeof(struct mrcp_tseth_wire) == 4, "wire ABI: update codec, tests, docs/protocol.md");

struct mrcp_reth_wire {
	uint8_t va[8];
	uint8_t rkey[4];
	uint8_t dma_len[4];
} __attribute__((packed));
static_assert(sizeof(struct mrcp_reth_wire) == 16, "wire ABI: update codec, tests, docs/protocol.md");

struct mrcp_imm_wire {
	uint8_t imm[4];
} __attribute__((packed));
static_assert(sizeof(struct mrcp_imm_wire) == 4, "wire ABI: update codec, tests, docs/protocol.md");

struct mrcp_aeth_wire {
	uint8_t syndrome;
	uint8_t msn[3];
} __attribute__((packed));
static_assert(sizeof(struct mrcp_aeth_wire) == 4, "wire ABI: update codec, tests, docs/protocol.md");

struct mrcp_seth_wire {
	uint8_t prologue;       /* D14: 0, ignored */
	uint8_t flags;          /* prologue(7) m(6:5) rsvd(4:2) pr(1) rsvd(0) */
	uint8_t ack_psn_offset[2];
	uint8_t entropy[4];
	uint8_t spdcid[2];
	uint8_t dpdcid[2];
	uint8_t svc_time;       /* D17 */
	uint8_t cack_psn[3];
	uint8_t cc_type_flags;  /* cc_type(7:4) cc_flags(3:0), D16 */
	uint8_t mpr;
	uint8_t sack_offset[2];
	uint8_t sack_bitmap[8]; /* D26: bit i (LSB of the BE field) = PSN base + i */
} __attribute__((packed));
static_assert(sizeof(struct mrcp_seth_wire) == 28, "wire ABI: update codec, tests, docs/protocol.md");
#define MRCP_SACK_BITS (sizeof(((struct mrcp_seth_wire *)0)->sack_bitmap) * 8)

struct mrcp_cc_state_wire {
	uint8_t tx_timestamp[2];
	uint8_t ooo_count[2];   /* rsvd(15) ooo_count(14:0), D18 */
	uint8_t rc_pen;         /* r_c(7) rcv_cwnd_pen(6:0) */
	uint8_t rcvd_bytes[3];  /* D19 */
} __attribute__((packed));
static_assert(sizeof(struct mrcp_cc_state_wire) == 8, "wire ABI: update codec, tests, docs/protocol.md");

struct mrcp_neth_wire {
	uint8_t prologue[2];    /* D14 */
	uint8_t nack_code;
	uint8_t vendor_info;
	uint8_t entropy[4];
	uint8_t spdcid[2];
	uint8_t dpdcid[2];
	uint8_t rsvd;
	uint8_t nack_psn[3];
	uint8_t cc_type_flags;
	uint8_t rsvd2;
	uint8_t tx_timestamp[2];
} __attribute__((packed));
static_assert(sizeof(struct mrcp_neth_wire) == 20, "wire ABI: update codec, tests, docs/protocol.md");

struct mrcp_peth_wire {
	uint8_t prologue[2];    /* D14 */
	uint8_t rsvd;
	uint8_t vendor_info;
	uint8_t probe_id[2];    /* D37 */
	uint8_t rsvd2[2];
	uint8_t spdcid[2];
	uint8_t dpdcid[2];
	uint8_t tx_timestamp[2];
	uint8_t tsr_ftype[2];   /* tsr(15) rsvd(14:4) ftype(3:0) */
} __attribute__((packed));
static_assert(sizeof(struct mrcp_peth_wire) == 16, "wire ABI: update codec, tests, docs/protocol.md");

struct mrcp_erth_wire {
	uint8_t prologue;       /* D14 */
	uint8_t flags;          /* prologue(7) rsvd(6:2) op(1:0) */
	uint8_t rsvd;
	uint8_t vendor_info;
	uint8_t port_status_mask[4]; /* bit i-1 = port i up, D49 */
	uint8_t rsvd2[4];
	uint8_t tx_timestamp[2];
	uint8_t tsr_ftype[2];
} __attribute__((packed));
static_assert(sizeof(struct mrcp_erth_wire) == 16, "wire ABI: update codec, tests, docs/protocol.md");

struct mrcp_eeth_wire {
	uint8_t prologue;
	uint8_t flags;          /* prologue(7) rsvd(6) op(5:4) rsvd(3:0): not ERTH's op(1:0) */
	uint8_t rx_port;        /* D20 */
	uint8_t status;
	uint8_t port_status_mask[4];
	uint8_t svc_time[2];
	uint8_t rsvd[18];
	uint8_t tx_timestamp[2];
	uint8_t tsr_ftype[2];
	uint8_t rsvd2[4];
} __attribute__((packed));
static_assert(sizeof(struct mrcp_eeth_wire) == 36, "wire ABI: update codec, tests, docs/protocol.md");

/* ---- decoded host forms --------------------------------------------------- */

struct mrcp_bth {
	uint8_t opcode;
	bool se, migreq;     /* D10: sent 0; decoded as seen */
	uint8_t pad_cnt;     /* 0..3 */
	uint8_t tver;        /* must be 0 */
	uint16_t pkey;
	uint32_t dest_qp;    /* 24 bits */
	bool ack_req, rtx, ts;
	uint32_t psn;        /* 24 bits; D11 for non-data packets */
};

struct mrcp_meth {
	uint16_t rq_msn;     /* D12 */
	uint16_t msn;
};

struct mrcp_tseth {
	uint16_t tx_timestamp; /* 128 ns units (tsr 0) or 1024 ns (tsr 1), D13 */
	bool tsr;
	uint8_t ftype;       /* MRCP_TSETH_FTYPE */
};

struct mrcp_reth {
	uint64_t va;         /* address of this packet's first payload byte */
	uint32_t rkey;
	uint32_t dma_len;    /* length of the whole message, bytes */
};

struct mrcp_aeth {
	uint8_t syndrome;    /* enum mrcp_aeth_syndrome */
	uint32_t msn;        /* 24-bit field; carries a 16-bit MSN (D21) */
};

struct mrcp_seth {
	uint8_t m;           /* enum mrcp_ev_verdict; wire value 3 decodes as 0 */
	bool pr;
	int16_t ack_psn_offset;
	uint32_t entropy;
	uint16_t spdcid, dpdcid;
	uint8_t svc_time;    /* 128 ns units, 255 = no RTT sample (D17) */
	uint32_t cack_psn;
	uint8_t cc_type, cc_flags; /* 4 bits each, D16 */
	uint8_t mpr;         /* units of 128 PSNs */
	int16_t sack_offset; /* base = cack_psn + sack_offset, D27 */
	uint64_t sack_bitmap; /* D26 */
};

struct mrcp_cc_state {
	uint16_t tx_timestamp;
	uint16_t ooo_count;  /* 15 bits, saturating (D18) */
	bool r_c;
	uint8_t rcv_cwnd_pen; /* 0..127 */
	uint32_t rcvd_bytes; /* 24 bits, 256-byte units (D19) */
};

struct mrcp_neth {
	uint8_t nack_code;   /* enum mrcp_nack_code, or unknown (D22) */
	uint8_t vendor_info;
	uint32_t entropy;
	uint16_t spdcid, dpdcid;
	uint32_t nack_psn;
	uint8_t cc_type, cc_flags;
	uint16_t tx_timestamp;
};

struct mrcp_peth {
	uint16_t probe_id;
	uint16_t spdcid, dpdcid;
	uint16_t tx_timestamp;
	bool tsr;
	uint8_t ftype;
};

struct mrcp_erth {
	uint8_t op;          /* enum mrcp_ep_op */
	uint32_t port_status_mask;
	uint16_t tx_timestamp;
	bool tsr;
	uint8_t ftype;
};

struct mrcp_eeth {
	uint8_t op;
	uint8_t rx_port;     /* 1-based */
	uint8_t status;      /* 0 = OK */
	uint32_t port_status_mask;
	uint16_t svc_time;   /* 128 ns units */
	uint16_t tx_timestamp;
	bool tsr;
	uint8_t ftype;
};

/*
 * Per-header codecs. encode writes exactly sizeof(struct mrcp_<hdr>_wire)
 * bytes and returns that count, or -ENOBUFS if @cap is smaller, or -EINVAL if
 * a field does not fit its width (e.g. a 24-bit value above 0xFFFFFF).
 * decode reads exactly that many bytes and returns it, or -EBADMSG if @len is
 * smaller or an enumerated field holds a value this version does not define.
 * Reserved bits are written as zero and ignored on receive.
 */
#define MRCP_DECLARE_CODEC(hdr)                                                \
	int mrcp_##hdr##_encode(const struct mrcp_##hdr *h, void *buf, size_t cap); \
	int mrcp_##hdr##_decode(const void *buf, size_t len, struct mrcp_##hdr *h);
MRCP_DECLARE_CODEC(bth)
MRCP_DECLARE_CODEC(meth)
MRCP_DECLARE_CODEC(tseth)
MRCP_DECLARE_CODEC(reth)
MRCP_DECLARE_CODEC(aeth)
MRCP_DECLARE_CODEC(seth)
MRCP_DECLARE_CODEC(cc_state)
MRCP_DECLARE_CODEC(neth)
MRCP_DECLARE_CODEC(peth)
MRCP_DECLARE_CODEC(erth)
MRCP_DECLARE_CODEC(eeth)
#undef MRCP_DECLARE_CODEC
/* ImmDt is a bare 32-bit value. */
int mrcp_imm_encode(uint32_t imm, void *buf, size_t cap);
int mrcp_imm_decode(const void *buf, size_t len, uint32_t *imm);

/* ---- packets -------------------------------------------------------------- */

/** A decoded MRC packet: BTH .. payload, without the ICRC. */
struct mrcp_pkt {
	struct mrcp_bth bth;
	uint32_t hdrs;           /* MRCP_HDR_* present */
	/* data packets */
	struct mrcp_meth meth;
	struct mrcp_tseth tseth;
	struct mrcp_reth reth;
	uint32_t imm;
	/* control packets: exactly one of these, by opcode */
	union {
		struct mrcp_aeth aeth;
		struct {
			struct mrcp_seth seth;
			struct mrcp_cc_state cc;
		};
		struct mrcp_neth neth;
		struct mrcp_peth peth;
		struct mrcp_erth erth;
		struct mrcp_eeth eeth;
	};
	const uint8_t *payload;  /* decode: points into the buffer; encode: source */
	uint32_t payload_len;    /* bytes, without pad */
};

/** Headers that follow BTH for @opcode (MRCP_HDR_*; TSETH not included),
 *  or 0 if the opcode is not an MRC opcode. */
uint32_t mrcp_opcode_hdrs(uint8_t opcode);
/** "WRITE_FIRST", ..., or NULL for an unknown opcode. */
const char *mrcp_opcode_name(uint8_t opcode);
/** The six Write opcodes, 0xC6..0xCB. */
static inline bool mrcp_opcode_is_data(uint8_t opcode)
{
	return opcode >= MRCP_OP_WRITE_FIRST && opcode <= MRCP_OP_WRITE_ONLY_IMM;
}
/** "TRIMMED", ..., or NULL for a code this version does not name. */
const char *mrcp_nack_code_name(uint8_t code);

/**
 * Start a packet of kind @opcode: zero @p, set bth.opcode, pkey 0xFFFF (D10),
 * dest_qp, psn, the header mask for the opcode, and for data opcodes ts = 1
 * with TSETH ftype 0x1 (D13); an AETH starts as an ACK (D21) and PETH, ERTH
 * and EETH with ftype 0x1, so every kind encodes as initialised. The caller
 * then fills the kind's header.
 * @return 0, or -EINVAL for an unknown opcode or a QPN/PSN above 24 bits.
 */
int mrcp_pkt_init(struct mrcp_pkt *p, uint8_t opcode, uint32_t dest_qp, uint32_t psn);

/** Bytes of BTH and extension headers that mrcp_pkt_encode_hdr() writes. */
size_t mrcp_pkt_hdr_len(const struct mrcp_pkt *p);

/**
 * Encode BTH and the extension headers of @p (not the payload). BTH.PadCnt is
 * taken from payload_len (pad to 4 bytes); hdrs must match the opcode (and
 * TSETH must be present exactly when bth.ts is set).
 * @return header bytes written, -ENOBUFS if @cap is too small, -EINVAL if the
 *         header set does not match the opcode or a field is out of range, or
 *         payload_len is non-zero on a control packet or above MRCP_PAYLOAD_MAX.
 */
int mrcp_pkt_encode_hdr(const struct mrcp_pkt *p, void *buf, size_t cap);

/** Encode headers, copy the payload and write zero pad bytes.
 *  @return total bytes (a multiple of 4 for data packets), or as above. */
int mrcp_pkt_encode(const struct mrcp_pkt *p, void *buf, size_t cap);

/** Total encoded length of @p (headers + payload + pad). */
size_t mrcp_pkt_len(const struct mrcp_pkt *p);

/**
 * Decode one MRC packet from @buf (BTH through pad, no ICRC). Walks the
 * header stack by opcode and BTH.ts, then sets payload/payload_len (without
 * the PadCnt pad bytes).
 * @return 0, or -EBADMSG if the buffer is truncated, the opcode is unknown,
 *         TVer is not 0, a control packet has BTH.ts set (only Writes carry
 *         TSETH), an enumerated field is out of range, a control packet has
 *         trailing bytes, or a data payload is longer than MRCP_PAYLOAD_MAX,
 *         shorter than PadCnt, or not padded to a multiple of 4.
 */
int mrcp_pkt_decode(const void *buf, size_t len, struct mrcp_pkt *p);

/**
 * mrcp_pkt_decode() for the receive path: the same checks and return value,
 * and the same fields for every packet, with Writes and SACKs decoded in one
 * pass. The one difference: for a Write the control-header union of @p is
 * left as it was (a Write has no control header; nothing may read it), and
 * for a SACK the members of the union other than seth and cc are.
 */
int mrcp_pkt_decode_rx(const void *buf, size_t len, struct mrcp_pkt *p);

/**
 * A Write as the responder reads it: the fields of BTH, METH, TSETH, RETH
 * and ImmDt it uses, without the rest of struct mrcp_pkt (§4.2).
 */
struct mrcp_write {
	uint32_t dest_qp;
	uint32_t psn;
	uint8_t opcode;          /* a Write opcode, 0xC6..0xCB */
	bool ack_req, rtx;
	bool ts;                 /* TSETH present; tx_timestamp is 0 when not */
	uint16_t tx_timestamp;
	uint16_t rq_msn, msn;
	uint64_t va;
	uint32_t rkey, dma_len;
	uint32_t imm;            /* 0 without ImmDt */
	const uint8_t *payload;
	uint32_t payload_len;    /* without pad */
};

/**
 * Decode a Write for the receive path: the checks of mrcp_pkt_decode() (it
 * accepts exactly the Writes that function accepts) in one pass, into @w.
 * @return 0, or -EBADMSG for a malformed packet or one that is not a Write.
 */
int mrcp_write_decode(const void *buf, size_t len, struct mrcp_write *w);

/** The mrcp_write view of a decoded Write @p (e.g. from mrcp_pkt_decode_hdr()). */
void mrcp_write_from_pkt(const struct mrcp_pkt *p, struct mrcp_write *w);

/**
 * Decode only BTH and the extension headers, for a trimmed packet whose
 * payload was cut by a switch (§4.6): whatever follows the headers is
 * returned as payload, with no pad or length checks.
 * @return 0, or -EBADMSG as mrcp_pkt_decode() for the header part.
 */
int mrcp_pkt_decode_hdr(const void *buf, size_t len, struct mrcp_pkt *p);

/**
 * Encode a whole SACK (BTH, SETH, CC_STATE) to @dest_qp: the bytes
 * mrcp_pkt_init(MRCP_OP_SACK, dest_qp, seth->cack_psn) with these two headers
 * and mrcp_pkt_encode_hdr() would write (D11: BTH.PSN is cack_psn), without
 * building a struct mrcp_pkt. @return 48, or -ENOBUFS (nothing written) or
 * -EINVAL for a field out of range, as mrcp_pkt_encode_hdr() (possibly after
 * part of the packet was written).
 */
int mrcp_sack_encode(uint32_t dest_qp, const struct mrcp_seth *seth, const struct mrcp_cc_state *cc,
		     void *buf, size_t cap);

/** The BTH of a control packet (SACK, AETH): @opcode to @dest_qp with
 *  @psn, no flags, the default P_Key (D10), no TSETH (D11). */
static inline void mrcp_ctl_bth_write(struct mrcp_bth_wire *b, uint8_t opcode, uint32_t dest_qp, uint32_t psn)
{
	b->opcode = opcode;
	b->flags = 0;                              /* SE, MigReq, PadCnt, TVer 0 (D10) */
	mrcp_put_be16(b->pkey, MRCP_PKEY_DEFAULT); /* D10 */
	b->rsvd = 0;
	mrcp_put_be24(b->dest_qp, dest_qp);
	b->flags2 = 0;                             /* no TSETH on control packets */
	mrcp_put_be24(b->psn, psn);                /* D11 */
}

/**
 * The bytes of mrcp_sack_encode(@dest_qp, @seth, @cc) for fields in range,
 * without its checks: @dest_qp and seth->cack_psn 24 bits, seth->m at most
 * MRCP_VERDICT_ALWAYS_SKIP, cc_type and cc_flags 4 bits, cc->ooo_count 15,
 * cc->rcv_cwnd_pen 7 and cc->rcvd_bytes 24 (the caller's guarantee: the
 * engine's SACKs). Inline, so the caller's two structs are only names for
 * its values: once per SACK sent. @hdr holds 48 bytes. @return 48.
 */
static inline size_t mrcp_sack_hdr_write(uint8_t *hdr, uint32_t dest_qp, const struct mrcp_seth *seth,
					 const struct mrcp_cc_state *cc)
{
	struct mrcp_bth_wire *b = (struct mrcp_bth_wire *)hdr;
	struct mrcp_seth_wire *w = (struct mrcp_seth_wire *)(hdr + sizeof(*b));
	struct mrcp_cc_state_wire *c = (struct mrcp_cc_state_wire *)(hdr + sizeof(*b) + sizeof(*w));

	mrcp_ctl_bth_write(b, MRCP_OP_SACK, dest_qp, seth->cack_psn);
	w->prologue = 0;                            /* D14 */
	w->flags = (uint8_t)((unsigned)seth->m << 5 | (seth->pr ? 0x02u : 0)); /* m(6:5) pr(1) */
	mrcp_put_be16(w->ack_psn_offset, (uint16_t)seth->ack_psn_offset);
	mrcp_put_be32(w->entropy, seth->entropy);
	mrcp_put_be16(w->spdcid, seth->spdcid);     /* D15 */
	mrcp_put_be16(w->dpdcid, seth->dpdcid);
	w->svc_time = seth->svc_time;               /* D17 */
	mrcp_put_be24(w->cack_psn, seth->cack_psn);
	w->cc_type_flags = (uint8_t)(seth->cc_type << 4 | seth->cc_flags); /* D16 */
	w->mpr = seth->mpr;
	mrcp_put_be16(w->sack_offset, (uint16_t)seth->sack_offset); /* D27 */
	mrcp_put_be64(w->sack_bitmap, seth->sack_bitmap);           /* D26 */
	mrcp_put_be16(c->tx_timestamp, cc->tx_timestamp);
	mrcp_put_be16(c->ooo_count, cc->ooo_count);                 /* D18 */
	c->rc_pen = (uint8_t)((cc->r_c ? 0x80u : 0) | cc->rcv_cwnd_pen); /* D55 */
	mrcp_put_be24(c->rcvd_bytes, cc->rcvd_bytes);                /* D19 */
	return sizeof(*b) + sizeof(*w) + sizeof(*c);
}

/**
 * The bytes mrcp_pkt_init(MRCP_OP_ACK, @dest_qp, @psn) with AETH @syndrome,
 * @msn and mrcp_pkt_encode_hdr() would write, without their checks:
 * @syndrome is one of enum MRCP_AETH_*, @dest_qp and @psn 24 bits (the
 * engine's AETHs). Inline: once per message acknowledged. @hdr holds 16
 * bytes. @return 16.
 */
static inline size_t mrcp_ack_hdr_write(uint8_t *hdr, uint32_t dest_qp, uint32_t psn, uint8_t syndrome,
					uint16_t msn)
{
	struct mrcp_bth_wire *b = (struct mrcp_bth_wire *)hdr;
	struct mrcp_aeth_wire *a = (struct mrcp_aeth_wire *)(hdr + sizeof(*b));

	mrcp_ctl_bth_write(b, MRCP_OP_ACK, dest_qp, psn);
	a->syndrome = syndrome;
	mrcp_put_be24(a->msn, msn);                /* D21: 16 bits, zero-extended */
	return sizeof(*b) + sizeof(*a);
}

/* ---- the Write fast path ----------------------------------------------------
 * A message's packets differ only in opcode, PadCnt, AckReq, rtx, PSN, the
 * TSETH timestamp and the RETH VA. The requester writes one template per
 * message with mrcp_data_hdr_template() (a Write with ts = 1, and ImmDt when
 * the message has one) and patches a copy per packet.
 */
#define MRCP_DATA_HDR_LEN                                                      	(sizeof(struct mrcp_bth_wire) + sizeof(struct mrcp_meth_wire) +        	 sizeof(struct mrcp_tseth_wire) + sizeof(struct mrcp_reth_wire))
#define MRCP_DATA_HDR_MAX (MRCP_DATA_HDR_LEN + sizeof(struct mrcp_imm_wire))

#define MRCP_DATA_OFF_TSETH (sizeof(struct mrcp_bth_wire) + sizeof(struct mrcp_meth_wire))
#define MRCP_DATA_OFF_RETH (MRCP_DATA_OFF_TSETH + sizeof(struct mrcp_tseth_wire))

/**
 * Write a message's template: the bytes mrcp_pkt_init() of a WRITE_ONLY
 * (WRITE_ONLY_IMM when @has_imm) to @dest_qp with PSN 0, filled with the
 * METH, RETH (VA 0) and ImmDt fields given, and mrcp_pkt_encode_hdr() would
 * write. @hdr holds MRCP_DATA_HDR_MAX bytes; @dest_qp is 24 bits.
 * @return the header length.
 */
size_t mrcp_data_hdr_template(uint8_t *hdr, uint32_t dest_qp, uint16_t msn, uint16_t rq_msn,
			      uint32_t rkey, uint32_t dma_len, bool has_imm, uint32_t imm);

/**
 * Rewrite the per-packet fields of a Write header built from a template.
 * @hdr holds MRCP_DATA_HDR_MAX bytes (or MRCP_DATA_HDR_LEN when @opcode has
 * no ImmDt). @return the header length for @opcode. Inline: once per data
 * packet sent.
 */
static inline size_t mrcp_data_hdr_patch(uint8_t *hdr, uint8_t opcode, uint8_t pad_cnt, bool ack_req,
					 bool rtx, uint32_t psn, uint16_t ts, uint64_t va)
{
	struct mrcp_bth_wire *bth = (struct mrcp_bth_wire *)hdr;

	bth->opcode = opcode;
	bth->flags = (uint8_t)((bth->flags & 0xCF) | (pad_cnt & 3) << 4);  /* PadCnt 5:4 */
	bth->flags2 = (uint8_t)((bth->flags2 & 0x5F) | (ack_req ? 0x80 : 0) | (rtx ? 0x20 : 0)); /* D10 */
	mrcp_put_be24(bth->psn, psn);
	mrcp_put_be16(hdr + MRCP_DATA_OFF_TSETH + offsetof(struct mrcp_tseth_wire, tx_timestamp), ts);
	mrcp_put_be64(hdr + MRCP_DATA_OFF_RETH + offsetof(struct mrcp_reth_wire, va), va);
	return (opcode == MRCP_OP_WRITE_LAST_IMM || opcode == MRCP_OP_WRITE_ONLY_IMM) ? MRCP_DATA_HDR_MAX
										      : MRCP_DATA_HDR_LEN;
}

#endif
