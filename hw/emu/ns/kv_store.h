/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The storage engine of a KV namespace: two keyspaces of (key -> value), in memory or in a
 * log-structured file (kv_file.c) with recovery and compaction (kv_compact.c). Thread safe:
 * one reader-writer lock guards the index and the log, so retrieves and exists run in
 * parallel and stores and deletes one at a time (each is a hash update plus one pwrite).
 */
#ifndef UNVME_EMU_KV_STORE_H
#define UNVME_EMU_KV_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hw/emu/emu.h"

struct kv_store;

enum kv_rc {
	KV_OK = 0,
	KV_NOENT,      /* key does not exist */
	KV_EXISTS,     /* key exists (store with "must not exist") */
	KV_NOSPC,      /* the live data would exceed the capacity */
	KV_BADOFF,     /* value offset beyond the stored value */
	KV_TOOBIG,     /* offset + length beyond the maximum value size */
	KV_NOMEM,
	KV_EIO,        /* the backing file failed */
};

#define KV_PUT_MUST_EXIST     1u
#define KV_PUT_MUST_NOT_EXIST 2u

#define KV_MAX_VALUE (2u << 20)

struct kv_store_stats {
	uint64_t capacity;
	uint64_t used;
	uint64_t nr_keys;
	uint64_t nr_keys_ks[2];
	uint64_t host_bytes;
	uint64_t media_bytes;
	uint64_t compactions;
	uint64_t file_size;     /* file engine: bytes of the log file, else 0 */
	uint64_t damaged_spans; /* file engine: damaged spans its recovery found and skipped */
	uint64_t damaged_bytes;
};

/* path NULL or "": in memory. Otherwise the log file is created or recovered (damaged
 * records are skipped, reported and copied aside; intact ones after them are kept) and
 * locked exclusively. 0 or -errno with a message in err. */
int kv_store_open(uint64_t capacity, const char *path, struct kv_store **out, char *err,
		  size_t errlen);
/* A store whose engine the device's creator provides (ns=kvext, emu_device.h); it takes
 * ctx over (closing it on failure too). */
struct emu_kv_media_ops;
int kv_store_open_ext(uint64_t capacity, const struct emu_kv_media_ops *ops, void *ctx,
		      struct kv_store **out, char *err, size_t errlen);
void kv_store_close(struct kv_store *s);

/*
 * Stores len bytes of val at byte off of the key's value (off 0 replaces the value; off > 0
 * keeps the old bytes before off and after off + len, and extends the value when needed; off
 * past the end of the stored value, or any off for a new key, is KV_BADOFF). val comes from
 * kv_store_value_alloc(s, len) and the store takes it over in every case (NULL when len is 0).
 * durable: on stable storage on return.
 */
enum kv_rc kv_store_put(struct kv_store *s, uint8_t ks, const uint8_t *key, uint8_t klen,
			uint8_t *val, uint32_t len, uint32_t off, unsigned flags, bool durable);
/* Memory for a value of len bytes (1..2 MiB) to hand to kv_store_put, or NULL; and its
 * release, for a value that is not handed over after all. */
uint8_t *kv_store_value_alloc(struct kv_store *s, uint32_t len);
void kv_store_value_free(struct kv_store *s, uint8_t *val, uint32_t len);
/* Copies the value from byte off into the host transfer x (at most max bytes); *size is the
 * stored size, *copied what was transferred. off past the end: KV_BADOFF. */
enum kv_rc kv_store_get(struct kv_store *s, uint8_t ks, const uint8_t *key, uint8_t klen,
			uint32_t off, const struct emu_xfer *x, uint32_t max, uint32_t *size,
			uint32_t *copied);
enum kv_rc kv_store_del(struct kv_store *s, uint8_t ks, const uint8_t *key, uint8_t klen,
			bool durable);
bool kv_store_exist(struct kv_store *s, uint8_t ks, const uint8_t *key, uint8_t klen);
/* Everything stored so far becomes durable. 0 or -errno. Threads calling it together share
 * one sync (group commit); a failed sync makes every later store and delete fail (KV_EIO). */
int kv_store_flush(struct kv_store *s);
/* Whether the store outlives the process (a file, or an engine the creator provides): its
 * stores and deletes must then be made durable (kv_store_flush) before they complete. */
bool kv_store_persistent(const struct kv_store *s);
/* Removes every key (Format NVM). 0 or -errno. */
int kv_store_erase(struct kv_store *s);
void kv_store_get_stats(struct kv_store *s, struct kv_store_stats *st);
uint64_t kv_store_capacity(const struct kv_store *s);

/*
 * Copies the keys of keyspace ks for which filter returns true, packed as {u8 length, key
 * bytes} one after another, into a malloc'd buffer (*buf, *len bytes, *count keys).
 * 0 or -ENOMEM.
 */
typedef bool (*kv_key_filter)(const uint8_t *key, uint8_t klen, const void *arg);
int kv_store_keys(struct kv_store *s, uint8_t ks, kv_key_filter filter, const void *arg,
		  uint8_t **buf, size_t *len, size_t *count);

#endif
