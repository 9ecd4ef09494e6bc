/* SPDX-License-Identifier: BSD-3-Clause */
/* The keep-alive thread of a fabrics controller (nvmf_keepalive.h). */
#include <errno.h>
#include <time.h>

#include "lib/common/clock.h"
#include "lib/common/thread.h"
#include "nvmf_keepalive.h"

static void *ka_main(void *arg)
{
	struct nvmf_keepalive *k = arg;
	uint32_t interval = k->interval_ms ? k->interval_ms : 1;
	pthread_mutex_lock(&k->mu);
	while (!k->stop) {
		struct timespec ts = clock_deadline_ms(CLOCK_MONOTONIC, interval);
		int w = 0;
		while (!k->stop && w != ETIMEDOUT)
			w = pthread_cond_timedwait(&k->cv, &k->mu, &ts);
		if (k->stop)
			break;
		pthread_mutex_unlock(&k->mu);
		k->tick(k->arg);
		pthread_mutex_lock(&k->mu);
	}
	pthread_mutex_unlock(&k->mu);
	return NULL;
}

void nvmf_keepalive_init(struct nvmf_keepalive *k)
{
	*k = (struct nvmf_keepalive){0};
	pthread_mutex_init(&k->mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&k->cv, &ca);
	pthread_condattr_destroy(&ca);
}

void nvmf_keepalive_destroy(struct nvmf_keepalive *k)
{
	pthread_mutex_destroy(&k->mu);
	pthread_cond_destroy(&k->cv);
}

int nvmf_keepalive_start(struct nvmf_keepalive *k, uint32_t kato_ms, void (*tick)(void *arg), void *arg)
{
	if (!kato_ms || k->running)
		return 0;
	k->interval_ms = kato_ms / 2;
	k->tick = tick;
	k->arg = arg;
	k->stop = false;
	int rc = unvme_thread_start(&k->thread, ka_main, k);
	if (rc)
		return -rc; /* pthread_create's positive errno */
	k->running = true;
	return 0;
}

void nvmf_keepalive_stop(struct nvmf_keepalive *k)
{
	if (!k->running)
		return;
	pthread_mutex_lock(&k->mu);
	k->stop = true;
	pthread_cond_signal(&k->cv);
	pthread_mutex_unlock(&k->mu);
	pthread_join(k->thread, NULL);
	k->running = false;
}
