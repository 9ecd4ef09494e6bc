/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Block I/O through a fabric as the host tests check it (NVMe/TCP's and NVMe/RDMA's): a data
 * pattern, transfers of sizes across a transport's paths written and read back, and the
 * device's statuses passed through the fabric as they are. Header only: the checks count in
 * the test that includes it (test_util.h).
 */
#ifndef UNVME_TEST_FABRICS_IO_H
#define UNVME_TEST_FABRICS_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "test_util.h"
#include "unvme/unvme.h"

/* A pattern that differs per seed and per 512-byte block. */
static inline void fabrics_fill(uint8_t *b, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		b[i] = (uint8_t)(i * 131 + seed * 7 + (i >> 9));
}

/* Each of the n sizes (bytes, multiples of 512) written from w, read back into r and
 * compared, one after the other from lba 0; w and r hold the largest. */
static inline void fabrics_io_sizes(struct unvme_ns *ns, struct unvme_qpair *qp, uint8_t *w, uint8_t *r,
				    const uint32_t *sizes, size_t n)
{
	uint64_t lba = 0;
	for (size_t i = 0; i < n; i++) {
		uint32_t nlb = sizes[i] / 512;
		fabrics_fill(w, sizes[i], (unsigned)i + 1);
		memset(r, 0, sizes[i]);
		CHECK_EQ(unvme_write_sync(ns, qp, w, lba, nlb), 0);
		CHECK_EQ(unvme_read_sync(ns, qp, r, lba, nlb), 0);
		CHECK(memcmp(w, r, sizes[i]) == 0);
		CHECK_EQ(unvme_compare_sync(ns, qp, w, lba, nlb), 0);
		lba += nlb;
	}
}

/* After fabrics_io_sizes (lba 0 holds w): a compare of other data and a read past the end
 * come back with the device's status as it is; write zeroes reads back as zeroes (4 KiB). */
static inline void fabrics_device_statuses(struct unvme_ns *ns, struct unvme_qpair *qp, uint8_t *w, uint8_t *r)
{
	w[0] ^= 0xff;
	CHECK_EQ(unvme_compare_sync(ns, qp, w, 0, 1), NVME_STATUS(NVME_SCT_MEDIA, NVME_SC_COMPARE_FAILURE));
	CHECK_EQ(unvme_read_sync(ns, qp, r, unvme_ns_nlbas(ns), 1),
		 NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_LBA_OUT_OF_RANGE));
	CHECK_EQ(unvme_write_zeroes_sync(ns, qp, 0, 8), 0);
	CHECK_EQ(unvme_read_sync(ns, qp, r, 0, 8), 0);
	CHECK(r[0] == 0 && r[4095] == 0);
}

/* A synchronous 8-block write or read from lba, retried while it fails (a fabric coming back
 * after a cut) for at most guard_ms; each failure counted in *failures. The last status. */
static inline int fabrics_sync_retry(struct unvme_ns *ns, struct unvme_qpair *qp, void *buf,
				     uint64_t lba, bool write, int *failures, uint64_t guard_ms)
{
	uint64_t end = test_now_ms() + guard_ms;
	int rc;
	do {
		rc = write ? unvme_write_sync(ns, qp, buf, lba, 8) : unvme_read_sync(ns, qp, buf, lba, 8);
		if (rc)
			(*failures)++;
	} while (rc && test_now_ms() < end);
	return rc;
}

#endif
