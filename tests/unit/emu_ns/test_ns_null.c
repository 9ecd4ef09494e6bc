/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The null backend: no data moves, yet every command is checked like on a real namespace,
 * its host memory mapped (the executor's part; tests/unit/emu/test_emu_prp.c checks the PRP
 * errors through the real IOMMU) and counted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/emu/emu.h"
#include "ns_test_cmd.h"
#include "test_util.h"
#include "xfer_double.h"

#define MiB (1024u * 1024u)

static void test_data_untouched(void)
{
	struct ns_fixture f;
	REQUIRE(ns_fixture_open(&f, EMU_NS_NULL, 1 * MiB, 4096) == 0);
	uint8_t *b = ns_test_alloc(64 * 1024);
	struct emu_io_stats st = { 0 };
	unsigned long maps = xfer_double_map_calls();

	memset(b, 0x5a, 64 * 1024);
	struct nvme_sqe c = ns_cmd(NVME_CMD_WRITE, 0, 16, b);
	CHECK_EQ(ns_exec(f.ns, &c, &st, NULL), 0);
	c = ns_cmd(NVME_CMD_READ, 0, 16, b);
	CHECK_EQ(ns_exec(f.ns, &c, &st, NULL), 0);
	CHECK(ns_test_all_byte(b, 64 * 1024, 0x5a));
	c = ns_cmd(NVME_CMD_COMPARE, 0, 16, b);
	CHECK_EQ(ns_exec(f.ns, &c, &st, NULL), 0);
	/* every data command mapped its host memory, as a device's DMA would */
	CHECK_EQ(xfer_double_map_calls(), maps + 3);
	/* so a PRP that points nowhere fails, and is not counted */
	c = ns_cmd(NVME_CMD_READ, 8, 8, NULL);
	CHECK_EQ(ST_SC(ns_exec(f.ns, &c, &st, NULL)), NVME_SC_DATA_TRANSFER_ERROR);
	c = ns_cmd(NVME_CMD_WRITE, 8, 8, NULL);
	CHECK_EQ(ST_SC(ns_exec(f.ns, &c, &st, NULL)), NVME_SC_DATA_TRANSFER_ERROR);

	CHECK_EQ(st.write_cmds, 1);
	CHECK_EQ(st.bytes_written, 64 * 1024);
	CHECK_EQ(st.read_cmds, 2);
	CHECK_EQ(st.bytes_read, 2 * 64 * 1024);
	free(b);
	ns_fixture_close(&f);
}

static void test_checks_still_apply(void)
{
	struct ns_fixture f;
	REQUIRE(ns_fixture_open(&f, EMU_NS_NULL, 1 * MiB, 512) == 0);
	CHECK_EQ(emu_ns_nlbas(f.ns), 2048);
	struct emu_io_stats st = { 0 };
	uint64_t err_lba;
	uint8_t *b = ns_test_alloc(4096);

	struct nvme_sqe c = ns_cmd(NVME_CMD_READ, 2047, 2, b);
	uint16_t s = ns_exec(f.ns, &c, &st, &err_lba);
	CHECK_EQ(ST_SC(s), NVME_SC_LBA_OUT_OF_RANGE);
	CHECK(ST_DNR(s));
	CHECK_EQ(err_lba, 2047);
	c = ns_cmd(NVME_CMD_WRITE, UINT64_MAX, 1, b);
	CHECK_EQ(ST_SC(ns_exec(f.ns, &c, &st, NULL)), NVME_SC_LBA_OUT_OF_RANGE);
	c = ns_cmd(NVME_CMD_WRITE_UNCOR, 0, 1, b);
	CHECK_EQ(ST_SC(ns_exec(f.ns, &c, &st, NULL)), NVME_SC_INVALID_OPCODE);
	c = ns_cmd(NVME_CMD_WRITE_ZEROES, 0, 2048, NULL);
	CHECK_EQ(ns_exec(f.ns, &c, &st, NULL), 0);
	c = ns_cmd(NVME_CMD_WRITE_ZEROES, 1, 2048, NULL);
	CHECK_EQ(ST_SC(ns_exec(f.ns, &c, &st, NULL)), NVME_SC_LBA_OUT_OF_RANGE);
	c = ns_cmd(NVME_CMD_VERIFY, 0, 2048, NULL);
	CHECK_EQ(ns_exec(f.ns, &c, &st, NULL), 0);
	c.opc = NVME_CMD_FLUSH;
	CHECK_EQ(ns_exec(f.ns, &c, &st, NULL), 0);
	CHECK_EQ(emu_ns_sync(f.ns), 0);

	/* Dataset Management ranges are command parameters: read and checked */
	struct nvme_dsm_range *rg = ns_test_alloc(2 * sizeof(*rg));
	memset(rg, 0, 2 * sizeof(*rg));
	rg[0].slba = 0, rg[0].nlb = 8;
	rg[1].slba = 2040, rg[1].nlb = 9;
	c = ns_cmd_dsm(2, NVME_DSM_ATTR_AD, rg);
	s = ns_exec(f.ns, &c, &st, &err_lba);
	CHECK_EQ(ST_SC(s), NVME_SC_LBA_OUT_OF_RANGE);
	CHECK_EQ(err_lba, 2040);
	rg[1].nlb = 8;
	CHECK_EQ(ns_exec(f.ns, &c, &st, NULL), 0);

	CHECK_EQ(st.read_cmds + st.write_cmds, 0);
	free(rg);
	free(b);
	ns_fixture_close(&f);
}

static void test_mdts(void)
{
	struct ns_fixture f;
	REQUIRE(ns_fixture_open(&f, EMU_NS_NULL, 64 * MiB, 512) == 0);
	uint8_t *b = ns_test_alloc(4096);
	const uint8_t opcodes[] = { NVME_CMD_READ, NVME_CMD_WRITE, NVME_CMD_COMPARE };
	for (size_t i = 0; i < sizeof(opcodes); i++) {
		struct nvme_sqe c = ns_cmd(opcodes[i], 0, EMU_MDTS_BYTES / 512, b);
		CHECK_EQ(ns_exec(f.ns, &c, NULL, NULL), 0);
		c = ns_cmd(opcodes[i], 0, EMU_MDTS_BYTES / 512 + 1, b);
		uint16_t s = ns_exec(f.ns, &c, NULL, NULL);
		CHECK_EQ(ST_SC(s), NVME_SC_INVALID_FIELD);
		CHECK(ST_DNR(s));
	}
	CHECK(ns_test_all_byte(b, 4096, 0xee)); /* untouched since ns_test_alloc */
	free(b);
	ns_fixture_close(&f);
}

TEST_MAIN(TEST(test_data_untouched), TEST(test_checks_still_apply), TEST(test_mdts))
