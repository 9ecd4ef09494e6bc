/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The host KV engine's durability (lib/hostkv, hkv_internal.h): group commit (a batch of
 * stores and deletes acknowledged by one unit write and one flush, callers on several threads
 * sharing commits), every acknowledged operation kept when the process is killed, recovery
 * that drops a unit a power cut left incomplete and everything after it in its zone (and
 * keeps dropping it), collection that keeps the durable version a buffered store supersedes
 * and the delete a buffered store would hide, an erase that a crash interrupted finished
 * by recovery, and room for collection after a crash that left no zone free. On a conventional file namespace, whose bytes the tests can reach.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/unit/hostkv/hkv_test.h"
#include "tests/unit/test_tmpdir.h"
#include "tests/unit/test_util.h"

#define CREATE "zone=5M&op=40&format=1"
#define REOPEN "zone=5M"

static void uri_of(char *uri, size_t len, const char *name)
{
	snprintf(uri, len, "emu://t?ns=file:128M:4096:%s/%s.img", test_dir, name);
}

static void img_of(char *path, size_t len, const char *name)
{
	snprintf(path, len, "%s/%s.img", test_dir, name);
}

/* Value bytes of (key k, version v), len of them. */
static void vfill(uint8_t *b, uint32_t len, uint32_t k, uint32_t v)
{
	uint64_t x = (uint64_t)k * 0x9e3779b97f4a7c15ull ^ v;
	for (uint32_t i = 0; i < len; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		b[i] = (uint8_t)(x >> 56);
	}
}

static int put(struct hkv *s, uint32_t k, uint32_t v, uint32_t len, bool durable)
{
	uint8_t *b = malloc(len ? len : 1);
	vfill(b, len, k, v);
	int rc = hkv_put(s, 0, (const uint8_t *)&k, 4, b, len, 0, 0, durable);
	free(b);
	return rc;
}

static int del(struct hkv *s, uint32_t k, bool durable)
{
	return hkv_del(s, 0, (const uint8_t *)&k, 4, durable);
}

/* Whether key k holds version v of len bytes (len UINT32_MAX: absent). */
static bool holds(struct hkv *s, uint32_t k, uint32_t v, uint32_t len)
{
	uint8_t *b = malloc(HKV_MAX_VALUE), *want = malloc(HKV_MAX_VALUE);
	struct iovec iov = { b, HKV_MAX_VALUE };
	uint32_t size = 0, copied = 0;
	int rc = hkv_get(s, 0, (const uint8_t *)&k, 4, 0, &iov, 1, HKV_MAX_VALUE, &size, &copied);
	bool ok;
	if (len == UINT32_MAX) {
		ok = rc == HKV_NOENT;
	} else {
		vfill(want, len, k, v);
		ok = rc == HKV_OK && size == len && copied == len && !memcmp(b, want, len);
	}
	free(b);
	free(want);
	return ok;
}

static struct hkv *create(const char *name)
{
	char uri[512];
	uri_of(uri, sizeof(uri), name);
	return must_open(uri, CREATE);
}

static struct hkv *reopen(const char *name)
{
	char uri[512];
	uri_of(uri, sizeof(uri), name);
	return must_open(uri, REOPEN);
}

/* Creates the store name, then runs child(s, fd) on it in a child process, which ends with
 * _exit (never a close: as if killed) and may write one number into fd: *said (0: none). */
static void in_child(const char *name, void (*child)(struct hkv *s, int fd), uint64_t *said)
{
	*said = 0;
	struct hkv *s = create(name);
	REQUIRE(s);
	hkv_close(s);
	int p[2];
	REQUIRE(pipe(p) == 0);
	pid_t pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		s = reopen(name);
		if (!s)
			_exit(3);
		child(s, p[1]);
		_exit(0);
	}
	close(p[1]);
	int st;
	REQUIRE(waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	if (read(p[0], said, sizeof(*said)) != sizeof(*said))
		*said = 0;
	close(p[0]);
}

/* ---- group commit ---- */

static void test_one_commit_acknowledges_a_batch(void)
{
	struct hkv *s = create("batch");
	REQUIRE(s);
	uint64_t c0 = s->commits;
	for (uint32_t k = 0; k < 300; k++)
		CHECK_EQ(put(s, k, 1, 500 + k * 7, false), HKV_OK);
	CHECK_EQ(s->commits, c0); /* buffered, not acknowledged as durable yet */
	CHECK_EQ(hkv_flush(s), 0);
	CHECK_EQ(s->commits, c0 + 1);
	CHECK_EQ(hkv_flush(s), 0); /* nothing new: nothing to write */
	CHECK_EQ(s->commits, c0 + 1);
	CHECK_EQ(put(s, 1000, 1, HKV_MAX_VALUE, true), HKV_OK);
	CHECK_EQ(del(s, 7, true), HKV_OK);
	CHECK_EQ(s->commits, c0 + 3);
	hkv_close(s);
	s = reopen("batch");
	REQUIRE(s);
	unsigned bad = 0;
	for (uint32_t k = 0; k < 300; k++)
		bad += !holds(s, k, 1, k == 7 ? UINT32_MAX : 500 + k * 7);
	CHECK_EQ(bad, 0);
	CHECK(holds(s, 1000, 1, HKV_MAX_VALUE));
	hkv_close(s);
}

#define THREADS 4
#define PER_THREAD 120

struct committer {
	struct hkv *s;
	uint32_t first;
	int failures;
};

static void *commit_thread(void *arg)
{
	struct committer *c = arg;
	for (uint32_t i = 0; i < PER_THREAD; i++) {
		uint32_t k = c->first + i;
		if (put(c->s, k, 2, 100 + (k * 131) % 20000, true) != HKV_OK)
			c->failures++;
		if (i % 5 == 4 && del(c->s, k - 2, true) != HKV_OK)
			c->failures++;
	}
	return NULL;
}

struct reader {
	struct hkv *s;
	_Atomic bool stop;
	uint64_t reads;
};

static void *read_thread(void *arg)
{
	struct reader *r = arg;
	uint8_t b[32];
	struct iovec iov = { b, sizeof(b) };
	while (!r->stop) {
		uint32_t k = (uint32_t)(r->reads++ % (THREADS * PER_THREAD)), size, copied;
		(void)hkv_get(r->s, 0, (const uint8_t *)&k, 4, 0, &iov, 1, sizeof(b), &size, &copied);
	}
	return NULL;
}

/* What key k holds in the end: the threads delete every key whose index is 2 modulo 5. */
static uint32_t committer_len(uint32_t k)
{
	return k % PER_THREAD % 5 == 2 ? UINT32_MAX : 100 + (k * 131) % 20000;
}

/* Durable stores and deletes on several threads at once: each returns durable, commits are
 * shared (never more than the operations), and readers run alongside (TSan). */
static void test_concurrent_committers(void)
{
	struct hkv *s = create("threads");
	REQUIRE(s);
	uint64_t c0 = s->commits;
	pthread_t t[THREADS], rt;
	struct committer c[THREADS];
	struct reader r = { .s = s };
	REQUIRE(pthread_create(&rt, NULL, read_thread, &r) == 0);
	for (int i = 0; i < THREADS; i++) {
		c[i] = (struct committer){ .s = s, .first = (uint32_t)i * PER_THREAD };
		REQUIRE(pthread_create(&t[i], NULL, commit_thread, &c[i]) == 0);
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		CHECK_EQ(c[i].failures, 0);
	}
	r.stop = true;
	pthread_join(rt, NULL);
	uint64_t ops = THREADS * (PER_THREAD + PER_THREAD / 5);
	CHECK(s->commits > c0 && s->commits - c0 <= ops);
	printf("  %" PRIu64 " durable operations on %d threads, %" PRIu64 " commits\n", ops, THREADS,
	       s->commits - c0);
	hkv_close(s);
	s = reopen("threads");
	REQUIRE(s);
	unsigned bad = 0;
	for (uint32_t k = 0; k < THREADS * PER_THREAD; k++)
		bad += !holds(s, k, 2, committer_len(k));
	CHECK_EQ(bad, 0);
	hkv_close(s);
}

/* ---- every acknowledged operation survives a kill ---- */

/* Operation n: a store of key n % 97 (version n; a few of 2 MiB) or, every seventh, a delete. */
static bool op_is_delete(uint32_t n)
{
	return n % 7 == 3;
}

static uint32_t op_len(uint32_t n)
{
	return n % 41 == 0 ? HKV_MAX_VALUE : (n * 2654435761u) % 30000;
}

static void kill_child(struct hkv *s, int fd, uint32_t from)
{
	for (uint32_t n = from;; n++) {
		int rc = op_is_delete(n) ? del(s, n % 97, true) : put(s, n % 97, n, op_len(n), true);
		if (rc != HKV_OK && !(rc == HKV_NOENT && op_is_delete(n)))
			_exit(4);
		if (write(fd, &n, sizeof(n)) != sizeof(n))
			_exit(5);
	}
}

static void test_kill_keeps_every_acknowledged(void)
{
	struct hkv *s = create("kill");
	REQUIRE(s);
	hkv_close(s);
	/* per key: the version (0 absent) and length after every acknowledged operation */
	uint32_t ver[97] = { 0 }, len[97] = { 0 }, from = 1;
	for (int attempt = 0; attempt < 3; attempt++) {
		int p[2];
		REQUIRE(pipe(p) == 0);
		pid_t pid = fork();
		REQUIRE(pid >= 0);
		if (pid == 0) {
			close(p[0]);
			struct hkv *c = reopen("kill");
			if (!c)
				_exit(3);
			kill_child(c, p[1], from);
		}
		close(p[1]);
		uint32_t n, last = from - 1, stop = from + 150 + 100 * (uint32_t)attempt;
		while (last < stop && read(p[0], &n, sizeof(n)) == sizeof(n))
			last = n;
		kill(pid, SIGKILL);
		int st;
		waitpid(pid, &st, 0);
		while (read(p[0], &n, sizeof(n)) == sizeof(n))
			last = n;
		close(p[0]);
		REQUIRE(WIFSIGNALED(st));
		for (n = from; n <= last; n++) {
			ver[n % 97] = op_is_delete(n) ? 0 : n;
			len[n % 97] = op_len(n);
		}
		s = reopen("kill");
		REQUIRE(s);
		/* the operation after the last acknowledged one may have happened or not */
		uint32_t next = last + 1, nk = next % 97;
		unsigned bad = 0;
		for (uint32_t k = 0; k < 97; k++) {
			bool now = ver[k] ? holds(s, k, ver[k], len[k]) : holds(s, k, 0, UINT32_MAX);
			if (!now && k == nk) {
				now = op_is_delete(next) ? holds(s, k, 0, UINT32_MAX)
							 : holds(s, k, next, op_len(next));
				if (now) {
					ver[k] = op_is_delete(next) ? 0 : next;
					len[k] = op_len(next);
				}
			}
			bad += !now;
		}
		CHECK_EQ(bad, 0);
		hkv_close(s);
		from = last + 2;
	}
}

/* ---- recovery drops what a power cut left incomplete ---- */

static void torn_child(struct hkv *s, int fd)
{
	/* A durable; B and then C written as units after it, neither flushed */
	if (put(s, 1, 1, 3000, true) != HKV_OK || put(s, 2, 1, 9000, false) != HKV_OK ||
	    hkv_seal(s, &s->user) != 0)
		_exit(4);
	uint32_t k = 2;
	const struct hkv_ent *e = hkv_index_find(&s->ix, 0, (const uint8_t *)&k, 4);
	uint64_t addr = e ? e->addr : 0;
	if (put(s, 3, 1, 5000, false) != HKV_OK || hkv_seal(s, &s->user) != 0 ||
	    write(fd, &addr, sizeof(addr)) != sizeof(addr))
		_exit(5);
}

/* B's unit lost a page of its data to a power cut (what a cut does to an unflushed unit):
 * recovery checks the data of whatever no flush covered, drops B's unit and C's after it in
 * the same zone, keeps A, and never takes B back, even once later units are flushed. */
static void test_torn_unflushed_unit_is_dropped(void)
{
	uint64_t addr;
	in_child("torn", torn_child, &addr);
	REQUIRE(addr && !hkv_in_buf(addr));
	char img[512];
	img_of(img, sizeof(img), "torn");
	FILE *f = fopen(img, "r+b");
	REQUIRE(f);
	fseek(f, (long)addr + 4096, SEEK_SET);
	uint8_t zero[4096] = { 0 };
	fwrite(zero, 1, sizeof(zero), f); /* its second data page never reached the disk */
	fclose(f);
	for (int round = 0; round < 2; round++) {
		struct hkv *s = reopen("torn");
		REQUIRE(s);
		CHECK(holds(s, 1, 1, 3000));
		CHECK(holds(s, 2, 1, UINT32_MAX));
		CHECK(holds(s, 3, 1, UINT32_MAX));
		CHECK(s->checked_units >= 2 && s->dropped_units >= 2);
		CHECK_EQ(put(s, 4 + (uint32_t)round, 1, 7000, true), HKV_OK);
		hkv_close(s);
	}
	struct hkv *s = reopen("torn");
	REQUIRE(s);
	CHECK(holds(s, 4, 1, 7000) && holds(s, 5, 1, 7000) && holds(s, 2, 1, UINT32_MAX));
	hkv_close(s);
}

/* ---- collection while newer versions wait in the buffer ---- */

#define KEY_K 500u
#define KEY_D 501u
#define KEY_X 502u
#define BIG0 600u
#define FILL0 1000u
#define BIGLEN (3u << 19) /* three fill 90% of a 5 MiB zone: collection leaves it alone */

/* Stores durable fillers until the user stream moves to another zone; returns the next id. */
static uint32_t fill_zone(struct hkv *s, uint32_t id)
{
	uint32_t zone = s->user.zone;
	while (s->user.zone == zone || s->user.zone == UINT32_MAX)
		if (put(s, id++, 1, 65536, true) != HKV_OK)
			_exit(6);
	return id;
}

static uint32_t zone_of_key(struct hkv *s, uint32_t k)
{
	const struct hkv_ent *e = hkv_index_find(&s->ix, 0, (const uint8_t *)&k, 4);
	return e && !hkv_in_buf(e->addr) ? hkv_zone_of(s, e->addr) : UINT32_MAX;
}

static void gc_child(struct hkv *s, int fd)
{
	/* D's and X's first versions in a zone whose other records stay live */
	if (put(s, KEY_D, 1, 100, true) != HKV_OK || put(s, KEY_X, 1, 100, true) != HKV_OK)
		_exit(4);
	uint32_t zd = zone_of_key(s, KEY_D);
	for (uint32_t i = 0; i < 3; i++)
		if (put(s, BIG0 + i, 1, BIGLEN, true) != HKV_OK || zone_of_key(s, BIG0 + i) != zd)
			_exit(4);
	uint32_t id = fill_zone(s, FILL0);
	/* a zone with K's version 1, D's delete, and fillers deleted later: nearly empty */
	if (put(s, KEY_K, 1, 3000, true) != HKV_OK || del(s, KEY_D, true) != HKV_OK ||
	    put(s, KEY_X, 2, 200, true) != HKV_OK)
		_exit(4);
	uint32_t zk = zone_of_key(s, KEY_K);
	uint32_t end = fill_zone(s, id);
	for (uint32_t k = FILL0; k < end; k++)
		if (del(s, k, true) != HKV_OK)
			_exit(4);
	/* newer versions wait in the buffer: K's store, D's store that would hide its delete, and
	 * X's delete, which must not leave X's first version (still on the media) as its state */
	if (put(s, KEY_K, 2, 4000, false) != HKV_OK || put(s, KEY_D, 2, 200, false) != HKV_OK ||
	    del(s, KEY_X, false) != HKV_OK)
		_exit(4);
	/* collection, until it took K's zone */
	for (int i = 0; i < 16 && s->role[zk] != HKV_Z_FREE; i++) {
		s->gc_low = s->nfree;
		int rc = hkv_gc(s);
		if (rc && rc != -ENOSPC) /* ENOSPC: no victim left */
			_exit(5);
	}
	/* K's zone went; D's first version is still on the media, under the carried delete */
	uint64_t collected = s->role[zk] == HKV_Z_FREE && s->role[zd] == HKV_Z_USED;
	if (write(fd, &collected, sizeof(collected)) != sizeof(collected))
		_exit(5);
	/* killed before the buffer was committed */
}

static void test_collection_keeps_what_a_crash_needs(void)
{
	uint64_t collected;
	in_child("pins", gc_child, &collected);
	CHECK_EQ(collected, 1);
	struct hkv *s = reopen("pins");
	REQUIRE(s);
	CHECK(holds(s, KEY_K, 1, 3000));          /* not lost with its zone */
	CHECK(holds(s, KEY_D, 0, UINT32_MAX));    /* still deleted, version 1 not back */
	CHECK(holds(s, KEY_X, 2, 200));           /* the delete never written, version 1 not back */
	for (uint32_t i = 0; i < 3; i++)
		CHECK(holds(s, BIG0 + i, 1, BIGLEN));
	CHECK(holds(s, FILL0, 1, UINT32_MAX));
	hkv_close(s);
}

/* ---- a crash while the collector held the last free zone ---- */

#define PIN0 2000u     /* small keys never overwritten: every zone keeps something live */
#define CHURN0 3000u   /* four keys overwritten with 1 MiB values: the zones fill */
#define KEY_GONE 4000u /* stored and deleted: its delete is what collection carries */
#define CHURN_LEN (1u << 20)

/* What the child says through in_child's one number. */
struct last_zone_said {
	uint16_t pins, churns;  /* acknowledged pin stores (ids PIN0 + 0..), churn stores */
	uint16_t nfree;         /* free zones at the crash */
	uint16_t pad;
};
_Static_assert(sizeof(struct last_zone_said) == sizeof(uint64_t), "one number");

static uint32_t churn_version(uint32_t c, uint32_t churns)
{
	uint32_t v = UINT32_MAX;
	for (uint32_t n = 0; n < churns; n++)
		if (n % 4 == c)
			v = n;
	return v;
}

static void last_zone_child(struct hkv *s, int fd)
{
	if (put(s, KEY_GONE, 1, 100, true) != HKV_OK || del(s, KEY_GONE, true) != HKV_OK)
		_exit(4);
	/* no collection: the user stream takes zones until only the collector's last is left */
	s->gc_low = 0;
	struct last_zone_said said = { 0 };
	for (;;) {
		if (put(s, PIN0 + said.pins, 1, 100, true) != HKV_OK)
			break;
		said.pins++;
		if (put(s, CHURN0 + said.churns % 4, said.churns, CHURN_LEN, true) != HKV_OK)
			break;
		said.churns++;
	}
	/* what collection does up to hkv.gc.flushed when its copies need the last free zone: the
	 * copies (here the carried delete) sealed there and flushed, the victim not reset yet */
	uint32_t boff, rec, k = KEY_GONE;
	if (hkv_append(s, &s->gcs, HKV_REC_DEL, 0, (const uint8_t *)&k, 4, NULL, 0, HKV_NO_ADDR,
		       &boff, &rec) || hkv_seal(s, &s->gcs) || hkv_media_flush(s))
		_exit(5);
	said.nfree = s->nfree;
	if (write(fd, &said, sizeof(said)) != sizeof(said))
		_exit(5);
}

static bool holds_all(struct hkv *s, const struct last_zone_said *said)
{
	bool ok = holds(s, KEY_GONE, 0, UINT32_MAX);
	for (uint32_t i = 0; i < said->pins; i++)
		ok &= holds(s, PIN0 + i, 1, 100);
	for (uint32_t c = 0; c < 4; c++) {
		uint32_t v = churn_version(c, said->churns);
		ok &= v == UINT32_MAX ? holds(s, CHURN0 + c, 0, UINT32_MAX)
				      : holds(s, CHURN0 + c, v, CHURN_LEN);
	}
	return ok;
}

/* Killed with no zone free (the collector had taken the last one): recovery must leave
 * collection room to copy into, or every later commit fails with KV Capacity Exceeded in a
 * store far from full (seen in the crash harness's hostkv-big workload: rounds in a row
 * failed until the files were thrown away). */
static void test_crash_with_no_free_zone_recovers_room(void)
{
	uint64_t raw;
	struct last_zone_said said;
	in_child("lastzone", last_zone_child, &raw);
	memcpy(&said, &raw, sizeof(said));
	REQUIRE(said.pins > 20 && said.churns > 20);
	CHECK_EQ(said.nfree, 0);
	struct hkv *s = reopen("lastzone");
	REQUIRE(s);
	CHECK(holds_all(s, &said));
	/* the store holds about 4 MiB of 72: commits go on, through collection */
	uint32_t base = said.churns;
	for (uint32_t n = 0; n < 40; n++) {
		CHECK_EQ(put(s, CHURN0 + (base + n) % 4, base + n, CHURN_LEN, true), HKV_OK);
		said.churns = (uint16_t)(base + n + 1);
	}
	CHECK(holds_all(s, &said));
	hkv_close(s);
	s = reopen("lastzone");
	REQUIRE(s);
	CHECK(holds_all(s, &said));
	hkv_close(s);
}

/* ---- an erase cut short ---- */

static void erase_child(struct hkv *s, int fd)
{
	(void)fd;
	for (uint32_t k = 0; k < 12; k++)
		if (put(s, k, 1, k % 3 ? 5000 : HKV_MAX_VALUE, true) != HKV_OK)
			_exit(4);
	/* the first half of hkv_erase: its record durable, no zone reset yet */
	uint32_t boff, rec;
	if (hkv_append(s, &s->gcs, HKV_REC_ERASE, 0, (const uint8_t *)"", 0, NULL, 0, HKV_NO_ADDR,
		       &boff, &rec) || hkv_seal(s, &s->gcs) || hkv_media_flush(s))
		_exit(5);
}

/* The erase record is durable, the resets never happened: recovery applies the erase and
 * finishes the resets, and nothing comes back later, not even once collection took the
 * erase record's own zone. */
static void test_interrupted_erase_completes(void)
{
	uint64_t unused;
	in_child("erase", erase_child, &unused);
	struct hkv *s = reopen("erase");
	REQUIRE(s);
	struct hkv_usage u;
	hkv_usage(s, &u);
	CHECK_EQ(u.nr_keys, 0);
	CHECK(holds(s, 0, 1, UINT32_MAX) && holds(s, 1, 1, UINT32_MAX));
	/* the zones written before the erase were reset: only the erase record's is in use */
	unsigned in_use = 0;
	for (uint32_t z = 1; z < s->z->nzones; z++)
		in_use += s->role[z] == HKV_Z_USED;
	CHECK_EQ(in_use, 1);
	CHECK_EQ(put(s, 100, 1, 3000, true), HKV_OK);
	/* collect every used zone, the erase record's included */
	for (int i = 0; i < 30; i++) {
		bool used = false;
		for (uint32_t z = 1; z < s->z->nzones; z++)
			used |= s->role[z] == HKV_Z_USED;
		if (!used)
			break;
		s->gc_low = s->nfree;
		int rc = hkv_gc(s);
		CHECK(rc == 0 || rc == -ENOSPC); /* ENOSPC: no victim left */
		if (rc)
			break;
	}
	hkv_close(s);
	s = reopen("erase");
	REQUIRE(s);
	hkv_usage(s, &u);
	CHECK_EQ(u.nr_keys, 1);
	CHECK(holds(s, 100, 1, 3000) && holds(s, 0, 1, UINT32_MAX) && holds(s, 3, 1, UINT32_MAX));
	hkv_close(s);
}

__attribute__((constructor)) static void setup(void)
{
	test_dir_make("unvme-hkvc");
}

TEST_MAIN(TEST(test_one_commit_acknowledges_a_batch), TEST(test_concurrent_committers),
	  TEST(test_kill_keeps_every_acknowledged), TEST(test_torn_unflushed_unit_is_dropped),
	  TEST(test_collection_keeps_what_a_crash_needs), TEST(test_interrupted_erase_completes),
	  TEST(test_crash_with_no_free_zone_recovers_room))
