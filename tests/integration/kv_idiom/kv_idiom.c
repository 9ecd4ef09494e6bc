/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A program written the way the original SDK's samples are (our own code): it is compiled by
 * test_kv_original_idioms.py with the samples' flags against the installed-style headers
 * ("kv_apis.h", "kvnvme.h" from include/unvme/kv) and run on an emulated KV device aliased to
 * their hard-coded PCI address. Prints one "ok ..." line per step; exits non-zero on the
 * first surprise.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kv_types.h"
#include "kv_apis.h"
#include "kvnvme.h"

#define fail_unless(c) do { if (!(c)) { printf("fail at line %d\n", __LINE__); exit(1); } } while (0)

static volatile int done_count;
static volatile unsigned last_status, last_result;

static void on_done(kv_pair *kv, unsigned int result, unsigned int status)
{
	fail_unless(kv != NULL);
	last_status = status;
	last_result = result;
	__sync_fetch_and_add(&done_count, 1);
}

static void on_iter(kv_iterate *it, unsigned int result, unsigned int status)
{
	fail_unless(status == KV_SUCCESS || status == KV_ERR_ITERATE_READ_EOF);
	fail_unless(result == it->kv.value.length && it->kv.key.length == 0);
	last_status = status;
	__sync_fetch_and_add(&done_count, 1);
}

int main(void)
{
	kv_sdk_info();
	kv_sdk sdk_opt = { 0, };
	sprintf(sdk_opt.dev_id[0], "0000:02:00.0");
	fail_unless(kv_sdk_init(KV_SDK_INIT_FROM_STR, &sdk_opt) == KV_SUCCESS);
	fail_unless(sdk_opt.nr_ssd == 1 && sdk_opt.dev_handle[0] != 0);
	printf("ok init nr_ssd=%d core_mask=0x%llx\n", sdk_opt.nr_ssd,
	       (unsigned long long)sdk_opt.dd_options[0].core_mask);

	int nr_handle = 0;
	uint64_t arr_handle[NR_MAX_SSD];
	fail_unless(kv_get_device_handles(&nr_handle, arr_handle) == KV_SUCCESS && nr_handle == 1);
	uint64_t handle = arr_handle[0];

	kv_pair kv;
	memset(&kv, 0, sizeof(kv));
	kv.key.length = 16;
	kv.key.key = malloc(17);
	kv.value.value = malloc(4096);
	kv.keyspace_id = KV_KEYSPACE_IODATA;
	for (int i = 0; i < 100; i++) {
		sprintf(kv.key.key, "idiom%011d", i);
		memset(kv.value.value, 'a' + i % 26, 4096);
		kv.value.length = 4096;
		kv.param.io_option.store_option = KV_STORE_DEFAULT;
		fail_unless(kv_store(handle, &kv) == KV_SUCCESS);
	}
	printf("ok store\n");

	sprintf(kv.key.key, "idiom%011d", 7);
	kv.value.length = 4096;
	kv.param.async_cb = on_done;
	done_count = 0;
	fail_unless(kv_retrieve_async(handle, &kv) == KV_SUCCESS);
	while (!done_count)
		usleep(1);
	fail_unless(last_status == KV_SUCCESS && last_result == 4096);
	fail_unless(((char *)kv.value.value)[0] == 'a' + 7);
	sprintf(kv.key.key, "missing-key-0000");
	done_count = 0;
	fail_unless(kv_exist_async(handle, &kv) == KV_SUCCESS);
	while (!done_count)
		usleep(1);
	fail_unless(last_status == KV_ERR_NOT_EXIST_KEY);
	printf("ok async status=0x%x\n", last_status);

	uint32_t iterator = kv_iterate_open(handle, KV_KEYSPACE_IODATA, 0xFFFF0000, 0x69640000,
					    KV_KEY_ITERATE); /* "id" */
	fail_unless(iterator != KV_INVALID_ITERATE_HANDLE && iterator <= KV_MAX_ITERATE_HANDLE);
	kv_iterate it;
	memset(&it, 0, sizeof(it));
	it.iterator = iterator;
	it.kv.value.value = malloc(KV_SSD_MAX_ITERATE_READ_LEN);
	int keys = 0, ret;
	do {
		it.kv.value.length = KV_ITERATE_READ_BUFFER_SIZE;
		ret = kv_iterate_read(handle, &it);
		if (it.kv.key.length == 0 && it.kv.value.length > 0) {
			int n;
			memcpy(&n, it.kv.value.value, KV_ITERATE_READ_BUFFER_OFFSET);
			keys += n;
		}
	} while (ret == KV_SUCCESS);
	fail_unless(ret == KV_ERR_ITERATE_READ_EOF && keys == 100);
	it.kv.value.length = KV_ITERATE_READ_BUFFER_SIZE;
	it.kv.param.async_cb = on_iter;
	done_count = 0;
	fail_unless(kv_iterate_read_async(handle, &it) == KV_SUCCESS);
	while (!done_count)
		usleep(1);
	fail_unless(last_status == KV_ERR_ITERATE_READ_EOF && it.kv.value.length == 0);
	fail_unless(kv_iterate_close(handle, (uint8_t)iterator) == KV_SUCCESS);
	printf("ok iterate keys=%d\n", keys);

	kv_sdk_info();
	fail_unless(kv_sdk_finalize() == KV_SUCCESS);
	free(kv.key.key);
	free(kv.value.value);
	free(it.kv.value.value);
	printf("ok finalize\n");
	return 0;
}
