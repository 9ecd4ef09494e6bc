/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kv_nvme's option parser, with the rules of the original's (nvme-cli's argconfig on
 * getopt_long): "--name=VALUE", "--name VALUE", "-x VALUE", "-xVALUE", flags grouped ("-wt"),
 * options and the device in any order, "--" ending the options. Every error names the
 * command, the option and the value, and exits 2.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv_nvme.h"

int kvn_usage_error(const char *cmd, const char *fmt, ...)
{
	fprintf(stderr, KVN_PROG ": %s: ", cmd);
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see " KVN_PROG " %s --help)\n", cmd);
	return KVT_EXIT_USAGE;
}

static void help(const struct kvn_cmd *cmd, const struct kvn_opt *opts)
{
	printf("usage: " KVN_PROG " %s%s [OPTIONS]\n\n%s\n\n", cmd->name,
	       cmd->needs_device ? " <device>" : "", cmd->summary);
	if (opts[0].lname)
		printf("options:\n");
	for (const struct kvn_opt *o = opts; o->lname; o++) {
		char left[64];
		const char *meta = o->kind == KVN_FLAG ? "" : o->kind == KVN_STR ? " FILE" : " NUM";
		if (o->sname)
			snprintf(left, sizeof(left), "-%c, --%s%s", o->sname, o->lname, meta);
		else
			snprintf(left, sizeof(left), "--%s%s", o->lname, meta);
		printf("  %-28s %s\n", left, o->help);
	}
}

static int set_value(const char *cmd, const struct kvn_opt *o, const char *v)
{
	if (o->kind == KVN_STR) {
		*(const char **)o->field = v;
		return -1;
	}
	static const unsigned long long max[] = { [KVN_U8] = 0xff, [KVN_U16] = 0xffff,
						  [KVN_U32] = 0xffffffffull };
	char *end;
	errno = 0;
	unsigned long long x = strtoull(v, &end, 0);
	/* the original's guide writes "--log-id=0xc0," */
	if (*end == ',' && end[1] == '\0')
		end++;
	if (errno || end == v || *end || *v == '-' || x > max[o->kind])
		return kvn_usage_error(cmd, "invalid value '%s' for --%s (-%c): a number of at "
				       "most %llu", v, o->lname, o->sname ? o->sname : '?',
				       max[o->kind]);
	switch (o->kind) {
	case KVN_U8: *(uint8_t *)o->field = (uint8_t)x; break;
	case KVN_U16: *(uint16_t *)o->field = (uint16_t)x; break;
	default: *(uint32_t *)o->field = (uint32_t)x; break;
	}
	return -1;
}

static const struct kvn_opt *by_long(const struct kvn_opt *opts, const char *name, size_t len)
{
	for (const struct kvn_opt *o = opts; o->lname; o++)
		if (strlen(o->lname) == len && strncmp(o->lname, name, len) == 0)
			return o;
	return NULL;
}

static const struct kvn_opt *by_short(const struct kvn_opt *opts, char c)
{
	for (const struct kvn_opt *o = opts; o->lname; o++)
		if (o->sname == c)
			return o;
	return NULL;
}

static void mark(const struct kvn_opt *o)
{
	if (o->given)
		*o->given = true;
	if (o->kind == KVN_FLAG)
		*(bool *)o->field = true;
}

int kvn_parse(const struct kvn_cmd *cmd, int argc, char **argv, const struct kvn_opt *opts,
	      const char **device)
{
	*device = NULL;
	const char *name = cmd->name;
	bool options_done = false;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (options_done || a[0] != '-' || a[1] == '\0') {
			if (*device)
				return kvn_usage_error(name, "unexpected argument '%s' (the device is "
						       "'%s')", a, *device);
			*device = a;
			continue;
		}
		if (strcmp(a, "--") == 0) {
			options_done = true;
			continue;
		}
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			help(cmd, opts);
			return KVT_EXIT_OK;
		}
		if (a[1] == '-') {
			const char *n = a + 2;
			size_t len = strcspn(n, "=");
			const struct kvn_opt *o = by_long(opts, n, len);
			if (!o)
				return kvn_usage_error(name, "unknown option '%s'", a);
			mark(o);
			if (o->kind == KVN_FLAG) {
				if (n[len] == '=')
					return kvn_usage_error(name, "--%s takes no value", o->lname);
				continue;
			}
			const char *v = n[len] == '=' ? n + len + 1 : NULL;
			if (!v) {
				if (i + 1 >= argc)
					return kvn_usage_error(name, "--%s needs a value", o->lname);
				v = argv[++i];
			}
			int rc = set_value(name, o, v);
			if (rc >= 0)
				return rc;
			continue;
		}
		/* short options, flags grouped; a value option takes the rest or the next word */
		for (const char *p = a + 1; *p; p++) {
			const struct kvn_opt *o = by_short(opts, *p);
			if (!o)
				return kvn_usage_error(name, "unknown option '-%c'", *p);
			mark(o);
			if (o->kind == KVN_FLAG)
				continue;
			const char *v = p[1] ? p + 1 : NULL;
			if (!v) {
				if (i + 1 >= argc)
					return kvn_usage_error(name, "-%c needs a value", *p);
				v = argv[++i];
			}
			int rc = set_value(name, o, v);
			if (rc >= 0)
				return rc;
			break;
		}
	}
	if (cmd->needs_device && !*device)
		return kvn_usage_error(name, "no device given (for example 0000:02:00.0, emu0 or an "
				       "emu:// URI)");
	return -1;
}
