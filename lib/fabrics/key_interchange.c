/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The NVMe key interchange format (see key_interchange.h).
 */
#include <errno.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>

#include "lib/util/crc.h"
#include "key_interchange.h"

int key_interchange_parse(const char *s, const char *prefix, const char *what, unsigned *xx,
			  uint8_t *key, size_t *len, char *err, size_t errlen)
{
	size_t pl = strlen(prefix);
	int pos = 0;
	*len = 0;
	if (strncmp(s, prefix, pl) || s[pl] != ':' || sscanf(s + pl + 1, "%2u:%n", xx, &pos) != 1 ||
	    pos != 3) {
		snprintf(err, errlen, "not a %s (expected %s:XX:<base64>:)", what, prefix);
		return -EINVAL;
	}
	const char *b64 = s + pl + 4;
	size_t n = strcspn(b64, ":");
	if (b64[n] != ':' || b64[n + 1] != '\0') {
		snprintf(err, errlen, b64[n] ? "text after the key's closing ':'" : "no closing ':' after the key");
		return -EINVAL;
	}
	uint8_t raw[3 * (KEY_INTERCHANGE_MAX + 4) / 2];
	if (n == 0 || n % 4 || n / 4 * 3 > sizeof(raw)) {
		snprintf(err, errlen, "key is not base64 of at most %u bytes", KEY_INTERCHANGE_MAX + 4);
		return -EINVAL;
	}
	int got = EVP_DecodeBlock(raw, (const unsigned char *)b64, (int)n);
	if (got < 0) {
		snprintf(err, errlen, "key is not valid base64");
		return -EINVAL;
	}
	while (n && b64[n - 1] == '=') {
		got--;
		n--;
	}
	if (got <= 4 || got > KEY_INTERCHANGE_MAX + 4) {
		snprintf(err, errlen, "key is %d bytes with its CRC (at most %u)", got, KEY_INTERCHANGE_MAX + 4);
		OPENSSL_cleanse(raw, sizeof(raw));
		return -EINVAL;
	}
	size_t klen = (size_t)got - 4;
	uint32_t crc = crc32_ieee(0, raw, klen);
	uint32_t stored = (uint32_t)raw[klen] | (uint32_t)raw[klen + 1] << 8 |
			  (uint32_t)raw[klen + 2] << 16 | (uint32_t)raw[klen + 3] << 24;
	if (crc != stored) {
		snprintf(err, errlen, "key CRC mismatch (the %s is mistyped)", what);
		OPENSSL_cleanse(raw, sizeof(raw));
		return -EINVAL;
	}
	memcpy(key, raw, klen);
	*len = klen;
	OPENSSL_cleanse(raw, sizeof(raw));
	return 0;
}

void key_interchange_format(const char *prefix, unsigned xx, const uint8_t *key, size_t len,
			    char *out, size_t outlen)
{
	uint8_t raw[KEY_INTERCHANGE_MAX + 4];
	memcpy(raw, key, len);
	uint32_t crc = crc32_ieee(0, key, len);
	for (int i = 0; i < 4; i++)
		raw[len + (size_t)i] = (uint8_t)(crc >> (8 * i));
	char b64[4 * (KEY_INTERCHANGE_MAX + 4) / 3 + 8];
	EVP_EncodeBlock((unsigned char *)b64, raw, (int)len + 4);
	snprintf(out, outlen, "%s:%02u:%s:", prefix, xx, b64);
	OPENSSL_cleanse(raw, sizeof(raw));
}
