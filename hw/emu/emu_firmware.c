/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Firmware Image Download and Firmware Commit (NVMe Base 2.0, 5.12 and 5.11).
 *
 * Slots: 1 holds the factory revision (the URI's fw=) and is read-only; 2 and 3 take
 * downloaded images. The active slot, the slot to activate at the next reset and the
 * revisions in slots 2-3 live in the state file.
 *
 * Download: CDW10 NUMD (0's based dwords), CDW11 OFST (dwords). Offset and length must be
 * multiples of FWUG (4 KiB) except for the final piece of the image, which may be shorter
 * (nothing may follow it); pieces may come in any order but not overlap (Overlapping Range);
 * images up to 16 MiB.
 *
 * Commit: CDW10 FS (2:0), CA (5:3), BPID (31).
 *   CA 0  replace slot FS with the downloaded image
 *   CA 1  replace, and activate it at the next controller reset
 *   CA 2  activate the image in slot FS at the next controller reset
 *   CA 3  activate the image in slot FS now (Identify FRMW bit 4)
 * CA 1 and 2 complete successfully; the change shows in the firmware slot log's "next" field
 * and takes effect when CC.EN goes 1 -> 0 or at the next power-on. Identify FR is the revision running: replacing the
 * image of the active slot changes FR only once that image is activated. FS 0 lets the controller choose (CA 0/1: a
 * writable slot other than the active one, preferring an empty one; CA 2/3: the slot
 * committed last, else the active one). A missing or malformed image is Invalid Firmware
 * Image; replacing slot 1 or a slot above 3 is Invalid Firmware Slot; boot partitions
 * (CA 6/7) and reserved actions are Invalid Field.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu_ctrl.h"

#define ST_INVALID_SLOT  EMU_ST_DNR(NVME_SCT_CMD, NVME_SC_INVALID_FW_SLOT)
#define ST_INVALID_IMAGE EMU_ST_DNR(NVME_SCT_CMD, NVME_SC_INVALID_FW_IMAGE)
#define ST_OVERLAP       EMU_ST_DNR(NVME_SCT_CMD, NVME_SC_OVERLAPPING_RANGE)

static bool slot_valid(uint32_t slot)
{
	return slot >= 1 && slot <= EMU_FW_SLOTS;
}

void emu_fw_init(struct emu_ctrl *c)
{
	struct emu_fw *fw = &c->fw;
	memset(fw->rev, 0, sizeof(fw->rev));
	snprintf(fw->rev[1], sizeof(fw->rev[1]), "%s", c->p.firmware);
	for (uint32_t s = 2; s <= EMU_FW_SLOTS; s++)
		snprintf(fw->rev[s], sizeof(fw->rev[s]), "%s", c->nv.fw_rev[s]);
	fw->active = slot_valid(c->nv.fw_active) && fw->rev[c->nv.fw_active][0] ? c->nv.fw_active : 1;
	/* a power cycle is a reset too: an image waiting for one becomes active now */
	if (slot_valid(c->nv.fw_next) && fw->rev[c->nv.fw_next][0])
		fw->active = c->nv.fw_next;
	fw->next = 0;
	fw->last_committed = 0;
	snprintf(fw->running, sizeof(fw->running), "%s", fw->rev[fw->active]);
}

static void staging_discard(struct emu_fw *fw)
{
	free(fw->staging);
	fw->staging = NULL;
	fw->staging_cap = 0;
	fw->staged_end = 0;
	fw->final_end = 0;
	memset(fw->granules, 0, sizeof(fw->granules));
}

void emu_fw_free(struct emu_ctrl *c)
{
	staging_discard(&c->fw);
}

void emu_fw_reset(struct emu_ctrl *c)
{
	struct emu_fw *fw = &c->fw;
	staging_discard(fw);
	if (fw->next) {
		fw->active = fw->next;
		fw->next = 0;
		snprintf(fw->running, sizeof(fw->running), "%s", fw->rev[fw->active]);
		emu_ctrl_persist(c);
	}
}

const char *emu_fw_active_rev(const struct emu_ctrl *c)
{
	return c->fw.running;
}

static bool granule_test(const struct emu_fw *fw, uint32_t g)
{
	return fw->granules[g / 8] & (1u << (g % 8));
}

void emu_cmd_fw_download(struct emu_ctrl *c, const struct nvme_sqe *cmd, struct emu_result *r)
{
	struct emu_fw *fw = &c->fw;
	uint64_t len = ((uint64_t)cmd->cdw10 + 1) * 4;
	uint64_t off = (uint64_t)cmd->cdw11 * 4;
	if (off % EMU_FWUG_BYTES) {
		emu_fail(r, EMU_ST_INVALID_FIELD, EMU_PLOC_CDW11);
		return;
	}
	if (len > EMU_MDTS_BYTES || off + len > EMU_FW_STAGING_MAX) {
		emu_fail(r, EMU_ST_INVALID_FIELD, EMU_PLOC_CDW10);
		return;
	}
	uint64_t end = off + len;
	bool short_piece = len % EMU_FWUG_BYTES != 0;
	/* only the last piece of the image may be short: nothing may lie beyond it */
	if ((fw->final_end && end > fw->final_end) || (short_piece && fw->staged_end > end)) {
		emu_fail(r, EMU_ST_INVALID_FIELD, EMU_PLOC_CDW10);
		return;
	}
	uint32_t g0 = (uint32_t)(off / EMU_FWUG_BYTES);
	uint32_t g1 = (uint32_t)((end + EMU_FWUG_BYTES - 1) / EMU_FWUG_BYTES);
	for (uint32_t g = g0; g < g1; g++) {
		if (granule_test(fw, g)) {
			emu_fail(r, ST_OVERLAP, EMU_PLOC_CDW11);
			return;
		}
	}
	uint32_t need = g1 * EMU_FWUG_BYTES;
	if (need > fw->staging_cap) {
		uint8_t *p = realloc(fw->staging, need);
		if (!p) {
			r->status = EMU_ST_INTERNAL;
			return;
		}
		memset(p + fw->staging_cap, 0, need - fw->staging_cap);
		fw->staging = p;
		fw->staging_cap = need;
	}
	uint16_t st = emu_dma_from_host(c, cmd, fw->staging + off, (uint32_t)len);
	if (st) {
		r->status = st;
		return;
	}
	for (uint32_t g = g0; g < g1; g++)
		fw->granules[g / 8] |= (uint8_t)(1u << (g % 8));
	if (end > fw->staged_end)
		fw->staged_end = (uint32_t)end;
	if (short_piece)
		fw->final_end = (uint32_t)end;
}

/* The downloaded image, if it is complete (no holes) and well formed. */
static bool staged_image(const struct emu_fw *fw, char rev[9])
{
	if (!fw->staged_end)
		return false;
	uint32_t granules = (fw->staged_end + EMU_FWUG_BYTES - 1) / EMU_FWUG_BYTES;
	for (uint32_t g = 0; g < granules; g++)
		if (!granule_test(fw, g))
			return false;
	return emu_fw_image_valid(fw->staging, fw->staged_end, rev);
}

static uint8_t pick_replace_slot(const struct emu_fw *fw)
{
	uint8_t fallback = 0;
	for (uint8_t s = 2; s <= EMU_FW_SLOTS; s++) {
		if (s == fw->active)
			continue;
		if (!fw->rev[s][0])
			return s;
		if (!fallback)
			fallback = s;
	}
	return fallback;
}

void emu_cmd_fw_commit(struct emu_ctrl *c, const struct nvme_sqe *cmd, struct emu_result *r)
{
	struct emu_fw *fw = &c->fw;
	uint32_t fs = cmd->cdw10 & 0x7u;
	uint32_t ca = (cmd->cdw10 >> 3) & 0x7u;
	if (ca > NVME_FW_CA_ACTIVATE_NOW) {
		emu_fail(r, EMU_ST_INVALID_FIELD, EMU_PLOC_CDW10);
		return;
	}
	if (fs > EMU_FW_SLOTS) {
		emu_fail(r, ST_INVALID_SLOT, EMU_PLOC_CDW10);
		return;
	}
	uint8_t slot = (uint8_t)fs;
	if (ca == NVME_FW_CA_REPLACE || ca == NVME_FW_CA_REPLACE_ACTIVATE) {
		if (!slot)
			slot = pick_replace_slot(fw);
		if (slot == 1) {
			emu_fail(r, ST_INVALID_SLOT, EMU_PLOC_CDW10);
			return;
		}
		char rev[9];
		if (!staged_image(fw, rev)) {
			emu_fail(r, ST_INVALID_IMAGE, EMU_PLOC_NONE);
			return;
		}
		snprintf(fw->rev[slot], sizeof(fw->rev[slot]), "%s", rev);
		staging_discard(fw);
		fw->last_committed = slot;
		if (ca == NVME_FW_CA_REPLACE_ACTIVATE)
			fw->next = slot;
	} else {
		if (!slot)
			slot = slot_valid(fw->last_committed) ? fw->last_committed : fw->active;
		if (!fw->rev[slot][0]) {
			emu_fail(r, ST_INVALID_IMAGE, EMU_PLOC_CDW10);
			return;
		}
		if (ca == NVME_FW_CA_ACTIVATE) {
			fw->next = slot;
		} else {
			fw->active = slot;
			fw->next = 0;
			snprintf(fw->running, sizeof(fw->running), "%s", fw->rev[slot]);
		}
	}
	if (emu_ctrl_persist(c))
		r->status = EMU_ST_INTERNAL;
}
