/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_rdma mode 3: NVMe/RDMA sessions of the whole target (lib/target/tgt_rdma.c and all it
 * shares with NVMe/TCP: Connect, allow-lists, controllers, admin and I/O commands, buffers) on
 * the fake verbs, driven by lying hosts.
 *
 * One target (started once: subsystem NQN_A with a 64 KiB namespace, host HOST_A allowed)
 * whose RDMA connections are made here from connection requests (tgt_rdma_conn_accept) and
 * serviced as a poller services them (tgt_conn_service), with up to four hosts at a time. The
 * input is a run of operations, each a byte and its arguments:
 *   0 open: a connection request with private data built from the input (queue id, sizes) or
 *     taken raw from it;
 *   1 a raw capsule: [u16 length][bytes] sent as the host's message;
 *   2 Connect: admin or I/O queue, as HOST_A or a stranger, to NQN_A, discovery or an unknown
 *     subsystem, its data where a keyed SGL says (the right key, or a lie about key, address
 *     or length);
 *   3 a command: the SQE from the input, SGL1 made keyed over the host's memory (the right
 *     key or not), in-capsule with data from the input, or left as the input has it;
 *   4 Property Set CC.EN (a controller that serves commands);
 *   5 time passes (keep alive, the Connect deadline);
 *   6 a host disconnects or vanishes.
 * Every operation is followed by the target's servicing and the host reaping what came.
 * The oracle, beyond no crash, leak or sanitizer report: every message a host receives is one
 * 16-byte response; after the input, with every connection gone, no controller is left in the
 * subsystem, every data buffer the target counts is back in the pool, and the fake verbs hold
 * no endpoint or region more than before. FUZZ_RDMA_VERBOSE=1 in the environment prints the
 * operations, the responses and the target's log (for writing seeds).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unvme/spec/fabrics.h"
#include "unvme/spec/regs.h"
#include "unvme/spec/rdma.h"
#include "lib/common/clock.h"
#include "lib/fabrics/rdma/cm_priv.h"
#include "lib/fabrics/rdma/verbs_fake.h"
#include "lib/target/tgt.h"

#include "fuzz_rdma_target.h"

#define NQN_A "nqn.2024-01.io.unvme.fuzz:rdma-a"
#define HOST_A "nqn.2014-08.io.unvme.fuzz:rdma-host-a"
#define HOSTS 4
#define HMEM 65536u
#define NRECV 32u
#define MSG 9000u

struct fhost {
	struct rv_ep *ep;
	struct tgt_conn *c;      /* the target's side, NULL when refused or gone */
	uint8_t *mem;            /* what keyed SGLs name */
	uint8_t *msg;            /* the capsule being sent */
	uint8_t (*rsp)[64];      /* receive buffers */
	struct rv_mr *mem_mr, *msg_mr, *rsp_mr;
	uint16_t cid;
};

static struct unvme_target *target;
static struct tgt_poller poller;
static struct rv_listener *listener;
static char port[8];
static unsigned base_eps, base_mrs;
static struct fhost hosts[HOSTS];
static uint16_t last_cntlid;   /* the controller the last admin Connect made: I/O queues join it */

static void fail(const char *what)
{
	fprintf(stderr, "fuzz_rdma target session: %s\n", what);
	abort();
}

static bool target_up(void)
{
	if (target)
		return true;
	setenv("UNVME_QUIET", "1", 1);
	setenv("UNVME_MP", "0", 1); /* the device in this process, not a device process */
	rv_set_default(&rv_fake);
	char err[512];
	struct tgt_config *cfg = tgt_config_new();
	tgt_config_set_quiet(cfg, getenv("FUZZ_RDMA_VERBOSE") == NULL);
	int si = tgt_config_add_subsys(cfg, NQN_A, err, sizeof(err));
	int rc = si < 0 ? si : tgt_config_add_listen(cfg, "127.0.0.1:0", err, sizeof(err));
	if (!rc)
		rc = tgt_config_add_ns(cfg, si, "emu://fuzz-rdma?ns=mem:64K:512", 0, 0, err, sizeof(err));
	if (!rc)
		rc = tgt_config_add_host(cfg, si, HOST_A, NULL, NULL, NULL, NULL, err, sizeof(err));
	if (!rc)
		tgt_config_set_discovery(cfg, 1);
	if (!rc && unvme_target_start(cfg, &target, err, sizeof(err)) == 0) {
		poller.t = target;
		poller.pool.limit = 4u << 20;
	} else {
		if (!target)
			fprintf(stderr, "target: %s\n", err);
		return false;
	}
	if (rv_fake.listen(&rv_fake, "10.4.4.4", "0", &listener))
		return false;
	snprintf(port, sizeof(port), "%u", listener->port);
	base_eps = rv_fake_live_eps();
	base_mrs = rv_fake_live_mrs();
	return true;
}

/* ---- input ---- */

struct in {
	const uint8_t *d;
	size_t n;
};

static uint8_t u8(struct in *in)
{
	if (!in->n)
		return 0;
	in->n--;
	return *in->d++;
}

static uint16_t u16(struct in *in)
{
	return (uint16_t)(u8(in) | u8(in) << 8);
}

static uint32_t u32(struct in *in)
{
	return (uint32_t)u16(in) | (uint32_t)u16(in) << 16;
}

static uint32_t take(struct in *in, void *to, uint32_t want)
{
	uint32_t n = want < in->n ? want : (uint32_t)in->n;
	memcpy(to, in->d, n);
	in->d += n;
	in->n -= n;
	return n;
}

/* ---- hosts ---- */

static void host_gone(struct fhost *h)
{
	rv_dereg_mr(h->mem_mr);
	rv_dereg_mr(h->msg_mr);
	rv_dereg_mr(h->rsp_mr);
	rv_ep_destroy(h->ep);
	free(h->mem);
	free(h->msg);
	free(h->rsp);
	struct tgt_conn *c = h->c;
	memset(h, 0, sizeof(*h));
	h->c = c; /* the target notices on its own */
}

/* The host takes what came: every message it receives must be one response. */
static void host_reap(struct fhost *h)
{
	struct rv_wc wc[32];
	int n;
	while (h->ep && (n = rv_poll(h->ep, wc, 32)) > 0) {
		for (int i = 0; i < n; i++) {
			if (wc[i].status != RV_WC_OK || wc[i].wr_id >= NRECV)
				continue;
			if (wc[i].byte_len != NVME_RDMA_RSP_CAPSULE)
				fail("a message to the host that is not a 16-byte response");
			struct nvme_cqe cqe;
			memcpy(&cqe, h->rsp[wc[i].wr_id], sizeof(cqe));
			if (getenv("FUZZ_RDMA_VERBOSE"))
				fprintf(stderr, "  host %d: response cid %u sq %u status %04x\n", (int)(h - hosts),
					cqe.cid, cqe.sqid, cqe.status);
			/* an admin Connect's answer names the controller for I/O queues */
			if (cqe.sqid == 0 && !(cqe.status >> 1) && cqe.cid == 0xc0)
				last_cntlid = (uint16_t)cqe.dw0;
			struct rv_sge s = {h->rsp[wc[i].wr_id], 64, h->rsp_mr->lkey};
			rv_post_recv(h->ep, wc[i].wr_id, &s);
		}
	}
	while (h->ep && rv_ep_event(h->ep) != RV_EV_NONE)
		;
}

/* The target's servicing as its poller does it, then the hosts reap; a connection that ended is
 * freed (as a poller drops it). */
static void service(void)
{
	for (int round = 0; round < 4; round++) {
		for (int i = 0; i < HOSTS; i++) {
			struct tgt_conn *c = hosts[i].c;
			if (!c)
				continue;
			if (!c->closing)
				tgt_conn_service(c);
			if (c->closing) {
				tgt_conn_service(c);
				tgt_conn_free(c);
				hosts[i].c = NULL;
			}
		}
		for (int i = 0; i < HOSTS; i++)
			host_reap(&hosts[i]);
	}
}

static void host_open(struct fhost *h, struct in *in)
{
	if (h->ep)
		host_gone(h);
	if (h->c) {
		tgt_conn_close(h->c, "replaced");
		service();
	}
	struct rv_qp_caps caps = {.send_depth = 64, .recv_depth = NRECV, .max_sge = 1};
	h->mem = calloc(1, HMEM);
	h->msg = calloc(1, MSG);
	h->rsp = calloc(NRECV, 64);
	if (!h->mem || !h->msg || !h->rsp || rv_fake.ep_create(&rv_fake, "10.4.4.4", port, &caps, 100, &h->ep) ||
	    rv_reg_mr(h->ep->pd, h->mem, HMEM, RV_ACCESS_LOCAL_WRITE | RV_ACCESS_REMOTE_READ | RV_ACCESS_REMOTE_WRITE,
		      &h->mem_mr) ||
	    rv_reg_mr(h->ep->pd, h->msg, MSG, 0, &h->msg_mr) ||
	    rv_reg_mr(h->ep->pd, h->rsp, NRECV * 64, RV_ACCESS_LOCAL_WRITE, &h->rsp_mr)) {
		host_gone(h);
		return;
	}
	for (uint32_t i = 0; i < NRECV; i++) {
		struct rv_sge s = {h->rsp[i], 64, h->rsp_mr->lkey};
		rv_post_recv(h->ep, i, &s);
	}
	uint8_t priv[64];
	uint32_t plen;
	uint8_t how = u8(in);
	if (how & 1) { /* raw private data */
		plen = u8(in) % sizeof(priv);
		plen = take(in, priv, plen);
	} else {
		struct nvme_rdma_cm_req r;
		uint16_t qid = u8(in) % 4, hsq = u8(in);
		nvrdma_cm_req_build(&r, qid, (uint16_t)(hsq + 1), hsq, 0xffff);
		memcpy(priv, &r, sizeof(r));
		plen = sizeof(r);
	}
	struct rv_req *req;
	if (rv_connect(h->ep, priv, plen) || rv_listen_get(listener, &req) != 1) {
		host_gone(h);
		return;
	}
	h->c = tgt_rdma_conn_accept(target, req);
	if (h->c)
		h->c->p = &poller;
}

static void host_send(struct fhost *h, uint32_t len)
{
	if (!h->ep)
		return;
	struct rv_sge s = {h->msg, len, h->msg_mr->lkey};
	rv_post_send(h->ep, 1000 + h->cid++, &s, 1);
}

/* SGL1 of the capsule in h->msg: keyed over the host's memory (right or lying) or in-capsule. */
static uint32_t sgl(struct fhost *h, struct in *in, uint8_t mode, uint32_t len)
{
	struct nvme_sgl_keyed *k = (void *)(h->msg + 24);
	h->msg[1] = (uint8_t)((h->msg[1] & ~0xc0u) | 0x40u); /* PSDT: SGL */
	if (mode % 3 == 2) { /* in-capsule: the data follows the SQE */
		len %= MSG - 64;
		memset(h->msg + 24, 0, 16);
		uint32_t l = len;
		memcpy(h->msg + 32, &l, 4);
		h->msg[39] = NVME_SGL_INCAPSULE;
		return 64 + take(in, h->msg + 64, len);
	}
	uint32_t off = u16(in) % HMEM;
	uint64_t addr = (uint64_t)(uintptr_t)h->mem + off;
	uint32_t rkey = h->mem_mr->rkey;
	if (mode % 3 == 1) { /* a lie: another key, or an address outside the region */
		if (u8(in) & 1)
			rkey = u32(in);
		else
			addr += HMEM;
	} else if (len > HMEM - off) {
		len = HMEM - off;
	}
	memcpy(&k->addr, &addr, 8);
	k->len[0] = (uint8_t)len;
	k->len[1] = (uint8_t)(len >> 8);
	k->len[2] = (uint8_t)(len >> 16);
	memcpy(&k->key, &rkey, 4);
	h->msg[39] = NVME_SGL_KEYED;
	return 64;
}

static void op_connect(struct fhost *h, struct in *in)
{
	if (!h->ep)
		return;
	uint8_t a = u8(in);
	struct nvmf_connect_cmd c = {.opc = NVME_FABRICS_OPC, .cid = 0xc0, .fctype = NVMF_FCTYPE_CONNECT,
				     .qid = (a & 1) ? 1 : 0, .sqsize = (uint16_t)(u8(in) | 1), .kato = u16(in)};
	if (c.qid)
		c.cid = 0xc1;
	struct nvmf_connect_data d = {0};
	d.cntlid = c.qid ? last_cntlid : 0xffff;
	static const char *const subs[] = {NQN_A, NVMF_DISCOVERY_NQN, "nqn.2024-01.io.unvme.fuzz:none", NQN_A};
	snprintf(d.subnqn, sizeof(d.subnqn), "%s", subs[(a >> 1) & 3]);
	snprintf(d.hostnqn, sizeof(d.hostnqn), "%s", (a & 8) ? "nqn.2014-08.io.unvme.fuzz:stranger" : HOST_A);
	memcpy(h->mem, &d, sizeof(d));
	memcpy(h->msg, &c, sizeof(c));
	/* the data at offset 0 of the host's memory (no input: offset 0, the right key); a lie
	 * about its key or place, or its length, when the input says so */
	struct in none = {0};
	uint32_t len = (a & 16) ? u16(in) : (uint32_t)sizeof(d);
	host_send(h, sgl(h, (a & 32) ? in : &none, (a & 32) ? 1 : 0, len));
}

static void op_command(struct fhost *h, struct in *in)
{
	if (!h->ep)
		return;
	memset(h->msg, 0, 64);
	take(in, h->msg, 64);
	uint8_t mode = u8(in);
	uint32_t len = u32(in) & 0xffffff;
	host_send(h, mode < 3 ? sgl(h, in, mode, len) : 64);
}

static void op_raw(struct fhost *h, struct in *in)
{
	if (!h->ep)
		return;
	uint32_t len = u16(in) % MSG;
	host_send(h, take(in, h->msg, len));
}

static void op_enable(struct fhost *h)
{
	if (!h->ep)
		return;
	struct nvmf_property_cmd p = {.opc = NVME_FABRICS_OPC, .cid = 0xc2, .fctype = NVMF_FCTYPE_PROPERTY_SET,
				      .ofst = NVME_REG_CC, .value = 1u | 6u << 16 | 4u << 20};
	memcpy(h->msg, &p, sizeof(p));
	struct in none = {0};
	host_send(h, sgl(h, &none, 0, 0));
}

static void op_time(struct in *in)
{
	uint64_t later = mono_ms_coarse() + (uint64_t)u16(in) * 16;
	for (int i = 0; i < HOSTS; i++)
		if (hosts[i].c) {
			tgt_keepalive_check(hosts[i].c, later);
			if (!hosts[i].c->closing)
				tgt_conn_deadline(hosts[i].c, later);
		}
}

void fuzz_rdma_target_session(const uint8_t *d, size_t n)
{
	if (!target_up())
		fail("the target did not start");
	struct in in = {d, n};
	for (int ops = 0; in.n && ops < 64; ops++) {
		uint8_t op = u8(&in);
		struct fhost *h = &hosts[(op >> 4) % HOSTS];
		if (getenv("FUZZ_RDMA_VERBOSE"))
			fprintf(stderr, "op %02x (%zu bytes left)\n", op, in.n);
		switch (op & 7) {
		case 0: host_open(h, &in); break;
		case 1: op_raw(h, &in); break;
		case 2: op_connect(h, &in); break;
		case 3: op_command(h, &in); break;
		case 4: op_enable(h); break;
		case 5: op_time(&in); break;
		default:
			if (h->ep && (op & 8))
				rv_disconnect(h->ep);
			else
				host_gone(h);
			break;
		}
		service();
	}
	/* every host goes; the target lets go of everything */
	for (int i = 0; i < HOSTS; i++)
		host_gone(&hosts[i]);
	for (int i = 0; i < HOSTS; i++)
		if (hosts[i].c) {
			tgt_conn_close(hosts[i].c, "input ended");
			tgt_conn_free(hosts[i].c);
			hosts[i].c = NULL;
		}
	for (int s = 0; s < target->nsubs; s++)
		if (target->subs[s].ctrls)
			fail("a controller outlived its connections");
	if (target->disc.ctrls)
		fail("a discovery controller outlived its connections");
	if (atomic_load(&target->mem) != poller.pool.bytes)
		fail("a data buffer was not given back");
	if (rv_fake_live_eps() != base_eps || rv_fake_live_mrs() != base_mrs)
		fail("an endpoint or a region outlived its connection");
}
