/* SPDX-License-Identifier: BSD-3-Clause */
/* One asynchronous key-value call at a time, waited for (kv_wait.h). */
#include <sched.h>

#include "kv_wait.h"

static void finish(struct cli_kv_wait *w, unsigned status)
{
	atomic_store_explicit(&w->result, status, memory_order_relaxed);
	atomic_store_explicit(&w->done, true, memory_order_release);
}

/* status is the kv_result (result is completion dword 0) */
static void on_done(kv_pair *kv, unsigned int result, unsigned int status)
{
	(void)result;
	finish(kv->param.private_data, status);
}

/* kv_iterate_read_async calls back with the kv_iterate itself in the pair's place, as the
 * original SDK did */
static void on_iter_done(kv_pair *kv, unsigned int result, unsigned int status)
{
	(void)result;
	finish(((kv_iterate *)(void *)kv)->kv.param.private_data, status);
}

static void arm(kv_pair *kv, struct cli_kv_wait *w, void (*cb)(kv_pair *, unsigned, unsigned))
{
	atomic_init(&w->done, false);
	atomic_init(&w->result, 0);
	kv->param.async_cb = cb;
	kv->param.private_data = w;
}

void cli_kv_wait_arm(kv_pair *kv, struct cli_kv_wait *w)
{
	arm(kv, w, on_done);
}

void cli_kv_wait_arm_iter(kv_iterate *it, struct cli_kv_wait *w)
{
	arm(&it->kv, w, on_iter_done);
}

int cli_kv_wait(struct cli_kv_wait *w, int submit_rc)
{
	if (submit_rc != KV_SUCCESS)
		return submit_rc;
	for (unsigned spins = 0; !atomic_load_explicit(&w->done, memory_order_acquire); spins++)
		if (spins > 64)
			sched_yield();
	return (int)atomic_load_explicit(&w->result, memory_order_relaxed);
}
