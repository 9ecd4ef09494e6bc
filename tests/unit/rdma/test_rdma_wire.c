/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NVMe/RDMA wire checks alone: the RDMA CM private data (RDMA Transport 1.0 Figures 5-7, 11)
 * and command / response capsules with their SGLs (Figure 9, Base 2.0 4.3.2).
 */
#include <errno.h>
#include <string.h>

#include "../test_util.h"
#include "capsule.h"
#include "cm_priv.h"
#include "unvme/spec/status.h"

static const struct nvrdma_cm_limits lim = { .max_qid = 8, .admin_depth = 32, .io_depth = 128 };

static void test_cm_request_round_trip(void)
{
	struct nvme_rdma_cm_req r;
	nvrdma_cm_req_build(&r, 3, 128, 127, 0x11);
	const uint8_t *b = (const uint8_t *)&r;
	/* little endian fields at the spec's offsets */
	CHECK_EQ(b[0] | b[1] << 8, 0);
	CHECK_EQ(b[2] | b[3] << 8, 3);
	CHECK_EQ(b[4] | b[5] << 8, 128);
	CHECK_EQ(b[6] | b[7] << 8, 127);
	CHECK_EQ(b[8] | b[9] << 8, 0x11);
	struct nvrdma_cm_params p;
	CHECK_EQ(nvrdma_cm_req_check(&r, sizeof(r), &lim, &p), 0);
	CHECK_EQ(p.qid, 3);
	CHECK_EQ(p.hrqsize, 128);
	CHECK_EQ(p.hsqsize, 127);
	CHECK_EQ(p.cntlid, 0x11);
	/* the admin queue's request carries no controller id */
	nvrdma_cm_req_build(&r, 0, 32, 31, 0x11);
	CHECK_EQ(r.cntlid, 0);
}

static void test_cm_request_checks_name_the_field(void)
{
	struct nvme_rdma_cm_req r;
	struct nvrdma_cm_params p;
	uint8_t padded[56] = { 0 };
	nvrdma_cm_req_build(&r, 1, 16, 15, 0);
	CHECK_EQ(nvrdma_cm_req_check(&r, 31, &lim, &p), NVME_RDMA_CM_INVALID_LEN);
	CHECK_EQ(nvrdma_cm_req_check(NULL, 0, &lim, &p), NVME_RDMA_CM_INVALID_LEN);
	/* a CM pads private data (InfiniBand REQ: 56 bytes): longer is fine */
	memcpy(padded, &r, sizeof(r));
	CHECK_EQ(nvrdma_cm_req_check(padded, sizeof(padded), &lim, &p), 0);
	r.recfmt = 1;
	CHECK_EQ(nvrdma_cm_req_check(&r, sizeof(r), &lim, &p), NVME_RDMA_CM_INVALID_RECFMT);
	nvrdma_cm_req_build(&r, 9, 16, 15, 0);
	CHECK_EQ(nvrdma_cm_req_check(&r, sizeof(r), &lim, &p), NVME_RDMA_CM_INVALID_QID);
	nvrdma_cm_req_build(&r, 0, 64, 63, 0); /* admin queue deeper than it may be */
	CHECK_EQ(nvrdma_cm_req_check(&r, sizeof(r), &lim, &p), NVME_RDMA_CM_INVALID_HSQSIZE);
	nvrdma_cm_req_build(&r, 1, 256, 255, 0);
	CHECK_EQ(nvrdma_cm_req_check(&r, sizeof(r), &lim, &p), NVME_RDMA_CM_INVALID_HSQSIZE);
	nvrdma_cm_req_build(&r, 1, 16, 0, 0);
	CHECK_EQ(nvrdma_cm_req_check(&r, sizeof(r), &lim, &p), NVME_RDMA_CM_INVALID_HSQSIZE);
	nvrdma_cm_req_build(&r, 1, 0, 15, 0);
	CHECK_EQ(nvrdma_cm_req_check(&r, sizeof(r), &lim, &p), NVME_RDMA_CM_INVALID_HRQSIZE);
	nvrdma_cm_req_build(&r, 1, 8, 15, 0); /* fewer receives than responses can come */
	CHECK_EQ(nvrdma_cm_req_check(&r, sizeof(r), &lim, &p), NVME_RDMA_CM_INVALID_HRQSIZE);
	/* what Linux's host asks: admin 32 / 31, I/O 128 / 127 */
	nvrdma_cm_req_build(&r, 0, 32, 31, 0);
	CHECK_EQ(nvrdma_cm_req_check(&r, sizeof(r), &lim, &p), 0);
	nvrdma_cm_req_build(&r, 8, 128, 127, 0);
	CHECK_EQ(nvrdma_cm_req_check(&r, sizeof(r), &lim, &p), 0);
}

static void test_cm_accept_and_reject(void)
{
	struct nvme_rdma_cm_rep rep;
	nvrdma_cm_rep_build(&rep, 77);
	uint16_t crq = 0;
	CHECK_EQ(nvrdma_cm_rep_parse(&rep, sizeof(rep), &crq), 0);
	CHECK_EQ(crq, 77);
	CHECK_EQ(nvrdma_cm_rep_parse(&rep, 3, &crq), -EPROTO);
	rep.recfmt = 2;
	CHECK_EQ(nvrdma_cm_rep_parse(&rep, sizeof(rep), &crq), -EPROTO);
	struct nvme_rdma_cm_rej rej;
	nvrdma_cm_rej_build(&rej, NVME_RDMA_CM_INVALID_HSQSIZE);
	CHECK_EQ(nvrdma_cm_rej_parse(&rej, sizeof(rej)), NVME_RDMA_CM_INVALID_HSQSIZE);
	CHECK_EQ(nvrdma_cm_rej_parse(&rej, 2), 0);
	CHECK_EQ(nvrdma_cm_rej_parse(NULL, 0), 0);
	CHECK_STREQ(nvrdma_cm_status_name(NVME_RDMA_CM_INVALID_HSQSIZE), "invalid host SQ size");
}

static const struct nvrdma_capsule_rules io_rules = { .admin = false, .icd_max = 8192, .max_data = 1u << 20 };
static const struct nvrdma_capsule_rules admin_rules = { .admin = true, .icd_max = 0, .max_data = 1u << 20 };

static uint16_t sc_of(uint16_t status)
{
	return NVME_CQE_SC(status);
}

static void test_keyed_sgl_layout_and_parse(void)
{
	uint8_t cap[64] = { 0 };
	struct nvme_sqe *s = (struct nvme_sqe *)cap;
	s->opc = 0x02;
	s->cid = 0x1234;
	nvrdma_sgl_keyed(s, 0x1122334455667788ull, 0x00abcdef, 0xdeadbeef);
	/* byte layout: address 7:0, length 10:8, key 14:11, type 15 */
	const uint8_t *d = cap + 24;
	CHECK_EQ(d[0], 0x88);
	CHECK_EQ(d[7], 0x11);
	CHECK_EQ(d[8], 0xef);
	CHECK_EQ(d[10], 0xab);
	CHECK_EQ(d[11], 0xef);
	CHECK_EQ(d[14], 0xde);
	CHECK_EQ(d[15], 0x40);
	CHECK_EQ(s->flags & 0xc0, 0x40);
	struct nvrdma_capsule c;
	uint16_t st;
	const char *why;
	struct nvrdma_capsule_rules big = io_rules;
	big.max_data = 0xffffff;
	CHECK_EQ(nvrdma_capsule_parse(cap, 64, &big, &c, &st, &why), NVRDMA_OK);
	CHECK_EQ(c.kind, NVRDMA_DATA_KEYED);
	CHECK_EQ(c.len, 0xabcdef);
	CHECK_EQ(c.addr, 0x1122334455667788ull);
	CHECK_EQ(c.rkey, 0xdeadbeef);
	CHECK(!c.invalidate);
	CHECK_EQ(c.sqe.cid, 0x1234);
	/* longer than the transfer limit */
	CHECK_EQ(nvrdma_capsule_parse(cap, 64, &io_rules, &c, &st, &why), NVRDMA_REFUSE);
	CHECK_EQ(sc_of(st), NVME_SC_DATA_SGL_LEN_INVALID);
	CHECK_EQ(c.sqe.cid, 0x1234); /* still answerable */
	/* remote invalidation asked */
	cap[39] = 0x4f;
	CHECK_EQ(nvrdma_capsule_parse(cap, 64, &big, &c, &st, &why), NVRDMA_OK);
	CHECK(c.invalidate);
	/* no data: a keyed descriptor of length 0, also on the admin queue */
	nvrdma_sgl_none(s);
	CHECK_EQ(nvrdma_capsule_parse(cap, 64, &admin_rules, &c, &st, &why), NVRDMA_OK);
	CHECK_EQ(c.kind, NVRDMA_DATA_NONE);
}

static void test_incapsule_data_checks(void)
{
	static uint8_t cap[64 + 8192 + 16];
	struct nvme_sqe *s = (struct nvme_sqe *)cap;
	memset(cap, 0, sizeof(cap));
	s->opc = 0x01;
	nvrdma_sgl_incapsule(s, 4096);
	memset(cap + 64, 0x77, 4096);
	struct nvrdma_capsule c;
	uint16_t st;
	const char *why;
	CHECK_EQ(nvrdma_capsule_parse(cap, 64 + 4096, &io_rules, &c, &st, &why), NVRDMA_OK);
	CHECK_EQ(c.kind, NVRDMA_DATA_INCAPSULE);
	CHECK_EQ(c.len, 4096);
	CHECK(c.icd == cap + 64);
	/* the host said 4096 but sent 4095 */
	CHECK_EQ(nvrdma_capsule_parse(cap, 64 + 4095, &io_rules, &c, &st, &why), NVRDMA_REFUSE);
	CHECK_EQ(sc_of(st), NVME_SC_DATA_SGL_LEN_INVALID);
	/* more than the queue takes in a capsule */
	nvrdma_sgl_incapsule(s, 8193);
	CHECK_EQ(nvrdma_capsule_parse(cap, 64 + 8193, &io_rules, &c, &st, &why), NVRDMA_REFUSE);
	CHECK_EQ(sc_of(st), NVME_SC_DATA_SGL_LEN_INVALID);
	/* an offset past the in-capsule area, and offset + length past it */
	struct nvme_sgl_desc d = { .addr = 9000, .len = 16, .type = NVME_SGL_INCAPSULE };
	memcpy(cap + 24, &d, 16);
	CHECK_EQ(nvrdma_capsule_parse(cap, sizeof(cap), &io_rules, &c, &st, &why), NVRDMA_REFUSE);
	CHECK_EQ(sc_of(st), NVME_SC_SGL_OFFSET_INVALID);
	d.addr = 8190;
	memcpy(cap + 24, &d, 16);
	CHECK_EQ(nvrdma_capsule_parse(cap, sizeof(cap), &io_rules, &c, &st, &why), NVRDMA_REFUSE);
	CHECK_EQ(sc_of(st), NVME_SC_DATA_SGL_LEN_INVALID);
	d.addr = 0xffffffffffffff00ull; /* an offset that would wrap */
	memcpy(cap + 24, &d, 16);
	CHECK_EQ(nvrdma_capsule_parse(cap, sizeof(cap), &io_rules, &c, &st, &why), NVRDMA_REFUSE);
	/* a valid offset inside the data */
	d.addr = 16;
	d.len = 32;
	memcpy(cap + 24, &d, 16);
	CHECK_EQ(nvrdma_capsule_parse(cap, 64 + 48, &io_rules, &c, &st, &why), NVRDMA_OK);
	CHECK(c.icd == cap + 64 + 16);
	/* never on the admin queue */
	nvrdma_sgl_incapsule(s, 64);
	CHECK_EQ(nvrdma_capsule_parse(cap, 128, &admin_rules, &c, &st, &why), NVRDMA_REFUSE);
	CHECK_EQ(sc_of(st), NVME_SC_SGL_DESC_TYPE_INVALID);
}

static void test_other_descriptors_and_short_capsules(void)
{
	uint8_t cap[64] = { 0 };
	struct nvme_sqe *s = (struct nvme_sqe *)cap;
	struct nvrdma_capsule c;
	uint16_t st;
	const char *why;
	CHECK_EQ(nvrdma_capsule_parse(cap, 63, &io_rules, &c, &st, &why), NVRDMA_FATAL);
	CHECK(why != NULL);
	CHECK_EQ(nvrdma_capsule_parse(NULL, 0, &io_rules, &c, &st, &why), NVRDMA_FATAL);
	/* PRPs are not a fabrics data pointer */
	s->flags = 0;
	CHECK_EQ(nvrdma_capsule_parse(cap, 64, &io_rules, &c, &st, &why), NVRDMA_REFUSE);
	CHECK_EQ(sc_of(st), NVME_SC_INVALID_FIELD);
	/* NVMe/TCP's transport data block, a plain address data block, a segment */
	uint8_t types[] = { 0x5a, 0x00, 0x20, 0x30, 0x4a };
	for (size_t i = 0; i < sizeof(types); i++) {
		s->flags = 0x40;
		cap[39] = types[i];
		CHECK_EQ(nvrdma_capsule_parse(cap, 64, &io_rules, &c, &st, &why), NVRDMA_REFUSE);
		CHECK_EQ(sc_of(st), NVME_SC_SGL_DESC_TYPE_INVALID);
	}
}

static void test_response_capsule_is_exactly_16_bytes(void)
{
	struct nvme_cqe in = { .dw0 = 5, .sqhd = 3, .sqid = 1, .cid = 9, .status = 0x4 }, out;
	CHECK(nvrdma_rsp_parse(&in, 16, &out));
	CHECK_EQ(out.cid, 9);
	CHECK_EQ(out.dw0, 5);
	CHECK(!nvrdma_rsp_parse(&in, 15, &out));
	CHECK(!nvrdma_rsp_parse(&in, 17, &out));
}

TEST_MAIN(TEST(test_cm_request_round_trip), TEST(test_cm_request_checks_name_the_field),
	  TEST(test_cm_accept_and_reject), TEST(test_keyed_sgl_layout_and_parse),
	  TEST(test_incapsule_data_checks), TEST(test_other_descriptors_and_short_capsules),
	  TEST(test_response_capsule_is_exactly_16_bytes))
