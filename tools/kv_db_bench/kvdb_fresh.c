/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * db_bench starts fillseq and fillrandom on a fresh database (it destroys the old one), so a
 * readrandom after fillrandom finds only the keys fillrandom drew. The KV equivalent: delete
 * every key under the benchmark's prefix before those two run, untimed. The keys are listed
 * first and deleted after the iterator is closed, so the scan never runs over its own deletes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv_apis.h"
#include "kv_iter_buf.h"
#include "kv_result_name.h"
#include "kvdb_fresh.h"

struct keylist {
	uint8_t *keys;     /* KV_MAX_KEY_LEN bytes each */
	uint16_t *len;
	size_t n, cap;
	bool oom;
};

static void add_key(const uint8_t *key, uint32_t klen, void *arg)
{
	struct keylist *l = arg;
	if (l->oom || klen > KV_MAX_KEY_LEN)
		return;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 4096;
		uint8_t *k = realloc(l->keys, cap * KV_MAX_KEY_LEN);
		if (k)
			l->keys = k;
		uint16_t *n = realloc(l->len, cap * sizeof(*n));
		if (n)
			l->len = n;
		if (!k || !n) {
			l->oom = true;
			return;
		}
		l->cap = cap;
	}
	memcpy(l->keys + l->n * KV_MAX_KEY_LEN, key, klen);
	l->len[l->n++] = (uint16_t)klen;
}

static int list_keys(uint64_t h, uint32_t prefix, struct keylist *l, const char **call)
{
	uint8_t *buf = aligned_alloc(4096, KV_ITERATE_READ_BUFFER_SIZE);
	if (!buf)
		return KV_ERR_HEAP_ALLOC_FAILURE;
	uint32_t it = kv_iterate_open(h, KV_KEYSPACE_IODATA, 0xffffffffu, prefix, KV_KEY_ITERATE);
	if (it < 1 || it > KV_MAX_ITERATE_HANDLE) {
		free(buf);
		*call = "kv_iterate_open";
		return (int)it;
	}
	int rc;
	do {
		uint32_t len;
		rc = kvt_iter_read(h, it, buf, &len);
		if (rc != KV_SUCCESS && rc != KV_ERR_ITERATE_READ_EOF) {
			*call = "kv_iterate_read";
			break;
		}
		if (kvt_iter_parse(buf, len, add_key, l) < 0) {
			*call = "kv_iterate_read (malformed key list)";
			rc = KV_ERR_ITERATE_ERROR;
			break;
		}
	} while (rc == KV_SUCCESS && !l->oom);
	if (rc == KV_ERR_ITERATE_READ_EOF)
		rc = KV_SUCCESS;
	if (l->oom && rc == KV_SUCCESS) {
		*call = "out of memory";
		rc = KV_ERR_HEAP_ALLOC_FAILURE;
	}
	int crc = kv_iterate_close(h, (uint8_t)it);
	if (rc == KV_SUCCESS && crc != KV_SUCCESS) {
		*call = "kv_iterate_close";
		rc = crc;
	}
	free(buf);
	return rc;
}

int kvdb_fresh(const uint64_t *handles, int ndev, uint32_t prefix)
{
	for (int d = 0; d < ndev; d++) {
		struct keylist l = { 0 };
		const char *call = "";
		int rc = list_keys(handles[d], prefix, &l, &call);
		for (size_t i = 0; rc == KV_SUCCESS && i < l.n; i++) {
			kv_pair kv;
			memset(&kv, 0, sizeof(kv));
			kv.keyspace_id = KV_KEYSPACE_IODATA;
			kv.key.key = l.keys + i * KV_MAX_KEY_LEN;
			kv.key.length = l.len[i];
			kv.param.io_option.delete_option = KV_DELETE_DEFAULT;
			rc = kv_delete(handles[d], &kv);
			if (rc == KV_ERR_NOT_EXIST_KEY)
				rc = KV_SUCCESS;
			if (rc != KV_SUCCESS)
				call = "kv_delete";
		}
		free(l.keys);
		free(l.len);
		if (rc != KV_SUCCESS) {
			char rs[64];
			fprintf(stderr, "kv_db_bench: emptying device %d for a fresh fill: %s: %s\n", d,
				call, kvt_result_str(rc, rs, sizeof(rs)));
			return rc == KV_ERR_HEAP_ALLOC_FAILURE ? KVT_EXIT_HOST : KVT_EXIT_DEVICE;
		}
	}
	return KVT_EXIT_OK;
}
