/* test_mrcfi.c - unit tests of the provider "mrc" in the test process, no
 * daemon: the provider's objects are linked in and called through their fid
 * op tables (the public fi_* inline calls), with endpoints from
 * mrcfi_ep_alloc (no session: progress polls nothing) and ring messages put
 * into a connection's receive ring by hand (mrcfi_ring_handle). Covers the
 * address and the AV (FI_AV_TABLE, FI_AV_MAP), tag matching with ignore bits,
 * FI_PEEK / FI_CLAIM / FI_DISCARD, the unexpected queue's order, FI_ORDER_SAS,
 * the CQ formats and error entries, counters, fi_mr_regv/regattr, the op tables (no NULL entry; what MRC
 * cannot do is -FI_ENOSYS) and fi_getinfo's hints. */
#define _GNU_SOURCE
#include "mrcfi.h"
#include "mrcp_test.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

struct fi_provider *fi_prov_ini(void);

#define API FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION)

struct fx {
	struct fi_info *info;
	struct fid_fabric *fab;
	struct fid_domain *dom;
	struct fid_av *av;
	struct fid_cq *cq;
	struct mrcfi_ep *ep;
};

static int getinfo(const struct fi_info *hints, struct fi_info **out)
{
	return mrcfi_prov.getinfo(API, NULL, NULL, 0, hints, out);
}

static void fx_open(struct fx *x, enum fi_av_type avt, enum fi_cq_format fmt)
{
	struct fi_info *hints = fi_allocinfo();

	ASSERT_TRUE(fi_prov_ini() == &mrcfi_prov); /* reads the FI_MRC_* variables */
	ASSERT_TRUE(hints != NULL);
	hints->caps = FI_MSG | FI_TAGGED | FI_DIRECTED_RECV;
	hints->ep_attr->type = FI_EP_RDM;
	hints->domain_attr->av_type = avt;
	ASSERT_EQ(0, getinfo(hints, &x->info));
	fi_freeinfo(hints);
	ASSERT_EQ(0, mrcfi_prov.fabric(x->info->fabric_attr, &x->fab, NULL));
	ASSERT_EQ(0, fi_domain(x->fab, x->info, &x->dom, NULL));
	struct fi_av_attr aa = {.type = avt};
	struct fi_cq_attr ca = {.format = fmt, .wait_obj = FI_WAIT_NONE};

	ASSERT_EQ(0, fi_av_open(x->dom, &aa, &x->av, NULL));
	ASSERT_EQ(0, fi_cq_open(x->dom, &ca, &x->cq, NULL));
	ASSERT_EQ(0, mrcfi_ep_alloc(x->dom, x->info, NULL, &x->ep));
	ASSERT_EQ(0, fi_ep_bind(&x->ep->ep, &x->av->fid, 0));
	ASSERT_EQ(0, fi_ep_bind(&x->ep->ep, &x->cq->fid, FI_TRANSMIT | FI_RECV));
	x->ep->enabled = true; /* fi_enable would start the bootstrap thread */
}

static void fx_close(struct fx *x)
{
	ASSERT_EQ(0, fi_close(&x->ep->ep.fid));
	ASSERT_EQ(0, fi_close(&x->cq->fid));
	ASSERT_EQ(0, fi_close(&x->av->fid));
	ASSERT_EQ(0, fi_close(&x->dom->fid));
	ASSERT_EQ(0, fi_close(&x->fab->fid));
	fi_freeinfo(x->info);
}

static struct mrcfi_name name_of(uint32_t boot_ip, uint16_t port, uint64_t ep_id)
{
	struct mrcfi_name n = {.magic = MRCFI_NAME_MAGIC, .version = MRCFI_NAME_VERSION, .boot_ip = boot_ip,
			       .boot_port = htons(port), .pid = 42, .ep_id = ep_id};

	return n;
}

/* A READY connection of @x's endpoint from the peer at @addr in the AV, with
 * a receive ring in test memory (the test frees it with conn_free). */
static struct mrcfi_conn *conn_open(struct fx *x, fi_addr_t addr)
{
	struct mrcfi_name peer;

	ASSERT_TRUE(mrcfi_av_get(x->ep->av, addr, &peer));
	struct mrcfi_conn *c = mrcfi_conn_new(x->ep, &peer, false);

	ASSERT_TRUE(c != NULL);
	c->state = MRCFI_CONN_READY;
	c->fi_addr = addr;
	c->slots = c->r_slots = 8;
	c->slot_size = c->r_slot_size = 64 + 256;
	c->rx_ring = calloc(c->slots, c->slot_size);
	ASSERT_TRUE(c->rx_ring != NULL);
	return c;
}

static void conn_free(struct mrcfi_conn *c)
{
	free(c->rx_ring);
	free(c);
}

/* The peer's next ring message: an eager message of @len bytes. */
static void ring_eager(struct mrcfi_conn *c, bool tagged, uint64_t tag, const char *payload, size_t len,
		       bool has_data, uint32_t data)
{
	uint8_t *slot = c->rx_ring + (size_t)(c->rx_seq % c->slots) * c->slot_size;
	struct mrcfi_hdr h = {.type = MRCFI_MSG_EAGER,
			      .flags = (uint8_t)((tagged ? MRCFI_HF_TAGGED : 0) | (has_data ? MRCFI_HF_DATA : 0)),
			      .data = data, .tag = tag, .size = len};

	memcpy(slot, &h, sizeof(h));
	memcpy(slot + sizeof(h), payload, len);
	mrcfi_ring_handle(c, (uint32_t)c->rx_seq);
	ASSERT_TRUE(c->state == MRCFI_CONN_READY);
}

/* A peer in @x's AV; @return its fi_addr. */
static fi_addr_t peer_add(struct fx *x, uint64_t ep_id)
{
	struct mrcfi_name n = name_of(htonl(0x0a000005), 4242, ep_id);
	fi_addr_t a = FI_ADDR_NOTAVAIL;

	ASSERT_EQ(1, fi_av_insert(x->av, &n, 1, &a, 0, NULL));
	ASSERT_TRUE(a != FI_ADDR_NOTAVAIL);
	return a;
}

static struct fi_cq_tagged_entry cq_one(struct fx *x)
{
	struct fi_cq_tagged_entry e;

	ASSERT_EQ(1, fi_cq_read(x->cq, &e, 1));
	return e;
}

static struct fi_cq_err_entry cq_err(struct fx *x)
{
	struct fi_cq_err_entry e;

	memset(&e, 0, sizeof(e));
	ASSERT_EQ(-FI_EAVAIL, fi_cq_read(x->cq, &(struct fi_cq_tagged_entry){0}, 1));
	ASSERT_EQ(1, fi_cq_readerr(x->cq, &e, 0));
	return e;
}

/* ---- the address and the AV ---------------------------------------------------------------- */

TEST(name, ok__magic_version_and_plane_count)
{
	struct mrcfi_name n = name_of(0, 0, 1);

	ASSERT_TRUE(mrcfi_name_ok(&n));
	n.n_planes = MRCFI_MAX_PLANES;
	ASSERT_TRUE(mrcfi_name_ok(&n));
	n.n_planes = MRCFI_MAX_PLANES + 1;
	ASSERT_FALSE(mrcfi_name_ok(&n));
	n = name_of(0, 0, 1);
	n.magic ^= 1;
	ASSERT_FALSE(mrcfi_name_ok(&n));
	n = name_of(0, 0, 1);
	n.version++;
	ASSERT_FALSE(mrcfi_name_ok(&n));
}

TEST(name, set_planes__by_plane_number_ipv4_or_zero)
{
	struct mrcfi_name n = name_of(0, 0, 1);
	struct mrc_port_addr p[4] = {
		{.plane = 1, .ipv4 = {10, 1, 0, 1}},
		{.plane = 2, .ipv6 = {0xfd}},             /* IPv6 only: 0 */
		{.plane = 4, .ipv4 = {10, 4, 0, 1}},
		{.plane = MRCFI_MAX_PLANES + 1, .ipv4 = {1, 2, 3, 4}}, /* no room: left out */
	};

	n.plane[5] = 77; /* stale: cleared */
	mrcfi_name_set_planes(&n, p, 4);
	ASSERT_EQ(4, n.n_planes);
	ASSERT_EQ(htonl(0x0a010001), n.plane[0]);
	ASSERT_EQ(0, n.plane[1]);
	ASSERT_EQ(0, n.plane[2]);
	ASSERT_EQ(htonl(0x0a040001), n.plane[3]);
	ASSERT_EQ(0, n.plane[5]);
	ASSERT_TRUE(mrcfi_name_ok(&n));
	mrcfi_name_set_planes(&n, p, 0);
	ASSERT_EQ(0, n.n_planes);
}

TEST(name, boot_candidates__host_then_planes_then_loopback)
{
	uint32_t host[3] = {htonl(0x7f000101), htonl(0xc0a80105), htonl(0xc0a80105)}; /* 127.0.1.1 skipped */
	struct mrcfi_name n = name_of(0, 0, 1);
	uint32_t out[8];

	n.n_planes = 3;
	n.plane[0] = htonl(0x0a010001);
	n.plane[1] = 0;
	n.plane[2] = htonl(0xc0a80105); /* the host's again: once */
	ASSERT_EQ(3, mrcfi_boot_candidates(host, 3, &n, out, 8));
	ASSERT_EQ(htonl(0xc0a80105), out[0]);
	ASSERT_EQ(htonl(0x0a010001), out[1]);
	ASSERT_EQ(htonl(INADDR_LOOPBACK), out[2]);
	/* a short array keeps the fallback */
	ASSERT_EQ(2, mrcfi_boot_candidates(host, 3, &n, out, 2));
	ASSERT_EQ(htonl(0xc0a80105), out[0]);
	ASSERT_EQ(htonl(INADDR_LOOPBACK), out[1]);
	/* nothing known: loopback only */
	ASSERT_EQ(1, mrcfi_boot_candidates(NULL, 0, NULL, out, 8));
	ASSERT_EQ(htonl(INADDR_LOOPBACK), out[0]);
	ASSERT_EQ(0, mrcfi_boot_candidates(host, 3, &n, out, 0));
}

static void av_roundtrip(enum fi_av_type type)
{
	struct fx x;
	struct mrcfi_name n[3] = {name_of(htonl(0x0a000005), 4242, 0xdeadbeef), name_of(htonl(0x0a000006), 1, 2),
				  name_of(htonl(0x0a000007), 3, 4)};
	fi_addr_t a[3];
	uint8_t buf[64];
	size_t len;
	char s[128];

	fx_open(&x, type, FI_CQ_FORMAT_TAGGED);
	n[0].n_planes = 2;
	n[0].plane[0] = htonl(0x0a010001);
	n[0].plane[1] = htonl(0x0a020001);
	n[1].magic = 0; /* not an address of ours */
	ASSERT_EQ(2, fi_av_insert(x.av, n, 3, a, 0, NULL));
	ASSERT_TRUE(a[0] != FI_ADDR_NOTAVAIL);
	ASSERT_TRUE(a[1] == FI_ADDR_NOTAVAIL);
	ASSERT_TRUE(a[2] != FI_ADDR_NOTAVAIL && a[2] != a[0]);
	len = sizeof(buf);
	ASSERT_EQ(0, fi_av_lookup(x.av, a[0], buf, &len));
	ASSERT_EQ(sizeof(struct mrcfi_name), len);
	ASSERT_MEMEQ(&n[0], buf, sizeof(n[0]));
	len = 8;
	ASSERT_EQ(-FI_ETOOSMALL, fi_av_lookup(x.av, a[2], buf, &len));
	ASSERT_EQ(sizeof(struct mrcfi_name), len);
	len = sizeof(s);
	ASSERT_STREQ("mrc://10.0.0.5:4242/00000000deadbeef;planes=10.1.0.1,10.2.0.1",
		     fi_av_straddr(x.av, &n[0], s, &len));
	ASSERT_EQ(strlen(s) + 1, len);
	len = sizeof(s);
	ASSERT_STREQ("mrc://10.0.0.7:3/0000000000000004", fi_av_straddr(x.av, &n[2], s, &len));
	/* removed: gone, the others stay */
	ASSERT_EQ(0, fi_av_remove(x.av, &a[0], 1, 0));
	len = sizeof(buf);
	ASSERT_EQ(-FI_ENOENT, fi_av_lookup(x.av, a[0], buf, &len));
	ASSERT_EQ(0, fi_av_lookup(x.av, a[2], buf, &len));
	ASSERT_EQ(-FI_ENOENT, fi_av_lookup(x.av, 1000, buf, &len));
	ASSERT_EQ(-FI_ENOSYS, fi_av_insertsvc(x.av, "host", "1", a, 0, NULL));
	fx_close(&x);
}

TEST(av, table__insert_lookup_straddr_remove)
{
	av_roundtrip(FI_AV_TABLE);
}

TEST(av, map__insert_lookup_straddr_remove)
{
	av_roundtrip(FI_AV_MAP);
}

TEST(av, open__types_and_unsupported_flags)
{
	struct fx x;
	struct fid_av *av;

	fx_open(&x, FI_AV_UNSPEC, FI_CQ_FORMAT_TAGGED);
	ASSERT_EQ(-FI_EINVAL, fi_av_open(x.dom, &(struct fi_av_attr){.type = 99}, &av, NULL));
	ASSERT_EQ(-FI_ENOSYS, fi_av_open(x.dom, &(struct fi_av_attr){.type = FI_AV_TABLE, .flags = FI_EVENT},
					 &av, NULL));
	ASSERT_EQ(-FI_ENOSYS, fi_av_bind(x.av, &x.cq->fid, 0));
	fx_close(&x);
}

TEST(ep, getname__the_endpoints_address_or_etoosmall)
{
	struct fx x;
	uint8_t buf[64];
	size_t len = 8;

	fx_open(&x, FI_AV_TABLE, FI_CQ_FORMAT_TAGGED);
	x.ep->name = name_of(htonl(0x0a000009), 7, 99);
	x.ep->name.n_planes = 1;
	x.ep->name.plane[0] = htonl(0x0a010009);
	ASSERT_EQ(-FI_ETOOSMALL, fi_getname(&x.ep->ep.fid, buf, &len));
	ASSERT_EQ(sizeof(struct mrcfi_name), len);
	len = sizeof(buf);
	ASSERT_EQ(0, fi_getname(&x.ep->ep.fid, buf, &len));
	ASSERT_EQ(sizeof(struct mrcfi_name), len);
	ASSERT_MEMEQ(&x.ep->name, buf, sizeof(struct mrcfi_name));
	ASSERT_EQ(-FI_ENOSYS, fi_setname(&x.ep->ep.fid, buf, len));
	fx_close(&x);
}

/* ---- matching ------------------------------------------------------------------------------- */

TEST(tag, match__ignore_bits)
{
	ASSERT_TRUE(mrcfi_tag_match(0x1234, 0, 0x1234));
	ASSERT_FALSE(mrcfi_tag_match(0x1234, 0, 0x1235));
	ASSERT_TRUE(mrcfi_tag_match(0x1200, 0xff, 0x12ab));
	ASSERT_FALSE(mrcfi_tag_match(0x1200, 0xff, 0x13ab));
	ASSERT_TRUE(mrcfi_tag_match(0, UINT64_MAX, 0xffffffffffffffffull));
	ASSERT_TRUE(mrcfi_tag_match(0xa000000000000000ull, 0x0fffffffffffffffull, 0xa123456789abcdefull));
}

TEST(tag, posted_receives__tag_ignore_and_source)
{
	struct fx x;
	char b1[8] = {0}, b2[8] = {0}, b3[8] = {0}, b4[8] = {0};
	int c1, c2, c3, c4;

	fx_open(&x, FI_AV_TABLE, FI_CQ_FORMAT_TAGGED);
	fi_addr_t pa = peer_add(&x, 1), pb = peer_add(&x, 2);
	struct mrcfi_conn *ca = conn_open(&x, pa), *cb = conn_open(&x, pb);

	ASSERT_EQ(0, fi_trecv(&x.ep->ep, b1, sizeof(b1), NULL, FI_ADDR_UNSPEC, 0x100, 0xff, &c1));
	ASSERT_EQ(0, fi_trecv(&x.ep->ep, b2, sizeof(b2), NULL, FI_ADDR_UNSPEC, 0x200, 0, &c2));
	ASSERT_EQ(0, fi_trecv(&x.ep->ep, b3, sizeof(b3), NULL, pb, 0x300, 0, &c3)); /* directed: b only */
	ring_eager(ca, true, 0x2ab, "nomatch", 7, false, 0);  /* neither: unexpected */
	ring_eager(ca, true, 0x300, "froma", 5, false, 0);    /* c3 wants b: unexpected */
	ASSERT_EQ(-FI_EAGAIN, fi_cq_read(x.cq, &(struct fi_cq_tagged_entry){0}, 1));
	ring_eager(ca, true, 0x1ab, "one", 3, false, 0);      /* c1 through its ignore bits */
	struct fi_cq_tagged_entry e = cq_one(&x);

	ASSERT_TRUE(e.op_context == &c1);
	ASSERT_U64_EQ(0x1ab, e.tag);
	ASSERT_EQ(3, e.len);
	ASSERT_U64_EQ(FI_RECV | FI_TAGGED, e.flags);
	ASSERT_TRUE(e.buf == b1);
	ASSERT_STREQ("one", b1);
	ring_eager(cb, true, 0x300, "fromb", 5, false, 0);
	e = cq_one(&x);
	ASSERT_TRUE(e.op_context == &c3);
	ASSERT_STREQ("fromb", b3);
	ring_eager(ca, true, 0x200, "two", 3, false, 0);
	e = cq_one(&x);
	ASSERT_TRUE(e.op_context == &c2);
	ASSERT_STREQ("two", b2);
	/* a late receive takes the unexpected one at once */
	ASSERT_EQ(0, fi_trecv(&x.ep->ep, b4, sizeof(b4), NULL, FI_ADDR_UNSPEC, 0x2ab, 0, &c4));
	e = cq_one(&x);
	ASSERT_TRUE(e.op_context == &c4);
	ASSERT_STREQ("nomatch", b4);
	fx_close(&x);
	conn_free(ca);
	conn_free(cb);
}

TEST(tag, unexpected_queue__arrival_order_and_separate_from_untagged)
{
	struct fx x;
	char b[4][8];
	int ctx[4];

	memset(b, 0, sizeof(b));
	fx_open(&x, FI_AV_TABLE, FI_CQ_FORMAT_TAGGED);
	struct mrcfi_conn *c = conn_open(&x, peer_add(&x, 1));

	ring_eager(c, false, 0, "msg", 3, false, 0); /* untagged: ux_msg */
	ring_eager(c, true, 7, "a", 1, false, 0);
	ring_eager(c, true, 8, "x", 1, false, 0);
	ring_eager(c, true, 7, "b", 1, false, 0);
	ring_eager(c, true, 7, "c", 1, false, 0);
	for (int i = 0; i < 3; i++) {
		ASSERT_EQ(0, fi_trecv(&x.ep->ep, b[i], sizeof(b[i]), NULL, FI_ADDR_UNSPEC, 7, 0, &ctx[i]));
		struct fi_cq_tagged_entry e = cq_one(&x);

		ASSERT_TRUE(e.op_context == &ctx[i]);
	}
	ASSERT_STREQ("a", b[0]);
	ASSERT_STREQ("b", b[1]);
	ASSERT_STREQ("c", b[2]);
	/* the untagged message is not a tagged receive's; fi_recv takes it */
	ASSERT_EQ(0, fi_recv(&x.ep->ep, b[3], sizeof(b[3]), NULL, FI_ADDR_UNSPEC, &ctx[3]));
	struct fi_cq_tagged_entry e = cq_one(&x);

	ASSERT_TRUE(e.op_context == &ctx[3]);
	ASSERT_U64_EQ(FI_RECV | FI_MSG, e.flags);
	ASSERT_STREQ("msg", b[3]);
	fx_close(&x);
	conn_free(c);
}

TEST(tag, peek_claim_discard)
{
	struct fx x;
	struct fi_context pctx, cctx, dctx;
	char b[8] = {0}, b2[8];
	int later;
	struct iovec iov = {.iov_base = b, .iov_len = sizeof(b)};
	struct fi_msg_tagged m = {.msg_iov = &iov, .iov_count = 1, .addr = FI_ADDR_UNSPEC, .tag = 6,
				  .context = &pctx};

	fx_open(&x, FI_AV_TABLE, FI_CQ_FORMAT_TAGGED);
	struct mrcfi_conn *c = conn_open(&x, peer_add(&x, 1));

	ring_eager(c, true, 5, "xyz", 3, true, 0x77);
	ring_eager(c, true, 9, "gone", 4, false, 0);
	/* nothing tagged 6: FI_ENOMSG on the error queue */
	ASSERT_EQ(0, fi_trecvmsg(&x.ep->ep, &m, FI_PEEK));
	struct fi_cq_err_entry ee = cq_err(&x);

	ASSERT_EQ(FI_ENOMSG, ee.err);
	ASSERT_TRUE(ee.op_context == &pctx);
	/* tag 5: its size, tag and data; the message stays */
	m.tag = 5;
	ASSERT_EQ(0, fi_trecvmsg(&x.ep->ep, &m, FI_PEEK));
	struct fi_cq_tagged_entry e = cq_one(&x);

	ASSERT_EQ(3, e.len);
	ASSERT_U64_EQ(5, e.tag);
	ASSERT_U64_EQ(0x77, e.data);
	ASSERT_TRUE(e.flags & FI_REMOTE_CQ_DATA);
	/* claimed: no other receive gets it, then FI_CLAIM fetches it */
	m.context = &cctx;
	ASSERT_EQ(0, fi_trecvmsg(&x.ep->ep, &m, FI_PEEK | FI_CLAIM));
	e = cq_one(&x);
	ASSERT_TRUE(e.op_context == &cctx);
	ASSERT_EQ(0, fi_trecv(&x.ep->ep, b2, sizeof(b2), NULL, FI_ADDR_UNSPEC, 5, 0, &later));
	ASSERT_EQ(-FI_EAGAIN, fi_cq_read(x.cq, &e, 1)); /* posted: the claimed one is not for it */
	ASSERT_EQ(0, fi_trecvmsg(&x.ep->ep, &m, FI_CLAIM));
	e = cq_one(&x);
	ASSERT_TRUE(e.op_context == &cctx);
	ASSERT_EQ(3, e.len);
	ASSERT_STREQ("xyz", b);
	/* FI_CLAIM without a claimed message */
	struct fi_context none = {{0}};

	m.context = &none;
	ASSERT_EQ(-FI_EINVAL, fi_trecvmsg(&x.ep->ep, &m, FI_CLAIM));
	/* FI_PEEK | FI_DISCARD drops it */
	m.tag = 9;
	m.context = &dctx;
	ASSERT_EQ(0, fi_trecvmsg(&x.ep->ep, &m, FI_PEEK | FI_DISCARD));
	e = cq_one(&x);
	ASSERT_EQ(4, e.len);
	ASSERT_EQ(0, fi_trecvmsg(&x.ep->ep, &m, FI_PEEK));
	ASSERT_EQ(FI_ENOMSG, cq_err(&x).err);
	/* the receive still posted is cancelled */
	ASSERT_EQ(0, fi_cancel(&x.ep->ep.fid, &later));
	ee = cq_err(&x);
	ASSERT_EQ(FI_ECANCELED, ee.err);
	ASSERT_TRUE(ee.op_context == &later);
	ASSERT_EQ(-FI_ENOENT, fi_cancel(&x.ep->ep.fid, &later));
	fx_close(&x);
	conn_free(c);
}

/* FI_ORDER_SAS: at the receiver, messages that match the same receives
 * complete them in arrival (= send) order; at the sender, every message to
 * a peer goes through one FIFO of one connection; a failed connection
 * completes all of them, in order, with FI_EIO. */
TEST(order, sas__receiver_and_sender_fifo_and_eio_on_failure)
{
	struct fx x;
	char b[3][8];
	int rctx[3], sctx[3];

	memset(b, 0, sizeof(b));
	fx_open(&x, FI_AV_TABLE, FI_CQ_FORMAT_TAGGED);
	fi_addr_t pa = peer_add(&x, 1);
	struct mrcfi_conn *c = conn_open(&x, pa);

	for (int i = 0; i < 3; i++)
		ASSERT_EQ(0, fi_trecv(&x.ep->ep, b[i], sizeof(b[i]), NULL, FI_ADDR_UNSPEC, 1, 0, &rctx[i]));
	ring_eager(c, true, 1, "1st", 3, false, 0);
	ring_eager(c, true, 1, "2nd", 3, false, 0);
	ring_eager(c, true, 1, "3rd", 3, false, 0);
	for (int i = 0; i < 3; i++)
		ASSERT_TRUE(cq_one(&x).op_context == &rctx[i]);
	ASSERT_STREQ("1st", b[0]);
	ASSERT_STREQ("2nd", b[1]);
	ASSERT_STREQ("3rd", b[2]);
	conn_free(c);

	/* sends to a peer not connected yet: one connection, queued in order */
	fi_addr_t pb = peer_add(&x, 2);

	ASSERT_EQ(0, fi_tsend(&x.ep->ep, "s0", 2, NULL, pb, 1, &sctx[0]));
	ASSERT_EQ(0, fi_send(&x.ep->ep, "s1", 2, NULL, pb, &sctx[1]));
	ASSERT_EQ(0, fi_tsend(&x.ep->ep, "s2", 2, NULL, pb, 2, &sctx[2]));
	ASSERT_TRUE(x.ep->by_peer[pb] != NULL);
	struct mrcfi_conn *s = x.ep->by_peer[pb];
	struct mrcfi_list *l = s->txq.next;

	ASSERT_TRUE(s->state == MRCFI_CONN_CONNECTING);
	for (int i = 0; i < 3; i++, l = l->next) {
		ASSERT_TRUE(l != &s->txq);
		struct mrcfi_op *op = mrcfi_container(l, struct mrcfi_op, link);

		ASSERT_TRUE(op->context == &sctx[i]);
		ASSERT_TRUE(op->conn == s);
	}
	ASSERT_TRUE(l == &s->txq);
	mrcfi_conn_fail(s, FI_EIO);
	for (int i = 0; i < 3; i++) {
		struct fi_cq_err_entry e = cq_err(&x);

		ASSERT_EQ(FI_EIO, e.err);
		ASSERT_TRUE(e.op_context == &sctx[i]);
		ASSERT_TRUE(e.flags & FI_SEND);
	}
	/* later sends to it fail at once */
	ASSERT_EQ(0, fi_send(&x.ep->ep, "s3", 2, NULL, pb, &sctx[0]));
	ASSERT_EQ(FI_EIO, cq_err(&x).err);
	/* no AV entry */
	ASSERT_EQ(-FI_EINVAL, fi_send(&x.ep->ep, "s4", 2, NULL, 1000, &sctx[0]));
	fx_close(&x);
}

/* ---- completion queues ---------------------------------------------------------------------- */

TEST(cq, formats__entry_size_and_fields)
{
	static const struct {
		enum fi_cq_format f;
		size_t size;
	} fmts[] = {
		{FI_CQ_FORMAT_UNSPEC, sizeof(struct fi_cq_entry)},
		{FI_CQ_FORMAT_CONTEXT, sizeof(struct fi_cq_entry)},
		{FI_CQ_FORMAT_MSG, sizeof(struct fi_cq_msg_entry)},
		{FI_CQ_FORMAT_DATA, sizeof(struct fi_cq_data_entry)},
		{FI_CQ_FORMAT_TAGGED, sizeof(struct fi_cq_tagged_entry)},
	};

	for (size_t k = 0; k < sizeof(fmts) / sizeof(fmts[0]); k++) {
		struct fx x;
		char b[16] = {0};
		int ctx;
		uint8_t raw[2 * sizeof(struct fi_cq_tagged_entry)];

		fx_open(&x, FI_AV_TABLE, fmts[k].f);
		struct mrcfi_conn *c = conn_open(&x, peer_add(&x, 1));

		ASSERT_EQ(0, fi_trecv(&x.ep->ep, b, sizeof(b), NULL, FI_ADDR_UNSPEC, 0x55, 0, &ctx));
		ring_eager(c, true, 0x55, "hello", 5, true, 0xabcd);
		memset(raw, 0xee, sizeof(raw));
		ASSERT_EQ(1, fi_cq_read(x.cq, raw, 1));
		for (size_t i = fmts[k].size; i < sizeof(raw); i++)
			ASSERT_EQ(0xee, raw[i]); /* exactly one entry of the format's size */
		struct fi_cq_tagged_entry e;

		memset(&e, 0, sizeof(e));
		memcpy(&e, raw, fmts[k].size);
		ASSERT_TRUE(e.op_context == &ctx);
		if (fmts[k].size >= sizeof(struct fi_cq_msg_entry)) {
			ASSERT_U64_EQ(FI_RECV | FI_TAGGED | FI_REMOTE_CQ_DATA, e.flags);
			ASSERT_EQ(5, e.len);
		}
		if (fmts[k].size >= sizeof(struct fi_cq_data_entry)) {
			ASSERT_TRUE(e.buf == b);
			ASSERT_U64_EQ(0xabcd, e.data);
		}
		if (fmts[k].size >= sizeof(struct fi_cq_tagged_entry))
			ASSERT_U64_EQ(0x55, e.tag);
		ASSERT_EQ(-FI_EAGAIN, fi_cq_read(x.cq, raw, 1));
		fx_close(&x);
		conn_free(c);
	}
}

TEST(cq, readerr__truncation_and_fi_cq_read_says_eavail)
{
	struct fx x;
	char b[2];
	int ctx;
	fi_addr_t src = 12345;

	fx_open(&x, FI_AV_TABLE, FI_CQ_FORMAT_TAGGED);
	fi_addr_t pa = peer_add(&x, 1);
	struct mrcfi_conn *c = conn_open(&x, pa);

	ASSERT_EQ(-FI_EAGAIN, fi_cq_readerr(x.cq, &(struct fi_cq_err_entry){0}, 0));
	ASSERT_EQ(0, fi_recv(&x.ep->ep, b, sizeof(b), NULL, FI_ADDR_UNSPEC, &ctx));
	ring_eager(c, false, 0, "hello", 5, false, 0);
	struct fi_cq_err_entry e = cq_err(&x);

	ASSERT_EQ(FI_ETRUNC, e.err);
	ASSERT_TRUE(e.op_context == &ctx);
	ASSERT_EQ(2, e.len);
	ASSERT_EQ(3, e.olen);
	ASSERT_MEMEQ("he", b, 2);
	ASSERT_EQ(-FI_EAGAIN, fi_cq_readerr(x.cq, &e, 0));
	/* readfrom names the source */
	int ctx2;
	struct fi_cq_tagged_entry te;

	ASSERT_EQ(0, fi_recv(&x.ep->ep, b, sizeof(b), NULL, FI_ADDR_UNSPEC, &ctx2));
	ring_eager(c, false, 0, "ok", 2, false, 0);
	ASSERT_EQ(1, fi_cq_readfrom(x.cq, &te, 1, &src));
	ASSERT_U64_EQ(pa, src);
	fx_close(&x);
	conn_free(c);
}

TEST(cq, open__unsupported_wait_objects)
{
	struct fx x;
	struct fid_cq *cq;

	fx_open(&x, FI_AV_TABLE, FI_CQ_FORMAT_TAGGED);
	ASSERT_EQ(-FI_ENOSYS, fi_cq_open(x.dom, &(struct fi_cq_attr){.wait_obj = FI_WAIT_SET}, &cq, NULL));
	ASSERT_EQ(-FI_ENOSYS, fi_cq_open(x.dom, &(struct fi_cq_attr){.wait_obj = FI_WAIT_MUTEX_COND}, &cq, NULL));
	ASSERT_EQ(0, fi_cq_open(x.dom, &(struct fi_cq_attr){.wait_obj = FI_WAIT_FD}, &cq, NULL));
	int fd = -1;

	ASSERT_EQ(0, fi_control(&cq->fid, FI_GETWAIT, &fd));
	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, fi_close(&cq->fid));
	fx_close(&x);
}

/* ---- op tables ---------------------------------------------------------------------------------- */

/* Every member after .size is a function: none may be NULL. */
static void table_full(const char *what, const void *t)
{
	size_t size;

	ASSERT_TRUE(t != NULL);
	memcpy(&size, t, sizeof(size));
	ASSERT_GT(size, sizeof(size_t));
	for (size_t off = sizeof(size_t); off + sizeof(void (*)(void)) <= size; off += sizeof(void (*)(void))) {
		void (*fn)(void);

		memcpy(&fn, (const char *)t + off, sizeof(fn));
		if (fn == NULL)
			mrcp_test_fail(__FILE__, __LINE__, "%s: the member at byte %zu is NULL", what, off);
	}
}

TEST(ops, every_table_full_and_what_mrc_lacks_is_enosys)
{
	struct fx x;
	struct fid_cntr *cntr;
	struct fid_eq *eq;
	struct fid_ep *sep;
	struct fid_mr *mr;
	struct fid_pep *pep;
	char buf[16];

	fx_open(&x, FI_AV_TABLE, FI_CQ_FORMAT_TAGGED);
	ASSERT_EQ(0, fi_cntr_open(x.dom, &(struct fi_cntr_attr){.events = FI_CNTR_EVENTS_COMP}, &cntr, NULL));
	ASSERT_EQ(0, fi_eq_open(x.fab, &(struct fi_eq_attr){.wait_obj = FI_WAIT_NONE}, &eq, NULL));
	table_full("fabric fi_ops", x.fab->fid.ops);
	table_full("fi_ops_fabric", x.fab->ops);
	table_full("domain fi_ops", x.dom->fid.ops);
	table_full("fi_ops_domain", x.dom->ops);
	table_full("fi_ops_mr", x.dom->mr);
	table_full("av fi_ops", x.av->fid.ops);
	table_full("fi_ops_av", x.av->ops);
	table_full("cq fi_ops", x.cq->fid.ops);
	table_full("fi_ops_cq", x.cq->ops);
	table_full("cntr fi_ops", cntr->fid.ops);
	table_full("fi_ops_cntr", cntr->ops);
	table_full("eq fi_ops", eq->fid.ops);
	table_full("fi_ops_eq", eq->ops);
	struct fid_ep *ep = &x.ep->ep;

	table_full("ep fi_ops", ep->fid.ops);
	table_full("fi_ops_ep", ep->ops);
	table_full("fi_ops_cm", ep->cm);
	table_full("fi_ops_msg", ep->msg);
	table_full("fi_ops_rma", ep->rma);
	table_full("fi_ops_tagged", ep->tagged);
	table_full("fi_ops_atomic", ep->atomic);
	table_full("fi_ops_collective", ep->collective);

	/* no RDMA Read, atomics, collectives, passive or scalable endpoints */
	ASSERT_EQ(-FI_ENOSYS, fi_read(ep, buf, 1, NULL, 0, 0, 0, NULL));
	ASSERT_EQ(-FI_ENOSYS, fi_readv(ep, &(struct iovec){buf, 1}, NULL, 1, 0, 0, 0, NULL));
	ASSERT_EQ(-FI_ENOSYS, fi_atomic(ep, buf, 1, NULL, 0, 0, 0, FI_UINT64, FI_SUM, NULL));
	ASSERT_EQ(-FI_ENOSYS, fi_fetch_atomic(ep, buf, 1, NULL, buf, NULL, 0, 0, 0, FI_UINT64, FI_SUM, NULL));
	ASSERT_EQ(-FI_ENOSYS, fi_compare_atomic(ep, buf, 1, NULL, buf, NULL, buf, NULL, 0, 0, 0, FI_UINT64,
						FI_CSWAP, NULL));
	ASSERT_EQ(-FI_ENOSYS, fi_query_atomic(x.dom, FI_UINT64, FI_SUM, &(struct fi_atomic_attr){0}, 0));
	ASSERT_EQ(-FI_ENOSYS, fi_barrier(ep, 0, NULL));
	ASSERT_EQ(-FI_ENOSYS, fi_connect(ep, buf, NULL, 0));
	ASSERT_EQ(-FI_ENOSYS, fi_scalable_ep(x.dom, x.info, &sep, NULL));
	ASSERT_EQ(-FI_ENOSYS, fi_passive_ep(x.fab, x.info, &pep, NULL));
	ASSERT_EQ(-FI_ENOSYS, fi_mr_reg(x.dom, buf, sizeof(buf), FI_READ, 0, 0, 0, &mr, NULL));
	ASSERT_EQ(-FI_ENOSYS, fi_mr_reg(x.dom, buf, sizeof(buf), FI_REMOTE_READ, 0, 0, 0, &mr, NULL));
	ASSERT_EQ(-FI_ENOSYS, fi_recvmsg(ep, &(struct fi_msg){0}, FI_MULTI_RECV));
	/* a remote-writable region needs an endpoint's arena (none has a session here) */
	ASSERT_EQ(-FI_EOPBADSTATE, fi_mr_reg(x.dom, buf, sizeof(buf), FI_REMOTE_WRITE, 0, 0, 0, &mr, NULL));
	/* a local one is fine */
	ASSERT_EQ(0, fi_mr_reg(x.dom, buf, sizeof(buf), FI_SEND | FI_RECV, 0, 0, 0, &mr, NULL));
	ASSERT_EQ(0, fi_close(&mr->fid));
	ASSERT_EQ(0, fi_close(&eq->fid));
	ASSERT_EQ(0, fi_close(&cntr->fid));
	fx_close(&x);
}

/* ---- counters and memory registration ----------------------------------------------------------- */

TEST(cntr, add_set_err_and_wait)
{
	struct fx x;
	struct fid_cntr *c;
	struct fid_cntr *bad;

	fx_open(&x, FI_AV_TABLE, FI_CQ_FORMAT_CONTEXT);
	/* only completion counting (no other event kind, e.g. 1.18's bytes) without a wait object */
	ASSERT_EQ(-FI_ENOSYS, fi_cntr_open(x.dom, &(struct fi_cntr_attr){.events = (enum fi_cntr_events)(FI_CNTR_EVENTS_COMP + 1)}, &bad, NULL));
	ASSERT_EQ(-FI_ENOSYS, fi_cntr_open(x.dom, &(struct fi_cntr_attr){.events = FI_CNTR_EVENTS_COMP,
									   .wait_obj = FI_WAIT_FD}, &bad, NULL));
	ASSERT_EQ(0, fi_cntr_open(x.dom, NULL, &c, NULL));
	ASSERT_EQ(0, fi_cntr_read(c));
	ASSERT_EQ(0, fi_cntr_readerr(c));
	ASSERT_EQ(0, fi_cntr_add(c, 5));
	ASSERT_EQ(0, fi_cntr_add(c, 2));
	ASSERT_EQ(7, fi_cntr_read(c));
	ASSERT_EQ(0, fi_cntr_set(c, 3));
	ASSERT_EQ(3, fi_cntr_read(c));
	ASSERT_EQ(0, fi_cntr_adderr(c, 4));
	ASSERT_EQ(4, fi_cntr_readerr(c));
	ASSERT_EQ(0, fi_cntr_seterr(c, 1));
	ASSERT_EQ(1, fi_cntr_readerr(c));
	ASSERT_EQ(3, fi_cntr_read(c)); /* errors are counted apart */
	/* a threshold already reached returns at once; one never reached times out */
	ASSERT_EQ(0, fi_cntr_wait(c, 3, 0));
	ASSERT_EQ(-FI_ETIMEDOUT, fi_cntr_wait(c, 4, 10));
	/* completions counted by the provider (mrcfi_cntr_inc): one each way */
	mrcfi_cntr_inc(mrcfi_container(c, struct mrcfi_cntr, cntr), false);
	mrcfi_cntr_inc(mrcfi_container(c, struct mrcfi_cntr, cntr), true);
	mrcfi_cntr_inc(NULL, false); /* an op with no counter bound */
	ASSERT_EQ(4, fi_cntr_read(c));
	ASSERT_EQ(2, fi_cntr_readerr(c));
	ASSERT_EQ(0, fi_close(&c->fid));
	fx_close(&x);
}

TEST(mr, regv_and_regattr__one_iov_system_memory_no_read)
{
	struct fx x;
	struct fid_mr *mr;
	char buf[64], buf2[64];
	int ctx;
	struct iovec one = {buf, sizeof(buf)};
	struct iovec two[2] = {{buf, sizeof(buf)}, {buf2, sizeof(buf2)}};

	fx_open(&x, FI_AV_TABLE, FI_CQ_FORMAT_CONTEXT);
	/* one iov per region: more is not supported, none is an error */
	ASSERT_EQ(-FI_ENOSYS, fi_mr_regv(x.dom, two, 2, FI_SEND, 0, 0, 0, &mr, NULL));
	ASSERT_EQ(-FI_EINVAL, fi_mr_regv(x.dom, NULL, 0, FI_SEND, 0, 0, 0, &mr, NULL));
	ASSERT_EQ(-FI_EINVAL, fi_mr_regattr(x.dom, NULL, 0, &mr));
	/* no RDMA Read, no device memory */
	ASSERT_EQ(-FI_ENOSYS, fi_mr_regv(x.dom, &one, 1, FI_READ, 0, 0, 0, &mr, NULL));
	ASSERT_EQ(-FI_ENOSYS, fi_mr_regv(x.dom, &one, 1, FI_SEND | FI_REMOTE_READ, 0, 0, 0, &mr, NULL));
	struct fi_mr_attr a = {.mr_iov = &one, .iov_count = 1, .access = FI_SEND | FI_RECV, .context = &ctx,
			       .iface = FI_HMEM_CUDA};

	ASSERT_EQ(-FI_ENOSYS, fi_mr_regattr(x.dom, &a, 0, &mr));
	/* a local region through each call: the context is the fid's, the
	 * descriptor is usable, the key is 0 until it is remotely writable */
	a.iface = FI_HMEM_SYSTEM;
	ASSERT_EQ(0, fi_mr_regattr(x.dom, &a, 0, &mr));
	ASSERT_TRUE(mr->fid.context == &ctx);
	ASSERT_TRUE(fi_mr_desc(mr) != NULL);
	ASSERT_EQ(0, fi_mr_key(mr));
	ASSERT_EQ(0, fi_close(&mr->fid));
	ASSERT_EQ(0, fi_mr_regv(x.dom, &one, 1, FI_SEND | FI_RECV | FI_WRITE, 0, 0, 0, &mr, &ctx));
	ASSERT_TRUE(mr->fid.context == &ctx);
	ASSERT_EQ(0, fi_close(&mr->fid));
	/* remotely writable needs an endpoint's arena (none has a session here) */
	a.access = FI_REMOTE_WRITE;
	ASSERT_EQ(-FI_EOPBADSTATE, fi_mr_regattr(x.dom, &a, 0, &mr));
	ASSERT_EQ(-FI_EOPBADSTATE, fi_mr_regv(x.dom, &one, 1, FI_REMOTE_WRITE, 0, 0, 0, &mr, NULL));
	fx_close(&x);
}

/* ---- fi_getinfo ---------------------------------------------------------------------------------- */

TEST(getinfo, no_hints__rdm_without_read_or_atomic)
{
	struct fi_info *fi;

	ASSERT_TRUE(fi_prov_ini() == &mrcfi_prov);
	ASSERT_EQ(0, getinfo(NULL, &fi));
	ASSERT_EQ(FI_EP_RDM, fi->ep_attr->type);
	ASSERT_U64_EQ(0, fi->caps & (FI_READ | FI_REMOTE_READ | FI_ATOMIC));
	ASSERT_U64_EQ(FI_MSG | FI_TAGGED | FI_RMA, fi->caps & (FI_MSG | FI_TAGGED | FI_RMA));
	ASSERT_U64_EQ(0, fi->tx_attr->caps & (FI_READ | FI_ATOMIC));
	ASSERT_U64_EQ(0, fi->rx_attr->caps & (FI_REMOTE_READ | FI_ATOMIC));
	ASSERT_U64_EQ(FI_ORDER_SAS, fi->tx_attr->msg_order);
	ASSERT_U64_EQ(FI_ORDER_SAS, fi->rx_attr->msg_order);
	ASSERT_EQ(4, fi->domain_attr->cq_data_size);
	ASSERT_EQ(FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY, fi->domain_attr->mr_mode);
	ASSERT_STREQ("mrc", fi->fabric_attr->name);
	ASSERT_STREQ("mrc", fi->domain_attr->name);
	ASSERT_TRUE(fi->next == NULL);
	fi_freeinfo(fi);
	ASSERT_EQ(-FI_ENODATA, mrcfi_prov.getinfo(FI_VERSION(1, 4), NULL, NULL, 0, NULL, &fi));
}

enum hint_kind { H_CAPS, H_EP_TYPE, H_TX_ORDER, H_RX_ORDER, H_CQ_DATA, H_PROGRESS, H_FABRIC, H_AV, H_ADDR_FMT,
		 H_INJECT, H_MR_MODE };

TEST(getinfo, hints__rejected_and_accepted)
{
	static const struct {
		const char *what;
		enum hint_kind kind;
		uint64_t v;
		int rc;
	} cases[] = {
		{"FI_READ", H_CAPS, FI_RMA | FI_READ, -FI_ENODATA},
		{"FI_REMOTE_READ", H_CAPS, FI_RMA | FI_REMOTE_READ, -FI_ENODATA},
		{"FI_ATOMIC", H_CAPS, FI_ATOMIC, -FI_ENODATA},
		{"FI_MULTI_RECV", H_CAPS, FI_MSG | FI_MULTI_RECV, -FI_ENODATA},
		{"FI_COLLECTIVE", H_CAPS, FI_COLLECTIVE, -FI_ENODATA},
		{"FI_TAGGED", H_CAPS, FI_TAGGED, 0},
		{"FI_MSG | FI_RMA | FI_WRITE", H_CAPS, FI_MSG | FI_RMA | FI_WRITE, 0},
		{"FI_EP_MSG", H_EP_TYPE, FI_EP_MSG, -FI_ENODATA},
		{"FI_EP_DGRAM", H_EP_TYPE, FI_EP_DGRAM, -FI_ENODATA},
		{"FI_EP_RDM", H_EP_TYPE, FI_EP_RDM, 0},
		{"tx FI_ORDER_SAS", H_TX_ORDER, FI_ORDER_SAS, 0},
		{"tx FI_ORDER_RAW", H_TX_ORDER, FI_ORDER_RAW, -FI_ENODATA},
		{"rx FI_ORDER_SAS", H_RX_ORDER, FI_ORDER_SAS, 0},
		{"rx FI_ORDER_WAW", H_RX_ORDER, FI_ORDER_SAS | FI_ORDER_WAW, -FI_ENODATA},
		{"cq_data_size 4", H_CQ_DATA, 4, 0},
		{"cq_data_size 8", H_CQ_DATA, 8, -FI_ENODATA},
		{"data_progress AUTO", H_PROGRESS, FI_PROGRESS_AUTO, -FI_ENODATA},
		{"data_progress MANUAL", H_PROGRESS, FI_PROGRESS_MANUAL, 0},
		{"fabric name tcp", H_FABRIC, 0, -FI_ENODATA},
		{"av FI_AV_MAP", H_AV, FI_AV_MAP, 0},
		{"av FI_AV_TABLE", H_AV, FI_AV_TABLE, 0},
		{"addr_format FI_SOCKADDR_IN", H_ADDR_FMT, FI_SOCKADDR_IN, -FI_ENODATA},
		{"inject_size 1 MiB", H_INJECT, 1u << 20, -FI_ENODATA},
		{"inject_size 64", H_INJECT, 64, 0},
		{"mr_mode FI_MR_LOCAL only", H_MR_MODE, FI_MR_LOCAL, -FI_ENODATA}, /* RMA asked for */
		{"mr_mode with ours", H_MR_MODE, FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY, 0},
	};

	ASSERT_TRUE(fi_prov_ini() == &mrcfi_prov);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fi_info *h = fi_allocinfo(), *fi = NULL;

		ASSERT_TRUE(h != NULL);
		switch (cases[i].kind) {
		case H_CAPS: h->caps = cases[i].v; break;
		case H_EP_TYPE: h->ep_attr->type = (enum fi_ep_type)cases[i].v; break;
		case H_TX_ORDER: h->tx_attr->msg_order = cases[i].v; break;
		case H_RX_ORDER: h->rx_attr->msg_order = cases[i].v; break;
		case H_CQ_DATA: h->domain_attr->cq_data_size = cases[i].v; break;
		case H_PROGRESS: h->domain_attr->data_progress = (enum fi_progress)cases[i].v; break;
		case H_FABRIC: h->fabric_attr->name = strdup("tcp"); break;
		case H_AV: h->domain_attr->av_type = (enum fi_av_type)cases[i].v; break;
		case H_ADDR_FMT: h->addr_format = (uint32_t)cases[i].v; break;
		case H_INJECT: h->tx_attr->inject_size = cases[i].v; break;
		case H_MR_MODE:
			h->caps = FI_MSG | FI_RMA | FI_WRITE;
			h->domain_attr->mr_mode = (int)cases[i].v;
			break;
		}
		int rc = getinfo(h, &fi);

		if (rc != cases[i].rc)
			mrcp_test_fail(__FILE__, __LINE__, "hint %s: fi_getinfo %d, expected %d", cases[i].what, rc,
				       cases[i].rc);
		if (rc == 0) {
			if (fi->caps & (FI_READ | FI_REMOTE_READ | FI_ATOMIC))
				mrcp_test_fail(__FILE__, __LINE__, "hint %s: FI_READ or FI_ATOMIC advertised",
					       cases[i].what);
			if (cases[i].kind == H_CAPS && (fi->caps & cases[i].v) != cases[i].v)
				mrcp_test_fail(__FILE__, __LINE__, "hint %s: caps asked for are missing", cases[i].what);
			if (cases[i].kind == H_AV && fi->domain_attr->av_type != (enum fi_av_type)cases[i].v)
				mrcp_test_fail(__FILE__, __LINE__, "hint %s: av_type not kept", cases[i].what);
			fi_freeinfo(fi);
		}
		fi_freeinfo(h);
	}
}

TEST(getinfo, mr_scalable_without_rma_caps__rma_dropped)
{
	struct fi_info *h = fi_allocinfo(), *fi;

	ASSERT_TRUE(fi_prov_ini() == &mrcfi_prov);
	h->domain_attr->mr_mode = FI_MR_SCALABLE;
	ASSERT_EQ(0, getinfo(h, &fi));
	ASSERT_U64_EQ(0, fi->caps & (FI_RMA | FI_WRITE | FI_REMOTE_WRITE));
	ASSERT_TRUE(fi->caps & FI_TAGGED);
	ASSERT_EQ(0, fi->domain_attr->mr_mode);
	fi_freeinfo(fi);
	/* asked for RMA explicitly: no match */
	h->caps = FI_RMA | FI_WRITE;
	ASSERT_EQ(-FI_ENODATA, getinfo(h, &fi));
	fi_freeinfo(h);
}
