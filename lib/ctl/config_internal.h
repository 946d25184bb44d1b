/* config_internal.h - what the files of the configuration loader share
 * (mrcd_config.c: defaults, validation, loading, mapping; config_sections.c:
 * one parser per section; config_yaml.c: the YAML machinery they stand on,
 * a parse context with the key path and line of every key, typed scalar
 * getters and key tables). Not part of lib/ctl's API.
 */
#ifndef MRCD_CONFIG_INTERNAL_H
#define MRCD_CONFIG_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

#include "mrcd_config.h"

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


#define PARSE_MAP(c, m, tbl, base) cfg_parse_map(c, m, tbl, (unsigned)(sizeof(tbl) / sizeof(tbl[0])), base)

/* ---- config_yaml.c ---- */

/** The 1-based line of @n (1 for NULL). */
unsigned cfg_node_line(const yaml_node_t *n);
/** An error at node @n about the current key path; only the first error of
 *  a load is reported. @return -EINVAL. */
int cfg_fail(struct ctx *c, const yaml_node_t *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/** An error on @line about the current key path. @return -EINVAL. */
int cfg_fail_line(struct ctx *c, unsigned line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/** An error about @path at the line where it was configured (or, if it was
 *  not, where @fallback was, or line 1). @return -EINVAL. */
int cfg_fail_at(struct ctx *c, const char *path, const char *fallback, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/** The line @path was configured on, or 0. */
unsigned cfg_line_of(const struct ctx *c, const char *path);
/** Remember that the current key path was seen on @line. */
void cfg_record_line(struct ctx *c, unsigned line);
/** Extend the key path with ".@key" / "[@i]"; @return what cfg_pop() restores. */
size_t cfg_push_key(struct ctx *c, const char *key);
size_t cfg_push_idx(struct ctx *c, unsigned i);
void cfg_pop(struct ctx *c, size_t old);
/** The text of scalar @n, or NULL after an error naming @what was expected. */
const char *cfg_scalar(struct ctx *c, const yaml_node_t *n, const char *what);
/** Typed values; each @return 0 or -EINVAL (reported). */
int cfg_get_uint(struct ctx *c, const yaml_node_t *n, uint64_t lo, uint64_t hi, uint64_t *out);
int cfg_get_str(struct ctx *c, const yaml_node_t *n, char *buf, size_t cap, bool empty_ok);
int cfg_get_mac(struct ctx *c, const yaml_node_t *n, uint8_t mac[6]);
int cfg_get_addr(struct ctx *c, const yaml_node_t *n, int family, bool want_prefix,
		 struct mrcd_prefix *out);
/** "a, b or c" from the NULL-terminated @names. */
void cfg_names_join(const char *const *names, char *list, size_t cap);
/** Parse mapping @m against the key table @f (unknown, duplicate, missing
 *  required keys are errors), storing into @base. @return 0 or -EINVAL. */
int cfg_parse_map(struct ctx *c, const yaml_node_t *m, const struct field *f, unsigned nf, void *base);
/** Refuse a document nested deeper than MRCD_CONFIG_MAX_DEPTH levels of
 *  mappings and lists, from libyaml's events, before a document is built:
 *  the error names the line and key path where the level too many opens,
 *  and nothing deeper is parsed. A syntax error ends the scan quietly (the
 *  loader reports it). @return 0, -EINVAL (reported), -ENOMEM. */
int cfg_check_depth(struct ctx *c, const char *yaml, size_t len);
/** The length of list @n (an error if it is not a list), or -EINVAL. */
int cfg_list_len(struct ctx *c, const yaml_node_t *n);
const yaml_node_t *cfg_list_item(struct ctx *c, const yaml_node_t *n, int i);

/* ---- config_sections.c ---- */

/** Parse the document's root mapping, every section, into @cfg. */
int cfg_parse_root(struct ctx *c, const yaml_node_t *root, struct mrcd_config *cfg);

#endif
