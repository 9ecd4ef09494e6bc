/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Device masks: the checks that make an impossible queue layout an error at kv_sdk_init, and
 * the automatic layout (the original's "resource scheduler") used when core_mask is absent or 0.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "kv_internal.h"

int kv_cpu_count(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	if (n < 1)
		n = 1;
	return n > MAX_CPU_CORES ? MAX_CPU_CORES : (int)n;
}

static uint64_t low_bits(int n)
{
	return n >= 64 ? UINT64_MAX : (n <= 0 ? 0 : (UINT64_C(1) << n) - 1);
}

/*
 * Submission on the lower three quarters of the CPUs (at least one), sync on the lower half
 * of those (rounded down), and one completion core from the top quarter, shared by at most
 * four devices (devices 0-3 take the first top core, 4-7 the next, wrapping around).
 *   2 CPUs: core_mask 0x1, sync_mask 0x0, cq_thread_mask 0x2 (all I/O async through CPU 1)
 *   4 CPUs: 0x7, 0x1, 0x8        8 CPUs: 0x3f, 0x7, 0x40 (devices 4-7: 0x80)
 *   1 CPU:  0x1, 0x1, 0x0 (all sync: there is no spare core for a completion thread)
 */
void kv_auto_masks(int dev_idx, int ncpu, kv_nvme_io_options *o)
{
	if (ncpu <= 1) {
		o->core_mask = 1;
		o->sync_mask = 1;
		o->cq_thread_mask = 0;
		o->num_cq_threads = 0;
		return;
	}
	int nsub = ncpu * 3 / 4;
	if (nsub < 1)
		nsub = 1;
	int ntop = ncpu - nsub;
	o->core_mask = low_bits(nsub);
	o->sync_mask = low_bits(nsub / 2);
	o->cq_thread_mask = UINT64_C(1) << (nsub + (dev_idx / 4) % ntop);
	o->num_cq_threads = 1;
}

/* "2-3", "4", "2-3,7": the CPUs of mask, for messages. */
static void cpu_list(uint64_t mask, char *out, size_t len)
{
	out[0] = 0;
	size_t used = 0;
	for (int c = 0; c < 64 && used + 1 < len; c++) {
		if (!(mask >> c & 1))
			continue;
		int e = c;
		while (e + 1 < 64 && (mask >> (e + 1) & 1))
			e++;
		int w = e > c ? snprintf(out + used, len - used, "%s%d-%d", used ? "," : "", c, e)
			      : snprintf(out + used, len - used, "%s%d", used ? "," : "", c);
		used += w > 0 ? (size_t)w : 0;
		c = e;
	}
}

/* Masks naming CPUs this machine lacks, as the original's configurations often do (written
 * for bigger machines): the queues of those cores exist but no thread can run there, and a
 * completion thread for such a core runs unpinned. With strict_placement it is an error. */
static int check_cpus(struct kv_config *cfg, int i, int ncpu)
{
	const kv_nvme_io_options *o = &cfg->sdk.dd_options[i];
	uint64_t all = low_bits(ncpu);
	uint64_t sub = o->core_mask & ~all, cq = o->cq_thread_mask & ~all;
	if (!sub && !cq)
		return 0;
	const char *which = sub ? "core_mask" : "cq_thread_mask";
	uint64_t mask = sub ? o->core_mask : o->cq_thread_mask;
	char missing[128], have[32];
	cpu_list(sub ? sub : cq, missing, sizeof(missing));
	cpu_list(all, have, sizeof(have));
	if (cfg->strict_placement || getenv("UNVME_KV_STRICT_PLACEMENT")) {
		kv_config_set_error("%s: device_description[%d].%s 0x%llx names CPU %s, but this "
				    "machine has %d CPUs (%s) and strict placement is on", cfg->source,
				    i, which, (unsigned long long)mask, missing, ncpu, have);
		return -1;
	}
	char subs[320] = "", cqs[320] = "";
	if (sub) {
		cpu_list(sub, missing, sizeof(missing));
		snprintf(subs, sizeof(subs), "queues are made for CPU %s but no thread runs there "
			 "(threads use the queues of CPU %s)", missing, have);
	}
	if (cq) {
		cpu_list(cq, missing, sizeof(missing));
		snprintf(cqs, sizeof(cqs), "%sthe completion thread for CPU %s runs unpinned",
			 sub ? "; " : "", missing);
	}
	kv_config_warn("%s: device_description[%d]: core_mask 0x%llx / cq_thread_mask 0x%llx name CPUs this "
	     "machine lacks (it has %d: %s): %s%s (\"strict_placement\": true makes this an error)",
	     cfg->source, i, (unsigned long long)o->core_mask,
	     (unsigned long long)o->cq_thread_mask, ncpu, have, subs, cqs);
	return 0;
}

int kv_config_check_masks(struct kv_config *cfg, int ncpu)
{
	for (int i = 0; i < cfg->sdk.nr_ssd; i++) {
		kv_nvme_io_options *o = &cfg->sdk.dd_options[i];
		const char *src = cfg->source;
		if (!o->queue_depth)
			o->queue_depth = KV_DEFAULT_QUEUE_DEPTH;
		if (!o->core_mask) {
			kv_auto_masks(i, ncpu, o);
			kv_log(2, "device %d: automatic masks core 0x%llx sync 0x%llx cq 0x%llx", i,
			       (unsigned long long)o->core_mask, (unsigned long long)o->sync_mask,
			       (unsigned long long)o->cq_thread_mask);
			continue;
		}
		if (o->sync_mask & ~o->core_mask) {
			/* as the original: a sync bit names a queue only where core_mask has one */
			kv_log(2, "%s: device_description[%d].sync_mask 0x%llx: bits outside core_mask "
			       "0x%llx ignored", src, i, (unsigned long long)o->sync_mask,
			       (unsigned long long)o->core_mask);
			o->sync_mask &= o->core_mask;
		}
		uint64_t async = o->core_mask & ~o->sync_mask;
		if (!async) {
			o->cq_thread_mask = 0; /* all sync: no completion thread is needed */
		} else if (!o->cq_thread_mask && cfg->sdk.ssd_type != LBA_TYPE_SSD) {
			/* the original started one on a default core: the highest CPU here */
			o->cq_thread_mask = UINT64_C(1) << (ncpu - 1);
			kv_log(2, "%s: device_description[%d]: cq_thread_mask 0 with async cores: "
			       "completion thread on CPU %d", src, i, ncpu - 1);
		} else if (!o->cq_thread_mask) {
			/* LBA mode (the original's mkfs and fuse): no completion thread; the
			 * application reaps with kv_process_completion */
			kv_log(2, "%s: device_description[%d]: no completion thread (cq_thread_mask 0): "
			       "async completions are reaped by kv_process_completion and waiting "
			       "callers", src, i);
		}
		if (check_cpus(cfg, i, ncpu))
			return -1;
		o->num_cq_threads = (uint64_t)__builtin_popcountll(o->cq_thread_mask);
	}
	return 0;
}
