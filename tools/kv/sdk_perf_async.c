/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdk_perf_async: store, retrieve (verified) and delete N key-value pairs with
 * asynchronous calls, QD of them in flight, reporting each phase as the original SDK's
 * sample did. Options and output: docs/kv-tools.md.
 */
#include "kv_sdkbench.h"

int main(int argc, char **argv)
{
	struct kvt_bench b = { .prog = "sdk_perf_async", .async = true, .iterate = false };
	int rc = kvt_bench_parse(&b, argc, argv);
	if (rc >= 0)
		return rc;
	return kvt_bench_main(&b);
}
