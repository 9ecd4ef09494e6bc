/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Listening sockets and the acceptor thread: a new connection is counted against the
 * connection limits (refused and closed at once when one is hit), made non-blocking with Nagle
 * off and handed to a poller. Only connection setup passes through here.
 *
 * Descriptors running out (EMFILE, ENFILE) must not stop the target: the acceptor keeps one
 * descriptor in reserve, gives it up to take the waiting connection and close it at once (the
 * host sees a refusal instead of a connection that hangs in the backlog), takes the reserve
 * back, logs the limit, and backs off a little before accepting again; the connections already
 * served go on.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tgt.h"
#include "lib/common/thread.h"

#define FD_BACKOFF_MS 50

static int reserve_open(void)
{
	return open("/dev/null", O_RDONLY | O_CLOEXEC);
}

/* Out of descriptors: refuse the connection waiting on lfd with the reserve's help. */
static void refuse_without_fds(struct unvme_target *t, int lfd, int err)
{
	if (t->reserve_fd >= 0) {
		close(t->reserve_fd);
		t->reserve_fd = -1;
	}
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	char peer[80] = "?";
	if (fd >= 0) {
		struct tgt_addr a;
		tgt_conn_peer(fd, peer, sizeof(peer), &a);
		close(fd);
	}
	t->reserve_fd = reserve_open();
	tgt_limit_hit(t, &t->lim_fds, "out of file descriptors (%s; RLIMIT_NOFILE): connection from %s "
		      "refused; connections already served go on", strerror(err), peer);
	struct timespec ts = {0, FD_BACKOFF_MS * 1000000L};
	nanosleep(&ts, NULL);
}

static void accept_one(struct unvme_target *t, int lfd)
{
	int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0) {
		if (errno == EMFILE || errno == ENFILE)
			refuse_without_fds(t, lfd, errno);
		else if (errno == ENOBUFS || errno == ENOMEM)
			nanosleep(&(struct timespec){0, FD_BACKOFF_MS * 1000000L}, NULL);
		return;
	}
	char peer[80];
	struct tgt_addr a;
	tgt_conn_peer(fd, peer, sizeof(peer), &a);
	if (!tgt_conn_admit(t, &a, peer)) {
		close(fd);
		return;
	}
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	struct tgt_conn *c = tgt_conn_new(t, fd);
	if (!c) {
		tgt_conn_retire(t, &a);
		close(fd);
		tgt_log(t, "out of memory for a new connection from %s", peer);
		return;
	}
	c->counted = true;
	tgt_poller_adopt(t, c);
}

static int bind_one(struct unvme_target *t, const struct tgt_listen_cfg *l, char *err, size_t errlen)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
	struct addrinfo *res = NULL;
	int g = getaddrinfo(l->addr, l->port, &hints, &res);
	if (g) {
		snprintf(err, errlen, "listen address %s:%s: %s", l->addr, l->port, gai_strerror(g));
		return -EINVAL;
	}
	int fd = socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC, res->ai_protocol);
	int rc = fd < 0 ? -errno : 0;
	if (rc == 0) {
		int one = 1;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (res->ai_family == AF_INET6)
			setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
		if (bind(fd, res->ai_addr, res->ai_addrlen) || listen(fd, 128))
			rc = -errno;
	}
	freeaddrinfo(res);
	if (rc) {
		snprintf(err, errlen, "cannot listen on %s:%s: %s", l->addr, l->port, strerror(-rc));
		if (fd >= 0)
			close(fd);
		return rc;
	}
	if (t->nlfds == 0 && t->nrls == 0) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		getsockname(fd, (struct sockaddr *)&ss, &sl);
		t->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
							 : ((struct sockaddr_in *)&ss)->sin_port);
	}
	t->lfds[t->nlfds++] = fd;
	return 0;
}

/* TCP listeners, then RDMA listeners (their connection requests: tgt_rdma.c), then stop. */
static void *acceptor_main(void *arg)
{
	struct unvme_target *t = arg;
	struct pollfd pfd[TGT_MAX_LISTENERS + 1];
	int n = t->nlfds, nr = t->nrls;
	for (int i = 0; i < n; i++)
		pfd[i] = (struct pollfd){.fd = t->lfds[i], .events = POLLIN};
	for (int i = 0; i < nr; i++)
		pfd[n + i] = (struct pollfd){.fd = tgt_rdma_listen_fd(t, i), .events = POLLIN};
	pfd[n + nr] = (struct pollfd){.fd = t->stop_fd, .events = POLLIN};
	while (!atomic_load(&t->stop)) {
		if (poll(pfd, (nfds_t)(n + nr) + 1, 1000) <= 0)
			continue;
		if (pfd[n + nr].revents)
			break;
		for (int i = 0; i < n; i++)
			if (pfd[i].revents & POLLIN)
				accept_one(t, pfd[i].fd);
		for (int i = 0; i < nr; i++)
			if (pfd[n + i].revents & POLLIN)
				tgt_rdma_accept(t, i);
	}
	return NULL;
}

int tgt_listen_start(struct unvme_target *t)
{
	char err[300];
	t->lfds = calloc((size_t)t->cfg->nlisten, sizeof(int));
	t->rls = calloc((size_t)t->cfg->nlisten, sizeof(*t->rls));
	if (!t->lfds || !t->rls)
		return -ENOMEM;
	t->reserve_fd = reserve_open();
	for (int i = 0; i < t->cfg->nlisten; i++) {
		const struct tgt_listen_cfg *l = &t->cfg->listen[i];
		int rc = l->rdma ? tgt_rdma_listen(t, l, err, sizeof(err)) : bind_one(t, l, err, sizeof(err));
		if (rc) {
			tgt_log(t, "%s", err);
			return rc;
		}
	}
	int rc = unvme_thread_start(&t->acceptor, acceptor_main, t);
	if (rc)
		return -rc;
	t->acceptor_running = true;
	return 0;
}

void tgt_listen_stop(struct unvme_target *t)
{
	if (t->acceptor_running) {
		uint64_t one = 1;
		(void)!write(t->stop_fd, &one, sizeof(one));
		pthread_join(t->acceptor, NULL);
		t->acceptor_running = false;
	}
	for (int i = 0; i < t->nlfds; i++)
		close(t->lfds[i]);
	tgt_rdma_listen_close(t);
	if (t->reserve_fd >= 0)
		close(t->reserve_fd);
	t->reserve_fd = -1;
	free(t->lfds);
	t->lfds = NULL;
	t->nlfds = 0;
}
