/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the KV SDK's JSON configuration loader, kv_sdk_load_option (and the mask
 * checks kv_sdk_init runs next, for a 2-CPU and a 64-CPU machine). The input is the file.
 * Either it loads into a kv_sdk whose fields are all in their documented ranges, or it fails
 * with a message that names the file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kv_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static char path[128];

static void cleanup(void)
{
	unlink(path);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	setenv("UNVME_QUIET", "1", 1);
	snprintf(path, sizeof(path), "/dev/shm/unvme-fuzz-kvcfg-%d.json", (int)getpid());
	atexit(cleanup);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *f = fopen(path, "w");
	if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
		abort();
	kv_sdk sdk;
	memset(&sdk, 0, sizeof(sdk));
	if (kv_sdk_load_option(&sdk, path) != 0) {
		if (!strstr(kv_config_error(), path))
			abort(); /* the message names the file */
		return 0;
	}
	if (sdk.nr_ssd < 1 || sdk.nr_ssd > NR_MAX_SSD || sdk.log_level < 0 || sdk.log_level > 3 ||
	    (sdk.ssd_type != KV_TYPE_SSD && sdk.ssd_type != LBA_TYPE_SSD) ||
	    sdk.submit_retry_interval < -1 || sdk.submit_retry_interval > KV_MAX_RETRY_US ||
	    !memchr(sdk.log_file, 0, sizeof(sdk.log_file)))
		abort(); /* accepted, but out of its documented range */
	for (int i = 0; i < sdk.nr_ssd; i++)
		if (!sdk.dev_id[i][0] || !memchr(sdk.dev_id[i], 0, DEV_ID_LEN))
			abort();
	/* what kv_sdk_init does next: the masks against the machine */
	for (int ncpu = 2; ncpu <= 64; ncpu *= 32) {
		struct kv_config cfg;
		if (kv_config_load_file(path, &cfg) != 0)
			abort(); /* loaded once, must load again */
		(void)kv_config_check_masks(&cfg, ncpu);
		kv_config_free(&cfg);
	}
	return 0;
}
