/* dp_wr.c - see dp_wr.h. */
#include "dp_wr.h"

int mrcd_wr_check(const struct mrcd_wr_owner *o, const struct mrc_shm_wr *w,
		  struct mrcp_sge sge[MRC_SHM_MAX_SGE], uint8_t *status)
{
	bool owned = false;

	for (unsigned i = 0; i < o->n_qps; i++)
		owned |= o->qpns[i] == w->qp;
	if (!owned || (w->opcode != MRC_SHM_OP_WRITE && w->opcode != MRC_SHM_OP_WRITE_IMM) ||
	    w->num_sge > MRC_SHM_MAX_SGE) {
		*status = MRC_SHM_WC_GENERAL_ERR;
		return -1;
	}
	for (unsigned i = 0; i < w->num_sge; i++) {
		const struct mrcd_wr_mr *m = NULL;
		uint64_t ofs = w->sge[i].ofs, len = w->sge[i].len;

		for (unsigned k = 0; k < o->n_mrs; k++)
			if (o->mrs[k].used && o->mrs[k].lkey == w->sge[i].lkey) {
				m = &o->mrs[k];
				break;
			}
		/* bounds without overflow: ofs >= m->ofs and len <= what is
		 * left of the region after ofs */
		if (!m || ofs < m->ofs || ofs - m->ofs > m->len || len > m->len - (ofs - m->ofs)) {
			*status = MRC_SHM_WC_LOC_PROT_ERR;
			return -1;
		}
		sge[i].addr = o->va_base + ofs;
		sge[i].len = (uint32_t)len;
		sge[i].lkey = m->lkey;
	}
	return 0;
}
