/* SPDX-License-Identifier: BSD-3-Clause */
/* Per-phase figures of the KV benchmarks, as text and as JSON. */
#include <string.h>

#include "kv_ns_hint.h"
#include "kv_report.h"
#include "kv_result_name.h"
#include "tsc.h"

static const double qos_pcts[] = { 1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9,
				   99.95, 99.99 };
#define N_QOS (sizeof(qos_pcts) / sizeof(qos_pcts[0]))

void kvt_phase_merge(struct kvt_phase *dst, const struct kvt_phase *src, bool first)
{
	if (first || src->start_ns < dst->start_ns) {
		dst->start_ns = src->start_ns;
		dst->start_wall = src->start_wall;
	}
	if (first || src->end_ns > dst->end_ns) {
		dst->end_ns = src->end_ns;
		dst->end_wall = src->end_wall;
	}
	dst->op = src->op;
	dst->n += src->n;
	dst->ops += src->ops;
	if (src->errors && !dst->errors) {
		dst->first_error = src->first_error;
		dst->first_error_key = src->first_error_key;
	}
	dst->errors += src->errors;
	dst->not_found += src->not_found;
	if (src->verify_errors && !dst->verify_errors)
		dst->first_bad_key = src->first_bad_key;
	dst->verify_errors += src->verify_errors;
	dst->bytes += src->bytes;
	for (int k = 0; k < 3; k++) {
		dst->op_ops[k] += src->op_ops[k];
		dst->op_value_bytes[k] += src->op_value_bytes[k];
		for (int v = 0; v < KVT_MAX_VALUE_SIZES; v++)
			dst->op_size_ops[k][v] += src->op_size_ops[k][v];
	}
	lat_hist_merge(&dst->hist, &src->hist);
}

static void wall_str(const struct timespec *ts, char *out, size_t len)
{
	struct tm tm;
	localtime_r(&ts->tv_sec, &tm);
	size_t n = strftime(out, len, "%Y-%m-%d %H:%M:%S", &tm);
	snprintf(out + n, len - n, ".%06ld", ts->tv_nsec / 1000);
}

struct figures {
	double elapsed_s;
	double lat_per_op_us;
	double ops_per_s;
	double mb_per_s;
};

static struct figures figures_of(const struct kvt_phase *p)
{
	struct figures f = { 0 };
	f.elapsed_s = (double)(p->end_ns - p->start_ns) / 1e9;
	if (p->ops) {
		f.lat_per_op_us = f.elapsed_s * 1e6 / (double)p->ops;
	}
	if (f.elapsed_s > 0) {
		f.ops_per_s = (double)p->ops / f.elapsed_s;
		f.mb_per_s = (double)p->bytes / f.elapsed_s / 1e6;
	}
	return f;
}

static double us(uint64_t ticks)
{
	return tsc_to_ns(ticks) / 1e3;
}

static double hist_min_us(const struct lat_histogram *h)
{
	return h->count ? us(h->min) : 0.0;
}

bool kvt_phase_failed(const struct kvt_phase *p)
{
	return p->errors || p->verify_errors;
}

void kvt_report_text(FILE *f, const char *title, const struct kvt_phase *p)
{
	struct figures fg = figures_of(p);
	char start[64], end[64];
	wall_str(&p->start_wall, start, sizeof(start));
	wall_str(&p->end_wall, end, sizeof(end));
	fprintf(f, "%s: %llu operations\n", title, (unsigned long long)p->ops);
	fprintf(f, "  start time:             %s\n", start);
	fprintf(f, "  end time:               %s\n", end);
	fprintf(f, "  elapsed:                %.6f s\n", fg.elapsed_s);
	fprintf(f, "  latency per operation:  %.3f us\n", fg.lat_per_op_us);
	fprintf(f, "  operations per second:  %.0f\n", fg.ops_per_s);
	fprintf(f, "  throughput:             %.3f MB/s\n", fg.mb_per_s);
	fprintf(f, "  errors: %llu, not found: %llu, verify errors: %llu\n",
		(unsigned long long)p->errors, (unsigned long long)p->not_found,
		(unsigned long long)p->verify_errors);
	fprintf(f, "  QoS (per-I/O latency, us):\n");
	fprintf(f, "    min       %12.3f\n", hist_min_us(&p->hist));
	fprintf(f, "    max       %12.3f\n", us(p->hist.max));
	fprintf(f, "    mean      %12.3f\n", tsc_to_ns((uint64_t)lat_hist_mean(&p->hist)) / 1e3);
	for (size_t i = 0; i < N_QOS; i++) {
		char label[16];
		snprintf(label, sizeof(label), "%g%%", qos_pcts[i]);
		fprintf(f, "    %-9s %12.3f\n", label, us(lat_hist_percentile(&p->hist, qos_pcts[i])));
	}
}

static json_object *num(double v)
{
	/* three decimals is all a microsecond figure needs; keeps the document readable */
	char buf[64];
	snprintf(buf, sizeof(buf), "%.3f", v);
	return json_object_new_double_s(v, buf);
}

json_object *kvt_report_json(const char *name, const struct kvt_phase *p)
{
	struct figures fg = figures_of(p);
	char start[64], end[64];
	wall_str(&p->start_wall, start, sizeof(start));
	wall_str(&p->end_wall, end, sizeof(end));
	json_object *o = json_object_new_object();
	json_object_object_add(o, "phase", json_object_new_string(name));
	json_object_object_add(o, "operations", json_object_new_uint64(p->ops));
	json_object_object_add(o, "start", json_object_new_string(start));
	json_object_object_add(o, "end", json_object_new_string(end));
	json_object_object_add(o, "start_epoch_us",
			       json_object_new_int64((int64_t)p->start_wall.tv_sec * 1000000 +
						     p->start_wall.tv_nsec / 1000));
	json_object_object_add(o, "end_epoch_us",
			       json_object_new_int64((int64_t)p->end_wall.tv_sec * 1000000 +
						     p->end_wall.tv_nsec / 1000));
	json_object_object_add(o, "elapsed_s", json_object_new_double(fg.elapsed_s));
	json_object_object_add(o, "latency_per_op_us", num(fg.lat_per_op_us));
	json_object_object_add(o, "ops_per_sec", num(fg.ops_per_s));
	json_object_object_add(o, "throughput_mb_s", num(fg.mb_per_s));
	json_object_object_add(o, "bytes", json_object_new_uint64(p->bytes));
	json_object_object_add(o, "errors", json_object_new_uint64(p->errors));
	json_object_object_add(o, "not_found", json_object_new_uint64(p->not_found));
	json_object_object_add(o, "verify_errors", json_object_new_uint64(p->verify_errors));
	if (p->errors) {
		char rs[64];
		json_object_object_add(o, "first_error",
				       json_object_new_string(kvt_result_str(p->first_error, rs,
									     sizeof(rs))));
	}
	json_object *q = json_object_new_object();
	json_object_object_add(q, "min", num(hist_min_us(&p->hist)));
	json_object_object_add(q, "max", num(us(p->hist.max)));
	json_object_object_add(q, "mean", num(tsc_to_ns((uint64_t)lat_hist_mean(&p->hist)) / 1e3));
	for (size_t i = 0; i < N_QOS; i++) {
		char label[16];
		snprintf(label, sizeof(label), "p%g", qos_pcts[i]);
		json_object_object_add(q, label, num(us(lat_hist_percentile(&p->hist, qos_pcts[i]))));
	}
	json_object_object_add(o, "qos_us", q);
	return o;
}

void kvt_report_failure(const char *prog, const char *title, const struct kvt_phase *p)
{
	char rs[64];
	if (p->errors)
		fprintf(stderr, "%s: %s: %llu of %llu operations failed; the first, key #%llu: %s\n",
			prog, title, (unsigned long long)p->errors, (unsigned long long)p->ops,
			(unsigned long long)p->first_error_key,
			kvt_result_str(p->first_error, rs, sizeof(rs)));
	if (p->errors)
		kvt_explain_failure(prog, p->first_error);
	if (p->verify_errors)
		fprintf(stderr, "%s: %s: %llu values failed verification; the first: key #%llu\n",
			prog, title, (unsigned long long)p->verify_errors,
			(unsigned long long)p->first_bad_key);
}
