/* test_wire.c - unit tests for lib/core/wire.c, in the order of its functions:
 * the opcode and NACK tables, one block per header codec (known bytes, bit
 * positions, reserved bits, truncation, range checks), then the packet codec
 * (every kind, every truncation, every rejection rule). Every expected byte is
 * written by hand from the §3 tables of docs/protocol.md, never produced by
 * the code under test. Truncated inputs sit in exact-size heap blocks, so a
 * sanitizer build catches any read past the end. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mrcp_test.h"
#include "mrcp_wire.h"

/* ---- helpers -------------------------------------------------------------- */

static bool same_bth(const struct mrcp_bth *a, const struct mrcp_bth *b)
{
	return a->opcode == b->opcode && a->se == b->se && a->migreq == b->migreq &&
	       a->pad_cnt == b->pad_cnt && a->tver == b->tver && a->pkey == b->pkey &&
	       a->dest_qp == b->dest_qp && a->ack_req == b->ack_req && a->rtx == b->rtx &&
	       a->ts == b->ts && a->psn == b->psn;
}

static bool same_meth(const struct mrcp_meth *a, const struct mrcp_meth *b)
{
	return a->rq_msn == b->rq_msn && a->msn == b->msn;
}

static bool same_tseth(const struct mrcp_tseth *a, const struct mrcp_tseth *b)
{
	return a->tx_timestamp == b->tx_timestamp && a->tsr == b->tsr && a->ftype == b->ftype;
}

static bool same_reth(const struct mrcp_reth *a, const struct mrcp_reth *b)
{
	return a->va == b->va && a->rkey == b->rkey && a->dma_len == b->dma_len;
}

static bool same_aeth(const struct mrcp_aeth *a, const struct mrcp_aeth *b)
{
	return a->syndrome == b->syndrome && a->msn == b->msn;
}

static bool same_seth(const struct mrcp_seth *a, const struct mrcp_seth *b)
{
	return a->m == b->m && a->pr == b->pr && a->ack_psn_offset == b->ack_psn_offset &&
	       a->entropy == b->entropy && a->spdcid == b->spdcid && a->dpdcid == b->dpdcid &&
	       a->svc_time == b->svc_time && a->cack_psn == b->cack_psn &&
	       a->cc_type == b->cc_type && a->cc_flags == b->cc_flags && a->mpr == b->mpr &&
	       a->sack_offset == b->sack_offset && a->sack_bitmap == b->sack_bitmap;
}

static bool same_cc_state(const struct mrcp_cc_state *a, const struct mrcp_cc_state *b)
{
	return a->tx_timestamp == b->tx_timestamp && a->ooo_count == b->ooo_count &&
	       a->r_c == b->r_c && a->rcv_cwnd_pen == b->rcv_cwnd_pen &&
	       a->rcvd_bytes == b->rcvd_bytes;
}

static bool same_neth(const struct mrcp_neth *a, const struct mrcp_neth *b)
{
	return a->nack_code == b->nack_code && a->vendor_info == b->vendor_info &&
	       a->entropy == b->entropy && a->spdcid == b->spdcid && a->dpdcid == b->dpdcid &&
	       a->nack_psn == b->nack_psn && a->cc_type == b->cc_type &&
	       a->cc_flags == b->cc_flags && a->tx_timestamp == b->tx_timestamp;
}

static bool same_peth(const struct mrcp_peth *a, const struct mrcp_peth *b)
{
	return a->probe_id == b->probe_id && a->spdcid == b->spdcid && a->dpdcid == b->dpdcid &&
	       a->tx_timestamp == b->tx_timestamp && a->tsr == b->tsr && a->ftype == b->ftype;
}

static bool same_erth(const struct mrcp_erth *a, const struct mrcp_erth *b)
{
	return a->op == b->op && a->port_status_mask == b->port_status_mask &&
	       a->tx_timestamp == b->tx_timestamp && a->tsr == b->tsr && a->ftype == b->ftype;
}

static bool same_eeth(const struct mrcp_eeth *a, const struct mrcp_eeth *b)
{
	return a->op == b->op && a->rx_port == b->rx_port && a->status == b->status &&
	       a->port_status_mask == b->port_status_mask && a->svc_time == b->svc_time &&
	       a->tx_timestamp == b->tx_timestamp && a->tsr == b->tsr && a->ftype == b->ftype;
}

static bool same_imm(const uint32_t *a, const uint32_t *b)
{
	return *a == *b;
}

/* Semantic equality of two packets: the headers present, and payload bytes. */
static bool same_pkt(const struct mrcp_pkt *a, const struct mrcp_pkt *b)
{
	uint32_t h = a->hdrs;

	if (!same_bth(&a->bth, &b->bth) || a->hdrs != b->hdrs || a->payload_len != b->payload_len)
		return false;
	if ((h & MRCP_HDR_METH) && !same_meth(&a->meth, &b->meth))
		return false;
	if ((h & MRCP_HDR_TSETH) && !same_tseth(&a->tseth, &b->tseth))
		return false;
	if ((h & MRCP_HDR_RETH) && !same_reth(&a->reth, &b->reth))
		return false;
	if ((h & MRCP_HDR_IMM) && a->imm != b->imm)
		return false;
	if ((h & MRCP_HDR_AETH) && !same_aeth(&a->aeth, &b->aeth))
		return false;
	if ((h & MRCP_HDR_SETH) &&
	    (!same_seth(&a->seth, &b->seth) || !same_cc_state(&a->cc, &b->cc)))
		return false;
	if ((h & MRCP_HDR_NETH) && !same_neth(&a->neth, &b->neth))
		return false;
	if ((h & MRCP_HDR_PETH) && !same_peth(&a->peth, &b->peth))
		return false;
	if ((h & MRCP_HDR_ERTH) && !same_erth(&a->erth, &b->erth))
		return false;
	if ((h & MRCP_HDR_EETH) && !same_eeth(&a->eeth, &b->eeth))
		return false;
	return a->payload_len == 0 || memcmp(a->payload, b->payload, a->payload_len) == 0;
}

/* A heap copy of exactly @n bytes, so reading past it trips ASan. */
static uint8_t *dup_exact(const void *src, size_t n)
{
	uint8_t *p = malloc(n);

	if (n != 0) {
		ASSERT_TRUE(p != NULL);
		memcpy(p, src, n);
	}
	return p;
}

/* Any host header, correctly aligned for every type. */
union any_hdr {
	struct mrcp_bth bth;
	struct mrcp_meth meth;
	struct mrcp_tseth tseth;
	struct mrcp_reth reth;
	uint32_t imm;
	struct mrcp_aeth aeth;
	struct mrcp_seth seth;
	struct mrcp_cc_state cc_state;
	struct mrcp_neth neth;
	struct mrcp_peth peth;
	struct mrcp_erth erth;
	struct mrcp_eeth eeth;
};

/* One header codec seen through void pointers, so the checks below are
 * written once and run for every header. */
struct hdr_desc {
	const char *name;
	size_t len;                       /* wire bytes */
	int (*enc)(const void *h, void *buf, size_t cap);
	int (*dec)(const void *buf, size_t len, void *h);
	bool (*same)(const void *a, const void *b);
	const void *sample;               /* every field non-trivial */
	const uint8_t *bytes;             /* its encoding, by hand */
	const void *sample_max;           /* every field at its largest legal value */
	const uint8_t *bytes_max;         /* its encoding, by hand */
	const uint8_t *rsvd;              /* reserved bits (ignored on receive), by hand */
};

#define HDR_WRAP(hdr)                                                          \
	static int enc_##hdr(const void *h, void *buf, size_t cap)             \
	{                                                                      \
		return mrcp_##hdr##_encode(h, buf, cap);                       \
	}                                                                      \
	static int dec_##hdr(const void *buf, size_t len, void *h)             \
	{                                                                      \
		return mrcp_##hdr##_decode(buf, len, h);                       \
	}                                                                      \
	static bool same_##hdr##_v(const void *a, const void *b)               \
	{                                                                      \
		return same_##hdr(a, b);                                       \
	}
HDR_WRAP(bth)
HDR_WRAP(meth)
HDR_WRAP(tseth)
HDR_WRAP(reth)
HDR_WRAP(aeth)
HDR_WRAP(seth)
HDR_WRAP(cc_state)
HDR_WRAP(neth)
HDR_WRAP(peth)
HDR_WRAP(erth)
HDR_WRAP(eeth)
#undef HDR_WRAP

static int enc_imm(const void *h, void *buf, size_t cap)
{
	return mrcp_imm_encode(*(const uint32_t *)h, buf, cap);
}

static int dec_imm(const void *buf, size_t len, void *h)
{
	return mrcp_imm_decode(buf, len, h);
}

static bool same_imm_v(const void *a, const void *b)
{
	return same_imm(a, b);
}

#define DESC(hdr, sz) .name = #hdr, .len = (sz), .enc = enc_##hdr, .dec = dec_##hdr, \
		      .same = same_##hdr##_v

/* Encode @h: exactly @exp (d->len bytes), nothing written past it. */
static void check_encodes_to(const struct hdr_desc *d, const void *h, const uint8_t *exp)
{
	uint8_t buf[64];

	memset(buf, 0xA5, sizeof(buf));
	ASSERT_EQ(d->enc(h, buf, d->len), d->len);
	ASSERT_MEMEQ(buf, exp, d->len);
	for (size_t i = d->len; i < sizeof(buf); i++)
		ASSERT_EQ(buf[i], 0xA5);
}

/* Decode @bytes (exact size, then with trailing bytes): @h, d->len consumed. */
static void check_decodes_to(const struct hdr_desc *d, const uint8_t *bytes, const void *h)
{
	uint8_t *exact = dup_exact(bytes, d->len);
	uint8_t longer[64];
	union any_hdr got;

	memset(&got, 0, sizeof(got));
	ASSERT_EQ(d->dec(exact, d->len, &got), d->len);
	if (!d->same(&got, h))
		mrcp_test_fail(__FILE__, __LINE__, "%s: decode differs from the expected header",
			       d->name);
	memcpy(longer, bytes, d->len);
	memset(longer + d->len, 0xFF, sizeof(longer) - d->len);
	memset(&got, 0, sizeof(got));
	ASSERT_EQ(d->dec(longer, sizeof(longer), &got), d->len);
	ASSERT_TRUE(d->same(&got, h));
	free(exact);
}

/* Both directions at once. */
static void check_both_ways(const struct hdr_desc *d, const void *h, const uint8_t *exp)
{
	check_encodes_to(d, h, exp);
	check_decodes_to(d, exp, h);
}

/* A bit-position check: @h differs from the all-default header by one field,
 * and encodes to @base with only byte @off replaced by @val. */
static void check_one_byte(const struct hdr_desc *d, const void *h, const uint8_t *base,
			   size_t off, uint8_t val)
{
	uint8_t exp[64];

	memcpy(exp, base, d->len);
	exp[off] = val;
	check_both_ways(d, h, exp);
}

/* Every cap below the header size: -ENOBUFS and nothing written. */
static void check_encode_nobufs(const struct hdr_desc *d)
{
	for (size_t cap = 0; cap < d->len; cap++) {
		uint8_t *buf = malloc(cap + 1);

		ASSERT_TRUE(buf != NULL);
		memset(buf, 0xA5, cap + 1);
		ASSERT_EQ(d->enc(d->sample, buf, cap), -ENOBUFS);
		for (size_t i = 0; i <= cap; i++)
			ASSERT_EQ(buf[i], 0xA5);
		free(buf);
	}
}

/* Every length below the header size: -EBADMSG and @h untouched. */
static void check_decode_truncated(const struct hdr_desc *d)
{
	for (size_t len = 0; len < d->len; len++) {
		uint8_t *buf = dup_exact(d->bytes, len);
		union any_hdr got, before;

		memset(&got, 0x5A, sizeof(got));
		memcpy(&before, &got, sizeof(got));
		if (d->dec(buf, len, &got) != -EBADMSG)
			mrcp_test_fail(__FILE__, __LINE__, "%s: %zu of %zu bytes not rejected",
				       d->name, len, d->len);
		ASSERT_MEMEQ(&got, &before, sizeof(got));
		free(buf);
	}
}

/* Flip every bit of the sample's encoding, one at a time: a reserved bit
 * changes nothing, any other bit changes the decoded header or is rejected. */
static void check_every_bit(const struct hdr_desc *d)
{
	for (size_t i = 0; i < d->len; i++) {
		for (unsigned bit = 0; bit < 8; bit++) {
			uint8_t m = (uint8_t)(1u << bit), buf[64];
			bool rsvd = d->rsvd != NULL && (d->rsvd[i] & m) != 0;
			union any_hdr got;
			int rc;

			memcpy(buf, d->bytes, d->len);
			buf[i] ^= m;
			memset(&got, 0, sizeof(got));
			rc = d->dec(buf, d->len, &got);
			if (rsvd && (rc != (int)d->len || !d->same(&got, d->sample)))
				mrcp_test_fail(__FILE__, __LINE__,
					       "%s: reserved byte %zu bit %u changed the decode",
					       d->name, i, bit);
			if (!rsvd && rc == (int)d->len && d->same(&got, d->sample))
				mrcp_test_fail(__FILE__, __LINE__,
					       "%s: byte %zu bit %u is no field but not reserved",
					       d->name, i, bit);
		}
	}
}

/* @h is out of range: -EINVAL, nothing written, even with room to spare. */
static void check_encode_einval(const struct hdr_desc *d, const void *h)
{
	uint8_t buf[64];

	memset(buf, 0xA5, sizeof(buf));
	ASSERT_EQ(d->enc(h, buf, sizeof(buf)), -EINVAL);
	for (size_t i = 0; i < sizeof(buf); i++)
		ASSERT_EQ(buf[i], 0xA5);
}

/* @bytes (d->len) holds an undefined enumerated value: -EBADMSG. */
static void check_decode_ebadmsg(const struct hdr_desc *d, const uint8_t *bytes)
{
	uint8_t *buf = dup_exact(bytes, d->len);
	union any_hdr got;

	ASSERT_EQ(d->dec(buf, d->len, &got), -EBADMSG);
	free(buf);
}

/* ---- per-header samples, bytes written by hand from §3 ---------------- */

static const uint8_t zeros[64];

static const struct mrcp_bth bth_sample = {
	.opcode = MRCP_OP_WRITE_LAST_IMM, .se = true, .pad_cnt = 2, .pkey = 0xFFFF,
	.dest_qp = 0x123456, .ack_req = true, .ts = true, .psn = 0xABCDEF,
};
static const uint8_t bth_bytes[12] = {
	0xC9, 0xA0, 0xFF, 0xFF, 0x00, 0x12, 0x34, 0x56, 0x90, 0xAB, 0xCD, 0xEF,
};
static const struct mrcp_bth bth_max = {
	.opcode = MRCP_OP_PROBE, .se = true, .migreq = true, .pad_cnt = 3, .pkey = 0xFFFF,
	.dest_qp = 0xFFFFFF, .ack_req = true, .rtx = true, .ts = true, .psn = 0xFFFFFF,
};
static const uint8_t bth_max_bytes[12] = {
	0xDE, 0xF0, 0xFF, 0xFF, 0x00, 0xFF, 0xFF, 0xFF, 0xB0, 0xFF, 0xFF, 0xFF,
};
/* byte 4 (ICRC-masked) and byte 8 bits 6, 3:0 (D10) */
static const uint8_t bth_rsvd[12] = { [4] = 0xFF, [8] = 0x4F };
/* all fields 0 but a valid opcode */
static const uint8_t bth_base[12] = { 0xCA };
static const struct hdr_desc D_BTH = {
	DESC(bth, 12), .sample = &bth_sample, .bytes = bth_bytes, .sample_max = &bth_max,
	.bytes_max = bth_max_bytes, .rsvd = bth_rsvd,
};

static const struct mrcp_meth meth_sample = { .rq_msn = 0x0102, .msn = 0xFEDC };
static const uint8_t meth_bytes[4] = { 0x01, 0x02, 0xFE, 0xDC };
static const struct hdr_desc D_METH = { DESC(meth, 4), .sample = &meth_sample, .bytes = meth_bytes };

static const struct mrcp_tseth tseth_sample = { .tx_timestamp = 0xBEEF, .tsr = true, .ftype = 1 };
static const uint8_t tseth_bytes[4] = { 0xBE, 0xEF, 0x80, 0x01 };
static const struct mrcp_tseth tseth_max = { .tx_timestamp = 0xFFFF, .tsr = true, .ftype = 0xF };
static const uint8_t tseth_max_bytes[4] = { 0xFF, 0xFF, 0x80, 0x0F };
static const uint8_t tseth_rsvd[4] = { [2] = 0x7F, [3] = 0xF0 };
static const struct hdr_desc D_TSETH = {
	DESC(tseth, 4), .sample = &tseth_sample, .bytes = tseth_bytes,
	.sample_max = &tseth_max, .bytes_max = tseth_max_bytes, .rsvd = tseth_rsvd,
};

static const struct mrcp_reth reth_sample = {
	.va = 0x0123456789ABCDEFull, .rkey = 0xDEADBEEF, .dma_len = 0x00012345,
};
static const uint8_t reth_bytes[16] = {
	0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF,
	0xDE, 0xAD, 0xBE, 0xEF, 0x00, 0x01, 0x23, 0x45,
};
static const struct hdr_desc D_RETH = { DESC(reth, 16), .sample = &reth_sample, .bytes = reth_bytes };

static const uint32_t imm_sample = 0xCAFEF00D;
static const uint8_t imm_bytes[4] = { 0xCA, 0xFE, 0xF0, 0x0D };
static const struct hdr_desc D_IMM = { DESC(imm, 4), .sample = &imm_sample, .bytes = imm_bytes };

static const struct mrcp_aeth aeth_sample = {
	.syndrome = MRCP_AETH_NAK_REMOTE_ACCESS, .msn = 0x00BEEF,
};
static const uint8_t aeth_bytes[4] = { 0x62, 0x00, 0xBE, 0xEF };
static const struct hdr_desc D_AETH = { DESC(aeth, 4), .sample = &aeth_sample, .bytes = aeth_bytes };

static const struct mrcp_seth seth_sample = {
	.m = MRCP_VERDICT_ALWAYS_SKIP, .pr = true, .ack_psn_offset = -3,
	.entropy = 0x89ABCDEF, .spdcid = 0x1234, .dpdcid = 0x5678, .svc_time = 0x9A,
	.cack_psn = 0x00FFFE, .cc_type = 0x3, .cc_flags = 0x5, .mpr = 8, .sack_offset = 1,
	.sack_bitmap = 0x0123456789ABCDEFull,
};
static const uint8_t seth_bytes[28] = {
	0x00, 0x42, 0xFF, 0xFD, 0x89, 0xAB, 0xCD, 0xEF, 0x12, 0x34, 0x56, 0x78,
	0x9A, 0x00, 0xFF, 0xFE, 0x35, 0x08, 0x00, 0x01,
	0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF,
};
static const struct mrcp_seth seth_max = {
	.m = MRCP_VERDICT_ALWAYS_SKIP, .pr = true, .ack_psn_offset = -1,
	.entropy = 0xFFFFFFFF, .spdcid = 0xFFFF, .dpdcid = 0xFFFF, .svc_time = 0xFF,
	.cack_psn = 0xFFFFFF, .cc_type = 0xF, .cc_flags = 0xF, .mpr = 0xFF, .sack_offset = -1,
	.sack_bitmap = ~0ull,
};
static const uint8_t seth_max_bytes[28] = {
	0x00, 0x42, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
	0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
	0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
};
/* byte 0 and byte 1 bit 7: prologue (D14); byte 1 bits 4:2 and 0 */
static const uint8_t seth_rsvd[28] = { [0] = 0xFF, [1] = 0x9D };
static const struct hdr_desc D_SETH = {
	DESC(seth, 28), .sample = &seth_sample, .bytes = seth_bytes, .sample_max = &seth_max,
	.bytes_max = seth_max_bytes, .rsvd = seth_rsvd,
};

static const struct mrcp_cc_state cc_sample = {
	.tx_timestamp = 0xBEEF, .ooo_count = 0x1234, .r_c = true, .rcv_cwnd_pen = 0x55,
	.rcvd_bytes = 0xABCDEF,
};
static const uint8_t cc_bytes[8] = { 0xBE, 0xEF, 0x12, 0x34, 0xD5, 0xAB, 0xCD, 0xEF };
static const struct mrcp_cc_state cc_max = {
	.tx_timestamp = 0xFFFF, .ooo_count = 0x7FFF, .r_c = true, .rcv_cwnd_pen = 0x7F,
	.rcvd_bytes = 0xFFFFFF,
};
static const uint8_t cc_max_bytes[8] = { 0xFF, 0xFF, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF };
static const uint8_t cc_rsvd[8] = { [2] = 0x80 }; /* D18 */
static const struct hdr_desc D_CC = {
	DESC(cc_state, 8), .sample = &cc_sample, .bytes = cc_bytes, .sample_max = &cc_max,
	.bytes_max = cc_max_bytes, .rsvd = cc_rsvd,
};

static const struct mrcp_neth neth_sample = {
	.nack_code = MRCP_NACK_PSN_OOR_WINDOW, .vendor_info = 0x77, .entropy = 0x01020304,
	.spdcid = 0x1111, .dpdcid = 0x2222, .nack_psn = 0x345678, .cc_type = 0xA,
	.cc_flags = 0x5, .tx_timestamp = 0x9999,
};
static const uint8_t neth_bytes[20] = {
	0x00, 0x00, 0x0B, 0x77, 0x01, 0x02, 0x03, 0x04, 0x11, 0x11, 0x22, 0x22,
	0x00, 0x34, 0x56, 0x78, 0xA5, 0x00, 0x99, 0x99,
};
static const struct mrcp_neth neth_max = {
	.nack_code = 0xFF, .vendor_info = 0xFF, .entropy = 0xFFFFFFFF, .spdcid = 0xFFFF,
	.dpdcid = 0xFFFF, .nack_psn = 0xFFFFFF, .cc_type = 0xF, .cc_flags = 0xF,
	.tx_timestamp = 0xFFFF,
};
static const uint8_t neth_max_bytes[20] = {
	0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
	0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0xFF, 0xFF,
};
static const uint8_t neth_rsvd[20] = { [0] = 0xFF, [1] = 0xFF, [12] = 0xFF, [17] = 0xFF };
static const struct hdr_desc D_NETH = {
	DESC(neth, 20), .sample = &neth_sample, .bytes = neth_bytes, .sample_max = &neth_max,
	.bytes_max = neth_max_bytes, .rsvd = neth_rsvd,
};

static const struct mrcp_peth peth_sample = {
	.probe_id = 0x4242, .spdcid = 0x0A0B, .dpdcid = 0x0C0D, .tx_timestamp = 0x1357,
	.tsr = true, .ftype = 1,
};
static const uint8_t peth_bytes[16] = {
	0x00, 0x00, 0x00, 0x00, 0x42, 0x42, 0x00, 0x00,
	0x0A, 0x0B, 0x0C, 0x0D, 0x13, 0x57, 0x80, 0x01,
};
static const struct mrcp_peth peth_max = {
	.probe_id = 0xFFFF, .spdcid = 0xFFFF, .dpdcid = 0xFFFF, .tx_timestamp = 0xFFFF,
	.tsr = true, .ftype = 0xF,
};
static const uint8_t peth_max_bytes[16] = {
	0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0x00, 0x00,
	0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x80, 0x0F,
};
/* prologue+flags (D14), reserved, vendor_info (not decoded), reserved, and
 * the reserved bits of the tsr/ftype pair */
static const uint8_t peth_rsvd[16] = {
	[0] = 0xFF, [1] = 0xFF, [2] = 0xFF, [3] = 0xFF, [6] = 0xFF, [7] = 0xFF,
	[14] = 0x7F, [15] = 0xF0,
};
static const struct hdr_desc D_PETH = {
	DESC(peth, 16), .sample = &peth_sample, .bytes = peth_bytes, .sample_max = &peth_max,
	.bytes_max = peth_max_bytes, .rsvd = peth_rsvd,
};

static const struct mrcp_erth erth_sample = {
	.op = MRCP_EP_EV_PROBE, .port_status_mask = 0x8000000F, .tx_timestamp = 0x2468,
	.tsr = false, .ftype = 1,
};
static const uint8_t erth_bytes[16] = {
	0x00, 0x01, 0x00, 0x00, 0x80, 0x00, 0x00, 0x0F,
	0x00, 0x00, 0x00, 0x00, 0x24, 0x68, 0x00, 0x01,
};
static const struct mrcp_erth erth_max = {
	.op = MRCP_EP_EV_PROBE, .port_status_mask = 0xFFFFFFFF, .tx_timestamp = 0xFFFF,
	.tsr = true, .ftype = 0xF,
};
static const uint8_t erth_max_bytes[16] = {
	0x00, 0x01, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF,
	0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0x80, 0x0F,
};
static const uint8_t erth_rsvd[16] = {
	[0] = 0xFF, [1] = 0xFC, [2] = 0xFF, [3] = 0xFF,
	[8] = 0xFF, [9] = 0xFF, [10] = 0xFF, [11] = 0xFF, [14] = 0x7F, [15] = 0xF0,
};
static const struct hdr_desc D_ERTH = {
	DESC(erth, 16), .sample = &erth_sample, .bytes = erth_bytes, .sample_max = &erth_max,
	.bytes_max = erth_max_bytes, .rsvd = erth_rsvd,
};

static const struct mrcp_eeth eeth_sample = {
	.op = MRCP_EP_EV_PROBE, .rx_port = 3, .status = 0, .port_status_mask = 0x0000000B,
	.svc_time = 0x0102, .tx_timestamp = 0x2468, .tsr = true, .ftype = 1,
};
static const uint8_t eeth_bytes[36] = {
	0x00, 0x10, 0x03, 0x00, 0x00, 0x00, 0x00, 0x0B, 0x01, 0x02,
	[28] = 0x24, [29] = 0x68, [30] = 0x80, [31] = 0x01,
};
static const struct mrcp_eeth eeth_max = {
	.op = MRCP_EP_EV_PROBE, .rx_port = 0xFF, .status = 0xFF, .port_status_mask = 0xFFFFFFFF,
	.svc_time = 0xFFFF, .tx_timestamp = 0xFFFF, .tsr = true, .ftype = 0xF,
};
static const uint8_t eeth_max_bytes[36] = {
	0x00, 0x10, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
	[28] = 0xFF, [29] = 0xFF, [30] = 0x80, [31] = 0x0F,
};
/* byte 1: prologue bit 7, reserved bit 6 and bits 3:0 around op (§3.6) */
static const uint8_t eeth_rsvd[36] = {
	[0] = 0xFF, [1] = 0xCF,
	[10] = 0xFF, [11] = 0xFF, [12] = 0xFF, [13] = 0xFF, [14] = 0xFF, [15] = 0xFF,
	[16] = 0xFF, [17] = 0xFF, [18] = 0xFF, [19] = 0xFF, [20] = 0xFF, [21] = 0xFF,
	[22] = 0xFF, [23] = 0xFF, [24] = 0xFF, [25] = 0xFF, [26] = 0xFF, [27] = 0xFF,
	[30] = 0x7F, [31] = 0xF0, [32] = 0xFF, [33] = 0xFF, [34] = 0xFF, [35] = 0xFF,
};
static const struct hdr_desc D_EETH = {
	DESC(eeth, 36), .sample = &eeth_sample, .bytes = eeth_bytes, .sample_max = &eeth_max,
	.bytes_max = eeth_max_bytes, .rsvd = eeth_rsvd,
};

/* ---- opcode and NACK tables ----------------------------------------------- */

/* §3.1, by hand. */
static const struct {
	uint8_t op;
	uint32_t hdrs;
	const char *name;
} op_table[] = {
	{ 0xC6, MRCP_HDR_METH | MRCP_HDR_RETH, "WRITE_FIRST" },
	{ 0xC7, MRCP_HDR_METH | MRCP_HDR_RETH, "WRITE_MIDDLE" },
	{ 0xC8, MRCP_HDR_METH | MRCP_HDR_RETH, "WRITE_LAST" },
	{ 0xC9, MRCP_HDR_METH | MRCP_HDR_RETH | MRCP_HDR_IMM, "WRITE_LAST_IMM" },
	{ 0xCA, MRCP_HDR_METH | MRCP_HDR_RETH, "WRITE_ONLY" },
	{ 0xCB, MRCP_HDR_METH | MRCP_HDR_RETH | MRCP_HDR_IMM, "WRITE_ONLY_IMM" },
	{ 0xD1, MRCP_HDR_AETH, "ACK" },
	{ 0xD8, MRCP_HDR_ERTH, "EP_REQUEST" },
	{ 0xD9, MRCP_HDR_EETH, "EP_RESPONSE" },
	{ 0xDC, MRCP_HDR_SETH, "SACK" },
	{ 0xDD, MRCP_HDR_NETH, "NACK" },
	{ 0xDE, MRCP_HDR_PETH, "PROBE" },
};
#define N_OPS (sizeof(op_table) / sizeof(op_table[0]))

static int op_index(unsigned v)
{
	for (size_t i = 0; i < N_OPS; i++)
		if (op_table[i].op == v)
			return (int)i;
	return -1;
}

TEST(wire, opcode_hdrs__matches_spec_table_and_is_0_elsewhere)
{
	for (unsigned v = 0; v < 256; v++) {
		int i = op_index(v);

		ASSERT_EQ(mrcp_opcode_hdrs((uint8_t)v), i < 0 ? 0 : op_table[i].hdrs);
	}
}

TEST(wire, opcode_name__names_every_opcode_and_null_elsewhere)
{
	for (unsigned v = 0; v < 256; v++) {
		int i = op_index(v);

		if (i < 0)
			ASSERT_TRUE(mrcp_opcode_name((uint8_t)v) == NULL);
		else
			ASSERT_STREQ(mrcp_opcode_name((uint8_t)v), op_table[i].name);
	}
}

TEST(wire, opcode_is_data__only_the_six_writes)
{
	for (unsigned v = 0; v < 256; v++)
		ASSERT_EQ(mrcp_opcode_is_data((uint8_t)v), v >= 0xC6 && v <= 0xCB);
}

TEST(wire, nack_code_name__names_spec_codes_and_null_elsewhere)
{
	static const struct {
		uint8_t code;
		const char *name;
	} codes[] = { /* §3.7 */
		{ 0x01, "TRIMMED" }, { 0x02, "TRIMMED_LASTHOP" }, { 0x06, "NO_BITMAP" },
		{ 0x07, "NO_PKT_BUFFER" }, { 0x0A, "NO_RESOURCE" }, { 0x0B, "PSN_OOR_WINDOW" },
		{ 0x19, "UNEXP_EVENT" },
	};

	for (unsigned v = 0; v < 256; v++) {
		const char *want = NULL;

		for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
			if (codes[i].code == v)
				want = codes[i].name;
		if (want == NULL)
			ASSERT_TRUE(mrcp_nack_code_name((uint8_t)v) == NULL); /* D22 */
		else
			ASSERT_STREQ(mrcp_nack_code_name((uint8_t)v), want);
	}
}

/* ---- BTH ------------------------------------------------------------------ */

TEST(wire, bth_encode__writes_known_bytes)
{
	check_encodes_to(&D_BTH, &bth_sample, bth_bytes);
}

TEST(wire, bth_encode__writes_reserved_bits_as_zero)
{
	check_encodes_to(&D_BTH, &bth_max, bth_max_bytes);
}

TEST(wire, bth_encode__se_is_byte1_bit7)
{
	struct mrcp_bth h = { .opcode = MRCP_OP_WRITE_ONLY, .se = true };

	check_one_byte(&D_BTH, &h, bth_base, 1, 0x80);
}

TEST(wire, bth_encode__migreq_is_byte1_bit6)
{
	struct mrcp_bth h = { .opcode = MRCP_OP_WRITE_ONLY, .migreq = true };

	check_one_byte(&D_BTH, &h, bth_base, 1, 0x40);
}

TEST(wire, bth_encode__padcnt_is_byte1_bits5_4)
{
	struct mrcp_bth h = { .opcode = MRCP_OP_WRITE_ONLY };

	h.pad_cnt = 1;
	check_one_byte(&D_BTH, &h, bth_base, 1, 0x10);
	h.pad_cnt = 2;
	check_one_byte(&D_BTH, &h, bth_base, 1, 0x20);
	h.pad_cnt = 3;
	check_one_byte(&D_BTH, &h, bth_base, 1, 0x30);
}

TEST(wire, bth_encode__pkey_is_bytes2_3)
{
	struct mrcp_bth h = { .opcode = MRCP_OP_WRITE_ONLY, .pkey = 0x8000 };

	check_one_byte(&D_BTH, &h, bth_base, 2, 0x80);
	h.pkey = 0x0001;
	check_one_byte(&D_BTH, &h, bth_base, 3, 0x01);
}

TEST(wire, bth_encode__dest_qp_is_bytes5_7)
{
	struct mrcp_bth h = { .opcode = MRCP_OP_WRITE_ONLY, .dest_qp = 0x800000 };

	check_one_byte(&D_BTH, &h, bth_base, 5, 0x80);
	h.dest_qp = MRCP_QPN_ENDPOINT;
	check_one_byte(&D_BTH, &h, bth_base, 7, 0x02);
}

TEST(wire, bth_encode__ackreq_is_byte8_bit7)
{
	struct mrcp_bth h = { .opcode = MRCP_OP_WRITE_ONLY, .ack_req = true };

	check_one_byte(&D_BTH, &h, bth_base, 8, 0x80);
}

TEST(wire, bth_encode__rtx_is_byte8_bit5)
{
	struct mrcp_bth h = { .opcode = MRCP_OP_WRITE_ONLY, .rtx = true };

	check_one_byte(&D_BTH, &h, bth_base, 8, 0x20); /* D10 */
}

TEST(wire, bth_encode__ts_is_byte8_bit4)
{
	struct mrcp_bth h = { .opcode = MRCP_OP_WRITE_ONLY, .ts = true };

	check_one_byte(&D_BTH, &h, bth_base, 8, 0x10); /* D10 */
}

TEST(wire, bth_encode__psn_is_bytes9_11)
{
	struct mrcp_bth h = { .opcode = MRCP_OP_WRITE_ONLY, .psn = 0x800000 };

	check_one_byte(&D_BTH, &h, bth_base, 9, 0x80);
	h.psn = 1;
	check_one_byte(&D_BTH, &h, bth_base, 11, 0x01);
}

TEST(wire, bth_encode__rejects_short_cap)
{
	check_encode_nobufs(&D_BTH);
}

TEST(wire, bth_encode__rejects_out_of_range_fields)
{
	struct mrcp_bth h;

	h = bth_sample, h.opcode = 0x00;
	check_encode_einval(&D_BTH, &h);
	h = bth_sample, h.opcode = 0xC5;
	check_encode_einval(&D_BTH, &h);
	h = bth_sample, h.pad_cnt = 4;
	check_encode_einval(&D_BTH, &h);
	for (uint8_t v = 1; v < 16; v++) {
		h = bth_sample, h.tver = v;
		check_encode_einval(&D_BTH, &h);
	}
	h = bth_sample, h.dest_qp = 0x1000000;
	check_encode_einval(&D_BTH, &h);
	h = bth_sample, h.psn = 0x1000000;
	check_encode_einval(&D_BTH, &h);
}

TEST(wire, bth_decode__reads_known_bytes)
{
	check_decodes_to(&D_BTH, bth_bytes, &bth_sample);
	check_decodes_to(&D_BTH, bth_max_bytes, &bth_max);
}

TEST(wire, bth_decode__tver_is_byte1_bits3_0_and_must_be_0)
{
	for (unsigned bit = 0; bit < 4; bit++) {
		uint8_t b[12];

		memcpy(b, bth_base, sizeof(b));
		b[1] = (uint8_t)(1u << bit);
		check_decode_ebadmsg(&D_BTH, b);
	}
}

TEST(wire, bth_decode__rejects_unknown_opcodes)
{
	for (unsigned v = 0; v < 256; v++) {
		uint8_t b[12];
		struct mrcp_bth h;

		memcpy(b, bth_bytes, sizeof(b));
		b[0] = (uint8_t)v;
		ASSERT_EQ(mrcp_bth_decode(b, sizeof(b), &h), op_index(v) < 0 ? -EBADMSG : 12);
	}
}

TEST(wire, bth_decode__ignores_reserved_bits)
{
	check_every_bit(&D_BTH);
}

TEST(wire, bth_decode__rejects_every_truncation)
{
	check_decode_truncated(&D_BTH);
}

/* ---- METH ----------------------------------------------------------------- */

TEST(wire, meth_encode__writes_known_bytes)
{
	check_encodes_to(&D_METH, &meth_sample, meth_bytes);
}

TEST(wire, meth_encode__rejects_short_cap)
{
	check_encode_nobufs(&D_METH);
}

TEST(wire, meth_decode__reads_known_bytes)
{
	check_decodes_to(&D_METH, meth_bytes, &meth_sample);
}

TEST(wire, meth_decode__every_bit_is_a_field)
{
	check_every_bit(&D_METH);
}

TEST(wire, meth_decode__rejects_every_truncation)
{
	check_decode_truncated(&D_METH);
}

/* ---- TSETH ---------------------------------------------------------------- */

TEST(wire, tseth_encode__writes_known_bytes)
{
	check_encodes_to(&D_TSETH, &tseth_sample, tseth_bytes);
}

TEST(wire, tseth_encode__writes_reserved_bits_as_zero)
{
	check_encodes_to(&D_TSETH, &tseth_max, tseth_max_bytes);
}

TEST(wire, tseth_encode__tsr_is_byte2_bit7)
{
	struct mrcp_tseth h = { .tsr = true };

	check_one_byte(&D_TSETH, &h, zeros, 2, 0x80);
}

TEST(wire, tseth_encode__ftype_is_byte3_bits3_0)
{
	struct mrcp_tseth h = { .ftype = MRCP_TSETH_FTYPE };

	check_one_byte(&D_TSETH, &h, zeros, 3, 0x01);
	h.ftype = 0x8;
	check_one_byte(&D_TSETH, &h, zeros, 3, 0x08);
}

TEST(wire, tseth_encode__rejects_short_cap)
{
	check_encode_nobufs(&D_TSETH);
}

TEST(wire, tseth_encode__rejects_out_of_range_fields)
{
	struct mrcp_tseth h = tseth_sample;

	h.ftype = 0x10;
	check_encode_einval(&D_TSETH, &h);
}

TEST(wire, tseth_decode__reads_known_bytes)
{
	check_decodes_to(&D_TSETH, tseth_bytes, &tseth_sample);
	check_decodes_to(&D_TSETH, tseth_max_bytes, &tseth_max);
}

TEST(wire, tseth_decode__ignores_reserved_bits)
{
	check_every_bit(&D_TSETH);
}

TEST(wire, tseth_decode__rejects_every_truncation)
{
	check_decode_truncated(&D_TSETH);
}

/* ---- RETH ----------------------------------------------------------------- */

TEST(wire, reth_encode__writes_known_bytes)
{
	check_encodes_to(&D_RETH, &reth_sample, reth_bytes);
}

TEST(wire, reth_encode__rejects_short_cap)
{
	check_encode_nobufs(&D_RETH);
}

TEST(wire, reth_decode__reads_known_bytes)
{
	check_decodes_to(&D_RETH, reth_bytes, &reth_sample);
}

TEST(wire, reth_decode__every_bit_is_a_field)
{
	check_every_bit(&D_RETH);
}

TEST(wire, reth_decode__rejects_every_truncation)
{
	check_decode_truncated(&D_RETH);
}

/* ---- ImmDt ---------------------------------------------------------------- */

TEST(wire, imm_encode__writes_known_bytes)
{
	check_encodes_to(&D_IMM, &imm_sample, imm_bytes);
}

TEST(wire, imm_encode__rejects_short_cap)
{
	check_encode_nobufs(&D_IMM);
}

TEST(wire, imm_decode__reads_known_bytes)
{
	check_decodes_to(&D_IMM, imm_bytes, &imm_sample);
}

TEST(wire, imm_decode__every_bit_is_a_field)
{
	check_every_bit(&D_IMM);
}

TEST(wire, imm_decode__rejects_every_truncation)
{
	check_decode_truncated(&D_IMM);
}

/* ---- AETH ----------------------------------------------------------------- */

static bool syndrome_defined(unsigned s)
{
	return s == 0x1F || s == 0x61 || s == 0x62 || s == 0x63; /* D21 */
}

TEST(wire, aeth_encode__writes_known_bytes)
{
	struct mrcp_aeth ack = { .syndrome = MRCP_AETH_ACK, .msn = 0x00FFFF };
	static const uint8_t ack_bytes[4] = { 0x1F, 0x00, 0xFF, 0xFF };

	check_encodes_to(&D_AETH, &aeth_sample, aeth_bytes);
	check_encodes_to(&D_AETH, &ack, ack_bytes); /* D21: 16-bit MSN zero-extended */
}

TEST(wire, aeth_encode__rejects_short_cap)
{
	check_encode_nobufs(&D_AETH);
}

TEST(wire, aeth_encode__rejects_out_of_range_fields)
{
	struct mrcp_aeth h = aeth_sample;

	for (unsigned s = 0; s < 256; s++) {
		if (syndrome_defined(s))
			continue;
		h.syndrome = (uint8_t)s;
		check_encode_einval(&D_AETH, &h);
	}
	h = aeth_sample;
	h.msn = 0x1000000;
	check_encode_einval(&D_AETH, &h);
}

TEST(wire, aeth_decode__reads_known_bytes)
{
	check_decodes_to(&D_AETH, aeth_bytes, &aeth_sample);
}

TEST(wire, aeth_decode__accepts_only_spec_syndromes)
{
	for (unsigned s = 0; s < 256; s++) {
		uint8_t b[4] = { (uint8_t)s, 0x00, 0x00, 0x07 };
		struct mrcp_aeth h;

		if (syndrome_defined(s)) {
			struct mrcp_aeth want = { .syndrome = (uint8_t)s, .msn = 7 };

			check_decodes_to(&D_AETH, b, &want);
		} else {
			ASSERT_EQ(mrcp_aeth_decode(b, sizeof(b), &h), -EBADMSG);
		}
	}
}

TEST(wire, aeth_decode__every_bit_is_a_field)
{
	check_every_bit(&D_AETH);
}

TEST(wire, aeth_decode__rejects_every_truncation)
{
	check_decode_truncated(&D_AETH);
}

/* ---- SETH ----------------------------------------------------------------- */

TEST(wire, seth_encode__writes_known_bytes)
{
	check_encodes_to(&D_SETH, &seth_sample, seth_bytes);
}

TEST(wire, seth_encode__writes_reserved_bits_as_zero)
{
	check_encodes_to(&D_SETH, &seth_max, seth_max_bytes);
}

TEST(wire, seth_encode__m_is_byte1_bits6_5)
{
	struct mrcp_seth h = { .m = MRCP_VERDICT_SKIP_ONCE };

	check_one_byte(&D_SETH, &h, zeros, 1, 0x20);
	h.m = MRCP_VERDICT_ALWAYS_SKIP;
	check_one_byte(&D_SETH, &h, zeros, 1, 0x40);
}

TEST(wire, seth_encode__pr_is_byte1_bit1)
{
	struct mrcp_seth h = { .pr = true };

	check_one_byte(&D_SETH, &h, zeros, 1, 0x02);
}

TEST(wire, seth_encode__svc_time_is_byte12)
{
	struct mrcp_seth h = { .svc_time = 255 }; /* D17: 255 = take no RTT sample */

	check_one_byte(&D_SETH, &h, zeros, 12, 0xFF);
}

TEST(wire, seth_encode__cc_type_is_byte16_bits7_4)
{
	struct mrcp_seth h = { .cc_type = 0x1 };

	check_one_byte(&D_SETH, &h, zeros, 16, 0x10);
	h.cc_type = 0xF;
	check_one_byte(&D_SETH, &h, zeros, 16, 0xF0);
}

TEST(wire, seth_encode__cc_flags_is_byte16_bits3_0)
{
	struct mrcp_seth h = { .cc_flags = 0x1 };

	check_one_byte(&D_SETH, &h, zeros, 16, 0x01);
	h.cc_flags = 0xF;
	check_one_byte(&D_SETH, &h, zeros, 16, 0x0F);
}

TEST(wire, seth_encode__mpr_is_byte17)
{
	struct mrcp_seth h = { .mpr = 8 }; /* D25 */

	check_one_byte(&D_SETH, &h, zeros, 17, 0x08);
}

TEST(wire, seth_encode__bitmap_bit0_is_lsb_of_byte27)
{
	struct mrcp_seth h = { .sack_bitmap = 1 }; /* D26: bit 0 = PSN base + 0 */

	check_one_byte(&D_SETH, &h, zeros, 27, 0x01);
	h.sack_bitmap = 1ull << 63;
	check_one_byte(&D_SETH, &h, zeros, 20, 0x80);
	ASSERT_EQ(MRCP_SACK_BITS, 64);
}

TEST(wire, seth_encode__offsets_are_signed_16_bit)
{
	struct mrcp_seth h = { .ack_psn_offset = -32768 };

	check_one_byte(&D_SETH, &h, zeros, 2, 0x80);
	h.ack_psn_offset = 0;
	h.sack_offset = -1;
	{
		uint8_t exp[28] = { [18] = 0xFF, [19] = 0xFF };

		check_both_ways(&D_SETH, &h, exp);
	}
}

TEST(wire, seth_encode__rejects_short_cap)
{
	check_encode_nobufs(&D_SETH);
}

TEST(wire, seth_encode__rejects_out_of_range_fields)
{
	struct mrcp_seth h;

	h = seth_sample, h.m = 3; /* would decode as NONE, not as itself */
	check_encode_einval(&D_SETH, &h);
	h = seth_sample, h.m = 0xFF;
	check_encode_einval(&D_SETH, &h);
	h = seth_sample, h.cack_psn = 0x1000000;
	check_encode_einval(&D_SETH, &h);
	h = seth_sample, h.cc_type = 0x10;
	check_encode_einval(&D_SETH, &h);
	h = seth_sample, h.cc_flags = 0x10;
	check_encode_einval(&D_SETH, &h);
}

TEST(wire, seth_decode__reads_known_bytes)
{
	check_decodes_to(&D_SETH, seth_bytes, &seth_sample);
	check_decodes_to(&D_SETH, seth_max_bytes, &seth_max);
}

TEST(wire, seth_decode__m3_decodes_as_none)
{
	uint8_t b[28] = { [1] = 0x60 };
	struct mrcp_seth want = { .m = MRCP_VERDICT_NONE };

	check_decodes_to(&D_SETH, b, &want); /* §3.4 */
}

TEST(wire, seth_decode__accepts_any_cc_type)
{
	for (unsigned t = 0; t < 16; t++) {
		uint8_t b[28] = { [16] = (uint8_t)(t << 4) };
		struct mrcp_seth want = { .cc_type = (uint8_t)t };

		check_decodes_to(&D_SETH, b, &want); /* D16: CC_STATE ignored, not the SACK */
	}
}

TEST(wire, seth_decode__ignores_reserved_bits)
{
	check_every_bit(&D_SETH);
}

TEST(wire, seth_decode__rejects_every_truncation)
{
	check_decode_truncated(&D_SETH);
}

/* ---- CC_STATE ------------------------------------------------------------- */

TEST(wire, cc_state_encode__writes_known_bytes)
{
	check_encodes_to(&D_CC, &cc_sample, cc_bytes);
}

TEST(wire, cc_state_encode__writes_reserved_bits_as_zero)
{
	check_encodes_to(&D_CC, &cc_max, cc_max_bytes);
}

TEST(wire, cc_state_encode__ooo_count_is_bytes2_3_bits14_0)
{
	struct mrcp_cc_state h = { .ooo_count = 1 };
	static const uint8_t one[8] = { 0, 0, 0x00, 0x01, 0, 0, 0, 0 };
	static const uint8_t top[8] = { 0, 0, 0x40, 0x00, 0, 0, 0, 0 };
	static const uint8_t all[8] = { 0, 0, 0x7F, 0xFF, 0, 0, 0, 0 };

	check_both_ways(&D_CC, &h, one);
	h.ooo_count = 0x4000;
	check_both_ways(&D_CC, &h, top);
	h.ooo_count = 0x7FFF; /* D18: saturated */
	check_both_ways(&D_CC, &h, all);
}

TEST(wire, cc_state_encode__r_c_is_byte4_bit7)
{
	struct mrcp_cc_state h = { .r_c = true };

	check_one_byte(&D_CC, &h, zeros, 4, 0x80);
}

TEST(wire, cc_state_encode__pen_is_byte4_bits6_0)
{
	struct mrcp_cc_state h = { .rcv_cwnd_pen = 1 };

	check_one_byte(&D_CC, &h, zeros, 4, 0x01);
	h.rcv_cwnd_pen = 127;
	check_one_byte(&D_CC, &h, zeros, 4, 0x7F);
}

TEST(wire, cc_state_encode__rejects_short_cap)
{
	check_encode_nobufs(&D_CC);
}

TEST(wire, cc_state_encode__rejects_out_of_range_fields)
{
	struct mrcp_cc_state h;

	h = cc_sample, h.ooo_count = 0x8000;
	check_encode_einval(&D_CC, &h);
	h = cc_sample, h.rcv_cwnd_pen = 128;
	check_encode_einval(&D_CC, &h);
	h = cc_sample, h.rcvd_bytes = 0x1000000;
	check_encode_einval(&D_CC, &h);
}

TEST(wire, cc_state_decode__reads_known_bytes)
{
	check_decodes_to(&D_CC, cc_bytes, &cc_sample);
	check_decodes_to(&D_CC, cc_max_bytes, &cc_max);
}

TEST(wire, cc_state_decode__ignores_reserved_bits)
{
	static const uint8_t b[8] = { 0, 0, 0x80, 0x00, 0, 0, 0, 0 };
	struct mrcp_cc_state want = { .ooo_count = 0 };

	check_decodes_to(&D_CC, b, &want);
	check_every_bit(&D_CC);
}

TEST(wire, cc_state_decode__rejects_every_truncation)
{
	check_decode_truncated(&D_CC);
}

/* ---- NETH ----------------------------------------------------------------- */

TEST(wire, neth_encode__writes_known_bytes)
{
	check_encodes_to(&D_NETH, &neth_sample, neth_bytes);
}

TEST(wire, neth_encode__writes_reserved_bits_as_zero)
{
	check_encodes_to(&D_NETH, &neth_max, neth_max_bytes);
}

TEST(wire, neth_encode__cc_type_and_flags_are_byte16)
{
	struct mrcp_neth h = { .cc_type = 0x1 };

	check_one_byte(&D_NETH, &h, zeros, 16, 0x10);
	h.cc_type = 0;
	h.cc_flags = 0x8;
	check_one_byte(&D_NETH, &h, zeros, 16, 0x08);
}

TEST(wire, neth_encode__rejects_short_cap)
{
	check_encode_nobufs(&D_NETH);
}

TEST(wire, neth_encode__rejects_out_of_range_fields)
{
	struct mrcp_neth h;

	h = neth_sample, h.nack_psn = 0x1000000;
	check_encode_einval(&D_NETH, &h);
	h = neth_sample, h.cc_type = 0x10;
	check_encode_einval(&D_NETH, &h);
	h = neth_sample, h.cc_flags = 0x10;
	check_encode_einval(&D_NETH, &h);
}

TEST(wire, neth_decode__reads_known_bytes)
{
	check_decodes_to(&D_NETH, neth_bytes, &neth_sample);
	check_decodes_to(&D_NETH, neth_max_bytes, &neth_max);
}

TEST(wire, neth_decode__accepts_every_nack_code)
{
	for (unsigned c = 0; c < 256; c++) {
		uint8_t b[20] = { [2] = (uint8_t)c };
		struct mrcp_neth want = { .nack_code = (uint8_t)c };

		check_decodes_to(&D_NETH, b, &want); /* D22 */
	}
}

TEST(wire, neth_decode__ignores_reserved_bits)
{
	check_every_bit(&D_NETH);
}

TEST(wire, neth_decode__rejects_every_truncation)
{
	check_decode_truncated(&D_NETH);
}

/* ---- PETH ----------------------------------------------------------------- */

TEST(wire, peth_encode__writes_known_bytes)
{
	check_encodes_to(&D_PETH, &peth_sample, peth_bytes);
}

TEST(wire, peth_encode__writes_reserved_bits_as_zero)
{
	check_encodes_to(&D_PETH, &peth_max, peth_max_bytes);
}

TEST(wire, peth_encode__tsr_is_byte14_bit7)
{
	struct mrcp_peth h = { .tsr = true };

	check_one_byte(&D_PETH, &h, zeros, 14, 0x80);
}

TEST(wire, peth_encode__ftype_is_byte15_bits3_0)
{
	struct mrcp_peth h = { .ftype = 1 };

	check_one_byte(&D_PETH, &h, zeros, 15, 0x01);
	h.ftype = 0x8;
	check_one_byte(&D_PETH, &h, zeros, 15, 0x08);
}

TEST(wire, peth_encode__rejects_short_cap)
{
	check_encode_nobufs(&D_PETH);
}

TEST(wire, peth_encode__rejects_out_of_range_fields)
{
	struct mrcp_peth h = peth_sample;

	h.ftype = 0x10;
	check_encode_einval(&D_PETH, &h);
}

TEST(wire, peth_decode__reads_known_bytes)
{
	check_decodes_to(&D_PETH, peth_bytes, &peth_sample);
	check_decodes_to(&D_PETH, peth_max_bytes, &peth_max);
}

TEST(wire, peth_decode__ignores_reserved_bits)
{
	check_every_bit(&D_PETH);
}

TEST(wire, peth_decode__rejects_every_truncation)
{
	check_decode_truncated(&D_PETH);
}

/* ---- ERTH ----------------------------------------------------------------- */

TEST(wire, erth_encode__writes_known_bytes)
{
	check_encodes_to(&D_ERTH, &erth_sample, erth_bytes);
}

TEST(wire, erth_encode__writes_reserved_bits_as_zero)
{
	check_encodes_to(&D_ERTH, &erth_max, erth_max_bytes);
}

TEST(wire, erth_encode__op_is_byte1_bits1_0)
{
	struct mrcp_erth h = { .op = MRCP_EP_EV_PROBE };

	check_one_byte(&D_ERTH, &h, zeros, 1, 0x01);
}

TEST(wire, erth_encode__tsr_is_byte14_bit7)
{
	struct mrcp_erth h = { .tsr = true };

	check_one_byte(&D_ERTH, &h, zeros, 14, 0x80);
}

TEST(wire, erth_encode__ftype_is_byte15_bits3_0)
{
	struct mrcp_erth h = { .ftype = 1 };

	check_one_byte(&D_ERTH, &h, zeros, 15, 0x01);
	h.ftype = 0x8;
	check_one_byte(&D_ERTH, &h, zeros, 15, 0x08);
}

TEST(wire, erth_encode__port_status_mask_bit0_is_port1)
{
	struct mrcp_erth h = { .port_status_mask = 1u << 0 }; /* D49 */

	check_one_byte(&D_ERTH, &h, zeros, 7, 0x01);
}

TEST(wire, erth_encode__rejects_short_cap)
{
	check_encode_nobufs(&D_ERTH);
}

TEST(wire, erth_encode__rejects_out_of_range_fields)
{
	struct mrcp_erth h;

	h = erth_sample, h.op = 2;
	check_encode_einval(&D_ERTH, &h);
	h = erth_sample, h.op = 3;
	check_encode_einval(&D_ERTH, &h);
	h = erth_sample, h.ftype = 0x10;
	check_encode_einval(&D_ERTH, &h);
}

TEST(wire, erth_decode__reads_known_bytes)
{
	check_decodes_to(&D_ERTH, erth_bytes, &erth_sample);
	check_decodes_to(&D_ERTH, erth_max_bytes, &erth_max);
}

TEST(wire, erth_decode__rejects_undefined_ops)
{
	uint8_t b[16] = { [1] = 0x02 };

	check_decode_ebadmsg(&D_ERTH, b);
	b[1] = 0x03;
	check_decode_ebadmsg(&D_ERTH, b);
}

TEST(wire, erth_decode__ignores_reserved_bits)
{
	check_every_bit(&D_ERTH);
}

TEST(wire, erth_decode__rejects_every_truncation)
{
	check_decode_truncated(&D_ERTH);
}

/* ---- EETH ----------------------------------------------------------------- */

TEST(wire, eeth_encode__writes_known_bytes)
{
	check_encodes_to(&D_EETH, &eeth_sample, eeth_bytes);
}

TEST(wire, eeth_encode__writes_reserved_bits_as_zero)
{
	check_encodes_to(&D_EETH, &eeth_max, eeth_max_bytes);
}

/* §3.6, by hand from the EETH table: byte 1 is prologue(7) rsvd(6) op(5:4)
 * rsvd(3:0), so op 1 (EV_PROBE) is 0x10; ERTH's op(1:0) is not EETH's. */
TEST(wire, eeth_encode__op_is_byte1_bits5_4)
{
	struct mrcp_eeth h = { .op = MRCP_EP_EV_PROBE };

	check_one_byte(&D_EETH, &h, zeros, 1, 0x10);
	h.op = MRCP_EP_PORT_STATUS_UPDATE;
	check_one_byte(&D_EETH, &h, zeros, 1, 0x00);
}

TEST(wire, eeth_decode__op_is_byte1_bits5_4)
{
	uint8_t b[36] = { [1] = 0x10 };
	struct mrcp_eeth h;

	ASSERT_EQ(36, mrcp_eeth_decode(b, sizeof(b), &h));
	ASSERT_EQ(MRCP_EP_EV_PROBE, h.op);
	/* ERTH's op position is reserved in an EETH: an EV-probe answer
	 * written there would read as a port-status acknowledgement */
	b[1] = 0x01;
	ASSERT_EQ(36, mrcp_eeth_decode(b, sizeof(b), &h));
	ASSERT_EQ(MRCP_EP_PORT_STATUS_UPDATE, h.op);
	b[1] = 0x80 | 0x40 | 0x10 | 0x0F; /* every reserved bit around op 1 */
	ASSERT_EQ(36, mrcp_eeth_decode(b, sizeof(b), &h));
	ASSERT_EQ(MRCP_EP_EV_PROBE, h.op);
}

TEST(wire, eeth_encode__d20_fields_at_bytes2_3_and_8_9)
{
	struct mrcp_eeth h = { .rx_port = 1 };

	check_one_byte(&D_EETH, &h, zeros, 2, 0x01);
	h.rx_port = 0;
	h.status = 0x80;
	check_one_byte(&D_EETH, &h, zeros, 3, 0x80);
	h.status = 0;
	h.svc_time = 0x0001;
	check_one_byte(&D_EETH, &h, zeros, 9, 0x01);
}

TEST(wire, eeth_encode__tsr_is_byte30_bit7)
{
	struct mrcp_eeth h = { .tsr = true };

	check_one_byte(&D_EETH, &h, zeros, 30, 0x80);
}

TEST(wire, eeth_encode__ftype_is_byte31_bits3_0)
{
	struct mrcp_eeth h = { .ftype = 1 };

	check_one_byte(&D_EETH, &h, zeros, 31, 0x01);
	h.ftype = 0x8;
	check_one_byte(&D_EETH, &h, zeros, 31, 0x08);
}

TEST(wire, eeth_encode__rejects_short_cap)
{
	check_encode_nobufs(&D_EETH);
}

TEST(wire, eeth_encode__rejects_out_of_range_fields)
{
	struct mrcp_eeth h;

	h = eeth_sample, h.op = 2;
	check_encode_einval(&D_EETH, &h);
	h = eeth_sample, h.op = 3;
	check_encode_einval(&D_EETH, &h);
	h = eeth_sample, h.ftype = 0x10;
	check_encode_einval(&D_EETH, &h);
}

TEST(wire, eeth_decode__reads_known_bytes)
{
	check_decodes_to(&D_EETH, eeth_bytes, &eeth_sample);
	check_decodes_to(&D_EETH, eeth_max_bytes, &eeth_max);
}

TEST(wire, eeth_decode__rejects_undefined_ops)
{
	uint8_t b[36] = { [1] = 0x20 };

	check_decode_ebadmsg(&D_EETH, b);
	b[1] = 0x30;
	check_decode_ebadmsg(&D_EETH, b);
}

TEST(wire, eeth_decode__ignores_reserved_bits)
{
	check_every_bit(&D_EETH);
}

TEST(wire, eeth_decode__rejects_every_truncation)
{
	check_decode_truncated(&D_EETH);
}

/* ---- packets: kinds --------------------------------------------------------- */

#define PKT_BUF (64 + MRCP_PAYLOAD_MAX + 64)

/* Every packet kind the tests walk. hdr_len is by hand, from §3.1 and the
 * header sizes: BTH 12, METH 4, TSETH 4, RETH 16, ImmDt 4, AETH 4,
 * SETH+CC_STATE 36, NETH 20, PETH 16, ERTH 16, EETH 36. */
struct kind {
	const char *name;
	uint8_t op;
	bool ts;
	uint32_t payload_len;
	size_t hdr_len;
};

static const struct kind kinds[] = {
	{ "write_first", MRCP_OP_WRITE_FIRST, true, 64, 36 },
	{ "write_middle", MRCP_OP_WRITE_MIDDLE, true, 1024, 36 },
	{ "write_last/pad3", MRCP_OP_WRITE_LAST, true, 61, 36 },
	{ "write_last_imm/pad2", MRCP_OP_WRITE_LAST_IMM, true, 62, 40 },
	{ "write_only/pad1", MRCP_OP_WRITE_ONLY, true, 63, 36 },
	{ "write_only_imm/pad3", MRCP_OP_WRITE_ONLY_IMM, true, 5, 40 },
	{ "write_only/no_tseth", MRCP_OP_WRITE_ONLY, false, 16, 32 },
	{ "write_only_imm/no_tseth", MRCP_OP_WRITE_ONLY_IMM, false, 7, 36 },
	{ "write_only/zero_len", MRCP_OP_WRITE_ONLY, true, 0, 36 },
	{ "write_only_imm/zero_len", MRCP_OP_WRITE_ONLY_IMM, true, 0, 40 },
	{ "write_first/zero_len_no_tseth", MRCP_OP_WRITE_FIRST, false, 0, 32 },
	{ "write_only/max", MRCP_OP_WRITE_ONLY, true, MRCP_PAYLOAD_MAX, 36 },
	{ "write_last/max_minus_1", MRCP_OP_WRITE_LAST, true, MRCP_PAYLOAD_MAX - 1, 36 },
	{ "ack", MRCP_OP_ACK, false, 0, 16 },
	{ "ep_request", MRCP_OP_EP_REQUEST, false, 0, 28 },
	{ "ep_response", MRCP_OP_EP_RESPONSE, false, 0, 48 },
	{ "sack", MRCP_OP_SACK, false, 0, 48 },
	{ "nack", MRCP_OP_NACK, false, 0, 32 },
	{ "probe", MRCP_OP_PROBE, false, 0, 28 },
};
#define N_KINDS (sizeof(kinds) / sizeof(kinds[0]))

static const struct kind *kind_named(const char *name)
{
	for (size_t i = 0; i < N_KINDS; i++)
		if (strcmp(kinds[i].name, name) == 0)
			return &kinds[i];
	mrcp_test_fail(__FILE__, __LINE__, "no kind %s", name);
}

static uint8_t pattern[MRCP_PAYLOAD_MAX];

static const uint8_t *payload_pattern(void)
{
	for (size_t i = 0; i < sizeof(pattern); i++)
		pattern[i] = (uint8_t)(i * 7 + 3);
	return pattern;
}

static uint8_t pad_of(uint32_t len)
{
	return (uint8_t)((4 - len % 4) % 4);
}

/* Build kind @k with every header field set to something distinctive. */
static void make_pkt(struct mrcp_pkt *p, const struct kind *k)
{
	ASSERT_EQ(mrcp_pkt_init(p, k->op, 0x00ABCD, 0x123456), 0);
	switch (k->op) {
	case MRCP_OP_ACK:
		p->aeth = aeth_sample;
		break;
	case MRCP_OP_EP_REQUEST:
		p->bth.dest_qp = MRCP_QPN_ENDPOINT;
		p->bth.psn = 0x00BEEF; /* D11: request id */
		p->erth = erth_sample;
		break;
	case MRCP_OP_EP_RESPONSE:
		p->bth.dest_qp = MRCP_QPN_ENDPOINT;
		p->bth.psn = 0x00BEEF;
		p->eeth = eeth_sample;
		break;
	case MRCP_OP_SACK:
		p->seth = seth_sample;
		p->cc = cc_sample;
		break;
	case MRCP_OP_NACK:
		p->neth = neth_sample;
		break;
	case MRCP_OP_PROBE:
		p->peth = peth_sample;
		break;
	default:
		p->bth.ack_req = k->op == MRCP_OP_WRITE_LAST || k->op >= MRCP_OP_WRITE_LAST_IMM;
		p->bth.rtx = k->payload_len % 2 != 0;
		if (!k->ts) {
			p->bth.ts = false;
			p->hdrs &= ~(uint32_t)MRCP_HDR_TSETH;
			memset(&p->tseth, 0, sizeof(p->tseth));
		} else {
			p->tseth.tx_timestamp = 0x4321;
			p->tseth.tsr = true;
		}
		p->meth.rq_msn = 3;
		p->meth.msn = 7;
		p->reth = reth_sample;
		if (p->hdrs & MRCP_HDR_IMM)
			p->imm = 0x5EED5EED;
		p->payload = payload_pattern();
		p->payload_len = k->payload_len;
		break;
	}
	p->bth.pad_cnt = pad_of(k->payload_len);
}

/* Encode kind @k into @buf; returns its length. */
static size_t encode_kind(const struct kind *k, uint8_t *buf, struct mrcp_pkt *p)
{
	int n;

	make_pkt(p, k);
	n = mrcp_pkt_encode(p, buf, PKT_BUF);
	if (n < 0)
		mrcp_test_fail(__FILE__, __LINE__, "%s: encode failed: %d", k->name, n);
	return (size_t)n;
}

/* mrcp_pkt_decode of an exact-size copy of @buf[0..len). */
static int decode_exact(const uint8_t *buf, size_t len, struct mrcp_pkt *p)
{
	uint8_t *copy = dup_exact(buf, len);
	int rc = mrcp_pkt_decode(copy, len, p);

	if (rc == 0 && p->payload_len != 0)
		ASSERT_TRUE(p->payload >= copy && p->payload + p->payload_len <= copy + len);
	free(copy);
	p->payload = NULL; /* it pointed into the freed copy */
	return rc;
}

static int decode_hdr_exact(const uint8_t *buf, size_t len, struct mrcp_pkt *p)
{
	uint8_t *copy = dup_exact(buf, len);
	int rc = mrcp_pkt_decode_hdr(copy, len, p);

	free(copy);
	p->payload = NULL;
	return rc;
}

/* ---- mrcp_pkt_init ------------------------------------------------------------ */

TEST(wire, pkt_init__data_opcode_gets_tseth_and_d10_defaults)
{
	struct mrcp_pkt p;

	memset(&p, 0x5A, sizeof(p));
	ASSERT_EQ(mrcp_pkt_init(&p, MRCP_OP_WRITE_FIRST, 0x000123, 0xFFFFFF), 0);
	ASSERT_EQ(p.bth.opcode, 0xC6);
	ASSERT_EQ(p.bth.pkey, 0xFFFF);             /* D10 */
	ASSERT_FALSE(p.bth.se);
	ASSERT_FALSE(p.bth.migreq);
	ASSERT_EQ(p.bth.tver, 0);
	ASSERT_EQ(p.bth.dest_qp, 0x000123);
	ASSERT_EQ(p.bth.psn, 0xFFFFFF);
	ASSERT_TRUE(p.bth.ts);                     /* D13 */
	ASSERT_FALSE(p.bth.ack_req);
	ASSERT_FALSE(p.bth.rtx);
	ASSERT_EQ(p.tseth.ftype, MRCP_TSETH_FTYPE);
	ASSERT_EQ(p.hdrs, MRCP_HDR_METH | MRCP_HDR_TSETH | MRCP_HDR_RETH);
	ASSERT_EQ(p.payload_len, 0);
	ASSERT_TRUE(p.payload == NULL);
	ASSERT_EQ(p.meth.msn, 0);
	ASSERT_U64_EQ(p.reth.va, 0);
}

TEST(wire, pkt_init__control_opcode_has_no_tseth)
{
	for (size_t i = 0; i < N_OPS; i++) {
		struct mrcp_pkt p;

		if (mrcp_opcode_is_data(op_table[i].op))
			continue;
		ASSERT_EQ(mrcp_pkt_init(&p, op_table[i].op, MRCP_QPN_ENDPOINT, 7), 0);
		ASSERT_FALSE(p.bth.ts);
		ASSERT_EQ(p.hdrs, op_table[i].hdrs);
		ASSERT_EQ(p.bth.pkey, 0xFFFF);
	}
}

TEST(wire, pkt_init__rejects_unknown_opcode_and_wide_fields)
{
	struct mrcp_pkt p;

	ASSERT_EQ(mrcp_pkt_init(&p, 0x00, 1, 1), -EINVAL);
	ASSERT_EQ(mrcp_pkt_init(&p, 0xD2, 1, 1), -EINVAL);
	ASSERT_EQ(mrcp_pkt_init(&p, MRCP_OP_ACK, 0x1000000, 1), -EINVAL);
	ASSERT_EQ(mrcp_pkt_init(&p, MRCP_OP_ACK, 1, 0x1000000), -EINVAL);
}

/* ---- mrcp_pkt_hdr_len --------------------------------------------------------- */

TEST(wire, pkt_hdr_len__matches_hand_sizes_for_every_kind)
{
	for (size_t i = 0; i < N_KINDS; i++) {
		struct mrcp_pkt p;

		make_pkt(&p, &kinds[i]);
		if (mrcp_pkt_hdr_len(&p) != kinds[i].hdr_len)
			mrcp_test_fail(__FILE__, __LINE__, "%s: hdr_len %zu, want %zu",
				       kinds[i].name, mrcp_pkt_hdr_len(&p), kinds[i].hdr_len);
	}
}

/* ---- mrcp_pkt_encode_hdr ------------------------------------------------------ */

TEST(wire, pkt_encode_hdr__writes_only_the_headers)
{
	for (size_t i = 0; i < N_KINDS; i++) {
		static uint8_t full[PKT_BUF], hdr[PKT_BUF];
		struct mrcp_pkt p;
		size_t n = encode_kind(&kinds[i], full, &p);

		memset(hdr, 0xA5, sizeof(hdr));
		ASSERT_EQ(mrcp_pkt_encode_hdr(&p, hdr, sizeof(hdr)), kinds[i].hdr_len);
		ASSERT_MEMEQ(hdr, full, kinds[i].hdr_len);
		ASSERT_EQ(hdr[kinds[i].hdr_len], 0xA5);
		ASSERT_EQ(n, kinds[i].hdr_len + kinds[i].payload_len + pad_of(kinds[i].payload_len));
	}
}

TEST(wire, pkt_encode_hdr__padcnt_comes_from_payload_len)
{
	static uint8_t buf[PKT_BUF];
	struct mrcp_pkt p;

	make_pkt(&p, kind_named("write_first"));
	for (uint32_t len = 0; len < 12; len++) {
		p.payload_len = len;
		p.bth.pad_cnt = 3; /* ignored: PadCnt is derived */
		ASSERT_EQ(mrcp_pkt_encode_hdr(&p, buf, sizeof(buf)), 36);
		ASSERT_EQ(buf[1] >> 4 & 3, pad_of(len));
	}
}

TEST(wire, pkt_encode_hdr__rejects_header_set_not_matching_opcode)
{
	static uint8_t buf[PKT_BUF];
	struct mrcp_pkt p;

	make_pkt(&p, kind_named("write_first"));
	p.hdrs &= ~(uint32_t)MRCP_HDR_RETH;
	ASSERT_EQ(mrcp_pkt_encode_hdr(&p, buf, sizeof(buf)), -EINVAL);
	make_pkt(&p, kind_named("write_first"));
	p.hdrs |= MRCP_HDR_IMM;
	ASSERT_EQ(mrcp_pkt_encode_hdr(&p, buf, sizeof(buf)), -EINVAL);
	make_pkt(&p, kind_named("write_first"));
	p.hdrs &= ~(uint32_t)MRCP_HDR_TSETH; /* ts = 1 but no TSETH */
	ASSERT_EQ(mrcp_pkt_encode_hdr(&p, buf, sizeof(buf)), -EINVAL);
	make_pkt(&p, kind_named("write_first"));
	p.bth.ts = false; /* TSETH but ts = 0 */
	ASSERT_EQ(mrcp_pkt_encode_hdr(&p, buf, sizeof(buf)), -EINVAL);
	make_pkt(&p, kind_named("write_first"));
	p.hdrs = MRCP_HDR_AETH;
	ASSERT_EQ(mrcp_pkt_encode_hdr(&p, buf, sizeof(buf)), -EINVAL);
	make_pkt(&p, kind_named("write_first"));
	p.bth.opcode = 0xC5;
	ASSERT_EQ(mrcp_pkt_encode_hdr(&p, buf, sizeof(buf)), -EINVAL);
}

TEST(wire, pkt_encode_hdr__rejects_ts_on_control)
{
	static uint8_t buf[PKT_BUF];

	for (size_t i = 0; i < N_KINDS; i++) {
		struct mrcp_pkt p;

		if (mrcp_opcode_is_data(kinds[i].op))
			continue;
		make_pkt(&p, &kinds[i]);
		p.bth.ts = true;
		ASSERT_EQ(mrcp_pkt_encode_hdr(&p, buf, sizeof(buf)), -EINVAL);
		p.hdrs |= MRCP_HDR_TSETH;
		ASSERT_EQ(mrcp_pkt_encode_hdr(&p, buf, sizeof(buf)), -EINVAL);
	}
}

TEST(wire, pkt_encode_hdr__rejects_bad_payload_len)
{
	static uint8_t buf[PKT_BUF];
	struct mrcp_pkt p;

	make_pkt(&p, kind_named("write_first"));
	p.payload_len = MRCP_PAYLOAD_MAX + 1;
	ASSERT_EQ(mrcp_pkt_encode_hdr(&p, buf, sizeof(buf)), -EINVAL);
	p.payload_len = UINT32_MAX;
	ASSERT_EQ(mrcp_pkt_encode_hdr(&p, buf, sizeof(buf)), -EINVAL);
	for (size_t i = 0; i < N_KINDS; i++) {
		if (mrcp_opcode_is_data(kinds[i].op))
			continue;
		make_pkt(&p, &kinds[i]);
		p.payload_len = 4;
		ASSERT_EQ(mrcp_pkt_encode_hdr(&p, buf, sizeof(buf)), -EINVAL);
	}
}

TEST(wire, pkt_encode_hdr__rejects_short_cap_for_every_kind)
{
	for (size_t i = 0; i < N_KINDS; i++) {
		struct mrcp_pkt p;

		make_pkt(&p, &kinds[i]);
		for (size_t cap = 0; cap < kinds[i].hdr_len; cap++) {
			uint8_t *buf = malloc(cap + 1);

			ASSERT_TRUE(buf != NULL);
			ASSERT_EQ(mrcp_pkt_encode_hdr(&p, buf, cap), -ENOBUFS);
			free(buf);
		}
	}
}

TEST(wire, pkt_encode_hdr__rejects_out_of_range_header_fields)
{
	static uint8_t buf[PKT_BUF];
	struct mrcp_pkt p;

	make_pkt(&p, kind_named("write_first"));
	p.tseth.ftype = 0x10;
	ASSERT_EQ(mrcp_pkt_encode_hdr(&p, buf, sizeof(buf)), -EINVAL);
	make_pkt(&p, kind_named("write_first"));
	p.bth.tver = 1;
	ASSERT_EQ(mrcp_pkt_encode_hdr(&p, buf, sizeof(buf)), -EINVAL);
	make_pkt(&p, kind_named("write_first"));
	p.bth.psn = 0x1000000;
	ASSERT_EQ(mrcp_pkt_encode_hdr(&p, buf, sizeof(buf)), -EINVAL);
}

/* ---- mrcp_pkt_encode ---------------------------------------------------------- */

TEST(wire, pkt_encode__writes_known_bytes_for_write_only_imm)
{
	static const uint8_t payload[5] = { 0x11, 0x22, 0x33, 0x44, 0x55 };
	static const uint8_t want[48] = {
		/* BTH: PadCnt 3, AckReq + ts (D10) */
		0xCB, 0x30, 0xFF, 0xFF, 0x00, 0x00, 0xAB, 0xCD, 0x90, 0x12, 0x34, 0x56,
		/* METH: rq_msn 3, msn 7 */
		0x00, 0x03, 0x00, 0x07,
		/* TSETH: ts 0x4321, tsr 1, ftype 1 */
		0x43, 0x21, 0x80, 0x01,
		/* RETH */
		0x00, 0x00, 0x7F, 0x00, 0x12, 0x34, 0x50, 0x00,
		0x0B, 0xAD, 0xCA, 0xFE, 0x00, 0x00, 0x20, 0x00,
		/* ImmDt */
		0x5E, 0xED, 0x5E, 0xED,
		/* payload + 3 pad bytes */
		0x11, 0x22, 0x33, 0x44, 0x55, 0x00, 0x00, 0x00,
	};
	uint8_t buf[64];
	struct mrcp_pkt p, q;

	ASSERT_EQ(mrcp_pkt_init(&p, MRCP_OP_WRITE_ONLY_IMM, 0x00ABCD, 0x123456), 0);
	p.bth.ack_req = true;
	p.meth.rq_msn = 3;
	p.meth.msn = 7;
	p.tseth.tx_timestamp = 0x4321;
	p.tseth.tsr = true;
	p.reth.va = 0x00007F0012345000ull;
	p.reth.rkey = 0x0BADCAFE;
	p.reth.dma_len = 0x2000;
	p.imm = 0x5EED5EED;
	p.payload = payload;
	p.payload_len = sizeof(payload);
	memset(buf, 0xA5, sizeof(buf));
	ASSERT_EQ(mrcp_pkt_encode(&p, buf, sizeof(buf)), 48);
	ASSERT_MEMEQ(buf, want, sizeof(want));
	ASSERT_EQ(buf[48], 0xA5);
	ASSERT_EQ(mrcp_pkt_decode(want, sizeof(want), &q), 0);
	p.bth.pad_cnt = 3;
	ASSERT_TRUE(same_pkt(&p, &q));
	ASSERT_TRUE(q.payload == want + 40);
}

/* §4.3: PSNs 0-11 sent, 5 and 8 lost; SACK triggered by PSN 11. */
static const uint8_t spec_sack[48] = {
	/* BTH: SACK, DestQP 0x000123, PSN = cack_psn 4 (D11) */
	0xDC, 0x00, 0xFF, 0xFF, 0x00, 0x00, 0x01, 0x23, 0x00, 0x00, 0x00, 0x04,
	/* SETH: m NONE, ack_psn_offset 7 (trigger 11), EV 0xC0DE0001 */
	0x00, 0x00, 0x00, 0x07, 0xC0, 0xDE, 0x00, 0x01,
	/* spdcid 0x0123, dpdcid 0x0456 (D15), svc_time 0, cack_psn 4 */
	0x01, 0x23, 0x04, 0x56, 0x00, 0x00, 0x00, 0x04,
	/* cc 0 (D16), mpr 8 (D25), sack_offset 1 (base 5, D27) */
	0x00, 0x08, 0x00, 0x01,
	/* sack_bitmap 0x76 (D26) */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x76,
	/* CC_STATE: ts 0x1234, ooo_count 5 (6,7,9,10,11; D18), r_c/pen 0, rcvd_bytes 0 */
	0x12, 0x34, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00,
};

TEST(wire, pkt_encode__writes_spec_sack_example)
{
	uint8_t buf[64];
	struct mrcp_pkt p;

	ASSERT_EQ(mrcp_pkt_init(&p, MRCP_OP_SACK, 0x000123, 4), 0);
	p.seth.ack_psn_offset = 7;
	p.seth.entropy = 0xC0DE0001;
	p.seth.spdcid = 0x0123;
	p.seth.dpdcid = 0x0456;
	p.seth.cack_psn = 4;
	p.seth.mpr = 8;
	p.seth.sack_offset = 1;
	p.seth.sack_bitmap = 0x76;
	p.cc.tx_timestamp = 0x1234;
	p.cc.ooo_count = 5;
	ASSERT_EQ(mrcp_pkt_encode(&p, buf, sizeof(buf)), 48);
	ASSERT_MEMEQ(buf, spec_sack, sizeof(spec_sack));
}

TEST(wire, pkt_encode__writes_zero_pad_for_every_pad_count)
{
	static const uint8_t want_pad[4] = { 0, 3, 2, 1 }; /* payload 4..7 */

	for (uint32_t len = 4; len < 8; len++) {
		uint8_t buf[64];
		struct mrcp_pkt p;
		size_t total = 36 + len + want_pad[len - 4];

		make_pkt(&p, kind_named("write_first"));
		p.payload_len = len;
		memset(buf, 0xA5, sizeof(buf));
		ASSERT_EQ(mrcp_pkt_encode(&p, buf, sizeof(buf)), total);
		ASSERT_EQ(total % 4, 0);
		ASSERT_EQ(buf[1] >> 4 & 3, want_pad[len - 4]);
		ASSERT_MEMEQ(buf + 36, pattern, len);
		for (size_t i = 36 + len; i < total; i++)
			ASSERT_EQ(buf[i], 0);
		ASSERT_EQ(buf[total], 0xA5);
	}
}

TEST(wire, pkt_encode__rejects_short_cap_for_every_kind)
{
	for (size_t i = 0; i < N_KINDS; i++) {
		static uint8_t full[PKT_BUF];
		struct mrcp_pkt p;
		size_t n = encode_kind(&kinds[i], full, &p);

		for (size_t cap = 0; cap < n; cap++) {
			uint8_t *buf = malloc(cap + 1);

			ASSERT_TRUE(buf != NULL);
			memset(buf, 0xA5, cap + 1);
			ASSERT_EQ(mrcp_pkt_encode(&p, buf, cap), -ENOBUFS);
			ASSERT_EQ(buf[0], 0xA5); /* nothing written */
			free(buf);
		}
	}
}

TEST(wire, pkt_encode__rejects_null_payload)
{
	static uint8_t buf[PKT_BUF];
	struct mrcp_pkt p;

	make_pkt(&p, kind_named("write_first"));
	p.payload = NULL;
	ASSERT_EQ(mrcp_pkt_encode(&p, buf, sizeof(buf)), -EINVAL);
	p.payload_len = 0; /* a zero-length write needs no payload pointer */
	ASSERT_EQ(mrcp_pkt_encode(&p, buf, sizeof(buf)), 36);
}

TEST(wire, pkt_encode__rejects_out_of_range_fields)
{
	static uint8_t buf[PKT_BUF];
	struct mrcp_pkt p;

	make_pkt(&p, kind_named("ack"));
	p.aeth.syndrome = 0;
	ASSERT_EQ(mrcp_pkt_encode(&p, buf, sizeof(buf)), -EINVAL);
	make_pkt(&p, kind_named("sack"));
	p.cc.ooo_count = 0x8000;
	ASSERT_EQ(mrcp_pkt_encode(&p, buf, sizeof(buf)), -EINVAL);
	make_pkt(&p, kind_named("ep_request"));
	p.erth.op = 2;
	ASSERT_EQ(mrcp_pkt_encode(&p, buf, sizeof(buf)), -EINVAL);
	make_pkt(&p, kind_named("ep_response"));
	p.eeth.op = 3;
	ASSERT_EQ(mrcp_pkt_encode(&p, buf, sizeof(buf)), -EINVAL);
	make_pkt(&p, kind_named("nack"));
	p.neth.nack_psn = 0x1000000;
	ASSERT_EQ(mrcp_pkt_encode(&p, buf, sizeof(buf)), -EINVAL);
	make_pkt(&p, kind_named("probe"));
	p.peth.ftype = 0x10;
	ASSERT_EQ(mrcp_pkt_encode(&p, buf, sizeof(buf)), -EINVAL);
	make_pkt(&p, kind_named("write_first"));
	p.bth.dest_qp = 0x1000000;
	ASSERT_EQ(mrcp_pkt_encode(&p, buf, sizeof(buf)), -EINVAL);
}

TEST(wire, pkt_encode__accepts_payload_already_in_place)
{
	static uint8_t buf[PKT_BUF];
	struct mrcp_pkt p, q;

	make_pkt(&p, kind_named("write_middle"));
	memcpy(buf + 36, pattern, p.payload_len);
	p.payload = buf + 36;
	ASSERT_EQ(mrcp_pkt_encode(&p, buf, sizeof(buf)), 36 + 1024);
	ASSERT_MEMEQ(buf + 36, pattern, 1024);
	ASSERT_EQ(mrcp_pkt_decode(buf, 36 + 1024, &q), 0);
	ASSERT_TRUE(same_pkt(&p, &q));
}

/* ---- mrcp_pkt_len ------------------------------------------------------------- */

TEST(wire, pkt_len__is_headers_payload_and_pad)
{
	for (size_t i = 0; i < N_KINDS; i++) {
		struct mrcp_pkt p;

		make_pkt(&p, &kinds[i]);
		ASSERT_EQ(mrcp_pkt_len(&p), kinds[i].hdr_len + kinds[i].payload_len +
						    pad_of(kinds[i].payload_len));
	}
}

/* ---- mrcp_pkt_decode ---------------------------------------------------------- */

TEST(wire, pkt_decode__round_trips_every_kind)
{
	for (size_t i = 0; i < N_KINDS; i++) {
		static uint8_t buf[PKT_BUF];
		const struct kind *k = &kinds[i];
		struct mrcp_pkt p, q;
		size_t n = encode_kind(k, buf, &p);
		uint8_t *copy = dup_exact(buf, n);

		ASSERT_EQ(n, mrcp_pkt_len(&p));
		if (mrcp_opcode_is_data(k->op))
			ASSERT_EQ(n % 4, 0);
		memset(&q, 0x5A, sizeof(q));
		ASSERT_EQ(mrcp_pkt_decode(copy, n, &q), 0);
		if (!same_pkt(&p, &q))
			mrcp_test_fail(__FILE__, __LINE__, "%s: round trip differs", k->name);
		ASSERT_TRUE(q.payload == copy + k->hdr_len);
		ASSERT_EQ(q.payload_len, k->payload_len);
		ASSERT_EQ(q.bth.pad_cnt, pad_of(k->payload_len));
		for (size_t j = k->hdr_len + k->payload_len; j < n; j++)
			ASSERT_EQ(copy[j], 0);
		free(copy);
	}
}

TEST(wire, pkt_decode__reads_spec_sack_example)
{
	struct mrcp_pkt p;
	uint32_t base;

	ASSERT_EQ(mrcp_pkt_decode(spec_sack, sizeof(spec_sack), &p), 0);
	ASSERT_EQ(p.bth.opcode, MRCP_OP_SACK);
	ASSERT_EQ(p.hdrs, MRCP_HDR_SETH);
	ASSERT_EQ(p.bth.psn, 4);
	ASSERT_EQ(p.seth.cack_psn, 4);
	ASSERT_EQ(p.seth.cack_psn + (uint32_t)p.seth.ack_psn_offset, 11);
	ASSERT_EQ(p.seth.entropy, 0xC0DE0001);
	ASSERT_EQ(p.seth.mpr, 8);
	ASSERT_EQ(p.cc.ooo_count, 5);
	ASSERT_EQ(p.cc.tx_timestamp, 0x1234);
	base = p.seth.cack_psn + (uint32_t)p.seth.sack_offset;
	ASSERT_EQ(base, 5);
	/* D26: bit i = PSN base + i; exactly 5 and 8 are missing up to 11 */
	for (uint32_t psn = base; psn <= 11; psn++)
		ASSERT_EQ((p.seth.sack_bitmap >> (psn - base)) & 1, psn != 5 && psn != 8);
	ASSERT_U64_EQ(p.seth.sack_bitmap, 0x76);
	ASSERT_EQ(p.payload_len, 0);
}

TEST(wire, pkt_decode__rejects_every_truncation_of_every_kind)
{
	/* With no payload, every shorter length is malformed. */
	for (size_t i = 0; i < N_KINDS; i++) {
		static uint8_t buf[PKT_BUF];
		struct kind k = kinds[i];
		struct mrcp_pkt p;
		size_t n;

		k.payload_len = 0;
		n = encode_kind(&k, buf, &p);
		ASSERT_EQ(n, k.hdr_len);
		for (size_t len = 0; len < n; len++)
			if (decode_exact(buf, len, &p) != -EBADMSG)
				mrcp_test_fail(__FILE__, __LINE__, "%s: %zu of %zu bytes accepted",
					       k.name, len, n);
	}
}

TEST(wire, pkt_decode__truncated_payload_is_caught_unless_4_byte_aligned)
{
	/* The wire carries no payload length: the IP/UDP length and the ICRC
	 * (lib/dp) catch a cut at a 4-byte boundary inside the payload. Here:
	 * a cut in the headers or off the boundary is rejected, and one on it
	 * decodes as a shorter payload (or fails if PadCnt no longer fits). */
	for (size_t i = 0; i < N_KINDS; i++) {
		static uint8_t buf[PKT_BUF];
		const struct kind *k = &kinds[i];
		uint8_t pad = pad_of(k->payload_len);
		struct mrcp_pkt p;
		size_t n;

		if (k->payload_len == 0)
			continue;
		n = encode_kind(k, buf, &p);
		for (size_t len = 0; len < n; len++) {
			int rc = decode_exact(buf, len, &p);

			if (len < k->hdr_len || len % 4 != 0 || len - k->hdr_len < pad) {
				if (rc != -EBADMSG)
					mrcp_test_fail(__FILE__, __LINE__,
						       "%s: %zu of %zu bytes accepted", k->name, len, n);
			} else {
				ASSERT_EQ(rc, 0);
				ASSERT_EQ(p.payload_len, len - k->hdr_len - pad);
			}
		}
	}
}

TEST(wire, pkt_decode__rejects_overlong_control_packets)
{
	for (size_t i = 0; i < N_KINDS; i++) {
		static uint8_t buf[PKT_BUF];
		struct mrcp_pkt p;
		size_t n;

		if (mrcp_opcode_is_data(kinds[i].op))
			continue;
		n = encode_kind(&kinds[i], buf, &p);
		memset(buf + n, 0, 64);
		ASSERT_EQ(decode_exact(buf, n, &p), 0);
		for (size_t extra = 1; extra <= 64; extra++)
			ASSERT_EQ(decode_exact(buf, n + extra, &p), -EBADMSG);
	}
}

TEST(wire, pkt_decode__rejects_unknown_opcodes)
{
	for (size_t i = 0; i < N_KINDS; i++) {
		static uint8_t buf[PKT_BUF];
		struct mrcp_pkt p;
		size_t n = encode_kind(&kinds[i], buf, &p);

		for (unsigned v = 0; v < 256; v++) {
			if (op_index(v) >= 0)
				continue;
			buf[0] = (uint8_t)v;
			ASSERT_EQ(decode_exact(buf, n, &p), -EBADMSG);
		}
	}
}

TEST(wire, pkt_decode__rejects_nonzero_tver)
{
	for (size_t i = 0; i < N_KINDS; i++) {
		static uint8_t buf[PKT_BUF];
		struct mrcp_pkt p;
		size_t n = encode_kind(&kinds[i], buf, &p);

		for (uint8_t tver = 1; tver < 16; tver++) {
			buf[1] = (uint8_t)((buf[1] & 0xF0) | tver);
			ASSERT_EQ(decode_exact(buf, n, &p), -EBADMSG);
		}
	}
}

TEST(wire, pkt_decode__rejects_ts_on_control)
{
	for (size_t i = 0; i < N_KINDS; i++) {
		static uint8_t buf[PKT_BUF];
		struct mrcp_pkt p;
		size_t n;

		if (mrcp_opcode_is_data(kinds[i].op))
			continue;
		n = encode_kind(&kinds[i], buf, &p);
		buf[8] |= 0x10;
		ASSERT_EQ(decode_exact(buf, n, &p), -EBADMSG);
		memset(buf + n, 0, 4); /* even with room for a TSETH */
		ASSERT_EQ(decode_exact(buf, n + 4, &p), -EBADMSG);
	}
}

TEST(wire, pkt_decode__ts_flag_selects_tseth)
{
	static uint8_t buf[PKT_BUF];
	struct mrcp_pkt p;
	size_t n = encode_kind(kind_named("write_only/no_tseth"), buf, &p); /* 16 B payload */

	ASSERT_EQ(decode_exact(buf, n, &p), 0);
	ASSERT_EQ(p.hdrs, MRCP_HDR_METH | MRCP_HDR_RETH);
	ASSERT_EQ(p.payload_len, 16);
	/* Setting ts turns the first 4 bytes of RETH into a TSETH: still well
	 * formed, but RETH now starts 4 bytes later and the payload is shorter. */
	buf[8] |= 0x10;
	ASSERT_EQ(decode_exact(buf, n, &p), 0);
	ASSERT_EQ(p.hdrs, MRCP_HDR_METH | MRCP_HDR_TSETH | MRCP_HDR_RETH);
	ASSERT_EQ(p.payload_len, 12);
	ASSERT_EQ(p.tseth.tx_timestamp, 0x0123); /* RETH bytes 0-3: 01 23 45 67 */
	ASSERT_FALSE(p.tseth.tsr);
	ASSERT_EQ(p.tseth.ftype, 0x7);
	ASSERT_U64_EQ(p.reth.va, 0x89ABCDEFDEADBEEFull);
	ASSERT_EQ(p.reth.rkey, 0x00012345);
}

TEST(wire, pkt_decode__rejects_undefined_enum_values)
{
	static uint8_t buf[PKT_BUF];
	struct mrcp_pkt p;
	size_t n;

	n = encode_kind(kind_named("ack"), buf, &p); /* AETH byte 0 at 12 */
	for (unsigned s = 0; s < 256; s++) {
		buf[12] = (uint8_t)s;
		ASSERT_EQ(decode_exact(buf, n, &p), syndrome_defined(s) ? 0 : -EBADMSG);
	}
	n = encode_kind(kind_named("ep_request"), buf, &p); /* ERTH flags at 13 */
	for (uint8_t op = 0; op < 4; op++) {
		buf[13] = op;
		ASSERT_EQ(decode_exact(buf, n, &p), op < 2 ? 0 : -EBADMSG);
	}
	n = encode_kind(kind_named("ep_response"), buf, &p); /* EETH flags at 13, op(5:4) */
	for (uint8_t op = 0; op < 4; op++) {
		buf[13] = (uint8_t)(op << 4);
		ASSERT_EQ(decode_exact(buf, n, &p), op < 2 ? 0 : -EBADMSG);
		if (op < 2)
			ASSERT_EQ(op, p.eeth.op);
	}
}

TEST(wire, pkt_decode__seth_m3_decodes_as_none)
{
	uint8_t buf[48];
	struct mrcp_pkt p;

	memcpy(buf, spec_sack, sizeof(buf));
	buf[13] = 0x60;
	ASSERT_EQ(mrcp_pkt_decode(buf, sizeof(buf), &p), 0);
	ASSERT_EQ(p.seth.m, MRCP_VERDICT_NONE);
}

TEST(wire, pkt_decode__accepts_unknown_nack_codes)
{
	static uint8_t buf[PKT_BUF];
	struct mrcp_pkt p;
	size_t n = encode_kind(kind_named("nack"), buf, &p); /* NETH code at 12 + 2 */

	for (unsigned c = 0; c < 256; c++) {
		buf[14] = (uint8_t)c;
		ASSERT_EQ(decode_exact(buf, n, &p), 0); /* D22 */
		ASSERT_EQ(p.neth.nack_code, c);
	}
}

TEST(wire, pkt_decode__rejects_padcnt_not_matching_length)
{
	static uint8_t buf[PKT_BUF];
	struct mrcp_pkt p;
	size_t n;

	/* zero-length write: any PadCnt announces pad that is not there */
	n = encode_kind(kind_named("write_only/zero_len"), buf, &p);
	for (uint8_t pad = 1; pad < 4; pad++) {
		buf[1] = (uint8_t)(pad << 4);
		ASSERT_EQ(decode_exact(buf, n, &p), -EBADMSG);
	}
	/* 4 bytes after the headers: payload 4 - PadCnt */
	n = encode_kind(kind_named("write_only/zero_len"), buf, &p);
	memset(buf + n, 0xEE, 4);
	for (uint8_t pad = 0; pad < 4; pad++) {
		buf[1] = (uint8_t)(pad << 4);
		ASSERT_EQ(decode_exact(buf, n + 4, &p), 0);
		ASSERT_EQ(p.payload_len, 4u - pad);
	}
	/* control packets carry no pad */
	for (size_t i = 0; i < N_KINDS; i++) {
		if (mrcp_opcode_is_data(kinds[i].op))
			continue;
		n = encode_kind(&kinds[i], buf, &p);
		for (uint8_t pad = 1; pad < 4; pad++) {
			buf[1] = (uint8_t)(pad << 4);
			ASSERT_EQ(decode_exact(buf, n, &p), -EBADMSG);
		}
	}
}

TEST(wire, pkt_decode__rejects_unaligned_data_length)
{
	static uint8_t buf[PKT_BUF];
	struct mrcp_pkt p;
	size_t n = encode_kind(kind_named("write_first"), buf, &p); /* 64 B payload */

	for (size_t extra = 1; extra < 4; extra++)
		ASSERT_EQ(decode_exact(buf, n + extra, &p), -EBADMSG);
	ASSERT_EQ(decode_exact(buf, n + 4, &p), 0);
	ASSERT_EQ(p.payload_len, 68);
}

TEST(wire, pkt_decode__rejects_payload_above_max)
{
	static uint8_t buf[PKT_BUF];
	struct mrcp_pkt p;
	size_t n = encode_kind(kind_named("write_only/max"), buf, &p);

	ASSERT_EQ(decode_exact(buf, n, &p), 0);
	ASSERT_EQ(p.payload_len, MRCP_PAYLOAD_MAX);
	for (uint8_t pad = 0; pad < 4; pad++) {
		/* 4100 bytes after the headers: 4097..4100 of payload */
		buf[1] = (uint8_t)(pad << 4);
		ASSERT_EQ(decode_exact(buf, n + 4, &p), -EBADMSG);
	}
	buf[1] = 0x30; /* the same 4096 bytes read as 4093 of payload + 3 of pad */
	ASSERT_EQ(decode_exact(buf, n, &p), 0);
	ASSERT_EQ(p.payload_len, MRCP_PAYLOAD_MAX - 3);
}

TEST(wire, pkt_decode__ignores_reserved_bth_bits)
{
	for (size_t i = 0; i < N_KINDS; i++) {
		static uint8_t buf[PKT_BUF];
		struct mrcp_pkt p, q;
		size_t n = encode_kind(&kinds[i], buf, &p);

		buf[4] = 0xFF;  /* masked to ones for the ICRC */
		buf[8] |= 0x4F; /* D10 */
		ASSERT_EQ(decode_exact(buf, n, &q), 0);
		q.payload = p.payload;
		ASSERT_TRUE(same_pkt(&p, &q));
	}
}

/* ---- mrcp_pkt_decode_hdr ------------------------------------------------------ */

TEST(wire, pkt_decode_hdr__returns_what_is_left_of_a_trimmed_packet)
{
	static uint8_t buf[PKT_BUF];
	struct mrcp_pkt p, q;
	size_t n = encode_kind(kind_named("write_middle"), buf, &p); /* 1024 B */

	ASSERT_EQ(n, 36 + 1024);
	for (size_t cut = 36; cut < 36 + 64; cut++) {
		uint8_t *copy = dup_exact(buf, cut);

		memset(&q, 0x5A, sizeof(q));
		ASSERT_EQ(mrcp_pkt_decode_hdr(copy, cut, &q), 0);
		ASSERT_TRUE(q.payload == copy + 36);
		ASSERT_EQ(q.payload_len, cut - 36);
		ASSERT_EQ(q.hdrs, p.hdrs);
		ASSERT_TRUE(same_bth(&q.bth, &p.bth));
		ASSERT_TRUE(same_meth(&q.meth, &p.meth));
		ASSERT_TRUE(same_tseth(&q.tseth, &p.tseth));
		ASSERT_TRUE(same_reth(&q.reth, &p.reth));
		free(copy);
	}
}

TEST(wire, pkt_decode_hdr__agrees_with_pkt_decode_on_whole_packets)
{
	for (size_t i = 0; i < N_KINDS; i++) {
		static uint8_t buf[PKT_BUF];
		const struct kind *k = &kinds[i];
		struct mrcp_pkt p, q;
		size_t n = encode_kind(k, buf, &p);

		ASSERT_EQ(mrcp_pkt_decode(buf, n, &p), 0);
		ASSERT_EQ(mrcp_pkt_decode_hdr(buf, n, &q), 0);
		ASSERT_EQ(q.payload_len, n - k->hdr_len); /* pad included */
		q.payload_len = p.payload_len;
		ASSERT_TRUE(same_pkt(&p, &q));
	}
}

TEST(wire, pkt_decode_hdr__rejects_every_header_truncation)
{
	for (size_t i = 0; i < N_KINDS; i++) {
		static uint8_t buf[PKT_BUF];
		const struct kind *k = &kinds[i];
		struct mrcp_pkt p;

		(void)encode_kind(k, buf, &p);
		for (size_t len = 0; len < k->hdr_len; len++)
			if (decode_hdr_exact(buf, len, &p) != -EBADMSG)
				mrcp_test_fail(__FILE__, __LINE__, "%s: %zu header bytes accepted",
					       k->name, len);
		ASSERT_EQ(decode_hdr_exact(buf, k->hdr_len, &p), 0);
	}
}

TEST(wire, pkt_decode_hdr__applies_the_header_checks)
{
	static uint8_t buf[PKT_BUF];
	struct mrcp_pkt p;
	size_t n;

	n = encode_kind(kind_named("write_first"), buf, &p);
	buf[0] = 0xC5; /* unknown opcode */
	ASSERT_EQ(decode_hdr_exact(buf, n, &p), -EBADMSG);
	n = encode_kind(kind_named("write_first"), buf, &p);
	buf[1] |= 0x01; /* TVer */
	ASSERT_EQ(decode_hdr_exact(buf, n, &p), -EBADMSG);
	n = encode_kind(kind_named("ack"), buf, &p);
	buf[8] |= 0x10; /* ts on a control packet */
	ASSERT_EQ(decode_hdr_exact(buf, n + 4, &p), -EBADMSG);
	n = encode_kind(kind_named("ack"), buf, &p);
	buf[12] = 0x00; /* AETH syndrome */
	ASSERT_EQ(decode_hdr_exact(buf, n, &p), -EBADMSG);
	n = encode_kind(kind_named("ep_request"), buf, &p);
	buf[13] = 0x02; /* ERTH op */
	ASSERT_EQ(decode_hdr_exact(buf, n, &p), -EBADMSG);
}

TEST(wire, pkt_decode_hdr__keeps_trailing_bytes_of_control_packets)
{
	static uint8_t buf[PKT_BUF];
	struct mrcp_pkt p;
	size_t n = encode_kind(kind_named("ack"), buf, &p);

	memset(buf + n, 0xEE, 3);
	ASSERT_EQ(decode_hdr_exact(buf, n + 3, &p), 0);
	ASSERT_EQ(p.payload_len, 3);
	ASSERT_EQ(mrcp_pkt_decode(buf, n + 3, &p), -EBADMSG);
}

/* The Write fast path must produce exactly what the full encoder does. */
/* ---- mrcp_pkt_decode_rx, mrcp_write_decode, mrcp_write_from_pkt --------------- */

/* The mrcp_write view agrees with the generic decode @p of the same bytes. */
static void check_write_view(const char *name, const struct mrcp_pkt *p, const struct mrcp_write *w)
{
	bool ts = (p->hdrs & MRCP_HDR_TSETH) != 0;

	if (w->dest_qp != p->bth.dest_qp || w->psn != p->bth.psn || w->opcode != p->bth.opcode ||
	    w->ack_req != p->bth.ack_req || w->rtx != p->bth.rtx || w->ts != ts ||
	    w->tx_timestamp != (ts ? p->tseth.tx_timestamp : 0) || w->rq_msn != p->meth.rq_msn ||
	    w->msn != p->meth.msn || w->va != p->reth.va || w->rkey != p->reth.rkey ||
	    w->dma_len != p->reth.dma_len || w->imm != ((p->hdrs & MRCP_HDR_IMM) ? p->imm : 0) ||
	    w->payload != p->payload || w->payload_len != p->payload_len)
		mrcp_test_fail(__FILE__, __LINE__, "%s: the write view differs", name);
}

/* mrcp_write_decode on @buf[0..len) accepts exactly the Writes mrcp_pkt_decode
 * accepted (@rc, @p), to the same fields; mrcp_write_from_pkt agrees too. */
static void check_write_agrees(const char *name, const uint8_t *buf, size_t len, int rc,
			       const struct mrcp_pkt *p)
{
	bool write = rc == 0 && mrcp_opcode_is_data(p->bth.opcode);
	struct mrcp_write w;
	int rc_w;

	memset(&w, 0x5A, sizeof(w));
	rc_w = mrcp_write_decode(buf, len, &w);
	if (rc_w != (write ? 0 : -EBADMSG))
		mrcp_test_fail(__FILE__, __LINE__, "%s, %zu B: decode %d, write_decode %d", name, len, rc, rc_w);
	if (!write)
		return;
	check_write_view(name, p, &w);
	memset(&w, 0x5A, sizeof(w));
	mrcp_write_from_pkt(p, &w);
	check_write_view(name, p, &w);
}

/* decode_rx and decode on @buf[0..len) (exact-size copies): the same return
 * value, and on success the same fields and payload. */
static void check_rx_agrees(const char *name, const uint8_t *buf, size_t len)
{
	uint8_t *copy = dup_exact(buf, len);
	struct mrcp_pkt p, q;
	int rc = mrcp_pkt_decode(copy, len, &p);
	int rc_rx;

	memset(&q, 0x5A, sizeof(q));
	rc_rx = mrcp_pkt_decode_rx(copy, len, &q);
	if (rc != rc_rx)
		mrcp_test_fail(__FILE__, __LINE__, "%s, %zu B: decode %d, decode_rx %d", name, len, rc, rc_rx);
	if (rc == 0) {
		if (!same_pkt(&p, &q) || p.payload != q.payload)
			mrcp_test_fail(__FILE__, __LINE__, "%s, %zu B: decode_rx differs", name, len);
		/* the fields outside the control union match too (zeroed when absent) */
		ASSERT_TRUE(memcmp(&p.meth, &q.meth, sizeof(p.meth)) == 0);
		ASSERT_EQ(p.tseth.tx_timestamp, q.tseth.tx_timestamp);
		ASSERT_EQ(p.tseth.tsr, q.tseth.tsr);
		ASSERT_EQ(p.tseth.ftype, q.tseth.ftype);
		ASSERT_EQ(p.reth.va, q.reth.va);
		ASSERT_EQ(p.reth.rkey, q.reth.rkey);
		ASSERT_EQ(p.reth.dma_len, q.reth.dma_len);
		ASSERT_EQ(p.imm, q.imm);
	}
	check_write_agrees(name, copy, len, rc, &p);
	free(copy);
}

TEST(wire, pkt_decode_rx_and_write_decode__agree_with_pkt_decode)
{
	for (size_t i = 0; i < N_KINDS; i++) {
		static uint8_t buf[PKT_BUF];
		const struct kind *k = &kinds[i];
		struct mrcp_pkt p;
		size_t n = encode_kind(k, buf, &p);

		/* every truncation and one byte too many */
		for (size_t len = 0; len <= n + 1; len++)
			check_rx_agrees(k->name, buf, len);
		/* every bit of the headers and of the first payload bytes */
		for (size_t bit = 0; bit < (k->hdr_len + 8) * 8 && bit < n * 8; bit++) {
			buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
			check_rx_agrees(k->name, buf, n);
			buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		}
		/* every opcode byte on this packet's bytes */
		for (unsigned op = 0; op < 256; op++) {
			uint8_t keep = buf[0];

			buf[0] = (uint8_t)op;
			check_rx_agrees(k->name, buf, n);
			buf[0] = keep;
		}
	}
}

/* ---- mrcp_sack_encode ------------------------------------------------------- */

TEST(wire, sack_encode__equals_full_encode)
{
	static const uint32_t qpns[] = { 0, 0x42, MRCP_QPN_MASK };

	for (unsigned i = 0; i < sizeof(qpns) / sizeof(qpns[0]); i++) {
		for (unsigned v = 0; v < 2; v++) {
			struct mrcp_pkt p;
			uint8_t want[64], got[64];
			int n;

			ASSERT_EQ(0, mrcp_pkt_init(&p, MRCP_OP_SACK, qpns[i], v ? seth_max.cack_psn : seth_sample.cack_psn));
			p.seth = v ? seth_max : seth_sample;
			p.cc = cc_sample;
			n = mrcp_pkt_encode_hdr(&p, want, sizeof(want));
			ASSERT_EQ(48, n);
			memset(got, 0xA5, sizeof(got));
			ASSERT_EQ(48, mrcp_sack_encode(qpns[i], &p.seth, &p.cc, got, sizeof(got)));
			ASSERT_TRUE(memcmp(want, got, 48) == 0);
			ASSERT_EQ(0xA5, got[48]);
		}
	}
}

/* The engine's inline writer: the same bytes as mrcp_sack_encode() for
 * every field in range - the samples, the maxima, zeros, and fields drawn at
 * random within their widths. */
TEST(wire, sack_hdr_write__equals_sack_encode)
{
	static const uint32_t qpns[] = { 0, 0x42, MRCP_QPN_MASK };
	uint64_t x = 0x9E3779B97F4A7C15ull;

	for (unsigned i = 0; i < 3 + 200; i++) {
		struct mrcp_seth seth;
		struct mrcp_cc_state cc;
		uint32_t qpn;
		uint8_t want[64], got[64];

		if (i < 3) {
			seth = i == 0 ? seth_sample : i == 1 ? seth_max : (struct mrcp_seth){ 0 };
			cc = i == 0 ? cc_sample : i == 1 ? cc_max : (struct mrcp_cc_state){ 0 };
			qpn = qpns[i];
		} else {
			uint64_t r[4];

			for (unsigned k = 0; k < 4; k++) { /* xorshift64 */
				x ^= x << 13;
				x ^= x >> 7;
				x ^= x << 17;
				r[k] = x;
			}
			qpn = (uint32_t)r[0] & MRCP_QPN_MASK;
			seth = (struct mrcp_seth){
				.m = (uint8_t)(r[0] >> 24) % 3, .pr = (r[0] >> 26 & 1) != 0,
				.ack_psn_offset = (int16_t)(r[0] >> 32), .entropy = (uint32_t)r[1],
				.spdcid = (uint16_t)(r[1] >> 32), .dpdcid = (uint16_t)(r[1] >> 48),
				.svc_time = (uint8_t)(r[0] >> 48), .cack_psn = (uint32_t)r[2] & 0xFFFFFF,
				.cc_type = (uint8_t)(r[2] >> 24 & 0xF), .cc_flags = (uint8_t)(r[2] >> 28 & 0xF),
				.mpr = (uint8_t)(r[2] >> 32), .sack_offset = (int16_t)(r[2] >> 40), .sack_bitmap = r[3],
			};
			cc = (struct mrcp_cc_state){
				.tx_timestamp = (uint16_t)(r[0] >> 56 | r[1] << 8), .ooo_count = (uint16_t)(r[3] & 0x7FFF),
				.r_c = (r[3] >> 15 & 1) != 0, .rcv_cwnd_pen = (uint8_t)(r[3] >> 16 & 0x7F),
				.rcvd_bytes = (uint32_t)(r[3] >> 24) & 0xFFFFFF,
			};
		}
		memset(want, 0x5A, sizeof(want));
		memset(got, 0xA5, sizeof(got));
		ASSERT_EQ(48, mrcp_sack_encode(qpn, &seth, &cc, want, sizeof(want)));
		ASSERT_EQ(48, (int)mrcp_sack_hdr_write(got, qpn, &seth, &cc));
		ASSERT_TRUE(memcmp(want, got, 48) == 0);
		ASSERT_EQ(0xA5, got[48]);
	}
}

/* The engine's inline AETH writer: the bytes of mrcp_pkt_init(ACK) and
 * mrcp_pkt_encode_hdr() for every syndrome, extreme and random fields. */
TEST(wire, ack_hdr_write__equals_full_encode)
{
	static const uint8_t syn[] = { MRCP_AETH_ACK, MRCP_AETH_NAK_INVALID_REQ, MRCP_AETH_NAK_REMOTE_ACCESS,
				       MRCP_AETH_NAK_REMOTE_OP };
	uint64_t x = 0x2545F4914F6CDD1Dull;

	for (unsigned i = 0; i < 4 * 50; i++) {
		struct mrcp_pkt p;
		uint32_t qpn, psn;
		uint16_t msn;
		uint8_t want[64], got[64];

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		if (i < 4) {
			qpn = psn = 0;
			msn = 0;
		} else if (i < 8) {
			qpn = MRCP_QPN_MASK;
			psn = 0xFFFFFFu;
			msn = 0xFFFF;
		} else {
			qpn = (uint32_t)x & MRCP_QPN_MASK;
			psn = (uint32_t)(x >> 24) & 0xFFFFFFu;
			msn = (uint16_t)(x >> 48);
		}
		ASSERT_EQ(0, mrcp_pkt_init(&p, MRCP_OP_ACK, qpn, psn));
		p.aeth.syndrome = syn[i % 4];
		p.aeth.msn = msn;
		memset(want, 0x5A, sizeof(want));
		memset(got, 0xA5, sizeof(got));
		ASSERT_EQ(16, mrcp_pkt_encode_hdr(&p, want, sizeof(want)));
		ASSERT_EQ(16, (int)mrcp_ack_hdr_write(got, qpn, psn, syn[i % 4], msn));
		ASSERT_TRUE(memcmp(want, got, 16) == 0);
		ASSERT_EQ(0xA5, got[16]);
	}
}

TEST(wire, sack_encode__rejects_short_cap_and_bad_fields)
{
	struct mrcp_seth seth = seth_sample;
	struct mrcp_cc_state cc = cc_sample;
	uint8_t buf[64];

	memset(buf, 0xA5, sizeof(buf));
	ASSERT_EQ(-ENOBUFS, mrcp_sack_encode(1, &seth, &cc, buf, 47));
	ASSERT_EQ(0xA5, buf[0]);
	ASSERT_EQ(-EINVAL, mrcp_sack_encode(MRCP_QPN_MASK + 1, &seth, &cc, buf, sizeof(buf)));
	seth.m = 3;
	ASSERT_EQ(-EINVAL, mrcp_sack_encode(1, &seth, &cc, buf, sizeof(buf)));
	seth = seth_sample;
	cc.ooo_count = 0x8000;
	ASSERT_EQ(-EINVAL, mrcp_sack_encode(1, &seth, &cc, buf, sizeof(buf)));
}

TEST(wire, data_hdr_template__equals_full_encode)
{
	static const uint32_t qpns[] = { 0, 0x123456, MRCP_QPN_MASK };

	for (int imm = 0; imm < 2; imm++) {
		for (unsigned i = 0; i < sizeof(qpns) / sizeof(qpns[0]); i++) {
			struct mrcp_pkt t;
			uint8_t want[MRCP_DATA_HDR_MAX], got[MRCP_DATA_HDR_MAX + 1];
			int n;

			ASSERT_EQ(0, mrcp_pkt_init(&t, imm ? MRCP_OP_WRITE_ONLY_IMM : MRCP_OP_WRITE_ONLY, qpns[i], 0));
			t.meth.msn = (uint16_t)(0xFEDC + i);
			t.meth.rq_msn = (uint16_t)(0x0102 + i);
			t.reth.rkey = 0xDEADBEEF - i;
			t.reth.dma_len = 100000 + i;
			t.imm = 0xCAFEF00D;
			n = mrcp_pkt_encode_hdr(&t, want, sizeof(want));
			memset(got, 0xA5, sizeof(got));
			ASSERT_EQ((size_t)n, mrcp_data_hdr_template(got, qpns[i], t.meth.msn, t.meth.rq_msn, t.reth.rkey,
								    t.reth.dma_len, imm, t.imm));
			ASSERT_MEMEQ(want, got, (size_t)n);
			ASSERT_EQ(0xA5, got[n]);
		}
	}
}

TEST(wire, data_hdr_patch__equals_full_encode)
{
	static const uint8_t ops[] = {MRCP_OP_WRITE_FIRST, MRCP_OP_WRITE_MIDDLE, MRCP_OP_WRITE_LAST,
				      MRCP_OP_WRITE_LAST_IMM, MRCP_OP_WRITE_ONLY, MRCP_OP_WRITE_ONLY_IMM};

	for (int imm = 0; imm < 2; imm++) {
		struct mrcp_pkt t;
		uint8_t tmpl[MRCP_DATA_HDR_MAX];

		ASSERT_EQ(0, mrcp_pkt_init(&t, imm ? MRCP_OP_WRITE_ONLY_IMM : MRCP_OP_WRITE_ONLY, 0x123456, 0));
		t.meth.msn = 0x1234;
		t.meth.rq_msn = 0x0042;
		t.reth.rkey = 0xDEADBEEF;
		t.reth.dma_len = 100000;
		t.imm = 0xCAFEF00D;
		ASSERT_EQ(imm ? (int)MRCP_DATA_HDR_MAX : (int)MRCP_DATA_HDR_LEN,
			  mrcp_pkt_encode_hdr(&t, tmpl, sizeof(tmpl)));
		for (unsigned k = 0; k < sizeof(ops); k++) {
			bool op_imm = ops[k] == MRCP_OP_WRITE_LAST_IMM || ops[k] == MRCP_OP_WRITE_ONLY_IMM;
			if (op_imm && !imm)
				continue;
			for (int flags = 0; flags < 16; flags++) {
				struct mrcp_pkt p;
				uint8_t full[64], fast[MRCP_DATA_HDR_MAX];
				uint32_t psn = 0xFFFFF0u + (uint32_t)flags;
				int n;

				ASSERT_EQ(0, mrcp_pkt_init(&p, ops[k], 0x123456, psn));
				p.meth = t.meth;
				p.reth = t.reth;
				p.reth.va = 0x1122334455667788ull + (uint64_t)flags * 4096;
				p.imm = t.imm;
				p.bth.ack_req = flags & 1;
				p.bth.rtx = (flags >> 1) & 1;
				p.tseth.tx_timestamp = (uint16_t)(0xABCD + flags);
				p.payload_len = (uint32_t)(4096 - (flags >> 2));
				n = mrcp_pkt_encode_hdr(&p, full, sizeof(full));
				memcpy(fast, tmpl, sizeof(fast));
				ASSERT_EQ(n, (int)mrcp_data_hdr_patch(fast, ops[k], (uint8_t)((4 - (p.payload_len & 3)) & 3),
								 p.bth.ack_req, p.bth.rtx, psn, p.tseth.tx_timestamp,
								 p.reth.va));
				ASSERT_MEMEQ(full, fast, (size_t)n);
			}
		}
	}
}

TEST(wire, pkt_init__every_kind_encodes_as_initialised)
{
	static const uint8_t ops[] = {MRCP_OP_WRITE_FIRST, MRCP_OP_WRITE_MIDDLE, MRCP_OP_WRITE_LAST,
				      MRCP_OP_WRITE_LAST_IMM, MRCP_OP_WRITE_ONLY, MRCP_OP_WRITE_ONLY_IMM,
				      MRCP_OP_ACK, MRCP_OP_EP_REQUEST, MRCP_OP_EP_RESPONSE,
				      MRCP_OP_SACK, MRCP_OP_NACK, MRCP_OP_PROBE};

	for (unsigned i = 0; i < sizeof(ops); i++) {
		struct mrcp_pkt p, q;
		uint8_t buf[128];
		int n;

		ASSERT_EQ(0, mrcp_pkt_init(&p, ops[i], 0x42, 7));
		n = mrcp_pkt_encode(&p, buf, sizeof(buf));
		ASSERT_GT(n, 0);
		ASSERT_EQ(0, mrcp_pkt_decode(buf, (size_t)n, &q));
		ASSERT_EQ(ops[i], q.bth.opcode);
	}
	{
		struct mrcp_pkt p;
		ASSERT_EQ(0, mrcp_pkt_init(&p, MRCP_OP_ACK, 1, 1));
		ASSERT_EQ(MRCP_AETH_ACK, p.aeth.syndrome);
		ASSERT_EQ(0, mrcp_pkt_init(&p, MRCP_OP_PROBE, 1, 1));
		ASSERT_EQ(MRCP_TSETH_FTYPE, p.peth.ftype);
	}
}
