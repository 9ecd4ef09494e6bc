/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Target configuration: built from the command line or read from a JSON file (the format is in
 * docs/nvme-tcp.md). Anything unknown or malformed is refused with a message naming the key.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/fabrics/nvmf_params.h"
#include "tgt.h"

int tgt_fail(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return rc;
}

void tgt_config_limits_default(struct tgt_limits *lim)
{
	*lim = (struct tgt_limits){
		.max_conns = TGT_DEF_MAX_CONNS,
		.max_conns_per_host = TGT_DEF_MAX_CONNS_PER_HOST,
		.max_io_queues = TGT_DEF_MAX_IO_QUEUES,
		.queue_depth = TGT_DEF_QUEUE_DEPTH,
		.memory = (uint64_t)TGT_DEF_MEMORY_MB << 20,
		.conn_memory = (uint64_t)TGT_DEF_CONN_MEMORY_MB << 20,
		.icreq_timeout_ms = TGT_DEF_ICREQ_TIMEOUT_MS,
		.connect_timeout_ms = TGT_DEF_CONNECT_TIMEOUT_MS,
		.discovery_kato_ms = TGT_DEF_DISCOVERY_KATO_MS,
	};
}

struct tgt_config *tgt_config_new(void)
{
	struct tgt_config *c = calloc(1, sizeof(*c));
	if (c) {
		c->threads = 1;
		c->discovery = true;
		tgt_config_limits_default(&c->lim);
	}
	return c;
}

/* The limits by their configuration keys (JSON and the command line alike). */
static const struct {
	const char *key;
	uint64_t min, max;
	unsigned shift;           /* the key's unit: value << shift bytes (MiB keys) */
	size_t off;
	bool wide;
} limit_keys[] = {
	{"max_connections", 1, 1u << 20, 0, offsetof(struct tgt_limits, max_conns), false},
	{"max_connections_per_host", 1, 1u << 20, 0, offsetof(struct tgt_limits, max_conns_per_host), false},
	{"max_io_queues", 1, 1024, 0, offsetof(struct tgt_limits, max_io_queues), false},
	{"max_queue_depth", 2, 1024, 0, offsetof(struct tgt_limits, queue_depth), false},
	{"max_memory_mb", TGT_MAX_CMD_BUF >> 20, 1u << 20, 20, offsetof(struct tgt_limits, memory), true},
	{"max_connection_memory_mb", TGT_MAX_CMD_BUF >> 20, 1u << 20, 20,
	 offsetof(struct tgt_limits, conn_memory), true},
	{"icreq_timeout_ms", 100, 3600000, 0, offsetof(struct tgt_limits, icreq_timeout_ms), false},
	{"connect_timeout_ms", 100, 3600000, 0, offsetof(struct tgt_limits, connect_timeout_ms), false},
	{"discovery_kato_ms", 0, 3600000, 0, offsetof(struct tgt_limits, discovery_kato_ms), false},
};

bool tgt_config_limit_known(const char *key)
{
	for (size_t i = 0; i < sizeof(limit_keys) / sizeof(limit_keys[0]); i++)
		if (!strcmp(limit_keys[i].key, key))
			return true;
	return false;
}

int tgt_config_set_limit(struct tgt_config *cfg, const char *key, uint64_t value, char *err,
			 size_t errlen)
{
	for (size_t i = 0; i < sizeof(limit_keys) / sizeof(limit_keys[0]); i++) {
		if (strcmp(limit_keys[i].key, key))
			continue;
		if (value < limit_keys[i].min || value > limit_keys[i].max)
			return tgt_fail(err, errlen, -EINVAL, "\"%s\" must be %llu..%llu", key,
				    (unsigned long long)limit_keys[i].min, (unsigned long long)limit_keys[i].max);
		uint8_t *f = (uint8_t *)&cfg->lim + limit_keys[i].off;
		if (limit_keys[i].wide) {
			uint64_t v = value << limit_keys[i].shift;
			memcpy(f, &v, sizeof(v));
		} else {
			uint32_t v = (uint32_t)value;
			memcpy(f, &v, sizeof(v));
		}
		return 0;
	}
	return tgt_fail(err, errlen, -EINVAL, "unknown limit \"%s\"", key);
}

int tgt_config_check(const struct tgt_config *cfg, char *err, size_t errlen)
{
	if (cfg->lim.conn_memory > cfg->lim.memory)
		return tgt_fail(err, errlen, -EINVAL, "\"max_connection_memory_mb\" (%llu) is above "
			    "\"max_memory_mb\" (%llu)", (unsigned long long)(cfg->lim.conn_memory >> 20),
			    (unsigned long long)(cfg->lim.memory >> 20));
	for (int i = 0; cfg->tls && i < cfg->nlisten; i++)
		if (cfg->listen[i].rdma)
			return tgt_fail(err, errlen, -EINVAL, "\"tls\" is NVMe/TCP's: the RDMA listener %s:%s "
					"cannot require it", cfg->listen[i].addr, cfg->listen[i].port);
	return 0;
}

void tgt_config_free(struct tgt_config *cfg)
{
	if (!cfg)
		return;
	for (int i = 0; i < cfg->nsubsys; i++) {
		free(cfg->subsys[i].hosts);
		free(cfg->subsys[i].ns);
	}
	free(cfg->subsys);
	free(cfg->listen);
	free(cfg);
}

void tgt_config_set_threads(struct tgt_config *cfg, int threads)
{
	cfg->threads = threads < 1 ? 1 : threads > 64 ? 64 : threads;
}

void tgt_config_set_quiet(struct tgt_config *cfg, int quiet)
{
	cfg->quiet = quiet != 0;
}

void tgt_config_set_discovery(struct tgt_config *cfg, int on)
{
	cfg->discovery = on != 0;
}

void tgt_config_allow_any(struct tgt_config *cfg, int subsys)
{
	cfg->subsys[subsys].allow_any_host = true;
}

int tgt_config_add_listen(struct tgt_config *cfg, const char *spec, char *err, size_t errlen)
{
	struct tgt_listen_cfg l = {0};
	const char *port, *all = spec;
	if (!strncmp(spec, "rdma:", 5)) {
		const char *why = tgt_rdma_unavailable();
		if (why)
			return tgt_fail(err, errlen, -ENOTSUP, "listen address '%s': %s", all, why);
		l.rdma = true;
		spec += 5;
	} else if (!strncmp(spec, "tcp:", 4)) {
		spec += 4;
	}
	if (cfg->nlisten >= TGT_MAX_LISTENERS)
		return tgt_fail(err, errlen, -EINVAL, "listen address '%s': at most %d listeners", all,
				TGT_MAX_LISTENERS);
	if (spec[0] == '[') {
		const char *close = strchr(spec, ']');
		if (!close || close[1] != ':')
			return tgt_fail(err, errlen, -EINVAL, "listen address '%s': expected [IPV6]:PORT", all);
		snprintf(l.addr, sizeof(l.addr), "%.*s", (int)(close - spec - 1), spec + 1);
		port = close + 2;
	} else if (strchr(spec, ':')) {
		const char *colon = strrchr(spec, ':');
		snprintf(l.addr, sizeof(l.addr), "%.*s", (int)(colon - spec), spec);
		port = colon + 1;
	} else {
		snprintf(l.addr, sizeof(l.addr), "0.0.0.0");
		port = spec;
	}
	char *end;
	long p = strtol(port, &end, 10);
	if (!*port || *end || p < 0 || p > 65535)
		return tgt_fail(err, errlen, -EINVAL, "listen address '%s': port must be 0..65535", all);
	snprintf(l.port, sizeof(l.port), "%ld", p);
	struct tgt_listen_cfg *n = realloc(cfg->listen, (size_t)(cfg->nlisten + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	cfg->listen = n;
	cfg->listen[cfg->nlisten++] = l;
	return 0;
}

int tgt_config_add_subsys(struct tgt_config *cfg, const char *nqn, char *err, size_t errlen)
{
	if (!nvmf_nqn_valid(nqn))
		return tgt_fail(err, errlen, -EINVAL, "subsystem NQN '%s' is not valid (1..223 printable "
			    "characters)", nqn);
	if (!strcmp(nqn, NVMF_DISCOVERY_NQN))
		return tgt_fail(err, errlen, -EINVAL, "subsystem NQN '%s' is the discovery subsystem's", nqn);
	for (int i = 0; i < cfg->nsubsys; i++)
		if (!strcmp(cfg->subsys[i].nqn, nqn))
			return tgt_fail(err, errlen, -EEXIST, "subsystem '%s' is configured twice", nqn);
	struct tgt_subsys_cfg *n = realloc(cfg->subsys, (size_t)(cfg->nsubsys + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	cfg->subsys = n;
	struct tgt_subsys_cfg *s = &cfg->subsys[cfg->nsubsys];
	memset(s, 0, sizeof(*s));
	snprintf(s->nqn, sizeof(s->nqn), "%s", nqn);
	return cfg->nsubsys++;
}

int tgt_config_add_ns(struct tgt_config *cfg, int subsys, const char *device, uint32_t nsid,
		      uint32_t device_nsid, char *err, size_t errlen)
{
	struct tgt_subsys_cfg *s = &cfg->subsys[subsys];
	if (!device || !*device || strlen(device) >= sizeof(s->ns[0].device))
		return tgt_fail(err, errlen, -EINVAL, "subsystem '%s': namespace device id empty or too long",
			    s->nqn);
	if (nsid > TGT_MAX_NS)
		return tgt_fail(err, errlen, -EINVAL, "subsystem '%s': nsid %u is above %u", s->nqn, nsid,
			    TGT_MAX_NS);
	struct tgt_ns_cfg *n = realloc(s->ns, (size_t)(s->nns + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	s->ns = n;
	struct tgt_ns_cfg *ns = &s->ns[s->nns++];
	memset(ns, 0, sizeof(*ns));
	snprintf(ns->device, sizeof(ns->device), "%s", device);
	ns->nsid = nsid;
	ns->device_nsid = device_nsid;
	return 0;
}

int tgt_config_add_host(struct tgt_config *cfg, int subsys, const char *nqn, const char *secret,
			const char *ctrl_secret, const char *hash, const char *dhgroup, char *err,
			size_t errlen)
{
	struct tgt_subsys_cfg *s = &cfg->subsys[subsys];
	if (!nvmf_nqn_valid(nqn))
		return tgt_fail(err, errlen, -EINVAL, "subsystem '%s': host NQN '%s' is not valid", s->nqn, nqn);
	struct tgt_host h = {0};
	snprintf(h.nqn, sizeof(h.nqn), "%s", nqn);
	char why[160];
	if (secret && *secret) {
		if (dhchap_key_parse(secret, &h.key, why, sizeof(why)))
			return tgt_fail(err, errlen, -EINVAL, "host '%s': dhchap_secret: %s", nqn, why);
		h.has_key = true;
	}
	if (ctrl_secret && *ctrl_secret) {
		if (!h.has_key)
			return tgt_fail(err, errlen, -EINVAL, "host '%s': dhchap_ctrl_secret needs dhchap_secret", nqn);
		if (dhchap_key_parse(ctrl_secret, &h.ckey, why, sizeof(why)))
			return tgt_fail(err, errlen, -EINVAL, "host '%s': dhchap_ctrl_secret: %s", nqn, why);
		h.has_ckey = true;
	}
	int hid = dhchap_hash_id(hash ? hash : "sha256");
	if (hid < 0)
		return tgt_fail(err, errlen, -EINVAL, "host '%s': dhchap_hash '%s' unknown (sha256, sha384, "
			    "sha512)", nqn, hash);
	int gid = dhchap_group_id(dhgroup ? dhgroup : "null");
	if (gid < 0)
		return tgt_fail(err, errlen, -EINVAL, "host '%s': dhchap_dhgroup '%s' unknown (null, "
			    "ffdhe2048, ffdhe3072, ffdhe4096, ffdhe6144, ffdhe8192)", nqn, dhgroup);
	h.hash = (uint8_t)hid;
	h.dhgroup = (uint8_t)gid;
	struct tgt_host *n = realloc(s->hosts, (size_t)(s->nhosts + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	s->hosts = n;
	s->hosts[s->nhosts++] = h;
	return 0;
}

/* ---- JSON ---- */

static const char *str_of(json_object *o)
{
	return json_object_is_type(o, json_type_string) ? json_object_get_string(o) : NULL;
}

static int check_keys(json_object *o, const char *where, const char *const *known, char *err,
		      size_t errlen)
{
	json_object_object_foreach(o, key, val)
	{
		(void)val;
		bool ok = false;
		for (int i = 0; known[i]; i++)
			ok |= !strcmp(key, known[i]);
		if (!ok)
			return tgt_fail(err, errlen, -EINVAL, "%s: unknown key \"%s\"", where, key);
	}
	return 0;
}

static int load_host(struct tgt_config *cfg, int si, json_object *h, char *err, size_t errlen)
{
	if (str_of(h))
		return tgt_config_add_host(cfg, si, str_of(h), NULL, NULL, NULL, NULL, err, errlen);
	static const char *const known[] = {"nqn", "dhchap_secret", "dhchap_ctrl_secret",
					    "dhchap_hash", "dhchap_dhgroup", "tls_key", NULL};
	if (!json_object_is_type(h, json_type_object))
		return tgt_fail(err, errlen, -EINVAL, "subsystem '%s': a host is a NQN string or an object",
			    cfg->subsys[si].nqn);
	int rc = check_keys(h, "host", known, err, errlen);
	if (rc)
		return rc;
	json_object *v;
	const char *nqn = json_object_object_get_ex(h, "nqn", &v) ? str_of(v) : NULL;
	if (!nqn)
		return tgt_fail(err, errlen, -EINVAL, "subsystem '%s': a host needs \"nqn\"", cfg->subsys[si].nqn);
	const char *f[4] = {0};
	const char *names[4] = {"dhchap_secret", "dhchap_ctrl_secret", "dhchap_hash", "dhchap_dhgroup"};
	for (int i = 0; i < 4; i++) {
		if (!json_object_object_get_ex(h, names[i], &v))
			continue;
		f[i] = str_of(v);
		if (!f[i])
			return tgt_fail(err, errlen, -EINVAL, "host '%s': \"%s\" must be a string", nqn, names[i]);
	}
	rc = tgt_config_add_host(cfg, si, nqn, f[0], f[1], f[2], f[3], err, errlen);
	if (rc == 0 && json_object_object_get_ex(h, "tls_key", &v))
		rc = str_of(v) ? tgt_config_set_tls_key(cfg, si, nqn, str_of(v), err, errlen)
			       : tgt_fail(err, errlen, -EINVAL, "host '%s': \"tls_key\" must be a string", nqn);
	return rc;
}

static int load_ns(struct tgt_config *cfg, int si, json_object *n, char *err, size_t errlen)
{
	if (str_of(n))
		return tgt_config_add_ns(cfg, si, str_of(n), 0, 0, err, errlen);
	static const char *const known[] = {"device", "nsid", "device_nsid", NULL};
	if (!json_object_is_type(n, json_type_object))
		return tgt_fail(err, errlen, -EINVAL, "subsystem '%s': a namespace is a device id string or "
			    "an object", cfg->subsys[si].nqn);
	int rc = check_keys(n, "namespace", known, err, errlen);
	if (rc)
		return rc;
	json_object *v;
	const char *dev = json_object_object_get_ex(n, "device", &v) ? str_of(v) : NULL;
	if (!dev)
		return tgt_fail(err, errlen, -EINVAL, "subsystem '%s': a namespace needs \"device\"",
			    cfg->subsys[si].nqn);
	uint32_t nums[2] = {0, 0};
	const char *names[2] = {"nsid", "device_nsid"};
	for (int i = 0; i < 2; i++) {
		if (!json_object_object_get_ex(n, names[i], &v))
			continue;
		if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 1 ||
		    json_object_get_int64(v) > 0xfffffffe)
			return tgt_fail(err, errlen, -EINVAL, "namespace of '%s': \"%s\" must be a number >= 1",
				    dev, names[i]);
		nums[i] = (uint32_t)json_object_get_int64(v);
	}
	return tgt_config_add_ns(cfg, si, dev, nums[0], nums[1], err, errlen);
}

static int load_subsys(struct tgt_config *cfg, json_object *s, char *err, size_t errlen)
{
	static const char *const known[] = {"nqn", "serial", "model", "allow_any_host", "hosts",
					    "namespaces", "tls_key", NULL};
	if (!json_object_is_type(s, json_type_object))
		return tgt_fail(err, errlen, -EINVAL, "\"subsystems\" must hold objects");
	int rc = check_keys(s, "subsystem", known, err, errlen);
	if (rc)
		return rc;
	json_object *v;
	const char *nqn = json_object_object_get_ex(s, "nqn", &v) ? str_of(v) : NULL;
	if (!nqn)
		return tgt_fail(err, errlen, -EINVAL, "a subsystem needs \"nqn\"");
	int si = tgt_config_add_subsys(cfg, nqn, err, errlen);
	if (si < 0)
		return si;
	struct tgt_subsys_cfg *sc = &cfg->subsys[si];
	if (json_object_object_get_ex(s, "serial", &v))
		snprintf(sc->serial, sizeof(sc->serial), "%s", str_of(v) ? str_of(v) : "");
	if (json_object_object_get_ex(s, "model", &v))
		snprintf(sc->model, sizeof(sc->model), "%s", str_of(v) ? str_of(v) : "");
	if (json_object_object_get_ex(s, "allow_any_host", &v)) {
		if (!json_object_is_type(v, json_type_boolean))
			return tgt_fail(err, errlen, -EINVAL, "subsystem '%s': \"allow_any_host\" must be true or "
				    "false", nqn);
		sc->allow_any_host = json_object_get_boolean(v);
	}
	if (json_object_object_get_ex(s, "hosts", &v)) {
		if (!json_object_is_type(v, json_type_array))
			return tgt_fail(err, errlen, -EINVAL, "subsystem '%s': \"hosts\" must be an array", nqn);
		for (size_t i = 0; i < json_object_array_length(v); i++)
			if ((rc = load_host(cfg, si, json_object_array_get_idx(v, i), err, errlen)))
				return rc;
	}
	if (json_object_object_get_ex(s, "tls_key", &v) &&
	    (rc = str_of(v) ? tgt_config_set_tls_key(cfg, si, NULL, str_of(v), err, errlen)
			    : tgt_fail(err, errlen, -EINVAL, "subsystem '%s': \"tls_key\" must be a string", nqn)))
		return rc;
	if (!json_object_object_get_ex(s, "namespaces", &v) || !json_object_is_type(v, json_type_array) ||
	    json_object_array_length(v) == 0)
		return tgt_fail(err, errlen, -EINVAL, "subsystem '%s': \"namespaces\" must be a non-empty array",
			    nqn);
	for (size_t i = 0; i < json_object_array_length(v); i++)
		if ((rc = load_ns(cfg, si, json_object_array_get_idx(v, i), err, errlen)))
			return rc;
	return 0;
}

static int load(struct tgt_config *cfg, json_object *root, char *err, size_t errlen)
{
	static const char *const known[] = {"listen", "threads", "discovery", "subsystems", "tls", NULL};
	if (!json_object_is_type(root, json_type_object))
		return tgt_fail(err, errlen, -EINVAL, "the configuration must be a JSON object");
	int rc = 0;
	json_object_object_foreach(root, key, val)
	{
		bool ok = tgt_config_limit_known(key);
		for (int i = 0; known[i] && !ok; i++)
			ok = !strcmp(key, known[i]);
		if (!ok)
			return tgt_fail(err, errlen, -EINVAL, "configuration: unknown key \"%s\"", key);
		if (!tgt_config_limit_known(key))
			continue;
		if (!json_object_is_type(val, json_type_int) || json_object_get_int64(val) < 0)
			return tgt_fail(err, errlen, -EINVAL, "\"%s\" must be a number", key);
		rc = tgt_config_set_limit(cfg, key, (uint64_t)json_object_get_int64(val), err, errlen);
		if (rc)
			return rc;
	}
	json_object *v;
	if (json_object_object_get_ex(root, "listen", &v)) {
		if (str_of(v)) {
			rc = tgt_config_add_listen(cfg, str_of(v), err, errlen);
		} else if (json_object_is_type(v, json_type_array)) {
			for (size_t i = 0; i < json_object_array_length(v) && !rc; i++) {
				const char *l = str_of(json_object_array_get_idx(v, i));
				rc = l ? tgt_config_add_listen(cfg, l, err, errlen)
				       : tgt_fail(err, errlen, -EINVAL, "\"listen\" entries are \"ADDRESS:PORT\" strings");
			}
		} else {
			rc = tgt_fail(err, errlen, -EINVAL, "\"listen\" is \"ADDRESS:PORT\" or an array of them");
		}
		if (rc)
			return rc;
	}
	if (json_object_object_get_ex(root, "threads", &v)) {
		if (!json_object_is_type(v, json_type_int) || json_object_get_int(v) < 1 ||
		    json_object_get_int(v) > 64)
			return tgt_fail(err, errlen, -EINVAL, "\"threads\" must be 1..64");
		cfg->threads = json_object_get_int(v);
	}
	if (json_object_object_get_ex(root, "tls", &v)) {
		if (!json_object_is_type(v, json_type_boolean))
			return tgt_fail(err, errlen, -EINVAL, "\"tls\" must be true or false");
		cfg->tls = json_object_get_boolean(v);
	}
	if (json_object_object_get_ex(root, "discovery", &v)) {
		if (!json_object_is_type(v, json_type_boolean))
			return tgt_fail(err, errlen, -EINVAL, "\"discovery\" must be true or false");
		cfg->discovery = json_object_get_boolean(v);
	}
	if (!json_object_object_get_ex(root, "subsystems", &v) || !json_object_is_type(v, json_type_array))
		return tgt_fail(err, errlen, -EINVAL, "\"subsystems\" (an array) is required");
	for (size_t i = 0; i < json_object_array_length(v); i++)
		if ((rc = load_subsys(cfg, json_object_array_get_idx(v, i), err, errlen)))
			return rc;
	return 0;
}

int tgt_config_load(const char *path, struct tgt_config **out, char *err, size_t errlen)
{
	*out = NULL;
	json_object *root = json_object_from_file(path);
	if (!root)
		return tgt_fail(err, errlen, -EINVAL, "%s: %s", path, json_util_get_last_err());
	struct tgt_config *cfg = tgt_config_new();
	if (!cfg) {
		json_object_put(root);
		return -ENOMEM;
	}
	char why[400] = "";
	int rc = load(cfg, root, why, sizeof(why));
	json_object_put(root);
	if (rc) {
		tgt_config_free(cfg);
		return tgt_fail(err, errlen, rc, "%s: %s", path, why);
	}
	*out = cfg;
	return 0;
}

struct tgt_subsys *tgt_find_subsys(struct unvme_target *t, const char *nqn)
{
	if (t->cfg->discovery && !strcmp(nqn, NVMF_DISCOVERY_NQN))
		return &t->disc;
	for (int i = 0; i < t->nsubs; i++)
		if (!strcmp(t->subs[i].nqn, nqn))
			return &t->subs[i];
	return NULL;
}

const struct tgt_host *tgt_host_key_entry(const struct unvme_target *t, const char *hostnqn)
{
	for (int s = 0; s < t->nsubs; s++) {
		const struct tgt_subsys_cfg *sc = t->subs[s].cfg;
		for (int i = 0; i < sc->nhosts; i++)
			if (sc->hosts[i].has_key && !strcmp(sc->hosts[i].nqn, hostnqn))
				return &sc->hosts[i];
	}
	return NULL;
}

const struct tgt_host *tgt_host_allowed(const struct tgt_subsys *ss, const char *hostnqn, bool *allowed)
{
	*allowed = ss->discovery || (ss->cfg && ss->cfg->allow_any_host);
	if (!ss->cfg)
		return NULL;
	for (int i = 0; i < ss->cfg->nhosts; i++) {
		if (!strcmp(ss->cfg->hosts[i].nqn, hostnqn)) {
			*allowed = true;
			return &ss->cfg->hosts[i];
		}
	}
	return NULL;
}
