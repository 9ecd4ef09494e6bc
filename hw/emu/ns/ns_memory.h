/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Where an emulated device's memory comes from (the memory namespace's blocks, a KV
 * namespace's values): a device's DRAM exists before its first command, so that memory is
 * made when the namespace is created, whenever that costs no more than the time to zero it:
 *
 *   - from the reserved hugetlbfs pool when it has room for all of it (scripts/setup.sh
 *     reserves one, and so does make bench for its run): 2 MiB pages, allocated and faulted
 *     in by the mmap itself, with no page-table walk per 4 KiB afterwards;
 *   - else regular pages faulted in at once when UNVME_EMU_PREFAULT=1 asks for it and the
 *     memory is at most a quarter of MemAvailable (each creation then writes the whole
 *     capacity once: at ~0.3 s per GiB it is not the default, or every emulated device a
 *     tool opens, 1 GiB unless told otherwise, would cost that);
 *   - else thin: pages are made by the kernel when first written (MAP_NORESERVE), and the
 *     first write to each pays the fault.
 */
#ifndef UNVME_EMU_NS_MEMORY_H
#define UNVME_EMU_NS_MEMORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum emu_mem_kind {
	EMU_MEM_THIN,      /* reserved, faulted in on first write */
	EMU_MEM_REGULAR,   /* regular pages, faulted in */
	EMU_MEM_HUGE,      /* hugetlbfs pages, faulted in */
};

struct emu_mem_map {
	uint8_t *addr;
	size_t len;        /* of the mapping: the request rounded up to its pages */
	enum emu_mem_kind kind;
};

/*
 * Maps len bytes of device memory, aligned to align (a power of two, at most 2 MiB) as the
 * policy above says. Returns 0 or -errno.
 */
int emu_mem_map(size_t len, size_t align, struct emu_mem_map *out);

#endif
