/* test_shm.c - unit tests for lib/shm: ring geometry, full/empty, burst vs
 * bulk, wrap of the free-running indices across 2^32, element sizes, the
 * wake flag, a two-thread SPSC stress run, arena layout, a memfd mapped twice
 * at different addresses, the region table, and attach's rejections. */
#define _GNU_SOURCE
#include "mrc_shm.h"
#include "mrcp_test.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static struct mrc_shm_ring *ring_new(uint32_t cap, uint32_t es)
{
	uint64_t bytes = mrc_shm_ring_bytes(cap, es);
	ASSERT_GT(bytes, 0);
	void *p = aligned_alloc(MRC_SHM_CACHE_LINE, bytes);
	ASSERT_TRUE(p != NULL);
	memset(p, 0xa5, bytes);
	ASSERT_EQ(0, mrc_shm_ring_init(p, cap, es));
	return p;
}

/* Place both free-running indices at @start (an empty ring). */
static void ring_set_index(struct mrc_shm_ring *r, uint32_t start)
{
	atomic_store_explicit(&r->head, start, memory_order_relaxed);
	atomic_store_explicit(&r->tail, start, memory_order_relaxed);
}

TEST(ring, geometry__bytes_and_init_reject_bad_values)
{
	ASSERT_EQ(256 + 64, mrc_shm_ring_bytes(16, 4));
	ASSERT_EQ(256 + 8 * 160, mrc_shm_ring_bytes(8, 160));
	ASSERT_EQ(256 + 64, mrc_shm_ring_bytes(1, 4)); /* rounded to a line */
	ASSERT_EQ(0, mrc_shm_ring_bytes(0, 4));
	ASSERT_EQ(0, mrc_shm_ring_bytes(12, 4));
	ASSERT_EQ(0, mrc_shm_ring_bytes(MRC_SHM_RING_MAX_CAPACITY * 2, 4));
	ASSERT_EQ(0, mrc_shm_ring_bytes(16, 0));
	ASSERT_EQ(0, mrc_shm_ring_bytes(16, 6));
	ASSERT_EQ(0, mrc_shm_ring_bytes(16, MRC_SHM_RING_MAX_ELEM + 4));

	struct mrc_shm_ring *r = ring_new(16, 4);
	ASSERT_EQ(-EINVAL, mrc_shm_ring_init(r, 12, 4));
	ASSERT_EQ(-EINVAL, mrc_shm_ring_init(r, 16, 3));
	ASSERT_EQ(-EINVAL, mrc_shm_ring_init((struct mrc_shm_ring *)((uint8_t *)r + 4), 16, 4));
	ASSERT_EQ(-EINVAL, mrc_shm_ring_init(NULL, 16, 4));
	ASSERT_EQ(16, r->capacity);
	ASSERT_EQ(15, r->mask);
	free(r);
}

TEST(ring, full_and_empty)
{
	struct mrc_shm_ring *r = ring_new(8, 4);
	uint32_t in[9], out[9];

	for (uint32_t i = 0; i < 9; i++)
		in[i] = 100 + i;
	ASSERT_EQ(0, mrc_shm_ring_count(r));
	ASSERT_EQ(8, mrc_shm_ring_free(r));
	ASSERT_EQ(0, mrc_shm_ring_dequeue_burst(r, out, 1));
	ASSERT_EQ(0, mrc_shm_ring_dequeue_bulk(r, out, 1));

	ASSERT_EQ(8, mrc_shm_ring_enqueue_burst(r, in, 9)); /* 9th does not fit */
	ASSERT_EQ(8, mrc_shm_ring_count(r));
	ASSERT_EQ(0, mrc_shm_ring_free(r));
	ASSERT_EQ(0, mrc_shm_ring_enqueue_burst(r, in, 1));
	ASSERT_EQ(0, mrc_shm_ring_enqueue_bulk(r, in, 1));

	ASSERT_EQ(8, mrc_shm_ring_dequeue_burst(r, out, 9));
	ASSERT_MEMEQ(in, out, 8 * sizeof(uint32_t));
	ASSERT_EQ(0, mrc_shm_ring_count(r));
	ASSERT_EQ(0, mrc_shm_ring_enqueue_burst(r, in, 0));
	ASSERT_EQ(0, mrc_shm_ring_enqueue_bulk(r, in, 0));
	free(r);
}

TEST(ring, burst_vs_bulk)
{
	struct mrc_shm_ring *r = ring_new(8, 4);
	uint32_t in[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[8] = {0};

	ASSERT_EQ(5, mrc_shm_ring_enqueue_bulk(r, in, 5));
	/* 3 free: bulk of 4 enqueues nothing, burst of 4 enqueues 3. */
	ASSERT_EQ(0, mrc_shm_ring_enqueue_bulk(r, in + 5, 4));
	ASSERT_EQ(5, mrc_shm_ring_count(r));
	ASSERT_EQ(3, mrc_shm_ring_enqueue_burst(r, in + 5, 4));
	ASSERT_EQ(8, mrc_shm_ring_count(r));

	/* 8 queued: bulk of 9 dequeues nothing and leaves @out alone. */
	ASSERT_EQ(0, mrc_shm_ring_dequeue_bulk(r, out, 9));
	ASSERT_EQ(0, out[0]);
	ASSERT_EQ(8, mrc_shm_ring_count(r));
	ASSERT_EQ(6, mrc_shm_ring_dequeue_bulk(r, out, 6));
	ASSERT_MEMEQ(in, out, 6 * sizeof(uint32_t));
	ASSERT_EQ(2, mrc_shm_ring_dequeue_burst(r, out, 6));
	ASSERT_EQ(7, out[0]);
	ASSERT_EQ(8, out[1]);
	ASSERT_EQ(0, mrc_shm_ring_count(r));
	free(r);
}

TEST(ring, indices_wrap_across_2_32)
{
	struct mrc_shm_ring *r = ring_new(16, 4);
	uint32_t next_in = 0, next_out = 0;
	uint32_t buf[16];

	ring_set_index(r, UINT32_MAX - 20);
	/* Odd-sized bursts so the slot array and the 32-bit index both wrap
	 * with the ring partly full. */
	for (int round = 0; round < 40; round++) {
		unsigned want = 1 + (unsigned)round % 7;
		for (unsigned i = 0; i < want; i++)
			buf[i] = next_in + i;
		unsigned n = mrc_shm_ring_enqueue_burst(r, buf, want);
		next_in += n;
		ASSERT_EQ(next_in - next_out, mrc_shm_ring_count(r));
		ASSERT_EQ(16 - (next_in - next_out), mrc_shm_ring_free(r));
		unsigned m = mrc_shm_ring_dequeue_burst(r, buf, 1 + (unsigned)round % 5);
		for (unsigned i = 0; i < m; i++)
			ASSERT_EQ(next_out + i, buf[i]);
		next_out += m;
		ASSERT_EQ(next_in - next_out, mrc_shm_ring_count(r));
	}
	/* The indices crossed zero. */
	ASSERT_LT(atomic_load(&r->tail), 1000);
	ASSERT_LT(atomic_load(&r->head), 1000);

	/* Full ring straddling the wrap: tail < head numerically. */
	ring_set_index(r, UINT32_MAX - 3);
	for (uint32_t i = 0; i < 16; i++)
		buf[i] = i;
	ASSERT_EQ(16, mrc_shm_ring_enqueue_bulk(r, buf, 16));
	ASSERT_LT(atomic_load(&r->tail), atomic_load(&r->head));
	ASSERT_EQ(16, mrc_shm_ring_count(r));
	ASSERT_EQ(0, mrc_shm_ring_free(r));
	ASSERT_EQ(0, mrc_shm_ring_enqueue_burst(r, buf, 1));
	uint32_t out[16];
	ASSERT_EQ(16, mrc_shm_ring_dequeue_bulk(r, out, 16));
	ASSERT_MEMEQ(buf, out, sizeof(out));
	ASSERT_EQ(0, mrc_shm_ring_count(r));
	free(r);
}

TEST(ring, corrupt_peer_index_is_clamped)
{
	struct mrc_shm_ring *r = ring_new(8, 4);
	uint32_t buf[64];

	/* A hostile producer claims 1000 entries: count and dequeue stay
	 * within capacity (slot accesses stay in bounds). */
	atomic_store(&r->tail, 1000);
	ASSERT_EQ(8, mrc_shm_ring_count(r));
	ASSERT_EQ(0, mrc_shm_ring_free(r));
	ASSERT_EQ(0, mrc_shm_ring_enqueue_burst(r, buf, 1));
	ASSERT_EQ(8, mrc_shm_ring_dequeue_burst(r, buf, 64));
	free(r);
}

static void roundtrip_elem(uint32_t es)
{
	struct mrc_shm_ring *r = ring_new(8, es);
	uint8_t *in = malloc((size_t)es * 5), *out = malloc((size_t)es * 5);
	ASSERT_TRUE(in != NULL && out != NULL);

	ring_set_index(r, UINT32_MAX - 1);
	for (int round = 0; round < 6; round++) { /* 30 elements: wraps slots */
		for (size_t i = 0; i < (size_t)es * 5; i++)
			in[i] = (uint8_t)(i * 7 + (size_t)round * 13 + es);
		ASSERT_EQ(5, mrc_shm_ring_enqueue_bulk(r, in, 5));
		memset(out, 0, (size_t)es * 5);
		ASSERT_EQ(5, mrc_shm_ring_dequeue_bulk(r, out, 5));
		ASSERT_MEMEQ(in, out, (size_t)es * 5);
	}
	/* Nothing was written past the last slot. */
	uint8_t *slots_end = (uint8_t *)(r + 1) + (size_t)8 * es;
	uint64_t bytes = mrc_shm_ring_bytes(8, es);
	for (uint8_t *p = slots_end; p < (uint8_t *)r + bytes; p++)
		ASSERT_EQ(0xa5, *p);
	free(in);
	free(out);
	free(r);
}

TEST(ring, element_sizes)
{
	roundtrip_elem(4);
	roundtrip_elem(sizeof(struct mrc_shm_recv));
	roundtrip_elem(sizeof(struct mrc_shm_cqe));
	roundtrip_elem(sizeof(struct mrc_shm_wr));
	roundtrip_elem(36);
	roundtrip_elem(MRC_SHM_RING_MAX_ELEM);
}

TEST(ring, typed_wr_and_cqe_roundtrip)
{
	struct mrc_shm_ring *sq = ring_new(4, sizeof(struct mrc_shm_wr));
	struct mrc_shm_wr wr = {.wr_id = 0x1122334455667788ull, .remote_addr = 0x7000,
				.qp = 3, .rkey = 0xbeef, .imm = 42,
				.opcode = MRC_SHM_OP_WRITE_IMM, .flags = MRC_SHM_WR_SIGNALED,
				.num_sge = 2};
	wr.sge[0] = (struct mrc_shm_sge){.ofs = 8192, .len = 100, .lkey = 9};
	wr.sge[1] = (struct mrc_shm_sge){.ofs = 9000, .len = 28, .lkey = 9};
	struct mrc_shm_wr got;
	ASSERT_EQ(1, mrc_shm_ring_enqueue_bulk(sq, &wr, 1));
	ASSERT_EQ(1, mrc_shm_ring_dequeue_bulk(sq, &got, 1));
	ASSERT_MEMEQ(&wr, &got, sizeof(wr));
	free(sq);

	struct mrc_shm_ring *cq = ring_new(4, sizeof(struct mrc_shm_cqe));
	struct mrc_shm_cqe c = {.wr_id = 5, .qp = 3, .byte_len = 128, .imm = 42, .msn = 17,
				.opcode = MRC_SHM_WC_RECV_WRITE_IMM,
				.status = MRC_SHM_WC_SUCCESS}, cg;
	ASSERT_EQ(1, mrc_shm_ring_enqueue_burst(cq, &c, 1));
	ASSERT_EQ(1, mrc_shm_ring_dequeue_burst(cq, &cg, 1));
	ASSERT_MEMEQ(&c, &cg, sizeof(c));
	free(cq);
}

TEST(ring, wake_flag_protocol)
{
	struct mrc_shm_ring *r = ring_new(4, 4);
	uint32_t v = 7;

	ASSERT_FALSE(mrc_shm_ring_need_wake(r)); /* nobody sleeping */
	ASSERT_TRUE(mrc_shm_ring_prepare_sleep(r)); /* empty: may block */
	ASSERT_EQ(1, atomic_load(&r->sleeping));
	ASSERT_EQ(1, mrc_shm_ring_enqueue_burst(r, &v, 1));
	ASSERT_TRUE(mrc_shm_ring_need_wake(r)); /* must wake, once */
	ASSERT_FALSE(mrc_shm_ring_need_wake(r));
	mrc_shm_ring_end_sleep(r);
	ASSERT_EQ(0, atomic_load(&r->sleeping));
	/* Non-empty: prepare_sleep refuses and leaves the flag clear. */
	ASSERT_FALSE(mrc_shm_ring_prepare_sleep(r));
	ASSERT_EQ(0, atomic_load(&r->sleeping));
	free(r);
}

/* ---------------------------------------------------- two-thread stress -- */

struct stress_elem {
	uint64_t seq;
	uint64_t check; /* ~seq * golden: catches torn or stale slots */
};

struct stress {
	struct mrc_shm_ring *r;
	uint64_t deadline_ns;
	_Atomic uint64_t produced; /* final count, published with done */
	_Atomic int done;
	uint64_t consumed;
	int errors;
	uint64_t wakes;
};

#define GOLDEN UINT64_C(0x9e3779b97f4a7c15)
#define STRESS_MAX UINT64_C(4000000)

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *producer(void *arg)
{
	struct stress *s = arg;
	struct stress_elem batch[32];
	uint64_t seq = 0;
	unsigned k = 1;

	while (seq < STRESS_MAX && ((seq & 1023) != 0 || now_ns() < s->deadline_ns)) {
		unsigned want = 1 + (k++ % 32);
		for (unsigned i = 0; i < want; i++)
			batch[i] = (struct stress_elem){seq + i, ~((seq + i) * GOLDEN)};
		unsigned n = (k & 1) ? mrc_shm_ring_enqueue_burst(s->r, batch, want)
				     : mrc_shm_ring_enqueue_bulk(s->r, batch, want);
		seq += n;
		if (n == 0)
			sched_yield();
		else if (mrc_shm_ring_need_wake(s->r))
			s->wakes++;
	}
	atomic_store_explicit(&s->produced, seq, memory_order_relaxed);
	atomic_store_explicit(&s->done, 1, memory_order_release);
	return NULL;
}

static void *consumer(void *arg)
{
	struct stress *s = arg;
	struct stress_elem batch[32];
	uint64_t expect = 0;
	unsigned k = 0;

	for (;;) {
		unsigned want = 1 + (k++ % 29);
		unsigned n = (k & 1) ? mrc_shm_ring_dequeue_burst(s->r, batch, want)
				     : mrc_shm_ring_dequeue_bulk(s->r, batch, want);
		for (unsigned i = 0; i < n; i++, expect++)
			if (batch[i].seq != expect || batch[i].check != ~(expect * GOLDEN))
				s->errors++;
		if (n == 0) {
			if (atomic_load_explicit(&s->done, memory_order_acquire) &&
			    mrc_shm_ring_count(s->r) == 0)
				break;
			/* Exercise the flag protocol without a real block. */
			if (mrc_shm_ring_prepare_sleep(s->r)) {
				sched_yield();
				mrc_shm_ring_end_sleep(s->r);
			}
		}
	}
	s->consumed = expect;
	return NULL;
}

TEST(ring, spsc_two_threads_no_loss_no_reorder)
{
	struct stress s = {0};
	pthread_t p, c;

	s.r = ring_new(256, sizeof(struct stress_elem));
	ring_set_index(s.r, UINT32_MAX - 100000); /* cross 2^32 mid-run */
	s.deadline_ns = now_ns() + 500000000u;    /* bounded: ~0.5 s */
	ASSERT_EQ(0, pthread_create(&c, NULL, consumer, &s));
	ASSERT_EQ(0, pthread_create(&p, NULL, producer, &s));
	ASSERT_EQ(0, pthread_join(p, NULL));
	ASSERT_EQ(0, pthread_join(c, NULL));

	uint64_t produced = atomic_load(&s.produced);
	mrcp_test_figure("shm_spsc_elems", (double)produced, "elements");
	ASSERT_EQ(0, s.errors);
	ASSERT_U64_EQ(produced, s.consumed);
	ASSERT_GT(produced, 100000); /* enough to cross the 2^32 wrap */
	ASSERT_EQ(0, mrc_shm_ring_count(s.r));
	free(s.r);
}

/* --------------------------------------------------------------- arena -- */

static struct mrc_shm_params test_params(void)
{
	struct mrc_shm_params p = {.nr_rings = 3, .nr_regions = 16, .heap_size = 3 * 4096 + 5};
	p.rings[0].capacity = 64;
	p.rings[0].elem_size = sizeof(struct mrc_shm_wr);
	p.rings[1].capacity = 128;
	p.rings[1].elem_size = sizeof(struct mrc_shm_cqe);
	p.rings[2].capacity = 32;
	p.rings[2].elem_size = sizeof(struct mrc_shm_recv);
	return p;
}

TEST(arena, layout__aligned_ordered_disjoint)
{
	struct mrc_shm_params p = test_params();
	struct mrc_shm_layout l;

	ASSERT_EQ(0, mrc_shm_arena_layout(&p, &l));
	ASSERT_GE(l.ring_area_ofs, sizeof(struct mrc_shm_hdr));
	ASSERT_EQ(0, l.ring_area_ofs % 64);
	uint64_t prev_end = l.ring_area_ofs;
	for (uint32_t i = 0; i < 3; i++) {
		ASSERT_EQ(0, l.rings[i].ofs % 64);
		ASSERT_GE(l.rings[i].ofs, prev_end);
		ASSERT_EQ(mrc_shm_ring_bytes(p.rings[i].capacity, p.rings[i].elem_size),
			  l.rings[i].len);
		prev_end = l.rings[i].ofs + l.rings[i].len;
	}
	ASSERT_EQ(prev_end, l.ring_area_ofs + l.ring_area_len);
	ASSERT_GE(l.region_tbl_ofs, prev_end);
	ASSERT_EQ(16 * sizeof(struct mrc_shm_region), l.region_tbl_len);
	ASSERT_EQ(0, l.heap_ofs % 4096);
	ASSERT_GE(l.heap_ofs, l.region_tbl_ofs + l.region_tbl_len);
	ASSERT_EQ(4 * 4096, l.heap_len);
	ASSERT_EQ(l.heap_ofs + l.heap_len, l.size);

	p.nr_rings = MRC_SHM_MAX_RINGS + 1;
	ASSERT_EQ(-EINVAL, mrc_shm_arena_layout(&p, &l));
	p = test_params();
	p.rings[1].capacity = 100;
	ASSERT_EQ(-EINVAL, mrc_shm_arena_layout(&p, &l));
	p = test_params();
	p.nr_regions = MRC_SHM_MAX_REGIONS + 1;
	ASSERT_EQ(-EINVAL, mrc_shm_arena_layout(&p, &l));
	p = test_params();
	p.nr_rings = 0;
	p.nr_regions = 0;
	ASSERT_EQ(0, mrc_shm_arena_layout(&p, &l));
}

/* A fresh arena in heap memory for the rejection tests. */
static uint8_t *arena_new(uint64_t *size)
{
	struct mrc_shm_params p = test_params();
	struct mrc_shm_layout l;
	ASSERT_EQ(0, mrc_shm_arena_layout(&p, &l));
	uint8_t *b = aligned_alloc(4096, l.size);
	ASSERT_TRUE(b != NULL);
	ASSERT_EQ(-ENOSPC, mrc_shm_arena_init(b, l.size - 1, &p));
	ASSERT_EQ(0, mrc_shm_arena_init(b, l.size, &p));
	*size = l.size;
	return b;
}

static struct mrc_shm_hdr *hdr(uint8_t *b)
{
	return (struct mrc_shm_hdr *)b;
}

TEST(arena, memfd_two_mappings_offsets_not_pointers)
{
	struct mrc_shm_params p = test_params();
	struct mrc_shm_layout l;
	ASSERT_EQ(0, mrc_shm_arena_layout(&p, &l));

	int fd = memfd_create("mrc_shm_test", MFD_CLOEXEC);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, ftruncate(fd, (off_t)l.size));
	uint8_t *a = mmap(NULL, l.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	uint8_t *b = mmap(NULL, l.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_TRUE(a != MAP_FAILED && b != MAP_FAILED);
	ASSERT_TRUE(a != b);

	/* "Daemon" lays out through mapping a; "client" attaches through b. */
	ASSERT_EQ(0, mrc_shm_arena_init(a, l.size, &p));
	struct mrc_shm_view va, vb;
	ASSERT_EQ(0, mrc_shm_arena_attach(a, l.size, &va));
	ASSERT_EQ(0, mrc_shm_arena_attach(b, l.size, &vb));
	ASSERT_EQ(3, vb.layout.nr_rings);
	ASSERT_EQ(16, vb.layout.nr_regions);
	ASSERT_U64_EQ(l.heap_ofs, vb.layout.heap_ofs);
	ASSERT_EQ(0, memcmp(l.rings, vb.layout.rings, 3 * sizeof(l.rings[0])));
	ASSERT_TRUE(mrc_shm_view_ring(&vb, 3) == NULL);

	/* Client writes a payload into the heap and posts a WR via b. */
	uint64_t buf_ofs = l.heap_ofs + 4096;
	char *pb = mrc_shm_view_heap_ptr(&vb, buf_ofs, 64);
	ASSERT_TRUE(pb != NULL);
	memcpy(pb, "hello over shm", 15);
	struct mrc_shm_wr wr = {.wr_id = 77, .qp = 1, .opcode = MRC_SHM_OP_WRITE,
				.num_sge = 1, .sge = {{.ofs = buf_ofs, .len = 15, .lkey = 5}}};
	struct mrc_shm_ring *sq_b = mrc_shm_view_ring(&vb, 0), *sq_a = mrc_shm_view_ring(&va, 0);
	ASSERT_TRUE((uint8_t *)sq_a - a == (uint8_t *)sq_b - b);
	ASSERT_EQ(1, mrc_shm_ring_enqueue_bulk(sq_b, &wr, 1));

	/* Daemon drains via a and resolves the SGE by offset in its mapping. */
	struct mrc_shm_wr got;
	ASSERT_EQ(1, mrc_shm_ring_count(sq_a));
	ASSERT_EQ(1, mrc_shm_ring_dequeue_bulk(sq_a, &got, 1));
	ASSERT_EQ(77, got.wr_id);
	const char *pa = mrc_shm_view_heap_ptr(&va, got.sge[0].ofs, got.sge[0].len);
	ASSERT_TRUE(pa != NULL && pa != pb);
	ASSERT_STREQ("hello over shm", pa);

	/* Completion back through the CQ ring. */
	struct mrc_shm_cqe c = {.wr_id = 77, .qp = 1, .byte_len = 15, .msn = 1}, cg;
	ASSERT_EQ(1, mrc_shm_ring_enqueue_bulk(mrc_shm_view_ring(&va, 1), &c, 1));
	ASSERT_EQ(1, mrc_shm_ring_dequeue_bulk(mrc_shm_view_ring(&vb, 1), &cg, 1));
	ASSERT_MEMEQ(&c, &cg, sizeof(c));

	/* Region published by the daemon (a) is visible to the client (b). */
	struct mrc_shm_region reg = {.ofs = buf_ofs, .len = 4096, .id = 2,
				     .access = MRC_SHM_ACCESS_REMOTE_WRITE, .lkey = 5, .rkey = 6},
			      out;
	ASSERT_EQ(-ENOENT, mrc_shm_region_lookup(&vb, 2, &out));
	ASSERT_EQ(0, mrc_shm_region_publish(&va, 2, &reg));
	ASSERT_EQ(0, mrc_shm_region_lookup(&vb, 2, &out));
	ASSERT_U64_EQ(buf_ofs, out.ofs);
	ASSERT_EQ(6, out.rkey);

	/* Unmapping a does not disturb b: nothing in the segment points at a. */
	ASSERT_EQ(0, munmap(a, l.size));
	struct mrc_shm_view vb2;
	ASSERT_EQ(0, mrc_shm_arena_attach(b, l.size, &vb2));
	ASSERT_STREQ("hello over shm", (char *)mrc_shm_view_heap_ptr(&vb2, buf_ofs, 15));
	ASSERT_EQ(0, munmap(b, l.size));
	close(fd);
}

TEST(arena, attach_accepts_larger_mapping_rejects_bad_args)
{
	uint64_t size;
	uint8_t *b = arena_new(&size);
	struct mrc_shm_view v;

	/* A hugepage mapping may be larger than the arena. */
	uint8_t *big = aligned_alloc(4096, size + 8192);
	ASSERT_TRUE(big != NULL);
	memcpy(big, b, size);
	ASSERT_EQ(0, mrc_shm_arena_attach(big, size + 8192, &v));
	ASSERT_U64_EQ(size, v.layout.size);
	ASSERT_EQ(-EINVAL, mrc_shm_arena_attach(NULL, size, &v));
	ASSERT_EQ(-EINVAL, mrc_shm_arena_attach(b + 8, size - 8, &v)); /* misaligned */
	free(big);
	free(b);
}

TEST(arena, attach_rejects_wrong_magic_and_version)
{
	uint64_t size;
	uint8_t *b = arena_new(&size);
	struct mrc_shm_view v;

	ASSERT_EQ(0, mrc_shm_arena_attach(b, size, &v));
	hdr(b)->magic ^= 1;
	ASSERT_EQ(-EPROTO, mrc_shm_arena_attach(b, size, &v));
	hdr(b)->magic ^= 1;
	hdr(b)->abi_version = MRC_SHM_ABI_VERSION + 1;
	ASSERT_EQ(-EPROTO, mrc_shm_arena_attach(b, size, &v));
	hdr(b)->abi_version = 0;
	ASSERT_EQ(-EPROTO, mrc_shm_arena_attach(b, size, &v));
	/* ABI 1 had no QP_ERROR completion entries: a client of it would
	 * take one for a send completion */
	ASSERT_EQ(2u, MRC_SHM_ABI_VERSION);
	hdr(b)->abi_version = 1;
	ASSERT_EQ(-EPROTO, mrc_shm_arena_attach(b, size, &v));
	hdr(b)->abi_version = MRC_SHM_ABI_VERSION;
	ASSERT_EQ(0, mrc_shm_arena_attach(b, size, &v));
	/* Zeroed memory (an arena never initialised) is not ours either. */
	memset(b, 0, size);
	ASSERT_EQ(-EPROTO, mrc_shm_arena_attach(b, size, &v));
	free(b);
}

TEST(arena, attach_rejects_truncated)
{
	uint64_t size;
	uint8_t *b = arena_new(&size);
	struct mrc_shm_view v;

	ASSERT_EQ(-EINVAL, mrc_shm_arena_attach(b, size - 1, &v));
	ASSERT_EQ(-EINVAL, mrc_shm_arena_attach(b, sizeof(struct mrc_shm_hdr) - 1, &v));
	ASSERT_EQ(-EINVAL, mrc_shm_arena_attach(b, 4, &v));
	hdr(b)->size = sizeof(struct mrc_shm_hdr) - 8;
	ASSERT_EQ(-EINVAL, mrc_shm_arena_attach(b, size, &v));
	free(b);
}

/* Each mutation of a valid header must make attach return -EINVAL. */
#define EXPECT_EINVAL_AFTER(stmt)                                              \
	do {                                                                   \
		uint64_t sz_;                                                  \
		uint8_t *b = arena_new(&sz_);                                  \
		struct mrc_shm_view v_;                                        \
		ASSERT_EQ(0, mrc_shm_arena_attach(b, sz_, &v_));               \
		stmt;                                                          \
		ASSERT_EQ(-EINVAL, mrc_shm_arena_attach(b, sz_, &v_));         \
		free(b);                                                       \
	} while (0)

TEST(arena, attach_rejects_inconsistent_offsets)
{
	/* Header shape. */
	EXPECT_EINVAL_AFTER(hdr(b)->hdr_size = 64);
	EXPECT_EINVAL_AFTER(hdr(b)->nr_rings = MRC_SHM_MAX_RINGS + 1);
	EXPECT_EINVAL_AFTER(hdr(b)->nr_regions = MRC_SHM_MAX_REGIONS + 1);
	/* Out of bounds, including offsets that overflow when added. */
	EXPECT_EINVAL_AFTER(hdr(b)->heap_len += 4096);
	EXPECT_EINVAL_AFTER(hdr(b)->heap_ofs = UINT64_MAX - 4095);
	EXPECT_EINVAL_AFTER(hdr(b)->ring_area_len = UINT64_MAX);
	EXPECT_EINVAL_AFTER(hdr(b)->region_tbl_ofs = hdr(b)->size);
	EXPECT_EINVAL_AFTER(hdr(b)->ring_area_ofs = 0); /* over the header */
	/* Misaligned. */
	EXPECT_EINVAL_AFTER(hdr(b)->heap_ofs += 64; hdr(b)->heap_len -= 4096);
	EXPECT_EINVAL_AFTER(hdr(b)->region_tbl_ofs += 8);
	EXPECT_EINVAL_AFTER(hdr(b)->rings[1].ofs += 4);
	/* Overlapping areas. */
	EXPECT_EINVAL_AFTER(hdr(b)->region_tbl_ofs = hdr(b)->ring_area_ofs + 64);
	EXPECT_EINVAL_AFTER(hdr(b)->heap_ofs -= 4096; hdr(b)->heap_len += 4096;
			    hdr(b)->region_tbl_len += 0);
	EXPECT_EINVAL_AFTER(hdr(b)->region_tbl_len += sizeof(struct mrc_shm_region));
	/* Rings: overlap, outside the ring area, geometry. */
	EXPECT_EINVAL_AFTER(hdr(b)->rings[2] = hdr(b)->rings[1]);
	EXPECT_EINVAL_AFTER(hdr(b)->rings[1].ofs = hdr(b)->rings[0].ofs + 64);
	EXPECT_EINVAL_AFTER(hdr(b)->rings[2].ofs = hdr(b)->region_tbl_ofs);
	EXPECT_EINVAL_AFTER(hdr(b)->rings[0].capacity = 48);
	EXPECT_EINVAL_AFTER(hdr(b)->rings[0].len -= 64);
	EXPECT_EINVAL_AFTER(hdr(b)->rings[0].elem_size = 2);
	/* The in-segment ring header disagrees with its descriptor. */
	EXPECT_EINVAL_AFTER(((struct mrc_shm_ring *)(b + hdr(b)->rings[1].ofs))->mask = 0xffff);
	EXPECT_EINVAL_AFTER(((struct mrc_shm_ring *)(b + hdr(b)->rings[1].ofs))->elem_size = 64);
}

TEST(region, publish_lookup_clear)
{
	uint64_t size;
	uint8_t *b = arena_new(&size);
	struct mrc_shm_view v;
	ASSERT_EQ(0, mrc_shm_arena_attach(b, size, &v));

	uint64_t h = v.layout.heap_ofs;
	struct mrc_shm_region d = {.ofs = h, .len = 100, .id = 0, .lkey = 1, .rkey = 2}, out;
	ASSERT_EQ(-ENOENT, mrc_shm_region_lookup(&v, 0, &out));
	ASSERT_EQ(0, mrc_shm_region_publish(&v, 0, &d));
	ASSERT_EQ(-EBUSY, mrc_shm_region_publish(&v, 0, &d));
	ASSERT_EQ(0, mrc_shm_region_lookup(&v, 0, &out));
	ASSERT_EQ(1, out.lkey);
	ASSERT_EQ(MRC_SHM_REGION_VALID, atomic_load(&out.state));
	ASSERT_EQ(0, mrc_shm_region_clear(&v, 0));
	ASSERT_EQ(-ENOENT, mrc_shm_region_lookup(&v, 0, &out));

	/* Out of range index; region outside the heap. */
	ASSERT_EQ(-EINVAL, mrc_shm_region_publish(&v, 16, &d));
	ASSERT_EQ(-EINVAL, mrc_shm_region_lookup(&v, 16, &out));
	ASSERT_EQ(-EINVAL, mrc_shm_region_clear(&v, 16));
	d.ofs = h - 8;
	ASSERT_EQ(-EINVAL, mrc_shm_region_publish(&v, 1, &d));
	d.ofs = h;
	d.len = v.layout.heap_len + 1;
	ASSERT_EQ(-EINVAL, mrc_shm_region_publish(&v, 1, &d));

	/* A table entry corrupted behind the daemon's back is caught on lookup. */
	d.len = 64;
	ASSERT_EQ(0, mrc_shm_region_publish(&v, 3, &d));
	struct mrc_shm_region *tbl = (struct mrc_shm_region *)(b + v.layout.region_tbl_ofs);
	tbl[3].len = UINT64_MAX;
	ASSERT_EQ(-EINVAL, mrc_shm_region_lookup(&v, 3, &out));

	ASSERT_TRUE(mrc_shm_view_heap_ptr(&v, h, v.layout.heap_len) != NULL);
	ASSERT_TRUE(mrc_shm_view_heap_ptr(&v, h, v.layout.heap_len + 1) == NULL);
	ASSERT_TRUE(mrc_shm_view_heap_ptr(&v, 0, 8) == NULL);
	free(b);
}

TEST(arena, ring_handle__ignores_a_rewritten_ring_header)
{
	uint64_t size;
	uint8_t *b = arena_new(&size);
	struct mrc_shm_view v;
	struct mrc_shm_rh h;
	struct mrc_shm_recv in[40], out[40];

	ASSERT_EQ(0, mrc_shm_arena_attach(b, size, &v));
	ASSERT_EQ(-EINVAL, mrc_shm_view_ring_handle(&v, 3, &h));
	ASSERT_EQ(0, mrc_shm_view_ring_handle(&v, 2, &h)); /* 32 x 16 B */
	ASSERT_EQ(32, h.capacity);
	/* A hostile peer rewrites the geometry in the shared header after
	 * attach. Operations through the handle must stay inside the 32
	 * slots (ASan would flag any byte past the arena). */
	h.r->capacity = 1u << 30;
	h.r->mask = 0xFFFFFFFFu;
	h.r->elem_size = 4096;
	atomic_store(&h.r->tail, 0xFFFFFFF0u);
	atomic_store(&h.r->head, 0xFFFFFFF0u);
	for (unsigned i = 0; i < 40; i++)
		in[i] = (struct mrc_shm_recv){.qp = i, .wr_id = 1000 + i};
	ASSERT_EQ(32, mrc_shm_rh_enqueue_burst(&h, in, 40)); /* across the wrap */
	ASSERT_EQ(0, mrc_shm_rh_enqueue_bulk(&h, in, 1));
	ASSERT_EQ(32, mrc_shm_rh_dequeue_burst(&h, out, 40));
	for (unsigned i = 0; i < 32; i++)
		ASSERT_EQ(1000 + i, out[i].wr_id);
	ASSERT_EQ(0, mrc_shm_rh_dequeue_bulk(&h, out, 1));
	/* and a tail pushed far ahead reads at most capacity, in bounds */
	atomic_store(&h.r->tail, atomic_load(&h.r->head) + 100000);
	ASSERT_EQ(32, mrc_shm_rh_dequeue_burst(&h, out, 40));
	free(b);
}
