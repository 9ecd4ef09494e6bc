/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DH-HMAC-CHAP arithmetic on OpenSSL (see dhchap.h). The byte layouts follow NVMe Base 2.0
 * section 8.13.5 and are what Linux's host and target compute, so either end interoperates.
 */
#include <errno.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/dh.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <string.h>

#include "dhchap.h"
#include "key_interchange.h"

static const struct {
	const char *name;
	size_t len;
} hashes[] = {[1] = {"sha256", 32}, [2] = {"sha384", 48}, [3] = {"sha512", 64}};

static const struct {
	const char *name;
	size_t len;
} groups[] = {{"null", 0},         {"ffdhe2048", 256}, {"ffdhe3072", 384},
	      {"ffdhe4096", 512},   {"ffdhe6144", 768}, {"ffdhe8192", 1024}};

size_t dhchap_hash_len(uint8_t hash)
{
	return hash >= 1 && hash <= 3 ? hashes[hash].len : 0;
}

const char *dhchap_group_name(uint8_t group)
{
	return group <= 5 ? groups[group].name : NULL;
}

size_t dhchap_group_len(uint8_t group)
{
	return group <= 5 ? groups[group].len : 0;
}

int dhchap_hash_id(const char *name)
{
	if (!strncmp(name, "hmac(", 5))
		name += 5;
	for (int i = 1; i <= 3; i++)
		if (!strncmp(name, hashes[i].name, strlen(hashes[i].name)))
			return i;
	return -1;
}

int dhchap_group_id(const char *name)
{
	for (int i = 0; i <= 5; i++)
		if (!strcmp(name, groups[i].name))
			return i;
	return -1;
}

static const EVP_MD *md_of(uint8_t hash)
{
	switch (hash) {
	case 1: return EVP_sha256();
	case 2: return EVP_sha384();
	case 3: return EVP_sha512();
	default: return NULL;
	}
}

int dhchap_key_parse(const char *secret, struct dhchap_key *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	unsigned xf;
	int rc = key_interchange_parse(secret, "DHHC-1", "DH-HMAC-CHAP secret", &xf, out->key, &out->len,
				       err, errlen);
	if (rc)
		return rc;
	if (xf > 3) {
		snprintf(err, errlen, "key transformation %02u is unknown (00..03)", xf);
		rc = -EINVAL;
	} else if (out->len != 32 && out->len != 48 && out->len != 64) {
		snprintf(err, errlen, "key is %zu bytes (expected 32, 48 or 64)", out->len);
		rc = -EINVAL;
	}
	out->transform = (uint8_t)xf;
	if (rc)
		OPENSSL_cleanse(out, sizeof(*out));
	return rc;
}

void dhchap_key_format(const struct dhchap_key *k, char *out, size_t outlen)
{
	key_interchange_format("DHHC-1", k->transform, k->key, k->len, out, outlen);
}

size_t dhchap_key_transform(const struct dhchap_key *k, const char *nqn, uint8_t *out)
{
	if (k->transform == 0) {
		memcpy(out, k->key, k->len);
		return k->len;
	}
	uint8_t msg[256 + 17];
	size_t nl = strlen(nqn);
	if (nl > 256)
		return 0;
	memcpy(msg, nqn, nl);
	memcpy(msg + nl, "NVMe-over-Fabrics", 17);
	unsigned int len = 0;
	if (!HMAC(md_of(k->transform), k->key, (int)k->len, msg, nl + 17, out, &len))
		return 0;
	return len;
}

int dhchap_response(uint8_t hash, const uint8_t *kh, size_t kh_len, const uint8_t *challenge,
		    uint32_t seq, uint16_t tid, const char *role, const char *nqn1, const char *nqn2,
		    const uint8_t *sess, size_t sess_len, uint8_t *out)
{
	const EVP_MD *md = md_of(hash);
	size_t hl = dhchap_hash_len(hash);
	if (!md)
		return -EINVAL;
	uint8_t aug[DHCHAP_MAX_HASH];
	const uint8_t *c = challenge;
	if (sess) {
		/* the augmented challenge: HMAC(H(g^xy mod p), C) */
		uint8_t hk[DHCHAP_MAX_HASH];
		unsigned int l = 0;
		if (!EVP_Digest(sess, sess_len, hk, &l, md, NULL) ||
		    !HMAC(md, hk, (int)hl, challenge, hl, aug, &l))
			return -EIO;
		OPENSSL_cleanse(hk, sizeof(hk));
		c = aug;
	}
	uint8_t msg[DHCHAP_MAX_HASH + 4 + 2 + 1 + 10 + 2 * 256 + 1];
	size_t n1 = strlen(nqn1), n2 = strlen(nqn2), rl = strlen(role), at = 0;
	if (n1 > 256 || n2 > 256 || rl > 10)
		return -EINVAL;
	memcpy(msg + at, c, hl);
	at += hl;
	for (int i = 0; i < 4; i++)
		msg[at++] = (uint8_t)(seq >> (8 * i));
	msg[at++] = (uint8_t)tid;
	msg[at++] = (uint8_t)(tid >> 8);
	msg[at++] = 0; /* SC_C: no secure channel concatenation */
	memcpy(msg + at, role, rl);
	at += rl;
	memcpy(msg + at, nqn1, n1);
	at += n1;
	msg[at++] = 0;
	memcpy(msg + at, nqn2, n2);
	at += n2;
	unsigned int len = 0;
	int rc = HMAC(md, kh, (int)kh_len, msg, at, out, &len) ? 0 : -EIO;
	OPENSSL_cleanse(aug, sizeof(aug));
	return rc;
}

int dhchap_dh_generate(struct dhchap_dh *dh, uint8_t group, uint8_t *pub)
{
	memset(dh, 0, sizeof(*dh));
	dh->group = group;
	size_t plen = dhchap_group_len(group);
	if (!plen)
		return -EINVAL;
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "DH", NULL);
	EVP_PKEY *pkey = NULL;
	OSSL_PARAM params[] = {
		OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME,
						 (char *)dhchap_group_name(group), 0),
		OSSL_PARAM_construct_end()};
	int ok = ctx && EVP_PKEY_keygen_init(ctx) > 0 && EVP_PKEY_CTX_set_params(ctx, params) > 0 &&
		 EVP_PKEY_generate(ctx, &pkey) > 0;
	EVP_PKEY_CTX_free(ctx);
	if (!ok)
		return -EIO;
	BIGNUM *bn = NULL;
	if (EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_PUB_KEY, &bn) <= 0 ||
	    BN_bn2binpad(bn, pub, (int)plen) != (int)plen) {
		BN_free(bn);
		EVP_PKEY_free(pkey);
		return -EIO;
	}
	BN_free(bn);
	dh->pkey = pkey;
	return 0;
}

int dhchap_dh_derive(struct dhchap_dh *dh, const uint8_t *peer, size_t peer_len, uint8_t *secret)
{
	size_t plen = dhchap_group_len(dh->group);
	if (!dh->pkey || peer_len != plen)
		return -EINVAL;
	EVP_PKEY *other = EVP_PKEY_new();
	int rc = -EINVAL;
	EVP_PKEY_CTX *ctx = NULL;
	if (!other || EVP_PKEY_copy_parameters(other, dh->pkey) <= 0 ||
	    EVP_PKEY_set1_encoded_public_key(other, peer, peer_len) <= 0)
		goto out;
	ctx = EVP_PKEY_CTX_new_from_pkey(NULL, dh->pkey, NULL);
	size_t out_len = plen;
	/* padded to the group's length, as Linux computes it; set_peer checks the value */
	if (ctx && EVP_PKEY_derive_init(ctx) > 0 && EVP_PKEY_CTX_set_dh_pad(ctx, 1) > 0 &&
	    EVP_PKEY_derive_set_peer(ctx, other) > 0 && EVP_PKEY_derive(ctx, secret, &out_len) > 0 &&
	    out_len == plen)
		rc = 0;
out:
	EVP_PKEY_CTX_free(ctx);
	EVP_PKEY_free(other);
	return rc;
}

void dhchap_dh_free(struct dhchap_dh *dh)
{
	EVP_PKEY_free(dh->pkey);
	dh->pkey = NULL;
}

int dhchap_random(void *buf, size_t len)
{
	return RAND_bytes(buf, (int)len) == 1 ? 0 : -EIO;
}

bool dhchap_equal(const uint8_t *a, const uint8_t *b, size_t len)
{
	return CRYPTO_memcmp(a, b, len) == 0;
}
