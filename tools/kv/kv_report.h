/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The KV benchmarks' report, per phase, as the original SDK's tools gave it: start and end
 * timestamps, elapsed time, latency per operation (elapsed / N), operations per second,
 * throughput, and a QoS block (min / max / mean per-I/O latency and percentiles 1 .. 99.99).
 * The same figures as JSON for scripts and benchmarks.
 */
#ifndef KVTOOLS_REPORT_H
#define KVTOOLS_REPORT_H

#include <json-c/json.h>
#include <stdio.h>

#include "kv_phase.h"

/* Adds src's results to dst (for totals over devices): counts add up, the time span covers
 * both, the histograms merge. dst must start zeroed with lat_hist_init'd histogram. */
void kvt_phase_merge(struct kvt_phase *dst, const struct kvt_phase *src, bool first);
void kvt_report_text(FILE *f, const char *title, const struct kvt_phase *p);
json_object *kvt_report_json(const char *name, const struct kvt_phase *p);
/* Whether the phase failed (errors or verification failures). */
bool kvt_phase_failed(const struct kvt_phase *p);
/* One line on stderr describing the phase's first failure. */
void kvt_report_failure(const char *prog, const char *title, const struct kvt_phase *p);

#endif
