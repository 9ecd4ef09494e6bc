/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a test's proxy (NVMe/TCP, tests/unit/tcp/tcp_env.c) or relay (NVMe/RDMA,
 * tests/unit/rdma/rdma_env.c) tells apart in the host's command capsules, to make the network
 * slow for some answers (fabrics_off_poll.h's live-association cases) or refuse a queue.
 * Header only, no dependencies: the environments' libraries include it.
 */
#ifndef UNVME_TEST_FABRICS_CAPSULE_H
#define UNVME_TEST_FABRICS_CAPSULE_H

#include <stdbool.h>
#include <stdint.h>

#include "unvme/spec.h"
#include "unvme/spec/fabrics.h"

enum off_poll_kind {
	OFF_POLL_OTHER = 0,
	OFF_POLL_PROPERTY,    /* Property Get / Set of CC or CSTS */
	OFF_POLL_KEEP_ALIVE,
	OFF_POLL_DISABLE,     /* Property Set CC with EN = 0 (also a PROPERTY) */
	OFF_POLL_REFUSED,     /* an I/O queue's Connect refused (the proxy's count) */
	OFF_POLL_KINDS,
};

static inline uint32_t capsule_le32(const uint8_t *b)
{
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* The kind of the command (its 64 bytes, NVMe Base 2.0 figure "Common Command Format";
 * Property Get / Set OFST at byte 44, VALUE at 48; Connect QID at 42); *disable: a Property Set
 * of CC with EN = 0; *io_connect: a Connect of an I/O queue. */
static inline enum off_poll_kind capsule_kind(const uint8_t *sqe, bool *disable, bool *io_connect)
{
	*disable = false;
	*io_connect = sqe[0] == NVME_FABRICS_OPC && sqe[4] == NVMF_FCTYPE_CONNECT && (sqe[42] | sqe[43]);
	if (sqe[0] == NVME_ADM_KEEP_ALIVE)
		return OFF_POLL_KEEP_ALIVE;
	if (sqe[0] != NVME_FABRICS_OPC ||
	    (sqe[4] != NVMF_FCTYPE_PROPERTY_GET && sqe[4] != NVMF_FCTYPE_PROPERTY_SET))
		return OFF_POLL_OTHER;
	uint32_t off = capsule_le32(sqe + 44);
	if (off != NVME_REG_CC && off != NVME_REG_CSTS)
		return OFF_POLL_OTHER;
	*disable = sqe[4] == NVMF_FCTYPE_PROPERTY_SET && off == NVME_REG_CC &&
		   !(capsule_le32(sqe + 48) & NVME_CC_EN);
	return OFF_POLL_PROPERTY;
}

#endif
