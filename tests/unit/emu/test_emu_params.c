/* SPDX-License-Identifier: BSD-3-Clause */
/* emu:// URI parsing (docs/devices.md). */
#include <errno.h>

#include "hw/emu/emu_ctrl.h"
#include "tests/unit/test_util.h"

static struct emu_params p;
static char err[512];

static int parse(const char *uri)
{
	return emu_params_parse(uri, &p, err, sizeof(err));
}

static void test_defaults(void)
{
	REQUIRE(parse("emu://") == 0);
	CHECK_STREQ(p.name, "emu");
	CHECK_EQ(p.nr_ns, 1);
	CHECK_EQ(p.ns[0].kind, EMU_NS_MEM);
	CHECK_EQ(p.ns[0].size_bytes, 1ull << 30);
	CHECK_EQ(p.ns[0].lba_size, 512);
	CHECK_EQ(p.mode, EMU_MODE_INLINE);
	CHECK_EQ(p.max_queues, 64);
	CHECK_EQ(p.mqes, 4096);
	CHECK_EQ(p.dstrd, 0);
	CHECK_EQ(p.engine_cpu, -1);
	CHECK_STREQ(p.model, "uNVMe Emulated Controller");
	CHECK_STREQ(p.state_path, "");
	CHECK(strlen(p.serial) > 0 && strlen(p.serial) <= 20);
	CHECK(strlen(p.firmware) > 0 && strlen(p.firmware) <= 8);
}

static void test_namespaces(void)
{
	REQUIRE(parse("emu://box?ns=mem:3G:4096&ns=null:1T&ns=file::512:/tmp/a:b.img") == 0);
	CHECK_STREQ(p.name, "box");
	CHECK_EQ(p.nr_ns, 3);
	CHECK_EQ(p.ns[0].kind, EMU_NS_MEM);
	CHECK_EQ(p.ns[0].size_bytes, 3ull << 30);
	CHECK_EQ(p.ns[0].lba_size, 4096);
	CHECK_EQ(p.ns[1].kind, EMU_NS_NULL);
	CHECK_EQ(p.ns[1].size_bytes, 1ull << 40);
	CHECK_EQ(p.ns[1].lba_size, 512);
	CHECK_EQ(p.ns[2].kind, EMU_NS_FILE);
	CHECK_EQ(p.ns[2].size_bytes, 0);
	CHECK_STREQ(p.ns[2].path, "/tmp/a:b.img"); /* the path keeps its colons */
	/* default state file: next to the first file namespace */
	CHECK_STREQ(p.state_path, "/tmp/a:b.img.ctrl");
}

static void test_shorthand(void)
{
	REQUIRE(parse("emu://x?type=null&size=2M&lba=4096") == 0);
	CHECK_EQ(p.nr_ns, 1);
	CHECK_EQ(p.ns[0].kind, EMU_NS_NULL);
	CHECK_EQ(p.ns[0].size_bytes, 2u << 20);
	CHECK_EQ(p.ns[0].lba_size, 4096);
	REQUIRE(parse("emu://x?file=/tmp/f%20g.img&size=1M") == 0);
	CHECK_EQ(p.ns[0].kind, EMU_NS_FILE);
	CHECK_STREQ(p.ns[0].path, "/tmp/f g.img");
	CHECK_STREQ(p.state_path, "/tmp/f g.img.ctrl");
	REQUIRE(parse("emu://x?file=/tmp/f.img&state=") == 0);
	CHECK_STREQ(p.state_path, ""); /* explicitly volatile */
	REQUIRE(parse("emu://x?state=/tmp/s.json") == 0);
	CHECK_STREQ(p.state_path, "/tmp/s.json");
}

static void test_controller_keys(void)
{
	REQUIRE(parse("emu://x?mode=thread&cpu=1&engine=3&queues=8&mqes=1024&dstrd=2"
		      "&serial=SN1&model=My%20Model&fw=FW2") == 0);
	CHECK_EQ(p.mode, EMU_MODE_THREAD);
	CHECK_EQ(p.engine_cpu, 1);
	CHECK_EQ(p.engine, 3);
	CHECK_EQ(p.max_queues, 8);
	CHECK_EQ(p.mqes, 1024);
	CHECK_EQ(p.dstrd, 2);
	CHECK_STREQ(p.serial, "SN1");
	CHECK_STREQ(p.model, "My Model");
	CHECK_STREQ(p.firmware, "FW2");
}

static void test_latency_keys(void)
{
	REQUIRE(parse("emu://x?rlat=80us&wlat=1ms&units=16&bw=3G") == 0);
	CHECK_EQ(p.lat.read_ns, 80000);
	CHECK_EQ(p.lat.write_ns, 1000000);
	CHECK_EQ(p.lat.units, 16);
	CHECK_EQ(p.lat.bw_bytes_per_s, 3ull << 30);
	CHECK_EQ(p.mode, EMU_MODE_THREAD); /* a latency model implies the engine */
	REQUIRE(parse("emu://x?rlat=500ns") == 0);
	CHECK_EQ(p.lat.read_ns, 500);
	CHECK_EQ(parse("emu://x?mode=inline&rlat=1us"), -EINVAL);
	CHECK(strstr(err, "mode=thread"));
}

/* Each bad URI fails with -EINVAL and a message that names the URI and the bad part. */
static void expect_error(const char *uri, const char *fragment)
{
	int rc = parse(uri);
	CHECK_EQ(rc, -EINVAL);
	if (rc == -EINVAL && (!strstr(err, fragment) || !strstr(err, uri))) {
		fprintf(stderr, "  message for %s: \"%s\" lacks \"%s\"\n", uri, err, fragment);
		CHECK(0);
	}
}

static void test_errors(void)
{
	CHECK_EQ(parse("emu://x?ns=mem:3G:513"), -EINVAL);
	CHECK_STREQ(err, "emu URI 'emu://x?ns=mem:3G:513': LBA size 513 is not 512 or 4096");
	expect_error("nvme://x", "emu://");
	expect_error("emu://x?bogus=1", "unknown key 'bogus'");
	expect_error("emu://x?ns", "not key=value");
	expect_error("emu://x?ns=disk:1G", "kind 'disk'");
	expect_error("emu://x?ns=mem:1Q", "size '1Q'");
	expect_error("emu://x?ns=mem:1000", "not a multiple");
	expect_error("emu://x?ns=mem:0", "must not be 0");
	expect_error("emu://x?ns=file:1G", "needs a path");
	expect_error("emu://x?ns=mem:1G:512:/p", "only allowed for file");
	expect_error("emu://x?ns=mem:1G&size=1G", "cannot be combined");
	expect_error("emu://x?type=mem&file=/a", "file= needs type=file");
	expect_error("emu://x?mode=fast", "mode=fast");
	expect_error("emu://x?mode=thread&mode=inline", "more than once");
	expect_error("emu://x?queues=0", "queues=0");
	expect_error("emu://x?queues=1024", "queues=1024");
	expect_error("emu://x?mqes=1", "mqes=1");
	expect_error("emu://x?mqes=65537", "mqes=65537");
	expect_error("emu://x?dstrd=16", "dstrd=16");
	expect_error("emu://x?rlat=80", "rlat=80");
	expect_error("emu://x?rlat=5min", "rlat=5min");
	expect_error("emu://x?units=1025", "units=1025");
	expect_error("emu://x?bw=fast", "bw=fast");
	expect_error("emu://x?serial=123456789012345678901", "serial=");
	expect_error("emu://x?fw=123456789", "fw=");
	expect_error("emu://x?cpu=2", "mode=thread only");
	expect_error("emu://bad/name", "device name");
	expect_error("emu://x?file=/a%2", "%-escape");
	expect_error("emu://x?ns=mem:99999999999999999999G", "size");
	/* the query is strict, one rule for every shape of empty */
	expect_error("emu://x?ns=mem:1M:512&&&", "empty parameter");
	expect_error("emu://x?&ns=mem:1M:512", "empty parameter");
	expect_error("emu://x?ns=mem:1M:512&", "empty parameter");
	expect_error("emu://x?mode=inline&&queues=2", "empty parameter");
	expect_error("emu://x?=5", "empty key");
	expect_error("emu://x?ns=mem:1M&=", "empty key");
	expect_error("emu://x?", "nothing after '?'");
	REQUIRE(parse("emu://x") == 0); /* no query: the defaults */
}

/* A long URI is shown by its start, and the message still says what is wrong. */
static void test_long_uri_echo(void)
{
	static char uri[8192];
	strcpy(uri, "emu://x?file=/");
	memset(uri + 14, 'a', 1000);
	strcat(uri, "&bogus=1");
	CHECK_EQ(parse(uri), -EINVAL);
	CHECK(strlen(err) < 400);
	CHECK(strstr(err, "unknown key 'bogus'") != NULL);
	CHECK(strstr(err, "characters") != NULL);
}

static void test_too_many_namespaces(void)
{
	char uri[2048] = "emu://x?";
	for (int i = 0; i <= EMU_MAX_NS; i++)
		strcat(uri, i ? "&ns=mem:1M" : "ns=mem:1M");
	CHECK_EQ(parse(uri), -EINVAL);
	CHECK(strstr(err, "more than 32 namespaces"));
}

/* Identity is deterministic: the same URI gives the same serial and namespace ids; another
 * name or another namespace gives different ones. */
static void test_stable_identity(void)
{
	REQUIRE(parse("emu://alpha?ns=mem:1M&ns=mem:1M") == 0);
	struct emu_params a = p;
	REQUIRE(parse("emu://alpha?ns=mem:1M&ns=mem:1M") == 0);
	CHECK_STREQ(a.serial, p.serial);
	CHECK(memcmp(a.ns[0].nguid, p.ns[0].nguid, 16) == 0);
	CHECK(memcmp(a.ns[0].eui64, p.ns[0].eui64, 8) == 0);
	CHECK(memcmp(a.ns[0].nguid, a.ns[1].nguid, 16) != 0);
	CHECK(memcmp(a.ns[0].eui64, a.ns[1].eui64, 8) != 0);
	REQUIRE(parse("emu://beta?ns=mem:1M") == 0);
	CHECK(strcmp(a.serial, p.serial) != 0);
	CHECK(memcmp(a.ns[0].nguid, p.ns[0].nguid, 16) != 0);
	/* an explicit serial decides the ids */
	REQUIRE(parse("emu://alpha?serial=S1") == 0);
	struct emu_params s1 = p;
	REQUIRE(parse("emu://beta?serial=S1") == 0);
	CHECK(memcmp(s1.ns[0].nguid, p.ns[0].nguid, 16) == 0);
	/* file devices: named by their file, not by the name */
	REQUIRE(parse("emu://one?file=/tmp/x.img") == 0);
	struct emu_params f1 = p;
	REQUIRE(parse("emu://two?file=/tmp/x.img") == 0);
	CHECK_STREQ(f1.serial, p.serial);
}

TEST_MAIN(TEST(test_defaults), TEST(test_namespaces), TEST(test_shorthand),
	  TEST(test_controller_keys), TEST(test_latency_keys), TEST(test_errors),
	  TEST(test_too_many_namespaces), TEST(test_stable_identity), TEST(test_long_uri_echo))
