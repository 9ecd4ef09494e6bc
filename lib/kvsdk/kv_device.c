/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One configured device: its controller, the namespace the SDK addresses, and one I/O queue
 * pair per core of its core_mask; and the choice of queue for a calling thread.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "kv_internal.h"

static void query_geometry(struct kv_dev *d, uint64_t *num_sectors, uint32_t *sector_size)
{
	/* Identify Namespace CNS 00h: NSZE and the LBA format in use (KV namespaces report
	 * 512-byte sectors). */
	struct nvme_id_ns *id = unvme_dma_zalloc(4096, 4096);
	if (id && unvme_identify(d->ctrlr, 0x00, d->nsid, 0, id) == 0) {
		*num_sectors = id->nsze;
		*sector_size = nvme_ns_lba_size(id); /* 0 for a format the device got wrong */
	} else {
		struct unvme_ns *ns = unvme_ctrlr_ns(d->ctrlr, d->nsid);
		*num_sectors = ns ? unvme_ns_nlbas(ns) : 0;
		*sector_size = ns ? unvme_ns_lba_size(ns) : 512;
	}
	if (*sector_size < 512)
		*sector_size = 512;
	unvme_dma_free(id);
}

static void read_geometry(struct kv_dev *d)
{
	query_geometry(d, &d->num_sectors, &d->sector_size);
}

void kv_dev_refresh(struct kv_dev *d)
{
	read_geometry(d);
}

void kv_dev_refresh_if_changed(struct kv_dev *d)
{
	uint64_t n;
	uint32_t sz;
	query_geometry(d, &n, &sz);
	if (n != d->num_sectors)
		d->num_sectors = n;
	if (sz != d->sector_size)
		d->sector_size = sz;
}

int kv_dev_open(struct kv_state *s, struct kv_dev *d, int idx)
{
	const struct kv_config *cfg = &s->cfg;
	memset(d, 0, sizeof(*d));
	d->state = s;
	d->idx = idx;
	d->devid = cfg->devid[idx];
	d->opt = cfg->sdk.dd_options[idx];
	d->lba = cfg->sdk.ssd_type == LBA_TYPE_SSD;
	pthread_mutex_init(&d->admin_lock, NULL);
	int ncores = __builtin_popcountll(d->opt.core_mask);

	struct unvme_ctrlr_opts o;
	unvme_ctrlr_opts_default(&o);
	o.num_io_queues = (uint32_t)ncores;
	o.io_queue_depth = d->opt.queue_depth;
	int rc = unvme_ctrlr_open(d->devid, &o, &d->ctrlr);
	if (rc) {
		kv_config_set_error("%s: device_description[%d].dev_id '%s' cannot be opened: %s",
				    cfg->source, idx, d->devid, unvme_errmsg());
		return KV_ERR_DD_NO_DEVICE;
	}
	if (kv_dev_watch(d) != 0) {
		kv_config_set_error("%s: device '%s': cannot watch for its removal: %s", cfg->source,
				    d->devid, unvme_errmsg());
		return KV_ERR_DD_NO_DEVICE;
	}
	d->watching = true;
	if (unvme_ctrlr_max_io_queues(d->ctrlr) < (uint32_t)ncores) {
		kv_config_set_error("%s: device_description[%d] '%s': core_mask 0x%llx needs %d I/O "
				    "queues, the controller grants %u", cfg->source, idx, d->devid,
				    (unsigned long long)d->opt.core_mask, ncores,
				    unvme_ctrlr_max_io_queues(d->ctrlr));
		return KV_ERR_DD_NO_AVAILABLE_QUEUE;
	}
	d->nsid = unvme_ctrlr_first_nsid(d->ctrlr);
	if (!d->nsid) {
		if (d->lba) {
			kv_config_set_error("%s: device '%s' has no active namespace", cfg->source,
					    d->devid);
			return KV_ERR_DD_NO_DEVICE;
		}
		d->nsid = 1; /* a KV namespace the driver does not list as an NVM one */
	}
	read_geometry(d);
	d->max_xfer = unvme_ctrlr_max_xfer(d->ctrlr);

	d->queues = calloc((size_t)ncores, sizeof(*d->queues));
	if (!d->queues)
		return KV_ERR_HEAP_ALLOC_FAILURE;
	struct unvme_qpair_opts qo = { .depth = d->opt.queue_depth, .timeout_ms = 0 };
	for (int c = 0; c < MAX_CPU_CORES; c++) {
		if (!(d->opt.core_mask >> c & 1))
			continue;
		struct kv_queue *q = &d->queues[d->nqueues];
		q->dev = d;
		q->core = c;
		q->sync = d->opt.sync_mask >> c & 1;
		atomic_flag_clear(&q->lock);
		atomic_flag_clear(&q->poll_lock);
		/* async: the callers submit on their own core, the completion thread reaps */
		qo.split = !q->sync;
		rc = unvme_qpair_create(d->ctrlr, &qo, &q->qp);
		if (rc) {
			kv_config_set_error("%s: device '%s': I/O queue for core %d (queue_depth %u): %s",
					    cfg->source, d->devid, c, d->opt.queue_depth,
					    unvme_errmsg());
			return KV_ERR_DD_NO_AVAILABLE_QUEUE;
		}
		d->nqueues++;
		/* one SQ slot always stays empty: depth - 1 commands in flight */
		if (!q->sync && kv_queue_slots_init(q, d->opt.queue_depth - 1))
			return KV_ERR_HEAP_ALLOC_FAILURE;
		d->by_core[c] = q;
		if (q->sync)
			d->sync_cores[d->nsync++] = c;
		else
			d->async_cores[d->nasync++] = c;
	}
	d->handle = ((uint64_t)0x4b56 << 48) | ((uint64_t)s->generation << 16) | (uint64_t)(idx + 1);
	kv_log(2, "device %d '%s': %s mode, NSID %u, %llu sectors of %u bytes, core_mask 0x%llx, "
	       "sync_mask 0x%llx, cq_thread_mask 0x%llx, queue_depth %u", idx, d->devid,
	       d->lba ? "LBA" : "KV", d->nsid, (unsigned long long)d->num_sectors, d->sector_size,
	       (unsigned long long)d->opt.core_mask, (unsigned long long)d->opt.sync_mask,
	       (unsigned long long)d->opt.cq_thread_mask, d->opt.queue_depth);
	return KV_SUCCESS;
}

void kv_dev_close(struct kv_dev *d)
{
	for (int i = 0; i < d->nqueues; i++) {
		unvme_qpair_destroy(d->queues[i].qp);
		kv_queue_slots_fini(&d->queues[i]);
	}
	free(d->queues);
	d->queues = NULL;
	d->nqueues = 0;
	if (d->watching)
		kv_dev_unwatch(d);
	d->watching = false;
	unvme_ctrlr_close(d->ctrlr);
	d->ctrlr = NULL;
	pthread_mutex_destroy(&d->admin_lock);
}

/*
 * The queue for a call of the wanted kind from the calling thread:
 *   - the calling core's own queue when it is of that kind;
 *   - otherwise a queue of that kind on another core of core_mask, picked by the calling core
 *     number (so threads spread over the fitting cores), and the thread moves there with
 *     sched_setaffinity, as the original did. Completion threads never move. Moving is only
 *     about locality: correctness does not depend on it (sync queues are locked, async rings
 *     take any producer), so a refused move changes nothing else;
 *   - when the device has no queue of that kind, a queue of the other kind (kv_submit.c).
 */
struct kv_queue *kv_pick_queue(struct kv_dev *d, bool want_sync)
{
	int cpu = sched_getcpu();
	if (cpu >= 0 && cpu < MAX_CPU_CORES && d->by_core[cpu] && d->by_core[cpu]->sync == want_sync)
		return d->by_core[cpu];
	const int *list = want_sync ? d->sync_cores : d->async_cores;
	int n = want_sync ? d->nsync : d->nasync;
	if (!n) {
		if (cpu >= 0 && cpu < MAX_CPU_CORES && d->by_core[cpu])
			return d->by_core[cpu];
		return &d->queues[(cpu < 0 ? 0 : cpu) % d->nqueues];
	}
	int target = list[(cpu < 0 ? 0 : cpu) % n];
	/* a core this machine lacks (a mask written for a bigger one): use its queue, stay here */
	if (!kv_in_cq_thread() && target < kv_cpu_count()) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(target, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			kv_log(3, "cannot move thread to core %d: %s", target, strerror(errno));
		else
			kv_log(3, "%s call from core %d: thread moved to core %d", want_sync ? "sync" : "async",
			       cpu, target);
	}
	return d->by_core[target];
}

/*
 * The queue a driver-level call names (kvnvme.h): qid is a core of the device's core_mask,
 * negative for the calling thread's core, as the original numbered its queues. Nothing
 * moves: a core without a queue of the device is KV_ERR_DD_INVALID_PARAM, a queue of the
 * other kind KV_ERR_DD_INVALID_QUEUE_TYPE (the original's answers), each logged and traced.
 */
struct kv_queue *kv_queue_by_id(struct kv_dev *d, int qid, bool want_sync, const char *fn,
				int *rc)
{
	int core = qid;
	if (core < 0)
		core = sched_getcpu();
	struct kv_queue *q = core >= 0 && core < MAX_CPU_CORES ? d->by_core[core] : NULL;
	if (!q) {
		kv_err("%s: qid %d%s: core %d has no queue of device %d (core_mask 0x%llx)", fn, qid,
		       qid < 0 ? " (the calling thread's core)" : "", core, d->idx,
		       (unsigned long long)d->opt.core_mask);
		kv_trace_print(KVNVME_LOG_ERR, __FILE__, __LINE__, fn, "Invalid qid: %d passed", core);
		*rc = KV_ERR_DD_INVALID_PARAM;
		return NULL;
	}
	if (q->sync != want_sync) {
		kv_err("%s: the queue of core %d of device %d is %s; use the %s call", fn, core,
		       d->idx, q->sync ? "sync" : "async", q->sync ? "sync" : "async");
		kv_trace_print(KVNVME_LOG_DEBUG, __FILE__, __LINE__, fn,
			       "I/O queue of core %d supports only %s I/O", core,
			       q->sync ? "sync" : "async");
		*rc = KV_ERR_DD_INVALID_QUEUE_TYPE;
		return NULL;
	}
	return q;
}
