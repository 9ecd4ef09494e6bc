/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Keep Alive (NVMe Base 2.0 section 3.9): a controller that hears nothing from its host for
 * KATO ends the association, so an idle application must still speak. One thread per
 * controller (not per queue) sends Keep Alive every KATO / 2 on the admin connection.
 *
 * It is also the one that notices an admin connection that died while nothing else was
 * running, and then starts the reconnect (the driver's recovery, recovery.c), as an I/O queue's
 * poll would.
 */
#include <errno.h>
#include <time.h>

#include "lib/driver/ctrlr.h"
#include "tcp_ctrlr.h"
#include "lib/common/thread.h"

static void *ka_main(void *arg)
{
	struct tcp_ctrlr *tc = arg;
	uint32_t interval = tc->p.kato_ms / 2;
	if (interval == 0)
		interval = 1;
	pthread_mutex_lock(&tc->ka_mu);
	while (!tc->ka_stop) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += interval / 1000;
		ts.tv_nsec += (long)(interval % 1000) * 1000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		int w = 0;
		while (!tc->ka_stop && w != ETIMEDOUT)
			w = pthread_cond_timedwait(&tc->ka_cv, &tc->ka_mu, &ts);
		if (tc->ka_stop)
			break;
		pthread_mutex_unlock(&tc->ka_mu);
		pthread_mutex_lock(&tc->lock);
		if (atomic_load(&tc->assoc) == ASSOC_LIVE)
			nvmf_keep_alive(&tc->fab); /* a failure marks the association broken */
		pthread_mutex_unlock(&tc->lock);
		struct unvme_ctrlr *c = tc->c;
		if (c->failed && !c->gave_up && !atomic_load(&tc->closing))
			ctrlr_recover_fatal(c);
		pthread_mutex_lock(&tc->ka_mu);
	}
	pthread_mutex_unlock(&tc->ka_mu);
	return NULL;
}

void tcp_keepalive_start(struct tcp_ctrlr *tc)
{
	if (!tc->p.kato_ms || tc->ka_running)
		return;
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_destroy(&tc->ka_cv);
	pthread_cond_init(&tc->ka_cv, &ca);
	pthread_condattr_destroy(&ca);
	tc->ka_stop = false;
	if (unvme_thread_start(&tc->ka_thread, ka_main, tc) == 0)
		tc->ka_running = true;
	else
		tcp_report(tc, "cannot start the keep-alive thread: the controller may end the "
			   "association after %u ms without commands", tc->p.kato_ms);
}

void tcp_keepalive_stop(struct tcp_ctrlr *tc)
{
	if (!tc->ka_running)
		return;
	pthread_mutex_lock(&tc->ka_mu);
	tc->ka_stop = true;
	pthread_cond_signal(&tc->ka_cv);
	pthread_mutex_unlock(&tc->ka_mu);
	pthread_join(tc->ka_thread, NULL);
	tc->ka_running = false;
}
