/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * unvme target: serve devices as NVMe/TCP (and, with --listen rdma:ADDR:PORT, NVMe/RDMA)
 * subsystems until SIGINT or SIGTERM.
 *
 *   unvme target -c target.json
 *   unvme target --listen 0.0.0.0:4420 --nqn nqn.2024-01.io.unvme:disk -d emu://disk?ns=mem:1G
 *                --allow-host NQN[,NQN...] | --allow-any-host
 *                [--dhchap-secret DHHC-1:...] [--threads N] [--max-... limits]
 *                [--tls --tls-key NVMeTLSkey-1:...]
 *
 * Without an allow-list no host could connect: one of --allow-host and --allow-any-host is
 * required. It prints "listening on port N" once it serves (with --listen ...:0 the port is
 * the one the system picked; --port-file writes it to a file too).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "lib/target/target.h"
#include "cli.h"

#define DEFAULT_NQN "nqn.2014-08.io.unvme:target"

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

/* A comma separated list, each item to fn; the first error wins. */
static int each_item(const char *list, int (*fn)(void *ctx, const char *item), void *ctx)
{
	char buf[4096];
	snprintf(buf, sizeof(buf), "%s", list);
	char *save = NULL;
	for (char *it = strtok_r(buf, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
		int rc = fn(ctx, it);
		if (rc)
			return rc;
	}
	return 0;
}

struct build {
	struct tgt_config *cfg;
	const struct cli_args *a;
	int subsys;
	char err[512];
};

static int add_listen(void *ctx, const char *item)
{
	struct build *b = ctx;
	return tgt_config_add_listen(b->cfg, item, b->err, sizeof(b->err));
}

static int add_host(void *ctx, const char *item)
{
	struct build *b = ctx;
	int rc = tgt_config_add_host(b->cfg, b->subsys, item, b->a->dhchap_secret, b->a->dhchap_ctrl_secret,
				     b->a->dhchap_hash, b->a->dhchap_dhgroup, b->err, sizeof(b->err));
	if (rc == 0 && b->a->tls_key)
		rc = tgt_config_set_tls_key(b->cfg, b->subsys, item, b->a->tls_key, b->err, sizeof(b->err));
	return rc;
}

static int build_config(const struct cli_args *a, struct tgt_config **out, char *err, size_t errlen)
{
	struct build b = {.a = a};
	int rc;
	if (a->config_file) {
		rc = tgt_config_load(a->config_file, &b.cfg, err, errlen);
		if (rc)
			return rc;
		if (a->perf_ndevs || a->nqn || a->hosts || a->allow_any_host || a->tls_key) {
			tgt_config_free(b.cfg);
			snprintf(err, errlen, "--config describes the subsystems: -d, --nqn, --allow-host, "
				 "--allow-any-host and --tls-key go in the file");
			return -EINVAL;
		}
	} else {
		b.cfg = tgt_config_new();
		if (!b.cfg)
			return -ENOMEM;
		if (!a->perf_ndevs) {
			tgt_config_free(b.cfg);
			snprintf(err, errlen, "give the devices to export (-d DEVICE, repeatable) or a "
				 "configuration file (-c FILE)");
			return -EINVAL;
		}
		b.subsys = tgt_config_add_subsys(b.cfg, a->nqn ? a->nqn : DEFAULT_NQN, b.err, sizeof(b.err));
		rc = b.subsys < 0 ? b.subsys : 0;
		for (unsigned i = 0; i < a->perf_ndevs && rc == 0; i++)
			rc = tgt_config_add_ns(b.cfg, b.subsys, a->perf_devs[i], 0, 0, b.err, sizeof(b.err));
		if (rc == 0 && a->hosts)
			rc = each_item(a->hosts, add_host, &b);
		else if (rc == 0 && a->dhchap_secret)
			rc = -EINVAL, snprintf(b.err, sizeof(b.err), "--dhchap-secret needs --allow-host");
		else if (rc == 0 && !a->allow_any_host)
			rc = -EINVAL, snprintf(b.err, sizeof(b.err), "no host may connect: name them with "
					       "--allow-host NQN[,NQN...], or serve every host with "
					       "--allow-any-host");
		if (rc == 0 && a->allow_any_host)
			tgt_config_allow_any(b.cfg, b.subsys);
		if (rc == 0 && a->tls_key && !a->hosts)
			rc = tgt_config_set_tls_key(b.cfg, b.subsys, NULL, a->tls_key, b.err, sizeof(b.err));
		if (rc) {
			tgt_config_free(b.cfg);
			snprintf(err, errlen, "%s", b.err);
			return rc;
		}
	}
	rc = a->listen ? each_item(a->listen, add_listen, &b) : 0;
	if (rc) {
		tgt_config_free(b.cfg);
		snprintf(err, errlen, "%s", b.err);
		return rc;
	}
	if (cli_given(a, "threads"))
		tgt_config_set_threads(b.cfg, (int)a->threads);
	/* the limits, by the JSON key each option stands for */
	const struct {
		const char *opt, *key;
		uint32_t v;
	} lims[] = {
		{"max-connections", "max_connections", a->tgt_max_conns},
		{"max-connections-per-host", "max_connections_per_host", a->tgt_max_conns_per_host},
		{"max-io-queues", "max_io_queues", a->tgt_max_io_queues},
		{"max-queue-depth", "max_queue_depth", a->tgt_queue_depth},
		{"max-memory", "max_memory_mb", a->tgt_memory_mb},
		{"max-connection-memory", "max_connection_memory_mb", a->tgt_conn_memory_mb},
		{"icreq-timeout", "icreq_timeout_ms", a->tgt_icreq_timeout_ms},
		{"connect-timeout", "connect_timeout_ms", a->tgt_connect_timeout_ms},
	};
	for (size_t i = 0; i < sizeof(lims) / sizeof(lims[0]) && rc == 0; i++)
		if (cli_given(a, lims[i].opt) &&
		    (rc = tgt_config_set_limit(b.cfg, lims[i].key, lims[i].v, b.err, sizeof(b.err))))
			snprintf(err, errlen, "--%s: %s", lims[i].opt, b.err);
	if (rc == 0 && (rc = tgt_config_check(b.cfg, b.err, sizeof(b.err))))
		snprintf(err, errlen, "%s", b.err);
	if (rc) {
		tgt_config_free(b.cfg);
		return rc;
	}
	tgt_config_set_quiet(b.cfg, a->quiet);
	if (a->no_discovery)
		tgt_config_set_discovery(b.cfg, 0);
	if (a->tls || a->tls_key)
		tgt_config_set_tls(b.cfg, 1);
	*out = b.cfg;
	return 0;
}

int cmd_target(struct cli_args *a)
{
	char err[600] = "";
	struct tgt_config *cfg;
	int rc = build_config(a, &cfg, err, sizeof(err));
	if (rc)
		return cli_fail("target", EXIT_USAGE, "%s", err);
	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* every connection is a descriptor: take as many as the hard limit allows */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > 1048576 ? 1048576 : rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	struct unvme_target *t;
	rc = unvme_target_start(cfg, &t, err, sizeof(err));
	if (rc)
		return cli_fail("target", EXIT_HOST, "%s", err);
	uint16_t port = unvme_target_port(t);
	printf("listening on port %u\n", port);
	fflush(stdout);
	if (a->port_file) {
		char tmp[4096];
		snprintf(tmp, sizeof(tmp), "%s.tmp", a->port_file);
		FILE *f = fopen(tmp, "w");
		if (!f || fprintf(f, "%u\n", port) < 0 || fclose(f) || rename(tmp, a->port_file)) {
			unvme_target_stop(t);
			return cli_fail("target", EXIT_HOST, "cannot write the port file %s: %s", a->port_file,
					strerror(errno));
		}
	}
	/* the signal may land on any thread: look at the flag rather than wait in pause() */
	while (!stop_signal) {
		struct timespec ts = {.tv_sec = 0, .tv_nsec = 100000000};
		nanosleep(&ts, NULL);
	}
	unvme_target_stop(t);
	return EXIT_OK;
}
