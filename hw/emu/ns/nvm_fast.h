/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The data path of NVM Read and Write (NVM Command Set 1.0, 3.2.4 and 3.2.6), inline: shared by
 * the command set's executor (nvm_io.c, emu_ns_execute) and the controller's fetch loop
 * (hw/emu/emu_io.c), which runs a plain namespace's Reads and Writes through
 * emu_nvm_rw_inline without a call per command. Both take the same checks in the same order
 * (LBA range, transfer size, PRPs through the IOMMU) and have the same effects (the backend's
 * copy, the queue's counters); everything else goes through emu_ns_execute.
 */
#ifndef UNVME_EMU_NS_NVM_FAST_H
#define UNVME_EMU_NS_NVM_FAST_H

#include <stdatomic.h>

#include "hw/emu/emu.h"
#include "hw/emu/emu_iommu.h"
#include "hw/emu/ns/ns_backend.h"
#include "hw/emu/ns/ns_internal.h"

#define NVM_INLINE static inline __attribute__((always_inline))

/* Read, Write, Compare, Write Zeroes, Verify: CDW10/11 SLBA, CDW12 bits 15:0 NLB 0's based. */
NVM_INLINE uint64_t nvm_cmd_slba(const struct nvme_sqe *cmd)
{
	return (uint64_t)cmd->cdw11 << 32 | cmd->cdw10;
}

NVM_INLINE uint32_t nvm_cmd_nlb(const struct nvme_sqe *cmd)
{
	return (cmd->cdw12 & 0xffffu) + 1;
}

/* True when nlb blocks from slba lie inside the namespace (and the sum does not wrap). */
NVM_INLINE bool nvm_range_ok(uint64_t slba, uint64_t nlb, uint64_t nlbas)
{
	return slba < nlbas && nlb <= nlbas - slba;
}

static inline uint16_t nvm_lba_out_of_range(struct emu_io_ctx *io, uint64_t slba)
{
	io->err_lba = slba;
	return emu_ns_status(NVME_SCT_GENERIC, NVME_SC_LBA_OUT_OF_RANGE, true);
}

/*
 * Adds to a counter of the submitting queue. The queue has one writer, but the SMART log is
 * assembled on another thread, so the store is atomic (relaxed; a plain add, no lock prefix).
 */
NVM_INLINE void nvm_count(uint64_t *counter, uint64_t n)
{
	__atomic_store_n(counter, *counter + n, __ATOMIC_RELAXED);
}

/* A write must be durable on completion with FUA set or with the volatile cache off. */
NVM_INLINE bool nvm_write_durable(const struct emu_ns *ns, const struct nvme_sqe *cmd)
{
	return (cmd->cdw12 & NVME_RW_FUA) ||
	       !atomic_load_explicit(&ns->write_cache, memory_order_relaxed);
}

/*
 * The host memory of a transfer that lies in PRP1's page (every I/O of up to 4 KiB into a
 * page-aligned buffer): PRP2 is not used (NVMe Base 2.0, 4.1.1), so the one translation is made
 * here, inline; every other shape, and every failure, takes the full walker (emu_prp.c), which
 * gives the status. PSDT was checked by the controller (io_execute) but is looked at again for
 * callers that come another way.
 */
NVM_INLINE uint16_t nvm_map_data(struct emu_ns *ns, const struct nvme_sqe *cmd,
				 struct emu_io_ctx *io, uint32_t len, struct emu_xfer *x)
{
	uint64_t prp1 = cmd->prp1;
	if (__builtin_expect(io->iommu != NULL && NVME_SQE_PSDT(cmd->flags) == 0 && !(prp1 & 3u) &&
			     len <= EMU_PAGE_SIZE - (prp1 & (EMU_PAGE_SIZE - 1)), 1)) {
		uint8_t *p = emu_iommu_translate(io->iommu, prp1, len);
		if (__builtin_expect(p != NULL, 1)) {
			x->nseg = 1;
			x->len = len;
			x->seg[0].addr = p;
			x->seg[0].len = len;
			return 0;
		}
	}
	return emu_nvm_map(ns, cmd, io, len, x);
}

/* Moves len bytes at slba through the backend and counts them (emu_nvm_move). */
NVM_INLINE uint16_t nvm_move(struct emu_ns *ns, const struct nvme_sqe *cmd, struct emu_io_ctx *io,
			     const struct emu_xfer *x, uint64_t slba, uint32_t len, unsigned shift,
			     enum emu_nvm_dir dir)
{
	struct emu_ns_backend *be = ns->be;
	uint64_t off = slba << shift;
	uint16_t st = 0;
	switch (dir) {
	case EMU_NVM_READ:
		st = be->ops->read(be, off, x, len);
		break;
	case EMU_NVM_WRITE:
		st = be->ops->write(be, off, x, len, nvm_write_durable(ns, cmd));
		break;
	case EMU_NVM_COMPARE:
		st = be->ops->compare(be, off, x, len);
		break;
	}
	if (st)
		io->err_lba = slba;

	struct emu_io_stats *s = io->stats;
	if (!s)
		return st;
	if (dir == EMU_NVM_WRITE) {
		if (!st) {
			nvm_count(&s->write_cmds, 1);
			nvm_count(&s->bytes_written, len);
		}
	} else if (!st || st == emu_ns_status(NVME_SCT_MEDIA, NVME_SC_COMPARE_FAILURE, true)) {
		/* a Compare that found a difference still read the blocks */
		nvm_count(&s->read_cmds, 1);
		nvm_count(&s->bytes_read, len);
	}
	return st;
}

/* Read, Write or Compare of a plain namespace whose LBA size is 1 << shift. */
NVM_INLINE uint16_t nvm_transfer(struct emu_ns *ns, const struct nvme_sqe *cmd,
				 struct emu_io_ctx *io, unsigned shift, enum emu_nvm_dir dir)
{
	uint64_t slba = nvm_cmd_slba(cmd);
	uint32_t nlb = nvm_cmd_nlb(cmd);

	if (__builtin_expect(!nvm_range_ok(slba, nlb, ns->be->capacity >> shift), 0))
		return nvm_lba_out_of_range(io, slba);
	/* nlb <= 65536 and shift <= 12: at most 256 MiB, checked against MDTS in emu_nvm_map */
	uint32_t len = nlb << shift;
	struct emu_xfer x;
	uint16_t st = nvm_map_data(ns, cmd, io, len, &x);
	if (__builtin_expect(st != 0, 0))
		return st;
	return nvm_move(ns, cmd, io, &x, slba, len, shift, dir);
}

/*
 * Read or Write for the controller's fetch loop, from the SQE's words the loop decoded (OPC,
 * PRP1, SLBA in CDW10-11, CDW12): executes it as emu_ns_execute would when its data lies in
 * PRP1's page and stores the status in *st, or returns false having done nothing (another
 * command, a namespace that is not plain NVM: formatting, KV, zoned; an LBA out of range or a
 * transfer needing PRP2; an address the IOMMU does not map), for emu_ns_execute to execute
 * and report. x is scratch space for the transfer; io->tlb must be set.
 */
NVM_INLINE bool emu_nvm_rw_inline(struct emu_ns *ns, uint8_t opc, uint64_t prp1, uint64_t slba,
				  uint32_t cdw12, struct emu_io_ctx *io, struct emu_xfer *x,
				  uint16_t *st)
{
	uint32_t geom = atomic_load_explicit(&ns->geom, memory_order_acquire);
	if (__builtin_expect(geom & (EMU_NS_FORMATTING | EMU_NS_KV_GEOM | EMU_NS_ZONED_GEOM), 0) ||
	    (opc != NVME_CMD_READ && opc != NVME_CMD_WRITE))
		return false;
	unsigned shift = geom & EMU_NS_GEOM_SHIFT_MASK;
	uint32_t nlb = (cdw12 & 0xffffu) + 1;
	struct emu_ns_backend *be = ns->be;
	if (!nvm_range_ok(slba, nlb, be->capacity >> shift))
		return false;
	uint32_t len = nlb << shift;
	if ((prp1 & 3u) || len > EMU_PAGE_SIZE - (prp1 & (EMU_PAGE_SIZE - 1)))
		return false;
	uint8_t *p = emu_iommu_translate_tlb(io->iommu, io->tlb, prp1, len);
	if (!p)
		return false;
	x->nseg = 1;
	x->len = len;
	x->seg[0].addr = p;
	x->seg[0].len = len;
	uint64_t off = slba << shift;
	struct emu_io_stats *s = io->stats;
	if (opc == NVME_CMD_READ) {
		*st = be->ops->read(be, off, x, len);
		if (*st == 0) {
			nvm_count(&s->read_cmds, 1);
			nvm_count(&s->bytes_read, len);
		}
	} else {
		bool durable = (cdw12 & NVME_RW_FUA) ||
			       !atomic_load_explicit(&ns->write_cache, memory_order_relaxed);
		*st = be->ops->write(be, off, x, len, durable);
		if (*st == 0) {
			nvm_count(&s->write_cmds, 1);
			nvm_count(&s->bytes_written, len);
		}
	}
	if (*st)
		io->err_lba = slba;
	return true;
}

/* The namespace's memory when its blocks lie in one flat mapping and it is plain NVM, else
 * NULL; *shift its LBA shift. */
NVM_INLINE const uint8_t *emu_nvm_flat(const struct emu_ns *ns, unsigned *shift)
{
	uint32_t geom = atomic_load_explicit(&ns->geom, memory_order_relaxed);
	if (!ns->be || (geom & (EMU_NS_FORMATTING | EMU_NS_KV_GEOM | EMU_NS_ZONED_GEOM)))
		return NULL;
	*shift = geom & EMU_NS_GEOM_SHIFT_MASK;
	return ns->be->flat;
}

/*
 * Starts loading the data of a Read (or the lines a Write will fill) of a flat namespace
 * from its SQE words (OPC in w0, SLBA, CDW12), ahead of the command's turn: the first 512
 * bytes, whose misses then overlap the commands run meanwhile (the core's streamer follows a
 * 4 KiB block from there). Only a hint: nothing is checked but that it lies in the namespace.
 */
NVM_INLINE void emu_nvm_prefetch(const struct emu_ns_backend *be, const uint8_t *flat,
				 unsigned shift, uint8_t opc, uint64_t slba, uint32_t cdw12)
{
	uint64_t off = slba << shift;
	uint64_t len = (uint64_t)((cdw12 & 0xffffu) + 1) << shift;
	if (off >= be->capacity || len > be->capacity - off)
		return;
	const uint8_t *p = flat + off;
	if (len > 512)
		len = 512;
	if (opc == NVME_CMD_READ) {
		for (uint64_t i = 0; i < len; i += 64)
			__builtin_prefetch(p + i, 0, 3);
	} else if (opc == NVME_CMD_WRITE) {
		for (uint64_t i = 0; i < len; i += 64)
			__builtin_prefetch(p + i, 1, 3);
	}
}

#endif
