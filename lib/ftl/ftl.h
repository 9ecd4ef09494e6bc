/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A host FTL: a conventional block device built on a zoned device (lib/zoned/zdev.h), the
 * page-mapped target of LightNVM in its ZNS form. 4 KiB pages; a logical-to-physical map in
 * memory; writes gathered in a buffer and written as units (data pages, then one header page
 * naming every page's logical address) with Zone Append; greedy or cost-benefit garbage
 * collection over zones by valid-page counts; over-provisioning; TRIM; crash recovery from
 * map checkpoints plus a replay of the units written since. docs/zns.md has the format.
 *
 * Threads: reads run in parallel (a read lock); writes, trims, flushes and garbage collection
 * take the write lock. A write is acknowledged from the buffer (a volatile write cache); a
 * flush, or a durable write, puts it on the media. After a crash, every write acknowledged
 * before the last completed flush is there.
 */
#ifndef UNVME_FTL_H
#define UNVME_FTL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "lib/zoned/zdev.h"

enum ftl_gc_policy {
	FTL_GC_GREEDY,        /* the zone with the fewest valid pages */
	FTL_GC_COST_BENEFIT,  /* the highest (1 - u) * age / (1 + u) (Rosenblum & Ousterhout, LFS) */
};

struct ftl_opts {
	uint32_t op_pct;       /* over-provisioning: % of the data space kept from the user (default 20) */
	enum ftl_gc_policy gc;
	uint32_t unit_pages;   /* data pages per unit (0: as many as one Zone Append carries, <= 63) */
	bool format;           /* start a new FTL even when the device holds data */
	uint32_t ck_pct;       /* checkpoint after writing this % of the user capacity (default 25) */
	bool op_given;         /* op_pct was given (else the recorded one is used) */
};
void ftl_opts_default(struct ftl_opts *o);

struct ftl_stats {
	uint64_t user_pages;     /* capacity offered, 4 KiB pages */
	uint64_t host_pages;     /* pages the host wrote */
	uint64_t gc_pages;       /* valid pages garbage collection copied */
	uint64_t media_pages;    /* everything written: data, unit headers, checkpoints */
	uint64_t gc_runs;        /* zones collected */
	uint64_t checkpoints;
	uint64_t free_zones;
	uint64_t recovered_units; /* replayed at open */
};

struct ftl;

/* Opens (recovers) or creates the FTL on z, which it owns from then on (also on failure).
 * 0 or -errno with a message in err. */
int ftl_open(struct zdev *z, const struct ftl_opts *o, struct ftl **out, char *err, size_t errlen);
/* Flushes, writes a checkpoint and closes the zoned device. */
void ftl_close(struct ftl *f);

uint64_t ftl_capacity(const struct ftl *f); /* bytes */

/* Byte ranges (multiples of 512) of the logical space; data in iovecs of any alignment.
 * Return 0 or an NVMe status word (NVME_CQE_STATUS form with DNR where it applies). */
uint16_t ftl_read(struct ftl *f, uint64_t off, const struct iovec *iov, unsigned iovcnt, uint32_t len);
uint16_t ftl_write(struct ftl *f, uint64_t off, const struct iovec *iov, unsigned iovcnt,
		   uint32_t len, bool durable);
/* Reads as zeroes afterwards; whole pages are unmapped (TRIM), partial ones zeroed. */
uint16_t ftl_trim(struct ftl *f, uint64_t off, uint64_t len, bool durable);
/* Every acknowledged write is on the media. 0 or -errno. */
int ftl_flush(struct ftl *f);
/* Everything unmapped (Format NVM). */
int ftl_erase(struct ftl *f);
void ftl_get_stats(struct ftl *f, struct ftl_stats *st);

/* Parses "op=20&gc=greedy&unit=31&format=1&ck=25" options (also nsid= and zone= for the
 * device, returned through nsid and zone_bytes). 0 or -EINVAL with a message. */
int ftl_parse_opts(const char *s, struct ftl_opts *o, uint32_t *nsid, uint64_t *zone_bytes,
		   char *err, size_t errlen);

#endif
