/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A stand-in for the controller core's host memory access (emu_xfer_map and friends), so the
 * namespace tests do not depend on the PRP walker: PRP1 is taken as a plain pointer to the
 * host buffer. Optionally the buffer is cut into segments of a chosen size, so the backends'
 * multi-segment paths run as they do behind a real PRP list.
 */
#ifndef UNVME_TEST_XFER_DOUBLE_H
#define UNVME_TEST_XFER_DOUBLE_H

#include <stdint.h>

/* 0: one segment per transfer; otherwise segments of this many bytes (the last one shorter). */
void xfer_double_set_seg_size(uint32_t bytes);
/* How many times emu_xfer_map was called since the start of the program. */
unsigned long xfer_double_map_calls(void);

#endif
