/* mrcp_pcap.h - a pcap (libpcap "nanosecond" format) writer with no I/O of
 * its own: bytes go to a caller-supplied write callback, so the same code
 * feeds a file, a ring or a test buffer. Output is little-endian on every
 * host (readers detect the order from the magic number).
 *
 *   file   = global header (24 B), then per frame: record header (16 B)
 *            + min(len, snaplen) bytes of frame
 *   global = magic 0xA1B23C4D, version 2.4, thiszone 0, sigfigs 0,
 *            snaplen, LINKTYPE_ETHERNET (1)
 *   record = ts seconds, ts nanoseconds, captured length, original length
 */
#ifndef MRCP_PCAP_H
#define MRCP_PCAP_H

#include <stddef.h>
#include <stdint.h>

#define MRCP_PCAP_MAGIC_NS 0xA1B23C4Du /* nanosecond timestamps */
#define MRCP_PCAP_LINKTYPE_ETHERNET 1u
#define MRCP_PCAP_GLOBAL_HDR_LEN 24u
#define MRCP_PCAP_RECORD_HDR_LEN 16u
/** Snap length used when struct mrcp_pcap.snaplen is 0, bytes. */
#define MRCP_PCAP_SNAPLEN_DEFAULT 262144u

/**
 * Write callback: store all @len bytes of @buf.
 * @return 0, or a negative errno, which the pcap functions pass back.
 */
typedef int (*mrcp_pcap_write_fn)(void *ctx, const void *buf, size_t len);

/** A pcap stream. Plain data owned by the caller; nothing to tear down. */
struct mrcp_pcap {
	mrcp_pcap_write_fn write; /**< required */
	void *ctx;                /**< passed to @write */
	uint32_t snaplen;         /**< bytes kept per frame; 0 = the default */
};

/**
 * Write the 24-byte global header (one @write call).
 * @return 0, -EINVAL if p->write is NULL, or the callback's negative errno.
 */
int mrcp_pcap_begin(const struct mrcp_pcap *p);

/**
 * Write one frame: a 16-byte record header and the first min(@len, snaplen)
 * bytes of @frame (two @write calls; if the second fails the stream is left
 * with a partial record). The record keeps @len as the original length.
 * @param ts_ns  capture time, ns since the Unix epoch (seconds wrap in 2106).
 * @return 0, -EINVAL if p->write is NULL or @len exceeds 32 bits, or the
 *         callback's negative errno.
 */
int mrcp_pcap_record(const struct mrcp_pcap *p, uint64_t ts_ns, const void *frame,
		     size_t len);

#endif
