/* fuzz_conn_info.c - libFuzzer target for mrcp_conn_info_decode()
 * (lib/core/qp.c): the connection-info blob comes from the peer (D58), so
 * any bytes of any length. A refusal must be -EBADMSG or -EPROTO; an
 * accepted blob must hold fields in range and survive
 * mrcp_conn_info_encode() byte for byte (all but the reserved tail) and
 * decode again to the same fields. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "mrcp_engine.h"
#include "mrcp_seq.h"
#include "mrcp_wire.h"

#define RESERVED_OFS 206 /* the last two bytes of the blob: reserved, not read */

static int same_ip(const struct mrcp_ip *a, const struct mrcp_ip *b)
{
	return a->family == b->family && memcmp(a->a, b->a, sizeof(a->a)) == 0;
}

static int same(const struct mrcp_conn_info *a, const struct mrcp_conn_info *b)
{
	if (a->versions != b->versions || a->qpn != b->qpn || a->init_psn != b->init_psn ||
	    !same_ip(&a->node_addr, &b->node_addr) || a->n_ports != b->n_ports ||
	    a->port_status_mask != b->port_status_mask || a->mtu != b->mtu ||
	    a->mpr_dest != b->mpr_dest || a->max_wimm_dest != b->max_wimm_dest ||
	    a->trim_nack != b->trim_nack || a->dyn_mpr != b->dyn_mpr || a->svc_time != b->svc_time ||
	    a->udp_port != b->udp_port || a->buf_va != b->buf_va || a->buf_rkey != b->buf_rkey ||
	    a->buf_len != b->buf_len)
		return 0;
	for (unsigned i = 0; i < MRCP_MAX_PORTS; i++)
		if (!same_ip(&a->port_addr[i], &b->port_addr[i]))
			return 0;
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a private copy of exactly @size bytes: a read past it is an ASan report */
	uint8_t *in = malloc(size ? size : 1);
	uint8_t out[MRCP_CONN_INFO_LEN];
	struct mrcp_conn_info ci, again;
	int rc;

	CHECK(in != NULL);
	memcpy(in, data, size);
	rc = mrcp_conn_info_decode(in, size, &ci);
	if (rc != 0) {
		CHECK(rc == -EBADMSG || rc == -EPROTO);
		free(in);
		return 0;
	}
	CHECK(size == MRCP_CONN_INFO_LEN);
	CHECK(ci.qpn <= MRCP_QPN_MASK && ci.init_psn <= MRCP_PSN_MASK && ci.n_ports <= MRCP_MAX_PORTS);
	CHECK(ci.node_addr.family == 0 || ci.node_addr.family == 4 || ci.node_addr.family == 6);
	for (unsigned i = 0; i < MRCP_MAX_PORTS; i++)
		CHECK(ci.port_addr[i].family == 0 || ci.port_addr[i].family == 4 ||
		      ci.port_addr[i].family == 6);
	CHECK(mrcp_conn_info_encode(&ci, out, sizeof(out)) == MRCP_CONN_INFO_LEN);
	CHECK(memcmp(out, in, RESERVED_OFS) == 0);
	CHECK(out[RESERVED_OFS] == 0 && out[RESERVED_OFS + 1] == 0);
	CHECK(mrcp_conn_info_decode(out, sizeof(out), &again) == 0 && same(&ci, &again));
	/* too short a buffer is refused, never written past */
	CHECK(mrcp_conn_info_encode(&ci, out, sizeof(out) - 1) == -ENOBUFS);
	free(in);
	return 0;
}
