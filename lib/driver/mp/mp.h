/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Several processes on one controller (internal).
 *
 * One process runs a controller (its admin queue, resets, the device's IOMMU) and serves the
 * others on a Unix socket in the run directory (mp_server.c); each other process is a client
 * (mp_client.c), whose I/O queue pairs are rings in its own DMA memory that the server maps
 * into the device and whose doorbells are stores into the device's doorbell window, so the
 * data path never passes through the server's software. Who runs the controller
 * (docs/multi-process.md):
 *   - a device process (mp_device.c, `unvme serve`) for an emulated device that is named or
 *     kept in files: the device lives apart from every application, as hardware does, so no
 *     application's exit takes it (or its iterators, events and queues) away. The first open
 *     starts it (mp_spawn.c); it ends after an idle grace period, or when told;
 *   - the first process that opens the device (the primary) for a real controller (VFIO) and
 *     an unnamed memory device: it serves the others until it closes the device.
 * mp_claim.c decides, per open, which of these a process is.
 *
 * Wire format: SOCK_SEQPACKET, file descriptors as SCM_RIGHTS. Requests have the length their
 * operation gives (mp_req_len), checked exactly; both sides are the same build (HELLO checks
 * the version). The server answers a connection's requests one at a time, in the order they
 * came, each reply carrying its request's id: a client may have several requests out (its
 * recovery's admin commands and queue creations are sent without waiting, mp_channel.c) and
 * files each reply with the request it names. The server talks first only on a session's
 * notice socket (a socketpair it hands out at HELLO): a card removed or back, queues lost to
 * a reset, Asynchronous Events.
 */
#ifndef UNVME_DRIVER_MP_H
#define UNVME_DRIVER_MP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/un.h>

#include "lib/driver/ctrlr.h"
#include "unvme/spec.h"

#define MP_VERSION 4u  /* 4: replies carry their request's id */
#define MP_URI_MAX 4352u   /* a card URI in MP_PLUG (the size of an address) */
#define MP_MAX_FDS 2u      /* descriptors that travel with one message */

enum mp_op {
	MP_HELLO = 1,      /* -> CAP, VS, the doorbell window (fd 0) and the notice socket (fd 1) */
	MP_REG_READ,       /* a register below the doorbells, aligned to its width */
	MP_ADMIN,          /* an admin command, its data in the client's DMA memory */
	MP_QUEUE_CREATE,   /* rings in the client's DMA memory -> the queue id */
	MP_QUEUE_DELETE,
	MP_DMA_MAP,        /* pages of the client's sealed memfd (fd) at an IOVA */
	MP_DMA_UNMAP,
	MP_WINDOW,         /* after a card came back: CAP, VS and its doorbell window (fd) */
	MP_AER_SUBSCRIBE,  /* Asynchronous Events arrive as notices from now on */
	MP_UNPLUG,         /* an emulated card: pull it out of its slot */
	MP_PLUG,           /* an emulated card: put one in (card.len 0: the same) */
	MP_STOP,           /* a device process: end (every session ends with it) */
	MP_STATUS,         /* a device process: pid, sessions, idle setting */
	MP_RESET,          /* a device process: reset the controller (every client's queues go) */
	MP_OP_END
};

struct mp_req {
	uint32_t op;
	uint32_t id;       /* the client's, echoed in the reply (0: a request made alone) */
	union {
		struct { uint32_t version; int32_t pid; } hello;
		struct { uint32_t off; uint32_t width; } reg;
		struct { struct nvme_sqe sqe; uint64_t data_iova; uint32_t len; uint32_t rsvd; } admin;
		struct { uint32_t depth; uint32_t rsvd; uint64_t sq_iova, cq_iova; } qcreate;
		struct { uint32_t qid; } qdelete;
		struct { uint64_t iova, len, off; } map;
		struct { uint32_t len; char uri[MP_URI_MAX]; } card;
	};
};

/* The exact length of a request of op whose card.len is card_len (only MP_PLUG has a
 * variable part); 0 for an unknown op. */
size_t mp_req_len(uint32_t op, uint32_t card_len);

#define MP_HELLO_DEVICE_PROCESS 1u  /* hello.flags: the server is a device process */
#define MP_NO_WAKE UINT64_MAX       /* hello.wake_off: the window has no wake word (VFIO) */

struct mp_rep {
	int32_t rc;        /* 0, an NVMe status (admin) or a negative errno (msg says why) */
	uint32_t id;       /* the request's (0: a refusal of the whole connection) */
	union {
		struct {
			uint64_t cap;
			uint32_t vs;
			int32_t pid;
			uint64_t win_off, win_len;
			uint64_t wake_off;  /* of the window's wake word in the mapping, or MP_NO_WAKE */
			uint32_t flags;
			uint32_t epoch;     /* of the card in the slot (notices carry theirs) */
			uint32_t queues;    /* the I/O queues the controller granted (for every client) */
			uint32_t rsvd;
		} hello;
		uint64_t reg;
		struct nvme_cqe cpl;
		struct { uint32_t qid; uint32_t epoch; } queue; /* QUEUE_CREATE: made at this epoch */
		struct { int32_t pid; uint32_t sessions; uint32_t idle_ms; uint32_t rsvd; } status; /* sessions: clients (said HELLO) */
	};
	char msg[256];
};

/* What the server tells a session on its own (the notice socket). */
enum mp_note_type {
	MP_NOTE_REMOVED = 1,  /* the card left its slot: the session's queues are gone */
	MP_NOTE_ARRIVED,      /* a card is in the slot again (status: 0 when it works) */
	MP_NOTE_QUEUES_LOST,  /* the controller was reset: the session's queues are gone */
	MP_NOTE_AER,          /* an Asynchronous Event (subscribers only): dw0, sn */
};

struct mp_note {
	uint32_t type;
	uint32_t epoch;    /* REMOVED/ARRIVED: the card's; QUEUES_LOST: the reset's */
	int32_t status;
	uint32_t dw0;
	char sn[20];
};

/* ---- mp_sock.c ---- */

/* Sends msg of len bytes with nfds descriptors; 0 or a negative errno. */
int mp_send(int sock, const void *msg, size_t len, const int *fds, unsigned nfds);
/* The same without waiting for room in the socket's buffer: -EAGAIN when there is none. */
int mp_send_nowait(int sock, const void *msg, size_t len);
/* Receives one message into buf (at most len bytes) and up to maxfds descriptors (fds may be
 * NULL: any that come are closed; unfilled entries are -1), waiting at most timeout_ms (-1:
 * forever). Returns the bytes received, 0 when the peer is gone, or a negative errno
 * (-ETIMEDOUT). A message longer than len is cut: the caller's length check fails it. */
ssize_t mp_recv(int sock, void *buf, size_t len, int *fds, unsigned maxfds, int timeout_ms);

/* Where the processes sharing an address meet, in the run directory. */
struct mp_where {
	char lock[4352];           /* held by whoever runs the controller */
	char log[4352];            /* a device process's messages */
	struct sockaddr_un sock;   /* where it serves */
};
/* 0 or a negative errno with a message (a path too long for a Unix socket). */
int mp_where(const char *address, struct mp_where *w);

/* How processes share devices: UNVME_MP=0 (or off, no) not at all, every process opens a
 * device of its own; =primary the first opener runs every device and serves the others;
 * otherwise (the default) devices that outlive processes run in a device process. */
enum mp_mode { MP_MODE_OFF, MP_MODE_PRIMARY, MP_MODE_DEVICE };
enum mp_mode mp_mode(void);

/* Is the process at the other end of a Unix socket one this process may serve (or be
 * served by): the same effective user, or root? 0, or -EACCES with *uid and *pid filled. */
int mp_peer_check(int sock, uid_t *uid, pid_t *pid);
/* A listening socket at a, created with mode 0600 whatever the umask (a stale socket file
 * there is replaced); the descriptor or a negative errno. */
int mp_listen(const struct sockaddr_un *a);
/* A connection to a: the descriptor, or a negative errno (-EACCES: the listener belongs to
 * another user, with a message). */
int mp_connect(const struct sockaddr_un *a);

/* ---- mp_claim.c ---- */

/* (the wrapper's claim hook, registered with the transports: transport.h) */

/* ---- mp_spawn.c ---- */

/* Starts a device process for address (`unvme serve --detach`) and waits until it serves:
 * 0; -EAGAIN when another process got there first (connect again); a negative errno with
 * the device process's own message otherwise. -ENOENT: no unvme program to run it. */
int mp_spawn(const char *address);
/* The unvme program that runs device processes into out: 0 or -ENOENT. */
int mp_serve_program(char *out, size_t len);

/* ---- mp_server.c ---- */

/* The lifecycle listener (events.c) of a controller this process runs for the others, added
 * by the claim: once it is attached, serves the other processes (a thread of its own; in a
 * device process, mp_device_serving, the server also ends it after its idle period, takes
 * stop requests and forwards Asynchronous Events); a server that cannot start fails the
 * open of a device process only (-EIO), a primary runs the device unshared. Tells the
 * sessions of resets, removals and arrivals; stops when the controller closes. */
int mp_server_life(struct unvme_ctrlr *c, enum ctrlr_life what, int status, void *arg);
/* Sessions connected now (0 without a server), for tests and `unvme`. */
unsigned mp_server_sessions(const struct unvme_ctrlr *c);
/* A device process's server asks to end: the idle period passed with no session, or a
 * session sent MP_STOP. */
bool mp_server_done(const struct unvme_ctrlr *c);

/* ---- mp_client.c ---- */

/* Pull the card out of (or put one into) the slot of the emulated device that c's server
 * runs: 0 once this process saw the removal (arrival), or a negative errno with a message. */
int mp_client_unplug(struct unvme_ctrlr *c);
int mp_client_plug(struct unvme_ctrlr *c, const char *card_uri);

extern const struct unvme_transport unvme_transport_mp_secondary; /* of a primary */
extern const struct unvme_transport unvme_transport_mp_client;    /* of a device process */

/* ---- mp_device.c ---- */

/* Is this process the device process of address? Then *lock_fd (may be NULL) is its lock
 * (the opener runs the controller here, it does not look for a server). */
bool mp_device_serving(const char *address, int *lock_fd);
/* The device process's idle period in ms (0: it ends only when told). */
uint32_t mp_device_idle_ms(void);

#endif
