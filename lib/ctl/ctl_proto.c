/* ctl_proto.c - the parsing half of the control protocol (mrcd_ctl.h): one
 * request line in, a typed and range-checked struct mrcd_ctl_req out, or a
 * one-line reason naming the offending key. Each command's arguments are
 * checked against a key table, so an unknown key is always an error. Knows
 * nothing about executing requests (the daemon's ctl.c) or building them
 * (mrcctl). Needs jansson and libc only; never prints.
 */
#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "mrcd_ctl.h"
#include "mrcp_engine.h"

/* peer_info carries lib/core's connection-info blob, hex-encoded. */
static_assert(MRCD_CTL_CONN_INFO_LEN == MRCP_CONN_INFO_LEN,
	      "the control protocol's peer_info is lib/core's connection info");

/* Deep nesting is never valid here; refuse it before jansson recurses. */
#define MAX_DEPTH 32

/* The command table (MRCD_CTL_CMDS), column by column. */
static const char *const cmd_names[MRCD_CTL_CMD_COUNT] = {
	[MRCD_CTL_INVALID] = NULL,
#define X(e, n, a, r, c, p, h) [MRCD_CTL_##e] = #n,
	MRCD_CTL_CMDS(X)
#undef X
};

static const char *const cmd_help[MRCD_CTL_CMD_COUNT] = {
#define X(e, n, a, r, c, p, h) [MRCD_CTL_##e] = h,
	MRCD_CTL_CMDS(X)
#undef X
};

static const enum mrcd_ctl_route cmd_route[MRCD_CTL_CMD_COUNT] = {
#define X(e, n, a, r, c, p, h) [MRCD_CTL_##e] = MRCD_CTL_ROUTE_##r,
	MRCD_CTL_CMDS(X)
#undef X
};

static const enum mrcd_ctl_combine cmd_combine[MRCD_CTL_CMD_COUNT] = {
#define X(e, n, a, r, c, p, h) [MRCD_CTL_##e] = MRCD_CTL_COMBINE_##c,
	MRCD_CTL_CMDS(X)
#undef X
};

/* Rows not in the table (MRCD_CTL_INVALID) read as ADMIN, the default deny. */
static const enum mrcd_ctl_rights cmd_rights[MRCD_CTL_CMD_COUNT] = {
#define X(e, n, a, r, c, p, h) [MRCD_CTL_##e] = MRCD_CTL_RIGHTS_##p,
	MRCD_CTL_CMDS(X)
#undef X
};

const char *mrcd_ctl_cmd_name(enum mrcd_ctl_cmd c)
{
	if ((unsigned)c >= MRCD_CTL_CMD_COUNT)
		return NULL;
	return cmd_names[c];
}

const char *mrcd_ctl_cmd_help(enum mrcd_ctl_cmd c)
{
	if (c <= MRCD_CTL_INVALID || (unsigned)c >= MRCD_CTL_CMD_COUNT)
		return NULL;
	return cmd_help[c];
}

enum mrcd_ctl_route mrcd_ctl_cmd_route(enum mrcd_ctl_cmd c)
{
	if ((unsigned)c >= MRCD_CTL_CMD_COUNT)
		return MRCD_CTL_ROUTE_DAEMON;
	return cmd_route[c];
}

enum mrcd_ctl_combine mrcd_ctl_cmd_combine(enum mrcd_ctl_cmd c)
{
	if ((unsigned)c >= MRCD_CTL_CMD_COUNT)
		return MRCD_CTL_COMBINE_ONE;
	return cmd_combine[c];
}

enum mrcd_ctl_rights mrcd_ctl_cmd_rights(enum mrcd_ctl_cmd c)
{
	if ((unsigned)c >= MRCD_CTL_CMD_COUNT)
		return MRCD_CTL_RIGHTS_ADMIN;
	return cmd_rights[c];
}

bool mrcd_ctl_cmd_needs_session(enum mrcd_ctl_cmd c)
{
	return mrcd_ctl_cmd_route(c) == MRCD_CTL_ROUTE_SESSION;
}

enum mrcd_ctl_cmd mrcd_ctl_cmd_lookup(const char *name)
{
	if (name == NULL)
		return MRCD_CTL_INVALID;
	for (unsigned i = MRCD_CTL_INVALID + 1; i < MRCD_CTL_CMD_COUNT; i++)
		if (strcmp(cmd_names[i], name) == 0)
			return (enum mrcd_ctl_cmd)i;
	return MRCD_CTL_INVALID;
}

const char *mrcd_ctl_errno_name(int e)
{
	switch (e) {
#define X(n) case n: return #n;
	MRCD_CTL_ERRNOS(X)
#undef X
	default: return NULL;
	}
}

char *mrcd_ctl_format_reply(bool has_id, int64_t id, const json_t *result, int err,
			    const char *reason)
{
	json_t *o = json_object();
	const char *code = mrcd_ctl_errno_name(-err);
	char *s, *line;
	size_t n;

	if (o == NULL)
		return NULL;
	json_object_set_new(o, "v", json_integer(MRCD_CTL_PROTO_VERSION));
	if (has_id)
		json_object_set_new(o, "id", json_integer(id));
	if (err == 0) {
		json_object_set_new(o, "ok", json_true());
		json_object_set_new(o, "result", result != NULL ? json_incref((json_t *)(uintptr_t)result)
								 : json_object());
	} else {
		json_t *e = json_object();

		json_object_set_new(o, "ok", json_false());
		json_object_set_new(e, "errno", json_integer(-err));
		json_object_set_new(e, "code", json_string(code != NULL ? code : "EIO"));
		json_object_set_new(e, "reason", json_string(reason != NULL && reason[0] ? reason
										: strerror(-err)));
		json_object_set_new(o, "error", e);
	}
	s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (s == NULL)
		return NULL;
	n = strlen(s);
	line = malloc(n + 2);
	if (line != NULL) {
		memcpy(line, s, n);
		line[n] = '\n';
		line[n + 1] = '\0';
	}
	free(s);
	return line;
}

void mrcd_ctl_hex_encode(const uint8_t *in, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 0xf];
	}
	out[2 * n] = '\0';
}

static int hex_nibble(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int mrcd_ctl_hex_decode(const char *hex, uint8_t *out, size_t n)
{
	if (hex == NULL || strnlen(hex, 2 * n + 1) != 2 * n)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		int hi = hex_nibble(hex[2 * i]), lo = hex_nibble(hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -EINVAL;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

/* ---- reasons ---------------------------------------------------------- */

struct ctx {
	char *reason;
	size_t reason_len;
};

static int __attribute__((format(printf, 3, 4)))
fail(struct ctx *c, int err, const char *fmt, ...)
{
	va_list ap;

	if (c->reason != NULL && c->reason_len > 0) {
		va_start(ap, fmt);
		vsnprintf(c->reason, c->reason_len, fmt, ap);
		va_end(ap);
		/* one line, whatever the formatted parts held */
		for (char *p = c->reason; *p != '\0'; p++)
			if (*p == '\n' || *p == '\r')
				*p = ' ';
	}
	return -err;
}

/* Copy client-supplied text for a reason: printable ASCII only, at most
 * 40 characters, so a reason stays one short line. */
static const char *shown(const char *s, char *buf, size_t n)
{
	size_t i = 0, max = n < 44 ? n - 4 : 40;

	for (; s[i] != '\0' && i < max; i++)
		buf[i] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
	if (s[i] != '\0')
		memcpy(buf + i, "...", 4);
	else
		buf[i] = '\0';
	return buf;
}

static const char *type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a real";
	case JSON_TRUE:
	case JSON_FALSE: return "a boolean";
	case JSON_NULL: return "null";
	}
	return "?";
}

/* ---- typed argument getters ------------------------------------------ */

/* Each getter returns 1 when the key was present and valid, 0 when it is
 * absent (and not required: @out is left alone), or a negative errno. */

static int missing(struct ctx *c, const char *key, bool required)
{
	if (required)
		return fail(c, EINVAL, "args.%s: missing required key", key);
	return 0;
}

static int get_int(struct ctx *c, const json_t *args, const char *key,
		   bool required, int64_t min, int64_t max, int64_t *out)
{
	const json_t *v = json_object_get(args, key);
	json_int_t x;

	if (v == NULL)
		return missing(c, key, required);
	if (!json_is_integer(v))
		return fail(c, EINVAL, "args.%s: must be an integer in %lld..%lld, not %s",
			    key, (long long)min, (long long)max, type_name(v));
	x = json_integer_value(v);
	if (x < min || x > max)
		return fail(c, EINVAL, "args.%s: %lld is out of range %lld..%lld",
			    key, (long long)x, (long long)min, (long long)max);
	*out = x;
	return 1;
}

static int get_u32(struct ctx *c, const json_t *args, const char *key,
		   bool required, uint32_t min, uint32_t max, uint32_t *out)
{
	int64_t x;
	int rc = get_int(c, args, key, required, min, max, &x);

	if (rc == 1)
		*out = (uint32_t)x;
	return rc;
}

/* A number (double): integers are accepted too. */
static int get_num(struct ctx *c, const json_t *args, const char *key,
		   double min, double max, double *out)
{
	const json_t *v = json_object_get(args, key);
	double x;

	if (v == NULL)
		return 0;
	if (!json_is_number(v))
		return fail(c, EINVAL, "args.%s: must be a number in %g..%g, not %s",
			    key, min, max, type_name(v));
	x = json_number_value(v);
	if (!(x >= min && x <= max))
		return fail(c, EINVAL, "args.%s: %g is out of range %g..%g", key, x, min, max);
	*out = x;
	return 1;
}

static int get_bool(struct ctx *c, const json_t *args, const char *key,
		    bool required, bool *out)
{
	const json_t *v = json_object_get(args, key);

	if (v == NULL)
		return missing(c, key, required);
	if (!json_is_boolean(v))
		return fail(c, EINVAL, "args.%s: must be true or false, not %s", key, type_name(v));
	*out = json_is_true(v);
	return 1;
}

/* A string of at most @max bytes with no NUL inside. */
static int get_str(struct ctx *c, const json_t *args, const char *key,
		   bool required, size_t max, const char **out)
{
	const json_t *v = json_object_get(args, key);
	const char *s;

	if (v == NULL)
		return missing(c, key, required);
	if (!json_is_string(v))
		return fail(c, EINVAL, "args.%s: must be a string, not %s", key, type_name(v));
	s = json_string_value(v);
	if (strlen(s) != json_string_length(v) || json_string_length(v) > max)
		return fail(c, EINVAL, "args.%s: must be a string of at most %zu characters",
			    key, max);
	*out = s;
	return 1;
}

/* One of @names (NULL-terminated); the index goes to @out. */
static int get_enum(struct ctx *c, const json_t *args, const char *key,
		    bool required, const char *const *names, const char *expect,
		    unsigned *out)
{
	const char *s;
	char buf[48];
	int rc = get_str(c, args, key, required, 64, &s);

	if (rc < 0 && json_object_get(args, key) != NULL)
		return fail(c, EINVAL, "args.%s: must be one of %s", key, expect);
	if (rc != 1)
		return rc;
	for (unsigned i = 0; names[i] != NULL; i++)
		if (strcmp(s, names[i]) == 0) {
			*out = i;
			return 1;
		}
	return fail(c, EINVAL, "args.%s: \"%s\" is not one of %s", key,
		    shown(s, buf, sizeof(buf)), expect);
}

static bool port_name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n < 1 || n > MRCD_CTL_NAME_MAX - 1)
		return false;
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];

		if (!((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
		      (ch >= '0' && ch <= '9') || ch == '_' || ch == '-'))
			return false;
	}
	return true;
}

#define PORT_EXPECT "a port name ([A-Za-z0-9_-], 1..31 characters) or a plane number 1..32"

static int get_port(struct ctx *c, const json_t *args, const char *key,
		    bool required, struct mrcd_ctl_port *out)
{
	const json_t *v = json_object_get(args, key);
	const char *s;

	if (v == NULL)
		return missing(c, key, required);
	memset(out, 0, sizeof(*out));
	if (json_is_integer(v)) {
		json_int_t x = json_integer_value(v);

		if (x < 1 || x > 32)
			return fail(c, EINVAL, "args.%s: plane %lld is out of range 1..32",
				    key, (long long)x);
		out->plane = (uint8_t)x;
		return 1;
	}
	if (!json_is_string(v))
		return fail(c, EINVAL, "args.%s: must be %s, not %s", key, PORT_EXPECT,
			    type_name(v));
	s = json_string_value(v);
	if (strlen(s) != json_string_length(v) || !port_name_ok(s))
		return fail(c, EINVAL, "args.%s: must be %s", key, PORT_EXPECT);
	memcpy(out->name, s, strlen(s) + 1);
	return 1;
}

static int get_ip(struct ctx *c, const json_t *args, const char *key,
		  struct mrcd_ctl_ip *out)
{
	const char *s;
	char buf[48];
	int rc = get_str(c, args, key, true, INET6_ADDRSTRLEN, &s);

	if (rc < 0 && json_object_get(args, key) == NULL)
		return rc;
	if (rc < 0)
		return fail(c, EINVAL, "args.%s: must be an IPv4 or IPv6 address", key);
	memset(out, 0, sizeof(*out));
	if (inet_pton(AF_INET, s, out->a) == 1) {
		out->family = 4;
		return 1;
	}
	if (inet_pton(AF_INET6, s, out->a) == 1) {
		out->family = 6;
		return 1;
	}
	memset(out, 0, sizeof(*out));
	return fail(c, EINVAL, "args.%s: \"%s\" is not an IPv4 or IPv6 address", key,
		    shown(s, buf, sizeof(buf)));
}

static int get_hex(struct ctx *c, const json_t *args, const char *key, uint8_t *out,
		   size_t n)
{
	const char *s;
	int rc = get_str(c, args, key, true, 2 * n, &s);

	if (rc < 0 && json_object_get(args, key) == NULL)
		return rc;
	if (rc < 0 || mrcd_ctl_hex_decode(s, out, n) < 0)
		return fail(c, EINVAL, "args.%s: must be a string of exactly %zu hex digits",
			    key, 2 * n);
	return 1;
}

/* ^mrcd(\.[a-z_]+)*$ */
static bool log_type_ok(const char *s)
{
	if (strncmp(s, "mrcd", 4) != 0)
		return false;
	s += 4;
	while (*s != '\0') {
		if (*s++ != '.')
			return false;
		if (!((*s >= 'a' && *s <= 'z') || *s == '_'))
			return false;
		while ((*s >= 'a' && *s <= 'z') || *s == '_')
			s++;
	}
	return true;
}

/* ---- per-command argument tables ------------------------------------- */

struct cmd_spec {
	const char *const *keys;       /* NULL: takes no arguments */
	int (*parse)(struct ctx *c, const json_t *args, struct mrcd_ctl_req *req);
};

#define RET_IF_ERR(expr)                                                       \
	do {                                                                   \
		int rc_ = (expr);                                              \
		if (rc_ < 0)                                                   \
			return rc_;                                            \
	} while (0)

static int parse_qp(struct ctx *c, const json_t *args, struct mrcd_ctl_req *req)
{
	RET_IF_ERR(get_u32(c, args, "qpn", true, 1, 0xffffff, &req->qp.qpn));
	req->route_key = req->qp.qpn;
	return 0;
}

static const char *const dir_names[] = {"tx", "rx", "both", NULL};
static const char *const op_names[] = {"write_imm", "write", "mixed", "ping_pong", NULL};
static const char *const level_names[] = {"emerg", "alert", "crit", "err", "warning",
					  "notice", "info", "debug", NULL};

static int parse_fault_set(struct ctx *c, const json_t *args, struct mrcd_ctl_req *req)
{
	static const char *const pct[] = {"drop_pct", "reorder_pct", "duplicate_pct",
					  "corrupt_pct", "trim_pct", "ecn_pct"};
	struct mrcd_ctl_fault *f = &req->fault_set;
	double *pct_out[] = {&f->drop_pct, &f->reorder_pct, &f->duplicate_pct,
			     &f->corrupt_pct, &f->trim_pct, &f->ecn_pct};
	unsigned dir = MRCD_CTL_DIR_TX;
	bool any;

	RET_IF_ERR(get_port(c, args, "port", true, &f->port));
	f->ev_min = 0;
	f->ev_max = 0xffffffff;
	RET_IF_ERR(get_u32(c, args, "ev_min", false, 0, 0xffffffff, &f->ev_min));
	RET_IF_ERR(get_u32(c, args, "ev_max", false, 0, 0xffffffff, &f->ev_max));
	if (f->ev_min > f->ev_max)
		return fail(c, EINVAL, "args.ev_min: %u is above args.ev_max %u",
			    f->ev_min, f->ev_max);
	RET_IF_ERR(get_enum(c, args, "direction", false, dir_names, "tx, rx or both", &dir));
	f->dir = (enum mrcd_ctl_dir)dir;
	for (unsigned i = 0; i < sizeof(pct) / sizeof(pct[0]); i++)
		RET_IF_ERR(get_num(c, args, pct[i], 0, 100, pct_out[i]));
	RET_IF_ERR(get_bool(c, args, "blackhole", false, &f->blackhole));
	RET_IF_ERR(get_num(c, args, "delay_us", 0, 1e6, &f->delay_us));
	RET_IF_ERR(get_num(c, args, "jitter_us", 0, 1e6, &f->jitter_us));
	any = f->blackhole || f->delay_us > 0 || f->jitter_us > 0;
	for (unsigned i = 0; i < sizeof(pct) / sizeof(pct[0]); i++)
		any = any || *pct_out[i] > 0;
	if (!any)
		return fail(c, EINVAL, "args: no fault kind set");
	return 0;
}

static int parse_fault_clear(struct ctx *c, const json_t *args, struct mrcd_ctl_req *req)
{
	int r, p;

	r = get_u32(c, args, "rule", false, 1, 0xffffffff, &req->fault_clear.rule);
	RET_IF_ERR(r);
	p = get_port(c, args, "port", false, &req->fault_clear.port);
	RET_IF_ERR(p);
	if (r == 1 && p == 1)
		return fail(c, EINVAL, "args: give rule or port, not both");
	req->fault_clear.has_rule = r == 1;
	req->fault_clear.has_port = p == 1;
	return 0;
}

static int parse_ev_deny(struct ctx *c, const json_t *args, struct mrcd_ctl_req *req)
{
	RET_IF_ERR(get_u32(c, args, "qpn", true, 1, 0xffffff, &req->ev_deny.qpn));
	RET_IF_ERR(get_u32(c, args, "ev", true, 0, 0xffffffff, &req->ev_deny.ev));
	req->ev_deny.deny = true;
	RET_IF_ERR(get_bool(c, args, "deny", false, &req->ev_deny.deny));
	req->route_key = req->ev_deny.qpn;
	return 0;
}

static int parse_port_admin(struct ctx *c, const json_t *args, struct mrcd_ctl_req *req)
{
	RET_IF_ERR(get_port(c, args, "port", true, &req->port_admin.port));
	RET_IF_ERR(get_bool(c, args, "up", true, &req->port_admin.up));
	return 0;
}

static int parse_log_level(struct ctx *c, const json_t *args, struct mrcd_ctl_req *req)
{
	unsigned lvl = 0;
	const char *type = "";
	size_t type_max = sizeof(req->log_level.type) - 1;

	RET_IF_ERR(get_enum(c, args, "level", true, level_names,
			    "emerg, alert, crit, err, warning, notice, info or debug", &lvl));
	memcpy(req->log_level.level, level_names[lvl], strlen(level_names[lvl]) + 1);
	if (get_str(c, args, "type", false, type_max, &type) < 0 ||
	    (type[0] != '\0' && !log_type_ok(type)))
		return fail(c, EINVAL,
			    "args.type: must be \"\" or a log type matching mrcd(.[a-z_]+)*, "
			    "at most %zu characters", type_max);
	memcpy(req->log_level.type, type, strlen(type) + 1);
	return 0;
}

static int parse_ev_probe(struct ctx *c, const json_t *args, struct mrcd_ctl_req *req)
{
	RET_IF_ERR(get_ip(c, args, "node", &req->ev_probe.node));
	RET_IF_ERR(get_port(c, args, "port", true, &req->ev_probe.port));
	RET_IF_ERR(get_u32(c, args, "ev", true, 0, 0xffffffff, &req->ev_probe.ev));
	return 0;
}

static int parse_st_listen(struct ctx *c, const json_t *args, struct mrcd_ctl_req *req)
{
	int64_t x = 64 << 20;

	RET_IF_ERR(get_int(c, args, "region_bytes", false, 1 << 20, 1 << 30, &x));
	req->st_listen.region_bytes = (uint64_t)x;
	x = -1;
	RET_IF_ERR(get_int(c, args, "worker", false, 0, MRCD_CTL_MAX_WORKERS - 1, &x));
	req->st_listen.worker = (int)x;
	req->route_key = x;
	RET_IF_ERR(get_bool(c, args, "detach", false, &req->st_listen.detach));
	return 0;
}

static int parse_st_start(struct ctx *c, const json_t *args, struct mrcd_ctl_req *req)
{
	int64_t bytes = 0;
	unsigned op = MRCD_CTL_OP_WRITE_IMM;

	RET_IF_ERR(get_hex(c, args, "peer_info", req->st_start.peer_info,
			   MRCD_CTL_CONN_INFO_LEN));
	RET_IF_ERR(get_int(c, args, "bytes", true, 1, (int64_t)1 << 40, &bytes));
	req->st_start.bytes = (uint64_t)bytes;
	req->st_start.msg_size = 65536;
	RET_IF_ERR(get_u32(c, args, "msg_size", false, 64, 16u << 20, &req->st_start.msg_size));
	req->st_start.window = 16;
	RET_IF_ERR(get_u32(c, args, "window", false, 1, 256, &req->st_start.window));
	RET_IF_ERR(get_enum(c, args, "op", false, op_names, "write_imm, write, mixed or ping_pong", &op));
	req->st_start.op = (enum mrcd_ctl_op)op;
	bytes = -1;
	RET_IF_ERR(get_int(c, args, "worker", false, 0, MRCD_CTL_MAX_WORKERS - 1, &bytes));
	req->st_start.worker = (int)bytes;
	req->route_key = bytes;
	RET_IF_ERR(get_bool(c, args, "detach", false, &req->st_start.detach));
	return 0;
}

static int parse_st_accept(struct ctx *c, const json_t *args, struct mrcd_ctl_req *req)
{
	RET_IF_ERR(get_u32(c, args, "id", true, 1, 0xffffffff, &req->st_accept.id));
	RET_IF_ERR(get_hex(c, args, "peer_info", req->st_accept.peer_info,
			   MRCD_CTL_CONN_INFO_LEN));
	req->route_key = req->st_accept.id;
	return 0;
}

static int parse_st_id(struct ctx *c, const json_t *args, struct mrcd_ctl_req *req)
{
	RET_IF_ERR(get_u32(c, args, "id", true, 1, 0xffffffff, &req->st.id));
	req->route_key = req->st.id;
	return 0;
}

static int pow2_ok(struct ctx *c, const char *key, uint32_t v)
{
	if (v & (v - 1))
		return fail(c, EINVAL, "args.%s: %u is not a power of two", key, v);
	return 0;
}

static int parse_attach(struct ctx *c, const json_t *args, struct mrcd_ctl_req *req)
{
	int64_t heap = 64ll << 20;

	RET_IF_ERR(get_u32(c, args, "abi", true, 1, 0xffffffff, &req->attach.abi));
	RET_IF_ERR(get_int(c, args, "heap_bytes", false, 4096, 64ll << 30, &heap));
	req->attach.heap_bytes = (uint64_t)heap;
	req->attach.sq_depth = 4096;
	req->attach.rq_depth = 4096;
	req->attach.cq_depth = 8192;
	RET_IF_ERR(get_u32(c, args, "sq_depth", false, 64, 1u << 20, &req->attach.sq_depth));
	RET_IF_ERR(pow2_ok(c, "sq_depth", req->attach.sq_depth));
	RET_IF_ERR(get_u32(c, args, "rq_depth", false, 64, 1u << 20, &req->attach.rq_depth));
	RET_IF_ERR(pow2_ok(c, "rq_depth", req->attach.rq_depth));
	RET_IF_ERR(get_u32(c, args, "cq_depth", false, 64, 1u << 20, &req->attach.cq_depth));
	RET_IF_ERR(pow2_ok(c, "cq_depth", req->attach.cq_depth));
	return 0;
}

static int parse_reg_mr(struct ctx *c, const json_t *args, struct mrcd_ctl_req *req)
{
	int64_t ofs = 0, len = 0;

	RET_IF_ERR(get_int(c, args, "ofs", true, 0, (int64_t)1 << 40, &ofs));
	RET_IF_ERR(get_int(c, args, "len", true, 1, (int64_t)1 << 40, &len));
	RET_IF_ERR(get_u32(c, args, "access", true, 0, 3, &req->reg_mr.access));
	req->reg_mr.ofs = (uint64_t)ofs;
	req->reg_mr.len = (uint64_t)len;
	return 0;
}

static int parse_dereg_mr(struct ctx *c, const json_t *args, struct mrcd_ctl_req *req)
{
	RET_IF_ERR(get_u32(c, args, "lkey", true, 0, 0xffffffff, &req->dereg_mr.lkey));
	return 0;
}

static int parse_qp_create(struct ctx *c, const json_t *args, struct mrcd_ctl_req *req)
{
	int64_t uc = 0;

	RET_IF_ERR(get_u32(c, args, "sq_depth", false, 1, 65536, &req->qp_create.sq_depth));
	RET_IF_ERR(get_u32(c, args, "rq_depth", false, 1, 65536, &req->qp_create.rq_depth));
	RET_IF_ERR(get_int(c, args, "user_ctx", false, 0, INT64_MAX, &uc));
	req->qp_create.user_ctx = (uint64_t)uc;
	return 0;
}

static int parse_qp_connect(struct ctx *c, const json_t *args, struct mrcd_ctl_req *req)
{
	RET_IF_ERR(get_u32(c, args, "qpn", true, 1, 0xffffff, &req->qp_connect.qpn));
	RET_IF_ERR(get_hex(c, args, "peer_info", req->qp_connect.peer_info, MRCD_CTL_CONN_INFO_LEN));
	return 0;
}

static const char *const keys_attach[] = {"abi", "heap_bytes", "sq_depth", "rq_depth", "cq_depth", NULL};
static const char *const keys_reg_mr[] = {"ofs", "len", "access", NULL};
static const char *const keys_dereg_mr[] = {"lkey", NULL};
static const char *const keys_qp_create[] = {"sq_depth", "rq_depth", "user_ctx", NULL};
static const char *const keys_qp_connect[] = {"qpn", "peer_info", NULL};
static const char *const keys_qp[] = {"qpn", NULL};
static const char *const keys_fault_set[] = {
	"port", "ev_min", "ev_max", "direction", "drop_pct", "reorder_pct",
	"duplicate_pct", "corrupt_pct", "trim_pct", "ecn_pct", "blackhole",
	"delay_us", "jitter_us", NULL};
static const char *const keys_fault_clear[] = {"rule", "port", NULL};
static const char *const keys_ev_deny[] = {"qpn", "ev", "deny", NULL};
static const char *const keys_port_admin[] = {"port", "up", NULL};
static const char *const keys_log_level[] = {"level", "type", NULL};
static const char *const keys_ev_probe[] = {"node", "port", "ev", NULL};
static const char *const keys_st_listen[] = {"region_bytes", "worker", "detach", NULL};
static const char *const keys_st_start[] = {"peer_info", "bytes", "msg_size", "window",
					    "op", "worker", "detach", NULL};
static const char *const keys_st_accept[] = {"id", "peer_info", NULL};
static const char *const keys_st_id[] = {"id", NULL};

/* The argument specs the command table names (its args column). */
static const struct cmd_spec args_none = {NULL, NULL};
static const struct cmd_spec args_qp = {keys_qp, parse_qp};
static const struct cmd_spec args_fault_set = {keys_fault_set, parse_fault_set};
static const struct cmd_spec args_fault_clear = {keys_fault_clear, parse_fault_clear};
static const struct cmd_spec args_ev_deny = {keys_ev_deny, parse_ev_deny};
static const struct cmd_spec args_port_admin = {keys_port_admin, parse_port_admin};
static const struct cmd_spec args_log_level = {keys_log_level, parse_log_level};
static const struct cmd_spec args_ev_probe = {keys_ev_probe, parse_ev_probe};
static const struct cmd_spec args_st_listen = {keys_st_listen, parse_st_listen};
static const struct cmd_spec args_st_start = {keys_st_start, parse_st_start};
static const struct cmd_spec args_st_accept = {keys_st_accept, parse_st_accept};
static const struct cmd_spec args_st_id = {keys_st_id, parse_st_id};
static const struct cmd_spec args_attach = {keys_attach, parse_attach};
static const struct cmd_spec args_reg_mr = {keys_reg_mr, parse_reg_mr};
static const struct cmd_spec args_dereg_mr = {keys_dereg_mr, parse_dereg_mr};
static const struct cmd_spec args_qp_create = {keys_qp_create, parse_qp_create};
static const struct cmd_spec args_qp_connect = {keys_qp_connect, parse_qp_connect};

static const struct cmd_spec *const specs[MRCD_CTL_CMD_COUNT] = {
#define X(e, n, a, r, c, p, h) [MRCD_CTL_##e] = &args_##a,
	MRCD_CTL_CMDS(X)
#undef X
};

static bool key_in(const char *const *keys, const char *k)
{
	for (; keys != NULL && *keys != NULL; keys++)
		if (strcmp(*keys, k) == 0)
			return true;
	return false;
}

static void keys_join(const char *const *keys, char *buf, size_t n)
{
	size_t off = 0;

	buf[0] = '\0';
	for (; *keys != NULL && off < n; keys++)
		off += (size_t)snprintf(buf + off, n - off, "%s%s", off ? ", " : "", *keys);
}

/* Every key of @obj must be in @keys; @where prefixes the reason. */
static int check_keys(struct ctx *c, const json_t *obj, const char *where,
		      const char *const *keys, const char *cmd)
{
	const char *k;
	const json_t *v;
	char buf[48], list[128];

	json_object_foreach((json_t *)(uintptr_t)obj, k, v) {
		(void)v;
		if (key_in(keys, k))
			continue;
		shown(k, buf, sizeof(buf));
		if (keys == NULL)
			return fail(c, EINVAL, "%s%s: unknown key (%s takes no arguments)",
				    where, buf, cmd);
		keys_join(keys, list, sizeof(list));
		return fail(c, EINVAL, "%s%s: unknown key (expected one of: %s)", where, buf,
			    list);
	}
	return 0;
}

/* jansson recurses per nesting level; bound it cheaply on the raw text
 * (brackets inside strings are skipped, so valid input is never refused). */
static bool too_deep(const char *s, size_t len)
{
	int depth = 0;
	bool in_str = false;

	for (size_t i = 0; i < len; i++) {
		char ch = s[i];

		if (in_str) {
			if (ch == '\\')
				i++;
			else if (ch == '"')
				in_str = false;
		} else if (ch == '"') {
			in_str = true;
		} else if (ch == '[' || ch == '{') {
			if (++depth > MAX_DEPTH)
				return true;
		} else if (ch == ']' || ch == '}') {
			depth--;
		}
	}
	return false;
}

static const char *const top_keys[] = {"v", "cmd", "id", "args", NULL};

static int parse_root(struct ctx *c, const json_t *root, struct mrcd_ctl_req *req)
{
	const json_t *v, *cmd, *id, *args;
	const struct cmd_spec *spec;
	const char *name;
	char buf[48];
	enum mrcd_ctl_cmd e;
	int rc;

	if (!json_is_object(root))
		return fail(c, EINVAL, "request must be a JSON object, not %s", type_name(root));
	/* the id first, so that every later error can echo it */
	id = json_object_get(root, "id");
	if (id != NULL) {
		if (!json_is_integer(id))
			return fail(c, EINVAL, "id: must be an integer, not %s", type_name(id));
		req->has_id = true;
		req->id = json_integer_value(id);
	}
	/* the version before the keys, so a newer client learns why */
	v = json_object_get(root, "v");
	if (v == NULL)
		return fail(c, EINVAL, "v: missing required key (protocol version %d)",
			    MRCD_CTL_PROTO_VERSION);
	if (!json_is_integer(v))
		return fail(c, EINVAL, "v: must be an integer, not %s", type_name(v));
	if (json_integer_value(v) != MRCD_CTL_PROTO_VERSION)
		return fail(c, EPROTO, "v: version %lld is not supported (this is version %d)",
			    (long long)json_integer_value(v), MRCD_CTL_PROTO_VERSION);
	rc = check_keys(c, root, "", top_keys, "request");
	if (rc < 0)
		return rc;
	cmd = json_object_get(root, "cmd");
	if (cmd == NULL)
		return fail(c, EINVAL, "cmd: missing required key");
	if (!json_is_string(cmd))
		return fail(c, EINVAL, "cmd: must be a string, not %s", type_name(cmd));
	name = json_string_value(cmd);
	e = strlen(name) == json_string_length(cmd) ? mrcd_ctl_cmd_lookup(name)
						     : MRCD_CTL_INVALID;
	if (e == MRCD_CTL_INVALID)
		return fail(c, ENOENT, "unknown command \"%s\"", shown(name, buf, sizeof(buf)));
	args = json_object_get(root, "args");
	if (args != NULL && !json_is_object(args))
		return fail(c, EINVAL, "args: must be an object, not %s", type_name(args));
	spec = specs[e];
	if (args != NULL) {
		rc = check_keys(c, args, "args.", spec->keys, name);
		if (rc < 0)
			return rc;
	}
	req->cmd = e;
	if (spec->parse != NULL) {
		json_t *empty = json_object();

		if (empty == NULL)
			return fail(c, ENOMEM, "out of memory");
		rc = spec->parse(c, args != NULL ? args : empty, req);
		json_decref(empty);
		if (rc < 0) {
			req->cmd = MRCD_CTL_INVALID;
			return rc;
		}
	}
	return 0;
}

int mrcd_ctl_parse(const char *line, size_t len, struct mrcd_ctl_req *req,
		   char *reason, size_t reason_len)
{
	struct ctx c = {reason, reason_len};
	json_error_t jerr;
	json_t *root;
	int rc;

	memset(req, 0, sizeof(*req));
	if (reason != NULL && reason_len > 0)
		reason[0] = '\0';
	if (len > MRCD_CTL_LINE_MAX)
		return fail(&c, E2BIG, "request is %zu bytes, longer than %d", len,
			    MRCD_CTL_LINE_MAX);
	if (too_deep(line, len))
		return fail(&c, EINVAL, "invalid JSON: nested deeper than %d", MAX_DEPTH);
	root = json_loadb(line, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
	if (root == NULL) {
		char text[sizeof(jerr.text)];

		return fail(&c, EINVAL, "invalid JSON at column %d: %s", jerr.column,
			    shown(jerr.text, text, 64));
	}
	rc = parse_root(&c, root, req);
	json_decref(root);
	if (rc < 0)
		req->cmd = MRCD_CTL_INVALID;
	return rc;
}
