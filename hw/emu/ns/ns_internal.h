/* SPDX-License-Identifier: BSD-3-Clause */
/* The namespace object shared by the files of hw/emu/ns (the controller sees it opaque). */
#ifndef UNVME_EMU_NS_INTERNAL_H
#define UNVME_EMU_NS_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "hw/emu/emu.h"
#include "hw/emu/ns/ns_backend.h"

/*
 * The namespace's current geometry in one word, so that an I/O command reads a consistent
 * LBA size with a single atomic load while a Format NVM may change it from the admin path:
 * bits 7:0 hold log2 of the LBA data size, EMU_NS_FORMATTING is set while a format runs
 * (commands then complete with Format In Progress, NVMe Base 2.0 section 5.14).
 */
#define EMU_NS_GEOM_SHIFT_MASK 0xffu
#define EMU_NS_FORMATTING      (1u << 31)
/* Set for a key-value namespace: the NVM executor's "not plain" check (one test of the word it
 * loads anyway) then hands the command to the KV command sets, at no cost to NVM commands. */
#define EMU_NS_KV_GEOM         (1u << 30)
/* Set for a zoned namespace: its commands go through the zone checks (ns_zns_io.c). */
#define EMU_NS_ZONED_GEOM      (1u << 29)

/* The LBA formats every namespace offers (Identify Namespace LBAF0 and LBAF1). */
#define EMU_NS_NR_LBAF 2u
static inline unsigned emu_ns_lbaf_shift(unsigned index)
{
	static const unsigned char shift[EMU_NS_NR_LBAF] = { 9, 12 }; /* 512 B, 4096 B */
	return index < EMU_NS_NR_LBAF ? shift[index] : 0;
}
static inline unsigned emu_ns_lbaf_index(unsigned shift)
{
	return shift == 12 ? 1u : 0u;
}

struct emu_kv;
struct emu_zns;

struct emu_ns {
	struct emu_ns_backend *be;  /* NULL for a KV namespace */
	struct emu_kv *kv;          /* key-value namespace (hw/emu/ns/kv_ns.h), else NULL */
	struct emu_zns *zns;        /* zoned namespace (hw/emu/ns/ns_zns.h), else NULL */
	_Atomic uint32_t geom;      /* see EMU_NS_GEOM_SHIFT_MASK */
	atomic_bool write_cache;    /* Volatile Write Cache feature (06h), enabled by default */
	uint8_t nguid[16];
	uint8_t eui64[8];
};

/* A completion status word with the Do Not Retry bit where a retry cannot help. */
static inline uint16_t emu_ns_status(unsigned sct, unsigned sc, bool dnr)
{
	return (uint16_t)(NVME_CQE_STATUS(sct, sc) | (dnr ? 0x8000u : 0u));
}

/* The data movement of the NVM commands (nvm_io.c), shared with the zoned command set. */
enum emu_nvm_dir { EMU_NVM_READ, EMU_NVM_WRITE, EMU_NVM_COMPARE };
/* Checks len against MDTS and maps the command's host memory (nothing for the null backend). */
uint16_t emu_nvm_map(struct emu_ns *ns, const struct nvme_sqe *cmd, struct emu_io_ctx *io,
		     uint64_t len, struct emu_xfer *x);
/* Moves len bytes at slba through the backend and counts them in the queue's statistics. */
uint16_t emu_nvm_move(struct emu_ns *ns, const struct nvme_sqe *cmd, struct emu_io_ctx *io,
		      const struct emu_xfer *x, uint64_t slba, uint32_t len, unsigned shift,
		      enum emu_nvm_dir dir);
/* Dataset Management: checks the ranges; deallocates them when deallocate is true. */
uint16_t emu_nvm_dsm(struct emu_ns *ns, const struct nvme_sqe *cmd, struct emu_io_ctx *io,
		     unsigned shift, bool deallocate);

/* The host segments covering len bytes of a transfer as iovecs (at most EMU_XFER_MAX_SEGS). */
static inline unsigned emu_xfer_iov(const struct emu_xfer *x, uint32_t len, struct iovec *iov)
{
	unsigned n = 0;
	for (uint32_t i = 0; i < x->nseg && len; i++) {
		uint32_t l = x->seg[i].len < len ? x->seg[i].len : len;
		iov[n].iov_base = x->seg[i].addr;
		iov[n].iov_len = l;
		n++;
		len -= l;
	}
	return n;
}

/* snprintf into err (which may be NULL). */
void emu_ns_set_error(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
