/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Latency model (thread mode only): makes queue-depth curves look like an SSD's.
 *
 * A command's data moves when it is fetched; only its completion is delayed. Service time is
 * rlat for Read, Compare and KV Retrieve, wlat for Write, Write Zeroes and KV Store/Append, 0
 * for the rest.
 *   units = 0:  done = now + service (unlimited parallelism)
 *   units = N:  the command takes the unit that frees up first:
 *               start = max(now, unit free), done = start + service, unit free = done
 *   bw = B:     the transfer of its data (Read/Write/Compare) takes bytes / B seconds through
 *               one pipe shared by all commands: pipe free = max(pipe free, now) + bytes / B,
 *               done = max(done, pipe free)
 * Completions wait in a min-heap by due time (FIFO among equal times) and are posted by the
 * engine when due, so IOPS grow with queue depth until the units or the pipe saturate.
 * Runs in the engine only (under the controller lock): no locking of its own.
 */
#include <stdlib.h>
#include <string.h>

#include "emu_ctrl.h"

int emu_latency_init(struct emu_ctrl *c)
{
	struct emu_latency *l = &c->lat;
	const struct emu_latency_model *m = &c->p.lat;
	memset(l, 0, sizeof(*l));
	l->enabled = c->p.mode == EMU_MODE_THREAD &&
		     (m->read_ns || m->write_ns || m->units || m->bw_bytes_per_s);
	if (!l->enabled)
		return 0;
	l->units = m->units;
	if (l->units) {
		l->unit_free_ns = calloc(l->units, sizeof(uint64_t));
		if (!l->unit_free_ns)
			return -1;
	}
	l->heap_cap = 256;
	l->heap = malloc(l->heap_cap * sizeof(*l->heap));
	return l->heap ? 0 : -1;
}

void emu_latency_free(struct emu_ctrl *c)
{
	free(c->lat.unit_free_ns);
	free(c->lat.heap);
	c->lat.unit_free_ns = NULL;
	c->lat.heap = NULL;
}

static bool before(const struct emu_delayed *a, const struct emu_delayed *b)
{
	return a->due_ns < b->due_ns || (a->due_ns == b->due_ns && a->seq < b->seq);
}

static void sift_up(struct emu_delayed *h, uint32_t i)
{
	while (i > 0) {
		uint32_t p = (i - 1) / 2;
		if (!before(&h[i], &h[p]))
			break;
		struct emu_delayed t = h[i];
		h[i] = h[p];
		h[p] = t;
		i = p;
	}
}

static void sift_down(struct emu_delayed *h, uint32_t n, uint32_t i)
{
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < n && before(&h[l], &h[m]))
			m = l;
		if (r < n && before(&h[r], &h[m]))
			m = r;
		if (m == i)
			return;
		struct emu_delayed t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

/* Removes heap entry i, keeping the heap ordered. */
static void heap_remove(struct emu_latency *l, uint32_t i)
{
	l->heap[i] = l->heap[--l->heap_len];
	if (i < l->heap_len) {
		sift_down(l->heap, l->heap_len, i);
		sift_up(l->heap, i);
	}
}

/* By opcode alone: the KV command set's Store (01h) and Retrieve (02h) share the NVM Write
 * and Read opcodes, and the Samsung vendor ones (81h, 83h, 90h) collide with no NVM opcode. */
static uint64_t service_ns(const struct emu_latency_model *m, uint8_t opc)
{
	switch (opc) {
	case NVME_CMD_READ:
	case NVME_CMD_COMPARE:
	case NVME_KVV_RETRIEVE:
		return m->read_ns;
	case NVME_CMD_WRITE:
	case NVME_CMD_WRITE_ZEROES:
	case NVME_KVV_STORE:
	case NVME_KVV_APPEND:
		return m->write_ns;
	default:
		return 0;
	}
}

static uint64_t data_bytes(const struct emu_ctrl *c, const struct nvme_sqe *cmd)
{
	if (cmd->opc != NVME_CMD_READ && cmd->opc != NVME_CMD_WRITE && cmd->opc != NVME_CMD_COMPARE)
		return 0;
	uint32_t nsid = cmd->nsid;
	const struct emu_ns *ns = nsid - 1u < EMU_MAX_NS ? c->ns[nsid - 1u] : NULL;
	if (!ns)
		return 0;
	return ((uint64_t)(cmd->cdw12 & 0xffffu) + 1) * emu_ns_lba_size(ns);
}

void emu_latency_submit(struct emu_ctrl *c, struct emu_sq *sq, const struct nvme_sqe *cmd,
			const struct emu_result *r)
{
	struct emu_latency *l = &c->lat;
	const struct emu_latency_model *m = &c->p.lat;
	uint64_t now = mono_ns();
	/* a command that failed its checks never reached the media: no unit, no transfer */
	bool media = r->status == 0;
	uint64_t service = media ? service_ns(m, cmd->opc) : 0;
	uint64_t done = now + service;
	if (l->units && media) {
		uint32_t best = 0;
		for (uint32_t u = 1; u < l->units; u++)
			if (l->unit_free_ns[u] < l->unit_free_ns[best])
				best = u;
		uint64_t start = l->unit_free_ns[best] > now ? l->unit_free_ns[best] : now;
		done = start + service;
		l->unit_free_ns[best] = done;
	}
	uint64_t bytes = media ? data_bytes(c, cmd) : 0;
	if (m->bw_bytes_per_s && bytes) {
		uint64_t xfer = (uint64_t)((unsigned __int128)bytes * 1000000000u / m->bw_bytes_per_s);
		l->bw_next_ns = (l->bw_next_ns > now ? l->bw_next_ns : now) + xfer;
		if (l->bw_next_ns > done)
			done = l->bw_next_ns;
	}
	if (done <= now && l->heap_len == 0) {
		emu_complete(c, sq, cmd->cid, r, cmd->nsid);
		return;
	}
	if (l->heap_len == l->heap_cap) {
		struct emu_delayed *h = realloc(l->heap, 2 * l->heap_cap * sizeof(*h));
		if (!h) {
			/* out of memory: complete now rather than lose the command */
			emu_complete(c, sq, cmd->cid, r, cmd->nsid);
			return;
		}
		l->heap = h;
		l->heap_cap *= 2;
	}
	l->heap[l->heap_len] = (struct emu_delayed){
		.due_ns = done, .seq = l->seq++, .dw0 = r->dw0, .sqid = sq->qid, .cid = cmd->cid,
		.status = r->status, .nsid = cmd->nsid, .err_lba = r->lba, .param_loc = r->param_loc,
	};
	sift_up(l->heap, l->heap_len++);
}

static void post(struct emu_ctrl *c, const struct emu_delayed *d)
{
	struct emu_result r = { .dw0 = d->dw0, .status = d->status, .param_loc = d->param_loc,
				.lba = d->err_lba };
	emu_complete(c, &c->sq[d->sqid], d->cid, &r, d->nsid);
}

uint32_t emu_latency_poll(struct emu_ctrl *c, uint64_t now, uint64_t *next_due)
{
	struct emu_latency *l = &c->lat;
	uint32_t n = 0;
	while (l->heap_len && l->heap[0].due_ns <= now) {
		struct emu_delayed d = l->heap[0];
		heap_remove(l, 0);
		post(c, &d);
		n++;
	}
	if (l->heap_len && l->heap[0].due_ns < *next_due)
		*next_due = l->heap[0].due_ns;
	return n;
}

bool emu_latency_take(struct emu_ctrl *c, uint16_t sqid, uint16_t cid)
{
	struct emu_latency *l = &c->lat;
	for (uint32_t i = 0; i < l->heap_len; i++) {
		if (l->heap[i].sqid == sqid && l->heap[i].cid == cid) {
			heap_remove(l, i);
			return true;
		}
	}
	return false;
}

void emu_latency_take_sq(struct emu_ctrl *c, uint16_t sqid, void (*fn)(struct emu_ctrl *, uint16_t, uint16_t))
{
	struct emu_latency *l = &c->lat;
	uint32_t keep = 0;
	for (uint32_t i = 0; i < l->heap_len; i++) {
		if (l->heap[i].sqid == sqid)
			fn(c, sqid, l->heap[i].cid);
		else
			l->heap[keep++] = l->heap[i];
	}
	l->heap_len = keep;
	for (uint32_t i = keep / 2; i-- > 0;)
		sift_down(l->heap, keep, i);
}

void emu_latency_clear(struct emu_ctrl *c)
{
	c->lat.heap_len = 0;
	c->lat.bw_next_ns = 0;
	if (c->lat.units)
		memset(c->lat.unit_free_ns, 0, c->lat.units * sizeof(uint64_t));
}
