/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The shadow: writes to chosen files (RocksDB's WAL) copied, as they are acknowledged, into
 * a memory-mapped file outside the process (on tmpfs: /dev/shm by default), so that a kill
 * of the process loses none of them, as a kill loses nothing that sits in the kernel's page
 * cache on ext4. A power cut takes tmpfs with it, as it takes the page cache: then only
 * what fsync made durable survives, the same promise as ext4's.
 *
 * The file holds two halves, each a header and entries (WRITE: inode, offset, bytes;
 * TRUNC: inode, size; DROP: inode, "everything before is durable"). Writers append to the
 * active half; an entry counts once the half's `used` covers it, which is stored after the
 * entry's bytes (a kill in between leaves an entry nobody was told about). The flusher
 * switches halves, writes back every file and commits: the entries of the old half are then
 * durable on the device and the half is cleared. The next mount after a kill replays the
 * halves in order (both, when the kill came in the middle of that cycle) onto the replayed
 * journal, syncs, and removes the file. Replaying an entry whose effect the device already
 * has is harmless: a file's entries are all its writes and truncations since the half began,
 * applied in their order.
 *
 * Space is reserved before the inode's lock is taken (a full half waits for the flusher,
 * which needs that lock); a write too large to shadow is written back and committed instead,
 * and leaves a DROP entry so that the replay cannot lay older entries over it.
 *
 * The file sits in a directory anyone may write to: it must be a regular file of ours, not
 * writable by others, with this file system's uuid, and every length in it is checked.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bfs.h"
#include "lib/common/clock.h"

#define SHADOW_MAGIC 0x57444853u /* "SHDW" */
#define SHADOW_VERSION 1u
#define SHADOW_DEFAULT (16ull << 20)

enum { SH_WRITE = 1, SH_TRUNC = 2, SH_DROP = 3 };

struct shadow_half {
	uint32_t magic;
	uint32_t version;
	uint8_t uuid[16];
	uint64_t gen;                /* 0: empty; halves replay in gen order */
	uint64_t base_seq;           /* journal transactions durable when the half was started */
	uint64_t cap;                /* entry bytes after this header */
	_Atomic uint64_t used;       /* entry bytes published */
	uint64_t pad[3];
};
_Static_assert(sizeof(struct shadow_half) == 80, "shadow half header layout");

struct shadow_rec {
	uint32_t type;
	uint32_t len;                /* WRITE: data bytes that follow (padded to 8) */
	uint64_t ino;
	uint64_t off;                /* WRITE: file offset; TRUNC: the size */
	uint32_t check;              /* of the fields above */
	uint32_t pad;
};
_Static_assert(sizeof(struct shadow_rec) == 32, "shadow entry layout");

struct bfs_shadow {
	int fd;
	char path[320];
	uint8_t *map;
	size_t map_len;
	uint64_t cap;                /* per half */
	struct shadow_half *h[2];
	uint32_t active;
	uint64_t reserved;           /* promised to writers in the active half, not yet used */
	bool old_pending;            /* the other half still holds entries not yet durable */
	pthread_mutex_t lock;
	pthread_cond_t cv;
};

/* A mix of the entry's fields: tells a header from garbage (torn writes cannot happen in
 * memory; this is for a file someone else changed), cheaper than a CRC on every append. */
static uint32_t rec_check(const struct shadow_rec *r)
{
	uint64_t x = ((uint64_t)r->type << 32 | r->len) * 0x9e3779b97f4a7c15ull;
	x ^= r->ino * 0xbf58476d1ce4e5b9ull;
	x ^= r->off * 0x94d049bb133111ebull;
	x ^= x >> 31;
	x *= 0xd6e8feb86659fd93ull;
	return (uint32_t)(x ^ x >> 32);
}

static size_t rec_size(uint32_t type, size_t len)
{
	return sizeof(struct shadow_rec) + (type == SH_WRITE ? (len + 7) & ~(size_t)7 : 0);
}

/* The last durable transaction (the flusher may be committing: jlock). */
static uint64_t committed_seq(struct blobfs *fs)
{
	pthread_mutex_lock(&fs->jlock);
	uint64_t seq = fs->j.committed_seq;
	pthread_mutex_unlock(&fs->jlock);
	return seq;
}

static struct bfs_shadow *shadow_of(struct blobfs *fs)
{
	return atomic_load_explicit(&fs->shadow, memory_order_acquire);
}

static uint8_t *half_data(struct shadow_half *h)
{
	return (uint8_t *)(h + 1);
}

static void half_reset(struct blobfs *fs, struct bfs_shadow *s, struct shadow_half *h, uint64_t gen,
		       uint64_t base)
{
	atomic_store(&h->used, 0);
	h->magic = SHADOW_MAGIC;
	h->version = SHADOW_VERSION;
	memcpy(h->uuid, fs->sb.uuid, 16);
	h->cap = s->cap;
	h->base_seq = base;
	h->gen = gen;
}

/* ---- replay of a shadow a killed process left ---- */

struct shadow_entry {
	const struct shadow_rec *r;
	const uint8_t *data;
};

/* The file an entry applies to: the handle of the previous entry when it is the same file
 * (a WAL's entries come in long runs), else a new one (NULL: the inode is gone). */
struct apply_ctx {
	struct blobfs *fs;
	uint64_t ino;
	struct blobfs_file *f;
};

static int apply_close(struct apply_ctx *c)
{
	int rc = c->f ? blobfs_close(c->f) : 0;
	c->f = NULL;
	c->ino = 0;
	return rc;
}

static int apply_entry(struct apply_ctx *c, const struct shadow_entry *e, uint64_t *applied)
{
	struct blobfs *fs = c->fs;
	if (e->r->ino != c->ino || !c->f) {
		int rc = apply_close(c);
		if (rc)
			return rc;
		c->ino = e->r->ino;
		pthread_rwlock_rdlock(&fs->ns_lock);
		struct bfs_inode *in = bfs_itable_find(fs, e->r->ino);
		if (in && in->type == BLOBFS_TYPE_FILE)
			bfs_inode_ref(in);
		else
			in = NULL;
		pthread_rwlock_unlock(&fs->ns_lock);
		if (!in)
			return 0; /* removed (or never made durable) since: nothing to bring back */
		rc = bfs_open_inode(fs, in, O_RDWR, &c->f);
		if (rc) {
			bfs_inode_unref(fs, in);
			return rc;
		}
	}
	int rc;
	if (e->r->type == SH_WRITE) {
		ssize_t w = bfs_write(c->f, e->data, e->r->len, e->r->off, false);
		rc = w == (ssize_t)e->r->len ? 0 : w < 0 ? (int)w : -EIO;
	} else {
		rc = bfs_truncate_inode(fs, c->f->in, e->r->off);
	}
	(*applied)++;
	return rc;
}

/* The entries of a half that pass every check; stops at the first that does not. */
static size_t collect(struct shadow_half *h, uint64_t cap, struct shadow_entry **v, size_t *n, size_t *vcap)
{
	uint64_t used = atomic_load(&h->used);
	if (used > cap)
		used = 0;
	const uint8_t *p = half_data(h), *end = p + used;
	size_t bad = 0;
	while (p < end) {
		const struct shadow_rec *r = (const struct shadow_rec *)p;
		size_t left = (size_t)(end - p);
		if (left < sizeof(*r) || r->check != rec_check(r) || r->type < SH_WRITE || r->type > SH_DROP ||
		    rec_size(r->type, r->len) > left || r->off > BLOBFS_FILE_MAX ||
		    (r->type == SH_WRITE && r->len > BLOBFS_FILE_MAX - r->off)) {
			bad = (size_t)(end - p);
			break;
		}
		if (*n == *vcap) {
			size_t nc = *vcap ? *vcap * 2 : 256;
			struct shadow_entry *nv = realloc(*v, nc * sizeof(*nv));
			if (!nv)
				return SIZE_MAX;
			*v = nv;
			*vcap = nc;
		}
		(*v)[(*n)++] = (struct shadow_entry){ r, p + sizeof(*r) };
		p += rec_size(r->type, r->len);
	}
	return bad;
}

static bool half_usable(struct blobfs *fs, struct shadow_half *h, uint64_t cap)
{
	return h->magic == SHADOW_MAGIC && h->version == SHADOW_VERSION && h->gen &&
	       memcmp(h->uuid, fs->sb.uuid, 16) == 0 && h->cap == cap;
}

/* Applies what the file at map (len bytes, two halves) holds. */
static int replay(struct blobfs *fs, uint8_t *map, size_t len, uint64_t *applied)
{
	uint64_t cap = len / 2 - sizeof(struct shadow_half);
	struct shadow_half *h[2] = { (struct shadow_half *)map, (struct shadow_half *)(map + len / 2) };
	bool ok[2] = { half_usable(fs, h[0], cap), half_usable(fs, h[1], cap) };
	int first = ok[0] && (!ok[1] || h[0]->gen < h[1]->gen) ? 0 : 1;
	if (!ok[0] && !ok[1])
		return 0;
	uint64_t committed = committed_seq(fs);
	if (h[first]->base_seq > committed)
		return bfs_err(BLOBFS_EBADSB, "the shadow of unsynced writes (%s) is newer than the device "
			       "(journal at %llu, shadow from %llu): the device lost synced changes; "
			       "remove the file to mount without it", fs->shadow_path,
			       (unsigned long long)committed, (unsigned long long)h[first]->base_seq);
	struct shadow_entry *v = NULL;
	size_t n = 0, vcap = 0;
	for (int k = 0; k < 2; k++) {
		int i = k ? first ^ 1 : first;
		if (!ok[i] || (k && h[i]->gen != h[first]->gen + 1))
			continue;
		if (collect(h[i], cap, &v, &n, &vcap) == SIZE_MAX) {
			free(v);
			return bfs_err(-ENOMEM, "out of memory replaying the shadow");
		}
	}
	/* A DROP says the file's earlier entries are durable already: the last DROP of each
	 * file, found walking back, hides what comes before it. */
	bool *skip = calloc(n ? n : 1, sizeof(*skip));
	uint64_t *dropped = calloc(n ? n : 1, sizeof(*dropped));
	if (!skip || !dropped) {
		free(v);
		free(skip);
		free(dropped);
		return bfs_err(-ENOMEM, "out of memory replaying the shadow");
	}
	size_t ndropped = 0;
	for (size_t i = n; i-- > 0;) {
		bool seen = false;
		for (size_t k = 0; k < ndropped && !seen; k++)
			seen = dropped[k] == v[i].r->ino;
		if (v[i].r->type == SH_DROP) {
			skip[i] = true;
			if (!seen)
				dropped[ndropped++] = v[i].r->ino;
		} else {
			skip[i] = seen;
		}
	}
	struct apply_ctx c = { fs, 0, NULL };
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++)
		if (!skip[i])
			rc = apply_entry(&c, &v[i], applied);
	int cl = apply_close(&c);
	free(v);
	free(skip);
	free(dropped);
	return rc ? rc : cl;
}

/* ---- the session's shadow ---- */

/* Where a mount without a shadow of its own still looks for a killed process's: a later
 * mount with one would otherwise lay old writes over what this mount changes. */
#define SHADOW_DEFAULT_DIR "/dev/shm"

static void shadow_name(struct blobfs *fs, char *out, size_t len)
{
	char lock[256];
	const char *base = strrchr(fs->lock_path, '/');
	snprintf(lock, sizeof(lock), "%s", base ? base + 1 : fs->lock_path);
	char *dot = strrchr(lock, '.');
	if (dot)
		*dot = '\0';
	snprintf(out, len, "%s/%s.shadow", fs->opts.shadow_dir ? fs->opts.shadow_dir : SHADOW_DEFAULT_DIR,
		 lock);
}

/* Opens an existing shadow file if it is one we may trust: ours, regular, not writable by
 * others. Returns the fd, -1 when there is none, or an error. */
static int open_existing(const char *path, int *fd_out)
{
	int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return *fd_out = -1, 0;
		return bfs_err(-errno, "cannot open the shadow %s: %s", path, strerror(errno));
	}
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 022)) {
		close(fd);
		return bfs_err(-EPERM, "the shadow %s is not a regular file of this user that others cannot "
			       "write: not trusted (remove it)", path);
	}
	*fd_out = fd;
	return 0;
}

static int replay_file(struct blobfs *fs, const char *path, int fd, uint64_t *applied)
{
	struct stat st;
	if (fstat(fd, &st) != 0)
		return bfs_err(-errno, "cannot stat the shadow %s", path);
	size_t len = (size_t)st.st_size;
	if (len < 2 * (sizeof(struct shadow_half) + 64) || len % 16)
		return 0; /* cut short while being made: it never held an entry */
	uint8_t *map = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return bfs_err(-errno, "cannot map the shadow %s: %s", path, strerror(errno));
	int rc = replay(fs, map, len, applied);
	munmap(map, len);
	return rc;
}

int bfs_shadow_open(struct blobfs *fs)
{
	if (fs->read_only)
		return 0;
	shadow_name(fs, fs->shadow_path, sizeof(fs->shadow_path));
	int fd = -1;
	int rc = open_existing(fs->shadow_path, &fd);
	if (rc)
		return rc;
	if (fd >= 0) {
		uint64_t applied = 0;
		rc = replay_file(fs, fs->shadow_path, fd, &applied);
		close(fd);
		if (!rc && applied)
			rc = blobfs_sync(fs);
		if (rc)
			return rc;
		fs->shadow_replayed = applied;
		unlink(fs->shadow_path);
	}
	if (!fs->opts.shadow_dir)
		return 0;
	struct bfs_shadow *s = calloc(1, sizeof(*s));
	if (!s)
		return bfs_err(-ENOMEM, "out of memory for the shadow");
	s->cap = ((fs->opts.shadow_size ? fs->opts.shadow_size : SHADOW_DEFAULT) + 7) & ~7ull;
	s->map_len = 2 * (sizeof(struct shadow_half) + s->cap);
	s->fd = open(fs->shadow_path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (s->fd < 0) {
		rc = bfs_err(-errno, "cannot create the shadow %s: %s", fs->shadow_path, strerror(errno));
		free(s);
		return rc;
	}
	/* Populated now: the pages are the shadow's for the whole mount (tmpfs memory), and no
	 * writer takes a page fault for them. */
	if (ftruncate(s->fd, (off_t)s->map_len) != 0 ||
	    (s->map = mmap(NULL, s->map_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, s->fd,
			   0)) == MAP_FAILED) {
		rc = bfs_err(-errno, "cannot size or map the shadow %s: %s", fs->shadow_path, strerror(errno));
		close(s->fd);
		unlink(fs->shadow_path);
		free(s);
		return rc;
	}
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cv, NULL);
	s->h[0] = (struct shadow_half *)s->map;
	s->h[1] = (struct shadow_half *)(s->map + s->map_len / 2);
	half_reset(fs, s, s->h[1], 0, 0);
	half_reset(fs, s, s->h[0], 1, committed_seq(fs));
	/* The flusher runs already (the replay above needed it): it finds the shadow from here. */
	atomic_store_explicit(&fs->shadow, s, memory_order_release);
	return 0;
}

void bfs_shadow_close(struct blobfs *fs, bool durable)
{
	struct bfs_shadow *s = shadow_of(fs);
	if (!s)
		return;
	atomic_store_explicit(&fs->shadow, NULL, memory_order_relaxed); /* the flusher is stopped */
	munmap(s->map, s->map_len);
	close(s->fd);
	/* Everything in it is on the device: nothing to replay. A crash (or a failed final
	 * write-back) leaves it for the next mount. */
	if (durable)
		unlink(fs->shadow_path);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->cv);
	free(s);
}

int bfs_shadow_reserve(struct blobfs *fs, struct bfs_inode *in, size_t len, struct bfs_shadow_slot *slot)
{
	struct bfs_shadow *s = shadow_of(fs);
	slot->bytes = 0;
	slot->sync = false;
	if (!s || !atomic_load_explicit(&in->shadowed, memory_order_relaxed))
		return 0;
	/* Too large to copy: written back and committed, leaving a DROP entry. */
	slot->sync = len > s->cap / 4;
	size_t need = slot->sync ? rec_size(SH_DROP, 0) : rec_size(SH_WRITE, len);
	pthread_mutex_lock(&s->lock);
	while (atomic_load(&s->h[s->active]->used) + s->reserved + need > s->cap) {
		bfs_flusher_kick(fs);
		struct timespec ts = clock_deadline_ms(CLOCK_REALTIME, 50);
		pthread_cond_timedwait(&s->cv, &s->lock, &ts);
		if (fs->jnl_error) {
			pthread_mutex_unlock(&s->lock);
			return bfs_err(-EIO, "the file system stopped taking changes after a failed metadata write");
		}
	}
	s->reserved += need;
	pthread_mutex_unlock(&s->lock);
	slot->bytes = need;
	return 0;
}

void bfs_shadow_unreserve(struct blobfs *fs, struct bfs_shadow_slot *slot)
{
	struct bfs_shadow *s = shadow_of(fs);
	if (!s || !slot->bytes)
		return;
	pthread_mutex_lock(&s->lock);
	s->reserved -= slot->bytes;
	pthread_mutex_unlock(&s->lock);
	slot->bytes = 0;
}

static void append(struct blobfs *fs, struct bfs_shadow_slot *slot, uint32_t type, uint64_t ino,
		   uint64_t off, const void *data, size_t len)
{
	struct bfs_shadow *s = shadow_of(fs);
	pthread_mutex_lock(&s->lock);
	struct shadow_half *h = s->h[s->active];
	uint64_t used = atomic_load_explicit(&h->used, memory_order_relaxed);
	size_t size = rec_size(type, len);
	struct shadow_rec r = { .type = type, .len = (uint32_t)len, .ino = ino, .off = off };
	r.check = rec_check(&r);
	uint8_t *p = half_data(h) + used;
	memcpy(p, &r, sizeof(r));
	if (len)
		memcpy(p + sizeof(r), data, len);
	/* The entry's bytes before the count that publishes it. */
	atomic_store_explicit(&h->used, used + size, memory_order_release);
	s->reserved -= slot->bytes;
	slot->bytes = 0;
	/* Half full: the flusher switches halves (once: the writers that follow do not ask). */
	bool half_full = used <= s->cap / 2 && used + size > s->cap / 2;
	pthread_mutex_unlock(&s->lock);
	if (half_full)
		bfs_flusher_kick(fs);
}

int bfs_shadow_write(struct blobfs *fs, struct bfs_qctx *q, struct bfs_inode *in,
		     struct bfs_shadow_slot *slot, uint64_t off, const void *buf, size_t len)
{
	if (!slot->bytes)
		return 0;
	if (!slot->sync) {
		append(fs, slot, SH_WRITE, in->ino, off, buf, len);
		return 0;
	}
	/* rw held: the file's data and size durable, then the mark. */
	int rc = bfs_writeback(fs, q, in);
	if (!rc)
		rc = bfs_jnl_commit(fs);
	if (rc) {
		bfs_shadow_unreserve(fs, slot);
		return rc;
	}
	append(fs, slot, SH_DROP, in->ino, 0, NULL, 0);
	return 0;
}

void bfs_shadow_trunc(struct blobfs *fs, struct bfs_inode *in, struct bfs_shadow_slot *slot, uint64_t size)
{
	if (slot->bytes)
		append(fs, slot, SH_TRUNC, in->ino, size, NULL, 0);
}

int bfs_shadow_cycle(struct blobfs *fs)
{
	struct bfs_shadow *s = shadow_of(fs);
	if (!s) {
		int rc = bfs_writeback_all(fs);
		if (bfs_jnl_pending(fs)) {
			int c = bfs_jnl_commit(fs);
			rc = rc ? rc : c;
		}
		return rc;
	}
	pthread_mutex_lock(&s->lock);
	uint32_t old = s->active;
	if (!s->old_pending && atomic_load(&s->h[old]->used)) {
		/* Entries from here on go to the other half; those before are covered by the
		 * write-back and commit below. */
		uint64_t base = committed_seq(fs);
		half_reset(fs, s, s->h[old ^ 1], s->h[old]->gen + 1, base);
		s->active = old ^ 1;
		s->old_pending = true;
	}
	bool pending = s->old_pending;
	pthread_mutex_unlock(&s->lock);
	int rc = bfs_writeback_all(fs);
	if (!rc && (pending || bfs_jnl_pending(fs)))
		rc = bfs_jnl_commit(fs);
	if (!rc && pending) {
		pthread_mutex_lock(&s->lock);
		struct shadow_half *h = s->h[s->active ^ 1];
		atomic_store(&h->used, 0);
		h->gen = 0;
		s->old_pending = false;
		pthread_cond_broadcast(&s->cv);
		pthread_mutex_unlock(&s->lock);
	}
	return rc;
}
