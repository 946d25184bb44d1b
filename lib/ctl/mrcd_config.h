/* mrcd_config.h - the daemon's configuration: one YAML file (libyaml),
 * parsed and validated into struct mrcd_config, and mapped onto the engine's
 * struct mrcp_engine_config and the frame layer's receive settings.
 *
 * Every key, default and range is documented in docs/configuration.md; the
 * design choices (D1...) are those of docs/protocol.md §9. The module
 * needs only libyaml and lib/core (no DPDK) and never prints: every failure
 * is returned as a negative errno plus a one-line message
 *
 *     <file>:<line>: <key.path>: <reason>
 *
 * with 1-based lines as libyaml reports them.
 */
#ifndef MRCD_CONFIG_H
#define MRCD_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mrcd_ctl.h"
#include "mrcp_engine.h"
#include "mrcp_frame.h"

#define MRCD_MAX_PORTS MRCP_MAX_PORTS /* planes; port i is plane i (D49) */
#define MRCD_NAME_MAX 32              /* port names, incl. NUL */
#define MRCD_DEVARGS_MAX 256          /* DPDK device argument string, incl. NUL */
#define MRCD_PATH_MAX 108             /* sizeof(sockaddr_un.sun_path) */
#define MRCD_GROUP_MAX 64             /* group name, incl. NUL */
#define MRCD_MAX_LCORES 4             /* worker lcores: one engine each, D63 (MRCP_SHARDS) */
#define MRCD_LCORE_ID_MAX 1023        /* highest lcore id accepted */
#define MRCD_CFG_CLIENT_MRS_MAX 256   /* limits.per_client.max_mrs: a session's region table (MRCD_CLIENT_MAX_MRS) */
#define MRCD_CONFIG_MAX_DEPTH 32      /* nesting levels of mappings and lists (ours use 5) */
#define MRCD_SRV6_MAX_USIDS 6         /* uSIDs in an F3216 DA (§2.3) */
#define MRCD_MAX_ROUTES 16            /* static routes per port */

/** An interface address with its prefix length; family 0 = not configured. */
struct mrcd_prefix {
	struct mrcp_ip ip;        /**< family 4 or 6, network byte order */
	uint8_t len;              /**< prefix length, bits: 0..32 (v4), 0..128 (v6) */
};

/** A static route of one port: destinations in @prefix go to @via. */
struct mrcd_route {
	struct mrcd_prefix prefix; /**< network address (no host bits) and length, 1.. */
	struct mrcp_ip via;        /**< next hop, on the port's link; same family */
};

/** One DPDK port = one plane (D49). */
struct mrcd_port_config {
	char name[MRCD_NAME_MAX]; /**< unique; [A-Za-z0-9_-]+ */
	char devargs[MRCD_DEVARGS_MAX]; /**< DPDK device: "net_null0",
					     "net_memif0,role=server,socket=/tmp/x.sock",
					     a PCI address, ... */
	bool has_mac;             /**< mac configured (else the device's own) */
	uint8_t mac[6];           /**< unicast MAC to set on the port */
	struct mrcd_prefix ipv4;  /**< family 0 if absent */
	struct mrcd_prefix ipv6;  /**< family 0 if absent */
	struct mrcp_ip gateway;   /**< IPv4 next hop for destinations off the
				       ipv4 subnet (family 0: none) */
	struct mrcp_ip gateway6;  /**< IPv6 next hop for destinations off the
				       ipv6 prefix: link-local or on the prefix */
	struct mrcd_route routes[MRCD_MAX_ROUTES]; /**< static routes, tried
				       before the gateway, longest prefix first */
	unsigned n_routes;
	uint16_t mtu;             /**< L3 (IP) MTU of the port, bytes; when not
				       configured, the smallest that carries
				       transport.mtu (see mrcd_config_frame_overhead) */
	uint32_t speed_gbps;      /**< link speed used for BDP, Gbit/s (D54) */
	bool udp_checksum;        /**< compute the UDP checksum on IPv6 (D2) */
};

/** One entry of the static neighbour table (IP -> MAC). */
struct mrcd_neighbour {
	struct mrcp_ip ip;        /**< the neighbour's address */
	uint8_t mac[6];
	int port;                 /**< 0-based index into ports[], -1 = any port */
};

enum mrcd_idle { MRCD_IDLE_ADAPTIVE = 0, MRCD_IDLE_BUSY };
enum mrcd_cc_scope { MRCD_CC_SCOPE_PEER = 0, MRCD_CC_SCOPE_QP };

/** SRv6 path template for one destination row (D8, §2.3). */
struct mrcd_srv6_template {
	struct mrcd_prefix dst;   /**< destination prefix (IPv6) */
	uint16_t usid[MRCD_SRV6_MAX_USIDS]; /**< uSID list, first hop first */
	uint8_t n_usid;           /**< 1..MRCD_SRV6_MAX_USIDS */
	uint16_t plane_mask;      /**< bits of every uSID that take the plane */
	uint8_t plane_shift;      /**< shift of the plane field in a uSID, 0..15 */
	uint8_t uplink_usid;      /**< index of the uSID that takes the T0 uplink */
	uint16_t uplink_mask;     /**< bits of that uSID that take the uplink */
};

/** One fault-injection rule (test and lab use): applied by lib/dp to the
 *  packets of one port whose EV lies in [ev_min, ev_max]. */
struct mrcd_fault {
	int port;                 /**< 0-based index into ports[] */
	uint32_t ev_min, ev_max;  /**< EV range, inclusive */
	enum mrcd_ctl_dir dir;    /**< the control protocol's direction (mrcd_ctl.h) */
	double drop_pct;          /**< %, 0..100 */
	bool blackhole;           /**< drop everything matched */
	uint64_t delay_ns;        /**< added delay, ns */
	uint64_t jitter_ns;       /**< uniform extra delay 0..jitter, ns */
	double reorder_pct;       /**< %, 0..100 */
	double duplicate_pct;     /**< %, 0..100 */
	double corrupt_pct;       /**< %, 0..100: flip a payload byte (ICRC fails) */
	double trim_pct;          /**< %, 0..100: cut the payload, mark DSCP_TRIMMED */
	double ecn_pct;           /**< %, 0..100: set CE */
};

/**
 * The whole daemon configuration. mrcd_config_defaults() fills it; the
 * loaders replace it. Pointer members are owned by the struct and released by
 * mrcd_config_free(). Written once at start-up, read-only afterwards.
 */
struct mrcd_config {
	struct {
		char **args;      /**< EAL arguments passed through, in order */
		unsigned n_args;
	} eal;

	struct mrcd_port_config ports[MRCD_MAX_PORTS];
	unsigned n_ports;         /**< 1..MRCD_MAX_PORTS after a successful load */

	struct mrcd_neighbour *neighbours; /**< static table */
	unsigned n_neighbours;

	struct {
		uint16_t ids[MRCD_MAX_LCORES]; /**< worker lcore ids, unique; default {1} */
		unsigned n_ids;
		unsigned id_lines[MRCD_MAX_LCORES]; /**< the line each id was given on
						     *   (0: the default), for
						     *   mrcd_config_check_host */
		enum mrcd_idle idle;  /**< adaptive: sleep until the next deadline */
	} lcores;

	struct {
		uint16_t udp_port;    /**< UDP destination port (D1) */
		bool accept_alt_port; /**< also accept 4971 on receive (D1) */
		uint16_t mtu;         /**< payload MTU offer: 1024, 2048, 4096 B (D3) */
		enum mrcp_ev_layout ev_layout; /**< D4 */
		uint16_t ev_active;   /**< active EVs per QP, all planes (D41) */
		uint16_t ev_backup;   /**< backup EVs per QP, all planes (D41) */
		uint16_t ev_min_active; /**< D41/D44 floor; 0 = ev_active / 4 */
		bool trimming_fabric; /**< D30, D40, §6.4 target delay */
		uint8_t sack_every;   /**< SACK every N new packets (D28) */
		uint64_t base_rtt_ns; /**< unloaded RTT, ns (§6.4) */
		uint8_t timeout;      /**< T = 1.024 us x 2^timeout (D32) */
		uint8_t linear_cnt;   /**< D32 */
		uint8_t exp_cnt;      /**< D32; 25 = unlimited */
		uint8_t mpr;          /**< responder window, x128 PSNs (D25) */
		uint16_t max_wimm;    /**< outstanding WriteImm messages (D25) */
		struct mrcp_dscp_map dscp; /**< D23 */
		uint8_t lasthop_hop_limit; /**< D34: received hop limit that marks a
					        last-hop trim; 0 = off */
	} transport;

	struct {
		char algorithm[MRCP_CC_NAME_MAX]; /**< "nscc" (D52) or "fixed" */
		enum mrcd_cc_scope scope; /**< D53 */
		/** NSCC overrides and fixed_cwnd, in engine units (bytes, ns);
		 *  0 = derive the §6.4 default. The environment fields (link_bps,
		 *  mtu, ...) are left 0: the engine fills them per QPCC. */
		struct mrcp_cc_params params;
	} cc;

	struct {
		bool enabled;         /**< EVs select uSID paths (D8) */
		struct mrcd_prefix locator; /**< the 32-bit locator block (F3216) */
		uint16_t uplinks;     /**< T0 uplinks per plane */
		struct mrcd_srv6_template *templates;
		unsigned n_templates;
	} srv6;

	struct {
		/* Two sockets (docs/control.md, "Access"): the socket you came
		 * through decides what you may run. */
		char socket[MRCD_PATH_MAX]; /**< the admin socket: every command;
						 absolute, absent or a socket when loaded */
		uint32_t mode;        /**< its permission bits, 0..0777, never o+w */
		char group[MRCD_GROUP_MAX]; /**< its group; "" = the daemon's */
		char client_socket[MRCD_PATH_MAX]; /**< the client socket: client
						 commands only; "" = none */
		uint32_t client_mode; /**< its permission bits, never o+w */
		char client_group[MRCD_GROUP_MAX]; /**< its group; "" = the daemon's */
		uint32_t max_connections; /**< control connections at once, on both sockets */
		uint32_t admin_reserved;  /**< of max_connections, kept for the admin socket;
					       < max_connections */
		uint32_t idle_timeout_s;  /**< a connection without a client session that
					       moves no byte for this long is closed, s */
	} control;

	struct {
		bool enabled;         /**< register the /mrcd/... DPDK telemetry commands */
		struct {
			bool enabled;     /**< listen was given: serve GET /metrics */
			char listen[64];  /**< the address as written ("127.0.0.1:9464") */
			int family;       /**< 4 or 6 */
			uint8_t addr[16]; /**< network byte order (IPv4: the first 4) */
			uint16_t port;    /**< TCP port, 1..65535 */
			unsigned line;    /**< the line of listen (messages) */
		} prometheus;
	} telemetry;

	struct {
		uint32_t max_qps;     /**< QPs per worker engine */
		uint32_t max_mrs;     /**< registered regions per worker engine */
		uint32_t max_peers;   /**< peer nodes */
		uint32_t selftest_idle_s; /**< a selftest nothing touched this long is freed */
		struct {
			uint32_t max_qps;     /**< QPs per client */
			uint32_t max_mrs;     /**< registered regions per client */
			uint32_t max_mem_mb;  /**< shared arena per client, MiB */
			uint32_t max_wrs;     /**< outstanding work requests per client */
		} per_client;
	} limits;

	struct mrcd_fault *faults;
	unsigned n_faults;
};

/** The YAML text of the embedded default: one net_null port, no NIC. */
extern const char mrcd_config_default_yaml[];

/** Fill @c with every default (no ports, lcore 1, no dynamic members). */
void mrcd_config_defaults(struct mrcd_config *c);

/** Release what @c owns and reset it to the defaults. Safe on a config that
 *  was only defaulted, or that a loader left after an error. */
void mrcd_config_free(struct mrcd_config *c);

/**
 * Load and validate the YAML file @path into @out.
 * @param err  receives a NUL-terminated one-line message on failure
 *             ("<path>:<line>: <key.path>: <reason>"); may be NULL.
 * @return 0; -EINVAL for a config error (syntax, unknown or duplicate key,
 *         wrong type, out of range, bad enum value or address, missing key,
 *         cross-check); -ENOENT if @path does not exist; -EACCES if it may
 *         not be read; -EISDIR, -EFBIG (over 1 MiB) or another negative errno
 *         for other read failures; -ENOMEM. On failure @out holds the
 *         defaults (and owns nothing).
 */
int mrcd_config_load(const char *path, struct mrcd_config *out, char *err, size_t errlen);

/**
 * As mrcd_config_load(), from the NUL-terminated text @yaml; @name stands in
 * for the file name in messages. @return 0, -EINVAL, -ENOMEM.
 */
int mrcd_config_load_string(const char *name, const char *yaml, struct mrcd_config *out,
			    char *err, size_t errlen);

/**
 * Bytes an MRC Write packet adds on top of the payload MTU, after Ethernet
 * (§2.1: IPv4 68, IPv6 88, SRv6 128, plus 4 for ImmDt), for the
 * address family the planes run and whether SRv6 is on. A port's L3 MTU must
 * be at least transport.mtu plus this.
 */
unsigned mrcd_config_frame_overhead(const struct mrcd_config *c);

/**
 * Fill @e from a loaded @c: starts from mrcp_engine_config_defaults(), then
 * limits, ports (n_ports, port_bps, port_addr, node_addr = the first port's
 * address), transport, EV profile and CC. The PRNG seed is left at its
 * default; the daemon seeds it.
 */
void mrcd_config_to_engine(const struct mrcd_config *c, struct mrcp_engine_config *e);

/** Fill @rx (frame receive settings, mrcp_frame.h) from @c: UDP port,
 *  accept_alt_port, ev_layout, DSCPs, last-hop hop limit. */
void mrcd_config_to_frame_rx(const struct mrcd_config *c, struct mrcp_frame_rx_cfg *rx);

#define MRCD_HOST_MAX_CPUS 1024 /* CPU and lcore ids the host check knows */

/** The machine a configuration is checked against (mrcd_config_check_host). */
struct mrcd_host {
	uint64_t cpus[MRCD_HOST_MAX_CPUS / 64]; /**< bit i: this process may run on CPU i */
	unsigned max_lcores;      /**< lcore ids below this exist (DPDK's RTE_MAX_LCORE); 0 = any */
};

/** Fill @h's CPUs from sched_getaffinity() (max_lcores 0). @return 0 or -errno. */
int mrcd_host_read(struct mrcd_host *h);

/**
 * Check loaded @c's worker lcores against machine @h and the EAL arguments
 * the daemon will pass (@eal: eal.args, then the command line's; @n_eal).
 * Without a core list among them (-l, -c, --lcores) mrcd passes
 * "-l 0,<ids>": lcore i runs on CPU i and lcore 0 is the main lcore, so
 * every id must be a CPU of @h other than 0, and CPU 0 must be in @h. With
 * one, every id must be one of its lcores, not its main lcore (the lowest,
 * or --main-lcore), and its CPUs and the main lcore's must be in @h. A core
 * list this reader cannot follow is left to EAL. Every id is also below
 * @h->max_lcores. `mrcd --check` and mrcd's start run it after loading.
 * @param name  the file name for messages.
 * @return 0; -EINVAL with @err "<name>:<line>: lcores.ids[i]: <reason>"
 *         (the line of that id, or of the first); -ENOMEM.
 */
int mrcd_config_check_host(const char *name, const struct mrcd_config *c, char *const *eal,
			   unsigned n_eal, const struct mrcd_host *h, char *err, size_t errlen);

/** The address family the planes run: 6 if every port has an IPv6 address,
 *  else 4. */
int mrcd_config_family(const struct mrcd_config *c);

#endif
