/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Device-wide queries and commands: log pages, capacity, utilization, WAF, geometry, format.
 * These are admin commands, which the driver serialises and any thread may issue.
 */
#include <stdlib.h>
#include <string.h>

#include "kv_cache.h"
#include "kv_req.h"


static int log_page(struct kv_dev *d, uint8_t lid, void *buf, uint32_t len, const char *fn)
{
	int st = unvme_get_log_page(d->ctrlr, lid, 0xffffffffu, buf, len, 0);
	if (st == 0)
		return KV_SUCCESS;
	/* Get Log Page is an admin command: its statuses are the admin ones, never a KV
	 * command set's names for the same codes (0x09 is Invalid Log Page, not a KV offset). */
	kv_err("%s: log page 0x%02x (%u bytes) of device %d: %s", fn, lid, len, d->idx,
	       st > 0 ? unvme_status_str(st, NVME_CSI_NVM) : unvme_errmsg());
	if (st == NVME_STATUS(NVME_SCT_CMD, NVME_SC_INVALID_LOG_PAGE))
		return KV_ERR_DD_UNSUPPORTED_CMD;
	return st > 0 ? kv_result_from_status(st, false) : kv_result_from_errno(st);
}

KV_API int kv_get_log_page(uint64_t handle, uint8_t log_id, void *buffer, uint32_t buffer_size)
{
	const char *fn = "kv_get_log_page";
	struct kv_dev *d;
	int rc = kv_enter_dev(fn, handle, NULL, &d);
	if (rc)
		return rc;
	if (!buffer || !buffer_size || buffer_size % 4) {
		kv_err("%s: buffer %p of %u bytes: need a non-NULL buffer, a multiple of 4 bytes", fn,
		       buffer, buffer_size);
		rc = KV_ERR_SDK_INVALID_PARAM;
	} else {
		rc = log_page(d, log_id, buffer, buffer_size, fn);
	}
	kv_leave();
	return rc;
}

/* Runs fn's body with a valid device; the uint64_t queries report failure as
 * KV_ERR_INVALID_VALUE (UINT64_MAX). */
#define WITH_DEV(fn_name, fail)                                  \
	struct kv_dev *d;                                        \
	if (kv_enter_dev(fn_name, handle, NULL, &d) != KV_SUCCESS) \
		return fail;

KV_API uint64_t kv_get_total_size(uint64_t handle)
{
	WITH_DEV("kv_get_total_size", KV_ERR_INVALID_VALUE)
	uint64_t v = d->num_sectors * d->sector_size;
	kv_leave();
	return v;
}

KV_API uint32_t kv_get_sector_size(uint64_t handle)
{
	WITH_DEV("kv_get_sector_size", UINT32_MAX)
	uint32_t v = d->sector_size;
	kv_leave();
	return v;
}

KV_API uint64_t kv_get_num_sectors(uint64_t handle)
{
	WITH_DEV("kv_get_num_sectors", KV_ERR_INVALID_VALUE)
	uint64_t v = d->num_sectors;
	kv_leave();
	return v;
}

/* LBA mode, as the original: the bytes in use, NUSE (Identify Namespace, the blocks the
 * device holds data for) times the sector size; 0 on a namespace never written. */
static uint64_t used_from_identify(struct kv_dev *d)
{
	struct nvme_id_ns *id = unvme_dma_zalloc(4096, 4096);
	uint64_t v = KV_ERR_INVALID_VALUE;
	int st = id ? unvme_identify(d->ctrlr, 0x00, d->nsid, 0, id) : -12;
	if (st == 0)
		v = id->nuse * (uint64_t)d->sector_size;
	else
		kv_err("kv_get_used_size: Identify Namespace %u of device %d: %s", d->nsid, d->idx,
		       st > 0 ? unvme_status_str(st, NVME_CSI_NVM) : unvme_errmsg());
	unvme_dma_free(id);
	return v;
}

/* KV mode: the vendor log C0h (include/unvme/spec/kv.h), utilization in 1/100 percent. */
static uint64_t used_from_log(struct kv_dev *d)
{
	struct nvme_kvv_log_capacity l;
	if (log_page(d, NVME_KVV_LOG_CAPACITY, &l, sizeof(l), "kv_get_used_size") != KV_SUCCESS)
		return KV_ERR_INVALID_VALUE;
	return l.utilization > 10000 ? 10000 : l.utilization;
}

KV_API uint64_t kv_get_used_size(uint64_t handle)
{
	WITH_DEV("kv_get_used_size", KV_ERR_INVALID_VALUE)
	/* KV: utilization in 1/100 percent (the device's log page C0h); LBA: bytes in use */
	uint64_t v = d->lba ? used_from_identify(d) : used_from_log(d);
	kv_leave();
	return v;
}

KV_API uint64_t kv_get_waf(uint64_t handle)
{
	WITH_DEV("kv_get_waf", KV_ERR_INVALID_VALUE)
	struct nvme_kvv_log_waf l;
	uint64_t v = KV_ERR_INVALID_VALUE;
	if (log_page(d, NVME_KVV_LOG_WAF, &l, sizeof(l), "kv_get_waf") == KV_SUCCESS)
		v = l.waf; /* tenths: 10 = 1.0 */
	kv_leave();
	return v;
}

/* Format NVM of every namespace with the LBA format in use. Iterators opened on the device are
 * closed first (a format ends them anyway, and the device's table would otherwise show stale
 * handles); the cache is cleared before and after (kv_cache.h). */
KV_API int kv_format_device(uint64_t handle, int erase_user_data)
{
	const char *fn = "kv_format_device";
	struct kv_state *s;
	struct kv_dev *d;
	int rc = kv_enter_dev(fn, handle, &s, &d);   /* a bad handle is KV_ERR_DD_NO_DEVICE, as documented */
	if (rc)
		return rc;
	if (erase_user_data != KV_FORMAT_MAPDATA && erase_user_data != KV_FORMAT_USERDATA) {
		kv_err("%s: erase_user_data %d is not 0 or 1", fn, erase_user_data);
		kv_leave();
		return KV_ERR_SDK_INVALID_PARAM;
	}
	pthread_mutex_lock(&d->admin_lock);
	if (!d->lba) {
		kv_iterate_handle_info info[KV_MAX_ITERATE_HANDLE];
		if (kv_iterator_table(d, info, KV_MAX_ITERATE_HANDLE) == KV_SUCCESS)
			for (int i = 0; i < KV_MAX_ITERATE_HANDLE; i++)
				if (info[i].status == ITERATE_HANDLE_OPENED && info[i].handle_id)
					kv_iterator_close(s, d, info[i].handle_id);
	}
	if (s->cache)
		kv_cache_clear(s->cache);
	struct nvme_id_ns *id = unvme_dma_zalloc(4096, 4096);
	uint8_t lbaf = 0;
	if (id && unvme_identify(d->ctrlr, 0x00, d->nsid, 0, id) == 0)
		lbaf = (uint8_t)nvme_ns_flbas_index(id);
	unvme_dma_free(id);
	int st = unvme_format(d->ctrlr, 0xffffffffu, lbaf, (uint8_t)erase_user_data);
	if (st) {
		kv_err("%s: Format NVM of device %d (ses %d): %s", fn, d->idx, erase_user_data,
		       st > 0 ? unvme_status_str(st, NVME_CSI_NVM) : unvme_errmsg());
		rc = st > 0 ? kv_result_from_status(st, false) : kv_result_from_errno(st);
	}
	for (int i = 0; i <= KV_MAX_ITERATE_HANDLE; i++)
		atomic_store(&d->iter_type[i], 0);
	if (s->cache)
		kv_cache_clear(s->cache);
	kv_dev_refresh(d);
	pthread_mutex_unlock(&d->admin_lock);
	kv_log(2, "%s: device %d formatted (ses %d): 0x%x", fn, d->idx, erase_user_data, rc);
	kv_leave();
	return rc;
}
