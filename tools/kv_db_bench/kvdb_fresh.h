/* SPDX-License-Identifier: BSD-3-Clause */
/* Emptying the devices of the benchmark's keys before a fill, as db_bench starts fillseq and
 * fillrandom on a fresh database (kvdb_fresh.c). */
#ifndef KVDB_FRESH_H
#define KVDB_FRESH_H

#include <stdint.h>

#include "kvdb_flags.h"

/* Deletes every key under prefix on every device. Returns an exit code (a failure is said on
 * stderr). */
int kvdb_fresh(const uint64_t *handles, int ndev, uint32_t prefix);

#endif
