/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Asynchronous Events (NVMe Base 2.0, 5.2). The host keeps up to AERL+1 (4) Asynchronous
 * Event Request commands outstanding; the controller completes one when an event occurs,
 * with DW0 = event type (2:0) | event information (15:8) | log page (23:16). An event that
 * finds no outstanding request waits until one arrives. After an event of a type is reported,
 * further events of that type are held back until the host reads the associated log page
 * without Retain Asynchronous Event (5.2.1).
 *
 * Events raised here:
 *   error status (type 0): Write to Invalid Doorbell Register (00h), Invalid Doorbell Write
 *     Value (01h); log page 01h. Always enabled.
 *   SMART / health status (type 1): Temperature Threshold (01h); log page 02h. Enabled by
 *     Asynchronous Event Configuration bit 1 (critical warning: temperature).
 *   notice (type 2): Zone Descriptor Changed (EFh); log page BFh (Changed Zone List). Enabled
 *     by Asynchronous Event Configuration bit 27. Namespace Attribute Changed (00h); log page
 *     04h (Changed Namespace List), when a Format NVM changed a namespace's LBA format.
 *     Enabled by Asynchronous Event Configuration bit 8.
 * Everything here runs under the controller lock.
 */
#include <string.h>

#include "emu_ctrl.h"

#define AER_TYPE_ERROR 0u
#define AER_TYPE_SMART 1u
#define AER_TYPE_NOTICE NVME_AEN_TYPE_NOTICE

struct event_desc {
	uint8_t type;
	uint8_t info;
	uint8_t log;
};

static const struct event_desc events[EMU_EVENT_COUNT] = {
	[EMU_EVENT_INVALID_DB_REG] = { AER_TYPE_ERROR, 0x00, NVME_LOG_ERROR },
	[EMU_EVENT_INVALID_DB_VALUE] = { AER_TYPE_ERROR, 0x01, NVME_LOG_ERROR },
	[EMU_EVENT_TEMPERATURE] = { AER_TYPE_SMART, 0x01, NVME_LOG_SMART },
	[EMU_EVENT_ZONE_CHANGED] = { AER_TYPE_NOTICE, NVME_AEN_INFO_ZONE_CHANGED, NVME_LOG_CHANGED_ZONES },
	[EMU_EVENT_NS_CHANGED] = { AER_TYPE_NOTICE, NVME_AEN_INFO_NS_ATTR, NVME_LOG_CHANGED_NS },
};

/* Completes outstanding requests with pending events of unmasked types. */
static void deliver(struct emu_ctrl *c)
{
	for (unsigned ev = 0; ev < EMU_EVENT_COUNT && c->nr_aers; ev++) {
		const struct event_desc *d = &events[ev];
		if (!(c->events_pending & (1u << ev)) || (c->event_types_masked & (1u << d->type)))
			continue;
		uint16_t cid = c->aer_cids[0];
		for (uint32_t i = 1; i < c->nr_aers; i++)
			c->aer_cids[i - 1] = c->aer_cids[i];
		c->nr_aers--;
		c->events_pending &= ~(1u << ev);
		c->event_types_masked |= 1u << d->type;
		emu_acq_post(c, cid, 0, (uint32_t)d->type | (uint32_t)d->info << 8 | (uint32_t)d->log << 16);
	}
}

void emu_cmd_async_event(struct emu_ctrl *c, const struct nvme_sqe *cmd, struct emu_result *r)
{
	if (c->nr_aers >= EMU_AERL + 1) {
		r->status = EMU_ST(NVME_SCT_CMD, NVME_SC_AER_LIMIT);
		return;
	}
	c->aer_cids[c->nr_aers++] = cmd->cid;
	r->deferred = true;
	deliver(c);
}

void emu_aer_raise(struct emu_ctrl *c, enum emu_event ev)
{
	if (events[ev].type == AER_TYPE_SMART && !(c->feat[EMU_FEAT_ASYNC_EVENT] & (1u << 1)))
		return;
	if (ev == EMU_EVENT_ZONE_CHANGED && !(c->feat[EMU_FEAT_ASYNC_EVENT] & NVME_AEC_ZONE_CHANGED))
		return;
	if (ev == EMU_EVENT_NS_CHANGED && !(c->feat[EMU_FEAT_ASYNC_EVENT] & NVME_AEC_NS_ATTR))
		return;
	c->events_pending |= 1u << ev;
	deliver(c);
}

void emu_aer_ns_changed(struct emu_ctrl *c, uint32_t nsid)
{
	bool listed = false;
	for (uint32_t i = 0; i < c->nr_changed_ns; i++)
		listed |= c->changed_ns[i] == nsid;
	/* at most EMU_MAX_NS namespaces: the list (1024 entries) never overflows */
	if (!listed && c->nr_changed_ns < EMU_MAX_NS)
		c->changed_ns[c->nr_changed_ns++] = nsid;
	emu_aer_raise(c, EMU_EVENT_NS_CHANGED);
}

void emu_aer_changed_ns_log(struct emu_ctrl *c, struct nvme_changed_ns_log *out, bool retain)
{
	memset(out, 0, sizeof(*out));
	memcpy(out->nsid, c->changed_ns, c->nr_changed_ns * sizeof(uint32_t));
	if (!retain)
		c->nr_changed_ns = 0;
}

void emu_aer_log_read(struct emu_ctrl *c, uint8_t lid)
{
	for (unsigned ev = 0; ev < EMU_EVENT_COUNT; ev++)
		if (events[ev].log == lid)
			c->event_types_masked &= ~(1u << events[ev].type);
	deliver(c);
}

bool emu_aer_abort(struct emu_ctrl *c, uint16_t cid)
{
	for (uint32_t i = 0; i < c->nr_aers; i++) {
		if (c->aer_cids[i] != cid)
			continue;
		for (uint32_t j = i + 1; j < c->nr_aers; j++)
			c->aer_cids[j - 1] = c->aer_cids[j];
		c->nr_aers--;
		emu_acq_post(c, cid, EMU_ST(NVME_SCT_GENERIC, NVME_SC_ABORT_REQUESTED), 0);
		return true;
	}
	return false;
}

void emu_aer_reset(struct emu_ctrl *c)
{
	c->nr_aers = 0;
	c->events_pending = 0;
	c->event_types_masked = 0;
	c->nr_changed_ns = 0;
}
