/* SPDX-License-Identifier: BSD-3-Clause */
/* Host-side KV command builders for the KV namespace tests (see kv_host.h). */
#include <stdio.h>
#include <string.h>

#include "kv_host.h"

int kvh_open(struct th *h, const char *uri)
{
	if (th_open(h, uri)) {
		fprintf(stderr, "  create %s: %s\n", uri, h->err);
		return -1;
	}
	if (!(th_enable(h, 32, 32) & NVME_CSTS_RDY)) {
		fprintf(stderr, "  enable failed\n");
		th_close(h);
		return -1;
	}
	return 0;
}

int kvq_init(struct th *h, struct kvq *q, uint16_t qid)
{
	memset(q, 0, sizeof(*q));
	q->h = h;
	if (th_create_qpair(h, &q->q, qid, 64))
		return -1;
	q->prp = th_alloc(h, 4096, 4096, &q->prp_iova);
	q->val = th_alloc(h, KVH_BUF, 4096, NULL);
	q->key = th_alloc(h, 4096, 4096, NULL);
	return q->prp && q->val && q->key ? 0 : -1;
}

/* PRP1/PRP2 (with a list when needed) for len bytes at buf. */
static void set_prps(struct kvq *q, uint64_t *prp1, uint64_t *prp2, const void *buf, uint32_t len)
{
	uint64_t iova = th_iova(q->h, buf);
	*prp1 = iova;
	*prp2 = 0;
	uint32_t first = 4096 - (uint32_t)(iova & 4095);
	if (len <= first)
		return;
	uint64_t next = (iova & ~4095ull) + 4096;
	uint32_t rem = len - first;
	if (rem <= 4096) {
		*prp2 = next;
		return;
	}
	uint32_t n = (rem + 4095) / 4096;
	for (uint32_t i = 0; i < n; i++)
		q->prp[i] = next + (uint64_t)i * 4096;
	*prp2 = q->prp_iova;
}

static int run(struct kvq *q, struct nvme_sqe *cmd)
{
	struct nvme_cqe cqe;
	int st = th_cmd(q->h, &q->q, cmd, &cqe);
	q->dw0 = cqe.dw0;
	return st;
}

/* Puts the key in CDW12-15 (up to 16 bytes) or in q->key behind a PRP pair. */
static void set_key(struct kvq *q, struct nvme_sqe *cmd, const void *key, uint32_t klen)
{
	if (klen <= 16) {
		memcpy(&cmd->cdw12, key, klen);
		return;
	}
	memcpy(q->key, key, klen > 256 ? 256 : klen);
	uint64_t p1, p2;
	set_prps(q, &p1, &p2, q->key, klen);
	cmd->cdw12 = (uint32_t)p1;
	cmd->cdw13 = (uint32_t)(p1 >> 32);
	cmd->cdw14 = (uint32_t)p2;
	cmd->cdw15 = (uint32_t)(p2 >> 32);
}

int kvv_raw(struct kvq *q, struct nvme_sqe *cmd, uint32_t vlen_map)
{
	if (vlen_map)
		set_prps(q, &cmd->prp1, &cmd->prp2, q->val, vlen_map);
	return run(q, cmd);
}

int kvv_store(struct kvq *q, uint32_t ks, const void *key, uint32_t klen, uint32_t vlen,
	      uint8_t opt, uint64_t off)
{
	struct nvme_sqe cmd = { .opc = NVME_KVV_STORE, .nsid = ks, .mptr = off };
	uint32_t dwords = (vlen + 3) / 4;
	cmd.cdw10 = dwords;
	cmd.cdw11 = NVME_KVV_CDW11(klen, opt, dwords * 4 - vlen);
	set_key(q, &cmd, key, klen);
	return kvv_raw(q, &cmd, vlen);
}

int kvv_retrieve(struct kvq *q, uint32_t ks, const void *key, uint32_t klen, uint32_t buflen,
		 uint64_t off)
{
	struct nvme_sqe cmd = { .opc = NVME_KVV_RETRIEVE, .nsid = ks, .mptr = off };
	cmd.cdw10 = buflen / 4;
	cmd.cdw11 = NVME_KVV_CDW11(klen, 0, 0);
	set_key(q, &cmd, key, klen);
	return kvv_raw(q, &cmd, buflen);
}

static int keyed(struct kvq *q, uint8_t opc, uint32_t ks, const void *key, uint32_t klen)
{
	struct nvme_sqe cmd = { .opc = opc, .nsid = ks };
	cmd.cdw11 = NVME_KVV_CDW11(klen, 0, 0);
	set_key(q, &cmd, key, klen);
	return run(q, &cmd);
}

int kvv_delete(struct kvq *q, uint32_t ks, const void *key, uint32_t klen)
{
	return keyed(q, NVME_KVV_DELETE, ks, key, klen);
}

int kvv_exist(struct kvq *q, uint32_t ks, const void *key, uint32_t klen)
{
	return keyed(q, NVME_KVV_EXIST, ks, key, klen);
}

int kvv_iter_open(struct kvq *q, uint32_t ks, uint8_t opt, uint32_t prefix, uint32_t mask)
{
	struct nvme_sqe cmd = { .opc = NVME_KVV_ITER_REQ, .nsid = ks };
	cmd.cdw11 = (uint32_t)opt << 8;
	cmd.cdw12 = __builtin_bswap32(prefix);
	cmd.cdw13 = __builtin_bswap32(mask);
	return run(q, &cmd);
}

int kvv_iter_close(struct kvq *q, uint8_t handle)
{
	struct nvme_sqe cmd = { .opc = NVME_KVV_ITER_REQ, .nsid = 0 };
	cmd.cdw11 = NVME_KVV_ITER_CLOSE << 8 | handle;
	return run(q, &cmd);
}

int kvv_iter_read(struct kvq *q, uint8_t handle)
{
	struct nvme_sqe cmd = { .opc = NVME_KVV_ITER_READ, .nsid = 0 };
	cmd.cdw10 = NVME_KVV_ITER_BUF / 4;
	cmd.cdw11 = handle;
	memset(q->val, 0xee, NVME_KVV_ITER_BUF);
	return kvv_raw(q, &cmd, NVME_KVV_ITER_BUF);
}

int kvs_cmd(struct kvq *q, uint8_t opc, uint32_t nsid, const void *key, uint32_t klen,
	    uint32_t cdw10, uint8_t opt)
{
	struct nvme_sqe cmd = { .opc = opc, .nsid = nsid, .cdw10 = cdw10 };
	cmd.cdw11 = (klen & 0xffu) | (uint32_t)opt << 8;
	uint8_t k[16] = { 0 };
	memcpy(k, key, klen > 16 ? 16 : klen);
	memcpy(&cmd.cdw2, k, 4);
	memcpy(&cmd.cdw3, k + 4, 4);
	memcpy(&cmd.cdw14, k + 8, 4);
	memcpy(&cmd.cdw15, k + 12, 4);
	if (cdw10 && opc != NVME_KV_DELETE && opc != NVME_KV_EXIST)
		set_prps(q, &cmd.prp1, &cmd.prp2, q->val, cdw10 < KVH_BUF - 8192 ? cdw10 : KVH_BUF - 8192);
	return run(q, &cmd);
}
