/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The doorbell window: the doorbell part of BAR0 as memory that other processes can map.
 *
 * On a real controller every process that maps BAR0 writes its queues' doorbells straight
 * into the device. The emulated device's registers are function calls in the process that
 * created it, so a process that shares the device (a secondary, lib/driver/mp/) writes
 * its doorbells into this window instead: a memfd laid out like the doorbell area (SQ y
 * Tail at (2y) * stride, CQ y Head at (2y + 1) * stride), which the device watches like
 * hardware watches its doorbell registers. A changed value is a doorbell write, checked and
 * acted on exactly as one through emu_mmio_write32 (an invalid value is logged and raises its
 * Asynchronous Event). The admin queue's doorbells are not watched: only the process that
 * created the device runs the admin queue.
 *
 * Who watches: the engine thread in thread mode, on every pass; in inline mode (no engine)
 * a watcher thread of the device's own, which runs the queues it finds rung inline, as the
 * writing thread would have. Creating a queue clears its two doorbells in the window (as a
 * controller's doorbells start at 0), so the next owner of a queue id starts clean.
 *
 * The watcher does not poll an idle window for ever: after WATCH_SPIN_NS without a doorbell
 * it announces in the window's wake word (the page after the doorbells) that it sleeps and
 * sleeps on it (a futex in shared memory); a writer that finds the announcement after its
 * doorbell store wakes it (futex_kick). So an idle device costs no CPU, and a busy one on a
 * machine with fewer cores than pollers gives its core away instead of spinning through the
 * writer's time slice.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sched.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "lib/common/futex.h"
#include "emu_ctrl.h"
#include "lib/common/thread.h"

#define WATCH_SPIN_NS  20000ull
#define WATCH_SLEEP_MAX_NS 100000000ull /* looks at its stop flag this often */

struct emu_dbwin {
	int fd;
	_Atomic uint32_t *db;    /* the window: one word per doorbell register */
	_Atomic uint32_t *wake;  /* the page after them: 1 while the watcher sleeps */
	size_t wake_off;
	uint32_t *seen;          /* the value last acted on, per word (under lock) */
	uint32_t words;
	uint32_t scan_end;       /* past the last doorbell of a queue created (under lock) */
	size_t len;
	pthread_mutex_t lock;
	pthread_t watcher;       /* inline mode */
	bool has_watcher;
	_Atomic bool stop;
};

static void *watch_main(void *arg)
{
	struct emu_ctrl *c = arg;
	struct emu_dbwin *w = atomic_load(&c->dbwin);
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	pthread_setname_np(pthread_self(), "unvme-emu-dbw");
	uint64_t idle_since = 0;
	uint32_t looks = 0;
	while (!atomic_load_explicit(&w->stop, memory_order_acquire)) {
		if (emu_dbwin_scan(c)) {
			idle_since = 0;
			continue;
		}
		uint64_t now = mono_ns();
		if (!idle_since)
			idle_since = now;
		if (now - idle_since < WATCH_SPIN_NS) {
			/* a writer sharing this core gets it between looks */
			if (++looks % 16 == 0)
				sched_yield();
			else
				for (int i = 0; i < 32; i++)
					cpu_relax();
			continue;
		}
		futex_announce(w->wake); /* before the last look */
		if (emu_dbwin_scan(c) || atomic_load_explicit(&w->stop, memory_order_acquire)) {
			atomic_store_explicit(w->wake, 0, memory_order_relaxed);
			idle_since = 0;
			continue;
		}
		futex_wait_word(w->wake, 1, WATCH_SLEEP_MAX_NS, true);
		atomic_store_explicit(w->wake, 0, memory_order_relaxed);
		idle_since = 0;
	}
	return NULL;
}

int emu_device_doorbell_window(struct emu_device *dev, int *fd, size_t *len, uint64_t *wake_off)
{
	struct emu_ctrl *c = &dev->ctrl;
	pthread_mutex_lock(&c->lock);
	int rc = 0;
	if (atomic_load(&c->removed)) {
		rc = -ENODEV;
		goto out;
	}
	if (!c->dbwin) {
		struct emu_dbwin *w = calloc(1, sizeof(*w));
		if (!w) {
			rc = -ENOMEM;
			goto out;
		}
		w->words = (uint32_t)((c->bar_size - NVME_REG_DBS) / 4);
		long page = sysconf(_SC_PAGESIZE);
		w->wake_off = ((size_t)w->words * 4 + (size_t)page - 1) & ~((size_t)page - 1);
		w->len = w->wake_off + (size_t)page;
		w->fd = memfd_create("unvme-emu-doorbells", MFD_CLOEXEC);
		w->seen = calloc(w->words, sizeof(*w->seen));
		if (w->fd < 0 || !w->seen || ftruncate(w->fd, (off_t)w->len) != 0) {
			rc = errno ? -errno : -ENOMEM;
			goto fail;
		}
		void *p = mmap(NULL, w->len, PROT_READ | PROT_WRITE, MAP_SHARED, w->fd, 0);
		if (p == MAP_FAILED) {
			rc = -errno;
			goto fail;
		}
		w->db = p;
		w->wake = (_Atomic uint32_t *)((uint8_t *)p + w->wake_off);
		pthread_mutex_init(&w->lock, NULL);
		atomic_store_explicit(&c->dbwin, w, memory_order_release);
		if (c->p.mode == EMU_MODE_INLINE) {
			rc = -unvme_thread_start(&w->watcher, watch_main, c);
			if (rc) {
				atomic_store(&c->dbwin, NULL);
				munmap(p, w->len);
				pthread_mutex_destroy(&w->lock);
				goto fail;
			}
			w->has_watcher = true;
		}
		goto have;
fail:
		if (w->fd >= 0)
			close(w->fd);
		free(w->seen);
		free(w);
		goto out;
	}
have:
	*fd = fcntl(atomic_load(&c->dbwin)->fd, F_DUPFD_CLOEXEC, 0);
	*len = atomic_load(&c->dbwin)->len;
	*wake_off = atomic_load(&c->dbwin)->wake_off;
	if (*fd < 0)
		rc = -errno;
out:
	pthread_mutex_unlock(&c->lock);
	return rc;
}

uint32_t emu_dbwin_scan(struct emu_ctrl *c)
{
	struct emu_dbwin *w = atomic_load_explicit(&c->dbwin, memory_order_acquire);
	if (__builtin_expect(!w, 1) || atomic_load_explicit(&c->removed, memory_order_relaxed))
		return 0;
	/* the changes are collected under the window's lock and acted on after it: an invalid
	 * doorbell takes the controller lock, which queue creation holds while it clears */
	uint32_t changed_off[64], changed_val[64], n = 0;
	uint32_t first = 2u << c->dstrd; /* past the admin queue's two doorbells */
	pthread_mutex_lock(&w->lock);
	for (uint32_t i = first; i < w->scan_end && n < 64; i++) {
		uint32_t v = atomic_load_explicit(&w->db[i], memory_order_acquire);
		if (v != w->seen[i]) {
			w->seen[i] = v;
			changed_off[n] = NVME_REG_DBS + 4 * i;
			changed_val[n++] = v;
		}
	}
	pthread_mutex_unlock(&w->lock);
	for (uint32_t k = 0; k < n; k++)
		emu_doorbell_write(c, changed_off[k], changed_val[k]);
	return n;
}

_Atomic uint32_t *emu_dbwin_wake_word(struct emu_ctrl *c)
{
	struct emu_dbwin *w = atomic_load_explicit(&c->dbwin, memory_order_acquire);
	return w ? w->wake : NULL;
}

void emu_dbwin_clear(struct emu_ctrl *c, uint32_t qid, bool sq)
{
	struct emu_dbwin *w = atomic_load(&c->dbwin);
	if (!w)
		return;
	uint32_t i = (2 * qid + (sq ? 0 : 1)) << c->dstrd;
	if (i >= w->words)
		return;
	pthread_mutex_lock(&w->lock);
	atomic_store_explicit(&w->db[i], 0, memory_order_relaxed);
	w->seen[i] = 0;
	if (i + 1 > w->scan_end) /* the engine's pass looks no further than the queues in use */
		w->scan_end = i + 1;
	pthread_mutex_unlock(&w->lock);
}

void emu_dbwin_stop(struct emu_ctrl *c)
{
	struct emu_dbwin *w = atomic_load(&c->dbwin);
	if (!w || !w->has_watcher)
		return;
	atomic_store(&w->stop, true);
	atomic_store(w->wake, 0);
	futex_wake_word(w->wake, 1, true);
	pthread_join(w->watcher, NULL);
	w->has_watcher = false;
}

void emu_dbwin_free(struct emu_ctrl *c)
{
	struct emu_dbwin *w = atomic_load(&c->dbwin);
	if (!w)
		return;
	emu_dbwin_stop(c);
	atomic_store(&c->dbwin, NULL);
	munmap((void *)w->db, w->len);
	close(w->fd);
	pthread_mutex_destroy(&w->lock);
	free(w->seen);
	free(w);
}
