/* calq.c - the calendar queue of mrcp_calq.h: a present-bucket heap, one
 * unsorted list per bucket of the horizon (nodes from a pool with a free
 * list, a bitmap of the non-empty buckets) and a heap past the horizon.
 * Every entry is numbered once, at its push; the two heaps order by that
 * number, so where an entry waits never changes when it leaves. Knows
 * nothing about what the entries mean. */
#include "mrcp_calq.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mrcp_seq.h"

#define CALQ_NIL UINT32_MAX

struct mrcp_calq_node {
	struct mrcp_heap_ent e;
	uint32_t next;
};

int mrcp_calq_init(struct mrcp_calq *q, unsigned shift, uint32_t n_buckets, uint64_t now)
{
	memset(q, 0, sizeof(*q));
	if (shift > 40 || n_buckets < 64 || (n_buckets & (n_buckets - 1)) != 0)
		return -EINVAL;
	q->head = malloc((size_t)n_buckets * sizeof(*q->head));
	q->nonempty = calloc(n_buckets / 64, sizeof(*q->nonempty));
	if (q->head == NULL || q->nonempty == NULL) {
		mrcp_calq_fini(q);
		return -ENOMEM;
	}
	memset(q->head, 0xff, (size_t)n_buckets * sizeof(*q->head)); /* CALQ_NIL */
	mrcp_heap_init(&q->near, NULL, 0);
	mrcp_heap_init(&q->far, NULL, 0);
	q->n_buckets = n_buckets;
	q->shift = shift;
	q->cur = now >> shift;
	q->free_head = CALQ_NIL;
	return 0;
}

void mrcp_calq_fini(struct mrcp_calq *q)
{
	free(q->near.ent);
	free(q->far.ent);
	free(q->pool);
	free(q->head);
	free(q->nonempty);
	memset(q, 0, sizeof(*q));
}

/* Push @x, seq and all, onto heap @h, doubling its storage when full. */
static int heap_add(struct mrcp_heap *h, const struct mrcp_heap_ent *x)
{
	if (h->n == h->cap) {
		uint32_t cap = h->cap ? 2 * h->cap : 256;
		struct mrcp_heap_ent *ent = h->cap < UINT32_MAX / 2 ? realloc(h->ent, (size_t)cap * sizeof(*ent)) : NULL;

		if (ent == NULL)
			return -ENOMEM;
		mrcp_heap_resize(h, ent, cap);
	}
	return mrcp_heap_push_seq(h, x);
}

/* File @x on the list of its bucket @tick, within the horizon. */
static int list_add(struct mrcp_calq *q, uint64_t tick, const struct mrcp_heap_ent *x)
{
	uint32_t b = (uint32_t)tick & (q->n_buckets - 1), i = q->free_head;

	if (i == CALQ_NIL) {
		uint32_t cap = q->pool_cap ? 2 * q->pool_cap : 1024;
		struct mrcp_calq_node *pool = q->pool_cap < UINT32_MAX / 2 ?
			realloc(q->pool, (size_t)cap * sizeof(*pool)) : NULL;

		if (pool == NULL)
			return -ENOMEM;
		/* the new nodes join the free list, lowest index first */
		for (uint32_t k = cap; k-- > q->pool_cap;) {
			pool[k].next = q->free_head;
			q->free_head = k;
		}
		q->pool = pool;
		q->pool_cap = cap;
		i = q->free_head;
	}
	q->free_head = q->pool[i].next;
	q->pool[i].e = *x;
	q->pool[i].next = q->head[b];
	q->head[b] = i;
	q->nonempty[b / 64] |= 1ull << (b % 64);
	q->listed++;
	return 0;
}

/* Where @x waits while the present is q->cur. */
static int file(struct mrcp_calq *q, const struct mrcp_heap_ent *x)
{
	int64_t ahead = (int64_t)((x->t >> q->shift) - q->cur);

	if (ahead <= 0)
		return heap_add(&q->near, x);
	if (ahead < (int64_t)q->n_buckets)
		return list_add(q, x->t >> q->shift, x);
	return heap_add(&q->far, x);
}

int mrcp_calq_push(struct mrcp_calq *q, const struct mrcp_heap_ent *e)
{
	struct mrcp_heap_ent x = *e;
	int rc;

	x.seq = q->next_seq;
	rc = file(q, &x);
	if (rc != 0)
		return rc;
	q->next_seq++;
	q->n++;
	return 0;
}

/* The first non-empty bucket after the present (the lists hold only
 * buckets cur + 1 .. cur + n_buckets - 1). Only called with q->listed > 0. */
static uint64_t next_listed(const struct mrcp_calq *q)
{
	uint32_t mask = q->n_buckets - 1, from = (uint32_t)(q->cur + 1) & mask, words = q->n_buckets / 64;

	for (uint32_t k = 0; k <= words; k++) {
		uint32_t w = (from / 64 + k) % words;
		uint64_t bits = q->nonempty[w];

		if (k == 0)
			bits &= ~0ull << (from % 64);
		if (bits != 0) {
			uint32_t b = w * 64 + (uint32_t)__builtin_ctzll(bits);

			return q->cur + 1 + ((b - from) & mask);
		}
	}
	return q->cur; /* not reached: a listed entry has a bit set */
}

/* The near heap is empty: move the present to the next bucket that holds
 * anything, take what the far heap has come within the horizon onto the
 * lists, and that bucket's list into the near heap. */
static bool advance(struct mrcp_calq *q)
{
	const struct mrcp_heap_ent *top;
	uint64_t next;
	uint32_t b, i;
	bool any = false;

	if (q->listed != 0) {
		next = next_listed(q);
		any = true;
	}
	top = mrcp_heap_top(&q->far);
	if (top != NULL && (!any || (int64_t)((top->t >> q->shift) - next) < 0)) {
		next = top->t >> q->shift;
		any = true;
	}
	if (!any)
		return false;
	q->cur = next;
	while ((top = mrcp_heap_top(&q->far)) != NULL &&
	       (int64_t)((top->t >> q->shift) - q->cur) < (int64_t)q->n_buckets) {
		struct mrcp_heap_ent x;

		(void)mrcp_heap_pop(&q->far, &x);
		if (file(q, &x) != 0) {
			/* no memory for a list node: it stays where it was */
			(void)mrcp_heap_push_seq(&q->far, &x);
			break;
		}
	}
	b = (uint32_t)q->cur & (q->n_buckets - 1);
	for (i = q->head[b]; i != CALQ_NIL;) {
		uint32_t next_i = q->pool[i].next;

		if (heap_add(&q->near, &q->pool[i].e) != 0)
			break; /* out of memory: the rest stay listed */
		q->pool[i].next = q->free_head;
		q->free_head = i;
		q->listed--;
		i = next_i;
	}
	q->head[b] = i;
	if (i == CALQ_NIL)
		q->nonempty[b / 64] &= ~(1ull << (b % 64));
	return q->near.n != 0;
}

bool mrcp_calq_pop(struct mrcp_calq *q, struct mrcp_heap_ent *out)
{
	if (q->n == 0)
		return false;
	if (q->near.n == 0 && !advance(q))
		return false;
	(void)mrcp_heap_pop(&q->near, out);
	q->n--;
	return true;
}

size_t mrcp_calq_bytes(const struct mrcp_calq *q)
{
	return ((size_t)q->near.cap + q->far.cap) * sizeof(struct mrcp_heap_ent) +
	       (size_t)q->n_buckets * sizeof(*q->head) + q->n_buckets / 8 + (size_t)q->pool_cap * sizeof(*q->pool);
}

void mrcp_calq_foreach(const struct mrcp_calq *q, void (*fn)(void *ctx, const struct mrcp_heap_ent *e),
		       void *ctx)
{
	for (uint32_t i = 0; i < q->near.n; i++)
		fn(ctx, &q->near.ent[i]);
	for (uint32_t i = 0; i < q->far.n; i++)
		fn(ctx, &q->far.ent[i]);
	for (uint32_t b = 0; q->listed != 0 && b < q->n_buckets; b++)
		for (uint32_t i = q->head[b]; i != CALQ_NIL; i = q->pool[i].next)
			fn(ctx, &q->pool[i].e);
}
