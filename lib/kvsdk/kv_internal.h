/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Internal state of the key-value SDK: the configuration as loaded, the devices with their
 * queues, the completion threads, and the request that carries one command from the API call
 * to its callback. The thread model is described in docs/kv-sdk.md.
 */
#ifndef KVSDK_INTERNAL_H
#define KVSDK_INTERNAL_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "unvme/unvme.h"
#include "unvme/kv/kv_apis.h"
#include "unvme/kv/kv_trace.h"

/* The configuration kv_sdk_init starts from: the original's struct plus what it cannot hold
 * (device ids longer than DEV_ID_LEN - 1, the completion threads' idle sleep and completion
 * coalescing, where it came from for messages). */
struct kv_config {
	kv_sdk sdk;
	char *devid[NR_MAX_SSD];   /* full ids (the struct's copies may be truncated) */
	uint32_t cq_idle_sleep_max_us;
	uint32_t cq_coalesce_max_us;
	bool zero_copy;            /* async stores may DMA from the caller's kv_alloc'd value */
	bool strict_placement;     /* masks naming CPUs this machine lacks are an error */
	char source[1100];         /* "file 'x.json'" or "kv_sdk struct", for messages */
};

#define KV_DEFAULT_QUEUE_DEPTH      32u
#define KV_MAX_QUEUE_DEPTH          65535u /* the driver keeps queue depths in 16 bits */
#define KV_DEFAULT_IDLE_SLEEP_US    1000u
#define KV_MAX_IDLE_SLEEP_US        1000000u
#define KV_DEFAULT_COALESCE_US      8u
#define KV_MAX_COALESCE_US          1000u
#define KV_DEFAULT_SLAB_MB          44u
#define KV_DEFAULT_RETRY_US         1
#define KV_MAX_RETRY_US             1000

struct kv_dev;
struct kv_cq_thread;

/* One I/O queue pair of a device, bound to one core of its core_mask. */
struct kv_queue {
	struct unvme_qpair *qp;
	struct kv_dev *dev;
	int core;
	bool sync;
	/* Several threads may map to one core. Sync queues: the caller submits and polls under
	 * this lock. Async queues (split queue pairs): callers submit and ring under it, and the
	 * owning completion thread polls without it. */
	atomic_flag lock;
	/* Async queues: a request slot per command the queue can hold (queue depth - 1). Taking
	 * a free slot (under lock) is the reservation; the completion gives it back after the
	 * callback. So submitters and the completion thread share no counter. */
	struct kv_req_slot *slots;
	uint32_t nslots;
	uint32_t next_slot;         /* where submitters look for a free slot (under lock) */
	/* The completion thread that polls this async queue, or NULL when the configuration
	 * has none (cq_thread_mask 0 in LBA mode): then whoever waits polls it, one thread at a
	 * time under poll_lock (kv_process_completion, a waiting caller, finalize). */
	struct kv_cq_thread *owner;
	atomic_flag poll_lock;
};

/* A queue's spin lock; contended waiters yield, as the holder may be preempted on the very
 * core they spin on. */
static inline void kv_queue_lock(struct kv_queue *q)
{
	unsigned spins = 0;
	while (atomic_flag_test_and_set_explicit(&q->lock, memory_order_acquire)) {
		if (++spins > 64)
			sched_yield();
	}
}

static inline void kv_queue_unlock(struct kv_queue *q)
{
	atomic_flag_clear_explicit(&q->lock, memory_order_release);
}

struct kv_dev {
	struct kv_state *state;
	int idx;
	uint64_t handle;
	char *devid;
	struct unvme_ctrlr *ctrlr;
	uint32_t nsid;              /* LBA mode: the namespace used; KV mode: the one identified */
	uint32_t sector_size;
	uint64_t num_sectors;
	uint32_t max_xfer;
	kv_nvme_io_options opt;
	struct kv_queue *queues;    /* one per bit of core_mask, in core order */
	int nqueues;
	struct kv_queue *by_core[MAX_CPU_CORES];
	int sync_cores[MAX_CPU_CORES], nsync;
	int async_cores[MAX_CPU_CORES], nasync;
	pthread_mutex_t admin_lock; /* iterator opens and closes, format */
	/* type of each iterator this SDK opened (0: unknown), so a read of a delete iterator
	 * can clear the cache */
	_Atomic uint8_t iter_type[KV_MAX_ITERATE_HANDLE + 1];
	bool lba;
	bool watching;              /* its event listener is registered (kv_hotplug.c) */
	_Atomic uint64_t arrived_ms; /* when it was last plugged back in (0: never) */
	/* kv_nvme_register_aer_callback: Asynchronous Events go to aer_cb (kv_hotplug.c) when
	 * kv_process_completion reaps them */
	void (*_Atomic aer_cb)(void *arg, unsigned int result, unsigned int status);
	void *aer_arg;
	bool aer_enabled;           /* under admin_lock */
};

struct kv_cq_thread {
	pthread_t tid;
	int core;
	struct kv_queue **queues;
	int nqueues;
	atomic_bool stop;
	bool started;
	uint32_t sleep_max_us;
	uint32_t coalesce_max_ns;
	/* The core is also a submission core, or does not exist (the thread runs unpinned):
	 * waiting for the device it yields instead of spinning, so the submitters run. */
	bool shares_core;
	/* Nothing was in flight for a while and the thread polls rarely (yields, sleeps): the
	 * submitters ring their doorbells themselves. Read on every async submission, written
	 * twice per idle period: a line of its own. */
	_Alignas(64) atomic_bool resting;
};

struct kv_state {
	struct kv_config cfg;
	int refcount;
	uint32_t generation;
	struct kv_dev devs[NR_MAX_SSD];
	int ndevs;
	struct kv_cq_thread cqt[MAX_CPU_CORES];
	int ncqt;
	struct kv_cache *cache;
};

/* ---- lifetime (kv_sdk.c) ---- */
/* Takes the state for one API call; NULL (logged, naming fn) before init or after finalize. */
struct kv_state *kv_enter(const char *fn);
void kv_leave(void);
struct kv_dev *kv_dev_of(struct kv_state *s, uint64_t handle, const char *fn);
/* kv_enter plus the device of handle, the guard of every per-device call: KV_SUCCESS with *s
 * (if s is not NULL) and *d set, and the caller must kv_leave; or KV_ERR_SDK_CLOSE /
 * KV_ERR_DD_NO_DEVICE (logged, naming fn) with nothing held. */
int kv_enter_dev(const char *fn, uint64_t handle, struct kv_state **s, struct kv_dev **d);
/* True on a completion thread, and on any thread while it polls an ownerless queue (it runs
 * callbacks there): such a thread must not wait for its own queues. */
bool kv_in_cq_thread(void);
void kv_poll_enter(void);
void kv_poll_leave(void);
struct kv_cache_stats;
/* The read cache's counters (tests and tools); -1 when the SDK is down or the cache off. */
int kv_sdk_cache_stats(struct kv_cache_stats *st);
void kv_mark_cq_thread(void);

/* ---- configuration (config.c, config_mask.c) ---- */
void kv_config_defaults(struct kv_config *cfg);
void kv_config_free(struct kv_config *cfg);
/* 0, or -1 with a message naming the file, the key and the reason (kv_config_error()). */
int kv_config_load_file(const char *path, struct kv_config *cfg);
int kv_config_from_sdk(const kv_sdk *sdk, struct kv_config *cfg);
int kv_config_check_masks(struct kv_config *cfg, int ncpu);
const char *kv_config_error(void);
void kv_config_set_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* kv_errmsg(): emptied at the start of each call, recorded by kv_err whatever the log level */
void kv_errmsg_clear(void);
void kv_errmsg_record(const char *msg);
/* A warning on stderr (unless UNVME_QUIET) and in the log. */
void kv_config_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Parses a hexadecimal mask written as a JSON number (10 means 0x10) or a string ("c", "0x1"). */
int kv_parse_hex_mask(const char *text, uint64_t *out);
int kv_cpu_count(void);
void kv_auto_masks(int dev_idx, int ncpu, kv_nvme_io_options *o);
/* Device ids longer than DEV_ID_LEN - 1 go into the kv_sdk struct as a token that names them
 * unambiguously; remember_devid fills the token in, full_devid maps it back (NULL: not a
 * token of a remembered id). */
void kv_config_remember_devid(const char *full, char token[DEV_ID_LEN]);
const char *kv_config_full_devid(const char *token);

/* ---- logging (kv_log.c) ---- */
void kv_log_configure(int level, const char *path);
void kv_log_close(void);
int kv_log_level(void);
void kv_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define kv_err(...)  kv_log(1, __VA_ARGS__)
/* kv_trace.c: a trace line of the SDK itself when level is within kv_trace_level(). */
void kv_trace_print(int level, const char *file, int line, const char *func, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* ---- devices (kv_device.c) ---- */
int kv_dev_open(struct kv_state *s, struct kv_dev *d, int idx);
void kv_dev_close(struct kv_dev *d);
/* Re-reads the namespace geometry (after a format). */
void kv_dev_refresh(struct kv_dev *d);
/* The geometry read again, stored only where it changed (a replacement device): I/O threads
 * read it without a lock. */
void kv_dev_refresh_if_changed(struct kv_dev *d);
/* kv_hotplug.c: the driver's removal and arrival events for the device (kv_dev_open/close). */
int kv_dev_watch(struct kv_dev *d);
void kv_dev_unwatch(struct kv_dev *d);
/* The queue a call from the calling thread uses; may migrate the thread (docs/kv-sdk.md). */
struct kv_queue *kv_pick_queue(struct kv_dev *d, bool want_sync);
/* The queue of core qid (negative: the calling thread's core) when it is of the wanted kind,
 * for the driver-level API; NULL with *rc the kv_result (logged, naming fn). */
struct kv_queue *kv_queue_by_id(struct kv_dev *d, int qid, bool want_sync, const char *fn,
				int *rc);
/* kv_submit.c: whether every async command accepted on q has been called back. */
bool kv_queue_idle(const struct kv_queue *q);
/* kv_cq_thread.c: reaps q's completions (and rebuilds it after a controller reset); the
 * number reaped. For an ownerless queue only: false when another thread polls it now. */
int kv_queue_serve(struct kv_queue *q);
bool kv_queue_try_poll(struct kv_queue *q);
/* kv_submit.c: the request slots of an async queue (kv_dev_open, kv_dev_close). */
int kv_queue_slots_init(struct kv_queue *q, uint32_t n);
void kv_queue_slots_fini(struct kv_queue *q);

/* ---- completion threads (kv_cq_thread.c) ---- */
int kv_cq_threads_start(struct kv_state *s);
void kv_cq_threads_stop(struct kv_state *s);

/* ---- DMA buffers (kv_mem.c) ---- */
void *kv_dma_get(struct kv_state *s, size_t size);
void kv_dma_put(struct kv_state *s, void *buf);

/* ---- status (kv_status.c) ---- */
int kv_result_from_status(int status, bool vendor);
int kv_result_from_errno(int rc);

#endif
