/* test_dp_mailbox.c - dp_mailbox.c: a call runs exactly once, on the server
 * while it serves and on the caller's thread otherwise; a call the server
 * does not take in time returns -ETIMEDOUT and never runs afterwards, even
 * when the server polls again; a call the server took is waited for however
 * long it runs; callers are serialised; a post rings the doorbell. The server
 * is a thread of the test that polls, or stalls until told to go on. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "dp_mailbox.h"
#include "mrcp_test.h"

#define DEADLINE_NS (10ull * 1000000000u) /* any wait in a test gives up after this */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- a server thread ------------------------------------------------------------ */

struct server {
	struct mrcd_mailbox *mb;
	pthread_t tid;
	atomic_bool go;            /* poll (false: stalled) */
	atomic_bool stop;
	atomic_ulong polls;        /* loop iterations that polled */
};

static void *server_main(void *arg)
{
	struct server *s = arg;

	while (!atomic_load(&s->stop)) {
		if (!atomic_load(&s->go))
			continue;
		mrcd_mailbox_poll(s->mb);
		atomic_fetch_add(&s->polls, 1);
	}
	return NULL;
}

static void server_start(struct server *s, struct mrcd_mailbox *mb, bool go)
{
	s->mb = mb;
	atomic_init(&s->go, go);
	atomic_init(&s->stop, false);
	atomic_init(&s->polls, 0);
	mrcd_mailbox_open(mb);
	ASSERT_EQ(0, pthread_create(&s->tid, NULL, server_main, s));
}

static void server_join(struct server *s)
{
	atomic_store(&s->stop, true);
	pthread_join(s->tid, NULL);
}

/* Let the server poll at least @n more times. */
static void server_polls(struct server *s, unsigned long n)
{
	unsigned long want = atomic_load(&s->polls) + n;
	uint64_t end = mono_ns() + DEADLINE_NS;

	atomic_store(&s->go, true);
	while (atomic_load(&s->polls) < want)
		ASSERT_TRUE(mono_ns() < end);
}

/* ---- calls ---------------------------------------------------------------------- */

static atomic_int runs;            /* calls of count_fn, every test */

struct rec {
	pthread_t ran_on;
	void *ctx;
	atomic_int *runs;
	uint64_t spin_until_ns;    /* keep running until then (0: return at once) */
	bool done;
};

static void count_fn(void *ctx, void *arg)
{
	struct rec *r = arg;

	r->ran_on = pthread_self();
	r->ctx = ctx;
	while (r->spin_until_ns && mono_ns() < r->spin_until_ns)
		;
	atomic_fetch_add(r->runs, 1);
	r->done = true;
}

static int ctx_token;

/* A fresh mailbox (ctx &ctx_token) and run count for each test. */
static void mb_init(struct mrcd_mailbox *mb, int doorbell)
{
	atomic_store(&runs, 0);
	ASSERT_EQ(0, mrcd_mailbox_init(mb, &ctx_token, doorbell));
}

TEST(mailbox, call__without_server_runs_on_the_caller)
{
	struct mrcd_mailbox mb;
	struct rec r = { .runs = &runs };

	mb_init(&mb, -1);
	ASSERT_EQ(0, mrcd_mailbox_call(&mb, count_fn, &r, 100));
	ASSERT_EQ(1, atomic_load(&runs));
	ASSERT_TRUE(pthread_equal(r.ran_on, pthread_self()));
	ASSERT_TRUE(r.ctx == &ctx_token);
	ASSERT_EQ(0u, mb.served);
	mrcd_mailbox_fini(&mb);
}

TEST(mailbox, call__runs_on_the_server)
{
	struct mrcd_mailbox mb;
	struct server s;
	struct rec r = { .runs = &runs };

	mb_init(&mb, -1);
	server_start(&s, &mb, true);
	ASSERT_EQ(0, mrcd_mailbox_call(&mb, count_fn, &r, 1000));
	ASSERT_TRUE(r.done);
	ASSERT_EQ(1, atomic_load(&runs));
	ASSERT_TRUE(pthread_equal(r.ran_on, s.tid));
	ASSERT_TRUE(r.ctx == &ctx_token);
	server_join(&s);
	ASSERT_EQ(1u, mb.served);
	ASSERT_EQ(MRCD_MAILBOX_IDLE, atomic_load(&mb.state));
	mrcd_mailbox_fini(&mb);
}

/* A call made from its own stack frame, which is gone when this returns. */
static int __attribute__((noinline)) call_from_frame(struct mrcd_mailbox *mb, unsigned timeout_ms)
{
	struct rec r = { .runs = &runs };

	return mrcd_mailbox_call(mb, count_fn, &r, timeout_ms);
}

TEST(mailbox, call__not_taken_in_time_times_out_and_never_runs)
{
	struct mrcd_mailbox mb;
	struct server s;
	uint64_t t0;

	mb_init(&mb, -1);
	server_start(&s, &mb, false); /* serving, but stalled */
	t0 = mono_ns();
	ASSERT_EQ(-ETIMEDOUT, call_from_frame(&mb, 30));
	ASSERT_TRUE(mono_ns() - t0 >= 30ull * 1000000u);
	ASSERT_EQ(MRCD_MAILBOX_IDLE, atomic_load(&mb.state));
	/* the server comes back: the withdrawn call is not there to run */
	server_polls(&s, 1000);
	ASSERT_EQ(0, atomic_load(&runs));
	ASSERT_EQ(0u, mb.served);
	/* and the next call works */
	ASSERT_EQ(0, call_from_frame(&mb, 1000));
	ASSERT_EQ(1, atomic_load(&runs));
	server_join(&s);
	mrcd_mailbox_fini(&mb);
}

TEST(mailbox, call__taken_is_waited_for_past_the_timeout)
{
	struct mrcd_mailbox mb;
	struct server s;
	struct rec r = { .runs = &runs };

	mb_init(&mb, -1);
	server_start(&s, &mb, true);
	/* runs 400 ms, timeout 200 ms: the server must take it within the
	 * timeout, which a loaded 2-CPU host did not always do in 5 ms */
	r.spin_until_ns = mono_ns() + 400ull * 1000000u;
	ASSERT_EQ(0, mrcd_mailbox_call(&mb, count_fn, &r, 200));
	ASSERT_TRUE(r.done);
	ASSERT_TRUE(mono_ns() >= r.spin_until_ns);
	ASSERT_EQ(1, atomic_load(&runs));
	server_join(&s);
	mrcd_mailbox_fini(&mb);
}

struct caller {
	struct mrcd_mailbox *mb;
	struct rec r;
	unsigned timeout_ms;
	int rc;
	pthread_t tid;
};

static void *caller_main(void *arg)
{
	struct caller *c = arg;

	c->rc = mrcd_mailbox_call(c->mb, count_fn, &c->r, c->timeout_ms);
	return NULL;
}

static void wait_state(struct mrcd_mailbox *mb, unsigned st)
{
	uint64_t end = mono_ns() + DEADLINE_NS;

	while (atomic_load(&mb->state) != st)
		ASSERT_TRUE(mono_ns() < end);
}

TEST(mailbox, call__server_that_stops_before_taking_it_leaves_it_to_the_caller)
{
	struct mrcd_mailbox mb;
	struct server s;
	struct caller c = { .mb = &mb, .r = { .runs = &runs }, .timeout_ms = 0 };

	mb_init(&mb, -1);
	server_start(&s, &mb, false);
	ASSERT_EQ(0, pthread_create(&c.tid, NULL, caller_main, &c));
	wait_state(&mb, MRCD_MAILBOX_POSTED);
	server_join(&s);               /* the server's loop ends ... */
	mrcd_mailbox_close(&mb);       /* ... and it says so */
	pthread_join(c.tid, NULL);
	ASSERT_EQ(0, c.rc);
	ASSERT_EQ(1, atomic_load(&runs));
	ASSERT_TRUE(pthread_equal(c.r.ran_on, c.tid));
	ASSERT_EQ(0u, mb.served);
	mrcd_mailbox_fini(&mb);
}

TEST(mailbox, call__callers_are_serialised)
{
	enum { CALLERS = 3, CALLS = 200 };
	struct mrcd_mailbox mb;
	struct server s;
	struct caller c[CALLERS];

	mb_init(&mb, -1);
	server_start(&s, &mb, true);
	for (unsigned k = 0; k < CALLS; k++) {
		for (unsigned i = 0; i < CALLERS; i++) {
			c[i] = (struct caller){ .mb = &mb, .r = { .runs = &runs }, .timeout_ms = 0 };
			ASSERT_EQ(0, pthread_create(&c[i].tid, NULL, caller_main, &c[i]));
		}
		for (unsigned i = 0; i < CALLERS; i++) {
			pthread_join(c[i].tid, NULL);
			ASSERT_EQ(0, c[i].rc);
			ASSERT_TRUE(c[i].r.done);
		}
	}
	server_join(&s);
	ASSERT_EQ(CALLERS * CALLS, atomic_load(&runs));
	ASSERT_EQ((uint64_t)CALLERS * CALLS, mb.served);
	mrcd_mailbox_fini(&mb);
}

TEST(mailbox, post__rings_the_doorbell)
{
	struct mrcd_mailbox mb;
	struct server s;
	int efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	struct caller c = { .mb = &mb, .r = { .runs = &runs }, .timeout_ms = 0 };
	struct pollfd pfd = { .fd = efd, .events = POLLIN };
	uint64_t v = 0;

	ASSERT_TRUE(efd >= 0);
	mb_init(&mb, efd);
	server_start(&s, &mb, false);
	ASSERT_EQ(0, pthread_create(&c.tid, NULL, caller_main, &c));
	ASSERT_EQ(1, poll(&pfd, 1, (int)(DEADLINE_NS / 1000000u)));
	ASSERT_EQ((ssize_t)sizeof(v), read(efd, &v, sizeof(v)));
	ASSERT_EQ(1u, v);
	atomic_store(&s.go, true);     /* the woken server takes the call */
	pthread_join(c.tid, NULL);
	ASSERT_EQ(0, c.rc);
	ASSERT_EQ(1, atomic_load(&runs));
	server_join(&s);
	mrcd_mailbox_fini(&mb);
	close(efd);
}
