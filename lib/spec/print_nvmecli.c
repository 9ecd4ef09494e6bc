/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvme-cli's JSON key names, added to our JSON documents where ours differ, so that a script
 * written for `nvme ... -o json` (nvme-cli 2.x) finds its keys with their types in
 * `unvme ... -o json`. Our own keys (the specification's field names) stay: these are extra
 * keys, JSON only. Names and meanings follow nvme-cli's documented output; the values come
 * from the same structure fields as ours.
 */
#include <stddef.h>
#include <string.h>

#include "print_util.h"

/* Bytes 240..255 of Identify Controller: NVMSR at 253, VWCI at 254, MEC at 255. */
#define NVMMI_NVMSR 13
#define NVMMI_VWCI 14
#define NVMMI_MEC 15

/* NVMe over Fabrics attributes at byte 1792: IOCCSZ, IORCSZ, ICDOFF, FCATT, MSDBD, OFCS. */
struct fabrics_attrs {
	uint32_t ioccsz;
	uint32_t iorcsz;
	uint16_t icdoff;
	uint8_t fcatt;
	uint8_t msdbd;
	uint16_t ofcs;
} __attribute__((packed));

void spec_nvmecli_id_ctrl(struct spec_out *o, const struct nvme_id_ctrl *id)
{
	if (!out_is_json(o))
		return;
	out_dec(o, "nvmsr", id->nvmmi[NVMMI_NVMSR]);
	out_dec(o, "vwci", id->nvmmi[NVMMI_VWCI]);
	out_dec(o, "mec", id->nvmmi[NVMMI_MEC]);
	out_dec(o, "ocfs", id->cdfs);
	struct fabrics_attrs f;
	memcpy(&f, id->nvmeof, sizeof(f));
	out_dec(o, "ioccsz", f.ioccsz);
	out_dec(o, "iorcsz", f.iorcsz);
	out_dec(o, "icdoff", f.icdoff);
	out_dec(o, "fcatt", f.fcatt);
	out_dec(o, "msdbd", f.msdbd);
	out_dec(o, "ofcs", f.ofcs);
	json_object *psds = out_array(o, "psds");
	for (unsigned i = 0; i <= id->npss && i < SPEC_ARRAY_SIZE(id->psd); i++) {
		const struct nvme_psd *ps = &id->psd[i];
		struct out_scope s = out_enter_element(o, psds);
		out_dec(o, "max_power", ps->mp);
		out_dec(o, "max_power_scale", ps->flags & 0x1);
		out_dec(o, "non-operational_state", (ps->flags >> 1) & 0x1);
		out_dec(o, "entry_lat", ps->enlat);
		out_dec(o, "exit_lat", ps->exlat);
		out_dec(o, "read_tput", ps->rrt);
		out_dec(o, "read_lat", ps->rrl);
		out_dec(o, "write_tput", ps->rwt);
		out_dec(o, "write_lat", ps->rwl);
		out_dec(o, "idle_power", ps->idlp);
		out_dec(o, "idle_scale", (ps->ips >> 6) & 0x3);
		out_dec(o, "active_power", ps->actp);
		out_dec(o, "active_power_work", ps->apws & 0x7);
		out_dec(o, "active_scale", (ps->apws >> 6) & 0x3);
		out_leave(o, s);
	}
}

void spec_nvmecli_id_ns(struct spec_out *o, const struct nvme_id_ns *id)
{
	if (!out_is_json(o))
		return;
	/* nvme-cli calls the LBA data size "ds" (ours: lbads) and the list "lbafs" */
	json_object *lbafs = out_array(o, "lbafs");
	for (unsigned i = 0; i <= id->nlbaf && i < SPEC_ARRAY_SIZE(id->lbaf); i++) {
		struct out_scope s = out_enter_element(o, lbafs);
		out_dec(o, "ms", id->lbaf[i].ms);
		out_dec(o, "ds", id->lbaf[i].lbads);
		out_dec(o, "rp", id->lbaf[i].rp & 0x3);
		out_leave(o, s);
	}
}

void spec_nvmecli_smart_log(struct spec_out *o, const struct nvme_smart_log *log)
{
	if (!out_is_json(o))
		return;
	out_dec(o, "endurance_grp_critical_warning_summary", log->endgrp_crit_warning);
	const uint8_t *base = (const uint8_t *)log;
	out_u128(o, "host_read_commands", base + offsetof(struct nvme_smart_log, host_reads), NULL);
	out_u128(o, "host_write_commands", base + offsetof(struct nvme_smart_log, host_writes), NULL);
	out_u128(o, "controller_busy_time", base + offsetof(struct nvme_smart_log, ctrl_busy_time),
		 NULL);
	out_dec(o, "critical_comp_time", log->crit_comp_time);
	/* one key per implemented sensor (0: not implemented), numbered from 1 */
	for (unsigned i = 0; i < SPEC_ARRAY_SIZE(log->temp_sensor); i++) {
		if (!log->temp_sensor[i])
			continue;
		char name[32];
		snprintf(name, sizeof(name), "temperature_sensor_%u", i + 1);
		out_dec(o, name, log->temp_sensor[i]);
	}
}

void spec_nvmecli_error_entry(struct spec_out *o, const struct nvme_error_log *e)
{
	if (!out_is_json(o))
		return;
	out_dec(o, "cmdid", e->cid);
	out_dec(o, "status_field", e->status >> 1);
	out_dec(o, "phase_tag", e->status & 0x1);
	out_dec(o, "parm_error_location", e->param_loc);
	out_dec(o, "cs", e->csi);
	out_dec(o, "trtype_spec_info", e->trtype_spec);
}
