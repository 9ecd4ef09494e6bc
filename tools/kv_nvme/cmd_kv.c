/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kv_nvme's key-value commands with the original's options and messages: write, read,
 * delete, exist (-k key, -l key length, -v value file, -s value size, -o value offset, -i
 * I/O option, -n namespace, -w show, -d dry run, -t latency, -a async), and the iterators
 * (open-it, read-it, close-it, list-it). They run through the SDK's driver-level calls
 * (kvnvme.h) on named queues: a sync queue on the first CPU the process may use and, with
 * two CPUs or more, an async queue on the second (its completion thread on the first).
 */
#include <ctype.h>
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kv_apis.h"
#include "kv_iter_buf.h"
#include "kv_nvme.h"
#include "kv_result_name.h"
#include "kv_sdk_config.h"
#include "kvnvme.h"

struct session {
	uint64_t h;
	int sync_q;
	int async_q;   /* -1: one CPU, no async queue (async calls then run inline) */
};

static int start(const char *dev, struct session *s)
{
	struct kvt_sdk_cfg *cfg = calloc(1, sizeof(*cfg));
	if (!cfg)
		return KVT_EXIT_HOST;
	cfg->ssd_type = KV_TYPE_SSD;
	cfg->ndev = 1;
	struct kvt_dev_cfg *d = &cfg->dev[0];
	d->devid = dev;
	s->sync_q = kvt_cpu(0);
	s->async_q = kvt_cpu(1) == s->sync_q ? -1 : kvt_cpu(1);
	d->core_mask = 1ull << s->sync_q;
	d->sync_mask = d->core_mask;
	if (s->async_q >= 0) {
		d->core_mask |= 1ull << s->async_q;
		d->cq_mask = 1ull << s->sync_q;
	}
	int rc = kvt_sdk_start_cfg(cfg, KVN_PROG);
	free(cfg);
	if (rc)
		return KVT_EXIT_HOST;
	int n = 0;
	uint64_t hs[NR_MAX_SSD];
	if (kv_get_device_handles(&n, hs) != KV_SUCCESS || n != 1) {
		kv_sdk_finalize();
		return KVT_EXIT_HOST;
	}
	s->h = hs[0];
	return KVT_EXIT_OK;
}

static uint64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* An async call's completion, waited for by the command. */
static atomic_int cb_done;
static atomic_uint cb_status;
static atomic_ullong cb_end;

static void on_io(kv_pair *kv, unsigned int result, unsigned int status)
{
	(void)kv;
	(void)result;
	atomic_store(&cb_end, now_us());
	atomic_store(&cb_status, status);
	atomic_store(&cb_done, 1);
}

static void on_iter(kv_iterate *it, unsigned int result, unsigned int status)
{
	(void)it;
	on_io(NULL, result, status);
}

static int wait_callback(void)
{
	while (!atomic_load(&cb_done))
		sched_yield();
	return (int)atomic_load(&cb_status);
}

static int fail(const char *cmd, int rc)
{
	char rs[64];
	fprintf(stderr, "  FAIL: status of device=0x%x (%s: %s)\n", (unsigned)rc, cmd,
		kvt_result_str(rc, rs, sizeof(rs)));
	return KVT_EXIT_DEVICE;
}

static void show_latency(bool on, const char *cmd, uint64_t t0, uint64_t t1)
{
	if (on)
		printf(" latency (%s): %llu us\n", cmd, (unsigned long long)(t1 - t0));
}

/* ---- write, read, delete, exist ---- */

enum io_kind { IO_WRITE, IO_READ, IO_DELETE, IO_EXIST };

struct io_cfg {
	const char *key, *value_file;
	uint16_t key_len;
	bool key_len_given;
	uint32_t offset, size, option;
	uint8_t ns;
	bool show, dry, latency, async;
};

static int io_call(const struct session *s, enum io_kind k, bool async, kv_pair *kv)
{
	int q = async ? s->async_q : s->sync_q;
	if (async && q < 0) { /* one CPU: the kv_* call runs it inline and calls back */
		switch (k) {
		case IO_WRITE: return kv_store_async(s->h, kv);
		case IO_READ: return kv_retrieve_async(s->h, kv);
		case IO_DELETE: return kv_delete_async(s->h, kv);
		default: return kv_exist_async(s->h, kv);
		}
	}
	switch (k) {
	case IO_WRITE: return async ? kv_nvme_write_async(s->h, q, kv) : kv_nvme_write(s->h, q, kv);
	case IO_READ: return async ? kv_nvme_read_async(s->h, q, kv) : kv_nvme_read(s->h, q, kv);
	case IO_DELETE:
		return async ? kv_nvme_delete_async(s->h, q, kv) : kv_nvme_delete(s->h, q, kv);
	default: return async ? kv_nvme_exist_async(s->h, q, kv) : kv_nvme_exist(s->h, q, kv);
	}
}

/* The value as read: into the file, or on stdout up to its first NUL, as the original
 * printed it with %s. */
static int show_value(const char *cmd, const struct io_cfg *c, const kv_pair *kv)
{
	if (c->option == 2) {
		printf("value_size of the key(%s)=%u\n", c->key, kv->value.actual_value_size);
		return KVT_EXIT_OK;
	}
	if (c->value_file)
		return kvn_write_file(cmd, c->value_file, kv->value.value, kv->value.length);
	const char *v = kv->value.value;
	printf("read_value=%.*s\n", (int)strnlen(v, kv->value.length), v);
	return KVT_EXIT_OK;
}

static int run_io(const char *cmd, enum io_kind k, const char *dev, struct io_cfg *c)
{
	size_t klen = c->key_len_given ? c->key_len : strlen(c->key);
	uint8_t *key = kv_zalloc(klen + 4);
	/* read -i 2 asks for the value's size only: a retrieve of 0 bytes */
	uint32_t vlen = k == IO_READ && c->option == 2 ? 0 : k <= IO_READ ? c->size : 0;
	uint8_t *val = vlen ? kv_zalloc(vlen) : NULL;
	int rc = KVT_EXIT_HOST;
	if (!key || (vlen && !val))
		goto out;
	memcpy(key, c->key, strlen(c->key) < klen ? strlen(c->key) : klen);
	if (k == IO_WRITE) {
		/* the file's first bytes; a shorter file leaves zeroes, as the original read it */
		FILE *f = fopen(c->value_file, "rb");
		if (!f) {
			fprintf(stderr, KVN_PROG ": %s: unable to open value file %s: %s\n", cmd,
				c->value_file, strerror(errno));
			rc = KVT_EXIT_USAGE;
			goto out;
		}
		size_t got = fread(val, 1, vlen, f);
		(void)got;
		fclose(f);
	}
	kv_pair kv;
	memset(&kv, 0, sizeof(kv));
	kv.keyspace_id = c->ns;
	kv.key.key = key;
	kv.key.length = (uint16_t)klen;
	kv.value.value = val;
	kv.value.length = vlen;
	kv.value.offset = c->offset;
	kv.param.io_option.store_option = k == IO_READ && c->option == 2 ? 0 : (int)c->option;
	if (c->async)
		kv.param.async_cb = on_io;
	if (c->show || c->dry) {
		printf("    key             : %.*s\n", (int)klen, (const char *)key);
		printf("    key_length      : 0x%06zx\n", klen);
		printf("    value.value     : %p\n", (void *)val);
		printf("    value.offset    : 0x%06x\n", c->offset);
		printf("    value.length    : 0x%06x\n", vlen);
		printf("    param.io_option : 0x%06x\n", c->option);
		printf("    asynchronous    : 0x%06x\n", c->async);
		if (c->dry) {
			rc = KVT_EXIT_OK;
			goto out;
		}
	}
	struct session s;
	if ((rc = start(dev, &s)))
		goto out;
	atomic_store(&cb_done, 0);
	uint64_t t0 = now_us(), t1;
	int r = io_call(&s, k, c->async, &kv);
	if (c->async && r == KV_SUCCESS) {
		r = wait_callback();
		t1 = atomic_load(&cb_end);
	} else {
		t1 = now_us();
	}
	show_latency(c->latency, cmd, t0, t1);
	if (r != KV_SUCCESS) {
		rc = fail(cmd, r);
	} else {
		fprintf(stderr, "%s: Success\n", cmd);
		rc = k == IO_READ ? show_value(cmd, c, &kv) : KVT_EXIT_OK;
	}
	kv_sdk_finalize();
out:
	kv_free(key);
	kv_free(val);
	return rc;
}

int kvn_io(const struct kvn_cmd *cmd, int argc, char **argv)
{
	enum io_kind k = !strcmp(cmd->name, "write") ? IO_WRITE : !strcmp(cmd->name, "read") ? IO_READ
			 : !strcmp(cmd->name, "delete") ? IO_DELETE : IO_EXIST;
	struct io_cfg c;
	memset(&c, 0, sizeof(c));
	const char *dev;
	const struct kvn_opt opts[] = {
		{ "key", 'k', KVN_STR, &c.key, "key to access (required)", NULL },
		{ "key_length", 'l', KVN_U16, &c.key_len,
		  "length of the key: cut or padded with zero bytes [the key's length]", &c.key_len_given },
		{ "value", 'v', KVN_STR, &c.value_file,
		  k == IO_WRITE ? "file of the value (required)" : "file for the value read [stdout]",
		  NULL },
		{ "value_offset", 'o', KVN_U32, &c.offset, "offset in the value (a multiple of 512)", NULL },
		{ "value_size", 's', KVN_U32, &c.size,
		  k == IO_WRITE ? "size of the value (required)" : "size of the buffer to read into", NULL },
		{ "io_option", 'i', KVN_U32, &c.option,
		  k == IO_READ ? "0: default, 2: only the value's size" : "the call's option [0]", NULL },
		{ "namespace", 'n', KVN_U8, &c.ns, "keyspace: 0 user data, 1 metadata [0]", NULL },
		{ "show-command", 'w', KVN_FLAG, &c.show, "show the arguments first", NULL },
		{ "dry-run", 'd', KVN_FLAG, &c.dry, "show the arguments instead of sending", NULL },
		{ "latency", 't', KVN_FLAG, &c.latency, "show the latency of the command", NULL },
		{ "asynchronous", 'a', KVN_FLAG, &c.async, "submit it asynchronously", NULL },
		{ 0 },
	};
	int rc = kvn_parse(cmd, argc, argv, opts, &dev);
	if (rc >= 0)
		return rc;
	if (!c.key)
		return kvn_usage_error(cmd->name, "a key is needed: -k KEY");
	if (k == IO_WRITE && !c.size)
		return kvn_usage_error(cmd->name, "write requires a value size: -s 4096");
	if (k == IO_WRITE && !c.value_file)
		return kvn_usage_error(cmd->name, "write requires a file for the value: -v value.txt");
	if (k == IO_READ && !c.size && c.option != 2)
		return kvn_usage_error(cmd->name, "read requires a value size: -s 4096");
	return run_io(cmd->name, k, dev, &c);
}

/* ---- iterators ---- */

int kvn_open_it(const struct kvn_cmd *cmd, int argc, char **argv)
{
	uint8_t ns = 0, type = KV_KEY_ITERATE;
	uint32_t prefix = 0, bitmask = 0xffffffffu;
	bool show = false, latency = false;
	const char *dev;
	const struct kvn_opt opts[] = {
		{ "namespace", 'n', KVN_U8, &ns, "keyspace: 0 user data, 1 metadata [0]", NULL },
		{ "prefix", 'p', KVN_U32, &prefix, "prefix of the keys: their first 4 bytes, "
		  "big-endian (\"0000\" is 0x30303030) [0]", NULL },
		{ "bitmask", 'b', KVN_U32, &bitmask, "bits of the prefix that must match, contiguous "
		  "high bits [0xffffffff]", NULL },
		{ "iterate_type", 'i', KVN_U8, &type, "1: keys, 2: keys with their values, 3: keys "
		  "deleted as they are read [1]", NULL },
		{ "show-command", 'w', KVN_FLAG, &show, "show the arguments first", NULL },
		{ "latency", 't', KVN_FLAG, &latency, "show the latency of the command", NULL },
		{ 0 },
	};
	int rc = kvn_parse(cmd, argc, argv, opts, &dev);
	if (rc >= 0)
		return rc;
	if (type < KV_KEY_ITERATE || type > KV_KEY_ITERATE_WITH_DELETE)
		return kvn_usage_error(cmd->name, "invalid iterate_type 0x%x: 1, 2 or 3", type);
	if (ns > KV_KEYSPACE_METADATA)
		return kvn_usage_error(cmd->name, "invalid namespace 0x%x: 0 or 1", ns);
	if (show) {
		printf("    namespace     : 0x%x\n", ns);
		printf("    bitmask       : 0x%x\n", bitmask);
		printf("    prefix        : 0x%x\n", prefix);
		printf("    iterator_type : 0x%x\n", type);
	}
	struct session s;
	if ((rc = start(dev, &s)))
		return rc;
	uint64_t t0 = now_us();
	uint32_t r = kv_nvme_iterate_open(s.h, ns, bitmask, prefix, type);
	show_latency(latency, cmd->name, t0, now_us());
	if (r >= 1 && r <= KV_MAX_ITERATE_HANDLE) {
		fprintf(stderr, "%s: Success (returned iterate handle id=0x%x)\n", cmd->name, r);
		rc = KVT_EXIT_OK;
	} else {
		rc = fail(cmd->name, (int)r);
	}
	kv_sdk_finalize();
	return rc;
}

/* An iterator command's -i: a usage error unless 1..16. */
static int check_iterator(const char *cmd, uint8_t id)
{
	if (id >= 1 && id <= KV_MAX_ITERATE_HANDLE)
		return -1;
	return kvn_usage_error(cmd, "iterator_id must be given (1 ~ %d)", KV_MAX_ITERATE_HANDLE);
}

static void print_key(const uint8_t *key, uint32_t klen, void *arg)
{
	(void)arg;
	bool text = klen > 0;
	for (uint32_t i = 0; i < klen; i++)
		text &= isprint(key[i]) != 0;
	printf("key=");
	if (text) {
		fwrite(key, 1, klen, stdout);
	} else {
		printf("0x");
		for (uint32_t i = 0; i < klen; i++)
			printf("%02x", key[i]);
	}
	printf("\n");
}

/* What a read brought: a key-with-value iterator's one pair (key at byte 0, value from byte
 * 512), or a buffer of keys, into the file raw or on stdout decoded. */
static int show_chunk(const char *cmd, const char *file, const kv_iterate *it)
{
	const uint8_t *buf = it->kv.value.value;
	if (it->kv.key.length) {
		print_key(buf, it->kv.key.length, NULL);
		const uint8_t *v = buf + 512;
		if (file)
			return kvn_write_file(cmd, file, v, it->kv.value.length);
		printf("value=%.*s\n", (int)strnlen((const char *)v, it->kv.value.length),
		       (const char *)v);
		return KVT_EXIT_OK;
	}
	if (file)
		return kvn_write_file(cmd, file, buf, it->kv.value.length);
	if (kvt_iter_parse(buf, it->kv.value.length, print_key, NULL) < 0) {
		fprintf(stderr, KVN_PROG ": %s: the device's buffer is malformed (a key runs past "
			"its end)\n", cmd);
		return KVT_EXIT_DEVICE;
	}
	return KVT_EXIT_OK;
}

int kvn_read_it(const struct kvn_cmd *cmd, int argc, char **argv)
{
	uint8_t id = 0;
	uint32_t size = KV_SSD_MIN_ITERATE_READ_LEN, option = KV_ITERATE_READ_DEFAULT;
	const char *file = NULL, *dev;
	bool show = false, latency = false, async = false;
	const struct kvn_opt opts[] = {
		{ "iterator_id", 'i', KVN_U8, &id, "identifier of the iterator to read (required)", NULL },
		{ "value", 'v', KVN_STR, &file, "file for what was read [stdout, decoded]", NULL },
		{ "value_size", 's', KVN_U32, &size, "size of one read: 32768 [32768]", NULL },
		{ "io_option", 'o', KVN_U32, &option, "the read's option [0]", NULL },
		{ "show-command", 'w', KVN_FLAG, &show, "show the arguments first", NULL },
		{ "latency", 't', KVN_FLAG, &latency, "show the latency of the command", NULL },
		{ "asynchronous", 'a', KVN_FLAG, &async, "submit it asynchronously", NULL },
		{ 0 },
	};
	int rc = kvn_parse(cmd, argc, argv, opts, &dev);
	if (rc >= 0 || (rc = check_iterator(cmd->name, id)) >= 0)
		return rc;
	if (size != KV_SSD_MAX_ITERATE_READ_LEN)
		return kvn_usage_error(cmd->name, "invalid iterate read length %u: a read is %d bytes",
				       size, KV_SSD_MAX_ITERATE_READ_LEN);
	kv_iterate it;
	memset(&it, 0, sizeof(it));
	it.iterator = id;
	it.kv.value.length = size;
	it.kv.param.io_option.iterate_read_option = (int)option;
	if (async)
		it.kv.param.async_cb = on_iter;
	if (show) {
		printf("    iterator_id     : 0x%x\n", id);
		printf("    value.length    : 0x%x\n", size);
		printf("    param.io_option : 0x%x\n", option);
		printf("    asynchronous    : 0x%x\n", async);
	}
	if (!(it.kv.value.value = kv_zalloc(size)))
		return KVT_EXIT_HOST;
	struct session s;
	if ((rc = start(dev, &s))) {
		kv_free(it.kv.value.value);
		return rc;
	}
	atomic_store(&cb_done, 0);
	uint64_t t0 = now_us(), t1;
	int r;
	if (async && s.async_q < 0)
		r = kv_iterate_read_async(s.h, &it);
	else if (async)
		r = kv_nvme_iterate_read_async(s.h, s.async_q, &it);
	else
		r = kv_nvme_iterate_read(s.h, s.sync_q, &it);
	if (async && r == KV_SUCCESS) {
		r = wait_callback();
		t1 = atomic_load(&cb_end);
	} else {
		t1 = now_us();
	}
	show_latency(latency, cmd->name, t0, t1);
	if (r == KV_SUCCESS || r == KV_ERR_ITERATE_READ_EOF) {
		fprintf(stderr, "%s: Success (%u returned, value_length=%u)%s\n", cmd->name,
			(unsigned)r, it.kv.value.length,
			r == KV_ERR_ITERATE_READ_EOF ? ", end of data" : "");
		rc = it.kv.value.length ? show_chunk(cmd->name, file, &it) : KVT_EXIT_OK;
	} else {
		rc = fail(cmd->name, r);
	}
	kv_sdk_finalize();
	kv_free(it.kv.value.value);
	return rc;
}

int kvn_close_it(const struct kvn_cmd *cmd, int argc, char **argv)
{
	uint8_t id = 0;
	bool show = false, latency = false;
	const char *dev;
	const struct kvn_opt opts[] = {
		{ "iterator_id", 'i', KVN_U8, &id, "identifier of the iterator to close (required)", NULL },
		{ "show-command", 'w', KVN_FLAG, &show, "show the arguments first", NULL },
		{ "latency", 't', KVN_FLAG, &latency, "show the latency of the command", NULL },
		{ 0 },
	};
	int rc = kvn_parse(cmd, argc, argv, opts, &dev);
	if (rc >= 0 || (rc = check_iterator(cmd->name, id)) >= 0)
		return rc;
	if (show)
		printf("    iterator_id : %u\n", id);
	struct session s;
	if ((rc = start(dev, &s)))
		return rc;
	uint64_t t0 = now_us();
	int r = kv_nvme_iterate_close(s.h, id);
	show_latency(latency, cmd->name, t0, now_us());
	if (r == KV_SUCCESS) {
		fprintf(stderr, "%s: Success\n", cmd->name);
		rc = KVT_EXIT_OK;
	} else {
		rc = fail(cmd->name, r);
	}
	kv_sdk_finalize();
	return rc;
}

int kvn_list_it(const struct kvn_cmd *cmd, int argc, char **argv)
{
	const char *dev;
	const struct kvn_opt opts[] = { { 0 } };
	int rc = kvn_parse(cmd, argc, argv, opts, &dev);
	if (rc >= 0)
		return rc;
	struct session s;
	if ((rc = start(dev, &s)))
		return rc;
	kv_iterate_handle_info info[KV_MAX_ITERATE_HANDLE];
	int r = kv_nvme_iterate_info(s.h, info, KV_MAX_ITERATE_HANDLE);
	printf("iterate_handle count=%d\n", KV_MAX_ITERATE_HANDLE);
	printf("=======================================================================\n");
	printf("  id  | status | type | keyspace_id |   prefix   |   bitmask  | is_eof \n");
	printf("=======================================================================\n");
	for (int i = 0; r == KV_SUCCESS && i < KV_MAX_ITERATE_HANDLE; i++)
		printf(" 0x%-2x | 0x%-4x | %-4x | 0x%-9x | 0x%08x | 0x%08x | 0x%-4x \n",
		       info[i].handle_id, info[i].status, info[i].type, info[i].keyspace_id,
		       info[i].prefix, info[i].bitmask, info[i].is_eof);
	rc = r == KV_SUCCESS ? KVT_EXIT_OK : fail(cmd->name, r);
	kv_sdk_finalize();
	return rc;
}
