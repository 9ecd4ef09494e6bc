/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fabrics commands a host sends itself (NVMe Base 2.0 section 6): Connect on every new
 * queue, Property Get / Set for the registers, Disconnect for I/O queues, and Keep Alive. Each
 * runs synchronously on its queue through the transport's exec; on the admin queue the
 * transport serialises them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "unvme/unvme.h"
#include "lib/driver/errmsg.h"
#include "nvmf_host.h"
#include "nvmf_params.h"

uint32_t nvmf_io_incapsule(const struct nvmf_id_ctrl_fabrics *f)
{
	uint64_t bytes = (uint64_t)f->ioccsz * 16u;
	uint32_t icd = bytes > 64 ? (uint32_t)(bytes - 64 > (1u << 20) ? (1u << 20) : bytes - 64) : 0;
	if (f->icdoff)
		icd = 0; /* in-capsule data at an offset: not supported, send data by R2T instead */
	return icd;
}

static int connect_status(struct nvmf_assoc *a, int st, uint32_t dw0, uint16_t qid)
{
	const char *peer = a->ops->peer(a->admin);
	unsigned sct = NVME_STATUS_SCT(st), sc = NVME_STATUS_SC(st);
	if (sct == NVME_SCT_CMD && sc == NVMF_SC_INVALID_HOST)
		return unvme_fail(st, "%s: subsystem %s does not allow host %s (Connect Invalid Host)", peer,
				  a->subnqn, a->hostnqn);
	if (sct == NVME_SCT_CMD && sc == NVMF_SC_CONNECT_INVALID) {
		uint16_t ipo = (uint16_t)(dw0 & 0xffffu);
		bool in_data = dw0 & (1u << 16);
		if (in_data && ipo == offsetof(struct nvmf_connect_data, subnqn))
			return unvme_fail(st, "%s: the target has no subsystem %s (Connect Invalid Parameters)",
					  peer, a->subnqn);
		if (in_data && ipo == offsetof(struct nvmf_connect_data, cntlid))
			return unvme_fail(st, "%s: queue %u: controller %u is gone (Connect Invalid Parameters)",
					  peer, qid, a->cntlid);
		return unvme_fail(st, "%s: Connect Invalid Parameters (%s byte %u)", peer,
				  in_data ? "data" : "command", ipo);
	}
	if (sct == NVME_SCT_CMD && sc == NVMF_SC_CTRL_BUSY)
		return unvme_fail(st, "%s: queue %u: the controller is busy (no room for another queue)",
				  peer, qid);
	return unvme_fail(st, "%s: Connect of queue %u failed: %s", peer, qid,
			  unvme_status_str(st, NVME_CSI_NVM));
}

int nvmf_connect(struct nvmf_assoc *a, void *queue, uint16_t qid, uint16_t sqsize,
		 uint16_t cntlid, uint16_t *cntlid_out)
{
	struct nvmf_connect_data *d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	memcpy(d->hostid, a->hostid, sizeof(d->hostid));
	d->cntlid = cntlid;
	memcpy(d->subnqn, a->subnqn, strnlen(a->subnqn, NVMF_NQN_MAX));
	memcpy(d->hostnqn, a->hostnqn, strnlen(a->hostnqn, NVMF_NQN_MAX));
	struct nvmf_connect_cmd cmd = {0};
	cmd.opc = NVME_FABRICS_OPC;
	cmd.fctype = NVMF_FCTYPE_CONNECT;
	cmd.qid = qid;
	cmd.sqsize = sqsize;
	cmd.kato = qid == 0 ? a->kato_ms : 0;
	struct nvme_cqe cpl = {0};
	int rc = a->ops->exec(queue, (struct nvme_sqe *)&cmd, d, sizeof(*d), true, &cpl, a->timeout_ms);
	free(d);
	if (rc > 0)
		rc = connect_status(a, rc, cpl.dw0, qid);
	if (rc == 0 && (cpl.dw0 & NVMF_CONNECT_AUTHREQ_ASCR))
		rc = unvme_fail(-EPROTONOSUPPORT, "%s: the subsystem requires a secure channel (TLS), which "
				"this host does not support", a->ops->peer(queue));
	if (rc == 0 && (cpl.dw0 & NVMF_CONNECT_AUTHREQ_ATR)) {
		if (!a->dhchap_secret[0])
			rc = unvme_fail(-EACCES, "%s: subsystem %s requires DH-HMAC-CHAP authentication: give "
					"the host's key (dhchap_secret=DHHC-1:... in the device id, or "
					"$UNVME_DHCHAP_SECRET)", a->ops->peer(queue), a->subnqn);
		else
			rc = nvmf_auth_host(a, queue, qid);
	}
	if (rc == 0 && cntlid_out)
		*cntlid_out = NVMF_CONNECT_RSP_CNTLID(cpl.dw0);
	return rc;
}

void nvmf_prop_get_cmd(struct nvme_sqe *sqe, uint32_t off, bool wide)
{
	struct nvmf_property_cmd cmd = {0};
	cmd.opc = NVME_FABRICS_OPC;
	cmd.fctype = NVMF_FCTYPE_PROPERTY_GET;
	cmd.attrib = wide ? NVMF_PROP_SIZE_8 : NVMF_PROP_SIZE_4;
	cmd.ofst = off;
	_Static_assert(sizeof(cmd) == sizeof(*sqe), "a fabrics command is an SQE");
	memcpy(sqe, &cmd, sizeof(cmd));
}

void nvmf_prop_set_cmd(struct nvme_sqe *sqe, uint32_t off, bool wide, uint64_t val)
{
	struct nvmf_property_cmd cmd = {0};
	cmd.opc = NVME_FABRICS_OPC;
	cmd.fctype = NVMF_FCTYPE_PROPERTY_SET;
	cmd.attrib = wide ? NVMF_PROP_SIZE_8 : NVMF_PROP_SIZE_4;
	cmd.ofst = off;
	cmd.value = val;
	memcpy(sqe, &cmd, sizeof(cmd));
}

int nvmf_prop_get_result(struct nvmf_assoc *a, uint32_t off, bool wide, int rc,
			 const struct nvme_cqe *cpl, uint64_t *val)
{
	if (rc == 0)
		*val = wide ? ((uint64_t)cpl->dw1 << 32 | cpl->dw0) : cpl->dw0;
	else if (rc > 0)
		rc = unvme_fail(rc, "%s: Property Get %#x failed: %s", a->ops->peer(a->admin), off,
				unvme_status_str(rc, NVME_CSI_NVM));
	return rc;
}

int nvmf_prop_set_result(struct nvmf_assoc *a, uint32_t off, int rc)
{
	if (rc > 0)
		rc = unvme_fail(rc, "%s: Property Set %#x failed: %s", a->ops->peer(a->admin), off,
				unvme_status_str(rc, NVME_CSI_NVM));
	return rc;
}

int nvmf_prop_get(struct nvmf_assoc *a, uint32_t off, bool wide, uint64_t *val)
{
	struct nvme_sqe cmd;
	nvmf_prop_get_cmd(&cmd, off, wide);
	struct nvme_cqe cpl = {0};
	int rc = a->ops->exec(a->admin, &cmd, NULL, 0, false, &cpl, a->timeout_ms);
	return nvmf_prop_get_result(a, off, wide, rc, &cpl, val);
}

int nvmf_prop_set(struct nvmf_assoc *a, uint32_t off, bool wide, uint64_t val)
{
	struct nvme_sqe cmd;
	nvmf_prop_set_cmd(&cmd, off, wide, val);
	int rc = a->ops->exec(a->admin, &cmd, NULL, 0, true, NULL, a->timeout_ms);
	return nvmf_prop_set_result(a, off, rc);
}

int nvmf_disconnect(struct nvmf_assoc *a, void *queue)
{
	struct nvmf_disconnect_cmd cmd = {0};
	cmd.opc = NVME_FABRICS_OPC;
	cmd.fctype = NVMF_FCTYPE_DISCONNECT;
	return a->ops->exec(queue, (struct nvme_sqe *)&cmd, NULL, 0, false, NULL, 1000);
}

void nvmf_keep_alive_cmd(struct nvme_sqe *cmd)
{
	*cmd = (struct nvme_sqe){0};
	cmd->opc = NVME_ADM_KEEP_ALIVE;
}

bool nvmf_data_to_ctrl(uint16_t qid, const struct nvme_sqe *sqe)
{
	if (sqe->opc == NVME_FABRICS_OPC) {
		uint8_t t = ((const struct nvmf_cmd *)sqe)->fctype;
		return t == NVMF_FCTYPE_CONNECT || t == NVMF_FCTYPE_AUTH_SEND;
	}
	if (qid != 0) {
		switch (sqe->opc) {
		case NVME_KVV_STORE:
			return true;
		case NVME_KVV_RETRIEVE:
		case NVME_KVV_ITER_READ:
		case NVME_KVV_DELETE:
		case NVME_KVV_EXIST:
		case NVME_KVV_ITER_REQ:
			return false;
		default:
			break;
		}
	}
	return (sqe->opc & 0x3u) == 0x1u;
}

/* Samsung KV vendor commands with a key over 16 bytes carry the key's PRP in CDW12-13. Over
 * a fabric the key travels in the capsule and CDW12-15 become an SGL descriptor of it
 * (docs/nvme-tcp.md, "KV commands over NVMe/TCP"). */
bool nvmf_kv_long_key(const struct nvme_sqe *sqe)
{
	switch (sqe->opc) {
	case NVME_KVV_STORE:
	case NVME_KVV_RETRIEVE:
	case NVME_KVV_DELETE:
	case NVME_KVV_EXIST:
		return (sqe->cdw11 & 0xffu) + 1u > NVME_KVV_INLINE_KEY;
	default:
		return false;
	}
}

void nvmf_assoc_init(struct nvmf_assoc *a, const struct nvmf_queue_ops *ops, void *admin,
		     const struct nvmf_params *p, uint32_t timeout_ms)
{
	*a = (struct nvmf_assoc){
		.ops = ops,
		.admin = admin,
		.hostnqn = p->hostnqn,
		.subnqn = p->subnqn,
		.hostid = p->hostid,
		.dhchap_secret = p->dhchap_secret,
		.dhchap_ctrl_secret = p->dhchap_ctrl_secret,
		.kato_ms = p->kato_ms,
		.timeout_ms = timeout_ms ? timeout_ms : 10000,
	};
}
