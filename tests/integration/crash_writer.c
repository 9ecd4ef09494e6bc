/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Helper of the crash-consistency test (test_crash.py). Writes numbered blocks to a device,
 * flushes after each, and prints "ACK <lba>" only once the flush has completed. The test kills
 * it with SIGKILL at a random moment and then checks that every acknowledged block reads back
 * intact: what the device acknowledged as durable must survive the host dying.
 *
 *   crash_writer DEVICE NSID FIRST_LBA COUNT ROUND
 *
 * Block contents (one logical block each), which the test recomputes:
 *   bytes 0..7   "CRASHTST"
 *   bytes 8..15  the LBA, little endian
 *   bytes 16..23 ROUND, little endian
 *   the rest     (lba * 7 + round) & 0xff
 * Uses only the public API.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unvme/unvme.h"

static void fill_block(uint8_t *b, uint32_t lba_size, uint64_t lba, uint64_t round)
{
	memset(b, (int)((lba * 7 + round) & 0xff), lba_size);
	memcpy(b, "CRASHTST", 8);
	for (int i = 0; i < 8; i++) {
		b[8 + i] = (uint8_t)(lba >> (8 * i));
		b[16 + i] = (uint8_t)(round >> (8 * i));
	}
}

static int fail(const char *what, int rc)
{
	if (rc > 0)
		fprintf(stderr, "crash_writer: %s: %s\n", what, unvme_status_str(rc, 0));
	else
		fprintf(stderr, "crash_writer: %s: %s\n", what, unvme_errmsg());
	return 1;
}

int main(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: crash_writer DEVICE NSID FIRST_LBA COUNT ROUND\n");
		return 2;
	}
	/* every ACK must reach the test before the next block is written */
	setvbuf(stdout, NULL, _IONBF, 0);
	uint32_t nsid = (uint32_t)strtoul(argv[2], NULL, 0);
	uint64_t first = strtoull(argv[3], NULL, 0);
	uint64_t count = strtoull(argv[4], NULL, 0);
	uint64_t round = strtoull(argv[5], NULL, 0);

	struct unvme_ctrlr *c;
	int rc = unvme_ctrlr_open(argv[1], NULL, &c);
	if (rc)
		return fail("open", rc);
	struct unvme_ns *ns = unvme_ctrlr_ns(c, nsid);
	if (!ns) {
		fprintf(stderr, "crash_writer: no namespace %u\n", nsid);
		return 1;
	}
	struct unvme_qpair *qp;
	rc = unvme_qpair_create(c, NULL, &qp);
	if (rc)
		return fail("queue pair", rc);
	uint32_t lba_size = unvme_ns_lba_size(ns);
	uint8_t *buf = unvme_dma_alloc(lba_size, 4096);
	if (!buf)
		return fail("dma", -1);

	printf("READY %u\n", lba_size);
	for (uint64_t lba = first; lba < first + count; lba++) {
		fill_block(buf, lba_size, lba, round);
		rc = unvme_write_sync(ns, qp, buf, lba, 1);
		if (rc)
			return fail("write", rc);
		rc = unvme_flush_sync(ns, qp);
		if (rc)
			return fail("flush", rc);
		printf("ACK %" PRIu64 "\n", lba);
	}
	printf("DONE\n");
	unvme_dma_free(buf);
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c);
	return 0;
}
