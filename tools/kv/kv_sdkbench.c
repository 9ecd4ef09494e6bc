/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdk_perf / sdk_iterate and their async forms: options and the store / retrieve (or
 * iterate) / delete sequence with a report per phase.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kv_apis.h"
#include "kv_report.h"
#include "kv_sdk_config.h"
#include "kv_sdkbench.h"

static void usage(const struct kvt_bench *b, FILE *f)
{
	fprintf(f, "usage: %s [options]\n"
		   "  Stores N pairs%s, %s, then deletes them;\n"
		   "  reports each phase (timings, throughput, per-I/O latency percentiles).\n\n"
		   "  -n N        number of pairs [100000]\n"
		   "  -k BYTES    key size, 4..255 [16]\n"
		   "  -v BYTES    value size, 0..2097152 [4096]\n"
		   "  -d DEVICE   device id (emu:// URI, alias or PCI address) [%s]\n"
		   "  -j FILE     SDK JSON configuration instead of -d (its first device is used;\n"
		   "              ssd_type \"lba\": a block SSD, the keys are LBAs)%s%s%s\n",
		b->prog, b->async ? " with asynchronous calls" : "",
		b->iterate ? "reads every key back through an iterator"
			   : "retrieves and verifies them",
		KVT_DEFAULT_DEVICE, b->iterate ? "" : " [",
		b->iterate ? "" : b->async ? KVT_ASYNC_CONFIG : KVT_SYNC_CONFIG,
		b->iterate ? "" : " when it exists\n              and no -d is given]");
	if (b->async)
		fprintf(f, "  -q QD       asynchronous calls kept in flight [64]\n");
	if (b->iterate)
		fprintf(f, "  -p PREFIX   the keys' 4-byte prefix, matched by the iterator [0x%08x]\n"
			   "  -b BITMASK  iterator bitmask, contiguous high bits [0xffffffff]\n",
			KVT_DEFAULT_PREFIX);
	fprintf(f, "  -o FORMAT   normal or json\n"
		   "  -h          this help\n\n"
		   "exit codes: 0 success, 1 a call failed or data did not verify, 2 usage error,\n"
		   "3 the SDK could not be started (device or configuration)\n");
}

static bool parse_u64(const char *s, uint64_t *out)
{
	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return false;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || *end)
		return false;
	*out = v;
	return true;
}

static int bad(const struct kvt_bench *b, char opt, const char *val, const char *why)
{
	fprintf(stderr, "%s: invalid value '%s' for -%c: %s (see %s -h)\n", b->prog, val, opt, why,
		b->prog);
	return KVT_EXIT_USAGE;
}

int kvt_bench_parse(struct kvt_bench *b, int argc, char **argv)
{
	b->n = 100000;
	b->key_size = 16;
	b->value_size = 4096;
	b->device = KVT_DEFAULT_DEVICE;
	b->qd = 64;
	b->prefix = KVT_DEFAULT_PREFIX;
	b->bitmask = 0xffffffffu;
	/* --help as every tool takes it (getopt alone would read it as -- and -h...) */
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--help") == 0) {
			usage(b, stdout);
			return KVT_EXIT_OK;
		}
	char opts[32] = "n:k:v:d:j:o:h";
	if (b->async)
		strcat(opts, "q:");
	if (b->iterate)
		strcat(opts, "p:b:");
	opterr = 0;
	bool device_given = false;
	int c;
	while ((c = getopt(argc, argv, opts)) != -1) {
		uint64_t v = 0;
		switch (c) {
		case 'n':
			if (!parse_u64(optarg, &v) || v == 0 || v > 1000000000ull)
				return bad(b, 'n', optarg, "expected a number of pairs, 1..1000000000");
			b->n = v;
			break;
		case 'k':
			if (!parse_u64(optarg, &v) || v < KV_MIN_KEY_LEN || v > KV_MAX_KEY_LEN)
				return bad(b, 'k', optarg, "expected a key size, 4..255");
			b->key_size = (uint32_t)v;
			break;
		case 'v':
			if (!parse_u64(optarg, &v) || v > KV_MAX_IO_VALUE_LEN)
				return bad(b, 'v', optarg, "expected a value size, 0..2097152");
			b->value_size = (uint32_t)v;
			break;
		case 'q':
			if (!parse_u64(optarg, &v) || v == 0 || v > 4095)
				return bad(b, 'q', optarg, "expected a queue depth, 1..4095");
			b->qd = (uint32_t)v;
			b->qd_given = true;
			break;
		case 'p':
			if (!parse_u64(optarg, &v) || v > UINT32_MAX)
				return bad(b, 'p', optarg, "expected a 32-bit prefix");
			b->prefix = (uint32_t)v;
			break;
		case 'b': {
			if (!parse_u64(optarg, &v) || v > UINT32_MAX)
				return bad(b, 'b', optarg, "expected a 32-bit bitmask");
			uint32_t low = ~(uint32_t)v;
			if (low & (low + 1u))
				return bad(b, 'b', optarg, "the bitmask must be contiguous high bits");
			b->bitmask = (uint32_t)v;
			break;
		}
		case 'd':
			b->device = optarg;
			device_given = true;
			break;
		case 'j':
			b->json_config = optarg;
			break;
		case 'o':
			if (strcmp(optarg, "json") == 0)
				b->json_out = true;
			else if (strcmp(optarg, "normal") == 0 || strcmp(optarg, "text") == 0)
				b->json_out = false;
			else
				return bad(b, 'o', optarg, "expected normal or json");
			break;
		case 'h':
			usage(b, stdout);
			return KVT_EXIT_OK;
		default:
			if (optopt && strchr(opts, optopt))
				fprintf(stderr, "%s: option -%c needs a value (see %s -h)\n", b->prog,
					optopt, b->prog);
			else
				fprintf(stderr, "%s: unknown option '-%c' (see %s -h)\n", b->prog,
					optopt ? optopt : '?', b->prog);
			return KVT_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s' (see %s -h)\n", b->prog, argv[optind],
			b->prog);
		return KVT_EXIT_USAGE;
	}
	if (b->json_config && device_given) {
		fprintf(stderr, "%s: -d and -j both name the device: choose one\n", b->prog);
		return KVT_EXIT_USAGE;
	}
	/* as the original sdk_perf(_async), which always read its file from the current
	 * directory */
	const char *dflt = b->async ? KVT_ASYNC_CONFIG : KVT_SYNC_CONFIG;
	if (!b->iterate && !b->json_config && !device_given && access(dflt, R_OK) == 0) {
		b->json_config = dflt;
		b->json_is_default = true;
	}
	return -1;
}

/* What the configuration file says about the run: its ssd_type decides what the keys are,
 * and (unless -q) its first device's queue depth less the slot the SDK keeps free is the
 * number of async calls in flight. A file the SDK cannot read fails in kv_sdk_init. */
static void read_file_facts(struct kvt_bench *b)
{
	kv_sdk *k = calloc(1, sizeof(*k));
	kvt_quiet_library(); /* a file that cannot be read is reported once, by kv_sdk_init's caller */
	if (k && kv_sdk_load_option(k, (char *)b->json_config) == 0) {
		b->ssd_type = k->ssd_type;
		uint32_t qd = k->dd_options[0].queue_depth;
		if (!b->qd_given && qd > 1)
			b->qd = qd - 1;
	}
	free(k);
}

static int start_sdk(struct kvt_bench *b, uint64_t *handle)
{
	int rc;
	b->ssd_type = KV_TYPE_SSD;
	if (b->json_config) {
		read_file_facts(b);
		rc = kvt_sdk_start(b->json_config, b->prog);
	} else {
		struct kvt_sdk_cfg cfg;
		kvt_cfg_single(&cfg, b->device, b->async, b->async ? b->qd : 0);
		rc = kvt_sdk_start_cfg(&cfg, b->prog);
	}
	if (rc)
		return KVT_EXIT_HOST;
	int nr = 0;
	uint64_t handles[NR_MAX_SSD];
	if (kv_get_device_handles(&nr, handles) != KV_SUCCESS || nr < 1) {
		fprintf(stderr, "%s: the SDK started with no device\n", b->prog);
		kv_sdk_finalize();
		return KVT_EXIT_HOST;
	}
	*handle = handles[0];
	return KVT_EXIT_OK;
}

/* A block SSD (ssd_type "lba", as the original's shipped kv_sdk_async_config.json): key i is
 * the LBA of the i-th value-sized extent, as the original sdk_perf made its keys. */
static int lba_keys(const struct kvt_bench *b, uint64_t handle, struct kvt_keyspec *ks)
{
	if (b->iterate) {
		fprintf(stderr, "%s: %s configures a block SSD (ssd_type lba): iterators need a KV "
			"SSD\n", b->prog, b->json_config);
		return KVT_EXIT_USAGE;
	}
	uint32_t sector = kv_get_sector_size(handle);
	if (sector == UINT32_MAX || !sector || b->value_size == 0 || b->value_size % sector) {
		fprintf(stderr, "%s: a block SSD needs a value size that is a non-zero multiple of "
			"its sector size (%u): -v %u\n", b->prog, sector, b->value_size);
		return KVT_EXIT_USAGE;
	}
	ks->lba = true;
	ks->key_size = 8;
	ks->blocks_per_value = b->value_size / sector;
	uint64_t total = kv_get_total_size(handle);
	if (total != KV_ERR_INVALID_VALUE && b->n > total / b->value_size) {
		fprintf(stderr, "%s: %llu values of %u bytes do not fit in the block SSD's %llu "
			"bytes\n", b->prog, (unsigned long long)b->n, b->value_size,
			(unsigned long long)total);
		return KVT_EXIT_USAGE;
	}
	return KVT_EXIT_OK;
}

/* Runs one phase, reports it and says whether it went well. */
static int phase(const struct kvt_bench *b, struct kvt_phase *p, json_object *phases)
{
	const char *name = kvt_op_name(p->op);
	p->progress = true;
	if (kvt_phase_run(p, b->prog) != 0)
		return KVT_EXIT_HOST;
	if (b->json_out)
		json_object_array_add(phases, kvt_report_json(name, p));
	else
		kvt_report_text(stdout, name, p);
	if (kvt_phase_failed(p)) {
		kvt_report_failure(b->prog, name, p);
		return KVT_EXIT_DEVICE;
	}
	return KVT_EXIT_OK;
}

int kvt_bench_main(struct kvt_bench *b)
{
	struct kvt_keyspec ks = { .key_size = b->key_size, .prefix = b->prefix };
	struct kvt_valuespec vs = { .size = b->value_size, .fill = -1 };
	const char *why = kvt_keys_check(&ks, b->n);
	if (why) {
		fprintf(stderr, "%s: -k %u with -n %llu: %s\n", b->prog, b->key_size,
			(unsigned long long)b->n, why);
		return KVT_EXIT_USAGE;
	}
	uint64_t handle = 0;
	int rc = start_sdk(b, &handle);
	if (rc)
		return rc;
	if (b->ssd_type == LBA_TYPE_SSD) {
		rc = lba_keys(b, handle, &ks);
		if (rc) {
			kv_sdk_finalize();
			return rc;
		}
	}

	json_object *root = json_object_new_object();
	json_object *phases = json_object_new_array();
	json_object_object_add(root, "program", json_object_new_string(b->prog));
	json_object_object_add(root, "device",
			       json_object_new_string(b->json_config ? b->json_config : b->device));
	json_object_object_add(root, "pairs", json_object_new_uint64(b->n));
	json_object_object_add(root, "key_size", json_object_new_int64(ks.key_size));
	json_object_object_add(root, "value_size", json_object_new_int64(b->value_size));
	json_object_object_add(root, "mode", json_object_new_string(b->async ? "async" : "sync"));
	json_object_object_add(root, "ssd_type", json_object_new_string(
				       b->ssd_type == LBA_TYPE_SSD ? "lba" : "kv"));
	if (b->async)
		json_object_object_add(root, "queue_depth", json_object_new_int64(b->qd));
	if (!b->json_out) {
		printf("%s: %llu pairs, %u-byte %s, %u-byte values, ", b->prog,
		       (unsigned long long)b->n, ks.key_size,
		       ks.lba ? "keys (LBAs of a block SSD)" : "keys", b->value_size);
		if (b->async)
			printf("async, queue depth %u", b->qd);
		else
			printf("sync");
		printf(", on %s\n\n", b->json_config ? b->json_config : b->device);
	}

	struct kvt_phase *p = calloc(1, sizeof(*p));
	if (!p) {
		fprintf(stderr, "%s: out of memory\n", b->prog);
		kv_sdk_finalize();
		json_object_put(phases);
		json_object_put(root);
		return KVT_EXIT_HOST;
	}
	p->handle = handle;
	p->ks = &ks;
	p->vs = &vs;
	p->n = b->n;
	p->async = b->async;
	p->qd = b->qd;
	p->verify = true;

	int result = KVT_EXIT_OK;
	p->op = KVT_STORE;
	rc = phase(b, p, phases);
	if (rc)
		result = rc;
	if (!b->json_out)
		printf("\n");
	if (result == KVT_EXIT_OK) {
		if (b->iterate) {
			rc = kvt_iterate_run(b, handle, &ks, root, phases);
		} else {
			p->op = KVT_RETRIEVE;
			rc = phase(b, p, phases);
		}
		if (rc && !result)
			result = rc;
		if (!b->json_out)
			printf("\n");
	}
	/* delete even after a failure: a persistent namespace should not keep the pairs */
	p->op = KVT_DELETE;
	p->missing_ok = result != KVT_EXIT_OK;
	rc = phase(b, p, phases);
	if (rc && !result)
		result = rc;
	free(p);

	json_object_object_add(root, "phases", phases);
	json_object_object_add(root, "verified", json_object_new_boolean(result == KVT_EXIT_OK));
	if (b->json_out)
		printf("%s\n", json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
								    JSON_C_TO_STRING_NOSLASHESCAPE));
	else
		printf("\nresult: %s\n", result == KVT_EXIT_OK ? "PASS" : "FAIL");
	json_object_put(root);
	fflush(stdout);
	kv_sdk_finalize();
	return result;
}
