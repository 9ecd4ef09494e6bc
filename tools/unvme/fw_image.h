/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Firmware images for the emulated controller, in the format its firmware slots accept:
 *   bytes  0..7   "UNVMEFW1"
 *   bytes  8..15  revision, ASCII, space padded (it becomes Identify Controller FR)
 *   bytes 16..19  payload length, u32 little endian
 *   bytes 20..23  CRC-32 (the zlib/IEEE 802.3 one) of the payload, u32 little endian
 *   bytes 24..31  reserved, zero
 *   then the payload.
 */
#ifndef UNVME_TOOL_FW_IMAGE_H
#define UNVME_TOOL_FW_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#define FW_IMAGE_MAGIC "UNVMEFW1"
#define FW_IMAGE_HEADER_SIZE 32u
#define FW_IMAGE_REV_LEN 8u

/* CRC-32 as zlib's crc32(0, buf, len) computes it. */
uint32_t fw_crc32(const void *buf, size_t len);

/* Builds header + payload into a malloc'ed buffer. revision: 1..8 printable characters.
 * Returns 0, -EINVAL for a bad revision or a payload over 4 GiB, -ENOMEM. */
int fw_image_build(const char *revision, const void *payload, size_t payload_len, uint8_t **image,
		   size_t *image_len);

#endif
