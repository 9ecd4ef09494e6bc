/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The NVM I/O command set against the namespaces that keep data (memory and file): every
 * test runs once per backend, so both give the host the same answers.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/emu/emu.h"
#include "ns_test_cmd.h"
#include "test_util.h"
#include "xfer_double.h"

#define MiB (1024u * 1024u)

/* Runs fn for the memory and the file backend and says which one a failure came from. */
#define BOTH_KINDS(fn)                                                                   \
	static void test_##fn(void)                                                      \
	{                                                                                \
		static const enum emu_ns_kind kinds[] = { EMU_NS_MEM, EMU_NS_FILE };     \
		for (size_t k = 0; k < 2; k++) {                                         \
			int before = test_failures_in_case;                              \
			xfer_double_set_seg_size(0);                                     \
			fn(kinds[k]);                                                    \
			if (test_failures_in_case != before)                             \
				fprintf(stderr, "  ^ with the %s backend\n",             \
					ns_kind_name(kinds[k]));                         \
		}                                                                        \
		xfer_double_set_seg_size(0);                                             \
	}

static bool is_lba_out_of_range(uint16_t st)
{
	return ST_SCT(st) == NVME_SCT_GENERIC && ST_SC(st) == NVME_SC_LBA_OUT_OF_RANGE &&
	       ST_DNR(st);
}

static bool is_invalid_field(uint16_t st)
{
	return ST_SCT(st) == NVME_SCT_GENERIC && ST_SC(st) == NVME_SC_INVALID_FIELD && ST_DNR(st);
}

static void roundtrip(enum emu_ns_kind kind)
{
	struct ns_fixture f;
	REQUIRE(ns_fixture_open(&f, kind, 8 * MiB, 512) == 0);
	uint8_t *w = ns_test_alloc(2 * MiB), *r = ns_test_alloc(2 * MiB);

	/* a few blocks, one segment */
	ns_test_pattern(w, 8 * 512, 1);
	CHECK_EQ(ns_write(f.ns, 10, 8, w), 0);
	CHECK_EQ(ns_read(f.ns, 10, 8, r), 0);
	CHECK(memcmp(w, r, 8 * 512) == 0);

	/* the largest transfer, at an LBA that is not page aligned, in 4 KiB segments */
	xfer_double_set_seg_size(4096);
	ns_test_pattern(w, 2 * MiB, 2);
	CHECK_EQ(ns_write(f.ns, 101, 4096, w), 0);
	memset(r, 0xee, 2 * MiB);
	CHECK_EQ(ns_read(f.ns, 101, 4096, r), 0);
	CHECK(memcmp(w, r, 2 * MiB) == 0);

	/* odd segment sizes: segment boundaries fall inside blocks */
	xfer_double_set_seg_size(700);
	ns_test_pattern(w, 64 * 1024, 3);
	CHECK_EQ(ns_write(f.ns, 3, 128, w), 0);
	xfer_double_set_seg_size(0);
	memset(r, 0xee, 64 * 1024);
	CHECK_EQ(ns_read(f.ns, 3, 128, r), 0);
	CHECK(memcmp(w, r, 64 * 1024) == 0);
	xfer_double_set_seg_size(1000);
	memset(r, 0xee, 64 * 1024);
	CHECK_EQ(ns_read(f.ns, 3, 128, r), 0);
	CHECK(memcmp(w, r, 64 * 1024) == 0);
	xfer_double_set_seg_size(0);

	/* the last block of the namespace */
	uint64_t last = emu_ns_nlbas(f.ns) - 1;
	ns_test_pattern(w, 512, 4);
	CHECK_EQ(ns_write(f.ns, last, 1, w), 0);
	CHECK_EQ(ns_read(f.ns, last, 1, r), 0);
	CHECK(memcmp(w, r, 512) == 0);

	/* never written blocks read as zeroes */
	memset(r, 0xaa, 4096);
	CHECK_EQ(ns_read(f.ns, 9000, 8, r), 0);
	CHECK(ns_test_all_zero(r, 4096));

	free(w);
	free(r);
	ns_fixture_close(&f);
}
BOTH_KINDS(roundtrip)

static void roundtrip_4k(enum emu_ns_kind kind)
{
	struct ns_fixture f;
	REQUIRE(ns_fixture_open(&f, kind, 4 * MiB, 4096) == 0);
	CHECK_EQ(emu_ns_lba_size(f.ns), 4096);
	CHECK_EQ(emu_ns_nlbas(f.ns), 1024);
	uint8_t *w = ns_test_alloc(64 * 1024), *r = ns_test_alloc(64 * 1024);
	ns_test_pattern(w, 64 * 1024, 5);
	CHECK_EQ(ns_write(f.ns, 1000, 16, w), 0);
	CHECK_EQ(ns_read(f.ns, 1000, 16, r), 0);
	CHECK(memcmp(w, r, 64 * 1024) == 0);
	/* block 1000 is byte 4096000: a 512-byte view of the same bytes would differ */
	CHECK_EQ(ns_read(f.ns, 1001, 1, r), 0);
	CHECK(memcmp(w + 4096, r, 4096) == 0);
	free(w);
	free(r);
	ns_fixture_close(&f);
}
BOTH_KINDS(roundtrip_4k)

/* 32 blocks of 512 B = 4 pages; checks that [lo, hi] reads zero and the rest is intact. */
static void check_zeroed(struct emu_ns *ns, const uint8_t *orig, unsigned lo, unsigned hi)
{
	uint8_t *r = ns_test_alloc(32 * 512);
	CHECK_EQ(ns_read(ns, 0, 32, r), 0);
	for (unsigned b = 0; b < 32; b++) {
		if (b >= lo && b <= hi) {
			if (!ns_test_all_zero(r + b * 512, 512)) {
				fprintf(stderr, "  block %u should read zeroes\n", b);
				CHECK(0);
			}
		} else if (memcmp(r + b * 512, orig + b * 512, 512) != 0) {
			fprintf(stderr, "  block %u should be intact\n", b);
			CHECK(0);
		}
	}
	free(r);
}

static void write_zeroes(enum emu_ns_kind kind)
{
	struct ns_fixture f;
	REQUIRE(ns_fixture_open(&f, kind, 1 * MiB, 512) == 0);
	uint8_t *w = ns_test_alloc(32 * 512);
	struct emu_io_stats st = { 0 };
	struct nvme_sqe c;

	/* blocks 5..26: partial page 0, whole pages 1 and 2, partial page 3; no DEAC */
	ns_test_pattern(w, 32 * 512, 6);
	CHECK_EQ(ns_write(f.ns, 0, 32, w), 0);
	c = ns_cmd(NVME_CMD_WRITE_ZEROES, 5, 22, NULL);
	CHECK_EQ(ns_exec(f.ns, &c, &st, NULL), 0);
	check_zeroed(f.ns, w, 5, 26);

	/* exactly pages 1 and 2, with DEAC */
	CHECK_EQ(ns_write(f.ns, 0, 32, w), 0);
	c = ns_cmd(NVME_CMD_WRITE_ZEROES, 8, 16, NULL);
	c.cdw12 |= NVME_WZ_DEAC;
	CHECK_EQ(ns_exec(f.ns, &c, &st, NULL), 0);
	check_zeroed(f.ns, w, 8, 23);

	/* inside one page, with FUA */
	CHECK_EQ(ns_write(f.ns, 0, 32, w), 0);
	c = ns_cmd(NVME_CMD_WRITE_ZEROES, 1, 3, NULL);
	c.cdw12 |= NVME_RW_FUA;
	CHECK_EQ(ns_exec(f.ns, &c, &st, NULL), 0);
	check_zeroed(f.ns, w, 1, 3);

	/* the whole namespace (Write Zeroes is not limited by MDTS) */
	c = ns_cmd(NVME_CMD_WRITE_ZEROES, 0, (uint32_t)emu_ns_nlbas(f.ns), NULL);
	c.cdw12 |= NVME_WZ_DEAC;
	CHECK_EQ(ns_exec(f.ns, &c, &st, NULL), 0);
	check_zeroed(f.ns, w, 0, 31);

	/* Write Zeroes moves no data: not counted as a write */
	CHECK_EQ(st.write_cmds, 0);
	CHECK_EQ(st.bytes_written, 0);
	free(w);
	ns_fixture_close(&f);
}
BOTH_KINDS(write_zeroes)

static void dsm(enum emu_ns_kind kind)
{
	struct ns_fixture f;
	REQUIRE(ns_fixture_open(&f, kind, 1 * MiB, 512) == 0);
	uint8_t *w = ns_test_alloc(32 * 512);
	struct nvme_dsm_range *rg = ns_test_alloc(NVME_DSM_MAX_RANGES * sizeof(*rg));
	uint64_t nlbas = emu_ns_nlbas(f.ns), err_lba;
	struct nvme_sqe c;

	ns_test_pattern(w, 32 * 512, 7);
	CHECK_EQ(ns_write(f.ns, 0, 32, w), 0);

	/* hints only (no AD): data stays */
	memset(rg, 0, 4 * sizeof(*rg));
	rg[0].slba = 2, rg[0].nlb = 3;
	c = ns_cmd_dsm(1, NVME_DSM_ATTR_IDR | NVME_DSM_ATTR_IDW, rg);
	CHECK_EQ(ns_exec(f.ns, &c, NULL, NULL), 0);
	check_zeroed(f.ns, w, 99, 99);

	/* a bad range fails the whole command before anything is deallocated */
	rg[1].slba = nlbas - 1, rg[1].nlb = 2;
	c = ns_cmd_dsm(2, NVME_DSM_ATTR_AD, rg);
	uint16_t st = ns_exec(f.ns, &c, NULL, &err_lba);
	CHECK(is_lba_out_of_range(st));
	CHECK_EQ(err_lba, nlbas - 1);
	check_zeroed(f.ns, w, 99, 99);
	/* ... also when slba + nlb wraps around */
	rg[1].slba = UINT64_MAX - 1, rg[1].nlb = 4;
	st = ns_exec(f.ns, &c, NULL, &err_lba);
	CHECK(is_lba_out_of_range(st));
	CHECK_EQ(err_lba, UINT64_MAX - 1);
	check_zeroed(f.ns, w, 99, 99);

	/* several ranges deallocated, an empty range ignored */
	rg[0].slba = 2, rg[0].nlb = 3;     /* 2..4 */
	rg[1].slba = 20, rg[1].nlb = 0;    /* nothing, even where it points */
	rg[2].slba = 10, rg[2].nlb = 2;    /* 10..11 */
	rg[3].slba = 30, rg[3].nlb = 2;    /* 30..31 */
	c = ns_cmd_dsm(4, NVME_DSM_ATTR_AD, rg);
	CHECK_EQ(ns_exec(f.ns, &c, NULL, NULL), 0);
	uint8_t *r = ns_test_alloc(32 * 512);
	CHECK_EQ(ns_read(f.ns, 0, 32, r), 0);
	for (unsigned b = 0; b < 32; b++) {
		bool gone = (b >= 2 && b <= 4) || b == 10 || b == 11 || b >= 30;
		CHECK(gone ? ns_test_all_zero(r + b * 512, 512)
			   : memcmp(r + b * 512, w + b * 512, 512) == 0);
	}

	/* the largest list: 256 ranges, every other block of 512 */
	CHECK_EQ(ns_write(f.ns, 0, 32, w), 0);
	uint8_t *big = ns_test_alloc(512 * 512);
	ns_test_pattern(big, 512 * 512, 8);
	CHECK_EQ(ns_write(f.ns, 1024, 512, big), 0);
	for (unsigned i = 0; i < NVME_DSM_MAX_RANGES; i++) {
		rg[i].cattr = 0;
		rg[i].slba = 1024 + 2 * i;
		rg[i].nlb = 1;
	}
	c = ns_cmd_dsm(NVME_DSM_MAX_RANGES, NVME_DSM_ATTR_AD, rg);
	CHECK_EQ(ns_exec(f.ns, &c, NULL, NULL), 0);
	uint8_t *rb = ns_test_alloc(512 * 512);
	CHECK_EQ(ns_read(f.ns, 1024, 512, rb), 0);
	for (unsigned b = 0; b < 512; b++)
		CHECK(b % 2 == 0 ? ns_test_all_zero(rb + b * 512, 512)
				 : memcmp(rb + b * 512, big + b * 512, 512) == 0);
	check_zeroed(f.ns, w, 99, 99); /* blocks 0..31 untouched by the big list */

	/* the range list's host memory cannot be reached: the map's status, unchanged */
	c = ns_cmd_dsm(1, NVME_DSM_ATTR_AD, NULL);
	CHECK_EQ(ns_exec(f.ns, &c, NULL, NULL),
		 NVME_CQE_STATUS(NVME_SCT_GENERIC, NVME_SC_DATA_TRANSFER_ERROR) | 0x8000u);

	free(rb);
	free(big);
	free(r);
	free(rg);
	free(w);
	ns_fixture_close(&f);
}
BOTH_KINDS(dsm)

static void lba_range(enum emu_ns_kind kind)
{
	struct ns_fixture f;
	REQUIRE(ns_fixture_open(&f, kind, 1 * MiB, 512) == 0);
	uint64_t n = emu_ns_nlbas(f.ns);
	CHECK_EQ(n, 2048);
	uint8_t *buf = ns_test_alloc(64 * 1024);
	struct emu_io_stats st = { 0 };
	uint64_t err_lba;
	static const uint8_t opcodes[] = { NVME_CMD_READ, NVME_CMD_WRITE, NVME_CMD_COMPARE,
					   NVME_CMD_WRITE_ZEROES, NVME_CMD_VERIFY };
	const struct { uint64_t slba; uint32_t nblocks; bool ok; } cases[] = {
		{ 0, 1, true },
		{ n - 1, 1, true },             /* the last block */
		{ n - 16, 16, true },           /* ending exactly at the end */
		{ n - 1, 2, false },            /* one block past the end */
		{ n, 1, false },                /* starting at the end */
		{ n - 15, 16, false },
		{ UINT64_MAX, 1, false },
		{ UINT64_MAX - 2, 16, false },  /* slba + nlb wraps to a small number */
		{ (uint64_t)1 << 63, 65536, false },
	};

	memset(buf, 0, 64 * 1024); /* so that Compare of zeroed blocks succeeds */
	for (size_t o = 0; o < sizeof(opcodes); o++) {
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			struct nvme_sqe c = ns_cmd(opcodes[o], cases[i].slba, cases[i].nblocks, buf);
			uint16_t s = ns_exec(f.ns, &c, &st, &err_lba);
			if (cases[i].ok) {
				CHECK_EQ(s, 0);
				CHECK_EQ(err_lba, UINT64_MAX);
			} else {
				CHECK(is_lba_out_of_range(s));
				CHECK_EQ(err_lba, cases[i].slba);
			}
			if ((s != 0) != !cases[i].ok)
				fprintf(stderr, "  opcode %02xh slba %llu nlb %u: status %04x\n",
					opcodes[o], (unsigned long long)cases[i].slba,
					cases[i].nblocks, s);
		}
	}
	/* failed commands are not counted: 3 good cases each for Read, Compare and Write */
	CHECK_EQ(st.read_cmds, 6);
	CHECK_EQ(st.write_cmds, 3);
	CHECK_EQ(st.bytes_written, (1 + 1 + 16) * 512);
	free(buf);
	ns_fixture_close(&f);
}
BOTH_KINDS(lba_range)

static void mdts(enum emu_ns_kind kind)
{
	uint8_t *buf = ns_test_alloc(2 * MiB + 4096);
	memset(buf, 0, 2 * MiB + 4096);
	const uint32_t lbas[] = { 512, 4096 };
	for (size_t i = 0; i < 2; i++) {
		struct ns_fixture f;
		REQUIRE(ns_fixture_open(&f, kind, 8 * MiB, lbas[i]) == 0);
		uint32_t max = EMU_MDTS_BYTES / lbas[i];
		xfer_double_set_seg_size(4096);
		for (uint8_t opc = NVME_CMD_WRITE; opc <= NVME_CMD_COMPARE; opc++) {
			if (opc == NVME_CMD_WRITE_UNCOR || opc == 0x03)
				continue;
			struct nvme_sqe c = ns_cmd(opc, 0, max, buf);
			CHECK_EQ(ns_exec(f.ns, &c, NULL, NULL), 0);
			c = ns_cmd(opc, 0, max + 1, buf);
			uint16_t st = ns_exec(f.ns, &c, NULL, NULL);
			CHECK(is_invalid_field(st));
		}
		/* commands without data are not bound by MDTS */
		struct nvme_sqe c = ns_cmd(NVME_CMD_VERIFY, 0, max + 1, NULL);
		CHECK_EQ(ns_exec(f.ns, &c, NULL, NULL), 0);
		c = ns_cmd(NVME_CMD_WRITE_ZEROES, 0, max + 1, NULL);
		CHECK_EQ(ns_exec(f.ns, &c, NULL, NULL), 0);
		xfer_double_set_seg_size(0);
		ns_fixture_close(&f);
	}
	free(buf);
}
BOTH_KINDS(mdts)

static void compare(enum emu_ns_kind kind)
{
	struct ns_fixture f;
	REQUIRE(ns_fixture_open(&f, kind, 1 * MiB, 512) == 0);
	uint8_t *w = ns_test_alloc(40 * 1024);
	struct emu_io_stats st = { 0 };
	uint64_t err_lba;

	ns_test_pattern(w, 40 * 1024, 9);
	CHECK_EQ(ns_write(f.ns, 7, 80, w), 0);
	struct nvme_sqe c = ns_cmd(NVME_CMD_COMPARE, 7, 80, w);
	CHECK_EQ(ns_exec(f.ns, &c, &st, &err_lba), 0);
	xfer_double_set_seg_size(700);
	CHECK_EQ(ns_exec(f.ns, &c, &st, &err_lba), 0);

	/* one byte differs, the very last one */
	w[40 * 1024 - 1] ^= 0x80;
	uint16_t s = ns_exec(f.ns, &c, &st, &err_lba);
	CHECK_EQ(ST_SCT(s), NVME_SCT_MEDIA);
	CHECK_EQ(ST_SC(s), NVME_SC_COMPARE_FAILURE);
	CHECK_EQ(err_lba, 7);
	xfer_double_set_seg_size(0);
	s = ns_exec(f.ns, &c, &st, &err_lba);
	CHECK_EQ(ST_SC(s), NVME_SC_COMPARE_FAILURE);
	/* ... the first one */
	w[40 * 1024 - 1] ^= 0x80;
	w[0] ^= 1;
	s = ns_exec(f.ns, &c, &st, &err_lba);
	CHECK_EQ(ST_SCT(s), NVME_SCT_MEDIA);
	CHECK_EQ(ST_SC(s), NVME_SC_COMPARE_FAILURE);
	w[0] ^= 1;
	/* compare of a part */
	c = ns_cmd(NVME_CMD_COMPARE, 17, 3, w + 10 * 512);
	CHECK_EQ(ns_exec(f.ns, &c, &st, &err_lba), 0);
	/* a Compare reads the blocks: every one above is a read command, failed or not */
	CHECK_EQ(st.read_cmds, 6);
	CHECK_EQ(st.bytes_read, 5 * 40 * 1024 + 3 * 512);
	CHECK_EQ(st.write_cmds, 0);
	free(w);
	ns_fixture_close(&f);
}
BOTH_KINDS(compare)

static void flush_verify(enum emu_ns_kind kind)
{
	struct ns_fixture f;
	REQUIRE(ns_fixture_open(&f, kind, 1 * MiB, 512) == 0);
	struct nvme_sqe c;
	memset(&c, 0, sizeof(c));
	c.opc = NVME_CMD_FLUSH;
	c.nsid = 1;
	CHECK_EQ(ns_exec(f.ns, &c, NULL, NULL), 0);
	CHECK_EQ(emu_ns_sync(f.ns), 0);
	c = ns_cmd(NVME_CMD_VERIFY, 0, 65536, NULL);
	uint64_t err_lba;
	CHECK(is_lba_out_of_range(ns_exec(f.ns, &c, NULL, &err_lba)));
	c = ns_cmd(NVME_CMD_VERIFY, 0, 2048, NULL);
	CHECK_EQ(ns_exec(f.ns, &c, NULL, &err_lba), 0);
	ns_fixture_close(&f);
}
BOTH_KINDS(flush_verify)

static void stats(enum emu_ns_kind kind)
{
	struct ns_fixture f;
	REQUIRE(ns_fixture_open(&f, kind, 1 * MiB, 4096) == 0);
	uint8_t *buf = ns_test_alloc(64 * 1024);
	struct emu_io_stats st = { 0 };
	struct nvme_sqe c;

	c = ns_cmd(NVME_CMD_WRITE, 0, 8, buf);
	CHECK_EQ(ns_exec(f.ns, &c, &st, NULL), 0);
	c = ns_cmd(NVME_CMD_WRITE, 8, 1, buf);
	CHECK_EQ(ns_exec(f.ns, &c, &st, NULL), 0);
	for (int i = 0; i < 3; i++) {
		c = ns_cmd(NVME_CMD_READ, 0, 16, buf);
		CHECK_EQ(ns_exec(f.ns, &c, &st, NULL), 0);
	}
	c = ns_cmd(NVME_CMD_VERIFY, 0, 16, NULL);
	CHECK_EQ(ns_exec(f.ns, &c, &st, NULL), 0);
	c.opc = NVME_CMD_FLUSH;
	CHECK_EQ(ns_exec(f.ns, &c, &st, NULL), 0);
	/* failures are not counted */
	c = ns_cmd(NVME_CMD_READ, 0, 16, NULL);
	CHECK(ns_exec(f.ns, &c, &st, NULL) != 0);
	c = ns_cmd(NVME_CMD_WRITE, 1000, 16, buf);
	CHECK(ns_exec(f.ns, &c, &st, NULL) != 0);

	CHECK_EQ(st.write_cmds, 2);
	CHECK_EQ(st.bytes_written, 9 * 4096);
	CHECK_EQ(st.read_cmds, 3);
	CHECK_EQ(st.bytes_read, 3 * 16 * 4096);
	free(buf);
	ns_fixture_close(&f);
}
BOTH_KINDS(stats)

/* What emu_xfer_map answers reaches the host unchanged, and nothing is read or written. */
static void xfer_errors(enum emu_ns_kind kind)
{
	struct ns_fixture f;
	REQUIRE(ns_fixture_open(&f, kind, 1 * MiB, 512) == 0);
	uint8_t *buf = ns_test_alloc(4096);
	ns_test_pattern(buf, 4096, 10);
	CHECK_EQ(ns_write(f.ns, 0, 8, buf), 0);
	struct emu_io_stats st = { 0 };
	const uint16_t dte = NVME_CQE_STATUS(NVME_SCT_GENERIC, NVME_SC_DATA_TRANSFER_ERROR) | 0x8000u;
	const uint16_t inval = NVME_CQE_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD) | 0x8000u;

	for (uint8_t opc = NVME_CMD_WRITE; opc <= NVME_CMD_COMPARE; opc++) {
		if (opc == NVME_CMD_WRITE_UNCOR || opc == 0x03)
			continue;
		struct nvme_sqe c = ns_cmd(opc, 0, 8, NULL);
		CHECK_EQ(ns_exec(f.ns, &c, &st, NULL), dte);
		c = ns_cmd(opc, 0, 8, buf);
		c.flags = 1u << 6; /* PSDT: SGL */
		CHECK_EQ(ns_exec(f.ns, &c, &st, NULL), inval);
	}
	CHECK_EQ(st.read_cmds + st.write_cmds, 0);
	uint8_t *r = ns_test_alloc(4096);
	CHECK_EQ(ns_read(f.ns, 0, 8, r), 0);
	CHECK(memcmp(r, buf, 4096) == 0);
	free(r);
	free(buf);
	ns_fixture_close(&f);
}
BOTH_KINDS(xfer_errors)

/* With the write cache off (or FUA) writes take the durable path; the data is the same. */
static void write_cache_and_fua(enum emu_ns_kind kind)
{
	struct ns_fixture f;
	REQUIRE(ns_fixture_open(&f, kind, 1 * MiB, 512) == 0);
	uint8_t *w = ns_test_alloc(8192), *r = ns_test_alloc(8192);
	ns_test_pattern(w, 8192, 11);
	struct nvme_sqe c = ns_cmd(NVME_CMD_WRITE, 100, 16, w);
	c.cdw12 |= NVME_RW_FUA;
	CHECK_EQ(ns_exec(f.ns, &c, NULL, NULL), 0);
	CHECK_EQ(ns_read(f.ns, 100, 16, r), 0);
	CHECK(memcmp(w, r, 8192) == 0);

	emu_ns_set_write_cache(f.ns, false);
	ns_test_pattern(w, 8192, 12);
	xfer_double_set_seg_size(4096);
	CHECK_EQ(ns_write(f.ns, 200, 16, w), 0);
	c = ns_cmd(NVME_CMD_WRITE_ZEROES, 200, 2, NULL);
	CHECK_EQ(ns_exec(f.ns, &c, NULL, NULL), 0);
	memset(w, 0, 1024);
	CHECK_EQ(ns_read(f.ns, 200, 16, r), 0);
	CHECK(memcmp(w, r, 8192) == 0);
	emu_ns_set_write_cache(f.ns, true);
	free(w);
	free(r);
	ns_fixture_close(&f);
}
BOTH_KINDS(write_cache_and_fua)

static void test_unsupported_opcodes(void)
{
	struct ns_fixture f;
	REQUIRE(ns_fixture_open(&f, EMU_NS_MEM, 1 * MiB, 512) == 0);
	uint8_t *buf = ns_test_alloc(4096);
	const uint8_t opcodes[] = { NVME_CMD_WRITE_UNCOR, NVME_CMD_RESV_REGISTER,
				    NVME_CMD_RESV_REPORT, NVME_CMD_RESV_ACQUIRE,
				    NVME_CMD_RESV_RELEASE, NVME_CMD_COPY, 0x03, 0x7f, 0x80, 0xff };
	struct emu_io_stats st = { 0 };
	for (size_t i = 0; i < sizeof(opcodes); i++) {
		struct nvme_sqe c = ns_cmd(opcodes[i], 0, 1, buf);
		uint16_t s = ns_exec(f.ns, &c, &st, NULL);
		CHECK_EQ(ST_SCT(s), NVME_SCT_GENERIC);
		CHECK_EQ(ST_SC(s), NVME_SC_INVALID_OPCODE);
		CHECK(ST_DNR(s));
	}
	CHECK_EQ(st.read_cmds + st.write_cmds, 0);
	free(buf);
	ns_fixture_close(&f);
}

TEST_MAIN(TEST(test_roundtrip), TEST(test_roundtrip_4k), TEST(test_write_zeroes), TEST(test_dsm),
	  TEST(test_lba_range), TEST(test_mdts), TEST(test_compare), TEST(test_flush_verify),
	  TEST(test_stats), TEST(test_xfer_errors), TEST(test_write_cache_and_fua),
	  TEST(test_unsupported_opcodes))
