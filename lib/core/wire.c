/* wire.c - the MRC 1.0 wire codec: one encode/decode pair per header and the
 * packet walker (BTH -> extension headers -> payload -> pad); it checks framing
 * only and knows nothing about QPs, windows, EVs or the ICRC. */
#include "mrcp_wire.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "mrcp_bytes.h"
#include "mrcp_seq.h"

/*
 * Sub-byte fields. Each mask is the field's value range after the shift; the
 * byte a field lives in is named by its struct mrcp_<hdr>_wire member.
 */
/* BTH.flags (IBTA): SE(7) MigReq(6) PadCnt(5:4) TVer(3:0) */
#define BTH_SE		0x80u
#define BTH_MIGREQ	0x40u
#define BTH_PAD_SHIFT	4
#define BTH_PAD_MASK	0x3u
#define BTH_TVER_MASK	0xFu
/* BTH.flags2 (D10): AckReq(7) rsvd(6) rtx(5) ts(4) rsvd(3:0) */
#define BTH_ACKREQ	0x80u
#define BTH_RTX		0x20u
#define BTH_TS		0x10u
/* tsr/ftype pair, TSETH bytes 2-3 and the last two bytes of PETH/ERTH/EETH:
 * tsr is bit 7 of the first byte, ftype bits 3:0 of the second. */
#define TS_TSR		0x80u
#define TS_FTYPE_MASK	0xFu
/* SETH.flags: prologue(7) m(6:5) rsvd(4:2) pr(1) rsvd(0) */
#define SETH_M_SHIFT	5
#define SETH_M_MASK	0x3u
#define SETH_PR		0x02u
/* cc_type(7:4) cc_flags(3:0), SETH and NETH (D16) */
#define CC_TYPE_SHIFT	4
#define CC_NIBBLE_MASK	0xFu
/* CC_STATE: rsvd(15) ooo_count(14:0) (D18); r_c(7) rcv_cwnd_pen(6:0) */
#define CC_OOO_MASK	0x7FFFu
#define CC_RC		0x80u
#define CC_PEN_MASK	0x7Fu
/* ERTH.flags: prologue(7) rsvd(6:2) op(1:0).
 * EETH.flags: prologue(7) rsvd(6) op(5:4) rsvd(3:0) (§3.6): a reserved bit on
 * each side of op, not ERTH's position. */
#define EP_OP_MASK	0x3u
#define EETH_OP_SHIFT	4

#define U24_MAX		0xFFFFFFu

/* The data-packet length rule in mrcp_pkt_decode() (payload + pad is a
 * multiple of 4 exactly when the whole packet is) relies on this. */
static_assert(sizeof(struct mrcp_bth_wire) % 4 == 0, "BTH keeps 4-byte alignment");
static_assert(sizeof(struct mrcp_meth_wire) % 4 == 0, "METH keeps 4-byte alignment");
static_assert(sizeof(struct mrcp_tseth_wire) % 4 == 0, "TSETH keeps 4-byte alignment");
static_assert(sizeof(struct mrcp_reth_wire) % 4 == 0, "RETH keeps 4-byte alignment");
static_assert(sizeof(struct mrcp_imm_wire) % 4 == 0, "ImmDt keeps 4-byte alignment");

/* ---- opcode and NACK tables (generated from the X-macros) ---------------- */

/* Header sets by opcode, for the range the MRC opcodes occupy (a table
 * lookup: this runs for every packet decoded and encoded). */
#define OP_LO MRCP_OP_WRITE_FIRST
#define OP_HI MRCP_OP_PROBE
static const uint16_t op_hdrs[OP_HI - OP_LO + 1] = {
#define X(n, v, h) [(v) - OP_LO] = (uint16_t)(h),
	MRCP_OPCODES(X)
#undef X
};
#define X(n, v, h) static_assert((v) >= OP_LO && (v) <= OP_HI, "opcode outside op_hdrs");
MRCP_OPCODES(X)
#undef X

uint32_t mrcp_opcode_hdrs(uint8_t opcode)
{
	if (opcode < OP_LO || opcode > OP_HI)
		return 0;
	return op_hdrs[opcode - OP_LO];
}

const char *mrcp_opcode_name(uint8_t opcode)
{
	switch (opcode) {
#define X(n, v, h)                                                             \
	case v:                                                                \
		return #n;
		MRCP_OPCODES(X)
#undef X
	}
	return NULL;
}

const char *mrcp_nack_code_name(uint8_t code)
{
	switch (code) {
#define X(n, v)                                                                \
	case v:                                                                \
		return #n;
		MRCP_NACK_CODES(X)
#undef X
	}
	return NULL; /* D22: a valid code this version does not name */
}

/* ---- shared field helpers ------------------------------------------------ */

static void tsr_ftype_put(uint8_t *tsr_byte, uint8_t *ftype_byte, bool tsr, uint8_t ftype)
{
	*tsr_byte = tsr ? TS_TSR : 0;           /* reserved bits 6:0 written 0 */
	*ftype_byte = ftype & TS_FTYPE_MASK;    /* reserved bits 7:4 written 0 */
}

static void tsr_ftype_get(const uint8_t *tsr_byte, const uint8_t *ftype_byte, bool *tsr,
			  uint8_t *ftype)
{
	*tsr = (*tsr_byte & TS_TSR) != 0;
	*ftype = *ftype_byte & TS_FTYPE_MASK;
}

static uint8_t cc_nibbles(uint8_t cc_type, uint8_t cc_flags)
{
	return (uint8_t)(cc_type << CC_TYPE_SHIFT | cc_flags);
}

static bool aeth_syndrome_known(uint8_t s)
{
	switch (s) {
	case MRCP_AETH_ACK:
	case MRCP_AETH_NAK_INVALID_REQ:
	case MRCP_AETH_NAK_REMOTE_ACCESS:
	case MRCP_AETH_NAK_REMOTE_OP:
		return true;
	}
	return false;
}

/* Number of pad bytes that bring @payload_len to a multiple of 4 (§2.1). */
static uint8_t pad_for(uint32_t payload_len)
{
	return (uint8_t)(-payload_len & 3u);
}

/*
 * Every encoder below checks its fields first (-EINVAL), then @cap (-ENOBUFS),
 * and writes nothing on error. Every decoder checks @len and the enumerated
 * fields before it writes to @h, so @h is untouched on error.
 */

/* ---- BTH ------------------------------------------------------------------ */

int mrcp_bth_encode(const struct mrcp_bth *h, void *buf, size_t cap)
{
	struct mrcp_bth_wire *w = buf;

	/* Only an MRC opcode and TVer 0 are encodable, so that anything this
	 * encoder writes is accepted by mrcp_bth_decode(). */
	if (mrcp_opcode_hdrs(h->opcode) == 0 || h->pad_cnt > BTH_PAD_MASK || h->tver != 0 ||
	    h->dest_qp > MRCP_QPN_MASK || h->psn > MRCP_PSN_MASK)
		return -EINVAL;
	if (cap < sizeof(*w))
		return -ENOBUFS;
	w->opcode = h->opcode;
	/* D10: SE and MigReq are sent as the caller set them (0 by mrcp_pkt_init) */
	w->flags = (uint8_t)((h->se ? BTH_SE : 0) | (h->migreq ? BTH_MIGREQ : 0) |
			     (unsigned)h->pad_cnt << BTH_PAD_SHIFT);
	mrcp_put_be16(w->pkey, h->pkey);
	w->rsvd = 0;
	mrcp_put_be24(w->dest_qp, h->dest_qp);
	w->flags2 = (uint8_t)((h->ack_req ? BTH_ACKREQ : 0) | (h->rtx ? BTH_RTX : 0) |
			      (h->ts ? BTH_TS : 0)); /* D10 */
	mrcp_put_be24(w->psn, h->psn);
	return (int)sizeof(*w);
}

/* SETH fields of @w (the length was checked): inline in the SACK decode */
static inline __attribute__((always_inline)) void seth_get(const struct mrcp_seth_wire *w, struct mrcp_seth *h)
{
	uint8_t m;

	/* D14: prologue ignored. §3.4: verdict 3 is treated as NONE. */
	m = (uint8_t)(w->flags >> SETH_M_SHIFT & SETH_M_MASK);
	h->m = m > MRCP_VERDICT_ALWAYS_SKIP ? MRCP_VERDICT_NONE : m;
	h->pr = (w->flags & SETH_PR) != 0;
	h->ack_psn_offset = (int16_t)mrcp_get_be16(w->ack_psn_offset);
	h->entropy = mrcp_get_be32(w->entropy);
	h->spdcid = mrcp_get_be16(w->spdcid);
	h->dpdcid = mrcp_get_be16(w->dpdcid);
	h->svc_time = w->svc_time;
	h->cack_psn = mrcp_get_be24(w->cack_psn);
	h->cc_type = (uint8_t)(w->cc_type_flags >> CC_TYPE_SHIFT); /* D16: any value decodes */
	h->cc_flags = w->cc_type_flags & CC_NIBBLE_MASK;
	h->mpr = w->mpr;
	h->sack_offset = (int16_t)mrcp_get_be16(w->sack_offset);
	h->sack_bitmap = mrcp_get_be64(w->sack_bitmap);
}

/* CC_STATE fields of @w (the length was checked) */
static inline __attribute__((always_inline)) void cc_state_get(const struct mrcp_cc_state_wire *w, struct mrcp_cc_state *h)
{
	h->tx_timestamp = mrcp_get_be16(w->tx_timestamp);
	h->ooo_count = mrcp_get_be16(w->ooo_count) & CC_OOO_MASK;
	h->r_c = (w->rc_pen & CC_RC) != 0;
	h->rcv_cwnd_pen = w->rc_pen & CC_PEN_MASK;
	h->rcvd_bytes = mrcp_get_be24(w->rcvd_bytes);
}

/* The fields of a BTH whose opcode and TVer were checked. */
static inline __attribute__((always_inline)) void bth_fill(const struct mrcp_bth_wire *w, struct mrcp_bth *h)
{
	/* three words: opcode flags pkey | rsvd dest_qp | flags2 psn */
	const uint8_t *b = (const uint8_t *)w;
	uint32_t w0 = mrcp_get_be32(b), w1 = mrcp_get_be32(b + 4), w2 = mrcp_get_be32(b + 8);
	uint8_t flags = (uint8_t)(w0 >> 16), flags2 = (uint8_t)(w2 >> 24);

	h->opcode = (uint8_t)(w0 >> 24);
	h->se = (flags & BTH_SE) != 0;
	h->migreq = (flags & BTH_MIGREQ) != 0;
	h->pad_cnt = (uint8_t)(flags >> BTH_PAD_SHIFT & BTH_PAD_MASK);
	h->tver = 0;
	h->pkey = (uint16_t)w0; /* D10: 0xFFFF is sent; not checked here */
	h->dest_qp = w1 & MRCP_QPN_MASK;
	h->ack_req = (flags2 & BTH_ACKREQ) != 0;
	h->rtx = (flags2 & BTH_RTX) != 0;
	h->ts = (flags2 & BTH_TS) != 0;
	h->psn = w2 & MRCP_PSN_MASK;
}

int mrcp_bth_decode(const void *buf, size_t len, struct mrcp_bth *h)
{
	const struct mrcp_bth_wire *w = buf;

	if (len < sizeof(*w))
		return -EBADMSG;
	/* §3.1: any other opcode is dropped (and counted by the caller) */
	if (mrcp_opcode_hdrs(w->opcode) == 0)
		return -EBADMSG;
	if ((w->flags & BTH_TVER_MASK) != 0)
		return -EBADMSG;
	bth_fill(w, h);
	return (int)sizeof(*w);
}

/* ---- METH ----------------------------------------------------------------- */

int mrcp_meth_encode(const struct mrcp_meth *h, void *buf, size_t cap)
{
	struct mrcp_meth_wire *w = buf;

	if (cap < sizeof(*w))
		return -ENOBUFS;
	mrcp_put_be16(w->rq_msn, h->rq_msn); /* D12 */
	mrcp_put_be16(w->msn, h->msn);
	return (int)sizeof(*w);
}

int mrcp_meth_decode(const void *buf, size_t len, struct mrcp_meth *h)
{
	const struct mrcp_meth_wire *w = buf;

	if (len < sizeof(*w))
		return -EBADMSG;
	h->rq_msn = mrcp_get_be16(w->rq_msn);
	h->msn = mrcp_get_be16(w->msn);
	return (int)sizeof(*w);
}

/* ---- TSETH ---------------------------------------------------------------- */

int mrcp_tseth_encode(const struct mrcp_tseth *h, void *buf, size_t cap)
{
	struct mrcp_tseth_wire *w = buf;

	if (h->ftype > TS_FTYPE_MASK)
		return -EINVAL;
	if (cap < sizeof(*w))
		return -ENOBUFS;
	mrcp_put_be16(w->tx_timestamp, h->tx_timestamp); /* D13 */
	tsr_ftype_put(&w->tsr_rsvd, &w->rsvd_ftype, h->tsr, h->ftype);
	return (int)sizeof(*w);
}

int mrcp_tseth_decode(const void *buf, size_t len, struct mrcp_tseth *h)
{
	const struct mrcp_tseth_wire *w = buf;

	if (len < sizeof(*w))
		return -EBADMSG;
	h->tx_timestamp = mrcp_get_be16(w->tx_timestamp);
	/* ftype is returned as seen: every 4-bit value is well formed, and the
	 * engine decides what to do with a format it does not use. */
	tsr_ftype_get(&w->tsr_rsvd, &w->rsvd_ftype, &h->tsr, &h->ftype);
	return (int)sizeof(*w);
}

/* ---- RETH ----------------------------------------------------------------- */

int mrcp_reth_encode(const struct mrcp_reth *h, void *buf, size_t cap)
{
	struct mrcp_reth_wire *w = buf;

	if (cap < sizeof(*w))
		return -ENOBUFS;
	mrcp_put_be64(w->va, h->va);
	mrcp_put_be32(w->rkey, h->rkey);
	mrcp_put_be32(w->dma_len, h->dma_len);
	return (int)sizeof(*w);
}

int mrcp_reth_decode(const void *buf, size_t len, struct mrcp_reth *h)
{
	const struct mrcp_reth_wire *w = buf;

	if (len < sizeof(*w))
		return -EBADMSG;
	h->va = mrcp_get_be64(w->va);
	h->rkey = mrcp_get_be32(w->rkey);
	h->dma_len = mrcp_get_be32(w->dma_len);
	return (int)sizeof(*w);
}

/* ---- ImmDt ---------------------------------------------------------------- */

int mrcp_imm_encode(uint32_t imm, void *buf, size_t cap)
{
	struct mrcp_imm_wire *w = buf;

	if (cap < sizeof(*w))
		return -ENOBUFS;
	mrcp_put_be32(w->imm, imm);
	return (int)sizeof(*w);
}

int mrcp_imm_decode(const void *buf, size_t len, uint32_t *imm)
{
	const struct mrcp_imm_wire *w = buf;

	if (len < sizeof(*w))
		return -EBADMSG;
	*imm = mrcp_get_be32(w->imm);
	return (int)sizeof(*w);
}

/* ---- AETH ----------------------------------------------------------------- */

int mrcp_aeth_encode(const struct mrcp_aeth *h, void *buf, size_t cap)
{
	struct mrcp_aeth_wire *w = buf;

	if (!aeth_syndrome_known(h->syndrome) || h->msn > U24_MAX) /* D21 */
		return -EINVAL;
	if (cap < sizeof(*w))
		return -ENOBUFS;
	w->syndrome = h->syndrome;
	mrcp_put_be24(w->msn, h->msn);
	return (int)sizeof(*w);
}

int mrcp_aeth_decode(const void *buf, size_t len, struct mrcp_aeth *h)
{
	const struct mrcp_aeth_wire *w = buf;

	if (len < sizeof(*w))
		return -EBADMSG;
	if (!aeth_syndrome_known(w->syndrome)) /* D21 */
		return -EBADMSG;
	h->syndrome = w->syndrome;
	/* D21 sends a 16-bit MSN zero-extended; the upper byte is returned as
	 * seen, not rejected, and the engine compares the low 16 bits. */
	h->msn = mrcp_get_be24(w->msn);
	return (int)sizeof(*w);
}

/* ---- SETH ----------------------------------------------------------------- */

int mrcp_seth_encode(const struct mrcp_seth *h, void *buf, size_t cap)
{
	struct mrcp_seth_wire *w = buf;

	/* m = 3 is not encodable: it would decode as NONE, not as itself */
	if (h->m > MRCP_VERDICT_ALWAYS_SKIP || h->cack_psn > MRCP_PSN_MASK ||
	    h->cc_type > CC_NIBBLE_MASK || h->cc_flags > CC_NIBBLE_MASK)
		return -EINVAL;
	if (cap < sizeof(*w))
		return -ENOBUFS;
	w->prologue = 0; /* D14 */
	w->flags = (uint8_t)((unsigned)h->m << SETH_M_SHIFT | (h->pr ? SETH_PR : 0));
	mrcp_put_be16(w->ack_psn_offset, (uint16_t)h->ack_psn_offset);
	mrcp_put_be32(w->entropy, h->entropy);
	mrcp_put_be16(w->spdcid, h->spdcid); /* D15 */
	mrcp_put_be16(w->dpdcid, h->dpdcid);
	w->svc_time = h->svc_time; /* D17 */
	mrcp_put_be24(w->cack_psn, h->cack_psn);
	w->cc_type_flags = cc_nibbles(h->cc_type, h->cc_flags); /* D16 */
	w->mpr = h->mpr;
	mrcp_put_be16(w->sack_offset, (uint16_t)h->sack_offset); /* D27 */
	mrcp_put_be64(w->sack_bitmap, h->sack_bitmap); /* D26: bit i = LSB-based */
	return (int)sizeof(*w);
}

int mrcp_seth_decode(const void *buf, size_t len, struct mrcp_seth *h)
{
	if (len < sizeof(struct mrcp_seth_wire))
		return -EBADMSG;
	seth_get(buf, h);
	return (int)sizeof(struct mrcp_seth_wire);
}

/* ---- CC_STATE ------------------------------------------------------------- */

int mrcp_cc_state_encode(const struct mrcp_cc_state *h, void *buf, size_t cap)
{
	struct mrcp_cc_state_wire *w = buf;

	if (h->ooo_count > CC_OOO_MASK || h->rcv_cwnd_pen > CC_PEN_MASK ||
	    h->rcvd_bytes > U24_MAX)
		return -EINVAL;
	if (cap < sizeof(*w))
		return -ENOBUFS;
	mrcp_put_be16(w->tx_timestamp, h->tx_timestamp);
	mrcp_put_be16(w->ooo_count, h->ooo_count); /* D18; bit 15 reserved, 0 */
	w->rc_pen = (uint8_t)((h->r_c ? CC_RC : 0) | h->rcv_cwnd_pen); /* D55 */
	mrcp_put_be24(w->rcvd_bytes, h->rcvd_bytes); /* D19 */
	return (int)sizeof(*w);
}

int mrcp_cc_state_decode(const void *buf, size_t len, struct mrcp_cc_state *h)
{
	if (len < sizeof(struct mrcp_cc_state_wire))
		return -EBADMSG;
	cc_state_get(buf, h);
	return (int)sizeof(struct mrcp_cc_state_wire);
}

/* ---- NETH ----------------------------------------------------------------- */

int mrcp_neth_encode(const struct mrcp_neth *h, void *buf, size_t cap)
{
	struct mrcp_neth_wire *w = buf;

	if (h->nack_psn > MRCP_PSN_MASK || h->cc_type > CC_NIBBLE_MASK ||
	    h->cc_flags > CC_NIBBLE_MASK)
		return -EINVAL;
	if (cap < sizeof(*w))
		return -ENOBUFS;
	memset(w->prologue, 0, sizeof(w->prologue)); /* D14 */
	w->nack_code = h->nack_code;
	w->vendor_info = h->vendor_info;
	mrcp_put_be32(w->entropy, h->entropy);
	mrcp_put_be16(w->spdcid, h->spdcid); /* D15 */
	mrcp_put_be16(w->dpdcid, h->dpdcid);
	w->rsvd = 0;
	mrcp_put_be24(w->nack_psn, h->nack_psn);
	w->cc_type_flags = cc_nibbles(h->cc_type, h->cc_flags); /* D16 */
	w->rsvd2 = 0;
	mrcp_put_be16(w->tx_timestamp, h->tx_timestamp);
	return (int)sizeof(*w);
}

int mrcp_neth_decode(const void *buf, size_t len, struct mrcp_neth *h)
{
	const struct mrcp_neth_wire *w = buf;

	if (len < sizeof(*w))
		return -EBADMSG;
	h->nack_code = w->nack_code; /* D22: unknown codes decode; the engine counts them */
	h->vendor_info = w->vendor_info;
	h->entropy = mrcp_get_be32(w->entropy);
	h->spdcid = mrcp_get_be16(w->spdcid);
	h->dpdcid = mrcp_get_be16(w->dpdcid);
	h->nack_psn = mrcp_get_be24(w->nack_psn);
	h->cc_type = (uint8_t)(w->cc_type_flags >> CC_TYPE_SHIFT);
	h->cc_flags = w->cc_type_flags & CC_NIBBLE_MASK;
	h->tx_timestamp = mrcp_get_be16(w->tx_timestamp);
	return (int)sizeof(*w);
}

/* ---- PETH ----------------------------------------------------------------- */

int mrcp_peth_encode(const struct mrcp_peth *h, void *buf, size_t cap)
{
	struct mrcp_peth_wire *w = buf;

	if (h->ftype > TS_FTYPE_MASK)
		return -EINVAL;
	if (cap < sizeof(*w))
		return -ENOBUFS;
	memset(w->prologue, 0, sizeof(w->prologue)); /* D14 */
	w->rsvd = 0;
	w->vendor_info = 0; /* §3.6: 0; not in struct mrcp_peth, ignored on receive */
	mrcp_put_be16(w->probe_id, h->probe_id); /* D37 */
	memset(w->rsvd2, 0, sizeof(w->rsvd2));
	mrcp_put_be16(w->spdcid, h->spdcid); /* D15 */
	mrcp_put_be16(w->dpdcid, h->dpdcid);
	mrcp_put_be16(w->tx_timestamp, h->tx_timestamp);
	tsr_ftype_put(&w->tsr_ftype[0], &w->tsr_ftype[1], h->tsr, h->ftype);
	return (int)sizeof(*w);
}

int mrcp_peth_decode(const void *buf, size_t len, struct mrcp_peth *h)
{
	const struct mrcp_peth_wire *w = buf;

	if (len < sizeof(*w))
		return -EBADMSG;
	h->probe_id = mrcp_get_be16(w->probe_id);
	h->spdcid = mrcp_get_be16(w->spdcid);
	h->dpdcid = mrcp_get_be16(w->dpdcid);
	h->tx_timestamp = mrcp_get_be16(w->tx_timestamp);
	tsr_ftype_get(&w->tsr_ftype[0], &w->tsr_ftype[1], &h->tsr, &h->ftype);
	return (int)sizeof(*w);
}

/* ---- ERTH ----------------------------------------------------------------- */

int mrcp_erth_encode(const struct mrcp_erth *h, void *buf, size_t cap)
{
	struct mrcp_erth_wire *w = buf;

	if (h->op > MRCP_EP_EV_PROBE || h->ftype > TS_FTYPE_MASK)
		return -EINVAL;
	if (cap < sizeof(*w))
		return -ENOBUFS;
	w->prologue = 0; /* D14 */
	w->flags = h->op;
	w->rsvd = 0;
	w->vendor_info = 0; /* not in struct mrcp_erth, ignored on receive */
	mrcp_put_be32(w->port_status_mask, h->port_status_mask); /* D49 */
	memset(w->rsvd2, 0, sizeof(w->rsvd2));
	mrcp_put_be16(w->tx_timestamp, h->tx_timestamp);
	tsr_ftype_put(&w->tsr_ftype[0], &w->tsr_ftype[1], h->tsr, h->ftype);
	return (int)sizeof(*w);
}

int mrcp_erth_decode(const void *buf, size_t len, struct mrcp_erth *h)
{
	const struct mrcp_erth_wire *w = buf;
	uint8_t op;

	if (len < sizeof(*w))
		return -EBADMSG;
	op = w->flags & EP_OP_MASK;
	if (op > MRCP_EP_EV_PROBE) /* §3.6: ops 2 and 3 are undefined */
		return -EBADMSG;
	h->op = op;
	h->port_status_mask = mrcp_get_be32(w->port_status_mask);
	h->tx_timestamp = mrcp_get_be16(w->tx_timestamp);
	tsr_ftype_get(&w->tsr_ftype[0], &w->tsr_ftype[1], &h->tsr, &h->ftype);
	return (int)sizeof(*w);
}

/* ---- EETH (layout D20) ---------------------------------------------------- */

int mrcp_eeth_encode(const struct mrcp_eeth *h, void *buf, size_t cap)
{
	struct mrcp_eeth_wire *w = buf;

	if (h->op > MRCP_EP_EV_PROBE || h->ftype > TS_FTYPE_MASK)
		return -EINVAL;
	if (cap < sizeof(*w))
		return -ENOBUFS;
	w->prologue = 0; /* D14 */
	w->flags = (uint8_t)(h->op << EETH_OP_SHIFT);
	w->rx_port = h->rx_port;
	w->status = h->status;
	mrcp_put_be32(w->port_status_mask, h->port_status_mask);
	mrcp_put_be16(w->svc_time, h->svc_time);
	memset(w->rsvd, 0, sizeof(w->rsvd));
	mrcp_put_be16(w->tx_timestamp, h->tx_timestamp);
	tsr_ftype_put(&w->tsr_ftype[0], &w->tsr_ftype[1], h->tsr, h->ftype);
	memset(w->rsvd2, 0, sizeof(w->rsvd2));
	return (int)sizeof(*w);
}

int mrcp_eeth_decode(const void *buf, size_t len, struct mrcp_eeth *h)
{
	const struct mrcp_eeth_wire *w = buf;
	uint8_t op;

	if (len < sizeof(*w))
		return -EBADMSG;
	op = w->flags >> EETH_OP_SHIFT & EP_OP_MASK;
	if (op > MRCP_EP_EV_PROBE) /* §3.6: ops 2 and 3 are undefined */
		return -EBADMSG;
	h->op = op;
	h->rx_port = w->rx_port;
	h->status = w->status;
	h->port_status_mask = mrcp_get_be32(w->port_status_mask);
	h->svc_time = mrcp_get_be16(w->svc_time);
	h->tx_timestamp = mrcp_get_be16(w->tx_timestamp);
	tsr_ftype_get(&w->tsr_ftype[0], &w->tsr_ftype[1], &h->tsr, &h->ftype);
	return (int)sizeof(*w);
}

/* ---- packets -------------------------------------------------------------- */

int mrcp_pkt_init(struct mrcp_pkt *p, uint8_t opcode, uint32_t dest_qp, uint32_t psn)
{
	uint32_t hdrs = mrcp_opcode_hdrs(opcode);

	if (hdrs == 0 || dest_qp > MRCP_QPN_MASK || psn > MRCP_PSN_MASK)
		return -EINVAL;
	memset(p, 0, sizeof(*p));
	p->bth.opcode = opcode;
	p->bth.pkey = MRCP_PKEY_DEFAULT; /* D10 */
	p->bth.dest_qp = dest_qp;
	p->bth.psn = psn;
	if (mrcp_opcode_is_data(opcode)) {
		/* D13: mrcd always sends TSETH on data packets */
		p->bth.ts = true;
		hdrs |= MRCP_HDR_TSETH;
		p->tseth.ftype = MRCP_TSETH_FTYPE;
	}
	/* the only valid starting points, so a packet straight from init
	 * encodes: an ACK (D21) and ftype 0x1 (§3.6) */
	if (hdrs & MRCP_HDR_AETH)
		p->aeth.syndrome = MRCP_AETH_ACK;
	if (hdrs & MRCP_HDR_PETH)
		p->peth.ftype = MRCP_TSETH_FTYPE;
	if (hdrs & MRCP_HDR_ERTH)
		p->erth.ftype = MRCP_TSETH_FTYPE;
	if (hdrs & MRCP_HDR_EETH)
		p->eeth.ftype = MRCP_TSETH_FTYPE;
	p->hdrs = hdrs;
	return 0;
}

size_t mrcp_pkt_hdr_len(const struct mrcp_pkt *p)
{
	size_t n = sizeof(struct mrcp_bth_wire);

	if (p->hdrs & MRCP_HDR_METH)
		n += sizeof(struct mrcp_meth_wire);
	if (p->hdrs & MRCP_HDR_TSETH)
		n += sizeof(struct mrcp_tseth_wire);
	if (p->hdrs & MRCP_HDR_RETH)
		n += sizeof(struct mrcp_reth_wire);
	if (p->hdrs & MRCP_HDR_IMM)
		n += sizeof(struct mrcp_imm_wire);
	if (p->hdrs & MRCP_HDR_AETH)
		n += sizeof(struct mrcp_aeth_wire);
	if (p->hdrs & MRCP_HDR_SETH)
		n += sizeof(struct mrcp_seth_wire) + sizeof(struct mrcp_cc_state_wire);
	if (p->hdrs & MRCP_HDR_NETH)
		n += sizeof(struct mrcp_neth_wire);
	if (p->hdrs & MRCP_HDR_PETH)
		n += sizeof(struct mrcp_peth_wire);
	if (p->hdrs & MRCP_HDR_ERTH)
		n += sizeof(struct mrcp_erth_wire);
	if (p->hdrs & MRCP_HDR_EETH)
		n += sizeof(struct mrcp_eeth_wire);
	return n;
}

/* The packet-level rules of mrcp_pkt_encode_hdr(): the header set is exactly
 * the opcode's (plus TSETH iff bth.ts, Writes only) and the payload fits. */
static int pkt_check(const struct mrcp_pkt *p)
{
	uint32_t want = mrcp_opcode_hdrs(p->bth.opcode);
	bool data = mrcp_opcode_is_data(p->bth.opcode);

	if (want == 0)
		return -EINVAL;
	if (p->bth.ts) {
		if (!data) /* §3.1: only Writes carry TSETH */
			return -EINVAL;
		want |= MRCP_HDR_TSETH;
	}
	if (p->hdrs != want)
		return -EINVAL;
	if (data ? p->payload_len > MRCP_PAYLOAD_MAX : p->payload_len != 0)
		return -EINVAL;
	return 0;
}

/* Append one header at b + off, or return its negative errno. */
#define PUT_HDR(expr)                                                          \
	do {                                                                   \
		int rc_ = (expr);                                              \
		if (rc_ < 0)                                                   \
			return rc_;                                            \
		off += (size_t)rc_;                                            \
	} while (0)

int mrcp_pkt_encode_hdr(const struct mrcp_pkt *p, void *buf, size_t cap)
{
	uint8_t *b = buf;
	struct mrcp_bth bth;
	size_t off = 0;
	int rc;

	rc = pkt_check(p);
	if (rc < 0)
		return rc;
	if (cap < mrcp_pkt_hdr_len(p))
		return -ENOBUFS;
	/* Past this point only a field out of its range (-EINVAL) can fail,
	 * possibly after earlier headers were written. */
	bth = p->bth;
	bth.pad_cnt = pad_for(p->payload_len);
	PUT_HDR(mrcp_bth_encode(&bth, b, cap));
	if (p->hdrs & MRCP_HDR_METH)
		PUT_HDR(mrcp_meth_encode(&p->meth, b + off, cap - off));
	if (p->hdrs & MRCP_HDR_TSETH)
		PUT_HDR(mrcp_tseth_encode(&p->tseth, b + off, cap - off));
	if (p->hdrs & MRCP_HDR_RETH)
		PUT_HDR(mrcp_reth_encode(&p->reth, b + off, cap - off));
	if (p->hdrs & MRCP_HDR_IMM)
		PUT_HDR(mrcp_imm_encode(p->imm, b + off, cap - off));
	if (p->hdrs & MRCP_HDR_AETH)
		PUT_HDR(mrcp_aeth_encode(&p->aeth, b + off, cap - off));
	if (p->hdrs & MRCP_HDR_SETH) {
		PUT_HDR(mrcp_seth_encode(&p->seth, b + off, cap - off));
		PUT_HDR(mrcp_cc_state_encode(&p->cc, b + off, cap - off));
	}
	if (p->hdrs & MRCP_HDR_NETH)
		PUT_HDR(mrcp_neth_encode(&p->neth, b + off, cap - off));
	if (p->hdrs & MRCP_HDR_PETH)
		PUT_HDR(mrcp_peth_encode(&p->peth, b + off, cap - off));
	if (p->hdrs & MRCP_HDR_ERTH)
		PUT_HDR(mrcp_erth_encode(&p->erth, b + off, cap - off));
	if (p->hdrs & MRCP_HDR_EETH)
		PUT_HDR(mrcp_eeth_encode(&p->eeth, b + off, cap - off));
	return (int)off;
}

size_t mrcp_pkt_len(const struct mrcp_pkt *p)
{
	return mrcp_pkt_hdr_len(p) + p->payload_len + pad_for(p->payload_len);
}

int mrcp_pkt_encode(const struct mrcp_pkt *p, void *buf, size_t cap)
{
	uint8_t *b = buf;
	size_t total;
	int rc;

	rc = pkt_check(p);
	if (rc < 0)
		return rc;
	if (p->payload_len != 0 && p->payload == NULL)
		return -EINVAL;
	total = mrcp_pkt_len(p);
	if (cap < total)
		return -ENOBUFS;
	rc = mrcp_pkt_encode_hdr(p, b, cap);
	if (rc < 0)
		return rc;
	/* memmove: the caller may have staged the payload inside @buf already */
	if (p->payload_len != 0)
		memmove(b + rc, p->payload, p->payload_len);
	memset(b + (size_t)rc + p->payload_len, 0, pad_for(p->payload_len));
	return (int)total;
}

/* Take one header at b + off, or return its negative errno. */
#define GET_HDR(expr)                                                          \
	do {                                                                   \
		int rc_ = (expr);                                              \
		if (rc_ < 0)                                                   \
			return rc_;                                            \
		off += (size_t)rc_;                                            \
	} while (0)

/* Decode BTH and the extension headers its opcode and ts flag call for into
 * a zeroed @p; on success store their total length in *@hdr_len. */
static int pkt_decode_headers(const uint8_t *b, size_t len, struct mrcp_pkt *p, size_t *hdr_len)
{
	size_t off = 0;
	uint32_t hdrs;

	memset(p, 0, sizeof(*p));
	GET_HDR(mrcp_bth_decode(b, len, &p->bth)); /* rejects unknown opcodes, TVer */
	hdrs = mrcp_opcode_hdrs(p->bth.opcode);
	if (p->bth.ts) {
		if (!mrcp_opcode_is_data(p->bth.opcode)) /* §3.1: only Writes carry TSETH */
			return -EBADMSG;
		hdrs |= MRCP_HDR_TSETH; /* §3.1, D13: TSETH present iff ts */
	}
	p->hdrs = hdrs;
	/* Stack order of §3.1: METH [TSETH] RETH [ImmDt], or one control header. */
	if (hdrs & MRCP_HDR_METH)
		GET_HDR(mrcp_meth_decode(b + off, len - off, &p->meth));
	if (hdrs & MRCP_HDR_TSETH)
		GET_HDR(mrcp_tseth_decode(b + off, len - off, &p->tseth));
	if (hdrs & MRCP_HDR_RETH)
		GET_HDR(mrcp_reth_decode(b + off, len - off, &p->reth));
	if (hdrs & MRCP_HDR_IMM)
		GET_HDR(mrcp_imm_decode(b + off, len - off, &p->imm));
	if (hdrs & MRCP_HDR_AETH)
		GET_HDR(mrcp_aeth_decode(b + off, len - off, &p->aeth));
	if (hdrs & MRCP_HDR_SETH) {
		GET_HDR(mrcp_seth_decode(b + off, len - off, &p->seth));
		GET_HDR(mrcp_cc_state_decode(b + off, len - off, &p->cc));
	}
	if (hdrs & MRCP_HDR_NETH)
		GET_HDR(mrcp_neth_decode(b + off, len - off, &p->neth));
	if (hdrs & MRCP_HDR_PETH)
		GET_HDR(mrcp_peth_decode(b + off, len - off, &p->peth));
	if (hdrs & MRCP_HDR_ERTH)
		GET_HDR(mrcp_erth_decode(b + off, len - off, &p->erth));
	if (hdrs & MRCP_HDR_EETH)
		GET_HDR(mrcp_eeth_decode(b + off, len - off, &p->eeth));
	*hdr_len = off;
	return 0;
}

int mrcp_pkt_decode(const void *buf, size_t len, struct mrcp_pkt *p)
{
	const uint8_t *b = buf;
	size_t off, rest;
	int rc;

	rc = pkt_decode_headers(b, len, p, &off);
	if (rc < 0)
		return rc;
	rest = len - off;
	if (mrcp_opcode_is_data(p->bth.opcode)) {
		/* §2.1: payload + PadCnt pad bytes is a multiple of 4, and since
		 * every header is too, so is the packet (static_asserts above). */
		if (rest % 4 != 0 || rest < p->bth.pad_cnt ||
		    rest - p->bth.pad_cnt > MRCP_PAYLOAD_MAX) /* D3 */
			return -EBADMSG;
		p->payload_len = (uint32_t)(rest - p->bth.pad_cnt);
	} else if (rest != 0 || p->bth.pad_cnt != 0) {
		/* A control packet is its headers only: trailing bytes, or a
		 * PadCnt announcing pad that cannot be there, are malformed. */
		return -EBADMSG;
	}
	/* Never NULL, even when empty, so a zero-length memcpy from it is defined. */
	p->payload = b + off;
	return 0;
}

int mrcp_pkt_decode_hdr(const void *buf, size_t len, struct mrcp_pkt *p)
{
	const uint8_t *b = buf;
	size_t off;
	int rc;

	rc = pkt_decode_headers(b, len, p, &off);
	if (rc < 0)
		return rc;
	/* §4.6: the switch cut the payload, so its length and PadCnt no longer
	 * agree; whatever is left is handed back as is. */
	if (len - off > UINT32_MAX)
		return -EBADMSG;
	p->payload = b + off;
	p->payload_len = (uint32_t)(len - off);
	return 0;
}

/* ---- the receive fast path ---------------------------------------------------- */

#define DATA_BASE_LEN (sizeof(struct mrcp_bth_wire) + sizeof(struct mrcp_meth_wire) + \
		       sizeof(struct mrcp_reth_wire))
#define SACK_LEN (sizeof(struct mrcp_bth_wire) + sizeof(struct mrcp_seth_wire) + \
		  sizeof(struct mrcp_cc_state_wire))

/* A Write's framing, the rules of pkt_decode_headers() and mrcp_pkt_decode()
 * for the one header stack METH [TSETH] RETH [ImmDt]: on success the header
 * length in *@off and the payload length (pad excluded) in *@plen. */
static inline int write_framing(const struct mrcp_bth_wire *w, size_t len, size_t *off, uint32_t *plen)
{
	uint8_t pad = (uint8_t)(w->flags >> BTH_PAD_SHIFT & BTH_PAD_MASK);
	size_t n = DATA_BASE_LEN, rest;

	if ((w->flags & BTH_TVER_MASK) != 0)
		return -EBADMSG;
	if (w->flags2 & BTH_TS)
		n += sizeof(struct mrcp_tseth_wire);
	if (op_hdrs[w->opcode - OP_LO] & MRCP_HDR_IMM)
		n += sizeof(struct mrcp_imm_wire);
	if (len < n)
		return -EBADMSG;
	rest = len - n;
	if (rest % 4 != 0 || rest < pad || rest - pad > MRCP_PAYLOAD_MAX) /* as mrcp_pkt_decode() */
		return -EBADMSG;
	*off = n;
	*plen = (uint32_t)(rest - pad);
	return 0;
}

/* A Write into the generic form (out of line: the engine's Writes take
 * mrcp_write_decode(), and the SACK path below stays lean). */
static __attribute__((noinline)) int decode_write(const uint8_t *b, size_t len, struct mrcp_pkt *p)
{
	const struct mrcp_bth_wire *w = (const struct mrcp_bth_wire *)b;
	bool ts = (w->flags2 & BTH_TS) != 0;
	uint32_t hdrs = op_hdrs[w->opcode - OP_LO];
	const uint8_t *h = b + sizeof(*w) + sizeof(struct mrcp_meth_wire);
	size_t off;
	uint32_t plen;

	if (write_framing(w, len, &off, &plen) != 0)
		return -EBADMSG;
	bth_fill(w, &p->bth);
	p->hdrs = hdrs | (ts ? MRCP_HDR_TSETH : 0);
	p->meth.rq_msn = mrcp_get_be16(b + sizeof(*w));
	p->meth.msn = mrcp_get_be16(b + sizeof(*w) + 2);
	if (ts) {
		p->tseth.tx_timestamp = mrcp_get_be16(h);
		tsr_ftype_get(h + 2, h + 3, &p->tseth.tsr, &p->tseth.ftype);
		h += sizeof(struct mrcp_tseth_wire);
	} else {
		memset(&p->tseth, 0, sizeof(p->tseth));
	}
	p->reth.va = mrcp_get_be64(h);
	p->reth.rkey = mrcp_get_be32(h + 8);
	p->reth.dma_len = mrcp_get_be32(h + 12);
	h += sizeof(struct mrcp_reth_wire);
	p->imm = (hdrs & MRCP_HDR_IMM) ? mrcp_get_be32(h) : 0;
	p->payload = b + off;
	p->payload_len = plen;
	return 0;
}

int mrcp_write_decode(const void *buf, size_t len, struct mrcp_write *v)
{
	const uint8_t *b = buf, *h;
	const struct mrcp_bth_wire *w = buf;
	size_t off;
	uint32_t plen, w2;

	if (len < sizeof(*w) || !mrcp_opcode_is_data(w->opcode) || write_framing(w, len, &off, &plen) != 0)
		return -EBADMSG;
	w2 = mrcp_get_be32(b + 8); /* flags2 | PSN */
	v->dest_qp = mrcp_get_be32(b + 4) & MRCP_QPN_MASK;
	v->psn = w2 & MRCP_PSN_MASK;
	v->opcode = w->opcode;
	v->ack_req = (w2 >> 24 & BTH_ACKREQ) != 0;
	v->rtx = (w2 >> 24 & BTH_RTX) != 0;
	v->ts = (w2 >> 24 & BTH_TS) != 0;
	v->rq_msn = mrcp_get_be16(b + sizeof(*w));
	v->msn = mrcp_get_be16(b + sizeof(*w) + 2);
	h = b + sizeof(*w) + sizeof(struct mrcp_meth_wire);
	v->tx_timestamp = 0;
	if (v->ts) {
		v->tx_timestamp = mrcp_get_be16(h);
		h += sizeof(struct mrcp_tseth_wire);
	}
	v->va = mrcp_get_be64(h);
	v->rkey = mrcp_get_be32(h + 8);
	v->dma_len = mrcp_get_be32(h + 12);
	v->imm = (op_hdrs[w->opcode - OP_LO] & MRCP_HDR_IMM) ? mrcp_get_be32(h + 16) : 0;
	v->payload = b + off;
	v->payload_len = plen;
	return 0;
}

void mrcp_write_from_pkt(const struct mrcp_pkt *p, struct mrcp_write *v)
{
	v->dest_qp = p->bth.dest_qp;
	v->psn = p->bth.psn;
	v->opcode = p->bth.opcode;
	v->ack_req = p->bth.ack_req;
	v->rtx = p->bth.rtx;
	v->ts = (p->hdrs & MRCP_HDR_TSETH) != 0;
	v->tx_timestamp = v->ts ? p->tseth.tx_timestamp : 0;
	v->rq_msn = p->meth.rq_msn;
	v->msn = p->meth.msn;
	v->va = p->reth.va;
	v->rkey = p->reth.rkey;
	v->dma_len = p->reth.dma_len;
	v->imm = (p->hdrs & MRCP_HDR_IMM) ? p->imm : 0;
	v->payload = p->payload;
	v->payload_len = p->payload_len;
}

int mrcp_pkt_decode_rx(const void *buf, size_t len, struct mrcp_pkt *p)
{
	const uint8_t *b = buf;
	const struct mrcp_bth_wire *w = buf;

	if (len < sizeof(*w))
		return -EBADMSG;
	if (mrcp_opcode_is_data(w->opcode))
		return decode_write(b, len, p);
	if (w->opcode == MRCP_OP_SACK) {
		/* a SACK is exactly BTH SETH CC_STATE, with ts, PadCnt, TVer 0 */
		if (len != SACK_LEN || (w->flags & (BTH_PAD_MASK << BTH_PAD_SHIFT | BTH_TVER_MASK)) != 0 ||
		    (w->flags2 & BTH_TS) != 0)
			return -EBADMSG;
		bth_fill(w, &p->bth);
		p->hdrs = MRCP_HDR_SETH;
		memset(&p->meth, 0, sizeof(p->meth));
		memset(&p->tseth, 0, sizeof(p->tseth));
		memset(&p->reth, 0, sizeof(p->reth));
		p->imm = 0;
		seth_get((const struct mrcp_seth_wire *)(b + sizeof(*w)), &p->seth);
		cc_state_get((const struct mrcp_cc_state_wire *)(b + sizeof(*w) + sizeof(struct mrcp_seth_wire)),
			     &p->cc);
		p->payload = b + len;
		p->payload_len = 0;
		return 0;
	}
	return mrcp_pkt_decode(buf, len, p);
}

/* ---- the SACK fast path ------------------------------------------------------- */

int mrcp_sack_encode(uint32_t dest_qp, const struct mrcp_seth *seth, const struct mrcp_cc_state *cc,
		     void *buf, size_t cap)
{
	uint8_t *b = buf;
	struct mrcp_bth_wire *w = buf;
	int rc;

	if (dest_qp > MRCP_QPN_MASK)
		return -EINVAL;
	if (cap < SACK_LEN)
		return -ENOBUFS;
	rc = mrcp_seth_encode(seth, b + sizeof(*w), cap - sizeof(*w));
	if (rc < 0)
		return rc;
	rc = mrcp_cc_state_encode(cc, b + sizeof(*w) + sizeof(struct mrcp_seth_wire),
				  cap - sizeof(*w) - sizeof(struct mrcp_seth_wire));
	if (rc < 0)
		return rc;
	mrcp_ctl_bth_write(w, MRCP_OP_SACK, dest_qp, seth->cack_psn);
	return (int)SACK_LEN;
}

/* ---- the Write template ------------------------------------------------------- */

size_t mrcp_data_hdr_template(uint8_t *hdr, uint32_t dest_qp, uint16_t msn, uint16_t rq_msn,
			      uint32_t rkey, uint32_t dma_len, bool has_imm, uint32_t imm)
{
	struct mrcp_bth_wire *w = (struct mrcp_bth_wire *)hdr;
	uint8_t *h = hdr + MRCP_DATA_OFF_TSETH;

	w->opcode = has_imm ? MRCP_OP_WRITE_ONLY_IMM : MRCP_OP_WRITE_ONLY;
	w->flags = 0;                             /* SE, MigReq, PadCnt, TVer 0 (D10) */
	mrcp_put_be16(w->pkey, MRCP_PKEY_DEFAULT); /* D10 */
	w->rsvd = 0;
	mrcp_put_be24(w->dest_qp, dest_qp);
	w->flags2 = BTH_TS;                       /* D13: TSETH always */
	mrcp_put_be24(w->psn, 0);
	mrcp_put_be16(hdr + sizeof(*w), rq_msn);  /* METH (D12) */
	mrcp_put_be16(hdr + sizeof(*w) + 2, msn);
	mrcp_put_be16(h, 0);                      /* TSETH: timestamp, tsr 0, ftype */
	tsr_ftype_put(h + 2, h + 3, false, MRCP_TSETH_FTYPE);
	h = hdr + MRCP_DATA_OFF_RETH;
	mrcp_put_be64(h, 0);                      /* RETH */
	mrcp_put_be32(h + 8, rkey);
	mrcp_put_be32(h + 12, dma_len);
	if (!has_imm)
		return MRCP_DATA_HDR_LEN;
	mrcp_put_be32(h + sizeof(struct mrcp_reth_wire), imm);
	return MRCP_DATA_HDR_MAX;
}
