/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Poller threads: each serves its own set of connections, start to end (socket, commands,
 * backing queue pairs), so host queues on different pollers share no lock and no cache line.
 * A poller spins while there is work and for a while after (a host at queue depth 1 sends its
 * next command within microseconds), then sleeps in epoll until a socket has data; it never
 * sleeps while a command is at a backing device.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "lib/common/clock.h"
#include "lib/driver/ctrlr.h"
#include "tgt.h"
#include "lib/common/thread.h"

#define SPIN_NS 200000        /* keep polling this long after the last work */
#define BUSY_SPIN_NS 50000    /* with commands at a device: spin this long, then nap ... */
#define NAP_NS 5000           /* ... this long at a time, letting a device thread on this core run */
#define SLEEP_MS 100          /* epoll timeout: how soon stop and keep alive are noticed */
#define CLOSE_GRACE_MS 2000   /* a closing connection gets this long to send what is queued */

void tgt_poller_adopt(struct unvme_target *t, struct tgt_conn *c)
{
	uint32_t i = atomic_fetch_add(&t->next_poller, 1) % (uint32_t)t->npollers;
	struct tgt_poller *p = &t->pollers[i];
	c->p = p;
	pthread_mutex_lock(&p->inbox_lock);
	c->next = p->inbox;
	__atomic_store_n(&p->inbox, c, __ATOMIC_RELEASE); /* the poller peeks without the lock */
	pthread_mutex_unlock(&p->inbox_lock);
	uint64_t one = 1;
	(void)!write(p->evfd, &one, sizeof(one));
}

static void take_inbox(struct tgt_poller *p)
{
	pthread_mutex_lock(&p->inbox_lock);
	struct tgt_conn *c = p->inbox;
	__atomic_store_n(&p->inbox, NULL, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&p->inbox_lock);
	while (c) {
		struct tgt_conn *next = c->next;
		struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
		c->ep_events = EPOLLIN;
		epoll_ctl(p->epfd, EPOLL_CTL_ADD, tgt_conn_wait_fd(c), &ev);
		c->next = p->conns;
		p->conns = c;
		p->nconns++;
		tgt_info(p->t, "connection from %s (poller %d)", c->peer, p->idx);
		c = next;
	}
}

static void drop(struct tgt_poller *p, struct tgt_conn **pp)
{
	struct tgt_conn *c = *pp;
	*pp = c->next;
	p->nconns--;
	epoll_ctl(p->epfd, EPOLL_CTL_DEL, tgt_conn_wait_fd(c), NULL);
	tgt_info(p->t, "connection from %s closed: %s", c->peer, c->why[0] ? c->why : "done");
	tgt_conn_free(c);
}

static void *poller_main(void *arg)
{
	struct tgt_poller *p = arg;
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0); /* naps end when asked (NAP_NS) */
	char name[16];
	snprintf(name, sizeof(name), "unvme-tgt%d", p->idx);
	pthread_setname_np(pthread_self(), name);
	struct unvme_target *t = p->t;
	uint64_t last_work = mono_ns(), last_ka = 0;
	struct epoll_event evs[16];
	while (!atomic_load_explicit(&t->stop, memory_order_relaxed)) {
		if (__atomic_load_n(&p->inbox, __ATOMIC_RELAXED))
			take_inbox(p);
		int work = 0;
		bool busy = false;
		uint64_t now_ms = mono_ms_coarse();
		uint32_t pressure = atomic_load_explicit(&t->mem_pressure, memory_order_relaxed);
		if (pressure != p->pressure_seen) {
			/* memory ran short somewhere: give back what is kept and not in use (a
			 * connection waiting itself keeps its own, tgt_buf.c) */
			p->pressure_seen = pressure;
			for (struct tgt_conn *c = p->conns; c; c = c->next)
				if (!c->wait_cmd)
					tgt_bufs_trim(c);
			tgt_bufpool_free(t, &p->pool);
		}
		for (struct tgt_conn **pp = &p->conns; *pp;) {
			struct tgt_conn *c = *pp;
			if (!c->closing)
				work += tgt_conn_service(c);
			if (c->closing) {
				if (!c->close_ms)
					c->close_ms = now_ms;
				if (c->in_backing)
					tgt_io_poll(c);
				/* what is queued (a refusal, a TermReq) goes first, briefly */
				tgt_conn_service(c);
				if (!tgt_conn_tx_pending(c) || now_ms - c->close_ms > CLOSE_GRACE_MS) {
					drop(p, pp);
					continue;
				}
			}
			/* a socket that takes no more is retried briefly, then waited for */
			busy |= c->in_backing > 0 ||
				(tgt_conn_tx_pending(c) &&
				 (!c->tx_stall_ms || now_ms - c->tx_stall_ms < TGT_TX_SPIN_MS));
			uint32_t ev = tgt_conn_events(c, now_ms);
			if (ev != c->ep_events) {
				struct epoll_event e = {.events = ev, .data.ptr = c};
				epoll_ctl(p->epfd, EPOLL_CTL_MOD, tgt_conn_wait_fd(c), &e);
				c->ep_events = ev;
			}
			pp = &c->next;
		}
		if (now_ms - last_ka >= 100) {
			last_ka = now_ms;
			for (struct tgt_conn *c = p->conns; c; c = c->next) {
				tgt_keepalive_check(c, now_ms);
				tgt_conn_deadline(c, now_ms);
			}
		}
		uint64_t now = mono_ns();
		if (work) {
			last_work = now;
			continue;
		}
		if (busy) {
			/* Only commands at the backing devices. A device that answers within
			 * microseconds is caught spinning; for a slower one (an SSD, the latency
			 * model) short naps cost a few microseconds and give the core to whoever
			 * shares it, like the emulated device's engine thread on a small machine. */
			if (now - last_work >= BUSY_SPIN_NS) {
				struct timespec ts = {0, NAP_NS};
				nanosleep(&ts, NULL);
			}
			continue;
		}
		if (now - last_work < SPIN_NS)
			continue;
		/* an RDMA connection's descriptor fires only once armed: arm, and look once more
		 * for what came before the arming */
		for (struct tgt_conn *c = p->conns; c; c = c->next)
			if (c->rdma && !c->closing)
				work += tgt_rdma_arm(c);
		if (work) {
			last_work = mono_ns();
			continue;
		}
		int n = epoll_wait(p->epfd, evs, 16, SLEEP_MS);
		for (int i = 0; i < n; i++) {
			if (evs[i].data.ptr == NULL) {
				uint64_t v;
				(void)!read(p->evfd, &v, sizeof(v));
			}
		}
		last_work = mono_ns();
	}
	take_inbox(p);
	while (p->conns) {
		tgt_conn_close(p->conns, "the target stops");
		drop(p, &p->conns);
	}
	tgt_bufpool_free(t, &p->pool);
	return NULL;
}

int tgt_pollers_start(struct unvme_target *t)
{
	t->npollers = t->cfg->threads;
	t->pollers = calloc((size_t)t->npollers, sizeof(*t->pollers));
	if (!t->pollers)
		return -ENOMEM;
	for (int i = 0; i < t->npollers; i++) {
		struct tgt_poller *p = &t->pollers[i];
		p->t = t;
		p->idx = i;
		/* buffers of ended connections a poller keeps for the next: a quarter of the total */
		p->pool.limit = t->cfg->lim.memory / 4 / (uint64_t)t->npollers;
		pthread_mutex_init(&p->inbox_lock, NULL);
		p->evfd = -1;
		p->epfd = epoll_create1(EPOLL_CLOEXEC);
		p->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (p->epfd < 0 || p->evfd < 0)
			return -errno;
		struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
		epoll_ctl(p->epfd, EPOLL_CTL_ADD, p->evfd, &ev);
		int rc = unvme_thread_start(&p->thread, poller_main, p);
		if (rc)
			return -rc;
		p->running = true;
	}
	return 0;
}

void tgt_pollers_stop(struct unvme_target *t)
{
	atomic_store(&t->stop, true);
	for (int i = 0; i < t->npollers; i++) {
		struct tgt_poller *p = &t->pollers[i];
		if (p->evfd >= 0) {
			uint64_t one = 1;
			(void)!write(p->evfd, &one, sizeof(one));
		}
	}
	for (int i = 0; i < t->npollers; i++) {
		struct tgt_poller *p = &t->pollers[i];
		if (p->running)
			pthread_join(p->thread, NULL);
		if (p->epfd >= 0)
			close(p->epfd);
		if (p->evfd >= 0)
			close(p->evfd);
		pthread_mutex_destroy(&p->inbox_lock);
	}
	free(t->pollers);
	t->pollers = NULL;
}
