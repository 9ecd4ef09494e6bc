/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * blobfs_tree DEVICE [SHADOW_DIR] [--blocks N]: what a crash checker needs to see of a BlobFS in one
 * process. Mounts it read-write, as a user's next mount would (the journal replays, and a
 * shadow a killed process left in SHADOW_DIR, or /dev/shm, comes back), prints the whole
 * tree, and unmounts cleanly. Output, one JSON object per line:
 *
 *   {"replayed": N, "shadow_replayed": M}
 *   {"p": "/a/b", "t": "f", "s": size, "c": "crc32 of the content", "m": mode}
 *       with --blocks N also "b": ["crc32 of each N bytes", ...] (a file written piece by
 *       piece may be any mix of its pieces after a crash)
 *   {"p": "/a", "t": "d", "m": mode}      {"p": "/l", "t": "l", "target": "..."}
 *   {"p": "/x", "t": "o", "m": mode}      (FIFOs, devices, sockets)
 *
 * Exit 0, or 1 with the reason on stderr when the mount, a read or the unmount failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "unvme/blobfs.h"

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static size_t block_bytes; /* --blocks: 0 for none */

static int dump_file(struct blobfs *fs, const char *path, const struct blobfs_stat *st)
{
	struct blobfs_file *f;
	int rc = blobfs_open(fs, path, O_RDONLY, 0, &f);
	if (rc) {
		fprintf(stderr, "blobfs_tree: open %s: %s\n", path, blobfs_errmsg());
		return rc;
	}
	static char buf[1 << 20];
	uLong crc = crc32(0, Z_NULL, 0);
	uint64_t off = 0;
	char *blocks = NULL;
	size_t blen = 0;
	FILE *bs = block_bytes ? open_memstream(&blocks, &blen) : NULL;
	size_t step = block_bytes && block_bytes < sizeof(buf) ? sizeof(buf) / block_bytes * block_bytes : sizeof(buf);
	for (;;) {
		ssize_t r = blobfs_pread(f, buf, step, off);
		if (r < 0) {
			fprintf(stderr, "blobfs_tree: read %s at %llu: %s\n", path, (unsigned long long)off,
				blobfs_errmsg());
			blobfs_close(f);
			if (bs)
				fclose(bs);
			free(blocks);
			return (int)r;
		}
		if (r == 0)
			break;
		crc = crc32(crc, (const Bytef *)buf, (uInt)r);
		for (size_t o = 0; bs && o < (size_t)r; o += block_bytes) {
			size_t n = (size_t)r - o < block_bytes ? (size_t)r - o : block_bytes;
			fprintf(bs, "%s\"%08lx\"", off + o ? ", " : "",
				crc32(crc32(0, Z_NULL, 0), (const Bytef *)buf + o, (uInt)n));
		}
		off += (uint64_t)r;
	}
	blobfs_close(f);
	if (bs)
		fclose(bs);
	printf("{\"p\": ");
	json_str(path);
	printf(", \"t\": \"f\", \"s\": %llu, \"read\": %llu, \"c\": \"%08lx\", \"m\": %u",
	       (unsigned long long)st->size, (unsigned long long)off, crc, st->mode);
	if (blocks)
		printf(", \"b\": [%s]", blocks);
	printf("}\n");
	free(blocks);
	return 0;
}

static int walk(struct blobfs *fs, const char *dir)
{
	struct blobfs_dir *d;
	int rc = blobfs_opendir(fs, dir, &d);
	if (rc) {
		fprintf(stderr, "blobfs_tree: list %s: %s\n", dir, blobfs_errmsg());
		return rc;
	}
	struct blobfs_dirent e;
	while (!rc && blobfs_readdir(d, &e) == 1) {
		char path[BLOBFS_PATH_MAX + 2];
		snprintf(path, sizeof(path), "%s/%s", strcmp(dir, "/") ? dir : "", e.name);
		struct blobfs_stat st;
		if ((rc = blobfs_stat(fs, path, &st)) != 0) {
			fprintf(stderr, "blobfs_tree: stat %s: %s\n", path, blobfs_errmsg());
			break;
		}
		if (st.type == BLOBFS_TYPE_FILE) {
			rc = dump_file(fs, path, &st);
		} else if (st.type == BLOBFS_TYPE_DIR) {
			printf("{\"p\": ");
			json_str(path);
			printf(", \"t\": \"d\", \"m\": %u}\n", st.mode);
			rc = walk(fs, path);
		} else if (st.type == BLOBFS_TYPE_SYMLINK) {
			char target[BLOBFS_PATH_MAX + 1];
			ssize_t n = blobfs_readlink(fs, path, target, sizeof(target));
			if (n < 0) {
				rc = (int)n;
				break;
			}
			printf("{\"p\": ");
			json_str(path);
			printf(", \"t\": \"l\", \"target\": ");
			json_str(target);
			printf("}\n");
		} else {
			printf("{\"p\": ");
			json_str(path);
			printf(", \"t\": \"o\", \"m\": %u}\n", st.mode);
		}
	}
	blobfs_closedir(d);
	return rc;
}

int main(int argc, char **argv)
{
	const char *pos[2] = { NULL, NULL };
	int npos = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--blocks") == 0 && i + 1 < argc) {
			long n = strtol(argv[++i], NULL, 0);
			block_bytes = n > 0 ? (size_t)n : 0;
		} else if (npos < 2) {
			pos[npos++] = argv[i];
		} else {
			npos = 3;
		}
	}
	if (npos < 1 || npos > 2 || (block_bytes && (block_bytes < 512 || block_bytes > (1u << 20)))) {
		fprintf(stderr, "usage: blobfs_tree DEVICE [SHADOW_DIR] [--blocks 512..1048576]\n");
		return 2;
	}
	struct blobfs_opts o = { .cache_size = 64u << 20 };
	if (pos[1]) {
		/* Only to find a shadow a killed process left: this mount keeps none. */
		o.shadow_dir = pos[1];
		o.shadow_size = 1u << 20;
	}
	struct blobfs *fs;
	int rc = blobfs_mount_dev(pos[0], 0, &o, &fs);
	if (rc) {
		fprintf(stderr, "blobfs_tree: mount %s: %s\n", pos[0], blobfs_errmsg());
		return 1;
	}
	struct blobfs_stats s;
	blobfs_get_stats(fs, &s);
	printf("{\"replayed\": %llu, \"shadow_replayed\": %llu}\n", (unsigned long long)s.replayed,
	       (unsigned long long)s.shadow_replayed);
	rc = walk(fs, "/");
	int u = blobfs_unmount(fs);
	if (u)
		fprintf(stderr, "blobfs_tree: unmount: %s\n", blobfs_errmsg());
	fflush(stdout);
	return rc || u ? 1 : 0;
}
