/* SPDX-License-Identifier: BSD-3-Clause */
/* A test program's scratch directory: made at start (under $TMPDIR or /tmp), removed at exit. */
#ifndef UNVME_TEST_TMPDIR_H
#define UNVME_TEST_TMPDIR_H

#include <stdio.h>
#include <stdlib.h>

static char test_dir[256];

static void test_dir_remove(void)
{
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", test_dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", test_dir);
}

/* Makes test_dir ("<tmp>/<prefix>.XXXXXX"), quiets the library, removes the directory at exit. */
static inline void test_dir_make(const char *prefix)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(test_dir, sizeof(test_dir), "%s/%s.XXXXXX", tmp && *tmp ? tmp : "/tmp", prefix);
	if (!mkdtemp(test_dir))
		abort();
	setenv("UNVME_QUIET", "1", 1);
	atexit(test_dir_remove);
}

#endif
