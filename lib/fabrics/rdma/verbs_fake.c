/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rv_fake: RDMA verbs inside one process, for unit tests of the NVMe/RDMA queue logic on
 * machines with no RDMA device.
 *
 * The fabric is this process: listeners are found by address and port, a connect queues a
 * request on the listener, accept links the two endpoints. It keeps the Reliable Connected
 * rules the code above must live with:
 *   - the work requests of a queue pair run in the order posted; a SEND waits (RNR retry,
 *     infinite as NVMe/RDMA asks) until the peer has a receive posted, and what was posted
 *     after it waits behind it;
 *   - a SEND longer than the receive it lands in, a local buffer outside the region of its
 *     LKEY, an RKEY that names no region, a region without the remote access asked for, or a
 *     range past its end: the request fails and both queue pairs go to the error state,
 *     where everything posted (and posted later) completes with RV_WC_FLUSH, and both
 *     sides see RV_EV_DISCONNECTED;
 *   - queues have the depths asked for: a post beyond them fails with -ENOMEM.
 * Work runs when it is posted (and a waiting SEND when the peer posts a receive), so data
 * moves before rv_poll returns its completion, as on a device. LKEYs and RKEYs differ, so
 * a key used for the wrong side is caught. One mutex guards the whole fabric; each
 * endpoint's eventfd tells rv_wait (or a poller's epoll) that something arrived.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "verbs_fake.h"

#define FAKE_MAX_SGE 4u

struct fake_mr {
	struct rv_mr base;
	unsigned access;
	struct fake_mr *next;
};

struct fake_wr {
	uint64_t wr_id;
	uint8_t op;
	uint32_t nsge;
	struct rv_sge sge[FAKE_MAX_SGE];
	uint64_t raddr;
	uint32_t rkey;
};

/* A FIFO of work requests or completions with a fixed capacity. */
struct fake_ring {
	void *slots;
	size_t size;     /* bytes per slot */
	uint32_t cap, head, count;
};

enum fake_state { EP_IDLE, EP_CONNECTING, EP_CONNECTED, EP_ERROR };

struct fake_req;

struct fake_ep {
	struct rv_ep base;
	enum fake_state state;
	struct fake_ep *peer;
	struct fake_req *req;     /* client: its request while a listener holds it */
	char target[RV_ADDR_LEN]; /* client: host:port to connect to */
	struct fake_ring rq;      /* posted receives */
	struct fake_ring sq;      /* posted sends, READs, WRITEs not yet run */
	struct fake_ring cq;      /* completions */
	struct fake_ring held;    /* send completions held back (rv_fake_hold_send_wc) */
	bool hold;
	uint8_t ev[8];
	uint32_t ev_head, ev_count;
	int efd;
	struct fake_ep *next;
};

struct fake_listener {
	struct rv_listener base;
	char addr[RV_ADDR_LEN];
	struct fake_req *reqs;    /* FIFO */
	int efd;
	struct fake_listener *next;
};

struct fake_req {
	struct rv_req base;
	struct fake_listener *l;
	struct fake_ep *client;   /* NULL once the client gave up */
	struct fake_req *next;
};

static struct {
	pthread_mutex_t lock;
	struct rv_pd pd;
	struct fake_mr *mrs;
	struct fake_ep *eps;
	struct fake_listener *listeners;
	uint32_t next_key;
	uint16_t next_port;
	uint32_t next_client_port;
} fab = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.pd = { .ops = &rv_fake },
	.next_key = 1,
	.next_port = 40000,
	.next_client_port = 50000,
};

static void signal_fd(int fd)
{
	uint64_t one = 1;
	ssize_t n = write(fd, &one, sizeof(one));
	(void)n;
}

static void drain_fd(int fd)
{
	uint64_t v;
	ssize_t n = read(fd, &v, sizeof(v));
	(void)n;
}

static int ring_init(struct fake_ring *r, uint32_t cap, size_t size)
{
	r->slots = calloc(cap ? cap : 1, size);
	r->size = size;
	r->cap = cap;
	r->head = r->count = 0;
	return r->slots ? 0 : -ENOMEM;
}

static void *ring_at(struct fake_ring *r, uint32_t i)
{
	return (char *)r->slots + (size_t)((r->head + i) % r->cap) * r->size;
}

static void *ring_push(struct fake_ring *r)
{
	if (r->count == r->cap)
		return NULL;
	r->count++;
	return ring_at(r, r->count - 1);
}

static void ring_pop(struct fake_ring *r)
{
	r->head = (r->head + 1) % r->cap;
	r->count--;
}

static void push_event(struct fake_ep *ep, enum rv_event ev)
{
	if (ep->ev_count < sizeof(ep->ev))
		ep->ev[(ep->ev_head + ep->ev_count++) % sizeof(ep->ev)] = (uint8_t)ev;
	signal_fd(ep->efd);
}

static void set_error(struct fake_ep *ep);

static void push_wc(struct fake_ep *ep, uint64_t wr_id, uint8_t op, uint8_t status, uint32_t len)
{
	struct fake_ring *r = (ep->hold && op != RV_OP_RECV) ? &ep->held : &ep->cq;
	struct rv_wc *wc = ring_push(r);
	if (!wc) {
		/* a completion queue overrun: on a device an asynchronous error, the QP fails */
		set_error(ep);
		return;
	}
	/* as on a device, a failed request does not say its kind */
	*wc = (struct rv_wc){ .wr_id = wr_id, .op = status == RV_WC_OK ? op : 0, .status = status,
			      .byte_len = len };
	signal_fd(ep->efd);
}

/* Everything posted completes flushed. */
static void flush(struct fake_ep *ep)
{
	while (ep->sq.count) {
		struct fake_wr *w = ring_at(&ep->sq, 0);
		uint64_t id = w->wr_id;
		uint8_t op = w->op;
		ring_pop(&ep->sq);
		push_wc(ep, id, op, RV_WC_FLUSH, 0);
	}
	while (ep->rq.count) {
		struct fake_wr *w = ring_at(&ep->rq, 0);
		uint64_t id = w->wr_id;
		ring_pop(&ep->rq);
		push_wc(ep, id, RV_OP_RECV, RV_WC_FLUSH, 0);
	}
}

static void set_error(struct fake_ep *ep)
{
	if (ep->state == EP_ERROR)
		return;
	bool was_connected = ep->state == EP_CONNECTED;
	ep->state = EP_ERROR;
	ep->base.connected = false;
	flush(ep);
	if (was_connected)
		push_event(ep, RV_EV_DISCONNECTED);
}

/* A connection fails: both ends. */
static void fail_pair(struct fake_ep *ep)
{
	struct fake_ep *peer = ep->peer;
	set_error(ep);
	if (peer)
		set_error(peer);
}

static struct fake_mr *mr_by_lkey(uint32_t lkey)
{
	for (struct fake_mr *m = fab.mrs; m; m = m->next)
		if (m->base.lkey == lkey)
			return m;
	return NULL;
}

static struct fake_mr *mr_by_rkey(uint32_t rkey)
{
	for (struct fake_mr *m = fab.mrs; m; m = m->next)
		if (m->base.rkey == rkey)
			return m;
	return NULL;
}

static bool in_region(const struct fake_mr *m, uint64_t addr, uint64_t len)
{
	uint64_t lo = (uint64_t)(uintptr_t)m->base.addr;
	return addr >= lo && len <= m->base.len && addr - lo <= m->base.len - len;
}

/* Is sge inside the region of its LKEY (with the access asked for)? */
static bool local_ok(const struct rv_sge *s, unsigned need)
{
	if (!s->len)
		return true;
	struct fake_mr *m = mr_by_lkey(s->lkey);
	return m && (m->access & need) == need && in_region(m, (uint64_t)(uintptr_t)s->addr, s->len);
}

static uint32_t wr_len(const struct fake_wr *w)
{
	uint64_t n = 0;
	for (uint32_t i = 0; i < w->nsge; i++)
		n += w->sge[i].len;
	return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

/* Runs the head of ep's send queue if it can run now. Returns false when it must wait (a
 * SEND with no receive posted at the peer) or the queue pair failed. */
static bool run_head(struct fake_ep *ep)
{
	struct fake_wr w = *(struct fake_wr *)ring_at(&ep->sq, 0);
	struct fake_ep *peer = ep->peer;
	uint32_t len = wr_len(&w);
	for (uint32_t i = 0; i < w.nsge; i++)
		if (!local_ok(&w.sge[i], w.op == RV_OP_READ ? RV_ACCESS_LOCAL_WRITE : 0)) {
			ring_pop(&ep->sq);
			push_wc(ep, w.wr_id, w.op, RV_WC_LOC_PROT, 0);
			fail_pair(ep);
			return false;
		}
	if (w.op == RV_OP_SEND) {
		if (!peer->rq.count)
			return false; /* receiver not ready: retried until it posts a receive */
		struct fake_wr r = *(struct fake_wr *)ring_at(&peer->rq, 0);
		ring_pop(&peer->rq);
		ring_pop(&ep->sq);
		if (len > r.sge[0].len) {
			push_wc(peer, r.wr_id, RV_OP_RECV, RV_WC_LOC_LEN, 0);
			push_wc(ep, w.wr_id, w.op, RV_WC_REM_INV_REQ, 0);
			fail_pair(ep);
			return false;
		}
		if (!local_ok(&r.sge[0], RV_ACCESS_LOCAL_WRITE)) {
			push_wc(peer, r.wr_id, RV_OP_RECV, RV_WC_LOC_PROT, 0);
			push_wc(ep, w.wr_id, w.op, RV_WC_REM_INV_REQ, 0);
			fail_pair(ep);
			return false;
		}
		uint8_t *dst = r.sge[0].addr;
		for (uint32_t i = 0; i < w.nsge; i++) {
			if (w.sge[i].len)
				memcpy(dst, w.sge[i].addr, w.sge[i].len);
			dst += w.sge[i].len;
		}
		push_wc(peer, r.wr_id, RV_OP_RECV, RV_WC_OK, len);
		push_wc(ep, w.wr_id, w.op, RV_WC_OK, 0);
		return true;
	}
	/* RDMA READ / WRITE against the peer's registered memory */
	unsigned need = w.op == RV_OP_READ ? RV_ACCESS_REMOTE_READ : RV_ACCESS_REMOTE_WRITE;
	struct fake_mr *m = mr_by_rkey(w.rkey);
	ring_pop(&ep->sq);
	if (!m || m->base.pd != peer->base.pd || (m->access & need) != need || !in_region(m, w.raddr, len)) {
		push_wc(ep, w.wr_id, w.op, RV_WC_REM_ACCESS, 0);
		fail_pair(ep);
		return false;
	}
	uint8_t *remote = (uint8_t *)(uintptr_t)w.raddr;
	for (uint32_t i = 0; i < w.nsge; i++) {
		if (!w.sge[i].len)
			continue;
		if (w.op == RV_OP_READ)
			memcpy(w.sge[i].addr, remote, w.sge[i].len);
		else
			memcpy(remote, w.sge[i].addr, w.sge[i].len);
		remote += w.sge[i].len;
	}
	push_wc(ep, w.wr_id, w.op, RV_WC_OK, 0);
	return true;
}

static void progress(struct fake_ep *ep)
{
	while (ep->state == EP_CONNECTED && ep->sq.count && run_head(ep))
		;
}

static struct fake_ep *ep_new(const struct rv_qp_caps *caps)
{
	struct fake_ep *ep = calloc(1, sizeof(*ep));
	if (!ep)
		return NULL;
	uint32_t sd = caps->send_depth ? caps->send_depth : 1, rd = caps->recv_depth ? caps->recv_depth : 1;
	ep->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (ep->efd < 0 || ring_init(&ep->rq, rd, sizeof(struct fake_wr)) ||
	    ring_init(&ep->sq, sd, sizeof(struct fake_wr)) ||
	    ring_init(&ep->cq, 2 * (sd + rd), sizeof(struct rv_wc)) ||
	    ring_init(&ep->held, 2 * sd, sizeof(struct rv_wc))) {
		if (ep->efd >= 0)
			close(ep->efd);
		free(ep->rq.slots);
		free(ep->sq.slots);
		free(ep->cq.slots);
		free(ep->held.slots);
		free(ep);
		return NULL;
	}
	ep->base.ops = &rv_fake;
	ep->base.pd = &fab.pd;
	ep->base.caps = *caps;
	ep->base.caps.send_depth = sd;
	ep->base.caps.recv_depth = rd;
	if (!ep->base.caps.max_sge || ep->base.caps.max_sge > FAKE_MAX_SGE)
		ep->base.caps.max_sge = FAKE_MAX_SGE;
	if (!ep->base.caps.rd_atomic)
		ep->base.caps.rd_atomic = 16;
	ep->state = EP_IDLE;
	ep->next = fab.eps;
	fab.eps = ep;
	return ep;
}

static int fake_ep_create(const struct rv_ops *ops, const char *host, const char *port,
			  const struct rv_qp_caps *caps, int timeout_ms, struct rv_ep **out)
{
	(void)ops;
	(void)timeout_ms;
	char *end;
	if (!host || !*host || !port || strtoul(port, &end, 10) > 65535 || *end || end == port)
		return -EINVAL;
	pthread_mutex_lock(&fab.lock);
	struct fake_ep *ep = ep_new(caps);
	if (ep) {
		snprintf(ep->target, sizeof(ep->target), "%s:%s", host, port);
		snprintf(ep->base.peer, sizeof(ep->base.peer), "%s", ep->target);
		snprintf(ep->base.local, sizeof(ep->base.local), "fake:%u", fab.next_client_port++);
	}
	pthread_mutex_unlock(&fab.lock);
	if (!ep)
		return -ENOMEM;
	*out = &ep->base;
	return 0;
}

static struct fake_listener *find_listener(const char *target)
{
	const char *colon = strrchr(target, ':');
	if (!colon)
		return NULL;
	size_t hlen = (size_t)(colon - target);
	unsigned long port = strtoul(colon + 1, NULL, 10);
	for (struct fake_listener *l = fab.listeners; l; l = l->next) {
		if (l->base.port != port)
			continue;
		if (!strcmp(l->addr, "0.0.0.0") || (strlen(l->addr) == hlen && !strncmp(target, l->addr, hlen)))
			return l;
	}
	return NULL;
}

static int fake_connect(struct rv_ep *e, const void *priv, uint32_t len)
{
	struct fake_ep *ep = (struct fake_ep *)e;
	if (len > RV_PRIV_MAX)
		return -EINVAL;
	pthread_mutex_lock(&fab.lock);
	int rc = 0;
	if (ep->state != EP_IDLE) {
		rc = -EISCONN;
	} else {
		struct fake_listener *l = find_listener(ep->target);
		if (!l) {
			/* nobody listens: the CM's reject, without consumer private data */
			ep->base.peer_priv_len = 0;
			ep->state = EP_ERROR;
			push_event(ep, RV_EV_REJECTED);
		} else {
			struct fake_req *r = calloc(1, sizeof(*r));
			if (!r) {
				rc = -ENOMEM;
			} else {
				r->base.ops = &rv_fake;
				memcpy(r->base.priv, priv, len);
				r->base.priv_len = len;
				snprintf(r->base.peer, sizeof(r->base.peer), "%s", ep->base.local);
				snprintf(r->base.local, sizeof(r->base.local), "%s", ep->target);
				r->l = l;
				r->client = ep;
				struct fake_req **pp = &l->reqs;
				while (*pp)
					pp = &(*pp)->next;
				*pp = r;
				ep->req = r;
				ep->state = EP_CONNECTING;
				signal_fd(l->efd);
			}
		}
	}
	pthread_mutex_unlock(&fab.lock);
	return rc;
}

static enum rv_event fake_ep_event(struct rv_ep *e)
{
	struct fake_ep *ep = (struct fake_ep *)e;
	enum rv_event ev = RV_EV_NONE;
	pthread_mutex_lock(&fab.lock);
	if (ep->ev_count) {
		ev = ep->ev[ep->ev_head];
		ep->ev_head = (ep->ev_head + 1) % sizeof(ep->ev);
		ep->ev_count--;
	}
	pthread_mutex_unlock(&fab.lock);
	return ev;
}

static void disconnect_locked(struct fake_ep *ep)
{
	if (ep->state == EP_CONNECTED)
		fail_pair(ep);
}

static void fake_disconnect(struct rv_ep *e)
{
	pthread_mutex_lock(&fab.lock);
	disconnect_locked((struct fake_ep *)e);
	pthread_mutex_unlock(&fab.lock);
}

static void ep_free_locked(struct fake_ep *ep)
{
	disconnect_locked(ep);
	if (ep->peer)
		ep->peer->peer = NULL;
	if (ep->req)
		ep->req->client = NULL; /* a listener still holds the request: it is now void */
	for (struct fake_ep **pp = &fab.eps; *pp; pp = &(*pp)->next)
		if (*pp == ep) {
			*pp = ep->next;
			break;
		}
	close(ep->efd);
	free(ep->rq.slots);
	free(ep->sq.slots);
	free(ep->cq.slots);
	free(ep->held.slots);
	free(ep);
}

static void fake_ep_destroy(struct rv_ep *e)
{
	pthread_mutex_lock(&fab.lock);
	ep_free_locked((struct fake_ep *)e);
	pthread_mutex_unlock(&fab.lock);
}

static int fake_listen(const struct rv_ops *ops, const char *addr, const char *port, struct rv_listener **out)
{
	(void)ops;
	char *end;
	unsigned long p = port ? strtoul(port, &end, 10) : 0;
	if (!addr || !*addr || !port || *end || end == port || p > 65535 || strlen(addr) >= RV_ADDR_LEN)
		return -EINVAL;
	pthread_mutex_lock(&fab.lock);
	if (!p)
		p = fab.next_port++;
	for (struct fake_listener *l = fab.listeners; l; l = l->next)
		if (l->base.port == p && (!strcmp(l->addr, addr) || !strcmp(l->addr, "0.0.0.0") || !strcmp(addr, "0.0.0.0"))) {
			pthread_mutex_unlock(&fab.lock);
			return -EADDRINUSE;
		}
	struct fake_listener *l = calloc(1, sizeof(*l));
	int rc = 0;
	if (!l || (l->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0) {
		free(l);
		rc = -ENOMEM;
	} else {
		l->base.ops = &rv_fake;
		l->base.port = (uint16_t)p;
		snprintf(l->addr, sizeof(l->addr), "%s", addr);
		snprintf(l->base.local, sizeof(l->base.local), "%s:%lu", addr, p);
		l->next = fab.listeners;
		fab.listeners = l;
		*out = &l->base;
	}
	pthread_mutex_unlock(&fab.lock);
	return rc;
}

static int fake_listen_get(struct rv_listener *bl, struct rv_req **out)
{
	struct fake_listener *l = (struct fake_listener *)bl;
	pthread_mutex_lock(&fab.lock);
	drain_fd(l->efd);
	struct fake_req *r;
	/* requests whose client went away before being served are dropped here */
	while ((r = l->reqs) && !r->client) {
		l->reqs = r->next;
		free(r);
	}
	if (r)
		l->reqs = r->next;
	pthread_mutex_unlock(&fab.lock);
	if (!r)
		return 0;
	r->next = NULL;
	r->l = NULL;
	*out = &r->base;
	return 1;
}

static void req_free_locked(struct fake_req *r)
{
	if (r->client)
		r->client->req = NULL;
	if (r->base.ep)
		ep_free_locked((struct fake_ep *)r->base.ep);
	free(r);
}

static void fake_listen_close(struct rv_listener *bl)
{
	struct fake_listener *l = (struct fake_listener *)bl;
	pthread_mutex_lock(&fab.lock);
	for (struct fake_listener **pp = &fab.listeners; *pp; pp = &(*pp)->next)
		if (*pp == l) {
			*pp = l->next;
			break;
		}
	while (l->reqs) {
		struct fake_req *r = l->reqs;
		l->reqs = r->next;
		if (r->client) {
			r->client->state = EP_ERROR;
			r->client->base.peer_priv_len = 0;
			push_event(r->client, RV_EV_REJECTED);
		}
		req_free_locked(r);
	}
	close(l->efd);
	free(l);
	pthread_mutex_unlock(&fab.lock);
}

static int fake_req_ep(struct rv_req *br, const struct rv_qp_caps *caps)
{
	struct fake_req *r = (struct fake_req *)br;
	pthread_mutex_lock(&fab.lock);
	int rc = 0;
	if (br->ep) {
		rc = -EEXIST;
	} else {
		struct fake_ep *ep = ep_new(caps);
		if (!ep) {
			rc = -ENOMEM;
		} else {
			snprintf(ep->base.peer, sizeof(ep->base.peer), "%s", r->base.peer);
			snprintf(ep->base.local, sizeof(ep->base.local), "%s", r->base.local);
			br->ep = &ep->base;
		}
	}
	pthread_mutex_unlock(&fab.lock);
	return rc;
}

static int fake_accept(struct rv_req *br, const void *priv, uint32_t len)
{
	struct fake_req *r = (struct fake_req *)br;
	if (len > RV_PRIV_MAX || !br->ep)
		return -EINVAL;
	pthread_mutex_lock(&fab.lock);
	int rc = 0;
	struct fake_ep *c = r->client, *s = (struct fake_ep *)br->ep;
	if (!c) {
		rc = -ECONNABORTED; /* the host gave up meanwhile */
		r->base.ep = NULL;  /* the endpoint stays the caller's (as rv_ibv's does) */
		req_free_locked(r);
	} else {
		c->req = NULL;
		c->peer = s;
		s->peer = c;
		c->state = s->state = EP_CONNECTED;
		c->base.connected = s->base.connected = true;
		memcpy(c->base.peer_priv, priv, len);
		c->base.peer_priv_len = len;
		push_event(c, RV_EV_ESTABLISHED);
		push_event(s, RV_EV_ESTABLISHED);
		progress(c);
		progress(s);
		free(r);
	}
	pthread_mutex_unlock(&fab.lock);
	return rc;
}

static void fake_reject(struct rv_req *br, const void *priv, uint32_t len)
{
	struct fake_req *r = (struct fake_req *)br;
	pthread_mutex_lock(&fab.lock);
	if (r->client) {
		struct fake_ep *c = r->client;
		if (len > RV_PRIV_MAX)
			len = RV_PRIV_MAX;
		memcpy(c->base.peer_priv, priv, len);
		c->base.peer_priv_len = len;
		c->state = EP_ERROR;
		push_event(c, RV_EV_REJECTED);
	}
	req_free_locked(r);
	pthread_mutex_unlock(&fab.lock);
}

static int fake_reg_mr(struct rv_pd *pd, void *addr, size_t len, unsigned access, struct rv_mr **out)
{
	if (!addr || !len)
		return -EINVAL;
	struct fake_mr *m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	pthread_mutex_lock(&fab.lock);
	uint32_t n = fab.next_key++;
	m->base = (struct rv_mr){ .ops = &rv_fake, .pd = pd, .addr = addr, .len = len,
				  .lkey = 0x10000u + n, .rkey = 0x80000000u | (n * 7919u) };
	m->access = access;
	m->next = fab.mrs;
	fab.mrs = m;
	pthread_mutex_unlock(&fab.lock);
	*out = &m->base;
	return 0;
}

static void fake_dereg_mr(struct rv_mr *bm)
{
	pthread_mutex_lock(&fab.lock);
	for (struct fake_mr **pp = &fab.mrs; *pp; pp = &(*pp)->next)
		if (&(*pp)->base == bm) {
			struct fake_mr *m = *pp;
			*pp = m->next;
			free(m);
			break;
		}
	pthread_mutex_unlock(&fab.lock);
}

static int fake_post_recv(struct rv_ep *e, uint64_t wr_id, const struct rv_sge *sge)
{
	struct fake_ep *ep = (struct fake_ep *)e;
	pthread_mutex_lock(&fab.lock);
	int rc = 0;
	if (ep->state == EP_ERROR) {
		push_wc(ep, wr_id, RV_OP_RECV, RV_WC_FLUSH, 0);
	} else {
		struct fake_wr *w = ring_push(&ep->rq);
		if (!w) {
			rc = -ENOMEM;
		} else {
			*w = (struct fake_wr){ .wr_id = wr_id, .op = RV_OP_RECV, .nsge = 1, .sge = { *sge } };
			if (ep->peer)
				progress(ep->peer);
		}
	}
	pthread_mutex_unlock(&fab.lock);
	return rc;
}

static int post_sq(struct fake_ep *ep, const struct fake_wr *w)
{
	if (w->nsge > ep->base.caps.max_sge)
		return -EINVAL;
	pthread_mutex_lock(&fab.lock);
	int rc = 0;
	if (ep->state == EP_ERROR) {
		push_wc(ep, w->wr_id, w->op, RV_WC_FLUSH, 0);
	} else if (ep->state != EP_CONNECTED) {
		rc = -ENOTCONN;
	} else {
		struct fake_wr *slot = ring_push(&ep->sq);
		if (!slot) {
			rc = -ENOMEM;
		} else {
			*slot = *w;
			progress(ep);
		}
	}
	pthread_mutex_unlock(&fab.lock);
	return rc;
}

static int fake_post_send(struct rv_ep *e, uint64_t wr_id, const struct rv_sge *sge, uint32_t nsge)
{
	struct fake_wr w = { .wr_id = wr_id, .op = RV_OP_SEND, .nsge = nsge };
	if (nsge > FAKE_MAX_SGE)
		return -EINVAL;
	memcpy(w.sge, sge, nsge * sizeof(*sge));
	return post_sq((struct fake_ep *)e, &w);
}

static int fake_post_read(struct rv_ep *e, uint64_t wr_id, const struct rv_sge *local, uint64_t raddr,
			  uint32_t rkey)
{
	struct fake_wr w = { .wr_id = wr_id, .op = RV_OP_READ, .nsge = 1, .sge = { *local },
			     .raddr = raddr, .rkey = rkey };
	return post_sq((struct fake_ep *)e, &w);
}

static int fake_post_write(struct rv_ep *e, uint64_t wr_id, const struct rv_sge *local, uint64_t raddr,
			   uint32_t rkey)
{
	struct fake_wr w = { .wr_id = wr_id, .op = RV_OP_WRITE, .nsge = 1, .sge = { *local },
			     .raddr = raddr, .rkey = rkey };
	return post_sq((struct fake_ep *)e, &w);
}

static int fake_poll(struct rv_ep *e, struct rv_wc *wc, int max)
{
	struct fake_ep *ep = (struct fake_ep *)e;
	int n = 0;
	pthread_mutex_lock(&fab.lock);
	while (n < max && ep->cq.count) {
		wc[n++] = *(struct rv_wc *)ring_at(&ep->cq, 0);
		ring_pop(&ep->cq);
	}
	pthread_mutex_unlock(&fab.lock);
	return n;
}

static void fake_wait(struct rv_ep *e, int timeout_ms)
{
	struct fake_ep *ep = (struct fake_ep *)e;
	pthread_mutex_lock(&fab.lock);
	bool ready = ep->cq.count || ep->ev_count;
	pthread_mutex_unlock(&fab.lock);
	if (!ready && timeout_ms) {
		struct pollfd p = { .fd = ep->efd, .events = POLLIN };
		poll(&p, 1, timeout_ms);
	}
	drain_fd(ep->efd);
}

static int fake_fd(struct rv_ep *e)
{
	return ((struct fake_ep *)e)->efd;
}

static int fake_listen_fd(struct rv_listener *l)
{
	return ((struct fake_listener *)l)->efd;
}

void rv_fake_break(struct rv_ep *e)
{
	pthread_mutex_lock(&fab.lock);
	fail_pair((struct fake_ep *)e);
	pthread_mutex_unlock(&fab.lock);
}

void rv_fake_hold_send_wc(struct rv_ep *e, bool hold)
{
	struct fake_ep *ep = (struct fake_ep *)e;
	pthread_mutex_lock(&fab.lock);
	ep->hold = hold;
	if (!hold) {
		while (ep->held.count) {
			struct rv_wc w = *(struct rv_wc *)ring_at(&ep->held, 0);
			ring_pop(&ep->held);
			push_wc(ep, w.wr_id, w.op, w.status, w.byte_len);
		}
	}
	pthread_mutex_unlock(&fab.lock);
}

unsigned rv_fake_live_mrs(void)
{
	unsigned n = 0;
	pthread_mutex_lock(&fab.lock);
	for (struct fake_mr *m = fab.mrs; m; m = m->next)
		n++;
	pthread_mutex_unlock(&fab.lock);
	return n;
}

unsigned rv_fake_live_eps(void)
{
	unsigned n = 0;
	pthread_mutex_lock(&fab.lock);
	for (struct fake_ep *e = fab.eps; e; e = e->next)
		n++;
	pthread_mutex_unlock(&fab.lock);
	return n;
}

const struct rv_ops rv_fake = {
	.name = "fake",
	.ep_create = fake_ep_create,
	.connect = fake_connect,
	.ep_event = fake_ep_event,
	.disconnect = fake_disconnect,
	.ep_destroy = fake_ep_destroy,
	.listen = fake_listen,
	.listen_get = fake_listen_get,
	.listen_close = fake_listen_close,
	.req_ep = fake_req_ep,
	.accept = fake_accept,
	.reject = fake_reject,
	.reg_mr = fake_reg_mr,
	.dereg_mr = fake_dereg_mr,
	.post_recv = fake_post_recv,
	.post_send = fake_post_send,
	.post_read = fake_post_read,
	.post_write = fake_post_write,
	.poll = fake_poll,
	.wait = fake_wait,
	.fd = fake_fd,
	.listen_fd = fake_listen_fd,
};
