/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Identify commands: id-ctrl, id-ns, list-ns, ns-descs. Each sends Identify with the CNS the
 * user asked for (the driver's cached copy is not used, so the output is what the device says
 * now) and prints the structure with the library's printers.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Sends Identify into a fresh 4 KiB buffer; on success *out holds it (caller frees). */
static int identify(struct cli_args *a, uint8_t cns, uint32_t nsid, uint8_t csi, void **out)
{
	struct unvme_ctrlr *c;
	int rc = cli_open(a, &c);
	if (rc)
		return rc;
	void *buf = calloc(1, 4096);
	if (!buf)
		return cli_fail(a->cmd, EXIT_HOST, "out of memory");
	rc = unvme_identify(c, cns, nsid, csi, buf);
	if (rc) {
		free(buf);
		return cli_result(a->cmd, rc, 0);
	}
	*out = buf;
	return EXIT_OK;
}

int cmd_id_ctrl(struct cli_args *a)
{
	bool csi_form = cli_given(a, "csi");
	void *buf = NULL;
	int rc = identify(a, csi_form ? NVME_CNS_CSI_CTRL : NVME_CNS_CTRL, 0, a->csi, &buf);
	if (rc)
		return rc;
	if (cli_print_raw(a, buf, 4096))
		;
	else if (!csi_form)
		unvme_print_id_ctrl(stdout, buf, a->fmt);
	else if (a->csi == NVME_CSI_NVM)
		unvme_print_id_ctrl_nvm(stdout, buf, a->fmt);
	else if (a->csi == NVME_CSI_ZNS)
		unvme_print_id_ctrl_zns(stdout, buf, a->fmt);
	else
		unvme_print_hex(stdout, buf, 4096, a->fmt);
	free(buf);
	return EXIT_OK;
}

int cmd_id_ns(struct cli_args *a)
{
	bool csi_form = cli_given(a, "csi");
	void *buf = NULL;
	int rc = identify(a, csi_form ? NVME_CNS_CSI_NS : NVME_CNS_NS, a->nsid, a->csi, &buf);
	if (rc)
		return rc;
	if (cli_print_raw(a, buf, 4096))
		;
	else if (!csi_form)
		unvme_print_id_ns(stdout, buf, a->fmt);
	else if (a->csi == NVME_CSI_NVM)
		unvme_print_id_ns_nvm(stdout, buf, a->fmt);
	else if (a->csi == NVME_CSI_ZNS)
		unvme_print_id_ns_zns(stdout, buf, NULL, a->fmt);
	else
		unvme_print_hex(stdout, buf, 4096, a->fmt);
	free(buf);
	return EXIT_OK;
}

int cmd_list_ns(struct cli_args *a)
{
	/* as nvme-cli: -n lists the ids above NSID, -a the allocated (not only attached) ones */
	bool csi_form = cli_given(a, "csi");
	if (a->nsid >= 0xfffffffeu)
		return cli_fail(a->cmd, EXIT_USAGE,
				"invalid value '%u' for --namespace-id (-n): the list starts above it, "
				"so at most 4294967293", a->nsid);
	uint8_t cns = a->all ? (csi_form ? NVME_CNS_CSI_ALLOC_NS_LIST : NVME_CNS_ALLOC_NS_LIST)
			     : (csi_form ? NVME_CNS_CSI_ACTIVE_NS_LIST : NVME_CNS_ACTIVE_NS_LIST);
	void *buf = NULL;
	int rc = identify(a, cns, a->nsid, a->csi, &buf);
	if (rc)
		return rc;
	unvme_print_ns_list(stdout, buf, a->fmt);
	free(buf);
	return EXIT_OK;
}

/* ns-rescan: the driver reads the active namespace list again (a namespace attached,
 * detached or formatted since the device was opened) and shows it. */
int cmd_ns_rescan(struct cli_args *a)
{
	struct unvme_ctrlr *c;
	int rc = cli_open(a, &c);
	if (rc)
		return rc;
	rc = cli_result(a->cmd, unvme_ctrlr_refresh_ns(c), 0);
	if (rc)
		return rc;
	uint32_t *list = calloc(NVME_NS_LIST_MAX, sizeof(*list));
	if (!list)
		return cli_fail(a->cmd, EXIT_HOST, "out of memory");
	unsigned n = 0;
	for (uint32_t id = unvme_ctrlr_first_nsid(c); id && n < NVME_NS_LIST_MAX;
	     id = unvme_ctrlr_next_nsid(c, id))
		list[n++] = id;
	unvme_print_ns_list(stdout, list, a->fmt);
	free(list);
	return EXIT_OK;
}

int cmd_ns_descs(struct cli_args *a)
{
	void *buf = NULL;
	int rc = identify(a, NVME_CNS_NS_DESC_LIST, a->nsid, 0, &buf);
	if (rc)
		return rc;
	unvme_print_ns_desc_list(stdout, buf, a->fmt);
	free(buf);
	return EXIT_OK;
}
