/* mrcctl_print.c - key=value arguments to JSON values, and replies as
 * aligned text, tables or JSON (mrcctl.h, docs/control.md "Output"). */
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

/* ---- value conversion and output ----------------------------------------- */

/* key=value: true/false, integers (decimal or 0x hex), decimals, "quoted"
 * strings, anything else a string. */
json_t *value_convert(const char *s)
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

char *xstrdup(const char *s)
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

void print_human(const json_t *res)
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

void print_json(const json_t *v)
{
	char *s = json_dumps(v, JSON_INDENT(2) | JSON_ENCODE_ANY);

	if (s != NULL)
		printf("%s\n", s);
	free(s);
}

