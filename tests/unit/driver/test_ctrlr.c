/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Controllers: the transfer limit from any MDTS a device may report (a large one must not
 * overflow), one controller per device per process (a second open shares the first, the
 * last close detaches), and sized option structs.
 */
#include <errno.h>
#include <string.h>

#include "lib/driver/ctrlr.h"
#include "unvme/unvme.h"
#include "test_util.h"

static void test_max_xfer_from_any_mdts(void)
{
	/* one PRP list page per command: 2 MiB with 4 KiB pages */
	CHECK_EQ(ctrlr_max_xfer_for(4096, 0), 2u << 20);
	CHECK_EQ(ctrlr_max_xfer_for(4096, 1), 8192);
	CHECK_EQ(ctrlr_max_xfer_for(4096, 5), 128u << 10);
	CHECK_EQ(ctrlr_max_xfer_for(4096, 9), 2u << 20);
	CHECK_EQ(ctrlr_max_xfer_for(4096, 10), 2u << 20);
	/* every value a device may send, the ones that would shift past 64 bits included
	 * (UBSan checks the arithmetic in the sanitizer build) */
	for (unsigned mdts = 0; mdts < 256; mdts++) {
		uint32_t m = ctrlr_max_xfer_for(4096, (uint8_t)mdts);
		CHECK(m >= 4096 && m <= (2u << 20));
		if (mdts >= 9)
			CHECK_EQ(m, 2u << 20);
	}
	CHECK_EQ(ctrlr_max_xfer_for(65536, 52), 512u << 20);
	CHECK_EQ(ctrlr_max_xfer_for(65536, 255), 512u << 20);
	CHECK_EQ(ctrlr_max_xfer_for(1u << 27, 255), UINT32_MAX); /* MPSMIN 15: capped */
}

static void test_one_controller_per_device(void)
{
	const char *uri = "emu://shared?ns=mem:1M:512";
	struct unvme_ctrlr *a = NULL, *b = NULL, *other = NULL;
	REQUIRE(unvme_ctrlr_open(uri, NULL, &a) == 0);
	/* the same address, through an alias too: the same controller */
	setenv("UNVME_DEVICES", "sharedalias=emu://shared?ns=mem:1M:512", 1);
	REQUIRE(unvme_ctrlr_open("sharedalias", NULL, &b) == 0);
	CHECK(a == b);
	REQUIRE(unvme_ctrlr_open("emu://shared2?ns=mem:1M:512", NULL, &other) == 0);
	CHECK(other != a);
	/* both users see the same data (a memory namespace lives as long as its device) */
	struct unvme_qpair *qa, *qb;
	REQUIRE(unvme_qpair_create(a, NULL, &qa) == 0);
	REQUIRE(unvme_qpair_create(b, NULL, &qb) == 0);
	CHECK(unvme_qpair_id(qa) != unvme_qpair_id(qb));
	uint8_t *buf = unvme_dma_zalloc(512, 512);
	memset(buf, 0xa5, 512);
	CHECK_EQ(unvme_write_sync(unvme_ctrlr_ns(a, 1), qa, buf, 5, 1), 0);
	/* a close drops one reference: the other user's queue and data stay */
	unvme_qpair_destroy(qa);
	unvme_ctrlr_close(a);
	memset(buf, 0, 512);
	CHECK_EQ(unvme_read_sync(unvme_ctrlr_ns(b, 1), qb, buf, 5, 1), 0);
	CHECK_EQ(buf[0], 0xa5);
	unvme_qpair_destroy(qb);
	unvme_ctrlr_close(b);
	/* the last close detached it: a new open is a new device (fresh memory). A named device
	 * that a device process ran (docs/multi-process.md) outlives its last client by its idle
	 * period: told to end now (-ESRCH: this process ran it itself) */
	int stop = unvme_serve_stop(uri, 0);
	CHECK(stop == 0 || stop == -ESRCH);
	REQUIRE(unvme_ctrlr_open(uri, NULL, &a) == 0);
	REQUIRE(unvme_qpair_create(a, NULL, &qa) == 0);
	CHECK_EQ(unvme_read_sync(unvme_ctrlr_ns(a, 1), qa, buf, 5, 1), 0);
	CHECK_EQ(buf[0], 0);
	unvme_qpair_destroy(qa);
	unvme_ctrlr_close(a);
	unvme_ctrlr_close(other);
	unvme_dma_free(buf);
	unsetenv("UNVME_DEVICES");
}

/* Option structs start with their size (unvme.h, lib/common/opts.h): 0 reads the first
 * version, a larger struct from a newer header is served when its extra bytes are zero and
 * refused with -E2BIG when one of them is set, a size below the first version's is -EINVAL. */
struct newer_qpair_opts {
	struct unvme_qpair_opts v1;
	uint64_t field_of_a_later_version;
};

static void test_option_sizes(void)
{
	struct unvme_ctrlr_opts co;
	memset(&co, 0x5a, sizeof(co));
	unvme_ctrlr_opts_default(&co); /* the macro: this header's size */
	CHECK_EQ(co.size, sizeof(co));
	CHECK_EQ(co.io_queue_depth, 256);
	co.io_queue_depth = 64;
	struct unvme_ctrlr *c = NULL;
	REQUIRE(unvme_ctrlr_open("emu://opts?ns=mem:1M:512", &co, &c) == 0);
	struct unvme_qpair *qp;
	REQUIRE(unvme_qpair_create(c, NULL, &qp) == 0); /* depth 0: the controller's default */
	CHECK_EQ(qp->depth, 64);
	unvme_qpair_destroy(qp);

	struct unvme_qpair_opts q0 = { .depth = 8 }; /* size 0: the first version */
	REQUIRE(unvme_qpair_create(c, &q0, &qp) == 0);
	CHECK_EQ(qp->depth, 8);
	unvme_qpair_destroy(qp);
	struct unvme_qpair_opts q1 = UNVME_OPTS_INIT(struct unvme_qpair_opts);
	q1.depth = 16;
	REQUIRE(unvme_qpair_create(c, &q1, &qp) == 0);
	CHECK_EQ(qp->depth, 16);
	unvme_qpair_destroy(qp);

	struct newer_qpair_opts n = { .v1 = { .size = sizeof(n), .depth = 32 } };
	REQUIRE(unvme_qpair_create(c, &n.v1, &qp) == 0); /* the later field left zero */
	CHECK_EQ(qp->depth, 32);
	unvme_qpair_destroy(qp);
	n.field_of_a_later_version = 1;
	qp = NULL;
	CHECK_EQ(unvme_qpair_create(c, &n.v1, &qp), -E2BIG);
	CHECK(qp == NULL);
	CHECK(strstr(unvme_errmsg(), "newer header") != NULL);
	struct unvme_qpair_opts tiny = { .size = 4, .depth = 8 };
	CHECK_EQ(unvme_qpair_create(c, &tiny, &qp), -EINVAL);
	CHECK(strstr(unvme_errmsg(), "UNVME_OPTS_INIT") != NULL);
	unvme_ctrlr_close(c);

	/* a newer header's controller options with a later field set */
	struct { struct unvme_ctrlr_opts o; uint64_t later; } big = { co, 7 };
	big.o.size = sizeof(big);
	c = NULL;
	CHECK_EQ(unvme_ctrlr_open("emu://opts?ns=mem:1M:512", &big.o, &c), -E2BIG);
	CHECK(c == NULL);
}

TEST_MAIN(TEST(test_max_xfer_from_any_mdts), TEST(test_one_controller_per_device),
	  TEST(test_option_sizes))
