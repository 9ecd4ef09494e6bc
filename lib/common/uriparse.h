/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Pieces of the device ids' URI syntax (internal), shared by the emulated device's emu://
 * parameters and the driver's file:// addresses, so both read "%XX" escapes and sizes alike.
 * The names are the ones both files' callers used before: include it instead of a local copy.
 */
#ifndef UNVME_COMMON_URIPARSE_H
#define UNVME_COMMON_URIPARSE_H

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

static inline int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Percent-decodes [s, s+n) into out (so a path may hold '&', '?', '=' or spaces). 0, -EINVAL
 * for a bad or NUL escape, -ENAMETOOLONG when out is too small. */
static inline int percent_decode(const char *s, size_t n, char *out, size_t outlen)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];
		if (ch == '%') {
			if (i + 2 >= n)
				return -EINVAL;
			int hi = hexval(s[i + 1]), lo = hexval(s[i + 2]);
			if (hi < 0 || lo < 0)
				return -EINVAL;
			ch = (char)(hi << 4 | lo);
			i += 2;
			if (ch == '\0')
				return -EINVAL;
		}
		if (o + 1 >= outlen)
			return -ENAMETOOLONG;
		out[o++] = ch;
	}
	out[o] = '\0';
	return 0;
}

/* "<digits>[K|M|G|T]" (powers of 1024) into bytes: 0 or -EINVAL (not such a number, or it
 * overflows 64 bits). */
static inline int parse_size(const char *s, uint64_t *out)
{
	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	unsigned shift = 0;
	switch (*end) {
	case '\0': break;
	case 'k': case 'K': shift = 10; break;
	case 'm': case 'M': shift = 20; break;
	case 'g': case 'G': shift = 30; break;
	case 't': case 'T': shift = 40; break;
	default: return -EINVAL;
	}
	if (*end && end[1])
		return -EINVAL;
	if (shift && v > (UINT64_MAX >> shift))
		return -EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}

#endif
