/* fake_link.c - the fake link of fake_link.h: flattens and decodes every
 * transmit descriptor, logs it, and in link mode carries it to the other
 * engine after a constant delay. Knows nothing about what a test checks. */
#include "fake_link.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_fx.h"
#include "mrcp_test.h"

void fake_link_init(struct fake_link *l, unsigned cap_out)
{
	memset(l, 0, sizeof(*l));
	if (cap_out != 0) {
		l->out = calloc(cap_out, sizeof(*l->out));
		ASSERT_TRUE(l->out != NULL);
	}
	l->cap_out = cap_out;
}

void fake_link_connect(struct fake_link *l, struct mrcp_engine *e0, struct mrcp_engine *e1,
		       unsigned q_cap)
{
	l->eng[0] = e0;
	l->eng[1] = e1;
	l->q = calloc(q_cap, sizeof(*l->q));
	ASSERT_TRUE(l->q != NULL);
	l->q_cap = q_cap;
	l->delay_ns = 2000;
}

void fake_link_fini(struct fake_link *l)
{
	free(l->out);
	free(l->q);
	l->out = l->q = NULL;
}

void fake_link_format(char *s, size_t cap, const struct mrcp_pkt *p, uint64_t va_base)
{
	const char *name = mrcp_opcode_name(p->bth.opcode);
	size_t n = strnlen(s, cap);

	if (n + 1 >= cap)
		return;
	if (n != 0)
		n += (size_t)snprintf(s + n, cap - n, "; ");
	if (n + 1 >= cap)
		return;
	if (mrcp_opcode_is_data(p->bth.opcode)) {
		n += (size_t)snprintf(s + n, cap - n, "%s psn %u msn %u va+%llu len %u", name, p->bth.psn,
				      p->meth.msn, (unsigned long long)(p->reth.va - va_base), p->payload_len);
		if (n + 1 < cap && p->bth.ack_req)
			n += (size_t)snprintf(s + n, cap - n, " ackreq");
		if (n + 1 < cap && p->bth.rtx)
			snprintf(s + n, cap - n, " rtx");
		return;
	}
	switch (p->bth.opcode) {
	case MRCP_OP_PROBE:
		snprintf(s + n, cap - n, "PROBE psn %u id %u", p->bth.psn, p->peth.probe_id);
		break;
	case MRCP_OP_SACK:
		snprintf(s + n, cap - n, "SACK cack %u ack_off %d sack_off %d bm 0x%llx m %u pr %u",
			 p->seth.cack_psn, p->seth.ack_psn_offset, p->seth.sack_offset,
			 (unsigned long long)p->seth.sack_bitmap, p->seth.m, p->seth.pr);
		break;
	case MRCP_OP_NACK:
		snprintf(s + n, cap - n, "NACK %s psn %u", mrcp_nack_code_name(p->neth.nack_code),
			 p->neth.nack_psn);
		break;
	case MRCP_OP_ACK:
		snprintf(s + n, cap - n, "ACK 0x%02x msn %u psn %u", p->aeth.syndrome, p->aeth.msn,
			 p->bth.psn);
		break;
	case MRCP_OP_EP_REQUEST: /* "seq": the PSN, which numbers the request */
		snprintf(s + n, cap - n, "EP_REQ op %u seq %u mask 0x%x", p->erth.op, p->bth.psn,
			 p->erth.port_status_mask);
		break;
	case MRCP_OP_EP_RESPONSE:
		snprintf(s + n, cap - n, "EP_RESP op %u seq %u rx_port %u mask 0x%x", p->eeth.op, p->bth.psn,
			 p->eeth.rx_port, p->eeth.port_status_mask);
		break;
	default:
		snprintf(s + n, cap - n, "%s psn %u", name ? name : "?", p->bth.psn);
		break;
	}
}

static void log_clear(struct fake_link *l)
{
	l->log[0] = '\0';
	l->log_len = 0;
}

/* Append @text (after "; " when @sep and the log has a line already). */
static void log_add(struct fake_link *l, bool sep, const char *text)
{
	size_t room = sizeof(l->log) - l->log_len;
	int w;

	if (room <= 1)
		return;
	w = snprintf(l->log + l->log_len, room, "%s%s", sep && l->log_len ? "; " : "", text);
	l->log_len = (size_t)w < room ? l->log_len + (size_t)w : sizeof(l->log) - 1;
}

/* Copy @tx into @k as the wire bytes, decode them and log the line. */
static void take(struct fake_link *l, const struct mrcp_tx *tx, int from, struct fake_link_pkt *k)
{
	uint32_t len = tx->hdr_len;

	ASSERT_LE(tx->hdr_len + tx->payload_len + tx->pad, sizeof(k->bytes));
	k->tx = *tx;
	k->from = from;
	k->to = -1;
	memcpy(k->bytes, tx->hdr, tx->hdr_len);
	for (unsigned s = 0; s < tx->n_seg; s++) {
		memcpy(k->bytes + len, tx->seg[s].ptr, tx->seg[s].len);
		len += tx->seg[s].len;
	}
	memset(k->bytes + len, 0, tx->pad);
	len += tx->pad;
	k->len = len;
	ASSERT_EQ(0, mrcp_pkt_decode(k->bytes, len, &k->p));
	if (l->log_len + 1 < sizeof(l->log)) {
		char line[256];
		size_t n = 0;

		line[0] = '\0';
		if (l->q != NULL) /* link mode: the sender in front */
			n = (size_t)snprintf(line, sizeof(line), "%d> ", from);
		fake_link_format(line + n, sizeof(line) - n, &k->p, l->va_base);
		n = strnlen(line, sizeof(line));
		if (l->log_port && n + 1 < sizeof(line))
			snprintf(line + n, sizeof(line) - n, " port %u", tx->port);
		log_add(l, true, line);
	}
}

unsigned fake_link_poll(struct fake_link *l, struct mrcp_engine *e, uint64_t now_ns, unsigned max)
{
	struct mrcp_tx tx[FAKE_LINK_BURST];
	unsigned n = 0, k, want;

	if (max > l->cap_out)
		max = l->cap_out;
	l->n_out = 0;
	log_clear(l);
	do {
		want = max - n < FAKE_LINK_BURST ? max - n : FAKE_LINK_BURST;
		k = want ? mrcp_poll(e, now_ns, tx, want) : 0;
		for (unsigned i = 0; i < k; i++)
			take(l, &tx[i], 0, &l->out[n++]);
	} while (k == want && want != 0);
	l->n_out = n;
	return n;
}

unsigned fake_link_drain(struct fake_link *l, struct mrcp_engine *e, uint64_t now_ns)
{
	struct mrcp_tx tx[FAKE_LINK_BURST];
	unsigned n = 0, k;

	l->n_out = 0;
	log_clear(l);
	do {
		k = mrcp_poll(e, now_ns, tx, FAKE_LINK_BURST);
		for (unsigned i = 0; i < k; i++) {
			ASSERT_LT(n, l->cap_out);
			take(l, &tx[i], 0, &l->out[n++]);
		}
	} while (k == FAKE_LINK_BURST);
	l->n_out = n;
	return n;
}

void fake_link_send(struct fake_link *l, int from, const struct mrcp_tx *tx)
{
	struct fake_link_pkt *k = &l->q[l->qt % l->q_cap];

	ASSERT_LT(l->qt - l->qh, l->q_cap);
	take(l, tx, from, k);
	k->to = 1 - from;
	k->at = l->now + l->delay_ns;
	memset(&k->rx, 0, sizeof(k->rx));
	k->rx.port = tx->port;
	k->rx.ev = tx->ev;
	k->rx.ecn = tx->ecn;
	k->rx.len = k->len;
	fx_ip(&k->rx.src, from, tx->port);
	if (l->drop && l->drop(l->drop_ctx, from, tx, k)) {
		l->dropped++;
		log_add(l, false, " dropped");
		return;
	}
	if (l->trim_next && mrcp_opcode_is_data(tx->opcode)) {
		l->trim_next--;
		k->rx.trim = MRCP_TRIM_FABRIC;
		k->rx.len = tx->hdr_len; /* the header only */
		log_add(l, false, " trimmed");
	}
	l->qt++;
}

void fake_link_run(struct fake_link *l, uint64_t until_ns, bool (*done)(void *ctx), void *ctx,
		   unsigned max_steps)
{
	struct mrcp_tx tx[FAKE_LINK_BURST];

	log_clear(l);
	for (unsigned step = 0; step < max_steps; step++) {
		/* everything due now */
		for (int n = 0; n < FAKE_LINK_NODES; n++) {
			unsigned k = mrcp_poll(l->eng[n], l->now, tx, FAKE_LINK_BURST);

			for (unsigned i = 0; i < k; i++)
				fake_link_send(l, n, &tx[i]);
		}
		while (l->qh != l->qt && l->q[l->qh % l->q_cap].at <= l->now) {
			struct fake_link_pkt *k = &l->q[l->qh % l->q_cap];

			k->rx.data = k->bytes;
			mrcp_rx_burst(l->eng[k->to], &k->rx, 1, l->now);
			l->qh++;
			l->delivered++;
		}
		if (done && done(ctx))
			return;
		/* the next event */
		uint64_t next = UINT64_MAX;

		if (l->qh != l->qt)
			next = l->q[l->qh % l->q_cap].at;
		for (int n = 0; n < FAKE_LINK_NODES; n++) {
			uint64_t d = mrcp_next_deadline(l->eng[n]);

			if (d < next)
				next = d;
		}
		if (next == UINT64_MAX || next > until_ns)
			return;
		l->now = next > l->now ? next : l->now + 1;
	}
}

unsigned fake_link_in_flight(const struct fake_link *l)
{
	return l->qt - l->qh;
}
