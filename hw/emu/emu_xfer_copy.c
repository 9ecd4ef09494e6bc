/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Copies between a flat device-side buffer and the host segments of a mapped transfer. Kept
 * apart from the PRP walker so the namespace tests can use the real copies with a stand-in map.
 */
#include <string.h>

#include "emu.h"

void emu_xfer_to_host(const struct emu_xfer *x, const void *src, uint32_t len)
{
	const uint8_t *s = src;
	for (uint32_t i = 0; i < x->nseg && len; i++) {
		uint32_t n = x->seg[i].len < len ? x->seg[i].len : len;
		memcpy(x->seg[i].addr, s, n);
		s += n;
		len -= n;
	}
}

void emu_xfer_from_host(const struct emu_xfer *x, void *dst, uint32_t len)
{
	uint8_t *d = dst;
	for (uint32_t i = 0; i < x->nseg && len; i++) {
		uint32_t n = x->seg[i].len < len ? x->seg[i].len : len;
		memcpy(d, x->seg[i].addr, n);
		d += n;
		len -= n;
	}
}
