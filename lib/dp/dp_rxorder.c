/*
 * dp_rxorder.c - see dp_rxorder.h.
 *
 * Why (D72): frames that waited in the RX rings while this host did not run
 * arrive as one batch, and the order the rings are read in is not the
 * order the peer sent them. The engine SACKs every few packets (D28) and
 * answers a probe at once, so a batch taken in ring order would report a
 * later PSN as arrived and an earlier one, read further on in the same
 * batch, as missing, and the sender would take this host's pause for loss
 * on the earlier one's path. In PSN order, every SACK covers what was here
 * before its trigger, and with control packets after the data a probe's
 * answer reports every packet that was here when it was read.
 *
 * An insertion sort: mrcd__rx_ports reads the ports interleaved, so a
 * batch comes nearly sorted and costs about one comparison per packet.
 */
#include <stdbool.h>

#include "dp_rxorder.h"
#include "mrcp_bytes.h"
#include "mrcp_seq.h"
#include "mrcp_wire.h"

static bool is_data(const struct mrcp_rx *r)
{
	return r->len >= sizeof(struct mrcp_bth_wire) && mrcp_opcode_is_data(r->data[0]);
}

/* Does @a go before @b? */
static bool before(const struct mrcp_rx *a, const struct mrcp_rx *b)
{
	const struct mrcp_bth_wire *ha = (const void *)a->data, *hb = (const void *)b->data;
	bool da = is_data(a), db = is_data(b);
	uint32_t qa, qb;

	if (da != db)
		return da;
	if (!da)
		return false;
	qa = mrcp_get_be24(ha->dest_qp);
	qb = mrcp_get_be24(hb->dest_qp);
	if (qa != qb)
		return qa < qb;
	return mrcp_psn_lt(mrcp_get_be24(ha->psn), mrcp_get_be24(hb->psn));
}

void mrcd_rx_order(struct mrcp_rx *rx, unsigned n)
{
	for (unsigned i = 1; i < n; i++) {
		struct mrcp_rx x = rx[i];
		unsigned j = i;

		while (j > 0 && before(&x, &rx[j - 1])) {
			rx[j] = rx[j - 1];
			j--;
		}
		rx[j] = x;
	}
}
