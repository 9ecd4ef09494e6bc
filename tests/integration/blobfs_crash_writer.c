/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * BlobFS crash test program (test_blobfs_crash.py).
 *
 *   blobfs_crash_writer run DEVICE SEED      mkfs is the caller's; runs a random sequence of
 *                                            namespace and data operations forever
 *   blobfs_crash_writer verify DEVICE SEED SYNCED STARTED
 *
 * "run" prints "OP i" before operation i and "SYNCED i" once blobfs_sync() after operation i
 * returned (everything up to i is durable). The test kills it with SIGKILL at a random
 * moment. "verify" replays the same sequence in a model (the sequence depends only on the
 * seed), mounts the file system (which replays its journal) and checks what a crash may
 * leave: the namespace equals the model's at some operation M with SYNCED <= M <= STARTED
 * (metadata changes are atomic and in order), and every file not touched after SYNCED
 * holds exactly its synced content. Exit 0 when all holds, 1 with the reason otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unvme/blobfs.h"

#define MAX_FILES 48
#define MAX_DIRS 6
#define MAX_SIZE (192u << 10)
#define MIN(a, b) ((a) < (b) ? (a) : (b))

struct mfile {
	bool used;
	char path[48];
	uint8_t *data;
	size_t size;
	uint32_t last_mod; /* last operation that changed its content */
};

struct model {
	struct mfile f[MAX_FILES];
	bool dir[MAX_DIRS];
	uint64_t rng;
	uint32_t next_name;
};

static uint64_t rnd(struct model *m)
{
	m->rng ^= m->rng << 13;
	m->rng ^= m->rng >> 7;
	m->rng ^= m->rng << 17;
	return m->rng;
}

static void fill(uint8_t *p, size_t n, uint32_t op)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(op * 131u + i * 7u + (i >> 8));
}

/* One step of the sequence: decides the operation and updates the model; the caller (run)
 * performs it on BlobFS with the same parameters. */
enum kind { K_CREATE, K_APPEND, K_RENAME, K_UNLINK, K_TRUNC, K_MKDIR, K_RMDIR, K_WRITE };

struct step {
	enum kind k;
	int a, b;          /* file (or dir) indices */
	char from[48], to[48];
	uint64_t off;
	size_t len;
	bool fsync;
};

static int free_slot(struct model *m)
{
	for (int i = 0; i < MAX_FILES; i++)
		if (!m->f[i].used)
			return i;
	return -1;
}

static int pick_file(struct model *m)
{
	int n = 0, idx[MAX_FILES];
	for (int i = 0; i < MAX_FILES; i++)
		if (m->f[i].used)
			idx[n++] = i;
	return n ? idx[rnd(m) % (uint64_t)n] : -1;
}

static int dir_for(struct model *m)
{
	int n = 0, idx[MAX_DIRS];
	for (int i = 0; i < MAX_DIRS; i++)
		if (m->dir[i])
			idx[n++] = i;
	return n && rnd(m) % 3 ? idx[rnd(m) % (uint64_t)n] : -1;
}

static void new_path(struct model *m, char *out)
{
	int d = dir_for(m);
	if (d >= 0)
		snprintf(out, 48, "/d%d/f%u", d, m->next_name++);
	else
		snprintf(out, 48, "/f%u", m->next_name++);
}

static bool dir_empty(struct model *m, int d)
{
	char pre[16];
	snprintf(pre, sizeof(pre), "/d%d/", d);
	for (int i = 0; i < MAX_FILES; i++)
		if (m->f[i].used && !strncmp(m->f[i].path, pre, strlen(pre)))
			return false;
	return true;
}

static void model_step(struct model *m, uint32_t op, struct step *s)
{
	memset(s, 0, sizeof(*s));
	for (;;) {
		s->k = (enum kind)(rnd(m) % 8);
		s->fsync = rnd(m) % 7 == 0;
		if (s->k == K_CREATE) {
			s->a = free_slot(m);
			if (s->a < 0)
				continue;
			struct mfile *f = &m->f[s->a];
			new_path(m, f->path);
			s->len = (size_t)(rnd(m) % (MAX_SIZE / 2));
			f->used = true;
			f->data = malloc(MAX_SIZE);
			fill(f->data, s->len, op);
			f->size = s->len;
			f->last_mod = op;
			strcpy(s->to, f->path);
			return;
		}
		if (s->k == K_MKDIR || s->k == K_RMDIR) {
			int d = (int)(rnd(m) % MAX_DIRS);
			if (s->k == K_MKDIR ? m->dir[d] : (!m->dir[d] || !dir_empty(m, d)))
				continue;
			m->dir[d] = s->k == K_MKDIR;
			s->a = d;
			snprintf(s->to, sizeof(s->to), "/d%d", d);
			return;
		}
		s->a = pick_file(m);
		if (s->a < 0)
			continue;
		struct mfile *f = &m->f[s->a];
		strcpy(s->from, f->path);
		switch (s->k) {
		case K_APPEND:
			s->len = (size_t)(rnd(m) % 40000);
			if (f->size + s->len > MAX_SIZE)
				continue;
			fill(f->data + f->size, s->len, op);
			s->off = f->size;
			f->size += s->len;
			f->last_mod = op;
			return;
		case K_WRITE:
			if (!f->size)
				continue;
			s->off = rnd(m) % f->size;
			size_t want = (size_t)(rnd(m) % 20000);
			s->len = MIN(want, (size_t)(f->size - s->off));
			fill(f->data + s->off, s->len, op);
			f->last_mod = op;
			return;
		case K_TRUNC: {
			size_t ns = (size_t)(rnd(m) % MAX_SIZE);
			if (ns > f->size)
				memset(f->data + f->size, 0, ns - f->size);
			f->size = ns;
			s->len = ns;
			f->last_mod = op;
			return;
		}
		case K_UNLINK:
			free(f->data);
			memset(f, 0, sizeof(*f));
			return;
		case K_RENAME: {
			/* to a new name, or over another file */
			int over = rnd(m) % 3 == 0 ? pick_file(m) : -1;
			if (over == s->a)
				over = -1;
			if (over >= 0) {
				strcpy(s->to, m->f[over].path);
				free(m->f[over].data);
				memset(&m->f[over], 0, sizeof(m->f[over]));
			} else {
				new_path(m, s->to);
			}
			strcpy(f->path, s->to);
			f->last_mod = op; /* its path changed: content checks start over */
			return;
		}
		default:
			continue;
		}
	}
}

/* Writes the step's bytes (from the model) into path, opened with flags. */
static int write_step(struct blobfs *fs, const char *path, int flags, const struct step *s,
		      const struct model *m)
{
	struct blobfs_file *f;
	int rc = blobfs_open(fs, path, flags, 0644, &f);
	if (rc)
		return rc;
	if (s->len && blobfs_pwrite(f, m->f[s->a].data + s->off, s->len, s->off) != (ssize_t)s->len)
		rc = -EIO;
	if (!rc && s->fsync)
		rc = blobfs_fsync(f);
	blobfs_close(f);
	return rc;
}

static int apply(struct blobfs *fs, const struct step *s, const struct model *m)
{
	switch (s->k) {
	case K_CREATE:
		return write_step(fs, s->to, O_RDWR | O_CREAT | O_EXCL, s, m);
	case K_APPEND:
	case K_WRITE:
		return write_step(fs, s->from, O_RDWR, s, m);
	case K_TRUNC:
		return blobfs_truncate(fs, s->from, s->len);
	case K_UNLINK:
		return blobfs_unlink(fs, s->from);
	case K_RENAME:
		return blobfs_rename(fs, s->from, s->to, 0);
	case K_MKDIR:
		return blobfs_mkdir(fs, s->to, 0755);
	case K_RMDIR:
		return blobfs_rmdir(fs, s->to);
	}
	return -EINVAL;
}

static int mount(const char *dev, struct unvme_ctrlr **c, struct blobfs **fs)
{
	if (unvme_ctrlr_open(dev, NULL, c) != 0) {
		fprintf(stderr, "open %s: %s\n", dev, unvme_errmsg());
		return 1;
	}
	/* Frequent background commits, so that the crash falls anywhere in the journal. */
	struct blobfs_opts o = { .commit_interval_ms = 20, .cache_size = 8u << 20, .writeback_chunk = 256u << 10 };
	if (blobfs_mount(unvme_ctrlr_ns(*c, 1), &o, fs) != 0) {
		fprintf(stderr, "mount: %s\n", blobfs_errmsg());
		return 1;
	}
	return 0;
}

static int run(const char *dev, uint64_t seed)
{
	struct unvme_ctrlr *c;
	struct blobfs *fs;
	if (mount(dev, &c, &fs))
		return 1;
	static struct model m;
	m.rng = seed * 2654435761u + 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("READY\n");
	for (uint32_t op = 1;; op++) {
		struct step s;
		model_step(&m, op, &s);
		printf("OP %u %d %s %s\n", op, s.k, s.from, s.to);
		int rc = apply(fs, &s, &m);
		if (rc) {
			printf("FAIL op %u kind %d (%s -> %s): %d %s\n", op, s.k, s.from, s.to, rc, blobfs_errmsg());
			return 1;
		}
		if (op % 10 == 0) {
			if (blobfs_sync(fs) != 0) {
				printf("FAIL sync: %s\n", blobfs_errmsg());
				return 1;
			}
			printf("SYNCED %u\n", op);
		}
	}
}

/* Every path in the file system: files, and the d* directories as "/dN/" (the test uses
 * one level of directories). */
static void collect(struct blobfs *fs, const char *dir, char (*out)[48], int *n, int max)
{
	struct blobfs_dir *d;
	if (blobfs_opendir(fs, dir, &d) != 0)
		return;
	struct blobfs_dirent e;
	while (blobfs_readdir(d, &e) == 1 && *n < max) {
		char p[300];
		if (e.type == BLOBFS_TYPE_DIR) {
			snprintf(p, sizeof(p), "/%.40s", e.name);
			snprintf(out[(*n)++], 48, "%.46s/", p);
			collect(fs, p, out, n, max);
		} else {
			snprintf(p, sizeof(p), "%s/%.40s", strcmp(dir, "/") ? dir : "", e.name);
			snprintf(out[(*n)++], 48, "%.47s", p);
		}
	}
	blobfs_closedir(d);
}

static int cmp48(const void *a, const void *b)
{
	return strcmp(a, b);
}

static int model_paths(const struct model *m, char (*out)[48])
{
	int n = 0;
	for (int d = 0; d < MAX_DIRS; d++)
		if (m->dir[d])
			snprintf(out[n++], 48, "/d%d/", d);
	for (int i = 0; i < MAX_FILES; i++)
		if (m->f[i].used)
			strcpy(out[n++], m->f[i].path);
	qsort(out, (size_t)n, 48, cmp48);
	return n;
}

static int verify(const char *dev, uint64_t seed, uint32_t synced, uint32_t started)
{
	struct unvme_ctrlr *c;
	struct blobfs *fs;
	if (mount(dev, &c, &fs))
		return 1;
	static char have[256][48], want[256][48];
	int nh = 0;
	collect(fs, "/", have, &nh, 256);
	qsort(have, (size_t)nh, 48, cmp48);
	static struct model m;
	m.rng = seed * 2654435761u + 1;
	/* The first state at or after the sync whose namespace is the one found. */
	bool found = false;
	uint32_t match = 0;
	for (uint32_t op = 0; op <= started; op++) {
		struct step s;
		if (op > 0)
			model_step(&m, op, &s);
		if (op < synced)
			continue;
		int nw = model_paths(&m, want);
		bool same = nw == nh;
		for (int i = 0; same && i < nh; i++)
			same = strcmp(want[i], have[i]) == 0;
		if (same) {
			found = true;
			match = op;
			break;
		}
	}
	if (!found) {
		printf("the namespace matches no operation in [%u, %u]; it has %d paths:\n", synced, started, nh);
		for (int i = 0; i < nh; i++)
			printf("  %s\n", have[i]);
		return 1;
	}
	/* Files that no operation after the sync touched (the model run on to the last operation
	 * started) hold their synced content exactly. */
	for (uint32_t op = match + 1; op <= started; op++) {
		struct step s;
		model_step(&m, op, &s);
	}
	int bad = 0, checked = 0;
	for (int i = 0; i < MAX_FILES && synced; i++) {
		const struct mfile *mf = &m.f[i];
		if (!mf->used || mf->last_mod > synced)
			continue;
		struct blobfs_file *f;
		if (blobfs_open(fs, mf->path, O_RDONLY, 0, &f) != 0) {
			printf("%s: %s\n", mf->path, blobfs_errmsg());
			bad++;
			continue;
		}
		uint8_t *buf = malloc(MAX_SIZE + 1);
		ssize_t r = blobfs_pread(f, buf, MAX_SIZE + 1, 0);
		if (r != (ssize_t)mf->size || memcmp(buf, mf->data, mf->size) != 0) {
			size_t k = 0, e = 0;
			while (r > 0 && k < (size_t)r && k < mf->size && buf[k] == mf->data[k])
				k++;
			for (e = k; r > 0 && e < (size_t)r && e < mf->size && buf[e] != mf->data[e]; e++)
				;
			printf("%s: %zd bytes read, %zu synced; differs from %zu to %zu (last changed by "
			       "operation %u)\n", mf->path, r, mf->size, k, e, mf->last_mod);
			bad++;
		}
		checked++;
		free(buf);
		blobfs_close(f);
	}
	printf("namespace as after operation %u (synced %u, started %u); %d synced files checked, %d bad\n",
	       match, synced, started, checked, bad);
	blobfs_unmount(fs);
	unvme_ctrlr_close(c);
	return bad ? 1 : 0;
}

/* Runs n operations without a crash, checking every file against the model after each one:
 * tells a bug of the running file system from one of recovery. */
static int selfcheck(const char *dev, uint64_t seed, uint32_t n)
{
	struct unvme_ctrlr *c;
	struct blobfs *fs;
	if (mount(dev, &c, &fs))
		return 1;
	static struct model m;
	m.rng = seed * 2654435761u + 1;
	uint8_t *buf = malloc(MAX_SIZE + 1);
	for (uint32_t op = 1; op <= n; op++) {
		struct step s;
		model_step(&m, op, &s);
		if (apply(fs, &s, &m)) {
			printf("op %u failed: %s\n", op, blobfs_errmsg());
			return 1;
		}
		if (op % 10 == 0)
			blobfs_sync(fs);
		/* Read what is on the device, not what the cache holds. */
		if (getenv("SELFCHECK_DROP"))
			blobfs_drop_cache(fs);
		for (int i = 0; i < MAX_FILES; i++) {
			const struct mfile *mf = &m.f[i];
			if (!mf->used)
				continue;
			struct blobfs_file *f;
			if (blobfs_open(fs, mf->path, O_RDONLY, 0, &f) != 0) {
				printf("op %u: %s missing\n", op, mf->path);
				return 1;
			}
			ssize_t r = blobfs_pread(f, buf, MAX_SIZE + 1, 0);
			blobfs_close(f);
			if (r != (ssize_t)mf->size || memcmp(buf, mf->data, mf->size)) {
				size_t k = 0;
				while (r > 0 && k < (size_t)r && k < mf->size && buf[k] == mf->data[k])
					k++;
				printf("op %u (kind %d on %s): %s read %zd of %zu, first difference at %zu\n", op,
				       s.k, s.from, mf->path, r, mf->size, k);
				return 1;
			}
		}
	}
	printf("%u operations, every file right after each\n", n);
	blobfs_unmount(fs);
	unvme_ctrlr_close(c);
	return 0;
}

/* Prints the model's paths after each operation in [from, to] (debugging a failed verify). */
static int show_model(uint64_t seed, uint32_t from, uint32_t to)
{
	static struct model m;
	static char want[256][48];
	m.rng = seed * 2654435761u + 1;
	for (uint32_t op = 1; op <= to; op++) {
		struct step s;
		model_step(&m, op, &s);
		if (op < from)
			continue;
		int n = model_paths(&m, want);
		printf("after %u (kind %d %s -> %s):", op, s.k, s.from, s.to);
		for (int i = 0; i < n; i++)
			printf(" %s", want[i]);
		printf("\n");
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "selfcheck"))
		return selfcheck(argv[2], strtoull(argv[3], NULL, 0), (uint32_t)strtoul(argv[4], NULL, 0));
	if (argc == 5 && !strcmp(argv[1], "model"))
		return show_model(strtoull(argv[2], NULL, 0), (uint32_t)strtoul(argv[3], NULL, 0),
				  (uint32_t)strtoul(argv[4], NULL, 0));
	if (argc == 4 && !strcmp(argv[1], "run"))
		return run(argv[2], strtoull(argv[3], NULL, 0));
	if (argc == 6 && !strcmp(argv[1], "verify"))
		return verify(argv[2], strtoull(argv[3], NULL, 0), (uint32_t)strtoul(argv[4], NULL, 0),
			      (uint32_t)strtoul(argv[5], NULL, 0));
	fprintf(stderr, "usage: blobfs_crash_writer run DEVICE SEED | verify DEVICE SEED SYNCED STARTED\n");
	return 2;
}
