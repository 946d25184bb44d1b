/* mrcctl.h - what the files of mrcctl share: exit codes, the connection to
 * a daemon and its calls (mrcctl_conn.c), value conversion and output
 * (mrcctl_print.c), the command line (mrcctl.c) and the selftest
 * orchestration (mrcctl_selftest.c).
 */
#ifndef MRCCTL_H
#define MRCCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "mrcd_ctl.h"

enum {
	EXIT_DAEMON = 1,   /* the daemon answered an error */
	EXIT_USAGE = 2,    /* bad command line; nothing was sent */
	EXIT_IO = 3,       /* cannot connect, I/O error, bad reply, timeout */
	EXIT_SELFTEST = 4, /* selftest failed verification or did not finish */
};

#define DEFAULT_SOCKET "/run/mrcd/mrcd.sock"
#define DEFAULT_TIMEOUT_S 10.0
#define SELFTEST_TIMEOUT_S 120.0
#define REPLY_MAX (64u << 20)          /* longest reply line accepted, bytes */
#define NS_PER_S 1000000000ull
#define NS_PER_MS 1000000ull

extern const char *const prog;         /* "mrcctl", for messages */

/* ---- mrcctl_conn.c ---- */

/** Monotonic ns, a deadline @seconds from now, ms left until @deadline (0 once passed). */
uint64_t now_ns(void);
uint64_t deadline_after(double seconds);
int ms_left(uint64_t deadline);
/** "mrcctl: <cmd>: <message>" on stderr. */
void err_cmd(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** The code name of a local failure (the protocol's errno table), else "error". */
const char *errno_code(int e);

struct conn {
	int fd;
	const char *path;
	char *buf;           /* bytes received and not yet consumed */
	size_t len, cap;
	int64_t next_id;
};

/** @return 0, or a negative errno (-ENAMETOOLONG, connect(2)'s). */
int conn_open(struct conn *c, const char *path, double timeout_s);
void conn_close(struct conn *c);
/** A request line (with '\n') for @cmd with @args (borrowed; NULL for none),
 *  checked with the daemon's parser. @return it (free() it), or NULL with
 *  @reason and *@rc set. */
char *request_build(const char *cmd, json_t *args, int64_t id, char *reason, size_t reason_len,
		    int *rc);

enum call_status { CALL_OK = 0, CALL_ERROR = 1 };

/** Send @line (id @id) and read its reply: CALL_OK with *@result, CALL_ERROR
 *  with *@error, or a negative errno (-ETIMEDOUT, -ECONNRESET, -EBADMSG, an
 *  I/O errno). The caller json_decref()s what it is given. */
int conn_call_line(struct conn *c, const char *line, int64_t id, uint64_t deadline,
		   json_t **result, json_t **error);
/** "mrcctl: <cmd>: <reason> (<code>)" for an error reply. */
void print_daemon_error(const char *cmd, const json_t *error);
/** The message for an I/O failure @rc of a call on @path. */
void print_io_error(const char *cmd, const char *path, int rc, double timeout_s);

/* ---- mrcctl_print.c ---- */

/** key=value: true/false, integers (decimal or 0x hex), decimals, "quoted"
 *  strings, anything else a string. */
json_t *value_convert(const char *s);
/** strdup that exits on out of memory. */
char *xstrdup(const char *s);
/** A result as aligned text and tables. */
void print_human(const json_t *res);
/** A value as indented JSON, one line per key. */
void print_json(const json_t *v);

/* ---- mrcctl.c ---- */

struct opts {
	const char *sock;
	bool json;
	double timeout_s;
	bool timeout_set;
};

void usage(FILE *f);
/** Match "--name VALUE" (advances *@i) or "--name=VALUE" at argv[*i].
 *  @return 1 with *@val, 0 not this option, -1 no value (reported). */
int take_opt(int argc, char **argv, int *i, const char *name, const char **val);
int parse_worker(const char *opt, const char *val, int64_t *out);
int parse_seconds(const char *s, double *out);
int parse_size(const char *opt, const char *s, uint64_t *out);

/* ---- mrcctl_selftest.c ---- */

/** `mrcctl selftest ...`. @return the exit code. */
int run_selftest(struct opts *o, int argc, char **argv);

#endif
