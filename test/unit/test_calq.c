/* test_calq.c - lib/core/calq.c, the calendar queue: order, ties by push
 * order across the near heap, the bucket lists and the far heap, a present
 * that jumps past empty buckets, pushes before the present, teardown by
 * foreach, and random pushes and pops against mrcp_heap (the order it must
 * reproduce exactly). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mrcp_calq.h"
#include "mrcp_heap.h"
#include "mrcp_prng.h"
#include "mrcp_seq.h"
#include "mrcp_test.h"

static void push(struct mrcp_calq *q, uint64_t t, uint32_t id)
{
	struct mrcp_heap_ent e = {.t = t, .arg = id, .kind = id % 7, .val.u64 = 1000u + id};

	ASSERT_EQ(0, mrcp_calq_push(q, &e));
}

static uint32_t pop_id(struct mrcp_calq *q, uint64_t *t)
{
	struct mrcp_heap_ent e;

	ASSERT_TRUE(mrcp_calq_pop(q, &e));
	ASSERT_EQ(e.arg % 7, e.kind);
	ASSERT_U64_EQ(1000u + e.arg, e.val.u64);
	if (t != NULL)
		*t = e.t;
	return e.arg;
}

TEST(calq, calq_init__rejects_bad_sizes_and_starts_empty)
{
	struct mrcp_calq q;
	struct mrcp_heap_ent e;

	ASSERT_EQ(-EINVAL, mrcp_calq_init(&q, 4, 63, 0));
	ASSERT_EQ(-EINVAL, mrcp_calq_init(&q, 4, 96, 0));
	ASSERT_EQ(-EINVAL, mrcp_calq_init(&q, 41, 64, 0));
	ASSERT_EQ(0, mrcp_calq_init(&q, 4, 64, 12345));
	ASSERT_FALSE(mrcp_calq_pop(&q, &e));
	mrcp_calq_fini(&q);
}

TEST(calq, calq_pop__ties_leave_in_push_order_wherever_they_waited)
{
	struct mrcp_calq q;

	/* 64 buckets of 16: t 50 in a list, t 5000 in the far heap */
	ASSERT_EQ(0, mrcp_calq_init(&q, 4, 64, 0));
	push(&q, 5000, 1); /* far */
	push(&q, 50, 2);   /* listed */
	push(&q, 3, 3);    /* present */
	push(&q, 50, 4);
	push(&q, 3, 5);
	ASSERT_EQ(3, pop_id(&q, NULL));
	ASSERT_EQ(5, pop_id(&q, NULL));
	ASSERT_EQ(2, pop_id(&q, NULL));
	/* the present is t 50's bucket: a push for t 50 joins the near heap,
	 * one for 5000 lands on a list next to the far entry's time only once
	 * it is within the horizon */
	push(&q, 50, 6);
	push(&q, 5000, 7);
	ASSERT_EQ(4, pop_id(&q, NULL));
	ASSERT_EQ(6, pop_id(&q, NULL));
	push(&q, 5000, 8);
	ASSERT_EQ(1, pop_id(&q, NULL));
	ASSERT_EQ(7, pop_id(&q, NULL));
	ASSERT_EQ(8, pop_id(&q, NULL));
	ASSERT_EQ(0, q.n);
	mrcp_calq_fini(&q);
}

TEST(calq, calq_pop__jumps_over_empty_time_and_takes_late_pushes_first)
{
	struct mrcp_calq q;
	uint64_t t;

	ASSERT_EQ(0, mrcp_calq_init(&q, 10, 64, 0));
	push(&q, 1ull << 40, 1);
	push(&q, (1ull << 40) + 1, 2);
	ASSERT_EQ(1, pop_id(&q, &t));
	ASSERT_U64_EQ(1ull << 40, t);
	/* before the present: it leaves first */
	push(&q, 7, 3);
	ASSERT_EQ(3, pop_id(&q, NULL));
	ASSERT_EQ(2, pop_id(&q, NULL));
	ASSERT_FALSE(mrcp_calq_pop(&q, &(struct mrcp_heap_ent){0}));
	mrcp_calq_fini(&q);
}

static void count(void *ctx, const struct mrcp_heap_ent *e)
{
	uint64_t *sum = ctx;

	*sum += e->arg;
}

TEST(calq, calq_foreach__visits_every_entry_held)
{
	struct mrcp_calq q;
	uint64_t sum = 0;

	ASSERT_EQ(0, mrcp_calq_init(&q, 4, 64, 0));
	for (uint32_t i = 1; i <= 100; i++)
		push(&q, (uint64_t)i * 37, i); /* near, lists and far */
	(void)pop_id(&q, NULL);
	mrcp_calq_foreach(&q, count, &sum);
	ASSERT_U64_EQ(100 * 101 / 2 - 1, sum);
	mrcp_calq_fini(&q);
}

/* The simulator's pattern and worse: time moves forward with the pops;
 * pushes fall at the present, a little ahead (a hop), far ahead (a timer)
 * or, rarely, before it; many share a time. The calendar queue must pop
 * exactly what a heap fed the same pushes pops. */
TEST(calq, calq__random_pushes_and_pops_match_the_heap)
{
	static const struct {
		unsigned shift, buckets;
	} shapes[] = {{0, 64}, {4, 64}, {10, 1024}, {6, 4096}};

	for (unsigned sh = 0; sh < sizeof(shapes) / sizeof(shapes[0]); sh++) {
		struct mrcp_calq q;
		struct mrcp_heap h;
		struct mrcp_heap_ent *st = malloc(20000 * sizeof(*st));
		struct mrcp_prng r;
		uint64_t now = 1000000, pops = 0;
		uint32_t id = 0;

		ASSERT_TRUE(st != NULL);
		mrcp_heap_init(&h, st, 20000);
		ASSERT_EQ(0, mrcp_calq_init(&q, shapes[sh].shift, shapes[sh].buckets, now));
		mrcp_prng_seed(&r, 100 + sh);
		for (unsigned step = 0; step < 200000; step++) {
			unsigned k = mrcp_prng_below(&r, 100);

			if (k < 52 && h.n < 20000) {
				uint64_t t;
				unsigned how = mrcp_prng_below(&r, 100);

				if (how < 20)
					t = now; /* a poll now */
				else if (how < 80)
					t = now + mrcp_prng_below(&r, 3000); /* a hop */
				else if (how < 97)
					t = now + mrcp_prng_below(&r, 2000000); /* a timer */
				else
					t = now - mrcp_prng_below(&r, 1000); /* late */
				if (mrcp_prng_below(&r, 4) == 0)
					t &= ~63ull; /* more ties */
				struct mrcp_heap_ent e = {.t = t, .arg = id, .kind = id % 7, .val.u64 = 1000u + id};

				ASSERT_EQ(0, mrcp_heap_push(&h, &e));
				ASSERT_EQ(0, mrcp_calq_push(&q, &e));
				id++;
			} else {
				struct mrcp_heap_ent a, b;
				bool ha = mrcp_heap_pop(&h, &a), hb = mrcp_calq_pop(&q, &b);

				ASSERT_EQ(ha, hb);
				if (!ha)
					continue;
				ASSERT_U64_EQ(a.t, b.t);
				ASSERT_EQ(a.arg, b.arg);
				ASSERT_U64_EQ(a.val.u64, b.val.u64);
				if (mrcp_time_lt(now, a.t))
					now = a.t;
				pops++;
			}
			ASSERT_U64_EQ(h.n, q.n);
		}
		ASSERT_TRUE(pops > 50000);
		free(st);
		mrcp_calq_fini(&q);
	}
}
