/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * unvme: nvme-cli style management and benchmark tool for uNVMe devices.
 *   unvme <command> [<device>] [options]
 * Finds the command in the table, parses its options, runs it, and closes every device it
 * opened (a normal shutdown, so file-backed emulated devices do not count an unsafe one).
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#ifndef UNVME_VERSION
#define UNVME_VERSION "unknown"
#endif

const char *cli_default_device = CLI_DEFAULT_DEVICE;

int cli_run(int argc, char **argv)
{
	if (argc < 1)
		return EXIT_USAGE;
	const char *name = argv[0];
	if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
		cli_print_usage(stdout);
		return EXIT_OK;
	}
	if (strcmp(name, "--version") == 0)
		name = "version";
	/* for the build (man pages) and the tests, not listed in the help */
	if (strcmp(name, "--man-scdoc") == 0) {
		if (argc != 2)
			return cli_fail(name, EXIT_USAGE, "usage: unvme --man-scdoc GROUP");
		return cli_print_scdoc(stdout, argv[1]);
	}
	if (strcmp(name, "--man-groups") == 0)
		return cli_print_man_groups(stdout);
	const struct cli_raw_cmd *r = cli_find_raw(name);
	if (r) {
		if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
			printf("unvme %s: %s\n\n%s", r->name, r->summary, r->details);
			return EXIT_OK;
		}
		return r->run(argc, argv);
	}
	/* "zns report-zones ..." is "zns-report-zones ..." (nvme-cli's plugin form) */
	char plugin_cmd[64];
	char **args = argv;
	char *shifted[argc > 1 ? argc - 1 : 1];
	if (strcmp(name, "zns") == 0 && argc > 1 && argv[1][0] != '-') {
		snprintf(plugin_cmd, sizeof(plugin_cmd), "zns-%s", argv[1]);
		name = plugin_cmd;
		shifted[0] = plugin_cmd;
		for (int i = 2; i < argc; i++)
			shifted[i - 1] = argv[i];
		argc--;
		args = shifted;
	}
	const struct cli_cmd *c = cli_find_command(name);
	if (!c)
		return cli_fail(name, EXIT_USAGE, "unknown command (see 'unvme help')");

	struct cli_args *a = calloc(1, sizeof(*a));
	if (!a)
		return cli_fail(name, EXIT_HOST, "out of memory");
	int rc = cli_parse(c, argc, args, a);
	if (rc == EXIT_OK && a->help)
		cli_print_command_help(stdout, c);
	else if (rc == EXIT_OK) {
		if (a->verbose)
			unvme_set_log(1);
		rc = c->run(a);
	}
	fflush(stdout);
	free(a);
	return rc;
}

int cmd_help(struct cli_args *a)
{
	if (!a->positional) {
		cli_print_usage(stdout);
		return EXIT_OK;
	}
	const struct cli_raw_cmd *r = cli_find_raw(a->positional);
	if (r) {
		printf("unvme %s: %s\n\n%s", r->name, r->summary, r->details);
		return EXIT_OK;
	}
	const struct cli_cmd *c = cli_find_command(a->positional);
	if (!c)
		return cli_fail("help", EXIT_USAGE, "unknown command '%s'", cli_echo(a->positional));
	cli_print_command_help(stdout, c);
	return EXIT_OK;
}

int cmd_version(struct cli_args *a)
{
	printf("unvme %s\n", UNVME_VERSION);
	printf("library: libunvme %s\n", unvme_version());
	printf("build: %s\n", unvme_build_options());
	return EXIT_OK;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		cli_print_usage(stderr);
		return EXIT_USAGE;
	}
	int rc = cli_run(argc - 1, argv + 1);
	cli_close_all();
	return rc;
}
