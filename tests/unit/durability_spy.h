/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a power loss would take, for tests of durability. A test that writes, flushes,
 * reopens and reads back passes whether or not the code ever called fdatasync: the page cache
 * keeps the data for the reopened file. Linked into a test, durability_spy.c interposes the
 * C library's write and sync calls (write, pwrite, pwritev, pwritev2, fallocate, ftruncate,
 * fsync, fdatasync, rename) for the whole process, the code under test included, and keeps
 * per file (device and inode) what was changed since its last fsync/fdatasync. A test then
 * asks, at the moment the code acknowledged a durable write, whether anything would be lost:
 * remove the fdatasync from the code and the test fails.
 *
 * The model is the one the kernel promises: data reaches stable storage by fsync/fdatasync
 * of the file (or a write with RWF_DSYNC / O_DSYNC / O_SYNC), a new name by fsync of its
 * directory. Calls are recorded only while the spy is armed (durability_spy_reset), so setup
 * code outside the test's interest costs nothing.
 */
#ifndef UNVME_TEST_DURABILITY_SPY_H
#define UNVME_TEST_DURABILITY_SPY_H

#include <stdbool.h>
#include <stdint.h>

struct durability_state {
	uint64_t unsynced_bytes; /* written since the file's last sync, not yet durable */
	unsigned unsynced_meta;  /* size changes (ftruncate, fallocate) since the last sync */
	unsigned syncs;          /* fsync + fdatasync calls on it since the spy was armed */
	unsigned durable_writes; /* writes that were durable by themselves (RWF_DSYNC, O_DSYNC) */
};

/* Forgets everything recorded and arms the spy. */
void durability_spy_reset(void);
/* Stops recording (what was recorded stays readable). */
void durability_spy_disarm(void);
/* What the spy knows about the file at path now (zeroes for a file it never saw). */
struct durability_state durability_spy_file(const char *path);
/* Names created or replaced (rename) in path's directory since that directory's last fsync. */
unsigned durability_spy_unsynced_names(const char *path);
/* True when a power loss now would lose nothing written to path, nor its name. */
bool durability_spy_durable(const char *path);

/* Fault injection (works armed or not): while on, fsync/fdatasync (resp. ftruncate) fail with
 * EIO without calling the C library. */
void durability_spy_fail_syncs(bool on);
void durability_spy_fail_truncates(bool on);
/* fsync + fdatasync calls on any file since the process started, failed ones included. */
unsigned durability_spy_sync_calls(void);

#endif
