/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The regular file transport end to end through the public API: the same io_uring data path
 * (uring_blkio.c, uring_ring.c) that serves kernel block devices, on the one kind of device a
 * machine without NVMe has. Every NVMe command the transport serves, the statuses a
 * controller would give, what the file holds afterwards (read back with pread), registered
 * and unregistered buffers, deep queues checked against a shadow copy, and a split queue pair
 * (one thread submits, another polls), which runs under TSan.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"
#include "unvme/unvme.h"

#define NBLK 4096u /* blocks of 512 bytes: a 2 MiB file */

static char dir[PATH_MAX];
static char path[PATH_MAX + 32];
static char uri[PATH_MAX + 96];

static void cleanup(void)
{
	char p[PATH_MAX + 32];
	const char *names[] = { "f.img", "g.img", "h.img" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
		unlink(p);
	}
	rmdir(dir);
}

/* A fresh file device: file://<dir>/f.img?size=2M plus extra options. */
static struct unvme_ctrlr *fresh(const char *extra)
{
	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/unvme-file-XXXXXX");
		if (!mkdtemp(dir))
			abort();
		atexit(cleanup);
	}
	snprintf(path, sizeof(path), "%s/f.img", dir);
	unlink(path);
	snprintf(uri, sizeof(uri), "file://%s?size=%u%s", path, NBLK * 512u, extra);
	struct unvme_ctrlr *c = NULL;
	int rc = unvme_ctrlr_open(uri, NULL, &c);
	if (rc)
		fprintf(stderr, "  open %s: %d %s\n", uri, rc, unvme_errmsg());
	return c;
}

static void file_bytes(uint64_t off, void *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0 || pread(fd, buf, len, (off_t)off) != (ssize_t)len)
		memset(buf, 0xee, len);
	if (fd >= 0)
		close(fd);
}

static void test_identity_and_geometry(void)
{
	struct unvme_ctrlr *c = fresh("");
	REQUIRE(c);
	CHECK_STREQ(unvme_ctrlr_transport(c), "uring-file");
	CHECK(strstr(unvme_ctrlr_transport_info(c), "io_uring") != NULL);
	const struct nvme_id_ctrl *id = unvme_ctrlr_identify_data(c);
	CHECK(memcmp(id->mn, "uNVMe file backend", 18) == 0);
	CHECK_EQ(unvme_ctrlr_first_nsid(c), 1);
	CHECK_EQ(unvme_ctrlr_next_nsid(c, 1), 0);
	struct unvme_ns *ns = unvme_ctrlr_ns(c, 1);
	REQUIRE(ns);
	CHECK_EQ(unvme_ns_nlbas(ns), NBLK);
	CHECK_EQ(unvme_ns_lba_size(ns), 512);
	CHECK_EQ(unvme_ns_csi(ns), NVME_CSI_NVM);
	CHECK_EQ(unvme_ctrlr_max_xfer(c), 2u << 20);
	struct nvme_regs_snapshot regs;
	CHECK_EQ(unvme_ctrlr_regs(c, &regs), -EOPNOTSUPP);
	CHECK_EQ(unvme_ctrlr_reset(c), 0);
	CHECK(unvme_ctrlr_ns(c, 1) == ns); /* the reset kept the namespace */
	uint32_t v;
	CHECK_EQ(unvme_get_features(c, NVME_FEAT_VOLATILE_WC, 0, 0, &v), 0);
	CHECK_EQ(v, 1);
	unvme_ctrlr_close(c);
	/* lba=4096 */
	c = fresh("&lba=4096");
	REQUIRE(c);
	CHECK_EQ(unvme_ns_lba_size(unvme_ctrlr_ns(c, 1)), 4096);
	CHECK_EQ(unvme_ns_nlbas(unvme_ctrlr_ns(c, 1)), NBLK / 8);
	unvme_ctrlr_close(c);
}

static void test_rw_reaches_the_file(void)
{
	const char *variants[] = { "", "&fixedbufs=0", "&direct=0" };
	for (size_t v = 0; v < 3; v++) {
		struct unvme_ctrlr *c = fresh(variants[v]);
		REQUIRE(c);
		struct unvme_ns *ns = unvme_ctrlr_ns(c, 1);
		struct unvme_qpair *qp;
		REQUIRE(unvme_qpair_create(c, NULL, &qp) == 0);
		uint8_t *w = unvme_dma_alloc(8192, 4096), *r = unvme_dma_zalloc(8192, 4096);
		for (int i = 0; i < 8192; i++)
			w[i] = (uint8_t)(i * 7 + v);
		CHECK_EQ(unvme_write_sync(ns, qp, w, 100, 16), 0);
		CHECK_EQ(unvme_read_sync(ns, qp, r, 100, 16), 0);
		CHECK(memcmp(w, r, 8192) == 0);
		uint8_t f[8192];
		file_bytes(100 * 512, f, sizeof(f));
		CHECK(memcmp(f, w, 8192) == 0);
		/* ordinary memory works too (unregistered, the kernel pins it) */
		uint8_t *heap = aligned_alloc(4096, 4096);
		CHECK_EQ(unvme_read_sync(ns, qp, heap, 100, 8), 0);
		CHECK(memcmp(heap, w, 4096) == 0);
		free(heap);
		CHECK_EQ(unvme_flush_sync(ns, qp), 0);
		unvme_dma_free(w);
		unvme_dma_free(r);
		unvme_qpair_destroy(qp);
		unvme_ctrlr_close(c);
	}
}

static void test_statuses_a_controller_gives(void)
{
	struct unvme_ctrlr *c = fresh("");
	REQUIRE(c);
	struct unvme_ns *ns = unvme_ctrlr_ns(c, 1);
	struct unvme_qpair *qp;
	REQUIRE(unvme_qpair_create(c, NULL, &qp) == 0);
	uint8_t *b = unvme_dma_zalloc(4096, 4096);
	CHECK_EQ(unvme_read_sync(ns, qp, b, NBLK - 4, 8), NVME_STATUS(0, NVME_SC_LBA_OUT_OF_RANGE));
	CHECK_EQ(unvme_write_sync(ns, qp, b, NBLK, 1), NVME_STATUS(0, NVME_SC_LBA_OUT_OF_RANGE));
	CHECK_EQ(unvme_write_zeroes_sync(ns, qp, NBLK - 1, 2), NVME_STATUS(0, NVME_SC_LBA_OUT_OF_RANGE));
	struct nvme_sqe cmd = { .opc = NVME_CMD_READ, .nsid = 2, .cdw12 = 0 };
	CHECK_EQ(unvme_qpair_cmd_sync(qp, &cmd, b, 512, NULL), NVME_STATUS(0, NVME_SC_INVALID_NS_OR_FORMAT));
	cmd = (struct nvme_sqe){ .opc = 0x7a, .nsid = 1 }; /* zone management on a file */
	CHECK_EQ(unvme_qpair_cmd_sync(qp, &cmd, b, 4096, NULL), NVME_STATUS(0, NVME_SC_INVALID_OPCODE));
	cmd = (struct nvme_sqe){ .opc = NVME_CMD_READ, .nsid = 1, .cdw12 = 7 };
	CHECK_EQ(unvme_qpair_cmd_sync(qp, &cmd, b, 512, NULL), -EINVAL); /* 8 blocks, 1 block of buffer */
	CHECK(strstr(unvme_errmsg(), "needs a 4096-byte buffer") != NULL);
	cmd = (struct nvme_sqe){ .opc = NVME_CMD_FLUSH, .nsid = 0xffffffffu };
	CHECK_EQ(unvme_qpair_cmd_sync(qp, &cmd, NULL, 0, NULL), 0);
	CHECK_EQ(unvme_qpair_outstanding(qp), 0);
	unvme_dma_free(b);
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c);
}

static void test_compare_zeroes_deallocate(void)
{
	struct unvme_ctrlr *c = fresh("");
	REQUIRE(c);
	struct unvme_ns *ns = unvme_ctrlr_ns(c, 1);
	struct unvme_qpair *qp;
	REQUIRE(unvme_qpair_create(c, NULL, &qp) == 0);
	uint8_t *w = unvme_dma_alloc(65536, 4096), *r = unvme_dma_alloc(65536, 4096);
	memset(w, 0x5a, 65536);
	CHECK_EQ(unvme_write_sync(ns, qp, w, 0, 128), 0);
	CHECK_EQ(unvme_compare_sync(ns, qp, w, 0, 128), 0);
	w[70000 % 65536] ^= 1;
	CHECK_EQ(unvme_compare_sync(ns, qp, w, 0, 128), NVME_STATUS(NVME_SCT_MEDIA, NVME_SC_COMPARE_FAILURE));
	w[70000 % 65536] ^= 1;
	/* Verify reads without moving data */
	struct nvme_sqe cmd = { .opc = NVME_CMD_VERIFY, .nsid = 1, .cdw10 = 0, .cdw12 = 127 };
	CHECK_EQ(unvme_qpair_cmd_sync(qp, &cmd, NULL, 0, NULL), 0);
	CHECK_EQ(unvme_write_zeroes_sync(ns, qp, 8, 8), 0);
	CHECK_EQ(unvme_read_sync(ns, qp, r, 0, 128), 0);
	for (int i = 0; i < 65536; i++) {
		uint8_t want = (i >= 8 * 512 && i < 16 * 512) ? 0 : 0x5a;
		if (r[i] != want) {
			CHECK_EQ(r[i], want);
			break;
		}
	}
	CHECK_EQ(unvme_deallocate_sync(ns, qp, 64, 64), 0);
	uint8_t f[512];
	file_bytes(100 * 512, f, sizeof(f));
	CHECK_EQ(f[0] | f[511], 0);
	/* Dataset Management with several ranges, one empty */
	struct nvme_dsm_range *rg = unvme_dma_zalloc(3 * sizeof(*rg), 64);
	rg[0] = (struct nvme_dsm_range){ .slba = 0, .nlb = 1 };
	rg[1] = (struct nvme_dsm_range){ .slba = 20, .nlb = 0 };
	rg[2] = (struct nvme_dsm_range){ .slba = 30, .nlb = 2 };
	cmd = (struct nvme_sqe){ .opc = NVME_CMD_DSM, .nsid = 1, .cdw10 = 2, .cdw11 = NVME_DSM_ATTR_AD };
	CHECK_EQ(unvme_qpair_cmd_sync(qp, &cmd, rg, 3 * sizeof(*rg), NULL), 0);
	file_bytes(30 * 512, f, sizeof(f));
	CHECK_EQ(f[0] | f[511], 0);
	file_bytes(2 * 512, f, sizeof(f));
	CHECK_EQ(f[0], 0x5a);
	rg[2].slba = NBLK; /* out of range: nothing happens */
	CHECK_EQ(unvme_qpair_cmd_sync(qp, &cmd, rg, 3 * sizeof(*rg), NULL), NVME_STATUS(0, NVME_SC_LBA_OUT_OF_RANGE));
	unvme_dma_free(rg);
	unvme_dma_free(w);
	unvme_dma_free(r);
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c);
}

static void test_data_outlives_the_process_view(void)
{
	struct unvme_ctrlr *c = fresh("");
	REQUIRE(c);
	struct unvme_qpair *qp;
	REQUIRE(unvme_qpair_create(c, NULL, &qp) == 0);
	uint8_t *b = unvme_dma_alloc(512, 512);
	memset(b, 0x77, 512);
	CHECK_EQ(unvme_write_sync(unvme_ctrlr_ns(c, 1), qp, b, 9, 1), 0);
	/* the file is locked while open: by another program, or a second open here */
	struct unvme_ctrlr *c2 = NULL;
	char again[sizeof(path)];
	snprintf(again, sizeof(again), "%s", path);
	CHECK_EQ(unvme_ctrlr_open(again, NULL, &c2), -EBUSY);
	CHECK(strstr(unvme_errmsg(), "in use") != NULL);
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c);
	/* reopened at once by its bare path: the lock went with the close */
	REQUIRE(unvme_ctrlr_open(again, NULL, &c2) == 0);
	REQUIRE(unvme_qpair_create(c2, NULL, &qp) == 0);
	memset(b, 0, 512);
	CHECK_EQ(unvme_read_sync(unvme_ctrlr_ns(c2, 1), qp, b, 9, 1), 0);
	CHECK_EQ(b[0], 0x77);
	CHECK_EQ(b[511], 0x77);
	unvme_dma_free(b);
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c2);
}

static void test_open_errors(void)
{
	struct unvme_ctrlr *c = NULL;
	char u[PATH_MAX + 64];
	snprintf(u, sizeof(u), "file://%s/missing.img", dir);
	CHECK_EQ(unvme_ctrlr_open(u, NULL, &c), -ENOENT);
	CHECK(strstr(unvme_errmsg(), "size=") != NULL); /* how to create it */
	unvme_ctrlr_close(fresh(""));
	snprintf(u, sizeof(u), "file://%s?size=1M", path);
	CHECK_EQ(unvme_ctrlr_open(u, NULL, &c), -EINVAL); /* it is 2 MiB */
	CHECK(strstr(unvme_errmsg(), "2097152 bytes") != NULL);
	snprintf(u, sizeof(u), "%s/g.img", dir);
	int fd = open(u, O_CREAT | O_WRONLY, 0644);
	REQUIRE(fd >= 0);
	REQUIRE(write(fd, "abc", 3) == 3);
	close(fd);
	CHECK_EQ(unvme_ctrlr_open(u, NULL, &c), -EINVAL); /* less than a block */
	CHECK(strstr(unvme_errmsg(), "less than one") != NULL);
	CHECK(c == NULL);
}

/* Deep queue, random reads and writes, every result checked against a shadow copy. */
struct slot {
	int busy; /* 1 in flight, 2 completed */
	int write;
	uint32_t unit;
	int status;
};

static void slot_done(void *arg, const struct nvme_cqe *cpl)
{
	struct slot *sl = arg;
	sl->status = NVME_STATUS_FROM_CQE(cpl->status);
	sl->busy = 2;
}

static void test_deep_queue_against_shadow(void)
{
	struct unvme_ctrlr *c = fresh("");
	REQUIRE(c);
	struct unvme_ns *ns = unvme_ctrlr_ns(c, 1);
	struct unvme_qpair *qp;
	struct unvme_qpair_opts qo = { .depth = 64 };
	REQUIRE(unvme_qpair_create(c, &qo, &qp) == 0);
	enum { SLOTS = 63, UNITS = NBLK / 8 };
	static uint8_t shadow[NBLK * 512];
	memset(shadow, 0, sizeof(shadow));
	uint8_t *bufs = unvme_dma_zalloc((size_t)SLOTS * 4096, 4096);
	static struct slot s[SLOTS];
	static uint8_t unit_busy[UNITS];
	memset(s, 0, sizeof(s));
	memset(unit_busy, 0, sizeof(unit_busy));
	unsigned seed = 1, done = 0, bad = 0, failed = 0;
	for (unsigned round = 0; done < 20000;) {
		for (unsigned i = 0; i < SLOTS; i++) {
			if (s[i].busy == 2) { /* completed: check, then free */
				uint8_t *b = bufs + (size_t)i * 4096;
				if (s[i].status)
					failed++;
				else if (!s[i].write && memcmp(b, shadow + (size_t)s[i].unit * 4096, 4096))
					bad++;
				unit_busy[s[i].unit] = 0;
				s[i].busy = 0;
				done++;
			}
			if (s[i].busy)
				continue;
			seed = seed * 1103515245u + 12345u;
			uint32_t unit = (seed >> 8) % UNITS;
			if (unit_busy[unit])
				continue;
			unit_busy[unit] = 1;
			s[i] = (struct slot){ .busy = 1, .write = (seed >> 4) & 1, .unit = unit };
			uint8_t *b = bufs + (size_t)i * 4096;
			int rc;
			if (s[i].write) {
				for (int k = 0; k < 4096; k++)
					b[k] = (uint8_t)(seed + k * 31 + round);
				memcpy(shadow + (size_t)unit * 4096, b, 4096);
				rc = unvme_write(ns, qp, b, (uint64_t)unit * 8, 8, slot_done, &s[i]);
			} else {
				rc = unvme_read(ns, qp, b, (uint64_t)unit * 8, 8, slot_done, &s[i]);
			}
			if (rc) {
				CHECK_EQ(rc, 0);
				goto out;
			}
		}
		round++;
		if (unvme_qpair_poll(qp, 0) < 0)
			break;
	}
out:
	CHECK_EQ(bad, 0);
	CHECK_EQ(failed, 0);
	while (unvme_qpair_outstanding(qp))
		unvme_qpair_poll(qp, 0);
	uint8_t *f = malloc(sizeof(shadow));
	file_bytes(0, f, sizeof(shadow));
	CHECK(memcmp(f, shadow, sizeof(shadow)) == 0);
	free(f);
	unvme_dma_free(bufs);
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c);
}

/* ---- a split queue pair: one thread submits, another polls ---- */

enum { SPLIT_CMDS = 20000, SPLIT_BUFS = 32 };

struct split {
	struct unvme_qpair *qp;
	struct unvme_ns *ns;
	uint8_t *bufs;
	_Atomic int busy[SPLIT_BUFS];
	_Atomic uint32_t completed;
	_Atomic uint32_t errors;
	_Atomic int stop;
};

static struct split *split_run;

static void split_done(void *arg, const struct nvme_cqe *cpl)
{
	_Atomic int *busy = arg;
	if (NVME_STATUS_FROM_CQE(cpl->status))
		atomic_fetch_add(&split_run->errors, 1);
	atomic_fetch_add(&split_run->completed, 1);
	atomic_store_explicit(busy, 0, memory_order_release);
}

static void *poller(void *arg)
{
	struct split *sp = arg;
	while (!atomic_load(&sp->stop) || unvme_qpair_outstanding(sp->qp))
		if (unvme_qpair_poll(sp->qp, 0) < 0)
			atomic_fetch_add(&sp->errors, 1);
	return NULL;
}

static void test_split_queue_pair(void)
{
	struct unvme_ctrlr *c = fresh("");
	REQUIRE(c);
	static struct split sp;
	memset(&sp, 0, sizeof(sp));
	split_run = &sp;
	sp.ns = unvme_ctrlr_ns(c, 1);
	struct unvme_qpair_opts qo = { .depth = SPLIT_BUFS + 1, .split = true };
	REQUIRE(unvme_qpair_create(c, &qo, &sp.qp) == 0);
	sp.bufs = unvme_dma_zalloc(SPLIT_BUFS * 512, 4096);
	uint8_t *w = unvme_dma_alloc(512, 512);
	memset(w, 0x3c, 512);
	struct unvme_qpair *sq;
	REQUIRE(unvme_qpair_create(c, NULL, &sq) == 0);
	CHECK_EQ(unvme_write_sync(sp.ns, sq, w, 0, 1), 0);
	/* the _sync helpers are refused on a split queue */
	CHECK_EQ(unvme_read_sync(sp.ns, sp.qp, w, 0, 1), -EINVAL);
	pthread_t t;
	REQUIRE(pthread_create(&t, NULL, poller, &sp) == 0);
	uint32_t submitted = 0, next = 0;
	while (submitted < SPLIT_CMDS) {
		int expect = 0;
		if (!atomic_compare_exchange_strong(&sp.busy[next], &expect, 1)) {
			next = (next + 1) % SPLIT_BUFS;
			continue;
		}
		int rc = unvme_read(sp.ns, sp.qp, sp.bufs + next * 512, next % 8, 1, split_done,
				    &sp.busy[next]);
		if (rc == -EAGAIN) {
			atomic_store(&sp.busy[next], 0);
			continue;
		}
		CHECK_EQ(rc, 0);
		if (rc)
			break;
		if (submitted % 7 == 0)
			unvme_qpair_ring(sp.qp); /* the submitter rings sometimes, the poller always */
		submitted++;
		next = (next + 1) % SPLIT_BUFS;
	}
	atomic_store(&sp.stop, 1);
	pthread_join(t, NULL);
	CHECK_EQ(atomic_load(&sp.completed), submitted);
	CHECK_EQ(atomic_load(&sp.errors), 0);
	CHECK_EQ(sp.bufs[0], 0x3c); /* block 0 read by buffer 0 (and 8, 16, 24) */
	unvme_dma_free(w);
	unvme_dma_free(sp.bufs);
	unvme_qpair_destroy(sq);
	unvme_qpair_destroy(sp.qp);
	unvme_ctrlr_close(c);
}

static void status_done(void *arg, const struct nvme_cqe *cpl)
{
	*(int *)arg = NVME_STATUS_FROM_CQE(cpl->status);
}

/* Destroying a queue pair with commands in flight: they complete, with their real status. */
static void test_destroy_waits_for_the_kernel(void)
{
	struct unvme_ctrlr *c = fresh("");
	REQUIRE(c);
	struct unvme_ns *ns = unvme_ctrlr_ns(c, 1);
	struct unvme_qpair *qp;
	REQUIRE(unvme_qpair_create(c, NULL, &qp) == 0);
	uint8_t *b = unvme_dma_zalloc(16 * 4096, 4096);
	static int status[16];
	for (int i = 0; i < 16; i++) {
		status[i] = -1;
		CHECK_EQ(unvme_write(ns, qp, b + i * 4096, (uint64_t)i * 8, 8, status_done, &status[i]), 0);
	}
	unvme_qpair_ring(qp);
	unvme_qpair_destroy(qp); /* callbacks run in here */
	for (int i = 0; i < 16; i++)
		CHECK_EQ(status[i], 0);
	unvme_dma_free(b);
	unvme_ctrlr_close(c);
}

TEST_MAIN(TEST(test_identity_and_geometry), TEST(test_rw_reaches_the_file),
	  TEST(test_statuses_a_controller_gives), TEST(test_compare_zeroes_deallocate),
	  TEST(test_data_outlives_the_process_view), TEST(test_open_errors),
	  TEST(test_deep_queue_against_shadow), TEST(test_split_queue_pair),
	  TEST(test_destroy_waits_for_the_kernel))
