/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * get-feature and set-feature. Features that carry a data structure (LBA Range Type,
 * Timestamp, Host Identifier...) are read with a buffer of their size so that the data is
 * shown too; the rest only have the value in completion dword 0.
 */
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

struct feature_info {
	uint8_t fid;
	const char *name;
	uint32_t data_len; /* bytes of data Get Features returns, 0 for value-only features */
};

/* Names and data sizes from NVMe Base 2.0, Figure "Feature Identifiers". */
static const struct feature_info features[] = {
	{ NVME_FEAT_ARBITRATION, "Arbitration", 0 },
	{ NVME_FEAT_POWER_MGMT, "Power Management", 0 },
	{ NVME_FEAT_LBA_RANGE, "LBA Range Type", 4096 },
	{ NVME_FEAT_TEMP_THRESH, "Temperature Threshold", 0 },
	{ NVME_FEAT_ERR_RECOVERY, "Error Recovery", 0 },
	{ NVME_FEAT_VOLATILE_WC, "Volatile Write Cache", 0 },
	{ NVME_FEAT_NUM_QUEUES, "Number of Queues", 0 },
	{ NVME_FEAT_IRQ_COALESCE, "Interrupt Coalescing", 0 },
	{ NVME_FEAT_IRQ_CONFIG, "Interrupt Vector Configuration", 0 },
	{ NVME_FEAT_WRITE_ATOMIC, "Write Atomicity Normal", 0 },
	{ NVME_FEAT_ASYNC_EVENT, "Asynchronous Event Configuration", 0 },
	{ NVME_FEAT_AUTO_PST, "Autonomous Power State Transition", 256 },
	{ NVME_FEAT_HOST_MEM_BUF, "Host Memory Buffer", 4096 },
	{ NVME_FEAT_TIMESTAMP, "Timestamp", 8 },
	{ NVME_FEAT_KATO, "Keep Alive Timer", 0 },
	{ NVME_FEAT_HCTM, "Host Controlled Thermal Management", 0 },
	{ NVME_FEAT_NOPSC, "Non-Operational Power State Config", 0 },
	{ NVME_FEAT_RRL, "Read Recovery Level Config", 0 },
	{ NVME_FEAT_PLM_CONFIG, "Predictable Latency Mode Config", 512 },
	{ NVME_FEAT_PLM_WINDOW, "Predictable Latency Mode Window", 0 },
	{ NVME_FEAT_HOST_BEHAVIOR, "Host Behavior Support", 512 },
	{ NVME_FEAT_SANITIZE, "Sanitize Config", 0 },
	{ NVME_FEAT_ENDURANCE_EVT, "Endurance Group Event Configuration", 0 },
	{ NVME_FEAT_IOCS_PROFILE, "I/O Command Set Profile", 0 },
	{ NVME_FEAT_SW_PROGRESS, "Software Progress Marker", 0 },
	{ NVME_FEAT_HOST_ID, "Host Identifier", 8 },
	{ NVME_FEAT_RESV_MASK, "Reservation Notification Mask", 0 },
	{ NVME_FEAT_RESV_PERSIST, "Reservation Persistence", 0 },
	{ NVME_FEAT_WRITE_PROTECT, "Namespace Write Protection Config", 0 },
};

static const struct feature_info *feature(uint8_t fid)
{
	for (size_t i = 0; i < sizeof(features) / sizeof(features[0]); i++)
		if (features[i].fid == fid)
			return &features[i];
	return NULL;
}

static const char *feature_name(uint8_t fid)
{
	const struct feature_info *f = feature(fid);
	if (f)
		return f->name;
	return fid >= 0xc0 ? "Vendor Specific" : "Unknown";
}

static const char *sel_name(uint8_t sel)
{
	static const char *names[] = { "Current", "Default", "Saved", "Supported capabilities" };
	return sel < 4 ? names[sel] : "Reserved";
}

int cmd_get_feature(struct cli_args *a)
{
	if (a->sel > 7)
		return cli_fail(a->cmd, EXIT_USAGE, "invalid value '%u' for --sel (-s): 0..3 (3 bits)",
				a->sel);
	struct unvme_ctrlr *c;
	int rc = cli_open(a, &c);
	if (rc)
		return rc;
	const struct feature_info *fi = feature(a->fid);
	uint32_t len = cli_given(a, "data-len") ? a->data_len : (fi ? fi->data_len : 0);
	/* "supported capabilities" returns only dword 0 */
	if (a->sel == NVME_FEAT_SEL_SUPPORTED && !cli_given(a, "data-len"))
		len = 0;
	uint8_t *buf = NULL;
	if (len) {
		buf = calloc(1, len);
		if (!buf)
			return cli_fail(a->cmd, EXIT_HOST, "out of memory");
	}
	struct nvme_sqe cmd;
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_ADM_GET_FEATURES;
	cmd.nsid = a->nsid;
	cmd.cdw10 = a->fid | ((uint32_t)a->sel << 8);
	cmd.cdw11 = a->cdw11;
	struct nvme_cqe cpl;
	memset(&cpl, 0, sizeof(cpl));
	rc = cli_result(a->cmd, unvme_admin(c, &cmd, buf, len, &cpl), 0);
	if (rc) {
		free(buf);
		return rc;
	}
	if (a->fmt == UNVME_FMT_JSON) {
		json_object *o = json_object_new_object();
		json_object_object_add(o, "fid", json_object_new_int(a->fid));
		json_object_object_add(o, "feature", json_object_new_string(feature_name(a->fid)));
		json_object_object_add(o, "sel", json_object_new_int(a->sel));
		json_object_object_add(o, "value", json_object_new_int64(cpl.dw0));
		if (len) {
			char *hex = malloc((size_t)len * 2 + 1);
			if (hex) {
				for (uint32_t i = 0; i < len; i++)
					snprintf(hex + 2 * i, 3, "%02x", buf[i]);
				json_object_object_add(o, "data", json_object_new_string(hex));
				free(hex);
			}
		}
		cli_json_print(o);
	} else {
		printf("get-feature:0x%02x (%s), %s value:0x%08x\n", a->fid, feature_name(a->fid),
		       sel_name(a->sel), cpl.dw0);
		if (len)
			unvme_print_hex(stdout, buf, len, UNVME_FMT_TEXT);
	}
	free(buf);
	return EXIT_OK;
}

int cmd_set_feature(struct cli_args *a)
{
	struct unvme_ctrlr *c;
	int rc = cli_open(a, &c);
	if (rc)
		return rc;
	uint32_t dw0 = 0;
	rc = cli_result(a->cmd, unvme_set_features(c, a->fid, a->nsid, a->value, a->save, &dw0), 0);
	if (rc)
		return rc;
	if (a->fmt == UNVME_FMT_JSON) {
		json_object *o = json_object_new_object();
		json_object_object_add(o, "fid", json_object_new_int(a->fid));
		json_object_object_add(o, "feature", json_object_new_string(feature_name(a->fid)));
		json_object_object_add(o, "value", json_object_new_int64(a->value));
		json_object_object_add(o, "save", json_object_new_boolean(a->save));
		json_object_object_add(o, "result", json_object_new_int64(dw0));
		cli_json_print(o);
	} else {
		printf("set-feature:0x%02x (%s), value:0x%08x, save:%s, result:0x%08x\n", a->fid,
		       feature_name(a->fid), a->value, a->save ? "yes" : "no", dw0);
	}
	return EXIT_OK;
}
