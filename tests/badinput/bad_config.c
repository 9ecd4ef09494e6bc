/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Bad-input matrix of the KV SDK's JSON configuration (kv_sdk_init(KV_SDK_INIT_FROM_JSON),
 * docs/kv-sdk.md "Configuration"): files that are not JSON, keys of the wrong type or out of
 * range, empty device lists, masks that are not masks or name CPUs the machine lacks, queue
 * depths of 0 or huge, devices that do not exist. A refused file answers
 * KV_ERR_SDK_INVALID_PARAM with a message naming the file, the key and the reason; an unknown
 * key is a warning (the message column is the SDK log's line) and the rest of the file loads.
 */
#include <stdint.h>
#include <unistd.h>

#include "kv_apis.h"
#include "unvme/unvme.h"
#include "kv_internal.h"
#include "matrix.h"

static char cfg_path[128], log_path[128];
static char msg[2048];

#define DEV "\"dev_id\": \"emu://badcfg?ns=kv:16M\""

/* Writes text as the config file, runs kv_sdk_init on it and finalizes a success; the message
 * is the config error, or the last warning printed. */
static long long init_with(const char *text)
{
	FILE *f = fopen(cfg_path, "w");
	if (!f)
		return -2;
	fputs(text, f);
	fclose(f);
	unlink(log_path);
	kv_config_set_error("%s", "");
	/* warnings (unknown keys) go to stderr while the file is parsed, before the log opens */
	fflush(stderr);
	int saved = dup(2);
	FILE *err = fopen(log_path, "w");
	if (err)
		dup2(fileno(err), 2);
	unvme_set_log(1); /* the warnings are what this case checks */
	int rc = kv_sdk_init(KV_SDK_INIT_FROM_JSON, cfg_path);
	if (rc == KV_SUCCESS)
		kv_sdk_finalize();
	unvme_set_log(0);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	if (err)
		fclose(err);
	snprintf(msg, sizeof(msg), "%s", kv_config_error());
	if (rc == KV_SUCCESS) {
		FILE *l = fopen(log_path, "r");
		char line[1024];
		while (l && fgets(line, sizeof(line), l)) {
			line[strcspn(line, "\n")] = 0;
			const char *w = strstr(line, "warning: ");
			if (w)
				snprintf(msg, sizeof(msg), "%s", w);
		}
		if (l)
			fclose(l);
	}
	/* the path changes per run: show it as the user wrote it */
	char *at = strstr(msg, cfg_path);
	if (at) {
		char rest[2048];
		snprintf(rest, sizeof(rest), "%s", at + strlen(cfg_path));
		snprintf(at, sizeof(msg) - (size_t)(at - msg), "kv.json%s", rest);
	}
	return rc;
}

static const char *message(void) { return msg; }

static const char *result_name(long long rc)
{
	static char buf[32];
	switch (rc) {
	case KV_SUCCESS: return "KV_SUCCESS";
	case KV_ERR_SDK_INVALID_PARAM: return "KV_ERR_SDK_INVALID_PARAM";
	case KV_ERR_DD_NO_DEVICE: return "KV_ERR_DD_NO_DEVICE";
	case KV_ERR_DD_INVALID_PARAM: return "KV_ERR_DD_INVALID_PARAM";
	case KV_ERR_SLAB_ALLOC_FAILURE: return "KV_ERR_SLAB_ALLOC_FAILURE";
	default:
		snprintf(buf, sizeof(buf), "0x%llx", rc);
		return buf;
	}
}

static long long missing_file(void)
{
	kv_config_set_error("%s", "");
	long long rc = kv_sdk_init(KV_SDK_INIT_FROM_JSON, "/nonexistent/kv.json");
	snprintf(msg, sizeof(msg), "%s", kv_config_error());
	return rc;
}
static long long directory(void)
{
	kv_config_set_error("%s", "");
	long long rc = kv_sdk_init(KV_SDK_INIT_FROM_JSON, "/tmp");
	snprintf(msg, sizeof(msg), "%s", kv_config_error());
	return rc;
}

#define CFG(name, json) static long long name(void) { return init_with(json); }
CFG(empty_file, "")
CFG(not_json, "{ ssd_type: kv }")
CFG(truncated, "{ \"ssd_type\": \"kv\", \"device_description\": { " DEV)
CFG(trailing, "{ \"device_description\": { " DEV " } } }")
CFG(top_array, "[ { " DEV " } ]")
CFG(no_devices, "{ \"ssd_type\": \"kv\" }")
CFG(empty_list, "{ \"device_description\": [] }")
CFG(devices_string, "{ \"device_description\": \"emu0\" }")
CFG(device_number, "{ \"device_description\": [ 7 ] }")
CFG(no_dev_id, "{ \"device_description\": { \"core_mask\": \"1\" } }")
CFG(dev_id_empty, "{ \"device_description\": { \"dev_id\": \"\" } }")
CFG(dev_id_number, "{ \"device_description\": { \"dev_id\": 7 } }")
CFG(dev_id_unknown, "{ \"device_description\": { \"dev_id\": \"no-such-ssd\" } }")
static long long too_many(void)
{
	static char text[8192];
	int n = snprintf(text, sizeof(text), "{ \"device_description\": [ ");
	for (int i = 0; i <= NR_MAX_SSD; i++)
		n += snprintf(text + n, sizeof(text) - (size_t)n, "%s{ " DEV " }", i ? ", " : "");
	snprintf(text + n, sizeof(text) - (size_t)n, " ] }");
	return init_with(text);
}
CFG(ssd_type_word, "{ \"ssd_type\": \"block\", \"device_description\": { " DEV " } }")
CFG(slab_string, "{ \"slab_size\": \"big\", \"device_description\": { " DEV " } }")
CFG(slab_zero, "{ \"slab_size\": 0, \"device_description\": { " DEV " } }")
CFG(slab_float, "{ \"slab_size\": 1.5, \"device_description\": { " DEV " } }")
CFG(cache_3, "{ \"cache\": 3, \"device_description\": { " DEV " } }")
CFG(log_level_9, "{ \"log_level\": 9, \"device_description\": { " DEV " } }")
CFG(log_file_empty, "{ \"log_file\": \"\", \"device_description\": { " DEV " } }")
CFG(policy_word, "{ \"slab_alloc_policy\": \"malloc\", \"device_description\": { " DEV " } }")
CFG(unknown_key, "{ \"slab_size\": 16, \"queue_depth\": 64, \"device_description\": { " DEV " } }")
CFG(unknown_dev_key, "{ \"slab_size\": 16, \"device_description\": { " DEV ", \"queue_dept\": 64 } }")
CFG(mask_word, "{ \"device_description\": { " DEV ", \"core_mask\": \"xyz\" } }")
CFG(mask_negative, "{ \"device_description\": { " DEV ", \"core_mask\": -1 } }")
CFG(mask_empty, "{ \"device_description\": { " DEV ", \"core_mask\": \"0\" } }")
CFG(mask_cpu_63, "{ \"device_description\": { " DEV ", \"core_mask\": \"0x8000000000000000\" } }")
CFG(mask_65_bits, "{ \"device_description\": { " DEV ", \"core_mask\": \"0x1ffffffffffffffff\" } }")
CFG(mask_cpu_63_strict, "{ \"strict_placement\": \"on\", \"device_description\": { " DEV ", \"core_mask\": \"0x8000000000000000\" } }")
CFG(sync_outside, "{ \"device_description\": { " DEV ", \"core_mask\": \"1\", \"sync_mask\": \"2\" } }")
CFG(cq_cpu_63, "{ \"device_description\": { " DEV ", \"core_mask\": \"1\", \"cq_thread_mask\": \"0x8000000000000000\" } }")
CFG(qd_0, "{ \"device_description\": { " DEV ", \"queue_depth\": 0 } }")
CFG(qd_1, "{ \"device_description\": { " DEV ", \"queue_depth\": 1 } }")
CFG(qd_huge, "{ \"device_description\": { " DEV ", \"queue_depth\": 1000000 } }")
CFG(qd_word, "{ \"device_description\": { " DEV ", \"queue_depth\": \"deep\" } }")
CFG(qd_bool, "{ \"device_description\": { " DEV ", \"queue_depth\": true } }")

#define INV KV_ERR_SDK_INVALID_PARAM
static const struct mcase cases[] = {
	MCASE("missing file", "kv_sdk_init(FROM_JSON, \"/nonexistent/kv.json\")", INV, "cannot be read: No such file", missing_file),
	MCASE("a directory", "kv_sdk_init(FROM_JSON, \"/tmp\")", INV, "'/tmp': cannot be read: Is a directory", directory),
	MCASE("empty file", "(0 bytes)", INV, "not valid JSON at line 1", empty_file),
	MCASE("not JSON", "{ ssd_type: kv }", INV, "not valid JSON at line 1 column", not_json),
	MCASE("truncated", "{ \"ssd_type\": \"kv\", \"device_description\": { \"dev_id\": ...", INV, "unexpected end of file", truncated),
	MCASE("text after the object", "{ ... } }", INV, "text after the top-level object", trailing),
	MCASE("top level an array", "[ { \"dev_id\": ... } ]", INV, "top level is not a JSON object", top_array),
	MCASE("no device_description", "{ \"ssd_type\": \"kv\" }", INV, "no device configured", no_devices),
	MCASE("empty device list", "\"device_description\": []", INV, "no device configured", empty_list),
	MCASE("device list a string", "\"device_description\": \"emu0\"", INV, "must be an object or an array", devices_string),
	MCASE("device a number", "\"device_description\": [ 7 ]", INV, "'device_description[0]' is not an object", device_number),
	MCASE("device without dev_id", "{ \"core_mask\": \"1\" }", INV, "'device_description.dev_id' is missing", no_dev_id),
	MCASE("dev_id empty", "\"dev_id\": \"\"", INV, "must be a non-empty string", dev_id_empty),
	MCASE("dev_id a number", "\"dev_id\": 7", INV, "must be a non-empty string", dev_id_number),
	MCASE("dev_id naming nothing", "\"dev_id\": \"no-such-ssd\"", KV_ERR_DD_NO_DEVICE, "no-such-ssd", dev_id_unknown),
	MCASE("65 devices", "\"device_description\": [ 65 devices ]", INV, "65 devices, at most 64", too_many),
	MCASE("ssd_type not kv or lba", "\"ssd_type\": \"block\"", INV, "\"block\" is not one of \"kv\", \"lba\"", ssd_type_word),
	MCASE("slab_size a word", "\"slab_size\": \"big\"", INV, "'slab_size': \"big\" is not an integer", slab_string),
	MCASE("slab_size 0", "\"slab_size\": 0", INV, "0 is out of range 1..", slab_zero),
	MCASE("slab_size 1.5", "\"slab_size\": 1.5", INV, "1.5 is not an integer", slab_float),
	MCASE("cache 3", "\"cache\": 3", INV, "'cache': 3 is not one of \"off\", \"on\"", cache_3),
	MCASE("log_level 9", "\"log_level\": 9", INV, "9 is out of range 0..3", log_level_9),
	MCASE("log_file empty", "\"log_file\": \"\"", INV, "'log_file': must be a path", log_file_empty),
	MCASE("slab_alloc_policy unknown", "\"slab_alloc_policy\": \"malloc\"", INV, "\"malloc\" is not one of \"posix\", \"huge\"", policy_word),
	MCASE("unknown top-level key", "\"queue_depth\": 64 (belongs in a device)", KV_SUCCESS, "unknown key 'queue_depth' ignored", unknown_key),
	MCASE("misspelt device key", "\"queue_dept\": 64", KV_SUCCESS, "unknown key 'device_description.queue_dept' ignored", unknown_dev_key),
	MCASE("core_mask not hex", "\"core_mask\": \"xyz\"", INV, "\"xyz\" is not a hexadecimal CPU mask", mask_word),
	MCASE("core_mask negative", "\"core_mask\": -1", INV, "-1 is not a hexadecimal CPU mask", mask_negative),
	MCASE("core_mask 0 (documented: automatic masks)", "\"core_mask\": \"0\"", KV_SUCCESS, "", mask_empty),
	MCASE("core_mask naming CPU 63 (documented: a warning)", "\"core_mask\": \"0x8000000000000000\"", KV_SUCCESS, "name CPUs this machine lacks", mask_cpu_63),
	MCASE("core_mask naming CPU 63, strict placement", "\"strict_placement\": \"on\", \"core_mask\": \"0x8000000000000000\"", INV, "names CPU 63, but this machine has", mask_cpu_63_strict),
	MCASE("core_mask of 65 bits", "\"core_mask\": \"0x1ffffffffffffffff\"", INV, "not a hexadecimal CPU mask", mask_65_bits),
	MCASE("sync_mask outside core_mask (documented: the bits are ignored)", "\"core_mask\": \"1\", \"sync_mask\": \"2\"", KV_SUCCESS, "", sync_outside),
	MCASE("cq_thread_mask naming CPU 63 (documented: a warning)", "\"cq_thread_mask\": \"0x8000000000000000\"", KV_SUCCESS, "the completion thread for CPU 63 runs unpinned", cq_cpu_63),
	MCASE("queue_depth 0", "\"queue_depth\": 0", INV, "0 is out of range 2..65535", qd_0),
	MCASE("queue_depth 1", "\"queue_depth\": 1", INV, "1 is out of range 2..65535", qd_1),
	MCASE("queue_depth 1000000", "\"queue_depth\": 1000000", INV, "1000000 is out of range 2..65535", qd_huge),
	MCASE("queue_depth a word", "\"queue_depth\": \"deep\"", INV, "\"deep\" is not an integer", qd_word),
	MCASE("queue_depth true", "\"queue_depth\": true", INV, "true is not an integer", qd_bool),
};

int main(int argc, char **argv)
{
	snprintf(cfg_path, sizeof(cfg_path), "/tmp/unvme-badcfg-%d.json", (int)getpid());
	snprintf(log_path, sizeof(log_path), "/tmp/unvme-badcfg-%d.log", (int)getpid());
	struct matrix m = { "JSON config", message, result_name, NULL, true };
	int r = matrix_run(&m, cases, sizeof(cases) / sizeof(cases[0]), argc, argv);
	unlink(cfg_path);
	unlink(log_path);
	return r;
}
