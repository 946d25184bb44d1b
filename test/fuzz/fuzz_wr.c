/* fuzz_wr.c - libFuzzer target for mrcd_wr_check (lib/dp/dp_wr.c), the
 * check between a client's send ring and the engine: any bytes as the work
 * request and the session's QPs and regions; an accepted request must have
 * every SGE inside a live region of its key (checked here independently,
 * in 128-bit arithmetic), a refused one a known error status. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "dp_wr.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mrcd_wr_mr mrs[4];
	uint32_t qpns[4];
	struct mrc_shm_wr w;
	struct mrcp_sge sge[MRC_SHM_MAX_SGE];
	struct mrcd_wr_owner o;
	uint8_t st = 0xee;
	size_t need = sizeof(qpns) + sizeof(mrs) + sizeof(w) + 2;

	if (size < need)
		return 0;
	memcpy(qpns, data, sizeof(qpns));
	data += sizeof(qpns);
	for (unsigned i = 0; i < 4; i++) {
		/* field by field: a bool must not be loaded from arbitrary bytes */
		const uint8_t *m = data + i * sizeof(struct mrcd_wr_mr);

		mrs[i].used = m[offsetof(struct mrcd_wr_mr, used)] & 1;
		memcpy(&mrs[i].lkey, m + offsetof(struct mrcd_wr_mr, lkey), sizeof(mrs[i].lkey));
		memcpy(&mrs[i].ofs, m + offsetof(struct mrcd_wr_mr, ofs), sizeof(mrs[i].ofs));
		memcpy(&mrs[i].len, m + offsetof(struct mrcd_wr_mr, len), sizeof(mrs[i].len));
	}
	data += sizeof(mrs);
	memcpy(&w, data, sizeof(w));
	data += sizeof(w);
	o.qpns = qpns;
	o.n_qps = data[0] % 5;
	o.mrs = mrs;
	o.n_mrs = data[1] % 5;
	o.va_base = 1ull << 40;
	if (mrcd_wr_check(&o, &w, sge, &st) == 0) {
		if (w.num_sge > MRC_SHM_MAX_SGE)
			abort();
		for (unsigned i = 0; i < w.num_sge; i++) {
			bool inside = false;

			for (unsigned k = 0; k < o.n_mrs; k++) {
				unsigned __int128 lo = mrs[k].ofs, hi = lo + mrs[k].len;
				unsigned __int128 a = w.sge[i].ofs, b = a + w.sge[i].len;

				if (mrs[k].used && mrs[k].lkey == w.sge[i].lkey && a >= lo && b <= hi)
					inside = true;
			}
			if (!inside || sge[i].addr != o.va_base + w.sge[i].ofs || sge[i].len != w.sge[i].len)
				abort();
		}
	} else if (st != MRC_SHM_WC_GENERAL_ERR && st != MRC_SHM_WC_LOC_PROT_ERR) {
		abort();
	}
	return 0;
}
