/* heap.c - the (time, push sequence) binary min-heap of mrcp_heap.h: sift up
 * on push, sift down on pop, moving a hole rather than swapping. Knows
 * nothing about what the entries mean. */
#include "mrcp_heap.h"

#include <errno.h>

#include "mrcp_seq.h"

void mrcp_heap_init(struct mrcp_heap *h, struct mrcp_heap_ent *storage, uint32_t cap)
{
	h->ent = storage;
	h->n = 0;
	h->cap = storage != NULL ? cap : 0;
	h->next_seq = 0;
}

void mrcp_heap_resize(struct mrcp_heap *h, struct mrcp_heap_ent *storage, uint32_t cap)
{
	h->ent = storage;
	h->cap = cap;
}

/* Does @a leave before @b? Push numbers are unique, so this is a total
 * order, and any correct heap pops the same sequence. */
static inline bool before(const struct mrcp_heap_ent *a, const struct mrcp_heap_ent *b)
{
	if (a->t != b->t)
		return mrcp_time_lt(a->t, b->t);
	return a->seq < b->seq; /* 64 bits: never wraps in practice */
}

int mrcp_heap_push(struct mrcp_heap *h, const struct mrcp_heap_ent *e)
{
	struct mrcp_heap_ent x = *e;

	if (h->n >= h->cap)
		return -ENOSPC;
	x.seq = h->next_seq++;
	return mrcp_heap_push_seq(h, &x);
}

int mrcp_heap_push_seq(struct mrcp_heap *h, const struct mrcp_heap_ent *e)
{
	struct mrcp_heap_ent x = *e;
	uint32_t i;

	if (h->n >= h->cap)
		return -ENOSPC;
	/* sift up: move parents down into the hole until @x fits */
	for (i = h->n++; i > 0;) {
		uint32_t up = (i - 1) / 2;

		if (!before(&x, &h->ent[up]))
			break;
		h->ent[i] = h->ent[up];
		i = up;
	}
	h->ent[i] = x;
	return 0;
}

bool mrcp_heap_pop(struct mrcp_heap *h, struct mrcp_heap_ent *out)
{
	struct mrcp_heap_ent last;
	uint32_t i = 0, n;

	if (h->n == 0)
		return false;
	*out = h->ent[0];
	n = --h->n;
	if (n == 0)
		return true;
	last = h->ent[n];
	/* sift the last entry down from the root */
	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && before(&h->ent[c + 1], &h->ent[c]))
			c++;
		if (!before(&h->ent[c], &last))
			break;
		h->ent[i] = h->ent[c];
		i = c;
	}
	h->ent[i] = last;
	return true;
}
