/* fake_link.h - the unit tests' fake link (architecture.md §6): it
 * takes an engine's transmit descriptors, copies each into a flat packet,
 * decodes it and writes one line per descriptor to a text log that
 * assertions compare. Two ways to use it:
 *  - capture: the test plays the peer, and fake_link_poll() / _drain() take
 *    what one engine sends at a given time (test_req.c, test_resp.c);
 *  - link: fake_link_connect() joins two engines by a constant-delay FIFO
 *    with a drop hook and trims, and fake_link_run() moves virtual time
 *    (test_engine.c).
 * Single-threaded; the clock of link mode is @now. */
#ifndef FAKE_LINK_H
#define FAKE_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mrcp_engine.h"
#include "mrcp_wire.h"

#define FAKE_LINK_NODES 2
#define FAKE_LINK_PKT_MAX (MRCP_TX_HDR_MAX + MRCP_PAYLOAD_MAX + 8) /**< bytes */
#define FAKE_LINK_LOG_MAX 16384 /**< bytes of log kept; later lines are cut */
#define FAKE_LINK_BURST 64      /**< descriptors asked of mrcp_poll at a time */

/** One descriptor as the link saw it. */
struct fake_link_pkt {
	struct mrcp_tx tx;        /**< the descriptor; its seg pointers are stale later */
	struct mrcp_pkt p;        /**< decoded from @bytes; p.payload points into @bytes */
	uint32_t len;             /**< bytes in @bytes: headers, payload, pad */
	int from, to;             /**< node indices; capture: from 0, to -1 */
	uint64_t at;              /**< link: delivery time, ns */
	struct mrcp_rx rx;        /**< link: what the receiving engine is given */
	uint8_t bytes[FAKE_LINK_PKT_MAX];
};

/** Link mode: return true to lose @p (sent by node @from) on the way. */
typedef bool (*fake_link_drop_fn)(void *ctx, int from, const struct mrcp_tx *tx,
				  const struct fake_link_pkt *p);

struct fake_link {
	struct mrcp_engine *eng[FAKE_LINK_NODES]; /**< link mode: node n */
	uint64_t now;              /**< link mode: the clock, ns */
	uint64_t delay_ns;         /**< link mode: one way, ns (2000 after connect) */
	uint64_t va_base;          /**< data packets log their VA as va+(VA - va_base) */
	bool log_port;             /**< end each log line with " port N" (the descriptor's port) */
	fake_link_drop_fn drop;    /**< link mode, optional */
	void *drop_ctx;
	uint8_t trim_next;         /**< link mode: deliver this many more data packets trimmed */
	unsigned delivered;        /**< link mode: packets handed to an engine */
	unsigned dropped;          /**< link mode: packets @drop took */

	/* capture: what the last fake_link_poll() / _drain() took */
	struct fake_link_pkt *out;
	unsigned n_out, cap_out;

	/* link mode: in flight, FIFO by delivery time (the delay is constant) */
	struct fake_link_pkt *q;
	unsigned qh, qt, q_cap;

	char log[FAKE_LINK_LOG_MAX]; /**< "; "-joined lines, one per descriptor */
	size_t log_len;              /**< bytes in @log before its NUL */
};

/** A capture link that holds up to @cap_out packets per poll (0 for a
 *  link that only carries). Fails the test if memory runs out. */
void fake_link_init(struct fake_link *l, unsigned cap_out);

/** Link mode: node 0 is @e0 and node 1 is @e1; up to @q_cap packets in
 *  flight. Call after fake_link_init(). */
void fake_link_connect(struct fake_link *l, struct mrcp_engine *e0, struct mrcp_engine *e1,
		       unsigned q_cap);

void fake_link_fini(struct fake_link *l);

/** Clear the capture and the log, then take up to @max (at most cap_out)
 *  descriptors that @e has to send at @now_ns. @return how many. */
unsigned fake_link_poll(struct fake_link *l, struct mrcp_engine *e, uint64_t now_ns, unsigned max);

/** As fake_link_poll(), but everything @e has to send now; more than
 *  cap_out fails the test. @return how many. */
unsigned fake_link_drain(struct fake_link *l, struct mrcp_engine *e, uint64_t now_ns);

/** Link mode: from @now, poll both engines, deliver what is due and move
 *  the clock to the next delivery or engine deadline, until @done(@ctx)
 *  (NULL: never), the next event is after @until_ns, or @max_steps steps.
 *  The log is cleared first and lists what each node sent ("0> ...";
 *  " dropped", " trimmed" as the link treated it). */
void fake_link_run(struct fake_link *l, uint64_t until_ns, bool (*done)(void *ctx), void *ctx,
		   unsigned max_steps);

/** Link mode: put @tx, which node @from sent, on the wire toward the other
 *  node (logged; @drop and @trim_next apply). fake_link_run() does this for
 *  what it polls; a test that polls an engine itself hands the packets on. */
void fake_link_send(struct fake_link *l, int from, const struct mrcp_tx *tx);

/** Link mode: packets in flight. */
unsigned fake_link_in_flight(const struct fake_link *l);

/** Append the log line of @p to @s (cap @cap, "; " between lines), with
 *  data VAs relative to @va_base. For a test's own selection of packets. */
void fake_link_format(char *s, size_t cap, const struct mrcp_pkt *p, uint64_t va_base);

#endif
