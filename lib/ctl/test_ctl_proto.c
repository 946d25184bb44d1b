/* test_ctl_proto.c - unit tests for ctl_proto.c (mrcd_ctl.h): the command
 * table, the hex codec, the request envelope and every command's arguments,
 * with each range checked just inside and just outside its bounds. Requests
 * are written with ' for " to stay readable (req() swaps them).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "mrcd_ctl.h"
#include "mrcp_test.h"

static struct mrcd_ctl_req r;
static char reason[MRCD_CTL_REASON_MAX];
static char line[MRCD_CTL_LINE_MAX + 64];

/* Parse a request written with ' for ". */
static int __attribute__((format(printf, 1, 2))) req(const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(line))
		mrcp_test_fail(__FILE__, __LINE__, "request too long for the test buffer");
	for (char *p = line; *p != '\0'; p++)
		if (*p == '\'')
			*p = '"';
	memset(reason, 'x', sizeof(reason));
	return mrcd_ctl_parse(line, (size_t)n, &r, reason, sizeof(reason));
}

/* The reason is one NUL-terminated line that contains @what. */
#define ASSERT_REASON(what)                                                    \
	do {                                                                   \
		ASSERT_TRUE(memchr(reason, '\0', sizeof(reason)) != NULL);     \
		ASSERT_TRUE(strchr(reason, '\n') == NULL);                     \
		if (strstr(reason, (what)) == NULL)                            \
			mrcp_test_fail(__FILE__, __LINE__,                     \
				       "reason \"%s\" lacks \"%s\"", reason, (what)); \
	} while (0)

#define ASSERT_OK(rc)                                                          \
	do {                                                                   \
		int rc__ = (rc);                                               \
		if (rc__ != 0)                                                 \
			mrcp_test_fail(__FILE__, __LINE__, "%s: %d: %s", line, \
				       rc__, reason);                          \
		ASSERT_STREQ("", reason);                                      \
	} while (0)

#define ASSERT_BAD(rc, what)                                                   \
	do {                                                                   \
		int rc__ = (rc);                                               \
		if (rc__ != -EINVAL)                                           \
			mrcp_test_fail(__FILE__, __LINE__,                     \
				       "%s: expected -EINVAL, got %d (%s)",    \
				       line, rc__, reason);                    \
		ASSERT_REASON(what);                                           \
		ASSERT_EQ(MRCD_CTL_INVALID, r.cmd);                            \
	} while (0)

static char hex416[2 * MRCD_CTL_CONN_INFO_LEN + 1];
static uint8_t info[MRCD_CTL_CONN_INFO_LEN];

static void make_info(void)
{
	for (unsigned i = 0; i < MRCD_CTL_CONN_INFO_LEN; i++)
		info[i] = (uint8_t)(i * 37 + 11);
	mrcd_ctl_hex_encode(info, sizeof(info), hex416);
}

/*
 * Check one integer key: @lo and @hi accepted, @lo - 1 and @hi + 1 refused
 * (when @lo_out / @hi_out say they exist). @fmt is a request with one %s
 * where "'key':value" goes.
 */
static void int_bounds(int src_line, const char *fmt, const char *key, long long lo,
		       long long hi, bool lo_out, bool hi_out)
{
	char kv[96], want[64];
	const long long vals[4] = {lo, hi, lo - 1, hi + 1};
	const bool ok[4] = {true, true, false, false};
	const bool run[4] = {true, true, lo_out, hi_out};

	snprintf(want, sizeof(want), "args.%s", key);
	for (int i = 0; i < 4; i++) {
		int rc;

		if (!run[i])
			continue;
		snprintf(kv, sizeof(kv), "'%s':%lld", key, vals[i]);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
		rc = req(fmt, kv);
#pragma GCC diagnostic pop
		if (ok[i] && rc != 0)
			mrcp_test_fail(__FILE__, src_line, "%s: refused: %s", line, reason);
		if (!ok[i] && (rc != -EINVAL || strstr(reason, want) == NULL))
			mrcp_test_fail(__FILE__, src_line, "%s: %d \"%s\"", line, rc, reason);
	}
	/* a real where an integer is required */
	snprintf(kv, sizeof(kv), "'%s':%lld.0", key, lo);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	if (req(fmt, kv) != -EINVAL || strstr(reason, want) == NULL)
		mrcp_test_fail(__FILE__, src_line, "%s: real accepted: %s", line, reason);
	snprintf(kv, sizeof(kv), "'%s':'%lld'", key, lo);
	/* a port may be a name, and "1" is a fine one */
	if (strcmp(key, "port") != 0 && (req(fmt, kv) != -EINVAL || strstr(reason, want) == NULL))
		mrcp_test_fail(__FILE__, src_line, "%s: string accepted: %s", line, reason);
#pragma GCC diagnostic pop
}

/* The same for a number (double) key: reals and integers both accepted. */
static void num_bounds(int src_line, const char *fmt, const char *key, double hi)
{
	char kv[96], want[64];
	const char *good[] = {"0", "0.0", "0.5", NULL};
	const char *bad[] = {"-0.001", "-1", "'1'", "true", "null", NULL};
	int rc;

	snprintf(want, sizeof(want), "args.%s", key);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	for (int i = 0; good[i] != NULL; i++) {
		snprintf(kv, sizeof(kv), "'%s':%s", key, good[i]);
		if (req(fmt, kv) != 0)
			mrcp_test_fail(__FILE__, src_line, "%s: refused: %s", line, reason);
	}
	snprintf(kv, sizeof(kv), "'%s':%.0f", key, hi);
	if (req(fmt, kv) != 0)
		mrcp_test_fail(__FILE__, src_line, "%s: refused: %s", line, reason);
	snprintf(kv, sizeof(kv), "'%s':%.3f", key, hi + 0.001);
	rc = req(fmt, kv);
	if (rc != -EINVAL || strstr(reason, want) == NULL)
		mrcp_test_fail(__FILE__, src_line, "%s: %d \"%s\"", line, rc, reason);
	for (int i = 0; bad[i] != NULL; i++) {
		snprintf(kv, sizeof(kv), "'%s':%s", key, bad[i]);
		rc = req(fmt, kv);
		if (rc != -EINVAL || strstr(reason, want) == NULL)
			mrcp_test_fail(__FILE__, src_line, "%s: %d \"%s\"", line, rc, reason);
	}
#pragma GCC diagnostic pop
}

/* ---- command table ------------------------------------------------------ */

TEST(ctl, cmd_name__round_trips_every_command)
{
	for (unsigned c = MRCD_CTL_INVALID + 1; c < MRCD_CTL_CMD_COUNT; c++) {
		const char *n = mrcd_ctl_cmd_name((enum mrcd_ctl_cmd)c);

		ASSERT_TRUE(n != NULL);
		ASSERT_EQ(c, mrcd_ctl_cmd_lookup(n));
	}
	ASSERT_STREQ("version", mrcd_ctl_cmd_name(MRCD_CTL_VERSION));
	ASSERT_STREQ("selftest_stop", mrcd_ctl_cmd_name(MRCD_CTL_SELFTEST_STOP));
}

TEST(ctl, cmd_table__every_command_has_a_row)
{
	for (unsigned c = MRCD_CTL_INVALID + 1; c < MRCD_CTL_CMD_COUNT; c++) {
		const char *h = mrcd_ctl_cmd_help((enum mrcd_ctl_cmd)c);

		ASSERT_TRUE(h != NULL && h[0] != '\0');
		ASSERT_TRUE(mrcd_ctl_cmd_route((enum mrcd_ctl_cmd)c) <= MRCD_CTL_ROUTE_SESSION);
		ASSERT_TRUE(mrcd_ctl_cmd_combine((enum mrcd_ctl_cmd)c) <= MRCD_CTL_COMBINE_SUM);
		/* only answers of every worker are folded */
		if (mrcd_ctl_cmd_combine((enum mrcd_ctl_cmd)c) != MRCD_CTL_COMBINE_ONE)
			ASSERT_EQ(MRCD_CTL_ROUTE_ALL, mrcd_ctl_cmd_route((enum mrcd_ctl_cmd)c));
	}
	ASSERT_TRUE(mrcd_ctl_cmd_help(MRCD_CTL_INVALID) == NULL);
	ASSERT_TRUE(mrcd_ctl_cmd_help(MRCD_CTL_CMD_COUNT) == NULL);
}

TEST(ctl, cmd_table__sessions_routes_and_combines)
{
	static const enum mrcd_ctl_cmd sess[] = {MRCD_CTL_REG_MR, MRCD_CTL_DEREG_MR, MRCD_CTL_QP_CREATE,
						 MRCD_CTL_QP_INFO, MRCD_CTL_QP_CONNECT, MRCD_CTL_QP_DESTROY,
						 MRCD_CTL_QP_QUERY};
	unsigned n = 0;

	for (unsigned c = MRCD_CTL_INVALID + 1; c < MRCD_CTL_CMD_COUNT; c++)
		n += mrcd_ctl_cmd_needs_session((enum mrcd_ctl_cmd)c);
	ASSERT_EQ(sizeof(sess) / sizeof(sess[0]), n);
	for (unsigned i = 0; i < sizeof(sess) / sizeof(sess[0]); i++)
		ASSERT_TRUE(mrcd_ctl_cmd_needs_session(sess[i]));
	ASSERT_EQ(MRCD_CTL_ROUTE_DAEMON, mrcd_ctl_cmd_route(MRCD_CTL_VERSION));
	ASSERT_EQ(MRCD_CTL_ROUTE_SOCKET, mrcd_ctl_cmd_route(MRCD_CTL_ATTACH));
	ASSERT_EQ(MRCD_CTL_ROUTE_QPN, mrcd_ctl_cmd_route(MRCD_CTL_EV_DENY));
	ASSERT_EQ(MRCD_CTL_COMBINE_STATUS, mrcd_ctl_cmd_combine(MRCD_CTL_STATUS));
	ASSERT_EQ(MRCD_CTL_COMBINE_PORTS, mrcd_ctl_cmd_combine(MRCD_CTL_PORTS));
	ASSERT_EQ(MRCD_CTL_COMBINE_SUM, mrcd_ctl_cmd_combine(MRCD_CTL_COUNTERS));
	ASSERT_EQ(MRCD_CTL_COMBINE_LIST, mrcd_ctl_cmd_combine(MRCD_CTL_QPS));
}

TEST(ctl, parse__route_key_of_each_route)
{
	ASSERT_OK(req("{'v':1,'cmd':'evs','args':{'qpn':77}}"));
	ASSERT_EQ(77, r.route_key);
	ASSERT_OK(req("{'v':1,'cmd':'ev_deny','args':{'qpn':78,'ev':5}}"));
	ASSERT_EQ(78, r.route_key);
	ASSERT_OK(req("{'v':1,'cmd':'selftest_listen'}"));
	ASSERT_EQ(-1, r.route_key);
	ASSERT_OK(req("{'v':1,'cmd':'selftest_listen','args':{'worker':2}}"));
	ASSERT_EQ(2, r.route_key);
	ASSERT_OK(req("{'v':1,'cmd':'selftest_stop','args':{'id':9}}"));
	ASSERT_EQ(9, r.route_key);
	make_info();
	ASSERT_OK(req("{'v':1,'cmd':'selftest_accept','args':{'id':10,'peer_info':'%s'}}", hex416));
	ASSERT_EQ(10, r.route_key);
	ASSERT_OK(req("{'v':1,'cmd':'status'}"));
	ASSERT_EQ(0, r.route_key);
}

TEST(ctl, cmd_name__invalid_is_null)
{
	ASSERT_TRUE(mrcd_ctl_cmd_name(MRCD_CTL_INVALID) == NULL);
	ASSERT_TRUE(mrcd_ctl_cmd_name(MRCD_CTL_CMD_COUNT) == NULL);
	ASSERT_TRUE(mrcd_ctl_cmd_name((enum mrcd_ctl_cmd)1000) == NULL);
}

TEST(ctl, cmd_lookup__unknown_is_invalid)
{
	ASSERT_EQ(MRCD_CTL_INVALID, mrcd_ctl_cmd_lookup("nope"));
	ASSERT_EQ(MRCD_CTL_INVALID, mrcd_ctl_cmd_lookup(""));
	ASSERT_EQ(MRCD_CTL_INVALID, mrcd_ctl_cmd_lookup("fault-set"));
	ASSERT_EQ(MRCD_CTL_INVALID, mrcd_ctl_cmd_lookup("VERSION"));
	ASSERT_EQ(MRCD_CTL_INVALID, mrcd_ctl_cmd_lookup(NULL));
}

/* ---- hex -------------------------------------------------------------- */

TEST(ctl, hex__round_trip)
{
	uint8_t back[MRCD_CTL_CONN_INFO_LEN];

	make_info();
	ASSERT_EQ(2 * MRCD_CTL_CONN_INFO_LEN, strlen(hex416));
	ASSERT_EQ(0, mrcd_ctl_hex_decode(hex416, back, sizeof(back)));
	ASSERT_MEMEQ(info, back, sizeof(back));
}

TEST(ctl, hex_encode__lower_case)
{
	const uint8_t in[] = {0x00, 0x0f, 0xa5, 0xff};
	char out[9];

	mrcd_ctl_hex_encode(in, sizeof(in), out);
	ASSERT_STREQ("000fa5ff", out);
	mrcd_ctl_hex_encode(in, 0, out);
	ASSERT_STREQ("", out);
}

TEST(ctl, hex_decode__accepts_upper_case)
{
	uint8_t out[2];

	ASSERT_EQ(0, mrcd_ctl_hex_decode("A5fF", out, 2));
	ASSERT_EQ(0xa5, out[0]);
	ASSERT_EQ(0xff, out[1]);
}

TEST(ctl, hex_decode__rejects_bad_length_and_chars)
{
	uint8_t out[2];

	ASSERT_EQ(-EINVAL, mrcd_ctl_hex_decode("a5f", out, 2));
	ASSERT_EQ(-EINVAL, mrcd_ctl_hex_decode("a5ff0", out, 2));
	ASSERT_EQ(-EINVAL, mrcd_ctl_hex_decode("", out, 2));
	ASSERT_EQ(-EINVAL, mrcd_ctl_hex_decode("a5fg", out, 2));
	ASSERT_EQ(-EINVAL, mrcd_ctl_hex_decode("a5 f", out, 2));
	ASSERT_EQ(-EINVAL, mrcd_ctl_hex_decode("0xa5", out, 2));
	ASSERT_EQ(-EINVAL, mrcd_ctl_hex_decode(NULL, out, 2));
	ASSERT_EQ(0, mrcd_ctl_hex_decode("", out, 0));
}

/* ---- errno names and replies -------------------------------------------- */

TEST(ctl, errno_name__every_listed_code)
{
#define X(n) ASSERT_STREQ(#n, mrcd_ctl_errno_name(n));
	MRCD_CTL_ERRNOS(X)
#undef X
	ASSERT_TRUE(mrcd_ctl_errno_name(0) == NULL);
	ASSERT_TRUE(mrcd_ctl_errno_name(-EINVAL) == NULL);
	ASSERT_TRUE(mrcd_ctl_errno_name(EADDRINUSE) == NULL);
}

TEST(ctl, format_reply__ok)
{
	json_t *res = json_pack("{s:i,s:[i,i]}", "qpn", 5, "list", 1, 2);
	char *out = mrcd_ctl_format_reply(true, -3, res, 0, "ignored");

	ASSERT_STREQ("{\"v\":1,\"id\":-3,\"ok\":true,\"result\":{\"qpn\":5,\"list\":[1,2]}}\n", out);
	free(out);
	ASSERT_EQ(1, res->refcount); /* not consumed */
	json_decref(res);
	out = mrcd_ctl_format_reply(false, 9, NULL, 0, NULL);
	ASSERT_STREQ("{\"v\":1,\"ok\":true,\"result\":{}}\n", out);
	free(out);
}

TEST(ctl, format_reply__error)
{
	char *out = mrcd_ctl_format_reply(true, 7, NULL, -ENOENT, "args.qpn: no QP 5");

	ASSERT_STREQ("{\"v\":1,\"id\":7,\"ok\":false,\"error\":{\"errno\":2,\"code\":\"ENOENT\","
		     "\"reason\":\"args.qpn: no QP 5\"}}\n", out);
	free(out);
	/* no reason: strerror; a code outside the table: EIO */
	out = mrcd_ctl_format_reply(false, 0, NULL, -EADDRINUSE, "");
	ASSERT_STREQ("{\"v\":1,\"ok\":false,\"error\":{\"errno\":98,\"code\":\"EIO\","
		     "\"reason\":\"Address already in use\"}}\n", out);
	free(out);
}

/* ---- envelope ----------------------------------------------------------- */

TEST(ctl, parse__minimal_request)
{
	ASSERT_OK(req("{'v':1,'cmd':'version'}"));
	ASSERT_EQ(MRCD_CTL_VERSION, r.cmd);
	ASSERT_FALSE(r.has_id);
}

TEST(ctl, parse__id_and_empty_args)
{
	ASSERT_OK(req("{'v':1,'cmd':'status','id':42,'args':{}}"));
	ASSERT_EQ(MRCD_CTL_STATUS, r.cmd);
	ASSERT_TRUE(r.has_id);
	ASSERT_EQ(42, r.id);
	ASSERT_OK(req("{'id':-9223372036854775808,'cmd':'ports','v':1}"));
	ASSERT_TRUE(r.has_id);
	ASSERT_TRUE(r.id == INT64_MIN);
}

TEST(ctl, parse__trailing_newline_and_whitespace)
{
	ASSERT_OK(req("  {'v':1,'cmd':'qps'} \r\n"));
	ASSERT_EQ(MRCD_CTL_QPS, r.cmd);
}

TEST(ctl, parse__not_nul_terminated)
{
	static const char buf[] = "{\"v\":1,\"cmd\":\"lcores\"}GARBAGE";

	ASSERT_EQ(0, mrcd_ctl_parse(buf, 22, &r, reason, sizeof(reason)));
	ASSERT_EQ(MRCD_CTL_LCORES, r.cmd);
	ASSERT_EQ(-EINVAL, mrcd_ctl_parse(buf, 23, &r, reason, sizeof(reason)));
}

TEST(ctl, parse__every_argless_command)
{
	static const enum mrcd_ctl_cmd argless[] = {
		MRCD_CTL_VERSION, MRCD_CTL_STATUS, MRCD_CTL_PORTS, MRCD_CTL_NEIGHBOURS, MRCD_CTL_LCORES,
		MRCD_CTL_QPS, MRCD_CTL_COUNTERS, MRCD_CTL_FAULTS, MRCD_CTL_PROBES};

	for (unsigned i = 0; i < sizeof(argless) / sizeof(argless[0]); i++) {
		const char *n = mrcd_ctl_cmd_name(argless[i]);

		ASSERT_OK(req("{'v':1,'cmd':'%s'}", n));
		ASSERT_EQ(argless[i], r.cmd);
		ASSERT_OK(req("{'v':1,'cmd':'%s','args':{}}", n));
		ASSERT_EQ(argless[i], r.cmd);
		ASSERT_BAD(req("{'v':1,'cmd':'%s','args':{'x':1}}", n), "args.x: unknown key");
		ASSERT_REASON("takes no arguments");
	}
}

TEST(ctl, parse__malformed_json)
{
	const char *bad[] = {"", " ", "{", "{'v':1,", "{'v':1,'cmd':'version'}}",
			     "{'v':1,'cmd':'version'} {}", "{v:1}", "{'v':1,'cmd':'version',}",
			     "{'v':01,'cmd':'version'}", "\x01", "{'v':1,'cmd':'ver\\x'}"};

	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ASSERT_EQ(-EINVAL, req("%s", bad[i]));
		ASSERT_REASON("invalid JSON");
		ASSERT_EQ(MRCD_CTL_INVALID, r.cmd);
		ASSERT_FALSE(r.has_id);
	}
}

TEST(ctl, parse__embedded_nul_refused)
{
	static const char buf[] = "{\"v\":1,\"cmd\":\"version\"}\0";
	static const char esc[] = "{\"v\":1,\"cmd\":\"vers\\u0000ion\"}";

	ASSERT_EQ(-EINVAL, mrcd_ctl_parse(buf, sizeof(buf) - 1, &r, reason, sizeof(reason)));
	ASSERT_EQ(-EINVAL, mrcd_ctl_parse(esc, sizeof(esc) - 1, &r, reason, sizeof(reason)));
}

TEST(ctl, parse__not_an_object)
{
	const char *bad[] = {"[]", "[{'v':1,'cmd':'version'}]", "1", "'version'", "null", "true"};

	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ASSERT_EQ(-EINVAL, req("%s", bad[i]));
		ASSERT_REASON("must be a JSON object");
	}
}

TEST(ctl, parse__too_deep)
{
	char deep[200];
	int n = 0;

	n += snprintf(deep + n, sizeof(deep) - (size_t)n, "{'v':1,'cmd':'version','args':");
	for (int i = 0; i < 40; i++)
		deep[n++] = '[';
	for (int i = 0; i < 40; i++)
		deep[n++] = ']';
	deep[n++] = '}';
	deep[n] = '\0';
	ASSERT_EQ(-EINVAL, req("%s", deep));
	ASSERT_REASON("nested deeper");
	/* brackets inside strings do not count */
	ASSERT_BAD(req("{'v':1,'cmd':'version','args':{'[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[':1}}"),
		   "unknown key");
}

TEST(ctl, parse__missing_v)
{
	ASSERT_BAD(req("{'cmd':'version','id':3}"), "v: missing required key");
	ASSERT_TRUE(r.has_id);
	ASSERT_EQ(3, r.id);
}

TEST(ctl, parse__v_wrong_type)
{
	ASSERT_BAD(req("{'v':'1','cmd':'version'}"), "v: must be an integer");
	ASSERT_BAD(req("{'v':1.0,'cmd':'version'}"), "v: must be an integer");
	ASSERT_BAD(req("{'v':null,'cmd':'version'}"), "v: must be an integer");
}

TEST(ctl, parse__wrong_version_is_eproto)
{
	ASSERT_EQ(-EPROTO, req("{'v':2,'cmd':'version','id':5}"));
	ASSERT_REASON("version 2 is not supported");
	ASSERT_TRUE(r.has_id);
	ASSERT_EQ(5, r.id);
	ASSERT_EQ(-EPROTO, req("{'v':0,'cmd':'version'}"));
	ASSERT_EQ(-EPROTO, req("{'v':-1,'cmd':'version'}"));
	/* a newer version may bring new keys: the version is reported first */
	ASSERT_EQ(-EPROTO, req("{'v':2,'cmd':'version','trace':true}"));
}

TEST(ctl, parse__unknown_command_is_enoent)
{
	ASSERT_EQ(-ENOENT, req("{'v':1,'cmd':'reboot','id':9}"));
	ASSERT_REASON("unknown command \"reboot\"");
	ASSERT_TRUE(r.has_id);
	ASSERT_EQ(9, r.id);
	ASSERT_EQ(-ENOENT, req("{'v':1,'cmd':'fault-set'}"));
	ASSERT_EQ(-ENOENT, req("{'v':1,'cmd':''}"));
}

TEST(ctl, parse__unknown_command_reason_is_bounded)
{
	char name[300];

	memset(name, 'a', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	ASSERT_EQ(-ENOENT, req("{'v':1,'cmd':'aaaaa\\tbbb%s'}", name));
	ASSERT_REASON("unknown command \"aaaaa?bbbaaa");
	ASSERT_REASON("...");
	ASSERT_LT(strlen(reason), 100);
}

TEST(ctl, parse__cmd_missing_or_wrong_type)
{
	ASSERT_BAD(req("{'v':1}"), "cmd: missing required key");
	ASSERT_BAD(req("{'v':1,'cmd':7}"), "cmd: must be a string");
	ASSERT_BAD(req("{'v':1,'cmd':['version']}"), "cmd: must be a string");
}

TEST(ctl, parse__unknown_top_level_key)
{
	ASSERT_BAD(req("{'v':1,'cmd':'version','id':4,'arg':{}}"), "arg: unknown key");
	ASSERT_REASON("expected one of: v, cmd, id, args");
	ASSERT_TRUE(r.has_id);
	ASSERT_EQ(4, r.id);
}

TEST(ctl, parse__duplicate_keys)
{
	ASSERT_BAD(req("{'v':1,'cmd':'version','cmd':'status'}"), "invalid JSON");
	ASSERT_BAD(req("{'v':1,'cmd':'qp','args':{'qpn':1,'qpn':2}}"), "duplicate");
}

TEST(ctl, parse__id_wrong_type)
{
	ASSERT_BAD(req("{'v':1,'cmd':'version','id':1.5}"), "id: must be an integer");
	ASSERT_FALSE(r.has_id);
	ASSERT_BAD(req("{'v':1,'cmd':'version','id':'7'}"), "id: must be an integer");
	ASSERT_BAD(req("{'v':1,'cmd':'version','id':null}"), "id: must be an integer");
}

TEST(ctl, parse__id_echoed_on_argument_error)
{
	ASSERT_BAD(req("{'v':1,'cmd':'qp','id':77,'args':{'qpn':0}}"), "args.qpn");
	ASSERT_TRUE(r.has_id);
	ASSERT_EQ(77, r.id);
}

TEST(ctl, parse__args_not_an_object)
{
	ASSERT_BAD(req("{'v':1,'cmd':'version','args':[]}"), "args: must be an object");
	ASSERT_BAD(req("{'v':1,'cmd':'version','args':null}"), "args: must be an object");
	ASSERT_BAD(req("{'v':1,'cmd':'qp','args':5}"), "args: must be an object");
}

TEST(ctl, parse__too_long_is_e2big)
{
	size_t n;

	make_info();
	n = (size_t)snprintf(line, sizeof(line), "{\"v\":1,\"cmd\":\"version\"}");
	memset(line + n, ' ', sizeof(line) - n);
	ASSERT_EQ(0, mrcd_ctl_parse(line, MRCD_CTL_LINE_MAX, &r, reason, sizeof(reason)));
	ASSERT_EQ(-E2BIG, mrcd_ctl_parse(line, MRCD_CTL_LINE_MAX + 1, &r, reason,
					 sizeof(reason)));
	ASSERT_REASON("longer than 65536");
	ASSERT_EQ(MRCD_CTL_INVALID, r.cmd);
}

TEST(ctl, parse__reason_buffer_optional_and_truncated)
{
	char small[8];

	ASSERT_EQ(-ENOENT, mrcd_ctl_parse("{\"v\":1,\"cmd\":\"x\"}", 17, &r, NULL, 0));
	ASSERT_EQ(-ENOENT, mrcd_ctl_parse("{\"v\":1,\"cmd\":\"x\"}", 17, &r, small, sizeof(small)));
	ASSERT_EQ(7, strlen(small));
	ASSERT_EQ(0, mrcd_ctl_parse("{\"v\":1,\"cmd\":\"qps\"}", 19, &r, small, 0));
}

TEST(ctl, parse__clears_previous_request)
{
	ASSERT_OK(req("{'v':1,'cmd':'qp','id':1,'args':{'qpn':5}}"));
	ASSERT_BAD(req("{'v':1,'cmd':'qp'}"), "args.qpn: missing required key");
	ASSERT_FALSE(r.has_id);
	ASSERT_EQ(0, r.qp.qpn);
}

/* ---- qp, evs ------------------------------------------------------------- */

TEST(ctl, qp__parses)
{
	ASSERT_OK(req("{'v':1,'cmd':'qp','args':{'qpn':5}}"));
	ASSERT_EQ(MRCD_CTL_QP, r.cmd);
	ASSERT_EQ(5, r.qp.qpn);
	ASSERT_OK(req("{'v':1,'cmd':'evs','args':{'qpn':16777215}}"));
	ASSERT_EQ(MRCD_CTL_EVS, r.cmd);
	ASSERT_EQ(0xffffff, r.qp.qpn);
}

TEST(ctl, qp_query__a_client_command_on_its_own_qpn)
{
	/* D70: answered from the caller's session only (route SESSION), so a
	 * client never learns about another's QPs through it */
	ASSERT_OK(req("{'v':1,'cmd':'qp_query','id':4,'args':{'qpn':12}}"));
	ASSERT_EQ(MRCD_CTL_QP_QUERY, r.cmd);
	ASSERT_EQ(12, r.qp.qpn);
	ASSERT_EQ(MRCD_CTL_ROUTE_SESSION, mrcd_ctl_cmd_route(MRCD_CTL_QP_QUERY));
	ASSERT_TRUE(mrcd_ctl_cmd_needs_session(MRCD_CTL_QP_QUERY));
	int_bounds(__LINE__, "{'v':1,'cmd':'qp_query','args':{%s}}", "qpn", 1, 0xffffff, true, true);
	ASSERT_BAD(req("{'v':1,'cmd':'qp_query'}"), "args.qpn: missing required key");
	ASSERT_BAD(req("{'v':1,'cmd':'qp_query','args':{'qpn':1,'client':2}}"), "args.client: unknown key");
}

TEST(ctl, qp__bounds_and_types)
{
	int_bounds(__LINE__, "{'v':1,'cmd':'qp','args':{%s}}", "qpn", 1, 0xffffff, true, true);
	int_bounds(__LINE__, "{'v':1,'cmd':'evs','args':{%s}}", "qpn", 1, 0xffffff, true, true);
	ASSERT_BAD(req("{'v':1,'cmd':'qp'}"), "args.qpn: missing required key");
	ASSERT_BAD(req("{'v':1,'cmd':'evs','args':{}}"), "args.qpn: missing required key");
	ASSERT_BAD(req("{'v':1,'cmd':'qp','args':{'qpn':1,'ev':2}}"), "args.ev: unknown key");
	ASSERT_REASON("expected one of: qpn");
	ASSERT_BAD(req("{'v':1,'cmd':'qp','args':{'qpn':99999999999999999999}}"), "invalid JSON");
}

/* ---- fault_set ------------------------------------------------------------ */

TEST(ctl, fault_set__minimal_defaults)
{
	ASSERT_OK(req("{'v':1,'cmd':'fault_set','args':{'port':'plane2','blackhole':true}}"));
	ASSERT_EQ(MRCD_CTL_FAULT_SET, r.cmd);
	ASSERT_STREQ("plane2", r.fault_set.port.name);
	ASSERT_EQ(0, r.fault_set.port.plane);
	ASSERT_EQ(0, r.fault_set.ev_min);
	ASSERT_U64_EQ(0xffffffff, r.fault_set.ev_max);
	ASSERT_EQ(MRCD_CTL_DIR_TX, r.fault_set.dir);
	ASSERT_TRUE(r.fault_set.blackhole);
	ASSERT_DBL_NEAR(0, r.fault_set.drop_pct, 0);
	ASSERT_DBL_NEAR(0, r.fault_set.delay_us, 0);
}

TEST(ctl, fault_set__full)
{
	ASSERT_OK(req("{'v':1,'cmd':'fault_set','id':3,'args':{'port':3,'ev_min':10,"
		      "'ev_max':20,'direction':'both','drop_pct':1.5,'reorder_pct':2,"
		      "'duplicate_pct':3,'corrupt_pct':4,'trim_pct':5,'ecn_pct':6.25,"
		      "'blackhole':false,'delay_us':100,'jitter_us':12.5}}"));
	ASSERT_EQ(3, r.fault_set.port.plane);
	ASSERT_STREQ("", r.fault_set.port.name);
	ASSERT_EQ(10, r.fault_set.ev_min);
	ASSERT_EQ(20, r.fault_set.ev_max);
	ASSERT_EQ(MRCD_CTL_DIR_BOTH, r.fault_set.dir);
	ASSERT_DBL_NEAR(1.5, r.fault_set.drop_pct, 0);
	ASSERT_DBL_NEAR(2, r.fault_set.reorder_pct, 0);
	ASSERT_DBL_NEAR(3, r.fault_set.duplicate_pct, 0);
	ASSERT_DBL_NEAR(4, r.fault_set.corrupt_pct, 0);
	ASSERT_DBL_NEAR(5, r.fault_set.trim_pct, 0);
	ASSERT_DBL_NEAR(6.25, r.fault_set.ecn_pct, 0);
	ASSERT_FALSE(r.fault_set.blackhole);
	ASSERT_DBL_NEAR(100, r.fault_set.delay_us, 0);
	ASSERT_DBL_NEAR(12.5, r.fault_set.jitter_us, 0);
}

TEST(ctl, fault_set__each_kind_alone_counts)
{
	const char *kinds[] = {"'drop_pct':0.1", "'reorder_pct':1", "'duplicate_pct':1",
			       "'corrupt_pct':1", "'trim_pct':1", "'ecn_pct':1",
			       "'blackhole':true", "'delay_us':1", "'jitter_us':0.5"};

	for (unsigned i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		ASSERT_OK(req("{'v':1,'cmd':'fault_set','args':{'port':1,%s}}", kinds[i]));
}

TEST(ctl, fault_set__no_kind_set)
{
	ASSERT_BAD(req("{'v':1,'cmd':'fault_set','args':{'port':1}}"), "args: no fault kind set");
	ASSERT_BAD(req("{'v':1,'cmd':'fault_set','args':{'port':1,'drop_pct':0,"
		       "'blackhole':false,'delay_us':0.0,'direction':'rx'}}"),
		   "args: no fault kind set");
}

TEST(ctl, fault_set__port_forms)
{
	char name[40];

	int_bounds(__LINE__, "{'v':1,'cmd':'fault_set','args':{'blackhole':true,%s}}", "port",
		   1, 32, true, true);
	memset(name, 'p', 31);
	name[31] = '\0';
	ASSERT_OK(req("{'v':1,'cmd':'fault_set','args':{'port':'%s','blackhole':true}}", name));
	ASSERT_STREQ(name, r.fault_set.port.name);
	ASSERT_OK(req("{'v':1,'cmd':'fault_set','args':{'port':'A-z_09','blackhole':true}}"));
	ASSERT_OK(req("{'v':1,'cmd':'fault_set','args':{'port':'7','blackhole':true}}"));
	ASSERT_STREQ("7", r.fault_set.port.name);
	ASSERT_EQ(0, r.fault_set.port.plane);
	name[31] = 'p';
	name[32] = '\0';
	ASSERT_BAD(req("{'v':1,'cmd':'fault_set','args':{'port':'%s','blackhole':true}}", name),
		   "args.port: must be a port name");
	ASSERT_BAD(req("{'v':1,'cmd':'fault_set','args':{'port':'','blackhole':true}}"),
		   "args.port");
	ASSERT_BAD(req("{'v':1,'cmd':'fault_set','args':{'port':'pl ane','blackhole':true}}"),
		   "args.port");
	ASSERT_BAD(req("{'v':1,'cmd':'fault_set','args':{'port':'pl.ane','blackhole':true}}"),
		   "args.port");
	ASSERT_BAD(req("{'v':1,'cmd':'fault_set','args':{'port':'p\\u0000','blackhole':true}}"),
		   "invalid JSON");
	ASSERT_BAD(req("{'v':1,'cmd':'fault_set','args':{'port':true,'blackhole':true}}"),
		   "args.port: must be a port name");
	ASSERT_BAD(req("{'v':1,'cmd':'fault_set','args':{'port':1.0,'blackhole':true}}"),
		   "args.port");
	ASSERT_BAD(req("{'v':1,'cmd':'fault_set','args':{'blackhole':true}}"),
		   "args.port: missing required key");
}

TEST(ctl, fault_set__ev_range)
{
	int_bounds(__LINE__, "{'v':1,'cmd':'fault_set','args':{'port':1,'blackhole':true,%s}}",
		   "ev_min", 0, 0xffffffffLL, true, true);
	int_bounds(__LINE__, "{'v':1,'cmd':'fault_set','args':{'port':1,'blackhole':true,%s}}",
		   "ev_max", 0, 0xffffffffLL, true, true);
	ASSERT_OK(req("{'v':1,'cmd':'fault_set','args':{'port':1,'blackhole':true,"
		      "'ev_min':7,'ev_max':7}}"));
	ASSERT_BAD(req("{'v':1,'cmd':'fault_set','args':{'port':1,'blackhole':true,"
		       "'ev_min':8,'ev_max':7}}"),
		   "args.ev_min: 8 is above args.ev_max 7");
}

TEST(ctl, fault_set__direction)
{
	ASSERT_OK(req("{'v':1,'cmd':'fault_set','args':{'port':1,'blackhole':true,'direction':'tx'}}"));
	ASSERT_EQ(MRCD_CTL_DIR_TX, r.fault_set.dir);
	ASSERT_OK(req("{'v':1,'cmd':'fault_set','args':{'port':1,'blackhole':true,'direction':'rx'}}"));
	ASSERT_EQ(MRCD_CTL_DIR_RX, r.fault_set.dir);
	ASSERT_BAD(req("{'v':1,'cmd':'fault_set','args':{'port':1,'blackhole':true,'direction':'TX'}}"),
		   "args.direction: \"TX\" is not one of tx, rx or both");
	ASSERT_BAD(req("{'v':1,'cmd':'fault_set','args':{'port':1,'blackhole':true,'direction':1}}"),
		   "args.direction: must be one of tx, rx or both");
}

TEST(ctl, fault_set__numbers)
{
	static const char fmt[] = "{'v':1,'cmd':'fault_set','args':{'port':1,'blackhole':true,%s}}";

	num_bounds(__LINE__, fmt, "drop_pct", 100);
	num_bounds(__LINE__, fmt, "reorder_pct", 100);
	num_bounds(__LINE__, fmt, "duplicate_pct", 100);
	num_bounds(__LINE__, fmt, "corrupt_pct", 100);
	num_bounds(__LINE__, fmt, "trim_pct", 100);
	num_bounds(__LINE__, fmt, "ecn_pct", 100);
	num_bounds(__LINE__, fmt, "delay_us", 1e6);
	num_bounds(__LINE__, fmt, "jitter_us", 1e6);
	ASSERT_BAD(req("{'v':1,'cmd':'fault_set','args':{'port':1,'drop_pct':1e400}}"),
		   "invalid JSON");
}

TEST(ctl, fault_set__blackhole_type)
{
	ASSERT_BAD(req("{'v':1,'cmd':'fault_set','args':{'port':1,'blackhole':1}}"),
		   "args.blackhole: must be true or false");
	ASSERT_BAD(req("{'v':1,'cmd':'fault_set','args':{'port':1,'blackhole':'true'}}"),
		   "args.blackhole: must be true or false");
}

TEST(ctl, fault_set__unknown_key_lists_keys)
{
	ASSERT_BAD(req("{'v':1,'cmd':'fault_set','args':{'port':1,'blackhole':true,'loss':1}}"),
		   "args.loss: unknown key (expected one of: port, ev_min");
}

/* ---- fault_clear ------------------------------------------------------------ */

TEST(ctl, fault_clear__forms)
{
	ASSERT_OK(req("{'v':1,'cmd':'fault_clear'}"));
	ASSERT_EQ(MRCD_CTL_FAULT_CLEAR, r.cmd);
	ASSERT_FALSE(r.fault_clear.has_rule);
	ASSERT_FALSE(r.fault_clear.has_port);
	ASSERT_OK(req("{'v':1,'cmd':'fault_clear','args':{}}"));
	ASSERT_FALSE(r.fault_clear.has_rule || r.fault_clear.has_port);
	ASSERT_OK(req("{'v':1,'cmd':'fault_clear','args':{'rule':12}}"));
	ASSERT_TRUE(r.fault_clear.has_rule);
	ASSERT_FALSE(r.fault_clear.has_port);
	ASSERT_EQ(12, r.fault_clear.rule);
	ASSERT_OK(req("{'v':1,'cmd':'fault_clear','args':{'port':'plane1'}}"));
	ASSERT_TRUE(r.fault_clear.has_port);
	ASSERT_FALSE(r.fault_clear.has_rule);
	ASSERT_STREQ("plane1", r.fault_clear.port.name);
}

TEST(ctl, fault_clear__bounds_and_exclusive)
{
	int_bounds(__LINE__, "{'v':1,'cmd':'fault_clear','args':{%s}}", "rule", 1, 0xffffffffLL,
		   true, true);
	int_bounds(__LINE__, "{'v':1,'cmd':'fault_clear','args':{%s}}", "port", 1, 32, true, true);
	ASSERT_BAD(req("{'v':1,'cmd':'fault_clear','args':{'rule':1,'port':1}}"),
		   "args: give rule or port, not both");
	ASSERT_BAD(req("{'v':1,'cmd':'fault_clear','args':{'port':'a b'}}"), "args.port");
}

/* ---- ev_deny -------------------------------------------------------------- */

TEST(ctl, ev_deny__parses)
{
	ASSERT_OK(req("{'v':1,'cmd':'ev_deny','args':{'qpn':3,'ev':4660}}"));
	ASSERT_EQ(MRCD_CTL_EV_DENY, r.cmd);
	ASSERT_EQ(3, r.ev_deny.qpn);
	ASSERT_EQ(4660, r.ev_deny.ev);
	ASSERT_TRUE(r.ev_deny.deny);
	ASSERT_OK(req("{'v':1,'cmd':'ev_deny','args':{'qpn':3,'ev':0,'deny':false}}"));
	ASSERT_FALSE(r.ev_deny.deny);
	ASSERT_OK(req("{'v':1,'cmd':'ev_deny','args':{'qpn':3,'ev':0,'deny':true}}"));
	ASSERT_TRUE(r.ev_deny.deny);
}

TEST(ctl, ev_deny__rejects)
{
	int_bounds(__LINE__, "{'v':1,'cmd':'ev_deny','args':{'ev':1,%s}}", "qpn", 1, 0xffffff,
		   true, true);
	int_bounds(__LINE__, "{'v':1,'cmd':'ev_deny','args':{'qpn':1,%s}}", "ev", 0,
		   0xffffffffLL, true, true);
	ASSERT_BAD(req("{'v':1,'cmd':'ev_deny','args':{'qpn':1}}"), "args.ev: missing required key");
	ASSERT_BAD(req("{'v':1,'cmd':'ev_deny','args':{'ev':1}}"), "args.qpn: missing required key");
	ASSERT_BAD(req("{'v':1,'cmd':'ev_deny','args':{'qpn':1,'ev':1,'deny':0}}"),
		   "args.deny: must be true or false");
}

/* ---- port_admin ----------------------------------------------------------- */

TEST(ctl, port_admin__parses)
{
	ASSERT_OK(req("{'v':1,'cmd':'port_admin','args':{'port':'plane1','up':false}}"));
	ASSERT_EQ(MRCD_CTL_PORT_ADMIN, r.cmd);
	ASSERT_STREQ("plane1", r.port_admin.port.name);
	ASSERT_FALSE(r.port_admin.up);
	ASSERT_OK(req("{'v':1,'cmd':'port_admin','args':{'port':32,'up':true}}"));
	ASSERT_EQ(32, r.port_admin.port.plane);
	ASSERT_TRUE(r.port_admin.up);
}

TEST(ctl, port_admin__rejects)
{
	int_bounds(__LINE__, "{'v':1,'cmd':'port_admin','args':{'up':true,%s}}", "port", 1, 32,
		   true, true);
	ASSERT_BAD(req("{'v':1,'cmd':'port_admin','args':{'port':1}}"), "args.up: missing required key");
	ASSERT_BAD(req("{'v':1,'cmd':'port_admin','args':{'up':true}}"),
		   "args.port: missing required key");
	ASSERT_BAD(req("{'v':1,'cmd':'port_admin','args':{'port':1,'up':'down'}}"),
		   "args.up: must be true or false, not a string");
}

/* ---- log_level -------------------------------------------------------------- */

TEST(ctl, log_level__every_level)
{
	const char *lv[] = {"emerg", "alert", "crit", "err", "warning", "notice", "info", "debug"};

	for (unsigned i = 0; i < sizeof(lv) / sizeof(lv[0]); i++) {
		ASSERT_OK(req("{'v':1,'cmd':'log_level','args':{'level':'%s'}}", lv[i]));
		ASSERT_EQ(MRCD_CTL_LOG_LEVEL, r.cmd);
		ASSERT_STREQ(lv[i], r.log_level.level);
		ASSERT_STREQ("", r.log_level.type);
	}
}

TEST(ctl, log_level__types)
{
	const char *good[] = {"", "mrcd", "mrcd.dp", "mrcd.ctl.rx_burst", "mrcd._"};
	const char *bad[] = {"mrcdx", "mrcd.", "mrcd..dp", "mrcd.Dp", "mrcd.d1", "rte.eal",
			     "mrcd.dp.", " mrcd", "mrcd-dp"};
	char longest[80];

	for (unsigned i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		ASSERT_OK(req("{'v':1,'cmd':'log_level','args':{'level':'info','type':'%s'}}",
			      good[i]));
		ASSERT_STREQ(good[i], r.log_level.type);
	}
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ASSERT_BAD(req("{'v':1,'cmd':'log_level','args':{'level':'info','type':'%s'}}",
			       bad[i]),
			   "args.type: must be");
	/* 63 characters fit in type[64]; 64 do not */
	memcpy(longest, "mrcd.", 5);
	memset(longest + 5, 'a', 58);
	longest[63] = '\0';
	ASSERT_OK(req("{'v':1,'cmd':'log_level','args':{'level':'info','type':'%s'}}", longest));
	ASSERT_STREQ(longest, r.log_level.type);
	longest[63] = 'a';
	longest[64] = '\0';
	ASSERT_BAD(req("{'v':1,'cmd':'log_level','args':{'level':'info','type':'%s'}}", longest),
		   "args.type");
	ASSERT_BAD(req("{'v':1,'cmd':'log_level','args':{'level':'info','type':5}}"), "args.type");
}

TEST(ctl, log_level__rejects)
{
	ASSERT_BAD(req("{'v':1,'cmd':'log_level','args':{}}"), "args.level: missing required key");
	ASSERT_BAD(req("{'v':1,'cmd':'log_level','args':{'level':'warn'}}"),
		   "args.level: \"warn\" is not one of emerg");
	ASSERT_BAD(req("{'v':1,'cmd':'log_level','args':{'level':'DEBUG'}}"), "args.level");
	ASSERT_BAD(req("{'v':1,'cmd':'log_level','args':{'level':7}}"),
		   "args.level: must be one of");
}

/* ---- ev_probe ------------------------------------------------------------- */

TEST(ctl, ev_probe__ipv4)
{
	ASSERT_OK(req("{'v':1,'cmd':'ev_probe','args':{'node':'10.0.1.2','port':'plane1','ev':9}}"));
	ASSERT_EQ(MRCD_CTL_EV_PROBE, r.cmd);
	ASSERT_EQ(4, r.ev_probe.node.family);
	ASSERT_MEMEQ("\x0a\x00\x01\x02", r.ev_probe.node.a, 4);
	ASSERT_STREQ("plane1", r.ev_probe.port.name);
	ASSERT_EQ(9, r.ev_probe.ev);
}

TEST(ctl, ev_probe__ipv6)
{
	ASSERT_OK(req("{'v':1,'cmd':'ev_probe','args':{'node':'fd00:1::2','port':2,'ev':4294967295}}"));
	ASSERT_EQ(6, r.ev_probe.node.family);
	ASSERT_MEMEQ("\xfd\x00\x00\x01\0\0\0\0\0\0\0\0\0\0\0\x02", r.ev_probe.node.a, 16);
	ASSERT_EQ(2, r.ev_probe.port.plane);
	ASSERT_U64_EQ(0xffffffff, r.ev_probe.ev);
}

TEST(ctl, ev_probe__rejects)
{
	const char *bad[] = {"10.0.0", "10.0.0.256", "fd00::1::2", "host", "", "10.0.0.1/24",
			     " 10.0.0.1", "1111:2222:3333:4444:5555:6666:7777:8888:9999"};

	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ASSERT_BAD(req("{'v':1,'cmd':'ev_probe','args':{'node':'%s','port':1,'ev':1}}",
			       bad[i]),
			   "args.node");
	ASSERT_BAD(req("{'v':1,'cmd':'ev_probe','args':{'node':167772161,'port':1,'ev':1}}"),
		   "args.node: must be an IPv4 or IPv6 address");
	ASSERT_BAD(req("{'v':1,'cmd':'ev_probe','args':{'port':1,'ev':1}}"),
		   "args.node: missing required key");
	ASSERT_BAD(req("{'v':1,'cmd':'ev_probe','args':{'node':'::1','ev':1}}"),
		   "args.port: missing required key");
	ASSERT_BAD(req("{'v':1,'cmd':'ev_probe','args':{'node':'::1','port':1}}"),
		   "args.ev: missing required key");
	int_bounds(__LINE__, "{'v':1,'cmd':'ev_probe','args':{'node':'::1','port':1,%s}}", "ev",
		   0, 0xffffffffLL, true, true);
}

/* ---- selftest_* ------------------------------------------------------------- */

TEST(ctl, selftest_listen__parses)
{
	ASSERT_OK(req("{'v':1,'cmd':'selftest_listen'}"));
	ASSERT_EQ(MRCD_CTL_SELFTEST_LISTEN, r.cmd);
	ASSERT_U64_EQ(64u << 20, r.st_listen.region_bytes);
	ASSERT_OK(req("{'v':1,'cmd':'selftest_listen','args':{'region_bytes':2097152}}"));
	ASSERT_U64_EQ(2u << 20, r.st_listen.region_bytes);
	int_bounds(__LINE__, "{'v':1,'cmd':'selftest_listen','args':{%s}}", "region_bytes",
		   1 << 20, 1 << 30, true, true);
	ASSERT_OK(req("{'v':1,'cmd':'selftest_listen'}"));
	ASSERT_EQ(-1, r.st_listen.worker); /* absent: the daemon picks (D63) */
	ASSERT_OK(req("{'v':1,'cmd':'selftest_listen','args':{'worker':3}}"));
	ASSERT_EQ(3, r.st_listen.worker);
	int_bounds(__LINE__, "{'v':1,'cmd':'selftest_listen','args':{%s}}", "worker",
		   0, MRCD_CTL_MAX_WORKERS - 1, true, true);
}

/* "detach": the selftest outlives the connection that opened it (only the
 * idle timeout ends it); absent, the connection's end stops it */
TEST(ctl, selftest_detach__parses)
{
	make_info();
	ASSERT_OK(req("{'v':1,'cmd':'selftest_listen'}"));
	ASSERT_FALSE(r.st_listen.detach);
	ASSERT_OK(req("{'v':1,'cmd':'selftest_listen','args':{'detach':true}}"));
	ASSERT_TRUE(r.st_listen.detach);
	ASSERT_BAD(req("{'v':1,'cmd':'selftest_listen','args':{'detach':1}}"),
		   "args.detach: must be true or false, not an integer");
	ASSERT_OK(req("{'v':1,'cmd':'selftest_start','args':{'peer_info':'%s','bytes':1000}}", hex416));
	ASSERT_FALSE(r.st_start.detach);
	ASSERT_OK(req("{'v':1,'cmd':'selftest_start','args':{'peer_info':'%s','bytes':1000,'detach':true}}",
		      hex416));
	ASSERT_TRUE(r.st_start.detach);
}

TEST(ctl, selftest_start__minimal_defaults)
{
	make_info();
	ASSERT_OK(req("{'v':1,'cmd':'selftest_start','args':{'peer_info':'%s','bytes':1000}}",
		      hex416));
	ASSERT_EQ(MRCD_CTL_SELFTEST_START, r.cmd);
	ASSERT_MEMEQ(info, r.st_start.peer_info, sizeof(info));
	ASSERT_U64_EQ(1000, r.st_start.bytes);
	ASSERT_EQ(65536, r.st_start.msg_size);
	ASSERT_EQ(16, r.st_start.window);
	ASSERT_EQ(MRCD_CTL_OP_WRITE_IMM, r.st_start.op);
	ASSERT_EQ(-1, r.st_start.worker);
	ASSERT_OK(req("{'v':1,'cmd':'selftest_start','args':{'peer_info':'%s','bytes':1000,'worker':1}}",
		      hex416));
	ASSERT_EQ(1, r.st_start.worker);
	ASSERT_BAD(req("{'v':1,'cmd':'selftest_start','args':{'peer_info':'%s','bytes':1000,'worker':4}}",
		       hex416), "args.worker");
}

TEST(ctl, selftest_start__full)
{
	const char *ops[] = {"write_imm", "write", "mixed", "ping_pong"};

	make_info();
	for (unsigned i = 0; i < 4; i++) {
		ASSERT_OK(req("{'v':1,'cmd':'selftest_start','id':1,'args':{'peer_info':'%s',"
			      "'bytes':268435456,'msg_size':4096,'window':64,'op':'%s'}}",
			      hex416, ops[i]));
		ASSERT_U64_EQ(268435456, r.st_start.bytes);
		ASSERT_EQ(4096, r.st_start.msg_size);
		ASSERT_EQ(64, r.st_start.window);
		ASSERT_EQ(i, r.st_start.op);
	}
}

TEST(ctl, selftest_start__bounds)
{
	char fmt[700];

	make_info();
	snprintf(fmt, sizeof(fmt),
		 "{'v':1,'cmd':'selftest_start','args':{'peer_info':'%s','bytes':1,%%s}}", hex416);
	int_bounds(__LINE__, fmt, "msg_size", 64, 16 << 20, true, true);
	int_bounds(__LINE__, fmt, "window", 1, 256, true, true);
	snprintf(fmt, sizeof(fmt),
		 "{'v':1,'cmd':'selftest_start','args':{'peer_info':'%s',%%s}}", hex416);
	int_bounds(__LINE__, fmt, "bytes", 1, 1LL << 40, true, true);
	ASSERT_BAD(req("{'v':1,'cmd':'selftest_start','args':{'peer_info':'%s','bytes':1,"
		       "'op':'read'}}", hex416),
		   "args.op: \"read\" is not one of write_imm, write, mixed or ping_pong");
	ASSERT_BAD(req("{'v':1,'cmd':'selftest_start','args':{'peer_info':'%s'}}", hex416),
		   "args.bytes: missing required key");
	ASSERT_BAD(req("{'v':1,'cmd':'selftest_start','args':{'bytes':1}}"),
		   "args.peer_info: missing required key");
}

TEST(ctl, selftest_start__peer_info_hex)
{
	make_info();
	/* 415 and 417 digits, a bad digit, upper case, not a string */
	ASSERT_BAD(req("{'v':1,'cmd':'selftest_start','args':{'peer_info':'%.415s','bytes':1}}",
		       hex416),
		   "args.peer_info: must be a string of exactly 416 hex digits");
	ASSERT_BAD(req("{'v':1,'cmd':'selftest_start','args':{'peer_info':'%s0','bytes':1}}",
		       hex416),
		   "args.peer_info: must be a string of exactly 416 hex digits");
	ASSERT_BAD(req("{'v':1,'cmd':'selftest_start','args':{'peer_info':'%.415sg','bytes':1}}",
		       hex416),
		   "args.peer_info");
	ASSERT_BAD(req("{'v':1,'cmd':'selftest_start','args':{'peer_info':'','bytes':1}}"),
		   "args.peer_info");
	ASSERT_BAD(req("{'v':1,'cmd':'selftest_start','args':{'peer_info':12,'bytes':1}}"),
		   "args.peer_info");
	for (char *p = hex416; *p; p++)
		if (*p >= 'a' && *p <= 'f')
			*p = (char)(*p - 'a' + 'A');
	ASSERT_OK(req("{'v':1,'cmd':'selftest_start','args':{'peer_info':'%s','bytes':1}}", hex416));
	ASSERT_MEMEQ(info, r.st_start.peer_info, sizeof(info));
}

TEST(ctl, selftest_accept__parses_and_rejects)
{
	char fmt[700];

	make_info();
	ASSERT_OK(req("{'v':1,'cmd':'selftest_accept','args':{'id':4294967295,'peer_info':'%s'}}",
		      hex416));
	ASSERT_EQ(MRCD_CTL_SELFTEST_ACCEPT, r.cmd);
	ASSERT_U64_EQ(0xffffffff, r.st_accept.id);
	ASSERT_MEMEQ(info, r.st_accept.peer_info, sizeof(info));
	snprintf(fmt, sizeof(fmt),
		 "{'v':1,'cmd':'selftest_accept','args':{'peer_info':'%s',%%s}}", hex416);
	int_bounds(__LINE__, fmt, "id", 1, 0xffffffffLL, true, true);
	ASSERT_BAD(req("{'v':1,'cmd':'selftest_accept','args':{'id':1}}"),
		   "args.peer_info: missing required key");
	ASSERT_BAD(req("{'v':1,'cmd':'selftest_accept','args':{'peer_info':'%s'}}", hex416),
		   "args.id: missing required key");
	ASSERT_BAD(req("{'v':1,'cmd':'selftest_accept','args':{'id':1,'peer_info':'%s','bytes':1}}",
		       hex416),
		   "args.bytes: unknown key");
}

TEST(ctl, selftest_id_commands)
{
	static const enum mrcd_ctl_cmd cmds[] = {MRCD_CTL_SELFTEST_RUN, MRCD_CTL_SELFTEST_STATUS,
						 MRCD_CTL_SELFTEST_STOP};
	char fmt[128];

	for (unsigned i = 0; i < 3; i++) {
		const char *n = mrcd_ctl_cmd_name(cmds[i]);

		ASSERT_OK(req("{'v':1,'cmd':'%s','args':{'id':7}}", n));
		ASSERT_EQ(cmds[i], r.cmd);
		ASSERT_EQ(7, r.st.id);
		snprintf(fmt, sizeof(fmt), "{'v':1,'cmd':'%s','args':{%%s}}", n);
		int_bounds(__LINE__, fmt, "id", 1, 0xffffffffLL, true, true);
		ASSERT_BAD(req("{'v':1,'cmd':'%s'}", n), "args.id: missing required key");
		ASSERT_BAD(req("{'v':1,'cmd':'%s','args':{'id':1,'qpn':1}}", n),
			   "args.qpn: unknown key (expected one of: id)");
	}
}
