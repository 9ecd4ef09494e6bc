/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A secondary process's transport (mp.h): the controller is run by the primary process.
 *
 * Registers below the doorbells are read through the primary (a message each: only the
 * slow paths read them); writes to them are dropped, as the secondary never brings up or
 * resets the controller. Doorbells are stores into the device's doorbell window, mapped
 * here (an emulated device's memfd, or a VFIO device's BAR0 from its registers' end on,
 * through the device's descriptor the primary passed): the data path is this process's
 * rings, its DMA memory and those stores. Admin
 * commands, queue creation and DMA mappings are requests to the primary, one at a time.
 *
 * A watcher thread waits for the primary's end of the socket to close: the primary exited
 * (or closed the controller), so the device is gone for this process as a hot-plug removal
 * makes it gone (hotplug.c): commands in flight are given back with ABORTED_SQ_DELETION,
 * calls answer -ENODEV, listeners hear UNVME_EVENT_REMOVED. Opening the device again makes
 * the process a secondary of a new primary, or the primary itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lib/common/anon_pages.h"
#include "ctrlr.h"
#include "errmsg.h"
#include "mp.h"

#define REQ_TIMEOUT_MS 10000   /* beyond the admin timeout, for everything but admin */

struct mp_sec {
	struct unvme_ctrlr *c;
	int sock;
	pthread_mutex_t lock;      /* one request at a time */
	_Atomic uint32_t *win;     /* the doorbell window */
	size_t win_len;
	pid_t primary;
	int wake[2];
	pthread_t watcher;
	_Atomic bool closing;
};

/* One request and its reply; fd goes with the request, a descriptor that comes with the reply
 * goes to *got (NULL: none is expected; one that comes is closed). 0 or a negative errno with
 * a message (the reply's rc is the caller's to read). */
static int call(struct mp_sec *s, struct mp_req *rq, int fd, struct mp_rep *rep, int timeout_ms,
		int *got)
{
	pthread_mutex_lock(&s->lock);
	int rc = mp_send(s->sock, rq, sizeof(*rq), fd);
	ssize_t n = 0;
	if (rc == 0)
		n = mp_recv(s->sock, rep, sizeof(*rep), got, timeout_ms);
	pthread_mutex_unlock(&s->lock);
	if (rc == 0 && n == (ssize_t)sizeof(*rep))
		return 0;
	if (rc == 0)
		rc = n < 0 ? (int)n : -ENODEV;
	return unvme_fail(rc == -ETIMEDOUT ? rc : -ENODEV, "%s: the primary process (pid %d) %s",
			  s->c->devid, (int)s->primary,
			  rc == -ETIMEDOUT ? "does not answer" : "is gone");
}

static int rep_error(struct mp_sec *s, const struct mp_rep *rep)
{
	if (rep->rc < 0)
		return unvme_fail(rep->rc, "%s", rep->msg[0] ? rep->msg : strerror(-rep->rc));
	return rep->rc;
}

static void *watch_main(void *arg)
{
	struct mp_sec *s = arg;
	pthread_setname_np(pthread_self(), "unvme-mp-watch");
	struct pollfd p[2] = { { .fd = s->sock, .events = POLLRDHUP },
			       { .fd = s->wake[0], .events = POLLIN } };
	for (;;) {
		int r = poll(p, 2, -1);
		if (r < 0 && errno == EINTR)
			continue;
		if (atomic_load(&s->closing) || (p[1].revents & POLLIN))
			return NULL;
		if (p[0].revents & (POLLRDHUP | POLLHUP | POLLERR))
			break;
	}
	/* the primary's process (and with it the device's engine) is gone, or it let go of the
	 * device: nothing can touch this process's memory any more, so what is outstanding can
	 * be given back */
	ctrlr_hotplug_removing(s->c);
	/* and the window is let go of too (a VFIO device's BAR: the kernel's removal of the
	 * device waits for every mapping of it): doorbell writes go nowhere */
	(void)replace_with_anon_pages(s->win, s->win_len, 0);
	ctrlr_hotplug_removed(s->c);
	return NULL;
}

bool mp_secondary_orphaned(struct unvme_ctrlr *c)
{
	if (c->ops != &unvme_transport_mp_secondary || !c->transport_ctx)
		return false;
	struct mp_sec *s = c->transport_ctx;
	struct pollfd p = { .fd = s->sock, .events = POLLRDHUP };
	return poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

static int sec_attach(struct unvme_ctrlr *c, const char *address)
{
	struct mp_sec *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->c = c;
	s->sock = c->mp_fd;
	c->mp_fd = -1; /* ours now */
	s->wake[0] = s->wake[1] = -1;
	pthread_mutex_init(&s->lock, NULL);
	c->transport_ctx = s;
	struct mp_req rq = { .op = MP_HELLO };
	rq.hello.version = MP_VERSION;
	rq.hello.pid = (int32_t)getpid();
	struct mp_rep rep;
	int wfd = -1;
	if (call(s, &rq, -1, &rep, REQ_TIMEOUT_MS, &wfd) != 0)
		return unvme_fail(-ENODEV, "%s: the process that holds the device did not let this "
				  "one share it (too many processes, or it is closing it)", c->devid);
	if (rep.rc) {
		if (wfd >= 0)
			close(wfd);
		return rep_error(s, &rep);
	}
	s->primary = rep.hello.pid;
	if (wfd < 0)
		return unvme_fail(-EPROTO, "%s: no doorbell window from the primary", c->devid);
	void *w = mmap(NULL, rep.hello.win_len, PROT_READ | PROT_WRITE, MAP_SHARED, wfd,
		       (off_t)rep.hello.win_off);
	close(wfd);
	if (w == MAP_FAILED)
		return unvme_fail(-errno, "%s: cannot map the doorbell window: %s", c->devid,
				  strerror(errno));
	s->win = w;
	s->win_len = rep.hello.win_len;
	c->cap = rep.hello.cap;
	c->vs = rep.hello.vs;
	c->dstrd = NVME_CAP_DSTRD(c->cap);
	c->page_size = 4096u << NVME_CAP_MPSMIN(c->cap);
	snprintf(c->transport_info, sizeof(c->transport_info),
		 "shared with the primary process %d, which runs the controller %s", (int)s->primary,
		 address);
	if (pipe2(s->wake, O_CLOEXEC) != 0)
		return -errno;
	int rc = -pthread_create(&s->watcher, NULL, watch_main, s);
	if (rc) {
		close(s->wake[0]);
		close(s->wake[1]);
		s->wake[0] = s->wake[1] = -1;
		return rc;
	}
	return 0;
}

static void sec_detach(struct unvme_ctrlr *c)
{
	struct mp_sec *s = c->transport_ctx;
	if (s->wake[1] >= 0) {
		atomic_store(&s->closing, true);
		if (write(s->wake[1], "x", 1) < 0)
			(void)0;
		pthread_join(s->watcher, NULL);
		close(s->wake[0]);
		close(s->wake[1]);
	}
	close(s->sock); /* the primary releases what is left of ours */
	if (s->win)
		munmap((void *)s->win, s->win_len);
	pthread_mutex_destroy(&s->lock);
	free(s);
	c->transport_ctx = NULL;
}

static uint64_t reg_read(void *ctx, uint32_t off, uint32_t width)
{
	struct mp_sec *s = ctx;
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

static uint32_t sec_read32(void *ctx, uint32_t off)
{
	uint64_t v = reg_read(ctx, off, 4);
	return v == UINT64_MAX ? UINT32_MAX : (uint32_t)v;
}

static uint64_t sec_read64(void *ctx, uint32_t off)
{
	return reg_read(ctx, off, 8);
}

static void sec_write32(void *ctx, uint32_t off, uint32_t val)
{
	struct mp_sec *s = ctx;
	if (off < NVME_REG_DBS)
		return; /* the controller's configuration is the primary's */
	size_t i = (off - NVME_REG_DBS) / 4;
	if (i < s->win_len / 4)
		atomic_store_explicit(&s->win[i], val, memory_order_release);
}

static void sec_write64(void *ctx, uint32_t off, uint64_t val)
{
	(void)ctx;
	(void)off;
	(void)val;
}

static int sec_dma_map(void *ctx, void *vaddr, uint64_t iova, size_t len)
{
	return -EOPNOTSUPP; /* dma_map_shared is used */
}

static int sec_dma_map_shared(void *ctx, void *vaddr, uint64_t iova, size_t len, int fd, uint64_t off)
{
	struct mp_sec *s = ctx;
	if (fd < 0)
		return unvme_fail(-EOPNOTSUPP, "%s: DMA memory this process inherited through fork() "
				  "cannot be shared with the primary process", s->c->devid);
	struct mp_req rq = { .op = MP_DMA_MAP };
	rq.map.iova = iova;
	rq.map.len = len;
	rq.map.off = off;
	struct mp_rep rep;
	int rc = call(s, &rq, fd, &rep, REQ_TIMEOUT_MS, NULL);
	return rc ? rc : rep_error(s, &rep);
}

static void sec_dma_unmap(void *ctx, uint64_t iova, size_t len)
{
	struct mp_sec *s = ctx;
	struct mp_req rq = { .op = MP_DMA_UNMAP };
	rq.map.iova = iova;
	rq.map.len = len;
	struct mp_rep rep;
	(void)call(s, &rq, -1, &rep, REQ_TIMEOUT_MS, NULL);
}

/* buf is DMA memory (the controller's admin bounce buffer, admin.c): the primary reads and
 * writes it where it mapped it. */
static int sec_admin(struct unvme_ctrlr *c, const struct nvme_sqe *cmd, void *buf, size_t len,
		     struct nvme_cqe *cpl)
{
	struct mp_sec *s = c->transport_ctx;
	struct mp_req rq = { .op = MP_ADMIN };
	rq.admin.sqe = *cmd;
	rq.admin.data_iova = len ? unvme_dma_iova(buf) : 0;
	rq.admin.len = (uint32_t)len;
	struct mp_rep rep;
	int tmo = (int)(c->opts.admin_timeout_ms ? c->opts.admin_timeout_ms : 60000) + REQ_TIMEOUT_MS;
	int rc = call(s, &rq, -1, &rep, tmo, NULL);
	if (rc)
		return rc;
	*cpl = rep.cpl;
	return rep_error(s, &rep);
}

static int sec_queue_create(struct unvme_qpair *qp)
{
	struct mp_sec *s = qp->ctrlr->transport_ctx;
	struct mp_req rq = { .op = MP_QUEUE_CREATE };
	rq.qcreate.depth = qp->depth;
	rq.qcreate.sq_iova = qp->sq_iova;
	rq.qcreate.cq_iova = qp->cq_iova;
	struct mp_rep rep;
	int rc = call(s, &rq, -1, &rep, REQ_TIMEOUT_MS, NULL);
	if (rc)
		return rc;
	if (rep.rc)
		return rep_error(s, &rep);
	qpair_set_qid(qp, (uint16_t)rep.qid);
	return 0;
}

static int sec_queue_delete(struct unvme_qpair *qp)
{
	struct mp_sec *s = qp->ctrlr->transport_ctx;
	struct mp_req rq = { .op = MP_QUEUE_DELETE };
	rq.qdelete.qid = qp->qid;
	struct mp_rep rep;
	int rc = call(s, &rq, -1, &rep, REQ_TIMEOUT_MS, NULL);
	return rc ? rc : rep_error(s, &rep);
}

const struct unvme_transport_ops unvme_transport_mp_secondary = {
	.name = "secondary",
	.attach = sec_attach,
	.detach = sec_detach,
	.read32 = sec_read32,
	.write32 = sec_write32,
	.read64 = sec_read64,
	.write64 = sec_write64,
	.dma_map = sec_dma_map,
	.dma_unmap = sec_dma_unmap,
	.dma_map_shared = sec_dma_map_shared,
	.admin = sec_admin,
	.queue_create = sec_queue_create,
	.queue_delete = sec_queue_delete,
};
