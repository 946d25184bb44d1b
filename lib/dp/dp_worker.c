/* dp_worker.c - the worker lcore (dp_internal.h). Each loop iteration:
 *   1. run a pending control call (the mailbox, dp_mailbox.h);
 *   2. read the links (every 100 ms) and retry frames a full TX ring left
 *      over (back-pressure: the engine is told the port has no room until
 *      they are gone, D42);
 *   3. receive (dp_rx.c): every port's burst, frames the fault stage held,
 *      frames other workers handed over, read into one batch;
 *   4. hooks (client sessions, selftests) post work, receives included,
 *      and only then the batch goes to mrcp_rx_burst (a receive posted
 *      before the peer could send is never behind the WriteImm it is for);
 *   5. completions and events go to the QP's owner (what a handler posts
 *      leaves in step 6 of the same pass); probe results and peers' port
 *      masks are kept for the snapshots;
 *   6. transmit (dp_tx.c): mrcp_poll descriptors become frames; frames to
 *      our own addresses are received at once (D71), and their completions
 *      and events delivered as in step 5;
 *   7. adaptive idle: after a run of empty iterations the worker sleeps on
 *      its doorbell eventfd until the engine's next deadline (capped), so
 *      two daemons and their clients share two cores.
 * The worker watches its own loop: a gap far above the RTT that it did not
 * choose (descheduled, a yield or a nap that came back late, one step that
 * ran long) is a host stall, and the engine is told (D72) before it is
 * called again.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "dp_fault.h"
#include "dp_internal.h"

#define IDLE_GRACE_NS (1000ull * 1000)  /* stay awake this long after the last work */
#define IDLE_SLEEP_MIN_NS (20ull * 1000)
#define IDLE_SLEEP_MAX_NS (200ull * 1000)

/* ---- completions and events ---------------------------------------------------------- */

unsigned mrcd_dp_drain_cq(struct mrcd_dp *dp)
{
	struct mrcp_wc wc[64];
	unsigned n, total = 0;

	while ((n = mrcp_poll_cq(dp->eng, wc, RTE_DIM(wc))) > 0) {
		for (unsigned k = 0; k < n; k++) {
			struct mrcd_dp_qp_owner *o = mrcd__owner_of(dp, wc[k].qpn);

			dp->wc.wc++;
			if (o && o->on_wc)
				o->on_wc(dp, o->ctx, &wc[k]);
			else
				dp->wc.wc_unowned++;
		}
		total += n;
		if (n < RTE_DIM(wc))
			break;
	}
	return total;
}

static void ip_str(const struct mrcp_ip *ip, char *buf, size_t cap)
{
	if (ip->family == 4)
		snprintf(buf, cap, "%u.%u.%u.%u", ip->a[0], ip->a[1], ip->a[2], ip->a[3]);
	else if (ip->family == 6)
		inet_ntop(AF_INET6, ip->a, buf, (socklen_t)cap);
	else
		snprintf(buf, cap, "-");
}

static unsigned drain_events(struct mrcd_dp *dp)
{
	struct mrcp_event ev[32];
	unsigned n = mrcp_poll_events(dp->eng, ev, RTE_DIM(ev));
	char a[64];

	for (unsigned k = 0; k < n; k++) {
		const struct mrcp_event *e = &ev[k];
		struct mrcd_dp_qp_owner *o = e->qpn ? mrcd__owner_of(dp, e->qpn) : NULL;

		dp->wc.events++;
		switch (e->type) {
		case MRCP_EVENT_EV_PROBE: {
			struct mrcd_dp_probe *pr = &dp->probes[dp->n_probes % MRCD_DP_PROBES];

			pr->seq = ++dp->n_probes;
			pr->at_ns = e->now_ns;
			pr->node = e->probe.node;
			pr->port = e->probe.port;
			pr->ev = e->probe.ev;
			pr->ok = e->probe.ok;
			pr->rtt_ns = e->probe.rtt_ns;
			break;
		}
		case MRCP_EVENT_PEER_PORTS: {
			unsigned j;

			for (j = 0; j < dp->n_peers; j++)
				if (memcmp(&dp->peers[j].node, &e->peer_ports.node, sizeof(struct mrcp_ip)) == 0)
					break;
			if (j == dp->n_peers && j < RTE_DIM(dp->peers))
				dp->n_peers++;
			if (j < RTE_DIM(dp->peers)) {
				dp->peers[j].node = e->peer_ports.node;
				dp->peers[j].mask = e->peer_ports.mask;
				dp->peers[j].at_ns = e->now_ns;
				dp->peers[j].updates++;
			}
			ip_str(&e->peer_ports.node, a, sizeof(a));
			MRCD_LOG(NOTICE, engine, "peer %s: port status mask now 0x%" PRIx32 "\n",
				 a, e->peer_ports.mask);
			break;
		}
		case MRCP_EVENT_QP_ERROR:
			MRCD_LOG(WARNING, engine, "QP %" PRIu32 " entered ERROR (%s: %s)\n", e->qpn,
				 mrcp_qp_err_name(e->qp_error.cause), mrcp_qp_err_str(e->qp_error.cause));
			break;
		default:
			break;
		}
		if (o && o->on_event)
			o->on_event(dp, o->ctx, e);
	}
	return n;
}

/* ---- the mailbox ------------------------------------------------------------------------ */

/* The mailbox runs mrcd_dp_fn calls: the caller's function and argument
 * travel in a struct on its stack, which the mailbox never touches once
 * mrcd_mailbox_call has returned. */
struct dp_call {
	mrcd_dp_fn fn;
	void *arg;
};

static void dp_call_run(void *ctx, void *arg)
{
	const struct dp_call *c = arg;

	c->fn(ctx, c->arg);
}

int mrcd_dp_call(struct mrcd_dp *dp, mrcd_dp_fn fn, void *arg, unsigned timeout_ms)
{
	struct dp_call c = { fn, arg };
	int rc = mrcd_mailbox_call(&dp->mb, dp_call_run, &c, timeout_ms);

	if (rc == -ETIMEDOUT)
		MRCD_LOG(WARNING, dp, "worker %u did not take a control call within %u ms\n",
			 dp->index, timeout_ms);
	return rc;
}

/* ---- the loop ----------------------------------------------------------------------- */

/* Sleep until the engine's next deadline, traffic, or @max_ns. @return
 * when it meant to wake up, or 0 if it did not sleep. */
static uint64_t idle_sleep(struct mrcd_dp *dp, uint64_t now, uint64_t max_ns)
{
	uint64_t wake = now + max_ns, d;
	struct pollfd pfd = { .fd = dp->doorbell, .events = POLLIN };
	struct timespec ts;
	uint64_t cnt;

	d = mrcp_next_deadline(dp->eng);
	if (d < wake)
		wake = d;
	for (unsigned i = 0; i < dp->n_ports; i++) {
		struct mrcd_dp_port *p = &dp->ports[i];

		if (p->n_pending)
			return 0;
		d = mrcd_delayq_next(p->delay_tx);
		if (d < wake)
			wake = d;
		d = mrcd_delayq_next(p->delay_rx);
		if (d < wake)
			wake = d;
		if (p->next_link_check_ns < wake)
			wake = p->next_link_check_ns;
	}
	if ((int64_t)(wake - now) < 2000)
		return 0;
	if (dp->pre_sleep && !dp->pre_sleep(dp, dp->sleep_arg)) {
		if (dp->post_sleep)
			dp->post_sleep(dp, dp->sleep_arg);
		return 0;
	}
	d = wake - now;
	ts.tv_sec = (time_t)(d / 1000000000u);
	ts.tv_nsec = (long)(d % 1000000000u);
	/* a frame another worker hands over after this check rings the doorbell */
	atomic_store(&dp->asleep, true);
	if (dp->handover && rte_ring_count(dp->handover) != 0) {
		atomic_store(&dp->asleep, false);
		if (dp->post_sleep)
			dp->post_sleep(dp, dp->sleep_arg);
		return 0;
	}
	dp->wc.sleeps++;
	if (ppoll(&pfd, 1, &ts, NULL) > 0)
		(void)!read(dp->doorbell, &cnt, sizeof(cnt));
	atomic_store(&dp->asleep, false);
	if (dp->post_sleep)
		dp->post_sleep(dp, dp->sleep_arg);
	dp->wc.sleep_ns += mrcd_dp_now_ns() - now;
	return wake;
}

/* The engine was not called from @from until @now: if that is a stall
 * (MRCD_DP_STALL_BASE_RTTS base RTTs), tell it, before anything else
 * reaches it. A nap of adaptive idle is not one: it ends before the engine's next
 * deadline, so @from is when it should have ended. */
static void loop_gap(struct mrcd_dp *dp, uint64_t from, uint64_t now)
{
	uint64_t gap = now - from;

	if ((int64_t)gap <= (int64_t)(MRCD_DP_STALL_BASE_RTTS * dp->cfg->engine.base_rtt_ns))
		return;
	dp->wc.stalls++;
	dp->wc.stall_ns += gap;
	if (gap > dp->wc.stall_max_ns)
		dp->wc.stall_max_ns = gap;
	mrcp_engine_stalled(dp->eng, now);
}

static int worker_main(void *arg)
{
	struct mrcd_dp *dp = arg;
	struct mrcd_txb *b = calloc(dp->n_ports, sizeof(*b));
	struct mrcd_rxb *rb = calloc(1, sizeof(*rb));
	uint64_t last_work = 0, resume = 0;
	uint64_t sleep_max = IDLE_SLEEP_MIN_NS;
	bool adaptive = !dp->cfg->busy_poll;

	if (!b || !rb) {
		free(b);
		free(rb);
		MRCD_LOG(ERR, dp, "worker: out of memory\n");
		mrcd_mailbox_close(&dp->mb);
		return -ENOMEM;
	}
	MRCD_LOG(INFO, dp, "worker %u of %u on lcore %u: %u ports, idle %s\n", dp->index, dp->n_workers,
		 rte_lcore_id(), dp->n_ports,
		 adaptive ? "adaptive" : "busy");
	while (!atomic_load_explicit(&dp->stop, memory_order_relaxed)) {
		uint64_t now = mrcd_dp_now_ns(), t;
		unsigned work = 0, got;

		dp->wc.loops++;
		if (resume != 0)
			loop_gap(dp, resume, now);
		if (mrcd_mailbox_poll(&dp->mb)) {
			dp->wc.calls++;
			work++;
		}
		for (unsigned i = 0; i < dp->n_ports; i++) {
			struct mrcd_dp_port *p = &dp->ports[i];
			bool room;

			if ((int64_t)(now - p->next_link_check_ns) >= 0)
				mrcd__link_check(dp, i, now);
			if (p->n_pending)
				mrcd__port_flush(dp, i, NULL);
			/* the engine is told when it changes, not every loop */
			room = p->n_pending == 0;
			if (room != p->tx_room) {
				mrcp_port_set_tx_room(dp->eng, (uint8_t)(i + 1), room);
				p->tx_room = room;
			}
		}
		got = mrcd__rx_ports(dp, rb, b, now);
		got += mrcd__rx_handover(dp, rb, b, now);
		work += got;
		/* a pause while the rings were read is told to the engine
		 * before the batch, which it takes at the time it was read
		 * (D72); when nothing was read, nothing ran since the reads
		 * ended and that stamp is the time */
		t = got ? mrcd_dp_now_ns() : dp->rx_read_ns;
		loop_gap(dp, now, t);
		now = t;
		/* the owners post their work (receives too) after the ports
		 * were read and before the engine sees what was read: a
		 * receive a client posted before its peer could send (an
		 * application's "ready" on another channel) is then in the
		 * engine before any WriteImm that needs it, even when this
		 * worker was paused in between - posted after the batch, it
		 * came too late and the QP failed (D70: no RNR) */
		for (unsigned h = 0; h < dp->n_hooks; h++)
			work += dp->hooks[h].fn(dp, dp->hooks[h].arg, now);
		mrcd__rx_flush(dp, rb, now);
		/* the completions of this batch go to their owners before the
		 * transmit pass, so what a completion handler posts (an
		 * answer, the next message) leaves in this pass with the
		 * batch's acknowledgements, not one loop later */
		work += mrcd_dp_drain_cq(dp);
		work += drain_events(dp);
		/* what is sent now is stamped now, not at the top of the loop:
		 * receiving a large batch takes a while, and a packet's send
		 * time is what loss inference compares (D65, D72) */
		t = mrcd_dp_now_ns();
		loop_gap(dp, now, t);
		now = t;
		work += mrcd__tx_engine(dp, b, now);
		/* D71: what it sent to our own addresses, received at once */
		if (dp->n_local) {
			work += mrcd__rx_local(dp, rb, b, now);
			mrcd__rx_flush(dp, rb, now);
		}
		/* the engine's clock stops here until the next pass: what
		 * follows (owners' completion handlers, a yield) is in the gap */
		resume = mrcd_dp_now_ns();
		work += mrcd_dp_drain_cq(dp);
		work += drain_events(dp);
		for (unsigned i = 0; i < dp->n_ports; i++)
			if (b[i].n || dp->ports[i].n_pending)
				mrcd__port_flush(dp, i, &b[i]);

		/* Adaptive idle: spin while traffic flows (a packet or timer in
		 * the last IDLE_GRACE_NS), so RTTs measure the path and not our
		 * naps; then sleep in growing steps, never past a deadline. */
		if (work) {
			dp->wc.busy_loops++;
			last_work = now;
			sleep_max = IDLE_SLEEP_MIN_NS;
		} else if (adaptive && now - last_work <= IDLE_GRACE_NS) {
			/* spinning for the next packet, but a client process that
			 * shares this CPU gets it at once if it has work */
			sched_yield();
		} else if (adaptive) {
			t = idle_sleep(dp, resume, sleep_max);
			if (t != 0)
				resume = t;
			if (sleep_max < IDLE_SLEEP_MAX_NS)
				sleep_max *= 2;
		}
	}
	/* what the rings did not take is freed by mrcd_dp_destroy */
	free(b);
	free(rb);
	mrcd_mailbox_close(&dp->mb);
	MRCD_LOG(INFO, dp, "worker stopped\n");
	return 0;
}

static int worker_start(struct mrcd_dp *dp)
{
	int rc;

	if (dp->worker_lcore == rte_get_main_lcore() || !rte_lcore_is_enabled(dp->worker_lcore)) {
		MRCD_LOG(ERR, dp, "lcore %u is not an enabled worker lcore (main lcore %u): add it to the EAL core list\n",
			 dp->worker_lcore, rte_get_main_lcore());
		return -EINVAL;
	}
	atomic_store(&dp->stop, false);
	/* before the launch: no call may run here while the worker runs */
	mrcd_mailbox_open(&dp->mb);
	rc = rte_eal_remote_launch(worker_main, dp, dp->worker_lcore);
	if (rc < 0) {
		mrcd_mailbox_close(&dp->mb);
		return rc;
	}
	dp->launched = true;
	return 0;
}

static void worker_stop(struct mrcd_dp *dp)
{
	uint64_t one = 1;

	if (!dp->launched)
		return;
	atomic_store(&dp->stop, true);
	if (write(dp->doorbell, &one, sizeof(one)) < 0) {
		/* already signalled */
	}
	rte_eal_wait_lcore(dp->worker_lcore);
	dp->launched = false;
}

int mrcd_dp_start(struct mrcd_dp *dp)
{
	for (unsigned k = 0; k < dp->n_workers; k++) {
		int rc = worker_start(dp->w[k]);

		if (rc < 0) {
			mrcd_dp_stop(dp);
			return rc;
		}
	}
	return 0;
}

void mrcd_dp_stop(struct mrcd_dp *dp)
{
	for (unsigned k = 0; k < dp->n_workers; k++)
		if (dp->w[k])
			worker_stop(dp->w[k]);
}
