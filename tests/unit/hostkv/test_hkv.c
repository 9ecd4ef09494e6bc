/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The host KV engine (lib/hostkv) on emulated zoned and conventional namespaces, against a
 * model of every key's value: stores, retrieves, deletes, offsets and flags, garbage
 * collection under churn with both policies, reopening, and recovery after the process dies.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/unit/hostkv/hkv_test.h"
#include "tests/unit/test_tmpdir.h"
#include "tests/unit/test_util.h"

#define NKEYS 600


static uint64_t rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void key_of(uint32_t i, uint8_t *k, uint8_t *klen)
{
	*klen = (uint8_t)(8 + i % 40);
	memset(k, 'k', *klen);
	memcpy(k, &i, sizeof(i));
}

/* Value of key i at version v: its size and bytes follow from (i, v). */
static uint32_t vsize(uint32_t i, uint32_t v)
{
	static const uint32_t sizes[] = { 0, 1, 100, 4096, 5000, 8192, 30000, 65536 };
	return sizes[(i * 7 + v) % 8];
}

static void vfill(uint8_t *b, uint32_t n, uint32_t i, uint32_t v)
{
	for (uint32_t k = 0; k < n; k++)
		b[k] = (uint8_t)(i * 31 + v * 17 + k);
}

static int put(struct hkv *s, uint32_t i, uint32_t v, bool durable)
{
	uint8_t k[64], klen, *b = malloc(65536);
	key_of(i, k, &klen);
	uint32_t n = vsize(i, v);
	vfill(b, n, i, v);
	int rc = hkv_put(s, 0, k, klen, b, n, 0, 0, durable);
	free(b);
	return rc;
}

/* model[i] = 0: absent, else the version stored. */
static bool holds(struct hkv *s, uint32_t i, uint32_t v)
{
	uint8_t k[64], klen, *b = malloc(65536), *want = malloc(65536);
	key_of(i, k, &klen);
	struct iovec iov = { b, 65536 };
	uint32_t size = 0, copied = 0;
	int rc = hkv_get(s, 0, k, klen, 0, &iov, 1, 65536, &size, &copied);
	bool ok;
	if (v == 0) {
		ok = rc == HKV_NOENT && !hkv_exist(s, 0, k, klen);
	} else {
		uint32_t n = vsize(i, v);
		vfill(want, n, i, v);
		ok = rc == HKV_OK && size == n && copied == n && !memcmp(b, want, n);
	}
	free(b);
	free(want);
	return ok;
}

static unsigned check_all(struct hkv *s, const uint32_t *model)
{
	unsigned bad = 0;
	for (uint32_t i = 0; i < NKEYS; i++)
		bad += !holds(s, i, model[i]);
	return bad;
}

static void churn(struct hkv *s, uint32_t *model, unsigned ops, uint64_t *seed)
{
	for (unsigned n = 0; n < ops; n++) {
		uint64_t r = rng(seed);
		uint32_t i = (uint32_t)(r % NKEYS);
		uint8_t k[64], klen;
		key_of(i, k, &klen);
		if ((r >> 40) % 8 == 0) {
			int rc = hkv_del(s, 0, k, klen, false);
			CHECK(rc == (model[i] ? HKV_OK : HKV_NOENT));
			model[i] = 0;
		} else {
			uint32_t v = model[i] + 1 + (uint32_t)(r >> 50) % 3;
			CHECK_EQ(put(s, i, v, false), HKV_OK);
			model[i] = v;
		}
	}
}

static void test_basics(void)
{
	struct hkv *s = must_open("emu://t?ns=zns,zone=8M:128M:4096", "op=40");
	REQUIRE(s);
	uint8_t k[] = "hello-key", v[100], out[200];
	memset(v, 0x42, sizeof(v));
	struct iovec iov = { out, sizeof(out) };
	uint32_t size, copied;
	CHECK_EQ(hkv_get(s, 0, k, 9, 0, &iov, 1, 200, &size, &copied), HKV_NOENT);
	CHECK_EQ(hkv_put(s, 0, k, 9, v, 100, 0, 0, false), HKV_OK);
	CHECK(hkv_exist(s, 0, k, 9));
	CHECK(!hkv_exist(s, 1, k, 9)); /* the other keyspace */
	CHECK_EQ(hkv_get(s, 0, k, 9, 0, &iov, 1, 200, &size, &copied), HKV_OK);
	CHECK(size == 100 && copied == 100 && out[99] == 0x42);
	/* flags: must exist / must not exist */
	CHECK_EQ(hkv_put(s, 0, k, 9, v, 10, 0, HKV_MUST_NOT_EXIST, false), HKV_EXISTS);
	CHECK_EQ(hkv_put(s, 1, k, 9, v, 10, 0, HKV_MUST_EXIST, false), HKV_NOENT);
	/* offsets: overwrite inside, extend, past the end */
	memset(v, 0x77, 10);
	CHECK_EQ(hkv_put(s, 0, k, 9, v, 10, 95, 0, false), HKV_OK);
	CHECK_EQ(hkv_get(s, 0, k, 9, 90, &iov, 1, 200, &size, &copied), HKV_OK);
	CHECK(size == 105 && copied == 15 && out[4] == 0x42 && out[5] == 0x77 && out[14] == 0x77);
	CHECK_EQ(hkv_put(s, 0, k, 9, v, 10, 200, 0, false), HKV_BADOFF);
	CHECK_EQ(hkv_put(s, 0, (uint8_t *)"newkey", 6, v, 10, 5, 0, false), HKV_BADOFF);
	CHECK_EQ(hkv_get(s, 0, k, 9, 106, &iov, 1, 200, &size, &copied), HKV_BADOFF);
	CHECK_EQ(hkv_put(s, 0, k, 9, v, 10, HKV_MAX_VALUE - 5, 0, false), HKV_TOOBIG);
	/* the largest value, read back in pieces */
	uint8_t *big = malloc(HKV_MAX_VALUE), *back = malloc(HKV_MAX_VALUE);
	for (uint32_t i = 0; i < HKV_MAX_VALUE; i++)
		big[i] = (uint8_t)(i * 13);
	CHECK_EQ(hkv_put(s, 1, (uint8_t *)"bigvalue", 8, big, HKV_MAX_VALUE, 0, 0, false), HKV_OK);
	CHECK_EQ(hkv_flush(s), 0);
	struct iovec parts[2] = { { back, 1000 }, { back + 1000, HKV_MAX_VALUE - 1000 } };
	CHECK_EQ(hkv_get(s, 1, (uint8_t *)"bigvalue", 8, 0, parts, 2, HKV_MAX_VALUE, &size, &copied), HKV_OK);
	CHECK(copied == HKV_MAX_VALUE && !memcmp(big, back, HKV_MAX_VALUE));
	/* keys and usage */
	uint8_t *keys;
	size_t len, count;
	CHECK_EQ(hkv_keys(s, 0, NULL, NULL, &keys, &len, &count), 0);
	CHECK(count == 1 && len == 10 && keys[0] == 9 && !memcmp(keys + 1, k, 9));
	free(keys);
	struct hkv_usage u;
	hkv_usage(s, &u);
	CHECK(u.nr_keys == 2 && u.nr_keys_ks[1] == 1 && u.used > HKV_MAX_VALUE);
	CHECK_EQ(hkv_del(s, 0, k, 9, true), HKV_OK);
	CHECK_EQ(hkv_del(s, 0, k, 9, false), HKV_NOENT);
	CHECK_EQ(hkv_erase(s), 0);
	CHECK(!hkv_exist(s, 1, (uint8_t *)"bigvalue", 8));
	free(big);
	free(back);
	hkv_close(s);
}

static void gc_run(const char *uri, const char *opts)
{
	struct hkv *s = must_open(uri, opts);
	REQUIRE(s);
	uint32_t *model = calloc(NKEYS, sizeof(*model));
	uint64_t seed = 12345;
	churn(s, model, 12000, &seed); /* ~200 MB of values through 128 MB */
	CHECK_EQ(check_all(s, model), 0);
	struct hkv_usage u;
	hkv_usage(s, &u);
	CHECK(u.gc_runs > 0);
	CHECK(u.media_bytes > u.host_bytes);
	free(model);
	hkv_close(s);
}

static void test_gc_zoned_greedy(void)
{
	gc_run("emu://t?ns=zns,zone=8M:128M:4096", "op=40&gc=greedy");
}

static void test_gc_conventional_cost_benefit(void)
{
	gc_run("emu://t?ns=mem:128M:4096", "op=40&gc=cb&zone=8M&format=1");
}

static void test_limits(void)
{
	char err[512];
	/* a conventional namespace is taken only when told to (it may hold anything) */
	CHECK(open_kv("emu://t?ns=mem:128M:4096", "zone=8M", err, sizeof(err)) == NULL);
	CHECK(strstr(err, "format=1") != NULL);
	CHECK(open_kv("emu://t?ns=zns,zone=8M:64M:4096", "op=5", err, sizeof(err)) == NULL);
	CHECK(strstr(err, "raise op") != NULL);
	CHECK(open_kv("emu://t?ns=zns,zone=1M:64M:4096", NULL, err, sizeof(err)) == NULL);
	CHECK(strstr(err, "too small") != NULL);
	CHECK(open_kv("emu://t?ns=zns,zone=8M:128M:4096", "colour=1", err, sizeof(err)) == NULL);
	CHECK(strstr(err, "colour") != NULL);
	/* full: NOSPC, and room again after deletes */
	struct hkv *s = must_open("emu://t?ns=zns,zone=8M:128M:4096", "op=40");
	REQUIRE(s);
	uint8_t *v = calloc(1, HKV_MAX_VALUE);
	int rc = HKV_OK;
	uint32_t n = 0;
	while (rc == HKV_OK && n < 1000) {
		uint32_t key = n++;
		rc = hkv_put(s, 0, (uint8_t *)&key, 4, v, HKV_MAX_VALUE, 0, 0, false);
	}
	CHECK_EQ(rc, HKV_NOSPC);
	CHECK(n > 20);
	for (uint32_t key = 0; key < n / 2; key++)
		CHECK_EQ(hkv_del(s, 0, (uint8_t *)&key, 4, false), HKV_OK);
	uint32_t key = 5000;
	CHECK_EQ(hkv_put(s, 0, (uint8_t *)&key, 4, v, HKV_MAX_VALUE, 0, 0, false), HKV_OK);
	free(v);
	hkv_close(s);
}

static void test_reopen(void)
{
	char uri[512];
	snprintf(uri, sizeof(uri), "emu://t?ns=zns,zone=8M:128M:4096:%s/r.img", test_dir);
	struct hkv *s = must_open(uri, "op=40");
	REQUIRE(s);
	uint32_t *model = calloc(NKEYS, sizeof(*model));
	uint64_t seed = 99;
	churn(s, model, 8000, &seed);
	hkv_close(s);
	s = must_open(uri, NULL);
	REQUIRE(s);
	CHECK_EQ(check_all(s, model), 0);
	churn(s, model, 3000, &seed); /* and on from there, through collection */
	CHECK_EQ(check_all(s, model), 0);
	hkv_close(s);
	char err[512];
	CHECK(open_kv(uri, "op=20", err, sizeof(err)) == NULL);
	CHECK(strstr(err, "op=40") != NULL);
	free(model);
}

/* The child churns, flushing after every 50 operations and reporting it; it is killed. */
static void crash_child(const char *uri, int fd, uint64_t seed, uint32_t *model)
{
	struct hkv *s = must_open(uri, NULL);
	if (!s)
		_exit(3);
	for (uint32_t round = 1;; round++) {
		churn(s, model, 50, &seed);
		if (hkv_flush(s) != 0)
			_exit(4);
		if (write(fd, &round, sizeof(round)) != sizeof(round))
			_exit(5);
	}
}

static void test_crash_recovery(void)
{
	char uri[512];
	snprintf(uri, sizeof(uri), "emu://t?ns=zns,zone=8M:128M:4096:%s/c.img", test_dir);
	struct hkv *s = must_open(uri, "op=40&format=1");
	REQUIRE(s);
	hkv_close(s);
	uint32_t *model = calloc(NKEYS, sizeof(*model));
	for (int attempt = 0; attempt < 3; attempt++) {
		uint64_t seed = 777 + (uint64_t)attempt;
		int p[2];
		REQUIRE(pipe(p) == 0);
		pid_t pid = fork();
		if (pid == 0) {
			close(p[0]);
			crash_child(uri, p[1], seed, model);
		}
		close(p[1]);
		uint32_t round = 0, r, stop = 30 + 40 * (uint32_t)attempt;
		while (round < stop && read(p[0], &r, sizeof(r)) == sizeof(r))
			round = r;
		kill(pid, SIGKILL);
		int st;
		waitpid(pid, &st, 0);
		while (read(p[0], &r, sizeof(r)) == sizeof(r))
			round = r;
		close(p[0]);
		REQUIRE(WIFSIGNALED(st));
		/* the model after the reported flushes; then what the next round might have done */
		uint32_t *after = malloc(NKEYS * sizeof(*after));
		for (uint32_t k = 1; k <= round; k++)
			for (int n = 0; n < 50; n++) {
				uint64_t x = rng(&seed);
				uint32_t i = (uint32_t)(x % NKEYS);
				model[i] = (x >> 40) % 8 == 0 ? 0 : model[i] + 1 + (uint32_t)(x >> 50) % 3;
			}
		memcpy(after, model, NKEYS * sizeof(*after));
		uint8_t *touched = calloc(NKEYS, 1);
		for (int n = 0; n < 50; n++) {
			uint64_t x = rng(&seed);
			uint32_t i = (uint32_t)(x % NKEYS);
			after[i] = (x >> 40) % 8 == 0 ? 0 : after[i] + 1 + (uint32_t)(x >> 50) % 3;
			touched[i] = 1;
		}
		s = must_open(uri, NULL);
		REQUIRE(s);
		unsigned bad = 0;
		for (uint32_t i = 0; i < NKEYS; i++) {
			if (holds(s, i, model[i]))
				continue;
			if (touched[i] && holds(s, i, after[i]))
				model[i] = after[i];
			else if (touched[i])
				model[i] = UINT32_MAX; /* an intermediate version of the unflushed round */
			else
				bad++;
		}
		CHECK_EQ(bad, 0);
		/* settle the uncertain keys before the next attempt */
		for (uint32_t i = 0; i < NKEYS; i++)
			if (model[i] == UINT32_MAX) {
				CHECK_EQ(put(s, i, 1, false), HKV_OK);
				model[i] = 1;
			}
		hkv_close(s);
		free(after);
		free(touched);
	}
	free(model);
}

__attribute__((constructor)) static void setup(void)
{
	test_dir_make("unvme-hkv");
}

TEST_MAIN(TEST(test_basics), TEST(test_gc_zoned_greedy), TEST(test_gc_conventional_cost_benefit),
	  TEST(test_limits), TEST(test_reopen), TEST(test_crash_recovery))
