/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Helpers of the namespace tests: building NVM commands, running them against a namespace
 * (through the test double of host memory access, xfer_double.h), namespaces in temporary
 * directories, and recognisable block contents.
 */
#ifndef UNVME_TEST_NS_CMD_H
#define UNVME_TEST_NS_CMD_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hw/emu/emu.h"

/* Read/Write/Compare/Write Zeroes/Verify of nblocks (1's based, 1..65536) at slba. */
struct nvme_sqe ns_cmd(uint8_t opc, uint64_t slba, uint32_t nblocks, void *buf);
/* Dataset Management with nr ranges (1..256) and attributes (NVME_DSM_ATTR_*). */
struct nvme_sqe ns_cmd_dsm(uint32_t nr, uint32_t attrs, struct nvme_dsm_range *ranges);

/* Runs cmd; stats and err_lba may be NULL. err_lba is preset to UINT64_MAX. */
uint16_t ns_exec(struct emu_ns *ns, const struct nvme_sqe *cmd, struct emu_io_stats *stats,
		 uint64_t *err_lba);
uint16_t ns_write(struct emu_ns *ns, uint64_t slba, uint32_t nblocks, void *buf);
uint16_t ns_read(struct emu_ns *ns, uint64_t slba, uint32_t nblocks, void *buf);

/* Status word pieces, for readable checks. */
#define ST_SCT(st) NVME_CQE_SCT(st)
#define ST_SC(st)  NVME_CQE_SC(st)
#define ST_DNR(st) NVME_CQE_DNR(st)

/* A namespace of some kind in its own temporary directory (the file one at <dir>/ns.img). */
struct ns_fixture {
	enum emu_ns_kind kind;
	char dir[256]; /* mkdtemp result: short, so dir + "/ns.img" always fits */
	char path[PATH_MAX];
	struct emu_ns *ns;
};
/* 0 or -errno; prints the creation error. */
int ns_fixture_open(struct ns_fixture *f, enum emu_ns_kind kind, uint64_t size, uint32_t lba);
/* Destroys the namespace, keeps the directory and file (for reopening). */
void ns_fixture_close_ns(struct ns_fixture *f);
/* Reopens the file namespace of a fixture with size_bytes (0: the file's size). */
int ns_fixture_reopen(struct ns_fixture *f, uint64_t size, uint32_t lba);
/* Destroys the namespace and removes the temporary directory with its content. */
void ns_fixture_close(struct ns_fixture *f);
const char *ns_kind_name(enum emu_ns_kind kind);

/* A temporary directory (mkdtemp under $TMPDIR or /tmp) and its removal. */
int ns_test_mkdtemp(char *dir, size_t len);
void ns_test_rmtree(const char *dir);

/* Fills len bytes with a pattern that differs for every seed and every byte position. */
void ns_test_pattern(void *buf, size_t len, uint32_t seed);
bool ns_test_all_zero(const void *buf, size_t len);
bool ns_test_all_byte(const void *buf, size_t len, uint8_t byte);
/* posix_memalign'ed, page-aligned buffer; aborts when out of memory. */
void *ns_test_alloc(size_t len);

#endif
