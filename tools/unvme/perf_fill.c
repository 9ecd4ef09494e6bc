/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * unvme perf --fill: every block of every namespace under test is written once before the
 * run, so reads move real data. An emulated memory namespace that was never written reads
 * from the kernel's zero page, which would flatter a read benchmark; fio's equivalent is a
 * sequential write job before the measured one.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "perf.h"

/* Large sequential writes; 8 in flight hide the per-command cost. */
#define FILL_QD 8u

struct fill_io {
	int status;
	bool busy;
};

static void fill_done(void *arg, const struct nvme_cqe *cpl)
{
	struct fill_io *io = arg;
	io->status = NVME_STATUS_FROM_CQE(cpl->status);
	io->busy = false;
}

static int fill_target(const struct perf_target *tg, struct unvme_ctrlr *c, bool zeroes, char *err,
		       size_t errlen)
{
	uint32_t chunk = unvme_ctrlr_max_xfer(c);
	if (chunk > (1u << 20))
		chunk = 1u << 20;
	chunk -= chunk % tg->lba_size;
	uint64_t nlbas = unvme_ns_nlbas(tg->ns), per = chunk / tg->lba_size;
	struct unvme_qpair *qp = NULL;
	struct unvme_qpair_opts qo = { .depth = FILL_QD * 2 };
	int rc = unvme_qpair_create(c, &qo, &qp);
	uint8_t *buf = rc ? NULL : unvme_dma_alloc((size_t)chunk * FILL_QD, 4096);
	if (rc || !buf) {
		snprintf(err, errlen, "%s", rc ? unvme_errmsg() : "out of DMA memory");
		if (qp)
			unvme_qpair_destroy(qp);
		return rc ? rc : -ENOMEM;
	}
	/* A pattern, so the device really stores data; zeroes under --verify, whose reads take
	 * zero blocks as never written and any other unstamped block as corrupt. Written zeroes
	 * still occupy real memory, unlike never-written blocks. */
	for (size_t i = 0; i < (size_t)chunk * FILL_QD; i++)
		buf[i] = zeroes ? 0 : (uint8_t)(i * 131u + 7u);
	struct fill_io io[FILL_QD];
	memset(io, 0, sizeof(io));
	uint64_t next = 0;
	int failed = 0;
	for (;;) {
		bool any = false;
		for (unsigned k = 0; k < FILL_QD; k++) {
			if (io[k].busy) {
				any = true;
				continue;
			}
			if (io[k].status && !failed)
				failed = io[k].status;
			if (next >= nlbas || failed)
				continue;
			uint32_t n = (uint32_t)(nlbas - next < per ? nlbas - next : per);
			io[k].busy = true;
			rc = unvme_write(tg->ns, qp, buf + (size_t)k * chunk, next, n, fill_done, &io[k]);
			if (rc) {
				io[k].busy = false;
				failed = rc;
				continue;
			}
			next += n;
			any = true;
		}
		if (!any)
			break;
		if (unvme_qpair_poll(qp, 0) < 0 && !failed)
			failed = -EIO;
	}
	if (failed)
		snprintf(err, errlen, "%s", failed > 0 ? unvme_status_str(failed, unvme_ns_csi(tg->ns))
						       : unvme_errmsg());
	unvme_dma_free(buf);
	unvme_qpair_destroy(qp);
	return failed;
}

int perf_fill(const struct perf_config *cfg, char *err, size_t errlen)
{
	for (unsigned i = 0; i < cfg->ntargets; i++) {
		const struct perf_target *tg = &cfg->targets[i];
		char why[256] = "";
		int rc = fill_target(tg, cfg->ctrlrs[tg->ctrlr], cfg->verify, why, sizeof(why));
		if (rc) {
			snprintf(err, errlen, "filling %s namespace %u failed: %s", tg->devid, tg->nsid, why);
			return rc;
		}
	}
	return 0;
}
