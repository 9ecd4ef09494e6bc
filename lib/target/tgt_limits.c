/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The target's limits on what hosts may hold (docs/nvme-tcp.md "Limits"): connections in total
 * and per host address, counted from accept to close; the deadlines of a connection that is
 * not serving yet (ICReq, then a connected and authenticated queue). Memory limits are in
 * tgt_buf.c, queue limits at Connect (tgt_fabrics.c).
 *
 * A limit that is hit is logged the first time, then at most once a minute with the number of
 * times it was hit meanwhile: a flood of refusals does not become a flood of log lines.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/common/clock.h"
#include "tgt.h"

#define LIMIT_LOG_EVERY_MS 60000u

void tgt_limit_hit(struct unvme_target *t, struct tgt_limit_log *l, const char *fmt, ...)
{
	uint64_t now = mono_ms_coarse() + 1; /* 0 means never reported */
	uint64_t last = atomic_load_explicit(&l->last_ms, memory_order_relaxed);
	if (last && now - last < LIMIT_LOG_EVERY_MS) {
		atomic_fetch_add_explicit(&l->hits, 1, memory_order_relaxed);
		return;
	}
	if (!atomic_compare_exchange_strong(&l->last_ms, &last, now)) {
		atomic_fetch_add_explicit(&l->hits, 1, memory_order_relaxed);
		return;
	}
	uint64_t more = atomic_exchange(&l->hits, 0);
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (more)
		tgt_log(t, "limit: %s (and %llu more times in the last minute)", msg,
			(unsigned long long)more);
	else
		tgt_log(t, "limit: %s (logged at most once a minute)", msg);
}

static struct tgt_host_conns *host_entry(struct unvme_target *t, const struct tgt_addr *a)
{
	for (uint32_t i = 0; i < t->nhosts; i++)
		if (!memcmp(&t->hosts[i].addr, a, sizeof(*a)))
			return &t->hosts[i];
	return NULL;
}

bool tgt_conn_admit(struct unvme_target *t, const struct tgt_addr *addr, const char *peer)
{
	const struct tgt_limits *lim = &t->cfg->lim;
	if (atomic_fetch_add(&t->nconns, 1) >= lim->max_conns) {
		atomic_fetch_sub(&t->nconns, 1);
		tgt_limit_hit(t, &t->lim_conns, "max_connections (%u) reached: connection from %s refused",
			      lim->max_conns, peer);
		return false;
	}
	pthread_mutex_lock(&t->hosts_lock);
	struct tgt_host_conns *h = host_entry(t, addr);
	bool ok = true;
	if (h && h->n >= lim->max_conns_per_host) {
		ok = false;
	} else if (h) {
		h->n++;
	} else {
		if (t->nhosts == t->hosts_cap) {
			uint32_t cap = t->hosts_cap ? 2 * t->hosts_cap : 16;
			struct tgt_host_conns *n = realloc(t->hosts, cap * sizeof(*n));
			if (n) {
				t->hosts = n;
				t->hosts_cap = cap;
			}
		}
		if (t->nhosts < t->hosts_cap)
			t->hosts[t->nhosts++] = (struct tgt_host_conns){.addr = *addr, .n = 1};
		else
			ok = false; /* no memory to count it: refuse rather than serve uncounted */
	}
	pthread_mutex_unlock(&t->hosts_lock);
	if (!ok) {
		atomic_fetch_sub(&t->nconns, 1);
		tgt_limit_hit(t, &t->lim_host_conns, "max_connections_per_host (%u) reached: connection "
			      "from %s refused", lim->max_conns_per_host, peer);
	}
	return ok;
}

void tgt_conn_retire(struct unvme_target *t, const struct tgt_addr *addr)
{
	pthread_mutex_lock(&t->hosts_lock);
	struct tgt_host_conns *h = host_entry(t, addr);
	if (h && --h->n == 0)
		*h = t->hosts[--t->nhosts];
	pthread_mutex_unlock(&t->hosts_lock);
	atomic_fetch_sub(&t->nconns, 1);
}

bool tgt_conn_deadline(struct tgt_conn *c, uint64_t now_ms)
{
	const struct tgt_limits *lim = &c->t->cfg->lim;
	if (c->closing || (c->connected && !c->auth_needed))
		return false;
	uint64_t age = now_ms > c->born_ms ? now_ms - c->born_ms : 0;
	if (c->rx_state == RX_ICREQ && age > lim->icreq_timeout_ms) {
		tgt_limit_hit(c->t, &c->t->lim_icreq, "host %s sent no ICReq within icreq_timeout_ms (%u): "
			      "connection closed", c->peer, lim->icreq_timeout_ms);
		tgt_conn_close(c, "no ICReq in time");
		return true;
	}
	if (age > lim->connect_timeout_ms) {
		tgt_limit_hit(c->t, &c->t->lim_connect, "host %s: no %s queue within connect_timeout_ms "
			      "(%u): connection closed", c->peer,
			      c->connected ? "authenticated" : "connected", lim->connect_timeout_ms);
		tgt_conn_close(c, "not connected in time");
		return true;
	}
	return false;
}
