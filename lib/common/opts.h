/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Sized option structs (ABI growth, internal). Every public option struct starts with
 * `size_t size`, the sizeof of the struct the caller was built with (UNVME_OPTS_INIT in
 * unvme/unvme.h sets it). Fields are only ever appended, so the library takes the bytes the
 * caller's size covers and keeps its defaults for fields the caller's header did not have.
 *
 * A size of 0 is the first version's layout (v1_size bytes): callers written before the field
 * existed, which zero-initialise or name fields with designated initialisers, keep working.
 * A caller built against a newer header (size past what this library knows) is served when
 * the fields this library lacks are all zero, and refused otherwise (-E2BIG), as Linux's
 * copy_struct_from_user rules it: a setting asked for is never ignored silently.
 */
#ifndef UNVME_COMMON_OPTS_H
#define UNVME_COMMON_OPTS_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The bytes of a struct up to the end of its field f: a version's size. */
#define OPTS_SIZE_THROUGH(type, f) (offsetof(type, f) + sizeof(((type *)0)->f))

/* Copies the caller's src over dst (which holds the defaults), dst_size being this library's
 * sizeof, v1_size the first version's; src may be NULL (defaults). dst's size field is set to
 * dst_size. 0, -EINVAL (a size smaller than the first version's) or -E2BIG (above). */
static inline int opts_take(void *dst, size_t dst_size, const void *src, size_t v1_size)
{
	if (src) {
		size_t n;
		memcpy(&n, src, sizeof(n));
		if (n == 0)
			n = v1_size;
		if (n < v1_size)
			return -EINVAL;
		for (size_t i = dst_size; i < n; i++)
			if (((const uint8_t *)src)[i])
				return -E2BIG;
		memcpy(dst, src, n < dst_size ? n : dst_size);
	}
	memcpy(dst, &dst_size, sizeof(dst_size));
	return 0;
}

/* What opts_take's failure rc means, for a message (size: the caller's, known: this
 * library's sizeof). */
static inline const char *opts_size_error(int rc, size_t size, size_t known)
{
	static __thread char m[192];
	if (rc == -E2BIG)
		snprintf(m, sizeof(m), "options from a newer header (%zu bytes; this library knows %zu) "
			 "set fields this library does not have", size, known);
	else
		snprintf(m, sizeof(m), "options size %zu is not a version's size (set it with "
			 "UNVME_OPTS_INIT, or 0)", size);
	return m;
}

#endif
