/* fuzz_json.c - libFuzzer target for mrc__json_parse() (lib/client/json.c),
 * the parser libmrc-client runs on every reply from the daemon's control
 * socket: any bytes, not NUL-terminated. A refusal must be -EIO with a
 * one-line reason; an accepted document must be a tree over the node array
 * (every node reached once from the root, within the depth limit), its
 * strings NUL-terminated inside the string buffer, member keys exactly on
 * an object's children, and the getters must agree with the node types.
 * Too small a string buffer is refused, never overrun. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "client_internal.h"
#include "fuzz.h"

static struct mrc__jdoc doc;
static unsigned char seen[MRC__JSON_MAX_NODES];

static void check_str(const struct mrc__jdoc *d, const char *s, size_t len)
{
	CHECK(s != NULL && s >= d->sbuf && s + len < d->sbuf + d->sbuf_used);
	CHECK(s[len] == '\0');
}

/* Visit node @i (depth @depth, under a parent of type @ptype). */
static void walk(struct mrc__jdoc *d, int i, unsigned depth, int ptype)
{
	const struct mrc__jnode *n;

	CHECK(i >= 0 && (unsigned)i < d->n && !seen[i]);
	CHECK(depth <= MRC__JSON_MAX_DEPTH);
	seen[i] = 1;
	n = &d->nodes[i];
	CHECK(n->type >= MRC__J_NULL && n->type <= MRC__J_ARR);
	if (ptype == MRC__J_OBJ)
		check_str(d, n->key, strlen(n->key));
	else
		CHECK(n->key == NULL);
	if (n->type == MRC__J_STR)
		check_str(d, n->str, n->str_len);
	if (n->type == MRC__J_INT && n->neg)
		CHECK(n->mag != 0 && n->mag <= (uint64_t)INT64_MAX + 1);
	if (n->type != MRC__J_OBJ && n->type != MRC__J_ARR) {
		CHECK(n->first == -1);
		return;
	}
	for (int c = n->first; c >= 0; c = d->nodes[c].next) {
		walk(d, c, depth + 1, n->type);
		if (n->type == MRC__J_OBJ) {
			/* keys are unique: the lookup finds this very member */
			const char *key = d->nodes[c].key;
			uint64_t u;
			const char *s;
			size_t l;
			int g = mrc__json_get(d, i, key);
			int ru = mrc__json_get_u64(d, i, key, UINT64_MAX, &u);
			int rs = mrc__json_get_str(d, i, key, &s, &l);
			const struct mrc__jnode *m = &d->nodes[c];

			CHECK(g == c);
			CHECK(ru == ((m->type == MRC__J_INT && !m->neg) ? 0 : -EIO));
			CHECK(ru != 0 || u == m->mag);
			CHECK(rs == (m->type == MRC__J_STR ? 0 : -EIO));
			CHECK(rs != 0 || (s == m->str && l == m->str_len));
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* exactly @size bytes, no terminator: a read past them is an ASan report */
	char *in = malloc(size ? size : 1);
	int rc;

	CHECK(in != NULL);
	memcpy(in, data, size);
	doc.sbuf = malloc(size + 1);
	CHECK(doc.sbuf != NULL);
	doc.sbuf_cap = size + 1;
	rc = mrc__json_parse(&doc, in, size);
	CHECK(memchr(doc.err, '\0', sizeof(doc.err)) != NULL && strchr(doc.err, '\n') == NULL);
	if (rc != 0) {
		CHECK(rc == -EIO && doc.err[0] != '\0');
	} else {
		unsigned n = doc.n;

		CHECK(doc.err[0] == '\0' && n >= 1 && n <= MRC__JSON_MAX_NODES);
		CHECK(doc.sbuf_used <= doc.sbuf_cap);
		memset(seen, 0, sizeof(seen));
		walk(&doc, 0, 0, 0);
		for (unsigned i = 0; i < n; i++)
			CHECK(seen[i]);
		CHECK(doc.nodes[0].next == -1);
		CHECK(mrc__json_get(&doc, 0, "\x01no such key") == -1);
	}
	/* the same bytes again: the same verdict (the parser keeps no state) */
	CHECK(mrc__json_parse(&doc, in, size) == rc);
	free(doc.sbuf);
	/* a string buffer smaller than the input is refused up front */
	doc.sbuf = malloc(size ? size : 1);
	CHECK(doc.sbuf != NULL);
	doc.sbuf_cap = size;
	CHECK(mrc__json_parse(&doc, in, size) == -EIO);
	free(doc.sbuf);
	doc.sbuf = NULL;
	free(in);
	return 0;
}
