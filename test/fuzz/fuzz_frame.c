/* fuzz_frame.c - libFuzzer target for mrcp_frame_parse(): every input is
 * parsed under four receive configurations (ICRC check on/off, both EV
 * layouts, alternate port and hop-limit rule on/off); results must be one of
 * the documented codes, the view must stay inside the input, and an accepted
 * untrimmed frame must survive a rebuild with mrcp_frame_build(). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "mrcp_frame.h"

static uint8_t rebuilt[70000];

/* Build a frame from @v's fields and MRC bytes and parse it again. */
static void rebuild(const struct mrcp_frame_rx_cfg *cfg0, const struct mrcp_frame_view *v)
{
	struct mrcp_frame_rx_cfg cfg = *cfg0;
	struct mrcp_frame_tx tx;
	struct mrcp_frame_view w;
	int len;

	mrcp_frame_tx_defaults(&tx);
	memcpy(tx.dst_mac, v->dst_mac, 6);
	memcpy(tx.src_mac, v->src_mac, 6);
	tx.vlan = v->vlan;
	tx.vlan_tci = v->vlan_tci;
	tx.l3 = v->l3;
	memcpy(tx.src_ip, v->src_ip, 16);
	memcpy(tx.dst_ip, v->dst_ip, 16);
	memcpy(tx.srv6_da, v->srv6_da, 16);
	tx.dscp = v->dscp;
	tx.ecn = v->ecn;
	tx.ttl = v->ttl;
	tx.ev = v->ev;
	tx.ev_layout = cfg.ev_layout;
	tx.udp_dport = v->udp_dport;
	len = mrcp_frame_build(&tx, v->mrc, v->mrc_len, rebuilt, sizeof(rebuilt));
	CHECK(len > 0);
	cfg.check_icrc = true;
	cfg.check_ip_csum = true;
	CHECK(mrcp_frame_parse(&cfg, rebuilt, (size_t)len, &w) == 0);
	CHECK(w.icrc == MRCP_ICRC_OK && w.trim == MRCP_TRIM_NONE);
	CHECK(w.ev == v->ev && w.dscp == v->dscp && w.ecn == v->ecn);
	CHECK(w.l3 == v->l3 && w.vlan == v->vlan && w.vlan_tci == v->vlan_tci);
	CHECK(memcmp(w.src_ip, v->src_ip, 16) == 0 && memcmp(w.dst_ip, v->dst_ip, 16) == 0);
	CHECK(w.mrc_len == v->mrc_len && memcmp(w.mrc, v->mrc, v->mrc_len) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	for (unsigned i = 0; i < 4; i++) {
		struct mrcp_frame_rx_cfg cfg;
		struct mrcp_frame_view v;
		int rc;

		mrcp_frame_rx_cfg_defaults(&cfg);
		cfg.check_icrc = i & 1;
		cfg.check_ip_csum = i & 1;
		cfg.accept_alt_port = !(i & 1);
		cfg.ev_layout = i >> 1 ? MRCP_EV_HI16_SPORT : MRCP_EV_LO16_SPORT;
		cfg.lasthop_hl_enable = i >> 1;
		cfg.lasthop_hl = 64;
		rc = mrcp_frame_parse(&cfg, data, size, &v);
		CHECK(rc == 0 || rc == -ENOMSG || rc == -EBADMSG || rc == -EILSEQ);
		if (rc != 0 && rc != -EILSEQ)
			continue;
		CHECK(v.mrc >= data && v.mrc_len >= 12 && v.mrc_len <= size &&
		      (size_t)(v.mrc - data) <= size - v.mrc_len);
		CHECK(v.l3 >= MRCP_FRAME_IPV4 && v.l3 <= MRCP_FRAME_SRV6);
		CHECK(v.dscp <= 63 && v.ecn <= 3 && v.flow_label <= 0xFFFFF);
		CHECK(v.l3 != MRCP_FRAME_IPV4 || v.ev <= 0xFFFF); /* D5 */
		CHECK(v.trim != MRCP_TRIM_NONE || !v.truncated);
		if (rc == -EILSEQ) {
			CHECK(cfg.check_icrc && v.trim == MRCP_TRIM_NONE && v.icrc == MRCP_ICRC_BAD);
			continue;
		}
		if (v.trim != MRCP_TRIM_NONE) {
			CHECK(v.icrc == MRCP_ICRC_UNCHECKED);
			continue;
		}
		CHECK(v.icrc == (cfg.check_icrc ? MRCP_ICRC_OK : MRCP_ICRC_UNCHECKED));
		rebuild(&cfg, &v);
	}
	return 0;
}
