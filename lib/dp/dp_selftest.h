/* dp_selftest.h - the operator's built-in transfer check (mrcctl selftest):
 * a verified RDMA Write / WriteImm transfer between two daemons using
 * daemon-owned buffers, like ib_write_bw with --verify built into the daemon.
 *
 * The receiving side ("listen") registers a region and posts receives; the
 * sending side ("start") writes messages into it round-robin, each filled
 * with a pattern that depends on the message index and the byte position.
 * Every WriteImm carries the low 32 bits of its message index; when one
 * completes at the receiver, every message up to it is checked in the region
 * (completions come in MSN order, so all of them are placed). The sender
 * keeps at most @window messages in flight and window x msg_size is at most
 * half the region, so a message is never overwritten before it is checked.
 *
 * The sender's connection info carries the transfer shape in the fields the
 * receiver has no other use for: buf_va = total bytes, buf_len = message
 * size, buf_rkey = the op. All functions run on the worker (mrcd_dp_call),
 * except mrcd_st_worker_of.
 *
 * Ping-pong (op MRCD_ST_OP_PING_PONG, `mrcctl selftest --latency`): one
 * message in flight. The sender writes message i (a WriteImm, imm = i) into
 * the receiver's region; the receiver, on its completion, writes the same
 * bytes back (a WriteImm, imm = i) into the sender's buffer, then checks
 * them; the sender timestamps the round trip from posting message i to the
 * completion of its echo, checks the echo against the pattern, and sends
 * message i + 1. The sender's info then carries buf_va / buf_rkey = its echo
 * buffer and buf_len = msg_size | MRCD_ST_PP_TAG; the receiver echoes until
 * it is stopped. The first MRCD_ST_PP_WARMUP round trips (at most a tenth)
 * are not counted in the percentiles.
 *
 * Ids are unique in the datapath and name their worker (D63): worker k of n
 * hands out n + k, 2n + k, ...; with one worker, 1, 2, 3, ...
 */
#ifndef MRCD_DP_SELFTEST_H
#define MRCD_DP_SELFTEST_H

#include <stdint.h>

#include "dp.h"

enum mrcd_st_op { MRCD_ST_OP_WRITE_IMM = 0, MRCD_ST_OP_WRITE, MRCD_ST_OP_MIXED, MRCD_ST_OP_PING_PONG };
enum mrcd_st_role { MRCD_ST_SENDER = 0, MRCD_ST_RECEIVER };
#define MRCD_ST_STATES(X) X(LISTENING, "listening") X(CONNECTED, "connected") \
	X(RUNNING, "running") X(DONE, "done") X(FAILED, "failed")
enum mrcd_st_state {
#define X(e, s) MRCD_ST_##e,
	MRCD_ST_STATES(X)
#undef X
};
const char *mrcd_st_state_name(int state);

#define MRCD_ST_MAX 8
#define MRCD_ST_WRITE_IMM_EVERY 64  /* op write: a WriteImm every N messages and last */
#define MRCD_ST_PP_MAX 1000000u     /* ping-pong: round trips in one run (their RTTs are kept) */
#define MRCD_ST_PP_WARMUP 200u      /* ping-pong: round trips not counted, at most n / 10 */
#define MRCD_ST_PP_TAG (0x5050ull << 32) /* in the sender's info buf_len: ping-pong */

struct mrcd_st_status {
	uint32_t id;
	uint8_t role, state;
	uint32_t qpn;
	uint8_t qp_state;          /**< enum mrcp_qp_state */
	uint8_t op;
	uint64_t bytes_target, bytes_done;
	uint64_t msgs_target, msgs_done, imm_msgs;
	uint32_t msg_size, window;
	uint64_t elapsed_ns;
	double goodput_gbps;
	uint64_t rtx_total, rtx_fast, rtx_nack, rtx_rto, rtx_port_down;
	uint64_t ev_transitions;
	uint64_t verify_errors;
	/* ping-pong, sender: round-trip times of the counted round trips;
	 * the percentiles once the run is done, else 0 */
	uint64_t rtt_samples, rtt_warmup;
	uint64_t rtt_min_ns, rtt_p50_ns, rtt_p90_ns, rtt_p99_ns, rtt_max_ns, rtt_mean_ns;
	char error[128];
};

int mrcd_st_listen(struct mrcd_dp *dp, uint64_t region_bytes, uint64_t now,
		   uint32_t *id, uint8_t info[MRCP_CONN_INFO_LEN]);
int mrcd_st_start(struct mrcd_dp *dp, const uint8_t peer[MRCP_CONN_INFO_LEN], uint64_t bytes,
		  uint32_t msg_size, uint32_t window, enum mrcd_st_op op, uint64_t now,
		  uint32_t *id, uint8_t info[MRCP_CONN_INFO_LEN]);
int mrcd_st_accept(struct mrcd_dp *dp, uint32_t id, const uint8_t peer[MRCP_CONN_INFO_LEN], uint64_t now);
int mrcd_st_run(struct mrcd_dp *dp, uint32_t id, uint64_t now);
int mrcd_st_status(struct mrcd_dp *dp, uint32_t id, uint64_t now, struct mrcd_st_status *out);
int mrcd_st_stop(struct mrcd_dp *dp, uint32_t id, uint64_t now);

/** The index of the worker that owns selftest @id (any thread). */
unsigned mrcd_st_worker_of(uint32_t id, unsigned n_workers);

/** The data pattern (exposed for tests): byte @pos of message @msg. */
void mrcd_st_pattern_fill(uint8_t *dst, uint64_t len, uint64_t msg);
/** @return the number of bytes that differ from the pattern. */
uint64_t mrcd_st_pattern_check(const uint8_t *src, uint64_t len, uint64_t msg);

#endif
