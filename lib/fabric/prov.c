/* prov.c - the provider "mrc" itself: fi_prov_ini, the FI_MRC_* variables,
 * fi_getinfo's attribute matching, the fabric, the domain and the event
 * queue. The data path is in msg.c, endpoints and connections in ep.c. */
#define _GNU_SOURCE
#include "mrcfi.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MRCFI_PROV_VERSION FI_VERSION(0, 1)

struct mrcfi_params mrcfi_params = {
	.heap_mb = 256,
	.ring_slots = 64,
	.eager_size = 8192,
	.boot_addr = "127.0.0.1",
};

/* Every capability the provider has; FI_READ and FI_ATOMIC never (MRC has
 * neither Read nor atomics). */
#define MRCFI_PRIMARY_CAPS (FI_MSG | FI_TAGGED | FI_RMA | FI_SEND | FI_RECV | FI_WRITE | FI_REMOTE_WRITE)
#define MRCFI_SECONDARY_CAPS (FI_DIRECTED_RECV | FI_SOURCE | FI_LOCAL_COMM | FI_REMOTE_COMM)
#define MRCFI_CAPS (MRCFI_PRIMARY_CAPS | MRCFI_SECONDARY_CAPS)
#define MRCFI_MR_MODE (FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY)
#define MRCFI_OP_FLAGS (FI_COMPLETION | FI_INJECT_COMPLETE | FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE)

int mrcfi_errno(int neg_errno)
{
	switch (-neg_errno) {
	case 0: return 0;
	case ENOMEM: return FI_ENOMEM;
	case EAGAIN: return FI_EAGAIN;
	case EINVAL: return FI_EINVAL;
	case ENOENT: return FI_ENOENT;
	case ENOSPC: return FI_ENOSPC;
	case ETIMEDOUT: return FI_ETIMEDOUT;
	case ECONNREFUSED: return FI_ECONNREFUSED;
	case EPIPE: return FI_EIO;
	case EPROTO: return FI_EOTHER;
	case EBUSY: return FI_EBUSY;
	default: return FI_EIO;
	}
}

/* ---- fi_getinfo -------------------------------------------------------------------- */

static int fill_info(struct fi_info *fi, const struct fi_info *hints, uint32_t version)
{
	uint64_t caps = MRCFI_CAPS;
	const struct fi_domain_attr *hd = hints ? hints->domain_attr : NULL;

	if (hints) {
		if (hints->ep_attr && hints->ep_attr->type != FI_EP_UNSPEC && hints->ep_attr->type != FI_EP_RDM)
			return -FI_ENODATA;
		if (hints->caps & ~MRCFI_CAPS)
			return -FI_ENODATA;
		if (hints->caps) {
			caps = hints->caps;
			if (!(caps & (FI_LOCAL_COMM | FI_REMOTE_COMM)))
				caps |= FI_LOCAL_COMM | FI_REMOTE_COMM;
		}
		if (hints->addr_format != FI_FORMAT_UNSPEC)
			return -FI_ENODATA;
		if (hints->tx_attr && (hints->tx_attr->msg_order & ~(uint64_t)FI_ORDER_SAS))
			return -FI_ENODATA;
		if (hints->rx_attr && (hints->rx_attr->msg_order & ~(uint64_t)FI_ORDER_SAS))
			return -FI_ENODATA;
		if (hints->tx_attr && hints->tx_attr->inject_size > mrcfi_params.eager_size)
			return -FI_ENODATA;
		if (hints->ep_attr && hints->ep_attr->max_msg_size > mrcfi_params.max_msg_size)
			return -FI_ENODATA;
	}
	if (hd) {
		if (hd->data_progress == FI_PROGRESS_AUTO)
			return -FI_ENODATA;
		if (hd->cq_data_size > 4)
			return -FI_ENODATA;
		if (hd->name && strcmp(hd->name, "mrc") != 0)
			return -FI_ENODATA;
		if (hd->av_type != FI_AV_UNSPEC && hd->av_type != FI_AV_MAP && hd->av_type != FI_AV_TABLE)
			return -FI_ENODATA;
	}
	if (hints && hints->fabric_attr && hints->fabric_attr->name &&
	    strcmp(hints->fabric_attr->name, "mrc") != 0)
		return -FI_ENODATA;

	/* Registration modes (fi_domain(3)): RMA needs the application to
	 * accept provider keys, virtual addresses and allocated memory; without
	 * RMA nothing is required. */
	int user_mode = hd ? hd->mr_mode : FI_MR_UNSPEC;
	uint64_t mr_mode = (caps & FI_RMA) ? MRCFI_MR_MODE : 0;

	if (user_mode & FI_MR_BASIC) {
		if (user_mode & ~FI_MR_BASIC)
			return -FI_ENODATA;
		mr_mode = FI_MR_BASIC;
	} else if (user_mode & FI_MR_SCALABLE) {
		if (caps & FI_RMA) {
			if (hints && hints->caps)
				return -FI_ENODATA;
			caps &= ~(uint64_t)(FI_RMA | FI_WRITE | FI_REMOTE_WRITE);
		}
		mr_mode = 0;
	} else if (user_mode != FI_MR_UNSPEC && ((uint64_t)user_mode & mr_mode) != mr_mode) {
		if (hints && hints->caps)
			return -FI_ENODATA;
		caps &= ~(uint64_t)(FI_RMA | FI_WRITE | FI_REMOTE_WRITE);
		mr_mode = 0;
	}
	(void)version;

	fi->caps = caps;
	fi->mode = 0;
	fi->addr_format = FI_FORMAT_UNSPEC;
	fi->src_addrlen = 0;
	if (hints && hints->dest_addr && hints->dest_addrlen == sizeof(struct mrcfi_name)) {
		fi->dest_addr = malloc(sizeof(struct mrcfi_name));
		if (fi->dest_addr == NULL)
			return -FI_ENOMEM;
		memcpy(fi->dest_addr, hints->dest_addr, sizeof(struct mrcfi_name));
		fi->dest_addrlen = sizeof(struct mrcfi_name);
	}

	struct fi_tx_attr *tx = fi->tx_attr;
	tx->caps = caps & (FI_MSG | FI_TAGGED | FI_RMA | FI_SEND | FI_WRITE | FI_LOCAL_COMM | FI_REMOTE_COMM);
	tx->mode = 0;
	tx->op_flags = hints && hints->tx_attr ? hints->tx_attr->op_flags & MRCFI_OP_FLAGS : 0;
	tx->msg_order = FI_ORDER_SAS;
	tx->comp_order = FI_ORDER_NONE;
	tx->inject_size = mrcfi_params.eager_size;
	tx->size = 1024;
	tx->iov_limit = MRCFI_IOV_MAX;
	tx->rma_iov_limit = 1;

	struct fi_rx_attr *rx = fi->rx_attr;
	rx->caps = caps & (FI_MSG | FI_TAGGED | FI_RMA | FI_RECV | FI_REMOTE_WRITE | FI_DIRECTED_RECV | FI_SOURCE |
			   FI_LOCAL_COMM | FI_REMOTE_COMM);
	rx->mode = 0;
	rx->op_flags = hints && hints->rx_attr ? hints->rx_attr->op_flags & FI_COMPLETION : 0;
	rx->msg_order = FI_ORDER_SAS;
	rx->comp_order = FI_ORDER_NONE;
	rx->total_buffered_recv = 0;
	rx->size = 1024;
	rx->iov_limit = MRCFI_IOV_MAX;

	struct fi_ep_attr *ep = fi->ep_attr;
	ep->type = FI_EP_RDM;
	ep->protocol = FI_PROTO_UNSPEC;
	ep->protocol_version = 1;
	ep->max_msg_size = mrcfi_params.max_msg_size;
	ep->msg_prefix_size = 0;
	ep->max_order_raw_size = 0;
	ep->max_order_war_size = 0;
	ep->max_order_waw_size = 0;
	ep->mem_tag_format = 0xaaaaaaaaaaaaaaaaull; /* 64 tag bits, all the application's */
	ep->tx_ctx_cnt = 1;
	ep->rx_ctx_cnt = 1;

	struct fi_domain_attr *d = fi->domain_attr;
	d->name = strdup("mrc");
	d->threading = FI_THREAD_SAFE;
	d->control_progress = hd && hd->control_progress == FI_PROGRESS_MANUAL ? FI_PROGRESS_MANUAL : FI_PROGRESS_AUTO;
	d->data_progress = FI_PROGRESS_MANUAL;
	d->resource_mgmt = FI_RM_ENABLED;
	d->av_type = hd ? hd->av_type : FI_AV_UNSPEC;
	d->mr_mode = (int)mr_mode;
	d->mr_key_size = sizeof(uint64_t);
	d->cq_data_size = 4;
	d->cq_cnt = 256;
	d->ep_cnt = 64;
	d->tx_ctx_cnt = 1;
	d->rx_ctx_cnt = 1;
	d->max_ep_tx_ctx = 1;
	d->max_ep_rx_ctx = 1;
	d->max_ep_stx_ctx = 0;
	d->max_ep_srx_ctx = 0;
	d->cntr_cnt = 256;
	d->mr_iov_limit = 1;
	d->caps = FI_LOCAL_COMM | FI_REMOTE_COMM;
	d->mode = 0;
	d->mr_cnt = 1024;

	struct fi_fabric_attr *f = fi->fabric_attr;
	f->name = strdup("mrc");
	f->prov_name = NULL; /* libfabric fills in the provider name */
	f->prov_version = MRCFI_PROV_VERSION;
	f->api_version = FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION);
	if (d->name == NULL || f->name == NULL)
		return -FI_ENOMEM;
	return 0;
}

static int mrcfi_getinfo(uint32_t version, const char *node, const char *service, uint64_t flags,
			 const struct fi_info *hints, struct fi_info **info)
{
	(void)node;
	(void)service;
	(void)flags;
	if (FI_VERSION_LT(version, FI_VERSION(1, 5)))
		return -FI_ENODATA;
	struct fi_info *fi = fi_allocinfo();

	if (fi == NULL)
		return -FI_ENOMEM;
	int rc = fill_info(fi, hints, version);

	if (rc < 0) {
		fi_freeinfo(fi);
		return rc;
	}
	*info = fi;
	return 0;
}

/* ---- stubs for what MRC cannot do ----------------------------------------------------- */

int mrcfi_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	(void)fid; (void)bfid; (void)flags;
	return -FI_ENOSYS;
}
int mrcfi_no_control(struct fid *fid, int command, void *arg)
{
	(void)fid; (void)command; (void)arg;
	return -FI_ENOSYS;
}
int mrcfi_no_ops_open(struct fid *fid, const char *name, uint64_t flags, void **ops, void *context)
{
	(void)fid; (void)name; (void)flags; (void)ops; (void)context;
	return -FI_ENOSYS;
}
int mrcfi_no_tostr(const struct fid *fid, char *buf, size_t len)
{
	(void)fid; (void)buf; (void)len;
	return -FI_ENOSYS;
}
int mrcfi_no_ops_set(struct fid *fid, const char *name, uint64_t flags, void *ops, void *context)
{
	(void)fid; (void)name; (void)flags; (void)ops; (void)context;
	return -FI_ENOSYS;
}

/* ---- fabric ------------------------------------------------------------------------------- */

static int fabric_close(struct fid *fid)
{
	free(mrcfi_container(fid, struct mrcfi_fabric, fab.fid));
	return 0;
}

static struct fi_ops fabric_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = fabric_close,
	.bind = mrcfi_no_bind,
	.control = mrcfi_no_control,
	.ops_open = mrcfi_no_ops_open,
	.tostr = mrcfi_no_tostr,
	.ops_set = mrcfi_no_ops_set,
};

static int no_pep(struct fid_fabric *fabric, struct fi_info *info, struct fid_pep **pep, void *context)
{
	(void)fabric; (void)info; (void)pep; (void)context;
	return -FI_ENOSYS; /* FI_EP_RDM only: no passive endpoints */
}
static int no_wait_open(struct fid_fabric *fabric, struct fi_wait_attr *attr, struct fid_wait **waitset)
{
	(void)fabric; (void)attr; (void)waitset;
	return -FI_ENOSYS;
}
static int fabric_trywait(struct fid_fabric *fabric, struct fid **fids, int count)
{
	(void)fabric;
	for (int i = 0; i < count; i++) {
		if (fids[i]->fclass != FI_CLASS_CQ)
			continue;
		struct mrcfi_cq *cq = mrcfi_container(fids[i], struct mrcfi_cq, cq.fid);

		for (unsigned k = 0; k < cq->n_eps; k++)
			mrcfi_ep_progress(cq->eps[k]);
		pthread_mutex_lock(&cq->lock);
		bool ready = cq->q_head != cq->q_tail || cq->eq_head != cq->eq_tail;

		pthread_mutex_unlock(&cq->lock);
		if (ready)
			return -FI_EAGAIN;
		for (unsigned k = 0; k < cq->n_eps; k++) {
			struct mrcfi_ep *ep = cq->eps[k];
			bool armed;

			pthread_mutex_lock(&ep->lock);
			armed = mrc_arm_cq(ep->ctx);
			pthread_mutex_unlock(&ep->lock);
			if (!armed)
				return -FI_EAGAIN;
		}
	}
	return 0;
}
static int no_domain2(struct fid_fabric *fabric, struct fi_info *info, struct fid_domain **dom, uint64_t flags,
		      void *context)
{
	if (flags)
		return -FI_ENOSYS;
	return mrcfi_domain_open(fabric, info, dom, context);
}

static struct fi_ops_fabric fabric_ops = {
	.size = sizeof(struct fi_ops_fabric),
	.domain = mrcfi_domain_open,
	.passive_ep = no_pep,
	.eq_open = mrcfi_eq_open,
	.wait_open = no_wait_open,
	.trywait = fabric_trywait,
	.domain2 = no_domain2,
};

static int mrcfi_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context)
{
	if (attr->name && strcmp(attr->name, "mrc") != 0)
		return -FI_EINVAL;
	struct mrcfi_fabric *f = calloc(1, sizeof(*f));

	if (f == NULL)
		return -FI_ENOMEM;
	f->fab.fid.fclass = FI_CLASS_FABRIC;
	f->fab.fid.context = context;
	f->fab.fid.ops = &fabric_fi_ops;
	f->fab.ops = &fabric_ops;
	f->fab.api_version = attr->api_version;
	*fabric = &f->fab;
	return 0;
}

/* ---- domain ---------------------------------------------------------------------------------- */

static int domain_close(struct fid *fid)
{
	struct mrcfi_domain *d = mrcfi_container(fid, struct mrcfi_domain, dom.fid);

	if (!mrcfi_list_empty(&d->eps) || !mrcfi_list_empty(&d->mrs))
		return -FI_EBUSY;
	pthread_mutex_destroy(&d->lock);
	free(d);
	return 0;
}

static int domain_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	(void)fid; (void)flags;
	return bfid->fclass == FI_CLASS_EQ ? 0 : -FI_EINVAL; /* no asynchronous events to report */
}

static struct fi_ops domain_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = domain_close,
	.bind = domain_bind,
	.control = mrcfi_no_control,
	.ops_open = mrcfi_no_ops_open,
	.tostr = mrcfi_no_tostr,
	.ops_set = mrcfi_no_ops_set,
};

static int no_sep(struct fid_domain *domain, struct fi_info *info, struct fid_ep **sep, void *context)
{
	(void)domain; (void)info; (void)sep; (void)context;
	return -FI_ENOSYS;
}
static int no_poll(struct fid_domain *domain, struct fi_poll_attr *attr, struct fid_poll **pollset)
{
	(void)domain; (void)attr; (void)pollset;
	return -FI_ENOSYS;
}
static int no_stx(struct fid_domain *domain, struct fi_tx_attr *attr, struct fid_stx **stx, void *context)
{
	(void)domain; (void)attr; (void)stx; (void)context;
	return -FI_ENOSYS;
}
static int no_srx(struct fid_domain *domain, struct fi_rx_attr *attr, struct fid_ep **rx_ep, void *context)
{
	(void)domain; (void)attr; (void)rx_ep; (void)context;
	return -FI_ENOSYS;
}
static int no_query_atomic(struct fid_domain *domain, enum fi_datatype datatype, enum fi_op op,
			   struct fi_atomic_attr *attr, uint64_t flags)
{
	(void)domain; (void)datatype; (void)op; (void)attr; (void)flags;
	return -FI_ENOSYS; /* MRC has no atomics */
}
static int no_query_coll(struct fid_domain *domain, enum fi_collective_op coll, struct fi_collective_attr *attr,
			 uint64_t flags)
{
	(void)domain; (void)coll; (void)attr; (void)flags;
	return -FI_ENOSYS;
}
static int domain_endpoint2(struct fid_domain *domain, struct fi_info *info, struct fid_ep **ep, uint64_t flags,
			    void *context)
{
	if (flags)
		return -FI_ENOSYS;
	return mrcfi_ep_open(domain, info, ep, context);
}

static struct fi_ops_domain domain_ops = {
	.size = sizeof(struct fi_ops_domain),
	.av_open = mrcfi_av_open,
	.cq_open = mrcfi_cq_open,
	.endpoint = mrcfi_ep_open,
	.scalable_ep = no_sep,
	.cntr_open = mrcfi_cntr_open,
	.poll_open = no_poll,
	.stx_ctx = no_stx,
	.srx_ctx = no_srx,
	.query_atomic = no_query_atomic,
	.query_collective = no_query_coll,
	.endpoint2 = domain_endpoint2,
};

int mrcfi_domain_open(struct fid_fabric *fabric, struct fi_info *info, struct fid_domain **dom, void *context)
{
	if (info == NULL || info->domain_attr == NULL)
		return -FI_EINVAL;
	if (info->domain_attr->name && strcmp(info->domain_attr->name, "mrc") != 0)
		return -FI_EINVAL;
	struct mrcfi_domain *d = calloc(1, sizeof(*d));

	if (d == NULL)
		return -FI_ENOMEM;
	d->fabric = mrcfi_container(fabric, struct mrcfi_fabric, fab);
	pthread_mutex_init(&d->lock, NULL);
	mrcfi_list_init(&d->mrs);
	mrcfi_list_init(&d->eps);
	d->mr_mode = (uint64_t)info->domain_attr->mr_mode;
	d->dom.fid.fclass = FI_CLASS_DOMAIN;
	d->dom.fid.context = context;
	d->dom.fid.ops = &domain_fi_ops;
	d->dom.ops = &domain_ops;
	d->dom.mr = &mrcfi_mr_ops;
	*dom = &d->dom;
	return 0;
}

/* ---- event queue: nothing of ours is asynchronous (AV inserts are
 * synchronous, connections are made by the bootstrap thread without
 * events), so it holds what fi_eq_write puts in. ------------------------------ */

struct mrcfi_eq_ev {
	struct mrcfi_list link;
	uint32_t event;
	size_t len;
	uint64_t flags;
	uint8_t buf[];
};

static int eq_close(struct fid *fid)
{
	struct mrcfi_eq *q = mrcfi_container(fid, struct mrcfi_eq, eq.fid);

	while (!mrcfi_list_empty(&q->events)) {
		struct mrcfi_list *l = q->events.next;

		mrcfi_list_del(l);
		free(mrcfi_container(l, struct mrcfi_eq_ev, link));
	}
	pthread_mutex_destroy(&q->lock);
	free(q);
	return 0;
}

static struct fi_ops eq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = eq_close,
	.bind = mrcfi_no_bind,
	.control = mrcfi_no_control,
	.ops_open = mrcfi_no_ops_open,
	.tostr = mrcfi_no_tostr,
	.ops_set = mrcfi_no_ops_set,
};

static ssize_t eq_read(struct fid_eq *eq, uint32_t *event, void *buf, size_t len, uint64_t flags)
{
	struct mrcfi_eq *q = mrcfi_container(eq, struct mrcfi_eq, eq);
	ssize_t rc = -FI_EAGAIN;

	pthread_mutex_lock(&q->lock);
	if (!mrcfi_list_empty(&q->events)) {
		struct mrcfi_eq_ev *ev = mrcfi_container(q->events.next, struct mrcfi_eq_ev, link);

		if (len < ev->len) {
			rc = -FI_ETOOSMALL;
		} else {
			*event = ev->event;
			memcpy(buf, ev->buf, ev->len);
			rc = (ssize_t)ev->len;
			if (!(flags & FI_PEEK)) {
				mrcfi_list_del(&ev->link);
				free(ev);
			}
		}
	}
	pthread_mutex_unlock(&q->lock);
	return rc;
}

static ssize_t eq_readerr(struct fid_eq *eq, struct fi_eq_err_entry *buf, uint64_t flags)
{
	(void)eq; (void)buf; (void)flags;
	return -FI_EAGAIN; /* no error events */
}

static ssize_t eq_write(struct fid_eq *eq, uint32_t event, const void *buf, size_t len, uint64_t flags)
{
	struct mrcfi_eq *q = mrcfi_container(eq, struct mrcfi_eq, eq);
	struct mrcfi_eq_ev *ev = malloc(sizeof(*ev) + len);

	if (ev == NULL)
		return -FI_ENOMEM;
	ev->event = event;
	ev->len = len;
	ev->flags = flags;
	memcpy(ev->buf, buf, len);
	pthread_mutex_lock(&q->lock);
	mrcfi_list_add_tail(&q->events, &ev->link);
	pthread_mutex_unlock(&q->lock);
	return (ssize_t)len;
}

static ssize_t eq_sread(struct fid_eq *eq, uint32_t *event, void *buf, size_t len, int timeout, uint64_t flags)
{
	/* Only fi_eq_write fills this queue; wait in 1 ms steps for another
	 * thread to do so (nothing of ours ever will). */
	for (int waited = 0;; waited++) {
		ssize_t rc = eq_read(eq, event, buf, len, flags);

		if (rc != -FI_EAGAIN || (timeout >= 0 && waited >= timeout))
			return rc;
		poll(NULL, 0, 1);
	}
}

static const char *eq_strerror(struct fid_eq *eq, int prov_errno, const void *err_data, char *buf, size_t len)
{
	(void)eq; (void)err_data;
	const char *s = mrc_wc_status_str((uint8_t)prov_errno);

	if (buf && len) {
		snprintf(buf, len, "%s", s);
		return buf;
	}
	return s;
}

static struct fi_ops_eq eq_ops = {
	.size = sizeof(struct fi_ops_eq),
	.read = eq_read,
	.readerr = eq_readerr,
	.write = eq_write,
	.sread = eq_sread,
	.strerror = eq_strerror,
};

int mrcfi_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr, struct fid_eq **eq, void *context)
{
	(void)fabric;
	if (attr && attr->wait_obj != FI_WAIT_NONE && attr->wait_obj != FI_WAIT_UNSPEC)
		return -FI_ENOSYS;
	struct mrcfi_eq *q = calloc(1, sizeof(*q));

	if (q == NULL)
		return -FI_ENOMEM;
	pthread_mutex_init(&q->lock, NULL);
	mrcfi_list_init(&q->events);
	q->eq.fid.fclass = FI_CLASS_EQ;
	q->eq.fid.context = context;
	q->eq.fid.ops = &eq_fi_ops;
	q->eq.ops = &eq_ops;
	*eq = &q->eq;
	return 0;
}

/* ---- the provider --------------------------------------------------------------------------- */

static void mrcfi_cleanup(void)
{
}

struct fi_provider mrcfi_prov = {
	.version = MRCFI_PROV_VERSION,
	/* Applications built against these headers skip a provider that
	 * declares an older API. */
	.fi_version = FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION),
	.name = "mrc",
	.getinfo = mrcfi_getinfo,
	.fabric = mrcfi_fabric_open,
	.cleanup = mrcfi_cleanup,
};

static void read_params(void)
{
	char *s = NULL;
	size_t v;

	fi_param_define(&mrcfi_prov, "socket", FI_PARAM_STRING,
			"mrcd's control socket (default: $MRCD_SOCKET, else /run/mrcd/mrcd.sock)");
	fi_param_define(&mrcfi_prov, "heap_mb", FI_PARAM_SIZE_T,
			"shared arena heap per endpoint, MiB; the largest message is a quarter of it (default %zu)",
			mrcfi_params.heap_mb);
	fi_param_define(&mrcfi_prov, "ring_slots", FI_PARAM_SIZE_T,
			"receive ring slots per connection and direction, a power of two, 4..1024 (default %zu)",
			mrcfi_params.ring_slots);
	fi_param_define(&mrcfi_prov, "eager_size", FI_PARAM_SIZE_T,
			"largest message sent eagerly through the ring, bytes; larger ones use the write-based "
			"rendezvous (default %zu)", mrcfi_params.eager_size);
	fi_param_define(&mrcfi_prov, "max_msg_size", FI_PARAM_SIZE_T,
			"largest message and RMA write, bytes; at most a quarter of the heap (default: a quarter)");
	fi_param_define(&mrcfi_prov, "bootstrap_addr", FI_PARAM_STRING,
			"IPv4 address the endpoint's connection listener binds and puts in its address "
			"(default %s)", mrcfi_params.boot_addr);

	if (fi_param_get_str(&mrcfi_prov, "socket", &s) == 0 && s)
		snprintf(mrcfi_params.socket, sizeof(mrcfi_params.socket), "%s", s);
	s = NULL;
	if (fi_param_get_str(&mrcfi_prov, "bootstrap_addr", &s) == 0 && s)
		snprintf(mrcfi_params.boot_addr, sizeof(mrcfi_params.boot_addr), "%s", s);
	if (fi_param_get_size_t(&mrcfi_prov, "heap_mb", &v) == 0 && v >= 16 && v <= 65536)
		mrcfi_params.heap_mb = v;
	mrcfi_params.max_msg_size = (mrcfi_params.heap_mb << 20) / 4;
	if (fi_param_get_size_t(&mrcfi_prov, "max_msg_size", &v) == 0 && v >= 1 && v < mrcfi_params.max_msg_size)
		mrcfi_params.max_msg_size = v;
	if (fi_param_get_size_t(&mrcfi_prov, "ring_slots", &v) == 0 && v >= 4 && v <= 1024 && (v & (v - 1)) == 0)
		mrcfi_params.ring_slots = v;
	if (fi_param_get_size_t(&mrcfi_prov, "eager_size", &v) == 0 && v >= 64 && v <= (1u << 20))
		mrcfi_params.eager_size = v;
}

struct fi_provider *fi_prov_ini(void); /* libfabric finds it with dlsym */

FI_EXT_INI
{
	read_params();
	return &mrcfi_prov;
}
