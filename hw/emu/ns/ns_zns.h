/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A zoned namespace (ZNS Command Set 1.1): the zones of a block backend (memory or file) with
 * their state machine, write pointers and open/active resources. ns.c, ns_identify.c and
 * nvm_io.c hand a namespace with ns->zns set to the functions below.
 *
 * Files: ns_zns.c (zone table, state machine, management), ns_zns_io.c (reads, writes, Zone
 * Append, Zone Management Send/Receive), ns_zns_meta.c (the zone table's storage: memory, or
 * a file beside the data file so that zones survive a restart).
 *
 * Locking: one mutex per namespace guards every zone's state, write pointer and the resource
 * counts. A write reserves its blocks under the mutex (the write pointer moves at once, so
 * Zone Append at queue depth > 1 gets distinct LBAs) and copies its data outside it; the
 * zone's in-flight count keeps a reset, finish or offline from overtaking that copy.
 */
#ifndef UNVME_EMU_NS_ZNS_H
#define UNVME_EMU_NS_ZNS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "hw/emu/emu.h"

struct emu_ns;

/* One zone as stored (memory or the zone file): 24 bytes. Blocks from written on read as
 * zeroes whatever the backend holds, so a reset is instant: nothing is cleared, the stale
 * bytes are never shown and are overwritten by the zone's next writes. */
struct zns_zone_rec {
	uint64_t filled;   /* bytes from the zone start to the write pointer */
	uint64_t written;  /* bytes holding data (filled, less what Finish Zone skipped) */
	uint8_t  state;    /* enum nvme_zone_state */
	uint8_t  attrs;    /* NVME_ZA_* */
	uint8_t  rsvd[6];
};

/* The zone table's storage (ns_zns_meta.c). */
struct zns_meta {
	struct zns_zone_rec *zones;
	void *map;          /* the whole mapping (header + zones) */
	size_t map_len;
	int fd;             /* the zone file, -1 in memory */
};

struct emu_zns {
	struct emu_ns_backend *be;  /* the namespace's block backend (also ns->be) */
	uint64_t zone_bytes;
	uint64_t cap_bytes;
	uint32_t nr_zones;
	uint32_t max_open;          /* 0 = no limit */
	uint32_t max_active;        /* 0 = no limit */
	uint32_t zasl_bytes;        /* largest Zone Append (the controller's ZASL, else MDTS) */

	pthread_mutex_t lock;
	struct zns_meta meta;
	uint32_t nr_open;           /* implicitly + explicitly opened */
	uint32_t nr_active;         /* opened + closed */
	uint64_t open_seq;          /* order of implicit opens, for choosing which to close */
	uint64_t *opened_at;        /* per zone: open_seq at its implicit open */
	_Atomic uint32_t *inflight; /* per zone: writes copying data outside the lock */
	_Atomic uint8_t *rstate;    /* per zone: state, readable without the lock (reads) */

	/* Changed Zone List (log page BFh): zones whose descriptor the controller changed. */
	uint64_t changed[NVME_CHANGED_ZONES_MAX];
	uint32_t nr_changed;
	bool changed_overflow;

	atomic_bool zone_cmds;      /* Zone Management and Zone Append allowed (CC.CSS selects ZNS) */
};

/* ---- ns_zns.c ---- */
int emu_zns_create(const struct emu_ns_params *p, struct emu_ns_backend *be, struct emu_zns **out,
		   char *err, size_t errlen);
void emu_zns_destroy(struct emu_zns *z);
/* Every zone empty (Format NVM). Caller has quiesced I/O. Returns 0 or -errno. */
int emu_zns_format(struct emu_zns *z);
/* Controller reset or power-on: opened zones become closed (or empty when nothing was written). */
void emu_zns_reset(struct emu_zns *z);
int emu_zns_sync(struct emu_zns *z);

/* State machine pieces shared with ns_zns_io.c; caller holds z->lock. */
void zns_set_state(struct emu_zns *z, uint32_t zi, uint8_t state);
/* Makes zone zi opened (implicitly, or explicitly with explicit): resources per the spec,
 * closing an implicitly opened zone when the open limit is reached. 0 or a status word. */
uint16_t zns_open(struct emu_zns *z, uint32_t zi, bool explicit_open);
/* Waits (dropping and retaking the lock) until zone zi has no write copying data. */
void zns_wait_idle(struct emu_zns *z, uint32_t zi);
/* Zone Management Send on one zone or (all) on every zone the action selects. */
uint16_t zns_mgmt_send(struct emu_zns *z, uint32_t zi, uint8_t zsa, bool all);
/* Marks zone zi read only as the controller would on media wear (fault injection), records
 * it in the Changed Zone List. 0 or a status word. */
uint16_t emu_zns_make_read_only(struct emu_zns *z, uint64_t zone_index);

/* ---- ns_zns_io.c ---- */
uint16_t emu_zns_execute(struct emu_ns *ns, const struct nvme_sqe *cmd, struct emu_io_ctx *io,
			 unsigned shift);

/* ---- ns_zns_meta.c ---- */
/* Opens (or creates) the zone table: in memory when path is empty, else in "<path>.zones",
 * whose recorded geometry must match. *fresh is set when the table was created. */
int zns_meta_open(struct zns_meta *m, const char *path, const struct emu_zns *z, bool *fresh,
		  char *err, size_t errlen);
void zns_meta_close(struct zns_meta *m);
int zns_meta_sync(struct zns_meta *m);

#endif
