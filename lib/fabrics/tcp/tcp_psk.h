/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Pre-shared keys of NVMe/TCP TLS (NVMe TCP Transport 1.1 section 3.6.1, from TP 8011), shared
 * by the host transport and the target:
 *
 *   - a configured PSK in the interchange format "NVMeTLSkey-1:XX:<base64 of key || CRC-32>:"
 *     (what nvme-cli's gen-tls-key prints), 32 or 48 bytes; XX is the hash that turns it into
 *     the retained PSK: 00 none (the configured PSK is the retained one), 01 SHA-256 (a 32-byte
 *     key), 02 SHA-384 (a 48-byte key);
 *   - the retained PSK = HKDF-Expand-Label(HKDF-Extract(0, configured), "HostNQN", host NQN,
 *     key length) with that hash (RFC 5869, the TLS 1.3 HkdfLabel of RFC 8446 section 7.1);
 *   - the cipher suite follows the key: TLS_AES_128_GCM_SHA256 for 32 bytes (hash 01),
 *     TLS_AES_256_GCM_SHA384 for 48 (hash 02);
 *   - the PSK identity: version 0 "NVMe0RHH <hostnqn> <subnqn>", version 1 "NVMe1RHH <hostnqn>
 *     <subnqn> <digest>" with the PSK digest = base64(HMAC-HH(retained, hostnqn " " subnqn
 *     " NVMe-over-Fabrics")), HH the suite's hash;
 *   - the TLS PSK = HKDF-Expand-Label(HKDF-Extract(0, retained), "nvme-tls-psk", context, key
 *     length) with the suite's hash: context the identity (version 0), "HH <digest>" (1).
 */
#ifndef UNVME_FABRICS_TCP_PSK_H
#define UNVME_FABRICS_TCP_PSK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TCP_PSK_MAX 48
#define TCP_PSK_IDENTITY_MAX 600 /* "NVMe1R02 " + two NQNs + a SHA-384 digest in base64 */

struct tcp_psk {
	uint8_t key[TCP_PSK_MAX];
	uint8_t len;   /* 32 or 48 */
	uint8_t hash;  /* retained PSK derivation: 0 none, 1 SHA-256, 2 SHA-384 */
};

/* Parses a configured PSK. 0, or -EINVAL with err naming the problem. */
int tcp_psk_parse(const char *s, struct tcp_psk *out, char *err, size_t errlen);
/* Formats one (tests, tools). */
void tcp_psk_format(const struct tcp_psk *k, char *out, size_t outlen);
/* The cipher suite's hash (1 SHA-256, 2 SHA-384) and its IANA code (1301h, 1302h). */
uint8_t tcp_psk_cipher(const struct tcp_psk *k);
uint16_t tcp_psk_suite(const struct tcp_psk *k);

/* The TLS PSK and identity a host with hostnqn uses for subnqn, identity version 0 or 1.
 * tls_psk: TCP_PSK_MAX bytes, the length is k->len. 0 or -EIO. */
int tcp_psk_derive(const struct tcp_psk *k, int version, const char *hostnqn, const char *subnqn,
		   char identity[TCP_PSK_IDENTITY_MAX], uint8_t *tls_psk);

/* An identity a host offered: its version, hash and NQNs (the digest is checked by deriving
 * the identity again). false if it is not in either form. */
struct tcp_psk_identity {
	int version;
	uint8_t cipher;
	char hostnqn[224];
	char subnqn[224];
};
bool tcp_psk_identity_parse(const char *id, size_t len, struct tcp_psk_identity *out);

#endif
