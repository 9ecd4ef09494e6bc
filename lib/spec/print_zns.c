/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Printers of the Zoned Namespace Command Set structures: the ZNS Identify Controller and
 * Namespace data, Report Zones data and the Changed Zone List log, with the field names
 * nvme-cli's zns plugin uses (zasl, zoc, ozcs, mar, mor, lbafe, SLBA/WP/Cap/State).
 */
#include <inttypes.h>
#include <string.h>

#include "print_util.h"

static const char *state_name(uint8_t s)
{
	switch (s) {
	case NVME_ZS_EMPTY: return "EMPTY";
	case NVME_ZS_IMP_OPEN: return "IMP_OPENED";
	case NVME_ZS_EXP_OPEN: return "EXP_OPENED";
	case NVME_ZS_CLOSED: return "CLOSED";
	case NVME_ZS_READ_ONLY: return "READONLY";
	case NVME_ZS_FULL: return "FULL";
	case NVME_ZS_OFFLINE: return "OFFLINE";
	default: return "UNKNOWN";
	}
}

void unvme_print_id_ctrl_zns(FILE *f, const struct nvme_id_ctrl_zns *id, enum unvme_fmt fmt)
{
	struct spec_out o;
	out_begin(&o, f, fmt, 4, "NVMe ZNS Identify Controller:");
	out_pages_limit(&o, "zasl", id->zasl, "the MDTS limit");
	out_end(&o);
}

static void out_limit(struct spec_out *o, const char *name, uint32_t v)
{
	if (v == NVME_ZNS_NO_LIMIT)
		out_num(o, name, v, "%#" PRIx32 " (no limit)", v);
	else
		out_num(o, name, v, "%#" PRIx32 " (%" PRIu64 " zones)", v, (uint64_t)v + 1);
}

void unvme_print_id_ns_zns(FILE *f, const struct nvme_id_ns_zns *id, const struct nvme_id_ns *ns,
			   enum unvme_fmt fmt)
{
	struct spec_out o;
	out_begin(&o, f, fmt, 7, "ZNS Command Set Identify Namespace:");
	out_num(&o, "zoc", id->zoc, "%#x (%s%s)", id->zoc,
		id->zoc & 1 ? "variable zone capacity" : "fixed zone capacity",
		id->zoc & 2 ? ", zone active excursions" : "");
	out_num(&o, "ozcs", id->ozcs, "%#x (%s)", id->ozcs,
		id->ozcs & NVME_ZNS_OZCS_RAZB ? "reads across zone boundaries" :
						"no reads across zone boundaries");
	out_limit(&o, "mar", id->mar);
	out_limit(&o, "mor", id->mor);
	out_dec(&o, "rrl", id->rrl);
	out_dec(&o, "frl", id->frl);
	/* as many formats as Identify Namespace lists, else those with a zone size */
	unsigned n = 0, in_use = 64;
	if (ns) {
		n = ns->nlbaf + 1u;
		in_use = nvme_ns_flbas_index(ns);
	} else {
		for (unsigned i = 0; i < 64; i++)
			if (id->lbafe[i].zsze)
				n = i + 1;
	}
	json_object *arr = out_array(&o, "lbafe");
	for (unsigned i = 0; i < n && i < 64; i++) {
		if (out_is_json(&o)) {
			struct out_scope s = out_enter_element(&o, arr);
			out_dec(&o, "zsze", id->lbafe[i].zsze);
			out_dec(&o, "zdes", id->lbafe[i].zdes);
			out_leave(&o, s);
		} else {
			fprintf(f, "lbafe %2u: zsze:%#" PRIx64 " zdes:%u%s\n", i, id->lbafe[i].zsze,
				id->lbafe[i].zdes, i == in_use ? " (in use)" : "");
		}
	}
	out_end(&o);
}

void unvme_print_zone_report(FILE *f, const void *buf, size_t len, enum unvme_fmt fmt)
{
	struct nvme_zone_report_hdr h;
	memset(&h, 0, sizeof(h));
	memcpy(&h, buf, len < sizeof(h) ? len : sizeof(h));
	size_t room = len > sizeof(h) ? (len - sizeof(h)) / sizeof(struct nvme_zone_desc) : 0;
	uint64_t shown = h.nr_zones < room ? h.nr_zones : room;
	const struct nvme_zone_desc *d = (const void *)((const uint8_t *)buf + sizeof(h));
	struct spec_out o;
	out_begin(&o, f, fmt, 0, NULL);
	if (out_is_json(&o))
		out_dec(&o, "nr_zones", h.nr_zones);
	else
		fprintf(f, "nr_zones: %" PRIu64 "\n", h.nr_zones);
	json_object *arr = out_array(&o, "zone_list");
	for (uint64_t i = 0; i < shown; i++) {
		struct nvme_zone_desc z;
		memcpy(&z, &d[i], sizeof(z));
		uint8_t st = nvme_zone_desc_state(&z);
		if (out_is_json(&o)) {
			struct out_scope s = out_enter_element(&o, arr);
			out_dec(&o, "slba", z.zslba);
			out_dec(&o, "wp", z.wp);
			out_dec(&o, "cap", z.zcap);
			out_str(&o, "state", state_name(st));
			out_dec(&o, "type", z.zt & 0xfu);
			out_dec(&o, "attrs", z.za);
			out_dec(&o, "attrs_info", z.zai);
			out_leave(&o, s);
		} else {
			fprintf(f, "SLBA: %#-10" PRIx64 " WP: %#-10" PRIx64 " Cap: %#-10" PRIx64
				   " State: %-12s Type: SEQWRITE_REQ Attrs: %#x\n",
				z.zslba, z.wp, z.zcap, state_name(st), z.za);
		}
	}
	out_end(&o);
}

void unvme_print_changed_zones(FILE *f, const struct nvme_changed_zone_log *log, enum unvme_fmt fmt)
{
	struct spec_out o;
	out_begin(&o, f, fmt, 0, NULL);
	bool overflow = log->nrzid == NVME_CHANGED_ZONES_OVERFLOW;
	unsigned n = overflow ? 0 : (log->nrzid < NVME_CHANGED_ZONES_MAX ? log->nrzid : NVME_CHANGED_ZONES_MAX);
	if (out_is_json(&o)) {
		out_dec(&o, "nr_zones", log->nrzid);
		if (overflow)
			json_object_object_add(o.obj, "overflow", json_object_new_boolean(true));
	} else if (overflow) {
		fprintf(f, "NVMe Changed Zone List: more than %u zones changed (nrzid ffffh)\n",
			NVME_CHANGED_ZONES_MAX);
	} else {
		fprintf(f, "NVMe Changed Zone List:\nnr_zones: %u\n", n);
	}
	json_object *arr = out_array(&o, "zid_list");
	for (unsigned i = 0; i < n; i++) {
		if (out_is_json(&o))
			json_object_array_add(arr, json_object_new_uint64(log->zid[i]));
		else
			fprintf(f, "zid %03u: slba %#" PRIx64 "\n", i, log->zid[i]);
	}
	out_end(&o);
}
