/* test_dp_rxorder.c - mrcd_rx_order: a batch read from the rings in port
 * order reaches the engine in the order the peer sent it. */
#include <string.h>

#include "dp_rxorder.h"
#include "mrcp_bytes.h"
#include "mrcp_test.h"
#include "mrcp_wire.h"

#define N 16
static uint8_t pkt[N][16];

/* packet @i: @opcode to QP @qp with PSN @psn, @len bytes */
static struct mrcp_rx mk(unsigned i, uint8_t opcode, uint32_t qp, uint32_t psn, uint32_t len)
{
	struct mrcp_bth_wire *h = (struct mrcp_bth_wire *)pkt[i];
	struct mrcp_rx r;

	memset(pkt[i], 0, sizeof(pkt[i]));
	memset(&r, 0, sizeof(r));
	h->opcode = opcode;
	mrcp_put_be24(h->dest_qp, qp);
	mrcp_put_be24(h->psn, psn);
	r.data = pkt[i];
	r.len = len;
	r.port = (uint8_t)(i + 1);
	return r;
}

static uint32_t psn_of(const struct mrcp_rx *r)
{
	return mrcp_get_be24(((const struct mrcp_bth_wire *)r->data)->psn);
}

TEST(dp_rxorder, data__by_psn_whatever_port_it_came_on)
{
	/* four planes read in turn after a pause: plane 1 held 10 and 14,
	 * plane 2 11 and 15, plane 3 only 16, plane 4 12 and 13 */
	struct mrcp_rx rx[7] = {
		mk(0, MRCP_OP_WRITE_ONLY, 7, 10, 12), mk(1, MRCP_OP_WRITE_ONLY, 7, 11, 12),
		mk(2, MRCP_OP_WRITE_ONLY, 7, 16, 12), mk(3, MRCP_OP_WRITE_ONLY, 7, 12, 12),
		mk(4, MRCP_OP_WRITE_ONLY, 7, 14, 12), mk(5, MRCP_OP_WRITE_ONLY, 7, 15, 12),
		mk(6, MRCP_OP_WRITE_ONLY, 7, 13, 12),
	};

	mrcd_rx_order(rx, 7);
	for (unsigned i = 0; i < 7; i++)
		ASSERT_EQ(10u + i, psn_of(&rx[i]));
}

TEST(dp_rxorder, data__psn_order_across_the_24_bit_wrap)
{
	struct mrcp_rx rx[4] = {
		mk(0, MRCP_OP_WRITE_MIDDLE, 7, 1, 12), mk(1, MRCP_OP_WRITE_MIDDLE, 7, 0xFFFFFF, 12),
		mk(2, MRCP_OP_WRITE_MIDDLE, 7, 0, 12), mk(3, MRCP_OP_WRITE_MIDDLE, 7, 0xFFFFFE, 12),
	};

	mrcd_rx_order(rx, 4);
	ASSERT_EQ(0xFFFFFEu, psn_of(&rx[0]));
	ASSERT_EQ(0xFFFFFFu, psn_of(&rx[1]));
	ASSERT_EQ(0u, psn_of(&rx[2]));
	ASSERT_EQ(1u, psn_of(&rx[3]));
}

TEST(dp_rxorder, control__after_the_data_in_the_order_it_came)
{
	/* a probe read first (its plane had nothing else queued), a SACK, an
	 * endpoint operation and a runt among writes of two QPs */
	struct mrcp_rx rx[8] = {
		mk(0, MRCP_OP_PROBE, 7, 30, 12),       mk(1, MRCP_OP_WRITE_LAST_IMM, 9, 5, 12),
		mk(2, MRCP_OP_WRITE_FIRST, 7, 21, 12), mk(3, MRCP_OP_SACK, 7, 0, 12),
		mk(4, MRCP_OP_WRITE_FIRST, 7, 20, 12), mk(5, MRCP_OP_WRITE_MIDDLE, 9, 4, 12),
		mk(6, MRCP_OP_WRITE_ONLY, 7, 40, 8),   mk(7, MRCP_OP_EP_REQUEST, 2, 1, 12),
	};

	mrcd_rx_order(rx, 8);
	/* QP 7 then QP 9, each by PSN */
	ASSERT_EQ(20u, psn_of(&rx[0]));
	ASSERT_EQ(21u, psn_of(&rx[1]));
	ASSERT_EQ(4u, psn_of(&rx[2]));
	ASSERT_EQ(5u, psn_of(&rx[3]));
	/* then the rest as they came: the probe, the SACK, the runt (shorter
	 * than a BTH: not read as data), the endpoint operation */
	ASSERT_EQ(1u, rx[4].port);
	ASSERT_EQ(4u, rx[5].port);
	ASSERT_EQ(7u, rx[6].port);
	ASSERT_EQ(8u, rx[7].port);
}

TEST(dp_rxorder, stable__a_duplicate_keeps_its_place)
{
	/* the same PSN twice (an original and its resend on another plane):
	 * the first read stays first, and nothing is lost */
	struct mrcp_rx rx[3] = {
		mk(0, MRCP_OP_WRITE_ONLY, 7, 9, 12), mk(1, MRCP_OP_WRITE_ONLY, 7, 8, 12),
		mk(2, MRCP_OP_WRITE_ONLY, 7, 8, 12),
	};

	mrcd_rx_order(rx, 3);
	ASSERT_EQ(2u, rx[0].port);
	ASSERT_EQ(3u, rx[1].port);
	ASSERT_EQ(1u, rx[2].port);
	mrcd_rx_order(rx, 0); /* nothing to do */
	mrcd_rx_order(rx, 1);
	ASSERT_EQ(2u, rx[0].port);
}
