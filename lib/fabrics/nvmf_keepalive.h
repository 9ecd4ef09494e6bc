/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Keep Alive for every fabrics transport (NVMe Base 2.0 section 3.9): a controller that hears
 * nothing from its host for KATO ends the association, so an idle application must still
 * speak. One thread per controller (not per queue) calls the transport's tick every KATO / 2;
 * the tick sends Keep Alive on the admin queue (nvmf_keep_alive) and notices an association
 * that broke while nothing else ran, so the driver's recovery can reconnect.
 */
#ifndef UNVME_FABRICS_NVMF_KEEPALIVE_H
#define UNVME_FABRICS_NVMF_KEEPALIVE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct nvmf_keepalive {
	pthread_t thread;
	bool running;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stop;
	uint32_t interval_ms;
	void (*tick)(void *arg);
	void *arg;
};

void nvmf_keepalive_init(struct nvmf_keepalive *k);
void nvmf_keepalive_destroy(struct nvmf_keepalive *k);
/* Starts the thread calling tick(arg) every kato_ms / 2 (nothing when kato_ms is 0 or it
 * runs already). 0, or a negative errno when the thread cannot start. */
int nvmf_keepalive_start(struct nvmf_keepalive *k, uint32_t kato_ms, void (*tick)(void *arg), void *arg);
/* Stops and joins the thread (not from tick). */
void nvmf_keepalive_stop(struct nvmf_keepalive *k);

#endif
