/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The uNVMe ioengine: fio --ioengine=external:/path/to/unvme-fio.so (docs/fio.md).
 *
 * Life of a job (thread=1; fio's backend.c calls these in this order):
 *   setup     (fio's main thread, job by job) checks the job, opens or finds each device named
 *             by filename and gives fio its size;
 *   init      (the job's thread) pins the thread to its core of core_mask and creates one queue
 *             pair per device for this job alone: the I/O path takes no locks;
 *   iomem_alloc  fio's I/O buffers come from DMA memory, so commands carry fio's buffers
 *             themselves (PRPs), never a copy;
 *   queue     builds one command and queues it without ringing the doorbell;
 *   commit    rings each queue pair's doorbell once for the batch (iodepth_batch);
 *   getevents polls the queue pairs until min completions, reaping at most max;
 *   event     hands fio the completed io_us in reap order;
 *   cleanup   destroys the queue pairs and drops the devices (the last job closes them).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>

#include <unvme/spec/kv.h>

#include "fio_glue.h"
#include "lib/common/compiler.h"
#include "lib/driver/qpair_submit.h"

#ifndef UFIO_FIO_VERSION
#error "UFIO_FIO_VERSION (the fio this engine is built against) must be defined"
#endif


#define KEY_SLOT 256 /* a key of up to 255 bytes in a slot that never crosses a page */

struct ufio_thread;

/* One io_u: io_u->engine_data. */
struct ufio_iou {
	struct io_u *io_u;
	struct ufio_file *uf;
	uint8_t *key_dma; /* ks > 16: the key's DMA copy */
};

struct ufio_thread {
	struct io_u **events;
	unsigned nevents;
	struct io_u **queued_ios; /* queued since the last commit: their issue time is the commit's */
	unsigned queued;
	struct ufio_file **files;
	unsigned nfiles;
	uint32_t ks;
	bool reported;
	const char *job;
};

/* ---- the running fio's version ---- */

/* Weak: a host without the symbol still loads the engine, which then refuses to run. */
#pragma weak fio_version_string

static bool version_ok = true;

struct ioengine_ops ioengine;

/* At dlopen time, before fio reads anything else of the engine: a different fio has other
 * struct layouts, so the engine must not run. Its version field makes fio refuse it with
 * "bad ioops version", right after this line says why. */
__attribute__((constructor)) static void ufio_check_version(void)
{
	const char *running = fio_version_string;
	__asm__("" : "+r"(running)); /* weak: the compiler must not assume it is non-NULL */
	if (!running)
		running = "a program that is not fio";
	if (strcmp(running, UFIO_FIO_VERSION) != 0) {
		version_ok = false;
		fprintf(stderr, "unvme: this engine was built against %s's source but runs in %s: "
			"rebuild it (meson runs scripts/fio-source.sh for the installed fio)\n",
			UFIO_FIO_VERSION, running);
		ioengine.version = -1;
		ioengine.options = NULL;
		ioengine.option_struct_size = 0;
	}
}

/* ---- completions ---- */

static void report(struct ufio_thread *t, struct io_u *io_u, const char *what, const char *why)
{
	if (t->reported)
		return;
	t->reported = true;
	log_err("unvme: job '%s': %s of %llu bytes at offset %llu on %s failed: %s\n", t->job,
		what, io_u->xfer_buflen, io_u->offset, io_u->file->file_name, why);
}

static const char *ddir_name(enum fio_ddir d, enum ufio_kind kind)
{
	switch (d) {
	case DDIR_READ: return kind == UFIO_KV ? "retrieve" : "read";
	case DDIR_WRITE: return kind == UFIO_KV ? "store" : "write";
	case DDIR_TRIM: return kind == UFIO_KV ? "delete" : "deallocate";
	default: return "flush";
	}
}

static void io_done(void *arg, const struct nvme_cqe *cpl)
{
	struct ufio_iou *iu = arg;
	struct io_u *io_u = iu->io_u;
	struct ufio_file *uf = iu->uf;
	struct ufio_thread *t = uf->t;
	uf->outstanding--;
	int st = NVME_STATUS_FROM_CQE(cpl->status);
	if (likely(st == 0)) {
		if (uf->kind == UFIO_KV && io_u->ddir == DDIR_READ && cpl->dw0 < io_u->xfer_buflen)
			io_u->resid = io_u->xfer_buflen - cpl->dw0; /* a shorter value was stored */
	} else if (uf->kind == UFIO_KV && st == NVME_STATUS(1, NVME_KVV_SC_KEY_NOT_EXIST) &&
		   io_u->ddir == DDIR_TRIM) {
		/* deleting a key never stored is like trimming unwritten blocks: nothing to do */
	} else {
		if (uf->kind == UFIO_KV && st == NVME_STATUS(1, NVME_KVV_SC_KEY_NOT_EXIST))
			io_u->error = ENODATA;
		else if (uf->kind == UFIO_KV && st == NVME_STATUS(1, NVME_KVV_SC_CAPACITY_EXCEEDED))
			io_u->error = ENOSPC;
		else
			io_u->error = EIO;
		char why[160];
		const char *name = uf->kind == UFIO_KV ? ufio_kv_status_str(st) : NULL;
		snprintf(why, sizeof(why), "%s (status 0x%03x)",
			 name ? name : unvme_status_str(st, unvme_ns_csi(uf->ns)), st);
		report(t, io_u, ddir_name(io_u->ddir, uf->kind), why);
	}
	t->events[t->nevents++] = io_u;
}

/* ---- submission ---- */

static enum fio_q_status fail_now(struct ufio_thread *t, struct io_u *io_u, int err,
				  const char *why)
{
	io_u->error = err;
	report(t, io_u, ddir_name(io_u->ddir, ((struct ufio_file *)io_u->file->engine_data)->kind),
	       why);
	return FIO_Q_COMPLETED;
}

static enum fio_q_status ufio_queue(struct thread_data *td, struct io_u *io_u)
{
	struct ufio_thread *t = td->io_ops_data;
	struct ufio_iou *iu = io_u->engine_data;
	struct ufio_file *uf = io_u->file->engine_data;
	unsigned long long off = io_u->offset, len = io_u->xfer_buflen;
	int rc;

	iu->uf = uf;
	if (uf->kind == UFIO_BLOCK) {
		uint64_t mask = (1ull << uf->lba_shift) - 1;
		if (ddir_rw(io_u->ddir) || io_u->ddir == DDIR_TRIM) {
			if (unlikely((off | len) & mask))
				return fail_now(t, io_u, EINVAL, "offset or length is not a multiple of "
						"the LBA size");
			if (unlikely(off + len > uf->capacity || len == 0))
				return fail_now(t, io_u, EINVAL, "beyond the end of the namespace");
		}
		uint64_t slba = off >> uf->lba_shift;
		uint32_t nlb = (uint32_t)(len >> uf->lba_shift);
		switch (io_u->ddir) {
		/* the driver's inline submission, as unvme_read and unvme_write make it (the
		 * engine's namespace and queue pair are valid by construction, and the transfer
		 * was checked above) */
		case DDIR_READ:
			rc = qpair_submit_rw(uf->qp, NVME_CMD_READ, uf->nsid, slba, nlb, io_u->xfer_buf,
					     len, io_done, iu);
			break;
		case DDIR_WRITE:
			rc = qpair_submit_rw(uf->qp, NVME_CMD_WRITE, uf->nsid, slba, nlb,
					     io_u->xfer_buf, len, io_done, iu);
			break;
		case DDIR_TRIM:
			rc = unvme_deallocate(uf->ns, uf->qp, slba, nlb, io_done, iu);
			break;
		case DDIR_SYNC:
		case DDIR_DATASYNC:
			rc = unvme_flush(uf->ns, uf->qp, io_done, iu);
			break;
		default:
			return fail_now(t, io_u, EINVAL, "not supported (sync_file_range?)");
		}
	} else {
		struct nvme_sqe cmd;
		uint8_t key[NVME_KVV_MAX_KEY];
		ufio_kv_key(key, t->ks, off);
		switch (io_u->ddir) {
		case DDIR_READ:
			ufio_kv_retrieve_cmd(&cmd, key, t->ks, iu->key_dma, (uint32_t)len);
			rc = unvme_qpair_submit(uf->qp, &cmd, io_u->xfer_buf, len, io_done, iu);
			break;
		case DDIR_WRITE:
			ufio_kv_store_cmd(&cmd, key, t->ks, iu->key_dma, (uint32_t)len);
			rc = unvme_qpair_submit(uf->qp, &cmd, io_u->xfer_buf, len, io_done, iu);
			break;
		case DDIR_TRIM:
			ufio_kv_delete_cmd(&cmd, key, t->ks, iu->key_dma);
			rc = unvme_qpair_submit(uf->qp, &cmd, NULL, 0, io_done, iu);
			break;
		case DDIR_SYNC:
		case DDIR_DATASYNC:
			rc = unvme_flush(uf->ns, uf->qp, io_done, iu);
			break;
		default:
			return fail_now(t, io_u, EINVAL, "not supported (sync_file_range?)");
		}
	}
	if (unlikely(rc)) {
		if (rc == -EAGAIN)
			return FIO_Q_BUSY; /* queue pair full: fio commits and reaps, then retries */
		return fail_now(t, io_u, -rc, unvme_errmsg());
	}
	uf->outstanding++;
	uf->pending = true;
	t->queued_ios[t->queued++] = io_u;
	return FIO_Q_QUEUED;
}

static int ufio_commit(struct thread_data *td)
{
	struct ufio_thread *t = td->io_ops_data;
	if (!t->queued)
		return 0;
	for (unsigned i = 0; i < t->nfiles; i++) {
		struct ufio_file *uf = t->files[i];
		if (uf->pending) {
			uf->pending = false;
			unvme_qpair_ring(uf->qp);
		}
	}
	/* One clock read for the batch, as fio's own async engines do (FIO_ASYNCIO_SETS_ISSUE_TIME) */
	if (fio_fill_issue_time(td)) {
		struct timespec now;
		fio_gettime(&now, NULL);
		for (unsigned i = 0; i < t->queued; i++) {
			t->queued_ios[i]->issue_time = now;
			io_u_queued(td, t->queued_ios[i]);
		}
	}
	io_u_mark_submit(td, t->queued);
	t->queued = 0;
	return 0;
}

static int ufio_getevents(struct thread_data *td, unsigned int min, unsigned int max,
			  const struct timespec *ts)
{
	struct ufio_thread *t = td->io_ops_data;
	t->nevents = 0;
	for (;;) {
		uint32_t left = 0;
		for (unsigned i = 0; i < t->nfiles && t->nevents < max; i++) {
			struct ufio_file *uf = t->files[i];
			if (!uf->outstanding)
				continue;
			int rc = unvme_qpair_poll(uf->qp, max - t->nevents);
			if (unlikely(rc < 0)) {
				log_err("unvme: job '%s': %s: polling failed: %s\n", t->job,
					uf->dev->name, unvme_errmsg());
				return rc;
			}
			left += uf->outstanding;
		}
		if (t->nevents >= min || t->nevents >= max || left == 0)
			return (int)t->nevents;
	}
}

static struct io_u *ufio_event(struct thread_data *td, int event)
{
	struct ufio_thread *t = td->io_ops_data;
	return t->events[event];
}

/* ---- setup, init, cleanup ---- */

static void release_file(struct ufio_file *uf)
{
	if (uf->qp)
		unvme_qpair_destroy(uf->qp);
	ufio_zones_release(uf);
	ufio_dev_put(uf->dev);
	free(uf);
}

static void put_files(struct thread_data *td)
{
	struct fio_file *f;
	unsigned int i;
	for_each_file(td, f, i) {
		struct ufio_file *uf = f->engine_data;
		if (!uf)
			continue;
		release_file(uf);
		f->engine_data = NULL;
	}
}

static int ufio_setup(struct thread_data *td)
{
	struct ufio_opts *o = td->eo;
	struct fio_file *f;
	unsigned int i;
	char err[2048];

	if (!version_ok)
		return 1;
	if (ufio_check_job(td, err, sizeof(err)))
		goto fail;
	if (!td->files_index) {
		snprintf(err, sizeof(err), "job '%s': no filename (name devices: a PCI address "
			 "0000.02.00.0, a device URI or an alias, several joined by ':')", td->o.name);
		goto fail;
	}
	for_each_file(td, f, i) {
		if (f->engine_data)
			continue;
		struct ufio_dev *d = ufio_dev_get(o->json_path, f->file_name, err, sizeof(err));
		if (!d)
			goto fail;
		struct ufio_file *uf = calloc(1, sizeof(*uf));
		if (!uf) {
			ufio_dev_put(d);
			snprintf(err, sizeof(err), "out of memory");
			goto fail;
		}
		uf->dev = d;
		uf->ns = d->ns;
		uf->nsid = unvme_ns_id(d->ns);
		uf->kind = d->kind;
		uf->capacity = d->capacity;
		uf->lba_shift = (uint32_t)__builtin_ctz(d->lba_size);
		f->engine_data = uf;
		if (ufio_check_file(td, f, d, o->ks, err, sizeof(err)))
			goto fail;
		f->real_file_size = d->capacity;
		f->filetype = FIO_TYPE_BLOCK;
		fio_file_set_size_known(f);
	}
	return 0;
fail:
	log_err("unvme: %s\n", err);
	put_files(td);
	return 1;
}

static int ufio_init(struct thread_data *td)
{
	struct ufio_opts *o = td->eo;
	struct ufio_thread *t = calloc(1, sizeof(*t));
	if (!t)
		return 1;
	t->ks = o->ks;
	t->job = td->o.name;
	t->events = calloc(td->o.iodepth + 1, sizeof(*t->events));
	t->queued_ios = calloc(td->o.iodepth + 1, sizeof(*t->queued_ios));
	t->files = calloc(td->files_index + 1, sizeof(*t->files));
	td->io_ops_data = t;
	if (!t->events || !t->files || !t->queued_ios)
		return 1;

	struct fio_file *f;
	unsigned int i;
	bool pinned = fio_option_is_set(&td->o, cpumask);
	for_each_file(td, f, i) {
		struct ufio_file *uf = f->engine_data;
		if (!uf) {
			log_err("unvme: job '%s': %s was not set up\n", t->job, f->file_name);
			return 1;
		}
		struct ufio_dev *d = uf->dev;
		bool shared;
		unsigned slot;
		int core = ufio_dev_assign_core(d, &shared, &slot);
		if (shared) {
			char mask[64];
			if (d->core_mask)
				snprintf(mask, sizeof(mask), "core_mask 0x%llx",
					 (unsigned long long)d->core_mask);
			else
				snprintf(mask, sizeof(mask), "no core_mask: every CPU fio may use");
			log_info("unvme: warning: %s: more jobs than its %u queue%s (%s): jobs share "
				 "cores from job %u on (core %d)\n", d->name, d->ncores,
				 d->ncores == 1 ? "" : "s", mask, slot + 1, core);
		}
		if (!pinned) {
			/* the job runs on its core of the first device, as the SDK's queue did */
			cpu_set_t set;
			CPU_ZERO(&set);
			CPU_SET(core, &set);
			if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0)
				log_info("unvme: warning: job '%s' cannot be pinned to core %d\n",
					 t->job, core);
			pinned = true;
		}
		struct unvme_qpair_opts qo = { 0 };
		qo.depth = td->o.iodepth + 1 > d->queue_depth ? td->o.iodepth + 1 : d->queue_depth;
		int rc = unvme_qpair_create(d->ctrlr, &qo, &uf->qp);
		if (rc) {
			log_err("unvme: job '%s': %s: cannot create a queue pair of depth %u: %s\n",
				t->job, d->name, qo.depth, unvme_errmsg());
			return 1;
		}
		uf->t = t;
		t->files[t->nfiles++] = uf;
	}
	return 0;
}

static void ufio_cleanup(struct thread_data *td)
{
	struct ufio_thread *t = td->io_ops_data;
	/* fio has freed its file structures by now (close_and_free_files runs first): the job's
	 * files are released from the engine's own list, so the last job closes the device with
	 * a normal shutdown (which makes a device's volatile write cache durable) */
	if (t) {
		struct fio_file *f;
		unsigned int i;
		for_each_file(td, f, i)
			for (unsigned k = 0; k < t->nfiles; k++)
				if (f->engine_data == t->files[k])
					f->engine_data = NULL;
		for (unsigned k = 0; k < t->nfiles; k++)
			release_file(t->files[k]);
		t->nfiles = 0;
	}
	put_files(td); /* files set up but never given to the job's thread */
	if (t) {
		free(t->events);
		free(t->queued_ios);
		free(t->files);
		free(t);
	}
	td->io_ops_data = NULL;
}

static int ufio_open_file(struct thread_data *td, struct fio_file *f)
{
	return f->engine_data ? 0 : 1;
}

static int ufio_close_file(struct thread_data *td, struct fio_file *f)
{
	return 0;
}

static int ufio_get_file_size(struct thread_data *td, struct fio_file *f)
{
	struct ufio_file *uf = f->engine_data;
	if (!uf)
		return 1;
	f->real_file_size = uf->capacity;
	fio_file_set_size_known(f);
	return 0;
}

/* ---- memory: fio's buffers are DMA memory ---- */

static int ufio_iomem_alloc(struct thread_data *td, size_t total)
{
	td->orig_buffer = unvme_dma_alloc(total, 4096);
	if (!td->orig_buffer) {
		log_err("unvme: job '%s': cannot allocate %zu bytes of DMA memory: %s\n",
			td->o.name, total, unvme_errmsg());
		return 1;
	}
	return 0;
}

static void ufio_iomem_free(struct thread_data *td)
{
	unvme_dma_free(td->orig_buffer);
	td->orig_buffer = NULL;
}

static int ufio_io_u_init(struct thread_data *td, struct io_u *io_u)
{
	struct ufio_opts *o = td->eo;
	struct ufio_iou *iu = calloc(1, sizeof(*iu));
	if (!iu)
		return 1;
	iu->io_u = io_u;
	if (o->ks > NVME_KVV_INLINE_KEY) {
		iu->key_dma = unvme_dma_zalloc(KEY_SLOT, KEY_SLOT);
		if (!iu->key_dma) {
			free(iu);
			return 1;
		}
	}
	io_u->engine_data = iu;
	return 0;
}

static void ufio_io_u_free(struct thread_data *td, struct io_u *io_u)
{
	struct ufio_iou *iu = io_u->engine_data;
	if (iu) {
		unvme_dma_free(iu->key_dma);
		free(iu);
	}
	io_u->engine_data = NULL;
}

__attribute__((visibility("default"))) struct ioengine_ops ioengine = {
	.name = "unvme",
	.version = FIO_IOOPS_VERSION,
	.flags = FIO_DISKLESSIO | FIO_NODISKUTIL | FIO_NOEXTEND | FIO_MEMALIGN | FIO_RAWIO |
		 FIO_ASYNCIO_SETS_ISSUE_TIME,
	.setup = ufio_setup,
	.init = ufio_init,
	.queue = ufio_queue,
	.commit = ufio_commit,
	.getevents = ufio_getevents,
	.event = ufio_event,
	.cleanup = ufio_cleanup,
	.open_file = ufio_open_file,
	.close_file = ufio_close_file,
	.get_file_size = ufio_get_file_size,
	.iomem_alloc = ufio_iomem_alloc,
	.iomem_free = ufio_iomem_free,
	.io_u_init = ufio_io_u_init,
	.io_u_free = ufio_io_u_free,
	.get_zoned_model = ufio_zoned_model,
	.report_zones = ufio_report_zones,
	.reset_wp = ufio_reset_wp,
	.get_max_open_zones = ufio_max_open_zones,
	.option_struct_size = sizeof(struct ufio_opts),
	.options = ufio_options,
};
