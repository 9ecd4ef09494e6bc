/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A host key-value engine on any SSD (LightNVM's key-value target, on today's devices): keys
 * of up to 255 bytes in two keyspaces, values of up to 2 MiB, stored log-structured in the
 * zones of a zoned namespace or of a conventional one (lib/zoned/zdev.h), with the index in host
 * memory, greedy or cost-benefit garbage collection over zones by live bytes, and recovery by
 * replaying the units' record directories in sequence order. It serves the NVMe KV command
 * sets as the media of an emulated controller (hostkv://), so the KV SDK (kv_apis.h), its
 * samples, kv_perf and the fio KV engine run on it unchanged. docs/zns.md has the format.
 *
 * Threads: retrieves and exists run in parallel (a read lock); stores, deletes, flushes and
 * collection take the write lock. A store is acknowledged from the write buffer; a flush (or
 * a durable store) puts it on the media: after a crash, every store and delete acknowledged
 * before the last completed flush is there.
 */
#ifndef UNVME_HOSTKV_HKV_H
#define UNVME_HOSTKV_HKV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "lib/zoned/zdev.h"

#define HKV_MAX_KEY   255u
#define HKV_MAX_VALUE (2u << 20)

/* Results: the same numbering as the emulated KV namespace's (hw/emu/emu_device.h). */
enum hkv_rc {
	HKV_OK = 0,
	HKV_NOENT,
	HKV_EXISTS,
	HKV_NOSPC,
	HKV_BADOFF,
	HKV_TOOBIG,
	HKV_NOMEM,
	HKV_EIO,
};
#define HKV_MUST_EXIST     1u
#define HKV_MUST_NOT_EXIST 2u

enum hkv_gc_policy { HKV_GC_GREEDY, HKV_GC_COST_BENEFIT };

struct hkv_opts {
	uint32_t op_pct;     /* data space kept from the user for collection (default 20) */
	enum hkv_gc_policy gc;
	bool format;         /* start anew even when the device holds data */
	uint32_t unit_kib;   /* write buffer: records are written in units of about this (default 256) */
	bool op_given;       /* op_pct was given (else the recorded one is used) */
};
void hkv_opts_default(struct hkv_opts *o);
/* "op=20&gc=cb&format=1&unit=256&nsid=1&zone=16M" into o, nsid, zone_bytes. */
int hkv_parse_opts(const char *s, struct hkv_opts *o, uint32_t *nsid, uint64_t *zone_bytes,
		   char *err, size_t errlen);

struct hkv_usage {
	uint64_t capacity;       /* bytes of records the store accepts */
	uint64_t used;           /* bytes of the live records */
	uint64_t nr_keys, nr_keys_ks[2];
	uint64_t host_bytes;     /* record bytes the host stored */
	uint64_t media_bytes;    /* bytes written to the device (records, headers, copies) */
	uint64_t gc_bytes;       /* live record bytes collection copied */
	uint64_t gc_runs;
	uint64_t recovered_units;
};

struct hkv;

/* Opens (recovers) or creates the store on z, which it owns from then on (also on failure). */
int hkv_open(struct zdev *z, const struct hkv_opts *o, struct hkv **out, char *err, size_t errlen);
/* Flushes and closes the device. */
void hkv_close(struct hkv *s);

/* len bytes of val at byte off of the key's value (off 0 replaces it; off > 0 keeps the other
 * bytes and may extend it; off past the end, or off > 0 for a new key, is HKV_BADOFF). */
int hkv_put(struct hkv *s, uint8_t ks, const uint8_t *key, uint8_t klen, const uint8_t *val,
	    uint32_t len, uint32_t off, unsigned flags, bool durable);
/* Copies the value from byte off into iov (at most max bytes); *size = the value's size. */
int hkv_get(struct hkv *s, uint8_t ks, const uint8_t *key, uint8_t klen, uint32_t off,
	    const struct iovec *iov, unsigned iovcnt, uint32_t max, uint32_t *size, uint32_t *copied);
int hkv_del(struct hkv *s, uint8_t ks, const uint8_t *key, uint8_t klen, bool durable);
bool hkv_exist(struct hkv *s, uint8_t ks, const uint8_t *key, uint8_t klen);
int hkv_flush(struct hkv *s);
/* Removes every key. */
int hkv_erase(struct hkv *s);
void hkv_usage(struct hkv *s, struct hkv_usage *u);
/* The keys of keyspace ks that filter accepts (NULL: all), packed {u8 len, bytes}, malloc'd. */
int hkv_keys(struct hkv *s, uint8_t ks, bool (*filter)(const uint8_t *key, uint8_t klen, const void *arg),
	     const void *arg, uint8_t **buf, size_t *len, size_t *count);

#endif
