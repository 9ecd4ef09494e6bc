/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Printers for the Identify data structures: controller, namespace, their NVM command set
 * specific forms, the active namespace list and the namespace identification descriptors.
 * Every named field is shown; bitmask fields in hex with their set bits named (text).
 */
#include <inttypes.h>
#include <string.h>

#include <unvme/print.h>

#include "names.h"
#include "print_util.h"

/* Name columns: the longest field names of each structure. */
#define ID_CTRL_WIDTH 9
#define ID_NS_WIDTH   8

/* ---- Identify Controller bit fields (Base 2.0, figure "Identify Controller Data Structure") */

static const struct spec_bit_name cmic_bits[] = {
	{ 0, "multiple ports" },
	{ 1, "multiple controllers" },
	{ 2, "SR-IOV virtual function" },
	{ 3, "ANA reporting" },
};

static const struct spec_bit_name oaes_bits[] = {
	{ 8, "Namespace Attribute Notices" },
	{ 9, "Firmware Activation Notices" },
	{ 11, "ANA Change Notices" },
	{ 12, "Predictable Latency Event Aggregate Log Change Notices" },
	{ 13, "LBA Status Information Alert Notices" },
	{ 14, "Endurance Group Event Aggregate Log Change Notices" },
	{ 15, "Normal NVM Subsystem Shutdown" },
};

static const struct spec_bit_name ctratt_bits[] = {
	{ 0, "128-bit Host Identifier" },
	{ 1, "Non-Operational Power State Permissive Mode" },
	{ 2, "NVM Sets" },
	{ 3, "Read Recovery Levels" },
	{ 4, "Endurance Groups" },
	{ 5, "Predictable Latency Mode" },
	{ 6, "Traffic Based Keep Alive" },
	{ 7, "Namespace Granularity" },
	{ 8, "SQ Associations" },
	{ 9, "UUID List" },
};

static const struct spec_bit_name oacs_bits[] = {
	{ 0, "Security Send/Receive" },
	{ 1, "Format NVM" },
	{ 2, "Firmware Download/Commit" },
	{ 3, "Namespace Management" },
	{ 4, "Device Self-test" },
	{ 5, "Directives" },
	{ 6, "NVMe-MI Send/Receive" },
	{ 7, "Virtualization Management" },
	{ 8, "Doorbell Buffer Config" },
	{ 9, "Get LBA Status" },
	{ 10, "Command and Feature Lockdown" },
};

static const struct spec_bit_name lpa_bits[] = {
	{ 0, "SMART per namespace" },
	{ 1, "Commands Supported and Effects" },
	{ 2, "Extended Data" },
	{ 3, "Telemetry" },
	{ 4, "Persistent Event" },
};

static const struct spec_bit_name sanicap_bits[] = {
	{ 0, "Crypto Erase" },
	{ 1, "Block Erase" },
	{ 2, "Overwrite" },
};

static const struct spec_bit_name oncs_bits[] = {
	{ 0, "Compare" },
	{ 1, "Write Uncorrectable" },
	{ 2, "Dataset Management" },
	{ 3, "Write Zeroes" },
	{ 4, "Save/Select in Features" },
	{ 5, "Reservations" },
	{ 6, "Timestamp" },
	{ 7, "Verify" },
	{ 8, "Copy" },
};

static const struct spec_bit_name fna_bits[] = {
	{ 0, "Format applies to all namespaces" },
	{ 1, "Secure erase applies to all namespaces" },
	{ 2, "Cryptographic erase supported" },
};

/* A bitmask field: hex, then its set bits by name (text only). */
static void out_bits(struct spec_out *o, const char *name, uint64_t v,
		     const struct spec_bit_name *names, size_t n)
{
	char buf[512];
	out_num(o, name, v, "%#" PRIx64 " (%s)", v, spec_bit_names(buf, sizeof(buf), v, names, n));
}
#define OUT_BITS(o, name, v, table) out_bits(o, name, v, table, SPEC_ARRAY_SIZE(table))

static void out_temp_kelvin(struct spec_out *o, const char *name, unsigned k)
{
	if (k)
		out_num(o, name, k, "%u K (%d C)", k, spec_kelvin_to_celsius(k));
	else
		out_num(o, name, k, "0 (not reported)");
}

static void out_bytes_u128(struct spec_out *o, const char *name, const uint8_t *le128)
{
	char human[32], suffix[40];
	snprintf(suffix, sizeof(suffix), "(%s)", spec_si_bytes(human, sizeof(human), spec_u128_ld(le128)));
	out_u128(o, name, le128, suffix);
}

/* A field whose value is 0's based: the text shows the real count too. */
static void out_zero_based(struct spec_out *o, const char *name, uint64_t v, const char *what)
{
	out_num(o, name, v, "%" PRIu64 " (%" PRIu64 " %s)", v, v + 1, what);
}

/* Power in the PSD's units: scale 1 is 0.0001 W, scale 2 is 0.01 W, 0 means not reported. */
static char *psd_power(char *buf, size_t len, unsigned value, unsigned scale)
{
	if (scale == 1)
		snprintf(buf, len, "%u.%04uW", value / 10000, value % 10000);
	else if (scale == 2)
		snprintf(buf, len, "%u.%02uW", value / 100, value % 100);
	else
		snprintf(buf, len, "-");
	return buf;
}

static void print_psd(struct spec_out *o, json_object *array, unsigned i, const struct nvme_psd *ps)
{
	unsigned mxps = ps->flags & 0x1, nops = (ps->flags >> 1) & 0x1;
	unsigned ips = ps->ips >> 6, apw = ps->apws & 0x7, aps = ps->apws >> 6;
	if (out_is_json(o)) {
		struct out_scope s = out_enter_element(o, array);
		out_dec(o, "mp", ps->mp);
		out_dec(o, "mxps", mxps);
		out_dec(o, "nops", nops);
		out_dec(o, "enlat", ps->enlat);
		out_dec(o, "exlat", ps->exlat);
		out_dec(o, "rrt", ps->rrt & 0x1f);
		out_dec(o, "rrl", ps->rrl & 0x1f);
		out_dec(o, "rwt", ps->rwt & 0x1f);
		out_dec(o, "rwl", ps->rwl & 0x1f);
		out_dec(o, "idlp", ps->idlp);
		out_dec(o, "ips", ips);
		out_dec(o, "actp", ps->actp);
		out_dec(o, "apw", apw);
		out_dec(o, "aps", aps);
		out_leave(o, s);
		return;
	}
	/* MXPS selects 0.0001 W units for MP instead of 0.01 W. */
	char mp[24], idle[24], active[24];
	fprintf(o->f, "ps %6u : mp:%s %s enlat:%u exlat:%u rrt:%u rrl:%u rwt:%u rwl:%u\n", i,
		psd_power(mp, sizeof(mp), ps->mp, mxps ? 1 : 2), nops ? "non-operational" : "operational",
		ps->enlat, ps->exlat, ps->rrt & 0x1f, ps->rrl & 0x1f, ps->rwt & 0x1f, ps->rwl & 0x1f);
	fprintf(o->f, "%*s idle_power:%s active_power:%s active_power_workload:%u\n", ID_CTRL_WIDTH + 2,
		"", psd_power(idle, sizeof(idle), ps->idlp, ips), psd_power(active, sizeof(active), ps->actp, aps),
		apw);
}

/* Vendor-specific and reserved-for-others byte areas: shown only when the device fills them, so
 * the common output is not dominated by kilobytes of zeroes. */
static void out_blob(struct spec_out *o, const char *name, const void *bytes, size_t len)
{
	if (spec_all_zero(bytes, len))
		return;
	if (out_is_json(o)) {
		out_hex_bytes(o, name, bytes, len);
		return;
	}
	fprintf(o->f, "%s[] :\n", name);
	spec_hex_dump(o->f, bytes, len);
}

static const char *cntrltype_name(uint8_t t)
{
	switch (t) {
	case 1:
		return "I/O controller";
	case 2:
		return "discovery controller";
	case 3:
		return "administrative controller";
	default:
		return "not reported";
	}
}

static void out_version(struct spec_out *o, const char *name, uint32_t ver)
{
	if (ver)
		out_num(o, name, ver, "%#x (%u.%u.%u)", ver, NVME_VS_MJR(ver), NVME_VS_MNR(ver), NVME_VS_TER(ver));
	else
		out_num(o, name, ver, "0 (not reported)");
}

/* Queue entry sizes: bits 3:0 required, 7:4 maximum, both log2 bytes. */
static void out_queue_entry_sizes(struct spec_out *o, const char *name, uint8_t v)
{
	out_num(o, name, v, "%#x (required %u B, maximum %u B)", v, 1u << (v & 0xf), 1u << (v >> 4));
}

static void print_id_ctrl_general(struct spec_out *o, const struct nvme_id_ctrl *id)
{
	out_hex(o, "vid", id->vid);
	out_hex(o, "ssvid", id->ssvid);
	out_fixed_str(o, "sn", id->sn, sizeof(id->sn));
	out_fixed_str(o, "mn", id->mn, sizeof(id->mn));
	out_fixed_str(o, "fr", id->fr, sizeof(id->fr));
	out_num(o, "rab", id->rab, "%u (arbitration burst %u)", id->rab, 1u << (id->rab & 0x1f));
	/* The OUI is stored least significant byte first. */
	uint32_t oui = (uint32_t)id->ieee[0] | (uint32_t)id->ieee[1] << 8 | (uint32_t)id->ieee[2] << 16;
	out_num(o, "ieee", oui, "%06" PRIx32, oui);
	OUT_BITS(o, "cmic", id->cmic, cmic_bits);
	out_pages_limit(o, "mdts", id->mdts, "no limit");
	out_dec(o, "cntlid", id->cntlid);
	out_version(o, "ver", id->ver);
	out_num(o, "rtd3r", id->rtd3r, "%" PRIu32 " us", id->rtd3r);
	out_num(o, "rtd3e", id->rtd3e, "%" PRIu32 " us", id->rtd3e);
	OUT_BITS(o, "oaes", id->oaes, oaes_bits);
	OUT_BITS(o, "ctratt", id->ctratt, ctratt_bits);
	out_hex(o, "rrls", id->rrls);
	out_num(o, "cntrltype", id->cntrltype, "%u (%s)", id->cntrltype, cntrltype_name(id->cntrltype));
	out_hex_bytes(o, "fguid", id->fguid, sizeof(id->fguid));
	/* Command retry delay times are in 100 ms units. */
	out_num(o, "crdt1", id->crdt1, "%u (%u ms)", id->crdt1, id->crdt1 * 100u);
	out_num(o, "crdt2", id->crdt2, "%u (%u ms)", id->crdt2, id->crdt2 * 100u);
	out_num(o, "crdt3", id->crdt3, "%u (%u ms)", id->crdt3, id->crdt3 * 100u);
	out_hex_bytes(o, "nvmmi", id->nvmmi, sizeof(id->nvmmi));
}

static void print_id_ctrl_admin(struct spec_out *o, const struct nvme_id_ctrl *id)
{
	OUT_BITS(o, "oacs", id->oacs, oacs_bits);
	out_zero_based(o, "acl", id->acl, "commands");
	out_zero_based(o, "aerl", id->aerl, "requests");
	unsigned slots = NVME_CTRL_FRMW_NSLOTS(id->frmw);
	out_num(o, "frmw", id->frmw, "%#x (%u slot%s, slot 1 %s, activation without reset %s)", id->frmw,
		slots, slots == 1 ? "" : "s", id->frmw & NVME_CTRL_FRMW_SLOT1_RO ? "read-only" : "writable",
		id->frmw & NVME_CTRL_FRMW_NO_RESET ? "supported" : "not supported");
	OUT_BITS(o, "lpa", id->lpa, lpa_bits);
	out_zero_based(o, "elpe", id->elpe, "entries");
	out_zero_based(o, "npss", id->npss, "power states");
	out_hex(o, "avscc", id->avscc);
	out_hex(o, "apsta", id->apsta);
	out_temp_kelvin(o, "wctemp", id->wctemp);
	out_temp_kelvin(o, "cctemp", id->cctemp);
	out_num(o, "mtfa", id->mtfa, "%u (%u ms)", id->mtfa, id->mtfa * 100u);
	/* Host memory buffer sizes are in 4 KiB units. */
	out_num(o, "hmpre", id->hmpre, "%" PRIu32 " (%" PRIu64 " KiB)", id->hmpre, (uint64_t)id->hmpre * 4);
	out_num(o, "hmmin", id->hmmin, "%" PRIu32 " (%" PRIu64 " KiB)", id->hmmin, (uint64_t)id->hmmin * 4);
	out_bytes_u128(o, "tnvmcap", id->tnvmcap);
	out_bytes_u128(o, "unvmcap", id->unvmcap);
	out_hex(o, "rpmbs", id->rpmbs);
	out_num(o, "edstt", id->edstt, "%u min", id->edstt);
	out_hex(o, "dsto", id->dsto);
	out_hex(o, "fwug", id->fwug);
	out_num(o, "kas", id->kas, "%u (%u ms)", id->kas, id->kas * 100u);
	out_hex(o, "hctma", id->hctma);
	out_temp_kelvin(o, "mntmt", id->mntmt);
	out_temp_kelvin(o, "mxtmt", id->mxtmt);
	OUT_BITS(o, "sanicap", id->sanicap, sanicap_bits);
	out_dec(o, "hmminds", id->hmminds);
	out_dec(o, "hmmaxd", id->hmmaxd);
	out_dec(o, "nsetidmax", id->nsetidmax);
	out_dec(o, "endgidmax", id->endgidmax);
	out_dec(o, "anatt", id->anatt);
	out_hex(o, "anacap", id->anacap);
	out_dec(o, "anagrpmax", id->anagrpmax);
	out_dec(o, "nanagrpid", id->nanagrpid);
	out_dec(o, "pels", id->pels);
	out_dec(o, "domainid", id->domainid);
	out_bytes_u128(o, "megcap", id->megcap);
}

static void print_id_ctrl_nvm_attrs(struct spec_out *o, const struct nvme_id_ctrl *id)
{
	out_queue_entry_sizes(o, "sqes", id->sqes);
	out_queue_entry_sizes(o, "cqes", id->cqes);
	out_dec(o, "maxcmd", id->maxcmd);
	out_dec(o, "nn", id->nn);
	OUT_BITS(o, "oncs", id->oncs, oncs_bits);
	out_num(o, "fuses", id->fuses, "%#x (%s)", id->fuses,
		id->fuses & 1 ? "Compare and Write" : "none");
	OUT_BITS(o, "fna", id->fna, fna_bits);
	out_num(o, "vwc", id->vwc, "%#x (volatile write cache %s)", id->vwc,
		id->vwc & NVME_CTRL_VWC_PRESENT ? "present" : "not present");
	out_zero_based(o, "awun", id->awun, "blocks");
	out_zero_based(o, "awupf", id->awupf, "blocks");
	out_hex(o, "icsvscc", id->icsvscc);
	out_hex(o, "nwpc", id->nwpc);
	out_zero_based(o, "acwu", id->acwu, "blocks");
	out_hex(o, "cdfs", id->cdfs);
	static const char *const sgl_support[] = { "not supported", "supported", "supported, dword aligned",
						   "reserved" };
	out_num(o, "sgls", id->sgls, "%#" PRIx32 " (SGLs %s)", id->sgls, sgl_support[id->sgls & 0x3]);
	out_dec(o, "mnan", id->mnan);
	out_u128(o, "maxdna", id->maxdna, NULL);
	out_dec(o, "maxcna", id->maxcna);
	out_fixed_str(o, "subnqn", id->subnqn, sizeof(id->subnqn));
}

void unvme_print_id_ctrl(FILE *f, const struct nvme_id_ctrl *id, enum unvme_fmt fmt)
{
	struct spec_out o;
	out_begin(&o, f, fmt, ID_CTRL_WIDTH, "NVMe Identify Controller:");
	print_id_ctrl_general(&o, id);
	print_id_ctrl_admin(&o, id);
	print_id_ctrl_nvm_attrs(&o, id);
	out_blob(&o, "nvmeof", id->nvmeof, sizeof(id->nvmeof));
	/* NPSS is 0's based: power states 0..npss are described. */
	json_object *psd = out_array(&o, "psd");
	for (unsigned i = 0; i <= id->npss && i < SPEC_ARRAY_SIZE(id->psd); i++)
		print_psd(&o, psd, i, &id->psd[i]);
	out_blob(&o, "vs", id->vs, sizeof(id->vs));
	spec_nvmecli_id_ctrl(&o, id);
	out_end(&o);
}

/* ---- Identify Namespace (NVM Command Set 1.0, figure "Identify Namespace Data Structure") */

static const struct spec_bit_name nsfeat_bits[] = {
	{ 0, "Thin Provisioning" },
	{ 1, "Namespace Atomic Fields" },
	{ 2, "Deallocated or Unwritten Logical Block Error" },
	{ 3, "NGUID/EUI64 Not Reused" },
	{ 4, "Optimal Performance Fields" },
};

static const struct spec_bit_name mc_bits[] = {
	{ 0, "metadata in extended LBA" },
	{ 1, "metadata in separate buffer" },
};

static const struct spec_bit_name dpc_bits[] = {
	{ 0, "PI Type 1" },
	{ 1, "PI Type 2" },
	{ 2, "PI Type 3" },
	{ 3, "PI in first metadata bytes" },
	{ 4, "PI in last metadata bytes" },
};

static const struct spec_bit_name nmic_bits[] = {
	{ 0, "shared namespace" },
};

static const struct spec_bit_name rescap_bits[] = {
	{ 0, "Persist Through Power Loss" },
	{ 1, "Write Exclusive" },
	{ 2, "Exclusive Access" },
	{ 3, "Write Exclusive - Registrants Only" },
	{ 4, "Exclusive Access - Registrants Only" },
	{ 5, "Write Exclusive - All Registrants" },
	{ 6, "Exclusive Access - All Registrants" },
	{ 7, "Ignore Existing Key" },
};

static const struct spec_bit_name nsattr_bits[] = {
	{ 0, "write protected" },
};

/* A size in logical blocks, with its byte equivalent in the namespace's current format. */
static void out_blocks(struct spec_out *o, const char *name, uint64_t blocks, uint32_t lba_size)
{
	char human[32];
	out_num(o, name, blocks, "%#" PRIx64 " (%" PRIu64 " blocks, %s)", blocks, blocks,
		spec_si_bytes(human, sizeof(human), (long double)blocks * lba_size));
}

static const char *dlfeat_read_name(unsigned v)
{
	switch (v & 0x7) {
	case 1:
		return "deallocated blocks read as zeroes";
	case 2:
		return "deallocated blocks read as FFh";
	default:
		return "deallocated read value not reported";
	}
}

static void print_lbaf(struct spec_out *o, json_object *array, unsigned i, const struct nvme_lbaf *lbaf,
		       bool in_use)
{
	if (out_is_json(o)) {
		struct out_scope s = out_enter_element(o, array);
		out_dec(o, "ms", lbaf->ms);
		out_dec(o, "lbads", lbaf->lbads);
		out_dec(o, "rp", lbaf->rp & 0x3);
		out_leave(o, s);
		return;
	}
	fprintf(o->f, "lbaf %2u : ms:%-3u lbads:%-2u rp:%u%s\n", i, lbaf->ms, lbaf->lbads, lbaf->rp & 0x3,
		in_use ? " (in use)" : "");
}

void unvme_print_id_ns(FILE *f, const struct nvme_id_ns *id, enum unvme_fmt fmt)
{
	struct spec_out o;
	unsigned format = nvme_ns_flbas_index(id);
	/* A format index past NLBAF or an impossible LBADS: sizes shown in 512-byte blocks. */
	uint32_t lba_size = nvme_ns_lba_size(id) ? nvme_ns_lba_size(id) : 512;
	out_begin(&o, f, fmt, ID_NS_WIDTH, "NVMe Identify Namespace:");
	out_blocks(&o, "nsze", id->nsze, lba_size);
	out_blocks(&o, "ncap", id->ncap, lba_size);
	out_blocks(&o, "nuse", id->nuse, lba_size);
	OUT_BITS(&o, "nsfeat", id->nsfeat, nsfeat_bits);
	out_zero_based(&o, "nlbaf", id->nlbaf, "formats");
	out_num(&o, "flbas", id->flbas, "%#x (format %u, metadata %s)", id->flbas, format,
		id->flbas & 0x10 ? "at the end of the data (extended LBA)" : "in a separate buffer");
	OUT_BITS(&o, "mc", id->mc, mc_bits);
	OUT_BITS(&o, "dpc", id->dpc, dpc_bits);
	/* DPS bits 2:0 are the protection information type (0 = disabled), bit 3 its position. */
	if (id->dps & 0x7)
		out_num(&o, "dps", id->dps, "%#x (PI Type %u, in the %s metadata bytes)", id->dps, id->dps & 0x7,
			id->dps & 0x8 ? "first" : "last");
	else
		out_num(&o, "dps", id->dps, "%#x (PI disabled)", id->dps);
	OUT_BITS(&o, "nmic", id->nmic, nmic_bits);
	OUT_BITS(&o, "rescap", id->rescap, rescap_bits);
	out_num(&o, "fpi", id->fpi, "%#x (format progress %s, %u%% remaining)", id->fpi,
		id->fpi & 0x80 ? "reported" : "not reported", id->fpi & 0x7f);
	out_num(&o, "dlfeat", id->dlfeat, "%#x (%s%s%s)", id->dlfeat, dlfeat_read_name(id->dlfeat),
		id->dlfeat & NVME_NS_DLFEAT_WZ_DEAC ? ", write zeroes deallocates" : "",
		id->dlfeat & 0x10 ? ", guard is CRC of deallocated data" : "");
	out_zero_based(&o, "nawun", id->nawun, "blocks");
	out_zero_based(&o, "nawupf", id->nawupf, "blocks");
	out_zero_based(&o, "nacwu", id->nacwu, "blocks");
	out_zero_based(&o, "nabsn", id->nabsn, "blocks");
	out_dec(&o, "nabo", id->nabo);
	out_zero_based(&o, "nabspf", id->nabspf, "blocks");
	out_dec(&o, "noiob", id->noiob);
	out_bytes_u128(&o, "nvmcap", id->nvmcap);
	out_zero_based(&o, "npwg", id->npwg, "blocks");
	out_zero_based(&o, "npwa", id->npwa, "blocks");
	out_zero_based(&o, "npdg", id->npdg, "blocks");
	out_zero_based(&o, "npda", id->npda, "blocks");
	out_zero_based(&o, "nows", id->nows, "blocks");
	out_dec(&o, "mssrl", id->mssrl);
	out_dec(&o, "mcl", id->mcl);
	out_zero_based(&o, "msrc", id->msrc, "ranges");
	out_dec(&o, "anagrpid", id->anagrpid);
	OUT_BITS(&o, "nsattr", id->nsattr, nsattr_bits);
	out_dec(&o, "nvmsetid", id->nvmsetid);
	out_dec(&o, "endgid", id->endgid);
	out_hex_bytes(&o, "nguid", id->nguid, sizeof(id->nguid));
	out_hex_bytes(&o, "eui64", id->eui64, sizeof(id->eui64));
	/* NLBAF is 0's based: formats 0..nlbaf are valid. */
	json_object *lbaf_array = out_array(&o, "lbaf");
	for (unsigned i = 0; i <= id->nlbaf && i < SPEC_ARRAY_SIZE(id->lbaf); i++)
		print_lbaf(&o, lbaf_array, i, &id->lbaf[i], i == format);
	out_blob(&o, "vs", id->vs, sizeof(id->vs));
	spec_nvmecli_id_ns(&o, id);
	out_end(&o);
}

/* ---- I/O Command Set specific forms for the NVM command set (CNS 05h/06h, CSI 00h) */

void unvme_print_id_ns_nvm(FILE *f, const struct nvme_id_ns_nvm *id, enum unvme_fmt fmt)
{
	static const char *const pif_names[] = { "16b Guard", "32b Guard", "64b Guard", "reserved" };
	struct spec_out o;
	out_begin(&o, f, fmt, ID_NS_WIDTH, "NVMe NVM Command Set Identify Namespace:");
	out_hex(&o, "lbstm", id->lbstm);
	out_num(&o, "pic", id->pic, "%#x (%s%s)", id->pic,
		id->pic & 0x1 ? "16b Guard PI" : "no 16b Guard PI",
		id->pic & 0x2 ? ", Storage Tag Check Read" : "");
	/* The structure does not say how many formats exist (that is Identify Namespace's NLBAF):
	 * show entries up to the last non-zero one, at least the first. */
	unsigned last = 0;
	for (unsigned i = 0; i < SPEC_ARRAY_SIZE(id->elbaf); i++)
		if (id->elbaf[i])
			last = i;
	json_object *elbaf_array = out_array(&o, "elbaf");
	for (unsigned i = 0; i <= last; i++) {
		unsigned sts = id->elbaf[i] & 0x7f, pif = (id->elbaf[i] >> 7) & 0x3;
		if (out_is_json(&o)) {
			struct out_scope s = out_enter_element(&o, elbaf_array);
			out_dec(&o, "sts", sts);
			out_dec(&o, "pif", pif);
			out_leave(&o, s);
		} else {
			fprintf(f, "elbaf %2u : sts:%-2u pif:%u (%s)\n", i, sts, pif, pif_names[pif]);
		}
	}
	out_end(&o);
}

/* A size limit in 2^n units of CAP.MPSMIN; 0 means no limit beyond MDTS. */
static void out_size_limit(struct spec_out *o, const char *name, uint8_t v)
{
	out_pages_limit(o, name, v, "no limit");
}

void unvme_print_id_ctrl_nvm(FILE *f, const struct nvme_id_ctrl_nvm *id, enum unvme_fmt fmt)
{
	struct spec_out o;
	out_begin(&o, f, fmt, 5, "NVMe NVM Command Set Identify Controller:");
	out_size_limit(&o, "vsl", id->vsl);
	out_size_limit(&o, "wzsl", id->wzsl);
	out_size_limit(&o, "wusl", id->wusl);
	if (id->dmrl)
		out_dec(&o, "dmrl", id->dmrl);
	else
		out_num(&o, "dmrl", id->dmrl, "0 (not reported)");
	if (id->dmrsl)
		out_num(&o, "dmrsl", id->dmrsl, "%" PRIu32 " blocks", id->dmrsl);
	else
		out_num(&o, "dmrsl", id->dmrsl, "0 (not reported)");
	if (id->dmsl)
		out_num(&o, "dmsl", id->dmsl, "%" PRIu64 " blocks", id->dmsl);
	else
		out_num(&o, "dmsl", id->dmsl, "0 (not reported)");
	out_end(&o);
}

/* ---- Namespace lists and descriptors */

void unvme_print_ns_list(FILE *f, const uint32_t *list, enum unvme_fmt fmt)
{
	struct spec_out o;
	out_begin(&o, f, fmt, 0, NULL);
	/* nvme-cli's shape: {"nsid_list": [{"nsid": 1}, ...]} */
	json_object *nsids = out_array(&o, "nsid_list");
	/* The list ends at the first zero entry or after NVME_NS_LIST_MAX entries. */
	for (unsigned i = 0; i < NVME_NS_LIST_MAX && list[i]; i++) {
		if (out_is_json(&o)) {
			struct out_scope s = out_enter_element(&o, nsids);
			out_dec(&o, "nsid", list[i]);
			out_leave(&o, s);
		} else
			fprintf(f, "[%4u]:%#" PRIx32 "\n", i, list[i]);
	}
	out_end(&o);
}

static void format_uuid(char *buf, size_t len, const uint8_t *u)
{
	snprintf(buf, len, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
		 u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

/* One descriptor's identifier, keyed by its type name ("eui64", "nguid", "uuid", "csi"). */
static void print_ns_desc(struct spec_out *o, const struct nvme_ns_id_desc *d, const uint8_t *nid)
{
	const char *type = nvme_nidt_name(d->nidt);
	char text[40];
	switch (d->nidt) {
	case NVME_NIDT_UUID:
		if (d->nidl == 16) {
			format_uuid(text, sizeof(text), nid);
			out_str(o, type, text);
			return;
		}
		break;
	case NVME_NIDT_CSI:
		if (d->nidl == 1) {
			const char *csi = nvme_csi_name(nid[0]);
			out_num(o, type, nid[0], "%u (%s)", nid[0], csi ? csi : "unknown");
			return;
		}
		break;
	default:
		break;
	}
	/* EUI64, NGUID, and anything unexpected: the bytes in wire order. */
	out_hex_bytes(o, type ? type : "nid", nid, d->nidl);
}

void unvme_print_ns_desc_list(FILE *f, const void *buf, enum unvme_fmt fmt)
{
	enum { LIST_SIZE = 4096 };
	const uint8_t *p = buf;
	struct spec_out o;
	out_begin(&o, f, fmt, 5, "NVMe Namespace Identification Descriptors:");
	json_object *descs = out_array(&o, "descriptors");
	size_t off = 0;
	/* The list ends with a zero NIDT or NIDL, or where the next descriptor would overrun. */
	while (off + sizeof(struct nvme_ns_id_desc) <= LIST_SIZE) {
		struct nvme_ns_id_desc d;
		memcpy(&d, p + off, sizeof(d));
		if (!d.nidt || !d.nidl || off + sizeof(d) + d.nidl > LIST_SIZE)
			break;
		struct out_scope s = out_enter_element(&o, descs);
		if (out_is_json(&o)) {
			out_dec(&o, "nidt", d.nidt);
			out_dec(&o, "nidl", d.nidl);
		}
		print_ns_desc(&o, &d, p + off + sizeof(d));
		out_leave(&o, s);
		off += sizeof(d) + d.nidl;
	}
	out_end(&o);
}
