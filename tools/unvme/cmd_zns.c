/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Zoned namespace commands, after nvme-cli's zns plugin: `unvme zns <command>` (also spelled
 * `unvme zns-<command>`): id-ctrl, id-ns, report-zones, open-zone, close-zone, finish-zone,
 * reset-zone, offline-zone, zone-append, changed-zone-list. As with the block commands the
 * device judges every request; its zone statuses are printed by name.
 */
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"

struct zns_target {
	struct unvme_ctrlr *ctrlr;
	struct unvme_qpair *qp;
	struct unvme_ns *ns;
};

/* The controller, queue and zoned namespace a->nsid; a clear message when it is not zoned. */
static int zns_open(struct cli_args *a, struct zns_target *t, bool need_qp)
{
	int rc = cli_open(a, &t->ctrlr);
	if (rc)
		return rc;
	t->ns = unvme_ctrlr_ns(t->ctrlr, a->nsid);
	if (!t->ns)
		return cli_fail(a->cmd, EXIT_USAGE, "namespace %u is not an active namespace of %s",
				a->nsid, a->positional ? a->positional : cli_default_device);
	if (unvme_ns_csi(t->ns) != NVME_CSI_ZNS)
		return cli_fail(a->cmd, EXIT_USAGE, "namespace %u is not zoned (command set %u)", a->nsid,
				unvme_ns_csi(t->ns));
	if (need_qp)
		return cli_io_qpair(a, t->ctrlr, &t->qp);
	return EXIT_OK;
}

int cmd_zns_id_ctrl(struct cli_args *a)
{
	struct unvme_ctrlr *c;
	int rc = cli_open(a, &c);
	if (rc)
		return rc;
	struct nvme_id_ctrl_zns id;
	rc = cli_result(a->cmd, unvme_identify(c, NVME_CNS_CSI_CTRL, 0, NVME_CSI_ZNS, &id), 0);
	if (rc == EXIT_OK)
		unvme_print_id_ctrl_zns(stdout, &id, a->fmt);
	return rc;
}

int cmd_zns_id_ns(struct cli_args *a)
{
	struct zns_target t;
	int rc = zns_open(a, &t, false);
	if (rc)
		return rc;
	struct nvme_id_ns_zns id;
	rc = cli_result(a->cmd, unvme_identify(t.ctrlr, NVME_CNS_CSI_NS, a->nsid, NVME_CSI_ZNS, &id), 0);
	if (rc == EXIT_OK)
		unvme_print_id_ns_zns(stdout, &id, unvme_ns_identify_data(t.ns), a->fmt);
	return rc;
}

/* --state: a reporting option by number (0..7) or name. */
static int report_option(struct cli_args *a, uint8_t *opt)
{
	static const char *const names[] = { "all", "empty", "implicitly-open", "explicitly-open",
					     "closed", "full", "read-only", "offline" };
	*opt = NVME_ZRAS_ALL;
	if (!a->zns_state)
		return EXIT_OK;
	for (uint8_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char num[4];
		snprintf(num, sizeof(num), "%u", i);
		if (!strcasecmp(a->zns_state, names[i]) || !strcmp(a->zns_state, num)) {
			*opt = i;
			return EXIT_OK;
		}
	}
	return cli_fail(a->cmd, EXIT_USAGE,
			"invalid value '%s' for --state (-S): all, empty, implicitly-open, "
			"explicitly-open, closed, full, read-only, offline or 0..7", a->zns_state);
}

int cmd_zns_report_zones(struct cli_args *a)
{
	uint8_t opt;
	int rc = report_option(a, &opt);
	if (rc)
		return rc;
	struct zns_target t;
	rc = zns_open(a, &t, true);
	if (rc)
		return rc;
	struct unvme_zns_info zi;
	unvme_zns_info(t.ns, &zi);
	/* descriptors: --descs, else every zone from SLBA on */
	uint64_t want = a->zns_descs ? a->zns_descs : zi.nr_zones;
	uint32_t max_xfer = unvme_ctrlr_max_xfer(t.ctrlr);
	uint64_t len = sizeof(struct nvme_zone_report_hdr) + want * sizeof(struct nvme_zone_desc);
	if (len > max_xfer) {
		if (a->zns_descs)
			return cli_fail(a->cmd, EXIT_USAGE,
					"invalid value '%u' for --descs (-d): at most %zu descriptors fit "
					"one transfer", a->zns_descs,
					(max_xfer - sizeof(struct nvme_zone_report_hdr)) /
						sizeof(struct nvme_zone_desc));
		len = max_xfer;
	}
	uint8_t *buf = unvme_dma_zalloc(len, 4096);
	if (!buf)
		return cli_fail(a->cmd, EXIT_HOST, "out of DMA memory");
	struct nvme_sqe cmd;
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_CMD_ZONE_MGMT_RECV;
	cmd.nsid = a->nsid;
	cmd.cdw10 = (uint32_t)a->slba;
	cmd.cdw11 = (uint32_t)(a->slba >> 32);
	cmd.cdw12 = (uint32_t)(len / 4 - 1);
	cmd.cdw13 = NVME_ZRA_REPORT_ZONES | (uint32_t)opt << 8 | (a->zns_partial ? NVME_ZRA_PARTIAL : 0);
	rc = cli_result(a->cmd, unvme_qpair_cmd_sync(t.qp, &cmd, buf, len, NULL), NVME_CSI_ZNS);
	if (rc == EXIT_OK)
		unvme_print_zone_report(stdout, buf, len, a->fmt);
	unvme_dma_free(buf);
	return rc;
}

static void print_zone_done(struct cli_args *a, const char *action)
{
	if (a->fmt == UNVME_FMT_JSON) {
		json_object *o = json_object_new_object();
		json_object_object_add(o, "command", json_object_new_string(a->cmd));
		json_object_object_add(o, "result", json_object_new_string("success"));
		json_object_object_add(o, "nsid", json_object_new_int64(a->nsid));
		if (a->all)
			json_object_object_add(o, "select_all", json_object_new_boolean(true));
		else
			json_object_object_add(o, "zslba", json_object_new_int64((int64_t)a->slba));
		cli_json_print(o);
	} else if (a->all) {
		printf("zns %s: success, every zone it applies to (namespace %u)\n", action, a->nsid);
	} else {
		printf("zns %s: success, zone at SLBA %#llx (namespace %u)\n", action,
		       (unsigned long long)a->slba, a->nsid);
	}
}

static int zone_send(struct cli_args *a, uint8_t zsa, const char *action)
{
	if (a->all && cli_given(a, "start-lba"))
		return cli_fail(a->cmd, EXIT_USAGE, "give either --start-lba or --select-all, not both");
	struct zns_target t;
	int rc = zns_open(a, &t, true);
	if (rc)
		return rc;
	rc = cli_result(a->cmd, unvme_zone_mgmt_send_sync(t.ns, t.qp, a->slba, zsa, a->all), NVME_CSI_ZNS);
	if (rc == EXIT_OK)
		print_zone_done(a, action);
	return rc;
}

int cmd_zns_open_zone(struct cli_args *a)
{
	return zone_send(a, NVME_ZSA_OPEN, "open-zone");
}

int cmd_zns_close_zone(struct cli_args *a)
{
	return zone_send(a, NVME_ZSA_CLOSE, "close-zone");
}

int cmd_zns_finish_zone(struct cli_args *a)
{
	return zone_send(a, NVME_ZSA_FINISH, "finish-zone");
}

int cmd_zns_reset_zone(struct cli_args *a)
{
	return zone_send(a, NVME_ZSA_RESET, "reset-zone");
}

int cmd_zns_offline_zone(struct cli_args *a)
{
	return zone_send(a, NVME_ZSA_OFFLINE, "offline-zone");
}

int cmd_zns_zone_append(struct cli_args *a)
{
	struct zns_target t;
	int rc = zns_open(a, &t, true);
	if (rc)
		return rc;
	uint32_t lba_size = unvme_ns_lba_size(t.ns);
	uint8_t *data = NULL;
	uint32_t blocks = 0;
	rc = cli_write_data(a, lba_size, &data, &blocks);
	if (rc)
		return rc;
	struct unvme_zns_info zi;
	unvme_zns_info(t.ns, &zi);
	size_t len = (size_t)blocks * lba_size;
	if (len > zi.zasl_bytes) {
		free(data);
		return cli_fail(a->cmd, EXIT_USAGE,
				"%zu bytes is more than one Zone Append may carry (ZASL: %u bytes)", len,
				zi.zasl_bytes);
	}
	uint8_t *dma = unvme_dma_alloc(len, 4096);
	if (!dma) {
		free(data);
		return cli_fail(a->cmd, EXIT_HOST, "out of DMA memory");
	}
	memcpy(dma, data, len);
	free(data);
	uint64_t lba = 0;
	rc = cli_result(a->cmd, unvme_zone_append_sync(t.ns, t.qp, dma, a->slba, blocks, &lba), NVME_CSI_ZNS);
	unvme_dma_free(dma);
	if (rc != EXIT_OK)
		return rc;
	if (a->fmt == UNVME_FMT_JSON) {
		json_object *o = json_object_new_object();
		json_object_object_add(o, "command", json_object_new_string(a->cmd));
		json_object_object_add(o, "result", json_object_new_string("success"));
		json_object_object_add(o, "nsid", json_object_new_int64(a->nsid));
		json_object_object_add(o, "zslba", json_object_new_int64((int64_t)a->slba));
		json_object_object_add(o, "lba", json_object_new_int64((int64_t)lba));
		json_object_object_add(o, "blocks", json_object_new_int64(blocks));
		cli_json_print(o);
	} else {
		printf("Success appended data to LBA %#llx (%u blocks, namespace %u)\n",
		       (unsigned long long)lba, blocks, a->nsid);
	}
	return EXIT_OK;
}

int cmd_zns_changed_zone_list(struct cli_args *a)
{
	struct zns_target t;
	int rc = zns_open(a, &t, false);
	if (rc)
		return rc;
	struct nvme_changed_zone_log log;
	memset(&log, 0, sizeof(log));
	uint32_t numd = NVME_LOG_NUMD(sizeof(log));
	struct nvme_sqe cmd;
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_ADM_GET_LOG_PAGE;
	cmd.nsid = a->nsid;
	cmd.cdw10 = NVME_LOG_CHANGED_ZONES | (a->rae ? 1u << 15 : 0) | (numd & 0xffffu) << 16;
	cmd.cdw11 = numd >> 16;
	cmd.cdw14 = (uint32_t)NVME_CSI_ZNS << 24;
	rc = cli_result(a->cmd, unvme_admin(t.ctrlr, &cmd, &log, sizeof(log), NULL), NVME_CSI_ZNS);
	if (rc == EXIT_OK)
		unvme_print_changed_zones(stdout, &log, a->fmt);
	return rc;
}
