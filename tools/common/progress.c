/* SPDX-License-Identifier: BSD-3-Clause */
/* A progress line on a terminal (progress.h). */
#include <stdio.h>
#include <unistd.h>

#include "lib/common/clock.h"
#include "progress.h"

#define PROGRESS_PERIOD_NS 1000000000ull

static void print(struct progress *p, uint64_t done)
{
	unsigned pct = p->total ? (unsigned)(done * 100 / p->total) : 0;
	/* \r and erase to the end: the line is rewritten in place */
	fprintf(stderr, "\r\033[K%s %llu/%llu %s (%u%%)", p->label, (unsigned long long)done,
		(unsigned long long)p->total, p->unit, pct);
	fflush(stderr);
	p->shown = true;
}

void progress_start(struct progress *p, const char *prog, const char *what, uint64_t total,
		    const char *unit)
{
	p->on = isatty(STDERR_FILENO) == 1;
	p->shown = false;
	p->total = total;
	p->unit = unit;
	snprintf(p->label, sizeof(p->label), "%s: %s", prog, what);
	p->next_ns = mono_ns() + PROGRESS_PERIOD_NS;
	if (p->on)
		print(p, 0);
}

void progress_update(struct progress *p, uint64_t done)
{
	if (!p->on)
		return;
	uint64_t now = mono_ns();
	if (now < p->next_ns)
		return;
	p->next_ns = now + PROGRESS_PERIOD_NS;
	print(p, done);
}

void progress_end(struct progress *p)
{
	if (p->on && p->shown) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
	}
	p->shown = false;
}
