/* SPDX-License-Identifier: BSD-3-Clause */
/* Test double of the controller core's emu_xfer_* functions (see xfer_double.h). */
#include <stdatomic.h>
#include <string.h>

#include "hw/emu/emu.h"
#include "hw/emu/emu_iommu.h"
#include "xfer_double.h"

/* The core's IOMMU lookups (emu_iommu.c), which the namespaces' inline one-page mapping uses:
 * the tests give no IOMMU (emu_io_ctx.iommu NULL), so they are never reached and every map
 * comes to emu_xfer_map below. */
__thread uint32_t emu_iommu_hint;

uint8_t *emu_iommu_lookup(const struct emu_iommu_table *t, uint64_t iova, uint64_t len)
{
	(void)t, (void)iova, (void)len;
	return NULL;
}

static uint32_t seg_size;
static atomic_ulong map_calls;

void xfer_double_set_seg_size(uint32_t bytes)
{
	seg_size = bytes;
}

unsigned long xfer_double_map_calls(void)
{
	return atomic_load(&map_calls);
}

/* The same error choices as the real core: SGLs are not supported, address 0 is unmapped. */
uint16_t emu_xfer_map(struct emu_ctrl *c, const struct nvme_sqe *cmd, uint32_t len,
		      struct emu_xfer *x)
{
	(void)c;
	atomic_fetch_add(&map_calls, 1);
	if (NVME_SQE_PSDT(cmd->flags))
		return NVME_CQE_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD) | 0x8000u;
	if (!cmd->prp1)
		return NVME_CQE_STATUS(NVME_SCT_GENERIC, NVME_SC_DATA_TRANSFER_ERROR) | 0x8000u;
	uint8_t *p = (uint8_t *)(uintptr_t)cmd->prp1;
	uint32_t step = seg_size ? seg_size : len;
	x->nseg = 0;
	x->len = len;
	for (uint32_t done = 0; done < len; done += step) {
		if (x->nseg == EMU_XFER_MAX_SEGS)
			return NVME_CQE_STATUS(NVME_SCT_GENERIC, NVME_SC_DATA_TRANSFER_ERROR) | 0x8000u;
		x->seg[x->nseg].addr = p + done;
		x->seg[x->nseg].len = len - done < step ? len - done : step;
		x->nseg++;
	}
	return 0;
}
