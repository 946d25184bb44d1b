/* mrcd_config.c - loads the daemon's YAML configuration (libyaml document
 * API) into struct mrcd_config: every key is checked against a table, so an
 * unknown or duplicate key, a wrong type or an out-of-range value is an error
 * naming the file, line and key path. Cross-checks between sections run after
 * the parse. Knows nothing about DPDK: the daemon turns the result into EAL
 * arguments, ports and engines. Never prints.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "mrcd_config.h"
#include "mrcp_cc.h"

#define MAX_FILE_BYTES (1u << 20)

/* The embedded default: runs on a null virtual device, no NIC, no hugepages.
 * config/mrcd-default.yaml is the same text (the tests compare them). */
const char mrcd_config_default_yaml[] =
	"# mrcd embedded default: one net_null plane, no NIC, no hugepages.\n"
	"# Packets sent on net_null vanish; this config exists to start and stop\n"
	"# the daemon anywhere. See docs/configuration.md.\n"
	"eal:\n"
	"  args: [\"--no-huge\", \"--no-pci\", \"-m\", \"256\", \"--file-prefix\", \"mrcd\"]\n"
	"ports:\n"
	"  - name: p0\n"
	"    devargs: net_null0,no-rx=1\n"
	"    ipv4: 10.0.0.1/24\n"
	"lcores:\n"
	"  ids: [1]\n"
	"  idle: adaptive\n";

/* ---- defaults ------------------------------------------------------------- */

void mrcd_config_defaults(struct mrcd_config *c)
{
	memset(c, 0, sizeof(*c));
	c->lcores.ids[0] = 1;
	c->lcores.n_ids = 1;
	c->lcores.idle = MRCD_IDLE_ADAPTIVE;
	c->transport.udp_port = MRCP_UDP_PORT_DEFAULT; /* D1 */
	c->transport.accept_alt_port = false;
	c->transport.mtu = 4096;                       /* D3 */
	c->transport.ev_layout = MRCP_EV_LO16_SPORT;   /* D4 */
	c->transport.ev_active = 128;                  /* D41 */
	c->transport.ev_backup = 64;
	c->transport.ev_min_active = 0;                /* = active / 4 */
	c->transport.trimming_fabric = false;
	c->transport.sack_every = 4;                   /* D28 */
	c->transport.base_rtt_ns = 12000;              /* §6.4 */
	c->transport.timeout = 8;                      /* D32 */
	c->transport.linear_cnt = 7;
	c->transport.exp_cnt = 12;
	c->transport.mpr = 8;                          /* D25 */
	c->transport.max_wimm = 128;
	mrcp_dscp_map_defaults(&c->transport.dscp);    /* D23 */
	c->transport.lasthop_hop_limit = 0;
	snprintf(c->cc.algorithm, sizeof(c->cc.algorithm), "%s", mrcp_cc_nscc.name); /* D52 */
	c->cc.scope = MRCD_CC_SCOPE_PEER;              /* D53 */
	c->srv6.enabled = false;
	snprintf(c->control.socket, sizeof(c->control.socket), "%s", "/run/mrcd/mrcd.sock");
	c->control.mode = 0660;
	c->telemetry.enabled = true;
	c->limits.max_qps = 256;
	c->limits.max_mrs = 1024;
	c->limits.max_peers = 64;
	c->limits.per_client.max_qps = 64;
	c->limits.per_client.max_mem_mb = 1024;
	c->limits.per_client.max_wrs = 4096;
}

void mrcd_config_free(struct mrcd_config *c)
{
	if (c == NULL)
		return;
	for (unsigned i = 0; i < c->eal.n_args; i++)
		free(c->eal.args[i]);
	free(c->eal.args);
	free(c->neighbours);
	free(c->srv6.templates);
	free(c->faults);
	mrcd_config_defaults(c);
}

/* ---- parse context ------------------------------------------------------------- */

/* The line of every key seen, by key path, for cross-check messages. */
struct line_rec {
	char path[256];
	unsigned line;
};

struct ctx {
	const char *name;         /* file name for messages */
	yaml_document_t *doc;
	char *err;
	size_t errlen;
	int rc;                   /* first error; later ones are not reported */
	char path[256];           /* key path of the node being parsed */
	size_t plen;
	struct line_rec *lines;
	unsigned n_lines, cap_lines;
	unsigned root_line;
	struct mrcd_config *cfg;
};

static unsigned node_line(const yaml_node_t *n)
{
	return n ? (unsigned)n->start_mark.line + 1 : 1;
}

static void verr(struct ctx *c, unsigned line, const char *path, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));

static void verr(struct ctx *c, unsigned line, const char *path, const char *fmt, va_list ap)
{
	char reason[256];

	if (c->rc != 0)
		return;
	c->rc = -EINVAL;
	vsnprintf(reason, sizeof(reason), fmt, ap);
	if (c->err != NULL && c->errlen > 0)
		snprintf(c->err, c->errlen, "%s:%u: %s: %s", c->name, line,
			 path[0] ? path : "(top)", reason);
}

/* An error at node @n about the current key path. @return -EINVAL. */
static int fail(struct ctx *c, const yaml_node_t *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static unsigned line_of(const struct ctx *c, const char *path);

static int fail(struct ctx *c, const yaml_node_t *n, const char *fmt, ...)
{
	va_list ap;

	unsigned line = node_line(n);

	/* a block mapping or list starts on the line after its key: name
	 * the key's line */
	if (n != NULL && n->type != YAML_SCALAR_NODE && line_of(c, c->path) != 0)
		line = line_of(c, c->path);
	va_start(ap, fmt);
	verr(c, line, c->path, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* An error about @path at the line where it was configured (or, if it was
 * not, where @fallback was, or line 1). @return -EINVAL. */
static int fail_at(struct ctx *c, const char *path, const char *fallback, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static unsigned line_of(const struct ctx *c, const char *path)
{
	for (unsigned i = 0; i < c->n_lines; i++)
		if (strcmp(c->lines[i].path, path) == 0)
			return c->lines[i].line;
	return 0;
}

static int fail_at(struct ctx *c, const char *path, const char *fallback, const char *fmt, ...)
{
	unsigned line = line_of(c, path);
	va_list ap;

	if (line == 0 && fallback != NULL)
		line = line_of(c, fallback);
	if (line == 0)
		line = c->root_line;
	va_start(ap, fmt);
	verr(c, line, path, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static void record_line(struct ctx *c, unsigned line)
{
	if (c->n_lines == c->cap_lines) {
		unsigned cap = c->cap_lines ? 2 * c->cap_lines : 64;
		struct line_rec *l = realloc(c->lines, cap * sizeof(*l));

		if (l == NULL)
			return; /* only costs a less precise line in a message */
		c->lines = l;
		c->cap_lines = cap;
	}
	snprintf(c->lines[c->n_lines].path, sizeof(c->lines[0].path), "%s", c->path);
	c->lines[c->n_lines++].line = line;
}

static size_t push_key(struct ctx *c, const char *key)
{
	size_t old = c->plen;
	int n = snprintf(c->path + old, sizeof(c->path) - old, "%s%s", old ? "." : "", key);

	c->plen = (n < 0 || (size_t)n >= sizeof(c->path) - old) ? sizeof(c->path) - 1 : old + (size_t)n;
	return old;
}

static size_t push_idx(struct ctx *c, unsigned i)
{
	size_t old = c->plen;
	int n = snprintf(c->path + old, sizeof(c->path) - old, "[%u]", i);

	c->plen = (n < 0 || (size_t)n >= sizeof(c->path) - old) ? sizeof(c->path) - 1 : old + (size_t)n;
	return old;
}

static void pop(struct ctx *c, size_t old)
{
	c->plen = old;
	c->path[old] = '\0';
}

/* ---- scalars ----------------------------------------------------------------- */

static const char *scalar(struct ctx *c, const yaml_node_t *n, const char *what)
{
	if (n->type != YAML_SCALAR_NODE) {
		fail(c, n, "must be %s, not a %s", what,
		     n->type == YAML_MAPPING_NODE ? "mapping" : "list");
		return NULL;
	}
	return (const char *)n->data.scalar.value;
}

static int get_uint(struct ctx *c, const yaml_node_t *n, uint64_t lo, uint64_t hi, uint64_t *out)
{
	const char *s = scalar(c, n, "an integer");
	char *end;
	unsigned long long v;

	if (s == NULL)
		return -EINVAL;
	errno = 0;
	if (s[0] == '\0' || s[0] == '-' || s[0] == '+' || isspace((unsigned char)s[0]))
		goto bad;
	v = strtoull(s, &end, (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) ? 16 : 10);
	if (*end != '\0')
		goto bad;
	if (errno == ERANGE || v < lo || v > hi)
		return fail(c, n, "%s is out of range %llu..%llu", s,
			    (unsigned long long)lo, (unsigned long long)hi);
	*out = v;
	return 0;
bad:
	return fail(c, n, "must be an integer, not \"%s\"", s);
}

static int get_double(struct ctx *c, const yaml_node_t *n, double lo, double hi, double *out)
{
	const char *s = scalar(c, n, "a number");
	char *end;
	double v;

	if (s == NULL)
		return -EINVAL;
	if (s[0] == '\0' || isspace((unsigned char)s[0]))
		goto bad;
	v = strtod(s, &end);
	if (*end != '\0' || !isfinite(v))
		goto bad;
	if (v < lo || v > hi)
		return fail(c, n, "%s is out of range %g..%g", s, lo, hi);
	*out = v;
	return 0;
bad:
	return fail(c, n, "must be a number, not \"%s\"", s);
}

static int get_bool(struct ctx *c, const yaml_node_t *n, bool *out)
{
	static const char *const yes[] = {"true", "yes", "on"};
	static const char *const no[] = {"false", "no", "off"};
	const char *s = scalar(c, n, "true or false");

	if (s == NULL)
		return -EINVAL;
	for (unsigned i = 0; i < 3; i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*out = false;
			return 0;
		}
	}
	return fail(c, n, "must be true or false, not \"%s\"", s);
}

static int get_str(struct ctx *c, const yaml_node_t *n, char *buf, size_t cap, bool empty_ok)
{
	const char *s = scalar(c, n, "a string");

	if (s == NULL)
		return -EINVAL;
	if (!empty_ok && s[0] == '\0')
		return fail(c, n, "must not be empty");
	if (strlen(s) >= cap)
		return fail(c, n, "must be at most %zu characters long", cap - 1);
	memcpy(buf, s, strlen(s) + 1);
	return 0;
}

/* "a, b or c" from the NULL-terminated @names. */
static void names_join(const char *const *names, char *list, size_t cap)
{
	size_t used = 0;

	list[0] = '\0';
	for (int i = 0; names[i] != NULL; i++) {
		int w = snprintf(list + used, cap - used, "%s%s",
				 i == 0 ? "" : (names[i + 1] == NULL ? " or " : ", "), names[i]);
		if (w > 0 && (size_t)w < cap - used)
			used += (size_t)w;
	}
}

static int get_enum(struct ctx *c, const yaml_node_t *n, const char *const *names, int *out)
{
	const char *s = scalar(c, n, "a name");
	char list[160];

	if (s == NULL)
		return -EINVAL;
	for (int i = 0; names[i] != NULL; i++) {
		if (strcmp(s, names[i]) == 0) {
			*out = i;
			return 0;
		}
	}
	names_join(names, list, sizeof(list));
	return fail(c, n, "\"%s\" is not one of %s", s, list);
}

static int parse_mac(const char *s, uint8_t mac[6])
{
	if (strlen(s) != 17)
		return -EINVAL;
	for (int i = 0; i < 17; i++)
		if (i % 3 == 2 ? s[i] != ':' : !isxdigit((unsigned char)s[i]))
			return -EINVAL;
	for (int i = 0; i < 6; i++)
		mac[i] = (uint8_t)strtoul(s + 3 * i, NULL, 16);
	return 0;
}

static int get_mac(struct ctx *c, const yaml_node_t *n, uint8_t mac[6])
{
	const char *s = scalar(c, n, "a MAC address");
	static const uint8_t zero[6];

	if (s == NULL)
		return -EINVAL;
	if (parse_mac(s, mac) != 0)
		return fail(c, n, "\"%s\" is not a MAC address (expected xx:xx:xx:xx:xx:xx)", s);
	if (mac[0] & 1)
		return fail(c, n, "%s is a multicast MAC address", s);
	if (memcmp(mac, zero, 6) == 0)
		return fail(c, n, "%s is the zero MAC address", s);
	return 0;
}

/* An address of @family (4, 6, or 0 for either); with @want_prefix, a
 * mandatory "/len". Rejects unspecified and multicast addresses. */
static int get_addr(struct ctx *c, const yaml_node_t *n, int family, bool want_prefix,
		    struct mrcd_prefix *out)
{
	const char *s = scalar(c, n, "an address");
	char buf[INET6_ADDRSTRLEN + 8];
	const char *what = family == 4 ? "an IPv4" : family == 6 ? "an IPv6" : "an IP";
	char *slash;
	unsigned maxlen;
	static const uint8_t zero[16];

	if (s == NULL)
		return -EINVAL;
	if (strlen(s) >= sizeof(buf))
		return fail(c, n, "\"%s\" is not %s address", s, what);
	memcpy(buf, s, strlen(s) + 1);
	slash = strchr(buf, '/');
	if (slash != NULL)
		*slash++ = '\0';
	memset(out, 0, sizeof(*out));
	if (family != 6 && inet_pton(AF_INET, buf, out->ip.a) == 1) {
		out->ip.family = 4;
		maxlen = 32;
	} else if (family != 4 && inet_pton(AF_INET6, buf, out->ip.a) == 1) {
		out->ip.family = 6;
		maxlen = 128;
	} else {
		return fail(c, n, "\"%s\" is not %s address%s", s, what, want_prefix ? " with a /prefix" : "");
	}
	if (want_prefix) {
		char *end;
		unsigned long len;

		if (slash == NULL || !isdigit((unsigned char)slash[0]))
			return fail(c, n, "\"%s\" needs a prefix length (for example /24 or /64)", s);
		len = strtoul(slash, &end, 10);
		if (*end != '\0' || len > maxlen)
			return fail(c, n, "\"%s\": prefix length must be 0..%u", s, maxlen);
		out->len = (uint8_t)len;
	} else if (slash != NULL) {
		return fail(c, n, "\"%s\": a prefix length is not allowed here", s);
	} else {
		out->len = (uint8_t)maxlen;
	}
	if (memcmp(out->ip.a, zero, out->ip.family == 4 ? 4 : 16) == 0)
		return fail(c, n, "\"%s\" is the unspecified address", s);
	if ((out->ip.family == 4 && (out->ip.a[0] & 0xf0) == 0xe0) ||
	    (out->ip.family == 6 && out->ip.a[0] == 0xff))
		return fail(c, n, "\"%s\" is a multicast address", s);
	return 0;
}

/* An empty plain value ("key:" with nothing after it). */
static bool is_null(const yaml_node_t *n)
{
	return n->type == YAML_SCALAR_NODE && n->data.scalar.length == 0 &&
	       n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

/* ---- key tables ------------------------------------------------------------------ */

enum ftype {
	F_UINT,   /* integer lo..hi into a 1, 2, 4 or 8 byte unsigned field */
	F_BOOL,
	F_DBL,    /* number lo..hi into a double, times scale */
	F_DBL_NS, /* number of us lo..hi into a uint64_t of ns (scale 1000) */
	F_STR,    /* string into a char[size] */
	F_ENUM,   /* name from names[] into an int-sized enum */
	F_FN,     /* custom handler */
};

struct field {
	const char *key;
	enum ftype type;
	size_t off;
	size_t size;              /* F_UINT width / F_STR capacity */
	uint64_t lo, hi;          /* F_UINT */
	double dlo, dhi;          /* F_DBL, F_DBL_NS */
	uint64_t scale;           /* F_UINT: multiply (KiB -> bytes); 0 = 1 */
	const char *const *names; /* F_ENUM, NULL-terminated */
	int (*fn)(struct ctx *c, const yaml_node_t *v, void *base);
	bool required;
};

#define FLD_UINT(k, st, m, l, h) \
	{.key = k, .type = F_UINT, .off = offsetof(st, m), .size = sizeof(((st *)0)->m), .lo = l, .hi = h}
#define FLD_UINT_SCALED(k, st, m, l, h, sc) \
	{.key = k, .type = F_UINT, .off = offsetof(st, m), .size = sizeof(((st *)0)->m), .lo = l, .hi = h, .scale = sc}
#define FLD_BOOL(k, st, m) {.key = k, .type = F_BOOL, .off = offsetof(st, m)}
#define FLD_DBL(k, st, m, l, h) {.key = k, .type = F_DBL, .off = offsetof(st, m), .dlo = l, .dhi = h}
#define FLD_US(k, st, m, l, h) {.key = k, .type = F_DBL_NS, .off = offsetof(st, m), .dlo = l, .dhi = h}
#define FLD_STR(k, st, m) {.key = k, .type = F_STR, .off = offsetof(st, m), .size = sizeof(((st *)0)->m)}
#define FLD_ENUM(k, st, m, nm) {.key = k, .type = F_ENUM, .off = offsetof(st, m), .names = nm}
#define FLD_FN(k, f) {.key = k, .type = F_FN, .fn = f}
#define FLD_FN_REQ(k, f) {.key = k, .type = F_FN, .fn = f, .required = true}

static void store_uint(void *p, size_t size, uint64_t v)
{
	switch (size) {
	case 1: { uint8_t x = (uint8_t)v; memcpy(p, &x, 1); break; }
	case 2: { uint16_t x = (uint16_t)v; memcpy(p, &x, 2); break; }
	case 4: { uint32_t x = (uint32_t)v; memcpy(p, &x, 4); break; }
	default: memcpy(p, &v, 8); break;
	}
}

static int parse_field(struct ctx *c, const struct field *f, const yaml_node_t *v, void *base)
{
	char *p = (char *)base + f->off;
	uint64_t u;
	double d;
	bool b = false;
	int e = 0, rc;

	switch (f->type) {
	case F_UINT:
		rc = get_uint(c, v, f->lo, f->hi, &u);
		if (rc == 0)
			store_uint(p, f->size, u * (f->scale ? f->scale : 1));
		return rc;
	case F_BOOL:
		rc = get_bool(c, v, &b);
		if (rc == 0)
			memcpy(p, &b, sizeof(b));
		return rc;
	case F_DBL:
		rc = get_double(c, v, f->dlo, f->dhi, &d);
		if (rc == 0)
			memcpy(p, &d, sizeof(d));
		return rc;
	case F_DBL_NS:
		rc = get_double(c, v, f->dlo, f->dhi, &d);
		if (rc == 0) {
			u = (uint64_t)(d * 1000.0 + 0.5); /* d >= 0: every range starts at 0 or above */
			memcpy(p, &u, sizeof(u));
		}
		return rc;
	case F_STR:
		return get_str(c, v, p, f->size, false);
	case F_ENUM:
		rc = get_enum(c, v, f->names, &e);
		if (rc == 0)
			memcpy(p, &e, sizeof(e));
		return rc;
	case F_FN:
		return f->fn(c, v, base);
	}
	return -EINVAL;
}

/* Parse mapping @m against @f[0..nf): unknown, duplicate and missing keys
 * are errors. The path of each value is the current path plus its key. */
static int parse_map(struct ctx *c, const yaml_node_t *m, const struct field *f, unsigned nf, void *base)
{
	uint64_t seen = 0;

	if (is_null(m))
		m = NULL; /* "section:" with every key commented out */
	else if (m->type != YAML_MAPPING_NODE)
		return fail(c, m, "must be a mapping of keys, not a %s",
			    m->type == YAML_SCALAR_NODE ? "scalar" : "list");
	for (yaml_node_pair_t *pr = m ? m->data.mapping.pairs.start : NULL;
	     m != NULL && pr < m->data.mapping.pairs.top; pr++) {
		const yaml_node_t *k = yaml_document_get_node(c->doc, pr->key);
		const yaml_node_t *v = yaml_document_get_node(c->doc, pr->value);
		const char *key;
		unsigned i;
		size_t old;
		int rc;

		if (k->type != YAML_SCALAR_NODE)
			return fail(c, k, "keys must be plain names");
		key = (const char *)k->data.scalar.value;
		for (i = 0; i < nf; i++)
			if (strcmp(f[i].key, key) == 0)
				break;
		old = push_key(c, key);
		if (i == nf) {
			char list[512] = "";
			size_t used = 0;

			for (unsigned j = 0; j < nf; j++) {
				int w = snprintf(list + used, sizeof(list) - used, "%s%s", j ? ", " : "", f[j].key);
				if (w > 0 && (size_t)w < sizeof(list) - used)
					used += (size_t)w;
			}
			rc = fail(c, k, "unknown key (expected one of: %s)", list);
			pop(c, old);
			return rc;
		}
		if (seen & (1ull << i)) {
			rc = fail(c, k, "duplicate key (first given on line %u)", line_of(c, c->path));
			pop(c, old);
			return rc;
		}
		seen |= 1ull << i;
		record_line(c, node_line(k));
		rc = parse_field(c, &f[i], v, base);
		pop(c, old);
		if (rc != 0)
			return rc;
	}
	for (unsigned i = 0; i < nf; i++) {
		if (f[i].required && !(seen & (1ull << i))) {
			/* reported on the line of the mapping's own key */
			char parent[sizeof(c->path)];
			size_t old;
			int rc;

			memcpy(parent, c->path, c->plen + 1);
			old = push_key(c, f[i].key);
			if (parent[0] != '\0' && line_of(c, parent) != 0)
				rc = fail_at(c, c->path, parent, "missing required key");
			else
				rc = fail(c, m, "missing required key");

			pop(c, old);
			return rc;
		}
	}
	return 0;
}

#define PARSE_MAP(c, m, tbl, base) parse_map(c, m, tbl, (unsigned)(sizeof(tbl) / sizeof(tbl[0])), base)

/* Check that @n is a list (or empty); @return its item count or -EINVAL. */
static int list_len(struct ctx *c, const yaml_node_t *n)
{
	if (is_null(n))
		return 0;
	if (n->type != YAML_SEQUENCE_NODE)
		return fail(c, n, "must be a list, not a %s", n->type == YAML_SCALAR_NODE ? "scalar" : "mapping");
	return (int)(n->data.sequence.items.top - n->data.sequence.items.start);
}

static const yaml_node_t *list_item(struct ctx *c, const yaml_node_t *n, int i)
{
	return yaml_document_get_node(c->doc, n->data.sequence.items.start[i]);
}

/* ---- sections ------------------------------------------------------------------- */

static int eal_args(struct ctx *c, const yaml_node_t *v, void *base)
{
	struct mrcd_config *cfg = base;
	int n = list_len(c, v);

	if (n < 0)
		return n;
	if (n == 0)
		return 0;
	cfg->eal.args = calloc((size_t)n, sizeof(char *));
	if (cfg->eal.args == NULL)
		return c->rc = -ENOMEM;
	for (int i = 0; i < n; i++) {
		const yaml_node_t *it = list_item(c, v, i);
		size_t old = push_idx(c, (unsigned)i);
		const char *s = scalar(c, it, "a string");

		pop(c, old);
		if (s == NULL)
			return -EINVAL;
		cfg->eal.args[i] = strdup(s);
		if (cfg->eal.args[i] == NULL)
			return c->rc = -ENOMEM;
		cfg->eal.n_args++;
	}
	return 0;
}

static int sec_eal(struct ctx *c, const yaml_node_t *v, void *base)
{
	static const struct field f[] = {FLD_FN("args", eal_args)};

	return PARSE_MAP(c, v, f, base);
}

/* ports[i] */

static int port_name(struct ctx *c, const yaml_node_t *v, void *base)
{
	struct mrcd_port_config *p = base;

	if (get_str(c, v, p->name, sizeof(p->name), false) != 0)
		return -EINVAL;
	for (const char *s = p->name; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-')
			return fail(c, v, "\"%s\": use only letters, digits, '_' and '-'", p->name);
	return 0;
}

static int port_mac(struct ctx *c, const yaml_node_t *v, void *base)
{
	struct mrcd_port_config *p = base;

	p->has_mac = true;
	return get_mac(c, v, p->mac);
}

static int port_ipv4(struct ctx *c, const yaml_node_t *v, void *base)
{
	return get_addr(c, v, 4, true, &((struct mrcd_port_config *)base)->ipv4);
}

static int port_ipv6(struct ctx *c, const yaml_node_t *v, void *base)
{
	return get_addr(c, v, 6, true, &((struct mrcd_port_config *)base)->ipv6);
}

static int port_devargs(struct ctx *c, const yaml_node_t *v, void *base)
{
	struct mrcd_port_config *p = base;

	if (get_str(c, v, p->devargs, sizeof(p->devargs), false) != 0)
		return -EINVAL;
	for (const char *s = p->devargs; *s; s++)
		if (isspace((unsigned char)*s))
			return fail(c, v, "\"%s\": device arguments may not contain spaces", p->devargs);
	if (p->devargs[0] == ',')
		return fail(c, v, "\"%s\": must start with a device name", p->devargs);
	return 0;
}

static int sec_ports(struct ctx *c, const yaml_node_t *v, void *base)
{
	static const struct field f[] = {
		FLD_FN_REQ("name", port_name),
		FLD_FN_REQ("devargs", port_devargs),
		FLD_FN("mac", port_mac),
		FLD_FN("ipv4", port_ipv4),
		FLD_FN("ipv6", port_ipv6),
		FLD_UINT("mtu", struct mrcd_port_config, mtu, 576, 16128),
		FLD_UINT("speed_gbps", struct mrcd_port_config, speed_gbps, 1, 1600),
		FLD_BOOL("udp_checksum", struct mrcd_port_config, udp_checksum),
	};
	struct mrcd_config *cfg = base;
	int n = list_len(c, v);

	if (n < 0)
		return n;
	if (n == 0)
		return fail(c, v, "must list at least one port");
	if (n > MRCD_MAX_PORTS)
		return fail(c, v, "%d ports given, at most %d are supported", n, MRCD_MAX_PORTS);
	for (int i = 0; i < n; i++) {
		struct mrcd_port_config *p = &cfg->ports[i];
		const yaml_node_t *it = list_item(c, v, i);
		size_t old = push_idx(c, (unsigned)i);
		int rc;

		record_line(c, node_line(it));
		p->speed_gbps = 100;
		rc = PARSE_MAP(c, it, f, p);
		pop(c, old);
		if (rc != 0)
			return rc;
		cfg->n_ports++;
	}
	return 0;
}

/* neighbours[i]: the port is resolved by name after all sections are read */

struct neigh_tmp {
	struct mrcd_prefix ip;
	uint8_t mac[6];
	char port[MRCD_NAME_MAX];
};

static int neigh_ip(struct ctx *c, const yaml_node_t *v, void *base)
{
	return get_addr(c, v, 0, false, &((struct neigh_tmp *)base)->ip);
}

static int neigh_mac(struct ctx *c, const yaml_node_t *v, void *base)
{
	return get_mac(c, v, ((struct neigh_tmp *)base)->mac);
}

static int find_port(const struct mrcd_config *cfg, const char *name)
{
	for (unsigned i = 0; i < cfg->n_ports; i++)
		if (strcmp(cfg->ports[i].name, name) == 0)
			return (int)i;
	return -1;
}

static int sec_neighbours(struct ctx *c, const yaml_node_t *v, void *base)
{
	static const struct field f[] = {
		FLD_FN_REQ("ip", neigh_ip),
		FLD_FN_REQ("mac", neigh_mac),
		FLD_STR("port", struct neigh_tmp, port),
	};
	struct mrcd_config *cfg = base;
	int n = list_len(c, v);

	if (n <= 0)
		return n;
	cfg->neighbours = calloc((size_t)n, sizeof(*cfg->neighbours));
	if (cfg->neighbours == NULL)
		return c->rc = -ENOMEM;
	for (int i = 0; i < n; i++) {
		struct neigh_tmp t;
		const yaml_node_t *it = list_item(c, v, i);
		size_t old = push_idx(c, (unsigned)i);
		int rc;

		memset(&t, 0, sizeof(t));
		record_line(c, node_line(it));
		rc = PARSE_MAP(c, it, f, &t);
		if (rc == 0) {
			for (unsigned j = 0; j < cfg->n_neighbours; j++) {
				const struct mrcp_ip *o = &cfg->neighbours[j].ip;

				if (o->family == t.ip.ip.family && memcmp(o->a, t.ip.ip.a, 16) == 0) {
					rc = fail(c, it, "duplicate neighbour address (also neighbours[%u])", j);
					break;
				}
			}
		}
		pop(c, old);
		if (rc != 0)
			return rc;
		cfg->neighbours[i].ip = t.ip.ip;
		memcpy(cfg->neighbours[i].mac, t.mac, 6);
		cfg->neighbours[i].port = -1;
		if (t.port[0] != '\0') {
			size_t o2;

			cfg->neighbours[i].port = find_port(cfg, t.port);
			if (cfg->neighbours[i].port < 0) {
				o2 = push_idx(c, (unsigned)i);
				push_key(c, "port");
				rc = fail_at(c, c->path, NULL, "no port is named \"%s\"", t.port);
				pop(c, o2);
				return rc;
			}
		}
		cfg->n_neighbours++;
	}
	return 0;
}

/* lcores */

static int lcore_ids(struct ctx *c, const yaml_node_t *v, void *base)
{
	struct mrcd_config *cfg = base;
	int n = list_len(c, v);

	if (n < 0)
		return n;
	if (n == 0)
		return fail(c, v, "must list at least one lcore");
	if (n > MRCD_MAX_LCORES)
		return fail(c, v, "at most %d lcores", MRCD_MAX_LCORES);
	cfg->lcores.n_ids = 0; /* replaces the default */
	for (int i = 0; i < n; i++) {
		const yaml_node_t *it = list_item(c, v, i);
		size_t old = push_idx(c, (unsigned)i);
		uint64_t id;
		int rc = get_uint(c, it, 0, MRCD_LCORE_ID_MAX, &id);

		for (unsigned j = 0; rc == 0 && j < cfg->lcores.n_ids; j++)
			if (cfg->lcores.ids[j] == id)
				rc = fail(c, it, "lcore %u is listed twice", (unsigned)id);
		pop(c, old);
		if (rc != 0)
			return rc;
		cfg->lcores.ids[cfg->lcores.n_ids++] = (uint16_t)id;
	}
	return 0;
}

static const char *const idle_names[] = {"adaptive", "busy", NULL};

static int sec_lcores(struct ctx *c, const yaml_node_t *v, void *base)
{
	static const struct field f[] = {
		FLD_FN_REQ("ids", lcore_ids),
		FLD_ENUM("idle", struct mrcd_config, lcores.idle, idle_names),
	};

	return PARSE_MAP(c, v, f, base);
}

/* transport */

static int transport_mtu(struct ctx *c, const yaml_node_t *v, void *base)
{
	struct mrcd_config *cfg = base;
	const char *s = scalar(c, v, "1024, 2048 or 4096");

	if (s == NULL)
		return -EINVAL;
	if (strcmp(s, "1024") == 0)
		cfg->transport.mtu = 1024;
	else if (strcmp(s, "2048") == 0)
		cfg->transport.mtu = 2048;
	else if (strcmp(s, "4096") == 0)
		cfg->transport.mtu = 4096;
	else
		return fail(c, v, "must be 1024, 2048 or 4096 (D3), not \"%s\"", s);
	return 0;
}

static const char *const layout_names[] = {"lo16_sport", "hi16_sport", NULL};

static int transport_dscp(struct ctx *c, const yaml_node_t *v, void *base)
{
	static const char *const cls[] = {
#define X(n, val, d) #n,
		MRCP_DSCP_CLASSES(X)
#undef X
	};
	/* the key of each class is its lower-case name */
	char keys[MRCP_DSCP_CLASS_COUNT][24];
	struct field f[MRCP_DSCP_CLASS_COUNT];
	struct mrcd_config *cfg = base;

	for (unsigned i = 0; i < MRCP_DSCP_CLASS_COUNT; i++) {
		size_t j;

		for (j = 0; cls[i][j] != '\0' && j + 1 < sizeof(keys[i]); j++)
			keys[i][j] = (char)tolower((unsigned char)cls[i][j]);
		keys[i][j] = '\0';
		memset(&f[i], 0, sizeof(f[i]));
		f[i].key = keys[i];
		f[i].type = F_UINT;
		f[i].off = i;
		f[i].size = 1;
		f[i].lo = 0;
		f[i].hi = 63;
	}
	return parse_map(c, v, f, MRCP_DSCP_CLASS_COUNT, cfg->transport.dscp.dscp);
}

static int sec_transport(struct ctx *c, const yaml_node_t *v, void *base)
{
	static const struct field f[] = {
		FLD_UINT("udp_port", struct mrcd_config, transport.udp_port, 1, 65535),
		FLD_BOOL("accept_alt_port", struct mrcd_config, transport.accept_alt_port),
		FLD_FN("mtu", transport_mtu),
		FLD_ENUM("ev_layout", struct mrcd_config, transport.ev_layout, layout_names),
		FLD_UINT("ev_active", struct mrcd_config, transport.ev_active, 1, MRCP_EV_MAX),
		FLD_UINT("ev_backup", struct mrcd_config, transport.ev_backup, 0, MRCP_EV_MAX),
		FLD_UINT("ev_min_active", struct mrcd_config, transport.ev_min_active, 0, MRCP_EV_MAX),
		FLD_BOOL("trimming_fabric", struct mrcd_config, transport.trimming_fabric),
		FLD_UINT("sack_every", struct mrcd_config, transport.sack_every, 1, 255),
		FLD_US("base_rtt_us", struct mrcd_config, transport.base_rtt_ns, 0.128, 100000.0),
		FLD_UINT("timeout", struct mrcd_config, transport.timeout, 0, 24),
		FLD_UINT("linear_cnt", struct mrcd_config, transport.linear_cnt, 0, 7),
		FLD_UINT("exp_cnt", struct mrcd_config, transport.exp_cnt, 0, 25),
		FLD_UINT("mpr", struct mrcd_config, transport.mpr, 1, 255),
		FLD_UINT("max_wimm", struct mrcd_config, transport.max_wimm, 1, 65535),
		FLD_FN("dscp", transport_dscp),
		FLD_UINT("lasthop_hop_limit", struct mrcd_config, transport.lasthop_hop_limit, 0, 255),
	};

	return PARSE_MAP(c, v, f, base);
}

/* cc */

static const char *const scope_names[] = {"peer", "qp", NULL};

/* The algorithm is validated against lib/core's CC registry (mrcp_cc_find),
 * so a new algorithm needs no change here. */
static int cc_algorithm(struct ctx *c, const yaml_node_t *v, void *base)
{
	struct mrcd_config *cfg = base;
	struct mrcp_cc_registry reg = {0};
	const char *names[MRCP_CC_MAX_ALGOS + 1];
	const struct mrcp_cc_ops *ops;
	const char *s = scalar(c, v, "a name");
	char list[160];

	if (s == NULL)
		return -EINVAL;
	if (mrcp_cc_register_builtin(&reg) < 0)
		return fail(c, v, "the CC registry cannot be built");
	ops = mrcp_cc_find(&reg, s);
	if (ops == NULL) {
		for (unsigned i = 0; i <= reg.n; i++)
			names[i] = i < reg.n ? reg.ops[i]->name : NULL;
		names_join(names, list, sizeof(list));
		return fail(c, v, "\"%s\" is not one of %s", s, list);
	}
	snprintf(cfg->cc.algorithm, sizeof(cfg->cc.algorithm), "%s", ops->name);
	return 0;
}

static int cc_nscc(struct ctx *c, const yaml_node_t *v, void *base)
{
	static const struct field f[] = {
		FLD_US("target_qdelay_us", struct mrcp_cc_params, target_qdelay_ns, 0.001, 100000.0),
		FLD_UINT_SCALED("max_cwnd_kb", struct mrcp_cc_params, max_cwnd, 1, 1u << 30, 1024),
		FLD_UINT_SCALED("min_cwnd_kb", struct mrcp_cc_params, min_cwnd, 1, 1u << 30, 1024),
		FLD_DBL("fi", struct mrcp_cc_params, fi, 0.0, 1e9),
		FLD_DBL("eta", struct mrcp_cc_params, eta, 0.0, 1e9),
		FLD_DBL("fi_scale", struct mrcp_cc_params, fi_scale, 0.0, 1e3),
		FLD_DBL("gamma", struct mrcp_cc_params, gamma, 0.001, 1.0),
		FLD_DBL("max_md_jump", struct mrcp_cc_params, max_md_jump, 0.001, 1.0),
		FLD_US("adjust_period_us", struct mrcp_cc_params, adjust_period_ns, 0.001, 1000000.0),
		FLD_UINT("adjust_bytes", struct mrcp_cc_params, adjust_bytes, 1, UINT32_MAX),
		FLD_UINT("qa_gate", struct mrcp_cc_params, qa_gate, 0, 63),
		FLD_US("qa_threshold_us", struct mrcp_cc_params, qa_threshold_ns, 0.001, 1000000.0),
		FLD_BOOL("disable_qa", struct mrcp_cc_params, disable_qa),
		FLD_BOOL("disable_pen", struct mrcp_cc_params, disable_pen),
	};
	struct mrcd_config *cfg = base;

	return PARSE_MAP(c, v, f, &cfg->cc.params);
}

static int sec_cc(struct ctx *c, const yaml_node_t *v, void *base)
{
	static const struct field f[] = {
		FLD_FN("algorithm", cc_algorithm),
		FLD_ENUM("scope", struct mrcd_config, cc.scope, scope_names),
		FLD_FN("nscc", cc_nscc),
		FLD_UINT_SCALED("fixed_cwnd_kb", struct mrcd_config, cc.params.fixed_cwnd, 1, 1u << 30, 1024),
	};

	return PARSE_MAP(c, v, f, base);
}

/* srv6 */

static int srv6_locator(struct ctx *c, const yaml_node_t *v, void *base)
{
	struct mrcd_config *cfg = base;

	if (get_addr(c, v, 6, true, &cfg->srv6.locator) != 0)
		return -EINVAL;
	if (cfg->srv6.locator.len != 32)
		return fail(c, v, "must be a /32 locator block (F3216, D8)");
	return 0;
}

static int tmpl_dst(struct ctx *c, const yaml_node_t *v, void *base)
{
	return get_addr(c, v, 6, true, &((struct mrcd_srv6_template *)base)->dst);
}

static int tmpl_usids(struct ctx *c, const yaml_node_t *v, void *base)
{
	struct mrcd_srv6_template *t = base;
	int n = list_len(c, v);

	if (n < 0)
		return n;
	if (n == 0 || n > MRCD_SRV6_MAX_USIDS)
		return fail(c, v, "must list 1..%d uSIDs", MRCD_SRV6_MAX_USIDS);
	for (int i = 0; i < n; i++) {
		size_t old = push_idx(c, (unsigned)i);
		uint64_t u;
		int rc = get_uint(c, list_item(c, v, i), 0, 0xffff, &u);

		pop(c, old);
		if (rc != 0)
			return rc;
		t->usid[i] = (uint16_t)u;
	}
	t->n_usid = (uint8_t)n;
	return 0;
}

static int srv6_templates(struct ctx *c, const yaml_node_t *v, void *base)
{
	static const struct field f[] = {
		{.key = "destination", .type = F_FN, .fn = tmpl_dst, .required = true},
		{.key = "usids", .type = F_FN, .fn = tmpl_usids, .required = true},
		FLD_UINT("plane_mask", struct mrcd_srv6_template, plane_mask, 0, 0xffff),
		FLD_UINT("plane_shift", struct mrcd_srv6_template, plane_shift, 0, 15),
		FLD_UINT("uplink_usid", struct mrcd_srv6_template, uplink_usid, 0, MRCD_SRV6_MAX_USIDS - 1),
		FLD_UINT("uplink_mask", struct mrcd_srv6_template, uplink_mask, 0, 0xffff),
	};
	struct mrcd_config *cfg = base;
	int n = list_len(c, v);

	if (n <= 0)
		return n;
	cfg->srv6.templates = calloc((size_t)n, sizeof(*cfg->srv6.templates));
	if (cfg->srv6.templates == NULL)
		return c->rc = -ENOMEM;
	for (int i = 0; i < n; i++) {
		struct mrcd_srv6_template *t = &cfg->srv6.templates[i];
		const yaml_node_t *it = list_item(c, v, i);
		size_t old = push_idx(c, (unsigned)i);
		int rc;

		record_line(c, node_line(it));
		rc = PARSE_MAP(c, it, f, t);
		if (rc == 0 && t->uplink_usid >= t->n_usid) {
			size_t o2 = push_key(c, "uplink_usid");

			rc = fail_at(c, c->path, NULL, "index %u is past the %u uSIDs", t->uplink_usid, t->n_usid);
			pop(c, o2);
		}
		pop(c, old);
		if (rc != 0)
			return rc;
		cfg->srv6.n_templates++;
	}
	return 0;
}

static int sec_srv6(struct ctx *c, const yaml_node_t *v, void *base)
{
	static const struct field f[] = {
		FLD_BOOL("enabled", struct mrcd_config, srv6.enabled),
		FLD_FN("locator_block", srv6_locator),
		FLD_UINT("uplinks", struct mrcd_config, srv6.uplinks, 1, MRCP_EV_MAX),
		FLD_FN("templates", srv6_templates),
	};

	return PARSE_MAP(c, v, f, base);
}

/* control */

static int control_socket(struct ctx *c, const yaml_node_t *v, void *base)
{
	struct mrcd_config *cfg = base;

	if (get_str(c, v, cfg->control.socket, sizeof(cfg->control.socket), false) != 0)
		return -EINVAL;
	if (cfg->control.socket[0] != '/')
		return fail(c, v, "\"%s\" must be an absolute path", cfg->control.socket);
	if (cfg->control.socket[strlen(cfg->control.socket) - 1] == '/')
		return fail(c, v, "\"%s\" names a directory, not a socket", cfg->control.socket);
	return 0;
}

static int control_mode(struct ctx *c, const yaml_node_t *v, void *base)
{
	struct mrcd_config *cfg = base;
	const char *s = scalar(c, v, "an octal mode");
	const char *d;
	unsigned long m;
	char *end;

	if (s == NULL)
		return -EINVAL;
	d = (s[0] == '0' && (s[1] == 'o' || s[1] == 'O')) ? s + 2 : s;
	if (d[0] < '0' || d[0] > '7')
		goto bad;
	m = strtoul(d, &end, 8);
	if (*end != '\0')
		goto bad;
	if (m > 0777)
		return fail(c, v, "%s is out of range 0..0777", s);
	if ((m & 0600) != 0600)
		return fail(c, v, "%s: the owner needs read and write (0600)", s);
	cfg->control.mode = (uint32_t)m;
	return 0;
bad:
	return fail(c, v, "must be an octal mode such as 0660, not \"%s\"", s);
}

static int control_group(struct ctx *c, const yaml_node_t *v, void *base)
{
	struct mrcd_config *cfg = base;

	if (get_str(c, v, cfg->control.group, sizeof(cfg->control.group), false) != 0)
		return -EINVAL;
	for (const char *s = cfg->control.group; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-' && *s != '.')
			return fail(c, v, "\"%s\" is not a group name", cfg->control.group);
	return 0;
}

static int sec_control(struct ctx *c, const yaml_node_t *v, void *base)
{
	static const struct field f[] = {
		FLD_FN("socket", control_socket),
		FLD_FN("mode", control_mode),
		FLD_FN("group", control_group),
	};

	return PARSE_MAP(c, v, f, base);
}

static int sec_telemetry(struct ctx *c, const yaml_node_t *v, void *base)
{
	static const struct field f[] = {
		FLD_BOOL("enabled", struct mrcd_config, telemetry.enabled),
	};

	return PARSE_MAP(c, v, f, base);
}

static int limits_per_client(struct ctx *c, const yaml_node_t *v, void *base)
{
	static const struct field f[] = {
		FLD_UINT("max_qps", struct mrcd_config, limits.per_client.max_qps, 1, 1u << 16),
		FLD_UINT("max_mem_mb", struct mrcd_config, limits.per_client.max_mem_mb, 1, 1u << 20),
		FLD_UINT("max_wrs", struct mrcd_config, limits.per_client.max_wrs, 1, 1u << 24),
	};

	return PARSE_MAP(c, v, f, base);
}

static int sec_limits(struct ctx *c, const yaml_node_t *v, void *base)
{
	static const struct field f[] = {
		FLD_UINT("max_qps", struct mrcd_config, limits.max_qps, 1, 1u << 16),
		FLD_UINT("max_mrs", struct mrcd_config, limits.max_mrs, 1, 1u << 24),
		FLD_UINT("max_peers", struct mrcd_config, limits.max_peers, 1, 1u << 16),
		FLD_FN("per_client", limits_per_client),
	};

	return PARSE_MAP(c, v, f, base);
}

/* faults[i] */

struct fault_tmp {
	struct mrcd_fault f;
	char port[MRCD_NAME_MAX];
};

static const char *const dir_names[] = {"tx", "rx", "both", NULL};

static int sec_faults(struct ctx *c, const yaml_node_t *v, void *base)
{
	static const struct field f[] = {
		{.key = "port", .type = F_STR, .off = offsetof(struct fault_tmp, port), .size = MRCD_NAME_MAX, .required = true},
		FLD_UINT("ev_min", struct fault_tmp, f.ev_min, 0, UINT32_MAX),
		FLD_UINT("ev_max", struct fault_tmp, f.ev_max, 0, UINT32_MAX),
		FLD_ENUM("direction", struct fault_tmp, f.dir, dir_names),
		FLD_DBL("drop_pct", struct fault_tmp, f.drop_pct, 0.0, 100.0),
		FLD_BOOL("blackhole", struct fault_tmp, f.blackhole),
		FLD_US("delay_us", struct fault_tmp, f.delay_ns, 0.0, 1e6),
		FLD_US("jitter_us", struct fault_tmp, f.jitter_ns, 0.0, 1e6),
		FLD_DBL("reorder_pct", struct fault_tmp, f.reorder_pct, 0.0, 100.0),
		FLD_DBL("duplicate_pct", struct fault_tmp, f.duplicate_pct, 0.0, 100.0),
		FLD_DBL("corrupt_pct", struct fault_tmp, f.corrupt_pct, 0.0, 100.0),
		FLD_DBL("trim_pct", struct fault_tmp, f.trim_pct, 0.0, 100.0),
		FLD_DBL("ecn_pct", struct fault_tmp, f.ecn_pct, 0.0, 100.0),
	};
	struct mrcd_config *cfg = base;
	int n = list_len(c, v);

	if (n <= 0)
		return n;
	cfg->faults = calloc((size_t)n, sizeof(*cfg->faults));
	if (cfg->faults == NULL)
		return c->rc = -ENOMEM;
	for (int i = 0; i < n; i++) {
		struct fault_tmp t;
		const yaml_node_t *it = list_item(c, v, i);
		size_t old = push_idx(c, (unsigned)i);
		int rc;

		memset(&t, 0, sizeof(t));
		t.f.ev_max = UINT32_MAX;
		record_line(c, node_line(it));
		rc = PARSE_MAP(c, it, f, &t);
		if (rc == 0 && t.f.ev_min > t.f.ev_max) {
			size_t o2 = push_key(c, "ev_max");

			rc = fail_at(c, c->path, NULL, "%u is below ev_min %u", t.f.ev_max, t.f.ev_min);
			pop(c, o2);
		}
		if (rc == 0) {
			t.f.port = find_port(cfg, t.port);
			if (t.f.port < 0) {
				size_t o2 = push_key(c, "port");

				rc = fail_at(c, c->path, NULL, "no port is named \"%s\"", t.port);
				pop(c, o2);
			}
		}
		pop(c, old);
		if (rc != 0)
			return rc;
		cfg->faults[i] = t.f;
		cfg->n_faults++;
	}
	return 0;
}

/* ---- validation across sections ----------------------------------------------- */

int mrcd_config_family(const struct mrcd_config *c)
{
	if (c->n_ports == 0)
		return 4;
	for (unsigned i = 0; i < c->n_ports; i++)
		if (c->ports[i].ipv6.ip.family != 6)
			return 4;
	return 6;
}

unsigned mrcd_config_frame_overhead(const struct mrcd_config *c)
{
	/* §2.1, counted after Ethernet, plus 4 B of ImmDt */
	if (c->srv6.enabled)
		return 128 + 4;
	return mrcd_config_family(c) == 6 ? 88 + 4 : 68 + 4;
}

static int validate(struct ctx *c, struct mrcd_config *cfg)
{
	char path[96], other[96];
	unsigned n = cfg->n_ports;
	int fam = mrcd_config_family(cfg);

	/* ports: names, devices, addresses, MTU */
	for (unsigned i = 0; i < n; i++) {
		const struct mrcd_port_config *p = &cfg->ports[i];
		size_t dlen = strcspn(p->devargs, ",");

		for (unsigned j = 0; j < i; j++) {
			const struct mrcd_port_config *q = &cfg->ports[j];

			if (strcmp(p->name, q->name) == 0) {
				snprintf(path, sizeof(path), "ports[%u].name", i);
				return fail_at(c, path, NULL, "duplicate port name \"%s\" (also ports[%u])", p->name, j);
			}
			if (strcspn(q->devargs, ",") == dlen && strncmp(p->devargs, q->devargs, dlen) == 0) {
				snprintf(path, sizeof(path), "ports[%u].devargs", i);
				return fail_at(c, path, NULL, "device %.*s is already used by ports[%u]",
					       (int)dlen, p->devargs, j);
			}
		}
		snprintf(path, sizeof(path), "ports[%u]", i);
		if (p->ipv4.ip.family == 0 && p->ipv6.ip.family == 0)
			return fail_at(c, path, NULL, "needs an ipv4 or an ipv6 address");
		if (fam == 4 && p->ipv4.ip.family == 0) {
			unsigned k = 0;

			while (k < n && cfg->ports[k].ipv6.ip.family == 6)
				k++;
			snprintf(path, sizeof(path), "ports[%u].ipv4", i);
			snprintf(other, sizeof(other), "ports[%u]", i);
			return fail_at(c, path, other, "missing: ports[%u] has no ipv6 address, so every plane "
				       "runs IPv4 and needs an ipv4 address", k);
		}
	}
	for (unsigned i = 0; i < n; i++) {
		struct mrcd_port_config *p = &cfg->ports[i];
		unsigned need = cfg->transport.mtu + mrcd_config_frame_overhead(cfg);

		if (p->mtu == 0) {
			p->mtu = (uint16_t)need;
		} else if (p->mtu < need) {
			snprintf(path, sizeof(path), "ports[%u].mtu", i);
			return fail_at(c, path, NULL, "%u is too small for transport.mtu %u over %s "
				       "(needs at least %u)", p->mtu, cfg->transport.mtu,
				       cfg->srv6.enabled ? "SRv6" : fam == 6 ? "IPv6" : "IPv4", need);
		}
	}

	/* transport: EV counts (D41), DSCPs (D23) */
	if (cfg->transport.ev_active % n != 0)
		return fail_at(c, "transport.ev_active", "ports", "%u is not divisible by the %u ports (D41)",
			       cfg->transport.ev_active, n);
	if (cfg->transport.ev_backup % n != 0)
		return fail_at(c, "transport.ev_backup", "ports", "%u is not divisible by the %u ports (D41)",
			       cfg->transport.ev_backup, n);
	if ((unsigned)cfg->transport.ev_active + cfg->transport.ev_backup > MRCP_EV_MAX)
		return fail_at(c, "transport.ev_backup", "transport.ev_active",
			       "ev_active + ev_backup = %u is above %u",
			       (unsigned)cfg->transport.ev_active + cfg->transport.ev_backup, MRCP_EV_MAX);
	if (cfg->transport.ev_min_active > cfg->transport.ev_active)
		return fail_at(c, "transport.ev_min_active", NULL, "%u is above ev_active %u",
			       cfg->transport.ev_min_active, cfg->transport.ev_active);
	for (unsigned t = MRCP_DSCP_CLASS_TRIMMED; t <= MRCP_DSCP_CLASS_TRIMMED_LASTHOP; t++) {
		for (unsigned i = 0; i < MRCP_DSCP_CLASS_COUNT; i++) {
			const char *tn = mrcp_dscp_class_name((enum mrcp_dscp_class)t);
			const char *in = mrcp_dscp_class_name((enum mrcp_dscp_class)i);
			char tl[24], il[24];
			size_t k;

			if (i == MRCP_DSCP_CLASS_TRIMMED || i == MRCP_DSCP_CLASS_TRIMMED_LASTHOP)
				continue;
			if (cfg->transport.dscp.dscp[i] != cfg->transport.dscp.dscp[t])
				continue;
			for (k = 0; tn[k] && k + 1 < sizeof(tl); k++)
				tl[k] = (char)tolower((unsigned char)tn[k]);
			tl[k] = '\0';
			for (k = 0; in[k] && k + 1 < sizeof(il); k++)
				il[k] = (char)tolower((unsigned char)in[k]);
			il[k] = '\0';
			snprintf(path, sizeof(path), "transport.dscp.%s", tl);
			return fail_at(c, path, "transport.dscp", "%u is also the DSCP of class %s: every "
				       "%s packet would look trimmed (D23)", cfg->transport.dscp.dscp[t], il, il);
		}
	}

	/* cc */
	if (cfg->cc.params.min_cwnd != 0 && cfg->cc.params.max_cwnd != 0 &&
	    cfg->cc.params.min_cwnd > cfg->cc.params.max_cwnd)
		return fail_at(c, "cc.nscc.min_cwnd_kb", NULL, "%llu KiB is above max_cwnd_kb %llu KiB",
			       (unsigned long long)cfg->cc.params.min_cwnd / 1024,
			       (unsigned long long)cfg->cc.params.max_cwnd / 1024);
	if (strcmp(cfg->cc.algorithm, mrcp_cc_fixed.name) != 0 && cfg->cc.params.fixed_cwnd != 0)
		return fail_at(c, "cc.fixed_cwnd_kb", NULL, "only used with algorithm: fixed");
	if (strcmp(cfg->cc.algorithm, mrcp_cc_nscc.name) != 0 && line_of(c, "cc.nscc") != 0)
		return fail_at(c, "cc.nscc", NULL, "only used with algorithm: nscc");

	/* srv6 (D8) */
	if (cfg->srv6.enabled) {
		unsigned per_plane = ((unsigned)cfg->transport.ev_active + cfg->transport.ev_backup) / n;

		if (cfg->srv6.locator.ip.family == 0)
			return fail_at(c, "srv6.locator_block", "srv6.enabled", "missing: required when srv6 is enabled");
		if (cfg->srv6.n_templates == 0)
			return fail_at(c, "srv6.templates", "srv6.enabled", "missing: required when srv6 is enabled");
		if (fam != 6) {
			for (unsigned i = 0; i < n; i++)
				if (cfg->ports[i].ipv6.ip.family != 6) {
					snprintf(path, sizeof(path), "ports[%u]", i);
					return fail_at(c, path, NULL, "needs an ipv6 address: srv6 is enabled");
				}
		}
		if (cfg->srv6.uplinks < per_plane)
			return fail_at(c, "srv6.uplinks", "srv6.enabled", "%u uplinks cannot give %u distinct EVs "
				       "per plane (ev_active + ev_backup over %u ports, D8)",
				       cfg->srv6.uplinks, per_plane, n);
	}

	/* limits */
	if (cfg->limits.per_client.max_qps > cfg->limits.max_qps)
		return fail_at(c, "limits.per_client.max_qps", "limits", "%u is above limits.max_qps %u",
			       cfg->limits.per_client.max_qps, cfg->limits.max_qps);
	return 0;
}

/* ---- top level ------------------------------------------------------------------ */

static const struct field top_fields[] = {
	FLD_FN("eal", sec_eal),
	FLD_FN_REQ("ports", sec_ports),
	FLD_FN("neighbours", sec_neighbours),
	FLD_FN("lcores", sec_lcores),
	FLD_FN("transport", sec_transport),
	FLD_FN("cc", sec_cc),
	FLD_FN("srv6", sec_srv6),
	FLD_FN("control", sec_control),
	FLD_FN("telemetry", sec_telemetry),
	FLD_FN("limits", sec_limits),
	FLD_FN("faults", sec_faults),
};

static void set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static int skip_ports(struct ctx *c, const yaml_node_t *v, void *base)
{
	(void)c;
	(void)v;
	(void)base;
	return 0;
}

/* Ports are read first, so that neighbours and faults may name ports
 * whatever the order of the sections; then every section in file order
 * (the ports entry of the table does nothing the second time). */
static int parse_root(struct ctx *c, const yaml_node_t *root, struct mrcd_config *cfg)
{
	struct field f[sizeof(top_fields) / sizeof(top_fields[0])];
	const unsigned nf = (unsigned)(sizeof(top_fields) / sizeof(top_fields[0]));

	if (root->type != YAML_MAPPING_NODE)
		return fail(c, root, "the file must be a mapping of sections (eal, ports, ...)");
	for (yaml_node_pair_t *pr = root->data.mapping.pairs.start; pr < root->data.mapping.pairs.top; pr++) {
		const yaml_node_t *k = yaml_document_get_node(c->doc, pr->key);

		if (k->type == YAML_SCALAR_NODE && strcmp((const char *)k->data.scalar.value, "ports") == 0) {
			size_t old = push_key(c, "ports");
			int rc;

			record_line(c, node_line(k));
			rc = sec_ports(c, yaml_document_get_node(c->doc, pr->value), cfg);

			pop(c, old);
			if (rc != 0)
				return rc;
			break; /* a duplicate is reported by the full pass */
		}
	}
	memcpy(f, top_fields, sizeof(f));
	for (unsigned i = 0; i < nf; i++)
		if (strcmp(f[i].key, "ports") == 0)
			f[i].fn = skip_ports;
	return parse_map(c, root, f, nf, cfg);
}

int mrcd_config_load_string(const char *name, const char *yaml, struct mrcd_config *out,
			    char *err, size_t errlen)
{
	yaml_parser_t parser;
	yaml_document_t doc, extra;
	struct mrcd_config *cfg;
	struct ctx c;
	yaml_node_t *root;
	int rc;

	if (err != NULL && errlen > 0)
		err[0] = '\0';
	mrcd_config_defaults(out);
	if (name == NULL)
		name = "(string)";
	if (yaml == NULL) {
		set_err(err, errlen, "%s: no text", name);
		return -EINVAL;
	}
	cfg = malloc(sizeof(*cfg));
	if (cfg == NULL) {
		set_err(err, errlen, "%s: out of memory", name);
		return -ENOMEM;
	}
	mrcd_config_defaults(cfg);
	if (!yaml_parser_initialize(&parser)) {
		free(cfg);
		set_err(err, errlen, "%s: out of memory", name);
		return -ENOMEM;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)yaml, strlen(yaml));
	if (!yaml_parser_load(&parser, &doc)) {
		const yaml_mark_t *mk = parser.problem ? &parser.problem_mark : &parser.context_mark;

		rc = parser.error == YAML_MEMORY_ERROR ? -ENOMEM : -EINVAL;
		if (parser.context != NULL)
			set_err(err, errlen, "%s:%lu: yaml: %s %s (line %lu)", name, (unsigned long)mk->line + 1,
				parser.problem ? parser.problem : "syntax error", parser.context,
				(unsigned long)parser.context_mark.line + 1);
		else
			set_err(err, errlen, "%s:%lu: yaml: %s", name, (unsigned long)mk->line + 1,
				parser.problem ? parser.problem : "syntax error");
		yaml_parser_delete(&parser);
		free(cfg);
		return rc;
	}
	memset(&c, 0, sizeof(c));
	c.name = name;
	c.doc = &doc;
	c.err = err;
	c.errlen = errlen;
	c.cfg = cfg;
	root = yaml_document_get_root_node(&doc);
	c.root_line = 1;
	if (root == NULL) {
		fail(&c, NULL, "the file is empty: at least a ports section is required");
	} else {
		c.root_line = node_line(root);
		/* a second document is almost certainly a mistake */
		if (!yaml_parser_load(&parser, &extra)) {
			const yaml_mark_t *mk = parser.problem ? &parser.problem_mark : &parser.context_mark;

			set_err(err, errlen, "%s:%lu: yaml: %s", name, (unsigned long)mk->line + 1,
				parser.problem ? parser.problem : "syntax error");
			c.rc = -EINVAL;
		} else {
			yaml_node_t *r2 = yaml_document_get_root_node(&extra);

			if (r2 != NULL) {
				char msg[] = "a second YAML document: only one is allowed";

				set_err(err, errlen, "%s:%lu: (top): %s", name,
					(unsigned long)extra.start_mark.line + 1, msg);
				c.rc = -EINVAL;
			}
			yaml_document_delete(&extra);
		}
	}
	if (c.rc == 0)
		(void)parse_root(&c, root, cfg);
	if (c.rc == 0)
		(void)validate(&c, cfg);
	rc = c.rc;
	free(c.lines);
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	if (rc != 0) {
		if (rc == -ENOMEM && err != NULL && errlen > 0 && err[0] == '\0')
			set_err(err, errlen, "%s: out of memory", name);
		mrcd_config_free(cfg);
		free(cfg);
		return rc;
	}
	*out = *cfg;
	free(cfg);
	return 0;
}

int mrcd_config_load(const char *path, struct mrcd_config *out, char *err, size_t errlen)
{
	FILE *fp;
	char *buf;
	size_t len = 0;
	int rc;

	if (err != NULL && errlen > 0)
		err[0] = '\0';
	mrcd_config_defaults(out);
	fp = fopen(path, "rb");
	if (fp == NULL) {
		rc = -errno;
		set_err(err, errlen, "%s: cannot open: %s", path,
			rc == -ENOENT ? "no such file" : rc == -EACCES ? "permission denied" : strerror(-rc));
		return rc;
	}
	buf = malloc(MAX_FILE_BYTES + 1);
	if (buf == NULL) {
		fclose(fp);
		set_err(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	len = fread(buf, 1, MAX_FILE_BYTES + 1, fp);
	if (ferror(fp)) {
		rc = errno ? -errno : -EIO;
		set_err(err, errlen, "%s: cannot read: %s", path,
			rc == -EISDIR ? "is a directory" : strerror(-rc));
		free(buf);
		fclose(fp);
		return rc;
	}
	fclose(fp);
	if (len > MAX_FILE_BYTES) {
		free(buf);
		set_err(err, errlen, "%s: larger than %u bytes", path, MAX_FILE_BYTES);
		return -EFBIG;
	}
	buf[len] = '\0';
	if (memchr(buf, '\0', len) != NULL) {
		free(buf);
		set_err(err, errlen, "%s:1: (top): not a text file (contains NUL bytes)", path);
		return -EINVAL;
	}
	rc = mrcd_config_load_string(path, buf, out, err, errlen);
	free(buf);
	return rc;
}

/* ---- mapping to the engine ---------------------------------------------------------- */

static void port_ip(const struct mrcd_port_config *p, int fam, struct mrcp_ip *out)
{
	*out = fam == 6 ? p->ipv6.ip : p->ipv4.ip;
}

void mrcd_config_to_engine(const struct mrcd_config *c, struct mrcp_engine_config *e)
{
	int fam = mrcd_config_family(c);

	mrcp_engine_config_defaults(e);
	e->max_qps = c->limits.max_qps;
	e->max_mrs = c->limits.max_mrs;
	e->max_peers = c->limits.max_peers;
	e->n_ports = (uint8_t)c->n_ports;
	for (unsigned i = 0; i < c->n_ports; i++) {
		e->port_bps[i] = (uint64_t)c->ports[i].speed_gbps * 1000000000ull; /* D54 */
		port_ip(&c->ports[i], fam, &e->port_addr[i]);
	}
	if (c->n_ports > 0)
		e->node_addr = e->port_addr[0];
	e->mtu = c->transport.mtu;
	e->udp_port = c->transport.udp_port;
	e->dscp = c->transport.dscp;
	e->trimming_fabric = c->transport.trimming_fabric;
	e->sack_every = c->transport.sack_every;
	e->base_rtt_ns = c->transport.base_rtt_ns;
	e->timeout = c->transport.timeout;
	e->linear_cnt = c->transport.linear_cnt;
	e->exp_cnt = c->transport.exp_cnt;
	e->mpr = c->transport.mpr;
	e->max_wimm = c->transport.max_wimm;
	mrcp_ev_config_defaults(&e->ev);
	e->ev.n_active = c->transport.ev_active;
	e->ev.n_backup = c->transport.ev_backup;
	e->ev.min_active = c->transport.ev_min_active;
	e->ev.n_ports = (uint8_t)c->n_ports;
	e->ev.mode = c->srv6.enabled ? MRCP_EV_MODE_SRV6 : MRCP_EV_MODE_UDP;
	e->ev.ipv4 = fam == 4;
	e->ev.srv6_uplinks = c->srv6.enabled ? c->srv6.uplinks : 0;
	e->ev.trimming_fabric = c->transport.trimming_fabric;
	e->ev.base_rtt_ns = c->transport.base_rtt_ns;
	snprintf(e->cc, sizeof(e->cc), "%s", c->cc.algorithm);
	e->cc_params = c->cc.params;
	e->cc_per_qp = c->cc.scope == MRCD_CC_SCOPE_QP;
}

void mrcd_config_to_frame_rx(const struct mrcd_config *c, struct mrcp_frame_rx_cfg *rx)
{
	mrcp_frame_rx_cfg_defaults(rx);
	rx->udp_port = c->transport.udp_port;
	rx->accept_alt_port = c->transport.accept_alt_port;
	rx->ev_layout = c->transport.ev_layout;
	rx->dscp = c->transport.dscp;
	rx->lasthop_hl_enable = c->transport.lasthop_hop_limit != 0;
	rx->lasthop_hl = c->transport.lasthop_hop_limit;
}
