/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the command line of the unvme tool, parsed but never run. With the first
 * byte even, the rest is a batch line (the tokenizer with its quotes, escapes, comments and
 * ';', then each command's options); odd, the rest is argv split at NUL bytes. Every
 * command's option table is reachable (the command is looked up by the first word). Parsing
 * either succeeds with every given option recorded or fails with exit code 2 and a message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* batch.c's tokenizer is static: this file takes its own copy (the tool's sources are
 * linked in with main renamed, see meson.build) */
#define cmd_batch fuzz_cli_cmd_batch
#include "tools/unvme/batch.c"
#undef cmd_batch

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	setenv("UNVME_QUIET", "1", 1);
	devnull = fopen("/dev/null", "w");
	return devnull ? 0 : -1;
}

static void parse_one(int argc, char **argv)
{
	if (argc < 1)
		return;
	const struct cli_cmd *c = cli_find_command(argv[0]);
	if (!c)
		return;
	struct cli_args *a = calloc(1, sizeof(*a));
	int rc = cli_parse(c, argc, argv, a);
	if (rc != EXIT_OK && rc != EXIT_USAGE)
		abort();
	if (a->ngiven > sizeof(a->given) / sizeof(a->given[0]))
		abort();
	free(a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 4096)
		return 0;
	FILE *saved = stderr;
	stderr = devnull; /* the parser's messages; sanitizer reports still reach fd 2 */
	char *text = malloc(size + 1);
	memcpy(text, data + 1, size - 1);
	text[size - 1] = 0;
	if (!(data[0] & 1)) {
		char *buf = malloc(size + 1);
		char **words = malloc((MAX_WORDS + 2) * sizeof(*words));
		int n = tokenize(text, buf, words, 1);
		if (n > 0)
			words[n++] = NULL;
		for (int i = 0; i < n;) {
			int j = i;
			while (words[j])
				j++;
			parse_one(j - i, words + i);
			i = j + 1;
		}
		free(buf);
		free(words);
	} else {
		char *argv[65];
		int argc = 0;
		for (size_t at = 0; at < size - 1 && argc < 64;) {
			argv[argc++] = text + at;
			at += strlen(text + at) + 1;
		}
		argv[argc] = NULL;
		parse_one(argc, argv);
	}
	free(text);
	stderr = saved;
	return 0;
}
