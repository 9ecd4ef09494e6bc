/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The calling thread's last failure in words (blobfs_errmsg), result names, and the small
 * helpers every file uses: checksums (zlib's CRC-32) and the clock.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "bfs.h"

static __thread char errbuf[512];

int bfs_err(int rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(errbuf, sizeof(errbuf), fmt, ap);
	va_end(ap);
	return rc;
}

void bfs_err_clear(void)
{
	errbuf[0] = '\0';
}

const char *blobfs_errmsg(void)
{
	return errbuf;
}

const char *blobfs_strerror(int rc)
{
	if (rc == BLOBFS_ENOFS)
		return "no file system";
	if (rc == BLOBFS_EBADSB)
		return "bad superblock or metadata";
	if (rc > 0)
		return "device error";
	return strerror(rc < 0 ? -rc : rc);
}

uint32_t bfs_crc_update(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	while (len) {
		uInt n = len > (1u << 30) ? (1u << 30) : (uInt)len;
		crc = (uint32_t)crc32(crc, p, n);
		p += n;
		len -= n;
	}
	return crc;
}

uint32_t bfs_crc(const void *buf, size_t len)
{
	return bfs_crc_update((uint32_t)crc32(0, NULL, 0), buf, len);
}

int64_t bfs_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}
