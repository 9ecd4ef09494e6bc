/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Printers for log pages: SMART / Health Information, Error Information, Firmware Slot
 * Information and Commands Supported and Effects.
 */
#include <inttypes.h>
#include <stddef.h>
#include <string.h>

#include <unvme/print.h>

#include "names.h"
#include "print_util.h"

/* ---- SMART / Health Information (Base 2.0, figure "SMART / Health Information Log Page") */

#define SMART_WIDTH 21

static const struct spec_bit_name critical_warning_bits[] = {
	{ 0, "available spare below threshold" },
	{ 1, "temperature outside threshold" },
	{ 2, "NVM subsystem reliability degraded" },
	{ 3, "media read-only" },
	{ 4, "volatile memory backup failed" },
	{ 5, "persistent memory region read-only" },
};

static const struct spec_bit_name endgrp_crit_warning_bits[] = {
	{ 0, "available spare below threshold" },
	{ 2, "reliability degraded" },
	{ 3, "namespaces read-only" },
};

/* The SMART log is packed (temperature is unaligned), so its 128-bit counters are reached by
 * byte offset rather than by taking the address of a packed member. */
#define SMART_FIELD(log, field) ((const uint8_t *)(log) + offsetof(struct nvme_smart_log, field))

static void out_temp(struct spec_out *o, const char *name, unsigned kelvin)
{
	out_num(o, name, kelvin, "%u K (%d C)", kelvin, spec_kelvin_to_celsius(kelvin));
}

/* Data units count thousands of 512-byte units. */
static void out_data_units(struct spec_out *o, const char *name, const uint8_t *le128)
{
	char human[32], suffix[40];
	snprintf(suffix, sizeof(suffix), "(%s)",
		 spec_si_bytes(human, sizeof(human), spec_u128_ld(le128) * 512000.0L));
	out_u128(o, name, le128, suffix);
}

void unvme_print_smart_log(FILE *f, const struct nvme_smart_log *log, enum unvme_fmt fmt)
{
	char bits[256];
	struct spec_out o;
	out_begin(&o, f, fmt, SMART_WIDTH, "SMART/Health Information Log:");
	out_num(&o, "critical_warning", log->critical_warning, "%#x (%s)", log->critical_warning,
		spec_bit_names(bits, sizeof(bits), log->critical_warning, critical_warning_bits,
			       SPEC_ARRAY_SIZE(critical_warning_bits)));
	out_temp(&o, "temperature", log->temperature);
	out_num(&o, "avail_spare", log->avail_spare, "%u%%", log->avail_spare);
	out_num(&o, "spare_thresh", log->spare_thresh, "%u%%", log->spare_thresh);
	out_num(&o, "percent_used", log->percent_used, "%u%%", log->percent_used);
	out_num(&o, "endgrp_crit_warning", log->endgrp_crit_warning, "%#x (%s)", log->endgrp_crit_warning,
		spec_bit_names(bits, sizeof(bits), log->endgrp_crit_warning, endgrp_crit_warning_bits,
			       SPEC_ARRAY_SIZE(endgrp_crit_warning_bits)));
	out_data_units(&o, "data_units_read", SMART_FIELD(log, data_units_read));
	out_data_units(&o, "data_units_written", SMART_FIELD(log, data_units_written));
	out_u128(&o, "host_reads", SMART_FIELD(log, host_reads), "commands");
	out_u128(&o, "host_writes", SMART_FIELD(log, host_writes), "commands");
	out_u128(&o, "ctrl_busy_time", SMART_FIELD(log, ctrl_busy_time), "min");
	out_u128(&o, "power_cycles", SMART_FIELD(log, power_cycles), NULL);
	out_u128(&o, "power_on_hours", SMART_FIELD(log, power_on_hours), "h");
	out_u128(&o, "unsafe_shutdowns", SMART_FIELD(log, unsafe_shutdowns), NULL);
	out_u128(&o, "media_errors", SMART_FIELD(log, media_errors), NULL);
	out_u128(&o, "num_err_log_entries", SMART_FIELD(log, num_err_log_entries), NULL);
	out_num(&o, "warning_temp_time", log->warning_temp_time, "%" PRIu32 " min", log->warning_temp_time);
	out_num(&o, "crit_comp_time", log->crit_comp_time, "%" PRIu32 " min", log->crit_comp_time);
	/* Sensors report 0 when not implemented: JSON keeps all eight in place, text shows only
	 * the implemented ones. */
	json_object *sensors = out_array(&o, "temp_sensor");
	for (unsigned i = 0; i < SPEC_ARRAY_SIZE(log->temp_sensor); i++) {
		uint16_t k = log->temp_sensor[i];
		if (out_is_json(&o)) {
			json_object_array_add(sensors, json_object_new_uint64(k));
		} else if (k) {
			char name[20];
			snprintf(name, sizeof(name), "temp_sensor_%u", i + 1);
			out_temp(&o, name, k);
		}
	}
	out_dec(&o, "thm_temp1_trans_count", log->thm_temp1_trans_count);
	out_dec(&o, "thm_temp2_trans_count", log->thm_temp2_trans_count);
	out_num(&o, "thm_temp1_total_time", log->thm_temp1_total_time, "%" PRIu32 " s", log->thm_temp1_total_time);
	out_num(&o, "thm_temp2_total_time", log->thm_temp2_total_time, "%" PRIu32 " s", log->thm_temp2_total_time);
	spec_nvmecli_smart_log(&o, log);
	out_end(&o);
}

/* ---- Error Information (Base 2.0, figure "Error Information Log Entry") */

#define ERROR_WIDTH 11

/* The status word of an error entry is laid out as in a completion (phase tag in bit 0). */
static void out_error_status(struct spec_out *o, uint16_t st)
{
	/* The entry does not record the command set; NVM naming is the common case. */
	const char *name = unvme_status_str(NVME_STATUS_FROM_CQE(st), NVME_CSI_NVM);
	out_num(o, "status", st, "0x%04x (%s%s)", st, name, NVME_CQE_DNR(st) ? ", DNR" : "");
	if (out_is_json(o))
		out_str(o, "status_name", name);
}

/* FFFFh means the error is not tied to a command parameter. */
static void out_param_loc(struct spec_out *o, uint16_t loc)
{
	if (loc == 0xffff)
		out_num(o, "param_loc", loc, "%#x (not applicable)", loc);
	else
		out_num(o, "param_loc", loc, "%#x (byte %u, bit %u)", loc, loc & 0xff, (loc >> 8) & 0x7);
}

void unvme_print_error_log(FILE *f, const struct nvme_error_log *log, unsigned n, enum unvme_fmt fmt)
{
	struct spec_out o;
	out_begin(&o, f, fmt, ERROR_WIDTH, "Error Information Log Entries:");
	json_object *errors = out_array(&o, "errors");
	for (unsigned i = 0; i < n; i++) {
		const struct nvme_error_log *e = &log[i];
		if (!e->error_count)
			continue; /* an empty entry */
		out_text(&o, "entry[%u]\n", i);
		struct out_scope s = out_enter_element(&o, errors);
		out_dec(&o, "error_count", e->error_count);
		out_dec(&o, "sqid", e->sqid);
		out_hex(&o, "cid", e->cid);
		out_error_status(&o, e->status);
		out_param_loc(&o, e->param_loc);
		out_hex(&o, "lba", e->lba);
		out_dec(&o, "nsid", e->nsid);
		out_hex(&o, "vs", e->vs);
		out_hex(&o, "trtype", e->trtype);
		out_hex(&o, "csi", e->csi);
		out_hex(&o, "trtype_spec", e->trtype_spec);
		spec_nvmecli_error_entry(&o, e);
		out_leave(&o, s);
	}
	out_end(&o);
}

/* ---- Firmware Slot Information (Base 2.0, figure "Firmware Slot Information Log Page") */

void unvme_print_fw_slot_log(FILE *f, const struct nvme_fw_slot_log *log, enum unvme_fmt fmt)
{
	struct spec_out o;
	unsigned active = NVME_FW_AFI_ACTIVE(log->afi), next = NVME_FW_AFI_NEXT(log->afi);
	char next_text[32];
	if (next)
		snprintf(next_text, sizeof(next_text), "slot %u", next);
	else
		snprintf(next_text, sizeof(next_text), "unchanged");
	out_begin(&o, f, fmt, 4, "Firmware Slot Information Log:");
	out_num(&o, "afi", log->afi, "%#x (active slot %u, next reset activates: %s)", log->afi, active,
		next_text);
	/* Slots are numbered from 1; an all-zero revision means the slot is empty. */
	for (unsigned slot = 1; slot <= SPEC_ARRAY_SIZE(log->frs); slot++) {
		const char *frs = log->frs[slot - 1];
		if (spec_all_zero(frs, sizeof(log->frs[0])))
			continue;
		char name[8];
		snprintf(name, sizeof(name), "frs%u", slot);
		out_fixed_str(&o, name, frs, sizeof(log->frs[0]));
	}
	out_end(&o);
}

/* ---- Commands Supported and Effects (Base 2.0, figure "Commands Supported and Effects
 * Data Structure") */

static const struct spec_bit_name effects_bits[] = {
	{ 0, "CSUPP" }, /* command supported */
	{ 1, "LBCC" },  /* logical block content change */
	{ 2, "NCC" },   /* namespace capability change */
	{ 3, "NIC" },   /* namespace inventory change */
	{ 4, "CCC" },   /* controller capability change */
	{ 19, "USS" },  /* UUID selection supported */
};

/* Command Submission and Execution, bits 18:16. */
static const char *cse_name(uint32_t effects)
{
	switch ((effects >> 16) & 0x7) {
	case 0:
		return NULL;
	case 1:
		return "one at a time per namespace";
	case 2:
		return "one at a time per controller";
	default:
		return "reserved submission restriction";
	}
}

static void print_effects_table(struct spec_out *o, const char *key, const char *label,
				const uint32_t *effects, bool admin)
{
	json_object *array = out_array(o, key);
	out_text(o, "%s:\n", admin ? "Admin Commands" : "I/O Commands");
	for (unsigned opc = 0; opc < 256; opc++) {
		uint32_t e = effects[opc];
		if (!e)
			continue;
		if (out_is_json(o)) {
			struct out_scope s = out_enter_element(o, array);
			out_dec(o, "opcode", opc);
			out_hex(o, "effects", e);
			out_leave(o, s);
			continue;
		}
		/* The CSE bits are a number, not flags: name them apart from the bit list. */
		char bits[128];
		const char *name = admin ? nvme_admin_opc_name((uint8_t)opc)
					 : nvme_io_opc_name((uint8_t)opc, NVME_CSI_NVM);
		const char *cse = cse_name(e);
		spec_bit_names(bits, sizeof(bits), e & ~(0x7u << 16), effects_bits, SPEC_ARRAY_SIZE(effects_bits));
		fprintf(o->f, "%-4s %02x [%-34s] %08" PRIx32 " %s%s%s\n", label, opc, name ? name : "-", e, bits,
			cse ? ", " : "", cse ? cse : "");
	}
}

void unvme_print_cmd_effects_log(FILE *f, const struct nvme_cmd_effects_log *log, enum unvme_fmt fmt)
{
	struct spec_out o;
	out_begin(&o, f, fmt, 0, "Commands Supported and Effects Log:");
	print_effects_table(&o, "acs", "ACS", log->acs, true);
	/* The log is per command set, which the structure does not record: NVM names. */
	print_effects_table(&o, "iocs", "IOCS", log->iocs, false);
	out_end(&o);
}
