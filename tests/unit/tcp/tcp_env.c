/* SPDX-License-Identifier: BSD-3-Clause */
/* The NVMe/TCP test environment (see tcp_env.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tcp_env.h"
#include "unvme/spec/tcp.h"
#include "tests/unit/fabrics_capsule.h"

#define MAX_PAIRS 64
#define WATCH_HEAD 72u /* a PDU's common header and a capsule's command */

uint64_t env_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static uint16_t start(struct unvme_target **t, const char *nqn, const char *device, const char *host,
		      const char *secret, const char *ctrl_secret, const char *dhgroup, const char *tls_key,
		      const char *limit, uint64_t limit_value)
{
	char err[512];
	struct tgt_config *cfg = tgt_config_new();
	tgt_config_set_quiet(cfg, 1);
	int si = tgt_config_add_subsys(cfg, nqn, err, sizeof(err));
	int rc = si < 0 ? si : tgt_config_add_listen(cfg, "127.0.0.1:0", err, sizeof(err));
	if (rc == 0)
		rc = tgt_config_add_ns(cfg, si, device, 0, 0, err, sizeof(err));
	if (rc == 0 && host)
		rc = tgt_config_add_host(cfg, si, host, secret, ctrl_secret, NULL, dhgroup, err, sizeof(err));
	else if (rc == 0)
		tgt_config_allow_any(cfg, si);
	if (rc == 0 && limit)
		rc = tgt_config_set_limit(cfg, limit, limit_value, err, sizeof(err));
	if (rc == 0 && tls_key) {
		tgt_config_set_tls(cfg, 1);
		rc = tgt_config_set_tls_key(cfg, si, host, tls_key, err, sizeof(err));
	}
	if (rc == 0) {
		rc = unvme_target_start(cfg, t, err, sizeof(err));
		cfg = NULL; /* the target owns it, also on failure */
	}
	if (rc) {
		tgt_config_free(cfg);
		fprintf(stderr, "  target: %s\n", err);
		return 0;
	}
	return unvme_target_port(*t);
}

uint16_t env_target(struct unvme_target **t, const char *nqn, const char *device, const char *host,
		    const char *secret, const char *ctrl_secret, const char *dhgroup)
{
	return start(t, nqn, device, host, secret, ctrl_secret, dhgroup, NULL, NULL, 0);
}

uint16_t env_target_tls(struct unvme_target **t, const char *nqn, const char *device, const char *host,
			const char *key)
{
	return start(t, nqn, device, host, NULL, NULL, NULL, key, NULL, 0);
}

uint16_t env_target_limited(struct unvme_target **t, const char *nqn, const char *device,
			    const char *limit, uint64_t value)
{
	return start(t, nqn, device, NULL, NULL, NULL, NULL, NULL, limit, value);
}

struct proxy {
	int lfd;
	uint16_t port, up;
	pthread_t thread;
	pthread_mutex_t lock;
	int pairs[MAX_PAIRS][2]; /* downstream, upstream; -1 when free (-2: the host's gone) */
	_Atomic bool stop, hold, cut;
	_Atomic unsigned accepted;
	_Atomic unsigned delay_ms, delayed;
	/* a pair accepted with a delay: host bytes forwarded, when they flow again */
	unsigned pair_delay[MAX_PAIRS];
	uint32_t host_fwd[MAX_PAIRS];
	uint64_t held_until[MAX_PAIRS];
	/* the host's PDUs as they pass (proxy_hold_answers, proxy_refuse_io_connect) */
	struct {
		uint8_t head[WATCH_HEAD];
		uint32_t have, plen;
		bool looked;
	} watch[MAX_PAIRS];
	uint64_t answer_until[MAX_PAIRS]; /* the target's bytes held until then */
	_Atomic unsigned hold_what, hold_ms, refuse_io, linger_ms;
	uint64_t linger_until[MAX_PAIRS]; /* the host left: the target's side closes then */
	bool disconnected[MAX_PAIRS];     /* the host's Disconnect was held back (lingering) */
	_Atomic unsigned seen[OFF_POLL_KINDS];
};

#define ICREQ_LEN 128u /* NVMe/TCP's ICReq PDU */

static int connect_up(uint16_t port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0)
		return fd;
	if (fd >= 0)
		close(fd);
	return -1;
}

static void close_pair(struct proxy *p, int i)
{
	for (int k = 0; k < 2; k++) {
		if (p->pairs[i][k] >= 0) {
			shutdown(p->pairs[i][k], SHUT_RDWR);
			close(p->pairs[i][k]);
		}
		p->pairs[i][k] = -1;
	}
	p->linger_until[i] = 0;
	p->disconnected[i] = false;
}

/* A host's capsule (its command at sqe) passing on pair i: counted, its answer held when
 * asked; false when the pair is to be dropped instead (a refused I/O queue Connect). */
static bool look(struct proxy *p, int i, const uint8_t *sqe)
{
	/* lingering: a queue's Disconnect would end it on the target at once, so the host's
	 * side ends there instead */
	if (atomic_load(&p->linger_ms) && sqe[0] == NVME_FABRICS_OPC && sqe[4] == NVMF_FCTYPE_DISCONNECT) {
		p->disconnected[i] = true;
		return false;
	}
	bool disable, io_connect;
	enum off_poll_kind kind = capsule_kind(sqe, &disable, &io_connect);
	if (io_connect) {
		unsigned n = atomic_load(&p->refuse_io);
		while (n && !atomic_compare_exchange_weak(&p->refuse_io, &n, n - 1))
			;
		if (n) {
			atomic_fetch_add(&p->seen[OFF_POLL_REFUSED], 1);
			return false;
		}
	}
	if (disable)
		atomic_fetch_add(&p->seen[OFF_POLL_DISABLE], 1);
	if (kind != OFF_POLL_OTHER) {
		atomic_fetch_add(&p->seen[kind], 1);
		if (atomic_load(&p->hold_what) & (1u << kind))
			p->answer_until[i] = env_now_ms() + atomic_load(&p->hold_ms);
	}
	return true;
}

/* Follows the host's PDUs in the bytes of pair i it forwards (NVMe/TCP's common header:
 * PLEN at byte 4; a CapsuleCmd's command at byte 8). False: drop the pair. */
static bool watch_host(struct proxy *p, int i, const uint8_t *b, size_t n)
{
	__typeof__(p->watch[0]) *w = &p->watch[i];
	for (size_t k = 0; k < n;) {
		if (w->have < 8 || (w->have < WATCH_HEAD && w->have < w->plen)) {
			w->head[w->have++] = b[k++];
			if (w->have == 8)
				w->plen = capsule_le32(w->head + 4) < 8 ? 8 : capsule_le32(w->head + 4);
		} else {
			size_t skip = n - k < w->plen - w->have ? n - k : w->plen - w->have;
			w->have += (uint32_t)skip;
			k += skip;
		}
		uint32_t head = w->plen < WATCH_HEAD ? w->plen : WATCH_HEAD;
		if (w->have >= 8 && w->have >= head && !w->looked) {
			w->looked = true;
			if (w->head[0] == NVME_TCP_CAPSULE_CMD && head == WATCH_HEAD &&
			    !look(p, i, w->head + 8))
				return false;
		}
		if (w->have >= 8 && w->have == w->plen) {
			w->have = 0;
			w->looked = false;
		}
	}
	return true;
}

/* Moves what is readable from one side to the other (at most max bytes), the host's watched
 * when p is given; the bytes moved, -1 when the pair is done. */
static ssize_t pump(struct proxy *p, int i, int from, int to, size_t max)
{
	uint8_t buf[65536];
	ssize_t n = recv(from, buf, max < sizeof(buf) ? max : sizeof(buf), MSG_DONTWAIT);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
		return -1;
	if (n > 0 && p && !watch_host(p, i, buf, (size_t)n))
		return -1;
	for (ssize_t off = 0; n > 0 && off < n;) {
		ssize_t w = send(to, buf + off, (size_t)(n - off), MSG_NOSIGNAL);
		if (w <= 0)
			return -1;
		off += w;
	}
	return n > 0 ? n : 0;
}

/* Is the host side of pair i held (its Connect not yet due)? */
static bool host_held(struct proxy *p, int i, uint64_t now)
{
	return p->pair_delay[i] && p->host_fwd[i] >= ICREQ_LEN && now < p->held_until[i];
}

static void *proxy_main(void *arg)
{
	struct proxy *p = arg;
	while (!atomic_load(&p->stop)) {
		struct pollfd pfd[1 + 2 * MAX_PAIRS];
		int map[1 + 2 * MAX_PAIRS];
		int n = 0;
		pfd[n] = (struct pollfd){.fd = p->lfd, .events = POLLIN};
		map[n++] = -1;
		pthread_mutex_lock(&p->lock);
		if (atomic_exchange(&p->cut, false))
			for (int i = 0; i < MAX_PAIRS; i++)
				if (p->pairs[i][0] != -1)
					close_pair(p, i);
		bool hold = atomic_load(&p->hold);
		uint64_t now = env_now_ms();
		for (int i = 0; i < MAX_PAIRS && !hold; i++) {
			if (p->pairs[i][0] == -1)
				continue;
			if (p->linger_until[i]) {
				if (now >= p->linger_until[i])
					close_pair(p, i);
				continue;
			}
			for (int k = 0; k < 2; k++) {
				if (k == 0 && host_held(p, i, now))
					continue;
				if (k == 1 && now < p->answer_until[i])
					continue;
				pfd[n] = (struct pollfd){.fd = p->pairs[i][k], .events = POLLIN};
				map[n++] = i * 2 + k;
			}
		}
		pthread_mutex_unlock(&p->lock);
		if (poll(pfd, (nfds_t)n, 10) <= 0)
			continue;
		if (pfd[0].revents & POLLIN) {
			int d = accept4(p->lfd, NULL, NULL, SOCK_CLOEXEC);
			int u = d >= 0 ? connect_up(p->up) : -1;
			pthread_mutex_lock(&p->lock);
			int slot = -1;
			for (int i = 0; i < MAX_PAIRS && slot < 0; i++)
				if (p->pairs[i][0] == -1)
					slot = i;
			if (d >= 0 && u >= 0 && slot >= 0) {
				p->pairs[slot][0] = d;
				p->pairs[slot][1] = u;
				p->pair_delay[slot] = atomic_load(&p->delay_ms);
				p->host_fwd[slot] = 0;
				p->held_until[slot] = 0;
				memset(&p->watch[slot], 0, sizeof(p->watch[slot]));
				p->answer_until[slot] = 0;
				p->disconnected[slot] = false;
				atomic_fetch_add(&p->accepted, 1);
			} else {
				if (d >= 0)
					close(d);
				if (u >= 0)
					close(u);
			}
			pthread_mutex_unlock(&p->lock);
		}
		pthread_mutex_lock(&p->lock);
		for (int j = 1; j < n; j++) {
			if (!pfd[j].revents || atomic_load(&p->hold))
				continue;
			int i = map[j] / 2, k = map[j] % 2;
			if (p->pairs[i][k] != pfd[j].fd)
				continue; /* closed meanwhile */
			if (k == 1 && env_now_ms() < p->answer_until[i])
				continue; /* (a command whose answer is held just passed) */
			bool counting = k == 0 && p->pair_delay[i] && p->host_fwd[i] < ICREQ_LEN;
			ssize_t moved = pump(k == 0 ? p : NULL, i, p->pairs[i][k], p->pairs[i][1 - k],
					     counting ? ICREQ_LEN - p->host_fwd[i] : SIZE_MAX);
			if (moved < 0) {
				unsigned linger = k == 0 && p->disconnected[i] ? atomic_load(&p->linger_ms) : 0;
				if (linger) {
					close(p->pairs[i][0]); /* the host sees its end now */
					p->pairs[i][0] = -2;
					p->linger_until[i] = env_now_ms() + linger;
				} else
					close_pair(p, i);
				continue;
			}
			if (counting) {
				p->host_fwd[i] += (uint32_t)moved;
				if (p->host_fwd[i] >= ICREQ_LEN) { /* the ICReq went: hold what follows */
					p->held_until[i] = env_now_ms() + p->pair_delay[i];
					atomic_fetch_add(&p->delayed, 1);
				}
			}
		}
		pthread_mutex_unlock(&p->lock);
	}
	return NULL;
}

struct proxy *proxy_start(uint16_t port)
{
	struct proxy *p = calloc(1, sizeof(*p));
	p->up = port;
	pthread_mutex_init(&p->lock, NULL);
	for (int i = 0; i < MAX_PAIRS; i++)
		p->pairs[i][0] = p->pairs[i][1] = -1;
	p->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof(a);
	if (bind(p->lfd, (struct sockaddr *)&a, sizeof(a)) || listen(p->lfd, 16) ||
	    getsockname(p->lfd, (struct sockaddr *)&a, &al)) {
		close(p->lfd);
		free(p);
		return NULL;
	}
	p->port = ntohs(a.sin_port);
	pthread_create(&p->thread, NULL, proxy_main, p);
	return p;
}

uint16_t proxy_port(const struct proxy *p)
{
	return p->port;
}

void proxy_cut(struct proxy *p)
{
	atomic_store(&p->cut, true);
	while (atomic_load(&p->cut)) {
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
}

void proxy_hold(struct proxy *p, bool hold)
{
	atomic_store(&p->hold, hold);
}

void proxy_delay_connect(struct proxy *p, unsigned ms)
{
	atomic_store(&p->delay_ms, ms);
}

unsigned proxy_delayed(const struct proxy *p)
{
	return atomic_load(&p->delayed);
}

void proxy_hold_answers(struct proxy *p, unsigned kinds, unsigned ms)
{
	atomic_store(&p->hold_ms, ms);
	atomic_store(&p->hold_what, kinds);
}

void proxy_linger_close(struct proxy *p, unsigned ms)
{
	atomic_store(&p->linger_ms, ms);
}

void proxy_refuse_io_connect(struct proxy *p, unsigned n)
{
	atomic_store(&p->refuse_io, n);
}

unsigned proxy_seen(const struct proxy *p, enum off_poll_kind kind)
{
	return atomic_load(&p->seen[kind]);
}

unsigned proxy_accepted(const struct proxy *p)
{
	return atomic_load(&p->accepted);
}

void proxy_stop(struct proxy *p)
{
	if (!p)
		return;
	atomic_store(&p->stop, true);
	pthread_join(p->thread, NULL);
	for (int i = 0; i < MAX_PAIRS; i++)
		close_pair(p, i);
	close(p->lfd);
	pthread_mutex_destroy(&p->lock);
	free(p);
}
