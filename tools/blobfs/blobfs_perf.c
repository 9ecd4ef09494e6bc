/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * blobfs_perf: file I/O throughput on BlobFS, with the original tool's options. Each job is
 * a thread (pinned to a core when -c is given) with a file of its own, /blobfs_perf/job<N>,
 * that it writes, or reads sequentially or at random, in blocks of -b bytes; BlobFS gives
 * each thread its own queue pair. A results table shows each pass: bytes, time, MiB/s,
 * IOPS, mean and p99 latency per call, and the cache's view (hits, misses, read ahead).
 *
 *   blobfs_perf -u emu://p?ns=mem:4G --mkfs -w write -b 256k -s 1g -m 2
 *   blobfs_perf -u DEV -w read -b 4k -s 1g -m 2 -a -e -p on -f 131072 -t on -r 3
 *   blobfs_perf --memcpy -b 256k -s 1g     (the single-core copy floor, same sizes)
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <json-c/json.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "histogram.h"
#include "tsc.h"
#include "unvme/blobfs.h"

#define MAX_JOBS 64

enum workload { WL_WRITE, WL_READ, WL_RANDREAD };

struct opts {
	const char *dev;
	uint32_t nsid;
	enum workload wl;
	uint64_t bs, size;
	unsigned jobs;
	int cores[MAX_JOBS];
	unsigned ncores;
	bool direct, verify, reuse, drop, mkfs, json, memcpy_floor;
	int prefetch;         /* 1 on, -1 off, 0 file system default */
	uint32_t threshold;
	int retain;           /* 1 on, -1 off, 0 default */
	unsigned repeat;
	uint64_t cache_size;
	uint32_t cluster;
};

struct job {
	const struct opts *o;
	struct blobfs *fs;
	unsigned id;
	pthread_barrier_t *start;
	uint64_t bytes, calls, errors, miscompares;
	double seconds;
	struct lat_histogram lat;
	char err[256];
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Content that tells where it belongs: job, offset (8-byte words). */
static void stamp(uint8_t *b, uint64_t len, unsigned job, uint64_t off)
{
	for (uint64_t i = 0; i + 8 <= len; i += 8) {
		uint64_t v = ((off + i) * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)job << 56);
		memcpy(b + i, &v, 8);
	}
}

static bool check(const uint8_t *b, uint64_t len, unsigned job, uint64_t off)
{
	for (uint64_t i = 0; i + 8 <= len; i += 8) {
		uint64_t v = ((off + i) * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)job << 56), g;
		memcpy(&g, b + i, 8);
		if (g != v)
			return false;
	}
	return true;
}

static void *alloc_buf(const struct opts *o)
{
	/* DMA memory lets direct I/O skip the bounce copy (zero copy). */
	void *b = o->direct ? unvme_dma_alloc(o->bs, 4096) : NULL;
	if (!b && posix_memalign(&b, 4096, o->bs) != 0)
		b = NULL;
	return b;
}

static void free_buf(const struct opts *o, void *b)
{
	if (o->direct && unvme_dma_iova(b) != UINT64_MAX)
		unvme_dma_free(b);
	else
		free(b);
}

static void pin(const struct opts *o, unsigned id)
{
	if (!o->ncores)
		return;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(o->cores[id % o->ncores], &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *job_main(void *arg)
{
	struct job *j = arg;
	const struct opts *o = j->o;
	pin(o, j->id);
	lat_hist_init(&j->lat);
	char path[64];
	snprintf(path, sizeof(path), "/blobfs_perf/job%u", j->id);
	int flags = o->wl == WL_WRITE ? O_RDWR | O_CREAT | O_TRUNC : O_RDONLY;
	struct blobfs_file *f;
	int rc = blobfs_open(j->fs, path, flags | (o->direct ? O_DIRECT : 0), 0644, &f);
	uint8_t *buf = alloc_buf(o);
	uint64_t nblk = o->size / o->bs;
	uint64_t *order = NULL;
	if (!rc && buf && o->wl == WL_RANDREAD) {
		order = malloc(nblk * sizeof(*order));
		uint64_t x = 88172645463325252ull + j->id;
		for (uint64_t i = 0; order && i < nblk; i++)
			order[i] = i;
		for (uint64_t i = nblk; order && i > 1; i--) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			uint64_t k = x % i, t = order[i - 1];
			order[i - 1] = order[k];
			order[k] = t;
		}
	}
	if (rc || !buf || (o->wl == WL_RANDREAD && !order)) {
		snprintf(j->err, sizeof(j->err), "%s: %s", path, rc ? blobfs_errmsg() : "out of memory");
		pthread_barrier_wait(j->start);
		j->errors++;
		goto out;
	}
	struct blobfs_file_opts fo = { .prefetch = o->prefetch, .prefetch_threshold = o->threshold,
				       .retain = o->retain };
	blobfs_file_set_opts(f, &fo);
	if (o->wl == WL_WRITE)
		stamp(buf, o->bs, j->id, 0);
	pthread_barrier_wait(j->start);
	double t0 = now_s();
	for (uint64_t i = 0; i < nblk; i++) {
		uint64_t off = (order ? order[i] : i) * o->bs;
		uint64_t a = tsc_now();
		ssize_t n;
		if (o->wl == WL_WRITE) {
			if (o->verify)
				stamp(buf, o->bs, j->id, off);
			n = blobfs_pwrite(f, buf, o->bs, off);
		} else {
			n = blobfs_pread(f, buf, o->bs, off);
		}
		lat_hist_record(&j->lat, tsc_now() - a);
		if (n != (ssize_t)o->bs) {
			if (!j->errors)
				snprintf(j->err, sizeof(j->err), "%s at %llu: %s", path, (unsigned long long)off,
					 n < 0 ? blobfs_errmsg() : "short transfer");
			j->errors++;
			break;
		}
		if (o->verify && o->wl != WL_WRITE && !check(buf, o->bs, j->id, off))
			j->miscompares++;
		j->bytes += o->bs;
		j->calls++;
	}
	if (o->wl == WL_WRITE && blobfs_fsync(f) != 0 && !j->errors) {
		snprintf(j->err, sizeof(j->err), "fsync %s: %s", path, blobfs_errmsg());
		j->errors++;
	}
	j->seconds = now_s() - t0;
	blobfs_close(f);
out:
	free(order);
	if (buf)
		free_buf(o, buf);
	return NULL;
}

struct pass_result {
	const char *name;
	unsigned pass;
	uint64_t bytes, calls, errors, miscompares;
	double seconds;
	double mean_ns, p99_ns;
	struct blobfs_stats st;
};

static int run_pass(const struct opts *o, struct blobfs *fs, struct pass_result *r)
{
	struct job jobs[MAX_JOBS];
	pthread_t t[MAX_JOBS];
	pthread_barrier_t start;
	pthread_barrier_init(&start, NULL, o->jobs + 1);
	struct blobfs_stats a, b;
	blobfs_get_stats(fs, &a);
	for (unsigned i = 0; i < o->jobs; i++) {
		memset(&jobs[i], 0, sizeof(jobs[i]));
		jobs[i] = (struct job){ .o = o, .fs = fs, .id = i, .start = &start };
		pthread_create(&t[i], NULL, job_main, &jobs[i]);
	}
	pthread_barrier_wait(&start);
	double t0 = now_s();
	struct lat_histogram all;
	lat_hist_init(&all);
	memset(r, 0, sizeof(*r));
	for (unsigned i = 0; i < o->jobs; i++) {
		pthread_join(t[i], NULL);
		r->bytes += jobs[i].bytes;
		r->calls += jobs[i].calls;
		r->errors += jobs[i].errors;
		r->miscompares += jobs[i].miscompares;
		lat_hist_merge(&all, &jobs[i].lat);
		if (jobs[i].errors)
			fprintf(stderr, "blobfs_perf: job %u: %s\n", i, jobs[i].err);
	}
	r->seconds = now_s() - t0;
	pthread_barrier_destroy(&start);
	blobfs_get_stats(fs, &b);
	double ns = 1e9 / tsc_hz();
	r->mean_ns = lat_hist_mean(&all) * ns;
	r->p99_ns = (double)lat_hist_percentile(&all, 99.0) * ns;
	r->st.cache_hits = b.cache_hits - a.cache_hits;
	r->st.cache_misses = b.cache_misses - a.cache_misses;
	r->st.prefetch_pages = b.prefetch_pages - a.prefetch_pages;
	r->st.prefetch_hits = b.prefetch_hits - a.prefetch_hits;
	r->st.dev_read_bytes = b.dev_read_bytes - a.dev_read_bytes;
	r->st.dev_write_bytes = b.dev_write_bytes - a.dev_write_bytes;
	r->st.dev_reads = b.dev_reads - a.dev_reads;
	r->st.dev_writes = b.dev_writes - a.dev_writes;
	return r->errors || r->miscompares ? 1 : 0;
}

static const char *wl_name(enum workload w)
{
	return w == WL_WRITE ? "write" : w == WL_READ ? "read" : "randread";
}

static void print_header(const struct opts *o)
{
	printf("blobfs_perf %s, %llu-byte blocks, %llu bytes x %u jobs, %s%s, prefetch %s, retain %s\n",
	       wl_name(o->wl), (unsigned long long)o->bs, (unsigned long long)o->size, o->jobs,
	       o->direct ? "direct" : "buffered", o->verify ? ", verify" : "",
	       o->prefetch > 0 ? "on" : o->prefetch < 0 ? "off" : "default",
	       o->retain > 0 ? "on" : o->retain < 0 ? "off" : "default");
	printf("%-9s %4s %10s %8s %10s %10s %10s %10s %9s %9s %9s\n", "workload", "pass", "MiB",
	       "seconds", "MiB/s", "IOPS", "mean us", "p99 us", "hits", "misses", "ahead");
}

static void print_row(const struct pass_result *r)
{
	printf("%-9s %4u %10.1f %8.3f %10.1f %10.0f %10.2f %10.2f %9llu %9llu %9llu\n", r->name, r->pass,
	       (double)r->bytes / 1048576.0, r->seconds, (double)r->bytes / 1048576.0 / r->seconds,
	       (double)r->calls / r->seconds, r->mean_ns / 1000.0, r->p99_ns / 1000.0,
	       (unsigned long long)r->st.cache_hits, (unsigned long long)r->st.cache_misses,
	       (unsigned long long)r->st.prefetch_pages);
}

static struct json_object *row_json(const struct pass_result *r)
{
	struct json_object *j = json_object_new_object();
	json_object_object_add(j, "workload", json_object_new_string(r->name));
	json_object_object_add(j, "pass", json_object_new_int(r->pass));
	json_object_object_add(j, "bytes", json_object_new_int64((int64_t)r->bytes));
	json_object_object_add(j, "seconds", json_object_new_double(r->seconds));
	json_object_object_add(j, "mib_s", json_object_new_double((double)r->bytes / 1048576.0 / r->seconds));
	json_object_object_add(j, "iops", json_object_new_double((double)r->calls / r->seconds));
	json_object_object_add(j, "mean_us", json_object_new_double(r->mean_ns / 1000.0));
	json_object_object_add(j, "p99_us", json_object_new_double(r->p99_ns / 1000.0));
	json_object_object_add(j, "cache_hits", json_object_new_int64((int64_t)r->st.cache_hits));
	json_object_object_add(j, "cache_misses", json_object_new_int64((int64_t)r->st.cache_misses));
	json_object_object_add(j, "prefetch_pages", json_object_new_int64((int64_t)r->st.prefetch_pages));
	json_object_object_add(j, "prefetch_hits", json_object_new_int64((int64_t)r->st.prefetch_hits));
	json_object_object_add(j, "dev_read_bytes", json_object_new_int64((int64_t)r->st.dev_read_bytes));
	json_object_object_add(j, "dev_reads", json_object_new_int64((int64_t)r->st.dev_reads));
	json_object_object_add(j, "dev_write_bytes", json_object_new_int64((int64_t)r->st.dev_write_bytes));
	json_object_object_add(j, "dev_writes", json_object_new_int64((int64_t)r->st.dev_writes));
	json_object_object_add(j, "errors", json_object_new_int64((int64_t)r->errors));
	json_object_object_add(j, "miscompares", json_object_new_int64((int64_t)r->miscompares));
	return j;
}

/* The copy floor: one core copying blocks of bs out of a size-byte buffer (as a read from a
 * memory namespace must, at least once). */
static int memcpy_floor(const struct opts *o)
{
	uint64_t size = o->size, bs = o->bs;
	uint8_t *src = malloc(size), *dst = malloc(bs);
	if (!src || !dst) {
		fprintf(stderr, "blobfs_perf: out of memory for the memcpy floor\n");
		return 3;
	}
	memset(src, 1, size);
	double best = 0;
	for (int rep = 0; rep < 3; rep++) {
		double t0 = now_s();
		for (uint64_t off = 0; off + bs <= size; off += bs) {
			memcpy(dst, src + off, bs);
			__asm__ volatile("" : : "r"(dst) : "memory");
		}
		double mib = (double)size / 1048576.0 / (now_s() - t0);
		if (mib > best)
			best = mib;
	}
	if (o->json) {
		struct json_object *j = json_object_new_object();
		json_object_object_add(j, "memcpy_mib_s", json_object_new_double(best));
		json_object_object_add(j, "block", json_object_new_int64((int64_t)bs));
		puts(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN));
		json_object_put(j);
	} else {
		printf("memcpy floor: %.1f MiB/s (one core, %llu-byte blocks out of %llu bytes)\n", best,
		       (unsigned long long)bs, (unsigned long long)size);
	}
	free(src);
	free(dst);
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: blobfs_perf -u DEVICE [options]\n"
		"  -u, --device DEV          device (emu:// URI, PCI address or alias)\n"
		"  -n, --namespace NSID      namespace (default: the first)\n"
		"  -w, --workload W          write, read or randread (default read)\n"
		"  -b, --block BYTES         block size per call (default 4k; k/m/g suffixes)\n"
		"  -s, --size BYTES          file size per job (default 256m)\n"
		"  -m, --jobs N              jobs (threads, one file each; default 1)\n"
		"  -c, --cores LIST          pin jobs to these CPUs, e.g. 0,1\n"
		"  -d, --direct              direct I/O (bypass the cache; zero copy from DMA memory)\n"
		"  -p, --prefetch on|off     readahead control (default: the file system's, on)\n"
		"  -f, --threshold BYTES     sequential bytes before readahead starts\n"
		"  -t, --retain on|off       keep cached data after a hit and after close\n"
		"  -e, --drop-cache          drop the cache before reading\n"
		"  -v, --verify              stamp blocks when writing, check them when reading\n"
		"  -a, --reuse               read existing files (written by an earlier run)\n"
		"  -r, --repeat N            read passes (default 1)\n"
		"      --mkfs                make a fresh BlobFS first (a memory namespace needs it)\n"
		"      --cache-size BYTES    BlobFS cache (default 256m)\n"
		"      --cluster-size BYTES  cluster size for --mkfs\n"
		"      --json                one JSON document instead of the table\n"
		"      --memcpy              measure the single-core memcpy floor for -b/-s and exit\n"
		"Exit: 0 ok, 1 I/O errors or miscompares, 2 usage, 3 the device or file system failed.\n");
}

static bool parse_size(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || end == s || *s == '-')
		return false;
	unsigned sh = 0;
	switch (*end) {
	case 'k': case 'K': sh = 10; end++; break;
	case 'm': case 'M': sh = 20; end++; break;
	case 'g': case 'G': sh = 30; end++; break;
	default: break;
	}
	if (*end)
		return false;
	*out = (uint64_t)v << sh;
	return true;
}

static int onoff(const char *s, const char *what)
{
	if (strcmp(s, "on") == 0 || strcmp(s, "1") == 0)
		return 1;
	if (strcmp(s, "off") == 0 || strcmp(s, "0") == 0)
		return -1;
	fprintf(stderr, "blobfs_perf: %s takes on or off, not '%s'\n", what, s);
	return 0;
}

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "device", 1, NULL, 'u' }, { "namespace", 1, NULL, 'n' }, { "workload", 1, NULL, 'w' },
		{ "block", 1, NULL, 'b' }, { "size", 1, NULL, 's' }, { "jobs", 1, NULL, 'm' },
		{ "cores", 1, NULL, 'c' }, { "direct", 0, NULL, 'd' }, { "prefetch", 1, NULL, 'p' },
		{ "threshold", 1, NULL, 'f' }, { "retain", 1, NULL, 't' }, { "drop-cache", 0, NULL, 'e' },
		{ "verify", 0, NULL, 'v' }, { "reuse", 0, NULL, 'a' }, { "repeat", 1, NULL, 'r' },
		{ "mkfs", 0, NULL, 1 }, { "cache-size", 1, NULL, 2 }, { "json", 0, NULL, 3 },
		{ "memcpy", 0, NULL, 4 }, { "cluster-size", 1, NULL, 5 }, { "help", 0, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	memset(o, 0, sizeof(*o));
	o->wl = WL_READ;
	o->bs = 4096;
	o->size = 256u << 20;
	o->jobs = 1;
	o->repeat = 1;
	int c;
	uint64_t v;
	while ((c = getopt_long(argc, argv, "u:n:w:b:s:m:c:dp:f:t:evar:h", lo, NULL)) != -1) {
		switch (c) {
		case 'u': o->dev = optarg; break;
		case 'n':
			if (!parse_size(optarg, &v) || v > UINT32_MAX)
				goto bad;
			o->nsid = (uint32_t)v;
			break;
		case 'w':
			if (!strcmp(optarg, "write"))
				o->wl = WL_WRITE;
			else if (!strcmp(optarg, "read"))
				o->wl = WL_READ;
			else if (!strcmp(optarg, "randread"))
				o->wl = WL_RANDREAD;
			else
				goto bad;
			break;
		case 'b':
			if (!parse_size(optarg, &o->bs) || !o->bs || o->bs % 8)
				goto bad;
			break;
		case 's':
			if (!parse_size(optarg, &o->size) || !o->size)
				goto bad;
			break;
		case 'm':
			if (!parse_size(optarg, &v) || !v || v > MAX_JOBS)
				goto bad;
			o->jobs = (unsigned)v;
			break;
		case 'c':
			for (char *s = optarg; *s && o->ncores < MAX_JOBS;) {
				char *end;
				long cpu = strtol(s, &end, 10);
				if (end == s || cpu < 0)
					goto bad;
				o->cores[o->ncores++] = (int)cpu;
				s = *end == ',' ? end + 1 : end;
				if (*end && *end != ',')
					goto bad;
			}
			break;
		case 'd': o->direct = true; break;
		case 'p':
			if (!(o->prefetch = onoff(optarg, "--prefetch")))
				return 2;
			break;
		case 'f':
			if (!parse_size(optarg, &v) || v > UINT32_MAX)
				goto bad;
			o->threshold = (uint32_t)v;
			break;
		case 't':
			if (!(o->retain = onoff(optarg, "--retain")))
				return 2;
			break;
		case 'e': o->drop = true; break;
		case 'v': o->verify = true; break;
		case 'a': o->reuse = true; break;
		case 'r':
			if (!parse_size(optarg, &v) || !v || v > 1000)
				goto bad;
			o->repeat = (unsigned)v;
			break;
		case 1: o->mkfs = true; break;
		case 2:
			if (!parse_size(optarg, &o->cache_size))
				goto bad;
			break;
		case 3: o->json = true; break;
		case 4: o->memcpy_floor = true; break;
		case 5:
			if (!parse_size(optarg, &v) || v > UINT32_MAX)
				goto bad;
			o->cluster = (uint32_t)v;
			break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "blobfs_perf: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (!o->dev && !o->memcpy_floor) {
		fprintf(stderr, "blobfs_perf: a device is required (-u)\n");
		return 2;
	}
	if (o->size < o->bs) {
		fprintf(stderr, "blobfs_perf: the size per job (%llu) is below the block size (%llu)\n",
			(unsigned long long)o->size, (unsigned long long)o->bs);
		return 2;
	}
	return 0;
bad:
	fprintf(stderr, "blobfs_perf: bad value '%s' for -%c (see --help)\n", optarg, c > 32 ? c : '-');
	return 2;
}

int main(int argc, char **argv)
{
	struct opts o;
	int rc = parse(argc, argv, &o);
	if (rc)
		return rc;
	if (o.memcpy_floor)
		return memcpy_floor(&o);
	struct blobfs_opts mo = { .cache_size = o.cache_size };
	struct unvme_ctrlr *ctrlr;
	rc = unvme_ctrlr_open(o.dev, NULL, &ctrlr);
	if (rc) {
		fprintf(stderr, "blobfs_perf: cannot open %s: %s\n", o.dev, unvme_errmsg());
		return 3;
	}
	uint32_t nsid = o.nsid ? o.nsid : unvme_ctrlr_first_nsid(ctrlr);
	struct unvme_ns *ns = unvme_ctrlr_ns(ctrlr, nsid);
	if (!ns) {
		fprintf(stderr, "blobfs_perf: %s has no namespace %u\n", o.dev, nsid);
		unvme_ctrlr_close(ctrlr);
		return 3;
	}
	if (o.mkfs) {
		struct blobfs_mkfs_opts m = { .force = true, .cluster_size = o.cluster };
		if (blobfs_mkfs(ns, &m) != 0) {
			fprintf(stderr, "blobfs_perf: mkfs: %s\n", blobfs_errmsg());
			unvme_ctrlr_close(ctrlr);
			return 3;
		}
	}
	struct blobfs *fs;
	if (blobfs_mount(ns, &mo, &fs) != 0) {
		fprintf(stderr, "blobfs_perf: mount: %s\n", blobfs_errmsg());
		unvme_ctrlr_close(ctrlr);
		return 3;
	}
	rc = blobfs_mkdir(fs, "/blobfs_perf", 0755);
	if (rc && rc != -EEXIST) {
		fprintf(stderr, "blobfs_perf: %s\n", blobfs_errmsg());
		blobfs_unmount(fs);
		unvme_ctrlr_close(ctrlr);
		return 3;
	}
	struct json_object *rows = o.json ? json_object_new_array() : NULL;
	if (!o.json)
		print_header(&o);
	int status = 0;
	struct pass_result r;
	/* Reads need files: written now (not measured) unless -a says they exist. */
	if (o.wl != WL_WRITE && !o.reuse) {
		struct opts w = o;
		w.wl = WL_WRITE;
		w.verify = true;
		w.direct = false;
		status |= run_pass(&w, fs, &r);
		r.name = "prepare";
		r.pass = 0;
		if (rows)
			json_object_array_add(rows, row_json(&r));
		else
			print_row(&r);
	}
	for (unsigned pass = 1; pass <= (o.wl == WL_WRITE ? 1 : o.repeat) && !status; pass++) {
		if (o.drop && o.wl != WL_WRITE)
			blobfs_drop_cache(fs);
		status |= run_pass(&o, fs, &r);
		r.name = wl_name(o.wl);
		r.pass = pass;
		if (rows)
			json_object_array_add(rows, row_json(&r));
		else
			print_row(&r);
	}
	if (rows) {
		struct json_object *doc = json_object_new_object();
		json_object_object_add(doc, "workload", json_object_new_string(wl_name(o.wl)));
		json_object_object_add(doc, "block", json_object_new_int64((int64_t)o.bs));
		json_object_object_add(doc, "size", json_object_new_int64((int64_t)o.size));
		json_object_object_add(doc, "jobs", json_object_new_int(o.jobs));
		json_object_object_add(doc, "direct", json_object_new_boolean(o.direct));
		json_object_object_add(doc, "passes", rows);
		puts(json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY));
		json_object_put(doc);
	}
	if (blobfs_unmount(fs) != 0) {
		fprintf(stderr, "blobfs_perf: unmount: %s\n", blobfs_errmsg());
		status = 3;
	}
	unvme_ctrlr_close(ctrlr);
	return status;
}
