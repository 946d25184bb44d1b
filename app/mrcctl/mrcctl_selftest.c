/* mrcctl_selftest.c - `mrcctl selftest`: a verified transfer between two
 * daemons through their selftest_* commands (docs/control.md "Selftest"):
 * set up both sides, run, follow the progress, verdict and report. */
#define _GNU_SOURCE /* vasprintf */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>


#include "mrcctl.h"

/* ---- selftest orchestration ------------------------------------------------ */

#define RPC_TIMEOUT_S 10.0

struct side {
	const char *role;       /* "sender" / "receiver", for messages */
	struct conn c;
	bool connected;
	uint32_t id;            /* 0: none yet */
	json_t *status;         /* latest selftest_status result */
};

struct selftest {
	struct opts *o;
	struct side a, b;       /* a: -s (sender), b: --peer (receiver) */
	uint64_t bytes, msg_size, window, region;
	bool msg_size_set;
	int64_t worker, peer_worker; /* -1: the daemon picks (D63) */
	const char *op;
	bool latency;           /* --latency: op ping_pong, bytes = iters x msg_size */
	double timeout_s;
};

/*
 * One call on @s; prints its own errors. @return 0 with *@result, or an
 * exit code (EXIT_DAEMON, EXIT_IO, EXIT_USAGE).
 */
static int side_call(struct side *s, const char *cmd, json_t *args,
		     double timeout_s, json_t **result)
{
	char reason[MRCD_CTL_REASON_MAX], what[96], *line;
	json_t *error = NULL;
	int64_t id = s->c.next_id++;
	int rc;

	snprintf(what, sizeof(what), "selftest: %s %s", s->role, cmd);
	*result = NULL;
	line = request_build(cmd, args, id, reason, sizeof(reason), &rc);
	json_decref(args);
	if (line == NULL) {
		err_cmd(what, "%s (%s)", reason, errno_code(-rc));
		return rc == -ENOMEM ? EXIT_IO : EXIT_USAGE;
	}
	if (!s->connected) {
		free(line);
		return EXIT_IO;
	}
	rc = conn_call_line(&s->c, line, id, deadline_after(timeout_s), result, &error);
	free(line);
	if (rc < 0) {
		print_io_error(what, s->c.path, rc, timeout_s);
		/* the stream may hold a late reply now: stop using it */
		conn_close(&s->c);
		s->connected = false;
		return EXIT_IO;
	}
	if (rc == CALL_ERROR) {
		print_daemon_error(what, error);
		json_decref(error);
		return EXIT_DAEMON;
	}
	return 0;
}

static json_t *id_args(uint32_t id)
{
	return json_pack("{s:I}", "id", (json_int_t)id);
}

/* A result's unsigned field as a number (integers or reals); 0 if absent. */
static double num_field(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : 0;
}

static unsigned long long u64_field(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	if (json_is_integer(v))
		return json_integer_value(v) < 0 ? 0 : (unsigned long long)json_integer_value(v);
	if (json_is_real(v) && json_real_value(v) > 0)
		return (unsigned long long)json_real_value(v);
	return 0;
}

static const char *str_field(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s != NULL ? s : "";
}

/* selftest_listen / selftest_start results carry {id, info}. */
static int take_id_info(struct side *s, const char *cmd, const json_t *res, const char **info)
{
	const json_t *id = json_object_get(res, "id");

	*info = json_string_value(json_object_get(res, "info"));
	if (!json_is_integer(id) || json_integer_value(id) < 1 ||
	    json_integer_value(id) > 0xffffffffLL || *info == NULL) {
		fprintf(stderr, "%s: selftest: %s %s: the result lacks an integer id or a string info\n",
			prog, s->role, cmd);
		return EXIT_IO;
	}
	s->id = (uint32_t)json_integer_value(id);
	return 0;
}

static int side_status(struct side *s)
{
	json_t *res;
	int rc = side_call(s, "selftest_status", id_args(s->id), RPC_TIMEOUT_S, &res);

	if (rc != 0)
		return rc;
	json_decref(s->status);
	s->status = res;
	return 0;
}

static void side_stop(struct side *s)
{
	json_t *res;

	if (s->id == 0 || !s->connected)
		return;
	if (side_call(s, "selftest_stop", id_args(s->id), 2.0, &res) == 0)
		json_decref(res);
	s->id = 0;
}

static void fmt_bytes(double b, char *out, size_t n)
{
	static const char *const unit[] = {"B", "kB", "MB", "GB", "TB", "PB"};
	unsigned u = 0;

	while (b >= 1000 && u + 1 < sizeof(unit) / sizeof(unit[0])) {
		b /= 1000;
		u++;
	}
	snprintf(out, n, u ? "%.2f %s" : "%.0f %s", b, unit[u]);
}

static void progress(const json_t *st)
{
	char b[32];

	if (strcmp(str_field(st, "op"), "ping_pong") == 0) {
		const json_t *r = json_object_get(st, "rtt");

		printf("  %5.1f s  %llu round trips  mean %.2f us\n", num_field(st, "elapsed_ns") / 1e9,
		       u64_field(st, "msgs_done"), num_field(r, "mean_ns") / 1e3);
		fflush(stdout);
		return;
	}
	fmt_bytes(num_field(st, "bytes_done"), b, sizeof(b));
	printf("  %5.1f s  %s  %.2f Gbit/s  rtx %llu\n", num_field(st, "elapsed_ns") / 1e9, b,
	       num_field(st, "goodput_gbps"), u64_field(st, "rtx_total"));
	fflush(stdout);
}

static bool state_is(const json_t *st, const char *s)
{
	return st != NULL && strcmp(str_field(st, "state"), s) == 0;
}

/* The immediates the receiver must have seen: the sender's completed
 * WriteImms; in a ping-pong, its round trips (the last message's own
 * completion may still wait for its acknowledgement). */
static unsigned long long expected_imm(const json_t *a)
{
	if (strcmp(str_field(a, "op"), "ping_pong") == 0)
		return u64_field(a, "msgs_done");
	return u64_field(a, "imm_msgs");
}

/* Steps 4-6: wait for the sender to finish, then for the receiver to have
 * seen as many immediates. @return 0 or an exit code. */
static int selftest_wait(struct selftest *t, bool *finished)
{
	uint64_t start = now_ns(), deadline = deadline_after(t->timeout_s);
	uint64_t next_tick = start, next_print = start + NS_PER_S;
	int rc;

	*finished = false;
	for (;;) {
		rc = side_status(&t->a);
		if (rc != 0)
			return rc;
		if (state_is(t->a.status, "done") || state_is(t->a.status, "failed")) {
			*finished = true;
			break;
		}
		if (!t->o->json && (int64_t)(now_ns() - next_print) >= 0) {
			progress(t->a.status);
			next_print += NS_PER_S;
		}
		if ((int64_t)(now_ns() - deadline) >= 0)
			break;
		next_tick += 100 * NS_PER_MS;
		while (poll(NULL, 0, ms_left(next_tick)) < 0 && errno == EINTR)
			;
	}
	if (!*finished) {
		fprintf(stderr, "%s: selftest: the sender did not finish within %g s (state %s)\n",
			prog, t->timeout_s, str_field(t->a.status, "state"));
		return side_status(&t->b);
	}
	/* step 6: the receiver catches up with the sender's immediates
	 * (ping-pong: it has seen every message whose echo came back) */
	deadline = deadline_after(5.0);
	for (;;) {
		rc = side_status(&t->b);
		if (rc != 0)
			return rc;
		if (u64_field(t->b.status, "imm_msgs") == expected_imm(t->a.status))
			return 0;
		if ((int64_t)(now_ns() - deadline) >= 0) {
			fprintf(stderr, "%s: selftest: the receiver saw %llu immediates, the sender "
				"sent %llu\n", prog, u64_field(t->b.status, "imm_msgs"),
				expected_imm(t->a.status));
			return 0;
		}
		next_tick = now_ns() + 100 * NS_PER_MS;
		while (poll(NULL, 0, ms_left(next_tick)) < 0 && errno == EINTR)
			;
	}
}

static bool selftest_verdict(const struct selftest *t, bool print)
{
	const json_t *a = t->a.status, *b = t->b.status;
	bool ok = true;

	if (a == NULL || b == NULL)
		return false;
	if (!state_is(a, "done")) {
		ok = false;
		if (print)
			fprintf(stderr, "%s: selftest: sender state %s%s%s\n", prog,
				str_field(a, "state"), str_field(a, "error")[0] ? ": " : "",
				str_field(a, "error"));
	}
	if (!json_is_integer(json_object_get(b, "verify_errors")) ||
	    u64_field(b, "verify_errors") != 0) {
		ok = false;
		if (print)
			fprintf(stderr, "%s: selftest: receiver verify_errors %llu\n", prog,
				u64_field(b, "verify_errors"));
	}
	/* every message must have been checked: the receiver saw every immediate */
	if (u64_field(b, "imm_msgs") != expected_imm(a)) {
		ok = false;
		if (print)
			fprintf(stderr, "%s: selftest: the receiver verified up to %llu immediates of %llu\n",
				prog, u64_field(b, "imm_msgs"), expected_imm(a));
	}
	if (t->latency) {
		/* the echoes were checked by the sender; the round trips counted */
		const json_t *r = json_object_get(a, "rtt");

		if (!json_is_integer(json_object_get(a, "verify_errors")) ||
		    u64_field(a, "verify_errors") != 0) {
			ok = false;
			if (print)
				fprintf(stderr, "%s: selftest: sender (echo) verify_errors %llu\n", prog,
					u64_field(a, "verify_errors"));
		}
		if (u64_field(r, "samples") == 0 || u64_field(r, "p50_ns") == 0) {
			ok = false;
			if (print)
				fprintf(stderr, "%s: selftest: no round-trip times in the sender's status\n",
					prog);
		}
	}
	if (strcmp(str_field(a, "qp_state"), "RTS") != 0 ||
	    strcmp(str_field(b, "qp_state"), "RTS") != 0) {
		ok = false;
		if (print)
			fprintf(stderr, "%s: selftest: qp_state sender %s, receiver %s (want RTS)\n",
				prog, str_field(a, "qp_state"), str_field(b, "qp_state"));
	}
	return ok;
}

static void selftest_report(const struct selftest *t, bool ok)
{
	const json_t *a = t->a.status, *b = t->b.status;
	char by[32];

	if (t->o->json) {
		json_t *o = json_pack("{s:O?, s:O?, s:b}", "sender", a, "receiver", b, "ok", ok);

		if (o != NULL)
			print_json(o);
		json_decref(o);
		return;
	}
	if (a == NULL || b == NULL) {
		printf("selftest: FAIL\n");
		return;
	}
	fmt_bytes(num_field(a, "bytes_done"), by, sizeof(by));
	printf("selftest: %s\n", ok ? "PASS" : "FAIL");
	printf("  bytes:          %llu (%s)\n", u64_field(a, "bytes_done"), by);
	printf("  seconds:        %.3f\n", num_field(a, "elapsed_ns") / 1e9);
	printf("  goodput:        %.2f Gbit/s\n", num_field(a, "goodput_gbps"));
	printf("  messages:       %llu\n", u64_field(a, "msgs_done"));
	printf("  retransmits:    %llu\n", u64_field(a, "rtx_total"));
	printf("  EV transitions: %llu\n", u64_field(a, "ev_transitions"));
	printf("  verify errors:  %llu\n", u64_field(b, "verify_errors") + u64_field(a, "verify_errors"));
	if (t->latency) {
		const json_t *r = json_object_get(a, "rtt");

		printf("  round trips:    %llu counted (%llu warm-up), %llu B each way\n",
		       u64_field(r, "samples"), u64_field(r, "warmup"), u64_field(a, "msg_size"));
		printf("  rtt_us:         min %.2f mean %.2f p50 %.2f p90 %.2f p99 %.2f max %.2f\n",
		       num_field(r, "min_ns") / 1e3, num_field(r, "mean_ns") / 1e3,
		       num_field(r, "p50_ns") / 1e3, num_field(r, "p90_ns") / 1e3,
		       num_field(r, "p99_ns") / 1e3, num_field(r, "max_ns") / 1e3);
	}
	printf("  qp_state:       sender %s, receiver %s\n", str_field(a, "qp_state"),
	       str_field(b, "qp_state"));
}

/* Steps 1-4: set both sides up and start sending. @return 0 or an exit code. */
static int selftest_setup(struct selftest *t)
{
	json_t *res, *args;
	const char *info;
	char *b_info;
	int rc;

	/* 1: the receiver listens */
	args = json_pack("{s:I}", "region_bytes", (json_int_t)t->region);
	if (t->peer_worker >= 0)
		json_object_set_new(args, "worker", json_integer(t->peer_worker));
	rc = side_call(&t->b, "selftest_listen", args, RPC_TIMEOUT_S, &res);
	if (rc != 0)
		return rc;
	rc = take_id_info(&t->b, "selftest_listen", res, &info);
	b_info = rc == 0 ? xstrdup(info) : NULL;
	json_decref(res);
	if (rc != 0)
		return rc;
	/* 2: the sender opens towards it */
	args = json_pack("{s:s, s:I, s:I, s:I, s:s}", "peer_info", b_info, "bytes",
			 (json_int_t)t->bytes, "msg_size", (json_int_t)t->msg_size, "window",
			 (json_int_t)t->window, "op", t->op);
	free(b_info);
	if (t->worker >= 0)
		json_object_set_new(args, "worker", json_integer(t->worker));
	rc = side_call(&t->a, "selftest_start", args, RPC_TIMEOUT_S, &res);
	if (rc != 0)
		return rc;
	rc = take_id_info(&t->a, "selftest_start", res, &info);
	if (rc != 0) {
		json_decref(res);
		return rc;
	}
	/* 3: the receiver connects back */
	args = json_pack("{s:I, s:s}", "id", (json_int_t)t->b.id, "peer_info", info);
	json_decref(res);
	rc = side_call(&t->b, "selftest_accept", args, RPC_TIMEOUT_S, &res);
	if (rc != 0)
		return rc;
	json_decref(res);
	/* 4: go */
	rc = side_call(&t->a, "selftest_run", id_args(t->a.id), RPC_TIMEOUT_S, &res);
	if (rc != 0)
		return rc;
	json_decref(res);
	return 0;
}

int run_selftest(struct opts *o, int argc, char **argv)
{
	struct selftest t = {
		.o = o, .a = {.role = "sender"}, .b = {.role = "receiver"},
		.bytes = 256ull << 20, .msg_size = 64 << 10, .window = 16,
		.region = 64 << 20, .worker = -1, .peer_worker = -1, .op = "write_imm",
		.timeout_s = o->timeout_set ? o->timeout_s : SELFTEST_TIMEOUT_S,
	};
	const char *peer = NULL, *val;
	bool finished = false, ok, bytes_set = false;
	uint64_t iters = 0;
	int rc;

	for (int i = 0; i < argc; i++) {
		int r;

		if (strcmp(argv[i], "--json") == 0) {
			o->json = true;
			continue;
		}
		if ((r = take_opt(argc, argv, &i, "--peer", &val)) != 0) {
			if (r < 0)
				return EXIT_USAGE;
			peer = val;
		} else if ((r = take_opt(argc, argv, &i, "--bytes", &val)) != 0) {
			if (r < 0 || parse_size("--bytes", val, &t.bytes) < 0)
				return EXIT_USAGE;
			bytes_set = true;
		} else if (strcmp(argv[i], "--latency") == 0) {
			t.latency = true;
		} else if ((r = take_opt(argc, argv, &i, "--iters", &val)) != 0) {
			if (r < 0 || parse_size("--iters", val, &iters) < 0)
				return EXIT_USAGE;
			if (iters == 0) {
				fprintf(stderr, "%s: selftest: --iters: at least 1 round trip\n", prog);
				return EXIT_USAGE;
			}
		} else if ((r = take_opt(argc, argv, &i, "--size", &val)) != 0) {
			if (r < 0 || parse_size("--size", val, &t.msg_size) < 0)
				return EXIT_USAGE;
			t.msg_size_set = true;
		} else if ((r = take_opt(argc, argv, &i, "--msg-size", &val)) != 0) {
			if (r < 0 || parse_size("--msg-size", val, &t.msg_size) < 0)
				return EXIT_USAGE;
			t.msg_size_set = true;
		} else if ((r = take_opt(argc, argv, &i, "--window", &val)) != 0) {
			if (r < 0 || parse_size("--window", val, &t.window) < 0)
				return EXIT_USAGE;
		} else if ((r = take_opt(argc, argv, &i, "--region", &val)) != 0) {
			if (r < 0 || parse_size("--region", val, &t.region) < 0)
				return EXIT_USAGE;
		} else if ((r = take_opt(argc, argv, &i, "--worker", &val)) != 0) {
			if (r < 0 || parse_worker("--worker", val, &t.worker) < 0)
				return EXIT_USAGE;
		} else if ((r = take_opt(argc, argv, &i, "--peer-worker", &val)) != 0) {
			if (r < 0 || parse_worker("--peer-worker", val, &t.peer_worker) < 0)
				return EXIT_USAGE;
		} else if ((r = take_opt(argc, argv, &i, "--op", &val)) != 0) {
			if (r < 0)
				return EXIT_USAGE;
			t.op = val;
		} else if ((r = take_opt(argc, argv, &i, "--timeout", &val)) != 0) {
			if (r < 0 || parse_seconds(val, &t.timeout_s) < 0)
				return EXIT_USAGE;
		} else {
			fprintf(stderr, "%s: selftest: unknown argument \"%s\"\n", prog, argv[i]);
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (peer == NULL) {
		fprintf(stderr, "%s: selftest: --peer SOCKET is required\n", prog);
		return EXIT_USAGE;
	}
	if (strcmp(t.op, "ping_pong") == 0)
		t.latency = true; /* --op ping_pong is --latency */
	if (iters != 0 && !t.latency) {
		fprintf(stderr, "%s: selftest: --iters counts round trips: it needs --latency\n", prog);
		return EXIT_USAGE;
	}
	if (t.latency) {
		/* a ping-pong: round trips of one message, not a volume */
		if (bytes_set && iters != 0) {
			fprintf(stderr, "%s: selftest: --iters or --bytes, not both\n", prog);
			return EXIT_USAGE;
		}
		if (!t.msg_size_set)
			t.msg_size = 64;
		iters = iters ? iters : 10000;
		if (iters > 1000000) {
			fprintf(stderr, "%s: selftest: --iters: at most 1000000 round trips\n", prog);
			return EXIT_USAGE;
		}
		/* a size the parser refuses stays one (no overflow) */
		if (!bytes_set)
			t.bytes = t.msg_size <= (16u << 20) ? iters * t.msg_size : t.msg_size;
		t.window = 1;
		t.op = "ping_pong";
	}
	/* every range is checked by the parser; an all-zero peer_info stands in */
	{
		char hex[2 * MRCD_CTL_CONN_INFO_LEN + 1], reason[MRCD_CTL_REASON_MAX], *line;
		json_t *args;

		memset(hex, '0', sizeof(hex) - 1);
		hex[sizeof(hex) - 1] = '\0';
		args = json_pack("{s:s, s:I, s:I, s:I, s:s}", "peer_info", hex,
				 "bytes", (json_int_t)(t.bytes > INT64_MAX ? INT64_MAX : t.bytes),
				 "msg_size", (json_int_t)(t.msg_size > INT64_MAX ? INT64_MAX : t.msg_size),
				 "window", (json_int_t)(t.window > INT64_MAX ? INT64_MAX : t.window),
				 "op", t.op);
		line = request_build("selftest_start", args, 1, reason, sizeof(reason), &rc);
		json_decref(args);
		if (line == NULL) {
			err_cmd("selftest", "%s (%s)", reason, errno_code(-rc));
			return rc == -ENOMEM ? EXIT_IO : EXIT_USAGE;
		}
		free(line);
		args = json_pack("{s:I}", "region_bytes",
				 (json_int_t)(t.region > INT64_MAX ? INT64_MAX : t.region));
		line = request_build("selftest_listen", args, 1, reason, sizeof(reason), &rc);
		json_decref(args);
		if (line == NULL) {
			err_cmd("selftest", "--region: %s (%s)", reason, errno_code(-rc));
			return rc == -ENOMEM ? EXIT_IO : EXIT_USAGE;
		}
		free(line);
	}

	rc = conn_open(&t.a.c, o->sock, RPC_TIMEOUT_S);
	if (rc < 0) {
		err_cmd("selftest", "cannot connect to %s: %s", o->sock, strerror(-rc));
		return EXIT_IO;
	}
	t.a.connected = true;
	rc = conn_open(&t.b.c, peer, RPC_TIMEOUT_S);
	if (rc < 0) {
		err_cmd("selftest", "cannot connect to %s: %s", peer, strerror(-rc));
		conn_close(&t.a.c);
		return EXIT_IO;
	}
	t.b.connected = true;

	rc = selftest_setup(&t);
	if (rc == 0)
		rc = selftest_wait(&t, &finished);
	/* 7: free both sides, whatever happened */
	side_stop(&t.a);
	side_stop(&t.b);
	if (rc == 0) {
		ok = finished && selftest_verdict(&t, true);
		selftest_report(&t, ok);
		rc = ok ? 0 : EXIT_SELFTEST;
	} else if (o->json) {
		selftest_report(&t, false);
	}
	json_decref(t.a.status);
	json_decref(t.b.status);
	conn_close(&t.a.c);
	conn_close(&t.b.c);
	return rc;
}

