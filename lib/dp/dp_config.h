/* dp_config.h - what the datapath is built from: struct mrcd_dp_config.
 *
 * lib/dp reads nothing else: the daemon fills this struct from its YAML
 * configuration (app/mrcd), a test or another program may fill it by hand.
 * Engine and frame-layer settings travel as lib/core's own structs; the
 * neighbour, SRv6 and fault tables as lib/dp's own rows (dp_neigh.h,
 * dp_srv6.h, dp_fault.h). DPDK-free: plain data, no allocation here.
 *
 * Lifetime: mrcd_dp_create() copies what it keeps; the arrays the config
 * points to are read during that call only.
 */
#ifndef MRCD_DP_CONFIG_H
#define MRCD_DP_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "dp_fault.h"
#include "dp_srv6.h"
#include "mrcp_engine.h"
#include "mrcp_frame.h"

#define MRCD_DP_MAX_PORTS MRCP_MAX_PORTS  /* port i is plane i + 1 (D49) */
#define MRCD_DP_MAX_WORKERS MRCP_SHARDS   /* one engine per worker lcore (D63) */
#define MRCD_DP_NAME_MAX 32               /* port names, incl. NUL */
#define MRCD_DP_DEVARGS_MAX 256           /* DPDK device argument string, incl. NUL */
#define MRCD_DP_MAX_ROUTES 16             /* static routes per port (dp_neigh.h) */

/** An interface address with its prefix length; ip.family 0 = none. */
struct mrcd_dp_prefix {
	struct mrcp_ip ip;        /**< family 4 or 6, network byte order */
	uint8_t len;              /**< prefix length, bits: 0..32 (v4), 0..128 (v6) */
};

/** A static route: destinations in @prefix are sent to @via, a router on
 *  the port's link (the neighbour table resolves its MAC, dp_neigh.h). */
struct mrcd_dp_route {
	struct mrcd_dp_prefix prefix; /**< network address and length */
	struct mrcp_ip via;       /**< next hop, same family as the prefix */
};

/** One DPDK port = one plane (D49). */
struct mrcd_dp_port_config {
	char name[MRCD_DP_NAME_MAX];       /**< unique, non-empty */
	char devargs[MRCD_DP_DEVARGS_MAX]; /**< "net_memif0,role=server,...", a PCI address, ... */
	bool has_mac;             /**< use @mac, else the device's own */
	uint8_t mac[6];
	struct mrcd_dp_prefix ipv4, ipv6; /**< our addresses (family 0: none) */
	struct mrcp_ip gw4, gw6;  /**< next hop for off-prefix destinations
				   *   without a route (family 0: none) */
	struct mrcd_dp_route routes[MRCD_DP_MAX_ROUTES]; /**< static routes,
				   *   longest prefix first, before the gateway */
	unsigned n_routes;        /**< 0..MRCD_DP_MAX_ROUTES */
	uint16_t mtu;             /**< L3 (IP) MTU, bytes */
	bool udp_checksum;        /**< compute the UDP checksum on IPv6 (D2) */
};

/** One static neighbour entry (IP -> MAC). */
struct mrcd_dp_neighbour {
	struct mrcp_ip ip;
	uint8_t mac[6];
	int port;                 /**< 0-based port index, -1 = every port */
};

/** Everything lib/dp is built from (mrcd_dp_create). */
struct mrcd_dp_config {
	struct mrcd_dp_port_config ports[MRCD_DP_MAX_PORTS];
	unsigned n_ports;         /**< 1..MRCD_DP_MAX_PORTS */

	uint16_t lcores[MRCD_DP_MAX_WORKERS]; /**< worker i runs on lcore lcores[i] */
	unsigned n_workers;       /**< 1..MRCD_DP_MAX_WORKERS */
	bool busy_poll;           /**< spin always; false = adaptive idle (sleep
				   *   on the doorbell until the next deadline) */
	int family;               /**< 4 or 6: the planes' address family */

	/** Each worker's engine: lib/dp sets shard = worker index and
	 *  seed = engine.seed + index x 2^64/phi (worker 0 keeps it as given);
	 *  the fault stages are seeded from it too. */
	struct mrcp_engine_config engine;
	/** Frame settings for both directions (UDP port, EV layout, DSCPs,
	 *  last-hop hop limit); check_icrc is ignored: lib/dp checks the ICRC
	 *  itself with rte_net_crc. */
	struct mrcp_frame_rx_cfg frame;

	const struct mrcd_dp_neighbour *neighbours;
	unsigned n_neighbours;
	/** SRv6 templates, one per destination row (D8); 0 rows: SRv6 off */
	const struct mrcd_srv6_row *srv6;
	unsigned n_srv6;
	/** fault rules in force from the start (the control side adds more) */
	const struct mrcd_fault_rule *faults;
	unsigned n_faults;

	/** what one libmrc-client session may use */
	struct {
		uint32_t max_qps;     /**< QPs */
		uint32_t max_mem_mb;  /**< shared arena, MiB */
		uint32_t max_wrs;     /**< outstanding work requests */
		uint32_t max_mrs;     /**< registered regions, at most MRCD_CLIENT_MAX_MRS; 0 = that */
	} per_client;
	/** a selftest that no command, completion or event touched for this
	 *  long is freed by its worker; 0 = 60 s */
	uint32_t selftest_idle_s;
};

#endif
