/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * File-backed KV namespaces: persistence across device re-creation, torn and corrupt tails
 * cut at open, damaged records in the middle skipped with the intact ones after them kept
 * (reported and copied aside, never deleted silently), a store whose fdatasync failed never
 * coming back, durable key-with-delete iterators, compaction (every live key kept, the file
 * shrinks), Format NVM, exclusive use of the file, and processes killed with SIGKILL at random
 * points while storing.
 *
 * The durability spy (durability_spy.h) interposes the C library's write and sync calls: the
 * tests count syncs, make them fail on demand, and ask what a power loss would keep (Flush and
 * a disabled write cache sync the log).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hw/emu/ns/kv_crc.h"
#include "kv_host.h"
#include "tests/unit/durability_spy.h"
#include "tests/unit/test_util.h"

static char dir[] = "/tmp/unvme-kv-test-XXXXXX";
static bool dir_made;

static void remove_dir(void)
{
	rmdir(dir);
}

static const char *path_of(const char *name)
{
	static char p[256];
	if (!dir_made) {
		if (!mkdtemp(dir))
			abort();
		dir_made = true;
		atexit(remove_dir);
	}
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return p;
}

static void uri_for(char *uri, size_t n, const char *file, const char *cap)
{
	snprintf(uri, n, "emu://kvf?ns=kv:%s::%s", cap, file);
}

static int setup(struct th *h, struct kvq *q, const char *uri)
{
	if (kvh_open(h, uri))
		return -1;
	return kvq_init(h, q, 1);
}

static void pattern(uint8_t *p, uint32_t n, uint32_t seed)
{
	for (uint32_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed * 2654435761u >> 24 ^ i * 13);
}

static bool has_pattern(const uint8_t *p, uint32_t n, uint32_t seed)
{
	for (uint32_t i = 0; i < n; i++)
		if (p[i] != (uint8_t)(seed * 2654435761u >> 24 ^ i * 13))
			return false;
	return true;
}

/* Removes the log and the copy of its damaged bytes. */
static void remove_log(const char *f)
{
	char tmp[300];
	unlink(f);
	snprintf(tmp, sizeof(tmp), "%s.damaged", f);
	unlink(tmp);
	snprintf(tmp, sizeof(tmp), "%s.compact", f);
	unlink(tmp);
}

/* A fresh log called name of capacity cap, a device opened on it (its URI in uri[512]):
 * the log's path, or NULL. */
static const char *fresh_log(const char *name, const char *cap, char *uri, struct th *h,
			     struct kvq *q)
{
	const char *f = path_of(name);
	remove_log(f);
	uri_for(uri, 512, f, cap);
	return setup(h, q, uri) == 0 ? f : NULL;
}

static uint64_t file_size(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 ? (uint64_t)st.st_size : 0;
}

static uint32_t vsize(unsigned i)
{
	return (i * 37) % 3000;
}

static void test_persistence(void)
{
	const char *f = path_of("persist.kv");
	char uri[512];
	uri_for(uri, sizeof(uri), f, "64M");
	struct th h;
	struct kvq q;
	REQUIRE(setup(&h, &q, uri) == 0);
	char key[32];
	for (unsigned i = 0; i < 2000; i++) {
		snprintf(key, sizeof(key), "persist-%06u", i);
		pattern(q.val, vsize(i), i);
		REQUIRE(kvv_store(&q, i % 2, key, 14, vsize(i), 0, 0) == 0);
	}
	for (unsigned i = 0; i < 2000; i += 3) {  /* delete a third */
		snprintf(key, sizeof(key), "persist-%06u", i);
		CHECK_EQ(kvv_delete(&q, i % 2, key, 14), 0);
	}
	for (unsigned i = 1; i < 2000; i += 3) {  /* overwrite a third */
		snprintf(key, sizeof(key), "persist-%06u", i);
		pattern(q.val, 100, i + 7);
		CHECK_EQ(kvv_store(&q, i % 2, key, 14, 100, 0, 0), 0);
	}
	CHECK_EQ(kvs_cmd(&q, NVME_KV_FLUSH, 1, "", 0, 0, 0), 0);
	th_close(&h);

	REQUIRE(setup(&h, &q, uri) == 0);
	unsigned bad = 0;
	for (unsigned i = 0; i < 2000; i++) {
		snprintf(key, sizeof(key), "persist-%06u", i);
		int st = kvv_retrieve(&q, i % 2, key, 14, 4096, 0);
		if (i % 3 == 0)
			bad += st != KVV(NVME_KVV_SC_KEY_NOT_EXIST);
		else if (i % 3 == 1)
			bad += st != 0 || q.dw0 != 100 || !has_pattern(q.val, 100, i + 7);
		else
			bad += st != 0 || q.dw0 != vsize(i) || !has_pattern(q.val, vsize(i), i);
	}
	CHECK_EQ(bad, 0);
	struct nvme_kvv_log_capacity *cap = th_alloc(&h, 4096, 4096, NULL);
	CHECK_EQ(th_get_log(&h, NVME_KVV_LOG_CAPACITY, 0, 0, 512, cap), 0);
	CHECK_EQ(cap->nr_keys, 2000 - 667);
	/* the file is in use: a second device on it is refused */
	struct th h2;
	CHECK(th_open(&h2, uri) != 0);
	CHECK(strstr(h2.err, "in use") != NULL);
	th_close(&h);
	unlink(f);
}

/* Stores 10 keys then cuts or corrupts the last record; the first 9 must survive. */
static void tail_case(bool corrupt)
{
	const char *f = path_of(corrupt ? "corrupt.kv" : "torn.kv");
	unlink(f);
	char uri[512];
	uri_for(uri, sizeof(uri), f, "16M");
	struct th h;
	struct kvq q;
	REQUIRE(setup(&h, &q, uri) == 0);
	char key[16];
	uint64_t before_last = 0;
	for (unsigned i = 0; i < 10; i++) {
		if (i == 9)
			before_last = file_size(f);
		snprintf(key, sizeof(key), "tail%04u", i);
		pattern(q.val, 1000, i);
		REQUIRE(kvv_store(&q, 0, key, 8, 1000, 0, 0) == 0);
	}
	th_close(&h);
	uint64_t full = file_size(f);
	REQUIRE(full > before_last);
	if (corrupt) {
		int fd = open(f, O_RDWR);
		REQUIRE(fd >= 0);
		uint8_t b;
		off_t at = (off_t)(before_last + 24 + 8 + 500); /* a value byte of the last record */
		REQUIRE(pread(fd, &b, 1, at) == 1);
		b ^= 0x40;
		REQUIRE(pwrite(fd, &b, 1, at) == 1);
		close(fd);
	} else {
		REQUIRE(truncate(f, (off_t)(full - 10)) == 0);
	}
	REQUIRE(setup(&h, &q, uri) == 0);
	CHECK_EQ(file_size(f), before_last); /* the bad record is cut off... */
	char saved[300];
	snprintf(saved, sizeof(saved), "%s.damaged", f);
	/* ... after its bytes were copied aside, behind a 32-byte header */
	CHECK_EQ(file_size(saved), 32 + (full - (corrupt ? 0 : 10)) - before_last);
	for (unsigned i = 0; i < 9; i++) {
		snprintf(key, sizeof(key), "tail%04u", i);
		CHECK_EQ(kvv_retrieve(&q, 0, key, 8, 1024, 0), 0);
		CHECK(has_pattern(q.val, 1000, i));
	}
	CHECK_EQ(kvv_exist(&q, 0, "tail0009", 8), KVV(NVME_KVV_SC_KEY_NOT_EXIST));
	/* the log goes on from there */
	pattern(q.val, 50, 77);
	CHECK_EQ(kvv_store(&q, 0, "tail0009", 8, 50, 0, 0), 0);
	th_close(&h);
	REQUIRE(setup(&h, &q, uri) == 0);
	CHECK_EQ(kvv_retrieve(&q, 0, "tail0009", 8, 64, 0), 0);
	CHECK(q.dw0 == 50 && has_pattern(q.val, 50, 77));
	CHECK_EQ(kvv_exist(&q, 0, "tail0000", 8), 0);
	th_close(&h);
	remove_log(f);
}

static void test_torn_tail(void)
{
	tail_case(false);
}

static void test_corrupt_tail(void)
{
	tail_case(true);
}

static void capacity_log(struct th *h, struct nvme_kvv_log_capacity *out)
{
	struct nvme_kvv_log_capacity *cap = th_alloc(h, 4096, 4096, NULL);
	memset(out, 0, sizeof(*out));
	if (th_get_log(h, NVME_KVV_LOG_CAPACITY, 0, 0, 512, cap) == 0)
		*out = *cap;
}

static void flip_byte(const char *f, uint64_t at)
{
	int fd = open(f, O_RDWR);
	REQUIRE(fd >= 0);
	uint8_t b;
	REQUIRE(pread(fd, &b, 1, (off_t)at) == 1);
	b ^= 0xff;
	REQUIRE(pwrite(fd, &b, 1, (off_t)at) == 1);
	close(fd);
}

/* Stores keys "<prefix>%04u" for i in [from, to), value i of base + step * i bytes with
 * pattern seed i; at[i] = where record i starts in the log. 0 or -1. */
static int store_numbered(struct kvq *q, const char *f, const char *prefix, unsigned from,
			  unsigned to, uint32_t base, uint32_t step, uint64_t *at)
{
	char key[16];
	for (unsigned i = from; i < to; i++) {
		at[i] = file_size(f);
		snprintf(key, sizeof(key), "%.4s%04u", prefix, i);
		pattern(q->val, base + step * i, i);
		if (kvv_store(q, 0, key, 8, base + step * i, 0, 0) != 0)
			return -1;
	}
	return 0;
}

/*
 * Damage in the middle of the log costs only the damaged records: the intact ones after them
 * are kept (fsync'd or not), the damage is reported in the capacity log and its bytes are
 * copied to "<log>.damaged"; the log is rewritten without it, so the next open is clean.
 */
static void test_corrupt_middle(void)
{
	char uri[512];
	struct th h;
	struct kvq q;
	const char *f = fresh_log("middle.kv", "16M", uri, &h, &q);
	REQUIRE(f != NULL);
	char key[16];
	uint64_t at[21];
	REQUIRE(store_numbered(&q, f, "midl", 0, 11, 100, 1, at) == 0);
	CHECK_EQ(kvs_cmd(&q, NVME_KV_FLUSH, 1, "", 0, 0, 0), 0); /* the first 11 fsync'd */
	REQUIRE(store_numbered(&q, f, "midl", 11, 20, 100, 1, at) == 0);
	th_close(&h);
	flip_byte(f, at[5] + 10);        /* record 5: its header's sequence number */
	flip_byte(f, at[12] + 24 + 8 + 50); /* record 12: a value byte */
	flip_byte(f, at[13] + 1);        /* record 13: its magic */
	uint64_t damaged = (at[6] - at[5]) + (at[14] - at[12]);

	REQUIRE(setup(&h, &q, uri) == 0);
	for (unsigned i = 0; i < 20; i++) {
		snprintf(key, sizeof(key), "midl%04u", i);
		bool lost = i == 5 || i == 12 || i == 13;
		int st = kvv_retrieve(&q, 0, key, 8, 4096, 0);
		CHECK_EQ(st, lost ? KVV(NVME_KVV_SC_KEY_NOT_EXIST) : 0);
		if (!lost)
			CHECK(q.dw0 == 100 + i && has_pattern(q.val, 100 + i, i));
	}
	struct nvme_kvv_log_capacity cap;
	capacity_log(&h, &cap);
	CHECK_EQ(cap.damaged_spans, 2);
	CHECK_EQ(cap.damaged_bytes, damaged);
	CHECK_EQ(cap.nr_keys, 17);
	th_close(&h);
	char saved[300];
	snprintf(saved, sizeof(saved), "%s.damaged", f);
	CHECK_EQ(file_size(saved), 2 * 32 + damaged);
	int fd = open(saved, O_RDONLY);
	REQUIRE(fd >= 0);
	uint64_t hdr[4];
	REQUIRE(pread(fd, hdr, sizeof(hdr), 0) == (ssize_t)sizeof(hdr));
	CHECK(memcmp(hdr, "UNVMEKVD", 8) == 0);
	CHECK_EQ(hdr[1], at[5]);
	CHECK_EQ(hdr[2], at[6] - at[5]);
	close(fd);

	/* the damage was taken out: the next open finds none, and every key is still there */
	REQUIRE(setup(&h, &q, uri) == 0);
	capacity_log(&h, &cap);
	CHECK_EQ(cap.damaged_spans, 0);
	CHECK_EQ(cap.nr_keys, 17);
	CHECK_EQ(kvv_retrieve(&q, 0, "midl0019", 8, 4096, 0), 0);
	CHECK(has_pattern(q.val, 119, 19));
	th_close(&h);
	CHECK_EQ(file_size(saved), 2 * 32 + damaged); /* nothing new copied */
	remove_log(f);
}

/* Damage that cannot be copied aside stays in the log, skipped, and is reported again. */
static void test_damage_kept_when_not_copied(void)
{
	char uri[512];
	struct th h;
	struct kvq q;
	const char *f = fresh_log("kept.kv", "16M", uri, &h, &q);
	REQUIRE(f != NULL);
	uint64_t at[4];
	REQUIRE(store_numbered(&q, f, "kept", 0, 4, 64, 0, at) == 0);
	th_close(&h);
	flip_byte(f, at[1] + 30);
	uint64_t size = file_size(f);
	char saved[300];
	snprintf(saved, sizeof(saved), "%s.damaged", f);
	REQUIRE(mkdir(saved, 0755) == 0); /* the copy cannot be written */
	for (int round = 0; round < 2; round++) {
		REQUIRE(setup(&h, &q, uri) == 0);
		struct nvme_kvv_log_capacity cap;
		capacity_log(&h, &cap);
		CHECK_EQ(cap.damaged_spans, 1);
		CHECK_EQ(cap.damaged_bytes, at[2] - at[1]);
		CHECK_EQ(kvv_exist(&q, 0, "kept0003", 8), 0);
		CHECK_EQ(kvv_exist(&q, 0, "kept0001", 8), KVV(NVME_KVV_SC_KEY_NOT_EXIST));
		if (round == 0) {
			/* the log goes on after the damage */
			pattern(q.val, 64, 9);
			CHECK_EQ(kvv_store(&q, 0, "kept0009", 8, 64, 0, 0), 0);
		} else {
			CHECK_EQ(kvv_retrieve(&q, 0, "kept0009", 8, 64, 0), 0);
			CHECK(has_pattern(q.val, 64, 9));
		}
		th_close(&h);
		CHECK(file_size(f) >= size); /* nothing of it deleted */
	}
	rmdir(saved);
	remove_log(f);
}

#define WRITE_FAULT NVME_STATUS(NVME_SCT_MEDIA, NVME_SC_WRITE_FAULT)

/* A store or delete whose sync fails completes with Write Fault, and so does every later
 * one: the namespace refuses writes (reads go on) until it is opened again, since whether
 * the unsynced records reached the medium is unknown (as after a drive's write fault). The
 * next open finds what the file holds: the stores before the failure intact. */
static void test_failed_sync_refuses_writes(void)
{
	char uri[512];
	struct th h;
	struct kvq q;
	const char *f = fresh_log("nosync.kv", "16M", uri, &h, &q);
	REQUIRE(f != NULL);
	pattern(q.val, 200, 1);
	REQUIRE(kvv_store(&q, 0, "keep0001", 8, 200, 0, 0) == 0);
	unsigned before = durability_spy_sync_calls();
	durability_spy_fail_syncs(true);
	pattern(q.val, 300, 2);
	CHECK_EQ(kvv_store(&q, 0, "lost0002", 8, 300, 0, 0), WRITE_FAULT);
	durability_spy_fail_syncs(false);
	CHECK(durability_spy_sync_calls() >= before + 1);
	/* refused from now on, though syncs would work again; reads still served */
	CHECK(kvv_delete(&q, 0, "keep0001", 8) != 0);
	pattern(q.val, 300, 3);
	CHECK(kvv_store(&q, 0, "lost0003", 8, 300, 0, 0) != 0);
	CHECK_EQ(kvv_retrieve(&q, 0, "keep0001", 8, 4096, 0), 0);
	CHECK(q.dw0 == 200 && has_pattern(q.val, 200, 1));
	th_close(&h);

	REQUIRE(setup(&h, &q, uri) == 0);
	CHECK_EQ(kvv_exist(&q, 0, "lost0003", 8), KVV(NVME_KVV_SC_KEY_NOT_EXIST));
	CHECK_EQ(kvv_retrieve(&q, 0, "keep0001", 8, 4096, 0), 0);
	CHECK(q.dw0 == 200 && has_pattern(q.val, 200, 1));
	pattern(q.val, 100, 4);
	CHECK_EQ(kvv_store(&q, 0, "keep0004", 8, 100, 0, 0), 0);
	CHECK_EQ(kvv_retrieve(&q, 0, "keep0004", 8, 4096, 0), 0);
	CHECK(q.dw0 == 100 && has_pattern(q.val, 100, 4));
	struct nvme_kvv_log_capacity cap;
	capacity_log(&h, &cap);
	CHECK_EQ(cap.damaged_spans, 0);
	th_close(&h);
	remove_log(f);
}

/* A key-with-delete iterator's deletes are durable when the read that returned the keys
 * completes, whatever the write cache says: the read's completion waits for a sync. */
static void test_iter_deletes_durable(void)
{
	char uri[512];
	struct th h;
	struct kvq q;
	const char *f = fresh_log("iterdel.kv", "16M", uri, &h, &q);
	REQUIRE(f != NULL);
	char key[16];
	for (unsigned i = 0; i < 50; i++) {
		snprintf(key, sizeof(key), "idel%04u", i);
		REQUIRE(kvv_store(&q, 0, key, 8, 16, 0, 0) == 0);
	}
	REQUIRE(kvv_iter_open(&q, 0, NVME_KVV_ITER_OPEN_KEY_DELETE, 0, 0) == 0);
	uint8_t handle = (uint8_t)q.dw0;
	unsigned before = durability_spy_sync_calls();
	CHECK_EQ(kvv_iter_read(&q, handle), KVV(NVME_KVV_SC_ITER_EOF));
	uint32_t count;
	memcpy(&count, q.val, 4);
	CHECK_EQ(count, 50);
	CHECK(durability_spy_sync_calls() > before);
	/* a sync that fails is reported, not hidden */
	CHECK_EQ(kvv_iter_close(&q, handle), 0);
	REQUIRE(kvv_store(&q, 0, "idel9999", 8, 16, 0, 0) == 0);
	REQUIRE(kvv_iter_open(&q, 0, NVME_KVV_ITER_OPEN_KEY_DELETE, 0, 0) == 0);
	handle = (uint8_t)q.dw0;
	durability_spy_fail_syncs(true);
	CHECK_EQ(kvv_iter_read(&q, handle), WRITE_FAULT);
	durability_spy_fail_syncs(false);
	th_close(&h);
	REQUIRE(setup(&h, &q, uri) == 0);
	struct nvme_kvv_log_capacity cap;
	capacity_log(&h, &cap);
	CHECK_EQ(cap.nr_keys, 0); /* the deletes reached the file before the sync failed */
	th_close(&h);
	remove_log(f);
}

/* CRC-32C known answers: the check value of "123456789", and a long buffer against a
 * bit-at-a-time reference, fed whole and in pieces. */
static uint32_t crc_bitwise(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffffu;
	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82f63b78u & (0u - (c & 1u)));
	}
	return ~c;
}

static void test_crc32c(void)
{
	CHECK_EQ(kv_crc32c(0, "123456789", 9), 0xe3069283u);
	static uint8_t buf[10007];
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 31 + (i >> 7));
	uint32_t whole = kv_crc32c(0, buf, sizeof(buf));
	CHECK_EQ(whole, crc_bitwise(buf, sizeof(buf)));
	uint32_t parts = kv_crc32c(0, buf, 13);
	parts = kv_crc32c(parts, buf + 13, 4000);
	parts = kv_crc32c(parts, buf + 4013, sizeof(buf) - 4013);
	CHECK_EQ(parts, whole);
}

static void test_not_a_kv_file(void)
{
	const char *f = path_of("garbage.kv");
	int fd = open(f, O_RDWR | O_CREAT | O_TRUNC, 0644);
	REQUIRE(fd >= 0);
	REQUIRE(write(fd, "this is not a kv log at all, not even close.......................", 64) == 64);
	close(fd);
	char uri[512];
	uri_for(uri, sizeof(uri), f, "1M");
	struct th h;
	CHECK(th_open(&h, uri) != 0);
	CHECK(strstr(h.err, "not a KV") != NULL);
	unlink(f);
}

static void test_compaction(void)
{
	const char *f = path_of("compact.kv");
	unlink(f);
	char uri[512];
	uri_for(uri, sizeof(uri), f, "64M");
	struct th h;
	struct kvq q;
	REQUIRE(setup(&h, &q, uri) == 0);
	char key[16];
	/* 100 keys of 8 KiB (~800 KiB live), each overwritten 30 times: ~24 MiB written */
	for (unsigned r = 0; r < 30; r++)
		for (unsigned i = 0; i < 100; i++) {
			snprintf(key, sizeof(key), "cmp%05u", i);
			pattern(q.val, 8192, r * 1000 + i);
			REQUIRE(kvv_store(&q, 0, key, 8, 8192, 0, 0) == 0);
		}
	struct nvme_kvv_log_waf *w = th_alloc(&h, 4096, 4096, NULL);
	CHECK_EQ(th_get_log(&h, NVME_KVV_LOG_WAF, 0, 0, 512, w), 0);
	CHECK(w->compactions > 0);
	CHECK(w->waf > 10);  /* compaction rewrites count */
	uint64_t live = 100 * (24 + 8 + 8192);
	CHECK(file_size(f) <= 64 + 2 * live + (2u << 20));
	for (unsigned i = 0; i < 100; i++) {
		snprintf(key, sizeof(key), "cmp%05u", i);
		CHECK_EQ(kvv_retrieve(&q, 0, key, 8, 8192, 0), 0);
		CHECK(has_pattern(q.val, 8192, 29 * 1000 + i));
	}
	/* deleting most keys lets the file shrink */
	for (unsigned i = 0; i < 95; i++) {
		snprintf(key, sizeof(key), "cmp%05u", i);
		CHECK_EQ(kvv_delete(&q, 0, key, 8), 0);
	}
	/* more churn on one key so the dead space passes the compaction threshold */
	for (unsigned r = 0; r < 200; r++) {
		pattern(q.val, 8192, r);
		CHECK_EQ(kvv_store(&q, 0, "churn---", 8, 8192, 0, 0), 0);
	}
	CHECK(file_size(f) < (3u << 20));
	th_close(&h);
	REQUIRE(setup(&h, &q, uri) == 0);
	for (unsigned i = 0; i < 100; i++) {
		snprintf(key, sizeof(key), "cmp%05u", i);
		if (i < 95) {
			CHECK_EQ(kvv_exist(&q, 0, key, 8), KVV(NVME_KVV_SC_KEY_NOT_EXIST));
		} else {
			CHECK_EQ(kvv_retrieve(&q, 0, key, 8, 8192, 0), 0);
			CHECK(has_pattern(q.val, 8192, 29 * 1000 + i));
		}
	}
	CHECK_EQ(kvv_retrieve(&q, 0, "churn---", 8, 8192, 0), 0);
	CHECK(has_pattern(q.val, 8192, 199));
	th_close(&h);

	/* a crash in the middle of a compaction leaves the old log and a partial copy: the
	 * copy is thrown away at open and the log is used as it is */
	char partial[300];
	snprintf(partial, sizeof(partial), "%s.compact", f);
	int fd = open(partial, O_RDWR | O_CREAT | O_TRUNC, 0644);
	REQUIRE(fd >= 0);
	REQUIRE(write(fd, "UNVMEKV1 half a copy", 20) == 20);
	close(fd);
	REQUIRE(setup(&h, &q, uri) == 0);
	CHECK(access(partial, F_OK) != 0);
	CHECK_EQ(kvv_retrieve(&q, 0, "cmp00099", 8, 8192, 0), 0);
	CHECK(has_pattern(q.val, 8192, 29 * 1000 + 99));
	th_close(&h);
	unlink(f);
}

static void test_format_persists(void)
{
	const char *f = path_of("format.kv");
	unlink(f);
	char uri[512];
	uri_for(uri, sizeof(uri), f, "16M");
	struct th h;
	struct kvq q;
	REQUIRE(setup(&h, &q, uri) == 0);
	CHECK_EQ(kvv_store(&q, 0, "gone", 4, 4096, 0, 0), 0);
	struct nvme_sqe fmt = { .opc = NVME_ADM_FORMAT_NVM, .nsid = 1 };
	CHECK_EQ(th_admin(&h, &fmt, NULL), 0);
	CHECK_EQ(kvv_exist(&q, 0, "gone", 4), KVV(NVME_KVV_SC_KEY_NOT_EXIST));
	CHECK_EQ(kvv_store(&q, 0, "kept", 4, 16, 0, 0), 0);
	th_close(&h);
	REQUIRE(setup(&h, &q, uri) == 0);
	CHECK_EQ(kvv_exist(&q, 0, "gone", 4), KVV(NVME_KVV_SC_KEY_NOT_EXIST));
	CHECK_EQ(kvv_exist(&q, 0, "kept", 4), 0);
	th_close(&h);
	unlink(f);
}

/* ---- crash rounds ---- */

#define SLOTS 64u
#define CRASH_VALUE 16384u

/* Even i: a unique key of this round with a small value; odd i: one of SLOTS keys
 * overwritten over and over with large values, so dead records pile up and compaction runs
 * while the process may be killed. The value carries i. */
static uint32_t crash_key(char *key, unsigned round, uint32_t i)
{
	if (i % 2 == 0)
		return (uint32_t)snprintf(key, 32, "uniq-%02u-%08u", round, i);
	return (uint32_t)snprintf(key, 32, "slot-%04u", (i / 2) % SLOTS);
}

static uint32_t crash_len(uint32_t i)
{
	return i % 2 ? CRASH_VALUE : 256;
}

static void crash_value(uint8_t *v, uint32_t i)
{
	pattern(v, crash_len(i), i);
	memcpy(v, &i, 4);
}

static void child_store(const char *uri, unsigned round, uint32_t start, int fd)
{
	struct th h;
	struct kvq q;
	if (setup(&h, &q, uri))
		_exit(2);
	char key[32];
	for (uint32_t i = start;; i++) {
		uint32_t klen = crash_key(key, round, i);
		crash_value(q.val, i);
		if (kvv_store(&q, 0, key, klen, crash_len(i), 0, 0) != 0)
			_exit(3);
		if (write(fd, &i, 4) != 4) /* acknowledged */
			_exit(4);
	}
}

#define ROUNDS 8u

static void test_sigkill_rounds(void)
{
	const char *f = path_of("crash.kv");
	unlink(f);
	char uri[512];
	uri_for(uri, sizeof(uri), f, "256M");
	srand((unsigned)time(NULL));
	uint32_t next = 0;                     /* first i of the next round */
	uint32_t first_of[ROUNDS] = { 0 }, acked_to[ROUNDS] = { 0 }, in_flight[ROUNDS] = { 0 };
	bool any[ROUNDS] = { false };
	for (unsigned round = 0; round < ROUNDS; round++) {
		int p[2];
		REQUIRE(pipe(p) == 0);
		pid_t pid = fork();
		REQUIRE(pid >= 0);
		if (pid == 0) {
			close(p[0]);
			child_store(uri, round, next, p[1]);
		}
		close(p[1]);
		first_of[round] = next;
		/*
		 * Every fourth round is killed within 30 ms, often while the device is still
		 * recovering the log; the others run 10..150 ms after their first acknowledged
		 * store. Acknowledgements are read as they come.
		 */
		bool early = round % 4 == 3;
		long budget_ms = early ? rand() % 30 : 10 + rand() % 140;
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		uint32_t v;
		for (;;) {
			struct pollfd pfd = { .fd = p[0], .events = POLLIN };
			if (poll(&pfd, 1, 5) > 0) {
				ssize_t n = read(p[0], &v, 4);
				if (n == 4) {
					if (!any[round] && !early)
						clock_gettime(CLOCK_MONOTONIC, &t0);
					acked_to[round] = v;
					any[round] = true;
				} else if (n == 0) {
					break;  /* the child died on its own */
				}
			}
			clock_gettime(CLOCK_MONOTONIC, &t1);
			long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
			if ((any[round] || early) && ms > budget_ms)
				break;
			if (ms > 10000)
				break;  /* no acknowledgement in 10 s: reported below */
		}
		kill(pid, SIGKILL);
		int status;
		waitpid(pid, &status, 0);
		CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
		while (read(p[0], &v, 4) == 4) {
			acked_to[round] = v;
			any[round] = true;
		}
		close(p[0]);
		/* the store in flight at the kill may or may not have happened */
		in_flight[round] = any[round] ? acked_to[round] + 1 : first_of[round];
		next = in_flight[round] + 1;

		/* verify everything acknowledged so far, from a new device in this process */
		struct th h;
		struct kvq q;
		REQUIRE(setup(&h, &q, uri) == 0);
		unsigned missing = 0, wrong = 0, checked = 0;
		char key[32];
		uint8_t ref[CRASH_VALUE];
		uint32_t slot_acked[SLOTS];
		bool slot_has[SLOTS] = { false };
		for (unsigned r = 0; r <= round; r++) {
			if (!any[r])
				continue;
			for (uint32_t i = first_of[r]; i <= acked_to[r]; i++) {
				if (i % 2) {
					slot_acked[(i / 2) % SLOTS] = i;
					slot_has[(i / 2) % SLOTS] = true;
					continue;
				}
				uint32_t klen = crash_key(key, r, i);
				checked++;
				if (kvv_retrieve(&q, 0, key, klen, CRASH_VALUE, 0) != 0) {
					missing++;
					continue;
				}
				crash_value(ref, i);
				wrong += q.dw0 != crash_len(i) || memcmp(q.val, ref, crash_len(i)) != 0;
			}
		}
		/* a slot holds its last acknowledged value, or a later store that was in flight */
		for (unsigned s = 0; s < SLOTS; s++) {
			if (!slot_has[s])
				continue;
			uint32_t klen = crash_key(key, 0, 2 * s + 1);
			checked++;
			if (kvv_retrieve(&q, 0, key, klen, CRASH_VALUE, 0) != 0) {
				missing++;
				continue;
			}
			uint32_t got;
			memcpy(&got, q.val, 4);
			bool ok = got == slot_acked[s];
			for (unsigned r = 0; r <= round && !ok; r++)
				ok = got == in_flight[r] && got > slot_acked[s] && got % 2 &&
				     (got / 2) % SLOTS == s;
			crash_value(ref, got);
			wrong += !ok || q.dw0 != CRASH_VALUE || memcmp(q.val, ref, CRASH_VALUE) != 0;
		}
		CHECK_EQ(missing, 0);
		CHECK_EQ(wrong, 0);
		CHECK(any[round] || early);
		if (missing || wrong || !(any[round] || early))
			fprintf(stderr, "  round %u: acked %s%u, %u checked, %u missing, %u wrong\n",
				round, any[round] ? "up to " : "nothing from ", acked_to[round], checked,
				missing, wrong);
		th_close(&h);
	}
	remove_log(f);
}

/* Reopening reads the log back from the page cache whether or not it was synced: the spy
 * tells what a power loss right after each acknowledgement would lose. Nothing: every store
 * and delete is durable when it completes, with the write cache on or off (a KV SSD's
 * power-loss protection); a store that failed costs no sync. */
static void test_power_loss_keeps_every_completed_write(void)
{
	const char *f = path_of("power.kv");
	unlink(f);
	char uri[512];
	uri_for(uri, sizeof(uri), f, "16M");
	struct th h;
	struct kvq q;
	durability_spy_reset();
	REQUIRE(setup(&h, &q, uri) == 0);
	CHECK(durability_spy_durable(f)); /* a new log's header is synced */

	/* write cache on */
	pattern(q.val, 1000, 1);
	CHECK_EQ(kvv_store(&q, 0, "power-a", 7, 1000, 0, 0), 0);
	CHECK(durability_spy_durable(f));
	CHECK_EQ(kvv_delete(&q, 0, "power-a", 7), 0);
	CHECK(durability_spy_durable(f));
	unsigned syncs = durability_spy_sync_calls();
	CHECK(kvv_delete(&q, 0, "power-a", 7) != 0); /* no such key: nothing to make durable */
	CHECK_EQ(durability_spy_sync_calls(), syncs);
	CHECK_EQ(kvs_cmd(&q, NVME_KV_FLUSH, 1, "", 0, 0, 0), 0);
	CHECK(durability_spy_durable(f));

	/* write cache off: the same */
	struct nvme_sqe wc = { .opc = NVME_ADM_SET_FEATURES, .cdw10 = NVME_FEAT_VOLATILE_WC,
			       .cdw11 = 0 };
	REQUIRE(th_admin(&h, &wc, NULL) == 0);
	CHECK_EQ(kvv_store(&q, 0, "power-b", 7, 1000, 0, 0), 0);
	CHECK(durability_spy_durable(f));
	CHECK_EQ(kvv_delete(&q, 0, "power-b", 7), 0);
	CHECK(durability_spy_durable(f));
	CHECK_EQ(kvs_cmd(&q, NVME_KV_STORE, 1, "power-c", 7, 1000, 0), 0);
	CHECK(durability_spy_durable(f));
	durability_spy_disarm();
	th_close(&h);
	unlink(f);
}

/* Group commit: stores and deletes fetched in one batch (one doorbell) complete after one
 * sync that covers them all, and each completed one is durable; a retrieve in the batch costs
 * none, and a batch of failures none either. */
static void test_group_commit_one_sync_per_batch(void)
{
	char uri[512];
	struct th h;
	struct kvq q;
	durability_spy_reset();
	const char *f = fresh_log("group.kv", "64M", uri, &h, &q);
	REQUIRE(f != NULL);
	enum { N = 48 };
	for (unsigned round = 0; round < 3; round++) {
		unsigned before = durability_spy_sync_calls();
		pattern(q.val, 3000, round);
		for (unsigned i = 0; i < N; i++) {
			/* round 0 stores N keys, round 1 deletes half and stores the rest again, round 2
			 * deletes keys that do not exist (nothing changes: no sync) */
			char key[16];
			snprintf(key, sizeof(key), "grp%05u", i);
			bool del = round == 2 || (round == 1 && i % 2);
			if (round == 2)
				key[0] = 'x';
			struct nvme_sqe cmd = { .opc = del ? NVME_KV_DELETE : NVME_KV_STORE, .nsid = 1,
						.cdw10 = del ? 0 : 3000, .cdw11 = 8 };
			memcpy(&cmd.cdw2, key, 4);
			memcpy(&cmd.cdw3, key + 4, 4);
			if (!del) {
				cmd.prp1 = th_iova(&h, q.val);
				cmd.prp2 = cmd.prp1 + 4096 - (cmd.prp1 & 4095);
			}
			th_place(&q.q, &cmd, false);
		}
		th_ring_sq(&h, &q.q);
		unsigned ok = 0;
		for (unsigned i = 0; i < N; i++) {
			struct nvme_cqe cqe;
			REQUIRE(th_poll(&h, &q.q, &cqe, 5000, i == N - 1));
			ok += th_status(&cqe) == 0;
		}
		CHECK_EQ(ok, round == 2 ? 0u : (unsigned)N);
		CHECK_EQ(durability_spy_sync_calls() - before, round == 2 ? 0u : 1u);
		CHECK(durability_spy_durable(f));
	}
	CHECK_EQ(kvs_cmd(&q, NVME_KV_RETRIEVE, 1, "grp00000", 8, 4096, 0), 0);
	CHECK(q.dw0 == 3000 && has_pattern(q.val, 3000, 1));
	CHECK_EQ(kvs_cmd(&q, NVME_KV_RETRIEVE, 1, "grp00001", 8, 4096, 0),
		 NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_KV_KEY_NOT_EXIST));
	durability_spy_disarm();
	th_close(&h);
	remove_log(f);
}

TEST_MAIN(TEST(test_crc32c), TEST(test_persistence), TEST(test_torn_tail), TEST(test_corrupt_tail),
	  TEST(test_corrupt_middle), TEST(test_damage_kept_when_not_copied),
	  TEST(test_failed_sync_refuses_writes), TEST(test_iter_deletes_durable),
	  TEST(test_not_a_kv_file), TEST(test_compaction), TEST(test_format_persists),
	  TEST(test_sigkill_rounds), TEST(test_power_loss_keeps_every_completed_write),
	  TEST(test_group_commit_one_sync_per_batch))
