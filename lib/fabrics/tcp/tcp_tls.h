/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TLS 1.3 for NVMe/TCP connections (NVMe TCP Transport 1.1 section 3.6, from TP 8011), on
 * OpenSSL, for the host transport and the target alike: external pre-shared keys (tcp_psk.h)
 * with their NVMe identities, the cipher suite the key's size names (TLS_AES_128_GCM_SHA256
 * or TLS_AES_256_GCM_SHA384), (EC)DHE with the PSK (psk_dhe_ke, OpenSSL's default), no
 * certificates, no session tickets. The handshake comes first on a connection; ICReq and
 * every PDU after it travel as TLS application data.
 *
 * A session works on a non-blocking socket without ever blocking: OpenSSL reads and writes a
 * BIO pair whose other end this file moves to and from the socket (records go straight from
 * the pair's ring to send and from recv to the ring). The PDU streams (tcp_stream.c) call
 * tcp_tls_sendv and tcp_tls_recv where they would call sendmsg and recv, with the same
 * meaning: bytes that left, bytes that arrived, 0 when the socket would block. A PDU counts
 * as sent only once its records left the socket (tcp_tls_unsent: plaintext taken but not yet
 * on the wire), so "sent" means the same with and without TLS.
 *
 * A session's calls may come from two threads (a split queue pair's submitter sends while
 * its poller receives): each takes the session's mutex, as OpenSSL does not allow SSL_read
 * and SSL_write on one connection at once.
 *
 * A peer that speaks NVMe/TCP in the clear where TLS is required (its first byte is a PDU
 * type, not a TLS record type) is refused with a message saying so.
 */
#ifndef UNVME_FABRICS_TCP_TLS_H
#define UNVME_FABRICS_TCP_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "tcp_psk.h"

struct tcp_tls_ctx;
struct tcp_tls;

/* A host's context for the connections of one controller: the key, the identity version (0
 * or 1) and the NQNs the identity names. 0, or a negative errno with err. */
int tcp_tls_ctx_client(struct tcp_tls_ctx **out, const struct tcp_psk *key, int version,
		       const char *hostnqn, const char *subnqn, char *err, size_t errlen);

/* A target's context. find looks up the configured PSK of the host and subsystem an identity
 * names: 0 with *key, or non-zero with why (the host is refused: no key, not allowed). */
typedef int (*tcp_tls_find_fn)(void *arg, const struct tcp_psk_identity *id, struct tcp_psk *key,
			       char *why, size_t whylen);
int tcp_tls_ctx_server(struct tcp_tls_ctx **out, tcp_tls_find_fn find, void *arg, char *err,
		       size_t errlen);
void tcp_tls_ctx_free(struct tcp_tls_ctx *ctx);

/* A session for one connection (NULL: no memory). */
struct tcp_tls *tcp_tls_new(struct tcp_tls_ctx *ctx);
void tcp_tls_free(struct tcp_tls *t);

/* Moves the handshake on: 1 established, 0 in progress (wait for the socket to be readable,
 * or writable when tcp_tls_wants_write), or a negative errno: -EACCES the peer's key or
 * identity was refused (or refused ours), -EPROTO not TLS or a protocol error, -ECONNRESET the
 * peer closed. tcp_tls_why says why. */
int tcp_tls_handshake(struct tcp_tls *t, int fd);
bool tcp_tls_established(const struct tcp_tls *t);
bool tcp_tls_wants_write(const struct tcp_tls *t);
const char *tcp_tls_why(const struct tcp_tls *t);
/* On the target, once established: the identity the host used (its NQNs). */
const struct tcp_psk_identity *tcp_tls_peer(const struct tcp_tls *t);
/* The cipher suite in use ("TLS_AES_128_GCM_SHA256"...), "" before the handshake. */
const char *tcp_tls_cipher(const struct tcp_tls *t);

/* Sends the plaintext in iov, which starts tcp_tls_unsent(t) bytes after the last byte that
 * left (the caller skips what it handed in before). Returns how many bytes newly left the
 * socket (0 when it is full), or a negative errno. With n == 0 it only pushes what waits. */
ssize_t tcp_tls_sendv(struct tcp_tls *t, int fd, const struct iovec *iov, int n);
size_t tcp_tls_unsent(const struct tcp_tls *t);
/* Receives plaintext: bytes (> 0), 0 when nothing more can be read now (none is left inside
 * the session either), -ECONNRESET when the peer closed, another negative errno on error. */
ssize_t tcp_tls_recv(struct tcp_tls *t, int fd, void *buf, size_t len);

#endif
