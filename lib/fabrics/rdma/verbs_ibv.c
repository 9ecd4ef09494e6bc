/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rv_ibv: the rv layer on librdmacm (connection management) and libibverbs (queue pairs,
 * completion queues, memory regions). Any RDMA device the CM reaches through an IP address:
 * a RoCE or iWARP NIC, InfiniBand with IPoIB, soft-RoCE (rdma_rxe) over any network device.
 *
 * Each endpoint has its own CM event channel and completion channel, both non-blocking, and an
 * epoll descriptor over the two (rv_ops.fd), so a poller can sleep on many endpoints. One
 * protection domain per device, shared by every endpoint on it (a region registered once is
 * reachable through all of them). Completions are signaled one by one: a send's buffer is
 * the caller's again when its completion is polled.
 *
 * rv_wait arms the completion queue and then polls it once into a small stash before
 * sleeping: a completion that arrived between the caller's last rv_poll and the arming
 * would not raise the channel, and the stash catches it; rv_poll hands the stash out first.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "verbs.h"

#define IBV_STASH 16
#define IBV_RD_ATOMIC_DEFAULT 16u
/* IB CM reject reason "consumer defined": the listener's application refused and its
 * private data is the reject's (anything else is the CM's own: no listener, timeout) */
#define IBV_REJ_CONSUMER_DEFINED 28

static const struct rv_ops ibv_ops;
const struct rv_ops *const rv_ibv = &ibv_ops;

struct ibv_pd_ent {
	struct rv_pd base;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	uint8_t max_rd;       /* RDMA READs a QP of the device may have outstanding */
	int refs;
	struct ibv_pd_ent *next;
};

struct iep {
	struct rv_ep base;
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct ibv_comp_channel *cc;
	struct ibv_cq *cq;
	int epfd;
	struct rv_wc stash[IBV_STASH];
	int stash_n, stash_i;
	/* a passive endpoint: what the host's request asked (reversed to this side's view) */
	uint8_t req_initiator, req_responder;
};

struct ireq {
	struct rv_req base;
	struct rdma_cm_id *id;
	uint8_t initiator, responder;
};

struct ilistener {
	struct rv_listener base;
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
};

struct ibv_mr_ent {
	struct rv_mr base;
	struct ibv_mr *mr;
};

static pthread_mutex_t pd_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ibv_pd_ent *pds;

static struct ibv_pd_ent *pd_get(struct ibv_context *ctx)
{
	pthread_mutex_lock(&pd_lock);
	struct ibv_pd_ent *e;
	for (e = pds; e; e = e->next)
		if (e->ctx == ctx)
			break;
	if (e) {
		e->refs++;
	} else if ((e = calloc(1, sizeof(*e)))) {
		struct ibv_device_attr a;
		e->pd = ibv_alloc_pd(ctx);
		if (!e->pd) {
			free(e);
			e = NULL;
		} else {
			e->base.ops = &ibv_ops;
			e->ctx = ctx;
			e->refs = 1;
			e->max_rd = IBV_RD_ATOMIC_DEFAULT;
			if (!ibv_query_device(ctx, &a)) {
				int m = a.max_qp_rd_atom < a.max_qp_init_rd_atom ? a.max_qp_rd_atom : a.max_qp_init_rd_atom;
				if (m >= 0 && m < (int)e->max_rd)
					e->max_rd = (uint8_t)m;
			}
			e->next = pds;
			pds = e;
		}
	}
	pthread_mutex_unlock(&pd_lock);
	return e;
}

/* A protection domain stays while regions may still name it: it goes with the last
 * endpoint only when no region is registered in it (ibv_dealloc_pd refuses then anyway). */
static void pd_put(struct ibv_pd_ent *e)
{
	if (!e)
		return;
	pthread_mutex_lock(&pd_lock);
	if (--e->refs == 0 && !ibv_dealloc_pd(e->pd)) {
		for (struct ibv_pd_ent **pp = &pds; *pp; pp = &(*pp)->next)
			if (*pp == e) {
				*pp = e->next;
				break;
			}
		free(e);
	}
	pthread_mutex_unlock(&pd_lock);
}

static void addr_str(const struct sockaddr *sa, char *out, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;
	if (sa && sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)sa;
		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		port = ntohs(in->sin_port);
	} else if (sa && sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in = (const void *)sa;
		inet_ntop(AF_INET6, &in->sin6_addr, host, sizeof(host));
		port = ntohs(in->sin6_port);
	}
	snprintf(out, len, "%s:%u", host, port);
}

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	return fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ? -errno : 0;
}

/* Waits for one CM event of the kind wanted on a blocking resolution step. */
static int wait_cm(struct rdma_event_channel *ch, enum rdma_cm_event_type want, int timeout_ms)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	int n = poll(&p, 1, timeout_ms);
	if (n == 0)
		return -ETIMEDOUT;
	if (n < 0)
		return -errno;
	struct rdma_cm_event *ev;
	if (rdma_get_cm_event(ch, &ev))
		return -errno;
	enum rdma_cm_event_type got = ev->event;
	int st = ev->status;
	rdma_ack_cm_event(ev);
	if (got == want)
		return 0;
	if (got == RDMA_CM_EVENT_ADDR_ERROR || got == RDMA_CM_EVENT_ROUTE_ERROR ||
	    got == RDMA_CM_EVENT_UNREACHABLE)
		return st < 0 ? st : -EHOSTUNREACH;
	return -EPROTO;
}

static void ep_free(struct iep *ep)
{
	if (ep->id && ep->id->qp)
		rdma_destroy_qp(ep->id);
	if (ep->cq)
		ibv_destroy_cq(ep->cq);
	if (ep->cc)
		ibv_destroy_comp_channel(ep->cc);
	if (ep->id)
		rdma_destroy_id(ep->id);
	if (ep->ch)
		rdma_destroy_event_channel(ep->ch);
	if (ep->epfd >= 0)
		close(ep->epfd);
	pd_put((struct ibv_pd_ent *)ep->base.pd);
	free(ep);
}

static struct iep *ep_alloc(void)
{
	struct iep *ep = calloc(1, sizeof(*ep));
	if (ep) {
		ep->base.ops = &ibv_ops;
		ep->epfd = -1;
	}
	return ep;
}

/* The queue pair, its completion queue and channel, on the device id resolved to; and the
 * epoll descriptor over the CM and completion channels. */
static int make_qp(struct iep *ep, const struct rv_qp_caps *caps)
{
	struct ibv_pd_ent *pe = pd_get(ep->id->verbs);
	if (!pe)
		return -ENOMEM;
	ep->base.pd = &pe->base;
	ep->base.caps = *caps;
	if (!ep->base.caps.rd_atomic || ep->base.caps.rd_atomic > pe->max_rd)
		ep->base.caps.rd_atomic = pe->max_rd;
	if (!ep->base.caps.max_sge)
		ep->base.caps.max_sge = 1;
	ep->cc = ibv_create_comp_channel(ep->id->verbs);
	if (!ep->cc)
		return -errno;
	int cqe = (int)(caps->send_depth + caps->recv_depth);
	ep->cq = ibv_create_cq(ep->id->verbs, cqe, NULL, ep->cc, 0);
	if (!ep->cq)
		return -errno;
	struct ibv_qp_init_attr a = {
		.send_cq = ep->cq,
		.recv_cq = ep->cq,
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = caps->send_depth, .max_recv_wr = caps->recv_depth,
			 .max_send_sge = ep->base.caps.max_sge, .max_recv_sge = 1 },
	};
	if (rdma_create_qp(ep->id, ((struct ibv_pd_ent *)ep->base.pd)->pd, &a))
		return -errno;
	ep->base.caps.send_depth = a.cap.max_send_wr;
	ep->base.caps.recv_depth = a.cap.max_recv_wr;
	ep->base.caps.max_sge = a.cap.max_send_sge;
	int rc = set_nonblock(ep->cc->fd);
	if (!rc)
		rc = set_nonblock(ep->ch->fd);
	if (rc)
		return rc;
	ep->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (ep->epfd < 0)
		return -errno;
	struct epoll_event e1 = { .events = EPOLLIN, .data.u32 = 1 }, e2 = { .events = EPOLLIN, .data.u32 = 2 };
	if (epoll_ctl(ep->epfd, EPOLL_CTL_ADD, ep->ch->fd, &e1) || epoll_ctl(ep->epfd, EPOLL_CTL_ADD, ep->cc->fd, &e2))
		return -errno;
	if (ibv_req_notify_cq(ep->cq, 0))
		return -EIO;
	return 0;
}

static int ibv_ep_create(const struct rv_ops *ops, const char *host, const char *port,
			 const struct rv_qp_caps *caps, int timeout_ms, struct rv_ep **out)
{
	(void)ops;
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICSERV }, *ai = NULL;
	if (getaddrinfo(host, port, &hints, &ai) || !ai)
		return -EHOSTUNREACH;
	struct iep *ep = ep_alloc();
	int rc = -ENOMEM;
	if (!ep)
		goto out;
	ep->ch = rdma_create_event_channel();
	if (!ep->ch || rdma_create_id(ep->ch, &ep->id, ep, RDMA_PS_TCP)) {
		rc = errno ? -errno : -ENODEV;
		goto out;
	}
	if (rdma_resolve_addr(ep->id, NULL, ai->ai_addr, timeout_ms)) {
		rc = -errno;
		goto out;
	}
	if ((rc = wait_cm(ep->ch, RDMA_CM_EVENT_ADDR_RESOLVED, timeout_ms)))
		goto out;
	if (rdma_resolve_route(ep->id, timeout_ms)) {
		rc = -errno;
		goto out;
	}
	if ((rc = wait_cm(ep->ch, RDMA_CM_EVENT_ROUTE_RESOLVED, timeout_ms)))
		goto out;
	if ((rc = make_qp(ep, caps)))
		goto out;
	addr_str(rdma_get_peer_addr(ep->id), ep->base.peer, sizeof(ep->base.peer));
	addr_str(rdma_get_local_addr(ep->id), ep->base.local, sizeof(ep->base.local));
	*out = &ep->base;
	ep = NULL;
out:
	freeaddrinfo(ai);
	if (ep)
		ep_free(ep);
	return rc;
}

static int ibv_connect(struct rv_ep *e, const void *priv, uint32_t len)
{
	struct iep *ep = (struct iep *)e;
	if (len > RV_PRIV_MAX)
		return -EINVAL;
	struct rdma_conn_param p = {
		.private_data = priv,
		.private_data_len = (uint8_t)len,
		.responder_resources = e->caps.rd_atomic,
		.initiator_depth = e->caps.rd_atomic,
		.retry_count = 7,
		.rnr_retry_count = 7, /* infinite, as NVMe/RDMA 3.1.4 asks */
	};
	return rdma_connect(ep->id, &p) ? -errno : 0;
}

static void take_priv(struct rv_ep *e, const struct rdma_cm_event *ev)
{
	uint32_t n = ev->param.conn.private_data ? ev->param.conn.private_data_len : 0;
	if (n > RV_PRIV_MAX)
		n = RV_PRIV_MAX;
	memcpy(e->peer_priv, ev->param.conn.private_data, n);
	e->peer_priv_len = n;
}

static enum rv_event ibv_ep_event(struct rv_ep *e)
{
	struct iep *ep = (struct iep *)e;
	struct rdma_cm_event *ev;
	while (!rdma_get_cm_event(ep->ch, &ev)) {
		enum rv_event r = RV_EV_NONE;
		switch (ev->event) {
		case RDMA_CM_EVENT_ESTABLISHED:
			if (ev->param.conn.private_data)
				take_priv(e, ev);
			e->connected = true;
			r = RV_EV_ESTABLISHED;
			break;
		case RDMA_CM_EVENT_REJECTED:
			take_priv(e, ev);
			if (ev->status != IBV_REJ_CONSUMER_DEFINED)
				e->peer_priv_len = 0;
			r = RV_EV_REJECTED;
			break;
		case RDMA_CM_EVENT_UNREACHABLE:
		case RDMA_CM_EVENT_CONNECT_ERROR:
		case RDMA_CM_EVENT_ADDR_ERROR:
		case RDMA_CM_EVENT_ROUTE_ERROR:
			r = RV_EV_UNREACHABLE;
			break;
		case RDMA_CM_EVENT_DISCONNECTED:
		case RDMA_CM_EVENT_DEVICE_REMOVAL:
		case RDMA_CM_EVENT_ADDR_CHANGE:
			e->connected = false;
			r = RV_EV_DISCONNECTED;
			break;
		default:
			break;
		}
		rdma_ack_cm_event(ev);
		if (r != RV_EV_NONE)
			return r;
	}
	return RV_EV_NONE;
}

static void ibv_disconnect(struct rv_ep *e)
{
	rdma_disconnect(((struct iep *)e)->id);
}

static void ibv_ep_destroy(struct rv_ep *e)
{
	ep_free((struct iep *)e);
}

static int ibv_listen(const struct rv_ops *ops, const char *addr, const char *port, struct rv_listener **out)
{
	(void)ops;
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV }, *ai = NULL;
	if (getaddrinfo(addr, port, &hints, &ai) || !ai)
		return -EINVAL;
	struct ilistener *l = calloc(1, sizeof(*l));
	int rc = -ENOMEM;
	if (!l)
		goto out;
	l->base.ops = &ibv_ops;
	l->ch = rdma_create_event_channel();
	if (!l->ch || rdma_create_id(l->ch, &l->id, l, RDMA_PS_TCP)) {
		rc = errno ? -errno : -ENODEV;
		goto out;
	}
	if (rdma_bind_addr(l->id, ai->ai_addr) || rdma_listen(l->id, 128)) {
		rc = -errno;
		goto out;
	}
	if ((rc = set_nonblock(l->ch->fd)))
		goto out;
	l->base.port = ntohs(rdma_get_src_port(l->id));
	addr_str(rdma_get_local_addr(l->id), l->base.local, sizeof(l->base.local));
	*out = &l->base;
	l = NULL;
	rc = 0;
out:
	freeaddrinfo(ai);
	if (l) {
		if (l->id)
			rdma_destroy_id(l->id);
		if (l->ch)
			rdma_destroy_event_channel(l->ch);
		free(l);
	}
	return rc;
}

static int ibv_listen_get(struct rv_listener *bl, struct rv_req **out)
{
	struct ilistener *l = (struct ilistener *)bl;
	struct rdma_cm_event *ev;
	while (!rdma_get_cm_event(l->ch, &ev)) {
		if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
			rdma_ack_cm_event(ev);
			continue;
		}
		struct ireq *r = calloc(1, sizeof(*r));
		if (!r) {
			rdma_reject(ev->id, NULL, 0);
			rdma_ack_cm_event(ev);
			rdma_destroy_id(ev->id);
			return -ENOMEM;
		}
		r->base.ops = &ibv_ops;
		r->id = ev->id;
		uint32_t n = ev->param.conn.private_data ? ev->param.conn.private_data_len : 0;
		if (n > RV_PRIV_MAX)
			n = RV_PRIV_MAX;
		memcpy(r->base.priv, ev->param.conn.private_data, n);
		r->base.priv_len = n;
		/* the CM reports a request's values from this side's view (the IB CM swaps the
		 * REQ's fields): initiator_depth is the READs the host takes from us (its
		 * responder resources), responder_resources the READs it will issue to us (its
		 * initiator depth). Linux's host asks for no READs of its own (0): taking the
		 * values unswapped left the target no READ credit and its first RDMA READ
		 * waited forever on rxe. */
		r->initiator = ev->param.conn.initiator_depth;
		r->responder = ev->param.conn.responder_resources;
		addr_str(rdma_get_peer_addr(ev->id), r->base.peer, sizeof(r->base.peer));
		addr_str(rdma_get_local_addr(ev->id), r->base.local, sizeof(r->base.local));
		rdma_ack_cm_event(ev);
		*out = &r->base;
		return 1;
	}
	return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
}

static void ibv_listen_close(struct rv_listener *bl)
{
	struct ilistener *l = (struct ilistener *)bl;
	rdma_destroy_id(l->id);
	rdma_destroy_event_channel(l->ch);
	free(l);
}

static int ibv_req_ep(struct rv_req *br, const struct rv_qp_caps *caps)
{
	struct ireq *r = (struct ireq *)br;
	if (br->ep)
		return -EEXIST;
	struct iep *ep = ep_alloc();
	if (!ep)
		return -ENOMEM;
	ep->ch = rdma_create_event_channel();
	if (!ep->ch) {
		free(ep);
		return -ENOMEM;
	}
	/* the request's id gets its own channel, so its later events are the endpoint's */
	if (rdma_migrate_id(r->id, ep->ch)) {
		int rc = -errno;
		rdma_destroy_event_channel(ep->ch);
		free(ep);
		return rc;
	}
	ep->id = r->id;
	/* the endpoint is the request's from here on, built or not: rv_reject frees it */
	br->ep = &ep->base;
	int rc = make_qp(ep, caps);
	if (rc)
		return rc;
	ep->req_initiator = r->initiator;
	ep->req_responder = r->responder;
	snprintf(ep->base.peer, sizeof(ep->base.peer), "%s", br->peer);
	snprintf(ep->base.local, sizeof(ep->base.local), "%s", br->local);
	return 0;
}

static int ibv_accept(struct rv_req *br, const void *priv, uint32_t len)
{
	struct ireq *r = (struct ireq *)br;
	struct iep *ep = (struct iep *)br->ep;
	if (!ep || len > RV_PRIV_MAX)
		return -EINVAL;
	uint8_t mine = ep->base.caps.rd_atomic;
	struct rdma_conn_param p = {
		.private_data = priv,
		.private_data_len = (uint8_t)len,
		/* READs we take: no more than the host will issue; READs we issue: no more
		 * than the host takes */
		.responder_resources = r->responder < mine ? r->responder : mine,
		.initiator_depth = r->initiator < mine ? r->initiator : mine,
		.rnr_retry_count = 7,
	};
	ep->base.caps.rd_atomic = p.initiator_depth;
	int rc = rdma_accept(ep->id, &p) ? -errno : 0;
	free(r);
	return rc;
}

static void ibv_reject(struct rv_req *br, const void *priv, uint32_t len)
{
	struct ireq *r = (struct ireq *)br;
	rdma_reject(r->id, priv, (uint8_t)(len > RV_PRIV_MAX ? RV_PRIV_MAX : len));
	if (br->ep)
		ep_free((struct iep *)br->ep); /* destroys the id with its endpoint */
	else
		rdma_destroy_id(r->id);
	free(r);
}

static int ibv_reg(struct rv_pd *pd, void *addr, size_t len, unsigned access, struct rv_mr **out)
{
	struct ibv_mr_ent *m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	int fl = 0;
	if (access & RV_ACCESS_LOCAL_WRITE)
		fl |= IBV_ACCESS_LOCAL_WRITE;
	if (access & RV_ACCESS_REMOTE_READ)
		fl |= IBV_ACCESS_REMOTE_READ;
	if (access & RV_ACCESS_REMOTE_WRITE)
		fl |= IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
	struct ibv_pd_ent *pe = (struct ibv_pd_ent *)pd;
	m->mr = ibv_reg_mr(pe->pd, addr, len, fl);
	if (!m->mr) {
		int rc = errno ? -errno : -ENOMEM;
		free(m);
		return rc;
	}
	/* the region keeps its protection domain alive */
	pthread_mutex_lock(&pd_lock);
	pe->refs++;
	pthread_mutex_unlock(&pd_lock);
	m->base = (struct rv_mr){ .ops = &ibv_ops, .pd = pd, .addr = addr, .len = len,
				  .lkey = m->mr->lkey, .rkey = m->mr->rkey };
	*out = &m->base;
	return 0;
}

static void ibv_dereg(struct rv_mr *bm)
{
	struct ibv_mr_ent *m = (struct ibv_mr_ent *)bm;
	ibv_dereg_mr(m->mr);
	pd_put((struct ibv_pd_ent *)bm->pd);
	free(m);
}

static int ibv_post_recv1(struct rv_ep *e, uint64_t wr_id, const struct rv_sge *s)
{
	struct ibv_sge sge = { .addr = (uintptr_t)s->addr, .length = s->len, .lkey = s->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad;
	return -ibv_post_recv(((struct iep *)e)->id->qp, &wr, &bad);
}

static int post(struct rv_ep *e, uint64_t wr_id, enum ibv_wr_opcode op, const struct rv_sge *s,
		uint32_t n, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge[8];
	if (n > 8 || n > e->caps.max_sge)
		return -EINVAL;
	for (uint32_t i = 0; i < n; i++)
		sge[i] = (struct ibv_sge){ .addr = (uintptr_t)s[i].addr, .length = s[i].len, .lkey = s[i].lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = sge, .num_sge = (int)n, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return -ibv_post_send(((struct iep *)e)->id->qp, &wr, &bad);
}

static int ibv_post_send1(struct rv_ep *e, uint64_t wr_id, const struct rv_sge *s, uint32_t n)
{
	return post(e, wr_id, IBV_WR_SEND, s, n, 0, 0);
}

static int ibv_post_read1(struct rv_ep *e, uint64_t wr_id, const struct rv_sge *s, uint64_t raddr, uint32_t rkey)
{
	return post(e, wr_id, IBV_WR_RDMA_READ, s, 1, raddr, rkey);
}

static int ibv_post_write1(struct rv_ep *e, uint64_t wr_id, const struct rv_sge *s, uint64_t raddr, uint32_t rkey)
{
	return post(e, wr_id, IBV_WR_RDMA_WRITE, s, 1, raddr, rkey);
}

static void conv(const struct ibv_wc *w, struct rv_wc *o)
{
	o->wr_id = w->wr_id;
	o->byte_len = w->byte_len;
	o->raw = (uint32_t)w->status;
	switch (w->opcode) {
	case IBV_WC_SEND: o->op = RV_OP_SEND; break;
	case IBV_WC_RECV: o->op = RV_OP_RECV; break;
	case IBV_WC_RDMA_READ: o->op = RV_OP_READ; break;
	case IBV_WC_RDMA_WRITE: o->op = RV_OP_WRITE; break;
	default: o->op = 0; break;
	}
	switch (w->status) {
	case IBV_WC_SUCCESS: o->status = RV_WC_OK; break;
	case IBV_WC_WR_FLUSH_ERR: o->status = RV_WC_FLUSH; break;
	case IBV_WC_LOC_LEN_ERR: o->status = RV_WC_LOC_LEN; break;
	case IBV_WC_LOC_PROT_ERR: o->status = RV_WC_LOC_PROT; break;
	case IBV_WC_REM_ACCESS_ERR: o->status = RV_WC_REM_ACCESS; break;
	case IBV_WC_REM_INV_REQ_ERR: o->status = RV_WC_REM_INV_REQ; break;
	case IBV_WC_RETRY_EXC_ERR:
	case IBV_WC_RNR_RETRY_EXC_ERR: o->status = RV_WC_RETRY; break;
	default: o->status = RV_WC_OTHER; break;
	}
	if (w->status != IBV_WC_SUCCESS)
		o->op = 0; /* a device does not say which kind of request failed */
}

static int ibv_poll1(struct rv_ep *e, struct rv_wc *wc, int max)
{
	struct iep *ep = (struct iep *)e;
	int n = 0;
	while (n < max && ep->stash_i < ep->stash_n)
		wc[n++] = ep->stash[ep->stash_i++];
	while (n < max) {
		struct ibv_wc w[16];
		int want = max - n < 16 ? max - n : 16;
		int got = ibv_poll_cq(ep->cq, want, w);
		if (got <= 0)
			break;
		for (int i = 0; i < got; i++)
			conv(&w[i], &wc[n++]);
		if (got < want)
			break;
	}
	return n;
}

static void ibv_wait1(struct rv_ep *e, int timeout_ms)
{
	struct iep *ep = (struct iep *)e;
	/* take what raised the completion channel, re-arm, then look once more */
	struct ibv_cq *cq;
	void *ctx;
	while (!ibv_get_cq_event(ep->cc, &cq, &ctx))
		ibv_ack_cq_events(cq, 1);
	ibv_req_notify_cq(ep->cq, 0);
	if (ep->stash_i < ep->stash_n)
		return;
	struct ibv_wc w[IBV_STASH];
	int got = ibv_poll_cq(ep->cq, IBV_STASH, w);
	ep->stash_i = ep->stash_n = 0;
	if (got > 0) {
		for (int i = 0; i < got; i++)
			conv(&w[i], &ep->stash[i]);
		ep->stash_n = got;
		return;
	}
	if (timeout_ms) {
		struct epoll_event ev;
		epoll_wait(ep->epfd, &ev, 1, timeout_ms);
	}
}

static int ibv_fd1(struct rv_ep *e)
{
	return ((struct iep *)e)->epfd;
}

static int ibv_listen_fd1(struct rv_listener *l)
{
	return ((struct ilistener *)l)->ch->fd;
}

static const struct rv_ops ibv_ops = {
	.name = "ibverbs",
	.ep_create = ibv_ep_create,
	.connect = ibv_connect,
	.ep_event = ibv_ep_event,
	.disconnect = ibv_disconnect,
	.ep_destroy = ibv_ep_destroy,
	.listen = ibv_listen,
	.listen_get = ibv_listen_get,
	.listen_close = ibv_listen_close,
	.req_ep = ibv_req_ep,
	.accept = ibv_accept,
	.reject = ibv_reject,
	.reg_mr = ibv_reg,
	.dereg_mr = ibv_dereg,
	.post_recv = ibv_post_recv1,
	.post_send = ibv_post_send1,
	.post_read = ibv_post_read1,
	.post_write = ibv_post_write1,
	.poll = ibv_poll1,
	.wait = ibv_wait1,
	.fd = ibv_fd1,
	.listen_fd = ibv_listen_fd1,
};
