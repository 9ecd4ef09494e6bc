/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Printers for what is not an Identify structure or a log page: the controller registers
 * (decoded field by field), queue entries, statuses and raw bytes.
 */
#include <inttypes.h>

#include <unvme/print.h>

#include "names.h"
#include "print_util.h"

/* ---- Controller registers (Base 2.0, section 3.1) */

#define REGS_WIDTH 8

/* A register with fields: text shows "name : value" and the fields indented below it; JSON
 * gives the register an object holding "value" and the fields. */
/* A value with decoded fields: in JSON an object with "value" and the fields (a completion's
 * status), in text the value then the fields indented. */
static struct out_scope out_register(struct spec_out *o, const char *name, uint64_t value)
{
	if (out_is_json(o)) {
		struct out_scope s = out_enter(o, name);
		out_hex(o, "value", value);
		return s;
	}
	out_hex(o, name, value);
	return out_enter(o, name);
}

/* A controller register: in JSON the number under its name, as nvme-cli's show-regs prints
 * it, and the decoded fields under "<name>_fields"; in text as out_register. */
static struct out_scope out_ctrl_register(struct spec_out *o, const char *name, uint64_t value)
{
	if (!out_is_json(o))
		return out_register(o, name, value);
	char fields[32];
	out_hex(o, name, value);
	snprintf(fields, sizeof(fields), "%s_fields", name);
	return out_enter(o, fields);
}

static const struct spec_bit_name cap_css_bits[] = {
	{ 0, "NVM" },
	{ 6, "I/O command sets" },
	{ 7, "admin only" },
};

static const struct spec_bit_name cap_ams_bits[] = {
	{ 0, "Weighted Round Robin with Urgent" },
	{ 1, "Vendor Specific" },
};

static void print_cap(struct spec_out *o, uint64_t cap)
{
	char bits[128];
	struct out_scope s = out_ctrl_register(o, "cap", cap);
	uint32_t dstrd = NVME_CAP_DSTRD(cap), mpsmin = NVME_CAP_MPSMIN(cap), mpsmax = NVME_CAP_MPSMAX(cap);
	out_num(o, "mqes", NVME_CAP_MQES(cap), "%u (%u entries)", NVME_CAP_MQES(cap), NVME_CAP_MQES(cap) + 1);
	out_num(o, "cqr", NVME_CAP_CQR(cap), "%u (contiguous queues %srequired)", NVME_CAP_CQR(cap),
		NVME_CAP_CQR(cap) ? "" : "not ");
	out_num(o, "ams", NVME_CAP_AMS(cap), "%#x (Round Robin%s%s)", NVME_CAP_AMS(cap),
		NVME_CAP_AMS(cap) ? ", " : "",
		NVME_CAP_AMS(cap) ? spec_bit_names(bits, sizeof(bits), NVME_CAP_AMS(cap), cap_ams_bits,
						  SPEC_ARRAY_SIZE(cap_ams_bits))
				  : "");
	/* TO is in 500 ms units. */
	out_num(o, "to", NVME_CAP_TO(cap), "%u (%u ms)", NVME_CAP_TO(cap), NVME_CAP_TO(cap) * 500u);
	out_num(o, "dstrd", dstrd, "%u (%u-byte doorbell stride)", dstrd, 4u << dstrd);
	out_dec(o, "nssrs", NVME_CAP_NSSRS(cap));
	out_num(o, "css", NVME_CAP_CSS(cap), "%#x (%s)", NVME_CAP_CSS(cap),
		spec_bit_names(bits, sizeof(bits), NVME_CAP_CSS(cap), cap_css_bits, SPEC_ARRAY_SIZE(cap_css_bits)));
	out_dec(o, "bps", NVME_CAP_BPS(cap));
	/* Memory page sizes are 2^(12 + n) bytes. */
	out_num(o, "mpsmin", mpsmin, "%u (%u-byte pages)", mpsmin, 4096u << mpsmin);
	out_num(o, "mpsmax", mpsmax, "%u (%u-byte pages)", mpsmax, 4096u << mpsmax);
	out_leave(o, s);
}

static void print_vs(struct spec_out *o, uint32_t vs)
{
	struct out_scope s = out_ctrl_register(o, "vs", vs);
	out_dec(o, "mjr", NVME_VS_MJR(vs));
	out_dec(o, "mnr", NVME_VS_MNR(vs));
	out_dec(o, "ter", NVME_VS_TER(vs));
	out_leave(o, s);
}

static const char *cc_css_name(uint32_t css)
{
	switch (css) {
	case NVME_CC_CSS_NVM:
		return "NVM command set";
	case NVME_CC_CSS_IOCS:
		return "all supported I/O command sets";
	case NVME_CC_CSS_ADMIN:
		return "admin command set only";
	default:
		return "reserved";
	}
}

static const char *cc_ams_name(uint32_t ams)
{
	switch (ams) {
	case 0:
		return "Round Robin";
	case 1:
		return "Weighted Round Robin with Urgent";
	case 7:
		return "Vendor Specific";
	default:
		return "reserved";
	}
}

static const char *cc_shn_name(uint32_t shn)
{
	switch (shn) {
	case NVME_CC_SHN_NONE:
		return "no notification";
	case NVME_CC_SHN_NORMAL:
		return "normal shutdown";
	case NVME_CC_SHN_ABRUPT:
		return "abrupt shutdown";
	default:
		return "reserved";
	}
}

static void print_cc(struct spec_out *o, uint32_t cc)
{
	struct out_scope s = out_ctrl_register(o, "cc", cc);
	uint32_t css = NVME_CC_CSS(cc), mps = NVME_CC_MPS(cc), ams = NVME_CC_AMS(cc), shn = NVME_CC_SHN(cc);
	uint32_t iosqes = NVME_CC_IOSQES(cc), iocqes = NVME_CC_IOCQES(cc);
	out_dec(o, "en", cc & NVME_CC_EN);
	out_num(o, "css", css, "%u (%s)", css, cc_css_name(css));
	out_num(o, "mps", mps, "%u (%u-byte pages)", mps, 4096u << mps);
	out_num(o, "ams", ams, "%u (%s)", ams, cc_ams_name(ams));
	out_num(o, "shn", shn, "%u (%s)", shn, cc_shn_name(shn));
	/* Queue entry sizes are log2 bytes; 0 until the host configures I/O queues. */
	out_num(o, "iosqes", iosqes, "%u (%u-byte entries)", iosqes, 1u << iosqes);
	out_num(o, "iocqes", iocqes, "%u (%u-byte entries)", iocqes, 1u << iocqes);
	out_leave(o, s);
}

static const char *csts_shst_name(uint32_t shst)
{
	switch (shst) {
	case NVME_CSTS_SHST_NORMAL:
		return "normal operation";
	case NVME_CSTS_SHST_OCCURRING:
		return "shutdown processing occurring";
	case NVME_CSTS_SHST_COMPLETE:
		return "shutdown processing complete";
	default:
		return "reserved";
	}
}

static void print_csts(struct spec_out *o, uint32_t csts)
{
	struct out_scope s = out_ctrl_register(o, "csts", csts);
	out_num(o, "rdy", csts & NVME_CSTS_RDY, "%u (%s)", csts & NVME_CSTS_RDY,
		csts & NVME_CSTS_RDY ? "ready" : "not ready");
	out_num(o, "cfs", (csts & NVME_CSTS_CFS) >> 1, "%u%s", (csts & NVME_CSTS_CFS) >> 1,
		csts & NVME_CSTS_CFS ? " (controller fatal status)" : "");
	out_num(o, "shst", NVME_CSTS_SHST(csts), "%u (%s)", NVME_CSTS_SHST(csts),
		csts_shst_name(NVME_CSTS_SHST(csts)));
	out_dec(o, "nssro", (csts & NVME_CSTS_NSSRO) >> 4);
	out_dec(o, "pp", (csts & NVME_CSTS_PP) >> 5);
	out_leave(o, s);
}

static void print_aqa(struct spec_out *o, uint32_t aqa)
{
	struct out_scope s = out_ctrl_register(o, "aqa", aqa);
	/* Queue sizes are 0's based. */
	out_num(o, "asqs", NVME_AQA_ASQS(aqa), "%u (%u entries)", NVME_AQA_ASQS(aqa), NVME_AQA_ASQS(aqa) + 1);
	out_num(o, "acqs", NVME_AQA_ACQS(aqa), "%u (%u entries)", NVME_AQA_ACQS(aqa), NVME_AQA_ACQS(aqa) + 1);
	out_leave(o, s);
}

void unvme_print_regs(FILE *f, const struct nvme_regs_snapshot *regs, enum unvme_fmt fmt)
{
	struct spec_out o;
	out_begin(&o, f, fmt, REGS_WIDTH, "NVMe Controller Registers:");
	print_cap(&o, regs->cap);
	print_vs(&o, regs->vs);
	print_cc(&o, regs->cc);
	print_csts(&o, regs->csts);
	print_aqa(&o, regs->aqa);
	out_hex(&o, "asq", regs->asq);
	out_hex(&o, "acq", regs->acq);
	out_end(&o);
}

/* ---- Queue entries (Base 2.0, figures "Common Command Format" and "Common Completion Queue
 * Entry Layout") */

#define ENTRY_WIDTH 6

void unvme_print_sqe(FILE *f, const struct nvme_sqe *sqe, enum unvme_fmt fmt)
{
	struct spec_out o;
	/* The entry does not say which queue it was for, so both readings of the opcode are
	 * named; NVM is the I/O command set the tools use. */
	const char *admin = nvme_admin_opc_name(sqe->opc), *io = nvme_io_opc_name(sqe->opc, NVME_CSI_NVM);
	out_begin(&o, f, fmt, ENTRY_WIDTH, "Submission Queue Entry:");
	out_num(&o, "opc", sqe->opc, "0x%02x (admin: %s, I/O: %s)", sqe->opc, admin ? admin : "-", io ? io : "-");
	out_num(&o, "flags", sqe->flags, "%#x (fuse %u, psdt %u)", sqe->flags, NVME_SQE_FUSE(sqe->flags),
		NVME_SQE_PSDT(sqe->flags));
	out_hex(&o, "cid", sqe->cid);
	out_hex(&o, "nsid", sqe->nsid);
	out_hex(&o, "cdw2", sqe->cdw2);
	out_hex(&o, "cdw3", sqe->cdw3);
	out_hex(&o, "mptr", sqe->mptr);
	out_hex(&o, "prp1", sqe->prp1);
	out_hex(&o, "prp2", sqe->prp2);
	out_hex(&o, "cdw10", sqe->cdw10);
	out_hex(&o, "cdw11", sqe->cdw11);
	out_hex(&o, "cdw12", sqe->cdw12);
	out_hex(&o, "cdw13", sqe->cdw13);
	out_hex(&o, "cdw14", sqe->cdw14);
	out_hex(&o, "cdw15", sqe->cdw15);
	out_end(&o);
}

void unvme_print_cqe(FILE *f, const struct nvme_cqe *cqe, enum unvme_fmt fmt)
{
	struct spec_out o;
	uint16_t st = cqe->status;
	/* A completion does not record the command set either: NVM naming. */
	const char *name = unvme_status_str(NVME_STATUS_FROM_CQE(st), NVME_CSI_NVM);
	out_begin(&o, f, fmt, ENTRY_WIDTH, "Completion Queue Entry:");
	out_hex(&o, "dw0", cqe->dw0);
	out_hex(&o, "dw1", cqe->dw1);
	out_dec(&o, "sqhd", cqe->sqhd);
	out_dec(&o, "sqid", cqe->sqid);
	out_hex(&o, "cid", cqe->cid);
	struct out_scope s = out_register(&o, "status", st);
	out_dec(&o, "p", NVME_CQE_PHASE(st));
	out_hex(&o, "sc", NVME_CQE_SC(st));
	out_num(&o, "sct", NVME_CQE_SCT(st), "%#x (%s)", NVME_CQE_SCT(st), unvme_sct_str(NVME_CQE_SCT(st)));
	out_dec(&o, "crd", NVME_CQE_CRD(st));
	out_dec(&o, "m", NVME_CQE_MORE(st));
	out_dec(&o, "dnr", NVME_CQE_DNR(st));
	out_str(&o, "name", name);
	out_leave(&o, s);
	out_end(&o);
}

/* ---- Statuses and raw bytes */

void unvme_print_status(FILE *f, int status, uint8_t csi, enum unvme_fmt fmt)
{
	const char *name = unvme_status_str(status, csi);
	if (fmt == UNVME_FMT_JSON) {
		json_object *obj = json_object_new_object();
		json_object_object_add(obj, "status", json_object_new_int(status));
		/* A negative status is a host-side errno: it has no type or code. */
		if (status >= 0) {
			unsigned sct = NVME_STATUS_SCT(status);
			json_object_object_add(obj, "sct", json_object_new_int((int)sct));
			json_object_object_add(obj, "sc", json_object_new_int((int)NVME_STATUS_SC(status)));
			json_object_object_add(obj, "sct_name", json_object_new_string(unvme_sct_str(sct)));
		}
		json_object_object_add(obj, "name", json_object_new_string(name));
		spec_json_write(f, obj);
		json_object_put(obj);
		return;
	}
	if (status < 0) {
		fprintf(f, "%s (%d)\n", name, status);
		return;
	}
	unsigned sct = NVME_STATUS_SCT(status), sc = NVME_STATUS_SC(status);
	fprintf(f, "NVMe status: %s (SCT %Xh %s, SC %02Xh)\n", name, sct, unvme_sct_str(sct), sc);
}

void unvme_print_hex(FILE *f, const void *buf, size_t len, enum unvme_fmt fmt)
{
	if (fmt != UNVME_FMT_JSON) {
		spec_hex_dump(f, buf, len);
		return;
	}
	struct spec_out o;
	out_begin(&o, f, fmt, 0, NULL);
	out_dec(&o, "length", len);
	out_hex_bytes(&o, "data", buf, len);
	out_end(&o);
}
