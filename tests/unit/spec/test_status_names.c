/* SPDX-License-Identifier: BSD-3-Clause */
/* Status names (unvme_status_str, unvme_sct_str) and the identifier names of lib/spec/names.h. */
#include <pthread.h>

#include <unvme/unvme.h>

#include "lib/spec/names.h"
#include "tests/unit/test_util.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Every code spec/status.h defines, by type. Generic codes 80h..89h are listed per command set. */
static const unsigned generic_codes[] = {
	NVME_SC_SUCCESS, NVME_SC_INVALID_OPCODE, NVME_SC_INVALID_FIELD, NVME_SC_CID_CONFLICT,
	NVME_SC_DATA_TRANSFER_ERROR, NVME_SC_ABORTED_POWER_LOSS, NVME_SC_INTERNAL, NVME_SC_ABORT_REQUESTED,
	NVME_SC_ABORTED_SQ_DELETION, NVME_SC_ABORTED_FAILED_FUSED, NVME_SC_ABORTED_MISSING_FUSED,
	NVME_SC_INVALID_NS_OR_FORMAT, NVME_SC_CMD_SEQ_ERROR, NVME_SC_INVALID_SGL_SEG_DESC,
	NVME_SC_INVALID_NUM_SGL_DESC, NVME_SC_DATA_SGL_LEN_INVALID, NVME_SC_MD_SGL_LEN_INVALID,
	NVME_SC_SGL_DESC_TYPE_INVALID, NVME_SC_INVALID_CMB_USE, NVME_SC_PRP_OFFSET_INVALID,
	NVME_SC_ATOMIC_WU_EXCEEDED, NVME_SC_OPERATION_DENIED, NVME_SC_SGL_OFFSET_INVALID,
	NVME_SC_HOSTID_INCONSISTENT, NVME_SC_KA_EXPIRED, NVME_SC_KA_INVALID, NVME_SC_ABORTED_PREEMPT,
	NVME_SC_SANITIZE_FAILED, NVME_SC_SANITIZE_IN_PROGRESS, NVME_SC_SGL_DATA_BLK_GRAN,
	NVME_SC_CMD_NOT_SUP_CMB_QUEUE, NVME_SC_NS_WRITE_PROTECTED, NVME_SC_CMD_INTERRUPTED,
	NVME_SC_TRANSIENT_TRANSPORT, NVME_SC_PROHIBITED_BY_LOCKDOWN, NVME_SC_ADMIN_MEDIA_NOT_READY,
};
static const unsigned nvm_generic_codes[] = {
	NVME_SC_LBA_OUT_OF_RANGE, NVME_SC_CAPACITY_EXCEEDED, NVME_SC_NS_NOT_READY,
	NVME_SC_RESERVATION_CONFLICT, NVME_SC_FORMAT_IN_PROGRESS,
};
static const unsigned kv_generic_codes[] = {
	NVME_SC_CAPACITY_EXCEEDED, NVME_SC_NS_NOT_READY, NVME_SC_RESERVATION_CONFLICT,
	NVME_SC_FORMAT_IN_PROGRESS, NVME_SC_KV_INVALID_VALUE_SIZE, NVME_SC_KV_INVALID_KEY_SIZE,
	NVME_SC_KV_KEY_NOT_EXIST, NVME_SC_KV_UNRECOVERED, NVME_SC_KV_KEY_EXISTS,
};
static const unsigned cmd_codes[] = {
	NVME_SC_CQ_INVALID, NVME_SC_INVALID_QID, NVME_SC_INVALID_QSIZE, NVME_SC_ABORT_LIMIT,
	NVME_SC_AER_LIMIT, NVME_SC_INVALID_FW_SLOT, NVME_SC_INVALID_FW_IMAGE, NVME_SC_INVALID_INT_VECTOR,
	NVME_SC_INVALID_LOG_PAGE, NVME_SC_INVALID_FORMAT, NVME_SC_FW_NEEDS_CONV_RESET,
	NVME_SC_INVALID_QUEUE_DELETION, NVME_SC_FEATURE_NOT_SAVEABLE, NVME_SC_FEATURE_NOT_CHANGEABLE,
	NVME_SC_FEATURE_NOT_NS_SPECIFIC, NVME_SC_FW_NEEDS_SUBSYS_RESET, NVME_SC_FW_NEEDS_RESET,
	NVME_SC_FW_NEEDS_MAX_TIME, NVME_SC_FW_ACTIVATION_PROHIBITED, NVME_SC_OVERLAPPING_RANGE,
	NVME_SC_NS_INSUFFICIENT_CAP, NVME_SC_NS_ID_UNAVAILABLE, NVME_SC_NS_ALREADY_ATTACHED,
	NVME_SC_NS_IS_PRIVATE, NVME_SC_NS_NOT_ATTACHED, NVME_SC_THIN_PROV_NOT_SUP, NVME_SC_CTRL_LIST_INVALID,
	NVME_SC_SELF_TEST_IN_PROGRESS, NVME_SC_BP_WRITE_PROHIBITED, NVME_SC_INVALID_CTRL_ID,
	NVME_SC_CONFLICTING_ATTRS, NVME_SC_INVALID_PI, NVME_SC_READ_ONLY_RANGE, NVME_SC_ZONE_BOUNDARY_ERROR,
	NVME_SC_ZONE_FULL, NVME_SC_ZONE_READ_ONLY, NVME_SC_ZONE_OFFLINE, NVME_SC_ZONE_INVALID_WRITE,
	NVME_SC_ZONE_TOO_MANY_ACTIVE, NVME_SC_ZONE_TOO_MANY_OPEN, NVME_SC_ZONE_INVALID_TRANSITION,
};
static const unsigned media_codes[] = {
	NVME_SC_WRITE_FAULT, NVME_SC_UNRECOVERED_READ, NVME_SC_GUARD_CHECK, NVME_SC_APPTAG_CHECK,
	NVME_SC_REFTAG_CHECK, NVME_SC_COMPARE_FAILURE, NVME_SC_ACCESS_DENIED, NVME_SC_DEALLOCATED_BLOCK,
};
static const unsigned path_codes[] = {
	NVME_SC_INTERNAL_PATH_ERROR, NVME_SC_ANA_PERSISTENT_LOSS, NVME_SC_ANA_INACCESSIBLE,
	NVME_SC_ANA_TRANSITION, NVME_SC_CTRL_PATH_ERROR, NVME_SC_HOST_PATH_ERROR, NVME_SC_ABORTED_BY_HOST,
};

static int is_named(const char *s)
{
	return s && *s && strncmp(s, "Unknown", 7) != 0;
}

/* Every listed code has a real name, and no two codes of the type share one. The names are
 * copied because unnamed lookups reuse one buffer. */
static void check_named_and_distinct(unsigned sct, const unsigned *codes, size_t n, uint8_t csi)
{
	char names[64][96];
	REQUIRE(n <= 64);
	for (size_t i = 0; i < n; i++) {
		const char *s = unvme_status_str(NVME_STATUS(sct, codes[i]), csi);
		if (!is_named(s))
			fprintf(stderr, "  SCT %u SC %#x (csi %u) has no name\n", sct, codes[i], csi);
		CHECK(is_named(s));
		snprintf(names[i], sizeof(names[i]), "%s", s ? s : "");
		for (size_t j = 0; j < i; j++) {
			if (strcmp(names[i], names[j]) == 0)
				fprintf(stderr, "  SCT %u: %#x and %#x are both \"%s\"\n", sct, codes[j], codes[i],
					names[i]);
			CHECK(strcmp(names[i], names[j]) != 0);
		}
	}
}

static void test_every_status_code_is_named_and_distinct(void)
{
	unsigned nvm[N(generic_codes) + N(nvm_generic_codes)], kv[N(generic_codes) + N(kv_generic_codes)];
	memcpy(nvm, generic_codes, sizeof(generic_codes));
	memcpy(nvm + N(generic_codes), nvm_generic_codes, sizeof(nvm_generic_codes));
	memcpy(kv, generic_codes, sizeof(generic_codes));
	memcpy(kv + N(generic_codes), kv_generic_codes, sizeof(kv_generic_codes));
	check_named_and_distinct(NVME_SCT_GENERIC, nvm, N(nvm), NVME_CSI_NVM);
	check_named_and_distinct(NVME_SCT_GENERIC, nvm, N(nvm), NVME_CSI_ZNS);
	check_named_and_distinct(NVME_SCT_GENERIC, kv, N(kv), NVME_CSI_KV);
	check_named_and_distinct(NVME_SCT_CMD, cmd_codes, N(cmd_codes), NVME_CSI_NVM);
	check_named_and_distinct(NVME_SCT_MEDIA, media_codes, N(media_codes), NVME_CSI_NVM);
	check_named_and_distinct(NVME_SCT_PATH, path_codes, N(path_codes), NVME_CSI_NVM);
}

static void test_names_as_the_spec_writes_them(void)
{
	CHECK_STREQ(unvme_status_str(0, NVME_CSI_NVM), "Successful Completion");
	CHECK_STREQ(unvme_status_str(0, NVME_CSI_KV), "Successful Completion");
	CHECK_STREQ(unvme_status_str(NVME_STATUS(0, NVME_SC_INVALID_OPCODE), 0), "Invalid Command Opcode");
	CHECK_STREQ(unvme_status_str(NVME_STATUS(0, NVME_SC_INVALID_FIELD), 0), "Invalid Field in Command");
	CHECK_STREQ(unvme_status_str(NVME_STATUS(0, NVME_SC_ABORT_REQUESTED), 0), "Command Abort Requested");
	CHECK_STREQ(unvme_status_str(NVME_STATUS(0, NVME_SC_LBA_OUT_OF_RANGE), NVME_CSI_NVM), "LBA Out of Range");
	CHECK_STREQ(unvme_status_str(NVME_STATUS(1, NVME_SC_INVALID_QID), 0), "Invalid Queue Identifier");
	CHECK_STREQ(unvme_status_str(NVME_STATUS(1, NVME_SC_ZONE_FULL), NVME_CSI_ZNS), "Zone Is Full");
	CHECK_STREQ(unvme_status_str(NVME_STATUS(2, NVME_SC_UNRECOVERED_READ), 0), "Unrecovered Read Error");
	CHECK_STREQ(unvme_status_str(NVME_STATUS(3, NVME_SC_ANA_INACCESSIBLE), 0), "Asymmetric Access Inaccessible");
}

static void test_kv_names_the_command_set_range_differently(void)
{
	CHECK_STREQ(unvme_status_str(NVME_STATUS(0, 0x81), NVME_CSI_KV), "Capacity Exceeded");
	CHECK_STREQ(unvme_status_str(NVME_STATUS(0, 0x85), NVME_CSI_KV), "Invalid Value Size");
	CHECK_STREQ(unvme_status_str(NVME_STATUS(0, 0x86), NVME_CSI_KV), "Invalid Key Size");
	CHECK_STREQ(unvme_status_str(NVME_STATUS(0, 0x87), NVME_CSI_KV), "Key Does Not Exist");
	/* the vendor KV protocol's command specific codes, on a KV namespace only */
	CHECK_STREQ(unvme_status_str(NVME_STATUS(1, 0x10), NVME_CSI_KV), "KV Key Does Not Exist");
	CHECK_STREQ(unvme_status_str(NVME_STATUS(1, 0x93), NVME_CSI_KV), "KV Iterate Read End Of Data");
	CHECK(strstr(unvme_status_str(NVME_STATUS(1, 0x10), NVME_CSI_NVM), "KV") == NULL);
	/* a command specific code the vendor set does not use keeps its base name */
	CHECK_STREQ(unvme_status_str(NVME_STATUS(1, 0x0b), NVME_CSI_KV),
		    unvme_status_str(NVME_STATUS(1, 0x0b), NVME_CSI_NVM));
	CHECK_STREQ(unvme_status_str(NVME_STATUS(0, 0x88), NVME_CSI_KV), "Unrecovered Error");
	CHECK_STREQ(unvme_status_str(NVME_STATUS(0, 0x89), NVME_CSI_KV), "Key Exists");
	/* A KV namespace has no LBAs; the NVM and ZNS sets have no key errors. */
	CHECK_STREQ(unvme_status_str(NVME_STATUS(0, 0x80), NVME_CSI_KV), "Unknown status (SCT 0h, SC 80h)");
	CHECK_STREQ(unvme_status_str(NVME_STATUS(0, 0x87), NVME_CSI_NVM), "Unknown status (SCT 0h, SC 87h)");
	CHECK_STREQ(unvme_status_str(NVME_STATUS(0, 0x85), NVME_CSI_ZNS), "Unknown status (SCT 0h, SC 85h)");
	CHECK_STREQ(unvme_status_str(NVME_STATUS(0, 0x80), NVME_CSI_ZNS), "LBA Out of Range");
	/* Codes below 80h do not depend on the command set. */
	CHECK_STREQ(unvme_status_str(NVME_STATUS(0, 0x06), NVME_CSI_KV), "Internal Error");
}

static void test_unknown_codes_have_stable_strings(void)
{
	CHECK_STREQ(unvme_status_str(NVME_STATUS(0, 0x9f), 0), "Unknown status (SCT 0h, SC 9Fh)");
	CHECK_STREQ(unvme_status_str(NVME_STATUS(1, 0x04), 0), "Unknown status (SCT 1h, SC 04h)");
	CHECK_STREQ(unvme_status_str(NVME_STATUS(5, 0x01), 0), "Unknown status (SCT 5h, SC 01h)");
	CHECK_STREQ(unvme_status_str(NVME_STATUS(7, 0xc1), 0), "Vendor Specific status (SC C1h)");
	/* Never NULL, for any code of any type. */
	for (unsigned sct = 0; sct < 8; sct++)
		for (unsigned sc = 0; sc < 256; sc++)
			for (uint8_t csi = 0; csi < 4; csi++)
				CHECK(unvme_status_str(NVME_STATUS(sct, sc), csi) != NULL);
	const char *host = unvme_status_str(-5, 0);
	CHECK(host && strncmp(host, "Host error: ", 12) == 0);
}

/* Runs in a second thread while the main thread's unnamed string (arg) is live: the two
 * lookups must not share a buffer. */
static void *unknown_in_thread(void *arg)
{
	const char *mine = arg;
	const char *theirs = unvme_status_str(NVME_STATUS(0, 0x9e), 0);
	int ok = theirs != mine && strcmp(theirs, "Unknown status (SCT 0h, SC 9Eh)") == 0 &&
		 strcmp(mine, "Unknown status (SCT 0h, SC 9Fh)") == 0;
	return ok ? arg : NULL;
}

static void test_unknown_strings_are_per_thread(void)
{
	const char *mine = unvme_status_str(NVME_STATUS(0, 0x9f), 0);
	pthread_t t;
	void *result = NULL;
	REQUIRE(pthread_create(&t, NULL, unknown_in_thread, (void *)mine) == 0);
	pthread_join(t, &result);
	CHECK(result != NULL);
	CHECK_STREQ(mine, "Unknown status (SCT 0h, SC 9Fh)");
}

static void test_status_code_type_names(void)
{
	CHECK_STREQ(unvme_sct_str(NVME_SCT_GENERIC), "Generic Command Status");
	CHECK_STREQ(unvme_sct_str(NVME_SCT_CMD), "Command Specific Status");
	CHECK_STREQ(unvme_sct_str(NVME_SCT_MEDIA), "Media and Data Integrity Errors");
	CHECK_STREQ(unvme_sct_str(NVME_SCT_PATH), "Path Related Status");
	CHECK_STREQ(unvme_sct_str(NVME_SCT_VENDOR), "Vendor Specific");
	CHECK_STREQ(unvme_sct_str(4), "Reserved");
	CHECK_STREQ(unvme_sct_str(99), "Reserved");
}

static void test_every_header_opcode_is_named(void)
{
	static const uint8_t admin[] = {
		NVME_ADM_DELETE_SQ, NVME_ADM_CREATE_SQ, NVME_ADM_GET_LOG_PAGE, NVME_ADM_DELETE_CQ,
		NVME_ADM_CREATE_CQ, NVME_ADM_IDENTIFY, NVME_ADM_ABORT, NVME_ADM_SET_FEATURES,
		NVME_ADM_GET_FEATURES, NVME_ADM_ASYNC_EVENT, NVME_ADM_NS_MGMT, NVME_ADM_FW_COMMIT,
		NVME_ADM_FW_DOWNLOAD, NVME_ADM_DEV_SELF_TEST, NVME_ADM_NS_ATTACH, NVME_ADM_KEEP_ALIVE,
		NVME_ADM_DIRECTIVE_SEND, NVME_ADM_DIRECTIVE_RECV, NVME_ADM_VIRT_MGMT, NVME_ADM_NVME_MI_SEND,
		NVME_ADM_NVME_MI_RECV, NVME_ADM_DOORBELL_BUF_CFG, NVME_ADM_FORMAT_NVM, NVME_ADM_SECURITY_SEND,
		NVME_ADM_SECURITY_RECV, NVME_ADM_SANITIZE, NVME_ADM_GET_LBA_STATUS,
	};
	static const uint8_t nvm[] = {
		NVME_CMD_FLUSH, NVME_CMD_WRITE, NVME_CMD_READ, NVME_CMD_WRITE_UNCOR, NVME_CMD_COMPARE,
		NVME_CMD_WRITE_ZEROES, NVME_CMD_DSM, NVME_CMD_VERIFY, NVME_CMD_RESV_REGISTER,
		NVME_CMD_RESV_REPORT, NVME_CMD_RESV_ACQUIRE, NVME_CMD_RESV_RELEASE, NVME_CMD_COPY,
	};
	for (size_t i = 0; i < N(admin); i++)
		CHECK(nvme_admin_opc_name(admin[i]) != NULL);
	for (size_t i = 0; i < N(nvm); i++) {
		CHECK(nvme_io_opc_name(nvm[i], NVME_CSI_NVM) != NULL);
		/* ZNS namespaces take every NVM command under the same name. */
		CHECK_STREQ(nvme_io_opc_name(nvm[i], NVME_CSI_ZNS), nvme_io_opc_name(nvm[i], NVME_CSI_NVM));
	}
	CHECK_STREQ(nvme_admin_opc_name(NVME_ADM_IDENTIFY), "Identify");
	CHECK_STREQ(nvme_admin_opc_name(NVME_ADM_GET_LOG_PAGE), "Get Log Page");
	CHECK_STREQ(nvme_admin_opc_name(NVME_ADM_EMU_FAULT), "Vendor Specific");
	CHECK(nvme_admin_opc_name(0x03) == NULL);
	CHECK_STREQ(nvme_io_opc_name(NVME_CMD_READ, NVME_CSI_NVM), "Read");
	CHECK_STREQ(nvme_io_opc_name(NVME_CMD_DSM, NVME_CSI_NVM), "Dataset Management");
	CHECK_STREQ(nvme_io_opc_name(0x7d, NVME_CSI_ZNS), "Zone Append");
	CHECK(nvme_io_opc_name(0x7d, NVME_CSI_NVM) == NULL);
	CHECK_STREQ(nvme_io_opc_name(0x01, NVME_CSI_KV), "Store");
	CHECK_STREQ(nvme_io_opc_name(0x02, NVME_CSI_KV), "Retrieve");
	CHECK(nvme_io_opc_name(0x03, NVME_CSI_NVM) == NULL);
	CHECK(nvme_io_opc_name(NVME_CMD_READ, 0x09) == NULL);
}

static void test_every_header_log_feature_and_cns_is_named(void)
{
	static const uint8_t logs[] = {
		NVME_LOG_ERROR, NVME_LOG_SMART, NVME_LOG_FW_SLOT, NVME_LOG_CHANGED_NS, NVME_LOG_CMD_EFFECTS,
		NVME_LOG_DEV_SELF_TEST,
	};
	static const uint8_t features[] = {
		NVME_FEAT_ARBITRATION, NVME_FEAT_POWER_MGMT, NVME_FEAT_LBA_RANGE, NVME_FEAT_TEMP_THRESH,
		NVME_FEAT_ERR_RECOVERY, NVME_FEAT_VOLATILE_WC, NVME_FEAT_NUM_QUEUES, NVME_FEAT_IRQ_COALESCE,
		NVME_FEAT_IRQ_CONFIG, NVME_FEAT_WRITE_ATOMIC, NVME_FEAT_ASYNC_EVENT, NVME_FEAT_AUTO_PST,
		NVME_FEAT_HOST_MEM_BUF, NVME_FEAT_TIMESTAMP, NVME_FEAT_KATO, NVME_FEAT_HCTM, NVME_FEAT_NOPSC,
		NVME_FEAT_RRL, NVME_FEAT_PLM_CONFIG, NVME_FEAT_PLM_WINDOW, NVME_FEAT_HOST_BEHAVIOR,
		NVME_FEAT_SANITIZE, NVME_FEAT_ENDURANCE_EVT, NVME_FEAT_IOCS_PROFILE, NVME_FEAT_SW_PROGRESS,
		NVME_FEAT_HOST_ID, NVME_FEAT_RESV_MASK, NVME_FEAT_RESV_PERSIST, NVME_FEAT_WRITE_PROTECT,
	};
	static const uint8_t cns[] = {
		NVME_CNS_NS, NVME_CNS_CTRL, NVME_CNS_ACTIVE_NS_LIST, NVME_CNS_NS_DESC_LIST, NVME_CNS_NVMSET_LIST,
		NVME_CNS_CSI_NS, NVME_CNS_CSI_CTRL, NVME_CNS_CSI_ACTIVE_NS_LIST, NVME_CNS_IOCS,
	};
	for (size_t i = 0; i < N(logs); i++)
		CHECK(nvme_log_page_name(logs[i]) != NULL);
	for (size_t i = 0; i < N(features); i++)
		CHECK(nvme_feature_name(features[i]) != NULL);
	for (size_t i = 0; i < N(cns); i++)
		CHECK(nvme_cns_name(cns[i]) != NULL);
	CHECK_STREQ(nvme_log_page_name(NVME_LOG_SMART), "SMART / Health Information");
	CHECK_STREQ(nvme_log_page_name(NVME_LOG_VENDOR_FIRST), "Vendor Specific");
	CHECK(nvme_log_page_name(0x0e) == NULL);
	CHECK_STREQ(nvme_feature_name(NVME_FEAT_NUM_QUEUES), "Number of Queues");
	CHECK_STREQ(nvme_feature_name(0xc0), "Vendor Specific");
	CHECK(nvme_feature_name(0x00) == NULL);
	CHECK_STREQ(nvme_cns_name(NVME_CNS_CTRL), "Identify Controller");
	CHECK(nvme_cns_name(0xff) == NULL);
	CHECK_STREQ(nvme_csi_name(NVME_CSI_ZNS), "Zoned Namespace");
	CHECK(nvme_csi_name(0x7) == NULL);
	CHECK_STREQ(nvme_nidt_name(NVME_NIDT_NGUID), "nguid");
	CHECK(nvme_nidt_name(0) == NULL);
}

TEST_MAIN(TEST(test_every_status_code_is_named_and_distinct), TEST(test_names_as_the_spec_writes_them),
	  TEST(test_kv_names_the_command_set_range_differently), TEST(test_unknown_codes_have_stable_strings),
	  TEST(test_unknown_strings_are_per_thread), TEST(test_status_code_type_names),
	  TEST(test_every_header_opcode_is_named), TEST(test_every_header_log_feature_and_cns_is_named))
