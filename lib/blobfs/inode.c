/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Inodes in memory: the table by number, reference counting, and directory entry tables.
 * All metadata lives in memory while mounted (the checkpoint and journal are its durable
 * form), so a lookup never reads the device.
 *
 * References: a linked inode holds one for its directory entry, each open handle one, and
 * background work (write-back, readahead) one while it runs. Unlink drops the entry's
 * reference; the last reference of an unlinked inode releases its clusters and cache.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bfs.h"

struct bfs_inode *bfs_inode_new(struct blobfs *fs, uint64_t ino, uint8_t type)
{
	struct bfs_inode *in = calloc(1, sizeof(*in));
	if (!in) {
		bfs_err(-ENOMEM, "out of memory for an inode");
		return NULL;
	}
	in->ino = ino;
	in->type = type;
	in->last_pclu_end = UINT64_MAX;
	atomic_init(&in->refs, 0);
	atomic_init(&in->size, 0);
	pthread_rwlock_init(&in->rw, NULL);
	pthread_mutex_init(&in->cache_lock, NULL);
	pthread_cond_init(&in->cache_cv, NULL);
	(void)fs;
	return in;
}

void bfs_inode_destroy(struct blobfs *fs, struct bfs_inode *in)
{
	(void)fs;
	bfs_ext_free(&in->ext);
	bfs_dir_free(in);
	free(in->link);
	free(in->units.keys);
	free(in->units.vals);
	pthread_rwlock_destroy(&in->rw);
	pthread_mutex_destroy(&in->cache_lock);
	pthread_cond_destroy(&in->cache_cv);
	free(in);
}

void bfs_inode_ref(struct bfs_inode *in)
{
	atomic_fetch_add(&in->refs, 1);
}

/* An unlinked inode's cached data goes, dirty or not: nothing will write it back. */
static void drop_cached(struct blobfs *fs, struct bfs_inode *in)
{
	bfs_dirty_list_remove(fs, in);
	pthread_mutex_lock(&in->cache_lock);
	bfs_cache_drop_from(fs, in, 0, false);
	pthread_mutex_unlock(&in->cache_lock);
}

/* The last reference of an unlinked inode: nobody can reach it any more. */
void bfs_inode_release(struct blobfs *fs, struct bfs_inode *in)
{
	drop_cached(fs, in);
	pthread_mutex_lock(&fs->jlock);
	if (in->orphan) {
		if (in->oprev)
			in->oprev->onext = in->onext;
		else
			fs->orphans = in->onext;
		if (in->onext)
			in->onext->oprev = in->oprev;
		in->orphan = false;
	}
	if (!fs->read_only)
		bfs_ext_trim(&in->ext, 0, bfs_free_range, fs);
	pthread_mutex_unlock(&fs->jlock);
	bfs_inode_destroy(fs, in);
}

void bfs_orphans_reclaim(struct blobfs *fs)
{
	if (fs->read_only)
		return;
	size_t n = 0, cap = 0;
	struct bfs_inode **v = NULL;
	pthread_mutex_lock(&fs->files_lock);
	pthread_mutex_lock(&fs->jlock);
	for (struct bfs_inode *in = fs->orphans; in; in = in->onext) {
		if (in->nopen || in->reclaimed || !atomic_load(&in->refs))
			continue; /* open, done already, or being released */
		if (n == cap) {
			struct bfs_inode **nv = realloc(v, (cap = cap ? cap * 2 : 16) * sizeof(*v));
			if (!nv)
				break;
			v = nv;
		}
		/* Never waits for rw under these locks: one held belongs to a write-back (which
		 * finds nothing to write afterwards) or the caller's own inode; it is left. */
		if (pthread_rwlock_trywrlock(&in->rw))
			continue;
		in->reclaimed = true;
		bfs_inode_ref(in);
		v[n++] = in;
	}
	pthread_mutex_unlock(&fs->jlock);
	pthread_mutex_unlock(&fs->files_lock);
	for (size_t i = 0; i < n; i++) {
		struct bfs_inode *in = v[i];
		drop_cached(fs, in);
		pthread_mutex_lock(&fs->jlock);
		bfs_ext_trim(&in->ext, 0, bfs_free_range, fs);
		pthread_mutex_unlock(&fs->jlock);
		pthread_rwlock_unlock(&in->rw);
		bfs_inode_unref(fs, in);
	}
	free(v);
}

void bfs_inode_unref(struct blobfs *fs, struct bfs_inode *in)
{
	if (atomic_fetch_sub(&in->refs, 1) == 1)
		bfs_inode_release(fs, in);
}

/* ---- the inode table ---- */

static uint64_t ihash(uint64_t ino, uint64_t cap)
{
	return (ino * 0x9e3779b97f4a7c15ull) >> 20 & (cap - 1);
}

static int itab_grow(struct blobfs *fs)
{
	uint64_t cap = fs->itab_cap ? fs->itab_cap * 2 : 1024;
	struct bfs_inode **t = calloc(cap, sizeof(*t));
	if (!t)
		return bfs_err(-ENOMEM, "out of memory for the inode table");
	for (uint64_t i = 0; i < fs->itab_cap; i++) {
		struct bfs_inode *in = fs->itab[i];
		while (in) {
			struct bfs_inode *next = in->hnext;
			uint64_t h = ihash(in->ino, cap);
			in->hnext = t[h];
			t[h] = in;
			in = next;
		}
	}
	free(fs->itab);
	fs->itab = t;
	fs->itab_cap = cap;
	return 0;
}

struct bfs_inode *bfs_itable_find(struct blobfs *fs, uint64_t ino)
{
	if (!fs->itab_cap)
		return NULL;
	for (struct bfs_inode *in = fs->itab[ihash(ino, fs->itab_cap)]; in; in = in->hnext)
		if (in->ino == ino)
			return in;
	return NULL;
}

int bfs_itable_insert(struct blobfs *fs, struct bfs_inode *in)
{
	if (fs->itab_n + 1 > fs->itab_cap) {
		int rc = itab_grow(fs);
		if (rc)
			return rc;
	}
	uint64_t h = ihash(in->ino, fs->itab_cap);
	in->hnext = fs->itab[h];
	fs->itab[h] = in;
	fs->itab_n++;
	return 0;
}

void bfs_itable_remove(struct blobfs *fs, struct bfs_inode *in)
{
	struct bfs_inode **pp = &fs->itab[ihash(in->ino, fs->itab_cap)];
	while (*pp && *pp != in)
		pp = &(*pp)->hnext;
	if (*pp) {
		*pp = in->hnext;
		fs->itab_n--;
	}
	in->hnext = NULL;
}

void bfs_itable_each(struct blobfs *fs, void (*fn)(void *arg, struct bfs_inode *in), void *arg)
{
	for (uint64_t i = 0; i < fs->itab_cap; i++) {
		struct bfs_inode *in = fs->itab[i];
		while (in) {
			struct bfs_inode *next = in->hnext; /* fn may free in */
			fn(arg, in);
			in = next;
		}
	}
}

uint64_t bfs_inode_meta_est(const struct bfs_inode *in)
{
	uint64_t n = sizeof(struct bfs_ckpt_inode) + in->name_len + (in->link ? strlen(in->link) : 0) + 8;
	return n + bfs_ext_clusters_count(&in->ext, BFS_UNLOGGED, 0) * sizeof(struct bfs_extent_disk);
}

void bfs_meta_update(struct blobfs *fs, struct bfs_inode *in)
{
	uint64_t est = in->linked ? bfs_inode_meta_est(in) : 0;
	if (est >= in->meta_est)
		atomic_fetch_add(&fs->meta_bytes, est - in->meta_est);
	else
		atomic_fetch_sub(&fs->meta_bytes, in->meta_est - est);
	in->meta_est = est;
}

/* ---- directory entries ---- */

uint32_t bfs_name_hash(const char *name, size_t len)
{
	uint32_t h = 2166136261u; /* FNV-1a */
	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)name[i]) * 16777619u;
	return h;
}

struct bfs_inode *bfs_dir_find(const struct bfs_inode *dir, const char *name, size_t len)
{
	if (!dir->dir.nb)
		return NULL;
	uint32_t h = bfs_name_hash(name, len);
	for (struct bfs_dirent_mem *e = dir->dir.b[h & (dir->dir.nb - 1)]; e; e = e->next)
		if (e->hash == h && e->len == len && memcmp(e->name, name, len) == 0)
			return e->inode;
	return NULL;
}

static int dir_grow(struct bfs_dirtab *t)
{
	uint32_t nb = t->nb ? t->nb * 2 : 8;
	struct bfs_dirent_mem **b = calloc(nb, sizeof(*b));
	if (!b)
		return bfs_err(-ENOMEM, "out of memory for a directory");
	for (uint32_t i = 0; i < t->nb; i++) {
		struct bfs_dirent_mem *e = t->b[i];
		while (e) {
			struct bfs_dirent_mem *next = e->next;
			e->next = b[e->hash & (nb - 1)];
			b[e->hash & (nb - 1)] = e;
			e = next;
		}
	}
	free(t->b);
	t->b = b;
	t->nb = nb;
	return 0;
}

int bfs_dir_add(struct bfs_inode *dir, const char *name, size_t len, struct bfs_inode *child)
{
	struct bfs_dirtab *t = &dir->dir;
	if (t->n + 1 > t->nb) {
		int rc = dir_grow(t);
		if (rc)
			return rc;
	}
	struct bfs_dirent_mem *e = malloc(sizeof(*e) + len + 1);
	if (!e)
		return bfs_err(-ENOMEM, "out of memory for a directory entry");
	e->inode = child;
	e->hash = bfs_name_hash(name, len);
	e->len = (uint16_t)len;
	memcpy(e->name, name, len);
	e->name[len] = '\0';
	e->next = t->b[e->hash & (t->nb - 1)];
	t->b[e->hash & (t->nb - 1)] = e;
	t->n++;
	if (child->type == BLOBFS_TYPE_DIR)
		t->nsubdirs++;
	child->parent = dir;
	child->name = e->name;
	child->name_len = (uint16_t)len;
	return 0;
}

struct bfs_inode *bfs_dir_remove(struct bfs_inode *dir, const char *name, size_t len)
{
	struct bfs_dirtab *t = &dir->dir;
	if (!t->nb)
		return NULL;
	uint32_t h = bfs_name_hash(name, len);
	struct bfs_dirent_mem **pp = &t->b[h & (t->nb - 1)];
	for (; *pp; pp = &(*pp)->next) {
		struct bfs_dirent_mem *e = *pp;
		if (e->hash == h && e->len == len && memcmp(e->name, name, len) == 0) {
			struct bfs_inode *child = e->inode;
			*pp = e->next;
			t->n--;
			if (child->type == BLOBFS_TYPE_DIR)
				t->nsubdirs--;
			child->parent = NULL;
			child->name = NULL;
			child->name_len = 0;
			free(e);
			return child;
		}
	}
	return NULL;
}

void bfs_dir_free(struct bfs_inode *dir)
{
	struct bfs_dirtab *t = &dir->dir;
	for (uint32_t i = 0; i < t->nb; i++) {
		struct bfs_dirent_mem *e = t->b[i];
		while (e) {
			struct bfs_dirent_mem *next = e->next;
			free(e);
			e = next;
		}
	}
	free(t->b);
	memset(t, 0, sizeof(*t));
}

void bfs_dir_each(struct bfs_inode *dir, void (*fn)(void *arg, const char *name, size_t len,
						       struct bfs_inode *child), void *arg)
{
	struct bfs_dirtab *t = &dir->dir;
	for (uint32_t i = 0; i < t->nb; i++)
		for (struct bfs_dirent_mem *e = t->b[i]; e; e = e->next)
			fn(arg, e->name, e->len, e->inode);
}
