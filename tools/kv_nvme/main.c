/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kv_nvme's command table, help and version, and the dispatch. The commands are the
 * original's: admin commands (list, id-ctrl, list-ctrl, get-log, smart-log, format,
 * fw-download, reset), the key-value commands (write, read, delete, exist, open-it, read-it,
 * close-it, list-it), version and help.
 */
#include <stdio.h>
#include <string.h>

#include "kv_nvme.h"
#include "unvme/unvme.h"

static const struct kvn_cmd commands[] = {
	{ "list", "List all NVMe devices and namespaces on machine", "", kvn_list, false },
	{ "id-ctrl", "Send NVMe Identify Controller",
	  "[--raw-binary=<file> | -b <file>] [--output-format=<fmt> | -o <fmt>]", kvn_id_ctrl, true },
	{ "list-ctrl", "Send NVMe Identify Controller List, display structure",
	  "[--cntid=<id> | -c <id>] [--namespace-id=<nsid> | -n <nsid>]", kvn_list_ctrl, true },
	{ "get-log", "Generic NVMe get log, returns log in raw format",
	  "[--log-id=<log-id> | -i <log-id>] [--log-len=<log-len> | -l <log-len>]"
	  " [--raw-binary=<file> | -b <file>]", kvn_get_log, true },
	{ "smart-log", "Retrieve SMART Log, show it",
	  "[--output-format=<fmt> | -o <fmt>] [--raw-binary=<file> | -b <file>]", kvn_smart_log,
	  true },
	{ "format", "Format namespace with new block format",
	  "[--ses=<ses> | -s <ses>] (Secure Erase Settings, 1: default, 0: no secure erase)",
	  kvn_format, true },
	{ "fw-download", "Download new firmware then activate the new firmware",
	  "[--fw=<firmware-file> | -f <firmware-file>] [--xfer=<transfer-size> | -x <size>]"
	  " [--offset=<offset> | -o <offset>]", kvn_fw_download, true },
	{ "list-it", "List all iterators on a given NVMe device", "", kvn_list_it, true },
	{ "reset", "Resets the controller", "", kvn_reset, true },
	{ "write", "Submit a write command",
	  "-k <key> [-l <key-len>] -v <value-file> -s <value-size> [-o <value-offset>]"
	  " [-i <io-option>] [-n <namespace>] [-w] [-d] [-t] [-a]", kvn_io, true },
	{ "read", "Submit a read command",
	  "-k <key> [-l <key-len>] -s <value-size> [-v <value-file>] [-o <value-offset>]"
	  " [-i <io-option>] [-n <namespace>] [-w] [-d] [-t] [-a]", kvn_io, true },
	{ "delete", "Submit a delete command",
	  "-k <key> [-l <key-len>] [-i <io-option>] [-n <namespace>] [-w] [-d] [-t] [-a]", kvn_io,
	  true },
	{ "exist", "Submit a exist command",
	  "-k <key> [-l <key-len>] [-i <io-option>] [-n <namespace>] [-w] [-d] [-t] [-a]", kvn_io,
	  true },
	{ "open-it", "Open a new iterator",
	  "[-p <prefix>] [-b <bitmask>] [-n <namespace>] [-i <iterate_type>] [-w] [-t]",
	  kvn_open_it, true },
	{ "read-it", "Reads keys or a key/value pair with the given iterator",
	  "-i <iterator-id> [-s <value-size>] [-v <value-file>] [-w] [-t] [-a]", kvn_read_it, true },
	{ "close-it", "Close an opened iterator", "-i <iterator-id> [-w] [-t]", kvn_close_it, true },
};

#define NCMDS (sizeof(commands) / sizeof(commands[0]))

static void general_help(void)
{
	printf(KVN_PROG "-%s\nusage: " KVN_PROG " <command> [<device>] [<args>]\n\n"
	       "The '<device>' is a PCI address (ex: 0000:02:00.0), an alias or an emu:// URI\n"
	       "(docs/devices.md); a PCI address may name an emulated device through an alias.\n\n"
	       "commands:\n", unvme_version());
	for (size_t i = 0; i < NCMDS; i++)
		printf("  %-15s %s\n", commands[i].name, commands[i].summary);
	printf("  %-15s %s\n  %-15s %s\n\n", "version", "Shows the program version", "help",
	       "Display this help");
	printf("examples (the original's guide):\n"
	       "  " KVN_PROG " get-log 0000:02:00.0 --log-id=0xc0, --log-len=512\n"
	       "  " KVN_PROG " write 0000:02:00.0 -k keyvalue12345678 -l 16 -v value.txt -o 0 -s 4096 -a -w -t\n"
	       "  " KVN_PROG " read 0000:02:00.0 -k keyvalue12345678 -l 16 -s 4096 -v output.txt -t -w\n"
	       "  " KVN_PROG " exist 0000:02:00.0 -k keyvalue12345678 -l 16 -t -w\n"
	       "  " KVN_PROG " open-it 0000:02:00.0 -p 0x30303030 -i 2\n"
	       "  " KVN_PROG " read-it 0000:02:00.0 -i 1 -w\n"
	       "  " KVN_PROG " close-it 0000:02:00.0 -i 1\n"
	       "  " KVN_PROG " fw-download 0000:02:00.0 --fw=EHA50K0F_ENC.bin\n\n"
	       "See '" KVN_PROG " help <command>' for the options of a command.\n"
	       "exit codes: 0 success, 1 the device answered with an error status, 2 usage error,\n"
	       "3 the device could not be opened or a host-side failure\n");
}

static const struct kvn_cmd *find(const char *name)
{
	for (size_t i = 0; i < NCMDS; i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		general_help();
		return KVT_EXIT_OK;
	}
	/* --help and --version are the commands, as in the original */
	const char *name = argv[1];
	while (*name == '-')
		name++;
	if (strcmp(name, "help") == 0) {
		if (argc < 3) {
			general_help();
			return KVT_EXIT_OK;
		}
		const struct kvn_cmd *c = find(argv[2]);
		if (!c) {
			fprintf(stderr, KVN_PROG ": help: no command '%s' (see " KVN_PROG " help)\n",
				argv[2]);
			return KVT_EXIT_USAGE;
		}
		char *help_argv[] = { "--help" };
		return c->fn(c, 1, help_argv);
	}
	if (strcmp(name, "version") == 0) {
		printf(KVN_PROG " version %s\n", unvme_version());
		return KVT_EXIT_OK;
	}
	const struct kvn_cmd *c = find(name);
	if (!c) {
		fprintf(stderr, KVN_PROG ": invalid sub-command '%s' (see " KVN_PROG " help)\n",
			argv[1]);
		return KVT_EXIT_USAGE;
	}
	return c->fn(c, argc - 2, argv + 2);
}
