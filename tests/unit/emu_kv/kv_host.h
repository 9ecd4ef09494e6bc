/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Host-side helpers for the KV namespace tests: build the vendor (Samsung) and standard KV
 * commands as an SDK would, on top of the raw test host (tests/unit/emu/emu_test_host.c).
 */
#ifndef UNVME_TEST_KV_HOST_H
#define UNVME_TEST_KV_HOST_H

#include "tests/unit/emu/emu_test_host.h"

#define KVH_BUF ((2u << 20) + 8192u)

/* One I/O queue with its own DMA buffers (one per host thread). */
struct kvq {
	struct th *h;
	struct th_queue q;
	uint64_t *prp;        /* PRP list page for the value */
	uint64_t prp_iova;
	uint8_t *val;         /* value buffer, page aligned, KVH_BUF bytes */
	uint8_t *key;         /* long-key buffer, 256 bytes inside one page */
	uint32_t dw0;         /* DW0 of the last completion */
};

/* th_open + enable; 0 or -1 (message printed). */
int kvh_open(struct th *h, const char *uri);
/* I/O queue qid (1..) with its buffers. */
int kvq_init(struct th *h, struct kvq *q, uint16_t qid);

/* Vendor commands: status in NVME_STATUS form (SCT << 8 | SC), DW0 in q->dw0. The value is
 * q->val. */
int kvv_store(struct kvq *q, uint32_t ks, const void *key, uint32_t klen, uint32_t vlen,
	      uint8_t opt, uint64_t off);
int kvv_retrieve(struct kvq *q, uint32_t ks, const void *key, uint32_t klen, uint32_t buflen,
		 uint64_t off);
int kvv_delete(struct kvq *q, uint32_t ks, const void *key, uint32_t klen);
int kvv_exist(struct kvq *q, uint32_t ks, const void *key, uint32_t klen);
/* Raw vendor command with the key/value fields filled in (for malformed commands). */
int kvv_raw(struct kvq *q, struct nvme_sqe *cmd, uint32_t vlen_map);
int kvv_iter_open(struct kvq *q, uint32_t ks, uint8_t opt, uint32_t prefix, uint32_t mask);
int kvv_iter_close(struct kvq *q, uint8_t handle);
/* 32 KiB into q->val. */
int kvv_iter_read(struct kvq *q, uint8_t handle);

/* Standard KV command set (keys up to 16 bytes). */
int kvs_cmd(struct kvq *q, uint8_t opc, uint32_t nsid, const void *key, uint32_t klen,
	    uint32_t cdw10, uint8_t opt);

/* Vendor status helpers. */
#define KVV(sc) NVME_STATUS(NVME_SCT_CMD, sc)
#define GEN(sc) NVME_STATUS(NVME_SCT_GENERIC, sc)

#endif
