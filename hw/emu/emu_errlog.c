/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Error Information log (NVMe Base 2.0, 5.16.1.2): a ring of the last 64 errors (Identify
 * ELPE = 63). Every entry gets a unique, increasing Error Count; the count survives power
 * cycles through the state file. The status field is the CQE's status without the phase tag.
 * Errors not tied to a command (bad doorbell writes) have SQID and CID FFFFh and carry the
 * doorbell register's BAR0 offset in Command Specific Information.
 * Recorded from any thread (I/O errors happen on the fetching thread): one leaf lock.
 */
#include <string.h>

#include "emu_ctrl.h"

static void record(struct emu_ctrl *c, struct nvme_error_log *e)
{
	pthread_mutex_lock(&c->errlog_lock);
	e->error_count = ++c->error_count;
	c->errlog[c->errlog_next] = *e;
	c->errlog_next = (c->errlog_next + 1) % EMU_ERRLOG_ENTRIES;
	pthread_mutex_unlock(&c->errlog_lock);
}

void emu_errlog_record(struct emu_ctrl *c, uint16_t sqid, uint16_t cid, uint16_t status,
		       uint16_t param_loc, uint64_t lba, uint32_t nsid)
{
	struct nvme_error_log e;
	memset(&e, 0, sizeof(e));
	e.sqid = sqid;
	e.cid = cid;
	e.status = status & 0xfffeu;
	e.param_loc = param_loc;
	e.lba = lba;
	e.nsid = nsid;
	record(c, &e);
}

void emu_errlog_record_doorbell(struct emu_ctrl *c, uint32_t off)
{
	struct nvme_error_log e;
	memset(&e, 0, sizeof(e));
	e.sqid = 0xffff;
	e.cid = 0xffff;
	e.param_loc = EMU_PLOC_NONE;
	e.csi = off;
	record(c, &e);
}

void emu_errlog_snapshot(struct emu_ctrl *c, struct nvme_error_log *out, uint64_t *count)
{
	pthread_mutex_lock(&c->errlog_lock);
	for (uint32_t i = 0; out && i < EMU_ERRLOG_ENTRIES; i++) {
		uint32_t slot = (c->errlog_next + EMU_ERRLOG_ENTRIES - 1 - i) % EMU_ERRLOG_ENTRIES;
		out[i] = c->errlog[slot]; /* never written: all zero, an empty entry */
	}
	if (count)
		*count = c->error_count;
	pthread_mutex_unlock(&c->errlog_lock);
}
