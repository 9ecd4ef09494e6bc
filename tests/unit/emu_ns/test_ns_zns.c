/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Zoned Namespace Command Set of the emulated namespaces: Identify, the zone state machine
 * and its statuses, write pointer rules, Zone Append, Zone Management Send and Receive.
 * Geometry used throughout: 8 zones of 16 blocks of 4 KiB, zone capacity 12 blocks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "zns_test.h"

#define ZSZE 16u
#define ZCAP 12u
#define BS   4096u

static const struct zns_geo small = { .nzones = 8, .zone_kib = 64, .cap_kib = 48, .lba = BS };

static void test_identify(void)
{
	struct zns_geo g = small;
	g.open = 3;
	g.active = 5;
	struct emu_ns *ns = zt_open(&g, NULL);
	REQUIRE(ns);
	CHECK_EQ(emu_ns_csi(ns), NVME_CSI_ZNS);
	struct nvme_id_ns id;
	emu_ns_identify(ns, &id);
	CHECK_EQ(id.nsze, 8 * ZSZE);
	CHECK_EQ(nvme_ns_lba_size(&id), BS);
	struct nvme_id_ns_zns z;
	CHECK_EQ(emu_ns_identify_csi(ns, NVME_CSI_ZNS, &z), 0);
	CHECK_EQ(z.mor, 2);  /* 0's based */
	CHECK_EQ(z.mar, 4);
	CHECK_EQ(z.ozcs & NVME_ZNS_OZCS_RAZB, 0);
	CHECK_EQ(z.lbafe[1].zsze, ZSZE);             /* 4 KiB format */
	CHECK_EQ(z.lbafe[0].zsze, ZSZE * 8);         /* 512 B format */
	uint8_t nvm[4096];
	CHECK_EQ(emu_ns_identify_csi(ns, NVME_CSI_NVM, nvm), 0); /* the set ZNS builds on */
	CHECK(emu_ns_identify_csi(ns, NVME_CSI_KV, nvm) != 0);
	struct nvme_id_ctrl_zns c;
	emu_zns_identify_ctrl(128 * 1024, &c);
	CHECK_EQ(c.zasl, 5);   /* 2^5 pages of 4 KiB */
	emu_zns_identify_ctrl(0, &c);
	CHECK_EQ(c.zasl, 0);
	emu_ns_destroy(ns);

	g.open = 0;
	g.active = 0;
	ns = zt_open(&g, NULL);
	REQUIRE(ns);
	CHECK_EQ(emu_ns_identify_csi(ns, NVME_CSI_ZNS, &z), 0);
	CHECK_EQ(z.mor, NVME_ZNS_NO_LIMIT);
	CHECK_EQ(z.mar, NVME_ZNS_NO_LIMIT);
	emu_ns_destroy(ns);
}

static void test_bad_geometry(void)
{
	struct zns_geo g = small;
	g.cap_kib = 80; /* capacity above the zone size */
	CHECK(zt_open(&g, NULL) == NULL);
	g = small;
	g.zone_kib = 6; /* not a multiple of 4 KiB */
	g.cap_kib = 6;
	CHECK(zt_open(&g, NULL) == NULL);
	g = small;
	g.open = 4;
	g.active = 2; /* more open than active */
	CHECK(zt_open(&g, NULL) == NULL);
}

static void test_sequential_writes(void)
{
	struct emu_ns *ns = zt_open(&small, NULL);
	REQUIRE(ns);
	uint8_t *w = ns_test_alloc(ZSZE * BS), *r = ns_test_alloc(ZSZE * BS);
	ns_test_pattern(w, ZSZE * BS, 7);

	CHECK_EQ(zt_state(ns, 0), NVME_ZS_EMPTY);
	/* not at the write pointer */
	CHECK(ZST_IS(zt_write(ns, 1, 1, w), NVME_SC_ZONE_INVALID_WRITE));
	CHECK_EQ(zt_state(ns, 0), NVME_ZS_EMPTY);
	CHECK_EQ(zt_write(ns, 0, 4, w), 0);
	CHECK_EQ(zt_state(ns, 0), NVME_ZS_IMP_OPEN);
	struct nvme_zone_desc d = zt_zone(ns, 0);
	CHECK_EQ(d.wp, 4);
	CHECK_EQ(d.zcap, ZCAP);
	CHECK_EQ(d.zt, NVME_ZONE_TYPE_SEQ_WRITE_REQ);
	/* behind and ahead of the write pointer */
	CHECK(ZST_IS(zt_write(ns, 2, 1, w), NVME_SC_ZONE_INVALID_WRITE));
	CHECK(ZST_IS(zt_write(ns, 5, 1, w), NVME_SC_ZONE_INVALID_WRITE));
	/* past the zone capacity (12 blocks) */
	CHECK(ZST_IS(zt_write(ns, 4, 9, w + 4 * BS), NVME_SC_ZONE_BOUNDARY_ERROR));
	CHECK_EQ(zt_write(ns, 4, 8, w + 4 * BS), 0);
	CHECK_EQ(zt_state(ns, 0), NVME_ZS_FULL);
	CHECK(ZST_IS(zt_write(ns, 12, 1, w), NVME_SC_ZONE_FULL));
	memset(r, 0xee, ZSZE * BS);
	CHECK_EQ(zt_read(ns, 0, ZSZE, r), 0); /* the whole zone, capacity and beyond */
	CHECK(memcmp(w, r, ZCAP * BS) == 0);
	CHECK(ns_test_all_zero(r + ZCAP * BS, (ZSZE - ZCAP) * BS));
	/* reads may not cross into the next zone (RAZB = 0) */
	CHECK(ZST_IS(zt_read(ns, ZSZE - 1, 2, r), NVME_SC_ZONE_BOUNDARY_ERROR));
	/* the end of the namespace */
	CHECK(ST_IS(zt_read(ns, 8 * ZSZE, 1, r), NVME_SCT_GENERIC, NVME_SC_LBA_OUT_OF_RANGE));
	CHECK(ST_IS(zt_write(ns, 8 * ZSZE, 1, w), NVME_SCT_GENERIC, NVME_SC_LBA_OUT_OF_RANGE));
	/* Write Zeroes moves the write pointer too */
	struct nvme_sqe wz = ns_cmd(NVME_CMD_WRITE_ZEROES, ZSZE, 3, NULL);
	CHECK_EQ(ns_exec(ns, &wz, NULL, NULL), 0);
	CHECK_EQ(zt_zone(ns, ZSZE).wp, ZSZE + 3);
	free(w);
	free(r);
	emu_ns_destroy(ns);
}

static void test_append(void)
{
	struct zns_geo g = small;
	g.zasl = 8192;
	struct emu_ns *ns = zt_open(&g, NULL);
	REQUIRE(ns);
	uint8_t *w = ns_test_alloc(ZSZE * BS), *r = ns_test_alloc(ZSZE * BS);
	ns_test_pattern(w, ZSZE * BS, 3);
	uint64_t lba = 0;
	CHECK_EQ(zt_append(ns, 2 * ZSZE, 2, w, &lba), 0);
	CHECK_EQ(lba, 2 * ZSZE);
	CHECK_EQ(zt_append(ns, 2 * ZSZE, 1, w + 2 * BS, &lba), 0);
	CHECK_EQ(lba, 2 * ZSZE + 2);
	CHECK_EQ(zt_read(ns, 2 * ZSZE, 3, r), 0);
	CHECK(memcmp(w, r, 3 * BS) == 0);
	/* not a zone start */
	CHECK(ST_IS(zt_append(ns, 2 * ZSZE + 1, 1, w, NULL), NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD));
	/* above ZASL (8 KiB) */
	CHECK(ST_IS(zt_append(ns, 2 * ZSZE, 3, w, NULL), NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD));
	/* fill to the capacity, then one more */
	for (int i = 0; i < 4; i++)
		CHECK_EQ(zt_append(ns, 2 * ZSZE, 2, w, NULL), 0);
	CHECK_EQ(zt_append(ns, 2 * ZSZE, 1, w, &lba), 0);
	CHECK_EQ(lba, 2 * ZSZE + 11);
	CHECK_EQ(zt_state(ns, 2 * ZSZE), NVME_ZS_FULL);
	CHECK(ZST_IS(zt_append(ns, 2 * ZSZE, 1, w, NULL), NVME_SC_ZONE_FULL));
	/* crossing the capacity */
	CHECK_EQ(zt_append(ns, 3 * ZSZE, 1, w, NULL), 0);
	for (int i = 0; i < 5; i++)
		CHECK_EQ(zt_append(ns, 3 * ZSZE, 2, w, NULL), 0);
	CHECK(ZST_IS(zt_append(ns, 3 * ZSZE, 2, w, NULL), NVME_SC_ZONE_BOUNDARY_ERROR));
	CHECK_EQ(zt_zone(ns, 3 * ZSZE).wp, 3 * ZSZE + 11);
	/* a transfer error leaves the write pointer where it was */
	struct nvme_sqe c = ns_cmd(NVME_CMD_ZONE_APPEND, 3 * ZSZE, 1, NULL);
	CHECK(ns_exec(ns, &c, NULL, NULL) != 0);
	CHECK_EQ(zt_zone(ns, 3 * ZSZE).wp, 3 * ZSZE + 11);
	free(w);
	free(r);
	emu_ns_destroy(ns);
}

static void test_transitions(void)
{
	struct emu_ns *ns = zt_open(&small, NULL);
	REQUIRE(ns);
	uint8_t *w = ns_test_alloc(ZSZE * BS);
	ns_test_pattern(w, ZSZE * BS, 5);

	/* Empty: close is invalid, open makes it explicitly opened, close takes it back to
	 * Empty (nothing written) */
	CHECK(ZST_IS(zt_send(ns, 0, NVME_ZSA_CLOSE, false), NVME_SC_ZONE_INVALID_TRANSITION));
	CHECK_EQ(zt_send(ns, 0, NVME_ZSA_OPEN, false), 0);
	CHECK_EQ(zt_state(ns, 0), NVME_ZS_EXP_OPEN);
	CHECK_EQ(zt_send(ns, 0, NVME_ZSA_OPEN, false), 0); /* already: no change */
	CHECK_EQ(zt_send(ns, 0, NVME_ZSA_CLOSE, false), 0);
	CHECK_EQ(zt_state(ns, 0), NVME_ZS_EMPTY);
	/* written, closed, reopened by a write, finished, reset */
	CHECK_EQ(zt_write(ns, 0, 2, w), 0);
	CHECK_EQ(zt_send(ns, 0, NVME_ZSA_CLOSE, false), 0);
	CHECK_EQ(zt_state(ns, 0), NVME_ZS_CLOSED);
	CHECK_EQ(zt_send(ns, 0, NVME_ZSA_CLOSE, false), 0);
	CHECK_EQ(zt_write(ns, 2, 1, w), 0);
	CHECK_EQ(zt_state(ns, 0), NVME_ZS_IMP_OPEN);
	CHECK_EQ(zt_send(ns, 0, NVME_ZSA_OPEN, false), 0);
	CHECK_EQ(zt_state(ns, 0), NVME_ZS_EXP_OPEN);
	CHECK_EQ(zt_send(ns, 0, NVME_ZSA_FINISH, false), 0);
	CHECK_EQ(zt_state(ns, 0), NVME_ZS_FULL);
	CHECK_EQ(zt_zone(ns, 0).wp, ZCAP);
	CHECK_EQ(zt_send(ns, 0, NVME_ZSA_FINISH, false), 0);
	CHECK(ZST_IS(zt_send(ns, 0, NVME_ZSA_OPEN, false), NVME_SC_ZONE_INVALID_TRANSITION));
	CHECK(ZST_IS(zt_send(ns, 0, NVME_ZSA_CLOSE, false), NVME_SC_ZONE_INVALID_TRANSITION));
	CHECK(ZST_IS(zt_send(ns, 0, NVME_ZSA_OFFLINE, false), NVME_SC_ZONE_INVALID_TRANSITION));
	CHECK_EQ(zt_send(ns, 0, NVME_ZSA_RESET, false), 0);
	CHECK_EQ(zt_state(ns, 0), NVME_ZS_EMPTY);
	CHECK_EQ(zt_zone(ns, 0).wp, 0);
	uint8_t *r = ns_test_alloc(ZSZE * BS);
	CHECK_EQ(zt_read(ns, 0, ZSZE, r), 0);
	CHECK(ns_test_all_zero(r, ZSZE * BS)); /* a reset zone reads as zeroes */
	CHECK_EQ(zt_send(ns, 0, NVME_ZSA_RESET, false), 0); /* Empty: no change */
	/* Empty straight to Full */
	CHECK_EQ(zt_send(ns, ZSZE, NVME_ZSA_FINISH, false), 0);
	CHECK_EQ(zt_state(ns, ZSZE), NVME_ZS_FULL);
	/* SLBA that is not a zone start, outside the namespace, unknown actions */
	CHECK(ST_IS(zt_send(ns, 1, NVME_ZSA_OPEN, false), NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD));
	CHECK(ST_IS(zt_send(ns, 8 * ZSZE, NVME_ZSA_OPEN, false), NVME_SCT_GENERIC, NVME_SC_LBA_OUT_OF_RANGE));
	CHECK(ST_IS(zt_send(ns, 0, 0x0f, false), NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD));
	CHECK(ST_IS(zt_send(ns, 0, NVME_ZSA_SET_ZDE, false), NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD));
	free(w);
	free(r);
	emu_ns_destroy(ns);
}

static void test_resources(void)
{
	struct zns_geo g = small;
	g.open = 2;
	g.active = 3;
	struct emu_ns *ns = zt_open(&g, NULL);
	REQUIRE(ns);
	uint8_t *w = ns_test_alloc(BS);
	ns_test_pattern(w, BS, 9);

	/* two explicitly opened zones use every open resource; a write to a third zone finds no
	 * implicitly opened zone to close */
	CHECK_EQ(zt_send(ns, 0, NVME_ZSA_OPEN, false), 0);
	CHECK_EQ(zt_send(ns, ZSZE, NVME_ZSA_OPEN, false), 0);
	CHECK(ZST_IS(zt_write(ns, 2 * ZSZE, 1, w), NVME_SC_ZONE_TOO_MANY_OPEN));
	CHECK(ZST_IS(zt_send(ns, 2 * ZSZE, NVME_ZSA_OPEN, false), NVME_SC_ZONE_TOO_MANY_OPEN));
	CHECK_EQ(zt_state(ns, 2 * ZSZE), NVME_ZS_EMPTY);
	/* implicitly opened zones are closed by the controller to make room */
	CHECK_EQ(zt_write(ns, 0, 1, w), 0);
	CHECK_EQ(zt_send(ns, 0, NVME_ZSA_CLOSE, false), 0);
	CHECK_EQ(zt_send(ns, ZSZE, NVME_ZSA_CLOSE, false), 0); /* empty again */
	CHECK_EQ(zt_write(ns, 2 * ZSZE, 1, w), 0);
	CHECK_EQ(zt_write(ns, 3 * ZSZE, 1, w), 0);
	/* zones 0 (closed), 2 and 3 (implicitly opened): three active */
	CHECK(ZST_IS(zt_write(ns, 4 * ZSZE, 1, w), NVME_SC_ZONE_TOO_MANY_ACTIVE));
	CHECK(ZST_IS(zt_send(ns, 4 * ZSZE, NVME_ZSA_OPEN, false), NVME_SC_ZONE_TOO_MANY_ACTIVE));
	/* reopening the closed zone closes the older implicitly opened one (zone 2) */
	CHECK_EQ(zt_write(ns, 1, 1, w), 0);
	CHECK_EQ(zt_state(ns, 0), NVME_ZS_IMP_OPEN);
	CHECK_EQ(zt_state(ns, 2 * ZSZE), NVME_ZS_CLOSED);
	CHECK_EQ(zt_state(ns, 3 * ZSZE), NVME_ZS_IMP_OPEN);
	/* finishing frees the resources */
	CHECK_EQ(zt_send(ns, 0, NVME_ZSA_FINISH, true), 0);
	CHECK_EQ(zt_state(ns, 0), NVME_ZS_FULL);
	CHECK_EQ(zt_state(ns, 2 * ZSZE), NVME_ZS_FULL);
	CHECK_EQ(zt_state(ns, 3 * ZSZE), NVME_ZS_FULL);
	CHECK_EQ(zt_write(ns, 4 * ZSZE, 1, w), 0);
	free(w);
	emu_ns_destroy(ns);
}

static void test_select_all(void)
{
	struct zns_geo g = small;
	g.open = 3;
	struct emu_ns *ns = zt_open(&g, NULL);
	REQUIRE(ns);
	uint8_t *w = ns_test_alloc(BS);
	ns_test_pattern(w, BS, 2);
	for (uint32_t z = 0; z < 4; z++) {
		CHECK_EQ(zt_write(ns, z * ZSZE, 1, w), 0);
		CHECK_EQ(zt_send(ns, z * ZSZE, NVME_ZSA_CLOSE, false), 0);
	}
	/* four closed zones do not fit three open resources: nothing is opened */
	CHECK(ZST_IS(zt_send(ns, 0, NVME_ZSA_OPEN, true), NVME_SC_ZONE_TOO_MANY_OPEN));
	CHECK_EQ(zt_state(ns, 0), NVME_ZS_CLOSED);
	CHECK_EQ(zt_send(ns, 3 * ZSZE, NVME_ZSA_FINISH, false), 0);
	/* SLBA is ignored with Select All */
	CHECK_EQ(zt_send(ns, 12345, NVME_ZSA_OPEN, true), 0);
	for (uint32_t z = 0; z < 3; z++)
		CHECK_EQ(zt_state(ns, z * ZSZE), NVME_ZS_EXP_OPEN);
	CHECK_EQ(zt_send(ns, 0, NVME_ZSA_CLOSE, true), 0);
	for (uint32_t z = 0; z < 3; z++)
		CHECK_EQ(zt_state(ns, z * ZSZE), NVME_ZS_CLOSED);
	CHECK_EQ(zt_send(ns, 0, NVME_ZSA_RESET, true), 0);
	for (uint32_t z = 0; z < 8; z++)
		CHECK_EQ(zt_state(ns, z * ZSZE), NVME_ZS_EMPTY);
	/* nothing selected: success */
	CHECK_EQ(zt_send(ns, 0, NVME_ZSA_OFFLINE, true), 0);
	free(w);
	emu_ns_destroy(ns);
}

static void test_report(void)
{
	struct emu_ns *ns = zt_open(&small, NULL);
	REQUIRE(ns);
	uint8_t *w = ns_test_alloc(BS);
	ns_test_pattern(w, BS, 4);
	CHECK_EQ(zt_write(ns, 2 * ZSZE, 1, w), 0);               /* zone 2 implicitly open */
	CHECK_EQ(zt_send(ns, 5 * ZSZE, NVME_ZSA_FINISH, false), 0); /* zone 5 full */
	CHECK_EQ(zt_send(ns, 6 * ZSZE, NVME_ZSA_OPEN, false), 0);   /* zone 6 explicitly open */

	uint8_t buf[64 + 8 * 64];
	memset(buf, 0xee, sizeof(buf));
	CHECK_EQ(zt_report(ns, 0, NVME_ZRAS_ALL, false, buf, sizeof(buf)), 0);
	struct nvme_zone_report_hdr h;
	memcpy(&h, buf, sizeof(h));
	CHECK_EQ(h.nr_zones, 8);
	struct nvme_zone_desc d[8];
	memcpy(d, buf + 64, sizeof(d));
	for (uint32_t z = 0; z < 8; z++) {
		CHECK_EQ(d[z].zslba, z * ZSZE);
		CHECK_EQ(d[z].zcap, ZCAP);
	}
	CHECK_EQ(nvme_zone_desc_state(&d[2]), NVME_ZS_IMP_OPEN);
	CHECK_EQ(d[2].wp, 2 * ZSZE + 1);
	CHECK_EQ(nvme_zone_desc_state(&d[5]), NVME_ZS_FULL);
	CHECK_EQ(nvme_zone_desc_state(&d[6]), NVME_ZS_EXP_OPEN);

	/* reporting options: only matching zones, from the zone holding SLBA on */
	memset(buf, 0, sizeof(buf));
	CHECK_EQ(zt_report(ns, 0, NVME_ZRAS_EMPTY, false, buf, sizeof(buf)), 0);
	memcpy(&h, buf, sizeof(h));
	CHECK_EQ(h.nr_zones, 5);
	memset(buf, 0, sizeof(buf));
	CHECK_EQ(zt_report(ns, 3 * ZSZE + 5, NVME_ZRAS_EMPTY, false, buf, sizeof(buf)), 0);
	memcpy(&h, buf, sizeof(h));
	CHECK_EQ(h.nr_zones, 3); /* zones 3, 4, 7 */
	memcpy(d, buf + 64, 3 * sizeof(d[0]));
	CHECK_EQ(d[0].zslba, 3 * ZSZE);
	CHECK_EQ(d[2].zslba, 7 * ZSZE);
	CHECK_EQ(zt_report(ns, 0, NVME_ZRAS_FULL, false, buf, sizeof(buf)), 0);
	memcpy(&h, buf, sizeof(h));
	CHECK_EQ(h.nr_zones, 1);
	CHECK_EQ(zt_report(ns, 0, NVME_ZRAS_OFFLINE, false, buf, sizeof(buf)), 0);
	memcpy(&h, buf, sizeof(h));
	CHECK_EQ(h.nr_zones, 0);

	/* a buffer for two descriptors: without partial the count is of all matches */
	uint8_t small_buf[64 + 2 * 64];
	CHECK_EQ(zt_report(ns, 0, NVME_ZRAS_ALL, false, small_buf, sizeof(small_buf)), 0);
	memcpy(&h, small_buf, sizeof(h));
	CHECK_EQ(h.nr_zones, 8);
	CHECK_EQ(zt_report(ns, 0, NVME_ZRAS_ALL, true, small_buf, sizeof(small_buf)), 0);
	memcpy(&h, small_buf, sizeof(h));
	CHECK_EQ(h.nr_zones, 2);
	/* a buffer for the header only */
	CHECK_EQ(zt_report(ns, 0, NVME_ZRAS_ALL, true, small_buf, 64), 0);
	memcpy(&h, small_buf, sizeof(h));
	CHECK_EQ(h.nr_zones, 0);

	/* bad requests */
	CHECK(ST_IS(zt_report(ns, 8 * ZSZE, NVME_ZRAS_ALL, false, buf, sizeof(buf)), NVME_SCT_GENERIC,
		    NVME_SC_LBA_OUT_OF_RANGE));
	CHECK(ST_IS(zt_report(ns, 0, 8, false, buf, sizeof(buf)), NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD));
	struct nvme_sqe c = ns_cmd(NVME_CMD_ZONE_MGMT_RECV, 0, 1, buf);
	c.cdw12 = sizeof(buf) / 4 - 1;
	c.cdw13 = NVME_ZRA_EXT_REPORT_ZONES;
	CHECK(ST_IS(ns_exec(ns, &c, NULL, NULL), NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD));
	free(w);
	emu_ns_destroy(ns);
}

static void test_read_only_offline(void)
{
	struct emu_ns *ns = zt_open(&small, NULL);
	REQUIRE(ns);
	uint8_t *w = ns_test_alloc(ZSZE * BS), *r = ns_test_alloc(ZSZE * BS);
	ns_test_pattern(w, ZSZE * BS, 8);
	CHECK_EQ(zt_write(ns, ZSZE, 3, w), 0);
	CHECK_EQ(emu_ns_zone_read_only(ns, ZSZE + 7), 0);
	CHECK_EQ(zt_state(ns, ZSZE), NVME_ZS_READ_ONLY);
	CHECK(ZST_IS(zt_write(ns, ZSZE + 3, 1, w), NVME_SC_ZONE_READ_ONLY));
	CHECK(ZST_IS(zt_append(ns, ZSZE, 1, w, NULL), NVME_SC_ZONE_READ_ONLY));
	CHECK_EQ(zt_read(ns, ZSZE, 3, r), 0); /* its data is still readable */
	CHECK(memcmp(w, r, 3 * BS) == 0);
	CHECK(ZST_IS(zt_send(ns, ZSZE, NVME_ZSA_RESET, false), NVME_SC_ZONE_INVALID_TRANSITION));
	CHECK(ZST_IS(zt_send(ns, ZSZE, NVME_ZSA_FINISH, false), NVME_SC_ZONE_INVALID_TRANSITION));

	struct nvme_changed_zone_log log;
	CHECK_EQ(emu_ns_changed_zones(ns, &log, false), 0);
	CHECK_EQ(log.nrzid, 1);
	CHECK_EQ(log.zid[0], ZSZE);
	CHECK_EQ(emu_ns_changed_zones(ns, &log, true), 0); /* read without RAE: cleared */
	CHECK_EQ(emu_ns_changed_zones(ns, &log, false), 0);
	CHECK_EQ(log.nrzid, 0);

	CHECK_EQ(zt_send(ns, 0, NVME_ZSA_OFFLINE, true), 0);
	CHECK_EQ(zt_state(ns, ZSZE), NVME_ZS_OFFLINE);
	CHECK_EQ(zt_zone(ns, ZSZE).wp, UINT64_MAX);
	CHECK(ZST_IS(zt_read(ns, ZSZE, 1, r), NVME_SC_ZONE_OFFLINE));
	CHECK(ZST_IS(zt_write(ns, ZSZE, 1, w), NVME_SC_ZONE_OFFLINE));
	CHECK(ZST_IS(zt_send(ns, ZSZE, NVME_ZSA_OFFLINE, false), NVME_SC_ZONE_INVALID_TRANSITION));
	CHECK(ST_IS(emu_ns_zone_read_only(ns, 8 * ZSZE), NVME_SCT_GENERIC, NVME_SC_LBA_OUT_OF_RANGE));
	free(w);
	free(r);
	emu_ns_destroy(ns);
}

static void test_command_sets(void)
{
	struct emu_ns *ns = zt_open(&small, NULL);
	REQUIRE(ns);
	uint8_t *w = ns_test_alloc(BS);
	ns_test_pattern(w, BS, 1);
	/* CC.CSS = NVM: zone commands are unknown opcodes, writes still follow the zone rules */
	emu_ns_set_command_sets(ns, false);
	CHECK(ST_IS(zt_append(ns, 0, 1, w, NULL), NVME_SCT_GENERIC, NVME_SC_INVALID_OPCODE));
	CHECK(ST_IS(zt_send(ns, 0, NVME_ZSA_OPEN, false), NVME_SCT_GENERIC, NVME_SC_INVALID_OPCODE));
	CHECK(ZST_IS(zt_write(ns, 1, 1, w), NVME_SC_ZONE_INVALID_WRITE));
	CHECK_EQ(zt_write(ns, 0, 1, w), 0);
	emu_ns_set_command_sets(ns, true);
	CHECK_EQ(zt_send(ns, 0, NVME_ZSA_OPEN, false), 0);
	/* a controller reset closes opened zones */
	emu_ns_reset(ns);
	CHECK_EQ(zt_state(ns, 0), NVME_ZS_CLOSED);
	/* Format empties every zone and keeps the zone size in bytes */
	CHECK_EQ(emu_ns_format(ns, 0, 0), 0);
	CHECK_EQ(emu_ns_lba_size(ns), 512);
	CHECK_EQ(zt_state(ns, 0), NVME_ZS_EMPTY);
	CHECK_EQ(zt_zone(ns, ZSZE * 8).zslba, ZSZE * 8);
	CHECK_EQ(zt_zone(ns, ZSZE * 8).zcap, ZCAP * 8);
	free(w);
	emu_ns_destroy(ns);
}

TEST_MAIN(TEST(test_identify), TEST(test_bad_geometry), TEST(test_sequential_writes),
	  TEST(test_append), TEST(test_transitions), TEST(test_resources), TEST(test_select_all),
	  TEST(test_report), TEST(test_read_only_offline), TEST(test_command_sets))
