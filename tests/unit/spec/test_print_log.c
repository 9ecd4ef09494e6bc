/* SPDX-License-Identifier: BSD-3-Clause */
/* Log page printers: SMART, error information, firmware slots, commands supported and effects. */
#include <unvme/print.h>

#include "print_capture.h"
#include "tests/unit/test_util.h"

static void fill_smart(struct nvme_smart_log *s)
{
	memset(s, 0, sizeof(*s));
	s->critical_warning = NVME_SMART_CW_SPARE | NVME_SMART_CW_TEMP;
	s->temperature = 310;
	s->avail_spare = 100;
	s->spare_thresh = 10;
	s->percent_used = 3;
	s->data_units_read.lo = 2000;  /* 2000 * 512000 bytes */
	s->data_units_written.hi = 1;  /* 2^64 units: beyond a 64-bit JSON integer */
	s->host_reads.lo = 12345;
	s->power_on_hours.lo = 42;
	s->media_errors.lo = 1;
	s->warning_temp_time = 5;
	s->temp_sensor[0] = 300;
	s->temp_sensor[2] = 320;
	s->thm_temp2_total_time = 77;
}

static void test_smart_text(void)
{
	static struct nvme_smart_log s;
	struct capture cap;
	fill_smart(&s);
	unvme_print_smart_log(capture_begin(&cap), &s, UNVME_FMT_TEXT);
	const char *t = capture_end(&cap);
	CHECK(has_line(t, "critical_warning      : 0x3 (available spare below threshold, temperature outside threshold)"));
	CHECK(has_line(t, "temperature           : 310 K (37 C)"));
	CHECK(has_line(t, "avail_spare           : 100%"));
	CHECK(has_line(t, "spare_thresh          : 10%"));
	CHECK(has_line(t, "percent_used          : 3%"));
	CHECK(has_line(t, "data_units_read       : 2000 (1.02 GB)"));
	CHECK(has_line_starting(t, "data_units_written    : 18446744073709551616 ("));
	CHECK(has_line(t, "host_reads            : 12345 commands"));
	CHECK(has_line(t, "power_on_hours        : 42 h"));
	CHECK(has_line(t, "media_errors          : 1"));
	CHECK(has_line(t, "warning_temp_time     : 5 min"));
	CHECK(has_line(t, "temp_sensor_1         : 300 K (27 C)"));
	CHECK(has_line(t, "temp_sensor_3         : 320 K (47 C)"));
	CHECK(!has_line_starting(t, "temp_sensor_2")); /* not implemented */
	CHECK(has_line(t, "thm_temp2_total_time  : 77 s"));
	capture_free(&cap);
}

static void test_smart_json(void)
{
	static struct nvme_smart_log s;
	struct capture cap;
	fill_smart(&s);
	unvme_print_smart_log(capture_begin(&cap), &s, UNVME_FMT_JSON);
	capture_end(&cap);
	json_object *j = capture_json(&cap);
	REQUIRE(j != NULL);
	CHECK_EQ(jint(j, "critical_warning"), 3);
	CHECK_EQ(jint(j, "temperature"), 310);
	CHECK_EQ(jint(j, "percent_used"), 3);
	CHECK_EQ(jint(j, "data_units_read"), 2000);
	CHECK_STREQ(jstr(j, "data_units_written"), "18446744073709551616");
	CHECK_EQ(jint(j, "host_reads"), 12345);
	CHECK_EQ(jint(j, "power_on_hours"), 42);
	CHECK_EQ(jint(j, "num_err_log_entries"), 0);
	json_object *sensors = jget(j, "temp_sensor");
	CHECK_EQ(jlen(sensors), 8);
	CHECK_EQ(json_object_get_int64(jidx(sensors, 2)), 320);
	CHECK_EQ(jint(j, "thm_temp2_total_time"), 77);
	json_object_put(j);
	capture_free(&cap);
}

static void test_smart_counter_just_below_2_pow_64_is_a_number(void)
{
	static struct nvme_smart_log s;
	struct capture cap;
	fill_smart(&s);
	s.host_writes.lo = UINT64_MAX;
	unvme_print_smart_log(capture_begin(&cap), &s, UNVME_FMT_JSON);
	capture_end(&cap);
	json_object *j = capture_json(&cap);
	REQUIRE(j != NULL);
	json_object *v = jget(j, "host_writes");
	CHECK(v && json_object_is_type(v, json_type_int));
	CHECK(json_object_get_uint64(v) == UINT64_MAX);
	json_object_put(j);
	capture_free(&cap);
}

static void fill_errors(struct nvme_error_log e[4])
{
	memset(e, 0, 4 * sizeof(e[0]));
	e[0].error_count = 7;
	e[0].sqid = 1;
	e[0].cid = 0x12;
	/* LBA Out of Range with DNR and the phase tag set, as a completion would carry it */
	e[0].status = (uint16_t)(NVME_CQE_STATUS(NVME_SCT_GENERIC, NVME_SC_LBA_OUT_OF_RANGE) | 1u | 1u << 15);
	e[0].param_loc = 0xffff;
	e[0].lba = 0x123456789ull;
	e[0].nsid = 1;
	e[2].error_count = 5;
	e[2].status = NVME_CQE_STATUS(NVME_SCT_CMD, NVME_SC_INVALID_LOG_PAGE);
	e[2].param_loc = 0x128; /* byte 40, bit 1 */
}

static void test_error_log_skips_empty_entries(void)
{
	static struct nvme_error_log e[4];
	struct capture cap;
	fill_errors(e);
	unvme_print_error_log(capture_begin(&cap), e, 4, UNVME_FMT_JSON);
	capture_end(&cap);
	json_object *j = capture_json(&cap);
	REQUIRE(j != NULL);
	json_object *errors = jget(j, "errors");
	CHECK_EQ(jlen(errors), 2);
	json_object *first = jidx(errors, 0), *second = jidx(errors, 1);
	CHECK_EQ(jint(first, "error_count"), 7);
	CHECK_EQ(jint(first, "sqid"), 1);
	CHECK_EQ(jint(first, "cid"), 0x12);
	CHECK_EQ(jint(first, "status"), e[0].status);
	CHECK_STREQ(jstr(first, "status_name"), "LBA Out of Range");
	CHECK_EQ(jint(first, "param_loc"), 0xffff);
	CHECK_EQ(jint(first, "lba"), 0x123456789ll);
	CHECK_EQ(jint(first, "nsid"), 1);
	CHECK_EQ(jint(second, "error_count"), 5);
	CHECK_STREQ(jstr(second, "status_name"), "Invalid Log Page");
	json_object_put(j);
	capture_free(&cap);
}

static void test_error_log_text(void)
{
	static struct nvme_error_log e[4];
	struct capture cap;
	fill_errors(e);
	unvme_print_error_log(capture_begin(&cap), e, 4, UNVME_FMT_TEXT);
	const char *t = capture_end(&cap);
	CHECK(has_line(t, "entry[0]"));
	CHECK(!has_line(t, "entry[1]"));
	CHECK(has_line(t, "entry[2]"));
	CHECK(!has_line(t, "entry[3]"));
	CHECK(has_line(t, "status      : 0x8101 (LBA Out of Range, DNR)"));
	CHECK(has_line(t, "param_loc   : 0xffff (not applicable)"));
	CHECK(has_line(t, "param_loc   : 0x128 (byte 40, bit 1)"));
	CHECK(has_line(t, "lba         : 0x123456789"));
	capture_free(&cap);
}

static void test_error_log_all_empty_is_an_empty_array(void)
{
	static struct nvme_error_log e[4];
	struct capture cap;
	memset(e, 0, sizeof(e));
	unvme_print_error_log(capture_begin(&cap), e, 4, UNVME_FMT_JSON);
	capture_end(&cap);
	json_object *j = capture_json(&cap);
	REQUIRE(j != NULL);
	CHECK_EQ(jlen(jget(j, "errors")), 0);
	json_object_put(j);
	capture_free(&cap);
}

static void test_fw_slot_log(void)
{
	static struct nvme_fw_slot_log fw;
	struct capture cap;
	memset(&fw, 0, sizeof(fw));
	fw.afi = 0x21; /* slot 1 active, slot 2 at the next reset */
	memcpy(fw.frs[0], "1.0     ", 8);
	memcpy(fw.frs[1], "2.0rc1  ", 8);
	memcpy(fw.frs[6], "7.7.7.77", 8);
	unvme_print_fw_slot_log(capture_begin(&cap), &fw, UNVME_FMT_TEXT);
	const char *t = capture_end(&cap);
	CHECK(has_line(t, "afi  : 0x21 (active slot 1, next reset activates: slot 2)"));
	CHECK(has_line(t, "frs1 : 1.0"));
	CHECK(has_line(t, "frs2 : 2.0rc1"));
	CHECK(has_line(t, "frs7 : 7.7.7.77"));
	CHECK(!has_line_starting(t, "frs3"));
	capture_free(&cap);

	unvme_print_fw_slot_log(capture_begin(&cap), &fw, UNVME_FMT_JSON);
	capture_end(&cap);
	json_object *j = capture_json(&cap);
	REQUIRE(j != NULL);
	CHECK_EQ(jint(j, "afi"), 0x21);
	CHECK_STREQ(jstr(j, "frs1"), "1.0");
	CHECK_STREQ(jstr(j, "frs2"), "2.0rc1");
	CHECK_STREQ(jstr(j, "frs7"), "7.7.7.77");
	CHECK(jget(j, "frs3") == NULL);
	json_object_put(j);
	capture_free(&cap);
}

static void test_fw_slot_log_without_pending_activation(void)
{
	static struct nvme_fw_slot_log fw;
	struct capture cap;
	memset(&fw, 0, sizeof(fw));
	fw.afi = 0x3;
	unvme_print_fw_slot_log(capture_begin(&cap), &fw, UNVME_FMT_TEXT);
	const char *t = capture_end(&cap);
	CHECK(has_line(t, "afi  : 0x3 (active slot 3, next reset activates: unchanged)"));
	capture_free(&cap);
}

static void test_cmd_effects_log(void)
{
	static struct nvme_cmd_effects_log log;
	struct capture cap;
	memset(&log, 0, sizeof(log));
	log.acs[NVME_ADM_IDENTIFY] = NVME_CMD_EFFECTS_CSUPP;
	log.acs[NVME_ADM_GET_LOG_PAGE] = NVME_CMD_EFFECTS_CSUPP;
	log.acs[NVME_ADM_FORMAT_NVM] = NVME_CMD_EFFECTS_CSUPP | NVME_CMD_EFFECTS_LBCC | NVME_CMD_EFFECTS_NCC |
				       NVME_CMD_EFFECTS_NIC | 2u << 16;
	log.iocs[NVME_CMD_WRITE] = NVME_CMD_EFFECTS_CSUPP | NVME_CMD_EFFECTS_LBCC;
	log.iocs[NVME_CMD_READ] = NVME_CMD_EFFECTS_CSUPP;
	log.iocs[NVME_CMD_DSM] = NVME_CMD_EFFECTS_CSUPP | NVME_CMD_EFFECTS_LBCC | 1u << 16;

	unvme_print_cmd_effects_log(capture_begin(&cap), &log, UNVME_FMT_TEXT);
	const char *t = capture_end(&cap);
	CHECK(has_line_starting(t, "ACS  06 [Identify "));
	CHECK(strstr(t, "] 00000001 CSUPP\n") != NULL);
	CHECK(strstr(t, "] 0002000f CSUPP, LBCC, NCC, NIC, one at a time per controller\n") != NULL);
	CHECK(has_line_starting(t, "IOCS 01 [Write "));
	CHECK(strstr(t, "] 00010003 CSUPP, LBCC, one at a time per namespace\n") != NULL);
	CHECK(!has_line_starting(t, "ACS  00"));
	capture_free(&cap);

	unvme_print_cmd_effects_log(capture_begin(&cap), &log, UNVME_FMT_JSON);
	capture_end(&cap);
	json_object *j = capture_json(&cap);
	REQUIRE(j != NULL);
	json_object *acs = jget(j, "acs"), *iocs = jget(j, "iocs");
	CHECK_EQ(jlen(acs), 3);
	CHECK_EQ(jlen(iocs), 3);
	/* In opcode order. */
	CHECK_EQ(jint(jidx(acs, 0), "opcode"), NVME_ADM_GET_LOG_PAGE);
	CHECK_EQ(jint(jidx(acs, 1), "opcode"), NVME_ADM_IDENTIFY);
	CHECK_EQ(jint(jidx(acs, 2), "opcode"), NVME_ADM_FORMAT_NVM);
	CHECK_EQ(jint(jidx(acs, 2), "effects"), 0x2000f);
	CHECK_EQ(jint(jidx(iocs, 2), "opcode"), NVME_CMD_DSM);
	json_object_put(j);
	capture_free(&cap);
}

TEST_MAIN(TEST(test_smart_text), TEST(test_smart_json), TEST(test_smart_counter_just_below_2_pow_64_is_a_number),
	  TEST(test_error_log_skips_empty_entries), TEST(test_error_log_text),
	  TEST(test_error_log_all_empty_is_an_empty_array), TEST(test_fw_slot_log),
	  TEST(test_fw_slot_log_without_pending_activation), TEST(test_cmd_effects_log))
