/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Zoned namespaces over time and threads: a file-backed namespace keeps its zones (states,
 * write pointers, data) across a restart, refuses a different geometry, and Zone Append from
 * several threads at once gives every caller its own blocks.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"
#include "zns_test.h"

#define ZSZE 16u
#define BS   4096u

static const struct zns_geo geo = { .nzones = 6, .zone_kib = 64, .cap_kib = 64, .lba = BS };

static void test_restart_keeps_zones(void)
{
	char dir[256];
	REQUIRE(ns_test_mkdtemp(dir, sizeof(dir)) == 0);
	struct emu_ns *ns = zt_open(&geo, dir);
	REQUIRE(ns);
	uint8_t *w = ns_test_alloc(ZSZE * BS), *r = ns_test_alloc(ZSZE * BS);
	ns_test_pattern(w, ZSZE * BS, 11);
	CHECK_EQ(zt_write(ns, 0, 5, w), 0);                         /* zone 0: opened, wp 5 */
	CHECK_EQ(zt_write(ns, ZSZE, ZSZE, w), 0);                   /* zone 1: full */
	CHECK_EQ(zt_append(ns, 2 * ZSZE, 2, w, NULL), 0);
	CHECK_EQ(zt_send(ns, 2 * ZSZE, NVME_ZSA_CLOSE, false), 0);  /* zone 2: closed */
	CHECK_EQ(zt_send(ns, 3 * ZSZE, NVME_ZSA_OPEN, false), 0);   /* zone 3: opened, empty */
	CHECK_EQ(emu_ns_zone_read_only(ns, 4 * ZSZE), 0);           /* zone 4: read only */
	/* no Flush, no shutdown: what a killed process leaves in the page cache */
	emu_ns_destroy(ns);

	ns = zt_open(&geo, dir);
	REQUIRE(ns);
	/* a restart is a power-on: opened zones come back closed (or empty, never written) */
	CHECK_EQ(zt_state(ns, 0), NVME_ZS_CLOSED);
	CHECK_EQ(zt_zone(ns, 0).wp, 5);
	CHECK_EQ(zt_state(ns, ZSZE), NVME_ZS_FULL);
	CHECK_EQ(zt_state(ns, 2 * ZSZE), NVME_ZS_CLOSED);
	CHECK_EQ(zt_zone(ns, 2 * ZSZE).wp, 2 * ZSZE + 2);
	CHECK_EQ(zt_state(ns, 3 * ZSZE), NVME_ZS_EMPTY);
	CHECK_EQ(zt_state(ns, 4 * ZSZE), NVME_ZS_READ_ONLY);
	CHECK_EQ(zt_read(ns, 0, 5, r), 0);
	CHECK(memcmp(w, r, 5 * BS) == 0);
	CHECK_EQ(zt_read(ns, ZSZE, ZSZE, r), 0);
	CHECK(memcmp(w, r, ZSZE * BS) == 0);
	/* writing goes on at the write pointer */
	CHECK(ZST_IS(zt_write(ns, 4, 1, w), NVME_SC_ZONE_INVALID_WRITE));
	CHECK_EQ(zt_write(ns, 5, 1, w + 5 * BS), 0);
	/* reset then restart: the zone is empty and reads as zeroes */
	CHECK_EQ(zt_send(ns, ZSZE, NVME_ZSA_RESET, false), 0);
	emu_ns_sync(ns);
	emu_ns_destroy(ns);

	ns = zt_open(&geo, dir);
	REQUIRE(ns);
	CHECK_EQ(zt_state(ns, ZSZE), NVME_ZS_EMPTY);
	CHECK_EQ(zt_read(ns, ZSZE, ZSZE, r), 0);
	CHECK(ns_test_all_zero(r, ZSZE * BS));
	CHECK_EQ(zt_zone(ns, 0).wp, 6);
	/* the file is locked while the namespace is open */
	CHECK(zt_open(&geo, dir) == NULL);
	emu_ns_destroy(ns);

	/* a different geometry is refused with a message, the zones are untouched */
	struct zns_geo other = geo;
	other.zone_kib = 32;
	other.cap_kib = 32;
	other.nzones = 12;
	CHECK(zt_open(&other, dir) == NULL);
	other = geo;
	other.cap_kib = 32;
	CHECK(zt_open(&other, dir) == NULL);
	ns = zt_open(&geo, dir);
	REQUIRE(ns);
	CHECK_EQ(zt_zone(ns, 0).wp, 6);
	emu_ns_destroy(ns);

	/* a corrupt zone table is refused */
	char zpath[300];
	snprintf(zpath, sizeof(zpath), "%s/zns.img.zones", dir);
	FILE *f = fopen(zpath, "r+b");
	REQUIRE(f);
	fseek(f, 64 + 8, SEEK_SET); /* zone 0's state byte */
	fputc(0x7, f);
	fclose(f);
	CHECK(zt_open(&geo, dir) == NULL);
	free(w);
	free(r);
	ns_test_rmtree(dir);
}

static void test_fresh_table_clears_old_data(void)
{
	char dir[256];
	REQUIRE(ns_test_mkdtemp(dir, sizeof(dir)) == 0);
	char path[300];
	snprintf(path, sizeof(path), "%s/zns.img", dir);
	FILE *f = fopen(path, "wb");
	REQUIRE(f);
	uint8_t junk[4096];
	memset(junk, 0x5a, sizeof(junk));
	for (int i = 0; i < 6 * 16; i++)
		fwrite(junk, 1, sizeof(junk), f);
	fclose(f);
	struct emu_ns *ns = zt_open(&geo, dir);
	REQUIRE(ns);
	uint8_t *r = ns_test_alloc(BS);
	CHECK_EQ(zt_read(ns, 3, 1, r), 0);
	CHECK(ns_test_all_zero(r, BS));
	free(r);
	emu_ns_destroy(ns);
	ns_test_rmtree(dir);
}

#define THREADS 4
#define PER_THREAD 40

struct appender {
	struct emu_ns *ns;
	uint32_t id;
	uint64_t lba[PER_THREAD];
	uint16_t st[PER_THREAD];
};

static void *append_loop(void *arg)
{
	struct appender *a = arg;
	uint8_t *buf = ns_test_alloc(BS);
	for (uint32_t i = 0; i < PER_THREAD; i++) {
		memset(buf, 0, BS);
		memcpy(buf, &a->id, sizeof(a->id));
		memcpy(buf + 4, &i, sizeof(i));
		a->st[i] = zt_append(a->ns, 0, 1, buf, &a->lba[i]);
	}
	free(buf);
	return NULL;
}

static void test_parallel_append(void)
{
	/* one zone big enough for every append */
	struct zns_geo g = { .nzones = 2, .zone_kib = 1024, .lba = BS };
	struct emu_ns *ns = zt_open(&g, NULL);
	REQUIRE(ns);
	struct appender a[THREADS];
	pthread_t t[THREADS];
	for (uint32_t i = 0; i < THREADS; i++) {
		a[i] = (struct appender){ .ns = ns, .id = i };
		pthread_create(&t[i], NULL, append_loop, &a[i]);
	}
	for (uint32_t i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	uint8_t seen[THREADS * PER_THREAD] = { 0 };
	uint8_t *r = ns_test_alloc(BS);
	for (uint32_t i = 0; i < THREADS; i++) {
		for (uint32_t k = 0; k < PER_THREAD; k++) {
			CHECK_EQ(a[i].st[k], 0);
			uint64_t lba = a[i].lba[k];
			REQUIRE(lba < THREADS * PER_THREAD);
			CHECK_EQ(seen[lba], 0); /* no block handed out twice */
			seen[lba] = 1;
			CHECK_EQ(zt_read(ns, lba, 1, r), 0);
			uint32_t id, n;
			memcpy(&id, r, 4);
			memcpy(&n, r + 4, 4);
			CHECK_EQ(id, i);
			CHECK_EQ(n, k);
		}
	}
	CHECK_EQ(zt_zone(ns, 0).wp, THREADS * PER_THREAD);
	free(r);
	emu_ns_destroy(ns);
}

struct resetter {
	struct emu_ns *ns;
	atomic_int stop;
};

static void *reset_loop(void *arg)
{
	struct resetter *rs = arg;
	while (!atomic_load(&rs->stop)) {
		(void)zt_send(rs->ns, ZSZE, NVME_ZSA_RESET, false);
		(void)zt_send(rs->ns, ZSZE, NVME_ZSA_FINISH, false);
	}
	return NULL;
}

/* Writes racing resets and finishes of another zone, and of the same zone: every command
 * ends with a zone status or success, and the zone table stays consistent. */
static void test_mgmt_races(void)
{
	struct emu_ns *ns = zt_open(&geo, NULL);
	REQUIRE(ns);
	struct resetter rs = { .ns = ns };
	pthread_t t;
	pthread_create(&t, NULL, reset_loop, &rs);
	uint8_t *w = ns_test_alloc(BS);
	ns_test_pattern(w, BS, 3);
	unsigned ok = 0;
	for (int i = 0; i < 2000; i++) {
		uint16_t st = zt_append(ns, ZSZE, 1, w, NULL);
		CHECK(st == 0 || ZST_IS(st, NVME_SC_ZONE_FULL) || ZST_IS(st, NVME_SC_ZONE_BOUNDARY_ERROR));
		ok += st == 0;
		st = zt_append(ns, 0, 1, w, NULL);
		if (ZST_IS(st, NVME_SC_ZONE_FULL))
			CHECK_EQ(zt_send(ns, 0, NVME_ZSA_RESET, false), 0);
		else
			CHECK_EQ(st, 0);
	}
	atomic_store(&rs.stop, 1);
	pthread_join(t, NULL);
	uint8_t s = zt_state(ns, ZSZE);
	CHECK(s == NVME_ZS_EMPTY || s == NVME_ZS_FULL || s == NVME_ZS_IMP_OPEN);
	(void)ok;
	free(w);
	emu_ns_destroy(ns);
}

TEST_MAIN(TEST(test_restart_keeps_zones), TEST(test_fresh_table_clears_old_data),
	  TEST(test_parallel_append), TEST(test_mgmt_races))
