/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: NVMe/RDMA as a lying peer sends it (lib/fabrics/rdma). The first byte
 * picks what is fuzzed, the rest is the peer's:
 *   0  the parsers alone: RDMA CM request / accept / reject private data, a command capsule
 *      under rules taken from the input, a response capsule;
 *   1  the controller's queue engine (target_queue.c) on the fake verbs: the input is a run
 *      of messages ([u16 length][bytes]) a host sends; the engine parses each as a capsule,
 *      answers, fetches keyed data from the host's registered buffer (a key or range the
 *      host lies about ends the queue, as on a device) and writes read data back;
 *   2  the host's queue engine (host_queue.c): eight commands are in flight and the input is
 *      a run of messages the controller sends as responses;
 *   3  whole sessions of the target's NVMe/RDMA wire (lib/target/tgt_rdma.c) with lying
 *      hosts (fuzz_rdma_target.c).
 * Nothing may crash, leak or touch memory outside the registered regions.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm_priv.h"
#include "host_queue.h"
#include "target_queue.h"
#include "verbs_fake.h"
#include "fuzz_rdma_target.h"

#define RAM 65536u
#define MSG_MAX 9000u

static const struct rv_qp_caps caps = { .send_depth = 32, .recv_depth = 16, .max_sge = 1 };

struct pair {
	struct rv_listener *l;
	struct rv_ep *c, *s;
	struct rv_req *req;
};

static int pair_up(struct pair *p)
{
	if (rv_fake.listen(&rv_fake, "10.1.1.1", "0", &p->l))
		return -1;
	char port[8];
	snprintf(port, sizeof(port), "%u", p->l->port);
	if (rv_fake.ep_create(&rv_fake, "10.1.1.1", port, &caps, 100, &p->c) || rv_connect(p->c, "x", 1) ||
	    rv_listen_get(p->l, &p->req) != 1 || rv_req_ep(p->req, &caps))
		return -1;
	p->s = p->req->ep;
	return 0;
}

static void pair_down(struct pair *p)
{
	rv_ep_destroy(p->c);
	rv_ep_destroy(p->s);
	rv_listen_close(p->l);
}

/* The next [u16 length][bytes] message of the input, or false at its end. */
static bool next_msg(const uint8_t **d, size_t *n, const uint8_t **msg, uint32_t *len)
{
	if (*n < 2)
		return false;
	uint32_t l = (uint32_t)((*d)[0] | (*d)[1] << 8) % MSG_MAX;
	*d += 2;
	*n -= 2;
	if (l > *n)
		l = (uint32_t)*n;
	*msg = *d;
	*len = l;
	*d += l;
	*n -= l;
	return true;
}

static void parsers(const uint8_t *d, size_t n)
{
	struct nvrdma_cm_limits lim = { .max_qid = 8, .admin_depth = 32, .io_depth = 128 };
	struct nvrdma_cm_params cp;
	uint16_t crq;
	nvrdma_cm_req_check(d, (uint32_t)n, &lim, &cp);
	nvrdma_cm_rep_parse(d, (uint32_t)n, &crq);
	nvrdma_cm_rej_parse(d, (uint32_t)n);
	struct nvme_cqe cqe;
	nvrdma_rsp_parse(d, (uint32_t)n, &cqe);
	if (n < 3)
		return;
	struct nvrdma_capsule_rules r = { .admin = d[0] & 1, .icd_max = (uint32_t)d[1] << 6,
					  .max_data = (uint32_t)d[2] << 12 };
	struct nvrdma_capsule c;
	uint16_t st;
	const char *why;
	if (nvrdma_capsule_parse(d + 3, (uint32_t)(n - 3), &r, &c, &st, &why) == NVRDMA_OK &&
	    c.kind == NVRDMA_DATA_INCAPSULE) {
		/* the data it points at must lie inside what was received */
		volatile uint8_t sum = 0;
		for (uint32_t i = 0; i < c.len; i++)
			sum = (uint8_t)(sum + c.icd[i]);
	}
}

/* ---- mode 1: the controller's engine ---- */

struct ctl {
	uint8_t *ram;
	uint8_t *bufs;
	struct rv_mr *mr;
};

static void ctl_capsule(void *arg, struct nvrdma_tq_cmd *cmd)
{
	struct ctl *c = arg;
	uint8_t *buf = c->bufs + (size_t)cmd->slot * RAM;
	struct nvme_cqe cqe = { 0 };
	if (cmd->cap.kind == NVRDMA_DATA_KEYED && cmd->cap.len <= RAM && (cmd->cap.sqe.opc & 1)) {
		if (nvrdma_tq_fetch(cmd, buf, c->mr))
			nvrdma_tq_drop(cmd);
		return;
	}
	uint32_t len = 0;
	if (cmd->cap.kind == NVRDMA_DATA_KEYED && (cmd->cap.sqe.opc & 2))
		len = cmd->cap.len <= RAM ? cmd->cap.len : RAM;
	if (cmd->cap.kind == NVRDMA_DATA_INCAPSULE)
		memcpy(c->ram, cmd->cap.icd, cmd->cap.len <= RAM ? cmd->cap.len : RAM);
	memcpy(buf, c->ram, len);
	if (nvrdma_tq_respond(cmd, &cqe, buf, len, c->mr))
		nvrdma_tq_drop(cmd);
}

static void ctl_data_in(void *arg, struct nvrdma_tq_cmd *cmd, int status)
{
	struct ctl *c = arg;
	struct nvme_cqe cqe = { 0 };
	if (status || nvrdma_tq_respond(cmd, &cqe, NULL, 0, c->mr))
		nvrdma_tq_drop(cmd);
}

static void controller(const uint8_t *d, size_t n)
{
	struct pair p = { 0 };
	struct ctl c = { .ram = calloc(1, RAM), .bufs = calloc(16, RAM) };
	static uint8_t host[RAM]; /* the host's registered buffer: keyed SGLs may name it */
	static uint8_t msgs[16][MSG_MAX];
	struct rv_mr *hmr = NULL, *mmr = NULL;
	struct nvrdma_tq q = { 0 };
	if (!c.ram || !c.bufs || pair_up(&p))
		goto out;
	rv_reg_mr(p.s->pd, c.bufs, 16 * (size_t)RAM, RV_ACCESS_LOCAL_WRITE, &c.mr);
	rv_reg_mr(p.c->pd, host, sizeof(host), RV_ACCESS_LOCAL_WRITE | RV_ACCESS_REMOTE_READ |
		  RV_ACCESS_REMOTE_WRITE, &hmr);
	rv_reg_mr(p.c->pd, msgs, sizeof(msgs), 0, &mmr);
	struct nvrdma_tq_cfg cfg = { .qid = 1, .depth = 16,
				     .rules = { .admin = n & 1, .icd_max = 4096, .max_data = RAM },
				     .capsule = ctl_capsule, .data_in = ctl_data_in, .arg = &c };
	if (!c.mr || !hmr || !mmr || nvrdma_tq_init(&q, p.s, &cfg))
		goto out;
	if (rv_accept(p.req, "y", 1)) {
		p.req = NULL;
		p.s = NULL;
		goto out;
	}
	p.req = NULL;
	/* the host takes whatever comes back */
	static uint8_t rsp[16][64];
	struct rv_mr *rmr = NULL;
	rv_reg_mr(p.c->pd, rsp, sizeof(rsp), RV_ACCESS_LOCAL_WRITE, &rmr);
	const uint8_t *msg;
	uint32_t len;
	unsigned i = 0;
	while (rmr && next_msg(&d, &n, &msg, &len) && !q.dead) {
		/* the message may name the host's buffer in its keyed SGL: point a keyed
		 * descriptor there when the input asks (byte 39 = 0x40, address taken as an
		 * offset into the buffer), so fetches and writes that succeed are reached too */
		uint8_t *m = msgs[i % 16];
		memcpy(m, msg, len);
		if (len >= 64 && m[39] == 0x40) {
			uint64_t off;
			memcpy(&off, m + 24, 8);
			off = (uint64_t)(uintptr_t)host + off % RAM;
			memcpy(m + 24, &off, 8);
			memcpy(m + 35, &hmr->rkey, 4);
		}
		struct rv_sge r = { rsp[i % 16], 64, rmr->lkey };
		rv_post_recv(p.c, i, &r);
		struct rv_sge s = { m, len, mmr->lkey };
		rv_post_send(p.c, 1000 + i, &s, 1);
		for (int k = 0; k < 3; k++)
			nvrdma_tq_poll(&q);
		struct rv_wc wc[32];
		while (rv_poll(p.c, wc, 32) > 0)
			;
		i++;
	}
	rv_dereg_mr(rmr);
out:
	if (q.mem)
		nvrdma_tq_fini(&q);
	rv_dereg_mr(c.mr);
	rv_dereg_mr(hmr);
	rv_dereg_mr(mmr);
	if (p.req) {
		rv_reject(p.req, NULL, 0); /* frees its endpoint too */
		p.s = NULL;
	}
	pair_down(&p);
	free(c.ram);
	free(c.bufs);
}

/* ---- mode 2: the host's engine ---- */

static void host_done(void *arg, uint16_t cid, const struct nvme_cqe *cqe)
{
	(void)arg;
	(void)cid;
	(void)cqe;
}

static void host(const uint8_t *d, size_t n)
{
	struct pair p = { 0 };
	static uint8_t bufs[8][4096];
	static uint8_t msgs[16][MSG_MAX];
	struct rv_mr *mmr = NULL;
	struct nvrdma_hq q = { 0 };
	if (pair_up(&p))
		goto out;
	struct nvrdma_hq_cfg cfg = { .qid = 1, .depth = 8, .hrqsize = 16, .icd_max = 1024, .done = host_done };
	if (nvrdma_hq_init(&q, p.c, &cfg))
		goto out;
	rv_reg_mr(p.s->pd, msgs, sizeof(msgs), 0, &mmr);
	static uint8_t caps_in[16][64 + 1024];
	struct rv_mr *cmr = NULL;
	rv_reg_mr(p.s->pd, caps_in, sizeof(caps_in), RV_ACCESS_LOCAL_WRITE, &cmr);
	for (unsigned i = 0; cmr && i < 16; i++) {
		struct rv_sge r = { caps_in[i], sizeof(caps_in[i]), cmr->lkey };
		rv_post_recv(p.s, i, &r);
	}
	if (rv_accept(p.req, "y", 1) || !mmr || !cmr) {
		p.req = NULL;
		p.s = NULL;
		rv_dereg_mr(cmr);
		goto out;
	}
	p.req = NULL;
	for (uint16_t cid = 0; cid < 8; cid++) {
		struct nvme_sqe s = { .opc = (uint8_t)(cid & 1 ? 1 : 2), .cid = cid };
		nvrdma_hq_submit(&q, &s, bufs[cid], (cid + 1) * 512u, cid & 1);
	}
	const uint8_t *msg;
	uint32_t len;
	unsigned i = 0;
	while (next_msg(&d, &n, &msg, &len) && !q.dead) {
		memcpy(msgs[i % 16], msg, len);
		struct rv_sge s = { msgs[i % 16], len, mmr->lkey };
		rv_post_send(p.s, i, &s, 1);
		nvrdma_hq_poll(&q);
		struct rv_wc wc[32];
		while (rv_poll(p.s, wc, 32) > 0)
			;
		i++;
	}
	nvrdma_hq_check_events(&q);
	nvrdma_hq_abort_all(&q, 0x8000);
	rv_dereg_mr(cmr);
out:
	if (q.mem)
		nvrdma_hq_fini(&q);
	rv_dereg_mr(mmr);
	if (p.req) {
		rv_reject(p.req, NULL, 0);
		p.s = NULL;
	}
	pair_down(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	switch (data[0] % 4) {
	case 0: parsers(data + 1, size - 1); break;
	case 1: controller(data + 1, size - 1); break;
	case 3: fuzz_rdma_target_session(data + 1, size - 1); break;
	default: host(data + 1, size - 1); break;
	}
	return 0;
}
