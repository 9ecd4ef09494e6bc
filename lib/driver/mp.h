/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Several processes on one controller (internal).
 *
 * The first process to open a device that can be shared (an emulated controller today)
 * becomes its primary: it holds a lock file in the run directory, runs the controller (admin
 * queue, resets, the device's IOMMU) and serves the others on a Unix socket next to the lock
 * (mp_primary.c). A later process whose lock fails is a secondary: its controller's
 * transport is mp_secondary.c, which asks the primary for what only the owner of a
 * controller does (admin commands, creating and deleting I/O queues, mapping DMA memory,
 * register reads) and does the rest itself: its I/O queue pairs are rings in its own DMA
 * memory, which the primary maps into the device, and it rings their doorbells through the
 * device's doorbell window, so its data path never passes through the primary.
 *
 * Wire format: SOCK_SEQPACKET, one request and its reply at a time per connection, file
 * descriptors as SCM_RIGHTS. Both sides are the same build (HELLO checks the version).
 */
#ifndef UNVME_DRIVER_MP_H
#define UNVME_DRIVER_MP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/un.h>

#include "unvme/spec.h"

struct unvme_ctrlr;

#define MP_VERSION 2u

enum mp_op {
	MP_HELLO = 1,      /* -> CAP, VS, the doorbell window (fd, offset, length) */
	MP_REG_READ,       /* a register below the doorbells */
	MP_ADMIN,          /* an admin command, its data in the secondary's DMA memory */
	MP_QUEUE_CREATE,   /* rings in the secondary's DMA memory -> the queue id */
	MP_QUEUE_DELETE,
	MP_DMA_MAP,        /* pages of the secondary's memfd (fd) at an IOVA */
	MP_DMA_UNMAP,
};

struct mp_req {
	uint32_t op;
	uint32_t rsvd;
	union {
		struct { uint32_t version; int32_t pid; } hello;
		struct { uint32_t off; uint32_t width; } reg;
		struct { struct nvme_sqe sqe; uint64_t data_iova; uint32_t len; } admin;
		struct { uint32_t depth; uint64_t sq_iova, cq_iova; } qcreate;
		struct { uint32_t qid; } qdelete;
		struct { uint64_t iova, len, off; } map;
	};
};

struct mp_rep {
	int32_t rc;        /* 0, an NVMe status (admin) or a negative errno (msg says why) */
	uint32_t rsvd;
	union {
		struct { uint64_t cap; uint32_t vs; int32_t pid; uint64_t win_off, win_len; } hello;
		uint64_t reg;
		struct nvme_cqe cpl;
		uint32_t qid;
	};
	char msg[256];
};

/* Sends msg of len bytes with fd (-1: none); 0 or a negative errno. */
int mp_send(int sock, const void *msg, size_t len, int fd);
/* Receives one message into buf (at most len bytes) and an fd if one came (else *fd = -1;
 * fd may be NULL), waiting at most timeout_ms (-1: forever). Returns the bytes received, 0
 * when the peer is gone, or a negative errno (-ETIMEDOUT). */
ssize_t mp_recv(int sock, void *buf, size_t len, int *fd, int timeout_ms);

/* The lock file's path and the socket's address of a device address in the run directory; 0
 * or a negative errno with a message (a path too long for a Unix socket). */
int mp_paths(const char *address, char *lock, size_t len, struct sockaddr_un *sock);

/* Is sharing on? UNVME_MP=0 (or off) makes every process open a device of its own, as
 * before sharing existed. */
int mp_enabled(void);

/* Decides the role of a process opening c's address: returns 1 as primary (the lock is held:
 * c->mp_fd), 0 as secondary (connected: c->mp_fd is the socket), or a negative errno with a
 * message (the primary does not answer). */
int mp_claim(struct unvme_ctrlr *c);

/* Primary: serves secondaries from now on (a thread of its own); stops before detaching. */
int mp_primary_start(struct unvme_ctrlr *c);
void mp_primary_stop(struct unvme_ctrlr *c);

/* The controller is disabled (a reset, a failure) or pulled out: the secondaries' queues are
 * gone from the device, so every secondary's session ends (each sees its controller removed and may open it
 * again). Any thread; the server drops them. */
void mp_primary_lost_queues(struct unvme_ctrlr *c);

/* Secondaries connected now, for tests and `unvme` (0 for a controller that is not a
 * primary). */
unsigned mp_primary_clients(const struct unvme_ctrlr *c);

/* Is c a secondary whose primary is gone (its socket closed)? The device went with it. */
bool mp_secondary_orphaned(struct unvme_ctrlr *c);

extern const struct unvme_transport_ops unvme_transport_mp_secondary;

#endif
