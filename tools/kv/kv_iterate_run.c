/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The iterate part of sdk_iterate(_async): open an iterator over the stored keys, read 32 KiB
 * buffers until the device says end of data (KV_ERR_ITERATE_READ_EOF, whose buffer still
 * carries keys), close it, and check that every stored key came back exactly once.
 */
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "kv_apis.h"
#include "kv_iter_buf.h"
#include "kv_iter_info.h"
#include "kv_report.h"
#include "kv_result_name.h"
#include "kv_sdkbench.h"
#include "tsc.h"

struct seen {
	const struct kvt_keyspec *ks;
	uint64_t n;
	uint8_t *count; /* per key, saturating at 255 */
	uint64_t foreign; /* keys the benchmark did not store (matched the prefix anyway) */
};

static void on_key(const uint8_t *key, uint32_t klen, void *arg)
{
	struct seen *s = arg;
	uint64_t i;
	if (!kvt_key_index(s->ks, key, klen, &i) || i >= s->n) {
		s->foreign++;
		return;
	}
	if (s->count[i] < 255)
		s->count[i]++;
}

struct async_wait {
	atomic_bool done;
	_Atomic int result;
	uint64_t t1;
};

/* status is the kv_result; result (the bytes filled) is in it->kv.value.length too */
static void on_read(kv_iterate *it, unsigned int result, unsigned int status)
{
	(void)result;
	struct async_wait *w = it->kv.param.private_data;
	w->t1 = tsc_now();
	atomic_store_explicit(&w->result, (int)status, memory_order_relaxed);
	atomic_store_explicit(&w->done, true, memory_order_release);
}

/* One read; returns its kv_result and the latency in ticks. */
static int read_once(const struct kvt_bench *b, uint64_t handle, kv_iterate *it, uint64_t *ticks)
{
	uint64_t t0 = tsc_now();
	if (!b->async) {
		int rc = kv_iterate_read(handle, it);
		*ticks = tsc_now() - t0;
		return rc;
	}
	struct async_wait w;
	atomic_init(&w.done, false);
	atomic_init(&w.result, 0);
	it->kv.param.async_cb = on_read;
	it->kv.param.private_data = &w;
	int rc = kv_iterate_read_async(handle, it);
	if (rc != KV_SUCCESS) {
		*ticks = tsc_now() - t0;
		return rc;
	}
	for (unsigned spins = 0; !atomic_load_explicit(&w.done, memory_order_acquire); spins++)
		if (spins > 64)
			sched_yield();
	*ticks = w.t1 - t0;
	return atomic_load_explicit(&w.result, memory_order_relaxed);
}

static void table(const struct kvt_bench *b, uint64_t handle, const char *when, json_object *root,
		  const char *key)
{
	kv_iterate_handle_info info[KV_MAX_ITERATE_HANDLE];
	memset(info, 0, sizeof(info));
	int rc = kv_iterate_info(handle, info, KV_MAX_ITERATE_HANDLE);
	char rs[64];
	if (rc != KV_SUCCESS) {
		fprintf(stderr, "%s: kv_iterate_info %s: %s\n", b->prog, when,
			kvt_result_str(rc, rs, sizeof(rs)));
		return;
	}
	if (b->json_out) {
		json_object_object_add(root, key, kvt_iter_info_json(info, KV_MAX_ITERATE_HANDLE));
		return;
	}
	printf("iterate info %s:\n", when);
	kvt_iter_info_text(stdout, "  ", info, KV_MAX_ITERATE_HANDLE);
}

int kvt_iterate_run(const struct kvt_bench *b, uint64_t handle, const struct kvt_keyspec *ks,
		    json_object *root, json_object *phases)
{
	char rs[64];
	struct seen s = { .ks = ks, .n = b->n, .count = calloc(b->n, 1) };
	uint8_t *buf = aligned_alloc(4096, KV_ITERATE_READ_BUFFER_SIZE);
	struct kvt_phase *p = calloc(1, sizeof(*p));
	if (!s.count || !buf || !p) {
		fprintf(stderr, "%s: out of memory\n", b->prog);
		free(s.count);
		free(buf);
		free(p);
		return KVT_EXIT_HOST;
	}

	table(b, handle, "before open", root, "iterate_info_before");
	uint32_t it_handle = kv_iterate_open(handle, KV_KEYSPACE_IODATA, b->bitmask, b->prefix,
					     KV_KEY_ITERATE);
	if (it_handle < 1 || it_handle > KV_MAX_ITERATE_HANDLE) {
		fprintf(stderr, "%s: kv_iterate_open (prefix 0x%08x, bitmask 0x%08x): %s\n", b->prog,
			b->prefix, b->bitmask, kvt_result_str((int)it_handle, rs, sizeof(rs)));
		free(s.count);
		free(buf);
		free(p);
		return KVT_EXIT_DEVICE;
	}
	table(b, handle, "after open", root, "iterate_info_open");

	int result = KVT_EXIT_OK;
	lat_hist_init(&p->hist);
	clock_gettime(CLOCK_REALTIME, &p->start_wall);
	p->start_ns = mono_ns();
	/* each read returns at least one key until the end: more reads than keys means the
	 * device never said end of data */
	uint64_t max_reads = b->n + 16;
	for (;;) {
		kv_iterate it;
		memset(&it, 0, sizeof(it));
		it.iterator = it_handle;
		it.kv.keyspace_id = KV_KEYSPACE_IODATA;
		it.kv.value.value = buf;
		it.kv.value.length = KV_ITERATE_READ_BUFFER_SIZE;
		it.kv.param.io_option.iterate_read_option = KV_ITERATE_READ_DEFAULT;
		uint64_t ticks;
		int rc = read_once(b, handle, &it, &ticks);
		p->ops++;
		lat_hist_record(&p->hist, ticks);
		if (rc != KV_SUCCESS && rc != KV_ERR_ITERATE_READ_EOF) {
			p->errors++;
			p->first_error = rc;
			result = KVT_EXIT_DEVICE;
			break;
		}
		uint32_t len = it.kv.value.length;
		if (len > KV_ITERATE_READ_BUFFER_SIZE)
			len = KV_ITERATE_READ_BUFFER_SIZE;
		p->bytes += len;
		if (kvt_iter_parse(buf, len, on_key, &s) < 0) {
			fprintf(stderr, "%s: iterate read %llu returned a malformed buffer (%u bytes)\n",
				b->prog, (unsigned long long)p->ops, len);
			p->verify_errors++;
			result = KVT_EXIT_DEVICE;
			break;
		}
		if (rc == KV_ERR_ITERATE_READ_EOF)
			break;
		if (p->ops >= max_reads) {
			fprintf(stderr, "%s: no end of data after %llu iterate reads\n", b->prog,
				(unsigned long long)p->ops);
			result = KVT_EXIT_DEVICE;
			break;
		}
	}
	p->end_ns = mono_ns();
	clock_gettime(CLOCK_REALTIME, &p->end_wall);

	int crc = kv_iterate_close(handle, (uint8_t)it_handle);
	if (crc != KV_SUCCESS) {
		fprintf(stderr, "%s: kv_iterate_close %u: %s\n", b->prog, it_handle,
			kvt_result_str(crc, rs, sizeof(rs)));
		result = KVT_EXIT_DEVICE;
	}
	table(b, handle, "after close", root, "iterate_info_after");

	uint64_t missing = 0, dup = 0, first_missing = 0, first_dup = 0;
	for (uint64_t i = 0; i < b->n; i++) {
		if (s.count[i] == 0 && !missing++)
			first_missing = i;
		if (s.count[i] > 1 && !dup++)
			first_dup = i;
	}
	uint64_t seen = b->n - missing;
	if (b->json_out) {
		json_object_array_add(phases, kvt_report_json("iterate_read", p));
		json_object *o = json_object_new_object();
		json_object_object_add(o, "handle", json_object_new_int64(it_handle));
		json_object_object_add(o, "reads", json_object_new_uint64(p->ops));
		json_object_object_add(o, "keys_seen", json_object_new_uint64(seen));
		json_object_object_add(o, "missing", json_object_new_uint64(missing));
		json_object_object_add(o, "duplicates", json_object_new_uint64(dup));
		json_object_object_add(o, "foreign", json_object_new_uint64(s.foreign));
		json_object_object_add(root, "iterate", o);
	} else {
		printf("\n");
		kvt_report_text(stdout, "iterate_read", p);
		printf("iterator %u: %llu reads, %llu of %llu keys seen, %llu missing, %llu seen more "
		       "than once, %llu other keys\n", it_handle, (unsigned long long)p->ops,
		       (unsigned long long)seen, (unsigned long long)b->n,
		       (unsigned long long)missing, (unsigned long long)dup,
		       (unsigned long long)s.foreign);
	}
	if (p->errors)
		fprintf(stderr, "%s: kv_iterate_read on iterator %u: %s\n", b->prog, it_handle,
			kvt_result_str(p->first_error, rs, sizeof(rs)));
	if (missing) {
		fprintf(stderr, "%s: %llu stored keys were not returned by the iterator (first: key "
			"#%llu)\n", b->prog, (unsigned long long)missing,
			(unsigned long long)first_missing);
		result = KVT_EXIT_DEVICE;
	}
	if (dup) {
		fprintf(stderr, "%s: %llu keys were returned more than once (first: key #%llu)\n",
			b->prog, (unsigned long long)dup, (unsigned long long)first_dup);
		result = KVT_EXIT_DEVICE;
	}
	free(s.count);
	free(buf);
	free(p);
	return result;
}
