/* port_files.h - what a port's device needs in the file system before it is
 * probed: a net_memif device with its socket as a file (socket-abstract=no,
 * docs/configuration.md "memif sockets") needs the socket's directory, and a
 * server must not trip over the socket file a killed daemon left behind.
 * DPDK-free, unit-tested with config_dp.c (test_config_dp.c).
 */
#ifndef MRCD_PORT_FILES_H
#define MRCD_PORT_FILES_H

#include <stdbool.h>
#include <stddef.h>

/**
 * The socket file of a net_memif device's @devargs.
 * @return 1 with @path (and @server: role=server, DPDK's default) for a
 * file socket (socket-abstract=no); 0 for any other device or an abstract
 * socket (DPDK's default, reachable by every local user); -EINVAL when the
 * socket path does not fit @cap.
 */
int mrcd_memif_socket_file(const char *devargs, char *path, size_t cap, bool *server);

/**
 * Make the file system ready for @devargs' device: for a memif file socket,
 * create its directory if missing (mode 0700: only the daemon's user may
 * connect; make it yourself to share it with a group), and for a server
 * remove a socket nobody listens on. Anything else at the path is left
 * alone and is an error, as is a live socket (another process serves it).
 * Other devices need nothing. @return 0 or a negative errno with @err.
 */
int mrcd_port_files_prepare(const char *devargs, char *err, size_t errlen);

#endif
