/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What an NVMe/TCP device id says: where the subsystem is and how to connect to it.
 *
 *   nvme-tcp://HOST[:PORT][/SUBSYSTEM-NQN][?key=value&...]
 *
 * HOST is a name, an IPv4 address or an IPv6 address in brackets. PORT defaults to 4420 (8009
 * for the discovery subsystem, which is also what a missing NQN names). Keys: see
 * docs/nvme-tcp.md (hostnqn, hostid, hdgst, ddgst, kato, ctrl_loss_tmo, reconnect_delay,
 * connect_timeout, incapsule, dhchap_secret, dhchap_ctrl_secret, tls, tls_key, tls_identity).
 */
#ifndef UNVME_DRIVER_TCP_PARAMS_H
#define UNVME_DRIVER_TCP_PARAMS_H

#include <stdbool.h>
#include <stdint.h>

#include "unvme/spec/fabrics.h"
#include "tcp_psk.h"

#define TCP_SCHEME "nvme-tcp://"

struct tcp_params {
	char host[256];
	char port[16];
	char subnqn[NVMF_NQN_FIELD];
	char hostnqn[NVMF_NQN_FIELD];
	uint8_t hostid[16];
	bool discovery;             /* the subsystem is a discovery subsystem */
	bool hdgst, ddgst;          /* digests to ask for */
	uint32_t kato_ms;           /* keep alive timeout sent in Connect; 0 = none */
	uint32_t ctrl_loss_tmo_ms;  /* how long to keep trying to reconnect after a loss */
	uint32_t reconnect_delay_ms;
	uint32_t connect_timeout_ms;
	int32_t incapsule;          /* most bytes sent in-capsule; -1 = what the controller takes */
	char dhchap_secret[512];    /* DHHC-1:xx:...: the host's key, "" = none */
	char dhchap_ctrl_secret[512]; /* the controller's key: authenticate the controller too */
	bool tls;                   /* TLS 1.3 with a PSK on every connection */
	int tls_identity;           /* PSK identity version, 0 (NVMe0R..) or 1 (NVMe1R.., digest) */
	struct tcp_psk tls_key;     /* the configured PSK */
	bool tls_key_given;         /* in the id (else $UNVME_TLS_KEY) */
};

bool unvme_addr_is_tcp(const char *addr);

/* Parses a resolved address. Returns 0, or -EINVAL with a message naming the part in error. */
int tcp_params_parse(const char *address, struct tcp_params *p);
/* The same for another fabrics scheme with this syntax ("nvme-rdma://"): the keys that make
 * sense without NVMe/TCP's PDUs (no tls*, hdgst, ddgst: refused with a message), messages
 * naming that scheme. */
int fabrics_params_parse(const char *address, const char *scheme, struct tcp_params *p);

/* The host NQN and host id when the address does not give them: $UNVME_HOSTNQN and
 * $UNVME_HOSTID, /etc/nvme/hostnqn and /etc/nvme/hostid (nvme-cli's files), else a
 * uuid-based NQN derived from /etc/machine-id (stable across runs). */
void tcp_default_hostnqn(char out[NVMF_NQN_FIELD], uint8_t hostid[16]);

/* Checks an NQN: 1..223 bytes of printable characters ("nqn." form not enforced, as Linux
 * does not enforce it either). */
bool tcp_nqn_valid(const char *nqn);

#endif
