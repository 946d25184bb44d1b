/* test_heap.c - lib/core/heap.c, the (time, push order) min-heap: order,
 * ties by push order, a full heap, growth through caller storage, wrap-safe
 * times, and random pushes and pops against a brute-force model (an
 * unsorted array searched for its minimum). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mrcp_heap.h"
#include "mrcp_prng.h"
#include "mrcp_test.h"

static int push(struct mrcp_heap *h, uint64_t t, uint32_t id)
{
	struct mrcp_heap_ent e = {.t = t, .arg = id, .kind = id % 7, .val.u64 = 1000u + id};

	return mrcp_heap_push(h, &e);
}

/* Pop one entry and return its id (arg), checking the payload came along. */
static uint32_t pop_id(struct mrcp_heap *h, uint64_t *t)
{
	struct mrcp_heap_ent e;

	ASSERT_TRUE(mrcp_heap_pop(h, &e));
	ASSERT_EQ(e.arg % 7, e.kind);
	ASSERT_U64_EQ(1000u + e.arg, e.val.u64);
	if (t != NULL)
		*t = e.t;
	return e.arg;
}

TEST(heap, heap_init__empty)
{
	struct mrcp_heap_ent st[4];
	struct mrcp_heap h;
	struct mrcp_heap_ent e;

	mrcp_heap_init(&h, st, 4);
	ASSERT_EQ(0, h.n);
	ASSERT_EQ(4, h.cap);
	ASSERT_TRUE(mrcp_heap_top(&h) == NULL);
	ASSERT_U64_EQ(UINT64_MAX, mrcp_heap_next_t(&h));
	memset(&e, 0xA5, sizeof(e));
	ASSERT_FALSE(mrcp_heap_pop(&h, &e));
	ASSERT_EQ(0xA5A5A5A5u, e.arg); /* untouched */
}

TEST(heap, heap_init__null_storage_is_full)
{
	struct mrcp_heap h;

	mrcp_heap_init(&h, NULL, 16);
	ASSERT_EQ(0, h.cap);
	ASSERT_EQ(-ENOSPC, push(&h, 1, 1));
	ASSERT_EQ(0, h.n);
}

TEST(heap, heap_pop__time_order)
{
	static const uint64_t t[] = {50, 10, 40, 30, 20, 60, 0};
	struct mrcp_heap_ent st[8];
	struct mrcp_heap h;
	uint64_t got, prev = 0;

	mrcp_heap_init(&h, st, 8);
	for (uint32_t i = 0; i < 7; i++)
		ASSERT_EQ(0, push(&h, t[i], i));
	ASSERT_U64_EQ(0, mrcp_heap_next_t(&h));
	ASSERT_EQ(6, mrcp_heap_top(&h)->arg);
	for (unsigned i = 0; i < 7; i++) {
		(void)pop_id(&h, &got);
		ASSERT_U64_EQ(10 * i, got);
		ASSERT_LE(prev, got);
		prev = got;
	}
	ASSERT_EQ(0, h.n);
}

TEST(heap, heap_pop__ties_leave_in_push_order)
{
	struct mrcp_heap_ent st[64];
	struct mrcp_heap h;

	mrcp_heap_init(&h, st, 64);
	/* ids 0..47 at three times, pushed interleaved */
	for (uint32_t i = 0; i < 48; i++)
		ASSERT_EQ(0, push(&h, 100 + 100 * (i % 3), i));
	for (uint32_t k = 0; k < 3; k++)
		for (uint32_t i = k; i < 48; i += 3)
			ASSERT_EQ(i, pop_id(&h, NULL));
}

TEST(heap, heap_push__numbers_pushes_from_zero)
{
	struct mrcp_heap_ent st[4];
	struct mrcp_heap h;
	struct mrcp_heap_ent e = {.t = 5, .seq = 999};

	mrcp_heap_init(&h, st, 4);
	ASSERT_EQ(0, mrcp_heap_push(&h, &e)); /* the caller's seq is ignored */
	ASSERT_EQ(0, mrcp_heap_push(&h, &e));
	ASSERT_U64_EQ(2, h.next_seq);
	ASSERT_TRUE(mrcp_heap_pop(&h, &e));
	ASSERT_U64_EQ(0, e.seq);
	ASSERT_TRUE(mrcp_heap_pop(&h, &e));
	ASSERT_U64_EQ(1, e.seq);
}

TEST(heap, heap_push__full_is_enospc_and_leaves_no_trace)
{
	struct mrcp_heap_ent st[3];
	struct mrcp_heap h;

	mrcp_heap_init(&h, st, 3);
	ASSERT_EQ(0, push(&h, 10, 1));
	ASSERT_EQ(0, push(&h, 5, 2));
	ASSERT_EQ(0, push(&h, 7, 3));
	ASSERT_EQ(-ENOSPC, push(&h, 1, 4));
	ASSERT_EQ(3, h.n);
	ASSERT_U64_EQ(3, h.next_seq);
	ASSERT_EQ(2, pop_id(&h, NULL));
	ASSERT_EQ(0, push(&h, 1, 4)); /* room again */
	ASSERT_EQ(4, pop_id(&h, NULL));
	ASSERT_EQ(3, pop_id(&h, NULL));
	ASSERT_EQ(1, pop_id(&h, NULL));
}

TEST(heap, heap_resize__grows_and_keeps_the_order)
{
	struct mrcp_heap_ent *st = malloc(2 * sizeof(*st));
	struct mrcp_heap h;
	uint32_t pushed = 0;

	ASSERT_TRUE(st != NULL);
	mrcp_heap_init(&h, st, 2);
	/* the simulator's way: on -ENOSPC, realloc double and push again */
	for (uint32_t i = 0; i < 1000; i++) {
		uint64_t t = (uint64_t)(i * 7919u % 1000u) / 4; /* many ties */

		if (push(&h, t, i) == -ENOSPC) {
			uint32_t cap = 2 * h.cap;
			struct mrcp_heap_ent *g = realloc(h.ent, cap * sizeof(*g));

			ASSERT_TRUE(g != NULL);
			mrcp_heap_resize(&h, g, cap);
			ASSERT_EQ(0, push(&h, t, i));
		}
		pushed++;
	}
	ASSERT_EQ(1024, h.cap);
	ASSERT_EQ(pushed, h.n);
	uint64_t prev_t = 0;
	uint32_t prev_id = 0;
	for (uint32_t k = 0; k < pushed; k++) {
		uint64_t t;
		uint32_t id = pop_id(&h, &t);

		ASSERT_LE(prev_t, t);
		if (k > 0 && t == prev_t)
			ASSERT_LT(prev_id, id); /* ties in push order */
		prev_t = t;
		prev_id = id;
	}
	free(h.ent);
}

TEST(heap, heap_pop__times_compare_wrap_safe)
{
	struct mrcp_heap_ent st[4];
	struct mrcp_heap h;

	/* a clock near the top of 64 bits: the times after its wrap are later */
	mrcp_heap_init(&h, st, 4);
	ASSERT_EQ(0, push(&h, 5, 1));
	ASSERT_EQ(0, push(&h, UINT64_MAX - 10, 2));
	ASSERT_EQ(0, push(&h, UINT64_MAX, 3));
	ASSERT_U64_EQ(UINT64_MAX - 10, mrcp_heap_next_t(&h));
	ASSERT_EQ(2, pop_id(&h, NULL));
	ASSERT_EQ(3, pop_id(&h, NULL));
	ASSERT_EQ(1, pop_id(&h, NULL));
}

/* Random pushes and pops against the model: the minimum (t, id) of an
 * unsorted array, ids numbering the pushes. */
TEST(heap, heap__matches_a_brute_force_model)
{
	enum { CAP = 300 };
	struct mrcp_heap_ent st[CAP];
	struct { uint64_t t; uint32_t id; } ref[CAP];
	uint32_t nref = 0, next_id = 0;
	struct mrcp_heap h;
	struct mrcp_prng r;
	uint64_t now = 1000;

	mrcp_heap_init(&h, st, CAP);
	mrcp_prng_seed(&r, 0x4EA9);
	for (unsigned step = 0; step < 200000; step++) {
		if (mrcp_prng_below(&r, 5) < 3) {
			/* near now, with many equal times */
			uint64_t t = now + mrcp_prng_below(&r, 32);
			int rc = push(&h, t, next_id);

			if (nref == CAP) {
				ASSERT_EQ(-ENOSPC, rc);
				continue;
			}
			ASSERT_EQ(0, rc);
			ref[nref].t = t;
			ref[nref].id = next_id++;
			nref++;
		} else {
			uint32_t best = 0;
			uint64_t t;

			if (nref == 0) {
				ASSERT_TRUE(mrcp_heap_top(&h) == NULL);
				continue;
			}
			for (uint32_t i = 1; i < nref; i++)
				if (ref[i].t < ref[best].t ||
				    (ref[i].t == ref[best].t && ref[i].id < ref[best].id))
					best = i;
			ASSERT_U64_EQ(ref[best].t, mrcp_heap_next_t(&h));
			ASSERT_EQ(ref[best].id, pop_id(&h, &t));
			ASSERT_U64_EQ(ref[best].t, t);
			now = t;
			ref[best] = ref[--nref];
		}
		ASSERT_EQ(nref, h.n);
	}
	ASSERT_GT(next_id, 50000); /* the run did push and pop */
}
