/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Device masks: the checks that make an impossible queue layout an error at kv_sdk_init, and
 * the automatic layout (the original's "resource scheduler") used when core_mask is absent or 0.
 */
#include <sched.h>
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

int kv_config_check_masks(struct kv_config *cfg, int ncpu)
{
	uint64_t all = low_bits(ncpu);
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
		if (o->core_mask & ~all) {
			kv_config_set_error("%s: device_description[%d].core_mask 0x%llx names CPU %d, but "
					    "this machine has %d CPUs", src, i,
					    (unsigned long long)o->core_mask,
					    63 - __builtin_clzll(o->core_mask), ncpu);
			return -1;
		}
		if (o->sync_mask & ~o->core_mask) {
			kv_config_set_error("%s: device_description[%d].sync_mask 0x%llx has bits outside "
					    "core_mask 0x%llx", src, i, (unsigned long long)o->sync_mask,
					    (unsigned long long)o->core_mask);
			return -1;
		}
		uint64_t async = o->core_mask & ~o->sync_mask;
		if (o->cq_thread_mask & ~all) {
			kv_config_set_error("%s: device_description[%d].cq_thread_mask 0x%llx names CPU %d, "
					    "but this machine has %d CPUs", src, i,
					    (unsigned long long)o->cq_thread_mask,
					    63 - __builtin_clzll(o->cq_thread_mask), ncpu);
			return -1;
		}
		if (async && !o->cq_thread_mask) {
			kv_config_set_error("%s: device_description[%d].cq_thread_mask is empty, but "
					    "core_mask 0x%llx has async cores (sync_mask 0x%llx)", src, i,
					    (unsigned long long)o->core_mask,
					    (unsigned long long)o->sync_mask);
			return -1;
		}
		if (async && (o->cq_thread_mask & o->core_mask)) {
			kv_config_set_error("%s: device_description[%d].cq_thread_mask 0x%llx: completion "
					    "core %d is also a submission core of core_mask 0x%llx", src, i,
					    (unsigned long long)o->cq_thread_mask,
					    __builtin_ctzll(o->cq_thread_mask & o->core_mask),
					    (unsigned long long)o->core_mask);
			return -1;
		}
		if (!async)
			o->cq_thread_mask = 0; /* all sync: no completion thread is needed */
		o->num_cq_threads = (uint64_t)__builtin_popcountll(o->cq_thread_mask);
	}
	return 0;
}
