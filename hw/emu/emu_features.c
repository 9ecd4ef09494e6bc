/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Get / Set Features (NVMe Base 2.0, 5.15 / 5.27). CDW10: FID (7:0), Get: SEL (10:8),
 * Set: SV (31). Values are controller-wide (none is namespace specific).
 *
 * SEL: 0 current, 1 default, 2 saved (the default when nothing is saved), 3 supported
 * capabilities (bit 0 saveable, bit 1 namespace specific, bit 2 changeable). Saving needs a
 * state file (Identify ONCS bit 4 is set only then): SV=1 otherwise, or for a feature that is
 * not saveable, is Feature Identifier Not Saveable. A reset brings every feature back to its
 * saved value, or its default.
 */
#include "emu_ctrl.h"

#define TEMP_SEL_COMPOSITE 0x0u
#define TEMP_SEL_ALL       0xfu
#define TEMP_OVER          0u
#define TEMP_UNDER         1u

struct feat_slot_desc {
	const char *name;    /* key in the state file */
	bool saveable;
};

static const struct feat_slot_desc slots[EMU_FEAT_NSLOTS] = {
	[EMU_FEAT_ARBITRATION] = { "arbitration", true },
	[EMU_FEAT_POWER_MGMT] = { "power_management", true },
	[EMU_FEAT_TEMP_OVER] = { "temperature_over_threshold", true },
	[EMU_FEAT_TEMP_UNDER] = { "temperature_under_threshold", true },
	[EMU_FEAT_ERR_RECOVERY] = { "error_recovery", true },
	[EMU_FEAT_VWC] = { "volatile_write_cache", true },
	[EMU_FEAT_NUM_QUEUES] = { "number_of_queues", false },
	[EMU_FEAT_IRQ_COALESCE] = { "interrupt_coalescing", true },
	[EMU_FEAT_WRITE_ATOMIC] = { "write_atomicity", true },
	[EMU_FEAT_ASYNC_EVENT] = { "async_event_config", true },
	[EMU_FEAT_IOCS_PROFILE] = { "iocs_profile", false },
};

const char *emu_feat_slot_name(unsigned slot)
{
	return slot < EMU_FEAT_NSLOTS ? slots[slot].name : NULL;
}

bool emu_feat_slot_saveable(unsigned slot)
{
	return slot < EMU_FEAT_NSLOTS && slots[slot].saveable;
}

static uint32_t default_value(const struct emu_ctrl *c, unsigned slot)
{
	switch (slot) {
	case EMU_FEAT_ARBITRATION:
		return EMU_DEFAULT_AB; /* round robin, burst 2^AB */
	case EMU_FEAT_TEMP_OVER:
		return EMU_WCTEMP_KELVIN;
	case EMU_FEAT_VWC:
		return 1; /* write cache enabled */
	case EMU_FEAT_NUM_QUEUES:
		return (c->p.max_queues - 1) << 16 | (c->p.max_queues - 1);
	default:
		return 0;
	}
}

static void apply_write_cache(struct emu_ctrl *c)
{
	for (uint32_t i = 0; i < c->nr_ns; i++)
		emu_ns_set_write_cache(c->ns[i], c->feat[EMU_FEAT_VWC] & 1u);
}

void emu_features_reset(struct emu_ctrl *c)
{
	for (unsigned s = 0; s < EMU_FEAT_NSLOTS; s++)
		c->feat[s] = c->has_state && slots[s].saveable && (c->nv.feat_saved_mask & (1u << s))
				     ? c->nv.feat_saved[s]
				     : default_value(c, s);
	apply_write_cache(c); /* no I/O queue exists at reset or power-on */
}

uint32_t emu_granted_sqs(const struct emu_ctrl *c)
{
	return (c->feat[EMU_FEAT_NUM_QUEUES] & 0xffffu) + 1;
}

uint32_t emu_granted_cqs(const struct emu_ctrl *c)
{
	return (c->feat[EMU_FEAT_NUM_QUEUES] >> 16) + 1;
}

bool emu_temp_warning(const struct emu_ctrl *c)
{
	uint32_t over = c->feat[EMU_FEAT_TEMP_OVER], under = c->feat[EMU_FEAT_TEMP_UNDER];
	return EMU_TEMP_KELVIN >= over || EMU_TEMP_KELVIN < under;
}

/* Feature identifier (and, for temperature, CDW11 selectors) to a slot; -1 = unsupported,
 * -2 = supported feature with an invalid selector. */
static int slot_of(uint8_t fid, uint32_t cdw11)
{
	switch (fid) {
	case NVME_FEAT_ARBITRATION: return EMU_FEAT_ARBITRATION;
	case NVME_FEAT_POWER_MGMT: return EMU_FEAT_POWER_MGMT;
	case NVME_FEAT_TEMP_THRESH: {
		/* TMPSEL (19:16): composite (0) or all sensors (Fh); THSEL (21:20): over / under */
		uint32_t tmpsel = (cdw11 >> 16) & 0xfu, thsel = (cdw11 >> 20) & 0x3u;
		if ((tmpsel != TEMP_SEL_COMPOSITE && tmpsel != TEMP_SEL_ALL) || thsel > TEMP_UNDER)
			return -2;
		return thsel == TEMP_OVER ? EMU_FEAT_TEMP_OVER : EMU_FEAT_TEMP_UNDER;
	}
	case NVME_FEAT_ERR_RECOVERY: return EMU_FEAT_ERR_RECOVERY;
	case NVME_FEAT_VOLATILE_WC: return EMU_FEAT_VWC;
	case NVME_FEAT_NUM_QUEUES: return EMU_FEAT_NUM_QUEUES;
	case NVME_FEAT_IRQ_COALESCE: return EMU_FEAT_IRQ_COALESCE;
	case NVME_FEAT_WRITE_ATOMIC: return EMU_FEAT_WRITE_ATOMIC;
	case NVME_FEAT_ASYNC_EVENT: return EMU_FEAT_ASYNC_EVENT;
	case NVME_FEAT_IOCS_PROFILE: return EMU_FEAT_IOCS_PROFILE;
	default: return -1;
	}
}

void emu_cmd_get_features(struct emu_ctrl *c, const struct nvme_sqe *cmd, struct emu_result *r)
{
	uint8_t fid = cmd->cdw10 & 0xffu;
	uint32_t sel = (cmd->cdw10 >> 8) & 0x7u;
	int slot = slot_of(fid, cmd->cdw11);
	if (slot < 0) {
		emu_fail(r, EMU_ST_INVALID_FIELD, slot == -1 ? EMU_PLOC_CDW10 : EMU_PLOC_CDW11);
		return;
	}
	bool saveable = c->has_state && slots[slot].saveable;
	switch (sel) {
	case NVME_FEAT_SEL_CURRENT:
		r->dw0 = c->feat[slot];
		break;
	case NVME_FEAT_SEL_DEFAULT:
		r->dw0 = default_value(c, (unsigned)slot);
		break;
	case NVME_FEAT_SEL_SAVED:
		r->dw0 = saveable && (c->nv.feat_saved_mask & (1u << slot)) ? c->nv.feat_saved[slot]
									     : default_value(c, (unsigned)slot);
		break;
	case NVME_FEAT_SEL_SUPPORTED:
		r->dw0 = (saveable ? 1u : 0u) | 1u << 2; /* every feature here is changeable */
		break;
	default:
		emu_fail(r, EMU_ST_INVALID_FIELD, EMU_PLOC_CDW10 + 1);
		break;
	}
}

/* Checks and normalises a new value; returns 0 or a status. */
static uint16_t validate(struct emu_ctrl *c, int slot, uint32_t cdw11, uint32_t *value)
{
	switch (slot) {
	case EMU_FEAT_ARBITRATION:
		*value = cdw11 & 0xffffff07u; /* AB, LPW, MPW, HPW */
		return 0;
	case EMU_FEAT_POWER_MGMT:
		if ((cdw11 & 0x1fu) > 0) /* PS beyond NPSS (one power state) */
			return EMU_ST_INVALID_FIELD;
		*value = cdw11 & 0xffu;
		return 0;
	case EMU_FEAT_TEMP_OVER:
	case EMU_FEAT_TEMP_UNDER:
		*value = cdw11 & 0xffffu; /* TMPTH, kelvin */
		return 0;
	case EMU_FEAT_ERR_RECOVERY:
		if (cdw11 & (1u << 16)) /* DULBE: deallocated blocks are not reported as errors */
			return EMU_ST_INVALID_FIELD;
		*value = cdw11 & 0xffffu; /* TLER */
		return 0;
	case EMU_FEAT_VWC:
		*value = cdw11 & 1u;
		return 0;
	case EMU_FEAT_NUM_QUEUES: {
		/* 5.27.1.5: only before any I/O queue is created; FFFFh is invalid; the
		 * controller grants what it can and returns it, 0's based */
		if (c->io_queue_created)
			return EMU_ST_DNR(NVME_SCT_GENERIC, NVME_SC_CMD_SEQ_ERROR);
		uint32_t nsqr = cdw11 & 0xffffu, ncqr = cdw11 >> 16;
		if (nsqr == 0xffffu || ncqr == 0xffffu)
			return EMU_ST_INVALID_FIELD;
		uint32_t max = c->p.max_queues;
		uint32_t nsq = nsqr + 1 < max ? nsqr + 1 : max, ncq = ncqr + 1 < max ? ncqr + 1 : max;
		*value = (ncq - 1) << 16 | (nsq - 1);
		return 0;
	}
	case EMU_FEAT_IRQ_COALESCE:
		*value = cdw11 & 0xffffu; /* THR, TIME */
		return 0;
	case EMU_FEAT_WRITE_ATOMIC:
		*value = cdw11 & 1u; /* DN */
		return 0;
	case EMU_FEAT_ASYNC_EVENT:
		/* SMART / health critical warnings; Zone Descriptor Changed notices (bit 27) */
		*value = cdw11 & (0xffu | NVME_AEC_NS_ATTR | NVME_AEC_ZONE_CHANGED);
		return 0;
	case EMU_FEAT_IOCS_PROFILE:
		/* only combination 0 (NVM with the controller's other sets) exists (Identify CNS 1Ch) */
		if (c->io_queue_created)
			return EMU_ST_DNR(NVME_SCT_GENERIC, NVME_SC_CMD_SEQ_ERROR);
		if (cdw11 & 0x1ffu)
			return EMU_ST_DNR(NVME_SCT_CMD, NVME_SC_FEATURE_NOT_CHANGEABLE);
		*value = 0;
		return 0;
	default:
		return EMU_ST_INVALID_FIELD;
	}
}

void emu_cmd_set_features(struct emu_ctrl *c, const struct nvme_sqe *cmd, struct emu_result *r)
{
	uint8_t fid = cmd->cdw10 & 0xffu;
	bool save = cmd->cdw10 & NVME_FEAT_SAVE;
	int slot = slot_of(fid, cmd->cdw11);
	if (slot < 0) {
		emu_fail(r, EMU_ST_INVALID_FIELD, slot == -1 ? EMU_PLOC_CDW10 : EMU_PLOC_CDW11);
		return;
	}
	if (save && !(c->has_state && slots[slot].saveable)) {
		emu_fail(r, EMU_ST_DNR(NVME_SCT_CMD, NVME_SC_FEATURE_NOT_SAVEABLE), EMU_PLOC_CDW10 + 3);
		return;
	}
	uint32_t value;
	uint16_t st = validate(c, slot, cmd->cdw11, &value);
	if (st) {
		emu_fail(r, st, EMU_PLOC_CDW11);
		return;
	}
	bool warned = emu_temp_warning(c);
	c->feat[slot] = value;
	r->dw0 = slot == EMU_FEAT_NUM_QUEUES ? value : 0;
	if (slot == EMU_FEAT_VWC) {
		/* a namespace must not see its cache mode change under a running command */
		emu_io_quiesce(c);
		apply_write_cache(c);
		emu_io_unquiesce(c);
	}
	if (!warned && emu_temp_warning(c))
		emu_aer_raise(c, EMU_EVENT_TEMPERATURE);
	if (save) {
		c->nv.feat_saved[slot] = value;
		c->nv.feat_saved_mask |= 1u << slot;
		if (emu_ctrl_persist(c))
			r->status = EMU_ST_INTERNAL;
	}
}
