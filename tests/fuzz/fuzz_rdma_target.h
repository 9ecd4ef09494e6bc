/* SPDX-License-Identifier: BSD-3-Clause */
/* fuzz_rdma mode 3: whole NVMe/RDMA sessions of the target (fuzz_rdma_target.c). */
#ifndef UNVME_FUZZ_RDMA_TARGET_H
#define UNVME_FUZZ_RDMA_TARGET_H

#include <stddef.h>
#include <stdint.h>

void fuzz_rdma_target_session(const uint8_t *d, size_t n);

#endif
