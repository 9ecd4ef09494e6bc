/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DH-HMAC-CHAP arithmetic (NVMe Base 2.0 section 8.13.5), shared by the host transport and
 * the target, on OpenSSL: secrets in nvme-cli's format, the key transformation, the
 * challenge responses and the finite-field Diffie-Hellman groups (RFC 7919).
 *
 * Secrets: "DHHC-1:XX:<base64 of key || CRC-32 of key (little endian)>:", XX the hash that
 * transforms the key (00 none, 01 SHA-256, 02 SHA-384, 03 SHA-512), key 32, 48 or 64 bytes.
 * The transformed key Kh = HMAC-XX(key, NQN || "NVMe-over-Fabrics") (the key itself for 00).
 * A response is R = HMAC-H(Kh, Ca || S || T_ID || SC_C || role || NQN1 || 00h || NQN2), with
 * role "HostHost" (NQN1 = host, NQN2 = subsystem) or "Controller" (the other way round), and
 * Ca the challenge, or HMAC-H(H(g^xy mod p), C) when a DH group is in use.
 */
#ifndef UNVME_FABRICS_DHCHAP_H
#define UNVME_FABRICS_DHCHAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DHCHAP_MAX_HASH 64   /* SHA-512 */
#define DHCHAP_MAX_DH   1024 /* ffdhe8192: 8192 bits */

struct dhchap_key {
	uint8_t key[64];
	size_t len;
	uint8_t transform;  /* 0 none, else the hash id */
};

/* Parses a secret. 0, or -EINVAL with err naming the problem. */
int dhchap_key_parse(const char *secret, struct dhchap_key *out, char *err, size_t errlen);
/* Kh for nqn into out (DHCHAP_MAX_HASH bytes); its length, or 0 on failure. */
size_t dhchap_key_transform(const struct dhchap_key *k, const char *nqn, uint8_t *out);
/* Formats key as a secret (for tests and `unvme gen-dhchap-key`). out: 256 bytes. */
void dhchap_key_format(const struct dhchap_key *k, char *out, size_t outlen);

/* Hash ids 1..3: digest length (0 if unknown); DH group ids 0..5: name ("null",
 * "ffdhe2048"...) and value length in bytes (0 for null). */
size_t dhchap_hash_len(uint8_t hash);
const char *dhchap_group_name(uint8_t group);
size_t dhchap_group_len(uint8_t group);
/* The id of a name as above ("hmac(sha256)" and "sha256" both work); -1 if unknown. */
int dhchap_hash_id(const char *name);
int dhchap_group_id(const char *name);

/* The response of role ("HostHost" or "Controller") with transformed key kh, into out
 * (dhchap_hash_len(hash) bytes). sess/sess_len: the DH shared secret, NULL for the null
 * group. 0 or -EIO. */
int dhchap_response(uint8_t hash, const uint8_t *kh, size_t kh_len, const uint8_t *challenge,
		    uint32_t seq, uint16_t tid, const char *role, const char *nqn1, const char *nqn2,
		    const uint8_t *sess, size_t sess_len, uint8_t *out);

/* One side's ephemeral DH key pair in a group. */
struct dhchap_dh {
	void *pkey;         /* EVP_PKEY */
	uint8_t group;
};
/* Generates a key pair; pub receives g^x mod p, dhchap_group_len(group) bytes. 0 or -EIO. */
int dhchap_dh_generate(struct dhchap_dh *dh, uint8_t group, uint8_t *pub);
/* The shared secret g^xy mod p from the peer's value (padded to the group's length): 0, or
 * -EINVAL for a peer value that is not valid in the group. */
int dhchap_dh_derive(struct dhchap_dh *dh, const uint8_t *peer, size_t peer_len, uint8_t *secret);
void dhchap_dh_free(struct dhchap_dh *dh);

/* Cryptographically random bytes. 0 or -EIO. */
int dhchap_random(void *buf, size_t len);

/* Constant-time comparison. */
bool dhchap_equal(const uint8_t *a, const uint8_t *b, size_t len);

#endif
