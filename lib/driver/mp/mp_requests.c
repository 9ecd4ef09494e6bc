/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A server's answers to its clients' requests (mp.h). Every byte of a request is the
 * client's: its length must be the one its operation has, every length inside it is checked
 * against what it describes, and a client touches only what it owns: memory it mapped
 * itself (admin data, rings), queues it created (Delete, Abort), its own session (nothing
 * before HELLO). Admin commands pass mp_admin_policy.c: the server's buffer, of the length
 * the command itself gives, carries the data, and no pointer of the client reaches the
 * device.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unvme/emu.h"
#include "lib/driver/errmsg.h"
#include "mp_admin_policy.h"
#include "mp_server.h"

static const char *op_name(uint32_t op)
{
	static const char *const names[] = {
		[MP_HELLO] = "HELLO", [MP_REG_READ] = "REG_READ", [MP_ADMIN] = "ADMIN",
		[MP_QUEUE_CREATE] = "QUEUE_CREATE", [MP_QUEUE_DELETE] = "QUEUE_DELETE",
		[MP_DMA_MAP] = "DMA_MAP", [MP_DMA_UNMAP] = "DMA_UNMAP", [MP_WINDOW] = "WINDOW",
		[MP_AER_SUBSCRIBE] = "AER_SUBSCRIBE", [MP_UNPLUG] = "UNPLUG", [MP_PLUG] = "PLUG",
		[MP_STOP] = "STOP", [MP_STATUS] = "STATUS", [MP_RESET] = "RESET",
	};
	return op < MP_OP_END && names[op] ? names[op] : "?";
}

static void fail(struct mp_rep *rep, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail(struct mp_rep *rep, int rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	rep->rc = rc;
	vsnprintf(rep->msg, sizeof(rep->msg), fmt, ap);
	va_end(ap);
}

/* In a request's handler: answer so and return. */
#define FAIL(...) do { fail(__VA_ARGS__); return; } while (0)
#define RESULT(rep, rc) do { result(rep, rc); return; } while (0)

/* rc of a driver call, with the driver's message for a negative one. */
static void result(struct mp_rep *rep, int rc)
{
	rep->rc = rc;
	if (rc < 0)
		snprintf(rep->msg, sizeof(rep->msg), "%s", unvme_errmsg()[0] ? unvme_errmsg()
									  : strerror(-rc));
}

static struct mp_queue *owned_queue(struct mp_session *s, uint32_t qid)
{
	for (size_t i = 0; i < s->nr_queues; i++)
		if (s->queues[i].qid == qid)
			return &s->queues[i];
	return NULL;
}

/* Drops the record of q (qp_lock held): its id is free again. */
static void drop_queue(struct mp_server *mp, struct mp_session *s, struct mp_queue *q)
{
	if (q->qid <= mp->c->max_io_queues)
		mp->c->qid_used[q->qid] = 0;
	*q = s->queues[--s->nr_queues];
}

static void do_hello(struct mp_server *mp, struct mp_session *s, const struct mp_req *rq,
		     struct mp_rep *rep, int *out, unsigned *nout)
{
	struct unvme_ctrlr *c = mp->c;
	if (rq->hello.version != MP_VERSION)
		FAIL(rep, -EPROTO, "%s: the process that runs the device (pid %d) uses "
			    "another version of the library (protocol %u, this one %u)", c->devid,
			    (int)getpid(), MP_VERSION, rq->hello.version);
	if (s->hello)
		FAIL(rep, -EALREADY, "%s: HELLO twice on one session", c->devid);
	if (atomic_load(&c->removed) || c->failed)
		FAIL(rep, -ENODEV, "%s: the device is removed or failed in the process that "
			    "runs it (pid %d)", c->devid, (int)getpid());
	/* the window for this client only (a VFIO device's removal waits for every descriptor
	 * of it), and the notice socket: the server keeps the other end */
	int win = -1, pair[2];
	size_t win_len = 0;
	int rc = c->ops->share_doorbells(c->transport_ctx, &win, &rep->hello.win_off, &win_len,
					 &rep->hello.wake_off);
	if (rc)
		FAIL(rep, rc, "%s: cannot share the doorbells: %s", c->devid, strerror(-rc));
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) {
		rc = -errno;
		close(win);
		FAIL(rep, rc, "%s: no notice socket: %s", c->devid, strerror(-rc));
	}
	(void)fcntl(pair[0], F_SETFL, fcntl(pair[0], F_GETFL) | O_NONBLOCK);
	s->note_fd = pair[0];
	s->hello = true;
	out[0] = win;
	out[1] = pair[1];
	*nout = 2;
	rep->hello.win_len = win_len;
	rep->hello.cap = c->cap;
	rep->hello.vs = c->vs;
	rep->hello.pid = (int32_t)getpid();
	rep->hello.flags = mp->device_process ? MP_HELLO_DEVICE_PROCESS : 0;
	rep->hello.epoch = mp->card_epoch;
	rep->hello.queues = c->max_io_queues;
	rep->rc = 0;
}

static void do_window(struct mp_server *mp, struct mp_rep *rep, int *out, unsigned *nout)
{
	struct unvme_ctrlr *c = mp->c;
	if (atomic_load(&c->removed))
		FAIL(rep, -ENODEV, "%s: no card in the slot", c->devid);
	size_t win_len = 0;
	int win = -1;
	int rc = c->ops->share_doorbells(c->transport_ctx, &win, &rep->hello.win_off, &win_len,
					 &rep->hello.wake_off);
	if (rc)
		FAIL(rep, rc, "%s: cannot share the doorbells: %s", c->devid, strerror(-rc));
	out[0] = win;
	*nout = 1;
	rep->hello.win_len = win_len;
	rep->hello.cap = c->cap;
	rep->hello.vs = c->vs;
	rep->hello.pid = (int32_t)getpid();
	rep->hello.epoch = mp->card_epoch;
	rep->hello.queues = c->max_io_queues;
	rep->rc = 0;
}

static void do_reg_read(struct mp_server *mp, const struct mp_req *rq, struct mp_rep *rep)
{
	struct unvme_ctrlr *c = mp->c;
	uint32_t off = rq->reg.off, w = rq->reg.width;
	/* a register, aligned as the bus reads it, below the doorbells */
	if ((w != 4 && w != 8) || off % w || off >= NVME_REG_DBS || NVME_REG_DBS - off < w)
		FAIL(rep, -EINVAL, "%s: REG_READ of %u bytes at %#x: a 4- or 8-byte register "
			    "below the doorbells, aligned to its width", c->devid, w, off);
	rep->reg = w == 8 ? c->ops->read64(c->transport_ctx, off) : c->ops->read32(c->transport_ctx, off);
	rep->rc = 0;
}

/* A status the controller would have completed the command with. */
static void status(struct mp_rep *rep, uint8_t sct, uint8_t sc)
{
	rep->cpl.status = NVME_CQE_STATUS(sct, sc) | (uint16_t)(1u << 15); /* DNR */
	rep->rc = NVME_STATUS(sct, sc);
}

/* Abort and Delete I/O SQ/CQ name a queue: another client's is answered as a queue the
 * controller does not have (Abort: not aborted; Delete: Invalid Queue Identifier), without
 * the device, so a client neither touches nor learns of another's queues. Number of Queues
 * is the server's, set once for every client: answered as the controller would answer it
 * with I/O queues in use (Base 2.0 5.27.1.5), or with the grant. 1 when answered here. */
static int admin_owned(struct mp_server *mp, struct mp_session *s, const struct nvme_sqe *cmd,
		       struct mp_rep *rep)
{
	struct unvme_ctrlr *c = mp->c;
	uint32_t qid = cmd->cdw10 & 0xffffu;
	switch (cmd->opc) {
	case NVME_ADM_ABORT:
		if (owned_queue(s, qid))
			return 0;
		rep->cpl.dw0 = 1; /* not aborted: no such command */
		rep->rc = 0;
		return 1;
	case NVME_ADM_DELETE_SQ:
	case NVME_ADM_DELETE_CQ:
		if (owned_queue(s, qid))
			return 0;
		status(rep, NVME_SCT_CMD, NVME_SC_INVALID_QID);
		return 1;
	case NVME_ADM_SET_FEATURES: {
		if ((cmd->cdw10 & 0xffu) != NVME_FEAT_NUM_QUEUES)
			return 0;
		bool in_use = false;
		ctrlr_lock_qps(c);
		for (uint32_t q = 1; q <= c->max_io_queues && !in_use; q++)
			in_use = c->qid_used[q] != 0;
		ctrlr_unlock_qps(c);
		if (in_use)
			status(rep, NVME_SCT_GENERIC, NVME_SC_CMD_SEQ_ERROR);
		else if ((cmd->cdw11 & 0xffffu) == 0xffffu || (cmd->cdw11 >> 16) == 0xffffu)
			status(rep, NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD);
		else {
			uint32_t n = c->max_io_queues ? c->max_io_queues - 1 : 0;
			rep->cpl.dw0 = (n << 16) | n;
			rep->rc = 0;
		}
		return 1;
	}
	default:
		return 0;
	}
}

static void do_admin(struct mp_server *mp, struct mp_session *s, const struct mp_req *rq,
		     struct mp_rep *rep)
{
	struct unvme_ctrlr *c = mp->c;
	struct nvme_sqe cmd = rq->admin.sqe;
	uint32_t len = rq->admin.len;
	if (admin_owned(mp, s, &cmd, rep))
		return;
	uint32_t xfer;
	char why[200];
	int rc = mp_admin_check(&cmd, len, c->page_size, c->max_xfer ? c->max_xfer : c->page_size,
				&xfer, why, sizeof(why));
	if (rc)
		FAIL(rep, rc, "%s: %s", c->devid, why);
	uint8_t *cbuf = NULL;
	if (len) {
		cbuf = mp_session_va(s, rq->admin.data_iova, len);
		if (!cbuf)
			FAIL(rep, -EFAULT, "%s: the admin command's data (%u bytes at IOVA "
				    "%#llx) is not in memory this process mapped", c->devid, len,
				    (unsigned long long)rq->admin.data_iova);
	}
	mp_admin_scrub(&cmd);
	uint8_t *buf = NULL;
	if (xfer && !(buf = calloc(1, xfer)))
		FAIL(rep, -ENOMEM, "%s: no memory for %u bytes of admin data", c->devid, xfer);
	uint32_t both = len < xfer ? len : xfer;
	bool to_dev = cmd.opc & 1u, from_dev = cmd.opc & 2u;
	if (to_dev && both)
		memcpy(buf, cbuf, both);
	unvme_errmsg_clear();
	rc = unvme_admin(c, &cmd, buf, xfer, &rep->cpl);
	result(rep, rc);
	if (rc >= 0 && from_dev && len) {
		memcpy(cbuf, buf, both);
		if (len > both)
			memset(cbuf + both, 0, len - both); /* what a device that moved less leaves */
	}
	free(buf);
	if (rc == 0 && (cmd.opc == NVME_ADM_DELETE_SQ || cmd.opc == NVME_ADM_DELETE_CQ)) {
		/* the client fenced its queue itself: once both halves are gone, the id is free */
		ctrlr_lock_qps(c);
		struct mp_queue *q = owned_queue(s, cmd.cdw10 & 0xffffu);
		if (q) {
			if (cmd.opc == NVME_ADM_DELETE_SQ)
				q->sq_gone = true;
			else
				q->cq_gone = true;
			if (q->sq_gone && q->cq_gone)
				drop_queue(mp, s, q);
		}
		ctrlr_unlock_qps(c);
	}
}

static void do_queue_create(struct mp_server *mp, struct mp_session *s, const struct mp_req *rq,
			    struct mp_rep *rep)
{
	struct unvme_ctrlr *c = mp->c;
	uint32_t depth = rq->qcreate.depth;
	if (depth < 2 || depth > NVME_CAP_MQES(c->cap) + 1u)
		FAIL(rep, -EINVAL, "%s: queue depth %u outside 2..CAP.MQES + 1 (%u)", c->devid,
			    depth, (unsigned)NVME_CAP_MQES(c->cap) + 1u);
	/* the rings are the client's own memory, whole */
	if (!mp_session_va(s, rq->qcreate.sq_iova, (uint64_t)depth * sizeof(struct nvme_sqe)) ||
	    !mp_session_va(s, rq->qcreate.cq_iova, (uint64_t)depth * sizeof(struct nvme_cqe)))
		FAIL(rep, -EFAULT, "%s: the queue's rings are not in memory this process "
			    "mapped", c->devid);
	if (s->nr_queues >= MP_MAX_QUEUES)
		FAIL(rep, -EMFILE, "%s: already %u queues in this process", c->devid,
			    MP_MAX_QUEUES);
	if (s->nr_queues == s->cap_queues) {
		size_t cap = s->cap_queues ? 2 * s->cap_queues : 8;
		struct mp_queue *q = realloc(s->queues, cap * sizeof(*q));
		if (!q)
			FAIL(rep, -ENOMEM, "%s: no memory", c->devid);
		s->queues = q;
		s->cap_queues = cap;
	}
	/* under qp_lock from the id to the record: a reset meanwhile (which holds it) either
	 * comes before, and the queue is created on the reset controller, or after, and the
	 * queue's epoch is older than the reset's */
	ctrlr_lock_qps(c);
	uint16_t qid = 0;
	for (uint32_t q = 1; q <= c->max_io_queues; q++) {
		if (!c->qid_used[q]) {
			qid = (uint16_t)q;
			c->qid_used[q] = 1;
			break;
		}
	}
	if (!qid) {
		ctrlr_unlock_qps(c);
		FAIL(rep, -EBUSY, "%s: all %u I/O queue pairs the controller granted are in "
			    "use (by every process sharing it)", c->devid, c->max_io_queues);
	}
	uint32_t epoch = atomic_load(&mp->epoch);
	unvme_errmsg_clear();
	int rc = ctrlr_create_hw_queues(c, qid, depth, rq->qcreate.sq_iova, rq->qcreate.cq_iova);
	if (rc) {
		c->qid_used[qid] = 0;
		ctrlr_unlock_qps(c);
		RESULT(rep, rc < 0 ? rc : -EIO);
	}
	s->queues[s->nr_queues++] = (struct mp_queue){ .qid = qid, .epoch = epoch };
	ctrlr_unlock_qps(c);
	rep->queue.qid = qid;
	rep->queue.epoch = epoch; /* the client tells a reset after it from one before */
	rep->rc = 0;
}

static void do_queue_delete(struct mp_server *mp, struct mp_session *s, const struct mp_req *rq,
			    struct mp_rep *rep)
{
	struct unvme_ctrlr *c = mp->c;
	ctrlr_lock_qps(c);
	struct mp_queue *q = owned_queue(s, rq->qdelete.qid);
	if (!q) {
		ctrlr_unlock_qps(c);
		FAIL(rep, -ENOENT, "%s: queue %u is not this process's", c->devid,
			    rq->qdelete.qid);
	}
	int rc = 0;
	if (!(q->sq_gone && q->cq_gone) && !atomic_load(&c->removed)) {
		unvme_errmsg_clear();
		rc = ctrlr_delete_hw_queues(c, q->qid);
	}
	drop_queue(mp, s, q);
	ctrlr_unlock_qps(c);
	result(rep, rc > 0 ? -EIO : rc);
}

static void do_map(struct mp_server *mp, struct mp_session *s, const struct mp_req *rq, int fd,
		   struct mp_rep *rep)
{
	struct unvme_ctrlr *c = mp->c;
	if (fd < 0)
		FAIL(rep, -EBADF, "%s: DMA_MAP without the memory's descriptor", c->devid);
	uint64_t len = rq->map.len, off = rq->map.off, iova = rq->map.iova;
	/* Only whole pages of a file that cannot shrink under the mapping: the device touching
	 * a page past its end would kill this process (SIGBUS). */
	struct stat st;
	int seals = fcntl(fd, F_GET_SEALS);
	long page = sysconf(_SC_PAGESIZE);
	if (fstat(fd, &st) != 0 || seals < 0 || !(seals & F_SEAL_SHRINK) || len == 0 ||
	    (len | off | iova) & (uint64_t)(page - 1) || off > (uint64_t)st.st_size ||
	    len > (uint64_t)st.st_size - off || iova + len < iova || len > SIZE_MAX)
		FAIL(rep, -EINVAL, "%s: DMA_MAP of pages outside a sealed memfd, or not "
			    "whole pages", c->devid);
	if (s->nr_maps >= MP_MAX_MAPS)
		FAIL(rep, -EMFILE, "%s: already %u DMA mappings in this process", c->devid,
			    MP_MAX_MAPS);
	if (s->nr_maps == s->cap_maps) {
		size_t cap = s->cap_maps ? 2 * s->cap_maps : 16;
		struct mp_map *m = realloc(s->maps, cap * sizeof(*m));
		if (!m)
			FAIL(rep, -ENOMEM, "%s: no memory", c->devid);
		s->maps = m;
		s->cap_maps = cap;
	}
	void *va = mmap(NULL, (size_t)len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)off);
	if (va == MAP_FAILED)
		FAIL(rep, -errno, "%s: cannot map the client's DMA memory: %s", c->devid,
			    strerror(errno));
	int rc = c->ops->dma_map(c->transport_ctx, va, iova, (size_t)len);
	if (rc) {
		munmap(va, (size_t)len);
		FAIL(rep, rc, "%s: the device cannot map the client's DMA memory (its IOVA "
			    "range is in use: a process forked from another that shares the "
			    "device?)", c->devid);
	}
	s->maps[s->nr_maps++] = (struct mp_map){ iova, (size_t)len, va };
	rep->rc = 0;
}

static void do_unmap(struct mp_server *mp, struct mp_session *s, const struct mp_req *rq,
		     struct mp_rep *rep)
{
	struct unvme_ctrlr *c = mp->c;
	for (size_t i = 0; i < s->nr_maps; i++) {
		struct mp_map *m = &s->maps[i];
		if (m->iova == rq->map.iova && m->len == rq->map.len) {
			c->ops->dma_unmap(c->transport_ctx, m->iova, m->len);
			munmap(m->va, m->len);
			*m = s->maps[--s->nr_maps];
			rep->rc = 0;
			return;
		}
	}
	fail(rep, -ENOENT, "%s: DMA_UNMAP of memory this process did not map", c->devid);
}

static void do_subscribe(struct mp_server *mp, struct mp_session *s, struct mp_rep *rep)
{
	struct unvme_ctrlr *c = mp->c;
	if (!mp->device_process)
		FAIL(rep, -EOPNOTSUPP, "%s: Asynchronous Events stay with the application "
			    "process (pid %d) that runs the device; a client of a device process "
			    "gets them", c->devid, (int)getpid());
	if (!mp->aer_on) {
		unvme_errmsg_clear();
		int rc = unvme_ctrlr_aer_enable(c);
		if (rc)
			RESULT(rep, rc);
		mp->aer_on = true;
	}
	s->aer = true;
	/* what happened while nobody listened */
	for (unsigned i = 0; i < mp->nr_backlog; i++)
		mp_session_note(s, &mp->aer_backlog[i]);
	mp->nr_backlog = 0;
	rep->rc = 0;
}

static void do_plug(struct mp_server *mp, const struct mp_req *rq, struct mp_rep *rep)
{
	struct unvme_ctrlr *c = mp->c;
	char *card = NULL;
	if (rq->card.len) {
		if (memchr(rq->card.uri, '\0', rq->card.len))
			FAIL(rep, -EINVAL, "%s: PLUG: a NUL inside the card URI", c->devid);
		card = strndup(rq->card.uri, rq->card.len);
		if (!card)
			FAIL(rep, -ENOMEM, "%s: no memory", c->devid);
	}
	unvme_errmsg_clear();
	result(rep, unvme_emu_plug(c->address, card));
	free(card);
}

static void do_status(struct mp_server *mp, struct mp_rep *rep)
{
	rep->status.pid = (int32_t)getpid();
	uint32_t clients = 0;
	for (int i = 0; i < MP_MAX_SESSIONS; i++)
		clients += mp->sessions[i].fd >= 0 && mp->sessions[i].hello;
	rep->status.sessions = clients;
	rep->status.idle_ms = mp->idle_ms;
	rep->status.rsvd = mp->device_process ? MP_HELLO_DEVICE_PROCESS : 0;
	rep->rc = 0;
}

void mp_serve_request(struct mp_server *mp, struct mp_session *s, const struct mp_req *rq,
		      size_t n, int in_fd, struct mp_rep *rep, int *out, unsigned *nout)
{
	struct unvme_ctrlr *c = mp->c;
	*nout = 0;
	const size_t head = offsetof(struct mp_req, hello);
	uint32_t card_len = 0;
	if (n >= offsetof(struct mp_req, card.uri) && rq->op == MP_PLUG)
		card_len = rq->card.len;
	size_t want = n >= head ? mp_req_len(rq->op, card_len) : 0;
	rep->id = n >= head ? rq->id : 0; /* the client files the reply by it */
	if (n < head || !want) {
		fail(rep, -EPROTO, "%s: unknown request (%zu bytes)", c->devid, n);
	} else if (n != want) {
		fail(rep, -EPROTO, "%s: request %s of %zu bytes; it has %zu", c->devid,
		     op_name(rq->op), n, want);
	} else if (in_fd >= 0 && rq->op != MP_DMA_MAP) {
		fail(rep, -EPROTO, "%s: a descriptor came with request %s, which takes none",
		     c->devid, op_name(rq->op));
	} else if (!s->hello && rq->op != MP_HELLO && rq->op != MP_STOP && rq->op != MP_STATUS) {
		fail(rep, -EPROTO, "%s: request %s before HELLO", c->devid, op_name(rq->op));
	} else {
		switch (rq->op) {
		case MP_HELLO: do_hello(mp, s, rq, rep, out, nout); break;
		case MP_REG_READ: do_reg_read(mp, rq, rep); break;
		case MP_ADMIN: do_admin(mp, s, rq, rep); break;
		case MP_QUEUE_CREATE: do_queue_create(mp, s, rq, rep); break;
		case MP_QUEUE_DELETE: do_queue_delete(mp, s, rq, rep); break;
		case MP_DMA_MAP: do_map(mp, s, rq, in_fd, rep); break;
		case MP_DMA_UNMAP: do_unmap(mp, s, rq, rep); break;
		case MP_WINDOW: do_window(mp, rep, out, nout); break;
		case MP_AER_SUBSCRIBE: do_subscribe(mp, s, rep); break;
		case MP_UNPLUG:
			unvme_errmsg_clear();
			result(rep, unvme_emu_unplug(c->address));
			break;
		case MP_PLUG: do_plug(mp, rq, rep); break;
		case MP_STOP:
			if (!mp->device_process) {
				fail(rep, -EOPNOTSUPP, "%s is run by application process %d, not by a "
				     "device process: it ends when that process closes it", c->devid,
				     (int)getpid());
				break;
			}
			atomic_store(&mp->done, true);
			rep->rc = 0;
			break;
		case MP_STATUS: do_status(mp, rep); break;
		case MP_RESET:
			/* the hardware's reset, which any host may ask for: every client's queues
			 * go (QUEUES_LOST, before this reply) and come back at their next use. A
			 * primary's own queue pairs are its threads': only it resets */
			if (!mp->device_process) {
				fail(rep, -EPERM, "%s: run by application process %d, which alone may "
				     "reset it", c->devid, (int)getpid());
				break;
			}
			unvme_errmsg_clear();
			result(rep, unvme_ctrlr_reset(c));
			break;
		default: break; /* (mp_req_len knows no other) */
		}
	}
	if (in_fd >= 0)
		close(in_fd); /* mapped (or refused): the mapping keeps what it needs */
}
