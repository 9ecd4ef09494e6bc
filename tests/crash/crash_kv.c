/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Writer and checker of the crash harness for a key-value namespace (tests/crash/crash.py,
 * components "kv-sync", "kv-async" and "kv-std").
 *
 *   crash_kv write --api sdk-sync|sdk-async|std --dev DEVID --log FILE --round R --seed S
 *                  [--keys N] [--max-value B] [--qd N] [--del-pct P] [--flush-every N]
 *                  [--vwc 0|1 | --no-vwc] [--ops N] [--format-per-mille N]
 *                  [--iterdel-per-mille N] [--big-pct P]
 *   crash_kv check --api sdk|std --dev DEVID --log FILE --state FILE [--keys N]
 *                  [--powerloss] [--plp] [--damaged-keys K,K,...]
 *
 * sdk-sync and sdk-async go through the KV SDK (kv_apis.h: the Samsung vendor protocol, sync
 * calls on a sync core, async calls completed by a completion thread); std goes through the
 * driver with the standard NVMe KV command set (Store, Retrieve, Delete, List, Flush). Keys
 * are "crk-" and 12 digits (16 bytes, so the standard set carries them too); each value
 * starts with a header (magic, key, sequence number, length, CRC-32C of the value).
 *
 * The writer stores new versions of random keys and deletes some, never two operations on
 * one key at once, and now and then formats the namespace (with nothing else in flight); the
 * std writer also flushes every flush-every operations. Value sizes are uniform up to
 * max-value, except big-pct percent that take max-value whole (the largest stores). With
 * iterdel-per-mille, the SDK writer now and then deletes every key through a key-and-delete
 * iterator (nothing else in flight): each key's delete is logged before the first read and
 * acknowledged by the read that returned it. The checker
 * retrieves every key and holds it against the log and the state file ("key seq" per present
 * key at the previous check): the newest version the promise covers (or the deletion) must
 * be there, or one issued after it. An older version is a lost store, a deleted key that is
 * back is resurrected, a value whose checksum fails is corrupt: the device has checksums and
 * must never return one. Keys whose records the harness damaged may hold any version or none.
 * An iterator (std: List) must return exactly the keys that exist, each once. A format
 * still in flight at the crash must be whole: every key gone, or none. --plp: the device
 * promises every acknowledged operation across a power cut (a KV SSD's power-loss
 * protection), so --powerloss holds all of them, not only those a flush covered.
 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crash_common.h"
#include "unvme/kv/kv_apis.h"
#include "unvme/unvme.h"

#define VAL_MAGIC 0x31565243u /* "CRV1" */
#define KEY_LEN 16u
#define VAL_MIN 24u

struct val_hdr {
	uint32_t magic;
	uint32_t key;
	uint64_t seq;
	uint32_t len;
	uint32_t crc;  /* CRC-32C of the whole value with this field 0 */
};

static void make_key(char *k, uint64_t id)
{
	char tmp[32];
	snprintf(tmp, sizeof(tmp), "crk-%012" PRIu64, id % UINT64_C(1000000000000));
	memcpy(k, tmp, KEY_LEN);
}

static bool parse_key(const uint8_t *k, size_t len, uint64_t *id)
{
	if (len != KEY_LEN || memcmp(k, "crk-", 4))
		return false;
	uint64_t v = 0;
	for (unsigned i = 4; i < KEY_LEN; i++) {
		if (k[i] < '0' || k[i] > '9')
			return false;
		v = v * 10 + (k[i] - '0');
	}
	*id = v;
	return true;
}

static void make_value(uint8_t *v, uint32_t len, uint64_t key, uint64_t seq)
{
	struct val_hdr h = { .magic = VAL_MAGIC, .key = (uint32_t)key, .seq = seq, .len = len };
	cfill(v + sizeof(h), len - sizeof(h), seq * 0x9e3779b97f4a7c15ull ^ key);
	memcpy(v, &h, sizeof(h));
	h.crc = ccrc(v, len);
	memcpy(v, &h, sizeof(h));
}

/* The version a value holds, or 0 with *bad set when it is not a value this harness wrote
 * for this key. */
static uint64_t value_version(uint8_t *v, uint32_t len, uint64_t key, bool *bad)
{
	struct val_hdr h;
	*bad = true;
	if (len < sizeof(h))
		return 0;
	memcpy(&h, v, sizeof(h));
	memset(v + offsetof(struct val_hdr, crc), 0, 4);
	if (h.magic != VAL_MAGIC || h.key != (uint32_t)key || h.len != len || ccrc(v, len) != h.crc)
		return 0;
	*bad = false;
	return h.seq;
}

/* The directory of path (for the SDK's configuration and log files). */
static void dir_of(const char *path, char *out, size_t len)
{
	snprintf(out, len, "%s", path);
	char *slash = strrchr(out, '/');
	if (slash)
		*slash = 0;
	else
		snprintf(out, len, ".");
}

static int fail(const char *what, int rc)
{
	fprintf(stderr, "crash_kv: %s failed: 0x%x %s\n", what, (unsigned)rc,
		rc < 0 ? unvme_errmsg() : "");
	return 2;
}

/* ---- the two ways to reach the device ---- */

struct kvdev {
	bool std;
	/* SDK */
	uint64_t handle;
	/* driver, standard command set */
	struct unvme_ctrlr *c;
	struct unvme_qpair *qp;
	uint32_t nsid;
	uint8_t *dma;
	size_t dma_len;
};

static int sdk_up(struct kvdev *d, const char *dev, const char *dir, bool async, uint32_t qd)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/kvsdk-%d.json", dir, (int)getpid());
	FILE *f = fopen(path, "w");
	if (!f)
		return fail("config file", -errno);
	/* async: the caller's core 0 submits, a completion thread on core 1 calls back */
	fprintf(f, "{ \"ssd_type\": \"kv\", \"slab_size\": 64, \"slab_alloc_policy\": \"posix\",\n"
		   "  \"log_level\": 1, \"log_file\": \"%s/kvsdk.log\",\n"
		   "  \"device_description\": { \"dev_id\": \"%s\", \"core_mask\": \"1\",\n"
		   "    \"sync_mask\": \"%s\", \"cq_thread_mask\": \"%s\", \"queue_depth\": %u } }\n",
		dir, dev, async ? "0" : "1", async ? "2" : "0", qd < 16 ? 16 : qd * 2);
	fclose(f);
	int rc = kv_sdk_init(KV_SDK_INIT_FROM_JSON, path);
	unlink(path);
	if (rc != KV_SUCCESS)
		return fail("kv_sdk_init", rc);
	int n = 0;
	uint64_t h[NR_MAX_SSD];
	if (kv_get_device_handles(&n, h) != KV_SUCCESS || n != 1)
		return fail("kv_get_device_handles", n);
	d->handle = h[0];
	return 0;
}

static int std_up(struct kvdev *d, const char *dev, size_t maxv)
{
	int rc = unvme_ctrlr_open(dev, NULL, &d->c);
	if (rc)
		return fail("open", rc);
	for (uint32_t ns = unvme_ctrlr_first_nsid(d->c); ns; ns = unvme_ctrlr_next_nsid(d->c, ns))
		if (unvme_ns_csi(unvme_ctrlr_ns(d->c, ns)) == NVME_CSI_KV)
			d->nsid = ns;
	if (!d->nsid)
		return fail("no KV namespace", -ENODEV);
	if ((rc = unvme_qpair_create(d->c, NULL, &d->qp)) != 0)
		return fail("queue pair", rc);
	d->dma_len = maxv + 4096;
	d->dma = unvme_dma_alloc(d->dma_len, 4096);
	return d->dma ? 0 : fail("dma", -ENOMEM);
}

static void std_key(struct nvme_sqe *c, const char *key)
{
	memcpy(&c->cdw2, key, 4);
	memcpy(&c->cdw3, key + 4, 4);
	memcpy(&c->cdw14, key + 8, 4);
	memcpy(&c->cdw15, key + 12, 4);
	c->cdw11 = KEY_LEN;
}

/* Sets the volatile write cache (saved, so the SDK's own open of the device keeps it). */
static int set_vwc(const char *dev, int vwc, bool save)
{
	struct unvme_ctrlr *c;
	int rc = unvme_ctrlr_open(dev, NULL, &c);
	if (rc)
		return fail("open", rc);
	rc = unvme_set_features(c, NVME_FEAT_VOLATILE_WC, 0, (uint32_t)vwc, save, NULL);
	unvme_ctrlr_close(c);
	return rc ? fail("set write cache", rc) : 0;
}

/* ---- writer ---- */

struct slot {
	kv_pair kv;
	char key[KEY_LEN];
	uint8_t *val;
	uint64_t seq;
	uint64_t keyid;
	_Atomic int state; /* 0 free, 1 in flight, 2 done, 3 failed */
};

/* The SDK calls back with result = completion dword 0 and status = the kv_result (kv_req.h,
 * as the original did): a store or delete succeeded when status says so. Judging by result,
 * which is 0 for both, logged every failed operation as acknowledged. */
static void async_done(kv_pair *kv, unsigned int result, unsigned int status)
{
	struct slot *s = kv->param.private_data;
	(void)result;
	if (status != KV_SUCCESS) {
		fprintf(stderr, "crash_kv: operation %" PRIu64 " failed: 0x%x\n", s->seq, status);
		s->state = 3;
		return;
	}
	ack_log("A %" PRIu64, s->seq);
	s->state = 2;
}

/* Waits for every slot to finish: nothing in flight. 1 if one failed. */
static int drain(struct slot *slots, uint32_t qd, uint8_t *busy)
{
	for (uint32_t i = 0; i < qd; i++) {
		while (slots[i].state == 1)
			sched_yield();
		if (slots[i].state == 3)
			return 1;
		if (slots[i].state == 2)
			busy[slots[i].keyid] = 0;
		slots[i].state = 0;
	}
	return 0;
}

/* Deletes every key through a key-and-delete iterator (keyspace 0, no prefix): each key that
 * exists gets a delete logged before the first read; the read that returns it acknowledges
 * it, and the iterator must return exactly those keys. */
static int delete_all_iterating(struct kvdev *d, uint64_t *seq, uint8_t *exists, uint64_t nkeys)
{
	uint64_t *del_seq = calloc(nkeys, sizeof(*del_seq));
	if (!del_seq)
		return fail("malloc", -ENOMEM);
	for (uint64_t k = 0; k < nkeys; k++)
		if (exists[k]) {
			del_seq[k] = ++*seq;
			ack_log("D %" PRIu64 " %" PRIu64, del_seq[k], k);
		}
	uint32_t it = kv_iterate_open(d->handle, KV_KEYSPACE_IODATA, 0, 0, KV_KEY_ITERATE_WITH_DELETE);
	if (it < 1 || it > KV_MAX_ITERATE_HANDLE) {
		free(del_seq);
		return fail("kv_iterate_open (with delete)", (int)it);
	}
	uint8_t *buf = malloc(KV_ITERATE_READ_BUFFER_SIZE);
	int rc = buf ? KV_SUCCESS : KV_ERR_SDK_INVALID_PARAM, bad = 0;
	while (rc == KV_SUCCESS) {
		kv_iterate itr;
		memset(&itr, 0, sizeof(itr));
		itr.iterator = it;
		itr.kv.value.value = buf;
		itr.kv.value.length = KV_ITERATE_READ_BUFFER_SIZE;
		rc = kv_iterate_read(d->handle, &itr);
		if (rc != KV_SUCCESS && rc != KV_ERR_ITERATE_READ_EOF)
			break;
		uint32_t count = 0;
		size_t at = 4, len = itr.kv.value.length;
		if (len >= 4)
			memcpy(&count, buf, 4);
		for (uint32_t i = 0; i < count && at + 4 <= len; i++) {
			uint32_t kl;
			memcpy(&kl, buf + at, 4);
			uint64_t id;
			if (kl > len - at - 4 || !parse_key(buf + at + 4, kl, &id) || id >= nkeys ||
			    !del_seq[id]) {
				bad++;
				break;
			}
			ack_log("A %" PRIu64, del_seq[id]);
			del_seq[id] = 0;
			exists[id] = 0;
			at += 4 + (size_t)kl;
		}
	}
	free(buf);
	int crc = kv_iterate_close(d->handle, (uint8_t)it);
	for (uint64_t k = 0; k < nkeys; k++)
		bad += del_seq[k] != 0;
	free(del_seq);
	if (rc != KV_ERR_ITERATE_READ_EOF)
		return fail("kv_iterate_read (with delete)", rc);
	if (bad) {
		fprintf(stderr, "crash_kv: the key-and-delete iterator did not return exactly the "
			"keys that existed (%d wrong or missing)\n", bad);
		return 1;
	}
	return crc == KV_SUCCESS ? 0 : fail("kv_iterate_close", crc);
}

static int cmd_write(struct copt *o)
{
	const char *api = copt_str(o, "api", "sdk-sync"), *dev = copt_str(o, "dev", NULL);
	const char *log = copt_str(o, "log", NULL);
	if (!dev || !log)
		return fprintf(stderr, "crash_kv write: --dev and --log are required\n"), 2;
	bool std = !strcmp(api, "std"), async = !strcmp(api, "sdk-async");
	uint64_t round = copt_u64(o, "round", 0), rng = copt_u64(o, "seed", 1);
	uint64_t nkeys = copt_u64(o, "keys", 256), maxv = copt_u64(o, "max-value", 8192);
	uint64_t del_pct = copt_u64(o, "del-pct", 15), max_ops = copt_u64(o, "ops", 0);
	uint64_t format_pm = copt_u64(o, "format-per-mille", 2);
	uint64_t flush_every = copt_u64(o, "flush-every", std ? 8 : 0);
	uint32_t qd = async ? (uint32_t)copt_u64(o, "qd", 8) : 1;
	int vwc = (int)copt_u64(o, "vwc", 1);
	bool keep_vwc = copt_flag(o, "no-vwc");
	uint64_t iterdel_pm = copt_u64(o, "iterdel-per-mille", 0), big_pct = copt_u64(o, "big-pct", 0);
	if (maxv < VAL_MIN || maxv > KV_MAX_IO_VALUE_LEN || nkeys < qd * 2 || qd > 64)
		return fprintf(stderr, "crash_kv write: bad --max-value, --keys or --qd\n"), 2;

	ack_log_open(log);
	char dir[4096];
	dir_of(log, dir, sizeof(dir));
	struct kvdev d = { .std = std };
	int rc;
	if (std) {
		if ((rc = std_up(&d, dev, maxv)) != 0)
			return rc;
		if (!keep_vwc &&
		    (rc = unvme_set_features(d.c, NVME_FEAT_VOLATILE_WC, 0, (uint32_t)vwc, false, NULL)))
			return fail("set write cache", rc);
	} else {
		if ((!keep_vwc && (rc = set_vwc(dev, vwc, true)) != 0) ||
		    (rc = sdk_up(&d, dev, dir, async, qd)) != 0)
			return rc;
	}
	ack_log("V %d", keep_vwc ? 1 : vwc);

	/* which keys exist (as far as the writer's acknowledged operations tell) and which are
	 * busy; the checker's state file says what the previous rounds left */
	uint8_t *exists = calloc(nkeys, 1), *busy = calloc(nkeys, 1);
	const char *state = copt_str(o, "state", NULL);
	FILE *sf = state ? fopen(state, "r") : NULL;
	if (sf) {
		uint64_t k, seq;
		while (fscanf(sf, "%" SCNu64 " %" SCNu64, &k, &seq) == 2)
			if (k < nkeys)
				exists[k] = 1;
		fclose(sf);
	}
	struct slot *slots = calloc(qd, sizeof(*slots));
	for (uint32_t i = 0; i < qd; i++)
		if (!(slots[i].val = malloc(maxv)))
			return fail("malloc", -ENOMEM);
	printf("READY\n");
	fflush(stdout);

	uint64_t seq = round << 32, flush_id = round << 32;
	for (uint64_t op = 1; !max_ops || op <= max_ops; op++) {
		if (!std && iterdel_pm && crng_next(&rng) % 1000 < iterdel_pm) {
			if (drain(slots, qd, busy) || delete_all_iterating(&d, &seq, exists, nkeys))
				return 1;
			continue;
		}
		if (std && flush_every && op % flush_every == 0) {
			struct nvme_sqe c = { .opc = NVME_KV_FLUSH, .nsid = d.nsid };
			ack_log("F %" PRIu64, ++flush_id);
			if ((rc = unvme_qpair_cmd_sync(d.qp, &c, NULL, 0, NULL)) != 0)
				return fail("flush", rc);
			ack_log("G %" PRIu64, flush_id);
			continue;
		}
		if (crng_next(&rng) % 1000 < format_pm) {
			/* nothing may be in flight across a format */
			if (drain(slots, qd, busy))
				return 1;
			ack_log("M %" PRIu64, ++seq);
			rc = std ? unvme_format(d.c, d.nsid, 0, 0) : kv_format_device(d.handle, 0);
			if (rc)
				return fail("format", rc);
			ack_log("A %" PRIu64, seq);
			memset(exists, 0, nkeys);
			continue;
		}
		/* a free slot (async: reap finished ones) */
		struct slot *s = NULL;
		while (!s) {
			for (uint32_t i = 0; i < qd && !s; i++) {
				int st = slots[i].state;
				if (st == 3)
					return 1;
				if (st == 2) {
					busy[slots[i].keyid] = 0;
					slots[i].state = 0;
				}
				if (slots[i].state == 0)
					s = &slots[i];
			}
			if (!s)
				sched_yield();
		}
		uint64_t k;
		do
			k = crng_next(&rng) % nkeys;
		while (busy[k]);
		bool del = exists[k] && crng_next(&rng) % 100 < del_pct;
		uint32_t len = VAL_MIN + (uint32_t)(crng_next(&rng) % (maxv - VAL_MIN + 1));
		if (big_pct && crng_next(&rng) % 100 < big_pct)
			len = (uint32_t)maxv;
		s->seq = ++seq;
		s->keyid = k;
		make_key(s->key, k);
		if (del) {
			ack_log("D %" PRIu64 " %" PRIu64, seq, k);
		} else {
			make_value(s->val, len, k, seq);
			ack_log("S %" PRIu64 " %" PRIu64 " %u", seq, k, len);
		}
		exists[k] = !del;
		if (std) {
			struct nvme_sqe c = { .opc = del ? NVME_KV_DELETE : NVME_KV_STORE, .nsid = d.nsid };
			std_key(&c, s->key);
			if (!del) {
				c.cdw10 = len;
				memcpy(d.dma, s->val, len);
			}
			rc = unvme_qpair_cmd_sync(d.qp, &c, del ? NULL : d.dma, del ? 0 : len, NULL);
			if (rc)
				return fail(del ? "delete" : "store", rc);
			ack_log("A %" PRIu64, seq);
			continue;
		}
		memset(&s->kv, 0, sizeof(s->kv));
		s->kv.key.key = s->key;
		s->kv.key.length = KEY_LEN;
		if (!del) {
			s->kv.value.value = s->val;
			s->kv.value.length = len;
		}
		if (!async) {
			rc = del ? kv_delete(d.handle, &s->kv) : kv_store(d.handle, &s->kv);
			if (rc != KV_SUCCESS)
				return fail(del ? "kv_delete" : "kv_store", rc);
			ack_log("A %" PRIu64, seq);
			continue;
		}
		busy[k] = 1;
		s->state = 1;
		s->kv.param.async_cb = async_done;
		s->kv.param.private_data = s;
		rc = del ? kv_delete_async(d.handle, &s->kv) : kv_store_async(d.handle, &s->kv);
		if (rc != KV_SUCCESS)
			return fail(del ? "kv_delete_async" : "kv_store_async", rc);
	}
	for (uint32_t i = 0; i < qd; i++)
		while (slots[i].state == 1)
			sched_yield();
	printf("DONE\n");
	if (std)
		unvme_ctrlr_close(d.c);
	else
		kv_sdk_finalize();
	return 0;
}

/* ---- checker ---- */

struct key_expect {
	uint64_t base;       /* newest promised version, 0: absent */
	uint64_t base_op;    /* the operation that left it (a delete leaves base 0) */
	bool later;          /* an operation on the key was issued after base_op */
	bool later_delete;   /* ... and one of them was a delete */
	bool damaged;
	bool present;        /* found by retrieve */
	uint32_t iter_seen;  /* times the iterator returned it */
};

/* Retrieves key id: 0 found (*len bytes in buf), 1 absent, <0 or a status otherwise. */
static int get_value(struct kvdev *d, uint64_t id, uint8_t *buf, uint32_t cap, uint32_t *len)
{
	char key[KEY_LEN];
	make_key(key, id);
	if (d->std) {
		struct nvme_sqe c = { .opc = NVME_KV_RETRIEVE, .nsid = d->nsid, .cdw10 = cap };
		std_key(&c, key);
		struct nvme_cqe cpl;
		int rc = unvme_qpair_cmd_sync(d->qp, &c, d->dma, cap, &cpl);
		if (rc == NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_KV_KEY_NOT_EXIST))
			return 1;
		if (rc)
			return rc;
		*len = cpl.dw0;
		memcpy(buf, d->dma, cpl.dw0 < cap ? cpl.dw0 : cap);
		return 0;
	}
	kv_pair kv;
	memset(&kv, 0, sizeof(kv));
	kv.key.key = key;
	kv.key.length = KEY_LEN;
	kv.value.value = buf;
	kv.value.length = cap;
	int rc = kv_retrieve(d->handle, &kv);
	if (rc == KV_ERR_NOT_EXIST_KEY)
		return 1;
	if (rc != KV_SUCCESS)
		return rc;
	*len = kv.value.actual_value_size;
	int ex = kv_exist(d->handle, &kv);
	return ex == KV_SUCCESS ? 0 : -1000 - ex;
}

/* Lists every key once through an iterator (SDK) or List (std). */

struct iter_seen {
	struct cverdict *v;
	struct key_expect *ex;
	uint64_t nkeys;
};

static void count_iterated(const uint8_t *key, uint32_t klen, void *arg)
{
	struct iter_seen *s = arg;
	uint64_t id;
	s->v->iter_keys++;
	if (!parse_key(key, klen, &id) || id >= s->nkeys)
		cverdict_violation(s->v, "the iterator returned a key this test never wrote");
	else
		s->ex[id].iter_seen++;
}

static int list_keys(struct kvdev *d, struct key_expect *ex, uint64_t nkeys, struct cverdict *v)
{
	if (d->std) {
		/* List returns keys at or after the given one: page through them */
		char from[KEY_LEN];
		uint32_t from_len = 0;
		for (;;) {
			struct nvme_sqe c = { .opc = NVME_KV_LIST, .nsid = d->nsid, .cdw10 = 4096 };
			std_key(&c, from);
			c.cdw11 = from_len;
			struct nvme_cqe cpl;
			int rc = unvme_qpair_cmd_sync(d->qp, &c, d->dma, 4096, &cpl);
			if (rc)
				return fail("List", rc);
			uint32_t count;
			memcpy(&count, d->dma, 4);
			size_t at = 4;
			uint32_t fresh = 0;
			for (uint32_t i = 0; i < count; i++) {
				uint16_t kl;
				memcpy(&kl, d->dma + at, 2);
				const uint8_t *k = d->dma + at + 2;
				at += (2 + kl + 3) & ~3u;
				/* the first key of a later page is the last of the one before */
				if (from_len && kl == from_len && !memcmp(k, from, kl))
					continue;
				uint64_t id;
				v->iter_keys++;
				fresh++;
				if (!parse_key(k, kl, &id) || id >= nkeys)
					cverdict_violation(v, "List returned a key this test never wrote");
				else
					ex[id].iter_seen++;
				memcpy(from, k, kl < KEY_LEN ? kl : KEY_LEN);
				from_len = kl;
			}
			if (!fresh)
				return 0;
		}
	}
	uint32_t it = kv_iterate_open(d->handle, KV_KEYSPACE_IODATA, 0, 0, KV_KEY_ITERATE);
	if (it < 1 || it > KV_MAX_ITERATE_HANDLE)
		return fail("kv_iterate_open", (int)it);
	uint8_t *buf = malloc(KV_ITERATE_READ_BUFFER_SIZE);
	int rc;
	do {
		kv_iterate itr;
		memset(&itr, 0, sizeof(itr));
		itr.iterator = it;
		itr.kv.key.length = 0;
		itr.kv.value.value = buf;
		itr.kv.value.length = KV_ITERATE_READ_BUFFER_SIZE;
		rc = kv_iterate_read(d->handle, &itr);
		if (rc != KV_SUCCESS && rc != KV_ERR_ITERATE_READ_EOF)
			break;
		struct iter_seen seen = { v, ex, nkeys };
		ckv_iter_keys(buf, itr.kv.value.length, count_iterated, &seen);
	} while (rc == KV_SUCCESS);
	free(buf);
	int crc = kv_iterate_close(d->handle, (uint8_t)it);
	if (rc != KV_ERR_ITERATE_READ_EOF)
		return fail("kv_iterate_read", rc);
	return crc == KV_SUCCESS ? 0 : fail("kv_iterate_close", crc);
}

static int cmd_check(struct copt *o)
{
	const char *api = copt_str(o, "api", "sdk"), *dev = copt_str(o, "dev", NULL);
	const char *log = copt_str(o, "log", NULL), *state = copt_str(o, "state", NULL);
	if (!dev || !log || !state)
		return fprintf(stderr, "crash_kv check: --dev, --log and --state are required\n"), 2;
	uint64_t nkeys = copt_u64(o, "keys", 256);
	bool std = !strcmp(api, "std");
	struct cverdict v = { .component = std ? "kv-std" : "kv-sdk", .powerloss = copt_flag(o, "powerloss") };
	struct key_expect *ex = calloc(nkeys, sizeof(*ex));
	FILE *sf = fopen(state, "r");
	if (sf) {
		uint64_t k, seq;
		while (fscanf(sf, "%" SCNu64 " %" SCNu64, &k, &seq) == 2)
			if (k < nkeys)
				ex[k].base = ex[k].base_op = seq;
		fclose(sf);
	}
	for (const char *p = copt_str(o, "damaged-keys", NULL); p && *p;) {
		char *end;
		uint64_t k = strtoull(p, &end, 10);
		if (k < nkeys)
			ex[k].damaged = true;
		p = *end ? end + 1 : end;
	}
	struct cops ops;
	if (cops_build(log, &ops) != 0)
		return 2;
	if (copt_flag(o, "plp"))
		cops_acked_durable(&ops);
	/* a format still in flight at the crash: the last operation of the log */
	bool format_open = ops.n && ops.v[ops.n - 1].kind == CL_FORMAT &&
			   !(v.powerloss ? ops.v[ops.n - 1].durable : ops.v[ops.n - 1].acked);
	for (size_t i = 0; i < ops.n; i++) {
		struct cop *op = &ops.v[i];
		v.ops++;
		v.acked += op->acked;
		v.durable += op->durable;
		bool promised = v.powerloss ? op->durable : op->acked;
		if (op->kind == CL_FORMAT) {
			for (uint64_t k = 0; k < nkeys; k++) {
				if (promised) {
					ex[k] = (struct key_expect){ .base_op = op->seq, .damaged = ex[k].damaged };
				} else {
					ex[k].later = true;
					ex[k].later_delete = true;
				}
			}
			continue;
		}
		if (op->a >= nkeys)
			continue;
		struct key_expect *e = &ex[op->a];
		uint64_t content = op->kind == CL_DELETE ? 0 : op->seq;
		if (promised) {
			e->base = content;
			e->base_op = op->seq;
			e->later = e->later_delete = false;
		} else {
			e->later = true;
			e->later_delete |= op->kind == CL_DELETE;
		}
	}
	v.flushes = ops.flushes_acked;

	char dir[4096];
	dir_of(state, dir, sizeof(dir));
	struct kvdev d = { .std = std };
	int rc = std ? std_up(&d, dev, KV_MAX_IO_VALUE_LEN) : sdk_up(&d, dev, dir, false, 1);
	if (rc) {
		cverdict_violation(&v, "the device does not open (see stderr and kvsdk.log)");
		return cverdict_print(&v, NULL);
	}
	uint32_t cap = KV_MAX_IO_VALUE_LEN;
	uint64_t kept = 0, erased = 0; /* with a format in flight: keys it left, keys it took */
	uint8_t *buf = malloc(cap);
	char tmp[4200];
	FILE *out = cstate_create(state, tmp, sizeof(tmp));
	if (!buf || !out)
		return fail("memory", -ENOMEM);
	for (uint64_t k = 0; k < nkeys; k++) {
		struct key_expect *e = &ex[k];
		uint32_t len = 0;
		rc = get_value(&d, k, buf, cap, &len);
		v.checked++;
		if (rc < 0 || rc > 1) {
			v.corrupt++;
			cverdict_violation(&v, "key %" PRIu64 ": retrieve/exist failed with 0x%x", k, (unsigned)rc);
			continue;
		}
		uint64_t found = 0;
		if (rc == 0) {
			bool bad;
			found = value_version(buf, len, k, &bad);
			if (bad) {
				v.corrupt++;
				cverdict_violation(&v, "key %" PRIu64 ": the device returned a corrupt "
						   "value (%u bytes)", k, len);
				continue;
			}
			e->present = true;
		}
		bool later = false;
		if (found != e->base && e->later) {
			const struct cop *op = found ? cops_find(&ops, found) : NULL;
			later = found ? op && op->kind == CL_STORE && op->a == k && op->seq > e->base_op
				      : e->later_delete;
		}
		bool ok = found == e->base || later;
		if (format_open && e->base && !e->damaged) {
			kept += found != 0;
			erased += found == 0;
		}
		if (ok) {
			if (later)
				v.inflight++;
			else
				v.intact++;
		} else if (e->damaged) {
			v.damaged++;
		} else if (found == 0) {
			v.lost++;
			cverdict_violation(&v, "key %" PRIu64 ": acknowledged version %" PRIu64 " lost "
					   "(the key is gone)", k, e->base);
		} else if (e->base == 0) {
			v.resurrected++;
			cverdict_violation(&v, "key %" PRIu64 ": deleted, but version %" PRIu64
					   " is back", k, found);
		} else if (found < e->base_op) {
			v.lost++;
			cverdict_violation(&v, "key %" PRIu64 ": acknowledged version %" PRIu64
					   " lost, found the older %" PRIu64, k, e->base, found);
		} else {
			v.corrupt++;
			cverdict_violation(&v, "key %" PRIu64 ": version %" PRIu64 " was never stored "
					   "(expected %" PRIu64 ")", k, found, e->base);
		}
		if (found)
			fprintf(out, "%" PRIu64 " %" PRIu64 "\n", k, found);
	}
	if (kept && erased)
		cverdict_violation(&v, "a format in flight at the crash was half done: %" PRIu64
				   " keys gone, %" PRIu64 " still there", erased, kept);
	if (list_keys(&d, ex, nkeys, &v) != 0)
		cverdict_violation(&v, "listing the keys failed");
	for (uint64_t k = 0; k < nkeys; k++) {
		if (ex[k].iter_seen != (ex[k].present ? 1u : 0u))
			cverdict_violation(&v, "key %" PRIu64 " %s but the iterator returned it %u "
					   "times", k, ex[k].present ? "exists" : "does not exist",
					   ex[k].iter_seen);
	}
	if (cstate_commit(out, tmp, state) != 0)
		return fail("state file", -EIO);
	free(buf);
	if (std)
		unvme_ctrlr_close(d.c);
	else
		kv_sdk_finalize();
	return cverdict_print(&v, NULL);
}

int main(int argc, char **argv)
{
	return crash_main(argc, argv, cmd_write, cmd_check, "crash_kv write|check --dev DEVID --log FILE ...");
}
