/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * unvme batch: several commands in one process. An emulated device lives as long as the
 * process that opened it, so this is how a memory namespace keeps data from a write to the
 * read that checks it, and how an injected fault meets the commands it is meant to break.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define MAX_WORDS 256

/* Splits a line into words: blanks separate, ' and " quote, a backslash escapes the next
 * character (inside "..." only \" and \\), '#' at the start of a word comments out the rest of
 * the line, and an unquoted ';' ends a command. Words are copied into buf (as long as the
 * line); a NULL entry in words[] marks the end of a command. Returns the number of entries or
 * -1 with a message for an unterminated quote or too many words. */
static int tokenize(const char *line, char *buf, char **words, unsigned lineno)
{
	int n = 0;
	const char *s = line;
	char *d = buf;
	for (;;) {
		while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
			s++;
		if (*s == '\0' || *s == '#')
			break;
		if (n >= MAX_WORDS) {
			cli_fail("batch", EXIT_USAGE, "line %u: more than %d words", lineno, MAX_WORDS);
			return -1;
		}
		if (*s == ';') {
			words[n++] = NULL;
			s++;
			continue;
		}
		words[n++] = d;
		char quote = 0;
		while (*s) {
			char ch = *s;
			if (quote) {
				if (ch == quote) {
					quote = 0;
					s++;
					continue;
				}
				if (quote == '"' && ch == '\\' && (s[1] == '"' || s[1] == '\\'))
					s++;
			} else {
				if (ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n' || ch == ';')
					break;
				if (ch == '\'' || ch == '"') {
					quote = ch;
					s++;
					continue;
				}
				if (ch == '\\' && s[1])
					s++;
			}
			*d++ = *s++;
		}
		if (quote) {
			cli_fail("batch", EXIT_USAGE, "line %u: unterminated %c quote", lineno, quote);
			return -1;
		}
		*d++ = '\0';
	}
	return n;
}

/* Runs the commands of one line; returns the first failure's exit code (after running the
 * rest only with keep_going). */
static int run_line(const char *line, unsigned lineno, bool keep_going)
{
	size_t len = strlen(line);
	char *buf = malloc(len + 1);
	char **words = malloc((MAX_WORDS + 1) * sizeof(*words));
	if (!buf || !words) {
		free(buf);
		free(words);
		return cli_fail("batch", EXIT_HOST, "out of memory");
	}
	int n = tokenize(line, buf, words, lineno);
	int first = n < 0 ? EXIT_USAGE : EXIT_OK;
	if (n > 0)
		words[n++] = NULL; /* the line's end ends its last command */
	for (int i = 0; i < n;) {
		int j = i;
		while (words[j])
			j++;
		if (j > i) {
			int rc;
			if (strcmp(words[i], "batch") == 0)
				rc = cli_fail("batch", EXIT_USAGE, "line %u: batch cannot run inside batch",
					      lineno);
			else
				rc = cli_run(j - i, words + i);
			if (rc && !first)
				first = rc;
			if (rc && !keep_going)
				break;
		}
		i = j + 1;
	}
	free(buf);
	free(words);
	return first;
}

int cmd_batch(struct cli_args *a)
{
	FILE *f = stdin;
	if (a->batch_file && strcmp(a->batch_file, "-") != 0) {
		f = fopen(a->batch_file, "r");
		if (!f)
			return cli_fail("batch", EXIT_HOST, "cannot open %s: %s", cli_echo(a->batch_file),
					strerror(errno));
	}
	const char *saved_default = cli_default_device;
	cli_default_device = a->positional;
	bool keep_going = a->keep_going;

	char *line = NULL;
	size_t cap = 0;
	unsigned lineno = 0;
	int first_fail = EXIT_OK;
	while (getline(&line, &cap, f) >= 0) {
		lineno++;
		int rc = run_line(line, lineno, keep_going);
		if (rc && !first_fail)
			first_fail = rc;
		if (rc && !keep_going)
			break;
	}
	free(line);
	if (f != stdin)
		fclose(f);
	cli_default_device = saved_default;
	return first_fail;
}
