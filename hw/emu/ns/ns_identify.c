/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a namespace says about itself: Identify Namespace (CNS 00h, NVM Command Set 1.0
 * section 4.1.5.1), the I/O command set specific Identify Namespace (CNS 05h, section
 * 4.1.5.2) and the identifiers of the Namespace Identification Descriptor list (CNS 03h).
 */
#include <string.h>

#include "hw/emu/emu.h"
#include "hw/emu/ns/kv_ns.h"
#include "hw/emu/ns/ns_internal.h"

/* NSFEAT bit 4 OPTPERF: the NPWG, NPWA, NPDG, NPDA and NOWS fields are valid. */
#define NSFEAT_OPTPERF (1u << 4)
/* LBAF Relative Performance (bits 1:0): 0 best, 1 better. */
#define LBAF_RP_BEST   0u
#define LBAF_RP_BETTER 1u

void emu_ns_identify(const struct emu_ns *ns, struct nvme_id_ns *id)
{
	if (ns->kv) {
		emu_kv_identify(ns->kv, id);
		return;
	}
	unsigned shift = atomic_load_explicit(&ns->geom, memory_order_acquire) &
			 EMU_NS_GEOM_SHIFT_MASK;
	uint64_t capacity = ns->be->capacity;
	uint64_t nlbas = capacity >> shift;

	memset(id, 0, sizeof(*id));
	/*
	 * No thin provisioning (NSFEAT bit 0 clear): capacity is the size. Utilization is the
	 * blocks written and not deallocated since where the backend tracks it (memory, in whole
	 * pages), else the whole namespace, which the spec allows for a namespace that is not
	 * thinly provisioned.
	 */
	id->nsze = nlbas;
	id->ncap = nlbas;
	id->nuse = nlbas;
	if (ns->be->ops->used) {
		uint64_t lba = 1ull << shift;
		uint64_t used = (ns->be->ops->used(ns->be) + lba - 1) >> shift;
		id->nuse = used < nlbas ? used : nlbas;
	}
	/*
	 * DAE (bit 2) stays clear: reading a deallocated block returns zeroes, never the
	 * Deallocated or Unwritten Logical Block error.
	 */
	id->nsfeat = NSFEAT_OPTPERF;
	id->nlbaf = EMU_NS_NR_LBAF - 1; /* 0's based */
	id->flbas = (uint8_t)emu_ns_lbaf_index(shift); /* no metadata: bit 4 clear */
	id->dlfeat = NVME_NS_DLFEAT_READ_ZEROES | NVME_NS_DLFEAT_WZ_DEAC;

	/*
	 * Both backends work in 4 KiB units (pages released by MADV_DONTNEED, file system
	 * blocks), so writes and deallocations of whole, aligned 4 KiB units are the efficient
	 * ones. The fields are 0's based counts of logical blocks.
	 */
	uint16_t unit = (uint16_t)((EMU_PAGE_SIZE >> shift) - 1);
	id->npwg = unit;
	id->npwa = unit;
	id->npdg = unit;
	id->npda = unit;
	id->nows = unit;
	/* NOIOB 0: there is no boundary that an I/O should avoid crossing. */
	id->noiob = 0;

	/* NVMCAP: total size in bytes, a 128-bit little-endian number. */
	for (unsigned i = 0; i < 8; i++)
		id->nvmcap[i] = (uint8_t)(capacity >> (8 * i));

	memcpy(id->nguid, ns->nguid, sizeof(id->nguid));
	memcpy(id->eui64, ns->eui64, sizeof(id->eui64));

	for (unsigned i = 0; i < EMU_NS_NR_LBAF; i++) {
		unsigned s = emu_ns_lbaf_shift(i);
		id->lbaf[i].ms = 0;
		id->lbaf[i].lbads = (uint8_t)s;
		/* 4 KiB blocks match the page and file system unit; 512 B blocks split it. */
		id->lbaf[i].rp = s == 12 ? LBAF_RP_BEST : LBAF_RP_BETTER;
	}
}

uint16_t emu_ns_identify_csi(const struct emu_ns *ns, uint8_t csi, void *out4096)
{
	if (csi != emu_ns_csi(ns))
		return emu_ns_status(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD, true);
	if (ns->kv) {
		emu_kv_identify_kv(ns->kv, out4096);
		return 0;
	}
	/*
	 * NVM command set specific data: no storage tags (LBSTM 0), no protection information
	 * (PIC 0) and, for each LBA format, no extended format fields (ELBAF 0). All zeroes.
	 */
	struct nvme_id_ns_nvm *nvm = out4096;
	memset(nvm, 0, sizeof(*nvm));
	return 0;
}

void emu_ns_ids(const struct emu_ns *ns, uint8_t nguid[16], uint8_t eui64[8])
{
	memcpy(nguid, ns->nguid, 16);
	memcpy(eui64, ns->eui64, 8);
}
