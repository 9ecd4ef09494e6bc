/* SPDX-License-Identifier: BSD-3-Clause */
/* The choice of verbs (rv_default) and what every implementation shares. */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "verbs.h"

#ifndef RV_HAVE_IBV
const struct rv_ops *const rv_ibv = NULL;
#endif

static _Atomic(const struct rv_ops *) chosen;
static atomic_bool chosen_set;

const struct rv_ops *rv_default(void)
{
	if (atomic_load(&chosen_set))
		return atomic_load(&chosen);
	const char *e = getenv("UNVME_RDMA_VERBS");
	if (e && !strcmp(e, "fake"))
		return &rv_fake;
	return rv_ibv;
}

void rv_set_default(const struct rv_ops *ops)
{
	atomic_store(&chosen, ops);
	atomic_store(&chosen_set, ops != NULL);
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

int rv_connect_wait(struct rv_ep *ep, int timeout_ms)
{
	uint64_t end = now_ms() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0);
	for (;;) {
		switch (rv_ep_event(ep)) {
		case RV_EV_ESTABLISHED:
			return 0;
		case RV_EV_REJECTED:
			return -ECONNREFUSED;
		case RV_EV_UNREACHABLE:
			return -EHOSTUNREACH;
		case RV_EV_DISCONNECTED:
			return -ECONNRESET;
		case RV_EV_NONE:
			break;
		}
		uint64_t now = now_ms();
		if (now >= end)
			return -ETIMEDOUT;
		rv_wait(ep, (int)(end - now > 100 ? 100 : end - now));
	}
}

const char *rv_wc_status_name(unsigned status)
{
	static const char *const names[] = {
		[RV_WC_OK] = "success",
		[RV_WC_FLUSH] = "flushed (the queue pair failed)",
		[RV_WC_LOC_LEN] = "local length error",
		[RV_WC_LOC_PROT] = "local protection error",
		[RV_WC_REM_ACCESS] = "remote access error",
		[RV_WC_REM_INV_REQ] = "remote invalid request",
		[RV_WC_RETRY] = "transport retries exceeded",
		[RV_WC_OTHER] = "error",
	};
	return status < sizeof(names) / sizeof(names[0]) && names[status] ? names[status] : "error";
}
