/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * How much data a command moves, and which way, computed from the command itself before any
 * byte of its data is taken or any buffer reserved: NLB x the block size for NVM and ZNS I/O,
 * NUMD for logs and zone reports, the value and buffer sizes of KV commands, fixed sizes for
 * Identify and Connect, TL / AL for the authentication commands. The transport's data
 * descriptor (SGL1, in-capsule or by R2T) must describe exactly that many bytes: the buffer
 * given to a backing device is then exactly what the device transfers, so the device never
 * reads or writes past what the host sent or what the host will see, and the target builds
 * the device's data pointer (PRPs) over its own buffer only.
 *
 * A mismatch is Data SGL Length Invalid (SCT 0, SC 0Fh) with DNR, as Linux's target
 * (nvmet_check_transfer_len) answers; more than the controller's MDTS is Invalid Field
 * (NVMe Base 2.0 section 5.2: a transfer above MDTS). A command the target does not know gets
 * Invalid Command Opcode here, before its data: it never reaches a device.
 */
#include "unvme/spec/features.h"
#include "unvme/spec/zns.h"
#include "lib/driver/ctrlr.h"
#include "tgt.h"

#define ST(sct, sc) NVME_STATUS(sct, sc)
#define BAD_OPCODE ST(NVME_SCT_GENERIC, NVME_SC_INVALID_OPCODE)
#define BAD_FIELD ST(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD)

static int plan(struct tgt_xfer *x, uint64_t len, bool to_ctrl, uint32_t limit)
{
	if (len > limit)
		return BAD_FIELD;
	x->len = (uint32_t)len;
	x->to_ctrl = to_ctrl && len;
	return 0;
}

/* Fabrics commands (NVMe Base 2.0 section 6): Connect data is 1024 bytes; Authentication Send
 * moves TL (CDW11) bytes to the controller, Authentication Receive AL (CDW11) bytes back. */
static int fabrics(const struct nvme_sqe *sqe, struct tgt_xfer *x)
{
	switch (((const struct nvmf_cmd *)sqe)->fctype) {
	case NVMF_FCTYPE_CONNECT:
		return plan(x, sizeof(struct nvmf_connect_data), true, UINT32_MAX);
	case NVMF_FCTYPE_AUTH_SEND:
		return plan(x, sqe->cdw11, true, TGT_AUTH_MAX_XFER);
	case NVMF_FCTYPE_AUTH_RECV:
		return plan(x, sqe->cdw11, false, TGT_AUTH_MAX_XFER);
	case NVMF_FCTYPE_PROPERTY_GET:
	case NVMF_FCTYPE_PROPERTY_SET:
	case NVMF_FCTYPE_DISCONNECT:
		return plan(x, 0, false, 0);
	default:
		return BAD_OPCODE;
	}
}

bool tgt_feature_known(bool discovery, uint8_t fid, bool set)
{
	switch (fid) {
	case NVME_FEAT_ASYNC_EVENT:
	case NVME_FEAT_KATO:
		return true;
	case NVME_FEAT_ARBITRATION:
	case NVME_FEAT_POWER_MGMT:
	case NVME_FEAT_TEMP_THRESH:
	case NVME_FEAT_ERR_RECOVERY:
	case NVME_FEAT_IRQ_COALESCE:
	case NVME_FEAT_VOLATILE_WC:
	case NVME_FEAT_NUM_QUEUES:
	case NVME_FEAT_HOST_ID:
		return !discovery;
	default:
		(void)set;
		return false;
	}
}

/* Admin commands the target's controllers answer (tgt_admin.c), with their data. */
static int admin(const struct tgt_conn *c, const struct nvme_sqe *sqe, struct tgt_xfer *x)
{
	bool disc = c->ss && c->ss->discovery;
	switch (sqe->opc) {
	case NVME_ADM_IDENTIFY:
		return plan(x, 4096, false, 4096);
	case NVME_ADM_GET_LOG_PAGE: {
		/* NUMDL (CDW10 31:16) and NUMDU (CDW11 15:0), 0's based dwords */
		uint64_t numd = ((sqe->cdw10 >> 16) | (uint64_t)(sqe->cdw11 & 0xffffu) << 16) + 1u;
		return plan(x, numd * 4, false, TGT_ADMIN_MAX_XFER);
	}
	case NVME_ADM_GET_FEATURES:
	case NVME_ADM_SET_FEATURES: {
		bool set = sqe->opc == NVME_ADM_SET_FEATURES;
		uint8_t fid = (uint8_t)sqe->cdw10;
		if (!tgt_feature_known(disc, fid, set))
			return BAD_FIELD;
		/* Host Identifier: 128 bits (EXHID, CDW11 bit 0), the only kind the target keeps;
		 * setting it is refused at execution (it is the one given in Connect) */
		if (fid == NVME_FEAT_HOST_ID && !set)
			return (sqe->cdw11 & 1u) ? plan(x, 16, false, 16) : BAD_FIELD;
		return plan(x, 0, false, 0);
	}
	case NVME_ADM_KEEP_ALIVE:
	case NVME_ADM_ASYNC_EVENT:
		return plan(x, 0, false, 0);
	case NVME_ADM_ABORT:
		return disc ? BAD_OPCODE : plan(x, 0, false, 0);
	default:
		return BAD_OPCODE;
	}
}

/* Samsung's KV vendor commands (include/unvme/spec/kv.h): CDW10 counts dwords of the value or
 * the buffer; a store moves every dword of it (the pad bytes of the last one included). */
static int kv_vendor(const struct tgt_subsys *ss, const struct nvme_sqe *sqe, struct tgt_xfer *x)
{
	if (ss->kv_ns < 0)
		return BAD_OPCODE;
	uint64_t bytes = (uint64_t)sqe->cdw10 * 4;
	switch (sqe->opc) {
	case NVME_KVV_STORE:
		return plan(x, bytes, true, ss->mdts_bytes);
	case NVME_KVV_RETRIEVE:
	case NVME_KVV_ITER_READ:
		return plan(x, bytes, false, ss->mdts_bytes);
	default: /* delete, exist, iterator open / close */
		return plan(x, 0, false, 0);
	}
}

/* The NVMe Key Value command set (CSI 1): CDW10 is the value size (store) or the host
 * buffer size (retrieve, list), in bytes. */
static int kv_std(const struct tgt_subsys *ss, const struct nvme_sqe *sqe, struct tgt_xfer *x)
{
	switch (sqe->opc) {
	case NVME_KV_STORE:
		return plan(x, sqe->cdw10, true, ss->mdts_bytes);
	case NVME_KV_RETRIEVE:
	case NVME_KV_LIST:
		return plan(x, sqe->cdw10, false, ss->mdts_bytes);
	case NVME_KV_FLUSH:
	case NVME_KV_DELETE:
	case NVME_KV_EXIST:
		return plan(x, 0, false, 0);
	default:
		return BAD_OPCODE;
	}
}

/* The NVM command set, and the ZNS commands on a zoned namespace. NLB is CDW12 15:0, 0's
 * based; a block moves its data and, in an extended LBA format, its metadata. */
static int nvm(const struct tgt_subsys *ss, const struct tgt_ns *ns, const struct nvme_sqe *sqe,
	       struct tgt_xfer *x)
{
	uint64_t blocks = (uint64_t)((sqe->cdw12 & 0xffffu) + 1u) * ns->block_bytes;
	bool zoned = ns->csi == NVME_CSI_ZNS;
	switch (sqe->opc) {
	case NVME_CMD_READ:
		x->fills = true;
		return plan(x, blocks, false, ss->mdts_bytes);
	case NVME_CMD_WRITE:
	case NVME_CMD_COMPARE:
		return plan(x, blocks, true, ss->mdts_bytes);
	case NVME_CMD_DSM: /* NR (CDW10 7:0, 0's based) ranges of 16 bytes */
		return plan(x, ((sqe->cdw10 & 0xffu) + 1u) * 16u, true, ss->mdts_bytes);
	case NVME_CMD_FLUSH:
	case NVME_CMD_WRITE_UNCOR:
	case NVME_CMD_WRITE_ZEROES:
	case NVME_CMD_VERIFY:
		return plan(x, 0, false, 0);
	case NVME_CMD_ZONE_APPEND:
		return zoned ? plan(x, blocks, true, ss->mdts_bytes) : BAD_OPCODE;
	case NVME_CMD_ZONE_MGMT_RECV: /* NUMD: CDW12, 0's based dwords */
		return zoned ? plan(x, ((uint64_t)sqe->cdw12 + 1u) * 4, false, ss->mdts_bytes) : BAD_OPCODE;
	case NVME_CMD_ZONE_MGMT_SEND:
		if (!zoned)
			return BAD_OPCODE;
		/* only Set Zone Descriptor Extension carries data, and the target offers no
		 * extensions (it passes ZNS Identify through, whose ZDES the devices set) */
		return (sqe->cdw13 & 0xffu) == NVME_ZSA_SET_ZDE ? BAD_FIELD : plan(x, 0, false, 0);
	default:
		return BAD_OPCODE;
	}
}

static int io(const struct tgt_conn *c, const struct nvme_sqe *sqe, struct tgt_xfer *x)
{
	const struct tgt_subsys *ss = c->ss;
	if (tgt_vendor_kv(sqe->opc))
		return kv_vendor(ss, sqe, x);
	const struct tgt_ns *ns = tgt_ns_of(ss, sqe->nsid);
	if (!ns)
		return ST(NVME_SCT_GENERIC, NVME_SC_INVALID_NS_OR_FORMAT);
	return ns->csi == NVME_CSI_KV ? kv_std(ss, sqe, x) : nvm(ss, ns, sqe, x);
}

int tgt_xfer_plan(const struct tgt_conn *c, const struct nvme_sqe *sqe, struct tgt_xfer *x)
{
	*x = (struct tgt_xfer){0};
	if (sqe->opc == NVME_FABRICS_OPC)
		return fabrics(sqe, x);
	return c->qid == 0 ? admin(c, sqe, x) : io(c, sqe, x);
}

static inline uint32_t align4(uint32_t v)
{
	return (v + 3u) & ~3u;
}

int tgt_xfer_check_sgl(const struct nvme_sqe *sqe, const struct tgt_xfer *x, uint32_t icd,
		       uint32_t *icd_off)
{
	const struct nvme_sgl_desc *sgl = (const void *)&sqe->prp1;
	*icd_off = 0;
	if (NVME_SQE_PSDT(sqe->flags) != 1) /* a PRP pointer means nothing across a network */
		return BAD_FIELD;
	bool incapsule = sgl->type == NVME_SGL_INCAPSULE;
	if (!incapsule && sgl->type != NVME_SGL_TRANSPORT)
		return ST(NVME_SCT_GENERIC, NVME_SC_SGL_DESC_TYPE_INVALID);
	if (incapsule && (sgl->addr != 0 || (x->len && !x->to_ctrl)))
		return ST(NVME_SCT_GENERIC, NVME_SC_SGL_OFFSET_INVALID);
	if (sgl->len != x->len)
		return ST(NVME_SCT_GENERIC, NVME_SC_DATA_SGL_LEN_INVALID);
	/* The in-capsule bytes: the data when SGL1 is in the capsule, then (a vendor KV key over
	 * 16 bytes) the key at the dword after it, or at 0 when the data goes by R2T or C2H. */
	uint32_t data_icd = incapsule ? x->len : 0;
	const struct nvme_sgl_desc *key = tgt_kv_key_desc(sqe);
	if (key) {
		uint32_t klen = (sqe->cdw11 & 0xffu) + 1u;
		uint32_t at = incapsule ? align4(x->len) : 0;
		if (key->type != NVME_SGL_INCAPSULE || key->len != klen || key->addr != at ||
		    icd != at + klen)
			return BAD_FIELD;
	} else if (icd != data_icd) {
		return ST(NVME_SCT_GENERIC, NVME_SC_DATA_SGL_LEN_INVALID);
	}
	*icd_off = incapsule ? 0 : align4(x->len);
	return 0;
}
