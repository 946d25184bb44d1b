/* fuzz_ctl.c - libFuzzer target for mrcd_ctl_parse() (lib/ctl/ctl_proto.c):
 * every input is parsed as one request line. A success must name a valid
 * command and leave an empty reason; a failure must be one of the documented
 * codes, leave a NUL-terminated one-line reason and no command, and encode
 * as a one-line error reply with a named code. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "mrcd_ctl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mrcd_ctl_req req;
	char reason[MRCD_CTL_REASON_MAX];
	/* a private copy, so that a read past @size is caught by ASan */
	char *line = malloc(size ? size : 1);
	int rc;

	CHECK(line != NULL);
	memcpy(line, data, size);
	memset(reason, 'x', sizeof(reason));
	rc = mrcd_ctl_parse(line, size, &req, reason, sizeof(reason));
	CHECK(memchr(reason, '\0', sizeof(reason)) != NULL);
	CHECK(strchr(reason, '\n') == NULL);
	if (rc == 0) {
		CHECK(req.cmd > MRCD_CTL_INVALID && req.cmd < MRCD_CTL_CMD_COUNT);
		CHECK(mrcd_ctl_cmd_name(req.cmd) != NULL);
		CHECK(reason[0] == '\0');
		if (req.cmd == MRCD_CTL_FAULT_SET)
			CHECK(req.fault_set.ev_min <= req.fault_set.ev_max);
		if (req.cmd == MRCD_CTL_QP || req.cmd == MRCD_CTL_EVS)
			CHECK(req.qp.qpn >= 1 && req.qp.qpn <= 0xffffff);
		if (req.cmd == MRCD_CTL_SELFTEST_START)
			CHECK(req.st_start.bytes >= 1 && req.st_start.window >= 1 &&
			      req.st_start.msg_size >= 64);
	} else {
		CHECK(rc == -EINVAL || rc == -EPROTO || rc == -ENOENT || rc == -E2BIG);
		CHECK(req.cmd == MRCD_CTL_INVALID);
		CHECK(reason[0] != '\0');
		/* the error reply the daemon would send: one line, a named code */
		CHECK(mrcd_ctl_errno_name(-rc) != NULL);
		{
			char *out = mrcd_ctl_format_reply(req.has_id, req.id, NULL, rc, reason);

			CHECK(out != NULL);
			CHECK(strchr(out, '\n') == out + strlen(out) - 1);
			CHECK(strstr(out, mrcd_ctl_errno_name(-rc)) != NULL);
			free(out);
		}
	}
	/* the parser is a pure function of its input */
	{
		struct mrcd_ctl_req again;
		char reason2[MRCD_CTL_REASON_MAX];

		CHECK(mrcd_ctl_parse(line, size, &again, reason2, sizeof(reason2)) == rc);
		CHECK(strcmp(reason, reason2) == 0);
	}
	free(line);
	return 0;
}
