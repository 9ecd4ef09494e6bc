/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef UNVME_DRIVER_DEVID_H
#define UNVME_DRIVER_DEVID_H

#include <stdbool.h>
#include <stddef.h>

bool unvme_addr_is_emu(const char *addr);
/* Normalises a PCI address into "dddd:bb:dd.f"; false if s is not one. */
bool unvme_addr_parse_bdf(const char *s, char out[13]);
/* The directory for emulated devices' files ($UNVME_STATE_DIR, ...), created if missing. */
int unvme_state_dir(char *out, size_t outlen);

#endif
