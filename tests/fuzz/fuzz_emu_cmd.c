/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the emulated controller's command processing, reached the way a host
 * reaches it (hw/emu/emu_device.h only): rings in host memory behind the device's IOMMU,
 * doorbell writes, phase-tagged completions. Every input runs on a new controller with a
 * 512-byte and a 4 KiB NVM namespace and a KV namespace, its admin queue and one I/O queue
 * pair, and is a sequence of records:
 *
 *   u8 flags    bit 0: I/O queue (else admin); bits 1-2: data pointer mode (0 the SQE's own
 *               PRPs, 1 PRP1/PRP2 into the data area, 2 PRP1 plus a PRP list built from the
 *               payload, 3 anywhere in host memory, the rings included); bit 3: hold the
 *               doorbell for the next record (several commands per ring)
 *   u8 op       opcode from the table below (NVM, KV standard and vendor sets, admin, the
 *               vendor fault injection), or the byte itself past the table's end;
 *               0xfe: controller reset (CC.EN 0 -> 1, queues rebuilt); 0xff: a raw doorbell
 *               write (CDW10 value at doorbell CDW11 % 64)
 *   64 bytes    the SQE (opcode and CID replaced; NSID 0..4 from its low bits unless bit 7)
 *   u8 n        then n * 32 payload bytes copied to the data area (PRP list entries in mode 2)
 *
 * Checked beyond "no crash, no sanitizer report": every completion names a command in flight
 * on its queue (SQ ID, CID) and an SQ head inside the ring, and nothing is completed twice.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "hw/emu/emu_device.h"
#include "unvme/spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define URI "emu://fuzz?ns=mem:256K:512&ns=kv:1M&ns=mem:256K:4096"
#define IOVA 0x100000000ull
#define ARENA (8u << 20)
#define QSIZE 32u
/* arena layout */
#define OFF_ASQ   0x00000u
#define OFF_ACQ   0x01000u
#define OFF_IOSQ  0x02000u
#define OFF_IOCQ  0x03000u
#define OFF_LIST  0x04000u   /* PRP list pages (2) */
#define OFF_DATA  0x100000u  /* data area: 7 MiB */

static const uint8_t ops[] = {
	/* admin */
	NVME_ADM_DELETE_SQ, NVME_ADM_CREATE_SQ, NVME_ADM_GET_LOG_PAGE, NVME_ADM_DELETE_CQ,
	NVME_ADM_CREATE_CQ, NVME_ADM_IDENTIFY, NVME_ADM_ABORT, NVME_ADM_SET_FEATURES,
	NVME_ADM_GET_FEATURES, NVME_ADM_ASYNC_EVENT, NVME_ADM_FW_COMMIT, NVME_ADM_FW_DOWNLOAD,
	NVME_ADM_FORMAT_NVM, NVME_ADM_EMU_FAULT, NVME_ADM_KEEP_ALIVE,
	/* NVM */
	NVME_CMD_FLUSH, NVME_CMD_WRITE, NVME_CMD_READ, NVME_CMD_COMPARE, NVME_CMD_WRITE_ZEROES,
	NVME_CMD_DSM, NVME_CMD_VERIFY, NVME_CMD_WRITE_UNCOR,
	/* KV standard */
	NVME_KV_LIST, NVME_KV_DELETE, NVME_KV_EXIST,
	/* KV vendor */
	NVME_KVV_STORE, NVME_KVV_APPEND, NVME_KVV_RETRIEVE, NVME_KVV_DELETE, NVME_KVV_ITER_REQ,
	NVME_KVV_ITER_READ, NVME_KVV_EXIST,
};

struct q {
	uint16_t qid;
	struct nvme_sqe *sq;
	struct nvme_cqe *cq;
	uint32_t tail, head;
	uint8_t phase;
	uint16_t next_cid;
	uint32_t inflight;
	uint8_t busy[65536 / 8]; /* CIDs in flight */
};

static uint8_t *arena;
static struct emu_device *dev;
static struct q aq, ioq;
static bool tainted; /* the input created, deleted or reset queues: our view may be stale */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	setenv("UNVME_QUIET", "1", 1);
	arena = mmap(NULL, ARENA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (arena == MAP_FAILED)
		abort();
	return 0;
}

static uint32_t rd32(uint32_t off) { return emu_mmio_read32(dev, off); }
static void wr32(uint32_t off, uint32_t v) { emu_mmio_write32(dev, off, v); }

static void q_init(struct q *q, uint16_t qid, uint32_t sq_off, uint32_t cq_off)
{
	memset(q, 0, sizeof(*q));
	q->qid = qid;
	q->sq = (struct nvme_sqe *)(arena + sq_off);
	q->cq = (struct nvme_cqe *)(arena + cq_off);
	q->phase = 1;
	memset(q->sq, 0, QSIZE * sizeof(struct nvme_sqe));
	memset(q->cq, 0, QSIZE * sizeof(struct nvme_cqe));
}

/* Reaps every posted completion of q and checks it. */
static void reap(struct q *q)
{
	for (;;) {
		struct nvme_cqe *e = &q->cq[q->head];
		if ((e->status & 1u) != q->phase)
			break;
		if (!tainted) {
			if (e->sqhd >= QSIZE)
				abort(); /* SQ head outside the ring */
			if (e->sqid == q->qid) {
				if (!(q->busy[e->cid / 8] & (1u << (e->cid % 8))))
					abort(); /* a completion for a command not in flight */
				q->busy[e->cid / 8] &= (uint8_t)~(1u << (e->cid % 8));
				q->inflight--;
			} else if (q->qid == 0) {
				abort(); /* the admin CQ serves the admin SQ only */
			}
		}
		if (++q->head == QSIZE) {
			q->head = 0;
			q->phase ^= 1;
		}
		wr32(nvme_cq_doorbell_offset(q->qid, 0), q->head);
	}
}

static int sync_admin(struct nvme_sqe *c)
{
	c->cid = aq.next_cid++;
	aq.sq[aq.tail] = *c;
	aq.tail = (aq.tail + 1) % QSIZE;
	aq.busy[c->cid / 8] |= (uint8_t)(1u << (c->cid % 8));
	aq.inflight++;
	wr32(nvme_sq_doorbell_offset(0, 0), aq.tail);
	struct nvme_cqe *e = &aq.cq[aq.head];
	int st = (e->status & 1u) == aq.phase ? NVME_STATUS_FROM_CQE(e->status) : -1;
	reap(&aq);
	return st;
}

/* CC.EN 0 -> 1 with fresh admin rings and one I/O queue pair. */
static bool bring_up(void)
{
	uint32_t cc = rd32(NVME_REG_CC);
	if (cc & NVME_CC_EN) {
		wr32(NVME_REG_CC, cc & ~NVME_CC_EN);
		if (rd32(NVME_REG_CSTS) & NVME_CSTS_RDY)
			return false;
	}
	q_init(&aq, 0, OFF_ASQ, OFF_ACQ);
	q_init(&ioq, 1, OFF_IOSQ, OFF_IOCQ);
	tainted = false;
	wr32(NVME_REG_AQA, NVME_AQA_MAKE(QSIZE, QSIZE));
	emu_mmio_write64(dev, NVME_REG_ASQ, IOVA + OFF_ASQ);
	emu_mmio_write64(dev, NVME_REG_ACQ, IOVA + OFF_ACQ);
	wr32(NVME_REG_CC, NVME_CC_EN | NVME_CC_CSS_SET(6) | NVME_CC_IOSQES_SET(6) |
			  NVME_CC_IOCQES_SET(4));
	if ((rd32(NVME_REG_CSTS) & (NVME_CSTS_RDY | NVME_CSTS_CFS)) != NVME_CSTS_RDY)
		return false;
	struct nvme_sqe c = { .opc = NVME_ADM_CREATE_CQ, .prp1 = IOVA + OFF_IOCQ,
			      .cdw10 = (QSIZE - 1) << 16 | 1, .cdw11 = NVME_CREATE_CQ_PC };
	if (sync_admin(&c) != 0)
		return false;
	struct nvme_sqe s = { .opc = NVME_ADM_CREATE_SQ, .prp1 = IOVA + OFF_IOSQ,
			      .cdw10 = (QSIZE - 1) << 16 | 1, .cdw11 = 1u << 16 | NVME_CREATE_SQ_PC };
	return sync_admin(&s) == 0;
}

struct cursor {
	const uint8_t *p;
	size_t n;
};

static void take(struct cursor *c, void *out, size_t len)
{
	size_t k = len < c->n ? len : c->n;
	memcpy(out, c->p, k);
	memset((uint8_t *)out + k, 0, len - k);
	c->p += k;
	c->n -= k;
}

static uint8_t take8(struct cursor *c)
{
	uint8_t v;
	take(c, &v, 1);
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256];
	if (emu_device_create(URI, &dev, err, sizeof(err)) != 0)
		abort();
	if (emu_iommu_map(dev, arena, IOVA, ARENA) != 0 || !bring_up())
		abort();
	struct cursor cur = { data, size };
	struct q *pending = NULL;
	while (cur.n) {
		uint8_t flags = take8(&cur), op = take8(&cur);
		struct nvme_sqe cmd;
		take(&cur, &cmd, sizeof(cmd));
		uint32_t plen = (uint32_t)take8(&cur) * 32;
		uint8_t *payload = arena + OFF_DATA;
		take(&cur, payload, plen);
		if (op == 0xfe) {
			if (!bring_up())
				tainted = true;
			pending = NULL;
			continue;
		}
		if (op == 0xff) {
			wr32(NVME_REG_DBS + (cmd.cdw11 % 64) * 4, cmd.cdw10);
			tainted = true;
			continue;
		}
		struct q *q = (flags & 1) ? &ioq : &aq;
		if (q->inflight >= QSIZE - 1) {
			reap(q);
			if (q->inflight >= QSIZE - 1)
				continue; /* full: what dropped commands leave behind */
		}
		cmd.opc = op < sizeof(ops) ? ops[op] : op;
		if (!(cmd.nsid & 0x80))
			cmd.nsid &= 7u; /* mostly a namespace that exists, or 0 / one that does not */
		switch ((flags >> 1) & 3) {
		case 0:
			break;
		case 1:
			cmd.prp1 = IOVA + OFF_DATA + (cmd.prp1 & 0xffff);
			cmd.prp2 = IOVA + OFF_DATA + ((cmd.prp2 & 0x3f) << 12);
			break;
		case 2: {
			uint64_t *list = (uint64_t *)(arena + OFF_LIST);
			for (uint32_t i = 0; i < 1024; i++) {
				uint64_t v = i < plen / 8 ? ((uint64_t *)payload)[i] : i + 1;
				list[i] = IOVA + OFF_DATA + ((v & 0x3ff) << 12) + ((v >> 60) == 0xf ? (v & 0xfff) : 0);
			}
			cmd.prp1 = IOVA + OFF_DATA + (cmd.prp1 & 0xfff);
			cmd.prp2 = IOVA + OFF_LIST + (cmd.prp2 & 0xff8);
			break;
		}
		case 3:
			cmd.prp1 = IOVA + (cmd.prp1 % ARENA);
			cmd.prp2 = IOVA + (cmd.prp2 % ARENA);
			/* the device may now write into the rings (a read's data over SQ entries not
			 * yet fetched): what it completes afterwards is no longer ours to check */
			tainted = true;
			break;
		}
		if (q->qid == 0 && (cmd.opc == NVME_ADM_CREATE_SQ || cmd.opc == NVME_ADM_CREATE_CQ ||
				    cmd.opc == NVME_ADM_DELETE_SQ || cmd.opc == NVME_ADM_DELETE_CQ))
			tainted = true;
		cmd.cid = q->next_cid++;
		q->sq[q->tail] = cmd;
		q->tail = (q->tail + 1) % QSIZE;
		q->busy[cmd.cid / 8] |= (uint8_t)(1u << (cmd.cid % 8));
		q->inflight++;
		if (pending && pending != q) {
			wr32(nvme_sq_doorbell_offset(pending->qid, 0), pending->tail);
			pending = NULL;
		}
		if (flags & 8) {
			pending = q;
			continue;
		}
		wr32(nvme_sq_doorbell_offset(q->qid, 0), q->tail);
		pending = NULL;
		reap(&aq);
		reap(&ioq);
	}
	if (pending)
		wr32(nvme_sq_doorbell_offset(pending->qid, 0), pending->tail);
	reap(&aq);
	reap(&ioq);
	emu_device_destroy(dev);
	dev = NULL;
	return 0;
}
