/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The target's life: open the devices behind the configured namespaces (each once, however
 * many subsystems export it), lay the subsystems out, start the pollers and the listeners; and
 * the reverse at stop.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "lib/driver/ctrlr.h"
#include "tgt.h"

static void vlog(const char *fmt, va_list ap)
{
	char msg[600];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	struct tm tm;
	localtime_r(&ts.tv_sec, &tm);
	fprintf(stderr, "unvme-target %02d:%02d:%02d.%03ld %s\n", tm.tm_hour, tm.tm_min, tm.tm_sec,
		ts.tv_nsec / 1000000, msg);
}

void tgt_log(const struct unvme_target *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vlog(fmt, ap);
	va_end(ap);
}

void tgt_info(const struct unvme_target *t, const char *fmt, ...)
{
	if (t->cfg->quiet)
		return;
	va_list ap;
	va_start(ap, fmt);
	vlog(fmt, ap);
	va_end(ap);
}


static struct tgt_backing *backing(struct unvme_target *t, const char *devid, char *err, size_t errlen)
{
	for (int i = 0; i < t->nbacks; i++)
		if (!strcmp(t->backs[i].devid, devid))
			return &t->backs[i];
	struct tgt_backing *b = &t->backs[t->nbacks];
	snprintf(b->devid, sizeof(b->devid), "%s", devid);
	int rc = unvme_ctrlr_open(devid, NULL, &b->ctrlr);
	if (rc) {
		tgt_fail(err, errlen, rc, "device %s: %s", devid, unvme_errmsg());
		return NULL;
	}
	t->nbacks++;
	return b;
}

static bool nsid_used(const struct tgt_subsys *ss, uint32_t nsid)
{
	for (int i = 0; i < ss->nns; i++)
		if (ss->ns[i].nsid == nsid)
			return true;
	return false;
}

static int add_ns(struct tgt_subsys *ss, struct tgt_backing *b, uint32_t nsid, uint32_t bnsid,
		  char *err, size_t errlen)
{
	struct unvme_ns *bns = unvme_ctrlr_ns(b->ctrlr, bnsid);
	if (!bns)
		return tgt_fail(err, errlen, -ENOENT, "subsystem %s: device %s has no active namespace %u",
			    ss->nqn, b->devid, bnsid);
	if (ss->nns >= (int)TGT_MAX_NS)
		return tgt_fail(err, errlen, -E2BIG, "subsystem %s: more than %u namespaces", ss->nqn, TGT_MAX_NS);
	if (nsid == 0)
		for (nsid = 1; nsid_used(ss, nsid); nsid++)
			;
	else if (nsid_used(ss, nsid))
		return tgt_fail(err, errlen, -EEXIST, "subsystem %s: nsid %u is given twice", ss->nqn, nsid);
	int bi = -1;
	for (int i = 0; i < ss->nbacks; i++)
		if (ss->backs[i] == b)
			bi = i;
	if (bi < 0) {
		bi = ss->nbacks;
		ss->backs[ss->nbacks++] = b;
	}
	/* What a logical block moves over the fabric: its data, and its metadata when the format
	 * interleaves it (extended LBA). Metadata in a separate buffer (MPTR) cannot cross NVMe/TCP:
	 * the device would want a metadata pointer no host can give. */
	const struct nvme_id_ns *id = unvme_ns_identify_data(bns);
	uint32_t ms = id->lbaf[nvme_ns_flbas_index(id)].ms;
	bool extended = id->flbas & (1u << 4);
	if (ms && !extended && unvme_ns_csi(bns) != NVME_CSI_KV)
		return tgt_fail(err, errlen, -ENOTSUP, "subsystem %s: namespace %u of device %s keeps %u bytes "
			    "of metadata per block in a separate buffer, which NVMe/TCP cannot carry (format it "
			    "with extended LBAs or without metadata)", ss->nqn, bnsid, b->devid, ms);
	struct tgt_ns *ns = &ss->ns[ss->nns++];
	ns->nsid = nsid;
	ns->back = bi;
	ns->bnsid = bnsid;
	ns->bns = bns;
	ns->csi = unvme_ns_csi(bns);
	ns->block_bytes = unvme_ns_lba_size(bns) + (extended ? ms : 0);
	tgt_nguid(ss->nqn, nsid, ns->nguid);
	if (nsid > ss->max_nsid)
		ss->max_nsid = nsid;
	if (ns->csi == NVME_CSI_KV && ss->kv_ns < 0)
		ss->kv_ns = ss->nns - 1;
	return 0;
}

static int setup_subsys(struct unvme_target *t, struct tgt_subsys *ss, const struct tgt_subsys_cfg *sc,
			char *err, size_t errlen)
{
	ss->t = t;
	ss->cfg = sc;
	ss->nqn = sc->nqn;
	ss->kv_ns = -1;
	ss->next_cntlid = 1;
	pthread_mutex_init(&ss->lock, NULL);
	ss->ns = calloc(TGT_MAX_NS, sizeof(*ss->ns));
	ss->backs = calloc(TGT_MAX_NS, sizeof(*ss->backs));
	if (!ss->ns || !ss->backs)
		return -ENOMEM;
	for (int i = 0; i < sc->nns; i++) {
		const struct tgt_ns_cfg *nc = &sc->ns[i];
		struct tgt_backing *b = backing(t, nc->device, err, errlen);
		if (!b)
			return -ENODEV;
		int rc;
		if (nc->device_nsid) {
			rc = add_ns(ss, b, nc->nsid, nc->device_nsid, err, errlen);
		} else {
			rc = 0;
			uint32_t want = nc->nsid;
			for (uint32_t id = unvme_ctrlr_first_nsid(b->ctrlr); id && rc == 0;
			     id = unvme_ctrlr_next_nsid(b->ctrlr, id)) {
				rc = add_ns(ss, b, want, id, err, errlen);
				if (want)
					want++;
			}
		}
		if (rc)
			return rc;
	}
	if (ss->nns == 0)
		return tgt_fail(err, errlen, -ENOENT, "subsystem %s: no namespace to export", ss->nqn);
	ss->mdts_bytes = 2u << 20;
	for (int i = 0; i < ss->nbacks; i++) {
		uint32_t mx = unvme_ctrlr_max_xfer(ss->backs[i]->ctrlr);
		if (mx < ss->mdts_bytes)
			ss->mdts_bytes = mx;
	}
	const struct nvme_id_ctrl *id = unvme_ctrlr_identify_data(ss->backs[ss->ns[0].back]->ctrlr);
	ss->oncs = id->oncs & 0x000fu; /* compare, write uncorrectable, DSM, write zeroes */
	ss->vwc = id->vwc & 1u;
	if (!sc->allow_any_host && sc->nhosts == 0)
		tgt_log(t, "warning: subsystem %s allows no host (no \"hosts\", allow_any_host false)", ss->nqn);
	return 0;
}

static bool loopback(const char *addr)
{
	return !strncmp(addr, "127.", 4) || !strcmp(addr, "::1") || !strcmp(addr, "localhost");
}

/* Serving every host where others can reach it deserves a word at start. */
static void warn_open_subsystems(struct unvme_target *t)
{
	const struct tgt_config *cfg = t->cfg;
	const char *exposed = NULL;
	for (int i = 0; i < cfg->nlisten && !exposed; i++)
		if (!loopback(cfg->listen[i].addr))
			exposed = cfg->listen[i].addr;
	for (int i = 0; exposed && i < cfg->nsubsys; i++)
		if (cfg->subsys[i].allow_any_host)
			tgt_log(t, "warning: subsystem %s serves any host (allow_any_host) on %s, which is not "
				"a loopback address: every host that reaches it may read and write its "
				"namespaces", cfg->subsys[i].nqn, exposed);
}

/* Connections need descriptors: say so when the limit of connections cannot be reached. */
static void check_fd_limit(struct unvme_target *t)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl))
		return;
	uint64_t need = (uint64_t)t->cfg->lim.max_conns + 64;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need)
		tgt_log(t, "warning: RLIMIT_NOFILE is %llu descriptors, fewer than max_connections (%u) "
			"needs: connections beyond the descriptors are refused",
			(unsigned long long)rl.rlim_cur, t->cfg->lim.max_conns);
}

int unvme_target_start(struct tgt_config *cfg, struct unvme_target **out, char *err, size_t errlen)
{
	*out = NULL;
	if (cfg->nlisten == 0 && tgt_config_add_listen(cfg, "0.0.0.0:4420", err, errlen))
		return -EINVAL;
	if (cfg->nsubsys == 0 && !cfg->discovery)
		return tgt_fail(err, errlen, -EINVAL, "nothing to serve: no subsystem and no discovery");
	if (tgt_config_check(cfg, err, errlen))
		return -EINVAL;
	struct unvme_target *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->cfg = cfg;
	t->reserve_fd = -1;
	pthread_mutex_init(&t->hosts_lock, NULL);
	t->stop_fd = eventfd(0, EFD_CLOEXEC);
	atomic_store(&t->genctr, 1);
	int total_ns = 0;
	for (int i = 0; i < cfg->nsubsys; i++)
		total_ns += cfg->subsys[i].nns;
	t->backs = calloc((size_t)total_ns + 1, sizeof(*t->backs));
	t->subs = calloc((size_t)cfg->nsubsys + 1, sizeof(*t->subs));
	int rc = t->backs && t->subs && t->stop_fd >= 0 ? 0 : -ENOMEM;
	for (int i = 0; i < cfg->nsubsys && rc == 0; i++, t->nsubs++)
		rc = setup_subsys(t, &t->subs[i], &cfg->subsys[i], err, errlen);
	if (rc == 0) {
		t->disc.t = t;
		t->disc.discovery = true;
		t->disc.nqn = NVMF_DISCOVERY_NQN;
		t->disc.kv_ns = -1;
		t->disc.next_cntlid = 1;
		pthread_mutex_init(&t->disc.lock, NULL);
		rc = tgt_tls_start(t, err, errlen);
	}
	if (rc == 0) {
		rc = tgt_pollers_start(t);
		if (rc)
			tgt_fail(err, errlen, rc, "cannot start the pollers: %s", strerror(-rc));
	}
	if (rc == 0) {
		check_fd_limit(t);
		warn_open_subsystems(t);
		rc = tgt_listen_start(t);
		if (rc)
			tgt_fail(err, errlen, rc, "cannot listen (see above)");
	}
	if (rc) {
		unvme_target_stop(t);
		return rc;
	}
	*out = t;
	return 0;
}

uint16_t unvme_target_port(const struct unvme_target *t)
{
	return t->port;
}

void unvme_target_stop(struct unvme_target *t)
{
	if (!t)
		return;
	tgt_listen_stop(t);
	if (t->pollers)
		tgt_pollers_stop(t);
	for (int i = 0; i < t->nsubs; i++) {
		free(t->subs[i].ns);
		free(t->subs[i].backs);
		pthread_mutex_destroy(&t->subs[i].lock);
	}
	for (int i = 0; i < t->nbacks; i++)
		unvme_ctrlr_close(t->backs[i].ctrlr);
	tgt_tls_stop(t);
	if (t->stop_fd >= 0)
		close(t->stop_fd);
	free(t->hosts);
	pthread_mutex_destroy(&t->hosts_lock);
	free(t->backs);
	free(t->subs);
	tgt_config_free(t->cfg);
	free(t);
}
