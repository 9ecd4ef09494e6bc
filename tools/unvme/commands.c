/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The command table: every command's name, summary, handler and options in one place, so
 * that `unvme help`, `unvme <command> --help` and the parser all come from the same source.
 */
#include <string.h>

#include "cli.h"

#define OPT_NSID(def) OPT_DEF("namespace-id", 'n', OPT_U32, nsid, "NSID", "namespace id", def)

static const struct opt_def no_opts[] = { OPT_END };

static const struct opt_def fmt_opts[] = {
	OPT_OUTPUT_FORMAT,
	OPT_END,
};

#define OPT_RAW_BINARY \
	OPT("raw-binary", 'b', OPT_FLAG, raw_binary, NULL, "write the raw structure to stdout")
#define OPT_HUMAN \
	OPT("human-readable", 'H', OPT_FLAG, human, NULL, \
	    "decode the fields (the normal output already does; accepted as in nvme-cli)")

static const struct opt_def struct_opts[] = {
	OPT_RAW_BINARY,
	OPT_HUMAN,
	OPT_OUTPUT_FORMAT,
	OPT_END,
};

static const struct opt_def id_ctrl_opts[] = {
	OPT("csi", 'y', OPT_U8, csi, "CSI",
	    "print the I/O command set specific structure (CNS 06h) of this command set instead"),
	OPT_RAW_BINARY,
	OPT_HUMAN,
	OPT_OUTPUT_FORMAT,
	OPT_END,
};

static const struct opt_def id_ns_opts[] = {
	OPT_NSID("1"),
	OPT("csi", 'y', OPT_U8, csi, "CSI",
	    "print the I/O command set specific structure (CNS 05h) of this command set instead"),
	OPT_RAW_BINARY,
	OPT_HUMAN,
	OPT_OUTPUT_FORMAT,
	OPT_END,
};

static const struct opt_def list_ns_opts[] = {
	OPT("namespace-id", 'n', OPT_U32, nsid, "NSID",
	    "list the namespace ids greater than NSID (default 0: all)"),
	OPT("all", 'a', OPT_FLAG, all, NULL,
	    "allocated namespaces, attached or not (CNS 10h; 1Ah with --csi)"),
	OPT("csi", 'y', OPT_U8, csi, "CSI", "only namespaces of this command set (CNS 07h)"),
	OPT_OUTPUT_FORMAT,
	OPT_END,
};

static const struct opt_def ns_descs_opts[] = {
	OPT_NSID("1"),
	OPT_OUTPUT_FORMAT,
	OPT_END,
};

static const struct opt_def error_log_opts[] = {
	OPT("log-entries", 'e', OPT_U32, entries, "N",
	    "entries to read (default: all the controller keeps, ELPE+1)"),
	OPT_RAW_BINARY,
	OPT_OUTPUT_FORMAT,
	OPT_END,
};

static const struct opt_def effects_log_opts[] = {
	OPT("csi", 'c', OPT_U8, csi, "CSI", "the command set's page (0 NVM, 2 zoned)"),
	OPT_RAW_BINARY,
	OPT_HUMAN,
	OPT_OUTPUT_FORMAT,
	OPT_END,
};

static const struct opt_def self_test_log_opts[] = {
	OPT("dst-entries", 'e', OPT_U32, entries, "N", "results to show, 1..20 (default all)"),
	OPT_RAW_BINARY,
	OPT_OUTPUT_FORMAT,
	OPT_END,
};

static const struct opt_def self_test_opts[] = {
	OPT_DEF("namespace-id", 'n', OPT_U32, nsid, "NSID",
		"namespace to test (ffffffffh: all, 0: the controller only)", "0xffffffff"),
	OPT_REQ("self-test-code", 's', OPT_U8, action, "STC",
		"1 short, 2 extended, 0xe vendor specific, 0xf abort the test in progress"),
	OPT_OUTPUT_FORMAT,
	OPT_END,
};

static const struct opt_def get_log_opts[] = {
	OPT_REQ("log-id", 'i', OPT_U8, lid, "LID", "log page identifier"),
	OPT_REQ("log-len", 'l', OPT_U32, log_len, "LEN", "bytes to read (a multiple of 4)"),
	OPT_DEF("namespace-id", 'n', OPT_U32, nsid, "NSID", "namespace id",
		"0xffffffff"),
	OPT("lpo", 0, OPT_U64, offset, "BYTES", "log page offset (a multiple of 4)"),
	OPT("offset", 0, OPT_U64, offset, "BYTES", "the same as --lpo"),
	OPT("lsp", 's', OPT_U8, lsp, "LSP", "log specific field (0..127)"),
	OPT("rae", 'r', OPT_FLAG, rae, NULL, "retain an asynchronous event"),
	OPT("csi", 'y', OPT_U8, csi, "CSI", "command set identifier"),
	OPT_RAW_BINARY,
	OPT_OUTPUT_FORMAT,
	OPT_END,
};

static const struct opt_def get_feature_opts[] = {
	OPT_REQ("feature-id", 'f', OPT_U8, fid, "FID", "feature identifier"),
	OPT("namespace-id", 'n', OPT_U32, nsid, "NSID", "namespace id (default 0)"),
	OPT("sel", 's', OPT_U8, sel, "SEL",
	    "0 current, 1 default, 2 saved, 3 supported capabilities"),
	OPT("cdw11", 0, OPT_U32, cdw11, "VALUE", "command dword 11"),
	OPT("data-len", 'l', OPT_U32, data_len, "LEN",
	    "bytes of feature data to read (default: the feature's size, 0 for most)"),
	OPT_OUTPUT_FORMAT,
	OPT_END,
};

static const struct opt_def set_feature_opts[] = {
	OPT_REQ("feature-id", 'f', OPT_U8, fid, "FID", "feature identifier"),
	OPT_REQ("value", 'v', OPT_U32, value, "VALUE", "command dword 11"),
	OPT("namespace-id", 'n', OPT_U32, nsid, "NSID", "namespace id (default 0)"),
	OPT("save", 0, OPT_FLAG, save, NULL, "keep the value across power cycles"),
	OPT_OUTPUT_FORMAT,
	OPT_END,
};

static const struct opt_def format_opts[] = {
	OPT("namespace-id", 'n', OPT_U32, nsid, "NSID", "namespace to format"),
	OPT("all", 0, OPT_FLAG, all, NULL, "format every namespace (NSID ffffffffh)"),
	OPT("lbaf", 'l', OPT_U8, lbaf, "LBAF",
	    "LBA format index from id-ns (default: the current one)"),
	OPT("ses", 's', OPT_U8, ses, "SES", "secure erase: 0 none, 1 user data, 2 crypto"),
	OPT("force", 0, OPT_FLAG, force, NULL, "really erase (without it, only says what would go)"),
	OPT_OUTPUT_FORMAT,
	OPT_END,
};

static const struct opt_def fw_download_opts[] = {
	OPT_REQ("fw", 'f', OPT_STR, fw_file, "FILE", "firmware image file"),
	OPT("xfer", 'x', OPT_U32, xfer, "BYTES",
	    "bytes per Firmware Image Download command (default: 4 KiB or FWUG)"),
	OPT_OUTPUT_FORMAT,
	OPT_END,
};

static const struct opt_def fw_commit_opts[] = {
	OPT_REQ("slot", 's', OPT_U8, slot, "SLOT", "firmware slot"),
	OPT_REQ("action", 'a', OPT_U8, action, "ACTION",
		"0 replace, 1 replace and activate at reset, 2 activate at reset, 3 activate now"),
	OPT("reset", 'r', OPT_FLAG, reset, NULL, "reset the controller when activation needs it"),
	OPT_OUTPUT_FORMAT,
	OPT_END,
};

static const char fw_commit_details[] =
	"Says whether a reset is needed to run the committed image; --reset does it and shows\n"
	"the running revision.\n";

static const struct opt_def show_regs_opts[] = {
	OPT_HUMAN,
	OPT_OUTPUT_FORMAT,
	OPT_END,
};

static const struct opt_def fw_image_opts[] = {
	OPT_REQ("revision", 'r', OPT_STR, revision, "REV", "firmware revision, 1 to 8 characters"),
	OPT_REQ("output", 0, OPT_STR, out_file, "FILE", "image file to write"),
	OPT_END,
};

static const struct opt_def fault_opts[] = {
	OPT("fatal", 0, OPT_FLAG, fault_fatal, NULL,
	    "controller fatal status now: commands fail until a reset"),
	OPT("drop", 0, OPT_U32, fault_drop, "N", "the next N I/O commands never complete (Abort ends them)"),
	OPT("swallow", 0, OPT_U32, fault_swallow, "N",
	    "the next N I/O commands are lost for good (Abort does not find them)"),
	OPT("media-error", 0, OPT_U32, fault_media, "N", "the next N reads/writes fail with a media error"),
	OPT("clear", 0, OPT_FLAG, fault_clear, NULL, "remove every injected fault"),
	OPT("zone-read-only", 0, OPT_U64, fault_zone_lba, "LBA",
	    "the zone holding LBA (of zoned namespace -n) becomes read only, as worn media would"),
	OPT_NSID("1"),
	OPT_OUTPUT_FORMAT,
	OPT_END,
};

#define IO_RANGE_OPTS \
	OPT_NSID("1"), \
	OPT("start-block", 's', OPT_U64, slba, "SLBA", "first logical block"), \
	OPT("block-count", 'c', OPT_U32, blocks, "N", \
	    "number of logical blocks, 0's based as in nvme-cli: -c 0 is one block " \
	    "(default: enough for the data, else one block)")

static const struct opt_def read_opts[] = {
	IO_RANGE_OPTS,
	OPT("data", 'd', OPT_STR, data_file, "FILE",
	    "write the data read to FILE; '-' for stdout, status on stderr (default: hex dump)"),
	OPT("raw-binary", 'b', OPT_FLAG, raw_binary, NULL, "the same as --data -"),
	OPT("data-size", 'z', OPT_SIZE, data_size, "BYTES", "bytes to output (default: all blocks)"),
	OPT_OUTPUT_FORMAT,
	OPT_END,
};

static const struct opt_def write_opts[] = {
	IO_RANGE_OPTS,
	OPT("data", 'd', OPT_STR, data_file, "FILE", "data to write; '-' reads stdin"),
	OPT("data-size", 'z', OPT_SIZE, data_size, "BYTES",
	    "bytes taken from FILE (default: the whole file); the rest of the last block is zero"),
	OPT("pattern", 'p', OPT_U8, pattern, "0xNN", "write this byte everywhere (without --data)"),
	OPT_OUTPUT_FORMAT,
	OPT_END,
};

static const struct opt_def compare_opts[] = {
	IO_RANGE_OPTS,
	OPT("data", 'd', OPT_STR, data_file, "FILE", "data to compare against; '-' reads stdin"),
	OPT("data-size", 'z', OPT_SIZE, data_size, "BYTES", "bytes taken from FILE"),
	OPT("pattern", 'p', OPT_U8, pattern, "0xNN", "compare against this byte (without --data)"),
	OPT_OUTPUT_FORMAT,
	OPT_END,
};

static const struct opt_def flush_opts[] = {
	OPT_NSID("1"),
	OPT_OUTPUT_FORMAT,
	OPT_END,
};

static const struct opt_def write_zeroes_opts[] = {
	IO_RANGE_OPTS,
	OPT("deac", 0, OPT_FLAG, deac, NULL, "also deallocate the blocks"),
	OPT_OUTPUT_FORMAT,
	OPT_END,
};

static const struct opt_def verify_opts[] = {
	IO_RANGE_OPTS,
	OPT_OUTPUT_FORMAT,
	OPT_END,
};

static const struct opt_def deallocate_opts[] = {
	IO_RANGE_OPTS,
	OPT_OUTPUT_FORMAT,
	OPT_END,
};

#define PASSTHRU_OPTS(nsid_def) \
	OPT_REQ("opcode", 'O', OPT_U8, opcode, "OPC", "command opcode"), \
	OPT_DEF("namespace-id", 'n', OPT_U32, nsid, "NSID", "NSID field", nsid_def), \
	OPT("flags", 'f', OPT_U8, flags, "FLAGS", "command dword 0 bits 15:8 (FUSE, PSDT)"), \
	OPT("cdw2", '2', OPT_U32, cdw2, "VALUE", "command dword 2"), \
	OPT("cdw3", '3', OPT_U32, cdw3, "VALUE", "command dword 3"), \
	OPT("cdw10", '4', OPT_U32, cdw10, "VALUE", "command dword 10"), \
	OPT("cdw11", '5', OPT_U32, cdw11, "VALUE", "command dword 11"), \
	OPT("cdw12", '6', OPT_U32, cdw12, "VALUE", "command dword 12"), \
	OPT("cdw13", '7', OPT_U32, cdw13, "VALUE", "command dword 13"), \
	OPT("cdw14", '8', OPT_U32, cdw14, "VALUE", "command dword 14"), \
	OPT("cdw15", '9', OPT_U32, cdw15, "VALUE", "command dword 15"), \
	OPT("data-len", 'l', OPT_U32, data_len, "LEN", "bytes of data (sets the data pointer)"), \
	OPT("read", 'r', OPT_FLAG, dir_read, NULL, "the command returns data: print it"), \
	OPT("write", 'w', OPT_FLAG, dir_write, NULL, "the command takes data: from --input-file or zeroes"), \
	OPT("input-file", 'i', OPT_STR, input_file, "FILE", "data for --write"), \
	OPT("raw-binary", 'b', OPT_FLAG, raw_binary, NULL, "write returned data raw to stdout"), \
	OPT("prefill", 'p', OPT_U8, pattern, "BYTE", "fill the data buffer with BYTE first (default 0)"), \
	OPT("show-command", 's', OPT_FLAG, show_cmd, NULL, "print the command (on stderr) before sending it"), \
	OPT("dry-run", 'd', OPT_FLAG, dry_run, NULL, "print the command and do not send it"), \
	OPT("latency", 'T', OPT_FLAG, latency, NULL, "print the command's latency (on stderr)"), \
	OPT_OUTPUT_FORMAT

static const struct opt_def admin_passthru_opts[] = {
	PASSTHRU_OPTS("0"),
	OPT_END,
};

static const struct opt_def io_passthru_opts[] = {
	PASSTHRU_OPTS("1"),
	OPT_END,
};

static const struct opt_def perf_opts[] = {
	OPT("device", 'd', OPT_STR_LIST, perf_devs, "DEV",
	    "device to test; repeat for several (default: the positional device or emu0)"),
	OPT("namespace-id", 'n', OPT_STR, nsid_list, "NSIDS",
	    "namespaces, e.g. 1 or 1,2 (default: all active namespaces)"),
	OPT_DEF("workload", 'w', OPT_STR, workload, "PATTERN",
		"randread, randwrite, read, write, randrw; on a zoned namespace zone-write "
		"(sequential per zone) or zone-append", "randread"),
	OPT_DEF("rwmixread", 'M', OPT_U32, mix, "PCT", "percentage of reads for randrw", "50"),
	OPT_DEF("block-size", 'b', OPT_SIZE, block_size, "BYTES", "I/O size", "4k"),
	OPT_DEF("queue-depth", 'q', OPT_U32, qd, "QD",
		"I/Os kept outstanding per queue pair (one per core and device)", "32"),
	OPT_DEF("time", 't', OPT_U32, seconds, "SECONDS", "measured run time", "5"),
	OPT("warmup", 0, OPT_U32, warmup, "SECONDS", "run this long before measuring"),
	OPT("fill", 0, OPT_FLAG, fill, NULL, "write every block once before the run, so reads move real data"),
	OPT("cores", 'c', OPT_STR, cores, "LIST",
	    "CPUs to run on, one pinned thread each, e.g. 0,1 or 0-3 (default: one unpinned thread)"),
	OPT("latency-table", 'L', OPT_FLAG, lat_table, NULL, "print the whole percentile table"),
	OPT("verify", 'V', OPT_FLAG, verify, NULL,
	    "writes stamp each block with its LBA; reads check stamped blocks"),
	OPT("unplug-at", 0, OPT_U32, unplug_at_ms, "MS",
	    "emulated devices: pull them out MS ms into the run (surprise removal)"),
	OPT("plug-after", 0, OPT_U32, plug_after_ms, "MS",
	    "with --unplug-at: put them back MS ms later; I/O continues"),
	OPT_OUTPUT_FORMAT,
	OPT_END,
};

static const struct opt_def batch_opts[] = {
	OPT("file", 'f', OPT_STR, batch_file, "FILE", "read commands from FILE (default: stdin)"),
	OPT("keep-going", 'k', OPT_FLAG, keep_going, NULL, "run every line even after a failure"),
	OPT_END,
};

/* Key-value commands: the original kv_nvme's letters and long names (--key_length,
 * --show-command, ... as aliases), except -o, which is the output format in every command
 * (the value offset has its long name only). */
#define KV_OUTPUT_FORMAT OPT_OUTPUT_FORMAT
#define KV_KEY_OPTS \
	OPT("key", 'k', OPT_STR, kv_key, "KEY", "the key (its bytes as typed)"), \
	OPT("key-len", 'l', OPT_U16, kv_key_len, "BYTES", \
	    "key length: the key is cut or zero padded to it (default: its length)"), \
	OPT_ALIAS("key_length", 0, OPT_U16, kv_key_len, "key-len"), \
	OPT("namespace-id", 'n', OPT_U8, kv_keyspace, "KS", \
	    "keyspace: 0 user data, 1 metadata (default 0)"), \
	OPT("io-option", 'i', OPT_U8, kv_io_option, "OPT", \
	    "the call's option (store: 0 default, 1 compression, 2 idempotent; ...)"), \
	OPT_ALIAS("io_option", 0, OPT_U8, kv_io_option, "io-option"), \
	KV_CALL_OPTS, \
	OPT("async", 'a', OPT_FLAG, kv_async, NULL, "use the asynchronous call and wait for it"), \
	OPT_ALIAS("asynchronous", 0, OPT_FLAG, kv_async, "async")

/* What every key-value call takes: show its arguments, time it, or only show them. */
#define KV_CALL_OPTS \
	OPT("show-args", 'w', OPT_FLAG, kv_show, NULL, "print the arguments before the call"), \
	OPT_ALIAS("show-command", 0, OPT_FLAG, kv_show, "show-args"), \
	OPT("latency", 't', OPT_FLAG, kv_latency, NULL, "print the call's latency"), \
	OPT("dry-run", 'd', OPT_FLAG, kv_dry_run, NULL, "print the arguments, do not call")

#define ZNS_SLBA OPT("start-lba", 's', OPT_U64, slba, "SLBA", "start LBA of the zone")

static const struct opt_def zns_ns_opts[] = {
	OPT_NSID("1"),
	OPT_OUTPUT_FORMAT,
	OPT_END,
};

static const struct opt_def zns_report_opts[] = {
	OPT_NSID("1"),
	OPT("start-lba", 's', OPT_U64, slba, "SLBA", "report from the zone holding this LBA on"),
	OPT("descs", 'd', OPT_U32, zns_descs, "N", "descriptors to return (default: every zone)"),
	OPT("state", 'S', OPT_STR, zns_state, "STATE",
	    "only zones in this state: empty, implicitly-open, explicitly-open, closed, full, "
	    "read-only, offline (or 1..7; default all)"),
	OPT("partial", 'p', OPT_FLAG, zns_partial, NULL,
	    "partial report: nr_zones counts the descriptors returned, not every match"),
	OPT_OUTPUT_FORMAT,
	OPT_END,
};

static const struct opt_def zns_send_opts[] = {
	OPT_NSID("1"),
	ZNS_SLBA,
	OPT("select-all", 'a', OPT_FLAG, all, NULL, "every zone the action applies to"),
	OPT_OUTPUT_FORMAT,
	OPT_END,
};

static const struct opt_def zns_append_opts[] = {
	OPT_NSID("1"),
	ZNS_SLBA,
	OPT("data", 'd', OPT_STR, data_file, "FILE", "data to append"),
	OPT("data-size", 'z', OPT_SIZE, data_size,  "BYTES",
	    "bytes taken from FILE (default: the whole file); the rest of the last block is zero"),
	OPT("pattern", 'p', OPT_U8, pattern, "0xNN", "append this byte (without --data)"),
	OPT("block-count", 'c', OPT_U32, blocks, "N", "blocks to append (default: enough for the data)"),
	OPT_OUTPUT_FORMAT,
	OPT_END,
};

static const struct opt_def zns_changed_opts[] = {
	OPT_NSID("1"),
	OPT("rae", 'r', OPT_FLAG, rae, NULL, "retain the asynchronous event (the list is not cleared)"),
	OPT_OUTPUT_FORMAT,
	OPT_END,
};

static const char zns_details[] =
	"Zoned namespaces (NVMe ZNS command set). Also spelled 'unvme zns <command>', as in\n"
	"nvme-cli's zns plugin.\n";

static const struct opt_def kv_write_opts[] = {
	KV_KEY_OPTS,
	OPT("value", 'v', OPT_STR, kv_value_file, "FILE", "the value: this file's bytes"),
	OPT("value-size", 's', OPT_SIZE, kv_value_size, "BYTES",
	    "value size: the file's first bytes, or that many zeros without --value"),
	OPT_ALIAS("value_size", 0, OPT_SIZE, kv_value_size, "value-size"),
	OPT("offset", 0, OPT_U32, kv_offset, "BYTES", "value offset"),
	KV_OUTPUT_FORMAT,
	OPT_END,
};

static const struct opt_def kv_read_opts[] = {
	KV_KEY_OPTS,
	OPT("value", 'v', OPT_STR, kv_value_file, "FILE", "write the value to FILE (default: hex dump)"),
	OPT("value-size", 's', OPT_SIZE, kv_value_size, "BYTES",
	    "buffer size, a multiple of 4 (default 4096)"),
	OPT_ALIAS("value_size", 0, OPT_SIZE, kv_value_size, "value-size"),
	OPT("offset", 0, OPT_U32, kv_offset, "BYTES", "read from this value offset (multiple of 512)"),
	KV_OUTPUT_FORMAT,
	OPT_END,
};

static const struct opt_def kv_key_opts[] = {
	KV_KEY_OPTS,
	KV_OUTPUT_FORMAT,
	OPT_END,
};

static const struct opt_def kv_open_it_opts[] = {
	OPT("prefix", 'p', OPT_U32, kv_prefix, "PREFIX",
	    "keys whose first 4 bytes (big endian) match PREFIX under the bitmask (default 0)"),
	OPT("bitmask", 'b', OPT_U32, kv_bitmask, "MASK",
	    "contiguous high bits of the prefix that must match (default 0: every key)"),
	OPT("namespace-id", 'n', OPT_U8, kv_keyspace, "KS", "keyspace: 0 user data, 1 metadata"),
	OPT_DEF("type", 'i', OPT_U8, kv_it_type, "TYPE",
		"1 keys, 2 keys with values, 3 keys, deleting them", "1"),
	KV_CALL_OPTS,
	OPT_OUTPUT_FORMAT,
	OPT_END,
};

static const struct opt_def kv_read_it_opts[] = {
	OPT("id", 'i', OPT_U8, kv_it_id, "HANDLE", "iterator handle from kv-open-it (required)"),
	OPT("value-size", 's', OPT_SIZE, kv_value_size, "BYTES", "bytes of the 32 KiB chunk to write and show (default all)"),
	OPT_ALIAS("value_size", 0, OPT_SIZE, kv_value_size, "value-size"),
	OPT("value", 'v', OPT_STR, kv_value_file, "FILE", "write the raw buffer to FILE"),
	OPT("namespace-id", 'n', OPT_U8, kv_keyspace, "KS", "keyspace: 0 user data, 1 metadata"),
	KV_CALL_OPTS,
	OPT("async", 'a', OPT_FLAG, kv_async, NULL, "use kv_iterate_read_async and wait for it"),
	OPT_ALIAS("asynchronous", 0, OPT_FLAG, kv_async, "async"),
	OPT_OUTPUT_FORMAT,
	OPT_END,
};

static const struct opt_def kv_close_it_opts[] = {
	OPT("id", 'i', OPT_U8, kv_it_id, "HANDLE", "iterator handle (required)"),
	KV_CALL_OPTS,
	OPT_OUTPUT_FORMAT,
	OPT_END,
};

static const struct opt_def mkfs_opts[] = {
	OPT_NSID("0"),
	OPT("cluster-size", 'c', OPT_SIZE, fs_cluster, "BYTES",
	    "allocation unit: a power of two, 4k..64m (default 4k; larger over 1 TiB)"),
	OPT("journal-size", 'j', OPT_SIZE, fs_journal, "BYTES",
	    "metadata journal (default 1/64 of the namespace, 1m..64m)"),
	OPT("meta-size", 'm', OPT_SIZE, fs_meta, "BYTES",
	    "each of the two metadata checkpoint slots; bounds the number of files "
	    "(default 1/64 of the namespace, 256k..256m)"),
	OPT("label", 'L', OPT_STR, fs_label, "LABEL", "file system label, up to 31 bytes"),
	OPT("force", 'f', OPT_FLAG, force, NULL, "overwrite an existing BlobFS"),
	OPT("discard", 'd', OPT_FLAG, fs_discard, NULL, "deallocate the data area"),
	OPT_OUTPUT_FORMAT,
	OPT_END,
};

static const struct opt_def fsck_opts[] = {
	OPT_NSID("0"),
	OPT("repair", 'r', OPT_FLAG, fs_repair, NULL,
	    "fix what can be fixed and write a clean checkpoint"),
	OPT("verbose", 'v', OPT_FLAG, fs_verbose, NULL, "list every file checked"),
	OPT_OUTPUT_FORMAT,
	OPT_END,
};

static const char fs_details[] =
	"A BlobFS (docs/blobfs.md) on namespace NSID (-n, default: the first). The device\n"
	"must not be mounted read-write by another process (FUSE, RocksDB): the namespace lock\n"
	"says which process holds it. Exit codes as below; fsck exits 1 when errors remain. A\n"
	"journal transaction cut short by a crash is a warning (its fsync never returned); a\n"
	"damaged one with whole transactions after it is an error (it had been acknowledged:\n"
	"mounts refuse, --repair accepts the loss).\n";

static const char fs_cmd_details[] =
	"usage: unvme fs [<device>] <command> [args] [-n NSID] [-o json]\n"
	"  ls [-l] [PATH]          list a directory (default /)\n"
	"  tree [PATH]             every file below PATH\n"
	"  stat PATH               one file's attributes\n"
	"  cat PATH                write a file to stdout\n"
	"  get PATH [LOCAL]        copy a file out (default: its name, '-' for stdout)\n"
	"  put LOCAL [PATH]        copy a file in (default: /its name; '-' reads stdin)\n"
	"  cp PATH PATH            copy inside the file system\n"
	"  mv PATH PATH            rename (replaces an existing file)\n"
	"  rm [-r] PATH...         remove files (-r: directories with everything in them)\n"
	"  mkdir [-p] PATH...      make directories (-p: with parents, no error if present)\n"
	"  df                      space and metadata use\n"
	"Read-only commands mount read-only, so they can run next to another read-only user.\n";

static const char fuse_details[] =
	"usage: unvme fuse <device> <mountpoint> [-n NSID] [-f] [-o FUSEOPTS] [--cache-size BYTES]\n"
	"       [--no-retain] [--no-prefetch] [--prefetch-threshold BYTES] [--direct-read]\n"
	"       [--direct-write] [--threads N]\n"
	"Mounts the BlobFS on the namespace through FUSE (multithreaded). Without -f it returns\n"
	"once the mount is up and keeps serving in the background. Unmount with 'fusermount3 -u\n"
	"<mountpoint>', or send the server SIGINT/SIGTERM (with -f: Ctrl-C): either way BlobFS\n"
	"is unmounted cleanly (data written back, a clean checkpoint). fsync of a file commits\n"
	"it; fsync of a directory writes back and commits everything (sync and syncfs never reach\n"
	"a FUSE server). Unlinked files live on through their descriptors, as on ext4.\n";

static const char kv_details[] =
	"Key-value commands go through the KV SDK (kv_apis.h), started on the device for the rest\n"
	"of the process. A device status is printed by name, e.g. 'KV_ERR_NOT_EXIST_KEY (0x10)',\n"
	"and exits 1. An emulated KV namespace in memory (emu://x?ns=kv:64M) and its iterators\n"
	"live as long as the process: chain commands with 'unvme batch', or keep the data in a\n"
	"file (emu://x?ns=kv:64M::/path/kv.img).\n";

static const char perf_details[] =
	"Each core runs one thread pinned to it, with its own queue pair on every device; the\n"
	"queue depth is per queue pair, and each queue pair spreads its I/Os round robin over\n"
	"the device's selected namespaces. Latency percentiles come from a log-linear histogram\n"
	"(within 1.6%). \"CPU\" per I/O is the process's CPU time over the measured period\n"
	"(getrusage-style clocks, every thread: the submitting threads and an emulated device's\n"
	"engine threads) divided by the I/Os; \"busy\" is threads x elapsed / I/Os, the wall time\n"
	"a polling thread holds its core. Reads of blocks never written move no data: perf warns\n"
	"when a namespace reports fewer written blocks (Identify NUSE) than it has; --fill writes\n"
	"every block first.\n"
	"Zoned namespaces: zone-write keeps one write in flight per zone, each I/O slot writing\n"
	"its own zones at their write pointers (queue depth = zones written at once);\n"
	"zone-append streams Zone Appends into one zone per thread at the full queue depth and\n"
	"checks each LBA the device returns. Full zones are reset and written again.\n"
	"Example: unvme perf 'emu://perf?ns=mem:1G:512' --fill -w randread -b 4k -q 32 -t 3 -c 0\n";

static const char io_details[] =
	"The command goes to the device as given: a range past the end of the namespace or an\n"
	"unknown namespace is answered by the device (LBA Out of Range, Invalid Namespace or\n"
	"Format). Transfers larger than the controller's limit are split.\n";

static const char batch_details[] =
	"Runs one command per line (or several separated by ';') in this process, so that\n"
	"memory-backed emulated devices and injected faults live across commands. Devices stay\n"
	"open between lines; the positional argument of batch is the device for lines that name\n"
	"none. Lines are split on blanks; quote with ' or \", '#' starts a comment. Stops at the\n"
	"first failing line unless --keep-going; the exit code is that of the first failure.\n";

#define OPT_FABRICS_HOST                                                                          \
	OPT("transport", 't', OPT_STR, transport, "TYPE",                                              \
	    "tcp or rdma: the fabric of --traddr (default tcp), or the scheme the id must have"),        \
	OPT("traddr", 'a', OPT_STR, traddr, "ADDRESS",                                                    \
	    "target address (instead of the nvme-tcp:// or nvme-rdma:// id)"),                           \
	OPT("trsvcid", 's', OPT_STR, trsvcid, "PORT", "target port with --traddr (default 4420)"),       \
	OPT("hostnqn", 'q', OPT_STR, hostnqn, "NQN", "this host's NQN (default: $UNVME_HOSTNQN, "        \
	    "/etc/nvme/hostnqn, else derived from /etc/machine-id)"),                                     \
	OPT("dhchap-secret", 'S', OPT_STR, dhchap_secret, "KEY",                                          \
	    "DH-HMAC-CHAP host key (DHHC-1:xx:...:, as nvme gen-dhchap-key prints it)"),                 \
	OPT("dhchap-ctrl-secret", 'C', OPT_STR, dhchap_ctrl_secret, "KEY",                                \
	    "the controller's key: authenticate the controller too"),                                     \
	OPT("tls", 0, OPT_FLAG, tls, NULL, "TLS 1.3 with a pre-shared key (--tls-key, or $UNVME_TLS_KEY)"), \
	OPT("tls-key", 0, OPT_STR, tls_key, "KEY",                                                        \
	    "TLS PSK (NVMeTLSkey-1:xx:...:, as nvme gen-tls-key prints it); implies --tls"),              \
	OPT_OUTPUT_FORMAT

static const struct opt_def discover_opts[] = {
	OPT_FABRICS_HOST,
	OPT_END,
};

static const struct opt_def connect_opts[] = {
	OPT("nqn", 'n', OPT_STR, nqn, "NQN", "subsystem NQN (instead of the one in the address)"),
	OPT("alias", 0, OPT_STR, alias, "NAME", "record the device id under NAME in the devices file"),
	OPT_FABRICS_HOST,
	OPT_END,
};

static const struct opt_def connect_all_opts[] = {
	OPT("alias", 0, OPT_STR, alias, "PREFIX",
	    "record each subsystem as PREFIX0, PREFIX1, ... in the devices file"),
	OPT_FABRICS_HOST,
	OPT_END,
};

static const struct opt_def target_opts[] = {
	OPT("config", 'c', OPT_STR, config_file, "FILE", "JSON configuration (docs/nvme-tcp.md)"),
	OPT("listen", 'l', OPT_STR, listen, "[rdma:]ADDR:PORT[,...]",
	    "where to listen: NVMe/TCP, or NVMe/RDMA with rdma: (port 0: any free port) "
	    "[default 0.0.0.0:4420]"),
	OPT("device", 'd', OPT_STR_LIST, perf_devs, "DEVICE",
	    "export every namespace of DEVICE (repeatable; without --config)"),
	OPT("nqn", 'n', OPT_STR, nqn, "NQN", "the subsystem's NQN [default nqn.2014-08.io.unvme:target]"),
	OPT("allow-host", 0, OPT_STR, hosts, "NQN[,NQN...]",
	    "the hosts that may connect (give this or --allow-any-host)"),
	OPT("allow-any-host", 0, OPT_FLAG, allow_any_host, NULL,
	    "any host may connect (a warning when listening beyond loopback)"),
	OPT("dhchap-secret", 'S', OPT_STR, dhchap_secret, "KEY",
	    "the allowed hosts' DH-HMAC-CHAP key: they must authenticate"),
	OPT("dhchap-ctrl-secret", 'C', OPT_STR, dhchap_ctrl_secret, "KEY",
	    "the controller key, for hosts that authenticate the controller"),
	OPT("dhchap-hash", 0, OPT_STR, dhchap_hash, "HASH", "sha256, sha384 or sha512 [default sha256]"),
	OPT("dhchap-dhgroup", 0, OPT_STR, dhchap_dhgroup, "GROUP",
	    "null or ffdhe2048..ffdhe8192 [default null]"),
	OPT("tls", 0, OPT_FLAG, tls, NULL, "require TLS 1.3 with a pre-shared key on every connection"),
	OPT("tls-key", 0, OPT_STR, tls_key, "KEY",
	    "the allowed hosts' TLS PSK (NVMeTLSkey-1:xx:...:; any host's without --allow-host)"),
	OPT_DEF("threads", 't', OPT_U32, threads, "N", "poller threads", "1"),
	OPT("port-file", 0, OPT_STR, port_file, "FILE", "write the port listened on to FILE"),
	OPT("no-discovery", 0, OPT_FLAG, no_discovery, NULL, "no discovery subsystem"),
	OPT("quiet", 0, OPT_FLAG, quiet, NULL, "log only refusals and errors"),
	OPT("max-connections", 0, OPT_U32, tgt_max_conns, "N", "connections in total [default 1024]"),
	OPT("max-connections-per-host", 0, OPT_U32, tgt_max_conns_per_host, "N",
	    "connections from one host address [default 128]"),
	OPT("max-io-queues", 0, OPT_U32, tgt_max_io_queues, "N", "I/O queues per controller [default 32]"),
	OPT("max-queue-depth", 0, OPT_U32, tgt_queue_depth, "N", "entries of an I/O queue [default 256]"),
	OPT("max-memory", 0, OPT_U32, tgt_memory_mb, "MIB",
	    "data buffers of all connections, MiB [default 1024]"),
	OPT("max-connection-memory", 0, OPT_U32, tgt_conn_memory_mb, "MIB",
	    "data buffers of one connection, MiB [default 32]"),
	OPT("icreq-timeout", 0, OPT_U32, tgt_icreq_timeout_ms, "MS",
	    "a new connection's ICReq deadline [default 5000]"),
	OPT("connect-timeout", 0, OPT_U32, tgt_connect_timeout_ms, "MS",
	    "a new connection's deadline to be connected and authenticated [default 10000]"),
	OPT_END,
};

static const char target_details[] =
	"Serves the namespaces of devices the driver opens (emu://, VFIO, aliases) as NVMe/TCP\n"
	"subsystems, with a discovery subsystem, until SIGINT or SIGTERM. Prints 'listening on\n"
	"port N' when it serves. See docs/nvme-tcp.md for the configuration file.\n";

static const char fabrics_details[] =
	"A user-space driver keeps no kernel controller: 'connect' checks the subsystem and, with\n"
	"--alias, records its device id in the devices file for every tool to use by name;\n"
	"'disconnect NAME' forgets it. connect-all follows the log's NVMe/TCP and NVMe/RDMA\n"
	"records, each over its own fabric.\n";

static const struct opt_def plug_opts[] = {
	OPT("card", 'c', OPT_STR, card, "URI",
	    "a replacement card (emu:// URI) instead of the same device"),
	OPT_OUTPUT_FORMAT,
	OPT_END,
};

static const char hotplug_details[] =
	"Emulated devices (emu://) only: a named or file-backed device's card is pulled out of\n"
	"its device process's slot (every program using it sees that), an unnamed one's in\n"
	"this process (use it in 'unvme batch'). unplug pulls the card out as a surprise\n"
	"removal: commands in flight complete with an error, later ones fail with 'removed'\n"
	"(-ENODEV), a monitor prints\n"
	"'removed'. plug puts the same device back (a memory namespace comes back empty, a\n"
	"file namespace with its data) or, with --card, a replacement at the same address; the\n"
	"driver attaches it and I/O continues. See docs/devices.md (Hot-plug).\n";

static const struct opt_def monitor_opts[] = {
	OPT("device", 'd', OPT_STR_LIST, perf_devs, "DEVICE", "watch another device too (repeatable)"),
	OPT("seconds", 't', OPT_U32, seconds, "N", "stop after N seconds (default: at SIGINT/SIGTERM)"),
	OPT("background", 'b', OPT_FLAG, background, NULL,
	    "in a batch: watch while the next lines run, until the batch ends"),
	OPT_OUTPUT_FORMAT,
	OPT_END,
};

static const char monitor_details[] =
	"Prints one line per event: 'removed' and 'arrived' (hot-plug), and 'aer' for each\n"
	"Asynchronous Event the device reports (SMART / health warnings such as a temperature\n"
	"threshold, errors, notices such as a namespace whose attributes changed), with what the\n"
	"event's log page says; the log page is read so that the device reports the next event\n"
	"of its type. -o json prints one JSON object per line (time, device, event, serial;\n"
	"aer_type, aer_info, aer_info_name, log_page, critical_warning, temperature_k,\n"
	"changed_namespaces). Example, in one process:\n"
	"  unvme batch 'emu://m' <<'EOF'\n"
	"  monitor --background\n"
	"  set-feature -f 0x0b -v 2        # report temperature events\n"
	"  set-feature -f 0x04 -v 300      # over-temperature threshold below 313 K\n"
	"  unplug\n"
	"  plug --card 'emu://spare?serial=SPARE1'\n"
	"  EOF\n";

static const struct opt_def serve_opts[] = {
	OPT("idle", 'i', OPT_STR, serve_idle, "DURATION",
	    "end after this long without a client: 30s, 500ms, 2m (default: when told)"),
	OPT("detach", 'D', OPT_FLAG, serve_detach, NULL,
	    "run in the background once the device serves (print its pid)"),
	OPT("stop", 0, OPT_FLAG, serve_stop, NULL, "end the device process that runs the device"),
	OPT("status", 0, OPT_FLAG, serve_status, NULL, "say which process runs the device"),
	OPT("quiet", 'q', OPT_FLAG, quiet, NULL, "print nothing on success"),
	OPT_OUTPUT_FORMAT,
	OPT_END,
};

static const char serve_details[] =
	"Runs the device in a process of its own, the device process, which every program that\n"
	"opens the device then uses as a client (its own queues, its doorbells written straight\n"
	"into the device): no program's exit takes the device, its open iterators or pending\n"
	"events away. The first open of an emulated device with a name or files starts one by\n"
	"itself (ending 10 s after its last client, UNVME_DEVICE_IDLE_MS); run it by hand to\n"
	"keep a device up, or for a PCIe device, whose first opener otherwise runs it. SIGINT\n"
	"or SIGTERM, or 'serve --stop' from another shell, end it with a clean shutdown.\n"
	"Examples:\n"
	"  unvme serve emu0 --detach        # until 'unvme serve emu0 --stop'\n"
	"  unvme serve 'emu://kv?ns=kv:1G' --idle 5m\n"
	"  unvme serve emu0 --status\n"
	"See docs/multi-process.md.\n";

const struct cli_cmd cli_commands[] = {
	{ "list", "list every known device with its namespaces", cmd_list, fmt_opts, POS_NONE, NULL },
	{ "devices", "list device aliases and what they resolve to", cmd_devices, fmt_opts, POS_NONE,
	  "Aliases come from $UNVME_DEVICES (\"name=devid;name=devid\"), the devices file\n"
	  "($UNVME_CONFIG, else ~/.config/unvme/devices.json, else /etc/unvme/devices.json)\n"
	  "and the built-in emu0.\n" },
	{ "id-ctrl", "Identify Controller", cmd_id_ctrl, id_ctrl_opts, POS_DEVICE, NULL },
	{ "id-ns", "Identify Namespace", cmd_id_ns, id_ns_opts, POS_DEVICE, NULL },
	{ "list-ns", "active namespace ids", cmd_list_ns, list_ns_opts, POS_DEVICE, NULL },
	{ "ns-descs", "namespace identification descriptors", cmd_ns_descs, ns_descs_opts, POS_DEVICE,
	  NULL },
	{ "ns-rescan", "read the active namespace list again and show it", cmd_ns_rescan, fmt_opts,
	  POS_DEVICE, NULL },
	{ "smart-log", "SMART / Health Information log", cmd_smart_log, struct_opts, POS_DEVICE, NULL },
	{ "error-log", "Error Information log", cmd_error_log, error_log_opts, POS_DEVICE, NULL },
	{ "fw-log", "Firmware Slot Information log", cmd_fw_log, struct_opts, POS_DEVICE, NULL },
	{ "get-log", "any log page, raw", cmd_get_log, get_log_opts, POS_DEVICE, NULL },
	{ "effects-log", "Commands Supported and Effects log", cmd_effects_log, effects_log_opts,
	  POS_DEVICE, NULL },
	{ "self-test-log", "Device Self-test log", cmd_self_test_log, self_test_log_opts, POS_DEVICE,
	  NULL },
	{ "device-self-test", "start (or abort) a device self-test", cmd_device_self_test,
	  self_test_opts, POS_DEVICE,
	  "A controller without self-tests (the emulated one) answers Invalid Command Opcode.\n" },
	{ "sanitize-log", "Sanitize Status log", cmd_sanitize_log, struct_opts, POS_DEVICE,
	  "A controller without sanitize (the emulated one) answers Invalid Log Page.\n" },
	{ "get-feature", "Get Features", cmd_get_feature, get_feature_opts, POS_DEVICE, NULL },
	{ "set-feature", "Set Features", cmd_set_feature, set_feature_opts, POS_DEVICE, NULL },
	{ "format", "Format NVM: change the LBA format, erase data", cmd_format, format_opts,
	  POS_DEVICE,
	  "Without --force nothing is sent: the command says what would be erased and exits\n"
	  "with code 2.\n" },
	{ "fw-download", "download a firmware image (commit it with fw-commit)", cmd_fw_download,
	  fw_download_opts, POS_DEVICE,
	  "Downloads the image in chunks (Firmware Image Download), as nvme-cli's fw-download\n"
	  "does; nothing runs it until 'unvme fw-commit' commits it to a slot.\n" },
	{ "fw-commit", "Firmware Commit: store and/or activate a downloaded image", cmd_fw_commit,
	  fw_commit_opts, POS_DEVICE, fw_commit_details },
	{ "fw-activate", "the same as fw-commit (nvme-cli's older name)", cmd_fw_commit,
	  fw_commit_opts, POS_DEVICE, fw_commit_details },
	{ "fw-image", "build a firmware image for the emulated controller", cmd_fw_image, fw_image_opts,
	  POS_FILE,
	  "The positional argument is the payload file (default: a generated payload). The image\n"
	  "is a 32-byte header (\"UNVMEFW1\", 8-byte revision, u32 payload length, u32 CRC-32 of\n"
	  "the payload, 8 reserved bytes; little endian) followed by the payload.\n" },
	{ "reset", "controller reset", cmd_reset, fmt_opts, POS_DEVICE, NULL },
	{ "show-regs", "controller registers", cmd_show_regs, show_regs_opts, POS_DEVICE, NULL },
	{ "read", "Read blocks", cmd_read, read_opts, POS_DEVICE, io_details },
	{ "write", "Write blocks", cmd_write, write_opts, POS_DEVICE, io_details },
	{ "compare", "Compare blocks with data", cmd_compare, compare_opts, POS_DEVICE, io_details },
	{ "flush", "Flush: make written data durable", cmd_flush, flush_opts, POS_DEVICE, NULL },
	{ "write-zeroes", "Write Zeroes", cmd_write_zeroes, write_zeroes_opts, POS_DEVICE, io_details },
	{ "verify", "Verify: the device reads and checks blocks, no data moves", cmd_verify,
	  verify_opts, POS_DEVICE, io_details },
	{ "deallocate", "Dataset Management, deallocate (trim) a range", cmd_deallocate,
	  deallocate_opts, POS_DEVICE, io_details },
	{ "admin-passthru", "send any admin command", cmd_admin_passthru, admin_passthru_opts,
	  POS_DEVICE, NULL },
	{ "io-passthru", "send any I/O command", cmd_io_passthru, io_passthru_opts, POS_DEVICE, NULL },
	{ "inject-fault", "emulated controller: inject a fault (vendor admin command C1h)",
	  cmd_inject_fault, fault_opts, POS_DEVICE,
	  "Give exactly one of the options. The fault lives in the emulated controller: in its\n"
	  "device process (a named or file-backed device), where later commands meet it too, or\n"
	  "in this process (an unnamed one): use it inside 'unvme batch' then.\n" },
	{ "perf", "I/O benchmark", cmd_perf, perf_opts, POS_DEVICE, perf_details },
	{ "kv-write", "key-value store (kv_store)", cmd_kv_write, kv_write_opts, POS_DEVICE,
	  kv_details },
	{ "kv-read", "key-value retrieve (kv_retrieve)", cmd_kv_read, kv_read_opts, POS_DEVICE,
	  kv_details },
	{ "kv-delete", "key-value delete (kv_delete)", cmd_kv_delete, kv_key_opts, POS_DEVICE,
	  kv_details },
	{ "kv-exist", "does a key exist (kv_exist)", cmd_kv_exist, kv_key_opts, POS_DEVICE,
	  kv_details },
	{ "kv-open-it", "open a key iterator (kv_iterate_open)", cmd_kv_open_it, kv_open_it_opts,
	  POS_DEVICE, kv_details },
	{ "kv-read-it", "read an iterator's next keys (kv_iterate_read)", cmd_kv_read_it,
	  kv_read_it_opts, POS_DEVICE, kv_details },
	{ "kv-close-it", "close an iterator (kv_iterate_close)", cmd_kv_close_it, kv_close_it_opts,
	  POS_DEVICE, kv_details },
	{ "kv-it-info", "the device's open iterators (kv_iterate_info)", cmd_kv_it_info, fmt_opts,
	  POS_DEVICE, kv_details },
	{ "zns-id-ctrl", "ZNS Identify Controller (CNS 06h, CSI 02h)", cmd_zns_id_ctrl, fmt_opts,
	  POS_DEVICE, zns_details },
	{ "zns-id-ns", "ZNS Identify Namespace (CNS 05h, CSI 02h)", cmd_zns_id_ns, zns_ns_opts,
	  POS_DEVICE, zns_details },
	{ "zns-report-zones", "Zone Management Receive: report zones", cmd_zns_report_zones,
	  zns_report_opts, POS_DEVICE, zns_details },
	{ "zns-open-zone", "Zone Management Send: open zone", cmd_zns_open_zone, zns_send_opts,
	  POS_DEVICE, zns_details },
	{ "zns-close-zone", "Zone Management Send: close zone", cmd_zns_close_zone, zns_send_opts,
	  POS_DEVICE, zns_details },
	{ "zns-finish-zone", "Zone Management Send: finish zone", cmd_zns_finish_zone, zns_send_opts,
	  POS_DEVICE, zns_details },
	{ "zns-reset-zone", "Zone Management Send: reset zone", cmd_zns_reset_zone, zns_send_opts,
	  POS_DEVICE, zns_details },
	{ "zns-offline-zone", "Zone Management Send: offline zone", cmd_zns_offline_zone,
	  zns_send_opts, POS_DEVICE, zns_details },
	{ "zns-zone-append", "Zone Append: the device picks the LBA", cmd_zns_zone_append,
	  zns_append_opts, POS_DEVICE, zns_details },
	{ "zns-changed-zone-list", "Changed Zone List log (BFh)", cmd_zns_changed_zone_list,
	  zns_changed_opts, POS_DEVICE, zns_details },
	{ "unplug", "emulated device: pull the card out (surprise removal)", cmd_unplug, fmt_opts,
	  POS_DEVICE, hotplug_details },
	{ "plug", "emulated device: put the card (or a replacement) back", cmd_plug, plug_opts,
	  POS_DEVICE, hotplug_details },
	{ "monitor", "print attach/detach and Asynchronous Events as they happen", cmd_monitor,
	  monitor_opts, POS_DEVICE, monitor_details },
	{ "batch", "run several commands in one process", cmd_batch, batch_opts, POS_DEVICE,
	  batch_details },
	{ "serve", "run a device in a device process of its own, or stop one", cmd_serve,
	  serve_opts, POS_DEVICE, serve_details },
	{ "mkfs", "make a BlobFS file system on a namespace", cmd_mkfs, mkfs_opts, POS_DEVICE,
	  fs_details },
	{ "fsck", "check (and repair) a BlobFS file system", cmd_fsck, fsck_opts, POS_DEVICE,
	  fs_details },
	{ "target", "serve devices as NVMe/TCP subsystems", cmd_target, target_opts, POS_NONE,
	  target_details },
	{ "discover", "read an NVMe/TCP or NVMe/RDMA Discovery Controller's log", cmd_discover, discover_opts,
	  POS_ADDRESS, NULL },
	{ "connect", "connect to an NVMe/TCP or NVMe/RDMA subsystem (and name it)", cmd_connect, connect_opts,
	  POS_ADDRESS, fabrics_details },
	{ "connect-all", "connect to every subsystem a discovery log lists", cmd_connect_all,
	  connect_all_opts, POS_ADDRESS, fabrics_details },
	{ "disconnect", "forget a name recorded by connect --alias", cmd_disconnect, no_opts,
	  POS_FILE, fabrics_details },

	{ "help", "this help, or a command's", cmd_help, no_opts, POS_COMMAND, NULL },
	{ "version", "print the version", cmd_version, no_opts, POS_NONE, NULL },
	{ NULL, NULL, NULL, NULL, POS_NONE, NULL },
};

const struct cli_raw_cmd cli_raw_commands[] = {
	{ "fs", "look inside a BlobFS without mounting it: ls, cat, put, get, rm, ...", cmd_fs_raw,
	  fs_cmd_details },
	{ "fuse", "mount a BlobFS with FUSE", cmd_fuse_raw, fuse_details },
	{ NULL, NULL, NULL, NULL },
};

const struct cli_raw_cmd *cli_find_raw(const char *name)
{
	for (const struct cli_raw_cmd *r = cli_raw_commands; r->name; r++)
		if (strcmp(r->name, name) == 0)
			return r;
	return NULL;
}

const struct cli_cmd *cli_find_command(const char *name)
{
	for (const struct cli_cmd *c = cli_commands; c->name; c++)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

void cli_print_usage(FILE *f)
{
	fprintf(f, "usage: unvme <command> [<device>] [options]\n\n"
		   "The device is a name from 'unvme devices', an emu:// URI or a PCI address;\n"
		   "it defaults to %s.\n\ncommands:\n", CLI_DEFAULT_DEVICE);
	for (const struct cli_cmd *c = cli_commands; c->name; c++)
		fprintf(f, "  %-15s %s\n", c->name, c->summary);
	for (const struct cli_raw_cmd *r = cli_raw_commands; r->name; r++)
		fprintf(f, "  %-15s %s\n", r->name, r->summary);
	fprintf(f, "\nexit codes:\n"
		   "  0  success\n"
		   "  1  the device returned an NVMe error status (printed by name)\n"
		   "  2  usage error: unknown option, bad value, missing argument\n"
		   "  3  the device could not be opened, or a host-side failure\n"
		   "\nSee 'unvme <command> --help' for a command's options.\n");
}

void cli_print_command_help(FILE *f, const struct cli_cmd *c)
{
	const char *pos = "";
	switch (c->pos) {
	case POS_DEVICE: pos = " [<device>]"; break;
	case POS_FILE: pos = " [<file>]"; break;
	case POS_COMMAND: pos = " [<command>]"; break;
	case POS_ADDRESS: pos = " [nvme-tcp|nvme-rdma://HOST:PORT[/NQN]]"; break;
	case POS_NONE: break;
	}
	fprintf(f, "usage: unvme %s%s [options]\n  %s\n", c->name, pos, c->summary);
	if (c->details)
		fprintf(f, "\n%s", c->details);
	fprintf(f, "\noptions:\n");
	for (const struct opt_def *o = c->opts; o->name; o++) {
		char left[64];
		const char *mv = o->kind == OPT_FLAG ? "" : (o->metavar ? o->metavar : "VALUE");
		if (o->short_name)
			snprintf(left, sizeof(left), "-%c, --%s%s%s", o->short_name, o->name,
				 *mv ? " " : "", mv);
		else
			snprintf(left, sizeof(left), "    --%s%s%s", o->name, *mv ? " " : "", mv);
		fprintf(f, "  %-30s %s", left, o->help);
		if (o->def && o->kind != OPT_FMT)
			fprintf(f, " [default %s]", o->def);
		fprintf(f, "%s\n", o->required ? " (required)" : "");
	}
	fprintf(f, "  %-30s %s\n", "-h, --help", "this help");
}
