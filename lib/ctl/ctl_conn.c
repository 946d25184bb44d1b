/* ctl_conn.c - one control connection (ctl_conn.h): the peer's rights, the
 * admission rule, request framing and a reply queue that never blocks. A
 * peer that stops reading costs at most out_max bytes plus one reply, and
 * then its connection; it never holds up the thread that serves everyone.
 * Knows no command but by its row's rights; never prints.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ctl_conn.h"

/* ---- access ------------------------------------------------------------------------ */

int mrcd_ctl_rights_check(enum mrcd_ctl_cmd cmd, const struct mrcd_ctl_peer *p,
			  char *reason, size_t reason_len)
{
	const char *name = mrcd_ctl_cmd_name(cmd);

	if (mrcd_ctl_cmd_rights(cmd) == MRCD_CTL_RIGHTS_CLIENT || p->admin)
		return 0;
	snprintf(reason, reason_len, "%s: an admin command, and this is the client socket "
		 "(control.client_socket); admin commands take the admin socket (control.socket)",
		 name ? name : "?");
	return -EPERM;
}

int mrcd_ctl_admit(unsigned max, unsigned admin_reserved, unsigned n_open, unsigned n_client_open,
		   bool admin)
{
	if (n_open >= max)
		return -EBUSY;
	/* clients stay below max - admin_reserved: the reserved slots are
	 * free or held by admins, whatever the clients do */
	if (!admin && n_client_open + admin_reserved >= max)
		return -EBUSY;
	return 0;
}

/* ---- the connection ---------------------------------------------------------------- */

int mrcd_ctl_conn_open(struct mrcd_ctl_conn *c, int fd, const struct mrcd_ctl_peer *peer,
		       uint64_t now_ns)
{
	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->line = malloc(MRCD_CTL_LINE_MAX);
	if (c->line == NULL)
		return -ENOMEM;
	c->fd = fd;
	c->peer = *peer;
	c->last_ns = now_ns;
	c->out_max = MRCD_CTL_OUT_MAX;
	return 0;
}

static void drop_fds(struct mrcd_ctl_conn *c)
{
	for (unsigned i = 0; i < c->n_fds; i++)
		close(c->fds[i]);
	c->n_fds = 0;
}

void mrcd_ctl_conn_close(struct mrcd_ctl_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	drop_fds(c);
	free(c->line);
	free(c->out);
	c->line = c->out = NULL;
	c->line_len = c->raw_off = c->raw_len = 0;
	c->out_off = c->out_len = c->out_cap = 0;
	c->overflow = c->eof = false;
}

/* ---- requests ---------------------------------------------------------------------- */

int mrcd_ctl_conn_read(struct mrcd_ctl_conn *c, uint64_t now_ns)
{
	ssize_t r;

	if (c->raw_off < c->raw_len || c->eof)
		return 0;
	c->raw_off = c->raw_len = 0;
	do
		r = recv(c->fd, c->raw, sizeof(c->raw), MSG_DONTWAIT);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -EPIPE;
	if (r == 0) {
		c->eof = true;
		return 0;
	}
	c->raw_len = (size_t)r;
	c->last_ns = now_ns;
	return (int)r;
}

bool mrcd_ctl_conn_has_input(const struct mrcd_ctl_conn *c)
{
	return c->raw_off < c->raw_len;
}

int mrcd_ctl_conn_next(struct mrcd_ctl_conn *c, const char **line, size_t *len)
{
	while (c->raw_off < c->raw_len) {
		char ch = c->raw[c->raw_off++];

		if (ch == '\n') {
			if (c->overflow) {
				c->overflow = false;
				c->line_len = 0;
				return -E2BIG;
			}
			if (c->line_len == 0)
				continue;
			c->line[c->line_len] = '\0';
			*line = c->line;
			*len = c->line_len;
			c->line_len = 0;
			return 1;
		}
		if (c->overflow)
			continue;
		if (c->line_len + 1 >= MRCD_CTL_LINE_MAX) {
			c->overflow = true;
			c->line_len = 0;
			continue;
		}
		c->line[c->line_len++] = ch;
	}
	return 0;
}

/* ---- replies ----------------------------------------------------------------------- */

size_t mrcd_ctl_conn_pending(const struct mrcd_ctl_conn *c)
{
	return c->out_len - c->out_off;
}

/* Room for @n more bytes at out[out_len]: sent bytes dropped first. */
static int out_room(struct mrcd_ctl_conn *c, size_t n)
{
	if (c->out_off > 0) {
		memmove(c->out, c->out + c->out_off, c->out_len - c->out_off);
		c->out_len -= c->out_off;
		if (c->n_fds)
			c->fds_at -= c->out_off;
		c->out_off = 0;
	}
	if (c->out_cap - c->out_len < n) {
		size_t cap = c->out_cap ? c->out_cap : 4096;
		char *b;

		while (cap - c->out_len < n)
			cap *= 2;
		b = realloc(c->out, cap);
		if (b == NULL)
			return -ENOMEM;
		c->out = b;
		c->out_cap = cap;
	}
	return 0;
}

int mrcd_ctl_conn_reply(struct mrcd_ctl_conn *c, const char *p, size_t n, const int *fds,
			unsigned n_fds, uint64_t now_ns)
{
	int dups[MRCD_CTL_FDS_MAX];

	if (n_fds > MRCD_CTL_FDS_MAX || (n_fds > 0 && c->n_fds > 0) || (n_fds > 0 && n == 0))
		return -EINVAL;
	if (mrcd_ctl_conn_pending(c) > c->out_max)
		return -ENOBUFS;
	if (out_room(c, n) < 0)
		return -ENOMEM;
	for (unsigned i = 0; i < n_fds; i++) {
		dups[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 0);
		if (dups[i] < 0) {
			int e = errno;

			while (i > 0)
				close(dups[--i]);
			return -e;
		}
	}
	if (n_fds) {
		memcpy(c->fds, dups, n_fds * sizeof(int));
		c->n_fds = n_fds;
		c->fds_at = c->out_len;
	}
	memcpy(c->out + c->out_len, p, n);
	c->out_len += n;
	return mrcd_ctl_conn_flush(c, now_ns);
}

/* sendmsg of out[out_off, end) with the queued descriptors (SCM_RIGHTS). */
static ssize_t send_with_fds(struct mrcd_ctl_conn *c, size_t end)
{
	union {
		char buf[CMSG_SPACE(MRCD_CTL_FDS_MAX * sizeof(int))];
		struct cmsghdr align;
	} cbuf;
	struct iovec iov = {c->out + c->out_off, end - c->out_off};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf.buf,
			    .msg_controllen = CMSG_SPACE(c->n_fds * sizeof(int))};
	struct cmsghdr *cm;

	memset(&cbuf, 0, sizeof(cbuf));
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(c->n_fds * sizeof(int));
	memcpy(CMSG_DATA(cm), c->fds, c->n_fds * sizeof(int));
	return sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
}

int mrcd_ctl_conn_flush(struct mrcd_ctl_conn *c, uint64_t now_ns)
{
	while (c->out_off < c->out_len) {
		bool with_fds = c->n_fds > 0 && c->out_off == c->fds_at;
		size_t end = c->n_fds > 0 && c->out_off < c->fds_at ? c->fds_at : c->out_len;
		ssize_t w = with_fds ? send_with_fds(c, end)
				     : send(c->fd, c->out + c->out_off, end - c->out_off,
					    MSG_NOSIGNAL | MSG_DONTWAIT);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (w <= 0)
			return -EPIPE;
		if (with_fds)
			drop_fds(c); /* the peer has its own copies now */
		c->out_off += (size_t)w;
		c->last_ns = now_ns;
	}
	if (c->out_off == c->out_len)
		c->out_off = c->out_len = 0;
	return 0;
}
