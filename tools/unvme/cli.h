/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the parts of the unvme tool share: exit codes, the option and command tables, the
 * parsed arguments every handler receives, and the helpers that open devices and turn a
 * library result into a message and an exit code.
 */
#ifndef UNVME_TOOL_CLI_H
#define UNVME_TOOL_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "unvme/print.h"
#include "unvme/unvme.h"

/* Exit codes, documented in `unvme help` and docs/tools.md. */
enum cli_exit {
	EXIT_OK = 0,
	EXIT_NVME = 1,  /* the device completed a command with an NVMe error status */
	EXIT_USAGE = 2, /* bad command line: unknown option, bad value, missing argument */
	EXIT_HOST = 3,  /* the device could not be opened, or a host-side failure */
};

#define CLI_DEFAULT_DEVICE "emu0"
#define CLI_MAX_LIST 64 /* repeatable options (perf -d) */

/* ---- parsed arguments ----
 * One structure for every command: each command's option table says which fields it fills.
 * Fields keep their zero value unless the option is given or has a default in the table. */
struct cli_args {
	const char *cmd;        /* command name, for messages */
	const char *positional; /* the device (or the file / command name, see cli_cmd.pos) */
	enum unvme_fmt fmt;
	bool help;
	bool verbose; /* -v/--verbose where the command has no -v of its own: library log on */
	bool human;   /* -H/--human-readable */

	/* identify, logs, features */
	uint32_t nsid;
	uint8_t csi;
	uint32_t entries;
	uint8_t lid;
	uint32_t log_len;
	uint64_t offset;
	uint8_t lsp;
	bool raw_binary;
	uint8_t fid;
	uint8_t sel;
	uint32_t cdw11;
	uint32_t value;
	bool save;

	/* format, firmware, controller */
	bool all;
	uint8_t lbaf;
	uint8_t ses;
	bool force;
	const char *fw_file;
	uint32_t xfer;
	uint8_t slot;
	uint8_t action;
	bool reset;
	const char *revision;
	const char *out_file;
	bool fault_fatal;
	uint32_t fault_drop;
	uint32_t fault_swallow;
	uint32_t fault_media;
	bool fault_clear;
	uint64_t fault_zone_lba;

	/* block I/O */
	uint64_t slba;
	uint32_t blocks;
	const char *data_file;
	uint64_t data_size;
	uint8_t pattern;
	bool deac;

	/* passthru */
	uint8_t opcode;
	uint8_t flags;
	uint32_t cdw2, cdw3, cdw10, cdw12, cdw13, cdw14, cdw15; /* cdw11 is shared with features */
	uint32_t data_len;
	bool dir_read;
	bool dir_write;
	const char *input_file;
	bool show_cmd;
	bool dry_run;
	bool latency;

	/* perf */
	const char *perf_devs[CLI_MAX_LIST];
	unsigned perf_ndevs;
	const char *nsid_list;
	const char *workload;
	uint32_t mix;
	uint64_t block_size;
	uint32_t qd;
	uint32_t seconds;
	uint32_t warmup;
	const char *cores;
	bool lat_table;
	bool verify;
	bool fill;
	uint32_t unplug_at_ms;
	uint32_t plug_after_ms;

	/* key-value commands (kv-*, through the SDK) */
	const char *kv_key;
	uint16_t kv_key_len;
	const char *kv_value_file;
	uint64_t kv_value_size;
	uint32_t kv_offset;
	uint8_t kv_io_option;
	uint8_t kv_keyspace;
	bool kv_show;
	bool kv_latency;
	bool kv_async;
	bool kv_dry_run;
	uint32_t kv_prefix;
	uint32_t kv_bitmask;
	uint8_t kv_it_type;
	uint8_t kv_it_id;

	/* zoned namespaces (zns-*) */
	uint32_t zns_descs;
	const char *zns_state;
	bool zns_partial;
	bool rae;

	/* BlobFS: mkfs, fsck */
	uint64_t fs_cluster;
	uint64_t fs_journal;
	uint64_t fs_meta;
	const char *fs_label;
	bool fs_discard;
	bool fs_repair;
	bool fs_verbose;

	/* batch */
	const char *batch_file;
	bool keep_going;

	/* hot-plug and monitor */
	const char *card;
	bool background;

	/* serve: a device process */
	const char *serve_idle;
	bool serve_detach;
	bool serve_stop;
	bool serve_status;

	/* NVMe over Fabrics: target, discover, connect (target devices: perf_devs, -d) */
	const char *config_file;
	const char *listen;
	const char *nqn;
	const char *hosts;
	const char *dhchap_secret;
	const char *dhchap_ctrl_secret;
	const char *dhchap_hash;
	const char *dhchap_dhgroup;
	bool tls;                /* NVMe/TCP TLS 1.3 with a PSK (host: in the device id; target: required) */
	const char *tls_key;
	const char *port_file;
	const char *alias;
	const char *hostnqn;
	const char *transport;   /* discover/connect -t: tcp or rdma */
	const char *traddr;
	const char *trsvcid;
	uint32_t threads;
	bool quiet;
	bool no_discovery;
	bool allow_any_host;
	/* target limits (docs/nvme-tcp.md "Limits"), applied when given */
	uint32_t tgt_max_conns;
	uint32_t tgt_max_conns_per_host;
	uint32_t tgt_max_io_queues;
	uint32_t tgt_queue_depth;
	uint32_t tgt_memory_mb;
	uint32_t tgt_conn_memory_mb;
	uint32_t tgt_icreq_timeout_ms;
	uint32_t tgt_connect_timeout_ms;

	/* which options were given on the command line (long names) */
	const char *given[64];
	unsigned ngiven;
};

/* ---- option table ---- */
enum opt_kind {
	OPT_FLAG,     /* bool, takes no value */
	OPT_U8,       /* numbers: decimal or 0x hex, range checked against the field's type */
	OPT_U16,
	OPT_U32,
	OPT_U64,
	OPT_SIZE,     /* u64 byte count, optional binary suffix k, m, g, t (4k = 4096) */
	OPT_STR,      /* const char *, the argv string itself */
	OPT_STR_LIST, /* repeatable string: perf_devs[] */
	OPT_FMT,      /* output format: normal | json | binary (binary sets raw_binary) */
};

struct opt_def {
	const char *name;  /* long name, without the dashes; NULL ends a table */
	char short_name;   /* 0 when there is none */
	enum opt_kind kind;
	size_t offset;     /* field in struct cli_args */
	const char *metavar;
	const char *help;
	const char *def;   /* default, parsed like a command-line value before the arguments */
	bool required;
};

#define OPT(lname, sname, kind, field, metavar, help) \
	{ lname, sname, kind, offsetof(struct cli_args, field), metavar, help, NULL, false }
#define OPT_DEF(lname, sname, kind, field, metavar, help, def) \
	{ lname, sname, kind, offsetof(struct cli_args, field), metavar, help, def, false }
#define OPT_REQ(lname, sname, kind, field, metavar, help) \
	{ lname, sname, kind, offsetof(struct cli_args, field), metavar, help, NULL, true }
#define OPT_OUTPUT_FORMAT \
	OPT_DEF("output-format", 'o', OPT_FMT, fmt, "FMT", \
		"output format: normal or json (binary where -b is accepted)", "normal")
/* Another name for the option before it on the same field (the original kv_nvme's spellings):
 * the parser records it under the first name in the table, so cli_given sees one option. */
#define OPT_ALIAS(lname, sname, kind, field, canon) \
	{ lname, sname, kind, offsetof(struct cli_args, field), "VALUE", "the same as --" canon, NULL, false }
#define OPT_END { NULL, 0, OPT_FLAG, 0, NULL, NULL, NULL, false }

/* What the positional argument of a command is. */
enum cli_pos {
	POS_DEVICE,  /* a device id, default "emu0" (or batch's device) */
	POS_NONE,
	POS_FILE,    /* an optional file (fw-image payload, batch script) */
	POS_COMMAND, /* help: an optional command name */
	POS_ADDRESS, /* an optional nvme-tcp:// address or alias (fabrics commands) */
};

struct cli_cmd {
	const char *name;
	const char *summary;
	int (*run)(struct cli_args *a);
	const struct opt_def *opts;
	enum cli_pos pos;
	const char *details; /* extra paragraph for --help, may be NULL */
};

/* Commands with several positional words (fs, fuse) parse their argv themselves. */
struct cli_raw_cmd {
	const char *name;
	const char *summary;
	int (*run)(int argc, char **argv); /* argv[0] is the command name */
	const char *details;               /* the whole --help text */
};
extern const struct cli_raw_cmd cli_raw_commands[];
const struct cli_raw_cmd *cli_find_raw(const char *name);

/* commands.c: the table */
extern const struct cli_cmd cli_commands[];
const struct cli_cmd *cli_find_command(const char *name);
void cli_print_usage(FILE *f);
void cli_print_command_help(FILE *f, const struct cli_cmd *c);
/* man_scdoc.c: the command sections of man page GROUP in scdoc (the build runs
 * `unvme --man-scdoc GROUP`), and every "group command" pair (`unvme --man-groups`). */
int cli_print_scdoc(FILE *f, const char *group);
int cli_print_man_groups(FILE *f);

/* options.c */
/* Parses argv (argv[0] is the command name) into a. Returns EXIT_OK or EXIT_USAGE after
 * printing a message that names the option and the value. */
int cli_parse(const struct cli_cmd *c, int argc, char **argv, struct cli_args *a);
bool cli_given(const struct cli_args *a, const char *long_name);
/* Value parsers shared with perf's list options. Return false on a bad value. */
bool cli_parse_u64(const char *s, uint64_t *out);
bool cli_parse_size(const char *s, uint64_t *out);

/* main.c: runs one command line; used by main and by batch */
int cli_run(int argc, char **argv);
/* The device for commands that name none: "emu0", or the device given to batch. */
extern const char *cli_default_device;

/* device.c: controllers stay open for the process (batch runs several commands on them) */
/* Opens (or finds already open) the device; prints the reason and returns EXIT_HOST on failure. */
int cli_open(const struct cli_args *a, struct unvme_ctrlr **out);
int cli_open_devid(const char *cmd, const char *devid, struct unvme_ctrlr **out);
/* The same without a message: returns 0 or the library's result (reason in unvme_errmsg()). */
int cli_try_open(const char *devid, struct unvme_ctrlr **out);
/* The process's I/O queue pair for the controller, created on first use. */
int cli_io_qpair(const struct cli_args *a, struct unvme_ctrlr *ctrlr, struct unvme_qpair **out);
void cli_close_all(void);
/* Turns a library result into an exit code, printing why on failure:
 * rc > 0 "unvme: CMD: <status name> (SCT xh, SC yyh)"; rc < 0 "unvme: CMD: <unvme_errmsg()>". */
int cli_result(const char *cmd, int rc, uint8_t csi);
/* Prints "unvme: CMD: message" to stderr and returns code. */
int cli_fail(const char *cmd, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* User input as it may be echoed in a message: itself when short, else its start and its
 * length ("aaaa... (1048576 characters)"), so a megabyte argument does not come back whole.
 * The result lives until the 8th call after this one (for several echoes in one message).
 * cli_fail also caps a whole message at CLI_MSG_MAX characters. */
#define CLI_ECHO_MAX 96
#define CLI_MSG_MAX 4096
const char *cli_echo(const char *s);

/* output.c */
struct json_object;
/* Prints a json-c object as one document and releases it. */
void cli_json_print(struct json_object *obj);
/* -b / -o binary: writes the structure as the device returned it, and nothing else, to
 * stdout and returns true; false (nothing written) without -b. */
bool cli_print_raw(const struct cli_args *a, const void *buf, size_t len);
/* "1.00 GiB" */
void cli_human_size(uint64_t bytes, char *out, size_t outlen);
/* Copies a fixed-width, space-padded identify string into a C string without the padding. */
void cli_id_string(const char *field, size_t len, char *out, size_t outlen);
int cli_write_file(const char *cmd, const char *path, const void *buf, size_t len);
/* Reads the whole file (at most max bytes), "-" for stdin; *len gets its size. Caller frees. */
int cli_read_file(const char *cmd, const char *path, size_t max, void **buf, size_t *len);

/* cmd_io.c: the data a write sends, from --data FILE (--data-size of it) or --pattern, as
 * *blocks blocks of lba_size (--block-count, else enough for the data), zero padded. Caller
 * frees *data. Returns an exit code, having printed what was wrong. */
int cli_write_data(struct cli_args *a, uint32_t lba_size, uint8_t **data, uint32_t *blocks);

/* Handlers, one file per group of commands. */
int cmd_list(struct cli_args *a);
int cmd_devices(struct cli_args *a);
int cmd_id_ctrl(struct cli_args *a);
int cmd_id_ns(struct cli_args *a);
int cmd_list_ns(struct cli_args *a);
int cmd_ns_descs(struct cli_args *a);
int cmd_smart_log(struct cli_args *a);
int cmd_error_log(struct cli_args *a);
int cmd_fw_log(struct cli_args *a);
int cmd_get_log(struct cli_args *a);
int cmd_effects_log(struct cli_args *a);
int cmd_self_test_log(struct cli_args *a);
int cmd_sanitize_log(struct cli_args *a);
int cmd_device_self_test(struct cli_args *a);
int cmd_verify(struct cli_args *a);
int cmd_ns_rescan(struct cli_args *a);
int cmd_get_feature(struct cli_args *a);
int cmd_set_feature(struct cli_args *a);
int cmd_format(struct cli_args *a);
int cmd_reset(struct cli_args *a);
int cmd_show_regs(struct cli_args *a);
int cmd_inject_fault(struct cli_args *a);
int cmd_unplug(struct cli_args *a);
int cmd_plug(struct cli_args *a);
int cmd_monitor(struct cli_args *a);
/* cmd_monitor.c: stops a monitor started with --background (at the end of a batch). */
void cli_monitor_stop(void);
int cmd_fw_download(struct cli_args *a);
int cmd_fw_commit(struct cli_args *a);
int cmd_fw_image(struct cli_args *a);
int cmd_read(struct cli_args *a);
int cmd_write(struct cli_args *a);
int cmd_compare(struct cli_args *a);
int cmd_flush(struct cli_args *a);
int cmd_write_zeroes(struct cli_args *a);
int cmd_deallocate(struct cli_args *a);
int cmd_admin_passthru(struct cli_args *a);
int cmd_io_passthru(struct cli_args *a);
int cmd_perf(struct cli_args *a);
int cmd_batch(struct cli_args *a);
int cmd_kv_write(struct cli_args *a);
int cmd_kv_read(struct cli_args *a);
int cmd_kv_delete(struct cli_args *a);
int cmd_kv_exist(struct cli_args *a);
int cmd_kv_open_it(struct cli_args *a);
int cmd_kv_read_it(struct cli_args *a);
int cmd_kv_close_it(struct cli_args *a);
int cmd_kv_it_info(struct cli_args *a);

/* cmd_kv_session.c: the key-value SDK, started on the command's device for the rest of the
 * process (batch lines share it: iterators and memory namespaces live as long as it does). */
/* The SDK handle of a->positional, starting (or moving) the SDK there; EXIT_HOST with the
 * SDK's reason when it cannot be started. */
int cli_kv_handle(const struct cli_args *a, uint64_t *handle);
/* 0 -> EXIT_OK; a kv_result -> "unvme: CMD: NAME (0xNN)" and EXIT_NVME. */
int cli_kv_result(const char *cmd, int result);
int cmd_zns_id_ctrl(struct cli_args *a);
int cmd_zns_id_ns(struct cli_args *a);
int cmd_zns_report_zones(struct cli_args *a);
int cmd_zns_open_zone(struct cli_args *a);
int cmd_zns_close_zone(struct cli_args *a);
int cmd_zns_finish_zone(struct cli_args *a);
int cmd_zns_reset_zone(struct cli_args *a);
int cmd_zns_offline_zone(struct cli_args *a);
int cmd_zns_zone_append(struct cli_args *a);
int cmd_zns_changed_zone_list(struct cli_args *a);

/* cmd_blobfs.c, cmd_fs.c: BlobFS on a namespace (mkfs, fsck, looking inside, FUSE) */
int cmd_mkfs(struct cli_args *a);
int cmd_fsck(struct cli_args *a);
int cmd_fs_raw(int argc, char **argv);
int cmd_fuse_raw(int argc, char **argv);

/* cmd_target.c, cmd_fabrics.c: NVMe/TCP target and host connections */
int cmd_target(struct cli_args *a);
int cmd_serve(struct cli_args *a);
int cmd_discover(struct cli_args *a);
int cmd_connect(struct cli_args *a);
int cmd_connect_all(struct cli_args *a);
int cmd_disconnect(struct cli_args *a);
int cmd_help(struct cli_args *a);
int cmd_version(struct cli_args *a);

#endif
