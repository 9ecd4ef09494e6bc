/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Journal records: their byte form, and how each changes the metadata. Namespace records
 * (create, unlink, rename, setattr) change the in-memory tree through the same function at
 * runtime and at replay, so what a mount rebuilds is what the running file system had. Data
 * records (map, setsize, truncate) describe state the runtime already holds (it allocated
 * the clusters and wrote the data before logging), so only replay applies them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bfs.h"

struct wr {
	uint8_t *p;
};
static void put(struct wr *w, const void *v, size_t n)
{
	if (n)
		memcpy(w->p, v, n);
	w->p += n;
}
#define PUT(w, v) put(w, &(v), sizeof(v))

struct rd {
	const uint8_t *p, *end;
	bool bad;
};
static void get(struct rd *r, void *v, size_t n)
{
	if (r->bad || (size_t)(r->end - r->p) < n) {
		r->bad = true;
		memset(v, 0, n);
		return;
	}
	memcpy(v, r->p, n);
	r->p += n;
}
#define GET(r, v) get(r, &(v), sizeof(v))
static const char *get_str(struct rd *r, size_t n)
{
	if (r->bad || (size_t)(r->end - r->p) < n) {
		r->bad = true;
		return NULL;
	}
	const char *s = (const char *)r->p;
	r->p += n;
	return s;
}

static bool is_device(uint8_t ftype)
{
	return ftype == BLOBFS_TYPE_CHR || ftype == BLOBFS_TYPE_BLK;
}

static size_t payload_size(const struct bfs_rec *r)
{
	switch (r->type) {
	case BFS_REC_CREATE:
		return 8 + 8 + 8 + 12 + 1 + 1 + 2 + 4 + r->name_len + r->link_len + (is_device(r->ftype) ? 8 : 0);
	case BFS_REC_UNLINK: return 8 + 8 + 2 + r->name_len;
	case BFS_REC_RENAME: return 8 + 8 + 8 + 2 + 2 + r->name_len + r->name2_len;
	case BFS_REC_MAP: return 8 + 8 + 8 + 4;
	case BFS_REC_SETSIZE:
	case BFS_REC_TRUNCATE: return 8 + 8 + 8 + 8;
	case BFS_REC_SETATTR: return 8 + 4 + 12 + 24;
	case BFS_REC_PUNCH: return 8 + 8 + 8 + 8 + 8;
	}
	return 0;
}

size_t bfs_rec_size(const struct bfs_rec *r)
{
	return sizeof(struct bfs_rec_hdr) + payload_size(r);
}

size_t bfs_rec_encode(const struct bfs_rec *r, uint8_t *out)
{
	struct bfs_rec_hdr h = { (uint16_t)r->type, (uint16_t)payload_size(r) };
	struct wr w = { out };
	PUT(&w, h);
	uint8_t pad = 0;
	switch (r->type) {
	case BFS_REC_CREATE:
		PUT(&w, r->ino); PUT(&w, r->parent); PUT(&w, r->ctime);
		PUT(&w, r->mode); PUT(&w, r->uid); PUT(&w, r->gid);
		PUT(&w, r->ftype); PUT(&w, pad); PUT(&w, r->name_len); PUT(&w, r->link_len);
		put(&w, r->name, r->name_len);
		put(&w, r->link, r->link_len);
		if (is_device(r->ftype))
			PUT(&w, r->rdev);
		break;
	case BFS_REC_UNLINK:
		PUT(&w, r->parent); PUT(&w, r->ctime); PUT(&w, r->name_len);
		put(&w, r->name, r->name_len);
		break;
	case BFS_REC_RENAME:
		PUT(&w, r->parent); PUT(&w, r->parent2); PUT(&w, r->ctime);
		PUT(&w, r->name_len); PUT(&w, r->name2_len);
		put(&w, r->name, r->name_len);
		put(&w, r->name2, r->name2_len);
		break;
	case BFS_REC_MAP:
		PUT(&w, r->ino); PUT(&w, r->lclu); PUT(&w, r->pclu); PUT(&w, r->count);
		break;
	case BFS_REC_SETSIZE:
	case BFS_REC_TRUNCATE:
		PUT(&w, r->ino); PUT(&w, r->size); PUT(&w, r->mtime); PUT(&w, r->ctime);
		break;
	case BFS_REC_SETATTR:
		PUT(&w, r->ino); PUT(&w, r->mask); PUT(&w, r->mode); PUT(&w, r->uid); PUT(&w, r->gid);
		PUT(&w, r->atime); PUT(&w, r->mtime); PUT(&w, r->ctime);
		break;
	case BFS_REC_PUNCH:
		PUT(&w, r->ino); PUT(&w, r->lclu); PUT(&w, r->size); PUT(&w, r->mtime); PUT(&w, r->ctime);
		break;
	}
	return (size_t)(w.p - out);
}

size_t bfs_rec_decode(const uint8_t *p, size_t avail, struct bfs_rec *r)
{
	memset(r, 0, sizeof(*r));
	struct bfs_rec_hdr h;
	if (avail < sizeof(h))
		return 0;
	memcpy(&h, p, sizeof(h));
	if (h.len > avail - sizeof(h))
		return 0;
	struct rd d = { p + sizeof(h), p + sizeof(h) + h.len, false };
	uint8_t pad;
	r->type = (enum bfs_rec_type)h.type;
	switch (r->type) {
	case BFS_REC_CREATE:
		GET(&d, r->ino); GET(&d, r->parent); GET(&d, r->ctime);
		GET(&d, r->mode); GET(&d, r->uid); GET(&d, r->gid);
		GET(&d, r->ftype); GET(&d, pad); GET(&d, r->name_len); GET(&d, r->link_len);
		r->name = get_str(&d, r->name_len);
		r->link = get_str(&d, r->link_len);
		if (is_device(r->ftype))
			GET(&d, r->rdev);
		r->atime = r->mtime = r->ctime;
		break;
	case BFS_REC_UNLINK:
		GET(&d, r->parent); GET(&d, r->ctime); GET(&d, r->name_len);
		r->name = get_str(&d, r->name_len);
		break;
	case BFS_REC_RENAME:
		GET(&d, r->parent); GET(&d, r->parent2); GET(&d, r->ctime);
		GET(&d, r->name_len); GET(&d, r->name2_len);
		r->name = get_str(&d, r->name_len);
		r->name2 = get_str(&d, r->name2_len);
		break;
	case BFS_REC_MAP:
		GET(&d, r->ino); GET(&d, r->lclu); GET(&d, r->pclu); GET(&d, r->count);
		break;
	case BFS_REC_SETSIZE:
	case BFS_REC_TRUNCATE:
		GET(&d, r->ino); GET(&d, r->size); GET(&d, r->mtime); GET(&d, r->ctime);
		break;
	case BFS_REC_SETATTR:
		GET(&d, r->ino); GET(&d, r->mask); GET(&d, r->mode); GET(&d, r->uid); GET(&d, r->gid);
		GET(&d, r->atime); GET(&d, r->mtime); GET(&d, r->ctime);
		break;
	case BFS_REC_PUNCH:
		GET(&d, r->ino); GET(&d, r->lclu); GET(&d, r->size); GET(&d, r->mtime); GET(&d, r->ctime);
		break;
	default:
		return 0;
	}
	if (d.bad || d.p != d.end)
		return 0;
	return sizeof(h) + h.len;
}

/* ---- applying ---- */

static struct bfs_inode *dir_by_ino(struct blobfs *fs, uint64_t ino, const char *what)
{
	struct bfs_inode *d = bfs_itable_find(fs, ino);
	if (!d || d->type != BLOBFS_TYPE_DIR) {
		bfs_err(BLOBFS_EBADSB, "journal: %s names directory inode %llu, which %s", what,
			(unsigned long long)ino, d ? "is not a directory" : "does not exist");
		return NULL;
	}
	return d;
}

static void touch_dir(struct bfs_inode *d, int64_t t)
{
	atomic_store(&d->mtime_ns, t);
	atomic_store(&d->ctime_ns, t);
}

/* Takes the inode out of the namespace. At replay it goes at once; at runtime the caller
 * drops the entry's reference after releasing jlock (the last one frees the clusters). */
static void detach(struct blobfs *fs, struct bfs_inode *in, bool runtime, struct bfs_inode **dropped)
{
	in->linked = false;
	bfs_meta_update(fs, in);
	bfs_itable_remove(fs, in);
	if (runtime) {
		/* Alive while open (or known to FUSE's kernel side) until its last reference. */
		in->orphan = true;
		in->oprev = NULL;
		in->onext = fs->orphans;
		if (fs->orphans)
			fs->orphans->oprev = in;
		fs->orphans = in;
		*dropped = in;
	} else {
		bfs_dir_free(in);
		bfs_inode_destroy(fs, in);
	}
}

static int apply_create(struct blobfs *fs, const struct bfs_rec *r)
{
	struct bfs_inode *parent = dir_by_ino(fs, r->parent, "create");
	if (!parent)
		return BLOBFS_EBADSB;
	if (bfs_itable_find(fs, r->ino) || bfs_dir_find(parent, r->name, r->name_len))
		return bfs_err(BLOBFS_EBADSB, "journal: create of inode %llu '%.*s' that exists",
			       (unsigned long long)r->ino, (int)r->name_len, r->name);
	if (r->ftype < BLOBFS_TYPE_FILE || r->ftype > (fs->sb.version >= 2 ? BFS_TYPE_MAX : BLOBFS_TYPE_SYMLINK) ||
	    r->ino == 0 || r->name_len == 0 || (r->ftype == BLOBFS_TYPE_SYMLINK) != (r->link_len > 0))
		return bfs_err(BLOBFS_EBADSB, "journal: create of inode %llu '%.*s' with type %u%s",
			       (unsigned long long)r->ino, (int)r->name_len, r->name, r->ftype,
			       r->ftype == BLOBFS_TYPE_SYMLINK ? " and no target" : "");
	struct bfs_inode *in = bfs_inode_new(fs, r->ino, r->ftype);
	if (!in)
		return -ENOMEM;
	in->mode = r->mode;
	in->uid = r->uid;
	in->gid = r->gid;
	in->rdev = r->rdev;
	atomic_store(&in->atime_ns, r->ctime);
	atomic_store(&in->mtime_ns, r->ctime);
	atomic_store(&in->ctime_ns, r->ctime);
	in->logged_mtime = r->ctime;
	if (r->ftype == BLOBFS_TYPE_SYMLINK) {
		in->link = malloc(r->link_len + 1u);
		if (!in->link) {
			bfs_inode_destroy(fs, in);
			return bfs_err(-ENOMEM, "out of memory");
		}
		memcpy(in->link, r->link, r->link_len);
		in->link[r->link_len] = '\0';
		atomic_store(&in->size, r->link_len);
		in->logged_size = r->link_len;
	}
	int rc = bfs_itable_insert(fs, in);
	if (!rc) {
		rc = bfs_dir_add(parent, r->name, r->name_len, in);
		if (rc)
			bfs_itable_remove(fs, in);
	}
	if (rc) {
		bfs_inode_destroy(fs, in);
		return rc;
	}
	in->linked = true;
	atomic_store(&in->refs, 1);
	if (r->ino >= fs->next_ino)
		fs->next_ino = r->ino + 1;
	touch_dir(parent, r->ctime);
	bfs_meta_update(fs, in);
	return 0;
}

static int apply_unlink(struct blobfs *fs, const struct bfs_rec *r, bool runtime,
			struct bfs_inode **dropped)
{
	struct bfs_inode *parent = dir_by_ino(fs, r->parent, "unlink");
	if (!parent)
		return BLOBFS_EBADSB;
	struct bfs_inode *child = bfs_dir_find(parent, r->name, r->name_len);
	if (!child)
		return bfs_err(BLOBFS_EBADSB, "journal: unlink of '%.*s' that does not exist",
			       (int)r->name_len, r->name);
	if (child->type == BLOBFS_TYPE_DIR && child->dir.n)
		return bfs_err(BLOBFS_EBADSB, "journal: removal of directory '%.*s' that has entries",
			       (int)r->name_len, r->name);
	bfs_dir_remove(parent, r->name, r->name_len);
	touch_dir(parent, r->ctime);
	detach(fs, child, runtime, dropped);
	return 0;
}

static bool is_ancestor(const struct bfs_inode *a, const struct bfs_inode *d)
{
	for (; d; d = d->parent)
		if (d == a)
			return true;
	return false;
}

static int apply_rename(struct blobfs *fs, const struct bfs_rec *r, bool runtime,
			struct bfs_inode **dropped)
{
	struct bfs_inode *sp = dir_by_ino(fs, r->parent, "rename");
	struct bfs_inode *dp = dir_by_ino(fs, r->parent2, "rename");
	if (!sp || !dp)
		return BLOBFS_EBADSB;
	struct bfs_inode *src = bfs_dir_find(sp, r->name, r->name_len);
	if (!src)
		return bfs_err(BLOBFS_EBADSB, "journal: rename of '%.*s' that does not exist",
			       (int)r->name_len, r->name);
	if (src->type == BLOBFS_TYPE_DIR && is_ancestor(src, dp))
		return bfs_err(BLOBFS_EBADSB, "journal: rename of a directory into itself");
	struct bfs_inode *dst = bfs_dir_find(dp, r->name2, r->name2_len);
	if (dst == src)
		return 0;
	if (dst && dst->type == BLOBFS_TYPE_DIR && dst->dir.n)
		return bfs_err(BLOBFS_EBADSB, "journal: rename over directory '%.*s' that has entries",
			       (int)r->name2_len, r->name2);
	if (dst) {
		bfs_dir_remove(dp, r->name2, r->name2_len);
		detach(fs, dst, runtime, dropped);
	}
	bfs_dir_remove(sp, r->name, r->name_len);
	int rc = bfs_dir_add(dp, r->name2, r->name2_len, src);
	if (rc)
		return rc; /* out of memory: the caller cannot undo; the mount is failing anyway */
	bfs_meta_update(fs, src);
	atomic_store(&src->ctime_ns, r->ctime);
	touch_dir(sp, r->ctime);
	touch_dir(dp, r->ctime);
	return 0;
}

static int apply_setattr(struct blobfs *fs, const struct bfs_rec *r)
{
	struct bfs_inode *in = bfs_itable_find(fs, r->ino);
	if (!in)
		return bfs_err(BLOBFS_EBADSB, "journal: setattr of inode %llu that does not exist",
			       (unsigned long long)r->ino);
	if (r->mask & BLOBFS_SET_MODE)
		in->mode = r->mode;
	if (r->mask & BLOBFS_SET_UID)
		in->uid = r->uid;
	if (r->mask & BLOBFS_SET_GID)
		in->gid = r->gid;
	if (r->mask & BLOBFS_SET_ATIME)
		atomic_store(&in->atime_ns, r->atime);
	if (r->mask & BLOBFS_SET_MTIME) {
		atomic_store(&in->mtime_ns, r->mtime);
		in->logged_mtime = r->mtime;
	}
	atomic_store(&in->ctime_ns, r->ctime);
	return 0;
}

int bfs_rec_apply_ns(struct blobfs *fs, const struct bfs_rec *r, bool runtime,
		     struct bfs_inode **dropped)
{
	int rc;
	if (dropped)
		*dropped = NULL;
	switch (r->type) {
	case BFS_REC_CREATE: rc = apply_create(fs, r); break;
	case BFS_REC_UNLINK: rc = apply_unlink(fs, r, runtime, dropped); break;
	case BFS_REC_RENAME: rc = apply_rename(fs, r, runtime, dropped); break;
	case BFS_REC_SETATTR: rc = apply_setattr(fs, r); break;
	default: return bfs_err(-EINVAL, "record type %d is not a namespace record", r->type);
	}
	return rc;
}

/* Replay of the data records on the loaded state (single threaded, at mount). */
int bfs_rec_replay_data(struct blobfs *fs, const struct bfs_rec *r)
{
	struct bfs_inode *in = bfs_itable_find(fs, r->ino);
	if (!in)
		return bfs_err(BLOBFS_EBADSB, "journal: record %d for inode %llu that does not exist",
			       r->type, (unsigned long long)r->ino);
	uint64_t cs = fs->g.cluster_size;
	if (in->type != BLOBFS_TYPE_FILE)
		return bfs_err(BLOBFS_EBADSB, "journal: record %d for inode %llu, which is not a file",
			       r->type, (unsigned long long)r->ino);
	switch (r->type) {
	case BFS_REC_PUNCH:
		if (r->size > BLOBFS_FILE_MAX / cs || r->lclu > BLOBFS_FILE_MAX / cs)
			return bfs_err(BLOBFS_EBADSB, "journal: punch of clusters %llu+%llu past the largest file",
				       (unsigned long long)r->lclu, (unsigned long long)r->size);
		if (bfs_ext_punch(&in->ext, r->lclu, r->size, 0, NULL, NULL))
			return bfs_err(-ENOMEM, "out of memory replaying a punch");
		atomic_store(&in->mtime_ns, r->mtime);
		atomic_store(&in->ctime_ns, r->ctime);
		in->logged_mtime = r->mtime;
		bfs_meta_update(fs, in);
		return 0;
	case BFS_REC_MAP: {
		if (r->count == 0 || r->pclu >= fs->g.nclusters || r->count > fs->g.nclusters - r->pclu)
			return bfs_err(BLOBFS_EBADSB, "journal: map of clusters %llu+%u outside the data area",
				       (unsigned long long)r->pclu, r->count);
		int rc = bfs_ext_add(&in->ext, r->lclu, r->pclu, r->count, 0);
		if (rc)
			return rc == -EEXIST ? bfs_err(BLOBFS_EBADSB, "journal: inode %llu maps file cluster "
						       "%llu twice", (unsigned long long)r->ino,
						       (unsigned long long)r->lclu) : rc;
		bfs_meta_update(fs, in);
		return 0;
	}
	case BFS_REC_SETSIZE:
	case BFS_REC_TRUNCATE:
		atomic_store(&in->size, r->size);
		in->logged_size = r->size;
		atomic_store(&in->mtime_ns, r->mtime);
		atomic_store(&in->ctime_ns, r->ctime);
		in->logged_mtime = r->mtime;
		if (r->type == BFS_REC_TRUNCATE) {
			bfs_ext_trim(&in->ext, (r->size + cs - 1) / cs, NULL, NULL);
			bfs_meta_update(fs, in);
		}
		return 0;
	default:
		return bfs_err(BLOBFS_EBADSB, "journal: unknown record type %d", r->type);
	}
}
