/* mrcp_calq.h - a calendar queue of timed entries, for an event loop whose
 * entries mostly fall a little ahead of the present (the simulator's packet
 * hops: a propagation delay plus some queueing). The contract is the one of
 * mrcp_heap.h: entries leave by time, and entries with equal times in the
 * order they were pushed, so a run that pushes the same entries pops them in
 * the same order as a heap would (architecture.md §5).
 *
 * Time is cut into buckets of 2^shift units. The entries of the present
 * bucket sit in a small heap ("near"); those of the next n_buckets - 1
 * buckets on one unsorted list per bucket, filed in O(1); anything later in
 * a second heap ("far"), which feeds the lists as the present moves on.
 * Pushing costs O(1) for an entry within the horizon, popping O(log k) for k
 * entries in the present bucket: the big heap's cache misses, one per level,
 * are gone. Unlike mrcp_heap, the queue owns its storage and grows it. */
#ifndef MRCP_CALQ_H
#define MRCP_CALQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mrcp_heap.h" /* struct mrcp_heap_ent */

struct mrcp_calq_node;

struct mrcp_calq {
	struct mrcp_heap near;     /**< the present bucket's entries (and any
				    *   pushed for an earlier time) */
	struct mrcp_heap far;      /**< entries at or past the horizon */
	struct mrcp_calq_node *pool; /**< list nodes; free ones on a free list */
	uint32_t pool_cap, free_head;
	uint32_t *head;            /**< [n_buckets]: each bucket's first node */
	uint64_t *nonempty;        /**< bit per bucket */
	uint32_t n_buckets;        /**< a power of two */
	unsigned shift;            /**< a bucket is 2^shift time units */
	uint64_t cur;              /**< the present bucket (time >> shift) */
	uint64_t listed;           /**< entries on the bucket lists */
	uint64_t n;                /**< entries held */
	uint64_t next_seq;         /**< seq of the next push; counts from 0 */
};

/** An empty queue of @n_buckets (a power of two >= 64) buckets of 2^@shift
 *  time units, whose present is the bucket of @now. @return 0, -EINVAL,
 *  -ENOMEM. */
int mrcp_calq_init(struct mrcp_calq *q, unsigned shift, uint32_t n_buckets, uint64_t now);
void mrcp_calq_fini(struct mrcp_calq *q);

/** Add a copy of @e (its t and payload; seq is assigned). Unlike the
 *  heap's, times here never wrap: they count up from an origin (the
 *  simulator's picoseconds reach 2^63 after 106 days). An entry may be
 *  pushed for a time before the last one popped; it leaves next.
 *  @return 0, or -ENOMEM (nothing changes). */
int mrcp_calq_push(struct mrcp_calq *q, const struct mrcp_heap_ent *e);

/** Take the entry that leaves next into @out. @return false if @q is
 *  empty (@out untouched). */
bool mrcp_calq_pop(struct mrcp_calq *q, struct mrcp_heap_ent *out);

/** Bytes @q has allocated (its heaps, bucket table, bitmap and node pool). */
size_t mrcp_calq_bytes(const struct mrcp_calq *q);

/** Call @fn on every entry held, in no particular order (to free payloads). */
void mrcp_calq_foreach(const struct mrcp_calq *q, void (*fn)(void *ctx, const struct mrcp_heap_ent *e),
		       void *ctx);

#endif
