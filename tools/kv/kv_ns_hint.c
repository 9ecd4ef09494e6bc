/* SPDX-License-Identifier: BSD-3-Clause */
/* The namespace behind a failed key-value call (kv_ns_hint.h). */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unvme/unvme.h"
#include "kv_apis.h"
#include "kv_ns_hint.h"

#define MAX_REMEMBERED NR_MAX_SSD

static char *remembered[MAX_REMEMBERED];
static int nremembered;

static const char *set_name(uint8_t csi)
{
	switch (csi) {
	case NVME_CSI_NVM:
		return "a block namespace (the NVM command set)";
	case NVME_CSI_ZNS:
		return "a zoned block namespace (the Zoned Namespace command set)";
	default:
		return "not a key-value namespace";
	}
}

bool kvt_no_kv_namespace(const char *devid, char *buf, size_t len)
{
	struct unvme_ctrlr *c;
	/* the process's one handle of the device: the SDK's, shared */
	if (!devid || unvme_ctrlr_open(devid, NULL, &c) != 0)
		return false;
	uint32_t first = 0;
	uint8_t first_csi = 0;
	bool kv = false;
	for (uint32_t id = unvme_ctrlr_first_nsid(c); id; id = unvme_ctrlr_next_nsid(c, id)) {
		struct unvme_ns *ns = unvme_ctrlr_ns(c, id);
		if (!ns)
			continue;
		if (unvme_ns_csi(ns) == NVME_CSI_KV)
			kv = true;
		if (!first) {
			first = id;
			first_csi = unvme_ns_csi(ns);
		}
	}
	unvme_ctrlr_close(c);
	if (kv || !first)
		return false;
	snprintf(buf, len, "%s has no key-value namespace: namespace %u is %s", devid, first,
		 set_name(first_csi));
	return true;
}

bool kvt_result_is_kv_answer(int result)
{
	/* statuses of the key-value command set itself (SCT 1 codes the SDK passes on) */
	return result == KV_SUCCESS || (result > 0 && result < 0x100 &&
					result != KV_ERR_INVALID_KEY_SIZE);
}

void kvt_remember_devices(const char *const *devids, int n)
{
	for (int i = 0; i < nremembered; i++)
		free(remembered[i]);
	nremembered = 0;
	for (int i = 0; i < n && i < MAX_REMEMBERED; i++)
		if (devids[i] && (remembered[nremembered] = strdup(devids[i])))
			nremembered++;
}

void kvt_remember_devices_of(const char *json_path)
{
	const char *ids[MAX_REMEMBERED];
	int n = 0;
	json_object *root = json_object_from_file(json_path), *dd;
	if (root && json_object_object_get_ex(root, "device_description", &dd)) {
		bool one = !json_object_is_type(dd, json_type_array);
		size_t count = one ? 1 : json_object_array_length(dd);
		for (size_t i = 0; i < count && n < MAX_REMEMBERED; i++) {
			json_object *d = one ? dd : json_object_array_get_idx(dd, i), *id;
			if (json_object_object_get_ex(d, "dev_id", &id) &&
			    json_object_is_type(id, json_type_string))
				ids[n++] = json_object_get_string(id);
		}
	}
	kvt_remember_devices(ids, n);
	json_object_put(root);
}

void kvt_explain_failure(const char *prog, int result)
{
	if (kvt_result_is_kv_answer(result))
		return;
	for (int i = 0; i < nremembered; i++) {
		char why[512];
		if (kvt_no_kv_namespace(remembered[i], why, sizeof(why)))
			fprintf(stderr, "%s: %s; key-value calls need a key-value namespace (a block "
				"namespace takes them in LBA mode: \"ssd_type\": \"lba\", kv_perf -m "
				"lba)\n", prog, why);
	}
}
