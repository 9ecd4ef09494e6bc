/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A client process's transport (mp.h): the controller is run by another process, a device
 * process or the primary application.
 *
 * Registers below the doorbells are read through the server (a message each: only the slow
 * paths read them); writes to them are dropped, as a client never brings up or resets the
 * controller. Doorbells are stores into the device's doorbell window, mapped here (an
 * emulated device's memfd, whose wake word is kicked after the store when the device's
 * watcher sleeps, or a VFIO device's BAR0 from its registers' end on, through the device's
 * descriptor the server passed): the data path is this process's rings, its DMA memory and
 * those stores. Admin commands, queue creation and DMA mappings are requests to the server
 * (mp_channel.c). An application's are synchronous calls; a recovery's, made inside a queue
 * pair's poll or submit, are not: its Abort, Delete and Create I/O SQ/CQ are sent without
 * waiting (admin_async) and complete at a later recovery step that finds their replies
 * (admin_reap), and a queue lost to a fence or to the server's reset is created again the
 * same way (queue_create_start, then queue_create_done at the steps that follow, the queue
 * pair's REBUILD, recovery.c). So no poll or submit of a client waits for its server.
 *
 * A watcher thread reads the server's notices and waits for its socket to close:
 *   - QUEUES_LOST (the controller was reset): every queue pair is failed and gone, and its
 *     owner creates it again at its next submit or poll, as after a reset in this process;
 *   - REMOVED / ARRIVED: the emulated card left the server's slot, or one is back: the
 *     controller is removed here as a hot-plug removal makes it (hotplug.c), then
 *     re-attached with the new card's doorbell window;
 *   - an Asynchronous Event (after unvme_ctrlr_aer_enable): queued for
 *     unvme_ctrlr_process_events;
 *   - the socket closed: the server's process (and the device with it) is gone, or it let go
 *     of the device: commands in flight are given back with ABORTED_SQ_DELETION, calls answer
 *     -ENODEV, listeners hear UNVME_EVENT_REMOVED. Opening the device again starts a new
 *     device process (or makes this process the primary).
 * A thread that pulls or puts the card itself acts on the notice before it returns.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "unvme/emu.h"
#include "lib/common/anon_pages.h"
#include "lib/common/env.h"
#include "lib/common/futex.h"
#include "lib/driver/ctrlr.h"
#include "lib/driver/errmsg.h"
#include "mp.h"
#include "mp_channel.h"
#include "lib/common/thread.h"

#define REQ_TIMEOUT_MS 10000   /* beyond the admin timeout, for everything but admin */
#define PLUG_TIMEOUT_MS 120000 /* a card's power-on may replay a large log file */
#define MAX_OLD_WINDOWS 64     /* windows of cards since replaced, let go of at detach */

/* A doorbell window as mapped here; replaced whole when a new card arrives. */
struct mp_win {
	void *map;
	size_t map_len;
	_Atomic uint32_t *db;      /* the doorbells */
	size_t words;
	_Atomic uint32_t *wake;    /* the device's watcher sleeps on it (NULL: hardware) */
};

struct mp_cli {
	struct unvme_ctrlr *c;
	int sock;
	struct mp_chan ch;         /* requests on sock */
	int note;                  /* the server's notices */
	pthread_mutex_t note_lock; /* notices are acted on by one thread at a time */
	/* The server's epoch (mp_server.h) each queue id was created at, and the epoch of the
	 * last reset whose QUEUES_LOST was acted on: a queue created at or after a reset's
	 * epoch did not go with it (its notice may come after the queue was made again). */
	_Atomic uint32_t *queue_epoch;
	uint32_t nr_queue_epoch;
	_Atomic uint32_t lost_epoch;
	_Atomic(struct mp_win *) win;
	struct mp_win *old[MAX_OLD_WINDOWS];
	unsigned nr_old;
	pid_t server;
	bool device_process;
	int arrival_rc;            /* of the last ARRIVED acted on (for unvme_emu_plug) */
	int wake[2];
	pthread_t watcher;
	_Atomic bool closing;
};

/* One request and its reply; fd goes with the request, a descriptor that comes with the reply
 * goes to got[0..1] (NULL: none is expected; any that comes is closed). 0 or a negative
 * errno with a message (the reply's rc is the caller's to read). */
static int call(struct mp_cli *s, struct mp_req *rq, int fd, struct mp_rep *rep, int timeout_ms,
		int *got)
{
	int rc = mp_chan_call(&s->ch, rq, fd, rep, timeout_ms, got);
	if (rc == 0)
		return 0;
	return unvme_fail(rc == -ETIMEDOUT ? rc : -ENODEV, "%s: the process that runs the device "
			  "(pid %d) %s", s->c->devid, (int)s->server,
			  rc == -ETIMEDOUT ? "does not answer"
			  : rc == -EPROTO ? "sent a malformed reply" : "is gone");
}

static int rep_error(const struct mp_rep *rep)
{
	if (rep->rc < 0)
		return unvme_fail(rep->rc, "%s", rep->msg[0] ? rep->msg : strerror(-rep->rc));
	return rep->rc;
}

/* ---- the doorbell window ---- */

static int map_window(struct mp_cli *s, int fd, const struct mp_rep *rep)
{
	uint64_t off = rep->hello.win_off, len = rep->hello.win_len, wake = rep->hello.wake_off;
	if (len < 4 || len > (1u << 30) || (wake != MP_NO_WAKE && (wake % 4 || wake > len - 4)))
		return unvme_fail(-EPROTO, "%s: a doorbell window of %llu bytes", s->c->devid,
				  (unsigned long long)len);
	struct mp_win *w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	void *p = mmap(NULL, (size_t)len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)off);
	if (p == MAP_FAILED) {
		int e = errno;
		free(w);
		return unvme_fail(-e, "%s: cannot map the doorbell window: %s", s->c->devid,
				  strerror(e));
	}
	w->map = p;
	w->map_len = (size_t)len;
	w->db = p;
	w->words = (size_t)(wake == MP_NO_WAKE ? len : wake) / 4;
	w->wake = wake == MP_NO_WAKE ? NULL : (_Atomic uint32_t *)((uint8_t *)p + wake);
	struct mp_win *old = atomic_exchange(&s->win, w);
	if (old) {
		/* a thread that loaded it a moment ago may still ring into it: pages that go
		 * nowhere take the old card's place, freed at detach */
		(void)replace_with_anon_pages(old->map, old->map_len, 0);
		if (s->nr_old < MAX_OLD_WINDOWS)
			s->old[s->nr_old++] = old;
	}
	return 0;
}

/* After a card came back: its doorbell window, CAP and VS. */
static int refresh_window(struct mp_cli *s)
{
	struct unvme_ctrlr *c = s->c;
	struct mp_req rq = { .op = MP_WINDOW };
	struct mp_rep rep;
	int fds[MP_MAX_FDS];
	int rc = call(s, &rq, -1, &rep, REQ_TIMEOUT_MS, fds);
	if (rc)
		return rc;
	if (fds[1] >= 0)
		close(fds[1]);
	if (rep.rc) {
		if (fds[0] >= 0)
			close(fds[0]);
		return rep_error(&rep);
	}
	if (fds[0] < 0)
		return unvme_fail(-EPROTO, "%s: no doorbell window for the new card", c->devid);
	if (NVME_CAP_DSTRD(rep.hello.cap) != c->dstrd ||
	    (4096u << NVME_CAP_MPSMIN(rep.hello.cap)) != c->page_size) {
		close(fds[0]);
		return unvme_fail(-EINVAL, "%s: the new device has another doorbell stride or page "
				  "size than the one it replaces; close and open it again", c->devid);
	}
	rc = map_window(s, fds[0], &rep);
	close(fds[0]);
	if (rc == 0) {
		c->cap = rep.hello.cap;
		c->vs = rep.hello.vs;
		c->queue_grant = rep.hello.queues ? rep.hello.queues : 1;
	}
	return rc;
}

/* ---- notices ---- */

/* The epoch queue qid was created at (0: not known). */
static uint32_t queue_epoch(struct mp_cli *s, uint16_t qid)
{
	return s->queue_epoch && qid < s->nr_queue_epoch ? atomic_load(&s->queue_epoch[qid]) : 0;
}

/* A queue id the server gave is one the controller granted, and its epoch is kept. */
static int queue_made(struct mp_cli *s, struct unvme_qpair *qp, const struct mp_rep *rep)
{
	struct unvme_ctrlr *c = s->c;
	uint32_t qid = rep->queue.qid;
	if (qid == 0 || qid > c->max_io_queues || qid >= s->nr_queue_epoch)
		return unvme_fail(-EPROTO, "%s: the process that runs the device gave queue id %u; "
				  "it granted 1..%u", c->devid, qid, c->max_io_queues);
	atomic_store(&s->queue_epoch[qid], rep->queue.epoch);
	qpair_set_qid(qp, (uint16_t)qid);
	return 0;
}

static void queues_lost(struct mp_cli *s, uint32_t epoch)
{
	/* as after a reset in this process: each owner creates its queue pair again (one it
	 * created after this reset already is not touched) */
	struct unvme_ctrlr *c = s->c;
	ctrlr_lock_qps(c);
	if ((int32_t)(epoch - atomic_load(&s->lost_epoch)) > 0)
		atomic_store(&s->lost_epoch, epoch);
	atomic_fetch_add(&c->generation, 1);
	for (struct unvme_qpair *qp = c->qpairs; qp; qp = qp->next) {
		if (!atomic_load(&qp->gone) && queue_epoch(s, qp->qid) &&
		    (int32_t)(queue_epoch(s, qp->qid) - epoch) >= 0)
			continue;
		atomic_store(&qp->gone, true);
		atomic_store(&qp->failed, 1);
	}
	ctrlr_unlock_qps(c);
}

static void act_on(struct mp_cli *s, const struct mp_note *n)
{
	struct unvme_ctrlr *c = s->c;
	switch (n->type) {
	case MP_NOTE_QUEUES_LOST:
		if (!atomic_load(&c->removed))
			queues_lost(s, n->epoch);
		break;
	case MP_NOTE_REMOVED:
		if (!atomic_load(&c->removed)) {
			ctrlr_hotplug_removing(c);
			ctrlr_hotplug_removed(c);
		}
		break;
	case MP_NOTE_ARRIVED:
		if (n->status) {
			s->arrival_rc = n->status;
			if (unvme_log_on())
				fprintf(stderr, "unvme: %s: a card is back in the slot of process %d, "
					"which could not attach it (%d)\n", c->devid, (int)s->server,
					n->status);
			break;
		}
		s->arrival_rc = refresh_window(s);
		if (s->arrival_rc == 0)
			s->arrival_rc = ctrlr_hotplug_arrived(c);
		break;
	case MP_NOTE_AER: {
		pthread_mutex_lock(&c->admin_lock);
		const uint32_t cap = sizeof(c->aer_pending) / sizeof(c->aer_pending[0]);
		if (c->aer_enabled && c->nr_aer_pending < cap) {
			memcpy(c->aer_pending_sn[c->nr_aer_pending], n->sn, sizeof(n->sn));
			c->aer_pending[c->nr_aer_pending++] = n->dw0;
		}
		pthread_mutex_unlock(&c->admin_lock);
		break;
	}
	default:
		break; /* a newer server's: nothing to do */
	}
}

/* Acts on every notice that has arrived. */
static void drain_notes(struct mp_cli *s)
{
	pthread_mutex_lock(&s->note_lock);
	struct mp_note n;
	while (mp_recv(s->note, &n, sizeof(n), NULL, 0, 0) == (ssize_t)sizeof(n))
		act_on(s, &n);
	pthread_mutex_unlock(&s->note_lock);
}

static void *watch_main(void *arg)
{
	struct mp_cli *s = arg;
	pthread_setname_np(pthread_self(), "unvme-mp-watch");
	struct pollfd p[3] = { { .fd = s->sock, .events = POLLRDHUP },
			       { .fd = s->wake[0], .events = POLLIN },
			       { .fd = s->note, .events = POLLIN } };
	for (;;) {
		int r = poll(p, 3, -1);
		if (r < 0 && errno == EINTR)
			continue;
		if (atomic_load(&s->closing) || (p[1].revents & POLLIN))
			return NULL;
		if (p[2].revents & POLLIN)
			drain_notes(s);
		if ((p[0].revents & (POLLRDHUP | POLLHUP | POLLERR)) ||
		    (p[2].revents & (POLLHUP | POLLERR)))
			break;
	}
	/* the server's process (and with it the device) is gone, or it let go of the device:
	 * nothing can touch this process's memory any more, so what is outstanding can be
	 * given back */
	bool told = atomic_load(&s->c->removed) && atomic_load(&s->c->gave_up); /* REMOVED */
	ctrlr_hotplug_removing(s->c);
	/* and the window is let go of too (a VFIO device's BAR: the kernel's removal of the
	 * device waits for every mapping of it): doorbell writes go nowhere */
	struct mp_win *w = atomic_load(&s->win);
	(void)replace_with_anon_pages(w->map, w->map_len, 0);
	if (!told)
		ctrlr_hotplug_removed(s->c);
	return NULL;
}

/* The recovery's question (transport.h: orphaned). */
static bool cli_orphaned(struct unvme_ctrlr *c)
{
	if (!c->transport_ctx)
		return false;
	struct mp_cli *s = c->transport_ctx;
	struct pollfd p = { .fd = s->sock, .events = POLLRDHUP };
	return poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

/* ---- attach ---- */

static int cli_attach(struct unvme_ctrlr *c, const char *address)
{
	struct mp_cli *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->c = c;
	s->sock = c->wrap_fd;
	c->wrap_fd = -1; /* ours now */
	s->note = s->wake[0] = s->wake[1] = -1;
	mp_chan_init(&s->ch, s->sock, c->devid);
	pthread_mutex_init(&s->note_lock, NULL);
	c->transport_ctx = s;
	struct mp_req rq = { .op = MP_HELLO };
	rq.hello.version = MP_VERSION;
	rq.hello.pid = (int32_t)getpid();
	struct mp_rep rep;
	int fds[MP_MAX_FDS];
	if (call(s, &rq, -1, &rep, REQ_TIMEOUT_MS, fds) != 0)
		return unvme_fail(-ENODEV, "%s: the process that runs the device did not let this "
				  "one share it (too many processes, or it is closing it)", c->devid);
	if (rep.rc) {
		for (unsigned i = 0; i < MP_MAX_FDS; i++)
			if (fds[i] >= 0)
				close(fds[i]);
		return rep_error(&rep);
	}
	s->server = rep.hello.pid;
	s->note = fds[1];
	if (fds[0] < 0 || fds[1] < 0) {
		if (fds[0] >= 0)
			close(fds[0]);
		return unvme_fail(-EPROTO, "%s: no doorbell window or notice socket from process %d",
				  c->devid, (int)s->server);
	}
	int rc = map_window(s, fds[0], &rep);
	close(fds[0]);
	if (rc)
		return rc;
	s->device_process = rep.hello.flags & MP_HELLO_DEVICE_PROCESS;
	if (s->device_process)
		ctrlr_set_transport(c, &unvme_transport_mp_client); /* the same, by name for people */
	c->cap = rep.hello.cap;
	c->vs = rep.hello.vs;
	c->queue_grant = rep.hello.queues ? rep.hello.queues : 1;
	if (c->queue_grant > 65535)
		return unvme_fail(-EPROTO, "%s: process %d grants %u queues; a controller has at most "
				  "65535", c->devid, (int)s->server, c->queue_grant);
	s->nr_queue_epoch = c->queue_grant + 1;
	s->queue_epoch = calloc(s->nr_queue_epoch, sizeof(*s->queue_epoch));
	if (!s->queue_epoch)
		return -ENOMEM;
	c->dstrd = NVME_CAP_DSTRD(c->cap);
	c->page_size = 4096u << NVME_CAP_MPSMIN(c->cap);
	if (s->device_process)
		snprintf(c->transport_info, sizeof(c->transport_info),
			 "a client of the device process %d, which runs %s", (int)s->server, address);
	else
		snprintf(c->transport_info, sizeof(c->transport_info),
			 "shared with the primary process %d, which runs the controller %s",
			 (int)s->server, address);
	if (pipe2(s->wake, O_CLOEXEC) != 0)
		return -errno;
	rc = -unvme_thread_start(&s->watcher, watch_main, s);
	if (rc) {
		close(s->wake[0]);
		close(s->wake[1]);
		s->wake[0] = s->wake[1] = -1;
		return rc;
	}
	return 0;
}

static void cli_detach(struct unvme_ctrlr *c)
{
	struct mp_cli *s = c->transport_ctx;
	if (s->wake[1] >= 0) {
		atomic_store(&s->closing, true);
		if (write(s->wake[1], "x", 1) < 0)
			(void)0;
		pthread_join(s->watcher, NULL);
		close(s->wake[0]);
		close(s->wake[1]);
	}
	close(s->sock); /* the server releases what is left of ours */
	if (s->note >= 0)
		close(s->note);
	struct mp_win *w = atomic_load(&s->win);
	if (w) {
		munmap(w->map, w->map_len);
		free(w);
	}
	for (unsigned i = 0; i < s->nr_old; i++) {
		munmap(s->old[i]->map, s->old[i]->map_len);
		free(s->old[i]);
	}
	pthread_mutex_destroy(&s->note_lock);
	mp_chan_fini(&s->ch);
	free(s->queue_epoch);
	free(s);
	c->transport_ctx = NULL;
}

/* ---- registers and doorbells ---- */

static uint64_t reg_read(void *ctx, uint32_t off, uint32_t width)
{
	struct mp_cli *s = ctx;
	if (off >= NVME_REG_DBS)
		return 0;
	struct mp_req rq = { .op = MP_REG_READ };
	rq.reg.off = off;
	rq.reg.width = width;
	struct mp_rep rep;
	if (call(s, &rq, -1, &rep, REQ_TIMEOUT_MS, NULL) != 0 || rep.rc)
		return UINT64_MAX; /* as a device that is gone reads */
	return rep.reg;
}

static uint32_t cli_read32(void *ctx, uint32_t off)
{
	uint64_t v = reg_read(ctx, off, 4);
	return v == UINT64_MAX ? UINT32_MAX : (uint32_t)v;
}

static uint64_t cli_read64(void *ctx, uint32_t off)
{
	return reg_read(ctx, off, 8);
}

static void cli_write32(void *ctx, uint32_t off, uint32_t val)
{
	struct mp_cli *s = ctx;
	if (off < NVME_REG_DBS)
		return; /* the controller's configuration is the server's */
	struct mp_win *w = atomic_load_explicit(&s->win, memory_order_acquire);
	size_t i = (off - NVME_REG_DBS) / 4;
	if (i >= w->words)
		return;
	atomic_store_explicit(&w->db[i], val, memory_order_release);
	if (w->wake)
		futex_kick(w->wake, true); /* the device's watcher sleeps: this is work */
}

static void cli_write64(void *ctx, uint32_t off, uint64_t val)
{
	(void)ctx;
	(void)off;
	(void)val;
}

/* ---- requests ---- */

static int cli_dma_map(void *ctx, void *vaddr, uint64_t iova, size_t len)
{
	return -EOPNOTSUPP; /* dma_map_shared is used */
}

static int cli_dma_map_shared(void *ctx, void *vaddr, uint64_t iova, size_t len, int fd, uint64_t off)
{
	struct mp_cli *s = ctx;
	if (fd < 0)
		return unvme_fail(-EOPNOTSUPP, "%s: DMA memory this process inherited through fork() "
				  "cannot be shared with the process that runs the device", s->c->devid);
	struct mp_req rq = { .op = MP_DMA_MAP };
	rq.map.iova = iova;
	rq.map.len = len;
	rq.map.off = off;
	struct mp_rep rep;
	int rc = call(s, &rq, fd, &rep, REQ_TIMEOUT_MS, NULL);
	return rc ? rc : rep_error(&rep);
}

static void cli_dma_unmap(void *ctx, uint64_t iova, size_t len)
{
	struct mp_cli *s = ctx;
	struct mp_req rq = { .op = MP_DMA_UNMAP };
	rq.map.iova = iova;
	rq.map.len = len;
	struct mp_rep rep;
	(void)call(s, &rq, -1, &rep, REQ_TIMEOUT_MS, NULL);
}

/* buf is DMA memory (the controller's admin bounce buffer, admin.c): the server reads and
 * writes it where it mapped it. */
static int cli_admin(struct unvme_ctrlr *c, const struct nvme_sqe *cmd, void *buf, size_t len,
		     struct nvme_cqe *cpl)
{
	struct mp_cli *s = c->transport_ctx;
	struct mp_req rq = { .op = MP_ADMIN };
	rq.admin.sqe = *cmd;
	rq.admin.data_iova = len ? unvme_dma_iova(buf) : 0;
	rq.admin.len = (uint32_t)len;
	struct mp_rep rep;
	uint32_t limit = unvme_admin_limit_ms(c, cmd->opc);
	int tmo = (int)(limit ? limit : 60000) + REQ_TIMEOUT_MS;
	int rc = call(s, &rq, -1, &rep, tmo, NULL);
	if (rc)
		return rc;
	*cpl = rep.cpl;
	return rep_error(&rep);
}

/* The request that creates qp's queues on its rings. */
static struct mp_req queue_create_req(const struct unvme_qpair *qp)
{
	struct mp_req rq = { .op = MP_QUEUE_CREATE };
	rq.qcreate.depth = qp->depth;
	rq.qcreate.sq_iova = qp->sq_iova;
	rq.qcreate.cq_iova = qp->cq_iova;
	return rq;
}

static int cli_queue_create(struct unvme_qpair *qp)
{
	struct mp_cli *s = qp->ctrlr->transport_ctx;
	struct mp_req rq = queue_create_req(qp);
	struct mp_rep rep;
	int rc = call(s, &rq, -1, &rep, REQ_TIMEOUT_MS, NULL);
	if (rc)
		return rc;
	if (rep.rc)
		return rep_error(&rep);
	return queue_made(s, qp, &rep);
}

/* ---- a recovery's requests, sent without waiting (mp_channel.h) ---- */

static int cli_admin_async(struct unvme_ctrlr *c, const struct nvme_sqe *cmd, void *buf,
			   size_t len, void (*cb)(void *arg, const struct nvme_cqe *cpl), void *arg)
{
	struct mp_cli *s = c->transport_ctx;
	struct mp_req rq = { .op = MP_ADMIN };
	rq.admin.sqe = *cmd;
	rq.admin.data_iova = len ? unvme_dma_iova(buf) : 0; /* DMA memory, as on an admin queue */
	rq.admin.len = (uint32_t)len;
	int rc = mp_chan_send(&s->ch, &rq, false, cb, arg, 0);
	if (rc && rc != -EAGAIN)
		return unvme_fail(-ENODEV, "%s: admin command 0x%02x not sent: the process that "
				  "runs the device (pid %d) is gone", c->devid, cmd->opc, (int)s->server);
	return rc;
}

static void cli_admin_reap(struct unvme_ctrlr *c)
{
	struct mp_cli *s = c->transport_ctx;
	mp_chan_reap(&s->ch);
}

static void cli_admin_forget(struct unvme_ctrlr *c, const void *lo, const void *hi)
{
	struct mp_cli *s = c->transport_ctx;
	mp_chan_forget(&s->ch, lo, hi);
}

static int cli_queue_create_start(struct unvme_qpair *qp)
{
	struct mp_cli *s = qp->ctrlr->transport_ctx;
	struct mp_req rq = queue_create_req(qp);
	int rc = mp_chan_send(&s->ch, &rq, true, NULL, qp, 0);
	if (rc && rc != -EAGAIN)
		return unvme_fail(-ENODEV, "%s: queue %u cannot be created again: the process that "
				  "runs the device (pid %d) is gone", qp->ctrlr->devid, qp->qid,
				  (int)s->server);
	return rc;
}

static int cli_queue_create_done(struct unvme_qpair *qp)
{
	struct unvme_ctrlr *c = qp->ctrlr;
	struct mp_cli *s = c->transport_ctx;
	/* no reset's QUEUES_LOST is acted on meanwhile (it decides by the queue's id and epoch,
	 * under qp_lock): or at the next step. (Held here already by a queue's destroy, which
	 * settles its recovery.) */
	bool mine = !ctrlr_qps_locked_here(c);
	if (mine && !ctrlr_trylock_qps(c))
		return -EINPROGRESS;
	struct mp_rep rep;
	uint32_t tag;
	int rc = mp_chan_take(&s->ch, MP_QUEUE_CREATE, qp, &rep, &tag, REQ_TIMEOUT_MS);
	if (rc == -EINPROGRESS) {
		if (mine)
			ctrlr_unlock_qps(c);
		return rc;
	}
	if (rc == -ETIMEDOUT || rc == -ENOENT)
		rc = unvme_fail(rc == -ENOENT ? -EIO : rc, "%s: the process that runs the device "
				"(pid %d) did not create queue %u again within %d ms", c->devid,
				(int)s->server, qp->qid, REQ_TIMEOUT_MS);
	else if (rep.rc)
		rc = rep.rc < 0 ? rep_error(&rep) : -EIO;
	else if ((int32_t)(rep.queue.epoch - atomic_load(&s->lost_epoch)) < 0)
		rc = -ESTALE; /* made before a reset this process heard of since: gone with it */
	else
		rc = queue_made(s, qp, &rep);
	if (mine)
		ctrlr_unlock_qps(c);
	return rc;
}

static int cli_queue_delete(struct unvme_qpair *qp)
{
	struct mp_cli *s = qp->ctrlr->transport_ctx;
	struct mp_req rq = { .op = MP_QUEUE_DELETE };
	rq.qdelete.qid = qp->qid;
	struct mp_rep rep;
	int rc = call(s, &rq, -1, &rep, REQ_TIMEOUT_MS, NULL);
	return rc ? rc : rep_error(&rep);
}

static int cli_events_subscribe(struct unvme_ctrlr *c)
{
	struct mp_cli *s = c->transport_ctx;
	struct mp_req rq = { .op = MP_AER_SUBSCRIBE };
	struct mp_rep rep;
	int rc = call(s, &rq, -1, &rep, REQ_TIMEOUT_MS, NULL);
	return rc ? rc : rep_error(&rep);
}

static void cli_events_poll(struct unvme_ctrlr *c)
{
	drain_notes(c->transport_ctx); /* (the watcher may not have woken yet) */
	cli_admin_reap(c);
}

int mp_client_unplug(struct unvme_ctrlr *c)
{
	struct mp_cli *s = c->transport_ctx;
	struct mp_req rq = { .op = MP_UNPLUG };
	struct mp_rep rep;
	int rc = call(s, &rq, -1, &rep, REQ_TIMEOUT_MS, NULL);
	if (rc)
		return rc;
	if (rep.rc)
		return rep_error(&rep);
	drain_notes(s); /* the REMOVED notice came before the reply */
	return 0;
}

int mp_client_plug(struct unvme_ctrlr *c, const char *card)
{
	struct mp_cli *s = c->transport_ctx;
	struct mp_req rq = { .op = MP_PLUG };
	size_t len = card ? strlen(card) : 0;
	if (len > MP_URI_MAX)
		return unvme_fail(-ENAMETOOLONG, "plug: the card URI is %zu characters long; at most "
				  "%u are allowed", len, MP_URI_MAX);
	rq.card.len = (uint32_t)len;
	if (len)
		memcpy(rq.card.uri, card, len);
	struct mp_rep rep;
	pthread_mutex_lock(&s->note_lock);
	s->arrival_rc = INT_MIN; /* none acted on yet */
	pthread_mutex_unlock(&s->note_lock);
	int rc = call(s, &rq, -1, &rep, PLUG_TIMEOUT_MS, NULL);
	if (rc)
		return rc;
	if (rep.rc < 0)
		return rep_error(&rep);
	/* the ARRIVED notice came before the reply: re-attached here (or by the watcher, which
	 * this waits for) once this returns */
	drain_notes(s);
	if (rep.rc)
		return rep.rc; /* the server's own re-attach failed: the card stays unusable */
	pthread_mutex_lock(&s->note_lock);
	rc = s->arrival_rc == INT_MIN ? 0 : s->arrival_rc;
	pthread_mutex_unlock(&s->note_lock);
	return rc;
}

static int cli_ctrlr_reset(struct unvme_ctrlr *c)
{
	struct mp_cli *s = c->transport_ctx;
	struct mp_req rq = { .op = MP_RESET };
	struct mp_rep rep;
	int tmo = (int)(c->opts.admin_timeout_ms ? c->opts.admin_timeout_ms : 60000) + REQ_TIMEOUT_MS;
	int rc = call(s, &rq, -1, &rep, tmo, NULL);
	if (rc)
		return rc;
	if (rep.rc)
		return rep_error(&rep);
	drain_notes(s); /* QUEUES_LOST came before the reply: this process's queues are gone */
	return 0;
}

static int cli_card_unplug(struct unvme_ctrlr *c)
{
	return mp_client_unplug(c);
}

static int cli_card_plug(struct unvme_ctrlr *c, const char *card)
{
	return mp_client_plug(c, card);
}

#define CLIENT_OPS                                  \
	.attach = cli_attach,                       \
	.detach = cli_detach,                       \
	.read32 = cli_read32,                       \
	.write32 = cli_write32,                     \
	.read64 = cli_read64,                       \
	.write64 = cli_write64,                     \
	.dma_map = cli_dma_map,                     \
	.dma_unmap = cli_dma_unmap,                 \
	.dma_map_shared = cli_dma_map_shared,       \
	.admin = cli_admin,                         \
	.queue_create = cli_queue_create,           \
	.queue_delete = cli_queue_delete,           \
	.admin_async = cli_admin_async,             \
	.admin_reap = cli_admin_reap,               \
	.admin_forget = cli_admin_forget,           \
	.queue_create_start = cli_queue_create_start, \
	.queue_create_done = cli_queue_create_done, \
	.events_subscribe = cli_events_subscribe,   \
	.events_poll = cli_events_poll,             \
	.card_unplug = cli_card_unplug,             \
	.card_plug = cli_card_plug,                 \
	.ctrlr_reset = cli_ctrlr_reset,             \
	.orphaned = cli_orphaned

static const struct unvme_transport_ops client_ops = { CLIENT_OPS };
const struct unvme_transport unvme_transport_mp_secondary = {
	.name = "secondary", .kind = UNVME_TRANSPORT_CLIENT, .ops = &client_ops };
const struct unvme_transport unvme_transport_mp_client = {
	.name = "client", .kind = UNVME_TRANSPORT_CLIENT, .ops = &client_ops };
