/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NVMe/TCP TLS pre-shared keys (see tcp_psk.h): the configured PSK, the retained PSK, the PSK
 * identity and the TLS PSK, on OpenSSL's HKDF and HMAC.
 */
#include <errno.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>
#include <stdio.h>
#include <string.h>

#include "lib/fabrics/key_interchange.h"
#include "tcp_psk.h"

#define PREFIX "NVMeTLSkey-1"
#define SEED "NVMe-over-Fabrics"

int tcp_psk_parse(const char *s, struct tcp_psk *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	uint8_t key[KEY_INTERCHANGE_MAX];
	size_t len;
	unsigned hash;
	int rc = key_interchange_parse(s, PREFIX, "TLS PSK", &hash, key, &len, err, errlen);
	if (rc)
		return rc;
	if (hash > 2) {
		snprintf(err, errlen, "PSK hash %02u is unknown (00 none, 01 SHA-256, 02 SHA-384)", hash);
		rc = -EINVAL;
	} else if (len != 32 && len != 48) {
		snprintf(err, errlen, "PSK is %zu bytes (expected 32 or 48)", len);
		rc = -EINVAL;
	} else if ((hash == 1 && len != 32) || (hash == 2 && len != 48)) {
		snprintf(err, errlen, "a PSK with hash %02u must be %u bytes, not %zu", hash,
			 hash == 1 ? 32u : 48u, len);
		rc = -EINVAL;
	}
	if (rc == 0) {
		memcpy(out->key, key, len);
		out->len = (uint8_t)len;
		out->hash = (uint8_t)hash;
	}
	OPENSSL_cleanse(key, sizeof(key));
	return rc;
}

void tcp_psk_format(const struct tcp_psk *k, char *out, size_t outlen)
{
	key_interchange_format(PREFIX, k->hash, k->key, k->len, out, outlen);
}

uint8_t tcp_psk_cipher(const struct tcp_psk *k)
{
	return k->len == 48 ? 2 : 1;
}

uint16_t tcp_psk_suite(const struct tcp_psk *k)
{
	return tcp_psk_cipher(k) == 2 ? 0x1302 : 0x1301;
}

static const char *md_name(uint8_t hash)
{
	return hash == 2 ? "SHA384" : "SHA256";
}

/* HKDF-Expand-Label(HKDF-Extract(0, ikm), label, context, out_len) (RFC 8446 section 7.1):
 * the info is HkdfLabel = length (2 bytes, big endian) || <"tls13 " label> || <context>, each
 * vector with a one-byte length. */
static int hkdf_label(uint8_t hash, const uint8_t *ikm, size_t ikm_len, const char *label,
		      const char *context, uint8_t *out, size_t out_len)
{
	size_t ll = 6 + strlen(label), cl = strlen(context);
	if (ll > 255 || cl > 255)
		return -EINVAL;
	uint8_t info[2 + 1 + 255 + 1 + 255];
	size_t n = 0;
	info[n++] = (uint8_t)(out_len >> 8);
	info[n++] = (uint8_t)out_len;
	info[n++] = (uint8_t)ll;
	memcpy(info + n, "tls13 ", 6);
	memcpy(info + n + 6, label, ll - 6);
	n += ll;
	info[n++] = (uint8_t)cl;
	memcpy(info + n, context, cl);
	n += cl;
	EVP_KDF *kdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
	EVP_KDF_CTX *ctx = kdf ? EVP_KDF_CTX_new(kdf) : NULL;
	int rc = -EIO;
	if (ctx) {
		OSSL_PARAM params[] = {
			OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)md_name(hash), 0),
			OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)ikm, ikm_len),
			OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, info, n),
			OSSL_PARAM_construct_end(),
		};
		if (EVP_KDF_derive(ctx, out, out_len, params) == 1)
			rc = 0;
	}
	EVP_KDF_CTX_free(ctx);
	EVP_KDF_free(kdf);
	OPENSSL_cleanse(info, sizeof(info));
	return rc;
}

/* base64(HMAC(retained, hostnqn " " subnqn " NVMe-over-Fabrics")) with the suite's hash. */
static int psk_digest(uint8_t cipher, const uint8_t *retained, size_t len, const char *hostnqn,
		      const char *subnqn, char *out, size_t outlen)
{
	char msg[2 * 224 + sizeof(SEED) + 4];
	int ml = snprintf(msg, sizeof(msg), "%s %s %s", hostnqn, subnqn, SEED);
	uint8_t mac[EVP_MAX_MD_SIZE];
	unsigned maclen = 0;
	if (ml < 0 || (size_t)ml >= sizeof(msg) ||
	    !HMAC(cipher == 2 ? EVP_sha384() : EVP_sha256(), retained, (int)len, (const uint8_t *)msg,
		  (size_t)ml, mac, &maclen) ||
	    outlen < 4 * ((maclen + 2) / 3) + 1)
		return -EIO;
	EVP_EncodeBlock((unsigned char *)out, mac, (int)maclen);
	return 0;
}

int tcp_psk_derive(const struct tcp_psk *k, int version, const char *hostnqn, const char *subnqn,
		   char identity[TCP_PSK_IDENTITY_MAX], uint8_t *tls_psk)
{
	uint8_t retained[TCP_PSK_MAX];
	int rc = 0;
	if (k->hash)
		rc = hkdf_label(k->hash, k->key, k->len, "HostNQN", hostnqn, retained, k->len);
	else
		memcpy(retained, k->key, k->len);
	uint8_t cipher = tcp_psk_cipher(k);
	char digest[100] = "", context[TCP_PSK_IDENTITY_MAX];
	if (rc == 0 && version == 1)
		rc = psk_digest(cipher, retained, k->len, hostnqn, subnqn, digest, sizeof(digest));
	if (rc == 0) {
		int n = version == 1 ? snprintf(identity, TCP_PSK_IDENTITY_MAX, "NVMe1R%02u %s %s %s", cipher,
						hostnqn, subnqn, digest)
				     : snprintf(identity, TCP_PSK_IDENTITY_MAX, "NVMe0R%02u %s %s", cipher,
						hostnqn, subnqn);
		if (n < 0 || n >= TCP_PSK_IDENTITY_MAX || (version != 0 && version != 1))
			rc = -EINVAL;
	}
	if (rc == 0) {
		if (version == 1)
			snprintf(context, sizeof(context), "%02u %s", cipher, digest);
		else
			snprintf(context, sizeof(context), "%s", identity);
		rc = hkdf_label(cipher, retained, k->len, "nvme-tls-psk", context, tls_psk, k->len);
	}
	OPENSSL_cleanse(retained, sizeof(retained));
	return rc;
}

/* One NQN of an identity: up to the next space (or the end), 1..223 characters. */
static const char *take_nqn(const char *p, const char *end, char out[224])
{
	const char *sp = memchr(p, ' ', (size_t)(end - p));
	const char *e = sp ? sp : end;
	size_t n = (size_t)(e - p);
	if (n == 0 || n > 223)
		return NULL;
	memcpy(out, p, n);
	out[n] = '\0';
	return e;
}

bool tcp_psk_identity_parse(const char *id, size_t len, struct tcp_psk_identity *out)
{
	memset(out, 0, sizeof(*out));
	const char *end = id + len;
	if (len < 12 || memchr(id, '\0', len) || memcmp(id, "NVMe", 4) || (id[4] != '0' && id[4] != '1') ||
	    id[5] != 'R' || id[6] != '0' || (id[7] != '1' && id[7] != '2') || id[8] != ' ')
		return false;
	out->version = id[4] - '0';
	out->cipher = (uint8_t)(id[7] - '0');
	const char *p = take_nqn(id + 9, end, out->hostnqn);
	if (!p || p == end)
		return false;
	p = take_nqn(p + 1, end, out->subnqn);
	if (!p)
		return false;
	if (out->version == 0)
		return p == end;
	/* version 1: a base64 digest follows, checked by deriving the identity again */
	return p < end && p + 1 < end && !memchr(p + 1, ' ', (size_t)(end - p - 1));
}
