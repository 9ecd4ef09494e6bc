/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The server of a shared controller: a thread that accepts client processes on the Unix
 * socket, checks who they are (SO_PEERCRED: this process's user or root), serves their
 * requests (mp_requests.c) and tells them what happens to the controller (notices).
 *
 * Everything a client owns on the device is recorded with its session: the I/O queues it
 * had created and the DMA memory it had mapped. When the session ends, whether the client
 * closed its controller or was killed, its queues are deleted on the device first (then the
 * device touches its memory no more) and its memory unmapped: other processes' queues are
 * not disturbed. When the controller loses every queue (a reset), the sessions' queues are
 * forgotten and each client is told (QUEUES_LOST): it creates its queues again, as after a
 * reset of its own. A card pulled out of the emulated slot and put back (hot-plug) is told
 * the same way (REMOVED, ARRIVED); on a platform that does not keep the IOMMU's mappings for
 * the next card (VFIO) a removal ends every session instead. When the controller closes,
 * every session ends; its clients see their controller removed.
 *
 * The server follows the controller's lifecycle (events.c: ctrlr_life), heard by the listener
 * the claim added when this process took the controller to run it (mp_claim.c): it starts
 * once the controller is attached and stops when it closes; what happens in between (a
 * reset, a removal, a card back) it hears on whatever thread it happens, and acts on it on
 * its own thread before it answers the next request: a client that pulled the card out has
 * its REMOVED notice before the reply.
 *
 * In a device process (mp_device.c) the server is the only host of the controller: it
 * watches CSTS and resets the controller after a fatal status (every client hears
 * QUEUES_LOST), keeps an Asynchronous Event Request outstanding once a client subscribed and
 * forwards the events (those that came while no client listened wait for the first that
 * does), takes stop requests, and ends the process after its idle period with no session,
 * or at once when its socket file disappears (the run directory was removed) and no session
 * is left.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/common/clock.h"
#include "lib/common/env.h"
#include "lib/driver/errmsg.h"
#include "mp_server.h"
#include "lib/common/thread.h"

#define AER_POLL_MS 20        /* how often a device process looks for Asynchronous Events */
#define HOUSEKEEPING_MS 200   /* idle period and socket file checks of a device process */

static void wake_server(struct mp_server *mp)
{
	if (write(mp->wake[1], "x", 1) < 0)
		(void)0; /* full: it is awake already */
}

/* ---- sessions ---- */

void *mp_session_va(const struct mp_session *s, uint64_t iova, uint64_t len)
{
	for (size_t i = 0; i < s->nr_maps; i++) {
		const struct mp_map *m = &s->maps[i];
		if (iova >= m->iova && iova - m->iova < m->len && len <= m->len - (iova - m->iova))
			return (uint8_t *)m->va + (iova - m->iova);
	}
	return NULL;
}

void mp_session_forget_queues(struct mp_server *mp, struct mp_session *s, uint32_t epoch)
{
	struct unvme_ctrlr *c = mp->c;
	size_t kept = 0;
	for (size_t i = 0; i < s->nr_queues; i++) {
		struct mp_queue q = s->queues[i];
		if ((int32_t)(q.epoch - epoch) < 0) {
			if (q.qid <= c->max_io_queues)
				c->qid_used[q.qid] = 0;
		} else {
			s->queues[kept++] = q;
		}
	}
	s->nr_queues = kept;
}

void mp_session_note(struct mp_session *s, const struct mp_note *n)
{
	if (s->note_fd < 0 || s->broken)
		return;
	if (mp_send(s->note_fd, n, sizeof(*n), NULL, 0) != 0)
		s->broken = true; /* its buffer is full (it reads none) or it is gone */
}

static void session_end(struct mp_server *mp, struct mp_session *s, const char *why)
{
	struct unvme_ctrlr *c = mp->c;
	/* its queues first: once they are deleted the device touches none of its memory */
	ctrlr_lock_qps(c);
	for (size_t i = 0; i < s->nr_queues; i++) {
		struct mp_queue *q = &s->queues[i];
		if (!atomic_load(&c->removed) && !(q->sq_gone && q->cq_gone))
			(void)ctrlr_delete_hw_queues(c, q->qid);
		if (q->qid <= c->max_io_queues)
			c->qid_used[q->qid] = 0;
	}
	ctrlr_unlock_qps(c);
	for (size_t i = 0; i < s->nr_maps; i++) {
		c->ops->dma_unmap(c->transport_ctx, s->maps[i].iova, s->maps[i].len);
		munmap(s->maps[i].va, s->maps[i].len);
	}
	if (unvme_log_on() && s->hello)
		fprintf(stderr, "unvme: %s: process %d %s; its queues and memory are released\n",
			c->devid, (int)s->pid, why);
	free(s->maps);
	free(s->queues);
	close(s->fd);
	if (s->note_fd >= 0)
		close(s->note_fd);
	memset(s, 0, sizeof(*s));
	s->fd = s->note_fd = -1;
	atomic_fetch_sub(&mp->nr_sessions, 1);
}

static void end_all_sessions(struct mp_server *mp, const char *why)
{
	for (int i = 0; i < MP_MAX_SESSIONS; i++)
		if (mp->sessions[i].fd >= 0)
			session_end(mp, &mp->sessions[i], why);
}

/* Closes a connection that was answered without being served: what it sent meanwhile is
 * read first (closing with it unread would make the peer's next read an error instead of
 * the answer). */
static void drain_and_close(int fd)
{
	char buf[sizeof(struct mp_req)];
	while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
	close(fd);
}

/* A new connection: served when its process is of this user (or root); otherwise it is told
 * why, the refusal is logged, and it is closed. */
static void accept_session(struct mp_server *mp)
{
	int fd = accept4(mp->lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return;
	uid_t uid;
	pid_t pid;
	struct mp_rep rep;
	memset(&rep, 0, sizeof(rep));
	if (mp_peer_check(fd, &uid, &pid) != 0) {
		rep.rc = -EACCES;
		snprintf(rep.msg, sizeof(rep.msg), "%s is run by user %u: process %d of user %u may "
			 "not use it (only the same user or root may)", mp->c->devid,
			 (unsigned)geteuid(), (int)pid, (unsigned)uid);
		(void)mp_send(fd, &rep, sizeof(rep), NULL, 0);
		drain_and_close(fd);
		if (mp->refused++ < 10 || mp->refused % 1000 == 0)
			fprintf(stderr, "unvme: %s: refused a connection from process %d of user %u "
				"(%u refused so far): only user %u or root may share the device\n",
				mp->c->devid, (int)pid, (unsigned)uid, mp->refused, (unsigned)geteuid());
		return;
	}
	for (int i = 0; i < MP_MAX_SESSIONS; i++) {
		struct mp_session *s = &mp->sessions[i];
		if (s->fd >= 0)
			continue;
		memset(s, 0, sizeof(*s));
		s->fd = fd;
		s->note_fd = -1;
		s->pid = pid;
		s->uid = uid;
		atomic_fetch_add(&mp->nr_sessions, 1);
		return;
	}
	rep.rc = -EUSERS;
	snprintf(rep.msg, sizeof(rep.msg), "%s: already %d processes share the device",
		 mp->c->devid, MP_MAX_SESSIONS);
	(void)mp_send(fd, &rep, sizeof(rep), NULL, 0);
	drain_and_close(fd);
}

/* One request of s; false when the session is to end. */
static bool serve_one(struct mp_server *mp, struct mp_session *s)
{
	struct mp_req rq;
	int in_fd;
	ssize_t n = mp_recv(s->fd, &rq, sizeof(rq), &in_fd, 1, 0);
	if (n == -ETIMEDOUT)
		return true;
	if (n <= 0) {
		if (in_fd >= 0)
			close(in_fd);
		return false; /* closed (the client ended or was killed), or unreadable */
	}
	struct mp_rep rep;
	memset(&rep, 0, sizeof(rep));
	int out[MP_MAX_FDS];
	unsigned nout = 0;
	mp_serve_request(mp, s, &rq, (size_t)n, in_fd, &rep, out, &nout);
	/* what the request did to the controller reaches the sessions before its reply: an
	 * event it raised (a threshold Set Features crossed), a reset, a removal (one that ends
	 * every session ends this one too: nothing is left to answer) */
	if (mp->aer_on && !atomic_load(&mp->c->removed))
		(void)unvme_ctrlr_process_events(mp->c);
	mp_server_drain_events(mp);
	bool sent = s->fd >= 0 && mp_send(s->fd, &rep, sizeof(rep), out, nout) == 0;
	for (unsigned i = 0; i < nout; i++)
		close(out[i]);
	return s->fd < 0 || (sent && !s->broken);
}

/* ---- events ---- */

static void push_event(struct mp_server *mp, const struct mp_event *ev)
{
	pthread_mutex_lock(&mp->ev_lock);
	if (mp->nr_events < sizeof(mp->events) / sizeof(mp->events[0]))
		mp->events[mp->nr_events++] = *ev;
	else
		mp->events_lost = true;
	pthread_mutex_unlock(&mp->ev_lock);
	wake_server(mp);
}

static void on_event(struct unvme_ctrlr *c, const struct unvme_event *ev, void *arg)
{
	struct mp_server *mp = arg;
	if (ev->type != UNVME_EVENT_AER)
		return; /* removal and arrival come through the lifecycle listener */
	struct mp_event e = { .type = MP_NOTE_AER, .epoch = atomic_load(&mp->epoch),
			      .dw0 = ev->aer_dw0 };
	memcpy(e.sn, ev->serial, sizeof(e.sn));
	push_event(mp, &e);
}

static void broadcast(struct mp_server *mp, const struct mp_note *n, bool subscribers_only)
{
	for (int i = 0; i < MP_MAX_SESSIONS; i++) {
		struct mp_session *s = &mp->sessions[i];
		if (s->fd >= 0 && s->hello && (!subscribers_only || s->aer))
			mp_session_note(s, n);
	}
}

void mp_server_drain_events(struct mp_server *mp)
{
	struct unvme_ctrlr *c = mp->c;
	for (;;) {
		pthread_mutex_lock(&mp->ev_lock);
		if (!mp->nr_events) {
			pthread_mutex_unlock(&mp->ev_lock);
			return;
		}
		struct mp_event ev = mp->events[0];
		memmove(mp->events, mp->events + 1, --mp->nr_events * sizeof(mp->events[0]));
		pthread_mutex_unlock(&mp->ev_lock);
		struct mp_note n = { .type = ev.type, .epoch = ev.epoch, .status = ev.status,
				     .dw0 = ev.dw0 };
		memcpy(n.sn, ev.sn, sizeof(n.sn));
		switch (ev.type) {
		case MP_NOTE_REMOVED:
			mp->card_epoch = ev.epoch;
			if (!c->ops->iommu_outlives_card) {
				/* the next card will not see the clients' memory (and their window is
				 * the card's BAR, which must be let go of): their sessions end */
				end_all_sessions(mp, "lost the device (it was removed)");
				continue;
			}
			/* the card took every queue with it */
			__attribute__((fallthrough));
		case MP_NOTE_QUEUES_LOST:
			ctrlr_lock_qps(c);
			for (int i = 0; i < MP_MAX_SESSIONS; i++)
				if (mp->sessions[i].fd >= 0)
					mp_session_forget_queues(mp, &mp->sessions[i], ev.epoch);
			ctrlr_unlock_qps(c);
			broadcast(mp, &n, false);
			break;
		case MP_NOTE_ARRIVED:
			mp->card_epoch = ev.epoch;
			broadcast(mp, &n, false);
			break;
		case MP_NOTE_AER: {
			bool heard = false;
			for (int i = 0; i < MP_MAX_SESSIONS && !heard; i++)
				heard = mp->sessions[i].fd >= 0 && mp->sessions[i].aer;
			if (heard) {
				broadcast(mp, &n, true);
			} else {
				/* pending for whoever subscribes next: the event happened */
				const unsigned cap = sizeof(mp->aer_backlog) / sizeof(mp->aer_backlog[0]);
				if (mp->nr_backlog == cap)
					memmove(mp->aer_backlog, mp->aer_backlog + 1,
						--mp->nr_backlog * sizeof(mp->aer_backlog[0]));
				mp->aer_backlog[mp->nr_backlog++] = n;
			}
			break;
		}
		default:
			break;
		}
	}
}

/* ---- the thread ---- */

/* A device process with no client: is its idle period over, or its socket file gone? */
static bool device_may_end(struct mp_server *mp)
{
	/* (a connection that only asks for the status, or to stop, is no client) */
	for (int i = 0; i < MP_MAX_SESSIONS; i++) {
		if (mp->sessions[i].fd >= 0 && mp->sessions[i].hello) {
			mp->idle_since_ms = 0;
			return false;
		}
	}
	uint64_t now = mono_ms_coarse();
	if (!mp->idle_since_ms)
		mp->idle_since_ms = now;
	struct stat st;
	if (stat(mp->addr.sun_path, &st) != 0 || st.st_ino != mp->sock_ino || st.st_dev != mp->sock_dev)
		return true; /* nobody can reach it any more */
	return mp->idle_ms && now - mp->idle_since_ms >= mp->idle_ms;
}

static void *serve_main(void *arg)
{
	struct mp_server *mp = arg;
	struct unvme_ctrlr *c = mp->c;
	pthread_setname_np(pthread_self(), "unvme-mp");
	mp->idle_since_ms = mono_ms_coarse();
	while (!atomic_load(&mp->stop)) {
		struct pollfd p[MP_MAX_SESSIONS + 2];
		struct mp_session *who[MP_MAX_SESSIONS + 2];
		nfds_t n = 0;
		p[n++] = (struct pollfd){ .fd = mp->wake[0], .events = POLLIN };
		p[n++] = (struct pollfd){ .fd = mp->lfd, .events = POLLIN };
		for (int i = 0; i < MP_MAX_SESSIONS; i++) {
			if (mp->sessions[i].fd >= 0) {
				who[n] = &mp->sessions[i];
				p[n++] = (struct pollfd){ .fd = mp->sessions[i].fd, .events = POLLIN };
			}
		}
		int timeout = -1;
		if (mp->device_process)
			timeout = mp->aer_on ? AER_POLL_MS : HOUSEKEEPING_MS;
		int r = poll(p, n, timeout);
		if (atomic_load(&mp->stop))
			break;
		if (r > 0 && (p[0].revents & POLLIN)) {
			char buf[64];
			if (read(mp->wake[0], buf, sizeof(buf)) < 0)
				(void)0;
		}
		if (mp->device_process && !atomic_load(&c->removed)) {
			/* nobody else drives this controller: its host watches CSTS, and resets it
			 * after a fatal status (the clients hear QUEUES_LOST) */
			if (!c->gave_up && ctrlr_fatal_now(c))
				ctrlr_recover_fatal(c);
			if (mp->aer_on)
				(void)unvme_ctrlr_process_events(c); /* on_event queues what it reaps */
		}
		mp_server_drain_events(mp);
		if (r > 0 && (p[1].revents & POLLIN))
			accept_session(mp);
		for (nfds_t i = 2; r > 0 && i < n; i++) {
			struct mp_session *s = who[i];
			if (s->fd < 0 || !p[i].revents)
				continue; /* (ended meanwhile by a removal) */
			if (!serve_one(mp, s) && s->fd >= 0)
				session_end(mp, s, s->broken ? "stopped reading its notices" : "left");
		}
		for (int i = 0; i < MP_MAX_SESSIONS; i++)
			if (mp->sessions[i].fd >= 0 && mp->sessions[i].broken)
				session_end(mp, &mp->sessions[i], "stopped reading its notices");
		if (mp->device_process && !atomic_load(&mp->done) && device_may_end(mp))
			atomic_store(&mp->done, true);
	}
	return NULL;
}

static void server_stop(struct mp_server *mp)
{
	struct unvme_ctrlr *c = mp->c;
	atomic_store(&mp->stop, true);
	wake_server(mp);
	pthread_join(mp->thread, NULL);
	c->mp = NULL; /* (what the listener hears from now on is no session's) */
	if (mp->device_process)
		unvme_ctrlr_remove_event_cb(c, on_event, mp);
	/* no one connects any more, then every session ends */
	unlink(mp->addr.sun_path);
	close(mp->lfd);
	end_all_sessions(mp, "lost the device (it was closed)");
	close(mp->wake[0]);
	close(mp->wake[1]);
	pthread_mutex_destroy(&mp->ev_lock);
	free(mp);
}

static int server_start(struct unvme_ctrlr *c)
{
	if (!c->ops->share_doorbells)
		return 0;
	struct mp_server *mp = calloc(1, sizeof(*mp));
	if (!mp)
		return -ENOMEM;
	mp->c = c;
	mp->lfd = mp->wake[0] = mp->wake[1] = -1;
	mp->device_process = mp_device_serving(c->address, NULL);
	mp->idle_ms = mp->device_process ? mp_device_idle_ms() : 0;
	for (int i = 0; i < MP_MAX_SESSIONS; i++)
		mp->sessions[i].fd = mp->sessions[i].note_fd = -1;
	pthread_mutex_init(&mp->ev_lock, NULL);
	struct mp_where w;
	int rc = mp_where(c->address, &w);
	mp->addr = w.sock;
	if (rc == 0 && pipe2(mp->wake, O_CLOEXEC | O_NONBLOCK) != 0)
		rc = -errno;
	if (rc == 0) {
		mp->lfd = mp_listen(&mp->addr);
		if (mp->lfd < 0)
			rc = mp->lfd;
	}
	struct stat st;
	if (rc == 0 && stat(mp->addr.sun_path, &st) == 0) {
		mp->sock_dev = st.st_dev;
		mp->sock_ino = st.st_ino;
	}
	if (rc == 0 && mp->device_process)
		rc = unvme_ctrlr_add_event_cb(c, on_event, mp);
	if (rc == 0) {
		c->mp = mp;
		rc = -unvme_thread_start(&mp->thread, serve_main, mp);
		if (rc)
			c->mp = NULL;
	}
	if (rc) {
		if (mp->device_process)
			unvme_ctrlr_remove_event_cb(c, on_event, mp);
		if (mp->lfd >= 0) {
			close(mp->lfd);
			unlink(mp->addr.sun_path);
		}
		if (mp->wake[0] >= 0) {
			close(mp->wake[0]);
			close(mp->wake[1]);
		}
		pthread_mutex_destroy(&mp->ev_lock);
		rc = unvme_fail(rc, "%s: cannot serve other processes on %s: %s", c->devid,
				mp->addr.sun_path, strerror(-rc));
		free(mp);
		return rc;
	}
	return 0;
}

int mp_server_life(struct unvme_ctrlr *c, enum ctrlr_life what, int status, void *arg)
{
	(void)arg;
	if (what == CTRLR_LIFE_ATTACHED) {
		if (server_start(c) == 0)
			return 0;
		if (mp_device_serving(c->address, NULL))
			return -EIO; /* a device process that cannot serve has no purpose */
		if (unvme_log_on())
			fprintf(stderr, "unvme: %s (other processes cannot share it)\n", unvme_errmsg());
		return 0;
	}
	struct mp_server *mp = c->mp;
	if (!mp)
		return 0; /* it serves nobody: it could not start, or it stopped */
	if (what == CTRLR_LIFE_CLOSING) {
		server_stop(mp);
		return 0;
	}
	/* queues created from now on are not the ones lost here */
	uint32_t epoch = atomic_fetch_add(&mp->epoch, 1) + 1;
	struct mp_event ev = { .epoch = epoch, .status = status };
	switch (what) {
	case CTRLR_LIFE_QUEUES_LOST: ev.type = MP_NOTE_QUEUES_LOST; break;
	case CTRLR_LIFE_REMOVED: ev.type = MP_NOTE_REMOVED; break;
	case CTRLR_LIFE_ARRIVED: ev.type = MP_NOTE_ARRIVED; break;
	default: return 0;
	}
	push_event(mp, &ev);
	return 0;
}

unsigned mp_server_sessions(const struct unvme_ctrlr *c)
{
	return c->mp ? atomic_load(&c->mp->nr_sessions) : 0;
}

bool mp_server_done(const struct unvme_ctrlr *c)
{
	return c->mp && atomic_load(&c->mp->done);
}
