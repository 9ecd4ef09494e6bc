/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Writer and checker of the crash harness for a block namespace (tests/crash/crash.py,
 * component "block"), through the public driver API.
 *
 *   crash_block write --dev URI --log FILE --round R --seed S [--qd N] [--vwc 0|1]
 *                     [--flush-every N] [--fua-pct P] [--zero-pct P] [--max-nlb N] [--ops N]
 *                     [--no-close]   (after --ops: end as if killed, without closing)
 *   crash_block check --dev URI --log FILE --state FILE [--powerloss] [--damaged A-B,...]
 *
 * The writer writes records of 1..max-nlb blocks at random places, never two at once over
 * the same block (so each block has at most one write in flight), sometimes with FUA,
 * sometimes Write Zeroes, and a Flush every flush-every operations; with --qd > 1 it keeps
 * that many commands in flight. Every block of a record holds a header (magic, sequence
 * number, LBA, CRC-32C of the block) and bytes derived from both.
 *
 * The checker reads every block back and holds it against the log and the state file (what
 * the previous check found: "lba seq" per written block). For each block the newest
 * operation whose promise covers it (acknowledged; with --powerloss acknowledged and durable)
 * or, without one, the previous state, must be there, or an operation issued after it (it
 * may have reached the medium before the crash). Anything else is a violation: an older
 * version (lost write), a checksum mismatch or a block nobody wrote there (corrupt). Blocks
 * in --damaged ranges (the harness damaged the file) may be lost or detected as corrupt.
 * It then writes the new state file.
 */
#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "crash_common.h"
#include "unvme/unvme.h"

#define BLK_MAGIC "CRASHBLK"

struct blk_hdr {
	char magic[8];
	uint64_t seq;
	uint64_t lba;
	uint32_t nlb;
	uint32_t idx;
	uint32_t crc;     /* CRC-32C of the whole block with this field 0 */
	uint32_t rsvd;
};

static void fill_block(uint8_t *b, uint32_t lba_size, uint64_t seq, uint64_t lba, uint32_t nlb,
		       uint32_t idx)
{
	struct blk_hdr h = { .seq = seq, .lba = lba, .nlb = nlb, .idx = idx };
	memcpy(h.magic, BLK_MAGIC, 8);
	cblock_fill(b, lba_size, &h, sizeof(h), offsetof(struct blk_hdr, crc),
		    seq * 0x100000001b3ull ^ lba);
}

static int die(const char *what, int rc)
{
	return cdie("crash_block", what, rc, 0);
}

/* ---- writer ---- */

struct wr_slot {
	bool busy;
	bool flush;
	uint64_t seq;     /* or the flush id */
	uint64_t slba;
	uint32_t nlb;
	uint8_t *buf;
	struct writer *w;
};

struct writer {
	struct unvme_ns *ns;
	struct unvme_qpair *qp;
	uint32_t lba_size;
	uint64_t nblocks;
	uint8_t *busy;      /* per block: a write is in flight over it */
	int failed;
};

static void on_done(void *arg, const struct nvme_cqe *cpl)
{
	struct wr_slot *s = arg;
	int st = NVME_STATUS_FROM_CQE(cpl->status);
	if (st) {
		fprintf(stderr, "crash_block: %s %" PRIu64 " failed: %s\n", s->flush ? "flush" : "write",
			s->seq, unvme_status_str(st, 0));
		s->w->failed = 1;
	} else if (s->flush) {
		ack_log("G %" PRIu64, s->seq);
	} else {
		ack_log("A %" PRIu64, s->seq);
	}
	if (!s->flush)
		memset(s->w->busy + s->slba, 0, s->nlb);
	s->busy = false;
}

static bool range_free(const struct writer *w, uint64_t slba, uint32_t nlb)
{
	for (uint32_t i = 0; i < nlb; i++)
		if (w->busy[slba + i])
			return false;
	return true;
}

static int submit(struct writer *w, const struct nvme_sqe *cmd, void *buf, size_t len,
		  struct wr_slot *s)
{
	int rc;
	while ((rc = unvme_qpair_submit(w->qp, cmd, buf, len, on_done, s)) == -EAGAIN)
		if (unvme_qpair_poll(w->qp, 0) < 0)
			return -EIO;
	return rc;
}

static int cmd_write(struct copt *o)
{
	const char *dev = copt_str(o, "dev", NULL);
	const char *log = copt_str(o, "log", NULL);
	if (!dev || !log)
		return fprintf(stderr, "crash_block write: --dev and --log are required\n"), 2;
	uint64_t round = copt_u64(o, "round", 0), rng = copt_u64(o, "seed", 1);
	uint32_t qd = (uint32_t)copt_u64(o, "qd", 1);
	uint64_t flush_every = copt_u64(o, "flush-every", 8);
	uint64_t fua_pct = copt_u64(o, "fua-pct", 5), zero_pct = copt_u64(o, "zero-pct", 5);
	uint32_t max_nlb = (uint32_t)copt_u64(o, "max-nlb", 8);
	uint64_t max_ops = copt_u64(o, "ops", 0);
	int vwc = (int)copt_u64(o, "vwc", 1);
	if (qd < 1 || qd > 64 || max_nlb < 1)
		return fprintf(stderr, "crash_block write: bad --qd or --max-nlb\n"), 2;

	ack_log_open(log);
	struct unvme_ctrlr *c;
	int rc = unvme_ctrlr_open(dev, NULL, &c);
	if (rc)
		return die("open", rc);
	struct unvme_ns *ns = unvme_ctrlr_ns(c, 1);
	if (!ns)
		return fprintf(stderr, "crash_block: no namespace 1\n"), 2;
	rc = unvme_set_features(c, NVME_FEAT_VOLATILE_WC, 0, vwc ? 1 : 0, false, NULL);
	if (rc)
		return die("set write cache", rc);
	ack_log("V %d", vwc);
	struct unvme_qpair_opts qo = { .depth = qd + 1 };
	struct writer w = { .ns = ns, .lba_size = unvme_ns_lba_size(ns), .nblocks = unvme_ns_nlbas(ns) };
	rc = unvme_qpair_create(c, &qo, &w.qp);
	if (rc)
		return die("queue pair", rc);
	if (max_nlb > w.nblocks)
		max_nlb = (uint32_t)w.nblocks;
	w.busy = calloc(w.nblocks, 1);
	struct wr_slot *slots = calloc(qd, sizeof(*slots));
	for (uint32_t i = 0; i < qd; i++) {
		slots[i].w = &w;
		slots[i].buf = unvme_dma_alloc((size_t)max_nlb * w.lba_size, 4096);
		if (!slots[i].buf)
			return die("dma", -ENOMEM);
	}
	printf("READY %u %" PRIu64 "\n", w.lba_size, w.nblocks);
	fflush(stdout);

	uint64_t seq = round << 32, flush_id = round << 32;
	for (uint64_t op = 1; !max_ops || op <= max_ops; op++) {
		int free_slot = crash_free_slot(w.qp, slots, sizeof(*slots),
						offsetof(struct wr_slot, busy), qd, &w.failed);
		if (free_slot < 0)
			return free_slot == -1 ? die("poll", -EIO) : 1;
		struct wr_slot *s = &slots[free_slot];
		struct nvme_sqe cmd = { .nsid = unvme_ns_id(ns) };
		s->busy = true;
		if (flush_every && op % flush_every == 0) {
			s->flush = true;
			s->seq = ++flush_id;
			cmd.opc = NVME_CMD_FLUSH;
			ack_log("F %" PRIu64, s->seq);
			rc = submit(&w, &cmd, NULL, 0, s);
		} else {
			uint32_t nlb = 1 + (uint32_t)(crng_next(&rng) % max_nlb);
			uint64_t slba;
			do
				slba = crng_next(&rng) % (w.nblocks - nlb + 1);
			while (!range_free(&w, slba, nlb));
			memset(w.busy + slba, 1, nlb);
			s->flush = false;
			s->seq = ++seq;
			s->slba = slba;
			s->nlb = nlb;
			cmd.cdw10 = (uint32_t)slba;
			cmd.cdw11 = (uint32_t)(slba >> 32);
			cmd.cdw12 = nlb - 1;
			uint64_t dice = crng_next(&rng) % 100;
			if (dice < zero_pct) {
				cmd.opc = NVME_CMD_WRITE_ZEROES;
				ack_log("Z %" PRIu64 " %" PRIu64 " %u", seq, slba, nlb);
				rc = submit(&w, &cmd, NULL, 0, s);
			} else {
				bool fua = dice < zero_pct + fua_pct;
				for (uint32_t i = 0; i < nlb; i++)
					fill_block(s->buf + (size_t)i * w.lba_size, w.lba_size, seq, slba + i,
						   nlb, i);
				cmd.opc = NVME_CMD_WRITE;
				if (fua)
					cmd.cdw12 |= NVME_RW_FUA;
				ack_log("W %" PRIu64 " %" PRIu64 " %u %d", seq, slba, nlb, fua);
				rc = submit(&w, &cmd, s->buf, (size_t)nlb * w.lba_size, s);
			}
		}
		if (rc)
			return die("submit", rc);
		if (qd == 1 || op % 4 == 0)
			unvme_qpair_poll(w.qp, 0);
		if (w.failed)
			return 1;
	}
	while (unvme_qpair_outstanding(w.qp))
		if (unvme_qpair_poll(w.qp, 0) < 0)
			return die("poll", -EIO);
	printf("DONE\n");
	fflush(stdout);
	if (copt_flag(o, "no-close"))
		_exit(w.failed); /* as if killed right after the last acknowledgement */
	unvme_ctrlr_close(c);
	return w.failed;
}

/* ---- checker ---- */

struct range {
	uint64_t lo, hi; /* blocks [lo, hi) */
};

static bool in_ranges(const struct range *r, size_t n, uint64_t lba)
{
	for (size_t i = 0; i < n; i++)
		if (lba >= r[i].lo && lba < r[i].hi)
			return true;
	return false;
}

static size_t parse_ranges(const char *s, struct range **out)
{
	size_t n = 0, cap = 8;
	struct range *r = malloc(cap * sizeof(*r));
	while (s && *s) {
		char *end;
		uint64_t lo = strtoull(s, &end, 0), hi = lo + 1;
		if (*end == '-')
			hi = strtoull(end + 1, &end, 0);
		if (n == cap)
			r = realloc(r, (cap *= 2) * sizeof(*r));
		r[n++] = (struct range){ lo, hi };
		s = *end == ',' ? end + 1 : end + strlen(end);
	}
	*out = r;
	return n;
}

/* What a block may hold: the version the promise covers (the sequence number of its
 * content, 0 for zeroes) or, from the log, any operation over it issued after that one. */
struct blk_expect {
	uint64_t base;        /* the newest version the promise covers (or the previous state) */
	uint64_t base_op;     /* the operation that wrote it (a Write Zeroes leaves base 0) */
	bool later_zero;      /* a Write Zeroes over it was issued after base_op */
	bool later;           /* any operation over it was issued after base_op */
};

/* Whether content found (a version, or 0 for zeroes) at lba was written by an operation of
 * this round issued after the promised one. */
static bool later_version(struct cops *ops, const struct blk_expect *e, uint64_t lba,
			  uint64_t found)
{
	if (!e->later)
		return false;
	if (!found)
		return e->later_zero;
	const struct cop *op = cops_find(ops, found);
	return op && op->kind == CL_WRITE && op->seq > e->base_op && lba >= op->a &&
	       lba < op->a + op->b;
}

static int cmd_check(struct copt *o)
{
	const char *dev = copt_str(o, "dev", NULL), *log = copt_str(o, "log", NULL);
	const char *state = copt_str(o, "state", NULL);
	if (!dev || !log || !state)
		return fprintf(stderr, "crash_block check: --dev, --log and --state are required\n"), 2;
	struct cverdict v = { .component = "block", .powerloss = copt_flag(o, "powerloss") };
	struct range *dmg;
	size_t ndmg = parse_ranges(copt_str(o, "damaged", NULL), &dmg);
	struct cops ops;
	if (cops_build(log, &ops) != 0)
		return 2;

	struct unvme_ctrlr *c;
	int rc = unvme_ctrlr_open(dev, NULL, &c);
	if (rc) {
		cverdict_violation(&v, "the device does not open: %s", rc > 0 ?
				   unvme_status_str(rc, 0) : unvme_errmsg());
		return cverdict_print(&v, NULL);
	}
	struct unvme_ns *ns = unvme_ctrlr_ns(c, 1);
	struct unvme_qpair *qp;
	if (!ns || unvme_qpair_create(c, NULL, &qp) != 0)
		return die("namespace or queue pair", -EIO);
	uint32_t lba_size = unvme_ns_lba_size(ns);
	uint64_t nblocks = unvme_ns_nlbas(ns);
	uint64_t want_blocks = copt_u64(o, "blocks", nblocks);

	/* the previous state, then this round's operations in order */
	struct blk_expect *ex = calloc(want_blocks, sizeof(*ex));
	FILE *sf = fopen(state, "r");
	if (sf) {
		uint64_t lba, seq;
		while (fscanf(sf, "%" SCNu64 " %" SCNu64, &lba, &seq) == 2)
			if (lba < want_blocks)
				ex[lba].base = ex[lba].base_op = seq;
		fclose(sf);
	}
	for (size_t i = 0; i < ops.n; i++) {
		struct cop *op = &ops.v[i];
		v.ops++;
		v.acked += op->acked;
		v.durable += op->durable;
		bool promised = v.powerloss ? op->durable : op->acked;
		uint64_t content = op->kind == CL_ZERO ? 0 : op->seq;
		for (uint64_t b = op->a; b < op->a + op->b && b < want_blocks; b++) {
			struct blk_expect *e = &ex[b];
			if (promised) {
				e->base = content;
				e->base_op = op->seq;
				e->later = e->later_zero = false;
			} else {
				e->later = true;
				e->later_zero |= op->kind == CL_ZERO;
			}
		}
	}
	v.flushes = ops.flushes_acked;

	/* read everything back, 64 blocks at a time */
	const uint32_t chunk = 64;
	uint8_t *buf = unvme_dma_alloc((size_t)chunk * lba_size, 4096);
	uint8_t *zero = calloc(1, lba_size);
	char tmp[4096];
	FILE *out = cstate_create(state, tmp, sizeof(tmp));
	if (!buf || !zero || !out)
		return die("memory", -ENOMEM);
	for (uint64_t lba = 0; lba < want_blocks; lba += chunk) {
		uint32_t n = want_blocks - lba < chunk ? (uint32_t)(want_blocks - lba) : chunk;
		uint32_t readable = lba >= nblocks ? 0 : (nblocks - lba < n ? (uint32_t)(nblocks - lba) : n);
		if (readable && (rc = unvme_read_sync(ns, qp, buf, lba, readable)) != 0)
			return die("read", rc);
		for (uint32_t i = 0; i < n; i++) {
			uint64_t b = lba + i;
			const uint8_t *blk = buf + (size_t)i * lba_size;
			struct blk_expect *e = &ex[b];
			bool damaged = in_ranges(dmg, ndmg, b);
			v.checked++;
			if (i >= readable) {
				/* the namespace shrank (a truncated file): the block is gone */
				if (damaged || (e->base == 0 && !e->later))
					v.damaged += damaged;
				else
					cverdict_violation(&v, "LBA %" PRIu64 " is beyond the namespace "
							   "(%" PRIu64 " blocks)", b, nblocks);
				continue;
			}
			uint64_t found;
			if (!memcmp(blk, zero, lba_size)) {
				found = 0;
			} else {
				struct blk_hdr h;
				memcpy(&h, blk, sizeof(h));
				uint32_t crc = h.crc;
				memset((uint8_t *)blk + offsetof(struct blk_hdr, crc), 0, 4);
				bool ok = !memcmp(h.magic, BLK_MAGIC, 8) && crc == ccrc(blk, lba_size) &&
					  h.lba == b;
				if (!ok) {
					if (damaged) {
						v.damaged++;
					} else {
						v.corrupt++;
						cverdict_violation(&v, "LBA %" PRIu64 ": corrupt block (bad "
								   "magic, checksum or LBA)", b);
					}
					continue;
				}
				found = h.seq;
			}
			bool later = found != e->base && later_version(&ops, e, b, found);
			bool ok = found == e->base || later;
			if (ok) {
				if (later)
					v.inflight++;
				else
					v.intact++;
				if (found)
					fprintf(out, "%" PRIu64 " %" PRIu64 "\n", b, found);
			} else if (damaged) {
				v.damaged++;
			} else if (found < e->base_op || found == 0) {
				v.lost++;
				cverdict_violation(&v, "LBA %" PRIu64 ": acknowledged %s %" PRIu64
						   " lost, found %s %" PRIu64, b, e->base ? "write" :
						   "write zeroes", e->base_op, found ? "the older write" :
						   "zeroes", found);
			} else {
				v.corrupt++;
				cverdict_violation(&v, "LBA %" PRIu64 ": version %" PRIu64 " was never "
						   "written there (expected %" PRIu64 ")", b, found, e->base);
			}
		}
	}
	if (cstate_commit(out, tmp, state) != 0)
		return die("state file", -EIO);
	unvme_dma_free(buf);
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c);
	return cverdict_print(&v, NULL);
}

int main(int argc, char **argv)
{
	return crash_main(argc, argv, cmd_write, cmd_check, "crash_block write|check --dev URI --log FILE ...");
}
