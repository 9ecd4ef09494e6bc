/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: recovery of a file-backed KV namespace from any bytes. The input is
 * the log file (with the first byte's bit 0 set, behind a valid superblock, so the fuzzer
 * spends its time on records; with bit 1 set, the store is also changed, compacted and
 * reopened). Whatever the bytes, opening either fails with a message or
 * gives a store in which:
 *   - every key the index lists can be retrieved, with the size the index says;
 *   - the key counts of the statistics match the keys listed;
 *   - a store, a delete, a flush and a compaction work, and reopening the file gives the
 *     same keys and values back (recovery is idempotent and compaction loses nothing).
 * The file lives in /dev/shm (tmpfs), one per fuzzing process.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hw/emu/ns/kv_crc.h"
#include "hw/emu/ns/kv_store_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static char path[128];
static uint8_t *vbuf;

static void cleanup(void)
{
	char p[160];
	unlink(path);
	snprintf(p, sizeof(p), "%s.compact", path);
	unlink(p);
	snprintf(p, sizeof(p), "%s.damaged", path);
	unlink(p);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	setenv("UNVME_QUIET", "1", 1);
	snprintf(path, sizeof(path), "/dev/shm/unvme-fuzz-kvlog-%d", (int)getpid());
	vbuf = malloc(KV_MAX_VALUE);
	atexit(cleanup);
	return 0;
}

/* Sum of (key, size, value CRC) over every key: equal sums, equal stores (for this test). */
struct digest {
	uint64_t keys;
	uint64_t sum;
};

static bool get(struct kv_store *s, uint8_t ks, const uint8_t *k, uint8_t kl, uint32_t *size)
{
	struct emu_xfer x = { .nseg = 1, .len = KV_MAX_VALUE, .seg = { { vbuf, KV_MAX_VALUE } } };
	uint32_t copied = 0;
	return kv_store_get(s, ks, k, kl, 0, &x, KV_MAX_VALUE, size, &copied) == KV_OK &&
	       copied == *size;
}

static struct digest digest(struct kv_store *s)
{
	struct digest d = { 0, 0 };
	for (uint8_t ks = 0; ks < 2; ks++) {
		uint8_t *buf;
		size_t len, count;
		if (kv_store_keys(s, ks, NULL, NULL, &buf, &len, &count) != 0)
			abort();
		for (size_t at = 0; at < len;) {
			uint8_t kl = buf[at];
			const uint8_t *k = buf + at + 1;
			uint32_t size;
			if (!get(s, ks, k, kl, &size))
				abort(); /* a key the index lists must be readable */
			d.sum += kv_crc32c(ks, k, kl) * 31u + kv_crc32c(size, vbuf, size);
			d.keys++;
			at += 1u + kl;
		}
		free(buf);
	}
	struct kv_store_stats st;
	kv_store_get_stats(s, &st);
	if (st.nr_keys != d.keys)
		abort(); /* the statistics disagree with the index */
	return d;
}

static void write_file(const uint8_t *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		abort();
	if (size && data[0] & 1) {
		/* a valid superblock first */
		uint8_t sb[KV_SB_SIZE] = { 0 };
		memcpy(sb, KV_SB_MAGIC, 8);
		uint32_t version = 1, crc;
		memcpy(sb + 8, &version, 4);
		crc = kv_crc32c(0, sb, 12);
		memcpy(sb + 12, &crc, 4);
		if (write(fd, sb, sizeof(sb)) != (ssize_t)sizeof(sb))
			abort();
		data++, size--;
	}
	if (size && write(fd, data, size) != (ssize_t)size)
		abort();
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512];
	struct kv_store *s;
	if (!size)
		return 0;
	cleanup();
	write_file(data, size);
	if (kv_store_open(64u << 20, path, &s, err, sizeof(err)) != 0) {
		if (!err[0])
			abort(); /* a refusal must say why */
		return 0;
	}
	struct digest before = digest(s);
	if (!(data[0] & 2)) {
		kv_store_close(s);
		return 0;
	}
	/* the store keeps working on whatever it recovered (the first byte's bit 1: a store
	 * maps value memory, a huge page, so only some inputs take this path) */
	static const uint8_t key[] = "fuzz-key";
	uint8_t *v = kv_store_value_alloc(s, 100);
	if (!v)
		abort();
	memset(v, 0x5a, 100);
	enum kv_rc rc = kv_store_put(s, 0, key, 8, v, 100, 0, 0, false);
	if (rc != KV_OK && rc != KV_NOSPC)
		abort();
	if (rc == KV_OK && kv_store_del(s, 0, key, 8, true) != KV_OK)
		abort();
	if (kv_store_flush(s) != 0)
		abort();
	pthread_rwlock_wrlock(&s->lock);
	int cr = kv_compact(s);
	pthread_rwlock_unlock(&s->lock);
	if (cr != 0)
		abort();
	struct digest mid = digest(s);
	if (mid.keys != before.keys || mid.sum != before.sum)
		abort(); /* compaction changed the store */
	kv_store_close(s);
	if (kv_store_open(64u << 20, path, &s, err, sizeof(err)) != 0)
		abort(); /* what recovery and compaction wrote must open again */
	struct digest after = digest(s);
	if (after.keys != before.keys || after.sum != before.sum)
		abort(); /* reopening lost or changed keys */
	kv_store_close(s);
	return 0;
}
