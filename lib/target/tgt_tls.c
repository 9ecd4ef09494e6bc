/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TLS on the target (NVMe TCP Transport 1.1 section 3.6, lib/fabrics/tcp/tcp_tls.h): with "tls" on,
 * every connection starts with a TLS 1.3 handshake with a pre-shared key, before ICReq, on
 * every listener (the discovery subsystem too); a host that speaks in the clear is refused.
 *
 * The keys are per host ("tls_key" of a host entry) or per subsystem (for any host, with
 * allow_any_host). The handshake picks the key of the host and subsystem the PSK identity
 * names; Connect must then name the same host and subsystem (the key proves the identity, the
 * identity binds the Connect). A discovery connection takes a key the host has on any
 * subsystem.
 *
 * The sessions live in the connections' streams (rx.tls, tx.tls): the poller's socket reads
 * and writes go through them, the handshake runs in the first receive.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lib/fabrics/tcp/tcp_tls.h"
#include "tgt.h"

void tgt_config_set_tls(struct tgt_config *cfg, int on)
{
	cfg->tls = on != 0;
}

int tgt_config_set_tls_key(struct tgt_config *cfg, int subsys, const char *host, const char *key,
			   char *err, size_t errlen)
{
	struct tgt_subsys_cfg *s = &cfg->subsys[subsys];
	struct tcp_psk psk;
	char why[160];
	if (tcp_psk_parse(key, &psk, why, sizeof(why)))
		return tgt_fail(err, errlen, -EINVAL, "%s%s%s: tls_key: %s", host ? "host '" : "subsystem '",
				host ? host : s->nqn, "'", why);
	if (!host) {
		s->tls = psk;
		s->has_tls = true;
		return 0;
	}
	for (int i = 0; i < s->nhosts; i++) {
		if (!strcmp(s->hosts[i].nqn, host)) {
			s->hosts[i].tls = psk;
			s->hosts[i].has_tls = true;
			return 0;
		}
	}
	return tgt_fail(err, errlen, -EINVAL, "subsystem '%s': tls_key for host '%s', which is not allowed",
			s->nqn, host);
}

/* The key of one subsystem's configuration for hostnqn: its entry's, else the subsystem's
 * for any host. */
static const struct tcp_psk *subsys_key(const struct tgt_subsys_cfg *s, const char *hostnqn)
{
	for (int i = 0; i < s->nhosts; i++)
		if (!strcmp(s->hosts[i].nqn, hostnqn))
			return s->hosts[i].has_tls ? &s->hosts[i].tls : NULL;
	return s->allow_any_host && s->has_tls ? &s->tls : NULL;
}

/* The PSK lookup of a handshake (a poller thread; the configuration does not change). */
static int find_key(void *arg, const struct tcp_psk_identity *id, struct tcp_psk *key, char *why,
		    size_t whylen)
{
	const struct unvme_target *t = arg;
	const struct tgt_config *cfg = t->cfg;
	bool disc = !strcmp(id->subnqn, NVMF_DISCOVERY_NQN);
	bool known = disc && cfg->discovery;
	for (int i = 0; i < cfg->nsubsys; i++) {
		const struct tgt_subsys_cfg *s = &cfg->subsys[i];
		if (!disc && strcmp(s->nqn, id->subnqn))
			continue;
		known = true;
		const struct tcp_psk *k = subsys_key(s, id->hostnqn);
		if (k) {
			*key = *k;
			return 0;
		}
	}
	snprintf(why, whylen, "%s", known ? "no TLS key is configured for this host" : "no such subsystem");
	return -1;
}

int tgt_tls_start(struct unvme_target *t, char *err, size_t errlen)
{
	if (!t->cfg->tls)
		return 0;
	char why[256];
	int rc = tcp_tls_ctx_server(&t->tls, find_key, t, why, sizeof(why));
	if (rc)
		return tgt_fail(err, errlen, rc, "TLS: %s", why);
	bool any = false;
	for (int i = 0; i < t->cfg->nsubsys; i++) {
		const struct tgt_subsys_cfg *s = &t->cfg->subsys[i];
		any |= s->has_tls;
		for (int h = 0; h < s->nhosts; h++)
			any |= s->hosts[h].has_tls;
	}
	if (!any)
		tgt_log(t, "warning: TLS is required but no host has a TLS key (\"tls_key\", --tls-key): "
			"every host is refused");
	return 0;
}

void tgt_tls_stop(struct unvme_target *t)
{
	tcp_tls_ctx_free(t->tls);
	t->tls = NULL;
}

int tgt_tls_conn_init(struct tgt_conn *c)
{
	if (!c->t->tls)
		return 0;
	c->tls = tcp_tls_new(c->t->tls);
	if (!c->tls)
		return -ENOMEM;
	c->rx.tls = c->tx.tls = c->tls;
	return 0;
}

void tgt_tls_conn_fini(struct tgt_conn *c)
{
	c->rx.tls = c->tx.tls = NULL;
	tcp_tls_free(c->tls);
	c->tls = NULL;
}

const char *tgt_tls_failure(const struct tgt_conn *c, int err)
{
	if (c->tls && (err == -EACCES || err == -EPROTO || !tcp_tls_established(c->tls)))
		return tcp_tls_why(c->tls);
	return NULL;
}

int tgt_tls_connect_check(const struct tgt_conn *c, const char *hostnqn, const char *subnqn)
{
	if (!c->tls)
		return 0;
	const struct tcp_psk_identity *id = tcp_tls_peer(c->tls);
	if (!id || strcmp(id->hostnqn, hostnqn) || strcmp(id->subnqn, subnqn)) {
		tgt_log(c->t, "host %s (%s): Connect to %s refused: its TLS PSK identity names host %s and "
			"subsystem %s (Connect Invalid Host)", c->peer, hostnqn, subnqn, id ? id->hostnqn : "?",
			id ? id->subnqn : "?");
		return -EACCES;
	}
	return 0;
}
