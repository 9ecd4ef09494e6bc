/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completion threads: one per core of the devices' cq_thread_masks, pinned there. Each is the
 * poller of a set of async queue pairs (split queue pairs: the API threads submit on them,
 * kv_submit.c): it rings their SQ doorbells for what was submitted, reaps their completions
 * and calls the callbacks. Ringing here takes the doorbell write off the submitting core,
 * and with the emulated device in inline mode (whose work runs on the ringing thread) the
 * device's work too, which is most of a command's cost: the submitting core only builds
 * commands. While it rests (below) the submitters ring for themselves.
 *
 * Never asleep while commands are in flight, and never keeping a CPU from the thread that
 * will complete them: every 16th look that finds nothing yields (lib/common/backoff.h), as
 * every look does on a core shared with submitters, so a device thread, a submitter or
 * another process's device that needs this CPU gets it (with more pollers than CPUs a poller
 * that only spins hands over once per time slice). With nothing in flight it backs off so
 * that an idle SDK does not burn a core: spin for 50 us, then yield until 1 ms of idleness,
 * then sleep on a futex until a submitter kicks it (a submission while it rests wakes it at
 * once) or cq_idle_sleep_max_us (default 1000) passes.
 *
 * Coalescing. A poller that looks again the moment after a look that found nothing takes
 * the CQ entry's cache line away from the core where the device writes it (a device thread,
 * real hardware, or a submitter that rang while this thread rested) and reaps one completion
 * per look, and it rings for one new submission per look, so each command costs cache-line
 * transfers on both cores (50 to 250 ns each on these VMs). So after a look that found
 * nothing the thread spins a while (never sleeping) before it looks again, and rings and
 * reaps what arrived meanwhile in one batch: cq_coalesce_max_us (default 8, 0 turns it off)
 * while looks keep finding several completions, 1/32 of it while they find one at a time, as
 * a lone command in flight does, whose latency is not traded for batches.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/common/backoff.h"
#include "lib/common/clock.h"
#include "lib/common/compiler.h"
#include "lib/common/futex.h"
#include "kv_req.h"
#include "lib/common/thread.h"


/* Reaps what has completed. Returns the number of completions. It polls even when nothing
 * looks outstanding: asking would read the submitter's counter, a cache line the submitting
 * core writes on every command, while an idle poll reads one CQ entry. */
int kv_queue_serve(struct kv_queue *q)
{
	int n = unvme_qpair_poll(q->qp, 0);
	if (n >= 0)
		return n;
	/* The controller was reset after a fatal status (or failed): the driver leaves a split
	 * queue to its owner, who must hold off both sides. The submitters are held off by the
	 * queue's lock; the commands in flight are called back with an error. */
	kv_queue_lock(q);
	int rc = unvme_qpair_recover(q->qp);
	kv_queue_unlock(q);
	if (rc == 0)
		kv_log(1, "async queue %u of device %d: rebuilt after a controller reset",
		       unvme_qpair_id(q->qp), q->dev->idx);
	return rc == 0 ? 1 : 0;
}

bool kv_queue_try_poll(struct kv_queue *q)
{
	if (q->owner || atomic_flag_test_and_set_explicit(&q->poll_lock, memory_order_acquire))
		return false;
	kv_poll_enter();
	kv_queue_serve(q);
	kv_poll_leave();
	atomic_flag_clear_explicit(&q->poll_lock, memory_order_release);
	return true;
}

static uint32_t in_flight(const struct kv_cq_thread *t)
{
	uint32_t n = 0;
	for (int i = 0; i < t->nqueues; i++)
		n += unvme_qpair_outstanding(t->queues[i]->qp);
	return n;
}

/* Waits, spinning, until about half of what is in flight should have completed. */
/* Spins for ns nanoseconds, or until the thread is told to stop. */
static void spin_for(const struct kv_cq_thread *t, uint64_t now, uint64_t ns)
{
	uint64_t until = now + ns;
	while (mono_ns() < until && !atomic_load_explicit(&t->stop, memory_order_relaxed))
		for (int i = 0; i < 8; i++)
			cpu_relax();
}

/* Back to polling at full rate: the submitters leave the doorbells to this thread again. */
static void wake(struct kv_cq_thread *t, bool *resting)
{
	*resting = false;
	atomic_store_explicit(&t->resting, false, memory_order_relaxed);
}

/* Asleep until a submitter kicks it (kv_cq_thread_kick) or max_us pass. The announcement
 * comes before the last look for work: a submission either sees it or is seen. */
static void sleep_until_kicked(struct kv_cq_thread *t, uint32_t max_us)
{
	futex_announce(&t->sleeping);
	if (!in_flight(t) && !atomic_load_explicit(&t->stop, memory_order_acquire))
		futex_wait_word(&t->sleeping, 1, (uint64_t)(max_us ? max_us : 1) * 1000u, false);
	atomic_store_explicit(&t->sleeping, 0, memory_order_relaxed);
}

void kv_cq_thread_kick(struct kv_cq_thread *t)
{
	futex_kick(&t->sleeping, false);
}

static void *cq_main(void *arg)
{
	struct kv_cq_thread *t = arg;
	kv_mark_cq_thread();
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(t->core, &set);
	if (t->core < kv_cpu_count() && sched_setaffinity(0, sizeof(set), &set))
		kv_err("completion thread: cannot pin to core %d: %s (it runs unpinned)", t->core,
		       strerror(errno));
	uint64_t idle_since = 0;
	uint64_t wait_ns = t->coalesce_max_ns / 32; /* after a look that found nothing */
	uint32_t looks = 0;
	bool resting = false; /* this thread's copy of t->resting */
	while (!atomic_load_explicit(&t->stop, memory_order_acquire)) {
		int work = 0;
		for (int i = 0; i < t->nqueues; i++)
			work += kv_queue_serve(t->queues[i]);
		if (work) {
			if (resting)
				wake(t, &resting);
			wait_ns = work > 1 ? t->coalesce_max_ns : t->coalesce_max_ns / 32;
			idle_since = 0;
			continue;
		}
		uint64_t now = mono_ns();
		if (wait_ns && !idle_since && !t->shares_core)
			spin_for(t, now, wait_ns);
		if (in_flight(t)) {
			/* waiting for the device: never asleep, but the CPU goes to whoever wants
			 * it now and then (every look on a core shared with submitters): it may be
			 * what the device waits for */
			if (resting)
				wake(t, &resting);
			if (t->shares_core || ++looks % BACKOFF_YIELD_EVERY == 0)
				sched_yield();
			else
				cpu_relax();
			idle_since = 0;
			continue;
		}
		if (!idle_since)
			idle_since = now;
		uint64_t idle = now - idle_since;
		if (idle >= 50000 && !resting) {
			/* from now on the submitters ring; a command submitted before they could
			 * see this is seen in flight here (both sides fence) */
			resting = true;
			atomic_store_explicit(&t->resting, true, memory_order_relaxed);
			atomic_thread_fence(memory_order_seq_cst);
			if (in_flight(t)) {
				wake(t, &resting);
				idle_since = 0;
				continue;
			}
		}
		if (idle < 50000) {
			if (++looks % BACKOFF_YIELD_EVERY == 0)
				sched_yield();
			else
				cpu_relax();
		} else if (idle < 1000000) {
			sched_yield();
		} else {
			sleep_until_kicked(t, t->sleep_max_us);
		}
	}
	return NULL;
}

int kv_cq_threads_start(struct kv_state *s)
{
	/* one thread per completion core in use; each device's async queues are dealt round
	 * robin to the cores of its own cq_thread_mask */
	s->ncqt = 0;
	uint64_t submitters = 0;
	for (int d = 0; d < s->ndevs; d++)
		submitters |= s->devs[d].opt.core_mask;
	int ncpu = kv_cpu_count();
	for (int d = 0; d < s->ndevs; d++) {
		struct kv_dev *dev = &s->devs[d];
		int cores[MAX_CPU_CORES], ncores = 0;
		for (int c = 0; c < MAX_CPU_CORES; c++)
			if (dev->opt.cq_thread_mask >> c & 1)
				cores[ncores++] = c;
		int next = 0;
		for (int i = 0; i < dev->nqueues; i++) {
			struct kv_queue *q = &dev->queues[i];
			if (q->sync || !ncores)
				continue; /* no completion thread: the waiters poll (owner NULL) */
			int core = cores[next++ % ncores];
			struct kv_cq_thread *t = NULL;
			for (int k = 0; k < s->ncqt; k++)
				if (s->cqt[k].core == core)
					t = &s->cqt[k];
			if (!t) {
				t = &s->cqt[s->ncqt++];
				memset(t, 0, sizeof(*t));
				t->core = core;
				t->sleep_max_us = s->cfg.cq_idle_sleep_max_us;
				t->coalesce_max_ns = s->cfg.cq_coalesce_max_us * 1000u;
				t->shares_core = core >= ncpu || (submitters >> core & 1);
				atomic_init(&t->stop, false);
			}
			struct kv_queue **nq = realloc(t->queues, sizeof(*nq) * (size_t)(t->nqueues + 1));
			if (!nq)
				return KV_ERR_HEAP_ALLOC_FAILURE;
			t->queues = nq;
			t->queues[t->nqueues++] = q;
			q->owner = t;
		}
	}
	for (int k = 0; k < s->ncqt; k++) {
		struct kv_cq_thread *t = &s->cqt[k];
		int rc = unvme_thread_start(&t->tid, cq_main, t);
		if (rc) {
			kv_config_set_error("cannot start the completion thread of core %d: %s", t->core,
					    strerror(rc));
			return KV_ERR_SDK_OPEN;
		}
		t->started = true;
		kv_log(2, "completion thread on core %d serves %d queue(s)", t->core, t->nqueues);
	}
	return KV_SUCCESS;
}

void kv_cq_threads_stop(struct kv_state *s)
{
	for (int k = 0; k < s->ncqt; k++) {
		atomic_store_explicit(&s->cqt[k].stop, true, memory_order_release);
		kv_cq_thread_kick(&s->cqt[k]);
	}
	for (int k = 0; k < s->ncqt; k++) {
		if (s->cqt[k].started)
			pthread_join(s->cqt[k].tid, NULL);
		free(s->cqt[k].queues);
		s->cqt[k].queues = NULL;
		s->cqt[k].started = false;
	}
	s->ncqt = 0;
}
