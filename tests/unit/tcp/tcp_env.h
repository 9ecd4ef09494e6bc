/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Test environment for NVMe/TCP: an in-process target on 127.0.0.1 (an ephemeral port, so
 * parallel runs do not collide) and a TCP proxy in front of it that can cut every connection
 * or hold traffic, for the host's reconnect and timeout paths.
 */
#ifndef UNVME_TEST_TCP_ENV_H
#define UNVME_TEST_TCP_ENV_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/target/target.h"
#include "tests/unit/fabrics_capsule.h"

/* Starts a target exporting device as subsystem nqn to any host (or to host with secret when
 * host is not NULL). Returns its port, 0 on failure (message on stderr). */
uint16_t env_target(struct unvme_target **t, const char *nqn, const char *device, const char *host,
		    const char *secret, const char *ctrl_secret, const char *dhgroup);

/* The same with TLS required: host may connect with the PSK key (NVMeTLSkey-1:...:). */
uint16_t env_target_tls(struct unvme_target **t, const char *nqn, const char *device, const char *host,
			const char *key);

/* The same, open to any host, with one limit of docs/nvme-tcp.md's set (e.g. max_io_queues). */
uint16_t env_target_limited(struct unvme_target **t, const char *nqn, const char *device,
			    const char *limit, uint64_t value);

struct proxy;
/* A proxy from an ephemeral port to 127.0.0.1:port. */
struct proxy *proxy_start(uint16_t port);
uint16_t proxy_port(const struct proxy *p);
/* Closes every connection now (the host sees its connections drop). */
void proxy_cut(struct proxy *p);
/* Stops (true) or resumes forwarding; held connections stay open. */
void proxy_hold(struct proxy *p, bool hold);
/* Connections accepted from now on hold the host's bytes after its ICReq (the first 128)
 * for ms: the target answers Connect that much later (0: no more). */
void proxy_delay_connect(struct proxy *p, unsigned ms);
/* Connections whose Connect was held so far. */
unsigned proxy_delayed(const struct proxy *p);
/* From now on, on every connection, the target's bytes are held for ms after each host
 * command of the kinds in the mask (1u << OFF_POLL_PROPERTY, 1u << OFF_POLL_KEEP_ALIVE,
 * tests/unit/fabrics_capsule.h) passed:
 * its answer comes that late (0: no more). */
void proxy_hold_answers(struct proxy *p, unsigned kinds, unsigned ms);
/* The next n Connects of an I/O queue: the connection is closed instead (the host's queue
 * connect fails; the admin queue's are passed). */
void proxy_refuse_io_connect(struct proxy *p, unsigned n);
/* From now on, a queue the host ends with a Disconnect: the Disconnect is held back and the
 * connection stays open towards the target for ms more, so the target learns of the end that
 * late (0: at once). Other connections end at once. */
void proxy_linger_close(struct proxy *p, unsigned ms);
/* Host commands of a kind seen so far. */
unsigned proxy_seen(const struct proxy *p, enum off_poll_kind kind);
/* Connections accepted so far. */
unsigned proxy_accepted(const struct proxy *p);
void proxy_stop(struct proxy *p);

uint64_t env_now_ms(void);

#endif
