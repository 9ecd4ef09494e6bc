/* SPDX-License-Identifier: BSD-3-Clause */
/* Helpers of the zoned namespace tests: namespaces with a zone geometry, the ZNS commands. */
#ifndef UNVME_TEST_ZNS_H
#define UNVME_TEST_ZNS_H

#include <stdbool.h>
#include <stdint.h>

#include "hw/emu/emu.h"
#include "ns_test_cmd.h"

/* A zoned namespace: nzones zones of zone_kib KiB (capacity cap_kib), lba-byte blocks, limits
 * open/active (0: none); in memory, or in dir/zns.img when dir is not NULL. */
struct zns_geo {
	uint32_t nzones;
	uint32_t zone_kib;
	uint32_t cap_kib;
	uint32_t lba;
	uint32_t open;
	uint32_t active;
	uint32_t zasl;   /* bytes, 0 = MDTS */
};
struct emu_ns *zt_open(const struct zns_geo *g, const char *dir);

uint16_t zt_write(struct emu_ns *ns, uint64_t slba, uint32_t nlb, void *buf);
uint16_t zt_read(struct emu_ns *ns, uint64_t slba, uint32_t nlb, void *buf);
/* Zone Append at zslba; *lba gets the completion's DW1:DW0. */
uint16_t zt_append(struct emu_ns *ns, uint64_t zslba, uint32_t nlb, void *buf, uint64_t *lba);
uint16_t zt_send(struct emu_ns *ns, uint64_t slba, uint8_t zsa, bool all);
/* Report Zones into buf of len bytes. */
uint16_t zt_report(struct emu_ns *ns, uint64_t slba, uint8_t opt, bool partial, void *buf,
		   uint32_t len);
/* The descriptor of the zone starting at zslba (through Report Zones). */
struct nvme_zone_desc zt_zone(struct emu_ns *ns, uint64_t zslba);
/* Zone state (ZS bits 7:4) of the zone starting at zslba. */
uint8_t zt_state(struct emu_ns *ns, uint64_t zslba);

#define ST_IS(st, sct, sc) (ST_SCT(st) == (sct) && ST_SC(st) == (sc))
#define ZST_IS(st, sc) ST_IS(st, NVME_SCT_CMD, sc)

#endif
