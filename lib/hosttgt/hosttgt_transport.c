/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The host targets' transports (ftl://, hostkv://), registered like every other transport
 * (UNVME_TRANSPORT_REGISTER). A host target is a device model over an engine's media
 * (ftl_target.c, hkv_target.c): its attach builds the model and hands it to the driver as the
 * controller's transport handle; the register accesses and DMA mappings then go to the model
 * as the emulated slot's go to its card. The two transports differ only in the model they build.
 */
#include <string.h>

#include "hw/emu/emu_device.h"
#include "lib/driver/transport.h"
#include "lib/hosttgt/hosttgt.h"

bool hosttgt_opts_split(const char *id, const char *const *keys, char *inner, size_t innerlen,
			const char **opts)
{
	const char *q = strrchr(id, '?');
	*opts = NULL;
	if (q) {
		size_t klen = strcspn(q + 1, "=&");
		for (const char *const *k = keys; *k; k++)
			if (strlen(*k) == klen && !strncmp(q + 1, *k, klen))
				*opts = q + 1;
	}
	size_t n = *opts ? (size_t)(q - id) : strlen(id);
	if (n >= innerlen)
		return false;
	memcpy(inner, id, n);
	inner[n] = '\0';
	return true;
}

uint64_t hosttgt_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
	return h;
}

/* The model a host target's create built is the controller's transport handle: what the
 * register and DMA functions below are given, what detach destroys. */
static int hosttgt_attach(struct unvme_ctrlr *ctrlr, const char *address,
			  int (*create)(const char *address, struct emu_device **dev))
{
	struct emu_device *dev;
	int rc = create(address, &dev);
	if (rc)
		return rc;
	unvme_transport_ctx_set(ctrlr, dev);
	return 0;
}

static void hosttgt_detach(struct unvme_ctrlr *ctrlr)
{
	emu_device_destroy(unvme_transport_ctx(ctrlr));
	unvme_transport_ctx_set(ctrlr, NULL);
}

static uint32_t model_read32(void *ctx, uint32_t off)
{
	return emu_mmio_read32(ctx, off);
}

static void model_write32(void *ctx, uint32_t off, uint32_t val)
{
	emu_mmio_write32(ctx, off, val);
}

static uint64_t model_read64(void *ctx, uint32_t off)
{
	return emu_mmio_read64(ctx, off);
}

static void model_write64(void *ctx, uint32_t off, uint64_t val)
{
	emu_mmio_write64(ctx, off, val);
}

static int model_dma_map(void *ctx, void *vaddr, uint64_t iova, size_t len)
{
	return emu_iommu_map(ctx, vaddr, iova, len);
}

static void model_dma_unmap(void *ctx, uint64_t iova, size_t len)
{
	emu_iommu_unmap(ctx, iova, len);
}

/* The register functions both host targets share: only their attach differs */
#define HOSTTGT_REGISTER_OPS                                                                  \
	.detach = hosttgt_detach, .read32 = model_read32, .write32 = model_write32,           \
	.read64 = model_read64, .write64 = model_write64, .dma_map = model_dma_map,           \
	.dma_unmap = model_dma_unmap

static int ftl_matches(const char *address)
{
	return strncmp(address, UNVME_FTL_SCHEME, strlen(UNVME_FTL_SCHEME)) == 0;
}

static int ftl_attach(struct unvme_ctrlr *ctrlr, const char *address)
{
	return hosttgt_attach(ctrlr, address, hosttgt_ftl_create);
}

static const struct unvme_transport_ops ftl_ops = {
	.attach = ftl_attach,
	HOSTTGT_REGISTER_OPS,
};

static const char *const ftl_schemes[] = {UNVME_FTL_SCHEME, NULL};
static const struct unvme_transport unvme_transport_ftl = {
	.name = "ftl",
	.schemes = ftl_schemes,
	.kind = UNVME_TRANSPORT_REGISTERS,
	.rank = 40,
	.matches = ftl_matches,
	.ops = &ftl_ops,
};
UNVME_TRANSPORT_REGISTER(unvme_transport_ftl);

static int hostkv_matches(const char *address)
{
	return strncmp(address, UNVME_HOSTKV_SCHEME, strlen(UNVME_HOSTKV_SCHEME)) == 0;
}

static int hostkv_attach(struct unvme_ctrlr *ctrlr, const char *address)
{
	return hosttgt_attach(ctrlr, address, hosttgt_hostkv_create);
}

static const struct unvme_transport_ops hostkv_ops = {
	.attach = hostkv_attach,
	HOSTTGT_REGISTER_OPS,
};

static const char *const hostkv_schemes[] = {UNVME_HOSTKV_SCHEME, NULL};
static const struct unvme_transport unvme_transport_hostkv = {
	.name = "hostkv",
	.schemes = hostkv_schemes,
	.kind = UNVME_TRANSPORT_REGISTERS,
	.rank = 50,
	.matches = hostkv_matches,
	.ops = &hostkv_ops,
};
UNVME_TRANSPORT_REGISTER(unvme_transport_hostkv);
