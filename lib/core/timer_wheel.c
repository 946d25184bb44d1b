/* timer_wheel.c - hashed timing wheel: slot = deadline tick mod n_slots, with
 * later rounds sharing a slot; a bitmap of non-empty slots makes "earliest
 * deadline" and long idle advances cheap. Knows nothing about QPs. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "mrcp_seq.h"
#include "mrcp_timer.h"

int mrcp_timer_wheel_init(struct mrcp_timer_wheel *w, unsigned tick_shift, unsigned n_slots, uint64_t now_ns)
{
	if (n_slots < 64 || (n_slots & (n_slots - 1)) != 0 || tick_shift > 30)
		return -EINVAL;
	w->shift = tick_shift;
	w->n_slots = n_slots;
	w->slots = calloc(n_slots, sizeof(*w->slots));
	w->nonempty = calloc(n_slots / 64, sizeof(*w->nonempty));
	if (w->slots == NULL || w->nonempty == NULL) {
		free(w->slots);
		free(w->nonempty);
		w->slots = NULL;
		w->nonempty = NULL;
		return -ENOMEM;
	}
	w->cur_tick = now_ns >> tick_shift;
	w->armed = 0;
	w->next_valid = false;
	return 0;
}

void mrcp_timer_wheel_fini(struct mrcp_timer_wheel *w)
{
	free(w->slots);
	free(w->nonempty);
	w->slots = NULL;
	w->nonempty = NULL;
}

static void slot_mark(struct mrcp_timer_wheel *w, unsigned slot)
{
	if (w->slots[slot] != NULL)
		w->nonempty[slot / 64] |= 1ull << (slot % 64);
	else
		w->nonempty[slot / 64] &= ~(1ull << (slot % 64));
}

static void unlink_timer(struct mrcp_timer_wheel *w, struct mrcp_timer *t)
{
	if (w->next_valid && t->deadline == w->next_cache)
		w->next_valid = false; /* it may have been the earliest */
	*t->pprev = t->next;
	if (t->next != NULL)
		t->next->pprev = t->pprev;
	t->pprev = NULL;
	t->next = NULL;
	w->armed--;
}

static unsigned slot_of(const struct mrcp_timer_wheel *w, uint64_t tick)
{
	return (unsigned)(tick & (w->n_slots - 1));
}

void mrcp_timer_cancel(struct mrcp_timer_wheel *w, struct mrcp_timer *t)
{
	if (!mrcp_timer_armed(t))
		return;
	unlink_timer(w, t);
	slot_mark(w, t->slot);
}

void mrcp_timer_arm(struct mrcp_timer_wheel *w, struct mrcp_timer *t, uint64_t deadline)
{
	uint64_t tick = deadline >> w->shift;
	unsigned slot;

	mrcp_timer_cancel(w, t);
	t->deadline = deadline;
	if ((int64_t)(tick - w->cur_tick) < 0)
		tick = w->cur_tick;
	slot = slot_of(w, tick);
	t->slot = slot;
	t->next = w->slots[slot];
	if (t->next != NULL)
		t->next->pprev = &t->next;
	w->slots[slot] = t;
	t->pprev = &w->slots[slot];
	w->armed++;
	slot_mark(w, slot);
	if (w->next_valid)
		w->next_cache = mrcp_deadline_min(w->next_cache, deadline);
}

static unsigned fire_slot(struct mrcp_timer_wheel *w, unsigned slot, uint64_t now_ns,
			  void (*fire)(void *ctx, struct mrcp_timer *t), void *ctx)
{
	struct mrcp_timer *t = w->slots[slot], *next;
	unsigned n = 0;

	while (t != NULL) {
		next = t->next;
		if (mrcp_time_le(t->deadline, now_ns)) {
			unlink_timer(w, t);
			slot_mark(w, slot);
			n++;
			fire(ctx, t);
			/* the callback may have re-armed or cancelled anything in
			 * this slot: restart the walk from the head */
			next = w->slots[slot];
		}
		t = next;
	}
	return n;
}

unsigned mrcp_timer_wheel_advance(struct mrcp_timer_wheel *w, uint64_t now_ns,
				  void (*fire)(void *ctx, struct mrcp_timer *t), void *ctx)
{
	uint64_t now_tick = now_ns >> w->shift;
	uint64_t span = now_tick - w->cur_tick;
	unsigned n = 0;

	if ((int64_t)span < 0)
		return 0;
	if (span >= w->n_slots)
		span = w->n_slots - 1; /* every slot once */
	/* visit [cur_tick, cur_tick + span]; the current slot is revisited on
	 * the next call because timers later in this tick stay filed in it */
	for (uint64_t k = 0; k <= span && w->armed != 0; k++) {
		unsigned slot = slot_of(w, w->cur_tick + k);
		if (w->nonempty[slot / 64] & (1ull << (slot % 64)))
			n += fire_slot(w, slot, now_ns, fire, ctx);
	}
	w->cur_tick = now_tick;
	return n;
}

static uint64_t wheel_next_walk(const struct mrcp_timer_wheel *w)
{
	uint64_t best = UINT64_MAX;
	unsigned words = w->n_slots / 64;
	unsigned start = slot_of(w, w->cur_tick);

	/* Walk non-empty slots in tick order from the current one. Timers of a
	 * later round share a slot, so take the minimum over every armed timer
	 * in each non-empty slot, and stop once a slot's own round has a
	 * deadline: later slots are later ticks of this round. */
	for (unsigned i = 0; i <= words; i++) {
		unsigned wi = (start / 64 + i) % words;
		uint64_t bits = w->nonempty[wi];

		if (i == 0)
			bits &= ~0ull << (start % 64);
		else if (i == words)
			bits &= (start % 64) ? ~(~0ull << (start % 64)) : 0;
		while (bits != 0) {
			unsigned slot = wi * 64 + (unsigned)__builtin_ctzll(bits);
			uint64_t slot_tick = w->cur_tick + ((slot - start) & (w->n_slots - 1));
			bool this_round = false;

			bits &= bits - 1;
			for (const struct mrcp_timer *t = w->slots[slot]; t != NULL; t = t->next) {
				best = mrcp_deadline_min(best, t->deadline);
				if ((int64_t)((t->deadline >> w->shift) - slot_tick) <= 0)
					this_round = true;
			}
			if (this_round)
				return best;
		}
	}
	return best;
}

uint64_t mrcp_timer_wheel_next(const struct mrcp_timer_wheel *w)
{
	/* the cache is not part of the wheel's value: a const caller may fill it */
	struct mrcp_timer_wheel *mw = (struct mrcp_timer_wheel *)(uintptr_t)w;

	if (w->armed == 0)
		return UINT64_MAX;
	if (!w->next_valid) {
		mw->next_cache = wheel_next_walk(w);
		mw->next_valid = true;
	}
	return w->next_cache;
}
