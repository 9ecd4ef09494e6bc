/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Listening sockets and the acceptor thread: a new connection is made non-blocking with
 * Nagle off and handed to a poller. Only connection setup passes through here.
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tgt.h"

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
	if (t->nlfds == 0) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		getsockname(fd, (struct sockaddr *)&ss, &sl);
		t->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
							 : ((struct sockaddr_in *)&ss)->sin_port);
	}
	t->lfds[t->nlfds++] = fd;
	return 0;
}

static void *acceptor_main(void *arg)
{
	struct unvme_target *t = arg;
	struct pollfd pfd[65];
	int n = t->nlfds < 64 ? t->nlfds : 64;
	for (int i = 0; i < n; i++)
		pfd[i] = (struct pollfd){.fd = t->lfds[i], .events = POLLIN};
	pfd[n] = (struct pollfd){.fd = t->stop_fd, .events = POLLIN};
	while (!atomic_load(&t->stop)) {
		if (poll(pfd, (nfds_t)n + 1, 1000) <= 0)
			continue;
		if (pfd[n].revents)
			break;
		for (int i = 0; i < n; i++) {
			if (!(pfd[i].revents & POLLIN))
				continue;
			int fd = accept4(pfd[i].fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
			if (fd < 0)
				continue;
			int one = 1;
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			struct tgt_conn *c = tgt_conn_new(t, fd);
			if (!c) {
				close(fd);
				tgt_log(t, "out of memory for a new connection");
				continue;
			}
			tgt_poller_adopt(t, c);
		}
	}
	return NULL;
}

int tgt_listen_start(struct unvme_target *t)
{
	char err[300];
	t->lfds = calloc((size_t)t->cfg->nlisten, sizeof(int));
	if (!t->lfds)
		return -ENOMEM;
	for (int i = 0; i < t->cfg->nlisten; i++) {
		int rc = bind_one(t, &t->cfg->listen[i], err, sizeof(err));
		if (rc) {
			tgt_log(t, "%s", err);
			return rc;
		}
	}
	int rc = pthread_create(&t->acceptor, NULL, acceptor_main, t);
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
	free(t->lfds);
	t->lfds = NULL;
	t->nlfds = 0;
}
