/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The server of a shared controller (internal to mp_server.c and mp_requests.c): its
 * sessions, one per client process, and what each owns on the device.
 */
#ifndef UNVME_DRIVER_MP_SERVER_H
#define UNVME_DRIVER_MP_SERVER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/types.h>

#include "lib/driver/ctrlr.h"
#include "mp.h"

#define MP_MAX_SESSIONS 128
#define MP_MAX_MAPS 32768u   /* 2 MiB chunks of a whole 64 GiB IOVA window */
#define MP_MAX_QUEUES 1024u

struct mp_map {
	uint64_t iova;
	size_t len;
	void *va;            /* the client's pages, mapped here */
};

struct mp_queue {
	uint16_t qid;
	uint32_t epoch;      /* mp_server.epoch when it was created */
	bool sq_gone, cq_gone; /* deleted by the client's own admin commands (a fence) */
};

struct mp_session {
	int fd;              /* requests and replies; -1: a free slot */
	int note_fd;         /* the server's end of the notice socketpair (-1 before HELLO) */
	pid_t pid;           /* SO_PEERCRED */
	uid_t uid;
	bool hello;
	bool aer;            /* subscribed to Asynchronous Events */
	bool broken;         /* a notice could not be sent: the session ends */
	struct mp_map *maps;
	size_t nr_maps, cap_maps;
	struct mp_queue *queues;
	size_t nr_queues, cap_queues;
};

/* Something that happened to the controller, for the sessions (mp_server_life, the AER
 * listener). */
struct mp_event {
	uint32_t type;       /* enum mp_note_type */
	uint32_t epoch;
	int32_t status;
	uint32_t dw0;
	char sn[20];
};

struct mp_server {
	struct unvme_ctrlr *c;
	bool device_process;     /* no application here (mp_device.c) */
	uint32_t idle_ms;        /* device process: end after this long with no session (0: never) */
	int lfd;
	int wake[2];
	pthread_t thread;
	struct sockaddr_un addr;
	dev_t sock_dev;          /* of the socket file: a run directory removed under it is seen */
	ino_t sock_ino;
	struct mp_session sessions[MP_MAX_SESSIONS];
	_Atomic unsigned nr_sessions;
	_Atomic bool stop;       /* the controller is closing */
	_Atomic bool done;       /* a device process asks to end */
	_Atomic uint32_t epoch;  /* bumped by everything that happens to the controller */
	uint32_t card_epoch;     /* of the last card change (server thread) */
	pthread_mutex_t ev_lock; /* events */
	struct mp_event events[32];
	unsigned nr_events;
	bool events_lost;
	struct mp_note aer_backlog[16]; /* events no session subscribed to yet (server thread) */
	unsigned nr_backlog;
	bool aer_on;             /* the controller keeps an AER outstanding for the sessions */
	uint64_t idle_since_ms;
	unsigned refused;        /* peers refused so far (the log says the first few) */
};

/* One request of session s (n bytes, in_fd the descriptor that came with it or -1): fills
 * rep and the descriptors to send with it (*nout of them, the caller closes them). */
void mp_serve_request(struct mp_server *mp, struct mp_session *s, const struct mp_req *rq,
		      size_t n, int in_fd, struct mp_rep *rep, int *out_fds, unsigned *nout);

/* The session's pages at [iova, iova + len) as mapped here, or NULL. */
void *mp_session_va(const struct mp_session *s, uint64_t iova, uint64_t len);

/* Forgets the session's queues created before epoch (the controller lost them): their ids
 * are free again. qp_lock held. */
void mp_session_forget_queues(struct mp_server *mp, struct mp_session *s, uint32_t epoch);

/* Sends a notice to s (never blocks: a session that does not read them is broken). */
void mp_session_note(struct mp_session *s, const struct mp_note *n);

/* Acts on the events queued so far (notices, forgotten queues); server thread. */
void mp_server_drain_events(struct mp_server *mp);

#endif
