/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The NVMe/TCP target: `unvme target` and in-process users (tests). See docs/nvme-tcp.md for
 * the configuration file.
 *
 * Errors are returned as 0 / negative errno, with a message naming what was wrong in err.
 */
#ifndef UNVME_TARGET_H
#define UNVME_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tgt_config;
struct unvme_target;

struct tgt_config *tgt_config_new(void);
void tgt_config_free(struct tgt_config *cfg);
/* Reads a JSON configuration file into a new configuration. */
int tgt_config_load(const char *path, struct tgt_config **out, char *err, size_t errlen);
/* "ADDRESS:PORT", "[V6]:PORT" or "PORT" (all IPv4 addresses); port 0 picks a free port. */
int tgt_config_add_listen(struct tgt_config *cfg, const char *spec, char *err, size_t errlen);
/* Adds a subsystem; returns its index (>= 0) or a negative errno. */
int tgt_config_add_subsys(struct tgt_config *cfg, const char *nqn, char *err, size_t errlen);
/* Exports namespace device_nsid (0: all of them) of device as nsid (0: next free). */
int tgt_config_add_ns(struct tgt_config *cfg, int subsys, const char *device, uint32_t nsid,
		      uint32_t device_nsid, char *err, size_t errlen);
/* Allows a host, with DH-HMAC-CHAP secrets (NULL or "" for none), hash ("sha256", "sha384",
 * "sha512"; NULL sha256) and DH group ("null", "ffdhe2048".."ffdhe8192"; NULL null). */
int tgt_config_add_host(struct tgt_config *cfg, int subsys, const char *nqn, const char *secret,
			const char *ctrl_secret, const char *hash, const char *dhgroup, char *err,
			size_t errlen);
/* Any host may connect to the subsystem (without it, only the hosts of its allow-list). */
void tgt_config_allow_any(struct tgt_config *cfg, int subsys);
/* A limit by its configuration key (docs/nvme-tcp.md "Limits"): max_connections,
 * max_connections_per_host, max_io_queues, max_queue_depth, max_memory_mb,
 * max_connection_memory_mb, icreq_timeout_ms, connect_timeout_ms, discovery_kato_ms. */
int tgt_config_set_limit(struct tgt_config *cfg, const char *key, uint64_t value, char *err,
			 size_t errlen);
bool tgt_config_limit_known(const char *key);
/* Checks the limits against each other (done by unvme_target_start too). */
int tgt_config_check(const struct tgt_config *cfg, char *err, size_t errlen);
void tgt_config_set_threads(struct tgt_config *cfg, int threads);
void tgt_config_set_quiet(struct tgt_config *cfg, int quiet);
void tgt_config_set_discovery(struct tgt_config *cfg, int on);
/* TLS 1.3 with pre-shared keys required on every connection (docs/nvme-tcp.md, "TLS"). */
void tgt_config_set_tls(struct tgt_config *cfg, int on);
/* A TLS PSK (NVMeTLSkey-1:XX:...:) for an allowed host of the subsystem, or (host NULL) for
 * any host of an allow_any_host subsystem. */
int tgt_config_set_tls_key(struct tgt_config *cfg, int subsys, const char *host, const char *key,
			   char *err, size_t errlen);

/* Opens the devices, binds the listeners and starts serving. The target keeps cfg (freed by
 * unvme_target_stop). */
int unvme_target_start(struct tgt_config *cfg, struct unvme_target **out, char *err, size_t errlen);
/* The port the first listener is bound to (useful with port 0). */
uint16_t unvme_target_port(const struct unvme_target *t);
/* Stops serving, closes every connection and device. */
void unvme_target_stop(struct unvme_target *t);

#endif
