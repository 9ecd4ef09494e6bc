/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Who runs a shared controller, decided per open (mp.h): the multi-process wrapper's claim
 * hook, which the transport registry asks at every attach. The lock file in the run directory
 * is held by whoever runs it; its socket answers once it serves.
 *   - A device that outlives processes (transport's serve_apart: an emulated device with a
 *     name or files) is run by a device process: an opener connects to it, and when nobody
 *     serves the address it starts one (mp_spawn.c) and connects then. It never runs the
 *     device itself unless there is no unvme program to start (then it runs it as a primary
 *     and says so).
 *   - Any other shared device (a VFIO controller, an unnamed memory device, or every device
 *     with UNVME_MP=primary): the first opener takes the lock and runs it (the primary); a
 *     later one connects to it. A device process serving the address (`unvme serve`) is
 *     used too.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "lib/common/clock.h"
#include "lib/common/env.h"
#include "lib/driver/ctrlr.h"
#include "lib/driver/errmsg.h"
#include "mp.h"

#define CLAIM_WAIT_MS 10000  /* for a holder of the lock that does not listen yet */
#define MAX_SPAWNS 3         /* device processes started that then did not answer */

/* Takes the lock of w if nobody holds it: its descriptor (the pid written in it, for people
 * and messages), -EWOULDBLOCK when somebody does, another negative errno with a message. */
static int take_lock(const struct unvme_ctrlr *c, const struct mp_where *w)
{
	int fd = open(w->lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return unvme_fail(-errno, "%s: cannot open the lock file %s: %s", c->devid, w->lock,
				  strerror(errno));
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		close(fd);
		return -EWOULDBLOCK;
	}
	char pid[32];
	int n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) == 0 && pwrite(fd, pid, (size_t)n, 0) < 0)
		(void)0;
	return fd;
}

/* Nobody holds the lock right now (a check: the lock is let go of at once). */
static bool lock_free(const struct mp_where *w)
{
	int fd = open(w->lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return false;
	bool free_now = flock(fd, LOCK_EX | LOCK_NB) == 0;
	close(fd);
	return free_now;
}

/* The role of a process opening c's address: 1 runs the controller (c->wrap_fd holds the
 * lock), 0 a client (c->wrap_fd is the connected socket), 2 neither (nowhere to meet: not
 * shared), or a negative errno with a message (nobody answers, the device process could not
 * start). */
static int claim_role(struct unvme_ctrlr *c)
{
	int lock_fd;
	if (mp_device_serving(c->address, &lock_fd)) {
		/* this is the device process: it runs the controller, under the lock it holds */
		c->wrap_fd = fcntl(lock_fd, F_DUPFD_CLOEXEC, 0);
		return c->wrap_fd >= 0 ? 1 : -errno;
	}
	struct mp_where w;
	int rc = mp_where(c->address, &w);
	if (rc) {
		/* nowhere to meet (no run directory): a device of this process's own */
		if (unvme_log_on())
			fprintf(stderr, "unvme: %s; the device is not shared\n", unvme_errmsg());
		unvme_errmsg_clear();
		return 2;
	}
	bool apart = mp_mode() == MP_MODE_DEVICE && c->ops->serve_apart &&
		     c->ops->serve_apart(c->address);
	uint64_t deadline = mono_ms_coarse() + CLAIM_WAIT_MS;
	int spawns = 0, last = 0;
	for (;;) {
		if (!apart) {
			int fd = take_lock(c, &w);
			if (fd >= 0) {
				c->wrap_fd = fd;
				return 1;
			}
			if (fd != -EWOULDBLOCK)
				return fd;
		}
		int s = mp_connect(&w.sock);
		if (s >= 0) {
			c->wrap_fd = s;
			return 0;
		}
		if (s == -EACCES)
			return s; /* another user's server (the message says so) */
		last = s;
		if (apart && lock_free(&w)) {
			/* nobody runs it: its device process starts now (two openers may race: the
			 * lock decides, the loser's device process reports it served, and this one
			 * connects). Any error is the device's own (its files in use, a bad
			 * option: errnos a device may give, -EAGAIN included), told as it is. */
			if (spawns++ == MAX_SPAWNS)
				return unvme_fail(-EIO, "%s: its device process started %d times and "
						  "never answered on %s (see %s)", c->devid, MAX_SPAWNS,
						  w.sock.sun_path, w.log);
			rc = mp_spawn(c->address);
			if (rc == 0) {
				deadline = mono_ms_coarse() + CLAIM_WAIT_MS;
				continue;
			}
			if (rc != -ENOENT)
				return rc;
			/* no unvme program here (a program linked with the library alone): this
			 * process runs the device, as a primary, and the device ends with it */
			int fd = take_lock(c, &w);
			if (fd >= 0) {
				if (unvme_log_on())
					fprintf(stderr, "unvme: %s; this process runs the device itself "
						"(set UNVME_SERVE_PROGRAM to an unvme program)\n",
						unvme_errmsg());
				unvme_errmsg_clear();
				c->wrap_fd = fd;
				return 1;
			}
			if (fd != -EWOULDBLOCK)
				return fd;
		}
		/* the holder is still attaching (or just went): the lock decides again */
		if (mono_ms_coarse() >= deadline)
			return unvme_fail(-EBUSY, "%s: another process holds the device (lock %s) but "
					  "does not answer on %s: %s", c->devid, w.lock, w.sock.sun_path,
					  strerror(-last));
		sleep_us(5000);
	}
}

/* The claim hook (transport.h): asked at every attach. A device other processes may reach
 * (its transport shares doorbells) is taken unless sharing is off: this process runs it and
 * serves the others once it is up (the lifecycle listener, mp_server.c), or it is a client of
 * the process that runs it, on the client transport (mp_client.c). */
static int mp_wrap_claim(struct unvme_ctrlr *c, const struct unvme_transport **use)
{
	if (!c->ops->share_doorbells ||
	    (mp_mode() == MP_MODE_OFF && !mp_device_serving(c->address, NULL)))
		return 0;
	int rc = claim_role(c);
	switch (rc) {
	case 0:
		*use = &unvme_transport_mp_secondary;
		return 1;
	case 1:
		c->serves_others = true;
		rc = ctrlr_life_listen(c, mp_server_life, NULL);
		return rc ? rc : 1;
	case 2:
		return 0;
	default:
		return rc;
	}
}

static const struct unvme_transport_wrapper mp_wrapper = {
	.name = "multi-process",
	.claim = mp_wrap_claim,
};
UNVME_TRANSPORT_WRAPPER_REGISTER(mp_wrapper);
