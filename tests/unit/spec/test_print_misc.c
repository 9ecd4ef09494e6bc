/* SPDX-License-Identifier: BSD-3-Clause */
/* Register, queue entry, status and hex dump printers. */
#include <unvme/print.h>

#include "print_capture.h"
#include "tests/unit/test_util.h"

static struct nvme_regs_snapshot sample_regs(void)
{
	struct nvme_regs_snapshot r = {
		.cap = nvme_cap_make(1023, 1, 20, 2, NVME_CAP_CSS_NVM | NVME_CAP_CSS_IOCS, 0, 4),
		.vs = NVME_VS(1, 4, 0),
		.cc = NVME_CC_EN | NVME_CC_CSS_SET(NVME_CC_CSS_IOCS) | NVME_CC_IOSQES_SET(6) | NVME_CC_IOCQES_SET(4),
		.csts = NVME_CSTS_RDY | NVME_CSTS_CFS,
		.aqa = NVME_AQA_MAKE(32, 16),
		.asq = 0x10000,
		.acq = 0x20000,
	};
	return r;
}

static void test_regs_text_decodes_fields(void)
{
	struct nvme_regs_snapshot r = sample_regs();
	struct capture cap;
	unvme_print_regs(capture_begin(&cap), &r, UNVME_FMT_TEXT);
	const char *t = capture_end(&cap);
	char line[64];
	snprintf(line, sizeof(line), "cap      : %#llx", (unsigned long long)r.cap);
	CHECK(has_line(t, line));
	CHECK(has_line(t, "  mqes   : 1023 (1024 entries)"));
	CHECK(has_line(t, "  cqr    : 1 (contiguous queues required)"));
	CHECK(has_line(t, "  to     : 20 (10000 ms)"));
	CHECK(has_line(t, "  dstrd  : 2 (16-byte doorbell stride)"));
	CHECK(has_line(t, "  css    : 0x41 (NVM, I/O command sets)"));
	CHECK(has_line(t, "  mpsmin : 0 (4096-byte pages)"));
	CHECK(has_line(t, "  mpsmax : 4 (65536-byte pages)"));
	CHECK(has_line(t, "vs       : 0x10400"));
	CHECK(has_line(t, "  mnr    : 4"));
	CHECK(has_line(t, "  en     : 1"));
	CHECK(has_line(t, "  css    : 6 (all supported I/O command sets)"));
	CHECK(has_line(t, "  iosqes : 6 (64-byte entries)"));
	CHECK(has_line(t, "  iocqes : 4 (16-byte entries)"));
	CHECK(has_line(t, "  rdy    : 1 (ready)"));
	CHECK(has_line(t, "  cfs    : 1 (controller fatal status)"));
	CHECK(has_line(t, "  asqs   : 31 (32 entries)"));
	CHECK(has_line(t, "  acqs   : 15 (16 entries)"));
	CHECK(has_line(t, "asq      : 0x10000"));
	capture_free(&cap);
}

static void test_regs_json_nests_each_register(void)
{
	struct nvme_regs_snapshot r = sample_regs();
	struct capture cap;
	unvme_print_regs(capture_begin(&cap), &r, UNVME_FMT_JSON);
	capture_end(&cap);
	json_object *j = capture_json(&cap);
	REQUIRE(j != NULL);
	json_object *c = jget(j, "cap_fields");
	CHECK(json_object_get_uint64(jget(j, "cap")) == r.cap);
	CHECK_EQ(jint(c, "mqes"), 1023);
	CHECK_EQ(jint(c, "to"), 20);
	CHECK_EQ(jint(c, "dstrd"), 2);
	CHECK_EQ(jint(c, "css"), 0x41);
	CHECK_EQ(jint(c, "mpsmax"), 4);
	CHECK_EQ(jint(jget(j, "vs_fields"), "mjr"), 1);
	CHECK_EQ(jint(jget(j, "vs_fields"), "mnr"), 4);
	CHECK_EQ(jint(jget(j, "cc_fields"), "en"), 1);
	CHECK_EQ(jint(jget(j, "cc_fields"), "css"), NVME_CC_CSS_IOCS);
	CHECK_EQ(jint(jget(j, "cc_fields"), "iosqes"), 6);
	CHECK_EQ(jint(jget(j, "csts_fields"), "rdy"), 1);
	CHECK_EQ(jint(jget(j, "csts_fields"), "cfs"), 1);
	CHECK_EQ(jint(jget(j, "aqa_fields"), "acqs"), 15);
	CHECK_EQ(jint(j, "asq"), 0x10000);
	CHECK_EQ(jint(j, "acq"), 0x20000);
	json_object_put(j);
	capture_free(&cap);
}

static void test_sqe(void)
{
	struct nvme_sqe sqe = {
		.opc = NVME_ADM_GET_LOG_PAGE,
		.flags = 0x41, /* fused first, PSDT 1 */
		.cid = 0x1234,
		.nsid = 0xffffffff,
		.prp1 = 0xfedcba9876543210ull, /* above INT64_MAX */
		.cdw10 = 0x00ff0002,
		.cdw15 = 7,
	};
	struct capture cap;
	unvme_print_sqe(capture_begin(&cap), &sqe, UNVME_FMT_TEXT);
	const char *t = capture_end(&cap);
	CHECK(has_line(t, "opc    : 0x02 (admin: Get Log Page, I/O: Read)"));
	CHECK(has_line(t, "flags  : 0x41 (fuse 1, psdt 1)"));
	CHECK(has_line(t, "cid    : 0x1234"));
	CHECK(has_line(t, "nsid   : 0xffffffff"));
	CHECK(has_line(t, "prp1   : 0xfedcba9876543210"));
	CHECK(has_line(t, "cdw10  : 0xff0002"));
	capture_free(&cap);

	sqe.opc = 0x03; /* neither an admin nor an NVM opcode */
	unvme_print_sqe(capture_begin(&cap), &sqe, UNVME_FMT_TEXT);
	t = capture_end(&cap);
	CHECK(has_line(t, "opc    : 0x03 (admin: -, I/O: -)"));
	capture_free(&cap);

	unvme_print_sqe(capture_begin(&cap), &sqe, UNVME_FMT_JSON);
	capture_end(&cap);
	json_object *j = capture_json(&cap);
	REQUIRE(j != NULL);
	CHECK_EQ(jint(j, "opc"), 3);
	CHECK_EQ(jint(j, "cid"), 0x1234);
	CHECK(json_object_get_uint64(jget(j, "prp1")) == 0xfedcba9876543210ull);
	CHECK_EQ(jint(j, "cdw10"), 0x00ff0002);
	CHECK_EQ(jint(j, "cdw15"), 7);
	json_object_put(j);
	capture_free(&cap);
}

static void test_cqe_decodes_status(void)
{
	struct nvme_cqe cqe = {
		.dw0 = 0xabcd,
		.sqhd = 17,
		.sqid = 2,
		.cid = 0x33,
		.status = (uint16_t)(NVME_CQE_STATUS(NVME_SCT_CMD, NVME_SC_INVALID_QID) | 1u | 1u << 15),
	};
	struct capture cap;
	unvme_print_cqe(capture_begin(&cap), &cqe, UNVME_FMT_TEXT);
	const char *t = capture_end(&cap);
	CHECK(has_line(t, "dw0    : 0xabcd"));
	CHECK(has_line(t, "sqhd   : 17"));
	CHECK(has_line(t, "status : 0x8203"));
	CHECK(has_line(t, "  p    : 1"));
	CHECK(has_line(t, "  sc   : 0x1"));
	CHECK(has_line(t, "  sct  : 0x1 (Command Specific Status)"));
	CHECK(has_line(t, "  dnr  : 1"));
	CHECK(has_line(t, "  name : Invalid Queue Identifier"));
	capture_free(&cap);

	unvme_print_cqe(capture_begin(&cap), &cqe, UNVME_FMT_JSON);
	capture_end(&cap);
	json_object *j = capture_json(&cap);
	REQUIRE(j != NULL);
	CHECK_EQ(jint(j, "sqid"), 2);
	CHECK_EQ(jint(j, "cid"), 0x33);
	json_object *st = jget(j, "status");
	CHECK_EQ(jint(st, "value"), cqe.status);
	CHECK_EQ(jint(st, "p"), 1);
	CHECK_EQ(jint(st, "sc"), NVME_SC_INVALID_QID);
	CHECK_EQ(jint(st, "sct"), NVME_SCT_CMD);
	CHECK_EQ(jint(st, "crd"), 0);
	CHECK_EQ(jint(st, "m"), 0);
	CHECK_EQ(jint(st, "dnr"), 1);
	CHECK_STREQ(jstr(st, "name"), "Invalid Queue Identifier");
	json_object_put(j);
	capture_free(&cap);
}

static void test_status(void)
{
	struct capture cap;
	unvme_print_status(capture_begin(&cap), NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_LBA_OUT_OF_RANGE),
			   NVME_CSI_NVM, UNVME_FMT_TEXT);
	CHECK(has_line(capture_end(&cap), "NVMe status: LBA Out of Range (SCT 0h Generic Command Status, SC 80h)"));
	capture_free(&cap);

	unvme_print_status(capture_begin(&cap), NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_KV_KEY_NOT_EXIST),
			   NVME_CSI_KV, UNVME_FMT_JSON);
	capture_end(&cap);
	json_object *j = capture_json(&cap);
	REQUIRE(j != NULL);
	CHECK_EQ(jint(j, "status"), 0x87);
	CHECK_EQ(jint(j, "sct"), 0);
	CHECK_EQ(jint(j, "sc"), 0x87);
	CHECK_STREQ(jstr(j, "sct_name"), "Generic Command Status");
	CHECK_STREQ(jstr(j, "name"), "Key Does Not Exist");
	json_object_put(j);
	capture_free(&cap);
}

static void test_status_of_a_host_error(void)
{
	struct capture cap;
	unvme_print_status(capture_begin(&cap), -5, NVME_CSI_NVM, UNVME_FMT_JSON);
	capture_end(&cap);
	json_object *j = capture_json(&cap);
	REQUIRE(j != NULL);
	CHECK_EQ(jint(j, "status"), -5);
	CHECK(jget(j, "sct") == NULL); /* an errno has no status code type */
	const char *name = jstr(j, "name");
	CHECK(name && strncmp(name, "Host error: ", 12) == 0);
	json_object_put(j);
	capture_free(&cap);

	unvme_print_status(capture_begin(&cap), -5, NVME_CSI_NVM, UNVME_FMT_TEXT);
	const char *t = capture_end(&cap);
	CHECK(strncmp(t, "Host error: ", 12) == 0 && strstr(t, "(-5)\n") != NULL);
	capture_free(&cap);
}

static void test_hex(void)
{
	static const char data[] = "hello world, this is";
	struct capture cap;
	unvme_print_hex(capture_begin(&cap), data, 20, UNVME_FMT_TEXT);
	const char *t = capture_end(&cap);
	CHECK(has_line(t, "0000: 68 65 6c 6c 6f 20 77 6f 72 6c 64 2c 20 74 68 69  \"hello world, thi\""));
	CHECK(has_line(t, "0010: 73 20 69 73                                      \"s is\""));
	capture_free(&cap);

	static const uint8_t bin[3] = { 0x00, 0x7f, 0xff };
	unvme_print_hex(capture_begin(&cap), bin, sizeof(bin), UNVME_FMT_TEXT);
	CHECK(has_line(capture_end(&cap),
		       "0000: 00 7f ff                                         \"...\""));
	capture_free(&cap);

	unvme_print_hex(capture_begin(&cap), bin, sizeof(bin), UNVME_FMT_JSON);
	capture_end(&cap);
	json_object *j = capture_json(&cap);
	REQUIRE(j != NULL);
	CHECK_EQ(jint(j, "length"), 3);
	CHECK_STREQ(jstr(j, "data"), "007fff");
	json_object_put(j);
	capture_free(&cap);
}

static void test_hex_of_nothing(void)
{
	struct capture cap;
	unvme_print_hex(capture_begin(&cap), "", 0, UNVME_FMT_TEXT);
	CHECK_EQ(strlen(capture_end(&cap)), 0);
	capture_free(&cap);

	unvme_print_hex(capture_begin(&cap), "", 0, UNVME_FMT_JSON);
	capture_end(&cap);
	json_object *j = capture_json(&cap);
	REQUIRE(j != NULL);
	CHECK_EQ(jint(j, "length"), 0);
	CHECK_STREQ(jstr(j, "data"), "");
	json_object_put(j);
	capture_free(&cap);
}

TEST_MAIN(TEST(test_regs_text_decodes_fields), TEST(test_regs_json_nests_each_register), TEST(test_sqe),
	  TEST(test_cqe_decodes_status), TEST(test_status), TEST(test_status_of_a_host_error), TEST(test_hex),
	  TEST(test_hex_of_nothing))
