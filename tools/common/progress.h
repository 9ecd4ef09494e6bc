/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Progress of a long run on a terminal: one line on stderr, rewritten in place at most once
 * a second ("kv_perf: store 40000/100000 keys (40%)"), erased at the end. Only when stderr
 * is a terminal, so pipes, logs and tests that read stderr see nothing of it.
 */
#ifndef UNVME_TOOL_PROGRESS_H
#define UNVME_TOOL_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

struct progress {
	bool on;
	bool shown;
	uint64_t next_ns; /* monotonic time of the next print */
	uint64_t total;
	char label[96];   /* "prog: what" */
	const char *unit;
};

/* Starts a progress line for total units (prints the first one at once on a terminal). */
void progress_start(struct progress *p, const char *prog, const char *what, uint64_t total,
		    const char *unit);
/* done units so far: prints when a second has passed since the last print. Cheap when it
 * does not print (one clock read); callers in hot loops call it every few thousand units. */
void progress_update(struct progress *p, uint64_t done);
/* Erases the line. */
void progress_end(struct progress *p);

#endif
