/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * unvme perf on a zoned namespace: the two ways a host writes zones.
 *
 *  zone-write   every I/O slot owns its zones and writes each one sequentially at its write
 *               pointer, one write in flight per zone (queue depth = zones written at once,
 *               as NVMe does not keep writes of one queue in order). Slot k of thread t of
 *               T threads at depth Q writes zones k + tQ, k + tQ + TQ, ...
 *  zone-append  every thread streams Zone Appends into one zone at a time at full queue
 *               depth; the device picks each LBA, which is checked to lie in the zone. Thread
 *               t uses zones t, t + T, t + 2T, ...
 *
 * A zone that cannot take another I/O is reset (Zone Management Send, by the slot that
 * notices, once no append is in flight to it) and used again on the next lap, so runs of any
 * length keep writing: the measured rate includes the resets, as a log-structured host pays
 * them. Resets are not counted as I/Os. Zone workloads take one zoned namespace.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perf.h"

enum zone_state { ZONE_READY, ZONE_IN_USE, ZONE_NEED_RESET, ZONE_RESETTING };

/* Zone Append state of one thread (its one target). */
struct perf_zstream {
	uint64_t first, stride, count; /* owned zones: first + i * stride, i < count */
	uint64_t cur;                  /* index i of the zone being appended to */
	uint64_t reserved;             /* blocks handed out in it */
	uint32_t *inflight;            /* per owned zone */
	uint8_t *state;                /* per owned zone, enum zone_state */
	uint64_t *fifo;                /* owned zones waiting for their reset, oldest first */
	uint64_t fifo_head, fifo_len;
	struct perf_slot **parked;     /* slots waiting for a zone to be reset */
	uint32_t nparked;
};

static const struct perf_target *target(const struct perf_thread *t)
{
	return &t->cfg->targets[0];
}

int perf_zone_prepare(struct cli_args *a, struct perf_config *cfg)
{
	if (cfg->ntargets != 1)
		return cli_fail(a->cmd, EXIT_USAGE,
				"zone workloads take one zoned namespace (%u selected): pick it with -n",
				cfg->ntargets);
	struct perf_target *tg = &cfg->targets[0];
	struct unvme_zns_info zi;
	if (unvme_zns_info(tg->ns, &zi) != 0)
		return cli_fail(a->cmd, EXIT_USAGE, "--workload %s: namespace %u of %s is not zoned",
				cfg->workload_name, tg->nsid, tg->devid);
	if (cfg->verify)
		return cli_fail(a->cmd, EXIT_USAGE, "--verify needs reads: zone workloads only write "
				"(zone-append checks every LBA the device returns anyway)");
	struct unvme_qpair *qp;
	int rc = unvme_qpair_create(cfg->ctrlrs[tg->ctrlr], NULL, &qp);
	if (rc)
		return cli_fail(a->cmd, EXIT_HOST, "cannot create a queue pair: %s", unvme_errmsg());
	/* zone capacity: the first zone's (fixed capacity: ZOC bit 0 is 0 on every device we
	 * know; a variable one would show in later descriptors) */
	struct unvme_zone z;
	uint32_t nr = 1;
	rc = unvme_zone_report(tg->ns, qp, 0, NVME_ZRAS_ALL, &z, &nr, NULL);
	if (rc == 0)
		rc = unvme_zone_mgmt_send_sync(tg->ns, qp, 0, NVME_ZSA_RESET, true);
	unvme_qpair_destroy(qp);
	if (rc || nr != 1)
		return cli_fail(a->cmd, rc > 0 ? EXIT_NVME : EXIT_HOST,
				"cannot report and reset the zones of %s namespace %u: %s", tg->devid,
				tg->nsid, rc > 0 ? unvme_status_str(rc, NVME_CSI_ZNS) : unvme_errmsg());
	tg->zoned = true;
	tg->zone_size = zi.zone_size;
	tg->zone_cap = z.zcap;
	tg->nzones = zi.nr_zones;
	if (tg->lbas_per_io > tg->zone_cap)
		return cli_fail(a->cmd, EXIT_USAGE,
				"invalid value '%llu' for --block-size (-b): larger than the zone capacity "
				"(%llu blocks)", (unsigned long long)cfg->block_size,
				(unsigned long long)tg->zone_cap);
	uint64_t streams = cfg->workload == PERF_ZONE_WRITE ? (uint64_t)cfg->nthreads * cfg->qd
							     : cfg->nthreads;
	uint64_t need = cfg->workload == PERF_ZONE_WRITE ? streams : 2 * streams;
	if (tg->nzones < need)
		return cli_fail(a->cmd, EXIT_USAGE,
				"%s on %llu zones: needs at least %llu (%s); lower --queue-depth or the "
				"number of cores", cfg->workload_name, (unsigned long long)tg->nzones,
				(unsigned long long)need,
				cfg->workload == PERF_ZONE_WRITE ? "one per outstanding write"
								 : "two per thread");
	/* each stream keeps one zone open; zone-append also a second one finishing up */
	uint64_t open = cfg->workload == PERF_ZONE_WRITE ? streams : 2 * streams;
	uint32_t limit = zi.max_active ? zi.max_active : zi.max_open;
	if (limit && open > limit)
		return cli_fail(a->cmd, EXIT_USAGE,
				"%s keeps %llu zones active; the namespace allows %u: lower "
				"--queue-depth or the number of cores", cfg->workload_name,
				(unsigned long long)open, limit);
	if (cfg->workload == PERF_ZONE_APPEND && cfg->block_size > zi.zasl_bytes)
		return cli_fail(a->cmd, EXIT_USAGE,
				"invalid value '%llu' for --block-size (-b): above the Zone Append size "
				"limit (%u bytes)", (unsigned long long)cfg->block_size, zi.zasl_bytes);
	return EXIT_OK;
}

int perf_zone_thread_init(struct perf_thread *t)
{
	const struct perf_config *cfg = t->cfg;
	const struct perf_target *tg = &cfg->targets[0];
	struct perf_qpair *q = &t->qps[0];
	if (cfg->workload == PERF_ZONE_WRITE) {
		uint64_t stride = (uint64_t)cfg->nthreads * cfg->qd;
		for (uint32_t k = 0; k < q->nslots; k++) {
			struct perf_slot *s = &q->slots[k];
			s->zone = (uint64_t)t->index * cfg->qd + k;
			s->zone_first = s->zone;
			s->zone_stride = stride;
			s->zwp = 0;
		}
		return 0;
	}
	struct perf_zstream *zs = calloc(1, sizeof(*zs));
	if (!zs)
		return -ENOMEM;
	zs->first = t->index;
	zs->stride = cfg->nthreads;
	zs->count = (tg->nzones - zs->first + zs->stride - 1) / zs->stride;
	zs->inflight = calloc(zs->count, sizeof(*zs->inflight));
	zs->state = calloc(zs->count, sizeof(*zs->state));
	zs->fifo = calloc(zs->count, sizeof(*zs->fifo));
	zs->parked = calloc(q->nslots, sizeof(*zs->parked));
	t->zstream = zs;
	if (!zs->inflight || !zs->state || !zs->fifo || !zs->parked)
		return -ENOMEM;
	zs->state[0] = ZONE_IN_USE;
	return 0;
}

void perf_zone_thread_free(struct perf_thread *t)
{
	struct perf_zstream *zs = t->zstream;
	if (!zs)
		return;
	free(zs->inflight);
	free(zs->state);
	free(zs->fifo);
	free(zs->parked);
	free(zs);
	t->zstream = NULL;
}

static uint64_t zslba(const struct perf_target *tg, uint64_t zone)
{
	return zone * tg->zone_size;
}

static int submit_reset(struct perf_qpair *q, struct perf_slot *s, uint64_t zone,
			unvme_cmd_cb done)
{
	s->op = PERF_OP_RESET;
	s->zone = zone;
	return unvme_zone_mgmt_send(target(q->t)->ns, q->qp, zslba(target(q->t), zone), NVME_ZSA_RESET,
				    false, done, s);
}

static int zone_write_submit(struct perf_qpair *q, struct perf_slot *s, uint64_t now, unvme_cmd_cb done)
{
	const struct perf_target *tg = target(q->t);
	if (s->zone_dirty) {
		/* the slot's previous zone is done: reset it for the next lap */
		s->zone_dirty = false;
		return submit_reset(q, s, s->old_zone, done);
	}
	s->op = PERF_OP_DATA;
	s->submit_ts = now;
	s->slba = zslba(tg, s->zone) + s->zwp;
	return unvme_write(tg->ns, q->qp, s->buf, s->slba, tg->lbas_per_io, done, s);
}

static void zone_write_done(struct perf_slot *s, const struct perf_target *tg, bool ok)
{
	if (s->op == PERF_OP_RESET)
		return;
	if (ok)
		s->zwp += tg->lbas_per_io;
	/* full (or cannot take another I/O), or something went wrong: on to the next zone */
	if (!ok || s->zwp + tg->lbas_per_io > tg->zone_cap) {
		s->old_zone = s->zone;
		s->zone_dirty = true;
		s->zone += s->zone_stride;
		if (s->zone >= tg->nzones)
			s->zone = s->zone_first;
		s->zwp = 0;
	}
}

static uint64_t owned(const struct perf_zstream *zs, uint64_t i)
{
	return zs->first + i * zs->stride;
}

/* Zone Append: reset a finished zone when nothing is in flight to it, else append to the
 * current zone, else move to the next one (parking the slot while it is still being reset). */
static int zone_append_submit(struct perf_qpair *q, struct perf_slot *s, uint64_t now, unvme_cmd_cb done)
{
	struct perf_thread *t = q->t;
	struct perf_zstream *zs = t->zstream;
	const struct perf_target *tg = target(t);
	if (zs->fifo_len) {
		uint64_t i = zs->fifo[zs->fifo_head];
		if (zs->inflight[i] == 0) {
			zs->fifo_head = (zs->fifo_head + 1) % zs->count;
			zs->fifo_len--;
			zs->state[i] = ZONE_RESETTING;
			s->zindex = i;
			return submit_reset(q, s, owned(zs, i), done);
		}
	}
	if (zs->reserved + tg->lbas_per_io > tg->zone_cap) {
		uint64_t next = (zs->cur + 1) % zs->count;
		if (zs->state[next] != ZONE_READY) {
			zs->parked[zs->nparked++] = s;
			return PERF_PARKED;
		}
		/* the old zone goes into the reset queue; a zone whose last append left room for
		 * less than one I/O is reset as it is (Reset Zone takes any written state) */
		zs->state[zs->cur] = ZONE_NEED_RESET;
		zs->fifo[(zs->fifo_head + zs->fifo_len) % zs->count] = zs->cur;
		zs->fifo_len++;
		zs->cur = next;
		zs->state[next] = ZONE_IN_USE;
		zs->reserved = 0;
	}
	zs->reserved += tg->lbas_per_io;
	zs->inflight[zs->cur]++;
	s->op = PERF_OP_DATA;
	s->zindex = zs->cur;
	s->zone = owned(zs, zs->cur);
	s->submit_ts = now;
	s->slba = zslba(tg, s->zone);
	return unvme_zone_append(tg->ns, q->qp, s->buf, s->slba, tg->lbas_per_io, false, done, s);
}

int perf_zone_submit(struct perf_qpair *q, struct perf_slot *s, uint64_t now, unvme_cmd_cb done)
{
	if (q->t->cfg->workload == PERF_ZONE_WRITE)
		return zone_write_submit(q, s, now, done);
	return zone_append_submit(q, s, now, done);
}

bool perf_zone_done(struct perf_slot *s, const struct nvme_cqe *cpl, struct perf_stats *st)
{
	struct perf_thread *t = s->q->t;
	const struct perf_target *tg = target(t);
	bool ok = (cpl->status >> 1) == 0;
	if (t->cfg->workload == PERF_ZONE_WRITE) {
		zone_write_done(s, tg, ok);
		return s->op == PERF_OP_DATA;
	}
	struct perf_zstream *zs = t->zstream;
	if (s->op == PERF_OP_RESET) {
		zs->state[s->zindex] = ZONE_READY;
		return false;
	}
	zs->inflight[s->zindex]--;
	/* the device chose the LBA: it must lie in the zone the append named */
	uint64_t lba = unvme_cpl_lba(cpl);
	if (ok && (lba < s->slba || lba + tg->lbas_per_io > s->slba + tg->zone_cap) && t->measuring) {
		if (!st->verify_errors)
			st->first_bad_lba = lba;
		st->verify_errors++;
	}
	return true;
}

struct perf_slot *perf_zone_unpark(struct perf_thread *t)
{
	struct perf_zstream *zs = t->zstream;
	if (!zs || !zs->nparked)
		return NULL;
	return zs->parked[--zs->nparked];
}
