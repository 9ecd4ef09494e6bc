/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Bad-input matrix of the public driver API (include/unvme/unvme.h): missing arguments,
 * device ids that name nothing, queue depths and transfers outside the limits, buffers that
 * are not DMA memory, LBAs past the end, commands the device refuses. Each answer is the
 * documented one: a negative errno with a message from unvme_errmsg(), or the NVMe status
 * the controller completes the command with (shown by unvme_status_str()).
 */
#include <errno.h>
#include <stdint.h>

#include "matrix.h"
#include "unvme/unvme.h"

#define DEV "emu://badinput?ns=mem:1M:512&ns=kv:1M"

static struct unvme_ctrlr *c;
static struct unvme_ns *ns, *kvns;
static struct unvme_qpair *qp;
static uint8_t *dma;          /* 8 KiB of DMA memory */
static uint8_t plain[8192];   /* not DMA memory */
static char last_msg[512];
static int last_status;       /* > 0: an NVMe status to name in the message column */

static const char *message(void)
{
	if (last_status > 0)
		snprintf(last_msg, sizeof(last_msg), "%s", unvme_status_str(last_status, 0));
	else
		snprintf(last_msg, sizeof(last_msg), "%s", unvme_errmsg());
	return last_msg;
}

static const char *result_name(long long rc)
{
	static char buf[64];
	switch (rc) {
	case 0: return "0";
	case -EINVAL: return "-EINVAL";
	case -ENOENT: return "-ENOENT";
	case -ENODEV: return "-ENODEV";
	case -ENOMEM: return "-ENOMEM";
	case -EBUSY: return "-EBUSY";
	case -ELOOP: return "-ELOOP";
	case -E2BIG: return "-E2BIG";
	case -ENAMETOOLONG: return "-ENAMETOOLONG";
	case -2000: return "NULL";
	case -2001: return "UINT64_MAX";
	default:
		if (rc > 0)
			snprintf(buf, sizeof(buf), "status 0x%llx", rc);
		else
			snprintf(buf, sizeof(buf), "%lld", rc);
		return buf;
	}
}

static void before(void)
{
	last_status = 0;
}

static long long st(int rc)
{
	last_status = rc > 0 ? rc : 0;
	return rc;
}

#define LBA_RANGE NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_LBA_OUT_OF_RANGE)
#define INV_FIELD NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD)
#define INV_NS    NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_NS_OR_FORMAT)
#define INV_OPC   NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_OPCODE)
#define INV_FMT   NVME_STATUS(NVME_SCT_CMD, NVME_SC_INVALID_FORMAT)
#define INV_LOG   NVME_STATUS(NVME_SCT_CMD, NVME_SC_INVALID_LOG_PAGE)
#define INV_QID   NVME_STATUS(NVME_SCT_CMD, NVME_SC_INVALID_QID)
#define INV_FW    NVME_STATUS(NVME_SCT_CMD, NVME_SC_INVALID_FW_SLOT)
#define SEQ_ERR   NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_CMD_SEQ_ERROR)

/* ---- controllers and device ids ---- */
static long long open_null(void) { struct unvme_ctrlr *x; return unvme_ctrlr_open(NULL, NULL, &x); }
static long long open_null_out(void) { return unvme_ctrlr_open(DEV, NULL, NULL); }
static long long open_empty(void) { struct unvme_ctrlr *x; return unvme_ctrlr_open("", NULL, &x); }
static long long open_unknown_alias(void) { struct unvme_ctrlr *x; return unvme_ctrlr_open("no-such-device", NULL, &x); }
static long long open_bad_scheme(void) { struct unvme_ctrlr *x; return unvme_ctrlr_open("nvme://x", NULL, &x); }
static long long open_bad_uri_key(void) { struct unvme_ctrlr *x; return unvme_ctrlr_open("emu://x?qeues=8", NULL, &x); }
static long long open_tls_no_key(void)
{
	struct unvme_ctrlr *x;
	unsetenv("UNVME_TLS_KEY");
	return unvme_ctrlr_open("nvme-tcp://127.0.0.1:9/nqn.x?tls=1", NULL, &x);
}
static long long open_tls_bad_key(void)
{
	struct unvme_ctrlr *x;
	return unvme_ctrlr_open("nvme-tcp://127.0.0.1:9/nqn.x?tls_key=NVMeTLSkey-1:01:AAECAwQFBgcICQoLDA0OD4jizs4=:",
				NULL, &x);
}
static long long open_tls_identity_2(void)
{
	struct unvme_ctrlr *x;
	return unvme_ctrlr_open("nvme-tcp://127.0.0.1:9/nqn.x?tls=1&tls_identity=2", NULL, &x);
}
static long long open_bad_lba(void) { struct unvme_ctrlr *x; return unvme_ctrlr_open("emu://x?ns=mem:3G:513", NULL, &x); }
static long long open_missing_file(void)
{
	struct unvme_ctrlr *x;
	return unvme_ctrlr_open("emu://x?ns=file:0:512:/nonexistent/dir/f.img", NULL, &x);
}
static long long open_pci_absent(void) { struct unvme_ctrlr *x; return unvme_ctrlr_open("0000:7f:1f.7", NULL, &x); }
static long long open_long_id(void)
{
	static char id[70000];
	memset(id, 'a', sizeof(id) - 1);
	struct unvme_ctrlr *x;
	return unvme_ctrlr_open(id, NULL, &x);
}
static long long open_admin_depth_1(void)
{
	struct unvme_ctrlr_opts o;
	unvme_ctrlr_opts_default(&o);
	o.admin_queue_depth = 1;
	struct unvme_ctrlr *x;
	long long rc = unvme_ctrlr_open("emu://adm1?ns=mem:1M", &o, &x);
	if (!rc)
		unvme_ctrlr_close(x);
	return rc;
}
static long long close_null(void) { unvme_ctrlr_close(NULL); return 0; }
static long long reset_null(void) { return unvme_ctrlr_reset(NULL); }
static long long ns_zero(void) { return unvme_ctrlr_ns(c, 0) ? 0 : -2000; }
static long long ns_inactive(void) { return unvme_ctrlr_ns(c, 7) ? 0 : -2000; }
static long long resolve_null(void) { char o[64]; return unvme_devid_resolve(NULL, o, sizeof(o)); }
static long long resolve_small_out(void) { char o[4]; return unvme_devid_resolve("emu0", o, sizeof(o)); }
static long long resolve_loop(void)
{
	setenv("UNVME_DEVICES", "a=b;b=a", 1);
	char o[256];
	long long rc = unvme_devid_resolve("a", o, sizeof(o));
	unsetenv("UNVME_DEVICES");
	return rc;
}

/* ---- DMA memory ---- */
static long long dma_zero(void) { return unvme_dma_alloc(0, 4096) ? 0 : -2000; }
static long long dma_bad_align(void) { return unvme_dma_alloc(4096, 3000) ? 0 : -2000; }
static long long dma_huge(void) { return unvme_dma_alloc((size_t)1 << 50, 4096) ? 0 : -2000; }
static long long dma_free_null(void) { unvme_dma_free(NULL); return 0; }
static long long dma_iova_plain(void) { return unvme_dma_iova(plain) == UINT64_MAX ? -2001 : 0; }

/* ---- queue pairs ---- */
static long long qp_null_ctrlr(void) { struct unvme_qpair *q; return unvme_qpair_create(NULL, NULL, &q); }
static long long qp_depth_1(void)
{
	struct unvme_qpair_opts o = { .depth = 1 };
	struct unvme_qpair *q;
	return unvme_qpair_create(c, &o, &q);
}
static long long qp_depth_huge(void)
{
	struct unvme_qpair_opts o = { .depth = 1u << 20 };
	struct unvme_qpair *q;
	return unvme_qpair_create(c, &o, &q);
}
static long long submit_plain_buf(void)
{
	struct nvme_sqe cmd = { .opc = NVME_CMD_READ, .nsid = 1 };
	return unvme_qpair_submit(qp, &cmd, plain, 512, NULL, NULL);
}
static long long submit_too_big(void)
{
	struct nvme_sqe cmd = { .opc = NVME_CMD_READ, .nsid = 1 };
	return unvme_qpair_submit(qp, &cmd, dma, (size_t)unvme_ctrlr_max_xfer(c) + 4096, NULL, NULL);
}
static long long destroy_null(void) { unvme_qpair_destroy(NULL); return 0; }
static long long recover_null(void) { return unvme_qpair_recover(NULL); }

/* ---- block I/O ---- */
static long long read_null_ns(void) { return unvme_read_sync(NULL, qp, dma, 0, 1); }
static long long read_null_buf(void) { return unvme_read_sync(ns, qp, NULL, 0, 1); }
static long long read_zero_blocks(void) { return unvme_read_sync(ns, qp, dma, 0, 0); }
static long long read_past_end(void) { return st(unvme_read_sync(ns, qp, dma, unvme_ns_nlbas(ns), 1)); }
static long long read_straddles_end(void) { return st(unvme_read_sync(ns, qp, dma, unvme_ns_nlbas(ns) - 1, 2)); }
static long long read_lba_max(void) { return st(unvme_read_sync(ns, qp, dma, UINT64_MAX, 1)); }
static long long write_plain(void) { return unvme_write_sync(ns, qp, plain, 0, 1); }
static long long write_huge_count(void) { return unvme_write_sync(ns, qp, dma, 0, 70000); }
static long long read_kv_ns(void) { return unvme_read_sync(kvns, qp, dma, 0, 1); }
static long long zeroes_past_end(void) { return st(unvme_write_zeroes_sync(ns, qp, unvme_ns_nlbas(ns), 8)); }
static long long dealloc_past_end(void) { return st(unvme_deallocate_sync(ns, qp, unvme_ns_nlbas(ns) + 10, 1)); }
static long long compare_null(void) { return unvme_compare_sync(ns, qp, NULL, 0, 1); }
static long long flush_null(void) { return unvme_flush_sync(NULL, qp); }
static long long raw_bad_nsid(void)
{
	struct nvme_sqe cmd = { .opc = NVME_CMD_READ, .nsid = 9, .cdw12 = 0 };
	return st(unvme_qpair_cmd_sync(qp, &cmd, dma, 512, NULL));
}
static long long raw_bad_opcode(void)
{
	struct nvme_sqe cmd = { .opc = 0x7f, .nsid = 1 };
	return st(unvme_qpair_cmd_sync(qp, &cmd, NULL, 0, NULL));
}

/* ---- admin ---- */
static long long admin_null_cmd(void) { return unvme_admin(c, NULL, NULL, 0, NULL); }
static long long admin_len_no_buf(void)
{
	struct nvme_sqe cmd = { .opc = NVME_ADM_IDENTIFY, .cdw10 = 1 };
	return unvme_admin(c, &cmd, NULL, 4096, NULL);
}
static long long admin_bad_opcode(void)
{
	struct nvme_sqe cmd = { .opc = 0x7e };
	return st(unvme_admin(c, &cmd, NULL, 0, NULL));
}
static long long identify_bad_cns(void) { return st(unvme_identify(c, 0xfe, 0, 0, plain)); }
static long long identify_bad_ns(void) { return st(unvme_identify(c, 0, 0xfffffffe, 0, plain)); }
static long long log_len_zero(void) { return unvme_get_log_page(c, 2, 0, plain, 0, 0); }
static long long log_len_odd(void) { return unvme_get_log_page(c, 2, 0, plain, 6, 0); }
static long long log_unknown(void) { return st(unvme_get_log_page(c, 0x6f, 0, plain, 512, 0)); }
static long long log_offset_past_end(void) { return st(unvme_get_log_page(c, 2, 0, plain, 512, 1u << 20)); }
static long long feature_unknown(void) { return st(unvme_get_features(c, 0x7d, 0, 0, NULL)); }
static long long feature_queues_ffff(void) { return st(unvme_set_features(c, NVME_FEAT_NUM_QUEUES, 0, 0xffff, false, NULL)); }
static long long format_bad_lbaf(void) { return st(unvme_format(c, 1, 9, 0)); }
static long long format_bad_ns(void) { return st(unvme_format(c, 77, 0, 0)); }
static long long fw_empty(void) { return unvme_fw_download(c, plain, 0, 0); }
static long long fw_bad_xfer(void) { return unvme_fw_download(c, plain, 4096, 3); }
static long long fw_commit_slot1(void) { return st(unvme_fw_commit(c, 1, 0)); }
static long long abort_bad_sq(void) { bool a; return st(unvme_abort(c, 999, 1, &a)); }

static const struct mcase cases[] = {
	MCASE("device id NULL", "unvme_ctrlr_open(NULL, NULL, &c)", -EINVAL, "required", open_null),
	MCASE("out pointer NULL", "unvme_ctrlr_open(dev, NULL, NULL)", -EINVAL, "required", open_null_out),
	MCASE("empty device id", "unvme_ctrlr_open(\"\", ...)", -EINVAL, "empty device id", open_empty),
	MCASE("unknown alias", "unvme_ctrlr_open(\"no-such-device\", ...)", -ENOENT, "not a URI, a PCI address or a known alias", open_unknown_alias),
	MCASE("unknown scheme", "unvme_ctrlr_open(\"nvme://x\", ...)", -EINVAL, "unknown scheme", open_bad_scheme),
	MCASE("misspelt URI key", "unvme_ctrlr_open(\"emu://x?qeues=8\", ...)", -EINVAL, "unknown key 'qeues'", open_bad_uri_key),
	MCASE("LBA size 513", "unvme_ctrlr_open(\"emu://x?ns=mem:3G:513\", ...)", -EINVAL, "LBA size 513", open_bad_lba),
	MCASE("NVMe/TCP TLS without a key", "unvme_ctrlr_open(\"nvme-tcp://H/NQN?tls=1\", ...)", -EINVAL, "tls=1 needs a PSK", open_tls_no_key),
	MCASE("NVMe/TCP TLS key of 16 bytes", "unvme_ctrlr_open(\"nvme-tcp://H/NQN?tls_key=NVMeTLSkey-1:01:<16 bytes>:\", ...)", -EINVAL, "tls_key: PSK is 16 bytes", open_tls_bad_key),
	MCASE("NVMe/TCP TLS identity version 2", "unvme_ctrlr_open(\"nvme-tcp://H/NQN?tls=1&tls_identity=2\", ...)", -EINVAL, "tls_identity=2: expected a number 0..1", open_tls_identity_2),
	MCASE("backing file in a missing directory", "unvme_ctrlr_open(\"emu://x?ns=file:0:512:/nonexistent/dir/f.img\", ...)", -ENOENT, "/nonexistent/dir/f.img", open_missing_file),
	MCASE("PCI address with no device", "unvme_ctrlr_open(\"0000:7f:1f.7\", ...)", -ENODEV, "0000:7f:1f.7", open_pci_absent),
	MCASE("device id of 70000 characters", "unvme_ctrlr_open(\"aaaa...\", ...)", -ENAMETOOLONG, "is 69999 characters long; at most", open_long_id),
	MCASE("admin queue depth 1", "opts.admin_queue_depth = 1; unvme_ctrlr_open(...)", -EINVAL, "depth", open_admin_depth_1),
	MCASE("close NULL", "unvme_ctrlr_close(NULL)", 0, "", close_null),
	MCASE("reset NULL", "unvme_ctrlr_reset(NULL)", -EINVAL, "no controller", reset_null),
	MCASE("namespace 0", "unvme_ctrlr_ns(c, 0)", -2000, "", ns_zero),
	MCASE("inactive namespace", "unvme_ctrlr_ns(c, 7)", -2000, "", ns_inactive),
	MCASE("resolve NULL", "unvme_devid_resolve(NULL, out, 64)", -EINVAL, "empty device id", resolve_null),
	MCASE("resolve into 4 bytes", "unvme_devid_resolve(\"emu0\", out, 4)", -EINVAL, "output buffer of 4 bytes, at least 16", resolve_small_out),
	MCASE("alias loop", "UNVME_DEVICES=\"a=b;b=a\"; unvme_devid_resolve(\"a\", ...)", -ELOOP, "nest more than", resolve_loop),
	MCASE("DMA size 0", "unvme_dma_alloc(0, 4096)", -2000, "size 0", dma_zero),
	MCASE("DMA alignment not a power of 2", "unvme_dma_alloc(4096, 3000)", -2000, "alignment 3000 invalid", dma_bad_align),
	MCASE("DMA of 1 PiB", "unvme_dma_alloc(1 << 50, 4096)", -2000, "size 1125899906842624 / alignment 4096 invalid", dma_huge),
	MCASE("free NULL", "unvme_dma_free(NULL)", 0, "", dma_free_null),
	MCASE("IOVA of plain memory", "unvme_dma_iova(stack buffer)", -2001, "", dma_iova_plain),
	MCASE("queue pair without controller", "unvme_qpair_create(NULL, NULL, &qp)", -EINVAL, "required", qp_null_ctrlr),
	MCASE("queue depth 1", "opts.depth = 1; unvme_qpair_create(c, &opts, &qp)", -EINVAL, "outside 2..", qp_depth_1),
	MCASE("queue depth 2^20", "opts.depth = 1 << 20; unvme_qpair_create(...)", -EINVAL, "outside 2..", qp_depth_huge),
	MCASE("buffer not DMA memory", "unvme_qpair_submit(qp, read, stack buffer, 512, ...)", -EINVAL, "not dword-aligned DMA memory", submit_plain_buf),
	MCASE("transfer over MDTS", "unvme_qpair_submit(qp, read, buf, max_xfer + 4096, ...)", -EINVAL, "exceeds the controller's maximum", submit_too_big),
	MCASE("destroy NULL", "unvme_qpair_destroy(NULL)", 0, "", destroy_null),
	MCASE("recover NULL", "unvme_qpair_recover(NULL)", -EINVAL, "no queue pair", recover_null),
	MCASE("read without namespace", "unvme_read_sync(NULL, qp, buf, 0, 1)", -EINVAL, "required", read_null_ns),
	MCASE("read into NULL", "unvme_read_sync(ns, qp, NULL, 0, 1)", -EINVAL, "data buffer is required", read_null_buf),
	MCASE("read 0 blocks", "unvme_read_sync(ns, qp, buf, 0, 0)", -EINVAL, "block count 0", read_zero_blocks),
	MCASE("read at the first LBA past the end", "unvme_read_sync(ns, qp, buf, nlbas, 1)", LBA_RANGE, "LBA Out of Range", read_past_end),
	MCASE("read across the end", "unvme_read_sync(ns, qp, buf, nlbas - 1, 2)", LBA_RANGE, "LBA Out of Range", read_straddles_end),
	MCASE("read at LBA 2^64-1", "unvme_read_sync(ns, qp, buf, UINT64_MAX, 1)", LBA_RANGE, "LBA Out of Range", read_lba_max),
	MCASE("write from plain memory", "unvme_write_sync(ns, qp, stack buffer, 0, 1)", -EINVAL, "DMA memory", write_plain),
	MCASE("write 70000 blocks", "unvme_write_sync(ns, qp, buf, 0, 70000)", -EINVAL, "outside 1..65536", write_huge_count),
	MCASE("block read on a KV namespace", "unvme_read_sync(kv_ns, qp, buf, 0, 1)", -EINVAL, "not NVM", read_kv_ns),
	MCASE("write zeroes past the end", "unvme_write_zeroes_sync(ns, qp, nlbas, 8)", LBA_RANGE, "LBA Out of Range", zeroes_past_end),
	MCASE("deallocate past the end", "unvme_deallocate_sync(ns, qp, nlbas + 10, 1)", LBA_RANGE, "LBA Out of Range", dealloc_past_end),
	MCASE("compare with NULL", "unvme_compare_sync(ns, qp, NULL, 0, 1)", -EINVAL, "data buffer is required", compare_null),
	MCASE("flush without namespace", "unvme_flush_sync(NULL, qp)", -EINVAL, "required", flush_null),
	MCASE("I/O to NSID 9", "unvme_qpair_cmd_sync(qp, {Read, nsid 9}, ...)", INV_NS, "Invalid Namespace or Format", raw_bad_nsid),
	MCASE("I/O opcode 7Fh", "unvme_qpair_cmd_sync(qp, {opc 0x7f}, ...)", INV_OPC, "Invalid Command Opcode", raw_bad_opcode),
	MCASE("admin without command", "unvme_admin(c, NULL, ...)", -EINVAL, "required", admin_null_cmd),
	MCASE("admin length without buffer", "unvme_admin(c, &identify, NULL, 4096, NULL)", -EINVAL, "required", admin_len_no_buf),
	MCASE("admin opcode 7Eh", "unvme_admin(c, {opc 0x7e}, ...)", INV_OPC, "Invalid Command Opcode", admin_bad_opcode),
	MCASE("Identify CNS FEh", "unvme_identify(c, 0xfe, 0, 0, buf)", INV_FIELD, "Invalid Field in Command", identify_bad_cns),
	MCASE("Identify namespace FFFFFFFEh", "unvme_identify(c, 0, 0xfffffffe, 0, buf)", INV_NS, "Invalid Namespace or Format", identify_bad_ns),
	MCASE("log page of 0 bytes", "unvme_get_log_page(c, 2, 0, buf, 0, 0)", -EINVAL, "multiples of 4", log_len_zero),
	MCASE("log page of 6 bytes", "unvme_get_log_page(c, 2, 0, buf, 6, 0)", -EINVAL, "multiples of 4", log_len_odd),
	MCASE("unknown log page", "unvme_get_log_page(c, 0x6f, 0, buf, 512, 0)", INV_LOG, "Invalid Log Page", log_unknown),
	MCASE("log offset past the end", "unvme_get_log_page(c, 2, 0, buf, 512, 1 MiB)", INV_FIELD, "Invalid Field in Command", log_offset_past_end),
	MCASE("unknown feature", "unvme_get_features(c, 0x7d, 0, 0, NULL)", INV_FIELD, "Invalid Field in Command", feature_unknown),
	MCASE("Number of Queues once I/O queues exist", "unvme_set_features(c, 7, 0, 0xffff, ...)", SEQ_ERR, "Command Sequence Error", feature_queues_ffff),
	MCASE("format with LBA format 9", "unvme_format(c, 1, 9, 0)", INV_FMT, "Invalid Format", format_bad_lbaf),
	MCASE("format namespace 77", "unvme_format(c, 77, 0, 0)", INV_NS, "Invalid Namespace or Format", format_bad_ns),
	MCASE("empty firmware image", "unvme_fw_download(c, img, 0, 0)", -EINVAL, "image is empty", fw_empty),
	MCASE("firmware transfer of 3 bytes", "unvme_fw_download(c, img, 4096, 3)", -EINVAL, "multiple of 4", fw_bad_xfer),
	MCASE("replace read-only slot 1", "unvme_fw_commit(c, 1, 0)", INV_FW, "Invalid Firmware Slot", fw_commit_slot1),
	MCASE("abort on SQ 999", "unvme_abort(c, 999, 1, &aborted)", 0, "", abort_bad_sq),
};

int main(int argc, char **argv)
{
	setenv("UNVME_QUIET", "1", 1);
	int rc = unvme_ctrlr_open(DEV, NULL, &c);
	if (rc) {
		fprintf(stderr, "cannot open %s: %s\n", DEV, unvme_errmsg());
		return 2;
	}
	ns = unvme_ctrlr_ns(c, 1);
	kvns = unvme_ctrlr_ns(c, 2);
	dma = unvme_dma_zalloc(8192, 4096);
	if (!ns || !kvns || !dma || unvme_qpair_create(c, NULL, &qp) != 0) {
		fprintf(stderr, "setup failed: %s\n", unvme_errmsg());
		return 2;
	}
	struct matrix m = { "driver API", message, result_name, before, false };
	int r = matrix_run(&m, cases, sizeof(cases) / sizeof(cases[0]), argc, argv);
	unvme_dma_free(dma);
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c);
	return r;
}
