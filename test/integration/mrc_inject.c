/* mrc_inject.c - send hand-made MRC frames on an interface, the way a host on
 * the link could: any source address, any QPN, valid headers and ICRC (built
 * with lib/core's own encoders, so the receiver takes them for MRC). Used by
 * spoof.sh to show that packets from anyone but a QP's peer change nothing
 * (protocol.md §4.2, D69).
 *
 *   mrc_inject IFACE SRC_MAC DST_MAC < SPEC
 *
 * SPEC: one packet per line, "KIND key=value ...", '#' starts a comment.
 *   KIND  write | sack | nack | ack | probe
 *   src=IP dst=IP          IPv4 or IPv6 (both the same family), required
 *   qpn=N psn=N            BTH DestQP and PSN (PSN 0 if absent)
 *   msn=N rkey=N va=N len=N    write: METH MSN, RETH key, VA and DMA length
 *                              (len bytes of 0xEE as payload, at most 4096)
 *   spdcid=N dpdcid=N      sack, nack, probe (D15)
 *   cack=N                 sack: cack_psn (default psn)
 *   code=N                 nack: NACK code (default 1, NO_RESOURCE)
 *   syndrome=N             ack: AETH syndrome (default 0x1F, ACK)
 *   ev=N                   the EV (UDP source port half; default 0xC0DE)
 *   srv6=IP6 osrc=IP6      SRv6: outer DA srv6, outer source osrc (default src)
 * Numbers are C literals (0x.. hex). Exit 0 when every line was sent (and
 * prints how many), 2 for a bad line or option, 1 for a socket error.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mrcp_engine.h"
#include "mrcp_frame.h"
#include "mrcp_wire.h"

static int parse_mac(const char *s, uint8_t mac[6])
{
	unsigned b[6];

	if (sscanf(s, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]) != 6)
		return -1;
	for (int i = 0; i < 6; i++) {
		if (b[i] > 255)
			return -1;
		mac[i] = (uint8_t)b[i];
	}
	return 0;
}

/* @s as an address: 4 (bytes 0..3 of @a) or 6, or 0 if it is neither. */
static int parse_ip(const char *s, uint8_t a[16])
{
	memset(a, 0, 16);
	if (inet_pton(AF_INET, s, a) == 1)
		return 4;
	if (inet_pton(AF_INET6, s, a) == 1)
		return 6;
	return 0;
}

static int parse_num(const char *s, unsigned long long max, unsigned long long *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 0);
	return errno != 0 || *end != '\0' || *s == '\0' || *out > max ? -1 : 0;
}

struct line {
	uint8_t op;
	int fam, ofam;
	uint8_t src[16], dst[16], osrc[16], srv6[16];
	bool has_srv6, has_osrc;
	unsigned long long qpn, psn, msn, rkey, va, len, spdcid, dpdcid, cack, code, syndrome, ev;
	bool has_cack;
};

/* One SPEC line into @l; -1 with a message on stderr if it is bad. */
static int parse_line(char *s, unsigned lineno, struct line *l)
{
	static const struct {
		const char *name;
		uint8_t op;
	} kinds[] = {
		{"write", MRCP_OP_WRITE_ONLY}, {"sack", MRCP_OP_SACK}, {"nack", MRCP_OP_NACK},
		{"ack", MRCP_OP_ACK},          {"probe", MRCP_OP_PROBE},
	};
	char *save = NULL, *tok = strtok_r(s, " \t", &save);
	int sfam = 0, dfam = 0;

	memset(l, 0, sizeof(*l));
	l->code = MRCP_NACK_NO_RESOURCE;
	l->syndrome = MRCP_AETH_ACK;
	l->ev = 0xC0DE;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strcmp(tok, kinds[i].name) == 0)
			l->op = kinds[i].op;
	if (l->op == 0) {
		fprintf(stderr, "mrc_inject: line %u: unknown kind '%s'\n", lineno, tok);
		return -1;
	}
	while ((tok = strtok_r(NULL, " \t", &save)) != NULL) {
		char *v = strchr(tok, '=');
		unsigned long long *num = NULL, max = 0xFFFFFF;
		int bad = 0;

		if (v == NULL) {
			fprintf(stderr, "mrc_inject: line %u: '%s' is not key=value\n", lineno, tok);
			return -1;
		}
		*v++ = '\0';
		if (strcmp(tok, "src") == 0)
			bad = (sfam = parse_ip(v, l->src)) == 0;
		else if (strcmp(tok, "dst") == 0)
			bad = (dfam = parse_ip(v, l->dst)) == 0;
		else if (strcmp(tok, "osrc") == 0)
			bad = !(l->has_osrc = parse_ip(v, l->osrc) == 6);
		else if (strcmp(tok, "srv6") == 0)
			bad = !(l->has_srv6 = parse_ip(v, l->srv6) == 6);
		else if (strcmp(tok, "qpn") == 0)
			num = &l->qpn;
		else if (strcmp(tok, "psn") == 0)
			num = &l->psn;
		else if (strcmp(tok, "msn") == 0)
			num = &l->msn, max = 0xFFFF;
		else if (strcmp(tok, "rkey") == 0)
			num = &l->rkey, max = 0xFFFFFFFF;
		else if (strcmp(tok, "va") == 0)
			num = &l->va, max = UINT64_MAX;
		else if (strcmp(tok, "len") == 0)
			num = &l->len, max = MRCP_PAYLOAD_MAX;
		else if (strcmp(tok, "spdcid") == 0)
			num = &l->spdcid, max = 0xFFFF;
		else if (strcmp(tok, "dpdcid") == 0)
			num = &l->dpdcid, max = 0xFFFF;
		else if (strcmp(tok, "cack") == 0)
			num = &l->cack, l->has_cack = true;
		else if (strcmp(tok, "code") == 0)
			num = &l->code, max = 0xFF;
		else if (strcmp(tok, "syndrome") == 0)
			num = &l->syndrome, max = 0xFF;
		else if (strcmp(tok, "ev") == 0)
			num = &l->ev, max = 0xFFFFFFFF;
		else
			bad = 1;
		if (num != NULL)
			bad = parse_num(v, max, num) != 0;
		if (bad) {
			fprintf(stderr, "mrc_inject: line %u: bad %s=%s\n", lineno, tok, v);
			return -1;
		}
	}
	if (sfam == 0 || sfam != dfam || (l->has_srv6 && sfam != 6)) {
		fprintf(stderr, "mrc_inject: line %u: src and dst of one family needed (SRv6: IPv6)\n", lineno);
		return -1;
	}
	l->fam = sfam;
	return 0;
}

/* The frame of @l into @buf; its length, or -1. */
static int build(const struct line *l, const uint8_t smac[6], const uint8_t dmac[6], uint8_t *buf, size_t cap)
{
	static uint8_t payload[MRCP_PAYLOAD_MAX];
	uint8_t mrc[MRCP_TX_HDR_MAX + MRCP_PAYLOAD_MAX + 4];
	struct mrcp_frame_tx tx;
	struct mrcp_pkt p;
	int n, len;

	memset(payload, 0xEE, sizeof(payload));
	if (mrcp_pkt_init(&p, l->op, (uint32_t)l->qpn, (uint32_t)l->psn) != 0)
		return -1;
	switch (l->op) {
	case MRCP_OP_WRITE_ONLY:
		p.bth.ack_req = true;
		p.meth.msn = (uint16_t)l->msn;
		p.reth.va = l->va;
		p.reth.rkey = (uint32_t)l->rkey;
		p.reth.dma_len = (uint32_t)l->len;
		p.payload = payload;
		p.payload_len = (uint32_t)l->len;
		break;
	case MRCP_OP_SACK:
		p.seth.cack_psn = (uint32_t)(l->has_cack ? l->cack : l->psn);
		p.seth.spdcid = (uint16_t)l->spdcid;
		p.seth.dpdcid = (uint16_t)l->dpdcid;
		p.seth.entropy = (uint32_t)l->ev;
		p.seth.svc_time = 255;
		p.cc.rcvd_bytes = 0xFFFFFF;
		break;
	case MRCP_OP_NACK:
		p.neth.nack_code = (uint8_t)l->code;
		p.neth.nack_psn = (uint32_t)l->psn;
		p.neth.spdcid = (uint16_t)l->spdcid;
		p.neth.dpdcid = (uint16_t)l->dpdcid;
		p.neth.entropy = (uint32_t)l->ev;
		break;
	case MRCP_OP_ACK:
		p.aeth.syndrome = (uint8_t)l->syndrome;
		p.aeth.msn = (uint32_t)l->msn;
		break;
	case MRCP_OP_PROBE:
		p.peth.spdcid = (uint16_t)l->spdcid;
		p.peth.dpdcid = (uint16_t)l->dpdcid;
		break;
	}
	n = mrcp_pkt_encode(&p, mrc, sizeof(mrc));
	if (n < 0)
		return -1;
	mrcp_frame_tx_defaults(&tx);
	memcpy(tx.dst_mac, dmac, 6);
	memcpy(tx.src_mac, smac, 6);
	tx.l3 = l->has_srv6 ? MRCP_FRAME_SRV6 : l->fam == 4 ? MRCP_FRAME_IPV4 : MRCP_FRAME_IPV6;
	memcpy(tx.src_ip, l->src, 16);
	memcpy(tx.dst_ip, l->dst, 16);
	if (l->has_srv6)
		memcpy(tx.srv6_da, l->srv6, 16);
	tx.ev = l->fam == 4 ? (uint32_t)l->ev & 0xFFFF : (uint32_t)l->ev;
	len = mrcp_frame_build(&tx, mrc, (size_t)n, buf, cap);
	if (len < 0)
		return -1;
	if (l->has_srv6 && l->has_osrc) /* the outer source, after the Ethernet header */
		memcpy(buf + MRCP_ETH_HLEN + 8, l->osrc, 16);
	while (len < 60) /* Ethernet's minimum; the receiver goes by the IP length */
		buf[len++] = 0;
	return len;
}

int main(int argc, char **argv)
{
	uint8_t smac[6], dmac[6], frame[MRCP_TX_HDR_MAX + MRCP_PAYLOAD_MAX + 256];
	struct sockaddr_ll sll = {.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL)};
	char buf[1024];
	unsigned lineno = 0, sent = 0;
	int fd;

	if (argc != 4 || parse_mac(argv[2], smac) != 0 || parse_mac(argv[3], dmac) != 0) {
		fprintf(stderr, "usage: mrc_inject IFACE SRC_MAC DST_MAC < SPEC\n");
		return 2;
	}
	sll.sll_ifindex = (int)if_nametoindex(argv[1]);
	if (sll.sll_ifindex == 0) {
		fprintf(stderr, "mrc_inject: %s: no such interface\n", argv[1]);
		return 2;
	}
	fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	if (fd < 0 || bind(fd, (struct sockaddr *)&sll, sizeof(sll)) != 0) {
		fprintf(stderr, "mrc_inject: AF_PACKET socket on %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	while (fgets(buf, sizeof(buf), stdin) != NULL) {
		struct line l;
		char *hash = strchr(buf, '#');
		int len;

		lineno++;
		if (hash != NULL)
			*hash = '\0';
		buf[strcspn(buf, "\r\n")] = '\0';
		if (buf[strspn(buf, " \t")] == '\0')
			continue;
		if (parse_line(buf, lineno, &l) != 0)
			return 2;
		len = build(&l, smac, dmac, frame, sizeof(frame));
		if (len < 0) {
			fprintf(stderr, "mrc_inject: line %u: the packet does not encode\n", lineno);
			return 2;
		}
		if (send(fd, frame, (size_t)len, 0) != len) {
			fprintf(stderr, "mrc_inject: line %u: send: %s\n", lineno, strerror(errno));
			return 1;
		}
		sent++;
	}
	close(fd);
	printf("%u\n", sent);
	return 0;
}
