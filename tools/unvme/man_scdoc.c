/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The man pages' command sections, written from the command table itself (names, summaries,
 * details, options and defaults) so a man page never lists an option the tool lacks or misses
 * one it has. The build runs `unvme --man-scdoc GROUP` and puts the output into the group's
 * page (tools/unvme/man/); the rest of each page is written by hand next to it.
 */
#include <string.h>

#include "cli.h"

/* Which page documents which commands. "unvme" is the main page, unvme(1). */
static const struct man_group {
	const char *name;
	const char *commands[16];
} groups[] = {
	{ "unvme", { "list", "devices", "batch", "serve", "help", "version" } },
	{ "identify", { "id-ctrl", "id-ns", "list-ns", "ns-descs", "ns-rescan" } },
	{ "log", { "smart-log", "error-log", "fw-log", "get-log", "effects-log", "self-test-log",
		   "sanitize-log" } },
	{ "feature", { "get-feature", "set-feature" } },
	{ "admin", { "format", "fw-download", "fw-commit", "fw-activate", "fw-image", "reset",
		     "show-regs", "device-self-test", "inject-fault", "unplug", "plug", "monitor",
		     "admin-passthru" } },
	{ "io", { "read", "write", "compare", "flush", "write-zeroes", "verify", "deallocate",
		  "io-passthru" } },
	{ "perf", { "perf" } },
	{ "kv", { "kv-write", "kv-read", "kv-delete", "kv-exist", "kv-open-it", "kv-read-it",
		  "kv-close-it", "kv-it-info" } },
	{ "zns", { "zns-id-ctrl", "zns-id-ns", "zns-report-zones", "zns-open-zone",
		   "zns-close-zone", "zns-finish-zone", "zns-reset-zone", "zns-offline-zone",
		   "zns-zone-append", "zns-changed-zone-list" } },
	{ "blobfs", { "mkfs", "fsck", "fs", "fuse" } },
	{ "fabrics", { "target", "discover", "connect", "connect-all", "disconnect" } },
};

/* Text in scdoc's inline syntax: *, _ and \ taken literally. */
static void inline_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '*' || *s == '_' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
}

/* Preformatted text (details written for --help) as a literal block: kept as it is. */
static void literal(FILE *f, const char *s)
{
	fputs("```\n", f);
	for (; *s; s++) {
		if (*s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
	if (s[-1] != '\n')
		fputc('\n', f);
	fputs("```\n\n", f);
}

static void command(FILE *f, const struct cli_cmd *c)
{
	static const char *const pos[] = {
		[POS_DEVICE] = " [_device_]", [POS_NONE] = "", [POS_FILE] = " [_file_]",
		[POS_COMMAND] = " [_command_]", [POS_ADDRESS] = " [nvme-tcp://_HOST_:_PORT_[/_NQN_]]",
	};
	fprintf(f, "## %s\n\n*unvme %s*%s [_options_]\n\n", c->name, c->name, pos[c->pos]);
	inline_text(f, c->summary);
	fputs(".\n\n", f);
	if (c->details)
		literal(f, c->details);
	for (const struct opt_def *o = c->opts; o->name; o++) {
		const char *mv = o->kind == OPT_FLAG ? NULL : (o->metavar ? o->metavar : "VALUE");
		fputc('*', f);
		if (o->short_name)
			fprintf(f, "-%c, ", o->short_name);
		fprintf(f, "--%s*", o->name);
		if (mv)
			fprintf(f, " _%s_", mv);
		fputs("\n\t", f);
		inline_text(f, o->help);
		if (o->def && o->kind != OPT_FMT)
			fprintf(f, " [default %s]", o->def);
		if (o->required)
			fputs(" (required)", f);
		fputs("\n\n", f);
	}
	if (c->opts->name)
		fputs("*-h, --help*\n\tthis help\n\n", f);
}

static void raw_command(FILE *f, const struct cli_raw_cmd *r)
{
	fprintf(f, "## %s\n\n*unvme %s* ...\n\n", r->name, r->name);
	inline_text(f, r->summary);
	fputs(".\n\n", f);
	literal(f, r->details);
}

int cli_print_scdoc(FILE *f, const char *group)
{
	for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++) {
		if (strcmp(groups[g].name, group) != 0)
			continue;
		for (const char *const *n = groups[g].commands; *n; n++) {
			const struct cli_cmd *c = cli_find_command(*n);
			const struct cli_raw_cmd *r = c ? NULL : cli_find_raw(*n);
			if (c)
				command(f, c);
			else if (r)
				raw_command(f, r);
			else
				return cli_fail("--man-scdoc", EXIT_HOST, "group %s names no command %s",
						group, *n);
		}
		return EXIT_OK;
	}
	fprintf(stderr, "unvme: --man-scdoc: unknown group '%s'; groups:", cli_echo(group));
	for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++)
		fprintf(stderr, " %s", groups[g].name);
	fputc('\n', stderr);
	return EXIT_USAGE;
}

int cli_print_man_groups(FILE *f)
{
	for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++)
		for (const char *const *n = groups[g].commands; *n; n++)
			fprintf(f, "%s %s\n", groups[g].name, *n);
	return EXIT_OK;
}
