/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Starting a device process (mp.h): `unvme serve --detach` for an address, found next to the
 * library (the nearest unvme from the library's or its program's directory up: the same build
 * tree's, or the same installation's; else the first on PATH; UNVME_SERVE_PROGRAM overrides). posix_spawn: no fork of this process (its
 * threads, its DMA memory), nothing of it inherited but the environment; the device process
 * detaches from its session and its parent at once (setsid, a fork of its own) and reports
 * on its stderr, a pipe to here, why it could not start. Its idle period is
 * UNVME_DEVICE_IDLE_MS (default 10 s).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/common/clock.h"
#include "lib/driver/errmsg.h"
#include "mp.h"

#define DEFAULT_IDLE_MS 10000u
#define START_TIMEOUT_MS 120000 /* a device whose log file is replayed at power-on takes long */

extern char **environ;

static bool executable(const char *path)
{
	struct stat st; /* (a directory passes X_OK: build/tools/unvme is one) */
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* The file this code was loaded from: the shared library, or the program it is linked into. */
static bool self_path(char *out, size_t len)
{
	Dl_info di;
	const char *name = NULL;
	if (dladdr((void *)self_path, &di) && di.dli_fname && strstr(di.dli_fname, ".so"))
		name = di.dli_fname; /* (for the main program dladdr gives argv[0]) */
	char buf[PATH_MAX];
	if (!name) {
		ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
		if (n <= 0)
			return false;
		buf[n] = '\0';
		name = buf;
	}
	return realpath(name, out) != NULL && strlen(out) < len;
}

/* dir/rel, if that is an executable program. */
static bool found_at(const char *dir, const char *rel, char *out, size_t len)
{
	char cand[PATH_MAX];
	int n = snprintf(cand, sizeof(cand), "%s/%s", dir, rel);
	if (n < 0 || (size_t)n >= sizeof(cand) || (size_t)n >= len || !executable(cand))
		return false;
	snprintf(out, len, "%s", cand);
	return true;
}

int mp_serve_program(char *out, size_t len)
{
	const char *env = getenv("UNVME_SERVE_PROGRAM");
	if (env && *env) {
		if (!executable(env) || strlen(env) >= len)
			return unvme_fail(-ENOENT, "UNVME_SERVE_PROGRAM=%s is not an executable program",
					  env);
		snprintf(out, len, "%s", env);
		return 0;
	}
	/* From the library's (or its program's) directory up: the nearest unvme is the one of
	 * the same build or installation, whatever the prefix (/usr/bin/kv_perf and
	 * /usr/bin/unvme; /usr/lib/<arch>/libunvme.so and /usr/bin/unvme; a build tree's
	 * build/tests/unit/driver/test_driver_mp and build/tools/unvme/unvme). Nothing of the
	 * build's paths is recorded in the library. */
	char dir[PATH_MAX];
	if (self_path(dir, sizeof(dir))) {
		for (int up = 0; up <= 4; up++) {
			char *slash = strrchr(dir, '/');
			if (!slash)
				break;
			*slash = '\0';
			const char *d = dir[0] ? dir : "/";
			if (found_at(d, "unvme", out, len) || found_at(d, "bin/unvme", out, len) ||
			    found_at(d, "tools/unvme/unvme", out, len))
				return 0;
			if (!dir[0])
				break;
		}
	}
	const char *path = getenv("PATH");
	while (path && *path) {
		const char *end = strchr(path, ':');
		size_t n = end ? (size_t)(end - path) : strlen(path);
		char d[PATH_MAX];
		if (n && n < sizeof(d)) {
			snprintf(d, sizeof(d), "%.*s", (int)n, path);
			if (found_at(d, "unvme", out, len))
				return 0;
		}
		path = end ? end + 1 : NULL;
	}
	return unvme_fail(-ENOENT, "no unvme program to run the device process (beside the "
			  "library or the program, on PATH, or UNVME_SERVE_PROGRAM)");
}

/* The device process's idle period, "<ms>ms" for its --idle. */
static void idle_arg(char *out, size_t len)
{
	const char *e = getenv("UNVME_DEVICE_IDLE_MS");
	unsigned long ms = DEFAULT_IDLE_MS;
	if (e && *e) {
		char *end;
		unsigned long v = strtoul(e, &end, 10);
		if (!*end && v <= 86400000ul)
			ms = v;
	}
	snprintf(out, len, "%lums", ms);
}

/* Everything from fd until its end, at most len - 1 bytes kept (the last ones), with a
 * deadline. */
static size_t read_all(int fd, char *buf, size_t len, uint64_t deadline)
{
	size_t got = 0;
	for (;;) {
		uint64_t now = mono_ms_coarse();
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (now >= deadline || poll(&p, 1, (int)(deadline - now)) == 0)
			break;
		ssize_t n = read(fd, buf + got, len - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
		if (got == len - 1)
			got = 0; /* keep reading to its end; the last words say why */
	}
	buf[got] = '\0';
	while (got && (buf[got - 1] == '\n' || buf[got - 1] == ' '))
		buf[--got] = '\0';
	return got;
}

int mp_spawn(const char *address)
{
	char prog[PATH_MAX];
	int rc = mp_serve_program(prog, sizeof(prog));
	if (rc)
		return rc;
	char idle[32];
	idle_arg(idle, sizeof(idle));
	/* its stderr (what a person would read) and, on fd 3, its status: "OK", or "ERR errno
	 * message" (UNVME_SERVE_STATUS_FD, cmd_serve.c) */
	int pipefd[2], st_pipe[2];
	if (pipe2(pipefd, O_CLOEXEC) != 0)
		return unvme_fail(-errno, "%s: no pipe to start its device process: %s", address,
				  strerror(errno));
	if (pipe2(st_pipe, O_CLOEXEC) != 0) {
		int e = errno;
		close(pipefd[0]);
		close(pipefd[1]);
		return unvme_fail(-e, "%s: no pipe to start its device process: %s", address,
				  strerror(e));
	}
	size_t nenv = 0;
	while (environ[nenv])
		nenv++;
	char **envp = calloc(nenv + 2, sizeof(*envp));
	if (!envp) {
		close(pipefd[0]);
		close(pipefd[1]);
		close(st_pipe[0]);
		close(st_pipe[1]);
		return -ENOMEM;
	}
	size_t k = 0;
	for (size_t i = 0; i < nenv; i++)
		if (strncmp(environ[i], "UNVME_SERVE_STATUS_FD=", 22) != 0)
			envp[k++] = environ[i];
	envp[k++] = "UNVME_SERVE_STATUS_FD=3";
	envp[k] = NULL;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&at);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], 2);
	posix_spawn_file_actions_adddup2(&fa, st_pipe[1], 3);
	posix_spawn_file_actions_addclosefrom_np(&fa, 4); /* nothing of this process's but those */
	sigset_t none, all;
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &all);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	char *argv[] = { prog, "serve", "--detach", "--quiet", "--idle", idle, (char *)address, NULL };
	pid_t pid;
	rc = posix_spawn(&pid, prog, &fa, &at, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	free(envp);
	close(pipefd[1]);
	close(st_pipe[1]);
	if (rc) {
		close(pipefd[0]);
		close(st_pipe[0]);
		return unvme_fail(-rc, "%s: cannot start its device process (%s): %s", address, prog,
				  strerror(rc));
	}
	/* what it says until it has detached (nothing on stderr when it serves) */
	uint64_t deadline = mono_ms_coarse() + START_TIMEOUT_MS;
	char msg[1024], status[1024];
	size_t got = read_all(pipefd[0], msg, sizeof(msg), deadline);
	read_all(st_pipe[0], status, sizeof(status), deadline);
	close(pipefd[0]);
	close(st_pipe[0]);
	int st = 0;
	pid_t w;
	do
		w = waitpid(pid, &st, 0);
	while (w < 0 && errno == EINTR);
	int err;
	char *why;
	if (strncmp(status, "ERR ", 4) == 0 && (err = (int)strtol(status + 4, &why, 10)) > 0) {
		while (*why == ' ')
			why++;
		return unvme_fail(-err, "%s", why); /* the device's own error, as if opened here */
	}
	bool ok = strcmp(status, "OK") == 0 ||
		  (w == pid ? WIFEXITED(st) && WEXITSTATUS(st) == 0 : got == 0);
	if (ok)
		return 0;
	return unvme_fail(-EIO, "%s: its device process could not start: %s", address,
			  got ? msg : "it ended without saying why");
}
