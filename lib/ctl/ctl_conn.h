/* ctl_conn.h - one connection to mrcd's control socket, without DPDK
 * (docs/control.md, "Connections" and "Access"): who the peer is and which
 * commands it may run (by the socket it came through), the framing of its request lines, a bounded queue of
 * its replies written without ever blocking (with the descriptors an attach
 * reply carries), and whether a new connection is let in. The daemon's
 * ctl_server.c owns the listening socket, the poll loop and the client
 * sessions; this module touches only the descriptors it is given, never
 * blocks and never reads a clock (times are arguments, in ns).
 */
#ifndef MRCD_CTL_CONN_H
#define MRCD_CTL_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mrcd_ctl.h"

/* Unsent reply bytes a connection may have when another reply is due; past
 * this the peer is not reading and the connection is closed. One reply is
 * always queued whole, however long. */
#define MRCD_CTL_OUT_MAX (1u << 20)
#define MRCD_CTL_RAW_MAX 4096u  /* bytes taken from the socket at once */
#define MRCD_CTL_FDS_MAX 3u     /* descriptors one reply carries (attach) */

/** The process at the other end (SO_PEERCRED when it connected) and the
 *  socket it came through, which decides its rights. */
struct mrcd_ctl_peer {
	uint32_t pid, uid, gid;
	bool admin;               /**< came through the admin socket (control.socket) */
};

/**
 * May @p run @cmd? Its row's rights (MRCD_CTL_CMDS): CLIENT commands on
 * either socket, ADMIN ones only on the admin socket. The one place the
 * daemon checks rights.
 * @return 0, or -EPERM with @reason ("port_admin: an admin command; ...").
 */
int mrcd_ctl_rights_check(enum mrcd_ctl_cmd cmd, const struct mrcd_ctl_peer *p,
			  char *reason, size_t reason_len);

/**
 * Let a new connection in? @n_open connections are open, @n_client_open of
 * them on the client socket. Those share @max - @admin_reserved slots; the
 * admin socket's may take any of the @max.
 * @return 0, or -EBUSY (for an admin: every slot is taken; the caller may
 * close an idle connection to make room).
 */
int mrcd_ctl_admit(unsigned max, unsigned admin_reserved, unsigned n_open, unsigned n_client_open,
		   bool admin);

/** One connection. Every field is the control thread's. */
struct mrcd_ctl_conn {
	int fd;                   /**< -1: not in use */
	struct mrcd_ctl_peer peer;
	uint64_t last_ns;         /**< when a byte last moved either way (or it was opened), ns */
	size_t out_max;           /**< MRCD_CTL_OUT_MAX, or less in tests */
	/* requests: raw[raw_off, raw_len) read but not yet framed; line[] the
	 * line being assembled */
	char raw[MRCD_CTL_RAW_MAX];
	size_t raw_off, raw_len;
	bool eof;                 /**< the peer closed its end: close once replies are sent */
	char *line;               /**< MRCD_CTL_LINE_MAX bytes */
	size_t line_len;
	bool overflow;            /**< discarding an over-long line up to its '\n' */
	/* replies: out[out_off, out_len) not yet sent */
	char *out;
	size_t out_off, out_len, out_cap;
	int fds[MRCD_CTL_FDS_MAX]; /**< our copies, sent with the byte at out[fds_at] */
	unsigned n_fds;
	size_t fds_at;
};

/** Take @fd (non-blocking, connected) from @peer at @now_ns.
 *  @return 0, or -ENOMEM (then @fd is not taken). */
int mrcd_ctl_conn_open(struct mrcd_ctl_conn *c, int fd, const struct mrcd_ctl_peer *peer,
		       uint64_t now_ns);
/** Close the socket and any descriptors not sent, free the buffers; the
 *  slot reads as not in use. Idempotent. */
void mrcd_ctl_conn_close(struct mrcd_ctl_conn *c);

/** Read what the socket has, unless earlier bytes are still to be framed.
 *  @return bytes read; 0: nothing now, framing pending, or the peer closed
 *  its end (@c->eof set: frame what was read, send the replies, then
 *  close); -EPIPE: the socket failed. */
int mrcd_ctl_conn_read(struct mrcd_ctl_conn *c, uint64_t now_ns);
/** Are bytes read but not yet framed (call mrcd_ctl_conn_next before
 *  reading or waiting again)? */
bool mrcd_ctl_conn_has_input(const struct mrcd_ctl_conn *c);
/**
 * The next request line from what was read: empty lines are skipped, a
 * line of MRCD_CTL_LINE_MAX bytes or more is discarded up to its end.
 * @return 1 with *@line (NUL-terminated, valid until the next call) and
 * *@len; 0 when the bytes read end inside a line; -E2BIG when an over-long
 * line ended (answer it with E2BIG).
 */
int mrcd_ctl_conn_next(struct mrcd_ctl_conn *c, const char **line, size_t *len);

/**
 * Queue one reply of @n bytes, with @n_fds descriptors (duplicated: the
 * caller keeps its own) sent with its first byte, and send what the socket
 * takes now.
 * @return 0; -ENOBUFS when more than out_max bytes were still unsent (the
 * peer does not read: close it); -ENOMEM; -EPIPE (the peer is gone); -EINVAL
 * for more than MRCD_CTL_FDS_MAX descriptors or a second set while one is
 * queued.
 */
int mrcd_ctl_conn_reply(struct mrcd_ctl_conn *c, const char *p, size_t n, const int *fds,
			unsigned n_fds, uint64_t now_ns);
/** Send what the socket takes without blocking. @return 0 (all sent, or
 *  the socket is full), -EPIPE (the peer is gone). */
int mrcd_ctl_conn_flush(struct mrcd_ctl_conn *c, uint64_t now_ns);
/** Reply bytes not yet sent. */
size_t mrcd_ctl_conn_pending(const struct mrcd_ctl_conn *c);

#endif
