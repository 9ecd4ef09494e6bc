/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * unvme fs: the small commands a user reaches for to look inside a BlobFS without mounting
 * it with FUSE (ls, tree, stat, cat, get, put, cp, mv, rm, mkdir, df). Each run mounts the
 * file system for the one command (read-only for the commands that only look) and
 * unmounts it cleanly.
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cmd_blobfs.h"
#include "unvme/blobfs.h"

#define IOBUF (1u << 20)

struct fsargs {
	const char *dev;
	const char *sub;
	const char *pos[64];
	int npos;
	uint32_t nsid;
	bool json, longfmt, recursive, parents;
};

static const char *const subs[] = { "ls", "tree", "stat", "cat", "get", "put", "cp", "mv",
				    "rm", "mkdir", "df", NULL };
static const char *const readonly_subs[] = { "ls", "tree", "stat", "cat", "get", "df", NULL };

static bool in_list(const char *s, const char *const *l)
{
	for (; *l; l++)
		if (strcmp(s, *l) == 0)
			return true;
	return false;
}

static int parse(int argc, char **argv, struct fsargs *a)
{
	memset(a, 0, sizeof(*a));
	const char *words[66];
	int nw = 0;
	bool done = false;
	for (int i = 1; i < argc; i++) {
		const char *s = argv[i];
		if (!done && strcmp(s, "--") == 0) {
			done = true;
		} else if (!done && (strcmp(s, "-n") == 0 || strcmp(s, "--namespace-id") == 0)) {
			uint64_t v;
			if (i + 1 >= argc || !cli_parse_u64(argv[++i], &v) || v > UINT32_MAX)
				return cli_fail("fs", EXIT_USAGE, "option -n needs a namespace id");
			a->nsid = (uint32_t)v;
		} else if (!done && (strcmp(s, "-o") == 0 || strcmp(s, "--output-format") == 0)) {
			if (i + 1 >= argc)
				return cli_fail("fs", EXIT_USAGE, "option -o needs normal or json");
			const char *f = argv[++i];
			if (strcmp(f, "json") && strcmp(f, "normal"))
				return cli_fail("fs", EXIT_USAGE, "output format '%s' is not normal or json", f);
			a->json = strcmp(f, "json") == 0;
		} else if (!done && strcmp(s, "-l") == 0) {
			a->longfmt = true;
		} else if (!done && strcmp(s, "-r") == 0) {
			a->recursive = true;
		} else if (!done && strcmp(s, "-p") == 0) {
			a->parents = true;
		} else if (!done && s[0] == '-' && s[1]) {
			return cli_fail("fs", EXIT_USAGE, "unknown option '%s' (see 'unvme fs --help')", s);
		} else {
			if (nw == 66)
				return cli_fail("fs", EXIT_USAGE, "too many arguments");
			words[nw++] = s;
		}
	}
	int k = 0;
	if (nw > 0 && !in_list(words[0], subs))
		a->dev = words[k++];
	else
		a->dev = cli_default_device;
	if (k >= nw)
		return cli_fail("fs", EXIT_USAGE, "no command given (see 'unvme fs --help')");
	a->sub = words[k++];
	if (!in_list(a->sub, subs))
		return cli_fail("fs", EXIT_USAGE, "unknown fs command '%s' (see 'unvme fs --help')", a->sub);
	for (; k < nw; k++) {
		if (a->npos == 64)
			return cli_fail("fs", EXIT_USAGE, "too many paths");
		a->pos[a->npos++] = words[k];
	}
	return EXIT_OK;
}

static int need(const struct fsargs *a, int lo, int hi)
{
	if (a->npos < lo || a->npos > hi)
		return cli_fail("fs", EXIT_USAGE, "'fs %s' takes %d%s%d path%s (see 'unvme fs --help')", a->sub,
				lo, hi > lo ? " to " : "", hi, hi == 1 ? "" : "s");
	return EXIT_OK;
}

static const char *type_name(enum blobfs_type t)
{
	switch (t) {
	case BLOBFS_TYPE_DIR: return "directory";
	case BLOBFS_TYPE_SYMLINK: return "symlink";
	case BLOBFS_TYPE_FIFO: return "fifo";
	case BLOBFS_TYPE_CHR: return "character device";
	case BLOBFS_TYPE_BLK: return "block device";
	case BLOBFS_TYPE_SOCK: return "socket";
	default: return "file";
	}
}

/* The first letter of `ls -l`. */
static char type_letter(enum blobfs_type t)
{
	static const char letters[] = "?-dlpcbs";
	return (unsigned)t < sizeof(letters) - 1 ? letters[t] : '?';
}

static void fmt_time(int64_t ns, char *out, size_t len)
{
	time_t t = (time_t)(ns / 1000000000);
	struct tm tm;
	localtime_r(&t, &tm);
	strftime(out, len, "%Y-%m-%d %H:%M:%S", &tm);
}

static struct json_object *stat_json(const char *path, const struct blobfs_stat *st)
{
	struct json_object *j = json_object_new_object();
	json_object_object_add(j, "path", json_object_new_string(path));
	json_object_object_add(j, "ino", json_object_new_int64((int64_t)st->ino));
	json_object_object_add(j, "type", json_object_new_string(type_name(st->type)));
	json_object_object_add(j, "mode", json_object_new_int64(st->mode));
	json_object_object_add(j, "size", json_object_new_int64((int64_t)st->size));
	json_object_object_add(j, "blocks", json_object_new_int64((int64_t)st->blocks));
	json_object_object_add(j, "nlink", json_object_new_int64(st->nlink));
	json_object_object_add(j, "uid", json_object_new_int64(st->uid));
	json_object_object_add(j, "gid", json_object_new_int64(st->gid));
	json_object_object_add(j, "mtime_ns", json_object_new_int64(st->mtime_ns));
	if (st->type == BLOBFS_TYPE_CHR || st->type == BLOBFS_TYPE_BLK)
		json_object_object_add(j, "rdev", json_object_new_int64((int64_t)st->rdev));
	return j;
}

static void join(char *out, size_t len, const char *dir, const char *name)
{
	size_t dl = strlen(dir);
	int n = snprintf(out, len, "%s%s", dir, dl && dir[dl - 1] == '/' ? "" : "/");
	if (n >= 0 && (size_t)n < len)
		strncat(out + n, name, len - (size_t)n - 1);
}

static int do_ls(struct blobfs *fs, const struct fsargs *a)
{
	const char *path = a->npos ? a->pos[0] : "/";
	struct blobfs_stat st;
	int rc = blobfs_stat(fs, path, &st);
	if (rc)
		return cli_fs_result("fs ls", rc);
	struct json_object *arr = a->json ? json_object_new_array() : NULL;
	if (st.type != BLOBFS_TYPE_DIR) {
		if (arr) {
			json_object_array_add(arr, stat_json(path, &st));
			cli_json_print(arr);
		} else {
			printf("%s\n", path);
		}
		return EXIT_OK;
	}
	struct blobfs_dir *d;
	rc = blobfs_opendir(fs, path, &d);
	if (rc)
		return cli_fs_result("fs ls", rc);
	struct blobfs_dirent e;
	while (blobfs_readdir(d, &e) == 1) {
		char full[BLOBFS_PATH_MAX + 260];
		join(full, sizeof(full), path, e.name);
		struct blobfs_stat es;
		if (blobfs_stat(fs, full, &es) != 0)
			continue;
		if (arr) {
			struct json_object *j = stat_json(full, &es);
			json_object_object_add(j, "name", json_object_new_string(e.name));
			json_object_array_add(arr, j);
		} else if (a->longfmt) {
			char t[32];
			fmt_time(es.mtime_ns, t, sizeof(t));
			printf("%c%04o %5u %5u %12llu %s %s%s\n", type_letter(es.type), es.mode, es.uid, es.gid,
			       (unsigned long long)es.size, t, e.name, es.type == BLOBFS_TYPE_DIR ? "/" : "");
		} else {
			printf("%s%s\n", e.name, es.type == BLOBFS_TYPE_DIR ? "/" : "");
		}
	}
	blobfs_closedir(d);
	if (arr)
		cli_json_print(arr);
	return EXIT_OK;
}

static int walk(struct blobfs *fs, const char *path, int (*fn)(struct blobfs *, const char *,
							       const struct blobfs_stat *, void *),
		void *arg, bool dirs_after)
{
	struct blobfs_stat st;
	int rc = blobfs_stat(fs, path, &st);
	if (rc)
		return rc;
	if (!dirs_after && (rc = fn(fs, path, &st, arg)) != 0)
		return rc;
	if (st.type == BLOBFS_TYPE_DIR) {
		struct blobfs_dir *d;
		if ((rc = blobfs_opendir(fs, path, &d)) != 0)
			return rc;
		struct blobfs_dirent e;
		while (!rc && blobfs_readdir(d, &e) == 1) {
			char *full = malloc(BLOBFS_PATH_MAX + 260);
			join(full, BLOBFS_PATH_MAX + 260, path, e.name);
			rc = walk(fs, full, fn, arg, dirs_after);
			free(full);
		}
		blobfs_closedir(d);
	}
	if (!rc && dirs_after)
		rc = fn(fs, path, &st, arg);
	return rc;
}

static int print_tree(struct blobfs *fs, const char *path, const struct blobfs_stat *st, void *arg)
{
	(void)fs;
	struct json_object *arr = arg;
	if (arr)
		json_object_array_add(arr, stat_json(path, st));
	else
		printf("%12llu %s%s\n", (unsigned long long)st->size, path,
		       st->type == BLOBFS_TYPE_DIR && path[strlen(path) - 1] != '/' ? "/" : "");
	return 0;
}

static int do_stat(struct blobfs *fs, const struct fsargs *a)
{
	struct blobfs_stat st;
	int rc = blobfs_stat(fs, a->pos[0], &st);
	if (rc)
		return cli_fs_result("fs stat", rc);
	if (a->json) {
		cli_json_print(stat_json(a->pos[0], &st));
		return EXIT_OK;
	}
	char m[32], c[32];
	fmt_time(st.mtime_ns, m, sizeof(m));
	fmt_time(st.ctime_ns, c, sizeof(c));
	printf("  path: %s\n  type: %s\n inode: %llu\n  size: %llu\nblocks: %llu (4 KiB)\n  mode: %04o  "
	       "uid: %u  gid: %u  links: %u\nmodify: %s\nchange: %s\n", a->pos[0], type_name(st.type),
	       (unsigned long long)st.ino, (unsigned long long)st.size, (unsigned long long)st.blocks,
	       st.mode, st.uid, st.gid, st.nlink, m, c);
	if (st.type == BLOBFS_TYPE_SYMLINK) {
		char t[BLOBFS_PATH_MAX + 1];
		if (blobfs_readlink(fs, a->pos[0], t, sizeof(t)) >= 0)
			printf("target: %s\n", t);
	}
	if (st.type == BLOBFS_TYPE_CHR || st.type == BLOBFS_TYPE_BLK)
		printf("device: %u, %u\n", major((dev_t)st.rdev), minor((dev_t)st.rdev));
	return EXIT_OK;
}

/* Copies a BlobFS file to fd. */
static int copy_out(struct blobfs *fs, const char *path, int fd, const char *what)
{
	struct blobfs_file *f;
	int rc = blobfs_open(fs, path, O_RDONLY, 0, &f);
	if (rc)
		return cli_fs_result(what, rc);
	char *buf = malloc(IOBUF);
	ssize_t n;
	int ex = EXIT_OK;
	while ((n = blobfs_read(f, buf, IOBUF)) > 0) {
		for (ssize_t o = 0; o < n;) {
			ssize_t w = write(fd, buf + o, (size_t)(n - o));
			if (w < 0) {
				ex = cli_fail(what, EXIT_HOST, "write: %s", strerror(errno));
				n = -1;
				break;
			}
			o += w;
		}
		if (ex)
			break;
	}
	if (n < 0 && !ex)
		ex = cli_fs_result(what, (int)n);
	free(buf);
	blobfs_close(f);
	return ex;
}

static int copy_in(struct blobfs *fs, int fd, const char *path, const char *what)
{
	struct blobfs_file *f;
	int rc = blobfs_open(fs, path, O_WRONLY | O_CREAT | O_TRUNC, 0644, &f);
	if (rc)
		return cli_fs_result(what, rc);
	char *buf = malloc(IOBUF);
	int ex = EXIT_OK;
	for (;;) {
		ssize_t n = read(fd, buf, IOBUF);
		if (n < 0) {
			ex = cli_fail(what, EXIT_HOST, "read: %s", strerror(errno));
			break;
		}
		if (n == 0)
			break;
		ssize_t w = blobfs_write(f, buf, (size_t)n);
		if (w != n) {
			ex = cli_fs_result(what, w < 0 ? (int)w : -EIO);
			break;
		}
	}
	if (!ex)
		ex = cli_fs_result(what, blobfs_fsync(f));
	free(buf);
	int c = blobfs_close(f);
	return ex ? ex : cli_fs_result(what, c);
}

static int do_get(struct blobfs *fs, const struct fsargs *a)
{
	const char *src = a->pos[0];
	char *dup = strdup(src);
	const char *dst = a->npos > 1 ? a->pos[1] : basename(dup);
	int ex;
	if (strcmp(dst, "-") == 0) {
		ex = copy_out(fs, src, STDOUT_FILENO, "fs get");
	} else {
		int fd = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0) {
			ex = cli_fail("fs get", EXIT_HOST, "cannot create %s: %s", dst, strerror(errno));
		} else {
			ex = copy_out(fs, src, fd, "fs get");
			if (close(fd) != 0 && !ex)
				ex = cli_fail("fs get", EXIT_HOST, "%s: %s", dst, strerror(errno));
		}
	}
	free(dup);
	return ex;
}

static int do_put(struct blobfs *fs, const struct fsargs *a)
{
	const char *src = a->pos[0];
	char *dup = strdup(src);
	char dst[BLOBFS_PATH_MAX + 260];
	if (a->npos > 1)
		snprintf(dst, sizeof(dst), "%s", a->pos[1]);
	else
		join(dst, sizeof(dst), "/", strcmp(src, "-") ? basename(dup) : "stdin");
	struct blobfs_stat st;
	if (blobfs_stat(fs, dst, &st) == 0 && st.type == BLOBFS_TYPE_DIR) {
		char tmp[sizeof(dst)];
		char *d2 = strdup(src);
		join(tmp, sizeof(tmp), dst, basename(d2));
		free(d2);
		snprintf(dst, sizeof(dst), "%s", tmp);
	}
	free(dup);
	if (strcmp(src, "-") == 0)
		return copy_in(fs, STDIN_FILENO, dst, "fs put");
	int fd = open(src, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return cli_fail("fs put", EXIT_HOST, "cannot open %s: %s", src, strerror(errno));
	int ex = copy_in(fs, fd, dst, "fs put");
	close(fd);
	return ex;
}

static int do_cp(struct blobfs *fs, const struct fsargs *a)
{
	struct blobfs_file *in, *out;
	int rc = blobfs_open(fs, a->pos[0], O_RDONLY, 0, &in);
	if (rc)
		return cli_fs_result("fs cp", rc);
	rc = blobfs_open(fs, a->pos[1], O_WRONLY | O_CREAT | O_TRUNC, 0644, &out);
	if (rc) {
		blobfs_close(in);
		return cli_fs_result("fs cp", rc);
	}
	char *buf = malloc(IOBUF);
	ssize_t n;
	while ((n = blobfs_read(in, buf, IOBUF)) > 0) {
		ssize_t w = blobfs_write(out, buf, (size_t)n);
		if (w != n) {
			n = w < 0 ? w : -EIO;
			break;
		}
	}
	free(buf);
	rc = n < 0 ? (int)n : blobfs_fsync(out);
	blobfs_close(in);
	int c = blobfs_close(out);
	return cli_fs_result("fs cp", rc ? rc : c);
}

static int remove_one(struct blobfs *fs, const char *path, const struct blobfs_stat *st, void *arg)
{
	(void)arg;
	return st->type == BLOBFS_TYPE_DIR ? blobfs_rmdir(fs, path) : blobfs_unlink(fs, path);
}

static int do_rm(struct blobfs *fs, const struct fsargs *a)
{
	for (int i = 0; i < a->npos; i++) {
		struct blobfs_stat st;
		int rc = blobfs_stat(fs, a->pos[i], &st);
		if (!rc && st.type == BLOBFS_TYPE_DIR && !a->recursive)
			return cli_fail("fs rm", EXIT_USAGE, "'%s' is a directory (use -r)", a->pos[i]);
		if (!rc)
			rc = a->recursive ? walk(fs, a->pos[i], remove_one, NULL, true)
					  : blobfs_unlink(fs, a->pos[i]);
		if (rc)
			return cli_fs_result("fs rm", rc);
	}
	return EXIT_OK;
}

static int do_mkdir(struct blobfs *fs, const struct fsargs *a)
{
	for (int i = 0; i < a->npos; i++) {
		char *p = strdup(a->pos[i]);
		int rc = 0;
		if (a->parents) {
			for (char *s = p + 1; *s && !rc; s++) {
				if (*s != '/')
					continue;
				*s = '\0';
				rc = blobfs_mkdir(fs, p, 0755);
				if (rc == -EEXIST)
					rc = 0;
				*s = '/';
			}
		}
		if (!rc) {
			rc = blobfs_mkdir(fs, p, 0755);
			if (rc == -EEXIST && a->parents)
				rc = 0;
		}
		free(p);
		if (rc)
			return cli_fs_result("fs mkdir", rc);
	}
	return EXIT_OK;
}

static int do_df(struct blobfs *fs, const struct fsargs *a)
{
	struct blobfs_statfs s;
	blobfs_statfs(fs, &s);
	uint64_t used = s.clusters - s.free_clusters;
	if (a->json) {
		struct json_object *j = json_object_new_object();
		json_object_object_add(j, "cluster_size", json_object_new_int64((int64_t)s.cluster_size));
		json_object_object_add(j, "clusters", json_object_new_int64((int64_t)s.clusters));
		json_object_object_add(j, "free_clusters", json_object_new_int64((int64_t)s.free_clusters));
		json_object_object_add(j, "files", json_object_new_int64((int64_t)s.files));
		json_object_object_add(j, "meta_bytes", json_object_new_int64((int64_t)s.meta_bytes));
		json_object_object_add(j, "meta_capacity", json_object_new_int64((int64_t)s.meta_capacity));
		json_object_object_add(j, "label", json_object_new_string(s.label));
		cli_json_print(j);
		return EXIT_OK;
	}
	char total[32], u[32], fr[32], mb[32], mc[32];
	cli_human_size(s.clusters * s.cluster_size, total, sizeof(total));
	cli_human_size(used * s.cluster_size, u, sizeof(u));
	cli_human_size(s.free_clusters * s.cluster_size, fr, sizeof(fr));
	cli_human_size(s.meta_bytes, mb, sizeof(mb));
	cli_human_size(s.meta_capacity, mc, sizeof(mc));
	printf("size %s, used %s (%.1f%%), free %s; %llu inodes; metadata %s of %s\n", total, u,
	       s.clusters ? 100.0 * (double)used / (double)s.clusters : 0.0, fr,
	       (unsigned long long)s.files, mb, mc);
	return EXIT_OK;
}

int cmd_fs_raw(int argc, char **argv)
{
	struct fsargs a;
	int ex = parse(argc, argv, &a);
	if (ex)
		return ex;
	const char *s = a.sub;
	if ((strcmp(s, "stat") == 0 || strcmp(s, "cat") == 0) && (ex = need(&a, 1, 1)))
		return ex;
	if (strcmp(s, "get") == 0 && (ex = need(&a, 1, 2)))
		return ex;
	if (strcmp(s, "put") == 0 && (ex = need(&a, 1, 2)))
		return ex;
	if ((strcmp(s, "cp") == 0 || strcmp(s, "mv") == 0) && (ex = need(&a, 2, 2)))
		return ex;
	if ((strcmp(s, "rm") == 0 || strcmp(s, "mkdir") == 0) && (ex = need(&a, 1, 64)))
		return ex;
	if ((strcmp(s, "ls") == 0 || strcmp(s, "tree") == 0) && (ex = need(&a, 0, 1)))
		return ex;
	if (strcmp(s, "df") == 0 && (ex = need(&a, 0, 0)))
		return ex;
	struct unvme_ns *ns = NULL;
	if ((ex = cli_fs_ns("fs", a.dev, a.nsid, &ns)) != 0)
		return ex;
	struct blobfs_opts o = { .read_only = in_list(s, readonly_subs), .cache_size = 16u << 20 };
	struct blobfs *fs;
	int rc = blobfs_mount(ns, &o, &fs);
	if (rc)
		return cli_fs_result("fs", rc);
	if (strcmp(s, "ls") == 0) {
		ex = do_ls(fs, &a);
	} else if (strcmp(s, "tree") == 0) {
		struct json_object *arr = a.json ? json_object_new_array() : NULL;
		rc = walk(fs, a.npos ? a.pos[0] : "/", print_tree, arr, false);
		ex = cli_fs_result("fs tree", rc);
		if (arr && !ex)
			cli_json_print(arr);
		else if (arr)
			json_object_put(arr);
	} else if (strcmp(s, "stat") == 0) {
		ex = do_stat(fs, &a);
	} else if (strcmp(s, "cat") == 0) {
		ex = copy_out(fs, a.pos[0], STDOUT_FILENO, "fs cat");
	} else if (strcmp(s, "get") == 0) {
		ex = do_get(fs, &a);
	} else if (strcmp(s, "put") == 0) {
		ex = do_put(fs, &a);
	} else if (strcmp(s, "cp") == 0) {
		ex = do_cp(fs, &a);
	} else if (strcmp(s, "mv") == 0) {
		ex = cli_fs_result("fs mv", blobfs_rename(fs, a.pos[0], a.pos[1], 0));
	} else if (strcmp(s, "rm") == 0) {
		ex = do_rm(fs, &a);
	} else if (strcmp(s, "mkdir") == 0) {
		ex = do_mkdir(fs, &a);
	} else {
		ex = do_df(fs, &a);
	}
	fflush(stdout);
	rc = blobfs_unmount(fs);
	if (rc && !ex)
		ex = cli_fs_result("fs", rc);
	return ex;
}
