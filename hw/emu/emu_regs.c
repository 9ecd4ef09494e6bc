/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The controller register file in BAR0 (NVMe Base 2.0, 3.1 "Register Definition").
 * Reads of undefined registers return 0 and writes to read-only or undefined registers are
 * ignored, as on hardware. CSTS is read without any lock (hosts poll it).
 */
#include "emu_ctrl.h"

/* CC bits the host may set: EN, CSS, MPS, AMS, SHN, IOSQES, IOCQES (3.1.5). Bits 3:1 and
 * 31:24 are reserved (CRIME needs CAP.CRMS, which is 0). */
#define CC_WRITABLE 0x00fffff1u
/* ASQ/ACQ bits 11:0 are reserved: kept as written, checked when the controller is enabled. */

void emu_regs_init(struct emu_ctrl *c)
{
	/* CAP (3.1.1): MQES 0's based; CQR = 1 (physically contiguous queues only);
	 * TO = 10 x 500 ms; DSTRD from the URI; CSS: NVM command set (bit 37) and "one or more
	 * I/O command sets" (bit 43); MPSMIN = MPSMAX = 0: 4 KiB pages only. */
	c->cap = nvme_cap_make(c->p.mqes - 1, 1, 10, c->p.dstrd, NVME_CAP_CSS_NVM | NVME_CAP_CSS_IOCS,
			       0, 0);
	c->vs = NVME_VS(2, 0, 0);
	c->dstrd = c->p.dstrd;
	atomic_init(&c->cc, 0);
	atomic_init(&c->csts, 0);
	atomic_init(&c->aqa, 0);
	atomic_init(&c->asq, 0);
	atomic_init(&c->acq, 0);
	atomic_init(&c->running, false);
	/* BAR0: registers, then an SQ tail and a CQ head doorbell per queue (admin + I/O),
	 * rounded up to a power of two like a PCI BAR. */
	size_t need = NVME_REG_DBS + (size_t)(c->p.max_queues + 1) * 2u * (4u << c->dstrd);
	size_t bar = 16384;
	while (bar < need)
		bar <<= 1;
	c->bar_size = bar;
}

uint32_t emu_regs_read32(struct emu_ctrl *c, uint32_t off)
{
	switch (off) {
	case NVME_REG_CSTS:
		return atomic_load_explicit(&c->csts, memory_order_acquire);
	case NVME_REG_CAP:
		return (uint32_t)c->cap;
	case NVME_REG_CAP + 4:
		return (uint32_t)(c->cap >> 32);
	case NVME_REG_VS:
		return c->vs;
	case NVME_REG_CC:
		return atomic_load_explicit(&c->cc, memory_order_relaxed);
	case NVME_REG_AQA:
		return atomic_load_explicit(&c->aqa, memory_order_relaxed);
	case NVME_REG_ASQ:
		return (uint32_t)atomic_load_explicit(&c->asq, memory_order_relaxed);
	case NVME_REG_ASQ + 4:
		return (uint32_t)(atomic_load_explicit(&c->asq, memory_order_relaxed) >> 32);
	case NVME_REG_ACQ:
		return (uint32_t)atomic_load_explicit(&c->acq, memory_order_relaxed);
	case NVME_REG_ACQ + 4:
		return (uint32_t)(atomic_load_explicit(&c->acq, memory_order_relaxed) >> 32);
	default:
		/* INTMS/INTMC (MSI-X only: reserved), NSSR (CAP.NSSRS = 0), CMB (none), doorbells
		 * (write only) and everything undefined read as 0 */
		return 0;
	}
}

uint64_t emu_regs_read64(struct emu_ctrl *c, uint32_t off)
{
	return (uint64_t)emu_regs_read32(c, off) | (uint64_t)emu_regs_read32(c, off + 4) << 32;
}

/* Replaces one 32-bit half of a 64-bit register (hosts commonly write ASQ/ACQ as two dwords). */
static void write_half(_Atomic uint64_t *reg, bool high, uint32_t val)
{
	uint64_t cur = atomic_load_explicit(reg, memory_order_relaxed);
	uint64_t v = high ? (cur & 0xffffffffull) | (uint64_t)val << 32
			  : (cur & ~0xffffffffull) | val;
	atomic_store_explicit(reg, v, memory_order_relaxed);
}

void emu_regs_write32(struct emu_ctrl *c, uint32_t off, uint32_t val)
{
	if (off & 3u)
		return; /* registers are dword aligned; nothing lives at a misaligned offset */
	if (off == NVME_REG_CC) {
		emu_ctrl_cc_write(c, val & CC_WRITABLE);
		return;
	}
	/* AQA, ASQ and ACQ may be changed only while the controller is disabled (3.1.8-3.1.10);
	 * the controller lock orders these writes against enabling. */
	if (off == NVME_REG_AQA || (off >= NVME_REG_ASQ && off < NVME_REG_ACQ + 8)) {
		pthread_mutex_lock(&c->lock);
		if (!(atomic_load_explicit(&c->cc, memory_order_relaxed) & NVME_CC_EN)) {
			if (off == NVME_REG_AQA)
				atomic_store_explicit(&c->aqa, val & 0x0fff0fffu, memory_order_relaxed);
			else if (off < NVME_REG_ACQ)
				write_half(&c->asq, off == NVME_REG_ASQ + 4, val);
			else
				write_half(&c->acq, off == NVME_REG_ACQ + 4, val);
		}
		pthread_mutex_unlock(&c->lock);
	}
	/* everything else below the doorbells is read-only, reserved or unimplemented */
}
