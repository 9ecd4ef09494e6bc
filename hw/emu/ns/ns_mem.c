/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Memory backend: the namespace's blocks live in one anonymous mapping, like a device's DRAM.
 *
 * The memory exists before the first command when it can, as a device's DRAM does
 * (ns_memory.h: from the reserved hugetlbfs pool when it has room, or regular pages faulted in
 * when UNVME_EMU_PREFAULT=1 asks), so no command waits for the kernel to find and zero a page;
 * a populated namespace keeps its memory and deallocation writes zeroes. Otherwise it is thin:
 * it costs only the pages written, never-written pages read as zeroes (the kernel's zero page),
 * and deallocation gives whole pages back with MADV_DONTNEED. Either way deallocated blocks read
 * as zeroes, as Identify Namespace DLFEAT announces (NVM Command Set 1.0 section 3.2.3).
 *
 * The I/O path makes no system call and no allocation: a read is a memcpy per host segment.
 *
 * The backend keeps a bit per 4 KiB page that was written and not deallocated since, and
 * Identify Namespace reports their total as NUSE, which tools such as `unvme perf` check
 * before they read (a thin namespace's never-written blocks cost nothing to read). A write tests
 * its pages' bits with a plain load and sets one only the first time, so the steady state adds
 * a load per page and no atomic.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hw/emu/ns/ns_backend.h"
#include "hw/emu/ns/ns_internal.h"
#include "hw/emu/ns/ns_memory.h"

struct ns_mem {
	struct emu_ns_backend base;
	uint8_t *data;
	size_t map_len;   /* capacity rounded up to whole pages of the mapping */
	size_t page_size; /* the host's page size: the granularity MADV_DONTNEED works in */
	bool populated;   /* the memory exists (deallocation writes zeroes), else thin */
	_Atomic uint64_t *written; /* a bit per TRACK-byte page written and not released since */
	size_t written_len;        /* bytes of the bitmap's mapping */
	atomic_uint_fast64_t used_pages;
};

/* NUSE's granularity: 4 KiB pages, whatever pages the mapping has. */
#define TRACK_SHIFT 12u
#define TRACK ((uint64_t)1 << TRACK_SHIFT)

#define BITS 64u

/* Marks the pages of [off, off + len) written; counts those that were not. */
static void mark_written(struct ns_mem *m, uint64_t off, uint64_t len)
{
	for (uint64_t pg = off >> TRACK_SHIFT, last = (off + len - 1) >> TRACK_SHIFT; pg <= last;
	     pg++) {
		_Atomic uint64_t *w = &m->written[pg / BITS];
		uint64_t bit = UINT64_C(1) << (pg % BITS);
		if (atomic_load_explicit(w, memory_order_relaxed) & bit)
			continue;
		if (!(atomic_fetch_or_explicit(w, bit, memory_order_relaxed) & bit))
			atomic_fetch_add_explicit(&m->used_pages, 1, memory_order_relaxed);
	}
}

/* Forgets the whole pages [first, last) (zeroed or released: they read as zeroes). */
static void mark_released(struct ns_mem *m, uint64_t first, uint64_t last)
{
	for (uint64_t pg = first >> TRACK_SHIFT, end = last >> TRACK_SHIFT; pg < end; pg++) {
		_Atomic uint64_t *w = &m->written[pg / BITS];
		uint64_t bit = UINT64_C(1) << (pg % BITS);
		if (!(atomic_load_explicit(w, memory_order_relaxed) & bit))
			continue;
		if (atomic_fetch_and_explicit(w, ~bit, memory_order_relaxed) & bit)
			atomic_fetch_sub_explicit(&m->used_pages, 1, memory_order_relaxed);
	}
}

static struct ns_mem *to_mem(struct emu_ns_backend *be)
{
	return (struct ns_mem *)be;
}

static uint16_t mem_read(struct emu_ns_backend *be, uint64_t off, const struct emu_xfer *x,
			 uint32_t len)
{
	const uint8_t *src = to_mem(be)->data + off;
	for (uint32_t i = 0; i < x->nseg && len; i++) {
		uint32_t n = x->seg[i].len < len ? x->seg[i].len : len;
		memcpy(x->seg[i].addr, src, n);
		src += n;
		len -= n;
	}
	return 0;
}

static uint16_t mem_write(struct emu_ns_backend *be, uint64_t off, const struct emu_xfer *x,
			  uint32_t len, bool durable)
{
	/* Memory has no cache in front of it: every write is as durable as it will ever be. */
	(void)durable;
	struct ns_mem *m = to_mem(be);
	if (len)
		mark_written(m, off, len);
	uint8_t *dst = m->data + off;
	for (uint32_t i = 0; i < x->nseg && len; i++) {
		uint32_t n = x->seg[i].len < len ? x->seg[i].len : len;
		memcpy(dst, x->seg[i].addr, n);
		dst += n;
		len -= n;
	}
	return 0;
}

static uint16_t mem_compare(struct emu_ns_backend *be, uint64_t off, const struct emu_xfer *x,
			    uint32_t len)
{
	const uint8_t *media = to_mem(be)->data + off;
	for (uint32_t i = 0; i < x->nseg && len; i++) {
		uint32_t n = x->seg[i].len < len ? x->seg[i].len : len;
		if (memcmp(media, x->seg[i].addr, n) != 0)
			return emu_ns_status(NVME_SCT_MEDIA, NVME_SC_COMPARE_FAILURE, true);
		media += n;
		len -= n;
	}
	return 0;
}

/*
 * Zeroes [off, off + len). A populated namespace writes the zeroes (its memory stays, as a
 * device's DRAM does); a thin one gives the pages wholly inside the range back to the kernel
 * and clears the partial pages at either edge by hand, since they still hold other blocks.
 * Only whole pages inside the range are released, so a concurrent command on a neighbouring
 * range never loses data.
 */
static uint16_t mem_zero(struct emu_ns_backend *be, uint64_t off, uint64_t len, bool deallocate,
			 bool durable)
{
	(void)deallocate; /* without DEAC the blocks must read as zeroes too: releasing is fine */
	(void)durable;
	struct ns_mem *m = to_mem(be);
	uint64_t end = off + len;
	if (m->populated) {
		memset(m->data + off, 0, len);
		mark_released(m, (off + TRACK - 1) & ~(TRACK - 1), end & ~(TRACK - 1));
		return 0;
	}
	uint64_t first = (off + m->page_size - 1) / m->page_size * m->page_size;
	uint64_t last = end / m->page_size * m->page_size;

	if (first >= last) {
		memset(m->data + off, 0, len);
		return 0;
	}
	memset(m->data + off, 0, first - off);
	if (madvise(m->data + first, last - first, MADV_DONTNEED) != 0)
		memset(m->data + first, 0, last - first); /* cannot happen on a private mapping */
	else
		mark_released(m, first, last);
	memset(m->data + last, 0, end - last);
	return 0;
}

static int mem_flush(struct emu_ns_backend *be)
{
	(void)be;
	return 0;
}

static int mem_erase(struct emu_ns_backend *be)
{
	struct ns_mem *m = to_mem(be);
	if (m->populated) {
		memset(m->data, 0, m->map_len);
		mark_released(m, 0, m->map_len);
		return 0;
	}
	if (madvise(m->data, m->map_len, MADV_DONTNEED) != 0) {
		memset(m->data, 0, m->map_len);
		return 0; /* the pages stay: still allocated, now holding zeroes */
	}
	mark_released(m, 0, m->map_len);
	return 0;
}

static uint64_t mem_used(struct emu_ns_backend *be)
{
	struct ns_mem *m = to_mem(be);
	uint64_t bytes = atomic_load_explicit(&m->used_pages, memory_order_relaxed) << TRACK_SHIFT;
	return bytes < be->capacity ? bytes : be->capacity;
}

static void mem_destroy(struct emu_ns_backend *be)
{
	struct ns_mem *m = to_mem(be);
	munmap(m->data, m->map_len);
	munmap((void *)m->written, m->written_len);
	free(m);
}

static const struct emu_ns_backend_ops mem_ops = {
	.read = mem_read,
	.write = mem_write,
	.compare = mem_compare,
	.zero = mem_zero,
	.flush = mem_flush,
	.erase = mem_erase,
	.used = mem_used,
	.destroy = mem_destroy,
};

int emu_ns_mem_open(uint64_t capacity, struct emu_ns_backend **out, char *err, size_t errlen)
{
	long ps = sysconf(_SC_PAGESIZE);
	size_t page = ps > 0 ? (size_t)ps : EMU_PAGE_SIZE;

	if (capacity == 0 || capacity > SIZE_MAX - (2u << 20)) {
		emu_ns_set_error(err, errlen, "memory namespace size %llu is not usable",
				 (unsigned long long)capacity);
		return -EINVAL;
	}
	struct ns_mem *m = calloc(1, sizeof(*m));
	if (!m) {
		emu_ns_set_error(err, errlen, "out of memory");
		return -ENOMEM;
	}
	m->page_size = page;
	struct emu_mem_map map;
	int rc = emu_mem_map((size_t)capacity, page, &map);
	if (rc == 0) {
		m->data = map.addr;
		m->map_len = map.len;
		m->populated = map.kind != EMU_MEM_THIN;
	}
	if (rc) {
		emu_ns_set_error(err, errlen, "cannot reserve %llu bytes of memory for the namespace: %s",
				 (unsigned long long)capacity, strerror(-rc));
		free(m);
		return rc;
	}
	/* one bit per 4 KiB, reserved thin whatever the data: the bitmap holds only what NUSE
	 * counts */
	size_t words = (m->map_len / TRACK + 63) / 64;
	m->written_len = (words * sizeof(uint64_t) + page - 1) / page * page;
	void *p = mmap(NULL, m->written_len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		int e = errno;
		emu_ns_set_error(err, errlen, "cannot reserve the namespace's allocation bitmap: %s",
				 strerror(e));
		munmap(m->data, m->map_len);
		free(m);
		return -e;
	}
	m->written = p;
	m->base.ops = &mem_ops;
	m->base.capacity = capacity;
	m->base.flat = m->data;
	*out = &m->base;
	return 0;
}

