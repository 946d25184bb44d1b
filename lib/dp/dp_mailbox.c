/* dp_mailbox.c - one call at a time into a polling thread (dp_mailbox.h). */
#include <errno.h>
#include <time.h>
#include <unistd.h>

#include "dp_mailbox.h"

#define WAIT_NAP_NS 20000 /* how often a waiting caller looks again */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int mrcd_mailbox_init(struct mrcd_mailbox *mb, void *ctx, int doorbell)
{
	int rc = pthread_mutex_init(&mb->lock, NULL);

	if (rc != 0)
		return -rc;
	atomic_init(&mb->state, MRCD_MAILBOX_IDLE);
	atomic_init(&mb->serving, false);
	mb->fn = NULL;
	mb->arg = NULL;
	mb->ctx = ctx;
	mb->doorbell = doorbell;
	mb->served = 0;
	return 0;
}

void mrcd_mailbox_fini(struct mrcd_mailbox *mb)
{
	pthread_mutex_destroy(&mb->lock);
}

void mrcd_mailbox_open(struct mrcd_mailbox *mb)
{
	atomic_store(&mb->serving, true);
}

void mrcd_mailbox_close(struct mrcd_mailbox *mb)
{
	atomic_store(&mb->serving, false);
}

bool mrcd_mailbox_poll(struct mrcd_mailbox *mb)
{
	unsigned posted = MRCD_MAILBOX_POSTED;

	/* the common case, once per loop iteration: nothing posted */
	if (atomic_load_explicit(&mb->state, memory_order_relaxed) != MRCD_MAILBOX_POSTED)
		return false;
	/* A1: take the call; fn and arg are read after it. Pairs with R1.
	 * Fails if the caller withdrew it first. */
	if (!atomic_compare_exchange_strong_explicit(&mb->state, &posted, MRCD_MAILBOX_TAKEN,
						     memory_order_acquire, memory_order_relaxed))
		return false;
	mb->fn(mb->ctx, mb->arg);
	mb->served++;
	/* R2: everything the call wrote is visible to the caller. Pairs with A2. */
	atomic_store_explicit(&mb->state, MRCD_MAILBOX_DONE, memory_order_release);
	return true;
}

/* The caller takes a posted call back (timeout, or no server any more).
 * @return true if it did: the server will never take it. */
static bool withdraw(struct mrcd_mailbox *mb)
{
	unsigned posted = MRCD_MAILBOX_POSTED;

	return atomic_compare_exchange_strong_explicit(&mb->state, &posted, MRCD_MAILBOX_IDLE,
						       memory_order_acquire, memory_order_relaxed);
}

int mrcd_mailbox_call(struct mrcd_mailbox *mb, mrcd_mailbox_fn fn, void *arg, unsigned timeout_ms)
{
	const struct timespec nap = { 0, WAIT_NAP_NS };
	uint64_t deadline = timeout_ms ? mono_ns() + (uint64_t)timeout_ms * 1000000u : 0;
	uint64_t one = 1;
	int rc = 0;

	pthread_mutex_lock(&mb->lock);
	if (!atomic_load(&mb->serving)) {
		fn(mb->ctx, arg);
		goto out;
	}
	mb->fn = fn;
	mb->arg = arg;
	/* R1: publish fn and arg with the post. Pairs with A1. */
	atomic_store_explicit(&mb->state, MRCD_MAILBOX_POSTED, memory_order_release);
	if (mb->doorbell >= 0 && write(mb->doorbell, &one, sizeof(one)) < 0) {
		/* EAGAIN: the counter is already non-zero, the server wakes anyway */
	}
	for (;;) {
		/* A2: see what the call wrote. Pairs with R2. */
		unsigned st = atomic_load_explicit(&mb->state, memory_order_acquire);

		if (st == MRCD_MAILBOX_DONE)
			break;
		if (st == MRCD_MAILBOX_POSTED) {
			if (!atomic_load(&mb->serving) && withdraw(mb)) {
				/* the server stopped before it took the call */
				fn(mb->ctx, arg);
				goto out;
			}
			if (deadline && mono_ns() >= deadline && withdraw(mb)) {
				rc = -ETIMEDOUT;
				goto out;
			}
		}
		/* TAKEN: running on the server; wait for it however long */
		nanosleep(&nap, NULL);
	}
	atomic_store_explicit(&mb->state, MRCD_MAILBOX_IDLE, memory_order_relaxed);
out:
	pthread_mutex_unlock(&mb->lock);
	return rc;
}
