/* test_ctl_conn.c - unit tests for ctl_conn.c (ctl_conn.h): the rights
 * column of the command table and its one check, the admission
 * rule with the admin reserve, request framing, and the reply queue against
 * a peer (a socketpair) that does not read: it never blocks, it keeps at
 * most out_max bytes plus one reply, and an attach reply's descriptors
 * arrive with that reply's bytes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl_conn.h"
#include "mrcp_test.h"

static const struct mrcd_ctl_peer client_peer = {.pid = 1, .uid = 65534, .gid = 65534};
static const struct mrcd_ctl_peer admin_peer = {.pid = 1, .uid = 0, .gid = 0, .admin = true};

/* ---- access ------------------------------------------------------------------------ */

/* The documented split (docs/control.md, "Access"): a change here is a
 * change of the security model and of that table. */
TEST(ctl_conn, rights__client_commands_are_exactly_the_documented_ones)
{
	static const enum mrcd_ctl_cmd client[] = {
		MRCD_CTL_VERSION, MRCD_CTL_PORTS, MRCD_CTL_ATTACH, MRCD_CTL_REG_MR, MRCD_CTL_DEREG_MR,
		MRCD_CTL_QP_CREATE, MRCD_CTL_QP_INFO, MRCD_CTL_QP_CONNECT, MRCD_CTL_QP_DESTROY,
	};
	unsigned n = 0;

	for (unsigned c = MRCD_CTL_INVALID + 1; c < MRCD_CTL_CMD_COUNT; c++) {
		enum mrcd_ctl_rights r = mrcd_ctl_cmd_rights((enum mrcd_ctl_cmd)c);

		ASSERT_TRUE(r == MRCD_CTL_RIGHTS_ADMIN || r == MRCD_CTL_RIGHTS_CLIENT);
		n += r == MRCD_CTL_RIGHTS_CLIENT;
	}
	ASSERT_EQ(sizeof(client) / sizeof(client[0]), n);
	for (unsigned i = 0; i < sizeof(client) / sizeof(client[0]); i++)
		ASSERT_EQ(MRCD_CTL_RIGHTS_CLIENT, mrcd_ctl_cmd_rights(client[i]));
	/* every session command is a client's */
	for (unsigned c = MRCD_CTL_INVALID + 1; c < MRCD_CTL_CMD_COUNT; c++)
		if (mrcd_ctl_cmd_needs_session((enum mrcd_ctl_cmd)c))
			ASSERT_EQ(MRCD_CTL_RIGHTS_CLIENT, mrcd_ctl_cmd_rights((enum mrcd_ctl_cmd)c));
	/* default deny outside the table */
	ASSERT_EQ(MRCD_CTL_RIGHTS_ADMIN, mrcd_ctl_cmd_rights(MRCD_CTL_INVALID));
	ASSERT_EQ(MRCD_CTL_RIGHTS_ADMIN, mrcd_ctl_cmd_rights(MRCD_CTL_CMD_COUNT));
	ASSERT_EQ(MRCD_CTL_RIGHTS_ADMIN, mrcd_ctl_cmd_rights((enum mrcd_ctl_cmd)1000));
}

TEST(ctl_conn, rights_check__a_client_is_refused_every_admin_command)
{
	char reason[MRCD_CTL_REASON_MAX];

	for (unsigned c = MRCD_CTL_INVALID + 1; c < MRCD_CTL_CMD_COUNT; c++) {
		enum mrcd_ctl_cmd cmd = (enum mrcd_ctl_cmd)c;
		bool admin_only = mrcd_ctl_cmd_rights(cmd) == MRCD_CTL_RIGHTS_ADMIN;

		reason[0] = '\0';
		ASSERT_EQ(admin_only ? -EPERM : 0, mrcd_ctl_rights_check(cmd, &client_peer, reason, sizeof(reason)));
		if (admin_only) {
			ASSERT_TRUE(strncmp(reason, mrcd_ctl_cmd_name(cmd), strlen(mrcd_ctl_cmd_name(cmd))) == 0);
			ASSERT_TRUE(strstr(reason, "an admin command") != NULL);
			/* one whole line, not cut */
			ASSERT_LT(strlen(reason), sizeof(reason) - 1);
			ASSERT_TRUE(strstr(reason, "(control.socket)") != NULL);
		}
		ASSERT_EQ(0, mrcd_ctl_rights_check(cmd, &admin_peer, reason, sizeof(reason)));
	}
	ASSERT_EQ(-EPERM, mrcd_ctl_rights_check(MRCD_CTL_INVALID, &client_peer, reason, sizeof(reason)));
}

TEST(ctl_conn, admit__clients_leave_the_reserve_admins_take_any_slot)
{
	/* max 10, 2 reserved: clients up to 8 */
	ASSERT_EQ(0, mrcd_ctl_admit(10, 2, 7, 7, false));
	ASSERT_EQ(-EBUSY, mrcd_ctl_admit(10, 2, 8, 8, false));
	ASSERT_EQ(0, mrcd_ctl_admit(10, 2, 8, 8, true));
	ASSERT_EQ(0, mrcd_ctl_admit(10, 2, 9, 8, true));
	ASSERT_EQ(-EBUSY, mrcd_ctl_admit(10, 2, 10, 8, true));
	/* admins beyond the reserve: a client may still have its share */
	ASSERT_EQ(0, mrcd_ctl_admit(10, 2, 9, 0, false));
	ASSERT_EQ(-EBUSY, mrcd_ctl_admit(10, 2, 10, 0, false));
}

/* ---- framing ----------------------------------------------------------------------- */

static int pair[2];

static void conn_pair(struct mrcd_ctl_conn *c, const struct mrcd_ctl_peer *p)
{
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, pair));
	ASSERT_EQ(0, mrcd_ctl_conn_open(c, pair[0], p, 5));
	ASSERT_EQ(5u, c->last_ns);
}

static void put_n(const char *s, size_t n)
{
	ASSERT_EQ((ssize_t)n, write(pair[1], s, n));
}

static void put(const char *s)
{
	put_n(s, strlen(s));
}

TEST(ctl_conn, next__lines_split_across_reads_and_empty_lines_skipped)
{
	struct mrcd_ctl_conn c;
	const char *l;
	size_t n;

	conn_pair(&c, &client_peer);
	ASSERT_EQ(0, mrcd_ctl_conn_read(&c, 10)); /* nothing yet */
	put("{\"a\":1}\n\n{\"b\"");
	ASSERT_EQ(13, mrcd_ctl_conn_read(&c, 20));
	ASSERT_EQ(20u, c.last_ns);
	ASSERT_EQ(1, mrcd_ctl_conn_next(&c, &l, &n));
	ASSERT_STREQ("{\"a\":1}", l);
	ASSERT_EQ(7u, n);
	ASSERT_EQ(0, mrcd_ctl_conn_next(&c, &l, &n));
	ASSERT_FALSE(mrcd_ctl_conn_has_input(&c));
	put(":2}\n");
	ASSERT_EQ(4, mrcd_ctl_conn_read(&c, 30));
	ASSERT_EQ(1, mrcd_ctl_conn_next(&c, &l, &n));
	ASSERT_STREQ("{\"b\":2}", l);
	close(pair[1]);
	ASSERT_EQ(0, mrcd_ctl_conn_read(&c, 40));
	ASSERT_TRUE(c.eof);
	ASSERT_EQ(30u, c.last_ns);
	mrcd_ctl_conn_close(&c);
	mrcd_ctl_conn_close(&c); /* idempotent */
}

TEST(ctl_conn, read__waits_until_earlier_bytes_are_framed)
{
	struct mrcd_ctl_conn c;
	const char *l;
	size_t n;

	conn_pair(&c, &client_peer);
	put("x\ny\n");
	ASSERT_EQ(4, mrcd_ctl_conn_read(&c, 1));
	ASSERT_EQ(1, mrcd_ctl_conn_next(&c, &l, &n));
	ASSERT_TRUE(mrcd_ctl_conn_has_input(&c));
	put("z\n");
	ASSERT_EQ(0, mrcd_ctl_conn_read(&c, 2)); /* "y\n" first */
	ASSERT_EQ(1, mrcd_ctl_conn_next(&c, &l, &n));
	ASSERT_STREQ("y", l);
	ASSERT_EQ(2, mrcd_ctl_conn_read(&c, 3));
	ASSERT_EQ(1, mrcd_ctl_conn_next(&c, &l, &n));
	ASSERT_STREQ("z", l);
	close(pair[1]);
	mrcd_ctl_conn_close(&c);
}

TEST(ctl_conn, next__an_over_long_line_is_e2big_once_then_framing_resumes)
{
	struct mrcd_ctl_conn c;
	char chunk[MRCD_CTL_RAW_MAX];
	size_t sent = 0, n;
	const char *l;
	int rc = 0;

	conn_pair(&c, &client_peer);
	memset(chunk, 'a', sizeof(chunk));
	/* MRCD_CTL_LINE_MAX bytes before the '\n': one too many */
	while (sent < MRCD_CTL_LINE_MAX) {
		size_t k = MRCD_CTL_LINE_MAX - sent < sizeof(chunk) ? MRCD_CTL_LINE_MAX - sent : sizeof(chunk);

		put_n(chunk, k);
		sent += k;
		ASSERT_EQ((int)k, mrcd_ctl_conn_read(&c, 1));
		ASSERT_EQ(0, mrcd_ctl_conn_next(&c, &l, &n));
	}
	put("\nok\n");
	ASSERT_EQ(4, mrcd_ctl_conn_read(&c, 1));
	rc = mrcd_ctl_conn_next(&c, &l, &n);
	ASSERT_EQ(-E2BIG, rc);
	ASSERT_EQ(1, mrcd_ctl_conn_next(&c, &l, &n));
	ASSERT_STREQ("ok", l);
	close(pair[1]);
	mrcd_ctl_conn_close(&c);
}

TEST(ctl_conn, next__the_longest_line_allowed_passes)
{
	struct mrcd_ctl_conn c;
	char chunk[MRCD_CTL_RAW_MAX];
	size_t sent = 0, n = 0;
	const char *l;

	conn_pair(&c, &client_peer);
	memset(chunk, 'b', sizeof(chunk));
	while (sent < MRCD_CTL_LINE_MAX - 1) {
		size_t k = MRCD_CTL_LINE_MAX - 1 - sent < sizeof(chunk) ? MRCD_CTL_LINE_MAX - 1 - sent : sizeof(chunk);

		put_n(chunk, k);
		sent += k;
		ASSERT_EQ((int)k, mrcd_ctl_conn_read(&c, 1));
		ASSERT_EQ(0, mrcd_ctl_conn_next(&c, &l, &n));
	}
	put("\n");
	ASSERT_EQ(1, mrcd_ctl_conn_read(&c, 1));
	ASSERT_EQ(1, mrcd_ctl_conn_next(&c, &l, &n));
	ASSERT_EQ((size_t)MRCD_CTL_LINE_MAX - 1, n);
	close(pair[1]);
	mrcd_ctl_conn_close(&c);
}

/* ---- replies ----------------------------------------------------------------------- */

/* Read everything the peer end holds; @return the byte count. */
static size_t drain(void)
{
	char buf[65536];
	size_t total = 0;
	ssize_t r;

	while ((r = read(pair[1], buf, sizeof(buf))) > 0)
		total += (size_t)r;
	return total;
}

TEST(ctl_conn, reply__a_peer_that_does_not_read_costs_out_max_plus_one_reply)
{
	struct mrcd_ctl_conn c;
	char rep[1000];
	unsigned queued = 0;
	int rc;

	conn_pair(&c, &client_peer);
	c.out_max = 64 * 1024;
	memset(rep, 'r', sizeof(rep));
	rep[sizeof(rep) - 1] = '\n';
	/* never blocks: the socket fills, then our queue, then -ENOBUFS */
	while ((rc = mrcd_ctl_conn_reply(&c, rep, sizeof(rep), NULL, 0, 7)) == 0)
		queued++;
	ASSERT_EQ(-ENOBUFS, rc);
	ASSERT_GT(mrcd_ctl_conn_pending(&c), c.out_max);
	ASSERT_LE(mrcd_ctl_conn_pending(&c), c.out_max + sizeof(rep));
	ASSERT_EQ(7u, c.last_ns);
	/* what the peer can read plus what is queued is every reply accepted */
	size_t got = drain();

	ASSERT_EQ(0, mrcd_ctl_conn_flush(&c, 9));
	got += drain();
	ASSERT_EQ(0, mrcd_ctl_conn_flush(&c, 9));
	while (mrcd_ctl_conn_pending(&c) > 0) {
		got += drain();
		ASSERT_EQ(0, mrcd_ctl_conn_flush(&c, 9));
	}
	got += drain();
	ASSERT_EQ((size_t)queued * sizeof(rep), got);
	ASSERT_EQ(9u, c.last_ns);
	/* a reader again: replies are accepted again */
	ASSERT_EQ(0, mrcd_ctl_conn_reply(&c, rep, sizeof(rep), NULL, 0, 10));
	close(pair[1]);
	mrcd_ctl_conn_close(&c);
}

TEST(ctl_conn, reply__one_long_reply_is_queued_whole)
{
	struct mrcd_ctl_conn c;
	size_t big = 4u << 20, got = 0;
	char *rep = malloc(big);

	ASSERT_TRUE(rep != NULL);
	memset(rep, 'q', big);
	conn_pair(&c, &client_peer);
	c.out_max = 64 * 1024;
	ASSERT_EQ(0, mrcd_ctl_conn_reply(&c, rep, big, NULL, 0, 1));
	ASSERT_GT(mrcd_ctl_conn_pending(&c), c.out_max);
	ASSERT_EQ(-ENOBUFS, mrcd_ctl_conn_reply(&c, "x\n", 2, NULL, 0, 1));
	while (got < big) {
		got += drain();
		ASSERT_EQ(0, mrcd_ctl_conn_flush(&c, 2));
	}
	ASSERT_EQ(big, got);
	ASSERT_EQ(0u, mrcd_ctl_conn_pending(&c));
	free(rep);
	close(pair[1]);
	mrcd_ctl_conn_close(&c);
}

TEST(ctl_conn, reply__a_closed_peer_is_epipe)
{
	struct mrcd_ctl_conn c;

	conn_pair(&c, &client_peer);
	close(pair[1]);
	ASSERT_EQ(-EPIPE, mrcd_ctl_conn_reply(&c, "x\n", 2, NULL, 0, 1));
	mrcd_ctl_conn_close(&c);
}

/* recvmsg one chunk: its bytes into @buf, its descriptors into @fds. */
static ssize_t recv_fds(char *buf, size_t cap, int *fds, unsigned *n_fds)
{
	union {
		char b[CMSG_SPACE(8 * sizeof(int))];
		struct cmsghdr align;
	} cbuf;
	struct iovec iov = {buf, cap};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf.b,
			    .msg_controllen = sizeof(cbuf.b)};
	ssize_t r = recvmsg(pair[1], &mh, MSG_CMSG_CLOEXEC);

	*n_fds = 0;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); r > 0 && cm != NULL; cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
			*n_fds = (unsigned)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
			memcpy(fds, CMSG_DATA(cm), *n_fds * sizeof(int));
		}
	return r;
}

TEST(ctl_conn, reply__descriptors_arrive_with_their_reply_after_a_backlog)
{
	struct mrcd_ctl_conn c;
	char *first = malloc(1u << 20), buf[65536];
	int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC), fds[3] = {devnull, devnull, devnull};
	int got_fds[8];
	unsigned n_fds = 0, seen = 0;
	size_t at = 0, got_at = (size_t)-1;
	ssize_t r;

	ASSERT_TRUE(first != NULL && devnull >= 0);
	memset(first, 'f', 1u << 20);
	conn_pair(&c, &client_peer);
	/* 1 MiB the peer has not read, then the attach-like reply */
	ASSERT_EQ(0, mrcd_ctl_conn_reply(&c, first, 1u << 20, NULL, 0, 1));
	ASSERT_GT(mrcd_ctl_conn_pending(&c), 0u);
	ASSERT_EQ(0, mrcd_ctl_conn_reply(&c, "ATTACH\n", 7, fds, 3, 1));
	ASSERT_EQ(-EINVAL, mrcd_ctl_conn_reply(&c, "again\n", 6, fds, 1, 1));
	close(devnull); /* the queue holds its own copies */
	while (at < (1u << 20) + 7) {
		r = recv_fds(buf, sizeof(buf), got_fds, &n_fds);
		if (r < 0) {
			ASSERT_EQ(EAGAIN, errno);
			ASSERT_EQ(0, mrcd_ctl_conn_flush(&c, 2));
			continue;
		}
		ASSERT_GT(r, 0);
		if (n_fds) {
			/* a read stops after the bytes the descriptors came with,
			 * the start of their reply; earlier bytes may come along */
			got_at = at + (size_t)r - 7;
			seen += n_fds;
			ASSERT_TRUE(at <= (1u << 20) && (size_t)r >= 7);
			ASSERT_MEMEQ("ATTACH\n", buf + r - 7, 7);
			for (unsigned i = 0; i < n_fds; i++) {
				struct stat st;

				ASSERT_EQ(0, fstat(got_fds[i], &st));
				ASSERT_TRUE(S_ISCHR(st.st_mode));
				close(got_fds[i]);
			}
		}
		at += (size_t)r;
	}
	ASSERT_EQ((size_t)1u << 20, got_at);
	ASSERT_EQ(3u, seen);
	ASSERT_EQ(0u, c.n_fds);
	free(first);
	close(pair[1]);
	mrcd_ctl_conn_close(&c);
}

TEST(ctl_conn, close__drops_descriptors_never_sent)
{
	struct mrcd_ctl_conn c;
	char *first = malloc(1u << 20);
	int p[2];
	char b;

	ASSERT_TRUE(first != NULL);
	memset(first, 'f', 1u << 20);
	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	conn_pair(&c, &client_peer);
	ASSERT_EQ(0, mrcd_ctl_conn_reply(&c, first, 1u << 20, NULL, 0, 1));
	ASSERT_EQ(0, mrcd_ctl_conn_reply(&c, "A\n", 2, &p[1], 1, 1));
	ASSERT_EQ(1u, c.n_fds);
	close(p[1]);
	mrcd_ctl_conn_close(&c);
	/* every write end is closed: the read end sees EOF */
	ASSERT_EQ(0, read(p[0], &b, 1));
	close(p[0]);
	close(pair[1]);
	free(first);
}
