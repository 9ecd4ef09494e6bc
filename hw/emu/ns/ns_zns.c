/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The zones of a zoned namespace and their state machine (ZNS Command Set 1.1 section 2.1.1):
 *
 *   Empty --write--> Implicitly Opened --fills--> Full
 *   Empty/Closed/Implicitly Opened --Open Zone--> Explicitly Opened
 *   opened --Close Zone--> Closed (Empty when nothing was written)
 *   Empty/opened/Closed --Finish Zone--> Full
 *   opened/Closed/Full --Reset Zone--> Empty
 *   Read Only --Offline Zone--> Offline
 *
 * Resources: an opened zone holds an open and an active resource, a closed zone an active
 * one. When the open limit is reached, opening another zone first closes the implicitly opened
 * zone opened longest ago (the controller may do so); if none is implicitly opened the command
 * fails with Too Many Open Zones. Every other transition is Invalid Zone State Transition.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "hw/emu/ns/ns_backend.h"
#include "hw/emu/ns/ns_internal.h"
#include "hw/emu/ns/ns_zns.h"

static bool is_open(uint8_t s)
{
	return s == NVME_ZS_IMP_OPEN || s == NVME_ZS_EXP_OPEN;
}

static bool is_active(uint8_t s)
{
	return is_open(s) || s == NVME_ZS_CLOSED;
}

static uint16_t zone_status(unsigned sc)
{
	return emu_ns_status(NVME_SCT_CMD, sc, true);
}

void zns_set_state(struct emu_zns *z, uint32_t zi, uint8_t state)
{
	struct zns_zone_rec *r = &z->meta.zones[zi];
	uint8_t old = r->state;
	z->nr_open -= is_open(old);
	z->nr_active -= is_active(old);
	z->nr_open += is_open(state);
	z->nr_active += is_active(state);
	r->state = state;
	atomic_store_explicit(&z->rstate[zi], state, memory_order_release);
}

/* Closes the implicitly opened zone (other than except) opened longest ago: true if one was. */
static bool close_oldest_implicit(struct emu_zns *z, uint32_t except)
{
	uint32_t best = UINT32_MAX;
	for (uint32_t i = 0; i < z->nr_zones; i++)
		if (i != except && z->meta.zones[i].state == NVME_ZS_IMP_OPEN &&
		    (best == UINT32_MAX || z->opened_at[i] < z->opened_at[best]))
			best = i;
	if (best == UINT32_MAX)
		return false;
	zns_set_state(z, best, z->meta.zones[best].filled ? NVME_ZS_CLOSED : NVME_ZS_EMPTY);
	return true;
}

uint16_t zns_open(struct emu_zns *z, uint32_t zi, bool explicit_open)
{
	uint8_t s = z->meta.zones[zi].state;
	switch (s) {
	case NVME_ZS_EXP_OPEN:
		return 0;
	case NVME_ZS_IMP_OPEN:
		if (explicit_open)
			zns_set_state(z, zi, NVME_ZS_EXP_OPEN);
		return 0;
	case NVME_ZS_EMPTY:
		if (z->max_active && z->nr_active >= z->max_active)
			return zone_status(NVME_SC_ZONE_TOO_MANY_ACTIVE);
		/* fall through */
	case NVME_ZS_CLOSED:
		if (z->max_open && z->nr_open >= z->max_open && !close_oldest_implicit(z, zi))
			return zone_status(NVME_SC_ZONE_TOO_MANY_OPEN);
		zns_set_state(z, zi, explicit_open ? NVME_ZS_EXP_OPEN : NVME_ZS_IMP_OPEN);
		z->opened_at[zi] = ++z->open_seq;
		return 0;
	default:
		return zone_status(NVME_SC_ZONE_INVALID_TRANSITION);
	}
}

void zns_wait_idle(struct emu_zns *z, uint32_t zi)
{
	while (atomic_load_explicit(&z->inflight[zi], memory_order_acquire)) {
		pthread_mutex_unlock(&z->lock);
		sched_yield();
		pthread_mutex_lock(&z->lock);
	}
}

static uint16_t do_close(struct emu_zns *z, uint32_t zi)
{
	struct zns_zone_rec *r = &z->meta.zones[zi];
	if (r->state == NVME_ZS_CLOSED)
		return 0;
	if (!is_open(r->state))
		return zone_status(NVME_SC_ZONE_INVALID_TRANSITION);
	zns_set_state(z, zi, r->filled ? NVME_ZS_CLOSED : NVME_ZS_EMPTY);
	return 0;
}

/* do_finish and do_reset run after zns_wait_idle: no write is still copying into the zone. */
static uint16_t do_finish(struct emu_zns *z, uint32_t zi)
{
	struct zns_zone_rec *r = &z->meta.zones[zi];
	if (r->state == NVME_ZS_FULL)
		return 0;
	if (!is_active(r->state) && r->state != NVME_ZS_EMPTY)
		return zone_status(NVME_SC_ZONE_INVALID_TRANSITION);
	/* the blocks it skips read as zeroes: the data end stays where it is */
	r->filled = z->cap_bytes;
	zns_set_state(z, zi, NVME_ZS_FULL);
	return 0;
}

static uint16_t do_reset(struct emu_zns *z, uint32_t zi)
{
	struct zns_zone_rec *r = &z->meta.zones[zi];
	if (r->state == NVME_ZS_EMPTY)
		return 0;
	if (!is_active(r->state) && r->state != NVME_ZS_FULL)
		return zone_status(NVME_SC_ZONE_INVALID_TRANSITION);
	/* Blocks past the data end read as zeroes (zns_zone_rec), so nothing needs clearing for
	 * the host to see an empty zone. A file's zone is cleared for good all the same: after a
	 * power cut the table may show a write pointer ahead of data that never reached the disk,
	 * and those blocks must read as zeroes, never as what the zone held before this reset.
	 * The table says empty durably first: a power cut in between leaves an empty zone over
	 * old bytes (cleared at the next power-on), never old data half cleared in a zone that
	 * still holds it. */
	uint64_t written = r->written;
	__atomic_store_n(&r->written, 0, __ATOMIC_RELEASE);
	r->filled = 0;
	r->attrs = 0;
	zns_set_state(z, zi, NVME_ZS_EMPTY);
	if (z->meta.fd >= 0 && written &&
	    (zns_meta_sync(&z->meta) != 0 ||
	     z->be->ops->zero(z->be, (uint64_t)zi * z->zone_bytes, written, true, true) != 0))
		return emu_ns_status(NVME_SCT_MEDIA, NVME_SC_WRITE_FAULT, false);
	return 0;
}

static uint16_t do_offline(struct emu_zns *z, uint32_t zi)
{
	struct zns_zone_rec *r = &z->meta.zones[zi];
	if (r->state != NVME_ZS_READ_ONLY)
		return zone_status(NVME_SC_ZONE_INVALID_TRANSITION);
	zns_set_state(z, zi, NVME_ZS_OFFLINE);
	return 0;
}

static uint16_t apply(struct emu_zns *z, uint32_t zi, uint8_t zsa)
{
	switch (zsa) {
	case NVME_ZSA_CLOSE:
		return do_close(z, zi);
	case NVME_ZSA_FINISH:
		zns_wait_idle(z, zi);
		return do_finish(z, zi);
	case NVME_ZSA_OPEN:
		return zns_open(z, zi, true);
	case NVME_ZSA_RESET:
		zns_wait_idle(z, zi);
		return do_reset(z, zi);
	case NVME_ZSA_OFFLINE:
		return do_offline(z, zi);
	default:
		return emu_ns_status(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD, true);
	}
}

/* Whether Select All applies an action to a zone in state s (ZNS 1.1 section 3.4.3). */
static bool selected(uint8_t zsa, uint8_t s)
{
	switch (zsa) {
	case NVME_ZSA_CLOSE:
		return is_open(s);
	case NVME_ZSA_FINISH:
		return is_active(s);
	case NVME_ZSA_OPEN:
		return s == NVME_ZS_CLOSED;
	case NVME_ZSA_RESET:
		return is_active(s) || s == NVME_ZS_FULL;
	case NVME_ZSA_OFFLINE:
		return s == NVME_ZS_READ_ONLY;
	default:
		return false;
	}
}

uint16_t zns_mgmt_send(struct emu_zns *z, uint32_t zi, uint8_t zsa, bool all)
{
	if (zsa != NVME_ZSA_CLOSE && zsa != NVME_ZSA_FINISH && zsa != NVME_ZSA_OPEN &&
	    zsa != NVME_ZSA_RESET && zsa != NVME_ZSA_OFFLINE)
		/* Set Zone Descriptor Extension needs ZDES, which is 0; other actions are reserved */
		return emu_ns_status(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD, true);
	pthread_mutex_lock(&z->lock);
	uint16_t st = 0;
	if (!all) {
		st = apply(z, zi, zsa);
	} else if (zsa == NVME_ZSA_OPEN) {
		/* opening every closed zone must fit the open limit as a whole */
		uint32_t closed = 0;
		for (uint32_t i = 0; i < z->nr_zones; i++)
			closed += z->meta.zones[i].state == NVME_ZS_CLOSED;
		if (z->max_open && z->nr_open + closed > z->max_open)
			st = zone_status(NVME_SC_ZONE_TOO_MANY_OPEN);
		for (uint32_t i = 0; i < z->nr_zones && !st; i++)
			if (z->meta.zones[i].state == NVME_ZS_CLOSED)
				st = zns_open(z, i, true);
	} else {
		for (uint32_t i = 0; i < z->nr_zones && !st; i++)
			if (selected(zsa, z->meta.zones[i].state))
				st = apply(z, i, zsa);
	}
	pthread_mutex_unlock(&z->lock);
	return st;
}

static void record_changed(struct emu_zns *z, uint32_t zi)
{
	for (uint32_t i = 0; i < z->nr_changed; i++)
		if (z->changed[i] == zi)
			return;
	if (z->nr_changed < NVME_CHANGED_ZONES_MAX)
		z->changed[z->nr_changed++] = zi;
	else
		z->changed_overflow = true;
}

uint16_t emu_zns_make_read_only(struct emu_zns *z, uint64_t zone_index)
{
	if (zone_index >= z->nr_zones)
		return emu_ns_status(NVME_SCT_GENERIC, NVME_SC_LBA_OUT_OF_RANGE, true);
	uint32_t zi = (uint32_t)zone_index;
	pthread_mutex_lock(&z->lock);
	zns_wait_idle(z, zi);
	uint8_t s = z->meta.zones[zi].state;
	if (s != NVME_ZS_READ_ONLY && s != NVME_ZS_OFFLINE) {
		zns_set_state(z, zi, NVME_ZS_READ_ONLY);
		record_changed(z, zi);
	}
	pthread_mutex_unlock(&z->lock);
	return 0;
}

/* Recounts the resources from the records (creation). */
static void recount(struct emu_zns *z)
{
	z->nr_open = z->nr_active = 0;
	for (uint32_t i = 0; i < z->nr_zones; i++) {
		uint8_t s = z->meta.zones[i].state;
		z->nr_open += is_open(s);
		z->nr_active += is_active(s);
		atomic_store_explicit(&z->rstate[i], s, memory_order_relaxed);
	}
}

void emu_zns_reset(struct emu_zns *z)
{
	pthread_mutex_lock(&z->lock);
	for (uint32_t i = 0; i < z->nr_zones; i++) {
		struct zns_zone_rec *r = &z->meta.zones[i];
		if (is_open(r->state))
			zns_set_state(z, i, r->filled ? NVME_ZS_CLOSED : NVME_ZS_EMPTY);
	}
	pthread_mutex_unlock(&z->lock);
}

int emu_zns_format(struct emu_zns *z)
{
	pthread_mutex_lock(&z->lock);
	for (uint32_t i = 0; i < z->nr_zones; i++) {
		struct zns_zone_rec *r = &z->meta.zones[i];
		/* offline zones stay offline: their media is gone (read-only ones too) */
		if (r->state == NVME_ZS_OFFLINE || r->state == NVME_ZS_READ_ONLY)
			continue;
		r->filled = 0;
		r->written = 0;
		r->attrs = 0;
		zns_set_state(z, i, NVME_ZS_EMPTY);
	}
	z->nr_changed = 0;
	z->changed_overflow = false;
	pthread_mutex_unlock(&z->lock);
	return zns_meta_sync(&z->meta);
}

int emu_zns_sync(struct emu_zns *z)
{
	return zns_meta_sync(&z->meta);
}

/*
 * Power-on of a file's zones: every block past a zone's data end is cleared for good. A
 * power cut may have kept the data of writes whose zone table update it lost; the next writes
 * at those blocks would otherwise show them again (a command cut short leaves a block's old
 * bytes). Made durable before the first command, so that no later power cut brings them back.
 */
static int clear_unwritten(struct emu_zns *z)
{
	for (uint32_t i = 0; i < z->nr_zones; i++) {
		const struct zns_zone_rec *r = &z->meta.zones[i];
		if (r->state == NVME_ZS_OFFLINE || r->state == NVME_ZS_READ_ONLY || r->written >= z->zone_bytes)
			continue;
		if (z->be->ops->zero(z->be, (uint64_t)i * z->zone_bytes + r->written,
				     z->zone_bytes - r->written, true, false) != 0)
			return -EIO;
	}
	return z->be->ops->flush(z->be);
}

static int check_geometry(const struct emu_ns_params *p, uint64_t capacity, char *err, size_t errlen)
{
	const struct emu_zns_params *zp = &p->zns;
	/* both LBA formats (512 B and 4 KiB) must divide a zone: Format may switch between them */
	if (zp->zone_bytes == 0 || zp->zone_bytes % EMU_PAGE_SIZE) {
		emu_ns_set_error(err, errlen, "zone size %llu is not a positive multiple of 4096",
				 (unsigned long long)zp->zone_bytes);
		return -EINVAL;
	}
	if (zp->cap_bytes == 0 || zp->cap_bytes % EMU_PAGE_SIZE || zp->cap_bytes > zp->zone_bytes) {
		emu_ns_set_error(err, errlen, "zone capacity %llu is not a positive multiple of 4096 "
				 "no larger than the zone size %llu", (unsigned long long)zp->cap_bytes,
				 (unsigned long long)zp->zone_bytes);
		return -EINVAL;
	}
	if (capacity < zp->zone_bytes || capacity % zp->zone_bytes) {
		emu_ns_set_error(err, errlen, "namespace size %llu is not a whole number of %llu-byte zones",
				 (unsigned long long)capacity, (unsigned long long)zp->zone_bytes);
		return -EINVAL;
	}
	if (capacity / zp->zone_bytes > UINT32_MAX) {
		emu_ns_set_error(err, errlen, "too many zones");
		return -EINVAL;
	}
	if (zp->max_open && zp->max_active && zp->max_open > zp->max_active) {
		emu_ns_set_error(err, errlen, "open zone limit %u is above the active zone limit %u",
				 zp->max_open, zp->max_active);
		return -EINVAL;
	}
	return 0;
}

int emu_zns_create(const struct emu_ns_params *p, struct emu_ns_backend *be, struct emu_zns **out,
		   char *err, size_t errlen)
{
	*out = NULL;
	int rc = check_geometry(p, be->capacity, err, errlen);
	if (rc)
		return rc;
	struct emu_zns *z = calloc(1, sizeof(*z));
	if (!z) {
		emu_ns_set_error(err, errlen, "out of memory");
		return -ENOMEM;
	}
	z->be = be;
	z->zone_bytes = p->zns.zone_bytes;
	z->cap_bytes = p->zns.cap_bytes;
	z->nr_zones = (uint32_t)(be->capacity / z->zone_bytes);
	z->max_open = p->zns.max_open;
	z->max_active = p->zns.max_active;
	z->zasl_bytes = p->zns.zasl_bytes ? p->zns.zasl_bytes : EMU_MDTS_BYTES;
	z->opened_at = calloc(z->nr_zones, sizeof(*z->opened_at));
	z->inflight = calloc(z->nr_zones, sizeof(*z->inflight));
	z->rstate = calloc(z->nr_zones, sizeof(*z->rstate));
	if (!z->opened_at || !z->inflight || !z->rstate) {
		emu_ns_set_error(err, errlen, "out of memory for %u zones", z->nr_zones);
		rc = -ENOMEM;
		goto fail;
	}
	bool fresh;
	rc = zns_meta_open(&z->meta, p->kind == EMU_NS_ZNS ? p->path : "", z, &fresh, err, errlen);
	if (rc)
		goto fail;
	/* a data file that had no zone table may hold anything: zones start empty, reading zeroes */
	if (fresh && p->path[0] && be->ops->erase(be) != 0) {
		emu_ns_set_error(err, errlen, "cannot clear '%s' for its new zones", p->path);
		zns_meta_close(&z->meta);
		rc = -EIO;
		goto fail;
	}
	if (!fresh && p->path[0] && (rc = clear_unwritten(z)) != 0) {
		emu_ns_set_error(err, errlen, "cannot clear the unwritten blocks of '%s': %s", p->path,
				 strerror(-rc));
		zns_meta_close(&z->meta);
		goto fail;
	}
	pthread_mutex_init(&z->lock, NULL);
	atomic_init(&z->zone_cmds, true);
	recount(z);
	emu_zns_reset(z); /* power-on: zones opened before the restart are closed */
	*out = z;
	return 0;
fail:
	free(z->opened_at);
	free((void *)z->inflight);
	free((void *)z->rstate);
	free(z);
	return rc;
}

void emu_zns_destroy(struct emu_zns *z)
{
	if (!z)
		return;
	zns_meta_sync(&z->meta);
	zns_meta_close(&z->meta);
	pthread_mutex_destroy(&z->lock);
	free(z->opened_at);
	free((void *)z->inflight);
	free((void *)z->rstate);
	free(z);
}
