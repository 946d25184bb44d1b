/* pcap.c - serialises the pcap global and record headers and hands them,
 * with the frame bytes, to the caller's write callback; does no I/O itself. */
#include "mrcp_pcap.h"

#include <errno.h>

static void put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put_le32(uint8_t *p, uint32_t v)
{
	put_le16(p, (uint16_t)v);
	put_le16(p + 2, (uint16_t)(v >> 16));
}

static uint32_t snaplen(const struct mrcp_pcap *p)
{
	return p->snaplen ? p->snaplen : MRCP_PCAP_SNAPLEN_DEFAULT;
}

/* Callbacks that return a byte count (>= 0) count as success. */
static int status(int rc)
{
	return rc < 0 ? rc : 0;
}

int mrcp_pcap_begin(const struct mrcp_pcap *p)
{
	uint8_t h[MRCP_PCAP_GLOBAL_HDR_LEN];

	if (p->write == NULL)
		return -EINVAL;
	put_le32(h, MRCP_PCAP_MAGIC_NS);
	put_le16(h + 4, 2);   /* version major */
	put_le16(h + 6, 4);   /* version minor */
	put_le32(h + 8, 0);   /* thiszone: UTC */
	put_le32(h + 12, 0);  /* sigfigs */
	put_le32(h + 16, snaplen(p));
	put_le32(h + 20, MRCP_PCAP_LINKTYPE_ETHERNET);
	return status(p->write(p->ctx, h, sizeof(h)));
}

int mrcp_pcap_record(const struct mrcp_pcap *p, uint64_t ts_ns, const void *frame,
		     size_t len)
{
	uint8_t h[MRCP_PCAP_RECORD_HDR_LEN];
	uint32_t incl;
	int rc;

	if (p->write == NULL || len > UINT32_MAX)
		return -EINVAL;
	incl = len < snaplen(p) ? (uint32_t)len : snaplen(p);
	put_le32(h, (uint32_t)(ts_ns / 1000000000u));
	put_le32(h + 4, (uint32_t)(ts_ns % 1000000000u));
	put_le32(h + 8, incl);
	put_le32(h + 12, (uint32_t)len);
	rc = status(p->write(p->ctx, h, sizeof(h)));
	if (rc < 0 || incl == 0)
		return rc;
	return status(p->write(p->ctx, frame, incl));
}
