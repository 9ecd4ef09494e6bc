/* SPDX-License-Identifier: BSD-3-Clause */
/* Messages between processes sharing a device: SOCK_SEQPACKET with SCM_RIGHTS, and where
 * they meet. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "errmsg.h"
#include "mp.h"
#include "rundir.h"

int mp_send(int sock, const void *msg, size_t len, int fd)
{
	struct iovec iov = { .iov_base = (void *)msg, .iov_len = len };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (fd >= 0) {
		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = sizeof(u.buf);
		struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	}
	for (;;) {
		ssize_t n = sendmsg(sock, &mh, MSG_NOSIGNAL);
		if (n == (ssize_t)len)
			return 0;
		if (n < 0 && errno == EINTR)
			continue;
		return n < 0 ? -errno : -EIO;
	}
}

ssize_t mp_recv(int sock, void *buf, size_t len, int *fd, int timeout_ms)
{
	if (fd)
		*fd = -1;
	struct pollfd p = { .fd = sock, .events = POLLIN };
	for (;;) {
		int r = poll(&p, 1, timeout_ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -ETIMEDOUT;
		break;
	}
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			     .msg_controllen = sizeof(u.buf) };
	ssize_t n;
	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
			int got;
			memcpy(&got, CMSG_DATA(cm), sizeof(int));
			if (fd)
				*fd = got;
			else
				close(got);
		}
	}
	return n;
}

/* FNV-1a: the address is too long for a file name, its hash is not */
static uint64_t hash64(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ull;
	return h;
}

int mp_paths(const char *address, char *lock, size_t len, struct sockaddr_un *sock)
{
	char dir[4096];
	int rc = unvme_rundir(dir, sizeof(dir));
	if (rc)
		return rc;
	uint64_t h = hash64(address);
	memset(sock, 0, sizeof(*sock));
	sock->sun_family = AF_UNIX;
	int a = snprintf(lock, len, "%s/ctrl-%016llx.lock", dir, (unsigned long long)h);
	int b = snprintf(sock->sun_path, sizeof(sock->sun_path), "%s/ctrl-%016llx.sock", dir,
			 (unsigned long long)h);
	if (a < 0 || (size_t)a >= len || b < 0 || (size_t)b >= sizeof(sock->sun_path))
		return unvme_fail(-ENAMETOOLONG, "the run directory %s is too long a path for a Unix "
				  "socket (set UNVME_RUN_DIR to a shorter one)", dir);
	return 0;
}

int mp_enabled(void)
{
	const char *e = getenv("UNVME_MP");
	return !(e && (strcmp(e, "0") == 0 || strcmp(e, "off") == 0 || strcmp(e, "no") == 0));
}
