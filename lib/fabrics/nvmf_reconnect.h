/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The reconnect policy of every fabrics transport, as Linux's host has it: after a lost
 * association, try to make a new one every reconnect_delay until ctrl_loss_tmo has passed;
 * a refusal (an NVMe status from Connect: unknown subsystem, host not allowed, failed
 * authentication; or -EACCES) does not change by waiting and ends the attempts at once, as
 * does a controller being closed.
 */
#ifndef UNVME_FABRICS_NVMF_RECONNECT_H
#define UNVME_FABRICS_NVMF_RECONNECT_H

#include <stdbool.h>
#include <stdint.h>

struct nvmf_reconnect {
	uint32_t ctrl_loss_tmo_ms;
	uint32_t reconnect_delay_ms;  /* 0: 100 ms */
	/* One attempt: 0, a negative errno or a positive NVMe status, with a message. */
	int (*attempt)(void *arg);
	/* Is the controller being closed, or the reconnect no longer wanted (stop trying)? */
	bool (*closing)(void *arg);
	/* Waits ms between attempts, returning early when closing may have changed; NULL:
	 * sleeps. */
	void (*pause)(void *arg, uint32_t ms);
	void *arg;
};

/* Runs attempts until one succeeds (0, *attempts says how many it took) or the policy gives
 * up: the last attempt's negative errno (-EIO for an NVMe status) with its message; -ECANCELED
 * when closing said stop before the first attempt. */
int nvmf_reconnect_run(const struct nvmf_reconnect *r, int *attempts);

#endif
