/* SPDX-License-Identifier: BSD-3-Clause */
/* A connected pair of fake endpoints for the NVMe/RDMA unit tests. */
#ifndef UNVME_TEST_RDMA_PAIR_H
#define UNVME_TEST_RDMA_PAIR_H

#include <errno.h>

#include "verbs_fake.h"

struct rdma_pair {
	struct rv_listener *l;
	struct rv_ep *c;     /* the host's */
	struct rv_req *req;  /* the controller's request until accepted */
	struct rv_ep *s;     /* the controller's */
};

/* Listener, client endpoint and a connect carrying priv; the request taken and its endpoint
 * made (not yet accepted). 0 or a negative errno. */
static inline int pair_start(struct rdma_pair *p, const struct rv_qp_caps *caps, const void *priv,
			     uint32_t len)
{
	int rc = rv_fake.listen(&rv_fake, "10.9.9.9", "0", &p->l);
	if (rc)
		return rc;
	char port[8];
	snprintf(port, sizeof(port), "%u", p->l->port);
	if ((rc = rv_fake.ep_create(&rv_fake, "10.9.9.9", port, caps, 1000, &p->c)))
		return rc;
	if ((rc = rv_connect(p->c, priv, len)))
		return rc;
	if (rv_listen_get(p->l, &p->req) != 1)
		return -ENOENT;
	if ((rc = rv_req_ep(p->req, caps)))
		return rc;
	p->s = p->req->ep;
	return 0;
}

static inline int pair_accept(struct rdma_pair *p, const void *priv, uint32_t len)
{
	int rc = rv_accept(p->req, priv, len);
	p->req = NULL;
	if (rc)
		return rc;
	return rv_connect_wait(p->c, 1000);
}

static inline int pair_connect(struct rdma_pair *p, const struct rv_qp_caps *caps)
{
	int rc = pair_start(p, caps, "hi", 2);
	return rc ? rc : pair_accept(p, "ok", 2);
}

static inline void pair_end(struct rdma_pair *p)
{
	rv_ep_destroy(p->c);
	rv_ep_destroy(p->s);
	rv_listen_close(p->l);
	*p = (struct rdma_pair){ 0 };
}

#endif
