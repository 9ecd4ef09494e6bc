/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What an NVMe over Fabrics device id says, whatever its transport: where the subsystem is and
 * how to connect to it.
 *
 *   SCHEME://HOST[:PORT][/SUBSYSTEM-NQN][?key=value&...]
 *
 * HOST is a name, an IPv4 address or an IPv6 address in brackets. PORT defaults to 4420; for
 * the discovery subsystem (which is also what a missing NQN names) to the scheme's discovery
 * port: 8009 for NVMe/TCP (TCP Transport 1.0, 7.4.9.3), 4420 for NVMe/RDMA, whose IANA port
 * serves both (as nvme-cli's defaults have it). The keys every fabrics
 * scheme takes (docs/nvme-tcp.md, docs/nvme-rdma.md): hostnqn, hostid, kato, ctrl_loss_tmo,
 * reconnect_delay, connect_timeout, incapsule, dhchap_secret, dhchap_ctrl_secret. A scheme adds
 * its own through struct nvmf_params_keys (NVMe/TCP's digests and TLS:
 * lib/transport/tcp/tcp_params.h).
 */
#ifndef UNVME_FABRICS_NVMF_PARAMS_H
#define UNVME_FABRICS_NVMF_PARAMS_H

#include <stdbool.h>
#include <stdint.h>

#include "unvme/spec/fabrics.h"

/* The keys every scheme takes, as the message about an unknown key lists them. */
#define NVMF_PARAMS_KEYS "hostnqn, hostid, kato, ctrl_loss_tmo, reconnect_delay, " \
			 "connect_timeout, incapsule, dhchap_secret, dhchap_ctrl_secret"

struct nvmf_params {
	char host[256];
	char port[16];
	char subnqn[NVMF_NQN_FIELD];
	char hostnqn[NVMF_NQN_FIELD];
	uint8_t hostid[16];
	bool discovery;             /* the subsystem is a discovery subsystem */
	uint32_t kato_ms;           /* keep alive timeout sent in Connect; 0 = none */
	uint32_t ctrl_loss_tmo_ms;  /* how long to keep trying to reconnect after a loss */
	uint32_t reconnect_delay_ms;
	uint32_t connect_timeout_ms;
	int32_t incapsule;          /* most bytes sent in-capsule; -1 = what the controller takes */
	char dhchap_secret[512];    /* DHHC-1:xx:...: the host's key, "" = none */
	char dhchap_ctrl_secret[512]; /* the controller's key: authenticate the controller too */
};

/* A scheme's own keys beside the common ones. option is asked about every key that is not a
 * common one: 0 when it took it, a negative errno with a message (unvme_fail) when its value
 * is wrong or the scheme refuses it, 1 when the key is not the scheme's either. word is the
 * scheme's name for messages ("nvme-tcp"). known lists every key the scheme takes, for the
 * message an unknown key gets (NULL: NVMF_PARAMS_KEYS). disc_port is the port a discovery
 * id without one gets (NULL: 8009, NVMe/TCP's). */
struct nvmf_params_keys {
	int (*option)(void *arg, const char *word, const char *key, const char *val);
	void *arg;
	const char *known;
	const char *disc_port;
};

/* Parses a resolved address of the scheme ("nvme-tcp://"), with the scheme's keys (NULL: the
 * common ones only). Returns 0, or -EINVAL with a message naming the scheme and the part in
 * error. */
int nvmf_params_parse(const char *address, const char *scheme, const struct nvmf_params_keys *keys,
		      struct nvmf_params *p);

/* A key's value as a number 0..max or as a boolean (1/on/true/yes, 0/off/false/no), for a
 * scheme's own keys: 0, or -EINVAL with a message naming word, key and value. */
int nvmf_params_uint(const char *word, const char *key, const char *val, uint32_t max,
		     uint32_t *out);
int nvmf_params_bool(const char *word, const char *key, const char *val, bool *out);

/* The host NQN and host id when the address does not give them: $UNVME_HOSTNQN and
 * $UNVME_HOSTID, /etc/nvme/hostnqn and /etc/nvme/hostid (nvme-cli's files), else a
 * uuid-based NQN derived from /etc/machine-id (stable across runs). */
void nvmf_default_hostnqn(char out[NVMF_NQN_FIELD], uint8_t hostid[16]);

/* The longest one connect attempt of an association may take: the connection's timeout,
 * then its commands (Connect, authentication, properties; cmd_timeout_ms each, 0: 10 s). A
 * bound for the driver's reset to wait, not a timer. */
uint32_t nvmf_attempt_limit_ms(const struct nvmf_params *p, uint32_t cmd_timeout_ms);

/* Checks an NQN: 1..223 bytes of printable characters ("nqn." form not enforced, as Linux
 * does not enforce it either). */
bool nvmf_nqn_valid(const char *nqn);

#endif
