/* cc.c - the per-engine registry of congestion-control algorithms (§6.5,
 * D56): registration checks and lookup by name; it knows nothing about any one
 * algorithm beyond the built-in list. */
#include "mrcp_cc.h"

#include <errno.h>
#include <string.h>

/* A name must be non-empty and NUL-terminated inside its array, so that
 * lookups never read past it. */
static bool name_ok(const char *name)
{
	return name[0] != '\0' && memchr(name, '\0', MRCP_CC_NAME_MAX) != NULL;
}

/* The hooks the engine calls without a NULL check (mrcp_cc.h). */
static bool hooks_ok(const struct mrcp_cc_ops *ops)
{
	return ops->init != NULL && ops->cwnd != NULL && ops->stats != NULL;
}

int mrcp_cc_register(struct mrcp_cc_registry *r, const struct mrcp_cc_ops *ops)
{
	if (r == NULL || ops == NULL || !name_ok(ops->name) || !hooks_ok(ops))
		return -EINVAL;
	if (mrcp_cc_find(r, ops->name) != NULL)
		return -EEXIST;
	if (r->n >= MRCP_CC_MAX_ALGOS)
		return -ENOSPC;
	r->ops[r->n++] = ops;
	return 0;
}

const struct mrcp_cc_ops *mrcp_cc_find(const struct mrcp_cc_registry *r, const char *name)
{
	unsigned n;

	if (r == NULL || name == NULL)
		return NULL;
	n = r->n < MRCP_CC_MAX_ALGOS ? r->n : MRCP_CC_MAX_ALGOS;
	/* Registered names end inside their array, so equality up to
	 * MRCP_CC_NAME_MAX includes @name's terminator. */
	for (unsigned i = 0; i < n; i++)
		if (strncmp(r->ops[i]->name, name, MRCP_CC_NAME_MAX) == 0)
			return r->ops[i];
	return NULL;
}

int mrcp_cc_register_builtin(struct mrcp_cc_registry *r)
{
	/* nscc first: it is the default (D52). */
	int rc = mrcp_cc_register(r, &mrcp_cc_nscc);

	if (rc != 0)
		return rc;
	return mrcp_cc_register(r, &mrcp_cc_fixed);
}
