/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The NVM I/O command set (NVM Command Set 1.0 section 3): every command is checked here
 * (opcode, LBA range, transfer size, host memory) before the namespace's backend moves any
 * byte, so the backends only ever see valid, in-range byte offsets.
 *
 * Called from several threads at once (one per submission queue in inline mode): the only
 * shared state read here is the namespace's geometry word and write cache flag (atomics);
 * the counters written belong to the submitting queue.
 */
#include <stdatomic.h>

#include "hw/emu/emu.h"
#include "hw/emu/ns/ns_backend.h"
#include "hw/emu/ns/kv_ns.h"
#include "hw/emu/ns/ns_internal.h"
#include "hw/emu/ns/ns_zns.h"
#include "hw/emu/ns/nvm_fast.h"


/* Read (3.2.4), Write (3.2.6) and Compare (3.2.1): the commands that carry data. */
uint16_t emu_nvm_map(struct emu_ns *ns, const struct nvme_sqe *cmd, struct emu_io_ctx *io,
		     uint64_t len, struct emu_xfer *x)
{
	if (len > EMU_MDTS_BYTES) /* larger than Identify Controller MDTS allows */
		return emu_ns_status(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD, true);
	/* Every backend, null included, gets host memory through the PRPs and the IOMMU, as a
	 * device's DMA engine would: a bad data pointer fails the same way everywhere. */
	return emu_xfer_map(io->ctrl, cmd, (uint32_t)len, x);
}

uint16_t emu_nvm_move(struct emu_ns *ns, const struct nvme_sqe *cmd, struct emu_io_ctx *io,
		      const struct emu_xfer *x, uint64_t slba, uint32_t len, unsigned shift,
		      enum emu_nvm_dir dir)
{
	return nvm_move(ns, cmd, io, x, slba, len, shift, dir);
}

/* Write Zeroes (3.2.8): no data pointer; DEAC (CDW12 bit 25) also deallocates the blocks. */
static uint16_t nvm_write_zeroes(struct emu_ns *ns, const struct nvme_sqe *cmd,
				 struct emu_io_ctx *io, unsigned shift)
{
	struct emu_ns_backend *be = ns->be;
	uint64_t slba = nvm_cmd_slba(cmd);
	uint32_t nlb = nvm_cmd_nlb(cmd);

	if (!nvm_range_ok(slba, nlb, be->capacity >> shift))
		return nvm_lba_out_of_range(io, slba);
	uint16_t st = be->ops->zero(be, slba << shift, (uint64_t)nlb << shift,
				    (cmd->cdw12 & NVME_WZ_DEAC) != 0, nvm_write_durable(ns, cmd));
	if (st)
		io->err_lba = slba;
	return st;
}

/*
 * Dataset Management (3.2.3): CDW10 NR (bits 7:0, 0's based) ranges of 16 bytes in host
 * memory, CDW11 attributes. Every range is checked before any is acted on, so a bad range
 * fails the command without a partial deallocation. Only AD (deallocate) does something;
 * the access hints IDR and IDW have no use in this device. Ranges of length 0 name nothing.
 */
uint16_t emu_nvm_dsm(struct emu_ns *ns, const struct nvme_sqe *cmd, struct emu_io_ctx *io,
		     unsigned shift, bool deallocate)
{
	struct emu_ns_backend *be = ns->be;
	uint32_t nr = (cmd->cdw10 & 0xffu) + 1;
	uint32_t len = nr * (uint32_t)sizeof(struct nvme_dsm_range);
	struct nvme_dsm_range range[NVME_DSM_MAX_RANGES];
	struct emu_xfer x;

	uint16_t st = emu_xfer_map(io->ctrl, cmd, len, &x);
	if (st)
		return st;
	emu_xfer_from_host(&x, range, len);

	uint64_t nlbas = be->capacity >> shift;
	for (uint32_t i = 0; i < nr; i++)
		if (range[i].nlb && !nvm_range_ok(range[i].slba, range[i].nlb, nlbas))
			return nvm_lba_out_of_range(io, range[i].slba);
	if (!(cmd->cdw11 & NVME_DSM_ATTR_AD) || !deallocate)
		return 0;
	for (uint32_t i = 0; i < nr; i++) {
		if (!range[i].nlb)
			continue;
		st = be->ops->zero(be, range[i].slba << shift, (uint64_t)range[i].nlb << shift,
				   true, false);
		if (st) {
			io->err_lba = range[i].slba;
			return st;
		}
	}
	return 0;
}

/* Flush (NVMe Base 2.0 section 7.1): everything completed so far becomes durable. */
static uint16_t nvm_flush(struct emu_ns *ns)
{
	if (emu_ns_sync(ns) != 0)
		return emu_ns_status(NVME_SCT_MEDIA, NVME_SC_WRITE_FAULT, false);
	return 0;
}

/*
 * Verify (3.2.5): checks that the blocks could be read. Memory and files have no medium
 * that can rot without the read itself failing, so only the range is checked.
 */
static uint16_t nvm_verify(struct emu_ns *ns, const struct nvme_sqe *cmd, struct emu_io_ctx *io,
			   unsigned shift)
{
	uint64_t slba = nvm_cmd_slba(cmd);
	if (!nvm_range_ok(slba, nvm_cmd_nlb(cmd), ns->be->capacity >> shift))
		return nvm_lba_out_of_range(io, slba);
	return 0;
}

uint16_t emu_ns_execute(struct emu_ns *ns, const struct nvme_sqe *cmd, struct emu_io_ctx *io)
{
	uint32_t geom = atomic_load_explicit(&ns->geom, memory_order_acquire);
	if (__builtin_expect(geom & (EMU_NS_FORMATTING | EMU_NS_KV_GEOM | EMU_NS_ZONED_GEOM), 0)) {
		if (geom & EMU_NS_FORMATTING)
			return emu_ns_status(NVME_SCT_GENERIC, NVME_SC_FORMAT_IN_PROGRESS, false);
		if (geom & EMU_NS_KV_GEOM)
			return emu_kv_execute(ns->kv, ns, cmd, io);
		return emu_zns_execute(ns, cmd, io, geom & EMU_NS_GEOM_SHIFT_MASK);
	}
	unsigned shift = geom & EMU_NS_GEOM_SHIFT_MASK;

	io->dw0 = 0; /* no NVM command defines a completion DW0 */
	/* the I/O path's two commands first, each with its own inlined copy of the transfer */
	if (__builtin_expect(cmd->opc == NVME_CMD_READ, 1))
		return nvm_transfer(ns, cmd, io, shift, EMU_NVM_READ);
	if (__builtin_expect(cmd->opc == NVME_CMD_WRITE, 1))
		return nvm_transfer(ns, cmd, io, shift, EMU_NVM_WRITE);
	switch (cmd->opc) {
	case NVME_CMD_READ:
		return nvm_transfer(ns, cmd, io, shift, EMU_NVM_READ);
	case NVME_CMD_WRITE:
		return nvm_transfer(ns, cmd, io, shift, EMU_NVM_WRITE);
	case NVME_CMD_COMPARE:
		return nvm_transfer(ns, cmd, io, shift, EMU_NVM_COMPARE);
	case NVME_CMD_WRITE_ZEROES:
		return nvm_write_zeroes(ns, cmd, io, shift);
	case NVME_CMD_DSM:
		return emu_nvm_dsm(ns, cmd, io, shift, true);
	case NVME_CMD_FLUSH:
		return nvm_flush(ns);
	case NVME_CMD_VERIFY:
		return nvm_verify(ns, cmd, io, shift);
	default:
		/* Write Uncorrectable, reservations, Copy and anything unknown (ONCS clear). */
		return emu_ns_status(NVME_SCT_GENERIC, NVME_SC_INVALID_OPCODE, true);
	}
}
