/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the controller's admin path asks of a namespace: creation from parameters, Identify
 * Namespace (CNS 00h, 05h, 03h), Format NVM, and the Format In Progress state.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/emu/emu.h"
#include "hw/emu/ns/ns_internal.h"
#include "ns_test_cmd.h"
#include "test_util.h"
#include "xfer_double.h"

#define MiB (1024u * 1024u)

static int create(enum emu_ns_kind kind, uint64_t size, uint32_t lba, struct emu_ns **ns,
		  char *err, size_t errlen)
{
	struct emu_ns_params p;
	memset(&p, 0, sizeof(p));
	p.kind = kind;
	p.size_bytes = size;
	p.lba_size = lba;
	err[0] = 0;
	return emu_ns_create(&p, 1, ns, err, errlen);
}

static void test_create_errors(void)
{
	struct emu_ns *ns = (struct emu_ns *)1;
	char err[256];

	/* KV namespaces exist now (tests/unit/emu_kv); one without a capacity is refused */
	CHECK_EQ(create(EMU_NS_KV, 0, 512, &ns, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "capacity") != NULL);
	CHECK(ns == NULL);
	CHECK_EQ(create(EMU_NS_KV, 1 * MiB, 512, &ns, err, sizeof(err)), 0);
	CHECK(ns != NULL && emu_ns_csi(ns) == NVME_CSI_KV);
	emu_ns_destroy(ns);

	CHECK_EQ(create(EMU_NS_MEM, 1 * MiB, 1024, &ns, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "1024") != NULL);
	CHECK_EQ(create(EMU_NS_MEM, 1 * MiB, 0, &ns, err, sizeof(err)), -EINVAL);
	CHECK_EQ(create(EMU_NS_MEM, 0, 512, &ns, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "needs a size") != NULL);
	CHECK_EQ(create(EMU_NS_NULL, 0, 512, &ns, err, sizeof(err)), -EINVAL);
	CHECK_EQ(create(EMU_NS_MEM, 1000, 512, &ns, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "1000") != NULL && strstr(err, "512") != NULL);
	CHECK_EQ(create(EMU_NS_MEM, 6144, 4096, &ns, err, sizeof(err)), -EINVAL);
	CHECK_EQ(create((enum emu_ns_kind)42, 1 * MiB, 512, &ns, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "42") != NULL);
	/* an impossible amount of memory is refused, not crashed on */
	CHECK(create(EMU_NS_MEM, UINT64_MAX - 511, 512, &ns, err, sizeof(err)) < 0);
	CHECK(err[0] != 0);
	CHECK(ns == NULL);
	/* no error buffer at all is fine */
	struct emu_ns_params p;
	memset(&p, 0, sizeof(p));
	p.kind = EMU_NS_KV;
	CHECK_EQ(emu_ns_create(&p, 1, &ns, NULL, 0), -EINVAL);

	/* a large memory namespace costs nothing until written */
	CHECK_EQ(create(EMU_NS_MEM, 64ull << 30, 4096, &ns, err, sizeof(err)), 0);
	if (ns) {
		CHECK_EQ(emu_ns_nlbas(ns), (64ull << 30) / 4096);
		uint8_t *b = ns_test_alloc(4096);
		ns_test_pattern(b, 4096, 1);
		CHECK_EQ(ns_write(ns, emu_ns_nlbas(ns) - 1, 1, b), 0);
		uint8_t *r = ns_test_alloc(4096);
		CHECK_EQ(ns_read(ns, emu_ns_nlbas(ns) - 1, 1, r), 0);
		CHECK(memcmp(b, r, 4096) == 0);
		free(b);
		free(r);
		emu_ns_destroy(ns);
	}
	emu_ns_destroy(NULL);
}

static void check_identify(struct emu_ns *ns, bool tracks_use, uint64_t capacity, uint32_t lba)
{
	struct nvme_id_ns *id = ns_test_alloc(sizeof(*id));
	memset(id, 0xff, sizeof(*id));
	emu_ns_identify(ns, id);
	uint64_t n = capacity / lba;
	CHECK_EQ(id->nsze, n);
	CHECK_EQ(id->ncap, n);
	/* memory counts the blocks written (none yet: test_ns_mem.c); the others report all */
	CHECK_EQ(id->nuse, tracks_use ? 0 : n);
	CHECK_EQ(id->nlbaf, 1);
	CHECK_EQ(nvme_ns_lba_size(id), lba);
	CHECK_EQ(nvme_ns_flbas_index(id), lba == 512 ? 0 : 1);
	CHECK_EQ(id->flbas & 0x10, 0); /* no metadata */
	CHECK_EQ(id->lbaf[0].lbads, 9);
	CHECK_EQ(id->lbaf[1].lbads, 12);
	CHECK_EQ(id->lbaf[0].ms, 0);
	CHECK_EQ(id->lbaf[1].ms, 0);
	CHECK_EQ(id->lbaf[2].lbads, 0);
	CHECK_EQ(id->dlfeat, NVME_NS_DLFEAT_READ_ZEROES | NVME_NS_DLFEAT_WZ_DEAC);
	CHECK_EQ(id->nsfeat & NVME_NS_NSFEAT_THIN, 0);
	CHECK_EQ(id->nsfeat & NVME_NS_NSFEAT_DAE, 0);
	CHECK(id->nsfeat & (1u << 4)); /* OPTPERF */
	CHECK_EQ(id->npwg, 4096 / lba - 1);
	CHECK_EQ(id->npdg, 4096 / lba - 1);
	CHECK_EQ(id->npwa, 4096 / lba - 1);
	CHECK_EQ(id->npda, 4096 / lba - 1);
	CHECK_EQ(id->nows, 4096 / lba - 1);
	uint64_t nvmcap = 0;
	memcpy(&nvmcap, id->nvmcap, 8);
	CHECK_EQ(nvmcap, capacity);
	CHECK(ns_test_all_zero(id->nvmcap + 8, 8));
	for (int i = 0; i < 16; i++)
		CHECK_EQ(id->nguid[i], 0xa0 + i);
	for (int i = 0; i < 8; i++)
		CHECK_EQ(id->eui64[i], 0x10 + i);
	CHECK_EQ(id->dps, 0);
	CHECK_EQ(id->nmic, 0);
	CHECK(ns_test_all_zero(id->vs, sizeof(id->vs)));
	free(id);
}

static void test_identify(void)
{
	const enum emu_ns_kind kinds[] = { EMU_NS_MEM, EMU_NS_FILE, EMU_NS_NULL };
	for (size_t k = 0; k < 3; k++) {
		for (uint32_t lba = 512; lba <= 4096; lba *= 8) {
			struct ns_fixture f;
			REQUIRE(ns_fixture_open(&f, kinds[k], 3 * MiB, lba) == 0);
			CHECK_EQ(emu_ns_csi(f.ns), NVME_CSI_NVM);
			check_identify(f.ns, kinds[k] == EMU_NS_MEM, 3 * MiB, lba);

			uint8_t nguid[16], eui64[8];
			emu_ns_ids(f.ns, nguid, eui64);
			CHECK_EQ(nguid[0], 0xa0);
			CHECK_EQ(nguid[15], 0xaf);
			CHECK_EQ(eui64[0], 0x10);
			CHECK_EQ(eui64[7], 0x17);
			ns_fixture_close(&f);
		}
	}
}

static void test_identify_csi(void)
{
	struct ns_fixture f;
	REQUIRE(ns_fixture_open(&f, EMU_NS_MEM, 1 * MiB, 512) == 0);
	struct nvme_id_ns_nvm *nvm = ns_test_alloc(4096);
	memset(nvm, 0xff, 4096);
	CHECK_EQ(emu_ns_identify_csi(f.ns, NVME_CSI_NVM, nvm), 0);
	CHECK(ns_test_all_zero(nvm, 4096));

	memset(nvm, 0xff, 4096);
	const uint8_t others[] = { NVME_CSI_KV, NVME_CSI_ZNS, 0x03, 0xff };
	for (size_t i = 0; i < sizeof(others); i++) {
		uint16_t st = emu_ns_identify_csi(f.ns, others[i], nvm);
		CHECK_EQ(ST_SCT(st), NVME_SCT_GENERIC);
		CHECK_EQ(ST_SC(st), NVME_SC_INVALID_FIELD);
		CHECK(ST_DNR(st));
	}
	free(nvm);
	ns_fixture_close(&f);
}

static bool is_invalid_format(uint16_t st)
{
	return ST_SCT(st) == NVME_SCT_CMD && ST_SC(st) == NVME_SC_INVALID_FORMAT && ST_DNR(st);
}

static void format_kind(enum emu_ns_kind kind)
{
	struct ns_fixture f;
	REQUIRE(ns_fixture_open(&f, kind, 2 * MiB, 512) == 0);
	uint8_t *w = ns_test_alloc(64 * 1024), *r = ns_test_alloc(64 * 1024);

	ns_test_pattern(w, 64 * 1024, 20);
	CHECK_EQ(ns_write(f.ns, 0, 128, w), 0);
	CHECK_EQ(ns_write(f.ns, 4000, 96, w), 0);

	/* invalid requests change nothing */
	CHECK(is_invalid_format(emu_ns_format(f.ns, 2, 0)));
	CHECK(is_invalid_format(emu_ns_format(f.ns, 15, 1)));
	for (uint8_t ses = 2; ses < 8; ses++) {
		uint16_t st = emu_ns_format(f.ns, 1, ses);
		CHECK_EQ(ST_SCT(st), NVME_SCT_GENERIC);
		CHECK_EQ(ST_SC(st), NVME_SC_INVALID_FIELD);
		CHECK(ST_DNR(st));
	}
	CHECK_EQ(emu_ns_lba_size(f.ns), 512);
	CHECK_EQ(ns_read(f.ns, 0, 128, r), 0);
	CHECK(memcmp(w, r, 64 * 1024) == 0);

	/* to 4096: the same bytes in an eighth as many blocks, all zeroes */
	CHECK_EQ(emu_ns_format(f.ns, 1, NVME_FMT_SES_NONE), 0);
	CHECK_EQ(emu_ns_lba_size(f.ns), 4096);
	CHECK_EQ(emu_ns_nlbas(f.ns), 512);
	check_identify(f.ns, kind == EMU_NS_MEM, 2 * MiB, 4096);
	memset(r, 0xaa, 64 * 1024);
	CHECK_EQ(ns_read(f.ns, 0, 16, r), 0);
	CHECK(ns_test_all_zero(r, 64 * 1024));
	memset(r, 0xaa, 64 * 1024);
	CHECK_EQ(ns_read(f.ns, 500, 12, r), 0); /* where LBA 4000 of 512 B was */
	CHECK(ns_test_all_zero(r, 12 * 4096));
	/* the new geometry is the one commands see */
	uint64_t err_lba;
	struct nvme_sqe c = ns_cmd(NVME_CMD_READ, 512, 1, r);
	uint16_t st = ns_exec(f.ns, &c, NULL, &err_lba);
	CHECK_EQ(ST_SC(st), NVME_SC_LBA_OUT_OF_RANGE);
	CHECK_EQ(ns_write(f.ns, 511, 1, w), 0);
	CHECK_EQ(ns_read(f.ns, 511, 1, r), 0);
	CHECK(memcmp(w, r, 4096) == 0);

	/* and back to 512, with a user data erase */
	CHECK_EQ(emu_ns_format(f.ns, 0, NVME_FMT_SES_USER), 0);
	CHECK_EQ(emu_ns_lba_size(f.ns), 512);
	CHECK_EQ(emu_ns_nlbas(f.ns), 4096);
	check_identify(f.ns, kind == EMU_NS_MEM, 2 * MiB, 512);
	memset(r, 0xaa, 4096);
	CHECK_EQ(ns_read(f.ns, 4088, 8, r), 0);
	CHECK(ns_test_all_zero(r, 4096));
	free(w);
	free(r);
	ns_fixture_close(&f);
}

static void test_format(void)
{
	const enum emu_ns_kind kinds[] = { EMU_NS_MEM, EMU_NS_FILE, EMU_NS_NULL };
	for (size_t k = 0; k < 3; k++) {
		int before = test_failures_in_case;
		if (kinds[k] != EMU_NS_NULL) {
			format_kind(kinds[k]);
		} else {
			struct ns_fixture f;
			REQUIRE(ns_fixture_open(&f, EMU_NS_NULL, 2 * MiB, 512) == 0);
			CHECK_EQ(emu_ns_format(f.ns, 1, 1), 0);
			CHECK_EQ(emu_ns_nlbas(f.ns), 512);
			CHECK(is_invalid_format(emu_ns_format(f.ns, 2, 0)));
			ns_fixture_close(&f);
		}
		if (test_failures_in_case != before)
			fprintf(stderr, "  ^ with the %s backend\n", ns_kind_name(kinds[k]));
	}
}

/* A capacity that is no multiple of 4096 cannot take the 4096-byte format. */
static void test_format_capacity_mismatch(void)
{
	struct ns_fixture f;
	REQUIRE(ns_fixture_open(&f, EMU_NS_MEM, 3 * 512, 512) == 0);
	CHECK(is_invalid_format(emu_ns_format(f.ns, 1, 0)));
	CHECK_EQ(emu_ns_nlbas(f.ns), 3);
	CHECK_EQ(emu_ns_format(f.ns, 0, 0), 0);
	ns_fixture_close(&f);
}

/* While a format runs, commands and a second format get Format In Progress (retryable). */
static void test_format_in_progress(void)
{
	struct ns_fixture f;
	REQUIRE(ns_fixture_open(&f, EMU_NS_MEM, 1 * MiB, 512) == 0);
	uint8_t *b = ns_test_alloc(4096);
	struct emu_io_stats st = { 0 };

	atomic_fetch_or(&f.ns->geom, EMU_NS_FORMATTING); /* as emu_ns_format does */
	const uint8_t opcodes[] = { NVME_CMD_READ, NVME_CMD_WRITE, NVME_CMD_FLUSH,
				    NVME_CMD_WRITE_ZEROES, NVME_CMD_DSM, NVME_CMD_VERIFY };
	for (size_t i = 0; i < sizeof(opcodes); i++) {
		struct nvme_sqe c = ns_cmd(opcodes[i], 0, 1, b);
		uint16_t s = ns_exec(f.ns, &c, &st, NULL);
		CHECK_EQ(ST_SCT(s), NVME_SCT_GENERIC);
		CHECK_EQ(ST_SC(s), NVME_SC_FORMAT_IN_PROGRESS);
		CHECK(!ST_DNR(s));
	}
	uint16_t s = emu_ns_format(f.ns, 1, 0);
	CHECK_EQ(ST_SC(s), NVME_SC_FORMAT_IN_PROGRESS);
	CHECK_EQ(st.read_cmds + st.write_cmds, 0);
	atomic_fetch_and(&f.ns->geom, ~EMU_NS_FORMATTING);
	CHECK_EQ(ns_read(f.ns, 0, 1, b), 0);
	free(b);
	ns_fixture_close(&f);
}

TEST_MAIN(TEST(test_create_errors), TEST(test_identify), TEST(test_identify_csi),
	  TEST(test_format), TEST(test_format_capacity_mismatch), TEST(test_format_in_progress))
