/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A client's requests to the process that runs its controller, and their replies (internal to
 * mp_client.c and mp_channel.c): one connection, on which the server answers requests in the
 * order they came, each reply naming its request's id (mp.h).
 *
 * A synchronous call (mp_chan_call) sends its request and waits for its reply, as every
 * request did before; an asynchronous one (mp_chan_send) is sent without waiting, from a
 * queue pair's poll or submit (a recovery's Abort, Delete and Create I/O SQ/CQ, a queue's
 * creation again), and its reply is read later, without waiting, by whoever reaps next
 * (mp_chan_reap: a recovery step; mp_chan_take) or by a synchronous call that finds it
 * before its own. An answered admin command's callback runs at a reap; a kept request
 * (a queue creation) is taken by its owner (mp_chan_take).
 *
 * Every reply comes from another process and is checked before it is filed: its length is a
 * reply's, its id names a request of this connection that is still out (a reply naming none
 * is dropped and logged), descriptors come only with the replies of requests that take them
 * (HELLO, WINDOW), its message is a string. A reply of another length breaks the channel:
 * every request out is answered -EPROTO, and so is every request after.
 */
#ifndef UNVME_DRIVER_MP_CHANNEL_H
#define UNVME_DRIVER_MP_CHANNEL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "mp.h"

#define MP_CHAN_SLOTS 64u /* asynchronous requests out at once */

typedef void (*mp_chan_cb)(void *arg, const struct nvme_cqe *cpl);

struct mp_pending {
	uint32_t id;         /* 0: a free slot */
	uint32_t op;
	uint8_t state;       /* enum in mp_channel.c */
	bool kept;           /* taken by its owner (mp_chan_take), not called back */
	mp_chan_cb cb;       /* an admin command's completion (NULL: nobody waits for it) */
	void *arg;           /* cb's, or the owner a kept request is taken by */
	uint32_t tag;        /* the sender's, given back with a kept request's reply */
	uint64_t sent_ms;
	struct mp_rep rep;
};

struct mp_chan {
	int sock;
	const char *devid;            /* for messages */
	pthread_mutex_t call_lock;    /* one synchronous call at a time */
	pthread_mutex_t rx_lock;      /* one reader of the socket at a time */
	pthread_mutex_t lock;         /* what follows */
	pthread_mutex_t deliver_lock; /* callbacks run under it: forgetting their args takes it */
	uint32_t next_id;
	int broken;                   /* 0, or the errno every request is answered with */
	struct {
		uint32_t id;          /* of the synchronous call waiting (0: none) */
		uint32_t op;
		bool answered;
		struct mp_rep rep;
		int fds[MP_MAX_FDS];
	} call;
	struct mp_pending pend[MP_CHAN_SLOTS];
	unsigned strays;              /* replies that named no request of ours */
};

void mp_chan_init(struct mp_chan *ch, int sock, const char *devid);
void mp_chan_fini(struct mp_chan *ch);

/* One request and its reply, waiting at most timeout_ms: 0 (rep filled; descriptors that came
 * with it in got[0..MP_MAX_FDS-1], -1 for none; got NULL: any that came are closed),
 * -ETIMEDOUT, -ENODEV (the server is gone) or -EPROTO (it sent what no server sends). No
 * message: the caller says what failed. */
int mp_chan_call(struct mp_chan *ch, struct mp_req *rq, int fd, struct mp_rep *rep,
		 int timeout_ms, int *got);

/* Sends rq without waiting (no descriptor goes with it): 0; -EAGAIN when MP_CHAN_SLOTS
 * requests are out or the socket has no room (send again later); -ENODEV or -EPROTO when the
 * channel is broken. An admin command's cb(arg, completion) runs at the reap after its reply
 * came (a negative answer of the server completes it with Internal Error, DNR); a kept
 * request is taken with mp_chan_take(ch, op, arg). */
int mp_chan_send(struct mp_chan *ch, struct mp_req *rq, bool kept, mp_chan_cb cb, void *arg,
		 uint32_t tag);

/* Without waiting: reads the replies that came (unless another thread is reading them) and
 * runs the callbacks of the answered admin commands. */
void mp_chan_reap(struct mp_chan *ch);

/* (mp_chan_send: a kept request supersedes an earlier kept one of the same op and arg, whose
 * reply is then dropped: one at a time per owner.)
 * Without waiting, the kept request of op owned by arg: 0 (its reply in *rep, its tag in
 * *tag; the request is done), -EINPROGRESS while it is out, -ETIMEDOUT once it has been out
 * for timeout_ms (it is abandoned: its reply will be dropped), -ENOENT when there is none. */
int mp_chan_take(struct mp_chan *ch, uint32_t op, const void *arg, struct mp_rep *rep,
		 uint32_t *tag, uint32_t timeout_ms);

/* Requests whose arg lies in [lo, hi) are forgotten (what it points to is being freed): no
 * callback runs for them, a kept one's reply is dropped. */
void mp_chan_forget(struct mp_chan *ch, const void *lo, const void *hi);

#endif
