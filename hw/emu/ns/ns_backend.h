/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Where a namespace keeps its logical blocks. The NVM command executor (nvm_io.c) checks
 * every command against the NVM Command Set rules and then asks a backend to move bytes:
 * the backend never sees LBAs, only byte offsets inside its capacity, already checked.
 *
 * Three backends exist: anonymous memory (ns_mem.c), a file (ns_file.c) and "null"
 * (ns_null.c), which keeps nothing and exists to measure the controller's own overhead. The
 * executor maps the host memory of every data command (PRPs through the IOMMU) before it calls
 * a backend, so even the null backend sees only transfers a device could have made.
 */
#ifndef UNVME_EMU_NS_BACKEND_H
#define UNVME_EMU_NS_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hw/emu/emu.h"

struct emu_ns_backend;

/*
 * Operations of one backend. Byte offsets and lengths are multiples of the LBA size and
 * lie inside the capacity. Data operations return 0 or an NVMe status word (media errors,
 * SCT 2); flush and erase return 0 or -errno. Every data operation may run on several
 * threads at once, on different (or, by host mistake, the same) ranges.
 */
struct emu_ns_backend_ops {
	/* Copies len bytes at off into the host segments of x. */
	uint16_t (*read)(struct emu_ns_backend *be, uint64_t off, const struct emu_xfer *x,
			 uint32_t len);
	/* Copies len bytes from the host segments of x to off; durable: on stable storage before
	 * returning (FUA, or volatile write cache disabled). */
	uint16_t (*write)(struct emu_ns_backend *be, uint64_t off, const struct emu_xfer *x,
			  uint32_t len, bool durable);
	/* Compares len bytes at off with the host segments: 0, Compare Failure, or media error. */
	uint16_t (*compare)(struct emu_ns_backend *be, uint64_t off, const struct emu_xfer *x,
			    uint32_t len);
	/* Makes [off, off + len) read as zeroes; deallocate: the blocks may also give their
	 * storage back (Write Zeroes with DEAC, Dataset Management AD). */
	uint16_t (*zero)(struct emu_ns_backend *be, uint64_t off, uint64_t len, bool deallocate,
			 bool durable);
	/* Makes everything written so far durable (Flush, shutdown). */
	int (*flush)(struct emu_ns_backend *be);
	/* Makes the whole capacity read as zeroes (Format NVM). */
	int (*erase)(struct emu_ns_backend *be);
	/* Bytes ever written and not deallocated since (Identify Namespace NUSE); NULL: the
	 * backend does not track it and reports its whole capacity as allocated. */
	uint64_t (*used)(struct emu_ns_backend *be);
	void (*destroy)(struct emu_ns_backend *be);
};

/* The common head of every backend; each backend embeds it first in its own structure. */
struct emu_ns_backend {
	const struct emu_ns_backend_ops *ops;
	uint64_t capacity; /* bytes; never changes (Format keeps the byte capacity) */
	/* The blocks' memory when they lie in one flat mapping of the process (the memory
	 * backend), else NULL: the controller's fetch loop starts loading the data of the
	 * commands it will run next while it runs this one (nvm_fast.h), as a device's DMA engine
	 * keeps several transfers in flight. Only ever read through: the backend's ops move data. */
	const uint8_t *flat;
};

/* Constructors: 0 or -errno with a message in err. */
int emu_ns_mem_open(uint64_t capacity, struct emu_ns_backend **out, char *err, size_t errlen);
int emu_ns_null_open(uint64_t capacity, struct emu_ns_backend **out, char *err, size_t errlen);
/* Media the device's creator provides (ns=ext): it owns media->ctx from here on, closing
 * it on failure too. */
int emu_ns_ext_open(uint64_t capacity, const struct emu_media *media, struct emu_ns_backend **out,
		    char *err, size_t errlen);
/* size_bytes 0: take the existing file's size. lba_size: the file's size must be a multiple. */
int emu_ns_file_open(const char *path, uint64_t size_bytes, uint32_t lba_size,
		     struct emu_ns_backend **out, char *err, size_t errlen);

#endif
