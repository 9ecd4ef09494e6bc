/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rv: the project's own thin layer over RDMA verbs and connection management, all the NVMe/RDMA
 * host transport and target need of librdmacm and libibverbs, and nothing NVMe. Two
 * implementations fill the same table:
 *   rv_ibv   librdmacm + libibverbs (verbs_ibv.c; built when rdma-core's headers are there),
 *            any RDMA device: a RoCE NIC, soft-RoCE (rdma_rxe), InfiniBand;
 *   rv_fake  in-process (verbs_fake.c): endpoints in one process with Reliable Connected
 *            semantics, for unit tests on machines without RDMA (see its header comment).
 *
 * The model is RC verbs': an endpoint is one connected queue pair with one completion queue
 * for both directions. Work requests carry a caller's 64-bit id and complete in order on
 * the queue pair; a request that fails (a remote access outside a registered region, a
 * message longer than the posted receive) moves both queue pairs to the error state, and
 * every request still posted then completes with RV_WC_FLUSH. RDMA READ and WRITE name remote
 * memory by address and RKEY; local buffers by address and the LKEY of a region that holds them.
 *
 * Connection management is non-blocking: rv_connect starts, rv_ep_event reports what
 * happened (established, rejected with the peer's private data, unreachable, disconnected),
 * rv_wait sleeps on the endpoint's descriptors. A listener hands out connection requests
 * (with the host's private data); the server makes an endpoint for one, posts its receives
 * and then accepts or rejects it.
 *
 * Threads: an endpoint and everything posted on it belong to one thread at a time; distinct
 * endpoints, listeners and regions may be used from different threads.
 */
#ifndef UNVME_FABRICS_RDMA_VERBS_H
#define UNVME_FABRICS_RDMA_VERBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RV_PRIV_MAX 196   /* RDMA CM private data bytes a connect may carry (InfiniBand REQ:
			   * 92 bytes less the CM's own header; RoCE the same) */
#define RV_ADDR_LEN 64

struct rv_ops;

/* A protection domain: regions registered in it are reachable through every endpoint
 * on the same device (the implementation keeps one per device). */
struct rv_pd {
	const struct rv_ops *ops;
};

enum rv_access {
	RV_ACCESS_LOCAL_WRITE  = 1u << 0, /* receives and RDMA READ results land here */
	RV_ACCESS_REMOTE_READ  = 1u << 1, /* the peer may RDMA READ it */
	RV_ACCESS_REMOTE_WRITE = 1u << 2, /* the peer may RDMA WRITE it */
};

/* A registered memory region. */
struct rv_mr {
	const struct rv_ops *ops;
	struct rv_pd *pd;
	void *addr;
	size_t len;
	uint32_t lkey;
	uint32_t rkey;
};

/* Local memory of a work request: len bytes at addr inside the region whose LKEY is lkey. */
struct rv_sge {
	void *addr;
	uint32_t len;
	uint32_t lkey;
};

/* What an endpoint needs of its queue pair. */
struct rv_qp_caps {
	uint32_t send_depth;  /* sends, RDMA READs and WRITEs outstanding at once */
	uint32_t recv_depth;  /* receives posted at once */
	uint32_t max_sge;     /* per send (receives take one) */
	uint8_t rd_atomic;    /* RDMA READs this side may have outstanding as initiator and
			       * accepts as responder (0: the device's limit, capped at 16) */
};

enum rv_op { RV_OP_SEND = 1, RV_OP_RECV, RV_OP_READ, RV_OP_WRITE };

enum rv_wc_status {
	RV_WC_OK = 0,
	RV_WC_FLUSH,         /* the queue pair went to the error state before this ran */
	RV_WC_LOC_LEN,       /* a received message was longer than the receive buffer */
	RV_WC_LOC_PROT,      /* a local buffer outside the region of its LKEY */
	RV_WC_REM_ACCESS,    /* the peer refused the RKEY, the access or the range */
	RV_WC_REM_INV_REQ,   /* the peer could not take the request (its receive was too short) */
	RV_WC_RETRY,         /* the peer did not answer (transport retries exhausted) */
	RV_WC_OTHER,
};

struct rv_wc {
	uint64_t wr_id;
	uint8_t op;          /* enum rv_op; 0 when status is not RV_WC_OK (a device does not say
			      * which kind of request failed: wr_id must tell) */
	uint8_t status;      /* enum rv_wc_status */
	uint32_t byte_len;   /* RV_OP_RECV: bytes received */
	uint32_t raw;        /* the device's own status code, for messages (the fake: 0) */
};

enum rv_event {
	RV_EV_NONE = 0,
	RV_EV_ESTABLISHED,   /* connected: the accept's private data is in the endpoint */
	RV_EV_REJECTED,      /* the peer refused: its reject private data is in the endpoint */
	RV_EV_UNREACHABLE,   /* no answer, no route, no listener */
	RV_EV_DISCONNECTED,  /* the connection ended (either side, or an error) */
};

/* A connected (or connecting) queue pair. */
struct rv_ep {
	const struct rv_ops *ops;
	struct rv_pd *pd;
	struct rv_qp_caps caps;  /* what the queue pair got */
	bool connected;
	/* the private data of the accept or reject that answered rv_connect */
	uint8_t peer_priv[RV_PRIV_MAX];
	uint32_t peer_priv_len;
	char peer[RV_ADDR_LEN];  /* "address:port" of the other side */
	char local[RV_ADDR_LEN]; /* "address:port" of this side */
};

/* A connection request a listener received. */
struct rv_req {
	const struct rv_ops *ops;
	uint8_t priv[RV_PRIV_MAX];
	uint32_t priv_len;       /* as received: the CM may pad it past what the host sent */
	char peer[RV_ADDR_LEN];
	char local[RV_ADDR_LEN]; /* the address the host reached (a listener on 0.0.0.0) */
	struct rv_ep *ep;        /* made by rv_req_ep */
};

struct rv_listener {
	const struct rv_ops *ops;
	char local[RV_ADDR_LEN];
	uint16_t port;           /* bound (the one asked for, or the kernel's pick for "0") */
};

struct rv_ops {
	const char *name;
	/* Client: resolves host:port to a device and makes an unconnected endpoint with its
	 * queue pair (post receives, then rv_connect). timeout_ms bounds the resolution. */
	int (*ep_create)(const struct rv_ops *ops, const char *host, const char *port,
			 const struct rv_qp_caps *caps, int timeout_ms, struct rv_ep **out);
	/* Starts connecting with len bytes of private data; rv_ep_event says how it ended. */
	int (*connect)(struct rv_ep *ep, const void *priv, uint32_t len);
	/* The next connection event of the endpoint, without blocking (RV_EV_NONE: none). */
	enum rv_event (*ep_event)(struct rv_ep *ep);
	/* Starts an orderly disconnect (RV_EV_DISCONNECTED follows on both sides). */
	void (*disconnect)(struct rv_ep *ep);
	void (*ep_destroy)(struct rv_ep *ep);

	/* Server. */
	int (*listen)(const struct rv_ops *ops, const char *addr, const char *port, struct rv_listener **out);
	/* The next connection request, without blocking: 1 with *out, 0 if none, < 0 an error. */
	int (*listen_get)(struct rv_listener *l, struct rv_req **out);
	void (*listen_close)(struct rv_listener *l);
	/* Makes the request's endpoint (req->ep) on the device the request came in on. On
	 * failure req->ep may be set: rv_reject frees it with the request. */
	int (*req_ep)(struct rv_req *req, const struct rv_qp_caps *caps);
	/* Accepts with private data (the endpoint is then req->ep's owner's, also when the
	 * accept fails) or rejects (its endpoint, if any, is destroyed); either frees req. */
	int (*accept)(struct rv_req *req, const void *priv, uint32_t len);
	void (*reject)(struct rv_req *req, const void *priv, uint32_t len);

	/* Memory. */
	int (*reg_mr)(struct rv_pd *pd, void *addr, size_t len, unsigned access, struct rv_mr **out);
	void (*dereg_mr)(struct rv_mr *mr);

	/* Work requests: 0 or a negative errno (-ENOMEM: the queue is full, -EINVAL). */
	int (*post_recv)(struct rv_ep *ep, uint64_t wr_id, const struct rv_sge *sge);
	int (*post_send)(struct rv_ep *ep, uint64_t wr_id, const struct rv_sge *sge, uint32_t nsge);
	int (*post_read)(struct rv_ep *ep, uint64_t wr_id, const struct rv_sge *local,
			 uint64_t raddr, uint32_t rkey);
	int (*post_write)(struct rv_ep *ep, uint64_t wr_id, const struct rv_sge *local,
			  uint64_t raddr, uint32_t rkey);
	/* Up to max completions; the number returned. */
	int (*poll)(struct rv_ep *ep, struct rv_wc *wc, int max);
	/* Sleeps until a completion or a connection event may be there, or timeout_ms. Returns at
	 * once while a connection event waits to be taken (rv_ep_event): callers waiting in a
	 * loop bound it by time, not by rounds. */
	void (*wait)(struct rv_ep *ep, int timeout_ms);
	/* A descriptor that becomes readable when rv_wait would return (a poller's epoll);
	 * after it fires, call rv_wait(ep, 0) to re-arm. */
	int (*fd)(struct rv_ep *ep);
	/* Same for a listener: readable when a request may be there. */
	int (*listen_fd)(struct rv_listener *l);
};

/* The implementations. rv_ibv is NULL in a build without rdma-core. */
extern const struct rv_ops rv_fake;
extern const struct rv_ops *const rv_ibv;

/* The verbs the transports use: rv_ibv unless a test chose otherwise (or $UNVME_RDMA_VERBS=fake
 * in the environment); NULL with no RDMA in this build. */
const struct rv_ops *rv_default(void);
void rv_set_default(const struct rv_ops *ops);

/* Calls through an object's table. */
static inline int rv_connect(struct rv_ep *ep, const void *priv, uint32_t len)
{
	return ep->ops->connect(ep, priv, len);
}
static inline enum rv_event rv_ep_event(struct rv_ep *ep)
{
	return ep->ops->ep_event(ep);
}
static inline void rv_disconnect(struct rv_ep *ep)
{
	ep->ops->disconnect(ep);
}
static inline void rv_ep_destroy(struct rv_ep *ep)
{
	if (ep)
		ep->ops->ep_destroy(ep);
}
static inline int rv_listen_get(struct rv_listener *l, struct rv_req **out)
{
	return l->ops->listen_get(l, out);
}
static inline void rv_listen_close(struct rv_listener *l)
{
	if (l)
		l->ops->listen_close(l);
}
static inline int rv_req_ep(struct rv_req *req, const struct rv_qp_caps *caps)
{
	return req->ops->req_ep(req, caps);
}
static inline int rv_accept(struct rv_req *req, const void *priv, uint32_t len)
{
	return req->ops->accept(req, priv, len);
}
static inline void rv_reject(struct rv_req *req, const void *priv, uint32_t len)
{
	req->ops->reject(req, priv, len);
}
static inline int rv_reg_mr(struct rv_pd *pd, void *addr, size_t len, unsigned access, struct rv_mr **out)
{
	return pd->ops->reg_mr(pd, addr, len, access, out);
}
static inline void rv_dereg_mr(struct rv_mr *mr)
{
	if (mr)
		mr->ops->dereg_mr(mr);
}
static inline int rv_post_recv(struct rv_ep *ep, uint64_t wr_id, const struct rv_sge *sge)
{
	return ep->ops->post_recv(ep, wr_id, sge);
}
static inline int rv_post_send(struct rv_ep *ep, uint64_t wr_id, const struct rv_sge *sge, uint32_t nsge)
{
	return ep->ops->post_send(ep, wr_id, sge, nsge);
}
static inline int rv_post_read(struct rv_ep *ep, uint64_t wr_id, const struct rv_sge *local,
			       uint64_t raddr, uint32_t rkey)
{
	return ep->ops->post_read(ep, wr_id, local, raddr, rkey);
}
static inline int rv_post_write(struct rv_ep *ep, uint64_t wr_id, const struct rv_sge *local,
				uint64_t raddr, uint32_t rkey)
{
	return ep->ops->post_write(ep, wr_id, local, raddr, rkey);
}
static inline int rv_poll(struct rv_ep *ep, struct rv_wc *wc, int max)
{
	return ep->ops->poll(ep, wc, max);
}
static inline void rv_wait(struct rv_ep *ep, int timeout_ms)
{
	ep->ops->wait(ep, timeout_ms);
}

/* Waits (up to timeout_ms) for the outcome of rv_connect: 0 established, -ECONNREFUSED
 * rejected (ep->peer_priv holds the reject's private data), -EHOSTUNREACH, -ECONNRESET,
 * -ETIMEDOUT. */
int rv_connect_wait(struct rv_ep *ep, int timeout_ms);

/* Name of a completion status, for messages. */
const char *rv_wc_status_name(unsigned status);

#endif
