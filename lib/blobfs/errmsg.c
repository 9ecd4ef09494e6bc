/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The calling thread's last failure in words (blobfs_errmsg), result names, and the small
 * helpers every file uses: checksums (zlib's CRC-32) and the clock.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "bfs.h"

/* The message lives in a buffer allocated at a thread's first failure; the thread-local
 * variable is one pointer, in the initial-exec model where that is allowed (BFS_TLS_MODEL),
 * so that every call's "clear the last message" costs a plain load. */
#define ERRLEN 512
static __thread char *errbuf BFS_TLS_MODEL;
static pthread_key_t err_key;
static pthread_once_t err_once = PTHREAD_ONCE_INIT;

static void make_key(void)
{
	pthread_key_create(&err_key, free);
}

int bfs_err(int rc, const char *fmt, ...)
{
	if (!errbuf) {
		errbuf = malloc(ERRLEN);
		if (!errbuf)
			return rc;
		pthread_once(&err_once, make_key);
		pthread_setspecific(err_key, errbuf);
	}
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(errbuf, ERRLEN, fmt, ap);
	va_end(ap);
	return rc;
}

void bfs_err_clear(void)
{
	if (errbuf)
		errbuf[0] = '\0';
}

const char *blobfs_errmsg(void)
{
	return errbuf ? errbuf : "";
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
