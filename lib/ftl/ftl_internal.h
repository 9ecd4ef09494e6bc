/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The FTL's state and on-media format, shared by ftl_io.c (reads, writes, the buffer, units),
 * ftl_gc.c (garbage collection), ftl_meta.c (checkpoints, recovery, format) and ftl_opts.c.
 *
 * On the zoned device:
 *   zones [0, ck_zones)           checkpoint slot 0; [ck_zones, 2 ck_zones) slot 1
 *   zones [2 ck_zones, nzones)    data, as units: a header page, then n data pages
 * A unit's header holds its sequence number, the logical page of each data page, trimmed
 * logical pages, and a hash of the data, so a unit cut short by a crash is recognised and
 * ends the zone's scan. Units of a zone have increasing sequence numbers.
 * A checkpoint is a header page and the whole map (one u32 per logical page) at sequence s:
 * recovery loads the newest valid one, then replays every unit with a sequence above s in
 * sequence order. Trims newer than the checkpoint are carried by garbage collection into new
 * units, so a trimmed page never comes back.
 */
#ifndef UNVME_FTL_INTERNAL_H
#define UNVME_FTL_INTERNAL_H

#include <pthread.h>

#include "lib/ftl/ftl.h"

#define FTL_PAGE        ZDEV_PAGE
#define FTL_UNMAPPED    0xffffffffu
#define FTL_BUF_BASE    0xfffff000u   /* map values >= this: slot (v - FTL_BUF_BASE) of the buffer */
#define FTL_INVALID     0xffffffffu   /* reverse map: no live logical page */

/* A map value that names a slot of the write buffer. */
static inline bool in_buf(uint32_t v)
{
	return v >= FTL_BUF_BASE && v != FTL_UNMAPPED;
}
#define FTL_MAX_UNIT    63u           /* data pages per unit */
#define FTL_TRIM_BIT    (1ull << 63)

#define FTL_UNIT_MAGIC  0x31544e55544c4655ull /* "UFLTUNT1" */
#define FTL_CK_MAGIC    0x314b43544c465546ull /* "FUFLTCK1" */
#define FTL_VERSION     1u

/* Header page of a unit (its first page; the data pages follow). */
struct ftl_unit_hdr {
	uint64_t magic;
	uint64_t instance;     /* this FTL (random at format): units of an older format do not count */
	uint64_t seq;
	uint64_t data_hash;    /* zdev_hash64 of the data pages */
	uint32_t nr_pages;     /* data pages after this header */
	uint32_t nr_trims;
	uint32_t version;
	uint32_t rsvd;
	uint64_t hdr_hash;     /* of the page with this field 0 */
	uint64_t ent[];        /* nr_pages logical pages, then nr_trims trimmed logical pages */
};
#define FTL_HDR_ENTS ((FTL_PAGE - sizeof(struct ftl_unit_hdr)) / sizeof(uint64_t))

/* First page of a checkpoint. */
struct ftl_ck_hdr {
	uint64_t magic;
	uint64_t instance;
	uint64_t seq;          /* every unit up to this one is in the map */
	uint64_t user_pages;
	uint64_t body_hash;    /* of the map pages that follow */
	uint64_t body_pages;
	uint32_t version;
	uint32_t op_pct;
	uint32_t unit_pages;
	uint32_t nzones;
	uint64_t zone_pages;
	uint64_t zcap_pages;
	uint64_t hdr_hash;
};

enum ftl_zrole {
	FTL_Z_FREE,
	FTL_Z_OPEN,       /* a stream writes it */
	FTL_Z_USED,       /* full (or finished): a garbage collection candidate */
	FTL_Z_CK,         /* checkpoint slot */
	FTL_Z_BAD,        /* offline on the device */
};

/* One write stream (user writes, garbage collection): its open zone. */
struct ftl_stream {
	uint32_t zone;    /* UINT32_MAX: none open */
};

/* The buffer of user writes: a header page, then unit_pages data pages (DMA memory). */
struct ftl_buf {
	uint8_t *unit;    /* unit_pages + 1 pages: header, then the slots */
	uint32_t *lpn;    /* logical page of each slot */
	/* The page each slot's logical page mapped to on the media before the write that
	 * brought it here: the durable version until the slot's unit is written, so it stays
	 * valid (garbage collection copies it rather than resetting it away), FTL_UNMAPPED when
	 * none. A logical page has at most one pinned page (in prev or tprev): a page stays
	 * valid (p2l set) exactly while it is mapped or pinned. */
	uint32_t *prev;
	uint32_t n;       /* slots used */
	uint64_t *trims;  /* trimmed logical pages waiting for a unit */
	uint32_t *tprev;  /* per trim: the durable page it supersedes, pinned like prev */
	uint32_t ntrims;
};

/* Trims written in a zone, for garbage collection to carry forward. */
struct ftl_ztrims {
	uint64_t *ent;    /* lpn | seq << 32 */
	uint32_t n, cap;
};

struct ftl {
	struct zdev *z;
	struct ftl_opts o;
	pthread_rwlock_t lock;

	uint64_t instance;
	uint64_t user_pages;
	uint32_t unit_pages;
	uint32_t ck_zones;         /* zones per checkpoint slot */
	uint32_t ck_slot;          /* slot the next checkpoint goes to */
	uint64_t ck_seq;           /* sequence number of the newest checkpoint */
	uint64_t ck_due_pages;     /* media pages after which the next checkpoint is due */
	uint64_t seq;              /* of the last unit written */

	uint32_t *l2p;             /* [user_pages] */
	uint32_t *p2l;             /* [nzones * zone_pages] */
	uint32_t *vpc;             /* [nzones] valid pages */
	uint8_t *role;             /* [nzones] enum ftl_zrole */
	uint64_t *mtime;           /* [nzones] sequence number when the zone filled */
	struct ftl_ztrims *ztrims; /* [nzones] */
	uint32_t nfree;
	uint32_t gc_low;           /* collect when free zones fall to this */
	uint32_t gc_reserve;       /* zones only garbage collection may take */
	bool loaded;               /* open succeeded: close writes a checkpoint */
	bool trims_lost;           /* out of memory recording a trim: no collection until a checkpoint */

	struct ftl_stream user, gcs;
	struct ftl_buf buf;
	uint8_t *gc_unit;          /* garbage collection's unit: unit_pages + 1 pages of DMA */
	uint8_t *bounce;           /* one page of DMA for partial-page reads and writes */
	uint8_t *zero_page;

	struct ftl_stats st;
};

/* ftl_io.c */
/* Writes the buffer's pages (and pending trims) as units until it is empty, then a checkpoint
 * when one is due (ftl_seal_units: never). Lock held. */
int ftl_seal(struct ftl *f);
int ftl_seal_units(struct ftl *f);
/* The pinned page of lpn (in a buffer slot's prev or a pending trim's tprev), NULL if none. */
uint32_t *ftl_pin_of(struct ftl *f, uint32_t lpn);
/* Where lpn is on the media, as a crash now would find it: its mapped page, or the pinned
 * durable version while a newer write or trim waits in the buffer; FTL_UNMAPPED if none. */
uint32_t ftl_durable_of(struct ftl *f, uint32_t lpn);
/* Marks a physical page's logical page gone (overwritten or trimmed). */
void ftl_invalidate(struct ftl *f, uint32_t ppa);
/* Takes a free zone for a stream (gc: may use the reserve). -ENOSPC when none is left. */
int ftl_take_zone(struct ftl *f, struct ftl_stream *s, bool gc);
/* Writes one unit: the header (built here in unit's first page) and n data pages (already in
 * the pages after it, with their logical pages in lpn), plus trims, to the stream's zone
 * (n + 1 pages must fit); maps the pages. Lock held. */
int ftl_write_unit(struct ftl *f, struct ftl_stream *s, uint8_t *unit, const uint32_t *lpn,
		   uint32_t n, const uint64_t *trims, uint32_t ntrims, bool gc);
/* Pages a stream's zone can take (0 when it has none). */
uint64_t ftl_stream_room(const struct ftl *f, const struct ftl_stream *s);
/* Closes the stream's zone (no more writes) and makes it a collection candidate. */
int ftl_stream_close(struct ftl *f, struct ftl_stream *s);

/* ftl_gc.c */
/* Collects zones until more than gc_low are free (or nothing can be won). Lock held. */
int ftl_gc(struct ftl *f);
void ftl_ztrims_add(struct ftl *f, uint32_t zone, uint32_t lpn, uint64_t seq);

/* ftl_meta.c */
int ftl_checkpoint(struct ftl *f);
/* Loads or creates the FTL's state from the device. */
int ftl_load(struct ftl *f, char *err, size_t errlen);

static inline uint32_t ftl_zone_of(const struct ftl *f, uint32_t ppa)
{
	return (uint32_t)(ppa / f->z->zone_pages);
}

#endif
