/* pcap_gen.c - writes a pcap of MRC frames (IPv4, IPv6, 802.1Q, SRv6) made by
 * mrcp_frame_build() and mrcp_pcap_*(), for tshark_check.sh to decode.
 * Usage: pcap_gen OUT.pcap */
#include <stdio.h>
#include <string.h>

#include "mrcp_bytes.h"
#include "mrcp_frame.h"
#include "mrcp_pcap.h"

static int file_write(void *ctx, const void *buf, size_t len)
{
	return fwrite(buf, 1, len, ctx) == len ? 0 : -5 /* EIO */;
}

/* WRITE_ONLY, DestQP 0x123456, PSN 0xABCDEF, hand-encoded: BTH, METH,
 * TSETH, RETH, then @payload bytes and pad. */
static size_t mrc_write_only(uint8_t *b, size_t payload)
{
	size_t pad = (4 - payload % 4) % 4, n = 12 + 4 + 4 + 16;

	memset(b, 0, n + payload + pad);
	b[0] = 0xCA;
	b[1] = (uint8_t)(pad << 4);
	mrcp_put_be16(b + 2, 0xFFFF);
	mrcp_put_be24(b + 5, 0x123456);
	b[8] = 0x90; /* AckReq, ts */
	mrcp_put_be24(b + 9, 0xABCDEF);
	mrcp_put_be16(b + 14, 1);          /* METH.MSN */
	b[19] = 0x01;                      /* TSETH ftype */
	mrcp_put_be64(b + 20, 0x7F0000001000ull);
	mrcp_put_be32(b + 28, 0x00C0FFEE); /* rkey */
	mrcp_put_be32(b + 32, (uint32_t)payload);
	for (size_t i = 0; i < payload; i++)
		b[n + i] = (uint8_t)i;
	return n + payload + pad;
}

int main(int argc, char **argv)
{
	static const struct {
		enum mrcp_frame_l3 l3;
		int vlan;
	} shapes[] = {
		{MRCP_FRAME_IPV4, 0}, {MRCP_FRAME_IPV6, 0}, {MRCP_FRAME_IPV4, 1},
		{MRCP_FRAME_IPV6, 1}, {MRCP_FRAME_SRV6, 0},
	};
	static const uint8_t a6[16] = {0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
	static const uint8_t b6[16] = {0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
	static const uint8_t usid[16] = {0xFC, 0xBB, 0, 0, 0, 1, 0, 2};
	uint8_t mrc[512], frame[1024];
	struct mrcp_pcap p;
	FILE *f;
	int rc = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: %s OUT.pcap\n", argv[0]);
		return 2;
	}
	f = fopen(argv[1], "wb");
	if (f == NULL) {
		perror(argv[1]);
		return 1;
	}
	p.write = file_write;
	p.ctx = f;
	p.snaplen = 0;
	rc = mrcp_pcap_begin(&p);
	for (size_t i = 0; rc == 0 && i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		struct mrcp_frame_tx tx;
		size_t n = mrc_write_only(mrc, 64 + i);
		int len;

		mrcp_frame_tx_defaults(&tx);
		memcpy(tx.dst_mac, (const uint8_t[]){2, 0, 0, 0, 0, 2}, 6);
		memcpy(tx.src_mac, (const uint8_t[]){2, 0, 0, 0, 0, 1}, 6);
		tx.l3 = shapes[i].l3;
		tx.vlan = shapes[i].vlan;
		tx.vlan_tci = 100;
		if (tx.l3 == MRCP_FRAME_IPV4) {
			memcpy(tx.src_ip, (const uint8_t[]){10, 0, 0, 1}, 4);
			memcpy(tx.dst_ip, (const uint8_t[]){10, 0, 0, 2}, 4);
			tx.ev = 0xC000 + (uint32_t)i;
		} else {
			memcpy(tx.src_ip, a6, 16);
			memcpy(tx.dst_ip, b6, 16);
			memcpy(tx.srv6_da, usid, 16);
			tx.ev = 0x0001C000 + (uint32_t)i;
		}
		tx.udp_csum = tx.l3 != MRCP_FRAME_IPV4;
		len = mrcp_frame_build(&tx, mrc, n, frame, sizeof(frame));
		if (len < 0) {
			rc = len;
			break;
		}
		rc = mrcp_pcap_record(&p, 1700000000ull * 1000000000ull + i * 1000, frame,
				      (size_t)len);
	}
	if (fclose(f) != 0 && rc == 0)
		rc = -5;
	if (rc < 0) {
		fprintf(stderr, "pcap_gen: error %d\n", rc);
		return 1;
	}
	return 0;
}
