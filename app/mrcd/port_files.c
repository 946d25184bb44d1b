/* port_files.c - a port device's files (port_files.h): the directory and
 * stale socket of a net_memif file socket. Reads devargs the way DPDK's
 * memif driver does (key=value after the device name, comma-separated;
 * role server and socket /run/memif.sock by default) and touches nothing
 * but that socket path and its directory.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "port_files.h"

#define MEMIF_DEFAULT_SOCKET "/run/memif.sock"

/* The value of @key in @devargs ("k=v,k=v" after the device name), with its
 * length; NULL if absent. */
static const char *arg_of(const char *devargs, const char *key, size_t *len)
{
	size_t kl = strlen(key);
	const char *p = strchr(devargs, ',');

	while (p != NULL) {
		p++;
		if (strncmp(p, key, kl) == 0 && p[kl] == '=') {
			*len = strcspn(p + kl + 1, ",");
			return p + kl + 1;
		}
		p = strchr(p, ',');
	}
	return NULL;
}

static bool arg_is(const char *devargs, const char *key, const char *want)
{
	size_t len;
	const char *v = arg_of(devargs, key, &len);

	return v != NULL && len == strlen(want) && strncmp(v, want, len) == 0;
}

int mrcd_memif_socket_file(const char *devargs, char *path, size_t cap, bool *server)
{
	const char *v;
	size_t len;

	if (strncmp(devargs, "net_memif", 9) != 0 || !arg_is(devargs, "socket-abstract", "no"))
		return 0;
	v = arg_of(devargs, "socket", &len);
	if (v == NULL) {
		v = MEMIF_DEFAULT_SOCKET;
		len = strlen(v);
	}
	if (len == 0 || len >= cap)
		return -EINVAL;
	memcpy(path, v, len);
	path[len] = '\0';
	*server = !arg_is(devargs, "role", "client");
	return 1;
}

/* Is a socket listening at @path? Read from the kernel's table
 * (/proc/net/unix: __SO_ACCEPTCON in Flags, the bound path last), never by
 * connecting: DPDK 22.11's memif server panics when a connection it
 * accepted goes away before its handshake (its interrupt thread adds a
 * closed descriptor to epoll: "PANIC in eal_intr_thread_main()"), so a
 * probe by connect(2) killed the daemon it was asking about. The table
 * shows the sockets of this network namespace; one bound in another is not
 * seen. @return 1 live, 0 not, -errno if the table cannot be read. */
#define UNIX_ACCEPTCON 0x10000u
static int socket_live(const char *path)
{
	FILE *f = fopen("/proc/net/unix", "re");
	char line[4096 + 128];
	int live = 0;

	if (f == NULL)
		return -errno;
	while (!live && fgets(line, sizeof(line), f) != NULL) {
		unsigned flags;
		int at = 0;
		size_t n;

		if (sscanf(line, "%*s %*x %*x %x %*x %*x %*u %n", &flags, &at) != 1 || at == 0)
			continue; /* the header, or a socket with no path */
		n = strcspn(line + at, "\n");
		live = (flags & UNIX_ACCEPTCON) && n == strlen(path) && strncmp(line + at, path, n) == 0;
	}
	fclose(f);
	return live;
}

int mrcd_port_files_prepare(const char *devargs, char *err, size_t errlen)
{
	struct sockaddr_un a;
	char path[sizeof(a.sun_path)], dir[sizeof(a.sun_path)];
	struct stat st;
	bool server;
	char *slash;
	int rc = mrcd_memif_socket_file(devargs, path, sizeof(path), &server);

	if (rc == -EINVAL) {
		snprintf(err, errlen, "memif socket path longer than %zu characters", sizeof(path) - 1);
		return rc;
	}
	if (rc == 0)
		return 0;
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash != NULL && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
			rc = -errno;
			snprintf(err, errlen, "memif socket directory %s: %s", dir, strerror(errno));
			return rc;
		}
	}
	if (!server || lstat(path, &st) < 0)
		return 0;
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, errlen, "memif socket %s exists and is not a socket: refusing to replace it", path);
		return -EEXIST;
	}
	rc = socket_live(path);
	if (rc < 0) {
		snprintf(err, errlen, "memif socket %s: cannot tell whether a process listens there (/proc/net/unix: %s)",
			 path, strerror(-rc));
		return rc;
	}
	if (rc > 0) {
		snprintf(err, errlen, "memif socket %s: another process is listening there", path);
		return -EADDRINUSE;
	}
	if (unlink(path) < 0) {
		rc = -errno;
		snprintf(err, errlen, "memif socket %s (left by a daemon that died): %s", path, strerror(errno));
		return rc;
	}
	return 0;
}
