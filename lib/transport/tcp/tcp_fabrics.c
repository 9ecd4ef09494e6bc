/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fabrics layer (lib/fabrics/nvmf_host.h) on NVMe/TCP connections: its queue is a
 * tcp_queue, its commands run synchronously on the connection (tcp_queue_exec) or in two
 * halves (send, then reap at each look; on the admin connection the caller holds
 * tc->regs.lock for each call), and a queue is connected once its socket is open and its
 * in-capsule size known.
 */
#include <errno.h>

#include "lib/driver/ctrlr.h"
#include "tcp_ctrlr.h"

static int tcp_exec(void *queue, struct nvme_sqe *cmd, void *buf, size_t len, bool to_ctrl,
		    struct nvme_cqe *cpl, uint32_t timeout_ms)
{
	return tcp_queue_exec(queue, cmd, buf, len, to_ctrl, cpl, timeout_ms);
}

static int tcp_send(void *queue, struct nvme_sqe *cmd)
{
	return tcp_queue_send(queue, cmd, NULL, 0, false);
}

static int tcp_reap(void *queue, struct nvme_cqe *cpl, uint32_t timeout_ms)
{
	return tcp_queue_reap(queue, cpl, timeout_ms);
}

static const char *tcp_peer(const void *queue)
{
	const struct tcp_queue *q = queue;
	return q->conn.peer;
}

static const struct nvmf_queue_ops tcp_nvmf_ops = {
	.exec = tcp_exec,
	.send = tcp_send,
	.reap = tcp_reap,
	.peer = tcp_peer,
};

void tcp_fabrics_init(struct tcp_ctrlr *tc)
{
	nvmf_assoc_init(&tc->fab, &tcp_nvmf_ops, &tc->admin, &tc->p.nvmf, tc->c->opts.admin_timeout_ms);
}

void tcp_fabrics_set_icd(struct tcp_ctrlr *tc, struct tcp_queue *q, uint16_t qid)
{
	q->icd_max = qid == 0 ? NVME_TCP_ADMIN_CCSZ
			      : nvmf_io_incapsule((const void *)tc->c->id.nvmeof);
	if (tc->p.nvmf.incapsule >= 0 && (uint32_t)tc->p.nvmf.incapsule < q->icd_max)
		q->icd_max = (uint32_t)tc->p.nvmf.incapsule;
}

int tcp_fabrics_connect_conn(struct tcp_ctrlr *tc, struct tcp_queue *q, uint16_t qid, uint16_t sqsize,
			     uint16_t cntlid, uint16_t *cntlid_out)
{
	int rc = tcp_queue_open_conn(q);
	if (rc)
		return rc;
	atomic_store(&q->dead, false);
	q->dead_why = NULL;
	rc = nvmf_connect(&tc->fab, q, qid, sqsize, cntlid, cntlid_out);
	if (rc)
		tcp_queue_close_conn(q);
	return rc;
}

int tcp_fabrics_connect(struct tcp_ctrlr *tc, struct tcp_queue *q, uint16_t qid, uint16_t sqsize,
			uint16_t cntlid, uint16_t *cntlid_out)
{
	tcp_fabrics_set_icd(tc, q, qid);
	return tcp_fabrics_connect_conn(tc, q, qid, sqsize, cntlid, cntlid_out);
}

int tcp_fabrics_disconnect(struct tcp_ctrlr *tc, struct tcp_queue *q)
{
	const struct nvmf_id_ctrl_fabrics *f = (const void *)tc->c->id.nvmeof;
	if (!(f->ofcs & 1u) || q->conn.fd < 0 || atomic_load(&q->dead))
		return 0; /* Disconnect is optional: closing the connection says the same */
	return nvmf_disconnect(&tc->fab, q);
}
