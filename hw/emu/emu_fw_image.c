/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the emulated controller accepts as a firmware image (docs/devices.md):
 *   bytes  0..7   magic "UNVMEFW1"
 *   bytes  8..15  revision, printable ASCII, space or NUL padded (becomes Identify FR)
 *   bytes 16..19  payload length, little endian
 *   bytes 20..23  CRC-32 of the payload (the zlib / IEEE 802.3 polynomial), little endian
 *   bytes 24..31  reserved, zero
 *   then the payload, then at most 3 bytes of padding (downloads are whole dwords).
 * Anything else is an invalid image.
 */
#include <string.h>

#include "emu_ctrl.h"

static uint32_t crc_table[256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_table_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t v = i;
		for (int k = 0; k < 8; k++)
			v = (v & 1u) ? (v >> 1) ^ 0xedb88320u : v >> 1;
		crc_table[i] = v;
	}
}

/* Reflected CRC-32, polynomial EDB88320h, initial value and final XOR FFFFFFFFh. */
uint32_t emu_crc32(const void *buf, size_t len)
{
	pthread_once(&crc_once, crc_table_init);
	const uint32_t *table = crc_table;
	const uint8_t *p = buf;
	uint32_t crc = 0xffffffffu;
	for (size_t i = 0; i < len; i++)
		crc = table[(crc ^ p[i]) & 0xffu] ^ (crc >> 8);
	return crc ^ 0xffffffffu;
}

bool emu_fw_image_valid(const uint8_t *img, uint32_t len, char rev[9])
{
	if (len < EMU_FW_HEADER_SIZE || memcmp(img, EMU_FW_MAGIC, 8) != 0)
		return false;
	uint32_t payload_len, crc;
	memcpy(&payload_len, img + 16, 4);
	memcpy(&crc, img + 20, 4);
	for (int i = 24; i < 32; i++)
		if (img[i])
			return false;
	uint64_t end = (uint64_t)EMU_FW_HEADER_SIZE + payload_len;
	if (end > len || len - end > 3)
		return false;
	/* revision: printable ASCII up to an optional NUL (then only NULs); trailing spaces are
	 * padding; at least one character */
	int n = 0;
	while (n < 8 && img[8 + n] != '\0') {
		if (img[8 + n] < 0x20 || img[8 + n] > 0x7e)
			return false;
		n++;
	}
	for (int i = n; i < 8; i++)
		if (img[8 + i] != '\0')
			return false;
	while (n > 0 && img[8 + n - 1] == ' ')
		n--;
	if (n == 0 || img[8] == ' ')
		return false;
	if (emu_crc32(img + EMU_FW_HEADER_SIZE, payload_len) != crc)
		return false;
	memcpy(rev, img + 8, (size_t)n);
	rev[n] = '\0';
	return true;
}
