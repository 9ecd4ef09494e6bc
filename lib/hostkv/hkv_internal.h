/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The host KV engine's state and on-media format, shared by its files:
 *   hkv_index.c    the in-memory index (hash table of keys)
 *   hkv_log.c      the write buffers, units, value reads
 *   hkv_gc.c       garbage collection
 *   hkv_recover.c  the superblock, format, and recovery by replaying units
 *   hkv_store.c    the store's operations
 *
 * On the zoned device:
 *   zone 0                 the superblock (page 0): instance, options, geometry
 *   zones [1, nzones)      units, one after another in each zone, each written whole with one
 *                          append (one command when it fits the device's limit):
 *     head_pages           the header (128 bytes: sequence number, epoch, durable mark, page
 *                          counts, hashes) and right after it the record directory: per
 *                          record its type (put, delete), keyspace, key, value length and the
 *                          value's offset in the data area
 *     data_pages           the values (page aligned when their size is a multiple of 4 KiB)
 *
 * Durability (group commit): a store or delete goes into the user stream's buffer; a commit
 * (hkv_flush) writes the buffer as a unit and flushes the device, and only then are the
 * operations acknowledged (the emulated controller commits once per batch of commands). So
 * every acknowledged operation is in a unit that a completed flush covered.
 *
 * Recovery after a crash or a power cut trusts what a flush covered and checks the rest:
 * each open of the store is an epoch (its units carry the sequence number of its first
 * unit), and each unit records the last unit of its epoch that a completed flush covered
 * when it was written (durable_seq). Units up to the largest such mark of their epoch were
 * flushed: their header and directory hashes suffice. Any later unit may have been cut
 * short, or lost in part by a power cut that kept later writes: its data checksum is checked
 * too, and the first unit of a zone that fails ends what recovery takes from that zone. A
 * unit that failed never becomes trusted later: marks only ever name units of their own
 * epoch, and no unit written after a failed one can have been flushed before it was.
 *
 * Collection copies live records (with new sequence numbers), flushes the copies, then resets
 * the victim, so a reset never takes away the only durable copy of anything, and every reset
 * before a collection is durable before the next one (its flush covers it). While a newer
 * version of a key waits in the user buffer, the durable version it supersedes stays live
 * ("pinned": the buffer records its address, src[]), whether the newer one is a store or a
 * delete (a tombstone entry), and so does a delete that a buffered store would otherwise
 * hide: a crash before the commit must find the old state, not an older one still on the
 * media elsewhere.
 */
#ifndef UNVME_HOSTKV_INTERNAL_H
#define UNVME_HOSTKV_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "lib/hostkv/hkv.h"

#define HKV_PAGE        ZDEV_PAGE
#define HKV_SB_MAGIC    0x3142534b56484e55ull /* "UNHVKSB1" */
#define HKV_UNIT_MAGIC  0x3154494e55564b48ull /* "HKVUNIT1" */
#define HKV_VERSION     2u
#define HKV_HDR_BYTES   128u                  /* the unit header; the directory follows it */
#define HKV_HEAD_MAX    17u                   /* pages of header and directory, at most */
#define HKV_DIR_MAX     (HKV_HEAD_MAX * HKV_PAGE - HKV_HDR_BYTES)
#define HKV_REC_MAX     (HKV_DIR_MAX / 16u)   /* records of one unit (an entry is 16 bytes+) */
#define HKV_DATA_MAX    (HKV_MAX_VALUE + HKV_PAGE) /* data area of one unit, at most */
#define HKV_REC_PUT     1u
#define HKV_REC_DEL     2u
#define HKV_REC_ERASE   3u                    /* every record before it is void (format) */
#define HKV_NO_ADDR     UINT64_MAX            /* src[]: the key had no durable version */

/* An index address in the user stream's buffer: record number and value offset; with
 * HKV_TOMB, the key's delete record there (a tombstone: the key reads as absent, and its
 * entry stays until the delete is written so that the durable version it supersedes stays
 * pinned like a store's). */
#define HKV_IN_BUF      (1ull << 63)
#define HKV_TOMB        (1ull << 62)
static inline uint64_t hkv_buf_addr(uint32_t rec, uint32_t voff)
{
	return HKV_IN_BUF | (uint64_t)rec << 32 | voff;
}
static inline uint64_t hkv_tomb_addr(uint32_t rec)
{
	return HKV_IN_BUF | HKV_TOMB | (uint64_t)rec << 32;
}
static inline bool hkv_in_buf(uint64_t addr)
{
	return addr != HKV_NO_ADDR && (addr & HKV_IN_BUF);
}
static inline bool hkv_is_tomb(uint64_t addr)
{
	return hkv_in_buf(addr) && (addr & HKV_TOMB);
}
static inline uint32_t hkv_buf_rec(uint64_t addr)
{
	return (uint32_t)(addr >> 32) & 0x3fffffffu;
}
static inline uint32_t hkv_buf_off(uint64_t addr)
{
	return (uint32_t)addr;
}

struct hkv_sb {
	uint64_t magic;
	uint64_t instance;
	uint32_t version;
	uint32_t op_pct;
	uint32_t nzones;
	uint32_t rsvd;
	uint64_t zone_pages;
	uint64_t zcap_pages;
	uint64_t hash;
};

struct hkv_unit_hdr {
	uint64_t magic;
	uint64_t instance;
	uint64_t seq;
	uint64_t epoch;       /* sequence number of the first unit of this open of the store */
	uint64_t durable_seq; /* the units of this epoch up to this one were flushed before */
	uint32_t head_pages;  /* header and directory */
	uint32_t data_pages;
	uint32_t nrec;
	uint32_t dir_bytes;
	uint64_t dir_hash;    /* of the directory area: head_pages pages less the header */
	uint64_t data_hash;
	uint64_t hdr_hash;    /* of the header's HKV_HDR_BYTES with this field 0 */
};
_Static_assert(sizeof(struct hkv_unit_hdr) <= HKV_HDR_BYTES, "unit header fits its bytes");

struct hkv_dirent {
	uint8_t type;
	uint8_t ks;
	uint8_t klen;
	uint8_t rsvd;
	uint32_t vlen;
	uint32_t voff;    /* byte offset of the value in the unit's data area */
	uint8_t key[];
};
#define HKV_DIRENT_HDR 12u
static inline uint32_t hkv_dirent_size(uint32_t klen)
{
	return (HKV_DIRENT_HDR + klen + 7u) & ~7u;
}
/* Bytes a record counts for (capacity and zone accounting): its entry and its value. */
static inline uint64_t hkv_rec_bytes(uint32_t klen, uint32_t vlen)
{
	return hkv_dirent_size(klen) + (((uint64_t)vlen + 7u) & ~7ull);
}

/* ---- index ---- */
struct hkv_ent {
	struct hkv_ent *next;
	uint64_t hash;
	uint64_t addr;    /* device byte address of the value, or hkv_buf_addr() */
	uint32_t vlen;
	uint8_t ks;
	uint8_t klen;
	uint8_t key[];
};

struct hkv_index {
	struct hkv_ent **b;
	uint64_t nb;      /* buckets, a power of two */
	uint64_t n;
};
int hkv_index_init(struct hkv_index *ix);
void hkv_index_free(struct hkv_index *ix);
uint64_t hkv_key_hash(uint8_t ks, const uint8_t *key, uint8_t klen);
struct hkv_ent *hkv_index_find(const struct hkv_index *ix, uint8_t ks, const uint8_t *key, uint8_t klen);
/* Inserts a new entry (the key must not be there); NULL when out of memory. */
struct hkv_ent *hkv_index_add(struct hkv_index *ix, uint8_t ks, const uint8_t *key, uint8_t klen);
void hkv_index_remove(struct hkv_index *ix, struct hkv_ent *e);
/* e when it holds a value: NULL for no entry or a tombstone. */
static inline struct hkv_ent *hkv_live(struct hkv_ent *e)
{
	return e && !hkv_is_tomb(e->addr) ? e : NULL;
}
#define HKV_INDEX_FOREACH(ix, e)                                                     \
	for (uint64_t _b = 0; _b < (ix)->nb; _b++)                                   \
		for (struct hkv_ent *e = (ix)->b[_b]; e; e = e->next)

/* ---- write streams ---- */
struct hkv_stream {
	uint32_t zone;    /* UINT32_MAX: none open */
	uint8_t *buf;     /* DMA: HKV_HEAD_MAX pages for header and directory, then the data */
	uint8_t *data;    /* the data area: buf + HKV_HEAD_MAX pages (HKV_DATA_MAX bytes) */
	uint8_t *dir;     /* the directory being built (HKV_DIR_MAX bytes) */
	/* per record: collection: where its value was copied from; user: the durable version of
	 * its key that it supersedes (HKV_NO_ADDR: none), which collection keeps (pinned) */
	uint64_t *src;
	uint32_t dir_used, data_used, nrec;
	bool gc;
};

enum hkv_zrole { HKV_Z_FREE, HKV_Z_OPEN, HKV_Z_USED, HKV_Z_SB, HKV_Z_BAD };

struct hkv {
	struct zdev *z;
	struct hkv_opts o;
	pthread_rwlock_t lock;
	bool loaded;

	uint64_t instance;
	uint64_t seq;
	uint64_t capacity;       /* record bytes accepted */
	uint64_t used;           /* record bytes of live keys */
	uint64_t nr_keys_ks[2];
	struct hkv_index ix;

	uint8_t *role;           /* [nzones] */
	uint64_t *live;          /* [nzones] live record bytes */
	uint64_t *mtime;         /* [nzones] sequence number when it filled */
	uint64_t *first_seq;     /* [nzones] of its first unit (0: none) */
	uint64_t *vend;          /* [nzones] pages of its valid units (collection reads no further) */
	uint32_t nfree;
	uint32_t gc_low;

	struct hkv_stream user, gcs;
	uint8_t *gc_val;         /* a value being copied by collection (HKV_MAX_VALUE bytes) */

	uint64_t epoch;          /* sequence number of this open's first unit */
	uint64_t durable_seq;    /* the last unit a completed flush covered (this epoch) */
	bool failed;             /* a unit write or flush failed: writes refused */

	/* group commit: user records appended, and made durable (hkv_flush) */
	_Atomic uint64_t appended;
	uint64_t committed;      /* under commit_lock */
	bool committing;         /* under commit_lock */
	pthread_mutex_t commit_lock;
	pthread_cond_t commit_done;

	uint64_t host_bytes, media_bytes, gc_bytes, gc_runs, recovered_units;
	uint64_t commits, checked_units, dropped_units;
};

/* hkv_log.c (write lock held unless said otherwise) */
/* Adds a record to the stream's buffer (sealing first when it does not fit); *boff = where
 * its value is in the buffer, *rec = its record number. src: the collector's source address,
 * or the user's superseded durable version (st->src, above). */
int hkv_append(struct hkv *s, struct hkv_stream *st, uint8_t type, uint8_t ks, const uint8_t *key,
	       uint8_t klen, const uint8_t *val, uint32_t vlen, uint64_t src, uint32_t *boff,
	       uint32_t *rec);
/* Flushes the device: every unit written so far is durable (durable_seq moves up). */
int hkv_media_flush(struct hkv *s);
/* Writes the stream's buffered records as one unit and points the index at them. */
int hkv_seal(struct hkv *s, struct hkv_stream *st);
/* Copies len bytes of the value at device address addr into dst (any thread). */
int hkv_read_value(struct hkv *s, uint64_t addr, uint32_t len, void *dst);
/* The zone of a device byte address. */
static inline uint32_t hkv_zone_of(const struct hkv *s, uint64_t addr)
{
	return (uint32_t)(addr / ((uint64_t)s->z->zone_pages * HKV_PAGE));
}
/* The record of entry e no longer counts (overwritten, deleted). */
void hkv_forget(struct hkv *s, const struct hkv_ent *e);
int hkv_stream_init(struct hkv_stream *st, bool gc);
void hkv_stream_free(struct hkv_stream *st);

/* hkv_gc.c */
int hkv_gc(struct hkv *s);
/* A free zone for a stream, collecting first when few are left (user stream). */
int hkv_take_zone(struct hkv *s, struct hkv_stream *st);

/* hkv_recover.c */
int hkv_load(struct hkv *s, char *err, size_t errlen);

#endif
