/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The SDK's lifetime: kv_sdk_init (reference counted), kv_sdk_finalize, and the guard every API
 * call passes through. The guard is a reader lock: calls run concurrently, finalize takes the
 * writer side only to unpublish the state, then waits for the async commands already accepted
 * (their callbacks still run) before it stops the completion threads and closes the devices.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "lib/common/clock.h"
#include "lib/common/env.h"
#include "kv_cache.h"
#include "kv_internal.h"
#include "kv_slab.h"

static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
/* glibc's default rwlock prefers readers, so a callback's API call (a nested read lock on a
 * completion thread) cannot deadlock against a waiting finalize. */
static pthread_rwlock_t state_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct kv_state *g_state;
static uint32_t g_generation;
static _Thread_local bool in_cq_thread;
/* API calls the thread is inside: a callback run inline (cache hit, a device without async
 * queues) must not finalize, since its caller holds the guard. */
static _Thread_local int call_depth;
/* polls of ownerless queues the thread is inside (it runs their callbacks) */
static _Thread_local int poll_depth;

bool kv_in_cq_thread(void)
{
	return in_cq_thread || poll_depth > 0;
}

void kv_poll_enter(void)
{
	poll_depth++;
}

void kv_poll_leave(void)
{
	poll_depth--;
}

void kv_mark_cq_thread(void)
{
	in_cq_thread = true;
}

struct kv_state *kv_enter(const char *fn)
{
	kv_errmsg_clear();
	pthread_rwlock_rdlock(&state_lock);
	if (!g_state) {
		pthread_rwlock_unlock(&state_lock);
		kv_err("%s: the SDK is not initialized (kv_sdk_init not called, or finalized)", fn);
		return NULL;
	}
	call_depth++;
	return g_state;
}

void kv_leave(void)
{
	call_depth--;
	pthread_rwlock_unlock(&state_lock);
}

struct kv_dev *kv_dev_of(struct kv_state *s, uint64_t handle, const char *fn)
{
	uint64_t idx = (handle & 0xffff) - 1;
	if ((handle >> 48) != 0x4b56 || (uint32_t)(handle >> 16) != s->generation ||
	    idx >= (uint64_t)s->ndevs) {
		kv_err("%s: handle 0x%llx is not a device of this SDK instance", fn,
		       (unsigned long long)handle);
		return NULL;
	}
	return &s->devs[idx];
}

int kv_enter_dev(const char *fn, uint64_t handle, struct kv_state **sp, struct kv_dev **dp)
{
	struct kv_state *s = kv_enter(fn);
	if (!s)
		return KV_ERR_SDK_CLOSE;
	struct kv_dev *d = kv_dev_of(s, handle, fn);
	if (!d) {
		kv_leave();
		return KV_ERR_DD_NO_DEVICE;
	}
	if (sp)
		*sp = s;
	*dp = d;
	return KV_SUCCESS;
}

static void teardown(struct kv_state *s)
{
	kv_cq_threads_stop(s);
	for (int i = 0; i < s->ndevs; i++)
		kv_dev_close(&s->devs[i]);
	s->ndevs = 0;
	kv_cache_destroy(s->cache);
	s->cache = NULL;
	kv_slab_fini();
	kv_config_free(&s->cfg);
	free(s);
}

/* A failed init is printed on stderr by default (unvme_errors_on: a program that reports
 * kv_errmsg() itself turns that off with unvme_set_log(0)) and logged. */
static int init_failed(int rc)
{
	char reason[2048];
	snprintf(reason, sizeof(reason), "%s", kv_config_error());
	if (unvme_errors_on())
		fprintf(stderr, "kvsdk: kv_sdk_init failed: %s\n", reason);
	kv_err("kv_sdk_init failed: %s", reason);
	kv_errmsg_record(reason); /* the reason itself, as the caller reads it */
	return rc;
}

static int start(struct kv_state *s)
{
	const kv_sdk *k = &s->cfg.sdk;
	int rc = kv_slab_init(k->slab_size, k->slab_alloc_policy);
	if (rc == -ENOSPC) {
		kv_config_set_error("%s: slab_size %llu MB is more than this machine can provide now "
				    "(%llu MB: free hugepages and available memory); lower slab_size",
				    s->cfg.source, (unsigned long long)(k->slab_size >> 20),
				    (unsigned long long)(unvme_dma_mem_available() >> 20));
		return KV_ERR_SLAB_ALLOC_FAILURE;
	}
	if (rc) {
		kv_config_set_error("%s: slab of %llu MB (%s): cannot be set up (%d)", s->cfg.source,
				    (unsigned long long)(k->slab_size >> 20),
				    k->slab_alloc_policy == SLAB_MM_ALLOC_HUGE ? "huge" : "posix", rc);
		return KV_ERR_SLAB_ALLOC_FAILURE;
	}
	if (k->use_cache) {
		if (k->ssd_type == LBA_TYPE_SSD) {
			/* LBA ranges overlap (a store of 8 blocks at LBA 0 changes LBA 1's data):
			 * a cache keyed by key bytes would serve stale data. */
			kv_log(1, "%s: cache ignored in LBA mode", s->cfg.source);
		} else {
			s->cache = kv_cache_create(k->slab_size);
			if (!s->cache) {
				kv_config_set_error("%s: cache of %llu MB cannot be allocated", s->cfg.source,
						    (unsigned long long)(k->slab_size >> 20));
				return KV_ERR_HEAP_ALLOC_FAILURE;
			}
		}
	}
	for (int i = 0; i < k->nr_ssd; i++) {
		rc = kv_dev_open(s, &s->devs[i], i);
		s->ndevs = i + 1; /* closed by teardown, even half open */
		if (rc)
			return rc;
	}
	return kv_cq_threads_start(s);
}

/* As the original: the caller's struct receives the configuration in effect (nr_ssd, the
 * defaults of the fields it left zero, the masks chosen) and the device handles. Its dev_id
 * strings and its mutex (which may be in use) stay as they are. */
static void copy_back(kv_sdk *user, const struct kv_state *s)
{
	const kv_sdk *k = &s->cfg.sdk;
	user->use_cache = k->use_cache;
	user->cache_algorithm = k->cache_algorithm;
	user->cache_reclaim_policy = k->cache_reclaim_policy;
	user->slab_size = k->slab_size;
	user->slab_alloc_policy = k->slab_alloc_policy;
	user->ssd_type = k->ssd_type;
	user->submit_retry_interval = k->submit_retry_interval;
	user->nr_ssd = s->ndevs;
	user->log_level = k->log_level;
	memcpy(user->log_file, k->log_file, sizeof(user->log_file));
	user->app_hugemem_size = k->app_hugemem_size;
	for (int i = 0; i < s->ndevs; i++) {
		user->dd_options[i] = s->devs[i].opt;
		user->dev_handle[i] = s->devs[i].handle;
	}
}

/* A log file that cannot be opened would lose every message the configuration asks for:
 * refused at init, naming the path and the reason (with log_level 0 nothing is written, so
 * nothing is checked). */
static int check_log_file(const struct kv_config *cfg)
{
	const char *path = cfg->sdk.log_file;
	if (cfg->sdk.log_level == 0 || !strcmp(path, "stderr") || !strcmp(path, "stdout"))
		return 0;
	FILE *f = fopen(path, "a");
	if (!f) {
		kv_config_set_error("%s: log_file '%s' cannot be opened for appending: %s", cfg->source,
				    path, strerror(errno));
		return -1;
	}
	fclose(f);
	return 0;
}

KV_API int kv_sdk_init(int init_from, void *option)
{
	pthread_mutex_lock(&init_lock);
	if (g_state) {
		g_state->refcount++;
		kv_log(2, "kv_sdk_init: already initialized, reference count %d (options ignored)",
		       g_state->refcount);
		pthread_mutex_unlock(&init_lock);
		kv_errmsg_clear();
		return KV_SUCCESS;
	}
	kv_errmsg_clear();
	struct kv_state *s = calloc(1, sizeof(*s));
	int rc;
	if (!s) {
		kv_config_set_error("out of memory");
		pthread_mutex_unlock(&init_lock);
		return init_failed(KV_ERR_HEAP_ALLOC_FAILURE);
	}
	if (!option) {
		kv_config_set_error("kv_sdk_init: option is NULL (a JSON path or a kv_sdk struct)");
		rc = -1;
	} else if (init_from == KV_SDK_INIT_FROM_JSON) {
		rc = kv_config_load_file(option, &s->cfg);
	} else if (init_from == KV_SDK_INIT_FROM_STR) {
		rc = kv_config_from_sdk(option, &s->cfg);
	} else {
		kv_config_set_error("kv_sdk_init: init_from %d is neither KV_SDK_INIT_FROM_JSON nor "
				    "KV_SDK_INIT_FROM_STR", init_from);
		rc = -1;
	}
	if (!rc)
		rc = kv_config_check_masks(&s->cfg, kv_cpu_count());
	if (!rc)
		rc = check_log_file(&s->cfg);
	if (rc) {
		kv_config_free(&s->cfg);
		free(s);
		pthread_mutex_unlock(&init_lock);
		return init_failed(KV_ERR_SDK_INVALID_PARAM);
	}
	kv_log_configure(s->cfg.sdk.log_level, s->cfg.sdk.log_file);
	s->generation = ++g_generation;
	rc = start(s);
	if (rc) {
		teardown(s);
		pthread_mutex_unlock(&init_lock);
		return init_failed(rc);
	}
	if (init_from == KV_SDK_INIT_FROM_STR)
		copy_back(option, s);
	s->refcount = 1;
	pthread_rwlock_wrlock(&state_lock);
	g_state = s;
	pthread_rwlock_unlock(&state_lock);
	kv_log(2, "kv_sdk_init: %d device(s) from %s, %d completion thread(s), cache %s", s->ndevs,
	       s->cfg.source, s->ncqt, s->cache ? "on" : "off");
	kv_errmsg_clear(); /* warnings of a start that succeeded are no failure */
	pthread_mutex_unlock(&init_lock);
	return KV_SUCCESS;
}

/* Waits for the async commands in flight. The driver completes every command (a lost one
 * through its timeout and the queue's recovery), so this ends; a controller that failed for
 * good and cannot give its commands back, or a wait beyond FINALIZE_WAIT_MS, is reported
 * and not waited for any longer: teardown then gives the commands back with an error. */
#define FINALIZE_WAIT_MS 120000u
static void wait_async_drained(struct kv_state *s)
{
	uint64_t start = mono_ms_coarse();
	for (int i = 0; i < s->ndevs; i++) {
		struct kv_dev *d = &s->devs[i];
		for (int j = 0; j < d->nqueues; j++) {
			uint64_t failed_since = 0;
			while (!kv_queue_idle(&d->queues[j])) {
				uint64_t now = mono_ms_coarse();
				if (unvme_ctrlr_is_failed(d->ctrlr)) {
					if (!failed_since)
						failed_since = now;
				} else {
					failed_since = 0;
				}
				if ((failed_since && now - failed_since > 1000) ||
				    now - start > FINALIZE_WAIT_MS) {
					kv_err("kv_sdk_finalize: device %d: commands still in flight after "
					       "%llu ms%s; giving them back with an error", i,
					       (unsigned long long)(now - start),
					       failed_since ? " on a failed controller" : "");
					break;
				}
				if (!kv_queue_try_poll(&d->queues[j]))
					sched_yield();
			}
		}
	}
}

KV_API int kv_sdk_finalize(void)
{
	if (kv_in_cq_thread() || call_depth > 0) {
		kv_err("kv_sdk_finalize: called from an async callback, which would wait for itself");
		return KV_ERR_SDK_INVALID_PARAM;
	}
	pthread_mutex_lock(&init_lock);
	if (!g_state) {
		pthread_mutex_unlock(&init_lock);
		kv_err("kv_sdk_finalize: the SDK is not initialized");
		return KV_ERR_SDK_CLOSE;
	}
	if (--g_state->refcount > 0) {
		kv_log(2, "kv_sdk_finalize: reference count now %d", g_state->refcount);
		pthread_mutex_unlock(&init_lock);
		return KV_SUCCESS;
	}
	pthread_rwlock_wrlock(&state_lock);
	struct kv_state *s = g_state;
	g_state = NULL; /* from here on new calls fail with KV_ERR_SDK_CLOSE */
	pthread_rwlock_unlock(&state_lock);
	wait_async_drained(s);
	teardown(s);
	kv_log(2, "kv_sdk_finalize: done");
	kv_log_close();
	pthread_mutex_unlock(&init_lock);
	return KV_SUCCESS;
}

int kv_sdk_cache_stats(struct kv_cache_stats *st)
{
	pthread_rwlock_rdlock(&state_lock);
	int rc = -1;
	if (g_state && g_state->cache) {
		kv_cache_stats(g_state->cache, st);
		rc = 0;
	}
	pthread_rwlock_unlock(&state_lock);
	return rc;
}

KV_API int kv_is_sdk_initialized(void)
{
	pthread_rwlock_rdlock(&state_lock);
	int r = g_state != NULL;
	pthread_rwlock_unlock(&state_lock);
	return r;
}

KV_API int kv_get_core_id(void)
{
	return sched_getcpu();
}

/* Where and what the original printed: one line on stderr naming the build and the system
 * (it had no configuration to show before init). Once initialized, the configuration in
 * effect follows, on stderr too: every device with its queues and completion threads. */
KV_API void kv_sdk_info(void)
{
	struct utsname u;
	if (uname(&u))
		memset(&u, 0, sizeof(u));
	fprintf(stderr, "KV SDK info: buildtime=%s, hash=unvme-%s, os=%s, kernel=%s, processor=%s "
		"dpdk_version=none spdk_version=none\n", __DATE__ " " __TIME__, KVSDK_VERSION,
		u.sysname, u.release, u.machine);
	pthread_rwlock_rdlock(&state_lock);
	struct kv_state *s = g_state;
	if (!s) {
		pthread_rwlock_unlock(&state_lock);
		return;
	}
	FILE *o = stderr;
	const kv_sdk *k = &s->cfg.sdk;
	fprintf(o, "kvsdk configuration (%s)\n", s->cfg.source);
	fprintf(o, "  ssd_type:              %s\n", k->ssd_type == LBA_TYPE_SSD ? "lba" : "kv");
	fprintf(o, "  cache:                 %s%s\n", k->use_cache ? "on" : "off",
		k->use_cache && !s->cache ? " (ignored in LBA mode)" : "");
	fprintf(o, "  cache_algorithm:       radix\n  cache_reclaim_policy:  lru\n");
	fprintf(o, "  slab_size:             %llu MB (%s)\n", (unsigned long long)(k->slab_size >> 20),
		k->slab_alloc_policy == SLAB_MM_ALLOC_HUGE ? "huge" : "posix");
	fprintf(o, "  app_hugemem_size:      %llu MB\n", (unsigned long long)(k->app_hugemem_size >> 20));
	fprintf(o, "  submit_retry_interval: %d us\n", k->submit_retry_interval);
	fprintf(o, "  zero_copy:             %s\n", s->cfg.zero_copy ? "on" : "off");
	fprintf(o, "  cq_idle_sleep_max_us:  %u\n", s->cfg.cq_idle_sleep_max_us);
	fprintf(o, "  cq_coalesce_max_us:    %u\n", s->cfg.cq_coalesce_max_us);
	fprintf(o, "  log_level:             %d (%s)\n", k->log_level, k->log_file);
	fprintf(o, "  reference count:       %d\n", s->refcount);
	for (int i = 0; i < s->ndevs; i++) {
		const struct kv_dev *d = &s->devs[i];
		fprintf(o, "  device %d: %s\n", i, d->devid);
		fprintf(o, "    handle 0x%llx, NSID %u, %llu sectors of %u bytes\n",
			(unsigned long long)d->handle, d->nsid, (unsigned long long)d->num_sectors,
			d->sector_size);
		fprintf(o, "    core_mask 0x%llx, sync_mask 0x%llx, cq_thread_mask 0x%llx, queue_depth %u\n",
			(unsigned long long)d->opt.core_mask, (unsigned long long)d->opt.sync_mask,
			(unsigned long long)d->opt.cq_thread_mask, d->opt.queue_depth);
		for (int j = 0; j < d->nqueues; j++) {
			const struct kv_queue *q = &d->queues[j];
			if (q->sync)
				fprintf(o, "    core %d: queue %u, sync\n", q->core, unvme_qpair_id(q->qp));
			else if (q->owner)
				fprintf(o, "    core %d: queue %u, async, completions on core %d%s\n",
					q->core, unvme_qpair_id(q->qp), q->owner->core,
					q->owner->core >= kv_cpu_count() ? " (unpinned: no such CPU)" : "");
			else
				fprintf(o, "    core %d: queue %u, async, no completion thread "
					"(kv_process_completion reaps)\n", q->core, unvme_qpair_id(q->qp));
		}
	}
	for (int t = 0; t < s->ncqt; t++)
		fprintf(o, "  completion thread on core %d: %d queue(s)\n", s->cqt[t].core,
			s->cqt[t].nqueues);
	pthread_rwlock_unlock(&state_lock);
}
