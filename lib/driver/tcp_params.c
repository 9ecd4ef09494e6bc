/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvme-tcp:// device ids (see tcp_params.h) and the host's identity.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/crc.h"
#include "errmsg.h"
#include "tcp_params.h"

#define DEFAULT_PORT "4420"
#define DEFAULT_DISC_PORT "8009"
#define DEFAULT_KATO_MS 5000
#define DEFAULT_LOSS_TMO_MS 10000
#define DEFAULT_RECONNECT_MS 100
#define DEFAULT_CONNECT_MS 3000

bool unvme_addr_is_tcp(const char *addr)
{
	return strncmp(addr, TCP_SCHEME, strlen(TCP_SCHEME)) == 0;
}

bool tcp_nqn_valid(const char *nqn)
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

/* "nvme-tcp" or "nvme-rdma": the scheme whose id is parsed, for messages (one parse per
 * thread at a time). */
static __thread const char *opt_word = "nvme-tcp";
static __thread bool opt_rdma;

static int parse_uint(const char *key, const char *val, uint32_t max, uint32_t *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(val, &end, 10);
	if (!*val || *end || errno || v > max)
		return unvme_fail(-EINVAL, "%s option %s=%s: expected a number 0..%u", opt_word, key, val, max);
	*out = (uint32_t)v;
	return 0;
}

static int parse_bool(const char *key, const char *val, bool *out)
{
	if (!strcmp(val, "1") || !strcmp(val, "on") || !strcmp(val, "true") || !strcmp(val, "yes"))
		*out = true;
	else if (!strcmp(val, "0") || !strcmp(val, "off") || !strcmp(val, "false") || !strcmp(val, "no"))
		*out = false;
	else
		return unvme_fail(-EINVAL, "%s option %s=%s: expected 0 or 1", opt_word, key, val);
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

static int set_option(struct tcp_params *p, const char *key, const char *val)
{
	uint32_t v = 0;
	int rc = 0;
	if (opt_rdma && (!strcmp(key, "tls") || !strcmp(key, "tls_key") || !strcmp(key, "tls_identity")))
		return unvme_fail(-EINVAL, "%s option %s: NVMe/RDMA has no TLS (TLS is NVMe/TCP's; "
				  "an RDMA fabric is secured below NVMe, e.g. by IPsec for RoCEv2)", opt_word, key);
	if (opt_rdma && (!strcmp(key, "hdgst") || !strcmp(key, "ddgst")))
		return unvme_fail(-EINVAL, "%s option %s: NVMe/RDMA has no digests (the RDMA transport "
				  "checks its own CRCs)", opt_word, key);
	if (!strcmp(key, "hostnqn")) {
		if (!tcp_nqn_valid(val))
			return unvme_fail(-EINVAL, "%s option hostnqn: '%s' is not a valid NQN "
					  "(1..223 printable characters)", opt_word, val);
		snprintf(p->hostnqn, sizeof(p->hostnqn), "%s", val);
	} else if (!strcmp(key, "hostid")) {
		if (parse_hostid(val, p->hostid))
			return unvme_fail(-EINVAL, "%s option hostid=%s: expected a UUID "
					  "(xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)", opt_word, val);
	} else if (!strcmp(key, "hdgst")) {
		rc = parse_bool(key, val, &p->hdgst);
	} else if (!strcmp(key, "ddgst")) {
		rc = parse_bool(key, val, &p->ddgst);
	} else if (!strcmp(key, "kato")) {
		rc = parse_uint(key, val, 3600000, &p->kato_ms);
	} else if (!strcmp(key, "ctrl_loss_tmo")) {
		rc = parse_uint(key, val, 3600000, &v);
		p->ctrl_loss_tmo_ms = v;
	} else if (!strcmp(key, "reconnect_delay")) {
		rc = parse_uint(key, val, 600000, &p->reconnect_delay_ms);
	} else if (!strcmp(key, "connect_timeout")) {
		rc = parse_uint(key, val, 600000, &p->connect_timeout_ms);
		if (rc == 0 && p->connect_timeout_ms == 0)
			p->connect_timeout_ms = 1;
	} else if (!strcmp(key, "incapsule")) {
		rc = parse_uint(key, val, 1u << 24, &v);
		p->incapsule = (int32_t)v;
	} else if (!strcmp(key, "tls")) {
		rc = parse_bool(key, val, &p->tls);
	} else if (!strcmp(key, "tls_key")) {
		char why[160];
		if (tcp_psk_parse(val, &p->tls_key, why, sizeof(why)))
			return unvme_fail(-EINVAL, "%s option tls_key: %s", opt_word, why);
		p->tls = true; /* a key given is TLS asked for */
		p->tls_key_given = true;
	} else if (!strcmp(key, "tls_identity")) {
		rc = parse_uint(key, val, 1, &v);
		p->tls_identity = (int)v;
	} else if (!strcmp(key, "dhchap_secret") || !strcmp(key, "dhchap_ctrl_secret")) {
		char *dst = key[7] == 's' ? p->dhchap_secret : p->dhchap_ctrl_secret;
		if (strlen(val) >= sizeof(p->dhchap_secret))
			return unvme_fail(-EINVAL, "%s option %s: secret too long", opt_word, key);
		memcpy(dst, val, strlen(val) + 1);
	} else if (opt_rdma) {
		return unvme_fail(-EINVAL, "%s option '%s' is unknown (known: hostnqn, hostid, "
				  "kato, ctrl_loss_tmo, reconnect_delay, connect_timeout, incapsule, "
				  "dhchap_secret, dhchap_ctrl_secret)", opt_word, key);
	} else {
		return unvme_fail(-EINVAL, "%s option '%s' is unknown (known: hostnqn, hostid, "
				  "hdgst, ddgst, kato, ctrl_loss_tmo, reconnect_delay, connect_timeout, "
				  "incapsule, dhchap_secret, dhchap_ctrl_secret, tls, tls_key, tls_identity)", opt_word, key);
	}
	return rc;
}

static int parse_query(struct tcp_params *p, const char *q)
{
	while (*q) {
		const char *end = strchr(q, '&');
		size_t len = end ? (size_t)(end - q) : strlen(q);
		const char *eq = memchr(q, '=', len);
		if (!eq)
			return unvme_fail(-EINVAL, "%s option '%.*s' has no value (key=value)", opt_word, (int)len, q);
		char key[64], val[600];
		if (!pct_decode(q, (size_t)(eq - q), key, sizeof(key)) ||
		    !pct_decode(eq + 1, len - (size_t)(eq - q) - 1, val, sizeof(val)))
			return unvme_fail(-EINVAL, "%s option '%.*s': bad percent-escape or too long", opt_word,
					  (int)len, q);
		int rc = set_option(p, key, val);
		if (rc)
			return rc;
		q = end ? end + 1 : q + len;
	}
	return 0;
}

static int parse_address(const char *address, const char *scheme, struct tcp_params *p);

/* Host and port from "HOST[:PORT]" or "[V6][:PORT]". */
static int parse_authority(struct tcp_params *p, const char *s, size_t len, const char *addr)
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
		return unvme_fail(-EINVAL, "%s: no host (%s://HOST:PORT/NQN)", addr, opt_word);
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

int tcp_params_parse(const char *address, struct tcp_params *p)
{
	return fabrics_params_parse(address, TCP_SCHEME, p);
}

int fabrics_params_parse(const char *address, const char *scheme, struct tcp_params *p)
{
	memset(p, 0, sizeof(*p));
	char word[16];
	size_t wlen = strcspn(scheme, ":");
	if (wlen >= sizeof(word))
		wlen = sizeof(word) - 1;
	memcpy(word, scheme, wlen);
	word[wlen] = '\0';
	opt_word = word;
	opt_rdma = strcmp(scheme, TCP_SCHEME) != 0;
	int rc = parse_address(address, scheme, p);
	opt_word = "nvme-tcp";
	opt_rdma = false;
	return rc;
}

static int parse_address(const char *address, const char *scheme, struct tcp_params *p)
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
	int rc = parse_authority(p, s, auth_len, address);
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
	if (!tcp_nqn_valid(p->subnqn))
		return unvme_fail(-EINVAL, "%s: '%s' is not a valid NQN (1..223 printable characters)",
				  address, p->subnqn);
	p->discovery = strcmp(p->subnqn, NVMF_DISCOVERY_NQN) == 0;
	if (!p->port[0])
		snprintf(p->port, sizeof(p->port), "%s", p->discovery ? DEFAULT_DISC_PORT : DEFAULT_PORT);
	tcp_default_hostnqn(p->hostnqn, p->hostid);
	const char *env = getenv("UNVME_DHCHAP_SECRET");
	if (env && *env)
		snprintf(p->dhchap_secret, sizeof(p->dhchap_secret), "%s", env);
	env = getenv("UNVME_DHCHAP_CTRL_SECRET");
	if (env && *env)
		snprintf(p->dhchap_ctrl_secret, sizeof(p->dhchap_ctrl_secret), "%s", env);
	if (*s == '?')
		rc = parse_query(p, s + 1);
	if (rc == 0 && p->tls && !p->tls_key_given) {
		char why[160];
		env = getenv("UNVME_TLS_KEY");
		if (!env || !*env)
			rc = unvme_fail(-EINVAL, "%s: tls=1 needs a PSK: tls_key=NVMeTLSkey-1:... in the device id, "
					"or $UNVME_TLS_KEY (nvme gen-tls-key makes one)", address);
		else if (tcp_psk_parse(env, &p->tls_key, why, sizeof(why)))
			rc = unvme_fail(-EINVAL, "$UNVME_TLS_KEY: %s", why);
	}
	if (rc == 0 && p->discovery)
		p->kato_ms = 0; /* a discovery controller lives for one log page: no keep alive */
	return rc;
}

static bool read_line(const char *path, char *out, size_t len)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	bool ok = fgets(out, (int)len, f) != NULL;
	fclose(f);
	if (ok)
		out[strcspn(out, "\r\n")] = '\0';
	return ok && out[0];
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

void tcp_default_hostnqn(char out[NVMF_NQN_FIELD], uint8_t hostid[16])
{
	char line[NVMF_NQN_FIELD];
	const char *env = getenv("UNVME_HOSTNQN");
	bool have_nqn = false;
	if (env && tcp_nqn_valid(env)) {
		snprintf(out, NVMF_NQN_FIELD, "%s", env);
		have_nqn = true;
	} else if (read_line("/etc/nvme/hostnqn", line, sizeof(line)) && tcp_nqn_valid(line)) {
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
