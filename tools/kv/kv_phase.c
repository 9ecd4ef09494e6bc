/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Running a benchmark phase through the SDK (the kv_* calls, or kv_perf's default, the
 * driver-level calls of kvnvme.h on a named queue). Sync: one call after the other, timed around
 * the call. Async: a slot per call in flight, each with its own key and value buffers; the
 * submitting thread takes a free slot, stamps it and submits; the callback (on a completion
 * thread) checks the data, records the latency and gives the slot back. So the submitter keeps
 * exactly qd calls in flight and never touches a buffer the SDK may still read.
 *
 * The slots go back and forth without a lock or a shared counter: the callback clears the
 * slot's busy flag (release) when it is done with it, and the submitter walks the slots
 * round robin for a clear one. Otherwise the harness's own lock and counter would bounce
 * between the two cores on every call and be measured as the SDK's cost.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv_apis.h"
#include "kvnvme.h"
#include "kv_phase.h"
#include "progress.h"
#include "tsc.h"

const char *kvt_op_name(enum kvt_op op)
{
	switch (op) {
	case KVT_STORE: return "store";
	case KVT_RETRIEVE: return "retrieve";
	case KVT_DELETE: return "delete";
	case KVT_EXIST: return "exist";
	case KVT_BLEND: return "blend";
	}
	return "?";
}

/* cache-line aligned: neighbouring slots are in use on different cores */
struct slot {
	_Alignas(64) kv_pair kv;
	uint8_t *key;
	uint8_t *value;
	uint64_t idx;
	enum kvt_op op;
	uint64_t t0;
	struct runner *r;
	_Atomic bool busy;   /* set by the submitter, cleared by the callback when done */
};

struct runner {
	struct kvt_phase *p;
	struct slot *slots;
	uint32_t nslots;
	uint32_t next_slot;   /* async: where the submitter looks for a free slot */
	uint64_t rng;
	/* The completion thread's, a line away from the submitter's fields. */
	_Alignas(64) pthread_mutex_t lock; /* async: counters and histogram */
	struct progress progress;          /* the submitter's */
};

/* Checked every PROGRESS_EVERY calls: a clock read per call would show in the figures. */
#define PROGRESS_EVERY 1024u

static uint64_t xorshift(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

static uint32_t round4(uint32_t v)
{
	return (v + 3u) & ~3u;
}

/* Fills the slot's pair for the I/O; the value buffer is written only for stores. */
static void prepare(struct runner *r, struct slot *s, uint64_t idx, enum kvt_op op)
{
	const struct kvt_phase *p = r->p;
	s->idx = idx;
	s->op = op;
	kvt_key_make(p->ks, idx, s->key);
	kv_pair *kv = &s->kv;
	kv->keyspace_id = KV_KEYSPACE_IODATA;
	kv->key.key = s->key;
	kv->key.length = (uint16_t)p->ks->key_size;
	kv->value.value = s->value;
	kv->value.actual_value_size = 0;
	kv->value.offset = 0;
	kv->param.private_data = s;
	uint32_t size = kvt_value_size(p->vs, idx);
	switch (op) {
	case KVT_STORE:
		kvt_value_make(p->vs, idx, s->value);
		kv->value.length = size;
		kv->param.io_option.store_option = KV_STORE_DEFAULT;
		break;
	case KVT_RETRIEVE: {
		uint32_t want = p->offset < size ? size - p->offset : 0;
		kv->value.length = p->ks->lba ? size : round4(want);
		kv->value.offset = p->offset;
		kv->param.io_option.retrieve_option = KV_RETRIEVE_DEFAULT;
		break;
	}
	case KVT_DELETE:
		/* block SSDs: the extent to deallocate is value.length bytes */
		kv->value.length = p->ks->lba ? size : 0;
		kv->param.io_option.delete_option = KV_DELETE_DEFAULT;
		break;
	case KVT_EXIST:
	case KVT_BLEND:
		kv->value.length = 0;
		kv->param.io_option.exist_option = KV_EXIST_DEFAULT;
		break;
	}
}

/* Counts one finished call; the caller holds the lock in async mode. */
static void account(struct runner *r, struct slot *s, int result, uint64_t ticks, bool bad_data)
{
	struct kvt_phase *p = r->p;
	p->ops++;
	lat_hist_record(&p->hist, ticks);
	if (result == KV_ERR_NOT_EXIST_KEY && s->op != KVT_STORE) {
		p->not_found++;
		if (p->missing_ok)
			return;
	}
	if (result != KV_SUCCESS) {
		if (!p->errors) {
			p->first_error = result;
			p->first_error_key = s->idx;
		}
		p->errors++;
		return;
	}
	if (bad_data) {
		if (!p->verify_errors)
			p->first_bad_key = s->idx;
		p->verify_errors++;
	}
	switch (s->op) {
	case KVT_STORE: p->bytes += p->ks->key_size + s->kv.value.length; break;
	case KVT_RETRIEVE: p->bytes += p->ks->key_size + s->kv.value.length; break;
	default: p->bytes += p->ks->key_size; break;
	}
	if (s->op <= KVT_DELETE) {
		p->op_ops[s->op]++;
		p->op_value_bytes[s->op] += kvt_value_size(p->vs, s->idx);
		p->op_size_ops[s->op][p->vs->nsizes > 1 ? s->idx % p->vs->nsizes : 0]++;
	}
}

/* Whether a successful retrieve returned the wrong data. */
static bool data_bad(const struct runner *r, const struct slot *s, int result)
{
	const struct kvt_phase *p = r->p;
	if (!p->verify || s->op != KVT_RETRIEVE || result != KV_SUCCESS)
		return false;
	uint32_t size = kvt_value_size(p->vs, s->idx);
	uint32_t want = p->offset < size ? size - p->offset : 0;
	if (p->ks->lba)
		return !kvt_value_check(p->vs, s->idx, s->value, 0, size);
	if (s->kv.value.actual_value_size != want)
		return true;
	uint32_t len = s->kv.value.length < want ? s->kv.value.length : want;
	return len != want || !kvt_value_check(p->vs, s->idx, s->value, p->offset, len);
}

static enum kvt_op pick_op(struct runner *r, uint64_t n)
{
	if (r->p->op != KVT_BLEND)
		return r->p->op;
	if (r->p->op_list)
		return (enum kvt_op)r->p->op_list[n];
	static const enum kvt_op mix[3] = { KVT_STORE, KVT_RETRIEVE, KVT_DELETE };
	return mix[xorshift(&r->rng) % 3];
}

static int call_sync(const struct kvt_phase *p, struct slot *s)
{
	uint64_t h = p->handle;
	if (p->driver) {
		switch (s->op) {
		case KVT_STORE: return kv_nvme_write(h, p->qid, &s->kv);
		case KVT_RETRIEVE: return kv_nvme_read(h, p->qid, &s->kv);
		case KVT_DELETE: return kv_nvme_delete(h, p->qid, &s->kv);
		default: return kv_nvme_exist(h, p->qid, &s->kv);
		}
	}
	switch (s->op) {
	case KVT_STORE: return kv_store(h, &s->kv);
	case KVT_RETRIEVE: return kv_retrieve(h, &s->kv);
	case KVT_DELETE: return kv_delete(h, &s->kv);
	default: return kv_exist(h, &s->kv);
	}
}

static int call_async(const struct kvt_phase *p, struct slot *s)
{
	uint64_t h = p->handle;
	if (p->driver) {
		switch (s->op) {
		case KVT_STORE: return kv_nvme_write_async(h, p->qid, &s->kv);
		case KVT_RETRIEVE: return kv_nvme_read_async(h, p->qid, &s->kv);
		case KVT_DELETE: return kv_nvme_delete_async(h, p->qid, &s->kv);
		default: return kv_nvme_exist_async(h, p->qid, &s->kv);
		}
	}
	switch (s->op) {
	case KVT_STORE: return kv_store_async(h, &s->kv);
	case KVT_RETRIEVE: return kv_retrieve_async(h, &s->kv);
	case KVT_DELETE: return kv_delete_async(h, &s->kv);
	default: return kv_exist_async(h, &s->kv);
	}
}

static uint64_t key_of(const struct kvt_phase *p, uint64_t n)
{
	return p->order ? p->order[n] : n;
}

static void run_sync(struct runner *r)
{
	struct kvt_phase *p = r->p;
	struct slot *s = &r->slots[0];
	for (uint64_t n = 0; n < p->n; n++) {
		if (n % PROGRESS_EVERY == 0)
			progress_update(&r->progress, n);
		prepare(r, s, key_of(p, n), pick_op(r, n));
		uint64_t t0 = tsc_now();
		int rc = call_sync(p, s);
		uint64_t t1 = tsc_now();
		account(r, s, rc, t1 - t0, data_bad(r, s, rc));
	}
}

/* status is the kv_result (result, completion dword 0, is not needed here) */
static void on_complete(kv_pair *kv, unsigned int result, unsigned int status)
{
	(void)result;
	uint64_t t1 = tsc_now();
	struct slot *s = kv->param.private_data;
	struct runner *r = s->r;
	bool bad = data_bad(r, s, (int)status);
	/* uncontended: the callbacks of one submitter come from one completion thread */
	pthread_mutex_lock(&r->lock);
	account(r, s, (int)status, t1 - s->t0, bad);
	pthread_mutex_unlock(&r->lock);
	atomic_store_explicit(&s->busy, false, memory_order_release);
}

static struct slot *take_slot(struct runner *r)
{
	for (unsigned spins = 0;; spins++) {
		for (uint32_t i = 0; i < r->nslots; i++) {
			struct slot *s = &r->slots[r->next_slot];
			if (++r->next_slot == r->nslots)
				r->next_slot = 0;
			if (!atomic_load_explicit(&s->busy, memory_order_acquire)) {
				atomic_store_explicit(&s->busy, true, memory_order_relaxed);
				return s;
			}
		}
		/* the completion thread may share our CPU: let it run */
		if (spins > 64)
			sched_yield();
	}
}

static void wait_all_slots(struct runner *r)
{
	for (uint32_t i = 0; i < r->nslots; i++)
		for (unsigned spins = 0;
		     atomic_load_explicit(&r->slots[i].busy, memory_order_acquire); spins++)
			if (spins > 64)
				sched_yield();
}

static void run_async(struct runner *r)
{
	struct kvt_phase *p = r->p;
	for (uint64_t n = 0; n < p->n; n++) {
		if (n % PROGRESS_EVERY == 0)
			progress_update(&r->progress, n);
		struct slot *s = take_slot(r);
		prepare(r, s, key_of(p, n), pick_op(r, n));
		s->kv.param.async_cb = on_complete;
		s->t0 = tsc_now();
		int rc = call_async(p, s);
		if (rc != KV_SUCCESS) {
			/* refused at submission: no callback will come */
			uint64_t t1 = tsc_now();
			pthread_mutex_lock(&r->lock);
			account(r, s, rc, t1 - s->t0, false);
			pthread_mutex_unlock(&r->lock);
			atomic_store_explicit(&s->busy, false, memory_order_release);
		}
	}
	wait_all_slots(r);
}

static void free_slots(struct runner *r)
{
	for (uint32_t i = 0; i < r->nslots; i++) {
		free(r->slots[i].key);
		kv_free(r->slots[i].value);
	}
	free(r->slots);
}

int kvt_phase_run(struct kvt_phase *p, const char *prog)
{
	struct runner r = { .p = p, .rng = p->seed ? p->seed : 0x9e3779b97f4a7c15ull };
	r.nslots = p->async ? (p->qd ? p->qd : 1) : 1;
	r.slots = aligned_alloc(_Alignof(struct slot), r.nslots * sizeof(*r.slots));
	if (!r.slots)
		goto nomem;
	memset(r.slots, 0, r.nslots * sizeof(*r.slots));
	uint32_t cap = round4(p->vs->size) + 4;
	for (uint32_t i = 0; i < r.nslots; i++) {
		struct slot *s = &r.slots[i];
		s->r = &r;
		s->key = calloc(1, p->ks->key_size + 8);
		/* DMA memory, as the original's samples used: the SDK hands it to the device as it is */
		s->value = kv_zalloc((cap + 4095) & ~4095u);
		if (!s->key || !s->value) {
			r.nslots = i + 1;
			free_slots(&r);
			goto nomem;
		}
		atomic_init(&s->busy, false);
	}
	pthread_mutex_init(&r.lock, NULL);
	p->ops = p->errors = p->not_found = p->verify_errors = p->bytes = 0;
	memset(p->op_ops, 0, sizeof(p->op_ops));
	memset(p->op_value_bytes, 0, sizeof(p->op_value_bytes));
	memset(p->op_size_ops, 0, sizeof(p->op_size_ops));
	p->first_error = 0;
	lat_hist_init(&p->hist);

	clock_gettime(CLOCK_REALTIME, &p->start_wall);
	if (p->progress)
		progress_start(&r.progress, prog, kvt_op_name(p->op), p->n, "keys");
	p->start_ns = mono_ns();
	if (p->async)
		run_async(&r);
	else
		run_sync(&r);
	p->end_ns = mono_ns();
	progress_end(&r.progress);
	clock_gettime(CLOCK_REALTIME, &p->end_wall);

	pthread_mutex_destroy(&r.lock);
	free_slots(&r);
	return 0;
nomem:
	fprintf(stderr, "%s: out of memory for %u buffers of %u bytes\n", prog, r.nslots,
		p->vs->size);
	return -1;
}
