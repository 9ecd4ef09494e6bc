/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A key-value namespace (CSI 01h): the storage engine, the iterators, and the two command
 * sets it answers: the standard NVMe KV Command Set (kv_std.c) and the Samsung vendor
 * protocol of the uNVMe 2.0 SDK (kv_vendor.c). ns.c, ns_identify.c and nvm_io.c hand a
 * namespace with ns->kv set to the functions below.
 */
#ifndef UNVME_EMU_KV_NS_H
#define UNVME_EMU_KV_NS_H

#include "hw/emu/emu.h"
#include "hw/emu/ns/kv_iter.h"
#include "hw/emu/ns/kv_store.h"

#define EMU_KV_SECTOR 512u  /* what Identify Namespace CNS 00h reports */

struct emu_kv {
	struct kv_store *st;
	struct kv_iters its;
	uint8_t nguid[16];
	uint8_t eui64[8];
};

int emu_kv_create(const struct emu_ns_params *p, struct emu_kv **out, char *err, size_t errlen);
void emu_kv_destroy(struct emu_kv *kv);
uint64_t emu_kv_capacity(const struct emu_kv *kv);

/*
 * One KV command. A store or delete that changed a persistent store (a file, a host engine)
 * completes only once it is durable, whatever the volatile write cache says: the promise of
 * a KV SSD with power-loss protection, on which kv_apis.h (it has no flush) relies. The
 * change is left in the store's buffers and io->commit is set to self: the controller makes
 * self durable once for the whole batch it fetched before posting the completions (emu_io.c).
 */
uint16_t emu_kv_execute(struct emu_kv *kv, struct emu_ns *self, const struct nvme_sqe *cmd,
			struct emu_io_ctx *io);
/* The two command sets; *changed: the command stored or deleted something. */
uint16_t emu_kv_std_execute(struct emu_kv *kv, const struct nvme_sqe *cmd, struct emu_io_ctx *io,
			    bool *changed);
uint16_t emu_kv_vendor_execute(struct emu_kv *kv, const struct nvme_sqe *cmd,
			       struct emu_io_ctx *io, bool *changed);

void emu_kv_identify(struct emu_kv *kv, struct nvme_id_ns *id);
void emu_kv_identify_kv(struct emu_kv *kv, struct nvme_id_ns_kv *id);
uint16_t emu_kv_format(struct emu_kv *kv, uint8_t lbaf, uint8_t ses);
uint16_t emu_kv_log(struct emu_kv *kv, uint8_t lid, void *out, uint32_t size);

/* Adds to a counter of the submitting queue (single writer, read by the SMART log). */
static inline void emu_kv_count(uint64_t *counter, uint64_t n)
{
	__atomic_store_n(counter, *counter + n, __ATOMIC_RELAXED);
}

#endif
