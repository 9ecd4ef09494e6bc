/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The wire protocol: Samsung's vendor-specific KV opcodes on KV namespaces, and the NVM block
 * commands that stand in for them in LBA mode. Layouts are those of the original KV SSD (see
 * docs/kv-sdk.md, "Wire protocol"); every field written here is read by a device.
 */
#include <string.h>

#include "kv_req.h"


void kv_cmd_set_key(struct nvme_sqe *sqe, const void *key, uint16_t klen, void *keybuf)
{
	if (klen <= 16) {
		/* CDW12..15 hold the key bytes in order, as they sit in the SQE */
		uint32_t words[4] = { 0, 0, 0, 0 };
		memcpy(words, key, klen);
		sqe->cdw12 = words[0];
		sqe->cdw13 = words[1];
		sqe->cdw14 = words[2];
		sqe->cdw15 = words[3];
		return;
	}
	/* The key buffer never crosses a page (slab objects <= 4 KiB do not), so PRP entry 2
	 * stays 0. */
	memcpy(keybuf, key, klen);
	uint64_t iova = unvme_dma_iova(keybuf);
	sqe->cdw12 = (uint32_t)iova;
	sqe->cdw13 = (uint32_t)(iova >> 32);
	sqe->cdw14 = 0;
	sqe->cdw15 = 0;
}

/* CDW11 of the key commands: bits 7:0 key length - 1, bits 15:8 the option byte. */
static uint32_t key_cdw11(uint16_t klen, int option)
{
	return NVME_KVV_CDW11(klen, (unsigned)option, 0);
}

/* LBA mode addressing: the key's first 8 bytes are a little-endian LBA (a shorter key is
 * zero-extended); the value offset is in bytes, a multiple of the sector size. */
static uint64_t lba_of(const kv_pair *kv, uint32_t sector)
{
	uint8_t b[8] = { 0 };
	memcpy(b, kv->key.key, kv->key.length < 8 ? kv->key.length : 8);
	uint64_t lba = 0;
	for (int i = 7; i >= 0; i--)
		lba = lba << 8 | b[i];
	return lba + kv->value.offset / sector;
}

static int build_lba(struct kv_req *req)
{
	struct nvme_sqe *sqe = &req->sqe;
	const kv_pair *kv = req->kv;
	uint32_t sector = req->dev->sector_size;
	uint64_t slba = lba_of(kv, sector);
	uint32_t nlb = kv->value.length / sector;
	sqe->nsid = req->dev->nsid;
	switch (req->op) {
	case KV_OP_STORE:
	case KV_OP_RETRIEVE:
		sqe->opc = req->op == KV_OP_STORE ? NVME_CMD_WRITE : NVME_CMD_READ;
		sqe->cdw10 = (uint32_t)slba;
		sqe->cdw11 = (uint32_t)(slba >> 32);
		sqe->cdw12 = nlb - 1; /* 0's based */
		return KV_SUCCESS;
	case KV_OP_DELETE: {
		/* Dataset Management, one range, Deallocate (NVM 1.0 4.3): value.length bytes in
		 * both the sync and the async form (the original read blocks in one of them). */
		struct nvme_dsm_range *r = req->data;
		r->cattr = 0;
		r->nlb = nlb;             /* 1's based */
		r->slba = slba;
		sqe->opc = NVME_CMD_DSM;
		sqe->cdw10 = 0;           /* number of ranges - 1 */
		sqe->cdw11 = NVME_DSM_ATTR_AD;
		return KV_SUCCESS;
	}
	default:
		return KV_ERR_DD_UNSUPPORTED_CMD;
	}
}

int kv_cmd_build(struct kv_req *req)
{
	if (req->op == KV_OP_RAW)
		return KV_SUCCESS;
	struct nvme_sqe *sqe = &req->sqe;
	memset(sqe, 0, sizeof(*sqe));
	if (req->lba)
		return build_lba(req);
	const kv_pair *kv = req->kv;
	if (req->op == KV_OP_ITER_READ) {
		sqe->opc = NVME_KVV_ITER_READ;
		sqe->nsid = 0;
		sqe->cdw10 = KV_ITERATE_READ_BUFFER_SIZE / 4;
		sqe->cdw11 = req->iterator;
		return KV_SUCCESS;
	}
	sqe->nsid = kv->keyspace_id;
	switch (req->op) {
	case KV_OP_STORE: {
		uint32_t len = kv->value.length;
		sqe->opc = NVME_KVV_STORE;
		sqe->mptr = kv->value.offset;
		sqe->cdw10 = (len + 3) / 4;
		sqe->cdw11 = key_cdw11(kv->key.length, kv->param.io_option.store_option) |
			     ((uint32_t)((4 - len % 4) % 4) << 16);
		break;
	}
	case KV_OP_RETRIEVE:
		sqe->opc = NVME_KVV_RETRIEVE;
		sqe->mptr = kv->value.offset;
		sqe->cdw10 = kv->value.length / 4;
		sqe->cdw11 = key_cdw11(kv->key.length, kv->param.io_option.retrieve_option);
		break;
	case KV_OP_DELETE:
		sqe->opc = NVME_KVV_DELETE;
		sqe->cdw11 = key_cdw11(kv->key.length, kv->param.io_option.delete_option);
		break;
	case KV_OP_EXIST:
		sqe->opc = NVME_KVV_EXIST;
		sqe->cdw11 = key_cdw11(kv->key.length, kv->param.io_option.exist_option);
		break;
	default:
		return KV_ERR_DD_UNSUPPORTED_CMD;
	}
	kv_cmd_set_key(sqe, kv->key.key, kv->key.length, req->keybuf);
	return KV_SUCCESS;
}

/* Iterate open (CDW11[15:8] = 0x01 | 2 << type), both words big-endian on the wire. */
void kv_cmd_iterate_open(struct nvme_sqe *sqe, uint8_t ks, uint32_t bitmask, uint32_t prefix,
			 uint8_t type)
{
	memset(sqe, 0, sizeof(*sqe));
	sqe->opc = NVME_KVV_ITER_REQ;
	sqe->nsid = ks;
	sqe->cdw11 = (uint32_t)(KV_ITERATE_REQUEST_OPEN | (2u << type)) << 8;
	sqe->cdw12 = __builtin_bswap32(prefix);
	sqe->cdw13 = __builtin_bswap32(bitmask);
}

void kv_cmd_iterate_close(struct nvme_sqe *sqe, uint8_t handle)
{
	memset(sqe, 0, sizeof(*sqe));
	sqe->opc = NVME_KVV_ITER_REQ;
	sqe->nsid = 0;
	sqe->cdw11 = (uint32_t)KV_ITERATE_REQUEST_CLOSE << 8 | handle;
}
