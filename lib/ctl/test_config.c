/* test_config.c - mrcd_config: the embedded default and every file in config/
 * load and map onto an engine that can be created; every bad config in
 * test/integration/config/ fails with -EINVAL and the message its first line
 * expects ("# expect: <substring>", file:line included); file errors carry
 * their errno. Needs libyaml and lib/core only. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mrcd_config.h"
#include "mrcp_engine.h"
#include "mrcp_test.h"

#define ASSERT_CONTAINS(hay, needle)                                           \
	do {                                                                   \
		const char *h_ = (hay), *n_ = (needle);                        \
		if (strstr(h_, n_) == NULL)                                    \
			mrcp_test_fail(__FILE__, __LINE__,                     \
				       "expected \"%s\" in \"%s\"", n_, h_);   \
	} while (0)

static char *read_text(const char *path)
{
	FILE *fp = fopen(path, "rb");
	char *buf;
	long len;

	if (fp == NULL)
		return NULL;
	fseek(fp, 0, SEEK_END);
	len = ftell(fp);
	fseek(fp, 0, SEEK_SET);
	buf = calloc(1, (size_t)len + 1);
	if (buf != NULL && fread(buf, 1, (size_t)len, fp) != (size_t)len) {
		free(buf);
		buf = NULL;
	}
	fclose(fp);
	return buf;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The sorted *.yaml names in @dir; *@n of them. Free with free_names. */
static char **yaml_files(const char *dir, unsigned *n)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **names = NULL;
	unsigned cap = 0;

	*n = 0;
	if (d == NULL)
		return NULL;
	while ((de = readdir(d)) != NULL) {
		size_t l = strlen(de->d_name);

		if (l < 6 || strcmp(de->d_name + l - 5, ".yaml") != 0)
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 64;
			names = realloc(names, cap * sizeof(*names));
		}
		names[(*n)++] = strdup(de->d_name);
	}
	closedir(d);
	if (*n > 0)
		qsort(names, *n, sizeof(*names), name_cmp);
	return names;
}

static void free_names(char **names, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

static void check_engine(const struct mrcd_config *c)
{
	struct mrcp_engine_config ec;
	struct mrcp_engine *e = NULL;

	mrcd_config_to_engine(c, &ec);
	ASSERT_EQ(0, mrcp_engine_create(&ec, &e));
	mrcp_engine_destroy(e);
}

/* ---- mrcd_config_defaults / mrcd_config_free ------------------------------- */

TEST(config, defaults__match_the_brief)
{
	struct mrcd_config c;

	mrcd_config_defaults(&c);
	ASSERT_EQ(4791, c.transport.udp_port);       /* D1 */
	ASSERT_EQ(4096, c.transport.mtu);            /* D3 */
	ASSERT_EQ(MRCP_EV_LO16_SPORT, c.transport.ev_layout); /* D4 */
	ASSERT_EQ(10, c.transport.dscp.dscp[MRCP_DSCP_CLASS_TRIMMABLE]); /* D23 */
	ASSERT_EQ(46, c.transport.dscp.dscp[MRCP_DSCP_CLASS_CONTROL]);
	ASSERT_EQ(8, c.transport.mpr);               /* D25 */
	ASSERT_EQ(128, c.transport.max_wimm);
	ASSERT_EQ(8, c.transport.timeout);           /* D32 */
	ASSERT_EQ(7, c.transport.linear_cnt);
	ASSERT_EQ(12, c.transport.exp_cnt);
	ASSERT_EQ(128, c.transport.ev_active);       /* D41 */
	ASSERT_EQ(64, c.transport.ev_backup);
	ASSERT_STREQ("nscc", c.cc.algorithm);        /* D52 */
	ASSERT_EQ(MRCD_CC_SCOPE_PEER, c.cc.scope);   /* D53 */
	ASSERT_STREQ("/run/mrcd/mrcd.sock", c.control.socket);
	ASSERT_EQ(0660, c.control.mode);
	ASSERT_EQ(256u, c.control.max_connections);
	ASSERT_EQ(8u, c.control.admin_reserved);
	ASSERT_EQ(60u, c.control.idle_timeout_s);
	ASSERT_STREQ("", c.control.client_socket);
	ASSERT_EQ(0660, c.control.client_mode);
	ASSERT_TRUE(c.telemetry.enabled);
	ASSERT_EQ(0u, c.n_ports);
	ASSERT_EQ(1u, c.lcores.n_ids);
	ASSERT_EQ(1, c.lcores.ids[0]);
	mrcd_config_free(&c);
	mrcd_config_free(&c); /* idempotent */
	mrcd_config_free(NULL);
}

/* ---- the embedded default -------------------------------------------------- */

TEST(config, default__loads_and_validates)
{
	struct mrcd_config c;
	char err[256];

	ASSERT_EQ(0, mrcd_config_load_string("(embedded)", mrcd_config_default_yaml, &c, err, sizeof(err)));
	ASSERT_STREQ("", err);
	ASSERT_EQ(1u, c.n_ports);
	ASSERT_STREQ("p0", c.ports[0].name);
	ASSERT_STREQ("net_null0,no-rx=1", c.ports[0].devargs);
	ASSERT_EQ(4, c.ports[0].ipv4.ip.family);
	ASSERT_MEMEQ(((const uint8_t[]){10, 0, 0, 1}), c.ports[0].ipv4.ip.a, 4);
	ASSERT_EQ(24, c.ports[0].ipv4.len);
	ASSERT_EQ(0, c.ports[0].ipv6.ip.family);
	ASSERT_FALSE(c.ports[0].has_mac);
	ASSERT_EQ(4096 + 72, c.ports[0].mtu);        /* derived: IPv4 + ImmDt */
	ASSERT_EQ(100u, c.ports[0].speed_gbps);
	ASSERT_EQ(1u, c.lcores.n_ids);
	ASSERT_EQ(1, c.lcores.ids[0]);
	ASSERT_EQ(MRCD_IDLE_ADAPTIVE, c.lcores.idle);
	ASSERT_EQ(6u, c.eal.n_args);
	ASSERT_STREQ("--no-huge", c.eal.args[0]);
	ASSERT_STREQ("--file-prefix", c.eal.args[4]);
	ASSERT_STREQ("mrcd", c.eal.args[5]);
	ASSERT_EQ(0u, c.n_neighbours);
	ASSERT_EQ(0u, c.n_faults);
	check_engine(&c);
	mrcd_config_free(&c);
}

/* The per-client defaults leave room for 64 clients in the totals, and the
 * limits section's new keys parse and are checked against each other. */
TEST(config, limits__room_for_64_clients)
{
	static const char y[] =
		"ports: [{name: p, devargs: net_null0, ipv4: 10.0.0.1/24}]\n"
		"limits: {max_mrs: 64, selftest_idle_s: 5, per_client: {max_mrs: 65}}\n";
	struct mrcd_config c;
	char err[256];

	ASSERT_EQ(0, mrcd_config_load_string("d", mrcd_config_default_yaml, &c, NULL, 0));
	ASSERT_TRUE(64u * c.limits.per_client.max_qps <= c.limits.max_qps);
	ASSERT_TRUE(64u * c.limits.per_client.max_mrs <= c.limits.max_mrs);
	ASSERT_TRUE(c.limits.max_qps >= 10000u);      /* the design target, one worker */
	ASSERT_EQ(60u, c.limits.selftest_idle_s);
	mrcd_config_free(&c);
	ASSERT_EQ(-EINVAL, mrcd_config_load_string("a.yaml", y, &c, err, sizeof(err)));
	ASSERT_STREQ("a.yaml:2: limits.per_client.max_mrs: 65 is above limits.max_mrs 64", err);
	mrcd_config_free(&c);
	ASSERT_EQ(0, mrcd_config_load_string("a.yaml",
		"ports: [{name: p, devargs: net_null0, ipv4: 10.0.0.1/24}]\n"
		"limits: {selftest_idle_s: 5, per_client: {max_mrs: 256}}\n", &c, err, sizeof(err)));
	ASSERT_EQ(5u, c.limits.selftest_idle_s);
	ASSERT_EQ(256u, c.limits.per_client.max_mrs);
	mrcd_config_free(&c);
	ASSERT_EQ(-EINVAL, mrcd_config_load_string("a.yaml",
		"ports: [{name: p, devargs: net_null0, ipv4: 10.0.0.1/24}]\n"
		"limits: {max_mrs: 4096, per_client: {max_mrs: 257}}\n", &c, err, sizeof(err)));
	ASSERT_STREQ("a.yaml:2: limits.per_client.max_mrs: 257 is out of range 1..256", err);
	mrcd_config_free(&c);
}

TEST(config, default__to_engine)
{
	struct mrcd_config c;
	struct mrcp_engine_config e;
	struct mrcp_frame_rx_cfg rx;

	ASSERT_EQ(0, mrcd_config_load_string("d", mrcd_config_default_yaml, &c, NULL, 0));
	mrcd_config_to_engine(&c, &e);
	ASSERT_EQ(1, e.n_ports);
	ASSERT_U64_EQ(100000000000ull, e.port_bps[0]);
	ASSERT_EQ(4, e.node_addr.family);
	ASSERT_MEMEQ(((const uint8_t[]){10, 0, 0, 1}), e.node_addr.a, 4);
	ASSERT_EQ(4, e.port_addr[0].family);
	ASSERT_EQ(4096, e.mtu);
	ASSERT_EQ(4791, e.udp_port);
	ASSERT_EQ(128, e.ev.n_active);
	ASSERT_EQ(64, e.ev.n_backup);
	ASSERT_EQ(1, e.ev.n_ports);
	ASSERT_TRUE(e.ev.ipv4);
	ASSERT_EQ(MRCP_EV_MODE_UDP, e.ev.mode);
	ASSERT_U64_EQ(12000, e.base_rtt_ns);
	ASSERT_STREQ("nscc", e.cc);
	ASSERT_FALSE(e.cc_per_qp);
	ASSERT_EQ(16384u, e.max_qps);
	mrcd_config_to_frame_rx(&c, &rx);
	ASSERT_EQ(4791, rx.udp_port);
	ASSERT_FALSE(rx.accept_alt_port);
	ASSERT_FALSE(rx.lasthop_hl_enable);
	mrcd_config_free(&c);
}

TEST(config, default__equals_config_mrcd_default_yaml)
{
	char *text = read_text(MRCD_CONFIG_DIR "/mrcd-default.yaml");

	ASSERT_TRUE(text != NULL);
	ASSERT_STREQ(mrcd_config_default_yaml, text);
	free(text);
}

/* ---- config/ ------------------------------------------------------------------ */

TEST(config, examples__every_file_loads)
{
	unsigned n;
	char **names = yaml_files(MRCD_CONFIG_DIR, &n);

	ASSERT_GE(n, 5u);
	for (unsigned i = 0; i < n; i++) {
		char path[512], err[512];
		struct mrcd_config c;
		int rc;

		snprintf(path, sizeof(path), "%s/%s", MRCD_CONFIG_DIR, names[i]);
		rc = mrcd_config_load(path, &c, err, sizeof(err));
		if (rc != 0)
			mrcp_test_fail(__FILE__, __LINE__, "%s: rc %d: %s", names[i], rc, err);
		check_engine(&c);
		mrcd_config_free(&c);
	}
	free_names(names, n);
}

TEST(config, examples__four_planes_a_and_b)
{
	static const char *const files[] = {"four-planes-memif-a.yaml", "four-planes-memif-b.yaml"};

	for (unsigned s = 0; s < 2; s++) {
		char path[512], err[512];
		struct mrcd_config c;
		struct mrcp_engine_config e;

		snprintf(path, sizeof(path), "%s/%s", MRCD_CONFIG_DIR, files[s]);
		ASSERT_EQ(0, mrcd_config_load(path, &c, err, sizeof(err)));
		ASSERT_EQ(4u, c.n_ports);
		for (unsigned p = 0; p < 4; p++) {
			const uint8_t want[4] = {10, (uint8_t)(p + 1), 0, (uint8_t)(s + 1)};

			ASSERT_MEMEQ(want, c.ports[p].ipv4.ip.a, 4);
			ASSERT_TRUE(c.ports[p].has_mac);
			ASSERT_EQ(s + 1, c.ports[p].mac[5]);
			ASSERT_TRUE(strstr(c.ports[p].devargs, s == 0 ? "role=server" : "role=client") != NULL);
			ASSERT_EQ(p, c.neighbours[p].port);
			ASSERT_EQ(2 - s, c.neighbours[p].ip.a[3]);
		}
		ASSERT_EQ(4096, c.transport.mtu);
		mrcd_config_to_engine(&c, &e);
		ASSERT_EQ(4, e.n_ports);
		ASSERT_EQ(4096, e.mtu);
		ASSERT_U64_EQ(10000000000ull, e.port_bps[3]);
		ASSERT_U64_EQ(20000, e.base_rtt_ns);
		ASSERT_MEMEQ(c.ports[0].ipv4.ip.a, e.node_addr.a, 4);
		mrcd_config_free(&c);
	}
}

TEST(config, examples__netns_runs_ipv6)
{
	struct mrcd_config c;
	struct mrcp_engine_config e;
	char err[512];

	ASSERT_EQ(0, mrcd_config_load(MRCD_CONFIG_DIR "/netns-af-packet.yaml", &c, err, sizeof(err)));
	ASSERT_EQ(6, mrcd_config_family(&c));
	ASSERT_TRUE(c.ports[0].udp_checksum);
	ASSERT_EQ(1024 + 92, c.ports[1].mtu);
	mrcd_config_to_engine(&c, &e);
	ASSERT_EQ(6, e.node_addr.family);
	ASSERT_FALSE(e.ev.ipv4);
	ASSERT_EQ(10, e.timeout);
	mrcd_config_free(&c);
}

/* ---- every key ------------------------------------------------------------------- */

static const char all_keys[] =
	"eal:\n"
	"  args: [-l, '0-2']\n"
	"ports:\n"
	"  - name: a\n"
	"    devargs: net_memif0,role=server\n"
	"    mac: 02:aa:bb:cc:dd:01\n"
	"    ipv4: 192.168.1.1/24\n"
	"    ipv6: fd00:a::1/64\n"
	"    gateway: 192.168.1.254\n"
	"    gateway6: 'fe80::1'\n"
	"    routes:\n"
	"      - {prefix: 10.20.0.0/16, via: 192.168.1.253}\n"
	"      - {prefix: 'fd00:c::/48', via: 'fd00:a::fe'}\n"
	"    mtu: 9000\n"
	"    speed_gbps: 25\n"
	"    udp_checksum: yes\n"
	"  - name: b\n"
	"    devargs: net_memif1\n"
	"    ipv6: fd00:b::1/64\n"
	"neighbours:\n"
	"  - {ip: 'fd00:a::2', mac: '02:00:00:00:00:02', port: a}\n"
	"  - {ip: 192.168.1.2, mac: '02:00:00:00:00:03'}\n"
	"lcores: {ids: [3, 1], idle: busy}\n"
	"transport:\n"
	"  udp_port: 4971\n"
	"  accept_alt_port: true\n"
	"  mtu: 1024\n"
	"  ev_layout: hi16_sport\n"
	"  ev_active: 64\n"
	"  ev_backup: 32\n"
	"  ev_min_active: 8\n"
	"  trimming_fabric: on\n"
	"  sack_every: 2\n"
	"  base_rtt_us: 7.5\n"
	"  timeout: 6\n"
	"  linear_cnt: 3\n"
	"  exp_cnt: 25\n"
	"  mpr: 16\n"
	"  max_wimm: 0x40\n"
	"  dscp: {trimmable: 20, trimmable_retx: 21, no_trim: 22, trimmed: 23, trimmed_lasthop: 24, control: 48}\n"
	"  lasthop_hop_limit: 63\n"
	"cc:\n"
	"  algorithm: nscc\n"
	"  scope: qp\n"
	"  nscc:\n"
	"    target_qdelay_us: 6\n"
	"    max_cwnd_kb: 256\n"
	"    min_cwnd_kb: 4\n"
	"    fi: 100.5\n"
	"    eta: 20\n"
	"    fi_scale: 0.25\n"
	"    gamma: 0.5\n"
	"    max_md_jump: 0.25\n"
	"    adjust_period_us: 1.5\n"
	"    adjust_bytes: 65536\n"
	"    qa_gate: 4\n"
	"    qa_threshold_us: 24\n"
	"    disable_qa: false\n"
	"    disable_pen: true\n"
	"srv6:\n"
	"  enabled: true\n"
	"  locator_block: 'fc00:1::/32'\n"
	"  uplinks: 64\n"
	"  templates:\n"
	"    - destination: 'fd00:b::/48'\n"
	"      usids: [0x100, 0x200, 0x300]\n"
	"      plane_mask: 0xf000\n"
	"      plane_shift: 12\n"
	"      uplink_usid: 1\n"
	"      uplink_mask: 0x00ff\n"
	"control: {socket: /tmp/x/mrcd.sock, mode: '0o600', group: mrc, max_connections: 1000,\n"
	"          admin_reserved: 16, idle_timeout_s: 5, client_socket: /tmp/x/client.sock,\n"
	"          client_mode: 0640, client_group: tenants}\n"
	"telemetry: {enabled: false, prometheus: {listen: '[::1]:9464'}}\n"
	"limits:\n"
	"  max_qps: 1024\n"
	"  max_mrs: 4096\n"
	"  max_peers: 16\n"
	"  per_client: {max_qps: 32, max_mem_mb: 256, max_wrs: 512}\n"
	"faults:\n"
	"  - port: b\n"
	"    ev_min: 0x10000\n"
	"    ev_max: 0x1ffff\n"
	"    direction: both\n"
	"    drop_pct: 0.5\n"
	"    blackhole: false\n"
	"    delay_us: 10\n"
	"    jitter_us: 2.5\n"
	"    reorder_pct: 1\n"
	"    duplicate_pct: 2\n"
	"    corrupt_pct: 3\n"
	"    trim_pct: 4\n"
	"    ecn_pct: 5\n";

TEST(config, all_keys__parsed_into_their_fields)
{
	struct mrcd_config c;
	char err[512];
	int rc = mrcd_config_load_string("all.yaml", all_keys, &c, err, sizeof(err));

	if (rc != 0)
		mrcp_test_fail(__FILE__, __LINE__, "rc %d: %s", rc, err);
	ASSERT_EQ(2u, c.eal.n_args);
	ASSERT_STREQ("0-2", c.eal.args[1]);
	ASSERT_EQ(2u, c.n_ports);
	ASSERT_EQ(0x01, c.ports[0].mac[5]);
	ASSERT_EQ(6, c.ports[0].ipv6.ip.family);
	ASSERT_EQ(9000, c.ports[0].mtu);
	ASSERT_EQ(25u, c.ports[0].speed_gbps);
	ASSERT_TRUE(c.ports[0].udp_checksum);
	ASSERT_EQ(4, c.ports[0].gateway.family);
	ASSERT_EQ(254, c.ports[0].gateway.a[3]);
	ASSERT_EQ(6, c.ports[0].gateway6.family);
	ASSERT_EQ(0xfe, c.ports[0].gateway6.a[0]);
	ASSERT_EQ(1, c.ports[0].gateway6.a[15]);
	ASSERT_EQ(2u, c.ports[0].n_routes);
	ASSERT_EQ(4, c.ports[0].routes[0].prefix.ip.family);
	ASSERT_EQ(16, c.ports[0].routes[0].prefix.len);
	ASSERT_EQ(20, c.ports[0].routes[0].prefix.ip.a[1]);
	ASSERT_EQ(253, c.ports[0].routes[0].via.a[3]);
	ASSERT_EQ(6, c.ports[0].routes[1].via.family);
	ASSERT_EQ(48, c.ports[0].routes[1].prefix.len);
	ASSERT_EQ(0, c.ports[1].gateway.family);
	ASSERT_EQ(0u, c.ports[1].n_routes);
	ASSERT_EQ(1024 + 132, c.ports[1].mtu);       /* SRv6 overhead */
	ASSERT_EQ(2u, c.n_neighbours);
	ASSERT_EQ(0, c.neighbours[0].port);
	ASSERT_EQ(-1, c.neighbours[1].port);
	ASSERT_EQ(4, c.neighbours[1].ip.family);
	ASSERT_EQ(2u, c.lcores.n_ids);
	ASSERT_EQ(3, c.lcores.ids[0]);
	ASSERT_EQ(MRCD_IDLE_BUSY, c.lcores.idle);
	ASSERT_EQ(4971, c.transport.udp_port);
	ASSERT_TRUE(c.transport.accept_alt_port);
	ASSERT_EQ(1024, c.transport.mtu);
	ASSERT_EQ(MRCP_EV_HI16_SPORT, c.transport.ev_layout);
	ASSERT_EQ(8, c.transport.ev_min_active);
	ASSERT_TRUE(c.transport.trimming_fabric);
	ASSERT_EQ(2, c.transport.sack_every);
	ASSERT_U64_EQ(7500, c.transport.base_rtt_ns);
	ASSERT_EQ(25, c.transport.exp_cnt);
	ASSERT_EQ(64, c.transport.max_wimm);
	ASSERT_EQ(24, c.transport.dscp.dscp[MRCP_DSCP_CLASS_TRIMMED_LASTHOP]);
	ASSERT_EQ(48, c.transport.dscp.dscp[MRCP_DSCP_CLASS_CONTROL]);
	ASSERT_EQ(63, c.transport.lasthop_hop_limit);
	ASSERT_EQ(MRCD_CC_SCOPE_QP, c.cc.scope);
	ASSERT_U64_EQ(6000, c.cc.params.target_qdelay_ns);
	ASSERT_U64_EQ(256 * 1024, c.cc.params.max_cwnd);
	ASSERT_DBL_NEAR(100.5, c.cc.params.fi, 1e-9);
	ASSERT_U64_EQ(1500, c.cc.params.adjust_period_ns);
	ASSERT_EQ(4u, c.cc.params.qa_gate);
	ASSERT_TRUE(c.cc.params.disable_pen);
	ASSERT_TRUE(c.srv6.enabled);
	ASSERT_EQ(32, c.srv6.locator.len);
	ASSERT_EQ(1u, c.srv6.n_templates);
	ASSERT_EQ(3, c.srv6.templates[0].n_usid);
	ASSERT_EQ(0x200, c.srv6.templates[0].usid[1]);
	ASSERT_EQ(12, c.srv6.templates[0].plane_shift);
	ASSERT_STREQ("/tmp/x/mrcd.sock", c.control.socket);
	ASSERT_EQ(0600, c.control.mode);
	ASSERT_STREQ("mrc", c.control.group);
	ASSERT_EQ(1000u, c.control.max_connections);
	ASSERT_EQ(16u, c.control.admin_reserved);
	ASSERT_EQ(5u, c.control.idle_timeout_s);
	ASSERT_STREQ("/tmp/x/client.sock", c.control.client_socket);
	ASSERT_EQ(0640, c.control.client_mode);
	ASSERT_STREQ("tenants", c.control.client_group);
	ASSERT_FALSE(c.telemetry.enabled);
	ASSERT_TRUE(c.telemetry.prometheus.enabled);
	ASSERT_EQ(6, c.telemetry.prometheus.family);
	ASSERT_EQ(1, c.telemetry.prometheus.addr[15]);
	ASSERT_EQ(9464, c.telemetry.prometheus.port);
	ASSERT_STREQ("[::1]:9464", c.telemetry.prometheus.listen);
	ASSERT_EQ(32u, c.limits.per_client.max_qps);
	ASSERT_EQ(1u, c.n_faults);
	ASSERT_EQ(1, c.faults[0].port);
	ASSERT_EQ(0x1ffffu, c.faults[0].ev_max);
	ASSERT_EQ(MRCD_CTL_DIR_BOTH, c.faults[0].dir);
	ASSERT_U64_EQ(2500, c.faults[0].jitter_ns);
	ASSERT_DBL_NEAR(5.0, c.faults[0].ecn_pct, 1e-9);
	mrcd_config_free(&c);
}

TEST(config, all_keys__to_engine_and_frame_rx)
{
	struct mrcd_config c;
	struct mrcp_engine_config e;
	struct mrcp_frame_rx_cfg rx;

	ASSERT_EQ(0, mrcd_config_load_string("all.yaml", all_keys, &c, NULL, 0));
	mrcd_config_to_engine(&c, &e);
	ASSERT_EQ(2, e.n_ports);
	ASSERT_U64_EQ(25000000000ull, e.port_bps[0]);
	ASSERT_U64_EQ(100000000000ull, e.port_bps[1]);
	ASSERT_EQ(6, e.node_addr.family);           /* every port has IPv6 */
	ASSERT_EQ(0xfd, e.port_addr[1].a[0]);
	ASSERT_EQ(0x0b, e.port_addr[1].a[3]);
	ASSERT_EQ(1024u, e.max_qps);
	ASSERT_EQ(16u, e.max_peers);
	ASSERT_EQ(MRCP_EV_MODE_SRV6, e.ev.mode);
	ASSERT_EQ(64, e.ev.srv6_uplinks);
	ASSERT_EQ(8, e.ev.min_active);
	ASSERT_FALSE(e.ev.ipv4);
	ASSERT_TRUE(e.ev.trimming_fabric);
	ASSERT_U64_EQ(7500, e.ev.base_rtt_ns);
	ASSERT_EQ(3, e.linear_cnt);
	ASSERT_EQ(16, e.mpr);
	ASSERT_TRUE(e.cc_per_qp);
	ASSERT_DBL_NEAR(0.5, e.cc_params.gamma, 1e-12);
	ASSERT_EQ(20, e.dscp.dscp[MRCP_DSCP_CLASS_TRIMMABLE]);
	check_engine(&c);
	mrcd_config_to_frame_rx(&c, &rx);
	ASSERT_EQ(4971, rx.udp_port);
	ASSERT_TRUE(rx.accept_alt_port);
	ASSERT_EQ(MRCP_EV_HI16_SPORT, rx.ev_layout);
	ASSERT_EQ(23, rx.dscp.dscp[MRCP_DSCP_CLASS_TRIMMED]);
	ASSERT_TRUE(rx.lasthop_hl_enable);
	ASSERT_EQ(63, rx.lasthop_hl);
	mrcd_config_free(&c);
}

TEST(config, fixed_cc__cwnd_in_bytes)
{
	static const char y[] =
		"ports: [{name: p, devargs: net_null0, ipv4: 10.0.0.1/8}]\n"
		"cc: {algorithm: fixed, fixed_cwnd_kb: 64}\n";
	struct mrcd_config c;
	struct mrcp_engine_config e;

	ASSERT_EQ(0, mrcd_config_load_string("f", y, &c, NULL, 0));
	mrcd_config_to_engine(&c, &e);
	ASSERT_STREQ("fixed", e.cc);
	ASSERT_U64_EQ(65536, e.cc_params.fixed_cwnd);
	check_engine(&c);
	mrcd_config_free(&c);
}

TEST(config, ports_after_neighbours__names_resolve)
{
	static const char y[] =
		"neighbours: [{ip: 10.0.0.2, mac: '02:00:00:00:00:09', port: q}]\n"
		"faults: [{port: q, drop_pct: 100}]\n"
		"ports: [{name: p, devargs: net_null0, ipv4: 10.0.0.1/8}, {name: q, devargs: net_null1, ipv4: 10.1.0.1/8}]\n";
	struct mrcd_config c;
	char err[256];

	ASSERT_EQ(0, mrcd_config_load_string("o", y, &c, err, sizeof(err)));
	ASSERT_EQ(1, c.neighbours[0].port);
	ASSERT_EQ(1, c.faults[0].port);
	ASSERT_U64_EQ(UINT32_MAX, c.faults[0].ev_max);
	mrcd_config_free(&c);
}

/* ---- errors ---------------------------------------------------------------------- */

TEST(config, bad__every_file_fails_with_its_message)
{
	unsigned n;
	char **names = yaml_files(MRCD_BAD_CONFIG_DIR, &n);

	unsigned bad = 0;

	ASSERT_GE(n, 30u);
	for (unsigned i = 0; i < n; i++) {
		char path[512], err[512], want[256];
		char *text, *nl;
		struct mrcd_config c;
		bool loaded;
		int rc;

		snprintf(path, sizeof(path), "%s/%s", MRCD_BAD_CONFIG_DIR, names[i]);
		text = read_text(path);
		ASSERT_TRUE(text != NULL);
		if (strncmp(text, "# expect: ", 10) != 0)
			mrcp_test_fail(__FILE__, __LINE__, "%s: the first line must be '# expect: ...'", names[i]);
		nl = strchr(text, '\n');
		ASSERT_TRUE(nl != NULL);
		snprintf(want, sizeof(want), "%.*s", (int)(nl - text - 10), text + 10);
		free(text);
		rc = mrcd_config_load(path, &c, err, sizeof(err));
		loaded = rc == 0;
		if (loaded) {
			/* a file the loader takes: the machine check `mrcd
			 * --check` runs next must refuse it */
			struct mrcd_host h;

			ASSERT_EQ(0, mrcd_host_read(&h));
			rc = mrcd_config_check_host(path, &c, c.eal.args, c.eal.n_args, &h, err, sizeof(err));
		}
		if (rc != -EINVAL || strstr(err, want) == NULL) {
			/* report every mismatch, then fail */
			fprintf(stderr, "  %s: rc %d\n    want \"%s\"\n    got  \"%s\"\n", names[i], rc, want, err);
			bad++;
		}
		/* every message names the file and a line */
		ASSERT_TRUE(strncmp(err, path, strlen(path)) == 0 && err[strlen(path)] == ':');
		if (!loaded)
			ASSERT_EQ(0u, c.n_ports); /* left at the defaults */
		mrcd_config_free(&c);
	}
	free_names(names, n);
	ASSERT_EQ(0u, bad);
}

TEST(config, load__missing_file_is_enoent)
{
	struct mrcd_config c;
	char err[256];

	ASSERT_EQ(-ENOENT, mrcd_config_load("/nonexistent/mrcd.yaml", &c, err, sizeof(err)));
	ASSERT_STREQ("/nonexistent/mrcd.yaml: cannot open: no such file", err);
	mrcd_config_free(&c);
}

TEST(config, load__directory_is_an_error)
{
	struct mrcd_config c;
	char err[256];

	ASSERT_EQ(-EISDIR, mrcd_config_load(MRCD_CONFIG_DIR, &c, err, sizeof(err)));
	ASSERT_CONTAINS(err, "is a directory");
}

TEST(config, load__unreadable_file_is_eacces)
{
	char path[] = "/tmp/mrcd-config-test-XXXXXX";
	struct mrcd_config c;
	char err[256];
	int fd = mkstemp(path);

	ASSERT_GE(fd, 0);
	close(fd);
	ASSERT_EQ(0, chmod(path, 0));
	if (geteuid() != 0) { /* root reads anything */
		ASSERT_EQ(-EACCES, mrcd_config_load(path, &c, err, sizeof(err)));
		ASSERT_CONTAINS(err, "permission denied");
	}
	unlink(path);
}

TEST(config, load__empty_file_needs_ports)
{
	struct mrcd_config c;
	char err[256];

	ASSERT_EQ(-EINVAL, mrcd_config_load_string("e.yaml", "", &c, err, sizeof(err)));
	ASSERT_STREQ("e.yaml:1: (top): the file is empty: at least a ports section is required", err);
	ASSERT_EQ(-EINVAL, mrcd_config_load_string("e.yaml", "# nothing\n", &c, err, sizeof(err)));
	ASSERT_EQ(-EINVAL, mrcd_config_load_string("e.yaml", NULL, &c, err, sizeof(err)));
}

TEST(config, load__message_is_truncated_safely)
{
	struct mrcd_config c;
	char err[8];

	memset(err, 'x', sizeof(err));
	ASSERT_EQ(-EINVAL, mrcd_config_load_string("long-name.yaml", "ports: 3\n", &c, err, sizeof(err)));
	ASSERT_EQ('\0', err[7]);
	ASSERT_EQ(-EINVAL, mrcd_config_load_string("n.yaml", "ports: 3\n", &c, NULL, 0));
	ASSERT_EQ(-EINVAL, mrcd_config_load_string(NULL, "ports: 3\n", &c, err, 0));
}

TEST(config, load__error_after_allocations_frees_them)
{
	/* eal args, neighbours and templates are allocated before the
	 * failing key; ASan's leak check covers this test */
	static const char y[] =
		"eal: {args: [a, b, c]}\n"
		"ports: [{name: p, devargs: net_null0, ipv6: 'fd00::1/64'}]\n"
		"neighbours: [{ip: 'fd00::2', mac: '02:00:00:00:00:02'}]\n"
		"srv6: {templates: [{destination: 'fd00::/16', usids: [1]}]}\n"
		"faults: [{port: p}]\n"
		"limits: {max_qps: 0}\n";
	struct mrcd_config c;
	char err[256];

	ASSERT_EQ(-EINVAL, mrcd_config_load_string("a.yaml", y, &c, err, sizeof(err)));
	ASSERT_STREQ("a.yaml:6: limits.max_qps: 0 is out of range 1..65536", err);
	ASSERT_TRUE(c.eal.args == NULL);
	mrcd_config_free(&c);
}

TEST(config, load__second_document_is_an_error)
{
	struct mrcd_config c;
	char err[256];

	ASSERT_EQ(-EINVAL, mrcd_config_load_string("two.yaml",
		"ports: [{name: p, devargs: net_null0, ipv4: 10.0.0.1/8}]\n---\nports: []\n",
		&c, err, sizeof(err)));
	ASSERT_CONTAINS(err, "two.yaml:2: (top): a second YAML document");
}

TEST(config, load__message_echoing_a_control_character_stays_one_line)
{
	struct mrcd_config c;
	char err[256];

	/* a double-quoted scalar may hold a newline and a tab; the reason
	 * echoes the value, escaped */
	ASSERT_EQ(-EINVAL, mrcd_config_load_string("nl.yaml",
		"lcores: {idle: \"a\\nb\\tc\\x01\"}\n", &c, err, sizeof(err)));
	ASSERT_TRUE(strchr(err, '\n') == NULL);
	ASSERT_CONTAINS(err, "nl.yaml:1: lcores.idle: \"a\\nb\\tc\\x01\" is not one of");
	mrcd_config_free(&c);
}

TEST(config, load__anchors_and_aliases_work)
{
	static const char y[] =
		"ports:\n"
		"  - &p {name: p, devargs: net_null0, ipv4: 10.0.0.1/8}\n"
		"neighbours: [{ip: 10.0.0.2, mac: &m '02:00:00:00:00:02'}, {ip: 10.0.0.3, mac: *m}]\n";
	struct mrcd_config c;
	char err[256];

	ASSERT_EQ(0, mrcd_config_load_string("al", y, &c, err, sizeof(err)));
	ASSERT_EQ(2, c.neighbours[1].mac[5]);
	mrcd_config_free(&c);
}

TEST(config, load__empty_sections_are_allowed)
{
	static const char y[] =
		"eal:\n"
		"ports: [{name: p, devargs: net_null0, ipv4: 10.0.0.1/8}]\n"
		"neighbours:\n"
		"transport:\n"
		"  # every key commented out\n"
		"telemetry:\n"
		"faults:\n";
	struct mrcd_config c;
	char err[256];

	ASSERT_EQ(0, mrcd_config_load_string("n", y, &c, err, sizeof(err)));
	ASSERT_EQ(0u, c.eal.n_args);
	ASSERT_EQ(4096, c.transport.mtu);
	ASSERT_TRUE(c.telemetry.enabled);
	mrcd_config_free(&c);
	ASSERT_EQ(-EINVAL, mrcd_config_load_string("n", "ports:\n", &c, err, sizeof(err)));
	ASSERT_STREQ("n:1: ports: must list at least one port", err);
}

TEST(config, telemetry_prometheus__off_by_default_and_ipv4_parsed)
{
	static const char y[] =
		"ports: [{name: p, devargs: net_null0, ipv4: 10.0.0.1/8}]\n"
		"telemetry:\n"
		"  prometheus:\n"
		"    listen: 127.0.0.1:65535\n";
	struct mrcd_config c;
	char err[256];

	ASSERT_EQ(0, mrcd_config_load_string("n", "ports: [{name: p, devargs: net_null0, ipv4: 10.0.0.1/8}]\n",
					     &c, err, sizeof(err)));
	ASSERT_FALSE(c.telemetry.prometheus.enabled);
	mrcd_config_free(&c);
	ASSERT_EQ(0, mrcd_config_load_string("n", y, &c, err, sizeof(err)));
	ASSERT_TRUE(c.telemetry.prometheus.enabled);
	ASSERT_EQ(4, c.telemetry.prometheus.family);
	ASSERT_EQ(127, c.telemetry.prometheus.addr[0]);
	ASSERT_EQ(1, c.telemetry.prometheus.addr[3]);
	ASSERT_EQ(65535, c.telemetry.prometheus.port);
	ASSERT_EQ(4u, c.telemetry.prometheus.line);
	mrcd_config_free(&c);
}

/* ---- nesting depth ----------------------------------------------------------------- */

/* "ports: " + @n "[" + @n "]" */
static char *nested(unsigned n)
{
	char *y = malloc(2 * n + 16);

	strcpy(y, "ports: ");
	memset(y + 7, '[', n);
	memset(y + 7 + n, ']', n);
	strcpy(y + 7 + 2 * n, "\n");
	return y;
}

TEST(config, depth__the_limit_itself_passes_the_scan)
{
	/* the root mapping is level 1: "ports: [[...]]" with 31 lists is 32 */
	char *y = nested(MRCD_CONFIG_MAX_DEPTH - 1);
	struct mrcd_config c;
	char err[512];

	ASSERT_EQ(-EINVAL, mrcd_config_load_string("d.yaml", y, &c, err, sizeof(err)));
	ASSERT_CONTAINS(err, "d.yaml:1: ports[0]: must be a mapping"); /* the schema's error, not the scan's */
	free(y);
}

TEST(config, depth__one_level_more_is_refused_with_its_path)
{
	char *y = nested(MRCD_CONFIG_MAX_DEPTH);
	struct mrcd_config c;
	char err[512], want[256];

	ASSERT_EQ(-EINVAL, mrcd_config_load_string("d.yaml", y, &c, err, sizeof(err)));
	strcpy(want, "d.yaml:1: ports");
	for (unsigned i = 0; i < MRCD_CONFIG_MAX_DEPTH - 1; i++)
		strcat(want, "[0]");
	strcat(want, ": nesting deeper than 32 levels");
	ASSERT_STREQ(want, err);
	ASSERT_EQ(0u, c.n_ports);
	free(y);
}

TEST(config, depth__block_mappings_name_the_key_line)
{
	char y[4096] = "ports: [{name: p, devargs: net_null0, ipv4: 10.0.0.1/8}]\nx:\n";
	struct mrcd_config c;
	char err[512];

	for (unsigned i = 0; i < 40; i++) {
		size_t o = strlen(y);

		snprintf(y + o, sizeof(y) - o, "%*sk%u:\n", (int)(2 * (i + 1)), "", i);
	}
	ASSERT_EQ(-EINVAL, mrcd_config_load_string("b.yaml", y, &c, err, sizeof(err)));
	/* x is level 2, x.k0 level 3, ... x.k29 level 32: k30 opens level 33 */
	ASSERT_CONTAINS(err, "b.yaml:33: x.k0.k1.k2.");
	ASSERT_CONTAINS(err, ".k29.k30: nesting deeper than 32 levels");
}

TEST(config, depth__a_deep_document_is_refused_before_it_is_built)
{
	/* libyaml's document loader needs seconds for 20,000 levels and
	 * more than a minute for 100,000: the scan stops at level 33 (the
	 * unit suite's timeout is the bound) */
	char *y = nested(100000);
	struct mrcd_config c;
	char err[512];

	ASSERT_EQ(-EINVAL, mrcd_config_load_string("deep.yaml", y, &c, err, sizeof(err)));
	ASSERT_CONTAINS(err, "deep.yaml:1: ports[0][0]");
	ASSERT_CONTAINS(err, ": nesting deeper than 32 levels");
	free(y);
}

TEST(config, depth__keys_and_aliases_keep_the_path)
{
	static const char y[] =
		"a: &x [1, 2]\n"
		"b: *x\n"
		"? [complex, key]\n"
		": 1\n"
		"ports: [{name: p, devargs: net_null0, ipv4: 10.0.0.1/8, q: [1, [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}]\n";
	struct mrcd_config c;
	char err[512];

	ASSERT_EQ(-EINVAL, mrcd_config_load_string("k.yaml", y, &c, err, sizeof(err)));
	ASSERT_CONTAINS(err, "k.yaml:5: ports[0].q[1][0]");
	ASSERT_CONTAINS(err, "[0]: nesting deeper than 32 levels");
}

TEST(config, depth__a_syntax_error_is_still_libyamls)
{
	struct mrcd_config c;
	char err[512];

	ASSERT_EQ(-EINVAL, mrcd_config_load_string("s.yaml", "ports: [[\n\t", &c, err, sizeof(err)));
	ASSERT_CONTAINS(err, "s.yaml:");
	ASSERT_CONTAINS(err, ": yaml: ");
}

/* ---- mrcd_config_check_host ----------------------------------------------------------- */

static void host_of(struct mrcd_host *h, const unsigned *cpus, unsigned n)
{
	memset(h, 0, sizeof(*h));
	for (unsigned i = 0; i < n; i++)
		h->cpus[cpus[i] / 64] |= 1ull << (cpus[i] % 64);
}

/* @ids on @lines, loaded from a tiny config with eal.args @eal (NULL: none). */
static void lcores_cfg(struct mrcd_config *c, const char *ids, const char *eal)
{
	char y[512], err[256];

	snprintf(y, sizeof(y), "%s%s%sports: [{name: p, devargs: net_null0, ipv4: 10.0.0.1/8}]\n"
		 "lcores:\n  ids: %s\n", eal ? "eal: {args: " : "", eal ? eal : "", eal ? "}\n" : "", ids);
	if (mrcd_config_load_string("h.yaml", y, c, err, sizeof(err)) != 0)
		mrcp_test_fail(__FILE__, __LINE__, "%s", err);
}

static int host_check(const struct mrcd_config *c, const struct mrcd_host *h, char *err, size_t len)
{
	return mrcd_config_check_host("h.yaml", c, c->eal.args, c->eal.n_args, h, err, len);
}

TEST(config, check_host__default_core_list_is_cpu_per_lcore)
{
	static const unsigned two[] = { 0, 1 }, four[] = { 0, 1, 2, 3 }, not0[] = { 1, 2 };
	struct mrcd_config c;
	struct mrcd_host h;
	char err[512];

	host_of(&h, two, 2);
	lcores_cfg(&c, "[1]", NULL);
	ASSERT_EQ(0, host_check(&c, &h, err, sizeof(err)));
	mrcd_config_free(&c);

	lcores_cfg(&c, "[1, 3]", NULL);
	ASSERT_EQ(-EINVAL, host_check(&c, &h, err, sizeof(err)));
	ASSERT_STREQ("h.yaml:3: lcores.ids[1]: lcore 3 is not a CPU this process may run on (CPUs 0-1); "
		     "with no core list in eal.args, lcore i runs on CPU i (map them with --lcores)", err);
	host_of(&h, four, 4);
	ASSERT_EQ(0, host_check(&c, &h, err, sizeof(err)));
	mrcd_config_free(&c);

	lcores_cfg(&c, "[2, 0]", NULL);
	ASSERT_EQ(-EINVAL, host_check(&c, &h, err, sizeof(err)));
	ASSERT_CONTAINS(err, "h.yaml:3: lcores.ids[1]: lcore 0 is the main lcore (mrcd's control thread)");
	mrcd_config_free(&c);

	/* CPU 0 is not ours: the main lcore cannot run */
	host_of(&h, not0, 2);
	lcores_cfg(&c, "[1]", NULL);
	ASSERT_EQ(-EINVAL, host_check(&c, &h, err, sizeof(err)));
	ASSERT_STREQ("h.yaml:3: lcores.ids: the main lcore 0 runs on CPU 0, which this process may not run "
		     "on (CPUs 1-2): give EAL a core list in eal.args (-l or --lcores)", err);
	mrcd_config_free(&c);
}

TEST(config, check_host__dpdk_lcore_limit)
{
	static const unsigned cpus[] = { 0, 1, 200 };
	struct mrcd_config c;
	struct mrcd_host h;
	char err[512];

	host_of(&h, cpus, 3);
	h.max_lcores = 128;
	lcores_cfg(&c, "[1, 200]", NULL);
	ASSERT_EQ(-EINVAL, host_check(&c, &h, err, sizeof(err)));
	ASSERT_STREQ("h.yaml:3: lcores.ids[1]: lcore 200 is above the highest lcore id this build of DPDK "
		     "has (127)", err);
	h.max_lcores = 0;
	ASSERT_EQ(0, host_check(&c, &h, err, sizeof(err)));
	mrcd_config_free(&c);
}

TEST(config, check_host__eal_lcores_maps_lcores_to_cpus)
{
	static const unsigned two[] = { 0, 1 };
	struct mrcd_config c;
	struct mrcd_host h;
	char err[512];

	host_of(&h, two, 2);
	/* workers.sh's mapping: three lcores on two CPUs */
	lcores_cfg(&c, "[1, 2]", "['--lcores', '0@0,1@1,2@0']");
	ASSERT_EQ(0, host_check(&c, &h, err, sizeof(err)));
	mrcd_config_free(&c);
	lcores_cfg(&c, "[1, 3]", "['--lcores=0@0,(1-2)@1']");
	ASSERT_EQ(-EINVAL, host_check(&c, &h, err, sizeof(err)));
	ASSERT_STREQ("h.yaml:4: lcores.ids[1]: lcore 3 is not in the EAL core list (--lcores 0@0,(1-2)@1)", err);
	mrcd_config_free(&c);
	lcores_cfg(&c, "[1]", "['--lcores', '0@0,1@(0,5)']");
	ASSERT_EQ(-EINVAL, host_check(&c, &h, err, sizeof(err)));
	ASSERT_STREQ("h.yaml:4: lcores.ids[0]: lcore 1 runs on a CPU this process may not run on "
		     "(--lcores 0@0,1@(0,5); CPUs 0-1)", err);
	mrcd_config_free(&c);
	/* the lowest lcore is the main one unless --main-lcore says */
	lcores_cfg(&c, "[3]", "['--lcores', '3@0,4@1']");
	ASSERT_EQ(-EINVAL, host_check(&c, &h, err, sizeof(err)));
	ASSERT_CONTAINS(err, "lcores.ids[0]: lcore 3 is the main lcore of the EAL core list (--lcores 3@0,4@1)");
	mrcd_config_free(&c);
	lcores_cfg(&c, "[3]", "['--lcores', '3@0,4@1', '--main-lcore', '4']");
	ASSERT_EQ(0, host_check(&c, &h, err, sizeof(err)));
	mrcd_config_free(&c);
	lcores_cfg(&c, "[3]", "['--lcores', '3@0,4@7', '--main-lcore=4']");
	ASSERT_EQ(-EINVAL, host_check(&c, &h, err, sizeof(err)));
	ASSERT_CONTAINS(err, "lcores.ids: the main lcore 4 runs on CPU 7, which this process may not run on");
	mrcd_config_free(&c);
}

TEST(config, check_host__eal_l_and_c)
{
	static const unsigned three[] = { 0, 1, 2 };
	struct mrcd_config c;
	struct mrcd_host h;
	char err[512];

	host_of(&h, three, 3);
	lcores_cfg(&c, "[2]", "['-l', '1-2']");
	ASSERT_EQ(0, host_check(&c, &h, err, sizeof(err)));
	mrcd_config_free(&c);
	lcores_cfg(&c, "[1]", "['-l1-2']");
	ASSERT_EQ(-EINVAL, host_check(&c, &h, err, sizeof(err)));
	ASSERT_CONTAINS(err, "lcore 1 is the main lcore of the EAL core list (-l 1-2)");
	mrcd_config_free(&c);
	lcores_cfg(&c, "[2]", "['-c', '0x5']");
	ASSERT_EQ(0, host_check(&c, &h, err, sizeof(err)));
	mrcd_config_free(&c);
	lcores_cfg(&c, "[1]", "['-c', '0x5']");
	ASSERT_EQ(-EINVAL, host_check(&c, &h, err, sizeof(err)));
	ASSERT_CONTAINS(err, "lcore 1 is not in the EAL core list (-c 0x5)");
	mrcd_config_free(&c);
	lcores_cfg(&c, "[9]", "['-c', '0x201']");
	ASSERT_EQ(-EINVAL, host_check(&c, &h, err, sizeof(err)));
	ASSERT_CONTAINS(err, "lcore 9 runs on a CPU this process may not run on (-c 0x201; CPUs 0-2)");
	mrcd_config_free(&c);
	/* a list this reader does not follow is EAL's to judge */
	lcores_cfg(&c, "[9]", "['--lcores', '0@0,9@x']");
	ASSERT_EQ(0, host_check(&c, &h, err, sizeof(err)));
	mrcd_config_free(&c);
}

TEST(config, check_host__reads_this_machine)
{
	struct mrcd_host h;
	unsigned n = 0;

	ASSERT_EQ(0, mrcd_host_read(&h));
	for (unsigned i = 0; i < MRCD_HOST_MAX_CPUS / 64; i++)
		n += (unsigned)__builtin_popcountll(h.cpus[i]);
	ASSERT_GE(n, 1u);
	ASSERT_EQ(0u, h.max_lcores);
}
