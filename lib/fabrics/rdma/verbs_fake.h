/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The in-process verbs (rv_fake) for unit tests: what a test may do to the fabric besides
 * using the rv table. See verbs_fake.c for the model.
 */
#ifndef UNVME_FABRICS_RDMA_VERBS_FAKE_H
#define UNVME_FABRICS_RDMA_VERBS_FAKE_H

#include "verbs.h"

/* The fabric fails under ep as a cable pull would: both queue pairs of its connection go to
 * the error state (what was posted completes with RV_WC_FLUSH) and both sides see
 * RV_EV_DISCONNECTED. */
void rv_fake_break(struct rv_ep *ep);

/* Holds the send completions of ep (they are generated but not given to rv_poll) until
 * released: a peer's answer then arrives before the completion of what it answers, which
 * real devices do. */
void rv_fake_hold_send_wc(struct rv_ep *ep, bool hold);

/* Registered regions still alive and endpoints not destroyed (leak checks in tests). */
unsigned rv_fake_live_mrs(void);
unsigned rv_fake_live_eps(void);

#endif
