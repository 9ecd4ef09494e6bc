/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zns_test.h"

struct emu_ns *zt_open(const struct zns_geo *g, const char *dir)
{
	struct emu_ns_params p;
	memset(&p, 0, sizeof(p));
	p.kind = EMU_NS_ZNS;
	p.lba_size = g->lba ? g->lba : 4096;
	p.size_bytes = (uint64_t)g->nzones * g->zone_kib * 1024;
	p.zns.zone_bytes = (uint64_t)g->zone_kib * 1024;
	p.zns.cap_bytes = (uint64_t)(g->cap_kib ? g->cap_kib : g->zone_kib) * 1024;
	p.zns.max_open = g->open;
	p.zns.max_active = g->active;
	p.zns.zasl_bytes = g->zasl;
	if (dir)
		snprintf(p.path, sizeof(p.path), "%s/zns.img", dir);
	char err[512] = "";
	struct emu_ns *ns = NULL;
	if (emu_ns_create(&p, 1, &ns, err, sizeof(err)) != 0) {
		fprintf(stderr, "  cannot create the zoned namespace: %s\n", err);
		return NULL;
	}
	/* a controller enabled with CC.CSS = 110b */
	emu_ns_set_command_sets(ns, true);
	return ns;
}

uint16_t zt_write(struct emu_ns *ns, uint64_t slba, uint32_t nlb, void *buf)
{
	return ns_write(ns, slba, nlb, buf);
}

uint16_t zt_read(struct emu_ns *ns, uint64_t slba, uint32_t nlb, void *buf)
{
	return ns_read(ns, slba, nlb, buf);
}

uint16_t zt_append(struct emu_ns *ns, uint64_t zslba, uint32_t nlb, void *buf, uint64_t *lba)
{
	struct nvme_sqe c = ns_cmd(NVME_CMD_ZONE_APPEND, zslba, nlb, buf);
	struct emu_io_ctx io = { .err_lba = UINT64_MAX, .dw0 = 0xdeadbeef, .dw1 = 0xdeadbeef };
	uint16_t st = emu_ns_execute(ns, &c, &io);
	if (lba)
		*lba = (uint64_t)io.dw1 << 32 | io.dw0;
	return st;
}

uint16_t zt_send(struct emu_ns *ns, uint64_t slba, uint8_t zsa, bool all)
{
	struct nvme_sqe c = ns_cmd(NVME_CMD_ZONE_MGMT_SEND, slba, 1, NULL);
	c.cdw12 = 0;
	c.cdw13 = zsa | (all ? NVME_ZSA_SELECT_ALL : 0);
	return ns_exec(ns, &c, NULL, NULL);
}

uint16_t zt_report(struct emu_ns *ns, uint64_t slba, uint8_t opt, bool partial, void *buf,
		   uint32_t len)
{
	struct nvme_sqe c = ns_cmd(NVME_CMD_ZONE_MGMT_RECV, slba, 1, buf);
	c.cdw12 = len / 4 - 1;
	c.cdw13 = NVME_ZRA_REPORT_ZONES | (uint32_t)opt << 8 | (partial ? NVME_ZRA_PARTIAL : 0);
	return ns_exec(ns, &c, NULL, NULL);
}

struct nvme_zone_desc zt_zone(struct emu_ns *ns, uint64_t zslba)
{
	uint8_t buf[128];
	memset(buf, 0, sizeof(buf));
	struct nvme_zone_desc d;
	memset(&d, 0xff, sizeof(d));
	if (zt_report(ns, zslba, NVME_ZRAS_ALL, true, buf, sizeof(buf)) == 0)
		memcpy(&d, buf + 64, sizeof(d));
	return d;
}

uint8_t zt_state(struct emu_ns *ns, uint64_t zslba)
{
	struct nvme_zone_desc d = zt_zone(ns, zslba);
	return nvme_zone_desc_state(&d);
}
