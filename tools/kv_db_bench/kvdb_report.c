/* SPDX-License-Identifier: BSD-3-Clause */
/* The report lines db_bench prints for a benchmark (kvdb_report.h). */
#include <inttypes.h>

#include "kvdb_report.h"

void kvdb_report(FILE *f, const char *name, const struct kvdb_stats *s, const char *message,
		 const char *op_type, bool histogram)
{
	/* db_bench pretends one operation was done, so an empty run divides by one */
	uint64_t done = s->done ? s->done : 1;
	double elapsed = (double)(s->finish_ns - s->start_ns) * 1e-9;
	if (elapsed <= 0)
		elapsed = 1e-9;
	char extra[160] = "";
	int len = 0;
	/* the rate is over the wall time of the run, not the threads' summed time */
	if (s->bytes)
		len = snprintf(extra, sizeof(extra), "%6.1f MB/s",
			       ((double)s->bytes / 1048576.0) / elapsed);
	if (message && *message)
		snprintf(extra + len, sizeof(extra) - (size_t)len, "%s%s", len ? " " : "", message);
	fprintf(f, "%-12s : %11.3f micros/op %ld ops/sec %.3f seconds %" PRIu64 " operations;%s%s\n",
		name, s->seconds * 1e6 / (double)done, (long)((double)done / elapsed), elapsed, done,
		extra[0] ? " " : "", extra);
	if (histogram) {
		fprintf(f, "Microseconds per %s:\n", op_type);
		kvdb_hist_print(f, &s->hist);
		fputc('\n', f);
	}
	fflush(f);
}
