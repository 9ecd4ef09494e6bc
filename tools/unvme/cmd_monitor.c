/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * unvme monitor: prints a device's events as they happen, like `nvme monitor`: its removal
 * and its return (hot-plug) and its Asynchronous Events (SMART / health warnings, errors,
 * notices), as text or one JSON object per line, until SIGINT / SIGTERM or --seconds.
 *
 * The driver keeps an Asynchronous Event Request outstanding and reaps it here (the poll
 * loop calls unvme_ctrlr_process_events every few milliseconds); removal and arrival are
 * reported by the thread that noticed them. For each Asynchronous Event the monitor reads
 * the event's log page (without Retain Asynchronous Event), which is what lets the device
 * report the next event of that type, and prints what the SMART log says for health events.
 *
 * With --background (in `unvme batch`) the loop runs on a thread of its own while the batch's
 * next lines run, and stops when the batch ends (or after --seconds).
 */
#include <errno.h>
#include <json-c/json.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli.h"

#define POLL_INTERVAL_MS 5

struct mon_dev {
	const char *devid;
	struct unvme_ctrlr *c;
};

static struct {
	struct mon_dev devs[CLI_MAX_LIST + 1];
	unsigned n;
	enum unvme_fmt fmt;
	uint32_t seconds;
	pthread_t tid;
	bool background;          /* a thread runs the loop */
	pthread_mutex_t print_lock;
} mon = { .print_lock = PTHREAD_MUTEX_INITIALIZER };

static volatile sig_atomic_t mon_signalled;
static _Atomic bool mon_stop;

static void on_signal(int sig)
{
	(void)sig;
	mon_signalled = 1;
}

static const char *aer_type_name(unsigned type)
{
	switch (type) {
	case 0: return "error";
	case 1: return "smart";
	case 2: return "notice";
	case 6: return "io-command-set";
	case 7: return "vendor";
	default: return "reserved";
	}
}

/* NVMe Base 2.0, figures 146-151: Asynchronous Event Information per type. */
static const char *aer_info_name(unsigned type, unsigned info)
{
	if (type == 0) {
		static const char *const e[] = { "write to invalid doorbell register",
			"invalid doorbell write value", "diagnostic failure", "persistent internal error",
			"transient internal error", "firmware image load error" };
		return info < sizeof(e) / sizeof(e[0]) ? e[info] : "error";
	}
	if (type == 1) {
		static const char *const s[] = { "NVM subsystem reliability", "temperature threshold",
			"spare below threshold" };
		return info < sizeof(s) / sizeof(s[0]) ? s[info] : "health";
	}
	if (type == 2) {
		static const char *const n[] = { "namespace attribute changed",
			"firmware activation starting", "telemetry log changed",
			"asymmetric namespace access change", "predictable latency event aggregate log change",
			"LBA status information alert", "endurance group event aggregate log page change" };
		if (info == 0xef)
			return "zone descriptor changed";
		return info < sizeof(n) / sizeof(n[0]) ? n[info] : "notice";
	}
	return "event";
}

static void timestamp(char *out, size_t len)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	struct tm tm;
	gmtime_r(&ts.tv_sec, &tm);
	size_t n = strftime(out, len, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out + n, len - n, ".%03ldZ", ts.tv_nsec / 1000000L);
}

static void on_event(struct unvme_ctrlr *c, const struct unvme_event *ev, void *arg)
{
	const struct mon_dev *d = arg;
	char when[40];
	timestamp(when, sizeof(when));
	unsigned type = ev->aer_dw0 & 7u, info = (ev->aer_dw0 >> 8) & 0xffu, lid = (ev->aer_dw0 >> 16) & 0xffu;
	/* the event's log page, read without RAE: the device may report the next one */
	struct nvme_smart_log smart = {0};
	uint32_t changed[128] = {0}; /* Changed Namespace List: its first entries */
	int lrc = -1;
	/* an event of a card pulled out since: its log page went with it */
	char now_sn[32];
	cli_id_string(unvme_ctrlr_identify_data(c)->sn, sizeof(unvme_ctrlr_identify_data(c)->sn),
		      now_sn, sizeof(now_sn));
	if (ev->type == UNVME_EVENT_AER && strcmp(now_sn, ev->serial) == 0 &&
	    !unvme_ctrlr_is_removed(c)) {
		uint8_t page[512];
		lrc = unvme_get_log_page(c, (uint8_t)lid, 0xffffffffu, page, sizeof(page), 0);
		if (lrc == 0 && lid == NVME_LOG_SMART)
			memcpy(&smart, page, sizeof(smart));
		if (lrc == 0 && lid == NVME_LOG_CHANGED_NS)
			memcpy(changed, page, sizeof(changed));
	}
	bool have_smart = lrc == 0 && lid == NVME_LOG_SMART;
	bool have_ns = lrc == 0 && lid == NVME_LOG_CHANGED_NS;
	const char *name = ev->type == UNVME_EVENT_REMOVED ? "removed"
			   : ev->type == UNVME_EVENT_ARRIVED ? "arrived" : "aer";
	pthread_mutex_lock(&mon.print_lock);
	if (mon.fmt == UNVME_FMT_JSON) {
		json_object *o = json_object_new_object();
		json_object_object_add(o, "time", json_object_new_string(when));
		json_object_object_add(o, "device", json_object_new_string(d->devid));
		json_object_object_add(o, "event", json_object_new_string(name));
		json_object_object_add(o, "serial", json_object_new_string(ev->serial));
		if (ev->type == UNVME_EVENT_ARRIVED)
			json_object_object_add(o, "status", json_object_new_int(ev->status));
		if (ev->type == UNVME_EVENT_AER) {
			json_object_object_add(o, "aer_type", json_object_new_string(aer_type_name(type)));
			json_object_object_add(o, "aer_info", json_object_new_int((int)info));
			json_object_object_add(o, "aer_info_name",
					       json_object_new_string(aer_info_name(type, info)));
			json_object_object_add(o, "log_page", json_object_new_int((int)lid));
			if (have_ns) {
				json_object *l = json_object_new_array();
				for (size_t i = 0; i < 128 && changed[i]; i++)
					json_object_array_add(l, json_object_new_int64(changed[i]));
				json_object_object_add(o, "changed_namespaces", l);
			}
			if (have_smart) {
				json_object_object_add(o, "critical_warning",
						       json_object_new_int(smart.critical_warning));
				json_object_object_add(o, "temperature_k",
						       json_object_new_int(smart.temperature));
			}
		}
		printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
		json_object_put(o);
	} else if (ev->type == UNVME_EVENT_AER) {
		printf("%s %s aer %s: %s (information %02xh, log page %02xh)", when, d->devid,
		       aer_type_name(type), aer_info_name(type, info), info, lid);
		if (have_smart)
			printf(": critical warning 0x%02x, temperature %u K", smart.critical_warning,
			       smart.temperature);
		for (size_t i = 0; have_ns && i < 128 && changed[i]; i++)
			printf("%s%u", i ? "," : ": namespaces ", changed[i]);
		printf("\n");
	} else if (ev->type == UNVME_EVENT_ARRIVED && ev->status) {
		printf("%s %s arrived but could not be attached: %s\n", when, d->devid,
		       strerror(-ev->status));
	} else {
		printf("%s %s %s (serial %s)\n", when, d->devid, name, ev->serial);
	}
	fflush(stdout);
	pthread_mutex_unlock(&mon.print_lock);
}

static void poll_all(void)
{
	for (unsigned i = 0; i < mon.n; i++)
		(void)unvme_ctrlr_process_events(mon.devs[i].c);
}

static void loop(void)
{
	struct timespec start;
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (!atomic_load(&mon_stop) && !mon_signalled) {
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (mon.seconds && (uint64_t)(now.tv_sec - start.tv_sec) * 1000u +
					   (uint64_t)((now.tv_nsec - start.tv_nsec) / 1000000L) >=
				   (uint64_t)mon.seconds * 1000u)
			break;
		poll_all();
		struct timespec ts = { 0, POLL_INTERVAL_MS * 1000000L };
		nanosleep(&ts, NULL);
	}
	poll_all(); /* what arrived meanwhile */
}

static void finish(void)
{
	for (unsigned i = 0; i < mon.n; i++)
		unvme_ctrlr_remove_event_cb(mon.devs[i].c, on_event, &mon.devs[i]);
	mon.n = 0;
}

static void *thread_main(void *arg)
{
	(void)arg;
	loop();
	return NULL;
}

void cli_monitor_stop(void)
{
	if (!mon.background)
		return;
	atomic_store(&mon_stop, true);
	pthread_join(mon.tid, NULL);
	mon.background = false;
	finish();
}

static int run_monitor(struct cli_args *a);

int cmd_monitor(struct cli_args *a)
{
	if (a->background)
		return run_monitor(a);
	/* in the foreground a signal ends it, also one that comes while the devices open (a
	 * device process may be starting): the loop sees it at once */
	struct sigaction sa = { 0 }, old_int, old_term;
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	mon_signalled = 0;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	int rc = run_monitor(a);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	return rc;
}

static int run_monitor(struct cli_args *a)
{
	if (mon.background)
		return cli_fail(a->cmd, EXIT_USAGE, "a monitor already runs in the background of this "
				"batch");
	const char *ids[CLI_MAX_LIST + 1];
	unsigned n = 0;
	ids[n++] = a->positional;
	for (unsigned i = 0; i < a->perf_ndevs; i++)
		ids[n++] = a->perf_devs[i];
	mon.fmt = a->fmt;
	mon.seconds = a->seconds;
	mon.n = 0;
	for (unsigned i = 0; i < n; i++) {
		struct unvme_ctrlr *c;
		int rc = cli_open_devid(a->cmd, ids[i], &c);
		if (rc) {
			finish();
			return rc;
		}
		mon.devs[mon.n] = (struct mon_dev){ ids[i], c };
		rc = unvme_ctrlr_add_event_cb(c, on_event, &mon.devs[mon.n]);
		if (rc) {
			finish();
			return cli_result(a->cmd, rc, 0);
		}
		mon.n++;
		rc = unvme_ctrlr_aer_enable(c);
		/* a device the kernel keeps has no admin queue of ours: hot-plug events only */
		if (rc && rc != -EOPNOTSUPP) {
			finish();
			return cli_result(a->cmd, rc, 0);
		}
		if (rc == -EOPNOTSUPP)
			fprintf(stderr, "unvme: monitor: %s: no Asynchronous Events (%s)\n",
				cli_echo(ids[i]), unvme_errmsg());
	}
	atomic_store(&mon_stop, false);
	if (a->background) {
		if (pthread_create(&mon.tid, NULL, thread_main, NULL) != 0) {
			finish();
			return cli_fail(a->cmd, EXIT_HOST, "cannot start the monitor thread");
		}
		mon.background = true;
		return EXIT_OK;
	}
	loop();
	finish();
	return EXIT_OK;
}
