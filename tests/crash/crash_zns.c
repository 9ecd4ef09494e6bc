/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Writer and checker of the crash harness for a zoned namespace (tests/crash/crash.py,
 * component "zns"), through the driver's zoned API.
 *
 *   crash_zns write --dev URI --log FILE --round R --seed S [--qd N] [--vwc 0|1]
 *                   [--flush-every N] [--fua-pct P] [--append-pct P] [--max-nlb N] [--ops N]
 *   crash_zns check --dev URI --log FILE --state FILE [--powerloss]
 *
 * The writer keeps up to qd commands in flight, never two on one zone, so each zone's
 * commands run one after another: Writes at the write pointer and Zone Appends of 1..max-nlb
 * blocks (half of them as large as the zone's room allows: zones fill to their capacity with
 * commands of up to 2 MiB), Finish Zone and Reset Zone (a full zone is always reset), and a
 * Flush every flush-every commands. Every block holds a header (magic, sequence number, LBA
 * for a Write, index in its command, CRC-32C of the block).
 *
 * The checker reports the zones and reads every block of each zone's capacity, and holds
 * them against the log and the state file (what the previous check found: "Z zone filled",
 * "B lba seq", and "T lba crc" for a block a crash tore, which must stay as it is until a
 * command writes it again). A zone's commands are in order, so the zone must be in the state after
 * some prefix of them that contains every promised one (acknowledged; with --powerloss
 * acknowledged and durable: a Flush after it, FUA, the write cache off): its write pointer
 * (or FULL) that prefix's. Under that prefix each block below the write pointer must hold
 * what the prefix's last command over it wrote; it may instead read as zeroes when that
 * command was not promised or a reset came after it (a reset clears a file's zone for good
 * at once), or hold a block of a later command (data that reached the disk while the zone
 * table did not). Every block past the write pointer reads as zeroes. Anything else, a block
 * of an older command (before a reset above all) or nobody's, is a violation.
 */
#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crash_common.h"
#include "unvme/unvme.h"

#define ZBLK_MAGIC "CRASHZNS"
#define NO_LBA UINT64_MAX
#define TORN UINT64_MAX

struct zblk_hdr {
	char magic[8];
	uint64_t seq;
	uint64_t lba;     /* a Write's LBA; NO_LBA for a Zone Append */
	uint32_t idx;     /* block of its command */
	uint32_t crc;     /* CRC-32C of the whole block with this field 0 */
};

static void fill_block(uint8_t *b, uint32_t lba_size, uint64_t seq, uint64_t lba, uint32_t idx)
{
	struct zblk_hdr h = { .seq = seq, .lba = lba, .idx = idx };
	memcpy(h.magic, ZBLK_MAGIC, 8);
	cblock_fill(b, lba_size, &h, sizeof(h), offsetof(struct zblk_hdr, crc),
		    seq * 0x100000001b3ull ^ idx);
}

static int die(const char *what, int rc)
{
	return cdie("crash_zns", what, rc, NVME_CSI_ZNS);
}

struct zdevice {
	struct unvme_ctrlr *c;
	struct unvme_ns *ns;
	struct unvme_qpair *qp;
	uint32_t lba_size;
	uint64_t zsze, zcap;      /* blocks */
	uint32_t nzones;
	uint32_t max_append;      /* blocks */
	struct unvme_zone *zones;
};

static int zdev_up(struct zdevice *d, const char *dev, uint32_t depth)
{
	int rc = unvme_ctrlr_open(dev, NULL, &d->c);
	if (rc)
		return die("open", rc);
	d->ns = NULL;
	for (uint32_t id = unvme_ctrlr_first_nsid(d->c); id && !d->ns; id = unvme_ctrlr_next_nsid(d->c, id))
		if (unvme_ns_csi(unvme_ctrlr_ns(d->c, id)) == NVME_CSI_ZNS)
			d->ns = unvme_ctrlr_ns(d->c, id);
	if (!d->ns)
		return fprintf(stderr, "crash_zns: no zoned namespace\n"), 2;
	struct unvme_zns_info zi;
	unvme_zns_info(d->ns, &zi);
	struct unvme_qpair_opts qo = { .depth = depth };
	if ((rc = unvme_qpair_create(d->c, &qo, &d->qp)) != 0)
		return die("queue pair", rc);
	d->lba_size = unvme_ns_lba_size(d->ns);
	d->zsze = zi.zone_size;
	d->nzones = (uint32_t)zi.nr_zones;
	d->max_append = zi.zasl_bytes / d->lba_size;
	d->zones = calloc(d->nzones, sizeof(*d->zones));
	uint32_t n = d->nzones;
	if (!d->zones || (rc = unvme_zone_report(d->ns, d->qp, 0, NVME_ZRAS_ALL, d->zones, &n, NULL)) != 0 ||
	    n != d->nzones)
		return die("report zones", rc ? rc : -EIO);
	d->zcap = d->zones[0].zcap;
	return 0;
}

/* Blocks written from the zone start as the device reports it (a full zone: its capacity). */
static uint64_t zone_filled(const struct zdevice *d, const struct unvme_zone *z)
{
	if (z->state == NVME_ZS_FULL)
		return d->zcap;
	if (z->state == NVME_ZS_EMPTY || z->wp == UINT64_MAX)
		return 0;
	return z->wp - z->zslba;
}

/* ---- writer ---- */

enum zop { ZOP_WRITE, ZOP_APPEND, ZOP_RESET, ZOP_FINISH, ZOP_FLUSH };

struct zslot {
	bool busy;
	enum zop op;
	uint64_t seq;
	uint32_t zone;
	uint8_t *buf;
	uint8_t *zbusy;
	int *failed;
};

static void on_done(void *arg, const struct nvme_cqe *cpl)
{
	struct zslot *s = arg;
	int st = NVME_STATUS_FROM_CQE(cpl->status);
	if (st) {
		fprintf(stderr, "crash_zns: command %" PRIu64 " (%d) failed: %s\n", s->seq, (int)s->op,
			unvme_status_str(st, NVME_CSI_ZNS));
		*s->failed = 1;
	} else if (s->op == ZOP_FLUSH) {
		ack_log("G %" PRIu64, s->seq);
	} else {
		if (s->op == ZOP_APPEND)
			ack_log("L %" PRIu64 " %" PRIu64, s->seq, unvme_cpl_lba(cpl));
		ack_log("A %" PRIu64, s->seq);
	}
	if (s->op != ZOP_FLUSH)
		s->zbusy[s->zone] = 0;
	s->busy = false;
}

static int cmd_write(struct copt *o)
{
	const char *dev = copt_str(o, "dev", NULL), *log = copt_str(o, "log", NULL);
	if (!dev || !log)
		return fprintf(stderr, "crash_zns write: --dev and --log are required\n"), 2;
	uint64_t round = copt_u64(o, "round", 0), rng = copt_u64(o, "seed", 1);
	uint32_t qd = (uint32_t)copt_u64(o, "qd", 4);
	uint64_t flush_every = copt_u64(o, "flush-every", 16), max_ops = copt_u64(o, "ops", 0);
	uint64_t fua_pct = copt_u64(o, "fua-pct", 5), append_pct = copt_u64(o, "append-pct", 50);
	uint32_t max_nlb = (uint32_t)copt_u64(o, "max-nlb", 512);
	int vwc = (int)copt_u64(o, "vwc", 1);
	if (qd < 1 || qd > 64 || max_nlb < 1)
		return fprintf(stderr, "crash_zns write: bad --qd or --max-nlb\n"), 2;
	ack_log_open(log);
	struct zdevice d;
	int rc = zdev_up(&d, dev, qd + 1);
	if (rc)
		return rc;
	if (qd > d.nzones)
		qd = d.nzones;
	if ((rc = unvme_set_features(d.c, NVME_FEAT_VOLATILE_WC, 0, vwc ? 1 : 0, false, NULL)) != 0)
		return die("set write cache", rc);
	ack_log("V %d", vwc);
	uint64_t *filled = calloc(d.nzones, sizeof(*filled));
	uint8_t *zbusy = calloc(d.nzones, 1);
	struct zslot *slots = calloc(qd, sizeof(*slots));
	int failed = 0;
	if (max_nlb > d.zcap)
		max_nlb = (uint32_t)d.zcap;
	for (uint32_t z = 0; z < d.nzones; z++) {
		filled[z] = zone_filled(&d, &d.zones[z]);
		/* zones the device took away (read only, offline) are left alone */
		zbusy[z] = d.zones[z].state == NVME_ZS_READ_ONLY || d.zones[z].state == NVME_ZS_OFFLINE;
	}
	for (uint32_t i = 0; i < qd; i++) {
		slots[i] = (struct zslot){ .zbusy = zbusy, .failed = &failed,
					   .buf = unvme_dma_alloc((size_t)max_nlb * d.lba_size, 4096) };
		if (!slots[i].buf)
			return die("dma", -ENOMEM);
	}
	printf("READY %u zones of %" PRIu64 " blocks\n", d.nzones, d.zcap);
	fflush(stdout);

	uint64_t seq = round << 32, flush_id = round << 32;
	for (uint64_t op = 1; !max_ops || op <= max_ops; op++) {
		int free_slot = crash_free_slot(d.qp, slots, sizeof(*slots),
						offsetof(struct zslot, busy), qd, &failed);
		if (free_slot < 0)
			return free_slot == -1 ? die("poll", -EIO) : 1;
		struct zslot *s = &slots[free_slot];
		if (flush_every && op % flush_every == 0) {
			*s = (struct zslot){ .busy = true, .op = ZOP_FLUSH, .seq = ++flush_id, .buf = s->buf,
					     .zbusy = zbusy, .failed = &failed };
			ack_log("F %" PRIu64, s->seq);
			if ((rc = unvme_flush(d.ns, d.qp, on_done, s)) != 0)
				return die("flush", rc);
			continue;
		}
		/* a zone with nothing in flight, from a random start */
		uint32_t z = (uint32_t)(crng_next(&rng) % d.nzones), tries = 0;
		while (zbusy[z] && tries++ < d.nzones)
			z = (z + 1) % d.nzones;
		if (zbusy[z]) {
			if (unvme_qpair_poll(d.qp, 0) < 0)
				return die("poll", -EIO);
			continue;
		}
		uint64_t zslba = d.zones[z].zslba, room = d.zcap - filled[z];
		uint64_t dice = crng_next(&rng) % 100;
		s->busy = true;
		s->zone = z;
		s->seq = ++seq;
		zbusy[z] = 1;
		if (room == 0 || dice < 4) {
			s->op = ZOP_RESET;
			ack_log("R %" PRIu64 " %" PRIu64, seq, zslba);
			filled[z] = 0;
			rc = unvme_zone_mgmt_send(d.ns, d.qp, zslba, NVME_ZSA_RESET, false, on_done, s);
		} else if (dice < 8) {
			s->op = ZOP_FINISH;
			ack_log("X %" PRIu64 " %" PRIu64, seq, zslba);
			filled[z] = d.zcap;
			rc = unvme_zone_mgmt_send(d.ns, d.qp, zslba, NVME_ZSA_FINISH, false, on_done, s);
		} else {
			bool append = crng_next(&rng) % 100 < append_pct;
			uint64_t most = room < max_nlb ? room : max_nlb;
			if (append && most > d.max_append)
				most = d.max_append;
			/* half the time as much as fits: full zones, the largest commands */
			uint32_t nlb = crng_next(&rng) % 2 ? (uint32_t)most
							   : 1 + (uint32_t)(crng_next(&rng) % most);
			bool fua = crng_next(&rng) % 100 < fua_pct;
			uint64_t lba = zslba + filled[z];
			for (uint32_t i = 0; i < nlb; i++)
				fill_block(s->buf + (size_t)i * d.lba_size, d.lba_size, seq,
					   append ? NO_LBA : lba + i, i);
			filled[z] += nlb;
			if (append) {
				s->op = ZOP_APPEND;
				ack_log("P %" PRIu64 " %" PRIu64 " %u %d", seq, zslba, nlb, fua);
				rc = unvme_zone_append(d.ns, d.qp, s->buf, zslba, nlb, fua, on_done, s);
			} else {
				s->op = ZOP_WRITE;
				struct nvme_sqe cmd = { .opc = NVME_CMD_WRITE, .nsid = unvme_ns_id(d.ns),
							.cdw10 = (uint32_t)lba, .cdw11 = (uint32_t)(lba >> 32),
							.cdw12 = (nlb - 1) | (fua ? NVME_RW_FUA : 0) };
				ack_log("W %" PRIu64 " %" PRIu64 " %u %d", seq, lba, nlb, fua);
				rc = unvme_qpair_submit(d.qp, &cmd, s->buf, (size_t)nlb * d.lba_size, on_done, s);
			}
		}
		if (rc)
			return die("submit", rc);
		if (qd == 1 || op % 4 == 0)
			unvme_qpair_poll(d.qp, 0);
		if (failed)
			return 1;
	}
	while (unvme_qpair_outstanding(d.qp))
		if (unvme_qpair_poll(d.qp, 0) < 0)
			return die("poll", -EIO);
	printf("DONE\n");
	unvme_ctrlr_close(d.c);
	return failed;
}

/* ---- checker ---- */

/* One command of a zone, where its blocks go in the sequence of all of the zone's commands. */
struct zcmd {
	const struct cop *op;
	uint64_t start;     /* block offset in the zone of its first block (writes, appends) */
	uint64_t after;     /* blocks filled after it */
	bool promised;      /* acknowledged (--powerloss: and durable) */
};

struct zcheck {
	const struct zdevice *d;
	struct cverdict *v;
	const uint64_t *base_seq;   /* per block of the zone: the previous state's, 0: none,
				     * TORN: the torn block whose CRC-32C is base_crc */
	const uint32_t *base_crc;
	uint64_t base_filled;
	struct zcmd *cmds;
	size_t n;
	uint32_t zone;
};

/* What block b holds: 0 zeroes, 1 a valid block of seq *seq at index *idx (*lba for a Write),
 * -1 nobody's (bad magic or checksum). */
static int block_of(uint8_t *p, uint32_t lba_size, uint64_t *seq, uint64_t *lba, uint32_t *idx)
{
	bool zero = true;
	for (uint32_t i = 0; i < lba_size && zero; i++)
		zero = p[i] == 0;
	if (zero)
		return 0;
	struct zblk_hdr h;
	memcpy(&h, p, sizeof(h));
	/* the checksum is over the block with its own field 0; the block is read again later */
	memset(p + offsetof(struct zblk_hdr, crc), 0, 4);
	uint32_t crc = ccrc(p, lba_size);
	memcpy(p + offsetof(struct zblk_hdr, crc), &h.crc, 4);
	if (memcmp(h.magic, ZBLK_MAGIC, 8) || crc != h.crc)
		return -1;
	*seq = h.seq;
	*lba = h.lba;
	*idx = h.idx;
	return 1;
}

/* Whether command c wrote block i (of the zone) as the block found (seq, lba, idx). */
static bool wrote(const struct zcheck *k, const struct zcmd *c, uint64_t i, uint64_t seq,
		  uint64_t lba, uint32_t idx)
{
	const struct cop *op = c->op;
	if ((op->kind != CL_WRITE && op->kind != CL_APPEND) || op->seq != seq || idx >= op->b)
		return false;
	uint64_t zslba = (uint64_t)k->zone * k->d->zsze;
	if (c->start + idx != i)
		return false;
	return op->kind == CL_APPEND ? lba == NO_LBA && (op->lba == UINT64_MAX || op->lba == zslba + c->start)
				     : lba == zslba + i;
}

/* Whether block i, which holds no whole block, is command c's torn: each 512-byte sector
 * zeroes (never written) or c's (a write cut short, or partly lost to a power cut). */
static bool torn_by(const struct zcheck *k, const struct zcmd *c, uint64_t i, const uint8_t *blk)
{
	const struct cop *op = c->op;
	if ((op->kind != CL_WRITE && op->kind != CL_APPEND) || i < c->start || i >= c->start + op->b)
		return false;
	uint32_t lsz = k->d->lba_size;
	uint8_t *want = malloc(lsz);
	if (!want)
		return false;
	uint64_t zslba = (uint64_t)k->zone * k->d->zsze;
	fill_block(want, lsz, op->seq, op->kind == CL_APPEND ? NO_LBA : zslba + i, (uint32_t)(i - c->start));
	bool ok = true;
	for (uint32_t s = 0; s < lsz && ok; s += 512) {
		bool zero = true;
		for (uint32_t b = 0; b < 512 && zero; b++)
			zero = blk[s + b] == 0;
		ok = zero || !memcmp(blk + s, want + s, 512);
	}
	free(want);
	return ok;
}

/* Checks the zone's blocks under the prefix of its first p commands; counts into *lost and
 * *bad (and the verdict when report is set). */
static void check_prefix(struct zcheck *k, size_t p, uint64_t filled, uint8_t *data, bool report,
			 uint64_t *lost, uint64_t *bad, uint64_t *intact, uint64_t *later)
{
	const struct zdevice *d = k->d;
	uint64_t zslba = (uint64_t)k->zone * d->zsze;
	*lost = *bad = *intact = *later = 0;
	for (uint64_t i = 0; i < d->zcap; i++) {
		uint8_t *blk = data + i * d->lba_size;
		uint64_t seq = 0, lba = 0;
		uint32_t idx = 0;
		int what = block_of(blk, d->lba_size, &seq, &lba, &idx);
		/* the last command of the prefix over block i (SIZE_MAX: the previous state's) */
		size_t e = SIZE_MAX;
		bool have = i < k->base_filled && k->base_seq[i];
		for (size_t j = 0; j < p; j++) {
			const struct zcmd *c = &k->cmds[j];
			if (c->op->kind == CL_RESET) {
				e = SIZE_MAX;
				have = false;
			} else if ((c->op->kind == CL_WRITE || c->op->kind == CL_APPEND) &&
				   i >= c->start && i < c->start + c->op->b) {
				e = j;
				have = true;
			}
		}
		size_t from = e == SIZE_MAX ? 0 : e + 1;  /* commands after the expected one */
		bool reset_after = false;
		for (size_t j = from; j < k->n && !reset_after; j++)
			reset_after = k->cmds[j].op->kind == CL_RESET;
		if (i >= filled) {
			if (what != 0) {
				(*bad)++;
				if (report)
					cverdict_violation(k->v, "zone %u block %" PRIu64 ": data past the write "
							   "pointer (%" PRIu64 ")", k->zone, i, filled);
			}
			continue;
		}
		bool expected = false, newer = false;
		if (have && e == SIZE_MAX && k->base_seq[i] == TORN)
			expected = what < 0 && ccrc(blk, d->lba_size) == k->base_crc[i];
		else if (have && what == 1)
			expected = e == SIZE_MAX ? k->base_seq[i] == seq : wrote(k, &k->cmds[e], i, seq, lba, idx);
		for (size_t j = from; j < k->n && what == 1 && !expected && !newer; j++)
			newer = wrote(k, &k->cmds[j], i, seq, lba, idx);
		bool promised = have && (e == SIZE_MAX || k->cmds[e].promised);
		/* a torn block: of the expected command when it was not promised, or of a later one */
		if (what < 0 && have && e != SIZE_MAX && !promised)
			newer = torn_by(k, &k->cmds[e], i, blk);
		for (size_t j = from; j < k->n && what < 0 && !newer; j++)
			newer = torn_by(k, &k->cmds[j], i, blk);
		if (expected || (!have && what == 0)) {
			(*intact)++;
		} else if (newer || (what == 0 && (!promised || reset_after))) {
			(*later)++;
		} else if (what == 0) {
			(*lost)++;
			if (report)
				cverdict_violation(k->v, "zone %u block %" PRIu64 " (LBA %" PRIu64 "): its "
						   "promised data (command %" PRIu64 ") is gone", k->zone, i,
						   zslba + i, e == SIZE_MAX ? k->base_seq[i] : k->cmds[e].op->seq);
		} else {
			(*bad)++;
			if (report)
				cverdict_violation(k->v, "zone %u block %" PRIu64 " (LBA %" PRIu64 "): holds "
						   "%s%" PRIu64 ", expected %s %" PRIu64, k->zone, i, zslba + i,
						   what < 0 ? "nobody's data, " : "command ", what < 0 ? 0 : seq,
						   have ? "command" : "nothing, or", have ? (e == SIZE_MAX ?
						   k->base_seq[i] : k->cmds[e].op->seq) : 0);
		}
	}
}

static void check_zone(struct zcheck *k, const struct unvme_zone *rep, uint8_t *data)
{
	const struct zdevice *d = k->d;
	uint64_t filled = zone_filled(d, rep);
	/* the prefixes that left the write pointer where it is, from the last promised command */
	size_t pmin = 0;
	for (size_t j = 0; j < k->n; j++)
		if (k->cmds[j].promised)
			pmin = j + 1;
	size_t best = SIZE_MAX;
	uint64_t lost = 0, bad = 0, intact = 0, later = 0;
	for (size_t p = k->n + 1; p-- > pmin;) {
		uint64_t f = p ? k->cmds[p - 1].after : k->base_filled;
		if (f != filled)
			continue;
		check_prefix(k, p, filled, data, false, &lost, &bad, &intact, &later);
		if (best == SIZE_MAX)
			best = p;
		if (!lost && !bad) {
			best = p;
			break;
		}
	}
	if (best == SIZE_MAX) {
		k->v->lost++;
		cverdict_violation(k->v, "zone %u: %" PRIu64 " blocks written (state %s), which no "
				   "sequence of its commands holding the %zu promised ones leaves",
				   k->zone, filled, unvme_zone_state_str(rep->state), pmin);
		return;
	}
	check_prefix(k, best, filled, data, lost || bad, &lost, &bad, &intact, &later);
	k->v->lost += lost;
	k->v->corrupt += bad;
	k->v->intact += intact;
	k->v->inflight += later;
	k->v->checked += d->zcap;
}

static int cmd_check(struct copt *o)
{
	const char *dev = copt_str(o, "dev", NULL), *log = copt_str(o, "log", NULL);
	const char *state = copt_str(o, "state", NULL);
	if (!dev || !log || !state)
		return fprintf(stderr, "crash_zns check: --dev, --log and --state are required\n"), 2;
	struct cverdict v = { .component = "zns", .powerloss = copt_flag(o, "powerloss") };
	struct cops ops;
	if (cops_build(log, &ops) != 0)
		return 2;
	struct zdevice d;
	if (zdev_up(&d, dev, 8) != 0) {
		cverdict_violation(&v, "the device does not open (see stderr)");
		return cverdict_print(&v, NULL);
	}
	uint64_t nblocks = (uint64_t)d.nzones * d.zsze;
	uint64_t *base_seq = calloc(nblocks, sizeof(*base_seq));
	uint32_t *base_crc = calloc(nblocks, sizeof(*base_crc));
	uint64_t *base_filled = calloc(d.nzones, sizeof(*base_filled));
	FILE *sf = fopen(state, "r");
	if (sf) {
		char kind;
		uint64_t a, b;
		while (fscanf(sf, " %c %" SCNu64 " %" SCNu64, &kind, &a, &b) == 3) {
			if (kind == 'Z' && a < d.nzones)
				base_filled[a] = b;
			else if (kind == 'B' && a < nblocks)
				base_seq[a] = b;
			else if (kind == 'T' && a < nblocks) {
				base_seq[a] = TORN;
				base_crc[a] = (uint32_t)b;
			}
		}
		fclose(sf);
	}
	struct zcmd *cmds = calloc(ops.n ? ops.n : 1, sizeof(*cmds));
	uint8_t *data = unvme_dma_alloc((size_t)d.zcap * d.lba_size, 4096);
	char tmp[4200];
	FILE *out = cstate_create(state, tmp, sizeof(tmp));
	if (!base_seq || !base_crc || !base_filled || !cmds || !data || !out)
		return die("memory", -ENOMEM);
	uint32_t chunk = unvme_ctrlr_max_xfer(d.c) / d.lba_size;
	for (uint32_t z = 0; z < d.nzones; z++) {
		struct zcheck k = { .d = &d, .v = &v, .base_seq = base_seq + (uint64_t)z * d.zsze,
				    .base_crc = base_crc + (uint64_t)z * d.zsze, .base_filled = base_filled[z], .cmds = cmds, .zone = z };
		uint64_t zslba = (uint64_t)z * d.zsze, f = base_filled[z];
		for (size_t i = 0; i < ops.n; i++) {
			const struct cop *op = &ops.v[i];
			/* a write names its LBA, the others their zone's start */
			if ((op->kind != CL_WRITE && op->kind != CL_APPEND && op->kind != CL_RESET &&
			     op->kind != CL_FINISH) || op->a / d.zsze != z)
				continue;
			struct zcmd *c = &cmds[k.n++];
			*c = (struct zcmd){ .op = op, .start = f,
					    .promised = v.powerloss ? op->durable : op->acked };
			if (op->kind == CL_WRITE && op->a != zslba + f)
				cverdict_violation(&v, "zone %u: the log's write %" PRIu64 " is not at the "
						   "write pointer (a writer bug)", z, op->seq);
			if (op->kind == CL_RESET)
				f = 0;
			else if (op->kind == CL_FINISH)
				f = d.zcap;
			else
				f += op->b;
			c->after = f;
		}
		const struct unvme_zone *rep = &d.zones[z];
		if (rep->state == NVME_ZS_OFFLINE || rep->state == NVME_ZS_READ_ONLY) {
			cverdict_violation(&v, "zone %u went %s", z, unvme_zone_state_str(rep->state));
			continue;
		}
		int rc = 0;
		for (uint64_t at = 0; at < d.zcap && !rc; at += chunk) {
			uint32_t n = d.zcap - at < chunk ? (uint32_t)(d.zcap - at) : chunk;
			rc = unvme_read_sync(d.ns, d.qp, data + at * d.lba_size, zslba + at, n);
		}
		if (rc) {
			cverdict_violation(&v, "zone %u: read failed: %s", z, rc > 0 ?
					   unvme_status_str(rc, NVME_CSI_ZNS) : unvme_errmsg());
			continue;
		}
		check_zone(&k, rep, data);
		uint64_t filled = zone_filled(&d, rep);
		fprintf(out, "Z %u %" PRIu64 "\n", z, filled);
		for (uint64_t i = 0; i < filled; i++) {
			uint64_t seq, lba;
			uint32_t idx;
			int what = block_of(data + i * d.lba_size, d.lba_size, &seq, &lba, &idx);
			if (what == 1)
				fprintf(out, "B %" PRIu64 " %" PRIu64 "\n", zslba + i, seq);
			else if (what < 0)
				fprintf(out, "T %" PRIu64 " %u\n", zslba + i,
					ccrc(data + i * d.lba_size, d.lba_size));
		}
	}
	for (size_t i = 0; i < ops.n; i++) {
		v.ops++;
		v.acked += ops.v[i].acked;
		v.durable += ops.v[i].durable;
	}
	v.flushes = ops.flushes_acked;
	if (cstate_commit(out, tmp, state) != 0)
		return die("state file", -EIO);
	unvme_ctrlr_close(d.c);
	return cverdict_print(&v, NULL);
}

int main(int argc, char **argv)
{
	return crash_main(argc, argv, cmd_write, cmd_check, "crash_zns write|check --dev URI --log FILE ...");
}
