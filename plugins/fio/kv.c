/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * KV commands of the Samsung vendor protocol (docs/kv-sdk.md, "Wire protocol"), built straight
 * into SQEs so that a fio I/O costs one submission and no copy: the value moves by PRPs from
 * fio's own buffer, which is DMA memory (engine.c, iomem_alloc).
 *
 * The key of an I/O is its offset: ks bytes, zero, then the offset big-endian in the last
 * min(ks, 8) bytes, so keys sort in offset order and every offset up to 2^(8 ks) has its own key.
 */
#include <string.h>

#include <unvme/spec/kv.h>

#include "unvme_fio.h"

void ufio_kv_key(uint8_t *key, uint32_t ks, uint64_t offset)
{
	memset(key, 0, ks);
	uint32_t n = ks < 8 ? ks : 8;
	for (uint32_t i = 0; i < n; i++)
		key[ks - 1 - i] = (uint8_t)(offset >> (8 * i));
}

uint64_t ufio_kv_key_limit(uint32_t ks)
{
	return ks >= 8 ? UINT64_MAX : (1ull << (8 * ks)) - 1;
}

/* Key in CDW12..15 when it fits, else PRP1 of its DMA copy (which never crosses a page). */
static void put_key(struct nvme_sqe *cmd, const uint8_t *key, uint32_t ks, const void *key_dma)
{
	if (ks <= NVME_KVV_INLINE_KEY) {
		uint8_t k[16] = { 0 };
		memcpy(k, key, ks);
		memcpy(&cmd->cdw12, k, 16);
	} else {
		memcpy((void *)key_dma, key, ks);
		uint64_t iova = unvme_dma_iova(key_dma);
		cmd->cdw12 = (uint32_t)iova;
		cmd->cdw13 = (uint32_t)(iova >> 32);
	}
}

void ufio_kv_store_cmd(struct nvme_sqe *cmd, const uint8_t *key, uint32_t ks, const void *key_dma,
		       uint32_t len)
{
	memset(cmd, 0, sizeof(*cmd));
	cmd->opc = NVME_KVV_STORE;
	cmd->nsid = 0; /* keyspace 0 */
	uint32_t pad = (4 - (len & 3)) & 3;
	cmd->cdw10 = (len + 3) / 4;
	cmd->cdw11 = NVME_KVV_CDW11(ks, 0, pad);
	put_key(cmd, key, ks, key_dma);
}

void ufio_kv_retrieve_cmd(struct nvme_sqe *cmd, const uint8_t *key, uint32_t ks,
			  const void *key_dma, uint32_t len)
{
	memset(cmd, 0, sizeof(*cmd));
	cmd->opc = NVME_KVV_RETRIEVE;
	cmd->cdw10 = len / 4;
	cmd->cdw11 = NVME_KVV_CDW11(ks, 0, 0);
	put_key(cmd, key, ks, key_dma);
}

void ufio_kv_delete_cmd(struct nvme_sqe *cmd, const uint8_t *key, uint32_t ks, const void *key_dma)
{
	memset(cmd, 0, sizeof(*cmd));
	cmd->opc = NVME_KVV_DELETE;
	cmd->cdw11 = NVME_KVV_CDW11(ks, 0, 0);
	put_key(cmd, key, ks, key_dma);
}

const char *ufio_kv_status_str(int status)
{
	if ((status >> 8) != 1)
		return NULL;
	switch (status & 0xff) {
	case NVME_KVV_SC_INVALID_VALUE_SIZE: return "KV invalid value size";
	case NVME_KVV_SC_INVALID_VALUE_OFFSET: return "KV invalid value offset";
	case NVME_KVV_SC_INVALID_KEY_SIZE: return "KV invalid key size";
	case NVME_KVV_SC_INVALID_OPTION: return "KV invalid option";
	case NVME_KVV_SC_MISALIGNED_VALUE_SIZE: return "KV misaligned value size";
	case NVME_KVV_SC_KEY_NOT_EXIST: return "KV key does not exist (never stored, or deleted)";
	case NVME_KVV_SC_UNRECOVERED: return "KV unrecovered error";
	case NVME_KVV_SC_CAPACITY_EXCEEDED: return "KV capacity exceeded";
	case NVME_KVV_SC_MAX_VALUE_SIZE: return "KV value too large";
	default: return NULL;
	}
}
