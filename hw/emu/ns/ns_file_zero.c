/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Zeroing a range of a backing file, for Write Zeroes and Dataset Management deallocate
 * (NVM Command Set 1.0 sections 3.2.8 and 3.2.3). fallocate support depends on the file
 * system (ext4, xfs, btrfs and tmpfs have both modes; others have one or none), so it is
 * probed by use and the answer remembered per namespace.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/uio.h>

#include "hw/emu/ns/ns_file.h"

#define PUNCH_MODE (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE)
#define ZERO_MODE  (FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE)

/* Up to this many iovecs all point at the same zero block: 1 MiB of zeroes per system call. */
#define ZERO_IOVS 256
static const uint8_t zero_block[4096];

int emu_ns_file_write_zeroes(int fd, uint64_t off, uint64_t len)
{
	struct iovec iov[ZERO_IOVS];

	while (len) {
		int cnt = 0;
		uint64_t chunk = 0;
		while (cnt < ZERO_IOVS && chunk < len) {
			uint64_t n = len - chunk < sizeof(zero_block) ? len - chunk : sizeof(zero_block);
			iov[cnt].iov_base = (void *)zero_block; /* only read by pwritev */
			iov[cnt].iov_len = (size_t)n;
			cnt++;
			chunk += n;
		}
		int r = emu_ns_file_pio(fd, iov, cnt, off, true, false);
		if (r)
			return r;
		off += chunk;
		len -= chunk;
	}
	return 0;
}

int emu_ns_file_zero_range(struct emu_ns_file_zero_caps *caps, int fd, uint64_t off,
			   uint64_t len, bool deallocate)
{
	const int order[2] = { deallocate ? PUNCH_MODE : ZERO_MODE,
			       deallocate ? ZERO_MODE : PUNCH_MODE };

	for (int i = 0; i < 2; i++) {
		atomic_bool *refused = order[i] == PUNCH_MODE ? &caps->no_punch_hole
							      : &caps->no_zero_range;
		if (atomic_load_explicit(refused, memory_order_relaxed))
			continue;
		int r;
		do
			r = fallocate(fd, order[i], (off_t)off, (off_t)len);
		while (r != 0 && errno == EINTR);
		if (r == 0)
			return 0;
		if (errno != EOPNOTSUPP && errno != ENOSYS)
			return -errno;
		atomic_store_explicit(refused, true, memory_order_relaxed);
	}
	return emu_ns_file_write_zeroes(fd, off, len);
}
