/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * admin-passthru and io-passthru: any command, dword by dword, as nvme-cli's passthru does.
 * This is how a user sends what no other command would (a bad opcode, a queue that already
 * exists) and sees the device's answer by name.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

#define PASSTHRU_MAX (16u << 20)

static void build_cmd(const struct cli_args *a, struct nvme_sqe *cmd)
{
	memset(cmd, 0, sizeof(*cmd));
	cmd->opc = a->opcode;
	cmd->flags = a->flags;
	cmd->nsid = a->nsid;
	cmd->cdw2 = a->cdw2;
	cmd->cdw3 = a->cdw3;
	cmd->cdw10 = a->cdw10;
	cmd->cdw11 = a->cdw11;
	cmd->cdw12 = a->cdw12;
	cmd->cdw13 = a->cdw13;
	cmd->cdw14 = a->cdw14;
	cmd->cdw15 = a->cdw15;
}

static int check_args(const struct cli_args *a)
{
	if (a->dir_read && a->dir_write)
		return cli_fail(a->cmd, EXIT_USAGE, "give --read or --write, not both");
	if (a->input_file && !a->dir_write)
		return cli_fail(a->cmd, EXIT_USAGE, "--input-file needs --write");
	if ((a->dir_read || a->dir_write) && a->data_len == 0)
		return cli_fail(a->cmd, EXIT_USAGE, "--read and --write need --data-len");
	if (a->data_len > PASSTHRU_MAX)
		return cli_fail(a->cmd, EXIT_USAGE, "invalid value '%u' for --data-len (-l): at most %u",
				a->data_len, PASSTHRU_MAX);
	return EXIT_OK;
}

/* Fills buf with --prefill, then --input-file over it for a write. */
static int load_input(const struct cli_args *a, uint8_t *buf)
{
	if (buf)
		memset(buf, a->pattern, a->data_len);
	if (!a->dir_write || !a->input_file)
		return EXIT_OK;
	void *file;
	size_t len;
	int rc = cli_read_file(a->cmd, a->input_file, PASSTHRU_MAX, &file, &len);
	if (rc)
		return rc;
	memcpy(buf, file, len < a->data_len ? len : a->data_len);
	free(file);
	return EXIT_OK;
}

static void print_result(const struct cli_args *a, const struct nvme_cqe *cpl, const uint8_t *buf)
{
	bool show = a->dir_read && a->data_len;
	if (show && a->raw_binary) {
		fwrite(buf, 1, a->data_len, stdout);
		return;
	}
	if (a->fmt == UNVME_FMT_JSON) {
		json_object *o = json_object_new_object();
		json_object_object_add(o, "opcode", json_object_new_int(a->opcode));
		json_object_object_add(o, "status", json_object_new_int(0));
		json_object_object_add(o, "dw0", json_object_new_int64(cpl->dw0));
		json_object_object_add(o, "dw1", json_object_new_int64(cpl->dw1));
		if (show) {
			char *hex = malloc((size_t)a->data_len * 2 + 1);
			if (hex) {
				for (uint32_t i = 0; i < a->data_len; i++)
					snprintf(hex + 2 * i, 3, "%02x", buf[i]);
				json_object_object_add(o, "data", json_object_new_string(hex));
				free(hex);
			}
		}
		cli_json_print(o);
		return;
	}
	printf("%s: success, opcode 0x%02x, result (DW0) 0x%08x\n", a->cmd, a->opcode, cpl->dw0);
	if (show)
		unvme_print_hex(stdout, buf, a->data_len, UNVME_FMT_TEXT);
}

/* --show-command and --dry-run print the command on stderr (stdout stays the result's);
 * returns true when the command must not be sent. */
static bool show_command(const struct cli_args *a, const struct nvme_sqe *cmd)
{
	if (a->show_cmd || a->dry_run)
		unvme_print_sqe(stderr, cmd, UNVME_FMT_TEXT);
	if (a->dry_run)
		fprintf(stderr, "%s: dry run, nothing sent\n", a->cmd);
	return a->dry_run;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void show_latency(const struct cli_args *a, uint64_t start)
{
	if (a->latency)
		fprintf(stderr, "%s: latency %llu us\n", a->cmd,
			(unsigned long long)((now_ns() - start) / 1000));
}

int cmd_admin_passthru(struct cli_args *a)
{
	int rc = check_args(a);
	if (rc)
		return rc;
	struct unvme_ctrlr *c;
	rc = cli_open(a, &c);
	if (rc)
		return rc;
	uint8_t *buf = a->data_len ? calloc(1, a->data_len) : NULL;
	if (a->data_len && !buf)
		return cli_fail(a->cmd, EXIT_HOST, "out of memory");
	rc = load_input(a, buf);
	if (rc == EXIT_OK) {
		struct nvme_sqe cmd;
		struct nvme_cqe cpl;
		memset(&cpl, 0, sizeof(cpl));
		build_cmd(a, &cmd);
		if (!show_command(a, &cmd)) {
			uint64_t start = now_ns();
			rc = cli_result(a->cmd, unvme_admin(c, &cmd, buf, a->data_len, &cpl), 0);
			show_latency(a, start);
			if (rc == EXIT_OK)
				print_result(a, &cpl, buf);
		}
	}
	free(buf);
	return rc;
}

int cmd_io_passthru(struct cli_args *a)
{
	int rc = check_args(a);
	if (rc)
		return rc;
	struct unvme_ctrlr *c;
	struct unvme_qpair *qp;
	rc = cli_open(a, &c);
	if (rc == EXIT_OK)
		rc = cli_io_qpair(a, c, &qp);
	if (rc)
		return rc;
	uint8_t *buf = NULL;
	if (a->data_len) {
		buf = unvme_dma_zalloc(a->data_len, 4096);
		if (!buf)
			return cli_result(a->cmd, -ENOMEM, 0);
	}
	rc = load_input(a, buf);
	if (rc == EXIT_OK) {
		struct unvme_ns *ns = unvme_ctrlr_ns(c, a->nsid);
		struct nvme_sqe cmd;
		struct nvme_cqe cpl;
		memset(&cpl, 0, sizeof(cpl));
		build_cmd(a, &cmd);
		if (!show_command(a, &cmd)) {
			uint64_t start = now_ns();
			rc = cli_result(a->cmd, unvme_qpair_cmd_sync(qp, &cmd, buf, a->data_len, &cpl),
					ns ? unvme_ns_csi(ns) : NVME_CSI_NVM);
			show_latency(a, start);
			if (rc == EXIT_OK)
				print_result(a, &cpl, buf);
		}
	}
	if (buf)
		unvme_dma_free(buf);
	return rc;
}
