/* config_host.c - a loaded configuration against the machine it is to run
 * on (mrcd_config_check_host): the worker lcores must be lcores EAL will
 * create, on CPUs this process may run on, and not the main lcore. The
 * loader itself stays machine-independent (the same file loads the same way
 * everywhere); `mrcd --check` and mrcd's start run this check after it.
 * Reads EAL's core-list syntax (-l, -c, --lcores, --main-lcore) but needs no
 * DPDK: the daemon passes the lcore limit it was built with.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mrcd_config.h"

#define NBITS MRCD_HOST_MAX_CPUS

struct bits {
	uint64_t w[NBITS / 64];
};

static bool bit(const struct bits *b, unsigned i)
{
	return i < NBITS && (b->w[i / 64] >> (i % 64) & 1);
}

static void set_bit(struct bits *b, unsigned i)
{
	if (i < NBITS)
		b->w[i / 64] |= 1ull << (i % 64);
}

int mrcd_host_read(struct mrcd_host *h)
{
	cpu_set_t set;

	memset(h, 0, sizeof(*h));
	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return -errno;
	for (unsigned i = 0; i < NBITS && i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &set))
			h->cpus[i / 64] |= 1ull << (i % 64);
	return 0;
}

/* "0-1,4" for the CPUs in @h. */
static void cpus_txt(const struct mrcd_host *h, char *out, size_t cap)
{
	size_t o = 0;

	out[0] = '\0';
	for (unsigned i = 0; i < NBITS && o + 1 < cap; i++) {
		unsigned j = i;
		int n;

		if (!(h->cpus[i / 64] >> (i % 64) & 1))
			continue;
		while (j + 1 < NBITS && (h->cpus[(j + 1) / 64] >> ((j + 1) % 64) & 1))
			j++;
		n = j > i ? snprintf(out + o, cap - o, "%s%u-%u", o ? "," : "", i, j)
			  : snprintf(out + o, cap - o, "%s%u", o ? "," : "", i);
		if (n < 0 || (size_t)n >= cap - o)
			break;
		o += (size_t)n;
		i = j;
	}
	if (o == 0)
		snprintf(out, cap, "none");
}

/* ---- EAL's core lists -------------------------------------------------------------- */

/* A number at *@p (decimal), advanced past it. */
static bool num(const char **p, unsigned *out)
{
	char *end;
	unsigned long v = strtoul(*p, &end, 10);

	if (end == *p || v >= NBITS)
		return false;
	*out = (unsigned)v;
	*p = end;
	return true;
}

/* "N" or "N-M" at *@p into @b. */
static bool range(const char **p, struct bits *b)
{
	unsigned lo, hi;

	if (!num(p, &lo))
		return false;
	hi = lo;
	if (**p == '-') {
		(*p)++;
		if (!num(p, &hi) || hi < lo)
			return false;
	}
	for (unsigned i = lo; i <= hi; i++)
		set_bit(b, i);
	return true;
}

/* A set: "N", "N-M" or "(a,b-c,...)" at *@p into @b. */
static bool set(const char **p, struct bits *b)
{
	if (**p != '(')
		return range(p, b);
	(*p)++;
	for (;;) {
		if (!range(p, b))
			return false;
		if (**p == ')') {
			(*p)++;
			return true;
		}
		if (**p != ',')
			return false;
		(*p)++;
	}
}

/* The lcores a list creates and, per lcore, the CPUs it runs on. */
struct core_list {
	struct bits lcores;
	struct bits *cpus;           /* NBITS entries: cpus[lcore] */
	int main_lcore;              /* --main-lcore, or -1: the lowest lcore */
	const char *opt, *val;       /* as given, for messages */
};

/* "-l 0,2-3": lcore i on CPU i. */
static bool parse_corelist(struct core_list *l, const char *s)
{
	for (;;) {
		struct bits b = { { 0 } };

		if (!range(&s, &b))
			return false;
		for (unsigned i = 0; i < NBITS; i++)
			if (bit(&b, i)) {
				set_bit(&l->lcores, i);
				set_bit(&l->cpus[i], i);
			}
		if (*s == '\0')
			return true;
		if (*s++ != ',')
			return false;
	}
}

/* "-c 0x6": lcore i on CPU i for each bit i. */
static bool parse_coremask(struct core_list *l, const char *s)
{
	size_t n;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	n = strlen(s);
	if (n == 0)
		return false;
	for (size_t k = 0; k < n; k++) {
		char ch = s[n - 1 - k];
		unsigned v = ch >= '0' && ch <= '9' ? (unsigned)(ch - '0') :
			     ch >= 'a' && ch <= 'f' ? (unsigned)(ch - 'a' + 10) :
			     ch >= 'A' && ch <= 'F' ? (unsigned)(ch - 'A' + 10) : 16;

		if (v == 16)
			return false;
		for (unsigned b = 0; b < 4; b++)
			if (v >> b & 1) {
				unsigned i = (unsigned)(4 * k + b);

				if (i >= NBITS)
					return false;
				set_bit(&l->lcores, i);
				set_bit(&l->cpus[i], i);
			}
	}
	return true;
}

/* "--lcores 0@0,(1-2)@1,3": each lcore set on its CPU set (itself without @). */
static bool parse_lcores(struct core_list *l, const char *s)
{
	for (;;) {
		struct bits lc = { { 0 } }, cpu = { { 0 } };
		bool at = false;

		if (!set(&s, &lc))
			return false;
		if (*s == '@') {
			s++;
			if (!set(&s, &cpu))
				return false;
			at = true;
		}
		for (unsigned i = 0; i < NBITS; i++) {
			if (!bit(&lc, i))
				continue;
			set_bit(&l->lcores, i);
			if (at)
				for (unsigned k = 0; k < NBITS / 64; k++)
					l->cpus[i].w[k] |= cpu.w[k];
			else
				set_bit(&l->cpus[i], i);
		}
		if (*s == '\0')
			return true;
		if (*s++ != ',')
			return false;
	}
}

/* An option @name of @eal at *@i: "NAME VALUE", "NAME=VALUE" (long) or
 * "NAMEVALUE" (short); its value, or NULL. */
static const char *opt_val(char *const *eal, unsigned n, unsigned *i, const char *name)
{
	size_t len = strlen(name);
	const char *a = eal[*i];

	if (strncmp(a, name, len) != 0)
		return NULL;
	if (a[len] == '\0')
		return *i + 1 < n ? eal[++*i] : NULL;
	if (name[1] == '-')
		return a[len] == '=' ? a + len + 1 : NULL;
	return a + len;
}

/* Find the core list among the EAL arguments. @return 1 found and read,
 * 0 none given, -1 given but not in a form this reader knows (EAL judges). */
static int find_core_list(char *const *eal, unsigned n, struct core_list *l)
{
	int found = 0;

	l->main_lcore = -1;
	for (unsigned i = 0; i < n; i++) {
		const char *v;
		bool ok;

		if ((v = opt_val(eal, n, &i, "--main-lcore")) != NULL) {
			char *end;
			unsigned long m = strtoul(v, &end, 10);

			if (*end != '\0' || end == v || m >= NBITS)
				return -1;
			l->main_lcore = (int)m;
			continue;
		}
		if (found)
			continue;
		if ((v = opt_val(eal, n, &i, "--lcores")) != NULL) {
			l->opt = "--lcores";
			ok = parse_lcores(l, v);
		} else if ((v = opt_val(eal, n, &i, "-l")) != NULL) {
			l->opt = "-l";
			ok = parse_corelist(l, v);
		} else if ((v = opt_val(eal, n, &i, "-c")) != NULL) {
			l->opt = "-c";
			ok = parse_coremask(l, v);
		} else {
			continue;
		}
		if (!ok)
			return -1;
		l->val = v;
		found = 1;
	}
	return found;
}

/* ---- the check ------------------------------------------------------------------------ */

__attribute__((format(printf, 6, 7)))
static int fail(const char *name, const struct mrcd_config *c, int k, char *err, size_t errlen,
		const char *fmt, ...)
{
	char reason[384];
	unsigned line = k >= 0 ? c->lcores.id_lines[k] : c->lcores.id_lines[0];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	if (err != NULL && errlen > 0) {
		char path[32];

		if (k >= 0)
			snprintf(path, sizeof(path), "lcores.ids[%d]", k);
		else
			snprintf(path, sizeof(path), "lcores.ids");
		snprintf(err, errlen, "%s:%u: %s: %s", name, line ? line : 1, path, reason);
	}
	return -EINVAL;
}

int mrcd_config_check_host(const char *name, const struct mrcd_config *c, char *const *eal,
			   unsigned n_eal, const struct mrcd_host *h, char *err, size_t errlen)
{
	const struct bits *cpus = (const struct bits *)h->cpus;
	struct core_list l;
	char have[128];
	int rc;

	memset(&l, 0, sizeof(l));
	cpus_txt(h, have, sizeof(have));
	l.cpus = calloc(NBITS, sizeof(*l.cpus));
	if (l.cpus == NULL)
		return -ENOMEM;
	rc = find_core_list(eal, n_eal, &l);
	if (rc < 0) {
		rc = 0;  /* a core list EAL may still accept: EAL says at start */
		goto out;
	}
	if (rc == 0) {
		/* mrcd runs EAL with "-l 0,<ids>": lcore i on CPU i, main lcore 0 */
		rc = 0;
		for (unsigned k = 0; rc == 0 && k < c->lcores.n_ids; k++) {
			unsigned id = c->lcores.ids[k];

			if (id == 0)
				rc = fail(name, c, (int)k, err, errlen,
					  "lcore 0 is the main lcore (mrcd's control thread); workers need "
					  "other lcores, or map lcores to CPUs with --lcores in eal.args");
			else if (!bit(cpus, id))
				rc = fail(name, c, (int)k, err, errlen,
					  "lcore %u is not a CPU this process may run on (CPUs %s); with no "
					  "core list in eal.args, lcore i runs on CPU i (map them with --lcores)",
					  id, have);
		}
		if (rc == 0 && !bit(cpus, 0))
			rc = fail(name, c, -1, err, errlen,
				  "the main lcore 0 runs on CPU 0, which this process may not run on (CPUs %s): "
				  "give EAL a core list in eal.args (-l or --lcores)", have);
		goto limit;
	}
	{
		int main_lcore = l.main_lcore;

		if (main_lcore < 0)
			for (unsigned i = 0; i < NBITS && main_lcore < 0; i++)
				if (bit(&l.lcores, i))
					main_lcore = (int)i;
		rc = 0;
		for (unsigned k = 0; rc == 0 && k < c->lcores.n_ids; k++) {
			unsigned id = c->lcores.ids[k];
			bool some = false, all = true;

			for (unsigned cpu = 0; cpu < NBITS; cpu++)
				if (bit(&l.cpus[id], cpu)) {
					some = true;
					all = all && bit(cpus, cpu);
				}
			if (!bit(&l.lcores, id))
				rc = fail(name, c, (int)k, err, errlen, "lcore %u is not in the EAL core list (%s %s)",
					  id, l.opt, l.val);
			else if ((int)id == main_lcore)
				rc = fail(name, c, (int)k, err, errlen,
					  "lcore %u is the main lcore of the EAL core list (%s %s): workers need "
					  "other lcores", id, l.opt, l.val);
			else if (!some || !all)
				rc = fail(name, c, (int)k, err, errlen,
					  "lcore %u runs on a CPU this process may not run on (%s %s; CPUs %s)",
					  id, l.opt, l.val, have);
		}
		for (unsigned cpu = 0; rc == 0 && main_lcore >= 0 && cpu < NBITS; cpu++)
			if (bit(&l.cpus[main_lcore], cpu) && !bit(cpus, cpu))
				rc = fail(name, c, -1, err, errlen,
					  "the main lcore %d runs on CPU %u, which this process may not run on "
					  "(%s %s; CPUs %s)", main_lcore, cpu, l.opt, l.val, have);
	}
limit:
	for (unsigned k = 0; rc == 0 && k < c->lcores.n_ids; k++)
		if (h->max_lcores && c->lcores.ids[k] >= h->max_lcores)
			rc = fail(name, c, (int)k, err, errlen,
				  "lcore %u is above the highest lcore id this build of DPDK has (%u)",
				  c->lcores.ids[k], h->max_lcores - 1);
out:
	free(l.cpus);
	return rc;
}
