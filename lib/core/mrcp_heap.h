/* mrcp_heap.h - a binary min-heap of timed entries, the event queue of the
 * simulator, the test fabric and lib/dp's delay queue. Entries leave by time,
 * and entries with equal times in the order they were pushed, so a run that
 * pushes the same entries pops them in the same order (architecture.md
 * §5). The caller owns the storage: the heap never allocates. */
#ifndef MRCP_HEAP_H
#define MRCP_HEAP_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** One entry: the key and a small payload carried along. */
struct mrcp_heap_ent {
	uint64_t t;          /**< key: absolute time in the caller's unit (ns, ps);
			      *   compared wrap-safe (mrcp_time_lt), so the times
			      *   held at once lie within 2^63 of each other */
	uint64_t seq;        /**< push number, written by mrcp_heap_push(): equal
			      *   times leave in push order */
	union {
		void *ptr;
		uint64_t u64;
	} val;               /**< the caller's payload */
	uint32_t arg;        /**< the caller's payload */
	uint32_t kind;       /**< the caller's payload */
};
static_assert(sizeof(struct mrcp_heap_ent) == 32, "two entries to a cache line");

/** A heap over caller storage. Written only by its owner. */
struct mrcp_heap {
	struct mrcp_heap_ent *ent; /**< ent[0, n) in heap order; ent[0] leaves next.
				    *   The caller may read them (e.g. to free payloads) */
	uint32_t n;                /**< entries held */
	uint32_t cap;              /**< entries @ent has room for */
	uint64_t next_seq;         /**< seq of the next push; counts from 0 at init */
};

/** An empty heap over @storage, room for @cap entries (@storage may be NULL
 *  when @cap is 0: the first push then fails with -ENOSPC). */
void mrcp_heap_init(struct mrcp_heap *h, struct mrcp_heap_ent *storage, uint32_t cap);

/** Move @h to @storage of @cap entries, which already holds ent[0, n) as
 *  they were (what realloc() returns), @cap >= n. For a caller that grows the
 *  heap off the hot path. */
void mrcp_heap_resize(struct mrcp_heap *h, struct mrcp_heap_ent *storage, uint32_t cap);

/** Add a copy of @e (its t and payload; seq is assigned).
 *  @return 0, or -ENOSPC if @h is full (nothing changes). */
int mrcp_heap_push(struct mrcp_heap *h, const struct mrcp_heap_ent *e);

/** Add a copy of @e with the seq it carries, which must differ from every
 *  other entry's (for a caller that numbers entries across several heaps,
 *  as mrcp_calq.h does); next_seq is left alone.
 *  @return 0, or -ENOSPC if @h is full (nothing changes). */
int mrcp_heap_push_seq(struct mrcp_heap *h, const struct mrcp_heap_ent *e);

/** Take the entry that leaves next into @out.
 *  @return false if @h is empty (@out untouched). */
bool mrcp_heap_pop(struct mrcp_heap *h, struct mrcp_heap_ent *out);

/** @return the entry that leaves next, or NULL when @h is empty. */
static inline const struct mrcp_heap_ent *mrcp_heap_top(const struct mrcp_heap *h)
{
	return h->n != 0 ? &h->ent[0] : NULL;
}

/** @return the time of the entry that leaves next, or UINT64_MAX when empty. */
static inline uint64_t mrcp_heap_next_t(const struct mrcp_heap *h)
{
	return h->n != 0 ? h->ent[0].t : UINT64_MAX;
}

#endif
