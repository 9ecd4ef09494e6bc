/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A KV namespace's life and what it reports: creation (memory or file engine), Identify
 * (CNS 00h as a 512-byte-sector device the way Samsung KV SSDs presented themselves, CNS 05h
 * the KV structure), Format NVM, the vendor log pages and the dispatch between the standard
 * and the vendor command sets (their opcodes do not overlap).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hw/emu/emu_device.h"
#include "hw/emu/ns/kv_ns.h"
#include "hw/emu/ns/ns_internal.h"

#define KV_RECORD_OVERHEAD 32u  /* record header and alignment, for the max-keys estimate */

int emu_kv_create(const struct emu_ns_params *p, struct emu_kv **out, char *err, size_t errlen)
{
	struct emu_kv *kv = NULL;
	*out = NULL;
	bool ext = p->ext && p->media && p->media->kv_ops;
	if (p->size_bytes == 0 || !(kv = calloc(1, sizeof(*kv)))) {
		if (ext)
			p->media->kv_ops->close(p->media->ctx);
		emu_ns_set_error(err, errlen, p->size_bytes ? "out of memory" : "a KV namespace needs a capacity");
		return p->size_bytes ? -ENOMEM : -EINVAL;
	}
	int r = ext ? kv_store_open_ext(p->size_bytes, p->media->kv_ops, p->media->ctx, &kv->st, err, errlen)
		    : kv_store_open(p->size_bytes, p->path, &kv->st, err, errlen);
	if (r) {
		free(kv);
		return r;
	}
	kv_iters_init(&kv->its);
	memcpy(kv->nguid, p->nguid, 16);
	memcpy(kv->eui64, p->eui64, 8);
	*out = kv;
	return 0;
}

void emu_kv_destroy(struct emu_kv *kv)
{
	if (!kv)
		return;
	kv_iters_destroy(&kv->its);
	kv_store_close(kv->st);
	free(kv);
}

uint64_t emu_kv_capacity(const struct emu_kv *kv)
{
	return kv_store_capacity(kv->st);
}

uint16_t emu_kv_execute(struct emu_kv *kv, struct emu_ns *self, const struct nvme_sqe *cmd,
			struct emu_io_ctx *io)
{
	io->dw0 = 0;
	bool changed = false;
	uint16_t st = cmd->opc >= 0x80 ? emu_kv_vendor_execute(kv, cmd, io, &changed)
				       : emu_kv_std_execute(kv, cmd, io, &changed);
	if (changed && kv_store_persistent(kv->st))
		io->commit = self;
	return st;
}

void emu_kv_identify(struct emu_kv *kv, struct nvme_id_ns *id)
{
	struct kv_store_stats st;
	kv_store_get_stats(kv->st, &st);
	memset(id, 0, sizeof(*id));
	id->nsze = st.capacity / EMU_KV_SECTOR;
	id->ncap = id->nsze;
	id->nuse = (st.used + EMU_KV_SECTOR - 1) / EMU_KV_SECTOR;
	id->nlbaf = 0;  /* one format: 512-byte "sectors" */
	id->flbas = 0;
	id->lbaf[0].lbads = 9;
	for (unsigned i = 0; i < 8; i++)
		id->nvmcap[i] = (uint8_t)(st.capacity >> (8 * i));
	memcpy(id->nguid, kv->nguid, 16);
	memcpy(id->eui64, kv->eui64, 8);
}

void emu_kv_identify_kv(struct emu_kv *kv, struct nvme_id_ns_kv *id)
{
	struct kv_store_stats st;
	kv_store_get_stats(kv->st, &st);
	memset(id, 0, sizeof(*id));
	id->nsze = st.capacity;
	id->nuse = st.used;
	id->nkvf = 0;  /* one KV format, 0's based */
	/* values are copied in 4-byte units (the vendor protocol counts dwords) */
	id->novg = 4;
	memcpy(id->nguid, kv->nguid, 16);
	memcpy(id->eui64, kv->eui64, 8);
	/* the vendor protocol takes 255-byte keys; the standard commands carry at most 16 */
	id->kvf[0].mkl = NVME_KVV_MAX_KEY;
	id->kvf[0].rp = 0;
	id->kvf[0].mvl = NVME_KVV_MAX_VALUE;
	/* every key needs at least one record: header + 4-byte key */
	uint64_t mnk = st.capacity / (KV_RECORD_OVERHEAD);
	id->kvf[0].mnk = mnk > UINT32_MAX ? UINT32_MAX : (uint32_t)mnk;
}

/* Format NVM: one format (index 0); any secure erase setting removes every key. Iterators
 * are closed: their snapshots name keys that are gone. */
uint16_t emu_kv_format(struct emu_kv *kv, uint8_t lbaf, uint8_t ses)
{
	if (lbaf != 0)
		return emu_ns_status(NVME_SCT_CMD, NVME_SC_INVALID_FORMAT, true);
	if (ses != NVME_FMT_SES_NONE && ses != NVME_FMT_SES_USER)
		return emu_ns_status(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD, true);
	kv_iters_close_all(&kv->its);
	if (kv_store_erase(kv->st) != 0)
		return emu_ns_status(NVME_SCT_GENERIC, NVME_SC_INTERNAL, false);
	return 0;
}

uint16_t emu_kv_log(struct emu_kv *kv, uint8_t lid, void *out, uint32_t size)
{
	struct kv_store_stats st;
	kv_store_get_stats(kv->st, &st);
	switch (lid) {
	case NVME_KVV_LOG_CAPACITY: {
		if (size < sizeof(struct nvme_kvv_log_capacity))
			break;
		struct nvme_kvv_log_capacity *l = out;
		memset(l, 0, sizeof(*l));
		l->capacity = st.capacity;
		l->used = st.used;
		l->nr_keys = st.nr_keys;
		l->nr_keys_ks[0] = st.nr_keys_ks[0];
		l->nr_keys_ks[1] = st.nr_keys_ks[1];
		l->damaged_spans = st.damaged_spans;
		l->damaged_bytes = st.damaged_bytes;
		uint64_t u = st.capacity ? st.used * 10000 / st.capacity : 0;
		l->utilization = (uint32_t)(u > 10000 ? 10000 : u);
		return 0;
	}
	case NVME_KVV_LOG_WAF: {
		if (size < sizeof(struct nvme_kvv_log_waf))
			break;
		struct nvme_kvv_log_waf *l = out;
		memset(l, 0, sizeof(*l));
		l->host_bytes = st.host_bytes;
		l->media_bytes = st.media_bytes;
		l->compactions = st.compactions;
		uint64_t w = st.host_bytes ? st.media_bytes * 10 / st.host_bytes : 10;
		l->waf = (uint32_t)(w > UINT32_MAX ? UINT32_MAX : w);
		return 0;
	}
	case NVME_KVV_LOG_ITER:
		if (size < NVME_KVV_MAX_ITERATORS * sizeof(struct nvme_kvv_iter_info))
			break;
		kv_iter_info(&kv->its, out);
		return 0;
	default:
		break;
	}
	return emu_ns_status(NVME_SCT_CMD, NVME_SC_INVALID_LOG_PAGE, true);
}
