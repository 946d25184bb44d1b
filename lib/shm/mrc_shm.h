/* mrc_shm.h - the versioned shared-memory ABI between mrcd and libmrc-client:
 * the arena header, the fixed-size ring element types, the SPSC ring, the
 * registered-region table and the attach-time validation. It owns layout and
 * ordering only; it never maps, allocates, blocks or prints. Depends only on
 * libc and <stdatomic.h> (architecture.md §1; docs/shm.md).
 *
 * Arena layout (every position is a byte offset from the arena base; nothing
 * in the segment is a pointer, so it works at any address, in a memfd or a
 * hugepage mapping, and at different addresses in different processes):
 *
 *   0                     +------------------------------------------+
 *                         | struct mrc_shm_hdr                       |
 *                         |  magic, abi_version, hdr_size, size,     |
 *                         |  nr_rings, nr_regions,                   |
 *                         |  ring_area_ofs/len, region_tbl_ofs/len,  |
 *                         |  heap_ofs/len, rings[i] = {ofs, len,     |
 *                         |  capacity, elem_size}                    |
 *   ring_area_ofs  (64)   +------------------------------------------+
 *                         | ring 0: struct mrc_shm_ring (4 lines:    |
 *                         |   geometry | tail | head | sleeping)     |
 *                         |   then capacity * elem_size slot bytes   |
 *   rings[1].ofs   (64)   | ring 1 ...                               |
 *                         | ...                                      |
 *   region_tbl_ofs (64)   +------------------------------------------+
 *                         | struct mrc_shm_region[nr_regions]        |
 *                         |   (daemon is the only writer)            |
 *   heap_ofs     (4096)   +------------------------------------------+
 *                         | data heap: application buffers, named    |
 *                         | by arena offset in SGEs and regions      |
 *   size                  +------------------------------------------+
 *
 * (n) is the alignment of that offset. Any change to this layout or to a
 * struct below bumps MRC_SHM_ABI_VERSION; an attach that sees another magic
 * or version fails with -EPROTO, and one that sees inconsistent offsets or
 * lengths fails with -EINVAL.
 *
 * Memory-ordering pairs (every acquire load and release store is labelled
 * with its partner in shm.c):
 *   R1/A1  producer publishes filled slots by a release store of tail; the
 *          consumer's acquire load of tail sees the slot contents.
 *   R2/A2  consumer frees slots by a release store of head; the producer's
 *          acquire load of head orders its slot overwrites after the reads.
 *   F1/F2  the wake flag (Dekker pattern): the consumer stores sleeping=1,
 *          F1 (seq_cst fence), re-reads tail; the producer stores tail (R1),
 *          F2 (seq_cst fence), reads sleeping. At least one side sees the
 *          other, so a wake-up is never lost.
 *   R3/A3  the daemon fills a region entry, then release-stores its state;
 *          a reader acquire-loads state before reading the fields.
 */
#ifndef MRC_SHM_H
#define MRC_SHM_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MRC_SHM_MAGIC UINT64_C(0x31304d485343524d) /* "MRCSHM01" in little-endian memory */
#define MRC_SHM_ABI_VERSION 2u /* 2: completion entries for QP errors (MRC_SHM_WC_QP_ERROR), two
				  * more statuses, mrc_shm_cqe.cause (docs/shm.md) */

#define MRC_SHM_CACHE_LINE 64u
#define MRC_SHM_HEAP_ALIGN 4096u
#define MRC_SHM_MAX_RINGS 64u          /**< ring descriptors in the header */
#define MRC_SHM_MAX_REGIONS 4096u      /**< region-table entries, at most */
#define MRC_SHM_RING_MAX_CAPACITY (1u << 20) /**< slots, power of two */
#define MRC_SHM_RING_MAX_ELEM 1024u    /**< bytes; multiple of 4 */
#define MRC_SHM_MAX_SGE 8u

/* ------------------------------------------------------------------------ */
/* Ring element types (fixed size; each ring carries one type).             */

enum mrc_shm_wr_opcode {
	MRC_SHM_OP_WRITE = 0,     /**< RDMA Write */
	MRC_SHM_OP_WRITE_IMM = 1, /**< RDMA Write with immediate */
};

enum mrc_shm_wr_flags {
	MRC_SHM_WR_SIGNALED = 1u << 0, /**< post a completion when done */
};

/** One scatter/gather element: bytes in the arena's data heap. */
struct mrc_shm_sge {
	uint64_t ofs;  /**< arena offset of the first byte (inside the heap) */
	uint32_t len;  /**< bytes */
	uint32_t lkey; /**< local key of the region that covers the bytes */
};
_Static_assert(sizeof(struct mrc_shm_sge) == 16, "ABI: mrc_shm_sge");

/** Work request: client -> daemon, one slot in a QP's submission ring. */
struct mrc_shm_wr {
	uint64_t wr_id;       /**< opaque to the daemon; echoed in the completion */
	uint64_t remote_addr; /**< responder virtual address (bytes) */
	uint32_t qp;          /**< QP handle the daemon returned at create time */
	uint32_t rkey;        /**< responder region key */
	uint32_t imm;         /**< immediate, host order; WRITE_IMM only */
	uint8_t opcode;       /**< enum mrc_shm_wr_opcode */
	uint8_t flags;        /**< enum mrc_shm_wr_flags */
	uint8_t num_sge;      /**< valid entries in sge[], 0..MRC_SHM_MAX_SGE */
	uint8_t rsvd;         /**< zero */
	struct mrc_shm_sge sge[MRC_SHM_MAX_SGE];
};
_Static_assert(sizeof(struct mrc_shm_wr) == 160, "ABI: mrc_shm_wr");
_Static_assert(offsetof(struct mrc_shm_wr, sge) == 32, "ABI: mrc_shm_wr.sge");

enum mrc_shm_wc_opcode {
	MRC_SHM_WC_WRITE = 0,         /**< a signalled WRITE / WRITE_IMM finished */
	MRC_SHM_WC_RECV_WRITE_IMM = 1, /**< a WRITE_IMM arrived; consumed a recv */
	MRC_SHM_WC_QP_ERROR = 2,      /**< not a work request: the QP entered ERROR
				       *   (status, cause; wr_id 0), after the
				       *   completions its work was flushed with */
};

enum mrc_shm_wc_status {
	MRC_SHM_WC_SUCCESS = 0,
	MRC_SHM_WC_LOC_PROT_ERR = 1,   /**< bad lkey or SGE outside its region */
	MRC_SHM_WC_REM_ACCESS_ERR = 2, /**< responder rejected rkey or bounds */
	MRC_SHM_WC_RETRY_EXC_ERR = 3,  /**< retransmit budget exhausted */
	MRC_SHM_WC_FLUSH_ERR = 4,      /**< QP moved to error; WR not executed */
	MRC_SHM_WC_GENERAL_ERR = 5,
	MRC_SHM_WC_REM_INV_REQ_ERR = 6, /**< the responder refused the request as invalid
					 *   (e.g. a WRITE_IMM it had no recv for) */
	MRC_SHM_WC_REM_OP_ERR = 7,      /**< the responder reported an operational error */
};

/** Why a QP entered ERROR (a QP_ERROR entry's cause): lib/core's
 *  MRCP_QP_ERRS, in its order (docs/protocol.md D70). */
enum mrc_shm_qp_cause {
	MRC_SHM_QP_CAUSE_NONE = 0,
	MRC_SHM_QP_CAUSE_RETRY_EXCEEDED = 1, /**< no progress from the peer */
	MRC_SHM_QP_CAUSE_REMOTE_INVALID = 2, /**< the peer NAKed a request as invalid */
	MRC_SHM_QP_CAUSE_REMOTE_ACCESS = 3,  /**< the peer NAKed rkey, bounds or permission */
	MRC_SHM_QP_CAUSE_REMOTE_OP = 4,      /**< the peer reported an operational error */
	MRC_SHM_QP_CAUSE_NO_RECV = 5,        /**< a WRITE_IMM arrived with no recv posted */
	MRC_SHM_QP_CAUSE_WIMM_OVERFLOW = 6,  /**< more WRITE_IMMs waited than max_wimm */
	MRC_SHM_QP_CAUSE_BAD_REQUEST = 7,    /**< the peer broke a message rule */
	MRC_SHM_QP_CAUSE_BAD_ACCESS = 8,     /**< a Write from the peer failed the access check */
};

/** Completion: daemon -> client, one slot in a completion ring. A QP_ERROR
 *  entry completes no work request: wr_id is 0, status the one the QP's
 *  work failed with, cause why, and byte_len, imm and msn describe the
 *  message concerned (cause NO_RECV, WIMM_OVERFLOW; zero otherwise). */
struct mrc_shm_cqe {
	uint64_t wr_id;    /**< from the WR or the consumed receive */
	uint32_t qp;       /**< QP handle */
	uint32_t byte_len; /**< bytes written (RECV_WRITE_IMM: bytes placed) */
	uint32_t imm;      /**< immediate, host order; RECV_WRITE_IMM, QP_ERROR */
	uint32_t msn;      /**< message sequence number of the message */
	uint8_t opcode;    /**< enum mrc_shm_wc_opcode */
	uint8_t status;    /**< enum mrc_shm_wc_status */
	uint16_t cause;    /**< QP_ERROR: enum mrc_shm_qp_cause; else zero */
	uint32_t rsvd1;    /**< zero */
};
_Static_assert(sizeof(struct mrc_shm_cqe) == 32, "ABI: mrc_shm_cqe");
_Static_assert(offsetof(struct mrc_shm_cqe, msn) == 20, "ABI: mrc_shm_cqe.msn");
_Static_assert(offsetof(struct mrc_shm_cqe, opcode) == 24, "ABI: mrc_shm_cqe.opcode");
_Static_assert(offsetof(struct mrc_shm_cqe, cause) == 26, "ABI: mrc_shm_cqe.cause");

/** Receive post: client -> daemon; a WRITE_IMM consumes one. */
struct mrc_shm_recv {
	uint64_t wr_id; /**< echoed in the RECV_WRITE_IMM completion */
	uint32_t qp;    /**< QP handle */
	uint32_t rsvd;  /**< zero */
};
_Static_assert(sizeof(struct mrc_shm_recv) == 16, "ABI: mrc_shm_recv");

/* ------------------------------------------------------------------------ */
/* SPSC ring.                                                                */

/**
 * Single-producer single-consumer ring of fixed-size elements, living in the
 * arena at a 64-byte aligned offset; capacity * elem_size slot bytes follow
 * the struct directly. head and tail are free-running 32-bit counters
 * (slot = index & mask), so count = tail - head is correct across 2^32 wrap;
 * capacity is a power of two <= MRC_SHM_RING_MAX_CAPACITY.
 *
 * Each cache line has one writer: geometry (ring_init only), tail (the
 * producer), head (the consumer), sleeping (the consumer sets it, the
 * producer may clear it).
 */
struct mrc_shm_ring {
	/* line 0: geometry, written once by mrc_shm_ring_init, read-only after */
	alignas(MRC_SHM_CACHE_LINE) uint32_t capacity; /**< slots, power of two */
	uint32_t mask;      /**< capacity - 1 */
	uint32_t elem_size; /**< bytes per slot, multiple of 4 */
	uint32_t rsvd0;
	/* line 1: written only by the producer */
	alignas(MRC_SHM_CACHE_LINE) _Atomic uint32_t tail; /**< next slot to fill */
	/* line 2: written only by the consumer */
	alignas(MRC_SHM_CACHE_LINE) _Atomic uint32_t head; /**< next slot to drain */
	/* line 3: the wake flag (see mrc_shm_ring_prepare_sleep) */
	alignas(MRC_SHM_CACHE_LINE) _Atomic uint32_t sleeping; /**< 1: consumer may block */
};
_Static_assert(sizeof(struct mrc_shm_ring) == 4 * MRC_SHM_CACHE_LINE, "ABI: mrc_shm_ring");
_Static_assert(offsetof(struct mrc_shm_ring, tail) == 1 * MRC_SHM_CACHE_LINE, "ABI: ring.tail");
_Static_assert(offsetof(struct mrc_shm_ring, head) == 2 * MRC_SHM_CACHE_LINE, "ABI: ring.head");
_Static_assert(offsetof(struct mrc_shm_ring, sleeping) == 3 * MRC_SHM_CACHE_LINE,
	       "ABI: ring.sleeping");
_Static_assert(sizeof(_Atomic uint32_t) == 4, "ABI: lock-free 32-bit atomics");

/**
 * Bytes a ring with these parameters occupies in the arena (header + slots,
 * rounded up to a cache line).
 * @return the size, or 0 if capacity is not a power of two in
 *         [1, MRC_SHM_RING_MAX_CAPACITY] or elem_size is not a multiple of 4
 *         in [4, MRC_SHM_RING_MAX_ELEM].
 */
uint64_t mrc_shm_ring_bytes(uint32_t capacity, uint32_t elem_size);

/**
 * Initialise an empty ring at @r (64-byte aligned, mrc_shm_ring_bytes() bytes).
 * Call before any producer or consumer can see the ring.
 * @return 0, or -EINVAL for a bad @r alignment, @capacity or @elem_size.
 */
int mrc_shm_ring_init(struct mrc_shm_ring *r, uint32_t capacity, uint32_t elem_size);

/**
 * Producer: copy up to @n elements (each r->elem_size bytes, packed) from
 * @objs into the ring. @return the number enqueued, 0..n.
 */
unsigned mrc_shm_ring_enqueue_burst(struct mrc_shm_ring *r, const void *objs, unsigned n);
/** Producer: enqueue all @n elements or none. @return n or 0. */
unsigned mrc_shm_ring_enqueue_bulk(struct mrc_shm_ring *r, const void *objs, unsigned n);
/**
 * Consumer: copy up to @n elements out of the ring into @objs.
 * @return the number dequeued, 0..n.
 */
unsigned mrc_shm_ring_dequeue_burst(struct mrc_shm_ring *r, void *objs, unsigned n);
/** Consumer: dequeue exactly @n elements or none. @return n or 0. */
unsigned mrc_shm_ring_dequeue_bulk(struct mrc_shm_ring *r, void *objs, unsigned n);

/**
 * Elements in the ring, a snapshot (exact when called by the consumer with
 * no producer running, otherwise a lower bound for the consumer and an
 * upper bound for the producer). Never more than capacity.
 */
unsigned mrc_shm_ring_count(const struct mrc_shm_ring *r);
/** Free slots: capacity - count, the same kind of snapshot. */
unsigned mrc_shm_ring_free(const struct mrc_shm_ring *r);

/**
 * Wake-flag protocol (no doorbell or eventfd in the segment; the caller
 * supplies the actual block/wake mechanism, e.g. a futex on &r->sleeping or
 * an eventfd passed over the control socket):
 *
 *   consumer                              producer
 *   if (mrc_shm_ring_prepare_sleep(r))    mrc_shm_ring_enqueue_*(r, ...);
 *       block until woken or timeout;     if (mrc_shm_ring_need_wake(r))
 *   mrc_shm_ring_end_sleep(r);                wake the consumer;
 *   drain the ring;
 *
 * prepare_sleep stores sleeping=1, issues F1 (seq_cst fence) and re-checks
 * the ring; need_wake issues F2 (seq_cst fence) after the producer's R1 and
 * exchanges sleeping to 0. Either the consumer sees the new element (and
 * does not block) or the producer sees sleeping=1 (and wakes it).
 *
 * @return prepare_sleep: true if the ring is still empty and the caller may
 *         block; false if elements arrived (the flag is cleared again).
 */
bool mrc_shm_ring_prepare_sleep(struct mrc_shm_ring *r);
/** Consumer: clear the flag after waking (or on timeout). */
void mrc_shm_ring_end_sleep(struct mrc_shm_ring *r);
/** Producer, after enqueueing: @return true if the consumer must be woken. */
bool mrc_shm_ring_need_wake(struct mrc_shm_ring *r);

/** Slot @i's bytes (i is masked). For the ring's own code and tests. */
static inline void *mrc_shm_ring_slot(struct mrc_shm_ring *r, uint32_t i)
{
	return (uint8_t *)(r + 1) + (size_t)(i & r->mask) * r->elem_size;
}

/* ------------------------------------------------------------------------ */
/* Registered-region table.                                                  */

enum mrc_shm_access {
	MRC_SHM_ACCESS_LOCAL_WRITE = 1u << 0,
	MRC_SHM_ACCESS_REMOTE_WRITE = 1u << 1,
	MRC_SHM_ACCESS_REMOTE_READ = 1u << 2,
};

enum mrc_shm_region_state {
	MRC_SHM_REGION_FREE = 0,
	MRC_SHM_REGION_VALID = 1,
};

/**
 * One registered memory region. The daemon is the ONLY writer of the table
 * (it fills an entry in response to a reg_mr request on the control socket
 * and clears it on dereg_mr, after the client has stopped using the keys);
 * clients only read. state is published last (R3) and read first (A3).
 */
struct mrc_shm_region {
	uint64_t ofs;    /**< arena offset of the first byte (inside the heap) */
	uint64_t len;    /**< bytes */
	_Atomic uint32_t state; /**< enum mrc_shm_region_state */
	uint32_t id;     /**< region id, the table index the daemon chose */
	uint32_t access; /**< enum mrc_shm_access bits */
	uint32_t lkey;   /**< local key */
	uint32_t rkey;   /**< remote key */
	uint32_t rsvd;   /**< zero */
};
_Static_assert(sizeof(struct mrc_shm_region) == 40, "ABI: mrc_shm_region");

/* ------------------------------------------------------------------------ */
/* Arena header, layout, init and attach.                                    */

/** Where one ring lives; all of it is checked at attach. */
struct mrc_shm_ring_desc {
	uint64_t ofs;       /**< arena offset of struct mrc_shm_ring, 64-aligned */
	uint64_t len;       /**< bytes, == mrc_shm_ring_bytes(capacity, elem_size) */
	uint32_t capacity;  /**< slots */
	uint32_t elem_size; /**< bytes */
};
_Static_assert(sizeof(struct mrc_shm_ring_desc) == 24, "ABI: mrc_shm_ring_desc");

/** The first bytes of every arena. Written once by mrc_shm_arena_init. */
struct mrc_shm_hdr {
	uint64_t magic;       /**< MRC_SHM_MAGIC */
	uint32_t abi_version; /**< MRC_SHM_ABI_VERSION */
	uint32_t hdr_size;    /**< sizeof(struct mrc_shm_hdr) */
	uint64_t size;        /**< bytes of the whole arena */
	uint32_t nr_rings;    /**< valid entries in rings[] */
	uint32_t nr_regions;  /**< entries in the region table */
	uint64_t ring_area_ofs, ring_area_len;   /**< bytes */
	uint64_t region_tbl_ofs, region_tbl_len; /**< bytes */
	uint64_t heap_ofs, heap_len;             /**< bytes */
	struct mrc_shm_ring_desc rings[MRC_SHM_MAX_RINGS];
};
_Static_assert(offsetof(struct mrc_shm_hdr, rings) == 80, "ABI: mrc_shm_hdr.rings");
_Static_assert(sizeof(struct mrc_shm_hdr) == 80 + 24 * MRC_SHM_MAX_RINGS, "ABI: mrc_shm_hdr");

/** What the arena should hold (an input; never stored in the segment). */
struct mrc_shm_params {
	uint32_t nr_rings;   /**< 0..MRC_SHM_MAX_RINGS */
	uint32_t nr_regions; /**< 0..MRC_SHM_MAX_REGIONS */
	uint64_t heap_size;  /**< bytes; rounded up to MRC_SHM_HEAP_ALIGN */
	struct {
		uint32_t capacity;  /**< slots, power of two */
		uint32_t elem_size; /**< bytes, multiple of 4 */
	} rings[MRC_SHM_MAX_RINGS];
};

/** Offsets computed from params (process-local). */
struct mrc_shm_layout {
	uint64_t size; /**< bytes the arena needs */
	uint64_t ring_area_ofs, ring_area_len;
	uint64_t region_tbl_ofs, region_tbl_len;
	uint64_t heap_ofs, heap_len;
	uint32_t nr_rings, nr_regions;
	struct mrc_shm_ring_desc rings[MRC_SHM_MAX_RINGS];
};

/**
 * A validated, process-local view of an attached arena. Everything in it was
 * checked by attach and copied out of the segment, so a peer rewriting the
 * header later cannot move what this process touches.
 */
struct mrc_shm_view {
	uint8_t *base;                /**< this process's mapping */
	uint64_t map_size;            /**< bytes mapped */
	struct mrc_shm_layout layout; /**< validated copy of the header */
};

/**
 * Compute the layout for @p.
 * @return 0, or -EINVAL if a count or ring geometry is out of range or the
 *         total overflows.
 */
int mrc_shm_arena_layout(const struct mrc_shm_params *p, struct mrc_shm_layout *out);

/**
 * Lay out a new arena at @base (@size bytes, 64-byte aligned; typically a
 * fresh memfd or hugepage mapping): header, empty rings, free region table.
 * The heap is not touched. Daemon side, before the fd is handed out.
 * @return 0, -EINVAL for bad @p or misaligned @base, -ENOSPC if @size is
 *         smaller than the layout needs.
 */
int mrc_shm_arena_init(void *base, uint64_t size, const struct mrc_shm_params *p);

/**
 * Validate the arena at @base (@map_size bytes mapped) and fill @view.
 * Checks magic and version, then the header size, the arena size against
 * the mapping, and every offset and length: in bounds, aligned, no overlap,
 * ring geometry consistent with its descriptor and its in-segment header.
 * @return 0; -EPROTO for a wrong magic or abi_version; -EINVAL if the
 *         mapping is too small to hold a header, the arena is larger than
 *         the mapping, or any offset/length is inconsistent.
 */
int mrc_shm_arena_attach(void *base, uint64_t map_size, struct mrc_shm_view *view);

/** Ring @i of an attached arena, or NULL if i >= nr_rings. */
struct mrc_shm_ring *mrc_shm_view_ring(const struct mrc_shm_view *v, uint32_t i);

/**
 * A process-local handle on ring @i whose geometry (capacity, mask, element
 * size) is the copy validated at attach, not the ring header in the shared
 * segment: a peer that rewrites that header afterwards cannot steer this
 * side's copies out of bounds. The side that must not trust its peer (the
 * daemon, toward clients) uses these for every ring operation.
 */
struct mrc_shm_rh {
	struct mrc_shm_ring *r;
	uint32_t capacity, mask, elem_size;
};
/** @return 0, -EINVAL for a bad view or index. */
int mrc_shm_view_ring_handle(const struct mrc_shm_view *v, uint32_t i, struct mrc_shm_rh *h);
/** As the mrc_shm_ring_* calls, with the handle's private geometry. */
unsigned mrc_shm_rh_enqueue_burst(const struct mrc_shm_rh *h, const void *objs, unsigned n);
unsigned mrc_shm_rh_enqueue_bulk(const struct mrc_shm_rh *h, const void *objs, unsigned n);
unsigned mrc_shm_rh_dequeue_burst(const struct mrc_shm_rh *h, void *objs, unsigned n);
unsigned mrc_shm_rh_dequeue_bulk(const struct mrc_shm_rh *h, void *objs, unsigned n);

/**
 * Translate an arena offset range to a pointer in this mapping.
 * @return the pointer, or NULL unless [ofs, ofs+len) lies inside the heap.
 */
void *mrc_shm_view_heap_ptr(const struct mrc_shm_view *v, uint64_t ofs, uint64_t len);

/**
 * Daemon: fill entry @idx and publish it (R3).
 * @return 0, -EINVAL if idx >= nr_regions or [ofs, ofs+len) is not inside
 *         the heap, -EBUSY if the entry is valid.
 */
int mrc_shm_region_publish(const struct mrc_shm_view *v, uint32_t idx,
			   const struct mrc_shm_region *desc);
/** Daemon: mark entry @idx free. @return 0, -EINVAL if idx is out of range. */
int mrc_shm_region_clear(const struct mrc_shm_view *v, uint32_t idx);
/**
 * Reader: copy entry @idx into @out (A3) and check it against the heap.
 * @return 0, -ENOENT if the entry is free, -EINVAL if idx is out of range or
 *         the entry points outside the heap.
 */
int mrc_shm_region_lookup(const struct mrc_shm_view *v, uint32_t idx,
			  struct mrc_shm_region *out);

#endif
