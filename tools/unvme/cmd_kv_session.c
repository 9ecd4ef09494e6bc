/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The key-value commands go through the SDK (lib/kvsdk), so the vendor wire protocol lives
 * in one place. The SDK is started on the first kv-* command's device from a generated JSON
 * configuration (a device id longer than kv_sdk.dev_id's 31 characters only fits there) and
 * stays up for the process: in `unvme batch` the next line finds the same device, its memory
 * namespace and its open iterators. A kv-* command on another device restarts it there.
 * One device handle per process: the driver hands every open of an address the same
 * controller, and the session opens the device through the tool first (with the tool's
 * options, so block commands keep a queue pair of their own next to the SDK's), so kv-* and
 * block commands in one batch drive the same device, file-backed or in memory.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "kv_apis.h"
#include "kv_ns_hint.h"
#include "kv_result_name.h"
#include "kv_sdk_config.h"

static char *session_devid;
static uint64_t session_handle;

static void session_end(void)
{
	if (!session_devid)
		return;
	kv_sdk_finalize();
	free(session_devid);
	session_devid = NULL;
}

int cli_kv_handle(const struct cli_args *a, uint64_t *handle)
{
	const char *devid = a->positional;
	if (session_devid && strcmp(session_devid, devid) == 0) {
		*handle = session_handle;
		return EXIT_OK;
	}
	static bool registered;
	if (!registered) {
		/* every way out of main (batch included) finalizes: queues drained, files closed */
		atexit(session_end);
		registered = true;
	}
	session_end();
	/* the tool's handle first: the SDK's open then shares it (and the tool's queue count) */
	struct unvme_ctrlr *ctrlr;
	int orc = cli_try_open(devid, &ctrlr);
	if (orc) {
		const char *msg = unvme_errmsg();
		return cli_fail(a->cmd, EXIT_HOST, "cannot initialize the SDK on %s: %s",
				cli_echo(devid), msg && *msg ? msg : strerror(-orc));
	}

	struct kvt_sdk_cfg cfg;
	/* With two CPUs or more: an async queue with its completion thread on the other CPU,
	 * so --async works; a plain call finds no sync queue and the SDK runs it on the async
	 * one and waits. A single CPU cannot hold a queue and a completion thread: sync only. */
	bool async = kvt_cpu(1) != kvt_cpu(0);
	kvt_cfg_single(&cfg, devid, async, 0);
	char prog[64];
	snprintf(prog, sizeof(prog), "unvme: %s", a->cmd);
	if (kvt_sdk_start_cfg(&cfg, prog) != 0)
		return EXIT_HOST;
	int nr = 0;
	uint64_t handles[NR_MAX_SSD];
	if (kv_get_device_handles(&nr, handles) != KV_SUCCESS || nr < 1) {
		kv_sdk_finalize();
		return cli_fail(a->cmd, EXIT_HOST, "the SDK started with no device");
	}
	session_devid = strdup(devid);
	if (!session_devid) {
		kv_sdk_finalize();
		return cli_fail(a->cmd, EXIT_HOST, "out of memory");
	}
	session_handle = handles[0];
	*handle = session_handle;
	return EXIT_OK;
}

int cli_kv_result(const char *cmd, int result)
{
	if (result == KV_SUCCESS)
		return EXIT_OK;
	char rs[64], why[512];
	if (!kvt_result_is_kv_answer(result) && kvt_no_kv_namespace(session_devid, why, sizeof(why)))
		return cli_fail(cmd, EXIT_NVME, "%s: %s; the kv-* commands need a key-value namespace "
				"(read, write, ... drive this one)", kvt_result_str(result, rs, sizeof(rs)),
				why);
	return cli_fail(cmd, EXIT_NVME, "%s", kvt_result_str(result, rs, sizeof(rs)));
}
