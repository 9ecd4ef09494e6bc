/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Builds firmware images in the emulated controller's format (see fw_image.h). The CRC is the
 * reflected CRC-32 with polynomial EDB88320h, initial and final XOR all ones: the same value
 * as zlib's crc32(), computed here with a 16-entry table so zlib is not a dependency.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fw_image.h"

uint32_t fw_crc32(const void *buf, size_t len)
{
	/* CRC of each nibble value: half-byte steps keep the table tiny */
	static const uint32_t nibble[16] = {
		0x00000000u, 0x1db71064u, 0x3b6e20c8u, 0x26d930acu, 0x76dc4190u, 0x6b6b51f4u,
		0x4db26158u, 0x5005713cu, 0xedb88320u, 0xf00f9344u, 0xd6d6a3e8u, 0xcb61b38cu,
		0x9b64c2b0u, 0x86d3d2d4u, 0xa00ae278u, 0xbdbdf21cu,
	};
	const uint8_t *p = buf;
	uint32_t crc = 0xffffffffu;
	for (size_t i = 0; i < len; i++) {
		crc ^= p[i];
		crc = (crc >> 4) ^ nibble[crc & 0xf];
		crc = (crc >> 4) ^ nibble[crc & 0xf];
	}
	return ~crc;
}

static void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

int fw_image_build(const char *revision, const void *payload, size_t payload_len, uint8_t **image,
		   size_t *image_len)
{
	size_t rlen = revision ? strlen(revision) : 0;
	if (rlen == 0 || rlen > FW_IMAGE_REV_LEN || payload_len > UINT32_MAX)
		return -EINVAL;
	for (size_t i = 0; i < rlen; i++)
		if ((unsigned char)revision[i] < 0x21 || (unsigned char)revision[i] > 0x7e)
			return -EINVAL;
	uint8_t *img = calloc(1, FW_IMAGE_HEADER_SIZE + payload_len);
	if (!img)
		return -ENOMEM;
	memcpy(img, FW_IMAGE_MAGIC, 8);
	memset(img + 8, ' ', FW_IMAGE_REV_LEN);
	memcpy(img + 8, revision, rlen);
	put_le32(img + 16, (uint32_t)payload_len);
	put_le32(img + 20, fw_crc32(payload, payload_len));
	if (payload_len)
		memcpy(img + FW_IMAGE_HEADER_SIZE, payload, payload_len);
	*image = img;
	*image_len = FW_IMAGE_HEADER_SIZE + payload_len;
	return 0;
}
