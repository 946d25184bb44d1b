/* ep.c - RDM endpoints: the libmrc-client context each one owns, its arena
 * heap (one registered region, our own allocator), its address, and its
 * connections - one MRC QP per pair of endpoints, made on first use by the
 * endpoint's bootstrap thread, which swaps connection info with the peer's
 * over TCP (docs/libfabric.md "Addressing and connections"). The data path
 * over a connection is msg.c. */
#define _GNU_SOURCE
#include "mrcfi.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#define BOOT_TIMEOUT_MS 10000

/* ---- the arena heap -------------------------------------------------------------------- */

void *mrcfi_heap_alloc(struct mrcfi_ep *ep, size_t len, size_t align)
{
	struct mrcfi_ext **pp, *e, *u;

	if (len == 0)
		len = 1;
	len = (len + 63) & ~(size_t)63;
	if (align < 64)
		align = 64;
	u = malloc(sizeof(*u));
	if (u == NULL)
		return NULL;
	pthread_mutex_lock(&ep->heap_lock);
	for (pp = &ep->heap_free; (e = *pp) != NULL; pp = &e->next) {
		uintptr_t a = ((uintptr_t)e->p + align - 1) & ~(uintptr_t)(align - 1);
		size_t lead = a - (uintptr_t)e->p;

		if (lead + len > e->len)
			continue;
		size_t tail = e->len - lead - len;

		if (lead && tail) {
			struct mrcfi_ext *t = malloc(sizeof(*t));

			if (t == NULL)
				break;
			t->p = (uint8_t *)a + len;
			t->len = tail;
			t->next = e->next;
			e->next = t;
			e->len = lead;
		} else if (lead) {
			e->len = lead;
		} else if (tail) {
			e->p += len;
			e->len = tail;
		} else {
			*pp = e->next;
			free(e);
		}
		u->p = (uint8_t *)a;
		u->len = len;
		u->next = ep->heap_used;
		ep->heap_used = u;
		pthread_mutex_unlock(&ep->heap_lock);
		return (void *)a;
	}
	pthread_mutex_unlock(&ep->heap_lock);
	free(u);
	return NULL;
}

void mrcfi_heap_free(struct mrcfi_ep *ep, void *p)
{
	struct mrcfi_ext **pp, *u, *e, *prev = NULL;

	if (p == NULL)
		return;
	pthread_mutex_lock(&ep->heap_lock);
	for (pp = &ep->heap_used; (u = *pp) != NULL; pp = &u->next)
		if (u->p == p)
			break;
	if (u == NULL) {
		pthread_mutex_unlock(&ep->heap_lock);
		return;
	}
	*pp = u->next;
	/* insert sorted, then merge with the neighbours */
	for (pp = &ep->heap_free; (e = *pp) != NULL && e->p < u->p; pp = &e->next)
		prev = e;
	u->next = e;
	*pp = u;
	if (e && u->p + u->len == e->p) {
		u->len += e->len;
		u->next = e->next;
		free(e);
	}
	if (prev && prev->p + prev->len == u->p) {
		prev->len += u->len;
		prev->next = u->next;
		free(u);
	}
	pthread_mutex_unlock(&ep->heap_lock);
}

static void heap_fini(struct mrcfi_ep *ep)
{
	for (struct mrcfi_ext *e = ep->heap_free, *n; e; e = n) {
		n = e->next;
		free(e);
	}
	for (struct mrcfi_ext *e = ep->heap_used, *n; e; e = n) {
		n = e->next;
		free(e);
	}
	ep->heap_free = ep->heap_used = NULL;
}

/* ---- connection tables --------------------------------------------------------------------- */

struct mrcfi_conn *mrcfi_conn_by_qpn(struct mrcfi_ep *ep, uint32_t qpn)
{
	if (ep->by_qpn_cap == 0)
		return NULL;
	size_t mask = ep->by_qpn_cap - 1;

	for (size_t i = qpn & mask, k = 0; k < ep->by_qpn_cap; i = (i + 1) & mask, k++) {
		struct mrcfi_conn *c = ep->by_qpn[i];

		if (c == NULL)
			return NULL;
		if (c->qpn == qpn)
			return c;
	}
	return NULL;
}

static int qpn_insert(struct mrcfi_ep *ep, struct mrcfi_conn *c)
{
	size_t live = 0;

	for (size_t i = 0; i < ep->by_qpn_cap; i++)
		live += ep->by_qpn[i] != NULL;
	if ((live + 1) * 2 > ep->by_qpn_cap) {
		size_t ncap = ep->by_qpn_cap ? ep->by_qpn_cap * 2 : 64;
		struct mrcfi_conn **n = calloc(ncap, sizeof(*n));

		if (n == NULL)
			return -FI_ENOMEM;
		for (size_t i = 0; i < ep->by_qpn_cap; i++) {
			struct mrcfi_conn *o = ep->by_qpn[i];

			if (o == NULL)
				continue;
			size_t j = o->qpn & (ncap - 1);

			while (n[j])
				j = (j + 1) & (ncap - 1);
			n[j] = o;
		}
		free(ep->by_qpn);
		ep->by_qpn = n;
		ep->by_qpn_cap = ncap;
	}
	size_t j = c->qpn & (ep->by_qpn_cap - 1);

	while (ep->by_qpn[j])
		j = (j + 1) & (ep->by_qpn_cap - 1);
	ep->by_qpn[j] = c;
	return 0;
}

static int by_peer_set(struct mrcfi_ep *ep, fi_addr_t a, struct mrcfi_conn *c)
{
	if (a >= ep->by_peer_cap) {
		size_t ncap = ep->by_peer_cap ? ep->by_peer_cap : 64;

		while (ncap <= a)
			ncap *= 2;
		struct mrcfi_conn **n = realloc(ep->by_peer, ncap * sizeof(*n));

		if (n == NULL)
			return -FI_ENOMEM;
		memset(n + ep->by_peer_cap, 0, (ncap - ep->by_peer_cap) * sizeof(*n));
		ep->by_peer = n;
		ep->by_peer_cap = ncap;
	}
	ep->by_peer[a] = c;
	return 0;
}

fi_addr_t mrcfi_conn_src(struct mrcfi_conn *c)
{
	if (c->fi_addr == FI_ADDR_NOTAVAIL && c->ep->av && c->av_gen != c->ep->av->gen)
		c->fi_addr = mrcfi_av_find(c->ep->av, &c->peer, &c->av_gen);
	return c->fi_addr;
}

static struct mrcfi_conn *conn_new(struct mrcfi_ep *ep, const struct mrcfi_name *peer, bool initiator)
{
	struct mrcfi_conn *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->ep = ep;
	c->peer = *peer;
	c->initiator = initiator;
	c->state = MRCFI_CONN_CONNECTING;
	c->fi_addr = FI_ADDR_NOTAVAIL;
	c->av_gen = UINT64_MAX;
	c->boot_fd = -1;
	c->slots = (uint32_t)mrcfi_params.ring_slots;
	c->slot_size = (uint32_t)((sizeof(struct mrcfi_hdr) + mrcfi_params.eager_size + 63) & ~(size_t)63);
	mrcfi_list_init(&c->txq);
	mrcfi_list_init(&c->ctrlq);
	mrcfi_list_init(&c->waiting);
	mrcfi_list_init(&c->connect_link);
	return c;
}

/* The connection's arena block: [credit_in 64][credit_src 64][rx ring][tx staging]. */
static int conn_mem(struct mrcfi_conn *c)
{
	size_t ring = (size_t)c->slots * c->slot_size;

	c->mem = mrcfi_heap_alloc(c->ep, 128 + 2 * ring, 4096);
	if (c->mem == NULL)
		return -FI_ENOMEM;
	memset(c->mem, 0, 128);
	c->credit_in = (volatile uint64_t *)c->mem;
	c->credit_src = (uint64_t *)(c->mem + 64);
	c->rx_ring = c->mem + 128;
	c->tx_stage = c->rx_ring + ring;
	return 0;
}

int mrcfi_conn_post_recvs(struct mrcfi_conn *c, unsigned n)
{
	uint64_t ids[64];

	memset(ids, 0, sizeof(ids));
	while (n) {
		unsigned k = n > 64 ? 64 : n;
		int rc = mrc_post_recv(c->ep->ctx, c->qpn, ids, k);

		if (rc < 0)
			return mrcfi_errno(rc) ? -mrcfi_errno(rc) : -FI_EIO;
		if (rc == 0)
			return -FI_EAGAIN;
		c->recv_posted += (unsigned)rc;
		n -= (unsigned)rc;
	}
	return 0;
}

/* Fill @m with our side of connection @c. */
static int boot_fill(struct mrcfi_conn *c, struct mrcfi_boot *m)
{
	struct mrcfi_ep *ep = c->ep;

	memset(m, 0, sizeof(*m));
	m->magic = MRCFI_BOOT_MAGIC;
	m->from = ep->name;
	m->to_ep_id = c->peer.ep_id;
	m->ring_va = mrc_va(ep->ctx, c->rx_ring);
	m->credit_va = mrc_va(ep->ctx, c->mem); /* credit_in is the first word */
	m->rkey = ep->heap_mr.rkey;
	m->slots = c->slots;
	m->slot_size = c->slot_size;
	int rc = mrc_qp_info(ep->ctx, c->qpn, m->qp_info);

	return rc < 0 ? -FI_EIO : 0;
}

static void boot_take(struct mrcfi_conn *c, const struct mrcfi_boot *m)
{
	c->r_ring_va = m->ring_va;
	c->r_credit_va = m->credit_va;
	c->r_rkey = m->rkey;
	c->r_slots = m->slots;
	c->r_slot_size = m->slot_size;
}

static bool boot_ok(const struct mrcfi_boot *m)
{
	return m->magic == MRCFI_BOOT_MAGIC && m->slots >= 4 && m->slots <= 1024 && (m->slots & (m->slots - 1)) == 0 &&
	       m->slot_size >= sizeof(struct mrcfi_hdr) + 64 && m->slot_size <= (2u << 20) && m->slot_size % 64 == 0 &&
	       m->from.magic == MRCFI_NAME_MAGIC;
}

/* Create the QP and the memory of @c, post its receives. Bootstrap thread;
 * takes ep->lock only to publish. */
static int conn_setup(struct mrcfi_conn *c)
{
	struct mrcfi_ep *ep = c->ep;
	struct mrc_qp_attr qa = {.sq_depth = 0, .rq_depth = 2 * c->slots};
	uint32_t qpn;
	int rc = mrc_qp_create(ep->ctx, &qa, &qpn);

	if (rc < 0) {
		FI_WARN(&mrcfi_prov, FI_LOG_EP_CTRL, "qp_create: %s: %s\n", mrc_strerror(rc), mrc_last_error(ep->ctx));
		return -mrcfi_errno(rc);
	}
	if (conn_mem(c) < 0) {
		mrc_qp_destroy(ep->ctx, qpn);
		return -FI_ENOMEM;
	}
	pthread_mutex_lock(&ep->lock);
	c->qpn = qpn;
	rc = qpn_insert(ep, c);
	if (rc == 0)
		rc = mrcfi_conn_post_recvs(c, 2 * c->slots);
	pthread_mutex_unlock(&ep->lock);
	return rc;
}

static void wake_app(struct mrcfi_ep *ep)
{
	uint64_t one = 1;

	(void)!write(ep->app_wake_fd, &one, sizeof(one));
}

static int io_full(int fd, void *buf, size_t len, bool rd)
{
	uint8_t *p = buf;

	while (len) {
		struct pollfd pfd = {.fd = fd, .events = rd ? POLLIN : POLLOUT};

		if (poll(&pfd, 1, BOOT_TIMEOUT_MS) <= 0)
			return -FI_ETIMEDOUT;
		ssize_t n = rd ? read(fd, p, len) : write(fd, p, len);

		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			return -FI_ECONNABORTED;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* ---- the bootstrap thread ----------------------------------------------------------------------- */

static void conn_fail_locked(struct mrcfi_conn *c, int err)
{
	struct mrcfi_ep *ep = c->ep;

	pthread_mutex_lock(&ep->lock);
	mrcfi_conn_fail(c, err);
	pthread_mutex_unlock(&ep->lock);
	wake_app(ep);
}

/* Initiator, step 1: QP, memory, receives; connect and send our info. */
static void initiate(struct mrcfi_conn *c)
{
	struct mrcfi_boot m;
	int rc = conn_setup(c);

	if (rc == 0)
		rc = boot_fill(c, &m);
	if (rc < 0) {
		conn_fail_locked(c, -rc);
		return;
	}
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = c->peer.boot_port,
				 .sin_addr.s_addr = c->peer.boot_ip};

	if (fd < 0) {
		conn_fail_locked(c, FI_EMFILE);
		return;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 && errno != EINPROGRESS) {
		close(fd);
		conn_fail_locked(c, FI_ECONNREFUSED);
		return;
	}
	rc = io_full(fd, &m, sizeof(m), false);
	if (rc < 0) {
		close(fd);
		conn_fail_locked(c, FI_ECONNREFUSED);
		return;
	}
	c->boot_fd = fd;
}

/* Initiator, step 2: the reply; connect the QP. */
static void initiate_finish(struct mrcfi_conn *c)
{
	struct mrcfi_ep *ep = c->ep;
	struct mrcfi_boot m;
	int rc = io_full(c->boot_fd, &m, sizeof(m), true);

	close(c->boot_fd);
	c->boot_fd = -1;
	if (rc == 0 && (!boot_ok(&m) || m.status != 0))
		rc = m.status ? m.status : -FI_EOTHER;
	if (rc == 0) {
		int r = mrc_qp_connect(ep->ctx, c->qpn, m.qp_info);

		if (r < 0) {
			FI_WARN(&mrcfi_prov, FI_LOG_EP_CTRL, "qp_connect: %s: %s\n", mrc_strerror(r),
				mrc_last_error(ep->ctx));
			rc = -mrcfi_errno(r);
		}
	}
	if (rc < 0) {
		conn_fail_locked(c, rc == -FI_ETIMEDOUT ? FI_ETIMEDOUT : FI_ECONNREFUSED);
		return;
	}
	pthread_mutex_lock(&ep->lock);
	boot_take(c, &m);
	if (c->state == MRCFI_CONN_CONNECTING)
		c->state = MRCFI_CONN_READY;
	pthread_mutex_unlock(&ep->lock);
	FI_INFO(&mrcfi_prov, FI_LOG_EP_CTRL, "QP %u connected to pid %u (ring va %#llx rkey %#x, %u x %u B)\n",
		c->qpn, c->peer.pid, (unsigned long long)c->r_ring_va, c->r_rkey, c->r_slots, c->r_slot_size);
	wake_app(ep);
}

/* Target: one request on a freshly accepted socket. */
static void accept_one(struct mrcfi_ep *ep, int fd)
{
	struct mrcfi_boot req, rep;
	struct mrcfi_conn *c = NULL;
	int rc = io_full(fd, &req, sizeof(req), true);

	if (rc < 0)
		goto out;
	memset(&rep, 0, sizeof(rep));
	rep.magic = MRCFI_BOOT_MAGIC;
	if (!boot_ok(&req) || req.to_ep_id != ep->name.ep_id) {
		rep.status = -FI_EOTHER;
		io_full(fd, &rep, sizeof(rep), false);
		goto out;
	}
	c = conn_new(ep, &req.from, false);
	if (c == NULL) {
		rep.status = -FI_ENOMEM;
		io_full(fd, &rep, sizeof(rep), false);
		goto out;
	}
	rc = conn_setup(c);
	if (rc == 0)
		rc = boot_fill(c, &rep);
	if (rc == 0) {
		int r = mrc_qp_connect(ep->ctx, c->qpn, req.qp_info);

		rc = r < 0 ? -mrcfi_errno(r) : 0;
	}
	pthread_mutex_lock(&ep->lock);
	mrcfi_list_add_tail(&ep->conns, &c->link);
	if (rc == 0) {
		boot_take(c, &req);
		c->state = MRCFI_CONN_READY;
		/* Sends to this peer use this QP unless we opened our own. */
		fi_addr_t a = mrcfi_conn_src(c);

		if (a != FI_ADDR_NOTAVAIL && (a >= ep->by_peer_cap || ep->by_peer[a] == NULL))
			by_peer_set(ep, a, c);
	} else {
		c->state = MRCFI_CONN_FAILED;
	}
	pthread_mutex_unlock(&ep->lock);
	FI_INFO(&mrcfi_prov, FI_LOG_EP_CTRL, "QP %u accepted from pid %u: %d\n", c->qpn, c->peer.pid, rc);
	rep.magic = MRCFI_BOOT_MAGIC;
	rep.status = rc;
	io_full(fd, &rep, sizeof(rep), false);
	wake_app(ep);
out:
	close(fd);
}

#define BOOT_MAX_PENDING 256

static void *boot_thread(void *arg)
{
	struct mrcfi_ep *ep = arg;
	struct mrcfi_conn *pending[BOOT_MAX_PENDING];
	unsigned np = 0;

	while (!ep->stopping) {
		struct pollfd pfd[2 + BOOT_MAX_PENDING];

		pfd[0] = (struct pollfd){.fd = ep->wake_fd, .events = POLLIN};
		pfd[1] = (struct pollfd){.fd = ep->listen_fd, .events = POLLIN};
		for (unsigned i = 0; i < np; i++)
			pfd[2 + i] = (struct pollfd){.fd = pending[i]->boot_fd, .events = POLLIN};
		if (poll(pfd, 2 + np, 1000) < 0 && errno != EINTR)
			break;
		if (ep->stopping)
			break;
		if (pfd[0].revents & POLLIN) {
			uint64_t v;

			(void)!read(ep->wake_fd, &v, sizeof(v));
		}
		/* replies first: they only finish what is already half made */
		for (unsigned i = 0; i < np;) {
			if (pfd[2 + i].revents) {
				initiate_finish(pending[i]);
				pending[i] = pending[--np];
				pfd[2 + i] = pfd[2 + np];
				continue;
			}
			i++;
		}
		if (pfd[1].revents & POLLIN) {
			int fd = accept4(ep->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

			if (fd >= 0)
				accept_one(ep, fd);
		}
		for (;;) {
			struct mrcfi_conn *c = NULL;

			pthread_mutex_lock(&ep->lock);
			if (!mrcfi_list_empty(&ep->connect_q) && np < BOOT_MAX_PENDING) {
				c = mrcfi_container(ep->connect_q.next, struct mrcfi_conn, connect_link);
				mrcfi_list_del(&c->connect_link);
			}
			pthread_mutex_unlock(&ep->lock);
			if (c == NULL)
				break;
			initiate(c);
			if (c->boot_fd >= 0)
				pending[np++] = c;
		}
	}
	for (unsigned i = 0; i < np; i++)
		close(pending[i]->boot_fd);
	return NULL;
}

/* The connection to send on to @addr; opens one (asynchronously) on first
 * use. Caller holds ep->lock. */
struct mrcfi_conn *mrcfi_conn_get(struct mrcfi_ep *ep, fi_addr_t addr, int *err)
{
	if (addr < ep->by_peer_cap && ep->by_peer[addr])
		return ep->by_peer[addr];
	struct mrcfi_name peer;

	if (!mrcfi_av_get(ep->av, addr, &peer)) {
		*err = -FI_EINVAL;
		return NULL;
	}
	/* an accepted connection from that peer may be there already */
	for (struct mrcfi_list *l = ep->conns.next; l != &ep->conns; l = l->next) {
		struct mrcfi_conn *c = mrcfi_container(l, struct mrcfi_conn, link);

		if (c->state != MRCFI_CONN_FAILED && memcmp(&c->peer, &peer, sizeof(peer)) == 0) {
			if (by_peer_set(ep, addr, c) < 0)
				break;
			c->fi_addr = addr;
			return c;
		}
	}
	struct mrcfi_conn *c = conn_new(ep, &peer, true);

	if (c == NULL || by_peer_set(ep, addr, c) < 0) {
		free(c);
		*err = -FI_ENOMEM;
		return NULL;
	}
	c->fi_addr = addr;
	mrcfi_list_add_tail(&ep->conns, &c->link);
	mrcfi_list_add_tail(&ep->connect_q, &c->connect_link);
	uint64_t one = 1;

	(void)!write(ep->wake_fd, &one, sizeof(one));
	return c;
}

/* ---- fid ops ----------------------------------------------------------------------------------- */


static void unbind_from(struct mrcfi_ep **eps, unsigned *n, struct mrcfi_ep *ep, pthread_mutex_t *lock)
{
	pthread_mutex_lock(lock);
	for (unsigned i = 0; i < *n; i++)
		if (eps[i] == ep) {
			eps[i] = eps[--*n];
			break;
		}
	pthread_mutex_unlock(lock);
}

static void bind_to(struct mrcfi_ep **eps, unsigned *n, struct mrcfi_ep *ep, pthread_mutex_t *lock)
{
	pthread_mutex_lock(lock);
	bool have = false;

	for (unsigned i = 0; i < *n; i++)
		have |= eps[i] == ep;
	if (!have && *n < 16)
		eps[(*n)++] = ep;
	pthread_mutex_unlock(lock);
}

static int ep_close(struct fid *fid)
{
	struct mrcfi_ep *ep = mrcfi_container(fid, struct mrcfi_ep, ep.fid);

	if (ep->thread_started) {
		uint64_t one = 1;

		ep->stopping = true;
		(void)!write(ep->wake_fd, &one, sizeof(one));
		pthread_join(ep->thread, NULL);
	}
	if (ep->tx_cq)
		unbind_from(ep->tx_cq->eps, &ep->tx_cq->n_eps, ep, &ep->tx_cq->lock);
	if (ep->rx_cq && ep->rx_cq != ep->tx_cq)
		unbind_from(ep->rx_cq->eps, &ep->rx_cq->n_eps, ep, &ep->rx_cq->lock);
	struct mrcfi_cntr *cs[4] = {ep->cntr_send, ep->cntr_recv, ep->cntr_write, ep->cntr_rwrite};

	for (int i = 0; i < 4; i++) {
		bool dup = false;

		for (int k = 0; k < i; k++)
			dup |= cs[k] == cs[i];
		if (cs[i] && !dup)
			unbind_from(cs[i]->eps, &cs[i]->n_eps, ep, &cs[i]->lock);
	}
	mrcfi_mr_ep_gone(ep->domain, ep);
	pthread_mutex_lock(&ep->domain->lock);
	mrcfi_list_del(&ep->dom_link);
	pthread_mutex_unlock(&ep->domain->lock);

	while (!mrcfi_list_empty(&ep->conns)) {
		struct mrcfi_conn *c = mrcfi_container(ep->conns.next, struct mrcfi_conn, link);

		mrcfi_list_del(&c->link);
		free(c);
	}
	struct mrcfi_list *uq[2] = {&ep->ux_msg, &ep->ux_tag};

	for (int i = 0; i < 2; i++)
		while (!mrcfi_list_empty(uq[i])) {
			struct mrcfi_uexp *u = mrcfi_container(uq[i]->next, struct mrcfi_uexp, link);

			mrcfi_list_del(&u->link);
			free(u->payload);
			free(u);
		}
	for (size_t i = 0; i < ep->ops_cap; i++) {
		if (ep->ops[i])
			free(ep->ops[i]->copy);
		free(ep->ops[i]);
	}
	free(ep->ops);
	for (struct mrcfi_wr *w = ep->wr_free, *n; w; w = n) {
		n = w->next;
		free(w);
	}
	if (ep->ctx)
		mrc_close(ep->ctx); /* destroys the QPs: peers see them fail */
	heap_fini(ep);
	free(ep->by_peer);
	free(ep->by_qpn);
	if (ep->listen_fd >= 0)
		close(ep->listen_fd);
	if (ep->wake_fd >= 0)
		close(ep->wake_fd);
	if (ep->app_wake_fd >= 0)
		close(ep->app_wake_fd);
	fi_freeinfo(ep->info);
	pthread_mutex_destroy(&ep->lock);
	pthread_mutex_destroy(&ep->heap_lock);
	free(ep);
	return 0;
}

static int ep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct mrcfi_ep *ep = mrcfi_container(fid, struct mrcfi_ep, ep.fid);

	switch (bfid->fclass) {
	case FI_CLASS_CQ: {
		struct mrcfi_cq *cq = mrcfi_container(bfid, struct mrcfi_cq, cq.fid);

		if (flags & ~(uint64_t)(FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION))
			return -FI_EBADFLAGS;
		if (flags & FI_TRANSMIT) {
			ep->tx_cq = cq;
			ep->tx_selective = flags & FI_SELECTIVE_COMPLETION;
		}
		if (flags & FI_RECV) {
			ep->rx_cq = cq;
			ep->rx_selective = flags & FI_SELECTIVE_COMPLETION;
		}
		bind_to(cq->eps, &cq->n_eps, ep, &cq->lock);
		return 0;
	}
	case FI_CLASS_CNTR: {
		struct mrcfi_cntr *c = mrcfi_container(bfid, struct mrcfi_cntr, cntr.fid);

		if (flags & (FI_READ | FI_REMOTE_READ))
			return -FI_ENOSYS;
		if (flags & FI_SEND)
			ep->cntr_send = c;
		if (flags & FI_RECV)
			ep->cntr_recv = c;
		if (flags & FI_WRITE)
			ep->cntr_write = c;
		if (flags & FI_REMOTE_WRITE)
			ep->cntr_rwrite = c;
		bind_to(c->eps, &c->n_eps, ep, &c->lock);
		return 0;
	}
	case FI_CLASS_AV:
		ep->av = mrcfi_container(bfid, struct mrcfi_av, av.fid);
		return 0;
	case FI_CLASS_EQ:
		ep->eq = mrcfi_container(bfid, struct mrcfi_eq, eq.fid);
		return 0;
	default:
		return -FI_EINVAL;
	}
}

static int ep_control(struct fid *fid, int command, void *arg)
{
	struct mrcfi_ep *ep = mrcfi_container(fid, struct mrcfi_ep, ep.fid);

	switch (command) {
	case FI_ENABLE:
		if (ep->enabled)
			return 0;
		if (ep->av == NULL || ep->tx_cq == NULL || ep->rx_cq == NULL)
			return -FI_ENOAV;
		if (pthread_create(&ep->thread, NULL, boot_thread, ep) != 0)
			return -FI_ENOMEM;
		ep->thread_started = true;
		ep->enabled = true;
		return 0;
	case FI_GETOPSFLAG: {
		uint64_t *f = arg;

		*f = (*f & FI_TRANSMIT) ? ep->tx_op_flags : ep->rx_op_flags;
		return 0;
	}
	case FI_SETOPSFLAG: {
		uint64_t *f = arg;

		if (*f & FI_TRANSMIT)
			ep->tx_op_flags = *f & ~(uint64_t)FI_TRANSMIT;
		else
			ep->rx_op_flags = *f & ~(uint64_t)FI_RECV;
		return 0;
	}
	default:
		return -FI_ENOSYS;
	}
}

static struct fi_ops ep_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = ep_close,
	.bind = ep_bind,
	.control = ep_control,
	.ops_open = mrcfi_no_ops_open,
	.tostr = mrcfi_no_tostr,
	.ops_set = mrcfi_no_ops_set,
};

static int ep_getopt(fid_t fid, int level, int optname, void *optval, size_t *optlen)
{
	(void)fid; (void)level; (void)optname; (void)optval; (void)optlen;
	return -FI_ENOPROTOOPT;
}
static int ep_setopt(fid_t fid, int level, int optname, const void *optval, size_t optlen)
{
	(void)fid; (void)level; (void)optname; (void)optval; (void)optlen;
	return -FI_ENOPROTOOPT;
}
static int no_tx_ctx(struct fid_ep *sep, int index, struct fi_tx_attr *attr, struct fid_ep **tx, void *context)
{
	(void)sep; (void)index; (void)attr; (void)tx; (void)context;
	return -FI_ENOSYS;
}
static int no_rx_ctx(struct fid_ep *sep, int index, struct fi_rx_attr *attr, struct fid_ep **rx, void *context)
{
	(void)sep; (void)index; (void)attr; (void)rx; (void)context;
	return -FI_ENOSYS;
}
static ssize_t ep_rx_size_left(struct fid_ep *fep)
{
	struct mrcfi_ep *ep = mrcfi_container(fep, struct mrcfi_ep, ep);

	return ep->ops_live >= 16384 ? 0 : (ssize_t)(16384 - ep->ops_live);
}

static struct fi_ops_ep ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = mrcfi_cancel,
	.getopt = ep_getopt,
	.setopt = ep_setopt,
	.tx_ctx = no_tx_ctx,
	.rx_ctx = no_rx_ctx,
	.rx_size_left = ep_rx_size_left,
	.tx_size_left = ep_rx_size_left,
};

static int cm_setname(fid_t fid, void *addr, size_t addrlen)
{
	(void)fid; (void)addr; (void)addrlen;
	return -FI_ENOSYS;
}
static int cm_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct mrcfi_ep *ep = mrcfi_container(fid, struct mrcfi_ep, ep.fid);
	size_t cap = *addrlen;

	*addrlen = sizeof(ep->name);
	if (cap < sizeof(ep->name))
		return -FI_ETOOSMALL;
	memcpy(addr, &ep->name, sizeof(ep->name));
	return 0;
}
static int cm_getpeer(struct fid_ep *ep, void *addr, size_t *addrlen)
{
	(void)ep; (void)addr; (void)addrlen;
	return -FI_ENOSYS;
}
static int cm_connect(struct fid_ep *ep, const void *addr, const void *param, size_t paramlen)
{
	(void)ep; (void)addr; (void)param; (void)paramlen;
	return -FI_ENOSYS;
}
static int cm_listen(struct fid_pep *pep)
{
	(void)pep;
	return -FI_ENOSYS;
}
static int cm_accept(struct fid_ep *ep, const void *param, size_t paramlen)
{
	(void)ep; (void)param; (void)paramlen;
	return -FI_ENOSYS;
}
static int cm_reject(struct fid_pep *pep, fid_t handle, const void *param, size_t paramlen)
{
	(void)pep; (void)handle; (void)param; (void)paramlen;
	return -FI_ENOSYS;
}
static int cm_shutdown(struct fid_ep *ep, uint64_t flags)
{
	(void)ep; (void)flags;
	return -FI_ENOSYS;
}
static int cm_join(struct fid_ep *ep, const void *addr, uint64_t flags, struct fid_mc **mc, void *context)
{
	(void)ep; (void)addr; (void)flags; (void)mc; (void)context;
	return -FI_ENOSYS;
}

static struct fi_ops_cm cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = cm_setname,
	.getname = cm_getname,
	.getpeer = cm_getpeer,
	.connect = cm_connect,
	.listen = cm_listen,
	.accept = cm_accept,
	.reject = cm_reject,
	.shutdown = cm_shutdown,
	.join = cm_join,
};

/* ---- atomics and collectives: MRC has neither ---------------------------------------------------- */

static ssize_t at_write(struct fid_ep *ep, const void *buf, size_t count, void *desc, fi_addr_t dest_addr,
			uint64_t addr, uint64_t key, enum fi_datatype datatype, enum fi_op op, void *context)
{
	(void)ep; (void)buf; (void)count; (void)desc; (void)dest_addr; (void)addr; (void)key; (void)datatype;
	(void)op; (void)context;
	return -FI_ENOSYS;
}
static ssize_t at_writev(struct fid_ep *ep, const struct fi_ioc *iov, void **desc, size_t count,
			 fi_addr_t dest_addr, uint64_t addr, uint64_t key, enum fi_datatype datatype, enum fi_op op,
			 void *context)
{
	(void)ep; (void)iov; (void)desc; (void)count; (void)dest_addr; (void)addr; (void)key; (void)datatype;
	(void)op; (void)context;
	return -FI_ENOSYS;
}
static ssize_t at_writemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg, uint64_t flags)
{
	(void)ep; (void)msg; (void)flags;
	return -FI_ENOSYS;
}
static ssize_t at_inject(struct fid_ep *ep, const void *buf, size_t count, fi_addr_t dest_addr, uint64_t addr,
			 uint64_t key, enum fi_datatype datatype, enum fi_op op)
{
	(void)ep; (void)buf; (void)count; (void)dest_addr; (void)addr; (void)key; (void)datatype; (void)op;
	return -FI_ENOSYS;
}
static ssize_t at_readwrite(struct fid_ep *ep, const void *buf, size_t count, void *desc, void *result,
			    void *result_desc, fi_addr_t dest_addr, uint64_t addr, uint64_t key,
			    enum fi_datatype datatype, enum fi_op op, void *context)
{
	(void)ep; (void)buf; (void)count; (void)desc; (void)result; (void)result_desc; (void)dest_addr;
	(void)addr; (void)key; (void)datatype; (void)op; (void)context;
	return -FI_ENOSYS;
}
static ssize_t at_readwritev(struct fid_ep *ep, const struct fi_ioc *iov, void **desc, size_t count,
			     struct fi_ioc *resultv, void **result_desc, size_t result_count, fi_addr_t dest_addr,
			     uint64_t addr, uint64_t key, enum fi_datatype datatype, enum fi_op op, void *context)
{
	(void)ep; (void)iov; (void)desc; (void)count; (void)resultv; (void)result_desc; (void)result_count;
	(void)dest_addr; (void)addr; (void)key; (void)datatype; (void)op; (void)context;
	return -FI_ENOSYS;
}
static ssize_t at_readwritemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg, struct fi_ioc *resultv,
			       void **result_desc, size_t result_count, uint64_t flags)
{
	(void)ep; (void)msg; (void)resultv; (void)result_desc; (void)result_count; (void)flags;
	return -FI_ENOSYS;
}
static ssize_t at_compwrite(struct fid_ep *ep, const void *buf, size_t count, void *desc, const void *compare,
			    void *compare_desc, void *result, void *result_desc, fi_addr_t dest_addr, uint64_t addr,
			    uint64_t key, enum fi_datatype datatype, enum fi_op op, void *context)
{
	(void)ep; (void)buf; (void)count; (void)desc; (void)compare; (void)compare_desc; (void)result;
	(void)result_desc; (void)dest_addr; (void)addr; (void)key; (void)datatype; (void)op; (void)context;
	return -FI_ENOSYS;
}
static ssize_t at_compwritev(struct fid_ep *ep, const struct fi_ioc *iov, void **desc, size_t count,
			     const struct fi_ioc *comparev, void **compare_desc, size_t compare_count,
			     struct fi_ioc *resultv, void **result_desc, size_t result_count, fi_addr_t dest_addr,
			     uint64_t addr, uint64_t key, enum fi_datatype datatype, enum fi_op op, void *context)
{
	(void)ep; (void)iov; (void)desc; (void)count; (void)comparev; (void)compare_desc; (void)compare_count;
	(void)resultv; (void)result_desc; (void)result_count; (void)dest_addr; (void)addr; (void)key;
	(void)datatype; (void)op; (void)context;
	return -FI_ENOSYS;
}
static ssize_t at_compwritemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg, const struct fi_ioc *comparev,
			       void **compare_desc, size_t compare_count, struct fi_ioc *resultv, void **result_desc,
			       size_t result_count, uint64_t flags)
{
	(void)ep; (void)msg; (void)comparev; (void)compare_desc; (void)compare_count; (void)resultv;
	(void)result_desc; (void)result_count; (void)flags;
	return -FI_ENOSYS;
}
static int at_valid(struct fid_ep *ep, enum fi_datatype datatype, enum fi_op op, size_t *count)
{
	(void)ep; (void)datatype; (void)op; (void)count;
	return -FI_ENOSYS;
}

static struct fi_ops_atomic atomic_ops = {
	.size = sizeof(struct fi_ops_atomic),
	.write = at_write,
	.writev = at_writev,
	.writemsg = at_writemsg,
	.inject = at_inject,
	.readwrite = at_readwrite,
	.readwritev = at_readwritev,
	.readwritemsg = at_readwritemsg,
	.compwrite = at_compwrite,
	.compwritev = at_compwritev,
	.compwritemsg = at_compwritemsg,
	.writevalid = at_valid,
	.readwritevalid = at_valid,
	.compwritevalid = at_valid,
};

static ssize_t co_barrier(struct fid_ep *ep, fi_addr_t coll_addr, void *context)
{
	(void)ep; (void)coll_addr; (void)context;
	return -FI_ENOSYS;
}
static ssize_t co_broadcast(struct fid_ep *ep, void *buf, size_t count, void *desc, fi_addr_t coll_addr,
			    fi_addr_t root_addr, enum fi_datatype datatype, uint64_t flags, void *context)
{
	(void)ep; (void)buf; (void)count; (void)desc; (void)coll_addr; (void)root_addr; (void)datatype;
	(void)flags; (void)context;
	return -FI_ENOSYS;
}
static ssize_t co_alltoall(struct fid_ep *ep, const void *buf, size_t count, void *desc, void *result,
			   void *result_desc, fi_addr_t coll_addr, enum fi_datatype datatype, uint64_t flags,
			   void *context)
{
	(void)ep; (void)buf; (void)count; (void)desc; (void)result; (void)result_desc; (void)coll_addr;
	(void)datatype; (void)flags; (void)context;
	return -FI_ENOSYS;
}
static ssize_t co_allreduce(struct fid_ep *ep, const void *buf, size_t count, void *desc, void *result,
			    void *result_desc, fi_addr_t coll_addr, enum fi_datatype datatype, enum fi_op op,
			    uint64_t flags, void *context)
{
	(void)ep; (void)buf; (void)count; (void)desc; (void)result; (void)result_desc; (void)coll_addr;
	(void)datatype; (void)op; (void)flags; (void)context;
	return -FI_ENOSYS;
}
static ssize_t co_reduce(struct fid_ep *ep, const void *buf, size_t count, void *desc, void *result,
			 void *result_desc, fi_addr_t coll_addr, fi_addr_t root_addr, enum fi_datatype datatype,
			 enum fi_op op, uint64_t flags, void *context)
{
	(void)ep; (void)buf; (void)count; (void)desc; (void)result; (void)result_desc; (void)coll_addr;
	(void)root_addr; (void)datatype; (void)op; (void)flags; (void)context;
	return -FI_ENOSYS;
}
static ssize_t co_scatter(struct fid_ep *ep, const void *buf, size_t count, void *desc, void *result,
			  void *result_desc, fi_addr_t coll_addr, fi_addr_t root_addr, enum fi_datatype datatype,
			  uint64_t flags, void *context)
{
	(void)ep; (void)buf; (void)count; (void)desc; (void)result; (void)result_desc; (void)coll_addr;
	(void)root_addr; (void)datatype; (void)flags; (void)context;
	return -FI_ENOSYS;
}
static ssize_t co_msg(struct fid_ep *ep, const struct fi_msg_collective *msg, struct fi_ioc *resultv,
		      void **result_desc, size_t result_count, uint64_t flags)
{
	(void)ep; (void)msg; (void)resultv; (void)result_desc; (void)result_count; (void)flags;
	return -FI_ENOSYS;
}
static ssize_t co_barrier2(struct fid_ep *ep, fi_addr_t coll_addr, uint64_t flags, void *context)
{
	(void)ep; (void)coll_addr; (void)flags; (void)context;
	return -FI_ENOSYS;
}

static struct fi_ops_collective coll_ops = {
	.size = sizeof(struct fi_ops_collective),
	.barrier = co_barrier,
	.broadcast = co_broadcast,
	.alltoall = co_alltoall,
	.allreduce = co_allreduce,
	.allgather = co_alltoall,
	.reduce_scatter = co_allreduce,
	.reduce = co_reduce,
	.scatter = co_scatter,
	.gather = co_scatter,
	.msg = co_msg,
	.barrier2 = co_barrier2,
};

/* ---- fi_endpoint ------------------------------------------------------------------------------------ */

static int listen_open(struct mrcfi_ep *ep)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t sl = sizeof(sa);

	if (inet_pton(AF_INET, mrcfi_params.boot_addr, &sa.sin_addr) != 1) {
		FI_WARN(&mrcfi_prov, FI_LOG_EP_CTRL, "FI_MRC_BOOTSTRAP_ADDR %s is not an IPv4 address\n",
			mrcfi_params.boot_addr);
		return -FI_EINVAL;
	}
	ep->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (ep->listen_fd < 0)
		return -FI_EMFILE;
	if (bind(ep->listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(ep->listen_fd, 128) < 0 ||
	    getsockname(ep->listen_fd, (struct sockaddr *)&sa, &sl) < 0) {
		FI_WARN(&mrcfi_prov, FI_LOG_EP_CTRL, "bootstrap listener on %s: %s\n", mrcfi_params.boot_addr,
			strerror(errno));
		return -FI_EADDRNOTAVAIL;
	}
	ep->name.boot_ip = sa.sin_addr.s_addr;
	ep->name.boot_port = sa.sin_port;
	return 0;
}

int mrcfi_ep_open(struct fid_domain *domain, struct fi_info *info, struct fid_ep **out, void *context)
{
	if (info == NULL || info->ep_attr == NULL || (info->ep_attr->type != FI_EP_RDM &&
						      info->ep_attr->type != FI_EP_UNSPEC))
		return -FI_EINVAL;
	struct mrcfi_ep *ep = calloc(1, sizeof(*ep));
	int rc;

	if (ep == NULL)
		return -FI_ENOMEM;
	ep->domain = mrcfi_container(domain, struct mrcfi_domain, dom);
	ep->listen_fd = ep->wake_fd = ep->app_wake_fd = -1;
	pthread_mutex_init(&ep->lock, NULL);
	pthread_mutex_init(&ep->heap_lock, NULL);
	mrcfi_list_init(&ep->conns);
	mrcfi_list_init(&ep->connect_q);
	mrcfi_list_init(&ep->rx_msg);
	mrcfi_list_init(&ep->rx_tag);
	mrcfi_list_init(&ep->ux_msg);
	mrcfi_list_init(&ep->ux_tag);
	mrcfi_list_init(&ep->mem_wait);
	mrcfi_list_init(&ep->op_free);
	mrcfi_list_init(&ep->aliases);
	mrcfi_list_init(&ep->dom_link);
	ep->info = fi_dupinfo(info);
	ep->caps = info->caps;
	ep->tx_op_flags = info->tx_attr ? info->tx_attr->op_flags : 0;
	ep->rx_op_flags = info->rx_attr ? info->rx_attr->op_flags : 0;
	ep->ep.fid.fclass = FI_CLASS_EP;
	ep->ep.fid.context = context;
	ep->ep.fid.ops = &ep_fi_ops;
	ep->ep.ops = &ep_ops;
	ep->ep.cm = &cm_ops;
	ep->ep.msg = &mrcfi_msg_ops;
	ep->ep.rma = &mrcfi_rma_ops;
	ep->ep.tagged = &mrcfi_tagged_ops;
	ep->ep.atomic = &atomic_ops;
	ep->ep.collective = &coll_ops;

	ep->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	ep->app_wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (ep->info == NULL || ep->wake_fd < 0 || ep->app_wake_fd < 0) {
		rc = -FI_ENOMEM;
		goto fail;
	}

	/* the daemon session and its heap, registered once as one region */
	struct mrc_open_attr oa = {.socket = mrcfi_params.socket[0] ? mrcfi_params.socket : NULL,
				   .heap_bytes = (uint64_t)mrcfi_params.heap_mb << 20};
	char reason[160] = "";

	rc = mrc_open(&oa, &ep->ctx, reason, sizeof(reason));
	if (rc < 0) {
		FI_WARN(&mrcfi_prov, FI_LOG_EP_CTRL, "cannot attach to mrcd (%s): %s: %s\n",
			oa.socket ? oa.socket : "default socket", mrc_strerror(rc), reason);
		ep->ctx = NULL;
		rc = -mrcfi_errno(rc);
		goto fail;
	}
	ep->heap_len = (size_t)oa.heap_bytes;
	ep->heap = mrc_alloc(ep->ctx, ep->heap_len, 4096);
	if (ep->heap == NULL) {
		rc = -FI_ENOMEM;
		goto fail;
	}
	rc = mrc_reg_mr(ep->ctx, ep->heap, ep->heap_len, MRC_ACCESS_LOCAL_WRITE | MRC_ACCESS_REMOTE_WRITE,
			&ep->heap_mr);
	if (rc < 0) {
		FI_WARN(&mrcfi_prov, FI_LOG_EP_CTRL, "reg_mr: %s: %s\n", mrc_strerror(rc), mrc_last_error(ep->ctx));
		rc = -mrcfi_errno(rc);
		goto fail;
	}
	ep->heap_free = malloc(sizeof(*ep->heap_free));
	if (ep->heap_free == NULL) {
		rc = -FI_ENOMEM;
		goto fail;
	}
	*ep->heap_free = (struct mrcfi_ext){.p = ep->heap, .len = ep->heap_len};

	ep->name.magic = MRCFI_NAME_MAGIC;
	ep->name.version = MRCFI_NAME_VERSION;
	ep->name.pid = (uint32_t)getpid();
	if (getrandom(&ep->name.ep_id, sizeof(ep->name.ep_id), 0) != sizeof(ep->name.ep_id)) {
		rc = -FI_EIO;
		goto fail;
	}
	rc = listen_open(ep);
	if (rc < 0)
		goto fail;

	pthread_mutex_lock(&ep->domain->lock);
	mrcfi_list_add_tail(&ep->domain->eps, &ep->dom_link);
	pthread_mutex_unlock(&ep->domain->lock);
	*out = &ep->ep;
	return 0;
fail:
	if (ep->ctx)
		mrc_close(ep->ctx);
	heap_fini(ep);
	if (ep->listen_fd >= 0)
		close(ep->listen_fd);
	if (ep->wake_fd >= 0)
		close(ep->wake_fd);
	if (ep->app_wake_fd >= 0)
		close(ep->app_wake_fd);
	fi_freeinfo(ep->info);
	free(ep);
	return rc;
}
