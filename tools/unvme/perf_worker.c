/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The benchmark's I/O loop, one per thread. Every I/O slot is always in flight: its
 * completion callback records it and submits the slot again at once, so the queue stays full
 * and the submissions made during one poll go out together with the next poll's doorbell.
 *
 * The per-I/O budget is tens of nanoseconds, hence:
 *   - nothing is allocated; slots and their DMA buffers exist before the run starts;
 *   - one timestamp per poll: the first completion of a poll reads the TSC and every other
 *     completion of that poll, and every resubmission made from it, shares the value;
 *   - completions with the same submission time (submitted in one burst) go into the
 *     histogram as one lat_hist_record_n();
 *   - random offsets come from xorshift64 scaled by a multiply, not a division.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lib/common/clock.h"
#include "lib/common/compiler.h"
#include "perf.h"
#include "tsc.h"


/* Stamp written into every logical block by --verify writes (first 24 bytes, last 8). */
#define PERF_STAMP_MAGIC 0x464550454d564e55ull /* "UNVMEPEF" */
#define TIME_CHECK_MASK 15u                    /* look at the clock every 16 loop turns */
#define DRAIN_LIMIT_NS (40ull * 1000000000ull) /* longer than the I/O timeout */

static inline uint64_t xorshift64(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x;
}

/* A uniform value in [0, n) from 64 random bits: the high half of the 128-bit product. */
static inline uint64_t scale(uint64_t r, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)r * n) >> 64);
}

static void stamp_blocks(uint8_t *buf, const struct perf_target *tg, uint64_t slba)
{
	for (uint32_t i = 0; i < tg->lbas_per_io; i++) {
		uint8_t *b = buf + (size_t)i * tg->lba_size;
		uint64_t hdr[3] = { PERF_STAMP_MAGIC, slba + i, tg->nsid };
		uint64_t tail = (slba + i) ^ PERF_STAMP_MAGIC;
		memcpy(b, hdr, sizeof(hdr));
		memcpy(b + tg->lba_size - sizeof(tail), &tail, sizeof(tail));
	}
}

/* Clears the stamps so that a read that moves no data cannot pass for a good one. */
static void clear_stamps(uint8_t *buf, const struct perf_target *tg)
{
	for (uint32_t i = 0; i < tg->lbas_per_io; i++)
		memset(buf + (size_t)i * tg->lba_size, 0, 24);
}

/* Checks the blocks of a verify read: stamped blocks must carry their own LBA; blocks never
 * written by a verify run read as zeroes and are accepted. */
static void check_blocks(const uint8_t *buf, const struct perf_target *tg, uint64_t slba,
			 struct perf_stats *st)
{
	for (uint32_t i = 0; i < tg->lbas_per_io; i++) {
		const uint8_t *b = buf + (size_t)i * tg->lba_size;
		uint64_t hdr[3], tail;
		memcpy(hdr, b, sizeof(hdr));
		memcpy(&tail, b + tg->lba_size - sizeof(tail), sizeof(tail));
		bool unwritten = hdr[0] == 0 && hdr[1] == 0 && hdr[2] == 0;
		bool good = hdr[0] == PERF_STAMP_MAGIC && hdr[1] == slba + i && hdr[2] == tg->nsid &&
			    tail == ((slba + i) ^ PERF_STAMP_MAGIC);
		if (!unwritten && !good) {
			if (!st->verify_errors)
				st->first_bad_lba = slba + i;
			st->verify_errors++;
			/* no stamp at all: the namespace held other data before the run (a block
			 * written by anything but perf), or the data was lost; a stamp of another
			 * block or namespace is data moved to the wrong place */
			if (hdr[0] != PERF_STAMP_MAGIC)
				st->foreign++;
		}
	}
}

static void perf_io_done(void *arg, const struct nvme_cqe *cpl);

/* --verify: takes unit for a command, false when one is in flight there. */
static inline bool unit_take(const struct perf_target *tg, uint64_t unit)
{
	uint64_t bit = 1ull << (unit % 64);
	return !(atomic_fetch_or_explicit(&tg->busy[unit / 64], bit, memory_order_acquire) & bit);
}

static inline void unit_give(const struct perf_target *tg, uint64_t slba)
{
	uint64_t unit = slba / tg->lbas_per_io;
	atomic_fetch_and_explicit(&tg->busy[unit / 64], ~(1ull << (unit % 64)), memory_order_release);
}

/* Picks the slot's next target and offset and queues it; the doorbell goes with the next poll. */
static inline int submit_slot(struct perf_qpair *q, struct perf_slot *s, uint64_t now)
{
	struct perf_thread *t = q->t;
	const struct perf_config *cfg = t->cfg;
	if (unlikely(cfg->zoned))
		return perf_zone_submit(q, s, now, perf_io_done);
	uint32_t ti = q->targets[q->next_target];
	if (++q->next_target == q->ntargets)
		q->next_target = 0;
	const struct perf_target *tg = &cfg->targets[ti];
	struct perf_stats *st = &t->stats[ti];

	uint64_t unit;
	do {
		if (cfg->random) {
			unit = scale(xorshift64(&t->rng), tg->nunits);
		} else {
			unit = st->seq_next;
			if (++st->seq_next == tg->nunits)
				st->seq_next = 0;
		}
	} while (unlikely(tg->busy != NULL) && !unit_take(tg, unit));
	bool is_read = cfg->all_reads;
	if (cfg->mixed)
		is_read = (xorshift64(&t->rng) & 0xffffffffu) < cfg->read_threshold;

	uint64_t slba = unit * tg->lbas_per_io;
	s->target = ti;
	s->submit_ts = now;
	s->slba = slba;
	s->is_read = is_read;
	if (unlikely(cfg->verify)) {
		if (is_read)
			clear_stamps(s->buf, tg);
		else
			stamp_blocks(s->buf, tg, slba);
	}
	int rc = is_read ? unvme_read(tg->ns, q->qp, s->buf, slba, tg->lbas_per_io, perf_io_done, s)
			 : unvme_write(tg->ns, q->qp, s->buf, slba, tg->lbas_per_io, perf_io_done, s);
	if (unlikely(rc) && unlikely(tg->busy != NULL))
		unit_give(tg, slba);
	return rc;
}

/* --unplug-at: a submission the device cannot take now (it is out, or being attached
 * again) parks its slot; retry_parked sends it once the device is back. */
static bool park(struct perf_qpair *q, struct perf_slot *s, int rc)
{
	if (!q->t->cfg->hotplug || (rc != -ENODEV && rc != -EAGAIN))
		return false;
	s->waiting = true;
	q->parked++;
	return true;
}

static void retry_parked(struct perf_thread *t)
{
	for (unsigned i = 0; i < t->nqps && !t->fatal; i++) {
		struct perf_qpair *q = &t->qps[i];
		for (uint32_t k = 0; k < q->nslots && q->parked; k++) {
			struct perf_slot *s = &q->slots[k];
			if (!s->waiting)
				continue;
			int rc = submit_slot(q, s, tsc_now());
			if (rc == -ENODEV || rc == -EAGAIN)
				break; /* not yet */
			s->waiting = false;
			q->parked--;
			if (rc < 0) {
				t->submit_failures++;
				t->fatal = rc;
				snprintf(t->fatal_msg, sizeof(t->fatal_msg), "%s", unvme_errmsg());
				return;
			}
			q->outstanding++;
		}
	}
}

static void resubmit(struct perf_qpair *q, struct perf_slot *s, uint64_t now)
{
	struct perf_thread *t = q->t;
	int rc = submit_slot(q, s, now);
	if (unlikely(rc < 0)) {
		q->outstanding--;
		if (park(q, s, rc))
			return;
		t->submit_failures++;
		if (!t->fatal) {
			t->fatal = rc;
			snprintf(t->fatal_msg, sizeof(t->fatal_msg), "%s", unvme_errmsg());
		}
	}
}

static inline void flush_run(struct perf_stats *st, uint64_t now)
{
	if (st->run_n) {
		lat_hist_record_n(&st->hist, now - st->run_submit_ts, st->run_n);
		st->run_n = 0;
	}
}

/* submit_slot for a plain run (perf_config.plain): every slot reads, or every slot writes,
 * and nothing waits for anything. */
static inline int submit_plain(struct perf_qpair *q, struct perf_slot *s, uint64_t now)
{
	struct perf_thread *t = q->t;
	const struct perf_config *cfg = t->cfg;
	uint32_t ti = q->targets[q->next_target];
	if (++q->next_target == q->ntargets)
		q->next_target = 0;
	const struct perf_target *tg = &cfg->targets[ti];
	uint64_t unit;
	if (cfg->random) {
		unit = scale(xorshift64(&t->rng), tg->nunits);
	} else {
		struct perf_stats *st = &t->stats[ti];
		unit = st->seq_next;
		if (++st->seq_next == tg->nunits)
			st->seq_next = 0;
	}
	uint64_t slba = unit * tg->lbas_per_io;
	s->target = ti;
	s->submit_ts = now;
	s->slba = slba;
	return cfg->all_reads
		       ? unvme_read(tg->ns, q->qp, s->buf, slba, tg->lbas_per_io, perf_io_done, s)
		       : unvme_write(tg->ns, q->qp, s->buf, slba, tg->lbas_per_io, perf_io_done, s);
}

/* Counts a completion: an error, or an I/O whose latency joins its submission burst's run.
 * Returns whether it succeeded. */
static inline bool count_done(struct perf_stats *st, const struct perf_slot *s,
			      const struct nvme_cqe *cpl, uint64_t now)
{
	if (unlikely(cpl->status >> 1)) {
		if (!st->errors)
			st->first_status = NVME_STATUS_FROM_CQE(cpl->status);
		st->errors++;
		return false;
	}
	st->ios++;
	if (s->submit_ts != st->run_submit_ts) {
		flush_run(st, now);
		st->run_submit_ts = s->submit_ts;
	}
	st->run_n++;
	return true;
}

/* perf_io_done of a plain run. */
static inline void plain_done(struct perf_slot *s, struct perf_qpair *q, struct perf_thread *t,
			      const struct nvme_cqe *cpl)
{
	uint64_t now = t->poll_ts;
	if (!now)
		now = t->poll_ts = tsc_now();
	if (likely(t->measuring))
		(void)count_done(&t->stats[s->target], s, cpl, now);
	if (unlikely(t->stopping)) {
		q->outstanding--;
		return;
	}
	int rc = submit_plain(q, s, now);
	if (unlikely(rc < 0)) {
		q->outstanding--;
		t->submit_failures++;
		if (!t->fatal) {
			t->fatal = rc;
			snprintf(t->fatal_msg, sizeof(t->fatal_msg), "%s", unvme_errmsg());
		}
	}
}

/* perf_io_done of every run but a plain one: out of line, so that the plain run's callback
 * saves only the registers its own path needs. */
static __attribute__((noinline)) void full_done(struct perf_slot *s, struct perf_qpair *q,
						struct perf_thread *t, const struct nvme_cqe *cpl)
{
	uint64_t now = t->poll_ts;
	if (!now)
		now = t->poll_ts = tsc_now();

	bool counted = true;
	if (unlikely(t->cfg->zoned))
		counted = perf_zone_done(s, cpl, &t->stats[s->target]);
	else if (unlikely(t->cfg->targets[s->target].busy != NULL))
		unit_give(&t->cfg->targets[s->target], s->slba);
	if (likely(t->measuring) && likely(counted)) {
		struct perf_stats *st = &t->stats[s->target];
		if (count_done(st, s, cpl, now)) {
			if (unlikely(t->cfg->hotplug) && !t->back_ns &&
			    atomic_load_explicit(&perf_plugging, memory_order_acquire))
				t->back_ns = mono_ns();
			if (unlikely(t->cfg->verify) && s->is_read)
				check_blocks(s->buf, &t->cfg->targets[s->target], s->slba, st);
		}
	}

	if (unlikely(t->stopping)) {
		q->outstanding--;
		return;
	}
	resubmit(q, s, now);
	/* a zone reset completed: the slots waiting for a zone go again */
	if (unlikely(!counted)) {
		struct perf_slot *p;
		while ((p = perf_zone_unpark(t)) != NULL)
			resubmit(q, p, now);
	}
}

static void perf_io_done(void *arg, const struct nvme_cqe *cpl)
{
	struct perf_slot *s = arg;
	struct perf_qpair *q = s->q;
	struct perf_thread *t = q->t;
	if (likely(t->cfg->plain))
		plain_done(s, q, t, cpl);
	else
		full_done(s, q, t, cpl);
}

/* Polls every queue pair once; returns false when one failed. */
static bool poll_all(struct perf_thread *t)
{
	for (unsigned i = 0; i < t->nqps; i++) {
		struct perf_qpair *q = &t->qps[i];
		t->poll_ts = 0;
		int rc = unvme_qpair_poll(q->qp, 0);
		if (unlikely(rc == -ENODEV) && t->cfg->hotplug)
			continue; /* the device is out: its commands came back with an error */
		if (unlikely(rc < 0)) {
			if (!t->fatal) {
				t->fatal = rc;
				snprintf(t->fatal_msg, sizeof(t->fatal_msg), "%s", unvme_errmsg());
			}
			return false;
		}
		if (t->poll_ts) {
			for (uint32_t k = 0; k < q->ntargets; k++)
				flush_run(&t->stats[q->targets[k]], t->poll_ts);
		}
	}
	return true;
}

/* The CPU clocks at one end of the measured period (two system calls, outside the loop). */
static void mark_cpu(uint64_t *thread_ns, uint64_t *process_ns)
{
	*thread_ns = thread_cpu_ns();
	*process_ns = process_cpu_ns();
}

static void reset_stats(struct perf_thread *t)
{
	for (unsigned i = 0; i < t->cfg->ntargets; i++) {
		struct perf_stats *st = &t->stats[i];
		uint64_t seq = st->seq_next;
		memset(st, 0, sizeof(*st) - sizeof(st->hist));
		st->seq_next = seq;
		lat_hist_init(&st->hist);
	}
}

void *perf_thread_main(void *arg)
{
	struct perf_thread *t = arg;
	const struct perf_config *cfg = t->cfg;
	uint64_t ticks_per_s = (uint64_t)cfg->tsc_hz;

	reset_stats(t);
	pthread_barrier_wait(t->start);

	uint64_t now = tsc_now();
	uint64_t measure_at = now + cfg->warmup * ticks_per_s;
	uint64_t end_at = measure_at + cfg->seconds * ticks_per_s;
	t->measuring = cfg->warmup == 0;
	t->start_ts = now;
	mark_cpu(&t->cpu_start_ns, &t->proc_start_ns);

	for (unsigned i = 0; i < t->nqps && !t->fatal; i++) {
		struct perf_qpair *q = &t->qps[i];
		for (uint32_t k = 0; k < q->nslots; k++) {
			int rc = submit_slot(q, &q->slots[k], now);
			if (rc < 0) {
				t->fatal = rc;
				snprintf(t->fatal_msg, sizeof(t->fatal_msg), "%s", unvme_errmsg());
				break;
			}
			q->outstanding++;
		}
	}

	for (uint32_t turn = 1; !t->fatal; turn++) {
		if (!poll_all(t))
			break;
		if (unlikely(cfg->hotplug))
			retry_parked(t);
		if ((turn & TIME_CHECK_MASK) == 0) {
			/* the stamp of the last poll that completed something, when there was one:
			 * a moment ago, and one TSC read fewer (at QD 1 that poll was this turn's) */
			now = t->poll_ts ? t->poll_ts : tsc_now();
			if (!t->measuring && now >= measure_at) {
				reset_stats(t);
				t->measuring = true;
				t->start_ts = tsc_now(); /* now may be a poll old */
				mark_cpu(&t->cpu_start_ns, &t->proc_start_ns);
			}
			if (now >= end_at || perf_interrupted)
				break;
		}
	}
	t->end_ts = tsc_now();
	mark_cpu(&t->cpu_end_ns, &t->proc_end_ns);
	if (!t->measuring) { /* interrupted during warmup: nothing measured */
		t->start_ts = t->end_ts;
		t->cpu_start_ns = t->cpu_end_ns;
		t->proc_start_ns = t->proc_end_ns;
	}
	t->measuring = false;
	t->stopping = true;
	/* slots parked for a zone reset are not in flight */
	for (struct perf_slot *p; (p = perf_zone_unpark(t)) != NULL;)
		p->q->outstanding--;

	/* Drain: completions are no longer resubmitted. Commands lost by the device end by
	 * the driver's timeout; give up after that. */
	uint64_t give_up = t->end_ts + (uint64_t)(cfg->tsc_hz * (double)DRAIN_LIMIT_NS / 1e9);
	for (;;) {
		uint32_t left = 0;
		for (unsigned i = 0; i < t->nqps; i++)
			left += t->qps[i].outstanding;
		if (left == 0)
			break;
		if (!poll_all(t) || tsc_now() >= give_up) {
			t->stuck = left;
			break;
		}
	}
	return NULL;
}
