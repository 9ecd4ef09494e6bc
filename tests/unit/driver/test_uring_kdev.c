/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Addresses of devices the kernel keeps and of files (lib/transport/uring/uring_kdev.c), the identity
 * made up for a file or a block device without passthrough (uring_ident.c), and how device
 * ids reach them.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/transport/uring/uring_ident.h"
#include "lib/transport/uring/uring_kdev.h"
#include "test_util.h"
#include "unvme/unvme.h"

static char dir[PATH_MAX];

static void remove_dir(void)
{
	char path[PATH_MAX + 16];
	snprintf(path, sizeof(path), "%s/r.img", dir);
	unlink(path);
	rmdir(dir);
}

static void make_dir(void)
{
	if (dir[0])
		return;
	snprintf(dir, sizeof(dir), "/tmp/unvme-kdev-XXXXXX");
	if (!mkdtemp(dir))
		abort();
	atexit(remove_dir);
}

static void test_kernel_addresses_are_recognised(void)
{
	CHECK(kdev_addr_is_kernel("/dev/ng0n1"));
	CHECK(kdev_addr_is_kernel("file:///tmp/x"));
	CHECK(kdev_addr_is_kernel("/tmp/x.img"));
	CHECK(!kdev_addr_is_kernel("emu://x"));
	CHECK(!kdev_addr_is_kernel("0000:01:00.0"));
	CHECK(!kdev_addr_is_kernel("emu0"));
}

static void test_file_uri_options(void)
{
	struct kdev_addr a;
	CHECK_EQ(kdev_parse("file:///no/such/dir/f.img?lba=4096&size=64M&direct=0&fixedbufs=off", &a), 0);
	CHECK_EQ(a.kind, KDEV_FILE); /* missing: it may be created */
	CHECK_STREQ(a.path, "/no/such/dir/f.img");
	CHECK_EQ(a.lba, 4096);
	CHECK_EQ(a.size, 64ull << 20);
	CHECK_EQ(a.direct, KDEV_OFF);
	CHECK_EQ(a.fixedbufs, KDEV_OFF);
	CHECK_EQ(a.iopoll, KDEV_AUTO);
	/* %XX escapes let a path hold '?', '&' or spaces */
	CHECK_EQ(kdev_parse("file:///tmp/a%20b%3Fc.img", &a), 0);
	CHECK_STREQ(a.path, "/tmp/a b?c.img");
	CHECK_EQ(kdev_parse("file:///tmp/x?size=1G", &a), 0);
	CHECK_EQ(a.size, 1ull << 30);
	CHECK_EQ(a.lba, 0); /* default */
}

static void test_bad_addresses_say_what_is_wrong(void)
{
	struct kdev_addr a;
	CHECK_EQ(kdev_parse("file://relative.img", &a), -EINVAL);
	CHECK(strstr(unvme_errmsg(), "absolute") != NULL);
	CHECK_EQ(kdev_parse("file:///tmp/x?lba=513", &a), -EINVAL);
	CHECK(strstr(unvme_errmsg(), "lba=513") && strstr(unvme_errmsg(), "512 or 4096"));
	CHECK_EQ(kdev_parse("file:///tmp/x?size=0", &a), -EINVAL);
	CHECK_EQ(kdev_parse("file:///tmp/x?size=12Q", &a), -EINVAL);
	CHECK_EQ(kdev_parse("file:///tmp/x?colour=red", &a), -EINVAL);
	CHECK(strstr(unvme_errmsg(), "unknown option 'colour'") != NULL);
	CHECK_EQ(kdev_parse("file:///tmp/x?direct", &a), -EINVAL);
	CHECK(strstr(unvme_errmsg(), "key=value") != NULL);
	CHECK_EQ(kdev_parse("/dev/null?iopoll=maybe", &a), -EINVAL);
	CHECK_EQ(kdev_parse("/dev/null?lba=4096", &a), -EINVAL); /* a file:// option */
	CHECK_EQ(kdev_parse("file:///tmp/a%2", &a), -EINVAL);
	CHECK_EQ(kdev_parse("file:///dev/null", &a), -EINVAL); /* a device is named by its path */
}

static void test_kinds_from_the_file_system(void)
{
	make_dir();
	char path[PATH_MAX + 16];
	snprintf(path, sizeof(path), "%s/r.img", dir);
	int fd = open(path, O_CREAT | O_WRONLY, 0644);
	REQUIRE(fd >= 0);
	close(fd);
	struct kdev_addr a;
	CHECK_EQ(kdev_parse(path, &a), 0);
	CHECK_EQ(a.kind, KDEV_FILE);
	CHECK_EQ(kdev_parse("/dev/null", &a), 0);
	CHECK_EQ(a.kind, KDEV_NONE); /* a character device, not an NVMe one */
	CHECK_EQ(kdev_parse(dir, &a), 0);
	CHECK_EQ(a.kind, KDEV_NONE);
	CHECK_EQ(kdev_parse("/dev/ng97n3", &a), 0);
	CHECK_EQ(a.kind, KDEV_NONE); /* no such device here */
}

static void test_unusable_paths_are_explained(void)
{
	struct unvme_ctrlr *c = NULL;
	CHECK_EQ(unvme_ctrlr_open("/dev/ng97n3", NULL, &c), -ENOENT);
	CHECK(strstr(unvme_errmsg(), "/dev/ng97n3") && strstr(unvme_errmsg(), "nvme list"));
	CHECK(c == NULL);
	CHECK_EQ(unvme_ctrlr_open("/dev/null", NULL, &c), -ENODEV);
	CHECK(strstr(unvme_errmsg(), "not an NVMe one") != NULL);
	CHECK_EQ(unvme_ctrlr_open("/", NULL, &c), -ENODEV);
	CHECK_EQ(unvme_ctrlr_open("file:///tmp/x?lba=7", NULL, &c), -EINVAL);
	CHECK_EQ(unvme_ctrlr_open("ftp://x", NULL, &c), -EINVAL);
	CHECK(strstr(unvme_errmsg(), "file://") != NULL); /* the known schemes are listed */
}

static void test_device_ids_resolve_to_themselves(void)
{
	char out[PATH_MAX + 256];
	unsetenv("UNVME_DEVICES");
	CHECK_EQ(unvme_devid_resolve("/dev/ng0n1", out, sizeof(out)), 0);
	CHECK_STREQ(out, "/dev/ng0n1");
	CHECK_EQ(unvme_devid_resolve("file:///tmp/x?lba=4096", out, sizeof(out)), 0);
	CHECK_STREQ(out, "file:///tmp/x?lba=4096");
	/* and an alias may name one */
	setenv("UNVME_DEVICES", "ssd=/dev/ng1n1;img=file:///tmp/y", 1);
	CHECK_EQ(unvme_devid_resolve("ssd", out, sizeof(out)), 0);
	CHECK_STREQ(out, "/dev/ng1n1");
	CHECK_EQ(unvme_devid_resolve("img", out, sizeof(out)), 0);
	CHECK_STREQ(out, "file:///tmp/y");
	unsetenv("UNVME_DEVICES");
}

static struct uring_ident ident(void)
{
	struct uring_ident id = { .nsid = 1, .nlbas = 1000, .lba_size = 4096, .mdts = 9,
				  .oncs = NVME_CTRL_ONCS_COMPARE, .write_cache = true, .nr_queues = 8 };
	snprintf(id.model, sizeof(id.model), "uNVMe file backend");
	snprintf(id.firmware, sizeof(id.firmware), "FILE1.0");
	uring_ident_serial(&id, "FILE", "/a/b.img");
	return id;
}

static void test_made_up_identity(void)
{
	struct uring_ident id = ident();
	CHECK_EQ(strlen(id.serial), 20);
	CHECK(strncmp(id.serial, "FILE", 4) == 0);
	struct uring_ident other = id;
	uring_ident_serial(&other, "FILE", "/a/c.img");
	CHECK(strcmp(id.serial, other.serial) != 0);

	static uint8_t buf[4096];
	struct nvme_cqe cpl;
	struct nvme_sqe cmd = { .opc = NVME_ADM_IDENTIFY, .cdw10 = NVME_CNS_CTRL };
	CHECK_EQ(uring_ident_admin(&id, &cmd, buf, sizeof(buf), &cpl), 0);
	const struct nvme_id_ctrl *c = (const void *)buf;
	CHECK(memcmp(c->mn, "uNVMe file backend  ", 20) == 0); /* space padded */
	CHECK(memcmp(c->sn, id.serial, 20) == 0);
	CHECK(memcmp(c->fr, "FILE1.0 ", 8) == 0);
	CHECK_EQ(c->nn, 1);
	CHECK_EQ(c->mdts, 9);
	CHECK_EQ(c->vwc, 1);
	CHECK_EQ(c->oncs, NVME_CTRL_ONCS_COMPARE);

	cmd = (struct nvme_sqe){ .opc = NVME_ADM_IDENTIFY, .nsid = 1, .cdw10 = NVME_CNS_NS };
	CHECK_EQ(uring_ident_admin(&id, &cmd, buf, sizeof(buf), &cpl), 0);
	const struct nvme_id_ns *ns = (const void *)buf;
	CHECK_EQ(ns->nsze, 1000);
	CHECK_EQ(nvme_ns_lba_size(ns), 4096);
	cmd.nsid = 2;
	CHECK_EQ(uring_ident_admin(&id, &cmd, buf, sizeof(buf), &cpl),
		 NVME_STATUS(0, NVME_SC_INVALID_NS_OR_FORMAT));
	cmd.nsid = 0;
	CHECK_EQ(uring_ident_admin(&id, &cmd, buf, sizeof(buf), &cpl),
		 NVME_STATUS(0, NVME_SC_INVALID_NS_OR_FORMAT));

	cmd = (struct nvme_sqe){ .opc = NVME_ADM_IDENTIFY, .cdw10 = NVME_CNS_ACTIVE_NS_LIST };
	CHECK_EQ(uring_ident_admin(&id, &cmd, buf, sizeof(buf), &cpl), 0);
	CHECK_EQ(((uint32_t *)buf)[0], 1);
	CHECK_EQ(((uint32_t *)buf)[1], 0);
	cmd.nsid = 1; /* namespaces after 1: none */
	CHECK_EQ(uring_ident_admin(&id, &cmd, buf, sizeof(buf), &cpl), 0);
	CHECK_EQ(((uint32_t *)buf)[0], 0);

	cmd = (struct nvme_sqe){ .opc = NVME_ADM_IDENTIFY, .nsid = 1, .cdw10 = NVME_CNS_NS_DESC_LIST };
	CHECK_EQ(uring_ident_admin(&id, &cmd, buf, sizeof(buf), &cpl), 0);
	CHECK_EQ(buf[0], NVME_NIDT_CSI);
	CHECK_EQ(buf[4], NVME_CSI_NVM);

	cmd = (struct nvme_sqe){ .opc = NVME_ADM_GET_FEATURES, .cdw10 = NVME_FEAT_NUM_QUEUES };
	CHECK_EQ(uring_ident_admin(&id, &cmd, NULL, 0, &cpl), 0);
	CHECK_EQ(cpl.dw0, (7u << 16) | 7u);
	cmd.cdw10 = NVME_FEAT_VOLATILE_WC;
	CHECK_EQ(uring_ident_admin(&id, &cmd, NULL, 0, &cpl), 0);
	CHECK_EQ(cpl.dw0, 1);
	cmd = (struct nvme_sqe){ .opc = NVME_ADM_GET_LOG_PAGE, .cdw10 = 2 };
	CHECK_EQ(uring_ident_admin(&id, &cmd, buf, 512, &cpl), NVME_STATUS(NVME_SCT_CMD, NVME_SC_INVALID_LOG_PAGE));
	cmd = (struct nvme_sqe){ .opc = NVME_ADM_FORMAT_NVM };
	CHECK_EQ(uring_ident_admin(&id, &cmd, NULL, 0, &cpl), NVME_STATUS(0, NVME_SC_INVALID_OPCODE));
	CHECK_EQ(NVME_STATUS_FROM_CQE(cpl.status), NVME_STATUS(0, NVME_SC_INVALID_OPCODE));
}

TEST_MAIN(TEST(test_kernel_addresses_are_recognised), TEST(test_file_uri_options),
	  TEST(test_bad_addresses_say_what_is_wrong), TEST(test_kinds_from_the_file_system),
	  TEST(test_unusable_paths_are_explained), TEST(test_device_ids_resolve_to_themselves),
	  TEST(test_made_up_identity))
