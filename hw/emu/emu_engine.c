/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Engine threads (thread mode): the "hardware" that polls doorbells. All thread-mode devices
 * created with the same engine= index share one thread; it starts with the first such device
 * and exits when the last one goes. cpu= of the device that starts it pins the thread.
 *
 * A pass visits every device: admin queue, then the I/O SQs in round robin with a burst of
 * 2^AB commands each (Arbitration feature, Base 2.0 4.13.1), then completions the latency
 * model has made due. The engine never sleeps while there is work, and never keeps the CPU
 * from a thread that needs it: every 16th look that finds nothing yields (a host thread
 * sharing the CPU may be what it waits for; lib/common/backoff.h). Idle, it backs off so that
 * an idle device does not burn a core: it looks for about 100 us, then yields the CPU until
 * 1 ms of idleness, then sleeps on a futex (growing periods up to 1 ms, never past the next
 * completion the latency model has scheduled) that a doorbell write wakes at once
 * (emu_engine_kick): the host's in this process, and, for an engine whose one device has a
 * doorbell window (a device process), another process's through the window's wake word.
 * An engine with several devices, one of them shared with other processes, sleeps at most
 * WINDOW_SLEEP_NS: their doorbells cannot reach its own word.
 *
 * An engine's struct outlives its thread (it is kept for the next device of its index): a
 * host thread that rings a doorbell while the last device detaches may still kick it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "lib/common/backoff.h"
#include "lib/common/futex.h"
#include "emu_ctrl.h"
#include "lib/common/thread.h"

#define SPIN_NS       100000ull
#define YIELD_NS      1000000ull
#define SLEEP_MIN_NS  20000ull
#define SLEEP_MAX_NS  1000000ull
#define WINDOW_SLEEP_NS 100000ull
#define ADMIN_BURST   8u

struct emu_engine {
	unsigned index;
	pthread_t thread;
	bool running;                /* the thread exists (engines_lock) */
	pthread_mutex_t lock;        /* the device list */
	struct emu_ctrl **devs;
	uint32_t nr_devs;
	uint32_t cap;
	_Atomic bool stop;
	_Atomic uint32_t sleeping;   /* 1 while the thread sleeps on it (a futex) */
};

static pthread_mutex_t engines_lock = PTHREAD_MUTEX_INITIALIZER;
static struct emu_engine *engines[EMU_MAX_ENGINES];

uint32_t emu_ctrl_poll(struct emu_ctrl *c, uint64_t *next_due)
{
	/* doorbells of other processes first: acting on one may take the lock */
	uint32_t work = emu_dbwin_scan(c);
	/* a host thread is changing CC: come back on the next pass */
	if (pthread_mutex_trylock(&c->lock))
		return work + 1;
	if (atomic_load_explicit(&c->running, memory_order_acquire)) {
		work += emu_admin_run(c, ADMIN_BURST);
		uint32_t ab = c->feat[EMU_FEAT_ARBITRATION] & 0x7u;
		uint32_t burst = ab == 7 ? UINT32_MAX : 1u << ab; /* 111b: no limit */
		uint32_t n = c->nr_active_sqs;
		for (uint32_t k = 0; k < n && atomic_load_explicit(&c->running, memory_order_relaxed); k++) {
			struct emu_sq *sq = &c->sq[c->active_sqs[(c->rr_next + k) % n]];
			emu_spin_lock(&sq->busy);
			if (sq->live)
				work += emu_sq_run(c, sq, burst);
			emu_spin_unlock(&sq->busy);
		}
		if (n)
			c->rr_next = (c->rr_next + 1) % n;
		if (c->lat.enabled)
			work += emu_latency_poll(c, mono_ns(), next_due);
	}
	pthread_mutex_unlock(&c->lock);
	return work;
}

void emu_engine_kick(struct emu_ctrl *c)
{
	/* a doorbell may come while the device leaves its engine (power off): an atomic
	 * look, and a stale engine is harmless to kick (engines are never freed) */
	struct emu_engine *e = __atomic_load_n(&c->engine, __ATOMIC_ACQUIRE);
	if (e)
		futex_kick(&e->sleeping, false);
	_Atomic uint32_t *w = emu_dbwin_wake_word(c);
	if (w)
		futex_kick(w, true);
}

/* Sleeps until a doorbell kicks the engine, or ns pass. The announcement comes before one
 * more pass over the devices: a doorbell written meanwhile is either seen by the pass or
 * sees the announcement. */
static void engine_sleep(struct emu_engine *e, uint64_t ns)
{
	_Atomic uint32_t *word = &e->sleeping;
	bool shared = false;
	pthread_mutex_lock(&e->lock);
	uint32_t windows = 0;
	for (uint32_t i = 0; i < e->nr_devs; i++) {
		_Atomic uint32_t *w = emu_dbwin_wake_word(e->devs[i]);
		if (w) {
			windows++;
			if (e->nr_devs == 1) {
				word = w; /* the device process's: clients kick it */
				shared = true;
			}
		}
	}
	if (windows && !shared && ns > WINDOW_SLEEP_NS)
		ns = WINDOW_SLEEP_NS;
	futex_announce(word);
	uint32_t work = 0;
	uint64_t next_due = UINT64_MAX;
	for (uint32_t i = 0; i < e->nr_devs; i++)
		work += emu_ctrl_poll(e->devs[i], &next_due);
	pthread_mutex_unlock(&e->lock);
	if (!work && !atomic_load_explicit(&e->stop, memory_order_acquire))
		futex_wait_word(word, 1, ns, shared);
	atomic_store_explicit(word, 0, memory_order_relaxed);
}

static void *engine_main(void *arg)
{
	struct emu_engine *e = arg;
	/* sleeps end close to when asked: completions of the latency model are timed by them */
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	char name[16];
	snprintf(name, sizeof(name), "unvme-emu%u", e->index);
	pthread_setname_np(pthread_self(), name);

	uint64_t idle_since = 0, sleep_ns = 0;
	uint32_t looks = 0;
	while (!atomic_load_explicit(&e->stop, memory_order_acquire)) {
		uint32_t work = 0;
		uint64_t next_due = UINT64_MAX;
		pthread_mutex_lock(&e->lock);
		for (uint32_t i = 0; i < e->nr_devs; i++)
			work += emu_ctrl_poll(e->devs[i], &next_due);
		pthread_mutex_unlock(&e->lock);
		if (work) {
			idle_since = 0;
			sleep_ns = 0;
			continue;
		}
		uint64_t now = mono_ns();
		if (!idle_since)
			idle_since = now;
		if (next_due <= now)
			continue;
		uint64_t idle = now - idle_since;
		if (idle < SPIN_NS && ++looks % BACKOFF_YIELD_EVERY) {
			for (int i = 0; i < 32; i++)
				cpu_relax();
		} else if (idle < YIELD_NS) {
			sched_yield();
		} else {
			sleep_ns = sleep_ns ? sleep_ns * 2 : SLEEP_MIN_NS;
			if (sleep_ns > SLEEP_MAX_NS)
				sleep_ns = SLEEP_MAX_NS;
			uint64_t t = sleep_ns;
			if (next_due != UINT64_MAX && next_due - now < t)
				t = next_due - now;
			engine_sleep(e, t);
		}
	}
	return NULL;
}

/* The engine's last device went: its thread ends (engines_lock held); the struct stays. */
static void stop_thread(struct emu_engine *e)
{
	if (!e->running)
		return;
	atomic_store(&e->stop, true);
	atomic_store(&e->sleeping, 0);
	futex_wake_word(&e->sleeping, 1, false);
	pthread_join(e->thread, NULL);
	e->running = false;
}

int emu_engine_attach(struct emu_ctrl *c, char *err, size_t errlen)
{
	unsigned idx = c->p.engine;
	int rc = 0;
	pthread_mutex_lock(&engines_lock);
	struct emu_engine *e = engines[idx];
	if (!e) {
		e = calloc(1, sizeof(*e));
		if (!e) {
			rc = -ENOMEM;
			goto out;
		}
		e->index = idx;
		pthread_mutex_init(&e->lock, NULL);
		engines[idx] = e; /* kept from now on (see above) */
	}
	if (!e->running) {
		atomic_store(&e->stop, false);
		rc = -unvme_thread_start(&e->thread, engine_main, e);
		if (rc) {
			snprintf(err, errlen, "emu URI '%s': cannot start engine thread %u: %s", c->uri, idx,
				 strerror(-rc));
			goto out;
		}
		if (c->p.engine_cpu >= 0) {
			cpu_set_t set;
			CPU_ZERO(&set);
			CPU_SET(c->p.engine_cpu, &set);
			rc = -pthread_setaffinity_np(e->thread, sizeof(set), &set);
			if (rc) {
				snprintf(err, errlen, "emu URI '%s': cpu=%d: cannot pin the engine thread: %s",
					 c->uri, c->p.engine_cpu, strerror(-rc));
				atomic_store(&e->stop, true);
				atomic_store(&e->sleeping, 0);
				futex_wake_word(&e->sleeping, 1, false);
				pthread_join(e->thread, NULL);
				goto out;
			}
		}
		e->running = true;
	}
	pthread_mutex_lock(&e->lock);
	if (e->nr_devs == e->cap) {
		uint32_t cap = e->cap ? 2 * e->cap : 4;
		struct emu_ctrl **d = realloc(e->devs, cap * sizeof(*d));
		if (!d) {
			pthread_mutex_unlock(&e->lock);
			rc = -ENOMEM;
			if (!e->nr_devs)
				stop_thread(e);
			goto out;
		}
		e->devs = d;
		e->cap = cap;
	}
	e->devs[e->nr_devs++] = c;
	pthread_mutex_unlock(&e->lock);
	__atomic_store_n(&c->engine, e, __ATOMIC_RELEASE);
out:
	if (rc == -ENOMEM)
		snprintf(err, errlen, "emu URI '%s': out of memory", c->uri);
	pthread_mutex_unlock(&engines_lock);
	return rc;
}

void emu_engine_detach(struct emu_ctrl *c)
{
	struct emu_engine *e = c->engine;
	if (!e)
		return;
	pthread_mutex_lock(&engines_lock);
	pthread_mutex_lock(&e->lock);
	for (uint32_t i = 0; i < e->nr_devs; i++) {
		if (e->devs[i] == c) {
			e->devs[i] = e->devs[--e->nr_devs];
			break;
		}
	}
	bool last = e->nr_devs == 0;
	pthread_mutex_unlock(&e->lock);
	if (last)
		stop_thread(e);
	pthread_mutex_unlock(&engines_lock);
	__atomic_store_n(&c->engine, NULL, __ATOMIC_RELEASE);
}
