/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NVMe/TCP wire pieces on their own: PDU header checks (each bad field gives the fatal error
 * status and the field's offset a TermReq must report), TermReq layout, CRC-32C digests,
 * nvme-tcp:// device ids, DH-HMAC-CHAP secrets (nvme-cli's format) and responses (known
 * answers computed independently with Python's hmac/hashlib from the formula Linux uses).
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "unvme/unvme.h"
#include "lib/fabrics/dhchap.h"
#include "lib/transport/tcp/tcp_params.h"
#include "lib/fabrics/tcp/tcp_pdu.h"
#include "lib/util/crc.h"
#include "test_util.h"

static const struct tcp_pdu_rules ctrl_rules = {.controller = true, .pda = 4};
static const struct tcp_pdu_rules host_rules = {.controller = false, .pda = 4};

static struct nvme_tcp_hdr hdr(uint8_t type, uint8_t flags, uint8_t hlen, uint8_t pdo, uint32_t plen)
{
	return (struct nvme_tcp_hdr){.type = type, .flags = flags, .hlen = hlen, .pdo = pdo, .plen = plen};
}

static void test_valid_headers(void)
{
	struct tcp_pdu_info i;
	struct nvme_tcp_hdr h = hdr(NVME_TCP_CAPSULE_CMD, 0, 72, 0, 72);
	CHECK_EQ(tcp_pdu_check(&h, &ctrl_rules, &i), TCP_PDU_OK);
	CHECK_EQ(i.data_len, 0);
	CHECK_EQ(i.hdr_bytes, 72);
	h = hdr(NVME_TCP_CAPSULE_CMD, 0, 72, 72, 72 + 4096);
	CHECK_EQ(tcp_pdu_check(&h, &ctrl_rules, &i), TCP_PDU_OK);
	CHECK_EQ(i.data_len, 4096);
	CHECK_EQ(i.hdr_bytes, 72);
	h = hdr(NVME_TCP_H2C_DATA, NVME_TCP_F_LAST_PDU, 24, 24, 24 + 512);
	CHECK_EQ(tcp_pdu_check(&h, &ctrl_rules, &i), TCP_PDU_OK);
	h = hdr(NVME_TCP_C2H_DATA, NVME_TCP_F_LAST_PDU | NVME_TCP_F_SUCCESS, 24, 24, 24 + 512);
	CHECK_EQ(tcp_pdu_check(&h, &host_rules, &i), TCP_PDU_OK);
	h = hdr(NVME_TCP_R2T, 0, 24, 0, 24);
	CHECK_EQ(tcp_pdu_check(&h, &host_rules, &i), TCP_PDU_OK);
	/* with both digests: header digest after the header, data digest after the data */
	struct tcp_pdu_rules dg = {.controller = true, .hdgst = true, .ddgst = true, .pda = 4};
	h = hdr(NVME_TCP_CAPSULE_CMD, NVME_TCP_F_HDGST | NVME_TCP_F_DDGST, 72, 76, 76 + 100 + 4);
	CHECK_EQ(tcp_pdu_check(&h, &dg, &i), TCP_PDU_OK);
	CHECK_EQ(i.data_len, 100);
	CHECK_EQ(i.hdr_bytes, 76);
	h = hdr(NVME_TCP_CAPSULE_CMD, NVME_TCP_F_HDGST, 72, 0, 76); /* no data: no data digest */
	CHECK_EQ(tcp_pdu_check(&h, &dg, &i), TCP_PDU_OK);
}

/* Each malformed field answers FATAL with FES and FEI = the field's offset. */
static void expect_fatal(const struct nvme_tcp_hdr *h, const struct tcp_pdu_rules *r, uint16_t fes,
			 uint32_t fei)
{
	struct tcp_pdu_info i;
	CHECK_EQ(tcp_pdu_check(h, r, &i), TCP_PDU_FATAL);
	CHECK_EQ(i.fes, fes);
	CHECK_EQ(i.fei, fei);
	CHECK(i.why && *i.why);
}

static void test_bad_headers(void)
{
	struct nvme_tcp_hdr h;
	/* unknown type, a host-to-controller type at the host, ICReq after initialisation */
	h = hdr(0x0b, 0, 24, 0, 24);
	expect_fatal(&h, &ctrl_rules, NVME_TCP_FES_INVALID_HEADER, 0);
	h = hdr(NVME_TCP_C2H_DATA, NVME_TCP_F_LAST_PDU, 24, 24, 100);
	expect_fatal(&h, &ctrl_rules, NVME_TCP_FES_INVALID_HEADER, 0);
	h = hdr(NVME_TCP_ICREQ, 0, 128, 0, 128);
	expect_fatal(&h, &ctrl_rules, NVME_TCP_FES_INVALID_HEADER, 0);
	/* flags: undefined, digest not negotiated, SUCCESS without LAST_PDU */
	h = hdr(NVME_TCP_CAPSULE_CMD, 0x10, 72, 0, 72);
	expect_fatal(&h, &ctrl_rules, NVME_TCP_FES_INVALID_HEADER, 1);
	h = hdr(NVME_TCP_CAPSULE_CMD, NVME_TCP_F_HDGST, 72, 0, 76);
	expect_fatal(&h, &ctrl_rules, NVME_TCP_FES_INVALID_HEADER, 1);
	h = hdr(NVME_TCP_C2H_DATA, NVME_TCP_F_SUCCESS, 24, 24, 100);
	expect_fatal(&h, &host_rules, NVME_TCP_FES_INVALID_HEADER, 1);
	/* header length wrong for the type */
	h = hdr(NVME_TCP_CAPSULE_CMD, 0, 64, 0, 72);
	expect_fatal(&h, &ctrl_rules, NVME_TCP_FES_INVALID_HEADER, 2);
	/* data offset inside the header, beyond the PDU, misaligned, on a PDU without data */
	h = hdr(NVME_TCP_CAPSULE_CMD, 0, 72, 60, 200);
	expect_fatal(&h, &ctrl_rules, NVME_TCP_FES_INVALID_HEADER, 3);
	h = hdr(NVME_TCP_CAPSULE_CMD, 0, 72, 250, 200);
	expect_fatal(&h, &ctrl_rules, NVME_TCP_FES_INVALID_HEADER, 3);
	struct tcp_pdu_rules aligned = {.controller = true, .pda = 32};
	h = hdr(NVME_TCP_CAPSULE_CMD, 0, 72, 76, 200);
	expect_fatal(&h, &aligned, NVME_TCP_FES_INVALID_HEADER, 3);
	h = hdr(NVME_TCP_R2T, 0, 24, 8, 24);
	expect_fatal(&h, &host_rules, NVME_TCP_FES_INVALID_HEADER, 3);
	/* PDU length: shorter than the header, extra bytes on a response, data PDU with none */
	h = hdr(NVME_TCP_CAPSULE_CMD, 0, 72, 0, 40);
	expect_fatal(&h, &ctrl_rules, NVME_TCP_FES_INVALID_HEADER, 4);
	h = hdr(NVME_TCP_CAPSULE_RESP, 0, 24, 0, 30);
	expect_fatal(&h, &host_rules, NVME_TCP_FES_INVALID_HEADER, 4);
	h = hdr(NVME_TCP_H2C_DATA, NVME_TCP_F_LAST_PDU, 24, 0, 24);
	expect_fatal(&h, &ctrl_rules, NVME_TCP_FES_INVALID_HEADER, 4);
	/* a TermReq of invalid length is answered by closing, never by another TermReq */
	struct tcp_pdu_info i;
	h = hdr(NVME_TCP_H2C_TERM, 0, 24, 0, 400);
	CHECK_EQ(tcp_pdu_check(&h, &ctrl_rules, &i), TCP_PDU_DROP);
}

static void test_icreq_icresp(void)
{
	struct nvme_tcp_icreq req = {0};
	req.hdr = hdr(NVME_TCP_ICREQ, 0, 128, 0, 128);
	struct tcp_pdu_info i;
	CHECK_EQ(tcp_pdu_check_icreq(&req, &i), TCP_PDU_OK);
	req.pfv = 1;
	CHECK_EQ(tcp_pdu_check_icreq(&req, &i), TCP_PDU_FATAL);
	CHECK_EQ(i.fes, NVME_TCP_FES_UNSUPPORTED);
	CHECK_EQ(i.fei, 8);
	req.pfv = 0;
	req.hpda = 32;
	CHECK_EQ(tcp_pdu_check_icreq(&req, &i), TCP_PDU_FATAL);
	CHECK_EQ(i.fei, 10);
	req.hpda = 0;
	req.hdr.plen = 129;
	CHECK_EQ(tcp_pdu_check_icreq(&req, &i), TCP_PDU_FATAL);
	CHECK_EQ(i.fei, 4);
	struct nvme_tcp_icresp rsp = {0};
	rsp.hdr = hdr(NVME_TCP_ICRESP, 0, 128, 0, 128);
	rsp.maxh2cdata = 8192;
	CHECK_EQ(tcp_pdu_check_icresp(&rsp, 0, &i), TCP_PDU_OK);
	rsp.dgst = NVME_TCP_DGST_HDR; /* a digest the host did not ask for */
	CHECK_EQ(tcp_pdu_check_icresp(&rsp, 0, &i), TCP_PDU_FATAL);
	CHECK_EQ(tcp_pdu_check_icresp(&rsp, NVME_TCP_DGST_HDR, &i), TCP_PDU_OK);
	rsp.maxh2cdata = 1024;
	CHECK_EQ(tcp_pdu_check_icresp(&rsp, NVME_TCP_DGST_HDR, &i), TCP_PDU_FATAL);
	CHECK_EQ(i.fei, 12);
}

static void test_termreq(void)
{
	uint8_t out[sizeof(struct nvme_tcp_term) + NVME_TCP_TERM_MAX_DATA];
	uint8_t bad[200];
	memset(bad, 0xab, sizeof(bad));
	size_t n = tcp_pdu_term(out, true, NVME_TCP_FES_DATA_RANGE, 0x12345678, bad, sizeof(bad));
	CHECK_EQ(n, 24 + 128); /* the echo is capped at 128 bytes: PLEN <= 152 */
	const struct nvme_tcp_term *t = (const void *)out;
	CHECK_EQ(t->hdr.type, NVME_TCP_C2H_TERM);
	CHECK_EQ(t->hdr.hlen, 24);
	CHECK_EQ(t->hdr.plen, 152);
	CHECK_EQ(t->fes, NVME_TCP_FES_DATA_RANGE);
	CHECK_EQ(t->fei[0], 0x78);
	CHECK_EQ(t->fei[3], 0x12);
	CHECK_EQ(out[24], 0xab);
}

static void test_crc(void)
{
	CHECK_EQ(crc32c(0, "123456789", 9), 0xe3069283u);   /* the CRC-32C check value */
	CHECK_EQ(crc32_ieee(0, "123456789", 9), 0xcbf43926u); /* the CRC-32 check value */
	/* the header digest of a PDU header is the CRC-32C of its HLEN bytes */
	struct nvme_tcp_hdr h = hdr(NVME_TCP_R2T, 0, 24, 0, 28);
	CHECK_EQ(tcp_hdgst(&h, sizeof(h)), crc32c(0, &h, sizeof(h)));
}

static void test_device_ids(void)
{
	struct tcp_params p;
	setenv("UNVME_HOSTNQN", "nqn.2014-08.org.nvmexpress:uuid:11111111-2222-4333-8444-555555555555", 1);
	setenv("UNVME_HOSTID", "11111111-2222-4333-8444-555555555555", 1);
	CHECK_EQ(tcp_params_parse("nvme-tcp://10.0.0.1:4421/nqn.2024-01.io.test:a", &p), 0);
	CHECK_STREQ(p.nvmf.host, "10.0.0.1");
	CHECK_STREQ(p.nvmf.port, "4421");
	CHECK_STREQ(p.nvmf.subnqn, "nqn.2024-01.io.test:a");
	CHECK_STREQ(p.nvmf.hostnqn, "nqn.2014-08.org.nvmexpress:uuid:11111111-2222-4333-8444-555555555555");
	CHECK_EQ(p.nvmf.hostid[0], 0x11);
	CHECK_EQ(p.nvmf.hostid[15], 0x55);
	CHECK(!p.nvmf.discovery);
	CHECK_EQ(tcp_params_parse("nvme-tcp://[::1]/nqn.x?hdgst=1&ddgst=on&kato=0&incapsule=0", &p), 0);
	CHECK_STREQ(p.nvmf.host, "::1");
	CHECK_STREQ(p.nvmf.port, "4420");
	CHECK(p.hdgst && p.ddgst);
	CHECK_EQ(p.nvmf.kato_ms, 0);
	CHECK_EQ(p.nvmf.incapsule, 0);
	/* no NQN: the discovery subsystem, on the discovery port, without keep alive */
	CHECK_EQ(tcp_params_parse("nvme-tcp://example.org", &p), 0);
	CHECK(p.nvmf.discovery);
	CHECK_STREQ(p.nvmf.subnqn, NVMF_DISCOVERY_NQN);
	CHECK_STREQ(p.nvmf.port, "8009");
	CHECK_EQ(tcp_params_parse("nvme-tcp://h/n?dhchap_secret=DHHC-1:00:abc%3D:&hostnqn=nqn.h", &p), 0);
	CHECK_STREQ(p.nvmf.dhchap_secret, "DHHC-1:00:abc=:");
	CHECK_STREQ(p.nvmf.hostnqn, "nqn.h");
	/* errors name what was wrong */
	CHECK_EQ(tcp_params_parse("nvme-tcp://:4420/n", &p), -EINVAL);
	CHECK_EQ(tcp_params_parse("nvme-tcp://h:70000/n", &p), -EINVAL);
	CHECK(strstr(unvme_errmsg(), "port"));
	CHECK_EQ(tcp_params_parse("nvme-tcp://h/n?color=blue", &p), -EINVAL);
	CHECK(strstr(unvme_errmsg(), "color"));
	CHECK_EQ(tcp_params_parse("nvme-tcp://h/n?hdgst=maybe", &p), -EINVAL);
	CHECK_EQ(tcp_params_parse("nvme-tcp://[::1/n", &p), -EINVAL);
	unsetenv("UNVME_HOSTNQN");
	unsetenv("UNVME_HOSTID");
}

/* A key nvme-cli printed (nvme gen-dhchap-key -n nqn.host1, no transformation). */
#define CLI_KEY "DHHC-1:00:QH1FKOt525UX4Tjtw7N6MRy/KmFCzTsukXIQJ7FDnjVkKI+m:"

static void hex(const char *s, uint8_t *out)
{
	for (size_t i = 0; s[2 * i]; i++) {
		char b[3] = {s[2 * i], s[2 * i + 1], 0};
		out[i] = (uint8_t)strtoul(b, NULL, 16);
	}
}

static void test_dhchap_secrets(void)
{
	struct dhchap_key k;
	char err[160];
	CHECK_EQ(dhchap_key_parse(CLI_KEY, &k, err, sizeof(err)), 0);
	CHECK_EQ(k.len, 32);
	CHECK_EQ(k.transform, 0);
	char back[256];
	dhchap_key_format(&k, back, sizeof(back));
	CHECK_STREQ(back, CLI_KEY);
	/* a mistyped character breaks the CRC */
	char typo[] = CLI_KEY;
	typo[12] = typo[12] == 'A' ? 'B' : 'A';
	CHECK_EQ(dhchap_key_parse(typo, &k, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "CRC"));
	CHECK_EQ(dhchap_key_parse("DHHC-1:07:QH1F:", &k, err, sizeof(err)), -EINVAL);
	CHECK_EQ(dhchap_key_parse("DHHC-2:00:QH1F:", &k, err, sizeof(err)), -EINVAL);
	CHECK_EQ(dhchap_key_parse("DHHC-1:00:QH1F:", &k, err, sizeof(err)), -EINVAL);
	CHECK_EQ(dhchap_hash_id("hmac(sha384)"), 2);
	CHECK_EQ(dhchap_group_id("ffdhe4096"), 3);
	CHECK_EQ(dhchap_group_id("ffdhe1024"), -1);
}

static void test_dhchap_responses(void)
{
	struct dhchap_key k;
	char err[160];
	REQUIRE(dhchap_key_parse(CLI_KEY, &k, err, sizeof(err)) == 0);
	uint8_t want[32], kh[64], r[64], c1[32];
	/* the transformation with SHA-256 and the host NQN */
	k.transform = 1;
	CHECK_EQ(dhchap_key_transform(&k, "nqn.host1", kh), 32);
	hex("7b0ca22f65de75dbb76438c243104f026cab2dda93037046aa0ec49eaa21948b", want);
	CHECK(memcmp(kh, want, 32) == 0);
	for (int i = 0; i < 32; i++)
		c1[i] = (uint8_t)i;
	CHECK_EQ(dhchap_response(1, kh, 32, c1, 0x01020304, 0x0506, "HostHost", "nqn.host1", "nqn.sub1",
				 NULL, 0, r), 0);
	hex("d8789d1620259fc347f6ec6183f8cb97ebb7ac6833826801b1985f6c6483b9f2", want);
	CHECK(memcmp(r, want, 32) == 0);
	/* the controller's answer, the challenge augmented with a DH shared secret */
	uint8_t sess[256];
	for (int i = 0; i < 256; i++)
		sess[i] = (uint8_t)i;
	CHECK_EQ(dhchap_response(1, k.key, 32, c1, 0x01020304, 0x0506, "Controller", "nqn.sub1",
				 "nqn.host1", sess, sizeof(sess), r), 0);
	hex("1f40f63d13fadb909c82158b1f86d0302106c828cf08f2e5976ce8f422996b5f", want);
	CHECK(memcmp(r, want, 32) == 0);
}

static void test_dh_exchange(void)
{
	/* both sides of ffdhe2048 reach the same secret, padded to 256 bytes */
	struct dhchap_dh a, b;
	uint8_t pa[DHCHAP_MAX_DH], pb[DHCHAP_MAX_DH], sa[DHCHAP_MAX_DH], sb[DHCHAP_MAX_DH];
	REQUIRE(dhchap_dh_generate(&a, 1, pa) == 0);
	REQUIRE(dhchap_dh_generate(&b, 1, pb) == 0);
	CHECK_EQ(dhchap_dh_derive(&a, pb, 256, sa), 0);
	CHECK_EQ(dhchap_dh_derive(&b, pa, 256, sb), 0);
	CHECK(memcmp(sa, sb, 256) == 0);
	/* a value that is no group element (1, p - 1 are refused by the check) */
	uint8_t one[256] = {0};
	one[255] = 1;
	CHECK_EQ(dhchap_dh_derive(&a, one, 256, sa), -EINVAL);
	CHECK_EQ(dhchap_dh_derive(&a, pb, 255, sa), -EINVAL);
	dhchap_dh_free(&a);
	dhchap_dh_free(&b);
}

TEST_MAIN(TEST(test_valid_headers), TEST(test_bad_headers), TEST(test_icreq_icresp),
	  TEST(test_termreq), TEST(test_crc), TEST(test_device_ids), TEST(test_dhchap_secrets),
	  TEST(test_dhchap_responses), TEST(test_dh_exchange))
