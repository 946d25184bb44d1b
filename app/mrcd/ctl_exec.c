/* ctl_exec.c - running a parsed control request (ctl.h: mrcd_ctl_execute):
 * the command's row in lib/ctl's table says where it runs (route) and how
 * several workers' answers fold (combine); ctl_cmds.c has the handlers.
 * This file knows no command by name.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ctl.h"
#include "ctl_cmds.h"
#include "dp_selftest.h"

#define CALL_TIMEOUT_MS 2000 /* a worker takes a call within an iteration or two */

/* ---- one worker --------------------------------------------------------------- */

static void call_fn(struct mrcd_dp *w, void *arg)
{
	struct mrcd_ctl_call *x = arg;

	x->w = w;
	x->now = mrcd_dp_now_ns();
	mrcd_ctl_cmd_run(x);
}

/* Run @x on worker @w (mrcd_dp_call). */
static void run_on(struct mrcd_dp *w, struct mrcd_ctl_call *x)
{
	if (mrcd_dp_call(w, call_fn, x, CALL_TIMEOUT_MS) == -ETIMEDOUT)
		mrcd_ctl_fail(x, -ETIMEDOUT, "worker %u did not take the request within %u ms",
			      mrcd_dp_worker_index(w), CALL_TIMEOUT_MS);
}

/* ---- combining answers ------------------------------------------------------------- */

/* Add every integer of @from to the same key of @to, recursively through
 * objects (counters of several workers). */
static void sum_counters(json_t *to, const json_t *from)
{
	const char *k;
	json_t *v;

	json_object_foreach((json_t *)(uintptr_t)from, k, v) {
		json_t *t = json_object_get(to, k);

		if (json_is_integer(v) && json_is_integer(t))
			json_integer_set(t, json_integer_value(t) + json_integer_value(v));
		else if (json_is_object(v) && json_is_object(t))
			sum_counters(t, v);
	}
}

/* The same ports, in the same order: their counters add up, the rest
 * (identity, addresses, link and admin state) is the first worker's. */
static void ports_merge(json_t *to, const json_t *from)
{
	for (size_t i = 0; i < json_array_size(from); i++) {
		json_t *t = json_array_get(to, i), *f = json_array_get(from, i);

#define X(c, d) json_integer_set(json_object_get(t, #c), json_integer_value(json_object_get(t, #c)) + \
				 json_integer_value(json_object_get(f, #c)));
		MRCD_DP_PORT_COUNTERS(X)
#undef X
	}
}

/* Several workers' status: QPs and clients add up; a peer's port mask is
 * the one its latest update left in any worker's engine. */
static void status_merge(json_t *to, const json_t *from)
{
	static const char *const keys[] = { "qps", "clients" };
	json_t *peers = json_object_get(to, "peers"), *p;
	size_t i;

	for (unsigned k = 0; k < 2; k++) {
		json_t *t = json_object_get(to, keys[k]);

		json_integer_set(t, json_integer_value(t) + json_integer_value(json_object_get(from, keys[k])));
	}
	json_array_foreach(json_object_get(from, "peers"), i, p) {
		size_t j;
		json_t *q;
		bool found = false;

		json_array_foreach(peers, j, q) {
			if (!json_equal(json_object_get(q, "node"), json_object_get(p, "node")))
				continue;
			found = true;
			if (json_real_value(json_object_get(p, "age_s")) < json_real_value(json_object_get(q, "age_s")))
				json_array_set(peers, j, p);
			break;
		}
		if (!found)
			json_array_append(peers, p);
	}
}

/* Fold one more worker's answer into the first one's. */
static void combine(enum mrcd_ctl_combine how, json_t *to, json_t *from)
{
	switch (how) {
	case MRCD_CTL_COMBINE_ONE:
		break;
	case MRCD_CTL_COMBINE_LIST:
		json_array_extend(to, from);
		break;
	case MRCD_CTL_COMBINE_PORTS:
		ports_merge(to, from);
		break;
	case MRCD_CTL_COMBINE_STATUS:
		status_merge(to, from);
		break;
	case MRCD_CTL_COMBINE_SUM:
		sum_counters(to, from);
		break;
	}
}

/* ---- routes ------------------------------------------------------------------------ */

/* Every worker in turn, stopping at the first error; the answers folded
 * into worker 0's. */
static void run_all(struct mrcd_dp *dp, struct mrcd_ctl_call *x)
{
	enum mrcd_ctl_combine how = mrcd_ctl_cmd_combine(x->req->cmd);

	run_on(dp, x);
	for (unsigned k = 1; k < mrcd_dp_n_workers(dp) && !x->err; k++) {
		struct mrcd_ctl_call y = { .req = x->req, .sess = x->sess };

		run_on(mrcd_dp_worker(dp, k), &y);
		if (y.err) {
			x->err = y.err;
			memcpy(x->reason, y.reason, sizeof(x->reason));
		}
		if (y.result && x->result)
			combine(how, x->result, y.result);
		json_decref(y.result);
	}
}

/* The worker a new selftest goes to: the one asked for, else the one with
 * the fewest QPs (a racy count is good enough). */
static struct mrcd_dp *pick_worker(struct mrcd_dp *dp, int64_t want)
{
	struct mrcd_dp *best = dp;
	unsigned best_n = UINT32_MAX;

	if (want >= 0)
		return mrcd_dp_worker(dp, (unsigned)want);
	for (unsigned k = 0; k < mrcd_dp_n_workers(dp); k++) {
		struct mrcd_dp *w = mrcd_dp_worker(dp, k);
		unsigned n = mrcd_dp_qp_count(w);

		if (n < best_n) {
			best = w;
			best_n = n;
		}
	}
	return best;
}

/* Run @x where its route says. With one worker every route but DAEMON is
 * that worker. */
static void dispatch(struct mrcd_dp *dp, struct mrcd_ctl_call *x)
{
	const struct mrcd_ctl_req *r = x->req;
	unsigned n = mrcd_dp_n_workers(dp);
	struct mrcd_dp *w;

	switch (mrcd_ctl_cmd_route(r->cmd)) {
	case MRCD_CTL_ROUTE_DAEMON:
	case MRCD_CTL_ROUTE_SOCKET:
		x->w = dp;
		x->now = mrcd_dp_now_ns();
		mrcd_ctl_cmd_run(x);
		return;
	case MRCD_CTL_ROUTE_WORKER0:
		run_on(dp, x);
		return;
	case MRCD_CTL_ROUTE_ALL:
		run_all(dp, x);
		return;
	case MRCD_CTL_ROUTE_QPN:
		w = n == 1 ? dp : mrcd_dp_of_qpn(dp, (uint32_t)r->route_key);
		if (!w)
			mrcd_ctl_fail(x, -ENOENT, "args.qpn: no QP %" PRIu32, (uint32_t)r->route_key);
		else
			run_on(w, x);
		return;
	case MRCD_CTL_ROUTE_PEER:
		/* from the first engine with a QP to that node */
		for (unsigned k = 0; k < n; k++) {
			struct mrcd_ctl_call y = { .req = r, .sess = x->sess };

			run_on(mrcd_dp_worker(dp, k), &y);
			if (y.err != -ENOENT || k == n - 1) {
				*x = y;
				return;
			}
			json_decref(y.result);
		}
		return;
	case MRCD_CTL_ROUTE_PICK:
		if (r->route_key >= (int64_t)n) {
			mrcd_ctl_fail(x, -EINVAL, "args.worker: %" PRId64 " is not a worker: the daemon has %u (0..%u)",
				      r->route_key, n, n - 1);
			return;
		}
		w = n == 1 ? dp : pick_worker(dp, r->route_key);
		if (!w)
			mrcd_ctl_fail(x, -EINVAL, "args.worker: the daemon has %u workers", n);
		else
			run_on(w, x);
		return;
	case MRCD_CTL_ROUTE_SELFTEST:
		run_on(mrcd_dp_worker(dp, mrcd_st_worker_of((uint32_t)r->route_key, n)), x);
		return;
	case MRCD_CTL_ROUTE_SESSION:
		run_on(mrcd_client_worker(x->sess), x);
		return;
	}
	mrcd_ctl_fail(x, -ENOENT, "command not executable here");
}

json_t *mrcd_ctl_execute(struct mrcd_dp *dp, const struct mrcd_ctl_req *req, struct mrcd_client *sess,
			 int *err, char *reason, size_t reason_len)
{
	struct mrcd_ctl_call x = { .req = req, .sess = sess };

	if (mrcd_ctl_cmd_needs_session(req->cmd) && !sess) {
		*err = -EPERM;
		snprintf(reason, reason_len, "needs a client session (attach first)");
		return NULL;
	}
	dispatch(dp, &x);
	*err = x.err;
	if (x.err) {
		snprintf(reason, reason_len, "%s", x.reason);
		json_decref(x.result);
		return NULL;
	}
	if (!x.result) {
		*err = -ENOMEM;
		snprintf(reason, reason_len, "out of memory");
	}
	return x.result;
}
