/* SPDX-License-Identifier: BSD-3-Clause */
/* A fabrics job on a thread of its own (nvmf_async.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lib/common/thread.h"
#include "lib/driver/errmsg.h"
#include "unvme/unvme.h"
#include "nvmf_async.h"

static void *job_main(void *arg)
{
	struct nvmf_async *a = arg;
	unvme_errmsg_clear();
	a->rc = a->fn(a->arg);
	if (a->rc)
		snprintf(a->why, sizeof(a->why), "%s", unvme_errmsg());
	/* release: rc and why are written before done says so */
	atomic_store_explicit(&a->done, true, memory_order_release);
	return NULL;
}

int nvmf_async_start(struct nvmf_async *a, int (*fn)(void *arg), void *arg)
{
	if (a->started)
		return unvme_fail(-EBUSY, "a connection is already being made");
	a->fn = fn;
	a->arg = arg;
	a->rc = 0;
	a->why[0] = '\0';
	atomic_store(&a->done, false);
	int rc = unvme_thread_start(&a->thread, job_main, a);
	if (rc)
		return unvme_fail(-rc, "cannot start a thread to connect: %s", strerror(rc));
	a->started = true;
	return 0;
}

static int result(struct nvmf_async *a)
{
	pthread_join(a->thread, NULL);
	a->started = false;
	if (a->rc)
		unvme_fail(a->rc, "%s", a->why);
	return a->rc;
}

int nvmf_async_take(struct nvmf_async *a)
{
	if (!a->started)
		return 0;
	if (!atomic_load_explicit(&a->done, memory_order_acquire))
		return -EINPROGRESS;
	return result(a);
}

int nvmf_async_wait(struct nvmf_async *a)
{
	if (!a->started)
		return 0;
	return result(a);
}
