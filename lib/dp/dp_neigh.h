/* dp_neigh.h - neighbour resolution and host-stack replies for mrcd's ports,
 * without DPDK: ARP (RFC 826), IPv6 Neighbour Discovery (RFC 4861: NS/NA
 * only) and ICMP echo (RFC 792, RFC 4443) on the port's own addresses, plus
 * a fixed-size neighbour table that maps next-hop IPs to MACs.
 *
 * The DPDK glue hands received Ethernet frames to mrcd_l2_input() as bytes
 * and transmits whatever frame it writes; before sending MRC traffic it asks
 * mrcd_neigh_resolve() for the destination MAC and transmits the request
 * frame that call may write. Time is an argument (now_ns); nothing here reads
 * a clock, allocates after mrcd_neigh_create(), or prints.
 *
 * Threading: none. One struct mrcd_neigh belongs to one lcore; every call,
 * including mrcd_neigh_list() and mrcd_neigh_counters_get(), must come from
 * that lcore (or be serialised with it by the caller).
 *
 * Not implemented, on purpose: IPv4 options in echo replies (replies carry a
 * 20-byte header), IPv6 extension headers (such frames are NOT_MINE), MLD,
 * router advertisements, redirects, ARP conflict defence.
 */
#ifndef MRCD_DP_NEIGH_H
#define MRCD_DP_NEIGH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** Ports one table serves. */
#define MRCD_NEIGH_MAX_PORTS 32u
/** Static routes one port carries. */
#define MRCD_NEIGH_MAX_ROUTES 16u
/** Largest table, entries. */
#define MRCD_NEIGH_MAX_ENTRIES (1u << 20)

/** Requests sent for one entry before it becomes FAILED. */
#define MRCD_NEIGH_MAX_TRIES 10u
/** At most one request per entry per this interval, ns. */
#define MRCD_NEIGH_REQ_INTERVAL_NS 100000000ull
/** A FAILED entry is retried this long after it failed, ns. */
#define MRCD_NEIGH_FAIL_HOLD_NS 1000000000ull
/** A learned entry is stale (re-requested on use) this long after it was
 *  last confirmed, ns. */
#define MRCD_NEIGH_STALE_NS 60000000000ull
/** Stale refreshes go unicast to the cached MAC for this many tries, then
 *  broadcast (ARP) or to the solicited-node group (NDP). */
#define MRCD_NEIGH_UNICAST_TRIES 3u

/** Shortest frame written, bytes without FCS; shorter ones are zero-padded.
 *  A tagged frame is padded to this plus the 4-byte tag, so it stays valid
 *  after a switch strips the tag. */
#define MRCD_NEIGH_FRAME_MIN 60u
/** Longest request mrcd_neigh_resolve() writes (tagged NS with the source
 *  link-layer option), bytes; its @cap must be at least this. */
#define MRCD_NEIGH_REQ_MAX (14u + 4u + 40u + 32u)
/** Reply buffer that is always large enough for a received frame of @len
 *  bytes: an echo reply may add a tag, an NA answers a shorter NS. */
#define MRCD_L2_REPLY_CAP(len) ((len) + 4u > 96u ? (size_t)(len) + 4u : (size_t)96u)

/** A static route of one port: destinations in @prefix/@plen are sent to
 *  @via, a router on the port's link. Addresses in network byte order. */
struct mrcd_l2_route {
	uint8_t family;     /**< 4 or 6 */
	uint8_t plen;       /**< prefix length, 0..32 (v4), 0..128 (v6) */
	uint8_t prefix[16]; /**< network address; IPv4 in the first 4 bytes */
	uint8_t via[16];    /**< next hop; IPv4 in the first 4 bytes */
};

/** One port's own identity. Addresses in network byte order. */
struct mrcd_l2_port {
	uint8_t mac[6];     /**< unicast MAC of the port */
	bool has_v4;        /**< v4/v4_plen are set */
	uint8_t v4[4];      /**< our IPv4 address */
	uint8_t v4_plen;    /**< on-link prefix length, 0..32 (0: all on-link) */
	bool has_v6;        /**< v6/v6_plen are set */
	uint8_t v6[16];     /**< our global IPv6 address */
	uint8_t v6_plen;    /**< on-link prefix length, 0..128 (0: all on-link) */
	bool has_gw4;       /**< gw4 is set */
	uint8_t gw4[4];     /**< next hop for off-prefix IPv4 destinations */
	bool has_gw6;       /**< gw6 is set */
	uint8_t gw6[16];    /**< next hop for off-prefix IPv6 destinations
			     *   (typically the router's link-local address) */
	uint16_t vlan_tci;  /**< 802.1Q TCI (PCP, DEI, VID) of frames we originate */
	bool vlan;          /**< tag frames we originate with vlan_tci */
	struct mrcd_l2_route routes[MRCD_NEIGH_MAX_ROUTES]; /**< static routes */
	unsigned n_routes;  /**< 0..MRCD_NEIGH_MAX_ROUTES */
};

struct mrcd_neigh; /* opaque */

/**
 * Allocate a table for @n_ports ports and @max_entries neighbour entries.
 * This is the only allocation the module makes.
 *
 * @param n_ports      ports, 1..MRCD_NEIGH_MAX_PORTS (0-based indices after)
 * @param max_entries  entries, 1..MRCD_NEIGH_MAX_ENTRIES (static + dynamic)
 * @param out          receives the table
 * @return 0, -EINVAL for a bad count or NULL @out, -ENOMEM.
 */
int mrcd_neigh_create(unsigned n_ports, unsigned max_entries, struct mrcd_neigh **out);

/** Free @n (NULL is fine). */
void mrcd_neigh_destroy(struct mrcd_neigh *n);

/**
 * Set (or replace) the identity of @port. Also derives the port's IPv6
 * link-local address fe80::/64 + modified EUI-64 of the MAC, which is
 * answered for (NS, echo) whether or not @p->has_v6. Until a port is set,
 * mrcd_l2_input() returns NOT_MINE for it and resolution fails.
 *
 * @return 0, -EINVAL for a bad port, NULL @p, a multicast or zero MAC,
 *         a prefix length out of range, more than MRCD_NEIGH_MAX_ROUTES
 *         routes or a route with a bad family or prefix length.
 */
int mrcd_neigh_set_port(struct mrcd_neigh *n, unsigned port, const struct mrcd_l2_port *p);

/**
 * Add (or replace) a static entry. Static entries never expire and are never
 * changed by received frames. An any-port (-1) entry takes precedence over
 * per-port entries for the same address; a per-port static entry replaces a
 * dynamic one for that port.
 *
 * @param port    0-based port, or -1 for every port
 * @param family  4 or 6
 * @param ip      4 or 16 bytes by @family
 * @param mac     the neighbour's unicast MAC
 * @return 0, -EINVAL for bad arguments (port out of range, family, NULL,
 *         multicast or zero MAC), -ENOSPC if the table is full.
 */
int mrcd_neigh_add_static(struct mrcd_neigh *n, int port, uint8_t family,
			  const uint8_t *ip, const uint8_t mac[6]);

/** How a destination is reached from a port (mrcd_neigh_next_hop). */
enum mrcd_neigh_via {
	MRCD_NEIGH_VIA_LINK = 1, /**< on the link: the next hop is the destination */
	MRCD_NEIGH_VIA_ROUTE,    /**< through the next hop of a static route */
	MRCD_NEIGH_VIA_GATEWAY,  /**< through the port's gateway (gw4 / gw6) */
};

/**
 * The next hop for @ip on @port, in this order: @ip itself if it is on the
 * port's prefix (or the port has no address of that family, or for IPv6 if
 * @ip is link-local); else the via of the longest static route of that
 * family whose prefix holds @ip; else the port's gateway of that family.
 * Pure: no counter, no entry changes.
 *
 * @param hop  receives the next hop (4 or 16 bytes by @family)
 * @return the enum mrcd_neigh_via (> 0); -EHOSTUNREACH off-prefix with
 *         neither a route nor a gateway, or the port is not set; -EINVAL
 *         bad arguments.
 */
int mrcd_neigh_next_hop(const struct mrcd_neigh *n, unsigned port, uint8_t family,
			const uint8_t *ip, uint8_t hop[16]);

/**
 * The MAC to send to @ip on @port: the MAC of mrcd_neigh_next_hop()'s next
 * hop. Each call counts the way it went (via_link, via_route, via_gateway).
 *
 * Request frames (ARP request; NDP NS to the solicited-node group with our
 * source link-layer option) are rate-limited to one per entry per
 * MRCD_NEIGH_REQ_INTERVAL_NS. A learned entry older than MRCD_NEIGH_STALE_NS
 * still resolves (returns 0 with the old MAC) but is re-requested: first
 * unicast to that MAC, then broadcast. After MRCD_NEIGH_MAX_TRIES requests
 * without an answer the entry is FAILED; once MRCD_NEIGH_FAIL_HOLD_NS has
 * passed it is asked for again the same way, and stays FAILED (-EHOSTUNREACH)
 * until an answer makes it REACHABLE.
 *
 * Always check *req_len, whatever the return value: if it is > 0 the frame
 * in @req must be sent now (on -EAGAIN, and on 0 for a stale refresh).
 *
 * If the table is full, a new entry may evict one that was only learned
 * from received frames (never resolved) or that is FAILED, oldest first.
 *
 * @param port     0-based port
 * @param family   4 or 6
 * @param ip       destination, 4 or 16 bytes by @family
 * @param now_ns   current time, ns
 * @param mac      receives the next hop's MAC on 0
 * @param req      buffer for a request frame
 * @param cap      bytes at @req, at least MRCD_NEIGH_REQ_MAX
 * @param req_len  receives the request length, or 0 if none
 * @return 0 resolved; -EAGAIN not yet; -EHOSTUNREACH off-prefix with
 *         neither a route nor a gateway, port not set, or FAILED; -EINVAL
 *         bad arguments;
 *         -ENOSPC table full.
 */
int mrcd_neigh_resolve(struct mrcd_neigh *n, unsigned port, uint8_t family, const uint8_t *ip,
		       uint64_t now_ns, uint8_t mac[6], uint8_t *req, size_t cap, size_t *req_len);

/**
 * Keep the on-link next hop @hop of @port resolved: what mrcd_neigh_resolve()
 * does for a destination on the link (requests, stale refresh, FAILED and its
 * retry), without counting a via. The datapath calls it periodically for
 * every gateway and route next hop (mrcd_neigh_port_hops), so a router that
 * does not answer becomes FAILED, and is seen, before traffic needs it.
 * Arguments and return values as mrcd_neigh_resolve(); @mac may be NULL.
 */
int mrcd_neigh_refresh(struct mrcd_neigh *n, unsigned port, uint8_t family, const uint8_t *hop,
		       uint64_t now_ns, uint8_t mac[6], uint8_t *req, size_t cap, size_t *req_len);

/** What a next hop is to the port that has it (listings). */
enum mrcd_neigh_role {
	MRCD_NEIGH_ROLE_HOST = 0, /**< a destination on the link */
	MRCD_NEIGH_ROLE_GATEWAY,  /**< the port's gateway (gw4 or gw6) */
	MRCD_NEIGH_ROLE_ROUTE,    /**< the next hop of a static route (and not the gateway) */
};

/** One configured next hop of a port (mrcd_neigh_port_hops). */
struct mrcd_neigh_hop {
	uint8_t family;            /**< 4 or 6 */
	uint8_t ip[16];            /**< IPv4 in the first 4 bytes, rest 0 */
	enum mrcd_neigh_role role; /**< GATEWAY or ROUTE */
};

/**
 * The routers @port sends through: its gateway, gateway6, then each static
 * route's via that is neither (each address once), at most @max into @out.
 * @return hops written (0 for a port out of range or not set).
 */
unsigned mrcd_neigh_port_hops(const struct mrcd_neigh *n, unsigned port,
			      struct mrcd_neigh_hop *out, unsigned max);

/** What mrcd_l2_input() did with a frame. */
enum mrcd_l2_verdict {
	MRCD_L2_NOT_MINE = 0, /**< not ARP/NDP/ICMP echo for us: give it to the MRC parser */
	MRCD_L2_CONSUMED,     /**< handled (or dropped and counted), nothing to send */
	MRCD_L2_REPLY,        /**< send the frame written to reply */
};

/**
 * Handle one received frame on @port (0 or one 802.1Q tag; a tag whose VID
 * differs from a tagged port's is NOT_MINE).
 *
 *  - ARP (any frame to our MAC or broadcast is CONSUMED: ARP is never MRC):
 *    a request for our IPv4 is answered and its sender learned (created);
 *    a reply to us is learned (created); any other ARP, including requests
 *    for other addresses and gratuitous ARP, only updates existing
 *    non-static entries and is consumed without a reply.
 *  - NDP: an NS for our global or link-local address (unicast, or to our
 *    solicited-node group) is answered with an NA (S and O set, target
 *    link-layer option) and its source link-layer option is learned; a DAD
 *    NS (unspecified source) for our address gets an NA to all-nodes with S
 *    clear. An NA updates an existing non-static entry (not created, RFC 4861
 *    7.2.5); with O clear it does not replace a different known MAC.
 *  - ICMP echo requests to our unicast IPv4 / IPv6 addresses are answered
 *    (IPv4 reply without options, TTL/hop limit 64).
 *  - Anything else, including other ICMP types, IPv4 fragments, IPv6 with
 *    extension headers and frames to other MACs, is NOT_MINE.
 *
 * Recognised frames are fully validated (lengths, checksums, hop limit 255
 * and code 0 for NDP, option lengths); a bad one is CONSUMED and counted in
 * `malformed`. @frame is never read beyond @len.
 *
 * Replies carry the received frame's tag if it had one, else the port's tag
 * if the port is tagged, and are padded as MRCD_NEIGH_FRAME_MIN says.
 *
 * @param reply      buffer for a reply frame
 * @param cap        bytes at @reply; MRCD_L2_REPLY_CAP(@len) is always enough;
 *                   too small: CONSUMED and counted in `tx_nobufs`
 * @param reply_len  receives the reply length (0 unless MRCD_L2_REPLY)
 * @return the verdict; NOT_MINE also for a port out of range or not set.
 */
enum mrcd_l2_verdict mrcd_l2_input(struct mrcd_neigh *n, unsigned port, const uint8_t *frame,
				   size_t len, uint64_t now_ns, uint8_t *reply, size_t cap,
				   size_t *reply_len);

/** State of an entry, as listed. 0 is not a valid state. */
enum mrcd_neigh_state {
	MRCD_NEIGH_INCOMPLETE = 1, /**< requested, no MAC yet */
	MRCD_NEIGH_REACHABLE,      /**< learned; stale once MRCD_NEIGH_STALE_NS past updated_ns */
	MRCD_NEIGH_STATIC,         /**< configured; never expires */
	MRCD_NEIGH_FAILED,         /**< no answer to MRCD_NEIGH_MAX_TRIES requests */
};

/** One entry, for the control socket. */
struct mrcd_neigh_entry {
	int port;                    /**< 0-based port, or -1 (static, any port) */
	enum mrcd_neigh_role role;   /**< to its port (any port: to the first
				      *   port it is a router of) */
	uint8_t family;              /**< 4 or 6 */
	uint8_t ip[16];              /**< address; IPv4 in the first 4 bytes, rest 0 */
	uint8_t mac[6];              /**< MAC; zero while INCOMPLETE */
	enum mrcd_neigh_state state; /**< see enum mrcd_neigh_state */
	uint64_t updated_ns;         /**< last confirmation or state change, ns
				      *   (creation for STATIC) */
};

/** "INCOMPLETE", "REACHABLE", "STATIC", "FAILED"; "-" for anything else. */
const char *mrcd_neigh_state_name(enum mrcd_neigh_state s);
/** "host", "gateway", "route"; "?" for anything else. */
const char *mrcd_neigh_role_name(enum mrcd_neigh_role r);

/** Entries in the table (all states). */
unsigned mrcd_neigh_count(const struct mrcd_neigh *n);

/**
 * The entry that serves @ip on @port: an any-port static entry, else the
 * port's own. No request, no state change.
 * @return 0 with *@out filled, -ENOENT if there is none, -EINVAL.
 */
int mrcd_neigh_lookup(const struct mrcd_neigh *n, unsigned port, uint8_t family,
		      const uint8_t *ip, struct mrcd_neigh_entry *out);

/**
 * Copy up to @max entries, in no particular order, into @out.
 * @return entries written.
 */
unsigned mrcd_neigh_list(const struct mrcd_neigh *n, struct mrcd_neigh_entry *out, unsigned max);

/** Per-port counters: X(name, description). Free-running, never reset. */
#define MRCD_NEIGH_COUNTERS(X)                                                 \
	X(arp_rx, "ARP frames received (to our MAC or broadcast)")             \
	X(arp_tx_reply, "ARP replies sent")                                    \
	X(arp_tx_req, "ARP requests sent")                                     \
	X(ns_rx, "Neighbour Solicitations received for our addresses")        \
	X(na_tx, "Neighbour Advertisements sent")                              \
	X(ns_tx, "Neighbour Solicitations sent")                               \
	X(na_rx, "Neighbour Advertisements received")                          \
	X(icmp_echo, "ICMPv4 echo requests answered")                          \
	X(icmp6_echo, "ICMPv6 echo requests answered")                         \
	X(ignored, "ARP/NDP consumed without reply: not for our address")      \
	X(malformed, "frames dropped: truncated, bad checksum/hop limit/field") \
	X(learned, "entries created or changed by received frames")            \
	X(table_full, "entries not created: table full")                       \
	X(resolve_fail, "resolve calls that returned -EHOSTUNREACH")          \
	X(via_link, "resolve calls for a destination on the link")            \
	X(via_route, "resolve calls sent to a static route's next hop")       \
	X(via_gateway, "resolve calls sent to the port's gateway")            \
	X(tx_nobufs, "replies not sent: reply buffer too small")

/** One port's counters. */
struct mrcd_neigh_counters {
#define X(name, desc) uint64_t name; /**< desc */
	MRCD_NEIGH_COUNTERS(X)
#undef X
};

/** Copy the counters of @port into @out (zeros for a port out of range). */
void mrcd_neigh_counters_get(const struct mrcd_neigh *n, unsigned port,
			     struct mrcd_neigh_counters *out);

/** Name of counter @i (0-based, in X-macro order), or NULL past the end. */
const char *mrcd_neigh_counter_name(unsigned i);
/** Description of counter @i, or NULL past the end. */
const char *mrcd_neigh_counter_desc(unsigned i);

#endif
