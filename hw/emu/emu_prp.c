/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Physical Region Page lists (NVMe Base 2.0, 4.1.1 "Physical Region Page Entry and List"):
 * turns a command's PRP1/PRP2 into host memory segments, through the IOMMU, applying every
 * rule a controller checks. Memory pages are 4 KiB (CAP.MPSMIN = MPSMAX = 0).
 *
 *  - PRP1 may carry a dword-aligned offset into its page (bits 1:0 set: PRP Offset Invalid).
 *  - If the transfer ends in PRP1's page, PRP2 is not used.
 *  - If it needs exactly one more page, PRP2 is that page: its offset must be 0.
 *  - Otherwise PRP2 points to a PRP list (dword aligned, may start mid-page, but with room
 *    for at least one 8-byte entry before the page ends). Entries have offset 0; when more
 *    entries remain than fit in the list page, its last entry points to the next list page
 *    (page aligned).
 * An address outside the IOMMU mappings is a Data Transfer Error; SGLs (PSDT != 0) are not
 * supported (Identify SGLS = 0) and get Invalid Field; more than MDTS is Invalid Field.
 */
#include <string.h>

#include "emu_ctrl.h"

#define PAGE EMU_PAGE_SIZE
#define PAGE_MASK ((uint64_t)EMU_PAGE_SIZE - 1)

#define ST_PRP_OFFSET EMU_ST_DNR(NVME_SCT_GENERIC, NVME_SC_PRP_OFFSET_INVALID)
#define ST_XFER_ERROR EMU_ST(NVME_SCT_GENERIC, NVME_SC_DATA_TRANSFER_ERROR)

static inline void add_seg(struct emu_xfer *x, uint8_t *p, uint32_t len)
{
	struct emu_sg *last = &x->seg[x->nseg - 1];
	if (last->addr + last->len == p) {
		last->len += len;
		return;
	}
	x->seg[x->nseg].addr = p;
	x->seg[x->nseg].len = len;
	x->nseg++;
}

/* PRP2 is a list pointer; rem bytes (more than one page) remain after PRP1's page. */
static uint16_t map_list(struct emu_ctrl *c, uint64_t list, uint32_t rem, struct emu_xfer *x)
{
	if (list & 3u)
		return ST_PRP_OFFSET;
	uint32_t pages = (rem + PAGE - 1) / PAGE;
	while (pages) {
		uint32_t slots = (uint32_t)((PAGE - (list & PAGE_MASK)) / sizeof(uint64_t));
		/* a list pointer in a page's last dword leaves no room for one entry: nothing to
		 * read (and slots - 1 below would wrap to 4 billion entries read past the page) */
		if (slots == 0)
			return ST_PRP_OFFSET;
		bool chain = pages > slots;
		uint32_t take = chain ? slots - 1 : pages;
		const uint8_t *ents = emu_iommu_translate(&c->iommu, list,
							  (uint64_t)(take + chain) * sizeof(uint64_t));
		if (!ents)
			return ST_XFER_ERROR;
		for (uint32_t i = 0; i < take; i++) {
			uint64_t e;
			/* read each entry exactly once: the host could be changing the list */
			memcpy(&e, ents + (size_t)i * 8, 8);
			if (e & PAGE_MASK)
				return ST_PRP_OFFSET;
			uint32_t n = rem < PAGE ? rem : PAGE;
			uint8_t *p = emu_iommu_translate(&c->iommu, e, n);
			if (!p)
				return ST_XFER_ERROR;
			add_seg(x, p, n);
			rem -= n;
		}
		pages -= take;
		if (chain) {
			memcpy(&list, ents + (size_t)take * 8, 8);
			if (list & PAGE_MASK)
				return ST_PRP_OFFSET;
		}
	}
	return 0;
}

uint16_t emu_xfer_map(struct emu_ctrl *c, const struct nvme_sqe *cmd, uint32_t len,
		      struct emu_xfer *x)
{
	x->nseg = 0;
	x->len = 0;
	if (__builtin_expect(NVME_SQE_PSDT(cmd->flags) != 0, 0))
		return EMU_ST_INVALID_FIELD;
	if (len == 0)
		return 0;
	if (__builtin_expect(len > EMU_MDTS_BYTES, 0))
		return EMU_ST_INVALID_FIELD;
	uint64_t prp1 = cmd->prp1;
	if (__builtin_expect(prp1 & 3u, 0))
		return ST_PRP_OFFSET;
	uint32_t first = PAGE - (uint32_t)(prp1 & PAGE_MASK);
	if (first > len)
		first = len;
	uint8_t *p = emu_iommu_translate(&c->iommu, prp1, first);
	if (__builtin_expect(!p, 0))
		return ST_XFER_ERROR;
	x->seg[0].addr = p;
	x->seg[0].len = first;
	x->nseg = 1;
	uint32_t rem = len - first;
	uint16_t st = 0;
	if (rem == 0) {
		/* one page: PRP2 ignored */
	} else if (rem <= PAGE) {
		uint64_t prp2 = cmd->prp2;
		p = (prp2 & PAGE_MASK) ? NULL : emu_iommu_translate(&c->iommu, prp2, rem);
		if (p)
			add_seg(x, p, rem);
		else
			st = (prp2 & PAGE_MASK) ? ST_PRP_OFFSET : ST_XFER_ERROR;
	} else {
		st = map_list(c, cmd->prp2, rem, x);
	}
	if (st) {
		x->nseg = 0;
		return st;
	}
	x->len = len;
	return 0;
}

/* Admin data transfers: map the command's PRPs and copy. */
uint16_t emu_dma_to_host(struct emu_ctrl *c, const struct nvme_sqe *cmd, const void *buf, uint32_t len)
{
	struct emu_xfer x;
	uint16_t st = emu_xfer_map(c, cmd, len, &x);
	if (st)
		return st;
	emu_xfer_to_host(&x, buf, len);
	return 0;
}

/* Copies n bytes of buf then zeroes up to len (a log page read past its end). */
uint16_t emu_dma_to_host_padded(struct emu_ctrl *c, const struct nvme_sqe *cmd, const void *buf,
				uint32_t n, uint32_t len)
{
	struct emu_xfer x;
	uint16_t st = emu_xfer_map(c, cmd, len, &x);
	if (st)
		return st;
	const uint8_t *s = buf;
	for (uint32_t i = 0; i < x.nseg; i++) {
		uint32_t take = x.seg[i].len < n ? x.seg[i].len : n;
		memcpy(x.seg[i].addr, s, take);
		memset(x.seg[i].addr + take, 0, x.seg[i].len - take);
		s += take;
		n -= take;
	}
	return 0;
}

uint16_t emu_dma_from_host(struct emu_ctrl *c, const struct nvme_sqe *cmd, void *buf, uint32_t len)
{
	struct emu_xfer x;
	uint16_t st = emu_xfer_map(c, cmd, len, &x);
	if (st)
		return st;
	emu_xfer_from_host(&x, buf, len);
	return 0;
}
