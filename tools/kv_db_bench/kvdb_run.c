/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The workloads (kvdb_run.h). As in db_bench, every thread does the whole count: --num writes
 * for fills, overwrite and deleterandom, --reads reads for readrandom, readseq and the readers
 * of readwhilewriting. Random keys are drawn with replacement from 0..num-1, so fillrandom
 * leaves some keys unwritten and readrandom after it finds fewer than it reads, as db_bench.
 * Reads check the value against what the writers store for that key, which db_bench does not:
 * a benchmark of a store that returns wrong data should say so.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv_apis.h"
#include "kv_iter_buf.h"
#include "kv_result_name.h"
#include "kvdb_report.h"
#include "kvdb_run.h"
#include "lib/common/clock.h"

static const char *const names[] = {
	[KVDB_FILLSEQ] = "fillseq",
	[KVDB_FILLRANDOM] = "fillrandom",
	[KVDB_OVERWRITE] = "overwrite",
	[KVDB_READRANDOM] = "readrandom",
	[KVDB_READSEQ] = "readseq",
	[KVDB_READWHILEWRITING] = "readwhilewriting",
	[KVDB_DELETERANDOM] = "deleterandom",
};

bool kvdb_bench_find(const char *name, size_t len, enum kvdb_bench *out)
{
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == len && strncmp(names[i], name, len) == 0) {
			*out = (enum kvdb_bench)i;
			return true;
		}
	return false;
}

const char *kvdb_bench_name(enum kvdb_bench b)
{
	return names[b];
}

struct worker {
	struct kvdb_ctx *ctx;
	enum kvdb_bench bench;
	bool writer;               /* readwhilewriting's background writer */
	atomic_bool *stop;         /* set when the readers are done (the writer's loop) */
	struct scan *scan;         /* readseq's shared scan */
	pthread_barrier_t *start;
	uint64_t rng;
	uint8_t *key;
	uint8_t *value;
	uint32_t value_cap;        /* the value buffer's size (reads: rounded up to 4) */
	struct kvdb_stats st;
};

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t dev_of(const struct kvdb_ctx *c, uint64_t i)
{
	return c->handle[i % (uint64_t)c->ndev];
}

static void finished(struct worker *w, uint64_t bytes)
{
	w->st.done++;
	w->st.bytes += bytes;
	if (w->ctx->f->histogram) {
		/* db_bench's figure: whole microseconds since the previous operation finished */
		uint64_t now = mono_ns();
		kvdb_hist_add(&w->st.hist, now / 1000 - w->st.last_ns / 1000);
		w->st.last_ns = now;
	}
}

static void failed(struct worker *w, const char *call, int rc, uint64_t key)
{
	if (w->st.error || w->st.bad_data)
		return;
	w->st.error = rc;
	w->st.error_call = call;
	w->st.error_key = key;
}

static void pair_init(struct worker *w, kv_pair *kv, uint64_t i)
{
	memset(kv, 0, sizeof(*kv));
	kvt_key_make(&w->ctx->ks, i, w->key);
	kv->keyspace_id = KV_KEYSPACE_IODATA;
	kv->key.key = w->key;
	kv->key.length = (uint16_t)w->ctx->ks.key_size;
	kv->value.value = w->value;
}

static bool put(struct worker *w, uint64_t i)
{
	kv_pair kv;
	pair_init(w, &kv, i);
	kvt_value_make(&w->ctx->vs, i, w->value);
	kv.value.length = w->ctx->vs.size;
	kv.param.io_option.store_option = KV_STORE_DEFAULT;
	int rc = kv_store(dev_of(w->ctx, i), &kv);
	if (rc != KV_SUCCESS) {
		failed(w, "kv_store", rc, i);
		return false;
	}
	finished(w, w->ctx->ks.key_size + w->ctx->vs.size);
	return true;
}

/* Retrieves key i; *found says whether it existed. False after a failure. */
static bool get(struct worker *w, uint64_t i, bool *found)
{
	kv_pair kv;
	pair_init(w, &kv, i);
	kv.value.length = w->value_cap;
	kv.param.io_option.retrieve_option = KV_RETRIEVE_DEFAULT;
	int rc = kv_retrieve(dev_of(w->ctx, i), &kv);
	*found = rc == KV_SUCCESS;
	if (rc == KV_ERR_NOT_EXIST_KEY) {
		finished(w, 0);
		return true;
	}
	if (rc != KV_SUCCESS) {
		failed(w, "kv_retrieve", rc, i);
		return false;
	}
	uint32_t size = w->ctx->vs.size;
	if (kv.value.actual_value_size != size || !kvt_value_check(&w->ctx->vs, i, w->value, 0, size)) {
		if (!w->st.error && !w->st.bad_data) {
			w->st.bad_data = true;
			w->st.error_key = i;
		}
		return false;
	}
	w->st.found++;
	finished(w, w->ctx->ks.key_size + size);
	return true;
}

static bool del(struct worker *w, uint64_t i)
{
	kv_pair kv;
	pair_init(w, &kv, i);
	kv.param.io_option.delete_option = KV_DELETE_DEFAULT;
	int rc = kv_delete(dev_of(w->ctx, i), &kv);
	/* deleting a key that is not there is no failure (db_bench's Delete succeeds too) */
	if (rc != KV_SUCCESS && rc != KV_ERR_NOT_EXIST_KEY) {
		failed(w, "kv_delete", rc, i);
		return false;
	}
	finished(w, 0);
	return true;
}

static uint64_t reads_of(const struct kvdb_flags *f)
{
	return f->reads < 0 ? (uint64_t)f->num : (uint64_t)f->reads;
}

/* readseq. A KV device keeps one iterator per prefix, so the threads cannot each scan as
 * db_bench's threads each scan the whole database: they share one scan per device, each
 * taking the next key list the iterator hands out and retrieving its keys (one operation
 * each), until --reads keys are read in all or every device said end of data. */
struct scan {
	pthread_mutex_t lock;
	int dev;                   /* the device being scanned; ndev when done */
	uint32_t it;               /* its iterator, 0 when none is open */
	atomic_uint_fast64_t left; /* keys still to read */
};

struct seq {
	struct worker *w;
	struct scan *scan;
	bool ok;
};

static void seq_key(const uint8_t *key, uint32_t klen, void *arg)
{
	struct seq *s = arg;
	uint64_t i;
	/* a key of another program under the same prefix is not the benchmark's to read */
	if (!s->ok || !kvt_key_index(&s->w->ctx->ks, key, klen, &i))
		return;
	uint_fast64_t left = atomic_load(&s->scan->left);
	do {
		if (!left)
			return;
	} while (!atomic_compare_exchange_weak(&s->scan->left, &left, left - 1));
	bool found;
	s->ok = get(s->w, i, &found);
}

/* The next key list of the scan into buf (under the lock); its length, or -1 at the end of
 * the scan or after a failure. */
static int scan_next(struct worker *w, struct scan *sc, uint8_t *buf)
{
	struct kvdb_ctx *c = w->ctx;
	int len = -1;
	pthread_mutex_lock(&sc->lock);
	while (sc->dev < c->ndev && atomic_load(&sc->left) && !w->st.error) {
		uint64_t h = c->handle[sc->dev];
		if (!sc->it) {
			uint32_t it = kv_iterate_open(h, KV_KEYSPACE_IODATA, 0xffffffffu, c->ks.prefix,
						      KV_KEY_ITERATE);
			if (it < 1 || it > KV_MAX_ITERATE_HANDLE) {
				failed(w, "kv_iterate_open", (int)it, 0);
				sc->dev = c->ndev;
				break;
			}
			sc->it = it;
		}
		uint32_t got;
		int rc = kvt_iter_read(h, sc->it, buf, &got);
		if (rc != KV_SUCCESS && rc != KV_ERR_ITERATE_READ_EOF)
			failed(w, "kv_iterate_read", rc, 0);
		if (rc != KV_SUCCESS) {
			/* the end of this device (the end chunk may still carry keys) */
			int crc = kv_iterate_close(h, (uint8_t)sc->it);
			if (crc != KV_SUCCESS)
				failed(w, "kv_iterate_close", crc, 0);
			sc->it = 0;
			sc->dev = w->st.error ? c->ndev : sc->dev + 1;
		}
		if (rc == KV_SUCCESS || rc == KV_ERR_ITERATE_READ_EOF) {
			len = (int)got;
			break;
		}
	}
	pthread_mutex_unlock(&sc->lock);
	return len;
}

static void read_seq(struct worker *w, struct scan *sc)
{
	uint8_t *buf = aligned_alloc(4096, KV_ITERATE_READ_BUFFER_SIZE);
	if (!buf) {
		failed(w, "out of memory", KV_ERR_HEAP_ALLOC_FAILURE, 0);
		return;
	}
	struct seq s = { .w = w, .scan = sc, .ok = true };
	int len;
	while (s.ok && (len = scan_next(w, sc, buf)) >= 0) {
		if (kvt_iter_parse(buf, (uint32_t)len, seq_key, &s) < 0) {
			failed(w, "kv_iterate_read (malformed key list)", KV_ERR_ITERATE_ERROR, 0);
			break;
		}
	}
	free(buf);
}

/* A scan left open by a failed thread is closed here, so the next readseq can open one. */
static void scan_finish(struct kvdb_ctx *c, struct scan *sc)
{
	if (sc->it && sc->dev < c->ndev)
		kv_iterate_close(c->handle[sc->dev], (uint8_t)sc->it);
	pthread_mutex_destroy(&sc->lock);
}

static void *work(void *arg)
{
	struct worker *w = arg;
	const struct kvdb_flags *f = w->ctx->f;
	uint64_t num = (uint64_t)f->num;
	pthread_barrier_wait(w->start);
	w->st.start_ns = w->st.last_ns = mono_ns();
	bool found;
	if (w->writer) {
		while (!atomic_load_explicit(w->stop, memory_order_relaxed))
			if (!put(w, splitmix(&w->rng) % num))
				break;
	} else {
		switch (w->bench) {
		case KVDB_FILLSEQ:
			for (uint64_t i = 0; i < num && put(w, i); i++)
				;
			break;
		case KVDB_FILLRANDOM:
		case KVDB_OVERWRITE:
			for (uint64_t n = 0; n < num && put(w, splitmix(&w->rng) % num); n++)
				;
			break;
		case KVDB_READRANDOM:
		case KVDB_READWHILEWRITING:
			for (uint64_t n = reads_of(f); n > 0 && get(w, splitmix(&w->rng) % num, &found); n--)
				;
			break;
		case KVDB_READSEQ:
			read_seq(w, w->scan);
			break;
		case KVDB_DELETERANDOM:
			for (uint64_t n = 0; n < num && del(w, splitmix(&w->rng) % num); n++)
				;
			break;
		}
	}
	w->st.finish_ns = mono_ns();
	w->st.seconds = (double)(w->st.finish_ns - w->st.start_ns) * 1e-9;
	return NULL;
}

static const char *op_type(enum kvdb_bench b)
{
	switch (b) {
	case KVDB_FILLSEQ:
	case KVDB_FILLRANDOM:
	case KVDB_OVERWRITE: return "write";
	case KVDB_DELETERANDOM: return "delete";
	default: return "read";
	}
}

static void merge(struct kvdb_stats *dst, const struct kvdb_stats *src, bool first)
{
	if (first || src->start_ns < dst->start_ns)
		dst->start_ns = src->start_ns;
	if (first || src->finish_ns > dst->finish_ns)
		dst->finish_ns = src->finish_ns;
	dst->done += src->done;
	dst->bytes += src->bytes;
	dst->found += src->found;
	dst->seconds += src->seconds;
	kvdb_hist_merge(&dst->hist, &src->hist);
}

/* A thread's failure on stderr; returns the exit code it means. */
static int explain(const struct kvdb_ctx *c, enum kvdb_bench b, const struct worker *w)
{
	char key[KV_MAX_KEY_LEN + 1];
	kvt_key_make(&c->ks, w->st.error_key, (uint8_t *)key);
	key[c->ks.key_size] = '\0';
	for (uint32_t i = 0; i < c->ks.key_size; i++)
		if (key[i] < 0x20 || key[i] > 0x7e)
			key[i] = '.';
	if (w->st.bad_data) {
		fprintf(stderr, "kv_db_bench: %s: key '%s' returned other data than was stored\n",
			names[b], key);
		return KVT_EXIT_DEVICE;
	}
	char rs[64];
	kvt_result_str(w->st.error, rs, sizeof(rs));
	if (w->st.error == KV_ERR_HEAP_ALLOC_FAILURE && strcmp(w->st.error_call, "out of memory") == 0) {
		fprintf(stderr, "kv_db_bench: %s: out of memory\n", names[b]);
		return KVT_EXIT_HOST;
	}
	if (strncmp(w->st.error_call, "kv_iterate", 10) == 0)
		fprintf(stderr, "kv_db_bench: %s: %s: %s\n", names[b], w->st.error_call, rs);
	else
		fprintf(stderr, "kv_db_bench: %s: %s of key '%s': %s\n", names[b], w->st.error_call,
			key, rs);
	return KVT_EXIT_DEVICE;
}

int kvdb_run(struct kvdb_ctx *c, enum kvdb_bench b)
{
	const struct kvdb_flags *f = c->f;
	unsigned readers = (unsigned)f->threads;
	unsigned n = readers + (b == KVDB_READWHILEWRITING ? 1 : 0);
	struct worker *w = calloc(n, sizeof(*w));
	pthread_t *tid = calloc(n, sizeof(*tid));
	uint32_t cap = ((uint32_t)f->value_size + 3u) & ~3u;
	if (!w || !tid) {
		free(w);
		free(tid);
		fprintf(stderr, "kv_db_bench: %s: out of memory\n", names[b]);
		return KVT_EXIT_HOST;
	}
	atomic_bool stop;
	atomic_init(&stop, false);
	pthread_barrier_t start;
	pthread_barrier_init(&start, NULL, n);
	struct scan scan = { .dev = 0 };
	pthread_mutex_init(&scan.lock, NULL);
	atomic_init(&scan.left, reads_of(f));
	c->runs++;
	int rc = KVT_EXIT_OK;
	unsigned started = 0;
	for (unsigned t = 0; t < n; t++) {
		w[t].ctx = c;
		w[t].bench = b;
		w[t].writer = t == readers;
		w[t].stop = &stop;
		w[t].start = &start;
		w[t].scan = &scan;
		/* a stream per run and thread: overwrite draws other keys than fillrandom did */
		w[t].rng = c->seed + c->runs * 1000003ull + t;
		w[t].key = malloc(KV_MAX_KEY_LEN);
		w[t].value = aligned_alloc(4096, ((size_t)cap + 4096) & ~(size_t)4095);
		w[t].value_cap = cap;
		kvdb_hist_init(&w[t].st.hist);
		if (!w[t].key || !w[t].value) {
			fprintf(stderr, "kv_db_bench: %s: out of memory\n", names[b]);
			rc = KVT_EXIT_HOST;
			break;
		}
	}
	if (rc == KVT_EXIT_OK) {
		for (; started < n; started++)
			if (pthread_create(&tid[started], NULL, work, &w[started]) != 0)
				break;
		if (started < n) {
			/* the barrier waits for n: those that started cannot pass it; give up */
			fprintf(stderr, "kv_db_bench: %s: cannot start %u threads\n", names[b], n);
			exit(KVT_EXIT_HOST);
		}
		for (unsigned t = 0; t < readers; t++)
			pthread_join(tid[t], NULL);
		atomic_store(&stop, true);
		for (unsigned t = readers; t < n; t++)
			pthread_join(tid[t], NULL);
	}

	if (rc == KVT_EXIT_OK) {
		struct kvdb_stats total = { 0 };
		kvdb_hist_init(&total.hist);
		/* readwhilewriting reports its readers; the writer only makes the load */
		for (unsigned t = 0; t < readers; t++)
			merge(&total, &w[t].st, t == 0);
		char msg[96] = "";
		if (b == KVDB_READRANDOM || b == KVDB_READWHILEWRITING)
			snprintf(msg, sizeof(msg), "(%" PRIu64 " of %" PRIu64 " found)\n", total.found,
				 total.done);
		kvdb_report(stdout, names[b], &total, msg, op_type(b), f->histogram);
		for (unsigned t = 0; t < n && rc == KVT_EXIT_OK; t++)
			if (w[t].st.error || w[t].st.bad_data)
				rc = explain(c, b, &w[t]);
	}
	pthread_barrier_destroy(&start);
	scan_finish(c, &scan);
	for (unsigned t = 0; t < n; t++) {
		free(w[t].key);
		free(w[t].value);
	}
	free(w);
	free(tid);
	return rc;
}
