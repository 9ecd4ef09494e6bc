/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The admin side of a device that has no NVMe controller to ask: a regular file, or a block
 * device whose kernel refuses passthrough (no CAP_SYS_ADMIN). Identify data is built from
 * what is known (size, block size, and for a block device the model, serial and firmware
 * revision sysfs shows); the few admin commands that make sense are answered, the rest get
 * the status a controller without them returns (Invalid Command Opcode).
 */
#ifndef UNVME_DRIVER_URING_IDENT_H
#define UNVME_DRIVER_URING_IDENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unvme/spec.h"

struct uring_ident {
	char model[41];
	char serial[21];
	char firmware[9];
	uint32_t nsid;      /* the one namespace */
	uint64_t nlbas;
	uint32_t lba_size;  /* 512 or 4096 (or what the block device reports) */
	uint16_t oncs;      /* optional commands served (Compare, DSM, Write Zeroes, Verify) */
	uint8_t mdts;       /* 2^mdts pages of 4 KiB per command */
	bool write_cache;   /* Flush does something (fdatasync) */
	uint32_t nr_queues; /* what Get Features (Number of Queues) reports */
};

/* A serial number from a string (the absolute path of a file): prefix + 16 hex digits of a
 * hash, stable across runs. */
void uring_ident_serial(struct uring_ident *id, const char *prefix, const char *key);

/* Answers an admin command: 0 or a positive NVMe status, cpl (DW0) filled; buf receives data
 * for Identify and Get Log Page (len bytes, zero filled past the structure). */
int uring_ident_admin(const struct uring_ident *id, const struct nvme_sqe *cmd, void *buf,
		      size_t len, struct nvme_cqe *cpl);

#endif
