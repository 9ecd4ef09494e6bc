/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Iterator commands, as the original kv_nvme's open-it / read-it / close-it, plus kv-it-info
 * (the device's iterator table). Iterators live in the device: on an emulated controller, as
 * long as the process that opened it, so a sequence of them runs inside `unvme batch`.
 */
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "kv_apis.h"
#include "kv_iter_buf.h"
#include "kv_iter_info.h"
#include "kv_result_name.h"
#include "kv_wait.h"
#include "tsc.h"

/* -w / --show-command and -d / --dry-run (text output only: JSON stays one document):
 * the call's arguments before it. Returns true when the call must not be made. */
static bool show_call(const struct cli_args *a, const char *args)
{
	if ((a->kv_show || a->kv_dry_run) && a->fmt == UNVME_FMT_TEXT)
		printf("command:      %s\ndevice:       %s\n%s", a->cmd, a->positional, args);
	if (a->kv_dry_run)
		printf("%s: dry run, nothing sent\n", a->cmd);
	return a->kv_dry_run;
}

static void show_latency(const struct cli_args *a, uint64_t t0)
{
	if (a->kv_latency && a->fmt == UNVME_FMT_TEXT)
		printf("latency:      %.3f us\n", (double)(mono_ns() - t0) / 1e3);
}

static int iterate_read(uint64_t h, kv_iterate *it, bool async)
{
	if (!async)
		return kv_iterate_read(h, it);
	struct cli_kv_wait w;
	cli_kv_wait_arm_iter(it, &w);
	return cli_kv_wait(&w, kv_iterate_read_async(h, it));
}

int cmd_kv_open_it(struct cli_args *a)
{
	char args[256];
	snprintf(args, sizeof(args), "prefix:       0x%08x\nbitmask:      0x%08x\nkeyspace:     %u\n"
		 "type:         %s\n", a->kv_prefix, a->kv_bitmask, a->kv_keyspace,
		 kvt_iter_type_name(a->kv_it_type));
	if (show_call(a, args))
		return EXIT_OK;
	uint64_t h;
	int rc = cli_kv_handle(a, &h);
	if (rc)
		return rc;
	uint64_t t0 = mono_ns();
	uint32_t it = kv_iterate_open(h, a->kv_keyspace, a->kv_bitmask, a->kv_prefix, a->kv_it_type);
	show_latency(a, t0);
	if (it < 1 || it > KV_MAX_ITERATE_HANDLE)
		return cli_kv_result(a->cmd, (int)it);
	if (a->fmt == UNVME_FMT_JSON) {
		json_object *o = json_object_new_object();
		json_object_object_add(o, "handle", json_object_new_int64(it));
		json_object_object_add(o, "prefix", json_object_new_int64(a->kv_prefix));
		json_object_object_add(o, "bitmask", json_object_new_int64(a->kv_bitmask));
		json_object_object_add(o, "keyspace", json_object_new_int(a->kv_keyspace));
		json_object_object_add(o, "type",
				       json_object_new_string(kvt_iter_type_name(a->kv_it_type)));
		cli_json_print(o);
	} else {
		printf("kv-open-it: iterator %u opened (prefix 0x%08x, bitmask 0x%08x, keyspace %u, "
		       "type %s)\n", it, a->kv_prefix, a->kv_bitmask, a->kv_keyspace,
		       kvt_iter_type_name(a->kv_it_type));
	}
	return EXIT_OK;
}

struct key_list {
	json_object *arr; /* JSON: the keys */
	bool text;
};

/* A key as text when it is printable, else as hex. */
static void key_text(const uint8_t *key, uint32_t klen, char *out, size_t outlen)
{
	bool printable = klen > 0;
	for (uint32_t i = 0; i < klen; i++)
		if (key[i] < 0x20 || key[i] >= 0x7f)
			printable = false;
	size_t o = 0;
	if (printable) {
		snprintf(out, outlen, "%.*s", (int)klen, (const char *)key);
		return;
	}
	o += (size_t)snprintf(out, outlen, "0x");
	for (uint32_t i = 0; i < klen && o + 3 < outlen; i++)
		o += (size_t)snprintf(out + o, outlen - o, "%02x", key[i]);
}

static void on_key(const uint8_t *key, uint32_t klen, void *arg)
{
	struct key_list *l = arg;
	char buf[600];
	key_text(key, klen, buf, sizeof(buf));
	if (l->text)
		printf("  %s\n", buf);
	else
		json_object_array_add(l->arr, json_object_new_string(buf));
}

int cmd_kv_read_it(struct cli_args *a)
{
	if (!cli_given(a, "id"))
		return cli_fail(a->cmd, EXIT_USAGE, "option --id (-i) is required (see 'unvme %s "
				"--help')", a->cmd);
	uint64_t size = cli_given(a, "value-size") ? a->kv_value_size : KV_ITERATE_READ_BUFFER_SIZE;
	if (size > KV_MAX_IO_VALUE_LEN)
		return cli_fail(a->cmd, EXIT_USAGE, "--value-size %llu: at most %u",
				(unsigned long long)size, KV_MAX_IO_VALUE_LEN);
	char args[256];
	snprintf(args, sizeof(args), "iterator:     %u\nkeyspace:     %u\nbuffer:       %u\n"
		 "mode:         %s\n", a->kv_it_id, a->kv_keyspace, KV_ITERATE_READ_BUFFER_SIZE,
		 a->kv_async ? "async" : "sync");
	if (show_call(a, args))
		return EXIT_OK;
	uint64_t h;
	int rc = cli_kv_handle(a, &h);
	if (rc)
		return rc;
	/* the SDK reads whole 32 KiB chunks; --value-size limits what is written and shown */
	uint8_t *buf = calloc(1, KV_ITERATE_READ_BUFFER_SIZE);
	if (!buf)
		return cli_fail(a->cmd, EXIT_HOST, "out of memory");
	kv_iterate it;
	memset(&it, 0, sizeof(it));
	it.iterator = a->kv_it_id;
	it.kv.keyspace_id = a->kv_keyspace;
	it.kv.value.value = buf;
	it.kv.value.length = KV_ITERATE_READ_BUFFER_SIZE;
	it.kv.param.io_option.iterate_read_option = KV_ITERATE_READ_DEFAULT;
	uint64_t t0 = mono_ns();
	int result = iterate_read(h, &it, a->kv_async);
	show_latency(a, t0);
	bool eof = result == KV_ERR_ITERATE_READ_EOF;
	if (result != KV_SUCCESS && !eof) {
		free(buf);
		return cli_kv_result(a->cmd, result);
	}
	uint32_t len = it.kv.value.length < size ? it.kv.value.length : (uint32_t)size;
	if (a->kv_value_file) {
		rc = cli_write_file(a->cmd, a->kv_value_file, buf, len);
		if (rc) {
			free(buf);
			return rc;
		}
	}
	struct key_list l = { .text = false };
	if (a->fmt == UNVME_FMT_JSON) {
		l.arr = json_object_new_array();
		int n = kvt_iter_parse(buf, len, on_key, &l);
		json_object *o = json_object_new_object();
		json_object_object_add(o, "handle", json_object_new_int(a->kv_it_id));
		json_object_object_add(o, "length", json_object_new_int64(len));
		json_object_object_add(o, "count", json_object_new_int(n < 0 ? 0 : n));
		json_object_object_add(o, "keys", l.arr);
		json_object_object_add(o, "eof", json_object_new_boolean(eof));
		if (n < 0)
			json_object_object_add(o, "malformed", json_object_new_boolean(true));
		cli_json_print(o);
		free(buf);
		return EXIT_OK;
	}
	int n = kvt_iter_parse(buf, len, NULL, NULL);
	printf("kv-read-it: iterator %u: %d key%s in %u bytes%s%s%s\n", a->kv_it_id, n < 0 ? 0 : n,
	       n == 1 ? "" : "s", len, eof ? ", end of data" : "",
	       a->kv_value_file ? ", written to " : "", a->kv_value_file ? a->kv_value_file : "");
	if (n < 0)
		fprintf(stderr, "unvme: %s: the buffer is malformed (a key runs past its end)\n",
			a->cmd);
	else if (!a->kv_value_file) {
		l.text = true;
		kvt_iter_parse(buf, len, on_key, &l);
	}
	free(buf);
	return EXIT_OK;
}

int cmd_kv_close_it(struct cli_args *a)
{
	if (!cli_given(a, "id"))
		return cli_fail(a->cmd, EXIT_USAGE, "option --id (-i) is required (see 'unvme %s "
				"--help')", a->cmd);
	char args[64];
	snprintf(args, sizeof(args), "iterator:     %u\n", a->kv_it_id);
	if (show_call(a, args))
		return EXIT_OK;
	uint64_t h;
	int rc = cli_kv_handle(a, &h);
	if (rc)
		return rc;
	uint64_t t0 = mono_ns();
	int result = kv_iterate_close(h, a->kv_it_id);
	show_latency(a, t0);
	rc = cli_kv_result(a->cmd, result);
	if (rc)
		return rc;
	if (a->fmt == UNVME_FMT_JSON) {
		json_object *o = json_object_new_object();
		json_object_object_add(o, "handle", json_object_new_int(a->kv_it_id));
		json_object_object_add(o, "closed", json_object_new_boolean(true));
		cli_json_print(o);
	} else {
		printf("kv-close-it: iterator %u closed\n", a->kv_it_id);
	}
	return EXIT_OK;
}

int cmd_kv_it_info(struct cli_args *a)
{
	uint64_t h;
	int rc = cli_kv_handle(a, &h);
	if (rc)
		return rc;
	kv_iterate_handle_info info[KV_MAX_ITERATE_HANDLE];
	memset(info, 0, sizeof(info));
	rc = cli_kv_result(a->cmd, kv_iterate_info(h, info, KV_MAX_ITERATE_HANDLE));
	if (rc)
		return rc;
	if (a->fmt == UNVME_FMT_JSON)
		cli_json_print(kvt_iter_info_json(info, KV_MAX_ITERATE_HANDLE));
	else
		kvt_iter_info_text(stdout, "", info, KV_MAX_ITERATE_HANDLE);
	return EXIT_OK;
}
