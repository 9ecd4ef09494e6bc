/* SPDX-License-Identifier: BSD-3-Clause */
/* CRC-32C (Castagnoli) for the NVMe/TCP digests and the emulated KV namespace, and CRC-32
 * (IEEE, as zlib's crc32) for DH-HMAC-CHAP secrets. */
#ifndef UNVME_UTIL_CRC_H
#define UNVME_UTIL_CRC_H

#include <stddef.h>
#include <stdint.h>

/* Continue a CRC: start with crc 0; feeding a buffer in pieces gives the same result as
 * feeding it whole. */
uint32_t crc32c(uint32_t crc, const void *buf, size_t len);
uint32_t crc32_ieee(uint32_t crc, const void *buf, size_t len);

#endif
