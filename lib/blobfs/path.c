/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Paths: '/'-separated names from the root ("a/b" and "/a/b" are the same; repeated slashes
 * are one). "." and ".." are refused rather than interpreted: callers (FUSE, RocksDB) pass
 * normalized paths, and a file system that resolved them itself would have to define what
 * ".." of a renamed-away directory means. Symlinks are not followed (see blobfs.h).
 */
#include <errno.h>
#include <string.h>

#include "bfs.h"

int bfs_name_check(const char *name, size_t len)
{
	if (len == 0)
		return bfs_err(-EINVAL, "empty file name");
	if (len > BLOBFS_NAME_MAX)
		return bfs_err(-ENAMETOOLONG, "name '%.40s...' is %zu bytes; at most %u are allowed",
			       name, len, BLOBFS_NAME_MAX);
	if ((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.'))
		return bfs_err(-EINVAL, "'.' and '..' are not accepted in BlobFS paths");
	if (memchr(name, '\0', len))
		return bfs_err(-EINVAL, "file name contains a NUL byte");
	return 0;
}

int bfs_path_resolve(struct blobfs *fs, const char *path, struct bfs_path *out)
{
	memset(out, 0, sizeof(*out));
	if (!path)
		return bfs_err(-EINVAL, "no path given");
	size_t plen = strnlen(path, BLOBFS_PATH_MAX + 1);
	if (plen > BLOBFS_PATH_MAX)
		return bfs_err(-ENAMETOOLONG, "path is longer than %u bytes", BLOBFS_PATH_MAX);
	struct bfs_inode *cur = fs->root;
	const char *p = path;
	while (*p == '/')
		p++;
	if (!*p) {
		out->inode = fs->root;
		out->name = "";
		return 0;
	}
	for (;;) {
		const char *end = strchr(p, '/');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		const char *next = end;
		while (next && *next == '/')
			next++;
		bool last = !next || !*next;
		int rc = bfs_name_check(p, len);
		if (rc)
			return rc;
		struct bfs_inode *child = bfs_dir_find(cur, p, len);
		if (last) {
			out->parent = cur;
			out->inode = child;
			out->name = p;
			out->name_len = len;
			return 0;
		}
		if (!child)
			return bfs_err(-ENOENT, "'%.*s' in '%s' does not exist", (int)len, p, path);
		if (child->type != BLOBFS_TYPE_DIR)
			return bfs_err(-ENOTDIR, "'%.*s' in '%s' is not a directory", (int)len, p, path);
		cur = child;
		p = next;
	}
}
