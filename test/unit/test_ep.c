/* test_ep.c - white-box tests of lib/core/ep.c, endpoint operations on QPN
 * 0x2 (§7): local link up/down and PORT_STATUS_UPDATE with its EETH
 * acknowledgement and retries (D50, D51), received updates and stale ones,
 * and EV probes with their RTT, timeout and rate limit (D57).
 *
 * One engine with three ports and one QP toward a hand-made three-port peer
 * (PSUs go only to peers with a live QP). The test plays the peer: it takes
 * the engine's packets through the capture of test/lib/fake_link.c (decoded,
 * logged as text) and answers with hand-made endpoint packets. The clock is
 * a plain variable. */
#include <errno.h>
#include <stdlib.h>

#include "engine_internal.h"
#include "engine_fx.h"
#include "fake_link.h"
#include "mrcp_test.h"
#include "mrcp_wire.h"

#define PEER_QPN 0x100u
#define PORTS 3
#define T0 (1ull << 20) /* a multiple of the 128 ns timestamp unit */
#define TICK 1024ull    /* timer wheel resolution */
#define MAX_OUT 256

struct fx {
	struct mrcp_engine *e;
	uint32_t qpn;
	uint64_t now;
	struct fake_link l; /* capture: what the engine sent at the last drain() */
	struct mrcp_ip peer_node;
	uint8_t *buf;
	uint32_t lkey, rkey;
};

static void fx_init_shard(struct fx *f, uint8_t shard)
{
	struct mrcp_engine_config c;
	struct mrcp_conn_info ci;

	memset(f, 0, sizeof(*f));
	fake_link_init(&f->l, MAX_OUT);
	f->l.log_port = true;
	mrcp_engine_config_defaults(&c);
	c.seed = 5;
	c.n_ports = PORTS;
	fx_ip(&c.node_addr, 0, 0);
	for (int i = 0; i < PORTS; i++)
		fx_ip(&c.port_addr[i], 0, i + 1);
	c.mtu = 1024;
	c.ev.n_active = 4 * PORTS;
	c.ev.n_backup = 2 * PORTS;
	c.shard = shard;
	ASSERT_EQ(0, mrcp_engine_create(&c, &f->e));
	f->buf = calloc(1, 1u << 20);
	ASSERT_EQ(0, mrcp_mr_reg(f->e, 0x10000000ull, 1u << 20, f->buf, MRCP_ACCESS_LOCAL_WRITE, &f->lkey, &f->rkey));
	ASSERT_EQ(0, mrcp_qp_create(f->e, NULL, &f->qpn));
	memset(&ci, 0, sizeof(ci));
	ci.versions = 1;
	ci.qpn = PEER_QPN;
	fx_ip(&ci.node_addr, 1, 0);
	ci.n_ports = PORTS;
	for (int i = 0; i < PORTS; i++)
		fx_ip(&ci.port_addr[i], 1, i + 1);
	ci.port_status_mask = 7;
	ci.mtu = 1024;
	ci.mpr_dest = 8;
	ci.max_wimm_dest = 128;
	ci.trim_nack = true;
	ci.udp_port = MRCP_UDP_PORT_DEFAULT;
	f->now = T0;
	ASSERT_EQ(0, mrcp_qp_connect(f->e, f->qpn, &ci, f->now));
	f->peer_node = ci.node_addr;
}

static void fx_init(struct fx *f)
{
	fx_init_shard(f, 0);
}

static void fx_fini(struct fx *f)
{
	mrcp_engine_destroy(f->e);
	free(f->buf);
	fake_link_fini(&f->l);
}

/* Everything the engine has to send at f->now, decoded, in f->l (out[],
 * n_out, and the log: one line per packet, ending in its port). */
static unsigned drain(struct fx *f)
{
	return fake_link_drain(&f->l, f->e, f->now);
}

/* @p arriving on our @port from @src. */
static void rx_ep_from(struct fx *f, const struct mrcp_pkt *p, uint8_t port, const struct mrcp_ip *src)
{
	uint8_t raw[128];
	struct mrcp_rx rx;

	fx_rx_pkt(&rx, raw, sizeof(raw), p, port, src);
	rx.ev = 0x5555;
	mrcp_rx_burst(f->e, &rx, 1, f->now);
}

/* @p from the peer, on our @port: from its address on that plane. */
static void rx_ep(struct fx *f, const struct mrcp_pkt *p, uint8_t port)
{
	struct mrcp_ip src;

	fx_ip(&src, 1, port);
	rx_ep_from(f, p, port, &src);
}

/* The peer's PORT_STATUS_UPDATE with sequence @seq and @mask, on @port. */
static void rx_psu(struct fx *f, uint32_t seq, uint32_t mask, uint8_t port)
{
	struct mrcp_pkt p;

	ASSERT_EQ(0, mrcp_pkt_init(&p, MRCP_OP_EP_REQUEST, MRCP_QPN_ENDPOINT, seq));
	p.erth.op = MRCP_EP_PORT_STATUS_UPDATE;
	p.erth.port_status_mask = mask;
	p.erth.tx_timestamp = 0x0777;
	p.erth.ftype = MRCP_TSETH_FTYPE;
	rx_ep(f, &p, port);
}

/* The peer's EETH answering request @seq of kind @op. */
static void rx_eeth(struct fx *f, uint8_t op, uint32_t seq, uint32_t mask, uint16_t ts, uint16_t svc, uint8_t port)
{
	struct mrcp_pkt p;

	ASSERT_EQ(0, mrcp_pkt_init(&p, MRCP_OP_EP_RESPONSE, MRCP_QPN_ENDPOINT, seq));
	p.eeth.op = op;
	p.eeth.rx_port = port;
	p.eeth.port_status_mask = mask;
	p.eeth.tx_timestamp = ts;
	p.eeth.svc_time = svc;
	p.eeth.ftype = MRCP_TSETH_FTYPE;
	rx_ep(f, &p, port);
}

static struct mrcp_engine_counters ec(const struct fx *f)
{
	struct mrcp_engine_counters c;

	mrcp_engine_counters(f->e, &c);
	return c;
}

static struct peer *peer(struct fx *f)
{
	struct peer *p = mrcp__peer_find(f->e, &f->peer_node);

	ASSERT_TRUE(p != NULL);
	return p;
}

/* ---- mrcp_port_set_link ------------------------------------------------------- */

TEST(ep, port_set_link__down_sends_psu_on_every_other_up_port)
{
	struct fx f;
	struct mrcp_ip want;
	struct mrcp_dscp_map d;

	fx_init(&f);
	ASSERT_EQ(0, mrcp_port_set_link(f.e, 2, false, f.now));
	ASSERT_EQ(1, ec(&f).port_down_events);
	ASSERT_EQ(2, drain(&f));
	ASSERT_STREQ("EP_REQ op 0 seq 1 mask 0x5 port 1; EP_REQ op 0 seq 1 mask 0x5 port 3", f.l.log);
	mrcp_dscp_map_defaults(&d);
	for (unsigned i = 0; i < 2; i++) {
		ASSERT_EQ(0xD8, f.l.out[i].p.bth.opcode);
		ASSERT_EQ(MRCP_QPN_ENDPOINT, f.l.out[i].p.bth.dest_qp);
		ASSERT_EQ(0, f.l.out[i].tx.qpn);
		ASSERT_EQ(d.dscp[MRCP_DSCP_CLASS_CONTROL], f.l.out[i].tx.dscp);
		ASSERT_EQ(MRCP_ECN_NOT_ECT, f.l.out[i].tx.ecn); /* D9 */
		ASSERT_EQ((uint16_t)(T0 >> 7), f.l.out[i].p.erth.tx_timestamp);
	}
	fx_ip(&want, 1, 3);
	ASSERT_MEMEQ(&want, &f.l.out[1].tx.dst, sizeof(want));
	ASSERT_EQ(2, ec(&f).ep_tx);
	fx_fini(&f);
}

TEST(ep, port_set_link__same_state_or_bad_port_sends_nothing)
{
	struct fx f;

	fx_init(&f);
	ASSERT_EQ(0, mrcp_port_set_link(f.e, 1, true, f.now));
	ASSERT_EQ(-EINVAL, mrcp_port_set_link(f.e, 0, false, f.now));
	ASSERT_EQ(-EINVAL, mrcp_port_set_link(f.e, PORTS + 1, false, f.now));
	ASSERT_EQ(0, drain(&f));
	ASSERT_EQ(0, ec(&f).port_down_events);
	fx_fini(&f);
}

TEST(ep, ep_on_timer__psu_is_tried_three_times_one_ms_apart)
{
	struct fx f;
	unsigned sent[6];

	fx_init(&f);
	ASSERT_EQ(0, mrcp_port_set_link(f.e, 3, false, f.now));
	for (int i = 0; i < 6; i++) {
		f.now = T0 + (uint64_t)i * PSU_INTERVAL_NS / 2 + 2 * TICK;
		sent[i] = drain(&f);
	}
	/* at 0, 1 and 2 ms on ports 1 and 2; nothing at 0.5, 1.5, 2.5 ms */
	ASSERT_EQ(2, sent[0]);
	ASSERT_EQ(0, sent[1]);
	ASSERT_EQ(2, sent[2]);
	ASSERT_EQ(0, sent[3]);
	ASSERT_EQ(2, sent[4]);
	ASSERT_EQ(0, sent[5]);
	f.now = T0 + 10 * PSU_INTERVAL_NS;
	ASSERT_EQ(0, drain(&f));
	ASSERT_EQ(UINT64_MAX, mrcp__ep_deadline(f.e));
	fx_fini(&f);
}

TEST(ep, ep_on_rx__eeth_ack_stops_the_retries)
{
	struct fx f;

	fx_init(&f);
	ASSERT_EQ(0, mrcp_port_set_link(f.e, 2, false, f.now));
	ASSERT_EQ(2, drain(&f));
	/* an acknowledgement for another sequence number does not count */
	rx_eeth(&f, MRCP_EP_PORT_STATUS_UPDATE, 9, 7, 0, 0, 1);
	ASSERT_EQ(2, peer(&f)->psu_tries_left);
	rx_eeth(&f, MRCP_EP_PORT_STATUS_UPDATE, 1, 7, 0, 0, 1);
	ASSERT_EQ(0, peer(&f)->psu_tries_left);
	f.now = T0 + 5 * PSU_INTERVAL_NS;
	ASSERT_EQ(0, drain(&f));
	/* the port comes back: a new update with the bit set */
	ASSERT_EQ(0, mrcp_port_set_link(f.e, 2, true, f.now));
	ASSERT_EQ(3, drain(&f));
	ASSERT_STREQ("EP_REQ op 0 seq 2 mask 0x7 port 1; EP_REQ op 0 seq 2 mask 0x7 port 2; "
		     "EP_REQ op 0 seq 2 mask 0x7 port 3", f.l.log);
	fx_fini(&f);
}

TEST(ep, port_set_link__outstanding_packets_of_the_dead_port_go_elsewhere)
{
	struct fx f;
	struct mrcp_sge sge = {.addr = 0x10000000ull, .len = 24 * 1024, .lkey = 0};
	struct mrcp_send_wr wr = {.wr_id = 1, .opcode = MRCP_WR_WRITE, .sg_list = &sge, .num_sge = 1,
				  .remote_addr = 0x50000000ull, .rkey = 1};
	uint32_t on2 = 0, again = 0;

	fx_init(&f);
	sge.lkey = f.lkey;
	/* D65: off probation, so each EV may carry more than one packet */
	for (unsigned i = 0; i < mrcp__qp_lookup(f.e, f.qpn)->evs.n_evs; i++)
		mrcp_ev_proven(&mrcp__qp_lookup(f.e, f.qpn)->evs, (int)i);
	ASSERT_EQ(0, mrcp_qp_post_send(f.e, f.qpn, &wr, f.now));
	ASSERT_EQ(24, drain(&f));
	for (unsigned i = 0; i < f.l.n_out; i++)
		on2 += f.l.out[i].tx.port == 2;
	ASSERT_GT(on2, 0); /* sprayed over all three planes */
	f.now += 1000;
	ASSERT_EQ(0, mrcp_port_set_link(f.e, 2, false, f.now));
	drain(&f);
	for (unsigned i = 0; i < f.l.n_out; i++) {
		if (!mrcp_opcode_is_data(f.l.out[i].p.bth.opcode))
			continue;
		ASSERT_NE(2, f.l.out[i].tx.port);
		ASSERT_TRUE(f.l.out[i].p.bth.rtx);
		again++;
	}
	ASSERT_EQ(on2, again);
	ASSERT_EQ(on2, mrcp__qp_lookup(f.e, f.qpn)->c.rtx_port_down);
	fx_fini(&f);
}

/* ---- on_request: the peer's PORT_STATUS_UPDATE ----------------------------------- */

TEST(ep, on_request__psu_updates_peer_mask_and_is_acked_on_arrival_port)
{
	struct fx f;
	struct mrcp_event ev[4];

	fx_init(&f);
	rx_psu(&f, 5, 0x6, 2);
	ASSERT_EQ(0x6, peer(&f)->remote_up);
	ASSERT_EQ(1, mrcp_poll_events(f.e, ev, 4));
	ASSERT_EQ(MRCP_EVENT_PEER_PORTS, ev[0].type);
	ASSERT_EQ(0x6, ev[0].peer_ports.mask);
	ASSERT_MEMEQ(&f.peer_node, &ev[0].peer_ports.node, sizeof(f.peer_node));
	/* the QP's EVs on the peer's dead port 1 are masked */
	ASSERT_EQ(0x6, mrcp_qp_evs(f.e, f.qpn)->port_up_remote);
	ASSERT_EQ(1, drain(&f));
	ASSERT_STREQ("EP_RESP op 0 seq 5 rx_port 2 mask 0x7 port 2", f.l.log);
	ASSERT_EQ(0x0777, f.l.out[0].p.eeth.tx_timestamp); /* echoed */
	ASSERT_EQ(0, f.l.out[0].p.eeth.status);
	ASSERT_EQ(0xD9, f.l.out[0].p.bth.opcode);
	ASSERT_EQ(MRCP_QPN_ENDPOINT, f.l.out[0].p.bth.dest_qp);
	ASSERT_EQ(1, ec(&f).ep_rx);
	fx_fini(&f);
}

TEST(ep, on_request__stale_psu_is_ignored_but_acked)
{
	struct fx f;
	struct mrcp_event ev[4];

	fx_init(&f);
	rx_psu(&f, 5, 0x6, 2);
	ASSERT_EQ(1, mrcp_poll_events(f.e, ev, 4));
	rx_psu(&f, 4, 0x7, 2); /* older */
	rx_psu(&f, 5, 0x3, 2); /* the same again */
	ASSERT_EQ(2, ec(&f).ep_stale);
	ASSERT_EQ(0x6, peer(&f)->remote_up);
	ASSERT_EQ(0, mrcp_poll_events(f.e, ev, 4));
	ASSERT_EQ(3, drain(&f));
	/* a newer one (sequence numbers wrap at 16 bits) applies */
	rx_psu(&f, 6, 0x7, 1);
	ASSERT_EQ(0x7, peer(&f)->remote_up);
	ASSERT_EQ(1, mrcp_poll_events(f.e, ev, 4));
	fx_fini(&f);
}

TEST(ep, on_request__psu_sequence_wraps)
{
	struct fx f;

	fx_init(&f);
	rx_psu(&f, 0xFFFF, 0x6, 1);
	rx_psu(&f, 0x0000, 0x5, 1);
	ASSERT_EQ(0x5, peer(&f)->remote_up);
	ASSERT_EQ(0, ec(&f).ep_stale);
	fx_fini(&f);
}

/* ---- mrcp_ev_probe and on_response --------------------------------------------- */

TEST(ep, ev_probe__request_on_the_ev_under_test_and_rtt_from_the_answer)
{
	struct fx f;
	struct mrcp_event ev[4];
	struct mrcp_dscp_map d;
	uint16_t seq, ts;

	fx_init(&f);
	mrcp_dscp_map_defaults(&d);
	ASSERT_EQ(0, mrcp_ev_probe(f.e, &f.peer_node, 2, 0xABCD, f.now));
	ASSERT_EQ(1, drain(&f));
	ASSERT_EQ(MRCP_OP_EP_REQUEST, f.l.out[0].p.bth.opcode);
	ASSERT_EQ(MRCP_EP_EV_PROBE, f.l.out[0].p.erth.op);
	ASSERT_EQ(0x7, f.l.out[0].p.erth.port_status_mask); /* D51 */
	ASSERT_EQ(2, f.l.out[0].tx.port);
	ASSERT_EQ(0xABCD, f.l.out[0].tx.ev);
	ASSERT_EQ(d.dscp[MRCP_DSCP_CLASS_TRIMMABLE], f.l.out[0].tx.dscp); /* D57 */
	ASSERT_EQ(MRCP_ECN_ECT0, f.l.out[0].tx.ecn);
	seq = (uint16_t)f.l.out[0].p.bth.psn;
	ts = f.l.out[0].p.erth.tx_timestamp;
	/* answered 6.4 us later, 1.28 us of it spent at the peer */
	f.now = T0 + 6400;
	rx_eeth(&f, MRCP_EP_EV_PROBE, seq, 0x7, ts, 10, 2);
	ASSERT_EQ(1, mrcp_poll_events(f.e, ev, 4));
	ASSERT_EQ(MRCP_EVENT_EV_PROBE, ev[0].type);
	ASSERT_TRUE(ev[0].probe.ok);
	ASSERT_EQ(2, ev[0].probe.port);
	ASSERT_EQ(0xABCD, ev[0].probe.ev);
	ASSERT_EQ(6400 - 1280, ev[0].probe.rtt_ns);
	ASSERT_MEMEQ(&f.peer_node, &ev[0].probe.node, sizeof(f.peer_node));
	/* answered once: a late duplicate is not reported again */
	rx_eeth(&f, MRCP_EP_EV_PROBE, seq, 0x7, ts, 10, 2);
	ASSERT_EQ(0, mrcp_poll_events(f.e, ev, 4));
	ASSERT_EQ(UINT64_MAX, mrcp__ep_deadline(f.e));
	fx_fini(&f);
}

/* The RTT histogram counts each answer once, in the bucket whose bound is
 * the first at or above its RTT; a timeout is counted apart. */
TEST(ep, ev_probe__answers_counted_in_the_rtt_histogram)
{
	/* RTTs are whole 128 ns timestamp units: 4992 <= 5000 < 5120 <= 9984 */
	static const uint64_t rtt[3] = { 4992, 5120, 9984 };
	struct fx f;
	struct mrcp_probe_rtt_hist h;
	struct mrcp_event ev[4];

	fx_init(&f);
	mrcp_engine_probe_rtt(f.e, &h);
	ASSERT_U64_EQ(0, h.answered);
	ASSERT_U64_EQ(5000, mrcp_probe_rtt_bounds_ns[0]);
	ASSERT_U64_EQ(2000000, mrcp_probe_rtt_bounds_ns[MRCP_PROBE_RTT_NBOUNDS - 1]); /* D57 timeout */
	for (unsigned i = 0; i < 3; i++) {
		uint64_t t0 = T0 + (uint64_t)i * 1024 * 128; /* whole timestamp units */

		f.now = t0;
		ASSERT_EQ(0, mrcp_ev_probe(f.e, &f.peer_node, (uint8_t)(1 + i), 0x100 + i, f.now));
		ASSERT_EQ(1, drain(&f));
		f.now = t0 + rtt[i];
		rx_eeth(&f, MRCP_EP_EV_PROBE, (uint16_t)f.l.out[0].p.bth.psn, 0x7,
			f.l.out[0].p.erth.tx_timestamp, 0, (uint8_t)(1 + i));
		ASSERT_EQ(1, mrcp_poll_events(f.e, ev, 4));
		ASSERT_U64_EQ(rtt[i], ev[0].probe.rtt_ns);
	}
	mrcp_engine_probe_rtt(f.e, &h);
	ASSERT_U64_EQ(1, h.bucket[0]);
	ASSERT_U64_EQ(2, h.bucket[1]);
	for (unsigned i = 2; i <= MRCP_PROBE_RTT_NBOUNDS; i++)
		ASSERT_U64_EQ(0, h.bucket[i]);
	ASSERT_U64_EQ(3, h.answered);
	ASSERT_U64_EQ(4992 + 5120 + 9984, h.sum_ns);
	ASSERT_U64_EQ(0, h.timeouts);
	fx_fini(&f);
}

TEST(ep, ev_probe__answer_carries_the_peer_mask)
{
	struct fx f;
	struct mrcp_event ev[4];

	fx_init(&f);
	ASSERT_EQ(0, mrcp_ev_probe(f.e, &f.peer_node, 1, 0x1111, f.now));
	ASSERT_EQ(1, drain(&f));
	rx_eeth(&f, MRCP_EP_EV_PROBE, (uint16_t)f.l.out[0].p.bth.psn, 0x3, f.l.out[0].p.erth.tx_timestamp, 0, 1);
	ASSERT_EQ(0x3, peer(&f)->remote_up);
	ASSERT_EQ(2, mrcp_poll_events(f.e, ev, 4));
	ASSERT_EQ(MRCP_EVENT_PEER_PORTS, ev[0].type);
	ASSERT_EQ(0x3, ev[0].peer_ports.mask);
	ASSERT_EQ(MRCP_EVENT_EV_PROBE, ev[1].type);
	fx_fini(&f);
}

TEST(ep, ep_on_timer__unanswered_probe_times_out_after_2_ms)
{
	struct fx f;
	struct mrcp_event ev[4];

	fx_init(&f);
	ASSERT_EQ(0, mrcp_ev_probe(f.e, &f.peer_node, 3, 0x2222, f.now));
	ASSERT_EQ(1, drain(&f));
	ASSERT_EQ(T0 + EV_PROBE_TIMEOUT_NS, mrcp__ep_deadline(f.e));
	f.now = T0 + EV_PROBE_TIMEOUT_NS - 2 * TICK;
	drain(&f);
	ASSERT_EQ(0, mrcp_poll_events(f.e, ev, 4));
	f.now = T0 + EV_PROBE_TIMEOUT_NS + 2 * TICK;
	drain(&f);
	ASSERT_EQ(1, mrcp_poll_events(f.e, ev, 4));
	ASSERT_EQ(MRCP_EVENT_EV_PROBE, ev[0].type);
	ASSERT_FALSE(ev[0].probe.ok);
	ASSERT_EQ(3, ev[0].probe.port);
	ASSERT_EQ(0x2222, ev[0].probe.ev);
	ASSERT_EQ(UINT64_MAX, mrcp__ep_deadline(f.e));
	/* a timeout is no RTT: counted apart from the buckets */
	struct mrcp_probe_rtt_hist h;

	mrcp_engine_probe_rtt(f.e, &h);
	ASSERT_U64_EQ(1, h.timeouts);
	ASSERT_U64_EQ(0, h.answered);
	fx_fini(&f);
}

TEST(ep, ev_probe__rate_limited_per_port_and_checks_arguments)
{
	struct fx f;
	struct mrcp_ip stranger;

	fx_init(&f);
	fx_ip(&stranger, 7, 0);
	ASSERT_EQ(-EINVAL, mrcp_ev_probe(f.e, &f.peer_node, 0, 1, f.now));
	ASSERT_EQ(-EINVAL, mrcp_ev_probe(f.e, &f.peer_node, PORTS + 1, 1, f.now));
	ASSERT_EQ(-EINVAL, mrcp_ev_probe(f.e, NULL, 1, 1, f.now));
	ASSERT_EQ(-ENOENT, mrcp_ev_probe(f.e, &stranger, 1, 1, f.now));
	ASSERT_EQ(0, mrcp_ev_probe(f.e, &f.peer_node, 1, 1, f.now));
	ASSERT_EQ(-EBUSY, mrcp_ev_probe(f.e, &f.peer_node, 1, 2, f.now + EV_PROBE_MIN_GAP_NS - 1));
	ASSERT_EQ(0, mrcp_ev_probe(f.e, &f.peer_node, 2, 3, f.now + 1)); /* another port */
	ASSERT_EQ(0, mrcp_ev_probe(f.e, &f.peer_node, 1, 4, f.now + EV_PROBE_MIN_GAP_NS));
	ASSERT_EQ(3, drain(&f));
	fx_fini(&f);
}

TEST(ep, ev_probe__at_most_eight_outstanding_per_peer)
{
	struct fx f;

	fx_init(&f);
	for (int i = 0; i < PEER_PROBES_MAX; i++)
		ASSERT_EQ(0, mrcp_ev_probe(f.e, &f.peer_node, 1, (uint32_t)i, f.now + (uint64_t)i * EV_PROBE_MIN_GAP_NS));
	ASSERT_EQ(-EBUSY, mrcp_ev_probe(f.e, &f.peer_node, 1, 99, f.now + 8 * EV_PROBE_MIN_GAP_NS));
	fx_fini(&f);
}

TEST(ep, on_request__ev_probe_from_the_peer_is_answered_on_its_plane)
{
	struct fx f;
	struct mrcp_pkt p;

	fx_init(&f);
	ASSERT_EQ(0, mrcp_pkt_init(&p, MRCP_OP_EP_REQUEST, MRCP_QPN_ENDPOINT, 0x42));
	p.erth.op = MRCP_EP_EV_PROBE;
	p.erth.port_status_mask = 0x7;
	p.erth.tx_timestamp = 0x1234;
	p.erth.ftype = MRCP_TSETH_FTYPE;
	rx_ep(&f, &p, 3);
	ASSERT_EQ(1, drain(&f));
	ASSERT_STREQ("EP_RESP op 1 seq 66 rx_port 3 mask 0x7 port 3", f.l.log);
	ASSERT_EQ(0x1234, f.l.out[0].p.eeth.tx_timestamp);
	ASSERT_EQ(0, ec(&f).ep_stale);
	fx_fini(&f);
}

/*
 * Was an engine bug (fixed) (ep.c, mrcp_ev_probe): EV probe request ids are taken from
 * ++p->psu_seq, the counter of our PORT_STATUS_UPDATEs to that peer. An EV
 * probe sent while an update is being retried changes psu_seq, so the
 * peer's EETH for the update (request id = the old psu_seq) no longer
 * matches in on_response and the update goes on being retried, now under
 * the probe's request id. Fix: a separate counter for probe ids (or match
 * the acknowledgement against the id the update was sent with).
 * Kept out of the build until ep.c is fixed.
 */
TEST(ep, on_response__psu_ack_still_counts_after_an_ev_probe)
{
	struct fx f;

	fx_init(&f);
	ASSERT_EQ(0, mrcp_port_set_link(f.e, 2, false, f.now));
	ASSERT_EQ(2, drain(&f));
	ASSERT_STREQ("EP_REQ op 0 seq 1 mask 0x5 port 1; EP_REQ op 0 seq 1 mask 0x5 port 3", f.l.log);
	ASSERT_EQ(0, mrcp_ev_probe(f.e, &f.peer_node, 1, 0x1111, f.now));
	ASSERT_EQ(1, drain(&f));
	rx_eeth(&f, MRCP_EP_PORT_STATUS_UPDATE, 1, 7, 0, 0, 1); /* the peer acks update 1 */
	ASSERT_EQ(0, peer(&f)->psu_tries_left);                  /* got 2 */
	f.now = T0 + PSU_INTERVAL_NS + 2 * TICK;
	ASSERT_EQ(0, drain(&f)); /* got 2: "EP_REQ op 0 seq 2 mask 0x5 ..." */
	fx_fini(&f);
}

/* ---- D63: several engines per node ------------------------------------------------ */

TEST(ep, on_request__psus_are_ordered_per_sending_shard)
{
	struct fx f;

	fx_init(&f);
	rx_psu(&f, 1u << 16 | 9, 0x6, 1);   /* the peer's engine 1, its update 9 */
	rx_psu(&f, 0u << 16 | 2, 0x5, 1);   /* engine 0's update 2: its own order */
	ASSERT_EQ(0x5, peer(&f)->remote_up);
	ASSERT_EQ(0, ec(&f).ep_stale);
	rx_psu(&f, 1u << 16 | 8, 0x7, 1);   /* older than engine 1's 9 */
	ASSERT_EQ(1, ec(&f).ep_stale);
	ASSERT_EQ(0x5, peer(&f)->remote_up);
	ASSERT_EQ(3, drain(&f));
	/* every answer echoes the request's whole PSN, shard included */
	ASSERT_EQ(1u << 16 | 9, f.l.out[0].p.bth.psn);
	ASSERT_EQ(2, f.l.out[1].p.bth.psn);
	ASSERT_EQ(1u << 16 | 8, f.l.out[2].p.bth.psn);
	fx_fini(&f);
}

TEST(ep, ev_probe__shard_in_the_request_and_other_shards_answers_ignored)
{
	struct fx f;
	struct mrcp_event ev[4];
	uint32_t psn;

	fx_init_shard(&f, 2);
	ASSERT_EQ(2, mrcp_qpn_shard(f.qpn));
	ASSERT_EQ(0, mrcp_ev_probe(f.e, &f.peer_node, 1, 0x1234, f.now));
	ASSERT_EQ(1, drain(&f));
	psn = f.l.out[0].p.bth.psn;
	ASSERT_EQ(2, mrcp_ep_psn_shard(psn));
	/* the same request id from another engine of ours: not this probe */
	rx_eeth(&f, MRCP_EP_EV_PROBE, (psn & 0xFFFF) | 1u << 16, 0x7, f.l.out[0].p.erth.tx_timestamp, 0, 1);
	ASSERT_EQ(1, ec(&f).ep_stale);
	ASSERT_EQ(0, mrcp_poll_events(f.e, ev, 4));
	rx_eeth(&f, MRCP_EP_EV_PROBE, psn, 0x7, f.l.out[0].p.erth.tx_timestamp, 0, 1);
	ASSERT_EQ(1, mrcp_poll_events(f.e, ev, 4));
	ASSERT_EQ(MRCP_EVENT_EV_PROBE, ev[0].type);
	ASSERT_TRUE(ev[0].probe.ok);
	/* port-status updates carry the shard too */
	ASSERT_EQ(0, mrcp_port_set_link(f.e, 3, false, f.now));
	ASSERT_GT(drain(&f), 0);
	for (unsigned i = 0; i < f.l.n_out; i++)
		if (f.l.out[i].p.bth.opcode == MRCP_OP_EP_REQUEST)
			ASSERT_EQ(2, mrcp_ep_psn_shard(f.l.out[i].p.bth.psn));
	fx_fini(&f);
}

/* ---- mrcp__ep_on_rx: who may speak (D69) ---------------------------------------- */

TEST(ep, ep_on_rx__a_known_node_on_another_plane_or_an_unknown_responder_is_foreign)
{
	struct fx f;
	struct mrcp_pkt p;
	struct mrcp_event ev[4];
	struct mrcp_ip plane1, stranger;
	uint16_t seq, ts;

	fx_init(&f);
	fx_ip(&plane1, 1, 1);   /* the peer's plane-1 address */
	fx_ip(&stranger, 6, 2); /* a node we do not know, on plane 2's subnet */
	/* the peer's plane-1 address on plane 2: an update is neither applied
	 * nor answered, an EV probe not answered */
	ASSERT_EQ(0, mrcp_pkt_init(&p, MRCP_OP_EP_REQUEST, MRCP_QPN_ENDPOINT, 5));
	p.erth.op = MRCP_EP_PORT_STATUS_UPDATE;
	p.erth.port_status_mask = 0x6;
	p.erth.ftype = MRCP_TSETH_FTYPE;
	rx_ep_from(&f, &p, 2, &plane1);
	p.erth.op = MRCP_EP_EV_PROBE;
	rx_ep_from(&f, &p, 2, &plane1);
	ASSERT_EQ(0x7, peer(&f)->remote_up);
	ASSERT_EQ(0x7, mrcp_qp_evs(f.e, f.qpn)->port_up_remote);
	ASSERT_EQ(0, mrcp_poll_events(f.e, ev, 4));
	ASSERT_EQ(0, drain(&f));
	ASSERT_EQ(2, ec(&f).rx_foreign_src);
	/* our EV probe on plane 2, "answered" by a stranger and by the peer's
	 * plane-1 address, each with a mask that would take port 1 away */
	ASSERT_EQ(0, mrcp_ev_probe(f.e, &f.peer_node, 2, 0xABCD, f.now));
	ASSERT_EQ(1, drain(&f));
	seq = (uint16_t)f.l.out[0].p.bth.psn;
	ts = f.l.out[0].p.erth.tx_timestamp;
	f.now += 6400;
	ASSERT_EQ(0, mrcp_pkt_init(&p, MRCP_OP_EP_RESPONSE, MRCP_QPN_ENDPOINT, seq));
	p.eeth.op = MRCP_EP_EV_PROBE;
	p.eeth.rx_port = 2;
	p.eeth.port_status_mask = 0x6;
	p.eeth.tx_timestamp = ts;
	p.eeth.ftype = MRCP_TSETH_FTYPE;
	rx_ep_from(&f, &p, 2, &stranger);
	rx_ep_from(&f, &p, 2, &plane1);
	ASSERT_EQ(0, mrcp_poll_events(f.e, ev, 4));
	ASSERT_EQ(0x7, peer(&f)->remote_up);
	ASSERT_EQ(4, ec(&f).rx_foreign_src);
	/* the peer's own answer, on its plane, still counts */
	rx_eeth(&f, MRCP_EP_EV_PROBE, seq, 0x7, ts, 0, 2);
	ASSERT_EQ(1, mrcp_poll_events(f.e, ev, 4));
	ASSERT_EQ(MRCP_EVENT_EV_PROBE, ev[0].type);
	ASSERT_TRUE(ev[0].probe.ok);
	ASSERT_EQ(6400, ev[0].probe.rtt_ns);
	/* §7: a request from a node we do not know is still answered, to its
	 * source, and changes nothing */
	ASSERT_EQ(0, mrcp_pkt_init(&p, MRCP_OP_EP_REQUEST, MRCP_QPN_ENDPOINT, 9));
	p.erth.op = MRCP_EP_EV_PROBE;
	p.erth.port_status_mask = 0x1;
	p.erth.ftype = MRCP_TSETH_FTYPE;
	rx_ep_from(&f, &p, 2, &stranger);
	ASSERT_EQ(1, drain(&f));
	ASSERT_STREQ("EP_RESP op 1 seq 9 rx_port 2 mask 0x7 port 2", f.l.log);
	ASSERT_MEMEQ(&stranger, &f.l.out[0].tx.dst, sizeof(stranger));
	ASSERT_EQ(0x7, peer(&f)->remote_up);
	ASSERT_EQ(4, ec(&f).rx_foreign_src);
	fx_fini(&f);
}
