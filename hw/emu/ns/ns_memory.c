/* SPDX-License-Identifier: BSD-3-Clause */
/* Device memory of the emulated namespaces (see ns_memory.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "hw/emu/ns/ns_memory.h"

/* HugePages_Free x Hugepagesize, Hugepagesize and MemAvailable, in bytes (0 if unknown). */
static void meminfo(uint64_t *huge_free, uint64_t *huge_page, uint64_t *available)
{
	*huge_free = *huge_page = *available = 0;
	FILE *f = fopen("/proc/meminfo", "re");
	if (!f)
		return;
	char line[128];
	unsigned long long v, pages = 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "HugePages_Free: %llu", &v) == 1)
			pages = v;
		else if (sscanf(line, "Hugepagesize: %llu kB", &v) == 1)
			*huge_page = v * 1024;
		else if (sscanf(line, "MemAvailable: %llu kB", &v) == 1)
			*available = v * 1024;
	}
	fclose(f);
	*huge_free = pages * *huge_page;
}

static bool prefault_asked(void)
{
	const char *e = getenv("UNVME_EMU_PREFAULT");
	return e && strcmp(e, "1") == 0;
}

/* len bytes aligned to align, reserved thin (MAP_NORESERVE), or NULL. */
static uint8_t *reserve(size_t len, size_t align)
{
	uint8_t *raw = mmap(NULL, len + align, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (raw == MAP_FAILED)
		return NULL;
	uint8_t *a = (uint8_t *)(((uintptr_t)raw + align - 1) & ~(uintptr_t)(align - 1));
	if (a > raw)
		munmap(raw, (size_t)(a - raw));
	munmap(a + len, (size_t)(raw + align - a));
	return a;
}

int emu_mem_map(size_t len, size_t align, struct emu_mem_map *out)
{
	uint64_t huge_free, huge_page, available;
	meminfo(&huge_free, &huge_page, &available);
	if (huge_page && huge_page >= align && len <= huge_free) {
		size_t hlen = (len + huge_page - 1) / huge_page * huge_page;
		void *p = mmap(NULL, hlen, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | MAP_POPULATE, -1, 0);
		if (p != MAP_FAILED) {
			*out = (struct emu_mem_map){ .addr = p, .len = hlen, .kind = EMU_MEM_HUGE };
			return 0;
		}
		/* another process took the pages meanwhile: regular ones */
	}
	size_t rlen = (len + 4095) / 4096 * 4096;
	uint8_t *p = reserve(rlen, align < 4096 ? 4096 : align);
	if (!p)
		return -errno;
	*out = (struct emu_mem_map){ .addr = p, .len = rlen, .kind = EMU_MEM_THIN };
	if (prefault_asked() && available && rlen <= available / 4) {
		bool done = false;
#ifdef MADV_POPULATE_WRITE
		done = madvise(p, rlen, MADV_POPULATE_WRITE) == 0;
#endif
		for (size_t i = 0; !done && i < rlen; i += 4096) /* a kernel before 5.14 */
			((volatile uint8_t *)p)[i] = 0;
		out->kind = EMU_MEM_REGULAR;
	}
	return 0;
}
