/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Key-value I/O commands, as the original SDK's kv_nvme had them: kv-write, kv-read,
 * kv-delete and kv-exist, through the SDK's kv_store / kv_retrieve / kv_delete / kv_exist
 * (or their _async forms with --async). The SDK and the device judge keys, sizes and offsets:
 * a bad key length is answered with KV_ERR_INVALID_KEY_SIZE, not refused here.
 */
#include <json-c/json.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "kv_apis.h"
#include "kv_result_name.h"
#include "kv_wait.h"
#include "tsc.h"

#define KV_CLI_DEFAULT_READ 4096u

enum kv_cli_op { KVC_WRITE, KVC_READ, KVC_DELETE, KVC_EXIST };

struct kv_call {
	kv_pair kv;
	uint8_t *key;
	uint8_t *value;
	size_t value_len;
	double latency_us;
};

static int submit(enum kv_cli_op op, uint64_t h, kv_pair *kv, bool async)
{
	if (!async) {
		switch (op) {
		case KVC_WRITE: return kv_store(h, kv);
		case KVC_READ: return kv_retrieve(h, kv);
		case KVC_DELETE: return kv_delete(h, kv);
		case KVC_EXIST: return kv_exist(h, kv);
		}
	}
	struct cli_kv_wait w;
	cli_kv_wait_arm(kv, &w);
	int rc = KV_ERR_SDK_INVALID_PARAM;
	switch (op) {
	case KVC_WRITE: rc = kv_store_async(h, kv); break;
	case KVC_READ: rc = kv_retrieve_async(h, kv); break;
	case KVC_DELETE: rc = kv_delete_async(h, kv); break;
	case KVC_EXIST: rc = kv_exist_async(h, kv); break;
	}
	return cli_kv_wait(&w, rc);
}

/* The key bytes: --key, cut or zero padded to --key-len when given. */
static int make_key(struct cli_args *a, struct kv_call *c)
{
	if (!a->kv_key)
		return cli_fail(a->cmd, EXIT_USAGE, "option --key (-k) is required (see 'unvme %s "
				"--help')", a->cmd);
	size_t given = strlen(a->kv_key);
	size_t len = cli_given(a, "key-len") ? a->kv_key_len : given;
	if (len > UINT16_MAX)
		return cli_fail(a->cmd, EXIT_USAGE, "key of %zu bytes: at most 65535", len);
	c->key = calloc(1, len + 1);
	if (!c->key)
		return cli_fail(a->cmd, EXIT_HOST, "out of memory");
	memcpy(c->key, a->kv_key, given < len ? given : len);
	c->kv.key.key = c->key;
	c->kv.key.length = (uint16_t)len;
	return EXIT_OK;
}

static int make_value(struct cli_args *a, enum kv_cli_op op, struct kv_call *c)
{
	if (op == KVC_WRITE) {
		void *buf = NULL;
		size_t len = 0;
		if (a->kv_value_file) {
			/* one byte over the limit still reads: the SDK then says the value is too
			 * large, as it would for any caller */
			int rc = cli_read_file(a->cmd, a->kv_value_file, KV_MAX_IO_VALUE_LEN + 1, &buf,
					       &len);
			if (rc)
				return rc;
			if (cli_given(a, "value-size")) {
				if (len < a->kv_value_size) {
					free(buf);
					return cli_fail(a->cmd, EXIT_USAGE, "%s has %zu bytes, fewer "
							"than --value-size %llu", a->kv_value_file, len,
							(unsigned long long)a->kv_value_size);
				}
				len = a->kv_value_size; /* the first bytes of the file */
			}
		} else {
			if (!cli_given(a, "value-size"))
				return cli_fail(a->cmd, EXIT_USAGE,
						"give the value: --value FILE (-v) or --value-size (-s)");
			if (a->kv_value_size > KV_MAX_IO_VALUE_LEN + 1ull)
				return cli_fail(a->cmd, EXIT_USAGE, "--value-size %llu: at most %u",
						(unsigned long long)a->kv_value_size,
						KV_MAX_IO_VALUE_LEN);
			len = a->kv_value_size;
			buf = calloc(1, len ? len : 1); /* a value of zeros */
			if (!buf)
				return cli_fail(a->cmd, EXIT_HOST, "out of memory");
		}
		c->value = buf;
		c->value_len = len;
		c->kv.value.value = buf;
		c->kv.value.length = (uint32_t)len;
		c->kv.value.offset = a->kv_offset;
		c->kv.param.io_option.store_option = a->kv_io_option;
		return EXIT_OK;
	}
	if (op == KVC_READ) {
		uint64_t len = cli_given(a, "value-size") ? a->kv_value_size : KV_CLI_DEFAULT_READ;
		if (len > KV_MAX_IO_VALUE_LEN)
			return cli_fail(a->cmd, EXIT_USAGE, "--value-size %llu: at most %u",
					(unsigned long long)len, KV_MAX_IO_VALUE_LEN);
		c->value = calloc(1, len ? len : 1);
		if (!c->value)
			return cli_fail(a->cmd, EXIT_HOST, "out of memory");
		c->value_len = len;
		c->kv.value.value = c->value;
		c->kv.value.length = (uint32_t)len;
		c->kv.value.offset = a->kv_offset;
		c->kv.param.io_option.retrieve_option = a->kv_io_option;
		return EXIT_OK;
	}
	if (op == KVC_DELETE)
		c->kv.param.io_option.delete_option = a->kv_io_option;
	else
		c->kv.param.io_option.exist_option = a->kv_io_option;
	return EXIT_OK;
}

/* The key for messages: as given, non-printable bytes escaped; the zero padding of --key-len
 * is summarized rather than spelled out. */
static void key_str(const struct kv_call *c, char *out, size_t outlen)
{
	size_t len = c->kv.key.length, zeros = 0;
	while (zeros < len && c->key[len - 1 - zeros] == 0)
		zeros++;
	if (zeros < 2)
		zeros = 0; /* one trailing NUL reads fine escaped */
	size_t o = 0;
	for (size_t i = 0; i < len - zeros && o + 5 < outlen; i++) {
		uint8_t ch = c->key[i];
		if (ch >= 0x20 && ch < 0x7f && ch != '\\')
			out[o++] = (char)ch;
		else
			o += (size_t)snprintf(out + o, outlen - o, "\\x%02x", ch);
	}
	out[o] = '\0';
	if (zeros && o + 32 < outlen)
		snprintf(out + o, outlen - o, "' + '%zu zero bytes", zeros);
}

static void show_args(const struct cli_args *a, const struct kv_call *c)
{
	char k[1100];
	key_str(c, k, sizeof(k));
	printf("command:      %s\ndevice:       %s\nkey:          '%s'\nkey length:   %u\n",
	       a->cmd, a->positional, k, c->kv.key.length);
	if (a->kv_value_file)
		printf("value file:   %s\n", a->kv_value_file);
	printf("value size:   %u\noffset:       %u\nio option:    %u\nkeyspace:     %u\n"
	       "mode:         %s\n", c->kv.value.length, c->kv.value.offset, a->kv_io_option,
	       a->kv_keyspace, a->kv_async ? "async" : "sync");
}

static int kv_io(struct cli_args *a, enum kv_cli_op op)
{
	struct kv_call c;
	memset(&c, 0, sizeof(c));
	int rc = make_key(a, &c);
	if (!rc)
		rc = make_value(a, op, &c);
	if (!rc && a->kv_dry_run) {
		/* kv_nvme's --dry-run: what would be sent, and nothing sent (the SDK not started) */
		c.kv.keyspace_id = a->kv_keyspace;
		show_args(a, &c);
		printf("%s: dry run, nothing sent\n", a->cmd);
		goto out;
	}
	uint64_t h = 0;
	if (!rc)
		rc = cli_kv_handle(a, &h);
	if (rc)
		goto out;
	c.kv.keyspace_id = a->kv_keyspace;
	if (a->kv_show && a->fmt == UNVME_FMT_TEXT)
		show_args(a, &c);

	uint64_t t0 = mono_ns();
	int result = submit(op, h, &c.kv, a->kv_async);
	c.latency_us = (double)(mono_ns() - t0) / 1e3;
	if (a->kv_latency && a->fmt == UNVME_FMT_TEXT)
		printf("latency:      %.3f us\n", c.latency_us);
	rc = cli_kv_result(a->cmd, result);
	if (rc)
		goto out;

	char k[1100];
	key_str(&c, k, sizeof(k));
	uint32_t got = c.kv.value.length;
	if (op == KVC_READ && got > c.value_len)
		got = (uint32_t)c.value_len;
	if (op == KVC_READ && a->kv_value_file) {
		rc = cli_write_file(a->cmd, a->kv_value_file, c.value, got);
		if (rc)
			goto out;
	}
	if (a->fmt == UNVME_FMT_JSON) {
		json_object *o = json_object_new_object();
		char rs[64];
		json_object_object_add(o, "command", json_object_new_string(a->cmd));
		json_object_object_add(o, "key", json_object_new_string(k));
		json_object_object_add(o, "key_length", json_object_new_int(c.kv.key.length));
		json_object_object_add(o, "keyspace", json_object_new_int(a->kv_keyspace));
		json_object_object_add(o, "result", json_object_new_string(
					       kvt_result_str(result, rs, sizeof(rs))));
		if (op == KVC_WRITE)
			json_object_object_add(o, "value_size", json_object_new_int64(c.kv.value.length));
		if (op == KVC_READ) {
			json_object_object_add(o, "value_size",
					       json_object_new_int64(c.kv.value.actual_value_size));
			json_object_object_add(o, "length", json_object_new_int64(got));
			if (!a->kv_value_file) {
				char *hex = malloc((size_t)got * 2 + 1);
				if (hex) {
					for (uint32_t i = 0; i < got; i++)
						snprintf(hex + 2 * i, 3, "%02x", c.value[i]);
					hex[2 * (size_t)got] = '\0';
					json_object_object_add(o, "data", json_object_new_string(hex));
					free(hex);
				}
			}
		}
		if (a->kv_latency)
			json_object_object_add(o, "latency_us", json_object_new_double(c.latency_us));
		cli_json_print(o);
		goto out;
	}
	switch (op) {
	case KVC_WRITE:
		printf("kv-write: key '%s' stored, %u-byte value\n", k, c.kv.value.length);
		break;
	case KVC_READ:
		if (a->kv_value_file)
			printf("kv-read: key '%s': %u bytes written to %s (value size %u)\n", k, got,
			       a->kv_value_file, c.kv.value.actual_value_size);
		else {
			printf("kv-read: key '%s': %u bytes (value size %u)\n", k, got,
			       c.kv.value.actual_value_size);
			unvme_print_hex(stdout, c.value, got, UNVME_FMT_TEXT);
		}
		break;
	case KVC_DELETE:
		printf("kv-delete: key '%s' deleted\n", k);
		break;
	case KVC_EXIST:
		printf("kv-exist: key '%s' exists\n", k);
		break;
	}
out:
	free(c.key);
	free(c.value);
	return rc;
}

int cmd_kv_write(struct cli_args *a)
{
	return kv_io(a, KVC_WRITE);
}

int cmd_kv_read(struct cli_args *a)
{
	return kv_io(a, KVC_READ);
}

int cmd_kv_delete(struct cli_args *a)
{
	return kv_io(a, KVC_DELETE);
}

int cmd_kv_exist(struct cli_args *a)
{
	return kv_io(a, KVC_EXIST);
}
