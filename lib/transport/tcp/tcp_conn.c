/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Host side of an NVMe/TCP connection: TCP connect and connection initialisation (ICReq /
 * ICResp, NVMe TCP Transport 1.0 section 3.3). The socket is non-blocking with Nagle off:
 * capsules are small and latency matters more than segments.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/common/clock.h"
#include "lib/driver/ctrlr.h"
#include "lib/driver/errmsg.h"
#include "tcp_conn.h"
#include "lib/fabrics/tcp/tcp_pdu.h"
#include "lib/fabrics/tcp/tcp_tls.h"

#define HOST_MAXR2T 0 /* 0's based: one R2T outstanding per command */

int tcp_io_wait(int fd, bool for_write, uint64_t deadline_ms)
{
	for (;;) {
		uint64_t now = mono_ms_coarse();
		if (now >= deadline_ms)
			return 0;
		uint64_t left = deadline_ms - now;
		struct pollfd pfd = {.fd = fd, .events = for_write ? POLLOUT : POLLIN};
		int n = poll(&pfd, 1, left > 1000 ? 1000 : (int)left);
		if (n > 0)
			return 1;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

int tcp_io_send_all(int fd, const void *buf, size_t len, uint64_t deadline_ms)
{
	const uint8_t *p = buf;
	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			return errno == EPIPE ? -ECONNRESET : -errno;
		int w = tcp_io_wait(fd, true, deadline_ms);
		if (w <= 0)
			return w ? w : -ETIMEDOUT;
	}
	return 0;
}

int tcp_io_recv_all(int fd, void *buf, size_t len, uint64_t deadline_ms)
{
	uint8_t *p = buf;
	while (len) {
		ssize_t n = recv(fd, p, len, MSG_DONTWAIT);
		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n == 0)
			return -ECONNRESET;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		int w = tcp_io_wait(fd, false, deadline_ms);
		if (w <= 0)
			return w ? w : -ETIMEDOUT;
	}
	return 0;
}

static int connect_one(const struct addrinfo *ai, uint64_t deadline, int *out)
{
	int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
	if (fd < 0)
		return -errno;
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
		if (errno != EINPROGRESS) {
			int e = -errno;
			close(fd);
			return e;
		}
		int w = tcp_io_wait(fd, true, deadline);
		if (w <= 0) {
			close(fd);
			return w ? w : -ETIMEDOUT;
		}
		int err = 0;
		socklen_t el = sizeof(err);
		getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el);
		if (err) {
			close(fd);
			return -err;
		}
	}
	*out = fd;
	return 0;
}

/* The TLS handshake, before anything else on the connection (NVMe TCP Transport 1.1 section
 * 3.6.1). */
static int tls_handshake(struct tcp_conn *c, struct tcp_tls_ctx *ctx, uint64_t deadline)
{
	c->tls = tcp_tls_new(ctx);
	if (!c->tls)
		return unvme_fail(-ENOMEM, "%s: no memory for a TLS session", c->peer);
	for (;;) {
		int h = tcp_tls_handshake(c->tls, c->fd);
		if (h == 1)
			return 0;
		if (h < 0)
			return unvme_fail(h == -EACCES ? -EACCES : -EPROTO, "%s: TLS handshake failed: %s", c->peer,
					  tcp_tls_why(c->tls));
		int w = tcp_io_wait(c->fd, tcp_tls_wants_write(c->tls), deadline);
		if (w <= 0)
			return unvme_fail(w ? w : -ETIMEDOUT, "%s: TLS handshake failed: %s", c->peer,
					  w ? strerror(-w) : "no answer in time");
	}
}

/* Blocking exchanges of the connection's first PDUs, in the clear or through TLS. */
static int conn_send_all(struct tcp_conn *c, const void *buf, size_t len, uint64_t deadline)
{
	if (!c->tls)
		return tcp_io_send_all(c->fd, buf, len, deadline);
	size_t done = 0;
	while (done < len) {
		size_t skip = done + tcp_tls_unsent(c->tls);
		struct iovec v = {(uint8_t *)buf + skip, len - skip};
		ssize_t s = tcp_tls_sendv(c->tls, c->fd, &v, skip < len ? 1 : 0);
		if (s < 0)
			return (int)s;
		done += (size_t)s;
		if (done < len && s == 0) {
			int w = tcp_io_wait(c->fd, true, deadline);
			if (w <= 0)
				return w ? w : -ETIMEDOUT;
		}
	}
	return 0;
}

static int conn_recv_all(struct tcp_conn *c, void *buf, size_t len, uint64_t deadline)
{
	if (!c->tls)
		return tcp_io_recv_all(c->fd, buf, len, deadline);
	size_t done = 0;
	while (done < len) {
		ssize_t r = tcp_tls_recv(c->tls, c->fd, (uint8_t *)buf + done, len - done);
		if (r < 0)
			return (int)r;
		done += (size_t)r;
		if (done < len && r == 0) {
			int w = tcp_io_wait(c->fd, false, deadline);
			if (w <= 0)
				return w ? w : -ETIMEDOUT;
		}
	}
	return 0;
}

/* ICReq out, ICResp in: the digests we want, our data alignment, one R2T per command. */
static int initialize(struct tcp_conn *c, const struct tcp_params *p, uint64_t deadline)
{
	struct nvme_tcp_icreq req = {0};
	req.hdr.type = NVME_TCP_ICREQ;
	req.hdr.hlen = sizeof(req);
	req.hdr.plen = sizeof(req);
	req.pfv = 0;
	req.hpda = 0; /* 4-byte alignment of C2HData is plenty: we copy or receive in place */
	req.dgst = (uint8_t)((p->hdgst ? NVME_TCP_DGST_HDR : 0) | (p->ddgst ? NVME_TCP_DGST_DATA : 0));
	req.maxr2t = HOST_MAXR2T;
	int rc = conn_send_all(c, &req, sizeof(req), deadline);
	struct nvme_tcp_icresp rsp;
	if (rc == 0)
		rc = conn_recv_all(c, &rsp, sizeof(rsp), deadline);
	if (rc)
		return unvme_fail(rc, "%s: NVMe/TCP connection initialisation (ICReq) failed: %s%s", c->peer,
				  rc == -ETIMEDOUT ? "no ICResp in time"
				  : rc == -ECONNRESET ? "the target closed the connection"
				  : c->tls ? tcp_tls_why(c->tls)
					   : strerror(-rc),
				  rc == -ECONNRESET && !c->tls
					  ? " (a target that requires TLS does so: tls=1 and a PSK in the device id)"
					  : "");
	if (rsp.hdr.type == NVME_TCP_C2H_TERM) {
		struct nvme_tcp_term *t = (struct nvme_tcp_term *)&rsp;
		return unvme_fail(-EPROTO, "%s: the target refused the connection: %s", c->peer,
				  tcp_fes_name(t->fes));
	}
	struct tcp_pdu_info info;
	if (tcp_pdu_check_icresp(&rsp, req.dgst, &info) != TCP_PDU_OK)
		return unvme_fail(-EPROTO, "%s: invalid ICResp (%s, byte %u)", c->peer, info.why, info.fei);
	c->hdgst = rsp.dgst & NVME_TCP_DGST_HDR;
	c->ddgst = rsp.dgst & NVME_TCP_DGST_DATA;
	c->cpda = 4u * (rsp.cpda + 1u);
	c->hpda = 4u * (req.hpda + 1u);
	c->maxh2cdata = rsp.maxh2cdata;
	return 0;
}

int tcp_conn_open(struct tcp_conn *c, const struct tcp_params *p, struct tcp_tls_ctx *tls,
		  uint32_t timeout_ms)
{
	memset(c, 0, sizeof(*c));
	c->fd = -1;
	snprintf(c->peer, sizeof(c->peer), "%s:%s", p->nvmf.host, p->nvmf.port);
	uint64_t deadline = mono_ms_coarse() + timeout_ms;
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_ADDRCONFIG | AI_NUMERICSERV};
	struct addrinfo *res = NULL;
	int g = getaddrinfo(p->nvmf.host, p->nvmf.port, &hints, &res);
	if (g)
		return unvme_fail(-EHOSTUNREACH, "%s: cannot resolve the host: %s", c->peer, gai_strerror(g));
	int rc = -ECONNREFUSED;
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		rc = connect_one(ai, deadline, &c->fd);
		if (rc == 0)
			break;
	}
	freeaddrinfo(res);
	if (rc)
		return unvme_fail(rc, "%s: cannot connect: %s", c->peer,
				  rc == -ETIMEDOUT ? "timed out" : strerror(-rc));
	if (tls)
		rc = tls_handshake(c, tls, deadline);
	if (rc == 0)
		rc = initialize(c, p, deadline);
	if (rc)
		tcp_conn_close(c);
	return rc;
}

void tcp_conn_shutdown(struct tcp_conn *c)
{
	if (c->fd >= 0)
		shutdown(c->fd, SHUT_RDWR);
}

void tcp_conn_close(struct tcp_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	tcp_tls_free(c->tls);
	c->tls = NULL;
}
