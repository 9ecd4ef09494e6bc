/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * db_bench's report of one benchmark, line for line:
 *   "fillrandom   :       2.345 micros/op 426439 ops/sec 2.345 seconds 1000000 operations;
 *    48.8 MB/s" (one line), with " (F of R found)" after reads, then with --histogram=1
 * "Microseconds per write:" (read, delete) and the histogram block.
 */
#ifndef KVDB_REPORT_H
#define KVDB_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "kvdb_run.h"

/* op_type: "write", "read" or "delete"; message: NULL or db_bench's extra text. */
void kvdb_report(FILE *f, const char *name, const struct kvdb_stats *s, const char *message,
		 const char *op_type, bool histogram);

#endif
