/* shm.c - the SPSC ring, the arena layout/init/attach and the region table of
 * the shared-memory ABI (mrc_shm.h). Attach treats the segment as hostile:
 * the header is copied once and every offset is checked on the copy. */
#include "mrc_shm.h"

#include <errno.h>
#include <string.h>

#define ALIGN_UP(x, a) (((x) + ((uint64_t)(a) - 1)) & ~((uint64_t)(a) - 1))

static bool is_pow2(uint32_t x)
{
	return x != 0 && (x & (x - 1)) == 0;
}

/* ---------------------------------------------------------------- ring -- */

uint64_t mrc_shm_ring_bytes(uint32_t capacity, uint32_t elem_size)
{
	if (!is_pow2(capacity) || capacity > MRC_SHM_RING_MAX_CAPACITY)
		return 0;
	if (elem_size < 4 || elem_size > MRC_SHM_RING_MAX_ELEM || elem_size % 4 != 0)
		return 0;
	return ALIGN_UP(sizeof(struct mrc_shm_ring) + (uint64_t)capacity * elem_size,
			MRC_SHM_CACHE_LINE);
}

int mrc_shm_ring_init(struct mrc_shm_ring *r, uint32_t capacity, uint32_t elem_size)
{
	if (r == NULL || ((uintptr_t)r % MRC_SHM_CACHE_LINE) != 0 ||
	    mrc_shm_ring_bytes(capacity, elem_size) == 0)
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	r->capacity = capacity;
	r->mask = capacity - 1;
	r->elem_size = elem_size;
	/* Nobody else sees the ring yet: relaxed stores; the fd handover (a
	 * syscall) orders them before any attach. */
	atomic_store_explicit(&r->tail, 0, memory_order_relaxed);
	atomic_store_explicit(&r->head, 0, memory_order_relaxed);
	atomic_store_explicit(&r->sleeping, 0, memory_order_relaxed);
	return 0;
}

/* Ring geometry as the caller trusts it: the ring's own header for the
 * side that created the ring, or a validated private copy (struct
 * mrc_shm_rh) for a side that must not trust its peer. */
struct geo {
	uint32_t capacity, mask, elem_size;
};

static struct geo geo_of(const struct mrc_shm_ring *r)
{
	return (struct geo){r->capacity, r->mask, r->elem_size};
}

static void *slot(struct mrc_shm_ring *r, const struct geo *g, uint32_t i)
{
	return (uint8_t *)(r + 1) + (size_t)(i & g->mask) * g->elem_size;
}

/* Copy n elements between a linear buffer and the slots starting at index
 * idx, in at most two spans (the second after the wrap of the slot array). */
static void copy_in(struct mrc_shm_ring *r, const struct geo *g, uint32_t idx, const void *objs, unsigned n)
{
	uint32_t first = idx & g->mask;
	uint32_t span = g->capacity - first;
	size_t es = g->elem_size;

	if (span > n)
		span = n;
	memcpy(slot(r, g, first), objs, (size_t)span * es);
	if (span < n)
		memcpy(slot(r, g, 0), (const uint8_t *)objs + (size_t)span * es, (size_t)(n - span) * es);
}

static void copy_out(struct mrc_shm_ring *r, const struct geo *g, uint32_t idx, void *objs, unsigned n)
{
	uint32_t first = idx & g->mask;
	uint32_t span = g->capacity - first;
	size_t es = g->elem_size;

	if (span > n)
		span = n;
	memcpy(objs, slot(r, g, first), (size_t)span * es);
	if (span < n)
		memcpy((uint8_t *)objs + (size_t)span * es, slot(r, g, 0), (size_t)(n - span) * es);
}

static unsigned enqueue(struct mrc_shm_ring *r, const struct geo *g, const void *objs, unsigned n, bool bulk)
{
	/* Our own index: only this thread writes tail. */
	uint32_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
	/* A2: the consumer has finished reading every slot before head.
	 * Pairs with R2. */
	uint32_t head = atomic_load_explicit(&r->head, memory_order_acquire);
	uint32_t used = tail - head;
	/* A corrupt peer index must not let us overrun: clamp. */
	uint32_t space = used > g->capacity ? 0 : g->capacity - used;

	if (n > space) {
		if (bulk)
			return 0;
		n = space;
	}
	if (n == 0)
		return 0;
	copy_in(r, g, tail, objs, n);
	/* R1: publish the slots just written to the consumer. Pairs with A1. */
	atomic_store_explicit(&r->tail, tail + n, memory_order_release);
	return n;
}

static unsigned dequeue(struct mrc_shm_ring *r, const struct geo *g, void *objs, unsigned n, bool bulk)
{
	/* Our own index: only this thread writes head. */
	uint32_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
	/* A1: observe every slot written before R1. Pairs with R1. */
	uint32_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
	uint32_t avail = tail - head;

	if (avail > g->capacity) /* corrupt peer index: read in bounds only */
		avail = g->capacity;
	if (n > avail) {
		if (bulk)
			return 0;
		n = avail;
	}
	if (n == 0)
		return 0;
	copy_out(r, g, head, objs, n);
	/* R2: hand the slots just read back to the producer. Pairs with A2. */
	atomic_store_explicit(&r->head, head + n, memory_order_release);
	return n;
}

unsigned mrc_shm_ring_enqueue_burst(struct mrc_shm_ring *r, const void *objs, unsigned n)
{
	struct geo g = geo_of(r);
	return enqueue(r, &g, objs, n, false);
}

unsigned mrc_shm_ring_enqueue_bulk(struct mrc_shm_ring *r, const void *objs, unsigned n)
{
	struct geo g = geo_of(r);
	return enqueue(r, &g, objs, n, true);
}

unsigned mrc_shm_ring_dequeue_burst(struct mrc_shm_ring *r, void *objs, unsigned n)
{
	struct geo g = geo_of(r);
	return dequeue(r, &g, objs, n, false);
}

unsigned mrc_shm_ring_dequeue_bulk(struct mrc_shm_ring *r, void *objs, unsigned n)
{
	struct geo g = geo_of(r);
	return dequeue(r, &g, objs, n, true);
}

/* ---- handles with private geometry ------------------------------------------ */

int mrc_shm_view_ring_handle(const struct mrc_shm_view *v, uint32_t i, struct mrc_shm_rh *h)
{
	if (v == NULL || h == NULL || i >= v->layout.nr_rings)
		return -EINVAL;
	h->r = (struct mrc_shm_ring *)(v->base + v->layout.rings[i].ofs);
	/* from the layout validated at attach, never re-read from the segment */
	h->capacity = v->layout.rings[i].capacity;
	h->mask = h->capacity - 1;
	h->elem_size = v->layout.rings[i].elem_size;
	return 0;
}

static struct geo geo_of_rh(const struct mrc_shm_rh *h)
{
	return (struct geo){h->capacity, h->mask, h->elem_size};
}

unsigned mrc_shm_rh_enqueue_burst(const struct mrc_shm_rh *h, const void *objs, unsigned n)
{
	struct geo g = geo_of_rh(h);
	return enqueue(h->r, &g, objs, n, false);
}

unsigned mrc_shm_rh_enqueue_bulk(const struct mrc_shm_rh *h, const void *objs, unsigned n)
{
	struct geo g = geo_of_rh(h);
	return enqueue(h->r, &g, objs, n, true);
}

unsigned mrc_shm_rh_dequeue_burst(const struct mrc_shm_rh *h, void *objs, unsigned n)
{
	struct geo g = geo_of_rh(h);
	return dequeue(h->r, &g, objs, n, false);
}

unsigned mrc_shm_rh_dequeue_bulk(const struct mrc_shm_rh *h, void *objs, unsigned n)
{
	struct geo g = geo_of_rh(h);
	return dequeue(h->r, &g, objs, n, true);
}

unsigned mrc_shm_ring_count(const struct mrc_shm_ring *r)
{
	/* A snapshot for flow control and stats, not for reading slots: relaxed
	 * loads are enough (slot access always goes through A1/A2). */
	uint32_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
	uint32_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
	uint32_t used = tail - head;

	return used > r->capacity ? r->capacity : used;
}

unsigned mrc_shm_ring_free(const struct mrc_shm_ring *r)
{
	return r->capacity - mrc_shm_ring_count(r);
}

bool mrc_shm_ring_prepare_sleep(struct mrc_shm_ring *r)
{
	atomic_store_explicit(&r->sleeping, 1, memory_order_relaxed);
	/* F1: orders the sleeping store before the tail load below (store->load
	 * needs a full fence). Pairs with F2 in mrc_shm_ring_need_wake. */
	atomic_thread_fence(memory_order_seq_cst);
	uint32_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
	/* A1 (wake path): see slots published by R1 if the ring is non-empty.
	 * Pairs with R1. */
	uint32_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
	if (tail != head) {
		atomic_store_explicit(&r->sleeping, 0, memory_order_relaxed);
		return false;
	}
	return true;
}

void mrc_shm_ring_end_sleep(struct mrc_shm_ring *r)
{
	atomic_store_explicit(&r->sleeping, 0, memory_order_relaxed);
}

bool mrc_shm_ring_need_wake(struct mrc_shm_ring *r)
{
	/* F2: orders the producer's tail store (R1) before the sleeping load.
	 * Pairs with F1 in mrc_shm_ring_prepare_sleep. */
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&r->sleeping, memory_order_relaxed) == 0)
		return false;
	/* Clear it so a burst of enqueues wakes once. */
	return atomic_exchange_explicit(&r->sleeping, 0, memory_order_relaxed) != 0;
}

/* --------------------------------------------------------------- arena -- */

int mrc_shm_arena_layout(const struct mrc_shm_params *p, struct mrc_shm_layout *out)
{
	if (p == NULL || out == NULL || p->nr_rings > MRC_SHM_MAX_RINGS ||
	    p->nr_regions > MRC_SHM_MAX_REGIONS)
		return -EINVAL;
	/* Bound the heap so every sum below stays far from UINT64_MAX. */
	if (p->heap_size > (UINT64_C(1) << 48))
		return -EINVAL;

	memset(out, 0, sizeof(*out));
	out->nr_rings = p->nr_rings;
	out->nr_regions = p->nr_regions;

	uint64_t ofs = ALIGN_UP(sizeof(struct mrc_shm_hdr), MRC_SHM_CACHE_LINE);
	out->ring_area_ofs = ofs;
	for (uint32_t i = 0; i < p->nr_rings; i++) {
		uint64_t len = mrc_shm_ring_bytes(p->rings[i].capacity, p->rings[i].elem_size);
		if (len == 0)
			return -EINVAL;
		out->rings[i].ofs = ofs;
		out->rings[i].len = len;
		out->rings[i].capacity = p->rings[i].capacity;
		out->rings[i].elem_size = p->rings[i].elem_size;
		ofs += len; /* len is a multiple of 64: ofs stays aligned */
	}
	out->ring_area_len = ofs - out->ring_area_ofs;

	out->region_tbl_ofs = ofs;
	out->region_tbl_len = (uint64_t)p->nr_regions * sizeof(struct mrc_shm_region);
	ofs = ALIGN_UP(ofs + out->region_tbl_len, MRC_SHM_HEAP_ALIGN);

	out->heap_ofs = ofs;
	out->heap_len = ALIGN_UP(p->heap_size, MRC_SHM_HEAP_ALIGN);
	out->size = ofs + out->heap_len;
	return 0;
}

int mrc_shm_arena_init(void *base, uint64_t size, const struct mrc_shm_params *p)
{
	struct mrc_shm_layout l;
	int rc;

	if (base == NULL || ((uintptr_t)base % MRC_SHM_CACHE_LINE) != 0)
		return -EINVAL;
	rc = mrc_shm_arena_layout(p, &l);
	if (rc != 0)
		return rc;
	if (size < l.size)
		return -ENOSPC;

	uint8_t *b = base;
	struct mrc_shm_hdr *h = base;

	memset(h, 0, sizeof(*h));
	h->abi_version = MRC_SHM_ABI_VERSION;
	h->hdr_size = sizeof(*h);
	h->size = l.size;
	h->nr_rings = l.nr_rings;
	h->nr_regions = l.nr_regions;
	h->ring_area_ofs = l.ring_area_ofs;
	h->ring_area_len = l.ring_area_len;
	h->region_tbl_ofs = l.region_tbl_ofs;
	h->region_tbl_len = l.region_tbl_len;
	h->heap_ofs = l.heap_ofs;
	h->heap_len = l.heap_len;
	for (uint32_t i = 0; i < l.nr_rings; i++) {
		h->rings[i] = l.rings[i];
		rc = mrc_shm_ring_init((struct mrc_shm_ring *)(b + l.rings[i].ofs),
				       l.rings[i].capacity, l.rings[i].elem_size);
		if (rc != 0)
			return rc;
	}
	memset(b + l.region_tbl_ofs, 0, l.region_tbl_len);
	/* Magic last: a half-built arena never validates. The arena is private
	 * until its fd is passed on (a syscall), so no fence is needed here. */
	h->magic = MRC_SHM_MAGIC;
	return 0;
}

/* [ofs, ofs+len) inside [lo, hi)? Overflow-safe. */
static bool within(uint64_t ofs, uint64_t len, uint64_t lo, uint64_t hi)
{
	return ofs >= lo && ofs <= hi && len <= hi - ofs;
}

static bool overlap(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	/* Both ranges are already known to be in bounds: no overflow. */
	return alen != 0 && blen != 0 && a < b + blen && b < a + alen;
}

int mrc_shm_arena_attach(void *base, uint64_t map_size, struct mrc_shm_view *view)
{
	struct mrc_shm_hdr h;

	if (base == NULL || view == NULL || ((uintptr_t)base % MRC_SHM_CACHE_LINE) != 0)
		return -EINVAL;
	if (map_size < sizeof(uint64_t) + sizeof(uint32_t))
		return -EINVAL;
	/* Check identity before anything else, so a foreign or older segment is
	 * reported as a protocol mismatch, not as garbage. */
	uint64_t magic;
	uint32_t version;
	memcpy(&magic, base, sizeof(magic));
	memcpy(&version, (const uint8_t *)base + offsetof(struct mrc_shm_hdr, abi_version),
	       sizeof(version));
	if (magic != MRC_SHM_MAGIC || version != MRC_SHM_ABI_VERSION)
		return -EPROTO;
	if (map_size < sizeof(h))
		return -EINVAL;
	/* One copy; everything below is checked on the copy, never re-read. */
	memcpy(&h, base, sizeof(h));

	if (h.hdr_size != sizeof(h) || h.size > map_size || h.size < sizeof(h))
		return -EINVAL;
	if (h.nr_rings > MRC_SHM_MAX_RINGS || h.nr_regions > MRC_SHM_MAX_REGIONS)
		return -EINVAL;

	const uint64_t end = h.size;
	if (!within(h.ring_area_ofs, h.ring_area_len, sizeof(h), end) ||
	    !within(h.region_tbl_ofs, h.region_tbl_len, sizeof(h), end) ||
	    !within(h.heap_ofs, h.heap_len, sizeof(h), end))
		return -EINVAL;
	if (h.ring_area_ofs % MRC_SHM_CACHE_LINE != 0 ||
	    h.region_tbl_ofs % MRC_SHM_CACHE_LINE != 0 ||
	    h.heap_ofs % MRC_SHM_HEAP_ALIGN != 0)
		return -EINVAL;
	if (h.region_tbl_len != (uint64_t)h.nr_regions * sizeof(struct mrc_shm_region))
		return -EINVAL;
	if (overlap(h.ring_area_ofs, h.ring_area_len, h.region_tbl_ofs, h.region_tbl_len) ||
	    overlap(h.ring_area_ofs, h.ring_area_len, h.heap_ofs, h.heap_len) ||
	    overlap(h.region_tbl_ofs, h.region_tbl_len, h.heap_ofs, h.heap_len))
		return -EINVAL;

	for (uint32_t i = 0; i < h.nr_rings; i++) {
		const struct mrc_shm_ring_desc *d = &h.rings[i];
		uint64_t len = mrc_shm_ring_bytes(d->capacity, d->elem_size);

		if (len == 0 || d->len != len || d->ofs % MRC_SHM_CACHE_LINE != 0 ||
		    !within(d->ofs, d->len, h.ring_area_ofs, h.ring_area_ofs + h.ring_area_len))
			return -EINVAL;
		for (uint32_t j = 0; j < i; j++)
			if (overlap(d->ofs, d->len, h.rings[j].ofs, h.rings[j].len))
				return -EINVAL;
		/* The in-segment geometry must agree with the descriptor: the ring
		 * code masks with r->mask and copies r->elem_size bytes. */
		const struct mrc_shm_ring *r =
			(const struct mrc_shm_ring *)((const uint8_t *)base + d->ofs);
		if (r->capacity != d->capacity || r->mask != d->capacity - 1 ||
		    r->elem_size != d->elem_size)
			return -EINVAL;
	}

	memset(view, 0, sizeof(*view));
	view->base = base;
	view->map_size = map_size;
	view->layout.size = h.size;
	view->layout.nr_rings = h.nr_rings;
	view->layout.nr_regions = h.nr_regions;
	view->layout.ring_area_ofs = h.ring_area_ofs;
	view->layout.ring_area_len = h.ring_area_len;
	view->layout.region_tbl_ofs = h.region_tbl_ofs;
	view->layout.region_tbl_len = h.region_tbl_len;
	view->layout.heap_ofs = h.heap_ofs;
	view->layout.heap_len = h.heap_len;
	memcpy(view->layout.rings, h.rings, sizeof(h.rings[0]) * h.nr_rings);
	return 0;
}

struct mrc_shm_ring *mrc_shm_view_ring(const struct mrc_shm_view *v, uint32_t i)
{
	if (v == NULL || i >= v->layout.nr_rings)
		return NULL;
	return (struct mrc_shm_ring *)(v->base + v->layout.rings[i].ofs);
}

void *mrc_shm_view_heap_ptr(const struct mrc_shm_view *v, uint64_t ofs, uint64_t len)
{
	if (v == NULL ||
	    !within(ofs, len, v->layout.heap_ofs, v->layout.heap_ofs + v->layout.heap_len))
		return NULL;
	return v->base + ofs;
}

/* -------------------------------------------------------- region table -- */

static struct mrc_shm_region *region_at(const struct mrc_shm_view *v, uint32_t idx)
{
	return (struct mrc_shm_region *)(v->base + v->layout.region_tbl_ofs) + idx;
}

int mrc_shm_region_publish(const struct mrc_shm_view *v, uint32_t idx,
			   const struct mrc_shm_region *desc)
{
	if (v == NULL || desc == NULL || idx >= v->layout.nr_regions ||
	    mrc_shm_view_heap_ptr(v, desc->ofs, desc->len) == NULL)
		return -EINVAL;
	struct mrc_shm_region *e = region_at(v, idx);
	if (atomic_load_explicit(&e->state, memory_order_relaxed) != MRC_SHM_REGION_FREE)
		return -EBUSY; /* the daemon is the only writer: relaxed is exact */
	e->ofs = desc->ofs;
	e->len = desc->len;
	e->id = desc->id;
	e->access = desc->access;
	e->lkey = desc->lkey;
	e->rkey = desc->rkey;
	e->rsvd = 0;
	/* R3: publish the fields above to readers. Pairs with A3. */
	atomic_store_explicit(&e->state, MRC_SHM_REGION_VALID, memory_order_release);
	return 0;
}

int mrc_shm_region_clear(const struct mrc_shm_view *v, uint32_t idx)
{
	if (v == NULL || idx >= v->layout.nr_regions)
		return -EINVAL;
	/* Readers have stopped using this entry (dereg_mr protocol); the next
	 * publish re-fills it and R3 orders the new fields. */
	atomic_store_explicit(&region_at(v, idx)->state, MRC_SHM_REGION_FREE,
			      memory_order_relaxed);
	return 0;
}

int mrc_shm_region_lookup(const struct mrc_shm_view *v, uint32_t idx,
			  struct mrc_shm_region *out)
{
	if (v == NULL || out == NULL || idx >= v->layout.nr_regions)
		return -EINVAL;
	const struct mrc_shm_region *e = region_at(v, idx);
	/* A3: observe the fields written before R3. Pairs with R3. */
	uint32_t state = atomic_load_explicit(&e->state, memory_order_acquire);
	if (state != MRC_SHM_REGION_VALID)
		return -ENOENT;
	out->ofs = e->ofs;
	out->len = e->len;
	out->id = e->id;
	out->access = e->access;
	out->lkey = e->lkey;
	out->rkey = e->rkey;
	out->rsvd = 0;
	atomic_store_explicit(&out->state, state, memory_order_relaxed);
	/* Checked on the copy: the reader never trusts the table's offsets. */
	if (mrc_shm_view_heap_ptr(v, out->ofs, out->len) == NULL)
		return -EINVAL;
	return 0;
}
