/* dp_mailbox.h - run a function on a polling thread and wait for it: the
 * control side's way into a worker (mrcd_dp_call), whose engine is
 * single-threaded.
 *
 * One call at a time (callers serialise on the mailbox's mutex). A call is
 * posted, the server thread takes it between two loop iterations
 * (mrcd_mailbox_poll), runs it, and marks it done; the caller waits. The
 * contract a caller relies on:
 *
 *   - 0: the function ran exactly once (on the server, or on the caller's
 *     thread if no server polls: before mrcd_mailbox_open, after
 *     mrcd_mailbox_close), and has returned;
 *   - -ETIMEDOUT: the server did not take the call within the timeout. The
 *     call is withdrawn: the function never runs, and the mailbox never
 *     touches its arguments again, so they may live on the caller's stack.
 *
 * A call the server has taken is always waited for, however long it runs
 * (it is running: a worker's handler is short).
 *
 * DPDK-free (C11 atomics, a pthread mutex, CLOCK_MONOTONIC), unit-tested with
 * a server thread that stalls (test_dp_mailbox.c).
 *
 * States of one call, written by the thread named, each transition one
 * atomic operation:
 *
 *   IDLE --caller: post--> POSTED --server: take (CAS)--> TAKEN --server--> DONE
 *                            |                                               |
 *                            +--caller: withdraw (CAS), timeout or no server-+--caller--> IDLE
 */
#ifndef MRCD_DP_MAILBOX_H
#define MRCD_DP_MAILBOX_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/** The function a call runs: @ctx is the mailbox's, @arg the caller's. */
typedef void (*mrcd_mailbox_fn)(void *ctx, void *arg);

struct mrcd_mailbox {
	pthread_mutex_t lock;      /**< held by a caller for its whole call */
	atomic_uint state;         /**< MRCD_MAILBOX_* below */
	mrcd_mailbox_fn fn;        /**< written by the caller before POSTED */
	void *arg;                 /**< likewise */
	void *ctx;                 /**< passed to every call (the worker) */
	atomic_bool serving;       /**< the server polls (open .. close) */
	int doorbell;              /**< eventfd written on each post, or -1 */
	uint64_t served;           /**< calls the server ran; written by the server */
};

enum { MRCD_MAILBOX_IDLE = 0, MRCD_MAILBOX_POSTED, MRCD_MAILBOX_TAKEN, MRCD_MAILBOX_DONE };

/** Set up @mb, not serving. @doorbell: an eventfd to write when a call is
 *  posted (wakes a sleeping server), or -1. @return 0 or -errno. */
int mrcd_mailbox_init(struct mrcd_mailbox *mb, void *ctx, int doorbell);
/** Release @mb (no call in progress; the doorbell is the owner's). */
void mrcd_mailbox_fini(struct mrcd_mailbox *mb);

/** From now on calls wait for mrcd_mailbox_poll. Call it before the server
 *  thread starts (e.g. where it is launched), so that no call can run on a
 *  caller's thread while the server runs. */
void mrcd_mailbox_open(struct mrcd_mailbox *mb);
/** Server thread, after its last mrcd_mailbox_poll: calls run on their
 *  caller's thread again. */
void mrcd_mailbox_close(struct mrcd_mailbox *mb);

/** Server thread: take and run the posted call, if any.
 *  @return true if one ran. */
bool mrcd_mailbox_poll(struct mrcd_mailbox *mb);

/**
 * Run @fn(ctx, @arg) through @mb and wait until it has returned.
 * @param timeout_ms  how long the server may take to pick the call up; 0 =
 *                    wait as long as it takes (the call is never withdrawn).
 * @return 0 (it ran), or -ETIMEDOUT (it never runs; see the header comment).
 */
int mrcd_mailbox_call(struct mrcd_mailbox *mb, mrcd_mailbox_fn fn, void *arg, unsigned timeout_ms);

#endif
