/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NVMe in-band authentication with DH-HMAC-CHAP (NVMe Base 2.0 section 8.13): the messages
 * carried by Authentication Send / Receive (SECP E9h, SPSP0 01h, SPSP1 01h).
 *
 *   host                                        controller
 *   AUTH_Negotiate (hashes, DH groups)  ----->
 *                                       <-----  DH-HMAC-CHAP_Challenge (hash, group, C1, S1, g^y)
 *   DH-HMAC-CHAP_Reply (R1, C2, S2, g^x)----->
 *                                       <-----  DH-HMAC-CHAP_Success1 (R2 when asked)
 *   DH-HMAC-CHAP_Success2               ----->  (only when the host asked for R2)
 * A side that rejects sends Failure1 (controller) or Failure2 (host).
 */
#ifndef UNVME_SPEC_AUTH_H
#define UNVME_SPEC_AUTH_H

#include <stdint.h>

#include "cmd.h"

#define NVME_AUTH_SECP       0xe9
#define NVME_AUTH_SPSP       0x01  /* SPSP0 and SPSP1 */

enum nvme_auth_type {
	NVME_AUTH_COMMON = 0x00, /* negotiate, failure1, failure2 */
	NVME_AUTH_DHCHAP = 0x01,
};

enum nvme_auth_msg {
	NVME_AUTH_NEGOTIATE = 0x00,
	NVME_AUTH_CHALLENGE = 0x01,
	NVME_AUTH_REPLY     = 0x02,
	NVME_AUTH_SUCCESS1  = 0x03,
	NVME_AUTH_SUCCESS2  = 0x04,
	NVME_AUTH_FAILURE2  = 0xf0,
	NVME_AUTH_FAILURE1  = 0xf1,
};

#define NVME_AUTH_PROTOCOL_DHCHAP 0x01

enum nvme_auth_hash {
	NVME_AUTH_HASH_SHA256 = 0x01,
	NVME_AUTH_HASH_SHA384 = 0x02,
	NVME_AUTH_HASH_SHA512 = 0x03,
};

enum nvme_auth_dhgroup {
	NVME_AUTH_DH_NULL      = 0x00,
	NVME_AUTH_DH_FFDHE2048 = 0x01,
	NVME_AUTH_DH_FFDHE3072 = 0x02,
	NVME_AUTH_DH_FFDHE4096 = 0x03,
	NVME_AUTH_DH_FFDHE6144 = 0x04,
	NVME_AUTH_DH_FFDHE8192 = 0x05,
};

/* Failure reason code explanations */
enum nvme_auth_fail_reason {
	NVME_AUTH_FAIL_FAILED            = 0x01,
	NVME_AUTH_FAIL_NOT_USABLE        = 0x02,
	NVME_AUTH_FAIL_CONCAT_MISMATCH   = 0x03,
	NVME_AUTH_FAIL_HASH_UNUSABLE     = 0x04,
	NVME_AUTH_FAIL_DHGROUP_UNUSABLE  = 0x05,
	NVME_AUTH_FAIL_INCORRECT_PAYLOAD = 0x06,
	NVME_AUTH_FAIL_INCORRECT_MESSAGE = 0x07,
};
#define NVME_AUTH_REASON_FAILED 0x01

/* Every message starts with these 6 bytes. */
struct nvme_auth_hdr {
	uint8_t  auth_type;
	uint8_t  auth_id;
	uint8_t  rsvd2[2];
	uint16_t t_id;      /* transaction id, chosen by the host */
};
NVME_STATIC_ASSERT(sizeof(struct nvme_auth_hdr) == 6, "auth header is 6 bytes");

/* A DH-HMAC-CHAP protocol descriptor: HALEN hash ids from idlist[0], DHLEN group ids from
 * idlist[30]. */
struct nvme_auth_dhchap_desc {
	uint8_t  authid;    /* NVME_AUTH_PROTOCOL_DHCHAP */
	uint8_t  rsvd1;
	uint8_t  halen;
	uint8_t  dhlen;
	uint8_t  idlist[60];
};
NVME_STATIC_ASSERT(sizeof(struct nvme_auth_dhchap_desc) == 64, "protocol descriptor is 64 bytes");
#define NVME_AUTH_DHLIST_OFFSET 30

struct nvme_auth_negotiate {
	struct nvme_auth_hdr hdr;
	uint8_t  sc_c;      /* secure channel concatenation, 0 */
	uint8_t  napd;      /* number of protocol descriptors */
	struct nvme_auth_dhchap_desc desc[];
};
NVME_STATIC_ASSERT(sizeof(struct nvme_auth_negotiate) == 8, "negotiate header is 8 bytes");

struct nvme_auth_challenge {
	struct nvme_auth_hdr hdr;
	uint8_t  hl;        /* hash length */
	uint8_t  rsvd7;
	uint8_t  hashid;
	uint8_t  dhgid;
	uint16_t dhvlen;
	uint32_t seqnum;    /* S1 */
	uint8_t  cval[];    /* HL bytes of C1, then DHVLEN bytes of g^y mod p */
};
NVME_STATIC_ASSERT(sizeof(struct nvme_auth_challenge) == 16, "challenge header is 16 bytes");

struct nvme_auth_reply {
	struct nvme_auth_hdr hdr;
	uint8_t  hl;
	uint8_t  rsvd7;
	uint8_t  cvalid;    /* 1: the host challenges the controller (C2 and S2 are valid) */
	uint8_t  rsvd9;
	uint16_t dhvlen;
	uint32_t seqnum;    /* S2 */
	uint8_t  rval[];    /* HL bytes of R1, HL bytes of C2, DHVLEN bytes of g^x mod p */
};
NVME_STATIC_ASSERT(sizeof(struct nvme_auth_reply) == 16, "reply header is 16 bytes");

struct nvme_auth_success1 {
	struct nvme_auth_hdr hdr;
	uint8_t  hl;
	uint8_t  rsvd7;
	uint8_t  rvalid;    /* 1: R2 follows */
	uint8_t  rsvd9[7];
	uint8_t  rval[];    /* HL bytes of R2 */
};
NVME_STATIC_ASSERT(sizeof(struct nvme_auth_success1) == 16, "success1 header is 16 bytes");

struct nvme_auth_success2 {
	struct nvme_auth_hdr hdr;
	uint8_t  rsvd6[10];
};
NVME_STATIC_ASSERT(sizeof(struct nvme_auth_success2) == 16, "success2 is 16 bytes");

struct nvme_auth_failure {
	struct nvme_auth_hdr hdr;
	uint8_t  rescode;       /* NVME_AUTH_REASON_FAILED */
	uint8_t  rescode_exp;   /* enum nvme_auth_failure */
};
NVME_STATIC_ASSERT(sizeof(struct nvme_auth_failure) == 8, "failure message is 8 bytes");

#endif
