/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Firmware download / commit / activation, and the non-volatile state that survives a
 * device being destroyed and created again: firmware slots, power cycles, unsafe shutdowns,
 * SMART counters, saved features, the LBA format. Saving is durable when the command
 * completes: the durability spy checks the state file and its name were synced.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "emu_test_host.h"
#include "hw/emu/emu_ctrl.h"
#include "tests/unit/durability_spy.h"
#include "tests/unit/test_util.h"

#define ST(sct, sc) NVME_STATUS(sct, sc)

static char dir[64];
static char uri[512];
static char state_path[256];

static void make_dir(void)
{
	if (dir[0])
		return;
	snprintf(dir, sizeof(dir), "/tmp/unvme-emu-state-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		exit(1);
	}
}

/* A fresh file-backed device description (and no state file yet). */
static void fresh(const char *name)
{
	make_dir();
	char img[128];
	snprintf(img, sizeof(img), "%s/%s.img", dir, name);
	snprintf(state_path, sizeof(state_path), "%s.ctrl", img);
	unlink(img);
	unlink(state_path);
	snprintf(uri, sizeof(uri), "emu://%s?ns=file:1M:512:%s", name, img);
}

static int open_ready(struct th *h)
{
	if (th_open(h, uri)) {
		fprintf(stderr, "  create: %s\n", h->err);
		return -1;
	}
	return (th_enable(h, 16, 16) & NVME_CSTS_RDY) ? 0 : -1;
}

static void shutdown_ctrl(struct th *h)
{
	uint32_t cc = th_read32(h, NVME_REG_CC);
	th_write32(h, NVME_REG_CC, cc | NVME_CC_SHN_SET(NVME_CC_SHN_NORMAL));
}

static uint8_t *smart(struct th *h)
{
	uint8_t *b = th_alloc(h, 4096, 4096, NULL);
	return th_get_log(h, NVME_LOG_SMART, 0, 0, 512, b) ? NULL : b;
}

static void test_crc32(void)
{
	/* the standard check value of CRC-32 (IEEE 802.3, zlib) */
	CHECK_EQ(emu_crc32("123456789", 9), 0xcbf43926u);
	CHECK_EQ(emu_crc32("", 0), 0);
}

/* header + payload, as docs/devices.md describes */
static uint32_t build_image(uint8_t *img, const char *rev, uint32_t payload_len)
{
	memset(img, 0, 32);
	memcpy(img, "UNVMEFW1", 8);
	memset(img + 8, ' ', 8);
	memcpy(img + 8, rev, strlen(rev));
	for (uint32_t i = 0; i < payload_len; i++)
		img[32 + i] = (uint8_t)(i * 131 + 7);
	uint32_t crc = emu_crc32(img + 32, payload_len);
	memcpy(img + 16, &payload_len, 4);
	memcpy(img + 20, &crc, 4);
	return 32 + payload_len;
}

static int fw_download(struct th *h, const uint8_t *img, uint32_t off, uint32_t len)
{
	struct nvme_sqe cmd = { .opc = NVME_ADM_FW_DOWNLOAD, .cdw10 = len / 4 - 1, .cdw11 = off / 4,
				.prp1 = th_iova(h, img + off) };
	/* pieces here are at most two pages and start page aligned in the arena */
	if ((th_iova(h, img + off) & 4095) + len > 4096)
		cmd.prp2 = (th_iova(h, img + off) & ~4095ull) + 4096;
	return th_admin(h, &cmd, NULL);
}

static int fw_commit(struct th *h, uint32_t slot, uint32_t ca)
{
	struct nvme_sqe cmd = { .opc = NVME_ADM_FW_COMMIT, .cdw10 = ca << 3 | slot };
	return th_admin(h, &cmd, NULL);
}

static void read_fr(struct th *h, char fr[9])
{
	struct nvme_id_ctrl *id = th_alloc(h, 4096, 4096, NULL);
	memset(fr, 0, 9);
	if (th_identify(h, NVME_CNS_CTRL, 0, 0, id) == 0)
		memcpy(fr, id->fr, 8);
}

static struct nvme_fw_slot_log *slot_log(struct th *h)
{
	struct nvme_fw_slot_log *log = th_alloc(h, 4096, 4096, NULL);
	return th_get_log(h, NVME_LOG_FW_SLOT, 0, 0, 512, log) ? NULL : log;
}

static void test_firmware_download_rules(void)
{
	fresh("fwrules");
	struct th h;
	REQUIRE(open_ready(&h) == 0);
	uint8_t *img = th_alloc(&h, 16384, 4096, NULL);
	uint32_t len = build_image(img, "NEW1", 9000); /* 9032 bytes: 3 pieces, the last short */
	const int invalid_field = ST(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD);
	const int invalid_image = ST(NVME_SCT_CMD, NVME_SC_INVALID_FW_IMAGE);
	const int invalid_slot = ST(NVME_SCT_CMD, NVME_SC_INVALID_FW_SLOT);
	/* nothing downloaded yet */
	CHECK_EQ(fw_commit(&h, 2, NVME_FW_CA_REPLACE), invalid_image);
	/* offsets must be multiples of 4 KiB */
	CHECK_EQ(fw_download(&h, img, 1024, 1024), invalid_field);
	/* pieces in any order, but not overlapping */
	CHECK_EQ(fw_download(&h, img, 4096, 4096), 0);
	CHECK_EQ(fw_download(&h, img, 4096, 4096), ST(NVME_SCT_CMD, NVME_SC_OVERLAPPING_RANGE));
	/* a short piece is the last one: nothing may lie beyond it, and it may not end before
	 * data already there */
	CHECK_EQ(fw_download(&h, img, 0, 1024), invalid_field);
	CHECK_EQ(fw_download(&h, img, 8192, len - 8192), 0);
	CHECK_EQ(fw_download(&h, img, 12288, 4096), invalid_field);
	/* the first piece is missing: the image has a hole */
	CHECK_EQ(fw_commit(&h, 2, NVME_FW_CA_REPLACE), invalid_image);
	CHECK_EQ(fw_download(&h, img, 0, 4096), 0);
	/* slots: 1 is read-only, 4 does not exist; boot partition actions are not supported */
	CHECK_EQ(fw_commit(&h, 1, NVME_FW_CA_REPLACE), invalid_slot);
	CHECK_EQ(fw_commit(&h, 4, NVME_FW_CA_REPLACE), invalid_slot);
	CHECK_EQ(fw_commit(&h, 2, 6), invalid_field);
	CHECK_EQ(fw_commit(&h, 3, NVME_FW_CA_ACTIVATE), invalid_image); /* empty slot */
	CHECK_EQ(fw_commit(&h, 2, NVME_FW_CA_REPLACE), 0);
	struct nvme_fw_slot_log *log = slot_log(&h);
	REQUIRE(log);
	CHECK_EQ(log->afi, 1);
	CHECK(memcmp(log->frs[1], "NEW1    ", 8) == 0);
	/* the staged image was consumed */
	CHECK_EQ(fw_commit(&h, 3, NVME_FW_CA_REPLACE), invalid_image);

	/* corrupted images are refused at commit */
	struct {
		const char *what;
		uint32_t off;
		uint8_t val;
	} corrupt[] = {
		{ "payload byte", 100, 0xff },
		{ "magic", 0, 'X' },
		{ "reserved byte", 30, 1 },
		{ "revision control character", 9, 0x40 }, /* A -> 0x01 */
		{ "payload length", 17, 0x40 },
	};
	for (size_t i = 0; i < sizeof(corrupt) / sizeof(corrupt[0]); i++) {
		uint32_t n = build_image(img, "BAD", 2000);
		img[corrupt[i].off] ^= corrupt[i].val;
		uint32_t dl = (n + 3) & ~3u;
		CHECK_EQ(fw_download(&h, img, 0, dl), 0);
		if (fw_commit(&h, 3, NVME_FW_CA_REPLACE) != invalid_image) {
			fprintf(stderr, "  corrupt %s accepted\n", corrupt[i].what);
			CHECK(0);
		}
		/* a failed commit leaves the staged image: start over with a reset */
		th_disable(&h);
		REQUIRE(th_enable(&h, 16, 16) & NVME_CSTS_RDY);
	}
	th_close(&h);
}

static void test_firmware_activation_and_persistence(void)
{
	fresh("fwact");
	struct th h;
	REQUIRE(open_ready(&h) == 0);
	char fr[9];
	read_fr(&h, fr);
	CHECK_STREQ(fr, "EMU1.0  ");
	uint8_t *img = th_alloc(&h, 16384, 4096, NULL);
	uint32_t len = build_image(img, "REV2", 5000);
	CHECK_EQ(fw_download(&h, img, 0, 4096), 0);
	CHECK_EQ(fw_download(&h, img, 4096, ((len + 3) & ~3u) - 4096), 0);
	/* replace, activate at the next reset: FR does not change until then */
	CHECK_EQ(fw_commit(&h, 0, NVME_FW_CA_REPLACE_ACTIVATE), 0);
	read_fr(&h, fr);
	CHECK_STREQ(fr, "EMU1.0  ");
	struct nvme_fw_slot_log *log = slot_log(&h);
	REQUIRE(log);
	CHECK_EQ(NVME_FW_AFI_ACTIVE(log->afi), 1);
	CHECK_EQ(NVME_FW_AFI_NEXT(log->afi), 2); /* the controller chose slot 2 */
	th_disable(&h);
	REQUIRE(th_enable(&h, 16, 16) & NVME_CSTS_RDY);
	read_fr(&h, fr);
	CHECK_STREQ(fr, "REV2    ");
	log = slot_log(&h);
	REQUIRE(log);
	CHECK_EQ(log->afi, 2);
	/* a third image into slot 3, activated at once */
	len = build_image(img, "REV3", 100);
	CHECK_EQ(fw_download(&h, img, 0, (len + 3) & ~3u), 0);
	CHECK_EQ(fw_commit(&h, 3, NVME_FW_CA_REPLACE), 0);
	read_fr(&h, fr);
	CHECK_STREQ(fr, "REV2    ");
	CHECK_EQ(fw_commit(&h, 3, NVME_FW_CA_ACTIVATE_NOW), 0);
	read_fr(&h, fr);
	CHECK_STREQ(fr, "REV3    ");
	/* slot 2 to be activated at the next reset; the device is unplugged first: the power
	 * cycle is that reset */
	CHECK_EQ(fw_commit(&h, 2, NVME_FW_CA_ACTIVATE), 0);
	shutdown_ctrl(&h);
	th_close(&h);

	/* power on again: slots and the activation come back from the state file */
	REQUIRE(open_ready(&h) == 0);
	read_fr(&h, fr);
	CHECK_STREQ(fr, "REV2    ");
	log = slot_log(&h);
	REQUIRE(log);
	CHECK_EQ(log->afi, 2);
	CHECK(memcmp(log->frs[0], "EMU1.0  ", 8) == 0);
	CHECK(memcmp(log->frs[1], "REV2    ", 8) == 0);
	CHECK(memcmp(log->frs[2], "REV3    ", 8) == 0);
	/* an activation with CA 3 is remembered across power cycles too */
	CHECK_EQ(fw_commit(&h, 3, NVME_FW_CA_ACTIVATE_NOW), 0);
	th_close(&h);
	REQUIRE(open_ready(&h) == 0);
	read_fr(&h, fr);
	CHECK_STREQ(fr, "REV3    ");
	th_close(&h);
}

static void test_power_cycles_and_unsafe_shutdowns(void)
{
	fresh("power");
	struct th h;
	REQUIRE(open_ready(&h) == 0);
	struct th_queue q;
	REQUIRE(th_create_qpair(&h, &q, 1, 16) == 0);
	uint8_t *data = th_alloc(&h, 4096, 4096, NULL);
	for (int i = 0; i < 5; i++)
		CHECK_EQ(th_rw(&h, &q, NVME_CMD_WRITE, 1, i, 1, data), 0);
	struct nvme_smart_log *s = (struct nvme_smart_log *)smart(&h);
	REQUIRE(s);
	CHECK_EQ(s->power_cycles.lo, 1);
	CHECK_EQ(s->unsafe_shutdowns.lo, 0);
	th_close(&h); /* no CC.SHN: the next power-on counts an unsafe shutdown */

	REQUIRE(open_ready(&h) == 0);
	s = (struct nvme_smart_log *)smart(&h);
	REQUIRE(s);
	CHECK_EQ(s->power_cycles.lo, 2);
	CHECK_EQ(s->unsafe_shutdowns.lo, 1);
	CHECK_EQ(s->host_writes.lo, 5); /* carried over */
	shutdown_ctrl(&h);
	th_close(&h);

	REQUIRE(open_ready(&h) == 0);
	s = (struct nvme_smart_log *)smart(&h);
	REQUIRE(s);
	CHECK_EQ(s->power_cycles.lo, 3);
	CHECK_EQ(s->unsafe_shutdowns.lo, 1);
	/* a shutdown, then re-enabled and crashed: unsafe again */
	shutdown_ctrl(&h);
	th_disable(&h);
	REQUIRE(th_enable(&h, 16, 16) & NVME_CSTS_RDY);
	th_close(&h);
	REQUIRE(open_ready(&h) == 0);
	s = (struct nvme_smart_log *)smart(&h);
	REQUIRE(s);
	CHECK_EQ(s->unsafe_shutdowns.lo, 2);
	th_close(&h);
}

static void test_saved_features(void)
{
	fresh("feat");
	struct th h;
	REQUIRE(open_ready(&h) == 0);
	struct nvme_id_ctrl *id = th_alloc(&h, 4096, 4096, NULL);
	REQUIRE(th_identify(&h, NVME_CNS_CTRL, 0, 0, id) == 0);
	CHECK(id->oncs & NVME_CTRL_ONCS_FEAT_SAVE);
	struct nvme_cqe e;
	struct nvme_sqe set = { .opc = NVME_ADM_SET_FEATURES, .cdw10 = NVME_FEAT_VOLATILE_WC | NVME_FEAT_SAVE };
	durability_spy_reset();
	CHECK_EQ(th_admin(&h, &set, NULL), 0);
	/* saved: a power loss now keeps it (the new file's bytes and its name) */
	CHECK(durability_spy_file(state_path).syncs > 0);
	CHECK(durability_spy_durable(state_path));
	durability_spy_disarm();
	struct nvme_sqe arb = { .opc = NVME_ADM_SET_FEATURES, .cdw10 = NVME_FEAT_ARBITRATION, .cdw11 = 3 };
	CHECK_EQ(th_admin(&h, &arb, NULL), 0); /* current only */
	struct nvme_sqe nq = { .opc = NVME_ADM_SET_FEATURES, .cdw10 = NVME_FEAT_NUM_QUEUES | NVME_FEAT_SAVE };
	CHECK_EQ(th_admin(&h, &nq, NULL), ST(NVME_SCT_CMD, NVME_SC_FEATURE_NOT_SAVEABLE));
	struct nvme_sqe cap = { .opc = NVME_ADM_GET_FEATURES, .cdw10 = NVME_FEAT_VOLATILE_WC | NVME_FEAT_SEL_SUPPORTED << 8 };
	CHECK_EQ(th_admin(&h, &cap, &e), 0);
	CHECK_EQ(e.dw0, 5); /* saveable and changeable */
	th_close(&h);

	REQUIRE(open_ready(&h) == 0);
	struct nvme_sqe get = { .opc = NVME_ADM_GET_FEATURES, .cdw10 = NVME_FEAT_VOLATILE_WC };
	CHECK_EQ(th_admin(&h, &get, &e), 0);
	CHECK_EQ(e.dw0, 0); /* the saved value is current after power-on */
	get.cdw10 = NVME_FEAT_VOLATILE_WC | NVME_FEAT_SEL_SAVED << 8;
	CHECK_EQ(th_admin(&h, &get, &e), 0);
	CHECK_EQ(e.dw0, 0);
	get.cdw10 = NVME_FEAT_VOLATILE_WC | NVME_FEAT_SEL_DEFAULT << 8;
	CHECK_EQ(th_admin(&h, &get, &e), 0);
	CHECK_EQ(e.dw0, 1);
	get.cdw10 = NVME_FEAT_ARBITRATION;
	CHECK_EQ(th_admin(&h, &get, &e), 0);
	CHECK_EQ(e.dw0, 5); /* not saved: default */
	th_close(&h);
}

static void test_format_remembered(void)
{
	fresh("format");
	struct th h;
	REQUIRE(open_ready(&h) == 0);
	struct nvme_sqe f = { .opc = NVME_ADM_FORMAT_NVM, .nsid = 1, .cdw10 = 1 };
	CHECK_EQ(th_admin(&h, &f, NULL), 0);
	th_close(&h);
	REQUIRE(open_ready(&h) == 0); /* the URI still says 512 */
	struct nvme_id_ns *ns = th_alloc(&h, 4096, 4096, NULL);
	CHECK_EQ(th_identify(&h, NVME_CNS_NS, 1, 0, ns), 0);
	CHECK_EQ(nvme_ns_lba_size(ns), 4096);
	th_close(&h);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void test_corrupt_state_file(void)
{
	fresh("corrupt");
	const char *bad[] = {
		"{ not json",
		"[1, 2]",
		"{\"format\": \"something-else\", \"version\": 1}",
		"{\"format\": \"unvme-emu-state\", \"version\": 99}",
		"{\"format\": \"unvme-emu-state\", \"version\": 1, \"power_cycles\": \"many\"}",
		"{\"format\": \"unvme-emu-state\", \"version\": 1, \"power_cycles\": -4}",
		"{\"format\": \"unvme-emu-state\", \"version\": 1, \"firmware\": {\"active_slot\": 9}}",
		"{\"format\": \"unvme-emu-state\", \"version\": 1, \"namespaces\": {\"1\": {\"lba_size\": 1000}}}",
		"{\"format\": \"unvme-emu-state\", \"version\": 1} trailing",
		"",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		write_text(state_path, bad[i]);
		struct emu_device *dev = NULL;
		char err[512];
		int rc = emu_device_create(uri, &dev, err, sizeof(err));
		CHECK_EQ(rc, -EINVAL);
		CHECK(dev == NULL);
		if (!strstr(err, state_path) || !strstr(err, "corrupt")) {
			fprintf(stderr, "  state \"%s\": message \"%s\"\n", bad[i], err);
			CHECK(0);
		}
		if (dev)
			emu_device_destroy(dev);
	}
	/* a valid minimal file works, and unknown keys are ignored */
	write_text(state_path, "{\"format\": \"unvme-emu-state\", \"version\": 1, \"future\": [1]}");
	struct emu_device *dev = NULL;
	char err[512];
	CHECK_EQ(emu_device_create(uri, &dev, err, sizeof(err)), 0);
	emu_device_destroy(dev);
}

/* Without a file namespace there is no state file: nothing is remembered. */
static void test_volatile_device(void)
{
	struct th h;
	REQUIRE(th_open(&h, "emu://vol?ns=mem:1M") == 0);
	REQUIRE(th_enable(&h, 8, 8) & NVME_CSTS_RDY);
	struct nvme_smart_log *s = (struct nvme_smart_log *)smart(&h);
	REQUIRE(s);
	CHECK_EQ(s->power_cycles.lo, 1);
	th_close(&h);
	REQUIRE(th_open(&h, "emu://vol?ns=mem:1M") == 0);
	REQUIRE(th_enable(&h, 8, 8) & NVME_CSTS_RDY);
	s = (struct nvme_smart_log *)smart(&h);
	REQUIRE(s);
	CHECK_EQ(s->power_cycles.lo, 1);
	CHECK_EQ(s->unsafe_shutdowns.lo, 0);
	th_close(&h);
}

static void test_cleanup(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK_EQ(system(cmd), 0);
}

TEST_MAIN(TEST(test_crc32), TEST(test_firmware_download_rules),
	  TEST(test_firmware_activation_and_persistence), TEST(test_power_cycles_and_unsafe_shutdowns),
	  TEST(test_saved_features), TEST(test_format_remembered), TEST(test_corrupt_state_file),
	  TEST(test_volatile_device), TEST(test_cleanup))
