/* mrcctl.c - the operator CLI for mrcd's control socket (docs/control.md):
 * turns `mrcctl <command> key=value...` into one request line, checks it with
 * the daemon's own parser (mrcd_ctl_parse) before sending, and prints the
 * reply as aligned text, a table or JSON. `mrcctl selftest` orchestrates a
 * two-daemon transfer through the selftest_* commands (mrcctl_selftest.c).
 * Knows nothing about how the daemon executes a request. This file: the
 * command line and the plain commands.
 */
#define _GNU_SOURCE /* vasprintf */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>


#include "mrcctl.h"

const char *const prog = "mrcctl";

/* ---- command line ---------------------------------------------------------- */

void usage(FILE *f)
{
	fprintf(f,
		"usage: %s [-s SOCKET] [--json] [--timeout SEC] <command> [key=value ...]\n"
		"       %s [-s SOCKET] selftest --peer SOCKET [--bytes N] [--msg-size N]\n"
		"              [--window N] [--op write_imm|write|mixed] [--region N]\n"
		"              [--worker N] [--peer-worker N] [--timeout SEC] [--json]\n"
		"       %s [-s SOCKET] selftest --peer SOCKET --latency [--size N] [--iters N]\n"
		"              [--region N] [--worker N] [--peer-worker N] [--timeout SEC] [--json]\n"
		"       %s help | --version\n"
		"The socket defaults to $MRCD_SOCKET, else " DEFAULT_SOCKET ".\n",
		prog, prog, prog, prog);
}

static void help(void)
{
	usage(stdout);
	printf("\ncommands (dashes and underscores are the same; [admin]: only on the admin\n"
	       "socket, control.socket, not on control.client_socket):\n");
	for (unsigned c = MRCD_CTL_INVALID + 1; c < MRCD_CTL_CMD_COUNT; c++)
		printf("  %-16s %s%s\n", mrcd_ctl_cmd_name((enum mrcd_ctl_cmd)c),
		       mrcd_ctl_cmd_rights((enum mrcd_ctl_cmd)c) == MRCD_CTL_RIGHTS_ADMIN ? "[admin] " : "",
		       mrcd_ctl_cmd_help((enum mrcd_ctl_cmd)c));
	printf("  %-16s %s\n", "selftest",
	       "[admin] run selftest_* on this daemon (sender) and --peer (receiver), report");
	printf("  %-16s %s\n", "selftest --latency",
	       "[admin] ping-pong (op ping_pong): one --size message (64) in flight, echoed by");
	printf("  %-16s %s\n", "",
	       "--peer, --iters round trips (10000); RTT min/mean/p50/p90/p99/max");
	printf("\nvalues: true/false, integers (decimal or 0x hex), decimals, \"quoted\" "
	       "strings, else strings\n"
	       "exit: 0 ok, 1 the daemon answered an error, 2 usage, 3 connection/I/O/timeout, "
	       "4 selftest failed\n");
}

/* Match "--name VALUE" or "--name=VALUE" at argv[*i]; advances *i. */
int take_opt(int argc, char **argv, int *i, const char *name, const char **val)
{
	size_t n = strlen(name);

	if (strncmp(argv[*i], name, n) != 0)
		return 0;
	if (argv[*i][n] == '=') {
		*val = argv[*i] + n + 1;
		return 1;
	}
	if (argv[*i][n] != '\0')
		return 0;
	if (*i + 1 >= argc) {
		fprintf(stderr, "%s: %s needs a value\n", prog, name);
		return -1;
	}
	*val = argv[++*i];
	return 1;
}

/* --worker / --peer-worker: a worker index of the daemon (D63). */
int parse_worker(const char *opt, const char *val, int64_t *out)
{
	char *end;
	unsigned long w;

	errno = 0;
	w = strtoul(val, &end, 10);
	if (errno || end == val || *end || w >= MRCD_CTL_MAX_WORKERS) {
		fprintf(stderr, "%s: selftest: %s: a worker index 0..%d, not \"%s\"\n", prog, opt,
			MRCD_CTL_MAX_WORKERS - 1, val);
		return -1;
	}
	*out = (int64_t)w;
	return 0;
}

int parse_seconds(const char *s, double *out)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !(d > 0) || d > 1e6) {
		fprintf(stderr, "%s: bad timeout \"%s\" (seconds, > 0)\n", prog, s);
		return -1;
	}
	*out = d;
	return 0;
}

/* A size with an optional binary suffix: 4096, 64K, 256M, 1G, 1T (KiB/KB
 * spellings too). */
int parse_size(const char *opt, const char *s, uint64_t *out)
{
	char *end;
	unsigned long long x;
	unsigned shift = 0;

	errno = 0;
	x = strtoull(s, &end, 10);
	if (errno != 0 || end == s || s[0] == '-')
		goto bad;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default: break;
	}
	if (shift && (strcmp(end, "i") == 0 || strcmp(end, "iB") == 0 || strcmp(end, "B") == 0))
		end += strlen(end);
	if (*end != '\0' || (shift && x > (UINT64_MAX >> shift)))
		goto bad;
	*out = (uint64_t)x << shift;
	return 0;
bad:
	fprintf(stderr, "%s: selftest: %s: bad size \"%s\" (bytes, or with K/M/G/T)\n",
		prog, opt, s);
	return -1;
}

/* "fault-set" -> MRCD_CTL_FAULT_SET */
static enum mrcd_ctl_cmd cmd_from_arg(const char *arg, char *name, size_t n)
{
	size_t i;

	for (i = 0; arg[i] != '\0' && i + 1 < n; i++)
		name[i] = arg[i] == '-' ? '_' : arg[i];
	name[i] = '\0';
	return arg[i] == '\0' ? mrcd_ctl_cmd_lookup(name) : MRCD_CTL_INVALID;
}

/* One request/reply for the plain commands. */
static int run_command(struct opts *o, const char *name, int argc, char **argv)
{
	json_t *args = json_object(), *result = NULL, *error = NULL;
	char reason[MRCD_CTL_REASON_MAX], *line;
	struct conn c;
	uint64_t deadline;
	int rc, ret;

	if (args == NULL)
		return EXIT_IO;
	for (int i = 0; i < argc; i++) {
		const char *val, *eq = strchr(argv[i], '=');
		char key[64];
		int t;

		if (strcmp(argv[i], "--json") == 0) {
			o->json = true;
			continue;
		}
		t = take_opt(argc, argv, &i, "--timeout", &val);
		if (t < 0 || (t > 0 && parse_seconds(val, &o->timeout_s) < 0))
			goto usage;
		if (t > 0)
			continue;
		if (eq == NULL || eq == argv[i] || (size_t)(eq - argv[i]) >= sizeof(key)) {
			err_cmd(name, "\"%s\": arguments are key=value", argv[i]);
			goto usage;
		}
		memcpy(key, argv[i], (size_t)(eq - argv[i]));
		key[eq - argv[i]] = '\0';
		if (json_object_get(args, key) != NULL) {
			err_cmd(name, "args.%s: given twice", key);
			goto usage;
		}
		json_object_set_new(args, key, value_convert(eq + 1));
	}
	line = request_build(name, args, 1, reason, sizeof(reason), &rc);
	json_decref(args);
	args = NULL;
	if (line == NULL) {
		err_cmd(name, "%s (%s)", reason, errno_code(-rc));
		fprintf(stderr, "try '%s help'\n", prog);
		return rc == -ENOMEM ? EXIT_IO : EXIT_USAGE;
	}
	/* one deadline for connecting, sending and the reply */
	deadline = deadline_after(o->timeout_s);
	rc = conn_open(&c, o->sock, o->timeout_s);
	if (rc < 0) {
		err_cmd(name, "cannot connect to %s: %s", o->sock,
			rc == -ETIMEDOUT ? "timed out" : strerror(-rc));
		free(line);
		return EXIT_IO;
	}
	rc = conn_call_line(&c, line, 1, deadline, &result, &error);
	free(line);
	conn_close(&c);
	if (rc < 0) {
		print_io_error(name, o->sock, rc, o->timeout_s);
		return EXIT_IO;
	}
	if (rc == CALL_ERROR) {
		if (o->json)
			print_json(error);
		print_daemon_error(name, error);
		ret = EXIT_DAEMON;
	} else {
		if (o->json)
			print_json(result);
		else
			print_human(result);
		ret = 0;
	}
	json_decref(result);
	json_decref(error);
	return ret;
usage:
	json_decref(args);
	return EXIT_USAGE;
}


int main(int argc, char **argv)
{
	struct opts o = {.timeout_s = DEFAULT_TIMEOUT_S};
	enum mrcd_ctl_cmd cmd;
	char name[MRCD_CTL_NAME_MAX];
	int i;

	o.sock = getenv("MRCD_SOCKET");
	if (o.sock == NULL || o.sock[0] == '\0')
		o.sock = DEFAULT_SOCKET;
	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		const char *val;
		int r;

		if (strcmp(argv[i], "--json") == 0) {
			o.json = true;
		} else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			help();
			return 0;
		} else if (strcmp(argv[i], "-V") == 0 || strcmp(argv[i], "--version") == 0) {
			printf("mrcctl %s\n", MRCD_VERSION); /* this program's; the daemon's is 'mrcctl version' */
			return 0;
		} else if ((r = take_opt(argc, argv, &i, "--timeout", &val)) != 0) {
			if (r < 0 || parse_seconds(val, &o.timeout_s) < 0)
				return EXIT_USAGE;
			o.timeout_set = true;
		} else if ((r = take_opt(argc, argv, &i, "--socket", &val)) != 0 ||
			   (r = take_opt(argc, argv, &i, "-s", &val)) != 0) {
			if (r < 0)
				return EXIT_USAGE;
			o.sock = val;
		} else {
			fprintf(stderr, "%s: unknown option \"%s\"\n", prog, argv[i]);
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (i >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[i], "help") == 0) {
		help();
		return 0;
	}
	if (strcmp(argv[i], "selftest") == 0)
		return run_selftest(&o, argc - i - 1, argv + i + 1);
	cmd = cmd_from_arg(argv[i], name, sizeof(name));
	if (cmd == MRCD_CTL_INVALID) {
		fprintf(stderr, "%s: unknown command \"%s\"; try '%s help'\n", prog, argv[i], prog);
		return EXIT_USAGE;
	}
	return run_command(&o, mrcd_ctl_cmd_name(cmd), argc - i - 1, argv + i + 1);
}

