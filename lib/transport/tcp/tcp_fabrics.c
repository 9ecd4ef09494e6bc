/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fabrics commands the host transport sends itself (NVMe Base 2.0 section 6): Connect on
 * every new connection, Property Get / Set for the registers, Disconnect for I/O queues, and
 * Keep Alive. Each runs synchronously on its connection (tcp_queue_exec); on the admin
 * connection the caller holds tc->lock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "unvme/spec/fabrics.h"
#include "lib/driver/ctrlr.h"
#include "lib/driver/errmsg.h"
#include "tcp_ctrlr.h"

static uint32_t cmd_timeout(const struct tcp_ctrlr *tc)
{
	uint32_t t = tc->c->opts.admin_timeout_ms;
	return t ? t : 10000;
}

/* In-capsule bytes the controller takes on an I/O queue: IOCCSZ counts 16-byte units of the
 * whole capsule (the 64-byte command included). */
static uint32_t io_incapsule(const struct tcp_ctrlr *tc)
{
	const struct nvmf_id_ctrl_fabrics *f = (const void *)tc->c->id.nvmeof;
	uint64_t bytes = (uint64_t)f->ioccsz * 16u;
	uint32_t icd = bytes > 64 ? (uint32_t)(bytes - 64 > (1u << 20) ? (1u << 20) : bytes - 64) : 0;
	if (f->icdoff)
		icd = 0; /* in-capsule data at an offset: not supported, send data by R2T instead */
	return icd;
}

static int connect_status(struct tcp_ctrlr *tc, int st, uint32_t dw0, uint16_t qid)
{
	const char *peer = tc->admin.conn.peer;
	unsigned sct = NVME_STATUS_SCT(st), sc = NVME_STATUS_SC(st);
	if (sct == NVME_SCT_CMD && sc == NVMF_SC_INVALID_HOST)
		return unvme_fail(st, "%s: subsystem %s does not allow host %s (Connect Invalid Host)", peer,
				  tc->p.subnqn, tc->p.hostnqn);
	if (sct == NVME_SCT_CMD && sc == NVMF_SC_CONNECT_INVALID) {
		uint16_t ipo = (uint16_t)(dw0 & 0xffffu);
		bool in_data = dw0 & (1u << 16);
		if (in_data && ipo == offsetof(struct nvmf_connect_data, subnqn))
			return unvme_fail(st, "%s: the target has no subsystem %s (Connect Invalid Parameters)",
					  peer, tc->p.subnqn);
		if (in_data && ipo == offsetof(struct nvmf_connect_data, cntlid))
			return unvme_fail(st, "%s: queue %u: controller %u is gone (Connect Invalid Parameters)",
					  peer, qid, tc->cntlid);
		return unvme_fail(st, "%s: Connect Invalid Parameters (%s byte %u)", peer,
				  in_data ? "data" : "command", ipo);
	}
	if (sct == NVME_SCT_CMD && sc == NVMF_SC_CTRL_BUSY)
		return unvme_fail(st, "%s: queue %u: the controller is busy (no room for another queue)",
				  peer, qid);
	return unvme_fail(st, "%s: Connect of queue %u failed: %s", peer, qid,
			  unvme_status_str(st, NVME_CSI_NVM));
}

int tcp_fabrics_connect(struct tcp_ctrlr *tc, struct tcp_queue *q, uint16_t qid, uint16_t sqsize,
			uint16_t cntlid, uint16_t *cntlid_out)
{
	int rc = tcp_queue_open_conn(q);
	if (rc)
		return rc;
	atomic_store(&q->dead, false);
	q->dead_why = NULL;
	q->icd_max = qid == 0 ? NVME_TCP_ADMIN_CCSZ : io_incapsule(tc);
	if (tc->p.incapsule >= 0 && (uint32_t)tc->p.incapsule < q->icd_max)
		q->icd_max = (uint32_t)tc->p.incapsule;
	struct nvmf_connect_data *d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	memcpy(d->hostid, tc->p.hostid, sizeof(d->hostid));
	d->cntlid = cntlid;
	memcpy(d->subnqn, tc->p.subnqn, strnlen(tc->p.subnqn, NVMF_NQN_MAX));
	memcpy(d->hostnqn, tc->p.hostnqn, strnlen(tc->p.hostnqn, NVMF_NQN_MAX));
	struct nvmf_connect_cmd cmd = {0};
	cmd.opc = NVME_FABRICS_OPC;
	cmd.fctype = NVMF_FCTYPE_CONNECT;
	cmd.qid = qid;
	cmd.sqsize = sqsize;
	cmd.kato = qid == 0 ? tc->p.kato_ms : 0;
	struct nvme_cqe cpl = {0};
	rc = tcp_queue_exec(q, (struct nvme_sqe *)&cmd, d, sizeof(*d), true, &cpl, cmd_timeout(tc));
	free(d);
	if (rc > 0)
		rc = connect_status(tc, rc, cpl.dw0, qid);
	if (rc == 0 && (cpl.dw0 & NVMF_CONNECT_AUTHREQ_ASCR))
		rc = unvme_fail(-EPROTONOSUPPORT, "%s: the subsystem requires a secure channel (TLS), which "
				"this host does not support", q->conn.peer);
	if (rc == 0 && (cpl.dw0 & NVMF_CONNECT_AUTHREQ_ATR)) {
		if (!tc->p.dhchap_secret[0])
			rc = unvme_fail(-EACCES, "%s: subsystem %s requires DH-HMAC-CHAP authentication: give "
					"the host's key (dhchap_secret=DHHC-1:... in the device id, or "
					"$UNVME_DHCHAP_SECRET)", q->conn.peer, tc->p.subnqn);
		else
			rc = tcp_auth_host(tc, q, qid);
	}
	if (rc) {
		tcp_queue_close_conn(q);
		return rc;
	}
	if (cntlid_out)
		*cntlid_out = NVMF_CONNECT_RSP_CNTLID(cpl.dw0);
	return 0;
}

int tcp_fabrics_prop_get(struct tcp_ctrlr *tc, uint32_t off, bool wide, uint64_t *val)
{
	struct nvmf_property_cmd cmd = {0};
	cmd.opc = NVME_FABRICS_OPC;
	cmd.fctype = NVMF_FCTYPE_PROPERTY_GET;
	cmd.attrib = wide ? NVMF_PROP_SIZE_8 : NVMF_PROP_SIZE_4;
	cmd.ofst = off;
	struct nvme_cqe cpl = {0};
	int rc = tcp_queue_exec(&tc->admin, (struct nvme_sqe *)&cmd, NULL, 0, false, &cpl, cmd_timeout(tc));
	if (rc == 0)
		*val = wide ? ((uint64_t)cpl.dw1 << 32 | cpl.dw0) : cpl.dw0;
	else if (rc > 0)
		rc = unvme_fail(rc, "%s: Property Get %#x failed: %s", tc->admin.conn.peer, off,
				unvme_status_str(rc, NVME_CSI_NVM));
	return rc;
}

int tcp_fabrics_prop_set(struct tcp_ctrlr *tc, uint32_t off, bool wide, uint64_t val)
{
	struct nvmf_property_cmd cmd = {0};
	cmd.opc = NVME_FABRICS_OPC;
	cmd.fctype = NVMF_FCTYPE_PROPERTY_SET;
	cmd.attrib = wide ? NVMF_PROP_SIZE_8 : NVMF_PROP_SIZE_4;
	cmd.ofst = off;
	cmd.value = val;
	int rc = tcp_queue_exec(&tc->admin, (struct nvme_sqe *)&cmd, NULL, 0, true, NULL, cmd_timeout(tc));
	if (rc > 0)
		rc = unvme_fail(rc, "%s: Property Set %#x failed: %s", tc->admin.conn.peer, off,
				unvme_status_str(rc, NVME_CSI_NVM));
	return rc;
}

int tcp_fabrics_disconnect(struct tcp_ctrlr *tc, struct tcp_queue *q)
{
	const struct nvmf_id_ctrl_fabrics *f = (const void *)tc->c->id.nvmeof;
	if (!(f->ofcs & 1u) || q->conn.fd < 0 || atomic_load(&q->dead))
		return 0; /* Disconnect is optional: closing the connection says the same */
	struct nvmf_disconnect_cmd cmd = {0};
	cmd.opc = NVME_FABRICS_OPC;
	cmd.fctype = NVMF_FCTYPE_DISCONNECT;
	return tcp_queue_exec(q, (struct nvme_sqe *)&cmd, NULL, 0, false, NULL, 1000);
}

int tcp_fabrics_keep_alive(struct tcp_ctrlr *tc)
{
	struct nvme_sqe cmd = {0};
	cmd.opc = NVME_ADM_KEEP_ALIVE;
	/* an admin command like the others: the admin timeout, so that a stalled controller is
	 * found by whichever command waited longest, at that command's timeout */
	return tcp_queue_exec(&tc->admin, &cmd, NULL, 0, false, NULL, cmd_timeout(tc));
}
