/* SPDX-License-Identifier: BSD-3-Clause */
/* The engine's private state, shared by kv_store.c, kv_file.c and kv_compact.c. */
#ifndef UNVME_EMU_KV_STORE_INT_H
#define UNVME_EMU_KV_STORE_INT_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>

#include "hw/emu/ns/kv_index.h"
#include "hw/emu/ns/kv_store.h"
#include "hw/emu/ns/kv_vmem.h"

/*
 * Log file layout: a 64-byte superblock, then records back to back, each 8-byte aligned:
 *   u32 magic "KVR1", u32 CRC-32C of everything after it (header bytes 8..23, key, value),
 *   u64 sequence number, u32 value length, u8 type (1 put, 2 delete), u8 keyspace,
 *   u8 key length, u8 reserved, key bytes, value bytes, zero padding.
 * A void record (type 3) is an append that was taken back (kv_file_revoke): recovery passes
 * over it.
 */
#define KV_SB_SIZE       64u
#define KV_SB_MAGIC      "UNVMEKV1"
#define KV_REC_MAGIC     0x3152564bu  /* "KVR1" little-endian */
#define KV_REC_HDR       24u
#define KV_REC_PUT       1u
#define KV_REC_DEL       2u
#define KV_REC_VOID      3u

struct kv_rec_hdr {
	uint32_t magic;
	uint32_t crc;
	uint64_t seq;
	uint32_t vlen;
	uint8_t  type;
	uint8_t  ks;
	uint8_t  klen;
	uint8_t  rsvd;
};
_Static_assert(sizeof(struct kv_rec_hdr) == KV_REC_HDR, "record header is 24 bytes");

/* Bytes a record of this key and value occupies; also the unit of capacity accounting, so
 * the memory and file engines fill up at the same point. */
static inline uint64_t kv_rec_size(uint32_t klen, uint32_t vlen)
{
	return ((uint64_t)KV_REC_HDR + klen + vlen + 7u) & ~(uint64_t)7u;
}

struct emu_kv_media_ops;

struct kv_store {
	/* a store the device's creator provides (kv_store_ext.c): every call goes there */
	const struct emu_kv_media_ops *ext;
	void *ext_ctx;
	pthread_rwlock_t lock;
	struct kv_index ix;
	struct kv_vmem vmem;    /* memory engine: the values; file engine: stores in flight */
	uint64_t capacity;
	uint64_t live;          /* record bytes of the live keys */
	uint64_t dead;          /* file: log bytes no longer referenced (overwritten, deleted) */
	uint64_t nr_keys_ks[2];
	uint64_t host_bytes;
	uint64_t media_bytes;
	uint64_t compactions;
	bool     file;
	int      fd;
	uint64_t tail;          /* file: where the next record goes */
	uint64_t seq;           /* file: sequence number of the next record */
	uint64_t damaged_spans; /* file: damaged spans the last recovery found (kv_file.c) */
	uint64_t damaged_bytes; /* ... and their bytes */
	char     path[PATH_MAX];

	/* Group commit (file): records appended to the log and records known durable, counted
	 * since the open. A sync makes durable everything appended before it started; callers
	 * that find one running wait for it and for the next, which one of them runs for all
	 * (kv_store_flush). A failed sync leaves the store refusing writes (failed): whether
	 * the unsynced records reached the medium is unknown, as after a drive's write fault. */
	_Atomic uint64_t appended;
	uint64_t synced;        /* under sync_lock */
	bool     syncing;       /* under sync_lock */
	_Atomic bool failed;
	pthread_mutex_t sync_lock;
	pthread_cond_t sync_done;
};

/* kv_file.c: the log file */
/* Creates (empty file) or recovers the log at s->path into s->ix; s->fd is open. Damaged
 * records are skipped, reported and copied to "<path>.damaged" (see kv_file.c). */
int kv_file_load(struct kv_store *s, char *err, size_t errlen);
/* Appends one record at s->tail (advanced on success); *at = its offset. 0 or -errno; on
 * failure the file is cut back to the old tail. */
int kv_file_append(struct kv_store *s, uint8_t type, uint8_t ks, const uint8_t *key, uint8_t klen,
		   const uint8_t *val, uint32_t vlen, uint64_t *at);
/* Takes back the last append (the record at at, which ends at s->tail) whose durability
 * failed: the file is cut back, or the record turned void, so it never comes back. */
void kv_file_revoke(struct kv_store *s, uint64_t at);
/* Reads len bytes of the value of the record at rec (key length klen) from value byte off. */
int kv_file_read_value(struct kv_store *s, uint64_t rec, uint8_t klen, uint32_t off, void *buf,
		       uint32_t len);
/* The same into host memory segments (at most len bytes). */
int kv_file_read_value_xfer(struct kv_store *s, uint64_t rec, uint8_t klen, uint32_t off,
			    const struct emu_xfer *x, uint32_t len);
/* Writes a fresh superblock to fd and cuts it there. */
int kv_file_init(int fd);

/* kv_store_ext.c: the calls of an external store (s->ext) */
enum kv_rc kv_ext_put(struct kv_store *s, uint8_t ks, const uint8_t *key, uint8_t klen,
		      uint8_t *val, uint32_t len, uint32_t off, unsigned flags, bool durable);
enum kv_rc kv_ext_get(struct kv_store *s, uint8_t ks, const uint8_t *key, uint8_t klen,
		      uint32_t off, const struct emu_xfer *x, uint32_t max, uint32_t *size,
		      uint32_t *copied);
void kv_ext_stats(struct kv_store *s, struct kv_store_stats *st);

/* kv_store.c: everything appended so far is durable (the log was synced whole). */
void kv_store_mark_synced(struct kv_store *s);

/* kv_compact.c */
/* Rewrites the live records into a new log that replaces the old one. Caller holds the
 * write lock. 0 or -errno (the old log stays in use on failure). */
int kv_compact(struct kv_store *s);
/* Whether enough of the log is dead to be worth a compaction. */
bool kv_compact_due(const struct kv_store *s);
/* fsync of the directory holding path: a file created or renamed there keeps its name
 * through a power loss. 0 or -errno. */
int kv_sync_dir(const char *path);

#endif
