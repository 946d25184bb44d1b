/* cq.c - completion queues (context, msg, data and tagged formats; busy
 * polling or blocking on an epoll set over the daemon's completion
 * eventfds), counters, and memory registration (a remote-writable region is
 * remapped into the endpoint's arena, docs/libfabric.md "Memory"). */
#define _GNU_SOURCE
#include "mrcfi.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sched.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>


static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ---- completion queue ---------------------------------------------------------------- */

static bool ring_push(struct mrcfi_cqe **q, size_t *cap, size_t *head, size_t *tail, const struct mrcfi_cqe *e)
{
	if (*tail - *head == *cap) {
		size_t ncap = *cap ? *cap * 2 : 256;
		struct mrcfi_cqe *n = malloc(ncap * sizeof(*n));

		if (n == NULL)
			return false;
		for (size_t i = 0; i < *tail - *head; i++)
			n[i] = (*q)[(*head + i) % *cap];
		*tail -= *head;
		*head = 0;
		free(*q);
		*q = n;
		*cap = ncap;
	}
	(*q)[(*tail)++ % *cap] = *e;
	return true;
}

void mrcfi_cq_push(struct mrcfi_cq *cq, const struct mrcfi_cqe *e)
{
	pthread_mutex_lock(&cq->lock);
	if (e->err)
		ring_push(&cq->eq, &cq->eq_cap, &cq->eq_head, &cq->eq_tail, e);
	else
		ring_push(&cq->q, &cq->q_cap, &cq->q_head, &cq->q_tail, e);
	pthread_mutex_unlock(&cq->lock);
}

static size_t entry_size(enum fi_cq_format f)
{
	switch (f) {
	case FI_CQ_FORMAT_CONTEXT: return sizeof(struct fi_cq_entry);
	case FI_CQ_FORMAT_MSG: return sizeof(struct fi_cq_msg_entry);
	case FI_CQ_FORMAT_DATA: return sizeof(struct fi_cq_data_entry);
	default: return sizeof(struct fi_cq_tagged_entry);
	}
}

static void write_entry(enum fi_cq_format f, void *dst, const struct mrcfi_cqe *e)
{
	struct fi_cq_tagged_entry t = {.op_context = e->op_context, .flags = e->flags, .len = e->len,
				       .buf = e->buf, .data = e->data, .tag = e->tag};

	memcpy(dst, &t, entry_size(f));
}

static void progress_all(struct mrcfi_cq *cq)
{
	for (unsigned i = 0; i < cq->n_eps; i++)
		mrcfi_ep_progress(cq->eps[i]);
}

static ssize_t cq_readfrom(struct fid_cq *fcq, void *buf, size_t count, fi_addr_t *src)
{
	struct mrcfi_cq *cq = mrcfi_container(fcq, struct mrcfi_cq, cq);
	size_t n = 0, sz = entry_size(cq->format);
	bool cq_idle = false;

	progress_all(cq);
	pthread_mutex_lock(&cq->lock);
	if (cq->eq_head != cq->eq_tail) {
		pthread_mutex_unlock(&cq->lock);
		return -FI_EAVAIL;
	}
	while (n < count && cq->q_head != cq->q_tail) {
		const struct mrcfi_cqe *e = &cq->q[cq->q_head++ % cq->q_cap];

		write_entry(cq->format, (char *)buf + n * sz, e);
		if (src)
			src[n] = e->src;
		n++;
	}
	if (n)
		cq->empty_reads = 0;
	else if (++cq->empty_reads > 16)
		cq_idle = true;
	pthread_mutex_unlock(&cq->lock);
	/* A busy-polling application must not starve the daemon's workers of
	 * the CPU they need to move its bytes (docs/libfabric.md "Progress"). */
	if (cq_idle)
		sched_yield();
	return n ? (ssize_t)n : -FI_EAGAIN;
}

static ssize_t cq_read(struct fid_cq *fcq, void *buf, size_t count)
{
	return cq_readfrom(fcq, buf, count, NULL);
}

static ssize_t cq_readerr(struct fid_cq *fcq, struct fi_cq_err_entry *buf, uint64_t flags)
{
	struct mrcfi_cq *cq = mrcfi_container(fcq, struct mrcfi_cq, cq);
	(void)flags;

	pthread_mutex_lock(&cq->lock);
	if (cq->eq_head == cq->eq_tail) {
		pthread_mutex_unlock(&cq->lock);
		return -FI_EAGAIN;
	}
	struct mrcfi_cqe e = cq->eq[cq->eq_head++ % cq->eq_cap];

	pthread_mutex_unlock(&cq->lock);
	buf->op_context = e.op_context;
	buf->flags = e.flags;
	buf->len = e.len;
	buf->buf = e.buf;
	buf->data = e.data;
	buf->tag = e.tag;
	buf->olen = e.olen;
	buf->err = e.err;
	buf->prov_errno = -e.err;
	buf->err_data = NULL;
	buf->err_data_size = 0;
	return 1;
}

/* Block until any bound endpoint has completions, the bootstrap thread has
 * news, fi_cq_signal was called or @timeout_ms passes. The daemon's
 * completion eventfd of every endpoint is in cq->epfd; mrc_arm_cq makes it
 * fire on the next completion. */
static int cq_block(struct mrcfi_cq *cq, int timeout_ms)
{
	for (unsigned i = 0; i < cq->n_eps; i++) {
		struct mrcfi_ep *ep = cq->eps[i];
		bool armed;

		pthread_mutex_lock(&ep->lock);
		armed = mrc_arm_cq(ep->ctx);
		pthread_mutex_unlock(&ep->lock);
		if (!armed)
			return 1; /* completions are already there */
	}
	struct pollfd pfd[33];
	bool ours[33];
	unsigned n = 0;

	ours[n] = true;
	pfd[n++] = (struct pollfd){.fd = cq->signal_fd, .events = POLLIN};
	for (unsigned i = 0; i < cq->n_eps && n + 2 <= 33; i++) {
		ours[n] = false; /* libmrc-client's: mrc_arm_cq drains it */
		pfd[n++] = (struct pollfd){.fd = mrc_cq_fd(cq->eps[i]->ctx), .events = POLLIN};
		ours[n] = true;
		pfd[n++] = (struct pollfd){.fd = cq->eps[i]->app_wake_fd, .events = POLLIN};
	}
	int rc = poll(pfd, n, timeout_ms);
	uint64_t v;

	for (unsigned i = 0; i < n; i++)
		if ((pfd[i].revents & POLLIN) && ours[i])
			(void)!read(pfd[i].fd, &v, sizeof(v));
	return rc;
}

static ssize_t cq_sreadfrom(struct fid_cq *fcq, void *buf, size_t count, fi_addr_t *src, const void *cond,
			    int timeout)
{
	struct mrcfi_cq *cq = mrcfi_container(fcq, struct mrcfi_cq, cq);
	uint64_t deadline = timeout >= 0 ? now_ms() + (uint64_t)timeout : UINT64_MAX;
	(void)cond;

	for (;;) {
		ssize_t rc = cq_readfrom(fcq, buf, count, src);

		if (rc != -FI_EAGAIN)
			return rc;
		uint64_t now = now_ms();

		if (now >= deadline)
			return -FI_EAGAIN;
		/* wake at least every 100 ms: a rendezvous waiting for arena
		 * memory or a connection in progress needs a look now and then */
		int wait = deadline - now > 100 ? 100 : (int)(deadline - now);

		cq_block(cq, wait);
	}
}

static ssize_t cq_sread(struct fid_cq *fcq, void *buf, size_t count, const void *cond, int timeout)
{
	return cq_sreadfrom(fcq, buf, count, NULL, cond, timeout);
}

static int cq_signal(struct fid_cq *fcq)
{
	struct mrcfi_cq *cq = mrcfi_container(fcq, struct mrcfi_cq, cq);
	uint64_t one = 1;

	return write(cq->signal_fd, &one, sizeof(one)) == sizeof(one) ? 0 : -FI_EIO;
}

static const char *cq_strerror(struct fid_cq *fcq, int prov_errno, const void *err_data, char *buf, size_t len)
{
	(void)fcq; (void)err_data;
	const char *s = fi_strerror(prov_errno < 0 ? -prov_errno : prov_errno);

	if (buf && len) {
		snprintf(buf, len, "%s", s);
		return buf;
	}
	return s;
}

static struct fi_ops_cq cq_ops = {
	.size = sizeof(struct fi_ops_cq),
	.read = cq_read,
	.readfrom = cq_readfrom,
	.readerr = cq_readerr,
	.sread = cq_sread,
	.sreadfrom = cq_sreadfrom,
	.signal = cq_signal,
	.strerror = cq_strerror,
};

static int cq_close(struct fid *fid)
{
	struct mrcfi_cq *cq = mrcfi_container(fid, struct mrcfi_cq, cq.fid);

	if (cq->n_eps)
		return -FI_EBUSY;
	close(cq->signal_fd);
	free(cq->q);
	free(cq->eq);
	pthread_mutex_destroy(&cq->lock);
	free(cq);
	return 0;
}

static int cq_control(struct fid *fid, int command, void *arg)
{
	struct mrcfi_cq *cq = mrcfi_container(fid, struct mrcfi_cq, cq.fid);

	if (command != FI_GETWAIT)
		return -FI_ENOSYS;
	if (cq->wait_obj != FI_WAIT_FD)
		return -FI_ENODATA;
	/* The signal eventfd is the one descriptor a CQ can name; the
	 * endpoints' own fds join it through fi_trywait / fi_cq_sread. */
	*(int *)arg = cq->signal_fd;
	return 0;
}

static struct fi_ops cq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = cq_close,
	.bind = mrcfi_no_bind,
	.control = cq_control,
	.ops_open = mrcfi_no_ops_open,
	.tostr = mrcfi_no_tostr,
	.ops_set = mrcfi_no_ops_set,
};

int mrcfi_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr, struct fid_cq **out, void *context)
{
	if (attr == NULL)
		return -FI_EINVAL;
	switch (attr->format) {
	case FI_CQ_FORMAT_UNSPEC: case FI_CQ_FORMAT_CONTEXT: case FI_CQ_FORMAT_MSG:
	case FI_CQ_FORMAT_DATA: case FI_CQ_FORMAT_TAGGED:
		break;
	default:
		return -FI_ENOSYS;
	}
	switch (attr->wait_obj) {
	case FI_WAIT_NONE: case FI_WAIT_UNSPEC: case FI_WAIT_FD:
		break;
	default:
		return -FI_ENOSYS;
	}
	struct mrcfi_cq *cq = calloc(1, sizeof(*cq));

	if (cq == NULL)
		return -FI_ENOMEM;
	cq->signal_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (cq->signal_fd < 0) {
		free(cq);
		return -FI_EMFILE;
	}
	cq->domain = mrcfi_container(domain, struct mrcfi_domain, dom);
	cq->format = attr->format == FI_CQ_FORMAT_UNSPEC ? FI_CQ_FORMAT_CONTEXT : attr->format;
	cq->wait_obj = attr->wait_obj == FI_WAIT_UNSPEC ? FI_WAIT_FD : attr->wait_obj;
	pthread_mutex_init(&cq->lock, NULL);
	cq->cq.fid.fclass = FI_CLASS_CQ;
	cq->cq.fid.context = context;
	cq->cq.fid.ops = &cq_fi_ops;
	cq->cq.ops = &cq_ops;
	*out = &cq->cq;
	return 0;
}

/* ---- counters ------------------------------------------------------------------------------ */

void mrcfi_cntr_inc(struct mrcfi_cntr *c, bool err)
{
	if (c == NULL)
		return;
	pthread_mutex_lock(&c->lock);
	if (err)
		c->err++;
	else
		c->value++;
	pthread_mutex_unlock(&c->lock);
}

static uint64_t cntr_read(struct fid_cntr *fc)
{
	struct mrcfi_cntr *c = mrcfi_container(fc, struct mrcfi_cntr, cntr);

	for (unsigned i = 0; i < c->n_eps; i++)
		mrcfi_ep_progress(c->eps[i]);
	pthread_mutex_lock(&c->lock);
	uint64_t v = c->value;

	pthread_mutex_unlock(&c->lock);
	return v;
}

static uint64_t cntr_readerr(struct fid_cntr *fc)
{
	struct mrcfi_cntr *c = mrcfi_container(fc, struct mrcfi_cntr, cntr);

	for (unsigned i = 0; i < c->n_eps; i++)
		mrcfi_ep_progress(c->eps[i]);
	pthread_mutex_lock(&c->lock);
	uint64_t v = c->err;

	pthread_mutex_unlock(&c->lock);
	return v;
}

static int cntr_add(struct fid_cntr *fc, uint64_t value)
{
	struct mrcfi_cntr *c = mrcfi_container(fc, struct mrcfi_cntr, cntr);

	pthread_mutex_lock(&c->lock);
	c->value += value;
	pthread_mutex_unlock(&c->lock);
	return 0;
}

static int cntr_set(struct fid_cntr *fc, uint64_t value)
{
	struct mrcfi_cntr *c = mrcfi_container(fc, struct mrcfi_cntr, cntr);

	pthread_mutex_lock(&c->lock);
	c->value = value;
	pthread_mutex_unlock(&c->lock);
	return 0;
}

static int cntr_adderr(struct fid_cntr *fc, uint64_t value)
{
	struct mrcfi_cntr *c = mrcfi_container(fc, struct mrcfi_cntr, cntr);

	pthread_mutex_lock(&c->lock);
	c->err += value;
	pthread_mutex_unlock(&c->lock);
	return 0;
}

static int cntr_seterr(struct fid_cntr *fc, uint64_t value)
{
	struct mrcfi_cntr *c = mrcfi_container(fc, struct mrcfi_cntr, cntr);

	pthread_mutex_lock(&c->lock);
	c->err = value;
	pthread_mutex_unlock(&c->lock);
	return 0;
}

static int cntr_wait(struct fid_cntr *fc, uint64_t threshold, int timeout)
{
	uint64_t deadline = timeout >= 0 ? now_ms() + (uint64_t)timeout : UINT64_MAX;
	uint64_t err0 = cntr_readerr(fc);

	for (;;) {
		if (cntr_read(fc) >= threshold)
			return 0;
		if (cntr_readerr(fc) != err0)
			return -FI_EAVAIL;
		if (now_ms() >= deadline)
			return -FI_ETIMEDOUT;
		sched_yield();
	}
}

static struct fi_ops_cntr cntr_ops = {
	.size = sizeof(struct fi_ops_cntr),
	.read = cntr_read,
	.readerr = cntr_readerr,
	.add = cntr_add,
	.set = cntr_set,
	.wait = cntr_wait,
	.adderr = cntr_adderr,
	.seterr = cntr_seterr,
};

static int cntr_close(struct fid *fid)
{
	struct mrcfi_cntr *c = mrcfi_container(fid, struct mrcfi_cntr, cntr.fid);

	if (c->n_eps)
		return -FI_EBUSY;
	pthread_mutex_destroy(&c->lock);
	free(c);
	return 0;
}

static struct fi_ops cntr_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = cntr_close,
	.bind = mrcfi_no_bind,
	.control = mrcfi_no_control,
	.ops_open = mrcfi_no_ops_open,
	.tostr = mrcfi_no_tostr,
	.ops_set = mrcfi_no_ops_set,
};

int mrcfi_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr, struct fid_cntr **out, void *context)
{
	if (attr && attr->events != FI_CNTR_EVENTS_COMP)
		return -FI_ENOSYS;
	if (attr && attr->wait_obj != FI_WAIT_NONE && attr->wait_obj != FI_WAIT_UNSPEC)
		return -FI_ENOSYS;
	struct mrcfi_cntr *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return -FI_ENOMEM;
	c->domain = mrcfi_container(domain, struct mrcfi_domain, dom);
	pthread_mutex_init(&c->lock, NULL);
	c->cntr.fid.fclass = FI_CLASS_CNTR;
	c->cntr.fid.context = context;
	c->cntr.fid.ops = &cntr_fi_ops;
	c->cntr.ops = &cntr_ops;
	*out = &c->cntr;
	return 0;
}

/* ---- memory registration --------------------------------------------------------------------- */

/* Move the application's pages [start, end) into @ep's arena: copy them into
 * an arena block, then map that block's pages over the application's
 * addresses (mremap of a shared mapping with old_size 0 makes a second
 * mapping of the same pages). The application keeps its pointers; the
 * daemon can now place Writes into them. */
static struct mrcfi_alias *alias_get(struct mrcfi_ep *ep, uintptr_t start, uintptr_t end, int *err)
{
	struct mrcfi_list *l;

	for (l = ep->aliases.next; l != &ep->aliases; l = l->next) {
		struct mrcfi_alias *a = mrcfi_container(l, struct mrcfi_alias, link);

		if (start >= a->start && end <= a->end) {
			a->refs++;
			return a;
		}
		if (start < a->end && end > a->start) {
			*err = -FI_EBUSY; /* overlaps a remote-writable region partly */
			return NULL;
		}
	}
	struct mrcfi_alias *a = calloc(1, sizeof(*a));

	if (a == NULL) {
		*err = -FI_ENOMEM;
		return NULL;
	}
	size_t len = end - start;

	a->arena = mrcfi_heap_alloc(ep, len, 4096);
	if (a->arena == NULL) {
		free(a);
		*err = -FI_ENOMEM;
		return NULL;
	}
	memcpy(a->arena, (void *)start, len);
	if (mremap(a->arena, 0, len, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)start) == MAP_FAILED) {
		mrcfi_heap_free(ep, a->arena);
		free(a);
		*err = -FI_EINVAL;
		return NULL;
	}
	a->start = start;
	a->end = end;
	a->refs = 1;
	mrcfi_list_add_tail(&ep->aliases, &a->link);
	return a;
}

/* Give the application back private pages with the region's current bytes:
 * copy into fresh anonymous memory, then move that over the alias. */
static void alias_put(struct mrcfi_ep *ep, struct mrcfi_alias *a)
{
	if (--a->refs)
		return;
	size_t len = a->end - a->start;
	void *tmp = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (tmp != MAP_FAILED) {
		memcpy(tmp, (void *)a->start, len);
		if (mremap(tmp, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)a->start) == MAP_FAILED)
			munmap(tmp, len);
	}
	mrcfi_list_del(&a->link);
	mrcfi_heap_free(ep, a->arena);
	free(a);
}

static int mr_close(struct fid *fid)
{
	struct mrcfi_mr *mr = mrcfi_container(fid, struct mrcfi_mr, mr.fid);
	struct mrcfi_domain *d = mr->domain;

	pthread_mutex_lock(&d->lock);
	mrcfi_list_del(&mr->link);
	if (mr->alias) {
		pthread_mutex_lock(&mr->ep->lock);
		alias_put(mr->ep, mr->alias);
		pthread_mutex_unlock(&mr->ep->lock);
	}
	pthread_mutex_unlock(&d->lock);
	free(mr);
	return 0;
}

static int mr_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	(void)fid; (void)bfid; (void)flags;
	return -FI_ENOSYS; /* FI_MR_ENDPOINT is not a mode of ours */
}

static struct fi_ops mr_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = mr_close,
	.bind = mr_bind,
	.control = mrcfi_no_control,
	.ops_open = mrcfi_no_ops_open,
	.tostr = mrcfi_no_tostr,
	.ops_set = mrcfi_no_ops_set,
};

void mrcfi_mr_ep_gone(struct mrcfi_domain *d, struct mrcfi_ep *ep)
{
	pthread_mutex_lock(&d->lock);
	for (struct mrcfi_list *l = d->mrs.next; l != &d->mrs; l = l->next) {
		struct mrcfi_mr *mr = mrcfi_container(l, struct mrcfi_mr, link);

		if (mr->ep == ep && mr->alias) {
			alias_put(ep, mr->alias);
			mr->alias = NULL;
			mr->ep = NULL;
		}
	}
	pthread_mutex_unlock(&d->lock);
}

static int mr_regattr(struct fid *fid, const struct fi_mr_attr *attr, uint64_t flags, struct fid_mr **out)
{
	struct mrcfi_domain *d = mrcfi_container(fid, struct mrcfi_domain, dom.fid);
	(void)flags;

	if (attr == NULL || out == NULL || attr->iov_count != 1 || attr->mr_iov == NULL)
		return attr && attr->iov_count > 1 ? -FI_ENOSYS : -FI_EINVAL;
	if (attr->access & (FI_READ | FI_REMOTE_READ))
		return -FI_ENOSYS; /* MRC has no RDMA Read */
	if (attr->iface != FI_HMEM_SYSTEM)
		return -FI_ENOSYS;
	struct mrcfi_mr *mr = calloc(1, sizeof(*mr));

	if (mr == NULL)
		return -FI_ENOMEM;
	mr->domain = d;
	mr->addr = (uintptr_t)attr->mr_iov[0].iov_base;
	mr->len = attr->mr_iov[0].iov_len;
	mr->access = attr->access;
	mr->mr.fid.fclass = FI_CLASS_MR;
	mr->mr.fid.context = attr->context;
	mr->mr.fid.ops = &mr_fi_ops;
	mr->mr.mem_desc = mr;
	mr->mr.key = 0;

	pthread_mutex_lock(&d->lock);
	if (attr->access & FI_REMOTE_WRITE) {
		if (mrcfi_list_empty(&d->eps) || mr->len == 0) {
			pthread_mutex_unlock(&d->lock);
			free(mr);
			return -FI_EOPBADSTATE; /* the arena belongs to an endpoint: open one first */
		}
		struct mrcfi_ep *ep = mrcfi_container(d->eps.next, struct mrcfi_ep, dom_link);
		uintptr_t start = mr->addr & ~(uintptr_t)4095;
		uintptr_t end = (mr->addr + mr->len + 4095) & ~(uintptr_t)4095;
		int err = 0;

		pthread_mutex_lock(&ep->lock);
		mr->alias = alias_get(ep, start, end, &err);
		if (mr->alias) {
			mr->ep = ep;
			/* FI_MR_VIRT_ADDR + FI_MR_PROV_KEY: the key is what a peer
			 * adds to our virtual address to get the arena address its
			 * daemon writes to (docs/libfabric.md) */
			uint64_t arena_va = mrc_va(ep->ctx, (uint8_t *)mr->alias->arena + (mr->addr - start));

			mr->mr.key = arena_va - (uint64_t)mr->addr;
		}
		pthread_mutex_unlock(&ep->lock);
		if (mr->alias == NULL) {
			pthread_mutex_unlock(&d->lock);
			free(mr);
			return err;
		}
	}
	mrcfi_list_add_tail(&d->mrs, &mr->link);
	pthread_mutex_unlock(&d->lock);
	*out = &mr->mr;
	return 0;
}

static int mr_regv(struct fid *fid, const struct iovec *iov, size_t count, uint64_t access, uint64_t offset,
		   uint64_t requested_key, uint64_t flags, struct fid_mr **mr, void *context)
{
	struct fi_mr_attr attr = {.mr_iov = iov, .iov_count = count, .access = access, .offset = offset,
				  .requested_key = requested_key, .context = context, .iface = FI_HMEM_SYSTEM};

	return mr_regattr(fid, &attr, flags, mr);
}

static int mr_reg(struct fid *fid, const void *buf, size_t len, uint64_t access, uint64_t offset,
		  uint64_t requested_key, uint64_t flags, struct fid_mr **mr, void *context)
{
	struct iovec iov = {.iov_base = (void *)(uintptr_t)buf, .iov_len = len};

	return mr_regv(fid, &iov, 1, access, offset, requested_key, flags, mr, context);
}

struct fi_ops_mr mrcfi_mr_ops = {
	.size = sizeof(struct fi_ops_mr),
	.reg = mr_reg,
	.regv = mr_regv,
	.regattr = mr_regattr,
};
