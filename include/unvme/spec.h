/* SPDX-License-Identifier: BSD-3-Clause */
/* The NVMe wire format: every structure the driver and the emulated device exchange. */
#ifndef UNVME_SPEC_H
#define UNVME_SPEC_H

#include "spec/regs.h"
#include "spec/cmd.h"
#include "spec/status.h"
#include "spec/identify.h"
#include "spec/log.h"
#include "spec/features.h"
#include "spec/kv.h"
#include "spec/zns.h"
#include "spec/fabrics.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "uNVMe's spec structures assume a little-endian host"
#endif

#endif
