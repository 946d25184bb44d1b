/* qp.c - QP lifecycle (RESET -> INIT -> RTR -> RTS, ERROR as a sink),
 * connection info and its versioned blob (§8, D58-D60), peers and
 * their QPCCs (D53), and posting work requests and receives. The packet
 * handling of a live QP is in req.c and resp.c. */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"
#include "mrcp_bytes.h"

/* ---- connection info blob (D58) ------------------------------------------------
 *
 *  off  len  field
 *    0    4  magic "MRCI"
 *    4    2  blob version (1)
 *    6    2  blob length (208)
 *    8    4  protocol versions bitmap
 *   12    4  QPN (24 bits used)
 *   16    4  initial PSN (24 bits used)
 *   20   17  node address: family, 16 bytes
 *   37    1  port count
 *   38  136  8 x port address: family, 16 bytes
 *  174    4  port status mask
 *  178    2  MTU
 *  180    1  mpr_dest
 *  181    2  max_wimm_dest
 *  183    1  flags: bit0 trim NACK, bit1 dynamic MPR, bit2 service time
 *  184    2  UDP port
 *  186    8  buffer VA
 *  194    4  buffer rkey
 *  198    8  buffer length
 *  206    2  reserved (0)
 */
#define CI_MAGIC 0x4D524349u /* "MRCI" */
#define CI_LEN MRCP_CONN_INFO_LEN
/* The table above fills MRCP_CONN_INFO_LEN exactly. lib/client's
 * MRC_CONN_INFO_BYTES must equal it too: test/unit/test_qp.c asserts that,
 * where both headers are visible. */
static_assert(38 + 17 * MRCP_MAX_PORTS == 174, "conn info: the port table ends at 174");
static_assert(206 + 2 == CI_LEN, "conn info: the layout fills MRCP_CONN_INFO_LEN");

static void put_ip(uint8_t *p, const struct mrcp_ip *ip)
{
	p[0] = ip->family;
	memcpy(p + 1, ip->a, 16);
}

static int get_ip(const uint8_t *p, struct mrcp_ip *ip)
{
	if (p[0] != 0 && p[0] != 4 && p[0] != 6)
		return -EBADMSG;
	ip->family = p[0];
	memcpy(ip->a, p + 1, 16);
	return 0;
}

int mrcp_conn_info_encode(const struct mrcp_conn_info *ci, uint8_t *buf, size_t cap)
{
	if (cap < CI_LEN)
		return -ENOBUFS;
	if (ci->n_ports > MRCP_MAX_PORTS)
		return -EINVAL;
	memset(buf, 0, CI_LEN);
	mrcp_put_be32(buf, CI_MAGIC);
	mrcp_put_be16(buf + 4, MRCP_CONN_INFO_VERSION);
	mrcp_put_be16(buf + 6, CI_LEN);
	mrcp_put_be32(buf + 8, ci->versions);
	mrcp_put_be32(buf + 12, ci->qpn & MRCP_QPN_MASK);
	mrcp_put_be32(buf + 16, ci->init_psn & MRCP_PSN_MASK);
	put_ip(buf + 20, &ci->node_addr);
	buf[37] = ci->n_ports;
	for (unsigned i = 0; i < MRCP_MAX_PORTS; i++)
		put_ip(buf + 38 + 17 * i, &ci->port_addr[i]);
	mrcp_put_be32(buf + 174, ci->port_status_mask);
	mrcp_put_be16(buf + 178, ci->mtu);
	buf[180] = ci->mpr_dest;
	mrcp_put_be16(buf + 181, ci->max_wimm_dest);
	buf[183] = (uint8_t)((ci->trim_nack ? 1 : 0) | (ci->dyn_mpr ? 2 : 0) | (ci->svc_time ? 4 : 0));
	mrcp_put_be16(buf + 184, ci->udp_port);
	mrcp_put_be64(buf + 186, ci->buf_va);
	mrcp_put_be32(buf + 194, ci->buf_rkey);
	mrcp_put_be64(buf + 198, ci->buf_len);
	return (int)CI_LEN;
}

int mrcp_conn_info_decode(const uint8_t *buf, size_t len, struct mrcp_conn_info *ci)
{
	if (len < 8 || mrcp_get_be32(buf) != CI_MAGIC)
		return -EBADMSG;
	if (mrcp_get_be16(buf + 4) != MRCP_CONN_INFO_VERSION)
		return -EPROTO;
	if (mrcp_get_be16(buf + 6) != CI_LEN || len != CI_LEN)
		return -EBADMSG;
	memset(ci, 0, sizeof(*ci));
	ci->versions = mrcp_get_be32(buf + 8);
	ci->qpn = mrcp_get_be32(buf + 12);
	ci->init_psn = mrcp_get_be32(buf + 16);
	if (ci->qpn > MRCP_QPN_MASK || ci->init_psn > MRCP_PSN_MASK)
		return -EBADMSG;
	if (get_ip(buf + 20, &ci->node_addr) != 0)
		return -EBADMSG;
	ci->n_ports = buf[37];
	if (ci->n_ports > MRCP_MAX_PORTS)
		return -EBADMSG;
	for (unsigned i = 0; i < MRCP_MAX_PORTS; i++)
		if (get_ip(buf + 38 + 17 * i, &ci->port_addr[i]) != 0)
			return -EBADMSG;
	ci->port_status_mask = mrcp_get_be32(buf + 174);
	ci->mtu = mrcp_get_be16(buf + 178);
	ci->mpr_dest = buf[180];
	ci->max_wimm_dest = mrcp_get_be16(buf + 181);
	if (buf[183] & ~7u)
		return -EBADMSG;
	ci->trim_nack = buf[183] & 1;
	ci->dyn_mpr = (buf[183] >> 1) & 1;
	ci->svc_time = (buf[183] >> 2) & 1;
	ci->udp_port = mrcp_get_be16(buf + 184);
	ci->buf_va = mrcp_get_be64(buf + 186);
	ci->buf_rkey = mrcp_get_be32(buf + 194);
	ci->buf_len = mrcp_get_be64(buf + 198);
	return 0;
}

/* ---- peers and QPCCs ----------------------------------------------------------------- */

static uint64_t link_bps_up(const struct mrcp_engine *e)
{
	uint64_t bps = 0;

	/* D54: the sum of the speeds of the local ports that are up */
	for (unsigned i = 0; i < e->cfg.n_ports; i++)
		if (e->port_up & (1u << i))
			bps += e->cfg.port_bps[i];
	return bps ? bps : e->cfg.port_bps[0];
}

static int cc_init(struct mrcp_engine *e, struct cc_inst *cc, const char *name, uint16_t mtu)
{
	const struct mrcp_cc_ops *ops = mrcp_cc_find(&e->ccreg, name);
	struct mrcp_cc_params p;
	int rc;

	if (ops == NULL)
		return -EINVAL;
	p = e->cfg.cc_params;
	p.link_bps = link_bps_up(e);
	if (p.base_rtt_ns == 0)
		p.base_rtt_ns = e->cfg.base_rtt_ns;
	p.mtu = mtu;
	/* a full data packet's nominal size is payload + headers + ICRC +
	 * 40 B; min_cwnd must hold one (§6.4) */
	p.pkt_overhead = (uint32_t)(PKT_OVERHEAD + MRCP_ICRC_LEN + MRCP_DATA_HDR_MAX);
	p.trimming_fabric = e->cfg.trimming_fabric;
	cc->priv = calloc(1, ops->priv_size ? ops->priv_size : 1);
	if (cc->priv == NULL)
		return -ENOMEM;
	rc = ops->init(cc->priv, &p, e->now);
	if (rc != 0) {
		free(cc->priv);
		cc->priv = NULL;
		return rc;
	}
	cc->ops = ops;
	cc->users = 0;
	cc->inflight = 0;
	return 0;
}

static void cc_fini(struct cc_inst *cc)
{
	if (cc->priv == NULL)
		return;
	if (cc->ops->release != NULL)
		cc->ops->release(cc->priv);
	free(cc->priv);
	cc->priv = NULL;
}

static struct peer *peer_get(struct mrcp_engine *e, const struct mrcp_conn_info *ci)
{
	struct peer *p = mrcp__peer_find(e, &ci->node_addr);

	if (p != NULL)
		return p;
	for (uint32_t i = 0; i < e->cfg.max_peers; i++) {
		p = &e->peers[i];
		if (p->used)
			continue;
		cc_fini(&p->cc);
		memset(p, 0, sizeof(*p));
		p->used = true;
		p->node = ci->node_addr;
		p->n_ports = ci->n_ports;
		for (unsigned k = 0; k < ci->n_ports; k++)
			p->port_addr[k] = ci->port_addr[k].family ? ci->port_addr[k] : ci->node_addr;
		p->remote_up = ci->port_status_mask;
		p->qps_head = NIL;
		mrcp__peer_added(e, p);
		return p;
	}
	return NULL;
}

/* ---- create / connect / destroy -------------------------------------------------------- */

/* Every EV state change becomes an MRCP_EVENT_EV_STATE for the control plane
 * (§5.3 "events": operators and selftests count and log them). */
static void qp_ev_changed(void *ctx, const struct mrcp_ev_change *chg)
{
	struct qp *qp = ctx;
	struct mrcp_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.type = MRCP_EVENT_EV_STATE;
	ev.qpn = qp->qpn;
	ev.user_ctx = qp->user_ctx;
	ev.now_ns = qp->e->now;
	ev.ev = *chg;
	mrcp__event_push(qp->e, &ev);
}

int mrcp_qp_create(struct mrcp_engine *e, const struct mrcp_qp_attr *a, uint32_t *qpn)
{
	uint32_t nslots = 1u << e->qp_slot_bits;
	struct mrcp_qp_attr attr = a ? *a : (struct mrcp_qp_attr){0};
	struct qp *qp = NULL;
	struct mrcp_ev_config evc;
	int rc, pd = mrcp__pd_slot(e, attr.pd);

	if (attr.mode != MRCP_MODE_MRC && attr.mode != MRCP_MODE_RC)
		return -EINVAL;
	if (attr.timeout > 24 || attr.linear_cnt > 7 || attr.exp_cnt > 25)
		return -EINVAL;
	if (pd < 0)
		return -ENOENT; /* D67 */
	/* D60: round-robin over slots so a QPN is not reused soon */
	for (uint32_t i = 0; i < nslots; i++) {
		uint32_t s = (e->qp_rr + i) % nslots;
		if (!e->qps[s].used && s < e->cfg.max_qps) {
			qp = &e->qps[s];
			e->qp_rr = s + 1;
			break;
		}
	}
	if (qp == NULL)
		return -ENOSPC;
	memset(qp, 0, sizeof(*qp));
	qp->slot = (uint32_t)(qp - e->qps);
	qp->pd = (uint16_t)pd; /* counted now: mrcp__qp_free uncounts it on every path */
	if (pd != 0)
		e->pds[pd].n_qps++;
	/* D63: bits 23:22 are the engine's shard, then a sequence, then the slot */
	const uint32_t low = (1u << MRCP_SHARD_QPN_SHIFT) - 1;
	qp->qpn = ((e->qpn_seq++ << e->qp_slot_bits) | qp->slot) & low;
	if ((qp->qpn >> e->qp_slot_bits) == 0) { /* sequence wrapped: skip 0..3 */
		e->qpn_seq = 1;
		qp->qpn = ((e->qpn_seq++ << e->qp_slot_bits) | qp->slot) & low;
	}
	qp->qpn |= (uint32_t)e->cfg.shard << MRCP_SHARD_QPN_SHIFT;
	qp->attr = attr;
	qp->mode = (uint8_t)attr.mode;
	qp->user_ctx = attr.user_ctx;
	qp->timeout = attr.timeout ? attr.timeout : e->cfg.timeout;
	qp->linear_cnt = attr.linear_cnt ? attr.linear_cnt : e->cfg.linear_cnt;
	qp->exp_cnt = attr.exp_cnt ? attr.exp_cnt : e->cfg.exp_cnt;
	qp->T_ns = 1024ull << qp->timeout; /* 1.024 us x 2^timeout */
	qp->rW = 128u * (attr.mpr ? attr.mpr : e->cfg.mpr);
	qp->max_wimm_local = attr.max_wimm ? attr.max_wimm : e->cfg.max_wimm;
	qp->sq_cap = mrcp__pow2_at_least(attr.sq_depth ? attr.sq_depth : e->cfg.sq_depth);
	qp->rq_cap = mrcp__pow2_at_least(attr.rq_depth ? attr.rq_depth : e->cfg.rq_depth);
	qp->rm_cap = mrcp__pow2_at_least(qp->rW);
	qp->sq_mask = mrcp__first_size(&e->cfg, qp->sq_cap) - 1;
	qp->rq_mask = mrcp__first_size(&e->cfg, qp->rq_cap) - 1;
	qp->rbits_mask = mrcp__pow2_at_least(qp->rW < 64 ? 64 : qp->rW) - 1;
	qp->rm_mask = mrcp__first_size(&e->cfg, qp->rm_cap) - 1;
	qp->sq = calloc(qp->sq_mask + 1, sizeof(*qp->sq));
	qp->rq = calloc(qp->rq_mask + 1, sizeof(*qp->rq));
	qp->rbits = calloc((qp->rbits_mask + 1) / 64, sizeof(*qp->rbits));
	qp->rm = calloc(qp->rm_mask + 1, sizeof(*qp->rm));
	qp->used = true;
	if (qp->sq == NULL || qp->rq == NULL || qp->rbits == NULL || qp->rm == NULL) {
		mrcp__qp_free(e, qp);
		return -ENOMEM;
	}
	/* INIT binds the EV profile (§8) */
	evc = attr.ev.n_active ? attr.ev : e->cfg.ev;
	evc.n_ports = e->cfg.n_ports;
	if (evc.base_rtt_ns == 0)
		evc.base_rtt_ns = e->cfg.base_rtt_ns;
	evc.trimming_fabric = e->cfg.trimming_fabric;
	if (e->cfg.node_addr.family == 4)
		evc.ipv4 = true; /* D5: IPv4 carries only 16 EV bits */
	if (qp->mode == MRCP_MODE_RC) {
		/* the baseline has one path: one EV per plane, one of them used */
		evc.n_active = e->cfg.n_ports;
		evc.n_backup = 0;
		evc.min_active = 1;
	}
	qp->e = e;
	rc = mrcp_ev_set_init(&qp->evs, &evc, &e->prng, qp_ev_changed, qp);
	if (rc != 0) {
		qp->evs.evs = NULL;
		mrcp__qp_free(e, qp);
		return rc;
	}
	mrcp_ce_table_init(&qp->ce, 6); /* D47 */
	qp->init_psn = mrcp_prng_below(&e->prng, 1u << 24); /* D25 */
	if (attr.fixed_init_psn)
		qp->init_psn = attr.init_psn & MRCP_PSN_MASK;
	qp->next_psn = qp->snd_una = qp->init_psn;
	qp->timer.owner = qp->slot + 1;
	qp->out_head = qp->out_tail = NIL;
	qp->state = MRCP_QPS_INIT;
	*qpn = qp->qpn;
	return 0;
}

int mrcp_qp_local_info(struct mrcp_engine *e, uint32_t qpn, struct mrcp_conn_info *out)
{
	struct qp *qp = mrcp__qp_lookup(e, qpn);

	if (qp == NULL)
		return -ENOENT;
	memset(out, 0, sizeof(*out));
	out->versions = 1; /* D59: v1 only */
	out->qpn = qp->qpn;
	out->init_psn = qp->init_psn;
	out->node_addr = e->cfg.node_addr;
	out->n_ports = e->cfg.n_ports;
	for (unsigned i = 0; i < e->cfg.n_ports; i++)
		out->port_addr[i] = e->cfg.port_addr[i].family ? e->cfg.port_addr[i] : e->cfg.node_addr;
	out->port_status_mask = e->port_up;
	out->mtu = e->cfg.mtu;
	out->mpr_dest = (uint8_t)(qp->rW / 128);
	out->max_wimm_dest = qp->max_wimm_local;
	out->trim_nack = true; /* D40: we always offer it */
	out->dyn_mpr = false;
	out->svc_time = true;
	out->udp_port = e->cfg.udp_port;
	return 0;
}

int mrcp_qp_connect(struct mrcp_engine *e, uint32_t qpn, const struct mrcp_conn_info *ci, uint64_t now_ns)
{
	struct qp *qp = mrcp__qp_lookup(e, qpn);
	struct peer *p;
	uint8_t mpr;
	int rc;

	e->now = now_ns;
	if (qp == NULL)
		return -ENOENT;
	if (qp->state != MRCP_QPS_INIT)
		return -EPERM;
	if ((ci->versions & 1u) == 0 || ci->udp_port != e->cfg.udp_port)
		return -EPROTO; /* D59 */
	if (ci->qpn > MRCP_QPN_MASK || ci->qpn <= MRCP_QPN_ENDPOINT || ci->init_psn > MRCP_PSN_MASK ||
	    ci->n_ports == 0 || ci->n_ports > MRCP_MAX_PORTS || ci->mpr_dest == 0 || ci->max_wimm_dest == 0 ||
	    (ci->mtu != 1024 && ci->mtu != 2048 && ci->mtu != 4096) ||
	    (ci->node_addr.family != 4 && ci->node_addr.family != 6))
		return -EINVAL;
	p = peer_get(e, ci);
	if (p == NULL)
		return -ENOSPC;
	/* the QPCC: one per peer (D53) unless cc_scope is qp */
	qp->mtu = ci->mtu < e->cfg.mtu ? ci->mtu : e->cfg.mtu; /* D3 */
	if (e->cfg.cc_per_qp || qp->attr.cc != NULL) {
		rc = cc_init(e, &qp->own_cc, qp->attr.cc ? qp->attr.cc : e->cfg.cc, qp->mtu);
		if (rc != 0)
			return rc;
		qp->cc = &qp->own_cc;
	} else {
		if (p->cc.priv == NULL) {
			rc = cc_init(e, &p->cc, e->cfg.cc, qp->mtu);
			if (rc != 0)
				return rc;
		}
		qp->cc = &p->cc;
	}
	qp->cc->users++;
	qp->peer = p;
	p->n_qps++;
	qp->peer_next = p->qps_head;
	p->qps_head = qp->slot;
	qp->dqpn = ci->qpn;
	/* RTR: the responder's expected PSN (D25) */
	qp->rcv_init_psn = ci->init_psn;
	qp->rcv_cack = mrcp_psn_add(ci->init_psn, -1);
	qp->last_released_psn = qp->rcv_cack;
	/* RTS: the requester window W = 128 x min(mpr, mpr_dest) (§4.1) */
	mpr = (uint8_t)(qp->rW / 128);
	if (ci->mpr_dest < mpr)
		mpr = ci->mpr_dest;
	qp->W = 128u * mpr;
	qp->sb_cap = mrcp__pow2_at_least(qp->W);
	qp->sb_mask = mrcp__first_size(&e->cfg, qp->sb_cap) - 1;
	qp->sb = calloc(qp->sb_mask + 1, sizeof(*qp->sb));
	if (qp->sb == NULL)
		return -ENOMEM;
	qp->max_wimm = ci->max_wimm_dest < qp->max_wimm_local ? ci->max_wimm_dest : qp->max_wimm_local;
	qp->peer_trim_nack = ci->trim_nack;
	qp->peer_svc_time = ci->svc_time;
	mrcp_ev_set_port_masks(&qp->evs, e->port_up, p->remote_up);
	qp->rc_ev = -1;
	if (qp->mode == MRCP_MODE_RC) {
		/* one path for the life of the QP, as RoCE's ECMP-hashed flow */
		qp->rc_ev = (int)mrcp_prng_below(&e->prng, qp->evs.n_evs);
	}
	qp->min_rtt_ns = 0;
	qp->last_progress_ns = now_ns;
	{
		struct mrcp_cc_stats st;
		qp->cc->ops->stats(qp->cc->priv, &st);
		qp->target_qdelay_ns = st.target_qdelay_ns;
	}
	qp->state = MRCP_QPS_RTS;
	return 0;
}

int mrcp_qp_state(const struct mrcp_engine *e, uint32_t qpn)
{
	const struct qp *qp = mrcp__qp_lookup((struct mrcp_engine *)(uintptr_t)e, qpn);

	return qp ? qp->state : 0;
}

void mrcp__wqe_wc(const struct qp *qp, const struct wqe *w, uint8_t status, struct mrcp_wc *wc)
{
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = w->wr_id;
	wc->user_ctx = qp->user_ctx;
	wc->qpn = qp->qpn;
	wc->opcode = w->opcode == MRCP_WR_WRITE_IMM ? MRCP_WC_WRITE_IMM : MRCP_WC_WRITE;
	wc->status = status;
	wc->byte_len = w->len;
	wc->msn = w->msn;
}

/* Release every SGE reference a WQE holds. */
void mrcp__wqe_release(struct mrcp_engine *e, struct wqe *w)
{
	for (unsigned i = 0; i < w->n_sge; i++)
		if (e->mrs[w->sge[i].mr].refs > 0)
			e->mrs[w->sge[i].mr].refs--;
	w->n_sge = 0;
}

void mrcp__qp_flush(struct mrcp_engine *e, struct qp *qp, uint8_t first_status)
{
	struct mrcp_wc wc;
	uint8_t status = first_status;

	/* every outstanding WR completes with an error, oldest first (§4.5) */
	while (qp->sq_head != qp->sq_tail) {
		struct wqe *w = &qp->sq[qp->sq_head & qp->sq_mask];
		mrcp__wqe_wc(qp, w, status, &wc);
		if (!mrcp__cq_push(e, &wc))
			break; /* finished by the next flush once the CQ drains */
		mrcp__wqe_release(e, w);
		qp->c.wc_err++;
		qp->sq_head++;
		status = MRCP_WC_FLUSH_ERR;
	}
	qp->sq_seg = qp->sq_head;
	while (qp->rq_used != qp->rq_posted) {
		memset(&wc, 0, sizeof(wc));
		wc.wr_id = qp->rq[qp->rq_used & qp->rq_mask];
		wc.user_ctx = qp->user_ctx;
		wc.qpn = qp->qpn;
		wc.opcode = MRCP_WC_RECV_IMM;
		wc.status = MRCP_WC_FLUSH_ERR;
		if (!mrcp__cq_push(e, &wc))
			break;
		qp->c.wc_err++;
		qp->rq_used++;
	}
}

void mrcp__qp_fail(struct mrcp_engine *e, struct qp *qp, const struct mrcp_qp_err *err)
{
	struct mrcp_event ev;

	if (qp->state == MRCP_QPS_ERROR)
		return;
	qp->state = MRCP_QPS_ERROR;
	qp->err = *err;
	mrcp__qp_flush(e, qp, err->status);
	/* drop requester state: nothing will be sent again, and what it had
	 * in flight leaves the QPCC's inflight */
	if (qp->cc != NULL)
		qp->cc->inflight -= qp->outstanding_bytes;
	qp->outstanding_bytes = 0;
	qp->n_out = 0;
	qp->n_rtxq = 0;
	qp->out_head = qp->out_tail = NIL;
	mrcp_timer_cancel(&e->wheel, &qp->timer);
	mrcp__cc_wake(e, qp->cc, qp->peer); /* its bytes left a shared window */
	memset(&ev, 0, sizeof(ev));
	ev.type = MRCP_EVENT_QP_ERROR;
	ev.qpn = qp->qpn;
	ev.user_ctx = qp->user_ctx;
	ev.now_ns = e->now;
	ev.qp_error = *err;
	mrcp__event_push(e, &ev);
}

void mrcp__qp_error(struct mrcp_engine *e, struct qp *qp, uint8_t status, uint8_t cause)
{
	struct mrcp_qp_err err = { .status = status, .cause = cause };

	mrcp__qp_fail(e, qp, &err);
}

void mrcp__qp_free(struct mrcp_engine *e, struct qp *qp)
{
	mrcp_timer_cancel(&e->wheel, &qp->timer);
	mrcp__qp_unready(e, qp);
	if (qp->sq != NULL)
		for (uint32_t i = qp->sq_head; i != qp->sq_tail; i++)
			mrcp__wqe_release(e, &qp->sq[i & qp->sq_mask]);
	if (qp->cc != NULL) {
		qp->cc->inflight -= qp->outstanding_bytes;
		qp->outstanding_bytes = 0;
		qp->cc->users--;
	}
	if (qp->cc == &qp->own_cc)
		cc_fini(&qp->own_cc);
	if (qp->peer != NULL) {
		uint32_t *pp = &qp->peer->qps_head;
		while (*pp != NIL && *pp != qp->slot)
			pp = &e->qps[*pp].peer_next;
		if (*pp == qp->slot)
			*pp = qp->peer_next;
		qp->peer->n_qps--;
		if (qp->cc == &qp->peer->cc)
			mrcp__cc_wake(e, qp->cc, qp->peer); /* its bytes left the window */
	}
	if (qp->evs.evs != NULL)
		mrcp_ev_set_fini(&qp->evs);
	if (qp->pd != 0)
		e->pds[qp->pd].n_qps--;
	free(qp->sq);
	free(qp->rq);
	free(qp->rbits);
	free(qp->rm);
	free(qp->sb);
	free(qp->sbp);
	qp->sbp = NULL;
	qp->sq = NULL;
	qp->rq = NULL;
	qp->rbits = NULL;
	qp->rm = NULL;
	qp->sb = NULL;
	qp->used = false;
}

int mrcp_qp_destroy(struct mrcp_engine *e, uint32_t qpn, uint64_t now_ns)
{
	struct qp *qp = mrcp__qp_lookup(e, qpn);

	e->now = now_ns;
	if (qp == NULL)
		return -ENOENT;
	mrcp__resp_farewell(e, qp); /* D73 */
	if (qp->state != MRCP_QPS_ERROR)
		mrcp__qp_flush(e, qp, MRCP_WC_FLUSH_ERR);
	mrcp__qp_free(e, qp);
	return 0;
}

/* ---- sizing by use ---------------------------------------------------------------------- */

/* The kept record of PSN @psn (mrcp__qp_sb_evict), or NULL. The records
 * are in PSN order. */
static const struct sb_past *sb_past_find(const struct qp *qp, uint32_t psn)
{
	uint32_t lo = qp->sbp_head, hi = qp->sbp_tail;

	while (lo != hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const struct sb_past *r = &qp->sbp[mid & qp->sbp_mask];

		if (r->psn == psn)
			return r;
		if (mrcp_psn_lt(r->psn, psn))
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Forget the kept records no full-size scoreboard would hold any more. */
static void sb_past_expire(struct qp *qp)
{
	uint32_t oldest = mrcp_psn_add(qp->next_psn, -(int32_t)qp->sb_cap);

	while (qp->sbp_head != qp->sbp_tail && mrcp_psn_lt(qp->sbp[qp->sbp_head & qp->sbp_mask].psn, oldest))
		qp->sbp_head++;
}

void mrcp__qp_sb_evict(struct qp *qp, uint32_t psn)
{
	uint32_t n = qp->sb_mask + 1;
	const struct sb_entry *old = &qp->sb[psn & qp->sb_mask];
	struct sb_past *r;

	if (n >= qp->sb_cap)
		return; /* a full-size scoreboard overwrites it too */
	sb_past_expire(qp);
	if (qp->sbp == NULL) {
		qp->sbp = calloc(MRCP_GROW_FIRST, sizeof(*qp->sbp));
		qp->sbp_mask = MRCP_GROW_FIRST - 1;
		if (qp->sbp == NULL)
			return;
	} else if (qp->sbp_tail - qp->sbp_head > qp->sbp_mask) {
		r = mrcp__ring_grow(qp->sbp, &qp->sbp_mask, qp->sbp_head, qp->sbp_tail, sizeof(*r), qp->sb_cap);
		if (r == NULL)
			qp->sbp_head++; /* out of memory: the oldest goes */
		else
			qp->sbp = r;
	}
	r = &qp->sbp[qp->sbp_tail++ & qp->sbp_mask];
	r->psn = mrcp_psn_add(psn, -(int32_t)n);
	r->sent_ns = old->sent_ns;
	r->tx_count = old->tx_count;
	r->rtx_cause = old->rtx_cause;
}

struct sb_entry *mrcp__qp_sb_past(struct qp *qp, uint32_t psn)
{
	const struct sb_past *r;

	if (mrcp_psn_lt(psn, mrcp_psn_add(qp->next_psn, -(int32_t)qp->sb_cap)) || !mrcp_psn_lt(psn, qp->next_psn))
		return NULL;
	if (!mrcp_psn_lt(psn, mrcp_psn_add(qp->next_psn, -(int32_t)qp->sb_mask - 1)))
		return &qp->sb[psn & qp->sb_mask];
	sb_past_expire(qp);
	r = sb_past_find(qp, psn);
	if (r == NULL)
		return NULL;
	/* acknowledged: no flags, nothing charged (ack_through and the SACK
	 * path settle every charge) */
	memset(&qp->sbp_view, 0, sizeof(qp->sbp_view));
	qp->sbp_view.sent_ns = r->sent_ns;
	qp->sbp_view.tx_count = r->tx_count;
	qp->sbp_view.rtx_cause = r->rtx_cause;
	return &qp->sbp_view;
}

bool mrcp__qp_sb_grow(struct qp *qp)
{
	uint32_t n = qp->sb_mask + 1, nn = 2 * n;
	struct sb_entry *sb;

	if (n >= qp->sb_cap || (sb = calloc(nn, sizeof(*sb))) == NULL)
		return false;
	/* Every slot is the PSN of [next_psn - n, next_psn) that maps to it,
	 * live or acknowledged (check_spurious reads those too): each moves to
	 * its PSN's new slot. The new slots are PSNs [next_psn - nn, next_psn
	 * - n), rebuilt from the kept records of the retransmitted ones. */
	for (uint32_t k = 0; k < n; k++) {
		uint32_t psn = mrcp_psn_add(qp->next_psn, (int32_t)k - (int32_t)n);

		sb[psn & (nn - 1)] = qp->sb[psn & (n - 1)];
	}
	sb_past_expire(qp);
	while (qp->sbp_head != qp->sbp_tail) {
		const struct sb_past *r = &qp->sbp[(qp->sbp_tail - 1) & qp->sbp_mask];
		struct sb_entry *en = &sb[r->psn & (nn - 1)];

		if (mrcp_psn_lt(r->psn, mrcp_psn_add(qp->next_psn, -(int32_t)nn)))
			break;
		en->sent_ns = r->sent_ns;
		en->tx_count = r->tx_count;
		en->rtx_cause = r->rtx_cause;
		qp->sbp_tail--;
	}
	free(qp->sb);
	qp->sb = sb;
	qp->sb_mask = nn - 1;
	return true;
}

bool mrcp__qp_rm_grow(struct qp *qp, uint16_t msn)
{
	uint32_t n = qp->rm_mask + 1, nn = 2 * n;
	struct rmsg *rm;

	while (nn <= (uint32_t)mrcp_msn_diff(msn, qp->rcv_msn) && nn < qp->rm_cap)
		nn *= 2;
	if (n >= qp->rm_cap || (rm = calloc(nn, sizeof(*rm))) == NULL)
		return false;
	/* the open messages are within n of rcv_msn: each to its MSN's slot */
	for (uint32_t k = 0; k < n; k++)
		if (qp->rm[k].used)
			rm[qp->rm[k].msn & (nn - 1)] = qp->rm[k];
	free(qp->rm);
	qp->rm = rm;
	qp->rm_mask = nn - 1;
	return true;
}

uint64_t mrcp__qp_mem(const struct qp *qp)
{
	uint64_t b = (uint64_t)(qp->sq_mask + 1) * sizeof(*qp->sq) + (uint64_t)(qp->rq_mask + 1) * sizeof(*qp->rq) +
		     (uint64_t)(qp->rbits_mask + 1) / 8 + (uint64_t)(qp->rm_mask + 1) * sizeof(*qp->rm);

	if (qp->sb != NULL)
		b += (uint64_t)(qp->sb_mask + 1) * sizeof(*qp->sb);
	if (qp->sbp != NULL)
		b += (uint64_t)(qp->sbp_mask + 1) * sizeof(*qp->sbp);
	if (qp->evs.evs != NULL) /* the EVs, permutation, value hash and deadline heaps */
		b += (uint64_t)qp->evs.n_evs * (sizeof(*qp->evs.evs) + 3 * sizeof(uint16_t)) +
		     (uint64_t)(qp->evs.hash_mask + 1) * sizeof(uint16_t);
	if (qp->cc == &qp->own_cc && qp->own_cc.priv != NULL)
		b += qp->own_cc.ops->priv_size;
	return b;
}

/* ---- posting -------------------------------------------------------------------------- */

int mrcp_qp_post_send(struct mrcp_engine *e, uint32_t qpn, const struct mrcp_send_wr *wr, uint64_t now_ns)
{
	struct qp *qp = mrcp__qp_lookup(e, qpn);
	struct wqe *w;
	uint64_t total = 0;

	e->now = now_ns;
	if (qp == NULL)
		return -ENOENT;
	if (qp->state != MRCP_QPS_RTS)
		return -EPERM;
	if ((wr->opcode != MRCP_WR_WRITE && wr->opcode != MRCP_WR_WRITE_IMM) ||
	    wr->num_sge > MRCP_MAX_SGE || (wr->num_sge != 0 && wr->sg_list == NULL))
		return -EINVAL;
	if (qp->sq_tail - qp->sq_head >= qp->sq_cap)
		return -EAGAIN;
	if (qp->sq_tail - qp->sq_head > qp->sq_mask) {
		struct wqe *sq = mrcp__ring_grow(qp->sq, &qp->sq_mask, qp->sq_head, qp->sq_tail, sizeof(*sq),
						 qp->sq_cap);
		if (sq == NULL)
			return -EAGAIN;
		qp->sq = sq;
	}
	w = &qp->sq[qp->sq_tail & qp->sq_mask];
	memset(w, 0, sizeof(*w));
	for (uint32_t i = 0; i < wr->num_sge; i++) {
		const struct mrcp_sge *s = &wr->sg_list[i];
		struct eng_mr *m = mrcp__mr_lookup(e, s->lkey);
		/* D67: a send may read only regions of its QP's PD */
		if (m == NULL || m->pd != qp->pd || s->addr < m->va || s->addr + s->len < s->addr ||
		    s->addr + s->len > m->va + m->len) {
			w->n_sge = (uint8_t)i;
			mrcp__wqe_release(e, w);
			return -EFAULT;
		}
		w->sge[i].host = m->host + (s->addr - m->va);
		w->sge[i].len = s->len;
		w->sge[i].mr = (uint32_t)(m - e->mrs);
		m->refs++;
		w->n_sge = (uint8_t)(i + 1);
		total += s->len;
	}
	if (total > (1ull << 31)) {
		mrcp__wqe_release(e, w);
		return -EINVAL;
	}
	w->wr_id = wr->wr_id;
	w->opcode = wr->opcode;
	w->flags = (uint8_t)wr->flags;
	w->imm = wr->imm;
	w->remote_va = wr->remote_addr;
	w->rkey = wr->rkey;
	w->len = (uint32_t)total;
	w->msn = qp->next_msn++;
	w->rq_msn = qp->next_rq_msn; /* D12: WriteImm messages issued before it */
	if (wr->opcode == MRCP_WR_WRITE_IMM)
		qp->next_rq_msn++;
	qp->sq_tail++;
	mrcp__qp_ready(e, qp);
	return 0;
}

int mrcp_qp_post_recv(struct mrcp_engine *e, uint32_t qpn, uint64_t wr_id)
{
	struct qp *qp = mrcp__qp_lookup(e, qpn);

	if (qp == NULL)
		return -ENOENT;
	if (qp->state == MRCP_QPS_ERROR || qp->state == MRCP_QPS_RESET)
		return -EPERM;
	if (qp->rq_posted - qp->rq_used >= qp->rq_cap)
		return -EAGAIN;
	if (qp->rq_posted - qp->rq_used > qp->rq_mask) {
		uint64_t *rq = mrcp__ring_grow(qp->rq, &qp->rq_mask, qp->rq_used, qp->rq_posted, sizeof(*rq),
					       qp->rq_cap);
		if (rq == NULL)
			return -EAGAIN;
		qp->rq = rq;
	}
	qp->rq[qp->rq_posted++ & qp->rq_mask] = wr_id;
	return 0;
}

/* ---- introspection ---------------------------------------------------------------------- */

int mrcp_qp_info(const struct mrcp_engine *e, uint32_t qpn, struct mrcp_qp_info *out)
{
	const struct qp *qp = mrcp__qp_lookup((struct mrcp_engine *)(uintptr_t)e, qpn);

	if (qp == NULL)
		return -ENOENT;
	memset(out, 0, sizeof(*out));
	out->qpn = qp->qpn;
	out->dest_qpn = qp->dqpn;
	out->state = qp->state;
	out->mode = qp->mode;
	out->next_psn = qp->next_psn;
	out->snd_una = qp->snd_una;
	out->rcv_cack = qp->rcv_cack;
	out->next_msn = qp->next_msn;
	out->rcv_msn = qp->rcv_msn;
	out->outstanding_pkts = qp->n_out;
	out->sq_outstanding = qp->sq_tail - qp->sq_head;
	out->retry_k = qp->k;
	out->err = qp->err;
	if (qp->cc != NULL)
		mrcp__cc_stats(qp->cc, &out->cc);
	out->c = qp->c;
	out->n_evs = qp->evs.n_evs;
	return 0;
}

const struct mrcp_ev_set *mrcp_qp_evs(const struct mrcp_engine *e, uint32_t qpn)
{
	const struct qp *qp = mrcp__qp_lookup((struct mrcp_engine *)(uintptr_t)e, qpn);

	return qp ? &qp->evs : NULL;
}

int mrcp_qp_ev_deny(struct mrcp_engine *e, uint32_t qpn, uint32_t ev, bool deny, uint64_t now_ns)
{
	struct qp *qp = mrcp__qp_lookup(e, qpn);
	int idx;

	e->now = now_ns;
	if (qp == NULL)
		return -ENOENT;
	idx = mrcp_ev_lookup(&qp->evs, ev);
	if (idx < 0)
		return -EINVAL;
	mrcp_ev_event(&qp->evs, idx, deny ? MRCP_EV_EVT_DENY : MRCP_EV_EVT_ALLOW, now_ns);
	mrcp__qp_ready(e, qp);
	return 0;
}

void mrcp_qp_set_backlog(struct mrcp_engine *e, uint32_t qpn, uint8_t percent)
{
	struct qp *qp = mrcp__qp_lookup(e, qpn);

	if (qp != NULL)
		qp->backlog_pct = percent > 100 ? 100 : percent;
}
