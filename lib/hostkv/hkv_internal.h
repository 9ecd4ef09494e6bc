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
 *   zones [1, nzones)      units, one after another in each zone:
 *     page 0               header: sequence number, page counts, hashes
 *     dir_pages            record directory: per record its type (put, delete), keyspace,
 *                          key, value length and the value's offset in the data area
 *     data_pages           the values (page aligned when their size is a multiple of 4 KiB)
 * The header and directory go in one write, the data in the next; the directory's hash is
 * checked for every unit, the data's for the last unit of each zone (the only one a crash can
 * cut short). Recovery replays every unit's directory in sequence order. Collection copies
 * live records (with new sequence numbers) and carries deletes that may still hide an older
 * store on the media.
 */
#ifndef UNVME_HOSTKV_INTERNAL_H
#define UNVME_HOSTKV_INTERNAL_H

#include <pthread.h>

#include "lib/hostkv/hkv.h"

#define HKV_PAGE        ZDEV_PAGE
#define HKV_SB_MAGIC    0x3142534b56484e55ull /* "UNHVKSB1" */
#define HKV_UNIT_MAGIC  0x3154494e55564b48ull /* "HKVUNIT1" */
#define HKV_VERSION     1u
#define HKV_DIR_PAGES   16u                   /* directory of one unit, at most */
#define HKV_DATA_MAX    (HKV_MAX_VALUE + HKV_PAGE) /* data area of one unit, at most */
#define HKV_REC_PUT     1u
#define HKV_REC_DEL     2u
#define HKV_IN_BUF      (1ull << 63)          /* index address: an offset in the write buffer */

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
	uint32_t dir_pages;
	uint32_t data_pages;
	uint32_t nrec;
	uint32_t dir_bytes;
	uint64_t dir_hash;
	uint64_t data_hash;
	uint64_t hdr_hash;
};

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
	uint64_t addr;    /* device byte address of the value, or HKV_IN_BUF | buffer offset */
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
#define HKV_INDEX_FOREACH(ix, e)                                                     \
	for (uint64_t _b = 0; _b < (ix)->nb; _b++)                                   \
		for (struct hkv_ent *e = (ix)->b[_b]; e; e = e->next)

/* ---- write streams ---- */
struct hkv_stream {
	uint32_t zone;    /* UINT32_MAX: none open */
	uint8_t *dir;     /* header page + HKV_DIR_PAGES pages, DMA */
	uint8_t *data;    /* HKV_DATA_MAX bytes, DMA */
	uint64_t *src;    /* collection: where each record's value was copied from */
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
	uint32_t nfree;
	uint32_t gc_low;

	struct hkv_stream user, gcs;
	uint8_t *gc_val;         /* a value being copied by collection (HKV_MAX_VALUE bytes) */

	uint64_t host_bytes, media_bytes, gc_bytes, gc_runs, recovered_units;
};

/* hkv_log.c (write lock held unless said otherwise) */
/* Adds a record to the stream's buffer (sealing first when it does not fit); *boff = where
 * its value is in the buffer. src: for the collector, the address the value is copied from. */
int hkv_append(struct hkv *s, struct hkv_stream *st, uint8_t type, uint8_t ks, const uint8_t *key,
	       uint8_t klen, const uint8_t *val, uint32_t vlen, uint64_t src, uint32_t *boff);
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
