/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What an NVMe/TCP device id says: the fabrics keys every scheme has (lib/fabrics/nvmf_params.h)
 * and NVMe/TCP's own.
 *
 *   nvme-tcp://HOST[:PORT][/SUBSYSTEM-NQN][?key=value&...]
 *
 * Keys: see docs/nvme-tcp.md (hostnqn, hostid, hdgst, ddgst, kato, ctrl_loss_tmo,
 * reconnect_delay, connect_timeout, incapsule, dhchap_secret, dhchap_ctrl_secret, tls, tls_key,
 * tls_identity).
 */
#ifndef UNVME_TRANSPORT_TCP_PARAMS_H
#define UNVME_TRANSPORT_TCP_PARAMS_H

#include <stdbool.h>

#include "lib/fabrics/nvmf_params.h"
#include "lib/fabrics/tcp/tcp_psk.h"

#define TCP_SCHEME "nvme-tcp://"

struct tcp_params {
	struct nvmf_params nvmf;    /* host, port, NQNs, host id, timeouts, DH-HMAC-CHAP keys */
	bool hdgst, ddgst;          /* digests to ask for */
	bool tls;                   /* TLS 1.3 with a PSK on every connection */
	int tls_identity;           /* PSK identity version, 0 (NVMe0R..) or 1 (NVMe1R.., digest) */
	struct tcp_psk tls_key;     /* the configured PSK */
	bool tls_key_given;         /* in the id (else $UNVME_TLS_KEY) */
};

bool unvme_addr_is_tcp(const char *addr);

/* Parses a resolved address. Returns 0, or -EINVAL with a message naming the part in error. */
int tcp_params_parse(const char *address, struct tcp_params *p);

#endif
