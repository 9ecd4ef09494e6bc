/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Output helpers the commands share: JSON documents, human-readable sizes, identify strings,
 * and whole-file reads and writes with messages that name the path.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

void cli_json_print(struct json_object *obj)
{
	fputs(json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
						  JSON_C_TO_STRING_NOSLASHESCAPE),
	      stdout);
	fputc('\n', stdout);
	json_object_put(obj);
}

bool cli_print_raw(const struct cli_args *a, const void *buf, size_t len)
{
	if (!a->raw_binary)
		return false;
	fwrite(buf, 1, len, stdout);
	return true;
}

void cli_human_size(uint64_t bytes, char *out, size_t outlen)
{
	static const char *units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double v = (double)bytes;
	unsigned u = 0;
	while (v >= 1024.0 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1024.0;
		u++;
	}
	if (u == 0)
		snprintf(out, outlen, "%llu B", (unsigned long long)bytes);
	else
		snprintf(out, outlen, "%.2f %s", v, units[u]);
}

void cli_id_string(const char *field, size_t len, char *out, size_t outlen)
{
	if (outlen == 0)
		return;
	size_t n = 0;
	while (n < len && field[n] != '\0')
		n++;
	while (n > 0 && field[n - 1] == ' ')
		n--;
	if (n >= outlen)
		n = outlen - 1;
	memcpy(out, field, n);
	out[n] = '\0';
	/* a device may put anything in these fields; keep the terminal sane */
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)out[i] < 0x20 || (unsigned char)out[i] > 0x7e)
			out[i] = '?';
}

int cli_write_file(const char *cmd, const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return cli_fail(cmd, EXIT_HOST, "cannot create %s: %s", cli_echo(path), strerror(errno));
	size_t n = fwrite(buf, 1, len, f);
	int err = (n != len) ? errno : 0;
	if (fclose(f) != 0 && !err)
		err = errno;
	if (err)
		return cli_fail(cmd, EXIT_HOST, "cannot write %s: %s", cli_echo(path), strerror(err));
	return EXIT_OK;
}

/* "-": everything on stdin, at most max bytes (a pipe has no size to check first). */
static int read_stdin(const char *cmd, size_t max, void **buf, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	uint8_t *b = malloc(cap);
	if (!b)
		return cli_fail(cmd, EXIT_HOST, "out of memory reading stdin");
	for (;;) {
		if (n == cap) {
			if (cap > max) {
				free(b);
				return cli_fail(cmd, EXIT_HOST, "stdin holds more than %zu bytes", max);
			}
			uint8_t *nb = realloc(b, cap * 2);
			if (!nb) {
				free(b);
				return cli_fail(cmd, EXIT_HOST, "out of memory reading stdin");
			}
			b = nb;
			cap *= 2;
		}
		size_t got = fread(b + n, 1, cap - n, stdin);
		n += got;
		if (got == 0)
			break;
	}
	if (ferror(stdin)) {
		free(b);
		return cli_fail(cmd, EXIT_HOST, "cannot read stdin: %s", strerror(errno));
	}
	if (n > max) {
		free(b);
		return cli_fail(cmd, EXIT_HOST, "stdin holds more than %zu bytes", max);
	}
	*buf = b;
	*len = n;
	return EXIT_OK;
}

int cli_read_file(const char *cmd, const char *path, size_t max, void **buf, size_t *len)
{
	if (strcmp(path, "-") == 0)
		return read_stdin(cmd, max, buf, len);
	FILE *f = fopen(path, "rb");
	if (!f)
		return cli_fail(cmd, EXIT_HOST, "cannot open %s: %s", cli_echo(path), strerror(errno));
	struct stat st;
	if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
		fclose(f);
		return cli_fail(cmd, EXIT_HOST, "%s is not a regular file", cli_echo(path));
	}
	if ((uint64_t)st.st_size > max) {
		fclose(f);
		return cli_fail(cmd, EXIT_HOST, "%s is too large (%lld bytes, at most %zu)", cli_echo(path),
				(long long)st.st_size, max);
	}
	size_t size = (size_t)st.st_size;
	uint8_t *b = malloc(size ? size : 1);
	if (!b) {
		fclose(f);
		return cli_fail(cmd, EXIT_HOST, "out of memory reading %s", cli_echo(path));
	}
	size_t n = fread(b, 1, size, f);
	int err = ferror(f) ? errno : 0;
	fclose(f);
	if (n != size) {
		free(b);
		return cli_fail(cmd, EXIT_HOST, "cannot read %s: %s", cli_echo(path),
				err ? strerror(err) : "file shrank while reading");
	}
	*buf = b;
	*len = size;
	return EXIT_OK;
}
