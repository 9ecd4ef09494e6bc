/* SPDX-License-Identifier: BSD-3-Clause */
/* A command's completion as driver tests record it: how many times it was called back, and
 * the last status. */
#ifndef UNVME_TEST_SEEN_H
#define UNVME_TEST_SEEN_H

#include <stdatomic.h>

#include "unvme/unvme.h"

struct seen {
	_Atomic int count;
	_Atomic int status;
};

static void seen_cb(void *arg, const struct nvme_cqe *cpl)
{
	struct seen *s = arg;
	atomic_store(&s->status, NVME_STATUS_FROM_CQE(cpl->status));
	atomic_fetch_add(&s->count, 1);
}

#endif
