/* dp_wr.h - the check every client work request passes before it reaches
 * the engine (docs/control.md, "Validation"): the QP is the session's, the
 * opcode known, at most MRC_SHM_MAX_SGE SGEs, every SGE's lkey one of the
 * session's regions and its bytes inside that region. DPDK-free, so the
 * fuzz target (test/fuzz/fuzz_wr.c) and unit test drive it directly. */
#ifndef MRCD_DP_WR_H
#define MRCD_DP_WR_H

#include <stdbool.h>
#include <stdint.h>

#include "mrc_shm.h"
#include "mrcp_engine.h"

/** A session's region, as the check sees it. */
struct mrcd_wr_mr {
	bool used;
	uint32_t lkey;
	uint64_t ofs, len;         /* arena offsets */
};

/** What a session owns. */
struct mrcd_wr_owner {
	const uint32_t *qpns;
	unsigned n_qps;
	const struct mrcd_wr_mr *mrs;
	unsigned n_mrs;
	uint64_t va_base;          /* engine VA of arena offset 0 */
};

/**
 * Check @w against @o. On success fill @sge (the engine's SGEs: VA =
 * va_base + ofs) and return 0; otherwise return -1 with *@status set to the
 * error completion's status (MRC_SHM_WC_GENERAL_ERR: unknown QP, opcode or
 * SGE count; MRC_SHM_WC_LOC_PROT_ERR: unknown lkey or bytes outside the
 * region). Never reads outside @w, @o's arrays or @sge[MRC_SHM_MAX_SGE].
 */
int mrcd_wr_check(const struct mrcd_wr_owner *o, const struct mrc_shm_wr *w,
		  struct mrcp_sge sge[MRC_SHM_MAX_SGE], uint8_t *status);

#endif
