/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The bad-input matrix (docs/reliability.md): table-driven cases, each one call with one bad
 * argument, the answer it must give (a return code and words its message must hold), run in
 * one process under the sanitizers (make test-asan: a crash, a leak or undefined behaviour
 * fails the suite; meson's timeout catches a hang).
 *
 *   <program>             runs every case, prints "ok"/"FAIL" per case, exits 1 on a failure
 *   <program> --markdown  prints the table (area, case, input, answer) for docs/reliability.md
 *
 * A case's function makes the call and returns its result; the message is whatever the
 * area's message source holds afterwards (unvme_errmsg(), the KV SDK's log, ...).
 */
#ifndef UNVME_BADINPUT_MATRIX_H
#define UNVME_BADINPUT_MATRIX_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct mcase {
	const char *name;    /* what is wrong, in words */
	const char *input;   /* the call, as the caller writes it */
	long long want;      /* the result it must return */
	const char *msg;     /* words the message must hold ("" when the call has no message) */
	long long (*fn)(void);
};

#define MCASE(name, input, want, msg, fn) { name, input, want, msg, fn }

/* Set by the program: how to read the message of the last call, and how to name a result. */
struct matrix {
	const char *area;
	const char *(*message)(void);
	const char *(*result_name)(long long rc);
	void (*before)(void);   /* run before each case (optional) */
	bool fresh;             /* message() holds only what this case's call said */
};

static inline void matrix_md_cell(const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			fputs("\\|", stdout);
		else if (*s == '\n')
			fputs(" ", stdout);
		else
			putchar(*s);
	}
}

/* Runs the table; returns the process exit status. */
static inline int matrix_run(const struct matrix *m, const struct mcase *cases, size_t n, int argc,
			     char **argv)
{
	bool md = argc > 1 && !strcmp(argv[1], "--markdown");
	const char *only = argc > 1 && !md ? argv[1] : NULL;
	int failed = 0, passed = 0;
	for (size_t i = 0; i < n; i++) {
		const struct mcase *c = &cases[i];
		if (only && !strstr(c->name, only))
			continue;
		if (m->before)
			m->before();
		long long rc = c->fn();
		const char *msg = m->message();
		bool ok = rc == c->want && strstr(msg, c->msg) != NULL;
		if (md) {
			printf("| %s | ", m->area);
			matrix_md_cell(c->name);
			printf(" | `");
			matrix_md_cell(c->input);
			printf("` | %s | ", m->result_name(rc));
			/* unless messages are fresh, a case that wants none shows none (the thread's
			 * last one may be an earlier call's) */
			bool show = (c->msg[0] || m->fresh) && msg[0];
			char shown[200];
			snprintf(shown, sizeof(shown), "%s%s", show ? msg : "(no message)",
				 show && strlen(msg) >= sizeof(shown) ? "..." : "");
			matrix_md_cell(shown);
			printf(" |%s\n", ok ? "" : " **UNEXPECTED** |");
		} else if (ok) {
			printf("ok   %s\n", c->name);
		} else {
			printf("FAIL %s\n     %s\n     returned %s (%lld), wanted %s (%lld)\n"
			       "     message: %s\n     wanted words: %s\n", c->name, c->input,
			       m->result_name(rc), rc, m->result_name(c->want), c->want, msg, c->msg);
		}
		if (ok)
			passed++;
		else
			failed++;
	}
	if (!md)
		printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}

#endif
