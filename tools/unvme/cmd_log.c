/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Log page commands: smart-log, error-log, fw-log, and get-log for any page as raw bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define GET_LOG_MAX (16u << 20) /* a sanity bound for get-log; real pages are far smaller */

static int read_log(struct cli_args *a, uint8_t lid, uint32_t nsid, void *buf, uint32_t len)
{
	struct unvme_ctrlr *c;
	int rc = cli_open(a, &c);
	if (rc)
		return rc;
	return cli_result(a->cmd, unvme_get_log_page(c, lid, nsid, buf, len, 0), 0);
}

int cmd_smart_log(struct cli_args *a)
{
	struct nvme_smart_log log;
	memset(&log, 0, sizeof(log));
	int rc = read_log(a, NVME_LOG_SMART, 0xffffffffu, &log, sizeof(log));
	if (rc)
		return rc;
	if (!cli_print_raw(a, &log, sizeof(log)))
		unvme_print_smart_log(stdout, &log, a->fmt);
	return EXIT_OK;
}

int cmd_error_log(struct cli_args *a)
{
	struct unvme_ctrlr *c;
	int rc = cli_open(a, &c);
	if (rc)
		return rc;
	/* ELPE is 0's based: the controller keeps ELPE+1 entries */
	uint32_t entries = a->entries ? a->entries : unvme_ctrlr_identify_data(c)->elpe + 1u;
	if (entries > 4096)
		return cli_fail(a->cmd, EXIT_USAGE, "invalid value '%u' for --log-entries (-e): at most 4096",
				entries);
	size_t len = (size_t)entries * sizeof(struct nvme_error_log);
	struct nvme_error_log *log = calloc(entries, sizeof(*log));
	if (!log)
		return cli_fail(a->cmd, EXIT_HOST, "out of memory");
	rc = cli_result(a->cmd, unvme_get_log_page(c, NVME_LOG_ERROR, 0xffffffffu, log, (uint32_t)len, 0),
			0);
	if (rc == EXIT_OK && !cli_print_raw(a, log, len))
		unvme_print_error_log(stdout, log, entries, a->fmt);
	free(log);
	return rc;
}

int cmd_fw_log(struct cli_args *a)
{
	struct nvme_fw_slot_log log;
	memset(&log, 0, sizeof(log));
	int rc = read_log(a, NVME_LOG_FW_SLOT, 0xffffffffu, &log, sizeof(log));
	if (rc)
		return rc;
	if (!cli_print_raw(a, &log, sizeof(log)))
		unvme_print_fw_slot_log(stdout, &log, a->fmt);
	return EXIT_OK;
}

int cmd_get_log(struct cli_args *a)
{
	if (a->log_len == 0 || a->log_len % 4 != 0 || a->log_len > GET_LOG_MAX)
		return cli_fail(a->cmd, EXIT_USAGE,
				"invalid value '%u' for --log-len (-l): a non-zero multiple of 4, at most %u",
				a->log_len, GET_LOG_MAX);
	if (a->offset % 4 != 0)
		return cli_fail(a->cmd, EXIT_USAGE,
				"invalid value '%llu' for --lpo: must be a multiple of 4",
				(unsigned long long)a->offset);
	if (a->lsp > 0x7f)
		return cli_fail(a->cmd, EXIT_USAGE, "invalid value '%u' for --lsp (-s): 0..127", a->lsp);
	struct unvme_ctrlr *c;
	int rc = cli_open(a, &c);
	if (rc)
		return rc;
	uint8_t *buf = calloc(1, a->log_len);
	if (!buf)
		return cli_fail(a->cmd, EXIT_HOST, "out of memory");

	/* Built by hand rather than with unvme_get_log_page so that LSP, RAE and CSI reach the
	 * device. */
	uint32_t numd = NVME_LOG_NUMD(a->log_len);
	struct nvme_sqe cmd;
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_ADM_GET_LOG_PAGE;
	cmd.nsid = a->nsid;
	cmd.cdw10 = a->lid | ((uint32_t)a->lsp << 8) | (a->rae ? 1u << 15 : 0) |
		    ((numd & 0xffffu) << 16);
	cmd.cdw11 = numd >> 16;
	cmd.cdw12 = (uint32_t)a->offset;
	cmd.cdw13 = (uint32_t)(a->offset >> 32);
	cmd.cdw14 = (uint32_t)a->csi << 24;
	rc = cli_result(a->cmd, unvme_admin(c, &cmd, buf, a->log_len, NULL), a->csi);
	if (rc == EXIT_OK && !cli_print_raw(a, buf, a->log_len))
		unvme_print_hex(stdout, buf, a->log_len, a->fmt);
	free(buf);
	return rc;
}
