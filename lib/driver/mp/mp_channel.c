/* SPDX-License-Identifier: BSD-3-Clause */
/* A client's requests and their replies, synchronous and not (mp_channel.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/common/clock.h"
#include "lib/common/env.h"
#include "lib/driver/errmsg.h"
#include "mp_channel.h"

enum { PEND_FREE, PEND_OUT, PEND_ANSWERED, PEND_ABANDONED };

#define MAX_STRAYS_LOGGED 5

void mp_chan_init(struct mp_chan *ch, int sock, const char *devid)
{
	memset(ch, 0, sizeof(*ch));
	ch->sock = sock;
	ch->devid = devid;
	ch->next_id = 1;
	for (unsigned i = 0; i < MP_MAX_FDS; i++)
		ch->call.fds[i] = -1;
	pthread_mutex_init(&ch->call_lock, NULL);
	pthread_mutex_init(&ch->rx_lock, NULL);
	pthread_mutex_init(&ch->lock, NULL);
	pthread_mutex_init(&ch->deliver_lock, NULL);
}

void mp_chan_fini(struct mp_chan *ch)
{
	pthread_mutex_destroy(&ch->deliver_lock);
	pthread_mutex_destroy(&ch->lock);
	pthread_mutex_destroy(&ch->rx_lock);
	pthread_mutex_destroy(&ch->call_lock);
}

/* (lock held) */
static uint32_t new_id(struct mp_chan *ch)
{
	uint32_t id = ch->next_id++;
	if (ch->next_id == 0)
		ch->next_id = 1; /* 0 names no request */
	return id;
}

static void close_fds(int *fds, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (fds[i] >= 0) {
			close(fds[i]);
			fds[i] = -1;
		}
}

static void answer(struct mp_rep *rep, int rc, const char *fmt, const char *devid)
{
	memset(rep, 0, sizeof(*rep));
	rep->rc = rc;
	snprintf(rep->msg, sizeof(rep->msg), fmt, devid);
}

/* No reply can come any more: every request out is answered with rc (lock held). */
static void break_channel(struct mp_chan *ch, int rc, const char *why)
{
	if (ch->broken)
		return;
	ch->broken = rc;
	for (unsigned i = 0; i < MP_CHAN_SLOTS; i++) {
		struct mp_pending *p = &ch->pend[i];
		if (p->state == PEND_OUT) {
			answer(&p->rep, rc, why, ch->devid);
			p->state = PEND_ANSWERED;
		} else if (p->state == PEND_ABANDONED) {
			memset(p, 0, sizeof(*p));
		}
	}
}

/* Do the replies of op carry descriptors? */
static bool takes_fds(uint32_t op)
{
	return op == MP_HELLO || op == MP_WINDOW;
}

/* Reads one reply, waiting at most timeout_ms, and files it with its request (rx_lock held):
 * 1 when one came, 0 when none did, or the negative errno the channel broke with. */
static int rx_one(struct mp_chan *ch, int timeout_ms)
{
	struct mp_rep rep;
	int fds[MP_MAX_FDS];
	ssize_t n = mp_recv(ch->sock, &rep, sizeof(rep), fds, MP_MAX_FDS, timeout_ms);
	if (n == -ETIMEDOUT)
		return 0;
	pthread_mutex_lock(&ch->lock);
	if (n <= 0 || n != (ssize_t)sizeof(rep)) {
		close_fds(fds, MP_MAX_FDS);
		if (n == 0)
			break_channel(ch, -ENODEV, "%s: the process that runs the device is gone");
		else
			break_channel(ch, -EPROTO, "%s: the process that runs the device sent a "
				      "malformed reply");
		int rc = ch->broken;
		pthread_mutex_unlock(&ch->lock);
		return rc;
	}
	rep.msg[sizeof(rep.msg) - 1] = '\0'; /* a string, whatever came */
	struct mp_pending *p = NULL;
	for (unsigned i = 0; rep.id && i < MP_CHAN_SLOTS && !p; i++)
		if (ch->pend[i].id == rep.id && ch->pend[i].state != PEND_FREE)
			p = &ch->pend[i];
	bool call = ch->call.id && !ch->call.answered &&
		    (rep.id == ch->call.id || (rep.id == 0 && rep.rc < 0)); /* 0: refused */
	if (call) {
		ch->call.rep = rep;
		ch->call.answered = true;
		if (takes_fds(ch->call.op))
			memcpy(ch->call.fds, fds, sizeof(fds));
		else
			close_fds(fds, MP_MAX_FDS);
	} else if (p && p->state == PEND_OUT) {
		bool stray_fds = false;
		for (unsigned i = 0; i < MP_MAX_FDS; i++)
			stray_fds = stray_fds || fds[i] >= 0;
		close_fds(fds, MP_MAX_FDS);
		p->rep = rep;
		if (stray_fds)
			answer(&p->rep, -EPROTO, "%s: descriptors came with the reply to a request "
			       "that takes none", ch->devid);
		p->state = PEND_ANSWERED;
	} else if (p && p->state == PEND_ABANDONED) {
		close_fds(fds, MP_MAX_FDS);
		memset(p, 0, sizeof(*p)); /* its owner stopped waiting: dropped */
	} else {
		close_fds(fds, MP_MAX_FDS);
		if (ch->strays++ < MAX_STRAYS_LOGGED && unvme_log_on())
			fprintf(stderr, "unvme: %s: dropped a reply for request %u, which this "
				"process has not sent or no longer waits for\n", ch->devid, rep.id);
	}
	pthread_mutex_unlock(&ch->lock);
	return 1;
}

static int remaining_ms(uint64_t deadline)
{
	uint64_t now = mono_ms_coarse();
	return now >= deadline ? 0 : (int)(deadline - now);
}

int mp_chan_call(struct mp_chan *ch, struct mp_req *rq, int fd, struct mp_rep *rep,
		 int timeout_ms, int *got)
{
	pthread_mutex_lock(&ch->call_lock);
	pthread_mutex_lock(&ch->lock);
	int rc = ch->broken;
	rq->id = new_id(ch);
	ch->call.id = rq->id;
	ch->call.op = rq->op;
	ch->call.answered = false;
	pthread_mutex_unlock(&ch->lock);
	if (rc == 0)
		rc = mp_send(ch->sock, rq, mp_req_len(rq->op, rq->op == MP_PLUG ? rq->card.len : 0),
			     &fd, fd >= 0 ? 1 : 0);
	if (rc == 0) {
		uint64_t deadline = mono_ms_coarse() + (uint64_t)timeout_ms;
		pthread_mutex_lock(&ch->rx_lock);
		for (;;) {
			pthread_mutex_lock(&ch->lock);
			bool answered = ch->call.answered;
			pthread_mutex_unlock(&ch->lock);
			if (answered)
				break;
			int left = remaining_ms(deadline);
			if (left == 0) {
				rc = -ETIMEDOUT;
				break;
			}
			int r = rx_one(ch, left);
			if (r < 0) {
				rc = r;
				break;
			}
		}
		pthread_mutex_unlock(&ch->rx_lock);
	}
	pthread_mutex_lock(&ch->lock);
	if (ch->call.answered) {
		rc = 0;
		*rep = ch->call.rep;
		if (got)
			memcpy(got, ch->call.fds, sizeof(ch->call.fds));
		else
			close_fds(ch->call.fds, MP_MAX_FDS);
		for (unsigned i = 0; i < MP_MAX_FDS; i++)
			ch->call.fds[i] = -1;
	} else if (got) {
		for (unsigned i = 0; i < MP_MAX_FDS; i++)
			got[i] = -1;
	}
	ch->call.id = 0; /* a reply that comes after its wait ended is a stray */
	ch->call.answered = false;
	pthread_mutex_unlock(&ch->lock);
	pthread_mutex_unlock(&ch->call_lock);
	if (rc == -EPIPE || rc == -ECONNRESET)
		rc = -ENODEV;
	return rc == 0 || rc == -ETIMEDOUT || rc == -EPROTO ? rc : -ENODEV;
}

/* A kept request of op owned by arg is one at a time: an earlier one still filed (sent for a
 * queue's creation before the queue was lost again, say, across a card's removal) is done
 * with, so that mp_chan_take can only find the reply to the newest (lock held). */
static void supersede(struct mp_chan *ch, uint32_t op, const void *arg)
{
	for (unsigned i = 0; i < MP_CHAN_SLOTS; i++) {
		struct mp_pending *p = &ch->pend[i];
		if (!p->kept || p->op != op || p->arg != arg || p->state == PEND_FREE ||
		    p->state == PEND_ABANDONED)
			continue;
		if (p->state == PEND_OUT)
			p->state = PEND_ABANDONED; /* its reply is dropped when it comes */
		else
			memset(p, 0, sizeof(*p));
	}
}

int mp_chan_send(struct mp_chan *ch, struct mp_req *rq, bool kept, mp_chan_cb cb, void *arg,
		 uint32_t tag)
{
	pthread_mutex_lock(&ch->lock);
	int rc = ch->broken;
	struct mp_pending *p = NULL;
	for (unsigned i = 0; rc == 0 && i < MP_CHAN_SLOTS && !p; i++)
		if (ch->pend[i].state == PEND_FREE)
			p = &ch->pend[i];
	if (rc == 0 && !p)
		rc = -EAGAIN;
	if (rc == 0 && kept)
		supersede(ch, rq->op, arg);
	if (rc == 0) {
		rq->id = new_id(ch);
		/* (the lock is held over a send that never waits: a reply cannot come before
		 * its request is filed) */
		rc = mp_send_nowait(ch->sock, rq, mp_req_len(rq->op, 0));
		if (rc == 0)
			*p = (struct mp_pending){ .id = rq->id, .op = rq->op, .state = PEND_OUT,
						  .kept = kept, .cb = cb, .arg = arg, .tag = tag,
						  .sent_ms = mono_ms_coarse() };
		else if (rc != -EAGAIN)
			rc = -ENODEV;
	}
	pthread_mutex_unlock(&ch->lock);
	return rc;
}

static void rx_ready(struct mp_chan *ch)
{
	if (pthread_mutex_trylock(&ch->rx_lock) != 0)
		return; /* a synchronous call is reading: it files what comes */
	while (rx_one(ch, 0) > 0)
		;
	pthread_mutex_unlock(&ch->rx_lock);
}

/* The completion an admin command's reply stands for. */
static struct nvme_cqe completion(const struct mp_chan *ch, const struct mp_pending *p)
{
	struct nvme_cqe cpl = p->rep.cpl;
	int rc = p->rep.rc;
	if (rc < 0) {
		/* the server could not carry it out (it said why) */
		memset(&cpl, 0, sizeof(cpl));
		cpl.status = NVME_CQE_STATUS(NVME_SCT_GENERIC, NVME_SC_INTERNAL) | (uint16_t)(1u << 15);
		if (unvme_log_on())
			fprintf(stderr, "unvme: %s: admin command %u not carried out: %s\n", ch->devid,
				p->id, p->rep.msg[0] ? p->rep.msg : strerror(-rc));
	} else if (rc > 0 && !cpl.status) {
		cpl.status = (uint16_t)(rc << 1);
	}
	return cpl;
}

void mp_chan_reap(struct mp_chan *ch)
{
	rx_ready(ch);
	if (pthread_mutex_trylock(&ch->deliver_lock) != 0)
		return; /* another thread runs the callbacks */
	for (;;) {
		struct { mp_chan_cb cb; void *arg; struct nvme_cqe cpl; } due[8];
		unsigned n = 0;
		pthread_mutex_lock(&ch->lock);
		for (unsigned i = 0; i < MP_CHAN_SLOTS && n < 8; i++) {
			struct mp_pending *p = &ch->pend[i];
			if (p->state != PEND_ANSWERED || p->kept)
				continue;
			due[n].cb = p->cb;
			due[n].arg = p->arg;
			due[n].cpl = completion(ch, p);
			n++;
			memset(p, 0, sizeof(*p));
		}
		pthread_mutex_unlock(&ch->lock);
		for (unsigned i = 0; i < n; i++)
			if (due[i].cb)
				due[i].cb(due[i].arg, &due[i].cpl);
		if (n < 8)
			break;
	}
	pthread_mutex_unlock(&ch->deliver_lock);
}

int mp_chan_take(struct mp_chan *ch, uint32_t op, const void *arg, struct mp_rep *rep,
		 uint32_t *tag, uint32_t timeout_ms)
{
	rx_ready(ch);
	pthread_mutex_lock(&ch->lock);
	int rc = -ENOENT;
	for (unsigned i = 0; i < MP_CHAN_SLOTS; i++) {
		struct mp_pending *p = &ch->pend[i];
		if (!p->kept || p->op != op || p->arg != arg ||
		    (p->state != PEND_OUT && p->state != PEND_ANSWERED))
			continue;
		if (p->state == PEND_ANSWERED) {
			*rep = p->rep;
			*tag = p->tag;
			memset(p, 0, sizeof(*p));
			rc = 0;
		} else if (timeout_ms && mono_ms_coarse() - p->sent_ms > timeout_ms) {
			p->state = PEND_ABANDONED;
			rc = -ETIMEDOUT;
		} else {
			rc = -EINPROGRESS;
		}
		break;
	}
	pthread_mutex_unlock(&ch->lock);
	return rc;
}

void mp_chan_forget(struct mp_chan *ch, const void *lo, const void *hi)
{
	pthread_mutex_lock(&ch->deliver_lock);
	pthread_mutex_lock(&ch->lock);
	for (unsigned i = 0; i < MP_CHAN_SLOTS; i++) {
		struct mp_pending *p = &ch->pend[i];
		if (p->state == PEND_FREE || (const char *)p->arg < (const char *)lo ||
		    (const char *)p->arg >= (const char *)hi)
			continue;
		p->cb = NULL;
		if (p->kept && p->state == PEND_OUT)
			p->state = PEND_ABANDONED;
		else if (p->kept)
			memset(p, 0, sizeof(*p));
		p->arg = NULL;
	}
	pthread_mutex_unlock(&ch->lock);
	pthread_mutex_unlock(&ch->deliver_lock);
}
