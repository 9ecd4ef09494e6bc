/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NVMe over Fabrics device ids, the part every scheme shares (see nvmf_params.h), and the
 * host's identity.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/common/fdio.h"
#include "lib/driver/errmsg.h"
#include "lib/util/crc.h"
#include "nvmf_params.h"

#define DEFAULT_PORT "4420"
#define DEFAULT_DISC_PORT "8009"
#define DEFAULT_KATO_MS 5000
#define DEFAULT_LOSS_TMO_MS 10000
#define DEFAULT_RECONNECT_MS 100
#define DEFAULT_CONNECT_MS 3000

bool nvmf_nqn_valid(const char *nqn)
{
	size_t n = strlen(nqn);
	if (n == 0 || n > NVMF_NQN_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isprint((unsigned char)nqn[i]) || nqn[i] == ' ')
			return false;
	return true;
}

/* Percent-decodes src[0..len) into out; false if an escape is malformed or out too small. */
static bool pct_decode(const char *src, size_t len, char *out, size_t outlen)
{
	size_t o = 0;
	for (size_t i = 0; i < len; i++) {
		char c = src[i];
		if (c == '%') {
			if (i + 2 >= len || !isxdigit((unsigned char)src[i + 1]) ||
			    !isxdigit((unsigned char)src[i + 2]))
				return false;
			char hex[3] = {src[i + 1], src[i + 2], 0};
			c = (char)strtol(hex, NULL, 16);
			i += 2;
		}
		if (o + 1 >= outlen)
			return false;
		out[o++] = c;
	}
	out[o] = '\0';
	return true;
}

int nvmf_params_uint(const char *word, const char *key, const char *val, uint32_t max,
		     uint32_t *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(val, &end, 10);
	if (!*val || *end || errno || v > max)
		return unvme_fail(-EINVAL, "%s option %s=%s: expected a number 0..%u", word, key, val, max);
	*out = (uint32_t)v;
	return 0;
}

int nvmf_params_bool(const char *word, const char *key, const char *val, bool *out)
{
	if (!strcmp(val, "1") || !strcmp(val, "on") || !strcmp(val, "true") || !strcmp(val, "yes"))
		*out = true;
	else if (!strcmp(val, "0") || !strcmp(val, "off") || !strcmp(val, "false") || !strcmp(val, "no"))
		*out = false;
	else
		return unvme_fail(-EINVAL, "%s option %s=%s: expected 0 or 1", word, key, val);
	return 0;
}

static int parse_hostid(const char *val, uint8_t id[16])
{
	unsigned b[16];
	if (sscanf(val, "%2x%2x%2x%2x-%2x%2x-%2x%2x-%2x%2x-%2x%2x%2x%2x%2x%2x", &b[0], &b[1], &b[2],
		   &b[3], &b[4], &b[5], &b[6], &b[7], &b[8], &b[9], &b[10], &b[11], &b[12], &b[13],
		   &b[14], &b[15]) != 16 || strlen(val) != 36)
		return -EINVAL;
	for (int i = 0; i < 16; i++)
		id[i] = (uint8_t)b[i];
	return 0;
}

/* word, here and below: "nvme-tcp" or "nvme-rdma", the scheme whose id is parsed, for messages. */
static int set_option(struct nvmf_params *p, const char *word, const struct nvmf_params_keys *keys,
		      const char *key, const char *val)
{
	uint32_t v = 0;
	int rc = 0;
	if (!strcmp(key, "hostnqn")) {
		if (!nvmf_nqn_valid(val))
			return unvme_fail(-EINVAL, "%s option hostnqn: '%s' is not a valid NQN "
					  "(1..223 printable characters)", word, val);
		snprintf(p->hostnqn, sizeof(p->hostnqn), "%s", val);
	} else if (!strcmp(key, "hostid")) {
		if (parse_hostid(val, p->hostid))
			return unvme_fail(-EINVAL, "%s option hostid=%s: expected a UUID "
					  "(xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)", word, val);
	} else if (!strcmp(key, "kato")) {
		rc = nvmf_params_uint(word, key, val, 3600000, &p->kato_ms);
	} else if (!strcmp(key, "ctrl_loss_tmo")) {
		rc = nvmf_params_uint(word, key, val, 3600000, &v);
		p->ctrl_loss_tmo_ms = v;
	} else if (!strcmp(key, "reconnect_delay")) {
		rc = nvmf_params_uint(word, key, val, 600000, &p->reconnect_delay_ms);
	} else if (!strcmp(key, "connect_timeout")) {
		rc = nvmf_params_uint(word, key, val, 600000, &p->connect_timeout_ms);
		if (rc == 0 && p->connect_timeout_ms == 0)
			p->connect_timeout_ms = 1;
	} else if (!strcmp(key, "incapsule")) {
		rc = nvmf_params_uint(word, key, val, 1u << 24, &v);
		p->incapsule = (int32_t)v;
	} else if (!strcmp(key, "dhchap_secret") || !strcmp(key, "dhchap_ctrl_secret")) {
		char *dst = key[7] == 's' ? p->dhchap_secret : p->dhchap_ctrl_secret;
		if (strlen(val) >= sizeof(p->dhchap_secret))
			return unvme_fail(-EINVAL, "%s option %s: secret too long", word, key);
		memcpy(dst, val, strlen(val) + 1);
	} else {
		rc = keys ? keys->option(keys->arg, word, key, val) : 1;
		if (rc == 1)
			return unvme_fail(-EINVAL, "%s option '%s' is unknown (known: %s)", word, key,
					  keys && keys->known ? keys->known : NVMF_PARAMS_KEYS);
	}
	return rc;
}

static int parse_query(struct nvmf_params *p, const char *word, const struct nvmf_params_keys *keys,
		       const char *q)
{
	while (*q) {
		const char *end = strchr(q, '&');
		size_t len = end ? (size_t)(end - q) : strlen(q);
		const char *eq = memchr(q, '=', len);
		if (!eq)
			return unvme_fail(-EINVAL, "%s option '%.*s' has no value (key=value)", word, (int)len, q);
		char key[64], val[600];
		if (!pct_decode(q, (size_t)(eq - q), key, sizeof(key)) ||
		    !pct_decode(eq + 1, len - (size_t)(eq - q) - 1, val, sizeof(val)))
			return unvme_fail(-EINVAL, "%s option '%.*s': bad percent-escape or too long", word,
					  (int)len, q);
		int rc = set_option(p, word, keys, key, val);
		if (rc)
			return rc;
		q = end ? end + 1 : q + len;
	}
	return 0;
}

/* Host and port from "HOST[:PORT]" or "[V6][:PORT]". */
static int parse_authority(struct nvmf_params *p, const char *word, const char *s, size_t len,
			   const char *addr)
{
	const char *port = NULL;
	size_t hlen;
	if (len && s[0] == '[') {
		const char *close = memchr(s, ']', len);
		if (!close)
			return unvme_fail(-EINVAL, "%s: IPv6 address without ']'", addr);
		hlen = (size_t)(close - s - 1);
		memcpy(p->host, s + 1, hlen < sizeof(p->host) ? hlen : sizeof(p->host) - 1);
		p->host[hlen < sizeof(p->host) ? hlen : sizeof(p->host) - 1] = '\0';
		if ((size_t)(close + 1 - s) < len) {
			if (close[1] != ':')
				return unvme_fail(-EINVAL, "%s: expected ':PORT' after the IPv6 address", addr);
			port = close + 2;
		}
	} else {
		const char *colon = memchr(s, ':', len);
		hlen = colon ? (size_t)(colon - s) : len;
		if (hlen >= sizeof(p->host))
			return unvme_fail(-EINVAL, "%s: host name too long", addr);
		memcpy(p->host, s, hlen);
		p->host[hlen] = '\0';
		if (colon)
			port = colon + 1;
	}
	if (!p->host[0])
		return unvme_fail(-EINVAL, "%s: no host (%s://HOST:PORT/NQN)", addr, word);
	if (port) {
		size_t plen = len - (size_t)(port - s);
		if (plen == 0 || plen >= sizeof(p->port))
			return unvme_fail(-EINVAL, "%s: bad port", addr);
		memcpy(p->port, port, plen);
		p->port[plen] = '\0';
		for (size_t i = 0; i < plen; i++)
			if (!isdigit((unsigned char)p->port[i]))
				return unvme_fail(-EINVAL, "%s: port '%s' is not a number", addr, p->port);
		if (atoi(p->port) < 1 || atoi(p->port) > 65535)
			return unvme_fail(-EINVAL, "%s: port %s is outside 1..65535", addr, p->port);
	}
	return 0;
}

static int parse_address(const char *address, const char *scheme, const char *word,
			 const struct nvmf_params_keys *keys, struct nvmf_params *p)
{
	if (strncmp(address, scheme, strlen(scheme)) != 0)
		return unvme_fail(-EINVAL, "%s: not an %s address", address, scheme);
	p->kato_ms = DEFAULT_KATO_MS;
	p->ctrl_loss_tmo_ms = DEFAULT_LOSS_TMO_MS;
	p->reconnect_delay_ms = DEFAULT_RECONNECT_MS;
	p->connect_timeout_ms = DEFAULT_CONNECT_MS;
	p->incapsule = -1;
	const char *s = address + strlen(scheme);
	size_t auth_len = strcspn(s, "/?");
	int rc = parse_authority(p, word, s, auth_len, address);
	if (rc)
		return rc;
	s += auth_len;
	if (*s == '/') {
		s++;
		size_t nlen = strcspn(s, "?");
		if (nlen && !pct_decode(s, nlen, p->subnqn, sizeof(p->subnqn)))
			return unvme_fail(-EINVAL, "%s: subsystem NQN too long or badly escaped", address);
		s += nlen;
	}
	if (!p->subnqn[0])
		snprintf(p->subnqn, sizeof(p->subnqn), "%s", NVMF_DISCOVERY_NQN);
	if (!nvmf_nqn_valid(p->subnqn))
		return unvme_fail(-EINVAL, "%s: '%s' is not a valid NQN (1..223 printable characters)",
				  address, p->subnqn);
	p->discovery = strcmp(p->subnqn, NVMF_DISCOVERY_NQN) == 0;
	if (!p->port[0])
		snprintf(p->port, sizeof(p->port), "%s",
			 !p->discovery ? DEFAULT_PORT
			 : keys && keys->disc_port ? keys->disc_port : DEFAULT_DISC_PORT);
	nvmf_default_hostnqn(p->hostnqn, p->hostid);
	const char *env = getenv("UNVME_DHCHAP_SECRET");
	if (env && *env)
		snprintf(p->dhchap_secret, sizeof(p->dhchap_secret), "%s", env);
	env = getenv("UNVME_DHCHAP_CTRL_SECRET");
	if (env && *env)
		snprintf(p->dhchap_ctrl_secret, sizeof(p->dhchap_ctrl_secret), "%s", env);
	if (*s == '?')
		rc = parse_query(p, word, keys, s + 1);
	if (rc == 0 && p->discovery)
		p->kato_ms = 0; /* a discovery controller lives for one log page: no keep alive */
	return rc;
}

int nvmf_params_parse(const char *address, const char *scheme, const struct nvmf_params_keys *keys,
		      struct nvmf_params *p)
{
	memset(p, 0, sizeof(*p));
	char word[16];
	size_t wlen = strcspn(scheme, ":");
	if (wlen >= sizeof(word))
		wlen = sizeof(word) - 1;
	memcpy(word, scheme, wlen);
	word[wlen] = '\0';
	return parse_address(address, scheme, word, keys, p);
}

/* The first line of a small configuration file (/etc/nvme/hostnqn, hostid, machine-id). */
static bool read_line(const char *path, char *out, size_t len)
{
	if (fd_read_text(path, out, len) != 0)
		return false;
	out[strcspn(out, "\r\n")] = '\0';
	return out[0] != '\0';
}

/* A UUID derived from a seed string: stable, version 4 / variant 1 bits set. */
static void uuid_from(const char *seed, uint8_t id[16])
{
	for (int i = 0; i < 4; i++) {
		uint32_t h = crc32c((uint32_t)i * 0x9e3779b9u, seed, strlen(seed));
		memcpy(id + 4 * i, &h, 4);
	}
	id[6] = (uint8_t)((id[6] & 0x0f) | 0x40);
	id[8] = (uint8_t)((id[8] & 0x3f) | 0x80);
}

static void uuid_str(const uint8_t id[16], char out[37])
{
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 id[0], id[1], id[2], id[3], id[4], id[5], id[6], id[7], id[8], id[9], id[10], id[11],
		 id[12], id[13], id[14], id[15]);
}

void nvmf_default_hostnqn(char out[NVMF_NQN_FIELD], uint8_t hostid[16])
{
	char line[NVMF_NQN_FIELD];
	const char *env = getenv("UNVME_HOSTNQN");
	bool have_nqn = false;
	if (env && nvmf_nqn_valid(env)) {
		snprintf(out, NVMF_NQN_FIELD, "%s", env);
		have_nqn = true;
	} else if (read_line("/etc/nvme/hostnqn", line, sizeof(line)) && nvmf_nqn_valid(line)) {
		snprintf(out, NVMF_NQN_FIELD, "%s", line);
		have_nqn = true;
	}
	env = getenv("UNVME_HOSTID");
	if ((env && parse_hostid(env, hostid) == 0) ||
	    (read_line("/etc/nvme/hostid", line, sizeof(line)) && parse_hostid(line, hostid) == 0)) {
		/* given */
	} else {
		const char *uu = have_nqn ? strstr(out, ":uuid:") : NULL;
		if (!uu || parse_hostid(uu + 6, hostid) != 0) {
			char seed[NVMF_NQN_FIELD];
			if (have_nqn)
				snprintf(seed, sizeof(seed), "%s", out);
			else if (!read_line("/etc/machine-id", seed, sizeof(seed)))
				snprintf(seed, sizeof(seed), "unvme-host");
			uuid_from(seed, hostid);
		}
	}
	if (!have_nqn) {
		char u[37];
		uuid_str(hostid, u);
		snprintf(out, NVMF_NQN_FIELD, "nqn.2014-08.org.nvmexpress:uuid:%s", u);
	}
}

uint32_t nvmf_attempt_limit_ms(const struct nvmf_params *p, uint32_t cmd_timeout_ms)
{
	uint64_t cmd = cmd_timeout_ms ? cmd_timeout_ms : 10000;
	uint64_t t = (uint64_t)p->connect_timeout_ms + 8 * cmd;
	return t > UINT32_MAX ? UINT32_MAX : (uint32_t)t;
}
