/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * unplug / plug: pull an emulated card out of its slot and put it (or a replacement) back,
 * in this process (docs/devices.md "Hot-plug"). An emulated device lives in the process that
 * opened it, so these are for `unvme batch` scripts: what runs before and after (I/O, kv-*,
 * a monitor started with --background) sees the removal and the return.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>

#include "unvme/emu.h"
#include "cli.h"

static int report(struct cli_args *a, const char *what)
{
	if (a->fmt == UNVME_FMT_JSON) {
		json_object *o = json_object_new_object();
		json_object_object_add(o, "command", json_object_new_string(a->cmd));
		json_object_object_add(o, "device", json_object_new_string(a->positional));
		json_object_object_add(o, "result", json_object_new_string(what));
		cli_json_print(o);
	} else {
		printf("%s: %s\n", a->positional, what);
	}
	return EXIT_OK;
}

int cmd_unplug(struct cli_args *a)
{
	struct unvme_ctrlr *c;
	int rc = cli_open(a, &c); /* the card must be in a slot of this process */
	if (rc)
		return rc;
	rc = unvme_emu_unplug(a->positional);
	if (rc == -EINVAL)
		return cli_fail(a->cmd, EXIT_USAGE, "%s", unvme_errmsg());
	if (rc)
		return cli_result(a->cmd, rc, 0);
	return report(a, "card pulled out: I/O fails with 'removed' until it is plugged in again");
}

int cmd_plug(struct cli_args *a)
{
	struct unvme_ctrlr *c;
	int rc = cli_open(a, &c);
	if (rc)
		return rc;
	rc = unvme_emu_plug(a->positional, a->card);
	if (rc == -EINVAL)
		return cli_fail(a->cmd, EXIT_USAGE, "%s", unvme_errmsg());
	if (rc)
		return cli_result(a->cmd, rc, 0);
	char sn[32];
	cli_id_string(unvme_ctrlr_identify_data(c)->sn, sizeof(unvme_ctrlr_identify_data(c)->sn), sn,
		      sizeof(sn));
	char what[96];
	snprintf(what, sizeof(what), "card plugged in and attached (serial %s)", sn);
	return report(a, what);
}
