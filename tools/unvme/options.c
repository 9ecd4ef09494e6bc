/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Command-line parsing driven by each command's option table: long options (--name value,
 * --name=value), short options (-x value, -xvalue), one positional argument and "--".
 * A hand-written parser rather than getopt_long so that every error names the option and the
 * value, nothing depends on global state (batch parses many command lines in one process), and
 * defaults live in the same table as the options.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

bool cli_parse_u64(const char *s, uint64_t *out)
{
	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return false;
	int base = 10;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
		if (!*s)
			return false;
	}
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, base);
	if (errno || *end)
		return false;
	*out = v;
	return true;
}

bool cli_parse_size(const char *s, uint64_t *out)
{
	if (!s || !*s || *s == '-' || *s == '+')
		return false;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || end == s)
		return false;
	unsigned shift = 0;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default: break;
	}
	/* accept "4k", "4KiB", "4KB" alike */
	if (shift && (strcmp(end, "iB") == 0 || strcmp(end, "B") == 0))
		end += strlen(end);
	if (*end)
		return false;
	if (shift && v > (UINT64_MAX >> shift))
		return false;
	*out = (uint64_t)v << shift;
	return true;
}

bool cli_given(const struct cli_args *a, const char *long_name)
{
	for (unsigned i = 0; i < a->ngiven; i++)
		if (strcmp(a->given[i], long_name) == 0)
			return true;
	return false;
}

static void describe_opt(const struct opt_def *o, char *buf, size_t len)
{
	if (o->short_name)
		snprintf(buf, len, "--%s (-%c)", o->name, o->short_name);
	else
		snprintf(buf, len, "--%s", o->name);
}

/* Stores one option value into its field. */
static int set_value(struct cli_args *a, const struct opt_def *o, const char *val)
{
	void *field = (char *)a + o->offset;
	char name[64];
	describe_opt(o, name, sizeof(name));
	uint64_t v = 0, max = 0;

	switch (o->kind) {
	case OPT_FLAG:
		*(bool *)field = true;
		return EXIT_OK;
	case OPT_STR:
		*(const char **)field = val;
		return EXIT_OK;
	case OPT_STR_LIST:
		if (a->perf_ndevs >= CLI_MAX_LIST)
			return cli_fail(a->cmd, EXIT_USAGE, "%s given more than %d times", name,
					CLI_MAX_LIST);
		a->perf_devs[a->perf_ndevs++] = val;
		return EXIT_OK;
	case OPT_FMT:
		if (strcmp(val, "normal") == 0 || strcmp(val, "text") == 0)
			a->fmt = UNVME_FMT_TEXT;
		else if (strcmp(val, "json") == 0)
			a->fmt = UNVME_FMT_JSON;
		else if (strcmp(val, "binary") == 0) {
			/* nvme-cli's third format: the raw structure, as -b gives it */
			a->fmt = UNVME_FMT_TEXT;
			a->raw_binary = true;
		} else
			return cli_fail(a->cmd, EXIT_USAGE,
					"invalid value '%s' for %s: expected normal, json or binary",
					cli_echo(val), name);
		return EXIT_OK;
	case OPT_SIZE:
		if (!cli_parse_size(val, &v))
			return cli_fail(a->cmd, EXIT_USAGE,
					"invalid value '%s' for %s: expected a byte count such as 4096 "
					"or 4k", cli_echo(val), name);
		*(uint64_t *)field = v;
		return EXIT_OK;
	case OPT_U8: max = UINT8_MAX; break;
	case OPT_U16: max = UINT16_MAX; break;
	case OPT_U32: max = UINT32_MAX; break;
	case OPT_U64: max = UINT64_MAX; break;
	}
	if (!cli_parse_u64(val, &v))
		return cli_fail(a->cmd, EXIT_USAGE,
				"invalid value '%s' for %s: expected a number (decimal or 0x hex)",
				cli_echo(val), name);
	if (v > max)
		return cli_fail(a->cmd, EXIT_USAGE, "value '%s' for %s is out of range (0..%llu)",
				cli_echo(val), name, (unsigned long long)max);
	switch (o->kind) {
	case OPT_U8: *(uint8_t *)field = (uint8_t)v; break;
	case OPT_U16: *(uint16_t *)field = (uint16_t)v; break;
	case OPT_U32: *(uint32_t *)field = (uint32_t)v; break;
	default: *(uint64_t *)field = v; break;
	}
	return EXIT_OK;
}

static const struct opt_def *find_long(const struct opt_def *opts, const char *name, size_t len)
{
	for (const struct opt_def *o = opts; o && o->name; o++)
		if (strlen(o->name) == len && strncmp(o->name, name, len) == 0)
			return o;
	return NULL;
}

static const struct opt_def *find_short(const struct opt_def *opts, char c)
{
	for (const struct opt_def *o = opts; o && o->name; o++)
		if (o->short_name == c)
			return o;
	return NULL;
}

static void note_given(struct cli_args *a, const struct opt_def *opts, const struct opt_def *o)
{
	/* an alias counts as the first option of the table on its field */
	for (const struct opt_def *p = opts; p && p->name; p++)
		if (p->offset == o->offset && p->kind == o->kind) {
			o = p;
			break;
		}
	if (!cli_given(a, o->name) && a->ngiven < sizeof(a->given) / sizeof(a->given[0]))
		a->given[a->ngiven++] = o->name;
}

int cli_parse(const struct cli_cmd *c, int argc, char **argv, struct cli_args *a)
{
	memset(a, 0, sizeof(*a));
	a->cmd = c->name;
	for (const struct opt_def *o = c->opts; o && o->name; o++)
		if (o->def) {
			int rc = set_value(a, o, o->def);
			if (rc)
				return rc; /* a bad default is a bug in the table; say so loudly */
		}

	bool options_done = false;
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		const struct opt_def *o = NULL;
		const char *val = NULL;
		bool inline_val = false;

		if (!options_done && strcmp(arg, "--") == 0) {
			options_done = true;
			continue;
		}
		if (!options_done && (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0)) {
			a->help = true;
			continue;
		}
		/* nvme-cli's -v/--verbose, on every command whose table does not use -v itself:
		 * the library's notices go to stderr (cli_run turns its log on) */
		if (!options_done && ((strcmp(arg, "-v") == 0 && !find_short(c->opts, 'v')) ||
				      (strcmp(arg, "--verbose") == 0 && !find_long(c->opts, "verbose", 7)))) {
			a->verbose = true;
			continue;
		}
		if (!options_done && arg[0] == '-' && arg[1] == '-') {
			const char *name = arg + 2;
			const char *eq = strchr(name, '=');
			size_t len = eq ? (size_t)(eq - name) : strlen(name);
			o = find_long(c->opts, name, len);
			if (!o)
				return cli_fail(c->name, EXIT_USAGE,
						"unknown option '%.*s%s' (see 'unvme %s --help')",
						(int)(len + 2 > CLI_ECHO_MAX ? CLI_ECHO_MAX : len + 2), arg,
						len + 2 > CLI_ECHO_MAX ? "..." : "", c->name);
			if (eq) {
				val = eq + 1;
				inline_val = true;
			}
		} else if (!options_done && arg[0] == '-' && arg[1] != '\0') {
			o = find_short(c->opts, arg[1]);
			if (!o)
				return cli_fail(c->name, EXIT_USAGE,
						"unknown option '-%c' (see 'unvme %s --help')", arg[1],
						c->name);
			if (arg[2]) {
				val = arg + 2;
				inline_val = true;
			}
		} else {
			if (c->pos == POS_NONE || a->positional)
				return cli_fail(c->name, EXIT_USAGE, "unexpected argument '%s'%s", cli_echo(arg),
						a->positional ? " (only one positional argument)" : "");
			a->positional = arg;
			continue;
		}

		char name[64];
		describe_opt(o, name, sizeof(name));
		if (o->kind == OPT_FLAG) {
			if (inline_val)
				return cli_fail(c->name, EXIT_USAGE, "option %s takes no value (got '%s')",
						name, cli_echo(val));
		} else if (!inline_val) {
			if (i + 1 >= argc)
				return cli_fail(c->name, EXIT_USAGE, "option %s needs a value (%s)", name,
						o->metavar ? o->metavar : "VALUE");
			val = argv[++i];
		}
		int rc = set_value(a, o, val);
		if (rc)
			return rc;
		note_given(a, c->opts, o);
	}

	if (a->help)
		return EXIT_OK;
	if (a->raw_binary && !find_long(c->opts, "raw-binary", 10))
		return cli_fail(c->name, EXIT_USAGE,
				"invalid value 'binary' for --output-format (-o): %s has no binary output "
				"(normal or json)", c->name);
	for (const struct opt_def *o = c->opts; o && o->name; o++) {
		if (o->required && !cli_given(a, o->name)) {
			char name[64];
			describe_opt(o, name, sizeof(name));
			return cli_fail(c->name, EXIT_USAGE, "option %s is required (see 'unvme %s --help')",
					name, c->name);
		}
	}
	if (c->pos == POS_DEVICE && !a->positional)
		a->positional = cli_default_device;
	return EXIT_OK;
}
