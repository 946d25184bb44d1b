/* av.c - address vectors (FI_AV_TABLE and FI_AV_MAP, both a table whose
 * index is the fi_addr_t). An entry is just the peer's struct mrcfi_name;
 * connections are made per endpoint on first use (ep.c), so inserting costs
 * nothing and needs no progress. */
#define _GNU_SOURCE
#include "mrcfi.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static bool name_ok(const struct mrcfi_name *n)
{
	return n->magic == MRCFI_NAME_MAGIC && n->version == MRCFI_NAME_VERSION && n->n_planes <= MRCFI_MAX_PLANES;
}

static int av_insert(struct fid_av *fav, const void *addr, size_t count, fi_addr_t *fi_addr, uint64_t flags,
		     void *context)
{
	struct mrcfi_av *av = mrcfi_container(fav, struct mrcfi_av, av);
	const struct mrcfi_name *names = addr;
	int inserted = 0;
	(void)flags;
	(void)context;

	pthread_mutex_lock(&av->lock);
	if (av->n + count > av->cap) {
		size_t ncap = av->cap ? av->cap : 64;

		while (ncap < av->n + count)
			ncap *= 2;
		struct mrcfi_name *nn = realloc(av->names, ncap * sizeof(*nn));

		if (nn)
			av->names = nn;
		bool *nv = nn ? realloc(av->valid, ncap * sizeof(*nv)) : NULL;

		if (nv == NULL) {
			pthread_mutex_unlock(&av->lock);
			return -FI_ENOMEM;
		}
		av->valid = nv;
		av->cap = ncap;
	}
	for (size_t i = 0; i < count; i++) {
		struct mrcfi_name n;

		memcpy(&n, &names[i], sizeof(n)); /* the caller's array need not be aligned */
		if (!name_ok(&n)) {
			if (fi_addr)
				fi_addr[i] = FI_ADDR_NOTAVAIL;
			continue;
		}
		av->names[av->n] = n;
		av->valid[av->n] = true;
		if (fi_addr)
			fi_addr[i] = (fi_addr_t)av->n;
		av->n++;
		inserted++;
	}
	av->gen++;
	pthread_mutex_unlock(&av->lock);
	return inserted;
}

static int av_insertsvc(struct fid_av *av, const char *node, const char *service, fi_addr_t *fi_addr,
			uint64_t flags, void *context)
{
	(void)av; (void)node; (void)service; (void)fi_addr; (void)flags; (void)context;
	return -FI_ENOSYS; /* addresses come from fi_getname only */
}

static int av_insertsym(struct fid_av *av, const char *node, size_t nodecnt, const char *service, size_t svccnt,
			fi_addr_t *fi_addr, uint64_t flags, void *context)
{
	(void)av; (void)node; (void)nodecnt; (void)service; (void)svccnt; (void)fi_addr; (void)flags; (void)context;
	return -FI_ENOSYS;
}

static int av_remove(struct fid_av *fav, fi_addr_t *fi_addr, size_t count, uint64_t flags)
{
	struct mrcfi_av *av = mrcfi_container(fav, struct mrcfi_av, av);
	(void)flags;

	pthread_mutex_lock(&av->lock);
	for (size_t i = 0; i < count; i++)
		if (fi_addr[i] < av->n)
			av->valid[fi_addr[i]] = false;
	av->gen++;
	pthread_mutex_unlock(&av->lock);
	return 0;
}

bool mrcfi_av_get(struct mrcfi_av *av, fi_addr_t a, struct mrcfi_name *out)
{
	bool ok = false;

	if (av == NULL)
		return false;
	pthread_mutex_lock(&av->lock);
	if (a < av->n && av->valid[a]) {
		*out = av->names[a];
		ok = true;
	}
	pthread_mutex_unlock(&av->lock);
	return ok;
}

fi_addr_t mrcfi_av_find(struct mrcfi_av *av, const struct mrcfi_name *n, uint64_t *gen)
{
	fi_addr_t r = FI_ADDR_NOTAVAIL;

	if (av == NULL)
		return r;
	pthread_mutex_lock(&av->lock);
	for (size_t i = 0; i < av->n; i++)
		if (av->valid[i] && memcmp(&av->names[i], n, sizeof(*n)) == 0) {
			r = (fi_addr_t)i;
			break;
		}
	*gen = av->gen;
	pthread_mutex_unlock(&av->lock);
	return r;
}

static int av_lookup(struct fid_av *fav, fi_addr_t fi_addr, void *addr, size_t *addrlen)
{
	struct mrcfi_av *av = mrcfi_container(fav, struct mrcfi_av, av);
	struct mrcfi_name n;

	if (!mrcfi_av_get(av, fi_addr, &n))
		return -FI_ENOENT;
	size_t cap = *addrlen;

	*addrlen = sizeof(n);
	memcpy(addr, &n, cap < sizeof(n) ? cap : sizeof(n));
	return cap < sizeof(n) ? -FI_ETOOSMALL : 0;
}

static const char *av_straddr(struct fid_av *fav, const void *addr, char *buf, size_t *len)
{
	struct mrcfi_name n;
	char ip[INET_ADDRSTRLEN] = "?";
	(void)fav;

	memcpy(&n, addr, sizeof(n));
	inet_ntop(AF_INET, &n.boot_ip, ip, sizeof(ip));
	int w = snprintf(buf, *len, "mrc://%s:%u/%016llx", ip, ntohs(n.boot_port), (unsigned long long)n.ep_id);

	for (unsigned i = 0; i < n.n_planes && w > 0 && (size_t)w < *len; i++) {
		char p[INET_ADDRSTRLEN];

		inet_ntop(AF_INET, &n.plane[i], p, sizeof(p));
		w += snprintf(buf + w, *len - (size_t)w, "%s%s", i ? "," : ";planes=", p);
	}
	*len = (size_t)w + 1;
	return buf;
}

static int av_set(struct fid_av *av, struct fi_av_set_attr *attr, struct fid_av_set **set, void *context)
{
	(void)av; (void)attr; (void)set; (void)context;
	return -FI_ENOSYS;
}

static struct fi_ops_av av_ops = {
	.size = sizeof(struct fi_ops_av),
	.insert = av_insert,
	.insertsvc = av_insertsvc,
	.insertsym = av_insertsym,
	.remove = av_remove,
	.lookup = av_lookup,
	.straddr = av_straddr,
	.av_set = av_set,
};

static int av_close(struct fid *fid)
{
	struct mrcfi_av *av = mrcfi_container(fid, struct mrcfi_av, av.fid);

	free(av->names);
	free(av->valid);
	pthread_mutex_destroy(&av->lock);
	free(av);
	return 0;
}

static int av_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	(void)fid; (void)bfid; (void)flags;
	return -FI_ENOSYS; /* inserts are synchronous: no EQ */
}

static struct fi_ops av_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = av_close,
	.bind = av_bind,
	.control = mrcfi_no_control,
	.ops_open = mrcfi_no_ops_open,
	.tostr = mrcfi_no_tostr,
	.ops_set = mrcfi_no_ops_set,
};

int mrcfi_av_open(struct fid_domain *domain, struct fi_av_attr *attr, struct fid_av **out, void *context)
{
	if (attr == NULL)
		return -FI_EINVAL;
	if (attr->type != FI_AV_UNSPEC && attr->type != FI_AV_MAP && attr->type != FI_AV_TABLE)
		return -FI_EINVAL;
	if (attr->flags & (FI_EVENT | FI_READ | FI_SYMMETRIC))
		return -FI_ENOSYS;
	if (attr->name || attr->rx_ctx_bits)
		return -FI_ENOSYS;
	struct mrcfi_av *av = calloc(1, sizeof(*av));

	if (av == NULL)
		return -FI_ENOMEM;
	av->domain = mrcfi_container(domain, struct mrcfi_domain, dom);
	av->type = attr->type == FI_AV_UNSPEC ? FI_AV_TABLE : attr->type;
	pthread_mutex_init(&av->lock, NULL);
	av->av.fid.fclass = FI_CLASS_AV;
	av->av.fid.context = context;
	av->av.fid.ops = &av_fi_ops;
	av->av.ops = &av_ops;
	*out = &av->av;
	return 0;
}
