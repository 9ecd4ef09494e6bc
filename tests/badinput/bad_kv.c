/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Bad-input matrix of the KV SDK API (kv_apis.h, docs/kv-sdk.md "Results and errors"):
 * calls before kv_sdk_init and after kv_sdk_finalize, NULL pointers, keys and values of the
 * wrong size, handles that name no device, buffers too small or misaligned, iterator misuse
 * (a 17th open, the same condition twice, double close, read after close, small buffers),
 * bad log pages and topology queries. The message column is the line the call wrote to the
 * SDK's log.
 */
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kv_apis.h"
#include "kv_internal.h"
#include "matrix.h"

static char log_path[128], cfg_path[128];
static long log_mark;
static char last_line[1024];
static uint64_t h;
static char key16[17] = "badinput-key-001";
static uint8_t val[4096];

static void before(void)
{
	struct stat st;
	log_mark = stat(log_path, &st) == 0 ? (long)st.st_size : 0;
	kv_config_set_error("%s", "");
}

/* The last line the SDK logged since the case began, without its time stamp. */
static const char *message(void)
{
	last_line[0] = 0;
	FILE *f = fopen(log_path, "r");
	if (!f) {
		snprintf(last_line, sizeof(last_line), "%s", kv_config_error());
		return last_line;
	}
	fseek(f, log_mark, SEEK_SET);
	char line[1024];
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		const char *p = strstr(line, "kvsdk: ");
		snprintf(last_line, sizeof(last_line), "%s", p ? p + 7 : line);
	}
	fclose(f);
	/* before kv_sdk_init there is no log: a refused init says why in the config error */
	if (!last_line[0])
		snprintf(last_line, sizeof(last_line), "%s", kv_config_error());
	return last_line;
}

static const char *result_name(long long rc)
{
	static char buf[64];
	static const struct { long long v; const char *n; } names[] = {
		{ KV_SUCCESS, "KV_SUCCESS" },
		{ KV_ERR_INVALID_VALUE_SIZE, "KV_ERR_INVALID_VALUE_SIZE" },
		{ KV_ERR_INVALID_VALUE_OFFSET, "KV_ERR_INVALID_VALUE_OFFSET" },
		{ KV_ERR_INVALID_KEY_SIZE, "KV_ERR_INVALID_KEY_SIZE" },
		{ KV_ERR_INVALID_OPTION, "KV_ERR_INVALID_OPTION" },
		{ KV_ERR_INVALID_KEYSPACE_ID, "KV_ERR_INVALID_KEYSPACE_ID" },
		{ KV_ERR_MISALIGNED_VALUE_SIZE, "KV_ERR_MISALIGNED_VALUE_SIZE" },
		{ KV_ERR_MISALIGNED_VALUE_OFFSET, "KV_ERR_MISALIGNED_VALUE_OFFSET" },
		{ KV_ERR_NOT_EXIST_KEY, "KV_ERR_NOT_EXIST_KEY" },
		{ KV_ERR_IDEMPOTENT_STORE_FAIL, "KV_ERR_IDEMPOTENT_STORE_FAIL" },
		{ KV_ERR_MAXIMUM_VALUE_SIZE_LIMIT_EXCEEDED, "KV_ERR_MAXIMUM_VALUE_SIZE_LIMIT_EXCEEDED" },
		{ KV_ERR_ITERATE_NO_AVAILABLE_HANDLE, "KV_ERR_ITERATE_NO_AVAILABLE_HANDLE" },
		{ KV_ERR_ITERATE_HANDLE_ALREADY_OPENED, "KV_ERR_ITERATE_HANDLE_ALREADY_OPENED" },
		{ KV_ERR_ITERATE_READ_EOF, "KV_ERR_ITERATE_READ_EOF" },
		{ KV_ERR_ITERATE_REQUEST_FAIL, "KV_ERR_ITERATE_REQUEST_FAIL" },
		{ KV_ERR_DD_NO_DEVICE, "KV_ERR_DD_NO_DEVICE" },
		{ KV_ERR_DD_INVALID_PARAM, "KV_ERR_DD_INVALID_PARAM" },
		{ KV_ERR_DD_INVALID_QUEUE_TYPE, "KV_ERR_DD_INVALID_QUEUE_TYPE" },
		{ KV_ERR_DD_UNSUPPORTED_CMD, "KV_ERR_DD_UNSUPPORTED_CMD" },
		{ KV_ERR_DD_ITERATE_COND_INVALID, "KV_ERR_DD_ITERATE_COND_INVALID" },
		{ KV_ERR_SDK_CLOSE, "KV_ERR_SDK_CLOSE" },
		{ KV_ERR_SDK_INVALID_PARAM, "KV_ERR_SDK_INVALID_PARAM" },
		{ KV_ERR_IO, "KV_ERR_IO" },
		{ -1, "-1" },
		{ (long long)KV_ERR_INVALID_VALUE, "KV_ERR_INVALID_VALUE" },
		{ (long long)UINT32_MAX, "UINT32_MAX" },
		{ -3000, "false" },
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].v == rc)
			return names[i].n;
	snprintf(buf, sizeof(buf), "0x%llx", rc);
	return buf;
}

static kv_pair pair(void *key, uint16_t klen, void *v, uint32_t vlen)
{
	kv_pair kv;
	memset(&kv, 0, sizeof(kv));
	kv.key.key = key;
	kv.key.length = klen;
	kv.value.value = v;
	kv.value.length = vlen;
	return kv;
}

/* ---- before kv_sdk_init ---- */
static long long pre_store(void) { kv_pair kv = pair(key16, 16, val, 16); return kv_store(1, &kv); }
static long long pre_iter_close(void) { return kv_iterate_close(1, 1); }
static long long pre_finalize(void) { return kv_sdk_finalize(); }
static long long pre_total(void) { return (long long)kv_get_total_size(1); }
static long long init_null(void) { return kv_sdk_init(KV_SDK_INIT_FROM_JSON, NULL); }
static long long init_bad_from(void) { return kv_sdk_init(7, cfg_path); }
static long long init_missing_file(void) { return kv_sdk_init(KV_SDK_INIT_FROM_JSON, "/nonexistent/kv.json"); }
static long long init_struct_no_device(void)
{
	kv_sdk sdk;
	memset(&sdk, 0, sizeof(sdk));
	return kv_sdk_init(KV_SDK_INIT_FROM_STR, &sdk);
}
static long long load_option_null(void) { return kv_sdk_load_option(NULL, cfg_path); }

static const struct mcase pre_cases[] = {
	MCASE("store before init", "kv_store(1, &kv)", KV_ERR_SDK_CLOSE, "", pre_store),
	MCASE("iterator close before init", "kv_iterate_close(1, 1)", KV_ERR_SDK_CLOSE, "", pre_iter_close),
	MCASE("finalize before init", "kv_sdk_finalize()", KV_ERR_SDK_CLOSE, "", pre_finalize),
	MCASE("size before init", "kv_get_total_size(1)", (long long)KV_ERR_INVALID_VALUE, "", pre_total),
	MCASE("init with no path", "kv_sdk_init(KV_SDK_INIT_FROM_JSON, NULL)", KV_ERR_SDK_INVALID_PARAM, "option is NULL", init_null),
	MCASE("init from 7", "kv_sdk_init(7, path)", KV_ERR_SDK_INVALID_PARAM, "init_from 7 is neither", init_bad_from),
	MCASE("init from a missing file", "kv_sdk_init(KV_SDK_INIT_FROM_JSON, \"/nonexistent/kv.json\")", KV_ERR_SDK_INVALID_PARAM, "cannot be read: No such file", init_missing_file),
	MCASE("init from a struct with no device", "kv_sdk_init(KV_SDK_INIT_FROM_STR, &zeroed)", KV_ERR_SDK_INVALID_PARAM, "dev_id[0] is empty", init_struct_no_device),
	MCASE("load into NULL", "kv_sdk_load_option(NULL, path)", -1, "sdk_opt is NULL", load_option_null),
};

/* ---- with the SDK up ---- */
static long long store_null(void) { return kv_store(h, NULL); }
static long long store_null_key(void) { kv_pair kv = pair(NULL, 16, val, 16); return kv_store(h, &kv); }
static long long store_key_0(void) { kv_pair kv = pair(key16, 0, val, 16); return kv_store(h, &kv); }
static long long store_key_3(void) { kv_pair kv = pair(key16, 3, val, 16); return kv_store(h, &kv); }
static long long store_key_256(void)
{
	static char k[256];
	memset(k, 'k', sizeof(k));
	kv_pair kv = pair(k, 256, val, 16);
	return kv_store(h, &kv);
}
static long long store_value_big(void)
{
	kv_pair kv = pair(key16, 16, val, KV_MAX_IO_VALUE_LEN + 1);
	return kv_store(h, &kv);
}
static long long store_value_null(void) { kv_pair kv = pair(key16, 16, NULL, 10); return kv_store(h, &kv); }
static long long store_keyspace_2(void)
{
	kv_pair kv = pair(key16, 16, val, 16);
	kv.keyspace_id = 2;
	return kv_store(h, &kv);
}
static long long store_option_7(void)
{
	kv_pair kv = pair(key16, 16, val, 16);
	kv.param.io_option.store_option = 7;
	return kv_store(h, &kv);
}
static long long store_idempotent_twice(void)
{
	kv_pair kv = pair(key16, 16, val, 100);
	if (kv_store(h, &kv) != KV_SUCCESS)
		return -2;
	kv.param.io_option.store_option = KV_STORE_IDEMPOTENT;
	return kv_store(h, &kv);
}
static long long store_offset_100(void)
{
	kv_pair kv = pair(key16, 16, val, 16);
	kv.value.offset = 100;
	return kv_store(h, &kv);
}
static long long store_offset_new_key(void)
{
	kv_pair kv = pair("badinput-new-key", 16, val, 16);
	kv.value.offset = 512;
	return kv_store(h, &kv);
}
static long long retrieve_missing(void)
{
	kv_pair kv = pair("badinput-missing", 16, val, sizeof(val));
	return kv_retrieve(h, &kv);
}
static long long retrieve_len_6(void) { kv_pair kv = pair(key16, 16, val, 6); return kv_retrieve(h, &kv); }
static long long retrieve_small_buffer(void)
{
	/* the 100-byte value into 8 bytes: success, the size it has, the bytes that fit */
	kv_pair kv = pair(key16, 16, val, 8);
	long long rc = kv_retrieve(h, &kv);
	if (rc == KV_SUCCESS && (kv.value.length != 8 || kv.value.actual_value_size != 100))
		return -4; /* wrong lengths reported */
	return rc;
}
static long long retrieve_offset_past(void)
{
	kv_pair kv = pair(key16, 16, val, 512);
	kv.value.offset = 1024;
	return kv_retrieve(h, &kv);
}
static long long retrieve_null_value(void) { kv_pair kv = pair(key16, 16, NULL, 64); return kv_retrieve(h, &kv); }
static long long delete_missing(void) { kv_pair kv = pair("badinput-missing", 16, NULL, 0); return kv_delete(h, &kv); }
static long long exist_missing(void) { kv_pair kv = pair("badinput-missing", 16, NULL, 0); return kv_exist(h, &kv); }
static long long handle_0(void) { kv_pair kv = pair(key16, 16, val, 16); return kv_store(0, &kv); }
static long long handle_junk(void) { kv_pair kv = pair(key16, 16, val, 16); return kv_retrieve(0xdeadbeef, &kv); }
static long long async_no_cb(void) { kv_pair kv = pair(key16, 16, val, 16); return kv_store_async(h, &kv); }
static long long async_null(void) { return kv_retrieve_async(h, NULL); }
static long long append(void) { kv_pair kv = pair(key16, 16, val, 16); return kv_append(h, &kv); }

static long long iter_17th(void)
{
	uint32_t it[16];
	long long rc = KV_SUCCESS;
	int n = 0;
	for (; n < 16; n++) {
		it[n] = kv_iterate_open(h, 0, 0xffffffff, 0x61000000u + (uint32_t)n, KV_KEY_ITERATE);
		if (it[n] < 1 || it[n] > 16) {
			rc = -5; /* the first 16 must open */
			break;
		}
	}
	if (rc == KV_SUCCESS)
		rc = kv_iterate_open(h, 0, 0xffffffff, 0x62000000u, KV_KEY_ITERATE);
	for (int i = 0; i < n; i++)
		kv_iterate_close(h, (uint8_t)it[i]);
	return rc;
}
static long long iter_same_twice(void)
{
	uint32_t a = kv_iterate_open(h, 0, 0xffff0000u, 0x61620000u, KV_KEY_ITERATE);
	if (a < 1 || a > 16)
		return -5;
	long long rc = kv_iterate_open(h, 0, 0xffff0000u, 0x61620000u, KV_KEY_ITERATE);
	kv_iterate_close(h, (uint8_t)a);
	return rc;
}
static long long iter_close_twice(void)
{
	uint32_t a = kv_iterate_open(h, 0, 0, 0, KV_KEY_ITERATE);
	if (a < 1 || a > 16 || kv_iterate_close(h, (uint8_t)a) != KV_SUCCESS)
		return -5;
	return kv_iterate_close(h, (uint8_t)a);
}
static long long iter_read_after_close(void)
{
	uint32_t a = kv_iterate_open(h, 0, 0, 0, KV_KEY_ITERATE);
	if (a < 1 || a > 16 || kv_iterate_close(h, (uint8_t)a) != KV_SUCCESS)
		return -5;
	static uint8_t buf[KV_ITERATE_READ_BUFFER_SIZE];
	kv_iterate it;
	memset(&it, 0, sizeof(it));
	it.iterator = a;
	it.kv.value.value = buf;
	it.kv.value.length = sizeof(buf);
	return kv_iterate_read(h, &it);
}
static long long iter_close_0(void) { return kv_iterate_close(h, 0); }
static long long iter_close_17(void) { return kv_iterate_close(h, 17); }
static long long iter_small_buffer(void)
{
	uint32_t a = kv_iterate_open(h, 0, 0, 0, KV_KEY_ITERATE);
	if (a < 1 || a > 16)
		return -5;
	kv_iterate it;
	memset(&it, 0, sizeof(it));
	it.iterator = a;
	it.kv.value.value = val;
	it.kv.value.length = 1024;
	long long rc = kv_iterate_read(h, &it);
	kv_iterate_close(h, (uint8_t)a);
	return rc;
}
static long long iter_read_null(void) { return kv_iterate_read(h, NULL); }
static long long iter_bitmask_holes(void) { return kv_iterate_open(h, 0, 0x00ff0000u, 0, KV_KEY_ITERATE); }
static long long iter_type_4(void) { return kv_iterate_open(h, 0, 0, 0, 4); }
static long long iter_keyspace_2(void) { return kv_iterate_open(h, 2, 0, 0, KV_KEY_ITERATE); }
static long long iter_info_null(void) { return kv_iterate_info(h, NULL, 16); }
static long long iter_info_negative(void)
{
	kv_iterate_handle_info info[16];
	return kv_iterate_info(h, info, -1);
}
static long long log_null(void) { return kv_get_log_page(h, 0xc0, NULL, 512); }
static long long log_len_6(void) { return kv_get_log_page(h, 0xc0, val, 6); }
static long long log_unknown(void) { return kv_get_log_page(h, 0x6f, val, 512); }
static long long format_erase_2(void) { return kv_format_device(h, 2); }
static long long devices_on_cpu_neg(void) { int n; uint64_t a[NR_MAX_SSD]; return kv_get_devices_on_cpu(-1, &n, a); }
static long long devices_on_cpu_null(void) { return kv_get_devices_on_cpu(0, NULL, NULL); }
static long long handles_null(void) { return kv_get_device_handles(NULL, NULL); }
static long long cpus_bad_handle(void) { int n, a[MAX_CPU_CORES]; return kv_get_cpus_on_device(42, &n, a); }
static long long queue_type_core_63(void) { return kv_io_queue_type(h, 63); }
static long long dev_idx_bad(void) { return kv_get_dev_idx_on_handle(42); }
static long long sector_bad(void) { return kv_get_sector_size(42); }
static long long switch_bad_did(void) { return context_switch_async_to_sync(99) ? 0 : -3000; }

static const struct mcase cases[] = {
	MCASE("pair NULL", "kv_store(h, NULL)", KV_ERR_SDK_INVALID_PARAM, "kv is NULL", store_null),
	MCASE("key pointer NULL", "kv.key.key = NULL; kv_store(h, &kv)", KV_ERR_SDK_INVALID_PARAM, "key.key is NULL", store_null_key),
	MCASE("key of 0 bytes", "kv.key.length = 0", KV_ERR_INVALID_KEY_SIZE, "key length 0 is not 4..255", store_key_0),
	MCASE("key of 3 bytes", "kv.key.length = 3", KV_ERR_INVALID_KEY_SIZE, "key length 3 is not 4..255", store_key_3),
	MCASE("key of 256 bytes", "kv.key.length = 256", KV_ERR_INVALID_KEY_SIZE, "key length 256 is not 4..255", store_key_256),
	MCASE("value of 2 MiB + 1", "kv.value.length = 2097153; kv_store(...)", KV_ERR_INVALID_VALUE_SIZE, "exceeds", store_value_big),
	MCASE("value pointer NULL", "kv.value.value = NULL, length 10", KV_ERR_SDK_INVALID_PARAM, "value.value is NULL", store_value_null),
	MCASE("keyspace 2", "kv.keyspace_id = 2; kv_store(...)", KV_ERR_INVALID_KEYSPACE_ID, "keyspace", store_keyspace_2),
	MCASE("store option 7", "kv.param.io_option.store_option = 7", KV_ERR_INVALID_OPTION, "", store_option_7),
	MCASE("idempotent store of a key that exists", "store_option = KV_STORE_IDEMPOTENT", KV_ERR_IDEMPOTENT_STORE_FAIL, "", store_idempotent_twice),
	MCASE("store offset 100", "kv.value.offset = 100", KV_ERR_MISALIGNED_VALUE_OFFSET, "offset", store_offset_100),
	MCASE("store at offset 512 of a new key", "kv.value.offset = 512 (no such key)", KV_ERR_INVALID_VALUE_OFFSET, "", store_offset_new_key),
	MCASE("retrieve a missing key", "kv_retrieve(h, &missing)", KV_ERR_NOT_EXIST_KEY, "", retrieve_missing),
	MCASE("retrieve buffer of 6 bytes", "kv.value.length = 6", KV_ERR_MISALIGNED_VALUE_SIZE, "multiple of 4", retrieve_len_6),
	MCASE("retrieve buffer smaller than the value", "100-byte value, kv.value.length = 8", KV_SUCCESS, "", retrieve_small_buffer),
	MCASE("retrieve from past the value's end", "100-byte value, kv.value.offset = 1024", KV_ERR_INVALID_VALUE_OFFSET, "", retrieve_offset_past),
	MCASE("retrieve into NULL", "kv.value.value = NULL, length 64", KV_ERR_SDK_INVALID_PARAM, "value.value is NULL", retrieve_null_value),
	MCASE("delete a missing key", "kv_delete(h, &missing)", KV_ERR_NOT_EXIST_KEY, "", delete_missing),
	MCASE("exist of a missing key", "kv_exist(h, &missing)", KV_ERR_NOT_EXIST_KEY, "", exist_missing),
	MCASE("handle 0", "kv_store(0, &kv)", KV_ERR_DD_NO_DEVICE, "is not a device of this SDK instance", handle_0),
	MCASE("handle 0xdeadbeef", "kv_retrieve(0xdeadbeef, &kv)", KV_ERR_DD_NO_DEVICE, "0xdeadbeef is not a device", handle_junk),
	MCASE("async call without callback", "kv_store_async(h, &kv) (async_cb NULL)", KV_ERR_SDK_INVALID_PARAM, "async_cb is NULL", async_no_cb),
	MCASE("async call with NULL pair", "kv_retrieve_async(h, NULL)", KV_ERR_SDK_INVALID_PARAM, "kv is NULL", async_null),
	MCASE("append", "kv_append(h, &kv)", KV_ERR_DD_UNSUPPORTED_CMD, "", append),
	MCASE("a 17th open iterator", "16 x kv_iterate_open(...), then a 17th", KV_ERR_ITERATE_NO_AVAILABLE_HANDLE, "failed: 0x91", iter_17th),
	MCASE("the same iterator twice", "kv_iterate_open(h, 0, 0xffff0000, 0x61620000, 1) twice", KV_ERR_ITERATE_HANDLE_ALREADY_OPENED, "", iter_same_twice),
	MCASE("iterator closed twice", "kv_iterate_close(h, it) twice", KV_ERR_ITERATE_REQUEST_FAIL, "", iter_close_twice),
	MCASE("iterator read after close", "kv_iterate_close(h, it); kv_iterate_read(h, &it)", KV_ERR_ITERATE_REQUEST_FAIL, "", iter_read_after_close),
	MCASE("close iterator 0", "kv_iterate_close(h, 0)", KV_ERR_SDK_INVALID_PARAM, "", iter_close_0),
	MCASE("close iterator 17", "kv_iterate_close(h, 17)", KV_ERR_SDK_INVALID_PARAM, "iterator 17 is not 1..16", iter_close_17),
	MCASE("iterator buffer of 1 KiB", "it.kv.value.length = 1024; kv_iterate_read(...)", KV_ERR_INVALID_VALUE_SIZE, "an iterator chunk is exactly 32768", iter_small_buffer),
	MCASE("iterator read with NULL", "kv_iterate_read(h, NULL)", KV_ERR_SDK_INVALID_PARAM, "", iter_read_null),
	MCASE("bitmask with holes", "kv_iterate_open(h, 0, 0x00ff0000, 0, 1)", KV_ERR_DD_ITERATE_COND_INVALID, "contiguous", iter_bitmask_holes),
	MCASE("iterator type 4", "kv_iterate_open(h, 0, 0, 0, 4)", KV_ERR_DD_ITERATE_COND_INVALID, "iterate_type 4", iter_type_4),
	MCASE("iterator keyspace 2", "kv_iterate_open(h, 2, 0, 0, 1)", KV_ERR_DD_ITERATE_COND_INVALID, "keyspace_id 2", iter_keyspace_2),
	MCASE("iterator info into NULL", "kv_iterate_info(h, NULL, 16)", KV_ERR_SDK_INVALID_PARAM, "", iter_info_null),
	MCASE("iterator info for -1 handles", "kv_iterate_info(h, info, -1)", KV_ERR_SDK_INVALID_PARAM, "", iter_info_negative),
	MCASE("log page into NULL", "kv_get_log_page(h, 0xc0, NULL, 512)", KV_ERR_SDK_INVALID_PARAM, "", log_null),
	MCASE("log page of 6 bytes", "kv_get_log_page(h, 0xc0, buf, 6)", KV_ERR_SDK_INVALID_PARAM, "", log_len_6),
	MCASE("unknown log page", "kv_get_log_page(h, 0x6f, buf, 512)", KV_ERR_DD_UNSUPPORTED_CMD, "Invalid Log Page", log_unknown),
	MCASE("format with erase 2", "kv_format_device(h, 2)", KV_ERR_SDK_INVALID_PARAM, "erase_user_data 2 is not 0 or 1", format_erase_2),
	MCASE("devices on CPU -1", "kv_get_devices_on_cpu(-1, &n, arr)", KV_ERR_SDK_INVALID_PARAM, "", devices_on_cpu_neg),
	MCASE("devices on CPU into NULL", "kv_get_devices_on_cpu(0, NULL, NULL)", KV_ERR_SDK_INVALID_PARAM, "", devices_on_cpu_null),
	MCASE("device handles into NULL", "kv_get_device_handles(NULL, NULL)", KV_ERR_SDK_INVALID_PARAM, "", handles_null),
	MCASE("CPUs of handle 42", "kv_get_cpus_on_device(42, &n, arr)", KV_ERR_DD_NO_DEVICE, "", cpus_bad_handle),
	MCASE("queue type of core 63", "kv_io_queue_type(h, 63)", KV_ERR_DD_INVALID_QUEUE_TYPE, "core 63 is not in core_mask", queue_type_core_63),
	MCASE("index of handle 42", "kv_get_dev_idx_on_handle(42)", KV_ERR_DD_NO_DEVICE, "", dev_idx_bad),
	MCASE("sector size of handle 42", "kv_get_sector_size(42)", (long long)UINT32_MAX, "", sector_bad),
	MCASE("switch to device 99", "context_switch_async_to_sync(99)", -3000, "", switch_bad_did),
};

/* ---- after kv_sdk_finalize ---- */
static long long post_retrieve(void) { kv_pair kv = pair(key16, 16, val, 64); return kv_retrieve(h, &kv); }
static long long post_iter_open(void) { return kv_iterate_open(h, 0, 0, 0, KV_KEY_ITERATE); }
static long long post_finalize(void) { return kv_sdk_finalize(); }

static const struct mcase post_cases[] = {
	MCASE("retrieve after finalize", "kv_sdk_finalize(); kv_retrieve(h, &kv)", KV_ERR_SDK_CLOSE, "not initialized", post_retrieve),
	MCASE("iterator open after finalize", "kv_iterate_open(h, 0, 0, 0, 1)", KV_ERR_SDK_CLOSE, "not initialized", post_iter_open),
	MCASE("finalize twice", "kv_sdk_finalize(); kv_sdk_finalize()", KV_ERR_SDK_CLOSE, "", post_finalize),
};

int main(int argc, char **argv)
{
	setenv("UNVME_QUIET", "1", 1);
	snprintf(log_path, sizeof(log_path), "/tmp/unvme-badkv-%d.log", (int)getpid());
	snprintf(cfg_path, sizeof(cfg_path), "/tmp/unvme-badkv-%d.json", (int)getpid());
	FILE *f = fopen(cfg_path, "w");
	if (!f)
		return 2;
	fprintf(f, "{ \"ssd_type\": \"kv\", \"slab_size\": 64, \"slab_alloc_policy\": \"posix\",\n"
		   "  \"log_level\": 1, \"log_file\": \"%s\",\n"
		   "  \"device_description\": { \"dev_id\": \"emu://badkv?ns=kv:16M\", \"core_mask\": \"1\",\n"
		   "    \"sync_mask\": \"1\" } }\n", log_path);
	fclose(f);
	memset(val, 'v', sizeof(val));
	struct matrix m = { "KV API, before kv_sdk_init", message, result_name, before, true };
	int r = matrix_run(&m, pre_cases, sizeof(pre_cases) / sizeof(pre_cases[0]), argc, argv);
	if (kv_sdk_init(KV_SDK_INIT_FROM_JSON, cfg_path) != KV_SUCCESS) {
		fprintf(stderr, "kv_sdk_init failed (see %s)\n", log_path);
		return 2;
	}
	int n = 0;
	uint64_t hs[NR_MAX_SSD];
	if (kv_get_device_handles(&n, hs) != KV_SUCCESS || n != 1)
		return 2;
	h = hs[0];
	
	m.area = "KV API";
	r |= matrix_run(&m, cases, sizeof(cases) / sizeof(cases[0]), argc, argv);
	kv_sdk_finalize();
	m.area = "KV API, after kv_sdk_finalize";
	r |= matrix_run(&m, post_cases, sizeof(post_cases) / sizeof(post_cases[0]), argc, argv);
	unlink(log_path);
	unlink(cfg_path);
	return r;
}
