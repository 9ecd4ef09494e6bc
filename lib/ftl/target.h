/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Host targets: controllers whose namespace is built by the host on another device (the FTL,
 * ftl://; the key-value engine, hostkv://). Each is an emulated controller over media the
 * target provides (hw/emu/emu_device.h), plugged into the emulated PCIe slot of the driver
 * (lib/driver/pcie_emu_slot.c), so the driver reaches it only through the NVMe protocol.
 */
#ifndef UNVME_FTL_TARGET_H
#define UNVME_FTL_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct unvme_ctrlr;

#define UNVME_FTL_SCHEME    "ftl://"
#define UNVME_HOSTKV_SCHEME "hostkv://"

/* Attach: opens the inner device, the target on it and its controller (ctrlr->transport_ctx
 * is the emulated device). 0 or -errno with a message (unvme_fail). */
int unvme_ftl_attach(struct unvme_ctrlr *ctrlr, const char *address);
void unvme_ftl_detach(struct unvme_ctrlr *ctrlr);
int unvme_hostkv_attach(struct unvme_ctrlr *ctrlr, const char *address);
void unvme_hostkv_detach(struct unvme_ctrlr *ctrlr);

/* Splits "<inner id>[?<options>]": the options are after the last '?' when their first key is
 * one of keys (NULL-terminated). false when the inner id does not fit. */
bool target_opts_split(const char *id, const char *const *keys, char *inner, size_t innerlen,
		       const char **opts);
/* A stable 64-bit hash of a string (FNV-1a), for serial numbers. */
uint64_t target_hash(const char *s);

#endif
