/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Keep Alive on the admin connection (the thread is the fabrics layer's, nvmf_keepalive.h):
 * every KATO / 2 a Keep Alive, and an admin connection that died while nothing else was
 * running starts the reconnect (the driver's recovery, recovery.c), as an I/O queue's poll
 * would.
 */
#include "lib/driver/ctrlr.h"
#include "tcp_ctrlr.h"

static void ka_tick(void *arg)
{
	struct tcp_ctrlr *tc = arg;
	pthread_mutex_lock(&tc->lock);
	if (atomic_load(&tc->assoc) == ASSOC_LIVE)
		nvmf_keep_alive(&tc->fab); /* a failure marks the association broken */
	pthread_mutex_unlock(&tc->lock);
	struct unvme_ctrlr *c = tc->c;
	if (c->failed && !c->gave_up && !atomic_load(&tc->closing))
		ctrlr_recover_fatal(c);
}

void tcp_keepalive_start(struct tcp_ctrlr *tc)
{
	if (nvmf_keepalive_start(&tc->ka, tc->p.kato_ms, ka_tick, tc))
		tcp_report(tc, "cannot start the keep-alive thread: the controller may end the "
			   "association after %u ms without commands", tc->p.kato_ms);
}

void tcp_keepalive_stop(struct tcp_ctrlr *tc)
{
	nvmf_keepalive_stop(&tc->ka);
}
