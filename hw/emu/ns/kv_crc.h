/* SPDX-License-Identifier: BSD-3-Clause */
/* CRC-32C (Castagnoli), the checksum of every record of a file-backed KV namespace. */
#ifndef UNVME_EMU_KV_CRC_H
#define UNVME_EMU_KV_CRC_H

#include <stddef.h>
#include <stdint.h>

#include "lib/util/crc.h"

/* Continues a CRC-32C: start with crc 0; feeding a buffer in pieces gives the same result as
 * feeding it whole. */
static inline uint32_t kv_crc32c(uint32_t crc, const void *buf, size_t len)
{
	return crc32c(crc, buf, len);
}

#endif
