/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The device process (mp.h, docs/multi-process.md): a process whose only work is to run one
 * device for every other process that uses it, as the hardware it stands for would. It
 * takes the device's lock, opens the device as any program does (its claim sees that this
 * process is the one to run it) and serves clients until its idle period passes with none,
 * a client asks it to stop (`unvme serve --stop`), or its caller's stop flag is set (a
 * signal); then it closes the device as a program does (a normal shutdown: state files say
 * so) and lets go of the lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "lib/common/clock.h"
#include "lib/common/opts.h"
#include "lib/driver/ctrlr.h"
#include "lib/driver/devid.h"
#include "lib/driver/errmsg.h"
#include "mp.h"

#define STOP_POLL_MS 50

static pthread_mutex_t serving_lock = PTHREAD_MUTEX_INITIALIZER;
static char serving_address[4352];
static int serving_fd = -1;
static uint32_t serving_idle_ms;

bool mp_device_serving(const char *address, int *lock_fd)
{
	pthread_mutex_lock(&serving_lock);
	bool yes = serving_fd >= 0 && strcmp(serving_address, address) == 0;
	if (yes && lock_fd)
		*lock_fd = serving_fd;
	pthread_mutex_unlock(&serving_lock);
	return yes;
}

uint32_t mp_device_idle_ms(void)
{
	pthread_mutex_lock(&serving_lock);
	uint32_t ms = serving_idle_ms;
	pthread_mutex_unlock(&serving_lock);
	return ms;
}

/* The pid written in a lock file, or 0. */
static int lock_holder(const char *path)
{
	char buf[32] = "";
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? atoi(buf) : 0;
}

static int resolve(const char *devid, const char *what, char *address, size_t len,
		   struct mp_where *w)
{
	if (!devid)
		return unvme_fail(-EINVAL, "%s: no device id", what);
	int rc = unvme_devid_resolve(devid, address, len);
	return rc ? rc : mp_where(address, w);
}

UNVME_API int unvme_serve(const char *devid, const struct unvme_serve_opts *given)
{
	char address[4352];
	struct mp_where w;
	unvme_errmsg_clear();
	struct unvme_serve_opts o = {0};
	int rc = opts_take(&o, sizeof(o), given, OPTS_SIZE_THROUGH(struct unvme_serve_opts, log_to_run_dir));
	if (rc)
		return unvme_fail(rc, "serve: %s", opts_size_error(rc, given->size, sizeof(o)));
	const struct unvme_serve_opts *opts = &o;
	rc = resolve(devid, "serve", address, sizeof(address), &w);
	if (rc)
		return rc;
	int fd = open(w.lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return unvme_fail(-errno, "serve %s: cannot open the lock file %s: %s", devid, w.lock,
				  strerror(errno));
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		close(fd);
		int pid = lock_holder(w.lock);
		return unvme_fail(-EALREADY, "%s is already run by process %d", devid, pid);
	}
	char pid[32];
	int n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) == 0 && pwrite(fd, pid, (size_t)n, 0) < 0)
		(void)0;
	if (opts->log_to_run_dir) {
		/* a fresh log for every run of the device process (it says little: refusals,
		 * failures, and with UNVME_LOG=1 every client's coming and going) */
		int lfd = open(w.log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (lfd >= 0) {
			dup2(lfd, 2);
			close(lfd);
		}
	}
	pthread_mutex_lock(&serving_lock);
	if (serving_fd >= 0) {
		pthread_mutex_unlock(&serving_lock);
		close(fd);
		return unvme_fail(-EBUSY, "serve %s: this process already runs %s", devid,
				  serving_address);
	}
	snprintf(serving_address, sizeof(serving_address), "%s", address);
	serving_fd = fd;
	serving_idle_ms = opts->idle_ms;
	pthread_mutex_unlock(&serving_lock);

	struct unvme_ctrlr *c = NULL;
	rc = unvme_ctrlr_open(address, NULL, &c);
	if (rc == 0 && !c->mp) {
		rc = unvme_fail(-EOPNOTSUPP, "serve %s: the %s transport cannot be shared with "
				"other processes", devid, unvme_ctrlr_transport(c));
		unvme_ctrlr_close(c);
		c = NULL;
	}
	if (rc == 0) {
		if (opts->ready)
			opts->ready(opts->arg, (int)getpid());
		while (!mp_server_done(c) && !(opts->stop && *opts->stop))
			sleep_us(STOP_POLL_MS * 1000u);
		/* a normal shutdown: every session ends, the device's state says it was clean */
		unvme_ctrlr_close(c);
	}
	pthread_mutex_lock(&serving_lock);
	serving_fd = -1;
	serving_address[0] = '\0';
	pthread_mutex_unlock(&serving_lock);
	close(fd); /* only now may another process run it */
	return rc;
}

/* A connection to the server of devid, for STOP and STATUS: the descriptor, or a negative
 * errno with a message (-ESRCH: nobody serves it). */
static int connect_server(const char *devid, const char *what, struct mp_where *w)
{
	char address[4352];
	int rc = resolve(devid, what, address, sizeof(address), w);
	if (rc)
		return rc;
	int s = mp_connect(&w->sock);
	if (s == -EACCES)
		return s;
	if (s < 0)
		return unvme_fail(-ESRCH, "%s: no process runs %s", what, devid);
	return s;
}

static int request(int s, uint32_t op, struct mp_rep *rep, const char *what)
{
	struct mp_req rq = { .op = op };
	int rc = mp_send(s, &rq, mp_req_len(op, 0), NULL, 0);
	ssize_t n = rc ? 0 : mp_recv(s, rep, sizeof(*rep), NULL, 0, 10000);
	if (rc == 0 && n != (ssize_t)sizeof(*rep))
		rc = n < 0 ? (int)n : -EPROTO;
	if (rc)
		return unvme_fail(rc, "%s: no answer from the process that runs the device: %s",
				  what, strerror(-rc));
	if (rep->rc < 0)
		return unvme_fail(rep->rc, "%s", rep->msg[0] ? rep->msg : strerror(-rep->rc));
	return 0;
}

UNVME_API int unvme_serve_stop(const char *devid, uint32_t timeout_ms)
{
	unvme_errmsg_clear();
	struct mp_where w;
	int s = connect_server(devid, "stop", &w);
	if (s < 0)
		return s;
	struct mp_rep rep;
	int rc = request(s, MP_STOP, &rep, "stop");
	int pid = rep.status.pid;
	close(s);
	if (rc)
		return rc;
	/* done once the device is closed: its lock is free */
	uint64_t deadline = mono_ms_coarse() + (timeout_ms ? timeout_ms : 60000u);
	for (;;) {
		int fd = open(w.lock, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			return 0;
		bool free_now = flock(fd, LOCK_EX | LOCK_NB) == 0;
		close(fd);
		if (free_now)
			return 0;
		if (mono_ms_coarse() >= deadline)
			return unvme_fail(-ETIMEDOUT, "stop %s: its device process (pid %d) has not "
					  "ended", devid, pid ? pid : lock_holder(w.lock));
		sleep_us(10000);
	}
}

UNVME_API int unvme_serve_status(const char *devid, struct unvme_serve_status *st)
{
	unvme_errmsg_clear();
	if (!st)
		return unvme_fail(-EINVAL, "status: no status to fill");
	memset(st, 0, sizeof(*st));
	struct mp_where w;
	int s = connect_server(devid, "status", &w);
	if (s < 0)
		return s;
	struct mp_rep rep;
	int rc = request(s, MP_STATUS, &rep, "status");
	close(s);
	if (rc)
		return rc;
	st->pid = rep.status.pid;
	st->clients = rep.status.sessions;
	st->idle_ms = rep.status.idle_ms;
	st->device_process = (rep.status.rsvd & MP_HELLO_DEVICE_PROCESS) != 0;
	return 0;
}
