/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An admin Connect capsule as a host sends it (CapsuleCmd with 1024 bytes of in-capsule
 * Connect data), for the tests that speak to the target byte by byte.
 */
#ifndef UNVME_TEST_TCP_CONNECT_PDU_H
#define UNVME_TEST_TCP_CONNECT_PDU_H

#include <stdio.h>
#include <string.h>

#include "unvme/spec.h"
#include "unvme/spec/fabrics.h"
#include "unvme/spec/tcp.h"

#define CONNECT_PDU_LEN (72 + 1024)

/* out: CONNECT_PDU_LEN bytes. */
static inline void connect_pdu(uint8_t *out, const char *subnqn, const char *hostnqn)
{
	memset(out, 0, CONNECT_PDU_LEN);
	struct nvme_tcp_cmd c = {0};
	c.hdr = (struct nvme_tcp_hdr){.type = NVME_TCP_CAPSULE_CMD, .hlen = 72, .pdo = 72,
				      .plen = CONNECT_PDU_LEN};
	struct nvmf_connect_cmd *cc = (void *)&c.sqe;
	cc->opc = NVME_FABRICS_OPC;
	cc->flags = NVME_CMD_FLAGS_PSDT_SGL;
	cc->cid = 1;
	cc->fctype = NVMF_FCTYPE_CONNECT;
	cc->sgl1 = (struct nvme_sgl_desc){.len = 1024, .type = NVME_SGL_INCAPSULE};
	cc->sqsize = 31;
	memcpy(out, &c, sizeof(c));
	struct nvmf_connect_data d = {0};
	d.cntlid = 0xffff;
	snprintf(d.subnqn, sizeof(d.subnqn), "%s", subnqn);
	snprintf(d.hostnqn, sizeof(d.hostnqn), "%s", hostnqn);
	memcpy(out + sizeof(c), &d, sizeof(d));
}

#endif
