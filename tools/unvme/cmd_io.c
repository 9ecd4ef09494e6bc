/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Block I/O commands: read, write, compare, flush, write-zeroes, deallocate. Commands are
 * built here and sent as they are, so the device, not the host, judges the request: a range
 * past the end gets LBA Out of Range, an unknown namespace Invalid Namespace or Format, just
 * as with nvme-cli on real hardware. Transfers over the controller's limit are split.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define IO_HOST_MAX (1ull << 30) /* data the CLI keeps in memory for one read or write */
#define NLB_MAX 65536u           /* NLB is a 16-bit 0's based field */
#define UNKNOWN_NS_LBA 512u      /* buffer sizing for a namespace the host does not know */

struct io_target {
	struct unvme_ctrlr *ctrlr;
	struct unvme_qpair *qp;
	struct unvme_ns *ns; /* NULL for a namespace that is not active: the device will say so */
	uint32_t lba_size;
	uint8_t csi;
};

/* blocks: the command reads or writes blocks, which a key-value namespace has none of (its
 * command set reuses the opcodes: a Read there is a Retrieve with no key, answered Invalid
 * Key Size). Such a namespace is named as the problem and nothing is sent. */
static int io_open(struct cli_args *a, struct io_target *t, bool blocks)
{
	int rc = cli_open(a, &t->ctrlr);
	if (rc)
		return rc;
	rc = cli_io_qpair(a, t->ctrlr, &t->qp);
	if (rc)
		return rc;
	t->ns = unvme_ctrlr_ns(t->ctrlr, a->nsid);
	t->lba_size = t->ns ? unvme_ns_lba_size(t->ns) : UNKNOWN_NS_LBA;
	t->csi = t->ns ? unvme_ns_csi(t->ns) : NVME_CSI_NVM;
	if (blocks && t->ns && t->csi == NVME_CSI_KV)
		return cli_fail(a->cmd, EXIT_USAGE, "namespace %u of %s is a key-value namespace (the "
				"NVMe KV command set), which has no blocks: %s is a block command; use "
				"the kv-* commands (kv-write, kv-read, ...)", a->nsid,
				cli_echo(a->positional), a->cmd);
	return EXIT_OK;
}

/* Blocks per command: NLB's limit and the controller's transfer limit. */
static uint32_t chunk_blocks(const struct io_target *t, bool moves_data)
{
	uint32_t n = NLB_MAX;
	if (moves_data) {
		uint32_t by_xfer = unvme_ctrlr_max_xfer(t->ctrlr) / t->lba_size;
		if (by_xfer == 0)
			by_xfer = 1;
		if (by_xfer < n)
			n = by_xfer;
	}
	return n;
}

static void rw_cmd(struct nvme_sqe *cmd, uint8_t opc, uint32_t nsid, uint64_t slba, uint32_t nlb)
{
	memset(cmd, 0, sizeof(*cmd));
	cmd->opc = opc;
	cmd->nsid = nsid;
	cmd->cdw10 = (uint32_t)slba;
	cmd->cdw11 = (uint32_t)(slba >> 32);
	cmd->cdw12 = (nlb - 1) & 0xffffu;
}

/* The number of blocks the command covers: -c (0's based, as nvme-cli's and the NLB field:
 * -c 0 is one block), else enough for the data, else 1. */
static int block_count(struct cli_args *a, uint32_t lba_size, uint64_t data_bytes,
		       uint32_t *blocks)
{
	if (cli_given(a, "block-count")) {
		uint64_t n = (uint64_t)a->blocks + 1;
		if (n * lba_size > IO_HOST_MAX)
			return cli_fail(a->cmd, EXIT_USAGE,
					"invalid value '%u' for --block-count (-c): %llu blocks (0's based) "
					"of %u bytes; at most %llu bytes per command line", a->blocks,
					(unsigned long long)n, lba_size, IO_HOST_MAX);
		*blocks = (uint32_t)n;
	} else if (data_bytes) {
		uint64_t n = (data_bytes + lba_size - 1) / lba_size;
		if (n > UINT32_MAX)
			return cli_fail(a->cmd, EXIT_USAGE, "too much data for one command line");
		*blocks = (uint32_t)n;
	} else {
		*blocks = 1;
	}
	if ((uint64_t)*blocks * lba_size > IO_HOST_MAX)
		return cli_fail(a->cmd, EXIT_USAGE, "%u blocks of %u bytes: at most %llu bytes per "
				"command line", *blocks, lba_size, IO_HOST_MAX);
	return EXIT_OK;
}

static void print_done(struct cli_args *a, const char *what, uint64_t slba, uint64_t blocks)
{
	if (a->fmt == UNVME_FMT_JSON) {
		json_object *o = json_object_new_object();
		json_object_object_add(o, "command", json_object_new_string(a->cmd));
		json_object_object_add(o, "result", json_object_new_string(what));
		json_object_object_add(o, "nsid", json_object_new_int64(a->nsid));
		json_object_object_add(o, "slba", json_object_new_int64((int64_t)slba));
		json_object_object_add(o, "blocks", json_object_new_int64((int64_t)blocks));
		cli_json_print(o);
	} else if (blocks) {
		printf("%s: %s (namespace %u, %llu blocks at LBA %llu)\n", a->cmd, what, a->nsid,
		       (unsigned long long)blocks, (unsigned long long)slba);
	} else {
		printf("%s: %s (namespace %u)\n", a->cmd, what, a->nsid);
	}
}

/* Sends opc over [slba, slba+blocks) in chunks, data moving between host and a DMA bounce
 * buffer (to_device: host -> device). Returns an exit code, having printed any failure. */
static int transfer(struct cli_args *a, const struct io_target *t, uint8_t opc, uint8_t *host,
		    uint32_t blocks, bool to_device)
{
	uint32_t per = chunk_blocks(t, true);
	size_t dma_len = (size_t)(per < blocks ? per : blocks) * t->lba_size;
	uint8_t *dma = unvme_dma_alloc(dma_len, 4096);
	if (!dma)
		return cli_result(a->cmd, -ENOMEM, 0);
	int rc = EXIT_OK;
	for (uint32_t done = 0; done < blocks && rc == EXIT_OK;) {
		uint32_t n = blocks - done < per ? blocks - done : per;
		size_t bytes = (size_t)n * t->lba_size;
		uint8_t *h = host + (size_t)done * t->lba_size;
		if (to_device)
			memcpy(dma, h, bytes);
		struct nvme_sqe cmd;
		rw_cmd(&cmd, opc, a->nsid, a->slba + done, n);
		rc = cli_result(a->cmd, unvme_qpair_cmd_sync(t->qp, &cmd, dma, bytes, NULL), t->csi);
		if (rc == EXIT_OK && !to_device)
			memcpy(h, dma, bytes);
		done += n;
	}
	unvme_dma_free(dma);
	return rc;
}

/* The data a write or compare sends: the file (or its first --data-size bytes) or the
 * pattern, zero-padded to whole blocks. */
int cli_write_data(struct cli_args *a, uint32_t lba_size, uint8_t **data, uint32_t *blocks)
{
	void *file = NULL;
	size_t flen = 0;
	if (a->data_file) {
		if (cli_given(a, "pattern"))
			return cli_fail(a->cmd, EXIT_USAGE, "give either --data or --pattern, not both");
		int rc = cli_read_file(a->cmd, a->data_file, IO_HOST_MAX, &file, &flen);
		if (rc)
			return rc;
		if (cli_given(a, "data-size")) {
			if (a->data_size > flen) {
				free(file);
				return cli_fail(a->cmd, EXIT_USAGE,
						"invalid value '%llu' for --data-size (-z): %s holds only "
						"%zu bytes", (unsigned long long)a->data_size,
						a->data_file, flen);
			}
			flen = (size_t)a->data_size;
		}
	} else if (!cli_given(a, "pattern")) {
		return cli_fail(a->cmd, EXIT_USAGE,
				"give the data: --data FILE or --pattern 0xNN");
	}
	uint64_t want = a->data_file ? flen : (cli_given(a, "data-size") ? a->data_size : 0);
	int rc = block_count(a, lba_size, want, blocks);
	if (rc) {
		free(file);
		return rc;
	}
	size_t total = (size_t)*blocks * lba_size;
	if (a->data_file && flen > total) {
		free(file);
		return cli_fail(a->cmd, EXIT_USAGE,
				"%s holds %zu bytes, more than %u blocks of %u bytes (--block-count %u, "
				"0's based): raise --block-count or limit --data-size",
				strcmp(a->data_file, "-") ? a->data_file : "stdin", flen, *blocks,
				lba_size, *blocks - 1);
	}
	uint8_t *buf = calloc(1, total);
	if (!buf) {
		free(file);
		return cli_fail(a->cmd, EXIT_HOST, "out of memory");
	}
	if (a->data_file)
		memcpy(buf, file, flen);
	else
		memset(buf, a->pattern, total);
	free(file);
	*data = buf;
	return EXIT_OK;
}

int cmd_read(struct cli_args *a)
{
	struct io_target t;
	int rc = io_open(a, &t, true);
	if (rc)
		return rc;
	uint32_t blocks = 0;
	rc = block_count(a, t.lba_size, cli_given(a, "data-size") ? a->data_size : 0, &blocks);
	if (rc)
		return rc;
	size_t total = (size_t)blocks * t.lba_size;
	size_t out_len = total;
	if (cli_given(a, "data-size")) {
		if (a->data_size > total)
			return cli_fail(a->cmd, EXIT_USAGE,
					"invalid value '%llu' for --data-size (-z): more than the %zu bytes "
					"of %u blocks", (unsigned long long)a->data_size, total, blocks);
		out_len = (size_t)a->data_size;
	}
	uint8_t *data = calloc(1, total);
	if (!data)
		return cli_fail(a->cmd, EXIT_HOST, "out of memory");
	rc = transfer(a, &t, NVME_CMD_READ, data, blocks, false);
	bool to_stdout = a->raw_binary || (a->data_file && strcmp(a->data_file, "-") == 0);
	if (rc == EXIT_OK) {
		if (to_stdout) {
			/* data only on stdout (a pipe takes it as it is); the status goes to stderr */
			if (fwrite(data, 1, out_len, stdout) != out_len || fflush(stdout) != 0)
				rc = cli_fail(a->cmd, EXIT_HOST, "cannot write stdout: %s", strerror(errno));
			else
				fprintf(stderr, "read: %zu bytes from namespace %u LBA %llu written to stdout\n",
					out_len, a->nsid, (unsigned long long)a->slba);
		} else if (a->data_file) {
			rc = cli_write_file(a->cmd, a->data_file, data, out_len);
			if (rc == EXIT_OK && a->fmt == UNVME_FMT_JSON)
				print_done(a, "success", a->slba, blocks);
			else if (rc == EXIT_OK)
				printf("read: %zu bytes from namespace %u LBA %llu written to %s\n",
				       out_len, a->nsid, (unsigned long long)a->slba, a->data_file);
		} else {
			unvme_print_hex(stdout, data, out_len, a->fmt);
		}
	}
	free(data);
	return rc;
}

static int write_or_compare(struct cli_args *a, uint8_t opc, const char *done_word)
{
	struct io_target t;
	int rc = io_open(a, &t, true);
	if (rc)
		return rc;
	uint8_t *data = NULL;
	uint32_t blocks = 0;
	rc = cli_write_data(a, t.lba_size, &data, &blocks);
	if (rc)
		return rc;
	rc = transfer(a, &t, opc, data, blocks, true);
	free(data);
	if (rc == EXIT_OK)
		print_done(a, done_word, a->slba, blocks);
	return rc;
}

int cmd_write(struct cli_args *a)
{
	return write_or_compare(a, NVME_CMD_WRITE, "success");
}

int cmd_compare(struct cli_args *a)
{
	return write_or_compare(a, NVME_CMD_COMPARE, "data matches");
}

int cmd_flush(struct cli_args *a)
{
	struct io_target t;
	int rc = io_open(a, &t, false);
	if (rc)
		return rc;
	struct nvme_sqe cmd;
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_CMD_FLUSH;
	cmd.nsid = a->nsid;
	rc = cli_result(a->cmd, unvme_qpair_cmd_sync(t.qp, &cmd, NULL, 0, NULL), t.csi);
	if (rc == EXIT_OK)
		print_done(a, "success", 0, 0);
	return rc;
}

/* Commands over a range that move no data (Write Zeroes, Verify), split by NLB's 16 bits;
 * cdw12_flags go into every command (Write Zeroes' DEAC). */
static int range_without_data(struct cli_args *a, uint8_t opc, uint32_t cdw12_flags)
{
	struct io_target t;
	int rc = io_open(a, &t, true);
	if (rc)
		return rc;
	uint32_t blocks = 0;
	rc = block_count(a, t.lba_size, 0, &blocks);
	if (rc)
		return rc;
	for (uint32_t done = 0; done < blocks && rc == EXIT_OK;) {
		uint32_t n = blocks - done < NLB_MAX ? blocks - done : NLB_MAX;
		struct nvme_sqe cmd;
		rw_cmd(&cmd, opc, a->nsid, a->slba + done, n);
		cmd.cdw12 |= cdw12_flags;
		rc = cli_result(a->cmd, unvme_qpair_cmd_sync(t.qp, &cmd, NULL, 0, NULL), t.csi);
		done += n;
	}
	if (rc == EXIT_OK)
		print_done(a, "success", a->slba, blocks);
	return rc;
}

int cmd_write_zeroes(struct cli_args *a)
{
	return range_without_data(a, NVME_CMD_WRITE_ZEROES, a->deac ? NVME_WZ_DEAC : 0);
}

/* Verify (0Ch): the device reads and checks the blocks, no data moves. */
int cmd_verify(struct cli_args *a)
{
	return range_without_data(a, NVME_CMD_VERIFY, 0);
}

int cmd_deallocate(struct cli_args *a)
{
	struct io_target t;
	int rc = io_open(a, &t, true);
	if (rc)
		return rc;
	uint32_t blocks = 0;
	rc = block_count(a, t.lba_size, 0, &blocks);
	if (rc)
		return rc;
	struct nvme_dsm_range *range = unvme_dma_zalloc(4096, 4096);
	if (!range)
		return cli_result(a->cmd, -ENOMEM, 0);
	range->nlb = blocks;
	range->slba = a->slba;
	struct nvme_sqe cmd;
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_CMD_DSM;
	cmd.nsid = a->nsid;
	cmd.cdw10 = 0; /* one range (0's based) */
	cmd.cdw11 = NVME_DSM_ATTR_AD;
	rc = cli_result(a->cmd, unvme_qpair_cmd_sync(t.qp, &cmd, range, sizeof(*range), NULL), t.csi);
	unvme_dma_free(range);
	if (rc == EXIT_OK)
		print_done(a, "success", a->slba, blocks);
	return rc;
}
