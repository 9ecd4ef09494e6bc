/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The configuration: every JSON key of the original, both forms of device_description, the
 * hexadecimal masks, the automatic layout, and each broken case failing with a message that
 * names the file, the key and the reason.
 */
#include <stdint.h>

#include "kv_internal.h"
#include "kv_test.h"
#include "test_util.h"

static int load(const char *json, struct kv_config *cfg)
{
	const char *path = kv_test_write_config(0, "%s", json);
	return kv_config_load_file(path, cfg);
}

/* The load fails and the message holds every one of the given fragments. */
static void expect_error(const char *json, const char *frag1, const char *frag2)
{
	struct kv_config cfg;
	int rc = load(json, &cfg);
	CHECK_EQ(rc, -1);
	const char *msg = kv_config_error();
	if (!strstr(msg, "kvsdk_test_") || !strstr(msg, frag1) || (frag2 && !strstr(msg, frag2))) {
		fprintf(stderr, "  unexpected message: %s\n  (wanted '%s'%s%s)\n", msg, frag1,
			frag2 ? " and " : "", frag2 ? frag2 : "");
		CHECK(0);
	}
	if (rc == 0)
		kv_config_free(&cfg);
}

static void test_every_key_is_read(void)
{
	struct kv_config cfg;
	int rc = load("{ \"cache\": \"on\", \"cache_algorithm\": \"radix\", \"cache_reclaim_policy\": \"lru\",\n"
		      "  \"slab_size\": 128, \"app_hugemem_size\": 16, \"slab_alloc_policy\": \"posix\",\n"
		      "  \"ssd_type\": \"lba\", \"submit_retry_interval\": -1, \"log_level\": 3,\n"
		      "  \"log_file\": \"/tmp/x.log\", \"cq_idle_sleep_max_us\": 250,\n"
		      "  \"cq_coalesce_max_us\": 0,\n"
		      "  \"device_description\": { \"dev_id\": \"emu0\", \"core_mask\": 10,\n"
		      "    \"sync_mask\": \"0x10\", \"cq_thread_mask\": \"c\", \"queue_depth\": 64 } }",
		      &cfg);
	REQUIRE(rc == 0);
	const kv_sdk *k = &cfg.sdk;
	CHECK(k->use_cache);
	CHECK_EQ(k->slab_size, 128ull << 20);
	CHECK_EQ(k->app_hugemem_size, 16ull << 20);
	CHECK_EQ(k->slab_alloc_policy, SLAB_MM_ALLOC_POSIX);
	CHECK_EQ(k->ssd_type, LBA_TYPE_SSD);
	CHECK_EQ(k->submit_retry_interval, -1);
	CHECK_EQ(k->log_level, 3);
	CHECK_STREQ(k->log_file, "/tmp/x.log");
	CHECK_EQ(cfg.cq_idle_sleep_max_us, 250);
	CHECK_EQ(cfg.cq_coalesce_max_us, 0);
	CHECK_EQ(k->nr_ssd, 1);
	CHECK_STREQ(k->dev_id[0], "emu0");
	CHECK_EQ(k->dd_options[0].core_mask, 0x10);  /* a JSON number is read as hex digits */
	CHECK_EQ(k->dd_options[0].sync_mask, 0x10);
	CHECK_EQ(k->dd_options[0].cq_thread_mask, 0xc);
	CHECK_EQ(k->dd_options[0].queue_depth, 64);
	kv_config_free(&cfg);
}

static void test_defaults_and_device_array(void)
{
	struct kv_config cfg;
	int rc = load("{ \"device_description\": [ { \"dev_id\": \"emu0\" },\n"
		      "  { \"dev_id\": \"0000:02:00.0\", \"core_mask\": \"0x3\", \"unknown_dev_key\": 1 } ],\n"
		      "  \"unknown_top_key\": true }", &cfg);
	REQUIRE(rc == 0);
	const kv_sdk *k = &cfg.sdk;
	CHECK(!k->use_cache);
	CHECK_EQ(k->slab_size, 44ull << 20);
	CHECK_EQ(k->slab_alloc_policy, SLAB_MM_ALLOC_HUGE);
	CHECK_EQ(k->ssd_type, KV_TYPE_SSD);
	CHECK_EQ(k->submit_retry_interval, 1);
	CHECK_EQ(k->log_level, 0);
	CHECK_STREQ(k->log_file, "/tmp/kvsdk.log");
	CHECK_EQ(cfg.cq_idle_sleep_max_us, 1000);
	CHECK_EQ(cfg.cq_coalesce_max_us, 8);
	CHECK_EQ(k->nr_ssd, 2);
	CHECK_STREQ(k->dev_id[1], "0000:02:00.0");
	CHECK_EQ(k->dd_options[1].core_mask, 3);
	CHECK_EQ(k->dd_options[0].core_mask, 0); /* automatic, resolved by the mask check */
	/* 0x3 sync 0: async cores and no cq mask: a completion thread on the highest CPU, as
	 * the original started one on a default core */
	CHECK_EQ(kv_config_check_masks(&cfg, 8), 0);
	CHECK_EQ(k->dd_options[1].cq_thread_mask, 0x80);
	CHECK_EQ(k->dd_options[1].num_cq_threads, 1);
	kv_config_free(&cfg);
}

static void test_broken_files_name_file_key_and_reason(void)
{
	expect_error("{ \"device_description\": { \"dev_id\": \"emu0\" },\n  \"cache\": on }",
		     "not valid JSON at line 2", NULL);
	expect_error("{ \"device_description\": { \"dev_id\": \"emu0\" } } trailing", "text after", NULL);
	expect_error("{ \"device_description\": { \"dev_id\": \"emu0\" }", "unexpected end", NULL);
	expect_error("[ 1, 2 ]", "top level is not a JSON object", NULL);
	expect_error("{ \"cache\": \"off\" }", "'device_description'", "no device");
	expect_error("{ \"device_description\": 5 }", "'device_description'", "object or an array");
	expect_error("{ \"device_description\": { \"core_mask\": 1 } }",
		     "'device_description.dev_id' is missing", NULL);
	expect_error("{ \"device_description\": [ { \"dev_id\": \"emu0\" }, { \"dev_id\": \"\" } ] }",
		     "'device_description[1].dev_id'", "non-empty");
	expect_error("{ \"device_description\": { \"dev_id\": \"emu0\", \"core_mask\": \"xyz\" } }",
		     "'device_description.core_mask'", "not a hexadecimal");
	expect_error("{ \"device_description\": { \"dev_id\": \"emu0\", \"sync_mask\": 1.5 } }",
		     "'device_description.sync_mask'", "not a hexadecimal");
	expect_error("{ \"device_description\": { \"dev_id\": \"emu0\", \"cq_thread_mask\": -1 } }",
		     "'device_description.cq_thread_mask'", "not a hexadecimal");
	expect_error("{ \"device_description\": { \"dev_id\": \"emu0\", \"queue_depth\": 1 } }",
		     "'device_description.queue_depth'", "out of range");
	expect_error("{ \"slab_size\": \"big\", \"device_description\": { \"dev_id\": \"emu0\" } }",
		     "'slab_size'", "not an integer");
	expect_error("{ \"ssd_type\": \"ssd\", \"device_description\": { \"dev_id\": \"emu0\" } }",
		     "'ssd_type'", "\"kv\", \"lba\"");
	expect_error("{ \"cache\": \"maybe\", \"device_description\": { \"dev_id\": \"emu0\" } }",
		     "'cache'", "not one of");
	expect_error("{ \"log_level\": 7, \"device_description\": { \"dev_id\": \"emu0\" } }",
		     "'log_level'", "out of range 0..3");
	expect_error("{ \"submit_retry_interval\": 5000, \"device_description\": { \"dev_id\": \"emu0\" } }",
		     "'submit_retry_interval'", "out of range -1..1000");
	expect_error("{ \"slab_alloc_policy\": \"mmap\", \"device_description\": { \"dev_id\": \"emu0\" } }",
		     "'slab_alloc_policy'", "\"posix\", \"huge\"");
	expect_error("{ \"cq_idle_sleep_max_us\": 0, \"device_description\": { \"dev_id\": \"emu0\" } }",
		     "'cq_idle_sleep_max_us'", "out of range");
	expect_error("{ \"cq_coalesce_max_us\": 1001, \"device_description\": { \"dev_id\": \"emu0\" } }",
		     "'cq_coalesce_max_us'", "out of range 0..1000");
	expect_error("{ \"log_file\": 3, \"device_description\": { \"dev_id\": \"emu0\" } }",
		     "'log_file'", "path");
	struct kv_config cfg;
	CHECK_EQ(kv_config_load_file("/nonexistent/dir/kv.json", &cfg), -1);
	CHECK(strstr(kv_config_error(), "'/nonexistent/dir/kv.json'") != NULL);
	CHECK(strstr(kv_config_error(), "cannot be read") != NULL);
}

static void check_masks_error(const char *masks, int ncpu, const char *frag)
{
	struct kv_config cfg;
	char json[512];
	snprintf(json, sizeof(json), "{ \"strict_placement\": true, \"device_description\": "
		 "{ \"dev_id\": \"emu0\", %s } }", masks);
	REQUIRE(load(json, &cfg) == 0);
	CHECK_EQ(kv_config_check_masks(&cfg, ncpu), -1);
	if (!strstr(kv_config_error(), frag) || !strstr(kv_config_error(), "kvsdk_test_")) {
		fprintf(stderr, "  unexpected message: %s (wanted '%s')\n", kv_config_error(), frag);
		CHECK(0);
	}
	kv_config_free(&cfg);
}

/* Masks, as the original took them (item G of the compatibility issue), and their one error:
 * CPUs this machine lacks with strict placement asked for. */
static const kv_nvme_io_options *masks_of(struct kv_config *cfg, const char *json, int ncpu)
{
	CHECK_EQ(load(json, cfg), 0); /* a failed load leaves the defaults: the checks fail */
	CHECK_EQ(kv_config_check_masks(cfg, ncpu), 0);
	return &cfg->sdk.dd_options[0];
}

static void test_masks_the_original_accepted(void)
{
	struct kv_config cfg;
	const kv_nvme_io_options *o;
	/* sync bits outside core_mask are ignored (sdk_exist_append_iterate_getlog's 1/0xF) */
	o = masks_of(&cfg, "{ \"device_description\": { \"dev_id\": \"emu0\", \"core_mask\": 1, "
			   "\"sync_mask\": \"f\", \"cq_thread_mask\": 2 } }", 4);
	CHECK_EQ(o->sync_mask, 1);
	CHECK_EQ(o->cq_thread_mask, 0); /* all sync */
	kv_config_free(&cfg);
	/* kv_perf's shipped config: the completion core is the async submission core */
	o = masks_of(&cfg, "{ \"device_description\": { \"dev_id\": \"emu0\", \"core_mask\": 1, "
			   "\"sync_mask\": 0, \"cq_thread_mask\": 1 } }", 2);
	CHECK_EQ(o->cq_thread_mask, 1);
	CHECK_EQ(o->num_cq_threads, 1);
	kv_config_free(&cfg);
	/* mkfs / fuse: LBA, async cores, cq_thread_mask 0: no completion thread at all */
	o = masks_of(&cfg, "{ \"ssd_type\": \"lba\", \"device_description\": { \"dev_id\": \"emu0\", "
			   "\"core_mask\": 3, \"sync_mask\": 0, \"cq_thread_mask\": 0 } }", 2);
	CHECK_EQ(o->cq_thread_mask, 0);
	CHECK_EQ(o->num_cq_threads, 0);
	kv_config_free(&cfg);
	/* KV mode, async cores, no cq mask: a completion thread on the highest CPU */
	o = masks_of(&cfg, "{ \"device_description\": { \"dev_id\": \"emu0\", \"core_mask\": 3, "
			   "\"sync_mask\": 1 } }", 4);
	CHECK_EQ(o->cq_thread_mask, 0x8);
	kv_config_free(&cfg);
	/* a cq_thread_mask naming a CPU that does not exist, all cores sync: ignored */
	o = masks_of(&cfg, "{ \"device_description\": { \"dev_id\": \"emu0\", \"core_mask\": \"f\", "
			   "\"sync_mask\": \"f\", \"cq_thread_mask\": 10 } }", 2);
	CHECK_EQ(o->core_mask, 0xf); /* cores 2, 3: queues exist, a warning says so */
	CHECK_EQ(o->cq_thread_mask, 0);
	kv_config_free(&cfg);
	/* async cores beyond the machine, completion core beyond it: runs, with a warning */
	o = masks_of(&cfg, "{ \"device_description\": { \"dev_id\": \"emu0\", \"core_mask\": \"f\", "
			   "\"sync_mask\": 0, \"cq_thread_mask\": 10 } }", 2);
	CHECK_EQ(o->cq_thread_mask, 0x10);
	kv_config_free(&cfg);
	/* strict placement makes CPUs this machine lacks an error naming them */
	check_masks_error("\"core_mask\": 4, \"sync_mask\": 4", 2,
			  "core_mask 0x4 names CPU 2, but this machine has 2 CPUs (0-1)");
	check_masks_error("\"core_mask\": 1, \"cq_thread_mask\": 10", 4,
			  "cq_thread_mask 0x10 names CPU 4, but this machine has 4 CPUs (0-3)");
	setenv("UNVME_KV_STRICT_PLACEMENT", "1", 1);
	REQUIRE(load("{ \"device_description\": { \"dev_id\": \"emu0\", \"core_mask\": 4 } }", &cfg) == 0);
	CHECK_EQ(kv_config_check_masks(&cfg, 2), -1);
	kv_config_free(&cfg);
	unsetenv("UNVME_KV_STRICT_PLACEMENT");
	/* possible ones */
	REQUIRE(load("{ \"device_description\": { \"dev_id\": \"emu0\", \"core_mask\": 3, \"sync_mask\": 3 } }", &cfg) == 0);
	CHECK_EQ(kv_config_check_masks(&cfg, 2), 0);
	CHECK_EQ(cfg.sdk.dd_options[0].cq_thread_mask, 0); /* all sync: no completion thread */
	CHECK_EQ(cfg.sdk.dd_options[0].queue_depth, 32);
	kv_config_free(&cfg);
	REQUIRE(load("{ \"device_description\": { \"dev_id\": \"emu0\", \"core_mask\": 3, \"sync_mask\": 1, \"cq_thread_mask\": \"c\" } }", &cfg) == 0);
	CHECK_EQ(kv_config_check_masks(&cfg, 4), 0);
	CHECK_EQ(cfg.sdk.dd_options[0].num_cq_threads, 2);
	kv_config_free(&cfg);
}

static void test_hex_mask_parser(void)
{
	uint64_t v = 0;
	CHECK_EQ(kv_parse_hex_mask("10", &v), 0);
	CHECK_EQ(v, 0x10);
	CHECK_EQ(kv_parse_hex_mask("0xFf", &v), 0);
	CHECK_EQ(v, 0xff);
	CHECK_EQ(kv_parse_hex_mask("ffffffffffffffff", &v), 0);
	CHECK(v == UINT64_MAX);
	CHECK_EQ(kv_parse_hex_mask("1ffffffffffffffff", &v), -1);
	CHECK_EQ(kv_parse_hex_mask("", &v), -1);
	CHECK_EQ(kv_parse_hex_mask("0x", &v), -1);
	CHECK_EQ(kv_parse_hex_mask("12g", &v), -1);
}

static void test_automatic_masks(void)
{
	kv_nvme_io_options o;
	memset(&o, 0, sizeof(o));
	kv_auto_masks(0, 1, &o);
	CHECK_EQ(o.core_mask, 1);
	CHECK_EQ(o.sync_mask, 1);
	CHECK_EQ(o.cq_thread_mask, 0);
	kv_auto_masks(0, 2, &o);
	CHECK_EQ(o.core_mask, 0x1);
	CHECK_EQ(o.sync_mask, 0x0);
	CHECK_EQ(o.cq_thread_mask, 0x2);
	kv_auto_masks(0, 4, &o);
	CHECK_EQ(o.core_mask, 0x7);
	CHECK_EQ(o.sync_mask, 0x1);
	CHECK_EQ(o.cq_thread_mask, 0x8);
	kv_auto_masks(3, 8, &o);
	CHECK_EQ(o.core_mask, 0x3f);
	CHECK_EQ(o.sync_mask, 0x7);
	CHECK_EQ(o.cq_thread_mask, 0x40);
	kv_auto_masks(4, 8, &o); /* at most four devices per completion core */
	CHECK_EQ(o.cq_thread_mask, 0x80);
	kv_auto_masks(8, 8, &o);
	CHECK_EQ(o.cq_thread_mask, 0x40);
	/* and through the check: a missing core_mask is filled in, valid by construction */
	for (int ncpu = 1; ncpu <= 64; ncpu++) {
		struct kv_config cfg;
		REQUIRE(load("{ \"device_description\": [ { \"dev_id\": \"a\" }, { \"dev_id\": \"b\" },"
			     " { \"dev_id\": \"c\" }, { \"dev_id\": \"d\" }, { \"dev_id\": \"e\" } ] }", &cfg) == 0);
		CHECK_EQ(kv_config_check_masks(&cfg, ncpu), 0);
		for (int i = 0; i < 5; i++) {
			const kv_nvme_io_options *p = &cfg.sdk.dd_options[i];
			CHECK(p->core_mask != 0);
			CHECK((p->sync_mask & ~p->core_mask) == 0);
			if (ncpu > 1)
				CHECK((p->cq_thread_mask & p->core_mask) == 0);
		}
		kv_config_free(&cfg);
	}
}

/* An emu:// URI longer than DEV_ID_LEN - 1: the struct holds a token for it, the SDK the
 * whole id, also through kv_sdk_load_option + kv_sdk_init(FROM_STR). */
static void test_long_device_id_survives_the_struct(void)
{
	const char *uri = "emu://a-rather-long-device-name?ns=mem:8M:4096";
	const char *path = kv_test_write_config(1,
		"{ \"ssd_type\": \"lba\", \"slab_size\": 32, \"slab_alloc_policy\": \"posix\",\n"
		"  \"device_description\": { \"dev_id\": \"%s\", \"core_mask\": 1, \"sync_mask\": 1 } }", uri);
	kv_sdk sdk;
	memset(&sdk, 0, sizeof(sdk));
	REQUIRE(kv_sdk_load_option(&sdk, (char *)path) == 0);
	CHECK_EQ(strlen(sdk.dev_id[0]), DEV_ID_LEN - 1);
	CHECK(strncmp(sdk.dev_id[0], uri, 22) == 0);
	CHECK_EQ(sdk.dev_id[0][22], '~');
	CHECK_EQ(sdk.slab_size, 32u << 20);
	CHECK_EQ(sdk.ssd_type, LBA_TYPE_SSD);
	REQUIRE(kv_sdk_init(KV_SDK_INIT_FROM_STR, &sdk) == KV_SUCCESS);
	CHECK_EQ(kv_get_sector_size(sdk.dev_handle[0]), 4096); /* the ":4096" past the cut */
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
	REQUIRE(kv_sdk_init(KV_SDK_INIT_FROM_JSON, (void *)path) == KV_SUCCESS);
	int n = 0;
	uint64_t h[NR_MAX_SSD];
	CHECK_EQ(kv_get_device_handles(&n, h), KV_SUCCESS);
	CHECK_EQ(kv_get_sector_size(h[0]), 4096);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
}

/* Two ids equal in their first 31 characters are two devices (issue 21.11): each struct token
 * maps back to its own whole id. */
static void test_long_ids_differing_late_stay_apart(void)
{
	const char *a = "emu://same-prefix-for-31-chars?ns=mem:8M:512";
	const char *b = "emu://same-prefix-for-31-chars?ns=mem:8M:4096";
	const char *path = kv_test_write_config(4,
		"{ \"ssd_type\": \"lba\", \"slab_size\": 32, \"slab_alloc_policy\": \"posix\",\n"
		"  \"device_description\": [ { \"dev_id\": \"%s\", \"core_mask\": 1, \"sync_mask\": 1 },\n"
		"    { \"dev_id\": \"%s\", \"core_mask\": 1, \"sync_mask\": 1 } ] }", a, b);
	kv_sdk sdk;
	memset(&sdk, 0, sizeof(sdk));
	REQUIRE(kv_sdk_load_option(&sdk, (char *)path) == 0);
	CHECK(strncmp(a, b, DEV_ID_LEN - 1) == 0);
	CHECK(strcmp(sdk.dev_id[0], sdk.dev_id[1]) != 0);
	CHECK_STREQ(kv_config_full_devid(sdk.dev_id[0]), a);
	CHECK_STREQ(kv_config_full_devid(sdk.dev_id[1]), b);
	REQUIRE(kv_sdk_init(KV_SDK_INIT_FROM_STR, &sdk) == KV_SUCCESS);
	CHECK_EQ(kv_get_sector_size(sdk.dev_handle[0]), 512);
	CHECK_EQ(kv_get_sector_size(sdk.dev_handle[1]), 4096);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
	/* a short id is its own token; an unknown 31-character one is used as it is */
	CHECK(kv_config_full_devid("emu0") == NULL);
}

/* The driver keeps queue depths in 16 bits: 65535 is the limit, in both forms (21.15). */
static void test_queue_depth_limit(void)
{
	expect_error("{ \"device_description\": { \"dev_id\": \"emu0\", \"queue_depth\": 65536 } }",
		     "'device_description.queue_depth'", "2..65535");
	struct kv_config cfg;
	REQUIRE(load("{ \"device_description\": { \"dev_id\": \"emu0\", \"queue_depth\": 65535 } }", &cfg) == 0);
	kv_config_free(&cfg);
	kv_sdk sdk;
	memset(&sdk, 0, sizeof(sdk));
	snprintf(sdk.dev_id[0], DEV_ID_LEN, "emu0");
	sdk.dd_options[0].queue_depth = 65536;
	CHECK_EQ(kv_sdk_init(KV_SDK_INIT_FROM_STR, &sdk), KV_ERR_SDK_INVALID_PARAM);
	CHECK(strstr(kv_config_error(), "queue_depth 65536 is not 2..65535") != NULL);
}

static void test_init_and_load_option_fail_on_broken_files(void)
{
	const char *path = kv_test_write_config(2, "{ \"device_description\": { \"dev_id\": \"emu0\", "
						   "\"core_mask\": \"zz\" } }");
	CHECK_EQ(kv_sdk_init(KV_SDK_INIT_FROM_JSON, (void *)path), KV_ERR_SDK_INVALID_PARAM);
	CHECK(strstr(kv_config_error(), path) != NULL);
	CHECK(strstr(kv_config_error(), "core_mask") != NULL);
	CHECK_EQ(kv_is_sdk_initialized(), 0);
	kv_sdk sdk;
	memset(&sdk, 0, sizeof(sdk));
	CHECK_EQ(kv_sdk_load_option(&sdk, (char *)path), -1);
	CHECK_EQ(kv_sdk_load_option(NULL, (char *)path), -1);
	CHECK_EQ(kv_sdk_load_option(&sdk, NULL), -1);
	/* an impossible mask fails init too (a CPU this machine does not have, strictly) */
	path = kv_test_write_config(3, "{ \"strict_placement\": \"on\", \"device_description\": "
				       "{ \"dev_id\": \"emu://m?ns=mem:8M\", \"core_mask\": "
				       "\"8000000000000000\", \"sync_mask\": \"8000000000000000\" } }");
	CHECK_EQ(kv_sdk_init(KV_SDK_INIT_FROM_JSON, (void *)path), KV_ERR_SDK_INVALID_PARAM);
	CHECK(strstr(kv_config_error(), "names CPU 63") != NULL);
	/* struct form checks */
	memset(&sdk, 0, sizeof(sdk));
	sdk.nr_ssd = 0;
	CHECK_EQ(kv_sdk_init(KV_SDK_INIT_FROM_STR, &sdk), KV_ERR_SDK_INVALID_PARAM);
	sdk.nr_ssd = 1;
	CHECK_EQ(kv_sdk_init(KV_SDK_INIT_FROM_STR, &sdk), KV_ERR_SDK_INVALID_PARAM); /* empty dev_id */
	snprintf(sdk.dev_id[0], DEV_ID_LEN, "emu0");
	sdk.slab_alloc_policy = 3;
	CHECK_EQ(kv_sdk_init(KV_SDK_INIT_FROM_STR, &sdk), KV_ERR_SDK_INVALID_PARAM);
	CHECK(strstr(kv_config_error(), "slab_alloc_policy") != NULL);
	CHECK_EQ(kv_is_sdk_initialized(), 0);
	kv_test_remove_configs();
}

TEST_MAIN(TEST(test_every_key_is_read), TEST(test_defaults_and_device_array),
	  TEST(test_broken_files_name_file_key_and_reason), TEST(test_masks_the_original_accepted),
	  TEST(test_hex_mask_parser), TEST(test_automatic_masks),
	  TEST(test_long_device_id_survives_the_struct), TEST(test_long_ids_differing_late_stay_apart),
	  TEST(test_queue_depth_limit),
	  TEST(test_init_and_load_option_fail_on_broken_files))
