/* SPDX-License-Identifier: BSD-3-Clause */
/* Taking a mapping away from under threads that may still touch it (internal). */
#ifndef UNVME_COMMON_ANON_PAGES_H
#define UNVME_COMMON_ANON_PAGES_H

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

/* Puts private anonymous pages, every byte fill, where [at, at + len) is mapped, in one step
 * (mremap): a thread that touches the range meanwhile finds the old pages or the new ones,
 * never a hole. For a device's mapping that must go (a removed device's BAR, a doorbell window
 * whose device went away) while other threads may still read or ring it. 0 or -errno. */
static inline int replace_with_anon_pages(volatile void *at, size_t len, int fill)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	if (fill)
		memset(p, fill, len);
	if (mremap(p, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)at) == MAP_FAILED) {
		int e = -errno;
		munmap(p, len);
		return e;
	}
	return 0;
}

#endif
