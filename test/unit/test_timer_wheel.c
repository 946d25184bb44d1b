/* test_timer_wheel.c - the hashed timing wheel: firing order and times,
 * rounds beyond the wheel span, re-arming from a callback, next deadline. */
#include <errno.h>
#include <string.h>

#include "mrcp_test.h"
#include "mrcp_prng.h"
#include "mrcp_seq.h"
#include "mrcp_timer.h"

struct log {
	char buf[512];
	uint64_t now;
	struct mrcp_timer_wheel *w;
	struct mrcp_timer *rearm;
	uint64_t rearm_at;
};

static void on_fire(void *ctx, struct mrcp_timer *t)
{
	struct log *l = ctx;
	size_t n = strlen(l->buf);

	snprintf(l->buf + n, sizeof(l->buf) - n, "%s%u@%llu", n ? " " : "", t->owner,
		 (unsigned long long)t->deadline);
	if (t == l->rearm) {
		mrcp_timer_arm(l->w, t, l->rearm_at);
		l->rearm = NULL;
	}
}

TEST(timer_wheel, init__rejects_bad_sizes)
{
	struct mrcp_timer_wheel w;

	ASSERT_EQ(-EINVAL, mrcp_timer_wheel_init(&w, 10, 100, 0));
	ASSERT_EQ(-EINVAL, mrcp_timer_wheel_init(&w, 10, 32, 0));
	ASSERT_EQ(0, mrcp_timer_wheel_init(&w, 10, 64, 0));
	mrcp_timer_wheel_fini(&w);
}

TEST(timer_wheel, advance__fires_due_timers_only)
{
	struct mrcp_timer_wheel w;
	struct mrcp_timer a = {.owner = 1}, b = {.owner = 2}, c = {.owner = 3};
	struct log l = {.w = &w};

	ASSERT_EQ(0, mrcp_timer_wheel_init(&w, 10, 64, 1000));
	mrcp_timer_arm(&w, &a, 5000);
	mrcp_timer_arm(&w, &b, 2500);
	mrcp_timer_arm(&w, &c, 5001);
	ASSERT_EQ(0, mrcp_timer_wheel_advance(&w, 2499, on_fire, &l));
	ASSERT_EQ(1, mrcp_timer_wheel_advance(&w, 2500, on_fire, &l));
	ASSERT_STREQ("2@2500", l.buf);
	ASSERT_EQ(1, mrcp_timer_wheel_advance(&w, 5000, on_fire, &l));
	ASSERT_STREQ("2@2500 1@5000", l.buf);
	/* c shares a's tick but is 1 ns later: still armed, fires next time */
	ASSERT_TRUE(mrcp_timer_armed(&c));
	ASSERT_EQ(1, mrcp_timer_wheel_advance(&w, 5001, on_fire, &l));
	ASSERT_FALSE(mrcp_timer_armed(&c));
	mrcp_timer_wheel_fini(&w);
}

TEST(timer_wheel, advance__later_round_waits_for_its_round)
{
	struct mrcp_timer_wheel w;
	struct mrcp_timer a = {.owner = 1};
	struct log l = {.w = &w};

	/* 64 slots of 1024 ns: 65536 ns per round */
	ASSERT_EQ(0, mrcp_timer_wheel_init(&w, 10, 64, 0));
	mrcp_timer_arm(&w, &a, 3 * 65536 + 2048);
	ASSERT_EQ(0, mrcp_timer_wheel_advance(&w, 2048, on_fire, &l));
	ASSERT_EQ(0, mrcp_timer_wheel_advance(&w, 65536 + 2048, on_fire, &l));
	ASSERT_EQ(0, mrcp_timer_wheel_advance(&w, 3 * 65536 + 2047, on_fire, &l));
	ASSERT_EQ(1, mrcp_timer_wheel_advance(&w, 3 * 65536 + 2048, on_fire, &l));
	mrcp_timer_wheel_fini(&w);
}

TEST(timer_wheel, advance__long_jump_fires_everything_due)
{
	struct mrcp_timer_wheel w;
	struct mrcp_timer t[10];
	struct log l = {.w = &w};

	ASSERT_EQ(0, mrcp_timer_wheel_init(&w, 10, 64, 0));
	for (unsigned i = 0; i < 10; i++) {
		t[i] = (struct mrcp_timer){.owner = i};
		mrcp_timer_arm(&w, &t[i], 1000 + i * 50000);
	}
	ASSERT_EQ(10, mrcp_timer_wheel_advance(&w, 10000000, on_fire, &l));
	ASSERT_EQ(0, w.armed);
	mrcp_timer_wheel_fini(&w);
}

TEST(timer_wheel, arm__past_deadline_fires_on_next_advance)
{
	struct mrcp_timer_wheel w;
	struct mrcp_timer a = {.owner = 7};
	struct log l = {.w = &w};

	ASSERT_EQ(0, mrcp_timer_wheel_init(&w, 10, 64, 100000));
	mrcp_timer_arm(&w, &a, 50);
	ASSERT_U64_EQ(50, mrcp_timer_wheel_next(&w));
	ASSERT_EQ(1, mrcp_timer_wheel_advance(&w, 100000, on_fire, &l));
	mrcp_timer_wheel_fini(&w);
}

TEST(timer_wheel, arm__rearm_from_callback)
{
	struct mrcp_timer_wheel w;
	struct mrcp_timer a = {.owner = 1};
	struct log l = {.w = &w, .rearm = &a, .rearm_at = 9000};

	ASSERT_EQ(0, mrcp_timer_wheel_init(&w, 10, 64, 0));
	mrcp_timer_arm(&w, &a, 3000);
	ASSERT_EQ(1, mrcp_timer_wheel_advance(&w, 4000, on_fire, &l));
	ASSERT_TRUE(mrcp_timer_armed(&a));
	ASSERT_U64_EQ(9000, mrcp_timer_wheel_next(&w));
	ASSERT_EQ(1, mrcp_timer_wheel_advance(&w, 9000, on_fire, &l));
	ASSERT_STREQ("1@3000 1@9000", l.buf);
	mrcp_timer_wheel_fini(&w);
}

TEST(timer_wheel, cancel__unarmed_and_armed)
{
	struct mrcp_timer_wheel w;
	struct mrcp_timer a = {.owner = 1}, b = {.owner = 2};
	struct log l = {.w = &w};

	ASSERT_EQ(0, mrcp_timer_wheel_init(&w, 10, 64, 0));
	mrcp_timer_cancel(&w, &a); /* not armed: no-op */
	mrcp_timer_arm(&w, &a, 2000);
	mrcp_timer_arm(&w, &b, 2000);
	mrcp_timer_cancel(&w, &a);
	ASSERT_EQ(1, w.armed);
	ASSERT_EQ(1, mrcp_timer_wheel_advance(&w, 3000, on_fire, &l));
	ASSERT_STREQ("2@2000", l.buf);
	ASSERT_U64_EQ(UINT64_MAX, mrcp_timer_wheel_next(&w));
	mrcp_timer_wheel_fini(&w);
}

TEST(timer_wheel, next__earliest_across_rounds_and_slots)
{
	struct mrcp_timer_wheel w;
	struct mrcp_timer a = {.owner = 1}, b = {.owner = 2}, c = {.owner = 3};

	ASSERT_EQ(0, mrcp_timer_wheel_init(&w, 10, 64, 0));
	mrcp_timer_arm(&w, &a, 5 * 65536 + 1024); /* slot 1, round 5 */
	mrcp_timer_arm(&w, &b, 40 * 1024);        /* slot 40, round 0 */
	ASSERT_U64_EQ(40 * 1024, mrcp_timer_wheel_next(&w));
	mrcp_timer_arm(&w, &c, 2 * 1024 + 5);     /* slot 2, round 0 */
	ASSERT_U64_EQ(2 * 1024 + 5, mrcp_timer_wheel_next(&w));
	mrcp_timer_cancel(&w, &b);
	mrcp_timer_cancel(&w, &c);
	ASSERT_U64_EQ(5 * 65536 + 1024, mrcp_timer_wheel_next(&w));
	mrcp_timer_wheel_fini(&w);
}

TEST(timer_wheel, next__after_wrap_of_current_slot)
{
	struct mrcp_timer_wheel w;
	struct mrcp_timer a = {.owner = 1}, b = {.owner = 2};

	/* current tick in slot 50; a timer in slot 10 of the next round and
	 * one in slot 60 of this round: slot 60 comes first */
	ASSERT_EQ(0, mrcp_timer_wheel_init(&w, 10, 64, 50 * 1024));
	mrcp_timer_arm(&w, &a, 64 * 1024 + 10 * 1024);
	mrcp_timer_arm(&w, &b, 60 * 1024);
	ASSERT_U64_EQ(60 * 1024, mrcp_timer_wheel_next(&w));
	mrcp_timer_cancel(&w, &b);
	ASSERT_U64_EQ(74 * 1024, mrcp_timer_wheel_next(&w));
	mrcp_timer_wheel_fini(&w);
}

static void count_fire(void *ctx, struct mrcp_timer *t)
{
	(void)t;
	(*(unsigned *)ctx)++;
}

/* next() keeps its answer until a timer that may hold it leaves: over a
 * long random run of arms, re-arms, cancels and advances (callbacks that
 * re-arm included), it always equals the earliest armed deadline found by
 * brute force. */
TEST(timer_wheel, next__cached_answer_always_equals_the_brute_force_minimum)
{
	enum { N = 40 };
	struct mrcp_timer_wheel w;
	struct mrcp_timer t[N];
	struct mrcp_prng r;
	uint64_t now = 1000000;
	unsigned fired = 0;

	memset(t, 0, sizeof(t));
	mrcp_prng_seed(&r, 99);
	ASSERT_EQ(0, mrcp_timer_wheel_init(&w, 10, 64, now));
	for (int step = 0; step < 20000; step++) {
		unsigned i = mrcp_prng_below(&r, N), op = mrcp_prng_below(&r, 10);
		uint64_t want = UINT64_MAX;

		if (op < 5) /* arm or re-arm, sometimes in the past, sometimes rounds away */
			mrcp_timer_arm(&w, &t[i], now - 5000 + mrcp_prng_below(&r, 200000) +
				       (op == 0 ? 64ull << 10 : 0));
		else if (op < 7)
			mrcp_timer_cancel(&w, &t[i]);
		else if (op < 9)
			(void)mrcp_timer_wheel_next(&w); /* fill the cache */
		else
			mrcp_timer_wheel_advance(&w, now += mrcp_prng_below(&r, 30000), count_fire, &fired);
		for (unsigned k = 0; k < N; k++)
			if (mrcp_timer_armed(&t[k]))
				want = mrcp_deadline_min(want, t[k].deadline);
		ASSERT_EQ(want, mrcp_timer_wheel_next(&w));
	}
	ASSERT_GT(fired, 100);
	mrcp_timer_wheel_fini(&w);
}
