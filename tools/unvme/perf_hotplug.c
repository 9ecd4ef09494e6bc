/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * unvme perf --unplug-at MS --plug-after MS: the emulated devices under test are pulled out
 * during the run and put back, as a surprise removal under load (docs/devices.md
 * "Hot-plug"). A thread of its own does it at the given times; the I/O threads count what
 * failed while the card was out, park their slots until the device takes commands again,
 * and note when their first I/O after the re-insertion completed: the report prints how long
 * after the re-insertion that was.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "unvme/emu.h"
#include "lib/common/clock.h"
#include "perf.h"

struct perf_hotplug_result perf_hotplug;
_Atomic bool perf_plugging;

static pthread_t hp_tid;
static bool hp_started;

/* Sleeps until the monotonic clock reaches deadline_ns, in short steps so that an interrupted
 * run is noticed; false when it was. An absolute deadline: on a loaded machine a sleep
 * lasts longer than asked, and the times are the run's, not a sum of naps. */
static bool sleep_until(uint64_t deadline_ns)
{
	for (;;) {
		if (perf_interrupted)
			return false;
		uint64_t now = mono_ns();
		if (now >= deadline_ns)
			return true;
		uint64_t step = deadline_ns - now < 1000000u ? deadline_ns - now : 1000000u;
		struct timespec ts = { 0, (long)step };
		nanosleep(&ts, NULL);
	}
}

static void *hp_main(void *arg)
{
	const struct perf_config *cfg = arg;
	struct perf_hotplug_result *r = &perf_hotplug;
	r->start_ns = mono_ns();
	if (!sleep_until(r->start_ns + (uint64_t)cfg->unplug_at_ms * 1000000u))
		return NULL;
	r->out_ns = mono_ns();
	for (unsigned i = 0; i < cfg->nctrlrs && !r->rc; i++) {
		r->rc = unvme_emu_unplug(cfg->ctrlr_names[i]);
		if (r->rc)
			snprintf(r->msg, sizeof(r->msg), "unplug %s: %s", cfg->ctrlr_names[i], unvme_errmsg());
	}
	if (r->rc || !sleep_until(r->out_ns + (uint64_t)cfg->plug_after_ms * 1000000u)) {
		/* put back what was pulled, so the threads can drain */
		for (unsigned i = 0; i < cfg->nctrlrs; i++)
			(void)unvme_emu_plug(cfg->ctrlr_names[i], NULL);
		return NULL;
	}
	r->back_ns = mono_ns();
	atomic_store_explicit(&perf_plugging, true, memory_order_release);
	for (unsigned i = 0; i < cfg->nctrlrs && !r->rc; i++) {
		r->rc = unvme_emu_plug(cfg->ctrlr_names[i], NULL);
		if (r->rc)
			snprintf(r->msg, sizeof(r->msg), "plug %s: %s", cfg->ctrlr_names[i], unvme_errmsg());
	}
	r->attached_ns = mono_ns();
	r->done = r->rc == 0;
	return NULL;
}

int perf_hotplug_check(struct cli_args *a, struct perf_config *cfg)
{
	bool out = cli_given(a, "unplug-at"), back = cli_given(a, "plug-after");
	if (!out && !back)
		return EXIT_OK;
	if (!out || !back)
		return cli_fail(a->cmd, EXIT_USAGE, "--unplug-at and --plug-after go together");
	if (cfg->zoned)
		return cli_fail(a->cmd, EXIT_USAGE, "--unplug-at does not apply to zone workloads");
	uint64_t run_ms = ((uint64_t)cfg->warmup + cfg->seconds) * 1000u;
	if (a->unplug_at_ms == 0 || (uint64_t)a->unplug_at_ms + a->plug_after_ms >= run_ms)
		return cli_fail(a->cmd, EXIT_USAGE, "--unplug-at %u ms and --plug-after %u ms must "
				"both fall inside the run (%llu ms, warmup included), after its start",
				a->unplug_at_ms, a->plug_after_ms, (unsigned long long)run_ms);
	for (unsigned i = 0; i < cfg->nctrlrs; i++)
		if (strncmp(unvme_ctrlr_address(cfg->ctrlrs[i]), "emu://", 6) != 0) /* wherever it runs */
			return cli_fail(a->cmd, EXIT_USAGE, "--unplug-at: %s is not an emulated device "
					"(emu://); only those can be pulled out by a program",
					cli_echo(cfg->ctrlr_names[i]));
	cfg->hotplug = true;
	cfg->unplug_at_ms = a->unplug_at_ms;
	cfg->plug_after_ms = a->plug_after_ms;
	return EXIT_OK;
}

int perf_hotplug_start(const struct perf_config *cfg)
{
	memset(&perf_hotplug, 0, sizeof(perf_hotplug));
	atomic_store(&perf_plugging, false);
	hp_started = false;
	if (!cfg->hotplug)
		return 0;
	int err = pthread_create(&hp_tid, NULL, hp_main, (void *)cfg);
	if (err)
		return -err;
	hp_started = true;
	return 0;
}

void perf_hotplug_join(void)
{
	if (hp_started)
		pthread_join(hp_tid, NULL);
	hp_started = false;
}
