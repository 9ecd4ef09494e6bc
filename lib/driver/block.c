/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Block I/O on NVM namespaces (NVM Command Set 1.0 section 3.3). The driver does not check
 * LBA ranges itself: the controller does, and its status (LBA Out of Range) is what the
 * caller should see, exactly as from hardware.
 */
#include <errno.h>
#include <stdlib.h>

#include "ctrlr.h"
#include "errmsg.h"
#include "qpair_submit.h"

static int check_ns(const struct unvme_ns *ns, struct unvme_qpair *qp, uint32_t nlb)
{
	if (!ns || !qp)
		return unvme_fail(-EINVAL, "namespace and queue pair are required");
	if (ns->ctrlr != qp->ctrlr)
		return unvme_fail(-EINVAL, "queue pair %u belongs to another controller", qp->qid);
	if (ns->csi != NVME_CSI_NVM && ns->csi != NVME_CSI_ZNS)
		return unvme_fail(-EINVAL, "namespace %u uses command set %u, not NVM", ns->nsid, ns->csi);
	if (nlb == 0 || nlb > 65536)
		return unvme_fail(-EINVAL, "block count %u is outside 1..65536", nlb);
	return 0;
}

static void rw_cmd(struct nvme_sqe *cmd, uint8_t opc, const struct unvme_ns *ns, uint64_t slba,
		   uint32_t nlb)
{
	*cmd = (struct nvme_sqe){0};
	cmd->opc = opc;
	cmd->nsid = ns->nsid;
	cmd->cdw10 = (uint32_t)slba;
	cmd->cdw11 = (uint32_t)(slba >> 32);
	cmd->cdw12 = nlb - 1;
}

/* Why data_cmd refuses a command (never 0 when io_args_ok said no). Out of line: a call the
 * I/O path makes would have it save registers on every command (see qpair_submit_rw). */
static __attribute__((cold, noinline)) int data_cmd_refused(const struct unvme_ns *ns,
							    struct unvme_qpair *qp,
							    const void *buf, uint32_t nlb)
{
	int rc = check_ns(ns, qp, nlb);
	if (rc)
		return rc;
	return unvme_fail(-EINVAL, "data buffer is required");
}

/* check_ns's rules and a buffer, as one test for the I/O path. */
static inline bool io_args_ok(const struct unvme_ns *ns, const struct unvme_qpair *qp,
			      const void *buf, uint32_t nlb)
{
	return ns && qp && buf && ns->ctrlr == qp->ctrlr &&
	       (ns->csi == NVME_CSI_NVM || ns->csi == NVME_CSI_ZNS) && nlb - 1u < 65536u;
}

static inline int data_cmd(struct unvme_ns *ns, struct unvme_qpair *qp, uint8_t opc,
			   const void *buf, uint64_t slba, uint32_t nlb, unvme_cmd_cb cb, void *arg)
{
	if (unlikely(!io_args_ok(ns, qp, buf, nlb)))
		return data_cmd_refused(ns, qp, buf, nlb);
	return qpair_submit_rw(qp, opc, ns->nsid, slba, nlb, (void *)buf,
			       (size_t)nlb << ns->lba_shift, cb, arg);
}

UNVME_API int unvme_read(struct unvme_ns *ns, struct unvme_qpair *qp, void *buf, uint64_t slba,
			 uint32_t nlb, unvme_cmd_cb cb, void *arg)
{
	return data_cmd(ns, qp, NVME_CMD_READ, buf, slba, nlb, cb, arg);
}

UNVME_API int unvme_write(struct unvme_ns *ns, struct unvme_qpair *qp, const void *buf, uint64_t slba,
			  uint32_t nlb, unvme_cmd_cb cb, void *arg)
{
	return data_cmd(ns, qp, NVME_CMD_WRITE, buf, slba, nlb, cb, arg);
}

UNVME_API int unvme_compare(struct unvme_ns *ns, struct unvme_qpair *qp, const void *buf,
			    uint64_t slba, uint32_t nlb, unvme_cmd_cb cb, void *arg)
{
	return data_cmd(ns, qp, NVME_CMD_COMPARE, buf, slba, nlb, cb, arg);
}

UNVME_API int unvme_flush(struct unvme_ns *ns, struct unvme_qpair *qp, unvme_cmd_cb cb, void *arg)
{
	int rc = check_ns(ns, qp, 1);
	if (rc)
		return rc;
	struct nvme_sqe cmd = {0};
	cmd.opc = NVME_CMD_FLUSH;
	cmd.nsid = ns->nsid;
	return unvme_qpair_submit(qp, &cmd, NULL, 0, cb, arg);
}

UNVME_API int unvme_write_zeroes(struct unvme_ns *ns, struct unvme_qpair *qp, uint64_t slba,
				 uint32_t nlb, unvme_cmd_cb cb, void *arg)
{
	int rc = check_ns(ns, qp, nlb);
	if (rc)
		return rc;
	struct nvme_sqe cmd;
	rw_cmd(&cmd, NVME_CMD_WRITE_ZEROES, ns, slba, nlb);
	return unvme_qpair_submit(qp, &cmd, NULL, 0, cb, arg);
}

/* Deallocate carries its range in host memory that must live until completion. */
struct dealloc_ctx {
	unvme_cmd_cb cb;
	void *arg;
	struct nvme_dsm_range *range;
};

static void dealloc_done(void *arg, const struct nvme_cqe *cpl)
{
	struct dealloc_ctx *d = arg;
	unvme_cmd_cb cb = d->cb;
	void *cb_arg = d->arg;
	unvme_dma_free(d->range);
	free(d);
	if (cb)
		cb(cb_arg, cpl);
}

UNVME_API int unvme_deallocate(struct unvme_ns *ns, struct unvme_qpair *qp, uint64_t slba,
			       uint32_t nlb, unvme_cmd_cb cb, void *arg)
{
	int rc = check_ns(ns, qp, 1);
	if (rc)
		return rc;
	if (nlb == 0)
		return unvme_fail(-EINVAL, "block count 0");
	struct dealloc_ctx *d = malloc(sizeof(*d));
	struct nvme_dsm_range *range = unvme_dma_alloc(sizeof(*range), 16);
	if (!d || !range) {
		free(d);
		unvme_dma_free(range);
		return -ENOMEM;
	}
	*range = (struct nvme_dsm_range){.nlb = nlb, .slba = slba};
	*d = (struct dealloc_ctx){.cb = cb, .arg = arg, .range = range};
	struct nvme_sqe cmd = {0};
	cmd.opc = NVME_CMD_DSM;
	cmd.nsid = ns->nsid;
	cmd.cdw10 = 0; /* one range */
	cmd.cdw11 = NVME_DSM_ATTR_AD;
	rc = unvme_qpair_submit(qp, &cmd, range, sizeof(*range), dealloc_done, d);
	if (rc) {
		unvme_dma_free(range);
		free(d);
	}
	return rc;
}

/* ---- synchronous forms ---- */

static int sync_data(struct unvme_ns *ns, struct unvme_qpair *qp, uint8_t opc, const void *buf,
		     uint64_t slba, uint32_t nlb)
{
	int rc = check_ns(ns, qp, nlb);
	if (rc)
		return rc;
	struct nvme_sqe cmd;
	rw_cmd(&cmd, opc, ns, slba, nlb);
	size_t len = buf ? (size_t)nlb << ns->lba_shift : 0;
	if (opc != NVME_CMD_WRITE_ZEROES && !buf)
		return unvme_fail(-EINVAL, "data buffer is required");
	return unvme_qpair_cmd_sync(qp, &cmd, (void *)buf, len, NULL);
}

UNVME_API int unvme_read_sync(struct unvme_ns *ns, struct unvme_qpair *qp, void *buf, uint64_t slba,
			      uint32_t nlb)
{
	return sync_data(ns, qp, NVME_CMD_READ, buf, slba, nlb);
}

UNVME_API int unvme_write_sync(struct unvme_ns *ns, struct unvme_qpair *qp, const void *buf,
			       uint64_t slba, uint32_t nlb)
{
	return sync_data(ns, qp, NVME_CMD_WRITE, buf, slba, nlb);
}

UNVME_API int unvme_compare_sync(struct unvme_ns *ns, struct unvme_qpair *qp, const void *buf,
				 uint64_t slba, uint32_t nlb)
{
	return sync_data(ns, qp, NVME_CMD_COMPARE, buf, slba, nlb);
}

UNVME_API int unvme_write_zeroes_sync(struct unvme_ns *ns, struct unvme_qpair *qp, uint64_t slba,
				      uint32_t nlb)
{
	return sync_data(ns, qp, NVME_CMD_WRITE_ZEROES, NULL, slba, nlb);
}

UNVME_API int unvme_flush_sync(struct unvme_ns *ns, struct unvme_qpair *qp)
{
	int rc = check_ns(ns, qp, 1);
	if (rc)
		return rc;
	struct nvme_sqe cmd = {0};
	cmd.opc = NVME_CMD_FLUSH;
	cmd.nsid = ns->nsid;
	return unvme_qpair_cmd_sync(qp, &cmd, NULL, 0, NULL);
}

struct sync_flag {
	volatile int done;
	int status;
};

static void sync_flag_cb(void *arg, const struct nvme_cqe *cpl)
{
	struct sync_flag *f = arg;
	f->status = NVME_STATUS_FROM_CQE(cpl->status);
	f->done = 1;
}

UNVME_API int unvme_deallocate_sync(struct unvme_ns *ns, struct unvme_qpair *qp, uint64_t slba,
				    uint32_t nlb)
{
	struct sync_flag f = {0};
	int rc = unvme_deallocate(ns, qp, slba, nlb, sync_flag_cb, &f);
	if (rc)
		return rc;
	rc = qpair_wait(qp, &f.done, 0);
	return rc ? rc : f.status;
}
