/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fabrics commands at the target (NVMe Base 2.0 section 6): Connect (controllers, the host
 * allow-list, queue setup), Property Get / Set (the controller's registers: enable, reset,
 * shutdown), Disconnect, and the authentication commands (tgt_auth.c).
 *
 * Refusals are what a Linux target (nvmet) answers: an unknown subsystem NQN is Connect Invalid
 * Parameters with the offset of SUBNQN in the data, a host not on the allow-list is Connect
 * Invalid Host, a controller id that is not there is Connect Invalid Parameters on CNTLID; each
 * is logged with the host's NQN and address.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/common/clock.h"
#include "unvme/spec/fabrics.h"
#include "lib/driver/ctrlr.h"
#include "tgt.h"

#define CAP_TO 30u /* 15 s, in 500 ms units */

static void reply(struct tgt_cmd *cmd, uint16_t sct, uint8_t sc, uint32_t dw0)
{
	cmd->cqe.dw0 = dw0;
	tgt_complete(cmd, sct, sc);
}

static uint64_t ctrl_cap(const struct tgt_subsys *ss)
{
	uint32_t css = NVME_CAP_CSS_NVM | (ss->discovery ? 0 : NVME_CAP_CSS_IOCS);
	uint32_t mqes = ss->discovery ? TGT_ADMIN_SLOTS - 1 : ss->t->cfg->lim.queue_depth - 1;
	return nvme_cap_make(mqes, 1, CAP_TO, 0, css, 0, 0);
}

void tgt_ctrl_put(struct tgt_ctrl *ctrl)
{
	if (atomic_fetch_sub(&ctrl->refs, 1) != 1)
		return;
	struct tgt_subsys *ss = ctrl->ss;
	pthread_mutex_lock(&ss->lock);
	for (struct tgt_ctrl **pp = &ss->ctrls; *pp; pp = &(*pp)->next) {
		if (*pp == ctrl) {
			*pp = ctrl->next;
			break;
		}
	}
	pthread_mutex_unlock(&ss->lock);
	free(ctrl->qid_used);
	free(ctrl);
}

static struct tgt_ctrl *ctrl_new(struct tgt_subsys *ss, const struct nvmf_connect_data *d,
				 const struct tgt_host *host, uint32_t kato)
{
	struct tgt_ctrl *ctrl = calloc(1, sizeof(*ctrl));
	uint32_t maxq = ss->t->cfg->lim.max_io_queues;
	if (!ctrl || !(ctrl->qid_used = calloc(maxq + 1, 1))) {
		free(ctrl);
		return NULL;
	}
	ctrl->ss = ss;
	memcpy(ctrl->hostnqn, d->hostnqn, NVMF_NQN_FIELD - 1);
	memcpy(ctrl->hostid, d->hostid, sizeof(ctrl->hostid));
	ctrl->host = host;
	ctrl->kato_ms = kato;
	ctrl->nr_io = maxq;
	ctrl->feat_vwc = ss->vwc & 1u;
	atomic_store(&ctrl->refs, 1);
	atomic_store(&ctrl->last_ms, mono_ms_coarse());
	pthread_mutex_lock(&ss->lock);
	/* dynamic controller model: a fresh id from 1..FFEFh */
	for (int tries = 0; tries < 0xffef; tries++) {
		uint16_t id = ss->next_cntlid++;
		if (ss->next_cntlid > NVMF_CNTLID_MAX || ss->next_cntlid == 0)
			ss->next_cntlid = 1;
		bool used = false;
		for (struct tgt_ctrl *o = ss->ctrls; o; o = o->next)
			used |= o->cntlid == id;
		if (!used && id) {
			ctrl->cntlid = id;
			break;
		}
	}
	ctrl->next = ss->ctrls;
	ss->ctrls = ctrl;
	pthread_mutex_unlock(&ss->lock);
	return ctrl;
}

static void connect_admin(struct tgt_cmd *cmd, struct tgt_subsys *ss, const struct nvmf_connect_data *d,
			  const struct tgt_host *host)
{
	struct tgt_conn *c = cmd->conn;
	const struct nvmf_connect_cmd *cc = (const void *)&cmd->sqe;
	if (d->cntlid != NVMF_CNTLID_DYNAMIC) {
		reply(cmd, NVME_SCT_CMD, NVMF_SC_CONNECT_INVALID,
		      NVMF_CONNECT_INVALID_PARAM(true, offsetof(struct nvmf_connect_data, cntlid)));
		return;
	}
	if (cc->sqsize < 1 || cc->sqsize >= TGT_ADMIN_SLOTS) {
		reply(cmd, NVME_SCT_CMD, NVMF_SC_CONNECT_INVALID,
		      NVMF_CONNECT_INVALID_PARAM(false, offsetof(struct nvmf_connect_cmd, sqsize)));
		return;
	}
	/* a discovery controller that asked for no keep alive gets one anyway (as Linux's
	 * target does): an idle discovery association must not be held forever */
	uint32_t kato = ss->discovery && !cc->kato ? c->t->cfg->lim.discovery_kato_ms : cc->kato;
	struct tgt_ctrl *ctrl = ctrl_new(ss, d, host, kato);
	if (!ctrl || tgt_conn_size(c, TGT_ADMIN_SLOTS)) {
		if (ctrl)
			tgt_ctrl_put(ctrl);
		reply(cmd, NVME_SCT_GENERIC, NVME_SC_INTERNAL, 0);
		return;
	}
	c->ctrl = ctrl;
	c->ss = ss;
	c->qid = 0;
	c->sqsize = cc->sqsize;
	c->connected = true;
	c->auth_needed = host && host->has_key;
	tgt_auth_reset(c);
	tgt_info(c->t, "host %s (%s) connected to %s: controller %u%s", c->peer, ctrl->hostnqn, ss->nqn,
		ctrl->cntlid, c->auth_needed ? ", authentication required" : "");
	reply(cmd, 0, 0, ctrl->cntlid | (c->auth_needed ? NVMF_CONNECT_AUTHREQ_ATR : 0));
}

static void connect_io(struct tgt_cmd *cmd, struct tgt_subsys *ss, const struct nvmf_connect_data *d,
		       const struct tgt_host *host)
{
	struct tgt_conn *c = cmd->conn;
	const struct nvmf_connect_cmd *cc = (const void *)&cmd->sqe;
	struct tgt_ctrl *ctrl = NULL;
	pthread_mutex_lock(&ss->lock);
	for (struct tgt_ctrl *o = ss->ctrls; o; o = o->next)
		if (o->cntlid == d->cntlid && !atomic_load(&o->dead))
			ctrl = o;
	uint32_t st = 0, dw0 = 0;
	if (!ctrl || strncmp(ctrl->hostnqn, d->hostnqn, NVMF_NQN_FIELD)) {
		st = NVMF_SC_CONNECT_INVALID;
		dw0 = NVMF_CONNECT_INVALID_PARAM(true, offsetof(struct nvmf_connect_data, cntlid));
	} else if (ss->discovery) {
		st = NVMF_SC_CONNECT_INVALID;
		dw0 = NVMF_CONNECT_INVALID_PARAM(false, offsetof(struct nvmf_connect_cmd, qid));
	} else if (cc->qid > ctrl->nr_io) {
		st = NVMF_SC_CONNECT_INVALID;
		dw0 = NVMF_CONNECT_INVALID_PARAM(false, offsetof(struct nvmf_connect_cmd, qid));
		tgt_limit_hit(c->t, &c->t->lim_queues, "host %s (%s): I/O queue %u refused: controller "
			      "%u has %u (max_io_queues %u)", c->peer, ctrl->hostnqn, cc->qid,
			      ctrl->cntlid, ctrl->nr_io, c->t->cfg->lim.max_io_queues);
	} else if (ctrl->qid_used[cc->qid]) {
		/* The spec's answer for a queue that exists (also while its connection's end is
		 * still on its way here): the host may take another id or try again. */
		st = NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_CMD_SEQ_ERROR);
	} else if (cc->sqsize < 1 || cc->sqsize > c->t->cfg->lim.queue_depth - 1) {
		st = NVMF_SC_CONNECT_INVALID;
		dw0 = NVMF_CONNECT_INVALID_PARAM(false, offsetof(struct nvmf_connect_cmd, sqsize));
	} else if (!(atomic_load(&ctrl->csts) & NVME_CSTS_RDY)) {
		st = NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_CMD_SEQ_ERROR);
	} else {
		ctrl->qid_used[cc->qid] = 1;
		atomic_fetch_add(&ctrl->refs, 1);
	}
	pthread_mutex_unlock(&ss->lock);
	if (st) {
		if (st == NVMF_SC_CONNECT_INVALID)
			reply(cmd, NVME_SCT_CMD, NVMF_SC_CONNECT_INVALID, dw0);
		else
			reply(cmd, NVME_SCT_GENERIC, (uint8_t)st, 0);
		return;
	}
	c->ctrl = ctrl;
	c->ss = ss;
	c->qid = cc->qid;
	c->sqsize = cc->sqsize;
	c->ctrl_gen = atomic_load(&ctrl->gen);
	c->connected = true;
	c->sqflow_off = cc->cattr & NVMF_CONNECT_CATTR_DISABLE_SQFLOW;
	c->auth_needed = host && host->has_key;
	tgt_auth_reset(c);
	if (tgt_conn_size(c, cc->sqsize + 1u) || tgt_io_open_queues(c)) {
		tgt_log(c->t, "host %s (%s): queue %u of controller %u refused: no backing queue pair left",
			c->peer, ctrl->hostnqn, cc->qid, ctrl->cntlid);
		c->connected = false; /* tgt_conn_free gives the qid back only for connected queues */
		pthread_mutex_lock(&ss->lock);
		ctrl->qid_used[cc->qid] = 0;
		pthread_mutex_unlock(&ss->lock);
		reply(cmd, NVME_SCT_CMD, NVMF_SC_CTRL_BUSY, 0);
		return;
	}
	reply(cmd, 0, 0, ctrl->cntlid | (c->auth_needed ? NVMF_CONNECT_AUTHREQ_ATR : 0));
}

static void connect(struct tgt_cmd *cmd)
{
	struct tgt_conn *c = cmd->conn;
	const struct nvmf_connect_cmd *cc = (const void *)&cmd->sqe;
	if (c->connected) {
		reply(cmd, NVME_SCT_GENERIC, NVME_SC_CMD_SEQ_ERROR, 0);
		return;
	}
	if (cmd->len != sizeof(struct nvmf_connect_data)) {
		reply(cmd, NVME_SCT_GENERIC, NVME_SC_DATA_SGL_LEN_INVALID, 0);
		return;
	}
	if (cc->recfmt != 0) {
		reply(cmd, NVME_SCT_CMD, NVMF_SC_INCOMPATIBLE_FORMAT, 0);
		return;
	}
	struct nvmf_connect_data *d = (void *)cmd->buf;
	d->subnqn[NVMF_NQN_FIELD - 1] = '\0';
	d->hostnqn[NVMF_NQN_FIELD - 1] = '\0';
	struct tgt_subsys *ss = tgt_find_subsys(c->t, d->subnqn);
	bool allowed = false;
	const struct tgt_host *host = ss ? tgt_host_allowed(ss, d->hostnqn, &allowed) : NULL;
	if (allowed && tgt_tls_connect_check(c, d->hostnqn, d->subnqn)) {
		reply(cmd, NVME_SCT_CMD, NVMF_SC_INVALID_HOST,
		      NVMF_CONNECT_INVALID_PARAM(true, offsetof(struct nvmf_connect_data, hostnqn)));
		return;
	}
	if (!allowed) {
		/* an unknown subsystem and one the host may not use answer alike, so that names
		 * cannot be probed; the log says which it was */
		tgt_log(c->t, "host %s (%s): Connect to %s refused: %s (answered Connect Invalid Host)",
			c->peer, d->hostnqn, d->subnqn, ss ? "host not allowed" : "no such subsystem");
		reply(cmd, NVME_SCT_CMD, NVMF_SC_INVALID_HOST,
		      NVMF_CONNECT_INVALID_PARAM(true, offsetof(struct nvmf_connect_data, hostnqn)));
		return;
	}
	if (ss->discovery) /* a host with a key proves it to the discovery controller too */
		host = tgt_host_key_entry(c->t, d->hostnqn);
	if (cc->qid == 0)
		connect_admin(cmd, ss, d, host);
	else
		connect_io(cmd, ss, d, host);
}

/* Flushes every namespace of the subsystem's devices (a normal shutdown). */
static void shutdown_flush(struct tgt_subsys *ss)
{
	for (int b = 0; b < ss->nbacks; b++) {
		struct unvme_qpair *qp;
		struct unvme_qpair_opts o = {.depth = 4};
		if (unvme_qpair_create(ss->backs[b]->ctrlr, &o, &qp))
			continue;
		for (int i = 0; i < ss->nns; i++)
			if (ss->ns[i].back == b && ss->ns[i].csi != NVME_CSI_KV)
				unvme_flush_sync(ss->ns[i].bns, qp);
		unvme_qpair_destroy(qp);
	}
}

static int set_cc(struct tgt_conn *c, uint32_t cc)
{
	struct tgt_ctrl *ctrl = c->ctrl;
	uint32_t old = atomic_exchange(&ctrl->cc, cc);
	uint32_t csts = atomic_load(&ctrl->csts);
	if ((cc & NVME_CC_EN) && !(old & NVME_CC_EN)) {
		bool bad = !c->ss->discovery && (NVME_CC_IOSQES(cc) != NVME_SQES_LOG2 ||
						 NVME_CC_IOCQES(cc) != NVME_CQES_LOG2);
		csts = bad ? NVME_CSTS_CFS : NVME_CSTS_RDY;
	} else if (!(cc & NVME_CC_EN) && (old & NVME_CC_EN)) {
		/* a controller reset: the I/O queues end */
		atomic_fetch_add(&ctrl->gen, 1);
		csts = 0;
	}
	if (NVME_CC_SHN(cc) && !NVME_CC_SHN(old)) {
		shutdown_flush(c->ss);
		csts = (csts & ~(3u << 2)) | (NVME_CSTS_SHST_COMPLETE << 2);
	}
	atomic_store(&ctrl->csts, csts);
	return 0;
}

static void property(struct tgt_cmd *cmd, bool set)
{
	struct tgt_conn *c = cmd->conn;
	const struct nvmf_property_cmd *p = (const void *)&cmd->sqe;
	bool wide = (p->attrib & 7u) == NVMF_PROP_SIZE_8;
	if (!c->connected || c->qid != 0) {
		reply(cmd, NVME_SCT_GENERIC, NVME_SC_CMD_SEQ_ERROR, 0);
		return;
	}
	struct tgt_ctrl *ctrl = c->ctrl;
	atomic_store_explicit(&ctrl->last_ms, mono_ms_coarse(), memory_order_relaxed);
	uint64_t v = 0;
	bool ok = true;
	switch (p->ofst) {
	case NVME_REG_CAP:
		ok = wide && !set;
		v = ctrl_cap(c->ss);
		break;
	case NVME_REG_VS:
		ok = !wide && !set;
		v = NVME_VS(2, 0, 0);
		break;
	case NVME_REG_CC:
		ok = !wide;
		if (ok && set)
			set_cc(c, (uint32_t)p->value);
		v = atomic_load(&ctrl->cc);
		break;
	case NVME_REG_CSTS:
		ok = !wide && !set;
		v = atomic_load(&ctrl->csts);
		break;
	case NVME_REG_NSSR:
		ok = !wide && set; /* an NVM subsystem reset is not ours to do for one host */
		break;
	default:
		ok = false;
	}
	if (!ok) {
		reply(cmd, NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD, 0);
		return;
	}
	cmd->cqe.dw1 = (uint32_t)(v >> 32);
	reply(cmd, 0, 0, (uint32_t)v);
}

void tgt_fabrics(struct tgt_cmd *cmd)
{
	struct tgt_conn *c = cmd->conn;
	uint8_t fctype = ((const struct nvmf_cmd *)&cmd->sqe)->fctype;
	if (fctype != NVMF_FCTYPE_CONNECT && !c->connected) {
		reply(cmd, NVME_SCT_GENERIC, NVME_SC_CMD_SEQ_ERROR, 0);
		return;
	}
	switch (fctype) {
	case NVMF_FCTYPE_CONNECT:
		connect(cmd);
		break;
	case NVMF_FCTYPE_PROPERTY_GET:
		property(cmd, false);
		break;
	case NVMF_FCTYPE_PROPERTY_SET:
		property(cmd, true);
		break;
	case NVMF_FCTYPE_AUTH_SEND:
		tgt_auth_send(cmd);
		break;
	case NVMF_FCTYPE_AUTH_RECV:
		tgt_auth_recv(cmd);
		break;
	case NVMF_FCTYPE_DISCONNECT:
		if (c->qid == 0) {
			reply(cmd, NVME_SCT_CMD, NVMF_SC_INVALID_QUEUE_TYPE, 0);
			break;
		}
		snprintf(c->why, sizeof(c->why), "Disconnect");
		reply(cmd, 0, 0, 0);
		c->rx_state = RX_DEAD; /* nothing more is taken: close after the response */
		tgt_conn_close_after_send(c);
		break;
	default:
		reply(cmd, NVME_SCT_GENERIC, NVME_SC_INVALID_OPCODE, 0);
	}
}

void tgt_keepalive_check(struct tgt_conn *c, uint64_t now)
{
	struct tgt_ctrl *ctrl = c->ctrl;
	if (!c->connected || c->qid != 0 || !ctrl || !ctrl->kato_ms || atomic_load(&ctrl->dead))
		return;
	uint64_t last = atomic_load_explicit(&ctrl->last_ms, memory_order_relaxed);
	/* half a KATO of grace: the host sends every KATO / 2 */
	if (now > last && now - last > ctrl->kato_ms + ctrl->kato_ms / 2) {
		tgt_log(c->t, "host %s (%s): keep alive timeout (%u ms): controller %u of %s ends", c->peer,
			ctrl->hostnqn, ctrl->kato_ms, ctrl->cntlid, c->ss->nqn);
		atomic_store(&ctrl->dead, true);
		tgt_conn_close(c, "keep alive timeout");
	}
}
