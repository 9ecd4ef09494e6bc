/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Random SQEs through the passthru API (unvme_admin and unvme_qpair_cmd_sync) against an
 * emulated controller with an NVM and a KV namespace: random opcodes (steered towards the
 * implemented ones, the vendor fault injection included), flags, NSIDs and command dwords.
 * Whatever the device answers, the driver must hand every tracker back: after each command
 * returns, nothing is outstanding on the admin queue or the I/O queue, admin commands keep
 * working (no "admin queue full"), and I/O keeps moving data correctly. Commands that never
 * complete (Asynchronous Event Requests, dropped I/O, an I/O queue deleted under the driver)
 * are recovered by the driver's timeouts: Abort, then a fenced queue or a controller reset.
 *
 * UNVME_FUZZ_CMDS sets the number of commands (default 20000, a few seconds; `make
 * fuzz-passthru` runs 10 million) and UNVME_FUZZ_SEED the seed (default: the time, printed).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/driver/ctrlr.h"
#include "unvme/unvme.h"
#include "test_util.h"

#define DEV "emu://fuzz?ns=mem:16M:512&ns=kv:16M"
#define BUF (2u << 20)

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static uint32_t pick(const uint32_t *v, size_t n)
{
	return v[rnd() % n];
}

/* A dword that is often small or a boundary, sometimes anything. */
static uint32_t dword(void)
{
	static const uint32_t edge[] = { 0, 1, 2, 3, 7, 8, 15, 0xff, 0x100, 0xffff, 0x10000,
					 0x7fffffff, 0x80000000u, 0xfffffffeu, 0xffffffffu };
	switch (rnd() % 4) {
	case 0:
		return (uint32_t)(rnd() % 16);
	case 1:
		return pick(edge, sizeof(edge) / sizeof(edge[0]));
	default:
		return (uint32_t)rnd();
	}
}

static void random_admin(struct nvme_sqe *c)
{
	static const uint32_t ops[] = {
		NVME_ADM_DELETE_SQ, NVME_ADM_CREATE_SQ, NVME_ADM_GET_LOG_PAGE, NVME_ADM_DELETE_CQ,
		NVME_ADM_CREATE_CQ, NVME_ADM_IDENTIFY, NVME_ADM_ABORT, NVME_ADM_SET_FEATURES,
		NVME_ADM_GET_FEATURES, NVME_ADM_FW_COMMIT, NVME_ADM_FW_DOWNLOAD,
		NVME_ADM_FORMAT_NVM, NVME_ADM_EMU_FAULT, NVME_ADM_KEEP_ALIVE, NVME_ADM_NS_MGMT,
	};
	/* A sync AER, which completes only on an event, and a dropped I/O command each cost a
	 * timeout: rare enough that the long run stays in minutes. */
	uint64_t r = rnd() % 10000;
	if (r < 2)
		c->opc = NVME_ADM_ASYNC_EVENT;
	else if (r < 9000)
		c->opc = (uint8_t)pick(ops, sizeof(ops) / sizeof(ops[0]));
	else
		c->opc = (uint8_t)rnd();
	if (c->opc == NVME_ADM_EMU_FAULT) {
		/* fault injection, kept to small counts: every dropped command costs a timeout,
		 * and a fatal status a controller reset */
		static const uint32_t faults[] = { NVME_EMU_FAULT_NONE, NVME_EMU_FAULT_MEDIA_ERROR,
						   NVME_EMU_FAULT_SWALLOW + 1 };
		uint64_t f = rnd() % 128;
		c->cdw10 = f == 0 ? NVME_EMU_FAULT_FATAL
			 : f == 1 ? NVME_EMU_FAULT_DROP
			 : f == 2 ? NVME_EMU_FAULT_SWALLOW : pick(faults, 3);
		c->cdw11 = (uint32_t)(rnd() % 3);
	}
}

static void random_io(struct nvme_sqe *c)
{
	static const uint32_t ops[] = {
		NVME_CMD_FLUSH, NVME_CMD_WRITE, NVME_CMD_READ, NVME_CMD_WRITE_UNCOR,
		NVME_CMD_COMPARE, NVME_CMD_WRITE_ZEROES, NVME_CMD_DSM, NVME_CMD_VERIFY,
		0x81, 0x90, 0xa0, 0xa1, 0xb1, 0xb2, 0xb3, /* KV vendor */
		0x01, 0x02, 0x10, 0x14, 0x18,             /* KV standard (on the KV NSID) */
	};
	c->opc = rnd() % 10 ? (uint8_t)pick(ops, sizeof(ops) / sizeof(ops[0])) : (uint8_t)rnd();
}

static void random_sqe(struct nvme_sqe *c, bool admin)
{
	uint32_t *w = (uint32_t *)c;
	for (size_t i = 0; i < sizeof(*c) / 4; i++)
		w[i] = dword();
	c->flags = rnd() % 16 ? 0 : (uint8_t)rnd();
	static const uint32_t nsids[] = { 0, 1, 1, 2, 2, 3, 0xffffffffu };
	c->nsid = rnd() % 8 ? pick(nsids, sizeof(nsids) / sizeof(nsids[0])) : (uint32_t)rnd();
	if (admin)
		random_admin(c);
	else
		random_io(c);
	/* Delete our own I/O queue (1) behind the driver's back now and then: its next command
	 * times out, is not found by Abort, and the queue is fenced and created again */
	if (admin && (c->opc == NVME_ADM_DELETE_SQ || c->opc == NVME_ADM_DELETE_CQ))
		c->cdw10 = rnd() % 64 ? 2 + (uint32_t)(rnd() % 8) : 1;
}

struct tally {
	unsigned long ok, status, timedout, failed, other, resets;
};

/* Clears faults, reads the namespaces again, then writes and reads back one block. */
static int check_io(struct unvme_ctrlr *c, struct unvme_qpair *qp, uint8_t *buf, unsigned seq)
{
	struct nvme_sqe clear = { .opc = NVME_ADM_EMU_FAULT, .cdw10 = NVME_EMU_FAULT_NONE };
	int rc = unvme_admin(c, &clear, NULL, 0, NULL);
	if (rc)
		return rc;
	rc = unvme_ctrlr_refresh_ns(c);
	if (rc)
		return rc;
	struct unvme_ns *ns = unvme_ctrlr_ns(c, 1);
	if (!ns)
		return -ENODEV;
	uint32_t bs = unvme_ns_lba_size(ns);
	for (uint32_t i = 0; i < bs; i++)
		buf[i] = (uint8_t)(seq * 131 + i);
	/* a command dropped just before the clear may still take one timeout: retry aborts */
	for (int attempt = 0; attempt < 3; attempt++) {
		rc = unvme_write_sync(ns, qp, buf, 7, 1);
		if (rc == 0)
			break;
	}
	if (rc)
		return rc;
	memset(buf, 0, bs);
	rc = unvme_read_sync(ns, qp, buf, 7, 1);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < bs; i++)
		if (buf[i] != (uint8_t)(seq * 131 + i))
			return -EILSEQ;
	return 0;
}

static void test_random_sqes(void)
{
	const char *env = getenv("UNVME_FUZZ_CMDS");
	unsigned long cmds = env ? strtoul(env, NULL, 10) : 20000;
	env = getenv("UNVME_FUZZ_SEED");
	rng_state = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL);
	if (!rng_state)
		rng_state = 1;
	printf("  seed %llu, %lu commands (UNVME_FUZZ_SEED / UNVME_FUZZ_CMDS)\n",
	       (unsigned long long)rng_state, cmds);
	fflush(stdout);

	struct unvme_ctrlr_opts o;
	unvme_ctrlr_opts_default(&o);
	o.admin_timeout_ms = 20;
	struct unvme_ctrlr *c = NULL;
	REQUIRE(unvme_ctrlr_open(DEV, &o, &c) == 0);
	struct unvme_qpair_opts qo = { .depth = 32, .timeout_ms = 20 };
	struct unvme_qpair *qp = NULL;
	REQUIRE(unvme_qpair_create(c, &qo, &qp) == 0);
	uint8_t *buf = unvme_dma_zalloc(BUF, 4096);
	uint8_t *admin_buf = malloc(BUF);
	REQUIRE(buf && admin_buf);

	struct tally t = { 0 };
	unsigned leaks = 0, broken = 0;
	for (unsigned long i = 0; i < cmds; i++) {
		bool admin = rnd() % 5 < 2;
		struct nvme_sqe cmd;
		random_sqe(&cmd, admin);
		struct nvme_cqe cpl;
		int rc;
		if (admin) {
			size_t len = rnd() % 2 ? 4096 : 0;
			rc = unvme_admin(c, &cmd, len ? admin_buf : NULL, len, &cpl);
		} else {
			rc = unvme_qpair_cmd_sync(qp, &cmd, buf, BUF, &cpl);
		}
		if (rc == 0)
			t.ok++;
		else if (rc > 0)
			t.status++;
		else if (rc == -ETIMEDOUT)
			t.timedout++;
		else if (rc == -EIO)
			t.failed++;
		else
			t.other++;
		if (unvme_ctrlr_is_failed(c) && !c->resetting) {
			/* an application's way back from a controller that stays failed */
			t.resets++;
			(void)unvme_ctrlr_reset(c);
		}
		/* every tracker is back once the call returned */
		uint32_t aout = unvme_qpair_outstanding(c->admin);
		uint32_t qout = unvme_qpair_outstanding(qp);
		if (aout || qout) {
			if (leaks++ < 10)
				fprintf(stderr, "  command %lu (%s opcode 0x%02x -> %d): %u admin and "
					"%u I/O commands still outstanding\n", i, admin ? "admin" : "I/O",
					cmd.opc, rc, aout, qout);
		}
		if ((i + 1) % 5000 == 0 || i + 1 == cmds) {
			uint8_t id[4096];
			int irc = unvme_identify(c, NVME_CNS_CTRL, 0, 0, id);
			int io = check_io(c, qp, buf, (unsigned)i);
			if (irc || io) {
				if (broken++ < 10)
					fprintf(stderr, "  after %lu commands: identify %d, I/O %d (%s)\n",
						i + 1, irc, io, unvme_errmsg());
			}
		}
	}
	printf("  %lu ok, %lu NVMe status, %lu timed out, %lu failed (-EIO), %lu other, "
	       "%lu manual resets, %u automatic resets\n", t.ok, t.status, t.timedout, t.failed,
	       t.other, t.resets, unvme_ctrlr_reset_count(c));
	CHECK_EQ(leaks, 0);
	CHECK_EQ(broken, 0);
	unvme_dma_free(buf);
	free(admin_buf);
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c);
}

TEST_MAIN(TEST(test_random_sqes))
