/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Test environment for the NVMe/RDMA host (test_rdma_host.c, test_rdma_recovery.c), in one
 * process over the fake verbs (rv_fake, made the host transport's verbs at load: no RDMA device
 * is needed): our target with an "rdma:" listener, and a relay between host and target that
 * can cut every connection, hold traffic, answer Connect late, and lie (the fake's keys are the
 * fabric's, so the relay passes capsules on while the target moves data with the host's keys).
 */
#ifndef UNVME_TEST_RDMA_ENV_H
#define UNVME_TEST_RDMA_ENV_H

#include <stdbool.h>
#include <stdint.h>

#include "unvme/unvme.h"

#define NQN "nqn.2024-01.io.unvme.test:rdma-host"
#define HOST_OK "nqn.2014-08.io.unvme.test:rdma-host-ok" /* on the target's allow-list */
#define HOST_NO "nqn.2014-08.io.unvme.test:rdma-host-no"
#define ADDR "10.9.9.9"
#define GUARD_MS 10000 /* hang guard */

/* The running target's port. */
extern unsigned tgt_port;

/* Starts the target: subsystem NQN (a 16 MiB namespace of 512-byte blocks) for HOST_OK, with
 * DH-HMAC-CHAP when secret is not NULL. 0, or the error (message on stderr). */
int target_up_auth(const char *secret, const char *ctrl_secret, const char *dhgroup);
int target_up(void);
void target_down(void);

/* unvme_ctrlr_open of NQN at ADDR:port as host, with query's options (NULL: none). */
int open_at(unsigned port, const char *host, const char *query, const struct unvme_ctrlr_opts *o,
	    struct unvme_ctrlr **c);

/* What the relay makes of the next successful I/O response (admin responses pass as they are). */
enum lie {
	LIE_NONE,
	LIE_CID_IDLE,      /* it names a command id that is not in flight */
	LIE_CID_RANGE,     /* ... one past every id of the queue */
	LIE_LONG,          /* it is 20 bytes */
	LIE_SHORT,         /* ... 8 bytes */
	LIE_DROP,          /* it never comes */
};

/* Starts the relay in front of the running target: its port, 0 on failure. */
unsigned relay_start(void);
void relay_stop(void);
/* Breaks every connection at the relay's next turn; wait: returns once it has. */
void relay_cut(bool wait);
/* Tells the lie once; relay_lie_left says LIE_NONE once it is told. */
void relay_lie(enum lie lie);
enum lie relay_lie_left(void);
/* Rejects connection requests with this NVMe/RDMA CM status (0: accepts them again). */
void relay_reject(uint16_t cm_status);
/* The next accept is bad: 1 without NVMe/RDMA private data, 2 with a CRQSIZE of 2. */
void relay_bad_accept(int how);
/* Stops (true) or resumes moving anything; what is sent stays in flight meanwhile. */
void relay_hold(bool hold);
/* Connections accepted from now on have their Connect answered ms late. */
void relay_delay_connect(unsigned ms);
/* Connect answers held so far; connections accepted so far. */
unsigned relay_delayed(void);
unsigned relay_accepted(void);

#endif
