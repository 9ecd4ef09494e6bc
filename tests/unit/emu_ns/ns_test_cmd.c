/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ns_test_cmd.h"

struct nvme_sqe ns_cmd(uint8_t opc, uint64_t slba, uint32_t nblocks, void *buf)
{
	struct nvme_sqe c;
	memset(&c, 0, sizeof(c));
	c.opc = opc;
	c.nsid = 1;
	c.prp1 = (uint64_t)(uintptr_t)buf;
	c.cdw10 = (uint32_t)slba;
	c.cdw11 = (uint32_t)(slba >> 32);
	c.cdw12 = (nblocks - 1) & 0xffffu;
	return c;
}

struct nvme_sqe ns_cmd_dsm(uint32_t nr, uint32_t attrs, struct nvme_dsm_range *ranges)
{
	struct nvme_sqe c;
	memset(&c, 0, sizeof(c));
	c.opc = NVME_CMD_DSM;
	c.nsid = 1;
	c.prp1 = (uint64_t)(uintptr_t)ranges;
	c.cdw10 = (nr - 1) & 0xffu;
	c.cdw11 = attrs;
	return c;
}

uint16_t ns_exec(struct emu_ns *ns, const struct nvme_sqe *cmd, struct emu_io_stats *stats,
		 uint64_t *err_lba)
{
	struct emu_io_ctx io = { .ctrl = NULL, .stats = stats, .dw0 = 0xdeadbeef,
				 .err_lba = UINT64_MAX };
	uint16_t st = emu_ns_execute(ns, cmd, &io);
	if (err_lba)
		*err_lba = io.err_lba;
	return st;
}

uint16_t ns_write(struct emu_ns *ns, uint64_t slba, uint32_t nblocks, void *buf)
{
	struct nvme_sqe c = ns_cmd(NVME_CMD_WRITE, slba, nblocks, buf);
	return ns_exec(ns, &c, NULL, NULL);
}

uint16_t ns_read(struct emu_ns *ns, uint64_t slba, uint32_t nblocks, void *buf)
{
	struct nvme_sqe c = ns_cmd(NVME_CMD_READ, slba, nblocks, buf);
	return ns_exec(ns, &c, NULL, NULL);
}

const char *ns_kind_name(enum emu_ns_kind kind)
{
	switch (kind) {
	case EMU_NS_MEM: return "memory";
	case EMU_NS_FILE: return "file";
	case EMU_NS_NULL: return "null";
	case EMU_NS_KV: return "kv";
	case EMU_NS_ZNS: return "zns";
	case EMU_NS_EXT: return "ext";
	}
	return "?";
}

int ns_test_mkdtemp(char *dir, size_t len)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, len, "%s/unvme-ns-test.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	return mkdtemp(dir) ? 0 : -errno;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

void ns_test_rmtree(const char *dir)
{
	nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int ns_fixture_reopen(struct ns_fixture *f, uint64_t size, uint32_t lba)
{
	struct emu_ns_params p;
	char err[512] = "";
	memset(&p, 0, sizeof(p));
	p.kind = f->kind;
	p.size_bytes = size;
	p.lba_size = lba;
	snprintf(p.path, sizeof(p.path), "%s", f->path);
	for (int i = 0; i < 16; i++)
		p.nguid[i] = (uint8_t)(0xa0 + i);
	for (int i = 0; i < 8; i++)
		p.eui64[i] = (uint8_t)(0x10 + i);
	int r = emu_ns_create(&p, 1, &f->ns, err, sizeof(err));
	if (r)
		fprintf(stderr, "  cannot create a %s namespace: %s\n", ns_kind_name(f->kind), err);
	return r;
}

int ns_fixture_open(struct ns_fixture *f, enum emu_ns_kind kind, uint64_t size, uint32_t lba)
{
	memset(f, 0, sizeof(*f));
	f->kind = kind;
	int r = ns_test_mkdtemp(f->dir, sizeof(f->dir));
	if (r)
		return r;
	snprintf(f->path, sizeof(f->path), "%s/ns.img", f->dir);
	r = ns_fixture_reopen(f, size, lba);
	if (r) {
		ns_test_rmtree(f->dir);
		f->dir[0] = 0;
	}
	return r;
}

void ns_fixture_close_ns(struct ns_fixture *f)
{
	emu_ns_destroy(f->ns);
	f->ns = NULL;
}

void ns_fixture_close(struct ns_fixture *f)
{
	ns_fixture_close_ns(f);
	if (f->dir[0])
		ns_test_rmtree(f->dir);
	f->dir[0] = 0;
}

void ns_test_pattern(void *buf, size_t len, uint32_t seed)
{
	uint8_t *b = buf;
	uint32_t x = seed * 2654435761u + 1;
	for (size_t i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		b[i] = (uint8_t)(x >> 8);
		if (b[i] == 0) /* keep zero out, so a block of zeroes never looks like data */
			b[i] = 1;
	}
}

bool ns_test_all_byte(const void *buf, size_t len, uint8_t byte)
{
	const uint8_t *b = buf;
	for (size_t i = 0; i < len; i++)
		if (b[i] != byte)
			return false;
	return true;
}

bool ns_test_all_zero(const void *buf, size_t len)
{
	return ns_test_all_byte(buf, len, 0);
}

void *ns_test_alloc(size_t len)
{
	void *p = NULL;
	if (posix_memalign(&p, 4096, len ? len : 1) != 0)
		abort();
	memset(p, 0xee, len);
	return p;
}
