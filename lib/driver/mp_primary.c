/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The primary's side of a shared controller: the role decision (mp_claim) and a thread that
 * serves the secondaries' requests (mp.h has the protocol).
 *
 * Everything a secondary owns on the device is recorded with its connection: the I/O queues
 * it had created and the DMA memory it had mapped. When the connection ends, whether the
 * secondary closed its controller or was killed, its queues are deleted on the device first
 * (then the device touches its memory no more) and its memory unmapped: other processes'
 * queues are not disturbed. When the primary closes the controller, it does the same for
 * every secondary and closes their connections; they see their controller removed.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "lib/common/env.h"
#include "ctrlr.h"
#include "errmsg.h"
#include "mp.h"

#define CLAIM_WAIT_MS 10000  /* for a primary that holds the lock but does not listen yet */
#define MAX_CLIENTS 64

struct mp_map {
	uint64_t iova;
	size_t len;
	void *va;            /* the secondary's pages, mapped here */
};

struct mp_client {
	int fd;
	pid_t pid;
	struct mp_map *maps;
	size_t nr_maps, cap_maps;
	uint16_t *qids;
	size_t nr_qids, cap_qids;
};

struct mp_primary {
	struct unvme_ctrlr *c;
	int lfd;
	int wake[2];
	pthread_t thread;
	struct sockaddr_un addr;
	struct mp_client clients[MAX_CLIENTS];
	_Atomic unsigned nr_clients;
	_Atomic bool stop;
	_Atomic bool drop_all;   /* the controller was reset or removed: every session ends */
};

static int lock_path_open(const char *path)
{
	return open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
}

static int sock_connect(const struct sockaddr_un *a)
{
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	if (connect(s, (const struct sockaddr *)a, sizeof(*a)) != 0) {
		int e = -errno;
		close(s);
		return e;
	}
	return s;
}

int mp_claim(struct unvme_ctrlr *c)
{
	char lock[4352];
	struct sockaddr_un sock;
	int rc = mp_paths(c->address, lock, sizeof(lock), &sock);
	if (rc)
		return rc;
	uint64_t deadline = mono_ms_coarse() + CLAIM_WAIT_MS;
	int last = 0;
	for (;;) {
		int fd = lock_path_open(lock);
		if (fd < 0)
			return unvme_fail(-errno, "%s: cannot open the lock file %s: %s", c->devid, lock,
					  strerror(errno));
		if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
			/* the pid inside is for people and messages */
			char pid[32];
			int n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
			if (ftruncate(fd, 0) == 0 && pwrite(fd, pid, (size_t)n, 0) < 0)
				(void)0;
			c->mp_fd = fd;
			return 1;
		}
		close(fd);
		int s = sock_connect(&sock);
		if (s >= 0) {
			c->mp_fd = s;
			return 0;
		}
		last = s;
		/* the primary is still attaching (or just went): the lock decides again */
		if (mono_ms_coarse() >= deadline)
			return unvme_fail(-EBUSY, "%s: another process holds the device (lock %s) but "
					  "does not answer on %s: %s", c->devid, lock, sock.sun_path,
					  strerror(-last));
		sleep_us(5000);
	}
}

/* ---- a secondary's resources ---- */

static void *client_va(const struct mp_client *cl, uint64_t iova, size_t len)
{
	for (size_t i = 0; i < cl->nr_maps; i++) {
		const struct mp_map *m = &cl->maps[i];
		if (iova >= m->iova && iova - m->iova < m->len && len <= m->len - (iova - m->iova))
			return (uint8_t *)m->va + (iova - m->iova);
	}
	return NULL;
}

static int delete_queue(struct unvme_ctrlr *c, uint16_t qid)
{
	int rc = ctrlr_delete_hw_queues(c, qid);
	ctrlr_lock_qps(c);
	if (qid <= c->max_io_queues)
		c->qid_used[qid] = 0;
	ctrlr_unlock_qps(c);
	return rc;
}

static void client_drop(struct mp_primary *mp, struct mp_client *cl)
{
	struct unvme_ctrlr *c = mp->c;
	for (size_t i = 0; i < cl->nr_qids; i++)
		delete_queue(c, cl->qids[i]);
	for (size_t i = 0; i < cl->nr_maps; i++) {
		c->ops->dma_unmap(c->transport_ctx, cl->maps[i].iova, cl->maps[i].len);
		munmap(cl->maps[i].va, cl->maps[i].len);
	}
	free(cl->maps);
	free(cl->qids);
	close(cl->fd);
	memset(cl, 0, sizeof(*cl));
	cl->fd = -1;
	atomic_fetch_sub(&mp->nr_clients, 1);
	if (unvme_log_on())
		fprintf(stderr, "unvme: %s: a secondary process left; its queues and memory are "
			"released\n", c->devid);
}

static void drop_all_clients(struct mp_primary *mp)
{
	for (int i = 0; i < MAX_CLIENTS; i++)
		if (mp->clients[i].fd >= 0)
			client_drop(mp, &mp->clients[i]);
}

/* ---- requests ---- */

static void fail(struct mp_rep *rep, int rc, const char *fmt, const char *arg)
{
	rep->rc = rc;
	snprintf(rep->msg, sizeof(rep->msg), fmt, arg);
}

static void do_admin(struct mp_primary *mp, struct mp_client *cl, struct mp_req *rq, struct mp_rep *rep)
{
	struct unvme_ctrlr *c = mp->c;
	struct nvme_sqe cmd = rq->admin.sqe;
	switch (cmd.opc) {
	case NVME_ADM_CREATE_SQ:
	case NVME_ADM_CREATE_CQ:
	case NVME_ADM_DELETE_SQ:
	case NVME_ADM_DELETE_CQ:
		fail(rep, -EPERM, "%s: a secondary process's I/O queues are created and deleted "
		     "through its queue pairs, not by admin commands", c->devid);
		return;
	case NVME_ADM_ASYNC_EVENT:
		fail(rep, -EOPNOTSUPP, "%s: Asynchronous Event Requests are the primary process's",
		     c->devid);
		return;
	case NVME_ADM_SET_FEATURES:
		if ((cmd.cdw10 & 0xffu) == NVME_FEAT_NUM_QUEUES) {
			/* granted once by the primary; the answer is the grant */
			uint32_t n = c->max_io_queues ? c->max_io_queues - 1 : 0;
			rep->cpl.dw0 = (n << 16) | n;
			rep->rc = 0;
			return;
		}
		break;
	default:
		break;
	}
	void *buf = NULL;
	if (rq->admin.len) {
		buf = client_va(cl, rq->admin.data_iova, rq->admin.len);
		if (!buf) {
			fail(rep, -EFAULT, "%s: the admin command's data is not in memory the secondary "
			     "mapped", c->devid);
			return;
		}
	}
	unvme_errmsg_clear();
	rep->rc = unvme_admin(c, &cmd, buf, rq->admin.len, &rep->cpl);
	if (rep->rc < 0)
		snprintf(rep->msg, sizeof(rep->msg), "%s", unvme_errmsg());
}

static void do_queue_create(struct mp_primary *mp, struct mp_client *cl, struct mp_req *rq,
			    struct mp_rep *rep)
{
	struct unvme_ctrlr *c = mp->c;
	uint32_t depth = rq->qcreate.depth;
	if (depth < 2 || depth > NVME_CAP_MQES(c->cap) + 1u) {
		fail(rep, -EINVAL, "%s: queue depth outside 2..CAP.MQES + 1", c->devid);
		return;
	}
	if (cl->nr_qids == cl->cap_qids) {
		size_t cap = cl->cap_qids ? 2 * cl->cap_qids : 8;
		uint16_t *q = realloc(cl->qids, cap * sizeof(*q));
		if (!q) {
			fail(rep, -ENOMEM, "%s: no memory", c->devid);
			return;
		}
		cl->qids = q;
		cl->cap_qids = cap;
	}
	ctrlr_lock_qps(c);
	uint16_t qid = 0;
	for (uint32_t q = 1; q <= c->max_io_queues; q++) {
		if (!c->qid_used[q]) {
			qid = (uint16_t)q;
			c->qid_used[q] = 1;
			break;
		}
	}
	ctrlr_unlock_qps(c);
	if (!qid) {
		fail(rep, -EBUSY, "%s: all I/O queue pairs the controller granted are in use (by "
		     "every process sharing it)", c->devid);
		return;
	}
	unvme_errmsg_clear();
	int rc = ctrlr_create_hw_queues(c, qid, depth, rq->qcreate.sq_iova, rq->qcreate.cq_iova);
	if (rc) {
		ctrlr_lock_qps(c);
		c->qid_used[qid] = 0;
		ctrlr_unlock_qps(c);
		rep->rc = rc < 0 ? rc : -EIO;
		snprintf(rep->msg, sizeof(rep->msg), "%s", unvme_errmsg());
		return;
	}
	cl->qids[cl->nr_qids++] = qid;
	rep->qid = qid;
	rep->rc = 0;
}

static void do_queue_delete(struct mp_primary *mp, struct mp_client *cl, struct mp_req *rq,
			    struct mp_rep *rep)
{
	for (size_t i = 0; i < cl->nr_qids; i++) {
		if (cl->qids[i] == rq->qdelete.qid) {
			cl->qids[i] = cl->qids[--cl->nr_qids];
			rep->rc = delete_queue(mp->c, (uint16_t)rq->qdelete.qid);
			if (rep->rc > 0)
				rep->rc = -EIO;
			return;
		}
	}
	fail(rep, -ENOENT, "%s: not a queue of this process", mp->c->devid);
}

static void do_map(struct mp_primary *mp, struct mp_client *cl, struct mp_req *rq, int fd,
		   struct mp_rep *rep)
{
	struct unvme_ctrlr *c = mp->c;
	if (fd < 0) {
		fail(rep, -EBADF, "%s: DMA_MAP without the memory's descriptor", c->devid);
		return;
	}
	size_t len = (size_t)rq->map.len;
	/* Only whole pages of a file that cannot shrink under the mapping: the device touching
	 * a page past its end would kill this process (SIGBUS). */
	struct stat st;
	int seals = fcntl(fd, F_GET_SEALS);
	long page = sysconf(_SC_PAGESIZE);
	if (fstat(fd, &st) != 0 || seals < 0 || !(seals & F_SEAL_SHRINK) || len == 0 ||
	    (len | rq->map.off | rq->map.iova) & (uint64_t)(page - 1) ||
	    rq->map.off > (uint64_t)st.st_size || len > (uint64_t)st.st_size - rq->map.off) {
		fail(rep, -EINVAL, "%s: DMA_MAP of pages outside a sealed memfd, or not whole pages",
		     c->devid);
		return;
	}
	if (cl->nr_maps == cl->cap_maps) {
		size_t cap = cl->cap_maps ? 2 * cl->cap_maps : 16;
		struct mp_map *m = realloc(cl->maps, cap * sizeof(*m));
		if (!m) {
			fail(rep, -ENOMEM, "%s: no memory", c->devid);
			return;
		}
		cl->maps = m;
		cl->cap_maps = cap;
	}
	void *va = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)rq->map.off);
	if (va == MAP_FAILED) {
		rep->rc = -errno;
		snprintf(rep->msg, sizeof(rep->msg), "%s: cannot map the secondary's DMA memory: %s",
			 c->devid, strerror(errno));
		return;
	}
	int rc = c->ops->dma_map(c->transport_ctx, va, rq->map.iova, len);
	if (rc) {
		munmap(va, len);
		fail(rep, rc, "%s: the device cannot map the secondary's DMA memory (its IOVA range "
		     "is in use: a process forked from another that shares the device?)", c->devid);
		return;
	}
	cl->maps[cl->nr_maps++] = (struct mp_map){ rq->map.iova, len, va };
	rep->rc = 0;
}

static void do_unmap(struct mp_primary *mp, struct mp_client *cl, struct mp_req *rq, struct mp_rep *rep)
{
	struct unvme_ctrlr *c = mp->c;
	for (size_t i = 0; i < cl->nr_maps; i++) {
		struct mp_map *m = &cl->maps[i];
		if (m->iova == rq->map.iova && m->len == rq->map.len) {
			c->ops->dma_unmap(c->transport_ctx, m->iova, m->len);
			munmap(m->va, m->len);
			*m = cl->maps[--cl->nr_maps];
			rep->rc = 0;
			return;
		}
	}
	fail(rep, -ENOENT, "%s: DMA_UNMAP of memory not mapped", c->devid);
}

/* One request of cl; false when the connection is to end. */
static bool serve(struct mp_primary *mp, struct mp_client *cl)
{
	struct mp_req rq;
	int fd = -1;
	ssize_t n = mp_recv(cl->fd, &rq, sizeof(rq), &fd, 0);
	if (n == -ETIMEDOUT)
		return true;
	if (n < (ssize_t)offsetof(struct mp_req, hello)) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	struct unvme_ctrlr *c = mp->c;
	struct mp_rep rep;
	memset(&rep, 0, sizeof(rep));
	int out_fd = -1;
	switch (rq.op) {
	case MP_HELLO:
		if (rq.hello.version != MP_VERSION) {
			fail(&rep, -EPROTO, "%s: the primary process runs another version of the "
			     "library", c->devid);
			break;
		}
		if (atomic_load(&c->removed) || c->failed) {
			fail(&rep, -ENODEV, "%s: the device is removed or failed in the primary process",
			     c->devid);
			break;
		}
		/* a descriptor of the window for this secondary only: the primary keeps none (a
		 * VFIO device's removal waits for every descriptor of it) */
		size_t win_len = 0;
		int wrc = c->ops->share_doorbells(c->transport_ctx, &out_fd, &rep.hello.win_off,
						  &win_len);
		rep.hello.win_len = win_len;
		if (wrc) {
			out_fd = -1;
			fail(&rep, wrc, "%s: cannot share the doorbells", c->devid);
			break;
		}
		cl->pid = rq.hello.pid;
		rep.hello.cap = c->cap;
		rep.hello.vs = c->vs;
		rep.hello.pid = (int32_t)getpid();
		break;
	case MP_REG_READ:
		if (rq.reg.off >= NVME_REG_DBS) {
			fail(&rep, -EINVAL, "%s: REG_READ of a doorbell", c->devid);
			break;
		}
		rep.reg = rq.reg.width == 8 ? c->ops->read64(c->transport_ctx, rq.reg.off)
					    : c->ops->read32(c->transport_ctx, rq.reg.off);
		break;
	case MP_ADMIN:
		do_admin(mp, cl, &rq, &rep);
		break;
	case MP_QUEUE_CREATE:
		do_queue_create(mp, cl, &rq, &rep);
		break;
	case MP_QUEUE_DELETE:
		do_queue_delete(mp, cl, &rq, &rep);
		break;
	case MP_DMA_MAP:
		do_map(mp, cl, &rq, fd, &rep);
		break;
	case MP_DMA_UNMAP:
		do_unmap(mp, cl, &rq, &rep);
		break;
	default:
		fail(&rep, -EPROTO, "%s: unknown request", c->devid);
		break;
	}
	if (fd >= 0)
		close(fd);
	bool sent = mp_send(cl->fd, &rep, sizeof(rep), out_fd) == 0;
	if (out_fd >= 0)
		close(out_fd);
	return sent;
}

static void *serve_main(void *arg)
{
	struct mp_primary *mp = arg;
	pthread_setname_np(pthread_self(), "unvme-mp");
	for (;;) {
		struct pollfd p[MAX_CLIENTS + 2];
		struct mp_client *who[MAX_CLIENTS + 2];
		nfds_t n = 0;
		p[n++] = (struct pollfd){ .fd = mp->wake[0], .events = POLLIN };
		p[n++] = (struct pollfd){ .fd = mp->lfd, .events = POLLIN };
		for (int i = 0; i < MAX_CLIENTS; i++) {
			if (mp->clients[i].fd >= 0) {
				who[n] = &mp->clients[i];
				p[n++] = (struct pollfd){ .fd = mp->clients[i].fd, .events = POLLIN };
			}
		}
		if (poll(p, n, -1) < 0)
			continue;
		if (atomic_load(&mp->stop))
			break;
		if (p[0].revents & POLLIN) {
			char buf[16];
			if (read(mp->wake[0], buf, sizeof(buf)) < 0)
				(void)0;
		}
		if (atomic_exchange(&mp->drop_all, false)) {
			drop_all_clients(mp);
			continue;
		}
		if (p[1].revents & POLLIN) {
			int s = accept4(mp->lfd, NULL, NULL, SOCK_CLOEXEC);
			if (s >= 0) {
				int slot = -1;
				for (int i = 0; i < MAX_CLIENTS && slot < 0; i++)
					if (mp->clients[i].fd < 0)
						slot = i;
				if (slot < 0) {
					close(s); /* the secondary's HELLO fails: too many */
				} else {
					mp->clients[slot].fd = s;
					atomic_fetch_add(&mp->nr_clients, 1);
				}
			}
		}
		for (nfds_t i = 2; i < n; i++) {
			if (!p[i].revents)
				continue;
			if (!serve(mp, who[i]))
				client_drop(mp, who[i]);
		}
	}
	return NULL;
}

int mp_primary_start(struct unvme_ctrlr *c)
{
	if (!c->ops->share_doorbells)
		return 0;
	struct mp_primary *mp = calloc(1, sizeof(*mp));
	if (!mp)
		return -ENOMEM;
	mp->c = c;
	mp->lfd = mp->wake[0] = mp->wake[1] = -1;
	for (int i = 0; i < MAX_CLIENTS; i++)
		mp->clients[i].fd = -1;
	char lock[4352];
	int rc = mp_paths(c->address, lock, sizeof(lock), &mp->addr);
	if (rc == 0 && pipe2(mp->wake, O_CLOEXEC) != 0)
		rc = -errno;
	if (rc == 0) {
		mp->lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		unlink(mp->addr.sun_path); /* a dead primary's: the lock says it is ours now */
		if (mp->lfd < 0 || bind(mp->lfd, (struct sockaddr *)&mp->addr, sizeof(mp->addr)) != 0 ||
		    listen(mp->lfd, 16) != 0)
			rc = -errno;
	}
	if (rc == 0)
		rc = -pthread_create(&mp->thread, NULL, serve_main, mp);
	if (rc) {
		if (mp->lfd >= 0) {
			close(mp->lfd);
			unlink(mp->addr.sun_path);
		}
		if (mp->wake[0] >= 0) {
			close(mp->wake[0]);
			close(mp->wake[1]);
		}
		rc = unvme_fail(rc, "%s: cannot serve other processes on %s: %s", c->devid,
				mp->addr.sun_path, strerror(-rc));
		free(mp);
		return rc;
	}
	c->mp = mp;
	return 0;
}

void mp_primary_stop(struct unvme_ctrlr *c)
{
	struct mp_primary *mp = c->mp;
	if (!mp)
		return;
	atomic_store(&mp->stop, true);
	if (write(mp->wake[1], "x", 1) < 0)
		(void)0;
	pthread_join(mp->thread, NULL);
	/* no one connects any more, then every secondary is let go */
	unlink(mp->addr.sun_path);
	close(mp->lfd);
	drop_all_clients(mp);
	close(mp->wake[0]);
	close(mp->wake[1]);
	free(mp);
	c->mp = NULL;
}

void mp_primary_lost_queues(struct unvme_ctrlr *c)
{
	struct mp_primary *mp = c->mp;
	if (!mp || !atomic_load(&mp->nr_clients))
		return;
	atomic_store(&mp->drop_all, true);
	if (write(mp->wake[1], "x", 1) < 0)
		(void)0;
}

unsigned mp_primary_clients(const struct unvme_ctrlr *c)
{
	return c->mp ? atomic_load(&c->mp->nr_clients) : 0;
}
