/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A namespace of the emulated controller: its creation from the device description, its
 * geometry (LBA format), Format NVM, the volatile write cache switch and shutdown sync.
 * Identify data is in ns_identify.c, I/O command execution in nvm_io.c.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/emu/emu.h"
#include "hw/emu/emu_device.h"
#include "hw/emu/ns/kv_ns.h"
#include "hw/emu/ns/ns_backend.h"
#include "hw/emu/ns/ns_internal.h"
#include "hw/emu/ns/ns_zns.h"

void emu_ns_set_error(char *err, size_t errlen, const char *fmt, ...)
{
	if (!err || !errlen)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static int open_backend(const struct emu_ns_params *p, struct emu_ns_backend **be, char *err,
			size_t errlen)
{
	switch (p->kind) {
	case EMU_NS_MEM:
	case EMU_NS_NULL:
		if (p->size_bytes == 0) {
			emu_ns_set_error(err, errlen, "a %s namespace needs a size",
					 p->kind == EMU_NS_MEM ? "memory" : "null");
			return -EINVAL;
		}
		if (p->size_bytes % p->lba_size) {
			emu_ns_set_error(err, errlen,
					 "namespace size %llu is not a multiple of the LBA size %u",
					 (unsigned long long)p->size_bytes, p->lba_size);
			return -EINVAL;
		}
		return p->kind == EMU_NS_MEM ? emu_ns_mem_open(p->size_bytes, be, err, errlen)
					     : emu_ns_null_open(p->size_bytes, be, err, errlen);
	case EMU_NS_FILE: /* checks the size itself, naming the file */
		return emu_ns_file_open(p->path, p->size_bytes, p->lba_size, be, err, errlen);
	case EMU_NS_ZNS: /* zones in memory, or in a file when a path is given */
		if (p->path[0])
			return emu_ns_file_open(p->path, p->size_bytes, p->lba_size, be, err, errlen);
		if (p->size_bytes == 0) {
			emu_ns_set_error(err, errlen, "a zoned namespace in memory needs a size");
			return -EINVAL;
		}
		return emu_ns_mem_open(p->size_bytes, be, err, errlen);
	case EMU_NS_EXT:
		return emu_ns_ext_open(p->size_bytes, p->media, be, err, errlen);
	case EMU_NS_KV:
		return -EINVAL; /* built by emu_ns_create without a block backend */
	}
	emu_ns_set_error(err, errlen, "unknown namespace kind %d", (int)p->kind);
	return -EINVAL;
}

/* External media not handed on because creation failed first: closed here, as promised. */
static int drop_media(const struct emu_ns_params *p, int rc)
{
	if (p->ext && p->media) {
		if (p->media->ops)
			p->media->ops->close(p->media->ctx);
		else if (p->media->kv_ops)
			p->media->kv_ops->close(p->media->ctx);
	}
	return rc;
}

int emu_ns_create(const struct emu_ns_params *p, uint32_t nsid, struct emu_ns **out, char *err,
		  size_t errlen)
{
	if (!p || !out) {
		emu_ns_set_error(err, errlen, "no namespace description");
		return -EINVAL;
	}
	*out = NULL;
	if (p->ext && (!p->media || (p->kind == EMU_NS_EXT ? !p->media->ops : !p->media->kv_ops))) {
		emu_ns_set_error(err, errlen, "namespace %u: an ext or kvext namespace needs media from the "
				 "program that creates the device", nsid);
		return -EINVAL;
	}
	/* A key-value namespace has no blocks: its engine replaces the backend. */
	if (p->kind == EMU_NS_KV) {
		struct emu_ns *ns = calloc(1, sizeof(*ns));
		if (!ns) {
			emu_ns_set_error(err, errlen, "out of memory");
			return drop_media(p, -ENOMEM);
		}
		int r = emu_kv_create(p, &ns->kv, err, errlen);
		if (r) {
			free(ns);
			return r;
		}
		atomic_init(&ns->geom, 9u | EMU_NS_KV_GEOM);
		atomic_init(&ns->write_cache, true);
		memcpy(ns->nguid, p->nguid, sizeof(ns->nguid));
		memcpy(ns->eui64, p->eui64, sizeof(ns->eui64));
		*out = ns;
		return 0;
	}
	/* The two LBA formats Identify Namespace offers (ns_identify.c). */
	unsigned shift;
	if (p->lba_size == 512)
		shift = 9;
	else if (p->lba_size == 4096)
		shift = 12;
	else {
		emu_ns_set_error(err, errlen, "LBA size %u is not supported (use 512 or 4096)",
				 p->lba_size);
		return drop_media(p, -EINVAL);
	}
	/* nsid is the controller's business (it routes commands); nothing here depends on it. */
	(void)nsid;

	struct emu_ns *ns = calloc(1, sizeof(*ns));
	if (!ns) {
		emu_ns_set_error(err, errlen, "out of memory");
		return drop_media(p, -ENOMEM);
	}
	int r = open_backend(p, &ns->be, err, errlen);
	if (r) {
		free(ns);
		return r;
	}
	if (p->kind == EMU_NS_ZNS) {
		r = emu_zns_create(p, ns->be, &ns->zns, err, errlen);
		if (r) {
			ns->be->ops->destroy(ns->be);
			free(ns);
			return r;
		}
		shift |= EMU_NS_ZONED_GEOM;
	}
	atomic_init(&ns->geom, shift);
	atomic_init(&ns->write_cache, true);
	memcpy(ns->nguid, p->nguid, sizeof(ns->nguid));
	memcpy(ns->eui64, p->eui64, sizeof(ns->eui64));
	*out = ns;
	return 0;
}

void emu_ns_destroy(struct emu_ns *ns)
{
	if (!ns)
		return;
	if (ns->kv) {
		emu_kv_destroy(ns->kv);
	} else {
		emu_zns_destroy(ns->zns);
		ns->be->ops->destroy(ns->be);
	}
	free(ns);
}

uint8_t emu_ns_csi(const struct emu_ns *ns)
{
	/* memory, file and null namespaces all speak the NVM command set */
	if (ns->kv)
		return NVME_CSI_KV;
	return ns->zns ? NVME_CSI_ZNS : NVME_CSI_NVM;
}

static unsigned current_shift(const struct emu_ns *ns)
{
	return atomic_load_explicit(&ns->geom, memory_order_acquire) & EMU_NS_GEOM_SHIFT_MASK;
}

uint32_t emu_ns_lba_size(const struct emu_ns *ns)
{
	return 1u << current_shift(ns);
}

uint64_t emu_ns_nlbas(const struct emu_ns *ns)
{
	if (ns->kv)
		return emu_kv_capacity(ns->kv) >> current_shift(ns);
	return ns->be->capacity >> current_shift(ns);
}

/*
 * Format NVM (NVMe Base 2.0 section 5.14) on this namespace. The byte capacity stays, so the
 * number of blocks follows the new LBA size. Secure Erase Settings: 0 (none) and 1 (user data
 * erase) both leave every block reading as zeroes; cryptographic erase (2) needs encryption
 * this device does not have, and values above 2 are reserved.
 */
uint16_t emu_ns_format(struct emu_ns *ns, uint8_t lbaf, uint8_t ses)
{
	if (ns->kv)
		return emu_kv_format(ns->kv, lbaf, ses);
	unsigned shift = emu_ns_lbaf_shift(lbaf);
	if (!shift || (ns->be->capacity & ((1ull << shift) - 1)) != 0)
		return emu_ns_status(NVME_SCT_CMD, NVME_SC_INVALID_FORMAT, true);
	if (ses != NVME_FMT_SES_NONE && ses != NVME_FMT_SES_USER)
		return emu_ns_status(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD, true);

	/* I/O commands arriving meanwhile see the flag and complete with Format In Progress. */
	uint32_t old = atomic_load_explicit(&ns->geom, memory_order_acquire);
	do {
		if (old & EMU_NS_FORMATTING)
			return emu_ns_status(NVME_SCT_GENERIC, NVME_SC_FORMAT_IN_PROGRESS, false);
	} while (!atomic_compare_exchange_weak_explicit(&ns->geom, &old, old | EMU_NS_FORMATTING,
							 memory_order_acq_rel,
							 memory_order_acquire));

	/* a zoned namespace's table says empty durably before its data goes (as a reset does):
	 * a power cut in between leaves empty zones over old bytes, never old zones cleared */
	if ((ns->zns && emu_zns_format(ns->zns) != 0) || ns->be->ops->erase(ns->be) != 0) {
		atomic_store_explicit(&ns->geom, old, memory_order_release);
		return emu_ns_status(NVME_SCT_GENERIC, NVME_SC_INTERNAL, false);
	}
	atomic_store_explicit(&ns->geom, shift | (old & EMU_NS_ZONED_GEOM), memory_order_release);
	return 0;
}

/*
 * Volatile Write Cache (Set Features 06h). With the cache off every write must be durable
 * when it completes; what was written while it was on is made durable now, as a drive
 * writes back its cache when the cache is disabled.
 */
void emu_ns_set_write_cache(struct emu_ns *ns, bool enabled)
{
	bool was = atomic_exchange_explicit(&ns->write_cache, enabled, memory_order_relaxed);
	if (was && !enabled)
		(void)emu_ns_sync(ns);
}

int emu_ns_sync(struct emu_ns *ns)
{
	if (ns->kv)
		return kv_store_flush(ns->kv->st);
	int rc = ns->be->ops->flush(ns->be);
	/* the zone table after the data: a write pointer never covers blocks not yet durable */
	if (!rc && ns->zns)
		rc = emu_zns_sync(ns->zns);
	return rc;
}

void emu_ns_reset(struct emu_ns *ns)
{
	/* iterator handles are volatile state of the controller: a reset forgets them */
	if (ns->kv)
		kv_iters_close_all(&ns->kv->its);
	/* Controller Level Reset: opened zones are closed (ZNS 1.1 section 2.1.1.4) */
	if (ns->zns)
		emu_zns_reset(ns->zns);
}

void emu_ns_set_command_sets(struct emu_ns *ns, bool all_sets)
{
	if (ns->zns)
		atomic_store_explicit(&ns->zns->zone_cmds, all_sets, memory_order_relaxed);
}

uint16_t emu_ns_zone_read_only(struct emu_ns *ns, uint64_t slba)
{
	if (!ns->zns)
		return emu_ns_status(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD, true);
	uint64_t zone_blocks = ns->zns->zone_bytes >> current_shift(ns);
	return emu_zns_make_read_only(ns->zns, slba / zone_blocks);
}

uint16_t emu_ns_changed_zones(struct emu_ns *ns, struct nvme_changed_zone_log *out, bool clear)
{
	memset(out, 0, sizeof(*out));
	struct emu_zns *z = ns->zns;
	if (!z)
		return 0; /* a namespace without zones has no changed zones */
	uint64_t zone_blocks = z->zone_bytes >> current_shift(ns);
	pthread_mutex_lock(&z->lock);
	if (z->changed_overflow) {
		out->nrzid = NVME_CHANGED_ZONES_OVERFLOW;
	} else {
		out->nrzid = (uint16_t)z->nr_changed;
		for (uint32_t i = 0; i < z->nr_changed; i++)
			out->zid[i] = z->changed[i] * zone_blocks;
	}
	if (clear) {
		z->nr_changed = 0;
		z->changed_overflow = false;
	}
	pthread_mutex_unlock(&z->lock);
	return 0;
}

uint16_t emu_ns_kv_log(struct emu_ns *ns, uint8_t lid, void *out, uint32_t size)
{
	if (!ns->kv)
		return emu_ns_status(NVME_SCT_CMD, NVME_SC_INVALID_LOG_PAGE, true);
	return emu_kv_log(ns->kv, lid, out, size);
}
