/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The zoned-device layer under the host engines (the FTL of lib/ftl, the host KV engine of
 * lib/hostkv), which both use it from below: zones of 4 KiB pages written sequentially, read
 * anywhere, reset as a whole, reached only through the driver's public API (the NVMe protocol).
 *
 *   - On a zoned namespace (ZNS) the zones are the device's: pages are written with Zone
 *     Append (or a Write at the write pointer when an append would exceed ZASL), the device
 *     keeps the write pointers, Reset and Finish are Zone Management Send.
 *   - On a conventional NVM namespace the zones are emulated: the namespace is cut into
 *     zones of zone_bytes, written with plain Writes at a host-kept write pointer. A reset
 *     zeroes the zone's first page (Write Zeroes) so that a scan stops there; the write
 *     pointers are not stored on the device: the client finds them by scanning its records
 *     (zdev_wp_known() is false after open).
 *
 * Page addresses are global: zone * zone_pages + offset. Writes come from one thread at a
 * time (the client serialises them); reads may come from any number of threads at once.
 */
#ifndef UNVME_ZONED_ZDEV_H
#define UNVME_ZONED_ZDEV_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "unvme/unvme.h"

#define ZDEV_PAGE 4096u
#define ZDEV_POOL_MAX 64u

enum zdev_zstate {
	ZDEV_EMPTY,
	ZDEV_OPEN,     /* written, not full (any opened or closed device state) */
	ZDEV_FULL,
	ZDEV_OFFLINE,  /* read only or offline on the device: not usable */
};

struct zdev {
	struct unvme_ctrlr *ctrlr;
	struct unvme_ns *ns;
	bool owns_ctrlr;
	bool zoned;              /* the device's zones; else emulated on a conventional namespace */
	uint32_t lba_shift;      /* of the inner namespace */
	uint32_t page_lbas;      /* inner blocks per 4 KiB page */
	uint32_t nzones;
	uint64_t zone_pages;     /* zone size */
	uint64_t zcap_pages;     /* writable pages per zone */
	uint32_t max_io_pages;   /* largest command */
	uint32_t max_append_pages; /* largest Zone Append (zoned) */
	uint32_t max_open;       /* open zone limit of the device, 0 = none */
	uint64_t *wp;            /* pages written per zone (host copy / the emulated pointers) */
	uint8_t *state;          /* enum zdev_zstate per zone */
	bool wp_known;           /* false for emulated zones until the client sets them */

	struct unvme_qpair *wq;  /* the writer's queue */
	pthread_mutex_t pool_lock;
	struct unvme_qpair *pool[ZDEV_POOL_MAX]; /* readers' queues, lent one per read */
	unsigned npool, nqueues;

	uint64_t pages_written;  /* every page this host wrote (data and metadata) */
	uint64_t resets;
};

/* Opens devid (namespace nsid, 0: the first zoned one, else the first NVM one). emu_zone_bytes:
 * zone size for a conventional namespace (0: 16 MiB). 0 or -errno with a message in err. */
int zdev_open(const char *devid, uint32_t nsid, uint64_t emu_zone_bytes, struct zdev **out,
	      char *err, size_t errlen);
void zdev_close(struct zdev *z);

/* The emulated zones' write pointers, found by the client (in pages); marks them known. */
void zdev_set_wp(struct zdev *z, uint32_t zone, uint64_t wp_pages);

/* Appends npages from buf (DMA memory) at the zone's write pointer; *page = the address of
 * the first one. 0, -errno, or a positive NVMe status. */
int zdev_append(struct zdev *z, uint32_t zone, const void *buf, uint32_t npages, uint64_t *page);
/* Reads npages at page into buf (DMA memory). Any thread. */
int zdev_read(struct zdev *z, uint64_t page, void *buf, uint32_t npages);
int zdev_reset(struct zdev *z, uint32_t zone);
/* An emulated zone's pages from its write pointer to its capacity read as zeroes, so that
 * appends resumed there after a crash are never followed by stale units (a zoned device
 * holds nothing past its write pointer: nothing to do). */
int zdev_zero_rest(struct zdev *z, uint32_t zone);
/* The zone takes no more writes (Finish Zone; emulated: the pointer moves to the capacity). */
int zdev_finish(struct zdev *z, uint32_t zone);
/* Everything written so far is durable. */
int zdev_flush(struct zdev *z);
/* Pages the zone can still take. */
static inline uint64_t zdev_room(const struct zdev *z, uint32_t zone)
{
	return z->wp[zone] < z->zcap_pages ? z->zcap_pages - z->wp[zone] : 0;
}
static inline uint64_t zdev_page(const struct zdev *z, uint32_t zone, uint64_t off)
{
	return (uint64_t)zone * z->zone_pages + off;
}

/* snprintf into err (which may be NULL), returning rc: the targets' error messages. */
int zdev_fail(char *err, size_t errlen, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* A number with an optional K/M/G suffix (powers of 1024) within [lo, hi]: 0, else -1. */
int zdev_parse_num(const char *v, uint64_t lo, uint64_t hi, uint64_t *out);

/* A fast 64-bit hash (4 lanes of multiply-rotate rounds): headers, keys. */
uint64_t zdev_hash64(const void *buf, size_t len, uint64_t seed);
/* A position-dependent checksum of bulk data (8 lanes of Fletcher sums over 32-bit words,
 * which the compiler vectorises; len a multiple of 32): tells a page that a crash left
 * unwritten or half written from the one meant, at a fraction of a hash's cost. */
uint64_t zdev_sum64(const void *buf, size_t len, uint64_t seed);

#endif
