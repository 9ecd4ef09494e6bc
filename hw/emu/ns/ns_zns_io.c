/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * I/O commands on a zoned namespace (ZNS Command Set 1.1 sections 3 and 4): the NVM commands
 * with the zone rules, Zone Append, Zone Management Send and Zone Management Receive.
 *
 * Writes (Write, Write Zeroes, Zone Append) are checked in this order, as the specification's
 * figures list the conditions: zone state (Full: Zone Is Full, Read Only: Zone Is Read Only,
 * Offline: Zone Is Offline), start (Write: at the write pointer, else Zone Invalid Write;
 * Zone Append: at a zone's start, else Invalid Field), end (past the zone capacity: Zone
 * Boundary Error), then resources for opening the zone (Too Many Active / Open Zones).
 * Reads may not cross a zone boundary (Identify OZCS.RAZB = 0) and fail on an offline zone.
 */
#include <stdlib.h>
#include <string.h>

#include "hw/emu/ns/ns_backend.h"
#include "hw/emu/ns/ns_internal.h"
#include "hw/emu/ns/ns_zns.h"
#include "hw/emu/ns/nvm_fast.h"

static uint64_t cmd_slba(const struct nvme_sqe *cmd)
{
	return (uint64_t)cmd->cdw11 << 32 | cmd->cdw10;
}

static uint16_t st_generic(unsigned sc)
{
	return emu_ns_status(NVME_SCT_GENERIC, sc, true);
}

static uint16_t st_zone(unsigned sc)
{
	return emu_ns_status(NVME_SCT_CMD, sc, true);
}

static uint16_t out_of_range(struct emu_io_ctx *io, uint64_t slba)
{
	io->err_lba = slba;
	return st_generic(NVME_SC_LBA_OUT_OF_RANGE);
}

struct zgeo {
	unsigned shift;
	uint64_t nlbas;     /* of the namespace */
	uint64_t zsze;      /* zone size, blocks */
	uint64_t zcap;      /* zone capacity, blocks */
};

static struct zgeo geometry(const struct emu_zns *z, unsigned shift)
{
	return (struct zgeo){
		.shift = shift,
		.nlbas = (uint64_t)z->nr_zones * (z->zone_bytes >> shift),
		.zsze = z->zone_bytes >> shift,
		.zcap = z->cap_bytes >> shift,
	};
}

/* Read, Compare, Verify: inside one zone, not an offline one. */
static uint16_t check_read(struct emu_zns *z, const struct zgeo *g, struct emu_io_ctx *io,
			   uint64_t slba, uint32_t nlb)
{
	if (slba >= g->nlbas || nlb > g->nlbas - slba)
		return out_of_range(io, slba);
	uint64_t zi = slba / g->zsze;
	io->err_lba = slba;
	if ((slba + nlb - 1) / g->zsze != zi)
		return st_zone(NVME_SC_ZONE_BOUNDARY_ERROR);
	if (atomic_load_explicit(&z->rstate[zi], memory_order_acquire) == NVME_ZS_OFFLINE)
		return st_zone(NVME_SC_ZONE_OFFLINE);
	return 0;
}

/* Zeroes (read) or checks for zeroes (compare) bytes [from, from + n) of the host transfer. */
static bool xfer_zero_tail(const struct emu_xfer *x, uint32_t from, uint32_t n, bool check)
{
	for (uint32_t i = 0; i < x->nseg && n; i++) {
		uint32_t l = x->seg[i].len;
		if (from >= l) {
			from -= l;
			continue;
		}
		uint32_t k = l - from < n ? l - from : n;
		uint8_t *p = x->seg[i].addr + from;
		if (!check) {
			memset(p, 0, k);
		} else {
			for (uint32_t j = 0; j < k; j++)
				if (p[j])
					return false;
		}
		from = 0;
		n -= k;
	}
	return true;
}

static uint16_t zns_read(struct emu_ns *ns, const struct nvme_sqe *cmd, struct emu_io_ctx *io,
			 const struct zgeo *g, enum emu_nvm_dir dir)
{
	uint64_t slba = cmd_slba(cmd);
	uint32_t nlb = (cmd->cdw12 & 0xffffu) + 1;
	uint16_t st = check_read(ns->zns, g, io, slba, nlb);
	if (st)
		return st;
	uint64_t len = (uint64_t)nlb << g->shift;
	struct emu_xfer x;
	st = emu_nvm_map(ns, cmd, io, len, &x);
	if (st)
		return st;
	/* past the zone's data end the blocks read as zeroes, whatever the backend keeps there */
	uint64_t zi = slba / g->zsze;
	uint64_t data_end = (uint64_t)zi * g->zsze +
			    (__atomic_load_n(&ns->zns->meta.zones[zi].written, __ATOMIC_ACQUIRE) >> g->shift);
	uint64_t stored = data_end > slba ? (data_end - slba < nlb ? data_end - slba : nlb) : 0;
	if (stored == nlb)
		return emu_nvm_move(ns, cmd, io, &x, slba, (uint32_t)len, g->shift, dir);
	uint32_t head = (uint32_t)(stored << g->shift);
	if (head)
		st = emu_nvm_move(ns, cmd, io, &x, slba, head, g->shift, dir);
	if (!st && !xfer_zero_tail(&x, head, (uint32_t)len - head, dir == EMU_NVM_COMPARE))
		st = emu_ns_status(NVME_SCT_MEDIA, NVME_SC_COMPARE_FAILURE, true);
	return st;
}

enum zwrite { ZW_WRITE, ZW_ZEROES, ZW_APPEND };

/*
 * Reserves nlb blocks in the zone of slba under the zone lock: the state and position checks,
 * opening the zone, moving the write pointer (Full when it reaches the capacity). *lba gets
 * the first block's address and the zone's in-flight count is raised.
 */
static uint16_t reserve(struct emu_zns *z, const struct zgeo *g, enum zwrite kind, uint64_t slba,
			uint32_t nlb, uint64_t *lba, uint32_t *zone)
{
	uint32_t zi = (uint32_t)(slba / g->zsze);
	uint64_t zslba = (uint64_t)zi * g->zsze;
	struct zns_zone_rec *r = &z->meta.zones[zi];
	uint16_t st = 0;

	pthread_mutex_lock(&z->lock);
	switch (r->state) {
	case NVME_ZS_FULL:
		st = st_zone(NVME_SC_ZONE_FULL);
		break;
	case NVME_ZS_READ_ONLY:
		st = st_zone(NVME_SC_ZONE_READ_ONLY);
		break;
	case NVME_ZS_OFFLINE:
		st = st_zone(NVME_SC_ZONE_OFFLINE);
		break;
	default:
		break;
	}
	uint64_t wp = zslba + (r->filled >> g->shift);
	if (!st && kind == ZW_APPEND && slba != zslba)
		st = st_generic(NVME_SC_INVALID_FIELD);
	if (!st && kind != ZW_APPEND && slba != wp)
		st = st_zone(NVME_SC_ZONE_INVALID_WRITE);
	if (!st && wp + nlb > zslba + g->zcap)
		st = st_zone(NVME_SC_ZONE_BOUNDARY_ERROR);
	if (!st && r->state != NVME_ZS_IMP_OPEN && r->state != NVME_ZS_EXP_OPEN)
		st = zns_open(z, zi, false);
	if (!st) {
		r->filled += (uint64_t)nlb << g->shift;
		__atomic_store_n(&r->written, r->filled, __ATOMIC_RELEASE);
		if (r->filled == z->cap_bytes)
			zns_set_state(z, zi, NVME_ZS_FULL);
		atomic_fetch_add_explicit(&z->inflight[zi], 1, memory_order_relaxed);
		*lba = wp;
		*zone = zi;
	}
	pthread_mutex_unlock(&z->lock);
	return st;
}

static uint16_t zns_write(struct emu_ns *ns, const struct nvme_sqe *cmd, struct emu_io_ctx *io,
			  const struct zgeo *g, enum zwrite kind)
{
	struct emu_zns *z = ns->zns;
	uint64_t slba = cmd_slba(cmd);
	uint32_t nlb = (cmd->cdw12 & 0xffffu) + 1;
	if (kind == ZW_APPEND && !atomic_load_explicit(&z->zone_cmds, memory_order_relaxed))
		return st_generic(NVME_SC_INVALID_OPCODE);
	if (slba >= g->nlbas || nlb > g->nlbas - slba) {
		/* an append names a zone: only its start has to be inside the namespace */
		if (kind != ZW_APPEND || slba >= g->nlbas)
			return out_of_range(io, slba);
	}
	uint64_t len = (uint64_t)nlb << g->shift;
	struct emu_xfer x;
	uint16_t st = 0;
	if (kind == ZW_APPEND) {
		if (len > z->zasl_bytes)
			return st_generic(NVME_SC_INVALID_FIELD);
	}
	/* the host memory first: a transfer error must not move the write pointer */
	if (kind != ZW_ZEROES) {
		st = emu_nvm_map(ns, cmd, io, len, &x);
		if (st)
			return st;
	}
	uint64_t lba;
	uint32_t zi;
	st = reserve(z, g, kind, slba, nlb, &lba, &zi);
	if (st) {
		io->err_lba = slba;
		return st;
	}
	if (kind == ZW_ZEROES) {
		/* the blocks past the write pointer read as zeroes already */
		st = 0;
	} else {
		st = emu_nvm_move(ns, cmd, io, &x, lba, (uint32_t)len, g->shift, EMU_NVM_WRITE);
	}
	atomic_fetch_sub_explicit(&z->inflight[zi], 1, memory_order_release);
	/* FUA or no write cache: the data is durable (the backend wrote it through), and so
	 * must be the write pointer that covers it */
	if (!st && nvm_write_durable(ns, cmd) && zns_meta_sync(&z->meta) != 0)
		st = emu_ns_status(NVME_SCT_MEDIA, NVME_SC_WRITE_FAULT, false);
	if (!st && kind == ZW_APPEND) {
		io->dw0 = (uint32_t)lba;
		io->dw1 = (uint32_t)(lba >> 32);
	}
	return st;
}

/* Zone Management Send (section 4.3): CDW13 ZSA (7:0), Select All (bit 8). */
static uint16_t mgmt_send(struct emu_zns *z, const struct nvme_sqe *cmd, struct emu_io_ctx *io,
			  const struct zgeo *g)
{
	uint64_t slba = cmd_slba(cmd);
	uint8_t zsa = cmd->cdw13 & 0xffu;
	bool all = cmd->cdw13 & NVME_ZSA_SELECT_ALL;
	uint32_t zi = 0;
	if (!all) {
		/* without Select All, SLBA names one zone by its start */
		if (slba >= g->nlbas)
			return out_of_range(io, slba);
		if (slba % g->zsze) {
			io->err_lba = slba;
			return st_generic(NVME_SC_INVALID_FIELD);
		}
		zi = (uint32_t)(slba / g->zsze);
	}
	uint16_t st = zns_mgmt_send(z, zi, zsa, all);
	if (st)
		io->err_lba = slba;
	return st;
}

static bool report_matches(uint8_t opt, uint8_t s)
{
	switch (opt) {
	case NVME_ZRAS_ALL: return true;
	case NVME_ZRAS_EMPTY: return s == NVME_ZS_EMPTY;
	case NVME_ZRAS_IMP_OPEN: return s == NVME_ZS_IMP_OPEN;
	case NVME_ZRAS_EXP_OPEN: return s == NVME_ZS_EXP_OPEN;
	case NVME_ZRAS_CLOSED: return s == NVME_ZS_CLOSED;
	case NVME_ZRAS_FULL: return s == NVME_ZS_FULL;
	case NVME_ZRAS_READ_ONLY: return s == NVME_ZS_READ_ONLY;
	case NVME_ZRAS_OFFLINE: return s == NVME_ZS_OFFLINE;
	default: return false;
	}
}

static void describe(const struct emu_zns *z, const struct zgeo *g, uint32_t zi,
		     struct nvme_zone_desc *d)
{
	const struct zns_zone_rec *r = &z->meta.zones[zi];
	uint64_t zslba = (uint64_t)zi * g->zsze;
	memset(d, 0, sizeof(*d));
	d->zt = NVME_ZONE_TYPE_SEQ_WRITE_REQ;
	d->zs = (uint8_t)(r->state << 4);
	d->za = r->attrs;
	d->zcap = g->zcap;
	d->zslba = zslba;
	/* an offline zone has no valid write pointer; a read-only one keeps where it stopped */
	d->wp = r->state == NVME_ZS_OFFLINE ? UINT64_MAX : zslba + (r->filled >> g->shift);
}

/*
 * Zone Management Receive (section 4.4): CDW12 NUMD, CDW13 ZRA (7:0), ZRASF (15:8), Partial
 * Report (bit 16). Zones from the one holding SLBA to the end that match the reporting option;
 * the header counts all of them, or with Partial Report only those that fit the buffer.
 */
static uint16_t mgmt_recv(struct emu_zns *z, const struct nvme_sqe *cmd, struct emu_io_ctx *io,
			  const struct zgeo *g)
{
	uint64_t slba = cmd_slba(cmd);
	uint8_t zra = cmd->cdw13 & 0xffu;
	uint8_t opt = (cmd->cdw13 >> 8) & 0xffu;
	bool partial = cmd->cdw13 & NVME_ZRA_PARTIAL;
	uint64_t len = ((uint64_t)cmd->cdw12 + 1) * 4;
	/* Extended Report Zones needs zone descriptor extensions (ZDES = 0) */
	if (zra != NVME_ZRA_REPORT_ZONES || opt > NVME_ZRAS_OFFLINE || len > EMU_MDTS_BYTES)
		return st_generic(NVME_SC_INVALID_FIELD);
	if (slba >= g->nlbas)
		return out_of_range(io, slba);
	struct emu_xfer x;
	uint16_t st = emu_xfer_map(io->ctrl, cmd, (uint32_t)len, &x);
	if (st)
		return st;
	uint8_t *buf = calloc(1, len < sizeof(struct nvme_zone_report_hdr) ? sizeof(struct nvme_zone_report_hdr) : len);
	if (!buf)
		return emu_ns_status(NVME_SCT_GENERIC, NVME_SC_INTERNAL, false);
	uint64_t room = len > sizeof(struct nvme_zone_report_hdr)
				? (len - sizeof(struct nvme_zone_report_hdr)) / sizeof(struct nvme_zone_desc)
				: 0;
	uint64_t matched = 0, placed = 0;
	struct nvme_zone_desc *d = (struct nvme_zone_desc *)(buf + sizeof(struct nvme_zone_report_hdr));
	pthread_mutex_lock(&z->lock);
	for (uint32_t zi = (uint32_t)(slba / g->zsze); zi < z->nr_zones; zi++) {
		if (!report_matches(opt, z->meta.zones[zi].state))
			continue;
		matched++;
		if (placed < room)
			describe(z, g, zi, &d[placed++]);
		else if (partial)
			break;
	}
	pthread_mutex_unlock(&z->lock);
	struct nvme_zone_report_hdr hdr = { .nr_zones = partial ? placed : matched };
	memcpy(buf, &hdr, len < sizeof(hdr) ? len : sizeof(hdr));
	emu_xfer_to_host(&x, buf, (uint32_t)len);
	free(buf);
	return 0;
}

uint16_t emu_zns_execute(struct emu_ns *ns, const struct nvme_sqe *cmd, struct emu_io_ctx *io,
			 unsigned shift)
{
	struct emu_zns *z = ns->zns;
	struct zgeo g = geometry(z, shift);
	io->dw0 = 0;
	switch (cmd->opc) {
	case NVME_CMD_READ:
		return zns_read(ns, cmd, io, &g, EMU_NVM_READ);
	case NVME_CMD_COMPARE:
		return zns_read(ns, cmd, io, &g, EMU_NVM_COMPARE);
	case NVME_CMD_VERIFY:
		return check_read(z, &g, io, cmd_slba(cmd), (cmd->cdw12 & 0xffffu) + 1);
	case NVME_CMD_WRITE:
		return zns_write(ns, cmd, io, &g, ZW_WRITE);
	case NVME_CMD_WRITE_ZEROES:
		return zns_write(ns, cmd, io, &g, ZW_ZEROES);
	case NVME_CMD_ZONE_APPEND:
		return zns_write(ns, cmd, io, &g, ZW_APPEND);
	case NVME_CMD_DSM:
		/* zones give blocks back by Reset Zone: deallocation is only checked, not done */
		return emu_nvm_dsm(ns, cmd, io, shift, false);
	case NVME_CMD_FLUSH:
		return emu_ns_sync(ns) ? emu_ns_status(NVME_SCT_MEDIA, NVME_SC_WRITE_FAULT, false) : 0;
	case NVME_CMD_ZONE_MGMT_SEND:
		if (!atomic_load_explicit(&z->zone_cmds, memory_order_relaxed))
			break;
	{
		uint16_t st = mgmt_send(z, cmd, io, &g);
		/* with the write cache off every command is durable when it completes */
		if (!st && !atomic_load_explicit(&ns->write_cache, memory_order_relaxed) &&
		    zns_meta_sync(&z->meta) != 0)
			st = emu_ns_status(NVME_SCT_MEDIA, NVME_SC_WRITE_FAULT, false);
		return st;
	}
	case NVME_CMD_ZONE_MGMT_RECV:
		if (!atomic_load_explicit(&z->zone_cmds, memory_order_relaxed))
			break;
		return mgmt_recv(z, cmd, io, &g);
	default:
		break;
	}
	return st_generic(NVME_SC_INVALID_OPCODE);
}
