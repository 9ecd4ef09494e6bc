/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TLS 1.3 sessions for NVMe/TCP on OpenSSL (see tcp_tls.h).
 */
#include <errno.h>
#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "tcp_tls.h"

#define RING (32u * 1024)   /* each direction of the BIO pair: two records (memory per connection) */
#define REC 16384u          /* TLS 1.3 record plaintext */
#define REC_OVERHEAD 22u    /* record header 5, inner content type 1, AEAD tag 16 */
#define MARKS 256u          /* records taken and not yet wholly on the wire */
#define SUITES "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384"

struct tcp_tls_ctx {
	SSL_CTX *ssl;
	bool server;
	/* host: everything the one identity needs */
	char identity[TCP_PSK_IDENTITY_MAX];
	uint8_t psk[TCP_PSK_MAX];
	size_t psk_len;
	uint16_t suite;
	/* target */
	tcp_tls_find_fn find;
	void *arg;
};

struct tcp_tls {
	pthread_mutex_t mu;
	struct tcp_tls_ctx *ctx;
	SSL *ssl;
	BIO *net;                 /* our end of the BIO pair; OpenSSL has the other */
	bool established;
	bool first_seen;          /* the peer's first byte was looked at */
	bool want_write;
	char why[1024];
	struct tcp_psk_identity peer;
	uint64_t cipher_sent;     /* record bytes that left the socket */
	uint64_t plain_in;        /* plaintext taken by SSL_write */
	uint64_t plain_out;       /* ... whose records all left */
	uint64_t plain_reported;  /* ... and that the caller was told of */
	struct {
		uint64_t plain, cipher;
	} marks[MARKS];           /* after each SSL_write: plaintext so far, record bytes so far */
	uint32_t mhead, mtail;
	uint8_t stage[REC];       /* small pieces gathered into one record */
};

/* OpenSSL's error queue must be empty before an I/O call for SSL_get_error to be right;
 * clearing it is costly, and it is empty unless something failed. */
static void clear_errors(void)
{
	if (ERR_peek_error())
		ERR_clear_error();
}

/* The session of an SSL (app data). */
static struct tcp_tls *tls_of(SSL *ssl)
{
	return SSL_get_app_data(ssl);
}

static SSL_SESSION *psk_session(SSL *ssl, const uint8_t *psk, size_t len, uint16_t suite)
{
	const unsigned char id[2] = {(unsigned char)(suite >> 8), (unsigned char)suite};
	const SSL_CIPHER *c = SSL_CIPHER_find(ssl, id);
	SSL_SESSION *s = c ? SSL_SESSION_new() : NULL;
	if (s && (!SSL_SESSION_set1_master_key(s, psk, len) || !SSL_SESSION_set_cipher(s, c) ||
		  !SSL_SESSION_set_protocol_version(s, TLS1_3_VERSION))) {
		SSL_SESSION_free(s);
		s = NULL;
	}
	return s;
}

/* Host: the one external PSK it offers, under its NVMe identity. Called again with md set
 * after a HelloRetryRequest: the PSK fits only its own suite's hash. */
static int use_session(SSL *ssl, const EVP_MD *md, const unsigned char **id, size_t *idlen,
		       SSL_SESSION **sess)
{
	struct tcp_tls_ctx *ctx = SSL_CTX_get_app_data(SSL_get_SSL_CTX(ssl));
	*sess = NULL;
	if (md && EVP_MD_get_size(md) != (int)ctx->psk_len)
		return 1;
	*sess = psk_session(ssl, ctx->psk, ctx->psk_len, ctx->suite);
	if (!*sess)
		return 0;
	*id = (const unsigned char *)ctx->identity;
	*idlen = strlen(ctx->identity);
	return 1;
}

/* Target: the PSK of the identity the host offers, when its host and subsystem have one. An
 * identity that is not NVMe's, a host without a key, or a key that does not give the same
 * identity (another hash; another digest in version 1) gets no session: the handshake then
 * fails, and why says why. */
static int find_session(SSL *ssl, const unsigned char *identity, size_t len, SSL_SESSION **sess)
{
	struct tcp_tls *t = tls_of(ssl);
	struct tcp_tls_ctx *ctx = t->ctx;
	*sess = NULL;
	struct tcp_psk_identity id;
	if (!tcp_psk_identity_parse((const char *)identity, len, &id)) {
		snprintf(t->why, sizeof(t->why), "the host's PSK identity is not an NVMe one ('%.*s')",
			 (int)(len < 80 ? len : 80), (const char *)identity);
		return 1;
	}
	struct tcp_psk key;
	char why[200] = "";
	if (ctx->find(ctx->arg, &id, &key, why, sizeof(why))) {
		snprintf(t->why, sizeof(t->why), "no PSK for host %s on %s: %s", id.hostnqn, id.subnqn, why);
		return 1;
	}
	char expect[TCP_PSK_IDENTITY_MAX];
	uint8_t psk[TCP_PSK_MAX];
	int rc = tcp_psk_derive(&key, id.version, id.hostnqn, id.subnqn, expect, psk);
	if (rc || strlen(expect) != len || memcmp(expect, identity, len)) {
		snprintf(t->why, sizeof(t->why), "host %s on %s: its PSK identity does not fit the key "
			 "configured for it (%s)", id.hostnqn, id.subnqn,
			 id.cipher != tcp_psk_cipher(&key) ? "another hash" : "another PSK digest");
	} else {
		*sess = psk_session(ssl, psk, key.len, tcp_psk_suite(&key));
		t->peer = id;
	}
	OPENSSL_cleanse(psk, sizeof(psk));
	OPENSSL_cleanse(&key, sizeof(key));
	return *sess ? 1 : (rc ? 0 : 1);
}

static SSL_CTX *new_ssl_ctx(bool server, const char *suites, char *err, size_t errlen)
{
	SSL_CTX *s = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
	if (!s || !SSL_CTX_set_min_proto_version(s, TLS1_3_VERSION) ||
	    !SSL_CTX_set_max_proto_version(s, TLS1_3_VERSION) || !SSL_CTX_set_ciphersuites(s, suites)) {
		snprintf(err, errlen, "cannot set up TLS 1.3 (OpenSSL: %s)",
			 ERR_reason_error_string(ERR_peek_last_error()) ? ERR_reason_error_string(ERR_peek_last_error()) : "?");
		SSL_CTX_free(s);
		return NULL;
	}
	SSL_CTX_set_mode(s, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	SSL_CTX_set_options(s, SSL_OP_NO_TICKET);
	SSL_CTX_set_num_tickets(s, 0); /* no resumption: every connection uses its PSK */
	return s;
}

int tcp_tls_ctx_client(struct tcp_tls_ctx **out, const struct tcp_psk *key, int version,
		       const char *hostnqn, const char *subnqn, char *err, size_t errlen)
{
	*out = NULL;
	struct tcp_tls_ctx *ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;
	if (tcp_psk_derive(key, version, hostnqn, subnqn, ctx->identity, ctx->psk)) {
		snprintf(err, errlen, "cannot derive the TLS PSK (identity version %d)", version);
		free(ctx);
		return -EINVAL;
	}
	ctx->psk_len = key->len;
	ctx->suite = tcp_psk_suite(key);
	/* only the suite of the key's hash: the PSK binder is computed with it */
	ctx->ssl = new_ssl_ctx(false, ctx->suite == 0x1302 ? "TLS_AES_256_GCM_SHA384" : "TLS_AES_128_GCM_SHA256",
			       err, errlen);
	if (!ctx->ssl) {
		tcp_tls_ctx_free(ctx);
		return -EIO;
	}
	SSL_CTX_set_app_data(ctx->ssl, ctx);
	SSL_CTX_set_psk_use_session_callback(ctx->ssl, use_session);
	*out = ctx;
	return 0;
}

int tcp_tls_ctx_server(struct tcp_tls_ctx **out, tcp_tls_find_fn find, void *arg, char *err,
		       size_t errlen)
{
	*out = NULL;
	struct tcp_tls_ctx *ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;
	ctx->server = true;
	ctx->find = find;
	ctx->arg = arg;
	ctx->ssl = new_ssl_ctx(true, SUITES, err, errlen);
	if (!ctx->ssl) {
		free(ctx);
		return -EIO;
	}
	SSL_CTX_set_app_data(ctx->ssl, ctx);
	SSL_CTX_set_psk_find_session_callback(ctx->ssl, find_session);
	*out = ctx;
	return 0;
}

void tcp_tls_ctx_free(struct tcp_tls_ctx *ctx)
{
	if (!ctx)
		return;
	SSL_CTX_free(ctx->ssl);
	OPENSSL_cleanse(ctx, sizeof(*ctx));
	free(ctx);
}

struct tcp_tls *tcp_tls_new(struct tcp_tls_ctx *ctx)
{
	struct tcp_tls *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	BIO *inner = NULL;
	t->ctx = ctx;
	t->ssl = SSL_new(ctx->ssl);
	if (!t->ssl || !BIO_new_bio_pair(&inner, RING, &t->net, RING)) {
		SSL_free(t->ssl);
		free(t);
		return NULL;
	}
	SSL_set_bio(t->ssl, inner, inner);
	SSL_set_app_data(t->ssl, t);
	if (ctx->server)
		SSL_set_accept_state(t->ssl);
	else
		SSL_set_connect_state(t->ssl);
	pthread_mutex_init(&t->mu, NULL);
	return t;
}

void tcp_tls_free(struct tcp_tls *t)
{
	if (!t)
		return;
	SSL_free(t->ssl); /* and the inner half of the pair */
	BIO_free(t->net);
	pthread_mutex_destroy(&t->mu);
	free(t);
}

/* ---- moving records ---- */

/* Records waiting in the pair go to the socket while it takes them. 0 or a negative errno. */
static int flush_out(struct tcp_tls *t, int fd)
{
	for (;;) {
		char *p;
		int n = BIO_nread0(t->net, &p);
		if (n <= 0)
			break;
		ssize_t s = send(fd, p, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (s < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			return errno == EPIPE ? -ECONNRESET : -errno;
		}
		BIO_nread(t->net, &p, (int)s);
		t->cipher_sent += (uint64_t)s;
		if (s < n)
			break;
	}
	/* plaintext whose records are all out now counts as sent */
	while (t->mhead != t->mtail && t->marks[t->mhead % MARKS].cipher <= t->cipher_sent)
		t->plain_out = t->marks[t->mhead++ % MARKS].plain;
	t->want_write = BIO_ctrl_pending(t->net) > 0;
	return 0;
}

/* Records from the socket into the pair: bytes (> 0), 0 when it would block, or a negative
 * errno. The peer's first byte tells TLS (a record type, 14h..18h) from NVMe/TCP in the clear
 * (a PDU type, 0..9). */
static int feed_in(struct tcp_tls *t, int fd)
{
	char *p;
	int room = BIO_nwrite0(t->net, &p);
	if (room <= 0)
		return -ENOBUFS;
	ssize_t r;
	do
		r = recv(fd, p, (size_t)room, MSG_DONTWAIT);
	while (r < 0 && errno == EINTR);
	if (r == 0)
		return -ECONNRESET;
	if (r < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
	if (!t->first_seen) {
		t->first_seen = true;
		uint8_t b = (uint8_t)p[0];
		if (b < 0x14 || b > 0x18) {
			snprintf(t->why, sizeof(t->why), "the %s speaks NVMe/TCP without TLS (its first PDU is "
				 "type %u), and TLS is required", t->ctx->server ? "host" : "target", b);
			return -EPROTO;
		}
	}
	BIO_nwrite(t->net, &p, (int)r);
	return (int)r;
}

/* Why the handshake or a record failed, from OpenSSL's error queue and the alerts: -EACCES for
 * a key or identity refused, else -EPROTO. */
static int failure(struct tcp_tls *t, int ret)
{
	int e = SSL_get_error(t->ssl, ret);
	unsigned long code = ERR_peek_last_error();
	int reason = ERR_GET_REASON(code);
	const char *what = ERR_reason_error_string(code);
	if (t->why[0])
		return -EACCES; /* the PSK lookup said why */
	if (e == SSL_ERROR_ZERO_RETURN) {
		snprintf(t->why, sizeof(t->why), "the peer closed the TLS session");
		return -ECONNRESET;
	}
	/* the target's alert: a binder that does not verify (another key) or no PSK at all */
	if (!t->ctx->server && (reason == SSL_R_TLSV1_ALERT_DECRYPT_ERROR ||
				reason == SSL_R_SSLV3_ALERT_ILLEGAL_PARAMETER ||
				reason == SSL_R_SSLV3_ALERT_HANDSHAKE_FAILURE)) {
		snprintf(t->why, sizeof(t->why), "the target refused the TLS PSK of identity '%s': %s",
			 t->ctx->identity,
			 reason == SSL_R_SSLV3_ALERT_HANDSHAKE_FAILURE
				 ? "it has no key for this host and subsystem"
				 : "it holds another key for this host and subsystem");
		return -EACCES;
	}
	if (t->ctx->server && reason == SSL_R_BINDER_DOES_NOT_VERIFY) {
		snprintf(t->why, sizeof(t->why), "host %s on %s: its TLS PSK is not the one configured for it",
			 t->peer.hostnqn[0] ? t->peer.hostnqn : "?", t->peer.subnqn[0] ? t->peer.subnqn : "?");
		return -EACCES;
	}
	snprintf(t->why, sizeof(t->why), "%s (OpenSSL, during the %s)",
		 what ? what : e == SSL_ERROR_SYSCALL ? "the connection ended" : "unknown error",
		 t->established ? "session" : "handshake");
	return -EPROTO;
}

static int handshake_locked(struct tcp_tls *t, int fd)
{
	for (;;) {
		int rc = flush_out(t, fd);
		if (rc)
			return rc;
		if (t->established)
			return t->want_write ? 0 : 1; /* the last flight is on its way */
		clear_errors();
		int r = SSL_do_handshake(t->ssl);
		if (r == 1) {
			t->established = true;
			continue;
		}
		int e = SSL_get_error(t->ssl, r);
		if (e == SSL_ERROR_WANT_WRITE) {
			if ((rc = flush_out(t, fd)) != 0)
				return rc;
			if (t->want_write)
				return 0;
			continue;
		}
		if (e != SSL_ERROR_WANT_READ) {
			rc = failure(t, r);
			(void)flush_out(t, fd); /* the alert that says so, if the socket takes it */
			return rc;
		}
		if ((rc = flush_out(t, fd)) != 0) /* our flight first */
			return rc;
		int f = feed_in(t, fd);
		if (f < 0) {
			if (f == -ECONNRESET && !t->why[0])
				snprintf(t->why, sizeof(t->why), "the %s closed the connection during the TLS "
					 "handshake", t->ctx->server ? "host" : "target");
			return f;
		}
		if (f == 0)
			return 0;
	}
}

int tcp_tls_handshake(struct tcp_tls *t, int fd)
{
	pthread_mutex_lock(&t->mu);
	int rc = handshake_locked(t, fd);
	pthread_mutex_unlock(&t->mu);
	return rc;
}

bool tcp_tls_established(const struct tcp_tls *t)
{
	return t->established;
}

bool tcp_tls_wants_write(const struct tcp_tls *t)
{
	return t->want_write;
}

const char *tcp_tls_why(const struct tcp_tls *t)
{
	return t->why[0] ? t->why : "TLS failed";
}

const struct tcp_psk_identity *tcp_tls_peer(const struct tcp_tls *t)
{
	return t->established ? &t->peer : NULL;
}

const char *tcp_tls_cipher(const struct tcp_tls *t)
{
	return t->established ? SSL_get_cipher_name(t->ssl) : "";
}

/* ---- data ---- */

/* SSL_write in partial-write mode takes one record per call: each one gets its mark. */
static int write_plain(struct tcp_tls *t, const uint8_t *p, size_t n)
{
	while (n) {
		size_t w = 0;
		clear_errors();
		int r = SSL_write_ex(t->ssl, p, n, &w);
		if (r != 1)
			return failure(t, r); /* not for want of room: it was checked */
		t->plain_in += w;
		uint32_t m = t->mtail++ % MARKS;
		t->marks[m].plain = t->plain_in;
		t->marks[m].cipher = t->cipher_sent + BIO_ctrl_pending(t->net);
		p += w;
		n -= w;
	}
	return 0;
}

static ssize_t send_locked(struct tcp_tls *t, int fd, const struct iovec *iov, int n)
{
	int rc = flush_out(t, fd);
	if (rc)
		return rc;
	/* Take only what fits the pair whole (records and their overhead), so SSL_write never
	 * stops half way; one mark per record at most. */
	size_t room = BIO_ctrl_get_write_guarantee(SSL_get_wbio(t->ssl));
	size_t over = (room / REC + 2) * REC_OVERHEAD;
	size_t budget = room > over ? room - over : 0;
	uint32_t marks_left = MARKS - (t->mtail - t->mhead);
	if (marks_left < room / REC + 4)
		budget = 0;
	size_t staged = 0;
	for (int i = 0; i < n && budget; i++) {
		const uint8_t *p = iov[i].iov_base;
		size_t len = iov[i].iov_len;
		while (len && budget) {
			if (staged == 0 && len >= REC && budget >= REC) {
				/* whole records straight from the caller's buffer */
				size_t k = (len < budget ? len : budget) / REC * REC;
				if ((rc = write_plain(t, p, k)) != 0)
					return rc;
				p += k;
				len -= k;
				budget -= k;
				continue;
			}
			size_t k = REC - staged;
			k = k < len ? k : len;
			k = k < budget ? k : budget;
			memcpy(t->stage + staged, p, k);
			staged += k;
			p += k;
			len -= k;
			budget -= k;
			if (staged == REC) {
				if ((rc = write_plain(t, t->stage, REC)) != 0)
					return rc;
				staged = 0;
			}
		}
	}
	if (staged && (rc = write_plain(t, t->stage, staged)) != 0)
		return rc;
	if ((rc = flush_out(t, fd)) != 0)
		return rc;
	size_t newly = (size_t)(t->plain_out - t->plain_reported);
	t->plain_reported = t->plain_out;
	return (ssize_t)newly;
}

ssize_t tcp_tls_sendv(struct tcp_tls *t, int fd, const struct iovec *iov, int n)
{
	pthread_mutex_lock(&t->mu);
	ssize_t rc = t->established ? send_locked(t, fd, iov, n) : -ENOTCONN;
	pthread_mutex_unlock(&t->mu);
	return rc;
}

size_t tcp_tls_unsent(const struct tcp_tls *t)
{
	return (size_t)(t->plain_in - t->plain_reported);
}

static ssize_t recv_locked(struct tcp_tls *t, int fd, void *buf, size_t len)
{
	for (;;) {
		/* Nothing decrypted or received waits in the session: the socket first, so a poll
		 * that finds nothing costs one recv, as in the clear. */
		if (!SSL_has_pending(t->ssl) && BIO_ctrl_pending(SSL_get_rbio(t->ssl)) == 0) {
			int f = feed_in(t, fd);
			if (f <= 0)
				return f;
		}
		size_t got = 0;
		clear_errors();
		int r = SSL_read_ex(t->ssl, buf, len, &got);
		if (r == 1)
			return (ssize_t)got;
		/* Records go out only from tcp_tls_sendv: a PDU is "sent" once the caller learnt
		 * its records left, never behind its back (a reply could come first). What
		 * SSL_read writes (a key update's answer) waits in the pair for the next send;
		 * a pair too full for it is emptied by that send too. */
		int e = SSL_get_error(t->ssl, r);
		if (e == SSL_ERROR_WANT_WRITE)
			return 0;
		if (e != SSL_ERROR_WANT_READ)
			return failure(t, r);
		int f = feed_in(t, fd);
		if (f <= 0)
			return f;
	}
}

ssize_t tcp_tls_recv(struct tcp_tls *t, int fd, void *buf, size_t len)
{
	pthread_mutex_lock(&t->mu);
	ssize_t rc = t->established ? recv_locked(t, fd, buf, len) : -ENOTCONN;
	pthread_mutex_unlock(&t->mu);
	return rc;
}
