/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Log page commands: smart-log, error-log, fw-log, effects-log, self-test-log, sanitize-log,
 * and get-log for any page as raw bytes. A device without a page answers Invalid Log Page,
 * printed by name (the emulated controller keeps no self-test or sanitize log).
 */
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define GET_LOG_MAX (16u << 20) /* a sanity bound for get-log; real pages are far smaller */

/* Get Log Page built by hand rather than with unvme_get_log_page, so that LSP, RAE, the
 * offset and CSI reach the device (get-log, effects-log). Returns the library's result. */
static int get_log_page(struct unvme_ctrlr *c, const struct cli_args *a, uint8_t lid,
			uint32_t nsid, void *buf, uint32_t len)
{
	uint32_t numd = NVME_LOG_NUMD(len);
	struct nvme_sqe cmd;
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_ADM_GET_LOG_PAGE;
	cmd.nsid = nsid;
	cmd.cdw10 = lid | ((uint32_t)a->lsp << 8) | (a->rae ? 1u << 15 : 0) | ((numd & 0xffffu) << 16);
	cmd.cdw11 = numd >> 16;
	cmd.cdw12 = (uint32_t)a->offset;
	cmd.cdw13 = (uint32_t)(a->offset >> 32);
	cmd.cdw14 = (uint32_t)a->csi << 24;
	return unvme_admin(c, &cmd, buf, len, NULL);
}

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

int cmd_effects_log(struct cli_args *a)
{
	struct nvme_cmd_effects_log *log = calloc(1, sizeof(*log));
	if (!log)
		return cli_fail(a->cmd, EXIT_HOST, "out of memory");
	/* CSI in CDW14 selects the command set's page (0: NVM) */
	struct unvme_ctrlr *c;
	int rc = cli_open(a, &c);
	if (rc == EXIT_OK)
		rc = cli_result(a->cmd, get_log_page(c, a, NVME_LOG_CMD_EFFECTS, 0xffffffffu, log,
						     sizeof(*log)), 0);
	if (rc == EXIT_OK && !cli_print_raw(a, log, sizeof(*log)))
		unvme_print_cmd_effects_log(stdout, log, a->fmt);
	free(log);
	return rc;
}

static const char *self_test_code(unsigned code)
{
	switch (code) {
	case 0: return "none";
	case 1: return "short";
	case 2: return "extended";
	case 0xe: return "vendor specific";
	default: return "reserved";
	}
}

static const char *self_test_result(unsigned r)
{
	static const char *const names[] = {
		"completed without error", "aborted by a Device Self-test command",
		"aborted by a controller reset", "aborted by a namespace removal",
		"aborted by a Format NVM command", "fatal or unknown error",
		"completed with a failed segment (unknown)", "completed with failed segments",
		"aborted (unknown reason)", "aborted by a sanitize operation",
	};
	return r < sizeof(names) / sizeof(names[0]) ? names[r] : "reserved";
}

int cmd_self_test_log(struct cli_args *a)
{
	struct nvme_self_test_log log;
	memset(&log, 0, sizeof(log));
	int rc = read_log(a, NVME_LOG_DEV_SELF_TEST, 0xffffffffu, &log, sizeof(log));
	if (rc || cli_print_raw(a, &log, sizeof(log)))
		return rc;
	unsigned entries = a->entries && a->entries < 20 ? a->entries : 20;
	json_object *root = a->fmt == UNVME_FMT_JSON ? json_object_new_object() : NULL;
	json_object *list = root ? json_object_new_array() : NULL;
	if (root) {
		json_object_object_add(root, "current_operation", json_object_new_int(log.current_operation & 0xf));
		json_object_object_add(root, "completion", json_object_new_int(log.completion & 0x7f));
	} else {
		printf("Device Self-test Log:\ncurrent operation : %s", self_test_code(log.current_operation & 0xf));
		if (log.current_operation & 0xf)
			printf(" (%u%% done)", log.completion & 0x7f);
		printf("\n");
	}
	for (unsigned i = 0; i < entries; i++) {
		const struct nvme_self_test_result *r = &log.result[i];
		unsigned res = r->dsts & 0xf, code = r->dsts >> 4;
		if (res == 0xf)
			continue; /* an unused entry */
		if (list) {
			json_object *o = json_object_new_object();
			json_object_object_add(o, "result", json_object_new_int((int)res));
			json_object_object_add(o, "code", json_object_new_int((int)code));
			json_object_object_add(o, "segment", json_object_new_int(r->seg));
			json_object_object_add(o, "vdi", json_object_new_int(r->vdi));
			json_object_object_add(o, "poh", json_object_new_uint64(r->poh));
			if (r->vdi & 0x1)
				json_object_object_add(o, "nsid", json_object_new_int64(r->nsid));
			if (r->vdi & 0x2)
				json_object_object_add(o, "flba", json_object_new_uint64(r->flba));
			if (r->vdi & 0x4)
				json_object_object_add(o, "sct", json_object_new_int(r->sct));
			if (r->vdi & 0x8)
				json_object_object_add(o, "sc", json_object_new_int(r->sc));
			json_object_array_add(list, o);
		} else {
			printf("result %2u         : %s test, %s, at %llu power-on hours\n", i,
			       self_test_code(code), self_test_result(res), (unsigned long long)r->poh);
		}
	}
	if (root) {
		json_object_object_add(root, "results", list);
		cli_json_print(root);
	}
	return EXIT_OK;
}

int cmd_sanitize_log(struct cli_args *a)
{
	struct nvme_sanitize_log log;
	memset(&log, 0, sizeof(log));
	int rc = read_log(a, NVME_LOG_SANITIZE, 0xffffffffu, &log, sizeof(log));
	if (rc || cli_print_raw(a, &log, sizeof(log)))
		return rc;
	static const char *const status[] = { "never sanitized", "completed", "in progress",
					       "failed", "completed, no-deallocate ignored" };
	unsigned st = log.sstat & 0x7;
	const char *st_name = st < 5 ? status[st] : "reserved";
	if (a->fmt == UNVME_FMT_JSON) {
		json_object *o = json_object_new_object();
		json_object_object_add(o, "sprog", json_object_new_int(log.sprog));
		json_object_object_add(o, "sstat", json_object_new_int(log.sstat));
		json_object_object_add(o, "status", json_object_new_string(st_name));
		json_object_object_add(o, "scdw10", json_object_new_int64(log.scdw10));
		json_object_object_add(o, "eto", json_object_new_int64(log.eto));
		json_object_object_add(o, "etbe", json_object_new_int64(log.etbe));
		json_object_object_add(o, "etce", json_object_new_int64(log.etce));
		cli_json_print(o);
		return EXIT_OK;
	}
	printf("Sanitize Status Log:\nprogress : %u/65536\nstatus   : %s (%#x)\nscdw10   : %#x\n",
	       log.sprog, st_name, log.sstat, log.scdw10);
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

	rc = cli_result(a->cmd, get_log_page(c, a, a->lid, a->nsid, buf, a->log_len), a->csi);
	if (rc == EXIT_OK && !cli_print_raw(a, buf, a->log_len))
		unvme_print_hex(stdout, buf, a->log_len, a->fmt);
	free(buf);
	return rc;
}
