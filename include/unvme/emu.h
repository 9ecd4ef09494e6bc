/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The emulated device's test hooks: hot-plug an emulated card (docs/devices.md "Hot-plug").
 * Not part of the production API (unvme.h): nothing a real device does, but what tests, the
 * unvme tool's hotplug commands and `unvme perf --unplug-at` use to make one removal happen.
 */
#ifndef UNVME_EMU_H
#define UNVME_EMU_H

#include "unvme.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Emulated devices only (emu://, docs/devices.md): pull the card out of the slot at devid's
 * address, as a surprise removal (it does not know; data of mem namespaces is lost, file
 * namespaces keep what was written), or put a card back in. card NULL re-inserts the same
 * device (its URI is the address); an emu:// URI inserts a replacement described by it (a
 * new serial=, other namespaces) at the same address. Both need the device open in this
 * process: run here, or run by a device process (or a primary) this process is a client of,
 * which then pulls or puts the card for every process that uses it. unplug: 0, -ENODEV (not
 * open here), -EALREADY (the slot is empty). plug: 0 once the driver attached the card,
 * -EBUSY (the slot holds a card), -EINVAL (a bad card URI), or the re-attach's error (the
 * card stays in the slot, the controller failed). */
UNVME_API int unvme_emu_unplug(const char *devid);
UNVME_API int unvme_emu_plug(const char *devid, const char *card);

#ifdef __cplusplus
}
#endif

#endif
