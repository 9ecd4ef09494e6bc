/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Secrets in the NVMe key interchange format, shared by DH-HMAC-CHAP secrets ("DHHC-1", NVMe
 * Base 2.0 section 8.13.5.8, nvme-cli's gen-dhchap-key) and TLS PSKs ("NVMeTLSkey-1", NVMe TCP
 * Transport 1.1 section 3.6.1.5, nvme-cli's gen-tls-key):
 *
 *   <PREFIX>:XX:<base64 of the key followed by its CRC-32 (IEEE, little endian)>:
 *
 * XX is two decimal digits whose meaning is the format's (a hash). What follows the last ':'
 * must be nothing.
 */
#ifndef UNVME_FABRICS_KEY_INTERCHANGE_H
#define UNVME_FABRICS_KEY_INTERCHANGE_H

#include <stddef.h>
#include <stdint.h>

#define KEY_INTERCHANGE_MAX 64 /* key bytes (SHA-512 sized) */

/* Decodes s. *xx gets the two digits, key (KEY_INTERCHANGE_MAX bytes) the key, *len its
 * length. 0, or -EINVAL with err naming the problem (what: "DH-HMAC-CHAP secret", ...). The
 * key's length is the caller's to check. */
int key_interchange_parse(const char *s, const char *prefix, const char *what, unsigned *xx,
			  uint8_t *key, size_t *len, char *err, size_t errlen);
/* Formats key (len bytes, at most KEY_INTERCHANGE_MAX) with its CRC. */
void key_interchange_format(const char *prefix, unsigned xx, const uint8_t *key, size_t len,
			    char *out, size_t outlen);

#endif
