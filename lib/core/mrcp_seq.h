/* mrcp_seq.h - wrap-safe comparison of 24-bit PSNs, 16-bit MSNs and 64-bit
 * nanosecond deadlines (§4.1). A raw '<' on any of these is a bug.
 * A field narrower than 32 bits is shifted into the top bits first, so the
 * signed difference carries the serial-number ordering. */
#ifndef MRCP_SEQ_H
#define MRCP_SEQ_H

#include <stdbool.h>
#include <stdint.h>

#define MRCP_PSN_BITS 24
#define MRCP_PSN_MASK 0xFFFFFFu
#define MRCP_MSN_MASK 0xFFFFu

/** psn_diff(a, b) of §4.1: in [-2^23, 2^23); > 0 when a is after b. */
static inline int32_t mrcp_psn_diff(uint32_t a, uint32_t b)
{
	return (int32_t)((a - b) << 8) >> 8;
}

static inline bool mrcp_psn_lt(uint32_t a, uint32_t b) { return mrcp_psn_diff(a, b) < 0; }
static inline bool mrcp_psn_le(uint32_t a, uint32_t b) { return mrcp_psn_diff(a, b) <= 0; }
static inline bool mrcp_psn_gt(uint32_t a, uint32_t b) { return mrcp_psn_diff(a, b) > 0; }
static inline bool mrcp_psn_ge(uint32_t a, uint32_t b) { return mrcp_psn_diff(a, b) >= 0; }

/** a + n in PSN space (n may be negative). */
static inline uint32_t mrcp_psn_add(uint32_t a, int32_t n)
{
	return (a + (uint32_t)n) & MRCP_PSN_MASK;
}

/** The same ordering for 16-bit MSNs. */
static inline int32_t mrcp_msn_diff(uint16_t a, uint16_t b)
{
	return (int16_t)(uint16_t)(a - b);
}

static inline bool mrcp_msn_lt(uint16_t a, uint16_t b) { return mrcp_msn_diff(a, b) < 0; }
static inline bool mrcp_msn_le(uint16_t a, uint16_t b) { return mrcp_msn_diff(a, b) <= 0; }

/** Nanosecond time and deadlines: free-running, compared modulo 2^64. */
static inline bool mrcp_time_lt(uint64_t a, uint64_t b) { return (int64_t)(a - b) < 0; }
static inline bool mrcp_time_le(uint64_t a, uint64_t b) { return (int64_t)(a - b) <= 0; }
static inline bool mrcp_time_after(uint64_t a, uint64_t b) { return (int64_t)(a - b) > 0; }

/** The earlier of two deadlines, where UINT64_MAX means "none". */
static inline uint64_t mrcp_deadline_min(uint64_t a, uint64_t b)
{
	if (a == UINT64_MAX)
		return b;
	if (b == UINT64_MAX)
		return a;
	return mrcp_time_lt(a, b) ? a : b;
}

#endif
