/* test_config_dp.c - config_dp.c: a loaded configuration becomes the
 * datapath's struct mrcd_dp_config field by field (ports, lcores, family,
 * engine and frame settings, neighbours, SRv6 rows, fault rules in ns and
 * the fault stage's directions, per-client limits), and every shipped
 * config/ file maps, its memif sockets files (not abstract); port_files.c:
 * memif devargs read as DPDK reads them, a socket's directory made, a
 * stale socket replaced and anything else at its path refused. Needs
 * libyaml and lib/core only (no DPDK). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "config_dp.h"
#include "mrcp_test.h"
#include "port_files.h"

static const char two_ports[] =
	"ports:\n"
	"  - name: a\n"
	"    devargs: net_memif0,role=server\n"
	"    mac: 02:aa:bb:cc:dd:01\n"
	"    ipv6: fd00:a::1/64\n"
	"    gateway6: 'fe80::fe'\n"
	"    routes: [{prefix: 'fd00:c::/48', via: 'fd00:a::fd'}]\n"
	"    mtu: 9000\n"
	"    speed_gbps: 25\n"
	"    udp_checksum: yes\n"
	"  - name: b\n"
	"    devargs: net_memif1\n"
	"    ipv6: fd00:b::1/64\n"
	"neighbours:\n"
	"  - {ip: 'fd00:a::2', mac: '02:00:00:00:00:02', port: b}\n"
	"  - {ip: 'fd00:a::3', mac: '02:00:00:00:00:03'}\n"
	"lcores: {ids: [3, 1], idle: busy}\n"
	"transport: {udp_port: 4971, ev_layout: hi16_sport, mtu: 1024}\n"
	"limits:\n"
	"  per_client: {max_qps: 32, max_mem_mb: 256, max_wrs: 512}\n"
	"srv6:\n"
	"  enabled: true\n"
	"  locator_block: 'fc00:1::/32'\n"
	"  uplinks: 256\n"
	"  templates:\n"
	"    - destination: 'fd00:b::/48'\n"
	"      usids: [0x100, 0x200, 0x300]\n"
	"      plane_mask: 0xf000\n"
	"      plane_shift: 12\n"
	"      uplink_usid: 1\n"
	"      uplink_mask: 0x00ff\n"
	"faults:\n"
	"  - {port: b, ev_min: 16, ev_max: 31, direction: rx, delay_us: 10, jitter_us: 2.5, drop_pct: 0.5}\n"
	"  - {port: a, direction: both, blackhole: true}\n"
	"  - {port: a, ecn_pct: 5}\n";

static void load(const char *yaml, struct mrcd_config *c, struct mrcd_dp_config *d, uint64_t seed)
{
	char err[512];
	int rc = mrcd_config_load_string("t.yaml", yaml, c, err, sizeof(err));

	if (rc != 0)
		mrcp_test_fail(__FILE__, __LINE__, "load: %d: %s", rc, err);
	rc = mrcd_config_to_dp(c, seed, d, err, sizeof(err));
	if (rc != 0)
		mrcp_test_fail(__FILE__, __LINE__, "to_dp: %d: %s", rc, err);
}

TEST(config_dp, ports_lcores_family)
{
	struct mrcd_config c;
	struct mrcd_dp_config d;

	load(two_ports, &c, &d, 0x5eed);
	ASSERT_EQ(2u, d.n_ports);
	ASSERT_STREQ("a", d.ports[0].name);
	ASSERT_STREQ("net_memif0,role=server", d.ports[0].devargs);
	ASSERT_TRUE(d.ports[0].has_mac);
	ASSERT_EQ(0x01, d.ports[0].mac[5]);
	ASSERT_EQ(0, d.ports[0].ipv4.ip.family);
	ASSERT_EQ(6, d.ports[0].ipv6.ip.family);
	ASSERT_EQ(64, d.ports[0].ipv6.len);
	ASSERT_MEMEQ(c.ports[0].ipv6.ip.a, d.ports[0].ipv6.ip.a, 16);
	ASSERT_EQ(9000, d.ports[0].mtu);
	ASSERT_TRUE(d.ports[0].udp_checksum);
	ASSERT_FALSE(d.ports[1].has_mac);
	ASSERT_EQ(c.ports[1].mtu, d.ports[1].mtu);
	ASSERT_EQ(0, d.ports[0].gw4.family);
	ASSERT_EQ(6, d.ports[0].gw6.family);
	ASSERT_MEMEQ(c.ports[0].gateway6.a, d.ports[0].gw6.a, 16);
	ASSERT_EQ(1u, d.ports[0].n_routes);
	ASSERT_EQ(6, d.ports[0].routes[0].prefix.ip.family);
	ASSERT_EQ(48, d.ports[0].routes[0].prefix.len);
	ASSERT_MEMEQ(c.ports[0].routes[0].prefix.ip.a, d.ports[0].routes[0].prefix.ip.a, 16);
	ASSERT_MEMEQ(c.ports[0].routes[0].via.a, d.ports[0].routes[0].via.a, 16);
	ASSERT_EQ(0, d.ports[1].gw4.family); /* port b: every destination on the link */
	ASSERT_EQ(0, d.ports[1].gw6.family);
	ASSERT_EQ(0u, d.ports[1].n_routes);
	ASSERT_EQ(2u, d.n_workers);
	ASSERT_EQ(3, d.lcores[0]);
	ASSERT_EQ(1, d.lcores[1]);
	ASSERT_TRUE(d.busy_poll);
	ASSERT_EQ(6, d.family);
	ASSERT_EQ(32u, d.per_client.max_qps);
	ASSERT_EQ(256u, d.per_client.max_mem_mb);
	ASSERT_EQ(512u, d.per_client.max_wrs);
	mrcd_config_dp_free(&d);
	mrcd_config_free(&c);
}

TEST(config_dp, engine_and_frame_as_mapped_by_lib_ctl)
{
	struct mrcd_config c;
	struct mrcd_dp_config d;
	struct mrcp_engine_config e;
	struct mrcp_frame_rx_cfg rx;

	load(two_ports, &c, &d, 0x5eed);
	mrcd_config_to_engine(&c, &e);
	e.seed = 0x5eed;
	ASSERT_MEMEQ(&e, &d.engine, sizeof(e));
	mrcd_config_to_frame_rx(&c, &rx);
	ASSERT_MEMEQ(&rx, &d.frame, sizeof(rx));
	ASSERT_EQ(4971, d.frame.udp_port);
	ASSERT_EQ(MRCP_EV_HI16_SPORT, d.frame.ev_layout);
	mrcd_config_dp_free(&d);
	mrcd_config_free(&c);
}

TEST(config_dp, neighbours_srv6_faults)
{
	struct mrcd_config c;
	struct mrcd_dp_config d;

	load(two_ports, &c, &d, 1);
	ASSERT_EQ(2u, d.n_neighbours);
	ASSERT_EQ(1, d.neighbours[0].port);
	ASSERT_EQ(-1, d.neighbours[1].port);
	ASSERT_EQ(6, d.neighbours[0].ip.family);
	ASSERT_EQ(0x02, d.neighbours[0].mac[5]);
	ASSERT_EQ(1u, d.n_srv6);
	ASSERT_EQ(48, d.srv6[0].plen);
	ASSERT_EQ(0xfc, d.srv6[0].locator[0]);
	ASSERT_EQ(3, d.srv6[0].n_usid);
	ASSERT_EQ(0x200, d.srv6[0].usid[1]);
	ASSERT_EQ(0xf000, d.srv6[0].plane_mask);
	ASSERT_EQ(12, d.srv6[0].plane_shift);
	ASSERT_EQ(1, d.srv6[0].uplink_usid);
	ASSERT_EQ(0x00ff, d.srv6[0].uplink_mask);
	ASSERT_EQ(3u, d.n_faults);
	ASSERT_EQ(1, d.faults[0].port);
	ASSERT_EQ(16u, d.faults[0].ev_min);
	ASSERT_EQ(31u, d.faults[0].ev_max);
	ASSERT_EQ(MRCD_FAULT_RX, d.faults[0].dir);
	ASSERT_EQ(10000u, d.faults[0].delay_ns);
	ASSERT_EQ(2500u, d.faults[0].jitter_ns);
	ASSERT_TRUE(d.faults[0].drop_pct == 0.5);
	ASSERT_EQ(MRCD_FAULT_BOTH, d.faults[1].dir);
	ASSERT_TRUE(d.faults[1].blackhole);
	ASSERT_EQ(0u, d.faults[1].ev_min);
	ASSERT_EQ(0xffffffffu, d.faults[1].ev_max);
	ASSERT_EQ(MRCD_FAULT_TX, d.faults[2].dir);
	ASSERT_TRUE(d.faults[2].ecn_pct == 5);
	mrcd_config_dp_free(&d);
	ASSERT_TRUE(d.faults == NULL && d.n_faults == 0 && d.srv6 == NULL && d.neighbours == NULL);
	mrcd_config_free(&c);
}

TEST(config_dp, srv6_off_means_no_rows)
{
	struct mrcd_config c;
	struct mrcd_dp_config d;

	load("ports: [{name: p, devargs: net_null0, ipv4: 10.0.0.1/24}]\n", &c, &d, 1);
	ASSERT_EQ(0u, d.n_srv6);
	ASSERT_TRUE(d.srv6 == NULL);
	ASSERT_EQ(0u, d.n_faults);
	ASSERT_EQ(0u, d.n_neighbours);
	ASSERT_EQ(4, d.family);
	ASSERT_FALSE(d.busy_poll);
	mrcd_config_dp_free(&d);
	mrcd_config_free(&c);
}

TEST(config_dp, fault_dir_of__every_direction)
{
	ASSERT_EQ(MRCD_FAULT_TX, mrcd_fault_dir_of(MRCD_CTL_DIR_TX));
	ASSERT_EQ(MRCD_FAULT_RX, mrcd_fault_dir_of(MRCD_CTL_DIR_RX));
	ASSERT_EQ(MRCD_FAULT_BOTH, mrcd_fault_dir_of(MRCD_CTL_DIR_BOTH));
}

TEST(config_dp, examples__every_file_maps)
{
	DIR *dir = opendir(MRCD_CONFIG_DIR);
	struct dirent *e;
	unsigned n = 0;

	ASSERT_TRUE(dir != NULL);
	while ((e = readdir(dir)) != NULL) {
		struct mrcd_config c;
		struct mrcd_dp_config d;
		char path[4096], err[512];
		size_t l = strlen(e->d_name);

		if (l < 6 || strcmp(e->d_name + l - 5, ".yaml") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", MRCD_CONFIG_DIR, e->d_name);
		if (mrcd_config_load(path, &c, err, sizeof(err)) != 0)
			mrcp_test_fail(__FILE__, __LINE__, "%s: %s", path, err);
		ASSERT_EQ(0, mrcd_config_to_dp(&c, 7, &d, err, sizeof(err)));
		ASSERT_EQ(c.n_ports, d.n_ports);
		ASSERT_EQ(c.lcores.n_ids, d.n_workers);
		ASSERT_EQ(c.n_neighbours, d.n_neighbours);
		ASSERT_EQ(7u, d.engine.seed);
		/* shipped memif planes are file sockets a local user cannot
		 * reach, never abstract ones (docs/configuration.md) */
		for (unsigned i = 0; i < c.n_ports; i++) {
			char sock[108];
			bool server;

			if (strncmp(c.ports[i].devargs, "net_memif", 9) == 0 &&
			    mrcd_memif_socket_file(c.ports[i].devargs, sock, sizeof(sock), &server) != 1)
				mrcp_test_fail(__FILE__, __LINE__, "%s: ports[%u]: an abstract memif socket: %s",
					       path, i, c.ports[i].devargs);
		}
		mrcd_config_dp_free(&d);
		mrcd_config_free(&c);
		n++;
	}
	closedir(dir);
	ASSERT_TRUE(n >= 4);
}



/* ---- port_files.c ---------------------------------------------------------------- */

TEST(port_files, memif_socket_file__devargs_as_dpdk_reads_them)
{
	char p[108];
	bool server = false;

	ASSERT_EQ(1, mrcd_memif_socket_file("net_memif0,role=server,socket=/x/a.sock,socket-abstract=no",
					    p, sizeof(p), &server));
	ASSERT_STREQ("/x/a.sock", p);
	ASSERT_TRUE(server);
	ASSERT_EQ(1, mrcd_memif_socket_file("net_memif1,socket-abstract=no,role=client,socket=/y/b.sock,id=0",
					    p, sizeof(p), &server));
	ASSERT_STREQ("/y/b.sock", p);
	ASSERT_FALSE(server);
	/* DPDK's defaults: role server, /run/memif.sock */
	ASSERT_EQ(1, mrcd_memif_socket_file("net_memif2,socket-abstract=no", p, sizeof(p), &server));
	ASSERT_STREQ("/run/memif.sock", p);
	ASSERT_TRUE(server);
	/* abstract (the default), other devices, look-alike keys */
	ASSERT_EQ(0, mrcd_memif_socket_file("net_memif0,socket=/x/a.sock", p, sizeof(p), &server));
	ASSERT_EQ(0, mrcd_memif_socket_file("net_memif0,socket=/x/a.sock,socket-abstract=yes", p, sizeof(p), &server));
	ASSERT_EQ(0, mrcd_memif_socket_file("net_memif0,xsocket-abstract=no", p, sizeof(p), &server));
	ASSERT_EQ(0, mrcd_memif_socket_file("net_null0,socket-abstract=no", p, sizeof(p), &server));
	ASSERT_EQ(-EINVAL, mrcd_memif_socket_file("net_memif0,socket=/a/long/path,socket-abstract=no", p, 8, &server));
}

static int listen_seqpacket(const char *path)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	ASSERT_TRUE(fd >= 0);
	ASSERT_EQ(0, bind(fd, (struct sockaddr *)&a, sizeof(a)));
	return fd;
}

TEST(port_files, prepare__directory_stale_live_and_foreign_files)
{
	char top[] = "/tmp/mrcd-port-files.XXXXXX", sock[108], dev[256], err[256];
	struct stat st;
	int fd;

	ASSERT_TRUE(mkdtemp(top) != NULL);
	snprintf(sock, sizeof(sock), "%s/memif/p.sock", top);
	snprintf(dev, sizeof(dev), "net_memif0,role=server,id=0,socket=%s,socket-abstract=no", sock);
	/* the directory is made, for the daemon's user only */
	ASSERT_EQ(0, mrcd_port_files_prepare(dev, err, sizeof(err)));
	snprintf(err, sizeof(err), "%s/memif", top);
	ASSERT_EQ(0, stat(err, &st));
	ASSERT_TRUE(S_ISDIR(st.st_mode));
	ASSERT_EQ(0u, st.st_mode & 077);
	/* a socket nobody listens on (a killed daemon's) is removed */
	fd = listen_seqpacket(sock);
	close(fd);
	ASSERT_EQ(0, mrcd_port_files_prepare(dev, err, sizeof(err)));
	ASSERT_EQ(-1, lstat(sock, &st));
	/* a live one is another process's */
	fd = listen_seqpacket(sock);
	ASSERT_EQ(0, listen(fd, 4));
	ASSERT_EQ(-EADDRINUSE, mrcd_port_files_prepare(dev, err, sizeof(err)));
	ASSERT_TRUE(strstr(err, "another process is listening") != NULL);
	/* ...found without connecting to it (a memif server dies of a
	 * connection that closes before its handshake): nothing to accept */
	ASSERT_EQ(0, fcntl(fd, F_SETFL, O_NONBLOCK));
	ASSERT_EQ(-1, accept(fd, NULL, NULL));
	ASSERT_EQ(EAGAIN, errno);
	close(fd);
	unlink(sock);
	/* anything else is left alone */
	fd = open(sock, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	ASSERT_TRUE(fd >= 0);
	close(fd);
	ASSERT_EQ(-EEXIST, mrcd_port_files_prepare(dev, err, sizeof(err)));
	ASSERT_TRUE(strstr(err, "is not a socket") != NULL);
	ASSERT_EQ(0, lstat(sock, &st));
	/* a client never removes the server's socket */
	snprintf(dev, sizeof(dev), "net_memif0,role=client,socket=%s,socket-abstract=no", sock);
	ASSERT_EQ(0, mrcd_port_files_prepare(dev, err, sizeof(err)));
	ASSERT_EQ(0, lstat(sock, &st));
	unlink(sock);
	/* abstract sockets and other devices: nothing to do */
	ASSERT_EQ(0, mrcd_port_files_prepare("net_memif0,socket=/nonexistent/x/y.sock", err, sizeof(err)));
	ASSERT_EQ(0, mrcd_port_files_prepare("net_null0", err, sizeof(err)));
	snprintf(err, sizeof(err), "%s/memif", top);
	ASSERT_EQ(0, rmdir(err));
	ASSERT_EQ(0, rmdir(top));
}
