/* json.c - the strict, bounded JSON parser for mrcd's control replies:
 * objects, arrays, strings with escapes, integers, true/false/null, into a
 * fixed node array. It never allocates and never reads past the given
 * length; it knows nothing about the control envelope (ctl.c does). */
#include "client_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

struct parser {
	struct mrc__jdoc *d;
	const char *s;
	size_t len, pos;
};

__attribute__((format(printf, 2, 3), cold))
static int perr(struct parser *p, const char *fmt, ...)
{
	char *e = p->d->err;
	int n = snprintf(e, sizeof(p->d->err), "malformed reply at byte %zu: ", p->pos);
	va_list ap;

	if (n < 0 || (size_t)n >= sizeof(p->d->err))
		return -EIO;
	va_start(ap, fmt);
	vsnprintf(e + n, sizeof(p->d->err) - (size_t)n, fmt, ap);
	va_end(ap);
	return -EIO;
}

static void skip_ws(struct parser *p)
{
	while (p->pos < p->len) {
		char c = p->s[p->pos];

		if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
			break;
		p->pos++;
	}
}

static int new_node(struct parser *p, uint8_t type)
{
	struct mrc__jdoc *d = p->d;

	if (d->n >= MRC__JSON_MAX_NODES)
		return perr(p, "more than %u values", MRC__JSON_MAX_NODES);
	memset(&d->nodes[d->n], 0, sizeof(d->nodes[0]));
	d->nodes[d->n].type = type;
	d->nodes[d->n].next = -1;
	d->nodes[d->n].first = -1;
	return (int)d->n++;
}

static int hex4(struct parser *p, uint32_t *out)
{
	uint32_t v = 0;

	if (p->len - p->pos < 4)
		return perr(p, "short \\u escape");
	for (int i = 0; i < 4; i++) {
		char c = p->s[p->pos++];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (uint32_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (uint32_t)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (uint32_t)(c - 'A' + 10);
		else
			return perr(p, "bad hex digit in \\u escape");
	}
	*out = v;
	return 0;
}

static int put(struct parser *p, char c)
{
	struct mrc__jdoc *d = p->d;

	/* Decoded text is never longer than its source, so this only trips on
	 * a caller that gave a buffer smaller than the input. */
	if (d->sbuf_used >= d->sbuf_cap)
		return perr(p, "string buffer full");
	d->sbuf[d->sbuf_used++] = c;
	return 0;
}

static int put_utf8(struct parser *p, uint32_t cp)
{
	int rc = 0;

	if (cp < 0x80) {
		rc = put(p, (char)cp);
	} else if (cp < 0x800) {
		rc = put(p, (char)(0xc0 | (cp >> 6)));
		rc = rc ? rc : put(p, (char)(0x80 | (cp & 0x3f)));
	} else if (cp < 0x10000) {
		rc = put(p, (char)(0xe0 | (cp >> 12)));
		rc = rc ? rc : put(p, (char)(0x80 | ((cp >> 6) & 0x3f)));
		rc = rc ? rc : put(p, (char)(0x80 | (cp & 0x3f)));
	} else {
		rc = put(p, (char)(0xf0 | (cp >> 18)));
		rc = rc ? rc : put(p, (char)(0x80 | ((cp >> 12) & 0x3f)));
		rc = rc ? rc : put(p, (char)(0x80 | ((cp >> 6) & 0x3f)));
		rc = rc ? rc : put(p, (char)(0x80 | (cp & 0x3f)));
	}
	return rc;
}

/* At the opening quote. Decodes into sbuf; *out points at the NUL-terminated text. */
static int parse_string(struct parser *p, const char **out, size_t *out_len)
{
	size_t start = p->d->sbuf_used;
	int rc;

	p->pos++; /* the quote */
	for (;;) {
		if (p->pos >= p->len)
			return perr(p, "unterminated string");
		unsigned char c = (unsigned char)p->s[p->pos++];

		if (c == '"')
			break;
		if (c < 0x20)
			return perr(p, "raw control character 0x%02x in a string", c);
		if (c != '\\') {
			if ((rc = put(p, (char)c)) < 0)
				return rc;
			continue;
		}
		if (p->pos >= p->len)
			return perr(p, "unterminated escape");
		c = (unsigned char)p->s[p->pos++];
		switch (c) {
		case '"': case '\\': case '/':
			rc = put(p, (char)c);
			break;
		case 'b': rc = put(p, '\b'); break;
		case 'f': rc = put(p, '\f'); break;
		case 'n': rc = put(p, '\n'); break;
		case 'r': rc = put(p, '\r'); break;
		case 't': rc = put(p, '\t'); break;
		case 'u': {
			uint32_t cp, lo;

			if ((rc = hex4(p, &cp)) < 0)
				return rc;
			if (cp == 0)
				return perr(p, "\\u0000 in a string");
			if (cp >= 0xdc00 && cp <= 0xdfff)
				return perr(p, "lone low surrogate");
			if (cp >= 0xd800 && cp <= 0xdbff) {
				if (p->len - p->pos < 2 || p->s[p->pos] != '\\' || p->s[p->pos + 1] != 'u')
					return perr(p, "lone high surrogate");
				p->pos += 2;
				if ((rc = hex4(p, &lo)) < 0)
					return rc;
				if (lo < 0xdc00 || lo > 0xdfff)
					return perr(p, "bad low surrogate");
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			}
			rc = put_utf8(p, cp);
			break;
		}
		default:
			return perr(p, "bad escape \\%c", c >= 0x20 && c < 0x7f ? c : '?');
		}
		if (rc < 0)
			return rc;
	}
	if ((rc = put(p, '\0')) < 0)
		return rc;
	*out = p->d->sbuf + start;
	*out_len = p->d->sbuf_used - start - 1;
	return 0;
}

static int parse_number(struct parser *p, struct mrc__jnode *n)
{
	uint64_t mag = 0;
	size_t digits = 0;

	if (p->s[p->pos] == '-') {
		n->neg = true;
		p->pos++;
	}
	if (p->pos >= p->len || p->s[p->pos] < '0' || p->s[p->pos] > '9')
		return perr(p, "bad number");
	if (p->s[p->pos] == '0' && p->pos + 1 < p->len && p->s[p->pos + 1] >= '0' &&
	    p->s[p->pos + 1] <= '9')
		return perr(p, "leading zero in a number");
	while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9') {
		unsigned dgt = (unsigned)(p->s[p->pos] - '0');

		if (mag > (UINT64_MAX - dgt) / 10)
			return perr(p, "integer out of range");
		mag = mag * 10 + dgt;
		p->pos++;
		digits++;
	}
	if (p->pos < p->len && (p->s[p->pos] == '.' || p->s[p->pos] == 'e' || p->s[p->pos] == 'E'))
		return perr(p, "not an integer");
	if (n->neg && mag > (uint64_t)INT64_MAX + 1)
		return perr(p, "integer out of range");
	if (n->neg && mag == 0)
		n->neg = false; /* -0 is 0 */
	n->mag = mag;
	return digits ? 0 : perr(p, "bad number");
}

static int literal(struct parser *p, const char *word)
{
	size_t l = strlen(word);

	if (p->len - p->pos < l || memcmp(p->s + p->pos, word, l) != 0)
		return perr(p, "unexpected character");
	p->pos += l;
	return 0;
}

static int parse_value(struct parser *p, unsigned depth);

/* Append @child to @parent's children; @tail is the parent's last child. */
static void link_child(struct mrc__jdoc *d, int parent, int *tail, int child)
{
	if (*tail < 0)
		d->nodes[parent].first = child;
	else
		d->nodes[*tail].next = child;
	*tail = child;
}

static int parse_object(struct parser *p, int self, unsigned depth)
{
	struct mrc__jdoc *d = p->d;
	int tail = -1, rc;

	p->pos++; /* { */
	skip_ws(p);
	if (p->pos < p->len && p->s[p->pos] == '}') {
		p->pos++;
		return 0;
	}
	for (;;) {
		const char *key;
		size_t klen;

		skip_ws(p);
		if (p->pos >= p->len || p->s[p->pos] != '"')
			return perr(p, "expected a member name");
		if ((rc = parse_string(p, &key, &klen)) < 0)
			return rc;
		if (strlen(key) != klen)
			return perr(p, "NUL in a member name");
		for (int c = d->nodes[self].first; c >= 0; c = d->nodes[c].next)
			if (strcmp(d->nodes[c].key, key) == 0)
				return perr(p, "duplicate key \"%.40s\"", key);
		skip_ws(p);
		if (p->pos >= p->len || p->s[p->pos] != ':')
			return perr(p, "expected ':'");
		p->pos++;
		if ((rc = parse_value(p, depth + 1)) < 0)
			return rc;
		d->nodes[rc].key = key;
		link_child(d, self, &tail, rc);
		skip_ws(p);
		if (p->pos >= p->len)
			return perr(p, "unterminated object");
		if (p->s[p->pos] == ',') {
			p->pos++;
			continue;
		}
		if (p->s[p->pos] == '}') {
			p->pos++;
			return 0;
		}
		return perr(p, "expected ',' or '}'");
	}
}

static int parse_array(struct parser *p, int self, unsigned depth)
{
	int tail = -1, rc;

	p->pos++; /* [ */
	skip_ws(p);
	if (p->pos < p->len && p->s[p->pos] == ']') {
		p->pos++;
		return 0;
	}
	for (;;) {
		if ((rc = parse_value(p, depth + 1)) < 0)
			return rc;
		link_child(p->d, self, &tail, rc);
		skip_ws(p);
		if (p->pos >= p->len)
			return perr(p, "unterminated array");
		if (p->s[p->pos] == ',') {
			p->pos++;
			continue;
		}
		if (p->s[p->pos] == ']') {
			p->pos++;
			return 0;
		}
		return perr(p, "expected ',' or ']'");
	}
}

/* @return the new node's index, or -EIO. */
static int parse_value(struct parser *p, unsigned depth)
{
	int self, rc = 0;

	if (depth > MRC__JSON_MAX_DEPTH)
		return perr(p, "nested deeper than %u", MRC__JSON_MAX_DEPTH);
	skip_ws(p);
	if (p->pos >= p->len)
		return perr(p, "expected a value");
	switch (p->s[p->pos]) {
	case '{':
		if ((self = new_node(p, MRC__J_OBJ)) < 0)
			return self;
		rc = parse_object(p, self, depth);
		break;
	case '[':
		if ((self = new_node(p, MRC__J_ARR)) < 0)
			return self;
		rc = parse_array(p, self, depth);
		break;
	case '"':
		if ((self = new_node(p, MRC__J_STR)) < 0)
			return self;
		rc = parse_string(p, &p->d->nodes[self].str, &p->d->nodes[self].str_len);
		break;
	case 't':
	case 'f':
		if ((self = new_node(p, MRC__J_BOOL)) < 0)
			return self;
		p->d->nodes[self].b = p->s[p->pos] == 't';
		rc = literal(p, p->d->nodes[self].b ? "true" : "false");
		break;
	case 'n':
		if ((self = new_node(p, MRC__J_NULL)) < 0)
			return self;
		rc = literal(p, "null");
		break;
	default:
		if ((self = new_node(p, MRC__J_INT)) < 0)
			return self;
		rc = parse_number(p, &p->d->nodes[self]);
		break;
	}
	return rc < 0 ? rc : self;
}

int mrc__json_parse(struct mrc__jdoc *d, const char *s, size_t len)
{
	struct parser p = {.d = d, .s = s, .len = len, .pos = 0};
	int rc;

	d->n = 0;
	d->sbuf_used = 0;
	d->err[0] = '\0';
	if (d->sbuf == NULL || d->sbuf_cap < len + 1)
		return perr(&p, "reply too long for the buffer");
	rc = parse_value(&p, 0);
	if (rc < 0)
		return rc;
	skip_ws(&p);
	if (p.pos != len)
		return perr(&p, "trailing bytes after the value");
	return 0;
}

int mrc__json_get(const struct mrc__jdoc *d, int obj, const char *key)
{
	if (obj < 0 || (unsigned)obj >= d->n || d->nodes[obj].type != MRC__J_OBJ)
		return -1;
	for (int c = d->nodes[obj].first; c >= 0; c = d->nodes[c].next)
		if (strcmp(d->nodes[c].key, key) == 0)
			return c;
	return -1;
}

int mrc__json_get_u64(struct mrc__jdoc *d, int obj, const char *key, uint64_t max, uint64_t *out)
{
	int i = mrc__json_get(d, obj, key);

	if (i < 0)
		return -ENOENT;
	if (d->nodes[i].type != MRC__J_INT) {
		snprintf(d->err, sizeof(d->err), "%s: not an integer", key);
		return -EIO;
	}
	if (d->nodes[i].neg || d->nodes[i].mag > max) {
		snprintf(d->err, sizeof(d->err), "%s: %s%llu is out of range 0..%llu", key,
			 d->nodes[i].neg ? "-" : "", (unsigned long long)d->nodes[i].mag,
			 (unsigned long long)max);
		return -EIO;
	}
	*out = d->nodes[i].mag;
	return 0;
}

int mrc__json_get_str(struct mrc__jdoc *d, int obj, const char *key, const char **out, size_t *len)
{
	int i = mrc__json_get(d, obj, key);

	if (i < 0)
		return -ENOENT;
	if (d->nodes[i].type != MRC__J_STR) {
		snprintf(d->err, sizeof(d->err), "%s: not a string", key);
		return -EIO;
	}
	*out = d->nodes[i].str;
	if (len)
		*len = d->nodes[i].str_len;
	return 0;
}
