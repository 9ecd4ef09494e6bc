/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One job of a fabrics transport run on a thread of its own, so that the thread that asked
 * for it does not wait for the network: a queue's connection made again during a recovery
 * (TCP or RDMA connect, Connect, DH-HMAC-CHAP), whose result the queue's owner picks up at
 * its next poll. The job's failure message (unvme_errmsg is per thread) is carried over to
 * the thread that takes the result.
 */
#ifndef UNVME_FABRICS_NVMF_ASYNC_H
#define UNVME_FABRICS_NVMF_ASYNC_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

struct nvmf_async {
	pthread_t thread;
	bool started;           /* a thread to join (the starter's) */
	_Atomic bool done;      /* the job returned: rc and why are set */
	int rc;
	char why[512];
	int (*fn)(void *arg);
	void *arg;
};

/* Runs fn(arg) on a new thread: 0, or a negative errno with a message when it cannot start.
 * A previous job must have been taken (nvmf_async_take) or waited for. */
int nvmf_async_start(struct nvmf_async *a, int (*fn)(void *arg), void *arg);
/* Is a job started and not taken yet? */
static inline bool nvmf_async_pending(const struct nvmf_async *a)
{
	return a->started;
}
/* Without waiting: -EINPROGRESS while the job runs; then (the thread joined) its result,
 * with its message on the calling thread when it failed. */
int nvmf_async_take(struct nvmf_async *a);
/* Waits for the job (if one was started) and returns its result as nvmf_async_take does, 0
 * when there was none. */
int nvmf_async_wait(struct nvmf_async *a);

#endif
