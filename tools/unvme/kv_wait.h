/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Waiting for one asynchronous key-value call (kv_*_async, kv_iterate_read_async): the tool
 * sends one call at a time, so it arms the pair's callback, submits, and spins (yielding)
 * until the callback has run.
 */
#ifndef UNVME_TOOL_KV_WAIT_H
#define UNVME_TOOL_KV_WAIT_H

#include <stdatomic.h>
#include <stdbool.h>

#include "kv_apis.h"

struct cli_kv_wait {
	atomic_bool done;
	_Atomic unsigned result;
};

/* Points the pair's callback at w. */
void cli_kv_wait_arm(kv_pair *kv, struct cli_kv_wait *w);
/* The same for kv_iterate_read_async, whose callback gets the kv_iterate. */
void cli_kv_wait_arm_iter(kv_iterate *it, struct cli_kv_wait *w);
/* submit_rc is what the _async call returned: a refusal is the result (no callback comes);
 * else waits for the callback and returns its kv_result. */
int cli_kv_wait(struct cli_kv_wait *w, int submit_rc);

#endif
