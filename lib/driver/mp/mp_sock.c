/* SPDX-License-Identifier: BSD-3-Clause */
/* Messages between processes sharing a device: SOCK_SEQPACKET with SCM_RIGHTS, where they
 * meet, and who may meet there. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/driver/errmsg.h"
#include "lib/driver/rundir.h"
#include "mp.h"

size_t mp_req_len(uint32_t op, uint32_t card_len)
{
	const size_t head = offsetof(struct mp_req, hello);
	const struct mp_req *r = NULL;
	switch (op) {
	case MP_HELLO: return head + sizeof(r->hello);
	case MP_REG_READ: return head + sizeof(r->reg);
	case MP_ADMIN: return head + sizeof(r->admin);
	case MP_QUEUE_CREATE: return head + sizeof(r->qcreate);
	case MP_QUEUE_DELETE: return head + sizeof(r->qdelete);
	case MP_DMA_MAP:
	case MP_DMA_UNMAP: return head + sizeof(r->map);
	case MP_PLUG:
		return card_len > MP_URI_MAX ? 0 : offsetof(struct mp_req, card.uri) + card_len;
	case MP_WINDOW:
	case MP_AER_SUBSCRIBE:
	case MP_UNPLUG:
	case MP_STOP:
	case MP_STATUS:
	case MP_RESET: return head;
	default: return 0;
	}
}

static int send_msg(int sock, const void *msg, size_t len, const int *fds, unsigned nfds,
		    int flags)
{
	struct iovec iov = { .iov_base = (void *)msg, .iov_len = len };
	union {
		char buf[CMSG_SPACE(MP_MAX_FDS * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (nfds > MP_MAX_FDS)
		return -EINVAL;
	if (nfds) {
		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
		struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(nfds * sizeof(int));
		memcpy(CMSG_DATA(cm), fds, nfds * sizeof(int));
	}
	for (;;) {
		ssize_t n = sendmsg(sock, &mh, MSG_NOSIGNAL | flags);
		if (n == (ssize_t)len)
			return 0;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EWOULDBLOCK)
			return -EAGAIN;
		return n < 0 ? -errno : -EIO;
	}
}

int mp_send(int sock, const void *msg, size_t len, const int *fds, unsigned nfds)
{
	return send_msg(sock, msg, len, fds, nfds, 0);
}

int mp_send_nowait(int sock, const void *msg, size_t len)
{
	return send_msg(sock, msg, len, NULL, 0, MSG_DONTWAIT);
}

ssize_t mp_recv(int sock, void *buf, size_t len, int *fds, unsigned maxfds, int timeout_ms)
{
	for (unsigned i = 0; fds && i < maxfds; i++)
		fds[i] = -1;
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
		char buf[CMSG_SPACE(MP_MAX_FDS * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			     .msg_controllen = sizeof(u.buf) };
	ssize_t n;
	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0 && errno == ECONNRESET) {
		/* the peer closed with something of ours unread: the error comes first, what it
		 * sent before closing (a refusal's reason) may still be queued behind it */
		mh.msg_controllen = sizeof(u.buf);
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == ECONNRESET))
			return 0;
	}
	if (n < 0)
		return errno == EAGAIN ? -ETIMEDOUT : -errno;
	unsigned got = 0;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		size_t nfd = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < nfd; i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
			if (fds && got < maxfds)
				fds[got++] = fd;
			else
				close(fd); /* more than the caller takes: not kept open by mistake */
		}
	}
	if (mh.msg_flags & MSG_CTRUNC) {
		/* descriptors the kernel could not deliver: the message is not what was sent */
		for (unsigned i = 0; i < got; i++) {
			close(fds[i]);
			fds[i] = -1;
		}
		return -EPROTO;
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

int mp_where(const char *address, struct mp_where *w)
{
	char dir[4096];
	int rc = unvme_rundir(dir, sizeof(dir));
	if (rc)
		return rc;
	unsigned long long h = (unsigned long long)hash64(address);
	memset(&w->sock, 0, sizeof(w->sock));
	w->sock.sun_family = AF_UNIX;
	int a = snprintf(w->lock, sizeof(w->lock), "%s/ctrl-%016llx.lock", dir, h);
	int l = snprintf(w->log, sizeof(w->log), "%s/ctrl-%016llx.log", dir, h);
	int b = snprintf(w->sock.sun_path, sizeof(w->sock.sun_path), "%s/ctrl-%016llx.sock", dir, h);
	if (a < 0 || (size_t)a >= sizeof(w->lock) || l < 0 || (size_t)l >= sizeof(w->log) || b < 0 ||
	    (size_t)b >= sizeof(w->sock.sun_path))
		return unvme_fail(-ENAMETOOLONG, "the run directory %s is too long a path for a Unix "
				  "socket (set UNVME_RUN_DIR to a shorter one)", dir);
	return 0;
}

enum mp_mode mp_mode(void)
{
	const char *e = getenv("UNVME_MP");
	if (e && (strcmp(e, "0") == 0 || strcmp(e, "off") == 0 || strcmp(e, "no") == 0))
		return MP_MODE_OFF;
	if (e && strcmp(e, "primary") == 0)
		return MP_MODE_PRIMARY;
	return MP_MODE_DEVICE;
}

int mp_peer_check(int sock, uid_t *uid, pid_t *pid)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);
	if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0 || len != sizeof(cr)) {
		*uid = (uid_t)-1;
		*pid = 0;
		return -EACCES; /* not known: not trusted */
	}
	*uid = cr.uid;
	*pid = cr.pid;
	return cr.uid == geteuid() || cr.uid == 0 ? 0 : -EACCES;
}

int mp_listen(const struct sockaddr_un *a)
{
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	/* Linux creates the socket file with the mode of the socket's inode less the umask:
	 * 0600 here, so the file is never more open than that, whatever the umask */
	if (fchmod(s, 0600) != 0) {
		int e = -errno;
		close(s);
		return e;
	}
	unlink(a->sun_path); /* a dead server's: the lock says it is ours now */
	if (bind(s, (const struct sockaddr *)a, sizeof(*a)) != 0 || chmod(a->sun_path, 0600) != 0 ||
	    listen(s, 64) != 0) {
		int e = -errno;
		close(s);
		unlink(a->sun_path);
		return e;
	}
	return s;
}

int mp_connect(const struct sockaddr_un *a)
{
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	if (connect(s, (const struct sockaddr *)a, sizeof(*a)) != 0) {
		int e = -errno;
		close(s);
		return e;
	}
	uid_t uid;
	pid_t pid;
	int rc = mp_peer_check(s, &uid, &pid);
	if (rc) {
		close(s);
		return unvme_fail(rc, "%s belongs to user %u (process %d), not to this one: refusing "
				  "to use a device served by another user", a->sun_path, (unsigned)uid,
				  (int)pid);
	}
	return s;
}
