/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Controller-wide commands: format, reset, show-regs and inject-fault (the emulated
 * controller's vendor admin command).
 */
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void describe_ns(struct unvme_ns *ns, char *out, size_t len)
{
	char size[32];
	cli_human_size(unvme_ns_nlbas(ns) * unvme_ns_lba_size(ns), size, sizeof(size));
	snprintf(out, len, "namespace %u: %s (%llu blocks of %u bytes)", unvme_ns_id(ns), size,
		 (unsigned long long)unvme_ns_nlbas(ns), unvme_ns_lba_size(ns));
}

int cmd_format(struct cli_args *a)
{
	bool have_nsid = cli_given(a, "namespace-id");
	if (have_nsid == a->all)
		return cli_fail(a->cmd, EXIT_USAGE, "give either --namespace-id (-n) or --all");
	if (a->ses > 7)
		return cli_fail(a->cmd, EXIT_USAGE, "invalid value '%u' for --ses (-s): 0..7", a->ses);
	if (a->lbaf > 63)
		return cli_fail(a->cmd, EXIT_USAGE, "invalid value '%u' for --lbaf (-l): 0..63", a->lbaf);
	struct unvme_ctrlr *c;
	int rc = cli_open(a, &c);
	if (rc)
		return rc;
	uint32_t nsid = a->all ? 0xffffffffu : a->nsid;
	struct unvme_ns *ns = a->all ? NULL : unvme_ctrlr_ns(c, nsid);
	uint8_t lbaf = a->lbaf;
	if (!cli_given(a, "lbaf")) {
		/* keep the current format: the index of a namespace, or of the first one for --all */
		struct unvme_ns *ref = ns ? ns : unvme_ctrlr_ns(c, unvme_ctrlr_first_nsid(c));
		lbaf = ref ? (uint8_t)nvme_ns_flbas_index(unvme_ns_identify_data(ref)) : 0;
	}

	if (!a->force && a->fmt == UNVME_FMT_JSON) {
		json_object *o = json_object_new_object();
		json_object *list = json_object_new_array();
		if (!a->all)
			json_object_array_add(list, json_object_new_int64(nsid));
		for (uint32_t id = unvme_ctrlr_first_nsid(c); a->all && id; id = unvme_ctrlr_next_nsid(c, id))
			json_object_array_add(list, json_object_new_int64(id));
		json_object_object_add(o, "would_erase", list);
		json_object_object_add(o, "lbaf", json_object_new_int(lbaf));
		json_object_object_add(o, "ses", json_object_new_int(a->ses));
		json_object_object_add(o, "done", json_object_new_boolean(0));
		cli_json_print(o);
		return cli_fail(a->cmd, EXIT_USAGE, "nothing done: add --force to erase");
	}
	if (!a->force) {
		char line[256];
		printf("format: would erase, with LBA format %u and secure erase setting %u:\n", lbaf,
		       a->ses);
		if (ns) {
			describe_ns(ns, line, sizeof(line));
			printf("  %s\n", line);
		} else if (a->all) {
			for (uint32_t id = unvme_ctrlr_first_nsid(c); id; id = unvme_ctrlr_next_nsid(c, id)) {
				struct unvme_ns *n = unvme_ctrlr_ns(c, id);
				if (n) {
					describe_ns(n, line, sizeof(line));
					printf("  %s\n", line);
				}
			}
		} else {
			printf("  namespace %u (not an active namespace: the device will decide)\n", nsid);
		}
		return cli_fail(a->cmd, EXIT_USAGE, "nothing done: add --force to erase");
	}

	rc = cli_result(a->cmd, unvme_format(c, nsid, lbaf, a->ses), 0);
	if (rc)
		return rc;
	json_object *arr = a->fmt == UNVME_FMT_JSON ? json_object_new_array() : NULL;
	for (uint32_t id = unvme_ctrlr_first_nsid(c); id; id = unvme_ctrlr_next_nsid(c, id)) {
		if (!a->all && id != nsid)
			continue;
		struct unvme_ns *n = unvme_ctrlr_ns(c, id);
		if (!n)
			continue;
		if (arr) {
			json_object *o = json_object_new_object();
			json_object_object_add(o, "nsid", json_object_new_int64(id));
			json_object_object_add(o, "lbaf", json_object_new_int(
				(int)nvme_ns_flbas_index(unvme_ns_identify_data(n))));
			json_object_object_add(o, "lba_size", json_object_new_int64(unvme_ns_lba_size(n)));
			json_object_object_add(o, "nlbas", json_object_new_int64((int64_t)unvme_ns_nlbas(n)));
			json_object_array_add(arr, o);
		} else {
			char line[256];
			describe_ns(n, line, sizeof(line));
			printf("format: %s, LBA format %u\n", line,
			       nvme_ns_flbas_index(unvme_ns_identify_data(n)));
		}
	}
	if (arr) {
		json_object *root = json_object_new_object();
		json_object_object_add(root, "formatted", arr);
		cli_json_print(root);
	}
	return EXIT_OK;
}

/* Device Self-test (14h): CDW10 STC 1 short, 2 extended, Fh abort. A controller without it
 * (OACS bit 4 clear, as the emulated one) answers Invalid Command Opcode, printed by name. */
int cmd_device_self_test(struct cli_args *a)
{
	uint8_t stc = a->action;
	if (stc != 1 && stc != 2 && stc != 0xe && stc != 0xf)
		return cli_fail(a->cmd, EXIT_USAGE,
				"invalid value '%u' for --self-test-code (-s): 1 short, 2 extended, "
				"0xe vendor, 0xf abort", stc);
	struct unvme_ctrlr *c;
	int rc = cli_open(a, &c);
	if (rc)
		return rc;
	struct nvme_sqe cmd;
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_ADM_DEV_SELF_TEST;
	cmd.nsid = a->nsid;
	cmd.cdw10 = stc;
	rc = cli_result(a->cmd, unvme_admin(c, &cmd, NULL, 0, NULL), 0);
	if (rc)
		return rc;
	const char *what = stc == 0xf ? "aborted" : "started";
	if (a->fmt == UNVME_FMT_JSON) {
		json_object *o = json_object_new_object();
		json_object_object_add(o, "self_test_code", json_object_new_int(stc));
		json_object_object_add(o, "result", json_object_new_string(what));
		cli_json_print(o);
	} else {
		printf("device-self-test: %s (code %#x); see 'unvme self-test-log'\n", what, stc);
	}
	return EXIT_OK;
}

int cmd_reset(struct cli_args *a)
{
	struct unvme_ctrlr *c;
	int rc = cli_open(a, &c);
	if (rc)
		return rc;
	rc = cli_result(a->cmd, unvme_ctrlr_reset(c), 0);
	if (rc)
		return rc;
	struct nvme_id_ctrl *id = calloc(1, sizeof(*id));
	if (!id)
		return cli_fail(a->cmd, EXIT_HOST, "out of memory");
	rc = cli_result(a->cmd, unvme_identify(c, NVME_CNS_CTRL, 0, 0, id), 0);
	if (rc == EXIT_OK) {
		char fr[9];
		cli_id_string(id->fr, sizeof(id->fr), fr, sizeof(fr));
		if (a->fmt == UNVME_FMT_JSON) {
			json_object *o = json_object_new_object();
			json_object_object_add(o, "reset", json_object_new_boolean(1));
			json_object_object_add(o, "firmware", json_object_new_string(fr));
			cli_json_print(o);
		} else {
			printf("reset: controller %s reset; running firmware revision %s\n",
			       unvme_ctrlr_devid(c), fr);
		}
	}
	free(id);
	return rc;
}

/* The registers as they are now, decoded field by field by the shared printer. */
int cmd_show_regs(struct cli_args *a)
{
	struct unvme_ctrlr *c;
	int rc = cli_open(a, &c);
	if (rc)
		return rc;
	struct nvme_regs_snapshot regs;
	rc = unvme_ctrlr_regs(c, &regs);
	if (rc)
		return cli_result(a->cmd, rc, 0); /* a kernel-owned device has no registers for us */
	unvme_print_regs(stdout, &regs, a->fmt);
	return EXIT_OK;
}

int cmd_inject_fault(struct cli_args *a)
{
	unsigned n = a->fault_fatal + cli_given(a, "drop") + cli_given(a, "swallow") +
		     cli_given(a, "media-error") + a->fault_clear + cli_given(a, "zone-read-only");
	if (n != 1)
		return cli_fail(a->cmd, EXIT_USAGE, "give exactly one of --fatal, --drop N, --swallow N, "
				"--media-error N, --clear, --zone-read-only LBA");
	struct nvme_sqe cmd;
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_ADM_EMU_FAULT;
	const char *what;
	char buf[96];
	if (a->fault_fatal) {
		cmd.cdw10 = NVME_EMU_FAULT_FATAL;
		what = "controller fatal status set: commands fail until a reset";
	} else if (cli_given(a, "drop")) {
		cmd.cdw10 = NVME_EMU_FAULT_DROP;
		cmd.cdw11 = a->fault_drop;
		snprintf(buf, sizeof(buf), "the next %u I/O commands will never complete", a->fault_drop);
		what = buf;
	} else if (cli_given(a, "swallow")) {
		cmd.cdw10 = NVME_EMU_FAULT_SWALLOW;
		cmd.cdw11 = a->fault_swallow;
		snprintf(buf, sizeof(buf), "the next %u I/O commands will be lost for good (Abort "
			 "cannot find them)", a->fault_swallow);
		what = buf;
	} else if (cli_given(a, "media-error")) {
		cmd.cdw10 = NVME_EMU_FAULT_MEDIA_ERROR;
		cmd.cdw11 = a->fault_media;
		snprintf(buf, sizeof(buf), "the next %u reads/writes will fail with a media error",
			 a->fault_media);
		what = buf;
	} else if (cli_given(a, "zone-read-only")) {
		cmd.cdw10 = NVME_EMU_FAULT_ZONE_READ_ONLY;
		cmd.nsid = a->nsid;
		cmd.cdw12 = (uint32_t)a->fault_zone_lba;
		cmd.cdw13 = (uint32_t)(a->fault_zone_lba >> 32);
		snprintf(buf, sizeof(buf), "the zone holding LBA %llu of namespace %u is read only",
			 (unsigned long long)a->fault_zone_lba, a->nsid);
		what = buf;
	} else {
		cmd.cdw10 = NVME_EMU_FAULT_NONE;
		what = "injected faults cleared";
	}
	struct unvme_ctrlr *c;
	int rc = cli_open(a, &c);
	if (rc)
		return rc;
	int st = unvme_admin(c, &cmd, NULL, 0, NULL);
	/* A controller that goes fatal may never complete the command that made it so. */
	if (st < 0 && a->fault_fatal && unvme_ctrlr_is_failed(c))
		st = 0;
	rc = cli_result(a->cmd, st, 0);
	if (rc)
		return rc;
	if (a->fmt == UNVME_FMT_JSON) {
		json_object *o = json_object_new_object();
		json_object_object_add(o, "command", json_object_new_string(a->cmd));
		json_object_object_add(o, "result", json_object_new_string(what));
		cli_json_print(o);
	} else {
		printf("inject-fault: %s\n", what);
	}
	return EXIT_OK;
}
