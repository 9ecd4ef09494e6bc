/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The soak run (docs/reliability.md "Load"): for a bounded time, several threads on several
 * queue pairs mix block writes, reads and flushes (driver API, each thread polling its own
 * queue pair) while others mix KV stores (asynchronous, completed by the SDK's completion
 * threads), retrieves, deletes and iterators, and an injector kills the controllers with a
 * fatal status (CSTS.CFS) every few seconds, so that the driver resets them under the load.
 *
 * Every completion's data is checked: a block read must return, for each block, the last
 * write acknowledged to it (or, when a write failed under a reset, that write or the one
 * before: nothing else), a retrieve the last acknowledged value (checksummed, with key and
 * generation), a retrieve of a deleted key KV_ERR_NOT_EXIST_KEY, an iterator only keys this
 * run stored, and at the end, with the load stopped, a full iterator exactly the keys present.
 * A command may fail only across a reset (its submit and completion see different reset
 * epochs); any other error, any wrong data, any lost acknowledged write is a violation.
 *
 *   soak [--seconds S] [--block-threads N] [--kv-threads N] [--reset-every-ms MS]
 *        [--seed N] [--json FILE] [--plant block|kv]
 * --plant makes the run forget some acknowledged writes on purpose: it must then fail.
 * Exit status 0 when there was no violation and every injected fault was recovered from.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../crash/crash_common.h"
#include "kv_apis.h"
#include "kv_internal.h"
#include "unvme/unvme.h"

#define BLK_LBA     512u
#define EXT_BLOCKS  8u                 /* one command covers one extent */
#define EXTENTS     256u               /* per block thread */
#define BLK_QD      16u
#define KV_KEYS     512u               /* per KV thread */
#define KV_INFLIGHT 16u
#define KV_MAGIC    0x4b534f41u

static struct {
	double seconds;
	int block_threads, kv_threads, reset_every_ms;
	uint64_t seed;
	const char *json;
	const char *plant;              /* "block" or "kv": lose acknowledged writes on purpose */
} opt = { 20, 3, 2, 4000, 1, NULL, NULL };

static atomic_bool stop;
static atomic_uint epoch;           /* odd while a fault is being injected and recovered */
static atomic_ulong violations;
static char first_violation[512];
static pthread_mutex_t viol_lock = PTHREAD_MUTEX_INITIALIZER;

static struct {
	atomic_ulong writes, reads, flushes, blocks_checked, reset_errors, submit_retries;
} blk;
static struct {
	atomic_ulong stores, retrieves, deletes, exists, iterations, iter_keys, reset_errors,
		values_checked;
} kvs;
static unsigned long faults_injected, blk_resets, kv_resets;

static void violation(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void violation(const char *fmt, ...)
{
	if (atomic_fetch_add(&violations, 1) == 0) {
		pthread_mutex_lock(&viol_lock);
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(first_violation, sizeof(first_violation), fmt, ap);
		va_end(ap);
		for (char *c = first_violation; *c; c++) /* it goes into a JSON string */
			if (*c == '"' || *c == '\\' || (unsigned char)*c < 0x20)
				*c = '?';
		pthread_mutex_unlock(&viol_lock);
		fprintf(stderr, "soak: VIOLATION: %s\n", first_violation);
	}
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* A failure is excused only when a reset happened between submit and completion. */
static bool across_reset(unsigned at_submit)
{
	unsigned now = atomic_load(&epoch);
	return now != at_submit || (now & 1);
}

/* ---------------------------------------------------------------- block */

struct blk_block {                  /* the head of each 512-byte block */
	uint32_t crc;                   /* of the rest of the block */
	uint32_t thread, lba_lo, lba_hi, gen;
};

struct extent {
	uint32_t gen, alt;              /* content: gen, or alt too while uncertain */
	bool uncertain, busy;
};

struct blk_cmd {
	struct blk_thread *t;
	uint32_t ext, gen;
	unsigned epoch;
	int kind;                       /* 0 write, 1 read, 2 flush */
	uint8_t *buf;
	bool used;
};

struct blk_thread {
	int id;
	struct unvme_ns *ns;
	struct unvme_qpair *qp;
	struct extent ext[EXTENTS];
	struct blk_cmd cmd[BLK_QD];
	uint32_t inflight;
	uint64_t rng;
};

static struct unvme_ctrlr *blk_ctrlr;

static uint64_t ext_lba(const struct blk_thread *t, uint32_t e)
{
	return ((uint64_t)t->id * EXTENTS + e) * EXT_BLOCKS;
}

static void fill_block(uint8_t *b, uint32_t thread, uint64_t lba, uint32_t gen)
{
	struct blk_block h = { 0, thread, (uint32_t)lba, (uint32_t)(lba >> 32), gen };
	uint64_t x = lba * 0x9e3779b97f4a7c15ull ^ gen;
	for (size_t i = sizeof(h); i < BLK_LBA; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		b[i] = (uint8_t)(x >> 56);
	}
	memcpy(b, &h, sizeof(h));
	h.crc = ccrc(b + 4, BLK_LBA - 4);
	memcpy(b, &h.crc, 4);
}

/* The generation a block holds, or -1 when it is no block of ours (or corrupt); 0 for zeroes. */
static int64_t block_gen(const uint8_t *b, uint32_t thread, uint64_t lba)
{
	static const uint8_t zero[BLK_LBA];
	if (!memcmp(b, zero, BLK_LBA))
		return 0;
	struct blk_block h;
	memcpy(&h, b, sizeof(h));
	if (h.crc != ccrc(b + 4, BLK_LBA - 4) || h.thread != thread || h.lba_lo != (uint32_t)lba ||
	    h.lba_hi != (uint32_t)(lba >> 32))
		return -1;
	return h.gen;
}

static void blk_done(void *arg, const struct nvme_cqe *cpl)
{
	struct blk_cmd *c = arg;
	struct blk_thread *t = c->t;
	unsigned st = NVME_CQE_SCT(cpl->status) << 8 | NVME_CQE_SC(cpl->status);
	struct extent *e = c->kind == 2 ? NULL : &t->ext[c->ext];
	if (st) {
		if (!across_reset(c->epoch))
			violation("block thread %d: %s of extent %u failed with status 0x%x without a "
				  "reset", t->id, c->kind == 0 ? "write" : c->kind == 1 ? "read" : "flush",
				  c->ext, st);
		atomic_fetch_add(&blk.reset_errors, 1);
		if (c->kind == 0) {
			/* applied or not, per block: either generation may be there now */
			if (!e->uncertain)
				e->alt = e->gen;
			e->gen = c->gen;
			e->uncertain = true;
		}
	} else if (c->kind == 0) {
		/* --plant block: every 1000th acknowledged write is forgotten, as a device losing it
		 * would look to the checks (proves they catch a lost write) */
		static atomic_ulong acked;
		if (opt.plant && !strcmp(opt.plant, "block") && atomic_fetch_add(&acked, 1) % 1000 == 999)
			c->gen++;
		e->gen = c->gen;
		e->uncertain = false;
		atomic_fetch_add(&blk.writes, 1);
	} else if (c->kind == 1) {
		bool all_new = true;
		for (uint32_t i = 0; i < EXT_BLOCKS; i++) {
			uint64_t lba = ext_lba(t, c->ext) + i;
			int64_t g = block_gen(c->buf + i * BLK_LBA, (uint32_t)t->id, lba);
			if (g == e->gen)
				continue;
			all_new = false;
			if (e->uncertain && g == e->alt)
				continue;
			if (g < 0)
				violation("block thread %d: LBA %" PRIu64 " is corrupt or not ours", t->id, lba);
			else
				violation("block thread %d: LBA %" PRIu64 " holds generation %" PRId64 ", the "
					  "last acknowledged write was %u%s", t->id, lba, g, e->gen,
					  e->uncertain ? " (or the one before)" : "");
		}
		if (all_new)
			e->uncertain = false;
		atomic_fetch_add(&blk.blocks_checked, EXT_BLOCKS);
		atomic_fetch_add(&blk.reads, 1);
	} else {
		atomic_fetch_add(&blk.flushes, 1);
	}
	if (e)
		e->busy = false;
	c->used = false;
	t->inflight--;
}

static int blk_submit_one(struct blk_thread *t)
{
	struct blk_cmd *c = NULL;
	for (uint32_t i = 0; i < BLK_QD && !c; i++)
		if (!t->cmd[i].used)
			c = &t->cmd[i];
	if (!c)
		return -EAGAIN;
	uint32_t e = (uint32_t)(rnd(&t->rng) % EXTENTS);
	if (t->ext[e].busy)
		return 0;
	uint64_t r = rnd(&t->rng) % 100;
	c->t = t;
	c->ext = e;
	c->kind = r < 50 ? 0 : r < 92 ? 1 : 2;
	c->epoch = atomic_load(&epoch);
	uint64_t lba = ext_lba(t, e);
	int rc;
	if (c->kind == 0) {
		c->gen = t->ext[e].gen + (t->ext[e].uncertain ? 1 : 0) + 1;
		if (t->ext[e].uncertain && t->ext[e].alt >= c->gen)
			c->gen = t->ext[e].alt + 1;
		for (uint32_t i = 0; i < EXT_BLOCKS; i++)
			fill_block(c->buf + i * BLK_LBA, (uint32_t)t->id, lba + i, c->gen);
		rc = unvme_write(t->ns, t->qp, c->buf, lba, EXT_BLOCKS, blk_done, c);
	} else if (c->kind == 1) {
		rc = unvme_read(t->ns, t->qp, c->buf, lba, EXT_BLOCKS, blk_done, c);
	} else {
		rc = unvme_flush(t->ns, t->qp, blk_done, c);
	}
	if (rc)
		return rc;
	c->used = true;
	if (c->kind != 2)
		t->ext[e].busy = true;
	t->inflight++;
	return 0;
}

static void *blk_main(void *arg)
{
	struct blk_thread *t = arg;
	while (!atomic_load(&stop) || t->inflight) {
		if (!atomic_load(&stop) && t->inflight < BLK_QD) {
			int rc = blk_submit_one(t);
			if (rc == -EAGAIN || rc == -EIO) {
				/* queue full, or the controller is being reset: poll and retry */
				atomic_fetch_add(&blk.submit_retries, 1);
				if (rc == -EIO && !(atomic_load(&epoch) & 1) && t->inflight == 0)
					usleep(1000);
			} else if (rc) {
				violation("block thread %d: submit failed: %d (%s)", t->id, rc, unvme_errmsg());
				atomic_store(&stop, true);
			}
		}
		int n = unvme_qpair_poll(t->qp, 0);
		if (n < 0 && n != -EAGAIN && n != -EIO)
			violation("block thread %d: poll failed: %d", t->id, n);
		if (n < 0)
			usleep(200);
	}
	return NULL;
}

/* ---------------------------------------------------------------- KV */

struct kv_val_head {
	uint32_t magic, key, gen, len, crc;
};

enum { K_ABSENT, K_PRESENT };
struct kv_key {
	atomic_bool busy;
	int state, alt_state;           /* K_ABSENT / K_PRESENT (with gen) */
	uint32_t gen, alt_gen;
	bool uncertain;
};

struct kv_thread {
	int id;
	uint64_t h;
	struct kv_key key[KV_KEYS];
	atomic_uint inflight;
	uint64_t rng;
};

struct kv_op {
	kv_pair kv;
	struct kv_thread *t;
	uint32_t k, gen;
	unsigned epoch;
	char keybuf[16];
	uint8_t *val;
};

static uint32_t key_id(const struct kv_thread *t, uint32_t k)
{
	return (uint32_t)t->id * KV_KEYS + k;
}

static int make_key(char *out, uint32_t id)
{
	return snprintf(out, 16, "soak-%08" PRIu32, id);
}

static uint32_t val_len(uint32_t id, uint32_t gen)
{
	return 64 + ((id * 2654435761u ^ gen * 40503u) % 1000) * 4;
}

static void fill_value(uint8_t *v, uint32_t id, uint32_t gen, uint32_t len)
{
	for (uint32_t i = sizeof(struct kv_val_head); i < len; i++)
		v[i] = (uint8_t)(id * 31 + gen * 17 + i);
	struct kv_val_head h = { KV_MAGIC, id, gen, len, 0 };
	memcpy(v, &h, sizeof(h));
	h.crc = ccrc(v + sizeof(h), len - sizeof(h));
	memcpy(v, &h, sizeof(h));
}

/* The generation of a value, or -1 when it is corrupt or someone else's. */
static int64_t value_gen(const uint8_t *v, uint32_t len, uint32_t id)
{
	struct kv_val_head h;
	if (len < sizeof(h))
		return -1;
	memcpy(&h, v, sizeof(h));
	if (h.magic != KV_MAGIC || h.key != id || h.len != len ||
	    h.crc != ccrc(v + sizeof(h), len - sizeof(h)))
		return -1;
	return h.gen;
}

/* A pair naming key id, with buf (len bytes) as its value buffer. */
static void key_pair(kv_pair *kv, char kb[16], uint32_t id, void *buf, uint32_t len)
{
	make_key(kb, id);
	memset(kv, 0, sizeof(*kv));
	kv->key.key = kb;
	kv->key.length = 13;
	kv->value.value = buf;
	kv->value.length = len;
}

/* The original SDK's convention: result is the command's DW0, status the kv_result. */
static void kv_store_done(kv_pair *kv, unsigned dw0, unsigned result)
{
	(void)dw0;
	struct kv_op *op = kv->param.private_data;
	struct kv_thread *t = op->t;
	struct kv_key *k = &t->key[op->k];
	if (result != KV_SUCCESS) {
		if (!across_reset(op->epoch))
			violation("KV thread %d: async store of key %u failed with 0x%x without a reset",
				  t->id, key_id(t, op->k), result);
		atomic_fetch_add(&kvs.reset_errors, 1);
		if (!k->uncertain) {
			k->alt_state = k->state;
			k->alt_gen = k->gen;
		}
		k->uncertain = true;
	} else {
		k->uncertain = false;
		atomic_fetch_add(&kvs.stores, 1);
		static atomic_ulong acked;
		if (opt.plant && !strcmp(opt.plant, "kv") && atomic_fetch_add(&acked, 1) % 10 == 9)
			op->gen++; /* --plant kv: a lost acknowledged store, for the checks to catch */
	}
	k->state = K_PRESENT;
	k->gen = op->gen;
	free(op->val);
	free(op);
	atomic_fetch_sub(&t->inflight, 1);
	atomic_store_explicit(&k->busy, false, memory_order_release);
}

/* Checks a retrieve's answer against what the key must hold. */
static void kv_check(struct kv_thread *t, uint32_t k, int rc, const uint8_t *v, uint32_t len,
		     unsigned ep)
{
	struct kv_key *key = &t->key[k];
	uint32_t id = key_id(t, k);
	if (rc != KV_SUCCESS && rc != KV_ERR_NOT_EXIST_KEY) {
		if (!across_reset(ep))
			violation("KV thread %d: retrieve of key %u failed with 0x%x without a reset",
				  t->id, id, rc);
		atomic_fetch_add(&kvs.reset_errors, 1);
		return;
	}
	int64_t g = rc == KV_SUCCESS ? value_gen(v, len, id) : -2;
	bool ok_main = key->state == K_ABSENT ? rc == KV_ERR_NOT_EXIST_KEY
					      : rc == KV_SUCCESS && g == key->gen;
	bool ok_alt = key->uncertain && (key->alt_state == K_ABSENT ? rc == KV_ERR_NOT_EXIST_KEY
							   : rc == KV_SUCCESS && g == key->alt_gen);
	if (rc == KV_SUCCESS && g == -1)
		violation("KV thread %d: key %u: the value is corrupt or another key's", t->id, id);
	else if (!ok_main && !ok_alt)
		violation("KV thread %d: key %u: found %s (generation %" PRId64 "), expected %s "
			  "generation %u%s", t->id, id, rc == KV_SUCCESS ? "a value" : "nothing", g,
			  key->state == K_PRESENT ? "present," : "absent, after", key->gen,
			  key->uncertain ? " (or the state before a store failed in a reset)" : "");
	else if (ok_main)
		key->uncertain = false;
	atomic_fetch_add(&kvs.values_checked, 1);
}

/* An iterated key must be one this run stores; seen (optional) marks it. */
static void iterated_key(const uint8_t *k, uint32_t kl, void *seen)
{
	char key[32] = "";
	unsigned id = 0;
	memcpy(key, k, kl < sizeof(key) - 1 ? kl : sizeof(key) - 1);
	if (kl != 13 || sscanf(key, "soak-%8u", &id) != 1 || id >= (unsigned)opt.kv_threads * KV_KEYS)
		violation("iterator returned a key this run never stored: '%.13s' (%u bytes)", key, kl);
	else if (seen)
		((uint8_t *)seen)[id] = 1;
	atomic_fetch_add(&kvs.iter_keys, 1);
}

static void kv_iterate_check(struct kv_thread *t, bool final, uint8_t *seen)
{
	unsigned ep = atomic_load(&epoch);
	uint32_t it = kv_iterate_open(t->h, 0, 0xffffffffu, 0x736f616bu /* "soak" */, KV_KEY_ITERATE);
	if (it < 1 || it > KV_MAX_ITERATE_HANDLE) {
		/* another thread's iterator on the same condition is a documented refusal */
		if (it != KV_ERR_ITERATE_HANDLE_ALREADY_OPENED && it != KV_ERR_ITERATE_NO_AVAILABLE_HANDLE &&
		    !across_reset(ep))
			violation("KV thread %d: iterator open failed with 0x%x", t->id, it);
		return;
	}
	static _Thread_local uint8_t buf[KV_ITERATE_READ_BUFFER_SIZE];
	int rc;
	do {
		kv_iterate itr;
		memset(&itr, 0, sizeof(itr));
		itr.iterator = (uint8_t)it;
		itr.kv.value.value = buf;
		itr.kv.value.length = sizeof(buf);
		rc = kv_iterate_read(t->h, &itr);
		if (rc != KV_SUCCESS && rc != KV_ERR_ITERATE_READ_EOF)
			break;
		ckv_iter_keys(buf, itr.kv.value.length, iterated_key, seen);
	} while (rc == KV_SUCCESS);
	if (rc != KV_ERR_ITERATE_READ_EOF && (final || !across_reset(ep)))
		violation("KV thread %d: iterator read failed with 0x%x", t->id, rc);
	int crc = kv_iterate_close(t->h, (uint8_t)it);
	if (crc != KV_SUCCESS && (final || !across_reset(ep)))
		violation("KV thread %d: iterator close failed with 0x%x", t->id, crc);
	atomic_fetch_add(&kvs.iterations, 1);
}

static void *kv_main(void *arg)
{
	struct kv_thread *t = arg;
	uint8_t *rbuf = malloc(8192);
	while (!atomic_load(&stop)) {
		uint32_t k = (uint32_t)(rnd(&t->rng) % KV_KEYS);
		struct kv_key *key = &t->key[k];
		if (atomic_load_explicit(&key->busy, memory_order_acquire))
			continue;
		uint32_t id = key_id(t, k);
		uint64_t r = rnd(&t->rng) % 1000;
		unsigned ep = atomic_load(&epoch);
		if (r < 450 && atomic_load(&t->inflight) < KV_INFLIGHT) {
			struct kv_op *op = calloc(1, sizeof(*op));
			op->t = t;
			op->k = k;
			op->gen = (key->uncertain && key->alt_gen > key->gen ? key->alt_gen : key->gen) + 1;
			op->epoch = ep;
			uint32_t len = val_len(id, op->gen);
			op->val = malloc(len);
			fill_value(op->val, id, op->gen, len);
			make_key(op->keybuf, id);
			op->kv.key.key = op->keybuf;
			op->kv.key.length = 13;
			op->kv.value.value = op->val;
			op->kv.value.length = len;
			op->kv.param.async_cb = kv_store_done;
			op->kv.param.private_data = op;
			atomic_store(&key->busy, true);
			atomic_fetch_add(&t->inflight, 1);
			int rc = kv_store_async(t->h, &op->kv);
			if (rc != KV_SUCCESS) {
				atomic_fetch_sub(&t->inflight, 1);
				atomic_store(&key->busy, false);
				free(op->val);
				free(op);
				if (rc != KV_ERR_DD_NO_AVAILABLE_QUEUE && !across_reset(ep))
					violation("KV thread %d: kv_store_async refused with 0x%x", t->id, rc);
			}
		} else if (r < 850) {
			char kb[16];
			kv_pair kv;
			key_pair(&kv, kb, id, rbuf, 8192);
			int rc = kv_retrieve(t->h, &kv);
			kv_check(t, k, rc, rbuf, kv.value.actual_value_size, ep);
			atomic_fetch_add(&kvs.retrieves, 1);
		} else if (r < 950) {
			char kb[16];
			kv_pair kv;
			key_pair(&kv, kb, id, NULL, 0);
			int rc = kv_delete(t->h, &kv);
			if (rc == KV_SUCCESS || rc == KV_ERR_NOT_EXIST_KEY) {
				if (rc == KV_ERR_NOT_EXIST_KEY && key->state == K_PRESENT && !key->uncertain)
					violation("KV thread %d: key %u: delete found no key, but its store was "
						  "acknowledged", t->id, id);
				key->state = K_ABSENT;
				key->uncertain = false;
			} else {
				if (!across_reset(ep))
					violation("KV thread %d: delete of key %u failed with 0x%x", t->id, id, rc);
				atomic_fetch_add(&kvs.reset_errors, 1);
				if (!key->uncertain) {
					key->alt_state = key->state;
					key->alt_gen = key->gen;
				}
				key->state = K_ABSENT;
				key->uncertain = true;
			}
			atomic_fetch_add(&kvs.deletes, 1);
		} else if (r < 995) {
			char kb[16];
			kv_pair kv;
			key_pair(&kv, kb, id, NULL, 0);
			int rc = kv_exist(t->h, &kv);
			if ((rc == KV_SUCCESS || rc == KV_ERR_NOT_EXIST_KEY) && !key->uncertain &&
			    (rc == KV_SUCCESS) != (key->state == K_PRESENT))
				violation("KV thread %d: exist of key %u says %s", t->id, id,
					  rc == KV_SUCCESS ? "present, it was deleted" : "absent, it was stored");
			else if (rc != KV_SUCCESS && rc != KV_ERR_NOT_EXIST_KEY && !across_reset(ep))
				violation("KV thread %d: exist of key %u failed with 0x%x", t->id, id, rc);
			atomic_fetch_add(&kvs.exists, 1);
		} else {
			kv_iterate_check(t, false, NULL);
		}
	}
	while (atomic_load(&t->inflight))
		usleep(1000);
	free(rbuf);
	return NULL;
}

/* ---------------------------------------------------------------- faults */

static int inject_fatal(struct unvme_ctrlr *c)
{
	struct nvme_sqe cmd = { .opc = NVME_ADM_EMU_FAULT, .cdw10 = NVME_EMU_FAULT_FATAL };
	return unvme_admin(c, &cmd, NULL, 0, NULL);
}

static struct unvme_ctrlr *kv_ctrlr(uint64_t h)
{
	struct kv_dev *d;
	if (kv_enter_dev("soak", h, NULL, &d) != KV_SUCCESS)
		return NULL;
	struct unvme_ctrlr *c = d->ctrlr;
	kv_leave();
	return c;
}

/* Waits until the driver has reset c after the fault (its count passes was). */
static bool recovered(struct unvme_ctrlr *c, uint32_t was)
{
	for (int i = 0; i < 5000 && !atomic_load(&stop); i++) {
		if (unvme_ctrlr_reset_count(c) > was)
			return true;
		usleep(1000);
	}
	return unvme_ctrlr_reset_count(c) > was;
}

static void *injector(void *arg)
{
	uint64_t h = *(uint64_t *)arg;
	struct unvme_ctrlr *kc = h ? kv_ctrlr(h) : NULL;
	unsigned n = 0;
	while (!atomic_load(&stop)) {
		for (int i = 0; i < opt.reset_every_ms / 10 && !atomic_load(&stop); i++)
			usleep(10000);
		if (atomic_load(&stop))
			break;
		/* alternate between the block controller and the KV SDK's */
		struct unvme_ctrlr *c = (n++ % 2 || !kc) ? blk_ctrlr : kc;
		if (!c)
			continue;
		uint32_t was = unvme_ctrlr_reset_count(c);
		atomic_fetch_add(&epoch, 1);
		faults_injected++;
		int rc = inject_fatal(c);
		if (rc < 0)
			violation("the fault injection command failed: %d (%s)", rc, unvme_errmsg());
		else if (!recovered(c, was) && !atomic_load(&stop))
			violation("the controller was not reset within 5 s of a fatal status");
		/* commands completed just after the reset still count as caught by it */
		usleep(20000);
		atomic_fetch_add(&epoch, 1);
	}
	return NULL;
}

/* ---------------------------------------------------------------- main */

static int kv_up(const char *dir, uint64_t *h)
{
	char cfg[256];
	snprintf(cfg, sizeof(cfg), "%s/soak.json", dir);
	FILE *f = fopen(cfg, "w");
	if (!f)
		return -1;
	/* async submission on CPU 0 with its completion thread on CPU 1 where there is one */
	bool two = sysconf(_SC_NPROCESSORS_ONLN) >= 2;
	fprintf(f, "{ \"ssd_type\": \"kv\", \"slab_size\": 64, \"slab_alloc_policy\": \"posix\",\n"
		   "  \"log_level\": 1, \"log_file\": \"%s/kvsdk.log\",\n"
		   "  \"device_description\": { \"dev_id\": \"emu://soakkv?ns=kv:256M\"%s } }\n", dir,
		two ? ", \"core_mask\": \"1\", \"sync_mask\": \"0\", \"cq_thread_mask\": \"2\"" : "");
	fclose(f);
	int rc = kv_sdk_init(KV_SDK_INIT_FROM_JSON, cfg);
	if (rc != KV_SUCCESS) {
		fprintf(stderr, "soak: kv_sdk_init: 0x%x\n", rc);
		return -1;
	}
	int n = 0;
	uint64_t hs[NR_MAX_SSD];
	if (kv_get_device_handles(&n, hs) != KV_SUCCESS || n != 1)
		return -1;
	*h = hs[0];
	return 0;
}

static void write_json(double secs)
{
	FILE *f = opt.json ? fopen(opt.json, "w") : stdout;
	if (!f)
		return;
	fprintf(f, "{ \"seconds\": %.1f, \"block_threads\": %d, \"kv_threads\": %d, "
		   "\"faults_injected\": %lu, \"resets\": %lu,\n"
		   "  \"block\": { \"writes\": %lu, \"reads\": %lu, \"flushes\": %lu, \"blocks_checked\": "
		   "%lu, \"errors_in_resets\": %lu },\n"
		   "  \"kv\": { \"stores\": %lu, \"retrieves\": %lu, \"deletes\": %lu, \"exists\": %lu, "
		   "\"iterations\": %lu, \"iterated_keys\": %lu, \"values_checked\": %lu, "
		   "\"errors_in_resets\": %lu },\n"
		   "  \"violations\": %lu, \"first_violation\": \"%s\" }\n",
		secs, opt.block_threads, opt.kv_threads, faults_injected, blk_resets + kv_resets,
		atomic_load(&blk.writes), atomic_load(&blk.reads), atomic_load(&blk.flushes),
		atomic_load(&blk.blocks_checked), atomic_load(&blk.reset_errors),
		atomic_load(&kvs.stores), atomic_load(&kvs.retrieves), atomic_load(&kvs.deletes),
		atomic_load(&kvs.exists), atomic_load(&kvs.iterations), atomic_load(&kvs.iter_keys),
		atomic_load(&kvs.values_checked), atomic_load(&kvs.reset_errors),
		atomic_load(&violations), first_violation);
	if (f != stdout)
		fclose(f);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i += 2) { /* OPTION VALUE pairs */
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!v) {
			fprintf(stderr, "soak: %s needs a value\n", a);
			return 2;
		}
		if (!strcmp(a, "--seconds"))
			opt.seconds = atof(v);
		else if (!strcmp(a, "--block-threads"))
			opt.block_threads = atoi(v);
		else if (!strcmp(a, "--kv-threads"))
			opt.kv_threads = atoi(v);
		else if (!strcmp(a, "--reset-every-ms"))
			opt.reset_every_ms = atoi(v);
		else if (!strcmp(a, "--seed"))
			opt.seed = strtoull(v, NULL, 0);
		else if (!strcmp(a, "--json"))
			opt.json = v;
		else if (!strcmp(a, "--plant"))
			opt.plant = v;
		else {
			fprintf(stderr, "soak: unknown option %s\n", a);
			return 2;
		}
	}
	if (opt.block_threads < 1 || opt.block_threads > 16 || opt.kv_threads < 0 ||
	    opt.kv_threads > 8 || opt.seconds <= 0 || opt.reset_every_ms < 0) {
		fprintf(stderr, "soak: threads 1..16 block, 0..8 KV; seconds > 0; reset-every-ms >= 0\n");
		return 2;
	}
	setenv("UNVME_QUIET", "1", 1);
	char dir[] = "/tmp/unvme-soak-XXXXXX";
	if (!mkdtemp(dir))
		return 2;

	char uri[128];
	snprintf(uri, sizeof(uri), "emu://soakblk?ns=mem:%uM:512",
		 (unsigned)((uint64_t)opt.block_threads * EXTENTS * EXT_BLOCKS * BLK_LBA >> 20) + 1);
	struct unvme_ctrlr_opts co;
	unvme_ctrlr_opts_default(&co);
	co.num_io_queues = (uint32_t)opt.block_threads;
	if (unvme_ctrlr_open(uri, &co, &blk_ctrlr)) {
		fprintf(stderr, "soak: cannot open %s: %s\n", uri, unvme_errmsg());
		return 2;
	}
	struct blk_thread *bt = calloc((size_t)opt.block_threads, sizeof(*bt));
	for (int i = 0; i < opt.block_threads; i++) {
		bt[i].id = i;
		bt[i].ns = unvme_ctrlr_ns(blk_ctrlr, 1);
		bt[i].rng = opt.seed * 0x9e3779b97f4a7c15ull + (uint64_t)i + 1;
		struct unvme_qpair_opts qo = { .depth = BLK_QD * 2 };
		if (unvme_qpair_create(blk_ctrlr, &qo, &bt[i].qp)) {
			fprintf(stderr, "soak: queue pair: %s\n", unvme_errmsg());
			return 2;
		}
		for (uint32_t c = 0; c < BLK_QD; c++)
			bt[i].cmd[c].buf = unvme_dma_zalloc(EXT_BLOCKS * BLK_LBA, 4096);
	}
	uint64_t h = 0;
	if (opt.kv_threads && kv_up(dir, &h))
		return 2;
	struct kv_thread *kt = calloc((size_t)opt.kv_threads + 1, sizeof(*kt));
	for (int i = 0; i < opt.kv_threads; i++) {
		kt[i].id = i;
		kt[i].h = h;
		kt[i].rng = opt.seed * 0xbf58476d1ce4e5b9ull + (uint64_t)i + 1;
	}

	double t0 = now_s();
	pthread_t th[32], inj;
	int nth = 0;
	for (int i = 0; i < opt.block_threads; i++)
		pthread_create(&th[nth++], NULL, blk_main, &bt[i]);
	for (int i = 0; i < opt.kv_threads; i++)
		pthread_create(&th[nth++], NULL, kv_main, &kt[i]);
	if (opt.reset_every_ms)
		pthread_create(&inj, NULL, injector, &h);
	while (now_s() - t0 < opt.seconds && !atomic_load(&violations))
		usleep(50000);
	atomic_store(&stop, true);
	if (opt.reset_every_ms)
		pthread_join(inj, NULL);
	for (int i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
	blk_resets = unvme_ctrlr_reset_count(blk_ctrlr);
	if (h)
		kv_resets = unvme_ctrlr_reset_count(kv_ctrlr(h));

	/* Quiescent: every extent and key must hold what was last acknowledged. A queue pair
	 * whose last poll was before the final reset rebuilds itself here. */
	atomic_store(&stop, false);
	atomic_fetch_add(&epoch, 2);
	for (int i = 0; i < opt.block_threads; i++) {
		struct blk_thread *t = &bt[i];
		for (uint32_t e = 0; e < EXTENTS; e++) {
			struct blk_cmd *c = &t->cmd[0];
			c->t = t;
			c->ext = e;
			c->kind = 1;
			c->epoch = atomic_load(&epoch);
			c->used = true;
			t->inflight++;
			int rc;
			while ((rc = unvme_read(t->ns, t->qp, c->buf, ext_lba(t, e), EXT_BLOCKS, blk_done, c)) ==
			       -EAGAIN || rc == -EIO)
				unvme_qpair_poll(t->qp, 0);
			if (rc) {
				violation("final read of thread %d extent %u: %d", i, e, rc);
				break;
			}
			while (c->used)
				unvme_qpair_poll(t->qp, 0);
		}
	}
	uint32_t nkeys = (uint32_t)opt.kv_threads * KV_KEYS;
	uint8_t *seen = calloc(nkeys + 1, 1);
	uint8_t *rbuf = malloc(8192);
	if (opt.kv_threads) {
		kv_iterate_check(&kt[0], true, seen);
		for (int i = 0; i < opt.kv_threads; i++) {
			for (uint32_t k = 0; k < KV_KEYS; k++) {
				struct kv_thread *t = &kt[i];
				char kb[16];
				kv_pair kv;
				key_pair(&kv, kb, key_id(t, k), rbuf, 8192);
				int rc = kv_retrieve(t->h, &kv);
				kv_check(t, k, rc, rbuf, kv.value.actual_value_size, atomic_load(&epoch));
				if ((rc == KV_SUCCESS) != (seen[key_id(t, k)] == 1))
					violation("key %u is %s but the final iterator %s it", key_id(t, k),
						  rc == KV_SUCCESS ? "present" : "absent",
						  seen[key_id(t, k)] ? "returned" : "missed");
			}
		}
	}
	double secs = now_s() - t0;
	write_json(secs);
	fprintf(stderr, "soak: %.0f s, %lu faults injected, %lu resets, block %lu writes %lu reads "
			"%lu flushes, KV %lu stores %lu retrieves %lu deletes %lu iterations, %lu errors "
			"in resets, %lu violations\n", secs, faults_injected, blk_resets + kv_resets,
		atomic_load(&blk.writes), atomic_load(&blk.reads), atomic_load(&blk.flushes),
		atomic_load(&kvs.stores), atomic_load(&kvs.retrieves), atomic_load(&kvs.deletes),
		atomic_load(&kvs.iterations), atomic_load(&blk.reset_errors) + atomic_load(&kvs.reset_errors),
		atomic_load(&violations));

	free(seen);
	free(rbuf);
	if (opt.kv_threads)
		kv_sdk_finalize();
	for (int i = 0; i < opt.block_threads; i++) {
		for (uint32_t c = 0; c < BLK_QD; c++)
			unvme_dma_free(bt[i].cmd[c].buf);
		unvme_qpair_destroy(bt[i].qp);
	}
	unvme_ctrlr_close(blk_ctrlr);
	free(bt);
	free(kt);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "soak: cannot remove %s\n", dir);
	bool resets_ok = !opt.reset_every_ms || faults_injected == 0 ||
			 blk_resets + kv_resets >= faults_injected;
	if (!resets_ok)
		fprintf(stderr, "soak: %lu faults injected but only %lu resets\n", faults_injected,
			blk_resets + kv_resets);
	return atomic_load(&violations) || !resets_ok ? 1 : 0;
}
