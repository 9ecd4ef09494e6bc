/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * unvme serve: run a device's device process (docs/multi-process.md).
 *
 *   unvme serve DEVICE [--idle DURATION] [--detach] [--quiet]   run it (until SIGINT/SIGTERM)
 *   unvme serve DEVICE --stop                                   end the one that runs
 *   unvme serve DEVICE --status [-o json]                       who runs it
 *
 * The library starts the same thing on the first open of a device that outlives processes:
 * `unvme serve --detach --quiet --idle 10000ms ADDRESS`, whose stderr tells it why it could
 * not start (nothing when it serves).
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static volatile int stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

/* "30s", "500ms", "2m", "1h", a number of seconds; "0" or "never": no idle end. */
static bool parse_duration(const char *s, uint32_t *ms)
{
	if (strcmp(s, "never") == 0) {
		*ms = 0;
		return true;
	}
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || v < 0)
		return false;
	double scale = 1000;
	if (strcmp(end, "ms") == 0)
		scale = 1;
	else if (strcmp(end, "m") == 0)
		scale = 60000;
	else if (strcmp(end, "h") == 0)
		scale = 3600000;
	else if (*end && strcmp(end, "s") != 0)
		return false;
	double r = v * scale;
	if (r > 86400000.0 * 7)
		return false;
	*ms = (uint32_t)(r + 0.5);
	if (v > 0 && *ms == 0)
		*ms = 1;
	return true;
}

struct ready_pipe {
	int fd;          /* --detach: the parent waits for "OK" on it */
	bool quiet;
	const char *devid;
};

static int report_fd = -1; /* a detached device process's status for the library */

static void report(const char *text)
{
	if (report_fd < 0)
		return;
	if (write(report_fd, text, strlen(text)) < 0)
		(void)0;
	close(report_fd);
	report_fd = -1;
}

static void on_ready(void *arg, int pid)
{
	struct ready_pipe *r = arg;
	report("OK");
	if (r->fd >= 0) {
		if (write(r->fd, "OK", 2) != 2)
			(void)0;
		close(r->fd);
		r->fd = -1;
	} else if (!r->quiet) {
		printf("serving %s (pid %d)\n", r->devid, pid);
		fflush(stdout);
	}
}

/* A device process runs on every CPU (the client that started it may have been pinned), with
 * stdin and stdout nowhere (its stderr goes to its log, unvme_serve_opts.log_to_run_dir). */
static void become_daemon(void)
{
	cpu_set_t all;
	CPU_ZERO(&all);
	for (int i = 0; i < CPU_SETSIZE; i++)
		CPU_SET(i, &all);
	(void)sched_setaffinity(0, sizeof(all), &all);
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		close(null);
	}
}

static int serve_detached(struct cli_args *a, const char *devid, uint32_t idle_ms)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) != 0)
		return cli_fail(a->cmd, EXIT_HOST, "no pipe: %s", strerror(errno));
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return cli_fail(a->cmd, EXIT_HOST, "cannot fork: %s", strerror(errno));
	if (pid > 0) {
		/* the parent: until the device serves, or the child says why it does not */
		close(p[1]);
		char msg[4096];
		size_t got = 0;
		ssize_t n;
		while ((n = read(p[0], msg + got, sizeof(msg) - 1 - got)) > 0 ||
		       (n < 0 && errno == EINTR))
			if (n > 0)
				got += (size_t)n;
		close(p[0]);
		msg[got] = '\0';
		if (strncmp(msg, "OK", 2) == 0) {
			if (!a->quiet)
				printf("serving %s (pid %d)\n", devid, (int)pid);
			return EXIT_OK;
		}
		if (strncmp(msg, "ALREADY ", 8) == 0) {
			if (!a->quiet)
				printf("%s\n", msg + 8);
			return EXIT_OK; /* served: what was asked for */
		}
		return cli_fail(a->cmd, EXIT_HOST, "%s", got ? msg : "the device process ended");
	}
	/* the device process: a session of its own, no parent to wait for it */
	close(p[0]);
	report_fd = -1;
	const char *st = getenv("UNVME_SERVE_STATUS_FD");
	if (st && *st) {
		report_fd = atoi(st); /* the library that started it: "OK" or "ERR errno why" */
		unsetenv("UNVME_SERVE_STATUS_FD");
	}
	setsid();
	signal(SIGHUP, SIG_IGN);
	become_daemon();
	struct ready_pipe r = { .fd = p[1], .quiet = true, .devid = devid };
	struct unvme_serve_opts o = { .idle_ms = idle_ms, .stop = &stop_signal, .ready = on_ready,
				      .arg = &r, .log_to_run_dir = true };
	int rc = unvme_serve(devid, &o);
	if (report_fd >= 0) {
		char st_msg[1100];
		if (rc == -EALREADY)
			snprintf(st_msg, sizeof(st_msg), "OK"); /* served: what was asked for */
		else
			snprintf(st_msg, sizeof(st_msg), "ERR %d %s", -rc, unvme_errmsg()[0]
									   ? unvme_errmsg()
									   : strerror(-rc));
		report(st_msg);
	}
	if (r.fd >= 0) {
		/* it never served: the parent says why */
		char msg[1024];
		int n = rc == -EALREADY ? snprintf(msg, sizeof(msg), "ALREADY %s", unvme_errmsg())
					: snprintf(msg, sizeof(msg), "%s", unvme_errmsg()[0]
									? unvme_errmsg()
									: strerror(-rc));
		if (write(r.fd, msg, (size_t)n) < 0)
			(void)0;
		close(r.fd);
	}
	fflush(NULL);
	_exit(rc ? EXIT_HOST : EXIT_OK);
}

static int serve_status(struct cli_args *a, const char *devid)
{
	struct unvme_serve_status st;
	int rc = unvme_serve_status(devid, &st);
	if (rc == -ESRCH && a->fmt != UNVME_FMT_JSON) {
		printf("%s: not running\n", devid);
		return EXIT_OK;
	}
	if (rc && rc != -ESRCH)
		return cli_result(a->cmd, rc, 0);
	if (a->fmt == UNVME_FMT_JSON) {
		json_object *o = json_object_new_object();
		json_object_object_add(o, "device", json_object_new_string(devid));
		json_object_object_add(o, "running", json_object_new_boolean(rc == 0));
		if (rc == 0) {
			json_object_object_add(o, "pid", json_object_new_int(st.pid));
			json_object_object_add(o, "device_process", json_object_new_boolean(st.device_process));
			json_object_object_add(o, "clients", json_object_new_int64(st.clients));
			json_object_object_add(o, "idle_ms", json_object_new_int64(st.idle_ms));
		}
		cli_json_print(o);
		return EXIT_OK;
	}
	printf("%s: run by %s %d, %u client%s", devid,
	       st.device_process ? "device process" : "application process", st.pid, st.clients,
	       st.clients == 1 ? "" : "s");
	if (st.device_process) {
		if (st.idle_ms)
			printf(", ends %.3g s after its last client", st.idle_ms / 1000.0);
		else
			printf(", ends when told (unvme serve --stop)");
	}
	printf("\n");
	return EXIT_OK;
}

int cmd_serve(struct cli_args *a)
{
	const char *devid = a->positional ? a->positional : cli_default_device;
	if (a->serve_stop + a->serve_status > 1 || ((a->serve_stop || a->serve_status) &&
						    (a->serve_detach || a->serve_idle)))
		return cli_fail(a->cmd, EXIT_USAGE, "--stop and --status go alone (without --detach "
				"or --idle)");
	if (!a->serve_detach && getenv("UNVME_SERVE_STATUS_FD"))
		unsetenv("UNVME_SERVE_STATUS_FD"); /* (only a detached one reports so) */
	if (a->serve_stop) {
		int rc = unvme_serve_stop(devid, 0);
		if (rc == -ESRCH) {
			if (!a->quiet)
				printf("%s: not running\n", devid);
			return EXIT_OK;
		}
		if (rc == 0 && !a->quiet)
			printf("%s: stopped\n", devid);
		return cli_result(a->cmd, rc, 0);
	}
	if (a->serve_status)
		return serve_status(a, devid);
	uint32_t idle_ms = 0;
	if (a->serve_idle && !parse_duration(a->serve_idle, &idle_ms))
		return cli_fail(a->cmd, EXIT_USAGE, "invalid value '%s' for --idle: a duration "
				"(30s, 500ms, 2m, 1h; a plain number is seconds; 0 or never: no end)",
				cli_echo(a->serve_idle));
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (a->serve_detach)
		return serve_detached(a, devid, idle_ms);
	struct ready_pipe r = { .fd = -1, .quiet = a->quiet, .devid = devid };
	struct unvme_serve_opts o = { .idle_ms = idle_ms, .stop = &stop_signal, .ready = on_ready,
				      .arg = &r };
	int rc = unvme_serve(devid, &o);
	if (rc == 0 && !a->quiet)
		printf("%s: ended (%s)\n", devid, stop_signal ? "signal" : idle_ms ? "idle or told" : "told");
	return cli_result(a->cmd, rc, 0);
}
