/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The KV SDK's async queue (a split queue pair: callers submit, a completion thread polls)
 * through a command the device loses for good: the driver fences the queue, the command comes
 * back with an error through its callback, the completion thread has the queue created again
 * (unvme_qpair_recover), later calls work, and kv_sdk_finalize returns. The I/O timeout comes
 * from UNVME_IO_TIMEOUT_MS (the SDK opens its controller with the default options); the test
 * reaches the SDK's controller by opening the same device: one controller per device per
 * process. Needs two CPUs (a completion thread on the second): skipped otherwise.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "tests/unit/kvsdk/kv_test.h"
#include "unvme/unvme.h"
#include "test_util.h"

#define DEV "emu://kvrec?ns=kv:64M"

static _Atomic int cb_count;
static _Atomic unsigned cb_result; /* the kv_result the callback got (its status argument) */

static void store_cb(kv_pair *kv, unsigned int result, unsigned int status)
{
	(void)kv;
	(void)result; /* CDW0 of the completion */
	atomic_store(&cb_result, status);
	atomic_fetch_add(&cb_count, 1);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void test_async_queue_comes_back(void)
{
	setenv("UNVME_IO_TIMEOUT_MS", "50", 1);
	uint64_t h = kv_test_init(DEV, "kv",
				  ", \"core_mask\": 1, \"sync_mask\": 0, \"cq_thread_mask\": 2", NULL);
	REQUIRE(h != 0);
	struct unvme_ctrlr *c = NULL;
	REQUIRE(unvme_ctrlr_open(DEV, NULL, &c) == 0); /* the SDK's own controller */
	struct nvme_sqe f = { .opc = NVME_ADM_EMU_FAULT, .cdw10 = NVME_EMU_FAULT_SWALLOW, .cdw11 = 1 };
	REQUIRE(unvme_admin(c, &f, NULL, 0, NULL) == 0);

	char key[16] = "lost-key-000001";
	static uint8_t val[4096];
	memset(val, 0x3c, sizeof(val));
	kv_pair kv;
	kv_pair_init(&kv, key, 15, val, sizeof(val));
	kv.param.async_cb = store_cb;
	CHECK_EQ(kv_store_async(h, &kv), KV_SUCCESS);
	double end = now() + 20;
	while (atomic_load(&cb_count) == 0 && now() < end)
		usleep(1000);
	CHECK_EQ(atomic_load(&cb_count), 1);          /* the lost store came back... */
	CHECK(atomic_load(&cb_result) != KV_SUCCESS);  /* ...with an error */

	/* the queue works again */
	char key2[16] = "kept-key-000002";
	kv_pair kv2;
	kv_pair_init(&kv2, key2, 15, val, sizeof(val));
	CHECK_EQ(kv_store(h, &kv2), KV_SUCCESS);
	static uint8_t back[4096];
	kv_pair rd;
	kv_pair_init(&rd, key2, 15, back, sizeof(back));
	CHECK_EQ(kv_retrieve(h, &rd), KV_SUCCESS);
	CHECK(memcmp(back, val, sizeof(val)) == 0);
	CHECK_EQ(unvme_ctrlr_reset_count(c), 0); /* the queue alone was fenced */
	unvme_ctrlr_close(c);

	/* and finalize returns (before the fix it waited forever for the lost command) */
	double t0 = now();
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
	CHECK(now() - t0 < 10);
	unsetenv("UNVME_IO_TIMEOUT_MS");
}

static void test_bad_timeout_env_is_ignored(void)
{
	setenv("UNVME_IO_TIMEOUT_MS", "12x", 1);
	setenv("UNVME_ADMIN_TIMEOUT_MS", "777", 1);
	struct unvme_ctrlr_opts o;
	unvme_ctrlr_opts_default(&o);
	CHECK_EQ(o.io_timeout_ms, 30000);
	CHECK_EQ(o.admin_timeout_ms, 777);
	unsetenv("UNVME_IO_TIMEOUT_MS");
	unsetenv("UNVME_ADMIN_TIMEOUT_MS");
}

int main(int argc, char **argv)
{
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		printf("SKIP: needs two CPUs (a completion thread on the second)\n");
		return 77;
	}
	static const struct test_case cases[] = { TEST(test_async_queue_comes_back),
						  TEST(test_bad_timeout_env_is_ignored) };
	int failed = 0;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (argc > 1 && !strstr(cases[i].name, argv[1]))
			continue;
		test_failures_in_case = 0;
		cases[i].fn();
		printf("%s %s\n", test_failures_in_case ? "FAIL" : "ok  ", cases[i].name);
		failed += test_failures_in_case != 0;
	}
	return failed ? 1 : 0;
}
