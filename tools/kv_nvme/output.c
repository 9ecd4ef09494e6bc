/* SPDX-License-Identifier: BSD-3-Clause */
/* What kv_nvme prints: the original's hex dump of log pages and raw output to a file. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kv_nvme.h"

/* nvme-cli's d(): a header of byte columns, then per 16 bytes the offset, the bytes and
 * their printable characters. */
void kvn_hexdump(const void *buf, size_t len)
{
	const unsigned char *b = buf;
	printf("     ");
	for (int i = 0; i < 16; i++)
		printf("%3x", i);
	printf("\n");
	for (size_t row = 0; row < len; row += 16) {
		printf("%04zx:", row);
		size_t n = len - row < 16 ? len - row : 16;
		for (size_t i = 0; i < 16; i++)
			if (i < n)
				printf(" %02x", b[row + i]);
			else
				printf("   ");
		printf(" \"");
		for (size_t i = 0; i < n; i++)
			putchar(isprint(b[row + i]) ? b[row + i] : '.');
		printf("\"\n");
	}
}

int kvn_write_file(const char *cmd, const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");
	if (!f) {
		fprintf(stderr, KVN_PROG ": %s: cannot open %s for writing: %s\n", cmd, path,
			strerror(errno));
		return KVT_EXIT_HOST;
	}
	size_t put = fwrite(buf, 1, len, f);
	if (fclose(f) != 0 || put != len) {
		fprintf(stderr, KVN_PROG ": %s: cannot write %s: %s\n", cmd, path, strerror(errno));
		return KVT_EXIT_HOST;
	}
	return KVT_EXIT_OK;
}
