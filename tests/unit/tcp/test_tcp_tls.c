/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NVMe/TCP TLS on its own: configured PSKs in the interchange format (what nvme gen-tls-key
 * prints), the retained PSK, identities and TLS PSKs against known answers computed
 * independently with Python's hmac/hashlib from the formula of the NVMe TCP transport
 * specification (HKDF-Expand-Label of RFC 8446), identity parsing, and whole sessions over a
 * socket pair: the handshake, data of every size both ways with the "sent only once on the
 * wire" accounting, and the refusals (another key, no key, a peer in the clear); and against
 * the target, a Connect that names another host than the PSK identity: refused.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "unvme/spec.h"
#include "unvme/spec/fabrics.h"
#include "unvme/spec/tcp.h"
#include "lib/fabrics/tcp/tcp_psk.h"
#include "lib/fabrics/tcp/tcp_tls.h"
#include "lib/target/target.h"
#include "connect_pdu.h"
#include "test_util.h"

#define HOSTNQN "nqn.2014-08.org.nvmexpress:uuid:f81d4fae-7dec-11d0-a765-00a0c91e6bf6"
#define SUBNQN "nqn.2024-01.io.unvme.test:tls"

static void hex(const char *s, uint8_t *out)
{
	for (size_t i = 0; s[2 * i]; i++) {
		unsigned v;
		sscanf(s + 2 * i, "%2x", &v);
		out[i] = (uint8_t)v;
	}
}

static void test_psk_interchange_format(void)
{
	struct tcp_psk k;
	char err[200];
	/* bytes 0..31 with hash 01, as nvme gen-tls-key prints such a key */
	CHECK_EQ(tcp_psk_parse("NVMeTLSkey-1:01:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:", &k, err,
			       sizeof(err)), 0);
	CHECK_EQ(k.len, 32);
	CHECK_EQ(k.hash, 1);
	CHECK_EQ(k.key[31], 31);
	CHECK_EQ(tcp_psk_cipher(&k), 1);
	CHECK_EQ(tcp_psk_suite(&k), 0x1301);
	char back[200];
	tcp_psk_format(&k, back, sizeof(back));
	CHECK_STREQ(back, "NVMeTLSkey-1:01:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:");
	CHECK_EQ(tcp_psk_parse("NVMeTLSkey-1:00:ZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXp7fH1+f4CBgoOEhYaHiImKi4yNjo+QkZKTvGwQfg==:",
			       &k, err, sizeof(err)), 0);
	CHECK_EQ(k.len, 48);
	CHECK_EQ(tcp_psk_suite(&k), 0x1302);
	static const struct {
		const char *key, *why;
	} bad[] = {
		{"DHHC-1:01:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:", "not a TLS PSK"},
		{"NVMeTLSkey-1:03:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:", "hash 03 is unknown"},
		{"NVMeTLSkey-1:02:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:", "must be 48 bytes"},
		{"NVMeTLSkey-1:01:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaS:", "CRC mismatch"},
		{"NVMeTLSkey-1:01:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:x", "text after"},
		{"NVMeTLSkey-1:01:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR", "no closing"},
		{"NVMeTLSkey-1:01:AAECAwQFBgcICQoLDA0OD4jizs4=:", "16 bytes"},
		{"NVMeTLSkey-1:01:!!!!:", "not valid base64"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		CHECK_EQ(tcp_psk_parse(bad[i].key, &k, err, sizeof(err)), -EINVAL);
		if (!strstr(err, bad[i].why))
			fprintf(stderr, "  bad key %zu: '%s'\n", i, err);
		CHECK(strstr(err, bad[i].why));
	}
}

/* Known answers: Python (hmac, hashlib) from the spec's HKDF-Expand-Label formula. */
static const struct {
	const char *key;
	int version;
	const char *identity;
	const char *tls_psk;
} kat[] = {
	{"NVMeTLSkey-1:01:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:", 0,
	 "NVMe0R01 " HOSTNQN " " SUBNQN,
	 "70ed8c9b84a67a83deec1f68ae2b3b584a545bdda4ba3dd8de46745d6dd415fe"},
	{"NVMeTLSkey-1:01:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:", 1,
	 "NVMe1R01 " HOSTNQN " " SUBNQN " u7s6RerBqhwf+f6qdGbwMJW9dfof7PQDys8VmDQezOQ=",
	 "33a40e5fc51f04dd24cd97034c059dd889da3bcfe60224192eb90ad8186e1422"},
	{"NVMeTLSkey-1:02:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vcSEgBQ==:", 0,
	 "NVMe0R02 " HOSTNQN " " SUBNQN,
	 "664059e4058a78d664949ef2bc804b78f9f092523f2a97e66a921fa4ba3608ff755b40f3d595d3a2f18db08e164d32e5"},
	{"NVMeTLSkey-1:02:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vcSEgBQ==:", 1,
	 "NVMe1R02 " HOSTNQN " " SUBNQN " M0e6rCsUHp+mHhW+yGWRU5RSZnME9snf/BvsN5LTa8wgQ8TrfRT+pdjBiWCWPAZr",
	 "ab39e553763bfebb88e4119cd87f259682ffdfca8ba378814747cf6425321407459948ca79219ed24d15bbf73a73e50d"},
	{"NVMeTLSkey-1:00:ZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXp7fH1+f4CBgoOeXryU:", 0,
	 "NVMe0R01 " HOSTNQN " " SUBNQN,
	 "048351a15fdd9a17b726ca387af15f8569fa1a2a6e611de98a3286d1dc9fba3e"},
	{"NVMeTLSkey-1:00:ZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXp7fH1+f4CBgoOeXryU:", 1,
	 "NVMe1R01 " HOSTNQN " " SUBNQN " 5vZmFW3ZHsx6/lKG5UajJ08SVRewTZwR35phYaJ3x7Q=",
	 "3ce8369ecce255a4a4cebda0c987a5e14601b31328b206fc18d8b3db3d34d7e4"},
	{"NVMeTLSkey-1:00:ZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXp7fH1+f4CBgoOEhYaHiImKi4yNjo+QkZKTvGwQfg==:", 1,
	 "NVMe1R02 " HOSTNQN " " SUBNQN " 3BGwtowgNI/yOaFpNm1c6P5xgtBHhqUw2Lj826nz2hp3CifTZhl2EMfwmSaDnQ06",
	 "296e38d59dcf1e23f554d71cf00fc17791330b085b792ff61e2c2e84575e9eb41e5025ddd9ed7d6c7b28b94d4348e469"},
};

static void test_derivation_known_answers(void)
{
	for (size_t i = 0; i < sizeof(kat) / sizeof(kat[0]); i++) {
		struct tcp_psk k;
		char err[200], id[TCP_PSK_IDENTITY_MAX];
		uint8_t psk[TCP_PSK_MAX], want[TCP_PSK_MAX];
		REQUIRE(tcp_psk_parse(kat[i].key, &k, err, sizeof(err)) == 0);
		CHECK_EQ(tcp_psk_derive(&k, kat[i].version, HOSTNQN, SUBNQN, id, psk), 0);
		CHECK_STREQ(id, kat[i].identity);
		hex(kat[i].tls_psk, want);
		CHECK(memcmp(psk, want, k.len) == 0);
		/* the identity parses back to its NQNs */
		struct tcp_psk_identity pi;
		CHECK(tcp_psk_identity_parse(id, strlen(id), &pi));
		CHECK_EQ(pi.version, kat[i].version);
		CHECK_EQ(pi.cipher, tcp_psk_cipher(&k));
		CHECK_STREQ(pi.hostnqn, HOSTNQN);
		CHECK_STREQ(pi.subnqn, SUBNQN);
	}
}

static void test_identity_parse_refuses(void)
{
	static const char *bad[] = {
		"", "NVMe0R01", "NVMe0R01 ", "NVMe0R01 host", "NVMe2R01 h s", "NVMe0G01 h s", "NVMe0R03 h s",
		"NVMe0R01 h s extra", "NVMe1R01 h s", "NVMe1R01 h s d e", "NVMe0R01  s",
	};
	struct tcp_psk_identity pi;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (tcp_psk_identity_parse(bad[i], strlen(bad[i]), &pi))
			fprintf(stderr, "  identity '%s' parsed\n", bad[i]);
		CHECK(!tcp_psk_identity_parse(bad[i], strlen(bad[i]), &pi));
	}
	/* a NUL inside the identity is not a shorter one */
	CHECK(!tcp_psk_identity_parse("NVMe0R01 h s\0x", 14, &pi));
	CHECK(tcp_psk_identity_parse("NVMe0R01 h s", 12, &pi));
}

/* ---- sessions over a socket pair, both ends in this thread ---- */

static const char *server_key = "NVMeTLSkey-1:01:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:";

static int find(void *arg, const struct tcp_psk_identity *id, struct tcp_psk *key, char *why, size_t wl)
{
	(void)arg;
	if (strcmp(id->hostnqn, HOSTNQN)) {
		snprintf(why, wl, "no TLS key is configured for this host");
		return -1;
	}
	char err[200];
	return tcp_psk_parse(server_key, key, err, sizeof(err));
}

struct pair {
	int fd[2];
	struct tcp_tls_ctx *cctx, *sctx;
	struct tcp_tls *c, *s;
	int crc, src;
};

static void pair_open(struct pair *p, const char *ckey, int version, const char *host)
{
	REQUIRE(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, p->fd) == 0);
	struct tcp_psk k;
	char err[200];
	REQUIRE(tcp_psk_parse(ckey, &k, err, sizeof(err)) == 0);
	REQUIRE(tcp_tls_ctx_client(&p->cctx, &k, version, host, SUBNQN, err, sizeof(err)) == 0);
	REQUIRE(tcp_tls_ctx_server(&p->sctx, find, NULL, err, sizeof(err)) == 0);
	p->c = tcp_tls_new(p->cctx);
	p->s = tcp_tls_new(p->sctx);
	REQUIRE(p->c && p->s);
	p->crc = p->src = 0;
	for (int i = 0; i < 100 && (p->crc == 0 || p->src == 0); i++) {
		if (p->crc == 0)
			p->crc = tcp_tls_handshake(p->c, p->fd[0]);
		if (p->src == 0)
			p->src = tcp_tls_handshake(p->s, p->fd[1]);
		if (p->crc < 0 || p->src < 0) {
			/* one end gave up: let the other read its alert or the close */
			if (p->crc == 0)
				p->crc = tcp_tls_handshake(p->c, p->fd[0]);
			if (p->src == 0)
				p->src = tcp_tls_handshake(p->s, p->fd[1]);
			break;
		}
	}
}

static void pair_close(struct pair *p)
{
	tcp_tls_free(p->c);
	tcp_tls_free(p->s);
	tcp_tls_ctx_free(p->cctx);
	tcp_tls_ctx_free(p->sctx);
	close(p->fd[0]);
	close(p->fd[1]);
}

/* Moves len bytes from one end to the other in pieces of mixed sizes (PDU headers, data),
 * as tcp_stream.c does: the sender skips what the session took but did not send. */
static void transfer(struct tcp_tls *tx, int txfd, struct tcp_tls *rx, int rxfd, size_t len)
{
	uint8_t *src = malloc(len), *dst = malloc(len);
	for (size_t i = 0; i < len; i++)
		src[i] = (uint8_t)(i * 31 + (i >> 12));
	size_t sent = 0, got = 0;
	for (int spins = 0; (sent < len || got < len) && spins < 100000; spins++) {
		if (sent < len) {
			size_t skip = sent + tcp_tls_unsent(tx);
			struct iovec v[3];
			int n = 0;
			size_t at = skip;
			static const size_t sizes[] = {24, 72, 65536, 4096, 1, 300000};
			for (int k = 0; k < 3 && at < len; k++) {
				size_t piece = sizes[(at / 7 + (size_t)k) % 6];
				piece = piece < len - at ? piece : len - at;
				v[n++] = (struct iovec){src + at, piece};
				at += piece;
			}
			ssize_t s = tcp_tls_sendv(tx, txfd, v, n);
			CHECK(s >= 0);
			if (s < 0)
				break;
			sent += (size_t)s;
		}
		ssize_t r = tcp_tls_recv(rx, rxfd, dst + got, len - got);
		CHECK(r >= 0);
		if (r < 0)
			break;
		got += (size_t)r;
	}
	CHECK_EQ(sent, len);
	CHECK_EQ(got, len);
	CHECK_EQ(tcp_tls_unsent(tx), 0);
	CHECK(memcmp(src, dst, len) == 0);
	free(src);
	free(dst);
}

static void test_session_both_ways(void)
{
	for (int version = 0; version <= 1; version++) {
		struct pair p;
		pair_open(&p, server_key, version, HOSTNQN);
		CHECK_EQ(p.crc, 1);
		CHECK_EQ(p.src, 1);
		CHECK_STREQ(tcp_tls_cipher(p.c), "TLS_AES_128_GCM_SHA256");
		const struct tcp_psk_identity *id = tcp_tls_peer(p.s);
		REQUIRE(id);
		CHECK_STREQ(id->hostnqn, HOSTNQN);
		CHECK_STREQ(id->subnqn, SUBNQN);
		CHECK_EQ(id->version, version);
		transfer(p.c, p.fd[0], p.s, p.fd[1], 3u << 20);
		transfer(p.s, p.fd[1], p.c, p.fd[0], 1000003);
		transfer(p.c, p.fd[0], p.s, p.fd[1], 1);
		/* nothing more to read: 0, not an error */
		uint8_t b[16];
		CHECK_EQ(tcp_tls_recv(p.s, p.fd[1], b, sizeof(b)), 0);
		/* the peer closing ends the session */
		shutdown(p.fd[0], SHUT_RDWR);
		CHECK_EQ(tcp_tls_recv(p.s, p.fd[1], b, sizeof(b)), -ECONNRESET);
		pair_close(&p);
	}
}

static void test_session_refusals(void)
{
	struct pair p;
	/* another key with the same identity: the binder does not verify */
	pair_open(&p, "NVMeTLSkey-1:01:ZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXp7fH1+f4CBgoOeXryU:", 0, HOSTNQN);
	CHECK_EQ(p.src, -EACCES);
	CHECK(strstr(tcp_tls_why(p.s), "not the one configured for it"));
	CHECK_EQ(p.crc, -EACCES);
	CHECK(strstr(tcp_tls_why(p.c), "holds another key"));
	pair_close(&p);
	/* version 1 with another key: the digest already differs */
	pair_open(&p, "NVMeTLSkey-1:01:ZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXp7fH1+f4CBgoOeXryU:", 1, HOSTNQN);
	CHECK_EQ(p.src, -EACCES);
	CHECK(strstr(tcp_tls_why(p.s), "another PSK digest"));
	CHECK(p.crc < 0);
	pair_close(&p);
	/* a host without a key */
	pair_open(&p, server_key, 0, "nqn.2014-08.io.unvme.test:stranger");
	CHECK_EQ(p.src, -EACCES);
	CHECK(strstr(tcp_tls_why(p.s), "no TLS key is configured for this host"));
	CHECK_EQ(p.crc, -EACCES);
	CHECK(strstr(tcp_tls_why(p.c), "no key for this host"));
	pair_close(&p);
}

static void test_peer_in_the_clear(void)
{
	int fd[2];
	REQUIRE(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fd) == 0);
	struct tcp_tls_ctx *sctx;
	char err[200];
	REQUIRE(tcp_tls_ctx_server(&sctx, find, NULL, err, sizeof(err)) == 0);
	struct tcp_tls *s = tcp_tls_new(sctx);
	uint8_t icreq[128] = {0, 0, 128, 0, 128};
	CHECK_EQ(write(fd[0], icreq, sizeof(icreq)), 128);
	CHECK_EQ(tcp_tls_handshake(s, fd[1]), -EPROTO);
	CHECK(strstr(tcp_tls_why(s), "the host speaks NVMe/TCP without TLS (its first PDU is type 0)"));
	/* and nothing can be sent before the handshake */
	struct iovec v = {icreq, 8};
	CHECK_EQ(tcp_tls_sendv(s, fd[1], &v, 1), -ENOTCONN);
	tcp_tls_free(s);
	tcp_tls_ctx_free(sctx);
	close(fd[0]);
	close(fd[1]);
}

/* ---- against the target: Connect is bound to the PSK identity ---- */

static void wait_fd(int fd, bool out)
{
	struct pollfd p = {.fd = fd, .events = out ? POLLOUT : POLLIN};
	poll(&p, 1, 100);
}

static int tls_send_all(struct tcp_tls *t, int fd, const void *buf, size_t len)
{
	size_t done = 0;
	for (int i = 0; done < len && i < 1000; i++) {
		size_t skip = done + tcp_tls_unsent(t);
		struct iovec v = {(uint8_t *)buf + skip, len - skip};
		ssize_t s = tcp_tls_sendv(t, fd, &v, skip < len);
		if (s < 0)
			return (int)s;
		done += (size_t)s;
		if (done < len)
			wait_fd(fd, true);
	}
	return done == len ? 0 : -ETIMEDOUT;
}

static int tls_recv_all(struct tcp_tls *t, int fd, void *buf, size_t len)
{
	size_t got = 0;
	for (int i = 0; got < len && i < 1000; i++) {
		ssize_t r = tcp_tls_recv(t, fd, (uint8_t *)buf + got, len - got);
		if (r < 0)
			return (int)r;
		got += (size_t)r;
		if (got < len)
			wait_fd(fd, false);
	}
	return got == len ? 0 : -ETIMEDOUT;
}

/* TLS as host A with A's key, then Connect naming connect_host: the Connect's status. */
static int connect_as(uint16_t port, const char *key, const char *connect_host)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	if (connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		close(fd);
		return -1;
	}
	fcntl(fd, F_SETFL, O_NONBLOCK);
	struct tcp_psk k;
	char err[200];
	struct tcp_tls_ctx *ctx;
	if (tcp_psk_parse(key, &k, err, sizeof(err)) || tcp_tls_ctx_client(&ctx, &k, 0, HOSTNQN, SUBNQN, err,
									     sizeof(err))) {
		close(fd);
		return -1;
	}
	struct tcp_tls *t = tcp_tls_new(ctx);
	int h = 0;
	for (int i = 0; i < 200 && h == 0; i++) {
		h = tcp_tls_handshake(t, fd);
		if (h == 0)
			wait_fd(fd, tcp_tls_wants_write(t));
	}
	int status = -1;
	struct nvme_tcp_icreq req = {.hdr = {.type = NVME_TCP_ICREQ, .hlen = 128, .plen = 128}};
	struct nvme_tcp_icresp rsp;
	if (h == 1 && tls_send_all(t, fd, &req, sizeof(req)) == 0 &&
	    tls_recv_all(t, fd, &rsp, sizeof(rsp)) == 0 && rsp.hdr.type == NVME_TCP_ICRESP) {
		uint8_t pdu[CONNECT_PDU_LEN];
		connect_pdu(pdu, SUBNQN, connect_host);
		struct nvme_tcp_rsp r;
		if (tls_send_all(t, fd, pdu, sizeof(pdu)) == 0 && tls_recv_all(t, fd, &r, sizeof(r)) == 0 &&
		    r.hdr.type == NVME_TCP_CAPSULE_RESP)
			status = NVME_STATUS_FROM_CQE(r.cqe.status);
	}
	tcp_tls_free(t);
	tcp_tls_ctx_free(ctx);
	close(fd);
	return status;
}

static void test_connect_bound_to_identity(void)
{
	static const char *other_key = "NVMeTLSkey-1:01:ZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXp7fH1+f4CBgoOeXryU:";
	const char *other = "nqn.2014-08.io.unvme.test:other";
	char err[512];
	struct tgt_config *cfg = tgt_config_new();
	tgt_config_set_quiet(cfg, 1);
	tgt_config_set_tls(cfg, 1);
	int si = tgt_config_add_subsys(cfg, SUBNQN, err, sizeof(err));
	REQUIRE(si >= 0);
	REQUIRE(tgt_config_add_listen(cfg, "127.0.0.1:0", err, sizeof(err)) == 0);
	REQUIRE(tgt_config_add_ns(cfg, si, "emu://tlsbind?ns=mem:8M", 0, 0, err, sizeof(err)) == 0);
	REQUIRE(tgt_config_add_host(cfg, si, HOSTNQN, NULL, NULL, NULL, NULL, err, sizeof(err)) == 0);
	REQUIRE(tgt_config_add_host(cfg, si, other, NULL, NULL, NULL, NULL, err, sizeof(err)) == 0);
	REQUIRE(tgt_config_set_tls_key(cfg, si, HOSTNQN, server_key, err, sizeof(err)) == 0);
	REQUIRE(tgt_config_set_tls_key(cfg, si, other, other_key, err, sizeof(err)) == 0);
	struct unvme_target *tgt;
	if (unvme_target_start(cfg, &tgt, err, sizeof(err))) {
		fprintf(stderr, "  target: %s\n", err);
		CHECK(0);
		return;
	}
	uint16_t port = unvme_target_port(tgt);
	/* the host with its own key connects as itself */
	CHECK_EQ(connect_as(port, server_key, HOSTNQN), 0);
	/* ... but not as the other host, whose key it does not hold */
	CHECK_EQ(connect_as(port, server_key, other), NVME_STATUS(NVME_SCT_CMD, NVMF_SC_INVALID_HOST));
	unvme_target_stop(tgt);
}

TEST_MAIN(TEST(test_psk_interchange_format), TEST(test_derivation_known_answers),
	  TEST(test_identity_parse_refuses), TEST(test_session_both_ways), TEST(test_session_refusals),
	  TEST(test_peer_in_the_clear), TEST(test_connect_bound_to_identity))
