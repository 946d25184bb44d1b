/* mrcp_bytes.h - big-endian loads and stores on byte buffers, for the codecs.
 * Every on-wire multi-byte field is read and written through these, never by
 * casting a buffer to a wider type (alignment and byte order stay explicit). */
#ifndef MRCP_BYTES_H
#define MRCP_BYTES_H

#include <stdint.h>
#include <string.h>

/* Each load and store goes through memcpy (no alignment assumed) and one
 * byte swap: the compiler emits a single move (and bswap) for each. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define MRCP_BE16(x) __builtin_bswap16(x)
#define MRCP_BE32(x) __builtin_bswap32(x)
#define MRCP_BE64(x) __builtin_bswap64(x)
#else
#define MRCP_BE16(x) (x)
#define MRCP_BE32(x) (x)
#define MRCP_BE64(x) (x)
#endif

static inline uint16_t mrcp_get_be16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return MRCP_BE16(v);
}

static inline uint32_t mrcp_get_be24(const uint8_t *p)
{
	return (uint32_t)mrcp_get_be16(p) << 8 | p[2];
}

static inline uint32_t mrcp_get_be32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return MRCP_BE32(v);
}

static inline uint64_t mrcp_get_be64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return MRCP_BE64(v);
}

static inline void mrcp_put_be16(uint8_t *p, uint16_t v)
{
	v = MRCP_BE16(v);
	memcpy(p, &v, sizeof(v));
}

/** Store the low 24 bits of @v; the top byte is ignored. */
static inline void mrcp_put_be24(uint8_t *p, uint32_t v)
{
	mrcp_put_be16(p, (uint16_t)(v >> 8));
	p[2] = (uint8_t)v;
}

static inline void mrcp_put_be32(uint8_t *p, uint32_t v)
{
	v = MRCP_BE32(v);
	memcpy(p, &v, sizeof(v));
}

static inline void mrcp_put_be64(uint8_t *p, uint64_t v)
{
	v = MRCP_BE64(v);
	memcpy(p, &v, sizeof(v));
}

#endif
