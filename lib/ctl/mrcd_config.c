/* mrcd_config.c - loads the daemon's YAML configuration (libyaml document
 * API) into struct mrcd_config: every key is checked against a table
 * (config_sections.c over config_yaml.c), so an unknown or duplicate key, a
 * wrong type or an out-of-range value is an error naming the file, line and
 * key path. This file: the defaults, the cross-checks between sections that
 * run after the parse, loading, and the mapping onto the engine and the frame
 * layer. Knows nothing about DPDK: the daemon turns the result into EAL
 * arguments and lib/dp's configuration. Never prints.
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
	c->control.client_mode = 0660;
	c->control.max_connections = 256;
	c->control.admin_reserved = 8;
	c->control.idle_timeout_s = 60;
	c->telemetry.enabled = true;
	/* 64 clients at their per-client defaults fit (docs/configuration.md) */
	c->limits.max_qps = 16384;
	c->limits.max_mrs = 1024;
	c->limits.max_peers = 64;
	c->limits.selftest_idle_s = 60;
	c->limits.per_client.max_qps = 64;
	c->limits.per_client.max_mrs = 8;
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

/* ---- routed next hops (ports[i].gateway, gateway6, routes) ------------------- */

static bool prefix_holds(const uint8_t *net, unsigned plen, const uint8_t *a)
{
	unsigned full = plen / 8, rest = plen % 8;

	if (memcmp(net, a, full) != 0)
		return false;
	return rest == 0 || ((net[full] ^ a[full]) & (uint8_t)(0xff << (8 - rest))) == 0;
}

static const char *ip_txt(const struct mrcp_ip *ip, char *b, size_t cap)
{
	if (inet_ntop(ip->family == 4 ? AF_INET : AF_INET6, ip->a, b, (socklen_t)cap) == NULL)
		snprintf(b, cap, "?");
	return b;
}

static const char *prefix_txt(const struct mrcd_prefix *p, char *b, size_t cap)
{
	char a[INET6_ADDRSTRLEN];

	snprintf(b, cap, "%s/%u", ip_txt(&p->ip, a, sizeof(a)), p->len);
	return b;
}

/* The network of @p: its address with the host bits cleared. */
static struct mrcd_prefix net_of(const struct mrcd_prefix *p)
{
	struct mrcd_prefix n = *p;
	unsigned nb = p->ip.family == 4 ? 4 : 16;

	for (unsigned b = p->len; b < nb * 8; b++)
		n.ip.a[b / 8] &= (uint8_t)~(0x80u >> (b % 8));
	return n;
}

/* A next hop (@a at key @path) of port @i must be a neighbour on the
 * port's link: on its subnet (IPv6: or link-local), not its own address, and
 * (IPv4, /30 and wider) not the subnet's network or broadcast address. */
static int check_next_hop(struct ctx *c, const char *path, unsigned i,
			  const struct mrcd_port_config *p, const struct mrcp_ip *a)
{
	const struct mrcd_prefix *own = a->family == 4 ? &p->ipv4 : &p->ipv6;
	const char *key = a->family == 4 ? "ipv4" : "ipv6";
	char at[INET6_ADDRSTRLEN], sub[INET6_ADDRSTRLEN + 8];
	struct mrcd_prefix net = net_of(own);
	bool ll = a->family == 6 && a->a[0] == 0xfe && (a->a[1] & 0xc0) == 0x80;

	ip_txt(a, at, sizeof(at));
	if (own->ip.family != a->family)
		return cfg_fail_at(c, path, NULL, "%s: ports[%u] has no %s address, so no subnet for a "
				   "next hop to be on", at, i, key);
	if (own->len == 0)
		return cfg_fail_at(c, path, NULL, "%s: ports[%u].%s is a /0, which puts every destination "
				   "on the link: a next hop would never be used", at, i, key);
	if (memcmp(a->a, own->ip.a, a->family == 4 ? 4 : 16) == 0)
		return cfg_fail_at(c, path, NULL, "%s is the port's own address", at);
	if (ll)
		return 0;
	if (!prefix_holds(own->ip.a, own->len, a->a))
		return cfg_fail_at(c, path, NULL, "%s is not on the port's subnet %s: a next hop must be "
				   "on the link%s", at, prefix_txt(&net, sub, sizeof(sub)),
				   a->family == 6 ? " (on the prefix, or link-local)" : "");
	if (a->family == 4 && own->len <= 30) {
		uint32_t host = ~0u >> own->len, v = ((uint32_t)a->a[0] << 24) | ((uint32_t)a->a[1] << 16) |
						    ((uint32_t)a->a[2] << 8) | a->a[3];

		if ((v & host) == 0 || (v & host) == host)
			return cfg_fail_at(c, path, NULL, "%s is the %s address of %s", at,
					   (v & host) == 0 ? "network" : "broadcast",
					   prefix_txt(&net, sub, sizeof(sub)));
	}
	return 0;
}

static int check_routes(struct ctx *c, unsigned i, const struct mrcd_port_config *p)
{
	char path[96], a[INET6_ADDRSTRLEN + 8], b[INET6_ADDRSTRLEN + 8];
	int rc;

	if (p->gateway.family == 4) {
		snprintf(path, sizeof(path), "ports[%u].gateway", i);
		if ((rc = check_next_hop(c, path, i, p, &p->gateway)) != 0)
			return rc;
	}
	if (p->gateway6.family == 6) {
		snprintf(path, sizeof(path), "ports[%u].gateway6", i);
		if ((rc = check_next_hop(c, path, i, p, &p->gateway6)) != 0)
			return rc;
	}
	for (unsigned j = 0; j < p->n_routes; j++) {
		const struct mrcd_route *r = &p->routes[j];
		const struct mrcd_prefix *own = r->prefix.ip.family == 4 ? &p->ipv4 : &p->ipv6;
		unsigned nb = r->prefix.ip.family == 4 ? 4 : 16;
		struct mrcd_prefix np = net_of(&r->prefix), onet = net_of(own);

		snprintf(path, sizeof(path), "ports[%u].routes[%u].prefix", i, j);
		if (memcmp(np.ip.a, r->prefix.ip.a, nb) != 0)
			return cfg_fail_at(c, path, NULL, "%s has bits set past the prefix length (the "
					   "network is %s)", prefix_txt(&r->prefix, a, sizeof(a)),
					   prefix_txt(&np, b, sizeof(b)));
		if (own->ip.family == r->prefix.ip.family && r->prefix.len >= own->len &&
		    prefix_holds(own->ip.a, own->len, r->prefix.ip.a))
			return cfg_fail_at(c, path, NULL, "%s is inside the port's own subnet %s, which is on "
					   "the link", prefix_txt(&r->prefix, a, sizeof(a)),
					   prefix_txt(&onet, b, sizeof(b)));
		for (unsigned k = 0; k < j; k++) {
			const struct mrcd_route *q = &p->routes[k];

			if (q->prefix.ip.family == r->prefix.ip.family && q->prefix.len == r->prefix.len &&
			    memcmp(q->prefix.ip.a, r->prefix.ip.a, nb) == 0)
				return cfg_fail_at(c, path, NULL, "duplicate route %s (also routes[%u])",
						   prefix_txt(&r->prefix, a, sizeof(a)), k);
		}
		snprintf(path, sizeof(path), "ports[%u].routes[%u].via", i, j);
		if (r->via.family != r->prefix.ip.family)
			return cfg_fail_at(c, path, NULL, "%s is IPv%u, the prefix is IPv%u",
					   ip_txt(&r->via, a, sizeof(a)), r->via.family, r->prefix.ip.family);
		if ((rc = check_next_hop(c, path, i, p, &r->via)) != 0)
			return rc;
	}
	return 0;
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
				return cfg_fail_at(c, path, NULL, "duplicate port name \"%s\" (also ports[%u])", p->name, j);
			}
			if (strcspn(q->devargs, ",") == dlen && strncmp(p->devargs, q->devargs, dlen) == 0) {
				snprintf(path, sizeof(path), "ports[%u].devargs", i);
				return cfg_fail_at(c, path, NULL, "device %.*s is already used by ports[%u]",
					       (int)dlen, p->devargs, j);
			}
		}
		snprintf(path, sizeof(path), "ports[%u]", i);
		if (p->ipv4.ip.family == 0 && p->ipv6.ip.family == 0)
			return cfg_fail_at(c, path, NULL, "needs an ipv4 or an ipv6 address");
		if (fam == 4 && p->ipv4.ip.family == 0) {
			unsigned k = 0;

			while (k < n && cfg->ports[k].ipv6.ip.family == 6)
				k++;
			snprintf(path, sizeof(path), "ports[%u].ipv4", i);
			snprintf(other, sizeof(other), "ports[%u]", i);
			return cfg_fail_at(c, path, other, "missing: ports[%u] has no ipv6 address, so every plane "
				       "runs IPv4 and needs an ipv4 address", k);
		}
	}
	for (unsigned i = 0; i < n; i++) {
		int rc = check_routes(c, i, &cfg->ports[i]);

		if (rc != 0)
			return rc;
	}
	for (unsigned i = 0; i < n; i++) {
		struct mrcd_port_config *p = &cfg->ports[i];
		unsigned need = cfg->transport.mtu + mrcd_config_frame_overhead(cfg);

		if (p->mtu == 0) {
			p->mtu = (uint16_t)need;
		} else if (p->mtu < need) {
			snprintf(path, sizeof(path), "ports[%u].mtu", i);
			return cfg_fail_at(c, path, NULL, "%u is too small for transport.mtu %u over %s "
				       "(needs at least %u)", p->mtu, cfg->transport.mtu,
				       cfg->srv6.enabled ? "SRv6" : fam == 6 ? "IPv6" : "IPv4", need);
		}
	}

	/* transport: EV counts (D41), DSCPs (D23) */
	if (cfg->transport.ev_active % n != 0)
		return cfg_fail_at(c, "transport.ev_active", "ports", "%u is not divisible by the %u ports (D41)",
			       cfg->transport.ev_active, n);
	if (cfg->transport.ev_backup % n != 0)
		return cfg_fail_at(c, "transport.ev_backup", "ports", "%u is not divisible by the %u ports (D41)",
			       cfg->transport.ev_backup, n);
	if ((unsigned)cfg->transport.ev_active + cfg->transport.ev_backup > MRCP_EV_MAX)
		return cfg_fail_at(c, "transport.ev_backup", "transport.ev_active",
			       "ev_active + ev_backup = %u is above %u",
			       (unsigned)cfg->transport.ev_active + cfg->transport.ev_backup, MRCP_EV_MAX);
	if (cfg->transport.ev_min_active > cfg->transport.ev_active)
		return cfg_fail_at(c, "transport.ev_min_active", NULL, "%u is above ev_active %u",
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
			return cfg_fail_at(c, path, "transport.dscp", "%u is also the DSCP of class %s: every "
				       "%s packet would look trimmed (D23)", cfg->transport.dscp.dscp[t], il, il);
		}
	}

	/* cc */
	if (cfg->cc.params.min_cwnd != 0 && cfg->cc.params.max_cwnd != 0 &&
	    cfg->cc.params.min_cwnd > cfg->cc.params.max_cwnd)
		return cfg_fail_at(c, "cc.nscc.min_cwnd_kb", NULL, "%llu KiB is above max_cwnd_kb %llu KiB",
			       (unsigned long long)cfg->cc.params.min_cwnd / 1024,
			       (unsigned long long)cfg->cc.params.max_cwnd / 1024);
	if (strcmp(cfg->cc.algorithm, mrcp_cc_fixed.name) != 0 && cfg->cc.params.fixed_cwnd != 0)
		return cfg_fail_at(c, "cc.fixed_cwnd_kb", NULL, "only used with algorithm: fixed");
	if (strcmp(cfg->cc.algorithm, mrcp_cc_nscc.name) != 0 && cfg_line_of(c, "cc.nscc") != 0)
		return cfg_fail_at(c, "cc.nscc", NULL, "only used with algorithm: nscc");

	/* srv6 (D8) */
	if (cfg->srv6.enabled) {
		unsigned per_plane = ((unsigned)cfg->transport.ev_active + cfg->transport.ev_backup) / n;

		if (cfg->srv6.locator.ip.family == 0)
			return cfg_fail_at(c, "srv6.locator_block", "srv6.enabled", "missing: required when srv6 is enabled");
		if (cfg->srv6.n_templates == 0)
			return cfg_fail_at(c, "srv6.templates", "srv6.enabled", "missing: required when srv6 is enabled");
		if (fam != 6) {
			for (unsigned i = 0; i < n; i++)
				if (cfg->ports[i].ipv6.ip.family != 6) {
					snprintf(path, sizeof(path), "ports[%u]", i);
					return cfg_fail_at(c, path, NULL, "needs an ipv6 address: srv6 is enabled");
				}
		}
		if (cfg->srv6.uplinks < per_plane)
			return cfg_fail_at(c, "srv6.uplinks", "srv6.enabled", "%u uplinks cannot give %u distinct EVs "
				       "per plane (ev_active + ev_backup over %u ports, D8)",
				       cfg->srv6.uplinks, per_plane, n);
	}

	/* limits */
	if (cfg->limits.per_client.max_qps > cfg->limits.max_qps)
		return cfg_fail_at(c, "limits.per_client.max_qps", "limits", "%u is above limits.max_qps %u",
			       cfg->limits.per_client.max_qps, cfg->limits.max_qps);
	if (cfg->limits.per_client.max_mrs > cfg->limits.max_mrs)
		return cfg_fail_at(c, "limits.per_client.max_mrs", "limits", "%u is above limits.max_mrs %u",
			       cfg->limits.per_client.max_mrs, cfg->limits.max_mrs);
	return 0;
}

/* ---- top level ------------------------------------------------------------------ */

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
	memset(&c, 0, sizeof(c));
	c.name = name;
	c.err = err;
	c.errlen = errlen;
	c.cfg = cfg;
	/* before libyaml builds a document: its cost grows with the square of
	 * the nesting (a 20,000-level document took seconds) */
	rc = cfg_check_depth(&c, yaml, strlen(yaml));
	if (rc != 0) {
		if (rc == -ENOMEM)
			set_err(err, errlen, "%s: out of memory", name);
		free(cfg);
		return rc;
	}
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
	c.doc = &doc;
	root = yaml_document_get_root_node(&doc);
	c.root_line = 1;
	if (root == NULL) {
		cfg_fail(&c, NULL, "the file is empty: at least a ports section is required");
	} else {
		c.root_line = cfg_node_line(root);
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
		(void)cfg_parse_root(&c, root, cfg);
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
