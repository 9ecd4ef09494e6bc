/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Lock files (RocksDB's LOCK): an exclusive flag on the inode, held through a handle. Only
 * one process can mount a namespace read-write, so a lock within the mount is a lock for
 * the whole system.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>

#include "bfs.h"

struct blobfs_lock {
	struct blobfs_file *f;
};

int blobfs_lock_file(struct blobfs *fs, const char *path, struct blobfs_lock **out)
{
	if (!out)
		return bfs_err(-EINVAL, "no lock pointer given");
	struct blobfs_file *f;
	int rc = blobfs_open(fs, path, fs && fs->read_only ? O_RDONLY : O_RDWR | O_CREAT, 0644, &f);
	if (rc)
		return rc;
	pthread_mutex_lock(&fs->files_lock);
	bool busy = f->in->lock_held;
	f->in->lock_held = true;
	pthread_mutex_unlock(&fs->files_lock);
	if (busy) {
		blobfs_close(f);
		return bfs_err(-EAGAIN, "'%s' is locked already", path);
	}
	struct blobfs_lock *l = malloc(sizeof(*l));
	if (!l) {
		pthread_mutex_lock(&fs->files_lock);
		f->in->lock_held = false;
		pthread_mutex_unlock(&fs->files_lock);
		blobfs_close(f);
		return bfs_err(-ENOMEM, "out of memory");
	}
	l->f = f;
	*out = l;
	return 0;
}

int blobfs_unlock_file(struct blobfs_lock *l)
{
	if (!l)
		return bfs_err(-EINVAL, "no lock given");
	struct blobfs *fs = l->f->fs;
	pthread_mutex_lock(&fs->files_lock);
	l->f->in->lock_held = false;
	pthread_mutex_unlock(&fs->files_lock);
	int rc = blobfs_close(l->f);
	free(l);
	return rc;
}
