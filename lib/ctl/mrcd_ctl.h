/* mrcd_ctl.h - the control protocol of mrcd: versioned JSON messages over a
 * UNIX stream socket (docs/control.md). One request per line, one reply per
 * line, in order.
 *
 *   request: {"v": 1, "cmd": "<name>", "id": <integer, optional>, "args": {...}}
 *   reply:   {"v": 1, "id": <as sent>, "ok": true,  "result": <object|array>}
 *            {"v": 1, "id": <as sent>, "ok": false,
 *             "error": {"errno": 22, "code": "EINVAL", "reason": "<one line>"}}
 *
 * This module is the parsing half: mrcd_ctl_parse() turns one request line
 * into a typed, range-checked struct mrcd_ctl_req, or a reason why not. It
 * needs only jansson and libc, so the fuzz target and the unit tests run it
 * without DPDK. The daemon (ctl.c) executes requests; mrcctl builds them.
 */
#ifndef MRCD_CTL_H
#define MRCD_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_t;

#define MRCD_CTL_MAX_WORKERS 4 /* "worker" arguments: 0..3 (D63) */
#define MRCD_CTL_PROTO_VERSION 1
#define MRCD_CTL_LINE_MAX 65536        /* longest request line, bytes incl. '\n' */
#define MRCD_CTL_REASON_MAX 160
#define MRCD_CTL_NAME_MAX 32           /* port names, incl. NUL */
#define MRCD_CTL_CONN_INFO_LEN 208     /* MRCP_CONN_INFO_LEN (static_assert in ctl_proto.c), hex in JSON */

/*
 * The error codes a reply names: X(errno name). The daemon's replies
 * ("code") and mrcctl's messages take their names from this one list; an
 * errno outside it is sent as EIO. docs/control.md lists when each is used.
 */
#define MRCD_CTL_ERRNOS(X)                                                      \
	X(EINVAL) X(ENOENT) X(EPERM) X(ENOSPC) X(EAGAIN) X(EBUSY) X(EPROTO)     \
	X(E2BIG) X(ETIMEDOUT) X(ENOTSUP) X(ENOMEM) X(EEXIST) X(EFAULT)          \
	X(EBADMSG) X(EHOSTUNREACH) X(ENODEV) X(EIO)

/*
 * How the daemon runs a command (the ROUTE column below). A worker runs one
 * engine (D63); "every worker" means each in turn, in index order, stopping
 * at the first error.
 */
enum mrcd_ctl_route {
	MRCD_CTL_ROUTE_DAEMON = 0, /* the control thread itself, no worker */
	MRCD_CTL_ROUTE_SOCKET,     /* only on the control socket, which handles it */
	MRCD_CTL_ROUTE_WORKER0,    /* worker 0 */
	MRCD_CTL_ROUTE_ALL,        /* every worker; answers folded by the COMBINE column */
	MRCD_CTL_ROUTE_QPN,        /* the worker whose engine owns route_key (a QPN) */
	MRCD_CTL_ROUTE_PEER,       /* the first worker whose engine knows the peer (not ENOENT) */
	MRCD_CTL_ROUTE_PICK,       /* worker route_key if >= 0, else the one with fewest QPs */
	MRCD_CTL_ROUTE_SELFTEST,   /* the worker the selftest id route_key names */
	MRCD_CTL_ROUTE_SESSION,    /* the worker of the caller's client session; needs one */
};

/*
 * Who may run a command (the RIGHTS column below; docs/control.md, "Access").
 * The socket a connection came through decides: control.socket is the
 * admin's (every command), control.client_socket runs CLIENT commands only;
 * who may connect to each is its file's mode and group.
 */
enum mrcd_ctl_rights {
	MRCD_CTL_RIGHTS_ADMIN = 0, /* changes the daemon or reads other tenants' state */
	MRCD_CTL_RIGHTS_CLIENT,    /* attach, the caller's own session, what connecting needs */
};

/* How the answers of several workers are folded into the first one's
 * (MRCD_CTL_ROUTE_ALL; the others take one answer). */
enum mrcd_ctl_combine {
	MRCD_CTL_COMBINE_ONE = 0,  /* the first answer stands (the others agree) */
	MRCD_CTL_COMBINE_LIST,     /* arrays, concatenated in worker order */
	MRCD_CTL_COMBINE_PORTS,    /* the same ports in each: their counters add up */
	MRCD_CTL_COMBINE_STATUS,   /* QPs and clients add up; a peer's latest mask wins */
	MRCD_CTL_COMBINE_SUM,      /* every integer adds up, through nested objects */
};

/*
 * Commands, one row each: X(ENUM, name, args, route, combine, rights, help).
 *   name     the wire name (#name); the daemon's handler is cmd_<name>
 *   args     the argument spec in ctl_proto.c (args_<args>: keys, parser)
 *   route    MRCD_CTL_ROUTE_<route>; SESSION also means "needs a session"
 *   combine  MRCD_CTL_COMBINE_<combine>
 *   rights   MRCD_CTL_RIGHTS_<rights>: who may run it (docs/control.md,
 *            "Access"); checked in one place, mrcd_ctl_rights_check()
 *   help     one line for `mrcctl help`
 * A new command is a row here, an argument spec (or an existing one) and a
 * handler; a row without either does not compile. The order is the order of
 * `mrcctl help`.
 */
#define MRCD_CTL_CMDS(X)                                                        \
	X(VERSION, version, none, DAEMON, ONE, CLIENT, "protocol and daemon versions")  \
	X(STATUS, status, none, ALL, STATUS, ADMIN, "daemon summary: uptime, ports, QPs, lcores") \
	X(CONTROL, control, none, SOCKET, ONE, ADMIN, "the control socket: connections, limits, refusals") \
	X(PORTS, ports, none, ALL, PORTS, CLIENT, "every port (plane): link, addresses, gateways, counters") \
	X(NEIGHBOURS, neighbours, none, ALL, LIST, ADMIN, "every worker's neighbour table: next hops, gateways, state") \
	X(LCORES, lcores, none, ALL, LIST, ADMIN, "worker lcores: loops, idle time, queues") \
	X(QPS, qps, none, ALL, LIST, ADMIN, "every QP, one line each")                 \
	X(QP, qp, qp, QPN, ONE, ADMIN, "one QP in full: args {qpn}")                   \
	X(EVS, evs, qp, QPN, ONE, ADMIN, "one QP's EVs, state and counters: args {qpn}") \
	X(COUNTERS, counters, none, ALL, SUM, ADMIN, "engine and datapath counters")   \
	X(FAULTS, faults, none, WORKER0, ONE, ADMIN, "the fault-injection rules in force") \
	X(FAULT_SET, fault_set, fault_set, ALL, ONE, ADMIN, "add a fault rule: args {port, ...}") \
	X(FAULT_CLEAR, fault_clear, fault_clear, ALL, ONE, ADMIN, "remove fault rules: args {rule} or {port} or {}") \
	X(EV_DENY, ev_deny, ev_deny, QPN, ONE, ADMIN, "deny or allow one EV of a QP: args {qpn, ev, deny}") \
	X(PORT_ADMIN, port_admin, port_admin, ALL, ONE, ADMIN, "set a port admin up or down: args {port, up}") \
	X(LOG_LEVEL, log_level, log_level, DAEMON, ONE, ADMIN, "set the log level: args {level, type?}") \
	X(EV_PROBE, ev_probe, ev_probe, PEER, ONE, ADMIN, "probe one EV to a peer: args {node, port, ev}") \
	X(PROBES, probes, none, ALL, LIST, ADMIN, "the latest EV probe results")       \
	X(SELFTEST_LISTEN, selftest_listen, st_listen, PICK, ONE, ADMIN, "selftest: open a receiving side: args {region_bytes?, worker?, detach?}") \
	X(SELFTEST_START, selftest_start, st_start, PICK, ONE, ADMIN, "selftest: open a sending side: args {peer_info, bytes, ..., worker?, detach?}") \
	X(SELFTEST_ACCEPT, selftest_accept, st_accept, SELFTEST, ONE, ADMIN, "selftest: connect a receiving side: args {id, peer_info}") \
	X(SELFTEST_RUN, selftest_run, st_id, SELFTEST, ONE, ADMIN, "selftest: begin sending: args {id}") \
	X(SELFTEST_STATUS, selftest_status, st_id, SELFTEST, ONE, ADMIN, "selftest: progress and results: args {id}") \
	X(SELFTEST_STOP, selftest_stop, st_id, SELFTEST, ONE, ADMIN, "selftest: end one and free it: args {id}") \
	X(ATTACH, attach, attach, SOCKET, ONE, CLIENT, "client: create this connection's arena (fds in the reply): args {abi, heap_bytes?, sq_depth?, rq_depth?, cq_depth?}") \
	X(REG_MR, reg_mr, reg_mr, SESSION, ONE, CLIENT, "client: register arena heap bytes: args {ofs, len, access}") \
	X(DEREG_MR, dereg_mr, dereg_mr, SESSION, ONE, CLIENT, "client: deregister: args {lkey}") \
	X(QP_CREATE, qp_create, qp_create, SESSION, ONE, CLIENT, "client: create a QP: args {sq_depth?, rq_depth?, user_ctx?}") \
	X(QP_INFO, qp_info, qp, SESSION, ONE, CLIENT, "client: a QP's connection info: args {qpn}") \
	X(QP_CONNECT, qp_connect, qp_connect, SESSION, ONE, CLIENT, "client: connect a QP to its peer: args {qpn, peer_info}") \
	X(QP_DESTROY, qp_destroy, qp, SESSION, ONE, CLIENT, "client: destroy a QP: args {qpn}") \
	X(QP_QUERY, qp_query, qp, SESSION, ONE, CLIENT, "client: one of its QPs' state and why it failed (D70): args {qpn}")

enum mrcd_ctl_cmd {
	MRCD_CTL_INVALID = 0,
#define X(e, n, a, r, c, p, h) MRCD_CTL_##e,
	MRCD_CTL_CMDS(X)
#undef X
	MRCD_CTL_CMD_COUNT
};

/** A port reference: by name ("plane1") or by 1-based plane number. */
struct mrcd_ctl_port {
	uint8_t plane;                 /**< 1..32, or 0 when @name is set */
	char name[MRCD_CTL_NAME_MAX];  /**< "" when @plane is set */
};

/** An IPv4 or IPv6 address in network byte order (IPv4: a[0..3]). */
struct mrcd_ctl_ip {
	uint8_t family;                /**< 4 or 6 */
	uint8_t a[16];
};

/** A fault rule's direction, in requests and in the configuration (mrcd_config.h). */
enum mrcd_ctl_dir { MRCD_CTL_DIR_TX = 0, MRCD_CTL_DIR_RX, MRCD_CTL_DIR_BOTH };
enum mrcd_ctl_op { MRCD_CTL_OP_WRITE_IMM = 0, MRCD_CTL_OP_WRITE, MRCD_CTL_OP_MIXED, MRCD_CTL_OP_PING_PONG };

/** fault_set: every field optional except port; see docs/configuration.md
 *  `faults` for the meanings (the same ranges apply). */
struct mrcd_ctl_fault {
	struct mrcd_ctl_port port;
	uint32_t ev_min, ev_max;       /**< default 0, 0xffffffff; ev_min <= ev_max */
	enum mrcd_ctl_dir dir;         /**< "tx" (default), "rx", "both" */
	double drop_pct;               /**< 0..100 */
	bool blackhole;
	double delay_us, jitter_us;    /**< 0..1e6 */
	double reorder_pct, duplicate_pct, corrupt_pct, trim_pct, ecn_pct; /**< 0..100 */
};

/** One parsed, range-checked request. Only the member of @cmd is valid. */
struct mrcd_ctl_req {
	enum mrcd_ctl_cmd cmd;
	bool has_id;
	int64_t id;                    /**< echoed in the reply */
	/** What the command's route goes by: the QPN (ROUTE_QPN), the selftest
	 *  id (ROUTE_SELFTEST), "worker" or -1 when absent (ROUTE_PICK); other
	 *  routes ignore it. Set by the parser from the arguments below. */
	int64_t route_key;
	union {
		struct { uint32_t qpn; } qp;             /**< QP, EVS: 1..0xffffff */
		struct mrcd_ctl_fault fault_set;
		struct {                                 /**< FAULT_CLEAR */
			bool has_rule; uint32_t rule;    /**< one rule by id */
			bool has_port; struct mrcd_ctl_port port; /**< every rule of a port */
		} fault_clear;                           /**< neither: every rule */
		struct { uint32_t qpn; uint32_t ev; bool deny; } ev_deny;
		struct { struct mrcd_ctl_port port; bool up; } port_admin;
		struct {
			char level[16];          /**< "emerg".."debug" (rte_log names) */
			char type[64];           /**< "" = every mrcd.* type; else a
						      type name matching ^mrcd(\.[a-z_]+)*$ */
		} log_level;
		struct {
			struct mrcd_ctl_ip node; /**< the peer's node address */
			struct mrcd_ctl_port port;
			uint32_t ev;
		} ev_probe;
		struct {                         /**< SELFTEST_LISTEN */
			uint64_t region_bytes;   /**< default 64 MiB; 1 MiB..1 GiB */
			int worker;              /**< "worker": 0..3, -1 (absent) = the least busy */
			bool detach;             /**< "detach": outlive the control connection */
		} st_listen;
		struct {                         /**< SELFTEST_START */
			uint8_t peer_info[MRCD_CTL_CONN_INFO_LEN]; /**< from "peer_info": 416 hex digits */
			uint64_t bytes;          /**< total to move, 1..2^40 */
			uint32_t msg_size;       /**< default 65536; 64..16 MiB */
			uint32_t window;         /**< messages in flight, default 16; 1..256 */
			enum mrcd_ctl_op op;     /**< "write_imm" (default), "write", "mixed", "ping_pong" */
			int worker;              /**< "worker": 0..3, -1 (absent) = the least busy */
			bool detach;             /**< "detach": outlive the control connection */
		} st_start;
		struct {                         /**< SELFTEST_ACCEPT */
			uint32_t id;
			uint8_t peer_info[MRCD_CTL_CONN_INFO_LEN];
		} st_accept;
		struct { uint32_t id; } st;      /**< SELFTEST_RUN, _STATUS, _STOP */
		struct {                         /**< ATTACH (docs/control.md, clients) */
			uint32_t abi;            /**< the client's MRC_SHM_ABI_VERSION (required) */
			uint64_t heap_bytes;     /**< default 64 MiB; 4 KiB..64 GiB (the
						      daemon also applies limits.per_client) */
			uint32_t sq_depth, rq_depth, cq_depth; /**< power of two, 64..1M;
						      defaults 4096, 4096, 8192 */
		} attach;
		struct { uint64_t ofs, len; uint32_t access; } reg_mr; /**< access: bits 0..1 */
		struct { uint32_t lkey; } dereg_mr;
		struct {                         /**< QP_CREATE */
			uint32_t sq_depth, rq_depth; /**< 0 = default; else 1..65536 */
			uint64_t user_ctx;
		} qp_create;
		struct {                         /**< QP_CONNECT */
			uint32_t qpn;
			uint8_t peer_info[MRCD_CTL_CONN_INFO_LEN];
		} qp_connect;                    /**< QP_INFO, QP_DESTROY, QP_QUERY use qp */
	};
};

/**
 * Parse one request (@len bytes, not necessarily NUL-terminated; a trailing
 * '\n' is allowed). Checks: valid JSON object; "v" present and equal to
 * MRCD_CTL_PROTO_VERSION; "cmd" a known name; "id" (optional) an integer; "args"
 * (optional, default {}) an object with only the keys the command takes,
 * every required key present, every value of the right type and in range.
 * Unknown top-level keys are rejected.
 *
 * @param reason  on failure, a one-line message ("args.qpn: must be an
 *                integer in 1..16777215", "unknown command \"foo\"", ...)
 * @return 0; -EINVAL (bad request), -EPROTO (version mismatch), -ENOENT
 *         (unknown command), -E2BIG (@len > MRCD_CTL_LINE_MAX). On failure
 *         @req->has_id/@req->id are still set if an integer "id" was found,
 *         so the error reply can echo it.
 */
int mrcd_ctl_parse(const char *line, size_t len, struct mrcd_ctl_req *req,
		   char *reason, size_t reason_len);

/** "version", ... ; NULL for an invalid enum value. */
const char *mrcd_ctl_cmd_name(enum mrcd_ctl_cmd c);
/** The one-line help of @c; NULL for an invalid enum value. */
const char *mrcd_ctl_cmd_help(enum mrcd_ctl_cmd c);
/** How the daemon runs @c (its row's route; DAEMON for an invalid value). */
enum mrcd_ctl_route mrcd_ctl_cmd_route(enum mrcd_ctl_cmd c);
/** How several workers' answers to @c are folded (its row's combine). */
enum mrcd_ctl_combine mrcd_ctl_cmd_combine(enum mrcd_ctl_cmd c);
/** Who may run @c (its row's rights; ADMIN for an invalid value). */
enum mrcd_ctl_rights mrcd_ctl_cmd_rights(enum mrcd_ctl_cmd c);
/** Does @c act on the caller's client session (route SESSION)? */
bool mrcd_ctl_cmd_needs_session(enum mrcd_ctl_cmd c);
/** The command of a wire name, or MRCD_CTL_INVALID. */
enum mrcd_ctl_cmd mrcd_ctl_cmd_lookup(const char *name);

/** The name of errno @e ("EINVAL" for EINVAL), or NULL if @e is not one of
 *  MRCD_CTL_ERRNOS. */
const char *mrcd_ctl_errno_name(int e);

/**
 * Encode one reply line, '\n' included, for a request with @has_id / @id
 * (echoed when set): {"v":1,"id":..,"ok":true,"result":@result} when @err is
 * 0 ({} for a NULL @result), else {"v":1,"id":..,"ok":false,"error":{"errno":
 * -@err,"code":<name, EIO outside MRCD_CTL_ERRNOS>,"reason":@reason, or
 * strerror(-@err) when @reason is NULL or empty}}. Compact JSON, keys in that
 * order. @result is not consumed. @return a malloc'd string, or NULL (out of
 * memory).
 */
char *mrcd_ctl_format_reply(bool has_id, int64_t id, const struct json_t *result, int err,
			    const char *reason);

/** Lower-case hex of @n bytes into @out (2n+1 bytes with NUL). */
void mrcd_ctl_hex_encode(const uint8_t *in, size_t n, char *out);
/** @return 0, or -EINVAL unless @hex is exactly 2n hex digits. */
int mrcd_ctl_hex_decode(const char *hex, uint8_t *out, size_t n);

#endif
