/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fio's zoned mode (zonemode=zbd) on zoned namespaces: the engine's zone callbacks. fio asks
 * for the zone model and the zones (at setup, on its main thread), the open zone limit, and
 * resets write pointers (on the job's thread, while the job's own I/O is in flight). Zone
 * commands go through a queue pair of their own per job file, so that polling them never
 * reaps the job's I/O completions outside getevents.
 */
#include <errno.h>
#include <string.h>

#include "fio_glue.h"

#define REPORT_BATCH 128u /* zone descriptors per Report Zones command */

/* The file's zone queue pair, created on first use (by whichever thread comes first: fio's
 * main thread at setup, then the job's thread; never both at once). */
static struct unvme_qpair *zone_qp(struct ufio_file *uf)
{
	if (!uf->zqp && unvme_qpair_create(uf->dev->ctrlr, NULL, &uf->zqp) != 0) {
		log_err("unvme: %s: cannot create a queue pair for zone commands: %s\n", uf->dev->name,
			unvme_errmsg());
		uf->zqp = NULL;
	}
	return uf->zqp;
}

void ufio_zones_release(struct ufio_file *uf)
{
	if (uf->zqp)
		unvme_qpair_destroy(uf->zqp);
	uf->zqp = NULL;
}

int ufio_zoned_model(struct thread_data *td, struct fio_file *f, enum zbd_zoned_model *model)
{
	struct ufio_file *uf = f->engine_data;
	if (!uf)
		return -EINVAL;
	*model = uf->kind == UFIO_BLOCK && unvme_ns_csi(uf->ns) == NVME_CSI_ZNS ? ZBD_HOST_MANAGED
										 : ZBD_NONE;
	return 0;
}

static enum zbd_zone_cond zone_cond(uint8_t state)
{
	switch (state) {
	case NVME_ZS_EMPTY: return ZBD_ZONE_COND_EMPTY;
	case NVME_ZS_IMP_OPEN: return ZBD_ZONE_COND_IMP_OPEN;
	case NVME_ZS_EXP_OPEN: return ZBD_ZONE_COND_EXP_OPEN;
	case NVME_ZS_CLOSED: return ZBD_ZONE_COND_CLOSED;
	case NVME_ZS_FULL: return ZBD_ZONE_COND_FULL;
	/* read-only zones cannot be written: fio leaves them alone as it does offline ones */
	default: return ZBD_ZONE_COND_OFFLINE;
	}
}

int ufio_report_zones(struct thread_data *td, struct fio_file *f, uint64_t offset,
			struct zbd_zone *zones, unsigned int nr_zones)
{
	struct ufio_file *uf = f->engine_data;
	struct unvme_qpair *qp = uf ? zone_qp(uf) : NULL;
	if (!qp)
		return -EIO;
	uint32_t shift = uf->lba_shift;
	struct unvme_zns_info zi;
	if (unvme_zns_info(uf->ns, &zi) != 0)
		return -EINVAL;
	uint64_t slba = offset >> shift;
	unsigned done = 0;
	struct unvme_zone batch[REPORT_BATCH];
	while (done < nr_zones && slba < unvme_ns_nlbas(uf->ns)) {
		uint32_t n = nr_zones - done < REPORT_BATCH ? nr_zones - done : REPORT_BATCH;
		int rc = unvme_zone_report(uf->ns, qp, slba, NVME_ZRAS_ALL, batch, &n, NULL);
		if (rc) {
			log_err("unvme: %s: report zones at LBA %llu failed: %s\n", uf->dev->name,
				(unsigned long long)slba,
				rc > 0 ? unvme_status_str(rc, NVME_CSI_ZNS) : unvme_errmsg());
			return -EIO;
		}
		if (n == 0)
			break;
		for (uint32_t i = 0; i < n; i++) {
			struct zbd_zone *z = &zones[done++];
			z->start = batch[i].zslba << shift;
			z->len = zi.zone_size << shift;
			z->capacity = batch[i].zcap << shift;
			z->type = ZBD_ZONE_TYPE_SWR;
			z->cond = zone_cond(batch[i].state);
			if (z->cond == ZBD_ZONE_COND_OFFLINE)
				z->wp = z->start;
			else if (z->cond == ZBD_ZONE_COND_FULL)
				z->wp = z->start + z->capacity;
			else
				z->wp = batch[i].wp << shift;
		}
		slba = batch[n - 1].zslba + zi.zone_size;
	}
	return (int)done;
}

int ufio_reset_wp(struct thread_data *td, struct fio_file *f, uint64_t offset, uint64_t length)
{
	struct ufio_file *uf = f->engine_data;
	struct unvme_qpair *qp = uf ? zone_qp(uf) : NULL;
	if (!qp)
		return -EIO;
	struct unvme_zns_info zi;
	if (unvme_zns_info(uf->ns, &zi) != 0)
		return -EINVAL;
	uint64_t zone_bytes = zi.zone_size << uf->lba_shift;
	/* every zone the byte range touches, from its start */
	for (uint64_t z = offset / zone_bytes * zone_bytes; z < offset + length; z += zone_bytes) {
		int rc = unvme_zone_mgmt_send_sync(uf->ns, qp, z >> uf->lba_shift, NVME_ZSA_RESET, false);
		if (rc) {
			log_err("unvme: %s: reset of the zone at byte %llu failed: %s\n", uf->dev->name,
				(unsigned long long)z,
				rc > 0 ? unvme_status_str(rc, NVME_CSI_ZNS) : unvme_errmsg());
			return -EIO;
		}
	}
	return 0;
}

int ufio_max_open_zones(struct thread_data *td, struct fio_file *f, unsigned int *max)
{
	struct ufio_file *uf = f->engine_data;
	struct unvme_zns_info zi;
	if (!uf || unvme_zns_info(uf->ns, &zi) != 0) {
		*max = 0; /* no limit on a namespace without zones */
		return 0;
	}
	*max = zi.max_open;
	return 0;
}
