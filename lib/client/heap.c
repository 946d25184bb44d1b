/* heap.c - the first-fit allocator behind mrc_alloc/mrc_free: free extents
 * of the arena heap in offset order, coalesced on free, with the bookkeeping
 * in process memory (the daemon never sees it, a client cannot corrupt the
 * daemon with it). Knows nothing about the context or its lock. */
#include "client_internal.h"

#include <errno.h>
#include <stdlib.h>

int mrc__heap_init(struct mrc__heap *h, uint64_t base_ofs, uint64_t len)
{
	struct mrc__extent *e = NULL;

	h->base_ofs = base_ofs;
	h->len = len;
	h->free = NULL;
	h->used = NULL;
	h->free_bytes = 0;
	if (len == 0)
		return 0;
	e = malloc(sizeof(*e));
	if (e == NULL)
		return -ENOMEM;
	e->ofs = base_ofs;
	e->len = len;
	e->next = NULL;
	h->free = e;
	h->free_bytes = len;
	return 0;
}

static void free_list(struct mrc__extent *e)
{
	while (e != NULL) {
		struct mrc__extent *n = e->next;

		free(e);
		e = n;
	}
}

void mrc__heap_fini(struct mrc__heap *h)
{
	free_list(h->free);
	free_list(h->used);
	h->free = h->used = NULL;
	h->free_bytes = 0;
}

int mrc__heap_alloc(struct mrc__heap *h, uint64_t len, uint64_t align, uintptr_t addr_base,
		    uint64_t *ofs)
{
	struct mrc__extent **pp, *e, *used, *tail;

	if (len == 0 || align == 0 || (align & (align - 1)) != 0)
		return -EINVAL;
	for (pp = &h->free; (e = *pp) != NULL; pp = &e->next) {
		/* Align the address, not the offset: the mapping is only page aligned. */
		uint64_t addr = (uint64_t)addr_base + e->ofs;
		uint64_t pad = (align - (addr & (align - 1))) & (align - 1);

		if (pad > e->len || len > e->len - pad)
			continue;
		used = malloc(sizeof(*used));
		tail = NULL;
		if (used == NULL)
			return -ENOMEM;
		uint64_t rest = e->len - pad - len;

		if (pad != 0 && rest != 0) {
			/* The block splits the extent in two: keep the front in e. */
			tail = malloc(sizeof(*tail));
			if (tail == NULL) {
				free(used);
				return -ENOMEM;
			}
			tail->ofs = e->ofs + pad + len;
			tail->len = rest;
			tail->next = e->next;
			e->next = tail;
		}
		used->ofs = e->ofs + pad;
		used->len = len;
		used->next = h->used;
		h->used = used;
		if (pad != 0) {
			e->len = pad;
		} else if (rest != 0) {
			e->ofs += len;
			e->len = rest;
		} else {
			*pp = e->next;
			free(e);
		}
		h->free_bytes -= len;
		*ofs = used->ofs;
		return 0;
	}
	return -ENOMEM;
}

int mrc__heap_free(struct mrc__heap *h, uint64_t ofs)
{
	struct mrc__extent **pp, *b, *prev = NULL, *next;

	for (pp = &h->used; (b = *pp) != NULL; pp = &b->next)
		if (b->ofs == ofs)
			break;
	if (b == NULL)
		return -ENOENT;
	*pp = b->next;
	h->free_bytes += b->len;

	/* Insert in offset order, then merge with the neighbours it touches. */
	for (next = h->free; next != NULL && next->ofs < b->ofs; next = next->next)
		prev = next;
	b->next = next;
	if (prev == NULL)
		h->free = b;
	else
		prev->next = b;
	if (next != NULL && b->ofs + b->len == next->ofs) {
		b->len += next->len;
		b->next = next->next;
		free(next);
	}
	if (prev != NULL && prev->ofs + prev->len == b->ofs) {
		prev->len += b->len;
		prev->next = b->next;
		free(b);
	}
	return 0;
}

unsigned mrc__heap_nr_free(const struct mrc__heap *h)
{
	unsigned n = 0;

	for (const struct mrc__extent *e = h->free; e != NULL; e = e->next)
		n++;
	return n;
}
