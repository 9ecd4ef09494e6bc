/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The mapping between NVMe commands and the kernel's passthrough (lib/transport/uring/uring_map.c):
 * which fields reach the kernel, what it would refuse and how its answers become statuses.
 * These rules are only exercised against a real kernel in the QEMU guest, so they are pinned
 * down here field by field.
 */
#include <errno.h>
#include <string.h>

#include "lib/driver/errmsg.h"
#include "lib/transport/uring/uring_map.h"
#include "test_util.h"
#include "unvme/unvme.h"

static struct nvme_sqe read_cmd(uint32_t nsid)
{
	struct nvme_sqe c = { 0 };
	c.opc = NVME_CMD_READ;
	c.nsid = nsid;
	c.cdw2 = 0x22;
	c.cdw3 = 0x33;
	c.cdw10 = 0x1000;
	c.cdw11 = 0x1;
	c.cdw12 = 7;
	c.cdw13 = 0xd;
	c.cdw14 = 0xe;
	c.cdw15 = 0xf;
	return c;
}

static void test_every_dword_reaches_the_kernel(void)
{
	struct nvme_sqe c = read_cmd(1);
	c.cid = 77;      /* the kernel picks its own */
	c.prp1 = 0x1234; /* the kernel builds the data pointer */
	char buf[4096];
	struct nvme_uring_cmd u;
	memset(&u, 0xa5, sizeof(u));
	CHECK_EQ(uring_map_cmd(&c, buf, sizeof(buf), 1, 5000, &u), 0);
	CHECK_EQ(u.opcode, NVME_CMD_READ);
	CHECK_EQ(u.flags, 0);
	CHECK_EQ(u.rsvd1, 0);
	CHECK_EQ(u.nsid, 1);
	CHECK_EQ(u.cdw2, 0x22);
	CHECK_EQ(u.cdw3, 0x33);
	CHECK_EQ(u.metadata, 0);
	CHECK_EQ(u.metadata_len, 0);
	CHECK_EQ(u.addr, (uint64_t)(uintptr_t)buf);
	CHECK_EQ(u.data_len, 4096);
	CHECK_EQ(u.cdw10, 0x1000);
	CHECK_EQ(u.cdw11, 0x1);
	CHECK_EQ(u.cdw12, 7);
	CHECK_EQ(u.cdw13, 0xd);
	CHECK_EQ(u.cdw14, 0xe);
	CHECK_EQ(u.cdw15, 0xf);
	CHECK_EQ(u.timeout_ms, 5000);
	CHECK_EQ(u.rsvd2, 0);
}

static void test_no_data_means_no_address(void)
{
	struct nvme_sqe c = read_cmd(3);
	c.opc = NVME_CMD_FLUSH;
	struct nvme_uring_cmd u;
	CHECK_EQ(uring_map_cmd(&c, (void *)0x1000, 0, 3, 0, &u), 0);
	CHECK_EQ(u.addr, 0);
	CHECK_EQ(u.data_len, 0);
	CHECK_EQ(uring_map_cmd(&c, NULL, 512, 3, 0, &u), -EINVAL);
	CHECK(strstr(unvme_errmsg(), "no buffer") != NULL);
}

static void test_refusals_the_kernel_would_make(void)
{
	char buf[512];
	struct nvme_uring_cmd u;
	struct nvme_sqe c = read_cmd(2);
	CHECK_EQ(uring_map_cmd(&c, buf, 512, 1, 0, &u), -EINVAL);
	CHECK(strstr(unvme_errmsg(), "names NSID 2") && strstr(unvme_errmsg(), "namespace 1"));
	c = read_cmd(1);
	c.flags = 0x1; /* fused */
	CHECK_EQ(uring_map_cmd(&c, buf, 512, 1, 0, &u), -EINVAL);
	CHECK(strstr(unvme_errmsg(), "fused") != NULL);
	c = read_cmd(1);
	c.flags = 0x40; /* SGL */
	CHECK_EQ(uring_map_cmd(&c, buf, 512, 1, 0, &u), -EINVAL);
	c = read_cmd(1);
	c.mptr = 0x2000;
	CHECK_EQ(uring_map_cmd(&c, buf, 512, 1, 0, &u), -EINVAL);
	CHECK(strstr(unvme_errmsg(), "metadata pointer") != NULL);
	c = read_cmd(0xffffffffu); /* a broadcast flush is the controller's, not the file's */
	c.opc = NVME_CMD_FLUSH;
	CHECK_EQ(uring_map_cmd(&c, NULL, 0, 1, 0, &u), -EINVAL);
}

static struct nvme_sqe kv_cmd(uint8_t opc, uint32_t keyspace, unsigned klen)
{
	struct nvme_sqe c = { 0 };
	c.opc = opc;
	c.nsid = keyspace;
	c.cdw10 = 1024;
	c.cdw11 = NVME_KVV_CDW11(klen, 0, 0);
	c.cdw12 = 0x6b657931; /* the key's first bytes */
	return c;
}

static void test_kv_vendor_commands(void)
{
	char val[4096];
	struct nvme_uring_cmd u;
	/* keyspace 0 is the namespace itself */
	struct nvme_sqe c = kv_cmd(NVME_KVV_STORE, 0, 16);
	CHECK_EQ(uring_map_cmd(&c, val, 4096, 5, 0, &u), 0);
	CHECK_EQ(u.nsid, 5);
	CHECK_EQ(u.opcode, NVME_KVV_STORE);
	CHECK_EQ(u.cdw11, c.cdw11);
	CHECK_EQ(u.cdw12, 0x6b657931);
	CHECK_EQ(u.data_len, 4096);
	c = kv_cmd(NVME_KVV_RETRIEVE, 5, 8); /* naming the namespace is fine too */
	CHECK_EQ(uring_map_cmd(&c, val, 4096, 5, 0, &u), 0);
	CHECK_EQ(u.nsid, 5);
	/* another keyspace cannot be named through the kernel */
	c = kv_cmd(NVME_KVV_RETRIEVE, 1, 8);
	CHECK_EQ(uring_map_cmd(&c, val, 4096, 5, 0, &u), -EINVAL);
	CHECK(strstr(unvme_errmsg(), "keyspace 1") != NULL);
	/* keys over 16 bytes ride on a PRP the kernel cannot map */
	c = kv_cmd(NVME_KVV_STORE, 0, 17);
	CHECK_EQ(uring_map_cmd(&c, val, 4096, 5, 0, &u), -EINVAL);
	CHECK(strstr(unvme_errmsg(), "17-byte key") != NULL);
	c = kv_cmd(NVME_KVV_DELETE, 0, 255);
	CHECK_EQ(uring_map_cmd(&c, NULL, 0, 5, 0, &u), -EINVAL);
	/* iterators carry no key: any handle passes */
	c = kv_cmd(NVME_KVV_ITER_READ, 0, 0);
	c.cdw11 = 3;
	CHECK_EQ(uring_map_cmd(&c, val, 4096, 5, 0, &u), 0);
	CHECK_EQ(u.nsid, 5);
	/* a value offset lives where the kernel writes its metadata pointer */
	c = kv_cmd(NVME_KVV_RETRIEVE, 0, 8);
	c.mptr = 512;
	CHECK_EQ(uring_map_cmd(&c, val, 4096, 5, 0, &u), -EINVAL);
	CHECK(strstr(unvme_errmsg(), "value offset") != NULL);
	CHECK(uring_map_is_kv_vendor(NVME_KVV_EXIST));
	CHECK(!uring_map_is_kv_vendor(NVME_CMD_READ));
	CHECK(!uring_map_is_kv_vendor(0x7a)); /* zone management receive */
}

static void test_admin_commands(void)
{
	char buf[4096];
	struct nvme_passthru_cmd64 p;
	struct nvme_sqe c = { .opc = NVME_ADM_IDENTIFY, .nsid = 0, .cdw10 = 1, .cdw11 = 2 << 24 };
	CHECK_EQ(uring_map_admin(&c, buf, 4096, 7000, &p), 0);
	CHECK_EQ(p.opcode, NVME_ADM_IDENTIFY);
	CHECK_EQ(p.addr, (uint64_t)(uintptr_t)buf);
	CHECK_EQ(p.data_len, 4096);
	CHECK_EQ(p.cdw10, 1);
	CHECK_EQ(p.cdw11, 2u << 24);
	CHECK_EQ(p.timeout_ms, 7000);
	CHECK_EQ(p.result, 0);
	uint8_t queue_ops[] = { NVME_ADM_CREATE_SQ, NVME_ADM_CREATE_CQ, NVME_ADM_DELETE_SQ,
				NVME_ADM_DELETE_CQ };
	for (size_t i = 0; i < sizeof(queue_ops); i++) {
		c.opc = queue_ops[i];
		CHECK_EQ(uring_map_admin(&c, NULL, 0, 0, &p), -EPERM);
		CHECK(strstr(unvme_errmsg(), "owns this controller's queues") != NULL);
	}
}

static void test_completions(void)
{
	struct nvme_cqe e;
	/* success: DW0/DW1 from the 64-bit result (a zone append's LBA) */
	uring_map_cqe(0, 0x1122334455667788ull, 3, 9, false, &e);
	CHECK_EQ(e.dw0, 0x55667788);
	CHECK_EQ(e.dw1, 0x11223344);
	CHECK_EQ(e.sqid, 3);
	CHECK_EQ(e.cid, 9);
	CHECK_EQ(NVME_STATUS_FROM_CQE(e.status), 0);
	/* the device's status, as the kernel gives it (no phase bit; DNR at bit 14) */
	int kstatus = (1 << 14) | (NVME_SCT_MEDIA << 8) | NVME_SC_COMPARE_FAILURE;
	uring_map_cqe(kstatus, 0, 1, 2, false, &e);
	CHECK_EQ(NVME_STATUS_FROM_CQE(e.status), NVME_STATUS(NVME_SCT_MEDIA, NVME_SC_COMPARE_FAILURE));
	CHECK_EQ(NVME_CQE_DNR(e.status), 1);
	/* a kernel refusal: host pathing error, DNR, the errno in DW1 */
	uring_map_cqe(-EINVAL, 0, 1, 2, false, &e);
	CHECK_EQ(NVME_STATUS_FROM_CQE(e.status), NVME_STATUS(NVME_SCT_PATH, NVME_SC_HOST_PATH_ERROR));
	CHECK_EQ(NVME_CQE_DNR(e.status), 1);
	CHECK_EQ(e.dw1, EINVAL);
	uring_map_local_cqe(NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_LBA_OUT_OF_RANGE), 4, 5, 6, &e);
	CHECK_EQ(NVME_STATUS_FROM_CQE(e.status), NVME_STATUS(0, NVME_SC_LBA_OUT_OF_RANGE));
	CHECK_EQ(e.dw0, 4);
	CHECK_EQ(e.sqid, 5);
	CHECK_EQ(e.cid, 6);
}

static void test_errno_statuses(void)
{
	CHECK_EQ(uring_map_errno_status(0, false), 0);
	CHECK_EQ(uring_map_errno_status(-ENODATA, false), NVME_STATUS(NVME_SCT_MEDIA, NVME_SC_UNRECOVERED_READ));
	CHECK_EQ(uring_map_errno_status(-ENODATA, true), NVME_STATUS(NVME_SCT_MEDIA, NVME_SC_WRITE_FAULT));
	CHECK_EQ(uring_map_errno_status(-EREMOTEIO, false), NVME_STATUS(0, NVME_SC_LBA_OUT_OF_RANGE));
	CHECK_EQ(uring_map_errno_status(-EOPNOTSUPP, false), NVME_STATUS(0, NVME_SC_INVALID_OPCODE));
	CHECK_EQ(uring_map_errno_status(-ENOSPC, true), NVME_STATUS(0, NVME_SC_CAPACITY_EXCEEDED));
	CHECK_EQ(uring_map_errno_status(-EILSEQ, false), NVME_STATUS(NVME_SCT_MEDIA, NVME_SC_GUARD_CHECK));
	CHECK_EQ(uring_map_errno_status(-ECANCELED, false), NVME_STATUS(NVME_SCT_PATH, NVME_SC_ABORTED_BY_HOST));
	CHECK_EQ(uring_map_errno_status(-ETIMEDOUT, false), NVME_STATUS(NVME_SCT_PATH, NVME_SC_ABORTED_BY_HOST));
	CHECK_EQ(uring_map_errno_status(EIO, false), NVME_STATUS(NVME_SCT_PATH, NVME_SC_HOST_PATH_ERROR));
	CHECK_EQ(uring_map_errno_status(-EACCES, false), NVME_STATUS(NVME_SCT_PATH, NVME_SC_HOST_PATH_ERROR));
}

static void test_advice_says_what_to_do(void)
{
	CHECK(strstr(uring_map_errno_advice(EACCES), "CAP_SYS_ADMIN") != NULL);
	CHECK(strstr(uring_map_errno_advice(-EPERM), "root") != NULL);
	CHECK(strstr(uring_map_errno_advice(ENOENT), "nvme list") != NULL);
	CHECK(strstr(uring_map_errno_advice(EBUSY), "mounted") != NULL);
	CHECK(strstr(uring_map_errno_advice(ENODEV), "dmesg") != NULL);
	CHECK(strlen(uring_map_errno_advice(12345)) > 0);
}

TEST_MAIN(TEST(test_every_dword_reaches_the_kernel), TEST(test_no_data_means_no_address),
	  TEST(test_refusals_the_kernel_would_make), TEST(test_kv_vendor_commands),
	  TEST(test_admin_commands), TEST(test_completions), TEST(test_errno_statuses),
	  TEST(test_advice_says_what_to_do))
