/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Get Log Page at the target: the discovery log (a discovery controller's only page), the
 * controller's own pages (error, firmware slot, changed namespaces), and the devices' pages
 * (health, the KV vendor pages). Any length and dword offset within the page works.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unvme/spec/rdma.h"
#include "lib/driver/ctrlr.h"
#include "tgt.h"

static bool same_key(const struct dhchap_key *a, const struct dhchap_key *b)
{
	return a->len == b->len && a->transform == b->transform && dhchap_equal(a->key, b->key, a->len);
}

/* Whether the discovery log shows ss to the host of discovery connection c: the host must be
 * allowed on it, and when the subsystem wants DH-HMAC-CHAP from it, the host must have proven
 * that very key to the discovery controller (a host that only claims an NQN learns nothing
 * about the subsystems guarded by that NQN's key). */
static bool listed(const struct tgt_conn *c, const struct tgt_subsys *ss)
{
	bool ok;
	const struct tgt_host *h = tgt_host_allowed(ss, c->ctrl->hostnqn, &ok);
	if (!ok || !h || !h->has_key)
		return ok;
	const struct tgt_host *proven = c->ctrl->host;
	return proven && proven->has_key && !c->auth_needed && same_key(&proven->key, &h->key);
}

/* The discovery log for this host: every subsystem it may connect to (listed), at the address
 * it reached us at, and the discovery subsystem itself. */
static size_t discovery_log(struct tgt_conn *c, uint8_t **out)
{
	struct unvme_target *t = c->t;
	size_t n = 1;
	for (int i = 0; i < t->nsubs; i++)
		n += listed(c, &t->subs[i]);
	size_t len = sizeof(struct nvmf_disc_log_hdr) + n * sizeof(struct nvmf_disc_log_entry);
	uint8_t *p = calloc(1, len);
	if (!p)
		return 0;
	struct nvmf_disc_log_hdr *h = (void *)p;
	h->genctr = atomic_load(&t->genctr);
	h->numrec = n;
	struct nvmf_disc_log_entry *e = (void *)(p + sizeof(*h));
	for (int i = -1; i < t->nsubs; i++) {
		const char *nqn = NVMF_DISCOVERY_NQN;
		if (i >= 0) {
			if (!listed(c, &t->subs[i]))
				continue;
			nqn = t->subs[i].nqn;
		}
		e->trtype = c->rdma ? NVMF_TRTYPE_RDMA : NVMF_TRTYPE_TCP;
		e->adrfam = c->adrfam;
		e->subtype = i < 0 ? NVMF_SUBTYPE_DISCOVERY_CURRENT : NVMF_SUBTYPE_NVME;
		e->treq = (t->cfg->tls ? NVMF_TREQ_SECURE_REQUIRED : NVMF_TREQ_SECURE_NOT_REQUIRED) |
			  NVMF_TREQ_DISABLE_SQFLOW;
		e->portid = 1;
		e->cntlid = NVMF_CNTLID_DYNAMIC;
		e->asqsz = TGT_ADMIN_SLOTS;
		snprintf(e->trsvcid, sizeof(e->trsvcid), "%s", c->local_port);
		snprintf(e->subnqn, sizeof(e->subnqn), "%s", nqn);
		snprintf(e->traddr, sizeof(e->traddr), "%s", c->local_addr);
		if (c->rdma) { /* RDMA Transport Specification Figure 3: RC queue pairs, the CM */
			struct nvmf_rdma_tsas *ts = (void *)e->tsas;
			ts->qptype = NVMF_RDMA_QPTYPE_CONNECTED;
			ts->prtype = NVMF_RDMA_PRTYPE_NOT_SPECIFIED;
			ts->cms = NVMF_RDMA_CMS_RDMA_CM;
		} else {
			e->tsas[0] = t->cfg->tls ? NVMF_TCP_SECTYPE_TLS13 : NVMF_TCP_SECTYPE_NONE;
		}
		e++;
	}
	*out = p;
	return len;
}

/* Passes a page through from the device behind a namespace. */
static int device_log(struct tgt_cmd *cmd, struct unvme_ctrlr *b, uint8_t lid, uint32_t nsid,
		      uint32_t len, uint64_t off)
{
	int st = unvme_get_log_page(b, lid, nsid, cmd->buf, len, off);
	if (st < 0) {
		tgt_log(cmd->conn->t, "host %s: log page %02xh of a backing device failed: %s",
			cmd->conn->peer, lid, unvme_errmsg());
		return NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INTERNAL);
	}
	if (st == 0)
		cmd->send_len = len;
	return st;
}

int tgt_get_log(struct tgt_cmd *cmd)
{
	struct tgt_conn *c = cmd->conn;
	struct tgt_subsys *ss = c->ss;
	uint8_t lid = (uint8_t)cmd->sqe.cdw10;
	uint32_t numd = ((cmd->sqe.cdw10 >> 16) | (cmd->sqe.cdw11 & 0xffffu) << 16) + 1u;
	uint64_t off = cmd->sqe.cdw12 | (uint64_t)cmd->sqe.cdw13 << 32;
	uint64_t len = (uint64_t)numd * 4;
	if (len > cmd->len || !cmd->buf)
		return NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_DATA_SGL_LEN_INVALID);
	if (off % 4)
		return NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD);
	memset(cmd->buf, 0, (size_t)len);
	uint8_t *page = NULL;
	size_t plen = 0;
	if (ss->discovery) {
		if (lid != NVME_LOG_DISCOVERY)
			return NVME_STATUS(NVME_SCT_CMD, NVME_SC_INVALID_LOG_PAGE);
		plen = discovery_log(c, &page);
		if (!plen)
			return NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INTERNAL);
	} else {
		switch (lid) {
		case NVME_LOG_ERROR:          /* no errors recorded: zero entries */
			plen = 64;
			break;
		case NVME_LOG_CHANGED_NS:     /* the namespaces never change */
			plen = 4096;
			break;
		case NVME_LOG_FW_SLOT: {
			page = calloc(1, 512);
			if (!page)
				return NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INTERNAL);
			struct nvme_fw_slot_log *fw = (void *)page;
			fw->afi = 1;
			memcpy(fw->frs[0], "unvme01 ", 8);
			plen = 512;
			break;
		}
		case NVME_LOG_SMART:
			/* the health of the first device (the subsystem's, as a whole) */
			if (cmd->sqe.nsid != 0 && cmd->sqe.nsid != 0xffffffffu)
				return NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD);
			return device_log(cmd, ss->backs[0]->ctrlr, lid, 0xffffffffu, (uint32_t)len, off);
		case NVME_KVV_LOG_CAPACITY:
		case NVME_KVV_LOG_WAF:
		case NVME_KVV_LOG_ITER:
			if (ss->kv_ns < 0)
				return NVME_STATUS(NVME_SCT_CMD, NVME_SC_INVALID_LOG_PAGE);
			return device_log(cmd, ss->backs[ss->ns[ss->kv_ns].back]->ctrlr, lid, cmd->sqe.nsid,
					  (uint32_t)len, off);
		default:
			return NVME_STATUS(NVME_SCT_CMD, NVME_SC_INVALID_LOG_PAGE);
		}
	}
	if (off > plen) {
		free(page);
		return NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD);
	}
	if (page) {
		size_t n = plen - off < len ? plen - off : len;
		memcpy(cmd->buf, page + off, n);
		free(page);
	}
	cmd->send_len = (uint32_t)len;
	return 0;
}
