/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * I/O commands at the target: each goes to the backing device of its namespace, on the
 * connection's own queue pair of that device (created at Connect, owned and polled by the
 * connection's poller: no lock), with the command's DMA buffer, the namespace id translated.
 * The device's completion, DW0 included (a KV retrieve's value size), goes back to the host.
 *
 * KV commands: the standard KV command set goes by namespace like NVM; the Samsung vendor
 * commands name a keyspace, not a namespace, in NSID and go to the subsystem's first KV
 * namespace. A vendor key over 16 bytes arrived in the capsule (its descriptor in CDW12-15);
 * the device gets it by PRP from the command's buffer, as from a local host.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/driver/ctrlr.h"
#include "tgt.h"

const struct nvme_sgl_desc *tgt_kv_key_desc(const struct nvme_sqe *sqe)
{
	switch (sqe->opc) {
	case NVME_KVV_STORE:
	case NVME_KVV_RETRIEVE:
	case NVME_KVV_DELETE:
	case NVME_KVV_EXIST:
		if ((sqe->cdw11 & 0xffu) + 1u > NVME_KVV_INLINE_KEY)
			return (const struct nvme_sgl_desc *)&sqe->cdw12;
		return NULL;
	default:
		return NULL;
	}
}

bool tgt_vendor_kv(uint8_t opc)
{
	switch (opc) {
	case NVME_KVV_STORE:
	case NVME_KVV_RETRIEVE:
	case NVME_KVV_DELETE:
	case NVME_KVV_EXIST:
	case NVME_KVV_ITER_REQ:
	case NVME_KVV_ITER_READ:
		return true;
	default:
		return false;
	}
}

static bool opcode_ok(uint8_t csi, uint8_t opc)
{
	if (csi == NVME_CSI_KV) {
		switch (opc) {
		case NVME_KV_FLUSH:
		case NVME_KV_STORE:
		case NVME_KV_RETRIEVE:
		case NVME_KV_LIST:
		case NVME_KV_DELETE:
		case NVME_KV_EXIST:
			return true;
		default:
			return false;
		}
	}
	switch (opc) {
	case NVME_CMD_FLUSH:
	case NVME_CMD_WRITE:
	case NVME_CMD_READ:
	case NVME_CMD_WRITE_UNCOR:
	case NVME_CMD_COMPARE:
	case NVME_CMD_WRITE_ZEROES:
	case NVME_CMD_DSM:
	case NVME_CMD_VERIFY:
		return true;
	case NVME_CMD_ZONE_MGMT_SEND:
	case NVME_CMD_ZONE_MGMT_RECV:
	case NVME_CMD_ZONE_APPEND:
		return csi == NVME_CSI_ZNS;
	default:
		return false;
	}
}

const struct tgt_ns *tgt_ns_of(const struct tgt_subsys *ss, uint32_t nsid)
{
	for (int i = 0; i < ss->nns; i++)
		if (ss->ns[i].nsid == nsid)
			return &ss->ns[i];
	return NULL;
}

static void io_done(void *arg, const struct nvme_cqe *cpl)
{
	struct tgt_cmd *cmd = arg;
	struct tgt_conn *c = cmd->conn;
	c->in_backing--;
	if (c->closing) {
		tgt_cmd_release(cmd);
		return;
	}
	unsigned sct = NVME_CQE_SCT(cpl->status), sc = NVME_CQE_SC(cpl->status);
	cmd->cqe.dw0 = cpl->dw0;
	cmd->cqe.dw1 = cpl->dw1;
	/* data goes back on success, and with the vendor iterator's end (it carries keys) */
	bool with_data = (sct == 0 && sc == 0) ||
			 (cmd->sqe.opc == NVME_KVV_ITER_READ && sct == NVME_SCT_CMD &&
			  sc == NVME_KVV_SC_ITER_EOF);
	cmd->send_len = !cmd->to_ctrl && with_data ? cmd->len : 0;
	tgt_complete_raw(cmd, cpl->status); /* the device's DNR and More bits stay */
}

void tgt_io(struct tgt_cmd *cmd)
{
	struct tgt_conn *c = cmd->conn;
	struct tgt_subsys *ss = c->ss;
	struct nvme_sqe sqe = cmd->sqe;
	const struct tgt_ns *ns;
	if (tgt_vendor_kv(sqe.opc)) {
		if (ss->kv_ns < 0) {
			tgt_complete(cmd, NVME_SCT_GENERIC, NVME_SC_INVALID_OPCODE);
			return;
		}
		ns = &ss->ns[ss->kv_ns]; /* NSID is a keyspace: it stays */
	} else {
		ns = tgt_ns_of(ss, sqe.nsid);
		if (!ns) {
			tgt_complete(cmd, NVME_SCT_GENERIC, NVME_SC_INVALID_NS_OR_FORMAT);
			return;
		}
		if (!opcode_ok(ns->csi, sqe.opc)) {
			tgt_complete(cmd, NVME_SCT_GENERIC, NVME_SC_INVALID_OPCODE);
			return;
		}
		sqe.nsid = ns->bnsid;
		/* MPTR is a host address on PCIe and means nothing here (the namespace has no
		 * separate metadata, tgt_main.c); only the vendor KV commands use the field, as
		 * the value offset */
		sqe.mptr = 0;
	}
	/* No byte from the host is an address: the driver builds the data pointer (PRPs) over
	 * the command's own buffer, exactly cmd->len bytes, what the command moves (tgt_xfer.c) */
	sqe.prp1 = 0;
	sqe.prp2 = 0;
	sqe.flags &= 0x3u;
	const struct nvme_sgl_desc *key = tgt_kv_key_desc(&cmd->sqe);
	if (key) {
		/* checked at capsule time (tgt_xfer_check_sgl): the key is in this buffer */
		uint32_t klen = (sqe.cdw11 & 0xffu) + 1u;
		uint64_t iova = unvme_dma_iova(cmd->buf + cmd->icd_off + key->addr);
		sqe.cdw12 = (uint32_t)iova;
		sqe.cdw13 = (uint32_t)(iova >> 32);
		uint64_t next = ((iova & ~4095ull) + 4096);
		bool crosses = (iova & 4095u) + klen > 4096;
		sqe.cdw14 = crosses ? (uint32_t)next : 0;
		sqe.cdw15 = crosses ? (uint32_t)(next >> 32) : 0;
	}
	if (cmd->len && !cmd->to_ctrl && !cmd->fills)
		memset(cmd->buf, 0, cmd->len); /* a short answer must not show older data */
	struct unvme_qpair *qp = c->bqp[ns->back];
	int rc = unvme_qpair_submit(qp, &sqe, cmd->len ? cmd->buf : NULL, cmd->len, io_done, cmd);
	if (rc) {
		tgt_log(c->t, "host %s: queue %u: backing device %s refused a command: %s", c->peer, c->qid,
			ss->backs[ns->back]->devid, unvme_errmsg());
		tgt_complete(cmd, NVME_SCT_GENERIC, NVME_SC_INTERNAL);
		return;
	}
	cmd->state = CMD_BACKING;
	c->in_backing++;
	/* the device starts at the next poll (its doorbell), right after this receive pass */
}

int tgt_io_open_queues(struct tgt_conn *c)
{
	struct tgt_subsys *ss = c->ss;
	c->bqp = calloc((size_t)ss->nbacks, sizeof(*c->bqp));
	if (!c->bqp)
		return -ENOMEM;
	for (int b = 0; b < ss->nbacks; b++) {
		struct unvme_qpair_opts o = {.depth = c->sqsize + 1u};
		uint32_t mqes = NVME_CAP_MQES(unvme_ctrlr_cap(ss->backs[b]->ctrlr)) + 1u;
		if (o.depth > mqes)
			o.depth = mqes;
		if (o.depth < 2)
			o.depth = 2;
		int rc = unvme_qpair_create(ss->backs[b]->ctrlr, &o, &c->bqp[b]);
		if (rc) {
			tgt_log(c->t, "backing device %s: no queue pair for host %s queue %u: %s",
				ss->backs[b]->devid, c->peer, c->qid, unvme_errmsg());
			tgt_io_close_queues(c);
			return rc;
		}
	}
	return 0;
}

void tgt_io_close_queues(struct tgt_conn *c)
{
	if (!c->bqp)
		return;
	for (int b = 0; b < c->ss->nbacks; b++)
		unvme_qpair_destroy(c->bqp[b]); /* NULL is fine; in-flight commands come back */
	free(c->bqp);
	c->bqp = NULL;
}

int tgt_io_poll(struct tgt_conn *c)
{
	int n = 0;
	for (int b = 0; c->bqp && b < c->ss->nbacks; b++) {
		int r = unvme_qpair_poll(c->bqp[b], 0);
		if (r > 0)
			n += r;
	}
	return n;
}
