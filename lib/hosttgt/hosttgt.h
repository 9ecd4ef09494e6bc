/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Host targets: controllers whose namespace is built by the host on another device (the FTL of
 * lib/ftl, ftl://; the key-value engine of lib/hostkv, hostkv://). Each is an emulated
 * controller (a device model, hw/emu/emu_device.h) over media an engine provides; its
 * transport (hosttgt_transport.c) registers like any other and drives the model's registers,
 * so the driver reaches a host target only through the NVMe protocol. This layer sits above
 * the engines and the device model; the engines see neither the device model nor the driver.
 */
#ifndef UNVME_HOSTTGT_H
#define UNVME_HOSTTGT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct emu_device;

#define UNVME_FTL_SCHEME    "ftl://"
#define UNVME_HOSTKV_SCHEME "hostkv://"

/* The device model of the host target at address (its scheme's): opens the inner device, the
 * engine on it and the emulated controller over the engine, which owns the engine from then
 * on (emu_device_destroy closes both). 0 or -errno with a message (unvme_fail). */
int hosttgt_ftl_create(const char *address, struct emu_device **dev);
int hosttgt_hostkv_create(const char *address, struct emu_device **dev);

/* Splits "<inner id>[?<options>]": the options are after the last '?' when their first key is
 * one of keys (NULL-terminated). false when the inner id does not fit. */
bool hosttgt_opts_split(const char *id, const char *const *keys, char *inner, size_t innerlen,
			const char **opts);
/* A stable 64-bit hash of a string (FNV-1a), for serial numbers. */
uint64_t hosttgt_hash(const char *s);

#endif
