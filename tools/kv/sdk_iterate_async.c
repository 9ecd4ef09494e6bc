/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdk_iterate_async: store N pairs with asynchronous calls, read every key back through
 * an iterator with asynchronous reads and check each came back once, then delete them;
 * each phase reported as the original SDK's sample did. Options and output: docs/kv-tools.md.
 */
#include "kv_sdkbench.h"

int main(int argc, char **argv)
{
	struct kvt_bench b = { .prog = "sdk_iterate_async", .async = true, .iterate = true };
	int rc = kvt_bench_parse(&b, argc, argv);
	if (rc >= 0)
		return rc;
	return kvt_bench_main(&b);
}
