/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvme-tcp:// device ids (see tcp_params.h): NVMe/TCP's keys over the common ones.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/driver/errmsg.h"
#include "tcp_params.h"

bool unvme_addr_is_tcp(const char *addr)
{
	return strncmp(addr, TCP_SCHEME, strlen(TCP_SCHEME)) == 0;
}

/* The keys only NVMe/TCP has: the digests ICReq asks for, and TLS (nvmf_params_keys). */
static int tcp_option(void *arg, const char *word, const char *key, const char *val)
{
	struct tcp_params *p = arg;
	uint32_t v = 0;
	int rc = 0;
	if (!strcmp(key, "hdgst")) {
		rc = nvmf_params_bool(word, key, val, &p->hdgst);
	} else if (!strcmp(key, "ddgst")) {
		rc = nvmf_params_bool(word, key, val, &p->ddgst);
	} else if (!strcmp(key, "tls")) {
		rc = nvmf_params_bool(word, key, val, &p->tls);
	} else if (!strcmp(key, "tls_key")) {
		char why[160];
		if (tcp_psk_parse(val, &p->tls_key, why, sizeof(why)))
			return unvme_fail(-EINVAL, "%s option tls_key: %s", word, why);
		p->tls = true; /* a key given is TLS asked for */
		p->tls_key_given = true;
	} else if (!strcmp(key, "tls_identity")) {
		rc = nvmf_params_uint(word, key, val, 1, &v);
		p->tls_identity = (int)v;
	} else {
		rc = 1;
	}
	return rc;
}

int tcp_params_parse(const char *address, struct tcp_params *p)
{
	memset(p, 0, sizeof(*p));
	const struct nvmf_params_keys keys = {
		.option = tcp_option,
		.arg = p,
		.known = "hostnqn, hostid, hdgst, ddgst, kato, ctrl_loss_tmo, reconnect_delay, "
			 "connect_timeout, incapsule, dhchap_secret, dhchap_ctrl_secret, tls, tls_key, "
			 "tls_identity",
	};
	int rc = nvmf_params_parse(address, TCP_SCHEME, &keys, &p->nvmf);
	if (rc == 0 && p->tls && !p->tls_key_given) {
		char why[160];
		const char *env = getenv("UNVME_TLS_KEY");
		if (!env || !*env)
			rc = unvme_fail(-EINVAL, "%s: tls=1 needs a PSK: tls_key=NVMeTLSkey-1:... in the device id, "
					"or $UNVME_TLS_KEY (nvme gen-tls-key makes one)", address);
		else if (tcp_psk_parse(env, &p->tls_key, why, sizeof(why)))
			rc = unvme_fail(-EINVAL, "$UNVME_TLS_KEY: %s", why);
	}
	return rc;
}
