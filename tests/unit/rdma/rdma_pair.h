/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A connected pair of endpoints for the NVMe/RDMA unit tests. On the fake verbs by default;
 * with RDMA_TEST_VERBS=ibv and RDMA_TEST_ADDR=<an address of an RDMA device> the same tests
 * run on librdmacm/libibverbs (the QEMU guest runs them on soft-RoCE: tests/qemu/rdma_guest.sh),
 * and the ones that need the fake's controls say they are skipped.
 */
#ifndef UNVME_TEST_RDMA_PAIR_H
#define UNVME_TEST_RDMA_PAIR_H

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verbs_fake.h"

static inline const struct rv_ops *pair_verbs(void)
{
	const char *v = getenv("RDMA_TEST_VERBS");
	return v && !strcmp(v, "ibv") ? rv_ibv : &rv_fake;
}

static inline const char *pair_addr(void)
{
	const char *a = getenv("RDMA_TEST_ADDR");
	return pair_verbs() != &rv_fake && a ? a : "10.9.9.9";
}

static inline bool pair_is_fake(void)
{
	return pair_verbs() == &rv_fake;
}

/* The test needs the fake's controls (or its exact event sequence). */
#define FAKE_ONLY() SKIP_UNLESS(pair_is_fake(), "needs the fake verbs' controls")

/* Up to max completions of ep within 5 seconds (a device's completions take their time; a
 * receiver-not-ready retry waits for its timer). */
static inline int pair_poll(struct rv_ep *ep, struct rv_wc *wc, int max)
{
	int n = 0;
	uint64_t end = test_now_ms() + (pair_is_fake() ? 0 : 5000);
	for (int i = 0; n < max; i++) {
		n += rv_poll(ep, wc + n, max - n);
		if (n >= max || (pair_is_fake() && i > 3) || (!pair_is_fake() && test_now_ms() > end))
			break;
		rv_wait(ep, pair_is_fake() ? 0 : 1);
	}
	return n;
}

/* The next connection event of ep within 5 seconds. */
static inline enum rv_event pair_event(struct rv_ep *ep)
{
	enum rv_event ev = RV_EV_NONE;
	uint64_t end = test_now_ms() + (pair_is_fake() ? 0 : 5000);
	while ((ev = rv_ep_event(ep)) == RV_EV_NONE && test_now_ms() <= end)
		test_sleep_ms(1);
	return ev;
}

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
	const struct rv_ops *v = pair_verbs();
	if (!v)
		return -ENODEV;
	int rc = v->listen(v, pair_addr(), "0", &p->l);
	if (rc)
		return rc;
	char port[8];
	snprintf(port, sizeof(port), "%u", p->l->port);
	if ((rc = v->ep_create(v, pair_addr(), port, caps, 2000, &p->c)))
		return rc;
	if ((rc = rv_connect(p->c, priv, len)))
		return rc;
	for (int i = 0; i < 2000 && (rc = rv_listen_get(p->l, &p->req)) == 0; i++) {
		struct pollfd pf = { .fd = v->listen_fd(p->l), .events = POLLIN };
		poll(&pf, 1, 1);
	}
	if (rc != 1)
		return rc < 0 ? rc : -ETIMEDOUT;
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
	rc = rv_connect_wait(p->c, 2000);
	/* The controller's side too: until its CM has the host's RTU, a disconnect there sends
	 * no DREQ and the host never hears of it (soft-RoCE in a loaded TCG guest was that slow:
	 * the disconnect test's host waited in vain) */
	if (rc == 0)
		rc = rv_connect_wait(p->s, 2000);
	return rc;
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
