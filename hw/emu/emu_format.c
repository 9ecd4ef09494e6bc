/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Format NVM (NVMe Base 2.0, 5.14; NVM Command Set 1.0, 4.1.5.1 LBA formats).
 * CDW10: LBAF (3:0), MSET (4), PI (7:5), PIL (8), SES (11:9), LBAFU (13:12). NSID: one active
 * namespace, or FFFFFFFFh for all of them. No metadata and no protection information are
 * supported: MSET or PI set is Invalid Field; the LBA format index and SES are checked by the
 * namespace (Invalid Format for an index it does not offer). I/O is held off while the
 * namespaces change format. The new LBA sizes go to the state file, so a device created
 * again from the same URI comes back with the format the host gave it.
 */
#include "emu_ctrl.h"
#include "lib/common/crash_point.h"

#define NSID_ALL 0xffffffffu

void emu_cmd_format(struct emu_ctrl *c, const struct nvme_sqe *cmd, struct emu_result *r)
{
	uint32_t nsid = cmd->nsid;
	uint32_t cdw10 = cmd->cdw10;
	uint8_t lbaf = (uint8_t)((cdw10 & 0xfu) | ((cdw10 >> 12) & 0x3u) << 4);
	uint8_t ses = (uint8_t)((cdw10 >> 9) & 0x7u);
	bool all = nsid == NSID_ALL;
	if (!all && (nsid == 0 || nsid > EMU_MAX_NS || !c->ns[nsid - 1])) {
		emu_fail(r, EMU_ST_INVALID_NS, EMU_PLOC_NSID);
		return;
	}
	if (cdw10 & (0x1u << 4 | 0x7u << 5)) {
		emu_fail(r, EMU_ST_INVALID_FIELD, EMU_PLOC_CDW10);
		return;
	}
	emu_io_quiesce(c);
	uint16_t st = 0;
	for (uint32_t i = 0; i < c->nr_ns && !st; i++) {
		if (!(all || i + 1 == nsid))
			continue;
		struct nvme_id_ns before, after;
		emu_ns_identify(c->ns[i], &before);
		st = emu_ns_format(c->ns[i], lbaf, ses);
		emu_ns_identify(c->ns[i], &after);
		/* a new LBA format is a change of the namespace's attributes (a notice) */
		if (before.flbas != after.flbas || before.nsze != after.nsze)
			emu_aer_ns_changed(c, i + 1);
	}
	emu_io_unquiesce(c);
	if (st) {
		emu_fail(r, st, EMU_PLOC_CDW10);
		return;
	}
	CRASH_POINT("format.before_persist"); /* the media changed, the state file not yet */
	if (emu_ctrl_persist(c))
		r->status = EMU_ST_INTERNAL;
}
