/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Vendor specific admin command C1h: fault injection, so that a host's error paths can be
 * tested against a device that really fails (include/unvme/spec/cmd.h). CDW10 = fault,
 * CDW11 = count.
 *   NONE         clears pending DROP and MEDIA_ERROR counts (commands already dropped stay
 *                lost until aborted, deleted or reset).
 *   FATAL        the command completes, then CSTS.CFS is set and the controller processes
 *                nothing more until the host clears CC.EN.
 *   DROP         the next CDW11 I/O commands (any queue) are fetched and never completed. They
 *                stay in flight: Abort finds them (Command Abort Requested), Delete I/O SQ
 *                completes them (Aborted due to SQ Deletion), a reset forgets them. At most
 *                65536 per command.
 *   MEDIA_ERROR  the next CDW11 Read / Write commands fail without touching the media:
 *                Unrecovered Read Error / Write Fault (media errors, retry allowed); they count
 *                in SMART Media and Data Integrity Errors and in the error log. The count
 *                saturates at 4194303.
 *   SWALLOW      as DROP, but the commands are lost for good, as by a device that forgot
 *                them: Abort does not find them (not aborted), only Delete I/O SQ or a reset
 *                ends them. This is how a host's timeout escalation (Abort, then fencing the
 *                queue) is exercised for real. At most 65536 per command. With CDW12 bit 0
 *                the next CDW11 admin commands are swallowed instead (after this one): only
 *                a controller reset ends them.
 * Unknown faults are Invalid Field. A real controller answers C1h with Invalid Command Opcode.
 */
#include <stdlib.h>

#include "emu_ctrl.h"

#define DROP_MAX_PER_CMD 65536u
#define DROPPED_MAX (1u << 20)

#define DROP_SHIFT 0
#define SWALLOW_SHIFT 21
#define MEDIA_SHIFT 42
#define FIELD_MASK ((1ull << 21) - 1)
#define MEDIA_MAX ((1ull << 22) - 1)
static uint32_t drop_left(uint64_t f) { return (uint32_t)(f >> DROP_SHIFT & FIELD_MASK); }
static uint32_t swallow_left(uint64_t f) { return (uint32_t)(f >> SWALLOW_SHIFT & FIELD_MASK); }
static uint32_t media_left(uint64_t f) { return (uint32_t)(f >> MEDIA_SHIFT); }

/* Ensures room in the dropped list for n more commands: the I/O path never allocates. */
static bool dropped_reserve(struct emu_ctrl *c, uint32_t n)
{
	bool ok = true;
	pthread_mutex_lock(&c->fault_lock);
	uint64_t f = atomic_load(&c->faults);
	uint64_t pending = (uint64_t)drop_left(f) + swallow_left(f);
	uint64_t need = (uint64_t)c->nr_dropped + pending + n;
	if (need > DROPPED_MAX) {
		ok = false;
	} else if (need > c->dropped_cap) {
		struct emu_dropped *d = realloc(c->dropped, need * sizeof(*d));
		if (d) {
			c->dropped = d;
			c->dropped_cap = (uint32_t)need;
		} else {
			ok = false;
		}
	}
	pthread_mutex_unlock(&c->fault_lock);
	return ok;
}

void emu_cmd_fault(struct emu_ctrl *c, const struct nvme_sqe *cmd, struct emu_result *r)
{
	uint32_t count = cmd->cdw11;
	switch (cmd->cdw10) {
	case NVME_EMU_FAULT_NONE:
		atomic_store(&c->faults, 0);
		c->admin_swallow = 0;
		return;
	case NVME_EMU_FAULT_FATAL:
		emu_ctrl_fatal(c);
		return;
	case NVME_EMU_FAULT_DROP:
	case NVME_EMU_FAULT_SWALLOW:
		if (count > DROP_MAX_PER_CMD) {
			emu_fail(r, EMU_ST_INVALID_FIELD, EMU_PLOC_CDW11);
			return;
		}
		if (cmd->cdw12 & ~NVME_EMU_FAULT_ADMIN ||
		    (cmd->cdw12 && cmd->cdw10 != NVME_EMU_FAULT_SWALLOW)) {
			emu_fail(r, EMU_ST_INVALID_FIELD, EMU_PLOC_CDW12);
			return;
		}
		if (cmd->cdw12 & NVME_EMU_FAULT_ADMIN) {
			c->admin_swallow += count; /* the admin path runs under the controller lock */
			return;
		}
		/* room first, then the count: the I/O path only turns a count into a list
		 * entry, so the list never outgrows its allocation (DROPPED_MAX in all, which
		 * each field holds) */
		if (!dropped_reserve(c, count)) {
			r->status = EMU_ST_INTERNAL;
			return;
		}
		atomic_fetch_add(&c->faults, (uint64_t)count << (cmd->cdw10 == NVME_EMU_FAULT_DROP
								   ? DROP_SHIFT : SWALLOW_SHIFT));
		return;
	case NVME_EMU_FAULT_MEDIA_ERROR: {
		uint64_t f = atomic_load(&c->faults);
		uint64_t m;
		do {
			m = (uint64_t)media_left(f) + count;
			if (m > MEDIA_MAX)
				m = MEDIA_MAX;
		} while (!atomic_compare_exchange_weak(&c->faults, &f,
						       (f & ((1ull << MEDIA_SHIFT) - 1)) | m << MEDIA_SHIFT));
		return;
	}
	default:
		emu_fail(r, EMU_ST_INVALID_FIELD, EMU_PLOC_CDW10);
		return;
	}
}

enum emu_fault_outcome emu_fault_apply(struct emu_ctrl *c, struct emu_sq *sq,
				       const struct nvme_sqe *cmd, struct emu_result *r)
{
	bool rw = cmd->opc == NVME_CMD_READ || cmd->opc == NVME_CMD_WRITE;
	uint64_t f = atomic_load_explicit(&c->faults, memory_order_relaxed);
	for (;;) {
		if (drop_left(f) || swallow_left(f)) {
			bool swallow = !drop_left(f);
			uint64_t one = 1ull << (swallow ? SWALLOW_SHIFT : DROP_SHIFT);
			if (atomic_compare_exchange_weak(&c->faults, &f, f - one)) {
				pthread_mutex_lock(&c->fault_lock);
				c->dropped[c->nr_dropped++] = (struct emu_dropped){
					.sqid = sq->qid, .cid = cmd->cid, .swallowed = swallow };
				pthread_mutex_unlock(&c->fault_lock);
				return EMU_FAULT_DROPPED;
			}
		} else if (rw && media_left(f)) {
			if (atomic_compare_exchange_weak(&c->faults, &f, f - (1ull << MEDIA_SHIFT))) {
				atomic_fetch_add(&c->media_errors, 1);
				r->status = cmd->opc == NVME_CMD_READ
						    ? EMU_ST(NVME_SCT_MEDIA, NVME_SC_UNRECOVERED_READ)
						    : EMU_ST(NVME_SCT_MEDIA, NVME_SC_WRITE_FAULT);
				r->lba = cmd->cdw10 | (uint64_t)cmd->cdw11 << 32;
				r->param_loc = EMU_PLOC_NONE;
				return EMU_FAULT_FAILED;
			}
		} else {
			return EMU_FAULT_NONE;
		}
	}
}

bool emu_dropped_take(struct emu_ctrl *c, uint16_t sqid, uint16_t cid)
{
	bool found = false;
	pthread_mutex_lock(&c->fault_lock);
	for (uint32_t i = 0; i < c->nr_dropped; i++) {
		if (c->dropped[i].sqid == sqid && c->dropped[i].cid == cid && !c->dropped[i].swallowed) {
			c->dropped[i] = c->dropped[--c->nr_dropped];
			found = true;
			break;
		}
	}
	pthread_mutex_unlock(&c->fault_lock);
	return found;
}

void emu_dropped_take_sq(struct emu_ctrl *c, uint16_t sqid, void (*fn)(struct emu_ctrl *, uint16_t, uint16_t))
{
	for (;;) {
		uint16_t cid = 0;
		bool found = false;
		pthread_mutex_lock(&c->fault_lock);
		for (uint32_t i = 0; i < c->nr_dropped; i++) {
			if (c->dropped[i].sqid == sqid) {
				cid = c->dropped[i].cid;
				c->dropped[i] = c->dropped[--c->nr_dropped];
				found = true;
				break;
			}
		}
		pthread_mutex_unlock(&c->fault_lock);
		if (!found)
			return;
		fn(c, sqid, cid); /* outside the leaf lock: posting takes CQ locks */
	}
}

void emu_dropped_clear(struct emu_ctrl *c)
{
	pthread_mutex_lock(&c->fault_lock);
	c->nr_dropped = 0;
	pthread_mutex_unlock(&c->fault_lock);
}

void emu_faults_clear(struct emu_ctrl *c)
{
	atomic_store(&c->faults, 0);
	c->admin_swallow = 0;
}
