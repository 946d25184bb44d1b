/* mrcctl.c - the operator CLI for mrcd's control socket (docs/control.md):
 * turns `mrcctl <command> key=value...` into one request line, checks it with
 * the daemon's own parser (mrcd_ctl_parse) before sending, and prints the
 * reply as aligned text, a table or JSON. `mrcctl selftest` orchestrates a
 * two-daemon transfer through the selftest_* commands. Knows nothing about
 * how the daemon executes a request.
 */
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

#include "mrcd_ctl.h"

enum {
	EXIT_DAEMON = 1,   /* the daemon answered an error */
	EXIT_USAGE = 2,    /* bad command line; nothing was sent */
	EXIT_IO = 3,       /* cannot connect, I/O error, bad reply, timeout */
	EXIT_SELFTEST = 4, /* selftest failed verification or did not finish */
};

#define DEFAULT_SOCKET "/run/mrcd/mrcd.sock"
#define DEFAULT_TIMEOUT_S 10.0
#define SELFTEST_TIMEOUT_S 120.0
#define REPLY_MAX (64u << 20)          /* longest reply line accepted, bytes */
#define NS_PER_S 1000000000ull
#define NS_PER_MS 1000000ull

static const char *prog = "mrcctl";

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

static uint64_t deadline_after(double seconds)
{
	return now_ns() + (uint64_t)(seconds * 1e9);
}

/* Milliseconds left until @deadline for poll(2): 0 once it passed. */
static int ms_left(uint64_t deadline)
{
	uint64_t now = now_ns();

	if ((int64_t)(deadline - now) <= 0)
		return 0;
	return (int)((deadline - now + NS_PER_MS - 1) / NS_PER_MS);
}

static void __attribute__((format(printf, 2, 3))) err_cmd(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: %s: ", prog, cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* The code name of a local failure, from the protocol's errno table. */
static const char *errno_code(int e)
{
	const char *n = mrcd_ctl_errno_name(e);

	return n != NULL ? n : "error";
}

/* ---- connection --------------------------------------------------------- */

struct conn {
	int fd;
	const char *path;
	char *buf;           /* bytes received and not yet consumed */
	size_t len, cap;
	int64_t next_id;
};

/** @return 0, or a negative errno (-ENAMETOOLONG, connect(2)'s). */
static int conn_open(struct conn *c, const char *path, double timeout_s)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct timeval tv = {.tv_sec = (time_t)timeout_s,
			     .tv_usec = (suseconds_t)((timeout_s - floor(timeout_s)) * 1e6)};

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->path = path;
	c->next_id = 1;
	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		return -errno;
	/* connect(2) on a UNIX socket waits for backlog room up to SO_SNDTIMEO */
	if (tv.tv_sec == 0 && tv.tv_usec == 0)
		tv.tv_usec = 1000;
	setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(c->fd, (const struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;

		close(c->fd);
		c->fd = -1;
		return e == EAGAIN || e == EINPROGRESS ? -ETIMEDOUT : -e;
	}
	return 0;
}

static void conn_close(struct conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	free(c->buf);
	c->buf = NULL;
	c->len = c->cap = 0;
}

static int send_all(struct conn *c, const char *p, size_t n, uint64_t deadline)
{
	while (n > 0) {
		struct pollfd pfd = {.fd = c->fd, .events = POLLOUT};
		ssize_t w;
		int pr = poll(&pfd, 1, ms_left(deadline));

		if (pr < 0 && errno == EINTR)
			continue;
		if (pr < 0)
			return -errno;
		if (pr == 0)
			return -ETIMEDOUT;
		w = send(c->fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (w < 0)
			return -errno;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Read up to and including '\n'; the line (NUL in place of '\n') is
 * c->buf[0..*line_len). @return 0, -ETIMEDOUT, -ECONNRESET on EOF,
 * -EMSGSIZE past REPLY_MAX, or another negative errno. */
static int recv_line(struct conn *c, uint64_t deadline, size_t *line_len)
{
	for (;;) {
		char *nl = c->len ? memchr(c->buf, '\n', c->len) : NULL;
		struct pollfd pfd = {.fd = c->fd, .events = POLLIN};
		ssize_t r;
		int pr;

		if (nl != NULL) {
			*nl = '\0';
			*line_len = (size_t)(nl - c->buf);
			return 0;
		}
		if (c->len >= REPLY_MAX)
			return -EMSGSIZE;
		if (c->cap - c->len < 4096) {
			size_t cap = c->cap ? c->cap * 2 : 65536;
			char *b = realloc(c->buf, cap);

			if (b == NULL)
				return -ENOMEM;
			c->buf = b;
			c->cap = cap;
		}
		pr = poll(&pfd, 1, ms_left(deadline));
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr < 0)
			return -errno;
		if (pr == 0)
			return -ETIMEDOUT;
		r = recv(c->fd, c->buf + c->len, c->cap - c->len, MSG_DONTWAIT);
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -ECONNRESET;
		c->len += (size_t)r;
	}
}

static void consume_line(struct conn *c, size_t line_len)
{
	size_t used = line_len + 1;

	memmove(c->buf, c->buf + used, c->len - used);
	c->len -= used;
}

/* ---- requests ---------------------------------------------------------- */

/*
 * Build a request line (with '\n') for @cmd with @args (borrowed; NULL for
 * none) and check it with the daemon's parser. @return the line (free()
 * it) or NULL with @reason set.
 */
static char *request_build(const char *cmd, json_t *args, int64_t id, char *reason,
			   size_t reason_len, int *rc)
{
	struct mrcd_ctl_req req;
	json_t *o = json_pack("{s:i, s:s, s:I}", "v", MRCD_CTL_PROTO_VERSION, "cmd", cmd, "id",
			      (json_int_t)id);
	char *text, *line;
	size_t n;

	*rc = -ENOMEM;
	snprintf(reason, reason_len, "out of memory");
	if (o == NULL)
		return NULL;
	if (args != NULL && json_object_size(args) > 0 && json_object_set(o, "args", args) < 0) {
		json_decref(o);
		return NULL;
	}
	text = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (text == NULL)
		return NULL;
	n = strlen(text);
	*rc = mrcd_ctl_parse(text, n, &req, reason, reason_len);
	if (*rc < 0) {
		free(text);
		return NULL;
	}
	line = realloc(text, n + 2);
	if (line == NULL) {
		free(text);
		*rc = -ENOMEM;
		return NULL;
	}
	line[n] = '\n';
	line[n + 1] = '\0';
	return line;
}

enum call_status { CALL_OK = 0, CALL_ERROR = 1 };

/*
 * Send @line (id @id) and read its reply. @return CALL_OK with *@result
 * (never NULL; an empty object if the reply had none), CALL_ERROR with
 * *@error (the reply's error object), or a negative errno: -ETIMEDOUT,
 * -ECONNRESET, -EBADMSG (not a valid reply), or an I/O errno.
 * The caller json_decref()s what it is given.
 */
static int conn_call_line(struct conn *c, const char *line, int64_t id, uint64_t deadline,
			  json_t **result, json_t **error)
{
	json_error_t jerr;
	json_t *rep, *ok, *rid, *v;
	size_t n = 0;
	int rc;

	*result = *error = NULL;
	rc = send_all(c, line, strlen(line), deadline);
	if (rc < 0)
		return rc;
	rc = recv_line(c, deadline, &n);
	if (rc < 0)
		return rc;
	rep = json_loadb(c->buf, n, 0, &jerr);
	consume_line(c, n);
	if (rep == NULL)
		return -EBADMSG;
	ok = json_object_get(rep, "ok");
	rid = json_object_get(rep, "id");
	if (!json_is_object(rep) || !json_is_boolean(ok) ||
	    (rid != NULL && !json_is_null(rid) &&
	     (!json_is_integer(rid) || json_integer_value(rid) != id))) {
		json_decref(rep);
		return -EBADMSG;
	}
	if (json_is_true(ok)) {
		v = json_object_get(rep, "result");
		*result = v != NULL ? json_incref(v) : json_object();
		json_decref(rep);
		return *result != NULL ? CALL_OK : -ENOMEM;
	}
	v = json_object_get(rep, "error");
	*error = json_is_object(v) ? json_incref(v) : json_object();
	json_decref(rep);
	return *error != NULL ? CALL_ERROR : -ENOMEM;
}

/* Print "mrcctl: <cmd>: <reason> (<code>)" for an error reply. */
static void print_daemon_error(const char *cmd, const json_t *error)
{
	const char *reason = json_string_value(json_object_get(error, "reason"));
	const char *code = json_string_value(json_object_get(error, "code"));
	const json_t *e = json_object_get(error, "errno");
	char num[32];

	if (code == NULL) {
		snprintf(num, sizeof(num), "errno %lld",
			 json_is_integer(e) ? (long long)json_integer_value(e) : 0LL);
		code = num;
	}
	err_cmd(cmd, "%s (%s)", reason != NULL ? reason : "failed", code);
}

static void print_io_error(const char *cmd, const char *path, int rc, double timeout_s)
{
	if (rc == -ETIMEDOUT)
		err_cmd(cmd, "%s: no reply within %g s (ETIMEDOUT)", path, timeout_s);
	else if (rc == -EBADMSG)
		err_cmd(cmd, "%s: the reply is not a valid control message", path);
	else if (rc == -ECONNRESET)
		err_cmd(cmd, "%s: the daemon closed the connection", path);
	else if (rc == -EMSGSIZE)
		err_cmd(cmd, "%s: the reply is longer than %u bytes", path, REPLY_MAX);
	else
		err_cmd(cmd, "%s: %s", path, strerror(-rc));
}

/* ---- value conversion and output ----------------------------------------- */

/* key=value: true/false, integers (decimal or 0x hex), decimals, "quoted"
 * strings, anything else a string. */
static json_t *value_convert(const char *s)
{
	size_t n = strlen(s);
	char *end;

	if (strcmp(s, "true") == 0)
		return json_true();
	if (strcmp(s, "false") == 0)
		return json_false();
	if (n >= 2 && s[0] == '"' && s[n - 1] == '"')
		return json_stringn(s + 1, n - 2);
	if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') &&
	    strspn(s + 2, "0123456789abcdefABCDEF") == n - 2) {
		unsigned long long u;

		errno = 0;
		u = strtoull(s + 2, &end, 16);
		if (errno == 0 && u <= (unsigned long long)LLONG_MAX)
			return json_integer((json_int_t)u);
		return json_string(s);
	}
	if (n > 0 && strspn(s + (s[0] == '-'), "0123456789") == n - (s[0] == '-') &&
	    n > (size_t)(s[0] == '-')) {
		long long x;

		errno = 0;
		x = strtoll(s, &end, 10);
		if (errno == 0)
			return json_integer((json_int_t)x);
		return json_string(s);
	}
	if (n > 0 && strspn(s, "0123456789.eE+-") == n && strpbrk(s, "0123456789") != NULL) {
		double d;

		errno = 0;
		d = strtod(s, &end);
		if (errno == 0 && *end == '\0' && isfinite(d))
			return json_real(d);
	}
	return json_string(s);
}

static char *xstrdup(const char *s)
{
	char *d = strdup(s);

	if (d == NULL) {
		fprintf(stderr, "%s: out of memory\n", prog);
		exit(EXIT_IO);
	}
	return d;
}

static char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0) {
		fprintf(stderr, "%s: out of memory\n", prog);
		exit(EXIT_IO);
	}
	return s;
}

static bool is_scalar(const json_t *v)
{
	return !json_is_object(v) && !json_is_array(v);
}

static bool array_of_scalars(const json_t *a)
{
	size_t i;
	const json_t *v;

	json_array_foreach(a, i, v)
		if (!is_scalar(v))
			return false;
	return true;
}

static bool array_of_objects(const json_t *a)
{
	size_t i;
	const json_t *v;

	if (json_array_size(a) == 0)
		return false;
	json_array_foreach(a, i, v)
		if (!json_is_object(v))
			return false;
	return true;
}

static char *real_str(double d)
{
	if (d == floor(d) && fabs(d) < 1e15)
		return xasprintf("%.0f", d);
	if (fabs(d) >= 0.01 && fabs(d) < 1e9)
		return xasprintf("%.3f", d);
	return xasprintf("%.6g", d);
}

/* One value as text (malloc'd): arrays of scalars comma-joined, anything
 * else that is not a scalar as compact JSON. */
static char *value_str(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_STRING: return xstrdup(json_string_value(v));
	case JSON_INTEGER: return xasprintf("%lld", (long long)json_integer_value(v));
	case JSON_REAL: return real_str(json_real_value(v));
	case JSON_TRUE: return xstrdup("true");
	case JSON_FALSE: return xstrdup("false");
	case JSON_NULL: return xstrdup("-");
	case JSON_ARRAY:
		if (array_of_scalars(v)) {
			char *out = xstrdup("");
			size_t i;
			const json_t *e;

			json_array_foreach(v, i, e) {
				char *s = value_str(e), *t;

				t = xasprintf("%s%s%s", out, i ? "," : "", s);
				free(s);
				free(out);
				out = t;
			}
			return out;
		}
		/* fall through */
	case JSON_OBJECT: {
		char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);

		return s != NULL ? s : xstrdup("?");
	}
	}
	return xstrdup("?");
}

struct kv {
	char *key, *val;
	const json_t *table;  /* an array of objects, printed after the scalars */
};

struct kvlist {
	struct kv *v;
	size_t n, cap;
};

static void kv_add(struct kvlist *l, char *key, char *val, const json_t *table)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		struct kv *v = realloc(l->v, cap * sizeof(*v));

		if (v == NULL) {
			fprintf(stderr, "%s: out of memory\n", prog);
			exit(EXIT_IO);
		}
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = (struct kv){key, val, table};
}

static void kv_free(struct kvlist *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].key);
		free(l->v[i].val);
	}
	free(l->v);
	l->v = NULL;
	l->n = l->cap = 0;
}

/* Nested objects become dotted keys; arrays of objects become tables when
 * @tables, else compact JSON (inside a table cell). */
static void flatten(const char *prefix, const json_t *obj, struct kvlist *out, bool tables)
{
	const char *k;
	const json_t *v;

	json_object_foreach((json_t *)(uintptr_t)obj, k, v) {
		char *key = prefix[0] ? xasprintf("%s.%s", prefix, k) : xstrdup(k);

		if (json_is_object(v) && json_object_size(v) > 0) {
			flatten(key, v, out, tables);
			free(key);
		} else if (tables && json_is_array(v) && array_of_objects(v)) {
			kv_add(out, key, NULL, v);
		} else {
			kv_add(out, key, value_str(v), NULL);
		}
	}
}

static void print_table(const json_t *rows, int indent);

static void print_object(const json_t *obj, int indent)
{
	struct kvlist l = {0};
	size_t w = 0;
	bool first_table = true;

	flatten("", obj, &l, true);
	for (size_t i = 0; i < l.n; i++)
		if (l.v[i].table == NULL && strlen(l.v[i].key) > w)
			w = strlen(l.v[i].key);
	for (size_t i = 0; i < l.n; i++)
		if (l.v[i].table == NULL)
			printf("%*s%s:%*s %s\n", indent, "", l.v[i].key,
			       (int)(w - strlen(l.v[i].key)), "", l.v[i].val);
	for (size_t i = 0; i < l.n; i++) {
		if (l.v[i].table == NULL)
			continue;
		if (!first_table || l.n > 1)
			printf("\n");
		first_table = false;
		printf("%*s%s:\n", indent, "", l.v[i].key);
		print_table(l.v[i].table, indent + 2);
	}
	kv_free(&l);
}

/* Columns are the (flattened) keys of the first row. */
static void print_table(const json_t *rows, int indent)
{
	size_t nrows = json_array_size(rows), ncols;
	struct kvlist head = {0};
	struct kvlist *cells = calloc(nrows, sizeof(*cells));
	size_t *w;

	if (cells == NULL) {
		fprintf(stderr, "%s: out of memory\n", prog);
		exit(EXIT_IO);
	}
	flatten("", json_array_get(rows, 0), &head, false);
	ncols = head.n;
	w = calloc(ncols + 1, sizeof(*w));
	if (w == NULL) {
		fprintf(stderr, "%s: out of memory\n", prog);
		exit(EXIT_IO);
	}
	for (size_t c = 0; c < ncols; c++)
		w[c] = strlen(head.v[c].key);
	for (size_t r = 0; r < nrows; r++) {
		flatten("", json_array_get(rows, r), &cells[r], false);
		for (size_t c = 0; c < ncols; c++) {
			const char *val = "-";

			for (size_t j = 0; j < cells[r].n; j++)
				if (strcmp(cells[r].v[j].key, head.v[c].key) == 0) {
					val = cells[r].v[j].val;
					break;
				}
			if (strlen(val) > w[c])
				w[c] = strlen(val);
		}
	}
	printf("%*s", indent, "");
	for (size_t c = 0; c < ncols; c++)
		printf("%-*s%s", c + 1 < ncols ? (int)w[c] : 0, head.v[c].key,
		       c + 1 < ncols ? "  " : "\n");
	for (size_t r = 0; r < nrows; r++) {
		printf("%*s", indent, "");
		for (size_t c = 0; c < ncols; c++) {
			const char *val = "-";

			for (size_t j = 0; j < cells[r].n; j++)
				if (strcmp(cells[r].v[j].key, head.v[c].key) == 0) {
					val = cells[r].v[j].val;
					break;
				}
			printf("%-*s%s", c + 1 < ncols ? (int)w[c] : 0, val,
			       c + 1 < ncols ? "  " : "\n");
		}
		kv_free(&cells[r]);
	}
	kv_free(&head);
	free(cells);
	free(w);
}

static void print_human(const json_t *res)
{
	if (json_is_object(res)) {
		print_object(res, 0);
	} else if (json_is_array(res) && json_array_size(res) == 0) {
		printf("(none)\n");
	} else if (json_is_array(res) && array_of_objects(res)) {
		print_table(res, 0);
	} else if (json_is_array(res)) {
		size_t i;
		const json_t *v;

		json_array_foreach(res, i, v) {
			char *s = value_str(v);

			printf("%s\n", s);
			free(s);
		}
	} else {
		char *s = value_str(res);

		printf("%s\n", s);
		free(s);
	}
}

static void print_json(const json_t *v)
{
	char *s = json_dumps(v, JSON_INDENT(2) | JSON_ENCODE_ANY);

	if (s != NULL)
		printf("%s\n", s);
	free(s);
}

/* ---- command line ---------------------------------------------------------- */

struct opts {
	const char *sock;
	bool json;
	double timeout_s;
	bool timeout_set;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s [-s SOCKET] [--json] [--timeout SEC] <command> [key=value ...]\n"
		"       %s [-s SOCKET] selftest --peer SOCKET [--bytes N] [--msg-size N]\n"
		"              [--window N] [--op write_imm|write|mixed] [--region N]\n"
		"              [--worker N] [--peer-worker N] [--timeout SEC] [--json]\n"
		"       %s help\n"
		"The socket defaults to $MRCD_SOCKET, else " DEFAULT_SOCKET ".\n",
		prog, prog, prog);
}

static void help(void)
{
	usage(stdout);
	printf("\ncommands (dashes and underscores are the same):\n");
	for (unsigned c = MRCD_CTL_INVALID + 1; c < MRCD_CTL_CMD_COUNT; c++)
		printf("  %-16s %s\n", mrcd_ctl_cmd_name((enum mrcd_ctl_cmd)c),
		       mrcd_ctl_cmd_help((enum mrcd_ctl_cmd)c));
	printf("  %-16s %s\n", "selftest",
	       "run selftest_* on this daemon (sender) and --peer (receiver), report");
	printf("\nvalues: true/false, integers (decimal or 0x hex), decimals, \"quoted\" "
	       "strings, else strings\n"
	       "exit: 0 ok, 1 the daemon answered an error, 2 usage, 3 connection/I/O/timeout, "
	       "4 selftest failed\n");
}

/* Match "--name VALUE" or "--name=VALUE" at argv[*i]; advances *i. */
static int take_opt(int argc, char **argv, int *i, const char *name, const char **val)
{
	size_t n = strlen(name);

	if (strncmp(argv[*i], name, n) != 0)
		return 0;
	if (argv[*i][n] == '=') {
		*val = argv[*i] + n + 1;
		return 1;
	}
	if (argv[*i][n] != '\0')
		return 0;
	if (*i + 1 >= argc) {
		fprintf(stderr, "%s: %s needs a value\n", prog, name);
		return -1;
	}
	*val = argv[++*i];
	return 1;
}

/* --worker / --peer-worker: a worker index of the daemon (D63). */
static int parse_worker(const char *opt, const char *val, int64_t *out)
{
	char *end;
	unsigned long w;

	errno = 0;
	w = strtoul(val, &end, 10);
	if (errno || end == val || *end || w >= MRCD_CTL_MAX_WORKERS) {
		fprintf(stderr, "%s: selftest: %s: a worker index 0..%d, not \"%s\"\n", prog, opt,
			MRCD_CTL_MAX_WORKERS - 1, val);
		return -1;
	}
	*out = (int64_t)w;
	return 0;
}

static int parse_seconds(const char *s, double *out)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !(d > 0) || d > 1e6) {
		fprintf(stderr, "%s: bad timeout \"%s\" (seconds, > 0)\n", prog, s);
		return -1;
	}
	*out = d;
	return 0;
}

/* A size with an optional binary suffix: 4096, 64K, 256M, 1G, 1T (KiB/KB
 * spellings too). */
static int parse_size(const char *opt, const char *s, uint64_t *out)
{
	char *end;
	unsigned long long x;
	unsigned shift = 0;

	errno = 0;
	x = strtoull(s, &end, 10);
	if (errno != 0 || end == s || s[0] == '-')
		goto bad;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default: break;
	}
	if (shift && (strcmp(end, "i") == 0 || strcmp(end, "iB") == 0 || strcmp(end, "B") == 0))
		end += strlen(end);
	if (*end != '\0' || (shift && x > (UINT64_MAX >> shift)))
		goto bad;
	*out = (uint64_t)x << shift;
	return 0;
bad:
	fprintf(stderr, "%s: selftest: %s: bad size \"%s\" (bytes, or with K/M/G/T)\n",
		prog, opt, s);
	return -1;
}

/* "fault-set" -> MRCD_CTL_FAULT_SET */
static enum mrcd_ctl_cmd cmd_from_arg(const char *arg, char *name, size_t n)
{
	size_t i;

	for (i = 0; arg[i] != '\0' && i + 1 < n; i++)
		name[i] = arg[i] == '-' ? '_' : arg[i];
	name[i] = '\0';
	return arg[i] == '\0' ? mrcd_ctl_cmd_lookup(name) : MRCD_CTL_INVALID;
}

/* One request/reply for the plain commands. */
static int run_command(struct opts *o, const char *name, int argc, char **argv)
{
	json_t *args = json_object(), *result = NULL, *error = NULL;
	char reason[MRCD_CTL_REASON_MAX], *line;
	struct conn c;
	int rc, ret;

	if (args == NULL)
		return EXIT_IO;
	for (int i = 0; i < argc; i++) {
		const char *val, *eq = strchr(argv[i], '=');
		char key[64];
		int t;

		if (strcmp(argv[i], "--json") == 0) {
			o->json = true;
			continue;
		}
		t = take_opt(argc, argv, &i, "--timeout", &val);
		if (t < 0 || (t > 0 && parse_seconds(val, &o->timeout_s) < 0))
			goto usage;
		if (t > 0)
			continue;
		if (eq == NULL || eq == argv[i] || (size_t)(eq - argv[i]) >= sizeof(key)) {
			err_cmd(name, "\"%s\": arguments are key=value", argv[i]);
			goto usage;
		}
		memcpy(key, argv[i], (size_t)(eq - argv[i]));
		key[eq - argv[i]] = '\0';
		if (json_object_get(args, key) != NULL) {
			err_cmd(name, "args.%s: given twice", key);
			goto usage;
		}
		json_object_set_new(args, key, value_convert(eq + 1));
	}
	line = request_build(name, args, 1, reason, sizeof(reason), &rc);
	json_decref(args);
	args = NULL;
	if (line == NULL) {
		err_cmd(name, "%s (%s)", reason, errno_code(-rc));
		fprintf(stderr, "try '%s help'\n", prog);
		return rc == -ENOMEM ? EXIT_IO : EXIT_USAGE;
	}
	rc = conn_open(&c, o->sock, o->timeout_s);
	if (rc < 0) {
		err_cmd(name, "cannot connect to %s: %s", o->sock,
			rc == -ETIMEDOUT ? "timed out" : strerror(-rc));
		free(line);
		return EXIT_IO;
	}
	rc = conn_call_line(&c, line, 1, deadline_after(o->timeout_s), &result, &error);
	free(line);
	conn_close(&c);
	if (rc < 0) {
		print_io_error(name, o->sock, rc, o->timeout_s);
		return EXIT_IO;
	}
	if (rc == CALL_ERROR) {
		if (o->json)
			print_json(error);
		print_daemon_error(name, error);
		ret = EXIT_DAEMON;
	} else {
		if (o->json)
			print_json(result);
		else
			print_human(result);
		ret = 0;
	}
	json_decref(result);
	json_decref(error);
	return ret;
usage:
	json_decref(args);
	return EXIT_USAGE;
}

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
	int64_t worker, peer_worker; /* -1: the daemon picks (D63) */
	const char *op;
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

	fmt_bytes(num_field(st, "bytes_done"), b, sizeof(b));
	printf("  %5.1f s  %s  %.2f Gbit/s  rtx %llu\n", num_field(st, "elapsed_ns") / 1e9, b,
	       num_field(st, "goodput_gbps"), u64_field(st, "rtx_total"));
	fflush(stdout);
}

static bool state_is(const json_t *st, const char *s)
{
	return st != NULL && strcmp(str_field(st, "state"), s) == 0;
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
	/* step 6: the receiver catches up with the sender's immediates */
	deadline = deadline_after(5.0);
	for (;;) {
		rc = side_status(&t->b);
		if (rc != 0)
			return rc;
		if (u64_field(t->b.status, "imm_msgs") == u64_field(t->a.status, "imm_msgs"))
			return 0;
		if ((int64_t)(now_ns() - deadline) >= 0) {
			fprintf(stderr, "%s: selftest: the receiver saw %llu immediates, the sender "
				"sent %llu\n", prog, u64_field(t->b.status, "imm_msgs"),
				u64_field(t->a.status, "imm_msgs"));
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
	if (u64_field(b, "imm_msgs") != u64_field(a, "imm_msgs")) {
		ok = false;
		if (print)
			fprintf(stderr, "%s: selftest: the receiver verified up to %llu immediates of %llu\n",
				prog, u64_field(b, "imm_msgs"), u64_field(a, "imm_msgs"));
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
	printf("  verify errors:  %llu\n", u64_field(b, "verify_errors"));
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

static int run_selftest(struct opts *o, int argc, char **argv)
{
	struct selftest t = {
		.o = o, .a = {.role = "sender"}, .b = {.role = "receiver"},
		.bytes = 256ull << 20, .msg_size = 64 << 10, .window = 16,
		.region = 64 << 20, .worker = -1, .peer_worker = -1, .op = "write_imm",
		.timeout_s = o->timeout_set ? o->timeout_s : SELFTEST_TIMEOUT_S,
	};
	const char *peer = NULL, *val;
	bool finished = false, ok;
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
		} else if ((r = take_opt(argc, argv, &i, "--msg-size", &val)) != 0) {
			if (r < 0 || parse_size("--msg-size", val, &t.msg_size) < 0)
				return EXIT_USAGE;
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

int main(int argc, char **argv)
{
	struct opts o = {.timeout_s = DEFAULT_TIMEOUT_S};
	enum mrcd_ctl_cmd cmd;
	char name[MRCD_CTL_NAME_MAX];
	int i;

	o.sock = getenv("MRCD_SOCKET");
	if (o.sock == NULL || o.sock[0] == '\0')
		o.sock = DEFAULT_SOCKET;
	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		const char *val;
		int r;

		if (strcmp(argv[i], "--json") == 0) {
			o.json = true;
		} else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			help();
			return 0;
		} else if ((r = take_opt(argc, argv, &i, "--timeout", &val)) != 0) {
			if (r < 0 || parse_seconds(val, &o.timeout_s) < 0)
				return EXIT_USAGE;
			o.timeout_set = true;
		} else if ((r = take_opt(argc, argv, &i, "--socket", &val)) != 0 ||
			   (r = take_opt(argc, argv, &i, "-s", &val)) != 0) {
			if (r < 0)
				return EXIT_USAGE;
			o.sock = val;
		} else {
			fprintf(stderr, "%s: unknown option \"%s\"\n", prog, argv[i]);
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (i >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[i], "help") == 0) {
		help();
		return 0;
	}
	if (strcmp(argv[i], "selftest") == 0)
		return run_selftest(&o, argc - i - 1, argv + i + 1);
	cmd = cmd_from_arg(argv[i], name, sizeof(name));
	if (cmd == MRCD_CTL_INVALID) {
		fprintf(stderr, "%s: unknown command \"%s\"; try '%s help'\n", prog, argv[i], prog);
		return EXIT_USAGE;
	}
	return run_command(&o, mrcd_ctl_cmd_name(cmd), argc - i - 1, argv + i + 1);
}
