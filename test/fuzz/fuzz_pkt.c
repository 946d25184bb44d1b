/* fuzz_pkt.c - libFuzzer target for mrcp_pkt_decode(), mrcp_pkt_decode_rx(),
 * mrcp_write_decode() and mrcp_pkt_decode_hdr():
 * any input either fails with -EBADMSG or decodes to a packet whose lengths obey
 * the framing rules, that re-encodes to exactly its own length, and whose
 * re-encoding decodes to the same fields and re-encodes to the same bytes
 * (the canonical form). Any breach abort()s, so libFuzzer keeps the input. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "mrcp_seq.h"
#include "mrcp_wire.h"

/* Room for the largest legal packet (EETH or SACK headers, or 40 B of Write
 * headers + 4096 B + pad), with margin. */
static uint8_t enc[64 + MRCP_PAYLOAD_MAX + 64];
static uint8_t enc2[sizeof(enc)];

static bool same_bth(const struct mrcp_bth *a, const struct mrcp_bth *b)
{
	return a->opcode == b->opcode && a->se == b->se && a->migreq == b->migreq &&
	       a->pad_cnt == b->pad_cnt && a->tver == b->tver && a->pkey == b->pkey &&
	       a->dest_qp == b->dest_qp && a->ack_req == b->ack_req && a->rtx == b->rtx &&
	       a->ts == b->ts && a->psn == b->psn;
}

/* Every semantic field of the headers @a says are present; not the payload. */
static bool same_headers(const struct mrcp_pkt *a, const struct mrcp_pkt *b)
{
	uint32_t h = a->hdrs;

	if (!same_bth(&a->bth, &b->bth) || a->hdrs != b->hdrs)
		return false;
	if ((h & MRCP_HDR_METH) &&
	    (a->meth.rq_msn != b->meth.rq_msn || a->meth.msn != b->meth.msn))
		return false;
	if ((h & MRCP_HDR_TSETH) &&
	    (a->tseth.tx_timestamp != b->tseth.tx_timestamp || a->tseth.tsr != b->tseth.tsr ||
	     a->tseth.ftype != b->tseth.ftype))
		return false;
	if ((h & MRCP_HDR_RETH) &&
	    (a->reth.va != b->reth.va || a->reth.rkey != b->reth.rkey ||
	     a->reth.dma_len != b->reth.dma_len))
		return false;
	if ((h & MRCP_HDR_IMM) && a->imm != b->imm)
		return false;
	if ((h & MRCP_HDR_AETH) &&
	    (a->aeth.syndrome != b->aeth.syndrome || a->aeth.msn != b->aeth.msn))
		return false;
	if ((h & MRCP_HDR_SETH) &&
	    (a->seth.m != b->seth.m || a->seth.pr != b->seth.pr ||
	     a->seth.ack_psn_offset != b->seth.ack_psn_offset ||
	     a->seth.entropy != b->seth.entropy || a->seth.spdcid != b->seth.spdcid ||
	     a->seth.dpdcid != b->seth.dpdcid || a->seth.svc_time != b->seth.svc_time ||
	     a->seth.cack_psn != b->seth.cack_psn || a->seth.cc_type != b->seth.cc_type ||
	     a->seth.cc_flags != b->seth.cc_flags || a->seth.mpr != b->seth.mpr ||
	     a->seth.sack_offset != b->seth.sack_offset ||
	     a->seth.sack_bitmap != b->seth.sack_bitmap ||
	     a->cc.tx_timestamp != b->cc.tx_timestamp || a->cc.ooo_count != b->cc.ooo_count ||
	     a->cc.r_c != b->cc.r_c || a->cc.rcv_cwnd_pen != b->cc.rcv_cwnd_pen ||
	     a->cc.rcvd_bytes != b->cc.rcvd_bytes))
		return false;
	if ((h & MRCP_HDR_NETH) &&
	    (a->neth.nack_code != b->neth.nack_code || a->neth.vendor_info != b->neth.vendor_info ||
	     a->neth.entropy != b->neth.entropy || a->neth.spdcid != b->neth.spdcid ||
	     a->neth.dpdcid != b->neth.dpdcid || a->neth.nack_psn != b->neth.nack_psn ||
	     a->neth.cc_type != b->neth.cc_type || a->neth.cc_flags != b->neth.cc_flags ||
	     a->neth.tx_timestamp != b->neth.tx_timestamp))
		return false;
	if ((h & MRCP_HDR_PETH) &&
	    (a->peth.probe_id != b->peth.probe_id || a->peth.spdcid != b->peth.spdcid ||
	     a->peth.dpdcid != b->peth.dpdcid || a->peth.tx_timestamp != b->peth.tx_timestamp ||
	     a->peth.tsr != b->peth.tsr || a->peth.ftype != b->peth.ftype))
		return false;
	if ((h & MRCP_HDR_ERTH) &&
	    (a->erth.op != b->erth.op || a->erth.port_status_mask != b->erth.port_status_mask ||
	     a->erth.tx_timestamp != b->erth.tx_timestamp || a->erth.tsr != b->erth.tsr ||
	     a->erth.ftype != b->erth.ftype))
		return false;
	if ((h & MRCP_HDR_EETH) &&
	    (a->eeth.op != b->eeth.op || a->eeth.rx_port != b->eeth.rx_port ||
	     a->eeth.status != b->eeth.status ||
	     a->eeth.port_status_mask != b->eeth.port_status_mask ||
	     a->eeth.svc_time != b->eeth.svc_time || a->eeth.tx_timestamp != b->eeth.tx_timestamp ||
	     a->eeth.tsr != b->eeth.tsr || a->eeth.ftype != b->eeth.ftype))
		return false;
	return true;
}

static bool same_pkt(const struct mrcp_pkt *a, const struct mrcp_pkt *b)
{
	return same_headers(a, b) && a->payload_len == b->payload_len &&
	       (a->payload_len == 0 || memcmp(a->payload, b->payload, a->payload_len) == 0);
}

/* The header set the opcode and ts flag call for (§3.1, D13). */
static uint32_t want_hdrs(const struct mrcp_bth *bth)
{
	return mrcp_opcode_hdrs(bth->opcode) | (bth->ts ? (uint32_t)MRCP_HDR_TSETH : 0);
}

/* A whole packet decoded: check its framing, then re-encode and compare. */
static void check_full(const uint8_t *data, size_t size, const struct mrcp_pkt *p)
{
	bool data_op = mrcp_opcode_is_data(p->bth.opcode);
	size_t hl = mrcp_pkt_hdr_len(p);
	struct mrcp_pkt q;
	int n, n2;

	CHECK(mrcp_opcode_hdrs(p->bth.opcode) != 0);
	CHECK(p->hdrs == want_hdrs(&p->bth));
	CHECK(p->bth.tver == 0 && p->bth.pad_cnt <= 3);
	CHECK(p->bth.dest_qp <= MRCP_QPN_MASK && p->bth.psn <= MRCP_PSN_MASK);
	CHECK(hl <= size && p->payload == data + hl);
	if (data_op) {
		CHECK(size % 4 == 0);
		CHECK(p->payload_len <= MRCP_PAYLOAD_MAX);
		CHECK(hl + p->payload_len + p->bth.pad_cnt == size);
	} else {
		CHECK(!p->bth.ts && p->bth.pad_cnt == 0 && p->payload_len == 0 && hl == size);
	}
	if (p->hdrs & MRCP_HDR_SETH)
		CHECK(p->seth.m <= MRCP_VERDICT_ALWAYS_SKIP && p->cc.ooo_count <= 0x7FFF &&
		      p->cc.rcv_cwnd_pen <= 0x7F);
	CHECK(mrcp_pkt_len(p) == size);

	n = mrcp_pkt_encode(p, enc, sizeof(enc));
	CHECK(n >= 0 && (size_t)n == size);
	if (size > 0)
		CHECK(mrcp_pkt_encode(p, enc2, size - 1) == -ENOBUFS);
	CHECK(mrcp_pkt_decode(enc, (size_t)n, &q) == 0);
	CHECK(q.payload == enc + hl);
	CHECK(same_pkt(p, &q));
	/* the re-encoding is canonical: encoding it again changes nothing */
	n2 = mrcp_pkt_encode(&q, enc2, sizeof(enc2));
	CHECK(n2 == n && memcmp(enc, enc2, (size_t)n) == 0);
}

/* Headers decoded (the rest is a possibly trimmed payload): re-encode the
 * headers alone and compare. */
static void check_hdr(const uint8_t *data, size_t size, const struct mrcp_pkt *h)
{
	bool data_op = mrcp_opcode_is_data(h->bth.opcode);
	size_t hl = mrcp_pkt_hdr_len(h);
	struct mrcp_pkt t, q;
	int n;

	CHECK(h->hdrs == want_hdrs(&h->bth));
	CHECK(hl <= size && h->payload == data + hl && h->payload_len == size - hl);
	/* A payload length whose pad is the PadCnt seen, so the headers come
	 * back bit for bit; control packets carry no pad, so theirs becomes 0. */
	t = *h;
	t.payload = NULL;
	t.payload_len = data_op ? (uint32_t)((4 - h->bth.pad_cnt) & 3) : 0;
	if (!data_op)
		t.bth.pad_cnt = 0;
	n = mrcp_pkt_encode_hdr(&t, enc, sizeof(enc));
	CHECK(n >= 0 && (size_t)n == hl);
	CHECK(mrcp_pkt_decode_hdr(enc, (size_t)n, &q) == 0);
	CHECK(q.payload_len == 0);
	CHECK(same_headers(&t, &q));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mrcp_pkt p, h;
	int rc_full, rc_hdr;

	rc_full = mrcp_pkt_decode(data, size, &p);
	CHECK(rc_full == 0 || rc_full == -EBADMSG);
	if (rc_full == 0)
		check_full(data, size, &p);

	rc_hdr = mrcp_pkt_decode_hdr(data, size, &h);
	CHECK(rc_hdr == 0 || rc_hdr == -EBADMSG);
	if (rc_hdr == 0)
		check_hdr(data, size, &h);

	/* The receive path's decoder agrees with the generic one. */
	{
		struct mrcp_pkt r;
		int rc_rx = mrcp_pkt_decode_rx(data, size, &r);

		CHECK(rc_rx == rc_full);
		if (rc_full == 0)
			CHECK(same_pkt(&p, &r) && r.payload == p.payload);
	}
	/* ...and so does the Write view: exactly the Writes, the same fields. */
	{
		struct mrcp_write w;
		bool write = rc_full == 0 && mrcp_opcode_is_data(p.bth.opcode);
		bool ts = rc_full == 0 && (p.hdrs & MRCP_HDR_TSETH) != 0;

		CHECK(mrcp_write_decode(data, size, &w) == (write ? 0 : -EBADMSG));
		if (write)
			CHECK(w.dest_qp == p.bth.dest_qp && w.psn == p.bth.psn && w.opcode == p.bth.opcode &&
			      w.ack_req == p.bth.ack_req && w.rtx == p.bth.rtx && w.ts == ts &&
			      w.tx_timestamp == (ts ? p.tseth.tx_timestamp : 0) &&
			      w.rq_msn == p.meth.rq_msn && w.msn == p.meth.msn && w.va == p.reth.va &&
			      w.rkey == p.reth.rkey && w.dma_len == p.reth.dma_len &&
			      w.imm == ((p.hdrs & MRCP_HDR_IMM) ? p.imm : 0) && w.payload == p.payload &&
			      w.payload_len == p.payload_len);
	}

	/* Whatever decodes whole also decodes as headers, to the same fields,
	 * with the pad counted as payload. */
	if (rc_full == 0) {
		CHECK(rc_hdr == 0);
		CHECK(same_headers(&p, &h));
		CHECK(h.payload == p.payload &&
		      h.payload_len == p.payload_len + p.bth.pad_cnt);
	}
	return 0;
}
