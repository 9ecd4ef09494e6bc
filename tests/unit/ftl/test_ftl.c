/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The host FTL (lib/ftl) on emulated zoned namespaces, against a model of what every logical
 * page should hold: random writes and overwrites through garbage collection with both
 * policies, trims, partial pages, clean reopening, and recovery after the process dies
 * (a child killed with SIGKILL, checked by the parent).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/ftl/ftl_internal.h"
#include "tests/unit/test_tmpdir.h"
#include "tests/unit/test_util.h"

#define PG 4096u


static void rng_seed(uint64_t *s, uint64_t v)
{
	*s = v * 0x9e3779b97f4a7c15ull + 1;
}

static uint64_t rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Page content: its logical page and a version, everywhere. */
static void fill(uint8_t *p, uint64_t lpn, uint32_t ver)
{
	for (uint32_t i = 0; i < PG; i += 16) {
		memcpy(p + i, &lpn, 8);
		memcpy(p + i + 8, &ver, 4);
		uint32_t x = (uint32_t)(lpn * 2654435761u) ^ ver ^ i;
		memcpy(p + i + 12, &x, 4);
	}
}

static bool holds(const uint8_t *p, uint64_t lpn, uint32_t ver)
{
	uint8_t want[PG];
	if (ver == 0) {
		for (uint32_t i = 0; i < PG; i++)
			if (p[i])
				return false;
		return true;
	}
	fill(want, lpn, ver);
	return memcmp(p, want, PG) == 0;
}

static struct ftl *open_ftl(const char *dev_uri, const char *opts, char *err, size_t errlen)
{
	struct ftl_opts o;
	ftl_opts_default(&o);
	uint32_t nsid = 0;
	uint64_t zb = 0;
	if (opts && ftl_parse_opts(opts, &o, &nsid, &zb, err, errlen))
		return NULL;
	struct zdev *z;
	if (zdev_open(dev_uri, nsid, zb, &z, err, errlen))
		return NULL;
	struct ftl *f;
	if (ftl_open(z, &o, &f, err, errlen))
		return NULL;
	return f;
}

static struct ftl *must_open(const char *dev_uri, const char *opts)
{
	char err[512] = "";
	struct ftl *f = open_ftl(dev_uri, opts, err, sizeof(err));
	if (!f)
		fprintf(stderr, "  cannot open the FTL on %s (%s): %s\n", dev_uri, opts ? opts : "", err);
	return f;
}

static uint16_t wr(struct ftl *f, uint64_t lpn, uint32_t ver)
{
	uint8_t p[PG];
	fill(p, lpn, ver);
	struct iovec v = { p, PG };
	return ftl_write(f, lpn * PG, &v, 1, PG, false);
}

static bool rd_ok(struct ftl *f, uint64_t lpn, uint32_t ver)
{
	uint8_t p[PG];
	memset(p, 0xee, PG);
	struct iovec v = { p, PG };
	return ftl_read(f, lpn * PG, &v, 1, PG) == 0 && holds(p, lpn, ver);
}

/* Writes n random pages (versions in model), then checks every page. */
static unsigned churn(struct ftl *f, uint32_t *model, uint64_t pages, uint64_t n, uint64_t *seed,
		      bool hot_cold)
{
	unsigned bad = 0;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t r = rng(seed), lpn;
		/* hot/cold: 80% of the writes go to 20% of the pages */
		if (hot_cold && (r & 0xff) < 204)
			lpn = (r >> 8) % (pages / 5);
		else
			lpn = (r >> 8) % pages;
		if (wr(f, lpn, ++model[lpn]) != 0)
			bad++;
	}
	for (uint64_t lpn = 0; lpn < pages; lpn++)
		bad += !rd_ok(f, lpn, model[lpn]);
	return bad;
}

static void test_roundtrip_and_trim(void)
{
	struct ftl *f = must_open("emu://t?ns=zns,zone=256K:16M:4096", NULL);
	REQUIRE(f);
	uint64_t pages = ftl_capacity(f) / PG;
	CHECK(pages > 2000 && pages < 4096);
	CHECK(rd_ok(f, 5, 0)); /* never written: zeroes */
	CHECK_EQ(wr(f, 5, 1), 0);
	CHECK(rd_ok(f, 5, 1)); /* from the buffer */
	for (uint64_t l = 0; l < 200; l++)
		CHECK_EQ(wr(f, l, 7), 0);
	CHECK_EQ(ftl_flush(f), 0);
	CHECK(rd_ok(f, 5, 7));   /* from the media */
	CHECK(rd_ok(f, 199, 7));
	/* a multi-page read in one call: one run of pages */
	uint8_t *big = malloc(64 * PG);
	struct iovec v = { big, 64 * PG };
	CHECK_EQ(ftl_read(f, 10 * PG, &v, 1, 64 * PG), 0);
	bool all = true;
	for (int i = 0; i < 64; i++)
		all &= holds(big + (size_t)i * PG, 10 + i, 7);
	CHECK(all);
	/* scattered iovecs */
	struct iovec iv[3] = { { big, 100 }, { big + 100, PG }, { big + 100 + PG, PG - 100 } };
	CHECK_EQ(ftl_read(f, 20 * PG, iv, 3, 2 * PG), 0);
	CHECK(holds(big, 20, 7) && holds(big + PG, 21, 7));
	/* trims: whole pages unmapped, a partial one zeroed in place */
	CHECK_EQ(ftl_trim(f, 30 * PG, 3 * PG, false), 0);
	CHECK(rd_ok(f, 30, 0) && rd_ok(f, 32, 0) && rd_ok(f, 33, 7));
	CHECK_EQ(ftl_trim(f, 40 * PG + 512, 1024, false), 0);
	uint8_t p[PG];
	struct iovec pv = { p, PG };
	CHECK_EQ(ftl_read(f, 40 * PG, &pv, 1, PG), 0);
	uint8_t want[PG];
	fill(want, 40, 7);
	memset(want + 512, 0, 1024);
	CHECK(memcmp(p, want, PG) == 0);
	/* 512-byte writes inside a page keep the rest */
	uint8_t sec[512];
	memset(sec, 0x5a, sizeof(sec));
	struct iovec sv = { sec, 512 };
	CHECK_EQ(ftl_write(f, 50 * PG + 1024, &sv, 1, 512, false), 0);
	CHECK_EQ(ftl_read(f, 50 * PG, &pv, 1, PG), 0);
	fill(want, 50, 7);
	memset(want + 1024, 0x5a, 512);
	CHECK(memcmp(p, want, PG) == 0);
	free(big);
	ftl_close(f);
}

static void gc_run(const char *opts, bool hot_cold)
{
	struct ftl *f = must_open("emu://t?ns=zns,zone=256K:16M:4096", opts);
	REQUIRE(f);
	uint64_t pages = ftl_capacity(f) / PG, seed;
	rng_seed(&seed, 42);
	uint32_t *model = calloc(pages, sizeof(*model));
	CHECK_EQ(churn(f, model, pages, pages * 5, &seed, hot_cold), 0);
	struct ftl_stats st;
	ftl_get_stats(f, &st);
	CHECK(st.gc_runs > 0);
	CHECK(st.gc_pages > 0);
	CHECK_EQ(st.host_pages, pages * 5);
	/* write amplification: more than the host wrote, within reason for 20% spare */
	double waf = (double)(st.host_pages + st.gc_pages) / (double)st.host_pages;
	CHECK(waf > 1.1 && waf < 6.0);
	/* the map survives a clean reopen (memory namespaces live with the device: reopen in
	 * place is the file test's job) */
	free(model);
	ftl_close(f);
}

static void test_gc_greedy(void)
{
	gc_run("op=20&gc=greedy", false);
}

static void test_gc_cost_benefit(void)
{
	gc_run("op=20&gc=cb", true);
}

static void test_options_and_limits(void)
{
	char err[512];
	struct ftl_opts o;
	uint32_t nsid = 0;
	uint64_t zb = 0;
	ftl_opts_default(&o);
	CHECK(ftl_parse_opts("op=95", &o, &nsid, &zb, err, sizeof(err)) != 0);
	CHECK(strstr(err, "op=95") != NULL);
	CHECK(ftl_parse_opts("gc=lru", &o, &nsid, &zb, err, sizeof(err)) != 0);
	CHECK(ftl_parse_opts("speed=9", &o, &nsid, &zb, err, sizeof(err)) != 0);
	CHECK(strstr(err, "unknown FTL option 'speed'") != NULL);
	CHECK_EQ(ftl_parse_opts("op=7&gc=cb&unit=15&ck=50&nsid=2&zone=1M", &o, &nsid, &zb, err, sizeof(err)), 0);
	CHECK(o.op_pct == 7 && o.gc == FTL_GC_COST_BENEFIT && o.unit_pages == 15 && o.ck_pct == 50);
	CHECK(nsid == 2 && zb == (1u << 20));
	/* too little spare for garbage collection: refused with the numbers */
	CHECK(open_ftl("emu://t?ns=zns,zone=1M:8M:4096", "op=1", err, sizeof(err)) == NULL);
	CHECK(strstr(err, "raise op") != NULL);
	/* a unit larger than one append */
	CHECK(open_ftl("emu://t?ns=zns,zone=256K:16M:4096&zasl=16K", "unit=8", err, sizeof(err)) == NULL);
	CHECK(strstr(err, "unit=8") != NULL);
	/* a conventional namespace: zones emulated */
	CHECK(open_ftl("emu://t?ns=mem:16M:4096", "zone=256K", err, sizeof(err)) == NULL);
	CHECK(strstr(err, "format=1") != NULL);
	struct ftl *f = must_open("emu://t?ns=mem:16M:4096", "zone=256K&format=1");
	REQUIRE(f);
	CHECK_EQ(wr(f, 3, 1), 0);
	CHECK(rd_ok(f, 3, 1));
	ftl_close(f);
}

/* ---- file-backed: reopening and crashes ---- */

static void uri(char *out, size_t len, const char *extra)
{
	snprintf(out, len, "emu://t?ns=zns,zone=256K:16M:4096:%s/z.img%s", test_dir, extra);
}

static void test_reopen_keeps_data(void)
{
	char u[512];
	uri(u, sizeof(u), "");
	struct ftl *f = must_open(u, "op=25");
	REQUIRE(f);
	uint64_t pages = ftl_capacity(f) / PG, seed;
	rng_seed(&seed, 7);
	uint32_t *model = calloc(pages, sizeof(*model));
	CHECK_EQ(churn(f, model, pages, pages * 2, &seed, false), 0);
	CHECK_EQ(ftl_trim(f, 0, 16 * PG, false), 0);
	for (int i = 0; i < 16; i++)
		model[i] = 0;
	ftl_close(f);
	f = must_open(u, NULL); /* the recorded op is used */
	REQUIRE(f);
	CHECK_EQ(ftl_capacity(f) / PG, pages);
	unsigned bad = 0;
	for (uint64_t l = 0; l < pages; l++)
		bad += !rd_ok(f, l, model[l]);
	CHECK_EQ(bad, 0);
	ftl_close(f);
	/* another op is refused; format=1 starts over */
	char err[512];
	CHECK(open_ftl(u, "op=30", err, sizeof(err)) == NULL);
	CHECK(strstr(err, "op=25") != NULL);
	f = must_open(u, "op=30&format=1");
	REQUIRE(f);
	CHECK(rd_ok(f, 100, 0));
	ftl_close(f);
	free(model);
}

/* The child writes the model's pages in rounds, flushing now and then and telling the parent
 * (through a pipe) each time a flush completed; it is killed at a random moment. */
static void crash_child(const char *u, int fd, uint64_t seed0, uint32_t base)
{
	struct ftl *f = must_open(u, "ck=40");
	if (!f)
		_exit(3);
	uint64_t pages = ftl_capacity(f) / PG, seed;
	rng_seed(&seed, seed0);
	for (uint32_t round = 1;; round++) {
		for (int i = 0; i < 37; i++) {
			uint64_t r = rng(&seed);
			uint64_t lpn = r % pages;
			if ((r >> 60) == 0)
				(void)ftl_trim(f, lpn * PG, PG, false);
			else
				(void)wr(f, lpn, base + round);
		}
		if (ftl_flush(f) != 0)
			_exit(4);
		if (write(fd, &round, sizeof(round)) != sizeof(round))
			_exit(5);
	}
}

static void test_crash_recovery(void)
{
	char u[512];
	uri(u, sizeof(u), "");
	struct ftl *f = must_open(u, "op=20&format=1");
	REQUIRE(f);
	uint64_t pages = ftl_capacity(f) / PG;
	ftl_close(f);
	/* what every page holds, across the attempts (each starts from what the last one left) */
	uint32_t *model = calloc(pages, sizeof(*model));
	for (int attempt = 0; attempt < 3; attempt++) {
		uint32_t base = 100000u * (uint32_t)(attempt + 1);
		int p[2];
		REQUIRE(pipe(p) == 0);
		uint64_t seed0 = 1000 + (uint64_t)attempt;
		pid_t pid = fork();
		if (pid == 0) {
			close(p[0]);
			crash_child(u, p[1], seed0, base);
		}
		close(p[1]);
		uint32_t round = 0, r;
		/* let it run through garbage collection, then kill it mid-write */
		uint32_t stop = 40 + (uint32_t)attempt * 45;
		while (round < stop && read(p[0], &r, sizeof(r)) == sizeof(r))
			round = r;
		kill(pid, SIGKILL);
		int status;
		waitpid(pid, &status, 0);
		/* a flush may have completed after the last one the pipe reported */
		while (read(p[0], &r, sizeof(r)) == sizeof(r))
			round = r;
		close(p[0]);
		REQUIRE(WIFSIGNALED(status));
		/* replay the child's writes up to the last reported flush */
		uint64_t seed;
		rng_seed(&seed, seed0);
		for (uint32_t k = 1; k <= round; k++)
			for (int i = 0; i < 37; i++) {
				uint64_t x = rng(&seed);
				model[x % pages] = (x >> 60) == 0 ? 0 : base + k;
			}
		f = must_open(u, NULL);
		REQUIRE(f);
		/* pages of the round after the last flush may hold what that round wrote or
		 * trimmed (bit 0: written, bit 1: trimmed) */
		uint8_t *touched = calloc(pages, 1);
		for (int i = 0; i < 37; i++) {
			uint64_t x = rng(&seed);
			touched[x % pages] |= (x >> 60) == 0 ? 2 : 1;
		}
		unsigned bad = 0;
		for (uint64_t l = 0; l < pages; l++) {
			if (rd_ok(f, l, model[l]))
				continue;
			/* the unflushed write or trim made it: the page holds that now */
			if ((touched[l] & 1) && rd_ok(f, l, base + round + 1))
				model[l] = base + round + 1;
			else if ((touched[l] & 2) && rd_ok(f, l, 0))
				model[l] = 0;
			else
				bad++;
		}
		CHECK_EQ(bad, 0);
		struct ftl_stats st;
		ftl_get_stats(f, &st);
		if (attempt == 0)
			fprintf(stderr, "  after %u rounds: %llu units replayed\n", round,
				(unsigned long long)st.recovered_units);
		ftl_close(f);
		free(touched);
	}
	free(model);
}

static void test_refuses_foreign_data(void)
{
	char u[512];
	snprintf(u, sizeof(u), "emu://t?ns=zns,zone=256K:16M:4096:%s/other.img", test_dir);
	/* a zone written by someone else */
	char err[512];
	struct zdev *z;
	REQUIRE(zdev_open(u, 0, 0, &z, err, sizeof(err)) == 0);
	uint8_t *page = unvme_dma_zalloc(PG, PG);
	uint64_t at;
	CHECK_EQ(zdev_append(z, 9, page, 1, &at), 0);
	unvme_dma_free(page);
	zdev_close(z);
	CHECK(open_ftl(u, NULL, err, sizeof(err)) == NULL);
	CHECK(strstr(err, "format=1") != NULL);
	struct ftl *f = must_open(u, "format=1");
	CHECK(f != NULL);
	ftl_close(f);
}

__attribute__((constructor)) static void setup(void)
{
	test_dir_make("unvme-ftl");
}

TEST_MAIN(TEST(test_roundtrip_and_trim), TEST(test_gc_greedy), TEST(test_gc_cost_benefit),
	  TEST(test_options_and_limits), TEST(test_reopen_keeps_data), TEST(test_crash_recovery),
	  TEST(test_refuses_foreign_data))
