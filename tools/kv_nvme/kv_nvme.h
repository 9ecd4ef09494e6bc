/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kv_nvme: the original SDK's nvme-cli based tool, with its commands, option letters, long
 * names and defaults (docs/kv-tools.md "kv_nvme"): admin commands through the driver
 * (include/unvme/unvme.h), key-value commands through the driver-level API of the SDK
 * (kvnvme.h), as the original's did. `unvme` keeps nvme-cli's conventions; this tool keeps
 * the original's, so a script written for either runs unchanged.
 */
#ifndef KV_NVME_TOOL_H
#define KV_NVME_TOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kv_exit.h"

#define KVN_PROG "kv_nvme"

/* One option of a command: the original's long name and letter. Numbers are read as strtoul
 * does (decimal, 0x hex, 0 octal); a trailing comma is allowed, as the original's parser let
 * the guide's "--log-id=0xc0," through. */
enum kvn_kind { KVN_FLAG, KVN_U8, KVN_U16, KVN_U32, KVN_STR };

struct kvn_opt {
	const char *lname;
	char sname;
	enum kvn_kind kind;
	void *field;          /* bool, uint8_t, uint16_t, uint32_t or const char * */
	const char *help;
	bool *given;          /* may be NULL: set when the option was on the command line */
};

struct kvn_cmd;
/* Parses the command's options; *device receives the first other word (NULL if none).
 * Returns -1 to go on, or an exit code (help printed: 0; usage error: 2, message printed). */
int kvn_parse(const struct kvn_cmd *cmd, int argc, char **argv, const struct kvn_opt *opts,
	      const char **device);
/* A usage error naming the command; returns KVT_EXIT_USAGE. */
int kvn_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

struct kvn_cmd {
	const char *name;
	const char *summary;
	const char *synopsis;  /* the options as the original's help showed them */
	int (*fn)(const struct kvn_cmd *cmd, int argc, char **argv);
	bool needs_device;
};

/* cmd_admin.c */
int kvn_list(const struct kvn_cmd *cmd, int argc, char **argv);
int kvn_id_ctrl(const struct kvn_cmd *cmd, int argc, char **argv);
int kvn_list_ctrl(const struct kvn_cmd *cmd, int argc, char **argv);
int kvn_get_log(const struct kvn_cmd *cmd, int argc, char **argv);
int kvn_smart_log(const struct kvn_cmd *cmd, int argc, char **argv);
int kvn_format(const struct kvn_cmd *cmd, int argc, char **argv);
int kvn_fw_download(const struct kvn_cmd *cmd, int argc, char **argv);
int kvn_reset(const struct kvn_cmd *cmd, int argc, char **argv);
/* cmd_kv.c */
int kvn_io(const struct kvn_cmd *cmd, int argc, char **argv);
int kvn_open_it(const struct kvn_cmd *cmd, int argc, char **argv);
int kvn_read_it(const struct kvn_cmd *cmd, int argc, char **argv);
int kvn_close_it(const struct kvn_cmd *cmd, int argc, char **argv);
int kvn_list_it(const struct kvn_cmd *cmd, int argc, char **argv);

/* output.c: the original's hex dump (offset, 16 bytes, their characters) and raw output to
 * a file (-b FILE); 0, or an exit code with a message. */
void kvn_hexdump(const void *buf, size_t len);
int kvn_write_file(const char *cmd, const char *path, const void *buf, size_t len);

#endif
