/* config_yaml.c - the YAML machinery of the configuration loader
 * (config_internal.h): a parse context that knows the key path and the line
 * of every key, one-line errors "<file>:<line>: <key.path>: <reason>",
 * typed scalar getters with ranges, and key tables that reject unknown,
 * duplicate and missing keys. Knows no section of the configuration.
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

#include "config_internal.h"

/* ---- parse context ------------------------------------------------------------- */


unsigned cfg_node_line(const yaml_node_t *n)
{
	return n ? (unsigned)n->start_mark.line + 1 : 1;
}

static void verr(struct ctx *c, unsigned line, const char *path, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));

/* Copy @in to @out (@cap bytes, NUL included), writing every control byte
 * as an escape (\n, \t, \r, \xHH), so a message that echoes a key or value
 * stays one line whatever the file held. Truncates on an escape boundary. */
static void copy_escaped(char *out, size_t cap, const char *in)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	for (; *in != '\0'; in++) {
		unsigned char ch = (unsigned char)*in;
		char esc[4];
		size_t n = 0;

		if (ch == '\n' || ch == '\t' || ch == '\r') {
			esc[n++] = '\\';
			esc[n++] = ch == '\n' ? 'n' : ch == '\t' ? 't' : 'r';
		} else if (ch < 0x20 || ch == 0x7f) {
			esc[n++] = '\\';
			esc[n++] = 'x';
			esc[n++] = hex[ch >> 4];
			esc[n++] = hex[ch & 0xf];
		} else {
			esc[n++] = (char)ch;
		}
		if (o + n >= cap)
			break;
		memcpy(out + o, esc, n);
		o += n;
	}
	out[o] = '\0';
}

static void verr(struct ctx *c, unsigned line, const char *path, const char *fmt, va_list ap)
{
	char reason[256], msg[512];

	if (c->rc != 0)
		return;
	c->rc = -EINVAL;
	vsnprintf(reason, sizeof(reason), fmt, ap);
	if (c->err != NULL && c->errlen > 0) {
		snprintf(msg, sizeof(msg), "%s:%u: %s: %s", c->name, line,
			 path[0] ? path : "(top)", reason);
		copy_escaped(c->err, c->errlen, msg);
	}
}

/* An error at node @n about the current key path. @return -EINVAL. */

int cfg_fail(struct ctx *c, const yaml_node_t *n, const char *fmt, ...)
{
	va_list ap;

	unsigned line = cfg_node_line(n);

	/* a block mapping or list starts on the line after its key: name
	 * the key's line */
	if (n != NULL && n->type != YAML_SCALAR_NODE && cfg_line_of(c, c->path) != 0)
		line = cfg_line_of(c, c->path);
	va_start(ap, fmt);
	verr(c, line, c->path, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

int cfg_fail_line(struct ctx *c, unsigned line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verr(c, line, c->path, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* An error about @path at the line where it was configured (or, if it was
 * not, where @fallback was, or line 1). @return -EINVAL. */
unsigned cfg_line_of(const struct ctx *c, const char *path)
{
	for (unsigned i = 0; i < c->n_lines; i++)
		if (strcmp(c->lines[i].path, path) == 0)
			return c->lines[i].line;
	return 0;
}

int cfg_fail_at(struct ctx *c, const char *path, const char *fallback, const char *fmt, ...)
{
	unsigned line = cfg_line_of(c, path);
	va_list ap;

	if (line == 0 && fallback != NULL)
		line = cfg_line_of(c, fallback);
	if (line == 0)
		line = c->root_line;
	va_start(ap, fmt);
	verr(c, line, path, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

void cfg_record_line(struct ctx *c, unsigned line)
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

size_t cfg_push_key(struct ctx *c, const char *key)
{
	size_t old = c->plen;
	int n = snprintf(c->path + old, sizeof(c->path) - old, "%s%s", old ? "." : "", key);

	c->plen = (n < 0 || (size_t)n >= sizeof(c->path) - old) ? sizeof(c->path) - 1 : old + (size_t)n;
	return old;
}

size_t cfg_push_idx(struct ctx *c, unsigned i)
{
	size_t old = c->plen;
	int n = snprintf(c->path + old, sizeof(c->path) - old, "[%u]", i);

	c->plen = (n < 0 || (size_t)n >= sizeof(c->path) - old) ? sizeof(c->path) - 1 : old + (size_t)n;
	return old;
}

void cfg_pop(struct ctx *c, size_t old)
{
	c->plen = old;
	c->path[old] = '\0';
}

/* ---- nesting depth ------------------------------------------------------------ */

/* One open collection of the pre-scan: its path, and where its next item
 * stands (a list's index; a mapping's key or value). */
struct depth_frame {
	bool map, want_key;
	unsigned idx;
	unsigned key_line;         /* a mapping's latest key's line */
	size_t base;               /* c->plen of the collection itself */
};

/* A node starts inside @f: put its key path in c->path. */
static void depth_node_begin(struct ctx *c, struct depth_frame *f, const yaml_event_t *ev)
{
	if (!f->map) {
		cfg_pop(c, f->base);
		cfg_push_idx(c, f->idx);
	} else if (f->want_key) {
		cfg_pop(c, f->base);
		cfg_push_key(c, ev->type == YAML_SCALAR_EVENT ? (const char *)ev->data.scalar.value : "?");
		f->key_line = (unsigned)ev->start_mark.line + 1;
	}
}

/* A node inside @f has ended: the next one is the list's next item, or
 * the mapping's value after a key and its next key after a value. */
static void depth_node_end(struct depth_frame *f)
{
	if (!f->map)
		f->idx++;
	else
		f->want_key = !f->want_key;
}

int cfg_check_depth(struct ctx *c, const char *yaml, size_t len)
{
	const unsigned max = MRCD_CONFIG_MAX_DEPTH;
	struct depth_frame st[MRCD_CONFIG_MAX_DEPTH];
	yaml_parser_t p;
	yaml_event_t ev;
	unsigned depth = 0;
	bool done = false;

	if (!yaml_parser_initialize(&p))
		return -ENOMEM;
	yaml_parser_set_input_string(&p, (const unsigned char *)yaml, len);
	while (!done && c->rc == 0 && yaml_parser_parse(&p, &ev)) {
		unsigned line = (unsigned)ev.start_mark.line + 1;

		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			done = true;
			break;
		case YAML_DOCUMENT_START_EVENT:
			depth = 0;
			cfg_pop(c, 0);
			break;
		case YAML_SCALAR_EVENT:
		case YAML_ALIAS_EVENT:
			if (depth > 0) {
				depth_node_begin(c, &st[depth - 1], &ev);
				depth_node_end(&st[depth - 1]);
			}
			break;
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
			if (depth > 0)
				depth_node_begin(c, &st[depth - 1], &ev);
			if (depth == max) {
				/* stop here: deeper levels are never parsed. A
				 * mapping's value is named at its key's line (a
				 * block collection starts on the next one) */
				if (st[depth - 1].map && !st[depth - 1].want_key)
					line = st[depth - 1].key_line;
				cfg_fail_line(c, line, "nesting deeper than %u levels", max);
				break;
			}
			st[depth] = (struct depth_frame){ .map = ev.type == YAML_MAPPING_START_EVENT,
							  .want_key = true, .base = c->plen };
			depth++;
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			if (depth == 0)
				break;
			depth--;
			cfg_pop(c, st[depth].base);
			if (depth > 0)
				depth_node_end(&st[depth - 1]);
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
	}
	/* a syntax error stops the scan: the document loader reports it */
	yaml_parser_delete(&p);
	cfg_pop(c, 0);
	return c->rc;
}

/* ---- scalars ----------------------------------------------------------------- */

const char *cfg_scalar(struct ctx *c, const yaml_node_t *n, const char *what)
{
	if (n->type != YAML_SCALAR_NODE) {
		cfg_fail(c, n, "must be %s, not a %s", what,
		     n->type == YAML_MAPPING_NODE ? "mapping" : "list");
		return NULL;
	}
	return (const char *)n->data.scalar.value;
}

int cfg_get_uint(struct ctx *c, const yaml_node_t *n, uint64_t lo, uint64_t hi, uint64_t *out)
{
	const char *s = cfg_scalar(c, n, "an integer");
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
		return cfg_fail(c, n, "%s is out of range %llu..%llu", s,
			    (unsigned long long)lo, (unsigned long long)hi);
	*out = v;
	return 0;
bad:
	return cfg_fail(c, n, "must be an integer, not \"%s\"", s);
}

static int get_double(struct ctx *c, const yaml_node_t *n, double lo, double hi, double *out)
{
	const char *s = cfg_scalar(c, n, "a number");
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
		return cfg_fail(c, n, "%s is out of range %g..%g", s, lo, hi);
	*out = v;
	return 0;
bad:
	return cfg_fail(c, n, "must be a number, not \"%s\"", s);
}

static int get_bool(struct ctx *c, const yaml_node_t *n, bool *out)
{
	static const char *const yes[] = {"true", "yes", "on"};
	static const char *const no[] = {"false", "no", "off"};
	const char *s = cfg_scalar(c, n, "true or false");

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
	return cfg_fail(c, n, "must be true or false, not \"%s\"", s);
}

int cfg_get_str(struct ctx *c, const yaml_node_t *n, char *buf, size_t cap, bool empty_ok)
{
	const char *s = cfg_scalar(c, n, "a string");

	if (s == NULL)
		return -EINVAL;
	if (!empty_ok && s[0] == '\0')
		return cfg_fail(c, n, "must not be empty");
	if (strlen(s) >= cap)
		return cfg_fail(c, n, "must be at most %zu characters long", cap - 1);
	memcpy(buf, s, strlen(s) + 1);
	return 0;
}

/* "a, b or c" from the NULL-terminated @names. */
void cfg_names_join(const char *const *names, char *list, size_t cap)
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
	const char *s = cfg_scalar(c, n, "a name");
	char list[160];

	if (s == NULL)
		return -EINVAL;
	for (int i = 0; names[i] != NULL; i++) {
		if (strcmp(s, names[i]) == 0) {
			*out = i;
			return 0;
		}
	}
	cfg_names_join(names, list, sizeof(list));
	return cfg_fail(c, n, "\"%s\" is not one of %s", s, list);
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

int cfg_get_mac(struct ctx *c, const yaml_node_t *n, uint8_t mac[6])
{
	const char *s = cfg_scalar(c, n, "a MAC address");
	static const uint8_t zero[6];

	if (s == NULL)
		return -EINVAL;
	if (parse_mac(s, mac) != 0)
		return cfg_fail(c, n, "\"%s\" is not a MAC address (expected xx:xx:xx:xx:xx:xx)", s);
	if (mac[0] & 1)
		return cfg_fail(c, n, "%s is a multicast MAC address", s);
	if (memcmp(mac, zero, 6) == 0)
		return cfg_fail(c, n, "%s is the zero MAC address", s);
	return 0;
}

/* An address of @family (4, 6, or 0 for either); with @want_prefix, a
 * mandatory "/len". Rejects unspecified and multicast addresses. */
int cfg_get_addr(struct ctx *c, const yaml_node_t *n, int family, bool want_prefix,
		    struct mrcd_prefix *out)
{
	const char *s = cfg_scalar(c, n, "an address");
	char buf[INET6_ADDRSTRLEN + 8];
	const char *what = family == 4 ? "an IPv4" : family == 6 ? "an IPv6" : "an IP";
	char *slash;
	unsigned maxlen;
	static const uint8_t zero[16];

	if (s == NULL)
		return -EINVAL;
	if (strlen(s) >= sizeof(buf))
		return cfg_fail(c, n, "\"%s\" is not %s address", s, what);
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
		return cfg_fail(c, n, "\"%s\" is not %s address%s", s, what, want_prefix ? " with a /prefix" : "");
	}
	if (want_prefix) {
		char *end;
		unsigned long len;

		if (slash == NULL || !isdigit((unsigned char)slash[0]))
			return cfg_fail(c, n, "\"%s\" needs a prefix length (for example /24 or /64)", s);
		len = strtoul(slash, &end, 10);
		if (*end != '\0' || len > maxlen)
			return cfg_fail(c, n, "\"%s\": prefix length must be 0..%u", s, maxlen);
		out->len = (uint8_t)len;
	} else if (slash != NULL) {
		return cfg_fail(c, n, "\"%s\": a prefix length is not allowed here", s);
	} else {
		out->len = (uint8_t)maxlen;
	}
	if (memcmp(out->ip.a, zero, out->ip.family == 4 ? 4 : 16) == 0)
		return cfg_fail(c, n, "\"%s\" is the unspecified address", s);
	if ((out->ip.family == 4 && (out->ip.a[0] & 0xf0) == 0xe0) ||
	    (out->ip.family == 6 && out->ip.a[0] == 0xff))
		return cfg_fail(c, n, "\"%s\" is a multicast address", s);
	return 0;
}

/* An empty plain value ("key:" with nothing after it). */
static bool is_null(const yaml_node_t *n)
{
	return n->type == YAML_SCALAR_NODE && n->data.scalar.length == 0 &&
	       n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

/* ---- key tables ------------------------------------------------------------------ */

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
		rc = cfg_get_uint(c, v, f->lo, f->hi, &u);
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
		return cfg_get_str(c, v, p, f->size, false);
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
int cfg_parse_map(struct ctx *c, const yaml_node_t *m, const struct field *f, unsigned nf, void *base)
{
	uint64_t seen = 0;

	if (is_null(m))
		m = NULL; /* "section:" with every key commented out */
	else if (m->type != YAML_MAPPING_NODE)
		return cfg_fail(c, m, "must be a mapping of keys, not a %s",
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
			return cfg_fail(c, k, "keys must be plain names");
		key = (const char *)k->data.scalar.value;
		for (i = 0; i < nf; i++)
			if (strcmp(f[i].key, key) == 0)
				break;
		old = cfg_push_key(c, key);
		if (i == nf) {
			char list[512] = "";
			size_t used = 0;

			for (unsigned j = 0; j < nf; j++) {
				int w = snprintf(list + used, sizeof(list) - used, "%s%s", j ? ", " : "", f[j].key);
				if (w > 0 && (size_t)w < sizeof(list) - used)
					used += (size_t)w;
			}
			rc = cfg_fail(c, k, "unknown key (expected one of: %s)", list);
			cfg_pop(c, old);
			return rc;
		}
		if (seen & (1ull << i)) {
			rc = cfg_fail(c, k, "duplicate key (first given on line %u)", cfg_line_of(c, c->path));
			cfg_pop(c, old);
			return rc;
		}
		seen |= 1ull << i;
		cfg_record_line(c, cfg_node_line(k));
		rc = parse_field(c, &f[i], v, base);
		cfg_pop(c, old);
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
			old = cfg_push_key(c, f[i].key);
			if (parent[0] != '\0' && cfg_line_of(c, parent) != 0)
				rc = cfg_fail_at(c, c->path, parent, "missing required key");
			else
				rc = cfg_fail(c, m, "missing required key");

			cfg_pop(c, old);
			return rc;
		}
	}
	return 0;
}


/* Check that @n is a list (or empty); @return its item count or -EINVAL. */
int cfg_list_len(struct ctx *c, const yaml_node_t *n)
{
	if (is_null(n))
		return 0;
	if (n->type != YAML_SEQUENCE_NODE)
		return cfg_fail(c, n, "must be a list, not a %s", n->type == YAML_SCALAR_NODE ? "scalar" : "mapping");
	return (int)(n->data.sequence.items.top - n->data.sequence.items.start);
}

const yaml_node_t *cfg_list_item(struct ctx *c, const yaml_node_t *n, int i)
{
	return yaml_document_get_node(c->doc, n->data.sequence.items.start[i]);
}
