/* mrcp_timer.h - a hashed timing wheel on nanosecond deadlines. One wheel
 * per engine; each QP (and the engine's endpoint-operation state) owns one
 * timer armed at its earliest deadline. Deadlines are absolute ns values
 * compared wrap-safely; the wheel never reads a clock. */
#ifndef MRCP_TIMER_H
#define MRCP_TIMER_H

#include <stdbool.h>
#include <stdint.h>

struct mrcp_timer {
	uint64_t deadline;         /**< absolute, ns */
	struct mrcp_timer *next;   /**< slot list */
	struct mrcp_timer **pprev; /**< NULL when not armed */
	uint32_t owner;            /**< caller's id (e.g. QP slot + 1; 0 = engine) */
	uint32_t slot;             /**< wheel slot while armed */
};

struct mrcp_timer_wheel {
	unsigned shift;            /**< tick = 2^shift ns */
	unsigned n_slots;          /**< power of two */
	struct mrcp_timer **slots;
	uint64_t *nonempty;        /**< bit per slot */
	uint64_t cur_tick;         /**< the tick last advanced to */
	unsigned armed;            /**< timers armed */
	/* mrcp_timer_wheel_next()'s answer, kept until a timer holding it
	 * leaves (a host asks after every service; the walk is the cost) */
	uint64_t next_cache;
	bool next_valid;
};

/** @return 0, -EINVAL (n_slots not a power of two >= 64), -ENOMEM. */
int mrcp_timer_wheel_init(struct mrcp_timer_wheel *w, unsigned tick_shift, unsigned n_slots, uint64_t now_ns);
void mrcp_timer_wheel_fini(struct mrcp_timer_wheel *w);

static inline bool mrcp_timer_armed(const struct mrcp_timer *t) { return t->pprev != NULL; }

/** Arm (or re-arm) @t at @deadline. A deadline already past fires on the
 *  next advance. */
void mrcp_timer_arm(struct mrcp_timer_wheel *w, struct mrcp_timer *t, uint64_t deadline);
void mrcp_timer_cancel(struct mrcp_timer_wheel *w, struct mrcp_timer *t);

/** Fire every timer whose deadline is <= @now_ns, each unarmed before its
 *  callback (which may re-arm it). @return timers fired. */
unsigned mrcp_timer_wheel_advance(struct mrcp_timer_wheel *w, uint64_t now_ns,
				  void (*fire)(void *ctx, struct mrcp_timer *t), void *ctx);

/** Earliest armed deadline, or UINT64_MAX when none is armed. */
uint64_t mrcp_timer_wheel_next(const struct mrcp_timer_wheel *w);

#endif
