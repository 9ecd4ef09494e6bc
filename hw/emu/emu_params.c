/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The emu:// URI: what device to build (docs/devices.md is the user's reference).
 *
 *   emu://[name][?key=value&key=value...]
 *
 * Every error names the URI and the bad key or value; unknown keys are errors so that a typo
 * never silently builds a different device than the user asked for. The query is strict:
 * every '&'-separated item is key=value with a non-empty key, so an empty query ("x?"), an
 * empty item ("&&", a leading or trailing '&') and an empty key ("=5") are all errors.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu_ctrl.h"

#define URI_PREFIX "emu://"
#define DEFAULT_NS_SIZE (1ull << 30)
#define DEFAULT_QUEUES 64u
#define DEFAULT_MQES 4096u
#define MAX_MQES 65536u
#define MAX_DSTRD 15u
#define MAX_VALUE_LEN (PATH_MAX + 64)
#define URI_ECHO_MAX 160

struct parse_ctx {
	const char *uri;
	char *err;
	size_t errlen;
};

static int fail(const struct parse_ctx *pc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(const struct parse_ctx *pc, const char *fmt, ...)
{
	if (pc->err && pc->errlen) {
		char msg[PATH_MAX + 256];
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		/* a long URI is shown by its start: the message must still say what is wrong */
		size_t n = strlen(pc->uri);
		if (n > URI_ECHO_MAX)
			snprintf(pc->err, pc->errlen, "emu URI '%.*s...' (%zu characters): %s",
				 URI_ECHO_MAX, pc->uri, n, msg);
		else
			snprintf(pc->err, pc->errlen, "emu URI '%s': %s", pc->uri, msg);
	}
	return -EINVAL;
}

/* ---- value parsers: 0 on success, -1 when the text is not of the form ---- */

static int parse_u64(const char *s, uint64_t *out)
{
	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

static int parse_u32_range(const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
	uint64_t v;
	if (parse_u64(s, &v) || v < lo || v > hi)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

/* "<digits>[K|M|G|T]", powers of 1024. */
static int parse_size(const char *s, uint64_t *out)
{
	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	unsigned shift = 0;
	switch (*end) {
	case '\0': break;
	case 'k': case 'K': shift = 10; break;
	case 'm': case 'M': shift = 20; break;
	case 'g': case 'G': shift = 30; break;
	case 't': case 'T': shift = 40; break;
	default: return -1;
	}
	if (*end && end[1])
		return -1;
	if (shift && v > (UINT64_MAX >> shift))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

/* "<digits>(ns|us|ms|s)" */
static int parse_duration(const char *s, uint64_t *out_ns)
{
	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	uint64_t mul;
	if (!strcmp(end, "ns"))
		mul = 1;
	else if (!strcmp(end, "us"))
		mul = 1000;
	else if (!strcmp(end, "ms"))
		mul = 1000000;
	else if (!strcmp(end, "s"))
		mul = 1000000000;
	else
		return -1;
	if (v > UINT64_MAX / mul)
		return -1;
	*out_ns = v * mul;
	return 0;
}

static int parse_kind(const char *s, enum emu_ns_kind *k)
{
	if (!strcmp(s, "mem"))
		*k = EMU_NS_MEM;
	else if (!strcmp(s, "null"))
		*k = EMU_NS_NULL;
	else if (!strcmp(s, "file"))
		*k = EMU_NS_FILE;
	else if (!strcmp(s, "kv"))
		*k = EMU_NS_KV;
	else
		return -1;
	return 0;
}

static const char *kind_name(enum emu_ns_kind k)
{
	switch (k) {
	case EMU_NS_MEM: return "mem";
	case EMU_NS_NULL: return "null";
	case EMU_NS_FILE: return "file";
	case EMU_NS_KV: return "kv";
	}
	return "?";
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Percent-decodes [s, s+n) into out (so paths may hold '&', '?', '=' or spaces). */
static int percent_decode(const char *s, size_t n, char *out, size_t outlen)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];
		if (ch == '%') {
			if (i + 2 >= n)
				return -1;
			int hi = hexval(s[i + 1]), lo = hexval(s[i + 2]);
			if (hi < 0 || lo < 0)
				return -1;
			ch = (char)(hi << 4 | lo);
			i += 2;
			if (ch == '\0')
				return -1;
		}
		if (o + 1 >= outlen)
			return -1;
		out[o++] = ch;
	}
	out[o] = '\0';
	return 0;
}

static bool printable_ascii(const char *s)
{
	for (; *s; s++)
		if (*s < 0x20 || *s > 0x7e)
			return false;
	return true;
}

/* 64-bit FNV-1a: a stable hash for serial numbers and namespace identifiers. */
static uint64_t fnv1a(uint64_t h, const void *data, size_t n)
{
	const uint8_t *b = data;
	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}
#define FNV_OFFSET 0xcbf29ce484222325ull

/* splitmix64 finaliser: spreads a hash over all bits for the identifiers. */
static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* ---- one namespace: kind:size[:lba[:path]] ---- */

static int parse_ns_value(const struct parse_ctx *pc, const char *v, struct emu_ns_params *ns)
{
	char buf[MAX_VALUE_LEN];
	snprintf(buf, sizeof(buf), "%s", v);
	char *fields[4] = { buf, NULL, NULL, NULL };
	int nf = 1;
	for (char *q = buf; *q && nf < 4; q++) {
		if (*q == ':') {
			*q = '\0';
			fields[nf++] = q + 1;
		}
	}
	/* the path (fourth field) keeps any further colons */
	if (parse_kind(fields[0], &ns->kind))
		return fail(pc, "ns=%s: namespace kind '%s' is not mem, null, file or kv", v, fields[0]);
	if (nf < 2)
		return fail(pc, "ns=%s: expected <kind>:<size>[:<lba>[:<path>]]", v);
	if (!*fields[1])
		ns->size_bytes = 0;
	else if (parse_size(fields[1], &ns->size_bytes))
		return fail(pc, "ns=%s: size '%s' is not a number with an optional K/M/G/T suffix", v,
			    fields[1]);
	ns->lba_size = 512;
	if (nf >= 3 && *fields[2]) {
		if (parse_u32_range(fields[2], 0, UINT32_MAX, &ns->lba_size))
			return fail(pc, "ns=%s: LBA size '%s' is not a number", v, fields[2]);
	}
	if (nf >= 4) {
		if (ns->kind != EMU_NS_FILE && ns->kind != EMU_NS_KV)
			return fail(pc, "ns=%s: a path is only allowed for file and kv namespaces", v);
		if (strlen(fields[3]) >= sizeof(ns->path))
			return fail(pc, "ns=%s: path too long", v);
		snprintf(ns->path, sizeof(ns->path), "%s", fields[3]);
	}
	return 0;
}

static int check_ns(const struct parse_ctx *pc, const struct emu_ns_params *ns, uint32_t nsid)
{
	if (ns->lba_size != 512 && ns->lba_size != 4096)
		return fail(pc, "LBA size %" PRIu32 " is not 512 or 4096", ns->lba_size);
	/* a KV namespace presents itself with 512-byte sectors, like Samsung's KV SSDs */
	if (ns->kind == EMU_NS_KV && ns->lba_size != 512)
		return fail(pc, "namespace %" PRIu32 ": a kv namespace has 512-byte sectors (leave the field empty)",
			    nsid);
	if (ns->kind == EMU_NS_FILE && !ns->path[0])
		return fail(pc, "namespace %" PRIu32 ": a file namespace needs a path", nsid);
	if (ns->size_bytes == 0 && ns->kind != EMU_NS_FILE)
		return fail(pc, "namespace %" PRIu32 ": size of a %s namespace must not be 0", nsid,
			    kind_name(ns->kind));
	if (ns->size_bytes % ns->lba_size)
		return fail(pc, "namespace %" PRIu32 ": size %" PRIu64 " is not a multiple of the LBA size %" PRIu32,
			    nsid, ns->size_bytes, ns->lba_size);
	return 0;
}

/* ---- the whole URI ---- */

enum key_id {
	K_NS, K_TYPE, K_SIZE, K_LBA, K_FILE, K_MODE, K_CPU, K_ENGINE, K_RLAT, K_WLAT, K_UNITS, K_BW,
	K_QUEUES, K_MQES, K_DSTRD, K_SERIAL, K_MODEL, K_FW, K_STATE, K_COUNT
};

static const char *const key_names[K_COUNT] = {
	[K_NS] = "ns", [K_TYPE] = "type", [K_SIZE] = "size", [K_LBA] = "lba", [K_FILE] = "file",
	[K_MODE] = "mode", [K_CPU] = "cpu", [K_ENGINE] = "engine", [K_RLAT] = "rlat",
	[K_WLAT] = "wlat", [K_UNITS] = "units", [K_BW] = "bw", [K_QUEUES] = "queues",
	[K_MQES] = "mqes", [K_DSTRD] = "dstrd", [K_SERIAL] = "serial", [K_MODEL] = "model",
	[K_FW] = "fw", [K_STATE] = "state",
};

struct shorthand {
	enum emu_ns_kind kind;
	uint64_t size;
	uint32_t lba;
	char file[PATH_MAX];
};

static int apply_key(const struct parse_ctx *pc, enum key_id k, const char *v, struct emu_params *p,
		     struct shorthand *sh)
{
	uint64_t u64;
	switch (k) {
	case K_NS:
		if (p->nr_ns >= EMU_MAX_NS)
			return fail(pc, "more than %u namespaces", EMU_MAX_NS);
		return parse_ns_value(pc, v, &p->ns[p->nr_ns++]);
	case K_TYPE:
		if (parse_kind(v, &sh->kind))
			return fail(pc, "type=%s: not mem, null, file or kv", v);
		return 0;
	case K_SIZE:
		if (parse_size(v, &sh->size))
			return fail(pc, "size=%s: not a number with an optional K/M/G/T suffix", v);
		return 0;
	case K_LBA:
		if (parse_u32_range(v, 0, UINT32_MAX, &sh->lba))
			return fail(pc, "lba=%s: not a number", v);
		return 0;
	case K_FILE:
		if (!*v || strlen(v) >= sizeof(sh->file))
			return fail(pc, "file=%s: empty or too long", v);
		snprintf(sh->file, sizeof(sh->file), "%s", v);
		return 0;
	case K_MODE:
		if (!strcmp(v, "inline"))
			p->mode = EMU_MODE_INLINE;
		else if (!strcmp(v, "thread"))
			p->mode = EMU_MODE_THREAD;
		else
			return fail(pc, "mode=%s: not inline or thread", v);
		return 0;
	case K_CPU: {
		uint32_t cpu;
		if (parse_u32_range(v, 0, CPU_SETSIZE - 1, &cpu))
			return fail(pc, "cpu=%s: not a CPU number below %d", v, CPU_SETSIZE);
		p->engine_cpu = (int)cpu;
		return 0;
	}
	case K_ENGINE:
		if (parse_u32_range(v, 0, EMU_MAX_ENGINES - 1, &p->engine))
			return fail(pc, "engine=%s: not an engine index 0..%u", v, EMU_MAX_ENGINES - 1);
		return 0;
	case K_RLAT:
		if (parse_duration(v, &p->lat.read_ns))
			return fail(pc, "rlat=%s: not a duration like 500ns, 80us or 1ms", v);
		return 0;
	case K_WLAT:
		if (parse_duration(v, &p->lat.write_ns))
			return fail(pc, "wlat=%s: not a duration like 500ns, 80us or 1ms", v);
		return 0;
	case K_UNITS:
		if (parse_u32_range(v, 0, EMU_MAX_UNITS, &p->lat.units))
			return fail(pc, "units=%s: not a number 0..%u", v, EMU_MAX_UNITS);
		return 0;
	case K_BW:
		if (parse_size(v, &u64))
			return fail(pc, "bw=%s: not bytes per second with an optional K/M/G/T suffix", v);
		p->lat.bw_bytes_per_s = u64;
		return 0;
	case K_QUEUES:
		if (parse_u32_range(v, 1, EMU_MAX_QUEUES_LIMIT, &p->max_queues))
			return fail(pc, "queues=%s: not a number 1..%u", v, EMU_MAX_QUEUES_LIMIT);
		return 0;
	case K_MQES:
		if (parse_u32_range(v, 2, MAX_MQES, &p->mqes))
			return fail(pc, "mqes=%s: not a number 2..%u", v, MAX_MQES);
		return 0;
	case K_DSTRD:
		if (parse_u32_range(v, 0, MAX_DSTRD, &p->dstrd))
			return fail(pc, "dstrd=%s: not a number 0..%u", v, MAX_DSTRD);
		return 0;
	case K_SERIAL:
		if (!*v || strlen(v) >= sizeof(p->serial) || !printable_ascii(v))
			return fail(pc, "serial=%s: must be 1..20 printable ASCII characters", v);
		snprintf(p->serial, sizeof(p->serial), "%s", v);
		return 0;
	case K_MODEL:
		if (!*v || strlen(v) >= sizeof(p->model) || !printable_ascii(v))
			return fail(pc, "model=%s: must be 1..40 printable ASCII characters", v);
		snprintf(p->model, sizeof(p->model), "%s", v);
		return 0;
	case K_FW:
		if (!*v || strlen(v) >= sizeof(p->firmware) || !printable_ascii(v) || *v == ' ')
			return fail(pc, "fw=%s: must be 1..8 printable ASCII characters", v);
		snprintf(p->firmware, sizeof(p->firmware), "%s", v);
		return 0;
	case K_STATE:
		if (strlen(v) >= sizeof(p->state_path))
			return fail(pc, "state=%s: path too long", v);
		snprintf(p->state_path, sizeof(p->state_path), "%s", v);
		return 0;
	case K_COUNT:
		break;
	}
	return fail(pc, "internal: unhandled key");
}

static void derive_identity(struct emu_params *p)
{
	if (!p->serial[0]) {
		/* Stable across runs: a file-backed device is named by its file, others by name. */
		char src[PATH_MAX + 8];
		const struct emu_ns_params *file_ns = NULL;
		for (uint32_t i = 0; i < p->nr_ns && !file_ns; i++)
			if (p->ns[i].kind == EMU_NS_FILE)
				file_ns = &p->ns[i];
		if (file_ns) {
			char real[PATH_MAX];
			const char *path = realpath(file_ns->path, real) ? real : file_ns->path;
			snprintf(src, sizeof(src), "file:%s", path);
		} else {
			snprintf(src, sizeof(src), "name:%s", p->name);
		}
		uint64_t h = mix64(fnv1a(FNV_OFFSET, src, strlen(src)));
		snprintf(p->serial, sizeof(p->serial), "EMU%016" PRIX64, h);
	}
	if (!p->model[0])
		snprintf(p->model, sizeof(p->model), "%s", EMU_MODEL_DEFAULT);
	if (!p->firmware[0])
		snprintf(p->firmware, sizeof(p->firmware), "%s", EMU_FW_DEFAULT);

	for (uint32_t i = 0; i < p->nr_ns; i++) {
		uint32_t nsid = i + 1;
		uint64_t h = fnv1a(FNV_OFFSET, p->serial, strlen(p->serial));
		h = fnv1a(h, &nsid, sizeof(nsid));
		uint64_t a = mix64(h), b = mix64(h ^ 0x5bd1e995u), e = mix64(h ^ 0xe7037ed1a0b428dbull);
		memcpy(p->ns[i].nguid, &a, 8);
		memcpy(p->ns[i].nguid + 8, &b, 8);
		/* EUI-64: a company id (the vendor id's bytes) then a per-namespace extension */
		p->ns[i].eui64[0] = 0x00;
		p->ns[i].eui64[1] = 0xc0;
		p->ns[i].eui64[2] = 0xde;
		memcpy(p->ns[i].eui64 + 3, &e, 5);
	}
}

int emu_params_parse(const char *uri, struct emu_params *p, char *err, size_t errlen)
{
	struct parse_ctx pc = { .uri = uri ? uri : "(null)", .err = err, .errlen = errlen };
	if (err && errlen)
		err[0] = '\0';
	memset(p, 0, sizeof(*p));
	p->mode = EMU_MODE_INLINE;
	p->engine_cpu = -1;
	p->max_queues = DEFAULT_QUEUES;
	p->mqes = DEFAULT_MQES;

	if (!uri || strncmp(uri, URI_PREFIX, strlen(URI_PREFIX)))
		return fail(&pc, "does not start with " URI_PREFIX);
	const char *s = uri + strlen(URI_PREFIX);
	const char *q = strchr(s, '?');
	size_t name_len = q ? (size_t)(q - s) : strlen(s);
	if (name_len >= sizeof(p->name))
		return fail(&pc, "device name longer than %zu characters", sizeof(p->name) - 1);
	for (size_t i = 0; i < name_len; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (!isalnum(ch) && ch != '-' && ch != '_' && ch != '.')
			return fail(&pc, "device name '%.*s' may hold only letters, digits, '-', '_' and '.'",
				    (int)name_len, s);
	}
	if (name_len)
		memcpy(p->name, s, name_len);
	else
		snprintf(p->name, sizeof(p->name), "emu");

	bool seen[K_COUNT] = { false };
	struct shorthand sh = { .kind = EMU_NS_MEM, .size = 0, .lba = 512 };
	bool mode_given = false, state_given = false;

	const char *item = q ? q + 1 : NULL;
	if (item && !*item)
		return fail(&pc, "nothing after '?' (leave the '?' out for the defaults)");
	while (item) {
		const char *amp = strchr(item, '&');
		size_t len = amp ? (size_t)(amp - item) : strlen(item);
		const char *next = amp ? amp + 1 : NULL;
		if (len == 0)
			return fail(&pc, "empty parameter (an '&' at the start or end, or two in a row)");
		const char *eq = memchr(item, '=', len);
		if (!eq)
			return fail(&pc, "'%.*s' is not key=value", (int)(len < 64 ? len : 64), item);
		size_t klen = (size_t)(eq - item);
		if (klen == 0)
			return fail(&pc, "empty key in '%.*s'", (int)(len < 64 ? len : 64), item);
		enum key_id k = K_COUNT;
		for (int i = 0; i < K_COUNT; i++)
			if (strlen(key_names[i]) == klen && !strncmp(key_names[i], item, klen))
				k = (enum key_id)i;
		if (k == K_COUNT)
			return fail(&pc, "unknown key '%.*s'", (int)(klen < 64 ? klen : 64), item);
		if (seen[k] && k != K_NS)
			return fail(&pc, "key '%s' given more than once", key_names[k]);
		seen[k] = true;
		char val[MAX_VALUE_LEN];
		if (percent_decode(eq + 1, len - klen - 1, val, sizeof(val)))
			return fail(&pc, "%s=%.*s%s: bad %%-escape or value too long", key_names[k],
				    (int)(len - klen - 1 < 64 ? len - klen - 1 : 64), eq + 1,
				    len - klen - 1 > 64 ? "..." : "");
		int rc = apply_key(&pc, k, val, p, &sh);
		if (rc)
			return rc;
		if (k == K_MODE)
			mode_given = true;
		if (k == K_STATE)
			state_given = true;
		item = next;
	}

	bool shorthand = seen[K_TYPE] || seen[K_SIZE] || seen[K_LBA] || seen[K_FILE];
	if (p->nr_ns && shorthand)
		return fail(&pc, "ns= cannot be combined with type=, size=, lba= or file=");
	if (!p->nr_ns) {
		struct emu_ns_params *ns = &p->ns[0];
		p->nr_ns = 1;
		if (!seen[K_TYPE] && seen[K_FILE])
			sh.kind = EMU_NS_FILE;
		if (seen[K_FILE] && sh.kind != EMU_NS_FILE && sh.kind != EMU_NS_KV)
			return fail(&pc, "file= needs type=file or type=kv");
		ns->kind = sh.kind;
		ns->size_bytes = seen[K_SIZE] ? sh.size : (sh.kind == EMU_NS_FILE ? 0 : DEFAULT_NS_SIZE);
		ns->lba_size = sh.lba;
		snprintf(ns->path, sizeof(ns->path), "%s", sh.file);
	}
	for (uint32_t i = 0; i < p->nr_ns; i++) {
		int rc = check_ns(&pc, &p->ns[i], i + 1);
		if (rc)
			return rc;
	}

	bool latency = p->lat.read_ns || p->lat.write_ns || p->lat.units || p->lat.bw_bytes_per_s;
	if (latency && mode_given && p->mode == EMU_MODE_INLINE)
		return fail(&pc, "the latency model (rlat, wlat, units, bw) needs mode=thread");
	if (latency)
		p->mode = EMU_MODE_THREAD;
	if (p->mode == EMU_MODE_INLINE && (seen[K_CPU] || seen[K_ENGINE]))
		return fail(&pc, "cpu= and engine= apply to mode=thread only");

	if (!state_given) {
		for (uint32_t i = 0; i < p->nr_ns; i++) {
			if (p->ns[i].kind != EMU_NS_FILE)
				continue;
			size_t n = strlen(p->ns[i].path);
			if (n + sizeof(".ctrl") > sizeof(p->state_path))
				return fail(&pc, "file path too long to derive the state file name");
			memcpy(p->state_path, p->ns[i].path, n);
			memcpy(p->state_path + n, ".ctrl", sizeof(".ctrl"));
			break;
		}
	}
	derive_identity(p);
	return 0;
}
