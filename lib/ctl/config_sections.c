/* config_sections.c - one parser per section of the configuration (eal,
 * ports, neighbours, lcores, transport, cc, srv6, control, telemetry,
 * limits, faults), each a key table over config_yaml.c's getters, and the
 * root that reads the ports first so that other sections may name them.
 * Cross-section checks are mrcd_config.c's.
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
#include <sys/stat.h>
#include <yaml.h>

#include "config_internal.h"
#include "mrcp_cc.h"

/* ---- sections ------------------------------------------------------------------- */

static int eal_args(struct ctx *c, const yaml_node_t *v, void *base)
{
	struct mrcd_config *cfg = base;
	int n = cfg_list_len(c, v);

	if (n < 0)
		return n;
	if (n == 0)
		return 0;
	cfg->eal.args = calloc((size_t)n, sizeof(char *));
	if (cfg->eal.args == NULL)
		return c->rc = -ENOMEM;
	for (int i = 0; i < n; i++) {
		const yaml_node_t *it = cfg_list_item(c, v, i);
		size_t old = cfg_push_idx(c, (unsigned)i);
		const char *s = cfg_scalar(c, it, "a string");

		cfg_pop(c, old);
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

	if (cfg_get_str(c, v, p->name, sizeof(p->name), false) != 0)
		return -EINVAL;
	for (const char *s = p->name; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-')
			return cfg_fail(c, v, "\"%s\": use only letters, digits, '_' and '-'", p->name);
	return 0;
}

static int port_mac(struct ctx *c, const yaml_node_t *v, void *base)
{
	struct mrcd_port_config *p = base;

	p->has_mac = true;
	return cfg_get_mac(c, v, p->mac);
}

static int port_ipv4(struct ctx *c, const yaml_node_t *v, void *base)
{
	return cfg_get_addr(c, v, 4, true, &((struct mrcd_port_config *)base)->ipv4);
}

static int port_ipv6(struct ctx *c, const yaml_node_t *v, void *base)
{
	return cfg_get_addr(c, v, 6, true, &((struct mrcd_port_config *)base)->ipv6);
}

static int port_gateway(struct ctx *c, const yaml_node_t *v, void *base)
{
	struct mrcd_prefix a;

	if (cfg_get_addr(c, v, 4, false, &a) != 0)
		return -EINVAL;
	((struct mrcd_port_config *)base)->gateway = a.ip;
	return 0;
}

static int port_gateway6(struct ctx *c, const yaml_node_t *v, void *base)
{
	struct mrcd_prefix a;

	if (cfg_get_addr(c, v, 6, false, &a) != 0)
		return -EINVAL;
	((struct mrcd_port_config *)base)->gateway6 = a.ip;
	return 0;
}

/* ports[i].routes[j]: the checks against the port's addresses are
 * mrcd_config.c's (the keys of a port come in any order). */
static int route_prefix(struct ctx *c, const yaml_node_t *v, void *base)
{
	const char *s = cfg_scalar(c, v, "an address with a /prefix");
	size_t n = s != NULL ? strlen(s) : 0;

	if (s == NULL)
		return -EINVAL;
	if (n >= 2 && strcmp(s + n - 2, "/0") == 0)
		return cfg_fail(c, v, "\"%s\" is a default route: that is the port's gateway (or gateway6)", s);
	return cfg_get_addr(c, v, 0, true, &((struct mrcd_route *)base)->prefix);
}

static int route_via(struct ctx *c, const yaml_node_t *v, void *base)
{
	struct mrcd_prefix a;

	if (cfg_get_addr(c, v, 0, false, &a) != 0)
		return -EINVAL;
	((struct mrcd_route *)base)->via = a.ip;
	return 0;
}

static int port_routes(struct ctx *c, const yaml_node_t *v, void *base)
{
	static const struct field f[] = {
		FLD_FN_REQ("prefix", route_prefix),
		FLD_FN_REQ("via", route_via),
	};
	struct mrcd_port_config *p = base;
	int n = cfg_list_len(c, v);

	if (n < 0)
		return n;
	if (n > MRCD_MAX_ROUTES)
		return cfg_fail(c, v, "%d routes given, at most %d per port", n, MRCD_MAX_ROUTES);
	for (int i = 0; i < n; i++) {
		const yaml_node_t *it = cfg_list_item(c, v, i);
		size_t old = cfg_push_idx(c, (unsigned)i);
		int rc;

		cfg_record_line(c, cfg_node_line(it));
		rc = PARSE_MAP(c, it, f, &p->routes[i]);
		cfg_pop(c, old);
		if (rc != 0)
			return rc;
		p->n_routes++;
	}
	return 0;
}

static int port_devargs(struct ctx *c, const yaml_node_t *v, void *base)
{
	struct mrcd_port_config *p = base;

	if (cfg_get_str(c, v, p->devargs, sizeof(p->devargs), false) != 0)
		return -EINVAL;
	for (const char *s = p->devargs; *s; s++)
		if (isspace((unsigned char)*s))
			return cfg_fail(c, v, "\"%s\": device arguments may not contain spaces", p->devargs);
	if (p->devargs[0] == ',')
		return cfg_fail(c, v, "\"%s\": must start with a device name", p->devargs);
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
		FLD_FN("gateway", port_gateway),
		FLD_FN("gateway6", port_gateway6),
		FLD_FN("routes", port_routes),
		FLD_UINT("mtu", struct mrcd_port_config, mtu, 576, 16128),
		FLD_UINT("speed_gbps", struct mrcd_port_config, speed_gbps, 1, 1600),
		FLD_BOOL("udp_checksum", struct mrcd_port_config, udp_checksum),
	};
	struct mrcd_config *cfg = base;
	int n = cfg_list_len(c, v);

	if (n < 0)
		return n;
	if (n == 0)
		return cfg_fail(c, v, "must list at least one port");
	if (n > MRCD_MAX_PORTS)
		return cfg_fail(c, v, "%d ports given, at most %d are supported", n, MRCD_MAX_PORTS);
	for (int i = 0; i < n; i++) {
		struct mrcd_port_config *p = &cfg->ports[i];
		const yaml_node_t *it = cfg_list_item(c, v, i);
		size_t old = cfg_push_idx(c, (unsigned)i);
		int rc;

		cfg_record_line(c, cfg_node_line(it));
		p->speed_gbps = 100;
		rc = PARSE_MAP(c, it, f, p);
		cfg_pop(c, old);
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
	return cfg_get_addr(c, v, 0, false, &((struct neigh_tmp *)base)->ip);
}

static int neigh_mac(struct ctx *c, const yaml_node_t *v, void *base)
{
	return cfg_get_mac(c, v, ((struct neigh_tmp *)base)->mac);
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
	int n = cfg_list_len(c, v);

	if (n <= 0)
		return n;
	cfg->neighbours = calloc((size_t)n, sizeof(*cfg->neighbours));
	if (cfg->neighbours == NULL)
		return c->rc = -ENOMEM;
	for (int i = 0; i < n; i++) {
		struct neigh_tmp t;
		const yaml_node_t *it = cfg_list_item(c, v, i);
		size_t old = cfg_push_idx(c, (unsigned)i);
		int rc;

		memset(&t, 0, sizeof(t));
		cfg_record_line(c, cfg_node_line(it));
		rc = PARSE_MAP(c, it, f, &t);
		if (rc == 0) {
			for (unsigned j = 0; j < cfg->n_neighbours; j++) {
				const struct mrcp_ip *o = &cfg->neighbours[j].ip;

				if (o->family == t.ip.ip.family && memcmp(o->a, t.ip.ip.a, 16) == 0) {
					rc = cfg_fail(c, it, "duplicate neighbour address (also neighbours[%u])", j);
					break;
				}
			}
		}
		cfg_pop(c, old);
		if (rc != 0)
			return rc;
		cfg->neighbours[i].ip = t.ip.ip;
		memcpy(cfg->neighbours[i].mac, t.mac, 6);
		cfg->neighbours[i].port = -1;
		if (t.port[0] != '\0') {
			size_t o2;

			cfg->neighbours[i].port = find_port(cfg, t.port);
			if (cfg->neighbours[i].port < 0) {
				o2 = cfg_push_idx(c, (unsigned)i);
				cfg_push_key(c, "port");
				rc = cfg_fail_at(c, c->path, NULL, "no port is named \"%s\"", t.port);
				cfg_pop(c, o2);
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
	int n = cfg_list_len(c, v);

	if (n < 0)
		return n;
	if (n == 0)
		return cfg_fail(c, v, "must list at least one lcore");
	if (n > MRCD_MAX_LCORES)
		return cfg_fail(c, v, "at most %d lcores", MRCD_MAX_LCORES);
	cfg->lcores.n_ids = 0; /* replaces the default */
	for (int i = 0; i < n; i++) {
		const yaml_node_t *it = cfg_list_item(c, v, i);
		size_t old = cfg_push_idx(c, (unsigned)i);
		uint64_t id;
		int rc = cfg_get_uint(c, it, 0, MRCD_LCORE_ID_MAX, &id);

		for (unsigned j = 0; rc == 0 && j < cfg->lcores.n_ids; j++)
			if (cfg->lcores.ids[j] == id)
				rc = cfg_fail(c, it, "lcore %u is listed twice", (unsigned)id);
		cfg_pop(c, old);
		if (rc != 0)
			return rc;
		cfg->lcores.id_lines[cfg->lcores.n_ids] = cfg_node_line(it);
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
	const char *s = cfg_scalar(c, v, "1024, 2048 or 4096");

	if (s == NULL)
		return -EINVAL;
	if (strcmp(s, "1024") == 0)
		cfg->transport.mtu = 1024;
	else if (strcmp(s, "2048") == 0)
		cfg->transport.mtu = 2048;
	else if (strcmp(s, "4096") == 0)
		cfg->transport.mtu = 4096;
	else
		return cfg_fail(c, v, "must be 1024, 2048 or 4096 (D3), not \"%s\"", s);
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
	return cfg_parse_map(c, v, f, MRCP_DSCP_CLASS_COUNT, cfg->transport.dscp.dscp);
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
	const char *s = cfg_scalar(c, v, "a name");
	char list[160];

	if (s == NULL)
		return -EINVAL;
	if (mrcp_cc_register_builtin(&reg) < 0)
		return cfg_fail(c, v, "the CC registry cannot be built");
	ops = mrcp_cc_find(&reg, s);
	if (ops == NULL) {
		for (unsigned i = 0; i <= reg.n; i++)
			names[i] = i < reg.n ? reg.ops[i]->name : NULL;
		cfg_names_join(names, list, sizeof(list));
		return cfg_fail(c, v, "\"%s\" is not one of %s", s, list);
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

	if (cfg_get_addr(c, v, 6, true, &cfg->srv6.locator) != 0)
		return -EINVAL;
	if (cfg->srv6.locator.len != 32)
		return cfg_fail(c, v, "must be a /32 locator block (F3216, D8)");
	return 0;
}

static int tmpl_dst(struct ctx *c, const yaml_node_t *v, void *base)
{
	return cfg_get_addr(c, v, 6, true, &((struct mrcd_srv6_template *)base)->dst);
}

static int tmpl_usids(struct ctx *c, const yaml_node_t *v, void *base)
{
	struct mrcd_srv6_template *t = base;
	int n = cfg_list_len(c, v);

	if (n < 0)
		return n;
	if (n == 0 || n > MRCD_SRV6_MAX_USIDS)
		return cfg_fail(c, v, "must list 1..%d uSIDs", MRCD_SRV6_MAX_USIDS);
	for (int i = 0; i < n; i++) {
		size_t old = cfg_push_idx(c, (unsigned)i);
		uint64_t u;
		int rc = cfg_get_uint(c, cfg_list_item(c, v, i), 0, 0xffff, &u);

		cfg_pop(c, old);
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
	int n = cfg_list_len(c, v);

	if (n <= 0)
		return n;
	cfg->srv6.templates = calloc((size_t)n, sizeof(*cfg->srv6.templates));
	if (cfg->srv6.templates == NULL)
		return c->rc = -ENOMEM;
	for (int i = 0; i < n; i++) {
		struct mrcd_srv6_template *t = &cfg->srv6.templates[i];
		const yaml_node_t *it = cfg_list_item(c, v, i);
		size_t old = cfg_push_idx(c, (unsigned)i);
		int rc;

		cfg_record_line(c, cfg_node_line(it));
		rc = PARSE_MAP(c, it, f, t);
		if (rc == 0 && t->uplink_usid >= t->n_usid) {
			size_t o2 = cfg_push_key(c, "uplink_usid");

			rc = cfg_fail_at(c, c->path, NULL, "index %u is past the %u uSIDs", t->uplink_usid, t->n_usid);
			cfg_pop(c, o2);
		}
		cfg_pop(c, old);
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

/* What is at @path, for a message: "a regular file", ... */
static const char *file_kind(mode_t m)
{
	if (S_ISREG(m))
		return "a regular file";
	if (S_ISDIR(m))
		return "a directory";
	if (S_ISLNK(m))
		return "a symbolic link";
	if (S_ISCHR(m))
		return "a character device";
	if (S_ISBLK(m))
		return "a block device";
	if (S_ISFIFO(m))
		return "a FIFO";
	return "not a socket";
}

/* The daemon replaces a stale socket at its socket paths (unlink, bind):
 * a path must be absent or a socket, never a file it would destroy. Checked
 * here, so that --check says so, and again when the socket is opened
 * (ctl_server.c). A path we may not look at (EACCES) is the opening's to
 * judge. */
static int socket_path(struct ctx *c, const yaml_node_t *v, char *p, size_t cap)
{
	struct stat st;

	if (cfg_get_str(c, v, p, cap, false) != 0)
		return -EINVAL;
	if (p[0] != '/')
		return cfg_fail(c, v, "\"%s\" must be an absolute path", p);
	if (p[strlen(p) - 1] == '/')
		return cfg_fail(c, v, "\"%s\" names a directory, not a socket", p);
	if (lstat(p, &st) == 0) {
		if (!S_ISSOCK(st.st_mode))
			return cfg_fail(c, v, "\"%s\" is %s, not a socket: refusing to replace it", p,
					file_kind(st.st_mode));
	} else if (errno == ENOTDIR || errno == ELOOP) {
		return cfg_fail(c, v, "\"%s\": %s", p, strerror(errno));
	}
	return 0;
}

static int control_socket(struct ctx *c, const yaml_node_t *v, void *base)
{
	struct mrcd_config *cfg = base;

	return socket_path(c, v, cfg->control.socket, sizeof(cfg->control.socket));
}

static int control_client_socket(struct ctx *c, const yaml_node_t *v, void *base)
{
	struct mrcd_config *cfg = base;

	return socket_path(c, v, cfg->control.client_socket, sizeof(cfg->control.client_socket));
}

/* A socket's permission bits: the owner reads and writes, nobody else
 * writes (connecting to a UNIX socket takes write permission). */
static int socket_mode(struct ctx *c, const yaml_node_t *v, uint32_t *out)
{
	const char *s = cfg_scalar(c, v, "an octal mode");
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
		return cfg_fail(c, v, "%s is out of range 0..0777", s);
	if ((m & 0600) != 0600)
		return cfg_fail(c, v, "%s: the owner needs read and write (0600)", s);
	if (m & 0002)
		return cfg_fail(c, v, "%s is world-writable (o+w): any local user could use the socket; "
				"give access with a group instead", s);
	*out = (uint32_t)m;
	return 0;
bad:
	return cfg_fail(c, v, "must be an octal mode such as 0660, not \"%s\"", s);
}

static int control_mode(struct ctx *c, const yaml_node_t *v, void *base)
{
	return socket_mode(c, v, &((struct mrcd_config *)base)->control.mode);
}

static int control_client_mode(struct ctx *c, const yaml_node_t *v, void *base)
{
	return socket_mode(c, v, &((struct mrcd_config *)base)->control.client_mode);
}

static int group_name(struct ctx *c, const yaml_node_t *v, char *g, size_t cap)
{
	if (cfg_get_str(c, v, g, cap, false) != 0)
		return -EINVAL;
	for (const char *s = g; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-' && *s != '.')
			return cfg_fail(c, v, "\"%s\" is not a group name", g);
	return 0;
}

static int control_group(struct ctx *c, const yaml_node_t *v, void *base)
{
	struct mrcd_config *cfg = base;

	return group_name(c, v, cfg->control.group, sizeof(cfg->control.group));
}

static int control_client_group(struct ctx *c, const yaml_node_t *v, void *base)
{
	struct mrcd_config *cfg = base;

	return group_name(c, v, cfg->control.client_group, sizeof(cfg->control.client_group));
}

static int sec_control(struct ctx *c, const yaml_node_t *v, void *base)
{
	static const struct field f[] = {
		FLD_FN("socket", control_socket),
		FLD_FN("mode", control_mode),
		FLD_FN("group", control_group),
		FLD_FN("client_socket", control_client_socket),
		FLD_FN("client_mode", control_client_mode),
		FLD_FN("client_group", control_client_group),
		FLD_UINT("max_connections", struct mrcd_config, control.max_connections, 4, 65536),
		FLD_UINT("admin_reserved", struct mrcd_config, control.admin_reserved, 1, 65535),
		FLD_UINT("idle_timeout_s", struct mrcd_config, control.idle_timeout_s, 1, 86400),
	};
	struct mrcd_config *cfg = base;
	int rc = PARSE_MAP(c, v, f, base);

	if (rc == 0 && strcmp(cfg->control.client_socket, cfg->control.socket) == 0)
		rc = cfg_fail_at(c, "control.client_socket", "control", "\"%s\" is control.socket too: "
				 "the client socket needs a path of its own", cfg->control.client_socket);
	if (rc == 0 && cfg->control.admin_reserved >= cfg->control.max_connections)
		rc = cfg_fail_at(c, "control.admin_reserved", "control.max_connections",
				 "%u leaves no connection for clients (control.max_connections is %u)",
				 cfg->control.admin_reserved, cfg->control.max_connections);
	return rc;
}

/* telemetry.prometheus.listen: "IPv4:port" or "[IPv6]:port", numeric only
 * (no names: nothing to resolve at start-up), port 1..65535. */
static int prom_listen(struct ctx *c, const yaml_node_t *v, void *base)
{
	static const char how[] = "give an address and a port, as 127.0.0.1:9464 or [::1]:9464";
	struct mrcd_config *cfg = base;
	char host[64];
	const char *s = cfg_scalar(c, v, "an address:port"), *colon, *port;
	unsigned long n;
	char *end;

	if (s == NULL)
		return -EINVAL;
	if (strlen(s) >= sizeof(cfg->telemetry.prometheus.listen))
		return cfg_fail(c, v, "\"%.20s...\" is too long: %s", s, how);
	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (close == NULL || close[1] != ':')
			return cfg_fail(c, v, "\"%s\": %s", s, how);
		snprintf(host, sizeof(host), "%.*s", (int)(close - s - 1), s + 1);
		if (inet_pton(AF_INET6, host, cfg->telemetry.prometheus.addr) != 1)
			return cfg_fail(c, v, "\"%s\": \"%s\" is not an IPv6 address", s, host);
		cfg->telemetry.prometheus.family = 6;
		port = close + 2;
	} else {
		colon = strrchr(s, ':');
		if (colon == NULL)
			return cfg_fail(c, v, "\"%s\" has no port: %s", s, how);
		if (memchr(s, ':', (size_t)(colon - s)) != NULL)
			return cfg_fail(c, v, "\"%s\": an IPv6 address goes in brackets, as [::1]:9464", s);
		snprintf(host, sizeof(host), "%.*s", (int)(colon - s), s);
		if (inet_pton(AF_INET, host, cfg->telemetry.prometheus.addr) != 1)
			return cfg_fail(c, v, "\"%s\": \"%s\" is not an IPv4 address (numeric only; "
					"IPv6 goes in brackets)", s, host);
		cfg->telemetry.prometheus.family = 4;
		port = colon + 1;
	}
	if (port[0] < '0' || port[0] > '9' || strlen(port) > 5)
		return cfg_fail(c, v, "\"%s\": the port must be a number 1..65535", s);
	n = strtoul(port, &end, 10);
	if (*end != '\0')
		return cfg_fail(c, v, "\"%s\": the port must be a number 1..65535", s);
	if (n < 1 || n > 65535)
		return cfg_fail(c, v, "\"%s\": port %lu is out of range 1..65535", s, n);
	cfg->telemetry.prometheus.port = (uint16_t)n;
	snprintf(cfg->telemetry.prometheus.listen, sizeof(cfg->telemetry.prometheus.listen), "%s", s);
	cfg->telemetry.prometheus.enabled = true;
	cfg->telemetry.prometheus.line = cfg_node_line(v);
	return 0;
}

static int telemetry_prometheus(struct ctx *c, const yaml_node_t *v, void *base)
{
	static const struct field f[] = {
		FLD_FN_REQ("listen", prom_listen),
	};

	return PARSE_MAP(c, v, f, base);
}

static int sec_telemetry(struct ctx *c, const yaml_node_t *v, void *base)
{
	static const struct field f[] = {
		FLD_BOOL("enabled", struct mrcd_config, telemetry.enabled),
		FLD_FN("prometheus", telemetry_prometheus),
	};

	return PARSE_MAP(c, v, f, base);
}

static int limits_per_client(struct ctx *c, const yaml_node_t *v, void *base)
{
	static const struct field f[] = {
		FLD_UINT("max_qps", struct mrcd_config, limits.per_client.max_qps, 1, 1u << 16),
		FLD_UINT("max_mrs", struct mrcd_config, limits.per_client.max_mrs, 1, MRCD_CFG_CLIENT_MRS_MAX),
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
		FLD_UINT("selftest_idle_s", struct mrcd_config, limits.selftest_idle_s, 1, 86400),
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
	int n = cfg_list_len(c, v);

	if (n <= 0)
		return n;
	cfg->faults = calloc((size_t)n, sizeof(*cfg->faults));
	if (cfg->faults == NULL)
		return c->rc = -ENOMEM;
	for (int i = 0; i < n; i++) {
		struct fault_tmp t;
		const yaml_node_t *it = cfg_list_item(c, v, i);
		size_t old = cfg_push_idx(c, (unsigned)i);
		int rc;

		memset(&t, 0, sizeof(t));
		t.f.ev_max = UINT32_MAX;
		cfg_record_line(c, cfg_node_line(it));
		rc = PARSE_MAP(c, it, f, &t);
		if (rc == 0 && t.f.ev_min > t.f.ev_max) {
			size_t o2 = cfg_push_key(c, "ev_max");

			rc = cfg_fail_at(c, c->path, NULL, "%u is below ev_min %u", t.f.ev_max, t.f.ev_min);
			cfg_pop(c, o2);
		}
		if (rc == 0) {
			t.f.port = find_port(cfg, t.port);
			if (t.f.port < 0) {
				size_t o2 = cfg_push_key(c, "port");

				rc = cfg_fail_at(c, c->path, NULL, "no port is named \"%s\"", t.port);
				cfg_pop(c, o2);
			}
		}
		cfg_pop(c, old);
		if (rc != 0)
			return rc;
		cfg->faults[i] = t.f;
		cfg->n_faults++;
	}
	return 0;
}

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
int cfg_parse_root(struct ctx *c, const yaml_node_t *root, struct mrcd_config *cfg)
{
	struct field f[sizeof(top_fields) / sizeof(top_fields[0])];
	const unsigned nf = (unsigned)(sizeof(top_fields) / sizeof(top_fields[0]));

	if (root->type != YAML_MAPPING_NODE)
		return cfg_fail(c, root, "the file must be a mapping of sections (eal, ports, ...)");
	for (yaml_node_pair_t *pr = root->data.mapping.pairs.start; pr < root->data.mapping.pairs.top; pr++) {
		const yaml_node_t *k = yaml_document_get_node(c->doc, pr->key);

		if (k->type == YAML_SCALAR_NODE && strcmp((const char *)k->data.scalar.value, "ports") == 0) {
			size_t old = cfg_push_key(c, "ports");
			int rc;

			cfg_record_line(c, cfg_node_line(k));
			rc = sec_ports(c, yaml_document_get_node(c->doc, pr->value), cfg);

			cfg_pop(c, old);
			if (rc != 0)
				return rc;
			break; /* a duplicate is reported by the full pass */
		}
	}
	memcpy(f, top_fields, sizeof(f));
	for (unsigned i = 0; i < nf; i++)
		if (strcmp(f[i].key, "ports") == 0)
			f[i].fn = skip_ports;
	return cfg_parse_map(c, root, f, nf, cfg);
}

