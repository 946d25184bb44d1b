/* test_pcap.c - unit tests for lib/core/pcap.c: exact header and record
 * bytes, snap-length truncation, and error propagation from the callback. */
#include <errno.h>

#include "mrcp_pcap.h"
#include "mrcp_test.h"

/* A fake sink: appends to a buffer, logs each call's size, and can fail the
 * Nth call (countdown injection, practice 3). */
struct fake_sink {
	uint8_t buf[4096];
	size_t len;
	int calls;
	int fail_call; /* 1-based call number that fails; 0 = never */
	int fail_rc;   /* what a call returns on success (0 or a byte count) */
};

static int fake_write(void *ctx, const void *buf, size_t len)
{
	struct fake_sink *s = ctx;

	s->calls++;
	if (s->calls == s->fail_call)
		return -EIO;
	ASSERT_LE(s->len + len, sizeof(s->buf));
	memcpy(s->buf + s->len, buf, len);
	s->len += len;
	return s->fail_rc;
}

static void sink_init(struct fake_sink *s, struct mrcp_pcap *p, uint32_t snaplen)
{
	memset(s, 0, sizeof(*s));
	p->write = fake_write;
	p->ctx = s;
	p->snaplen = snaplen;
}

TEST(pcap, pcap_begin__global_header_bytes)
{
	static const uint8_t want[24] = {
		0x4D, 0x3C, 0xB2, 0xA1, /* magic, nanosecond, little-endian */
		0x02, 0x00, 0x04, 0x00, /* version 2.4 */
		0x00, 0x00, 0x00, 0x00, /* thiszone */
		0x00, 0x00, 0x00, 0x00, /* sigfigs */
		0xDC, 0x05, 0x00, 0x00, /* snaplen 1500 */
		0x01, 0x00, 0x00, 0x00, /* LINKTYPE_ETHERNET */
	};
	struct fake_sink s;
	struct mrcp_pcap p;

	sink_init(&s, &p, 1500);
	ASSERT_EQ(0, mrcp_pcap_begin(&p));
	ASSERT_EQ(24, s.len);
	ASSERT_EQ(1, s.calls);
	ASSERT_MEMEQ(want, s.buf, 24);
}

TEST(pcap, pcap_begin__snaplen_0_means_default)
{
	struct fake_sink s;
	struct mrcp_pcap p;

	sink_init(&s, &p, 0);
	ASSERT_EQ(0, mrcp_pcap_begin(&p));
	ASSERT_EQ(MRCP_PCAP_SNAPLEN_DEFAULT,
		  s.buf[16] | s.buf[17] << 8 | s.buf[18] << 16 | (uint32_t)s.buf[19] << 24);
}

TEST(pcap, pcap_begin__errors)
{
	struct fake_sink s;
	struct mrcp_pcap p;

	sink_init(&s, &p, 0);
	p.write = NULL;
	ASSERT_EQ(-EINVAL, mrcp_pcap_begin(&p));
	sink_init(&s, &p, 0);
	s.fail_call = 1;
	ASSERT_EQ(-EIO, mrcp_pcap_begin(&p));
	sink_init(&s, &p, 0);
	s.fail_rc = 24; /* a callback that returns a byte count succeeds */
	ASSERT_EQ(0, mrcp_pcap_begin(&p));
}

TEST(pcap, pcap_record__header_and_frame_bytes)
{
	static const uint8_t want_hdr[16] = {
		0xD2, 0x02, 0x96, 0x49, /* 1234567890 s */
		0x15, 0xCD, 0x5B, 0x07, /* 123456789 ns */
		0x05, 0x00, 0x00, 0x00, /* captured */
		0x05, 0x00, 0x00, 0x00, /* original */
	};
	static const uint8_t frame[5] = {1, 2, 3, 4, 5};
	struct fake_sink s;
	struct mrcp_pcap p;

	sink_init(&s, &p, 0);
	ASSERT_EQ(0, mrcp_pcap_record(&p, 1234567890123456789ull, frame, 5));
	ASSERT_EQ(21, s.len);
	ASSERT_MEMEQ(want_hdr, s.buf, 16);
	ASSERT_MEMEQ(frame, s.buf + 16, 5);
}

TEST(pcap, pcap_record__truncates_at_snaplen)
{
	uint8_t frame[100];
	struct fake_sink s;
	struct mrcp_pcap p;

	for (size_t i = 0; i < sizeof(frame); i++)
		frame[i] = (uint8_t)i;
	sink_init(&s, &p, 64);
	ASSERT_EQ(0, mrcp_pcap_record(&p, 0, frame, sizeof(frame)));
	ASSERT_EQ(16 + 64, s.len);
	ASSERT_EQ(64, s.buf[8]);   /* captured */
	ASSERT_EQ(100, s.buf[12]); /* original kept */
	ASSERT_MEMEQ(frame, s.buf + 16, 64);
	/* exactly snaplen is not truncated */
	sink_init(&s, &p, 100);
	ASSERT_EQ(0, mrcp_pcap_record(&p, 0, frame, sizeof(frame)));
	ASSERT_EQ(16 + 100, s.len);
	ASSERT_EQ(100, s.buf[8]);
}

TEST(pcap, pcap_record__empty_frame_writes_only_the_header)
{
	struct fake_sink s;
	struct mrcp_pcap p;

	sink_init(&s, &p, 0);
	ASSERT_EQ(0, mrcp_pcap_record(&p, 999999999, NULL, 0));
	ASSERT_EQ(1, s.calls);
	ASSERT_EQ(16, s.len);
	ASSERT_EQ(0, s.buf[0]);       /* 0 s */
	ASSERT_EQ(0xFF, s.buf[4]);    /* 999999999 ns = 0x3B9AC9FF */
	ASSERT_EQ(0x3B, s.buf[7]);
}

TEST(pcap, pcap_record__errors)
{
	uint8_t frame[8] = {0};
	struct fake_sink s;
	struct mrcp_pcap p;

	sink_init(&s, &p, 0);
	p.write = NULL;
	ASSERT_EQ(-EINVAL, mrcp_pcap_record(&p, 0, frame, sizeof(frame)));
	sink_init(&s, &p, 0);
	ASSERT_EQ(-EINVAL, mrcp_pcap_record(&p, 0, NULL, (size_t)UINT32_MAX + 1));
	ASSERT_EQ(0, s.calls);
	sink_init(&s, &p, 0);
	s.fail_call = 1;
	ASSERT_EQ(-EIO, mrcp_pcap_record(&p, 0, frame, sizeof(frame)));
	ASSERT_EQ(1, s.calls); /* the frame is not written after a failed header */
	sink_init(&s, &p, 0);
	s.fail_call = 2;
	ASSERT_EQ(-EIO, mrcp_pcap_record(&p, 0, frame, sizeof(frame)));
	sink_init(&s, &p, 0);
	s.fail_rc = 7;
	ASSERT_EQ(0, mrcp_pcap_record(&p, 0, frame, sizeof(frame)));
}
